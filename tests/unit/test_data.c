/* test_data.c — dtype conversions (exhaustive round trips, ties to even,
 * hand-picked edge cases, an independent _Float16 oracle), Philox known-answer
 * vectors, the uniform/normal generators' moments, and tensor statistics. */
#include "data/data.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DNAN ((double)NAN)

static uint32_t fbits(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

static float ffrom(uint32_t b)
{
    float f;
    memcpy(&f, &b, 4);
    return f;
}

static uint64_t dbits(double v)
{
    uint64_t b;
    memcpy(&b, &v, 8);
    return b;
}

/* Store v as dtype t and return the stored bits. */
static uint32_t store_bits(xdnn_dtype t, double v)
{
    uint32_t b = 0;
    dtype_store(t, &b, 0, v);
    return b;
}

/* ---------------------------------------------------------------- names */

static void test_names(void)
{
    static const char *names[] = {"f32", "f16", "bf16", "fp8_e4m3", "fp8_e5m2", "i8", "i32", "bool", "i64", "f64", "e8m0"};
    static const size_t sizes[] = {4, 2, 2, 1, 1, 1, 4, 1, 8, 8, 1};
    _Static_assert(sizeof names / sizeof names[0] == XDNN_DTYPE_COUNT, "one name per dtype");
    for (int i = 0; i < XDNN_DTYPE_COUNT; i++) {
        xdnn_dtype t = XDNN_F64;
        CHECK(strcmp(xdnn_dtype_name((xdnn_dtype)i), names[i]) == 0, "name %d: %s", i, xdnn_dtype_name((xdnn_dtype)i));
        CHECK(xdnn_dtype_from_name(names[i], &t) && t == (xdnn_dtype)i, "from_name %s", names[i]);
        CHECK(xdnn_dtype_size((xdnn_dtype)i) == sizes[i], "size of %s", names[i]);
    }
    xdnn_dtype t = XDNN_F32;
    CHECK(xdnn_dtype_from_name("f8e4m3", &t) && t == XDNN_FP8_E4M3, "alias f8e4m3");
    CHECK(xdnn_dtype_from_name("f8e5m2", &t) && t == XDNN_FP8_E5M2, "alias f8e5m2");
    CHECK(xdnn_dtype_from_name("f8e8m0", &t) && t == XDNN_E8M0, "alias f8e8m0");
    CHECK(!xdnn_dtype_from_name("float32", &t) && !xdnn_dtype_from_name("", &t) && !xdnn_dtype_from_name(NULL, &t),
          "unknown names rejected");
    CHECK(dtype_is_float(XDNN_BF16) && dtype_is_float(XDNN_FP8_E5M2) && dtype_is_float(XDNN_F64) &&
              !dtype_is_float(XDNN_I32) && !dtype_is_float(XDNN_BOOL),
          "dtype_is_float");
}

/* ---------------------------------------------------------------- exhaustive round trips */

static void test_round_trips(void)
{
    for (uint32_t h = 0; h < 65536; h++) {
        float f = f16_bits_to_f32((uint16_t)h);
        CHECK(f32_to_f16_bits(f) == h, "f16 %04x via f32 -> %04x", h, f32_to_f16_bits(f));
        double v = dtype_load(XDNN_F16, &h, 0);
        CHECK(store_bits(XDNN_F16, v) == h, "f16 %04x via double", h);
        float g = bf16_bits_to_f32((uint16_t)h);
        CHECK(f32_to_bf16_bits(g) == h, "bf16 %04x via f32 -> %04x", h, f32_to_bf16_bits(g));
        CHECK(isnan(g) || fbits(g) == h << 16, "bf16 %04x is the top half of f32 %08x", h, fbits(g));
        v = dtype_load(XDNN_BF16, &h, 0);
        CHECK(store_bits(XDNN_BF16, v) == h, "bf16 %04x via double", h);
    }
    for (uint32_t b = 0; b < 256; b++) {
        CHECK(f32_to_e4m3_bits(e4m3_bits_to_f32((uint8_t)b)) == b, "e4m3 %02x", b);
        CHECK(f32_to_e5m2_bits(e5m2_bits_to_f32((uint8_t)b)) == b, "e5m2 %02x", b);
        CHECK(store_bits(XDNN_FP8_E4M3, dtype_load(XDNN_FP8_E4M3, &b, 0)) == b, "e4m3 %02x via double", b);
        CHECK(store_bits(XDNN_FP8_E5M2, dtype_load(XDNN_FP8_E5M2, &b, 0)) == b, "e5m2 %02x via double", b);
        CHECK(isnan(e4m3_bits_to_f32((uint8_t)b)) == ((b & 0x7F) == 0x7F), "e4m3 NaN only at 7F/FF: %02x", b);
        CHECK(isinf(e4m3_bits_to_f32((uint8_t)b)) == false, "e4m3 has no Inf: %02x", b);
    }
    /* f32 storage keeps signalling NaN payloads and -0. */
    uint32_t snan = 0x7F800001u, got = store_bits(XDNN_F32, dtype_load(XDNN_F32, &snan, 0));
    CHECK(got == snan, "f32 sNaN through double: %08x", got);
    CHECK(store_bits(XDNN_F32, -0.0) == 0x80000000u, "f32 -0");
}

/* ---------------------------------------------------------------- ties to even */

typedef struct fmt_case {
    xdnn_dtype t;
    uint32_t max_bits; /* largest finite positive pattern */
    uint32_t over_bits; /* what overflow gives (Inf or saturation) */
} fmt_case;

static void test_ties(void)
{
    static const fmt_case cases[] = {
        {XDNN_F16, 0x7BFF, 0x7C00},
        {XDNN_BF16, 0x7F7F, 0x7F80},
        {XDNN_FP8_E4M3, 0x7E, 0x7E},
        {XDNN_FP8_E5M2, 0x7B, 0x7B},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        xdnn_dtype t = cases[c].t;
        for (uint32_t h = 0; h < cases[c].max_bits; h++) {
            double a = dtype_load(t, &h, 0);
            uint32_t h1 = h + 1;
            double b = dtype_load(t, &h1, 0);
            double mid = (a + b) / 2; /* exact: one more bit than the format has */
            uint32_t even = (h & 1) ? h1 : h;
            CHECK(store_bits(t, mid) == even, "%s tie between %x and %x -> %x", xdnn_dtype_name(t), h, h1,
                  store_bits(t, mid));
            CHECK(store_bits(t, -mid) == (even | (t == XDNN_F16 || t == XDNN_BF16 ? 0x8000u : 0x80u)),
                  "%s negative tie %x", xdnn_dtype_name(t), h);
            double below = nextafter(mid, 0), above = nextafter(mid, HUGE_VAL);
            CHECK(store_bits(t, below) == h, "%s just below the tie %x", xdnn_dtype_name(t), h);
            CHECK(store_bits(t, above) == h1, "%s just above the tie %x", xdnn_dtype_name(t), h);
            if (t == XDNN_F16 || t == XDNN_BF16) { /* the float path must agree */
                float fm = (float)mid;
                uint32_t viaf = t == XDNN_F16 ? f32_to_f16_bits(fm) : f32_to_bf16_bits(fm);
                CHECK(viaf == even, "%s float tie %x", xdnn_dtype_name(t), h);
            }
        }
        /* Overflow: half an ulp above max and far above. */
        uint32_t mb = cases[c].max_bits, mb_1 = mb - 1;
        double max = dtype_load(t, &mb, 0), ulp = max - dtype_load(t, &mb_1, 0);
        CHECK(store_bits(t, max + ulp / 2) == cases[c].over_bits, "%s max + ulp/2", xdnn_dtype_name(t));
        CHECK(store_bits(t, max + ulp / 4) == mb, "%s max + ulp/4 rounds down", xdnn_dtype_name(t));
        CHECK(store_bits(t, 1e300) == cases[c].over_bits, "%s 1e300", xdnn_dtype_name(t));
    }
}

/* ---------------------------------------------------------------- hand-picked values */

static void test_hand_picked(void)
{
    /* f16 */
    CHECK(store_bits(XDNN_F16, 1.0) == 0x3C00, "f16 1");
    CHECK(store_bits(XDNN_F16, -2.0) == 0xC000, "f16 -2");
    CHECK(store_bits(XDNN_F16, 0.1) == 0x2E66, "f16 0.1");
    CHECK(store_bits(XDNN_F16, 65504.0) == 0x7BFF, "f16 max");
    CHECK(store_bits(XDNN_F16, 65519.99) == 0x7BFF, "f16 just under the overflow tie");
    CHECK(store_bits(XDNN_F16, 65520.0) == 0x7C00, "f16 overflow tie -> Inf");
    CHECK(store_bits(XDNN_F16, ldexp(1, -24)) == 0x0001, "f16 min subnormal");
    CHECK(store_bits(XDNN_F16, ldexp(1, -25)) == 0x0000, "f16 half min subnormal ties to 0");
    CHECK(store_bits(XDNN_F16, ldexp(1.0000001, -25)) == 0x0001, "f16 above half min subnormal");
    CHECK(store_bits(XDNN_F16, ldexp(3, -25)) == 0x0002, "f16 1.5 * min subnormal ties to 2");
    CHECK(store_bits(XDNN_F16, ldexp(1, -14)) == 0x0400, "f16 min normal");
    CHECK(store_bits(XDNN_F16, ldexp(1023.5, -24)) == 0x0400, "f16 subnormal rounds up into the normals");
    CHECK(store_bits(XDNN_F16, -0.0) == 0x8000, "f16 -0");
    CHECK(store_bits(XDNN_F16, -HUGE_VAL) == 0xFC00, "f16 -Inf");
    CHECK(store_bits(XDNN_F16, DNAN) == 0x7E00, "f16 NaN");
    /* bf16 */
    CHECK(store_bits(XDNN_BF16, 1.0) == 0x3F80, "bf16 1");
    CHECK(store_bits(XDNN_BF16, M_PI) == 0x4049, "bf16 pi");
    CHECK(store_bits(XDNN_BF16, 3.3895313892515355e38) == 0x7F7F, "bf16 max");
    CHECK(store_bits(XDNN_BF16, ldexp(1, -133)) == 0x0001, "bf16 min subnormal");
    CHECK(store_bits(XDNN_BF16, HUGE_VAL) == 0x7F80, "bf16 Inf");
    /* e4m3fn: max 448, saturating, NaN 7F */
    CHECK(store_bits(XDNN_FP8_E4M3, 448.0) == 0x7E, "e4m3 448");
    CHECK(store_bits(XDNN_FP8_E4M3, 449.0) == 0x7E, "e4m3 449 saturates");
    CHECK(store_bits(XDNN_FP8_E4M3, 1e6) == 0x7E && store_bits(XDNN_FP8_E4M3, -1e6) == 0xFE, "e4m3 saturation");
    CHECK(store_bits(XDNN_FP8_E4M3, HUGE_VAL) == 0x7E && store_bits(XDNN_FP8_E4M3, -HUGE_VAL) == 0xFE,
          "e4m3 Inf saturates");
    CHECK(store_bits(XDNN_FP8_E4M3, DNAN) == 0x7F && store_bits(XDNN_FP8_E4M3, -DNAN) == 0xFF, "e4m3 NaN");
    CHECK(store_bits(XDNN_FP8_E4M3, 1.0) == 0x38 && store_bits(XDNN_FP8_E4M3, 0.5) == 0x30, "e4m3 1, 0.5");
    CHECK(store_bits(XDNN_FP8_E4M3, ldexp(1, -9)) == 0x01, "e4m3 min subnormal");
    CHECK(store_bits(XDNN_FP8_E4M3, ldexp(1, -10)) == 0x00, "e4m3 half min subnormal ties to 0");
    CHECK(store_bits(XDNN_FP8_E4M3, ldexp(1, -6)) == 0x08, "e4m3 min normal");
    CHECK(e4m3_bits_to_f32(0x7E) == 448.0f && e4m3_bits_to_f32(0x01) == ldexpf(1, -9), "e4m3 decode");
    CHECK(store_bits(XDNN_FP8_E4M3, 17.0) == 0x58 && store_bits(XDNN_FP8_E4M3, 19.0) == 0x5A,
          "e4m3 ties: 17 -> 16, 19 -> 20");
    /* e5m2: max 57344, finite overflow saturates, Inf stays */
    CHECK(store_bits(XDNN_FP8_E5M2, 57344.0) == 0x7B, "e5m2 max");
    CHECK(store_bits(XDNN_FP8_E5M2, 61440.0) == 0x7B && store_bits(XDNN_FP8_E5M2, 1e9) == 0x7B,
          "e5m2 finite overflow saturates");
    CHECK(store_bits(XDNN_FP8_E5M2, HUGE_VAL) == 0x7C && store_bits(XDNN_FP8_E5M2, -HUGE_VAL) == 0xFC,
          "e5m2 Inf");
    CHECK(store_bits(XDNN_FP8_E5M2, DNAN) == 0x7E, "e5m2 NaN");
    CHECK(store_bits(XDNN_FP8_E5M2, 1.0) == 0x3C && store_bits(XDNN_FP8_E5M2, ldexp(1, -16)) == 0x01,
          "e5m2 1, min subnormal");
    CHECK(isinf(e5m2_bits_to_f32(0x7C)) && isnan(e5m2_bits_to_f32(0x7D)), "e5m2 decode Inf/NaN");
    /* One rounding from double: these sit just above a tie, and rounding to
     * float first would land exactly on the tie and go to even (down). */
    CHECK(dtype_round(XDNN_F16, 1 + ldexp(1, -11) + ldexp(1, -40)) == 1 + ldexp(1, -10), "f16 no double rounding");
    CHECK(dtype_round(XDNN_BF16, 1 + ldexp(1, -8) + ldexp(1, -40)) == 1 + ldexp(1, -7), "bf16 no double rounding");
    CHECK(dtype_round(XDNN_FP8_E4M3, 1 + ldexp(1, -4) + ldexp(1, -40)) == 1 + ldexp(1, -3),
          "e4m3 no double rounding");
    CHECK(dtype_round(XDNN_F32, 1 + ldexp(1, -24) + ldexp(1, -50)) == 1 + ldexp(1, -23), "f32 rounds once");
    /* integers: nearest even, saturating, NaN -> 0 */
    CHECK(dtype_round(XDNN_I8, 2.5) == 2 && dtype_round(XDNN_I8, 3.5) == 4 && dtype_round(XDNN_I8, -2.5) == -2,
          "i8 ties");
    CHECK(dtype_round(XDNN_I8, 127.6) == 127 && dtype_round(XDNN_I8, 200) == 127 &&
              dtype_round(XDNN_I8, -1000) == -128,
          "i8 saturation");
    CHECK(dtype_round(XDNN_I8, DNAN) == 0 && dtype_round(XDNN_I32, DNAN) == 0 && dtype_round(XDNN_I64, DNAN) == 0,
          "int NaN -> 0");
    CHECK(dtype_round(XDNN_I32, 0.5) == 0 && dtype_round(XDNN_I32, 1.5) == 2 && dtype_round(XDNN_I32, -0.4) == 0,
          "i32 rounding");
    CHECK(dtype_round(XDNN_I32, 2147483647.5) == 2147483647.0 && dtype_round(XDNN_I32, -3e9) == -2147483648.0 &&
              dtype_round(XDNN_I32, HUGE_VAL) == 2147483647.0,
          "i32 saturation");
    int64_t i64 = 0;
    dtype_store(XDNN_I64, &i64, 0, 1e19);
    CHECK(i64 == INT64_MAX, "i64 saturates high");
    dtype_store(XDNN_I64, &i64, 0, -1e19);
    CHECK(i64 == INT64_MIN, "i64 saturates low");
    dtype_store(XDNN_I64, &i64, 0, ldexp(1, 53) + 4);
    CHECK(i64 == 9007199254740996LL, "i64 exact large value: %lld", (long long)i64);
    dtype_store(XDNN_I64, &i64, 0, -7.5);
    CHECK(i64 == -8, "i64 -7.5 -> -8");
    CHECK(dtype_round(XDNN_BOOL, 0) == 0 && dtype_round(XDNN_BOOL, -0.0) == 0 && dtype_round(XDNN_BOOL, 0.1) == 1 &&
              dtype_round(XDNN_BOOL, -3) == 1 && dtype_round(XDNN_BOOL, DNAN) == 1,
          "bool");
    unsigned char two = 2;
    CHECK(dtype_load(XDNN_BOOL, &two, 0) == 1.0, "bool byte 2 loads as 1");
    double f64 = 0.1;
    CHECK(dtype_round(XDNN_F64, f64) == f64 && dbits(dtype_round(XDNN_F64, -0.0)) == dbits(-0.0), "f64 plain");
}

/* ---------------------------------------------------------------- oracle: _Float16 */

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 11;
}

static void test_f16_oracle(void)
{
#ifdef __FLT16_MAX__
    uint64_t s = 12345;
    int compared = 0;
    for (int i = 0; i < 2000000; i++) {
        uint32_t b = (uint32_t)lcg(&s);
        /* Bias toward the f16 range so most samples are interesting. */
        if (i % 4) /* exponents 2^-27 .. 2^22: subnormals to overflow */
            b = (b & 0x807FFFFFu) | ((uint32_t)(100 + (lcg(&s) % 50)) << 23);
        if (i % 4 == 2) /* exactly on an f16 tie (normal range) */
            b = (b & ~0x1FFFu) | 0x1000u;
        float f = ffrom(b);
        if (isnan(f))
            continue;
        _Float16 h = (_Float16)f;
        uint16_t want;
        memcpy(&want, &h, 2);
        CHECK(f32_to_f16_bits(f) == want, "f32 %08x -> f16 %04x, compiler says %04x", b, f32_to_f16_bits(f), want);
        double v = (double)f + ldexp((double)(int)(lcg(&s) % 64) - 32, -45) * fabs((double)f);
        _Float16 hv = (_Float16)v; /* gcc converts double -> _Float16 with one rounding */
        memcpy(&want, &hv, 2);
        CHECK(store_bits(XDNN_F16, v) == want, "double %a -> f16 %04x, compiler says %04x", v,
              store_bits(XDNN_F16, v), want);
        compared++;
    }
    CHECK(compared > 1000000, "oracle compared %d values", compared);
#endif
    /* bf16 oracle: the classic integer rounding of the f32 bits (non-NaN). */
    uint64_t s2 = 99;
    for (int i = 0; i < 2000000; i++) {
        uint32_t b = (uint32_t)lcg(&s2);
        if (isnan(ffrom(b)))
            continue;
        uint32_t want = (b + 0x7FFFu + ((b >> 16) & 1)) >> 16;
        CHECK(f32_to_bf16_bits(ffrom(b)) == want, "f32 %08x -> bf16", b);
    }
}

/* ---------------------------------------------------------------- Philox */

static void test_philox(void)
{
    static const struct {
        uint32_t ctr[4], key[2], out[4];
    } kat[] = {
        {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
        {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
         {0xffffffff, 0xffffffff},
         {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
        {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
         {0xa4093822, 0x299f31d0},
         {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
    };
    for (size_t i = 0; i < sizeof kat / sizeof kat[0]; i++) {
        uint32_t out[4];
        philox4x32_10(kat[i].ctr, kat[i].key, out);
        CHECK(memcmp(out, kat[i].out, sizeof out) == 0, "KAT %zu: %08x %08x %08x %08x", i, out[0], out[1], out[2],
              out[3]);
    }
    /* Seeds: fnv1a64 of the 8 LE seed bytes then the name (values from an
     * independent Python implementation). */
    CHECK(rng_tensor_seed(0, "x") == 0xe6047a3a24901c27ull, "seed(0, x) = %llx",
          (unsigned long long)rng_tensor_seed(0, "x"));
    CHECK(rng_tensor_seed(1, "weight") == 0x68f287391c19c7f4ull, "seed(1, weight)");
    CHECK(rng_tensor_seed(0, "x") != rng_tensor_seed(0, "y") && rng_tensor_seed(0, "x") != rng_tensor_seed(1, "x"),
          "seeds differ by name and graph seed");
    /* uniform01 element 0 of seed 0 is the first KAT word's top 24 bits. */
    CHECK(rng_uniform01(0, 0, 0) == (double)(0x6627e8d5u >> 8) / 16777216.0, "uniform01(0,0,0) = %.17g",
          rng_uniform01(0, 0, 0));
    /* Counter layout: (i lo, i hi, stream lo, stream hi), key (seed lo, seed hi). */
    uint32_t out[4];
    const uint32_t ctr[4] = {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, key[2] = {0xa4093822, 0x299f31d0};
    philox4x32_10(ctr, key, out);
    CHECK(rng_uniform01(0x299f31d0a4093822ull, 0x0370734413198a2eull, 0x85a308d3243f6a88ull) ==
              (double)(out[0] >> 8) / 16777216.0,
          "counter and key word order");
    CHECK(rng_uniform01(5, 0, 7) != rng_uniform01(5, 1, 7) && rng_uniform01(5, 0, 7) != rng_uniform01(6, 0, 7),
          "streams and seeds differ");
}

static void test_moments(void)
{
    enum { N = 100000 };
    double s1 = 0, s2 = 0, lo = 1, hi = 0;
    int off_grid = 0;
    for (int i = 0; i < N; i++) {
        double u = rng_uniform01(42, 0, (uint64_t)i);
        s1 += u;
        s2 += u * u;
        lo = u < lo ? u : lo;
        hi = u > hi ? u : hi;
        off_grid += ldexp(u, 24) != floor(ldexp(u, 24));
    }
    double mean = s1 / N, var = s2 / N - mean * mean;
    /* Standard errors: mean 0.0009, variance 0.0003; bounds are ~5 sigma. */
    CHECK(fabs(mean - 0.5) < 0.005, "uniform mean %g", mean);
    CHECK(fabs(var - 1.0 / 12) < 0.002, "uniform variance %g", var);
    CHECK(lo >= 0 && lo < 0.001 && hi < 1 && hi > 0.999, "uniform range [%g, %g]", lo, hi);
    CHECK(off_grid == 0, "%d uniform values are not multiples of 2^-24", off_grid);

    double m1 = 0, m2 = 0, m3 = 0, m4 = 0;
    int within1 = 0, finite = 0;
    for (int i = 0; i < N; i++) {
        double z = rng_normal(7, 0, (uint64_t)i);
        finite += isfinite(z);
        m1 += z;
        m2 += z * z;
        m3 += z * z * z;
        m4 += z * z * z * z;
        within1 += fabs(z) <= 1;
    }
    m1 /= N;
    m2 /= N;
    m3 /= N;
    m4 /= N;
    CHECK(finite == N, "normal values are finite");
    CHECK(fabs(m1) < 0.015, "normal mean %g", m1);
    CHECK(fabs(m2 - 1) < 0.025, "normal variance %g", m2);
    CHECK(fabs(m3) < 0.06, "normal skewness %g", m3);
    CHECK(fabs(m4 - 3) < 0.15, "normal kurtosis %g", m4);
    CHECK(fabs((double)within1 / N - 0.682689) < 0.008, "normal P(|z| <= 1) = %g", (double)within1 / N);
    /* u1 = 1 (top bits all ones... plus one) gives exactly 0; never -Inf/NaN. */
    CHECK(rng_normal(7, 0, 3) == rng_normal(7, 0, 3), "normal is deterministic");
}

/* ---------------------------------------------------------------- stats */

static void test_stats(void)
{
    host_tensor t;
    int64_t dims[2] = {2, 3};
    CHECK(host_tensor_alloc(&t, XDNN_F32, 2, dims, NULL) == XDNN_OK, "alloc");
    const double vals[6] = {1, 2, DNAN, HUGE_VAL, 3, -HUGE_VAL};
    tensor_scatter(&t, vals);
    tensor_stats s;
    tensor_compute_stats(&t, &s);
    CHECK(s.min == 1 && s.max == 3 && s.mean == 2, "min %g max %g mean %g", s.min, s.max, s.mean);
    CHECK(fabs(s.std - sqrt(2.0 / 3)) < 1e-15, "std %g", s.std);
    CHECK(s.nan == 1 && s.inf == 2 && s.count == 6, "nan %lld inf %lld count %lld", (long long)s.nan,
          (long long)s.inf, (long long)s.count);
    host_tensor_free(&t);

    /* Checksum: fnv1a64 of the stored bytes in logical order; a transposed
     * layout holding the same logical values has the same checksum. */
    int64_t d22[2] = {2, 2}, col[2] = {1, 2};
    host_tensor a, b;
    host_tensor_alloc(&a, XDNN_F32, 2, d22, NULL);
    host_tensor_alloc(&b, XDNN_F32, 2, d22, col);
    const double v4[4] = {1, 2, 3, 4};
    tensor_scatter(&a, v4);
    tensor_scatter(&b, v4);
    CHECK(memcmp(a.data, b.data, 16) != 0, "layouts differ in memory");
    tensor_stats sa, sb;
    tensor_compute_stats(&a, &sa);
    tensor_compute_stats(&b, &sb);
    CHECK(sa.checksum == 0x8faa0a18faf0fb98ull, "checksum %llx", (unsigned long long)sa.checksum);
    CHECK(sa.checksum == sb.checksum, "checksum independent of layout");
    CHECK(sa.mean == 2.5 && sb.std == sa.std, "stats independent of layout");
    dtype_store(XDNN_F32, b.data, 0, -0.0);
    dtype_store(XDNN_F32, a.data, 0, 0.0);
    tensor_compute_stats(&a, &sa);
    tensor_compute_stats(&b, &sb);
    CHECK(sa.checksum != sb.checksum, "checksum tells -0 from +0");
    host_tensor_free(&a);
    host_tensor_free(&b);

    host_tensor e;
    int64_t d0[1] = {0};
    host_tensor_alloc(&e, XDNN_F16, 1, d0, NULL);
    tensor_compute_stats(&e, &s);
    CHECK(s.count == 0 && isnan(s.mean) && s.checksum == 0xcbf29ce484222325ull, "empty tensor stats");
    host_tensor_free(&e);
}

/* Large tensors are walked by several threads (tensor.c): the same bits as the sequential walk, through
 * permuted strides, and a broadcast store (two indices, one element) still keeps the last index's value. */
static void test_parallel_walks(void)
{
    const int64_t dims[4] = {3, 70, 5, 67};
    const int64_t strides[4] = {70 * 5 * 67, 1, 67 * 70, 70}; /* C innermost: a dense permutation */
    host_tensor t;
    CHECK(host_tensor_alloc(&t, XDNN_F32, 4, dims, strides) == XDNN_OK, "alloc permuted");
    const int64_t n = t.numel;
    double *in = malloc(sizeof *in * (size_t)n), *out = malloc(sizeof *out * (size_t)n);
    for (int64_t k = 0; k < n; k++)
        in[k] = (double)k - 7.5;
    tensor_scatter(&t, in);
    int64_t idx[4] = {0}, bad = 0;
    for (int64_t k = 0; k < n; k++) {
        bad += dtype_load(XDNN_F32, t.data, host_tensor_offset(&t, idx)) != in[k];
        for (int d = 3; d >= 0 && ++idx[d] == dims[d]; d--)
            idx[d] = 0;
    }
    CHECK(n > 65536 && bad == 0, "scatter through permuted strides: %lld of %lld misplaced", (long long)bad,
          (long long)n);
    tensor_gather(&t, out);
    bad = 0;
    for (int64_t k = 0; k < n; k++)
        bad += out[k] != in[k];
    CHECK(bad == 0, "gather through permuted strides: %lld of %lld differ", (long long)bad, (long long)n);
    host_tensor_free(&t);

    const int64_t bdims[2] = {34000, 2}, bstrides[2] = {1, 0}; /* [i, 0] and [i, 1] share element i; 68000 elements: past the threaded size, within in[] */
    CHECK(host_tensor_alloc(&t, XDNN_F32, 2, bdims, bstrides) == XDNN_OK, "alloc broadcast");
    tensor_scatter(&t, in);
    bad = 0;
    for (int64_t i = 0; i < bdims[0]; i++)
        bad += dtype_load(XDNN_F32, t.data, i) != in[2 * i + 1];
    CHECK(bad == 0, "broadcast scatter: %lld elements not the last index's value", (long long)bad);
    host_tensor_free(&t);
    free(in);
    free(out);
}

int main(void)
{
    test_names();
    test_round_trips();
    test_ties();
    test_hand_picked();
    test_f16_oracle();
    test_philox();
    test_moments();
    test_stats();
    test_parallel_walks();
    return test_summary("test_data");
}
