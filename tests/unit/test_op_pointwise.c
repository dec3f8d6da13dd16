/* test_op_pointwise.c — the pointwise family against known answers: every
 * forward op on tiny inputs (values from the textbook definitions), attribute
 * variants (leaky/clipped relu, elu alpha, swish/softplus beta, both gelu
 * forms), broadcasting and by-value scalars, dtype rules, inference errors,
 * every *_bwd op against central finite differences of its forward op, and
 * the GPU contract of pointwise_modes.def (only portable identifiers). */
#include "op_test_util.h"
#include "test_util.h"
#include "ops/pointwise.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static bool near(double got, double want, double rtol)
{
    if (isnan(want))
        return isnan(got);
    if (isinf(want))
        return got == want;
    return fabs(got - want) <= rtol * fmax(1.0, fabs(want));
}

/* Run op `name` (attributes already on n) on nin tensors; the output is in
 * *out (free with optest_ref_free).  Returns the status. */
static xdnn_status run(const op_desc *d, const xnode *n, int nin, const ref_tensor *ins, ref_tensor *out)
{
    const ref_tensor *in[3] = {NULL, NULL, NULL};
    for (int i = 0; i < nin; i++)
        in[i] = &ins[i];
    xdnn_diags_t *dg = xdnn_diags_create();
    xdnn_status st = optest_run(d, n, nin, in, 1, out, dg);
    CHECK(st == XDNN_OK, "%s failed: %s", d->name, optest_first_error(dg)); /* else the caller's checks are skipped */
    xdnn_diags_destroy(dg);
    return st;
}

/* ---- forward known answers on x = {-1.5, -0.5, 0.25, 2} (positive x for the log family) */

typedef struct known {
    const char *op;
    double y[4];
} known;

static const double xs_mixed[4] = {-1.5, -0.5, 0.25, 2.0};
static const double xs_pos[4] = {0.25, 1.0, 2.0, 4.0};

static const known known_mixed[] = {
    {"neg", {1.5, 0.5, -0.25, -2.0}},
    {"abs", {1.5, 0.5, 0.25, 2.0}},
    {"exp", {0.22313016014842982, 0.6065306597126334, 1.2840254166877414, 7.38905609893065}},
    {"sin", {-0.9974949866040544, -0.479425538604203, 0.24740395925452294, 0.9092974268256817}},
    {"cos", {0.0707372016677029, 0.8775825618903728, 0.9689124217106447, -0.4161468365471424}},
    {"tan", {-14.101419947171719, -0.5463024898437905, 0.25534192122103627, -2.185039863261519}},
    {"erf", {-0.9661051464753108, -0.5204998778130465, 0.2763263901682369, 0.9953222650189527}},
    {"floor", {-2.0, -1.0, 0.0, 2.0}},
    {"ceil", {-1.0, -0.0, 1.0, 2.0}},
    {"sigmoid", {0.18242552380635635, 0.3775406687981454, 0.5621765008857981, 0.8807970779778823}},
    {"tanh", {-0.9051482536448664, -0.46211715726000974, 0.24491866240370913, 0.9640275800758169}},
    {"relu", {0.0, 0.0, 0.25, 2.0}},
    {"gelu", {-0.10021080190328713, -0.15426876936299344, 0.14967658142073093, 1.9544997361036416}},
    {"gelu_tanh", {-0.10042842301976707, -0.15428599017485606, 0.149675350701685, 1.954597694087775}},
    {"swish", {-0.2736382857095345, -0.1887703343990727, 0.14054412522144952, 1.7615941559557646}},
    {"silu", {-0.2736382857095345, -0.1887703343990727, 0.14054412522144952, 1.7615941559557646}},
    {"elu", {-0.7768698398515702, -0.3934693402873666, 0.25, 2.0}},
    {"softplus", {0.20141327798275246, 0.4740769841801067, 0.8259394198788436, 2.1269280110429727}},
    {"mish", {-0.29809974216680685, -0.22074377465173, 0.1695724096638176, 1.9439589595339946}},
    {"identity", {-1.5, -0.5, 0.25, 2.0}},
    {"logical_not", {0.0, 0.0, 0.0, 0.0}},
};

static const known known_pos[] = {
    {"log", {-1.3862943611198906, 0.0, 0.6931471805599453, 1.3862943611198906}},
    {"sqrt", {0.5, 1.0, 1.4142135623730951, 2.0}},
    {"rsqrt", {2.0, 1.0, 0.7071067811865475, 0.5}},
    {"reciprocal", {4.0, 1.0, 0.5, 0.25}},
};

static void check_known(const known *k, const double *xs, arena *a)
{
    const op_desc *d = optest_op_named(k->op);
    if (!d)
        return;
    xnode n;
    optest_node(a, &n, d);
    int64_t dims[] = {4};
    ref_tensor x = optest_ref_of(1, dims, xs, NULL), y;
    if (run(d, &n, 1, &x, &y) == XDNN_OK) {
        CHECK(y.rank == 1 && y.dims[0] == 4, "%s: shape", k->op);
        for (int i = 0; i < 4; i++)
            CHECK(near(y.data[i], k->y[i], 1e-14), "%s(%g) = %.17g, want %.17g", k->op, xs[i], y.data[i],
                  k->y[i]);
        optest_ref_free(&y);
    } else {
        CHECK(false, "%s did not run", k->op);
    }
    optest_ref_free(&x);
}

/* y = op(x) on xs_mixed with one float attribute set. */
static void check_unary_attr(arena *a, const char *op, const char *attr1, double v1, const char *attr2,
                             double v2, const double want[4])
{
    const op_desc *d = optest_op_named(op);
    if (!d)
        return;
    xnode n;
    optest_node(a, &n, d);
    if (attr1)
        CHECK(optest_set_float(&n, d, attr1, v1), "set %s", attr1);
    if (attr2)
        CHECK(optest_set_float(&n, d, attr2, v2), "set %s", attr2);
    int64_t dims[] = {4};
    ref_tensor x = optest_ref_of(1, dims, xs_mixed, NULL), y;
    if (run(d, &n, 1, &x, &y) == XDNN_OK) {
        for (int i = 0; i < 4; i++)
            CHECK(near(y.data[i], want[i], 1e-14), "%s(%g; %s=%g) = %.17g, want %.17g", op, xs_mixed[i],
                  attr1 ? attr1 : "-", v1, y.data[i], want[i]);
        optest_ref_free(&y);
    }
    optest_ref_free(&x);
}

static void test_forward_known(arena *a)
{
    for (size_t i = 0; i < sizeof known_mixed / sizeof known_mixed[0]; i++)
        check_known(&known_mixed[i], xs_mixed, a);
    for (size_t i = 0; i < sizeof known_pos / sizeof known_pos[0]; i++)
        check_known(&known_pos[i], xs_pos, a);

    /* leaky (slope 0.1) and clipped (upper 1) relu */
    check_unary_attr(a, "relu", "slope", 0.1, "upper", 1.0, (const double[]){-0.15, -0.05, 0.25, 1.0});
    /* lower clip 0.5 with slope 0: y = max(x, 0.5) */
    check_unary_attr(a, "relu", "lower", 0.5, NULL, 0, (const double[]){0.5, 0.5, 0.5, 2.0});
    check_unary_attr(a, "elu", "alpha", 0.5, NULL, 0,
                     (const double[]){-0.3884349199257851, -0.1967346701436833, 0.25, 2.0});
    check_unary_attr(
        a, "swish", "beta", 2.0, NULL, 0,
        (const double[]){-0.07113880976635018, -0.13447071068499755, 0.15561483280046365, 1.964027580075817});
    check_unary_attr(
        a, "softplus", "beta", 2.0, NULL, 0,
        (const double[]){0.02429367578687098, 0.15663084375911143, 0.48703849209005334, 2.0090749639589047});

    /* gelu both forms at +-1: 0.5 x (1 + erf(x/sqrt2)) and the tanh approximation */
    const op_desc *gelu = optest_op_named("gelu");
    if (gelu) {
        xnode n;
        optest_node(a, &n, gelu);
        int64_t dims[] = {2};
        ref_tensor x = optest_ref_of(1, dims, (const double[]){1.0, -1.0}, NULL), y;
        if (run(gelu, &n, 1, &x, &y) == XDNN_OK) {
            CHECK(near(y.data[0], 0.8413447460685429, 1e-15), "gelu(1) = %.17g", y.data[0]);
            CHECK(near(y.data[1], -0.15865525393145707, 1e-15), "gelu(-1) = %.17g", y.data[1]);
            optest_ref_free(&y);
        }
        CHECK(optest_set_str(&n, gelu, "approx", "tanh"), "set approx");
        if (run(gelu, &n, 1, &x, &y) == XDNN_OK) {
            CHECK(near(y.data[0], 0.8411919906082768, 1e-15), "gelu(1, tanh) = %.17g", y.data[0]);
            CHECK(near(y.data[1], -0.15880800939172324, 1e-15), "gelu(-1, tanh) = %.17g", y.data[1]);
            optest_ref_free(&y);
        }
        optest_ref_free(&x);
    }

    /* softplus must not overflow: softplus(1000) = 1000, softplus(-1000) ~ e^-1000 = 0 */
    const op_desc *sp = optest_op_named("softplus");
    if (sp) {
        xnode n;
        optest_node(a, &n, sp);
        int64_t dims[] = {2};
        ref_tensor x = optest_ref_of(1, dims, (const double[]){1000.0, -1000.0}, NULL), y;
        if (run(sp, &n, 1, &x, &y) == XDNN_OK) {
            CHECK(y.data[0] == 1000.0, "softplus(1000) = %.17g", y.data[0]);
            CHECK(y.data[1] == 0.0, "softplus(-1000) = %.17g", y.data[1]);
            optest_ref_free(&y);
        }
        optest_ref_free(&x);
    }
}

/* ---- binary, comparison, logic and select with broadcasting */

static void check_binary(arena *a, const char *op, int ra, const int64_t *da, const double *va, int rb,
                         const int64_t *db, const double *vb, int ry, const int64_t *dy, const double *want)
{
    const op_desc *d = optest_op_named(op);
    if (!d)
        return;
    xnode n;
    optest_node(a, &n, d);
    ref_tensor in[2] = {optest_ref_of(ra, da, va, NULL), optest_ref_of(rb, db, vb, NULL)}, y;
    if (run(d, &n, 2, in, &y) == XDNN_OK) {
        CHECK(y.rank == ry, "%s: rank %d, want %d", op, y.rank, ry);
        for (int i = 0; i < ry && i < y.rank; i++)
            CHECK(y.dims[i] == dy[i], "%s: dim %d is %lld, want %lld", op, i, (long long)y.dims[i],
                  (long long)dy[i]);
        for (int64_t i = 0; i < y.numel; i++)
            CHECK(near(y.data[i], want[i], 1e-15), "%s[%lld] = %.17g, want %.17g", op, (long long)i,
                  y.data[i], want[i]);
        optest_ref_free(&y);
    } else {
        CHECK(false, "%s did not run", op);
    }
    optest_ref_free(&in[0]);
    optest_ref_free(&in[1]);
}

static void test_binary(arena *a)
{
    const int64_t d23[] = {2, 3}, d3[] = {3}, d21[] = {2, 1};
    const double m[] = {1, 2, 3, 4, 5, 6}, row[] = {10, 20, 30}, col[] = {100, 200};
    /* [2,3] + [3]: the row repeats down the rows */
    check_binary(a, "add", 2, d23, m, 1, d3, row, 2, d23, (const double[]){11, 22, 33, 14, 25, 36});
    /* [2,3] - [2,1]: the column repeats along the columns */
    check_binary(a, "sub", 2, d23, m, 2, d21, col, 2, d23, (const double[]){-99, -98, -97, -196, -195, -194});
    /* [2,1] * [3] -> [2,3] outer product */
    check_binary(a, "mul", 2, d21, (const double[]){2, 3}, 1, d3, row, 2, d23,
                 (const double[]){20, 40, 60, 30, 60, 90});
    /* rank-0 scalar operand (a by-value scalar): x / 4 and 2 ^ x */
    check_binary(a, "div", 2, d23, m, 0, NULL, (const double[]){4}, 2, d23,
                 (const double[]){0.25, 0.5, 0.75, 1.0, 1.25, 1.5});
    check_binary(a, "pow", 0, NULL, (const double[]){2}, 1, d3, (const double[]){-1, 0.5, 3}, 1, d3,
                 (const double[]){0.5, 1.4142135623730951, 8});
    check_binary(a, "max", 1, d3, (const double[]){-1, 5, 2}, 1, d3, (const double[]){0, 4, 2}, 1, d3,
                 (const double[]){0, 5, 2});
    check_binary(a, "min", 1, d3, (const double[]){-1, 5, 2}, 0, NULL, (const double[]){1}, 1, d3,
                 (const double[]){-1, 1, 1});
    /* NaN in either operand propagates, as torch.maximum / torch.minimum (fmax / fmin would drop it) */
    check_binary(a, "max", 1, d3, (const double[]){NAN, 1, -INFINITY}, 1, d3, (const double[]){0, NAN, 2}, 1, d3,
                 (const double[]){NAN, NAN, 2});
    check_binary(a, "min", 1, d3, (const double[]){NAN, 1, INFINITY}, 1, d3, (const double[]){0, NAN, 2}, 1, d3,
                 (const double[]){NAN, NAN, 2});
    /* floor modulo takes the sign of the divisor: -7 mod 3 = 2, 7 mod -3 = -2 */
    check_binary(a, "mod", 1, d3, (const double[]){7, -7, 7}, 1, d3, (const double[]){3, 3, -3}, 1, d3,
                 (const double[]){1, 2, -2});
    check_binary(a, "add_square", 1, d3, (const double[]){1, 2, 3}, 1, d3, (const double[]){2, -3, 0}, 1, d3,
                 (const double[]){5, 11, 3});

    const double l[] = {1, 2, 3}, r[] = {2, 2, 2};
    check_binary(a, "eq", 1, d3, l, 1, d3, r, 1, d3, (const double[]){0, 1, 0});
    check_binary(a, "ne", 1, d3, l, 1, d3, r, 1, d3, (const double[]){1, 0, 1});
    check_binary(a, "lt", 1, d3, l, 1, d3, r, 1, d3, (const double[]){1, 0, 0});
    check_binary(a, "le", 1, d3, l, 1, d3, r, 1, d3, (const double[]){1, 1, 0});
    check_binary(a, "gt", 1, d3, l, 0, NULL, (const double[]){2}, 1, d3, (const double[]){0, 0, 1});
    check_binary(a, "ge", 1, d3, l, 0, NULL, (const double[]){2}, 1, d3, (const double[]){0, 1, 1});
    const double p[] = {0, 1, 2}, q[] = {0, 0, -1};
    check_binary(a, "logical_and", 1, d3, p, 1, d3, q, 1, d3, (const double[]){0, 0, 1});
    check_binary(a, "logical_or", 1, d3, p, 1, d3, q, 1, d3, (const double[]){0, 1, 1});

    /* select(cond [2,1], a [2,3], b scalar) */
    const op_desc *sel = optest_op_named("select");
    if (sel) {
        xnode n;
        optest_node(a, &n, sel);
        ref_tensor in[3] = {optest_ref_of(2, d21, (const double[]){1, 0}, NULL), optest_ref_of(2, d23, m, NULL),
                            optest_ref_of(0, NULL, (const double[]){-1}, NULL)};
        ref_tensor y;
        if (run(sel, &n, 3, in, &y) == XDNN_OK) {
            const double want[] = {1, 2, 3, -1, -1, -1};
            CHECK(y.rank == 2 && y.dims[0] == 2 && y.dims[1] == 3, "select shape");
            for (int i = 0; i < 6; i++)
                CHECK(y.data[i] == want[i], "select[%d] = %g, want %g", i, y.data[i], want[i]);
            optest_ref_free(&y);
        }
        for (int i = 0; i < 3; i++)
            optest_ref_free(&in[i]);
    }
}

/* ---- dtype rules and inference errors */

static xdnn_status infer2(const op_desc *d, const xnode *n, tinfo t0, tinfo t1, tinfo *out, char *msg,
                          size_t len)
{
    const tinfo *in[2] = {&t0, &t1};
    xdnn_diags_t *dg = xdnn_diags_create();
    xdnn_status st = optest_infer(d, n, 2, in, 1, out, dg);
    snprintf(msg, len, "%s", optest_first_error(dg));
    xdnn_diags_destroy(dg);
    return st;
}

static void test_infer(arena *a)
{
    char msg[512];
    tinfo y;
    const int64_t d23[] = {2, 3}, d4[] = {4}, d3[] = {3};
    const op_desc *add = optest_op_named("add"), *lt = optest_op_named("lt"), *mul = optest_op_named("mul"),
                  *cast = optest_op_named("cast");
    const op_desc *relu = optest_op_named("relu"), *softplus = optest_op_named("softplus");
    const op_desc *sel = optest_op_named("select");
    if (!add || !lt || !mul || !cast || !relu || !softplus || !sel)
        return;

    /* non-broadcastable shapes: both shapes in full */
    xnode n;
    optest_node(a, &n, add);
    xdnn_status st =
        infer2(add, &n, optest_tinfo(XDNN_F32, 2, d23), optest_tinfo(XDNN_F32, 1, d4), &y, msg, sizeof msg);
    CHECK(st == XDNN_ERR_SEMANTIC, "add [2,3] + [4] gave status %d", st);
    CHECK(strstr(msg, "add: cannot broadcast shapes a [2, 3] and b [4]") != NULL, "message: %s", msg);

    /* output dtype: first tensor operand; comparisons give bool */
    st = infer2(add, &n, optest_tinfo(XDNN_F16, 2, d23), optest_tinfo(XDNN_F32, 1, d3), &y, msg, sizeof msg);
    CHECK(st == XDNN_OK && y.dtype == XDNN_F16 && y.rank == 2 && y.dims[0] == 2 && y.dims[1] == 3,
          "f16 [2,3] + f32 [3] -> %s rank %d", xdnn_dtype_name(y.dtype), y.rank);
    xnode nl;
    optest_node(a, &nl, lt);
    st = infer2(lt, &nl, optest_tinfo(XDNN_F16, 1, d3), optest_tinfo(XDNN_F16, 1, d3), &y, msg, sizeof msg);
    CHECK(st == XDNN_OK && y.dtype == XDNN_BOOL, "lt gives %s", xdnn_dtype_name(y.dtype));

    /* `0.5 * h`: port a is a by-value scalar (compute type f32), h is bf16 -> bf16 */
    xnode nm;
    optest_node(a, &nm, mul);
    nm.inputs = arena_alloc(a, 2 * sizeof *nm.inputs);
    nm.ninputs = 2;
    nm.inputs[0] = (xport){.tensor = -1, .scalar = expr_float(a, 0.5, xloc_none())};
    nm.inputs[1] = (xport){.tensor = 0};
    st = infer2(mul, &nm, optest_tinfo(XDNN_F32, 0, NULL), optest_tinfo(XDNN_BF16, 1, d3), &y, msg,
                sizeof msg);
    CHECK(st == XDNN_OK && y.dtype == XDNN_BF16 && y.rank == 1 && y.dims[0] == 3, "0.5 * bf16[3] -> %s",
          xdnn_dtype_name(y.dtype));

    /* select: the dtype of a, not of the bool condition */
    xnode ns;
    optest_node(a, &ns, sel);
    tinfo c0 = optest_tinfo(XDNN_BOOL, 1, d3), c1 = optest_tinfo(XDNN_F16, 1, d3),
          c2 = optest_tinfo(XDNN_F16, 0, NULL);
    const tinfo *in3[3] = {&c0, &c1, &c2};
    xdnn_diags_t *dg = xdnn_diags_create();
    st = optest_infer(sel, &ns, 3, in3, 1, &y, dg);
    CHECK(st == XDNN_OK && y.dtype == XDNN_F16, "select dtype %s", xdnn_dtype_name(y.dtype));
    xdnn_diags_destroy(dg);

    /* cast: the dtype attribute; required */
    xnode nc;
    optest_node(a, &nc, cast);
    tinfo x = optest_tinfo(XDNN_F32, 1, d3);
    const tinfo *in1[1] = {&x};
    dg = xdnn_diags_create();
    st = optest_infer(cast, &nc, 1, in1, 1, &y, dg);
    CHECK(st == XDNN_ERR_SEMANTIC && strstr(optest_first_error(dg), "attribute 'dtype' is required"),
          "cast without dtype: %s", optest_first_error(dg));
    xdnn_diags_destroy(dg);
    CHECK(optest_set_value(&nc, cast, "dtype", &(value){.kind = VAL_DTYPE, .dt = XDNN_I8}), "set dtype");
    dg = xdnn_diags_create();
    st = optest_infer(cast, &nc, 1, in1, 1, &y, dg);
    CHECK(st == XDNN_OK && y.dtype == XDNN_I8, "cast to i8 gives %s", xdnn_dtype_name(y.dtype));
    xdnn_diags_destroy(dg);

    /* attribute checks */
    xnode nr;
    optest_node(a, &nr, relu);
    optest_set_float(&nr, relu, "lower", 2);
    optest_set_float(&nr, relu, "upper", 1);
    dg = xdnn_diags_create();
    st = optest_infer(relu, &nr, 1, in1, 1, &y, dg);
    CHECK(st == XDNN_ERR_SEMANTIC &&
              strstr(optest_first_error(dg), "relu: attribute 'upper' (1) must be >= 'lower' (2)"),
          "relu clip: %s", optest_first_error(dg));
    xdnn_diags_destroy(dg);
    xnode np;
    optest_node(a, &np, softplus);
    optest_set_float(&np, softplus, "beta", 0);
    dg = xdnn_diags_create();
    st = optest_infer(softplus, &np, 1, in1, 1, &y, dg);
    CHECK(st == XDNN_ERR_SEMANTIC && strstr(optest_first_error(dg), "attribute 'beta' must be nonzero"),
          "softplus beta 0: %s", optest_first_error(dg));
    xdnn_diags_destroy(dg);

    /* pw_params: relu's absent upper is +inf; gelu approx is a choice index */
    double p[PW_MAX_PARAMS];
    xnode nr2;
    optest_node(a, &nr2, relu);
    CHECK(pw_params(&nr2, relu, p) == 3 && p[0] == 0 && isinf(p[1]) && p[1] > 0 && p[2] == 0,
          "relu params %g %g %g", p[0], p[1], p[2]);
    const op_desc *gelu = optest_op_named("gelu");
    if (gelu) {
        xnode ng;
        optest_node(a, &ng, gelu);
        optest_set_str(&ng, gelu, "approx", "tanh");
        CHECK(pw_params(&ng, gelu, p) == 1 && p[0] == 1, "gelu approx=tanh -> p0 = %g", p[0]);
    }
}

/* ---- backward ops vs central finite differences of the forward op */

typedef void (*attr_setter)(xnode *n, const op_desc *d);

static double eval_at(const op_desc *d, const xnode *n, double x)
{
    const pw_mode *m = pw_mode_of(d);
    double p[PW_MAX_PARAMS];
    pw_params(n, d, p);
    return m->eval(x, 0, 0, p[0], p[1], p[2]);
}

static bool positive_domain(const char *fwd)
{
    return !strcmp(fwd, "log") || !strcmp(fwd, "sqrt") || !strcmp(fwd, "rsqrt") || !strcmp(fwd, "reciprocal");
}

static int check_bwd(arena *a, const op_desc *bwd, attr_setter set, const char *variant)
{
    char fwd_name[64];
    snprintf(fwd_name, sizeof fwd_name, "%.*s", (int)(strlen(bwd->name) - 4), bwd->name);
    const op_desc *fwd = optest_op_named(fwd_name);
    if (!fwd)
        return 0;
    xnode nf, nb;
    optest_node(a, &nf, fwd);
    optest_node(a, &nb, bwd);
    if (set) {
        set(&nf, fwd);
        set(&nb, bwd);
    }
    static const double mixed[] = {-1.7, -0.4, 0.3, 1.3, 2.1}, pos[] = {0.3, 0.7, 1.3, 2.1, 3.5};
    const double *xs = positive_domain(fwd_name) ? pos : mixed;
    const double dyv = 1.3, h = 1e-6;
    int64_t dims[] = {5};
    ref_tensor in[2] = {optest_ref_of(1, dims, (const double[]){dyv, dyv, dyv, dyv, dyv}, NULL),
                        optest_ref_of(1, dims, xs, NULL)},
               dx;
    int compared = 0;
    if (run(bwd, &nb, 2, in, &dx) == XDNN_OK) {
        for (int i = 0; i < 5; i++) {
            double fd = dyv * (eval_at(fwd, &nf, xs[i] + h) - eval_at(fwd, &nf, xs[i] - h)) / (2 * h);
            CHECK(fabs(dx.data[i] - fd) <= 1e-6 * fmax(1.0, fabs(fd)),
                  "%s%s at x=%g: %.12g, finite difference %.12g", bwd->name, variant, xs[i], dx.data[i], fd);
            compared++;
        }
        optest_ref_free(&dx);
    }
    optest_ref_free(&in[0]);
    optest_ref_free(&in[1]);
    return compared;
}

static void set_leaky_clipped(xnode *n, const op_desc *d)
{
    optest_set_float(n, d, "slope", 0.1);
    optest_set_float(n, d, "upper", 1.5); /* x = 2.1 is above: gradient 0 */
}
static void set_relu_lower(xnode *n, const op_desc *d)
{
    optest_set_float(n, d, "lower", -1.0);
    optest_set_float(n, d, "slope", 0.25);
}
static void set_alpha(xnode *n, const op_desc *d) { optest_set_float(n, d, "alpha", 0.5); }
static void set_beta(xnode *n, const op_desc *d) { optest_set_float(n, d, "beta", 1.7); }
static void set_tanh(xnode *n, const op_desc *d) { optest_set_str(n, d, "approx", "tanh"); }

static void test_backward(arena *a)
{
    static const char *const required[] = {"relu", "sigmoid", "tanh",       "gelu", "gelu_tanh", "swish",
                                           "silu", "elu",     "softplus",   "mish", "exp",       "log",
                                           "sqrt", "rsqrt",   "reciprocal", "sin",  "cos",       "tan",
                                           "erf",  "abs",     "neg"};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s_bwd", required[i]);
        CHECK(op_lookup(name) >= 0, "%s is not registered", name);
    }
    int compared = 0, ops = 0;
    for (int i = 0; i < OP_COUNT; i++) {
        const pw_mode *m = pw_mode_of(op_get(i));
        if (!m || !m->backward)
            continue;
        ops++;
        compared += check_bwd(a, op_get(i), NULL, "");
    }
    CHECK(ops >= 21 && compared == 5 * ops, "compared %d points over %d backward ops", compared, ops);
    const op_desc *relu_bwd = optest_op_named("relu_bwd"), *elu_bwd = optest_op_named("elu_bwd");
    const op_desc *swish_bwd = optest_op_named("swish_bwd"), *softplus_bwd = optest_op_named("softplus_bwd");
    const op_desc *gelu_bwd = optest_op_named("gelu_bwd");
    if (relu_bwd && elu_bwd && swish_bwd && softplus_bwd && gelu_bwd) {
        CHECK(check_bwd(a, relu_bwd, set_leaky_clipped, " (slope 0.1, upper 1.5)") == 5, "leaky");
        CHECK(check_bwd(a, relu_bwd, set_relu_lower, " (lower -1, slope 0.25)") == 5, "lower");
        CHECK(check_bwd(a, elu_bwd, set_alpha, " (alpha 0.5)") == 5, "elu");
        CHECK(check_bwd(a, swish_bwd, set_beta, " (beta 1.7)") == 5, "swish");
        CHECK(check_bwd(a, softplus_bwd, set_beta, " (beta 1.7)") == 5, "softplus");
        CHECK(check_bwd(a, gelu_bwd, set_tanh, " (approx tanh)") == 5, "gelu tanh");
    }

    /* relu_bwd at known points: dy passes where lower < x < upper */
    if (relu_bwd) {
        xnode n;
        optest_node(a, &n, relu_bwd);
        set_leaky_clipped(&n, relu_bwd);
        int64_t dims[] = {3};
        ref_tensor in[2] = {optest_ref_of(1, dims, (const double[]){2, 2, 2}, NULL),
                            optest_ref_of(1, dims, (const double[]){-1, 1, 3}, NULL)},
                   dx;
        if (run(relu_bwd, &n, 2, in, &dx) == XDNN_OK) {
            CHECK(near(dx.data[0], 0.2, 1e-15) && dx.data[1] == 2 && dx.data[2] == 0, "relu_bwd = %g %g %g",
                  dx.data[0], dx.data[1], dx.data[2]);
            optest_ref_free(&dx);
        }
        optest_ref_free(&in[0]);
        optest_ref_free(&in[1]);
    }
}

/* ---- the GPU contract: expressions use only portable names */

static bool allowed_ident(const char *s, size_t n)
{
    static const char *const ok[] = {"a",    "b",   "c",    "dy",  "p0",   "p1",   "p2",    "K",
                                     "exp",  "log", "tanh", "erf", "sqrt", "pow",  "fabs",  "floor",
                                     "ceil", "sin", "cos",  "tan", "fmax", "fmin", "log1p", "expm1"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (strlen(ok[i]) == n && strncmp(ok[i], s, n) == 0)
            return true;
    return false;
}

static void test_mode_table(void)
{
    int modes = 0;
    for (int i = 0; i < OP_COUNT; i++) {
        const pw_mode *m = pw_mode_of(op_get(i));
        if (!m)
            continue;
        modes++;
        CHECK(strcmp(m->name, op_get(i)->name) == 0, "mode %s on op %s", m->name, op_get(i)->name);
        CHECK(op_get(i)->summary && op_get(i)->summary[0], "%s has no summary", m->name);
        for (const char *p = m->expr; *p;) {
            if (isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1]))) {
                while (isalnum((unsigned char)*p) || *p == '.' ||
                       ((*p == '-' || *p == '+') && (p[-1] == 'e' || p[-1] == 'E')))
                    p++;
            } else if (isalpha((unsigned char)*p) || *p == '_') {
                const char *s = p;
                while (isalnum((unsigned char)*p) || *p == '_')
                    p++;
                CHECK(allowed_ident(s, (size_t)(p - s)), "%s uses '%.*s' (not portable to CUDA)", m->name,
                      (int)(p - s), s);
            } else {
                p++;
            }
        }
    }
    static const char *const fwd[] = {
        "add",      "sub",         "mul",        "div",         "max",    "min",   "pow",
        "neg",      "abs",         "exp",        "log",         "sqrt",   "rsqrt", "reciprocal",
        "sin",      "cos",         "tan",        "erf",         "floor",  "ceil",  "sigmoid",
        "tanh",     "relu",        "gelu",       "gelu_tanh",   "swish",  "silu",  "elu",
        "softplus", "mish",        "eq",         "ne",          "lt",     "le",    "gt",
        "ge",       "logical_and", "logical_or", "logical_not", "select", "cast",  "identity"};
    for (size_t i = 0; i < sizeof fwd / sizeof fwd[0]; i++) {
        int k = op_lookup(fwd[i]);
        CHECK(k >= 0 && pw_mode_of(op_get(k)) != NULL, "forward op %s missing", fwd[i]);
    }
    CHECK(modes >= 42 + 21, "only %d pointwise modes", modes);
    CHECK(pw_mode_of(op_get(op_lookup("relu"))) &&
              strstr(pw_mode_of(op_get(op_lookup("relu")))->expr, "fmin(p1"),
          "relu expression text");
}

/* ---- NaN and +-inf: IEEE and PyTorch semantics (NaN in, NaN out; the
 * limits where PyTorch gives them).  relu once gave +inf for -inf and NaN
 * (fmin(upper, NaN) drops the NaN); this table keeps that fixed. */

typedef struct special {
    const char *op, *attr;
    double attr_value, x, want;   /* want NAN: the result must be NaN */
} special;

static void test_special_values(arena *a)
{
    static const special table[] = {
        {"relu", NULL, 0, NAN, NAN},            {"relu", NULL, 0, -INFINITY, 0},
        {"relu", NULL, 0, INFINITY, INFINITY},  {"relu", NULL, 0, -0.5, 0},
        {"relu", "slope", 0.01, -INFINITY, -INFINITY}, {"relu", "slope", 0.01, NAN, NAN},
        {"relu", "upper", 6, INFINITY, 6},      {"relu", "upper", 6, NAN, NAN},
        {"relu", "upper", 6, -INFINITY, 0},
        {"abs", NULL, 0, -INFINITY, INFINITY},  {"abs", NULL, 0, NAN, NAN},
        {"neg", NULL, 0, INFINITY, -INFINITY},  {"exp", NULL, 0, -INFINITY, 0},
        {"exp", NULL, 0, INFINITY, INFINITY},   {"exp", NULL, 0, NAN, NAN},
        {"log", NULL, 0, 0, -INFINITY},         {"log", NULL, 0, -1, NAN},
        {"sqrt", NULL, 0, INFINITY, INFINITY},  {"sqrt", NULL, 0, -1, NAN},
        {"sigmoid", NULL, 0, -INFINITY, 0},     {"sigmoid", NULL, 0, INFINITY, 1},
        {"sigmoid", NULL, 0, NAN, NAN},         {"tanh", NULL, 0, INFINITY, 1},
        {"tanh", NULL, 0, -INFINITY, -1},       {"tanh", NULL, 0, NAN, NAN},
        {"elu", NULL, 0, -INFINITY, -1},        {"elu", NULL, 0, NAN, NAN},
        {"softplus", NULL, 0, INFINITY, INFINITY}, {"softplus", NULL, 0, -INFINITY, 0},
        {"softplus", NULL, 0, NAN, NAN},        {"gelu", NULL, 0, INFINITY, INFINITY},
        {"gelu", NULL, 0, NAN, NAN},            {"silu", NULL, 0, INFINITY, INFINITY},
        {"silu", NULL, 0, NAN, NAN},            {"floor", NULL, 0, -INFINITY, -INFINITY},
        {"ceil", NULL, 0, NAN, NAN},            {"erf", NULL, 0, INFINITY, 1},
        {"erf", NULL, 0, -INFINITY, -1},        {"reciprocal", NULL, 0, INFINITY, 0},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const special *t = &table[i];
        const op_desc *d = optest_op_named(t->op);
        if (!d)
            continue;
        xnode n;
        optest_node(a, &n, d);
        if (t->attr)
            CHECK(optest_set_float(&n, d, t->attr, t->attr_value), "set %s", t->attr);
        double y = eval_at(d, &n, t->x);
        if (isnan(t->want))
            CHECK(isnan(y), "%s(%g%s%s=%g) = %g, want nan", t->op, t->x, t->attr ? "; " : "", t->attr ? t->attr : "",
                  t->attr_value, y);
        else
            CHECK(y == t->want, "%s(%g%s%s=%g) = %g, want %g", t->op, t->x, t->attr ? "; " : "",
                  t->attr ? t->attr : "", t->attr_value, y, t->want);
    }
}

int main(void)
{
    arena *a = arena_create();
    test_special_values(a);
    test_forward_known(a);
    test_binary(a);
    test_infer(a);
    test_backward(a);
    test_mode_table();
    arena_destroy(a);
    return test_summary("test_op_pointwise");
}
