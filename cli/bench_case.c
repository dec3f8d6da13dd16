/* bench_case.c — one case of `xdnn bench`: its key and repro line, loading,
 * engine selection (and --tune), timing on the CPU reference (wall clock) or
 * the GPU (CUDA events), --check against the reference, and the cost estimate
 * that orders and shards cases (bench_workers.c, --shard). */
#include "bench.h"
#include "run_gpu.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- keys and repro lines */

static void append(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t len, const char *fmt, ...)
{
    size_t at = strlen(buf);
    if (at + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + at, len - at, fmt, ap);
    va_end(ap);
}

/* A shell word: quoted when it has anything but [A-Za-z0-9_./:=,+@%-]. */
static void append_word(char *buf, size_t len, const char *w)
{
    bool plain = *w != 0;
    for (const char *c = w; *c && plain; c++)
        plain = strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:=,+@%-", *c) != NULL;
    if (plain) {
        append(buf, len, " %s", w);
        return;
    }
    append(buf, len, " '");
    for (const char *c = w; *c; c++)
        append(buf, len, *c == '\'' ? "'\\''" : "%c", *c);
    append(buf, len, "'");
}

/* The case's io dtype: the bound graph's, else the --dtype asked for, else "-". */
static const char *case_dtype(const bench_case *c, const xdnn_graph_t *g)
{
    xdnn_dtype io;
    return g && xdnn_graph_io_dtype(g, &io) ? xdnn_dtype_name(io) : c->dtype ? c->dtype : "-";
}

void bench_key(const bench_case *c, const xdnn_graph_t *g, char *buf, size_t len)
{
    const bench_spec *sp = c->spec;
    const char *dt = case_dtype(c, g);
    if (!sp->path) {
        snprintf(buf, len, "%s %s%s%s:%s", sp->problem, sp->desc, sp->layout ? "@" : "", sp->layout ? sp->layout : "",
                 dt);
        return;
    }
    snprintf(buf, len, "%s[", g ? xdnn_graph_name(g) : sp->path);
    int n = 0;
    for (size_t i = 0; i < xdnn_graph_param_count(g); i++) { /* the module's params, then the graph's */
        xdnn_param_info p;
        if (xdnn_graph_param(g, i, &p) == XDNN_OK && !p.derived && p.bound_text)
            append(buf, len, "%s%s=%s", n++ ? "," : "", p.name, p.bound_text);
    }
    if (!g) /* the graph did not load: the point is all we know */
        for (int i = 0; i < c->npoints; i++)
            append(buf, len, "%s%s=%s", n++ ? "," : "", c->points[i].name, c->points[i].value_text);
    append(buf, len, "]:%s", dt);
}

void bench_case_label(const bench_case *c, char *buf, size_t len)
{
    const bench_spec *sp = c->spec;
    if (!sp->path) {
        snprintf(buf, len, "%s %s%s%s", sp->problem, sp->desc, sp->layout ? "@" : "", sp->layout ? sp->layout : "");
    } else {
        const char *slash = strrchr(sp->path, '/');
        snprintf(buf, len, "%s", slash ? slash + 1 : sp->path);
        if (c->npoints)
            append(buf, len, "[");
        for (int i = 0; i < c->npoints; i++)
            append(buf, len, "%s%s=%s", i ? "," : "", c->points[i].name, c->points[i].value_text);
        if (c->npoints)
            append(buf, len, "]");
    }
    if (c->dtype)
        append(buf, len, ":%s", c->dtype);
}

static void repro_line(const bench_case *c, const bench_opts *o, bool use_gpu, const bench_result *r, char *buf,
                       size_t len)
{
    const bench_spec *sp = c->spec;
    bool as_run = sp->path && !c->dtype;
    snprintf(buf, len, "xdnn %s", as_run ? "run" : "bench");
    if (sp->path) {
        append_word(buf, len, sp->path);
    } else {
        append_word(buf, len, sp->problem);
        append_word(buf, len, sp->desc);
    }
    if (sp->graph)
        append(buf, len, " --graph"), append_word(buf, len, sp->graph);
    for (int i = 0; i < sp->nincludes; i++)
        append(buf, len, " -I"), append_word(buf, len, sp->includes[i]);
    for (int i = 0; i < c->npoints; i++) {
        char kv[512];
        snprintf(kv, sizeof kv, "%s=%s", c->points[i].name, c->points[i].value_text);
        append(buf, len, " --set"), append_word(buf, len, kv);
    }
    if (c->dtype)
        append(buf, len, " --dtype %s", c->dtype);
    if (sp->layout)
        append(buf, len, " --layout %s", sp->layout);
    append(buf, len, " --device %s", use_gpu ? "gpu" : "cpu");
    if (use_gpu && o->cold_l2)
        append(buf, len, " --cold-l2");
    if (use_gpu)
        for (int i = 0; i < r->nparts; i++) {
            char kv[400];
            snprintf(kv, sizeof kv, "%s=%s%s%s", r->parts[i].name, r->parts[i].engine, r->parts[i].knobs[0] ? ":" : "",
                     r->parts[i].knobs);
            if (as_run)
                append(buf, len, " --engine"), append_word(buf, len, kv);
        }
    if (!as_run) {
        append(buf, len, " --iters %d", r->iters > 0 ? r->iters : 1);
        if (o->warmup >= 0)
            append(buf, len, " --warmup %d", o->warmup);
    }
}

/* ---------------------------------------------------------------- running one case */

/* The row's timestamp: when its case finished. */
static void stamp(bench_result *r)
{
    time_t t = time(NULL);
    struct tm tm;
    if (gmtime_r(&t, &tm))
        strftime(r->when, sizeof r->when, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void first_error(xdnn_diags_t *d, char *buf, size_t len)
{
    buf[0] = 0;
    for (size_t i = 0; i < xdnn_diags_count(d); i++) {
        const xdnn_diag *x = xdnn_diags_get(d, i);
        if (x->severity == XDNN_SEV_ERROR) {
            snprintf(buf, len, "%s", x->message);
            return;
        }
    }
}

/* Time on the CPU: warmup, then at least `iters` runs and `min_time_s` seconds. */
static xdnn_status time_cpu(xdnn_run_t *run, const bench_opts *o, bench_result *r, xdnn_diags_t *d)
{
    int warmup = o->warmup >= 0 ? o->warmup : 1;
    int iters = o->iters_set ? o->iters : (o->min_time_s > 0 ? 1 : 5);
    xdnn_status s = XDNN_OK;
    for (int i = 0; i < warmup && s == XDNN_OK; i++)
        s = xdnn_run_reference(run, d);
    int cap = iters > 64 ? iters : 64, n = 0;
    double *t = malloc((size_t)cap * sizeof *t), start = now_ms();
    while (s == XDNN_OK && t && (n < iters || (o->min_time_s > 0 && now_ms() - start < o->min_time_s * 1e3))) {
        if (n == cap) {
            double *nt = n < 1000000 ? realloc(t, (size_t)cap * 2 * sizeof *t) : NULL;
            if (!nt)
                break;
            t = nt;
            cap *= 2;
        }
        double t0 = now_ms();
        s = xdnn_run_reference(run, d);
        t[n++] = now_ms() - t0;
    }
    if (!t)
        s = XDNN_ERR_NOMEM;
    if (s == XDNN_OK) {
        r->iters = n;
        xdnn_time_stats ts;
        xdnn_time_stats_of(t, (size_t)n, &ts);
        r->median_ms = ts.median_ms;
        r->min_ms = ts.min_ms;
        r->max_ms = ts.max_ms;
        r->p90_ms = ts.p90_ms;
        r->mean_ms = ts.mean_ms;
        r->stddev_ms = ts.stddev_ms;
        r->p95_ms = ts.p95_ms;
        r->p99_ms = ts.p99_ms;
    }
    free(t);
    return s;
}

/* --check: the CPU reference on the same inputs, every output compared. */
static xdnn_status check_reference(xdnn_graph_t *g, const xdnn_run_t *gpu, const char *base, xdnn_diags_t *d,
                                   bool *ok)
{
    xdnn_run_t *ref = NULL;
    xdnn_status s = xdnn_run_create(g, base, &ref);
    if (s == XDNN_OK)
        s = xdnn_run_copy_inputs(ref, gpu);
    if (s == XDNN_OK)
        s = xdnn_run_reference(ref, d);
    *ok = true;
    for (size_t i = 0; i < xdnn_graph_output_count(g) && s == XDNN_OK; i++) {
        int t = xdnn_graph_output(g, i);
        double rtol, atol;
        xdnn_graph_default_tolerance(g, (size_t)t, &rtol, &atol);
        xdnn_compare_result cr;
        s = xdnn_run_compare(gpu, (size_t)t, ref, rtol, atol, &cr);
        if (s == XDNN_OK && !cr.ok) {
            xdnn_tensor_info x;
            xdnn_graph_tensor(g, (size_t)t, &x);
            *ok = false;
            xdnn_diags_add(d, XDNN_SEV_ERROR, XDNN_ERR_CHECK,
                           "--check: output '%s' differs from the CPU reference: %lld of %lld elements, max abs "
                           "error %g", x.name, (long long)cr.mismatches, (long long)cr.count, cr.max_abs);
        }
    }
    xdnn_run_destroy(ref);
    return s;
}

/* "PART=ENGINE[:knobs]" for each partition of the row: what run_gpu forces. */
static char **force_strings(const bench_result *r)
{
    char **f = calloc((size_t)r->nparts + 1, sizeof *f);
    for (int i = 0; f && i < r->nparts; i++) {
        const bench_part_result *p = &r->parts[i];
        size_t len = strlen(p->name) + strlen(p->engine) + strlen(p->knobs) + 3;
        if ((f[i] = malloc(len)) != NULL)
            snprintf(f[i], len, "%s=%s%s%s", p->name, p->engine, p->knobs[0] ? ":" : "", p->knobs);
    }
    return f;
}

static void force_free(char **f, int n)
{
    for (int i = 0; f && i < n; i++)
        free(f[i]);
    free(f);
}

/* Time on the GPU through the plan API (run_gpu.c): the engines the row
 * chose (or --engine forced) are forced by partition; the row's time is the
 * sum of the partitions' own times. */
static xdnn_status time_gpu(xdnn_graph_t *g, xdnn_run_t *run, const char *base, const bench_opts *o, bench_result *r,
                            xdnn_diags_t *d)
{
    char **force = NULL;
    int nforce = 0;
    if (strcmp(o->engine, "auto") != 0 || r->nparts) {
        force = force_strings(r);
        nforce = force ? r->nparts : 0;
    }
    run_gpu_report rep = {0};
    run_gpu_opts go = {.warmup = o->warmup >= 0 ? o->warmup : 3, .iters = o->iters_set ? o->iters : 20,
                       .cold_l2 = o->cold_l2, .force = (const char *const *)force, .nforce = (size_t)nforce};
    xdnn_status s = run_gpu(g, run, &go, &rep, d);
    force_free(force, nforce);
    if (s == XDNN_OK) {
        r->iters = go.iters;
        /* every statistic is summed over the partitions, as the median; the
         * standard deviation as the root of the summed variances */
        r->median_ms = r->min_ms = r->max_ms = r->p90_ms = r->mean_ms = r->p95_ms = r->p99_ms = 0;
        double var = 0;
        free(r->parts);
        r->parts = calloc((size_t)rep.nparts + 1, sizeof *r->parts);
        r->nparts = r->parts ? rep.nparts : 0;
        for (int i = 0; i < r->nparts; i++) {
            snprintf(r->parts[i].name, sizeof r->parts[i].name, "%s", rep.parts[i].name);
            snprintf(r->parts[i].engine, sizeof r->parts[i].engine, "%s", rep.parts[i].engine);
            r->median_ms += rep.parts[i].ms.median_ms;
            r->min_ms += rep.parts[i].ms.min_ms;
            r->max_ms += rep.parts[i].ms.max_ms;
            r->p90_ms += rep.parts[i].ms.p90_ms;
            r->mean_ms += rep.parts[i].ms.mean_ms;
            r->p95_ms += rep.parts[i].ms.p95_ms;
            r->p99_ms += rep.parts[i].ms.p99_ms;
            var += rep.parts[i].ms.stddev_ms * rep.parts[i].ms.stddev_ms;
        }
        r->stddev_ms = sqrt(var);
    }
    run_gpu_report_free(&rep);
    if (s == XDNN_OK && o->check) {
        bool ok;
        s = check_reference(g, run, base, d, &ok);
        snprintf(r->check, sizeof r->check, "%s", ok ? "ok" : "mismatch");
    }
    return s;
}

/* Start a case's row: load the case, and fill what names it (key, graph,
 * dtype, device).  *m to be destroyed by the caller. */
static xdnn_status begin_row(const bench_case *c, bool use_gpu, const char *fp, bench_result *r, xdnn_module_t **m,
                             xdnn_graph_t **g, xdnn_diags_t *d)
{
    memset(r, 0, sizeof *r);
    r->p90_ms = r->mean_ms = r->stddev_ms = r->p95_ms = r->p99_ms = -1;
    snprintf(r->fingerprint, sizeof r->fingerprint, "%s", fp);
    snprintf(r->device, sizeof r->device, "%s", use_gpu ? "gpu" : "cpu");
    xdnn_status s = bench_load_case(c, m, g, d);
    bench_key(c, s == XDNN_OK ? *g : NULL, r->key, sizeof r->key);
    if (*g)
        snprintf(r->graph, sizeof r->graph, "%s", xdnn_graph_name(*g));
    snprintf(r->dtype, sizeof r->dtype, "%s", case_dtype(c, s == XDNN_OK ? *g : NULL));
    return s;
}

void bench_lost_case(const bench_case *c, const bench_opts *o, bool use_gpu, const char *fp, const char *why,
                     bench_result *r)
{
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m;
    xdnn_graph_t *g;
    begin_row(c, use_gpu, fp, r, &m, &g, d);
    r->code = XDNN_ERR_INTERNAL;
    snprintf(r->status, sizeof r->status, "failed");
    snprintf(r->error, sizeof r->error, "%s", why);
    repro_line(c, o, use_gpu, r, r->repro, sizeof r->repro);
    stamp(r);
    xdnn_diags_destroy(d);
    xdnn_module_destroy(m);
}

/* The engine of every partition: the tune cache, measured selection (--tune)
 * or the cost model, through a plan of the case's graph; into r->parts. */
static xdnn_status select_engines(xdnn_graph_t *g, const char *base, const bench_opts *o, bool use_gpu,
                                  bench_result *r, xdnn_diags_t *d)
{
    xdnn_plan_options po;
    xdnn_plan_options_init(&po);
    po.backend = use_gpu ? XDNN_BACKEND_CUDA : XDNN_BACKEND_CPU;
    po.heuristic = o->tune ? XDNN_HEUR_MEASURED : XDNN_HEUR_FAST;
    po.log = o->tune ? stderr : NULL;
    po.tune_warmup = o->warmup >= 0 ? o->warmup : 1;
    po.tune_iters = o->iters_set ? o->iters : 5;
    po.base_dir = base;
    xdnn_plan_t *p = NULL;
    xdnn_status s = xdnn_plan_build(g, &po, d, &p);
    size_t n = xdnn_plan_partition_count(p);
    if (s == XDNN_OK) {
        r->parts = calloc(n + 1, sizeof *r->parts);
        r->nparts = r->parts ? (int)n : 0;
    }
    for (int i = 0; i < r->nparts; i++) {
        xdnn_partition_info pi;
        xdnn_plan_partition(p, (size_t)i, &pi);
        snprintf(r->parts[i].name, sizeof r->parts[i].name, "%s", pi.name);
        snprintf(r->parts[i].ops, sizeof r->parts[i].ops, "%s", pi.ops);
        snprintf(r->parts[i].engine, sizeof r->parts[i].engine, "%s", pi.engine);
        snprintf(r->parts[i].knobs, sizeof r->parts[i].knobs, "%s", pi.knobs);
        r->parts[i].from_cache = pi.from_cache;
    }
    xdnn_plan_destroy(p);
    return s;
}

void bench_run_case(const bench_case *c, const bench_opts *o, bool use_gpu, const char *fp, bench_result *r)
{
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m;
    xdnn_graph_t *g;
    xdnn_status s = begin_row(c, use_gpu, fp, r, &m, &g, d);
    xdnn_run_t *run = NULL;
    char *base = NULL;
    if (s == XDNN_OK) {
        base = c->spec->path ? cli_dirname(c->spec->path) : strdup(".");
        s = base ? xdnn_run_create(g, base, &run) : XDNN_ERR_NOMEM;
    }
    if (s == XDNN_OK)
        s = xdnn_run_load_inputs(run, NULL, 0, d);
    if (s == XDNN_OK)
        s = xdnn_run_alloc_results(run, d);
    if (s == XDNN_OK && (!use_gpu || o->tune || strcmp(o->engine, "auto") == 0))
        s = select_engines(g, base, o, use_gpu, r, d);
    if (s == XDNN_OK && use_gpu && strcmp(o->engine, "auto") != 0 && strcmp(o->engine, "all") != 0)
        for (int i = 0; i < r->nparts; i++) { /* --engine NAME: force it everywhere, with its own knobs */
            snprintf(r->parts[i].engine, sizeof r->parts[i].engine, "%s", o->engine);
            r->parts[i].knobs[0] = '\0';
        }
    if (s == XDNN_OK)
        s = use_gpu ? time_gpu(g, run, base, o, r, d) : time_cpu(run, o, r, d);
    if (s == XDNN_OK)
        xdnn_graph_cost(g, &r->flops, &r->bytes);
    r->code = s != XDNN_OK ? s : strcmp(r->check, "mismatch") == 0 ? XDNN_ERR_CHECK : XDNN_OK;
    snprintf(r->status, sizeof r->status, "%s",
             r->code == XDNN_OK ? "passed" : r->code == XDNN_ERR_UNSUPPORTED ? "skipped" : "failed");
    if (r->code != XDNN_OK) {
        first_error(d, r->error, sizeof r->error);
        if (!r->error[0])
            snprintf(r->error, sizeof r->error, "%s", xdnn_status_name(r->code));
        fprintf(stderr, "xdnn bench: case %s:\n", r->key);
        xdnn_diags_print(d, stderr);
    }
    repro_line(c, o, use_gpu, r, r->repro, sizeof r->repro);
    stamp(r);
    if (r->code == XDNN_OK && r->median_ms > 0 && (r->max_ms - r->min_ms) / r->median_ms > 0.20)
        fprintf(stderr, "warning: %s: spread (max-min)/median = %.0f%% > 20%%: timings are noisy (more "
                        "--iters or --min-time, a quieter machine)\n",
                r->key, 100 * (r->max_ms - r->min_ms) / r->median_ms);
    xdnn_run_destroy(run);
    free(base);
    xdnn_diags_destroy(d);
    xdnn_module_destroy(m);
}

/* A case's estimated cost, about milliseconds: a fixed part per case (load,
 * plan, compile, warm-up) plus its flops and bytes at rough device rates, for
 * every warm-up and timed run.  Only the order matters: it balances the
 * workers (largest first) and the --shard subsets; a case that does not load
 * costs the fixed part (it fails fast). */
double bench_case_cost(const bench_case *c, const bench_opts *o, bool use_gpu)
{
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m;
    xdnn_graph_t *g;
    double flops = 0, bytes = 0;
    if (bench_load_case(c, &m, &g, d) == XDNN_OK)
        xdnn_graph_cost(g, &flops, &bytes);
    xdnn_diags_destroy(d);
    xdnn_module_destroy(m);
    double runs = (o->warmup >= 0 ? o->warmup : use_gpu ? 3 : 1) + (o->iters_set ? o->iters : use_gpu ? 20 : 5);
    if (use_gpu) /* ~50 TFLOP/s, ~1.5 TB/s, ~20 ms of planning and NVRTC */
        return 20 + runs * (flops / 50e9 + bytes / 1.5e9);
    return 1 + runs * (flops / 1e6 + bytes / 2e6); /* the reference: ~1 GFLOP/s, ~2 GB/s */
}
