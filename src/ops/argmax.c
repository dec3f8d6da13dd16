/* argmax.c — argmax and argmin along one axis (torch.argmax / numpy.argmax).
 *
 * Layout: packed row-major doubles; around `axis` x is [outer, n, inner] and
 * y is [outer, inner] (keepdims=false drops the axis, keepdims=true keeps it
 * as 1: the same packed order).  y[o, i] is the position k in [0, n) of the
 * largest (smallest) x[o, k, i]:
 *   - ties: the first (smallest) k, as PyTorch and NumPy;
 *   - NaN counts as the extreme, so the first NaN of a row wins (PyTorch and
 *     NumPy both return it);
 *   - -0 and +0 are equal (a tie).
 * The result is an integer tensor: i64 by default (PyTorch's dtype), or i32
 * (dtype=i32, refused when the axis has 2^31 elements or more).
 */
#include "index_util.h"

#include <math.h>
#include <stdio.h>

typedef enum arg_kind { ARG_MAX, ARG_MIN } arg_kind;
static const arg_kind arg_kinds[] = {ARG_MAX, ARG_MIN};

static const char *const arg_ports[] = {"x"};
static const char *const arg_results[] = {"y"};
static const attr_spec arg_attrs[] = {
    {"axis", AT_INT, "-1", NULL, "the axis searched (negative from the end)"},
    {"keepdims", AT_BOOL, "false", NULL, "keep the searched axis as size 1 (false: drop it, as torch.argmax)"},
    {"dtype", AT_DTYPE, "i64", NULL, "the index dtype: i64 or i32"},
};

static xdnn_status arg_infer(op_infer_ctx *c)
{
    if (!infer_need(c, 0))
        return XDNN_ERR_SEMANTIC;
    const tinfo *x = c->in[0];
    char s[256];
    if (x->rank == 0)
        return op_error(c, "x must have rank >= 1, got a scalar");
    int64_t axis = op_attr_int(c->node, c->desc, "axis");
    int ax;
    if (!op_axis(x->rank, axis, &ax))
        return op_error(c, "attribute 'axis' (%lld) is out of range for x %s", (long long)axis,
                        tinfo_str(s, sizeof s, x));
    const value *v = op_attr(c->node, c->desc, "dtype");
    xdnn_dtype t = v && v->kind == VAL_DTYPE ? v->dt : XDNN_I64;
    if (t != XDNN_I64 && t != XDNN_I32)
        return op_error(c, "attribute 'dtype' must be i64 or i32, got %s", xdnn_dtype_name(t));
    if (t == XDNN_I32 && x->dims[ax] > INT32_MAX)
        return op_error(c, "axis %d of x %s has %lld elements: positions do not fit dtype=i32", ax,
                        tinfo_str(s, sizeof s, x), (long long)x->dims[ax]);
    tinfo *y = &c->out[0];
    bool keep = op_attr_bool(c->node, c->desc, "keepdims");
    y->rank = 0;
    for (int d = 0; d < x->rank; d++)
        if (d != ax || keep)
            y->dims[y->rank++] = d == ax ? 1 : x->dims[d];
    y->dtype = t;
    y->exact_dtype = true;
    return XDNN_OK;
}

/* Does a (at position ka) beat the best so far b (at kb < ka)?  Strictly
 * better only, so the first of equals stays; a NaN beats any number. */
static bool beats(arg_kind kind, double a, double b)
{
    if (isnan(b))
        return false;
    if (isnan(a))
        return true;
    return kind == ARG_MAX ? a > b : a < b;
}

static xdnn_status arg_ref(op_ref_ctx *c)
{
    arg_kind kind = *(const arg_kind *)c->desc->family;
    const ref_tensor *x = c->in[0];
    ref_tensor *y = c->out[0];
    int ax;
    if (!x || !y || !op_axis(x->rank, op_attr_int(c->node, c->desc, "axis"), &ax))
        return op_ref_error(c, XDNN_ERR_INTERNAL, "missing operand or bad axis after inference");
    int64_t outer = shape_numel(ax, x->dims), n = x->dims[ax], inner = shape_numel(x->rank - ax - 1, x->dims + ax + 1);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            const double *row = x->data + o * n * inner + i;
            int64_t best = 0;
            for (int64_t k = 1; k < n; k++)
                if (beats(kind, row[k * inner], row[best * inner]))
                    best = k;
            y->data[o * inner + i] = (double)best;
        }
    return XDNN_OK;
}

/* one compare per element */
static double arg_flops(const xgraph *g, const xnode *n) { return (double)node_port_numel(g, n, 0); }

const op_desc op_argmax_desc = {
    .name = "argmax",
    .summary = "position of the largest x along axis (first on ties, first NaN wins); i64 (or i32)",
    .ports = arg_ports, .nports = 1, .nrequired = 1,
    .results = arg_results, .nresults = 1,
    .attrs = arg_attrs, .nattrs = 3,
    .infer = arg_infer, .reference = arg_ref, .flops = arg_flops,
    .family = &arg_kinds[ARG_MAX],
};

const op_desc op_argmin_desc = {
    .name = "argmin",
    .summary = "position of the smallest x along axis (first on ties, first NaN wins); i64 (or i32)",
    .ports = arg_ports, .nports = 1, .nrequired = 1,
    .results = arg_results, .nresults = 1,
    .attrs = arg_attrs, .nattrs = 3,
    .infer = arg_infer, .reference = arg_ref, .flops = arg_flops,
    .family = &arg_kinds[ARG_MIN],
};
