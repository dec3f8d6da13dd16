/* test_op_pool.c — maxpool, avgpool and their backward ops: hand-computed
 * windows (padding never read as a value, include/exclude-pad divisors,
 * ceil_mode, dilation, "same", 1-D to 3-D), gradients against finite
 * differences, the maxpool tie rule, and inference errors with exact text. */
#include "op_test_util.h"
#include "test_util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

extern const op_desc op_maxpool_desc, op_avgpool_desc, op_maxpool_bwd_desc, op_avgpool_bwd_desc;
static const op_desc *const MAXP = &op_maxpool_desc, *const AVGP = &op_avgpool_desc;
static const op_desc *const MAXB = &op_maxpool_bwd_desc, *const AVGB = &op_avgpool_bwd_desc;

static uint64_t rng_state = 0xD1B54A32D192ED03ull;

/* vals, or random values in [-1, 1) when vals is NULL. */
static ref_tensor tensor_of(int rank, const int64_t *dims, const double *vals)
{
    return optest_ref_of(rank, dims, vals, &rng_state);
}

/* Run op d on 1 or 2 inputs; compare with want_dims/want when given. */
static ref_tensor run(const op_desc *d, const xnode *n, const ref_tensor *a, const ref_tensor *b, int rank,
                      const int64_t *want_dims, const double *want, const char *what)
{
    xdnn_diags_t *dg = xdnn_diags_create();
    const ref_tensor *in[2] = {a, b};
    ref_tensor out;
    xdnn_status st = optest_run(d, n, b ? 2 : 1, in, 1, &out, dg);
    CHECK(st == XDNN_OK, "%s: %s failed: %s", what, d->name, optest_first_error(dg));
    xdnn_diags_destroy(dg);
    if (st != XDNN_OK)
        return out;
    bool shape_ok = !want_dims || (out.rank == rank && memcmp(out.dims, want_dims, sizeof(int64_t) * (size_t)rank) == 0);
    char got[128], exp[128];
    CHECK(shape_ok, "%s: shape %s, want %s", what, shape_str(got, sizeof got, out.rank, out.dims),
          want_dims ? shape_str(exp, sizeof exp, rank, want_dims) : "");
    if (want && shape_ok)
        for (int64_t i = 0; i < out.numel; i++)
            CHECK(fabs(out.data[i] - want[i]) < 1e-12 || (isnan(want[i]) && isnan(out.data[i])),
                  "%s: element %" PRId64 " = %.15g, want %.15g", what, i, out.data[i], want[i]);
    return out;
}

static void check_fwd(const op_desc *d, const xnode *n, const ref_tensor *x, int rank, const int64_t *dims,
                      const double *want, const char *what)
{
    ref_tensor y = run(d, n, x, NULL, rank, dims, want, what);
    optest_ref_free(&y);
}

static void test_forward(arena *a)
{
    xnode n;
    double v16[16];
    for (int i = 0; i < 16; i++)
        v16[i] = i + 1;
    ref_tensor x = tensor_of(4, (int64_t[]){1, 1, 4, 4}, v16);
    optest_node(a, &n, MAXP);
    optest_set_int(&n, MAXP, "window", 2);
    check_fwd(MAXP, &n, &x, 4, (int64_t[]){1, 1, 2, 2}, (double[]){6, 8, 14, 16}, "maxpool 2x2 (stride = window)");
    optest_node(a, &n, AVGP);
    optest_set_int(&n, AVGP, "window", 2);
    check_fwd(AVGP, &n, &x, 4, (int64_t[]){1, 1, 2, 2}, (double[]){3.5, 5.5, 11.5, 13.5}, "avgpool 2x2");
    /* window [2, 4], stride [2, 1]: rows {0,1},{2,3}, all 4 columns, one column position */
    optest_set_ints(&n, AVGP, "window", 2, (int64_t[]){2, 4});
    optest_set_ints(&n, AVGP, "stride", 2, (int64_t[]){2, 1});
    check_fwd(AVGP, &n, &x, 4, (int64_t[]){1, 1, 2, 1}, (double[]){4.5, 12.5}, "avgpool window [2,4]");
    optest_ref_free(&x);

    /* 3x3 window, stride 1, pad 1 on 1..9: exclude-pad divides by taps inside x,
     * include-pad by 9 everywhere */
    double v9[9];
    for (int i = 0; i < 9; i++)
        v9[i] = i + 1;
    x = tensor_of(4, (int64_t[]){1, 1, 3, 3}, v9);
    optest_node(a, &n, AVGP);
    optest_set_int(&n, AVGP, "window", 3);
    optest_set_int(&n, AVGP, "stride", 1);
    optest_set_int(&n, AVGP, "pad", 1);
    check_fwd(AVGP, &n, &x, 4, (int64_t[]){1, 1, 3, 3},
              (double[]){12 / 4., 21 / 6., 16 / 4., 27 / 6., 45 / 9., 33 / 6., 24 / 4., 39 / 6., 28 / 4.},
              "avgpool pad 1 exclude");
    optest_set_bool(&n, AVGP, "include_pad", true);
    check_fwd(AVGP, &n, &x, 4, (int64_t[]){1, 1, 3, 3},
              (double[]){12 / 9., 21 / 9., 16 / 9., 27 / 9., 45 / 9., 33 / 9., 24 / 9., 39 / 9., 28 / 9.},
              "avgpool pad 1 include");
    /* maxpool with the same pad: padding is never a candidate (all of x is positive anyway) */
    optest_node(a, &n, MAXP);
    optest_set_int(&n, MAXP, "window", 3);
    optest_set_int(&n, MAXP, "stride", 1);
    optest_set_int(&n, MAXP, "pad", 1);
    check_fwd(MAXP, &n, &x, 4, (int64_t[]){1, 1, 3, 3}, (double[]){5, 6, 6, 8, 9, 9, 8, 9, 9}, "maxpool pad 1");
    optest_ref_free(&x);

    /* 1-D maxpool, window 2 stride 2 pad 1 on negatives: a padding zero must not win */
    x = tensor_of(3, (int64_t[]){1, 1, 4}, (double[]){1, -2, 3, -4});
    optest_node(a, &n, MAXP);
    optest_set_int(&n, MAXP, "window", 2);
    optest_set_int(&n, MAXP, "pad", 1);
    check_fwd(MAXP, &n, &x, 3, (int64_t[]){1, 1, 3}, (double[]){1, 3, -4}, "maxpool pad on negatives");
    optest_ref_free(&x);

    /* ceil_mode on 1..5, window 2: floor gives 2 windows, ceil 3 (the last one clipped) */
    x = tensor_of(3, (int64_t[]){1, 1, 5}, (double[]){1, 2, 3, 4, 5});
    optest_node(a, &n, MAXP);
    optest_set_int(&n, MAXP, "window", 2);
    check_fwd(MAXP, &n, &x, 3, (int64_t[]){1, 1, 2}, (double[]){2, 4}, "maxpool floor");
    optest_set_bool(&n, MAXP, "ceil_mode", true);
    check_fwd(MAXP, &n, &x, 3, (int64_t[]){1, 1, 3}, (double[]){2, 4, 5}, "maxpool ceil");
    optest_node(a, &n, AVGP);
    optest_set_int(&n, AVGP, "window", 2);
    optest_set_bool(&n, AVGP, "ceil_mode", true);
    check_fwd(AVGP, &n, &x, 3, (int64_t[]){1, 1, 3}, (double[]){1.5, 3.5, 5}, "avgpool ceil exclude");
    /* include_pad counts taps inside the padded extent only: the clipped window still divides by 1 */
    optest_set_bool(&n, AVGP, "include_pad", true);
    check_fwd(AVGP, &n, &x, 3, (int64_t[]){1, 1, 3}, (double[]){1.5, 3.5, 5}, "avgpool ceil include");
    /* ... but with pad 1 the padding taps count: windows [-1,0], [1,2], [3,4] ; a 4th would start
     * at x index 5, in the right pad, so ceil_mode drops it */
    optest_set_int(&n, AVGP, "pad", 1);
    check_fwd(AVGP, &n, &x, 3, (int64_t[]){1, 1, 3}, (double[]){1 / 2., 5 / 2., 9 / 2.}, "avgpool ceil pad include");
    /* "same": out = ceil(5/2) = 3, total pad (3-1)*2 + 3 - 5 = 2 -> [1, 1] */
    optest_node(a, &n, AVGP);
    optest_set_int(&n, AVGP, "window", 3);
    optest_set_int(&n, AVGP, "stride", 2);
    optest_set_str(&n, AVGP, "pad", "same");
    check_fwd(AVGP, &n, &x, 3, (int64_t[]){1, 1, 3}, (double[]){1.5, 3, 4.5}, "avgpool same");
    optest_ref_free(&x);

    /* ceil_mode: a last window that would start in the right padding is dropped:
     * in 4, window 2, stride 3, pad 1 -> ceil((4+2-2)/3)+1 = 3, but window 2 starts at 5 >= 4+1 */
    x = tensor_of(3, (int64_t[]){1, 1, 4}, (double[]){1, 2, 3, 4});
    optest_node(a, &n, MAXP);
    optest_set_int(&n, MAXP, "window", 2);
    optest_set_int(&n, MAXP, "stride", 3);
    optest_set_int(&n, MAXP, "pad", 1);
    optest_set_bool(&n, MAXP, "ceil_mode", true);
    check_fwd(MAXP, &n, &x, 3, (int64_t[]){1, 1, 2}, (double[]){1, 4}, "maxpool ceil drop");
    optest_ref_free(&x);

    /* dilation 2: taps o and o+2 */
    x = tensor_of(3, (int64_t[]){1, 1, 5}, (double[]){5, 1, 2, 7, 3});
    optest_node(a, &n, MAXP);
    optest_set_int(&n, MAXP, "window", 2);
    optest_set_int(&n, MAXP, "stride", 1);
    optest_set_int(&n, MAXP, "dilation", 2);
    check_fwd(MAXP, &n, &x, 3, (int64_t[]){1, 1, 3}, (double[]){5, 7, 3}, "maxpool dilation 2");
    optest_ref_free(&x);

    /* NaN propagates */
    x = tensor_of(3, (int64_t[]){1, 1, 3}, (double[]){1, NAN, 3});
    optest_node(a, &n, MAXP);
    optest_set_int(&n, MAXP, "window", 3);
    check_fwd(MAXP, &n, &x, 3, (int64_t[]){1, 1, 1}, (double[]){NAN}, "maxpool NaN");
    optest_ref_free(&x);

    /* 3-D, 2 channels (the second is the first negated) */
    double v[16];
    for (int i = 0; i < 8; i++) {
        v[i] = i + 1;
        v[8 + i] = -(i + 1);
    }
    x = tensor_of(5, (int64_t[]){1, 2, 2, 2, 2}, v);
    optest_node(a, &n, MAXP);
    optest_set_int(&n, MAXP, "window", 2);
    check_fwd(MAXP, &n, &x, 5, (int64_t[]){1, 2, 1, 1, 1}, (double[]){8, -1}, "maxpool 3d");
    optest_node(a, &n, AVGP);
    optest_set_ints(&n, AVGP, "window", 3, (int64_t[]){2, 1, 2});
    check_fwd(AVGP, &n, &x, 5, (int64_t[]){1, 2, 1, 2, 1}, (double[]){(1 + 2 + 5 + 6) / 4., (3 + 4 + 7 + 8) / 4.,
                                                                        -(1 + 2 + 5 + 6) / 4., -(3 + 4 + 7 + 8) / 4.},
              "avgpool 3d [2,1,2]");
    optest_ref_free(&x);
}

/* maxpool_bwd on hand cases: ties go to the first max in window order. */
static void test_maxpool_bwd_ties(arena *a)
{
    xnode n;
    ref_tensor x = tensor_of(3, (int64_t[]){1, 1, 4}, (double[]){3, 3, 1, 2});
    ref_tensor dy = tensor_of(3, (int64_t[]){1, 1, 3}, (double[]){1, 10, 100});
    optest_node(a, &n, MAXB);
    optest_set_int(&n, MAXB, "window", 2);
    optest_set_int(&n, MAXB, "stride", 1);
    /* windows (3,3) -> x0; (3,1) -> x1; (1,2) -> x3 */
    ref_tensor dx = run(MAXB, &n, &dy, &x, 3, (int64_t[]){1, 1, 4}, (double[]){1, 10, 0, 100}, "maxpool_bwd ties 1d");
    optest_ref_free(&dx);
    optest_ref_free(&x);
    optest_ref_free(&dy);

    /* 2-D: all equal in a 2x2 window -> (0,0) takes it; overlapping windows accumulate */
    x = tensor_of(4, (int64_t[]){1, 1, 2, 3}, (double[]){7, 7, 7, 7, 7, 7});
    dy = tensor_of(4, (int64_t[]){1, 1, 1, 2}, (double[]){1, 2});
    optest_node(a, &n, MAXB);
    optest_set_int(&n, MAXB, "window", 2);
    optest_set_int(&n, MAXB, "stride", 1);
    dx = run(MAXB, &n, &dy, &x, 4, (int64_t[]){1, 1, 2, 3}, (double[]){1, 2, 0, 0, 0, 0}, "maxpool_bwd ties 2d");
    optest_ref_free(&dx);
    optest_ref_free(&dy);
    /* row-major order: the max at (1,0) beats a later equal one at (1,1) and an earlier smaller (0,*) */
    x.data[3] = 9;
    x.data[4] = 9;
    dy = tensor_of(4, (int64_t[]){1, 1, 1, 2}, (double[]){1, 2});
    dx = run(MAXB, &n, &dy, &x, 4, (int64_t[]){1, 1, 2, 3}, (double[]){0, 0, 0, 1, 2, 0}, "maxpool_bwd row-major");
    optest_ref_free(&dx);
    optest_ref_free(&dy);
    optest_ref_free(&x);

    /* NaN: the first NaN takes the gradient */
    x = tensor_of(3, (int64_t[]){1, 1, 3}, (double[]){5, NAN, NAN});
    dy = tensor_of(3, (int64_t[]){1, 1, 1}, (double[]){4});
    optest_node(a, &n, MAXB);
    optest_set_int(&n, MAXB, "window", 3);
    dx = run(MAXB, &n, &dy, &x, 3, (int64_t[]){1, 1, 3}, (double[]){0, 4, 0}, "maxpool_bwd NaN");
    optest_ref_free(&dx);
    optest_ref_free(&dy);
    optest_ref_free(&x);
}

/* Gradient configs checked by central differences of f(x) = <pool(x), dy>. */
typedef struct pool_case {
    bool max;
    int nsp;
    int64_t in[3], win[3], stride[3], pad;
    bool include_pad, ceil_mode;
    int64_t dilation;
} pool_case;

static const pool_case grad_cases[] = {
    {false, 1, {7}, {3}, {2}, 1, false, false, 1},
    {false, 1, {7}, {3}, {2}, 1, true, true, 1},
    {false, 2, {5, 6}, {3, 2}, {1, 2}, 1, false, true, 1},
    {false, 2, {5, 6}, {3, 3}, {2, 2}, 1, true, false, 1},
    {false, 3, {4, 3, 5}, {2, 2, 3}, {1, 2, 2}, 1, false, true, 1},
    {true, 1, {9}, {3}, {2}, 1, false, true, 2},
    {true, 2, {6, 5}, {3, 2}, {2, 1}, 1, false, false, 1},
    {true, 2, {6, 7}, {2, 3}, {1, 2}, 1, false, true, 2},
    {true, 3, {4, 5, 3}, {2, 3, 2}, {2, 1, 1}, 1, false, false, 1},
};

static void set_pool_attrs(xnode *n, const op_desc *d, const pool_case *pc)
{
    optest_set_ints(n, d, "window", pc->nsp, pc->win);
    optest_set_ints(n, d, "stride", pc->nsp, pc->stride);
    optest_set_int(n, d, "pad", pc->pad);
    optest_set_bool(n, d, "ceil_mode", pc->ceil_mode);
    if (pc->max)
        optest_set_int(n, d, "dilation", pc->dilation);
    else
        optest_set_bool(n, d, "include_pad", pc->include_pad);
}

static double pooled_dot(const op_desc *d, const xnode *n, const ref_tensor *x, const ref_tensor *dy)
{
    ref_tensor y = run(d, n, x, NULL, 0, NULL, NULL, "fd");
    double s = 0;
    for (int64_t i = 0; y.data && i < y.numel; i++)
        s += y.data[i] * dy->data[i];
    optest_ref_free(&y);
    return s;
}

static void test_grad_fd(arena *a, const pool_case *pc, int index)
{
    const op_desc *fwd = pc->max ? MAXP : AVGP, *bwd = pc->max ? MAXB : AVGB;
    int64_t xd[5] = {2, 1};
    for (int i = 0; i < pc->nsp; i++)
        xd[2 + i] = pc->in[i];
    int rank = pc->nsp + 2;
    ref_tensor x = tensor_of(rank, xd, NULL);
    char what[64];
    snprintf(what, sizeof what, "grad case %d (%s)", index, fwd->name);
    xnode nf, nb;
    optest_node(a, &nf, fwd);
    set_pool_attrs(&nf, fwd, pc);
    optest_node(a, &nb, bwd);
    set_pool_attrs(&nb, bwd, pc);
    ref_tensor y = run(fwd, &nf, &x, NULL, 0, NULL, NULL, what);
    ref_tensor dy = tensor_of(rank, y.dims, NULL);
    ref_tensor dx = run(bwd, &nb, &dy, &x, rank, xd, NULL, what);
    /* Random x has no ties, so maxpool is linear near x for |h| below the gap
     * between window values; avgpool is linear everywhere. */
    const double h = 1e-7;
    double maxerr = dx.data ? 0 : INFINITY, maxg = 0;
    for (int64_t i = 0; dx.data && i < x.numel; i++) {
        double keep = x.data[i];
        x.data[i] = keep + h;
        double fp = pooled_dot(fwd, &nf, &x, &dy);
        x.data[i] = keep - h;
        double fm = pooled_dot(fwd, &nf, &x, &dy);
        x.data[i] = keep;
        double fd = (fp - fm) / (2 * h);
        maxerr = fmax(maxerr, fabs(fd - dx.data[i]));
        maxg = fmax(maxg, fabs(dx.data[i]));
    }
    CHECK(maxerr < 1e-6, "%s: dx differs from finite differences by %g", what, maxerr);
    CHECK(maxg > 0.01, "%s: dx is (nearly) all zero (max %g): the check compared nothing", what, maxg);
    optest_ref_free(&x);
    optest_ref_free(&y);
    optest_ref_free(&dy);
    optest_ref_free(&dx);
}

static void test_errors(arena *a)
{
    xnode n;
    tinfo x2 = optest_tinfo(XDNN_F32, 4, (int64_t[]){1, 3, 4, 4}), x1 = optest_tinfo(XDNN_F32, 3, (int64_t[]){1, 3, 4});
    const tinfo *in2[1] = {&x2}, *in1[1] = {&x1};
    optest_node(a, &n, MAXP);
    optest_expect_infer_error(MAXP, &n, 1, in2, 1,
                 "maxpool: attribute 'window' is required (an int or a list of 2 ints) (x is [1, 3, 4, 4])");
    tinfo bad = optest_tinfo(XDNN_F32, 2, (int64_t[]){3, 4});
    const tinfo *inbad[1] = {&bad};
    optest_set_int(&n, MAXP, "window", 2);
    optest_expect_infer_error(MAXP, &n, 1, inbad, 1,
                 "maxpool: x must have rank 3 to 5 ([N, C, W], [N, C, H, W] or [N, C, D, H, W]), got rank 2: x is [3, 4]");
    optest_set_ints(&n, MAXP, "window", 3, (int64_t[]){2, 2, 2});
    optest_expect_infer_error(MAXP, &n, 1, in2, 1,
                 "maxpool: attribute 'window' must be an int or a list of 2 ints (one per spatial dim), got [2, 2, 2] "
                 "(x is [1, 3, 4, 4])");
    optest_set_int(&n, MAXP, "window", 0);
    optest_expect_infer_error(MAXP, &n, 1, in1, 1,
                 "maxpool: attribute 'window' must be >= 1 along every spatial dim, got 0 along W (x is [1, 3, 4])");
    optest_set_int(&n, MAXP, "window", 2);
    optest_set_pads(&n, MAXP, "pad", 1, (int64_t[]){0, 2});
    optest_expect_infer_error(MAXP, &n, 1, in1, 1,
                 "maxpool: attribute 'pad' is too large along W: pad [0, 2] must be smaller than the window extent 2, "
                 "or a window would see only padding (x is [1, 3, 4])");
    optest_node(a, &n, AVGP);
    optest_set_int(&n, AVGP, "window", 5);
    optest_expect_infer_error(AVGP, &n, 1, in1, 1,
                 "avgpool: output size along W would be < 1: input 4 + pad 0+0 = 4 is smaller than the window extent 5 "
                 "(window 5, dilation 1) (x is [1, 3, 4])");
    /* the bwd ops check dy against the forward output */
    optest_node(a, &n, MAXB);
    optest_set_int(&n, MAXB, "window", 2);
    tinfo dy = optest_tinfo(XDNN_F32, 3, (int64_t[]){1, 3, 3});
    const tinfo *inb[2] = {&dy, &x1};
    optest_expect_infer_error(MAXB, &n, 2, inb, 1,
                 "maxpool_bwd: dy is [1, 3, 3] but maxpool of x [1, 3, 4] (window [2], stride [2], pad [[0, 0]], "
                 "dilation [1]) gives [1, 3, 2]");
    optest_node(a, &n, AVGB);
    optest_set_int(&n, AVGB, "window", 3);
    optest_set_int(&n, AVGB, "pad", 1);
    optest_expect_infer_error(AVGB, &n, 2, inb, 1,
                 "avgpool_bwd: dy is [1, 3, 3] but avgpool of x [1, 3, 4] (window [3], stride [3], pad [[1, 1]], "
                 "dilation [1]) gives [1, 3, 2]");
}

/* Defaults, shapes of the bwd ops and flops. */
static void test_infer_and_flops(arena *a)
{
    xnode n;
    optest_node(a, &n, AVGP);
    CHECK(!op_attr_present(&n, AVGP, "window") && !op_attr_present(&n, AVGP, "stride"),
          "avgpool: window and stride have no default");
    CHECK(op_attr_int(&n, AVGP, "pad") == 0 && !op_attr_bool(&n, AVGP, "include_pad") &&
              !op_attr_bool(&n, AVGP, "ceil_mode"),
          "avgpool defaults");
    optest_node(a, &n, AVGB);
    optest_set_int(&n, AVGB, "window", 2);
    optest_set_int(&n, AVGB, "stride", 1);
    tinfo dy = optest_tinfo(XDNN_BF16, 3, (int64_t[]){1, 3, 3}), x = optest_tinfo(XDNN_F32, 3, (int64_t[]){1, 3, 4});
    const tinfo *in[2] = {&dy, &x};
    tinfo out;
    xdnn_diags_t *dg = xdnn_diags_create();
    CHECK(optest_infer(AVGB, &n, 2, in, 1, &out, dg) == XDNN_OK, "avgpool_bwd infer: %s", optest_first_error(dg));
    CHECK(out.rank == 3 && out.dims[2] == 4 && out.dtype == XDNN_BF16, "avgpool_bwd: dx has x's shape, dy's dtype");
    xdnn_diags_destroy(dg);

    optest_node(a, &n, MAXP);
    optest_set_ints(&n, MAXP, "window", 2, (int64_t[]){3, 2});
    /* window 3x2 (stride = window) over x [2, 8, 15, 10]: y is [2, 8, 5, 5], 6 taps per output */
    tinfo px = optest_tinfo(XDNN_F32, 4, (int64_t[]){2, 8, 15, 10});
    tinfo py = optest_tinfo(XDNN_F32, 4, (int64_t[]){2, 8, 5, 5});
    double f = optest_flops(MAXP, &n, 1, &px, 1, &py);
    CHECK(f == 2.0 * 8 * 5 * 5 * 6, "maxpool flops %g", f);
}

int main(void)
{
    arena *a = arena_create();
    test_forward(a);
    test_maxpool_bwd_ties(a);
    int ncases = (int)(sizeof grad_cases / sizeof grad_cases[0]);
    for (int i = 0; i < ncases; i++)
        test_grad_fd(a, &grad_cases[i], i);
    test_errors(a);
    test_infer_and_flops(a);
    arena_destroy(a);
    printf("test_op_pool: %d gradient cases\n", ncases);
    if (test_failures())
        fprintf(stderr, "test_op_pool: rng seed 0xD1B54A32D192ED03\n");
    return test_summary("test_op_pool");
}
