/* eng_matmul.c — matmul_cublaslt: C[..., M, N] = A[..., M, K] @ B[..., K, N]
 * through cuBLASLt, with f32 (tf32 when the graph allows it), f16 and bf16
 * inputs and f32 accumulation.
 *
 * Layouts: cuBLASLt is column-major.  A row-major matrix X is a column-major
 * X^T with the same leading dimension, so a row-major C is computed as
 * C^T = B^T A^T (cuBLASLt's A is our B); a column-major C directly.  trans_a/b
 * are stride swaps.  Batch dims broadcast NumPy-style; dims that collapse into
 * one strided batch go to cuBLASLt's strided batch, the rest loop on the host.
 *
 * Epilogues: the partition's chain [add bias[N]] [relu | gelu(tanh)] [cast] on
 * an unbatched row-major output maps onto CUBLASLT_EPILOGUE_{BIAS,RELU,GELU}*
 * (the GEMM then writes the chain's output directly); any other chain runs as
 * GEMM into scratch + a generated pointwise kernel.  A chain that is one add of
 * a full-size tensor laid out as the output (a residual: r = x + h @ W) runs as
 * D = A B + 1 * C with that tensor as C: the GEMM's own result never goes
 * through memory.  The sum is rounded once, so by default only where the
 * graph rounds nothing in between (the GEMM's result is f32): a bf16/f16
 * product rounded before the add (intermediate=bf16) stays the graph's number
 * unless XDNN_MATMUL_ADDEND=1 accepts one rounding fewer (PyTorch's addmm);
 * XDNN_MATMUL_NO_ADDEND=1: never. */
#include "gpu/engine.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MM_LT_WORKSPACE = 32 << 20 };
enum { MM_ALGO_VARIANTS = 6 }; /* knob algo=0..5: that many of cuBLASLt's ranked algorithms are tuned */

/* An A/B switch: set and not "0". */
static bool switch_on(const char *name)
{
    const char *v = getenv(name);
    return v && strcmp(v, "0") != 0;
}

typedef struct mm_view {
    int64_t r, c, sr, sc;  /* logical rows, cols and their strides (elements) */
} mm_view;

/* The last two dims of t as a matrix, swapped when `trans`. */
static mm_view view_of(const gtensor *t, bool trans)
{
    mm_view v = {t->dims[t->rank - 2], t->dims[t->rank - 1], t->strides[t->rank - 2], t->strides[t->rank - 1]};
    if (trans)
        v = (mm_view){v.c, v.r, v.sc, v.sr};
    return v;
}

/* The stored column-major matrix for logical X and the op giving X^T (want_t)
 * or X.  False when neither dim is contiguous. */
static bool lt_operand(mm_view x, bool want_t, mm_mat *m)
{
    bool rowmajor = (x.c == 1 || x.sc == 1) && (x.r == 1 || x.sr >= x.c);
    bool colmajor = (x.r == 1 || x.sr == 1) && (x.c == 1 || x.sc >= x.r);
    if (rowmajor) { /* memory holds X^T column-major */
        m->rows = x.c;
        m->cols = x.r;
        m->ld = x.r == 1 ? x.c : x.sr;
        m->trans = !want_t;
    } else if (colmajor) {
        m->rows = x.r;
        m->cols = x.c;
        m->ld = x.c == 1 ? x.r : x.sc;
        m->trans = want_t;
    } else {
        return false;
    }
    if (m->ld < m->rows)
        m->ld = m->rows;
    return true;
}

static bool lt_dtype_pair(xdnn_dtype in, xdnn_dtype out)
{
    if (in == XDNN_F32)
        return out == XDNN_F32;
    if (in == XDNN_F16 || in == XDNN_BF16)
        return out == in || out == XDNN_F32;
    return false;
}

/* Is tensor b a bias row [.., 1, N] (stride 1 along N) for an N-wide output? */
static bool is_bias_row(const gtensor *b, int64_t n)
{
    if (b->rank < 1 || b->dims[b->rank - 1] != n || (n > 1 && b->strides[b->rank - 1] != 1))
        return false;
    for (int i = 0; i < b->rank - 1; i++)
        if (b->dims[i] != 1)
            return false;
    return true;
}

/* The residual form: the chain is a single add of a tensor with the output's
 * dims, strides and dtype, on an unbatched row-major GEMM.  True when it took it. */
static bool lt_addend_match(const gplan *pl, mm_shape *s)
{
    const ggraph *g = pl->g;
    if (switch_on("XDNN_MATMUL_NO_ADDEND") || s->nepi != 1 || !s->row_major_out || s->batch != 1 || s->nouter != 0)
        return false;
    const gnode *n = &g->n[s->epi_nodes[0]];
    if (n->tag != PWT_ADD || n->nin != 2 || (n->in[0] != s->c_tensor && n->in[1] != s->c_tensor))
        return false;
    int other = n->in[0] == s->c_tensor ? n->in[1] : n->in[0];
    if (other < 0 || other == s->c_tensor || g->t[other].is_scalar)
        return false;
    const gtensor *x = &g->t[other], *out = &g->t[n->out];
    if (g->t[s->c_tensor].dtype != XDNN_F32 && !switch_on("XDNN_MATMUL_ADDEND"))
        return false; /* the product is rounded before the add: keep that rounding */
    if (!lt_dtype_pair(g->t[s->first].dtype, out->dtype) || x->dtype != out->dtype || !gg_same_dims(x, out) ||
        !gg_same_dims(out, &g->t[s->c_tensor]))
        return false;
    for (int j = 0; j < out->rank; j++)
        if (x->strides[j] != out->strides[j] || out->strides[j] != g->t[s->c_tensor].strides[j])
            return false;
    s->addend = other;
    s->d_tensor = n->out;
    s->need_kernel = false;
    return true;
}

static void lt_epilogue_match(const gplan *pl, mm_shape *s)
{
    const ggraph *g = pl->g;
    if (lt_addend_match(pl, s))
        return;
    int cur = s->c_tensor, i = 0, epi = CUBLASLT_EPILOGUE_DEFAULT, bias = -1;
    if (i < s->nepi && g->n[s->epi_nodes[i]].tag == PWT_ADD) {
        const gnode *n = &g->n[s->epi_nodes[i]];
        int other = n->in[0] == cur ? n->in[1] : n->in[0];
        if (n->nin == 2 && other >= 0 && !g->t[other].is_scalar && is_bias_row(&g->t[other], s->m)) {
            bias = other;
            epi = CUBLASLT_EPILOGUE_BIAS;
            cur = n->out;
            i++;
        }
    }
    if (i < s->nepi && (g->n[s->epi_nodes[i]].tag == PWT_RELU || g->n[s->epi_nodes[i]].tag == PWT_GELU_TANH)) {
        bool relu = g->n[s->epi_nodes[i]].tag == PWT_RELU;
        epi = bias >= 0 ? (relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_GELU_BIAS)
                        : (relu ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_GELU);
        cur = g->n[s->epi_nodes[i]].out;
        i++;
    }
    if (i < s->nepi && g->n[s->epi_nodes[i]].tag == PWT_CAST) {
        cur = g->n[s->epi_nodes[i]].out;
        i++;
    }
    const gtensor *a = &g->t[s->first];
    bool ok = i == s->nepi && s->row_major_out && s->batch == 1 && s->nouter == 0 &&
              lt_dtype_pair(a->dtype, g->t[cur].dtype) && (bias < 0 || g->t[bias].dtype == g->t[cur].dtype) &&
              gg_same_dims(&g->t[cur], &g->t[s->c_tensor]);
    if (ok && cur != s->c_tensor) {
        /* D must have C's layout: same strides. */
        for (int j = 0; j < g->t[cur].rank; j++)
            ok &= g->t[cur].strides[j] == g->t[s->c_tensor].strides[j];
    }
    if (ok) {
        s->lt_epilogue = epi;
        s->bias = bias;
        s->d_tensor = cur;
        s->need_kernel = false;
    } else {
        s->need_kernel = s->nepi > 0;
    }
}

bool gpu_matmul_analyze(const gplan *pl, const gpart *p, bool tf32, mm_shape *s, char *why, size_t len)
{
    memset(s, 0, sizeof *s);
    s->bias = s->addend = -1;
    s->lt_epilogue = CUBLASLT_EPILOGUE_DEFAULT; /* == 1: zero is no epilogue at all */
    const ggraph *g = pl->g;
    if (p->kind != GP_MATMUL || p->anchor < 0) {
        snprintf(why, len, "needs a matmul partition, got %s", gpart_kind_name(p->kind));
        return false;
    }
    const gnode *n = &g->n[p->anchor];
    if (n->nin < 2 || n->in[0] < 0 || n->in[1] < 0) {
        snprintf(why, len, "%s: matmul needs two tensor operands", n->name);
        return false;
    }
    const gtensor *A = &g->t[n->in[0]], *B = &g->t[n->in[1]], *C = &g->t[n->out];
    if (A->rank < 2 || B->rank < 2 || C->rank < 2) {
        snprintf(why, len, "operands of rank < 2 are not supported (ranks %d, %d)", A->rank, B->rank);
        return false;
    }
    if (A->dtype != B->dtype || !lt_dtype_pair(A->dtype, C->dtype)) {
        snprintf(why, len, "dtypes %s x %s -> %s are not a cuBLASLt combination (f32->f32, f16/bf16->same or f32)",
                 gg_dtype_name(A->dtype), gg_dtype_name(B->dtype), gg_dtype_name(C->dtype));
        return false;
    }
    mm_view va = view_of(A, n->trans_a), vb = view_of(B, n->trans_b), vc = view_of(C, false);
    if (va.c != vb.r || vc.r != va.r || vc.c != vb.c) {
        snprintf(why, len, "shapes do not chain: [%lld x %lld] x [%lld x %lld] -> [%lld x %lld]", (long long)va.r,
                 (long long)va.c, (long long)vb.r, (long long)vb.c, (long long)vc.r, (long long)vc.c);
        return false;
    }
    s->c_tensor = s->d_tensor = n->out;
    s->row_major_out = vc.c == 1 || vc.sc == 1;
    bool colmajor_out = vc.r == 1 || vc.sr == 1;
    if (!s->row_major_out && !colmajor_out) {
        snprintf(why, len, "output %s has no contiguous dim (strides %lld, %lld)", C->name, (long long)vc.sr,
                 (long long)vc.sc);
        return false;
    }
    mm_view vfirst = s->row_major_out ? vb : va, vsecond = s->row_major_out ? va : vb;
    s->first = s->row_major_out ? n->in[1] : n->in[0];
    s->second = s->row_major_out ? n->in[0] : n->in[1];
    bool want_t = s->row_major_out;
    if (!lt_operand(vfirst, want_t, &s->a) || !lt_operand(vsecond, want_t, &s->b)) {
        snprintf(why, len, "an operand has no contiguous dim in its last two (A strides %lld,%lld; B %lld,%lld)",
                 (long long)va.sr, (long long)va.sc, (long long)vb.sr, (long long)vb.sc);
        return false;
    }
    if (s->row_major_out) {
        s->m = vc.c;
        s->n = vc.r;
        s->d = (mm_mat){vc.c, vc.r, vc.r == 1 ? vc.c : vc.sr, false, 0};
    } else {
        s->m = vc.r;
        s->n = vc.c;
        s->d = (mm_mat){vc.r, vc.c, vc.c == 1 ? vc.r : vc.sc, false, 0};
    }
    if (s->d.ld < s->d.rows)
        s->d.ld = s->d.rows;
    s->k = va.c;

    /* Batch dims: right-aligned broadcast against the output's. */
    int nb = C->rank - 2, nd = 0;
    int64_t dims[XDNN_MAX_RANK], st[3][XDNN_MAX_RANK];
    const gtensor *ops[3] = {&g->t[s->first], &g->t[s->second], C};
    for (int i = 0; i < nb; i++) {
        if (C->dims[i] == 1)
            continue;
        for (int k = 0; k < 3; k++) {
            const gtensor *x = ops[k];
            int j = i - (nb - (x->rank - 2));
            if (j >= 0 && x->dims[j] != 1 && x->dims[j] != C->dims[i]) {
                snprintf(why, len, "batch dim %d of %s is %lld, output has %lld", j, x->name, (long long)x->dims[j],
                         (long long)C->dims[i]);
                return false;
            }
            st[k][nd] = j < 0 || x->dims[j] == 1 ? 0 : x->strides[j];
        }
        dims[nd++] = C->dims[i];
    }
    /* Collapse neighbours whose strides nest for all three tensors. */
    int m = 0;
    for (int i = 0; i < nd; i++) {
        bool nest = m > 0;
        for (int k = 0; k < 3 && nest; k++)
            nest = st[k][m - 1] == st[k][i] * dims[i];
        if (nest) {
            dims[m - 1] *= dims[i];
            for (int k = 0; k < 3; k++)
                st[k][m - 1] = st[k][i];
        } else {
            dims[m] = dims[i];
            for (int k = 0; k < 3; k++)
                st[k][m] = st[k][i];
            m++;
        }
    }
    /* Activations [..., M, K] times one weight [K, N] (the weight broadcast
     * along the batch dims: stride 0): when the activations' and the output's
     * batch dims continue their rows, they are more rows of one GEMM, e.g. a
     * Llama block's [B, S, D] @ [D, N] is one [B*S, D] @ [D, N] (one launch
     * with a fuller last wave than B looped ones, and the residual and bias
     * epilogues apply).  Row-major output only: there the rows are cuBLASLt's
     * columns of its B (our A) and of D. */
    while (m > 0 && s->row_major_out && !s->b.trans && st[0][m - 1] == 0 && s->b.bstride == 0 &&
           st[1][m - 1] == s->b.cols * s->b.ld && st[2][m - 1] == s->d.cols * s->d.ld &&
           s->b.ld >= s->b.rows && s->d.ld >= s->d.rows && !switch_on("XDNN_MATMUL_NO_ROWFOLD")) {
        m--;
        s->b.cols *= dims[m];
        s->d.cols *= dims[m];
        s->n *= dims[m];
    }
    s->batch = 1;
    /* The innermost batch dim becomes cuBLASLt's strided batch, unless an
     * operand broadcasts along it (stride 0): then everything loops. */
    if (m > 0 && st[0][m - 1] != 0 && st[1][m - 1] != 0) {
        m--;
        s->batch = dims[m];
        s->a.bstride = st[0][m];
        s->b.bstride = st[1][m];
        s->d.bstride = st[2][m];
    }
    s->nouter = m;
    for (int i = 0; i < m; i++) {
        s->outer_dims[i] = dims[i];
        for (int k = 0; k < 3; k++)
            s->outer_stride[k][i] = st[k][i];
    }
    s->epi_nodes = arena_alloc(g->ar, (size_t)p->nnodes * sizeof(int) + 1);
    for (int i = 0; i < p->nnodes; i++)
        if (p->nodes[i] != p->anchor)
            s->epi_nodes[s->nepi++] = p->nodes[i];
    lt_epilogue_match(pl, s);
    (void)tf32;
    if (s->need_kernel) {
        int bad = cg_unsupported_dtype(g, p->outs, p->nouts);
        if (bad >= 0) {
            snprintf(why, len, "epilogue output '%s' has dtype %s", g->t[bad].name, gg_dtype_name(g->t[bad].dtype));
            return false;
        }
    }
    return true;
}

/* ---- the engine */
typedef struct mm_priv {
    mm_shape s;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, ld;
    cublasLtMatmulAlgo_t algo;  /* heuristic for 256-byte aligned operands (cuBLASLt's default preference) */
    cublasLtMatmulAlgo_t algo16; /* for operands only XDNN_CUDA_ALIGNMENT aligned: a caller's view, a batch slice */
    bool has16;
    cg_kernel epik;
    gpu_kernel epi;
    char detail[160];
    pthread_mutex_t mu;       /* guards the bias pointer of `op` (mm_execute) */
} mm_priv;

static bool mm_supports(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    mm_shape s;
    return gpu_matmul_analyze(pl, p, pl->g->tf32, &s, why, len);
}

static double mm_cost(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    const gnode *n = &pl->g->n[p->anchor];
    xdnn_dtype t = pl->g->t[n->in[0]].dtype;
    return gpu_roofline_us(p, t == XDNN_F32 ? (pl->g->tf32 ? 350.0 : 50.0) : 700.0);
}

static size_t mm_workspace(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    mm_shape s;
    char why[256];
    size_t ws = MM_LT_WORKSPACE;
    if (gpu_matmul_analyze(pl, p, pl->g->tf32, &s, why, sizeof why) && s.need_kernel)
        ws += (gg_span_bytes(&pl->g->t[s.c_tensor]) + 255) / 256 * 256;
    return ws;
}

static cudaDataType_t cuda_type(xdnn_dtype t)
{
    return t == XDNN_F16 ? CUDA_R_16F : t == XDNN_BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

static xdnn_status make_layout(cublasLtMatrixLayout_t *l, xdnn_dtype t, const mm_mat *m, int64_t batch,
                               xdnn_diags_t *d)
{
    CUBLAS_TRY(cublasLtMatrixLayoutCreate(l, cuda_type(t), (uint64_t)m->rows, (uint64_t)m->cols, m->ld));
    if (batch > 1) {
        int32_t bc = (int32_t)batch;
        int64_t bs = m->bstride;
        CUBLAS_TRY(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &bc, sizeof bc));
        CUBLAS_TRY(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &bs, sizeof bs));
    }
    return XDNN_OK;
}

static xdnn_status mm_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d)
{
    mm_priv *mp = calloc(1, sizeof *mp);
    if (!mp)
        return XDNN_ERR_NOMEM;
    pthread_mutex_init(&mp->mu, NULL);
    p->priv = mp;
    const ggraph *g = c->plan->g;
    char why[256];
    if (!gpu_matmul_analyze(c->plan, p, g->tf32, &mp->s, why, sizeof why)) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), "matmul_cublaslt: %s: %s", p->name, why);
        return XDNN_ERR_UNSUPPORTED;
    }
    mm_shape *s = &mp->s;
    xdnn_dtype ti = g->t[s->first].dtype, to = g->t[s->d_tensor].dtype;
    cublasComputeType_t ct = ti == XDNN_F32 && g->tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    CUBLAS_TRY(cublasLtMatmulDescCreate(&mp->op, ct, CUDA_R_32F));
    cublasOperation_t ta = s->a.trans ? CUBLAS_OP_T : CUBLAS_OP_N, tb = s->b.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
    CUBLAS_TRY(cublasLtMatmulDescSetAttribute(mp->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    CUBLAS_TRY(cublasLtMatmulDescSetAttribute(mp->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    if (s->lt_epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
        cublasLtEpilogue_t e = (cublasLtEpilogue_t)s->lt_epilogue;
        CUBLAS_TRY(cublasLtMatmulDescSetAttribute(mp->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof e));
        /* the bias pointer is set at execute: it is the caller's, per call */
    }
    xdnn_status st;
    if ((st = make_layout(&mp->la, ti, &s->a, s->batch, d)) != XDNN_OK ||
        (st = make_layout(&mp->lb, ti, &s->b, s->batch, d)) != XDNN_OK ||
        (st = make_layout(&mp->ld, to, &s->d, s->batch, d)) != XDNN_OK)
        return st;
    cublasLtMatmulPreference_t pref;
    CUBLAS_TRY(cublasLtMatmulPreferenceCreate(&pref));
    uint64_t wsz = MM_LT_WORKSPACE;
    /* knob algo=K: the K-th of cuBLASLt's heuristic ranking (default 0) */
    int want = 0;
    if (p->knobs && *p->knobs)
        sscanf(p->knobs, "algo=%d", &want);
    cublasLtMatmulHeuristicResult_t res[MM_ALGO_VARIANTS];
    int nres = 0;
    cublasStatus_t e1 = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsz,
                                                             sizeof wsz);
    cublasStatus_t e2 = e1 != CUBLAS_STATUS_SUCCESS ? e1
                      : cublasLtMatmulAlgoGetHeuristic(c->lt, mp->op, mp->la, mp->lb, mp->ld, mp->ld, pref, want + 1,
                                                       res, &nres);
    /* the same ranking for pointers only 16-byte aligned, which xdnn_plan_execute accepts and an outer-loop
     * batch's offset can give: an algorithm chosen for 256 may refuse them (mm_execute picks per call) */
    cublasLtMatmulHeuristicResult_t res16[MM_ALGO_VARIANTS];
    int nres16 = 0;
    const uint32_t al16 = XDNN_CUDA_ALIGNMENT;
    static const cublasLtMatmulPreferenceAttributes_t al_attr[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    bool set16 = e2 == CUBLAS_STATUS_SUCCESS;
    for (int i = 0; i < 4 && set16; i++)
        set16 = cublasLtMatmulPreferenceSetAttribute(pref, al_attr[i], &al16, sizeof al16) == CUBLAS_STATUS_SUCCESS;
    if (set16 && cublasLtMatmulAlgoGetHeuristic(c->lt, mp->op, mp->la, mp->lb, mp->ld, mp->ld, pref, want + 1, res16,
                                                &nres16) == CUBLAS_STATUS_SUCCESS && nres16 > 0) {
        mp->algo16 = res16[want < nres16 ? want : nres16 - 1].algo;
        mp->has16 = true;
    }
    cublasLtMatmulPreferenceDestroy(pref);
    CUBLAS_TRY(e2);
    if (nres < 1) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(),
                   "matmul_cublaslt: %s: cuBLASLt has no algorithm for m=%lld n=%lld k=%lld batch=%lld (%s -> %s)",
                   p->name, (long long)s->m, (long long)s->n, (long long)s->k, (long long)s->batch,
                   gg_dtype_name(ti), gg_dtype_name(to));
        return XDNN_ERR_UNSUPPORTED;
    }
    if (want >= nres) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(),
                   "matmul_cublaslt: %s: knob algo=%d: cuBLASLt offers only %d algorithm%s for this GEMM (algo=0..%d)",
                   p->name, want, nres, nres == 1 ? "" : "s", nres - 1);
        return XDNN_ERR_UNSUPPORTED;
    }
    mp->algo = res[want].algo;
    int algo_id = -1, tile = -1, splitk = -1, stages = -1;
    size_t w;
    cublasLtMatmulAlgoConfigGetAttribute(&mp->algo, CUBLASLT_ALGO_CONFIG_ID, &algo_id, sizeof algo_id, &w);
    cublasLtMatmulAlgoConfigGetAttribute(&mp->algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &w);
    cublasLtMatmulAlgoConfigGetAttribute(&mp->algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, &w);
    cublasLtMatmulAlgoConfigGetAttribute(&mp->algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &w);
    snprintf(mp->detail, sizeof mp->detail, "cublasLt algo=%d tile=%d stages=%d splitk=%d epilogue=%s%s%s", algo_id,
             tile, stages, splitk,
             s->lt_epilogue != CUBLASLT_EPILOGUE_DEFAULT ? "lt" : s->addend >= 0 ? "addend"
                                                           : s->need_kernel ? "kernel" : "none",
             ct == CUBLAS_COMPUTE_32F_FAST_TF32 ? " tf32" : "", s->batch > 1 || s->nouter ? " batched" : "");
    if (s->need_kernel) {
        char kname[64];
        snprintf(kname, sizeof kname, "xdnn_epi_p%d", p->id);
        st = cg_pointwise(g, s->epi_nodes, s->nepi, p->outs, p->nouts, arena_strdup(g->ar, kname), &mp->epik);
        if (st != XDNN_OK)
            return st;
        return gpu_nvrtc_get(&c->dev, mp->epik.src, mp->epik.name, &mp->epi, &c->cstats, d);
    }
    return XDNN_OK;
}

static xdnn_status mm_execute(gpu_ctx *c, gpart *p, cudaStream_t strm, xdnn_diags_t *d)
{
    mm_priv *mp = p->priv;
    mm_shape *s = &mp->s;
    const ggraph *g = c->plan->g;
    char *ws = c->ws + p->ws_offset;
    char *dbase = s->need_kernel ? ws + MM_LT_WORKSPACE : c->dptr[s->d_tensor];
    /* The generated epilogue reads C from scratch. */
    if (s->need_kernel)
        c->dptr[s->c_tensor] = dbase;
    size_t ea = gg_dtype_bytes(g->t[s->first].dtype), ed = gg_dtype_bytes(g->t[s->d_tensor].dtype);
    int64_t total = 1;
    for (int i = 0; i < s->nouter; i++)
        total *= s->outer_dims[i];
    const float alpha = 1.0f, beta = s->addend >= 0 ? 1.0f : 0.0f;
    /* The descriptor is plan state shared by every thread executing the plan;
     * its bias pointer is the caller's, so it is set and consumed (the
     * enqueue reads it) under the partition's lock. */
    bool locked = s->bias >= 0 && s->lt_epilogue != CUBLASLT_EPILOGUE_DEFAULT;
    if (locked) {
        pthread_mutex_lock(&mp->mu);
        const void *bp = c->dptr[s->bias];
        cublasStatus_t e = cublasLtMatmulDescSetAttribute(mp->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bp, sizeof bp);
        if (e != CUBLAS_STATUS_SUCCESS) {
            pthread_mutex_unlock(&mp->mu);
            return gpu_check_cublas(e, "cublasLtMatmulDescSetAttribute(BIAS_POINTER)", __FILE__, __LINE__, d);
        }
    }
    for (int64_t o = 0; o < total; o++) {
        int64_t r = o, off[3] = {0, 0, 0};
        for (int i = s->nouter - 1; i >= 0; i--) {
            int64_t ix = r % s->outer_dims[i];
            r /= s->outer_dims[i];
            for (int k = 0; k < 3; k++)
                off[k] += ix * s->outer_stride[k][i];
        }
        const char *pa = (const char *)c->dptr[s->first] + off[0] * (int64_t)ea;
        const char *pb = (const char *)c->dptr[s->second] + off[1] * (int64_t)ea;
        char *pd = dbase + off[2] * (int64_t)ed;
        const char *pc = s->addend >= 0 ? (const char *)c->dptr[s->addend] : pd; /* unbatched: no offset */
        const bool al256 = ((uintptr_t)pa | (uintptr_t)pb | (uintptr_t)pc | (uintptr_t)pd) % 256 == 0;
        const cublasLtMatmulAlgo_t *algo = al256 || !mp->has16 ? &mp->algo : &mp->algo16;
        cublasStatus_t e = cublasLtMatmul(c->lt, mp->op, &alpha, pa, mp->la, pb, mp->lb, &beta, pc, mp->ld, pd,
                                          mp->ld, algo, ws, MM_LT_WORKSPACE, strm);
        if (e != CUBLAS_STATUS_SUCCESS) {
            if (locked)
                pthread_mutex_unlock(&mp->mu);
            return gpu_check_cublas(e, "cublasLtMatmul", __FILE__, __LINE__, d);
        }
    }
    if (locked)
        pthread_mutex_unlock(&mp->mu);
    if (s->need_kernel)
        return gpu_launch_generated(c, &mp->epi, &mp->epik, CG_BLOCK, strm, d);
    return XDNN_OK;
}

void gpu_lt_destroy(cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                    cublasLtMatrixLayout_t c)
{
    if (a)
        cublasLtMatrixLayoutDestroy(a);
    if (b)
        cublasLtMatrixLayoutDestroy(b);
    if (c)
        cublasLtMatrixLayoutDestroy(c);
    if (op)
        cublasLtMatmulDescDestroy(op);
}

static void mm_release(gpart *p)
{
    mm_priv *mp = p->priv;
    if (!mp)
        return;
    gpu_lt_destroy(mp->op, mp->la, mp->lb, mp->ld);
    pthread_mutex_destroy(&mp->mu);
    free(mp);
    p->priv = NULL;
}

static const char *mm_detail(const gpart *p)
{
    const mm_priv *mp = p->priv;
    return mp ? mp->detail : "";
}

static bool mm_knobs_valid(const char *knobs, char *why, size_t len)
{
    int k = -1, used = 0;
    if (sscanf(knobs, "algo=%d%n", &k, &used) != 1 || knobs[used] != '\0' || k < 0 || k >= MM_ALGO_VARIANTS) {
        snprintf(why, len, "expected algo=K with K in 0..%d (the K-th of cuBLASLt's heuristic ranking)",
                 MM_ALGO_VARIANTS - 1);
        return false;
    }
    return true;
}

static int mm_knob_variants(const gplan *pl, const gpart *p, const gpu_device *dev, char (*out)[GPU_KNOB_LEN],
                            int max)
{
    int n = 0;
    for (int k = 0; k < MM_ALGO_VARIANTS && n < max; k++)
        snprintf(out[n++], GPU_KNOB_LEN, "algo=%d", k);
    return n;
}

const gpu_engine gpu_engine_matmul_cublaslt = {
    "matmul_cublaslt", "cuBLASLt GEMM (f32/tf32/f16/bf16, batched, bias/relu/gelu epilogues or a generated one)",
    mm_supports, mm_cost, mm_workspace, mm_build, mm_execute, mm_release, mm_detail,
};
const gpu_knobs gpu_knobs_matmul_cublaslt = {&gpu_engine_matmul_cublaslt, mm_knob_variants, mm_knobs_valid};
