/* kern_conv_wgrad_wgmma.h — the launcher of the Hopper weight gradient
 * (kernels/conv_wgrad_wgmma_sm90a.cu, the conv_wgrad_wgmma engine), callable
 * from C.  Plain C; the kernel file includes it. */
#ifndef XDNN_GPU_KERN_CONV_WGRAD_WGMMA_H
#define XDNN_GPU_KERN_CONV_WGRAD_WGMMA_H

#include "gpu/kern_conv.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kernel's tiles: bm filters (KWX_BM_BIG = 128 or KWX_BM_SMALL = 64) by
 * 128 or 256 taps*channels (KWX_BN_BIG / KWX_BN_SMALL: bm x bn = 128 x 128,
 * 128 x 256 or 64 x 256), the N*P*Q reduction in KWX_BK-row slices. */
enum { KWX_BM_BIG = 128, KWX_BM_SMALL = 64, KWX_BN_BIG = 128, KWX_BN_SMALL = 256, KWX_BK = 64 };

/* 1 when this build holds the sm_90a code (the Makefile rule of kernels/..._sm90a.cu). */
int kconv_wgrad_wgmma_built(void);
/* Dynamic shared memory one CTA of tile bm x bn takes (bytes). */
int kconv_wgrad_wgmma_smem(int bm, int bn);
/* 1 when x's tiles will come by TMA im2col (dy packed and dY by TMA, C % 64
 * == 0, no depth (the map is 4-d), the map's corners in range, neither XDNN_WGRAD_NO_TMA=1 nor
 * XDNN_WGRAD_X_NO_TMA=1), else 0: the producer gathers them with cp.async. */
int kconv_wgrad_wgmma_x_tma(const kconv_params *p);
/* dw = conv_wgrad(dy, x) for a 1-, 2- or 3-D conv, groups 1, x and dy
 * channels-last of one type, f16 or bf16, C % 4 == 0 (C % 8 == 4: the GEMM
 * runs Cg = C + 4 channels, the pad zero-filled), K % 8 == 0, pixel strides
 * multiples of 8 elements (x's of 4 when C % 8 == 4; the engine checks); dw
 * any strides and type.  The N*O*P*Q reduction is cut into `splits` ranges
 * of whole KWX_BK slices (the caller's count, normalised here so that none
 * is empty): CTA (j tile, k tile, split z) writes its f32 tile to
 * ws[z][K][T*R*S*Cg] and a second kernel sums the splits in order into dw
 * (deterministic). */
int kconv_wgrad_wgmma(const kconv_params *p, const void *x, void *dw, const void *dy, float *ws, int bm, int bn,
                      int splits, void *stream);

#ifdef __cplusplus
}
#endif

#endif
