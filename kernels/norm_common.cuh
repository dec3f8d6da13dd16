// norm_common.cuh — device helpers shared by the normalization kernels
// (kernels/norm.cu, the generic split paths and row kernels; kernels/norm_cl.cu,
// batchnorm over channels-last x): typed loads/stores by xdnn_dtype code,
// index decomposition over ng_dims, the fused activation, the 4-float
// accumulators with their merges, and what a finalize stores for one row.
#ifndef XDNN_NORM_COMMON_CUH
#define XDNN_NORM_COMMON_CUH

#include "gpu/kern_norm.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace {

enum { DT_F32 = 0, DT_F16 = 1, DT_BF16 = 2, DT_F64 = 9 };

__device__ __forceinline__ float ldf(const void *p, int64_t i, int dt)
{
    switch (dt) {
    case DT_F16: return __half2float(static_cast<const __half *>(p)[i]);
    case DT_BF16: return __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[i]);
    case DT_F64: return (float)static_cast<const double *>(p)[i];
    default: return static_cast<const float *>(p)[i];
    }
}

__device__ __forceinline__ void stf(void *p, int64_t i, int dt, float v)
{
    switch (dt) {
    case DT_F16: static_cast<__half *>(p)[i] = __float2half_rn(v); break;
    case DT_BF16: static_cast<__nv_bfloat16 *>(p)[i] = __float2bfloat16_rn(v); break;
    case DT_F64: static_cast<double *>(p)[i] = (double)v; break;
    default: static_cast<float *>(p)[i] = v; break;
    }
}

// Offsets of flat index i over dims d for the operands in MASK (DIMS:
// ng_dims, or ng_row_dims, whose strides stop at NG_INV).
template <unsigned MASK, typename IT, typename DIMS>
__device__ __forceinline__ void decomp(const DIMS &d, IT i, int64_t (&o)[NG_NOPS])
{
    static_assert(MASK >> (sizeof d.stride / sizeof d.stride[0]) == 0, "an operand the dims carry no stride for");
#pragma unroll
    for (int k = 0; k < NG_NOPS; k++)
        o[k] = 0;
    for (int j = d.n - 1; j >= 0; j--) {
        IT s = (IT)d.size[j];
        IT q = i / s;
        int64_t r = (int64_t)(i - q * s);
        i = q;
#pragma unroll
        for (int k = 0; k < NG_NOPS; k++)
            if (MASK >> k & 1u)
                o[k] += r * d.stride[k][j];
    }
}

#define OPBIT(k) (1u << (k))

// The fused activation (ng_act) on a normalized value, after rounding it to
// the dtype the norm's own result had (as the CPU reference stores it).
__device__ __forceinline__ float act_f(float v, int act, int dt)
{
    if (act == NGACT_NONE)
        return v;
    if (dt == DT_F16)
        v = __half2float(__float2half_rn(v));
    else if (dt == DT_BF16)
        v = __bfloat162float(__float2bfloat16_rn(v));
    switch (act) {
    case NGACT_RELU: return v != v ? v : v > 0.f ? v : 0.f;
    case NGACT_SILU: return v / (1.f + expf(-v));
    case NGACT_GELU_TANH: return 0.5f * v * (1.f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
    default: return 0.5f * v * (1.f + erff(v * 0.7071067811865476f));
    }
}

// v rounded to dtype dt (as a tensor of that dtype would hold it).
__device__ __forceinline__ float round_dt(float v, int dt)
{
    return dt == DT_F16 ? __half2float(__float2half_rn(v)) : dt == DT_BF16 ? __bfloat162float(__float2bfloat16_rn(v)) : v;
}

// ---- accumulators: 4 floats, merged per mode
struct acc4 {
    float v[4];
};

template <int MODE>
__device__ __forceinline__ void acc_merge(acc4 &a, const acc4 &b)
{
    if (MODE == NGR_WELFORD) {
        float n = a.v[0] + b.v[0];
        if (n == 0.f)
            return;
        float delta = b.v[1] - a.v[1], fb = b.v[0] / n;
        a.v[1] += delta * fb;
        a.v[2] += b.v[2] + delta * delta * a.v[0] * fb;
        a.v[0] = n;
    } else {
#pragma unroll
        for (int k = 0; k < 4; k++)
            a.v[k] += b.v[k];
    }
}

template <int MODE>
__device__ __forceinline__ void acc_shfl(acc4 &a, int lane_mask)
{
    acc4 b;
#pragma unroll
    for (int k = 0; k < 4; k++)
        b.v[k] = __shfl_xor_sync(0xffffffffu, a.v[k], lane_mask);
    acc_merge<MODE>(a, b);
}

// Accumulate one value of x (statistics modes).
template <int MODE>
__device__ __forceinline__ void acc_x(acc4 &a, float x)
{
    if (MODE == NGR_WELFORD) {
        /* per thread: count, shift (its first value), sum and sum of squares
         * of x - shift; turned into (count, mean, M2) by acc_to_welford
         * before the Chan combination (no division per element) */
        if (a.v[0] == 0.f)
            a.v[1] = x;
        float d = x - a.v[1];
        a.v[0] += 1.f;
        a.v[2] += d;
        a.v[3] += d * d;
    } else {
        a.v[0] += x * x;
    }
}

__device__ __forceinline__ void acc_to_welford(acc4 &a)
{
    float n = a.v[0];
    if (n > 0.f) {
        float s1 = a.v[2], m2 = a.v[3] - s1 * s1 / n;
        a.v[1] += s1 / n;
        a.v[2] = m2 > 0.f ? m2 : 0.f;
    }
    a.v[3] = 0.f;
}


// T <-> f32 for the typed (templated) kernels.
template <typename T>
struct dt_of;
template <> struct dt_of<float> { static constexpr int v = DT_F32; };
template <> struct dt_of<__half> { static constexpr int v = DT_F16; };
template <> struct dt_of<__nv_bfloat16> { static constexpr int v = DT_BF16; };

template <typename T>
__device__ __forceinline__ float to_f(T v);
template <>
__device__ __forceinline__ float to_f<float>(float v) { return v; }
template <>
__device__ __forceinline__ float to_f<__half>(__half v) { return __half2float(v); }
template <>
__device__ __forceinline__ float to_f<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T>
__device__ __forceinline__ T from_f(float v);
template <>
__device__ __forceinline__ float from_f<float>(float v) { return v; }
template <>
__device__ __forceinline__ __half from_f<__half>(float v) { return __float2half_rn(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// What a finalize writes for row r (offsets `off` over the outer dims) once
// the chunks are combined in `a`: mean / inv (+ user tensors and running
// statistics), or the row sums a, b, c, e (+ dscale / dbias).
template <int MODE>
__device__ __forceinline__ void fin_store(const ng_job &j, const int64_t (&off)[NG_NOPS], const acc4 &a)
{
    const ng_ptrs &t = j.t;
    int64_t r = off[NG_ROW]; // workspace arrays are indexed by the flat row
    if (j.fin == NGF_STATS) {
        float mean, var;
        if (MODE == NGR_SQUARES) {
            mean = 0.f;
            var = a.v[0] / j.D;
        } else {
            mean = a.v[1];
            var = a.v[0] > 0.f ? a.v[2] / a.v[0] : 0.f;
        }
        float inv = rsqrtf(var + j.eps);
        j.mean[r] = mean;
        j.inv[r] = inv;
        if (t.p[NG_MEAN])
            stf(t.p[NG_MEAN], off[NG_MEAN], t.dt[NG_MEAN], mean);
        if (t.p[NG_INV])
            stf(t.p[NG_INV], off[NG_INV], t.dt[NG_INV], inv);
        if (t.p[NG_RMO]) {
            float rm = ldf(t.p[NG_RM], off[NG_RM], t.dt[NG_RM]);
            stf(t.p[NG_RMO], off[NG_RMO], t.dt[NG_RMO], (1.f - j.momentum) * rm + j.momentum * mean);
        }
        if (t.p[NG_RVO]) {
            float rv = ldf(t.p[NG_RV], off[NG_RV], t.dt[NG_RV]);
            stf(t.p[NG_RVO], off[NG_RVO], t.dt[NG_RVO], (1.f - j.momentum) * rv + j.momentum * var * j.unbias);
        }
    } else { // NGF_SUMS
        if (j.a) {
            j.a[r] = a.v[0];
            j.b[r] = a.v[1];
        }
        if (j.c) {
            j.c[r] = a.v[2];
            j.e[r] = a.v[3];
        }
        if (j.write_pgrad) {
            if (t.p[NG_DSC])
                stf(t.p[NG_DSC], off[NG_DSC], t.dt[NG_DSC], a.v[3]);
            if (t.p[NG_DBI])
                stf(t.p[NG_DBI], off[NG_DBI], t.dt[NG_DBI], a.v[2]);
        }
    }
}

} // namespace

#endif
