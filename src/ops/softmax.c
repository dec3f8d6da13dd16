/* softmax.c — softmax, log_softmax and their backward ops along one axis.
 *
 * Layout: packed row-major doubles in logical order.  With dims split as
 * [outer, n, inner] around `axis`, row (o, i) is the n elements at
 * o*n*inner + k*inner + i, k = 0..n-1.
 * Math per row, accumulated in double, max-subtracted so exp never overflows:
 *   softmax       y_k = e^(x_k - m) / Σ_j e^(x_j - m),   m = max_j x_j
 *   log_softmax   y_k = x_k - m - log Σ_j e^(x_j - m)
 *   softmax_bwd(dy, y)      dx_k = y_k (dy_k - Σ_j dy_j y_j)
 *   log_softmax_bwd(dy, y)  dx_k = dy_k - e^(y_k) Σ_j dy_j     (y = log_softmax output)
 */
#include "pointwise.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef enum sm_kind { SM_SOFTMAX, SM_LOG_SOFTMAX, SM_SOFTMAX_BWD, SM_LOG_SOFTMAX_BWD } sm_kind;

static const sm_kind sm_kinds[] = {SM_SOFTMAX, SM_LOG_SOFTMAX, SM_SOFTMAX_BWD, SM_LOG_SOFTMAX_BWD};

static const char *const sm_ports_fwd[] = {"x"};
static const char *const sm_ports_bwd[] = {"dy", "y"};
static const char *const sm_results_fwd[] = {"y"};
static const char *const sm_results_bwd[] = {"dx"};

static const attr_spec sm_attrs[] = {
    {"axis", AT_INT, "-1", NULL, "the axis the probabilities are normalized over (negative from the end)"},
};

static sm_kind sm_kind_of(const op_desc *d) { return *(const sm_kind *)d->family; }
static bool sm_is_bwd(sm_kind k) { return k == SM_SOFTMAX_BWD || k == SM_LOG_SOFTMAX_BWD; }

static xdnn_status sm_infer(op_infer_ctx *c)
{
    bool bwd = sm_is_bwd(sm_kind_of(c->desc));
    int nin = bwd ? 2 : 1;
    for (int i = 0; i < nin; i++)
        if (!c->in[i])
            return op_error(c, "input '%s' is missing", c->desc->ports[i]);
    const tinfo *x = c->in[0];
    char s0[256], s1[256];
    if (bwd) {
        const tinfo *y = c->in[1];
        bool same = x->rank == y->rank;
        for (int i = 0; same && i < x->rank; i++)
            same = x->dims[i] == y->dims[i];
        if (!same)
            return op_error(c, "dy %s and y %s must have the same shape",
                            shape_str(s0, sizeof s0, x->rank, x->dims),
                            shape_str(s1, sizeof s1, y->rank, y->dims));
    }
    int64_t axis = op_attr_int(c->node, c->desc, "axis");
    int ax;
    if (x->rank == 0)
        return op_error(c, "needs an input of rank >= 1, got a scalar");
    if (!op_axis(x->rank, axis, &ax))
        return op_error(c, "attribute 'axis' (%lld) is out of range for %s %s", (long long)axis,
                        c->desc->ports[0], shape_str(s0, sizeof s0, x->rank, x->dims));
    tinfo *out = &c->out[0];
    *out = *x;
    return XDNN_OK;
}

/* One row: n values at base + k*stride. */
static void sm_row(sm_kind kind, const double *a, const double *b, double *out, int64_t n, int64_t stride)
{
    switch (kind) {
    case SM_SOFTMAX:
    case SM_LOG_SOFTMAX: {
        double m = -HUGE_VAL;
        for (int64_t k = 0; k < n; k++)
            m = fmax(m, a[k * stride]);
        /* All -inf (fully masked): 0 avoids -inf - -inf, and the row is 0 / 0 = NaN.  A +inf: the whole row is
         * NaN, as in PyTorch, JAX and TensorFlow (their x - max is NaN at the +inf and e^-inf = 0 elsewhere, then
         * the sum is NaN); a max of 0 would give NaN at the +inf and 0 everywhere else. */
        if (isinf(m))
            m = m > 0 ? NAN : 0;
        double sum = 0;
        for (int64_t k = 0; k < n; k++)
            sum += exp(a[k * stride] - m);
        double logsum = log(sum);
        for (int64_t k = 0; k < n; k++)
            out[k * stride] = kind == SM_SOFTMAX ? exp(a[k * stride] - m) / sum : a[k * stride] - m - logsum;
        break;
    }
    case SM_SOFTMAX_BWD: { /* a = dy, b = y */
        double dot = 0;
        for (int64_t k = 0; k < n; k++)
            dot += a[k * stride] * b[k * stride];
        for (int64_t k = 0; k < n; k++)
            out[k * stride] = b[k * stride] * (a[k * stride] - dot);
        break;
    }
    case SM_LOG_SOFTMAX_BWD: {
        double sum = 0;
        for (int64_t k = 0; k < n; k++)
            sum += a[k * stride];
        for (int64_t k = 0; k < n; k++)
            out[k * stride] = a[k * stride] - exp(b[k * stride]) * sum;
        break;
    }
    }
}

static xdnn_status sm_reference(op_ref_ctx *c)
{
    sm_kind kind = sm_kind_of(c->desc);
    const ref_tensor *a = c->in[0], *b = sm_is_bwd(kind) ? c->in[1] : NULL;
    ref_tensor *y = c->out[0];
    if (!a || !y || (sm_is_bwd(kind) && !b))
        return op_ref_error(c, XDNN_ERR_INTERNAL, "missing input or output");
    int ax;
    if (!op_axis(a->rank, op_attr_int(c->node, c->desc, "axis"), &ax))
        return op_ref_error(c, XDNN_ERR_INTERNAL, "axis out of range");
    int64_t outer = shape_numel(ax, a->dims), n = a->dims[ax],
            inner = shape_numel(a->rank - ax - 1, a->dims + ax + 1);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t base = o * n * inner + i;
            sm_row(kind, a->data + base, b ? b->data + base : NULL, y->data + base, n, inner);
        }
    return XDNN_OK;
}

/* max, subtract, exp, sum, divide: about five operations per element. */
static double sm_flops(const xgraph *g, const xnode *n)
{
    if (!g || !n || !n->inputs || n->inputs[0].tensor < 0)
        return 0;
    return 5.0 * (double)g->tensors[n->inputs[0].tensor].rnumel;
}

#define SM_DESC(id, kind, summ, port_names, result_names, nin) \
    const op_desc op_##id##_desc = {                           \
        .name = #id,                                           \
        .summary = summ,                                       \
        .ports = port_names,                                   \
        .nports = nin,                                         \
        .nrequired = nin,                                      \
        .results = result_names,                               \
        .nresults = 1,                                         \
        .attrs = sm_attrs,                                     \
        .nattrs = 1,                                           \
        .infer = sm_infer,                                     \
        .reference = sm_reference,                             \
        .flops = sm_flops,                                     \
        .family = &sm_kinds[kind],                             \
    };

SM_DESC(softmax, SM_SOFTMAX, "exp(x - max) / sum exp(x - max) along axis", sm_ports_fwd, sm_results_fwd, 1)
SM_DESC(log_softmax, SM_LOG_SOFTMAX, "x - max - log sum exp(x - max) along axis", sm_ports_fwd,
        sm_results_fwd, 1)
SM_DESC(softmax_bwd, SM_SOFTMAX_BWD, "gradient of softmax from its output: dx = y * (dy - sum(dy * y))",
        sm_ports_bwd, sm_results_bwd, 2)
SM_DESC(log_softmax_bwd, SM_LOG_SOFTMAX_BWD,
        "gradient of log_softmax from its output: dx = dy - exp(y) * sum(dy)", sm_ports_bwd, sm_results_bwd,
        2)
