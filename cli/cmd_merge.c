/* cmd_merge.c — `xdnn merge A.jsonl B.jsonl ... [-o ALL.jsonl]`: join the JSON
 * lines of several `xdnn bench --format jsonl` runs — typically the shards of
 * one sweep run by a job scheduler (bench --shard I/N) — into one file.
 *
 * It refuses what would make the result a lie: a line that is not a bench row,
 * a case key twice, rows of different xdnn versions or devices (their timings
 * do not compare; --allow-mixed accepts them), shards of different sweeps, and
 * a sweep with cases missing (--allow-partial).  Every problem is reported
 * with its file:line; nothing is written unless all is well.  Shard rows are
 * put back in the sweep's order and lose their "shard" field, so the merge of
 * all shards reads like one run's output. */
#include "bench.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char merge_help[] =
    "usage: xdnn merge [options] FILE.jsonl...\n"
    "\n"
    "Join the rows of several 'xdnn bench --format jsonl' runs (the shards of a\n"
    "sweep run with --shard I/N, or any runs of one device) into one JSON-lines file.\n"
    "\n"
    "  -o FILE          write the rows to FILE (atomically); default stdout\n"
    "  --allow-mixed    accept rows of different xdnn versions or devices\n"
    "  --allow-partial  accept shards that do not cover their whole sweep\n"
    "\n"
    "Refused, naming file:line: a line that is not a bench row (exit 2); a case key\n"
    "twice, mixed xdnn versions or devices, shards of different sweeps, cases\n"
    "missing from a sharded sweep (exit 6).  5: a file cannot be read or written.\n"
    "Nothing is written on failure.  Shard rows are sorted back into the sweep's\n"
    "order and their \"shard\" field is dropped.\n";

enum { MAX_REPORTS = 20 };

typedef struct row {
    cJSON *j;
    const char *key, *version, *fp; /* borrowed from j */
    const char *file;
    int line, seq;                  /* seq: reading order */
    const cJSON *shard;             /* NULL for a plain bench row */
    int shard_index, shard_count, kase, cases;
    const char *suite;
} row;

typedef struct merge {
    row *rows;
    int n, cap;
    int reports;
} merge;

static void report(merge *m, const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void report(merge *m, const char *file, int line, const char *fmt, ...)
{
    if (m->reports++ >= MAX_REPORTS) {
        if (m->reports == MAX_REPORTS + 1)
            fprintf(stderr, "xdnn merge: more problems not shown\n");
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s:%d: error: ", file, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static const char *text_of(const cJSON *j, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool int_of(const cJSON *j, const char *name, int lo, int *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, name);
    if (!cJSON_IsNumber(v) || v->valuedouble < lo || v->valuedouble > 1e9 || v->valuedouble != (int)v->valuedouble)
        return false;
    *out = (int)v->valuedouble;
    return true;
}

/* One line: a bench row, else reported (syntax). */
static void take_row(merge *m, const char *file, int line, const char *text)
{
    cJSON *j = cJSON_Parse(text);
    row r = {.j = j, .file = file, .line = line, .seq = m->n};
    if (!cJSON_IsObject(j) || !(r.key = text_of(j, "key")) || !text_of(j, "status")) {
        report(m, file, line, "not a bench row (a JSON object with \"key\" and \"status\", as 'xdnn bench --format "
                              "jsonl' writes)");
        cJSON_Delete(j);
        return;
    }
    r.version = text_of(j, "xdnn");
    r.fp = text_of(j, "fingerprint");
    r.shard = cJSON_GetObjectItemCaseSensitive(j, "shard");
    if (r.shard && (!int_of(r.shard, "index", 1, &r.shard_index) || !int_of(r.shard, "count", 1, &r.shard_count) ||
                    !int_of(r.shard, "case", 0, &r.kase) || !int_of(r.shard, "cases", 1, &r.cases) ||
                    !(r.suite = text_of(r.shard, "suite")) || r.kase >= r.cases || r.shard_index > r.shard_count)) {
        report(m, file, line, "malformed \"shard\" field (index, count, case, cases, suite as 'xdnn bench --shard' "
                              "writes them)");
        cJSON_Delete(j);
        return;
    }
    if (m->n == m->cap) {
        int cap = m->cap ? 2 * m->cap : 256;
        row *nr = realloc(m->rows, (size_t)cap * sizeof *nr);
        if (!nr) {
            cJSON_Delete(j);
            report(m, file, line, "out of memory");
            return;
        }
        m->rows = nr;
        m->cap = cap;
    }
    m->rows[m->n++] = r;
}

static xdnn_status read_file(merge *m, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "xdnn merge: cannot read '%s': %m\n", path);
        return XDNN_ERR_IO;
    }
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0;
    while (getline(&line, &cap, f) > 0) {
        lineno++;
        if (line[strspn(line, " \t\r\n")]) /* blank lines are nothing */
            take_row(m, path, lineno, line);
    }
    bool bad = ferror(f);
    free(line);
    fclose(f);
    if (bad)
        fprintf(stderr, "xdnn merge: error reading '%s'\n", path);
    return bad ? XDNN_ERR_IO : XDNN_OK;
}

static int by_key(const void *a, const void *b)
{
    const row *x = *(row *const *)a, *y = *(row *const *)b;
    int c = strcmp(x->key, y->key);
    return c ? c : x->seq - y->seq;
}

static int by_case(const void *a, const void *b)
{
    const row *x = a, *y = b;
    return x->kase != y->kase ? x->kase - y->kase : x->seq - y->seq;
}

/* Same value, or both missing. */
static bool same(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

/* The checks across rows; each problem reported. */
static void check_rows(merge *m, bool allow_mixed, bool allow_partial)
{
    row **by = malloc((size_t)(m->n + 1) * sizeof *by);
    if (!by) {
        report(m, "xdnn merge", 0, "out of memory");
        return;
    }
    for (int i = 0; i < m->n; i++)
        by[i] = &m->rows[i];
    qsort(by, (size_t)m->n, sizeof *by, by_key);
    for (int i = 1; i < m->n; i++)
        if (strcmp(by[i]->key, by[i - 1]->key) == 0)
            report(m, by[i]->file, by[i]->line, "case '%s' is already in %s:%d", by[i]->key, by[i - 1]->file,
                   by[i - 1]->line);
    free(by);
    const row *first = m->n ? &m->rows[0] : NULL;
    for (int i = 1; i < m->n && !allow_mixed; i++) {
        const row *r = &m->rows[i];
        if (!same(r->version, first->version))
            report(m, r->file, r->line, "written by xdnn %s, but %s:%d by xdnn %s (--allow-mixed accepts it)",
                   r->version ? r->version : "(unknown)", first->file, first->line,
                   first->version ? first->version : "(unknown)");
        else if (!same(r->fp, first->fp))
            report(m, r->file, r->line, "measured on '%s', but %s:%d on '%s' (--allow-mixed accepts it)",
                   r->fp ? r->fp : "(unknown)", first->file, first->line, first->fp ? first->fp : "(unknown)");
    }
    if (!first || !first->shard)
        for (int i = 1; i < m->n; i++) {
            if (m->rows[i].shard)
                report(m, m->rows[i].file, m->rows[i].line, "a shard row (bench --shard) among the plain rows of "
                                                           "%s:%d: merge the shards of one sweep", first->file,
                       first->line);
        }
    else {
        bool *seen = calloc((size_t)first->cases, sizeof *seen);
        bool *shards = calloc((size_t)first->shard_count + 1, sizeof *shards);
        int covered = 0;
        for (int i = 0; i < m->n && seen && shards; i++) {
            const row *r = &m->rows[i];
            if (!r->shard) {
                report(m, r->file, r->line, "a row without a \"shard\" field among the shard rows of %s:%d",
                       first->file, first->line);
            } else if (r->shard_count != first->shard_count || r->cases != first->cases ||
                       strcmp(r->suite, first->suite) != 0) {
                report(m, r->file, r->line, "shard %d/%d of a sweep of %d cases (suite %s), but %s:%d is shard %d/%d "
                       "of %d cases (suite %s): not the same sweep", r->shard_index, r->shard_count, r->cases,
                       r->suite, first->file, first->line, first->shard_index, first->shard_count, first->cases,
                       first->suite);
            } else if (!seen[r->kase]) {
                seen[r->kase] = true;
                shards[r->shard_index] = true;
                covered++;
            }
        }
        if (seen && shards && covered < first->cases && !allow_partial) {
            char list[256] = "";
            size_t at = 0;
            for (int s = 1; s <= first->shard_count && at + 16 < sizeof list; s++)
                if (shards[s])
                    at += (size_t)snprintf(list + at, sizeof list - at, "%s%d", at ? "," : "", s);
            report(m, first->file, first->line, "%d of the sweep's %d cases are missing (shards present: %s of %d); "
                   "--allow-partial merges what is there", first->cases - covered, first->cases, list,
                   first->shard_count);
        }
        free(seen);
        free(shards);
    }
}

static int parse_merge_opts(int argc, char **argv, const char **out, bool *mixed, bool *partial)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"allow-mixed", no_argument, NULL, OPT_ALLOW_MIXED},
        {"allow-partial", no_argument, NULL, OPT_ALLOW_PARTIAL},
        {"help", no_argument, NULL, OPT_HELP},
        {NULL, 0, NULL, 0},
    };
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:", opts, NULL)) != -1) {
        switch (c) {
        case OPT_HELP: fputs(merge_help, stdout); return XDNN_OK;
        case 'o': *out = optarg; break;
        case OPT_ALLOW_MIXED: *mixed = true; break;
        case OPT_ALLOW_PARTIAL: *partial = true; break;
        case ':': return cli_usage_error("merge", "option '%s' needs a value", argv[optind - 1]);
        default: return cli_usage_error("merge", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind == argc)
        return cli_usage_error("merge", "no input files (xdnn merge A.jsonl B.jsonl ... -o ALL.jsonl)");
    return -1;
}

int cmd_merge(int argc, char **argv)
{
    const char *out = NULL;
    bool mixed = false, partial = false;
    int r = parse_merge_opts(argc, argv, &out, &mixed, &partial);
    if (r >= 0)
        return r;
    merge m = {0};
    xdnn_status s = XDNN_OK;
    for (int i = optind; i < argc && s == XDNN_OK; i++)
        s = read_file(&m, argv[i]);
    if (s == XDNN_OK && m.reports)
        s = XDNN_ERR_SYNTAX;
    if (s == XDNN_OK) {
        check_rows(&m, mixed, partial);
        if (m.reports)
            s = XDNN_ERR_CHECK;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = s == XDNN_OK ? open_memstream(&buf, &len) : NULL;
    if (s == XDNN_OK && !f)
        s = XDNN_ERR_NOMEM;
    if (s == XDNN_OK) {
        if (m.n && m.rows[0].shard) /* back into the sweep's order, as one run prints it */
            qsort(m.rows, (size_t)m.n, sizeof *m.rows, by_case);
        for (int i = 0; i < m.n; i++) {
            cJSON_DeleteItemFromObjectCaseSensitive(m.rows[i].j, "shard");
            char *text = cJSON_PrintUnformatted(m.rows[i].j);
            if (text)
                fprintf(f, "%s\n", text);
            else
                s = XDNN_ERR_NOMEM;
            cJSON_free(text);
        }
        fclose(f);
        if (s == XDNN_OK && out)
            s = bench_write_file(out, buf, len);
        else if (s == XDNN_OK)
            fwrite(buf, 1, len, stdout);
        if (s == XDNN_OK)
            fprintf(stderr, "xdnn merge: %d rows from %d file%s%s%s\n", m.n, argc - optind,
                    argc - optind == 1 ? "" : "s", out ? " -> " : "", out ? out : "");
    }
    free(buf);
    for (int i = 0; i < m.n; i++)
        cJSON_Delete(m.rows[i].j);
    free(m.rows);
    return s;
}
