/* conv_grad.c — the two adjoints of conv (cuDNN CONV_DGRAD and CONV_WGRAD).
 *
 *   dx = conv_dgrad(dy, w, x_dims=[N, C, spatial...])   dx [x_dims]
 *   dw = conv_wgrad(dy, x, w_dims=[K, C/groups, window...])   dw [w_dims]
 *
 * Logical layouts as for conv: dy [N, K, out...], w [K, C/groups, window...],
 * x [N, C, spatial...].  They are the exact adjoints of conv with the same
 * stride/pad/dilation/groups:
 *   <conv(x, w), dy> = <x, conv_dgrad(dy, w)> = <w, conv_wgrad(dy, x)>.
 * The x_dims / w_dims attribute is needed because with stride > 1 several
 * input sizes give the same output size; dy must match conv's output for it.
 */
#include "conv_util.h"

static const char *const dgrad_ports[] = {"dy", "w"};
static const char *const dgrad_results[] = {"dx"};
static const char *const wgrad_ports[] = {"dy", "x"};
static const char *const wgrad_results[] = {"dw"};

static const attr_spec dgrad_attrs[] = {
    {"x_dims", AT_INTS, NULL, NULL, "shape of x (and dx): [N, C, spatial...]"},
    {"stride", AT_INTS, "1", NULL, "as conv"},
    {"pad", AT_PADS, "0", NULL, "as conv"},
    {"dilation", AT_INTS, "1", NULL, "as conv"},
    {"groups", AT_INT, "1", NULL, "as conv"},
};

static const attr_spec wgrad_attrs[] = {
    {"w_dims", AT_INTS, NULL, NULL, "shape of w (and dw): [K, C/groups, window...]"},
    {"stride", AT_INTS, "1", NULL, "as conv"},
    {"pad", AT_PADS, "0", NULL, "as conv"},
    {"dilation", AT_INTS, "1", NULL, "as conv"},
    {"groups", AT_INT, "1", NULL, "as conv"},
};

/* The shape attribute (x_dims or w_dims) as `rank` ints >= 1. */
static bool read_dims_attr(op_infer_ctx *c, const char *name, int rank, int64_t *dims)
{
    if (!op_attr_present(c->node, c->desc, name)) {
        op_error(c, "attribute '%s' is required (a list of %d ints)", name, rank);
        return false;
    }
    const value *v = op_attr(c->node, c->desc, name);
    if (v->kind != VAL_LIST || !op_attr_ints_n(c->node, c->desc, name, rank, dims)) {
        arena *a = arena_create();
        op_error(c, "attribute '%s' must be a list of %d ints (same rank as dy), got %s", name, rank,
                 value_to_text(a, v));
        arena_destroy(a);
        return false;
    }
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 1) {
            char s[256];
            op_error(c, "attribute '%s' must have every dim >= 1, got %s", name, shape_str(s, sizeof s, rank, dims));
            return false;
        }
    }
    return true;
}

/* dy must be exactly conv's output for (x, w); ydims is that output. */
static bool check_dy(op_infer_ctx *c, const tinfo *dy, const char *xname, const int64_t *xdims, const char *wname,
                     const int64_t *wdims, const conv_geom *g, const int64_t *ydims)
{
    for (int i = 0; i < dy->rank; i++) {
        if (dy->dims[i] != ydims[i]) {
            char dys[256], xs[256], ws[256], ys[256], gs[256];
            op_error(c, "dy is %s but conv of %s %s with %s %s (%s) gives %s",
                     shape_str(dys, sizeof dys, dy->rank, dy->dims), xname,
                     shape_str(xs, sizeof xs, dy->rank, xdims), wname, shape_str(ws, sizeof ws, dy->rank, wdims),
                     conv_geom_str(g, gs, sizeof gs), shape_str(ys, sizeof ys, dy->rank, ydims));
            return false;
        }
    }
    return true;
}

static xdnn_status dgrad_infer(op_infer_ctx *c)
{
    const tinfo *dy = c->in[0], *w = c->in[1];
    if (!conv_check_ranks(c, "dy", dy, "w", w))
        return XDNN_ERR_SEMANTIC;
    int64_t xdims[XDNN_MAX_RANK], ydims[XDNN_MAX_RANK];
    conv_geom g;
    if (!read_dims_attr(c, "x_dims", dy->rank, xdims) ||
        !conv_check(c, "x_dims", xdims, "w", w->dims, dy->rank, &g, ydims) ||
        !check_dy(c, dy, "x_dims", xdims, "w", w->dims, &g, ydims))
        return XDNN_ERR_SEMANTIC;
    c->out[0].rank = dy->rank;
    for (int i = 0; i < dy->rank; i++)
        c->out[0].dims[i] = xdims[i];
    c->out[0].dtype = dy->dtype;
    return XDNN_OK;
}

static xdnn_status wgrad_infer(op_infer_ctx *c)
{
    const tinfo *dy = c->in[0], *x = c->in[1];
    if (!conv_check_ranks(c, "dy", dy, "x", x))
        return XDNN_ERR_SEMANTIC;
    int64_t wdims[XDNN_MAX_RANK], ydims[XDNN_MAX_RANK];
    conv_geom g;
    if (!read_dims_attr(c, "w_dims", dy->rank, wdims) ||
        !conv_check(c, "x", x->dims, "w_dims", wdims, dy->rank, &g, ydims) ||
        !check_dy(c, dy, "x", x->dims, "w_dims", wdims, &g, ydims))
        return XDNN_ERR_SEMANTIC;
    c->out[0].rank = dy->rank;
    for (int i = 0; i < dy->rank; i++)
        c->out[0].dims[i] = wdims[i];
    c->out[0].dtype = dy->dtype;
    return XDNN_OK;
}

/* dx[n, c, id, ih, iw] = sum over k in c's group, (rd, rh, rw) and the output
 * positions o with o*s - pad + r*dil = i (per spatial dim) of
 *     dy[n, k, od, oh, ow] * w[k, c - grp*C/G, rd, rh, rw].
 * Written as a gather (o = (i + pad - r*dil) / s when that divides exactly
 * and lands inside dy), so every dx element is owned by one thread. */
static xdnn_status dgrad_reference(op_ref_ctx *c)
{
    const ref_tensor *dy = c->in[0], *w = c->in[1];
    ref_tensor *dx = c->out[0];
    conv_geom g;
    if (!conv_ref_geom(c, dx->dims, w->dims, dx->rank, &g))
        return XDNN_ERR_INTERNAL;
    int64_t xd[5], wd[5], yd[5];
    conv_dims5(dx, xd);
    conv_dims5(w, wd);
    conv_dims5(dy, yd);
    const int64_t N = xd[0], C = xd[1], Cg = wd[1], Kg = wd[0] / op_attr_int(c->node, c->desc, "groups");
    const int64_t *s = g.stride, *dil = g.dilation, *pad = g.pad_lo;

#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t n = 0; n < N; n++) {
        for (int64_t ch = 0; ch < C; ch++) {
            const int64_t grp = ch / Cg, ci = ch % Cg;
            for (int64_t id = 0; id < xd[2]; id++)
                for (int64_t ih = 0; ih < xd[3]; ih++)
                    for (int64_t iw = 0; iw < xd[4]; iw++) {
                        double acc = 0;
                        for (int64_t kk = 0; kk < Kg; kk++) {
                            const int64_t k = grp * Kg + kk;
                            for (int64_t rd = 0; rd < wd[2]; rd++) {
                                int64_t td = id + pad[0] - rd * dil[0];
                                if (td < 0 || td % s[0] || td / s[0] >= yd[2])
                                    continue;
                                for (int64_t rh = 0; rh < wd[3]; rh++) {
                                    int64_t th = ih + pad[1] - rh * dil[1];
                                    if (th < 0 || th % s[1] || th / s[1] >= yd[3])
                                        continue;
                                    for (int64_t rw = 0; rw < wd[4]; rw++) {
                                        int64_t tw = iw + pad[2] - rw * dil[2];
                                        if (tw < 0 || tw % s[2] || tw / s[2] >= yd[4])
                                            continue;
                                        acc += dy->data[conv_at5(yd, n, k, td / s[0], th / s[1], tw / s[2])] *
                                               w->data[conv_at5(wd, k, ci, rd, rh, rw)];
                                    }
                                }
                            }
                        }
                        dx->data[conv_at5(xd, n, ch, id, ih, iw)] = acc;
                    }
        }
    }
    return XDNN_OK;
}

/* dw[k, c, rd, rh, rw] = sum over n, (od, oh, ow) of
 *     dy[n, k, od, oh, ow] * x[n, grp*C/G + c, od*sd - pad_d + rd*dd, ...]
 * with grp = k / (K/G); taps in the padding contribute nothing. */
static xdnn_status wgrad_reference(op_ref_ctx *c)
{
    const ref_tensor *dy = c->in[0], *x = c->in[1];
    ref_tensor *dw = c->out[0];
    conv_geom g;
    if (!conv_ref_geom(c, x->dims, dw->dims, x->rank, &g))
        return XDNN_ERR_INTERNAL;
    int64_t xd[5], wd[5], yd[5];
    conv_dims5(x, xd);
    conv_dims5(dw, wd);
    conv_dims5(dy, yd);
    const int64_t N = xd[0], K = wd[0], Cg = wd[1], Kg = K / op_attr_int(c->node, c->desc, "groups");
    const int64_t *s = g.stride, *dil = g.dilation, *pad = g.pad_lo;

#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t k = 0; k < K; k++) {
        for (int64_t ci = 0; ci < Cg; ci++) {
            const int64_t ch = (k / Kg) * Cg + ci;
            for (int64_t rd = 0; rd < wd[2]; rd++)
                for (int64_t rh = 0; rh < wd[3]; rh++)
                    for (int64_t rw = 0; rw < wd[4]; rw++) {
                        double acc = 0;
                        for (int64_t n = 0; n < N; n++) {
                            const double *dyk = dy->data + conv_at5(yd, n, k, 0, 0, 0);
                            const double *xc = x->data + conv_at5(xd, n, ch, 0, 0, 0);
                            for (int64_t od = 0; od < yd[2]; od++) {
                                int64_t id = od * s[0] - pad[0] + rd * dil[0];
                                if (id < 0 || id >= xd[2])
                                    continue;
                                for (int64_t oh = 0; oh < yd[3]; oh++) {
                                    int64_t ih = oh * s[1] - pad[1] + rh * dil[1];
                                    if (ih < 0 || ih >= xd[3])
                                        continue;
                                    const double *dyrow = dyk + (od * yd[3] + oh) * yd[4];
                                    const double *xrow = xc + (id * xd[3] + ih) * xd[4];
                                    for (int64_t ow = 0; ow < yd[4]; ow++) {
                                        int64_t iw = ow * s[2] - pad[2] + rw * dil[2];
                                        if (iw >= 0 && iw < xd[4])
                                            acc += dyrow[ow] * xrow[iw];
                                    }
                                }
                            }
                        }
                        dw->data[conv_at5(wd, k, ci, rd, rh, rw)] = acc;
                    }
        }
    }
    return XDNN_OK;
}

/* Same count as the forward conv: 2 * numel(dy) * (C/groups) * prod(window). */
static double dgrad_flops(const xgraph *g, const xnode *n)
{
    const xtensor *dy = &g->tensors[n->inputs[0].tensor];
    const xtensor *w = &g->tensors[n->inputs[1].tensor];
    return 2.0 * (double)dy->rnumel * (double)w->rnumel / (double)w->rdims[0];
}

static double wgrad_flops(const xgraph *g, const xnode *n)
{
    const xtensor *dy = &g->tensors[n->inputs[0].tensor];
    const xtensor *dw = &g->tensors[n->results[0]];
    return 2.0 * (double)dy->rnumel * (double)dw->rnumel / (double)dw->rdims[0];
}

const op_desc op_conv_dgrad_desc = {
    .name = "conv_dgrad",
    .summary = "gradient of conv with respect to x: dx [x_dims] from dy and w",
    .ports = dgrad_ports,
    .nports = 2,
    .nrequired = 2,
    .results = dgrad_results,
    .nresults = 1,
    .attrs = dgrad_attrs,
    .nattrs = (int)(sizeof dgrad_attrs / sizeof dgrad_attrs[0]),
    .infer = dgrad_infer,
    .reference = dgrad_reference,
    .flops = dgrad_flops,
};

const op_desc op_conv_wgrad_desc = {
    .name = "conv_wgrad",
    .summary = "gradient of conv with respect to w: dw [w_dims] from dy and x",
    .ports = wgrad_ports,
    .nports = 2,
    .nrequired = 2,
    .results = wgrad_results,
    .nresults = 1,
    .attrs = wgrad_attrs,
    .nattrs = (int)(sizeof wgrad_attrs / sizeof wgrad_attrs[0]),
    .infer = wgrad_infer,
    .reference = wgrad_reference,
    .flops = wgrad_flops,
};
