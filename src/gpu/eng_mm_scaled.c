/* eng_mm_scaled.c — scaled_matmul (src/ops/quant_matmul.c) on cuBLASLt's
 * low-precision tensor cores, two engines over one analysis:
 *  - matmul_fp8_cublaslt: a, b fp8 (e4m3 x e4m3 or an e4m3/e5m2 mix), f32
 *    accumulation, per-tensor dequantization scales passed as device pointers
 *    (A/B_SCALE_POINTER), D bf16/f16/f32 written by cuBLASLt; a requantized c
 *    (c_scale, dtype fp8/i8) or an amax result: D in f32 into the workspace,
 *    then kq_requant_f32 (kernels/quant.cu) divides by c_scale and rounds
 *    the quotient exactly as quantize does, and takes amax on the way (one
 *    extra pass over M x N f32, ~10% at 8192^3; cuBLASLt's own D_SCALE /
 *    AMAX_D would save it, but multiply by a rounded 1/c_scale);
 *  - matmul_i8_cublaslt: a, b i8, exact int32 accumulation (IMMA) into the
 *    workspace, then the epilogue kq_rescale_i32 (kernels/quant.cu) applies
 *    sa * sb (and / c_scale), rounds once and takes amax: bit-exact against
 *    the CPU reference (cuBLASLt's int8 kernels scale in f32 and write i8 or
 *    i32 only, so the epilogue is ours).
 *
 * Layout.  Row-major C = A B is computed column-major as C^T = B^T A^T, so
 * cuBLASLt's A is our b and its B is our a.  cuBLASLt's fp8 kernels take only
 * the "TN" form (its A transposed, its B not): K must be the contiguous dim
 * of both operands: a as [M, K] row-major (or [K, M] column-major with
 * trans_a), b as [N, K] row-major with trans_b=true (the weight layout of
 * torch.nn.Linear, and what torch._scaled_mm asks for), or [K, N] stored
 * column-major (@col).  M, N, K and the leading dims must be multiples of 16.
 * Anything else is refused with the reason. */
#include "gpu/engine.h"
#include "gpu/kern_quant.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MF_WORKSPACE = GPU_LT_LOWP_WORKSPACE };

typedef struct mf_shape {
    int a, b, sa, sb, c;             /* tensor ids */
    int sc, amax;                    /* c_scale, the amax result: -1 when absent */
    int64_t m, n, k, lda, ldb, ldc;
    bool i8;                         /* i8 x i8 (else fp8) */
    bool epilogue;                   /* our epilogue kernel writes c from a packed workspace accumulator */
} mf_shape;

typedef struct mf_priv {
    mf_shape s;
    gpu_lt_gemm lt;
    char detail[160];
    pthread_mutex_t mu;              /* guards the scale pointers of `op` */
} mf_priv;

/* The leading dim of a K-contiguous operand: dims [r0, r1] logical
 * (rows, K) or (K, cols) as `k_last` says; false when K is not contiguous. */
static bool k_contiguous(const gtensor *t, bool k_last, int64_t *ld)
{
    int kd = k_last ? 1 : 0, od = 1 - kd;
    if (t->dims[kd] > 1 && t->strides[kd] != 1)
        return false;
    *ld = t->dims[od] > 1 ? t->strides[od] : t->dims[kd];
    return *ld >= t->dims[kd];
}

static bool mf_analyze(const gplan *pl, const gpart *p, mf_shape *s, char *why, size_t len)
{
    memset(s, 0, sizeof *s);
    const ggraph *g = pl->g;
    if (p->nnodes != 1 || g->n[p->nodes[0]].op_id != OP_scaled_matmul)
        GPU_REFUSE("needs a lone scaled_matmul node, got partition %s", p->name);
    const gnode *n = &g->n[p->nodes[0]];
    if (!n->ir || n->nin < 4 || n->out < 0)
        GPU_REFUSE("scaled_matmul %s lacks operands or its IR node", n->name);
    const op_desc *d = op_get(n->op_id);
    bool ta = op_attr_bool(n->ir, d, "trans_a"), tb = op_attr_bool(n->ir, d, "trans_b");
    s->a = n->in[0], s->b = n->in[1], s->sa = n->in[2], s->sb = n->in[3], s->c = n->out;
    s->sc = n->nin > 4 ? n->in[4] : -1;
    s->amax = n->nouts > 1 ? n->outs[1] : -1;
    const gtensor *A = &g->t[s->a], *B = &g->t[s->b], *C = &g->t[s->c];
    xdnn_dtype ea = A->dtype, eb = B->dtype;
    s->i8 = ea == XDNN_I8; /* the op's inference makes both i8 or both fp8 */
    if (ea == XDNN_FP8_E5M2 && eb == XDNN_FP8_E5M2)
        GPU_REFUSE("fp8_e5m2 x fp8_e5m2 has no Hopper fp8 kernel (one operand must be fp8_e4m3)");
    if (g->t[s->sa].dtype != XDNN_F32 || g->t[s->sb].dtype != XDNN_F32 || (s->sc >= 0 && g->t[s->sc].dtype != XDNN_F32))
        GPU_REFUSE("scales must be f32");
    s->m = ta ? A->dims[1] : A->dims[0];
    s->k = ta ? A->dims[0] : A->dims[1];
    s->n = tb ? B->dims[0] : B->dims[1];
    if (!k_contiguous(A, !ta, &s->lda))
        GPU_REFUSE("a '%s' must have K contiguous (cuBLASLt fp8/i8 is TN only): [M, K] row-major, or [K, M] column-major with "
             "trans_a; strides are %lld, %lld", A->name, (long long)A->strides[0], (long long)A->strides[1]);
    if (!k_contiguous(B, tb, &s->ldb))
        GPU_REFUSE("b '%s' must have K contiguous (cuBLASLt fp8/i8 is TN only): [N, K] row-major with trans_b=true, or "
             "[K, N] column-major; strides are %lld, %lld", B->name, (long long)B->strides[0],
             (long long)B->strides[1]);
    if (C->dims[1] > 1 && C->strides[1] != 1)
        GPU_REFUSE("output '%s' must be row-major (strides %lld, %lld)", C->name, (long long)C->strides[0],
             (long long)C->strides[1]);
    s->ldc = C->dims[0] > 1 ? C->strides[0] : s->n;
    int64_t v[6] = {s->m, s->n, s->k, s->lda, s->ldb, s->ldc};
    static const char *const vn[6] = {"M", "N", "K", "lda", "ldb", "ldc"};
    for (int i = 0; i < 6; i++)
        if (v[i] % 16 != 0)
            GPU_REFUSE("cuBLASLt fp8/i8 needs M, N, K and leading dims that are multiples of 16, got %s = %lld", vn[i],
                 (long long)v[i]);
    /* |a|, |b| <= 128: K products of 2^14 stay below 2^31 while K < 2^17 */
    if (s->i8 && s->k >= (1 << 17))
        GPU_REFUSE("i8 sums of K = %lld products could overflow the int32 accumulator (K must be below 131072)",
             (long long)s->k);
    bool quantized = C->dtype == XDNN_I8 || C->dtype == XDNN_FP8_E4M3 || C->dtype == XDNN_FP8_E5M2;
    if (!quantized && C->dtype != XDNN_BF16 && C->dtype != XDNN_F16 && C->dtype != XDNN_F32)
        GPU_REFUSE("output dtype %s (expected bf16, f16, f32, or fp8/i8 with c_scale)", xdnn_dtype_name(C->dtype));
    if (quantized != (s->sc >= 0)) /* the op's inference pairs them */
        GPU_REFUSE("output dtype %s %s c_scale", xdnn_dtype_name(C->dtype), quantized ? "without" : "with");
    s->epilogue = s->i8 || s->sc >= 0 || s->amax >= 0;
    return true;
}

static bool mf_supports_kind(const gplan *pl, const gpart *p, const gpu_device *dev, bool i8, char *why, size_t len)
{
    mf_shape s;
    const int need = i8 ? 75 : 89; /* IMMA since Turing, fp8 since Ada */
    if (dev && dev->cc_major * 10 + dev->cc_minor < need) {
        snprintf(why, len, "%s tensor cores need compute capability %d.%d or newer, got %d.%d", i8 ? "int8" : "fp8",
                 need / 10, need % 10, dev->cc_major, dev->cc_minor);
        return false;
    }
    if (!mf_analyze(pl, p, &s, why, len))
        return false;
    if (s.i8 != i8) {
        snprintf(why, len, "operands are %s: %s serves them", s.i8 ? "i8" : "fp8",
                 s.i8 ? "matmul_i8_cublaslt" : "matmul_fp8_cublaslt");
        return false;
    }
    return true;
}

static bool mf_supports_fp8(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    return mf_supports_kind(pl, p, dev, false, why, len);
}

static bool mf_supports_i8(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    return mf_supports_kind(pl, p, dev, true, why, len);
}

static double mf_cost_fp8(const gplan *pl, const gpart *p, const gpu_device *dev) { return gpu_roofline_us(p, 1400.0); }

/* Hopper's dense int8 peak equals its fp8 peak; the epilogue's extra pass over
 * M x N int32 is small beside the GEMM for the sizes that matter. */
static double mf_cost_i8(const gplan *pl, const gpart *p, const gpu_device *dev) { return gpu_roofline_us(p, 1300.0); }

/* The accumulator our epilogue reads (int32 for i8, f32 for fp8): packed
 * [M, N] after cuBLASLt's own workspace. */
static size_t mf_acc_bytes(const mf_shape *s) { return s->epilogue ? (size_t)(s->m * s->n) * 4 : 0; }

static size_t mf_workspace(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    mf_shape s;
    char why[8];
    return MF_WORKSPACE + (mf_analyze(pl, p, &s, why, sizeof why) ? mf_acc_bytes(&s) : 0);
}

static cudaDataType_t mf_type(xdnn_dtype t)
{
    switch (t) {
    case XDNN_FP8_E4M3: return CUDA_R_8F_E4M3;
    case XDNN_FP8_E5M2: return CUDA_R_8F_E5M2;
    case XDNN_BF16: return CUDA_R_16BF;
    case XDNN_F16: return CUDA_R_16F;
    case XDNN_I8: return CUDA_R_8I;
    default: return CUDA_R_32F;
    }
}

/* A layout of m, with its batch count and stride when batched. */
static xdnn_status lt_layout(const gpu_lt_mat *m, cublasLtMatrixLayout_t *l, xdnn_diags_t *d)
{
    CUBLAS_TRY(cublasLtMatrixLayoutCreate(l, m->type, m->rows, m->cols, m->ld));
    if (m->batch > 1) {
        CUBLAS_TRY(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &m->batch,
                                                    sizeof m->batch));
        CUBLAS_TRY(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &m->stride,
                                                    sizeof m->stride));
    }
    return XDNN_OK;
}

xdnn_status gpu_lt_gemm_plan(gpu_ctx *c, cublasComputeType_t ct, cudaDataType_t scale, bool ta, bool tb,
                             const gpu_lt_mat *a, const gpu_lt_mat *b, const gpu_lt_mat *dm, uint64_t ws,
                             const char *who, gpu_lt_gemm *lg, xdnn_diags_t *d)
{
    return gpu_lt_gemm_plan_aligned(c, ct, scale, ta, tb, a, b, dm, ws, NULL, CUBLASLT_EPILOGUE_DEFAULT, NULL, who, lg, d);
}

xdnn_status gpu_lt_gemm_plan_aligned(gpu_ctx *c, cublasComputeType_t ct, cudaDataType_t scale, bool ta, bool tb,
                                     const gpu_lt_mat *a, const gpu_lt_mat *b, const gpu_lt_mat *dm, uint64_t ws,
                                     const int *align, int epilogue, const gpu_lt_mat *cm, const char *who,
                                     gpu_lt_gemm *lg, xdnn_diags_t *d)
{
    lg->lcc = NULL;
    CUBLAS_TRY(cublasLtMatmulDescCreate(&lg->op, ct, scale));
    if (epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
        const cublasLtEpilogue_t e = (cublasLtEpilogue_t)epilogue;
        CUBLAS_TRY(cublasLtMatmulDescSetAttribute(lg->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof e));
    }
    cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    CUBLAS_TRY(cublasLtMatmulDescSetAttribute(lg->op, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa));
    CUBLAS_TRY(cublasLtMatmulDescSetAttribute(lg->op, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb));
    xdnn_status st = lt_layout(a, &lg->la, d);
    if (st == XDNN_OK)
        st = lt_layout(b, &lg->lb, d);
    if (st == XDNN_OK)
        st = lt_layout(dm, &lg->lc, d);
    if (st == XDNN_OK && cm)
        st = lt_layout(cm, &lg->lcc, d);
    if (st != XDNN_OK)
        return st;
    cublasLtMatmulPreference_t pref;
    CUBLAS_TRY(cublasLtMatmulPreferenceCreate(&pref));
    cublasLtMatmulHeuristicResult_t res;
    int nres = 0;
    cublasStatus_t e1 = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                                             sizeof ws);
    static const cublasLtMatmulPreferenceAttributes_t align_attr[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    for (int i = 0; i < 4 && align && e1 == CUBLAS_STATUS_SUCCESS; i++) {
        const uint32_t al = (uint32_t)align[i < 3 ? i : 2]; /* C is D */
        e1 = cublasLtMatmulPreferenceSetAttribute(pref, align_attr[i], &al, sizeof al);
    }
    cublasStatus_t e2 = e1 != CUBLAS_STATUS_SUCCESS
                          ? e1
                          : cublasLtMatmulAlgoGetHeuristic(c->lt, lg->op, lg->la, lg->lb, lg->lcc ? lg->lcc : lg->lc,
                                                           lg->lc, pref, 1, &res, &nres);
    cublasLtMatmulPreferenceDestroy(pref);
    CUBLAS_TRY(e2);
    if (nres < 1) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), "%s: cuBLASLt has no algorithm for m=%llu n=%llu k=%llu",
                   who, (unsigned long long)dm->rows, (unsigned long long)dm->cols,
                   (unsigned long long)(ta ? a->rows : a->cols));
        return XDNN_ERR_UNSUPPORTED;
    }
    lg->algo = res.algo;
    size_t w;
    lg->algo_id = lg->tile = lg->splitk = -1;
    cublasLtMatmulAlgoConfigGetAttribute(&lg->algo, CUBLASLT_ALGO_CONFIG_ID, &lg->algo_id, sizeof lg->algo_id, &w);
    cublasLtMatmulAlgoConfigGetAttribute(&lg->algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &lg->tile, sizeof lg->tile, &w);
    cublasLtMatmulAlgoConfigGetAttribute(&lg->algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &lg->splitk, sizeof lg->splitk,
                                         &w);
    return XDNN_OK;
}

xdnn_status gpu_lt_lowp_gemm(gpu_ctx *c, bool i8, const gpu_lt_operand *a, const gpu_lt_operand *b, cudaDataType_t td,
                             uint64_t ldd, const char *who, gpu_lt_gemm *lg, xdnn_diags_t *d)
{
    const gpu_lt_mat ma = {a->type, a->k, a->cols, (int64_t)a->ld, 1, 0};
    const gpu_lt_mat mb = {b->type, b->k, b->cols, (int64_t)b->ld, 1, 0};
    const gpu_lt_mat md = {td, a->cols, b->cols, (int64_t)ldd, 1, 0};
    return gpu_lt_gemm_plan(c, i8 ? CUBLAS_COMPUTE_32I : CUBLAS_COMPUTE_32F, i8 ? CUDA_R_32I : CUDA_R_32F, true, false,
                            &ma, &mb, &md, GPU_LT_LOWP_WORKSPACE, who, lg, d);
}

static xdnn_status mf_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d)
{
    mf_priv *mp = calloc(1, sizeof *mp);
    if (!mp)
        return XDNN_ERR_NOMEM;
    pthread_mutex_init(&mp->mu, NULL);
    p->priv = mp;
    const ggraph *g = c->plan->g;
    char why[512];
    const char *eng = p->engine ? p->engine->name : "scaled_matmul";
    if (!mf_analyze(c->plan, p, &mp->s, why, sizeof why)) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), "%s: %s: %s", eng, p->name, why);
        return XDNN_ERR_UNSUPPORTED;
    }
    const mf_shape *s = &mp->s;
    /* cuBLASLt A = our b stored K x N (ld ldb), B = our a stored K x M (ld lda), D = C^T N x M (ld ldc);
     * with our epilogue D is the packed accumulator N x M (ld n): int32 for i8, f32 for fp8 */
    const gpu_lt_operand la = {mf_type(g->t[s->b].dtype), (uint64_t)s->k, (uint64_t)s->n, (uint64_t)s->ldb};
    const gpu_lt_operand lb = {mf_type(g->t[s->a].dtype), (uint64_t)s->k, (uint64_t)s->m, (uint64_t)s->lda};
    const cudaDataType_t td = !s->epilogue ? mf_type(g->t[s->c].dtype) : s->i8 ? CUDA_R_32I : CUDA_R_32F;
    char who[256];
    snprintf(who, sizeof who, "%s: %s (%s x %s -> %s)", eng, p->name, xdnn_dtype_name(g->t[s->a].dtype),
             xdnn_dtype_name(g->t[s->b].dtype), xdnn_dtype_name(g->t[s->c].dtype));
    xdnn_status st = gpu_lt_lowp_gemm(c, s->i8, &la, &lb, td, s->epilogue ? (uint64_t)s->n : (uint64_t)s->ldc, who,
                                      &mp->lt, d);
    if (st != XDNN_OK)
        return st;
    snprintf(mp->detail, sizeof mp->detail, "cublasLt %s %s x %s -> %s algo=%d tile=%d", s->i8 ? "imma" : "fp8",
             xdnn_dtype_name(g->t[s->a].dtype), xdnn_dtype_name(g->t[s->b].dtype), xdnn_dtype_name(g->t[s->c].dtype),
             mp->lt.algo_id, mp->lt.tile);
    return XDNN_OK;
}

/* i8: exact int32 sums into the workspace, then the scales (kq_rescale_i32). */
static xdnn_status mf_execute_i8(gpu_ctx *c, gpart *p, cudaStream_t strm, xdnn_diags_t *d)
{
    const mf_priv *mp = p->priv;
    const mf_shape *s = &mp->s;
    const int32_t alpha = 1, beta = 0;
    char *ws = c->ws + p->ws_offset;
    int32_t *acc = (int32_t *)(ws + MF_WORKSPACE);
    const gpu_lt_gemm *lg = &mp->lt;
    cublasStatus_t e = cublasLtMatmul(c->lt, lg->op, &alpha, c->dptr[s->b], lg->la, c->dptr[s->a], lg->lb, &beta, acc,
                                      lg->lc, acc, lg->lc, &lg->algo, ws, MF_WORKSPACE, strm);
    if (e != CUBLAS_STATUS_SUCCESS)
        return gpu_check_cublas(e, "cublasLtMatmul (i8)", __FILE__, __LINE__, d);
    int ce = kq_rescale_i32_launch(acc, (uint32_t)s->m, (uint32_t)s->n, (uint32_t)s->ldc, c->dptr[s->sa],
                                   c->dptr[s->sb], s->sc >= 0 ? c->dptr[s->sc] : NULL,
                                   s->amax >= 0 ? c->dptr[s->amax] : NULL, c->dptr[s->c],
                                   (int)c->plan->g->t[s->c].dtype, strm);
    return gpu_check_cuda((cudaError_t)ce, "kq_rescale_i32", __FILE__, __LINE__, d);
}

static xdnn_status mf_execute(gpu_ctx *c, gpart *p, cudaStream_t strm, xdnn_diags_t *d)
{
    mf_priv *mp = p->priv;
    const mf_shape *s = &mp->s;
    /* the epilogues take amax with atomicMax on the bits of |v| >= 0: start from +0 */
    if (s->amax >= 0) {
        cudaError_t ze = cudaMemsetAsync(c->dptr[s->amax], 0, sizeof(float), strm);
        if (ze != cudaSuccess)
            return gpu_check_cuda(ze, "cudaMemsetAsync (amax)", __FILE__, __LINE__, d);
    }
    if (s->i8)
        return mf_execute_i8(c, p, strm, d);
    const float alpha = 1.0f, beta = 0.0f;
    void *dst = s->epilogue ? c->ws + p->ws_offset + MF_WORKSPACE : c->dptr[s->c];
    /* cuBLASLt's A is our b: its scale is b_scale (the product is what matters) */
    const void *sa = c->dptr[s->sb], *sb = c->dptr[s->sa];
    pthread_mutex_lock(&mp->mu);
    cublasStatus_t e = cublasLtMatmulDescSetAttribute(mp->lt.op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa);
    if (e == CUBLAS_STATUS_SUCCESS)
        e = cublasLtMatmulDescSetAttribute(mp->lt.op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb);
    if (e == CUBLAS_STATUS_SUCCESS)
        e = cublasLtMatmul(c->lt, mp->lt.op, &alpha, c->dptr[s->b], mp->lt.la, c->dptr[s->a], mp->lt.lb, &beta, dst,
                           mp->lt.lc, dst, mp->lt.lc, &mp->lt.algo, c->ws + p->ws_offset, MF_WORKSPACE, strm);
    pthread_mutex_unlock(&mp->mu);
    if (e != CUBLAS_STATUS_SUCCESS)
        return gpu_check_cublas(e, "cublasLtMatmul (fp8)", __FILE__, __LINE__, d);
    if (!s->epilogue)
        return XDNN_OK;
    int ce = kq_requant_f32_launch(dst, (uint32_t)s->m, (uint32_t)s->n, (uint32_t)s->ldc,
                                   s->sc >= 0 ? c->dptr[s->sc] : NULL, s->amax >= 0 ? c->dptr[s->amax] : NULL,
                                   c->dptr[s->c], (int)c->plan->g->t[s->c].dtype, strm);
    return gpu_check_cuda((cudaError_t)ce, "kq_requant_f32", __FILE__, __LINE__, d);
}

static void mf_release(gpart *p)
{
    mf_priv *mp = p->priv;
    if (!mp)
        return;
    gpu_lt_destroy(mp->lt.op, mp->lt.la, mp->lt.lb, mp->lt.lc);
    pthread_mutex_destroy(&mp->mu);
    free(mp);
    p->priv = NULL;
}

static const char *mf_detail(const gpart *p)
{
    const mf_priv *mp = p->priv;
    return mp ? mp->detail : "";
}

const gpu_engine gpu_engine_matmul_fp8_cublaslt = {
    "matmul_fp8_cublaslt", "scaled_matmul on fp8 tensor cores (cuBLASLt TN, e4m3/e5m2, per-tensor scales, bf16/f16/f32 out, or "
    "fp8/i8 requantized and amax by our epilogue)",
    mf_supports_fp8, mf_cost_fp8, mf_workspace, mf_build, mf_execute, mf_release, mf_detail,
};

const gpu_engine gpu_engine_matmul_i8_cublaslt = {
    "matmul_i8_cublaslt", "scaled_matmul on int8 tensor cores (cuBLASLt IMMA TN, exact int32 sums, per-tensor scales "
    "applied once: bf16/f16/f32 out, or fp8/i8 requantized, and amax; bit-exact)",
    mf_supports_i8, mf_cost_i8, mf_workspace, mf_build, mf_execute, mf_release, mf_detail,
};
