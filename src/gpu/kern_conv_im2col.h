/* kern_conv_im2col.h — the operand kernels of conv_im2col_gemm
 * (kernels/conv_im2col_gemm.cu, src/gpu/eng_conv_im2col.c) as the host sees
 * them: the per-filter-row im2col of a small-C conv, and the weights packed
 * into (and the weight gradient unpacked from) the same layout.
 *
 * The reduction index of one output pixel is (r, j): filter row r < R and
 * j < ldr = roundup(S * C, 8), with j = s * C + c for j < S * C (tap s of the
 * row, channel c; zero columns past S * C).  For an NHWC x with C = 3 and a
 * 7-wide window the S * C = 21 values of one row are adjacent in x, and the
 * reduction is R * ldr = 7 * 24 = 168 long instead of the 7 * 7 * 8 = 392 of
 * a copy of x padded to 8 channels.  A is [M, Kc] row-major, Kc = R * ldr,
 * m = (n * OH + oh) * OW + ow; Wr is [K, Kc] row-major.  A 1x1 window with
 * C % 8 == 0 has ldr = Kc = C: row m of A is then the input pixel output
 * pixel m reads (a subsampling copy at stride > 1).  16-bit elements
 * (f16 or bf16) are moved as raw bits: nothing here rounds. */
#ifndef XDNN_GPU_KERN_CONV_IM2COL_H
#define XDNN_GPU_KERN_CONV_IM2COL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A 1-D or 2-D conv (1-D: H = OH = R = 1); strides in elements. */
typedef struct kim_geom {
    int64_t N, C, K;
    int64_t H, W, OH, OW, R, S;
    int64_t sh, sw, dh, dw, ph, pw;  /* stride, dilation, leading pad (h, w) */
    int64_t sxn, sxc, sxh, sxw;      /* x's strides */
    int64_t swk, swc, swr, sws;      /* w's (or dw's) strides [K, C, R, S] */
    int64_t ldr, Kc;                 /* roundup(S * C, 8), R * ldr */
} kim_geom;

/* A's rows m0 .. m0 + rows - 1 into a (row m0 at a[0]): x's taps, zeros for
 * padding taps and padding columns.  rows * Kc < 2^31.  Returns a cudaError_t. */
int kim_im2col_launch(const kim_geom *g, int64_t m0, int64_t rows, const void *x, void *a, void *stream);
/* Wr [K, Kc] from w (16-bit, any strides). */
int kim_pack_w_launch(const kim_geom *g, const void *w, void *wr, void *stream);
/* dw[k, c, r, s] = sum over the `parts` f32 partials [parts][K][Kc] at
 * Wr's position of (k, c, r, s), stored as dw's dtype (KDT_*). */
int kim_unpack_dw_launch(const kim_geom *g, const float *partials, int parts, void *dw, int dt, void *stream);

#ifdef __cplusplus
}
#endif

#endif
