/* kern_sdpa_splitkv.h — the launcher of the split-KV attention forward
 * (kernels/sdpa_splitkv.cu; host side src/gpu/eng_sdpa_splitkv.c) for decode
 * and chunked prefill: few query rows, many keys.  Parameters are those of
 * every attention kernel (xk_sdpa, kern_sdpa.h) plus the split count and the
 * workspace the partial results go to.
 *
 * Semantics covered: q, k, v, o in one of f16/bf16 (one dtype), D, Dv <= 256,
 * scale, causal or no mask (right = 0 or -1, left = -1; either alignment),
 * GQA/MQA, stats, seq_len_kv, paged K/V and ragged THD sequences
 * (xk_splitkv_serve); no bias, seq_len_q or dropout (the engine refuses them). */
#ifndef XDNN_GPU_KERN_SDPA_SPLITKV_H
#define XDNN_GPU_KERN_SDPA_SPLITKV_H

#include "gpu/kern_sdpa.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The tile shape a launch uses: query rows of one KV head's group packed
 * (position-major, the group's heads minor) into tiles of `rows` (16 or 64),
 * keys streamed in tiles of `keys` through `stages` shared-memory stages;
 * `smem`: dynamic shared memory per block; `max_blocks`: blocks per SM its
 * registers allow (3 for 16-row tiles up to D 128, else 2).  stages: 0 = the
 * kernel's default (2 for 16-row tiles of D 128: three blocks fit; 3 for
 * the others up to D 128; 2 past it), else clamped to [2, 6]. */
typedef struct xk_splitkv_shape {
    int rows, keys, smem, stages, max_blocks;
} xk_splitkv_shape;

xk_splitkv_shape xk_sdpa_splitkv_shape(int group_rows, int D, int Dv, int stages);

/* Launch knobs (NULL: the defaults): stages as above; prefetch: key tiles
 * asked of the L2 ahead of the stages (Hopper's bulk prefetch; 0 = none). */
typedef struct xk_splitkv_tune {
    int stages, prefetch;
} xk_splitkv_tune;

/* Workspace bytes for nsplit > 1: partial o (f32, normalized by its own row
 * sum) and its log2-sum-exp per split and query row. */
size_t xk_sdpa_splitkv_ws(const xk_sdpa *p, int nsplit);

/* Where the partials lie in that workspace (NULL, NULL for nsplit <= 1):
 * o of split s, query row (b, h, i) at wo[(s * rows + (b * Hq + h) * Sq + i)
 * * Dv], its log2-sum-exp at wl[s * rows + ...]; rows = B * Hq * Sq. */
static inline void xk_splitkv_ws_parts(const xk_sdpa *p, int nsplit, void *ws, float **wo, float **wl)
{
    const size_t rows = (size_t)p->B * (size_t)p->Hq * (size_t)p->Sq;
    *wo = nsplit > 1 && ws ? (float *)(void *)(((uintptr_t)ws + 255) & ~(uintptr_t)255) : NULL;
    *wl = *wo ? *wo + (size_t)nsplit * rows * (size_t)p->Dv : NULL;
}

/* The combine pass alone, over partials another kernel wrote into ws as
 * above (sdpa_flash_wgmma's key splits, kernels/sdpa_wgmma_sm90a.cu): o in
 * part_dtype (XK_F32, XK_F16 or XK_BF16, at wo as above), the logsumexp at
 * wl in log2 units or, lse_ln != 0, natural-log ones; o and stats of dense
 * q in their dtypes.  A no-op for nsplit <= 1.  Returns a cudaError_t as
 * int. */
int xk_sdpa_splitkv_combine(const xk_sdpa *p, int nsplit, void *ws, int part_dtype, int lse_ln, void *stream);

/* The serving inputs (src/ops/sdpa.h): a paged K/V cache and ragged THD
 * sequences; all zero = dense.
 *   page_table: k, v are page pools (st[0] steps a page of num_pages, st[2]
 *     a slot of page_size); key j of sequence b is slot j % page_size of page
 *     page_table[b * pt_stride + j / page_size]; p->Skv = max_pages *
 *     page_size and p->len_kv gives each sequence's keys.  A page index out
 *     of [0, num_pages) is clamped (never read out of bounds; the reference
 *     reports it).
 *   off_q / off_kv: sequence b is tokens [off[b], off[b+1]) of q, o, stats
 *     (k, v), whose st[2] steps a token (st[0] = 0); p->Sq (p->Skv) is the
 *     token count T, a bound on every length. */
typedef struct xk_splitkv_serve {
    const void *page_table, *off_q, *off_kv;
    int32_t pt_dtype, off_q_dtype, off_kv_dtype; /* XK_I32 or XK_I64 */
    int32_t page_size, num_pages, pad_;
    int64_t pt_stride;
} xk_splitkv_serve;

/* Launch: the split pass (grid nsplit x row tiles x B*Hk), then, when
 * nsplit > 1, the combine pass (one block per query row).  nsplit == 1
 * writes o and stats directly and needs no workspace.  sv: NULL = dense.
 * Returns a cudaError_t as int. */
int xk_sdpa_splitkv(const xk_sdpa *p, const xk_splitkv_serve *sv, int nsplit, const xk_splitkv_tune *tune, void *ws,
                    void *stream);

#ifdef __cplusplus
}
#endif

#endif
