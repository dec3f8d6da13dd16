/* eng_scaled_conv.c — scaled_conv (src/ops/quant_conv.c), the int8 / fp8
 * convolution, as one GEMM on cuBLASLt's low-precision tensor cores:
 * engine scaled_conv_im2col, groups 1, 1-D to 3-D.
 *
 *  1. im2col (kernels/scaled_conv_im2col.cu): A [Mp, ldk] bytes in the workspace,
 *     row m = output pixel (n, d, h, w), column kc = ((z*R + r)*S + s)*C + c
 *     (channel fastest), zeros for padding taps; Mp = M = N * out pixels and
 *     ldk = Kc = taps * C rounded up to 16 with zero rows / columns, because
 *     cuBLASLt's int8 and fp8 kernels take only "TN" operands (K contiguous
 *     in both) with every dim and leading dim a multiple of 16 (see
 *     eng_mm_scaled.c).  A 1x1, stride-1, unpadded conv of a packed NHWC x
 *     with C % 16 == 0 and M % 16 == 0 skips it: x is A.
 *  2. the weights as B [Kp, ldk] (K-contiguous: the KRSC order of kc), by a
 *     small repack kernel from any layout of w with the same zero padding
 *     (K up to Kp, a multiple of 16); a packed KRSC w with K and Kc
 *     multiples of 16 is B as it is.  The repack runs on every execute: it
 *     moves K * Kc bytes, small beside A.
 *  3. cuBLASLt: acc [Mp, Kp] = A . B^T, int32 sums on IMMA for i8 (exact:
 *     |x|, |w| <= 128, so Kc < 2^17 products cannot overflow), f32 sums of
 *     exact products for fp8 (unscaled: alpha 1, no scale pointers, since
 *     w_scale may be per channel).
 *  4. the epilogue kq_epilogue_launch (kernels/quant.cu), in double as the
 *     reference does: v = acc * (x_scale * w_scale[k]) + bias[k], then y = v
 *     rounded once (bf16/f16/f32) or sat(RNE(v / y_scale)) (i8/fp8), stored
 *     through y's own strides.  i8 results are bit-exact against the CPU
 *     reference; fp8 ones differ only by the f32 accumulation order.
 *
 * Layouts.  NHWC (channels-last) x and y are the fast case: 16 channels per
 * load in im2col, coalesced stores in the epilogue.  Other layouts (NCHW,
 * views) are read and written through their strides, byte by byte: correct,
 * and what lets graphs written in the default NCHW order (man/dnn.5's
 * example) run here, but im2col then gathers; the cost says so.  Refused,
 * with the reason: groups > 1, e5m2 x e5m2, non-f32 scales or bias, i8 sums
 * that could overflow int32, and sizes past the kernels' 32-bit indices. */
#include "gpu/conv_analyze.h"
#include "gpu/engine.h"
#include "gpu/kern_scaled_conv.h"
#include "gpu/kern_quant.h"

#include "ops/conv_util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct c8_shape {
    int x, w, xs, ws, bias, ys, y;  /* tensor ids; bias, ys: -1 when absent */
    bool i8;                        /* i8 x i8 (else fp8) */
    k8_geom g;
    int64_t sy[5];                  /* y's strides in the 5-slot view */
    int64_t M, Mp, Kc, ldk, Kp;     /* GEMM: acc [Mp, Kp] = A [Mp, ldk] . B [Kp, ldk]^T */
    bool im2col, pack_w;            /* false: x is A / w is B as they are */
    size_t a_off, b_off, acc_off, ws_bytes; /* workspace: cuBLASLt's, then A, B, acc (256-aligned) */
} c8_shape;

typedef struct c8_priv {
    c8_shape s;
    gpu_lt_gemm lt;
    char detail[192];
} c8_priv;

static int64_t up16(int64_t v) { return (v + 15) / 16 * 16; }
static size_t up256(size_t v) { return (v + 255) / 256 * 256; }

/* Largest element offset a tensor reaches, +1. */
static int64_t span(const gtensor *t)
{
    int64_t s = 1;
    for (int i = 0; i < t->rank; i++)
        s += (t->dims[i] - 1) * t->strides[i];
    return s;
}

/* Are the 5-slot strides those of a packed channels-last tensor with dims
 * [d0, C, D, H, W] (d0 outermost, C innermost)?  Dims of size 1 may have any stride. */
static bool packed_cl(const int64_t *d5, const int64_t *s5)
{
    const int order[5] = {1, 4, 3, 2, 0}; /* innermost first: C, W, H, D, then N or K */
    int64_t want = 1;
    for (int i = 0; i < 5; i++) {
        const int a = order[i];
        if (d5[a] > 1 && s5[a] != want)
            return false;
        want *= d5[a];
    }
    return true;
}

static const char *dt_name(xdnn_dtype t) { return xdnn_dtype_name(t); }

static bool c8_analyze(const gplan *pl, const gpart *p, c8_shape *s, char *why, size_t len)
{
    memset(s, 0, sizeof *s);
    const ggraph *gg = pl->g;
    if (p->nnodes != 1 || gg->n[p->nodes[0]].op_id != OP_scaled_conv)
        GPU_REFUSE("needs a lone scaled_conv node, got partition %s", p->name);
    const gnode *n = &gg->n[p->nodes[0]];
    if (!n->ir || n->nin < 4 || n->out < 0 || n->in[0] < 0 || n->in[1] < 0 || n->in[2] < 0 || n->in[3] < 0)
        GPU_REFUSE("scaled_conv %s lacks operands or its IR node", n->name);
    s->x = n->in[0], s->w = n->in[1], s->xs = n->in[2], s->ws = n->in[3], s->y = n->out;
    s->bias = n->nin > 4 ? n->in[4] : -1;
    s->ys = n->nin > 5 ? n->in[5] : -1;
    const gtensor *x = &gg->t[s->x], *w = &gg->t[s->w], *y = &gg->t[s->y];
    s->i8 = x->dtype == XDNN_I8; /* the op's inference makes both i8 or both fp8 */
    if (x->dtype == XDNN_FP8_E5M2 && w->dtype == XDNN_FP8_E5M2)
        GPU_REFUSE("scaled_conv: fp8_e5m2 x fp8_e5m2 has no Hopper fp8 kernel (one of x, w must be fp8_e4m3)");
    const int ports[4] = {s->xs, s->ws, s->bias, s->ys};
    static const char *const pname[4] = {"x_scale", "w_scale", "bias", "y_scale"};
    for (int i = 0; i < 4; i++) {
        if (ports[i] >= 0 && gg->t[ports[i]].is_scalar)
            GPU_REFUSE("scaled_conv: %s is a literal scalar (the epilogue reads scales from device memory)", pname[i]);
        if (ports[i] >= 0 && gg->t[ports[i]].dtype != XDNN_F32)
            GPU_REFUSE("scaled_conv: %s '%s' is %s (the epilogue reads f32)", pname[i], gg->t[ports[i]].name,
                       dt_name(gg->t[ports[i]].dtype));
    }
    const xdnn_dtype yt = y->dtype;
    if (yt != XDNN_BF16 && yt != XDNN_F16 && yt != XDNN_F32 && yt != XDNN_I8 && yt != XDNN_FP8_E4M3 &&
        yt != XDNN_FP8_E5M2)
        GPU_REFUSE("scaled_conv: output '%s' has dtype %s (expected bf16, f16, f32, i8 or fp8)", y->name, dt_name(yt));
    if (x->rank < 3 || x->rank > 5 || w->rank != x->rank || y->rank != x->rank)
        GPU_REFUSE("scaled_conv: ranks must be equal and 3..5, got x %d, w %d, y %d", x->rank, w->rank, y->rank);
    const op_desc *desc = op_get(n->ir->op);
    const int nsp = x->rank - 2;
    conv_geom geo;
    char err[384];
    if (!conv_geom_init(&geo, n->ir, desc, nsp, x->dims + 2, w->dims + 2, "stride", NULL, "dilation", "pad", false,
                        err, sizeof err))
        GPU_REFUSE("scaled_conv: %s", err);
    const int64_t groups = op_attr_int(n->ir, desc, "groups");
    if (groups != 1)
        GPU_REFUSE("scaled_conv: groups=%" PRId64 " (grouped and depthwise int8 convs are not one GEMM; this engine "
                   "runs groups 1 only)", groups);
    k8_geom *g = &s->g;
    g->N = x->dims[0], g->C = x->dims[1], g->K = w->dims[0];
    for (int i = 0; i < CONV_MAX_SPATIAL; i++) {
        g->in[i] = geo.in[i], g->win[i] = geo.win[i], g->out[i] = geo.out[i];
        g->stride[i] = geo.stride[i], g->dil[i] = geo.dilation[i], g->pad[i] = geo.pad_lo[i];
        if (i >= geo.first && geo.out[i] != y->dims[2 + i - geo.first])
            GPU_REFUSE("scaled_conv: output size along %s is %" PRId64 " by the geometry but %" PRId64 " in %s",
                       conv_dim_name(nsp, i - geo.first), geo.out[i], y->dims[2 + i - geo.first], y->name);
    }
    gpu_conv_strides5(x, g->sx);
    gpu_conv_strides5(w, g->sw);
    gpu_conv_strides5(y, s->sy);
    s->M = g->N * g->out[0] * g->out[1] * g->out[2];
    s->Kc = g->C * g->win[0] * g->win[1] * g->win[2];
    /* |x|, |w| <= 128: Kc products of at most 2^14 stay below 2^31 while Kc < 2^17 */
    if (s->i8 && s->Kc >= (1 << 17))
        GPU_REFUSE("scaled_conv: i8 sums of C * window = %" PRId64 " products could overflow the int32 accumulator "
                   "(must be below 131072)", s->Kc);
    s->Mp = up16(s->M), s->ldk = up16(s->Kc), s->Kp = up16(g->K);
    const int64_t big = (int64_t)1 << 31;
    const int ids[3] = {s->x, s->w, s->y};
    for (int i = 0; i < 3; i++)
        if (span(&gg->t[ids[i]]) >= big)
            GPU_REFUSE("scaled_conv: tensors must span < 2^31 elements, %s spans %" PRId64, gg->t[ids[i]].name,
                       span(&gg->t[ids[i]]));
    if (s->Mp * s->ldk >= big || s->Kp * s->ldk >= big)
        GPU_REFUSE("scaled_conv: the im2col matrix N*out x C*window = %" PRId64 " x %" PRId64 " bytes must stay below "
                   "2^31 (split the batch)", s->M, s->Kc);
    /* x is A as it is: 1x1 window, stride 1, no pad, packed NHWC, 16-multiple C and M, not a view (aligned) */
    const int64_t d5x[5] = {g->N, g->C, g->in[0], g->in[1], g->in[2]};
    bool one = true;
    for (int i = 0; i < CONV_MAX_SPATIAL; i++)
        one &= g->win[i] == 1 && g->stride[i] == 1 && geo.pad_lo[i] == 0 && geo.pad_hi[i] == 0;
    s->im2col = !(one && g->C % 16 == 0 && s->M % 16 == 0 && x->view_of < 0 && packed_cl(d5x, g->sx));
    const int64_t d5w[5] = {g->K, g->C, g->win[0], g->win[1], g->win[2]};
    s->pack_w = !(g->K % 16 == 0 && s->Kc % 16 == 0 && w->view_of < 0 && packed_cl(d5w, g->sw));
    size_t off = GPU_LT_LOWP_WORKSPACE;
    s->a_off = off;
    off += s->im2col ? up256((size_t)(s->Mp * s->ldk)) : 0;
    s->b_off = off;
    off += s->pack_w ? up256((size_t)(s->Kp * s->ldk)) : 0;
    s->acc_off = off;
    s->ws_bytes = off + up256((size_t)(s->Mp * s->Kp) * 4);
    return true;
}

static bool c8_supports(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    c8_shape s;
    if (!c8_analyze(pl, p, &s, why, len))
        return false;
    const int need = s.i8 ? 75 : 89; /* IMMA since Turing, fp8 since Ada */
    if (dev && dev->cc_major * 10 + dev->cc_minor < need)
        GPU_REFUSE("%s tensor cores need compute capability %d.%d or newer, got %d.%d", s.i8 ? "int8" : "fp8",
                   need / 10, need % 10, dev->cc_major, dev->cc_minor);
    return true;
}

/* The GEMM at the int8 / fp8 peak (as eng_mm_scaled.c counts it, on the
 * padded sizes), plus the bytes the engine moves beyond the op's own: A
 * written and read (a gathering im2col, of a layout other than NHWC with
 * C % 16 == 0, counted 8x: byte loads with index arithmetic), B, and the
 * int32 / f32 accumulator written and read. */
static double c8_cost(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    c8_shape s;
    char why[8];
    if (!c8_analyze(pl, p, &s, why, sizeof why))
        return 1e30;
    const double flops = 2.0 * (double)s.Mp * (double)s.Kp * (double)s.ldk;
    const double math = flops / ((s.i8 ? 1300.0 : 1400.0) * 1e12);
    const bool vec = s.g.C % 16 == 0 && s.g.sx[1] == 1;
    double bytes = (double)p->bytes + 8.0 * (double)s.Mp * (double)s.Kp;
    if (s.im2col)
        bytes += 2.0 * (double)s.Mp * (double)s.ldk * (vec ? 1.0 : 8.0);
    if (s.pack_w)
        bytes += 2.0 * (double)s.Kp * (double)s.ldk;
    const double mem = bytes / 3.0e12;
    return 1e6 * (math > mem ? math : mem) + 3.0 * (2 + s.im2col + s.pack_w); /* + launches */
}

static size_t c8_workspace(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    c8_shape s;
    char why[8];
    return c8_analyze(pl, p, &s, why, sizeof why) ? s.ws_bytes : 0;
}

static cudaDataType_t c8_type(xdnn_dtype t)
{
    return t == XDNN_FP8_E4M3 ? CUDA_R_8F_E4M3 : t == XDNN_FP8_E5M2 ? CUDA_R_8F_E5M2 : CUDA_R_8I;
}

static xdnn_status c8_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d)
{
    c8_priv *cp = calloc(1, sizeof *cp);
    if (!cp)
        return XDNN_ERR_NOMEM;
    p->priv = cp;
    const ggraph *g = c->plan->g;
    char why[512];
    if (!c8_analyze(c->plan, p, &cp->s, why, sizeof why)) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), "scaled_conv_im2col: %s: %s", p->name, why);
        return XDNN_ERR_UNSUPPORTED;
    }
    const c8_shape *s = &cp->s;
    /* column-major, as eng_mm_scaled.c: cuBLASLt A = B stored ldk x Kp, B = A stored ldk x Mp,
     * D = acc^T: Kp x Mp with ld Kp, i.e. acc [Mp, Kp] row-major (int32 for i8, f32 for fp8) */
    const gpu_lt_operand la = {c8_type(g->t[s->w].dtype), (uint64_t)s->ldk, (uint64_t)s->Kp, (uint64_t)s->ldk};
    const gpu_lt_operand lb = {c8_type(g->t[s->x].dtype), (uint64_t)s->ldk, (uint64_t)s->Mp, (uint64_t)s->ldk};
    char who[256];
    snprintf(who, sizeof who, "scaled_conv_im2col: %s (%s x %s)", p->name, dt_name(g->t[s->x].dtype),
             dt_name(g->t[s->w].dtype));
    xdnn_status st = gpu_lt_lowp_gemm(c, s->i8, &la, &lb, s->i8 ? CUDA_R_32I : CUDA_R_32F, (uint64_t)s->Kp, who,
                                      &cp->lt, d);
    if (st != XDNN_OK)
        return st;
    snprintf(cp->detail, sizeof cp->detail,
             "cublasLt %s %s x %s -> %s algo=%d tile=%d; GEMM %" PRId64 "x%" PRId64 "x%" PRId64 "%s%s",
             s->i8 ? "imma" : "fp8", dt_name(g->t[s->x].dtype), dt_name(g->t[s->w].dtype), dt_name(g->t[s->y].dtype),
             cp->lt.algo_id, cp->lt.tile, s->Mp, s->Kp, s->ldk, s->im2col ? ", im2col" : ", x as A",
             s->pack_w ? ", w repacked" : "");
    return XDNN_OK;
}

static xdnn_status c8_execute(gpu_ctx *c, gpart *p, cudaStream_t strm, xdnn_diags_t *d)
{
    const c8_priv *cp = p->priv;
    const c8_shape *s = &cp->s;
    char *ws = c->ws + p->ws_offset;
    void *a = s->im2col ? ws + s->a_off : c->dptr[s->x], *b = s->pack_w ? ws + s->b_off : c->dptr[s->w];
    void *acc = ws + s->acc_off;
    int ce;
    if (s->im2col && (ce = k8_im2col_launch(&s->g, s->Mp, s->ldk, c->dptr[s->x], a, strm)) != 0)
        return gpu_check_cuda((cudaError_t)ce, "k8_im2col", __FILE__, __LINE__, d);
    if (s->pack_w && (ce = k8_pack_w_launch(&s->g, s->Kp, s->ldk, c->dptr[s->w], b, strm)) != 0)
        return gpu_check_cuda((cudaError_t)ce, "k8_pack_w", __FILE__, __LINE__, d);
    const int32_t ialpha = 1, ibeta = 0;
    const float falpha = 1.0f, fbeta = 0.0f;
    const void *alpha = s->i8 ? (const void *)&ialpha : (const void *)&falpha;
    const void *beta = s->i8 ? (const void *)&ibeta : (const void *)&fbeta;
    const gpu_lt_gemm *lg = &cp->lt;
    cublasStatus_t e = cublasLtMatmul(c->lt, lg->op, alpha, b, lg->la, a, lg->lb, beta, acc, lg->lc, acc, lg->lc,
                                      &lg->algo, ws, GPU_LT_LOWP_WORKSPACE, strm);
    if (e != CUBLAS_STATUS_SUCCESS)
        return gpu_check_cublas(e, s->i8 ? "cublasLtMatmul (i8 conv)" : "cublasLtMatmul (fp8 conv)", __FILE__,
                                __LINE__, d);
    const ggraph *g = c->plan->g;
    kq_epi ep = {
        .acc = acc, .acc_f32 = !s->i8, .rows = (uint32_t)s->M, .cols = (uint32_t)s->g.K, .ld_acc = (uint32_t)s->Kp,
        .sa = c->dptr[s->xs], .sb = c->dptr[s->ws], .bias = s->bias >= 0 ? c->dptr[s->bias] : NULL,
        .sc = s->ys >= 0 ? c->dptr[s->ys] : NULL, .nsb = (uint32_t)g->t[s->ws].numel, .amax = NULL,
        .y = c->dptr[s->y], .ydt = (int)g->t[s->y].dtype, .nyd = 4,
        .ydims = {(uint32_t)s->g.N, (uint32_t)s->g.out[0], (uint32_t)s->g.out[1], (uint32_t)s->g.out[2]},
        .ystr = {s->sy[0], s->sy[2], s->sy[3], s->sy[4]}, .ycs = s->sy[1],
    };
    ce = kq_epilogue_launch(&ep, strm);
    return gpu_check_cuda((cudaError_t)ce, "kq_epilogue (conv)", __FILE__, __LINE__, d);
}

static void c8_release(gpart *p)
{
    c8_priv *cp = p->priv;
    if (!cp)
        return;
    gpu_lt_destroy(cp->lt.op, cp->lt.la, cp->lt.lb, cp->lt.lc);
    free(cp);
    p->priv = NULL;
}

static const char *c8_detail(const gpart *p)
{
    const c8_priv *cp = p->priv;
    return cp ? cp->detail : "";
}

const gpu_engine gpu_engine_scaled_conv_im2col = {
    "scaled_conv_im2col",
    "scaled_conv (i8 or fp8, groups 1, 1-3 D) as im2col + a cuBLASLt IMMA / fp8 GEMM + our epilogue: "
    "per-tensor or per-channel w_scale, bias, bf16/f16/f32 or requantized i8/fp8 out; i8 bit-exact",
    c8_supports, c8_cost, c8_workspace, c8_build, c8_execute, c8_release, c8_detail,
};
