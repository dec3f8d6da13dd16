/* kern_scaled_conv.h — the operand builders of scaled_conv's im2col engine
 * (kernels/scaled_conv_im2col.cu, src/gpu/eng_scaled_conv.c) as the host sees them:
 * byte tensors (i8 or fp8, copied as raw bytes, so one kernel serves both).
 *
 * The GEMM is y[M, K] = A[M, Kc] . B[K, Kc]^T with M = N * out pixels and
 * Kc = taps * C, the reduction index kc = ((z * R + r) * S + s) * C + c
 * (channel fastest: KRSC weights, and NHWC x reads 16 channels at once).
 * Both matrices are row-major with rows padded to `ldk` (a multiple of 16)
 * and row counts padded (A to Mp, B to Kp, multiples of 16): the padding is
 * written as zeros, so it adds nothing to the int32 / f32 sums. */
#ifndef XDNN_GPU_KERN_SCALED_CONV_H
#define XDNN_GPU_KERN_SCALED_CONV_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The geometry in conv_geom's 3 slots (D, H, W; unused leading slots are
 * size 1, window 1, stride 1, dilation 1, pad 0), and x's strides in the
 * 5-slot view [N, C, D, H, W] (elements = bytes). */
typedef struct k8_geom {
    int64_t N, C, K;
    int64_t in[3], win[3], out[3], stride[3], dil[3], pad[3];
    int64_t sx[5];
    int64_t sw[5];   /* w [K, C, D, H, W] strides (the repack reads any layout) */
} k8_geom;

/* A[m][kc] for m < Mp, kc < ldk: x's tap (zero outside x or past M / Kc).
 * Enqueued on `stream`; returns a cudaError_t value. */
int k8_im2col_launch(const k8_geom *g, int64_t Mp, int64_t ldk, const void *x, void *a, void *stream);
/* B[k][kc] for k < Kp, kc < ldk: w[k, c, z, r, s] (zero past K / Kc). */
int k8_pack_w_launch(const k8_geom *g, int64_t Kp, int64_t ldk, const void *w, void *b, void *stream);

#ifdef __cplusplus
}
#endif

#endif
