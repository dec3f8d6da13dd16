/* test_quant_conv.c — scaled_conv (src/ops/quant_conv.c).
 *
 * Random i8 and fp8 operands in odd shapes (1-D, 2-D, 3-D; C = 3, K = 5,
 * 7x7; stride, asymmetric pad, dilation, groups) against an independent
 * computation: the operands dequantized here by hand, the f64 conv
 * reference, the bias added, and for an i8 / fp8 output the quantize op.
 * The two must agree to the bit in the output dtype, and can: i8 scales get
 * at most 8 significant bits, so every product and sum on both sides is exact
 * in double; fp8 scales are powers of two, which commute with every rounding.
 * Then written-out answers (a hand conv with per-channel scales and bias;
 * ties to even and saturation of the requantizing epilogue, i8 and fp8),
 * flops, and every inference error with its exact message. */
#include "data/data.h"
#include "op_test_util.h"
#include "ops/quant.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

extern const op_desc op_scaled_conv_desc, op_conv_desc, op_quantize_desc;
static const op_desc *const SC = &op_scaled_conv_desc;

enum { P_X, P_W, P_XS, P_WS, P_BIAS, P_YS, NPORTS };

static uint64_t rng = 0xC0FFEE1234567ull;

/* A random finite value of dtype t: i8 in [-128, 127], fp8 any finite byte. */
static double random_value(xdnn_dtype t)
{
    if (t == XDNN_I8)
        return floor(optest_rand(&rng) * 128);
    for (;;) {
        unsigned char byte = (unsigned char)(ldexp(optest_rand(&rng) + 1, 7)); /* 0..255 */
        double v = dtype_load(t, &byte, 0);
        if (isfinite(v))
            return v;
    }
}

/* A random positive scale: m * 2^-e with m of 8 bits for i8 operands, a power
 * of two for fp8 ones (see the header for why). */
static double random_scale(bool fp8)
{
    int e = 3 + (int)floor((optest_rand(&rng) + 1) * 4); /* 3..10 */
    double m = fp8 ? 1 : 1 + floor((optest_rand(&rng) + 1) * 127.5); /* 1..255 */
    return ldexp(m, -e);
}

typedef struct sc_case {
    const char *name;
    int rank;
    int64_t x[5], w[5];
    xdnn_dtype xt, wt, yt;
    int64_t stride[3], dilation[3], pad[6]; /* per spatial dim; pad as [lo, hi] pairs */
    int64_t groups;
    bool per_channel, bias;
} sc_case;

static const sc_case cases[] = {
    {"2-D i8 C=3 K=5 7x7 stride 2 pad 1, per-tensor w_scale, bias -> f32", 4, {2, 3, 7, 7}, {5, 3, 3, 3},
     XDNN_I8, XDNN_I8, XDNN_F32, {2, 2}, {1, 1}, {1, 1, 1, 1}, 1, false, true},
    {"2-D i8 groups 2 dilation 2 pad [[1,2],[0,1]], per-channel -> bf16", 4, {1, 4, 7, 7}, {6, 2, 3, 3},
     XDNN_I8, XDNN_I8, XDNN_BF16, {1, 1}, {2, 2}, {1, 2, 0, 1}, 2, true, false},
    {"1-D i8 stride 2 pad 3 dilation 2, per-channel, bias -> i8", 3, {2, 3, 11}, {5, 3, 4},
     XDNN_I8, XDNN_I8, XDNN_I8, {2}, {2}, {3, 3}, 1, true, true},
    {"3-D i8 stride [1,2,2] pad 1, per-channel -> f16", 5, {1, 3, 5, 5, 5}, {5, 3, 3, 3, 3},
     XDNN_I8, XDNN_I8, XDNN_F16, {1, 2, 2}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}, 1, true, false},
    {"2-D e4m3 x e4m3 C=3 K=5 7x7 stride 2 -> f32", 4, {2, 3, 7, 7}, {5, 3, 3, 3},
     XDNN_FP8_E4M3, XDNN_FP8_E4M3, XDNN_F32, {2, 2}, {1, 1}, {0, 0, 0, 0}, 1, false, true},
    {"2-D e4m3 x e5m2 groups 2 pad 2 dilation [1,3], per-channel, bias -> fp8_e4m3", 4, {2, 4, 7, 7}, {4, 2, 3, 2},
     XDNN_FP8_E4M3, XDNN_FP8_E5M2, XDNN_FP8_E4M3, {1, 1}, {1, 3}, {2, 2, 2, 2}, 2, true, true},
    {"3-D e5m2 depthwise (groups 3) -> bf16", 5, {1, 3, 4, 5, 6}, {3, 1, 2, 2, 2},
     XDNN_FP8_E5M2, XDNN_FP8_E5M2, XDNN_BF16, {1, 1, 2}, {1, 2, 1}, {0, 1, 1, 0, 1, 1}, 3, true, false},
    {"1-D e5m2 x e4m3 stride 3, bias -> i8", 3, {3, 3, 13}, {5, 3, 3},
     XDNN_FP8_E5M2, XDNN_FP8_E4M3, XDNN_I8, {3}, {1}, {1, 0}, 1, false, true},
    {"1-D e4m3 -> fp8_e5m2, per-channel", 3, {1, 3, 9}, {5, 3, 2},
     XDNN_FP8_E4M3, XDNN_FP8_E4M3, XDNN_FP8_E5M2, {1}, {1}, {0, 0}, 1, true, false},
};

static void set_window(xnode *n, const op_desc *d, const sc_case *c)
{
    int nsp = c->rank - 2;
    optest_set_ints(n, d, "stride", nsp, c->stride);
    optest_set_ints(n, d, "dilation", nsp, c->dilation);
    optest_set_pads(n, d, "pad", nsp, c->pad);
    optest_set_int(n, d, "groups", c->groups);
}

static void set_dtype(xnode *n, const op_desc *d, xdnn_dtype t)
{
    value v = {.kind = VAL_DTYPE, .dt = t};
    optest_set_value(n, d, "dtype", &v);
}

/* The independent answer: conv of the dequantized operands (f64), + bias,
 * then quantize by y_scale when the output requantizes. */
static ref_tensor expected(arena *a, const sc_case *c, const ref_tensor *const *in)
{
    const ref_tensor *x = in[P_X], *w = in[P_W], *ws = in[P_WS], *b = in[P_BIAS], *ys = in[P_YS];
    ref_tensor xd = optest_ref_alloc(x->rank, x->dims), wd = optest_ref_alloc(w->rank, w->dims), v = {0};
    for (int64_t i = 0; i < x->numel; i++)
        xd.data[i] = x->data[i] * in[P_XS]->data[0];
    const int64_t per_k = w->numel / w->dims[0];
    for (int64_t i = 0; i < w->numel; i++)
        wd.data[i] = w->data[i] * ws->data[ws->numel == 1 ? 0 : i / per_k];
    xnode n;
    optest_node(a, &n, &op_conv_desc);
    set_window(&n, &op_conv_desc, c);
    xdnn_diags_t *dg = xdnn_diags_create();
    const ref_tensor *cin[2] = {&xd, &wd};
    CHECK(optest_run(&op_conv_desc, &n, 2, cin, 1, &v, dg) == XDNN_OK, "%s: conv: %s", c->name, optest_first_error(dg));
    const int64_t K = v.dims[1], plane = v.numel / (v.dims[0] * K);
    for (int64_t i = 0; b && i < v.numel; i++)
        v.data[i] += b->data[i / plane % K];
    if (ys) {
        xnode q;
        optest_node(a, &q, &op_quantize_desc);
        set_dtype(&q, &op_quantize_desc, c->yt);
        const ref_tensor *qin[2] = {&v, ys};
        ref_tensor r;
        CHECK(optest_run(&op_quantize_desc, &q, 2, qin, 1, &r, dg) == XDNN_OK, "%s: quantize: %s", c->name,
              optest_first_error(dg));
        optest_ref_free(&v);
        v = r;
    }
    xdnn_diags_destroy(dg);
    optest_ref_free(&xd);
    optest_ref_free(&wd);
    return v;
}

static void run_case(arena *a, const sc_case *c)
{
    const int64_t one[1] = {1}, K = c->w[0];
    ref_tensor t[NPORTS] = {0};
    t[P_X] = optest_ref_alloc(c->rank, c->x);
    t[P_W] = optest_ref_alloc(c->rank, c->w);
    for (int64_t i = 0; i < t[P_X].numel; i++)
        t[P_X].data[i] = random_value(c->xt);
    for (int64_t i = 0; i < t[P_W].numel; i++)
        t[P_W].data[i] = random_value(c->wt);
    bool fp8 = quant_is_fp8(c->xt);
    t[P_XS] = optest_ref_alloc(1, one);
    t[P_XS].data[0] = random_scale(fp8);
    t[P_WS] = optest_ref_alloc(1, c->per_channel ? &K : one);
    for (int64_t k = 0; k < t[P_WS].numel; k++)
        t[P_WS].data[k] = random_scale(fp8);
    if (c->bias) {
        t[P_BIAS] = optest_ref_alloc(1, &K);
        for (int64_t k = 0; k < K; k++) /* full f32 significands: added once on both sides */
            t[P_BIAS].data[k] = dtype_round(XDNN_F32, optest_rand(&rng));
    }
    bool requant = c->yt == XDNN_I8 || quant_is_fp8(c->yt);
    const double qmax = c->yt == XDNN_I8 ? 127 : c->yt == XDNN_FP8_E4M3 ? 448 : 57344;
    const ref_tensor *in[NPORTS];
    xdnn_dtype dts[NPORTS] = {c->xt, c->wt, XDNN_F32, XDNN_F32, XDNN_F32, XDNN_F32};
    for (int i = 0; i < NPORTS; i++)
        in[i] = t[i].data ? &t[i] : NULL;
    if (requant) { /* y_scale maps the largest |v| (from the independent side) to 1.5 qmax: a few saturate */
        ref_tensor v = expected(a, c, in);
        double m = 0;
        for (int64_t i = 0; i < v.numel; i++)
            m = fmax(m, fabs(v.data[i]));
        optest_ref_free(&v);
        t[P_YS] = optest_ref_alloc(1, one);
        t[P_YS].data[0] = dtype_round(XDNN_F32, m / (1.5 * qmax));
        in[P_YS] = &t[P_YS];
    }

    xnode n;
    optest_node(a, &n, SC);
    set_window(&n, SC, c);
    set_dtype(&n, SC, c->yt);
    xdnn_diags_t *dg = xdnn_diags_create();
    ref_tensor y;
    xdnn_status st = optest_run_typed(SC, &n, NPORTS, in, dts, 1, &y, dg);
    CHECK(st == XDNN_OK, "%s: %s", c->name, optest_first_error(dg));
    xdnn_diags_destroy(dg);
    if (st == XDNN_OK) {
        CHECK(y.dtype == c->yt, "%s: dtype %s", c->name, xdnn_dtype_name(y.dtype));
        ref_tensor want = expected(a, c, in);
        int64_t bad = 0, nonzero = 0, saturated = 0;
        for (int64_t i = 0; i < y.numel && want.data; i++) {
            double got = dtype_round(c->yt, y.data[i]), exp = dtype_round(c->yt, want.data[i]);
            if (got != exp && bad++ < 3) /* the first few, with their values */
                CHECK(got == exp, "%s: element %lld: got %.17g, want %.17g", c->name, (long long)i, got, exp);
            nonzero += got != 0;
            saturated += requant && fabs(got) >= qmax;
        }
        CHECK(bad == 0, "%s: %lld of %lld elements differ", c->name, (long long)bad, (long long)y.numel);
        /* a comparison of zeros would prove nothing */
        CHECK(nonzero * 2 > y.numel, "%s: only %lld of %lld elements are nonzero", c->name, (long long)nonzero,
              (long long)y.numel);
        if (requant)
            CHECK(saturated > 0 && saturated * 4 < y.numel, "%s: %lld of %lld elements saturate", c->name,
                  (long long)saturated, (long long)y.numel);
        optest_ref_free(&want);
        optest_ref_free(&y);
    }
    for (int i = 0; i < NPORTS; i++)
        optest_ref_free(&t[i]);
}

/* x = 1..9 as 3x3, w[0] = [[1,2],[3,4]], w[1] = [[-1,0],[0,1]]; x_scale 0.5,
 * w_scale [1, 2], bias [1, -1]:
 *   k = 0: sums 37 47 67 77 -> * 0.5 + 1 = 19.5 24.5 34.5 39.5
 *   k = 1: x[i+1,j+1] - x[i,j] = 4 everywhere -> 4 * 0.5 * 2 - 1 = 3 */
static void test_hand_case(arena *a)
{
    const int64_t xd[4] = {1, 1, 3, 3}, wd[4] = {2, 1, 2, 2}, one[1] = {1}, two[1] = {2};
    const double xv[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, wv[8] = {1, 2, 3, 4, -1, 0, 0, 1};
    const double xs = 0.5, wsv[2] = {1, 2}, bv[2] = {1, -1};
    ref_tensor x = optest_ref_of(4, xd, xv, NULL), w = optest_ref_of(4, wd, wv, NULL);
    ref_tensor sx = optest_ref_of(1, one, &xs, NULL), sw = optest_ref_of(1, two, wsv, NULL),
               b = optest_ref_of(1, two, bv, NULL), y;
    const ref_tensor *in[5] = {&x, &w, &sx, &sw, &b};
    const xdnn_dtype dts[5] = {XDNN_I8, XDNN_I8, XDNN_F32, XDNN_F32, XDNN_F32};
    xnode n;
    optest_node(a, &n, SC);
    xdnn_diags_t *dg = xdnn_diags_create();
    xdnn_status st = optest_run_typed(SC, &n, 5, in, dts, 1, &y, dg);
    CHECK(st == XDNN_OK, "hand case: %s", optest_first_error(dg));
    if (st == XDNN_OK) {
        const double want[8] = {19.5, 24.5, 34.5, 39.5, 3, 3, 3, 3};
        CHECK(y.dtype == XDNN_BF16 && y.rank == 4 && y.dims[1] == 2 && y.dims[2] == 2 && y.dims[3] == 2,
              "hand case: bf16 [1, 2, 2, 2] by default, got %s", xdnn_dtype_name(y.dtype));
        for (int i = 0; i < 8; i++)
            CHECK(y.data[i] == want[i], "hand case: element %d is %g, want %g", i, y.data[i], want[i]);
        optest_ref_free(&y);
    }
    xdnn_diags_destroy(dg);
    optest_ref_free(&x);
    optest_ref_free(&w);
    optest_ref_free(&sx);
    optest_ref_free(&sw);
    optest_ref_free(&b);
}

/* The requantizing epilogue alone, on a 1x1 conv with w = 1: v = x * 0.5 * ws,
 * stored as sat(RNE(v / y_scale)), i8 and fp8, bytes written out by hand. */
static void test_epilogue_rounding(arena *a)
{
    const int64_t xd[4] = {1, 1, 1, 5}, wd[4] = {1, 1, 1, 1}, one[1] = {1};
    const double xv[5] = {5, 7, -5, -128, 127}, wv = 1, xs = 0.5;
    static const struct {
        xdnn_dtype yt;
        double ws, ys;
        double want[5];
        const char *why;
    } rows[] = {
        {XDNN_I8, 1, 1, {2, 4, -2, -64, 64}, "ties to even: 2.5 -> 2, 3.5 -> 4, -2.5 -> -2, 63.5 -> 64"},
        {XDNN_I8, 4, 1, {10, 14, -10, -128, 127}, "i8 saturates: -256 -> -128, 254 -> 127"},
        {XDNN_I8, 1, 0.25, {10, 14, -10, -128, 127}, "y_scale divides: 2.5 / 0.25 = 10"},
        {XDNN_FP8_E4M3, 4, 0.25, {40, 56, -40, -448, 448}, "e4m3: 40, 56 exact; +-1024, 1016 saturate to 448"},
        {XDNN_FP8_E4M3, 1, 1, {2.5, 3.5, -2.5, -64, 64}, "e4m3: 63.5 between 60 and 64 rounds to 64"},
        {XDNN_FP8_E5M2, 1, 1, {2.5, 3.5, -2.5, -64, 64}, "e5m2: 63.5 -> 64"},
        {XDNN_FP8_E5M2, 64, 0x1p-8, {40960, 57344, -40960, -57344, 57344}, "e5m2 saturates to 57344, not Inf"},
    };
    ref_tensor x = optest_ref_of(4, xd, xv, NULL), w = optest_ref_of(4, wd, &wv, NULL);
    ref_tensor sx = optest_ref_of(1, one, &xs, NULL);
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        ref_tensor sw = optest_ref_of(1, one, &rows[r].ws, NULL), sy = optest_ref_of(1, one, &rows[r].ys, NULL), y;
        const ref_tensor *in[6] = {&x, &w, &sx, &sw, NULL, &sy};
        const xdnn_dtype dts[6] = {XDNN_I8, XDNN_I8, XDNN_F32, XDNN_F32, XDNN_F32, XDNN_F32};
        xnode n;
        optest_node(a, &n, SC);
        set_dtype(&n, SC, rows[r].yt);
        xdnn_diags_t *dg = xdnn_diags_create();
        xdnn_status st = optest_run_typed(SC, &n, 6, in, dts, 1, &y, dg);
        CHECK(st == XDNN_OK, "%s: %s", rows[r].why, optest_first_error(dg));
        if (st == XDNN_OK) {
            for (int i = 0; i < 5; i++)
                CHECK(dtype_round(rows[r].yt, y.data[i]) == rows[r].want[i], "%s: element %d stores %g, want %g",
                      rows[r].why, i, dtype_round(rows[r].yt, y.data[i]), rows[r].want[i]);
            optest_ref_free(&y);
        }
        xdnn_diags_destroy(dg);
        optest_ref_free(&sw);
        optest_ref_free(&sy);
    }
    optest_ref_free(&x);
    optest_ref_free(&w);
    optest_ref_free(&sx);
}

static void test_flops(arena *a)
{
    const int64_t xd[4] = {2, 4, 9, 9}, wd[4] = {6, 2, 3, 3}, yd[4] = {2, 6, 7, 7}, one[1] = {1};
    tinfo in[4] = {optest_tinfo(XDNN_I8, 4, xd), optest_tinfo(XDNN_I8, 4, wd), optest_tinfo(XDNN_F32, 1, one),
                   optest_tinfo(XDNN_F32, 1, one)};
    tinfo out = optest_tinfo(XDNN_BF16, 4, yd);
    xnode n;
    optest_node(a, &n, SC);
    optest_set_int(&n, SC, "groups", 2);
    /* 2 * N * K * out * (C/groups) * window = 2 * 2*6*49 * 2*9 */
    CHECK(optest_flops(SC, &n, 4, in, 1, &out) == 2.0 * 2 * 6 * 49 * 2 * 9, "scaled_conv flops %g",
          optest_flops(SC, &n, 4, in, 1, &out));
}

static void test_infer_errors(arena *a)
{
    xnode n;
    optest_node(a, &n, SC);
    const int64_t xd[4] = {1, 3, 7, 7}, wd[4] = {5, 3, 3, 3}, one[1] = {1}, two[1] = {2}, k5[1] = {5},
                  k3[1] = {3}, b4[4] = {1, 5, 1, 1}, wd3[3] = {5, 3, 3};
    tinfo x = optest_tinfo(XDNN_I8, 4, xd), w = optest_tinfo(XDNN_I8, 4, wd), xs = optest_tinfo(XDNN_F32, 1, one),
          ws = optest_tinfo(XDNN_F32, 1, k5), b = optest_tinfo(XDNN_F32, 1, k5), ys = optest_tinfo(XDNN_F32, 1, one);
    const tinfo *in[6] = {&x, &w, &xs, &ws, &b, NULL};
    tinfo out;
    xdnn_diags_t *dg = xdnn_diags_create();
    CHECK(optest_infer(SC, &n, 6, in, 1, &out, dg) == XDNN_OK && out.dtype == XDNN_BF16 && out.exact_dtype &&
              out.rank == 4 && out.dims[1] == 5 && out.dims[2] == 5,
          "i8 x, w with per-channel w_scale and bias infer bf16 [1, 5, 5, 5]: %s", optest_first_error(dg));
    xdnn_diags_destroy(dg);

    w.dtype = XDNN_FP8_E4M3;
    optest_expect_infer_error(SC, &n, 6, in, 1,
                              "scaled_conv: x and w must both be fp8 (fp8_e4m3 / fp8_e5m2) or both i8, got i8 and fp8_e4m3");
    x.dtype = XDNN_F32;
    optest_expect_infer_error(SC, &n, 6, in, 1,
                              "scaled_conv: x and w must both be fp8 (fp8_e4m3 / fp8_e5m2) or both i8, got f32 and fp8_e4m3");
    x.dtype = XDNN_FP8_E5M2; /* any fp8 mix is fine */
    CHECK(strcmp(optest_infer_error(SC, &n, 6, in, 1), "(no error)") == 0, "e5m2 x e4m3 infers");
    x.dtype = w.dtype = XDNN_I8;

    in[1] = &(tinfo){.dtype = XDNN_I8, .rank = 3, .dims = {wd3[0], wd3[1], wd3[2]}};
    optest_expect_infer_error(SC, &n, 6, in, 1,
                              "scaled_conv: w must have the same rank as x (4), got rank 3: x is [1, 3, 7, 7], w is [5, 3, 3]");
    in[1] = &w;
    optest_set_int(&n, SC, "groups", 2);
    optest_expect_infer_error(SC, &n, 6, in, 1,
                              "scaled_conv: attribute 'groups' = 2 must divide the input channels C = 3 (x is [1, 3, 7, 7])");
    optest_set_int(&n, SC, "groups", 1);

    xs = optest_tinfo(XDNN_F32, 1, two);
    optest_expect_infer_error(SC, &n, 6, in, 1, "scaled_conv: x_scale must be one f32 element (a per-tensor scale), got f32[2]");
    xs = optest_tinfo(XDNN_BF16, 1, one);
    optest_expect_infer_error(SC, &n, 6, in, 1, "scaled_conv: x_scale must be one f32 element (a per-tensor scale), got bf16[1]");
    xs = optest_tinfo(XDNN_F32, 1, one);

    ws = optest_tinfo(XDNN_F32, 1, k3);
    optest_expect_infer_error(SC, &n, 6, in, 1,
                              "scaled_conv: w_scale must be one f32 element (per-tensor) or f32[K] = f32[5] (per output "
                              "channel), got f32[3]");
    ws = optest_tinfo(XDNN_F16, 1, k5);
    optest_expect_infer_error(SC, &n, 6, in, 1,
                              "scaled_conv: w_scale must be one f32 element (per-tensor) or f32[K] = f32[5] (per output "
                              "channel), got f16[5]");
    ws = optest_tinfo(XDNN_F32, 4, (int64_t[]){1, 1, 1, 1}); /* per-tensor: any all-ones shape */
    CHECK(strcmp(optest_infer_error(SC, &n, 6, in, 1), "(no error)") == 0, "w_scale [1, 1, 1, 1] is per-tensor");

    b = optest_tinfo(XDNN_F32, 4, b4);
    optest_expect_infer_error(SC, &n, 6, in, 1,
                              "scaled_conv: bias must be f32[K] = f32[5] (one per output channel), got f32[1, 5, 1, 1]");
    b = optest_tinfo(XDNN_BF16, 1, k5);
    optest_expect_infer_error(SC, &n, 6, in, 1,
                              "scaled_conv: bias must be f32[K] = f32[5] (one per output channel), got bf16[5]");
    b = optest_tinfo(XDNN_F32, 1, k5);

    in[5] = &ys; /* y_scale with a bf16 output */
    optest_expect_infer_error(SC, &n, 6, in, 1,
                              "scaled_conv: y_scale requantizes into dtype i8, fp8_e4m3 or fp8_e5m2, but dtype is bf16");
    set_dtype(&n, SC, XDNN_I8);
    ys = optest_tinfo(XDNN_F32, 1, two);
    optest_expect_infer_error(SC, &n, 6, in, 1, "scaled_conv: y_scale must be one f32 element (a per-tensor scale), got f32[2]");
    in[5] = NULL;
    optest_expect_infer_error(SC, &n, 6, in, 1,
                              "scaled_conv: dtype=i8 needs y_scale, the output's per-tensor scale (y = sat(RNE(v / y_scale)))");
    set_dtype(&n, SC, XDNN_F64);
    optest_expect_infer_error(SC, &n, 6, in, 1,
                              "scaled_conv: attribute 'dtype' must be bf16, f16, f32, i8, fp8_e4m3 or fp8_e5m2, got f64");
    set_dtype(&n, SC, XDNN_BF16);
    in[2] = NULL;
    optest_expect_infer_error(SC, &n, 6, in, 1, "scaled_conv: inputs x, w, x_scale and w_scale are required");
}

int main(void)
{
    arena *a = arena_create();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(a, &cases[i]);
    test_hand_case(a);
    test_epilogue_rounding(a);
    test_flops(a);
    test_infer_errors(a);
    arena_destroy(a);
    return test_summary("test_quant_conv");
}
