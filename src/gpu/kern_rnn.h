/* kern_rnn.h — launchers of the recurrent-op kernels (kernels/rnn.cu) used by
 * eng_rnn.c: a strided any-dtype copy (packing inputs to f32, unpacking
 * results) and the fused gate kernel of one time step.  Cell equations and
 * gate orders: src/ops/rnn.h. */
#ifndef XDNN_GPU_KERN_RNN_H
#define XDNN_GPU_KERN_RNN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* dst[i] = src[i] over a rank <= 4 index space; dtype codes as kern_sdpa.h (XK_*). */
typedef struct xk_copy {
    const void *src;
    void *dst;
    int32_t sdt, ddt, rank, pad_;
    int64_t dims[4], sst[4], dst_st[4];
} xk_copy;

/* One step of one (layer, direction): gates from the input projection row
 * block `ain` (row stride ain_ld, already offset to this direction) and the
 * recurrent product `hh` [N, G*H]; updates h (and c) in place and writes the
 * layer output ys[(t*N + n)*ys_ld + k] (ys already offset to this direction). */
typedef struct xk_gates {
    int32_t cell, N, H, pad_;        /* cell: rnn_cell of ops/rnn.h */
    const float *ain;                /* row n of this step at ain + n * ain_ld */
    int64_t ain_ld;
    const float *hh, *b_ih, *b_hh;   /* biases [G*H] or NULL */
    float *h, *c;                    /* [N, H]; c only for LSTM */
    float *ys;
    int64_t ys_ld;
} xk_gates;

int xk_copy_strided(const xk_copy *c, void *stream);
int xk_rnn_gates(const xk_gates *g, void *stream);

#ifdef __cplusplus
}
#endif

#endif
