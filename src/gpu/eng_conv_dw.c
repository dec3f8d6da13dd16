/* eng_conv_dw.c — conv_dw: depthwise convolution (groups == C == K) forward
 * and data gradient, channels-last, by the bandwidth-bound kernel of
 * kernels/conv_dw.cu, and the weight gradient by kernels/conv_dw_wgrad.cu
 * (per-block f32 partials in the workspace, summed in a fixed order: no
 * atomics).  The forward runs the fused epilogue the partitioner gave the
 * conv (bias, activation, residual, scale).  gpu_conv_dw_check
 * (conv_analyze.c) lists the rules. */
#include "gpu/conv_analyze.h"
#include "gpu/conv_epi.h"
#include "gpu/engine.h"
#include "gpu/kern_conv_dw_tile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct dw_priv {
    gconv_problem cp;
    bool tile; /* the shape fits kconv_dw_tile (v2) and XDNN_CONV_DW_V2 is not 0 */
    char detail[224];
} dw_priv;

/* conv_dw v2 (kernels/conv_dw_tile.cu: a 2-D output tile a thread, each
 * input row loaded once) is the default for the shapes it takes since
 * session 13 (0.53-0.90x cuDNN's time on the 3x3 MobileNet rows, v1 0.7-1.0x);
 * XDNN_CONV_DW_V2=0 keeps v1 for the A/B. */
static bool dw_v2_on(void)
{
    const char *e = getenv("XDNN_CONV_DW_V2");
    return !(e && strcmp(e, "0") == 0);
}

static bool dw_supports(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    gconv_problem cp;
    return gpu_conv_analyze(pl, p, &cp, why, len) && gpu_conv_dw_check(pl->g, &cp, why, len);
}

/* Memory-bound: the bytes at the nominal 3 TB/s of gpu_roofline_us (the
 * halo re-reads hit L2), or the multiply-adds at ~25 TFLOP/s on the CUDA
 * cores for large windows; one launch (2.5 us: below conv_direct's 3, which
 * does the same work slower, so ties go to this engine). */
static double dw_cost(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    const double mem = p->bytes / 3.0e6, math = p->flops / 25e6;
    gconv_problem cp;
    char why[256];
    /* the wgrad's second launch sums the partials */
    const bool wg = gpu_conv_analyze(pl, p, &cp, why, sizeof why) && cp.dir == GCONV_WGRAD;
    return (mem > math ? mem : math) + (wg ? 5.0 : 2.5);
}

static size_t dw_workspace(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    gconv_problem cp;
    char why[256];
    if (!gpu_conv_analyze(pl, p, &cp, why, sizeof why) || cp.dir != GCONV_WGRAD)
        return 0;
    return kconv_dw_wgrad_ws_bytes(&cp.kp, dev->sm_count);
}

/* ", fused epilogue <steps>" after the n characters of dv->detail.  Not
 * inlined: gcc would read n off a caller's format and warn that the steps
 * may be truncated, which the bounded snprintf already handles. */
__attribute__((noinline)) static void dw_append_epi(dw_priv *dv, int n)
{
    if (!dv->cp.epi.n || n <= 0 || (size_t)n >= sizeof dv->detail)
        return;
    char steps[128];
    gconv_epi_describe(&dv->cp.epi, steps, sizeof steps);
    snprintf(dv->detail + n, sizeof dv->detail - (size_t)n, ", fused epilogue %s", steps);
}

static xdnn_status dw_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d)
{
    dw_priv *dv = calloc(1, sizeof *dv);
    if (!dv)
        return XDNN_ERR_NOMEM;
    p->priv = dv;
    char why[512];
    if (!gpu_conv_analyze(c->plan, p, &dv->cp, why, sizeof why) || !gpu_conv_dw_check(c->plan->g, &dv->cp, why, sizeof why)) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), "conv_dw: %s: %s", p->name, why);
        return XDNN_ERR_UNSUPPORTED;
    }
    const kconv_params *k = &dv->cp.kp;
    if (dv->cp.dir == GCONV_WGRAD) {
        const bool v2 = k->dil[2] == 1 && (k->win[2] == 3 || k->win[2] == 5 || k->win[2] == 7) && k->stride[2] <= 2;
        snprintf(dv->detail, sizeof dv->detail,
                 "depthwise wgrad, C=%lld, %lld taps, %s, %s, block partials summed in order",
                 (long long)k->C, (long long)(k->win[0] * k->win[1] * k->win[2]),
                 k->C % 4 == 0 ? "4-channel vectors" : "scalar channels",
                 v2 ? "strips along W with a register window" : "one tap per thread");
        return XDNN_OK;
    }
    const bool dg = dv->cp.dir == GCONV_DGRAD;
    if (dw_v2_on() && kconv_dw_tile_fits(k, dg)) {
        dv->tile = true;
        const bool th4 = k->stride[2] == 1 && (dg ? k->in[1] : k->out[1]) >= 28;
        int n = snprintf(dv->detail, sizeof dv->detail,
                         "depthwise %s, C=%lld, %lldx%lld s%lld, v2 2-D tile %dx2 outputs x 8 channels a thread, "
                         "rows loaded once",
                         dg ? (k->stride[2] == 2 ? "dgrad (stride phases)" : "dgrad (flipped taps)") : "fwd", (long long)k->C, (long long)k->win[1],
                         (long long)k->win[2], (long long)k->stride[2], th4 ? 4 : 2);
        dw_append_epi(dv, n);
        return XDNN_OK;
    }
    bool strided = k->stride[0] * k->stride[1] * k->stride[2] > 1;
    const int vec = k->dt_x == KDT_F32 ? 4 : 8;
    const bool w_strip = !(dg && strided) && k->dil[2] == 1 && (k->win[2] == 3 || k->win[2] == 5) &&
                         k->stride[2] <= 2;
    int n = snprintf(dv->detail, sizeof dv->detail, "depthwise %s%s, C=%lld, %lld taps, %s, %s",
                     dg ? "dgrad" : "fwd", dg ? (strided ? " (stride gather)" : " (flipped taps)") : "",
                     (long long)k->C, (long long)(k->win[0] * k->win[1] * k->win[2]),
                     k->C % vec == 0 ? "16-byte channel vectors" : "scalar channels",
                     w_strip ? "register window along W" : "one load per tap");
    dw_append_epi(dv, n);
    return XDNN_OK;
}

static xdnn_status dw_execute(gpu_ctx *c, gpart *p, cudaStream_t s, xdnn_diags_t *d)
{
    const dw_priv *dv = p->priv;
    const gconv_problem *cp = &dv->cp;
    if (cp->dir == GCONV_WGRAD) {
        int e = kconv_dw_wgrad(&cp->kp, c->dptr[cp->x], c->dptr[cp->w], c->dptr[cp->y],
                               (float *)(void *)(c->ws + p->ws_offset), p->ws_bytes, c->dev.sm_count, s);
        return gpu_check_cuda((cudaError_t)e, "kconv_dw_wgrad launch", __FILE__, __LINE__, d);
    }
    kconv_epi epi;
    gpu_conv_epi_bind(cp, c->dptr, &epi);
    const bool dg = cp->dir == GCONV_DGRAD;
    int e = (dv->tile ? kconv_dw_tile : kconv_dw)(&cp->kp, dg, c->dptr[dg ? cp->y : cp->x], c->dptr[cp->w],
                                                  c->dptr[dg ? cp->x : cp->y], &epi, s);
    return gpu_check_cuda((cudaError_t)e, "kconv_dw launch", __FILE__, __LINE__, d);
}

static void dw_release(gpart *p)
{
    free(p->priv);
    p->priv = NULL;
}

static const char *dw_detail(const gpart *p)
{
    const dw_priv *dv = p->priv;
    return dv ? dv->detail : "";
}

const gpu_engine gpu_engine_conv_dw = {
    "conv_dw", "depthwise conv, conv_dgrad and conv_wgrad (groups == C == K): 1-3-D channels-last, f32/f16/bf16, bandwidth-bound",
    dw_supports, dw_cost, dw_workspace, dw_build, dw_execute, dw_release, dw_detail,
};
