/* kern_rnn_bwd.h — launchers of the rnn/lstm/gru backward kernels
 * (kernels/rnn_bwd.cu) used by eng_rnn_bwd.c.  All buffers are packed f32 in
 * the engine's workspace; "this ld" means already offset to one (layer,
 * direction).  Step s of direction d is time t = s (d = 0) or T-1-s (d = 1).
 * Cell equations and gate orders: src/ops/rnn.h; backward: src/ops/rnn_bwd.c. */
#ifndef XDNN_GPU_KERN_RNN_BWD_H
#define XDNN_GPU_KERN_RNN_BWD_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct xk_rnnb {
    int32_t cell, T, N, H, G;  /* cell: rnn_cell of ops/rnn.h */
    int32_t width, Iw, d, s;   /* layer input width, packed w_ih row length, direction, step */
    const float *xin;          /* layer input [T, N, width] with row stride xin_ld */
    int64_t xin_ld;
    const float *wi, *wh;      /* this ld: [G*H, Iw], [G*H, H] */
    const float *bi, *bh;      /* this ld: [G*H] or NULL (zero) */
    float *h, *c;              /* tape of this ld: [T+1, N, H]; c only for LSTM */
    float *gates, *hn;         /* [T, N, G*H] (LSTM, GRU), [T, N, H] (GRU), else NULL */
    float *ys;                 /* layer output, offset to d*H, row stride ys_ld */
    int64_t ys_ld;
    const float *dcur;         /* gradient of the layer output, offset to d*H, row stride dcur_ld */
    int64_t dcur_ld;
    float *dh, *dc, *direct;   /* [N, H]: gradient of the state entering the step; GRU's z*dh part */
    float *da_i, *da_h;        /* [T, N, G*H] gate pre-activation gradients, by step */
    float *dprev;              /* gradient of the layer input [T, N, width] (added to) */
    float *dwi, *dwh, *dbi, *dbh; /* this ld: [G*H, Iw], [G*H, H], [G*H], [G*H] (written) */
} xk_rnnb;

/* Forward step s: tape h/c/gates/hn of step s+1 and the layer output row. */
int xk_rnnb_fwd_step(const xk_rnnb *p, void *stream);
/* Backward step s, elementwise: da_i/da_h of step s, dc updated, direct. */
int xk_rnnb_cell_bwd(const xk_rnnb *p, void *stream);
/* Backward step s: dh = direct + W_hhᵀ da_h (the state gradient of step s). */
int xk_rnnb_dh(const xk_rnnb *p, void *stream);
/* After all steps: dprev[t, n, :width] += W_ihᵀ da_i(t). */
int xk_rnnb_dx(const xk_rnnb *p, void *stream);
/* After all steps: dwi[:, :width], dwh, dbi, dbh of this ld, each element a
 * sum over steps and rows in a fixed order (deterministic, no atomics). */
int xk_rnnb_wgrad(const xk_rnnb *p, void *stream);

#ifdef __cplusplus
}
#endif

#endif
