/* run_output.c — the stable, documented output of `xdnn run` (man/xdnn.1,
 * OUTPUT FORMAT).  Text for people, JSON (--format json) for scripts; both
 * carry the same fields. */
#include "run_output.h"

#include "data/data.h"
#include "ops/op.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

enum { FIRST_VALUES = 8 };

/* A tensor value in JSON: a number, or "nan", "inf" or "-inf" (JSON has no
 * non-finite numbers, and null would not say which). */
static cJSON *json_value(double v)
{
    if (isfinite(v))
        return cJSON_CreateNumber(v);
    return cJSON_CreateString(isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

static const char *layout_name(const run_state *st, int t)
{
    return layout_to_text(st->g->module->ar, &st->g->tensors[t].layout);
}

void print_tensor_text(FILE *f, const run_state *st, int tensor, bool full)
{
    const xtensor *t = &st->g->tensors[tensor];
    const host_tensor *h = &st->tensors[tensor];
    char shape[256];
    tensor_stats s;
    tensor_compute_stats(h, &s);
    fprintf(f, "output %s: %s%s @%s\n", t->name, xdnn_dtype_name(h->dtype),
            shape_str(shape, sizeof shape, h->rank, h->dims), layout_name(st, tensor));
    fprintf(f, "  min %.6g  max %.6g  mean %.6g  std %.6g  nan %" PRId64 "  inf %" PRId64
               "  checksum %016" PRIx64 "\n",
            s.min, s.max, s.mean, s.std, s.nan, s.inf, s.checksum);
    int64_t n = full ? h->numel : (h->numel < FIRST_VALUES ? h->numel : FIRST_VALUES);
    double *v = malloc((size_t)(h->numel ? h->numel : 1) * sizeof *v);
    if (!v)
        return;
    tensor_gather(h, v);
    fprintf(f, "  values [");
    for (int64_t i = 0; i < n; i++)
        fprintf(f, "%s%.6g", i ? ", " : "", v[i]);
    fprintf(f, "%s]\n", n < h->numel ? ", ..." : "");
    free(v);
}

cJSON *tensor_json(const run_state *st, int tensor, bool full)
{
    const xtensor *t = &st->g->tensors[tensor];
    const host_tensor *h = &st->tensors[tensor];
    tensor_stats s;
    tensor_compute_stats(h, &s);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", t->name);
    cJSON_AddStringToObject(o, "dtype", xdnn_dtype_name(h->dtype));
    cJSON *shape = cJSON_AddArrayToObject(o, "shape");
    for (int i = 0; i < h->rank; i++)
        cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)h->dims[i]));
    cJSON_AddStringToObject(o, "layout", layout_name(st, tensor));
    /* JSON has no NaN: statistics of an all-NaN tensor are null. */
    cJSON_AddItemToObject(o, "min", json_value(s.min));
    cJSON_AddItemToObject(o, "max", json_value(s.max));
    cJSON_AddItemToObject(o, "mean", json_value(s.mean));
    cJSON_AddItemToObject(o, "std", json_value(s.std));
    cJSON_AddNumberToObject(o, "nan", (double)s.nan);
    cJSON_AddNumberToObject(o, "inf", (double)s.inf);
    char ck[32];
    snprintf(ck, sizeof ck, "%016" PRIx64, s.checksum);
    cJSON_AddStringToObject(o, "checksum", ck);
    int64_t n = full ? h->numel : (h->numel < FIRST_VALUES ? h->numel : FIRST_VALUES);
    double *v = malloc((size_t)(h->numel ? h->numel : 1) * sizeof *v);
    cJSON *vals = cJSON_AddArrayToObject(o, "values");
    if (v) {
        tensor_gather(h, v);
        for (int64_t i = 0; i < n; i++)
            cJSON_AddItemToArray(vals, json_value(v[i]));
        free(v);
    }
    return o;
}

void print_cpu_times_text(FILE *f, const run_state *st)
{
    fprintf(f, "time (cpu reference, wall):\n");
    for (size_t i = 0; i < st->g->nnodes; i++) {
        const xnode *n = &st->g->nodes[i];
        fprintf(f, "  %-16s %-14s %10.3f ms\n", n->name, op_get(n->op)->name, st->node_ms[i]);
    }
    fprintf(f, "  %-31s %10.3f ms\n", "total", st->total_ms);
}

cJSON *cpu_times_json(const run_state *st)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < st->g->nnodes; i++) {
        const xnode *n = &st->g->nodes[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "node", n->name);
        cJSON_AddStringToObject(o, "op", op_get(n->op)->name);
        cJSON_AddStringToObject(o, "engine", "cpu_reference");
        cJSON_AddNumberToObject(o, "ms", st->node_ms[i]);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

void print_gpu_report_text(FILE *f, const gpu_report *rep)
{
    fprintf(f, "device: %s\n", rep->device);
    fprintf(f, "%-28s %-22s %10s %10s %10s %10s\n", "partition", "engine", "median ms", "min ms", "max ms", "rate");
    for (int i = 0; i < rep->nparts; i++) {
        const gpu_partition_report *p = &rep->parts[i];
        char rate[32] = "";
        double s = p->ms_median * 1e-3;
        if (s > 0 && p->flops > 0)
            snprintf(rate, sizeof rate, "%.1f TF/s", p->flops / s * 1e-12);
        else if (s > 0 && p->bytes > 0)
            snprintf(rate, sizeof rate, "%.0f GB/s", p->bytes / s * 1e-9);
        fprintf(f, "%-28s %-22s %10.4f %10.4f %10.4f %10s\n", p->name, p->engine, p->ms_median, p->ms_min,
                p->ms_max, rate);
    }
    fprintf(f, "total %.4f ms  (plan %.1f ms, compile %.1f ms)\n", rep->total_ms, rep->plan_ms, rep->compile_ms);
}

cJSON *gpu_report_json(const gpu_report *rep)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "device", rep->device);
    cJSON *parts = cJSON_AddArrayToObject(o, "partitions");
    for (int i = 0; i < rep->nparts; i++) {
        const gpu_partition_report *p = &rep->parts[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "name", p->name);
        cJSON_AddStringToObject(j, "engine", p->engine);
        cJSON_AddNumberToObject(j, "ms_median", p->ms_median);
        cJSON_AddNumberToObject(j, "ms_min", p->ms_min);
        cJSON_AddNumberToObject(j, "ms_max", p->ms_max);
        cJSON_AddNumberToObject(j, "ms_p90", p->ms_p90);
        cJSON_AddNumberToObject(j, "flops", p->flops);
        cJSON_AddNumberToObject(j, "bytes", p->bytes);
        cJSON_AddItemToArray(parts, j);
    }
    cJSON_AddNumberToObject(o, "total_ms", rep->total_ms);
    cJSON_AddNumberToObject(o, "plan_ms", rep->plan_ms);
    cJSON_AddNumberToObject(o, "compile_ms", rep->compile_ms);
    return o;
}

static void print_index(FILE *f, const int64_t *idx, int rank)
{
    fputc('[', f);
    for (int i = 0; i < rank; i++)
        fprintf(f, "%s%" PRId64, i ? ", " : "", idx[i]);
    fputc(']', f);
}

void print_compare_text(FILE *f, const char *what, const char *name, const compare_result *r, int rank,
                        double rtol, double atol)
{
    fprintf(f, "%s %s: %s  %" PRId64 " of %" PRId64 " elements differ (rtol %g, atol %g); max abs %.3g, "
               "max rel %.3g, rel norm %.3g\n",
            what, name, r->ok ? "ok" : "FAILED", r->mismatches, r->count, rtol, atol, r->max_abs, r->max_rel,
            r->rel_norm);
    if (r->ok)
        return;
    if (r->count == 0)
        fprintf(f, "  nothing was compared (empty tensor)\n");
    for (int i = 0; i < r->nworst; i++) {
        const compare_worst *w = &r->worst[i];
        /* Only the elements that fail: a list padded with exact ones misleads. */
        if (w->abs_err <= atol + rtol * fabs(w->ref))
            continue;
        fprintf(f, "  at ");
        print_index(f, w->index, rank);
        fprintf(f, ": got %.9g, expected %.9g (abs %.3g, rel %.3g)\n", w->got, w->ref, w->abs_err, w->rel_err);
    }
}

cJSON *compare_json(const char *what, const char *name, const compare_result *r, int rank)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind", what);
    cJSON_AddStringToObject(o, "tensor", name);
    cJSON_AddBoolToObject(o, "ok", r->ok);
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
