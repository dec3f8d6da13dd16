/* eng_conv.c — the convolution engines.
 *
 * conv_direct: conv, conv_dgrad and conv_wgrad by the direct kernels of
 *   kernels/conv_direct.cu; every configuration the ops allow (1-3 spatial
 *   dims, stride, asymmetric / "same" pad, dilation, groups incl. depthwise,
 *   any strides, any f32/f16/bf16 mix).  The fallback: no conv needs the CPU.
 * conv_igemm: the forward conv as an implicit GEMM on tensor cores
 *   (kernels/conv_igemm.cu) for 1-, 2- and 3-D channels-last x with KRSC w,
 *   groups 1: f16/bf16 through mma m16n8k16, f32 through tf32 m16n8k8 when
 *   the graph allows tf32.  A conv_dgrad runs through the same kernel once
 *   per stride phase of dx (gpu_conv_dgrad_phases): the conv of dy with the
 *   phase's taps flipped and K/C-transposed (packed into the engine's
 *   workspace by a small kernel first), written to dx's sub-lattice; phases
 *   no tap reaches are zero-filled.  No scattered writes, no atomics.
 *   A forward conv it cannot read as is (C = 3 stems, odd C, NCHW) runs on
 *   channels-last copies of x and w with C padded to the 16-byte chunk
 *   (gpu_conv_igemm_packed), the copies' cost counted in its estimate.
 *   gpu_conv_igemm_check (conv_analyze.c) lists the rules.
 * When the output tiles alone leave SMs idle (ResNet's 7x7 and 14x14
 * layers: M = N*P*Q is small, C*R*S long), the reduction is split across
 * CTAs (split-K, gpu_conv_igemm_splits) into f32 partials in the workspace,
 * summed in split order by a second kernel that also runs the epilogue:
 * deterministic, no atomics.
 * conv_wgrad_mma (eng_conv_grad.c): the weight gradient on tensor cores.
 * Both run a lone conv node, or a forward conv with the epilogue chain the
 * partitioner fused to it (bias, activation, residual, scale, cast:
 * conv_epi.h), applied in the kernel's store. */
#include "gpu/conv_analyze.h"
#include "gpu/conv_dgrad.h"
#include "gpu/conv_epi.h"
#include "gpu/conv_pack.h"
#include "gpu/engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct conv_priv {
    gconv_problem cp;
    gconv_dgrad dg;     /* conv_igemm on a conv_dgrad: its stride phases (conv_dgrad.h) */
    gconv_packed pk;    /* conv_igemm on copies of x and w (gpu_conv_igemm_packed) */
    int splits;         /* split-K of the forward conv */
    size_t split_off, ws_total;   /* the partials after the copies / phase weights; the whole workspace */
    char detail[320];
} conv_priv;

static bool direct_supports(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    gconv_problem cp;
    return gpu_conv_analyze(pl, p, &cp, why, len);
}

/* The direct kernels reach a few TFLOP/s on large convs (no data reuse
 * beyond registers and L1); small ones are launch-bound. */
static double direct_cost(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    return gpu_roofline_us(p, 4.0);
}

/* The tiled wgrad (groups 1) keeps per-slice f32 partials. */
static size_t direct_workspace(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    gconv_problem cp;
    char why[256];
    if (!gpu_conv_analyze(pl, p, &cp, why, sizeof why) || cp.dir != GCONV_WGRAD || cp.kp.G != 1)
        return 0;
    return gpu_conv_wgrad_ws_bytes(&cp.kp);
}

static bool igemm_supports(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    gconv_problem cp;
    if (!gpu_conv_analyze(pl, p, &cp, why, len))
        return false;
    if (dev->cc_major < 8) {
        snprintf(why, len, "conv_igemm needs sm_80 or newer (mma.sync, cp.async), device is sm_%d%d", dev->cc_major,
                 dev->cc_minor);
        return false;
    }
    return gpu_conv_igemm_check(pl->g, &cp, pl->g->tf32, why, len);
}

static double igemm_cost(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    gconv_problem cp;
    char why[256];
    if (!gpu_conv_analyze(pl, p, &cp, why, sizeof why))
        return 1e30;
    /* a strided dgrad launches a pack and a GEMM (or a zero fill) per phase: ~2 us each */
    const double phases = cp.dir == GCONV_DGRAD ? (double)(cp.kp.stride[0] * cp.kp.stride[1] * cp.kp.stride[2]) : 0;
    /* tf32 (f32 x): 60 TFLOP/s, as measured (session 11, H100, r50's f32 NCHW forwards at N = 32 with tf32,
     * the packed copies included: 37-52 on the 3x3 layers, 18-24 on the 1x1 and the stem); at 150 the planner
     * kept conv_f32_gemm off layers it runs 1.6-4.4x faster (14x14, 7x7, the 1x1 stride-2 projection) */
    double us = gpu_roofline_us(p, cp.kp.dt_x == KDT_F32 ? 60.0 : 300.0) + 2.0 * (phases > 1 ? phases : 0);
    const double floor = gpu_conv_1x1_floor_us(&cp); /* the 1x1 layers as measured (conv_analyze.h) */
    if (floor > 0.0)
        us = (floor > us ? floor : us) + 0.01 * us;
    /* packed copies: the padded GEMM and the copies (gpu_conv_pack_cost_us) */
    gconv_packed pk;
    if (gpu_conv_igemm_packed(&cp, pl->g->tf32, &pk.k, &pk.xbytes, &pk.wbytes))
        us = gpu_conv_pack_cost_us(&cp.kp, &pk, us);
    return us;
}

static size_t no_workspace(const gplan *pl, const gpart *p, const gpu_device *dev) { return 0; }

/* conv_igemm's plan: the dgrad phases, the packed copies, the split-K of
 * every launch and the workspace: [packed copies | phase weights][partials],
 * the partials shared by the phases (they run in turn on one stream).
 * False with the reason. */
static bool igemm_prepare(const gplan *pl, const gpart *p, int sms, conv_priv *cv, char *why, size_t len)
{
    if (!gpu_conv_analyze(pl, p, &cv->cp, why, len) || !gpu_conv_igemm_check(pl->g, &cv->cp, pl->g->tf32, why, len))
        return false;
    if (cv->cp.dir == GCONV_DGRAD) {
        if (!gpu_conv_dgrad_plan(&cv->cp, sms, gpu_conv_igemm_splits, &cv->dg, why, len))
            return false;
        cv->split_off = cv->dg.split_off;
        cv->ws_total = cv->dg.ws_total;
        return true;
    }
    size_t base = 0;
    cv->pk.on = gpu_conv_igemm_packed(&cv->cp, pl->g->tf32, &cv->pk.k, &cv->pk.xbytes, &cv->pk.wbytes);
    if (cv->pk.on)
        base = cv->pk.xbytes + cv->pk.wbytes;
    const kconv_params *f = cv->pk.on ? &cv->pk.k : &cv->cp.kp;
    cv->splits = gpu_conv_igemm_splits(f, sms);
    const size_t part = gpu_conv_igemm_split_ws_bytes(f, cv->splits);
    cv->split_off = (base + 255) / 256 * 256;
    cv->ws_total = part ? cv->split_off + part : cv->split_off;
    return true;
}

static size_t igemm_workspace(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    conv_priv *cv = calloc(1, sizeof *cv);
    char why[256];
    size_t bytes = cv && igemm_prepare(pl, p, dev->sm_count, cv, why, sizeof why) ? cv->ws_total : 0;
    free(cv);
    return bytes;
}

static xdnn_status conv_build(gpu_ctx *c, gpart *p, bool igemm, xdnn_diags_t *d)
{
    conv_priv *cv = calloc(1, sizeof *cv);
    if (!cv)
        return XDNN_ERR_NOMEM;
    p->priv = cv;
    char why[512];
    const char *eng = igemm ? "conv_igemm" : "conv_direct";
    if (igemm ? !igemm_prepare(c->plan, p, c->dev.sm_count, cv, why, sizeof why)
              : !gpu_conv_analyze(c->plan, p, &cv->cp, why, sizeof why)) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), "%s: %s: %s", eng, p->name, why);
        return XDNN_ERR_UNSUPPORTED;
    }
    if (igemm && cv->ws_total > p->ws_bytes) { /* a workspace planned for another SM count: no split-K */
        cv->splits = 1;
        gpu_conv_dgrad_unsplit(&cv->dg);
    }
    static const char *const dirs[] = {"fwd", "dgrad", "wgrad"};
    const kconv_params *k = &cv->cp.kp;
    if (igemm) {
        char dg[96] = "";
        if (cv->cp.dir == GCONV_DGRAD) {
            k = &cv->dg.ph[0].f;
            snprintf(dg, sizeof dg, "dgrad as %d flipped-weight phase conv(s) (%d zero), ", cv->dg.nph,
                     gpu_conv_dgrad_empty(&cv->dg));
        }
        if (cv->pk.on) {
            snprintf(dg, sizeof dg, "x and w copied channels-last with C %lld -> %lld, ", (long long)k->C,
                     (long long)cv->pk.k.C);
            k = &cv->pk.k;
        }
        bool f32 = k->dt_x == KDT_F32;
        snprintf(cv->detail, sizeof cv->detail, "%simplicit GEMM M=%lld N=%lld K=%lld, tile %dx%dx%d, %d stages, %s",
                 dg, (long long)(k->N * k->out[0] * k->out[1] * k->out[2]), (long long)k->K,
                 (long long)(k->C * k->win[0] * k->win[1] * k->win[2]), KIG_BM,
                 k->K <= KIG_BN_SMALL ? KIG_BN_SMALL : KIG_BN, f32 ? KIG_BK32 : KIG_BK16, KIG_STAGES,
                 f32 ? "tf32 mma m16n8k8" : "mma m16n8k16");
        int most = cv->cp.dir == GCONV_DGRAD ? 1 : cv->splits;
        for (int i = 0; i < (cv->cp.dir == GCONV_DGRAD ? cv->dg.nph : 0); i++)
            most = cv->dg.splits[i] > most ? cv->dg.splits[i] : most;
        if (most > 1) {
            size_t n = strlen(cv->detail);
            snprintf(cv->detail + n, sizeof cv->detail - n, ", split-K %d (ordered f32 reduction)", most);
        }
    } else {
        bool tiled = cv->cp.dir == GCONV_WGRAD && k->G == 1;
        snprintf(cv->detail, sizeof cv->detail, "direct %s%s, %d-D, groups %lld", dirs[cv->cp.dir],
                 tiled ? " (tiled, split reduction)" : "", cv->cp.nsp, (long long)k->G);
        if (tiled) {
            size_t n = strlen(cv->detail);
            snprintf(cv->detail + n, sizeof cv->detail - n, ", %d splits", gpu_conv_wgrad_splits(k));
        }
    }
    if (cv->cp.epi.n) {
        char steps[128];
        gconv_epi_describe(&cv->cp.epi, steps, sizeof steps);
        size_t n = strlen(cv->detail);
        snprintf(cv->detail + n, sizeof cv->detail - n, ", fused epilogue %s", steps);
    }
    return XDNN_OK;
}

static xdnn_status direct_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d) { return conv_build(c, p, false, d); }
static xdnn_status igemm_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d) { return conv_build(c, p, true, d); }

static xdnn_status direct_execute(gpu_ctx *c, gpart *p, cudaStream_t s, xdnn_diags_t *d)
{
    const conv_priv *cv = p->priv;
    const gconv_problem *cp = &cv->cp;
    void *x = c->dptr[cp->x], *w = c->dptr[cp->w], *y = c->dptr[cp->y];
    int e = 0;
    switch (cp->dir) {
    case GCONV_FWD: {
        kconv_epi epi;
        gpu_conv_epi_bind(cp, c->dptr, &epi);
        e = kconv_direct_fwd(&cp->kp, x, w, y, &epi, s);
        break;
    }
    case GCONV_DGRAD: {
        kconv_epi epi; /* a fused relu_bwd mask at dx's coordinates */
        gpu_conv_epi_bind(cp, c->dptr, &epi);
        e = kconv_direct_dgrad(&cp->kp, x, w, y, &epi, s);
        break;
    }
    case GCONV_WGRAD:
        e = cp->kp.G == 1 ? kconv_tiled_wgrad(&cp->kp, x, w, y, (float *)(void *)(c->ws + p->ws_offset),
                                              gpu_conv_wgrad_splits(&cp->kp), s)
                          : kconv_direct_wgrad(&cp->kp, x, w, y, s);
        break;
    }
    return gpu_check_cuda((cudaError_t)e, "kconv_direct launch", __FILE__, __LINE__, d);
}

/* One dgrad phase's GEMM on conv_igemm's kernel (gpu_conv_dgrad_run). */
static int igemm_phase_gemm(const void *ctx, const gconv_dgrad *dg, int i, const void *dy, const void *wt,
                            void *dx_phase, const kconv_epi *epi, float *part, void *stream)
{
    (void)ctx;
    return kconv_igemm_fwd(&dg->ph[i].f, dy, wt, dx_phase, epi, part, dg->splits[i], stream);
}

static xdnn_status igemm_execute(gpu_ctx *c, gpart *p, cudaStream_t s, xdnn_diags_t *d)
{
    const conv_priv *cv = p->priv;
    const gconv_problem *cp = &cv->cp;
    float *part = (float *)(void *)(c->ws + p->ws_offset + cv->split_off);
    kconv_epi epi;
    gpu_conv_epi_bind(cp, c->dptr, &epi);
    if (cp->dir == GCONV_DGRAD) {
        int e = gpu_conv_dgrad_run(cp, &cv->dg, c->dptr[cp->y], c->dptr[cp->w], c->dptr[cp->x], &epi,
                                   c->ws + p->ws_offset, igemm_phase_gemm, NULL, s);
        return gpu_check_cuda((cudaError_t)e, "kconv_igemm dgrad launch", __FILE__, __LINE__, d);
    }
    if (cv->pk.on) {
        char *xp = c->ws + p->ws_offset, *wp = xp + cv->pk.xbytes;
        int e = gpu_conv_pack_run(&cp->kp, &cv->pk, c->dptr[cp->x], c->dptr[cp->w], xp, s);
        if (e == 0)
            e = kconv_igemm_fwd(&cv->pk.k, xp, wp, c->dptr[cp->y], &epi, part, cv->splits, s);
        return gpu_check_cuda((cudaError_t)e, "kconv_igemm_fwd (packed) launch", __FILE__, __LINE__, d);
    }
    int e = kconv_igemm_fwd(&cp->kp, c->dptr[cp->x], c->dptr[cp->w], c->dptr[cp->y], &epi, part, cv->splits, s);
    return gpu_check_cuda((cudaError_t)e, "kconv_igemm_fwd launch", __FILE__, __LINE__, d);
}

static void conv_release(gpart *p)
{
    free(p->priv);
    p->priv = NULL;
}

static const char *conv_detail(const gpart *p)
{
    const conv_priv *cv = p->priv;
    return cv ? cv->detail : "";
}

const gpu_engine gpu_engine_conv_direct = {
    "conv_direct", "direct conv / conv_dgrad / conv_wgrad: 1-3-D, any stride/pad/dilation/groups/layout, f32/f16/bf16",
    direct_supports, direct_cost, direct_workspace, direct_build, direct_execute, conv_release, conv_detail,
};

const gpu_engine gpu_engine_conv_igemm = {
    "conv_igemm", "implicit-GEMM conv and dgrad (stride phases) on tensor cores: 1-3-D channels-last, KRSC w (fwd: any C and layout via packed copies), groups 1, f16/bf16/tf32",
    igemm_supports, igemm_cost, igemm_workspace, igemm_build, igemm_execute, conv_release, conv_detail,
};
