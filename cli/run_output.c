/* run_output.c — the stable, documented output of `xdnn run` (man/xdnn.1,
 * OUTPUT FORMAT).  Text for people, JSON (--format json) for scripts; both
 * carry the same fields. */
#include "run_output.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { FIRST_VALUES = 8 };

/* A tensor value in JSON: a number, or "nan", "inf" or "-inf" (JSON has no
 * non-finite numbers, and null would not say which). */
static cJSON *json_value(double v)
{
    if (isfinite(v))
        return cJSON_CreateNumber(v);
    return cJSON_CreateString(isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

static void print_index(FILE *f, const int64_t *idx, int rank)
{
    fputc('[', f);
    for (int i = 0; i < rank; i++)
        fprintf(f, "%s%" PRId64, i ? ", " : "", idx[i]);
    fputc(']', f);
}

/* What a reported tensor shows: its description, statistics and the values
 * to print (the first FIRST_VALUES, or all); *v malloc'ed, NULL when out of memory. */
typedef struct shown {
    xdnn_tensor_info t;
    xdnn_tensor_stats s;
    int64_t numel, n;
    double *v;
} shown;

static void show(const xdnn_graph_t *g, const xdnn_run_t *r, int tensor, bool full, shown *out)
{
    xdnn_graph_tensor(g, (size_t)tensor, &out->t);
    xdnn_run_tensor_stats(r, (size_t)tensor, &out->s);
    out->numel = 1;
    for (int i = 0; i < out->t.rank; i++)
        out->numel *= out->t.dims[i];
    out->n = full ? out->numel : (out->numel < FIRST_VALUES ? out->numel : FIRST_VALUES);
    out->v = malloc((size_t)(out->n ? out->n : 1) * sizeof *out->v);
    if (out->v && xdnn_run_tensor_values(r, (size_t)tensor, out->v, (size_t)out->n) != XDNN_OK) {
        free(out->v);
        out->v = NULL;
    }
}

void print_tensor_text(FILE *f, const xdnn_graph_t *g, const xdnn_run_t *r, int tensor, bool full)
{
    shown sh;
    show(g, r, tensor, full, &sh);
    const xdnn_tensor_stats *s = &sh.s;
    fprintf(f, "output %s: %s", sh.t.name, xdnn_dtype_name(sh.t.dtype));
    print_index(f, sh.t.dims, sh.t.rank);
    fprintf(f, " @%s\n", xdnn_graph_tensor_layout(g, (size_t)tensor));
    fprintf(f, "  min %.6g  max %.6g  mean %.6g  std %.6g  nan %" PRId64 "  inf %" PRId64
               "  checksum %016" PRIx64 "\n",
            s->min, s->max, s->mean, s->std, s->nan, s->inf, s->checksum);
    if (!sh.v)
        return;
    fprintf(f, "  values [");
    for (int64_t i = 0; i < sh.n; i++)
        fprintf(f, "%s%.6g", i ? ", " : "", sh.v[i]);
    fprintf(f, "%s]\n", sh.n < sh.numel ? ", ..." : "");
    free(sh.v);
}

cJSON *tensor_json(const xdnn_graph_t *g, const xdnn_run_t *r, int tensor, bool full)
{
    shown sh;
    show(g, r, tensor, full, &sh);
    const xdnn_tensor_stats *s = &sh.s;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", sh.t.name);
    cJSON_AddStringToObject(o, "dtype", xdnn_dtype_name(sh.t.dtype));
    cJSON *shape = cJSON_AddArrayToObject(o, "shape");
    for (int i = 0; i < sh.t.rank; i++)
        cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)sh.t.dims[i]));
    cJSON_AddStringToObject(o, "layout", xdnn_graph_tensor_layout(g, (size_t)tensor));
    /* JSON has no NaN: statistics of an all-NaN tensor are null. */
    cJSON_AddItemToObject(o, "min", json_value(s->min));
    cJSON_AddItemToObject(o, "max", json_value(s->max));
    cJSON_AddItemToObject(o, "mean", json_value(s->mean));
    cJSON_AddItemToObject(o, "std", json_value(s->std));
    cJSON_AddNumberToObject(o, "nan", (double)s->nan);
    cJSON_AddNumberToObject(o, "inf", (double)s->inf);
    char ck[32];
    snprintf(ck, sizeof ck, "%016" PRIx64, s->checksum);
    cJSON_AddStringToObject(o, "checksum", ck);
    cJSON *vals = cJSON_AddArrayToObject(o, "values");
    for (int64_t i = 0; sh.v && i < sh.n; i++)
        cJSON_AddItemToArray(vals, json_value(sh.v[i]));
    free(sh.v);
    return o;
}

/* A name column as wide as its longest entry, from `least` up to `most`
 * characters: long fused-partition and fragment names neither push the
 * numbers out of line nor fill the screen. */
static int column_width(int longest, int least, int most)
{
    return longest < least ? least : longest > most ? most : longest;
}

/* s, or when longer than width its head and tail around "...": the ends of a
 * fused partition's name say which ops it spans. */
static const char *fit(char *buf, size_t cap, const char *s, int width)
{
    size_t n = strlen(s);
    if (n <= (size_t)width || width < 8 || (size_t)width >= cap)
        return s;
    int head = (width - 3) / 2, tail = width - 3 - head;
    snprintf(buf, cap, "%.*s...%s", head, s, s + n - (size_t)tail);
    return buf;
}

void print_cpu_times_text(FILE *f, const xdnn_graph_t *g, const xdnn_run_t *r)
{
    int wn = 0, wo = 0;
    for (size_t i = 0; i < xdnn_graph_node_count(g); i++) {
        const char *name, *op;
        xdnn_graph_node_info(g, i, &name, &op);
        wn = (int)strlen(name) > wn ? (int)strlen(name) : wn;
        wo = (int)strlen(op) > wo ? (int)strlen(op) : wo;
    }
    wn = column_width(wn, 16, 48), wo = column_width(wo, 14, 24);
    fprintf(f, "time (cpu reference, wall):\n");
    for (size_t i = 0; i < xdnn_graph_node_count(g); i++) {
        const char *name, *op;
        char b1[64], b2[64];
        xdnn_graph_node_info(g, i, &name, &op);
        fprintf(f, "  %-*s %-*s %10.3f ms\n", wn, fit(b1, sizeof b1, name, wn), wo, fit(b2, sizeof b2, op, wo),
                xdnn_run_node_ms(r, i));
    }
    fprintf(f, "  %-*s %10.3f ms\n", wn + 1 + wo, "total", xdnn_run_total_ms(r));
}

cJSON *cpu_times_json(const xdnn_graph_t *g, const xdnn_run_t *r)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < xdnn_graph_node_count(g); i++) {
        const char *name, *op;
        xdnn_graph_node_info(g, i, &name, &op);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "node", name);
        cJSON_AddStringToObject(o, "op", op);
        cJSON_AddStringToObject(o, "engine", "cpu_reference");
        cJSON_AddNumberToObject(o, "ms", xdnn_run_node_ms(r, i));
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

void print_gpu_report_text(FILE *f, const run_gpu_report *rep)
{
    int wp = 0, we = 0;
    for (int i = 0; i < rep->nparts; i++) {
        wp = (int)strlen(rep->parts[i].name) > wp ? (int)strlen(rep->parts[i].name) : wp;
        we = (int)strlen(rep->parts[i].engine) > we ? (int)strlen(rep->parts[i].engine) : we;
    }
    wp = column_width(wp, 28, 60), we = column_width(we, 22, 40);
    fprintf(f, "device: %s\n", rep->device);
    fprintf(f, "%-*s %-*s %10s %10s %10s %10s\n", wp, "partition", we, "engine", "median ms", "min ms", "max ms", "rate");
    for (int i = 0; i < rep->nparts; i++) {
        const run_part_report *p = &rep->parts[i];
        char rate[32] = "", b1[80], b2[64];
        double s = p->ms.median_ms * 1e-3;
        if (s > 0 && p->flops > 0)
            snprintf(rate, sizeof rate, "%.1f TF/s", p->flops / s * 1e-12);
        else if (s > 0 && p->bytes > 0)
            snprintf(rate, sizeof rate, "%.0f GB/s", p->bytes / s * 1e-9);
        fprintf(f, "%-*s %-*s %10.4f %10.4f %10.4f %10s\n", wp, fit(b1, sizeof b1, p->name, wp), we,
                fit(b2, sizeof b2, p->engine, we), p->ms.median_ms, p->ms.min_ms, p->ms.max_ms, rate);
    }
    fprintf(f, "total %.4f ms  (plan %.1f ms, compile %.1f ms)\n", rep->total_ms, rep->plan_ms, rep->compile_ms);
}

cJSON *gpu_report_json(const run_gpu_report *rep)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "device", rep->device);
    cJSON *parts = cJSON_AddArrayToObject(o, "partitions");
    for (int i = 0; i < rep->nparts; i++) {
        const run_part_report *p = &rep->parts[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "name", p->name);
        cJSON_AddStringToObject(j, "engine", p->engine);
        cJSON_AddNumberToObject(j, "ms_median", p->ms.median_ms);
        cJSON_AddNumberToObject(j, "ms_min", p->ms.min_ms);
        cJSON_AddNumberToObject(j, "ms_max", p->ms.max_ms);
        cJSON_AddNumberToObject(j, "ms_p90", p->ms.p90_ms);
        cJSON_AddNumberToObject(j, "flops", p->flops);
        cJSON_AddNumberToObject(j, "bytes", p->bytes);
        cJSON_AddItemToArray(parts, j);
    }
    cJSON_AddNumberToObject(o, "total_ms", rep->total_ms);
    cJSON_AddNumberToObject(o, "plan_ms", rep->plan_ms);
    cJSON_AddNumberToObject(o, "compile_ms", rep->compile_ms);
    return o;
}

void print_compare_text(FILE *f, const char *what, const char *name, const xdnn_compare_result *r, int rank,
                        bool norm)
{
    double rtol = r->rtol, atol = r->atol;
    if (norm) /* the verdict first; the element-wise figures (at the default tolerance) only inform */
        fprintf(f, "%s %s: %s  rel norm %.3g %s %g (norm mode%s); element-wise %" PRId64 " of %" PRId64
                   " differ, max abs %.3g, max rel %.3g\n",
                what, name, r->ok ? "ok" : "FAILED", r->rel_norm, r->rel_norm <= rtol ? "<=" : ">", rtol,
                r->nworst && isnan(r->worst[0].abs_err) ? "; NaN or Inf at different places" : "", r->mismatches,
                r->count, r->max_abs, r->max_rel);
    else
        fprintf(f, "%s %s: %s  %" PRId64 " of %" PRId64 " elements differ (rtol %g, atol %g); max abs %.3g, "
                   "max rel %.3g, rel norm %.3g\n",
                what, name, r->ok ? "ok" : "FAILED", r->mismatches, r->count, rtol, atol, r->max_abs, r->max_rel,
                r->rel_norm);
    if (r->ok)
        return;
    if (r->count == 0)
        fprintf(f, "  nothing was compared (empty tensor)\n");
    for (int i = 0; i < r->nworst; i++) {
        const xdnn_mismatch *w = &r->worst[i];
        /* Only the elements that fail: a list padded with exact ones misleads. */
        if (w->abs_err <= atol + rtol * fabs(w->ref))
            continue;
        fprintf(f, "  at ");
        print_index(f, w->index, rank);
        fprintf(f, ": got %.9g, expected %.9g (abs %.3g, rel %.3g)\n", w->got, w->ref, w->abs_err, w->rel_err);
    }
}

cJSON *compare_json(const char *what, const char *name, const xdnn_compare_result *r, int rank, bool norm)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind", what);
    cJSON_AddStringToObject(o, "tensor", name);
    cJSON_AddBoolToObject(o, "ok", r->ok);
    cJSON_AddStringToObject(o, "mode", norm ? "norm" : "elementwise");
    cJSON_AddNumberToObject(o, "rtol", r->rtol);
    cJSON_AddNumberToObject(o, "atol", r->atol);
    cJSON_AddNumberToObject(o, "mismatches", (double)r->mismatches);
    cJSON_AddNumberToObject(o, "count", (double)r->count);
    cJSON_AddNumberToObject(o, "max_abs", isfinite(r->max_abs) ? r->max_abs : -1);
    cJSON_AddNumberToObject(o, "rel_norm", isfinite(r->rel_norm) ? r->rel_norm : -1);
    cJSON *worst = cJSON_AddArrayToObject(o, "worst");
    for (int i = 0; i < r->nworst; i++) {
        cJSON *w = cJSON_CreateObject();
        cJSON *idx = cJSON_AddArrayToObject(w, "index");
        for (int k = 0; k < rank; k++)
            cJSON_AddItemToArray(idx, cJSON_CreateNumber((double)r->worst[i].index[k]));
        cJSON_AddItemToObject(w, "got", json_value(r->worst[i].got));
        cJSON_AddItemToObject(w, "expected", json_value(r->worst[i].ref));
        cJSON_AddItemToArray(worst, w);
    }
    return o;
}
