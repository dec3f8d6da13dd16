/* gather.c — gather (NumPy take / ONNX Gather; with axis=0 on a table [V, D]
 * it is the embedding lookup), its backward gather_bwd (a scatter-add into
 * the table) and one_hot.
 *
 * Layout: packed row-major doubles in logical order.  Around `axis`, x is
 * [outer, n, inner]; index is any shape, flattened to K elements; y is
 * [outer, K, inner], i.e. y.dims = x.dims[:axis] + index.dims + x.dims[axis+1:]:
 *   gather      y[o, k, i] = x[o, index[k], i]
 *   gather_bwd  dx[o, v, i] = sum over k with index[k] == v of dy[o, k, i]
 *               (k ascending; x_dims= gives x's shape, as conv_dgrad's does)
 *   one_hot     y[k, c] = (index[k] == c) for c < classes; y = index.dims + [classes]
 * An index outside [0, n) is a run-time error naming it (index_util.h).
 */
#include "index_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const gather_ports[] = {"x", "index"};
static const char *const gather_bwd_ports[] = {"dy", "index"};
static const char *const one_hot_ports[] = {"index"};
static const char *const y_results[] = {"y"};
static const char *const dx_results[] = {"dx"};

static const attr_spec gather_attrs[] = {
    {"axis", AT_INT, "0", NULL, "the axis of x that index selects along (negative from the end)"},
};
static const attr_spec gather_bwd_attrs[] = {
    {"axis", AT_INT, "0", NULL, "as gather"},
    {"x_dims", AT_INTS, NULL, NULL, "shape of x (and dx), e.g. [V, D] for an embedding table (required)"},
};
static const attr_spec one_hot_attrs[] = {
    {"classes", AT_INT, NULL, NULL, "number of classes: the size of the new last axis (required, >= 1)"},
    {"dtype", AT_DTYPE, "f32", NULL, "the output dtype: f32, f16, bf16, f64, i8, i32 or i64"},
};

/* y dims = x[:ax] + index + x[ax+1:]; false (reported) when the rank exceeds the limit. */
static bool gathered_shape(op_infer_ctx *c, const tinfo *x, int ax, const tinfo *idx, tinfo *y)
{
    int rank = x->rank - 1 + idx->rank;
    if (rank > XDNN_MAX_RANK) {
        char s0[256], s1[256];
        op_error(c, "the result would have rank %d (x %s, index %s); at most %d", rank, tinfo_str(s0, sizeof s0, x),
                 tinfo_str(s1, sizeof s1, idx), XDNN_MAX_RANK);
        return false;
    }
    y->rank = 0;
    for (int d = 0; d < ax; d++)
        y->dims[y->rank++] = x->dims[d];
    for (int d = 0; d < idx->rank; d++)
        y->dims[y->rank++] = idx->dims[d];
    for (int d = ax + 1; d < x->rank; d++)
        y->dims[y->rank++] = x->dims[d];
    return true;
}

/* The normalized axis of a rank-`rank` tensor named `what`, reported when out of range. */
static bool infer_axis(op_infer_ctx *c, const tinfo *t, const char *what, int *ax)
{
    int64_t axis = op_attr_int(c->node, c->desc, "axis");
    char s[256];
    if (t->rank == 0) {
        op_error(c, "%s must have rank >= 1, got a scalar", what);
        return false;
    }
    if (op_axis(t->rank, axis, ax))
        return true;
    op_error(c, "attribute 'axis' (%lld) is out of range for %s %s", (long long)axis, what, tinfo_str(s, sizeof s, t));
    return false;
}

static xdnn_status gather_infer(op_infer_ctx *c)
{
    int ax;
    if (!infer_need(c, 0) || !index_check_port(c, 1) || !infer_axis(c, c->in[0], "x", &ax))
        return XDNN_ERR_SEMANTIC;
    tinfo *y = &c->out[0];
    y->dtype = c->in[0]->dtype;
    return gathered_shape(c, c->in[0], ax, c->in[1], y) ? XDNN_OK : XDNN_ERR_SEMANTIC;
}

static xdnn_status gather_bwd_infer(op_infer_ctx *c)
{
    if (!infer_need(c, 0) || !index_check_port(c, 1))
        return XDNN_ERR_SEMANTIC;
    tinfo x = {.dtype = c->in[0]->dtype};
    if (!op_attr_present(c->node, c->desc, "x_dims"))
        return op_error(c, "attribute 'x_dims' is required (the shape of x, e.g. [V, D] for an embedding table)");
    if (!infer_int_list(c, "x_dims", XDNN_MAX_RANK, x.dims, &x.rank))
        return XDNN_ERR_SEMANTIC;
    char s0[256], s1[256];
    for (int d = 0; d < x.rank; d++)
        if (x.dims[d] < 1)
            return op_error(c, "attribute 'x_dims' must hold dims >= 1, got %s", tinfo_str(s0, sizeof s0, &x));
    int ax;
    tinfo want = {0};
    if (!infer_axis(c, &x, "x_dims", &ax) || !gathered_shape(c, &x, ax, c->in[1], &want))
        return XDNN_ERR_SEMANTIC;
    const tinfo *dy = c->in[0];
    bool same = dy->rank == want.rank;
    for (int d = 0; same && d < dy->rank; d++)
        same = dy->dims[d] == want.dims[d];
    if (!same)
        return op_error(c, "dy must be %s (gather's y for x_dims and index), got %s", tinfo_str(s0, sizeof s0, &want),
                        tinfo_str(s1, sizeof s1, dy));
    c->out[0] = x;
    return XDNN_OK;
}

/* [outer, n, inner] around axis ax of dims. */
static void split3(int rank, const int64_t *dims, int ax, int64_t *outer, int64_t *n, int64_t *inner)
{
    *outer = shape_numel(ax, dims);
    *n = dims[ax];
    *inner = shape_numel(rank - ax - 1, dims + ax + 1);
}

static void axis_what(char *buf, size_t len, const char *name, int ax, int rank, const int64_t *dims)
{
    char s[256];
    snprintf(buf, len, "axis %d of %s %s", ax, name, shape_str(s, sizeof s, rank, dims));
}

static xdnn_status gather_ref(op_ref_ctx *c)
{
    const ref_tensor *x = c->in[0], *idx = c->in[1];
    ref_tensor *y = c->out[0];
    int ax;
    if (!x || !idx || !y || !op_axis(x->rank, op_attr_int(c->node, c->desc, "axis"), &ax))
        return op_ref_error(c, XDNN_ERR_INTERNAL, "missing operand or bad axis after inference");
    int64_t outer, n, inner, K = idx->numel;
    split3(x->rank, x->dims, ax, &outer, &n, &inner);
    char what[320];
    axis_what(what, sizeof what, "x", ax, x->rank, x->dims);
    for (int64_t k = 0; k < K; k++) {
        int64_t v;
        if (!index_ref_get(c, idx, k, n, what, &v))
            return XDNN_ERR_SEMANTIC;
        for (int64_t o = 0; o < outer; o++)
            for (int64_t i = 0; i < inner; i++)
                y->data[(o * K + k) * inner + i] = x->data[(o * n + v) * inner + i];
    }
    return XDNN_OK;
}

static xdnn_status gather_bwd_ref(op_ref_ctx *c)
{
    const ref_tensor *dy = c->in[0], *idx = c->in[1];
    ref_tensor *dx = c->out[0];
    int ax;
    if (!dy || !idx || !dx || !op_axis(dx->rank, op_attr_int(c->node, c->desc, "axis"), &ax))
        return op_ref_error(c, XDNN_ERR_INTERNAL, "missing operand or bad axis after inference");
    int64_t outer, n, inner, K = idx->numel;
    split3(dx->rank, dx->dims, ax, &outer, &n, &inner);
    char what[320];
    axis_what(what, sizeof what, "x_dims", ax, dx->rank, dx->dims);
    for (int64_t e = 0; e < dx->numel; e++)
        dx->data[e] = 0;
    /* k ascending: the order the GPU's sorted scatter also sums in */
    for (int64_t k = 0; k < K; k++) {
        int64_t v;
        if (!index_ref_get(c, idx, k, n, what, &v))
            return XDNN_ERR_SEMANTIC;
        for (int64_t o = 0; o < outer; o++)
            for (int64_t i = 0; i < inner; i++)
                dx->data[(o * n + v) * inner + i] += dy->data[(o * K + k) * inner + i];
    }
    return XDNN_OK;
}

/* ---- one_hot */

static bool one_hot_dtype_ok(xdnn_dtype t)
{
    return t == XDNN_F32 || t == XDNN_F16 || t == XDNN_BF16 || t == XDNN_F64 || t == XDNN_I8 || t == XDNN_I32 ||
           t == XDNN_I64;
}

static xdnn_status one_hot_infer(op_infer_ctx *c)
{
    if (!index_check_port(c, 0))
        return XDNN_ERR_SEMANTIC;
    if (!op_attr_present(c->node, c->desc, "classes"))
        return op_error(c, "attribute 'classes' is required (the number of classes)");
    int64_t classes = op_attr_int(c->node, c->desc, "classes");
    if (classes < 1)
        return op_error(c, "attribute 'classes' must be >= 1, got %lld", (long long)classes);
    const value *v = op_attr(c->node, c->desc, "dtype");
    xdnn_dtype t = v && v->kind == VAL_DTYPE ? v->dt : XDNN_F32;
    if (!one_hot_dtype_ok(t))
        return op_error(c, "attribute 'dtype' must be f32, f16, bf16, f64, i8, i32 or i64, got %s",
                        xdnn_dtype_name(t));
    const tinfo *idx = c->in[0];
    if (idx->rank + 1 > XDNN_MAX_RANK)
        return op_error(c, "index has rank %d; the result would exceed rank %d", idx->rank, XDNN_MAX_RANK);
    tinfo *y = &c->out[0];
    *y = *idx;
    y->dims[y->rank++] = classes;
    y->dtype = t;
    y->exact_dtype = true;
    return XDNN_OK;
}

static xdnn_status one_hot_ref(op_ref_ctx *c)
{
    const ref_tensor *idx = c->in[0];
    ref_tensor *y = c->out[0];
    if (!idx || !y || y->rank < 1)
        return op_ref_error(c, XDNN_ERR_INTERNAL, "missing operand after inference");
    int64_t C = y->dims[y->rank - 1];
    char what[64];
    snprintf(what, sizeof what, "classes = %lld", (long long)C);
    for (int64_t k = 0; k < idx->numel; k++) {
        int64_t v;
        if (!index_ref_get(c, idx, k, C, what, &v))
            return XDNN_ERR_SEMANTIC;
        for (int64_t j = 0; j < C; j++)
            y->data[k * C + j] = j == v ? 1.0 : 0.0;
    }
    return XDNN_OK;
}

/* Memory-bound: no arithmetic to speak of. */
static double no_flops(const xgraph *g, const xnode *n) { return 0; }

/* one add per dy element */
static double gather_bwd_flops(const xgraph *g, const xnode *n) { return (double)node_port_numel(g, n, 0); }

const op_desc op_gather_desc = {
    .name = "gather",
    .summary = "y = x[..., index, ...] along axis (NumPy take; axis=0 on a table [V, D]: embedding lookup)",
    .ports = gather_ports, .nports = 2, .nrequired = 2,
    .results = y_results, .nresults = 1,
    .attrs = gather_attrs, .nattrs = 1,
    .infer = gather_infer, .reference = gather_ref, .flops = no_flops,
};

const op_desc op_gather_bwd_desc = {
    .name = "gather_bwd",
    .summary = "gradient of gather: dx = zeros(x_dims), dy scatter-added at index along axis (deterministic)",
    .ports = gather_bwd_ports, .nports = 2, .nrequired = 2,
    .results = dx_results, .nresults = 1,
    .attrs = gather_bwd_attrs, .nattrs = 2,
    .infer = gather_bwd_infer, .reference = gather_bwd_ref, .flops = gather_bwd_flops,
};

const op_desc op_one_hot_desc = {
    .name = "one_hot",
    .summary = "y[..., c] = 1 where index == c, else 0; y = index.dims + [classes]",
    .ports = one_hot_ports, .nports = 1, .nrequired = 1,
    .results = y_results, .nresults = 1,
    .attrs = one_hot_attrs, .nattrs = 2,
    .infer = one_hot_infer, .reference = one_hot_ref, .flops = no_flops,
};
