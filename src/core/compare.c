/* compare.c — element-wise comparison of a result against the reference, with
 * the tolerances of METHOD.md, and the worst mismatches with coordinates. */
#include "exec.h"

#include "data/data.h"
#include "ops/op.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool same_nonfinite(double g, double r)
{
    if (isnan(r))
        return isnan(g);
    if (isinf(r))
        return g == r;
    return false;
}

/* Keep the five worst elements: mismatches first, then by absolute error. */
static void keep_worst(compare_result *r, double *scores, const int64_t *idx, int rank, double g, double ref,
                       double ae, double re, bool bad)
{
    enum { CAP = sizeof r->worst / sizeof r->worst[0] };
    double score = (bad ? 2.0 : 0.0) + (isnan(ae) ? 1.0 : ae / (1.0 + ae)); /* bad ones always rank first */
    int pos = r->nworst;
    while (pos > 0 && scores[pos - 1] < score)
        pos--;
    if (pos >= CAP)
        return;
    int last = r->nworst < CAP ? r->nworst : CAP - 1;
    memmove(&r->worst[pos + 1], &r->worst[pos], (size_t)(last - pos) * sizeof r->worst[0]);
    memmove(&scores[pos + 1], &scores[pos], (size_t)(last - pos) * sizeof *scores);
    compare_worst w = {.got = g, .ref = ref, .abs_err = ae, .rel_err = re};
    memcpy(w.index, idx, (size_t)rank * sizeof *idx);
    r->worst[pos] = w;
    scores[pos] = score;
    if (r->nworst < CAP)
        r->nworst++;
}

void compare_tensors(const host_tensor *got, const host_tensor *ref, double rtol, double atol, compare_result *r)
{
    memset(r, 0, sizeof *r);
    int64_t n = ref->numel;
    double *g = malloc((size_t)(n ? n : 1) * sizeof *g), *e = malloc((size_t)(n ? n : 1) * sizeof *e);
    if (!g || !e || got->numel != n) {
        free(g);
        free(e);
        r->ok = false;
        return;
    }
    tensor_gather(got, g);
    tensor_gather(ref, e);
    double diff2 = 0, ref2 = 0, scores[8] = {0};
    int64_t idx[XDNN_MAX_RANK] = {0};
    for (int64_t i = 0; i < n; i++) {
        double ae = fabs(g[i] - e[i]);
        double re = e[i] != 0 ? ae / fabs(e[i]) : (ae == 0 ? 0 : (double)INFINITY);
        bool bad;
        if (!isfinite(e[i]) || !isfinite(g[i])) {
            bad = !same_nonfinite(g[i], e[i]);
            ae = bad ? (double)NAN : 0;
            re = bad ? (double)NAN : 0;
        } else {
            bad = !(ae <= atol + rtol * fabs(e[i]));
            diff2 += ae * ae;
            ref2 += e[i] * e[i];
            if (ae > r->max_abs)
                r->max_abs = ae;
            if (isfinite(re) && re > r->max_rel)
                r->max_rel = re;
        }
        r->mismatches += bad;
        keep_worst(r, scores, idx, ref->rank, g[i], e[i], ae, re, bad);
        index_next(ref->rank, ref->dims, idx);
    }
    r->count = n;
    r->rel_norm = ref2 > 0 ? sqrt(diff2 / ref2) : sqrt(diff2);
    /* Comparing nothing proves nothing. */
    r->ok = r->mismatches == 0 && n > 0;
    free(g);
    free(e);
}

void compare_default_tolerance(xdnn_dtype dtype, int op, double *rtol, double *atol)
{
    /* Long reductions (matmul, conv, attention, norms) accumulate rounding in
     * the engine's f32 accumulator: ~1e-4 relative at K of a few thousand.
     * cross_entropy is a softmax over the classes; gather_bwd sums dy rows. */
    const char *name = op >= 0 && op < OP_COUNT ? op_get(op)->name : "";
    bool long_reduction = strstr(name, "conv") || strstr(name, "matmul") || strstr(name, "sdpa") ||
                          strstr(name, "norm") || strstr(name, "lstm") || strstr(name, "gru") ||
                          strstr(name, "rnn") || strstr(name, "reduce") || strstr(name, "softmax") ||
                          strstr(name, "cross_entropy") || strstr(name, "gather_bwd");
    switch (dtype) {
    case XDNN_F64: *rtol = 1e-12; *atol = 1e-12; break;
    case XDNN_F32: *rtol = long_reduction ? 1e-4 : 1e-5; *atol = long_reduction ? 1e-5 : 1e-6; break;
    case XDNN_F16: *rtol = 5e-3; *atol = 5e-3; break;   /* 11-bit mantissa: ~1 ulp at |x|~1 */
    case XDNN_BF16: *rtol = 1e-2; *atol = 1e-2; break;  /* 8-bit mantissa */
    case XDNN_FP8_E4M3:
    case XDNN_FP8_E5M2: *rtol = 5e-2; *atol = 5e-2; break;
    default: *rtol = 0; *atol = 0; break;                /* ints and bools are exact */
    }
}
