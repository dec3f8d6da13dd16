/* eng_conv_im2col.c — conv_im2col_gemm: a forward conv or conv_wgrad with
 * few input channels (C < 8: the C = 3 image stem) as cuBLASLt GEMMs on an
 * im2col matrix packed per filter row (kern_conv_im2col.h), and the 1x1
 * conv, conv_dgrad and conv_wgrad with C % 8 == 0 as one plain GEMM.
 *
 * Why: with C = 3 the implicit-GEMM engines read x through a copy padded to
 * 8 channels, a reduction of R * S * 8 = 392 for the stem's 147 useful taps.
 * Packed per filter row, the S * C values of one row are adjacent in an NHWC
 * x, so the reduction is R * roundup(S * C, 8) = 168, and A is built by a
 * coalesced copy.  Then
 *   fwd:   y [M, K] = A [M, Kc] . Wr [K, Kc]^T        (y NHWC is [M, K])
 *   wgrad: dWr [K, Kc] = dy^T [K, M] . A [M, Kc]      (f32, then dw = unpack(dWr))
 * with M = N * OH * OW, Kc = R * ldr, Wr the weights in the same layout.
 *
 * A is built and consumed in chunks of `rows` output pixels (one workspace
 * buffer of ~256 MiB reused): at N = 256 the whole A would be 1.08 GB.
 * (Chunks small enough to stay in L2 were slower: the per-GEMM ramp and
 * tail cost more than the DRAM traffic they save.)  The weight gradient's
 * GEMM per chunk is a strided batch of `split` items of rows / split pixels
 * each (its output is only K x Kc: a single GEMM would occupy few SMs),
 * accumulated (beta 1) over the chunks into `split` f32 partials that the
 * unpack kernel sums in order: deterministic.  The chunk's tail items and
 * the remainder rows are two more GEMM shapes planned at build.
 *
 * The 1x1 weight gradient (C >= 8, the bottlenecks' 1x1 convs and the
 * projection shortcuts) is the same GEMM with Kc = C and nothing packed:
 *   dW [K, C] = dy^T [K, M] . X [M, C],  X row m = the input pixel of output pixel m.
 * At stride 1 on a packed NHWC x, X is x itself, read in place; at stride 2
 * (the projections) A = X is a subsampling copy (kim_im2col's pixel kernel),
 * a quarter of x.  Its reduction M = N * P * Q is long (802816 at N = 256,
 * 56x56) and its output small (64 x 64 .. 2048 x 512), so the parallelism
 * comes from cuBLASLt's own split-K, as its heuristic picks it within the
 * 32 MiB workspace: one GEMM (split 1, no batch) that writes dw itself when
 * dw is a packed [K, C] of x's dtype or f32, otherwise f32 partials and the
 * unpack kernel.  Items, chunks and remainders are whole multiples of 128
 * rows: every operand offset stays 256-byte aligned, as the heuristic's
 * algorithms assume.
 *
 * The 1x1 forward conv and conv_dgrad (C % 8 == 0, no pad) are the same
 * GEMM on x's pixels (session 8: ResNet's 1x1 convs with C or K = 64 at
 * 56x56 ran at ~1.05 TB/s on the implicit-GEMM engines, whose one 64-deep
 * reduction slice per output tile leaves the DRAM stream half idle):
 *   fwd:   y [M, K] = X [M, C] . W [K, C]^T
 *   dgrad: dx [M, C] = dy [M, K] . W [K, C]      (stride 1 only: at stride 2
 *          dx would be a scatter with zero pixels between)
 * W is read in place: the packed [K, C] (any 1x1 w of KCRS or KRSC layout;
 * other strides are refused, a transposing view is copied by the planner
 * first); x (fwd) in place at stride 1 on
 * a packed NHWC x, subsampled into A in chunks otherwise, as for wgrad.
 *
 * Claimed: conv (a lone node: fused epilogues are refused) and conv_wgrad,
 * 1-D or 2-D, groups 1, C < 8, any stride, pad, dilation; x f16/bf16 in any
 * layout (gathered through its strides when not channels-last); w of x's
 * dtype, any layout; y (dy) packed channels-last, not a view, K % 8 == 0
 * (16-byte GEMM rows); dw f32, f16 or bf16, any layout.  And conv_wgrad
 * with a 1x1 window and C % 8 == 0, any stride, no pad, x channels-last
 * (pixel strides multiples of 8, not a view), the same dy and dw rules;
 * and conv (any stride) and conv_dgrad (stride 1) with a 1x1 window,
 * C % 8 == 0, no pad, x (dx) channels-last under the same rules, dx packed,
 * w the packed [K, C] of x's dtype.
 * Environment knobs (benchmarks): XDNN_IM2COL_ROWS (rows per chunk),
 * XDNN_IM2COL_SPLIT (wgrad batch items per chunk: 32 for the stem, 1 for
 * the 1x1 wgrad), XDNN_IM2COL_NO_1X1=1 (the 1x1 wgrad refused: the A/B
 * switch of a whole-network timing), XDNN_IM2COL_NO_1X1_FD=1 (the 1x1
 * forward and dgrad refused: their A/B switch). */
#include "gpu/conv_analyze.h"
#include "gpu/engine.h"
#include "gpu/kern_conv_im2col.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ENG "conv_im2col_gemm"

enum { CIM_MAX_C = 7 }; /* C % 8 == 0 convs run unpadded on the implicit-GEMM engines */

typedef struct cim_shape {
    gconv_problem cp;
    kim_geom g;
    bool wgrad, dgrad;
    bool one;      /* a 1x1 window with C % 8 == 0: A is x's pixels, Kc = C */
    bool inplace;  /* ... at stride 1 on a packed NHWC x (dx): A is x itself (no copy, no chunks) */
    bool direct;   /* ... the GEMM touches w itself: wgrad writes dw (no partials, no unpack), fwd and dgrad
                    * read it as the packed [K, C] (always: no Wr) */
    int64_t M, rows, split, item;  /* rows per chunk (a multiple of split), item = rows / split */
    int64_t full, last;            /* full chunks; rows of the last chunk (1 .. rows) */
    size_t a_off, w_off, ws_bytes; /* workspace: cuBLASLt's, A chunk, Wr (fwd) or the partials (wgrad) */
} cim_shape;

/* The three GEMM shapes: a full chunk, the last chunk (its whole items for
 * wgrad), and wgrad's remainder rows (fewer than an item). */
typedef struct cim_priv {
    cim_shape s;
    gpu_lt_gemm lt[3];
    bool have[3];
    char detail[224];
} cim_priv;

static size_t up256(size_t v) { return (v + 255) / 256 * 256; }

static int64_t env_int(const char *name, int64_t dflt)
{
    const char *v = getenv(name);
    return v && atoll(v) > 0 ? atoll(v) : dflt;
}

/* Is the tensor [N, ch, 1, h, w] with 5-slot strides s, dims {ch, w, h, N},
 * the packed row-major [N * h * w, ch] matrix (dims of size 1 take any
 * stride)? */
static bool packed_rows(const int64_t dims[4], const int64_t *s)
{
    static const int64_t slot[4] = {1, 4, 3, 0};
    int64_t want = 1;
    for (int i = 0; i < 4; i++) {
        if (dims[i] > 1 && s[slot[i]] != want)
            return false;
        want *= dims[i];
    }
    return true;
}

static const char *cim_op(const cim_shape *s)
{
    return s->wgrad ? "conv_wgrad" : s->dgrad ? "conv_dgrad" : "conv";
}

/* The 1x1 rules (C >= 8): C % 8 == 0, no pad, a channels-last x whose
 * 16-byte pieces the GEMM or the pixel copy can read (dgrad: a packed dx,
 * stride 1, as the GEMM writes it); sets inplace: stride 1 on a packed NHWC
 * x, which is then A itself. */
static bool cim_one_rules(const ggraph *gg, cim_shape *s, char *why, size_t len)
{
    const kim_geom *g = &s->g;
    const gtensor *x = &gg->t[s->cp.x];
    const char *op = cim_op(s);
    /* A/B switches: set and not "0" = left to the other engines */
    const char *knob = s->wgrad ? "XDNN_IM2COL_NO_1X1" : "XDNN_IM2COL_NO_1X1_FD", *off = getenv(knob);
    if (off && strcmp(off, "0") != 0)
        GPU_REFUSE(ENG ": the 1x1 %s is turned off (%s=%s)", op, knob, off);
    if (g->C % 8 != 0)
        GPU_REFUSE(ENG " needs C %% 8 == 0 for a 1x1 %s with C >= 8 (16-byte GEMM rows of %s '%s'), got C=%" PRId64,
                   op, s->dgrad ? "dx" : "x", x->name, g->C);
    if (g->ph != 0 || g->pw != 0 || (g->OH - 1) * g->sh >= g->H || (g->OW - 1) * g->sw >= g->W)
        GPU_REFUSE(ENG " runs a 1x1 %s with C >= 8 without pad, got pad=[%" PRId64 ", %" PRId64 "] (leading) "
                   "and %" PRId64 "x%" PRId64 " outputs of a %" PRId64 "x%" PRId64 " x at stride [%" PRId64 ", %" PRId64
                   "]", op, g->ph, g->pw, g->OH, g->OW, g->H, g->W, g->sh, g->sw);
    if (s->dgrad && (g->sh != 1 || g->sw != 1))
        GPU_REFUSE(ENG " runs a 1x1 conv_dgrad at stride 1 only (dx = dy . W, one GEMM row per pixel; a strided dx "
                   "has zero pixels between), got stride [%" PRId64 ", %" PRId64 "]", g->sh, g->sw);
    if (g->sxc != 1 || (g->sxn | g->sxh | g->sxw) % 8 != 0 || x->view_of >= 0)
        GPU_REFUSE(ENG " needs %s '%s' channels-last for a 1x1 %s with C >= 8 (channel stride 1, pixel "
                   "strides multiples of 8, not a view), got strides n=%" PRId64 " c=%" PRId64 " h=%" PRId64
                   " w=%" PRId64 "%s", s->dgrad ? "dx" : "x", x->name, op, g->sxn, g->sxc, g->sxh, g->sxw,
                   x->view_of >= 0 ? ", a view" : "");
    const int64_t xdims[4] = {g->C, g->W, g->H, g->N};
    s->inplace = g->sh == 1 && g->sw == 1 && packed_rows(xdims, s->cp.kp.sx);
    if (s->dgrad && !s->inplace)
        GPU_REFUSE(ENG " needs dx '%s' packed channels-last for a 1x1 conv_dgrad (the GEMM's row-major [N*H*W, C])",
                   x->name);
    return true;
}

/* The 1x1 wgrad's chunks of A (in place: one, x itself): whole items of a
 * multiple of 128 rows (256-byte aligned offsets of every item, remainder
 * and chunk); one chunk of a single item of M rows when split is 1. */
static void cim_one_chunks(cim_shape *s, int64_t target)
{
    s->split = s->wgrad ? env_int("XDNN_IM2COL_SPLIT", 1) : 1;
    const int64_t unit = 128 * s->split;
    int64_t rows = s->inplace ? s->M : env_int("XDNN_IM2COL_ROWS", target);
    rows = (rows + unit - 1) / unit * unit;
    if (rows >= s->M) /* one chunk */
        rows = s->split == 1 ? s->M : ((s->M + s->split - 1) / s->split + 127) / 128 * 128 * s->split;
    s->rows = rows;
}

/* The stem's chunks of ~256 MiB of A (one at N = 32, 5 at N = 256): measured
 * on its wgrad at N = 256, each chunk costs ~6 us more (its GEMM's ramp and
 * tail), 196 chunks of 16384 rows 2.56 ms against 1.46 for 4 of 1M; whole
 * output rows (n, oh) per chunk for the fast im2col kernel, whole items for
 * the wgrad batch. */
static void cim_stem_chunks(cim_shape *s, int64_t target)
{
    s->split = s->wgrad ? env_int("XDNN_IM2COL_SPLIT", 32) : 1;
    int64_t unit = s->g.OW * s->split;
    if (unit > target)
        unit = s->split * 8; /* a very wide map: chunks of partial rows, gathered */
    int64_t rows = env_int("XDNN_IM2COL_ROWS", target) / unit * unit;
    if (rows < unit)
        rows = unit;
    if (rows > s->M) /* one chunk: as many rows as M, rounded up to whole items */
        rows = (s->M + s->split - 1) / s->split * s->split;
    s->rows = rows;
}

static bool cim_analyze(const gplan *pl, const gpart *p, cim_shape *s, char *why, size_t len)
{
    memset(s, 0, sizeof *s);
    gconv_problem *cp = &s->cp;
    if (!gpu_conv_analyze(pl, p, cp, why, len))
        return false;
    const ggraph *gg = pl->g;
    if (p->nnodes != 1 || cp->epi.n > 0)
        GPU_REFUSE(ENG " runs a lone conv: partition %s fuses %d node(s) (no epilogue here)", p->name, p->nnodes);
    const kconv_params *k = &cp->kp;
    s->wgrad = cp->dir == GCONV_WGRAD;
    s->dgrad = cp->dir == GCONV_DGRAD;
    if (k->G != 1)
        GPU_REFUSE(ENG " needs groups 1, got groups=%" PRId64, k->G);
    if (k->in[0] != 1 || k->win[0] != 1 || k->out[0] != 1)
        GPU_REFUSE(ENG " runs 1-D and 2-D convs, %s is 3-D", cp->node->name);
    s->one = k->win[1] == 1 && k->win[2] == 1 && k->C > CIM_MAX_C;
    if ((k->C > CIM_MAX_C || s->dgrad) && !s->one)
        GPU_REFUSE(ENG " runs a %s with C >= 8 for a 1x1 window only (x's pixels as they are; the filter-row "
                   "packing is for C < 8 and the forward conv and conv_wgrad), got C=%" PRId64 " and a %" PRId64
                   "x%" PRId64 " window", cim_op(s), k->C, k->win[1], k->win[2]);
    const char *xn = gg->t[cp->x].name, *yn = gg->t[cp->y].name, *wn = gg->t[cp->w].name;
    if (k->dt_x != KDT_F16 && k->dt_x != KDT_BF16)
        GPU_REFUSE(ENG " needs x '%s' f16 or bf16, got %s", xn, xdnn_dtype_name(gg->t[cp->x].dtype));
    if (k->dt_y != k->dt_x)
        GPU_REFUSE(ENG " needs %s '%s' of x's dtype %s, got %s", s->wgrad || s->dgrad ? "dy" : "y", yn,
                   xdnn_dtype_name(gg->t[cp->x].dtype), xdnn_dtype_name(gg->t[cp->y].dtype));
    if (!s->wgrad && k->dt_w != k->dt_x)
        GPU_REFUSE(ENG " needs w '%s' of x's dtype %s, got %s", wn, xdnn_dtype_name(gg->t[cp->x].dtype),
                   xdnn_dtype_name(gg->t[cp->w].dtype));
    if (k->K % 8 != 0)
        GPU_REFUSE(ENG " needs K %% 8 == 0 (16-byte GEMM rows of %s '%s'), got K=%" PRId64,
                   s->wgrad || s->dgrad ? "dy" : "y", yn, k->K);
    kim_geom *g = &s->g;
    *g = (kim_geom){.N = k->N, .C = k->C, .K = k->K, .H = k->in[1], .W = k->in[2], .OH = k->out[1],
                    .OW = k->out[2], .R = k->win[1], .S = k->win[2], .sh = k->stride[1], .sw = k->stride[2],
                    .dh = k->dil[1], .dw = k->dil[2], .ph = k->pad[1], .pw = k->pad[2], .sxn = k->sx[0],
                    .sxc = k->sx[1], .sxh = k->sx[3], .sxw = k->sx[4], .swk = k->sw[0], .swc = k->sw[1],
                    .swr = k->sw[3], .sws = k->sw[4]};
    g->ldr = (g->S * g->C + 7) / 8 * 8;
    g->Kc = g->R * g->ldr;
    const int64_t ydims[4] = {g->K, g->OW, g->OH, g->N};
    if (gg->t[cp->y].view_of >= 0 || !packed_rows(ydims, k->sy))
        GPU_REFUSE(ENG " needs %s '%s' packed channels-last (the GEMM's row-major [N*out, K]), not a view",
                   s->wgrad || s->dgrad ? "dy" : "y", yn);
    s->M = g->N * g->OH * g->OW;
    if (s->M < 1)
        GPU_REFUSE(ENG ": %s has no output pixel", cp->node->name);
    if (s->one && !cim_one_rules(gg, s, why, len))
        return false;
    const int64_t target = ((int64_t)256 << 20) / (g->Kc * 2); /* rows of a 256 MiB chunk of A */
    if (s->one)
        cim_one_chunks(s, target);
    else
        cim_stem_chunks(s, target);
    const int64_t rows = s->rows;
    if ((!s->inplace && rows * g->Kc >= ((int64_t)1 << 31) / 8) || s->M >= ((int64_t)1 << 31))
        GPU_REFUSE(ENG ": a chunk of %" PRId64 " rows x %" PRId64 " columns (or N*out = %" PRId64 ") passes the "
                   "kernels' 32-bit indices", rows, g->Kc, s->M);
    s->item = rows / s->split;
    s->full = (s->M - 1) / rows;
    s->last = s->M - s->full * rows;
    /* dw written by the one GEMM: a packed [K, C] (swc 1, swk C) of a type cuBLASLt's f32-accumulating
     * kernels store from 16-bit operands (the operands' own, or f32) */
    const bool w_packed = gg->t[cp->w].view_of < 0 && g->swc == 1 && g->swk == g->C; /* [K, C] row-major */
    if (s->wgrad)
        s->direct = s->one && s->split == 1 && s->full == 0 && w_packed && (k->dt_w == k->dt_x || k->dt_w == KDT_F32);
    else if (s->one && !w_packed) /* any 1x1 w of KCRS or KRSC layout is; a transposing view is copied first */
        GPU_REFUSE(ENG " needs w '%s' as the packed [K, C] for a 1x1 %s (the GEMM reads it in place), got strides "
                   "k=%" PRId64 " c=%" PRId64 "%s", wn, cim_op(s), g->swk, g->swc,
                   gg->t[cp->w].view_of >= 0 ? ", a view" : "");
    else
        s->direct = s->one; /* w of x's dtype (checked above) read in place */
    s->a_off = GPU_LT_LOWP_WORKSPACE;
    s->w_off = s->a_off + (s->inplace ? 0 : up256((size_t)(rows * g->Kc * 2)));
    s->ws_bytes = s->w_off + (s->direct ? 0 : up256((size_t)(g->K * g->Kc) * (s->wgrad ? 4 * (size_t)s->split : 2)));
    return true;
}

static bool cim_supports(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    cim_shape s;
    if (!cim_analyze(pl, p, &s, why, len))
        return false;
    if (dev && dev->cc_major < 8)
        GPU_REFUSE(ENG " needs bf16/f16 cuBLASLt kernels of sm_80 or newer, device is sm_%d%d", dev->cc_major,
                   dev->cc_minor);
    return true;
}

/* A written by the im2col and read back by the GEMM (none when x is read
 * in place), the wgrad's f32 partials zeroed, accumulated and summed, with
 * x (the pixels read), w, y (dy), at 2.6 TB/s (DRAM: a 256 MiB chunk does
 * not stay in L2), or the GEMM on the reduction Kc (useful + padded) if
 * that bounds: 400 TFLOP/s for the stem (a K = 64 wide GEMM is far from the
 * 8192^3 peak) and for the 1x1 fwd and dgrad (short reductions of 64 ..
 * 2048 onto 64 .. 2048 columns; kept below conv_igemm_wgmma's ~430 until
 * measured, so that only the DRAM-bound ones move here), 550 for the 1x1
 * wgrad (a long reduction onto outputs of 64 x 64 and up); plus
 * ~6 us per chunk (measured on the stem: its GEMM's ramp and tail) and 4 us
 * for the other launches (none for an in-place GEMM that touches w itself).
 * ResNet's 1x1 convs at N = 256 are DRAM-bound wherever K*C/(K+C) is below
 * ~250 FLOP/byte: 64 -> 256 at 56x56 (514 MB) models at 204 us, against the
 * 480-500 us that conv_igemm measured (session 8). */
static double cim_cost(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    cim_shape s;
    char why[256];
    if (!cim_analyze(pl, p, &s, why, sizeof why))
        return 1e30;
    const kim_geom *g = &s.g;
    const double a_bytes = s.inplace ? 0.0 : 2.0 * (double)s.M * (double)g->Kc * 2.0;
    const double part_bytes = s.wgrad && !s.direct ? 3.0 * (double)s.split * (double)(g->K * g->Kc) * 4.0 : 0.0;
    /* a strided 1x1 (wgrad, fwd) reads only the pixels its stride keeps, M of x's N*H*W */
    const double unread = s.one ? (double)(g->N * g->H * g->W - s.M) * (double)g->C * 2.0 : 0.0;
    const double mem = (a_bytes + part_bytes + p->bytes - unread) / 2.6e6;
    const double math = 2.0 * (double)s.M * (double)g->K * (double)g->Kc / (s.one && s.wgrad ? 550.0e6 : 400.0e6);
    return (mem > math ? mem : math) + 6.0 * (double)(s.full + 1) + (s.inplace && s.direct ? 0.0 : 4.0);
}

static size_t cim_workspace(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    cim_shape s;
    char why[256];
    return cim_analyze(pl, p, &s, why, sizeof why) ? s.ws_bytes : 0;
}

static cudaDataType_t cim_type(int kdt)
{
    return kdt == KDT_BF16 ? CUDA_R_16BF : kdt == KDT_F32 ? CUDA_R_32F : CUDA_R_16F;
}

/* The GEMM of `items` items of `rows` pixels each (fwd: items 1). */
static xdnn_status cim_plan(gpu_ctx *c, const cim_shape *s, int64_t rows, int64_t items, const char *who,
                            gpu_lt_gemm *lg, xdnn_diags_t *d)
{
    const kim_geom *g = &s->g;
    const cudaDataType_t t = cim_type(s->cp.kp.dt_x);
    const uint64_t Kc = (uint64_t)g->Kc, K = (uint64_t)g->K, R = (uint64_t)rows;
    if (s->dgrad) { /* dx^T [C x rows] = Wr [C x K] (row-major [K, C] read column-major) . dy^T [K x rows] */
        const gpu_lt_mat wr = {t, Kc, K, (int64_t)Kc, 1, 0}, dy = {t, K, R, (int64_t)K, 1, 0};
        const gpu_lt_mat dx = {t, Kc, R, (int64_t)Kc, 1, 0};
        return gpu_lt_gemm_plan(c, CUBLAS_COMPUTE_32F, CUDA_R_32F, false, false, &wr, &dy, &dx, GPU_LT_LOWP_WORKSPACE,
                                who, lg, d);
    }
    if (!s->wgrad) { /* y^T [K x rows] = Wr^T . A^T (column-major) */
        const gpu_lt_mat wr = {t, Kc, K, (int64_t)Kc, 1, 0}, a = {t, Kc, R, (int64_t)Kc, 1, 0};
        const gpu_lt_mat y = {t, K, R, (int64_t)K, 1, 0};
        return gpu_lt_gemm_plan(c, CUBLAS_COMPUTE_32F, CUDA_R_32F, true, false, &wr, &a, &y, GPU_LT_LOWP_WORKSPACE,
                                who, lg, d);
    }
    /* dWr^T [Kc x K] (= row-major [K, Kc]) = A^T . dy, per item; direct: dw itself ([K, C] row-major) */
    const int32_t b = (int32_t)items;
    const gpu_lt_mat a = {t, Kc, R, (int64_t)Kc, b, (int64_t)(R * Kc)}, dy = {t, K, R, (int64_t)K, b, (int64_t)(R * K)};
    const gpu_lt_mat dw = {s->direct ? cim_type(s->cp.kp.dt_w) : CUDA_R_32F, Kc, K, (int64_t)Kc, b, (int64_t)(K * Kc)};
    return gpu_lt_gemm_plan(c, CUBLAS_COMPUTE_32F, CUDA_R_32F, false, true, &a, &dy, &dw, GPU_LT_LOWP_WORKSPACE, who,
                            lg, d);
}

/* "1x1 wgrad: x read in place (A = x) + cublasLt algo=.. tile=.. splitk=..; dw written by the GEMM";
 * fwd: "1x1 fwd: x read in place (A = x) + cublasLt ...; w read in place" */
static void cim_one_detail(const cim_shape *s, const gpu_lt_gemm *l0, char *buf, size_t len)
{
    const char *dir = s->wgrad ? "wgrad" : s->dgrad ? "dgrad" : "fwd";
    int n = s->dgrad ? snprintf(buf, len, "1x1 dgrad: dx = dy . W written in place")
            : s->inplace ? snprintf(buf, len, "1x1 %s: x read in place (A = x)", dir)
                         : snprintf(buf, len, "1x1 %s: x subsampled at stride %" PRId64 "x%" PRId64 " into A, %" PRId64
                                    " chunk(s) of %" PRId64 " pixels", dir, s->g.sh, s->g.sw, s->full + 1, s->rows);
    n += snprintf(buf + n, len - (size_t)n, " + cublasLt algo=%d tile=%d splitk=%d", l0->algo_id, l0->tile, l0->splitk);
    if (!s->wgrad)
        snprintf(buf + n, len - (size_t)n, "; w read in place");
    else if (s->direct)
        snprintf(buf + n, len - (size_t)n, "; dw written by the GEMM");
    else
        snprintf(buf + n, len - (size_t)n, "; %" PRId64 " f32 partial(s) summed into dw", s->split);
}

static xdnn_status cim_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d)
{
    cim_priv *cv = calloc(1, sizeof *cv);
    if (!cv)
        return XDNN_ERR_NOMEM;
    p->priv = cv;
    char why[512];
    if (!cim_analyze(c->plan, p, &cv->s, why, sizeof why)) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), ENG ": %s: %s", p->name, why);
        return XDNN_ERR_UNSUPPORTED;
    }
    const cim_shape *s = &cv->s;
    if (s->ws_bytes > p->ws_bytes) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), ENG ": %s: needs %zu workspace bytes, the plan gave %zu",
                   p->name, s->ws_bytes, p->ws_bytes);
        return XDNN_ERR_UNSUPPORTED;
    }
    char who[160];
    snprintf(who, sizeof who, ENG ": %s", p->name);
    /* [0] full chunks, [1] the last chunk's whole items, [2] wgrad's remainder rows */
    const int64_t last_items = s->wgrad ? s->last / s->item : 1, rem = s->wgrad ? s->last % s->item : 0;
    const int64_t shape[3][2] = {{s->item, s->split}, {s->wgrad ? s->item : s->last, last_items}, {rem, 1}};
    const bool want[3] = {s->full > 0, last_items > 0, rem > 0};
    for (int i = 0; i < 3; i++) {
        if (!want[i])
            continue;
        xdnn_status st = cim_plan(c, s, shape[i][0], shape[i][1], who, &cv->lt[i], d);
        if (st != XDNN_OK)
            return st;
        cv->have[i] = true;
    }
    const gpu_lt_gemm *l0 = &cv->lt[cv->have[0] ? 0 : cv->have[1] ? 1 : 2];
    if (s->one) {
        cim_one_detail(s, l0, cv->detail, sizeof cv->detail);
        return XDNN_OK;
    }
    snprintf(cv->detail, sizeof cv->detail,
             "per-row im2col (reduction %" PRId64 " = %" PRId64 " rows x %" PRId64 ", %" PRId64 " useful) + cublasLt "
             "%s algo=%d tile=%d; %" PRId64 " chunk(s) of %" PRId64 " pixels%s",
             s->g.Kc, s->g.R, s->g.ldr, s->g.R * s->g.S * s->g.C, s->wgrad ? "wgrad" : "fwd", l0->algo_id, l0->tile,
             s->full + 1, s->rows, s->wgrad ? ", batched" : "");
    if (s->wgrad)
        snprintf(cv->detail + strlen(cv->detail), sizeof cv->detail - strlen(cv->detail), " x %" PRId64, s->split);
    return XDNN_OK;
}

static xdnn_status cim_gemm(gpu_ctx *c, const gpu_lt_gemm *lg, const void *a, const void *b, void *dm, bool acc,
                            char *ws, cudaStream_t strm, xdnn_diags_t *d)
{
    const float one = 1.0f, beta = acc ? 1.0f : 0.0f;
    cublasStatus_t e = cublasLtMatmul(c->lt, lg->op, &one, a, lg->la, b, lg->lb, &beta, dm, lg->lc, dm, lg->lc,
                                      &lg->algo, ws, GPU_LT_LOWP_WORKSPACE, strm);
    return gpu_check_cublas(e, "cublasLtMatmul (" ENG ")", __FILE__, __LINE__, d);
}

static xdnn_status cim_execute(gpu_ctx *c, gpart *p, cudaStream_t strm, xdnn_diags_t *d)
{
    const cim_priv *cv = p->priv;
    const cim_shape *s = &cv->s;
    const kim_geom *g = &s->g;
    char *ws = c->ws + p->ws_offset, *a = ws + s->a_off, *wbuf = ws + s->w_off;
    char *x = c->dptr[s->cp.x]; /* x, or dx for dgrad */
    char *y = c->dptr[s->cp.y]; /* y, or dy for wgrad and dgrad */
    /* w itself where the GEMM touches it (direct), else Wr (fwd, dgrad) or the f32 partials (wgrad) */
    char *wm = s->direct ? (char *)c->dptr[s->cp.w] : wbuf;
    int ce;
    xdnn_status st = XDNN_OK;
    if (!s->wgrad && !s->direct && (ce = kim_pack_w_launch(g, c->dptr[s->cp.w], wbuf, strm)) != 0)
        return gpu_check_cuda((cudaError_t)ce, "kim_pack_w", __FILE__, __LINE__, d);
    if (s->dgrad) /* stride 1, packed dx: one GEMM over all N*H*W pixels */
        return cim_gemm(c, &cv->lt[1], wm, y, x, false, ws, strm, d);
    if (s->wgrad && !s->direct)
        CUDA_TRY(cudaMemsetAsync(wbuf, 0, (size_t)(s->split * g->K * g->Kc) * 4, strm));
    for (int64_t ch = 0; ch <= s->full && st == XDNN_OK; ch++) {
        const int64_t m0 = ch * s->rows, rows = ch < s->full ? s->rows : s->last;
        const char *am = s->inplace ? x + (size_t)(m0 * g->Kc) * 2 : a; /* A's rows m0 .. */
        if (!s->inplace && (ce = kim_im2col_launch(g, m0, rows, x, a, strm)) != 0)
            return gpu_check_cuda((cudaError_t)ce, "kim_im2col", __FILE__, __LINE__, d);
        char *ym = y + (size_t)(m0 * g->K) * 2;
        if (!s->wgrad) {
            st = cim_gemm(c, &cv->lt[ch < s->full ? 0 : 1], wm, am, ym, false, ws, strm, d);
            continue;
        }
        /* the chunk's whole items into partials 0 .. items-1, its remainder rows into partial 0 (direct: a
         * single GEMM, one item or the remainder, that overwrites dw) */
        const int64_t whole = ch < s->full ? s->rows : s->last / s->item * s->item;
        if (whole > 0)
            st = cim_gemm(c, &cv->lt[ch < s->full ? 0 : 1], am, ym, wm, !s->direct, ws, strm, d);
        if (st == XDNN_OK && rows > whole)
            st = cim_gemm(c, &cv->lt[2], am + (size_t)(whole * g->Kc) * 2, ym + (size_t)(whole * g->K) * 2, wm,
                          !s->direct, ws, strm, d);
    }
    if (st != XDNN_OK || !s->wgrad || s->direct)
        return st;
    ce = kim_unpack_dw_launch(g, (const float *)(void *)wbuf, (int)s->split, c->dptr[s->cp.w], s->cp.kp.dt_w, strm);
    return gpu_check_cuda((cudaError_t)ce, "kim_unpack_dw", __FILE__, __LINE__, d);
}

static void cim_release(gpart *p)
{
    cim_priv *cv = p->priv;
    if (!cv)
        return;
    for (int i = 0; i < 3; i++)
        if (cv->have[i])
            gpu_lt_destroy(cv->lt[i].op, cv->lt[i].la, cv->lt[i].lb, cv->lt[i].lc);
    free(cv);
    p->priv = NULL;
}

static const char *cim_detail(const gpart *p)
{
    const cim_priv *cv = p->priv;
    return cv ? cv->detail : "";
}

const gpu_engine gpu_engine_conv_im2col_gemm = {
    ENG,
    "conv / conv_wgrad with C < 8 (the image stem) as an im2col packed per filter row (reduction R x "
    "roundup(S*C, 8)) + cuBLASLt GEMMs in 256 MiB chunks, and the 1x1 conv_wgrad (C % 8 == 0, no pad) as one "
    "cuBLASLt GEMM dW = dy^T x (x read in place at stride 1, subsampled otherwise), the 1x1 conv y = x W^T (any "
    "stride) and conv_dgrad dx = dy W (stride 1) likewise: 1-/2-D, groups 1, f16/bf16, y/dy packed NHWC",
    cim_supports, cim_cost, cim_workspace, cim_build, cim_execute, cim_release, cim_detail,
};
