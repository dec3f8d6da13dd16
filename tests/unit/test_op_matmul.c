/* test_op_matmul.c — matmul: a hand-computed product under every transpose
 * combination, batched and broadcast batches against a direct sum, and the
 * inference errors with their exact messages (including the trans hint). */
#include "op_test_util.h"
#include "test_util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

extern const op_desc op_matmul_desc;
static const op_desc *const MM = &op_matmul_desc;

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;

/* vals, or random values in [-1, 1) when vals is NULL. */
static ref_tensor tensor_of(int rank, const int64_t *dims, const double *vals)
{
    return optest_ref_of(rank, dims, vals, &rng_state);
}

/* matmul(a, b) with the given flags; compares with want (NULL: skip). */
static ref_tensor run_mm(arena *ar, const ref_tensor *a, const ref_tensor *b, bool ta, bool tb, int rank,
                         const int64_t *want_dims, const double *want, const char *what)
{
    xnode n;
    optest_node(ar, &n, MM);
    optest_set_bool(&n, MM, "trans_a", ta);
    optest_set_bool(&n, MM, "trans_b", tb);
    xdnn_diags_t *dg = xdnn_diags_create();
    const ref_tensor *in[2] = {a, b};
    ref_tensor c;
    xdnn_status st = optest_run(MM, &n, 2, in, 1, &c, dg);
    CHECK(st == XDNN_OK, "%s: %s", what, optest_first_error(dg));
    xdnn_diags_destroy(dg);
    if (st != XDNN_OK)
        return c;
    char got[128], exp[128];
    bool shape_ok = c.rank == rank && memcmp(c.dims, want_dims, sizeof(int64_t) * (size_t)rank) == 0;
    CHECK(shape_ok, "%s: shape %s, want %s", what, shape_str(got, sizeof got, c.rank, c.dims),
          shape_str(exp, sizeof exp, rank, want_dims));
    if (want && shape_ok)
        for (int64_t i = 0; i < c.numel; i++)
            CHECK(fabs(c.data[i] - want[i]) < 1e-12, "%s: element %" PRId64 " = %g, want %g", what, i, c.data[i],
                  want[i]);
    return c;
}

static void test_known(arena *ar)
{
    /* [[1,2,3],[4,5,6]] x [[7,8],[9,10],[11,12]] = [[58,64],[139,154]] */
    const double av[] = {1, 2, 3, 4, 5, 6}, at[] = {1, 4, 2, 5, 3, 6};
    const double bv[] = {7, 8, 9, 10, 11, 12}, bt[] = {7, 9, 11, 8, 10, 12};
    const double want[] = {58, 64, 139, 154};
    ref_tensor a = tensor_of(2, (int64_t[]){2, 3}, av), aT = tensor_of(2, (int64_t[]){3, 2}, at);
    ref_tensor b = tensor_of(2, (int64_t[]){3, 2}, bv), bT = tensor_of(2, (int64_t[]){2, 3}, bt);
    const int64_t d22[] = {2, 2};
    ref_tensor c = run_mm(ar, &a, &b, false, false, 2, d22, want, "plain");
    optest_ref_free(&c);
    c = run_mm(ar, &aT, &b, true, false, 2, d22, want, "trans_a");
    optest_ref_free(&c);
    c = run_mm(ar, &a, &bT, false, true, 2, d22, want, "trans_b");
    optest_ref_free(&c);
    c = run_mm(ar, &aT, &bT, true, true, 2, d22, want, "trans_a trans_b");
    optest_ref_free(&c);
    /* b x a = [[39,54,69],[49,68,87],[59,82,105]] */
    c = run_mm(ar, &b, &a, false, false, 2, (int64_t[]){3, 3}, (double[]){39, 54, 69, 49, 68, 87, 59, 82, 105},
               "b x a");
    optest_ref_free(&c);

    /* batch of 2 against a rank-2 b: the second batch is 2a */
    const double a2[] = {1, 2, 3, 4, 5, 6, 2, 4, 6, 8, 10, 12};
    ref_tensor ab = tensor_of(3, (int64_t[]){2, 2, 3}, a2);
    c = run_mm(ar, &ab, &b, false, false, 3, (int64_t[]){2, 2, 2}, (double[]){58, 64, 139, 154, 116, 128, 278, 308},
               "batched a, broadcast b");
    optest_ref_free(&c);
    optest_ref_free(&ab);
    optest_ref_free(&a);
    optest_ref_free(&aT);
    optest_ref_free(&b);
    optest_ref_free(&bT);
}

/* a [2, 1, M, K] (trans: [2, 1, K, M]) x b [3, K, N] (trans: [3, N, K]) -> [2, 3, M, N]
 * against c[i, j, m, n] = sum_k A[i, 0, m, k] B[j, k, n]. */
static void test_broadcast(arena *ar)
{
    const int64_t M = 4, K = 5, N = 3;
    for (int t = 0; t < 4; t++) {
        bool ta = t & 1, tb = t & 2;
        ref_tensor a = tensor_of(4, ta ? (int64_t[]){2, 1, K, M} : (int64_t[]){2, 1, M, K}, NULL);
        ref_tensor b = tensor_of(3, tb ? (int64_t[]){3, N, K} : (int64_t[]){3, K, N}, NULL);
        char what[64];
        snprintf(what, sizeof what, "broadcast trans_a=%d trans_b=%d", ta, tb);
        ref_tensor c = run_mm(ar, &a, &b, ta, tb, 4, (int64_t[]){2, 3, M, N}, NULL, what);
        double maxerr = c.data ? 0 : INFINITY;
        for (int64_t i = 0; c.data && i < 2; i++)
            for (int64_t j = 0; j < 3; j++)
                for (int64_t m = 0; m < M; m++)
                    for (int64_t n = 0; n < N; n++) {
                        double s = 0;
                        for (int64_t k = 0; k < K; k++) {
                            double av = ta ? a.data[i * K * M + k * M + m] : a.data[i * M * K + m * K + k];
                            double bv = tb ? b.data[j * N * K + n * K + k] : b.data[j * K * N + k * N + n];
                            s += av * bv;
                        }
                        maxerr = fmax(maxerr, fabs(s - c.data[((i * 3 + j) * M + m) * N + n]));
                    }
        CHECK(maxerr < 1e-12, "%s: max error %g", what, maxerr);
        optest_ref_free(&a);
        optest_ref_free(&b);
        optest_ref_free(&c);
    }

    /* size-1 batch of b stretches over a's batch of 3: c[i] = a[i] x b[0] */
    ref_tensor a = tensor_of(3, (int64_t[]){3, 2, 4}, NULL), b = tensor_of(3, (int64_t[]){1, 4, 2}, NULL);
    ref_tensor c = run_mm(ar, &a, &b, false, false, 3, (int64_t[]){3, 2, 2}, NULL, "size-1 batch");
    double maxerr = c.data ? 0 : INFINITY;
    for (int64_t i = 0; c.data && i < 3; i++)
        for (int64_t m = 0; m < 2; m++)
            for (int64_t n = 0; n < 2; n++) {
                double s = 0;
                for (int64_t k = 0; k < 4; k++)
                    s += a.data[(i * 2 + m) * 4 + k] * b.data[k * 2 + n];
                maxerr = fmax(maxerr, fabs(s - c.data[(i * 2 + m) * 2 + n]));
            }
    CHECK(maxerr < 1e-12, "size-1 batch: max error %g", maxerr);
    optest_ref_free(&a);
    optest_ref_free(&b);
    optest_ref_free(&c);
}

static void expect_error(arena *ar, bool ta, bool tb, int ra, const int64_t *a, int rb, const int64_t *b,
                         const char *msg)
{
    xnode n;
    optest_node(ar, &n, MM);
    optest_set_bool(&n, MM, "trans_a", ta);
    optest_set_bool(&n, MM, "trans_b", tb);
    tinfo ta_ = optest_tinfo(XDNN_F32, ra, a), tb_ = optest_tinfo(XDNN_F32, rb, b);
    const tinfo *in[2] = {&ta_, &tb_};
    optest_expect_infer_error(MM, &n, 2, in, 1, msg);
}

static void test_errors(arena *ar)
{
    expect_error(ar, false, false, 1, (int64_t[]){64}, 2, (int64_t[]){64, 8},
                 "matmul: a must have rank >= 2 ([..., M, K]), got rank 1: a is [64]; reshape a vector to [1, K]");
    expect_error(ar, false, false, 2, (int64_t[]){8, 64}, 1, (int64_t[]){64},
                 "matmul: b must have rank >= 2 ([..., K, N]), got rank 1: b is [64]; reshape a vector to [K, 1]");
    expect_error(ar, false, false, 3, (int64_t[]){8, 128, 64}, 2, (int64_t[]){256, 64},
                 "matmul: inner dimensions do not match: a [8, 128, 64] has K = 64 (trans_a=false) but b [256, 64] "
                 "has K = 256 (trans_b=false); with trans_b=true, b would fit");
    expect_error(ar, false, true, 2, (int64_t[]){2, 3}, 2, (int64_t[]){3, 4},
                 "matmul: inner dimensions do not match: a [2, 3] has K = 3 (trans_a=false) but b [3, 4] has K = 4 "
                 "(trans_b=true); with trans_b=false, b would fit");
    expect_error(ar, false, false, 2, (int64_t[]){3, 2}, 2, (int64_t[]){3, 4},
                 "matmul: inner dimensions do not match: a [3, 2] has K = 2 (trans_a=false) but b [3, 4] has K = 3 "
                 "(trans_b=false); with trans_a=true, a would fit");
    expect_error(ar, false, false, 2, (int64_t[]){2, 3}, 2, (int64_t[]){5, 4},
                 "matmul: inner dimensions do not match: a [2, 3] has K = 3 (trans_a=false) but b [5, 4] has K = 5 "
                 "(trans_b=false)");
    expect_error(ar, false, false, 3, (int64_t[]){2, 2, 3}, 3, (int64_t[]){3, 3, 2},
                 "matmul: batch dims do not broadcast: a is [2, 2, 3], b is [3, 3, 2] (all but the last two dims "
                 "must be equal or 1)");
}

static void test_infer_and_flops(arena *ar)
{
    xnode n;
    optest_node(ar, &n, MM);
    CHECK(!op_attr_bool(&n, MM, "trans_a") && !op_attr_bool(&n, MM, "trans_b") &&
              op_attr(&n, MM, "trans_a")->kind == VAL_BOOL,
          "defaults trans_a=false, trans_b=false");
    optest_set_bool(&n, MM, "trans_a", true);
    tinfo a = optest_tinfo(XDNN_BF16, 3, (int64_t[]){4, 64, 32}), b = optest_tinfo(XDNN_F32, 4, (int64_t[]){2, 1, 64, 16});
    const tinfo *in[2] = {&a, &b};
    tinfo c;
    xdnn_diags_t *dg = xdnn_diags_create();
    CHECK(optest_infer(MM, &n, 2, in, 1, &c, dg) == XDNN_OK, "infer: %s", optest_first_error(dg));
    CHECK(c.rank == 4 && c.dims[0] == 2 && c.dims[1] == 4 && c.dims[2] == 32 && c.dims[3] == 16 &&
              c.dtype == XDNN_BF16,
          "infer: rank %d [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "]", c.rank, c.dims[0], c.dims[1],
          c.dims[2], c.dims[3]);
    xdnn_diags_destroy(dg);

    /* flops = 2 * numel(c) * K, K = 64 (a is [.., K, M] with trans_a); c is [2, 4, 32, 16] */
    double f = optest_flops(MM, &n, 2, (tinfo[]){a, b}, 1, &c);
    CHECK(f == 2.0 * 2 * 4 * 32 * 16 * 64, "flops %g", f);
}

int main(void)
{
    arena *ar = arena_create();
    test_known(ar);
    test_broadcast(ar);
    test_errors(ar);
    test_infer_and_flops(ar);
    arena_destroy(ar);
    if (test_failures())
        fprintf(stderr, "test_op_matmul: rng seed 0x2545F4914F6CDD1D\n");
    return test_summary("test_op_matmul");
}
