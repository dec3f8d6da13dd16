/* kern_sdpa.h — the launchers of the precompiled attention kernels
 * (kernels/sdpa.cu, sdpa_mma.cu, sdpa_tf32.cu, sdpa_bwd_mma.cu,
 * sdpa_wgmma_sm90a.cu) and the one parameter block they share with the host
 * engine (eng_sdpa.c).  Plain C on both sides: fixed-width fields only.
 *
 * Tensors are described by a base pointer, a dtype code (XK_*) and four
 * element strides in the logical order of the op (q/k/v/o/do/dq/dk/dv:
 * [B, H, S, D]; bias broadcast to [B, Hq, Sq, Skv] with stride 0 on broadcast
 * dims; stats [B, Hq, Sq]; seq lens [B]).  Semantics: src/ops/sdpa.h.
 *
 * Ragged (THD-packed) sequences (sdpa_flash, sdpa_bwd_flash and the Hopper
 * pair; sdpa_splitkv has its own parameters, kern_sdpa_splitkv.h): with
 * off_q set, the q-side tensors (q, o, stats, do, dq) are [T, H, D] with
 * st[0] = 0, st[1] the head stride and st[2] the token stride, sequence b is
 * tokens [off_q[b], off_q[b+1]) and Sq = T (a bound on every length: the
 * grid covers it, tiles past a sequence's end exit); likewise off_kv for k,
 * v, dk, dv with Skv = T.  B comes from the offsets.  Offsets are clamped
 * into [0, T] and made non-decreasing (never an access out of bounds).
 * seq_len_q (seq_len_kv) never comes with off_q (off_kv). */
#ifndef XDNN_GPU_KERN_SDPA_H
#define XDNN_GPU_KERN_SDPA_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* dtype codes understood by the kernels' loads and stores */
enum { XK_F32 = 0, XK_F16 = 1, XK_BF16 = 2, XK_I32 = 3, XK_I64 = 4, XK_F64 = 5 };

typedef struct xk_tensor {
    const void *p;        /* NULL = absent (optional input or discarded result) */
    int32_t dtype;
    int32_t pad_;
    int64_t st[4];        /* element strides */
} xk_tensor;

typedef struct xk_sdpa {
    int32_t B, Hq, Hk, Sq, Skv, D, Dv;
    int32_t left, right;          /* -1 = unbounded; causal already folded into right */
    int32_t bottom_right;
    float scale;
    uint32_t drop_threshold;      /* 0 = no dropout; else t + 1: keep iff u16 >= t (src/ops/sdpa.h) */
    float drop_scale;             /* 1 / (1 - p) */
    int32_t pad_;
    uint64_t seed;
    xk_tensor q, k, v, bias, len_q, len_kv;
    xk_tensor o, stats;           /* forward results; bwd: o is an input, stats the logsumexp input */
    xk_tensor dout, dq, dk, dv;   /* backward only */
    xk_tensor off_q, off_kv;      /* ragged: [B+1] i32/i64 token offsets (st[0] their stride); p NULL = dense */
    float *delta;                 /* backward scratch f32: [B, Hq, Sq], or [Hq, T] with off_q */
} xk_sdpa;

/* Each returns a cudaError_t as int (0 = launched). */
int xk_sdpa_fwd_rows(const xk_sdpa *p, void *stream);  /* any D, Dv <= 256, any float dtypes */
int xk_sdpa_fwd_mma(const xk_sdpa *p, void *stream);   /* q, k, v f16/bf16 (one dtype), any D, Dv <= 256 */
int xk_sdpa_fwd_tf32(const xk_sdpa *p, void *stream);  /* q, k, v f32 as tf32, any D, Dv <= 256 */
int xk_sdpa_bwd_rows(const xk_sdpa *p, void *stream);  /* any D, Dv <= 256; needs p->delta */
int xk_sdpa_bwd_mma(const xk_sdpa *p, void *stream);   /* q, k, v, do f16/bf16 (one dtype), any D, Dv <= 256;
                                                           needs p->delta; deterministic (no atomics) */

/* The Hopper forward (kernels/sdpa_wgmma_sm90a.cu, sm_90a only): q, k, v, o
 * in one of f16/bf16, D, Dv <= 256 and multiples of 8, scale > 0; every
 * mask (window/causal, seq lens, bias, dropout), ragged off_q / off_kv.
 * qkv_st: the element strides of q, k, v as stored ([B, H, S, D]; a packed
 * side [0, head, token, 1]; TMA needs them in 16-byte multiples, rows
 * contiguous).  sched: one int of device memory the launch may zero and
 * use as its work counter (a causal-like band's persistent grid; NULL: one
 * block per work item there).  _built: 1 when the sm_90a code is in
 * this build; _smem: bytes of shared memory per block for head dim
 * max(D, Dv). */
int xk_sdpa_fwd_wgmma(const xk_sdpa *p, const int64_t (*qkv_st)[4], int *sched, void *ws, size_t ws_bytes,
                      void *stream);
/* Its plan for few query rows (v10: a GQA group's heads packed in a tile and
 * the keys split over blocks up to sm_count, combined by sdpa_splitkv's
 * pass) on a device of sm_count SMs: *pack, the heads packed per tile (0:
 * the plain kernel), *nsplit the key splits (1: none); returns the bytes ws
 * must hold for them (0 without splits).  A launch given fewer bytes splits
 * less. */
size_t xk_sdpa_fwd_wgmma_ws(const xk_sdpa *p, int sm_count, int *pack, int *nsplit);
/* Whether the Hopper forward can load p's bias tile by TMA (its v7; else the
 * per-element loads of v6): the bias in q's dtype, keys contiguous, rows not
 * broadcast, 16-byte strides, dense (not ragged) sequences, max(D, Dv) <= 128.
 * The launcher adds what only it knows (the base's alignment, its shared
 * memory); eng_sdpa.c prices the bias with the same rule. */
static inline int xk_sdpa_bias_tma_layout(const xk_sdpa *p, int ragged)
{
    const xk_tensor *b = &p->bias;
    if (ragged || b->dtype != p->q.dtype || b->st[3] != 1 || (b->st[2] == 0 && p->Sq > 1) ||
        (p->D > p->Dv ? p->D : p->Dv) > 128)
        return 0;
    return b->st[0] % 8 == 0 && b->st[1] % 8 == 0 && b->st[2] % 8 == 0;
}
int xk_sdpa_fwd_wgmma_built(void);
int xk_sdpa_fwd_wgmma_smem(int D);

/* Dynamic shared memory (bytes per block) the tensor-core kernels need for
 * these head dims: the engines refuse what the device cannot give. */
int xk_sdpa_fwd_mma_smem(int D, int Dv);
int xk_sdpa_fwd_tf32_smem(int D, int Dv);
int xk_sdpa_bwd_mma_smem(int D, int Dv);

#ifdef __cplusplus
}
#endif

#endif
