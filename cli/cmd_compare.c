/* cmd_compare.c — `xdnn compare OLD.jsonl NEW.jsonl`: match the cases of two
 * `xdnn bench --format jsonl` runs by key and say, per case, whether NEW is
 * FASTER, SLOWER or the SAME, then the geometric mean of the ratios.
 *
 * Noise: a case only counts as changed when the ratio new/old leaves the band
 * 1 ± max(threshold, mean of the two runs' relative spreads (max-min)/median),
 * so a noisy measurement needs a larger change.  Exit status: 6 when a case
 * is SLOWER, passed in OLD but not in NEW, or is missing from NEW (each a
 * regression), 5 for an
 * unreadable or malformed file, 1 for usage errors, else 0. */
#include "bench.h"


#include <cjson/cJSON.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char compare_help[] =
    "usage: xdnn compare OLD.jsonl NEW.jsonl [--threshold PCT] [--format table|json]\n"
    "\n"
    "Compare two `xdnn bench --format jsonl` runs case by case (matched by key):\n"
    "ratio new/old of the median times, SAME / FASTER / SLOWER, and the geometric\n"
    "mean of the ratios.  A change counts only beyond max(PCT, the measured\n"
    "spread) (default PCT 5).  Exit status 6 when any case is SLOWER, no longer\n"
    "passes or is missing from NEW; 5 for a malformed file or a key seen twice.\n"
    "--format json prints one object: cases (key, verdict, old_ms, new_ms, ratio,\n"
    "noise, statuses) and summary (geomean_ratio and the counts).\n";

typedef struct crow {
    char *key;
    char status[16];
    double median, min, max;
    bool timed;
    int line;  /* where it was read, for messages */
    int order; /* its place in the file: rows print in NEW's order */
} crow;

typedef struct cfile {
    crow *rows;
    int n;
} cfile;

static int crow_cmp(const void *a, const void *b)
{
    return strcmp(((const crow *)a)->key, ((const crow *)b)->key);
}

static int key_cmp(const void *key, const void *row)
{
    return strcmp(key, ((const crow *)row)->key);
}

static void cfile_free(cfile *f)
{
    for (int i = 0; i < f->n; i++)
        free(f->rows[i].key);
    free(f->rows);
}

static xdnn_status bad_line(const char *path, int line, const char *what)
{
    fprintf(stderr, "xdnn compare: %s:%d: %s\n", path, line, what);
    return XDNN_ERR_IO;
}

static xdnn_status read_jsonl(const char *path, cfile *f)
{
    memset(f, 0, sizeof *f);
    xdnn_diags_t *d = xdnn_diags_create();
    char *text;
    size_t len;
    xdnn_status s = xdnn_file_read(path, &text, &len, d);
    xdnn_diags_print(d, stderr);
    xdnn_diags_destroy(d);
    if (s != XDNN_OK)
        return s;
    if (strlen(text) != len) {
        free(text);
        return bad_line(path, 1, "not a text file (NUL byte)");
    }
    int cap = 0, lineno = 0;
    char *next = text;
    while (next && s == XDNN_OK) {
        /* one line at a time, counting them as we go (a rescan from the
         * start of the file per line made large files quadratic) */
        char *line = next;
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        lineno++;
        while (*line == ' ' || *line == '\t' || *line == '\r')
            line++;
        if (!*line)
            continue;
        cJSON *j = cJSON_Parse(line);
        const cJSON *key = cJSON_GetObjectItemCaseSensitive(j, "key");
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "status");
        if (!cJSON_IsObject(j))
            s = bad_line(path, lineno, "not a JSON object (expected the output of xdnn bench --format jsonl)");
        else if (!cJSON_IsString(key) || !cJSON_IsString(st))
            s = bad_line(path, lineno, "a case needs string fields \"key\" and \"status\"");
        if (s == XDNN_OK) {
            const cJSON *med = cJSON_GetObjectItemCaseSensitive(j, "median_ms");
            const cJSON *mn = cJSON_GetObjectItemCaseSensitive(j, "min_ms");
            const cJSON *mx = cJSON_GetObjectItemCaseSensitive(j, "max_ms");
            bool passed = strcmp(st->valuestring, "passed") == 0;
            if (passed && (!cJSON_IsNumber(med) || !cJSON_IsNumber(mn) || !cJSON_IsNumber(mx) ||
                           !(med->valuedouble > 0) || mn->valuedouble > med->valuedouble ||
                           mx->valuedouble < med->valuedouble))
                s = bad_line(path, lineno, "a passed case needs numbers min_ms <= median_ms <= max_ms, median_ms > 0");
            if (f->n == cap) {
                cap = cap ? 2 * cap : 64;
                crow *nr = realloc(f->rows, (size_t)cap * sizeof *nr);
                if (!nr)
                    s = XDNN_ERR_NOMEM;
                else
                    f->rows = nr;
            }
            if (s == XDNN_OK) {
                crow *r = &f->rows[f->n++];
                memset(r, 0, sizeof *r);
                if (!(r->key = strdup(key->valuestring))) {
                    f->n--;
                    s = XDNN_ERR_NOMEM;
                }
                r->line = lineno;
                r->order = f->n - 1;
                snprintf(r->status, sizeof r->status, "%s", st->valuestring);
                r->timed = passed;
                if (passed)
                    r->median = med->valuedouble, r->min = mn->valuedouble, r->max = mx->valuedouble;
            }
        }
        cJSON_Delete(j);
    }
    free(text);
    if (s == XDNN_OK && f->n == 0)
        s = bad_line(path, 1, "no cases (empty file)");
    if (s == XDNN_OK) { /* sorted by key: duplicates sit side by side, and find() bisects */
        qsort(f->rows, (size_t)f->n, sizeof *f->rows, crow_cmp);
        for (int i = 1; i < f->n && s == XDNN_OK; i++)
            if (strcmp(f->rows[i - 1].key, f->rows[i].key) == 0) {
                int later = f->rows[i].line > f->rows[i - 1].line ? f->rows[i].line : f->rows[i - 1].line;
                fprintf(stderr, "xdnn compare: %s:%d: the key '%s' appears twice (two runs in one file?)\n", path,
                        later, f->rows[i].key);
                s = XDNN_ERR_IO;
            }
    }
    if (s != XDNN_OK)
        cfile_free(f);
    return s;
}

static const crow *find(const cfile *f, const char *key)
{
    return bsearch(key, f->rows, (size_t)f->n, sizeof *f->rows, key_cmp);
}


/* One line of the verdict: NEW's row n, OLD's row o (either may be NULL). */
typedef struct verdict_row {
    const crow *n, *o;
    const char *verdict; /* SAME FASTER SLOWER NEW FAILED "NOT COMPARED" MISSING */
    double ratio, noise; /* when both were timed */
} verdict_row;

typedef struct tally {
    int faster, slower, same, broke, added, missing, matched;
    double geomean; /* over the matched cases; 0 when none */
} tally;

static void print_table(const verdict_row *rows, int n, const tally *t)
{
    printf("%-44s %10s %10s %7s %7s  %s\n", "case", "old_ms", "new_ms", "ratio", "noise", "verdict");
    for (int i = 0; i < n; i++) {
        const verdict_row *v = &rows[i];
        const char *key = v->n ? v->n->key : v->o->key;
        if (v->ratio > 0)
            printf("%-44s %10.4f %10.4f %7.3f %6.1f%%  %s\n", key, v->o->median, v->n->median, v->ratio,
                   100 * v->noise, v->verdict);
        else if (!v->o)
            printf("%-44s %10s %10s %7s %7s  NEW\n", key, "-", v->n->timed ? "" : "-", "-", "-");
        else if (!v->n)
            printf("%-44s %10s %10s %7s %7s  MISSING in new\n", key, "-", "-", "-", "-");
        else if (strcmp(v->verdict, "FAILED") == 0)
            printf("%-44s %10.4f %10s %7s %7s  FAILED (now %s)\n", key, v->o->median, "-", "-", "-", v->n->status);
        else
            printf("%-44s %10s %10s %7s %7s  NOT COMPARED (old %s, new %s)\n", key, "-", "-", "-", "-",
                   v->o->status, v->n->status);
    }
    if (t->matched)
        printf("geomean ratio %.3f over %d case%s: ", t->geomean, t->matched, t->matched == 1 ? "" : "s");
    else
        printf("no case timed in both runs: ");
    printf("%d faster, %d slower, %d same, %d no longer passing, %d new, %d missing\n", t->faster, t->slower,
           t->same, t->broke, t->added, t->missing);
}

static void print_json(const verdict_row *rows, int n, const tally *t)
{
    cJSON *root = cJSON_CreateObject(), *cases = cJSON_CreateArray(), *sum = cJSON_CreateObject();
    for (int i = 0; i < n; i++) {
        const verdict_row *v = &rows[i];
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "key", v->n ? v->n->key : v->o->key);
        cJSON_AddStringToObject(c, "verdict", v->verdict);
        if (v->o)
            cJSON_AddStringToObject(c, "old_status", v->o->status);
        if (v->n)
            cJSON_AddStringToObject(c, "new_status", v->n->status);
        if (v->o && v->o->timed)
            cJSON_AddNumberToObject(c, "old_ms", v->o->median);
        if (v->n && v->n->timed)
            cJSON_AddNumberToObject(c, "new_ms", v->n->median);
        if (v->ratio > 0) {
            cJSON_AddNumberToObject(c, "ratio", v->ratio);
            cJSON_AddNumberToObject(c, "noise", v->noise);
        }
        cJSON_AddItemToArray(cases, c);
    }
    cJSON_AddItemToObject(root, "cases", cases);
    if (t->matched)
        cJSON_AddNumberToObject(sum, "geomean_ratio", t->geomean);
    else
        cJSON_AddNullToObject(sum, "geomean_ratio");
    cJSON_AddNumberToObject(sum, "matched", t->matched);
    cJSON_AddNumberToObject(sum, "faster", t->faster);
    cJSON_AddNumberToObject(sum, "slower", t->slower);
    cJSON_AddNumberToObject(sum, "same", t->same);
    cJSON_AddNumberToObject(sum, "no_longer_passing", t->broke);
    cJSON_AddNumberToObject(sum, "new", t->added);
    cJSON_AddNumberToObject(sum, "missing", t->missing);
    cJSON_AddItemToObject(root, "summary", sum);
    char *text = cJSON_Print(root);
    if (text)
        puts(text);
    free(text);
    cJSON_Delete(root);
}

int cmd_compare(int argc, char **argv)
{
    static const struct option opts[] = {
        {"threshold", required_argument, NULL, OPT_THRESHOLD},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"help", no_argument, NULL, OPT_HELP},
        {NULL, 0, NULL, 0},
    };
    double thr = 5;
    bool json = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (c) {
        case OPT_HELP: fputs(compare_help, stdout); return XDNN_OK;
        case OPT_THRESHOLD: {
            char *end;
            thr = strtod(optarg, &end);
            if (!*optarg || *end || !(thr >= 0) || thr > 1000)
                return cli_usage_error("compare", "--threshold needs a percentage in [0, 1000], got '%s'", optarg);
            break;
        }
        case OPT_FORMAT:
            if (strcmp(optarg, "json") != 0 && strcmp(optarg, "table") != 0)
                return cli_usage_error("compare", "--format must be table or json, got '%s'", optarg);
            json = strcmp(optarg, "json") == 0;
            break;
        default: return cli_option_error("compare", argv);
        }
    }
    if (argc - optind != 2)
        return cli_usage_error("compare", "expected OLD.jsonl NEW.jsonl");
    cfile a, b;
    xdnn_status s = read_jsonl(argv[optind], &a);
    if (s != XDNN_OK)
        return s;
    if ((s = read_jsonl(argv[optind + 1], &b)) != XDNN_OK) {
        cfile_free(&a);
        return s;
    }
    /* NEW's rows in its own order (the files are sorted by key for lookups),
     * then OLD's rows that NEW lacks */
    verdict_row *rows = calloc((size_t)(a.n + b.n), sizeof *rows);
    if (!rows) {
        cfile_free(&a);
        cfile_free(&b);
        return XDNN_ERR_NOMEM;
    }
    for (int i = 0; i < b.n; i++)
        rows[b.rows[i].order].n = &b.rows[i];
    int nrows = b.n;
    tally t = {0};
    double logsum = 0;
    for (int i = 0; i < b.n; i++) {
        verdict_row *v = &rows[i];
        v->o = find(&a, v->n->key);
        if (!v->o) {
            v->verdict = "NEW", t.added++;
        } else if (v->o->timed && !v->n->timed) {
            v->verdict = "FAILED", t.broke++;
        } else if (!v->o->timed || !v->n->timed) {
            v->verdict = "NOT COMPARED";
        } else {
            v->ratio = v->n->median / v->o->median;
            double spread = 0.5 * ((v->o->max - v->o->min) / v->o->median + (v->n->max - v->n->min) / v->n->median);
            v->noise = fmax(thr / 100, spread);
            if (v->ratio > 1 + v->noise)
                v->verdict = "SLOWER", t.slower++;
            else if (v->ratio < 1 / (1 + v->noise))
                v->verdict = "FASTER", t.faster++;
            else
                v->verdict = "SAME", t.same++;
            logsum += log(v->ratio);
            t.matched++;
        }
    }
    /* a case OLD had and NEW lacks is a regression too: a bench that stopped
     * producing it (a bind failure changes nothing else) must not pass */
    for (int i = 0; i < a.n; i++)
        if (!find(&b, a.rows[i].key)) {
            rows[nrows++] = (verdict_row){.o = &a.rows[i], .verdict = "MISSING"};
            t.missing++;
        }
    t.geomean = t.matched ? exp(logsum / t.matched) : 0;
    if (json)
        print_json(rows, nrows, &t);
    else
        print_table(rows, nrows, &t);
    free(rows);
    cfile_free(&a);
    cfile_free(&b);
    int slower = t.slower, broke = t.broke, missing = t.missing;
    return slower || broke || missing ? XDNN_ERR_CHECK : XDNN_OK;
}
