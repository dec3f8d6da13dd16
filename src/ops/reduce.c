/* reduce.c — reduce(x, op, axes, keepdims): cuDNN's REDUCTION node.
 *
 * Layout: x and y are packed row-major doubles in logical order.  y has x's
 * shape with every reduced axis set to 1 (keepdims=true) or removed
 * (keepdims=false); both give the same packed order, so the reference
 * computes one output offset per input element from the keepdims shape.
 * Math, accumulated in double over the reduced elements x_j (n of them):
 *   sum Σx   mean Σx/n   prod Πx   max/min   amax max|x|   norm1 Σ|x|
 *   norm2 sqrt(Σx²).   NaN propagates through max/min/amax.
 * Default axes: all; an empty list reduces nothing (NumPy's axis=()).
 */
#include "pointwise.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

extern const op_desc op_reduce_desc;

static const char *const reduce_ports[] = {"x"};
static const char *const reduce_results[] = {"y"};

static const attr_spec reduce_attrs[] = {
    {"op", AT_STRING, "\"sum\"", "sum|mean|max|min|amax|prod|norm1|norm2",
     "reduction: sum, mean, max, min, amax (max |x|), prod, norm1 (sum |x|), norm2 (sqrt sum x^2)"},
    {"axes", AT_INTS, NULL, NULL, "axes to reduce, negative from the end (default: all)"},
    {"keepdims", AT_BOOL, "true", NULL, "keep reduced axes as size 1 (false: drop them)"},
};

typedef enum reduce_kind {
    RK_SUM,
    RK_MEAN,
    RK_MAX,
    RK_MIN,
    RK_AMAX,
    RK_PROD,
    RK_NORM1,
    RK_NORM2
} reduce_kind;

static const char *const reduce_kind_names[] = {"sum",  "mean", "max",   "min",
                                                "amax", "prod", "norm1", "norm2"};
_Static_assert(sizeof reduce_kind_names / sizeof reduce_kind_names[0] == RK_NORM2 + 1, "one name per kind");

static bool reduce_kind_of(const char *s, reduce_kind *out)
{
    for (int k = 0; k <= RK_NORM2; k++)
        if (s && strcmp(s, reduce_kind_names[k]) == 0) {
            *out = (reduce_kind)k;
            return true;
        }
    return false;
}

bool reduce_axes_mask(const xnode *n, const op_desc *d, int rank, bool *mask, char *why, size_t why_len)
{
    const value *v = op_attr(n, d, "axes");
    for (int i = 0; i < rank; i++)
        mask[i] = v == NULL || v->kind == VAL_NONE;
    if (!v || v->kind == VAL_NONE)
        return true;
    int count = v->kind == VAL_LIST ? v->n : 1;
    for (int k = 0; k < count; k++) {
        const value *item = v->kind == VAL_LIST ? &v->items[k] : v;
        int64_t axis;
        int ax;
        if (item->kind != VAL_INT || !value_as_int(item, &axis)) {
            snprintf(why, why_len, "attribute 'axes' must be an int or a list of ints");
            return false;
        }
        if (!op_axis(rank, axis, &ax)) {
            snprintf(why, why_len, "axis %lld in 'axes' is out of range for a rank-%d input", (long long)axis,
                     rank);
            return false;
        }
        if (mask[ax]) {
            snprintf(why, why_len, "axis %d appears twice in 'axes'", ax);
            return false;
        }
        mask[ax] = true;
    }
    return true;
}

static xdnn_status reduce_infer(op_infer_ctx *c)
{
    const tinfo *x = c->in[0];
    if (!x)
        return op_error(c, "input 'x' is missing");
    reduce_kind kind;
    const char *opname = op_attr_str(c->node, c->desc, "op");
    if (!reduce_kind_of(opname, &kind))
        return op_error(c, "attribute 'op' must be one of %s, got '%s'", reduce_attrs[0].choices,
                        opname ? opname : "(none)");
    bool mask[XDNN_MAX_RANK];
    char why[256];
    if (!reduce_axes_mask(c->node, c->desc, x->rank, mask, why, sizeof why)) {
        char shape[256];
        return op_error(c, "%s (x is %s)", why, shape_str(shape, sizeof shape, x->rank, x->dims));
    }
    bool keep = op_attr_bool(c->node, c->desc, "keepdims");
    tinfo *y = &c->out[0];
    y->dtype = x->dtype;
    y->rank = 0;
    for (int i = 0; i < x->rank; i++) {
        if (!mask[i])
            y->dims[y->rank++] = x->dims[i];
        else if (keep)
            y->dims[y->rank++] = 1;
    }
    return XDNN_OK;
}

static double reduce_init(reduce_kind k)
{
    switch (k) {
    case RK_MAX:
        return -HUGE_VAL;
    case RK_MIN:
        return HUGE_VAL;
    case RK_PROD:
        return 1;
    default:
        return 0;
    }
}

static double reduce_step(reduce_kind k, double acc, double v)
{
    switch (k) {
    case RK_SUM:
    case RK_MEAN:
        return acc + v;
    case RK_PROD:
        return acc * v;
    /* NaN propagates (fmax/fmin would drop it), as torch.amax / torch.max do, and +0 ranks above -0 (glibc's
     * fmax keeps its first operand on equal ones: the answer would hang on the order of the slice), as the GPU's
     * max.NaN / min.NaN: IEEE 754-2019 maximum / minimum, an answer independent of the order. */
    case RK_MAX:
        return isnan(acc) || isnan(v) ? acc + v : acc > v || (acc == v && !signbit(acc)) ? acc : v;
    case RK_MIN:
        return isnan(acc) || isnan(v) ? acc + v : acc < v || (acc == v && signbit(acc)) ? acc : v;
    case RK_AMAX: /* |v| and the start 0 are never -0 */
        return isnan(acc) || isnan(v) ? acc + v : fmax(acc, fabs(v));
    case RK_NORM1:
        return acc + fabs(v);
    case RK_NORM2:
        return acc + v * v;
    }
    return acc;
}

static xdnn_status reduce_reference(op_ref_ctx *c)
{
    const ref_tensor *x = c->in[0];
    ref_tensor *y = c->out[0];
    if (!x || !y)
        return op_ref_error(c, XDNN_ERR_INTERNAL, "missing input or output");
    reduce_kind kind;
    if (!reduce_kind_of(op_attr_str(c->node, c->desc, "op"), &kind))
        return op_ref_error(c, XDNN_ERR_INTERNAL, "unknown reduction");
    bool mask[XDNN_MAX_RANK];
    char why[256];
    if (!reduce_axes_mask(c->node, c->desc, x->rank, mask, why, sizeof why))
        return op_ref_error(c, XDNN_ERR_INTERNAL, "%s", why);

    /* Output offsets come from the keepdims shape; reduced axes stride 0. */
    int64_t kept[XDNN_MAX_RANK], ystride[XDNN_MAX_RANK], count = 1;
    for (int i = 0; i < x->rank; i++) {
        kept[i] = mask[i] ? 1 : x->dims[i];
        if (mask[i])
            count *= x->dims[i];
    }
    shape_strides(x->rank, kept, ystride);
    for (int64_t j = 0; j < y->numel; j++)
        y->data[j] = reduce_init(kind);
    if (x->numel == 0)
        return XDNN_OK;

    int64_t idx[XDNN_MAX_RANK] = {0};
    int64_t k = 0;
    do {
        int64_t off = 0;
        for (int i = 0; i < x->rank; i++)
            off += mask[i] ? 0 : idx[i] * ystride[i];
        y->data[off] = reduce_step(kind, y->data[off], x->data[k++]);
    } while (index_next(x->rank, x->dims, idx));

    for (int64_t j = 0; j < y->numel; j++) {
        if (kind == RK_MEAN)
            y->data[j] /= (double)count;
        else if (kind == RK_NORM2)
            y->data[j] = sqrt(y->data[j]);
    }
    return XDNN_OK;
}

/* One operation per input element (norm2: two). */
static double reduce_flops(const xgraph *g, const xnode *n)
{
    if (!g || !n || !n->inputs || n->inputs[0].tensor < 0)
        return 0;
    double numel = (double)g->tensors[n->inputs[0].tensor].rnumel;
    reduce_kind kind;
    if (reduce_kind_of(op_attr_str(n, &op_reduce_desc, "op"), &kind) && kind == RK_NORM2)
        return 2 * numel;
    return numel;
}

const op_desc op_reduce_desc = {
    .name = "reduce",
    .summary = "reduce x over axes: sum, mean, max, min, amax, prod, norm1 or norm2",
    .ports = reduce_ports,
    .nports = 1,
    .nrequired = 1,
    .results = reduce_results,
    .nresults = 1,
    .attrs = reduce_attrs,
    .nattrs = sizeof reduce_attrs / sizeof reduce_attrs[0],
    .infer = reduce_infer,
    .reference = reduce_reference,
    .flops = reduce_flops,
};
