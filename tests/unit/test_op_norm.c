/* test_op_norm.c — known answers for the normalization ops (batch, layer,
 * rms, group, instance norm): hand-computed tiny cases, statistics of the
 * output, the running-statistics update, every backward op against central
 * finite differences of its forward (in double), and exact error messages. */
#include "op_test_util.h"
#include "test_util.h"

#include "data/data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define X(id) extern const op_desc op_##id##_desc;
X(batchnorm) X(batchnorm_infer) X(batchnorm_bwd) X(layernorm) X(layernorm_bwd) X(rmsnorm) X(rmsnorm_bwd)
X(groupnorm) X(groupnorm_bwd) X(instancenorm) X(instancenorm_bwd)
#undef X

/* A packed tensor of dims holding vals (or deterministic pseudo-random values
 * in [-1, 1) when vals is NULL, drawn from Philox with `seed`). */
static ref_tensor make(int rank, const int64_t *dims, const double *vals, uint64_t seed)
{
    ref_tensor t = optest_ref_alloc(rank, dims);
    for (int64_t i = 0; i < t.numel; i++)
        t.data[i] = vals ? vals[i] : -1.0 + 2.0 * rng_uniform01(seed, 7, (uint64_t)i);
    return t;
}

static void free_all(ref_tensor *t, int n)
{
    for (int i = 0; i < n; i++)
        optest_ref_free(&t[i]);
}

/* ---- finite differences */

/* L = sum(w * y) with y = result 0 of d's forward (nout targets). */
static double fd_loss(const op_desc *d, const xnode *n, int nin, const ref_tensor *const *in, int nout,
                      const double *w)
{
    ref_tensor out[OP_MAX_RESULTS];
    xdnn_diags_t *diags = xdnn_diags_create();
    xdnn_status st = optest_run(d, n, nin, in, nout, out, diags);
    CHECK(st == XDNN_OK, "%s forward failed: %s", d->name, optest_first_error(diags));
    double L = 0;
    for (int64_t i = 0; st == XDNN_OK && i < out[0].numel; i++)
        L += w[i] * out[0].data[i];
    free_all(out, nout);
    xdnn_diags_destroy(diags);
    return L;
}

/* Central differences of L with respect to each element of *target (one of
 * the tensors in `in`), h = 1e-6. */
static void fd_grad(const op_desc *d, const xnode *n, int nin, const ref_tensor *const *in, int nout, const double *w,
                    ref_tensor *target, double *grad)
{
    const double h = 1e-6;
    for (int64_t e = 0; e < target->numel; e++) {
        double v = target->data[e];
        target->data[e] = v + h;
        double lp = fd_loss(d, n, nin, in, nout, w);
        target->data[e] = v - h;
        double lm = fd_loss(d, n, nin, in, nout, w);
        target->data[e] = v;
        grad[e] = (lp - lm) / (2 * h);
    }
}

/* |analytic - numeric| <= 1e-6 * (1 + max |numeric|) element by element. */
static void check_grad(const char *what, const ref_tensor *analytic, const double *numeric)
{
    double scale = 1, worst = 0;
    for (int64_t i = 0; i < analytic->numel; i++)
        scale = fmax(scale, fabs(numeric[i]));
    for (int64_t i = 0; i < analytic->numel; i++)
        worst = fmax(worst, fabs(analytic->data[i] - numeric[i]));
    CHECK(worst <= 1e-6 * scale, "%s: analytic vs finite-difference gradient differ by %g (scale %g)", what, worst,
          scale);
    bool nonzero = false;
    for (int64_t i = 0; i < analytic->numel; i++)
        nonzero = nonzero || fabs(numeric[i]) > 1e-3;
    /* a gradient check that compares zeros compares nothing */
    CHECK(nonzero, "%s: numeric gradient is all zero", what);
}

/* ---- layernorm */

static void test_layernorm_known(arena *a)
{
    xnode n;
    optest_node(a, &n, &op_layernorm_desc);
    optest_set_float(&n, &op_layernorm_desc, "eps", 0.0);
    int64_t xd[] = {2, 4}, pd[] = {4};
    ref_tensor x = make(2, xd, (double[]){1, 2, 3, 4, -2, 0, 2, 4}, 0);
    ref_tensor scale = make(1, pd, (double[]){1, 2, 1, 1}, 0), bias = make(1, pd, (double[]){0, 0, 0, 10}, 0);
    const ref_tensor *in[] = {&x, &scale, &bias};
    ref_tensor out[3];
    CHECK(optest_run(&op_layernorm_desc, &n, 3, in, 3, out, NULL) == XDNN_OK);
    /* row 0: mean 2.5, var 1.25; row 1: mean 1, var 5 */
    double s0 = 1 / sqrt(1.25), s1 = 1 / sqrt(5.0);
    double want[] = {-1.5 * s0, -0.5 * s0 * 2, 0.5 * s0, 1.5 * s0 + 10, -3 * s1, -1 * s1 * 2, 1 * s1, 3 * s1 + 10};
    for (int i = 0; i < 8; i++)
        CHECK_NEAR(out[0].data[i], want[i], 1e-12);
    CHECK(out[1].rank == 2 && out[1].dims[0] == 2 && out[1].dims[1] == 1 && out[1].dtype == XDNN_F32);
    CHECK_NEAR(out[1].data[0], 2.5, 1e-15);
    CHECK_NEAR(out[1].data[1], 1.0, 1e-15);
    CHECK_NEAR(out[2].data[0], s0, 1e-15);
    CHECK_NEAR(out[2].data[1], s1, 1e-15);
    free_all(out, 3);

    /* 1 target (inference) gives the same y and nothing else. */
    ref_tensor y1;
    CHECK(optest_run(&op_layernorm_desc, &n, 3, in, 1, &y1, NULL) == XDNN_OK);
    CHECK_NEAR(y1.data[3], want[3], 1e-12);
    optest_ref_free(&y1);
    free_all((ref_tensor[]){x, scale, bias}, 3);
}

/* Each row of the output has mean 0 and variance 1 (scale 1, bias 0, eps 0),
 * here normalizing the last two axes of [3, 4, 5] with scale shaped [1, 4, 5]. */
static void test_layernorm_stats(arena *a)
{
    xnode n;
    optest_node(a, &n, &op_layernorm_desc);
    optest_set_float(&n, &op_layernorm_desc, "eps", 0.0);
    optest_set_ints(&n, &op_layernorm_desc, "axes", 2, (int64_t[]){-1, -2});
    int64_t xd[] = {3, 4, 5}, pd[] = {1, 4, 5};
    ref_tensor x = make(3, xd, NULL, 1), scale = make(3, pd, NULL, 0), bias = make(3, pd, NULL, 0);
    for (int i = 0; i < 20; i++)
        scale.data[i] = 1, bias.data[i] = 0;
    for (int i = 0; i < 20; i++)
        x.data[i] = 100 + 3 * x.data[i]; /* a large offset must not matter */
    const ref_tensor *in[] = {&x, &scale, &bias};
    ref_tensor out[3];
    CHECK(optest_run(&op_layernorm_desc, &n, 3, in, 3, out, NULL) == XDNN_OK);
    CHECK(out[1].rank == 3 && out[1].dims[0] == 3 && out[1].dims[1] == 1 && out[1].dims[2] == 1);
    for (int r = 0; r < 3; r++) {
        double m = 0, v = 0;
        for (int j = 0; j < 20; j++)
            m += out[0].data[r * 20 + j] / 20;
        for (int j = 0; j < 20; j++)
            v += (out[0].data[r * 20 + j] - m) * (out[0].data[r * 20 + j] - m) / 20;
        CHECK_NEAR(m, 0.0, 1e-12);
        CHECK_NEAR(v, 1.0, 1e-12);
    }
    CHECK(fabs(out[1].data[0] - 100) < 3); /* the mean of row 0 */
    free_all(out, 3);
    free_all((ref_tensor[]){x, scale, bias}, 3);
}

static void test_layernorm_bwd(arena *a)
{
    xnode f, b;
    optest_node(a, &f, &op_layernorm_desc);
    optest_node(a, &b, &op_layernorm_bwd_desc);
    int64_t xd[] = {3, 2, 4}, pd[] = {4};
    ref_tensor x = make(3, xd, NULL, 11), scale = make(1, pd, NULL, 12), bias = make(1, pd, NULL, 13);
    ref_tensor dy = make(3, xd, NULL, 14);
    const ref_tensor *in[] = {&x, &scale, &bias};
    ref_tensor fwd[3], grads[3];
    CHECK(optest_run(&op_layernorm_desc, &f, 3, in, 3, fwd, NULL) == XDNN_OK);
    const ref_tensor *bin[] = {&dy, &x, &scale, &fwd[1], &fwd[2]};
    CHECK(optest_run(&op_layernorm_bwd_desc, &b, 5, bin, 3, grads, NULL) == XDNN_OK);
    double gx[24], gs[4], gb[4];
    fd_grad(&op_layernorm_desc, &f, 3, in, 1, dy.data, &x, gx);
    fd_grad(&op_layernorm_desc, &f, 3, in, 1, dy.data, &scale, gs);
    fd_grad(&op_layernorm_desc, &f, 3, in, 1, dy.data, &bias, gb);
    check_grad("layernorm_bwd dx", &grads[0], gx);
    check_grad("layernorm_bwd dscale", &grads[1], gs);
    check_grad("layernorm_bwd dbias", &grads[2], gb);
    CHECK(grads[1].rank == 1 && grads[1].dims[0] == 4);
    free_all(fwd, 3);
    free_all(grads, 3);
    free_all((ref_tensor[]){x, scale, bias, dy}, 4);
}

/* ---- rmsnorm */

static void test_rmsnorm(arena *a)
{
    xnode n;
    optest_node(a, &n, &op_rmsnorm_desc);
    optest_set_float(&n, &op_rmsnorm_desc, "eps", 0.0);
    int64_t xd[] = {2, 2}, pd[] = {2};
    ref_tensor x = make(2, xd, (double[]){3, 4, 1, -1}, 0);
    ref_tensor scale = make(1, pd, (double[]){1, 2}, 0), bias = make(1, pd, (double[]){0.5, 0}, 0);
    ref_tensor out[2];
    /* without bias: row 0 rms = sqrt(12.5), row 1 rms = 1 */
    const ref_tensor *in2[] = {&x, &scale, NULL};
    CHECK(optest_run(&op_rmsnorm_desc, &n, 3, in2, 2, out, NULL) == XDNN_OK);
    double r0 = 1 / sqrt(12.5);
    CHECK_NEAR(out[0].data[0], 3 * r0, 1e-14);
    CHECK_NEAR(out[0].data[1], 8 * r0, 1e-14);
    CHECK_NEAR(out[0].data[2], 1, 1e-14);
    CHECK_NEAR(out[0].data[3], -2, 1e-14);
    CHECK_NEAR(out[1].data[0], r0, 1e-15);
    CHECK_NEAR(out[1].data[1], 1, 1e-15);
    free_all(out, 2);
    const ref_tensor *in3[] = {&x, &scale, &bias};
    CHECK(optest_run(&op_rmsnorm_desc, &n, 3, in3, 1, out, NULL) == XDNN_OK);
    CHECK_NEAR(out[0].data[0], 3 * r0 + 0.5, 1e-14);
    CHECK_NEAR(out[0].data[3], -2, 1e-14);
    free_all(out, 1);
    free_all((ref_tensor[]){x, scale, bias}, 3);
}

static void test_rmsnorm_bwd(arena *a)
{
    xnode f, b;
    optest_node(a, &f, &op_rmsnorm_desc);
    optest_node(a, &b, &op_rmsnorm_bwd_desc);
    int64_t xd[] = {4, 5}, pd[] = {1, 5};
    ref_tensor x = make(2, xd, NULL, 21), scale = make(2, pd, NULL, 22), bias = make(2, pd, NULL, 23);
    ref_tensor dy = make(2, xd, NULL, 24);
    const ref_tensor *in[] = {&x, &scale, &bias};
    ref_tensor fwd[2], grads[3];
    CHECK(optest_run(&op_rmsnorm_desc, &f, 3, in, 2, fwd, NULL) == XDNN_OK);
    const ref_tensor *bin[] = {&dy, &x, &scale, &fwd[1]};
    CHECK(optest_run(&op_rmsnorm_bwd_desc, &b, 4, bin, 3, grads, NULL) == XDNN_OK);
    double gx[20], gs[5], gb[5];
    fd_grad(&op_rmsnorm_desc, &f, 3, in, 1, dy.data, &x, gx);
    fd_grad(&op_rmsnorm_desc, &f, 3, in, 1, dy.data, &scale, gs);
    fd_grad(&op_rmsnorm_desc, &f, 3, in, 1, dy.data, &bias, gb);
    check_grad("rmsnorm_bwd dx", &grads[0], gx);
    check_grad("rmsnorm_bwd dscale", &grads[1], gs);
    check_grad("rmsnorm_bwd dbias", &grads[2], gb);
    CHECK(grads[1].rank == 2 && grads[1].dims[1] == 5);
    free_all(grads, 3);
    /* 2 targets: dx and dscale only, same values */
    CHECK(optest_run(&op_rmsnorm_bwd_desc, &b, 4, bin, 2, grads, NULL) == XDNN_OK);
    check_grad("rmsnorm_bwd (2 targets) dx", &grads[0], gx);
    free_all(grads, 2);
    free_all(fwd, 2);
    free_all((ref_tensor[]){x, scale, bias, dy}, 4);
}

/* ---- batchnorm */

static void test_batchnorm_known(arena *a)
{
    xnode n;
    optest_node(a, &n, &op_batchnorm_desc);
    optest_set_float(&n, &op_batchnorm_desc, "eps", 0.0);
    /* x [N=2, C=2, S=2]: channel 0 holds 1, 3, 5, 7 (mean 4, var 5);
     * channel 1 holds 10, 20, 30, 40 (mean 25, var 125). */
    int64_t xd[] = {2, 2, 2}, pd[] = {1, 2, 1}, cd[] = {2};
    ref_tensor x = make(3, xd, (double[]){1, 3, 10, 20, 5, 7, 30, 40}, 0);
    ref_tensor scale = make(3, pd, (double[]){2, 1}, 0), bias = make(3, pd, (double[]){0, -1}, 0);
    ref_tensor rmean = make(1, cd, (double[]){0, 1}, 0), rvar = make(1, cd, (double[]){1, 2}, 0);
    const ref_tensor *in[] = {&x, &scale, &bias, &rmean, &rvar};
    ref_tensor out[5];
    CHECK(optest_run(&op_batchnorm_desc, &n, 5, in, 5, out, NULL) == XDNN_OK);
    double i0 = 1 / sqrt(5.0), i1 = 1 / sqrt(125.0);
    double want[] = {2 * -3 * i0, 2 * -1 * i0, -15 * i1 - 1, -5 * i1 - 1, 2 * 1 * i0, 2 * 3 * i0, 5 * i1 - 1, 15 * i1 - 1};
    for (int i = 0; i < 8; i++)
        CHECK_NEAR(out[0].data[i], want[i], 1e-13);
    /* mean/inv_var take scale's shape [1, 2, 1] */
    CHECK(out[1].rank == 3 && out[1].dims[1] == 2 && out[2].dims[1] == 2);
    CHECK_NEAR(out[1].data[0], 4, 1e-15);
    CHECK_NEAR(out[1].data[1], 25, 1e-15);
    CHECK_NEAR(out[2].data[0], i0, 1e-15);
    CHECK_NEAR(out[2].data[1], i1, 1e-15);
    /* running stats (momentum 0.1, unbiased variance M/(M-1) = 4/3), shaped like the inputs [2] */
    CHECK(out[3].rank == 1 && out[4].rank == 1 && out[3].dims[0] == 2);
    CHECK_NEAR(out[3].data[0], 0.9 * 0 + 0.1 * 4, 1e-15);
    CHECK_NEAR(out[3].data[1], 0.9 * 1 + 0.1 * 25, 1e-14);
    CHECK_NEAR(out[4].data[0], 0.9 * 1 + 0.1 * 5 * 4 / 3.0, 1e-14);
    CHECK_NEAR(out[4].data[1], 0.9 * 2 + 0.1 * 125 * 4 / 3.0, 1e-13);

    /* batchnorm_infer with the batch statistics reproduces the training y;
     * here with [C]-shaped scale/bias (both forms are accepted). */
    xnode ni;
    optest_node(a, &ni, &op_batchnorm_infer_desc);
    ref_tensor scale_c = make(1, cd, (double[]){2, 1}, 0), bias_c = make(1, cd, (double[]){0, -1}, 0);
    const ref_tensor *iin[] = {&x, &scale_c, &bias_c, &out[1], &out[2]};
    ref_tensor y;
    CHECK(optest_run(&op_batchnorm_infer_desc, &ni, 5, iin, 1, &y, NULL) == XDNN_OK);
    for (int i = 0; i < 8; i++)
        CHECK_NEAR(y.data[i], want[i], 1e-13);
    optest_ref_free(&y);
    free_all(out, 5);

    /* 3 targets, [C]-shaped scale: stats are [2] */
    const ref_tensor *in3[] = {&x, &scale_c, &bias_c};
    CHECK(optest_run(&op_batchnorm_desc, &n, 3, in3, 3, out, NULL) == XDNN_OK);
    CHECK(out[1].rank == 1 && out[1].dims[0] == 2);
    CHECK_NEAR(out[0].data[7], want[7], 1e-13);
    free_all(out, 3);
    free_all((ref_tensor[]){x, scale, bias, rmean, rvar, scale_c, bias_c}, 7);
}

static void test_batchnorm_bwd(arena *a)
{
    xnode f, b;
    optest_node(a, &f, &op_batchnorm_desc);
    optest_node(a, &b, &op_batchnorm_bwd_desc);
    int64_t xd[] = {2, 3, 2, 2}, pd[] = {1, 3, 1, 1};
    ref_tensor x = make(4, xd, NULL, 31), scale = make(4, pd, NULL, 32), bias = make(4, pd, NULL, 33);
    ref_tensor dy = make(4, xd, NULL, 34);
    const ref_tensor *in[] = {&x, &scale, &bias};
    ref_tensor fwd[3], grads[3];
    CHECK(optest_run(&op_batchnorm_desc, &f, 3, in, 3, fwd, NULL) == XDNN_OK);
    const ref_tensor *bin[] = {&dy, &x, &scale, &fwd[1], &fwd[2]};
    CHECK(optest_run(&op_batchnorm_bwd_desc, &b, 5, bin, 3, grads, NULL) == XDNN_OK);
    double gx[24], gs[3], gb[3];
    fd_grad(&op_batchnorm_desc, &f, 3, in, 3, dy.data, &x, gx);
    fd_grad(&op_batchnorm_desc, &f, 3, in, 3, dy.data, &scale, gs);
    fd_grad(&op_batchnorm_desc, &f, 3, in, 3, dy.data, &bias, gb);
    check_grad("batchnorm_bwd dx", &grads[0], gx);
    check_grad("batchnorm_bwd dscale", &grads[1], gs);
    check_grad("batchnorm_bwd dbias", &grads[2], gb);
    CHECK(grads[1].rank == 4 && grads[1].dims[1] == 3);
    free_all(fwd, 3);
    free_all(grads, 3);
    free_all((ref_tensor[]){x, scale, bias, dy}, 4);
}

/* ---- group and instance norm */

static void test_groupnorm_known(arena *a)
{
    xnode n;
    optest_node(a, &n, &op_groupnorm_desc);
    optest_set_int(&n, &op_groupnorm_desc, "groups", 2);
    optest_set_float(&n, &op_groupnorm_desc, "eps", 0.0);
    /* x [1, 4, 2]: group 0 = channels 0-1 {1, 3, 5, 7}, group 1 = channels 2-3 {0, 0, 2, 2} */
    int64_t xd[] = {1, 4, 2}, pd[] = {4};
    ref_tensor x = make(3, xd, (double[]){1, 3, 5, 7, 0, 0, 2, 2}, 0);
    ref_tensor scale = make(1, pd, (double[]){1, 1, 1, 3}, 0), bias = make(1, pd, (double[]){0, 1, 0, 0}, 0);
    const ref_tensor *in[] = {&x, &scale, &bias};
    ref_tensor out[3];
    CHECK(optest_run(&op_groupnorm_desc, &n, 3, in, 3, out, NULL) == XDNN_OK);
    double i0 = 1 / sqrt(5.0);
    double want[] = {-3 * i0, -1 * i0, 1 * i0 + 1, 3 * i0 + 1, -1, -1, 3, 3};
    for (int i = 0; i < 8; i++)
        CHECK_NEAR(out[0].data[i], want[i], 1e-14);
    CHECK(out[1].rank == 3 && out[1].dims[0] == 1 && out[1].dims[1] == 2 && out[1].dims[2] == 1);
    CHECK_NEAR(out[1].data[0], 4, 1e-15);
    CHECK_NEAR(out[1].data[1], 1, 1e-15);
    CHECK_NEAR(out[2].data[1], 1, 1e-15);
    free_all(out, 3);

    /* instance norm: one group per channel; channel 0 {1, 3} -> -1, 1 */
    xnode ni;
    optest_node(a, &ni, &op_instancenorm_desc);
    optest_set_float(&ni, &op_instancenorm_desc, "eps", 0.0);
    CHECK(optest_run(&op_instancenorm_desc, &ni, 3, in, 3, out, NULL) == XDNN_OK);
    /* channels 0 {1, 3} and 1 {5, 7} (bias 1); channels 2 and 3 are constant (var 0, eps 0: not checked) */
    CHECK_NEAR(out[0].data[0], -1, 1e-14);
    CHECK_NEAR(out[0].data[1], 1, 1e-14);
    CHECK_NEAR(out[0].data[2], 0, 1e-14);
    CHECK_NEAR(out[0].data[3], 2, 1e-14);
    CHECK(out[1].dims[1] == 4);
    CHECK_NEAR(out[1].data[3], 2, 1e-15);
    free_all(out, 3);
    free_all((ref_tensor[]){x, scale, bias}, 3);
}

static void test_group_bwd(arena *a, const op_desc *fd, const op_desc *bd, int64_t groups)
{
    xnode f, b;
    optest_node(a, &f, fd);
    optest_node(a, &b, bd);
    if (groups) {
        optest_set_int(&f, fd, "groups", groups);
        optest_set_int(&b, bd, "groups", groups);
    }
    int64_t xd[] = {2, 4, 3}, pd[] = {4};
    ref_tensor x = make(3, xd, NULL, 41), scale = make(1, pd, NULL, 42), bias = make(1, pd, NULL, 43);
    ref_tensor dy = make(3, xd, NULL, 44);
    const ref_tensor *in[] = {&x, &scale, &bias};
    ref_tensor fwd[3], grads[3];
    CHECK(optest_run(fd, &f, 3, in, 3, fwd, NULL) == XDNN_OK);
    const ref_tensor *bin[] = {&dy, &x, &scale, &fwd[1], &fwd[2]};
    CHECK(optest_run(bd, &b, 5, bin, 3, grads, NULL) == XDNN_OK);
    double gx[24], gs[4], gb[4];
    fd_grad(fd, &f, 3, in, 1, dy.data, &x, gx);
    fd_grad(fd, &f, 3, in, 1, dy.data, &scale, gs);
    fd_grad(fd, &f, 3, in, 1, dy.data, &bias, gb);
    char what[64];
    snprintf(what, sizeof what, "%s dx", bd->name);
    check_grad(what, &grads[0], gx);
    snprintf(what, sizeof what, "%s dscale", bd->name);
    check_grad(what, &grads[1], gs);
    snprintf(what, sizeof what, "%s dbias", bd->name);
    check_grad(what, &grads[2], gb);
    free_all(fwd, 3);
    free_all(grads, 3);
    free_all((ref_tensor[]){x, scale, bias, dy}, 4);
}

/* A one-element scale broadcasts to every channel, and its gradient is the
 * sum over channels. */
static void test_scalar_scale_bwd(arena *a)
{
    xnode f, b;
    optest_node(a, &f, &op_batchnorm_desc);
    optest_node(a, &b, &op_batchnorm_bwd_desc);
    int64_t xd[] = {3, 2, 2}, one[] = {1};
    ref_tensor x = make(3, xd, NULL, 51), scale = make(1, one, (double[]){1.5}, 0), bias = make(1, one, (double[]){0.25}, 0);
    ref_tensor dy = make(3, xd, NULL, 54);
    const ref_tensor *in[] = {&x, &scale, &bias};
    ref_tensor fwd[3], grads[3];
    CHECK(optest_run(&op_batchnorm_desc, &f, 3, in, 3, fwd, NULL) == XDNN_OK);
    CHECK(fwd[1].rank == 3 && fwd[1].dims[1] == 2); /* stats stay per channel: [1, 2, 1] */
    const ref_tensor *bin[] = {&dy, &x, &scale, &fwd[1], &fwd[2]};
    CHECK(optest_run(&op_batchnorm_bwd_desc, &b, 5, bin, 3, grads, NULL) == XDNN_OK);
    double gs[1], gb[1];
    fd_grad(&op_batchnorm_desc, &f, 3, in, 3, dy.data, &scale, gs);
    fd_grad(&op_batchnorm_desc, &f, 3, in, 3, dy.data, &bias, gb);
    CHECK(grads[1].numel == 1);
    CHECK_NEAR(grads[1].data[0], gs[0], 1e-6);
    CHECK_NEAR(grads[2].data[0], gb[0], 1e-6);
    free_all(fwd, 3);
    free_all(grads, 3);
    free_all((ref_tensor[]){x, scale, bias, dy}, 4);
}

/* ---- inference errors, exact text */

static void test_errors(arena *a)
{
    tinfo x = optest_tinfo(XDNN_F32, 4, (int64_t[]){2, 3, 4, 4});
    tinfo c3 = optest_tinfo(XDNN_F32, 1, (int64_t[]){3}), c4 = optest_tinfo(XDNN_F32, 1, (int64_t[]){4});
    tinfo bad = optest_tinfo(XDNN_F32, 4, (int64_t[]){1, 3, 1, 2});
    xnode n;

    optest_node(a, &n, &op_batchnorm_desc);
    CHECK_STR(optest_infer_error(&op_batchnorm_desc, &n, 3, (const tinfo *[]){&x, &c3, &c3}, 5),
              "batchnorm: 5 targets (y, mean, inv_var, running_mean_next, running_var_next) need both "
              "running_mean= and running_var=");
    CHECK_STR(optest_infer_error(&op_batchnorm_desc, &n, 5, (const tinfo *[]){&x, &c3, &c3, &c3, &c3}, 3),
              "batchnorm: running_mean/running_var are given but only 3 targets are written; write 5 targets "
              "(y, mean, inv_var, running_mean_next, running_var_next) to update them");
    CHECK_STR(optest_infer_error(&op_batchnorm_desc, &n, 3, (const tinfo *[]){&x, &c4, &c3}, 3),
              "batchnorm: scale must be [3] or [1, 3, 1, 1] (one value per channel of x [2, 3, 4, 4]), got [4]");
    CHECK_STR(optest_infer_error(&op_batchnorm_desc, &n, 3, (const tinfo *[]){&x, &c3, &bad}, 3),
              "batchnorm: bias must be [3] or [1, 3, 1, 1] (one value per channel of x [2, 3, 4, 4]), got [1, 3, 1, 2]");
    CHECK_STR(optest_infer_error(&op_batchnorm_desc, &n, 3, (const tinfo *[]){&x, &c3, &c3}, 3), "(no error)");
    optest_set_float(&n, &op_batchnorm_desc, "momentum", 1.5);
    CHECK_STR(optest_infer_error(&op_batchnorm_desc, &n, 3, (const tinfo *[]){&x, &c3, &c3}, 3),
              "batchnorm: attribute 'momentum' must be in [0, 1], got 1.5");

    optest_node(a, &n, &op_layernorm_desc);
    CHECK_STR(optest_infer_error(&op_layernorm_desc, &n, 3, (const tinfo *[]){&x, &c3, &c3}, 1),
              "layernorm: scale must be [4] (the normalized trailing dims of x [2, 3, 4, 4], optionally with "
              "leading 1s), got [3]");
    optest_set_ints(&n, &op_layernorm_desc, "axes", 1, (int64_t[]){1});
    CHECK_STR(optest_infer_error(&op_layernorm_desc, &n, 3, (const tinfo *[]){&x, &c4, &c4}, 1),
              "layernorm: attribute 'axes' must name distinct trailing axes of x [2, 3, 4, 4] (e.g. [-1] or "
              "[-2, -1]), got [1]");
    optest_set_ints(&n, &op_layernorm_desc, "axes", 1, (int64_t[]){-1});
    optest_set_float(&n, &op_layernorm_desc, "eps", -1);
    CHECK_STR(optest_infer_error(&op_layernorm_desc, &n, 3, (const tinfo *[]){&x, &c4, &c4}, 1),
              "layernorm: attribute 'eps' must be a finite number >= 0, got -1");

    optest_node(a, &n, &op_groupnorm_desc);
    CHECK_STR(optest_infer_error(&op_groupnorm_desc, &n, 3, (const tinfo *[]){&x, &c3, &c3}, 1),
              "groupnorm: attribute 'groups' is required (a divisor of C = 3)");
    optest_set_int(&n, &op_groupnorm_desc, "groups", 2);
    CHECK_STR(optest_infer_error(&op_groupnorm_desc, &n, 3, (const tinfo *[]){&x, &c3, &c3}, 1),
              "groupnorm: attribute 'groups' must divide the channels C = 3 of x [2, 3, 4, 4], got 2");

    tinfo st = optest_tinfo(XDNN_F32, 2, (int64_t[]){2, 4});
    optest_node(a, &n, &op_layernorm_bwd_desc);
    CHECK_STR(optest_infer_error(&op_layernorm_bwd_desc, &n, 5, (const tinfo *[]){&x, &x, &c4, &st, &st}, 3),
              "layernorm_bwd: mean must have 24 elements (shape [2, 3, 4, 1]), got [2, 4]");
    CHECK_STR(optest_infer_error(&op_layernorm_bwd_desc, &n, 5, (const tinfo *[]){&bad, &x, &c4, &st, &st}, 3),
              "layernorm_bwd: dy must have the shape of x [2, 3, 4, 4], got [1, 3, 1, 2]");
}

int main(void)
{
    arena *a = arena_create();
    test_layernorm_known(a);
    test_layernorm_stats(a);
    test_layernorm_bwd(a);
    test_rmsnorm(a);
    test_rmsnorm_bwd(a);
    test_batchnorm_known(a);
    test_batchnorm_bwd(a);
    test_scalar_scale_bwd(a);
    test_groupnorm_known(a);
    test_group_bwd(a, &op_groupnorm_desc, &op_groupnorm_bwd_desc, 2);
    test_group_bwd(a, &op_instancenorm_desc, &op_instancenorm_bwd_desc, 0);
    test_errors(a);
    arena_destroy(a);
    return test_summary("test_op_norm");
}
