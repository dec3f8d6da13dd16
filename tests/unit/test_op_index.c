/* test_op_index.c — known answers for the index ops (gather, gather_bwd,
 * one_hot, argmax, argmin, cross_entropy, cross_entropy_bwd) and
 * batchnorm_infer_var: hand-made cases whose answers are written out below
 * (the float ones computed with Python's math module, independent of this C
 * code, as noted beside them), gather_bwd as the adjoint of gather,
 * cross_entropy_bwd against central differences of cross_entropy, the
 * run-time refusal of out-of-range indices and exact error messages. */
#include "op_test_util.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define X(id) extern const op_desc op_##id##_desc;
X(gather) X(gather_bwd) X(one_hot) X(argmax) X(argmin) X(cross_entropy) X(cross_entropy_bwd) X(batchnorm_infer_var)
#undef X

/* Run d with typed inputs (optest_run takes every input as f32; index ports
 * must be integer): infer, allocate out[0] (free with optest_ref_free), run
 * the reference.  The first error's message goes to msg. */
static xdnn_status run_typed(const op_desc *d, const xnode *n, int nin, ref_tensor *const *in,
                             const xdnn_dtype *dts, ref_tensor *out, char *msg, size_t cap)
{
    tinfo ti[OP_MAX_PORTS], to[1];
    const tinfo *tp[OP_MAX_PORTS] = {0};
    for (int i = 0; i < nin; i++) {
        ti[i] = optest_tinfo(dts[i], in[i]->rank, in[i]->dims);
        in[i]->dtype = dts[i];
        tp[i] = &ti[i];
    }
    *out = (ref_tensor){0};
    xdnn_diags_t *dg = xdnn_diags_create();
    xdnn_status st = optest_infer(d, n, nin, tp, 1, to, dg);
    if (st == XDNN_OK) {
        *out = optest_ref_alloc(to[0].rank, to[0].dims);
        out->dtype = to[0].dtype;
        op_ref_ctx c = {.desc = d, .node = n, .nin = nin, .nresults = 1, .diags = dg};
        for (int i = 0; i < nin; i++)
            c.in[i] = in[i];
        c.out[0] = out;
        st = d->reference(&c);
    }
    snprintf(msg, cap, "%s", optest_first_error(dg));
    xdnn_diags_destroy(dg);
    return st;
}

static void check_values(int line, const char *what, const ref_tensor *got, const double *want, int64_t n, double tol)
{
    CHECK_AT(line, got->numel == n, "%s: %lld elements, want %lld", what, (long long)got->numel, (long long)n);
    for (int64_t i = 0; i < n && i < got->numel; i++)
        CHECK_AT(line, fabs(got->data[i] - want[i]) <= tol, "%s[%lld]: got %.17g want %.17g", what, (long long)i,
                 got->data[i], want[i]);
}
#define VALUES(what, got, ...)                                                                                   \
    do {                                                                                                         \
        const double w_[] = {__VA_ARGS__};                                                                       \
        check_values(__LINE__, what, got, w_, (int64_t)(sizeof w_ / sizeof w_[0]), 1e-12);                     \
    } while (0)

static void test_gather(arena *a)
{
    char msg[512];
    xnode n;
    optest_node(a, &n, &op_gather_desc);
    /* embedding: table [4, 3] with x[v, d] = 10 v + d, index [2, 2] */
    ref_tensor x = optest_ref_of(2, (int64_t[]){4, 3}, (double[]){0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32}, NULL);
    ref_tensor idx = optest_ref_of(2, (int64_t[]){2, 2}, (double[]){3, 0, 1, 3}, NULL), y;
    CHECK(run_typed(&op_gather_desc, &n, 2, (ref_tensor *[]){&x, &idx}, (xdnn_dtype[]){XDNN_F32, XDNN_I32}, &y, msg,
                    sizeof msg) == XDNN_OK, "%s", msg);
    CHECK_EQ(y.rank, 3);
    CHECK_EQ(y.dims[2], 3);
    VALUES("embedding", &y, 30, 31, 32, 0, 1, 2, 10, 11, 12, 30, 31, 32);
    optest_ref_free(&y);
    /* along axis 1 (negative): x [2, 4], index [3] = [3, 0, 3] -> [2, 3] */
    ref_tensor x2 = optest_ref_of(2, (int64_t[]){2, 4}, (double[]){1, 2, 3, 4, 5, 6, 7, 8}, NULL);
    ref_tensor i2 = optest_ref_of(1, (int64_t[]){3}, (double[]){3, 0, 3}, NULL);
    optest_set_int(&n, &op_gather_desc, "axis", -1);
    CHECK(run_typed(&op_gather_desc, &n, 2, (ref_tensor *[]){&x2, &i2}, (xdnn_dtype[]){XDNN_F32, XDNN_I64}, &y, msg,
                    sizeof msg) == XDNN_OK, "%s", msg);
    VALUES("axis -1", &y, 4, 1, 4, 8, 5, 8);
    optest_ref_free(&y);
    /* an index out of range is refused at run time, naming it */
    i2.data[1] = 4;
    CHECK(run_typed(&op_gather_desc, &n, 2, (ref_tensor *[]){&x2, &i2}, (xdnn_dtype[]){XDNN_F32, XDNN_I64}, &y, msg,
                    sizeof msg) == XDNN_ERR_SEMANTIC);
    CHECK_STR(msg, "gather: index[1] = 4 is out of range [0, 4) (axis 1 of x [2, 4])");
    optest_ref_free(&y);
    i2.data[1] = -1;
    CHECK(run_typed(&op_gather_desc, &n, 2, (ref_tensor *[]){&x2, &i2}, (xdnn_dtype[]){XDNN_F32, XDNN_I64}, &y, msg,
                    sizeof msg) == XDNN_ERR_SEMANTIC);
    CHECK_STR(msg, "gather: index[1] = -1 is out of range [0, 4) (axis 1 of x [2, 4])");
    optest_ref_free(&y);
    optest_ref_free(&x);
    optest_ref_free(&idx);
    optest_ref_free(&x2);
    optest_ref_free(&i2);
}

static void test_gather_bwd(arena *a)
{
    char msg[512];
    xnode n;
    optest_node(a, &n, &op_gather_bwd_desc);
    /* x_dims [4, 2], index [2, 0, 2]: rows 2 and 0 receive dy, row 2 twice */
    optest_set_ints(&n, &op_gather_bwd_desc, "x_dims", 2, (int64_t[]){4, 2});
    ref_tensor dy = optest_ref_of(2, (int64_t[]){3, 2}, (double[]){1, 2, 3, 4, 5, 6}, NULL);
    ref_tensor idx = optest_ref_of(1, (int64_t[]){3}, (double[]){2, 0, 2}, NULL), dx;
    CHECK(run_typed(&op_gather_bwd_desc, &n, 2, (ref_tensor *[]){&dy, &idx}, (xdnn_dtype[]){XDNN_F32, XDNN_I32}, &dx,
                    msg, sizeof msg) == XDNN_OK, "%s", msg);
    VALUES("scatter-add", &dx, 3, 4, 0, 0, 6, 8, 0, 0);
    optest_ref_free(&dx);
    optest_ref_free(&dy);
    optest_ref_free(&idx);

    /* adjoint: <gather(x), w> == <x, gather_bwd(w)> on x [3, 5, 2], axis 1, index [2, 3] */
    uint64_t rng = 12345;
    optest_node(a, &n, &op_gather_desc);
    optest_set_int(&n, &op_gather_desc, "axis", 1);
    ref_tensor x = optest_ref_of(3, (int64_t[]){3, 5, 2}, NULL, &rng);
    ref_tensor ix = optest_ref_of(2, (int64_t[]){2, 3}, (double[]){4, 0, 4, 1, 1, 4}, NULL), y;
    CHECK(run_typed(&op_gather_desc, &n, 2, (ref_tensor *[]){&x, &ix}, (xdnn_dtype[]){XDNN_F64, XDNN_I64}, &y, msg,
                    sizeof msg) == XDNN_OK, "%s", msg);
    CHECK_EQ(y.numel, 3 * 2 * 3 * 2);
    ref_tensor w = optest_ref_of(y.rank, y.dims, NULL, &rng);
    xnode nb;
    optest_node(a, &nb, &op_gather_bwd_desc);
    optest_set_int(&nb, &op_gather_bwd_desc, "axis", 1);
    optest_set_ints(&nb, &op_gather_bwd_desc, "x_dims", 3, (int64_t[]){3, 5, 2});
    CHECK(run_typed(&op_gather_bwd_desc, &nb, 2, (ref_tensor *[]){&w, &ix}, (xdnn_dtype[]){XDNN_F64, XDNN_I64}, &dx,
                    msg, sizeof msg) == XDNN_OK, "%s", msg);
    double lhs = 0, rhs = 0;
    for (int64_t i = 0; i < y.numel; i++)
        lhs += y.data[i] * w.data[i];
    for (int64_t i = 0; i < x.numel; i++)
        rhs += x.data[i] * dx.data[i];
    CHECK_NEAR(lhs, rhs, 1e-12);
    CHECK(fabs(lhs) > 1e-3, "the adjoint test compared nothing (%g)", lhs);
    /* row 2 of axis 1 is never indexed: its gradient is exactly 0 */
    CHECK(dx.data[(0 * 5 + 2) * 2 + 0] == 0 && dx.data[(2 * 5 + 2) * 2 + 1] == 0);
    optest_ref_free(&dx);
    optest_ref_free(&w);
    optest_ref_free(&y);
    optest_ref_free(&x);
    optest_ref_free(&ix);
}

static void test_one_hot(arena *a)
{
    char msg[512];
    xnode n;
    optest_node(a, &n, &op_one_hot_desc);
    optest_set_int(&n, &op_one_hot_desc, "classes", 4);
    ref_tensor idx = optest_ref_of(1, (int64_t[]){3}, (double[]){2, 0, 3}, NULL), y;
    CHECK(run_typed(&op_one_hot_desc, &n, 1, (ref_tensor *[]){&idx}, (xdnn_dtype[]){XDNN_I32}, &y, msg,
                    sizeof msg) == XDNN_OK, "%s", msg);
    CHECK_EQ(y.rank, 2);
    CHECK_EQ(y.dtype, XDNN_F32);
    VALUES("one_hot", &y, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1);
    optest_ref_free(&y);
    idx.data[2] = 4;
    CHECK(run_typed(&op_one_hot_desc, &n, 1, (ref_tensor *[]){&idx}, (xdnn_dtype[]){XDNN_I32}, &y, msg,
                    sizeof msg) == XDNN_ERR_SEMANTIC);
    CHECK_STR(msg, "one_hot: index[2] = 4 is out of range [0, 4) (classes = 4)");
    optest_ref_free(&y);
    optest_ref_free(&idx);
}

static void test_argmax(arena *a)
{
    char msg[512];
    xnode n, m;
    optest_node(a, &n, &op_argmax_desc);
    optest_node(a, &m, &op_argmin_desc);
    /* rows: a tie (first wins), NaNs (the first NaN wins both ways), -0 == +0 (a tie) */
    ref_tensor x = optest_ref_of(2, (int64_t[]){3, 5},
                                 (double[]){1, 3, 3, -1, -1, NAN, 1, NAN, 5, 0, 0.0, -0.0, 2, -0.0, 2}, NULL), y;
    CHECK(run_typed(&op_argmax_desc, &n, 1, (ref_tensor *[]){&x}, (xdnn_dtype[]){XDNN_F32}, &y, msg, sizeof msg) ==
              XDNN_OK, "%s", msg);
    CHECK_EQ(y.rank, 1);
    CHECK_EQ(y.dtype, XDNN_I64);
    VALUES("argmax", &y, 1, 0, 2);
    optest_ref_free(&y);
    CHECK(run_typed(&op_argmin_desc, &m, 1, (ref_tensor *[]){&x}, (xdnn_dtype[]){XDNN_F32}, &y, msg, sizeof msg) ==
              XDNN_OK, "%s", msg);
    VALUES("argmin", &y, 3, 0, 0);
    optest_ref_free(&y);
    /* along axis 0 with keepdims, i32: x [3, 2] columns [1, 4, 4] and [5, 5, 0] */
    ref_tensor x0 = optest_ref_of(2, (int64_t[]){3, 2}, (double[]){1, 5, 4, 5, 4, 0}, NULL);
    optest_set_int(&n, &op_argmax_desc, "axis", 0);
    optest_set_bool(&n, &op_argmax_desc, "keepdims", true);
    value i32 = {.kind = VAL_DTYPE, .dt = XDNN_I32};
    optest_set_value(&n, &op_argmax_desc, "dtype", &i32);
    CHECK(run_typed(&op_argmax_desc, &n, 1, (ref_tensor *[]){&x0}, (xdnn_dtype[]){XDNN_F32}, &y, msg, sizeof msg) ==
              XDNN_OK, "%s", msg);
    CHECK_EQ(y.rank, 2);
    CHECK_EQ(y.dims[0], 1);
    CHECK_EQ(y.dtype, XDNN_I32);
    VALUES("argmax axis 0", &y, 1, 0);
    optest_ref_free(&y);
    optest_set_int(&m, &op_argmin_desc, "axis", 0);
    CHECK(run_typed(&op_argmin_desc, &m, 1, (ref_tensor *[]){&x0}, (xdnn_dtype[]){XDNN_F32}, &y, msg, sizeof msg) ==
              XDNN_OK, "%s", msg);
    VALUES("argmin axis 0", &y, 0, 2);
    optest_ref_free(&y);
    optest_ref_free(&x);
    optest_ref_free(&x0);
}

/* logits [3, 4] and targets [2, 0, ignored] of the cross_entropy cases. */
static const double xent_logits[] = {1.0, 2.0, 0.5, -1.0, 0.0, 0.0, 3.0, 1.0, 2.0, -2.0, 1.0, 0.25};

static void test_cross_entropy(arena *a)
{
    char msg[512];
    xnode n;
    optest_node(a, &n, &op_cross_entropy_desc);
    ref_tensor x = optest_ref_of(2, (int64_t[]){3, 4}, xent_logits, NULL);
    ref_tensor t = optest_ref_of(1, (int64_t[]){3}, (double[]){2, 0, -100}, NULL), y;
    ref_tensor *in[] = {&x, &t};
    const xdnn_dtype dts[] = {XDNN_F32, XDNN_I64};
    /* Python: lse(r) = m + log(sum(exp(v - m))); loss = -(1 - ls) (r[t] - lse) - ls / C sum(v - lse) */
    optest_set_str(&n, &op_cross_entropy_desc, "reduction", "none");
    CHECK(run_typed(&op_cross_entropy_desc, &n, 2, in, dts, &y, msg, sizeof msg) == XDNN_OK, "%s", msg);
    CHECK_EQ(y.rank, 1);
    VALUES("none", &y, 1.995181898085856, 3.2109976232381756, 0.0);
    optest_ref_free(&y);
    optest_set_str(&n, &op_cross_entropy_desc, "reduction", "sum");
    CHECK(run_typed(&op_cross_entropy_desc, &n, 2, in, dts, &y, msg, sizeof msg) == XDNN_OK, "%s", msg);
    CHECK_EQ(y.rank, 0);
    VALUES("sum", &y, 5.206179521324032);
    optest_ref_free(&y);
    optest_set_str(&n, &op_cross_entropy_desc, "reduction", "mean"); /* over the 2 rows not ignored */
    optest_set_float(&n, &op_cross_entropy_desc, "label_smoothing", 0.1);
    CHECK(run_typed(&op_cross_entropy_desc, &n, 2, in, dts, &y, msg, sizeof msg) == XDNN_OK, "%s", msg);
    VALUES("mean, ls 0.1", &y, 2.546839760662016);
    optest_ref_free(&y);
    /* every row ignored: mean is 0/0 = NaN, as PyTorch */
    ref_tensor tall = optest_ref_of(1, (int64_t[]){3}, (double[]){-100, -100, -100}, NULL);
    CHECK(run_typed(&op_cross_entropy_desc, &n, 2, (ref_tensor *[]){&x, &tall}, dts, &y, msg, sizeof msg) == XDNN_OK,
          "%s", msg);
    CHECK(isnan(y.data[0]), "mean over no rows: got %g", y.data[0]);
    optest_ref_free(&y);
    /* a +inf logit makes the row's log-softmax NaN, so its loss is NaN (as PyTorch), whatever the target; the
     * other rows keep their losses */
    x.data[1] = INFINITY;
    optest_set_str(&n, &op_cross_entropy_desc, "reduction", "none");
    optest_set_float(&n, &op_cross_entropy_desc, "label_smoothing", 0);
    CHECK(run_typed(&op_cross_entropy_desc, &n, 2, in, dts, &y, msg, sizeof msg) == XDNN_OK, "%s", msg);
    CHECK(isnan(y.data[0]) && fabs(y.data[1] - 3.2109976232381756) < 1e-12, "+inf logit: losses %g %g", y.data[0],
          y.data[1]);
    optest_ref_free(&y);
    x.data[1] = 2.0;
    optest_set_str(&n, &op_cross_entropy_desc, "reduction", "mean");
    optest_set_float(&n, &op_cross_entropy_desc, "label_smoothing", 0.1);
    /* a target out of range that is not ignore_index */
    t.data[1] = 4;
    CHECK(run_typed(&op_cross_entropy_desc, &n, 2, in, dts, &y, msg, sizeof msg) == XDNN_ERR_SEMANTIC);
    CHECK_STR(msg, "cross_entropy: index[1] = 4 is out of range [0, 4) (classes = 4, ignore_index = -100)");
    optest_ref_free(&y);
    t.data[1] = 0;

    /* backward: mean, ls 0.1, dy = 1; Python: 0.5 (softmax_c - 0.9 [c == t] - 0.1 / 4) */
    xnode nb;
    optest_node(a, &nb, &op_cross_entropy_bwd_desc);
    optest_set_float(&nb, &op_cross_entropy_bwd_desc, "label_smoothing", 0.1);
    ref_tensor dy = optest_ref_of(0, NULL, (double[]){1.0}, NULL), dx;
    CHECK(run_typed(&op_cross_entropy_bwd_desc, &nb, 3, (ref_tensor *[]){&dy, &x, &t},
                    (xdnn_dtype[]){XDNN_F32, XDNN_F32, XDNN_I64}, &dx, msg, sizeof msg) == XDNN_OK, "%s", msg);
    VALUES("bwd", &dx, 0.09960390902410057, 0.29223001879943855, -0.39450554210324723, 0.002671614279708112,
           -0.4423418136736786, 0.0076581863263214395, 0.39238799576182604, 0.042295631585531165, 0, 0, 0, 0);
    optest_ref_free(&dx);
    /* a +inf logit: that row's gradient is NaN throughout (its log-softmax is), the other rows' are unchanged */
    x.data[1] = INFINITY;
    CHECK(run_typed(&op_cross_entropy_bwd_desc, &nb, 3, (ref_tensor *[]){&dy, &x, &t},
                    (xdnn_dtype[]){XDNN_F32, XDNN_F32, XDNN_I64}, &dx, msg, sizeof msg) == XDNN_OK, "%s", msg);
    for (int j = 0; j < 4; j++)
        CHECK(isnan(dx.data[j]), "+inf logit: dx[0][%d] = %g, want NaN", j, dx.data[j]);
    CHECK(fabs(dx.data[4] + 0.4423418136736786) < 1e-12, "+inf logit: dx[1][0] = %.17g", dx.data[4]);
    optest_ref_free(&dx);
    x.data[1] = 2.0;
    optest_ref_free(&dy);
    optest_ref_free(&tall);
    optest_ref_free(&x);
    optest_ref_free(&t);
}

/* cross_entropy_bwd against central differences of cross_entropy for each
 * reduction, with smoothing and an ignored row, on random logits [2, 3, 5]. */
static void test_cross_entropy_fd(arena *a)
{
    static const char *const reds[] = {"none", "mean", "sum"};
    char msg[512];
    for (int ri = 0; ri < 3; ri++) {
        xnode n, nb;
        optest_node(a, &n, &op_cross_entropy_desc);
        optest_node(a, &nb, &op_cross_entropy_bwd_desc);
        optest_set_str(&n, &op_cross_entropy_desc, "reduction", reds[ri]);
        optest_set_str(&nb, &op_cross_entropy_bwd_desc, "reduction", reds[ri]);
        optest_set_float(&n, &op_cross_entropy_desc, "label_smoothing", 0.2);
        optest_set_float(&nb, &op_cross_entropy_bwd_desc, "label_smoothing", 0.2);
        optest_set_int(&n, &op_cross_entropy_desc, "ignore_index", 1);
        optest_set_int(&nb, &op_cross_entropy_bwd_desc, "ignore_index", 1);
        uint64_t rng = 99 + (uint64_t)ri;
        ref_tensor x = optest_ref_of(3, (int64_t[]){2, 3, 5}, NULL, &rng);
        ref_tensor t = optest_ref_of(2, (int64_t[]){2, 3}, (double[]){4, 1, 0, 2, 2, 3}, NULL), y, dx;
        const xdnn_dtype dts[] = {XDNN_F64, XDNN_I32};
        CHECK(run_typed(&op_cross_entropy_desc, &n, 2, (ref_tensor *[]){&x, &t}, dts, &y, msg, sizeof msg) == XDNN_OK,
              "%s", msg);
        ref_tensor w = optest_ref_of(y.rank, y.dims, NULL, &rng); /* L = sum(w * y) */
        CHECK(run_typed(&op_cross_entropy_bwd_desc, &nb, 3, (ref_tensor *[]){&w, &x, &t},
                        (xdnn_dtype[]){XDNN_F64, XDNN_F64, XDNN_I32}, &dx, msg, sizeof msg) == XDNN_OK, "%s", msg);
        double worst = 0, h = 1e-6;
        for (int64_t e = 0; e < x.numel; e++) {
            double v = x.data[e], L[2];
            for (int s = 0; s < 2; s++) {
                x.data[e] = v + (s ? -h : h);
                ref_tensor yy;
                run_typed(&op_cross_entropy_desc, &n, 2, (ref_tensor *[]){&x, &t}, dts, &yy, msg, sizeof msg);
                L[s] = 0;
                for (int64_t i = 0; i < yy.numel; i++)
                    L[s] += w.data[i] * yy.data[i];
                optest_ref_free(&yy);
            }
            x.data[e] = v;
            worst = fmax(worst, fabs(dx.data[e] - (L[0] - L[1]) / (2 * h)));
        }
        CHECK(worst < 1e-7, "reduction %s: analytic vs finite differences differ by %g", reds[ri], worst);
        /* the ignored row (target 1 at row 1) has a zero gradient */
        for (int c = 0; c < 5; c++)
            CHECK(dx.data[1 * 5 + c] == 0, "reduction %s: ignored row has dlogits %g", reds[ri], dx.data[5 + c]);
        optest_ref_free(&w);
        optest_ref_free(&dx);
        optest_ref_free(&y);
        optest_ref_free(&x);
        optest_ref_free(&t);
    }
}

static void test_batchnorm_infer_var(arena *a)
{
    char msg[512];
    xnode n;
    optest_node(a, &n, &op_batchnorm_infer_var_desc);
    /* x [1, 2, 1, 2]; Python: (v - mean[c]) / math.sqrt(var[c] + 1e-5) * scale[c] + bias[c] */
    ref_tensor x = optest_ref_of(4, (int64_t[]){1, 2, 1, 2}, (double[]){1.0, 3.0, -2.0, 0.5}, NULL);
    ref_tensor sc = optest_ref_of(1, (int64_t[]){2}, (double[]){0.5, 2.0}, NULL);
    ref_tensor b = optest_ref_of(1, (int64_t[]){2}, (double[]){1.0, -1.0}, NULL);
    ref_tensor mean = optest_ref_of(1, (int64_t[]){2}, (double[]){2.0, -1.0}, NULL);
    ref_tensor var = optest_ref_of(1, (int64_t[]){2}, (double[]){4.0, 0.25}, NULL), y;
    const xdnn_dtype f[] = {XDNN_F32, XDNN_F32, XDNN_F32, XDNN_F32, XDNN_F32};
    CHECK(run_typed(&op_batchnorm_infer_var_desc, &n, 5, (ref_tensor *[]){&x, &sc, &b, &mean, &var}, f, &y, msg,
                    sizeof msg) == XDNN_OK, "%s", msg);
    VALUES("bn var", &y, 0.7500003124994141, 1.2499996875005859, -4.99992000239992, 4.99988000359988);
    optest_ref_free(&y);
    optest_set_float(&n, &op_batchnorm_infer_var_desc, "eps", -1e-3);
    CHECK(run_typed(&op_batchnorm_infer_var_desc, &n, 5, (ref_tensor *[]){&x, &sc, &b, &mean, &var}, f, &y, msg,
                    sizeof msg) == XDNN_ERR_SEMANTIC);
    CHECK_STR(msg, "batchnorm_infer_var: attribute 'eps' must be a finite number >= 0, got -0.001");
    optest_ref_free(&x);
    optest_ref_free(&sc);
    optest_ref_free(&b);
    optest_ref_free(&mean);
    optest_ref_free(&var);
}

static void test_errors(arena *a)
{
    tinfo tab = optest_tinfo(XDNN_F32, 2, (int64_t[]){10, 4}), fidx = optest_tinfo(XDNN_F32, 1, (int64_t[]){3});
    tinfo idx = optest_tinfo(XDNN_I32, 1, (int64_t[]){3}), sc = optest_tinfo(XDNN_F32, 0, NULL);
    tinfo idx2 = optest_tinfo(XDNN_I64, 2, (int64_t[]){2, 3}), dy34 = optest_tinfo(XDNN_F32, 2, (int64_t[]){3, 5});
    xnode n;
    optest_node(a, &n, &op_gather_desc);
    CHECK_STR(optest_infer_error(&op_gather_desc, &n, 2, (const tinfo *[]){&tab, &fidx}, 1),
              "gather: index must be an integer tensor (i8, i32 or i64), got f32");
    CHECK_STR(optest_infer_error(&op_gather_desc, &n, 2, (const tinfo *[]){&sc, &idx}, 1),
              "gather: x must have rank >= 1, got a scalar");
    optest_set_int(&n, &op_gather_desc, "axis", 2);
    CHECK_STR(optest_infer_error(&op_gather_desc, &n, 2, (const tinfo *[]){&tab, &idx}, 1),
              "gather: attribute 'axis' (2) is out of range for x [10, 4]");

    optest_node(a, &n, &op_gather_bwd_desc);
    CHECK_STR(optest_infer_error(&op_gather_bwd_desc, &n, 2, (const tinfo *[]){&dy34, &idx}, 1),
              "gather_bwd: attribute 'x_dims' is required (the shape of x, e.g. [V, D] for an embedding table)");
    optest_set_ints(&n, &op_gather_bwd_desc, "x_dims", 2, (int64_t[]){10, 4});
    CHECK_STR(optest_infer_error(&op_gather_bwd_desc, &n, 2, (const tinfo *[]){&dy34, &idx2}, 1),
              "gather_bwd: dy must be [2, 3, 4] (gather's y for x_dims and index), got [3, 5]");
    optest_set_ints(&n, &op_gather_bwd_desc, "x_dims", 2, (int64_t[]){10, 0});
    CHECK_STR(optest_infer_error(&op_gather_bwd_desc, &n, 2, (const tinfo *[]){&dy34, &idx}, 1),
              "gather_bwd: attribute 'x_dims' must hold dims >= 1, got [10, 0]");

    optest_node(a, &n, &op_one_hot_desc);
    CHECK_STR(optest_infer_error(&op_one_hot_desc, &n, 1, (const tinfo *[]){&idx}, 1),
              "one_hot: attribute 'classes' is required (the number of classes)");
    optest_set_int(&n, &op_one_hot_desc, "classes", 0);
    CHECK_STR(optest_infer_error(&op_one_hot_desc, &n, 1, (const tinfo *[]){&idx}, 1),
              "one_hot: attribute 'classes' must be >= 1, got 0");
    optest_set_int(&n, &op_one_hot_desc, "classes", 3);
    value bf = {.kind = VAL_DTYPE, .dt = XDNN_BOOL};
    optest_set_value(&n, &op_one_hot_desc, "dtype", &bf);
    CHECK_STR(optest_infer_error(&op_one_hot_desc, &n, 1, (const tinfo *[]){&idx}, 1),
              "one_hot: attribute 'dtype' must be f32, f16, bf16, f64, i8, i32 or i64, got bool");

    optest_node(a, &n, &op_argmax_desc);
    optest_set_int(&n, &op_argmax_desc, "axis", -3);
    CHECK_STR(optest_infer_error(&op_argmax_desc, &n, 1, (const tinfo *[]){&tab}, 1),
              "argmax: attribute 'axis' (-3) is out of range for x [10, 4]");
    optest_set_int(&n, &op_argmax_desc, "axis", 0);
    value f16 = {.kind = VAL_DTYPE, .dt = XDNN_F16};
    optest_set_value(&n, &op_argmax_desc, "dtype", &f16);
    CHECK_STR(optest_infer_error(&op_argmax_desc, &n, 1, (const tinfo *[]){&tab}, 1),
              "argmax: attribute 'dtype' must be i64 or i32, got f16");

    optest_node(a, &n, &op_cross_entropy_desc);
    CHECK_STR(optest_infer_error(&op_cross_entropy_desc, &n, 2, (const tinfo *[]){&tab, &idx}, 1),
              "cross_entropy: target must be [10] (logits [10, 4] without the class axis), got [3]");
    CHECK_STR(optest_infer_error(&op_cross_entropy_desc, &n, 2, (const tinfo *[]){&tab, &fidx}, 1),
              "cross_entropy: target must be an integer tensor (i8, i32 or i64), got f32");
    optest_set_float(&n, &op_cross_entropy_desc, "label_smoothing", 1.5);
    tinfo t10 = optest_tinfo(XDNN_I32, 1, (int64_t[]){10});
    CHECK_STR(optest_infer_error(&op_cross_entropy_desc, &n, 2, (const tinfo *[]){&tab, &t10}, 1),
              "cross_entropy: attribute 'label_smoothing' must be in [0, 1], got 1.5");
    optest_node(a, &n, &op_cross_entropy_bwd_desc);
    CHECK_STR(optest_infer_error(&op_cross_entropy_bwd_desc, &n, 3, (const tinfo *[]){&tab, &tab, &t10}, 1),
              "cross_entropy_bwd: dy must have one element (the reduced loss's gradient), got [10, 4]");
    optest_set_str(&n, &op_cross_entropy_bwd_desc, "reduction", "none");
    CHECK_STR(optest_infer_error(&op_cross_entropy_bwd_desc, &n, 3, (const tinfo *[]){&sc, &tab, &t10}, 1),
              "cross_entropy_bwd: dy must be [10] (one loss per row, reduction=\"none\"), got []");
}

int main(void)
{
    arena *a = arena_create();
    test_gather(a);
    test_gather_bwd(a);
    test_one_hot(a);
    test_argmax(a);
    test_cross_entropy(a);
    test_cross_entropy_fd(a);
    test_batchnorm_infer_var(a);
    test_errors(a);
    arena_destroy(a);
    return test_summary("test_op_index");
}
