/* kern_conv_stem.h — the kernels of conv_stem (kernels/conv_stem.cu,
 * src/gpu/eng_conv_stem.c) as the host sees them: a small-C 2-D conv (the
 * C = 3 image stem) as an implicit GEMM on tensor cores whose CTA stages the
 * input patch of its output tile in shared memory once and builds the im2col
 * fragments from it, so the column matrix is never written.
 *
 * Layouts: x channels-last with packed pixels (channel stride 1, w stride
 * C; n and h strides free); y / dy channel stride 1 (pixel strides free);
 * w / dw any strides [K, C, R, S].  Unit dilation.  16-bit x, y, w (f16 or
 * bf16, one of them for all three); dw f32, f16 or bf16. */
#ifndef XDNN_GPU_KERN_CONV_STEM_H
#define XDNN_GPU_KERN_CONV_STEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Output tile of one CTA step: KSTEM_TH output rows x KSTEM_TW output
 * columns (128 pixels), KSTEM_BK output channels (fwd), KSTEM_BKC
 * reduction columns (wgrad: 4 warps x 5 n8 tiles). */
enum { KSTEM_TH = 8, KSTEM_TW = 16, KSTEM_BK = 64, KSTEM_BKC = 160 };

typedef struct kstem_geom {
    int32_t N, C, K, H, W, OH, OW, R, S;
    int32_t sh, sw, ph, pw;          /* stride, leading pad */
    int64_t sxn, sxh;                /* x's n and h strides (elements); its w stride is C, c stride 1 */
    int64_t syn, syh, syw;           /* y's (dy's) pixel strides; channel stride 1 */
    int64_t swk, swc, swr, sws;      /* w's (dw's) strides [K, C, R, S] */
    int32_t bf16;                    /* x, y (and fwd w) are bf16 (else f16) */
} kstem_geom;

/* Shared-memory bytes of one CTA (fwd or wgrad), for the engine's limits. */
size_t kstem_fwd_smem(const kstem_geom *g);
size_t kstem_wgrad_smem(const kstem_geom *g);
/* Tiles (N x ceil(OH / TH) x ceil(OW / TW)) and the wgrad's reduction chunks. */
int64_t kstem_tiles(const kstem_geom *g);
int kstem_kchunks(const kstem_geom *g);

/* y = conv(x, w) on `ctas` persistent CTAs per 64-channel block of K, built
 * for ctas_per_sm (3 or 4) resident on an SM.  Returns a cudaError_t. */
int kstem_fwd_launch(const kstem_geom *g, const void *x, const void *w, void *y, int ctas, int ctas_per_sm,
                     void *stream);
/* dw = conv_wgrad(dy, x): `splits` CTAs per (K block, reduction chunk), each
 * summing a contiguous range of tiles into its f32 partial [K][R*S*C] of
 * `partials` ([splits][K][R*S*C]); then the partials summed in a fixed order
 * (deterministic) into dw of type dt_w (KDT_*). */
int kstem_wgrad_launch(const kstem_geom *g, const void *dy, const void *x, float *partials, int splits, void *dw,
                       int dt_w, void *stream);

#ifdef __cplusplus
}
#endif

#endif
