/* rnn_bwd.c — backpropagation through time for rnn, lstm and gru (layouts,
 * packing and cell equations in rnn.h).
 *
 *   dx, dh0, dw_ih, dw_hh, db_ih, db_hh        = rnn_bwd(x, h0, w_ih, w_hh, dy, b_ih=, b_hh=, dh_n=)
 *   dx, dh0, dc0, dw_ih, dw_hh, db_ih, db_hh   = lstm_bwd(x, h0, c0, w_ih, w_hh, dy, b_ih=, b_hh=, dh_n=, dc_n=)
 *   dx, dh0, dw_ih, dw_hh, db_ih, db_hh        = gru_bwd(x, h0, w_ih, w_hh, dy, b_ih=, b_hh=, dh_n=)
 * dy [T, N, D*H] is the gradient of y; dh_n, dc_n [L*D, N, H] those of h_n,
 * c_n (absent = 0).  Results have the shapes of the matching inputs; db_ih and
 * db_hh are [L*D, G*H] whether or not the biases were given.
 *
 * The reference recomputes the forward pass (rnn_forward records every state
 * and gate), then walks layers top-down and steps backwards in processing
 * order.  Per step, with dh = dh_next + dy_t (this direction's half):
 *   rnn tanh: da = dh (1 - h'^2);   relu: da = dh [h' > 0];   da_ih = da_hh = da
 *   lstm: dc  = dc_next + dh o (1 - tanh(c')^2);  dc_prev = dc f
 *         da  = [dc g i(1-i), dc c f(1-f), dc i (1-g^2), dh tanh(c') o(1-o)],  da_ih = da_hh = da
 *   gru:  dn = dh (1-z) (1-n^2);  dz = dh (h - n) z(1-z);  dr = dn hn r(1-r)
 *         da_ih = [dr, dz, dn],  da_hh = [dr, dz, dn r],  dh_prev gets dh z directly
 * then dW_ih += da_ih ⊗ x_t, dW_hh += da_hh ⊗ h, db += da, dx_t += W_ihᵀ da_ih,
 * dh_prev += W_hhᵀ da_hh.  dx_t of layer l > 0 is dy of layer l-1.
 */
#include "rnn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Output pointers and incoming gradients of one backward call. */
typedef struct rnn_grads {
    const double *dy, *dh_n, *dc_n;
    double *dx, *dh0, *dc0, *dw_ih, *dw_hh, *db_ih, *db_hh;
} rnn_grads;

/* Scratch of the backward walk. */
typedef struct rnn_work {
    double *dcur, *dprev; /* [T, N, max(I, D*H)] gradient of the layer output / input */
    double *dh, *dc;      /* [N, H] gradient of the state entering the current step */
    double *dht, *direct; /* [H] */
    double *da_i, *da_h;  /* [G*H] */
} rnn_work;

/* Gradients of the gate pre-activations of step s, row nn, from dht (the
 * gradient of that step's h').  Updates dc[nn] to the gradient of c before
 * the step (LSTM) and fills direct[] with dh_prev's non-matrix part (GRU). */
static void cell_backward(const rnn_dims *n, const rnn_tape *tp, int64_t ld, int64_t s, int64_t nn, rnn_work *w)
{
    const int64_t T = n->T, N = n->N, H = n->H, GH = n->G * n->H;
    const double *hprev = tp->h + ((ld * (T + 1) + s) * N + nn) * H;
    const double *hnew = tp->h + ((ld * (T + 1) + s + 1) * N + nn) * H;
    const double *gt = tp->gates ? tp->gates + ((ld * T + s) * N + nn) * GH : NULL;
    for (int64_t k = 0; k < H; k++) {
        double dh = w->dht[k];
        w->direct[k] = 0;
        switch (n->cell) {
        case RNN_CELL_TANH:
            w->da_i[k] = w->da_h[k] = dh * (1 - hnew[k] * hnew[k]);
            break;
        case RNN_CELL_RELU:
            w->da_i[k] = w->da_h[k] = hnew[k] > 0 ? dh : 0;
            break;
        case RNN_CELL_LSTM: {
            double cprev = tp->c[((ld * (T + 1) + s) * N + nn) * H + k];
            double cnew = tp->c[((ld * (T + 1) + s + 1) * N + nn) * H + k];
            double ig = gt[k], fg = gt[H + k], gg = gt[2 * H + k], og = gt[3 * H + k];
            double tc = tanh(cnew);
            double dc = w->dc[nn * H + k] + dh * og * (1 - tc * tc);
            w->dc[nn * H + k] = dc * fg;
            w->da_i[k] = dc * gg * ig * (1 - ig);
            w->da_i[H + k] = dc * cprev * fg * (1 - fg);
            w->da_i[2 * H + k] = dc * ig * (1 - gg * gg);
            w->da_i[3 * H + k] = dh * tc * og * (1 - og);
            for (int q = 0; q < 4; q++)
                w->da_h[q * H + k] = w->da_i[q * H + k];
            break;
        }
        case RNN_CELL_GRU:
        default: {
            double r = gt[k], z = gt[H + k], nv = gt[2 * H + k];
            double hn = tp->hn[((ld * T + s) * N + nn) * H + k];
            double dn = dh * (1 - z) * (1 - nv * nv);
            double dz = dh * (hprev[k] - nv) * z * (1 - z);
            double dr = dn * hn * r * (1 - r);
            w->direct[k] = dh * z;
            w->da_i[k] = w->da_h[k] = dr;
            w->da_i[H + k] = w->da_h[H + k] = dz;
            w->da_i[2 * H + k] = dn;
            w->da_h[2 * H + k] = dn * r;
            break;
        }
        }
    }
}

/* Backward of one (layer, direction): consumes w->dcur, adds into w->dprev
 * and the weight gradients, writes dh0 (and dc0) of this ld. */
static void layer_backward(const rnn_dims *n, const rnn_inputs *in, const rnn_tape *tp, const rnn_grads *g,
                           int64_t l, int64_t d, rnn_work *w)
{
    const int64_t T = n->T, N = n->N, H = n->H, DH = n->D * n->H, GH = n->G * n->H;
    const int64_t ld = l * n->D + d, width = rnn_in_width(n, l), Iw = n->Iw;
    const double *wi = in->w_ih + ld * GH * Iw, *wh = in->w_hh + ld * GH * H;
    double *dwi = g->dw_ih + ld * GH * Iw, *dwh = g->dw_hh + ld * GH * H;
    double *dbi = g->db_ih + ld * GH, *dbh = g->db_hh + ld * GH;
    for (int64_t i = 0; i < N * H; i++) {
        w->dh[i] = g->dh_n ? g->dh_n[ld * N * H + i] : 0;
        w->dc[i] = g->dc_n ? g->dc_n[ld * N * H + i] : 0;
    }
    for (int64_t s = T - 1; s >= 0; s--) {
        int64_t t = rnn_time(n, d, s);
        for (int64_t nn = 0; nn < N; nn++) {
            for (int64_t k = 0; k < H; k++)
                w->dht[k] = w->dh[nn * H + k] + w->dcur[(t * N + nn) * DH + d * H + k];
            cell_backward(n, tp, ld, s, nn, w);
            const double *xin = l ? tp->ys + (((l - 1) * T + t) * N + nn) * DH : in->x + (t * N + nn) * n->I;
            const double *hprev = tp->h + ((ld * (T + 1) + s) * N + nn) * H;
            double *dxin = w->dprev + (t * N + nn) * width;
            for (int64_t gi = 0; gi < GH; gi++) {
                double ai = w->da_i[gi], ah = w->da_h[gi];
                dbi[gi] += ai;
                dbh[gi] += ah;
                for (int64_t k = 0; k < width; k++) {
                    dwi[gi * Iw + k] += ai * xin[k];
                    dxin[k] += wi[gi * Iw + k] * ai;
                }
                for (int64_t k = 0; k < H; k++)
                    dwh[gi * H + k] += ah * hprev[k];
            }
            for (int64_t k = 0; k < H; k++) {
                double acc = w->direct[k];
                for (int64_t gi = 0; gi < GH; gi++)
                    acc += wh[gi * H + k] * w->da_h[gi];
                w->dh[nn * H + k] = acc;
            }
        }
    }
    memcpy(g->dh0 + ld * N * H, w->dh, (size_t)(N * H) * sizeof(double));
    if (g->dc0)
        memcpy(g->dc0 + ld * N * H, w->dc, (size_t)(N * H) * sizeof(double));
}

static double *alloc_zero(int64_t count) { return calloc((size_t)(count > 0 ? count : 1), sizeof(double)); }

static void work_free(rnn_work *w)
{
    free(w->dcur);
    free(w->dprev);
    free(w->dh);
    free(w->dc);
    free(w->dht);
    free(w->direct);
    free(w->da_i);
    free(w->da_h);
}

static xdnn_status rnn_backward(const rnn_dims *n, const rnn_inputs *in, const rnn_grads *g)
{
    const int64_t T = n->T, N = n->N, H = n->H, DH = n->D * n->H, GH = n->G * n->H;
    const int64_t wmax = n->I > DH ? n->I : DH;
    rnn_tape tp;
    if (rnn_forward(n, in, &tp))
        return XDNN_ERR_NOMEM;
    rnn_work w = {.dcur = alloc_zero(T * N * wmax), .dprev = alloc_zero(T * N * wmax), .dh = alloc_zero(N * H),
                  .dc = alloc_zero(N * H), .dht = alloc_zero(H), .direct = alloc_zero(H), .da_i = alloc_zero(GH),
                  .da_h = alloc_zero(GH)};
    if (!w.dcur || !w.dprev || !w.dh || !w.dc || !w.dht || !w.direct || !w.da_i || !w.da_h) {
        work_free(&w);
        rnn_tape_free(&tp);
        return XDNN_ERR_NOMEM;
    }
    memcpy(w.dcur, g->dy, (size_t)(T * N * DH) * sizeof(double));
    for (int64_t l = n->L - 1; l >= 0; l--) {
        memset(w.dprev, 0, (size_t)(T * N * wmax) * sizeof(double));
        for (int64_t d = 0; d < n->D; d++)
            layer_backward(n, in, &tp, g, l, d, &w);
        double *swap = w.dcur; /* this layer's input gradient is the next layer's output gradient */
        w.dcur = w.dprev;
        w.dprev = swap;
    }
    memcpy(g->dx, w.dcur, (size_t)(T * N * n->I) * sizeof(double));
    work_free(&w);
    rnn_tape_free(&tp);
    return XDNN_OK;
}

/* ---- the ops */

static const rnn_ports rnn_bwd_ports = {.x = 0, .h0 = 1, .c0 = -1, .w_ih = 2, .w_hh = 3, .dy = 4, .b_ih = 5,
                                        .b_hh = 6, .dh_n = 7, .dc_n = -1};
static const rnn_ports lstm_bwd_ports = {.x = 0, .h0 = 1, .c0 = 2, .w_ih = 3, .w_hh = 4, .dy = 5, .b_ih = 6,
                                         .b_hh = 7, .dh_n = 8, .dc_n = 9};

static xdnn_status bwd_infer(op_infer_ctx *c, rnn_cell base, const rnn_ports *p)
{
    rnn_dims n;
    xdnn_status st = rnn_check(c, base, p, &n);
    if (st)
        return st;
    int r = 0;
    c->out[r++] = *c->in[p->x];
    c->out[r++] = *c->in[p->h0];
    if (p->c0 >= 0)
        c->out[r++] = *c->in[p->c0];
    c->out[r++] = *c->in[p->w_ih];
    c->out[r++] = *c->in[p->w_hh];
    for (int b = 0; b < 2; b++)
        c->out[r++] = (tinfo){.dtype = c->in[p->w_ih]->dtype, .rank = 2, .dims = {n.L * n.D, n.G * n.H}};
    return XDNN_OK;
}

static xdnn_status bwd_reference(op_ref_ctx *c, rnn_cell base, const rnn_ports *p)
{
    rnn_dims n;
    rnn_dims_ref(c, base, p, &n);
    rnn_inputs in = rnn_inputs_ref(c, p);
    double *outs[7];
    for (int r = 0; r < c->nresults; r++) {
        outs[r] = c->out[r]->data;
        memset(outs[r], 0, (size_t)c->out[r]->numel * sizeof(double));
    }
    int r = 0;
    rnn_grads g = {.dy = rnn_in_data(c, p->dy), .dh_n = rnn_in_data(c, p->dh_n), .dc_n = rnn_in_data(c, p->dc_n)};
    g.dx = outs[r++];
    g.dh0 = outs[r++];
    g.dc0 = p->c0 >= 0 ? outs[r++] : NULL;
    g.dw_ih = outs[r++];
    g.dw_hh = outs[r++];
    g.db_ih = outs[r++];
    g.db_hh = outs[r++];
    if (rnn_backward(&n, &in, &g))
        return op_ref_error(c, XDNN_ERR_NOMEM, "out of memory for the recurrence");
    return XDNN_OK;
}

static xdnn_status rnn_bwd_infer(op_infer_ctx *c) { return bwd_infer(c, RNN_CELL_TANH, &rnn_bwd_ports); }
static xdnn_status lstm_bwd_infer(op_infer_ctx *c) { return bwd_infer(c, RNN_CELL_LSTM, &lstm_bwd_ports); }
static xdnn_status gru_bwd_infer(op_infer_ctx *c) { return bwd_infer(c, RNN_CELL_GRU, &rnn_bwd_ports); }
static xdnn_status rnn_bwd_reference(op_ref_ctx *c) { return bwd_reference(c, RNN_CELL_TANH, &rnn_bwd_ports); }
static xdnn_status lstm_bwd_reference(op_ref_ctx *c) { return bwd_reference(c, RNN_CELL_LSTM, &lstm_bwd_ports); }
static xdnn_status gru_bwd_reference(op_ref_ctx *c) { return bwd_reference(c, RNN_CELL_GRU, &rnn_bwd_ports); }
/* Recompute (1x) plus the input and weight gradients (2x). */
static double rnn_bwd_flops(const xgraph *g, const xnode *n) { return rnn_flops_of(g, n, &rnn_bwd_ports, RNN_CELL_TANH, 3); }
static double lstm_bwd_flops(const xgraph *g, const xnode *n) { return rnn_flops_of(g, n, &lstm_bwd_ports, RNN_CELL_LSTM, 3); }
static double gru_bwd_flops(const xgraph *g, const xnode *n) { return rnn_flops_of(g, n, &rnn_bwd_ports, RNN_CELL_GRU, 3); }

static const char *const rnn_bwd_port_names[] = {"x", "h0", "w_ih", "w_hh", "dy", "b_ih", "b_hh", "dh_n"};
static const char *const lstm_bwd_port_names[] = {"x", "h0", "c0", "w_ih", "w_hh", "dy", "b_ih", "b_hh", "dh_n", "dc_n"};
static const char *const rnn_bwd_result_names[] = {"dx", "dh0", "dw_ih", "dw_hh", "db_ih", "db_hh"};
static const char *const lstm_bwd_result_names[] = {"dx", "dh0", "dc0", "dw_ih", "dw_hh", "db_ih", "db_hh"};

const op_desc op_rnn_bwd_desc = {
    .name = "rnn_bwd",
    .summary = "backward of rnn by BPTT: dx, dh0, dw_ih, dw_hh, db_ih, db_hh = rnn_bwd(x, h0, w_ih, w_hh, dy, "
               "b_ih=, b_hh=, dh_n=); dy [T,N,D*H], dh_n like h0 (absent = 0); attributes as rnn",
    .ports = rnn_bwd_port_names,
    .nports = 8,
    .nrequired = 5,
    .results = rnn_bwd_result_names,
    .nresults = 6,
    .result_counts = 0,
    .attrs = rnn_attrs,
    .nattrs = RNN_NATTRS,
    .infer = rnn_bwd_infer,
    .reference = rnn_bwd_reference,
    .flops = rnn_bwd_flops,
};

const op_desc op_lstm_bwd_desc = {
    .name = "lstm_bwd",
    .summary = "backward of lstm by BPTT: dx, dh0, dc0, dw_ih, dw_hh, db_ih, db_hh = lstm_bwd(x, h0, c0, w_ih, "
               "w_hh, dy, b_ih=, b_hh=, dh_n=, dc_n=); dy [T,N,D*H], dh_n/dc_n like h0 (absent = 0)",
    .ports = lstm_bwd_port_names,
    .nports = 10,
    .nrequired = 6,
    .results = lstm_bwd_result_names,
    .nresults = 7,
    .result_counts = 0,
    .attrs = rnn_gated_attrs,
    .nattrs = RNN_GATED_NATTRS,
    .infer = lstm_bwd_infer,
    .reference = lstm_bwd_reference,
    .flops = lstm_bwd_flops,
};

const op_desc op_gru_bwd_desc = {
    .name = "gru_bwd",
    .summary = "backward of gru by BPTT: dx, dh0, dw_ih, dw_hh, db_ih, db_hh = gru_bwd(x, h0, w_ih, w_hh, dy, "
               "b_ih=, b_hh=, dh_n=); dy [T,N,D*H], dh_n like h0 (absent = 0); attributes as gru",
    .ports = rnn_bwd_port_names,
    .nports = 8,
    .nrequired = 5,
    .results = rnn_bwd_result_names,
    .nresults = 6,
    .result_counts = 0,
    .attrs = rnn_gated_attrs,
    .nattrs = RNN_GATED_NATTRS,
    .infer = gru_bwd_infer,
    .reference = gru_bwd_reference,
    .flops = gru_bwd_flops,
};
