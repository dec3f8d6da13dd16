/* conv_wgrad_wgmma.h — the host rules of the conv_wgrad_wgmma engine
 * (eng_conv_wgrad_wgmma.c; kernel kernels/conv_wgrad_wgmma_sm90a.cu): which
 * weight gradients it runs, its tile and its split of the reduction.  No CUDA
 * calls: the unit test runs them on a GPU-less machine. */
#ifndef XDNN_GPU_CONV_WGRAD_WGMMA_H
#define XDNN_GPU_CONV_WGRAD_WGMMA_H

#include "gpu/conv_analyze.h"
#include "gpu/device.h"

/* The kernel's rules: compute capability 9.0 (wgmma, setmaxnreg), a
 * conv_wgrad of 1-3 spatial dims, groups 1, dy and x both f16 or both
 * bf16, channels-last with pixel strides in multiples of 8 elements (x's of
 * 4 when C % 8 == 4), C % 4 == 0 and K % 8 == 0, N*O*P*Q and every tensor
 * spanning < 2^31 elements
 * (dw: any type and strides).  False with the reason (attribute and value);
 * conv_wgrad_mma keeps what it refuses. */
bool gpu_conv_wgrad_wgmma_check(const ggraph *g, const gconv_problem *cp, const gpu_device *dev, char *why,
                                size_t len);

/* The launch: the tile bm x bn (64 x 256 for K <= 64, else 128 x 128 or
 * 128 x 256, whichever the model times lower; XDNN_WGRAD_TILE=BMxBN forces
 * one) and the splits of the N*P*Q reduction that minimise the modelled time
 * (waves of one CTA per SM, a slice's time per tile and x loader, against
 * the partials written and summed), normalised so that none is empty.
 * XDNN_WGRAD_SPLITS=n forces n (tests). */
typedef struct gwx_plan {
    int bm, bn, splits;
    int64_t tiles, slices; /* CTA tiles of dW, KWX_BK-row slices of the reduction */
    double us;             /* the modelled time of the kernel and its reduction */
} gwx_plan;
void gpu_conv_wgrad_wgmma_plan(const kconv_params *k, int sm_count, gwx_plan *out);
/* The f32 partials: splits * K * T*R*S*Cg floats (Cg: C rounded up to 8), rounded to 256 bytes. */
size_t gpu_conv_wgrad_wgmma_ws_bytes(const kconv_params *k, const gwx_plan *pl);

#endif
