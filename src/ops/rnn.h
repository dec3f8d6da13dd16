/* rnn.h — what the recurrent ops (rnn.c: rnn, lstm, gru; rnn_bwd.c: their
 * backwards) share: shapes and packing, the checks, and a forward pass that
 * records everything backpropagation through time needs.
 *
 * Layouts (logical, sequence-major like PyTorch's batch_first=false):
 *   x   [T, N, I]                 y   [T, N, D*H]  (direction 0 in [0, H), reverse in [H, 2H))
 *   h0, c0, h_n, c_n  [L*D, N, H] row l*D + d is layer l, direction d (0 forward, 1 reverse)
 *   w_ih [L*D, G*H, Iw]           w_hh [L*D, G*H, H]      b_ih, b_hh [L*D, G*H] (optional, zero)
 * D = 2 when bidirectional else 1; G = 1 (rnn), 4 (lstm), 3 (gru); gate rows
 * in PyTorch order (LSTM i, f, g, o; GRU r, z, n).
 * Input widths differ per layer (I for layer 0, D*H above), so w_ih is packed
 * with Iw = I when L == 1 and Iw = max(I, D*H) when L > 1: layer 0 uses the
 * first I columns, later layers the first D*H; unused columns are ignored
 * (their gradient is 0).
 *
 * Cells (a = W_ih x + b_ih, r-th block a[r], likewise b = W_hh h + b_hh):
 *   rnn:  h' = act(a + b), act = tanh or relu (attribute nonlinearity)
 *   lstm: i = σ(a0+b0), f = σ(a1+b1), g = tanh(a2+b2), o = σ(a3+b3),
 *         c' = f c + i g, h' = o tanh(c')
 *   gru:  r = σ(a0+b0), z = σ(a1+b1), n = tanh(a2 + r (W_hn h + b_hn)),
 *         h' = (1 - z) n + z h
 */
#ifndef XDNN_OPS_RNN_H
#define XDNN_OPS_RNN_H

#include "op.h"

typedef enum rnn_cell { RNN_CELL_TANH, RNN_CELL_RELU, RNN_CELL_LSTM, RNN_CELL_GRU } rnn_cell;

typedef struct rnn_dims {
    rnn_cell cell;
    int64_t T, N, I, H, L, D, G, Iw;
} rnn_dims;

/* Port indices of one op; -1 where the op has no such port. */
typedef struct rnn_ports {
    int x, h0, c0, w_ih, w_hh, b_ih, b_hh, dy, dh_n, dc_n;
} rnn_ports;

/* Attribute lists: rnn(_bwd) has nonlinearity, lstm/gru(_bwd) do not. */
enum { RNN_NATTRS = 3, RNN_GATED_NATTRS = 2 };
extern const attr_spec rnn_attrs[RNN_NATTRS];
extern const attr_spec rnn_gated_attrs[RNN_GATED_NATTRS];

/* The cell an op node computes: `base` (LSTM, GRU) or tanh/relu for rnn. */
rnn_cell rnn_cell_of(const xnode *node, const op_desc *d, rnn_cell base);

/* Check the inputs at ports p (and the attributes); fill *n.  Results are
 * left to the caller. */
xdnn_status rnn_check(op_infer_ctx *c, rnn_cell base, const rnn_ports *p, rnn_dims *n);

/* Dims of a bound node for the reference (inputs already checked). */
void rnn_dims_ref(const op_ref_ctx *c, rnn_cell base, const rnn_ports *p, rnn_dims *n);

/* Inputs of the forward pass (packed doubles; b_ih, b_hh, c0 may be NULL = 0). */
typedef struct rnn_inputs {
    const double *x, *h0, *c0, *w_ih, *w_hh, *b_ih, *b_hh;
} rnn_inputs;

/* A recorded forward pass.  Step s of direction d is time t = s (d = 0) or
 * T-1-s (d = 1); arrays indexed by ld = l*D + d. */
typedef struct rnn_tape {
    rnn_dims n;
    double *ys;    /* [L, T, N, D*H] output of every layer */
    double *h;     /* [L*D, T+1, N, H] state before step s; s = T is h_n */
    double *c;     /* [L*D, T+1, N, H] LSTM cell state, else NULL */
    double *gates; /* [L*D, T, N, G*H] activated gates (LSTM, GRU), else NULL */
    double *hn;    /* [L*D, T, N, H] GRU: W_hn h + b_hn, else NULL */
} rnn_tape;

/* Run the forward pass into a fresh tape.  XDNN_ERR_NOMEM (nothing kept) when
 * the tape cannot be allocated. */
xdnn_status rnn_forward(const rnn_dims *n, const rnn_inputs *in, rnn_tape *tape);
/* The data of input `port` of a reference call: NULL when the op has no such
 * port (port < 0) or it was not given. */
const double *rnn_in_data(const op_ref_ctx *c, int port);
/* The forward inputs of a reference call, by the port numbers in p. */
rnn_inputs rnn_inputs_ref(const op_ref_ctx *c, const rnn_ports *p);
void rnn_tape_free(rnn_tape *tape);

/* Helpers for indexing a tape. */
static inline int64_t rnn_time(const rnn_dims *n, int64_t d, int64_t s) { return d ? n->T - 1 - s : s; }
static inline int64_t rnn_in_width(const rnn_dims *n, int64_t l) { return l ? n->D * n->H : n->I; }

/* Multiply-adds of the forward pass (backward: about three times, with the recompute). */
double rnn_flops_of(const xgraph *g, const xnode *node, const rnn_ports *p, rnn_cell base, double factor);

#endif
