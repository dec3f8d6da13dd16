/* tensor_shape.c — ops that only rearrange or repeat elements: reshape,
 * permute and broadcast.  No arithmetic; the GPU backend turns most of them
 * into strided views (dsl-proposal 5.5, "view rule").
 *
 * Reference layouts: packed row-major doubles in logical order, so
 *   reshape:   y[i] = x[i] for the flat index i (same element order);
 *   permute:   y[i_0, ..., i_{r-1}] = x[j] with j[perm[d]] = i_d, out dims[d] = x dims[perm[d]];
 *   broadcast: y[i] = x[i'] with NumPy right-aligned broadcasting (size-1 dims stretch).
 */
#include "tensor_util.h"

#include "core/checked.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Data movement only: no flops (the cost model charges bytes separately). */
static double no_flops(const xgraph *g, const xnode *n) { return 0.0; }

static const char *const x_port[] = {"x"};
static const char *const y_result[] = {"y"};

/* ---- reshape */

static xdnn_status reshape_infer(op_infer_ctx *c)
{
    if (!infer_need(c, 0))
        return XDNN_ERR_SEMANTIC;
    const tinfo *x = c->in[0];
    int64_t dims[XDNN_MAX_RANK];
    int n;
    if (!infer_int_list(c, "dims", XDNN_MAX_RANK, dims, &n))
        return XDNN_ERR_SEMANTIC;
    int64_t xn = shape_numel(x->rank, x->dims), known = 1;
    int infer_at = -1;
    char xs[128], ds[128];
    for (int i = 0; i < n; i++) {
        if (dims[i] == -1 && infer_at < 0) {
            infer_at = i;
        } else if (dims[i] == -1) {
            op_error(c, "attribute 'dims' %s may contain only one -1", shape_str(ds, sizeof ds, n, dims));
            return XDNN_ERR_SEMANTIC;
        } else if (dims[i] < 1) {
            op_error(c, "attribute 'dims' %s must hold sizes >= 1 (or one -1), got %" PRId64 " at index %d",
                     shape_str(ds, sizeof ds, n, dims), dims[i], i);
            return XDNN_ERR_SEMANTIC;
        } else if (!ck_mul(known, dims[i], &known)) {
            op_error(c, "cannot reshape x %s (%" PRId64 " elements) into %s: its element count overflows 64 bits",
                     tinfo_str(xs, sizeof xs, x), xn, shape_str(ds, sizeof ds, n, dims));
            return XDNN_ERR_SEMANTIC;
        }
    }
    if (infer_at >= 0) {
        if (xn % known != 0) {
            op_error(c, "cannot reshape x %s (%" PRId64 " elements) into %s: %" PRId64 " is not a multiple of %" PRId64,
                     tinfo_str(xs, sizeof xs, x), xn, shape_str(ds, sizeof ds, n, dims), xn, known);
            return XDNN_ERR_SEMANTIC;
        }
        dims[infer_at] = xn / known;
        known = xn;
    }
    if (known != xn) {
        op_error(c, "cannot reshape x %s (%" PRId64 " elements) into %s (%" PRId64 " elements)",
                 tinfo_str(xs, sizeof xs, x), xn, shape_str(ds, sizeof ds, n, dims), known);
        return XDNN_ERR_SEMANTIC;
    }
    c->out[0].dtype = x->dtype;
    c->out[0].rank = n;
    memcpy(c->out[0].dims, dims, (size_t)n * sizeof dims[0]);
    return XDNN_OK;
}

static xdnn_status reshape_ref(op_ref_ctx *c)
{
    memcpy(c->out[0]->data, c->in[0]->data, (size_t)c->in[0]->numel * sizeof(double));
    return XDNN_OK;
}

static const attr_spec reshape_attrs[] = {
    {"dims", AT_INTS, NULL, NULL, "new dims; one may be -1 (inferred); the element count must not change"},
};

const op_desc op_reshape_desc = {
    .name = "reshape",
    .summary = "same elements in row-major order, new dims (one -1 is inferred)",
    .ports = x_port, .nports = 1, .nrequired = 1,
    .results = y_result, .nresults = 1,
    .attrs = reshape_attrs, .nattrs = 1,
    .infer = reshape_infer, .reference = reshape_ref, .flops = no_flops,
};

/* ---- permute */

/* The `perm` attribute normalized (negative axes count from the end);
 * false unless it is a permutation of 0..rank-1. */
static bool get_perm(const xnode *node, const op_desc *d, int rank, int *perm)
{
    int64_t p[XDNN_MAX_RANK];
    int n;
    if (!attr_int_list(node, d, "perm", XDNN_MAX_RANK, p, &n) || n != rank)
        return false;
    bool seen[XDNN_MAX_RANK] = {false};
    for (int i = 0; i < n; i++) {
        if (!op_axis(rank, p[i], &perm[i]) || seen[perm[i]])
            return false;
        seen[perm[i]] = true;
    }
    return true;
}

static xdnn_status permute_infer(op_infer_ctx *c)
{
    if (!infer_need(c, 0))
        return XDNN_ERR_SEMANTIC;
    const tinfo *x = c->in[0];
    int perm[XDNN_MAX_RANK];
    if (!get_perm(c->node, c->desc, x->rank, perm)) {
        const value *v = op_attr(c->node, c->desc, "perm");
        char got[256] = "nothing", xs[128];
        if (v && v->kind != VAL_NONE) {
            arena *a = arena_create();
            snprintf(got, sizeof got, "%s", value_to_text(a, v));
            arena_destroy(a);
        }
        op_error(c, "attribute 'perm' must be a permutation of the %d axes of x %s, got %s", x->rank,
                 tinfo_str(xs, sizeof xs, x), got);
        return XDNN_ERR_SEMANTIC;
    }
    c->out[0].dtype = x->dtype;
    c->out[0].rank = x->rank;
    for (int d = 0; d < x->rank; d++)
        c->out[0].dims[d] = x->dims[perm[d]];
    return XDNN_OK;
}

static xdnn_status permute_ref(op_ref_ctx *c)
{
    const ref_tensor *x = c->in[0];
    ref_tensor *y = c->out[0];
    int perm[XDNN_MAX_RANK];
    get_perm(c->node, c->desc, x->rank, perm);
    int64_t xstride[XDNN_MAX_RANK], idx[XDNN_MAX_RANK] = {0};
    shape_strides(x->rank, x->dims, xstride);
    int64_t o = 0;
    do {
        int64_t off = 0;
        for (int d = 0; d < y->rank; d++)
            off += idx[d] * xstride[perm[d]];
        y->data[o++] = x->data[off];
    } while (index_next(y->rank, y->dims, idx));
    return XDNN_OK;
}

static const attr_spec permute_attrs[] = {
    {"perm", AT_INTS, NULL, NULL, "output axis d is input axis perm[d]"},
};

const op_desc op_permute_desc = {
    .name = "permute",
    .summary = "reorder axes: output dim d is input dim perm[d]",
    .ports = x_port, .nports = 1, .nrequired = 1,
    .results = y_result, .nresults = 1,
    .attrs = permute_attrs, .nattrs = 1,
    .infer = permute_infer, .reference = permute_ref, .flops = no_flops,
};

/* ---- broadcast */

static xdnn_status broadcast_infer(op_infer_ctx *c)
{
    if (!infer_need(c, 0))
        return XDNN_ERR_SEMANTIC;
    const tinfo *x = c->in[0];
    int64_t dims[XDNN_MAX_RANK];
    int n;
    if (!infer_int_list(c, "dims", XDNN_MAX_RANK, dims, &n))
        return XDNN_ERR_SEMANTIC;
    char xs[128], ds[128];
    bool ok = x->rank <= n;
    for (int i = 0; i < n; i++)
        if (dims[i] < 1)
            ok = false;
    for (int d = 0; ok && d < x->rank; d++) {
        int64_t xd = x->dims[d], od = dims[n - x->rank + d];
        ok = xd == od || xd == 1;
    }
    if (!ok) {
        op_error(c, "cannot broadcast x %s to %s (dims align from the right; each must match or be 1)",
                 tinfo_str(xs, sizeof xs, x), shape_str(ds, sizeof ds, n, dims));
        return XDNN_ERR_SEMANTIC;
    }
    c->out[0].dtype = x->dtype;
    c->out[0].rank = n;
    memcpy(c->out[0].dims, dims, (size_t)n * sizeof dims[0]);
    return XDNN_OK;
}

static xdnn_status broadcast_ref(op_ref_ctx *c)
{
    const ref_tensor *x = c->in[0];
    ref_tensor *y = c->out[0];
    int64_t idx[XDNN_MAX_RANK] = {0}, o = 0;
    do
        y->data[o++] = x->data[ref_broadcast_offset(x, y->rank, idx)];
    while (index_next(y->rank, y->dims, idx));
    return XDNN_OK;
}

static const attr_spec broadcast_attrs[] = {
    {"dims", AT_INTS, NULL, NULL, "target dims; x broadcasts NumPy-style (right-aligned, size-1 dims stretch)"},
};

const op_desc op_broadcast_desc = {
    .name = "broadcast",
    .summary = "repeat x along size-1 and new leading dims to the given dims",
    .ports = x_port, .nports = 1, .nrequired = 1,
    .results = y_result, .nresults = 1,
    .attrs = broadcast_attrs, .nattrs = 1,
    .infer = broadcast_infer, .reference = broadcast_ref, .flops = no_flops,
};
