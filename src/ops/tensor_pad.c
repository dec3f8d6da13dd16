/* tensor_pad.c — pad: grow each dim by `before` and `after` elements.
 *
 * Reference layout: packed row-major doubles.  For each output index o and
 * dim d with input size L, the source index is i_d = o_d - before_d; when it
 * falls outside [0, L) the mode decides:
 *   constant:  the element is `value`;
 *   reflect:   mirror without repeating the edge (torch/NumPy "reflect"):
 *              -1 -> 1, L -> L - 2; needs before, after <= L - 1;
 *   replicate: clamp to the edge (NumPy "edge");
 *   circular:  wrap around, i mod L (NumPy "wrap"); needs before, after <= L.
 * `pads`: an int (every side of every dim), a list of rank ints (before =
 * after per dim), a flat list of 2*rank ints [b0, a0, b1, a1, ...], or a list
 * of rank [before, after] pairs.  Pads are >= 0.
 */
#include "tensor_util.h"

#include "core/checked.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static xdnn_status pad_infer(op_infer_ctx *c)
{
    if (!infer_need(c, 0))
        return XDNN_ERR_SEMANTIC;
    const tinfo *x = c->in[0];
    int64_t before[XDNN_MAX_RANK], after[XDNN_MAX_RANK];
    char xs[128];
    if (!pad_amounts(c->node, c->desc, x->rank, before, after)) {
        const value *v = op_attr(c->node, c->desc, "pads");
        char got[256] = "nothing";
        if (v && v->kind != VAL_NONE) {
            arena *a = arena_create();
            snprintf(got, sizeof got, "%s", value_to_text(a, v));
            arena_destroy(a);
        }
        op_error(c, "attribute 'pads' must be an int, %d ints, %d ints [before0, after0, ...] or %d [before, after] "
                    "pairs for x %s, got %s",
                 x->rank, 2 * x->rank, x->rank, tinfo_str(xs, sizeof xs, x), got);
        return XDNN_ERR_SEMANTIC;
    }
    const char *mode = op_attr_str(c->node, c->desc, "mode");
    bool reflect = mode && strcmp(mode, "reflect") == 0, circular = mode && strcmp(mode, "circular") == 0;
    c->out[0] = *x;
    for (int d = 0; d < x->rank; d++) {
        int64_t L = x->dims[d], limit = reflect ? L - 1 : circular ? L : INT64_MAX;
        if (before[d] < 0 || after[d] < 0) {
            op_error(c, "pads of dim %d must be >= 0, got [%" PRId64 ", %" PRId64 "]", d, before[d], after[d]);
            return XDNN_ERR_SEMANTIC;
        }
        if (before[d] > limit || after[d] > limit) {
            op_error(c, "mode \"%s\" allows pads of at most %" PRId64 " on dim %d (size %" PRId64 ") of x %s, got [%" PRId64
                        ", %" PRId64 "]",
                     mode, limit, d, L, tinfo_str(xs, sizeof xs, x), before[d], after[d]);
            return XDNN_ERR_SEMANTIC;
        }
        if (!ck_add(L, before[d], &c->out[0].dims[d]) || !ck_add(c->out[0].dims[d], after[d], &c->out[0].dims[d])) {
            op_error(c, "attribute 'pads' makes dim %d of x %s overflow 64 bits: %" PRId64 " + %" PRId64 " + %" PRId64,
                     d, tinfo_str(xs, sizeof xs, x), L, before[d], after[d]);
            return XDNN_ERR_SEMANTIC;
        }
    }
    return XDNN_OK;
}

typedef enum pad_mode { PAD_CONSTANT, PAD_REFLECT, PAD_REPLICATE, PAD_CIRCULAR } pad_mode;

/* Source index for i in [-before, L + after), or -1 for the constant. */
static int64_t pad_source(pad_mode m, int64_t i, int64_t L)
{
    if (i >= 0 && i < L)
        return i;
    switch (m) {
    case PAD_REFLECT:
        return i < 0 ? -i : 2 * (L - 1) - i;
    case PAD_REPLICATE:
        return i < 0 ? 0 : L - 1;
    case PAD_CIRCULAR:
        return ((i % L) + L) % L;
    case PAD_CONSTANT:
        break;
    }
    return -1;
}

static xdnn_status pad_ref(op_ref_ctx *c)
{
    const ref_tensor *x = c->in[0];
    ref_tensor *y = c->out[0];
    int64_t before[XDNN_MAX_RANK], after[XDNN_MAX_RANK], xstride[XDNN_MAX_RANK], idx[XDNN_MAX_RANK] = {0};
    pad_amounts(c->node, c->desc, x->rank, before, after);
    shape_strides(x->rank, x->dims, xstride);
    const char *ms = op_attr_str(c->node, c->desc, "mode");
    pad_mode mode = !ms                             ? PAD_CONSTANT
                    : strcmp(ms, "reflect") == 0    ? PAD_REFLECT
                    : strcmp(ms, "replicate") == 0  ? PAD_REPLICATE
                    : strcmp(ms, "circular") == 0   ? PAD_CIRCULAR
                                                    : PAD_CONSTANT;
    double fill = op_attr_float(c->node, c->desc, "value");
    int64_t o = 0;
    do {
        int64_t off = 0;
        for (int d = 0; d < y->rank && off >= 0; d++) {
            int64_t s = pad_source(mode, idx[d] - before[d], x->dims[d]);
            off = s < 0 ? -1 : off + s * xstride[d];
        }
        y->data[o++] = off < 0 ? fill : x->data[off];
    } while (index_next(y->rank, y->dims, idx));
    return XDNN_OK;
}

static double no_flops(const xgraph *g, const xnode *n) { return 0.0; }

static const char *const x_port[] = {"x"};
static const char *const y_result[] = {"y"};
static const attr_spec pad_attrs[] = {
    {"pads", AT_PADS, NULL, NULL, "int | [p per dim] | [b0, a0, b1, a1, ...] | [[before, after] per dim]"},
    {"value", AT_FLOAT, "0", NULL, "fill value for mode \"constant\""},
    {"mode", AT_STRING, "\"constant\"", "constant|reflect|replicate|circular", "how the border is filled"},
};

const op_desc op_pad_desc = {
    .name = "pad",
    .summary = "grow each dim by [before, after] elements (constant, reflect, replicate or circular border)",
    .ports = x_port, .nports = 1, .nrequired = 1,
    .results = y_result, .nresults = 1,
    .attrs = pad_attrs, .nattrs = 3,
    .infer = pad_infer, .reference = pad_ref, .flops = no_flops,
};
