/* rnn.c — the recurrent ops rnn, lstm and gru: shape checks, the recorded
 * forward pass shared with the backwards (rnn_bwd.c), and the forward
 * references.  Layouts, weight packing and cell equations are in rnn.h.
 *
 *   y[, h_n]       = rnn(x, h0, w_ih, w_hh, b_ih=, b_hh=)
 *   y[, h_n, c_n]  = lstm(x, h0, c0, w_ih, w_hh, b_ih=, b_hh=)
 *   y[, h_n]       = gru(x, h0, w_ih, w_hh, b_ih=, b_hh=)
 *
 * Layer l > 0 reads the concatenated outputs of both directions of layer l-1
 * (as PyTorch, without inter-layer dropout).  Batch rows are independent all
 * the way through, so the reference runs one row per OpenMP thread.
 */
#include "rnn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const attr_spec rnn_attrs[RNN_NATTRS] = {
    {"layers", AT_INT, "1", NULL, "number of stacked layers L"},
    {"bidirectional", AT_BOOL, "false", NULL, "also run each layer backwards in time (D = 2)"},
    {"nonlinearity", AT_STRING, "\"tanh\"", "tanh|relu", "activation of the plain RNN cell"},
};
const attr_spec rnn_gated_attrs[RNN_GATED_NATTRS] = {
    {"layers", AT_INT, "1", NULL, "number of stacked layers L"},
    {"bidirectional", AT_BOOL, "false", NULL, "also run each layer backwards in time (D = 2)"},
};

rnn_cell rnn_cell_of(const xnode *node, const op_desc *d, rnn_cell base)
{
    if (base != RNN_CELL_TANH && base != RNN_CELL_RELU)
        return base;
    const char *act = op_attr_str(node, d, "nonlinearity");
    return act && strcmp(act, "relu") == 0 ? RNN_CELL_RELU : RNN_CELL_TANH;
}

static int64_t gates_of(rnn_cell cell) { return cell == RNN_CELL_LSTM ? 4 : cell == RNN_CELL_GRU ? 3 : 1; }

static const tinfo *port_in(const op_infer_ctx *c, int port)
{
    return port >= 0 && port < c->nin ? c->in[port] : NULL;
}

/* Check that the tensor at `port` (if `required`, it must be present) has
 * shape `want`; `what` spells the shape symbolically for the message. */
static xdnn_status check_shape(op_infer_ctx *c, int port, bool required, int rank, const int64_t *want,
                               const char *what)
{
    const tinfo *t = port_in(c, port);
    const char *name = c->desc->ports[port];
    if (!t)
        return required ? op_error(c, "missing input '%s'", name) : XDNN_OK;
    bool ok = t->rank == rank;
    for (int d = 0; ok && d < rank; d++)
        ok = t->dims[d] == want[d];
    if (!ok) {
        char got[128], exp_s[128];
        return op_error(c, "%s must be %s = %s, got %s", name, shape_str(exp_s, sizeof exp_s, rank, want), what,
                        shape_str(got, sizeof got, t->rank, t->dims));
    }
    return XDNN_OK;
}

xdnn_status rnn_check(op_infer_ctx *c, rnn_cell base, const rnn_ports *p, rnn_dims *n)
{
    char sh[128];
    int64_t L = op_attr_int(c->node, c->desc, "layers");
    if (L < 1)
        return op_error(c, "attribute 'layers' must be >= 1, got %lld", (long long)L);
    int64_t D = op_attr_bool(c->node, c->desc, "bidirectional") ? 2 : 1;

    const tinfo *x = port_in(c, p->x);
    if (!x)
        return op_error(c, "missing input 'x'");
    if (x->rank != 3)
        return op_error(c, "x must have rank 3 [T, N, I], got %s", shape_str(sh, sizeof sh, x->rank, x->dims));
    const tinfo *h0 = port_in(c, p->h0);
    if (!h0)
        return op_error(c, "missing input 'h0'");
    if (h0->rank != 3 || h0->dims[0] != L * D || h0->dims[1] != x->dims[1] || h0->dims[2] < 1)
        return op_error(c, "h0 must be [%lld, %lld, H] = [layers*directions, N, H], got %s", (long long)(L * D),
                        (long long)x->dims[1], shape_str(sh, sizeof sh, h0->rank, h0->dims));

    rnn_cell cell = rnn_cell_of(c->node, c->desc, base);
    int64_t G = gates_of(cell), H = h0->dims[2], I = x->dims[2];
    *n = (rnn_dims){.cell = cell, .T = x->dims[0], .N = x->dims[1], .I = I, .H = H, .L = L, .D = D, .G = G,
                    .Iw = L > 1 && D * H > I ? D * H : I};
    int64_t LD = L * D, GH = G * H;

    char w_ih_what[96], w_hh_what[64], b_what[64];
    snprintf(w_ih_what, sizeof w_ih_what, "[layers*directions, %s, %s]", G == 1 ? "H" : G == 3 ? "3*H" : "4*H",
             L > 1 ? "max(I, directions*H)" : "I");
    snprintf(w_hh_what, sizeof w_hh_what, "[layers*directions, %s, H]", G == 1 ? "H" : G == 3 ? "3*H" : "4*H");
    snprintf(b_what, sizeof b_what, "[layers*directions, %s]", G == 1 ? "H" : G == 3 ? "3*H" : "4*H");
    int64_t state[3] = {LD, n->N, H}, w_ih[3] = {LD, GH, n->Iw}, w_hh[3] = {LD, GH, H}, b[2] = {LD, GH};
    int64_t y[3] = {n->T, n->N, D * H};
    xdnn_status st;
    if ((p->c0 >= 0 && (st = check_shape(c, p->c0, true, 3, state, "[layers*directions, N, H]"))) ||
        (st = check_shape(c, p->w_ih, true, 3, w_ih, w_ih_what)) ||
        (st = check_shape(c, p->w_hh, true, 3, w_hh, w_hh_what)) ||
        (st = check_shape(c, p->b_ih, false, 2, b, b_what)) || (st = check_shape(c, p->b_hh, false, 2, b, b_what)) ||
        (p->dy >= 0 && (st = check_shape(c, p->dy, true, 3, y, "[T, N, directions*H]"))) ||
        (p->dh_n >= 0 && (st = check_shape(c, p->dh_n, false, 3, state, "[layers*directions, N, H]"))) ||
        (p->dc_n >= 0 && (st = check_shape(c, p->dc_n, false, 3, state, "[layers*directions, N, H]"))))
        return st;
    return XDNN_OK;
}

void rnn_dims_ref(const op_ref_ctx *c, rnn_cell base, const rnn_ports *p, rnn_dims *n)
{
    const ref_tensor *x = c->in[p->x], *h0 = c->in[p->h0];
    int64_t L = op_attr_int(c->node, c->desc, "layers");
    int64_t D = op_attr_bool(c->node, c->desc, "bidirectional") ? 2 : 1;
    rnn_cell cell = rnn_cell_of(c->node, c->desc, base);
    *n = (rnn_dims){.cell = cell, .T = x->dims[0], .N = x->dims[1], .I = x->dims[2], .H = h0->dims[2], .L = L,
                    .D = D, .G = gates_of(cell), .Iw = c->in[p->w_ih]->dims[2]};
}

static double sigmoid(double v) { return 1.0 / (1.0 + exp(-v)); }

void rnn_tape_free(rnn_tape *tape)
{
    free(tape->ys);
    free(tape->h);
    free(tape->c);
    free(tape->gates);
    free(tape->hn);
    memset(tape, 0, sizeof *tape);
}

static double *alloc_zero(int64_t count)
{
    return calloc((size_t)(count > 0 ? count : 1), sizeof(double));
}

/* One step of one (layer, direction) for batch row nn: reads the state of
 * step s, writes the state of step s+1, the gates and the layer output. */
static void rnn_step(const rnn_dims *n, const rnn_inputs *in, rnn_tape *tp, int64_t l, int64_t d, int64_t s,
                     int64_t nn, double *a, double *b)
{
    const int64_t T = n->T, N = n->N, H = n->H, DH = n->D * n->H, GH = n->G * n->H;
    const int64_t ld = l * n->D + d, t = rnn_time(n, d, s), width = rnn_in_width(n, l);
    const double *xin = l ? tp->ys + (((l - 1) * T + t) * N + nn) * DH : in->x + (t * N + nn) * n->I;
    const double *hprev = tp->h + ((ld * (T + 1) + s) * N + nn) * H;
    double *hnew = tp->h + ((ld * (T + 1) + s + 1) * N + nn) * H;
    const double *wi = in->w_ih + ld * GH * n->Iw, *wh = in->w_hh + ld * GH * H;
    for (int64_t g = 0; g < GH; g++) {
        double ai = in->b_ih ? in->b_ih[ld * GH + g] : 0, ah = in->b_hh ? in->b_hh[ld * GH + g] : 0;
        for (int64_t k = 0; k < width; k++)
            ai += wi[g * n->Iw + k] * xin[k];
        for (int64_t k = 0; k < H; k++)
            ah += wh[g * H + k] * hprev[k];
        a[g] = ai;
        b[g] = ah;
    }
    double *gt = tp->gates ? tp->gates + ((ld * T + s) * N + nn) * GH : NULL;
    for (int64_t k = 0; k < H; k++) {
        double h;
        switch (n->cell) {
        case RNN_CELL_TANH:
            h = tanh(a[k] + b[k]);
            break;
        case RNN_CELL_RELU:
            h = a[k] + b[k] > 0 ? a[k] + b[k] : 0;
            break;
        case RNN_CELL_LSTM: {
            const double *cprev = tp->c + ((ld * (T + 1) + s) * N + nn) * H;
            double *cnew = tp->c + ((ld * (T + 1) + s + 1) * N + nn) * H;
            double ig = sigmoid(a[k] + b[k]), fg = sigmoid(a[H + k] + b[H + k]);
            double gg = tanh(a[2 * H + k] + b[2 * H + k]), og = sigmoid(a[3 * H + k] + b[3 * H + k]);
            cnew[k] = fg * cprev[k] + ig * gg;
            h = og * tanh(cnew[k]);
            gt[k] = ig, gt[H + k] = fg, gt[2 * H + k] = gg, gt[3 * H + k] = og;
            break;
        }
        case RNN_CELL_GRU:
        default: {
            double r = sigmoid(a[k] + b[k]), z = sigmoid(a[H + k] + b[H + k]);
            double nv = tanh(a[2 * H + k] + r * b[2 * H + k]);
            h = (1 - z) * nv + z * hprev[k];
            gt[k] = r, gt[H + k] = z, gt[2 * H + k] = nv;
            tp->hn[((ld * T + s) * N + nn) * H + k] = b[2 * H + k];
            break;
        }
        }
        hnew[k] = h;
        tp->ys[((l * T + t) * N + nn) * DH + d * H + k] = h;
    }
}

xdnn_status rnn_forward(const rnn_dims *n, const rnn_inputs *in, rnn_tape *tp)
{
    memset(tp, 0, sizeof *tp);
    tp->n = *n;
    const int64_t T = n->T, N = n->N, H = n->H, LD = n->L * n->D, GH = n->G * n->H;
    bool lstm = n->cell == RNN_CELL_LSTM, gru = n->cell == RNN_CELL_GRU;
    tp->ys = alloc_zero(n->L * T * N * n->D * H);
    tp->h = alloc_zero(LD * (T + 1) * N * H);
    tp->c = lstm ? alloc_zero(LD * (T + 1) * N * H) : NULL;
    tp->gates = lstm || gru ? alloc_zero(LD * T * N * GH) : NULL;
    tp->hn = gru ? alloc_zero(LD * T * N * H) : NULL;
    double *scratch = alloc_zero(N * 2 * GH);
    if (!tp->ys || !tp->h || (lstm && !tp->c) || ((lstm || gru) && !tp->gates) || (gru && !tp->hn) || !scratch) {
        free(scratch);
        rnn_tape_free(tp);
        return XDNN_ERR_NOMEM;
    }
#pragma omp parallel for schedule(static)
    for (int64_t nn = 0; nn < N; nn++) {
        double *a = scratch + nn * 2 * GH, *b = a + GH;
        for (int64_t l = 0; l < n->L; l++) {
            for (int64_t d = 0; d < n->D; d++) {
                int64_t ld = l * n->D + d;
                for (int64_t k = 0; k < H; k++) {
                    tp->h[(ld * (T + 1) * N + nn) * H + k] = in->h0[(ld * N + nn) * H + k];
                    if (lstm)
                        tp->c[(ld * (T + 1) * N + nn) * H + k] = in->c0 ? in->c0[(ld * N + nn) * H + k] : 0;
                }
                for (int64_t s = 0; s < T; s++)
                    rnn_step(n, in, tp, l, d, s, nn, a, b);
            }
        }
    }
    free(scratch);
    return XDNN_OK;
}

double rnn_flops_of(const xgraph *g, const xnode *node, const rnn_ports *p, rnn_cell base, double factor)
{
    if (node->inputs[p->x].tensor < 0 || node->inputs[p->h0].tensor < 0)
        return 0;
    const op_desc *d = op_get(node->op);
    const xtensor *x = &g->tensors[node->inputs[p->x].tensor], *h0 = &g->tensors[node->inputs[p->h0].tensor];
    double T = (double)x->rdims[0], N = (double)x->rdims[1], I = (double)x->rdims[2], H = (double)h0->rdims[2];
    int64_t L = op_attr_int(node, d, "layers");
    double D = op_attr_bool(node, d, "bidirectional") ? 2 : 1, G = (double)gates_of(base);
    double total = 0;
    for (int64_t l = 0; l < L; l++)
        total += 2 * T * N * D * G * H * ((l ? D * H : I) + H);
    return factor * total;
}

/* ---- the forward ops */

static const rnn_ports rnn_fwd_ports = {.x = 0, .h0 = 1, .c0 = -1, .w_ih = 2, .w_hh = 3, .b_ih = 4, .b_hh = 5,
                                        .dy = -1, .dh_n = -1, .dc_n = -1};
static const rnn_ports lstm_fwd_ports = {.x = 0, .h0 = 1, .c0 = 2, .w_ih = 3, .w_hh = 4, .b_ih = 5, .b_hh = 6,
                                         .dy = -1, .dh_n = -1, .dc_n = -1};

static xdnn_status infer_common(op_infer_ctx *c, rnn_cell base, const rnn_ports *p)
{
    rnn_dims n;
    xdnn_status st = rnn_check(c, base, p, &n);
    if (st)
        return st;
    c->out[0] = (tinfo){.dtype = c->in[p->x]->dtype, .rank = 3, .dims = {n.T, n.N, n.D * n.H}};
    if (c->nresults > 1)
        c->out[1] = *c->in[p->h0];
    if (c->nresults > 2)
        c->out[2] = *c->in[p->c0];
    return XDNN_OK;
}

const double *rnn_in_data(const op_ref_ctx *c, int port)
{
    return port >= 0 && port < c->nin && c->in[port] ? c->in[port]->data : NULL;
}

rnn_inputs rnn_inputs_ref(const op_ref_ctx *c, const rnn_ports *p)
{
    return (rnn_inputs){.x = rnn_in_data(c, p->x), .h0 = rnn_in_data(c, p->h0), .c0 = rnn_in_data(c, p->c0),
                        .w_ih = rnn_in_data(c, p->w_ih), .w_hh = rnn_in_data(c, p->w_hh),
                        .b_ih = rnn_in_data(c, p->b_ih), .b_hh = rnn_in_data(c, p->b_hh)};
}

static xdnn_status reference_common(op_ref_ctx *c, rnn_cell base, const rnn_ports *p)
{
    rnn_dims n;
    rnn_dims_ref(c, base, p, &n);
    rnn_inputs in = rnn_inputs_ref(c, p);
    rnn_tape tp;
    if (rnn_forward(&n, &in, &tp))
        return op_ref_error(c, XDNN_ERR_NOMEM, "out of memory for the recurrence");
    const int64_t T = n.T, N = n.N, H = n.H, DH = n.D * n.H, LD = n.L * n.D;
    memcpy(c->out[0]->data, tp.ys + (n.L - 1) * T * N * DH, (size_t)(T * N * DH) * sizeof(double));
    for (int r = 1; r <= 2; r++) {
        const double *state = r == 1 ? tp.h : tp.c;
        if (r >= c->nresults || !c->out[r] || !state)
            continue;
        for (int64_t ld = 0; ld < LD; ld++)
            memcpy(c->out[r]->data + ld * N * H, state + (ld * (T + 1) + T) * N * H, (size_t)(N * H) * sizeof(double));
    }
    rnn_tape_free(&tp);
    return XDNN_OK;
}

static xdnn_status rnn_infer(op_infer_ctx *c) { return infer_common(c, RNN_CELL_TANH, &rnn_fwd_ports); }
static xdnn_status lstm_infer(op_infer_ctx *c) { return infer_common(c, RNN_CELL_LSTM, &lstm_fwd_ports); }
static xdnn_status gru_infer(op_infer_ctx *c) { return infer_common(c, RNN_CELL_GRU, &rnn_fwd_ports); }
static xdnn_status rnn_reference(op_ref_ctx *c) { return reference_common(c, RNN_CELL_TANH, &rnn_fwd_ports); }
static xdnn_status lstm_reference(op_ref_ctx *c) { return reference_common(c, RNN_CELL_LSTM, &lstm_fwd_ports); }
static xdnn_status gru_reference(op_ref_ctx *c) { return reference_common(c, RNN_CELL_GRU, &rnn_fwd_ports); }
static double rnn_flops(const xgraph *g, const xnode *n) { return rnn_flops_of(g, n, &rnn_fwd_ports, RNN_CELL_TANH, 1); }
static double lstm_flops(const xgraph *g, const xnode *n) { return rnn_flops_of(g, n, &lstm_fwd_ports, RNN_CELL_LSTM, 1); }
static double gru_flops(const xgraph *g, const xnode *n) { return rnn_flops_of(g, n, &rnn_fwd_ports, RNN_CELL_GRU, 1); }

static const char *const rnn_port_names[] = {"x", "h0", "w_ih", "w_hh", "b_ih", "b_hh"};
static const char *const lstm_port_names[] = {"x", "h0", "c0", "w_ih", "w_hh", "b_ih", "b_hh"};
static const char *const rnn_result_names[] = {"y", "h_n"};
static const char *const lstm_result_names[] = {"y", "h_n", "c_n"};

const op_desc op_rnn_desc = {
    .name = "rnn",
    .summary = "Elman RNN, h' = act(W_ih x + b_ih + W_hh h + b_hh): y[, h_n] from x [T,N,I], h0 [L*D,N,H], "
               "w_ih [L*D,H,Iw], w_hh [L*D,H,H], b_ih/b_hh [L*D,H]; y [T,N,D*H]; Iw = I, or max(I, D*H) when L > 1",
    .ports = rnn_port_names,
    .nports = 6,
    .nrequired = 4,
    .results = rnn_result_names,
    .nresults = 2,
    .result_counts = (1u << 1) | (1u << 2),
    .attrs = rnn_attrs,
    .nattrs = RNN_NATTRS,
    .infer = rnn_infer,
    .reference = rnn_reference,
    .flops = rnn_flops,
};

const op_desc op_lstm_desc = {
    .name = "lstm",
    .summary = "LSTM (gates i,f,g,o as PyTorch): y[, h_n, c_n] from x [T,N,I], h0/c0 [L*D,N,H], "
               "w_ih [L*D,4H,Iw], w_hh [L*D,4H,H], b_ih/b_hh [L*D,4H]; y [T,N,D*H]; Iw = I, or max(I, D*H) when L > 1",
    .ports = lstm_port_names,
    .nports = 7,
    .nrequired = 5,
    .results = lstm_result_names,
    .nresults = 3,
    .result_counts = (1u << 1) | (1u << 2) | (1u << 3),
    .attrs = rnn_gated_attrs,
    .nattrs = RNN_GATED_NATTRS,
    .infer = lstm_infer,
    .reference = lstm_reference,
    .flops = lstm_flops,
};

const op_desc op_gru_desc = {
    .name = "gru",
    .summary = "GRU (gates r,z,n as PyTorch, b_hn inside r*(...)): y[, h_n] from x [T,N,I], h0 [L*D,N,H], "
               "w_ih [L*D,3H,Iw], w_hh [L*D,3H,H], b_ih/b_hh [L*D,3H]; y [T,N,D*H]; Iw = I, or max(I, D*H) when L > 1",
    .ports = rnn_port_names,
    .nports = 6,
    .nrequired = 4,
    .results = rnn_result_names,
    .nresults = 2,
    .result_counts = (1u << 1) | (1u << 2),
    .attrs = rnn_gated_attrs,
    .nattrs = RNN_GATED_NATTRS,
    .infer = gru_infer,
    .reference = gru_reference,
    .flops = gru_flops,
};
