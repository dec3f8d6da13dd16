/* eng_conv_wgrad_wgmma.c — conv_wgrad_wgmma: the weight gradient as an
 * implicit GEMM on Hopper tensor cores (kernels/conv_wgrad_wgmma_sm90a.cu:
 * dW[K, R*S*C] = dY^T X over the N*P*Q pixels, both operands loaded
 * reduction-major into the 128-byte swizzle by a producer warpgroup, by TMA
 * (x in im2col mode) where the maps express them, else gathered with
 * cp.async, and read MN-major by wgmma in two consumer warpgroups).  1-/2-D,
 * groups 1, channels-last f16/bf16 with C and K multiples of 8, any R x S,
 * stride, dilation and padding; dw any type and layout.  The reduction is
 * split across CTAs into f32 partials (the workspace) that a second kernel
 * sums in split order: deterministic, no atomics.  3-D (session 11) on the
 * gather (the im2col map is 4-d); C % 8 == 4 (the 3-D stem's C = 4) as
 * C + 4 channels, the pad zero-filled in the gather and dropped by the sum.
 * conv_wgrad_mma (sm_80, mma.sync) keeps what this engine refuses: other
 * devices, groups, NCHW, odd channel counts. */
#include "gpu/conv_wgrad_wgmma.h"
#include "gpu/engine.h"
#include "gpu/kern_conv_wgrad_wgmma.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ENG "conv_wgrad_wgmma"

static const char *dt_name(int dt) { return dt == KDT_F32 ? "f32" : dt == KDT_F16 ? "f16" : "bf16"; }

/* the GEMM's channels: C rounded up to 8 (C % 8 == 4: the kernel zero-fills the pad) */
static int64_t gwx_cg(const kconv_params *k) { return (k->C + 7) / 8 * 8; }

static int64_t span(const gtensor *t)
{
    int64_t s = 1;
    for (int i = 0; i < t->rank; i++)
        s += (t->dims[i] - 1) * t->strides[i];
    return s;
}

bool gpu_conv_wgrad_wgmma_check(const ggraph *g, const gconv_problem *cp, const gpu_device *dev, char *why,
                                size_t len)
{
    const kconv_params *k = &cp->kp;
    if (dev->cc_major != 9 || dev->cc_minor != 0)
        GPU_REFUSE(ENG " needs compute capability 9.0 (sm_90a wgmma), device is sm_%d%d", dev->cc_major,
                   dev->cc_minor);
    if (cp->dir != GCONV_WGRAD)
        GPU_REFUSE(ENG " runs conv_wgrad only, not %s", cp->node->op);
    if (k->G != 1)
        GPU_REFUSE(ENG " needs groups == 1, got groups=%" PRId64, k->G);
    if (k->dt_x != k->dt_y || k->dt_x == KDT_F32)
        GPU_REFUSE(ENG " needs dy and x both f16 or both bf16, got %s and %s", dt_name(k->dt_y), dt_name(k->dt_x));
    if (k->C % 4 != 0)
        GPU_REFUSE(ENG " needs x channels C %% 4 == 0, got C=%" PRId64, k->C);
    if (k->K % 8 != 0)
        GPU_REFUSE(ENG " needs dy channels K %% 8 == 0, got K=%" PRId64, k->K);
    if (k->sx[1] != 1 || k->sy[1] != 1)
        GPU_REFUSE(ENG " needs channels-last dy and x (@nhwc), got channel strides dy %" PRId64 ", x %" PRId64,
                   k->sy[1], k->sx[1]);
    /* x's pixels 16-byte aligned, or 8 when C % 8 == 4 (the gather's 8-byte halves) */
    const int64_t xal = k->C % 8 ? 4 : 8;
    for (int i = 0; i < 5; i++)
        if (i != 1 && (k->sx[i] % xal || k->sy[i] % 8))
            GPU_REFUSE(ENG " needs dy strides in multiples of 8 elements and x strides of %" PRId64 ", got %" PRId64
                           " and %" PRId64 " in slot %d", xal, k->sy[i], k->sx[i], i);
    const int ids[3] = {cp->x, cp->w, cp->y};
    for (int i = 0; i < 3; i++)
        if (span(&g->t[ids[i]]) >= ((int64_t)1 << 31))
            GPU_REFUSE(ENG " needs tensors spanning < 2^31 elements, %s spans %" PRId64, g->t[ids[i]].name,
                       span(&g->t[ids[i]]));
    const int64_t taps = gwx_cg(k) * k->win[0] * k->win[1] * k->win[2];
    if (k->K * taps >= ((int64_t)1 << 31))
        GPU_REFUSE(ENG " needs K*T*R*S*C < 2^31, got %" PRId64, k->K * taps);
    return true;
}

/* The model behind the splits and the cost, per CTA tile (bm x bn x one
 * 64-row slice = 2 MFLOP): T_SLICE us on one SM, T_FILL us to fill the ring
 * and store the tile; the partials written and read once at BW bytes/us, and
 * T_LAUNCH for the two launches.  T_SLICE fitted on the H100 (session 9,
 * call 2, dY by TMA; bench/RESULTS-conv.md): the 128 x 128 tile's slices
 * took 0.88-0.93 us on the 28x28 (1 wave of 14 splits), 14x14 (2 waves of
 * 7) and 7x7 (5 waves of 4) layers, 222-265 us each, and the 64 x 256
 * tile's 1.69 us (its 40 KB of rows gathered a slice against 32 KB) on
 * 64@56x56; the model's times are within 5% of those 7 shapes.  Latency
 * bound: ~30% of the SM's and of L2's throughput (ncu), the consumers
 * waiting on the "full" barrier. */
#define GWX_T_SLICE_BIG 0.9
#define GWX_T_SLICE_SMALL 1.7
#define GWX_T_SLICE_WIDE 2.1 /* not measured alone: above 2 x 0.9, the 128 x 256 tile stays off the gather */
/* x by TMA im2col (session 10, call 1, each tile forced on the 7 layers):
 * 128 x 128 0.31-0.34 us a slice at stride 1 (its wgmmas need 0.28: the
 * mainloop at ~85% of the tensor cores), 0.35-0.41 at stride 2; 128 x 256
 * 0.64-0.70 (0.79 on 128@56 s2); 64 x 256 0.57 (64@56x56, L2-bound: 576
 * columns of x a pixel).  The 1x1 windows keep the gather's times (their x
 * by TMA not measured; conv_im2col_gemm keeps them). */
#define GWX_T_SLICE_BIG_TMA 0.35
#define GWX_T_SLICE_SMALL_TMA 0.57
#define GWX_T_SLICE_WIDE_TMA 0.67
/* 3-D (x always gathered; session 11, the 3-D UNet's six wgrads forced on this engine and on conv_wgrad_mma):
 * 1.21-1.56x the 2-D gather's model (the depth's division and bounds test a row, the stem's 8-byte halves);
 * 1.6 charged a slice, so that the selection takes the faster engine on all six (this one for the C = 4 stem,
 * 0.68 against 1.24 ms, and C256 8^3, 0.041 against 0.055; conv_wgrad_mma for C32-C128, 1.01-1.45x faster:
 * conv_wgrad_mma's own model is optimistic on 3-D too; at 1.4 C128 16^3 came here, 0.063 against 0.052). */
#define GWX_3D_GATHER 1.6
#define GWX_T_FILL 2.0
#define GWX_BW 2.5e6
#define GWX_T_LAUNCH 6.0

/* the tiles (bm x bn) the kernel has */
static const int gwx_tiles[3][2] = {{KWX_BM_BIG, KWX_BN_BIG}, {KWX_BM_BIG, KWX_BN_SMALL}, {KWX_BM_SMALL, KWX_BN_SMALL}};

static double slice_us(int bm, int bn, bool xtma)
{
    if (bm == KWX_BM_SMALL)
        return xtma ? GWX_T_SLICE_SMALL_TMA : GWX_T_SLICE_SMALL;
    if (bn == KWX_BN_SMALL)
        return xtma ? GWX_T_SLICE_WIDE_TMA : GWX_T_SLICE_WIDE;
    return xtma ? GWX_T_SLICE_BIG_TMA : GWX_T_SLICE_BIG;
}

static double model_us(const kconv_params *k, double t_slice, int64_t tiles, int64_t slices, int64_t s, int sms)
{
    const int64_t per = (slices + s - 1) / s, n = (slices + per - 1) / per; /* normalised: none empty */
    const int64_t waves = (tiles * n + sms - 1) / sms;
    const double J = (double)(gwx_cg(k) * k->win[0] * k->win[1] * k->win[2]);
    return (double)waves * ((double)per * t_slice + GWX_T_FILL) + (double)n * (double)k->K * J * 8.0 / GWX_BW +
           GWX_T_LAUNCH;
}

/* The splits that minimise the modelled time of one tile shape (a split
 * more only for a clear gain: fewer partials); XDNN_WGRAD_SPLITS=n forces n. */
static int64_t best_splits(const kconv_params *k, double t_slice, int64_t tiles, int64_t slices, int sms,
                           double *us_out)
{
    int64_t best = 1;
    double best_us = model_us(k, t_slice, tiles, slices, 1, sms);
    const int64_t most = slices < 1024 ? slices : 1024;
    for (int64_t s = 2; s <= most; s++) {
        const double us = model_us(k, t_slice, tiles, slices, s, sms);
        if (us < best_us * 0.995) {
            best = s;
            best_us = us;
        }
    }
    const char *env = getenv("XDNN_WGRAD_SPLITS");
    if (env && *env) {
        best = strtol(env, NULL, 10);
        if (best < 1)
            best = 1;
        if (best > slices)
            best = slices;
        best_us = model_us(k, t_slice, tiles, slices, best, sms);
    }
    *us_out = best_us;
    return best;
}

void gpu_conv_wgrad_wgmma_plan(const kconv_params *k, int sm_count, gwx_plan *out)
{
    const int sms = sm_count > 0 ? sm_count : 132;
    const int64_t J = gwx_cg(k) * k->win[0] * k->win[1] * k->win[2];
    const int64_t M = k->N * k->out[0] * k->out[1] * k->out[2];
    const bool xtma = kconv_wgrad_wgmma_x_tma(k) != 0 && k->win[1] * k->win[2] > 1;
    const double f3 = k->in[0] != 1 || k->win[0] != 1 || k->out[0] != 1 ? GWX_3D_GATHER : 1.0;
    out->slices = (M + KWX_BK - 1) / KWX_BK;
    if (out->slices < 1)
        out->slices = 1;
    /* the tile of the least modelled time (the first on a tie) among those for K; XDNN_WGRAD_TILE=BMxBN
     * forces one */
    const char *tenv = getenv("XDNN_WGRAD_TILE");
    int64_t best = 0;
    double best_us = 0;
    out->bm = 0;
    for (int t = 0; t < 3; t++) {
        const int bm = gwx_tiles[t][0], bn = gwx_tiles[t][1];
        char name[16];
        snprintf(name, sizeof name, "%dx%d", bm, bn);
        if (tenv && *tenv ? strcmp(tenv, name) != 0 : (bm == KWX_BM_SMALL) != (k->K <= KWX_BM_SMALL))
            continue; /* 64 x 256 for K <= 64 only: the 128-high tiles measured 0.28-0.31 ms on 64@56x56
                       * against its 0.18 (x's L2 traffic per useful FLOP doubles), and it was not
                       * measured above */
        const int64_t tiles = ((k->K + bm - 1) / bm) * ((J + bn - 1) / bn);
        double us;
        const int64_t s = best_splits(k, f3 * slice_us(bm, bn, xtma), tiles, out->slices, sms, &us);
        if (out->bm == 0 || us < best_us) {
            out->bm = bm;
            out->bn = bn;
            out->tiles = tiles;
            best = s;
            best_us = us;
        }
    }
    if (out->bm == 0) { /* an XDNN_WGRAD_TILE the kernel lacks: the first tile */
        out->bm = gwx_tiles[0][0];
        out->bn = gwx_tiles[0][1];
        out->tiles = ((k->K + out->bm - 1) / out->bm) * ((J + out->bn - 1) / out->bn);
        best = best_splits(k, f3 * slice_us(out->bm, out->bn, xtma), out->tiles, out->slices, sms, &best_us);
    }
    const int64_t per = (out->slices + best - 1) / best;
    out->splits = (int)((out->slices + per - 1) / per);
    out->us = best_us;
}

size_t gpu_conv_wgrad_wgmma_ws_bytes(const kconv_params *k, const gwx_plan *pl)
{
    const size_t bytes = (size_t)pl->splits * (size_t)(k->K * gwx_cg(k) * k->win[0] * k->win[1] * k->win[2]) * 4;
    return (bytes + 255) / 256 * 256;
}

typedef struct wx_priv {
    gconv_problem cp;
    gwx_plan plan;
    char detail[192];
} wx_priv;

static bool wx_prepare(const gplan *pl, const gpart *p, const gpu_device *dev, wx_priv *wv, char *why, size_t len)
{
    if (!gpu_conv_analyze(pl, p, &wv->cp, why, len) || !gpu_conv_wgrad_wgmma_check(pl->g, &wv->cp, dev, why, len))
        return false;
    gpu_conv_wgrad_wgmma_plan(&wv->cp.kp, dev->sm_count, &wv->plan);
    return true;
}

static bool wx_supports(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    wx_priv wv;
    if (!wx_prepare(pl, p, dev, &wv, why, len))
        return false;
    if (!kconv_wgrad_wgmma_built())
        GPU_REFUSE(ENG ": this build has no sm_90a code (kernels/*_sm90a.cu rule)");
    const int need = kconv_wgrad_wgmma_smem(wv.plan.bm, wv.plan.bn);
    if ((size_t)need > gpu_smem_per_block(dev))
        GPU_REFUSE(ENG ": a %dx%d tile needs %d bytes of shared memory per block, the device gives %zu", wv.plan.bm,
                   wv.plan.bn, need, gpu_smem_per_block(dev));
    return true;
}

/* The model's time (the kernel's waves, the partials, two launches), at
 * least the partition's bytes at 2.6 TB/s; on the 1x1 wgrads (DRAM-bound
 * GEMMs) 10% more, leaving ties to conv_im2col_gemm's one cuBLASLt call,
 * which measured 0.0645 / 0.103 / 0.195 ms against this kernel's 0.105 /
 * 0.106 / 0.194 on 1024->256 at 14x14, 128->512 at 28x28 and 64->256 at
 * 56x56 (N = 256, session 9). */
static double wx_cost(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    wx_priv wv;
    char why[256];
    if (!wx_prepare(pl, p, dev, &wv, why, sizeof why))
        return 1e30;
    double us = wv.plan.us;
    const double mem = p->bytes / 2.6e6;
    if (mem > us)
        us = mem;
    if (wv.cp.kp.win[1] * wv.cp.kp.win[2] == 1)
        us *= 1.1;
    return us;
}

static size_t wx_workspace(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    wx_priv wv;
    char why[256];
    return wx_prepare(pl, p, dev, &wv, why, sizeof why) ? gpu_conv_wgrad_wgmma_ws_bytes(&wv.cp.kp, &wv.plan) : 0;
}

static xdnn_status wx_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d)
{
    wx_priv *wv = calloc(1, sizeof *wv);
    if (!wv)
        return XDNN_ERR_NOMEM;
    p->priv = wv;
    char why[512];
    if (!wx_prepare(c->plan, p, &c->dev, wv, why, sizeof why)) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), ENG ": %s: %s", p->name, why);
        return XDNN_ERR_UNSUPPORTED;
    }
    const kconv_params *k = &wv->cp.kp;
    snprintf(wv->detail, sizeof wv->detail,
             "wgrad implicit GEMM %" PRId64 "x%" PRId64 "x%" PRId64 ", tile %dx%dx%d, %" PRId64 " tiles x %d splits, "
             "wgmma m64n128k16 MN-major, x by %s",
             k->K, gwx_cg(k) * k->win[0] * k->win[1] * k->win[2], k->N * k->out[0] * k->out[1] * k->out[2],
             wv->plan.bm, wv->plan.bn, KWX_BK,
             wv->plan.tiles, wv->plan.splits, kconv_wgrad_wgmma_x_tma(k) ? "TMA im2col" : "cp.async");
    return XDNN_OK;
}

static xdnn_status wx_execute(gpu_ctx *c, gpart *p, cudaStream_t s, xdnn_diags_t *d)
{
    const wx_priv *wv = p->priv;
    const gconv_problem *cp = &wv->cp;
    int e = kconv_wgrad_wgmma(&cp->kp, c->dptr[cp->x], c->dptr[cp->w], c->dptr[cp->y],
                              (float *)(void *)(c->ws + p->ws_offset), wv->plan.bm, wv->plan.bn, wv->plan.splits, s);
    return gpu_check_cuda((cudaError_t)e, "kconv_wgrad_wgmma launch", __FILE__, __LINE__, d);
}

static void wx_release(gpart *p)
{
    free(p->priv);
    p->priv = NULL;
}

static const char *wx_detail(const gpart *p)
{
    const wx_priv *wv = p->priv;
    return wv ? wv->detail : "";
}

const gpu_engine gpu_engine_conv_wgrad_wgmma = {
    ENG,
    "conv_wgrad as an implicit GEMM on Hopper wgmma (sm_90a): 1-/2-/3-D, groups 1, channels-last f16/bf16, C % 4, "
    "K % 8, deterministic split reduction",
    wx_supports, wx_cost, wx_workspace, wx_build, wx_execute, wx_release, wx_detail,
};
