/* tensor_slice.c — ops that cut or join tensors along one axis: slice,
 * concat and split.
 *
 * Reference layouts: packed row-major doubles.  Viewing a tensor along `axis`
 * as [outer, dim, inner] (outer = product of the dims before axis, inner =
 * product of those after):
 *   slice:  y[o, k, i] = x[o, start + k * step, i],  k < count  (Python slice
 *           semantics: negative start/end count from the end, out-of-range
 *           values clamp, a negative step walks backwards; start/end may be
 *           omitted);
 *   concat: y[o, off_j + k, i] = x_j[o, k, i] with off_j = sum of earlier dims;
 *   split:  y_j[o, k, i] = x[o, off_j + k, i] (parts= equal pieces, or sizes=).
 */
#include "tensor_util.h"

#include "core/checked.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static double no_flops(const xgraph *g, const xnode *n) { return 0.0; }

/* outer/inner sizes of dims around `axis`. */
static void around_axis(int rank, const int64_t *dims, int axis, int64_t *outer, int64_t *inner)
{
    *outer = shape_numel(axis, dims);
    *inner = shape_numel(rank - axis - 1, dims + axis + 1);
}

static bool infer_axis(op_infer_ctx *c, const tinfo *x, int *axis)
{
    int64_t a = op_attr_int(c->node, c->desc, "axis");
    if (op_axis(x->rank, a, axis))
        return true;
    char xs[128];
    op_error(c, "attribute 'axis' must be in [%d, %d] for x %s, got %" PRId64, -x->rank, x->rank - 1,
             tinfo_str(xs, sizeof xs, x), a);
    return false;
}

/* ---- slice */

typedef struct slice_range {
    int64_t start, step, count;
} slice_range;

/* Python's slice.indices(len) followed by the element count. */
static slice_range slice_resolve(const xnode *n, const op_desc *d, int64_t len)
{
    slice_range r = {.step = op_attr_int(n, d, "step")};
    bool neg = r.step < 0;
    int64_t lower = neg ? -1 : 0, upper = neg ? len - 1 : len;
    int64_t bound[2];
    const char *names[2] = {"start", "end"};
    for (int k = 0; k < 2; k++) {
        if (!op_attr_present(n, d, names[k])) {
            bound[k] = (k == 0) != neg ? lower : upper;
            continue;
        }
        int64_t v = op_attr_int(n, d, names[k]);
        if (v < 0)
            v += len;
        bound[k] = v < lower ? lower : v > upper ? upper : v;
    }
    r.start = bound[0];
    if (!neg)
        r.count = bound[0] < bound[1] ? (bound[1] - bound[0] - 1) / r.step + 1 : 0;
    else
        r.count = bound[1] < bound[0] ? -((bound[0] - bound[1] - 1) / r.step) + 1 : 0; /* no -step: INT64_MIN */
    return r;
}

static xdnn_status slice_infer(op_infer_ctx *c)
{
    if (!infer_need(c, 0))
        return XDNN_ERR_SEMANTIC;
    const tinfo *x = c->in[0];
    int axis;
    if (!infer_axis(c, x, &axis))
        return XDNN_ERR_SEMANTIC;
    if (op_attr_int(c->node, c->desc, "step") == 0) {
        op_error(c, "attribute 'step' must not be 0");
        return XDNN_ERR_SEMANTIC;
    }
    slice_range r = slice_resolve(c->node, c->desc, x->dims[axis]);
    if (r.count < 1) {
        char xs[128], st[32] = "none", en[32] = "none";
        if (op_attr_present(c->node, c->desc, "start"))
            snprintf(st, sizeof st, "%" PRId64, op_attr_int(c->node, c->desc, "start"));
        if (op_attr_present(c->node, c->desc, "end"))
            snprintf(en, sizeof en, "%" PRId64, op_attr_int(c->node, c->desc, "end"));
        op_error(c, "slice start=%s, end=%s, step=%" PRId64 " of axis %d (size %" PRId64 ") of x %s is empty", st, en,
                 r.step, axis, x->dims[axis], tinfo_str(xs, sizeof xs, x));
        return XDNN_ERR_SEMANTIC;
    }
    c->out[0] = *x;
    c->out[0].dims[axis] = r.count;
    return XDNN_OK;
}

static xdnn_status slice_ref(op_ref_ctx *c)
{
    const ref_tensor *x = c->in[0];
    ref_tensor *y = c->out[0];
    int axis;
    op_axis(x->rank, op_attr_int(c->node, c->desc, "axis"), &axis);
    int64_t len = x->dims[axis], outer, inner;
    around_axis(x->rank, x->dims, axis, &outer, &inner);
    slice_range r = slice_resolve(c->node, c->desc, len);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t k = 0; k < r.count; k++) {
            const double *src = x->data + (o * len + r.start + k * r.step) * inner;
            memcpy(y->data + (o * r.count + k) * inner, src, (size_t)inner * sizeof(double));
        }
    return XDNN_OK;
}

static const char *const x_port[] = {"x"};
static const char *const y_result[] = {"y"};
static const attr_spec slice_attrs[] = {
    {"axis", AT_INT, "0", NULL, "the axis to slice"},
    {"start", AT_INT, NULL, NULL, "first index (negative counts from the end; default: the beginning)"},
    {"end", AT_INT, NULL, NULL, "one past the last index (negative counts from the end; default: the end)"},
    {"step", AT_INT, "1", NULL, "stride between taken indices; negative walks backwards"},
};

const op_desc op_slice_desc = {
    .name = "slice",
    .summary = "x[start:end:step] along one axis (Python slice semantics)",
    .ports = x_port, .nports = 1, .nrequired = 1,
    .results = y_result, .nresults = 1,
    .attrs = slice_attrs, .nattrs = 4,
    .infer = slice_infer, .reference = slice_ref, .flops = no_flops,
};

/* ---- concat */

static xdnn_status concat_infer(op_infer_ctx *c)
{
    if (c->nin < 1 || !c->in[0]) {
        op_error(c, "needs at least one input tensor");
        return XDNN_ERR_SEMANTIC;
    }
    const tinfo *x0 = c->in[0];
    int axis;
    if (!infer_axis(c, x0, &axis))
        return XDNN_ERR_SEMANTIC;
    c->out[0] = *x0;
    for (int j = 1; j < c->nin; j++) {
        const tinfo *xj = c->in[j];
        char s0[128], sj[128];
        if (!xj) {
            op_error(c, "input x%d is missing", j);
            return XDNN_ERR_SEMANTIC;
        }
        bool ok = xj->rank == x0->rank;
        int bad = -1;
        for (int d = 0; ok && d < x0->rank; d++)
            if (d != axis && xj->dims[d] != x0->dims[d])
                bad = d, ok = false;
        if (!ok) {
            if (bad >= 0)
                op_error(c, "input x%d %s differs from x0 %s in dim %d (only axis %d may differ)", j,
                         tinfo_str(sj, sizeof sj, xj), tinfo_str(s0, sizeof s0, x0), bad, axis);
            else
                op_error(c, "input x%d %s must have the rank of x0 %s", j, tinfo_str(sj, sizeof sj, xj),
                         tinfo_str(s0, sizeof s0, x0));
            return XDNN_ERR_SEMANTIC;
        }
        if (!ck_add(c->out[0].dims[axis], xj->dims[axis], &c->out[0].dims[axis])) {
            op_error(c, "the inputs' sizes along axis %d overflow 64 bits (x%d is %s)", axis, j,
                     tinfo_str(sj, sizeof sj, xj));
            return XDNN_ERR_SEMANTIC;
        }
    }
    return XDNN_OK;
}

static xdnn_status concat_ref(op_ref_ctx *c)
{
    ref_tensor *y = c->out[0];
    int axis;
    op_axis(y->rank, op_attr_int(c->node, c->desc, "axis"), &axis);
    int64_t outer, inner, offset = 0;
    around_axis(y->rank, y->dims, axis, &outer, &inner);
    for (int j = 0; j < c->nin; j++) {
        const ref_tensor *x = c->in[j];
        int64_t len = x->dims[axis];
        for (int64_t o = 0; o < outer; o++)
            memcpy(y->data + (o * y->dims[axis] + offset) * inner, x->data + o * len * inner,
                   (size_t)(len * inner) * sizeof(double));
        offset += len;
    }
    return XDNN_OK;
}

static const attr_spec axis_attr[] = {
    {"axis", AT_INT, "0", NULL, "the axis to join along"},
};

const op_desc op_concat_desc = {
    .name = "concat",
    .summary = "join x0, x1, ... along one axis (other dims must match)",
    .ports = x_port, .nports = 1, .nrequired = 1, .variadic = true,
    .results = y_result, .nresults = 1,
    .attrs = axis_attr, .nattrs = 1,
    .infer = concat_infer, .reference = concat_ref, .flops = no_flops,
};

/* ---- split */

/* Sizes of the pieces: `sizes`, or `parts` (default: the number of targets)
 * equal pieces.  Reports through c when given (inference), else silent. */
static bool split_sizes(op_infer_ctx *c, const xnode *n, const op_desc *d, int64_t len, int nres, int64_t *sizes)
{
    char buf[256];
    if (op_attr_present(n, d, "sizes")) {
        int ns;
        if (!attr_int_list(n, d, "sizes", OP_MAX_RESULTS, sizes, &ns)) {
            if (c)
                op_error(c, "attribute 'sizes' must be a list of at most %d ints", OP_MAX_RESULTS);
            return false;
        }
        if (op_attr_present(n, d, "parts")) {
            if (c)
                op_error(c, "give either 'parts' or 'sizes', not both");
            return false;
        }
        int64_t sum = 0;
        bool pos = true;
        for (int i = 0; i < ns; i++) {
            pos = pos && sizes[i] >= 1;
            if (pos && !ck_add(sum, sizes[i], &sum))
                pos = false; /* a sum past int64 is not the split dim */
        }
        if (ns != nres || !pos || sum != len) {
            if (c)
                op_error(c, "attribute 'sizes' %s must have one size >= 1 per target (%d) and sum to the split "
                            "dim %" PRId64,
                         shape_str(buf, sizeof buf, ns, sizes), nres, len);
            return false;
        }
        return true;
    }
    int64_t parts = op_attr_present(n, d, "parts") ? op_attr_int(n, d, "parts") : nres;
    if (parts != nres) {
        if (c)
            op_error(c, "attribute 'parts' is %" PRId64 " but %d targets are written", parts, nres);
        return false;
    }
    if (parts < 1 || len % parts != 0) {
        if (c)
            op_error(c, "the split dim %" PRId64 " is not divisible into %" PRId64 " equal parts", len, parts);
        return false;
    }
    for (int i = 0; i < nres; i++)
        sizes[i] = len / parts;
    return true;
}

static xdnn_status split_infer(op_infer_ctx *c)
{
    if (!infer_need(c, 0))
        return XDNN_ERR_SEMANTIC;
    const tinfo *x = c->in[0];
    int axis;
    int64_t sizes[OP_MAX_RESULTS];
    if (!infer_axis(c, x, &axis) || !split_sizes(c, c->node, c->desc, x->dims[axis], c->nresults, sizes))
        return XDNN_ERR_SEMANTIC;
    for (int j = 0; j < c->nresults; j++) {
        c->out[j] = *x;
        c->out[j].dims[axis] = sizes[j];
    }
    return XDNN_OK;
}

static xdnn_status split_ref(op_ref_ctx *c)
{
    const ref_tensor *x = c->in[0];
    int axis;
    op_axis(x->rank, op_attr_int(c->node, c->desc, "axis"), &axis);
    int64_t len = x->dims[axis], outer, inner, sizes[OP_MAX_RESULTS], offset = 0;
    around_axis(x->rank, x->dims, axis, &outer, &inner);
    split_sizes(NULL, c->node, c->desc, len, c->nresults, sizes);
    for (int j = 0; j < c->nresults; j++) {
        for (int64_t o = 0; o < outer; o++)
            memcpy(c->out[j]->data + o * sizes[j] * inner, x->data + (o * len + offset) * inner,
                   (size_t)(sizes[j] * inner) * sizeof(double));
        offset += sizes[j];
    }
    return XDNN_OK;
}

static const char *const split_results[OP_MAX_RESULTS] = {
    "y0",  "y1",  "y2",  "y3",  "y4",  "y5",  "y6",  "y7",  "y8",  "y9",  "y10", "y11", "y12", "y13", "y14", "y15",
    "y16", "y17", "y18", "y19", "y20", "y21", "y22", "y23", "y24", "y25", "y26", "y27", "y28", "y29", "y30", "y31",
};
static const attr_spec split_attrs[] = {
    {"axis", AT_INT, "0", NULL, "the axis to split"},
    {"parts", AT_INT, NULL, NULL, "number of equal pieces (default and required value: the number of targets)"},
    {"sizes", AT_INTS, NULL, NULL, "explicit piece sizes, one per target, summing to the split dim"},
};

const op_desc op_split_desc = {
    .name = "split",
    .summary = "cut x along one axis into one piece per target (equal parts, or sizes=)",
    .ports = x_port, .nports = 1, .nrequired = 1,
    .results = split_results, .nresults = OP_MAX_RESULTS, .variadic_results = true,
    .attrs = split_attrs, .nattrs = 3,
    .infer = split_infer, .reference = split_ref, .flops = no_flops,
};
