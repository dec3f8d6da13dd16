/* eng_rnn.c — rnn_cublas: rnn (tanh/relu), lstm and gru forward, any layers,
 * uni- or bidirectional (layouts, packing and cells in src/ops/rnn.h).
 *
 * Everything runs in f32: inputs and weights are first packed into f32
 * workspace copies (any dtype and strides in), then per layer
 *   one cuBLASLt GEMM  Ain[T*N, D*G*H] = X[T*N, w] · W_ih[l]ᵀ   (all steps and
 *                      both directions at once; W_ih of a layer's directions
 *                      are consecutive rows of the packed weight)
 * and per direction and step
 *   one cuBLASLt GEMM  Hh[N, G*H] = h[N, H] · W_hh[l, d]ᵀ
 *   one gate kernel    biases, activations, c/h update, the layer output row.
 * Layer outputs ping-pong between two [T, N, D*H] buffers; y, h_n and c_n are
 * unpacked into their own dtypes and strides.  Exact f32 GEMMs (no TF32):
 * recurrences amplify rounding. */
#include "gpu/eng_seq.h"
#include "gpu/engine.h"
#include "gpu/kern_rnn.h"
#include "ops/op.h"
#include "ops/rnn.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { RNN_LT_WS = 4 << 20 };

static bool rfail(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool rfail(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return false;
}

static int xk_dt(xdnn_dtype t)
{
    return t == XDNN_F32 ? XK_F32 : t == XDNN_F16 ? XK_F16 : t == XDNN_BF16 ? XK_BF16 : t == XDNN_F64 ? XK_F64 : -1;
}

static size_t up256(size_t v) { return (v + 255) / 256 * 256; }

bool gpu_rnn_analyze(const gplan *pl, const gpart *p, rnn_plan *rp, char *why, size_t len)
{
    const ggraph *g = pl->g;
    memset(rp, 0, sizeof *rp);
    if (p->kind != GP_SINGLE || p->anchor < 0 || p->nnodes != 1)
        return rfail(why, len, "needs a single rnn/lstm/gru node, got a %s partition", gpart_kind_name(p->kind));
    const gnode *n = &g->n[p->anchor];
    bool lstm = n->op_id == OP_lstm, gru = n->op_id == OP_gru, rnn = n->op_id == OP_rnn;
    if (!lstm && !gru && !rnn)
        return rfail(why, len, "runs rnn, lstm and gru forward, not %s", n->op);
    if (!n->ir)
        return rfail(why, len, "%s: node has no IR attributes (hand-built graph)", n->name);
    const xnode *ir = n->ir;
    const op_desc *d = op_get(ir->op);
    int base = lstm ? 3 : 2; /* port of w_ih */
    int ids[7] = {n->in[0], n->in[1], lstm ? n->in[2] : -1, n->in[base], n->in[base + 1],
                  base + 2 < n->nin ? n->in[base + 2] : -1, base + 3 < n->nin ? n->in[base + 3] : -1};
    rp->x = ids[0], rp->h0 = ids[1], rp->c0 = ids[2], rp->w_ih = ids[3], rp->w_hh = ids[4], rp->b_ih = ids[5],
    rp->b_hh = ids[6];
    rp->y = n->nouts > 0 ? n->outs[0] : n->out;
    rp->h_n = n->nouts > 1 ? n->outs[1] : -1;
    rp->c_n = n->nouts > 2 ? n->outs[2] : -1;
    static const char *const names[7] = {"x", "h0", "c0", "w_ih", "w_hh", "b_ih", "b_hh"};
    for (int i = 0; i < 7; i++) {
        if (ids[i] < 0)
            continue;
        if (g->t[ids[i]].is_scalar)
            return rfail(why, len, "%s: %s is a scalar", n->op, names[i]);
        if (xk_dt(g->t[ids[i]].dtype) < 0)
            return rfail(why, len, "%s: %s has dtype %s (f32, f16, bf16 or f64 supported)", n->op, names[i],
                         gg_dtype_name(g->t[ids[i]].dtype));
    }
    const int outs[3] = {rp->y, rp->h_n, rp->c_n};
    for (int i = 0; i < 3; i++)
        if (outs[i] >= 0 && xk_dt(g->t[outs[i]].dtype) < 0)
            return rfail(why, len, "%s: result %d has dtype %s", n->op, i, gg_dtype_name(g->t[outs[i]].dtype));
    if (rp->x < 0 || rp->h0 < 0 || rp->w_ih < 0 || rp->w_hh < 0 || rp->y < 0 || (lstm && rp->c0 < 0))
        return rfail(why, len, "%s: a required input or y is missing", n->op);
    const gtensor *x = &g->t[rp->x], *h0 = &g->t[rp->h0], *wih = &g->t[rp->w_ih];
    if (x->rank != 3 || h0->rank != 3 || wih->rank != 3)
        return rfail(why, len, "%s: x, h0 and w_ih must have rank 3", n->op);
    rp->cell = lstm ? RNN_CELL_LSTM : gru ? RNN_CELL_GRU : (int)rnn_cell_of(ir, d, RNN_CELL_TANH);
    rp->T = x->dims[0], rp->N = x->dims[1], rp->I = x->dims[2], rp->H = h0->dims[2];
    rp->L = op_attr_int(ir, d, "layers");
    rp->D = op_attr_bool(ir, d, "bidirectional") ? 2 : 1;
    rp->G = lstm ? 4 : gru ? 3 : 1;
    rp->Iw = wih->dims[2];
    if (rp->N * rp->H > INT32_MAX / 2 || rp->T * rp->N > INT32_MAX / 2)
        return rfail(why, len, "%s: N*H or T*N exceeds 32-bit launch sizes", n->op);
    const int64_t T = rp->T, N = rp->N, H = rp->H, LD = rp->L * rp->D, GH = rp->G * rp->H, DH = rp->D * rp->H;
    size_t f = sizeof(float), o = 0;
#define TAKE(field, count) (rp->field = o, o += up256((size_t)(count) * f))
    TAKE(off_x, T * N * rp->I);
    TAKE(off_wih, LD * GH * rp->Iw);
    TAKE(off_whh, LD * GH * H);
    TAKE(off_bih, LD * GH);
    TAKE(off_bhh, LD * GH);
    TAKE(off_ys0, T * N * DH);
    TAKE(off_ys1, T * N * DH);
    TAKE(off_ain, T * N * rp->D * GH);
    TAKE(off_hh, N * GH);
    TAKE(off_h, N * H);
    TAKE(off_c, N * H);
#undef TAKE
    rp->off_lt = o;
    rp->ws_total = o + RNN_LT_WS + 256;
    return true;
}

/* ---- the engine */

typedef struct lt_gemm {
    cublasLtMatrixLayout_t la, lb, ld;
    cublasLtMatmulAlgo_t algo;
    bool ready;
} lt_gemm;

typedef struct rnn_priv {
    rnn_plan rp;
    cublasLtMatmulDesc_t op;
    lt_gemm in0, in1, rec; /* input projection of layer 0 and of layers > 0; the recurrent product */
    char detail[160];
} rnn_priv;

static bool rnn_supports(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    rnn_plan rp;
    return gpu_rnn_analyze(pl, p, &rp, why, len);
}

/* Sequential steps: a GEMM + a gate kernel per step, latency bound. */
static double rnn_cost(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    rnn_plan rp;
    char why[256];
    double steps = gpu_rnn_analyze(pl, p, &rp, why, sizeof why) ? (double)(rp.T * rp.L * rp.D) : 1;
    return gpu_roofline_us(p, 20.0) + 8.0 * steps;
}

static size_t rnn_workspace(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    rnn_plan rp;
    char why[256];
    return gpu_rnn_analyze(pl, p, &rp, why, sizeof why) ? rp.ws_total : 0;
}

/* C[M, Nc] = A[M, K] · W[Nc, K]ᵀ, all row-major f32: column-major Cᵀ = W · Aᵀ
 * with cuBLASLt's A = W (stored K x Nc, op T) and B = A (stored K x M, op N). */
static xdnn_status make_gemm(gpu_ctx *c, cublasLtMatmulDesc_t op, lt_gemm *gm, int64_t M, int64_t Nc, int64_t K,
                             int64_t lda, int64_t ldw, int64_t ldc, xdnn_diags_t *d)
{
    CUBLAS_TRY(cublasLtMatrixLayoutCreate(&gm->la, CUDA_R_32F, (uint64_t)K, (uint64_t)Nc, ldw));
    CUBLAS_TRY(cublasLtMatrixLayoutCreate(&gm->lb, CUDA_R_32F, (uint64_t)K, (uint64_t)M, lda));
    CUBLAS_TRY(cublasLtMatrixLayoutCreate(&gm->ld, CUDA_R_32F, (uint64_t)Nc, (uint64_t)M, ldc));
    cublasLtMatmulPreference_t pref;
    CUBLAS_TRY(cublasLtMatmulPreferenceCreate(&pref));
    uint64_t wsz = RNN_LT_WS;
    cublasLtMatmulHeuristicResult_t res;
    int nres = 0;
    cublasStatus_t e = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsz,
                                                            sizeof wsz);
    /* Per-layer weight slices start anywhere in the packed buffer: ask for
     * algorithms that need only f32 alignment. */
    uint32_t align = 4;
    const cublasLtMatmulPreferenceAttributes_t al[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    for (int i = 0; i < 4 && e == CUBLAS_STATUS_SUCCESS; i++)
        e = cublasLtMatmulPreferenceSetAttribute(pref, al[i], &align, sizeof align);
    if (e == CUBLAS_STATUS_SUCCESS)
        e = cublasLtMatmulAlgoGetHeuristic(c->lt, op, gm->la, gm->lb, gm->ld, gm->ld, pref, 1, &res, &nres);
    cublasLtMatmulPreferenceDestroy(pref);
    CUBLAS_TRY(e);
    if (nres < 1) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), "rnn_cublas: no cuBLASLt algorithm for %lld x %lld x %lld",
                   (long long)M, (long long)Nc, (long long)K);
        return XDNN_ERR_UNSUPPORTED;
    }
    gm->algo = res.algo;
    gm->ready = true;
    return XDNN_OK;
}

static xdnn_status rnn_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d)
{
    rnn_priv *rv = calloc(1, sizeof *rv);
    if (!rv)
        return XDNN_ERR_NOMEM;
    p->priv = rv;
    char why[512];
    if (!gpu_rnn_analyze(c->plan, p, &rv->rp, why, sizeof why)) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), "rnn_cublas: %s: %s", p->name, why);
        return XDNN_ERR_UNSUPPORTED;
    }
    const rnn_plan *rp = &rv->rp;
    CUBLAS_TRY(cublasLtMatmulDescCreate(&rv->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    CUBLAS_TRY(cublasLtMatmulDescSetAttribute(rv->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    CUBLAS_TRY(cublasLtMatmulDescSetAttribute(rv->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    const int64_t TN = rp->T * rp->N, GH = rp->G * rp->H, DGH = rp->D * GH, DH = rp->D * rp->H;
    xdnn_status st = XDNN_OK;
    if (TN > 0 && (st = make_gemm(c, rv->op, &rv->in0, TN, DGH, rp->I, rp->I, rp->Iw, DGH, d)) != XDNN_OK)
        return st;
    if (TN > 0 && rp->L > 1 && (st = make_gemm(c, rv->op, &rv->in1, TN, DGH, DH, DH, rp->Iw, DGH, d)) != XDNN_OK)
        return st;
    if (rp->N > 0 && (st = make_gemm(c, rv->op, &rv->rec, rp->N, GH, rp->H, rp->H, rp->H, GH, d)) != XDNN_OK)
        return st;
    static const char *const cells[] = {"rnn_tanh", "rnn_relu", "lstm", "gru"};
    snprintf(rv->detail, sizeof rv->detail, "%s T=%lld N=%lld I=%lld H=%lld L=%lld D=%lld: %lld GEMMs + %lld gate kernels",
             cells[rp->cell & 3], (long long)rp->T, (long long)rp->N, (long long)rp->I, (long long)rp->H,
             (long long)rp->L, (long long)rp->D, (long long)(rp->L + rp->L * rp->D * rp->T),
             (long long)(rp->L * rp->D * rp->T));
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

/* Whole tensor t <-> packed f32 buffer (row-major over t's dims). */
static xdnn_status pack(const gtensor *t, const void *src, float *dst, cudaStream_t s, xdnn_diags_t *d)
{
    int64_t packed[XDNN_MAX_RANK];
    shape_strides(t->rank, t->dims, packed);
    return copy_view(src, xk_dt(t->dtype), t->strides, dst, XK_F32, packed, t->rank, t->dims, s, d);
}

/* Row `ld` of a [L*D, N, H] state tensor <-> a packed [N, H] f32 buffer. */
static xdnn_status state_copy(const gtensor *t, void *tp, int64_t ld, float *buf, bool to_tensor, cudaStream_t s,
                              xdnn_diags_t *d)
{
    char *base = (char *)tp + (size_t)(ld * t->strides[0]) * gg_dtype_bytes(t->dtype);
    int64_t dims[2] = {t->dims[1], t->dims[2]}, tst[2] = {t->strides[1], t->strides[2]}, pst[2] = {t->dims[2], 1};
    if (to_tensor)
        return copy_view(buf, XK_F32, pst, base, xk_dt(t->dtype), tst, 2, dims, s, d);
    return copy_view(base, xk_dt(t->dtype), tst, buf, XK_F32, pst, 2, dims, s, d);
}

static xdnn_status gemm(gpu_ctx *c, const rnn_priv *rv, const lt_gemm *gm, const float *A, const float *W, float *C,
                        char *ltws, cudaStream_t s, xdnn_diags_t *d)
{
    const float one = 1.0f, zero = 0.0f;
    CUBLAS_TRY(cublasLtMatmul(c->lt, rv->op, &one, W, gm->la, A, gm->lb, &zero, C, gm->ld, C, gm->ld, &gm->algo, ltws,
                              RNN_LT_WS, s));
    return XDNN_OK;
}

static xdnn_status rnn_execute(gpu_ctx *c, gpart *p, cudaStream_t s, xdnn_diags_t *d)
{
    rnn_priv *rv = p->priv;
    const rnn_plan *rp = &rv->rp;
    const ggraph *g = c->plan->g;
    char *ws = (char *)(((uintptr_t)(c->ws + p->ws_offset) + 255) & ~(uintptr_t)255);
    float *x = (float *)(void *)(ws + rp->off_x), *wih = (float *)(void *)(ws + rp->off_wih);
    float *whh = (float *)(void *)(ws + rp->off_whh), *bih = (float *)(void *)(ws + rp->off_bih);
    float *bhh = (float *)(void *)(ws + rp->off_bhh), *ain = (float *)(void *)(ws + rp->off_ain);
    float *ys[2] = {(float *)(void *)(ws + rp->off_ys0), (float *)(void *)(ws + rp->off_ys1)};
    float *hh = (float *)(void *)(ws + rp->off_hh), *h = (float *)(void *)(ws + rp->off_h);
    float *cst = (float *)(void *)(ws + rp->off_c);
    char *ltws = ws + rp->off_lt;
    const int64_t T = rp->T, N = rp->N, H = rp->H, GH = rp->G * H, DGH = rp->D * GH, DH = rp->D * H;
    xdnn_status st;
    if ((st = pack(&g->t[rp->x], c->dptr[rp->x], x, s, d)) || (st = pack(&g->t[rp->w_ih], c->dptr[rp->w_ih], wih, s, d)) ||
        (st = pack(&g->t[rp->w_hh], c->dptr[rp->w_hh], whh, s, d)))
        return st;
    if (rp->b_ih >= 0 && (st = pack(&g->t[rp->b_ih], c->dptr[rp->b_ih], bih, s, d)))
        return st;
    if (rp->b_hh >= 0 && (st = pack(&g->t[rp->b_hh], c->dptr[rp->b_hh], bhh, s, d)))
        return st;
    for (int64_t l = 0; l < rp->L; l++) {
        float *out = ys[l % 2];
        const float *in = l ? ys[(l - 1) % 2] : x;
        if (T * N > 0 && (st = gemm(c, rv, l ? &rv->in1 : &rv->in0, in, wih + l * rp->D * GH * rp->Iw, ain, ltws, s, d)))
            return st;
        for (int64_t dir = 0; dir < rp->D; dir++) {
            int64_t ld = l * rp->D + dir;
            if ((st = state_copy(&g->t[rp->h0], c->dptr[rp->h0], ld, h, false, s, d)))
                return st;
            if (rp->cell == RNN_CELL_LSTM && (st = state_copy(&g->t[rp->c0], c->dptr[rp->c0], ld, cst, false, s, d)))
                return st;
            for (int64_t step = 0; step < T && N > 0; step++) {
                int64_t t = dir ? T - 1 - step : step;
                if ((st = gemm(c, rv, &rv->rec, h, whh + ld * GH * H, hh, ltws, s, d)))
                    return st;
                xk_gates gk = {.cell = rp->cell, .N = (int32_t)N, .H = (int32_t)H,
                               .ain = ain + t * N * DGH + dir * GH, .ain_ld = DGH, .hh = hh,
                               .b_ih = rp->b_ih >= 0 ? bih + ld * GH : NULL, .b_hh = rp->b_hh >= 0 ? bhh + ld * GH : NULL,
                               .h = h, .c = cst, .ys = out + t * N * DH + dir * H, .ys_ld = DH};
                if ((st = gpu_check_cuda((cudaError_t)xk_rnn_gates(&gk, s), "xk_rnn_gates", __FILE__, __LINE__, d)))
                    return st;
            }
            if (rp->h_n >= 0 && (st = state_copy(&g->t[rp->h_n], c->dptr[rp->h_n], ld, h, true, s, d)))
                return st;
            if (rp->c_n >= 0 && (st = state_copy(&g->t[rp->c_n], c->dptr[rp->c_n], ld, cst, true, s, d)))
                return st;
        }
    }
    const gtensor *y = &g->t[rp->y];
    int64_t packed[3] = {N * DH, DH, 1};
    return copy_view(ys[(rp->L - 1) % 2], XK_F32, packed, c->dptr[rp->y], xk_dt(y->dtype), y->strides, 3, y->dims, s, d);
}

static void destroy_gemm(lt_gemm *gm)
{
    if (gm->la)
        cublasLtMatrixLayoutDestroy(gm->la);
    if (gm->lb)
        cublasLtMatrixLayoutDestroy(gm->lb);
    if (gm->ld)
        cublasLtMatrixLayoutDestroy(gm->ld);
}

static void rnn_release(gpart *p)
{
    rnn_priv *rv = p->priv;
    if (!rv)
        return;
    destroy_gemm(&rv->in0);
    destroy_gemm(&rv->in1);
    destroy_gemm(&rv->rec);
    if (rv->op)
        cublasLtMatmulDescDestroy(rv->op);
    free(rv);
    p->priv = NULL;
}

static const char *rnn_detail(const gpart *p)
{
    const rnn_priv *rv = p->priv;
    return rv ? rv->detail : "";
}

const gpu_engine gpu_engine_rnn_cublas = {
    .name = "rnn_cublas",
    .summary = "rnn/lstm/gru forward: one cuBLASLt GEMM per layer for the inputs, per step a GEMM + fused gates",
    .supports = rnn_supports, .cost = rnn_cost, .workspace = rnn_workspace,
    .build = rnn_build, .execute = rnn_execute, .release = rnn_release, .detail = rnn_detail,
};
