/* matmul.c — batched matrix product c = matmul(a, b) (cuDNN MATMUL A,B->C).
 *
 * Logical layouts: a [..., M, K], b [..., K, N], c [..., M, N].  trans_a says
 * a is given as [..., K, M] (and trans_b: b as [..., N, K]); in a graph these
 * become stride swaps, here they only change how a and b are indexed.
 * The leading dims are batch dims and broadcast NumPy style (right-aligned,
 * size-1 dims stretch, the shorter rank is padded with 1s).
 *
 * Rank-1 operands are rejected rather than promoted as NumPy does: a silent
 * [K] -> [1, K] would change the output rank behind the user's back, and
 * cuDNN's MATMUL wants matrices.  The message says how to reshape.
 */
#include "op.h"

#include <inttypes.h>
#include <stdio.h>

extern const op_desc op_matmul_desc; /* defined at the end; flops reads its attrs */

static const char *const matmul_ports[] = {"a", "b"};
static const char *const matmul_results[] = {"c"};

static const attr_spec matmul_attrs[] = {
    {"trans_a", AT_BOOL, "false", NULL, "a is given as [..., K, M]"},
    {"trans_b", AT_BOOL, "false", NULL, "b is given as [..., N, K]"},
};

/* The matrix dims of one operand after its transpose flag: rows x cols. */
static void matrix_dims(const int64_t *dims, int rank, bool trans, int64_t *rows, int64_t *cols)
{
    *rows = trans ? dims[rank - 1] : dims[rank - 2];
    *cols = trans ? dims[rank - 2] : dims[rank - 1];
}

static xdnn_status matmul_infer(op_infer_ctx *c)
{
    const tinfo *a = c->in[0], *b = c->in[1];
    bool ta = op_attr_bool(c->node, c->desc, "trans_a"), tb = op_attr_bool(c->node, c->desc, "trans_b");
    char as[256], bs[256];
    shape_str(as, sizeof as, a->rank, a->dims);
    shape_str(bs, sizeof bs, b->rank, b->dims);
    const tinfo *ops[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        if (ops[i]->rank < 2)
            return op_error(c, "%s must have rank >= 2 (%s), got rank %d: %s is %s; reshape a vector to %s",
                            i ? "b" : "a", i ? "[..., K, N]" : "[..., M, K]", ops[i]->rank, i ? "b" : "a",
                            i ? bs : as, i ? "[K, 1]" : "[1, K]");
    }
    int64_t M, Ka, Kb, N;
    matrix_dims(a->dims, a->rank, ta, &M, &Ka);
    matrix_dims(b->dims, b->rank, tb, &Kb, &N);
    if (Ka != Kb) {
        char hint[128] = "";
        if (N == Ka)
            snprintf(hint, sizeof hint, "; with trans_b=%s, b would fit", tb ? "false" : "true");
        else if (M == Kb)
            snprintf(hint, sizeof hint, "; with trans_a=%s, a would fit", ta ? "false" : "true");
        return op_error(c,
                        "inner dimensions do not match: a %s has K = %" PRId64 " (trans_a=%s) but b %s has K = %" PRId64
                        " (trans_b=%s)%s",
                        as, Ka, ta ? "true" : "false", bs, Kb, tb ? "true" : "false", hint);
    }
    tinfo abatch = {.rank = a->rank - 2}, bbatch = {.rank = b->rank - 2}, cbatch;
    for (int i = 0; i < abatch.rank; i++)
        abatch.dims[i] = a->dims[i];
    for (int i = 0; i < bbatch.rank; i++)
        bbatch.dims[i] = b->dims[i];
    const tinfo *batches[2] = {&abatch, &bbatch};
    if (!shape_broadcast(batches, 2, &cbatch))
        return op_error(c, "batch dims do not broadcast: a is %s, b is %s (all but the last two dims must be equal or 1)",
                        as, bs);
    tinfo *out = &c->out[0];
    out->rank = cbatch.rank + 2;
    for (int i = 0; i < cbatch.rank; i++)
        out->dims[i] = cbatch.dims[i];
    out->dims[cbatch.rank] = M;
    out->dims[cbatch.rank + 1] = N;
    out->dtype = a->dtype;
    return XDNN_OK;
}

/* Index of the matrix of t that output batch `bi` reads (NumPy broadcast). */
static int64_t batch_matrix(const ref_tensor *t, int nb, const int64_t *bdims, int64_t bi)
{
    int64_t idx[XDNN_MAX_RANK];
    for (int d = nb - 1; d >= 0; d--) {
        idx[d] = bi % bdims[d];
        bi /= bdims[d];
    }
    int64_t m = 0;
    int tb = t->rank - 2;
    for (int d = 0; d < tb; d++) {
        int od = nb - tb + d;
        m = m * t->dims[d] + (t->dims[d] == 1 ? 0 : idx[od]);
    }
    return m;
}

/* c[b..., m, n] = sum_k A[b..., m, k] * B[b..., k, n]
 * where A = a, or a with its last two dims swapped when trans_a (B likewise),
 * and a/b's batch indices broadcast from c's. */
static xdnn_status matmul_reference(op_ref_ctx *c)
{
    const ref_tensor *a = c->in[0], *b = c->in[1];
    ref_tensor *out = c->out[0];
    bool ta = op_attr_bool(c->node, c->desc, "trans_a"), tb = op_attr_bool(c->node, c->desc, "trans_b");
    int64_t M, K, K2, N;
    matrix_dims(a->dims, a->rank, ta, &M, &K);
    matrix_dims(b->dims, b->rank, tb, &K2, &N);
    const int nb = out->rank - 2;
    const int64_t nbatch = shape_numel(nb, out->dims);
    const int64_t a_cols = a->dims[a->rank - 1], b_cols = b->dims[b->rank - 1];

#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t bi = 0; bi < nbatch; bi++) {
        for (int64_t m = 0; m < M; m++) {
            const double *am = a->data + batch_matrix(a, nb, out->dims, bi) * M * K;
            const double *bm = b->data + batch_matrix(b, nb, out->dims, bi) * K * N;
            for (int64_t n = 0; n < N; n++) {
                double acc = 0;
                for (int64_t k = 0; k < K; k++) {
                    double av = ta ? am[k * a_cols + m] : am[m * a_cols + k];
                    double bv = tb ? bm[n * b_cols + k] : bm[k * b_cols + n];
                    acc += av * bv;
                }
                out->data[(bi * M + m) * N + n] = acc;
            }
        }
    }
    return XDNN_OK;
}

/* 2 * numel(c) * K: one multiply and one add per term. */
static double matmul_flops(const xgraph *g, const xnode *n)
{
    const xtensor *a = &g->tensors[n->inputs[0].tensor];
    const xtensor *c = &g->tensors[n->results[0]];
    bool ta = op_attr_bool(n, &op_matmul_desc, "trans_a");
    int64_t K = ta ? a->rdims[a->rrank - 2] : a->rdims[a->rrank - 1];
    return 2.0 * (double)c->rnumel * (double)K;
}

const op_desc op_matmul_desc = {
    .name = "matmul",
    .summary = "batched matrix product of a [..., M, K] and b [..., K, N]; batch dims broadcast",
    .ports = matmul_ports,
    .nports = 2,
    .nrequired = 2,
    .results = matmul_results,
    .nresults = 1,
    .attrs = matmul_attrs,
    .nattrs = (int)(sizeof matmul_attrs / sizeof matmul_attrs[0]),
    .infer = matmul_infer,
    .reference = matmul_reference,
    .flops = matmul_flops,
};
