/* dtype.c — element types: names, sizes, and exact bit-level conversions
 * between doubles and every storage type.
 *
 * Rounding.  Every conversion rounds exactly once, to nearest with ties to
 * even, straight from the double (or float) it is given: double -> f16 does
 * not go through float, so there is no double rounding.  The small float
 * formats share one encoder (minifloat_encode) that works on the exact binary
 * value: |v| = q * 2^(e-M) with q an integer found by nearbyint() of an exact
 * power-of-two scaling, so the only inexact step is that single rounding.
 *
 * Formats (E exponent bits, M mantissa bits, bias):
 *   f16      E5 M10 bias 15   IEEE: Inf, NaN; overflow rounds to Inf.
 *   bf16     E8 M7  bias 127  IEEE: Inf, NaN; overflow rounds to Inf.
 *   fp8_e4m3 E4 M3  bias 7    OCP "e4m3fn": no Inf; the only NaNs are 0x7F and
 *                             0xFF; max 448.  Saturating: finite overflow and
 *                             +-Inf become +-448.  NaN -> 0x7F / 0xFF (sign kept).
 *   fp8_e5m2 E5 M2  bias 15   IEEE-like: has Inf and NaN; max 57344.
 *                             Our choice: finite values beyond the range
 *                             saturate to +-57344 (like CUDA's __NV_SATFINITE),
 *                             while +-Inf stays +-Inf and NaN stays NaN.
 *   e8m0     E8 M0  bias 127  OCP MX scale: unsigned powers of two 2^(e-127),
 *                             e = 0..254 (2^-127 .. 2^127); 0xFF is the NaN;
 *                             no zero, no Inf.  A value rounds to the nearest
 *                             power of two (|v| = m * 2^e, m in [1, 2): m < 1.5
 *                             gives 2^e, m >= 1.5 gives 2^(e+1); the tie 1.5
 *                             goes to the even, mantissa-less 2^(e+1)), and
 *                             saturates: above 2^127 (+Inf too) -> 0xFE, below
 *                             2^-127 (0 and -0 too) -> 0x00.  NaN and negative
 *                             values have no encoding: 0xFF.
 * NaN payloads: f16/bf16/e5m2 keep the top bits of the payload (and set the
 * quiet bit when those are all zero, so the result is still a NaN).  Loads
 * build the double bit by bit, so signalling NaNs survive load + store and
 * every bit pattern of every type round-trips through double and float.
 *
 * Integers: i8, i32, i64 round to nearest even and saturate to their range;
 * NaN becomes 0.  bool stores 1 for v != 0 (NaN included) and 0 otherwise; any
 * non-zero byte loads as 1.  f64 is stored as is; f32 by the hardware's
 * correctly rounded (float) cast, NaN payloads kept.
 *
 * Host byte order is assumed little-endian (checked at compile time), which
 * is also the order of every file format xdnn writes.
 */
#include "data.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "xdnn assumes a little-endian host"
#endif


/* ---------------------------------------------------------------- names and sizes */

static const char *const dtype_names[XDNN_DTYPE_COUNT] = {
    [XDNN_F32] = "f32",           [XDNN_F16] = "f16",           [XDNN_BF16] = "bf16",
    [XDNN_FP8_E4M3] = "fp8_e4m3", [XDNN_FP8_E5M2] = "fp8_e5m2", [XDNN_I8] = "i8",
    [XDNN_I32] = "i32",           [XDNN_BOOL] = "bool",         [XDNN_I64] = "i64",
    [XDNN_F64] = "f64",           [XDNN_E8M0] = "e8m0",
};
_Static_assert(sizeof dtype_names / sizeof dtype_names[0] == XDNN_DTYPE_COUNT, "one name per dtype");

static const unsigned char dtype_sizes[XDNN_DTYPE_COUNT] = {
    [XDNN_F32] = 4, [XDNN_F16] = 2, [XDNN_BF16] = 2, [XDNN_FP8_E4M3] = 1, [XDNN_FP8_E5M2] = 1,
    [XDNN_I8] = 1,  [XDNN_I32] = 4, [XDNN_BOOL] = 1, [XDNN_I64] = 8,      [XDNN_F64] = 8,
    [XDNN_E8M0] = 1,
};
_Static_assert(sizeof dtype_sizes / sizeof dtype_sizes[0] == XDNN_DTYPE_COUNT, "one size per dtype");

const char *xdnn_dtype_name(xdnn_dtype t)
{
    return (unsigned)t < XDNN_DTYPE_COUNT ? dtype_names[t] : "?";
}

bool xdnn_dtype_from_name(const char *name, xdnn_dtype *out)
{
    if (!name)
        return false;
    for (int i = 0; i < XDNN_DTYPE_COUNT; i++) {
        if (strcmp(name, dtype_names[i]) == 0) {
            *out = (xdnn_dtype)i;
            return true;
        }
    }
    if (strcmp(name, "f8e4m3") == 0) {
        *out = XDNN_FP8_E4M3;
        return true;
    }
    if (strcmp(name, "f8e5m2") == 0) {
        *out = XDNN_FP8_E5M2;
        return true;
    }
    if (strcmp(name, "f8e8m0") == 0) {
        *out = XDNN_E8M0;
        return true;
    }
    return false;
}

size_t xdnn_dtype_size(xdnn_dtype t)
{
    return (unsigned)t < XDNN_DTYPE_COUNT ? dtype_sizes[t] : 0;
}

bool dtype_is_float(xdnn_dtype t)
{
    switch (t) {
    case XDNN_F32: case XDNN_F16: case XDNN_BF16: case XDNN_FP8_E4M3: case XDNN_FP8_E5M2: case XDNN_F64:
    case XDNN_E8M0:
        return true;
    default:
        return false;
    }
}

/* ---------------------------------------------------------------- bit access */

static uint64_t double_bits(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

static double double_from_bits(uint64_t b)
{
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

static uint32_t float_bits(float v)
{
    uint32_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

static float float_from_bits(uint32_t b)
{
    float v;
    memcpy(&v, &b, sizeof v);
    return v;
}

/* float -> double keeping a NaN's payload bit for bit (the hardware cast would
 * set the quiet bit of a signalling NaN). */
static double widen_exact(float f)
{
    uint32_t b = float_bits(f);
    if ((b & 0x7F800000u) == 0x7F800000u && (b & 0x007FFFFFu))
        return double_from_bits((uint64_t)(b >> 31) << 63 | 0x7FFull << 52 | (uint64_t)(b & 0x007FFFFFu) << 29);
    return (double)f;
}

/* double -> float; NaNs keep their top 23 payload bits (quiet bit set if that
 * would leave none).  Other values: the correctly rounded hardware cast. */
static float narrow_f32(double v)
{
    if (isnan(v)) {
        uint64_t b = double_bits(v);
        uint32_t payload = (uint32_t)((b >> 29) & 0x007FFFFFu);
        if (!payload)
            payload = 0x00400000u;
        return float_from_bits((uint32_t)(b >> 63) << 31 | 0x7F800000u | payload);
    }
    return (float)v;
}

/* ---------------------------------------------------------------- small float formats */

typedef struct minifloat {
    int ebits, mbits, bias;
    bool ieee_special; /* top exponent is Inf/NaN (false: e4m3fn, only S.1111.111 is NaN) */
    bool saturate;     /* finite overflow -> max finite instead of Inf */
} minifloat;

static const minifloat FMT_F16 = {5, 10, 15, true, false};
static const minifloat FMT_BF16 = {8, 7, 127, true, false};
static const minifloat FMT_E4M3 = {4, 3, 7, false, true};
static const minifloat FMT_E5M2 = {5, 2, 15, true, true};

static int mf_emax(const minifloat *f)
{
    int top = (1 << f->ebits) - 1;
    return (f->ieee_special ? top - 1 : top) - f->bias;
}

/* Bits of the largest finite value (without sign). */
static uint32_t mf_max_bits(const minifloat *f)
{
    uint32_t mmask = (1u << f->mbits) - 1;
    uint32_t top = (1u << f->ebits) - 1;
    if (f->ieee_special)
        return (top - 1) << f->mbits | mmask;
    return top << f->mbits | (mmask - 1); /* e4m3fn: S.1111.110 = 448 */
}

static uint32_t mf_inf_bits(const minifloat *f) { return ((1u << f->ebits) - 1) << f->mbits; }

static uint32_t minifloat_encode(const minifloat *f, double v)
{
    int width = 1 + f->ebits + f->mbits;
    uint32_t sign = signbit(v) ? 1u << (width - 1) : 0;
    if (isnan(v)) {
        if (!f->ieee_special)
            return sign | ((1u << (width - 1)) - 1); /* 0x7F */
        uint32_t payload = (uint32_t)(double_bits(v) >> (52 - f->mbits)) & ((1u << f->mbits) - 1);
        if (!payload)
            payload = 1u << (f->mbits - 1);
        return sign | mf_inf_bits(f) | payload;
    }
    double a = fabs(v);
    if (isinf(a))
        return sign | (f->ieee_special ? mf_inf_bits(f) : mf_max_bits(f));
    if (a == 0)
        return sign;
    int emin = 1 - f->bias, emax = mf_emax(f);
    int ex;
    frexp(a, &ex); /* a = m * 2^ex, m in [0.5, 1): floor(log2 a) = ex - 1 */
    int e = ex - 1 < emin ? emin : ex - 1;
    if (e > emax)
        return sign | (f->saturate ? mf_max_bits(f) : mf_inf_bits(f));
    /* Exact scaling by a power of two, then the one rounding (ties to even in
     * the default rounding mode). */
    double q = nearbyint(ldexp(a, f->mbits - e));
    uint32_t qi = (uint32_t)q;
    if (qi >> (f->mbits + 1)) { /* rounded up to the next binade */
        qi >>= 1;
        e++;
    }
    uint32_t bits;
    if (qi < (1u << f->mbits)) /* subnormal (only when e == emin) or zero */
        bits = qi;
    else
        bits = (uint32_t)(e + f->bias) << f->mbits | (qi - (1u << f->mbits));
    if (e > emax || bits > mf_max_bits(f))
        return sign | (f->saturate ? mf_max_bits(f) : mf_inf_bits(f));
    return sign | bits;
}

static double minifloat_decode(const minifloat *f, uint32_t bits)
{
    int width = 1 + f->ebits + f->mbits;
    bool neg = (bits >> (width - 1)) & 1;
    uint32_t mmask = (1u << f->mbits) - 1, top = (1u << f->ebits) - 1;
    uint32_t exp = (bits >> f->mbits) & top, man = bits & mmask;
    if (f->ieee_special && exp == top) {
        if (!man)
            return neg ? -HUGE_VAL : HUGE_VAL;
        return double_from_bits((uint64_t)neg << 63 | 0x7FFull << 52 | (uint64_t)man << (52 - f->mbits));
    }
    if (!f->ieee_special && exp == top && man == mmask)
        return double_from_bits((uint64_t)neg << 63 | 0x7FF8000000000000ull);
    double mag = exp == 0 ? ldexp((double)man, 1 - f->bias - f->mbits)
                          : ldexp((double)(man | (1u << f->mbits)), (int)exp - f->bias - f->mbits);
    return neg ? -mag : mag;
}

uint16_t f32_to_f16_bits(float f) { return (uint16_t)minifloat_encode(&FMT_F16, widen_exact(f)); }
float f16_bits_to_f32(uint16_t h) { return narrow_f32(minifloat_decode(&FMT_F16, h)); }
uint16_t f32_to_bf16_bits(float f) { return (uint16_t)minifloat_encode(&FMT_BF16, widen_exact(f)); }
float bf16_bits_to_f32(uint16_t h) { return narrow_f32(minifloat_decode(&FMT_BF16, h)); }
uint8_t f32_to_e4m3_bits(float f) { return (uint8_t)minifloat_encode(&FMT_E4M3, widen_exact(f)); }
float e4m3_bits_to_f32(uint8_t b) { return narrow_f32(minifloat_decode(&FMT_E4M3, b)); }
uint8_t f32_to_e5m2_bits(float f) { return (uint8_t)minifloat_encode(&FMT_E5M2, widen_exact(f)); }
float e5m2_bits_to_f32(uint8_t b) { return narrow_f32(minifloat_decode(&FMT_E5M2, b)); }

/* e8m0 (format in the file comment). */
uint8_t e8m0_encode(double v)
{
    if (isnan(v) || v < 0)
        return 0xFF;
    if (v == 0)
        return 0x00;
    if (isinf(v))
        return 0xFE;
    int ex;
    double m = frexp(v, &ex) * 2; /* v = m * 2^(ex-1), m in [1, 2) */
    int e = ex - 1 + (m >= 1.5);  /* the tie 1.5 rounds to the even 2 */
    if (e > 127)
        return 0xFE;
    return e < -127 ? 0x00 : (uint8_t)(e + 127);
}

double e8m0_decode(uint8_t b) { return b == 0xFF ? (double)NAN : ldexp(1.0, (int)b - 127); }

/* ---------------------------------------------------------------- integers */

/* Round to nearest even and clamp to [lo, hi]; NaN -> 0.  lo and hi are
 * exactly representable (|bound| <= 2^63 is a power of two or fits 53 bits
 * for the small types), and the i64 upper bound is compared as 2^63. */
static double round_clamp(double v, double lo, double hi)
{
    if (isnan(v))
        return 0;
    double r = nearbyint(v);
    return r < lo ? lo : r > hi ? hi : r;
}

static int64_t to_i64(double v)
{
    if (isnan(v))
        return 0;
    double r = nearbyint(v);
    if (r >= 9223372036854775808.0) /* 2^63: INT64_MAX is not a double */
        return INT64_MAX;
    if (r < -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)r;
}

/* ---------------------------------------------------------------- load / store */

double dtype_load(xdnn_dtype t, const void *base, int64_t index)
{
    const unsigned char *p = (const unsigned char *)base + (size_t)index * xdnn_dtype_size(t);
    switch (t) {
    case XDNN_F32: {
        float f;
        memcpy(&f, p, 4);
        return widen_exact(f);
    }
    case XDNN_F64: {
        double v;
        memcpy(&v, p, 8);
        return v;
    }
    case XDNN_F16: {
        uint16_t h;
        memcpy(&h, p, 2);
        return minifloat_decode(&FMT_F16, h);
    }
    case XDNN_BF16: {
        uint16_t h;
        memcpy(&h, p, 2);
        return minifloat_decode(&FMT_BF16, h);
    }
    case XDNN_FP8_E4M3: return minifloat_decode(&FMT_E4M3, p[0]);
    case XDNN_FP8_E5M2: return minifloat_decode(&FMT_E5M2, p[0]);
    case XDNN_E8M0: return e8m0_decode(p[0]);
    case XDNN_I8: return (double)(int8_t)p[0];
    case XDNN_I32: {
        int32_t i;
        memcpy(&i, p, 4);
        return (double)i;
    }
    case XDNN_I64: {
        int64_t i;
        memcpy(&i, p, 8);
        return (double)i;
    }
    case XDNN_BOOL: return p[0] ? 1.0 : 0.0;
    default: return (double)NAN;
    }
}

void dtype_store(xdnn_dtype t, void *base, int64_t index, double v)
{
    unsigned char *p = (unsigned char *)base + (size_t)index * xdnn_dtype_size(t);
    switch (t) {
    case XDNN_F32: {
        float f = narrow_f32(v);
        memcpy(p, &f, 4);
        return;
    }
    case XDNN_F64: memcpy(p, &v, 8); return;
    case XDNN_F16: {
        uint16_t h = (uint16_t)minifloat_encode(&FMT_F16, v);
        memcpy(p, &h, 2);
        return;
    }
    case XDNN_BF16: {
        uint16_t h = (uint16_t)minifloat_encode(&FMT_BF16, v);
        memcpy(p, &h, 2);
        return;
    }
    case XDNN_FP8_E4M3: p[0] = (unsigned char)minifloat_encode(&FMT_E4M3, v); return;
    case XDNN_FP8_E5M2: p[0] = (unsigned char)minifloat_encode(&FMT_E5M2, v); return;
    case XDNN_E8M0: p[0] = e8m0_encode(v); return;
    case XDNN_I8: p[0] = (unsigned char)(int8_t)round_clamp(v, -128.0, 127.0); return;
    case XDNN_I32: {
        int32_t i = (int32_t)round_clamp(v, -2147483648.0, 2147483647.0);
        memcpy(p, &i, 4);
        return;
    }
    case XDNN_I64: {
        int64_t i = to_i64(v);
        memcpy(p, &i, 8);
        return;
    }
    case XDNN_BOOL: p[0] = v != 0; return;
    default: return;
    }
}

double dtype_round(xdnn_dtype t, double v)
{
    unsigned char buf[8];
    dtype_store(t, buf, 0, v);
    return dtype_load(t, buf, 0);
}
