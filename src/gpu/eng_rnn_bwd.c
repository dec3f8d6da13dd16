/* eng_rnn_bwd.c — rnn_bwd_direct: rnn_bwd (tanh/relu), lstm_bwd and gru_bwd
 * on the GPU, any layers, uni- or bidirectional, exactly as src/ops/rnn_bwd.c
 * (layouts, packing and cells in src/ops/rnn.h).
 *
 * Correctness first, all in f32 (inputs of any float dtype and strides are
 * packed into f32 workspace copies by rnn.cu's strided copy):
 *   1. recompute the forward, one kernel per (layer, direction, step), keeping
 *      every layer output, state, cell state, activated gate and GRU W_hn h +
 *      b_hn in the workspace (the tape);
 *   2. walk layers top-down, directions in order, steps in reverse: per step
 *      an elementwise cell-backward kernel (gate gradients da_i/da_h of the
 *      step, dc) and a kernel dh = direct + W_hhᵀ da_h;
 *   3. per (layer, direction) after its steps: dx += W_ihᵀ da_i for all steps
 *      at once, and dW_ih, dW_hh, db_ih, db_hh, each element one thread that
 *      sums over steps and rows in a fixed order — deterministic, no atomics;
 *   4. unpack dx, dh0, dc0, dW, db into their tensors' dtypes and strides.
 * The gradient of a layer's output and of its input ping-pong between two
 * [T, N, max(I, D*H)] buffers, as in the reference. */
#include "gpu/eng_rnn_bwd.h"
#include "gpu/engine.h"
#include "gpu/kern_rnn.h"
#include "gpu/kern_rnn_bwd.h"
#include "gpu/kern_sdpa.h"
#include "ops/op.h"
#include "ops/rnn.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool bfail(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool bfail(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return false;
}

/* f32, f16, bf16 only: the math is f32, too coarse for an f64 comparison. */
static int xk_dt(xdnn_dtype t) { return t == XDNN_F32 ? XK_F32 : t == XDNN_F16 ? XK_F16 : t == XDNN_BF16 ? XK_BF16 : -1; }

static size_t up256(size_t v) { return (v + 255) / 256 * 256; }

bool gpu_rnnb_analyze(const gplan *pl, const gpart *p, rnnb_plan *rp, char *why, size_t len)
{
    const ggraph *g = pl->g;
    memset(rp, 0, sizeof *rp);
    if (p->kind != GP_SINGLE || p->anchor < 0 || p->nnodes != 1)
        return bfail(why, len, "needs a single rnn_bwd/lstm_bwd/gru_bwd node, got a %s partition",
                     gpart_kind_name(p->kind));
    const gnode *n = &g->n[p->anchor];
    bool lstm = n->op_id == OP_lstm_bwd, gru = n->op_id == OP_gru_bwd;
    if (!lstm && !gru && n->op_id != OP_rnn_bwd)
        return bfail(why, len, "runs rnn_bwd, lstm_bwd and gru_bwd, not %s", n->op);
    if (!n->ir)
        return bfail(why, len, "%s: node has no IR attributes (hand-built graph)", n->name);
    /* ports: x, h0, [c0,] w_ih, w_hh, dy, b_ih, b_hh, dh_n[, dc_n] */
    const int o = lstm ? 1 : 0, nports = lstm ? 10 : 8;
    int ids[10];
    for (int i = 0; i < 10; i++)
        ids[i] = i < nports && i < n->nin ? n->in[i] : -1;
    rp->x = ids[0], rp->h0 = ids[1], rp->c0 = lstm ? ids[2] : -1;
    rp->w_ih = ids[2 + o], rp->w_hh = ids[3 + o], rp->dy = ids[4 + o], rp->b_ih = ids[5 + o], rp->b_hh = ids[6 + o];
    rp->dh_n = ids[7 + o], rp->dc_n = lstm ? ids[9] : -1;
    int outs[7];
    for (int i = 0; i < 7; i++)
        outs[i] = i < n->nouts ? n->outs[i] : i == 0 ? n->out : -1;
    rp->dx = outs[0], rp->dh0 = outs[1], rp->dc0 = lstm ? outs[2] : -1;
    rp->dw_ih = outs[2 + o], rp->dw_hh = outs[3 + o], rp->db_ih = outs[4 + o], rp->db_hh = outs[5 + o];
    const int in_ids[10] = {rp->x, rp->h0, rp->c0, rp->w_ih, rp->w_hh, rp->dy, rp->b_ih, rp->b_hh, rp->dh_n, rp->dc_n};
    static const char *const in_names[10] = {"x", "h0", "c0", "w_ih", "w_hh", "dy", "b_ih", "b_hh", "dh_n", "dc_n"};
    for (int i = 0; i < 10; i++) {
        if (in_ids[i] < 0)
            continue;
        if (g->t[in_ids[i]].is_scalar)
            return bfail(why, len, "%s: %s is a scalar", n->op, in_names[i]);
        if (xk_dt(g->t[in_ids[i]].dtype) < 0)
            return bfail(why, len, "%s: input %s has dtype %s (f32, f16 or bf16 supported)", n->op, in_names[i],
                         gg_dtype_name(g->t[in_ids[i]].dtype));
    }
    const int out_ids[7] = {rp->dx, rp->dh0, rp->dc0, rp->dw_ih, rp->dw_hh, rp->db_ih, rp->db_hh};
    static const char *const out_names[7] = {"dx", "dh0", "dc0", "dw_ih", "dw_hh", "db_ih", "db_hh"};
    for (int i = 0; i < 7; i++)
        if (out_ids[i] >= 0 && xk_dt(g->t[out_ids[i]].dtype) < 0)
            return bfail(why, len, "%s: result %s has dtype %s (f32, f16 or bf16 supported)", n->op, out_names[i],
                         gg_dtype_name(g->t[out_ids[i]].dtype));
    if (rp->x < 0 || rp->h0 < 0 || rp->w_ih < 0 || rp->w_hh < 0 || rp->dy < 0 || (lstm && rp->c0 < 0))
        return bfail(why, len, "%s: a required input is missing", n->op);
    const gtensor *x = &g->t[rp->x], *h0 = &g->t[rp->h0], *wih = &g->t[rp->w_ih];
    if (x->rank != 3 || h0->rank != 3 || wih->rank != 3 || g->t[rp->dy].rank != 3)
        return bfail(why, len, "%s: x, h0, w_ih and dy must have rank 3", n->op);
    const xnode *ir = n->ir;
    const op_desc *d = op_get(ir->op);
    rp->cell = lstm ? RNN_CELL_LSTM : gru ? RNN_CELL_GRU : (int)rnn_cell_of(ir, d, RNN_CELL_TANH);
    rp->T = x->dims[0], rp->N = x->dims[1], rp->I = x->dims[2], rp->H = h0->dims[2];
    rp->L = op_attr_int(ir, d, "layers");
    rp->D = op_attr_bool(ir, d, "bidirectional") ? 2 : 1;
    rp->G = lstm ? 4 : gru ? 3 : 1;
    rp->Iw = wih->dims[2];
    const int64_t T = rp->T, N = rp->N, H = rp->H, LD = rp->L * rp->D, GH = rp->G * rp->H, DH = rp->D * rp->H;
    const int64_t wmax = rp->I > DH ? rp->I : DH;
    if (T * N * wmax > INT32_MAX / 2 || GH * (wmax + H + 2) > INT32_MAX / 2 || LD * (T + 1) * N * GH > INT32_MAX)
        return bfail(why, len, "%s: T=%lld N=%lld H=%lld exceed the 32-bit index range of the kernels", n->op,
                     (long long)T, (long long)N, (long long)H);
    size_t f = sizeof(float), off = 0;
#define TAKE(field, count) (rp->field = off, off += up256((size_t)(count) * f))
    TAKE(off_x, T * N * rp->I);
    TAKE(off_wih, LD * GH * rp->Iw);
    TAKE(off_whh, LD * GH * H);
    TAKE(off_bih, LD * GH);
    TAKE(off_bhh, LD * GH);
    TAKE(off_dy, T * N * DH);
    TAKE(off_dhs, LD * N * H);
    TAKE(off_dcs, lstm ? LD * N * H : 0);
    TAKE(off_ys, rp->L * T * N * DH);
    TAKE(off_h, LD * (T + 1) * N * H);
    TAKE(off_c, lstm ? LD * (T + 1) * N * H : 0);
    TAKE(off_gates, lstm || gru ? LD * T * N * GH : 0);
    TAKE(off_hn, gru ? LD * T * N * H : 0);
    TAKE(off_direct, N * H);
    TAKE(off_dai, T * N * GH);
    TAKE(off_dah, T * N * GH);
    TAKE(off_g0, T * N * wmax);
    TAKE(off_g1, T * N * wmax);
    TAKE(off_dwi, LD * GH * rp->Iw);
    TAKE(off_dwh, LD * GH * H);
    TAKE(off_dbi, LD * GH);
    TAKE(off_dbh, LD * GH);
#undef TAKE
    rp->ws_total = off + 256;
    return true;
}

/* ---- the engine */

typedef struct rnnb_priv {
    rnnb_plan rp;
    char detail[160];
} rnnb_priv;

static bool rnnb_supports(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    (void)dev;
    rnnb_plan rp;
    return gpu_rnnb_analyze(pl, p, &rp, why, len);
}

/* Latency bound: three kernels per step plus the recompute. */
static double rnnb_cost(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    (void)dev;
    rnnb_plan rp;
    char why[256];
    double steps = gpu_rnnb_analyze(pl, p, &rp, why, sizeof why) ? (double)(rp.T * rp.L * rp.D) : 1;
    return gpu_roofline_us(p, 5.0) + 15.0 * steps;
}

static size_t rnnb_workspace(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    (void)dev;
    rnnb_plan rp;
    char why[256];
    return gpu_rnnb_analyze(pl, p, &rp, why, sizeof why) ? rp.ws_total : 0;
}

static xdnn_status rnnb_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d)
{
    rnnb_priv *rv = calloc(1, sizeof *rv);
    if (!rv)
        return XDNN_ERR_NOMEM;
    p->priv = rv;
    char why[512];
    if (!gpu_rnnb_analyze(c->plan, p, &rv->rp, why, sizeof why)) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), "rnn_bwd_direct: %s: %s", p->name, why);
        return XDNN_ERR_UNSUPPORTED;
    }
    const rnnb_plan *rp = &rv->rp;
    static const char *const cells[] = {"rnn_tanh", "rnn_relu", "lstm", "gru"};
    snprintf(rv->detail, sizeof rv->detail,
             "%s_bwd T=%lld N=%lld I=%lld H=%lld L=%lld D=%lld: recompute + BPTT, %lld step kernels, ws %zu B",
             cells[rp->cell & 3], (long long)rp->T, (long long)rp->N, (long long)rp->I, (long long)rp->H,
             (long long)rp->L, (long long)rp->D, (long long)(3 * rp->L * rp->D * rp->T), rp->ws_total);
    return XDNN_OK;
}

/* Copy a rank <= 4 view: src (dims, strides, dtype) into dst (strides, dtype). */
static xdnn_status copy_view(const void *src, int sdt, const int64_t *sst, void *dst, int ddt, const int64_t *dst_st,
                             int rank, const int64_t *dims, cudaStream_t s, xdnn_diags_t *d)
{
    xk_copy k;
    memset(&k, 0, sizeof k);
    k.src = src, k.dst = dst, k.sdt = sdt, k.ddt = ddt, k.rank = rank;
    for (int i = 0; i < rank; i++)
        k.dims[i] = dims[i], k.sst[i] = sst[i], k.dst_st[i] = dst_st[i];
    return gpu_check_cuda((cudaError_t)xk_copy_strided(&k, s), "xk_copy_strided", __FILE__, __LINE__, d);
}

/* Tensor id -> f32 buffer with packed strides dst_st (NULL: row-major). */
static xdnn_status load(gpu_ctx *c, int id, float *dst, const int64_t *dst_st, cudaStream_t s, xdnn_diags_t *d)
{
    const gtensor *t = &c->plan->g->t[id];
    int64_t packed[XDNN_MAX_RANK];
    shape_strides(t->rank, t->dims, packed);
    return copy_view(c->dptr[id], xk_dt(t->dtype), t->strides, dst, XK_F32, dst_st ? dst_st : packed, t->rank, t->dims,
                     s, d);
}

/* Packed f32 buffer -> result tensor id (skipped when the result is discarded). */
static xdnn_status store(gpu_ctx *c, int id, const float *src, cudaStream_t s, xdnn_diags_t *d)
{
    if (id < 0 || !c->dptr[id])
        return XDNN_OK;
    const gtensor *t = &c->plan->g->t[id];
    int64_t packed[XDNN_MAX_RANK];
    shape_strides(t->rank, t->dims, packed);
    return copy_view(src, XK_F32, packed, c->dptr[id], xk_dt(t->dtype), t->strides, t->rank, t->dims, s, d);
}

static xdnn_status zero(float *p, int64_t count, cudaStream_t s, xdnn_diags_t *d)
{
    if (count <= 0)
        return XDNN_OK;
    return gpu_check_cuda(cudaMemsetAsync(p, 0, (size_t)count * sizeof(float), s), "cudaMemsetAsync", __FILE__,
                          __LINE__, d);
}

#define KTRY(call)                                                                                   \
    do {                                                                                             \
        xdnn_status kst_ = gpu_check_cuda((cudaError_t)(call), #call, __FILE__, __LINE__, d);        \
        if (kst_)                                                                                    \
            return kst_;                                                                             \
    } while (0)

static xdnn_status rnnb_execute(gpu_ctx *c, gpart *p, cudaStream_t s, xdnn_diags_t *d)
{
    const rnnb_priv *rv = p->priv;
    const rnnb_plan *rp = &rv->rp;
    char *ws = (char *)(((uintptr_t)(c->ws + p->ws_offset) + 255) & ~(uintptr_t)255);
#define BUF(off) ((float *)(void *)(ws + rp->off))
    float *x = BUF(off_x), *wih = BUF(off_wih), *whh = BUF(off_whh), *bih = BUF(off_bih), *bhh = BUF(off_bhh);
    float *dy = BUF(off_dy), *dhs = BUF(off_dhs), *dcs = BUF(off_dcs), *ys = BUF(off_ys), *ht = BUF(off_h);
    float *ct = BUF(off_c), *gates = BUF(off_gates), *hn = BUF(off_hn), *direct = BUF(off_direct);
    float *dai = BUF(off_dai), *dah = BUF(off_dah), *gbuf[2] = {BUF(off_g0), BUF(off_g1)};
    float *dwi = BUF(off_dwi), *dwh = BUF(off_dwh), *dbi = BUF(off_dbi), *dbh = BUF(off_dbh);
#undef BUF
    const int64_t T = rp->T, N = rp->N, H = rp->H, LD = rp->L * rp->D, GH = rp->G * H, DH = rp->D * H, Iw = rp->Iw;
    const bool lstm = rp->cell == RNN_CELL_LSTM, gru = rp->cell == RNN_CELL_GRU;
    xdnn_status st;
    /* inputs; the initial states go straight into step 0 of the tape */
    const int64_t tape_st[3] = {(T + 1) * N * H, H, 1};
    if ((st = load(c, rp->x, x, NULL, s, d)) || (st = load(c, rp->w_ih, wih, NULL, s, d)) ||
        (st = load(c, rp->w_hh, whh, NULL, s, d)) || (st = load(c, rp->dy, dy, NULL, s, d)) ||
        (st = load(c, rp->h0, ht, tape_st, s, d)))
        return st;
    if (lstm && (st = load(c, rp->c0, ct, tape_st, s, d)))
        return st;
    if (rp->b_ih >= 0 && (st = load(c, rp->b_ih, bih, NULL, s, d)))
        return st;
    if (rp->b_hh >= 0 && (st = load(c, rp->b_hh, bhh, NULL, s, d)))
        return st;
    if ((st = rp->dh_n >= 0 ? load(c, rp->dh_n, dhs, NULL, s, d) : zero(dhs, LD * N * H, s, d)))
        return st;
    if (lstm && (st = rp->dc_n >= 0 ? load(c, rp->dc_n, dcs, NULL, s, d) : zero(dcs, LD * N * H, s, d)))
        return st;
    if ((st = zero(dwi, LD * GH * Iw, s, d))) /* unused columns of w_ih get gradient 0 */
        return st;

    xk_rnnb k;
    memset(&k, 0, sizeof k);
    k.cell = rp->cell, k.T = (int32_t)T, k.N = (int32_t)N, k.H = (int32_t)H, k.G = (int32_t)rp->G;
    k.Iw = (int32_t)Iw;
    /* 1. forward recompute */
    for (int64_t l = 0; l < rp->L; l++)
        for (int64_t dir = 0; dir < rp->D; dir++) {
            const int64_t ld = l * rp->D + dir;
            k.width = (int32_t)(l ? DH : rp->I), k.d = (int32_t)dir;
            k.xin = l ? ys + (l - 1) * T * N * DH : x, k.xin_ld = l ? DH : rp->I;
            k.wi = wih + ld * GH * Iw, k.wh = whh + ld * GH * H;
            k.bi = rp->b_ih >= 0 ? bih + ld * GH : NULL, k.bh = rp->b_hh >= 0 ? bhh + ld * GH : NULL;
            k.h = ht + ld * (T + 1) * N * H, k.c = lstm ? ct + ld * (T + 1) * N * H : NULL;
            k.gates = lstm || gru ? gates + ld * T * N * GH : NULL, k.hn = gru ? hn + ld * T * N * H : NULL;
            k.ys = ys + l * T * N * DH + dir * H, k.ys_ld = DH;
            for (int64_t step = 0; step < T; step++) {
                k.s = (int32_t)step;
                KTRY(xk_rnnb_fwd_step(&k, s));
            }
        }
    /* 2., 3. backward, layers top-down; gbuf[cur] holds the gradient of layer l's output */
    int cur = 0;
    const int64_t wmax = rp->I > DH ? rp->I : DH;
    KTRY(cudaMemcpyAsync(gbuf[cur], dy, (size_t)(T * N * DH) * sizeof(float), cudaMemcpyDeviceToDevice, s));
    for (int64_t l = rp->L - 1; l >= 0; l--) {
        float *dprev = gbuf[1 - cur];
        if ((st = zero(dprev, T * N * wmax, s, d)))
            return st;
        for (int64_t dir = 0; dir < rp->D; dir++) {
            const int64_t ld = l * rp->D + dir;
            k.width = (int32_t)(l ? DH : rp->I), k.d = (int32_t)dir;
            k.xin = l ? ys + (l - 1) * T * N * DH : x, k.xin_ld = l ? DH : rp->I;
            k.wi = wih + ld * GH * Iw, k.wh = whh + ld * GH * H;
            k.h = ht + ld * (T + 1) * N * H, k.c = lstm ? ct + ld * (T + 1) * N * H : NULL;
            k.gates = lstm || gru ? gates + ld * T * N * GH : NULL, k.hn = gru ? hn + ld * T * N * H : NULL;
            k.dcur = gbuf[cur] + dir * H, k.dcur_ld = DH; /* layer outputs are always D*H wide */
            k.dh = dhs + ld * N * H, k.dc = lstm ? dcs + ld * N * H : NULL, k.direct = direct;
            k.da_i = dai, k.da_h = dah, k.dprev = dprev;
            k.dwi = dwi + ld * GH * Iw, k.dwh = dwh + ld * GH * H, k.dbi = dbi + ld * GH, k.dbh = dbh + ld * GH;
            for (int64_t step = T - 1; step >= 0; step--) {
                k.s = (int32_t)step;
                KTRY(xk_rnnb_cell_bwd(&k, s));
                KTRY(xk_rnnb_dh(&k, s));
            }
            KTRY(xk_rnnb_dx(&k, s));
            KTRY(xk_rnnb_wgrad(&k, s));
        }
        cur = 1 - cur; /* this layer's input gradient is the next layer's output gradient */
    }
    /* 4. results ([T, N, I] of dx is packed with row stride I in gbuf[cur]) */
    if ((st = store(c, rp->dx, gbuf[cur], s, d)) || (st = store(c, rp->dh0, dhs, s, d)) ||
        (lstm && (st = store(c, rp->dc0, dcs, s, d))) || (st = store(c, rp->dw_ih, dwi, s, d)) ||
        (st = store(c, rp->dw_hh, dwh, s, d)) || (st = store(c, rp->db_ih, dbi, s, d)) ||
        (st = store(c, rp->db_hh, dbh, s, d)))
        return st;
    return XDNN_OK;
}

static void rnnb_release(gpart *p)
{
    free(p->priv);
    p->priv = NULL;
}

static const char *rnnb_detail(const gpart *p)
{
    const rnnb_priv *rv = p->priv;
    return rv ? rv->detail : "";
}

const gpu_engine gpu_engine_rnn_bwd_direct = {
    .name = "rnn_bwd_direct",
    .summary = "rnn_bwd/lstm_bwd/gru_bwd: f32 forward recompute into the workspace, then BPTT with simple "
               "per-step kernels; deterministic weight gradients",
    .supports = rnnb_supports, .cost = rnnb_cost, .workspace = rnnb_workspace,
    .build = rnnb_build, .execute = rnnb_execute, .release = rnnb_release, .detail = rnnb_detail,
};
