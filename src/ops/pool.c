/* pool.c — max and average pooling over 1 to 3 spatial dims, and their
 * backward ops (cuDNN RESAMPLE fwd/bwd).
 *
 *   y  = maxpool(x) | avgpool(x)        x [N, C, spatial...] -> y [N, C, out...]
 *   dx = maxpool_bwd(dy, x) | avgpool_bwd(dy, x)   dx has x's shape
 *
 * Attributes: window (required; int or one per spatial dim), stride (default
 * = window), pad (AT_PADS, zero-size "virtual" padding, never read as a value),
 * ceil_mode (output size rounds up; see conv_util.h), dilation (maxpool only),
 * include_pad (avgpool only).  Output size and "same" follow conv_util.h.
 *
 * maxpool: y = max of the taps inside x; padding taps are skipped (as if
 *   -inf).  A NaN tap wins over numbers, so NaN propagates.  A window whose
 *   taps all fall in padding (possible only with dilation) gives -inf.
 * maxpool_bwd tie rule: the whole dy goes to the FIRST maximum in row-major
 *   window order (lowest d, then h, then w tap, which is also the lowest x
 *   index); the first NaN if there is one.  Overlapping windows accumulate.
 * avgpool: y = sum of the taps inside x / divisor, where the divisor counts
 *   taps inside x (include_pad=false) or inside the padded extent
 *   [-pad_lo, in + pad_hi) (include_pad=true, PyTorch count_include_pad:
 *   with ceil_mode, taps past the padded extent are not counted either).
 * avgpool_bwd: every tap inside x receives dy / divisor; x gives only the shape.
 *
 * Pads must be smaller than the window extent, so every window sees x.
 */
#include "conv_util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

typedef struct pool_kind {
    bool max; /* maxpool rather than avgpool */
    bool bwd; /* the backward op: ports (dy, x) */
} pool_kind;

static const pool_kind kind_maxpool = {true, false}, kind_avgpool = {false, false};
static const pool_kind kind_maxpool_bwd = {true, true}, kind_avgpool_bwd = {false, true};

static const char *const fwd_ports[] = {"x"};
static const char *const fwd_results[] = {"y"};
static const char *const bwd_ports[] = {"dy", "x"};
static const char *const bwd_results[] = {"dx"};

static const attr_spec maxpool_attrs[] = {
    {"window", AT_INTS, NULL, NULL, "window size (required): an int or one per spatial dim"},
    {"stride", AT_INTS, NULL, NULL, "step between windows (default: the window)"},
    {"pad", AT_PADS, "0", NULL, "padding: int, [p per dim], [[before, after] per dim] or \"same\""},
    {"dilation", AT_INTS, "1", NULL, "spacing between window taps"},
    {"ceil_mode", AT_BOOL, "false", NULL, "round the output size up instead of down"},
};

static const attr_spec avgpool_attrs[] = {
    {"window", AT_INTS, NULL, NULL, "window size (required): an int or one per spatial dim"},
    {"stride", AT_INTS, NULL, NULL, "step between windows (default: the window)"},
    {"pad", AT_PADS, "0", NULL, "padding: int, [p per dim], [[before, after] per dim] or \"same\""},
    {"include_pad", AT_BOOL, "false", NULL, "count padding taps in the divisor (count_include_pad)"},
    {"ceil_mode", AT_BOOL, "false", NULL, "round the output size up instead of down"},
};

static const pool_kind *kind_of(const op_desc *d) { return d->family; }

/* Window and geometry from the attributes; message in err on failure. */
static bool pool_geom(const xnode *n, const op_desc *d, int nsp, const int64_t *in, conv_geom *g, char *err,
                      size_t errlen)
{
    int64_t win[CONV_MAX_SPATIAL];
    if (!op_attr_present(n, d, "window")) {
        snprintf(err, errlen, "attribute 'window' is required (an int or a list of %d ints)", nsp);
        return false;
    }
    if (!op_attr_ints_n(n, d, "window", nsp, win)) {
        arena *a = arena_create();
        snprintf(err, errlen, "attribute 'window' must be an int or a list of %d ints (one per spatial dim), got %s",
                 nsp, value_to_text(a, op_attr(n, d, "window")));
        arena_destroy(a);
        return false;
    }
    for (int i = 0; i < nsp; i++) {
        if (win[i] < 1) {
            snprintf(err, errlen, "attribute 'window' must be >= 1 along every spatial dim, got %" PRId64 " along %s",
                     win[i], conv_dim_name(nsp, i));
            return false;
        }
    }
    bool is_max = kind_of(d)->max;
    if (!conv_geom_init(g, n, d, nsp, in, win, "stride", win, is_max ? "dilation" : NULL, "pad",
                        op_attr_bool(n, d, "ceil_mode"), err, errlen))
        return false;
    for (int i = 0; i < nsp; i++) {
        int s = g->first + i;
        int64_t ext = g->dilation[s] * (g->win[s] - 1) + 1;
        if (g->pad_lo[s] >= ext || g->pad_hi[s] >= ext) {
            snprintf(err, errlen,
                     "attribute 'pad' is too large along %s: pad [%" PRId64 ", %" PRId64
                     "] must be smaller than the window extent %" PRId64 ", or a window would see only padding",
                     conv_dim_name(nsp, i), g->pad_lo[s], g->pad_hi[s], ext);
            return false;
        }
    }
    return true;
}

static xdnn_status pool_infer(op_infer_ctx *c)
{
    const pool_kind *k = kind_of(c->desc);
    const tinfo *x = c->in[k->bwd ? 1 : 0], *dy = k->bwd ? c->in[0] : NULL;
    char xs[256];
    shape_str(xs, sizeof xs, x->rank, x->dims);
    if (x->rank < 3 || x->rank > 2 + CONV_MAX_SPATIAL)
        return op_error(c, "x must have rank 3 to 5 ([N, C, W], [N, C, H, W] or [N, C, D, H, W]), got rank %d: x is %s",
                        x->rank, xs);
    conv_geom g;
    char err[512];
    if (!pool_geom(c->node, c->desc, x->rank - 2, x->dims + 2, &g, err, sizeof err))
        return op_error(c, "%s (x is %s)", err, xs);
    int64_t ydims[XDNN_MAX_RANK] = {x->dims[0], x->dims[1]};
    for (int i = 0; i < g.nsp; i++)
        ydims[2 + i] = g.out[g.first + i];
    tinfo *out = &c->out[0];
    out->rank = x->rank;
    if (!k->bwd) {
        for (int i = 0; i < x->rank; i++)
            out->dims[i] = ydims[i];
        out->dtype = x->dtype;
        return XDNN_OK;
    }
    bool same = dy->rank == x->rank;
    for (int i = 0; same && i < x->rank; i++)
        same = dy->dims[i] == ydims[i];
    if (!same) {
        char dys[256], ys[256], ws[128], gs[256];
        return op_error(c, "dy is %s but %s of x %s (window %s, %s) gives %s",
                        shape_str(dys, sizeof dys, dy->rank, dy->dims), k->max ? "maxpool" : "avgpool", xs,
                        shape_str(ws, sizeof ws, g.nsp, g.win + g.first), conv_geom_str(&g, gs, sizeof gs),
                        shape_str(ys, sizeof ys, x->rank, ydims));
    }
    for (int i = 0; i < x->rank; i++)
        out->dims[i] = x->dims[i];
    out->dtype = dy->dtype;
    return XDNN_OK;
}

/* Offset (within one [D, H, W] plane) of the winning tap of the max window at
 * output (od, oh, ow), or -1 when every tap is padding.  Taps are visited in
 * row-major window order and only a strictly larger value (or the first NaN)
 * replaces the current best: that is the tie rule. */
static int64_t max_tap(const double *plane, const int64_t *xd, const conv_geom *g, int64_t od, int64_t oh,
                       int64_t ow)
{
    int64_t best = -1;
    for (int64_t rd = 0; rd < g->win[0]; rd++) {
        int64_t id = od * g->stride[0] - g->pad_lo[0] + rd * g->dilation[0];
        if (id < 0 || id >= xd[2])
            continue;
        for (int64_t rh = 0; rh < g->win[1]; rh++) {
            int64_t ih = oh * g->stride[1] - g->pad_lo[1] + rh * g->dilation[1];
            if (ih < 0 || ih >= xd[3])
                continue;
            for (int64_t rw = 0; rw < g->win[2]; rw++) {
                int64_t iw = ow * g->stride[2] - g->pad_lo[2] + rw * g->dilation[2];
                if (iw < 0 || iw >= xd[4])
                    continue;
                int64_t off = (id * xd[3] + ih) * xd[4] + iw;
                double v = plane[off];
                if (best < 0 || (!isnan(plane[best]) && (v > plane[best] || isnan(v))))
                    best = off;
            }
        }
    }
    return best;
}

/* The avgpool divisor at output (od, oh, ow): taps inside x, or with
 * include_pad taps inside the padded extent [-pad_lo, in + pad_hi). */
static int64_t avg_divisor(const int64_t *xd, const conv_geom *g, bool include_pad, int64_t od, int64_t oh,
                           int64_t ow)
{
    const int64_t o[3] = {od, oh, ow};
    int64_t count = 1;
    for (int s = 0; s < CONV_MAX_SPATIAL; s++) {
        int64_t lo = include_pad ? -g->pad_lo[s] : 0;
        int64_t hi = include_pad ? xd[2 + s] + g->pad_hi[s] : xd[2 + s];
        int64_t taps = 0;
        for (int64_t r = 0; r < g->win[s]; r++) {
            int64_t i = o[s] * g->stride[s] - g->pad_lo[s] + r;
            taps += i >= lo && i < hi;
        }
        count *= taps;
    }
    return count;
}

/* y[n, c, o] = max or mean over the window taps (see the file comment);
 * every (n, c) plane is independent.  Tensors viewed as [N, C, D, H, W]. */
static xdnn_status pool_fwd_reference(op_ref_ctx *c)
{
    const pool_kind *k = kind_of(c->desc);
    const ref_tensor *x = c->in[0];
    ref_tensor *y = c->out[0];
    conv_geom g;
    char err[512];
    if (!pool_geom(c->node, c->desc, x->rank - 2, x->dims + 2, &g, err, sizeof err))
        return op_ref_error(c, XDNN_ERR_INTERNAL, "%s", err);
    int64_t xd[5], yd[5];
    conv_dims5(x, xd);
    conv_dims5(y, yd);
    const bool include_pad = !k->max && op_attr_bool(c->node, c->desc, "include_pad");
    const int64_t xplane = xd[2] * xd[3] * xd[4], yplane = yd[2] * yd[3] * yd[4];

#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t n = 0; n < xd[0]; n++) {
        for (int64_t ch = 0; ch < xd[1]; ch++) {
            const double *xp = x->data + (n * xd[1] + ch) * xplane;
            double *yp = y->data + (n * yd[1] + ch) * yplane;
            for (int64_t od = 0; od < yd[2]; od++)
                for (int64_t oh = 0; oh < yd[3]; oh++)
                    for (int64_t ow = 0; ow < yd[4]; ow++) {
                        double *out = &yp[(od * yd[3] + oh) * yd[4] + ow];
                        if (k->max) {
                            int64_t t = max_tap(xp, xd, &g, od, oh, ow);
                            *out = t < 0 ? -(double)INFINITY : xp[t];
                            continue;
                        }
                        double sum = 0;
                        for (int64_t rd = 0; rd < g.win[0]; rd++) {
                            int64_t id = od * g.stride[0] - g.pad_lo[0] + rd;
                            if (id < 0 || id >= xd[2])
                                continue;
                            for (int64_t rh = 0; rh < g.win[1]; rh++) {
                                int64_t ih = oh * g.stride[1] - g.pad_lo[1] + rh;
                                if (ih < 0 || ih >= xd[3])
                                    continue;
                                for (int64_t rw = 0; rw < g.win[2]; rw++) {
                                    int64_t iw = ow * g.stride[2] - g.pad_lo[2] + rw;
                                    if (iw >= 0 && iw < xd[4])
                                        sum += xp[(id * xd[3] + ih) * xd[4] + iw];
                                }
                            }
                        }
                        int64_t div = avg_divisor(xd, &g, include_pad, od, oh, ow);
                        *out = div > 0 ? sum / (double)div : 0.0;
                    }
        }
    }
    return XDNN_OK;
}

/* dx[n, c, i] = sum over outputs o whose window holds tap i of
 *   maxpool: dy[n, c, o] if i is o's winning tap (max_tap), else 0;
 *   avgpool: dy[n, c, o] / divisor(o).
 * Scatter within one (n, c) plane, so planes run in parallel. */
static xdnn_status pool_bwd_reference(op_ref_ctx *c)
{
    const pool_kind *k = kind_of(c->desc);
    const ref_tensor *dy = c->in[0], *x = c->in[1];
    ref_tensor *dx = c->out[0];
    conv_geom g;
    char err[512];
    if (!pool_geom(c->node, c->desc, x->rank - 2, x->dims + 2, &g, err, sizeof err))
        return op_ref_error(c, XDNN_ERR_INTERNAL, "%s", err);
    int64_t xd[5], yd[5];
    conv_dims5(x, xd);
    conv_dims5(dy, yd);
    const bool include_pad = !k->max && op_attr_bool(c->node, c->desc, "include_pad");
    const int64_t xplane = xd[2] * xd[3] * xd[4], yplane = yd[2] * yd[3] * yd[4];

#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t n = 0; n < xd[0]; n++) {
        for (int64_t ch = 0; ch < xd[1]; ch++) {
            const double *xp = x->data + (n * xd[1] + ch) * xplane;
            const double *dyp = dy->data + (n * yd[1] + ch) * yplane;
            double *dxp = dx->data + (n * xd[1] + ch) * xplane;
            for (int64_t i = 0; i < xplane; i++)
                dxp[i] = 0;
            for (int64_t od = 0; od < yd[2]; od++)
                for (int64_t oh = 0; oh < yd[3]; oh++)
                    for (int64_t ow = 0; ow < yd[4]; ow++) {
                        double g_out = dyp[(od * yd[3] + oh) * yd[4] + ow];
                        if (k->max) {
                            int64_t t = max_tap(xp, xd, &g, od, oh, ow);
                            if (t >= 0)
                                dxp[t] += g_out;
                            continue;
                        }
                        int64_t div = avg_divisor(xd, &g, include_pad, od, oh, ow);
                        if (div == 0)
                            continue;
                        double share = g_out / (double)div;
                        for (int64_t rd = 0; rd < g.win[0]; rd++) {
                            int64_t id = od * g.stride[0] - g.pad_lo[0] + rd;
                            if (id < 0 || id >= xd[2])
                                continue;
                            for (int64_t rh = 0; rh < g.win[1]; rh++) {
                                int64_t ih = oh * g.stride[1] - g.pad_lo[1] + rh;
                                if (ih < 0 || ih >= xd[3])
                                    continue;
                                for (int64_t rw = 0; rw < g.win[2]; rw++) {
                                    int64_t iw = ow * g.stride[2] - g.pad_lo[2] + rw;
                                    if (iw >= 0 && iw < xd[4])
                                        dxp[(id * xd[3] + ih) * xd[4] + iw] += share;
                                }
                            }
                        }
                    }
        }
    }
    return XDNN_OK;
}

/* One compare or add per window tap: numel(y or dy) * prod(window). */
static double pool_flops(const xgraph *g, const xnode *n)
{
    const op_desc *d = op_get(n->op);
    const xtensor *y = kind_of(d)->bwd ? &g->tensors[n->inputs[0].tensor] : &g->tensors[n->results[0]];
    int64_t win[CONV_MAX_SPATIAL];
    int nsp = y->rrank - 2;
    if (nsp < 1 || nsp > CONV_MAX_SPATIAL || !op_attr_ints_n(n, d, "window", nsp, win))
        return (double)y->rnumel;
    return (double)y->rnumel * (double)shape_numel(nsp, win);
}

#define POOL_DESC(id, summ, port_list, result_list, attr_list, kind, ref)                                                \
    const op_desc op_##id##_desc = {                                                                                   \
        .name = #id,                                                                                                   \
        .summary = summ,                                                                                               \
        .ports = port_list,                                                                                            \
        .nports = (int)(sizeof port_list / sizeof port_list[0]),                                                       \
        .nrequired = (int)(sizeof port_list / sizeof port_list[0]),                                                    \
        .results = result_list,                                                                                        \
        .nresults = 1,                                                                                                 \
        .attrs = attr_list,                                                                                            \
        .nattrs = (int)(sizeof attr_list / sizeof attr_list[0]),                                                       \
        .infer = pool_infer,                                                                                           \
        .reference = ref,                                                                                                    \
        .flops = pool_flops,                                                                                           \
        .family = &(kind),                                                                                             \
    }

POOL_DESC(maxpool, "max over each window of x [N, C, spatial...]", fwd_ports, fwd_results, maxpool_attrs,
          kind_maxpool, pool_fwd_reference);
POOL_DESC(avgpool, "mean over each window of x [N, C, spatial...]", fwd_ports, fwd_results, avgpool_attrs,
          kind_avgpool, pool_fwd_reference);
POOL_DESC(maxpool_bwd, "gradient of maxpool: dy to the first maximum of each window", bwd_ports, bwd_results,
          maxpool_attrs, kind_maxpool_bwd, pool_bwd_reference);
POOL_DESC(avgpool_bwd, "gradient of avgpool: dy / divisor to every tap of each window", bwd_ports, bwd_results,
          avgpool_attrs, kind_avgpool_bwd, pool_bwd_reference);
