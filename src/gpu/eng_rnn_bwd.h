/* eng_rnn_bwd.h — host-side analysis of the rnn_bwd_direct engine
 * (eng_rnn_bwd.c: rnn_bwd, lstm_bwd, gru_bwd), exposed so unit tests can check
 * the supports() decisions and the workspace layout without a GPU. */
#ifndef XDNN_GPU_ENG_RNN_BWD_H
#define XDNN_GPU_ENG_RNN_BWD_H

#include "gpu/partition.h"

#include <stddef.h>
#include <stdint.h>

typedef struct rnnb_plan {
    int cell;                /* rnn_cell of ops/rnn.h */
    int64_t T, N, I, H, L, D, G, Iw;
    /* tensor ids (ggraph), -1 = absent */
    int x, h0, c0, w_ih, w_hh, dy, b_ih, b_hh, dh_n, dc_n;
    int dx, dh0, dc0, dw_ih, dw_hh, db_ih, db_hh;
    /* workspace layout: f32 buffers, byte offsets from the 256-aligned base */
    size_t off_x, off_wih, off_whh, off_bih, off_bhh, off_dy;
    size_t off_dhs, off_dcs;         /* [L*D, N, H]: dh_n (dc_n) in, dh0 (dc0) out */
    size_t off_ys, off_h, off_c, off_gates, off_hn; /* the forward tape */
    size_t off_direct, off_dai, off_dah, off_g0, off_g1;
    size_t off_dwi, off_dwh, off_dbi, off_dbh;
    size_t ws_total;                 /* bytes, with 256 of alignment slack */
} rnnb_plan;

/* Fill rp from partition p; false with a reason naming the op, port and
 * value when rnn_bwd_direct cannot run it. */
bool gpu_rnnb_analyze(const gplan *pl, const gpart *p, rnnb_plan *rp, char *why, size_t len);

#endif
