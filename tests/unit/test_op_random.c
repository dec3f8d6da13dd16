/* test_op_random.c — dropout and rng: same key -> same mask, the keep rate and
 * the expectation on 1e5 elements, the documented key and stream (so the GPU
 * can reproduce them), sample statistics of rng, and inference errors. */
#include "op_test_util.h"
#include "test_util.h"

#include "data/data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const op_desc op_dropout_desc, op_rng_desc;

enum { BIG = 100000 };

/* Run dropout (or rng) on x with graph seed `graph_seed`; out gets nout results. */
static xdnn_status run(const op_desc *d, const xnode *n, const ref_tensor *x, int nout, ref_tensor *out,
                       uint64_t graph_seed)
{
    tinfo ti = x ? optest_tinfo(XDNN_F32, x->rank, x->dims) : (tinfo){0};
    const tinfo *tin[] = {x ? &ti : NULL};
    tinfo to[2];
    xdnn_status st = optest_infer(d, n, x ? 1 : 0, tin, nout, to, NULL);
    if (st != XDNN_OK)
        return st;
    op_ref_ctx c = {.desc = d, .node = n, .nin = x ? 1 : 0, .nresults = nout, .seed = graph_seed};
    c.in[0] = x;
    for (int i = 0; i < nout; i++) {
        out[i] = optest_ref_alloc(to[i].rank, to[i].dims);
        out[i].dtype = to[i].dtype;
        c.out[i] = &out[i];
    }
    return d->reference(&c);
}

static void test_dropout(arena *a)
{
    xnode n;
    optest_node(a, &n, &op_dropout_desc);
    ref_tensor x = optest_ref_alloc(1, (int64_t[]){BIG});
    for (int i = 0; i < BIG; i++)
        x.data[i] = 1.0;
    ref_tensor r1[2], r2[2], r3[2];

    /* p = 0.3, explicit seed: the key is the seed itself, stream 1 */
    optest_set_float(&n, &op_dropout_desc, "p", 0.3);
    optest_set_int(&n, &op_dropout_desc, "seed", 1234);
    CHECK(run(&op_dropout_desc, &n, &x, 2, r1, 0) == XDNN_OK);
    CHECK(r1[1].dtype == XDNN_BOOL);
    CHECK(run(&op_dropout_desc, &n, &x, 2, r2, 99) == XDNN_OK); /* explicit seed ignores the graph seed */
    int64_t kept = 0, same = 0, documented = 0, consistent = 0;
    double sum = 0;
    for (int i = 0; i < BIG; i++) {
        kept += r1[1].data[i] == 1.0;
        same += r1[1].data[i] == r2[1].data[i] && r1[0].data[i] == r2[0].data[i];
        documented += (rng_uniform01(1234, 1, (uint64_t)i) >= 0.3) == (r1[1].data[i] == 1.0);
        consistent += r1[1].data[i] == 1.0 ? r1[0].data[i] == 1.0 / 0.7 : r1[0].data[i] == 0.0;
        sum += r1[0].data[i];
    }
    CHECK(same == BIG);
    CHECK(documented == BIG);
    CHECK(consistent == BIG);
    /* keep rate 0.7: sd = sqrt(0.3 * 0.7 / 1e5) = 0.00145; allow 5 sd */
    CHECK_NEAR((double)kept / BIG, 0.7, 0.0073);
    CHECK_NEAR(sum / BIG, 1.0, 0.0073 / 0.7); /* E[y] = x */

    /* another seed gives another mask */
    optest_set_int(&n, &op_dropout_desc, "seed", 1235);
    CHECK(run(&op_dropout_desc, &n, &x, 1, r3, 0) == XDNN_OK);
    int64_t diff = 0;
    for (int i = 0; i < BIG; i++)
        diff += (r3[0].data[i] != 0) != (r1[1].data[i] == 1.0);
    CHECK(diff > BIG / 4); /* independent masks disagree on 2 * 0.3 * 0.7 = 42% */
    optest_ref_free(&r3[0]);

    /* auto key: fnv1a64(graph seed, node name); the graph seed changes it */
    optest_unset(&n, &op_dropout_desc, "seed");
    n.name = "h.drop";
    CHECK(run(&op_dropout_desc, &n, &x, 2, r3, 7) == XDNN_OK);
    uint64_t key = rng_tensor_seed(7, "h.drop");
    documented = 0;
    for (int i = 0; i < BIG; i++)
        documented += (rng_uniform01(key, 1, (uint64_t)i) >= 0.3) == (r3[1].data[i] == 1.0);
    CHECK(documented == BIG);
    ref_tensor r4[1];
    CHECK(run(&op_dropout_desc, &n, &x, 1, r4, 8) == XDNN_OK);
    diff = 0;
    for (int i = 0; i < BIG; i++)
        diff += (r4[0].data[i] != 0) != (r3[1].data[i] == 1.0);
    CHECK(diff > BIG / 4);
    optest_ref_free(&r4[0]);

    /* p = 0 keeps everything unchanged; p = 1 drops everything */
    optest_set_float(&n, &op_dropout_desc, "p", 0.0);
    CHECK(run(&op_dropout_desc, &n, &x, 1, r4, 7) == XDNN_OK);
    int64_t ones = 0;
    for (int i = 0; i < BIG; i++)
        ones += r4[0].data[i] == 1.0;
    CHECK(ones == BIG);
    optest_ref_free(&r4[0]);
    optest_set_float(&n, &op_dropout_desc, "p", 1.0);
    CHECK(run(&op_dropout_desc, &n, &x, 1, r4, 7) == XDNN_OK);
    int64_t zeros = 0;
    for (int i = 0; i < BIG; i++)
        zeros += r4[0].data[i] == 0.0;
    CHECK(zeros == BIG);
    optest_ref_free(&r4[0]);

    /* errors */
    optest_set_float(&n, &op_dropout_desc, "p", 1.5);
    xdnn_diags_t *d = xdnn_diags_create();
    tinfo t = optest_tinfo(XDNN_F32, 1, (int64_t[]){4}), out[2];
    CHECK(optest_infer(&op_dropout_desc, &n, 1, (const tinfo *[]){&t}, 1, out, d) == XDNN_ERR_SEMANTIC);
    CHECK(strcmp(optest_first_error(d), "dropout: attribute 'p' (drop probability) must be in [0, 1], got 1.5") == 0);
    xdnn_diags_destroy(d);

    for (int i = 0; i < 2; i++) {
        optest_ref_free(&r1[i]);
        optest_ref_free(&r2[i]);
        optest_ref_free(&r3[i]);
    }
    optest_ref_free(&x);
}

static void test_rng(arena *a)
{
    xnode n;
    optest_node(a, &n, &op_rng_desc);
    ref_tensor y[1];
    optest_set_ints(&n, &op_rng_desc, "shape", 2, (int64_t[]){400, 250});
    optest_set_float(&n, &op_rng_desc, "lo", 2.0);
    optest_set_float(&n, &op_rng_desc, "hi", 5.0);
    optest_set_int(&n, &op_rng_desc, "seed", 42);
    CHECK(run(&op_rng_desc, &n, NULL, 1, y, 0) == XDNN_OK);
    CHECK(y[0].rank == 2 && y[0].dims[0] == 400 && y[0].dims[1] == 250 && y[0].dtype == XDNN_F32);
    int64_t exact = 0, in_range = 0;
    double mean = 0;
    for (int i = 0; i < BIG; i++) {
        exact += y[0].data[i] == 2.0 + 3.0 * rng_uniform01(42, 0, (uint64_t)i); /* = uniform(2, 5, seed=42) */
        in_range += y[0].data[i] >= 2.0 && y[0].data[i] < 5.0;
        mean += y[0].data[i] / BIG;
    }
    CHECK(exact == BIG);
    CHECK(in_range == BIG);
    CHECK_NEAR(mean, 3.5, 5 * 3 / sqrt(12.0 * BIG));
    optest_ref_free(&y[0]);

    optest_set_str(&n, &op_rng_desc, "dist", "normal");
    optest_set_float(&n, &op_rng_desc, "mean", -1.0);
    optest_set_float(&n, &op_rng_desc, "std", 0.5);
    optest_unset(&n, &op_rng_desc, "seed");
    optest_set_value(&n, &op_rng_desc, "dtype", &(value){.kind = VAL_DTYPE, .dt = XDNN_BF16});
    n.name = "noise";
    CHECK(run(&op_rng_desc, &n, NULL, 1, y, 3) == XDNN_OK);
    CHECK(y[0].dtype == XDNN_BF16);
    uint64_t key = rng_tensor_seed(3, "noise");
    double m = 0, v = 0;
    exact = 0;
    for (int i = 0; i < BIG; i++) {
        exact += y[0].data[i] == -1.0 + 0.5 * rng_normal(key, 0, (uint64_t)i);
        m += y[0].data[i] / BIG;
    }
    for (int i = 0; i < BIG; i++)
        v += (y[0].data[i] - m) * (y[0].data[i] - m) / (BIG - 1);
    CHECK(exact == BIG);
    CHECK_NEAR(m, -1.0, 5 * 0.5 / sqrt((double)BIG));
    CHECK_NEAR(sqrt(v), 0.5, 0.01);
    optest_ref_free(&y[0]);

    xdnn_diags_t *d = xdnn_diags_create();
    tinfo out[1];
    optest_set_ints(&n, &op_rng_desc, "shape", 2, (int64_t[]){3, 0});
    CHECK(optest_infer(&op_rng_desc, &n, 0, NULL, 1, out, d) == XDNN_ERR_SEMANTIC);
    CHECK(strcmp(optest_first_error(d), "rng: attribute 'shape' [3, 0] must hold sizes >= 1") == 0);
    xdnn_diags_destroy(d);
}

int main(void)
{
    arena *a = arena_create();
    test_dropout(a);
    test_rng(a);
    arena_destroy(a);
    return test_summary("test_op_random");
}
