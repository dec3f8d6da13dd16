/* eng_conv_grad.c — conv_wgrad_mma: the weight gradient on tensor cores
 * (kernels/conv_wgrad_mma.cu).
 *
 * dW = dY^T x im2col(X) per group, 1-3-D, any stride / dilation / pad /
 * groups, dy and x both f16 or both bf16 (dw any type, any layout).  The
 * N x out reduction is split across CTAs into f32 partials in the workspace
 * and summed in order by a second kernel: deterministic, no atomics.
 * Channels-last tensors with K/G and C/G multiples of 8 load 16-byte
 * chunks by cp.async; anything else (NCHW, odd channel counts) gathers
 * element by element into the same tiles.  gpu_conv_wgrad_mma_check
 * (conv_analyze.c) lists the rules. */
#include "gpu/conv_analyze.h"
#include "gpu/engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct wgrad_priv {
    gconv_problem cp;
    bool vec;
    int splits;
    char detail[192];
} wgrad_priv;

static bool wgrad_supports(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    gconv_problem cp;
    bool vec;
    if (!gpu_conv_analyze(pl, p, &cp, why, len))
        return false;
    if (dev->cc_major < 8) {
        snprintf(why, len, "conv_wgrad_mma needs sm_80 or newer (mma.sync, cp.async), device is sm_%d%d",
                 dev->cc_major, dev->cc_minor);
        return false;
    }
    return gpu_conv_wgrad_mma_check(pl->g, &cp, &vec, why, len);
}

/* The GEMM as the tiles run it: K/G padded to 64 or 128, taps*C/G to 128,
 * per group, at ~250 TFLOP/s with 16-byte loads and ~40 with the element
 * gather, plus the partials written and read once at ~2.5 TB/s.  Tiny
 * channel counts (depthwise) pad most of the tile away, so the direct
 * engine wins there.  With 16-byte loads a CTA's own m-chunk bounds it from
 * below: ~0.8 TFLOP/s a CTA (2 an SM) in waves of 2 x SMs, which the H100
 * showed on ResNet-50's 3x3 wgrads at N = 256 (session 9: 0.40 ms on 64@56x56,
 * 260 CTAs of 253 MFLOP; 0.54 ms on 512@7x7, 144 CTAs of 411 MFLOP, where
 * the rate alone said 0.25).  Only where the window has several taps: the
 * 1x1 layers' choices between this engine and conv_im2col_gemm were made on
 * session 8's measurements with the rate alone. */
static double wgrad_cost(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    gconv_problem cp;
    char why[256];
    bool vec = false;
    if (!gpu_conv_analyze(pl, p, &cp, why, sizeof why) || !gpu_conv_wgrad_mma_check(pl->g, &cp, &vec, why, sizeof why))
        return 1e30;
    const kconv_params *k = &cp.kp;
    const double Kg = (double)(k->K / k->G), J = (double)(k->C / k->G * k->win[0] * k->win[1] * k->win[2]);
    const double bm = Kg <= 64 ? 64 : 128;
    const double kp = bm * (double)(int64_t)((Kg + bm - 1) / bm), jp = 128.0 * (double)(int64_t)((J + 127) / 128);
    const double M = (double)(k->N * k->out[0] * k->out[1] * k->out[2]);
    const double flops = 2.0 * (double)k->G * kp * jp * M;
    const double ws = (double)gpu_conv_wgrad_mma_ws_bytes(k, dev->sm_count) * 2.0;
    double math = flops / ((vec ? 250.0 : 40.0) * 1e6);
    const double mem = p->bytes / 3.0e6;
    if (vec && k->win[0] * k->win[1] * k->win[2] > 1) {
        const int64_t splits = gpu_conv_wgrad_mma_splits(k, dev->sm_count), sms = dev->sm_count > 0 ? dev->sm_count : 132;
        const double ctas = (double)k->G * (kp / bm) * (jp / 128.0) * (double)splits;
        const double chunk = (double)(int64_t)(((int64_t)M + splits - 1) / splits);
        const double waves = (double)(int64_t)(((int64_t)ctas + 2 * sms - 1) / (2 * sms));
        const double cta_us = waves * 2.0 * bm * 128.0 * chunk / 0.8e6;
        if (cta_us > math)
            math = cta_us;
    }
    return (math > mem ? math : mem) + ws / 2.5e6 + 5.0;
}

static size_t wgrad_workspace(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    gconv_problem cp;
    char why[256];
    if (!gpu_conv_analyze(pl, p, &cp, why, sizeof why) || cp.dir != GCONV_WGRAD)
        return 0;
    return gpu_conv_wgrad_mma_ws_bytes(&cp.kp, dev->sm_count);
}

static xdnn_status wgrad_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d)
{
    wgrad_priv *wv = calloc(1, sizeof *wv);
    if (!wv)
        return XDNN_ERR_NOMEM;
    p->priv = wv;
    char why[512];
    if (!gpu_conv_analyze(c->plan, p, &wv->cp, why, sizeof why) ||
        !gpu_conv_wgrad_mma_check(c->plan->g, &wv->cp, &wv->vec, why, sizeof why)) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), "conv_wgrad_mma: %s: %s", p->name, why);
        return XDNN_ERR_UNSUPPORTED;
    }
    const kconv_params *k = &wv->cp.kp;
    wv->splits = gpu_conv_wgrad_mma_splits(k, c->dev.sm_count);
    snprintf(wv->detail, sizeof wv->detail,
             "wgrad implicit GEMM %lldx%lldx%lld x %lld group(s), tile %dx128x32, %d m-splits, %s loads, mma m16n8k16",
             (long long)(k->K / k->G), (long long)(k->C / k->G * k->win[0] * k->win[1] * k->win[2]),
             (long long)(k->N * k->out[0] * k->out[1] * k->out[2]), (long long)k->G, k->K / k->G <= 64 ? 64 : 128,
             wv->splits, wv->vec ? "16-byte cp.async" : "element");
    return XDNN_OK;
}

static xdnn_status wgrad_execute(gpu_ctx *c, gpart *p, cudaStream_t s, xdnn_diags_t *d)
{
    const wgrad_priv *wv = p->priv;
    const gconv_problem *cp = &wv->cp;
    int e = kconv_wgrad_mma(&cp->kp, c->dptr[cp->x], c->dptr[cp->w], c->dptr[cp->y],
                            (float *)(void *)(c->ws + p->ws_offset), wv->splits, wv->vec, s);
    return gpu_check_cuda((cudaError_t)e, "kconv_wgrad_mma launch", __FILE__, __LINE__, d);
}

static void wgrad_release(gpart *p)
{
    free(p->priv);
    p->priv = NULL;
}

static const char *wgrad_detail(const gpart *p)
{
    const wgrad_priv *wv = p->priv;
    return wv ? wv->detail : "";
}

const gpu_engine gpu_engine_conv_wgrad_mma = {
    "conv_wgrad_mma",
    "conv_wgrad as an implicit GEMM on tensor cores: 1-3-D, any stride/pad/dilation/groups/layout, f16/bf16, "
    "deterministic split reduction",
    wgrad_supports, wgrad_cost, wgrad_workspace, wgrad_build, wgrad_execute, wgrad_release, wgrad_detail,
};
