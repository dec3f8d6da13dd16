/* kern_sdpa_splitkv.h — the launcher of the split-KV attention forward
 * (kernels/sdpa_splitkv.cu; host side src/gpu/eng_sdpa_splitkv.c) for decode
 * and chunked prefill: few query rows, many keys.  Parameters are those of
 * every attention kernel (xk_sdpa, kern_sdpa.h) plus the split count and the
 * workspace the partial results go to.
 *
 * Semantics covered: q, k, v, o in one of f16/bf16 (one dtype), D, Dv <= 256,
 * scale, causal or no mask (right = 0 or -1, left = -1; either alignment),
 * GQA/MQA, stats; no bias, seq lens or dropout (the engine refuses them). */
#ifndef XDNN_GPU_KERN_SDPA_SPLITKV_H
#define XDNN_GPU_KERN_SDPA_SPLITKV_H

#include "gpu/kern_sdpa.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The tile shape a launch uses: query rows of one KV head's group packed
 * (position-major, the group's heads minor) into tiles of `rows` (16 or 64),
 * keys streamed in tiles of `keys`; `smem`: dynamic shared memory per block. */
typedef struct xk_splitkv_shape {
    int rows, keys, smem;
} xk_splitkv_shape;

xk_splitkv_shape xk_sdpa_splitkv_shape(int group_rows, int D, int Dv);

/* Workspace bytes for nsplit > 1: partial o (f32, normalized by its own row
 * sum) and its log2-sum-exp per split and query row. */
size_t xk_sdpa_splitkv_ws(const xk_sdpa *p, int nsplit);

/* Launch: the split pass (grid nsplit x row tiles x B*Hk), then, when
 * nsplit > 1, the combine pass (one block per query row).  nsplit == 1
 * writes o and stats directly and needs no workspace.  Returns a
 * cudaError_t as int. */
int xk_sdpa_splitkv(const xk_sdpa *p, int nsplit, void *ws, void *stream);

#ifdef __cplusplus
}
#endif

#endif
