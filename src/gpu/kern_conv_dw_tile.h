/* kern_conv_dw_tile.h — conv_dw v2 (kernels/conv_dw_tile.cu, the default; XDNN_CONV_DW_V2=0: v1;
 * session 12, on an H100 since session 13): depthwise 2-D convolution with a 2-D
 * output tile a thread, each input row loaded once.  Its own header so the
 * other kernels (which include kern_conv.h) do not rebuild for it.
 *
 * kconv_dw_tile_fits: x/y f16 or bf16, 2-D, square 3x3 or 5x5 window,
 * stride 1 or 2 on both dims, dilation 1, C and every non-channel stride of
 * x and y % 8 == 0 (the dgrad: stride 1 as the flipped-tap forward, stride 2
 * by stride phases).
 * kconv_dw_tile: the same arguments as kconv_dw; it runs kconv_dw (v1) where
 * the shape does not fit or a base is not 16-byte aligned. */
#ifndef XDNN_GPU_KERN_CONV_DW_TILE_H
#define XDNN_GPU_KERN_CONV_DW_TILE_H

#include "gpu/kern_conv.h"

#ifdef __cplusplus
extern "C" {
#endif

int kconv_dw_tile_fits(const kconv_params *p, int dgrad);
int kconv_dw_tile(const kconv_params *p, int dgrad, const void *src, const void *w, void *dst, const kconv_epi *epi,
                  void *stream);

#ifdef __cplusplus
}
#endif

#endif
