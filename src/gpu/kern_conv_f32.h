/* kern_conv_f32.h — the operand kernels of conv_f32_gemm
 * (kernels/conv_f32_im2col.cu, src/gpu/eng_conv_f32_gemm.c) as the host
 * sees them: an f32 conv's column matrix, built from x (im2col) and folded
 * back into dx (col2im), and the packing of the small weight matrices.
 *
 * The column matrix of a chunk of nb images starting at image n0 is
 * cols [CRS][nb * PQ] row-major with row stride ld >= nb * PQ: row j = ((c * T + t) * R + r) * S + s
 * (w's KCRS order), column m = (n - n0) * PQ + pq, pq = (od * OH + oh) * OW
 * + ow; cols[j][m] = x[n, c, od * sd - pd + t * dd, ...] (zero in the
 * padding).  Every tensor is read and written through its 5-slot strides
 * (kern_conv.h: [N, C, D, H, W]), so any layout, 1-, 2- or 3-D, is one
 * code path.  Launchers return 0 or a cudaError_t value. */
#ifndef XDNN_GPU_KERN_CONV_F32_H
#define XDNN_GPU_KERN_CONV_F32_H

#include "gpu/kern_conv.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One conv's geometry: x [N, C, in...] (dx for dgrad), window
 * [T, R, S] = win, output out; sx: x's 5-slot strides. */
typedef struct kf32_geom {
    int64_t N, C;
    int64_t in[3], win[3], out[3];
    int64_t stride[3], dil[3], pad[3];
    int64_t sx[5];
} kf32_geom;

/* cols [C*T*R*S][nb * PQ] (row stride ld) of images n0 .. n0 + nb - 1
 * (C*T*R*S * ld < 2^31).  A 1x1 window, stride 1, no pad is a gather of x's chunk into
 * [C][nb * P] (the transposing copy of an NCHW dy). */
int kf32_im2col_launch(const kf32_geom *g, int64_t n0, int64_t nb, int64_t ld, const float *x, float *cols,
                       void *stream);
/* dx[n, c, i...] for n in n0 .. n0 + nb - 1 = the sum over its taps of
 * dcols [CRS][nb * PQ] (row stride ld; the columns that read it in the forward conv): one
 * thread per dx element, taps in a fixed order, so deterministic and
 * without atomics; every element of the chunk is written (0 where no tap
 * reaches); epi (NULL: none): a relu_bwd mask applied to each dx element
 * before its store (kern_conv.h's kconv_epi, coordinates in dx's 5-slot
 * view). */
int kf32_col2im_launch(const kf32_geom *g, int64_t n0, int64_t nb, int64_t ld, const float *dcols, float *dx,
                       const kconv_epi *epi, void *stream);
/* The fused epilogue as a pass of its own: for every (nl, k, o, p, q) <
 * dims (nb images, channels, 3 spatial), dst[(n0 + nl) * sd[0] + k * sd[1]
 * + ...] (type dt: KDT_*) = epi applied at y coordinate (n0 + nl, k, o, p,
 * q) to src[nl * ss[0] + k * ss[1] + ...] (src NULL: to 0).  src == dst
 * (in place) is allowed: each element reads its own position first.
 * dims' product < 2^31. */
int kf32_epi_launch(const int64_t *dims, int64_t n0, const float *src, const int64_t *ss, void *dst, int dt,
                    const int64_t *sd, const kconv_epi *epi, void *stream);
/* A copy between the strided 5-D tensor t (dims, strides) and its packed
 * row-major copy p: pack = 1 writes p from t, 0 writes t from p. */
int kf32_copy5_launch(const int64_t *dims, const int64_t *strides, float *t, float *p, int pack, void *stream);

#ifdef __cplusplus
}
#endif

#endif
