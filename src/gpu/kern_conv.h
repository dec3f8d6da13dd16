/* kern_conv.h — launchers of the precompiled convolution and pooling kernels
 * (kernels/conv_direct.cu, kernels/conv_igemm.cu, kernels/pool.cu), callable
 * from C.  Plain C on both sides: the .cu files include it inside extern "C".
 *
 * Every tensor is described by its element strides in the 5-slot logical view
 * of conv_util.h: [N, C, D, H, W] (activations) or [K, C/groups, R_d, R_h, R_w]
 * (filters).  An op with fewer spatial dims uses the trailing slots; the
 * leading ones have size 1 and stride 0.  Geometry slots follow the same rule
 * (identity: in = win = out = stride = dil = 1, pad 0).
 *
 * Element types are KDT_* codes; loads convert to f32 and every sum is
 * accumulated in f32.  Launchers return 0 or a cudaError_t value. */
#ifndef XDNN_GPU_KERN_CONV_H
#define XDNN_GPU_KERN_CONV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { KDT_F32 = 0, KDT_F16 = 1, KDT_BF16 = 2 };
enum { KCONV_SP = 3 };

/* One convolution problem (fwd, dgrad and wgrad share it): x [N, C, in...],
 * w [K, C/G, win...], y [N, K, out...]; which of them is written depends on
 * the direction.  dt_* are the stored types of the three tensors. */
typedef struct kconv_params {
    int dt_x, dt_w, dt_y;
    int64_t N, C, K, G;
    int64_t in[KCONV_SP], win[KCONV_SP], out[KCONV_SP];
    int64_t stride[KCONV_SP], dil[KCONV_SP], pad[KCONV_SP]; /* pad = the leading (lo) pad */
    int64_t sx[5], sw[5], sy[5];
} kconv_params;

/* The fused epilogue of a forward conv (conv_epi.c reads it off the
 * partition's pointwise chain; a conv_dgrad's is one relu_bwd mask read at
 * dx's coordinate, v being dx): v = the f32 accumulator, then every step in
 * order, then one store in y's type (no rounding in between).  A tensor
 * operand is read at y's coordinate through its own 5-slot strides, 0 on the
 * dims it broadcasts: a per-channel bias has {0, 1, 0, 0, 0}, a residual
 * y's own layout.  The activations are pointwise_modes.def's formulas. */
enum { KEPI_MAX = 6 };
typedef enum kepi_op {
    KEPI_ADD_T, KEPI_SUB_T, KEPI_RSUB_T, KEPI_MUL_T, /* v + t, v - t, t - v, v * t */
    KEPI_RELU_BWD, /* a dgrad's mask: t > p0 ? (t < p1 ? v : 0) : v * p2 (relu_bwd(v, t), t = relu's x or y) */
    KEPI_ADD_S, KEPI_MUL_S,                          /* v + p0, v * p0 */
    KEPI_RELU,                                       /* p0 lower, p1 upper, p2 slope */
    KEPI_GELU_ERF, KEPI_GELU_TANH, KEPI_SWISH,       /* swish: p0 = beta (silu: 1) */
    KEPI_SIGMOID, KEPI_TANH
} kepi_op;
typedef struct kepi_step {
    int op, dt;           /* kepi_op; the operand's KDT_* */
    const void *t;        /* the operand tensor (device address, set at execute) */
    int64_t st[5];        /* its strides in y's 5-slot view */
    float p0, p1, p2;
} kepi_step;
typedef struct kconv_epi {
    int n;
    kepi_step s[KEPI_MAX];
} kconv_epi;

/* Direct kernels: correct for every configuration (any strides, groups,
 * dilation, pads, 1-3 spatial dims, any mix of f32/f16/bf16).
 * fwd:   y  = conv(x, w), one thread per y element.
 * dgrad: x  = dx from y = dy and w, one thread per dx element (gather).
 * wgrad: w  = dw from y = dy and x, one block per dw element (block reduce);
 *        for groups 1 the engine uses kconv_tiled_wgrad instead. */
int kconv_direct_fwd(const kconv_params *p, const void *x, const void *w, void *y, const kconv_epi *epi,
                     void *stream);
int kconv_direct_dgrad(const kconv_params *p, void *dx, const void *w, const void *dy, const kconv_epi *epi,
                       void *stream);
int kconv_direct_wgrad(const kconv_params *p, const void *x, void *dw, const void *dy, void *stream);
/* wgrad for groups 1 as a tiled GEMM over m = (n, out position), split in
 * `splits` slices whose f32 partials ([splits][K][C*R*S], ws) are summed in
 * order by a second kernel.  gpu_conv_wgrad_splits picks splits. */
int kconv_tiled_wgrad(const kconv_params *p, const void *x, void *dw, const void *dy, float *ws, int splits,
                      void *stream);

/* Implicit-GEMM forward on tensor cores (kernels/conv_igemm.cu): 1-3-D,
 * groups 1, x channel-contiguous (NHWC), w channel-contiguous (KRSC),
 * dt_x == dt_w: f16/bf16 with mma m16n8k16, or f32 with tf32 mma m16n8k8.
 * The caller has checked the alignment rules (gpu_conv_igemm_check in
 * conv_analyze.c).  y: any strides and type.  epi: the fused epilogue
 * (NULL or n = 0: none).  Split-K (splits > 1, as gpu_conv_igemm_splits
 * normalised them): the T*R*S*C reduction is cut into `splits` ranges of
 * whole k slices (blockIdx.z), each CTA writes its raw f32 tile to
 * part[split][M][K] (splits * M * K floats, 16-byte aligned), and a second
 * kernel sums the splits in order (deterministic, no atomics), applies the
 * epilogue and stores y. */
int kconv_igemm_fwd(const kconv_params *p, const void *x, const void *w, void *y, const kconv_epi *epi,
                    float *part, int splits, void *stream);
/* dst[i0][i2][i3][i4][c] = src (5-slot dims and strides) channels-last and
 * contiguous with Cp >= dims[1] channels, zeros past dims[1]; one dtype
 * (kernels/conv_pack.cu).  conv_igemm's copies of an x or w it cannot read
 * as is (gpu_conv_igemm_packed). */
int kconv_pack_cl(const int64_t *dims, const int64_t *strides, int dt, const void *src, void *dst, int64_t Cp,
                  void *stream);
/* dgrad through the same kernel, one stride phase at a time
 * (gpu_conv_dgrad_phases): wt[c][i0][i1][i2][k] = w[k, c, r...] with
 * r_d = r0[d] + (taps[d]-1-i_d) * rstep[d] (the phase's taps, flipped),
 * packed in type dt_wt from the dgrad problem p (p->sw: w's strides). */
int kconv_pack_phase(const kconv_params *p, const void *w, void *wt, int dt_wt, const int64_t *r0,
                     const int64_t *rstep, const int64_t *taps, void *stream);
/* kconv_pack_phase for n (<= 8) phases in one launch (session 11): phase i
 * packed at wt + wt_off[i] elements from its r0[i], rstep[i], taps[i].
 * cudaErrorInvalidValue where it cannot (n > 8, C > 2M, taps > 65535 in
 * all): pack them one by one. */
int kconv_pack_phases(const kconv_params *p, const void *w, void *wt, int dt_wt, int n, const int64_t *wt_off,
                      const int64_t (*r0)[KCONV_SP], const int64_t (*rstep)[KCONV_SP],
                      const int64_t (*taps)[KCONV_SP], void *stream);
/* y[n, k, o...] = 0 over f's N x K x out through f's y strides (sy): a
 * phase of dx that no tap reaches. */
int kconv_zero_lattice(const kconv_params *f, void *y, void *stream);

/* Weight gradient on tensor cores (kernels/conv_wgrad_mma.cu): 1-3-D, any
 * stride / dilation / pad / groups, dy and x both f16 or both bf16, dw any
 * type and strides.  The N x out reduction is cut into about `splits`
 * slices whose f32 partials go to ws ([G][splits][K/G][taps*C/G], size
 * gpu_conv_wgrad_mma_ws_bytes) and are summed in order by a second kernel:
 * deterministic.  vec: the 16-byte cp.async loader (gpu_conv_wgrad_mma_check
 * says when it applies); else elements are gathered one by one. */
int kconv_wgrad_mma(const kconv_params *p, const void *x, void *dw, const void *dy, float *ws, int splits, int vec,
                    void *stream);

/* Depthwise conv (kernels/conv_dw.cu): groups == C == K, channel-contiguous
 * x and y (dx and dy for dgrad), one dtype for both, w any strides and type.
 * fwd (dgrad 0): src = x, dst = y, with the epilogue; dgrad: src = dy,
 * dst = dx.  The window's f32 weights for a slice of channels sit in shared
 * memory: taps * 8 * 4 bytes must fit in KDW_SMEM_MAX (gpu_conv_dw_check). */
enum { KDW_SMEM_MAX = 48 * 1024 };
int kconv_dw(const kconv_params *p, int dgrad, const void *src, const void *w, void *dst, const kconv_epi *epi,
             void *stream);

/* Depthwise weight gradient (kernels/conv_dw_wgrad.cu): groups == C == K,
 * channel-contiguous x and dy of one dtype, dw any type and strides, 1-3-D,
 * any stride / dilation / pad.  Per-block f32 partials go to ws
 * ([taps][C][chunks], kconv_dw_wgrad_ws_bytes for a device of sm_count SMs:
 * the plan depends on the problem only; ws_bytes, the workspace given, caps
 * the chunks) and a second kernel sums them in a fixed order: deterministic. */
size_t kconv_dw_wgrad_ws_bytes(const kconv_params *p, int sm_count);
int kconv_dw_wgrad(const kconv_params *p, const void *x, void *dw, const void *dy, float *ws, size_t ws_bytes,
                   int sm_count, void *stream);

/* The igemm tile knobs (one compiled variant per input type).  A CTA of
 * KIG_THREADS threads (8 warps, 2 along M x 4 along N, each warp 64 x 32)
 * computes a KIG_BM x KIG_BN tile of Y[M = N*P*Q, K]; the reduction over
 * R*S*C advances KIG_BK elements at a time (32 halves or 16 floats = 64
 * bytes of every row) through a KIG_STAGES-deep cp.async pipeline.  Shared
 * memory: STAGES * (BM + BN) * (BK + pad) elements, rows padded by 16 bytes
 * so ldmatrix is bank-conflict free.
 * K <= KIG_BN_SMALL runs a BN = 64 variant (8 warps as 4 x 2, warp 32 x 32).
 * <= 128 registers per thread (no spills on sm_90): 2 CTAs per SM. */
enum { KIG_BM = 128, KIG_BN = 128, KIG_BN_SMALL = 64, KIG_BK16 = 32, KIG_BK32 = 16, KIG_STAGES = 4, KIG_THREADS = 256 };

/* Pooling.  x [N, C, in...], y / dy [N, C, out...], dx like x. */
typedef struct kpool_params {
    int dt_x, dt_y, dt_dx; /* y = y (fwd) or dy (bwd) */
    int is_max, include_pad;
    int64_t N, C;
    int64_t in[KCONV_SP], win[KCONV_SP], out[KCONV_SP];
    int64_t stride[KCONV_SP], dil[KCONV_SP], pad_lo[KCONV_SP], pad_hi[KCONV_SP];
    int64_t sx[5], sy[5], sdx[5];
} kpool_params;

int kpool_fwd(const kpool_params *p, const void *x, void *y, void *stream);
/* Does avgpool's forward take the walk of kernels/pool_avg.cuh (3x3 stride-2 windows; XDNN_POOL_AVG_WALK)? */
int kpool_fwd_avg_walk(const kpool_params *p);
/* By default one thread per dx element gathering from the windows that cover
 * it.  For maxpool on channels-contiguous tensors, ws (kpool_bwd_ws_bytes of
 * it, or NULL) holds each window's winning tap, found once by a first pass;
 * without it every pixel finds the winners of its windows again.  The max and
 * average backwards of 3x3 stride-2 windows walk down blocks of pixels in one
 * pass without ws instead (kpool_bwd_one_pass says whether p takes it: 2 for
 * max v5, 1 for max v4 or the average walk, 0 for the gather). */
size_t kpool_bwd_ws_bytes(const kpool_params *p);
int kpool_bwd_one_pass(const kpool_params *p);
int kpool_bwd(const kpool_params *p, const void *x, const void *dy, void *dx, void *ws, size_t ws_bytes,
              void *stream);

#ifdef __cplusplus
}
#endif

#endif
