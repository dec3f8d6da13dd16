/* bench_output.c — how a bench case is printed: an aligned table (a row and
 * an indented repro line per case), CSV (RFC 4180 quoting) or JSON lines (one
 * object per case; the format `xdnn compare` reads).  Rates: GFLOP/s from the
 * ops' own flop counts, GB/s from the bytes of the graph's inputs, weights
 * and outputs (each touched once: a lower bound of the real traffic). */
#include "bench.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool bench_progress_on(const bench_opts *o) { return o->progress || (!o->no_progress && isatty(STDERR_FILENO)); }

void bench_progress(int shown, int done, int total, const char *label, double elapsed_s)
{
    char eta[32] = "ETA --"; /* nothing finished yet: nothing to go by */
    if (done > 0 && done < total) {
        double s = elapsed_s / done * (total - done);
        if (s < 1)
            snprintf(eta, sizeof eta, "ETA <1s");
        else if (s < 60)
            snprintf(eta, sizeof eta, "ETA %.0fs", s);
        else if (s < 3600)
            snprintf(eta, sizeof eta, "ETA %dm%02ds", (int)(s / 60), (int)s % 60);
        else
            snprintf(eta, sizeof eta, "ETA %dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
    } else if (done >= total) {
        snprintf(eta, sizeof eta, "done");
    }
    fprintf(stderr, "\r[%d/%d] %s  %s\033[K", shown, total, label, eta);
    fflush(stderr);
}

/* "cpu_reference x3" or "a,b": the distinct engines that ran, with counts. */
static void engines_summary(const bench_result *r, char *buf, size_t len)
{
    buf[0] = 0;
    size_t at = 0;
    for (int i = 0; i < r->nparts; i++) {
        bool seen = false;
        for (int k = 0; k < i && !seen; k++)
            seen = strcmp(r->parts[k].engine, r->parts[i].engine) == 0;
        if (seen)
            continue;
        int count = 0;
        for (int k = i; k < r->nparts; k++)
            count += strcmp(r->parts[k].engine, r->parts[i].engine) == 0;
        int n = count > 1 ? snprintf(buf + at, len - at, "%s%s x%d", at ? "," : "", r->parts[i].engine, count)
                          : snprintf(buf + at, len - at, "%s%s", at ? "," : "", r->parts[i].engine);
        if (n < 0 || (size_t)n >= len - at)
            break;
        at += (size_t)n;
    }
    if (!buf[0])
        snprintf(buf, len, "-");
}

static double rate(double amount, double ms, double unit) { return ms > 0 ? amount / (ms * 1e-3) / unit : 0; }

/* ---- --perf-template: benchdnn's row format.  A %-code is %[T][U]NAME%:
 * T a time modifier (- min, 0 mean, + max; none: the median, xdnn's
 * headline), U a unit (K, M, G) for ops, flops and bw; %% is a percent
 * sign.  The row's other fields: engine (the device), impl (the engines),
 * name (the graph), prb (the case key), dt or cfg (the dtype), status. */
static const char *const tpl_text_codes[] = {"engine", "impl", "name", "prb", "dt", "cfg", "status", NULL};

/* Split code (between the percents) into modifiers and name; false if unknown. */
static bool tpl_code(const char *code, size_t n, char *tmod, double *unit, const char **name, size_t *nlen)
{
    *tmod = 0, *unit = 1;
    for (int i = 0; tpl_text_codes[i]; i++)
        if (strlen(tpl_text_codes[i]) == n && strncmp(code, tpl_text_codes[i], n) == 0) {
            *name = code, *nlen = n;
            return true;
        }
    if (n && strchr("-0+", code[0]))
        *tmod = *code++, n--;
    if (n && strchr("KMG", code[0]))
        *unit = code[0] == 'K' ? 1e3 : code[0] == 'M' ? 1e6 : 1e9, code++, n--;
    static const char *const numeric[] = {"time", "flops", "bw", "ops"};
    for (size_t i = 0; i < sizeof numeric / sizeof *numeric; i++)
        if (strlen(numeric[i]) == n && strncmp(code, numeric[i], n) == 0) {
            bool ok = (i == 0 && *unit == 1) || (i == 3 && !*tmod) || (i == 1 || i == 2);
            *name = code, *nlen = n;
            return ok;
        }
    return false;
}

const char *bench_perf_template(const char *arg, char *err, size_t len)
{
    if (strcmp(arg, "def") == 0)
        return "perf,%engine%,%impl%,%name%,%prb%,%Gops%,%-time%,%-Gflops%,%0time%,%0Gflops%";
    if (strcmp(arg, "csv") == 0)
        return "perf,%engine%,%impl%,%name%,%dt%,%prb%,%Gops%,%-time%,%-Gflops%,%0time%,%0Gflops%,%0Gbw%";
    for (const char *p = arg; *p; p++) {
        if (*p != '%')
            continue;
        const char *end = strchr(p + 1, '%');
        if (!end) {
            snprintf(err, len, "--perf-template: a '%%' without its closing '%%' in '%s'", arg);
            return NULL;
        }
        char tmod;
        double unit;
        const char *name;
        size_t nlen;
        if (end > p + 1 && !tpl_code(p + 1, (size_t)(end - p - 1), &tmod, &unit, &name, &nlen)) {
            snprintf(err, len, "--perf-template: unknown code '%.*s' (known: %%engine%% %%impl%% %%name%% %%prb%% "
                     "%%dt%% %%status%% %%[KMG]ops%%, and %%[-0+][KMG]flops%% %%[-0+][KMG]bw%% %%[-0+]time%%)",
                     (int)(end - p + 1), p);
            return NULL;
        }
        p = end;
    }
    return arg;
}

static void tpl_row(FILE *f, const char *tpl, const bench_result *r, const char *eng, bool timed)
{
    for (const char *p = tpl; *p; p++) {
        const char *end = *p == '%' ? strchr(p + 1, '%') : NULL;
        if (!end) {
            fputc(*p, f);
            continue;
        }
        char tmod;
        double unit;
        const char *name;
        size_t n;
        if (end == p + 1)
            fputc('%', f);
        else if (tpl_code(p + 1, (size_t)(end - p - 1), &tmod, &unit, &name, &n)) {
            double ms = tmod == '-' ? r->min_ms : tmod == '+' ? r->max_ms : tmod == '0' && r->mean_ms >= 0 ? r->mean_ms
                                                                                                          : r->median_ms;
            if (strncmp(name, "engine", n) == 0 && n == 6)
                fputs(r->device, f);
            else if (strncmp(name, "impl", n) == 0 && n == 4)
                fputs(eng, f);
            else if (strncmp(name, "name", n) == 0 && n == 4)
                fputs(r->graph, f);
            else if (strncmp(name, "prb", n) == 0 && n == 3)
                fputs(r->key, f);
            else if ((strncmp(name, "dt", n) == 0 && n == 2) || (strncmp(name, "cfg", n) == 0 && n == 3))
                fputs(r->dtype, f);
            else if (strncmp(name, "status", n) == 0 && n == 6)
                fputs(r->status, f);
            else if (strncmp(name, "ops", n) == 0 && n == 3)
                fprintf(f, "%g", r->flops / unit);
            else if (!timed)
                fputs("-", f);
            else if (strncmp(name, "time", n) == 0 && n == 4)
                fprintf(f, "%g", ms);
            else
                fprintf(f, "%g", rate(strncmp(name, "flops", n) == 0 && n == 5 ? r->flops : r->bytes, ms, unit));
        }
        p = end;
    }
    fputc('\n', f);
}

void bench_output_begin(FILE *f, const bench_opts *o)
{
    if (o->format == BENCH_TABLE)
        fprintf(f, "%-44s %-22s %10s %10s %10s %10s %9s %8s  %s\n", "case", "engine", "median_ms", "min_ms", "max_ms",
                "p90_ms", "GFLOP/s", "GB/s", "status");
    else if (o->format == BENCH_CSV)
        fprintf(f, "key,status,device,engines,iters,median_ms,min_ms,max_ms,p90_ms,p95_ms,p99_ms,mean_ms,stddev_ms,"
                   "gflops,gbps,check,repro,error\n");
    else if (o->format == BENCH_TEMPLATE) /* as benchdnn says it */
        fprintf(f, "Output template: %s\n", o->perf_template);
}

static void csv_field(FILE *f, const char *s, bool last)
{
    if (strpbrk(s, ",\"\n")) {
        fputc('"', f);
        for (; *s; s++) {
            if (*s == '"')
                fputc('"', f);
            fputc(*s, f);
        }
        fputc('"', f);
    } else {
        fputs(s, f);
    }
    fputc(last ? '\n' : ',', f);
}

/* "params": the bound params of the case as an object of value texts, read
 * back from its key ("graph[T=2,D=4]:f16"), which bench_key writes. */
static void add_params(cJSON *j, const char *key)
{
    cJSON *ps = cJSON_AddObjectToObject(j, "params");
    const char *open = strchr(key, '['), *close = strstr(key, "]:");
    if (!open || !close || close < open)
        return;
    for (const char *p = open + 1; p < close;) {
        const char *comma = memchr(p, ',', (size_t)(close - p)), *end = comma ? comma : close;
        const char *eq = memchr(p, '=', (size_t)(end - p));
        if (eq) {
            char name[128], text[256];
            snprintf(name, sizeof name, "%.*s", (int)(eq - p), p);
            snprintf(text, sizeof text, "%.*s", (int)(end - eq - 1), eq + 1);
            cJSON_AddStringToObject(ps, name, text);
        }
        p = end + 1;
    }
}

cJSON *bench_result_json(const bench_result *r, const bench_opts *o)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "key", r->key);
    cJSON_AddStringToObject(j, "graph", r->graph);
    cJSON_AddStringToObject(j, "dtype", r->dtype);
    cJSON_AddStringToObject(j, "device", r->device);
    cJSON_AddStringToObject(j, "status", r->status);
    add_params(j, r->key);
    if (r->error[0])
        cJSON_AddStringToObject(j, "error", r->error);
    cJSON *parts = cJSON_AddArrayToObject(j, "engines");
    for (int i = 0; i < r->nparts; i++) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddStringToObject(p, "partition", r->parts[i].name);
        cJSON_AddStringToObject(p, "ops", r->parts[i].ops);
        cJSON_AddStringToObject(p, "engine", r->parts[i].engine);
        cJSON_AddStringToObject(p, "knobs", r->parts[i].knobs);
        cJSON_AddBoolToObject(p, "from_cache", r->parts[i].from_cache);
        cJSON_AddItemToArray(parts, p);
    }
    bool timed = strcmp(r->status, "passed") == 0 || strcmp(r->check, "mismatch") == 0;
    if (timed) {
        cJSON_AddNumberToObject(j, "iters", r->iters);
        cJSON_AddNumberToObject(j, "median_ms", r->median_ms);
        cJSON_AddNumberToObject(j, "min_ms", r->min_ms);
        cJSON_AddNumberToObject(j, "max_ms", r->max_ms);
        const struct { const char *name; double v; } more[] = {
            {"p90_ms", r->p90_ms}, {"p95_ms", r->p95_ms}, {"p99_ms", r->p99_ms},
            {"mean_ms", r->mean_ms}, {"stddev_ms", r->stddev_ms}};
        for (size_t k = 0; k < sizeof more / sizeof more[0]; k++) {
            if (more[k].v >= 0)
                cJSON_AddNumberToObject(j, more[k].name, more[k].v);
            else /* a row merged from an older file */
                cJSON_AddNullToObject(j, more[k].name);
        }
        cJSON_AddNumberToObject(j, "spread", r->median_ms > 0 ? (r->max_ms - r->min_ms) / r->median_ms : 0);
        cJSON_AddNumberToObject(j, "flops", r->flops);
        cJSON_AddNumberToObject(j, "bytes", r->bytes);
        cJSON_AddNumberToObject(j, "gflops", rate(r->flops, r->median_ms, 1e9));
        cJSON_AddNumberToObject(j, "gbps", rate(r->bytes, r->median_ms, 1e9));
    }
    if (r->check[0])
        cJSON_AddStringToObject(j, "check", r->check);
    else
        cJSON_AddNullToObject(j, "check");
    cJSON_AddStringToObject(j, "repro", r->repro);
    /* who measured it: `xdnn merge` refuses to mix versions or devices */
    cJSON_AddStringToObject(j, "xdnn", XDNN_VERSION_STRING);
    cJSON_AddStringToObject(j, "fingerprint", r->fingerprint);
    if (r->when[0])
        cJSON_AddStringToObject(j, "timestamp", r->when);
    if (o->shard_n > 0) { /* what `xdnn merge` needs to restore the order and see every case once */
        char suite[17];
        snprintf(suite, sizeof suite, "%016llx", o->suite);
        cJSON *sh = cJSON_AddObjectToObject(j, "shard");
        cJSON_AddNumberToObject(sh, "index", o->shard_i);
        cJSON_AddNumberToObject(sh, "count", o->shard_n);
        cJSON_AddNumberToObject(sh, "case", r->index);
        cJSON_AddNumberToObject(sh, "cases", o->ncases);
        cJSON_AddStringToObject(sh, "suite", suite);
    }
    return j;
}

/* ---- reading a row back */

static bool get_text(const cJSON *j, const char *name, bool required, char *dst, size_t len, char *why, size_t wlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, name);
    dst[0] = 0;
    if (cJSON_IsString(v)) {
        snprintf(dst, len, "%s", v->valuestring);
        return true;
    }
    if (!required && (!v || cJSON_IsNull(v)))
        return true;
    snprintf(why, wlen, "'%s' must be a string", name);
    return false;
}

static double get_num(const cJSON *j, const char *name, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, name);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

bool bench_result_from_json(const cJSON *j, bench_result *r, char *why, size_t len)
{
    memset(r, 0, sizeof *r);
    if (!cJSON_IsObject(j)) {
        snprintf(why, len, "not a JSON object");
        return false;
    }
    if (!get_text(j, "key", true, r->key, sizeof r->key, why, len) ||
        !get_text(j, "status", true, r->status, sizeof r->status, why, len) ||
        !get_text(j, "graph", false, r->graph, sizeof r->graph, why, len) ||
        !get_text(j, "dtype", false, r->dtype, sizeof r->dtype, why, len) ||
        !get_text(j, "device", false, r->device, sizeof r->device, why, len) ||
        !get_text(j, "error", false, r->error, sizeof r->error, why, len) ||
        !get_text(j, "check", false, r->check, sizeof r->check, why, len) ||
        !get_text(j, "repro", false, r->repro, sizeof r->repro, why, len) ||
        !get_text(j, "fingerprint", false, r->fingerprint, sizeof r->fingerprint, why, len) ||
        !get_text(j, "timestamp", false, r->when, sizeof r->when, why, len))
        return false;
    r->iters = (int)get_num(j, "iters", 0);
    r->median_ms = get_num(j, "median_ms", 0);
    r->min_ms = get_num(j, "min_ms", 0);
    r->max_ms = get_num(j, "max_ms", 0);
    r->p90_ms = get_num(j, "p90_ms", -1);
    r->p95_ms = get_num(j, "p95_ms", -1);
    r->p99_ms = get_num(j, "p99_ms", -1);
    r->mean_ms = get_num(j, "mean_ms", -1);
    r->stddev_ms = get_num(j, "stddev_ms", -1);
    r->flops = get_num(j, "flops", 0);
    r->bytes = get_num(j, "bytes", 0);
    r->code = (xdnn_status)get_num(j, "code", strcmp(r->status, "passed") == 0 ? XDNN_OK : XDNN_ERR_INTERNAL);
    const cJSON *parts = cJSON_GetObjectItemCaseSensitive(j, "engines"), *p;
    int n = cJSON_GetArraySize(parts);
    if (n > 0 && !(r->parts = calloc((size_t)n, sizeof *r->parts))) {
        snprintf(why, len, "out of memory");
        return false;
    }
    cJSON_ArrayForEach(p, parts)
    {
        bench_part_result *q = &r->parts[r->nparts++];
        if (!get_text(p, "partition", true, q->name, sizeof q->name, why, len) ||
            !get_text(p, "ops", false, q->ops, sizeof q->ops, why, len) ||
            !get_text(p, "engine", true, q->engine, sizeof q->engine, why, len) ||
            !get_text(p, "knobs", false, q->knobs, sizeof q->knobs, why, len)) {
            free(r->parts);
            r->parts = NULL;
            return false;
        }
        q->from_cache = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "from_cache"));
    }
    return true;
}

void bench_output_case(FILE *f, const bench_opts *o, const bench_result *r)
{
    char eng[256];
    engines_summary(r, eng, sizeof eng);
    bool timed = strcmp(r->status, "passed") == 0 || strcmp(r->check, "mismatch") == 0;
    char med[32] = "-", mn[32] = "-", mx[32] = "-", p90[32] = "-", gf[32] = "-", gb[32] = "-";
    if (timed) {
        snprintf(med, sizeof med, "%.4f", r->median_ms);
        snprintf(mn, sizeof mn, "%.4f", r->min_ms);
        snprintf(mx, sizeof mx, "%.4f", r->max_ms);
        if (r->p90_ms >= 0)
            snprintf(p90, sizeof p90, "%.4f", r->p90_ms);
        snprintf(gf, sizeof gf, "%.2f", rate(r->flops, r->median_ms, 1e9));
        snprintf(gb, sizeof gb, "%.2f", rate(r->bytes, r->median_ms, 1e9));
    }
    switch (o->format) {
    case BENCH_TEMPLATE:
        tpl_row(f, o->perf_template, r, eng, timed);
        break;
    case BENCH_TABLE:
        /* A key wider than its column gets a line of its own: the numbers stay in their columns
         * (rows stream out as cases finish, so the column cannot be sized to the longest key). */
        if (strlen(r->key) > 44)
            fprintf(f, "%s\n", r->key);
        fprintf(f, "%-44s %-22s %10s %10s %10s %10s %9s %8s  %s%s%s\n", strlen(r->key) > 44 ? "" : r->key, eng, med, mn,
                mx, p90, gf, gb, r->status, r->check[0] ? " check=" : "", r->check);
        if (r->error[0])
            fprintf(f, "    error: %s\n", r->error);
        fprintf(f, "    repro: %s\n", r->repro);
        break;
    case BENCH_CSV: {
        char iters[16];
        snprintf(iters, sizeof iters, "%d", r->iters);
        csv_field(f, r->key, false);
        csv_field(f, r->status, false);
        csv_field(f, r->device, false);
        csv_field(f, eng, false);
        csv_field(f, timed ? iters : "", false);
        csv_field(f, timed ? med : "", false);
        csv_field(f, timed ? mn : "", false);
        csv_field(f, timed ? mx : "", false);
        csv_field(f, timed && r->p90_ms >= 0 ? p90 : "", false);
        const double more[] = {r->p95_ms, r->p99_ms, r->mean_ms, r->stddev_ms};
        for (size_t k = 0; k < sizeof more / sizeof more[0]; k++) {
            char v[32];
            snprintf(v, sizeof v, "%.4f", more[k]);
            csv_field(f, timed && more[k] >= 0 ? v : "", false);
        }
        csv_field(f, timed ? gf : "", false);
        csv_field(f, timed ? gb : "", false);
        csv_field(f, r->check, false);
        csv_field(f, r->repro, false);
        csv_field(f, r->error, true);
        break;
    }
    case BENCH_JSONL: {
        cJSON *j = bench_result_json(r, o);
        char *text = cJSON_PrintUnformatted(j);
        if (text)
            fprintf(f, "%s\n", text);
        cJSON_free(text);
        cJSON_Delete(j);
        break;
    }
    }
}

void bench_summary(FILE *f, int passed, int failed, int skipped)
{
    fprintf(f, "%d passed, %d failed, %d skipped\n", passed, failed, skipped);
}
