/* quant.cu — quantize / dequantize / amax for the quant_direct engine
 * (src/gpu/eng_quant.c); semantics are src/ops/quant.c bit for bit.
 *
 * v1: one thread per chunk of 8 consecutive elements of a row (16/32-byte
 * vector loads and 8/16-byte stores when cols % 8 == 0 and the buffers are
 * 16-byte aligned, element loads otherwise), grid-stride over chunks.  A
 * chunk reads its scale once when every element of it shares one (per-tensor,
 * per-row, or column blocks that are multiples of 8), else per element.
 *
 * Exact rounding.  quantize must round the exact quotient x / s once (ties to
 * even).  v2: q0 = |x| * RN(1/|s|) is within 2 f32 ulps of |x / s|, so its
 * rounding onto the fp8 / int8 grid is the exact quotient's unless a tie of
 * the grid lies within that distance; then the sign of |x| - T |s| (one fma,
 * exact in sign) decides, and the value handed to the hardware's
 * round-to-nearest-even conversion is T itself (a true tie: ties to even) or
 * T moved one f32 ulp toward the quotient.  Inf, NaN, huge quotients and
 * scales whose reciprocal is subnormal take v1's path: __fdiv_rn, and the
 * residual fma(-q, s, x) (exact for a correctly rounded quotient) when q sits
 * on a tie.  dequantize: the f32 product p = q * s and its exact error
 * fma(q, s, -p); p moves one ulp toward the error only when it lies exactly
 * on a tie of the bf16 / f16 grid (f32 and e8m0 products need nothing).
 * v1 divided per element and multiplied in double: 590 GB/s on the H100 for
 * bf16 -> e4m3 (5x below copy); v2 removes the division and the f64 path.
 * v3 fp8 quantize (kq_quant8_fp8): kq_quotient's fast path on the product's
 * bits (kq_settle, a few integer instructions per element), two bytes per
 * cvt, and kq_quant's exact paths out of line for the rare chunk out of its
 * range, so the unrolled kernel stays small.
 *
 * quant_scale: elementwise over the amax tensor (kq_scale_kernel).
 *
 * amax: per-thread running max, flushed with an atomicMax on the float's bits
 * (non-negative floats order like their bits; NaN's bits sort above Inf, so a
 * NaN sticks) when the scale element changes; the last flush is reduced over
 * the warp first when the whole warp shares the element (per-tensor). */
#include "gpu/kern_quant.h"
#include "kern_fdiv.cuh"
#include "xdnn.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { KQ_V = 8, KQ_THREADS = 256 };

static __device__ __forceinline__ float e8m0_to_f32(unsigned b)
{
    if (b == 0xFFu)
        return __int_as_float(0x7fffffff);
    return b == 0 ? __int_as_float(0x00400000) : __int_as_float((int)(b << 23)); /* 2^-127 is subnormal */
}

static __device__ __forceinline__ float fp8_to_f32(unsigned char b, __nv_fp8_interpretation_t k)
{
    __half_raw h = __nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)b, k);
    return __half2float(__half(h));
}

/* Element i of p (dtype dt) as float (exact for every dtype used here). */
static __device__ __forceinline__ float kq_ld(const void *p, int dt, uint32_t i)
{
    switch (dt) {
    case XDNN_F32: return static_cast<const float *>(p)[i];
    case XDNN_F16: return __half2float(static_cast<const __half *>(p)[i]);
    case XDNN_BF16: return __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[i]);
    case XDNN_FP8_E4M3: return fp8_to_f32(static_cast<const unsigned char *>(p)[i], __NV_E4M3);
    case XDNN_FP8_E5M2: return fp8_to_f32(static_cast<const unsigned char *>(p)[i], __NV_E5M2);
    case XDNN_I8: return (float)static_cast<const signed char *>(p)[i];
    case XDNN_E8M0: return e8m0_to_f32(static_cast<const unsigned char *>(p)[i]);
    default: return __int_as_float(0x7fffffff);
    }
}

/* The raw bytes of elements i..i+7 (i % 8 == 0, buffer 16-byte aligned):
 * 32 bytes (f32) in w[0..1], 16 (16-bit) in w[0], 8 (1-byte) in w[0].xy. */
template <int DT> static __device__ __forceinline__ void kq_ld8_raw(const void *p, uint32_t i, uint4 *w)
{
    if (DT == XDNN_F32) {
        const uint4 *q = reinterpret_cast<const uint4 *>(static_cast<const float *>(p) + i);
        w[0] = q[0];
        w[1] = q[1];
    } else if (DT == XDNN_F16 || DT == XDNN_BF16) {
        w[0] = *reinterpret_cast<const uint4 *>(static_cast<const unsigned short *>(p) + i);
    } else {
        const uint2 b = *reinterpret_cast<const uint2 *>(static_cast<const unsigned char *>(p) + i);
        w[0].x = b.x;
        w[0].y = b.y;
    }
}

/* kq_ld8_raw's bytes as 8 floats (exact). */
template <int DT> static __device__ __forceinline__ void kq_unpack8(const uint4 *w, float *v)
{
    if (DT == XDNN_F32) {
        const float *f = reinterpret_cast<const float *>(w);
        for (int j = 0; j < KQ_V; j++)
            v[j] = f[j];
        return;
    }
    if (DT == XDNN_F16 || DT == XDNN_BF16) {
        const unsigned short *h = reinterpret_cast<const unsigned short *>(w);
        for (int j = 0; j < KQ_V; j++)
            v[j] = DT == XDNN_F16 ? __half2float(__ushort_as_half(h[j])) : __uint_as_float((unsigned)h[j] << 16);
        return;
    }
    const unsigned char *b = reinterpret_cast<const unsigned char *>(w);
    for (int j = 0; j < KQ_V; j++) {
        if (DT == XDNN_I8)
            v[j] = (float)(signed char)b[j];
        else
            v[j] = fp8_to_f32(b[j], DT == XDNN_FP8_E4M3 ? __NV_E4M3 : __NV_E5M2);
    }
}

/* Elements i..i+7 (i % 8 == 0, buffer 16-byte aligned) as floats. */
template <int DT> static __device__ __forceinline__ void kq_ld8(const void *p, uint32_t i, float *v)
{
    uint4 w[2];
    kq_ld8_raw<DT>(p, i, w);
    kq_unpack8<DT>(w, v);
}

/* The grid step exponent of dt at magnitude a (fp8: 2^(e - mbits), e >= emin;
 * int8: 1). */
static __device__ __forceinline__ int kq_ulp_e(float a, int dt)
{
    if (dt == XDNN_I8)
        return 0;
    const int mbits = dt == XDNN_FP8_E4M3 ? 3 : 2, emin = dt == XDNN_FP8_E4M3 ? -6 : -14;
    const int e = (int)((__float_as_uint(a) >> 23) & 0xff) - 127;
    return (e < emin ? emin : e) - mbits;
}

/* 2^k as a float, k in [-126, 127]. */
static __device__ __forceinline__ float kq_pow2(int k) { return __int_as_float((127 + k) << 23); }

/* A float whose round-to-nearest-even onto dt's grid is that of the exact
 * quotient x / s (see the file comment).  rs = 1/s rounded: the fast path
 * q0 = x * rs is within 2 f32 ulps of x / s, so it rounds like the exact
 * quotient unless a tie of the grid lies that close; then the sign of
 * x - T s (one fma: exact sign) says on which side the quotient is. */
static __device__ __forceinline__ float kq_quotient(float x, float s, float rs, int dt)
{
    const float ax = fabsf(x), as = fabsf(s), a0 = ax * fabsf(rs);
    const bool neg = signbit(x) != signbit(s);
    if (!(a0 < 16777216.0f) || !(as < 4.2535296e37f) || !(as > 0.0f)) {
        /* Inf, NaN, huge, s = 0 / Inf / beyond 2^125 (1/s subnormal): the slow exact path */
        float q = __fdiv_rn(x, s), a = fabsf(q);
        if (!(a < 16777216.0f))
            return q;
        const int ue = kq_ulp_e(a, dt);
        const float t = a * kq_pow2(-ue);
        if (t - floorf(t) != 0.5f)
            return q;
        const float r = fmaf(-q, s, x); /* exact for a correctly rounded quotient */
        if (r == 0.0f)
            return q;
        return nextafterf(q, (r > 0.0f) == (s > 0.0f) ? __int_as_float(0x7f800000) : -__int_as_float(0x7f800000));
    }
    const int ue = kq_ulp_e(a0, dt);
    const float t = a0 * kq_pow2(-ue), f = floorf(t);
    float a = a0;
    if (fabsf(t - f - 0.5f) < 6.1035156e-05f) { /* within 2^-14 of a tie (the error is <= 2^-15 in t) */
        const float T = (f + 0.5f) * kq_pow2(ue); /* the tie, exact */
        const float r = fmaf(-T, as, ax);         /* sign of |x| - T |s|: exact */
        a = r == 0.0f ? T : nextafterf(T, r > 0.0f ? __int_as_float(0x7f800000) : 0.0f);
    }
    return neg ? -a : a;
}

/* The bytes both quantizers share, as dtype.c stores them: i8 (round to
 * nearest even, saturating; NaN -> 0) and the fp8 NaN / Inf cases (NaN keeps
 * its sign as the canonical quiet NaN; Inf saturates, except that e5m2 keeps
 * an Inf the exact quotient has: keep_inf).  False for a finite fp8 value,
 * which the caller converts. */
template <typename F> static __device__ __forceinline__ bool kq_byte_special(F q, int dt, bool keep_inf, unsigned char *b)
{
    if (dt == XDNN_I8) {
        F r = isnan(q) ? F(0) : rint(q);
        r = r > F(127) ? F(127) : r < F(-128) ? F(-128) : r;
        *b = (unsigned char)(signed char)r;
        return true;
    }
    const unsigned sign = signbit(q) ? 0x80u : 0u;
    if (isnan(q))
        *b = (unsigned char)(sign | (dt == XDNN_FP8_E4M3 ? 0x7Fu : 0x7Eu));
    else if (isinf(q))
        *b = (unsigned char)(sign | (dt == XDNN_FP8_E4M3 ? 0x7Eu : keep_inf ? 0x7Cu : 0x7Bu));
    return isnan(q) || isinf(q);
}

/* The quantized byte of x / s in dt (fp8_e4m3, fp8_e5m2, i8), as dtype.c stores it. */
static __device__ __forceinline__ unsigned char kq_quant(float x, float s, float rs, int dt)
{
    float q = kq_quotient(x, s, rs, dt);
    unsigned char b;
    /* an f32 overflow of a finite quotient saturates like everything else */
    if (kq_byte_special(q, dt, isinf(x) || s == 0.0f, &b))
        return b;
    return (unsigned char)__nv_cvt_float_to_fp8(q, __NV_SATFINITE, dt == XDNN_FP8_E4M3 ? __NV_E4M3 : __NV_E5M2);
}

/* q * s as an f32 whose round-to-nearest-even onto dt (f32, f16, bf16) is
 * that of the exact product.  The f32 product p may itself be rounded (q has
 * up to 8 significant bits, s 24); e = fma(q, s, -p) is the exact error, and
 * it only matters when p lies exactly on a tie of the 16-bit grid. */
static __device__ __forceinline__ float kq_deq(float q, float s, int dt)
{
    float p = q * s;
    if (dt == XDNN_F32)
        return p;
    const float e = fmaf(q, s, -p);
    const unsigned pb = __float_as_uint(p);
    if (e != 0.0f && isfinite(p)) {
        /* bf16 keeps the top 16 bits: a tie is low half == 0x8000; f16 (normal
         * range) keeps 10 mantissa bits: a tie is low 13 bits == 0x1000.  f16
         * subnormals are rounded by the conversion from the nudged value too. */
        bool tie = dt == XDNN_BF16 ? (pb & 0xFFFFu) == 0x8000u : false;
        if (dt == XDNN_F16) {
            const float ap = fabsf(p);
            const int ex = (int)((pb >> 23) & 0xff) - 127, ue = (ex < -14 ? -14 : ex) - 10;
            const float t = ap * kq_pow2(-ue);
            tie = ap < 65520.0f && t - floorf(t) == 0.5f;
        }
        if (tie) /* move p one ulp toward the exact product */
            p = nextafterf(p, e > 0.0f ? __int_as_float(0x7f800000) : -__int_as_float(0x7f800000));
    }
    return p;
}

/* kq_deq's value as dt's 16 bits (f16, bf16). */
static __device__ __forceinline__ unsigned short kq_deq16(float p, int dt)
{
    return dt == XDNN_F16 ? __half_as_ushort(__float2half_rn(p)) : __bfloat16_as_ushort(__float2bfloat16_rn(p));
}

/* q * s rounded once to dt, stored at y[i]. */
static __device__ __forceinline__ void kq_store_deq(void *y, int dt, uint32_t i, float q, float s)
{
    if (dt == XDNN_F64) {
        static_cast<double *>(y)[i] = (double)q * (double)s;
        return;
    }
    const float p = kq_deq(q, s, dt);
    if (dt == XDNN_F32)
        static_cast<float *>(y)[i] = p;
    else
        static_cast<unsigned short *>(y)[i] = kq_deq16(p, dt);
}

/* Scale offset of the row's leading index. */
static __device__ __forceinline__ uint32_t kq_row_off(const kq_params &p, uint32_t row)
{
    uint32_t off = 0;
    for (int d = p.nlead - 1; d >= 0; d--) {
        uint32_t i = row % p.lead_dims[d];
        row /= p.lead_dims[d];
        off += i / p.lead_blk[d] * p.lead_sst[d];
    }
    return off;
}

static __device__ __forceinline__ void kq_flush(float *y, uint32_t off, float m)
{
    atomicMax(reinterpret_cast<unsigned *>(y) + off, __float_as_uint(m));
}

/* Fold |value| bits m of scale element off into the thread's running max
 * of element *cur, flushing the previous element when it changes. */
static __device__ __forceinline__ void kq_amax_add(float *y, uint32_t off, unsigned m, uint32_t *cur, float *cur_max)
{
    if (off != *cur) {
        if (*cur != 0xffffffffu)
            kq_flush(y, *cur, *cur_max);
        *cur = off;
        *cur_max = 0.0f;
    }
    *cur_max = __uint_as_float(max(m, __float_as_uint(*cur_max)));
}

/* amax's last flush of the thread's running max m of scale element cur
 * (0xffffffff: none): reduced over the warp first when the whole warp shares
 * the element (per-tensor), else one atomic per thread. */
static __device__ __forceinline__ void kq_flush_last(float *y, uint32_t cur, float cur_max)
{
    uint32_t c0 = __shfl_sync(0xffffffffu, cur, 0);
    if (__all_sync(0xffffffffu, cur == c0)) {
        unsigned m = __float_as_uint(cur_max);
        for (int o = 16; o > 0; o >>= 1) {
            unsigned w = __shfl_xor_sync(0xffffffffu, m, o);
            m = w > m ? w : m;
        }
        if ((threadIdx.x & 31) == 0 && cur != 0xffffffffu)
            kq_flush(y, cur, __uint_as_float(m));
    } else if (cur != 0xffffffffu) {
        kq_flush(y, cur, cur_max);
    }
}

/* One instantiation per (mode, x dtype, y dtype): the dtype branches of the
 * helpers fold away (v1 branched on them per element). */
template <int MODE, int XDT, int YDT> __global__ void kq_kernel(const kq_params p, bool vec, bool uniform)
{
    const uint32_t per_row = (p.cols + KQ_V - 1) / KQ_V;
    const uint32_t nchunks = p.rows * per_row;
    uint32_t cur = 0xffffffffu; /* amax: the scale element being accumulated */
    float cur_max = 0.0f;
    for (uint32_t ch = blockIdx.x * blockDim.x + threadIdx.x; ch < nchunks; ch += gridDim.x * blockDim.x) {
        const uint32_t row = ch / per_row, c0 = (ch - row * per_row) * KQ_V;
        const uint32_t base = row * p.cols + c0, roff = kq_row_off(p, row);
        const int n = p.cols - c0 < KQ_V ? (int)(p.cols - c0) : KQ_V;
        float v[KQ_V];
        if (vec)
            kq_ld8<XDT>(p.x, base, v);
        else
            for (int j = 0; j < n; j++)
                v[j] = kq_ld(p.x, XDT, base + j);
        if (MODE == KQ_AMAX) {
            for (int j = 0; j < n; j++)
                kq_amax_add(static_cast<float *>(p.y), roff + (c0 + j) / p.col_blk * p.col_sst,
                            __float_as_uint(fabsf(v[j])), &cur, &cur_max);
            continue;
        }
        const float s = uniform ? kq_ld(p.s, p.sdt, roff + c0 / p.col_blk * p.col_sst) : 0.0f;
        if (MODE == KQ_QUANT) {
            const float rs = uniform ? __frcp_rn(s) : 0.0f;
            unsigned char out[KQ_V];
            for (int j = 0; j < n; j++) {
                const float sj = uniform ? s : kq_ld(p.s, p.sdt, roff + (c0 + j) / p.col_blk * p.col_sst);
                out[j] = kq_quant(v[j], sj, uniform ? rs : __frcp_rn(sj), YDT);
            }
            unsigned char *y = static_cast<unsigned char *>(p.y) + base;
            if (vec)
                *reinterpret_cast<uint2 *>(y) = *reinterpret_cast<const uint2 *>(out);
            else
                for (int j = 0; j < n; j++)
                    y[j] = out[j];
        } else {
            for (int j = 0; j < n; j++) {
                const float sj = uniform ? s : kq_ld(p.s, p.sdt, roff + (c0 + j) / p.col_blk * p.col_sst);
                kq_store_deq(p.y, YDT, base + j, v[j], sj);
            }
        }
    }
    if (MODE == KQ_AMAX)
        kq_flush_last(static_cast<float *>(p.y), cur, cur_max);
}

/* ---- v3: the vector path (cols % 8 == 0, 16-byte aligned buffers, one
 * scale element per 8-element chunk: per-tensor, per-row, column blocks of
 * multiples of 8; v2 keeps odd column blocks) with more bytes in flight.  v2 issued one 16-byte load per thread and then ~40
 * instructions per element (4-5 32-bit divisions per chunk for the row, the
 * leading indices and the column block) before its next load, and
 * dequantize stored its 2-byte elements one by one: 21-48% of copy on the
 * H100.  v3: each thread takes KQ_U chunks per iteration, issues all their
 * loads first (raw words in registers), divides by multiply-high with
 * magics made on the host (kern_fdiv.cuh), and stores 16 bytes per chunk in dequantize
 * (bf16 / f16; two 16-byte stores for f32).  The per-element arithmetic is
 * v2's own (kq_quant, kq_deq): the bytes are identical. */

/* The divisors of the index maps, as magics (kern_quant.h's map). */
struct kq_fast {
    kfdiv per_row, col_blk, lead_dim[KQ_MAXD], lead_blk[KQ_MAXD];
    bool pow2;    /* kq_quant8_fp8 skips kq_settle for a power-of-two scale (kq_use_pow2) */
    bool bracket; /* kq_quant8_fp8 tries kq_bracket8 before kq_settle (kq_use_bracket) */
};

static __device__ __forceinline__ uint32_t kq_row_off_fast(const kq_params &p, const kq_fast &f, uint32_t row)
{
    uint32_t off = 0;
    for (int d = p.nlead - 1; d >= 0; d--) {
        const uint32_t q = kfdiv_div(row, f.lead_dim[d]), i = row - q * p.lead_dims[d];
        row = q;
        off += kfdiv_div(i, f.lead_blk[d]) * p.lead_sst[d];
    }
    return off;
}

/* Chunks per thread per iteration: 4 x 16 bytes of 16-bit x, 4 x 32 of f32,
 * 8 x 8 of 1-byte q (dequantize), so >= 64 bytes are loaded in flight. */
template <int XDT> struct kq_unroll {
    enum { U = XDT == XDNN_F32 || XDT == XDNN_F16 || XDT == XDNN_BF16 ? 4 : 8 };
};

/* kq_quotient's fast path on the bits of q = x * RN(1/s) (the f32 product),
 * for 2^emin <= |q| < 2^24 (else ok becomes false and the caller takes the
 * exact path).  In fp8 dt's normal range the grid step is 2^(e - mbits), so
 * the position between grid points is q's low 23 - mbits mantissa bits
 * (`low`; a tie is `half`) and "within 2^-14 of a tie" is |low - half| < tol
 * = 2^(9 - mbits): (low + tol - 1 - half) mod 2^(23 - mbits) < 2 tol - 1 (a
 * negative difference wraps to >= half + tol).  Off a tie: q itself.  Near
 * one: the tie T (q's bits with low = half), moved one ulp toward the exact
 * quotient by the sign of |x| - T |s| (one fma, exact in sign), q's sign.
 * Handled here rather than out of line: bf16 x over a power-of-two scale
 * (e8m0) lands exactly on a tie of e4m3 for 1 element in 16, so 40% of
 * chunks and nearly every warp met the exact path (0.185 ms, 38% of copy). */
template <int YDT> static __device__ __forceinline__ float kq_settle(float x, float rs, float as, bool &ok)
{
    constexpr int mbits = YDT == XDNN_FP8_E4M3 ? 3 : 2;
    constexpr float lo = YDT == XDNN_FP8_E4M3 ? 0x1p-6f : 0x1p-14f; /* 2^emin: below it the grid is subnormal */
    constexpr uint32_t fmask = (1u << (23 - mbits)) - 1, half = 1u << (22 - mbits), tol = 1u << (9 - mbits);
    const float q = x * rs;
    const uint32_t u = __float_as_uint(q);
    ok &= fabsf(q) >= lo && fabsf(q) < 16777216.0f;
    if (((u + (tol - 1 - half)) & fmask) >= 2 * tol - 1)
        return q;
    const uint32_t tb = (u & 0x7fffffffu & ~fmask) | half; /* |T| */
    const float r = fmaf(-__uint_as_float(tb), as, fabsf(x));
    return __uint_as_float((tb + (r > 0.0f) - (r < 0.0f)) | (u & 0x80000000u));
}

/* kq_quant of 8 elements, out of line: the rare chunks that kq_quant8_fp8's
 * test sends back (zero, subnormal-range, huge, Inf / NaN quotients, odd
 * scales).  Inlined, its exact paths (__fdiv_rn and its
 * library call, nextafterf) made v3's quantize instantiation ~7,800
 * instructions (4 chunks x 8 elements), and ncu's top stall was the
 * instruction fetch. */
template <int YDT>
static __device__ __noinline__ uint2 kq_quant8_exact(float v0, float v1, float v2, float v3, float v4, float v5,
                                                     float v6, float v7, float s, float rs)
{
    const float v[KQ_V] = {v0, v1, v2, v3, v4, v5, v6, v7};
    union { uint2 w; unsigned char b[KQ_V]; } out;
    for (int j = 0; j < KQ_V; j++)
        out.b[j] = kq_quant(v[j], s, rs, YDT);
    return out.w;
}

/* v[j] for a j in 0..7 known only at run time, by selects (an indexed register array would go to local
 * memory). */
static __device__ __forceinline__ float kq_pick8(const float *v, uint32_t j)
{
    const bool odd = j & 1u;
    const float p0 = odd ? v[1] : v[0], p1 = odd ? v[3] : v[2], p2 = odd ? v[5] : v[4], p3 = odd ? v[7] : v[6];
    const float p01 = j & 2u ? p1 : p0, p23 = j & 2u ? p3 : p2;
    return j & 4u ? p23 : p01;
}

/* The 8 fp8 bytes of v[j] / s (kq_quant's bytes) into out, true; false (out undefined) when a product is
 * Inf or NaN (their bytes are kq_byte_special's: the caller's exact paths).  rs = RN(1/s) is within half an
 * ulp of 1/|s| in magnitude, so rs with its magnitude's bits 2 lower (rlo) and 2 higher (rhi) differ from
 * 1/|s| by more than 1.5 ulps of themselves, more than the 2^-24 relative that the products' rounding adds:
 * |x * rlo| <= |x / s| <= |x * rhi| for f32 products l, h (normal ones; a subnormal product is under 2^-125,
 * where both grids' bytes are a signed 0 for all three), all three of one sign.  The conversion (round to
 * nearest even, saturating) is monotonic in magnitude, so where l and h convert alike that is the exact
 * quotient's byte (a CPU model of this and the loop below, against dtype.c's rounding of x / s in double:
 * 0 differences in 6e7 elements, x on ties times s and 0-4 steps off, random bits, scales 2^-30 to 2^30
 * and random bits).  Elsewhere their codes are adjacent (l and h are a few f32 ulps apart) and the tie T
 * between them, half the sum of the two codes' values (exact in f32), lies in [|l|, |h|]: the sign of
 * |x| - T |s| (one fma, exact in sign) picks the code, a zero the even one.  That loop runs for about 1
 * element in 2^18 of random quotients, but for every x / s a few ulps off a tie: bf16 powers of two over
 * s = 0.01 (1/s = 100 = 11001b, a 5-bit tie of e4m3), 1 element in 128.  An element costs two multiplies,
 * a finiteness compare and a conversion of two (~5 instructions) against kq_settle's ~11 (a tie test and a
 * branch around its fix-up each). */
template <int YDT> static __device__ __forceinline__ bool kq_bracket8(const float *v, float rs, float as, uint2 &out)
{
    const float rlo = __uint_as_float(__float_as_uint(rs) - 2u), rhi = __uint_as_float(__float_as_uint(rs) + 2u);
    const __nv_fp8_interpretation_t k = YDT == XDNN_FP8_E4M3 ? __NV_E4M3 : __NV_E5M2;
    bool finite = true;
    uint32_t lo[4], hi[4];
#pragma unroll
    for (int j = 0; j < 4; j++) {
        const float l0 = v[2 * j] * rlo, l1 = v[2 * j + 1] * rlo, h0 = v[2 * j] * rhi, h1 = v[2 * j + 1] * rhi;
        finite &= (fabsf(h0) <= 3.40282347e38f) & (fabsf(h1) <= 3.40282347e38f);
        lo[j] = __nv_cvt_float2_to_fp8x2(make_float2(l0, l1), __NV_SATFINITE, k); /* the low byte is .x */
        hi[j] = __nv_cvt_float2_to_fp8x2(make_float2(h0, h1), __NV_SATFINITE, k);
    }
    uint32_t w0 = lo[0] | lo[1] << 16, w1 = lo[2] | lo[3] << 16;
    const uint32_t h0 = hi[0] | hi[1] << 16, h1 = hi[2] | hi[3] << 16;
    uint32_t d0 = w0 ^ h0, d1 = w1 ^ h1; /* nonzero bytes: the elements to decide */
    while (finite && (d0 | d1)) {
        const bool first = d0 != 0;
        const uint32_t d = first ? d0 : d1, wl = first ? w0 : w1, wh = first ? h0 : h1;
        const int sh = (__ffs(d) - 1) & ~7;
        const uint32_t bl = wl >> sh & 0xffu, bh = wh >> sh & 0xffu, m = 0xffu << sh;
        const __half2_raw c = __nv_cvt_fp8x2_to_halfraw2((__nv_fp8x2_storage_t)(bl | bh << 8), k);
        const float2 cf = __half22float2(__half2(c));
        const float t = 0.5f * (fabsf(cf.x) + fabsf(cf.y));
        const float r = fmaf(-t, as, fabsf(kq_pick8(v, (first ? 0u : 4u) + (uint32_t)(sh >> 3))));
        const uint32_t b = r > 0.0f ? bh : r < 0.0f ? bl : (bl & 1u) ? bh : bl;
        const uint32_t nw = (wl & ~m) | b << sh;
        w0 = first ? nw : w0;
        w1 = first ? w1 : nw;
        d0 = first ? d0 & ~m : d0;
        d1 = first ? d1 : d1 & ~m;
    }
    out = make_uint2(w0, w1);
    return finite;
}

/* The 8 fp8 bytes of v[j] / s (kq_quant's bytes): straight-line for a chunk
 * whose every product x * RN(1/s) is in kq_settle's range (its values
 * converted, two per cvt), kq_quant8_exact otherwise.  With pow2 and s a
 * normal power of two below 2^125 (e8m0 scales 2^-126 to 2^124; per-tensor
 * scales often), 1/s is exact and so is x * (1/s) (down to f32's subnormals,
 * far under the fp8 grid's last step, where both round to the same zero): the
 * conversion's own round to nearest even is the reference's, ties included, and kq_settle's
 * tie test (1 element in 16 for bf16 over an e8m0 scale) is skipped; only its
 * range test stays (Inf, NaN and |q| >= 2^24 to the exact path).  Other
 * scales try kq_bracket8 first when bracket is set (kq_use_bracket), kq_settle
 * for the chunks that it leaves. */
template <int YDT> static __device__ __forceinline__ uint2 kq_quant8_fp8(const float *v, float s, bool pow2, bool bracket)
{
    const float rs = __frcp_rn(s), as = fabsf(s);
    /* kq_quotient's fast path needs 0 < |s| < 2^125 (1/s normal) */
    bool plain = as > 0.0f && as < 4.2535296e37f;
    float q[KQ_V];
    if (pow2 && plain && as >= 0x1p-126f && (__float_as_uint(as) & 0x7fffffu) == 0) {
#pragma unroll
        for (int j = 0; j < KQ_V; j++) {
            q[j] = v[j] * rs;
            plain &= fabsf(q[j]) < 16777216.0f;
        }
    } else {
        uint2 w;
        /* 2^-100 <= |s| < 2^125: rs +- 2 ulps normal (kq_bracket8's bound), and |x| - T |s| (nonzero: a
         * multiple of 2^-27 |T s| or of x's ulp) at least 2^-149, so that its rounding keeps it off 0 */
        if (bracket && plain && as >= 0x1p-100f && kq_bracket8<YDT>(v, rs, as, w))
            return w;
#pragma unroll
        for (int j = 0; j < KQ_V; j++)
            q[j] = kq_settle<YDT>(v[j], rs, as, plain);
    }
    if (!plain)
        return kq_quant8_exact<YDT>(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], s, rs);
    const __nv_fp8_interpretation_t k = YDT == XDNN_FP8_E4M3 ? __NV_E4M3 : __NV_E5M2;
    uint32_t h[4];
#pragma unroll
    for (int j = 0; j < 4; j++) /* the low byte is .x */
        h[j] = __nv_cvt_float2_to_fp8x2(make_float2(q[2 * j], q[2 * j + 1]), __NV_SATFINITE, k);
    return make_uint2(h[0] | h[1] << 16, h[2] | h[3] << 16);
}

/* The scales at offs[k] of this thread's U chunks (chunk ch0 + k * KQ_THREADS, those below nchunks), the
 * dtype branch taken once (uniform) so that the loads issue back to back. */
template <int U>
static __device__ __forceinline__ void kq_ld_scales(const kq_params &p, uint32_t ch0, uint32_t nchunks,
                                                    const uint32_t *offs, float *sc)
{
    if (p.sdt == XDNN_F32 || p.sdt == XDNN_E8M0) {
        uint32_t w[U];
#pragma unroll
        for (int k = 0; k < U; k++)
            w[k] = ch0 + k * KQ_THREADS >= nchunks ? 0u
                   : p.sdt == XDNN_F32 ? __float_as_uint(static_cast<const float *>(p.s)[offs[k]])
                                        : static_cast<const unsigned char *>(p.s)[offs[k]];
#pragma unroll
        for (int k = 0; k < U; k++)
            sc[k] = p.sdt == XDNN_F32 ? __uint_as_float(w[k]) : e8m0_to_f32(w[k]);
        return;
    }
#pragma unroll
    for (int k = 0; k < U; k++)
        sc[k] = ch0 + k * KQ_THREADS < nchunks ? kq_ld(p.s, p.sdt, offs[k]) : 0.0f;
}

template <int MODE, int XDT, int YDT>
__global__ void __launch_bounds__(KQ_THREADS) kq_kernel_v3(const kq_params p, const kq_fast f)
{
    enum { U = kq_unroll<XDT>::U, W = XDT == XDNN_F32 ? 2 : 1 };
    const uint32_t per_row = p.cols / KQ_V, nchunks = p.rows * per_row;
    const uint32_t step = gridDim.x * KQ_THREADS * U;
    uint32_t cur = 0xffffffffu; /* amax: the scale element being accumulated */
    float cur_max = 0.0f;
    for (uint32_t ch0 = blockIdx.x * KQ_THREADS * U + threadIdx.x; ch0 < nchunks; ch0 += step) {
        /* chunk k of this thread is ch0 + k * KQ_THREADS: a warp's loads stay contiguous */
        uint4 raw[U][W];
#pragma unroll
        for (int k = 0; k < U; k++) {
            const uint32_t ch = ch0 + k * KQ_THREADS;
            if (ch < nchunks)
                kq_ld8_raw<XDT>(p.x, ch * KQ_V, raw[k]);
        }
        /* every chunk's one scale element, loaded back to back behind x's loads: read per chunk between the
         * chunks' arithmetic, each was a dependent load on the way to the chunk's store (L2 latency for
         * 1x32 blocks), four in a row per thread */
        uint32_t offs[U];
        float sc[U];
#pragma unroll
        for (int k = 0; k < U; k++) {
            const uint32_t ch = ch0 + k * KQ_THREADS;
            const uint32_t row = kfdiv_div(ch, f.per_row), c0 = (ch - row * per_row) * KQ_V;
            const uint32_t roff = p.nlead ? kq_row_off_fast(p, f, row) : 0;
            offs[k] = roff + kfdiv_div(c0, f.col_blk) * p.col_sst;
        }
        if (MODE != KQ_AMAX)
            kq_ld_scales<U>(p, ch0, nchunks, offs, sc);
#pragma unroll
        for (int k = 0; k < U; k++) {
            const uint32_t ch = ch0 + k * KQ_THREADS;
            if (ch >= nchunks)
                break;
            const uint32_t base = ch * KQ_V;
            float v[KQ_V];
            kq_unpack8<XDT>(raw[k], v);
            const uint32_t off = offs[k]; /* the chunk's one scale element */
            if (MODE == KQ_AMAX) { /* the chunk's max, then one compare */
                unsigned m = 0;
                for (int j = 0; j < KQ_V; j++)
                    m = max(m, __float_as_uint(fabsf(v[j])));
                kq_amax_add(static_cast<float *>(p.y), off, m, &cur, &cur_max);
                continue;
            }
            const float s = sc[k];
            if (MODE == KQ_QUANT && YDT != XDNN_I8) {
                *reinterpret_cast<uint2 *>(static_cast<unsigned char *>(p.y) + base) =
                    kq_quant8_fp8<YDT>(v, s, f.pow2, f.bracket);
            } else if (MODE == KQ_QUANT) {
                const float rs = __frcp_rn(s);
                unsigned char out[KQ_V];
                for (int j = 0; j < KQ_V; j++)
                    out[j] = kq_quant(v[j], s, rs, YDT);
                *reinterpret_cast<uint2 *>(static_cast<unsigned char *>(p.y) + base) =
                    *reinterpret_cast<const uint2 *>(out);
            } else if (YDT == XDNN_F16 || YDT == XDNN_BF16) {
                unsigned short out[KQ_V];
                for (int j = 0; j < KQ_V; j++)
                    out[j] = kq_deq16(kq_deq(v[j], s, YDT), YDT);
                *reinterpret_cast<uint4 *>(static_cast<unsigned short *>(p.y) + base) =
                    *reinterpret_cast<const uint4 *>(out);
            } else if (YDT == XDNN_F32) {
                float out[KQ_V];
                for (int j = 0; j < KQ_V; j++)
                    out[j] = kq_deq(v[j], s, YDT);
                float4 *y = reinterpret_cast<float4 *>(static_cast<float *>(p.y) + base);
                y[0] = make_float4(out[0], out[1], out[2], out[3]);
                y[1] = make_float4(out[4], out[5], out[6], out[7]);
            } else {
                for (int j = 0; j < KQ_V; j++)
                    kq_store_deq(p.y, YDT, base + j, v[j], s);
            }
        }
    }
    if (MODE == KQ_AMAX)
        kq_flush_last(static_cast<float *>(p.y), cur, cur_max);
}

/* The power-of-two scale path of kq_quant8_fp8, on unless XDNN_QUANT_POW2=0 (read once; the A/B): measured in
 * session 15 on the H100, bf16 -> e4m3 1x32 e8m0 8192^2 0.1030 -> 0.0753 ms (69 -> 91 % of copy). */
static bool kq_use_pow2(void)
{
    static const char *const env = getenv("XDNN_QUANT_POW2");
    return !(env && strcmp(env, "0") == 0);
}

/* kq_bracket8 ahead of kq_settle for fp8 quantize over scales other than powers of two, on unless
 * XDNN_QUANT_FAST_SETTLE=0 (read once; the A/B).  Expected on the H100 (before measuring): bf16 -> e4m3
 * per-tensor and 128x128 blocks of 8192^2 over s = 0.01 0.0836-0.0839 ms (81 % of copy) -> ~0.079 (~85 %;
 * kq_bracket8's loop for the powers of two), ~0.076 (~89 %) over a scale without such ties. */
static bool kq_use_bracket(void)
{
    static const char *const env = getenv("XDNN_QUANT_FAST_SETTLE");
    return !(env && strcmp(env, "0") == 0);
}

/* XDNN_QUANT_V2=1 (read once): the v2 kernel for every shape, for A/B. */
static bool kq_use_v2(void)
{
    static const char *const env = getenv("XDNN_QUANT_V2");
    return env && *env && strcmp(env, "0") != 0;
}

/* quant_scale: src/ops/quant.c quant_scale_reference. */
__global__ void kq_scale_kernel(const kq_params p, uint32_t n)
{
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const float m = kq_ld(p.x, p.xdt, i);
        if (p.ydt == XDNN_F32) {
            static_cast<float *>(p.y)[i] = m == 0.0f ? 1.0f : __fdiv_rn(m, p.qmax);
            continue;
        }
        unsigned char b;
        if (m == 0.0f)
            b = 0x7F;
        else if (isnan(m))
            b = 0xFF;
        else if (isinf(m))
            b = 0xFE;
        else {
            int ex;
            frexpf(fabsf(m), &ex);
            const int e = ex - 1 - p.emax;
            b = e < -127 ? 0x00 : e > 127 ? 0xFE : (unsigned char)(e + 127);
        }
        static_cast<unsigned char *>(p.y)[i] = b;
    }
}

__global__ void kq_zero(float *y, uint32_t n)
{
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = 0.0f;
}

extern "C" int kq_launch(const kq_params *p, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    uint64_t per_row = (p->cols + KQ_V - 1) / KQ_V, nchunks = (uint64_t)p->rows * per_row;
    if (p->mode == KQ_AMAX && p->nscale > 0) { /* amax of an empty block is 0: zero first */
        unsigned zb = (p->nscale + KQ_THREADS - 1) / KQ_THREADS;
        kq_zero<<<zb > 1024 ? 1024 : zb, KQ_THREADS, 0, s>>>(static_cast<float *>(p->y), p->nscale);
    }
    if (nchunks == 0)
        return (int)cudaGetLastError();
    if (p->mode == KQ_SCALE) {
        uint32_t n = p->rows * p->cols;
        unsigned b = (n + KQ_THREADS - 1) / KQ_THREADS;
        kq_scale_kernel<<<b > 8192 ? 8192 : b, KQ_THREADS, 0, s>>>(*p, n);
        return (int)cudaGetLastError();
    }
    bool aligned = ((uintptr_t)p->x % 16 == 0) && ((uintptr_t)p->y % 16 == 0);
    /* vector loads: x is read 8 at a time; quantize also stores 8 bytes (dequantize stores per element) */
    bool vec = p->cols % KQ_V == 0 && aligned;
    bool uniform = p->col_sst == 0 || p->col_blk % KQ_V == 0 || (p->cols <= p->col_blk);
    const bool v3 = vec && uniform && !kq_use_v2();
    kq_fast f = {};
    if (v3) {
        f.pow2 = kq_use_pow2();
        f.bracket = kq_use_bracket();
        f.per_row = kfdiv_make((uint32_t)per_row);
        f.col_blk = kfdiv_make(p->col_blk);
        for (int d = 0; d < p->nlead && d < KQ_MAXD; d++) {
            f.lead_dim[d] = kfdiv_make(p->lead_dims[d]);
            f.lead_blk[d] = kfdiv_make(p->lead_blk[d]);
        }
    }
    /* v3 threads take kq_unroll<x>::U chunks per iteration (4 or 8) */
    const unsigned per_thread = !v3 ? 1 : p->mode == KQ_DEQUANT ? 8 : 4;
    uint64_t blocks = (nchunks + (uint64_t)KQ_THREADS * per_thread - 1) / ((uint64_t)KQ_THREADS * per_thread);
    const unsigned grid = (unsigned)(blocks > 8192 ? 8192 : blocks);
#define KQ_GO(M, X, Y)                                                         \
    (v3 ? kq_kernel_v3<M, X, Y><<<grid, KQ_THREADS, 0, s>>>(*p, f)   \
        : kq_kernel<M, X, Y><<<grid, KQ_THREADS, 0, s>>>(*p, vec, uniform))
#define KQ_WIDE(M, Y)                                                           \
    (p->xdt == XDNN_F32 ? KQ_GO(M, XDNN_F32, Y) : p->xdt == XDNN_F16 ? KQ_GO(M, XDNN_F16, Y) \
                                                : KQ_GO(M, XDNN_BF16, Y))
#define KQ_NARROW(Y)                                                                     \
    (p->xdt == XDNN_FP8_E4M3 ? KQ_GO(KQ_DEQUANT, XDNN_FP8_E4M3, Y)                       \
     : p->xdt == XDNN_FP8_E5M2 ? KQ_GO(KQ_DEQUANT, XDNN_FP8_E5M2, Y) : KQ_GO(KQ_DEQUANT, XDNN_I8, Y))
    if (p->mode == KQ_QUANT)
        p->ydt == XDNN_FP8_E4M3 ? KQ_WIDE(KQ_QUANT, XDNN_FP8_E4M3)
        : p->ydt == XDNN_FP8_E5M2 ? KQ_WIDE(KQ_QUANT, XDNN_FP8_E5M2) : KQ_WIDE(KQ_QUANT, XDNN_I8);
    else if (p->mode == KQ_DEQUANT)
        p->ydt == XDNN_F32 ? KQ_NARROW(XDNN_F32)
        : p->ydt == XDNN_F16 ? KQ_NARROW(XDNN_F16) : p->ydt == XDNN_BF16 ? KQ_NARROW(XDNN_BF16) : KQ_NARROW(XDNN_F64);
    else
        KQ_WIDE(KQ_AMAX, XDNN_F32);
#undef KQ_NARROW
#undef KQ_WIDE
#undef KQ_GO
    return (int)cudaGetLastError();
}

/* The byte dtype.c stores for the double q in dt (fp8_e4m3, fp8_e5m2, i8):
 * one round to nearest even, saturating (the special cases as kq_quant). */
static __device__ __forceinline__ unsigned char kq_quant_double(double q, int dt)
{
    unsigned char b;
    if (kq_byte_special(q, dt, true, &b))
        return b;
    return (unsigned char)__nv_cvt_double_to_fp8(q, __NV_SATFINITE, dt == XDNN_FP8_E4M3 ? __NV_E4M3 : __NV_E5M2);
}

/* amax of one value into *amax (zeroed by the host): |v| as f32 (rounding is
 * monotonic, so the max of the rounded is the rounded max), atomicMax on the
 * bits (a NaN's bits sort above Inf: it sticks). */
static __device__ __forceinline__ void kq_amax_of(float *amax, float v)
{
    if (amax)
        atomicMax(reinterpret_cast<unsigned *>(amax), __float_as_uint(fabsf(v)));
}

/* The GEMM epilogue of the integer-exact paths (kern_quant.h kq_epi):
 * scaled_matmul on i8 (matmul_i8_cublaslt) and scaled_conv on i8 or fp8
 * (scaled_conv_im2col).  cuBLASLt wrote the sums acc[r][c] (int32
 * from IMMA, exact; or f32 from the fp8 kernels, unscaled); this applies the
 * scales and the bias and rounds once, as the references do, in double:
 * v = acc * (sa * sb[c]) (acc below 2^31, or an f32; sa * sb an exact
 * product of two floats: the double product is the reference's), then
 * v += bias[c] (scaled_conv adds the bias after the scales, in double),
 * then v / sc in double for a requantized y (sc non-NULL), rounded straight
 * to y's dtype; amax (NULL = not asked for) gets max |v|.  Bit-exact
 * against src/ops/quant_matmul.c and src/ops/quant_conv.c given the sums.
 * Threads walk the columns fastest when y's columns are contiguous (ycs 1:
 * row-major, NHWC), else the rows (NCHW: y's rows are then contiguous), so
 * the stores coalesce either way. */
template <typename ACC, int YDT> __global__ void kq_epilogue_kernel(const kq_epi e)
{
    const ACC *acc = static_cast<const ACC *>(e.acc);
    const bool col_fast = e.ycs == 1;
    const uint64_t n = (uint64_t)e.rows * e.cols;
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        const uint32_t r = (uint32_t)(col_fast ? i / e.cols : i % e.rows);
        const uint32_t c = (uint32_t)(col_fast ? i % e.cols : i / e.rows);
        int64_t o = (int64_t)c * e.ycs;
        uint32_t rest = r;
        for (int d = e.nyd - 1; d > 0; d--) {
            o += (int64_t)(rest % e.ydims[d]) * e.ystr[d];
            rest /= e.ydims[d];
        }
        o += (int64_t)rest * e.ystr[0];
        const double scale = (double)*e.sa * (double)e.sb[e.nsb == 1 ? 0 : c];
        double v = (double)acc[(uint64_t)r * e.ld_acc + c] * scale;
        if (e.bias)
            v += (double)e.bias[c];
        kq_amax_of(e.amax, (float)v);
        if (YDT == XDNN_F32)
            static_cast<float *>(e.y)[o] = (float)v;
        else if (YDT == XDNN_F16)
            static_cast<__half *>(e.y)[o] = __double2half(v);
        else if (YDT == XDNN_BF16)
            static_cast<__nv_bfloat16 *>(e.y)[o] = __double2bfloat16(v);
        else
            static_cast<unsigned char *>(e.y)[o] = kq_quant_double(e.sc ? v / (double)*e.sc : v, YDT);
    }
}

/* scaled_matmul on fp8 with a requantized y or an amax (matmul_fp8_cublaslt):
 * cuBLASLt writes v = sa * sb * (a @ b) in f32 (packed, ld = cols); y = v
 * rounded to bf16/f16/f32, or the exact quotient v / sc rounded once onto the
 * fp8 / i8 grid (kq_quant, as quantize does); amax gets max |v|. */
template <int YDT>
__global__ void kq_requant_f32_kernel(const float *v, uint32_t rows, uint32_t cols, uint32_t ldy, const float *sc,
                                      float *amax, void *y)
{
    const float c_scale = sc ? *sc : 1.0f, rs = 1.0f / c_scale;
    const uint64_t n = (uint64_t)rows * cols;
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t r = i / cols, c = i % cols, o = r * ldy + c;
        const float x = v[i];
        kq_amax_of(amax, x);
        if (YDT == XDNN_F32)
            static_cast<float *>(y)[o] = x;
        else if (YDT == XDNN_F16)
            static_cast<__half *>(y)[o] = __float2half_rn(x);
        else if (YDT == XDNN_BF16)
            static_cast<__nv_bfloat16 *>(y)[o] = __float2bfloat16_rn(x);
        else
            static_cast<unsigned char *>(y)[o] = kq_quant(x, c_scale, rs, YDT);
    }
}

/* One launch of KERNEL<ydt> over rows * cols elements, grid-stride. */
#define KQ_EPILOGUE_LAUNCH(KERNEL, ydt, ...)                                                                          \
    do {                                                                                                             \
        const uint64_t n_ = (uint64_t)rows * cols, b_ = (n_ + KQ_THREADS - 1) / KQ_THREADS;                         \
        if (n_ == 0)                                                                                                 \
            return (int)cudaSuccess;                                                                                 \
        const unsigned g_ = (unsigned)(b_ > 8192 ? 8192 : b_);                                                       \
        cudaStream_t s_ = static_cast<cudaStream_t>(stream);                                                         \
        switch (ydt) {                                                                                               \
        case XDNN_F32: KERNEL<XDNN_F32><<<g_, KQ_THREADS, 0, s_>>>(__VA_ARGS__); break;                             \
        case XDNN_F16: KERNEL<XDNN_F16><<<g_, KQ_THREADS, 0, s_>>>(__VA_ARGS__); break;                             \
        case XDNN_BF16: KERNEL<XDNN_BF16><<<g_, KQ_THREADS, 0, s_>>>(__VA_ARGS__); break;                           \
        case XDNN_I8: KERNEL<XDNN_I8><<<g_, KQ_THREADS, 0, s_>>>(__VA_ARGS__); break;                               \
        case XDNN_FP8_E4M3: KERNEL<XDNN_FP8_E4M3><<<g_, KQ_THREADS, 0, s_>>>(__VA_ARGS__); break;                   \
        case XDNN_FP8_E5M2: KERNEL<XDNN_FP8_E5M2><<<g_, KQ_THREADS, 0, s_>>>(__VA_ARGS__); break;                   \
        default: return (int)cudaErrorInvalidValue;                                                                  \
        }                                                                                                            \
        return (int)cudaGetLastError();                                                                              \
    } while (0)

/* One launch of kq_epilogue_kernel<ACC, e->ydt> over rows * cols elements, grid-stride. */
template <typename ACC> static int kq_epilogue_go(const kq_epi *e, void *stream)
{
    const uint64_t n = (uint64_t)e->rows * e->cols, b = (n + KQ_THREADS - 1) / KQ_THREADS;
    if (n == 0)
        return (int)cudaSuccess;
    const unsigned g = (unsigned)(b > 8192 ? 8192 : b);
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    switch (e->ydt) {
    case XDNN_F32: kq_epilogue_kernel<ACC, XDNN_F32><<<g, KQ_THREADS, 0, s>>>(*e); break;
    case XDNN_F16: kq_epilogue_kernel<ACC, XDNN_F16><<<g, KQ_THREADS, 0, s>>>(*e); break;
    case XDNN_BF16: kq_epilogue_kernel<ACC, XDNN_BF16><<<g, KQ_THREADS, 0, s>>>(*e); break;
    case XDNN_I8: kq_epilogue_kernel<ACC, XDNN_I8><<<g, KQ_THREADS, 0, s>>>(*e); break;
    case XDNN_FP8_E4M3: kq_epilogue_kernel<ACC, XDNN_FP8_E4M3><<<g, KQ_THREADS, 0, s>>>(*e); break;
    case XDNN_FP8_E5M2: kq_epilogue_kernel<ACC, XDNN_FP8_E5M2><<<g, KQ_THREADS, 0, s>>>(*e); break;
    default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}

extern "C" int kq_epilogue_launch(const kq_epi *e, void *stream)
{
    return e->acc_f32 ? kq_epilogue_go<float>(e, stream) : kq_epilogue_go<int32_t>(e, stream);
}

/* scaled_matmul's i8 epilogue: per-tensor scales, no bias, row-major y. */
extern "C" int kq_rescale_i32_launch(const int32_t *acc, uint32_t rows, uint32_t cols, uint32_t ldy, const float *sa,
                                     const float *sb, const float *sc, float *amax, void *y, int ydt, void *stream)
{
    kq_epi e = {};
    e.acc = acc;
    e.rows = rows;
    e.cols = cols;
    e.ld_acc = cols;
    e.sa = sa;
    e.sb = sb;
    e.nsb = 1;
    e.sc = sc;
    e.amax = amax;
    e.y = y;
    e.ydt = ydt;
    e.nyd = 1;
    e.ydims[0] = rows;
    e.ystr[0] = ldy;
    e.ycs = 1;
    return kq_epilogue_launch(&e, stream);
}

extern "C" int kq_requant_f32_launch(const float *v, uint32_t rows, uint32_t cols, uint32_t ldy, const float *sc,
                                     float *amax, void *y, int ydt, void *stream)
{
    KQ_EPILOGUE_LAUNCH(kq_requant_f32_kernel, ydt, v, rows, cols, ldy, sc, amax, y);
}
#undef KQ_EPILOGUE_LAUNCH
