/* conv.c — forward convolution: y = conv(x, w), 1 to 3 spatial dims.
 *
 * Logical layouts: x [N, C, spatial...], w [K, C/groups, window...],
 * y [N, K, out...].  Cross-correlation (the filter is not flipped), which is
 * what cuDNN runs by default (math_mode=CROSS_CORRELATION).  Output size,
 * pads and "same" follow conv_util.h.
 */
#include "conv_util.h"

static const char *const conv_ports[] = {"x", "w"};
static const char *const conv_results[] = {"y"};

static const attr_spec conv_attrs[] = {CONV_WINDOW_ATTRS};

static xdnn_status conv_infer(op_infer_ctx *c)
{
    const tinfo *x = c->in[0], *w = c->in[1];
    if (!conv_check_ranks(c, "x", x, "w", w))
        return XDNN_ERR_SEMANTIC;
    conv_geom g;
    if (!conv_check(c, "x", x->dims, "w", w->dims, x->rank, &g, c->out[0].dims))
        return XDNN_ERR_SEMANTIC;
    c->out[0].rank = x->rank;
    c->out[0].dtype = x->dtype;
    return XDNN_OK;
}

/* y[n, k, od, oh, ow] = sum over c < C/G, (rd, rh, rw) of
 *     x[n, grp*C/G + c, od*sd - pad_d + rd*dd, oh*sh - pad_h + rh*dh, ow*sw - pad_w + rw*dw]
 *   * w[k, c, rd, rh, rw]
 * with grp = k / (K/G); taps outside x read zero padding.  Tensors are viewed
 * as [N, C, D, H, W] (missing leading spatial dims are 1). */
void conv_fwd_sums(const ref_tensor *x, const ref_tensor *w, const conv_geom *g, int64_t groups, ref_tensor *y)
{
    int64_t xd[5], wd[5], yd[5];
    conv_dims5(x, xd);
    conv_dims5(w, wd);
    conv_dims5(y, yd);
    const int64_t N = yd[0], K = yd[1], G = groups;
    const int64_t Cg = wd[1], Kg = K / G;
    const int64_t *s = g->stride, *dil = g->dilation, *pad = g->pad_lo;

#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t n = 0; n < N; n++) {
        for (int64_t k = 0; k < K; k++) {
            const int64_t grp = k / Kg;
            for (int64_t od = 0; od < yd[2]; od++)
                for (int64_t oh = 0; oh < yd[3]; oh++)
                    for (int64_t ow = 0; ow < yd[4]; ow++) {
                        double acc = 0;
                        for (int64_t ci = 0; ci < Cg; ci++) {
                            /* plane and row pointers hoisted (2x faster; same terms, same order) */
                            const double *xc = x->data + conv_at5(xd, n, grp * Cg + ci, 0, 0, 0);
                            const double *wc = w->data + conv_at5(wd, k, ci, 0, 0, 0);
                            for (int64_t rd = 0; rd < wd[2]; rd++) {
                                int64_t id = od * s[0] - pad[0] + rd * dil[0];
                                if (id < 0 || id >= xd[2])
                                    continue;
                                for (int64_t rh = 0; rh < wd[3]; rh++) {
                                    int64_t ih = oh * s[1] - pad[1] + rh * dil[1];
                                    if (ih < 0 || ih >= xd[3])
                                        continue;
                                    const double *xrow = xc + (id * xd[3] + ih) * xd[4];
                                    const double *wrow = wc + (rd * wd[3] + rh) * wd[4];
                                    for (int64_t rw = 0; rw < wd[4]; rw++) {
                                        int64_t iw = ow * s[2] - pad[2] + rw * dil[2];
                                        if (iw >= 0 && iw < xd[4])
                                            acc += xrow[iw] * wrow[rw];
                                    }
                                }
                            }
                        }
                        y->data[conv_at5(yd, n, k, od, oh, ow)] = acc;
                    }
        }
    }
}

static xdnn_status conv_reference(op_ref_ctx *c)
{
    conv_geom g;
    if (!conv_ref_geom(c, c->in[0]->dims, c->in[1]->dims, c->in[0]->rank, &g))
        return XDNN_ERR_INTERNAL;
    conv_fwd_sums(c->in[0], c->in[1], &g, op_attr_int(c->node, c->desc, "groups"), c->out[0]);
    return XDNN_OK;
}

/* 2 * N * K * prod(out) * (C/groups) * prod(window) = 2 * numel(y) * numel(w) / K:
 * one multiply and one add per tap, padding taps included (as cuDNN counts). */
double conv_fwd_flops(const xgraph *g, const xnode *n)
{
    const xtensor *y = &g->tensors[n->results[0]];
    const xtensor *w = &g->tensors[n->inputs[1].tensor];
    return 2.0 * (double)y->rnumel * (double)w->rnumel / (double)w->rdims[0];
}

const op_desc op_conv_desc = {
    .name = "conv",
    .summary = "convolution (cross-correlation) of x [N, C, spatial...] with w [K, C/groups, window...]",
    .ports = conv_ports,
    .nports = 2,
    .nrequired = 2,
    .results = conv_results,
    .nresults = 1,
    .attrs = conv_attrs,
    .nattrs = (int)(sizeof conv_attrs / sizeof conv_attrs[0]),
    .infer = conv_infer,
    .reference = conv_reference,
    .flops = conv_fwd_flops,
};
