/* eng_seq.h — host-side analysis of the attention and recurrent engines
 * (eng_sdpa.c, eng_rnn.c), exposed so unit tests can check the supports()
 * decisions and the kernel parameters without a GPU. */
#ifndef XDNN_GPU_ENG_SEQ_H
#define XDNN_GPU_ENG_SEQ_H

#include "gpu/device.h"
#include "gpu/kern_sdpa.h"
#include "gpu/partition.h"

#include <stddef.h>

/* Tensor ids (ggraph) of one sdpa or sdpa_bwd node; -1 = absent. */
typedef struct sdpa_ids {
    int q, k, v, bias, len_q, len_kv;
    int o, stats;          /* fwd results; bwd inputs */
    int dout, dq, dk, dv;  /* bwd */
    int page_table, off_q, off_kv; /* serving inputs: paged K/V (fwd), ragged THD (fwd and bwd) */
} sdpa_ids;

/* Which kernel family a partition would run on. */
typedef enum sdpa_kind {
    SDPA_K_ROWS,     /* sdpa_naive */
    SDPA_K_MMA,      /* sdpa_flash (f16/bf16) */
    SDPA_K_TF32,     /* sdpa_flash_tf32 (f32 graphs that allow tf32) */
    SDPA_K_BWD,      /* sdpa_bwd (CUDA cores) */
    SDPA_K_BWD_MMA,  /* sdpa_bwd_flash (tensor cores) */
    SDPA_K_SERVE,    /* sdpa_splitkv: SDPA_K_MMA plus paged K/V and ragged THD (rank-3
                        q/o/k/v: st[1] the head stride, st[2] the token stride, st[0] 0) */
} sdpa_kind;

/* Fill kp (all but the device pointers) and ids from partition p; false with
 * a reason naming the op, attribute or tensor when `kind` cannot run it. */
bool gpu_sdpa_analyze(const gplan *pl, const gpart *p, sdpa_kind kind, xk_sdpa *kp, sdpa_ids *ids, char *why,
                      size_t len);

/* Tensor t (q, k, v, o, do, dq, dk or dv of an attention node) as [B, H, S,
 * D] dims and element strides as stored; a ragged (THD, rank-3) one as one
 * batch of T rows: [1, H, T, D], strides [0, head, token, 1] (eng_sdpa.c). */
void gpu_sdpa_bhsd(const gtensor *t, int64_t dims[4], int64_t st[4]);

/* The cost (us) of a forward with one block per (batch, head,
 * rows_per_block query rows) running at `tflops` when the device is full:
 * its roofline time stretched by sm_count / blocks when there are fewer
 * blocks than SMs (the launch overhead is not).  eng_sdpa_splitkv.c; the
 * costs of sdpa_flash, sdpa_flash_wgmma and sdpa_naive, so that decode goes
 * to sdpa_splitkv. */
double gpu_sdpa_underfill_us(const gplan *pl, const gpart *p, const gpu_device *dev, int rows_per_block,
                             double tflops);

/* rnn / lstm / gru forward through cuBLASLt (eng_rnn.c). */
typedef struct rnn_plan {
    int cell;              /* rnn_cell of ops/rnn.h */
    int64_t T, N, I, H, L, D, G, Iw;
    int x, h0, c0, w_ih, w_hh, b_ih, b_hh;   /* tensor ids, -1 = absent */
    int y, h_n, c_n;
    /* workspace layout (bytes from the partition's workspace base) */
    size_t off_x, off_wih, off_whh, off_bih, off_bhh, off_ys0, off_ys1, off_ain, off_hh, off_h, off_c, off_lt;
    size_t ws_total;
} rnn_plan;

bool gpu_rnn_analyze(const gplan *pl, const gpart *p, rnn_plan *rp, char *why, size_t len);

#endif
