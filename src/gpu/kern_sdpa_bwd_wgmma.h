/* kern_sdpa_bwd_wgmma.h — the launcher of the Hopper attention backward
 * (kernels/sdpa_bwd_wgmma_sm90a.cu, sm_90a only; host side:
 * eng_sdpa_bwd_wgmma.c).  Parameter block: kern_sdpa.h's xk_sdpa. */
#ifndef XDNN_GPU_KERN_SDPA_BWD_WGMMA_H
#define XDNN_GPU_KERN_SDPA_BWD_WGMMA_H

#include "gpu/kern_sdpa.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* q, k, v, do, dq, dk, dv in one of f16/bf16 (o in it or f32), D and Dv % 8 == 0 in
 * [8, 256] (D != Dv: both zero-padded to the wider; past 128 the wide kernel, not
 * deterministic: refused there), Sq, Skv >= 1, scale > 0, no bias; dropout (not ragged); any mask (window,
 * seq lens, ragged off_q / off_kv as kern_sdpa.h describes them); o, do, dq,
 * dk, dv 16-byte aligned with rows contiguous.
 * st: the element strides of q, k, v, do as stored ([B, H, S, D], 16-byte
 * multiples; a packed side [0, head, token, 1]: eng_seq.h's gpu_sdpa_bhsd).
 * ws: xk_sdpa_bwd_wgmma_ws bytes (lse, Delta, the f32 dQ sums, semaphores).
 * dQ is summed with atomics: the last bits vary run to run, unless
 * deterministic (the key blocks add into each dQ tile in a fixed order).
 * Returns a cudaError_t as int. */
int xk_sdpa_bwd_wgmma(const xk_sdpa *p, const int64_t (*st)[4], void *ws, int deterministic, void *stream);
/* D: max(D, Dv) here and in _smem; ragged_q: Sq = T packed tokens */
size_t xk_sdpa_bwd_wgmma_ws(int B, int Hq, int Sq, int D, int ragged_q);
int xk_sdpa_bwd_wgmma_built(void);  /* 1 when this build has the sm_90a code */
int xk_sdpa_bwd_wgmma_smem(int D);  /* dynamic shared memory per block */

#ifdef __cplusplus
}
#endif

#endif
