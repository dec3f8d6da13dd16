/* eng_conv_f32_gemm.c — conv_f32_gemm: f32 conv, conv_dgrad and conv_wgrad
 * (groups 1, 1-3-D, any layout) as an explicit im2col and cuBLASLt's f32
 * GEMM: CUBLAS_COMPUTE_32F (true f32) when the graph keeps tf32 off,
 * CUBLAS_COMPUTE_32F_FAST_TF32 when it allows tf32.
 *
 * Why: without it every f32 conv ran on conv_direct at 0.7-1.4 TFLOP/s,
 * 13.7-48.5x cuDNN's true-f32 kernels (bench/RESULTS-conv.md, session 10);
 * cuBLAS's f32 GEMM reaches ~51 TFLOP/s on the H100.
 *
 * With the column matrix cols [CRS][nb * PQ] of a chunk of nb images
 * (kern_conv_f32.h: row j = (c, t, r, s) in w's KCRS order, column
 * m = (n, pq)) and W the [K, CRS] matrix of w:
 *   fwd:   y_n [K, PQ]  = W . cols_n                 (batched over the chunk's
 *                                                     images, W's stride 0)
 *   dgrad: dcols_n [CRS, PQ] = W^T . dy_n            (batched), then col2im:
 *          each dx element sums its taps (a gather: deterministic, no atomics)
 *   wgrad: dW [K, CRS] += dy_chunk [K, nb*PQ] . cols^T   (one GEMM per chunk,
 *          its reduction the chunk's N*PQ pixels, beta 1 after the first)
 * Every operand is a strided matrix view (element (i, j) at i * rs + j * cs,
 * one of them 1): y, dy, dx and x are read and written in place wherever
 * their pixels form one stride (NCHW: pq stride 1 and the channel stride
 * the row stride; NHWC: channel stride 1 and the pixel stride the row
 * stride), so NCHW y is written by the GEMM itself, as is NHWC (the GEMM
 * computes the transpose).  A 1x1 window at stride 1 without pad needs no
 * im2col (x itself is cols; dgrad writes dx itself).  The wgrad's dy is
 * gathered into [K][nb * PQ] (the same kernel, a 1x1 window) unless its
 * pixels of the chunk form one stride (NHWC).  W is read in place when w
 * is a KCRS-packed [K, CRS] (any row stride), else packed first; the same
 * for the wgrad's dW (written in place, or into a buffer then unpacked).
 *
 * Small images (fwd P*Q <= 64, dgrad <= 256, measured): the per-image GEMMs
 * are short, so the chunk is one GEMM over all its nb * PQ columns ("flat"),
 * y scattered from (dy gathered into) a [K][nb * PQ] buffer by the same
 * kernels with a 1x1 window; XDNN_F32GEMM_FLAT=0 / 1 never / always.
 *
 * Chunks: the column buffer holds at most XDNN_F32GEMM_MB MiB (256) of
 * cols (and the wgrad's gathered dy), nb = that / the bytes per image,
 * at least 1; XDNN_F32GEMM_IMAGES=n forces nb (tests).  A full chunk and
 * the last one are two GEMM shapes planned at build.
 * Workspace: [cuBLASLt's 32 MiB][cols][dy gathered][W or dW packed].
 * XDNN_F32GEMM_OFF=1 refuses every conv (the A/B switch: the old engines
 * take them).
 *
 * Fused epilogues (conv_epi.h: the partitioner fuses a forward conv's
 * pointwise chain, a conv_dgrad's relu_bwd mask, whatever the engine):
 * without them every f32 conv + bias + relu fell to conv_direct.
 *   cuBLASLt's own, in the GEMM's store (the per-image forward, y f32): a
 *   chain [scale] [adds] [relu] is D = act(alpha A.B + C): the scale is
 *   alpha, the relu CUBLASLT_EPILOGUE_RELU (pointwise, so either
 *   orientation of D), and C (beta 1) is either one per-image
 *   operand of y's own layout (a residual, read in place) or a broadcast
 *   matrix of one image's y, batch stride 0, that a small pass fills with
 *   the sum of the operands read the same for every image (the bias, any
 *   [1, K, ...] or scalar add) before the GEMMs: L2-resident, it costs no
 *   DRAM traffic.  CUBLASLT_EPILOGUE_BIAS is not used: its vector runs
 *   along D's rows, which are the pixels when y is NCHW (D = y^T); nor
 *   CUBLASLT_EPILOGUE_GELU: its tanh GELU is not pointwise_modes.def's
 *   formula (session 11, H100: 5e-6 off at |y| ~ 0.1, rel 5e-5, past the
 *   true-f32 tolerance), so a gelu takes the pass.
 *   A pass of its own (kf32_epi) for anything else: in place on y after
 *   the GEMM, or (the flat form) fused into the scatter from the y buffer;
 *   an output cast (y f16 / bf16) takes the flat form, the GEMM writing
 *   f32.  The dgrad's relu_bwd mask is applied in the col2im gather (it
 *   reads dx's position anyway), or in place when dx is the GEMM's own.
 * XDNN_F32GEMM_LTEPI=0 puts every epilogue on the pass (the A/B). */
#include "gpu/conv_analyze.h"
#include "gpu/conv_epi.h"
#include "gpu/engine.h"
#include "gpu/kern_conv_f32.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ENG "conv_f32_gemm"

/* A strided matrix view: element (i, j) at i * rs + j * cs, batch item b
 * at b * bs, chunk c at c * adv (elements). */
typedef struct fmat {
    int64_t rs, cs, bs, adv;
} fmat;

/* One GEMM C [M x Nn] = A [M x Kr] . B [Kr x Nn] per batch item (Kr of
 * a full chunk for the wgrad: nb * PQ). */
typedef struct fgemm {
    int64_t M, Nn, Kr;
    fmat a, b, c;
} fgemm;

typedef struct f32_shape {
    gconv_problem cp;
    kf32_geom g, gdy;      /* x's geometry; dy's as a 1x1 "conv" (the wgrad's gather) */
    bool tf32, wgrad, dgrad;
    bool x_inplace;        /* cols = x (fwd, wgrad) or dcols = dx (dgrad): a 1x1, stride 1, no pad */
    bool flat;             /* fwd / dgrad as one GEMM over the chunk's nb * PQ columns (y through a buffer) */
    bool dy_inplace;       /* wgrad: dy's chunk pixels form one stride */
    bool w_inplace;        /* w (dw) is a KCRS-packed [K, CRS] */
    bool epi;              /* a fused epilogue or an output cast */
    bool lt_epi;           /* ... in cuBLASLt's store (else the pass / the col2im) */
    int lt_act;            /* CUBLASLT_EPILOGUE_RELU / GELU / DEFAULT */
    float alpha;           /* the leading scale folded into the GEMM */
    int res_step;          /* the residual read as C in place, or -1 */
    kconv_epi bc;          /* the broadcast C's steps (added to 0), bc.n = 0: none */
    int bc_t[KEPI_MAX];    /* their operand tensors */
    int64_t bc_elems;      /* one image of y's span (the broadcast C) */
    int64_t K, CRS, PQ, nb, full, last; /* images per chunk; full chunks; images of the last (1 .. nb) */
    fgemm gm;
    size_t cols_off, dy_off, w_off, bc_off, ws_bytes;
} f32_shape;

typedef struct f32_priv {
    f32_shape s;
    gpu_lt_gemm lt[2];     /* [0] a full chunk, [1] the last */
    bool have[2], swap[2]; /* swap: cuBLASLt computes C^T = B^T A^T (C row-major) */
    bool lt_epi;           /* the plans carry the epilogue (false: cuBLASLt had none; the pass runs it) */
    int base_al;           /* the alignment (bytes) the plans assume of x, w, y and the residual */
    char detail[384];
} f32_priv;

static size_t up256(size_t v) { return (v + 255) / 256 * 256; }

static int64_t env_int(const char *name, int64_t dflt)
{
    const char *v = getenv(name);
    return v && atoll(v) > 0 ? atoll(v) : dflt;
}

static const char *f32_op(const f32_shape *s) { return s->wgrad ? "conv_wgrad" : s->dgrad ? "conv_dgrad" : "conv"; }

/* Do the n dims (sizes, strides) form one stride e (dim i's stride = e *
 * the product of the sizes after it; size-1 dims take any)?  e = 1 when
 * all are 1. */
static bool one_stride(int n, const int64_t *size, const int64_t *st, int64_t *e)
{
    int64_t inner = 1, found = 0;
    for (int i = n - 1; i >= 0; i--) {
        if (size[i] > 1) {
            if (!found) {
                if (st[i] <= 0 || st[i] % inner != 0)
                    return false;
                found = st[i] / inner;
            } else if (st[i] != found * inner) {
                return false;
            }
        }
        inner *= size[i];
    }
    *e = found ? found : 1;
    return true;
}

/* The view as a column-major matrix of rows x cols (ld >= rows). */
static bool col_major(int64_t rows, int64_t cols, int64_t rs, int64_t cs, int64_t *ld)
{
    if (!(rows == 1 || rs == 1) || !(cols == 1 || cs >= rows))
        return false;
    *ld = cols == 1 ? rows : cs;
    return true;
}

/* The cuBLASLt operand of view m (rows x cols): stored column-major, or
 * row-major read transposed. */
static bool lt_operand(int64_t rows, int64_t cols, const fmat *m, gpu_lt_mat *o, bool *trans)
{
    int64_t ld;
    if (col_major(rows, cols, m->rs, m->cs, &ld)) {
        *o = (gpu_lt_mat){CUDA_R_32F, (uint64_t)rows, (uint64_t)cols, ld, 1, m->bs};
        *trans = false;
        return true;
    }
    if (col_major(cols, rows, m->cs, m->rs, &ld)) {
        *o = (gpu_lt_mat){CUDA_R_32F, (uint64_t)cols, (uint64_t)rows, ld, 1, m->bs};
        *trans = true;
        return true;
    }
    return false;
}

static fmat fm_t(fmat m)
{
    const int64_t r = m.rs;
    m.rs = m.cs;
    m.cs = r;
    return m;
}

/* The GEMM as cuBLASLt sees it: D (col-major) = op(a) op(b); swap when C
 * is row-major (C^T = B^T A^T).  False when a view is neither layout. */
static bool lt_shape(const fgemm *f, int64_t Kr, gpu_lt_mat *a, bool *ta, gpu_lt_mat *b, bool *tb, gpu_lt_mat *d,
                     bool *swap)
{
    bool tc;
    if (!lt_operand(f->M, f->Nn, &f->c, d, &tc))
        return false;
    *swap = tc;
    if (!tc)
        return lt_operand(f->M, Kr, &f->a, a, ta) && lt_operand(Kr, f->Nn, &f->b, b, tb);
    *d = (gpu_lt_mat){0};
    const fmat ct = fm_t(f->c), at = fm_t(f->a), bt = fm_t(f->b);
    return lt_operand(f->Nn, f->M, &ct, d, &tc) && !tc && lt_operand(f->Nn, Kr, &bt, a, ta) &&
           lt_operand(Kr, f->M, &at, b, tb);
}

/* x, y (or dx, dy) as [C or K, pixels] views of one image: the channel
 * stride, and the pixels' one stride; false when the pixels form none. */
static bool act_view(const int64_t *sp, const int64_t *s5, fmat *m)
{
    int64_t e;
    if (!one_stride(3, sp, s5 + 2, &e))
        return false;
    *m = (fmat){s5[1], e, s5[0], 0};
    return true;
}

/* Is view m of rows x cols a cuBLASLt operand (either layout)? */
static bool lt_ok(int64_t rows, int64_t cols, const fmat *m)
{
    gpu_lt_mat o;
    bool t;
    return lt_operand(rows, cols, m, &o, &t);
}

/* Does the forward's chain fit cuBLASLt's store, D = act(alpha A.B + C)?
 * [scale] [add ...] [relu], the adds either all broadcast over
 * the images (summed into one image's C) or one residual of y's layout y.
 * Fills lt_epi, alpha, lt_act, res_step, bc; false leaves the pass. */
static void lt_epi_match(f32_shape *s, const fmat *y)
{
    const char *v = getenv("XDNN_F32GEMM_LTEPI");
    if ((v && strcmp(v, "0") == 0) || s->cp.kp.dt_y != KDT_F32)
        return;
    const kconv_epi *e = &s->cp.epi;
    kconv_epi bc = {0};
    int i = 0, res = -1;
    float alpha = 1.0f;
    if (i < e->n && e->s[i].op == KEPI_MUL_S)
        alpha = e->s[i++].p0;
    for (; i < e->n && (e->s[i].op == KEPI_ADD_T || e->s[i].op == KEPI_ADD_S); i++) {
        const kepi_step *st = &e->s[i];
        fmat r;
        if (st->op == KEPI_ADD_T && st->st[0] != 0) { /* per image: C itself, in y's layout */
            if (res >= 0 || st->dt != KDT_F32 || !act_view(s->g.out, st->st, &r) || r.rs != y->rs || r.cs != y->cs)
                return;
            res = i;
        } else {
            s->bc_t[bc.n] = s->cp.epi_t[i];
            bc.s[bc.n++] = *st;
        }
    }
    int act = CUBLASLT_EPILOGUE_DEFAULT;
    if (i < e->n && e->s[i].op == KEPI_RELU && e->s[i].p0 == 0 && isinf(e->s[i].p1) && e->s[i].p1 > 0 &&
        e->s[i].p2 == 0)
        act = CUBLASLT_EPILOGUE_RELU, i++;
    if (i < e->n || (res >= 0 && bc.n > 0))
        return;
    s->lt_epi = true;
    s->alpha = alpha;
    s->lt_act = act;
    s->res_step = res;
    s->bc = bc;
    const kconv_params *k = &s->cp.kp;
    s->bc_elems = 1;
    for (int d = 1; d < 5; d++)
        s->bc_elems += ((d == 1 ? s->K : s->g.out[d - 2]) - 1) * k->sy[d];
}

static bool f32_analyze(const gplan *pl, const gpart *p, f32_shape *s, char *why, size_t len)
{
    memset(s, 0, sizeof *s);
    const char *off = getenv("XDNN_F32GEMM_OFF");
    if (off && strcmp(off, "0") != 0)
        GPU_REFUSE(ENG " is switched off (XDNN_F32GEMM_OFF=%s)", off);
    gconv_problem *cp = &s->cp;
    if (!gpu_conv_analyze(pl, p, cp, why, len))
        return false;
    const ggraph *gg = pl->g;
    const kconv_params *k = &cp->kp;
    s->wgrad = cp->dir == GCONV_WGRAD;
    s->dgrad = cp->dir == GCONV_DGRAD;
    s->epi = cp->epi.n > 0 || (!s->dgrad && !s->wgrad && k->dt_y != KDT_F32);
    if (k->G != 1)
        GPU_REFUSE(ENG " needs groups 1 for %s %s, got groups=%" PRId64 " (grouped convs run on conv_direct or "
                   "conv_dw)", f32_op(s), cp->node->name, k->G);
    const bool cast = !s->dgrad && !s->wgrad && (k->dt_y == KDT_F16 || k->dt_y == KDT_BF16);
    if (k->dt_x != KDT_F32 || k->dt_w != KDT_F32 || (k->dt_y != KDT_F32 && !cast))
        GPU_REFUSE(ENG " needs x, w and y (dx, dw, dy) all f32, got %s, %s, %s", xdnn_dtype_name(gg->t[cp->x].dtype),
                   xdnn_dtype_name(gg->t[cp->w].dtype), xdnn_dtype_name(gg->t[cp->y].dtype));
    s->tf32 = gg->tf32;
    kf32_geom *g = &s->g;
    *g = (kf32_geom){.N = k->N, .C = k->C};
    for (int i = 0; i < 3; i++) {
        g->in[i] = k->in[i];
        g->win[i] = k->win[i];
        g->out[i] = k->out[i];
        g->stride[i] = k->stride[i];
        g->dil[i] = k->dil[i];
        g->pad[i] = k->pad[i];
    }
    memcpy(g->sx, k->sx, sizeof g->sx);
    s->K = k->K;
    const int64_t taps = g->win[0] * g->win[1] * g->win[2];
    s->CRS = g->C * taps;
    s->PQ = g->out[0] * g->out[1] * g->out[2];
    const int64_t HW = g->in[0] * g->in[1] * g->in[2];
    if (s->PQ < 1 || g->N < 1 || s->K < 1 || s->CRS < 1)
        GPU_REFUSE(ENG ": %s has an empty dimension", cp->node->name);
    const char *yrole = s->wgrad || s->dgrad ? "dy" : "y", *xrole = s->dgrad ? "dx" : "x";
    fmat y, x;
    if (!act_view(g->out, k->sy, &y))
        GPU_REFUSE(ENG " needs %s '%s' with its pixels at one stride (NCHW- or NHWC-like, 1-3-D), got strides "
                   "[%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "]", yrole, gg->t[cp->y].name,
                   k->sy[0], k->sy[1], k->sy[2], k->sy[3], k->sy[4]);
    /* a 1x1 window at stride 1 without pad: x (dx) has y's pixels, cols is x itself */
    bool unit = taps == 1;
    for (int i = 0; i < 3; i++)
        unit = unit && g->stride[i] == 1 && g->pad[i] == 0 && g->in[i] == g->out[i];
    s->x_inplace = unit && !cast && act_view(g->in, g->sx, &x) && lt_ok(g->C, s->PQ, &x);
    if (s->wgrad) /* x as the [N*PQ, C] matrix colsT: its pixels of all images at one stride */
        s->x_inplace = s->x_inplace && (g->N == 1 || g->sx[0] == s->PQ * x.cs) && lt_ok(g->N * s->PQ, g->C, &(fmat){x.cs, x.rs, 0, 0});
    /* w (dw) as W [K, CRS] in place: (c, t, r, s) at one unit stride */
    const int64_t wsz[4] = {g->C, g->win[0], g->win[1], g->win[2]}, wst[4] = {k->sw[1], k->sw[2], k->sw[3], k->sw[4]};
    int64_t we;
    s->w_inplace = one_stride(4, wsz, wst, &we) && we == 1 && (s->K == 1 || k->sw[0] >= s->CRS);
    const fmat W = {s->w_inplace && s->K > 1 ? k->sw[0] : s->CRS, 1, 0, 0};
    /* chunks: bytes of cols (and the wgrad's gathered dy) per image */
    s->dy_inplace = s->wgrad && (g->N == 1 || k->sy[0] == s->PQ * y.cs) && lt_ok(s->K, g->N * s->PQ, &y);
    /* small images make the per-image GEMMs short (M = P*Q rows): one GEMM over the chunk's columns instead,
     * y (dy) scattered from (gathered into) a [K][nb * PQ] buffer by the col2im (im2col) kernel with a 1x1
     * window.  Measured (session 11, H100, r50 at N = 32, A/B in one call): the forward gains at 7x7 only
     * (P*Q = 49: 0.272 -> 0.213 ms true f32, 0.172 -> 0.084 tf32) and loses from 14x14 up (196: 0.255 ->
     * 0.267; 784: 0.290 -> 0.306, the 1x1 s2 0.220 -> 0.319, tf32 0.084 -> 0.216: the y buffer's traffic);
     * the dgrad gains at 14x14 too (0.290 -> 0.259) and loses at 28x28 (0.316 -> 0.331).
     * XDNN_F32GEMM_FLAT=0 / 1: never / wherever x (dx) is not read in place (A/B, tests) */
    const char *fl = getenv("XDNN_F32GEMM_FLAT");
    s->flat = !s->wgrad && !s->x_inplace && (cast || (fl ? strcmp(fl, "0") != 0 : s->PQ <= (s->dgrad ? 256 : 64)));
    const bool dy_buf = (s->wgrad && !s->dy_inplace) || s->flat;
    const int64_t per_img = (s->x_inplace ? 0 : s->CRS * s->PQ) + (dy_buf ? s->K * s->PQ : 0);
    int64_t nb = g->N;
    if (per_img > 0)
        nb = env_int("XDNN_F32GEMM_IMAGES", ((int64_t)env_int("XDNN_F32GEMM_MB", 256) << 20) / (per_img * 4));
    nb = nb < 1 ? 1 : nb > g->N ? g->N : nb;
    /* the kernels index a chunk in 32 bits: fewer images per chunk past 2^31 elements (x read in place has no
     * column buffer to bound it: a 1x1 at N = 4096, 256 x 56 x 56, is 3.3e9 elements of x) */
    int64_t img_el = g->C * HW > s->K * s->PQ ? g->C * HW : s->K * s->PQ;
    if (!s->x_inplace && s->CRS * s->PQ > img_el)
        img_el = s->CRS * s->PQ;
    if (nb > 1 && nb * img_el >= ((int64_t)1 << 31))
        nb = (((int64_t)1 << 31) - 1) / img_el > 1 ? (((int64_t)1 << 31) - 1) / img_el : 1;
    if ((!s->x_inplace && s->CRS * nb * s->PQ >= ((int64_t)1 << 31)) || nb * g->C * HW >= ((int64_t)1 << 31) ||
        nb * s->K * s->PQ >= ((int64_t)1 << 31))
        GPU_REFUSE(ENG ": a chunk of %" PRId64 " image(s) passes the kernels' 32-bit indices (CRS=%" PRId64
                   ", PQ=%" PRId64 ")", nb, s->CRS, s->PQ);
    s->nb = nb;
    s->full = (g->N - 1) / nb;
    s->last = g->N - s->full * nb;
    const int64_t ncols = nb * s->PQ;
    const fmat cols = {ncols, 1, s->PQ, 0}; /* [CRS][nb * PQ], image b at column b * PQ */
    const fmat buf = {ncols, 1, 0, 0};      /* the same, or [K][nb * PQ], as one matrix */
    fgemm *f = &s->gm;
    if (s->flat && s->dgrad) /* dcols [CRS x nb*PQ] = W^T . dy gathered [K x nb*PQ] */
        *f = (fgemm){s->CRS, ncols, s->K, fm_t(W), buf, buf};
    else if (s->flat) /* y buffer [K x nb*PQ] = W . cols */
        *f = (fgemm){s->K, ncols, s->CRS, W, buf, buf};
    else if (s->wgrad) { /* dW [K x CRS] = dy [K x nb*PQ] . cols^T */
        fmat dyv = s->dy_inplace ? (fmat){y.rs, y.cs, 0, nb * k->sy[0]} : cols;
        fmat xv = s->x_inplace ? (fmat){x.cs, x.rs, 0, nb * k->sx[0]} : fm_t(cols);
        dyv.bs = xv.bs = 0;
        *f = (fgemm){s->K, s->CRS, ncols, dyv, xv, W};
    } else if (s->dgrad) { /* dcols_n [CRS x PQ] = W^T . dy_n */
        const fmat dc = s->x_inplace ? (fmat){x.rs, x.cs, x.bs, nb * x.bs} : cols;
        *f = (fgemm){s->CRS, s->PQ, s->K, fm_t(W), (fmat){y.rs, y.cs, y.bs, nb * y.bs}, dc};
    } else { /* y_n [K x PQ] = W . cols_n */
        const fmat xc = s->x_inplace ? (fmat){x.rs, x.cs, x.bs, nb * x.bs} : cols;
        *f = (fgemm){s->K, s->PQ, s->CRS, W, xc, (fmat){y.rs, y.cs, y.bs, nb * y.bs}};
    }
    gpu_lt_mat a, b, d;
    bool ta, tb, swap;
    if (!lt_shape(f, f->Kr, &a, &ta, &b, &tb, &d, &swap))
        GPU_REFUSE(ENG " cannot view %s's operands as GEMM matrices (%s '%s' strides [%" PRId64 ", %" PRId64 ", %" PRId64
                   ", %" PRId64 ", %" PRId64 "]: the channel or the pixel stride must be 1)", f32_op(s), xrole,
                   gg->t[cp->x].name, k->sx[0], k->sx[1], k->sx[2], k->sx[3], k->sx[4]);
    s->gdy = (kf32_geom){.N = g->N, .C = s->K};
    for (int i = 0; i < 3; i++) {
        s->gdy.in[i] = s->gdy.out[i] = g->out[i];
        s->gdy.win[i] = s->gdy.stride[i] = s->gdy.dil[i] = 1;
    }
    memcpy(s->gdy.sx, k->sy, sizeof s->gdy.sx);
    s->cols_off = GPU_LT_LOWP_WORKSPACE;
    s->dy_off = s->cols_off + (s->x_inplace ? 0 : up256((size_t)(s->CRS * ncols) * 4));
    s->w_off = s->dy_off + (dy_buf ? up256((size_t)(s->K * ncols) * 4) : 0);
    s->bc_off = s->w_off + (s->w_inplace ? 0 : up256((size_t)(s->K * s->CRS) * 4));
    s->res_step = -1;
    s->alpha = 1.0f;
    s->lt_act = CUBLASLT_EPILOGUE_DEFAULT;
    if (s->epi && !s->dgrad && !s->flat)
        lt_epi_match(s, &y);
    s->ws_bytes = s->bc_off + (s->bc.n ? up256((size_t)s->bc_elems * 4) : 0);
    return true;
}

static bool f32_supports(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    f32_shape s;
    return f32_analyze(pl, p, &s, why, len);
}

/* The im2col's column matrix written and read back (and the gathered dy or
 * scattered y buffer, the dgrad's dcols before col2im) at 1.4 TB/s, before
 * the GEMM, bound by its FLOPs (true f32: 40 TFLOP/s of the measured 51 at
 * 8192^3; tf32: 250 of 391, the conv shapes being smaller) or by x, w and
 * y at 2.6 TB/s; ~6 us per chunk (its GEMM's ramp and tail, as
 * conv_im2col_gemm measured) and 4 for the other launches.  The 1.4 is
 * measured (session 11, H100, N = 32 tf32 forwards): the 3x3 layers at
 * 56x56 and 14x14 and the C = 3 stem took 372, 128 and 419 us against 370,
 * 122 and 377 modelled so; the 1x1 ones (x in place) 32-70 us against
 * 30-59.  At 2.6 the planner gave the stem to this engine, which conv_igemm
 * runs in 311 us. */
static double f32_cost(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    f32_shape s;
    char why[256];
    if (!f32_analyze(pl, p, &s, why, sizeof why))
        return 1e30;
    const double n = (double)s.g.N, pq = (double)s.PQ;
    double side = s.x_inplace ? 0.0 : 2.0 * n * (double)s.CRS * pq * 4.0;
    if ((s.wgrad && !s.dy_inplace) || s.flat)
        side += 2.0 * n * (double)s.K * pq * 4.0;
    const double flops = 2.0 * n * (double)s.K * (double)s.CRS * pq;
    const double math = flops / (s.tf32 ? 250.0e6 : 40.0e6), mem = p->bytes / 2.6e6;
    /* the epilogue's pass in place reads and writes y (dx) once more; the flat form's scatter and the col2im
     * carry it, and cuBLASLt's store does */
    double epi = 0.0;
    if (s.epi && !s.lt_epi && !s.flat && (s.x_inplace || !s.dgrad))
        epi = 2.0 * n * (double)(s.dgrad ? s.g.C : s.K) * pq * 4.0 / 2.6e6 + 4.0;
    return side / 1.4e6 + (math > mem ? math : mem) + epi + 6.0 * (double)(s.full + 1) + 4.0;
}

static size_t f32_workspace(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    f32_shape s;
    char why[256];
    return f32_analyze(pl, p, &s, why, sizeof why) ? s.ws_bytes : 0;
}

/* The largest of 16, 8, 4 dividing every byte offset in v[0..n). */
static int align_of(const int64_t *v, int n)
{
    int al = 16;
    for (int i = 0; i < n; i++)
        while (al > 4 && (v[i] * 4) % al != 0)
            al /= 2;
    return al;
}

/* The GEMM of a chunk of `images` images; base_al: the alignment of the
 * tensors' own addresses (workspace buffers are 256-byte aligned). */
static xdnn_status f32_plan(gpu_ctx *c, const f32_shape *s, int64_t images, int base_al, bool lt_epi,
                            const char *who, gpu_lt_gemm *lg, bool *swap, xdnn_diags_t *d)
{
    fgemm f = s->gm;
    const int64_t Kr = s->wgrad ? images * s->PQ : f.Kr;
    if (s->flat)
        f.Nn = images * s->PQ;
    gpu_lt_mat a, b, dm;
    bool ta, tb;
    if (!lt_shape(&f, Kr, &a, &ta, &b, &tb, &dm, swap)) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), "%s: the GEMM's operands have no matrix view", who);
        return XDNN_ERR_UNSUPPORTED;
    }
    const int32_t batch = s->wgrad || s->flat ? 1 : (int32_t)images;
    /* every item's and every chunk's address: the views' strides and chunk advances */
    const fmat *ops[3] = {*swap ? &f.b : &f.a, *swap ? &f.a : &f.b, &f.c};
    gpu_lt_mat *lts[3] = {&a, &b, &dm};
    int align[3];
    for (int i = 0; i < 3; i++) {
        const int64_t offs[3] = {lts[i]->ld, batch > 1 ? ops[i]->bs : 0, ops[i]->adv};
        lts[i]->batch = batch;
        lts[i]->stride = batch > 1 ? ops[i]->bs : 0;
        align[i] = align_of(offs, 3);
        align[i] = align[i] < base_al ? align[i] : base_al;
    }
    /* C (beta 1): D's layout, its items the residual's images or the broadcast image (stride 0) */
    gpu_lt_mat cm = dm;
    const bool has_c = lt_epi && (s->res_step >= 0 || s->bc.n > 0);
    if (has_c && s->res_step >= 0) {
        const int64_t rs0 = s->cp.epi.s[s->res_step].st[0], offs[3] = {dm.ld, rs0, images * rs0};
        const int al = align_of(offs, 3);
        cm.stride = batch > 1 ? rs0 : 0;
        align[2] = align[2] < al ? align[2] : al;
    } else if (has_c) {
        cm.stride = 0;
    }
    return gpu_lt_gemm_plan_aligned(c, s->tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F, ta, tb,
                                    &a, &b, &dm, GPU_LT_LOWP_WORKSPACE, align,
                                    lt_epi ? s->lt_act : CUBLASLT_EPILOGUE_DEFAULT, has_c ? &cm : NULL, who, lg, d);
}

/* the tensors whose addresses the GEMM plans' alignment covers: x, w, y and the residual (y when none) */
static void f32_roles(const f32_shape *s, int roles[4])
{
    roles[0] = s->cp.x;
    roles[1] = s->cp.w;
    roles[2] = s->cp.y;
    roles[3] = s->res_step >= 0 ? s->cp.epi_t[s->res_step] : s->cp.y;
}

static void f32_release_plans(f32_priv *fv)
{
    for (int i = 0; i < 2; i++) {
        if (!fv->have[i])
            continue;
        gpu_lt_destroy(fv->lt[i].op, fv->lt[i].la, fv->lt[i].lb, fv->lt[i].lc);
        if (fv->lt[i].lcc)
            cublasLtMatrixLayoutDestroy(fv->lt[i].lcc);
        memset(&fv->lt[i], 0, sizeof fv->lt[i]);
        fv->have[i] = false;
    }
}

static xdnn_status f32_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d)
{
    f32_priv *fv = calloc(1, sizeof *fv);
    if (!fv)
        return XDNN_ERR_NOMEM;
    p->priv = fv;
    char why[512];
    if (!f32_analyze(c->plan, p, &fv->s, why, sizeof why)) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), ENG ": %s: %s", p->name, why);
        return XDNN_ERR_UNSUPPORTED;
    }
    const f32_shape *s = &fv->s;
    if (s->ws_bytes > p->ws_bytes) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), ENG ": %s: needs %zu workspace bytes, the plan gave %zu",
                   p->name, s->ws_bytes, p->ws_bytes);
        return XDNN_ERR_UNSUPPORTED;
    }
    char who[160];
    snprintf(who, sizeof who, ENG ": %s", p->name);
    /* cuBLASLt picks algorithms for the operands' alignment.  Where the addresses are bound before the build
     * (xdnn run) they set it; a plan built ahead of its buffers (the plan API: no addresses yet) assumes 16
     * bytes, what cudaMalloc and xdnn's workspace give, and its execute refuses an address that breaks it. */
    int base_al = 16, roles[4];
    f32_roles(s, roles);
    for (int i = 0; i < 4 && c->dptr; i++)
        while (base_al > 4 && c->dptr[roles[i]] && (uintptr_t)c->dptr[roles[i]] % (uintptr_t)base_al != 0)
            base_al /= 2;
    fv->base_al = base_al;
    const int64_t images[2] = {s->nb, s->last};
    const bool want[2] = {s->full > 0, s->full == 0 || s->last != s->nb};
    /* cuBLASLt's epilogue where the chain fits it; where it has no algorithm for it, the pass (quietly: d NULL) */
    fv->lt_epi = s->lt_epi;
    for (int i = 0; i < 2 && fv->lt_epi; i++) {
        if (want[i] && f32_plan(c, s, images[i], base_al, true, who, &fv->lt[i], &fv->swap[i], NULL) != XDNN_OK)
            fv->lt_epi = false;
        fv->have[i] = want[i];
    }
    if (!fv->lt_epi)
        f32_release_plans(fv);
    for (int i = 0; i < 2 && !fv->lt_epi; i++) {
        if (!want[i])
            continue;
        xdnn_status st = f32_plan(c, s, images[i], base_al, false, who, &fv->lt[i], &fv->swap[i], d);
        fv->have[i] = true; /* before the check: what a failed plan made is released with the rest */
        if (st != XDNN_OK)
            return st;
    }
    const gpu_lt_gemm *l0 = &fv->lt[fv->have[0] ? 0 : 1];
    snprintf(fv->detail, sizeof fv->detail,
             "%s %s: %s + cublasLt %s algo=%d tile=%d splitk=%d; %" PRId64 " chunk(s) of %" PRId64 " image(s)%s%s",
             s->wgrad ? "wgrad" : s->dgrad ? "dgrad" : "fwd", s->tf32 ? "tf32" : "f32",
             s->x_inplace ? (s->dgrad ? "dx written in place" : "x read in place")
                          : (s->dgrad ? "col2im" : "im2col"),
             s->tf32 ? "32F_FAST_TF32" : "32F", l0->algo_id, l0->tile, l0->splitk, s->full + 1, s->nb,
             s->w_inplace ? "" : s->wgrad ? "; dW unpacked" : "; w packed",
             s->flat ? (s->dgrad ? "; one GEMM, dy gathered" : "; one GEMM, y scattered")
             : s->wgrad && !s->dy_inplace ? "; dy gathered" : "");
    if (s->epi) {
        const size_t n = strlen(fv->detail);
        snprintf(fv->detail + n, sizeof fv->detail - n, "; epilogue %s%s",
                 fv->lt_epi ? (s->res_step >= 0 ? "in cublasLt, C = the residual"
                               : s->bc.n ? "in cublasLt, C = the broadcast bias" : "in cublasLt")
                 : s->dgrad && !s->x_inplace ? "in the col2im" : s->flat ? "in the scatter" : "by a pass",
                 s->cp.kp.dt_y != KDT_F32 && !s->dgrad ? ", y cast" : "");
        gconv_epi_append(&s->cp.epi, fv->detail, sizeof fv->detail);
    }
    return XDNN_OK;
}

/* D = alpha op(a) op(b) + C (cm; NULL: beta 1 on D itself when acc, else 0) */
static xdnn_status f32_gemm(gpu_ctx *c, const f32_priv *fv, int which, const void *a, const void *b, void *dm,
                            bool acc, const void *cm, float alpha, char *ws, cudaStream_t strm, xdnn_diags_t *d)
{
    const gpu_lt_gemm *lg = &fv->lt[which];
    if (fv->swap[which]) {
        const void *t = a;
        a = b;
        b = t;
    }
    const float beta = acc || cm ? 1.0f : 0.0f;
    cublasStatus_t e = cublasLtMatmul(c->lt, lg->op, &alpha, a, lg->la, b, lg->lb, &beta, cm ? cm : dm,
                                      lg->lcc ? lg->lcc : lg->lc, dm, lg->lc, &lg->algo, ws, GPU_LT_LOWP_WORKSPACE,
                                      strm);
    return gpu_check_cublas(e, "cublasLtMatmul (" ENG ")", __FILE__, __LINE__, d);
}

static xdnn_status f32_execute(gpu_ctx *c, gpart *p, cudaStream_t strm, xdnn_diags_t *d)
{
    const f32_priv *fv = p->priv;
    const f32_shape *s = &fv->s;
    const int64_t ld = s->nb * s->PQ; /* the column buffers' row stride, the last chunk's too */
    char *ws = c->ws + p->ws_offset;
    float *cols = (float *)(void *)(ws + s->cols_off), *dyb = (float *)(void *)(ws + s->dy_off);
    float *wbuf = (float *)(void *)(ws + s->w_off);
    float *x = c->dptr[s->cp.x], *w = c->dptr[s->cp.w], *y = c->dptr[s->cp.y];
    int roles[4];
    f32_roles(s, roles);
    for (int i = 0; i < 4; i++) {
        const int t = roles[i];
        if ((uintptr_t)c->dptr[t] % (uintptr_t)fv->base_al != 0) {
            diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(),
                       ENG ": %s: tensor '%s' at %p is not %d-byte aligned, which its plan assumed (built before "
                       "the buffers were bound); rebuild the plan with this buffer bound",
                       p->name, c->plan->g->t[t].name ? c->plan->g->t[t].name : "?", c->dptr[t],
                       fv->base_al);
            return XDNN_ERR_UNSUPPORTED;
        }
    }
    const kconv_params *k = &s->cp.kp;
    const int64_t wdims[5] = {s->K, s->g.C, s->g.win[0], s->g.win[1], s->g.win[2]};
    int ce;
    if (!s->wgrad && !s->w_inplace && (ce = kf32_copy5_launch(wdims, k->sw, w, wbuf, 1, strm)) != 0)
        return gpu_check_cuda((cudaError_t)ce, "kf32_copy5 (pack w)", __FILE__, __LINE__, d);
    float *wm = s->w_inplace ? w : wbuf;
    /* the epilogue's operands bound; cuBLASLt's C: the broadcast image, filled first, or the residual */
    kconv_epi epi, bc;
    gpu_conv_epi_bind(&s->cp, c->dptr, &epi);
    bc = s->bc;
    for (int i = 0; i < bc.n; i++)
        bc.s[i].t = s->bc_t[i] >= 0 ? c->dptr[s->bc_t[i]] : NULL;
    float *bcb = (float *)(void *)(ws + s->bc_off);
    const float *res = NULL;
    const bool lt = fv->lt_epi, pass = s->epi && !lt;
    if (lt && s->res_step >= 0)
        res = epi.s[s->res_step].t;
    const int64_t ydims[5] = {1, s->K, s->g.out[0], s->g.out[1], s->g.out[2]};
    const int64_t bcst[5] = {0, k->sy[1], k->sy[2], k->sy[3], k->sy[4]};
    if (lt && bc.n && (ce = kf32_epi_launch(ydims, 0, NULL, bcst, bcb, KDT_F32, bcst, &bc, strm)) != 0)
        return gpu_check_cuda((cudaError_t)ce, "kf32_epi (broadcast C)", __FILE__, __LINE__, d);
    const float *cm = !lt ? NULL : res ? res : bc.n ? bcb : NULL;
    const float alpha = lt ? s->alpha : 1.0f;
    /* the flat form's y buffer [K][nb * PQ] as a 5-slot view (image nl at column nl * PQ) */
    const int64_t bufst[5] = {s->PQ, ld, s->g.out[1] * s->g.out[2], s->g.out[2], 1};
    xdnn_status st = XDNN_OK;
    for (int64_t ch = 0; ch <= s->full && st == XDNN_OK; ch++) {
        const int64_t n0 = ch * s->nb, nb = ch < s->full ? s->nb : s->last;
        const int which = ch < s->full || !fv->have[1] ? 0 : 1; /* [1]: planned when the last chunk differs */
        float *xm = x + n0 * k->sx[0], *ym = y + n0 * k->sy[0];
        const int64_t dims[5] = {nb, s->K, s->g.out[0], s->g.out[1], s->g.out[2]};
        if (s->wgrad) {
            if (!s->x_inplace && (ce = kf32_im2col_launch(&s->g, n0, nb, ld, x, cols, strm)) != 0)
                return gpu_check_cuda((cudaError_t)ce, "kf32_im2col", __FILE__, __LINE__, d);
            if (!s->dy_inplace && (ce = kf32_im2col_launch(&s->gdy, n0, nb, ld, y, dyb, strm)) != 0)
                return gpu_check_cuda((cudaError_t)ce, "kf32_im2col (gather dy)", __FILE__, __LINE__, d);
            st = f32_gemm(c, fv, which, s->dy_inplace ? ym : dyb, s->x_inplace ? xm : cols, wm, ch > 0, NULL, 1.0f, ws,
                          strm, d);
        } else if (s->dgrad) {
            if (s->flat && (ce = kf32_im2col_launch(&s->gdy, n0, nb, ld, y, dyb, strm)) != 0)
                return gpu_check_cuda((cudaError_t)ce, "kf32_im2col (gather dy)", __FILE__, __LINE__, d);
            st = f32_gemm(c, fv, which, wm, s->flat ? dyb : ym, s->x_inplace ? xm : cols, false, NULL, 1.0f, ws, strm,
                          d);
            if (st == XDNN_OK && !s->x_inplace &&
                (ce = kf32_col2im_launch(&s->g, n0, nb, ld, cols, x, s->epi ? &epi : NULL, strm)) != 0)
                return gpu_check_cuda((cudaError_t)ce, "kf32_col2im", __FILE__, __LINE__, d);
            /* dx written by the GEMM itself: the mask in place */
            const int64_t dxdims[5] = {nb, s->g.C, s->g.in[0], s->g.in[1], s->g.in[2]};
            if (st == XDNN_OK && s->x_inplace && s->epi &&
                (ce = kf32_epi_launch(dxdims, n0, xm, k->sx, x, KDT_F32, k->sx, &epi, strm)) != 0)
                return gpu_check_cuda((cudaError_t)ce, "kf32_epi (relu_bwd mask)", __FILE__, __LINE__, d);
        } else {
            if (!s->x_inplace && (ce = kf32_im2col_launch(&s->g, n0, nb, ld, x, cols, strm)) != 0)
                return gpu_check_cuda((cudaError_t)ce, "kf32_im2col", __FILE__, __LINE__, d);
            st = f32_gemm(c, fv, which, wm, s->x_inplace ? xm : cols, s->flat ? dyb : ym, false,
                          res ? res + n0 * epi.s[s->res_step].st[0] : cm, alpha, ws, strm, d);
            if (st == XDNN_OK && s->flat && !s->epi &&
                (ce = kf32_col2im_launch(&s->gdy, n0, nb, ld, dyb, y, NULL, strm)) != 0)
                return gpu_check_cuda((cudaError_t)ce, "kf32_col2im (scatter y)", __FILE__, __LINE__, d);
            /* the pass: the flat form's scatter with the epilogue (and y's type), or in place on y */
            if (st == XDNN_OK && pass &&
                (ce = kf32_epi_launch(dims, n0, s->flat ? dyb : ym, s->flat ? bufst : k->sy, c->dptr[s->cp.y],
                                      k->dt_y, k->sy, &epi, strm)) != 0)
                return gpu_check_cuda((cudaError_t)ce, "kf32_epi", __FILE__, __LINE__, d);
        }
    }
    if (st != XDNN_OK || !s->wgrad || s->w_inplace)
        return st;
    ce = kf32_copy5_launch(wdims, k->sw, w, wbuf, 0, strm);
    return gpu_check_cuda((cudaError_t)ce, "kf32_copy5 (unpack dW)", __FILE__, __LINE__, d);
}

static void f32_release(gpart *p)
{
    f32_priv *fv = p->priv;
    if (!fv)
        return;
    f32_release_plans(fv);
    free(fv);
    p->priv = NULL;
}

static const char *f32_detail(const gpart *p)
{
    const f32_priv *fv = p->priv;
    return fv ? fv->detail : "";
}

const gpu_engine gpu_engine_conv_f32_gemm = {
    ENG,
    "f32 conv / conv_dgrad / conv_wgrad as an im2col (any layout, 1-3-D, through strides; 1x1 stride 1 read in "
    "place) + cuBLASLt f32 GEMMs (true f32, or tf32 when the graph allows it) in <= 256 MiB chunks of images, "
    "y / dy / dx NCHW- or NHWC-like in place, dgrad by a col2im gather; groups 1",
    f32_supports, f32_cost, f32_workspace, f32_build, f32_execute, f32_release, f32_detail,
};
