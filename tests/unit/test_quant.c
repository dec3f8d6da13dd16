/* test_quant.c — e8m0 conversions, quantize / dequantize / amax and
 * scaled_matmul against written-out answers: every quantize case is the byte
 * the CPU reference stores, computed by hand from the formats (dtype.c):
 *   e4m3 bias 7: 1.0 = 0x38, 1.125 = 0x39, 1.25 = 0x3A, max 448 = 0x7E,
 *        NaN 0x7F/0xFF, smallest subnormal 2^-9 = 0x01;
 *   e5m2 bias 15: 1.0 = 0x3C, 1.25 = 0x3D, 1.5 = 0x3E, max 57344 = 0x7B, Inf 0x7C;
 *   e8m0: 2^(b-127), 0xFF NaN.
 * The tie cases include quotients whose f32 rounding lands exactly on a tie
 * of the fp8 / int8 grid while the exact quotient does not (found by search
 * with exact rationals): a reference that divided in f32 would get them
 * wrong, and the GPU kernel's residual correction is held to the same bytes
 * (tests/gpu/difftest_quant.c runs this table too). */
#include "data/data.h"
#include "op_test_util.h"
#include "quant_cases.h"
#include "ops/quant.h"
#include "test_util.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static float f32_of_bits(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

static void test_e8m0(void)
{
    static const struct { double v; uint8_t b; } enc[] = {
        {1.0, 0x7F}, {2.0, 0x80}, {0.5, 0x7E}, {1.4999, 0x7F}, {1.5, 0x80} /* tie -> even (2) */,
        {0.75, 0x7F} /* 1.5 * 2^-1 -> 2^0 */, {3.0, 0x81}, {0x1p127, 0xFE}, {0x1p128, 0xFE} /* saturates */,
        {INFINITY, 0xFE}, {0x1p-127, 0x00}, {0x1p-130, 0x00} /* saturates up */, {0.0, 0x00}, {-0.0, 0x00},
        {0x1.8p-127, 0x01} /* 1.5 * 2^-127 -> 2^-126 */, {-1.0, 0xFF}, {NAN, 0xFF}, {-INFINITY, 0xFF},
    };
    for (size_t i = 0; i < sizeof enc / sizeof enc[0]; i++)
        CHECK(e8m0_encode(enc[i].v) == enc[i].b, "e8m0(%a) = 0x%02X, want 0x%02X", enc[i].v, e8m0_encode(enc[i].v),
              enc[i].b);
    CHECK(isnan(e8m0_decode(0xFF)) && e8m0_decode(0x00) == 0x1p-127 && e8m0_decode(0xFE) == 0x1p127 &&
              e8m0_decode(0x7F) == 1.0,
          "e8m0 decode");
    for (int b = 0; b < 255; b++)
        CHECK(e8m0_encode(e8m0_decode((uint8_t)b)) == b, "e8m0 round trip 0x%02X", b);
    unsigned char byte;
    dtype_store(XDNN_E8M0, &byte, 0, 0.3);
    CHECK(byte == 0x7D && dtype_load(XDNN_E8M0, &byte, 0) == 0.25, "dtype_store/load e8m0 0.3 -> 2^-2");
}

static xdnn_status run1(arena *a, const char *op, const xdnn_dtype *dt, int nin, const ref_tensor *const *in,
                        ref_tensor *out, void (*set)(xnode *, const op_desc *))
{
    const op_desc *d = optest_op_named(op);
    if (!d)
        return XDNN_ERR_INTERNAL;
    xnode n;
    optest_node(a, &n, d);
    if (dt) {
        value v = {.kind = VAL_DTYPE, .dt = *dt};
        optest_set_value(&n, d, "dtype", &v);
    }
    if (set)
        set(&n, d);
    xdnn_diags_t *dg = xdnn_diags_create();
    xdnn_status st = optest_run(d, &n, nin, in, 1, out, dg);
    CHECK(st == XDNN_OK, "%s: %s", op, optest_first_error(dg)); /* else the caller's checks are skipped */
    xdnn_diags_destroy(dg);
    return st;
}

static void test_quantize_table(arena *a)
{
    const int64_t one[1] = {1};
    for (size_t i = 0; i < sizeof qcases / sizeof qcases[0]; i++) {
        const qcase *c = &qcases[i];
        double xv = (double)f32_of_bits(c->xbits), sv = (double)f32_of_bits(c->sbits);
        ref_tensor x = optest_ref_of(1, one, &xv, NULL), s = optest_ref_of(1, one, &sv, NULL), q;
        const ref_tensor *in[2] = {&x, &s};
        if (run1(a, "quantize", &c->dt, 2, in, &q, NULL) == XDNN_OK) {
            unsigned char byte = 0;
            dtype_store(c->dt, &byte, 0, q.data[0]);
            CHECK(byte == c->want, "quantize %s (x=%a s=%a -> %s): got 0x%02X, want 0x%02X", c->why, xv, sv,
                  xdnn_dtype_name(c->dt), byte, c->want);
            optest_ref_free(&q);
        }
        optest_ref_free(&x);
        optest_ref_free(&s);
    }
}

static void set_axis0(xnode *n, const op_desc *d) { optest_set_int(n, d, "axis", 0); }
static void set_block12(xnode *n, const op_desc *d)
{
    const int64_t b[2] = {1, 2};
    optest_set_ints(n, d, "block", 2, b);
}
static void set_block22(xnode *n, const op_desc *d)
{
    const int64_t b[2] = {2, 2};
    optest_set_ints(n, d, "block", 2, b);
}

/* Which scale each element uses, for every granularity, through dequantize
 * (exact products, so the answer is plain arithmetic). */
static void test_granularity(arena *a)
{
    const int64_t xd[2] = {3, 5};
    double qv[15];
    for (int i = 0; i < 15; i++)
        qv[i] = 1;
    ref_tensor q = optest_ref_of(2, xd, qv, NULL), y;
    /* per-channel along axis 0: row r scaled by s[r] */
    const int64_t sd1[1] = {3};
    const double s1[3] = {2, 4, 8};
    ref_tensor s = optest_ref_of(1, sd1, s1, NULL);
    const ref_tensor *in[2] = {&q, &s};
    if (run1(a, "dequantize", NULL, 2, in, &y, set_axis0) == XDNN_OK) {
        for (int i = 0; i < 15; i++)
            CHECK(y.data[i] == s1[i / 5], "axis=0: element %d is %g", i, y.data[i]);
        optest_ref_free(&y);
    }
    optest_ref_free(&s);
    /* block [1, 2]: scale [3, 3] (ceil(5/2) = 3: a partial last block) */
    const int64_t sd2[2] = {3, 3};
    double s2[9];
    for (int i = 0; i < 9; i++)
        s2[i] = i + 1;
    s = optest_ref_of(2, sd2, s2, NULL);
    if (run1(a, "dequantize", NULL, 2, in, &y, set_block12) == XDNN_OK) {
        for (int i = 0; i < 15; i++)
            CHECK(y.data[i] == s2[(i / 5) * 3 + (i % 5) / 2], "block [1,2]: element %d is %g", i, y.data[i]);
        optest_ref_free(&y);
    }
    optest_ref_free(&s);
    /* block [2, 2]: scale [2, 3] */
    const int64_t sd3[2] = {2, 3};
    s = optest_ref_of(2, sd3, s2, NULL);
    if (run1(a, "dequantize", NULL, 2, in, &y, set_block22) == XDNN_OK) {
        for (int i = 0; i < 15; i++)
            CHECK(y.data[i] == s2[(i / 5 / 2) * 3 + (i % 5) / 2], "block [2,2]: element %d is %g", i, y.data[i]);
        optest_ref_free(&y);
    }
    optest_ref_free(&s);
    optest_ref_free(&q);
}

static void test_dequantize_rounding(arena *a)
{
    /* 1.125 * (1 + 2^-8 + 2^-20): exact product 1.125 + 1.125 * 2^-8 + ..., bf16 rounds it once */
    const int64_t one[1] = {1};
    double qv = 1.125, sv = 1 + 0x1p-8 + 0x1p-20;
    ref_tensor q = optest_ref_of(1, one, &qv, NULL), s = optest_ref_of(1, one, &sv, NULL), y;
    const ref_tensor *in[2] = {&q, &s};
    xdnn_dtype bf = XDNN_BF16;
    if (run1(a, "dequantize", &bf, 2, in, &y, NULL) == XDNN_OK) {
        CHECK(y.data[0] == qv * sv, "dequantize keeps the exact product for the store");
        CHECK(dtype_round(XDNN_BF16, y.data[0]) == 1.1328125, "bf16 of %a is %a", y.data[0],
              dtype_round(XDNN_BF16, y.data[0]));
        optest_ref_free(&y);
    }
    optest_ref_free(&q);
    optest_ref_free(&s);
}

static void test_amax(arena *a)
{
    const int64_t xd[2] = {2, 4};
    const double xv[8] = {-3, 1, -0.0, 0, 2, NAN, 0.5, -7};
    ref_tensor x = optest_ref_of(2, xd, xv, NULL), y;
    const ref_tensor *in[1] = {&x};
    if (run1(a, "amax", NULL, 1, in, &y, set_block12) == XDNN_OK) {
        CHECK(y.rank == 2 && y.dims[0] == 2 && y.dims[1] == 2, "amax block [1,2] shape");
        CHECK(y.data[0] == 3 && y.data[1] == 0 && !signbit(y.data[1]) && isnan(y.data[2]) && y.data[3] == 7,
              "amax per block: %g %g %g %g", y.data[0], y.data[1], y.data[2], y.data[3]);
        optest_ref_free(&y);
    }
    if (run1(a, "amax", NULL, 1, in, &y, NULL) == XDNN_OK) {
        CHECK(y.rank == 0 && isnan(y.data[0]), "amax per-tensor with a NaN is NaN");
        optest_ref_free(&y);
    }
    optest_ref_free(&x);
}

static void set_e8m0_scale(xnode *n, const op_desc *d)
{
    value v = {.kind = VAL_DTYPE, .dt = XDNN_E8M0};
    optest_set_value(n, d, "scale_dtype", &v);
}

static void test_quant_scale(arena *a)
{
    const int64_t d7[1] = {7};
    const double av[7] = {0, 1, 448, 449, 3, NAN, 0x1p-140};
    ref_tensor am = optest_ref_of(1, d7, av, NULL), y;
    const ref_tensor *in[1] = {&am};
    if (run1(a, "quant_scale", NULL, 1, in, &y, NULL) == XDNN_OK) { /* f32: amax / 448 */
        CHECK(y.data[0] == 1 && y.data[1] == 1.0 / 448 && y.data[2] == 1 && y.data[3] == 449.0 / 448 &&
                  isnan(y.data[5]),
              "quant_scale f32: %g %g %g %g", y.data[0], y.data[1], y.data[2], y.data[3]);
        optest_ref_free(&y);
    }
    /* e8m0, OCP MX: 2^(floor(log2 amax) - 8) */
    static const uint8_t want[7] = {0x7F, 0x77 /* 2^-8 */, 0x7F /* 448 -> 2^0 */, 0x7F, 0x78 /* 3 -> 2^-7 */, 0xFF,
                                    0x00 /* 2^-148 saturates */};
    if (run1(a, "quant_scale", NULL, 1, in, &y, set_e8m0_scale) == XDNN_OK) {
        for (int i = 0; i < 7; i++) {
            unsigned char b;
            dtype_store(XDNN_E8M0, &b, 0, y.data[i]);
            CHECK(b == want[i], "quant_scale e8m0 of %a: 0x%02X, want 0x%02X", av[i], b, want[i]);
        }
        optest_ref_free(&y);
    }
    optest_ref_free(&am);
}

static void test_scaled_matmul(arena *a)
{
    const op_desc *d = optest_op_named("scaled_matmul");
    if (!d)
        return;
    const int64_t ad[2] = {2, 3}, bd[2] = {2, 3}, one[1] = {1};
    const double av[6] = {1, 2, 3, 4, 5, 6}, bv[6] = {1, 0, -1, 2, 2, 2}; /* b is [N, K]: trans_b */
    double sa = 0.5, sb = 4;
    ref_tensor A = optest_ref_of(2, ad, av, NULL), B = optest_ref_of(2, bd, bv, NULL);
    ref_tensor SA = optest_ref_of(1, one, &sa, NULL), SB = optest_ref_of(1, one, &sb, NULL), C;
    xnode n;
    optest_node(a, &n, d);
    optest_set_bool(&n, d, "trans_b", true);
    const ref_tensor *in[4] = {&A, &B, &SA, &SB};
    tinfo ti[4];
    const tinfo *tp[4];
    const xdnn_dtype dts[4] = {XDNN_FP8_E4M3, XDNN_FP8_E4M3, XDNN_F32, XDNN_F32};
    for (int i = 0; i < 4; i++) {
        ti[i] = optest_tinfo(dts[i], in[i]->rank, in[i]->dims);
        tp[i] = &ti[i];
    }
    tinfo out;
    xdnn_diags_t *dg = xdnn_diags_create();
    CHECK(optest_infer(d, &n, 4, tp, 1, &out, dg) == XDNN_OK && out.dtype == XDNN_BF16 && out.exact_dtype &&
              out.dims[0] == 2 && out.dims[1] == 2,
          "scaled_matmul infers bf16 [2, 2]: %s", optest_first_error(dg));
    xdnn_diags_destroy(dg);
    ti[0].dtype = XDNN_F32;
    optest_expect_infer_error(d, &n, 4, tp, 1,
                              "scaled_matmul: a and b must both be fp8 (fp8_e4m3 / fp8_e5m2) or both i8, got f32 and fp8_e4m3");
    dg = xdnn_diags_create();
    /* infer sees the fp8 dtypes (optest_run's f32 would be refused, and the values never checked) */
    xdnn_status st = optest_run_typed(d, &n, 4, in, dts, 1, &C, dg);
    CHECK(st == XDNN_OK, "scaled_matmul runs: %s", optest_first_error(dg));
    if (st == XDNN_OK) {
        /* row 0: [1 2 3].[1 0 -1] = -2, [1 2 3].[2 2 2] = 12; row 1: -2, 30; times 2 */
        CHECK(C.data[0] == -4 && C.data[1] == 24 && C.data[2] == -4 && C.data[3] == 60, "scaled_matmul values %g %g %g %g",
              C.data[0], C.data[1], C.data[2], C.data[3]);
        optest_ref_free(&C);
    }
    xdnn_diags_destroy(dg);
    optest_ref_free(&A);
    optest_ref_free(&B);
    optest_ref_free(&SA);
    optest_ref_free(&SB);
}

/* Run the requantizing scaled_matmul n with output dtype dt: c as stored
 * (rounded and saturated as the executor stores it) must be want, amax
 * want_amax (NaN matches NaN). */
static void expect_requant(const op_desc *d, xnode *n, const ref_tensor *const *in, xdnn_dtype dt,
                           const double want[4], double want_amax)
{
    value v = {.kind = VAL_DTYPE, .dt = dt};
    optest_set_value(n, d, "dtype", &v);
    ref_tensor C[2];
    xdnn_diags_t *dg = xdnn_diags_create();
    static const xdnn_dtype dts[5] = {XDNN_I8, XDNN_I8, XDNN_F32, XDNN_F32, XDNN_F32};
    xdnn_status rs = optest_run_typed(d, n, 5, in, dts, 2, C, dg);
    CHECK(rs == XDNN_OK, "run: %s", optest_first_error(dg));
    xdnn_diags_destroy(dg);
    if (rs != XDNN_OK)
        return;
    for (int i = 0; i < 4; i++) {
        double got = dtype_round(dt, C[0].data[i]);
        CHECK(got == want[i] || (isnan(got) && isnan(want[i])), "%s c[%d] = %g, want %g", xdnn_dtype_name(dt), i,
              got, want[i]);
    }
    CHECK(C[1].data[0] == want_amax || (isnan(C[1].data[0]) && isnan(want_amax)), "amax %g, want %g", C[1].data[0],
          want_amax);
    optest_ref_free(&C[0]);
    optest_ref_free(&C[1]);
}

/* The requantizing epilogue and amax, by hand: i8 a = [[1 2 3] [4 5 6]],
 * b = [[1 0 -1] [2 2 2]] (trans_b), sa * sb = 2 give v = [[-4 24] [-4 60]]. */
static void test_scaled_matmul_requant(arena *a)
{
    const op_desc *d = optest_op_named("scaled_matmul");
    if (!d)
        return;
    const int64_t ad[2] = {2, 3}, one[1] = {1};
    const double av[6] = {1, 2, 3, 4, 5, 6}, bv[6] = {1, 0, -1, 2, 2, 2};
    double sa = 0.5, sb = 4, sc = 8;
    ref_tensor A = optest_ref_of(2, ad, av, NULL), B = optest_ref_of(2, ad, bv, NULL);
    ref_tensor SA = optest_ref_of(1, one, &sa, NULL), SB = optest_ref_of(1, one, &sb, NULL);
    ref_tensor SC = optest_ref_of(1, one, &sc, NULL);
    xnode n;
    optest_node(a, &n, d);
    optest_set_bool(&n, d, "trans_b", true);
    value i8 = {.kind = VAL_DTYPE, .dt = XDNN_I8};
    optest_set_value(&n, d, "dtype", &i8);
    const ref_tensor *in[5] = {&A, &B, &SA, &SB, &SC};
    tinfo ti[5];
    const tinfo *tp[5];
    const xdnn_dtype dts[5] = {XDNN_I8, XDNN_I8, XDNN_F32, XDNN_F32, XDNN_F32};
    for (int i = 0; i < 5; i++) {
        ti[i] = optest_tinfo(dts[i], in[i]->rank, in[i]->dims);
        tp[i] = &ti[i];
    }
    tinfo out[2];
    xdnn_diags_t *dg = xdnn_diags_create();
    CHECK(optest_infer(d, &n, 5, tp, 2, out, dg) == XDNN_OK && out[0].dtype == XDNN_I8 && out[0].exact_dtype &&
              out[1].dtype == XDNN_F32 && out[1].rank == 0,
          "requantized scaled_matmul infers c i8 [2, 2], amax f32 []: %s", optest_first_error(dg));
    xdnn_diags_destroy(dg);

    /* c_scale 8: v / 8 = [-0.5 3 -0.5 7.5] rounds to even: [0 3 0 8] */
    const double want_i8[4] = {0, 3, 0, 8};
    expect_requant(d, &n, in, XDNN_I8, want_i8, 60);
    /* c_scale 1/64 into e4m3: -4 * 64 = -256 is exact; 24 * 64 and 60 * 64
     * saturate at 448; amax is taken before requantizing */
    SC.data[0] = 1.0 / 64;
    const double want_e4m3[4] = {-256, 448, -256, 448};
    expect_requant(d, &n, in, XDNN_FP8_E4M3, want_e4m3, 60);
    /* a NaN in a poisons its row (c[1][*] NaN) and amax reports it */
    A.data[4] = NAN;
    const double want_nan[4] = {-256, 448, NAN, NAN};
    expect_requant(d, &n, in, XDNN_FP8_E4M3, want_nan, NAN);

    /* the scale and the dtype go together */
    optest_expect_infer_error(d, &n, 4, tp, 1,
                              "scaled_matmul: dtype fp8_e4m3 needs c_scale, the dequantization scale of the "
                              "quantized c (c ~ v / c_scale)");
    value bf16 = {.kind = VAL_DTYPE, .dt = XDNN_BF16};
    optest_set_value(&n, d, "dtype", &bf16);
    optest_expect_infer_error(d, &n, 5, tp, 1,
                              "scaled_matmul: c_scale quantizes c, but dtype is bf16 (give dtype fp8_e4m3, "
                              "fp8_e5m2 or i8)");
    optest_set_value(&n, d, "dtype", &i8);
    const int64_t two[1] = {2};
    ti[4] = optest_tinfo(XDNN_F32, 1, two);
    optest_expect_infer_error(d, &n, 5, tp, 1,
                              "scaled_matmul: c_scale must be one f32 element (a per-tensor scale), got f32[2]");
    value i32 = {.kind = VAL_DTYPE, .dt = XDNN_I32};
    optest_set_value(&n, d, "dtype", &i32);
    ti[4] = optest_tinfo(XDNN_F32, 1, one);
    optest_expect_infer_error(d, &n, 5, tp, 1,
                              "scaled_matmul: attribute 'dtype' must be bf16, f16, f32, fp8_e4m3, fp8_e5m2 or i8, "
                              "got i32");
    optest_ref_free(&A);
    optest_ref_free(&B);
    optest_ref_free(&SA);
    optest_ref_free(&SB);
    optest_ref_free(&SC);
}

static void test_infer_errors(arena *a)
{
    const op_desc *d = optest_op_named("quantize");
    if (!d)
        return;
    xnode n;
    optest_node(a, &n, d);
    const int64_t xd[2] = {4, 64}, sd[2] = {4, 2}, sbad[2] = {4, 3};
    tinfo x = optest_tinfo(XDNN_F32, 2, xd), s = optest_tinfo(XDNN_F32, 2, sd);
    const tinfo *in[2] = {&x, &s};
    optest_expect_infer_error(d, &n, 2, in, 1,
                              "quantize: scale is [4, 2] but x [4, 64] with no axis or block needs one element "
                              "(per-tensor; give axis= or block= for finer scales)");
    const int64_t b[2] = {1, 32};
    optest_set_ints(&n, d, "block", 2, b);
    tinfo out;
    xdnn_diags_t *dg = xdnn_diags_create();
    CHECK(optest_infer(d, &n, 2, in, 1, &out, dg) == XDNN_OK && out.dtype == XDNN_FP8_E4M3 && out.exact_dtype,
          "block [1, 32] fits a [4, 2] scale: %s", optest_first_error(dg));
    xdnn_diags_destroy(dg);
    s = optest_tinfo(XDNN_F32, 2, sbad);
    optest_expect_infer_error(d, &n, 2, in, 1, "quantize: scale is [4, 3] but x [4, 64] with this block needs [4, 2]");
    optest_set_int(&n, d, "axis", 1);
    optest_expect_infer_error(d, &n, 2, in, 1, "quantize: give 'axis' (per-channel) or 'block' (block scales), not both");
    optest_unset(&n, d, "block");
    optest_set_int(&n, d, "axis", 2);
    optest_expect_infer_error(d, &n, 2, in, 1, "quantize: attribute 'axis' = 2 is out of range for a rank-2 x");
    optest_set_int(&n, d, "axis", 0);
    s = optest_tinfo(XDNN_BF16, 1, xd);
    optest_expect_infer_error(d, &n, 2, in, 1, "quantize: scale must be f32 or e8m0, got bf16");
    s = optest_tinfo(XDNN_E8M0, 1, xd);
    value v = {.kind = VAL_DTYPE, .dt = XDNN_F16};
    optest_set_value(&n, d, "dtype", &v);
    optest_expect_infer_error(d, &n, 2, in, 1, "quantize: attribute 'dtype' must be fp8_e4m3, fp8_e5m2 or i8, got f16");
}

int main(void)
{
    arena *a = arena_create();
    test_e8m0();
    test_quantize_table(a);
    test_granularity(a);
    test_dequantize_rounding(a);
    test_amax(a);
    test_quant_scale(a);
    test_scaled_matmul(a);
    test_scaled_matmul_requant(a);
    test_infer_errors(a);
    arena_destroy(a);
    return test_summary("test_quant");
}
