/* eng_conv_stem.c — conv_stem: the small-C 2-D conv (the C = 3 image stem)
 * and its weight gradient as implicit GEMMs on tensor cores that never
 * write the im2col columns (kernels/conv_stem.cu, src/gpu/kern_conv_stem.h).
 *
 * Why: conv_im2col_gemm builds the column matrix in DRAM and reads it back
 * into cuBLASLt (at N = 256, 1.08 GB each way against y's 411 MB): the
 * stem's forward ran at ~50 TFLOP/s, 1.13 ms, its weight gradient 1.23 ms.
 * Here each CTA stages the input patch of its 8 x 16 output tile in shared
 * memory and builds the fragments from it; the forward writes y through
 * shared memory in 16-byte stores, the weight gradient sums per CTA into f32
 * partials that one small kernel adds in order (deterministic).  Measured
 * (session 11, H100, N = 256 f16): fwd 0.38 ms, wgrad 0.42 ms (159 and 143
 * TFLOP/s, ~40% of the memory floor; bench/RESULTS-conv.md).
 *
 * Claimed: a lone conv (no fused epilogue) or conv_wgrad, 2-D, groups 1,
 * C <= 8, a window up to 7x7, unit dilation, any stride and pad whose CTA
 * patch fits shared memory; x f16/bf16 channels-last with packed pixels
 * (channel stride 1, w stride C); y / dy of x's dtype with channel stride 1;
 * w (forward) of x's dtype, any strides; dw f32, f16 or bf16, any strides.
 * XDNN_CONV_STEM_OFF=1 refuses everything (the A/B switch: the stem then
 * runs on conv_im2col_gemm as before). */
#include "gpu/conv_analyze.h"
#include "gpu/engine.h"
#include "gpu/kern_conv_stem.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ENG "conv_stem"

enum { STEM_MAX_C = 8, STEM_MAX_WIN = 7, STEM_CTAS_PER_SM = 3 };

typedef struct stem_shape {
    gconv_problem cp;
    kstem_geom g;
    bool wgrad;
    size_t smem;
} stem_shape;

static bool stem_analyze(const gplan *pl, const gpart *p, const gpu_device *dev, stem_shape *s, char *why, size_t len)
{
    memset(s, 0, sizeof *s);
    const char *off = getenv("XDNN_CONV_STEM_OFF");
    if (off && strcmp(off, "0") != 0)
        GPU_REFUSE(ENG " is turned off (XDNN_CONV_STEM_OFF=%s)", off);
    gconv_problem *cp = &s->cp;
    if (!gpu_conv_analyze(pl, p, cp, why, len))
        return false;
    const ggraph *gg = pl->g;
    if (p->nnodes != 1 || cp->epi.n > 0)
        GPU_REFUSE(ENG " runs a lone conv: partition %s fuses %d node(s) (no epilogue here)", p->name, p->nnodes);
    if (cp->dir == GCONV_DGRAD)
        GPU_REFUSE(ENG " runs conv and conv_wgrad, not conv_dgrad (the stem's dx is not needed)");
    s->wgrad = cp->dir == GCONV_WGRAD;
    const kconv_params *k = &cp->kp;
    const char *op = s->wgrad ? "conv_wgrad" : "conv", *xn = gg->t[cp->x].name, *yn = gg->t[cp->y].name;
    if (k->G != 1)
        GPU_REFUSE(ENG " needs groups 1, got groups=%" PRId64, k->G);
    if (k->in[0] != 1 || k->win[0] != 1 || k->out[0] != 1 || cp->nsp != 2)
        GPU_REFUSE(ENG " runs 2-D convs, %s is %d-D", cp->node->name, cp->nsp);
    if (k->C > STEM_MAX_C)
        GPU_REFUSE(ENG " runs C <= %d (the image stem; wider inputs take the implicit-GEMM engines), got C=%" PRId64,
                   STEM_MAX_C, k->C);
    if (k->win[1] > STEM_MAX_WIN || k->win[2] > STEM_MAX_WIN)
        GPU_REFUSE(ENG " runs windows up to %dx%d, got %" PRId64 "x%" PRId64, STEM_MAX_WIN, STEM_MAX_WIN, k->win[1],
                   k->win[2]);
    if (k->dil[1] != 1 || k->dil[2] != 1)
        GPU_REFUSE(ENG " needs dilation 1, got dilation=[%" PRId64 ", %" PRId64 "]", k->dil[1], k->dil[2]);
    if (k->dt_x != KDT_F16 && k->dt_x != KDT_BF16)
        GPU_REFUSE(ENG " needs x '%s' f16 or bf16, got %s", xn, xdnn_dtype_name(gg->t[cp->x].dtype));
    if (k->dt_y != k->dt_x)
        GPU_REFUSE(ENG " needs %s '%s' of x's dtype %s, got %s", s->wgrad ? "dy" : "y", yn,
                   xdnn_dtype_name(gg->t[cp->x].dtype), xdnn_dtype_name(gg->t[cp->y].dtype));
    if (!s->wgrad && k->dt_w != k->dt_x)
        GPU_REFUSE(ENG " needs w '%s' of x's dtype %s, got %s", gg->t[cp->w].name, xdnn_dtype_name(gg->t[cp->x].dtype),
                   xdnn_dtype_name(gg->t[cp->w].dtype));
    const int64_t C = k->C, W = k->in[2];
    if ((C > 1 && k->sx[1] != 1) || (W > 1 && k->sx[4] != C))
        GPU_REFUSE(ENG " needs x '%s' channels-last with packed pixels (channel stride 1, w stride C=%" PRId64
                   "), got strides c=%" PRId64 " w=%" PRId64, xn, C, k->sx[1], k->sx[4]);
    if (k->K > 1 && k->sy[1] != 1)
        GPU_REFUSE(ENG " needs %s '%s' channels-last (channel stride 1), got %" PRId64, s->wgrad ? "dy" : "y", yn,
                   k->sy[1]);
    const int64_t lim = (int64_t)1 << 30;
    if (k->N * k->out[1] * k->out[2] >= lim || k->K >= lim || k->in[1] >= lim || W >= lim ||
        k->stride[1] > 64 || k->stride[2] > 64 || k->pad[1] > 64 || k->pad[2] > 64 || W * C >= lim)
        GPU_REFUSE(ENG ": %s's sizes pass the kernels' 32-bit index math", cp->node->name);
    kstem_geom *g = &s->g;
    *g = (kstem_geom){.N = (int32_t)k->N, .C = (int32_t)C, .K = (int32_t)k->K, .H = (int32_t)k->in[1],
                      .W = (int32_t)W, .OH = (int32_t)k->out[1], .OW = (int32_t)k->out[2], .R = (int32_t)k->win[1],
                      .S = (int32_t)k->win[2], .sh = (int32_t)k->stride[1], .sw = (int32_t)k->stride[2],
                      .ph = (int32_t)k->pad[1], .pw = (int32_t)k->pad[2], .sxn = k->sx[0], .sxh = k->sx[3],
                      .syn = k->sy[0], .syh = k->sy[3], .syw = k->sy[4], .swk = k->sw[0], .swc = k->sw[1],
                      .swr = k->sw[3], .sws = k->sw[4], .bf16 = k->dt_x == KDT_BF16};
    if (g->N < 1 || g->OH < 1 || g->OW < 1)
        GPU_REFUSE(ENG ": %s has no output pixel", cp->node->name);
    s->smem = s->wgrad ? kstem_wgrad_smem(g) : kstem_fwd_smem(g);
    const size_t cap = dev && dev->smem_optin > 0 ? dev->smem_optin : 99 * 1024;
    if (s->smem > cap)
        GPU_REFUSE(ENG ": a %s CTA of %s needs %zu bytes of shared memory (stride [%d, %d], window %dx%d, C=%d), "
                   "more than the device's %zu", op, cp->node->name, s->smem, g->sh, g->sw, g->R, g->S, g->C, cap);
    return true;
}

static int stem_sms(const gpu_device *dev) { return dev && dev->sm_count > 0 ? dev->sm_count : 132; }

/* The forward's CTAs an SM: 3 (168 registers), or 4 with XDNN_CONV_STEM_FWD_CTAS=4 (128 registers, one more CTA
 * whose MMAs can run while another waits for its patch; the A/B of session 11's second pass). */
static int stem_fwd_ctas_per_sm(void)
{
    const char *v = getenv("XDNN_CONV_STEM_FWD_CTAS");
    return v && atoi(v) >= 4 ? 4 : STEM_CTAS_PER_SM;
}

/* The weight gradient's CTAs per (K block, reduction chunk): ~3 per SM in all, at most one per tile. */
static int stem_splits(const stem_shape *s, const gpu_device *dev)
{
    const int64_t blocks = (int64_t)((s->g.K + KSTEM_BK - 1) / KSTEM_BK) * kstem_kchunks(&s->g);
    int64_t n = (int64_t)stem_sms(dev) * STEM_CTAS_PER_SM / blocks;
    const int64_t tiles = kstem_tiles(&s->g);
    if (n < 1)
        n = 1;
    return (int)(n < tiles ? n : tiles);
}

static bool stem_supports(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    stem_shape s;
    if (!stem_analyze(pl, p, dev, &s, why, len))
        return false;
    if (dev && dev->cc_major < 8)
        GPU_REFUSE(ENG " needs mma.sync bf16/f16 of sm_80 or newer, device is sm_%d%d", dev->cc_major, dev->cc_minor);
    return true;
}

/* x (each pixel read ~1.5x: the patches of neighbouring tiles overlap), y or
 * dy, w at 2.6 TB/s, or the MMAs on the padded reduction (fwd: R x
 * roundup(S*C, 2) to 16; wgrad: R*S*C to 8) and the 128-pixel tiles
 * (partial tiles cost whole ones) at 250 TFLOP/s (mma.sync, fragments from
 * shared memory), whichever bounds; 5 us of launches (wgrad: + its partials). */
static double stem_cost(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    stem_shape s;
    char why[256];
    if (!stem_analyze(pl, p, dev, &s, why, sizeof why))
        return 1e30;
    const kstem_geom *g = &s.g;
    const double px = (double)kstem_tiles(g) * KSTEM_TH * KSTEM_TW;
    const double ldr = (double)((g->S * g->C + 1) / 2 * 2), red = s.wgrad ? (double)((g->R * g->S * g->C + 7) / 8 * 8)
                                                                         : (double)(((int)(g->R * ldr) + 15) / 16 * 16);
    const double kp = (double)((g->K + 7) / 8 * 8);
    const double math = 2.0 * px * kp * red / 250.0e6;
    const double part = s.wgrad ? 2.0 * stem_splits(&s, dev) * (double)g->K * g->R * g->S * g->C * 4.0 : 0.0;
    const double xb = (double)g->N * g->H * g->W * g->C * 2.0;
    const double mem = (p->bytes + 0.5 * xb + part) / 2.6e6;
    return (mem > math ? mem : math) + 5.0;
}

static size_t stem_workspace(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    stem_shape s;
    char why[256];
    if (!stem_analyze(pl, p, dev, &s, why, sizeof why) || !s.wgrad)
        return 0;
    return ((size_t)stem_splits(&s, dev) * (size_t)s.g.K * (size_t)(s.g.R * s.g.S * s.g.C) * 4 + 255) / 256 * 256;
}

typedef struct stem_priv {
    stem_shape s;
    int ctas, fwd_per_sm, splits;
    char detail[192];
} stem_priv;

static xdnn_status stem_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d)
{
    stem_priv *sv = calloc(1, sizeof *sv);
    if (!sv)
        return XDNN_ERR_NOMEM;
    p->priv = sv;
    char why[512];
    if (!stem_analyze(c->plan, p, &c->dev, &sv->s, why, sizeof why)) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), ENG ": %s: %s", p->name, why);
        return XDNN_ERR_UNSUPPORTED;
    }
    sv->fwd_per_sm = stem_fwd_ctas_per_sm();
    sv->ctas = stem_sms(&c->dev) * sv->fwd_per_sm;
    sv->splits = stem_splits(&sv->s, &c->dev);
    const size_t ws = stem_workspace(c->plan, p, &c->dev);
    if (ws > p->ws_bytes) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), ENG ": %s: needs %zu workspace bytes, the plan gave %zu",
                   p->name, ws, p->ws_bytes);
        return XDNN_ERR_UNSUPPORTED;
    }
    const kstem_geom *g = &sv->s.g;
    if (sv->s.wgrad)
        snprintf(sv->detail, sizeof sv->detail,
                 "implicit-GEMM wgrad, patch in shared memory (%zu B/CTA), %" PRId64 " tiles of %dx%d px in %d "
                 "split(s) x %d chunk(s), f32 partials summed in order", sv->s.smem, kstem_tiles(g), KSTEM_TH,
                 KSTEM_TW, sv->splits, kstem_kchunks(g));
    else
        snprintf(sv->detail, sizeof sv->detail,
                 "implicit-GEMM fwd, patch in shared memory (%zu B/CTA), %" PRId64 " tiles of %dx%d px on %d "
                 "persistent CTAs (%d an SM)", sv->s.smem, kstem_tiles(g), KSTEM_TH, KSTEM_TW, sv->ctas,
                 sv->fwd_per_sm);
    return XDNN_OK;
}

static xdnn_status stem_execute(gpu_ctx *c, gpart *p, cudaStream_t strm, xdnn_diags_t *d)
{
    const stem_priv *sv = p->priv;
    const stem_shape *s = &sv->s;
    const void *x = c->dptr[s->cp.x];
    void *y = c->dptr[s->cp.y], *w = c->dptr[s->cp.w];
    int ce;
    if (s->wgrad)
        ce = kstem_wgrad_launch(&s->g, y, x, (float *)(void *)(c->ws + p->ws_offset), sv->splits, w, s->cp.kp.dt_w,
                                strm);
    else
        ce = kstem_fwd_launch(&s->g, x, w, y, sv->ctas, sv->fwd_per_sm, strm);
    return gpu_check_cuda((cudaError_t)ce, s->wgrad ? "kstem_wgrad" : "kstem_fwd", __FILE__, __LINE__, d);
}

static void stem_release(gpart *p)
{
    free(p->priv);
    p->priv = NULL;
}

static const char *stem_detail(const gpart *p)
{
    const stem_priv *sv = p->priv;
    return sv ? sv->detail : "";
}

const gpu_engine gpu_engine_conv_stem = {
    ENG,
    "conv / conv_wgrad with C <= 8 (the image stem) as implicit GEMMs on mma.sync: each CTA stages its 8x16 output "
    "tile's input patch in shared memory and builds the im2col fragments from it (no column matrix); wgrad by "
    "per-CTA f32 partials summed in order: 2-D, groups 1, windows up to 7x7, dilation 1, f16/bf16 NHWC",
    stem_supports, stem_cost, stem_workspace, stem_build, stem_execute, stem_release, stem_detail,
};
