/* conv_wgmma.h — the host rules of the conv_igemm_wgmma engine
 * (eng_conv_wgmma.c; kernel kernels/conv_igemm_wgmma_sm90a.cu): which forward
 * convs it runs, its tile width and its split-K.  No CUDA calls: the unit
 * test runs them on a GPU-less machine. */
#ifndef XDNN_GPU_CONV_WGMMA_H
#define XDNN_GPU_CONV_WGMMA_H

#include "gpu/conv_analyze.h"
#include "gpu/conv_pack.h"
#include "gpu/device.h"

/* The kernel's rules: compute capability 9.0 (wgmma, setmaxnreg), a forward
 * conv or conv_dgrad of 1 to 3 spatial dims, groups 1, x and w both f16 or both bf16,
 * K % 8 == 0 (a conv_dgrad: dy's K % 8 == 0, dx's C even), tensors
 * spanning < 2^31 elements; x and w channels-last with
 * 16-byte aligned rows and C % 8 == 0, or else (the C = 3 stem, odd C, NCHW)
 * run on channels-last copies with C padded to 8: pk (may be NULL) gets the
 * copies' plan, pk->on set when they are needed.  False with the reason
 * (attribute and value). */
bool gpu_conv_wgmma_check(const ggraph *g, const gconv_problem *cp, const gpu_device *dev, gconv_packed *pk,
                          char *why, size_t len);
/* The tile width over K: 32 for a 3-D conv of K <= 32 (XDNN_CONV_WGMMA_BN32:
 * 0 never, 1 any conv of K <= 32), else 128 when it pads K by at most an
 * eighth, else 64. */
int gpu_conv_wgmma_bn(const kconv_params *k);
/* Split-K: 1 when the 128 x bn tiles fill the SMs (one CTA per SM);
 * otherwise about SMs / tiles splits of the 64-deep k slices, each at least
 * 4 slices, at most 16.  XDNN_CONV_SPLITK=n forces n (tests), as for
 * conv_igemm.  Normalised so that none is empty.  ws_bytes: the f32 partials
 * (s * M * K floats, 0 when unsplit), rounded to 256. */
int gpu_conv_wgmma_splits(const kconv_params *k, int sm_count);
size_t gpu_conv_wgmma_ws_bytes(const kconv_params *k, int splits);

/* Can the forward conv of partition p write the batchnorm statistics of its
 * result y (genstats.h) for a batchnorm of C channels over M rows?  The
 * engine's plan of p, a forward conv whose stored tensor is y, f16 or bf16,
 * K == C and N*P*Q == M; it then runs unsplit (the statistics come from the
 * fused store, which split-K's separate reduction does not run).  False with
 * the reason. */
bool gpu_conv_wgmma_genstats_ok(const gplan *pl, const gpart *p, const gpu_device *dev, int y, int64_t C, int64_t M,
                                char *why, size_t len);

#endif
