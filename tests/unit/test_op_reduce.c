/* test_op_reduce.c — reduce, softmax, log_softmax and their backward ops
 * against known answers: every reduction on hand-summed inputs over several
 * axis sets with and without keepdims, softmax rows summing to 1 (also for
 * huge logits, which only max-subtraction survives), log_softmax =
 * log(softmax), the backward ops against central finite differences, and
 * the inference errors. */
#include "op_test_util.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static bool near(double got, double want, double rtol)
{
    return fabs(got - want) <= rtol * fmax(1.0, fabs(want));
}

/* Run d on nin inputs; on failure the first error message goes to msg. */
static xdnn_status run(const op_desc *d, const xnode *n, int nin, const ref_tensor *ins, ref_tensor *out,
                       char *msg, size_t len)
{
    const ref_tensor *in[2] = {NULL, NULL};
    for (int i = 0; i < nin; i++)
        in[i] = &ins[i];
    xdnn_diags_t *dg = xdnn_diags_create();
    xdnn_status st = optest_run(d, n, nin, in, 1, out, dg);
    snprintf(msg, len, "%s", optest_first_error(dg));
    xdnn_diags_destroy(dg);
    return st;
}

static void check_shape(const ref_tensor *y, int rank, const int64_t *dims, const char *what)
{
    bool ok = y->rank == rank;
    for (int i = 0; ok && i < rank; i++)
        ok = y->dims[i] == dims[i];
    CHECK(ok, "%s: got rank %d [%lld, %lld, %lld]", what, y->rank, (long long)y->dims[0],
          (long long)y->dims[1], (long long)y->dims[2]);
}

/* ---- reduce */

/* x[i][j][k] = 12 i + 4 j + k over [2, 3, 4] (0..23). */
static void test_reduce_axes(arena *a)
{
    const op_desc *d = optest_op_named("reduce");
    if (!d)
        return;
    double xv[24];
    for (int i = 0; i < 24; i++)
        xv[i] = i;
    const int64_t xd[] = {2, 3, 4};
    ref_tensor x = optest_ref_of(3, xd, xv, NULL), y;
    char msg[512];
    xnode n;

    /* default: sum over all axes, keepdims -> [1, 1, 1] = 0 + ... + 23 = 276 */
    optest_node(a, &n, d);
    if (run(d, &n, 1, &x, &y, msg, sizeof msg) == XDNN_OK) {
        check_shape(&y, 3, (const int64_t[]){1, 1, 1}, "sum all keepdims");
        CHECK(y.data[0] == 276, "sum all = %g", y.data[0]);
        optest_ref_free(&y);
    }
    optest_set_bool(&n, d, "keepdims", false);
    if (run(d, &n, 1, &x, &y, msg, sizeof msg) == XDNN_OK) {
        CHECK(y.rank == 0 && y.numel == 1 && y.data[0] == 276, "sum all, no keepdims: rank %d, %g", y.rank,
              y.data[0]);
        optest_ref_free(&y);
    }

    /* axes [1]: sum_j (12 i + 4 j + k) = 36 i + 12 + 3 k, shape [2, 1, 4] */
    optest_node(a, &n, d);
    optest_set_ints(&n, d, "axes", 1, (const int64_t[]){1});
    if (run(d, &n, 1, &x, &y, msg, sizeof msg) == XDNN_OK) {
        check_shape(&y, 3, (const int64_t[]){2, 1, 4}, "sum axis 1");
        for (int i = 0; i < 2; i++)
            for (int k = 0; k < 4; k++)
                CHECK(y.data[i * 4 + k] == 36 * i + 12 + 3 * k, "sum axis1 [%d,0,%d] = %g", i, k,
                      y.data[i * 4 + k]);
        optest_ref_free(&y);
    }

    /* axes [0, -1], keepdims=false: sum_{i,k} = 8 (4 j) + 2*6 + 4*12 = 32 j + 60, shape [3] */
    optest_node(a, &n, d);
    optest_set_ints(&n, d, "axes", 2, (const int64_t[]){0, -1});
    optest_set_bool(&n, d, "keepdims", false);
    if (run(d, &n, 1, &x, &y, msg, sizeof msg) == XDNN_OK) {
        check_shape(&y, 1, (const int64_t[]){3}, "sum axes 0,-1");
        for (int j = 0; j < 3; j++)
            CHECK(y.data[j] == 32 * j + 60, "sum axes0,2 [%d] = %g", j, y.data[j]);
        optest_ref_free(&y);
    }

    /* mean over the last axis as a single int: 12 i + 4 j + 1.5 */
    optest_node(a, &n, d);
    optest_set_str(&n, d, "op", "mean");
    optest_set_int(&n, d, "axes", -1);
    if (run(d, &n, 1, &x, &y, msg, sizeof msg) == XDNN_OK) {
        check_shape(&y, 3, (const int64_t[]){2, 3, 1}, "mean axis -1");
        for (int r = 0; r < 6; r++)
            CHECK(y.data[r] == 4 * r + 1.5, "mean row %d = %g", r, y.data[r]);
        optest_ref_free(&y);
    }

    /* empty axes list: nothing reduced (NumPy axis=()) */
    optest_node(a, &n, d);
    optest_set_ints(&n, d, "axes", 0, NULL);
    if (run(d, &n, 1, &x, &y, msg, sizeof msg) == XDNN_OK) {
        check_shape(&y, 3, xd, "axes []");
        CHECK(y.data[23] == 23 && y.data[5] == 5, "axes [] copies");
        optest_ref_free(&y);
    }
    optest_ref_free(&x);
}

/* NaN propagates through max, min and amax wherever it sits (as torch.amax / amin); +0 ranks above -0 whichever
 * comes first (IEEE 754-2019 maximum / minimum, the GPU's max.NaN / min.NaN), so the answer does not hang on the
 * order of the slice. */
static void test_reduce_specials(arena *a, const op_desc *d)
{
    static const struct {
        const char *op;
        double x[4], want;
    } cases[] = {
        {"max", {NAN, 1, 2, 3}, NAN},       {"max", {1, 2, 3, NAN}, NAN},      {"min", {NAN, -1, 2, 3}, NAN},
        {"min", {1, 2, -3, NAN}, NAN},      {"amax", {NAN, -5, 2, 3}, NAN},    {"amax", {1, -5, 2, NAN}, NAN},
        {"max", {-0.0, 0.0, -1, -2}, 0.0},  {"max", {0.0, -0.0, -1, -2}, 0.0}, {"max", {-1, -0.0, -2, -0.0}, -0.0},
        {"min", {0.0, -0.0, 1, 2}, -0.0},   {"min", {-0.0, 0.0, 1, 2}, -0.0},  {"min", {1, 0.0, 2, 0.0}, 0.0},
        {"max", {-INFINITY, -INFINITY, -INFINITY, -INFINITY}, -INFINITY},      {"max", {1, INFINITY, 2, 3}, INFINITY},
        {"amax", {-0.0, -0.0, -0.0, -0.0}, 0.0},
    };
    const int64_t xd[] = {1, 4};
    char msg[512];
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ref_tensor x = optest_ref_of(2, xd, cases[c].x, NULL), y;
        xnode n;
        optest_node(a, &n, d);
        optest_set_str(&n, d, "op", cases[c].op);
        optest_set_ints(&n, d, "axes", 1, (const int64_t[]){1});
        if (run(d, &n, 1, &x, &y, msg, sizeof msg) != XDNN_OK) {
            CHECK(false, "reduce %s (case %zu) failed: %s", cases[c].op, c, msg);
        } else {
            const double got = y.data[0], want = cases[c].want;
            CHECK(isnan(want) ? isnan(got) : got == want && !signbit(got) == !signbit(want),
                  "reduce %s of [%g, %g, %g, %g] = %g, want %g", cases[c].op, cases[c].x[0], cases[c].x[1],
                  cases[c].x[2], cases[c].x[3], got, want);
            optest_ref_free(&y);
        }
        optest_ref_free(&x);
    }
}

/* Every op on rows of [[3, -4, 1, 2], [-0.5, 2, -6, 1]] along axis 1, keepdims=false. */
static void test_reduce_ops(arena *a)
{
    const op_desc *d = optest_op_named("reduce");
    if (!d)
        return;
    static const struct {
        const char *op;
        double r0, r1;
    } cases[] = {
        {"sum", 2, -3.5},   {"mean", 0.5, -0.875},
        {"max", 3, 2},      {"min", -4, -6},
        {"amax", 4, 6},     {"prod", -24, 6},
        {"norm1", 10, 9.5}, {"norm2", 5.477225575051661, 6.422616289332565}, /* sqrt(30), sqrt(41.25) */
    };
    const int64_t xd[] = {2, 4};
    ref_tensor x = optest_ref_of(2, xd, (const double[]){3, -4, 1, 2, -0.5, 2, -6, 1}, NULL), y;
    char msg[512];
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        xnode n;
        optest_node(a, &n, d);
        optest_set_str(&n, d, "op", cases[c].op);
        optest_set_ints(&n, d, "axes", 1, (const int64_t[]){1});
        optest_set_bool(&n, d, "keepdims", false);
        if (run(d, &n, 1, &x, &y, msg, sizeof msg) != XDNN_OK) {
            CHECK(false, "reduce %s failed: %s", cases[c].op, msg);
            continue;
        }
        check_shape(&y, 1, (const int64_t[]){2}, cases[c].op);
        CHECK(near(y.data[0], cases[c].r0, 1e-15) && near(y.data[1], cases[c].r1, 1e-15),
              "reduce %s = [%.17g, %.17g], want [%g, %g]", cases[c].op, y.data[0], y.data[1], cases[c].r0,
              cases[c].r1);
        optest_ref_free(&y);
    }
    /* NaN propagates through max (fmax alone would drop it) */
    x.data[1] = NAN;
    xnode n;
    optest_node(a, &n, d);
    optest_set_str(&n, d, "op", "max");
    optest_set_ints(&n, d, "axes", 1, (const int64_t[]){1});
    if (run(d, &n, 1, &x, &y, msg, sizeof msg) == XDNN_OK) {
        CHECK(isnan(y.data[0]) && y.data[1] == 2, "max with NaN = %g, %g", y.data[0], y.data[1]);
        optest_ref_free(&y);
    }
    optest_ref_free(&x);
    test_reduce_specials(a, d);
}

static void expect_infer_error(arena *a, const op_desc *d, void (*set)(xnode *, const op_desc *), int nin,
                               const tinfo *t0, const tinfo *t1, const char *want)
{
    xnode n;
    optest_node(a, &n, d);
    if (set)
        set(&n, d);
    const tinfo *in[2] = {t0, t1};
    tinfo out;
    xdnn_diags_t *dg = xdnn_diags_create();
    xdnn_status st = optest_infer(d, &n, nin, in, 1, &out, dg);
    CHECK(st == XDNN_ERR_SEMANTIC && strstr(optest_first_error(dg), want),
          "%s: status %d, message '%s', want '%s'", d->name, st, optest_first_error(dg), want);
    xdnn_diags_destroy(dg);
}

static void set_axis_3(xnode *n, const op_desc *d) { optest_set_ints(n, d, "axes", 1, (const int64_t[]){3}); }
static void set_axis_dup(xnode *n, const op_desc *d)
{
    optest_set_ints(n, d, "axes", 2, (const int64_t[]){1, -1});
}
static void set_bad_op(xnode *n, const op_desc *d) { optest_set_str(n, d, "op", "median"); }
static void set_sm_axis_2(xnode *n, const op_desc *d) { optest_set_int(n, d, "axis", 2); }

static void test_infer_errors(arena *a)
{
    const op_desc *r = optest_op_named("reduce"), *sm = optest_op_named("softmax");
    const op_desc *smb = optest_op_named("softmax_bwd");
    if (!r || !sm || !smb)
        return;
    tinfo x = optest_tinfo(XDNN_F32, 2, (const int64_t[]){2, 4});
    tinfo z = optest_tinfo(XDNN_F32, 2, (const int64_t[]){2, 5});
    expect_infer_error(a, r, set_axis_3, 1, &x, NULL,
                       "reduce: axis 3 in 'axes' is out of range for a rank-2 input (x is [2, 4])");
    expect_infer_error(a, r, set_axis_dup, 1, &x, NULL, "axis 1 appears twice in 'axes'");
    expect_infer_error(a, r, set_bad_op, 1, &x, NULL, "attribute 'op' must be one of");
    expect_infer_error(a, sm, set_sm_axis_2, 1, &x, NULL,
                       "softmax: attribute 'axis' (2) is out of range for x [2, 4]");
    expect_infer_error(a, smb, NULL, 2, &x, &z,
                       "softmax_bwd: dy [2, 4] and y [2, 5] must have the same shape");
    tinfo s = optest_tinfo(XDNN_F32, 0, NULL);
    expect_infer_error(a, sm, NULL, 1, &s, NULL, "needs an input of rank >= 1");

    /* dtype and shape pass through */
    xnode n;
    optest_node(a, &n, r);
    optest_set_bool(&n, r, "keepdims", false);
    optest_set_ints(&n, r, "axes", 1, (const int64_t[]){0});
    tinfo h = optest_tinfo(XDNN_BF16, 3, (const int64_t[]){5, 6, 7}), out;
    const tinfo *in[1] = {&h};
    xdnn_diags_t *dg = xdnn_diags_create();
    CHECK(optest_infer(r, &n, 1, in, 1, &out, dg) == XDNN_OK && out.dtype == XDNN_BF16 && out.rank == 2 &&
              out.dims[0] == 6 && out.dims[1] == 7,
          "reduce bf16 [5,6,7] axes [0] -> %s rank %d", xdnn_dtype_name(out.dtype), out.rank);
    xdnn_diags_destroy(dg);
}

/* ---- softmax family */

static void test_softmax(arena *a)
{
    const op_desc *sm = optest_op_named("softmax"), *lsm = optest_op_named("log_softmax");
    if (!sm || !lsm)
        return;
    char msg[512];
    xnode n, nl;
    optest_node(a, &n, sm);
    optest_node(a, &nl, lsm);
    /* softmax([1,2,3]) and the same shifted by 1000 (overflows without max-subtraction) */
    const int64_t xd[] = {2, 3};
    ref_tensor x = optest_ref_of(2, xd, (const double[]){1, 2, 3, 1001, 1002, 1003}, NULL), y, ly;
    const double want[] = {0.09003057317038046, 0.24472847105479767, 0.6652409557748219};
    if (run(sm, &n, 1, &x, &y, msg, sizeof msg) == XDNN_OK) {
        check_shape(&y, 2, xd, "softmax");
        for (int r = 0; r < 2; r++) {
            double sum = 0;
            for (int k = 0; k < 3; k++) {
                CHECK(near(y.data[r * 3 + k], want[k], 1e-15), "softmax[%d][%d] = %.17g, want %.17g", r, k,
                      y.data[r * 3 + k], want[k]);
                sum += y.data[r * 3 + k];
            }
            CHECK(near(sum, 1, 1e-15), "row %d sums to %.17g", r, sum);
        }
        if (run(lsm, &nl, 1, &x, &ly, msg, sizeof msg) == XDNN_OK) {
            for (int i = 0; i < 6; i++)
                CHECK(near(ly.data[i], log(y.data[i]), 1e-14),
                      "log_softmax[%d] = %.17g, log(softmax) = %.17g", i, ly.data[i], log(y.data[i]));
            optest_ref_free(&ly);
        }
        optest_ref_free(&y);
    }
    optest_ref_free(&x);

    /* a +inf makes its whole row NaN (as PyTorch: x - max is NaN there, so the sum is); a row of -inf (fully
     * masked) is 0 / 0 = NaN; a row without either is untouched by its neighbours */
    x = optest_ref_of(2, xd, (const double[]){1, INFINITY, 2, -INFINITY, -INFINITY, -INFINITY}, NULL);
    bool ran = run(sm, &n, 1, &x, &y, msg, sizeof msg) == XDNN_OK;
    CHECK(ran, "softmax with +inf / all -inf rows: %s", msg);
    for (int i = 0; ran && i < 6; i++)
        CHECK(isnan(y.data[i]), "softmax with +inf / all -inf rows [%d] = %g, want NaN", i, y.data[i]);
    if (ran)
        optest_ref_free(&y);
    ran = run(lsm, &nl, 1, &x, &ly, msg, sizeof msg) == XDNN_OK;
    CHECK(ran, "log_softmax with +inf / all -inf rows: %s", msg);
    for (int i = 0; ran && i < 6; i++)
        CHECK(isnan(ly.data[i]), "log_softmax with +inf / all -inf rows [%d] = %g, want NaN", i, ly.data[i]);
    if (ran)
        optest_ref_free(&ly);
    optest_ref_free(&x);
    x = optest_ref_of(2, xd, (const double[]){1, 2, 3, 1, -INFINITY, 2}, NULL);
    ran = run(sm, &n, 1, &x, &y, msg, sizeof msg) == XDNN_OK;
    CHECK(ran, "softmax with one -inf: %s", msg);
    if (ran) {
        CHECK(near(y.data[0], want[0], 1e-15) && y.data[4] == 0 && near(y.data[3] + y.data[5], 1, 1e-15),
              "softmax with one -inf: %g %g %g | %g %g %g", y.data[0], y.data[1], y.data[2], y.data[3], y.data[4],
              y.data[5]);
        optest_ref_free(&y);
    }
    optest_ref_free(&x);

    /* axis 0 of a [3, 2]: columns are the rows; column 1 is constant -> 1/3 each */
    optest_set_int(&n, sm, "axis", 0);
    const int64_t cd[] = {3, 2};
    x = optest_ref_of(2, cd, (const double[]){1, 5, 2, 5, 3, 5}, NULL);
    if (run(sm, &n, 1, &x, &y, msg, sizeof msg) == XDNN_OK) {
        for (int k = 0; k < 3; k++) {
            CHECK(near(y.data[k * 2], want[k], 1e-15), "softmax axis0 [%d][0] = %.17g", k, y.data[k * 2]);
            CHECK(near(y.data[k * 2 + 1], 1.0 / 3, 1e-15), "softmax axis0 [%d][1] = %.17g", k,
                  y.data[k * 2 + 1]);
        }
        optest_ref_free(&y);
    }
    optest_ref_free(&x);
}

/* L(x) = sum dy * f(x) with f = softmax or log_softmax along axis 1 of [2, 4];
 * the bwd op given (dy, f(x)) must equal dL/dx by central differences. */
static void check_softmax_grad(arena *a, const char *fwd_name, const char *bwd_name)
{
    const op_desc *fwd = optest_op_named(fwd_name), *bwd = optest_op_named(bwd_name);
    if (!fwd || !bwd)
        return;
    char msg[512];
    xnode nf, nb;
    optest_node(a, &nf, fwd);
    optest_node(a, &nb, bwd);
    const int64_t xd[] = {2, 4};
    const double xv[] = {0.3, -1.2, 2.0, 0.7, -0.4, 0.1, 1.5, -2.2};
    const double dyv[] = {1.0, -0.5, 0.25, 2.0, -1.5, 0.3, 0.8, 1.1};
    ref_tensor x = optest_ref_of(2, xd, xv, NULL), dy = optest_ref_of(2, xd, dyv, NULL), y, dx, yp, ym;
    if (run(fwd, &nf, 1, &x, &y, msg, sizeof msg) != XDNN_OK) {
        CHECK(false, "%s: %s", fwd_name, msg);
        return;
    }
    ref_tensor bin[2] = {dy, y};
    int compared = 0;
    if (run(bwd, &nb, 2, bin, &dx, msg, sizeof msg) == XDNN_OK) {
        const double h = 1e-6;
        for (int i = 0; i < 8; i++) {
            double keep = x.data[i];
            x.data[i] = keep + h;
            run(fwd, &nf, 1, &x, &yp, msg, sizeof msg);
            x.data[i] = keep - h;
            run(fwd, &nf, 1, &x, &ym, msg, sizeof msg);
            x.data[i] = keep;
            double lp = 0, lm = 0;
            for (int k = 0; k < 8; k++) {
                lp += dyv[k] * yp.data[k];
                lm += dyv[k] * ym.data[k];
            }
            double fd = (lp - lm) / (2 * h);
            CHECK(fabs(dx.data[i] - fd) <= 1e-6 * fmax(1.0, fabs(fd)),
                  "%s [%d] = %.12g, finite difference %.12g", bwd_name, i, dx.data[i], fd);
            compared++;
            optest_ref_free(&yp);
            optest_ref_free(&ym);
        }
        optest_ref_free(&dx);
    }
    CHECK(compared == 8, "%s compared %d points", bwd_name, compared);
    optest_ref_free(&x);
    optest_ref_free(&dy);
    optest_ref_free(&y);
}

int main(void)
{
    arena *a = arena_create();
    test_reduce_axes(a);
    test_reduce_ops(a);
    test_infer_errors(a);
    test_softmax(a);
    check_softmax_grad(a, "softmax", "softmax_bwd");
    check_softmax_grad(a, "log_softmax", "log_softmax_bwd");
    arena_destroy(a);
    return test_summary("test_op_reduce");
}
