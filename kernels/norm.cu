// norm.cu — normalization kernels (batch, layer, rms, group, instance norm,
// forward and backward) and softmax_bwd, over the canonical dims described
// in src/gpu/kern_norm.h.  f32 accumulation everywhere; statistics by
// Welford's update per thread and Chan's combination across threads/chunks.
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

// Offsets of flat index i over dims d for the operands in MASK.
template <unsigned MASK, typename IT>
__device__ __forceinline__ void decomp(const ng_dims &d, IT i, int64_t (&o)[NG_NOPS])
{
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

// Accumulate one element: offsets o, row-array index from NG_ROW.
template <int MODE>
__device__ __forceinline__ void acc_add(acc4 &a, const ng_job &j, const int64_t (&o)[NG_NOPS])
{
    if (MODE == NGR_WELFORD) {
        /* per thread: count, shift (its first value), sum and sum of squares
         * of x - shift; turned into (count, mean, M2) by acc_to_welford
         * before the Chan combination (no division per element) */
        float x = ldf(j.t.p[NG_X], o[NG_X], j.t.dt[NG_X]);
        if (a.v[0] == 0.f)
            a.v[1] = x;
        float d = x - a.v[1];
        a.v[0] += 1.f;
        a.v[2] += d;
        a.v[3] += d * d;
    } else if (MODE == NGR_SQUARES) {
        float x = ldf(j.t.p[NG_X], o[NG_X], j.t.dt[NG_X]);
        a.v[0] += x * x;
    } else if (MODE == NGR_BWD) {
        float x = ldf(j.t.p[NG_X], o[NG_X], j.t.dt[NG_X]);
        float dy = ldf(j.t.p[NG_DY], o[NG_DY], j.t.dt[NG_DY]);
        float sc = j.t.p[NG_SC] ? ldf(j.t.p[NG_SC], o[NG_SC], j.t.dt[NG_SC]) : 1.f;
        int64_t r = o[NG_ROW];
        float xhat = (x - (j.rms ? 0.f : j.mean[r])) * j.inv[r];
        float g = dy * sc;
        a.v[0] += g;
        a.v[1] += g * xhat;
        a.v[2] += dy;
        a.v[3] += dy * xhat;
    } else { // NGR_SMB: x is y
        float y = ldf(j.t.p[NG_X], o[NG_X], j.t.dt[NG_X]);
        float dy = ldf(j.t.p[NG_DY], o[NG_DY], j.t.dt[NG_DY]);
        a.v[0] += dy * y;
        a.v[2] += dy;
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

template <int MODE>
__host__ __device__ constexpr unsigned red_mask()
{
    return MODE == NGR_BWD ? OPBIT(NG_X) | OPBIT(NG_DY) | OPBIT(NG_SC) | OPBIT(NG_ROW)
         : MODE == NGR_SMB ? OPBIT(NG_X) | OPBIT(NG_DY)
                           : OPBIT(NG_X);
}

// Row mode: one block (256 threads) per (outer index, split); threads walk
// the inner dims.  Col mode: block 32 x 8, threadIdx.x across 32 outer
// indices (the contiguous dim), threadIdx.y across the chunk.
template <int MODE, bool COL, typename IT>
__global__ void __launch_bounds__(256) k_reduce(const ng_job j)
{
    constexpr unsigned M = red_mask<MODE>();
    __shared__ acc4 sh[256];
    int tid = threadIdx.x + threadIdx.y * blockDim.x;
    int64_t o = COL ? (int64_t)blockIdx.x * 32 + threadIdx.x : (int64_t)blockIdx.x;
    int split = blockIdx.y;
    int64_t q0 = (int64_t)split * j.chunk, q1 = q0 + j.chunk < j.Q ? q0 + j.chunk : j.Q;
    acc4 a = {{0.f, 0.f, 0.f, 0.f}};
    if (o < j.O) {
        int64_t base[NG_NOPS], off[NG_NOPS];
        decomp<M, IT>(j.outer, (IT)o, base);
        int step = COL ? blockDim.y : blockDim.x;
        int first = COL ? threadIdx.y : threadIdx.x;
        for (int64_t q = q0 + first; q < q1; q += step) {
            decomp<M, IT>(j.inner, (IT)q, off);
#pragma unroll
            for (int k = 0; k < NG_NOPS; k++)
                off[k] += base[k];
            acc_add<MODE>(a, j, off);
        }
    }
    if (MODE == NGR_WELFORD)
        acc_to_welford(a);
    if (!COL) {
        for (int m = 16; m > 0; m >>= 1)
            acc_shfl<MODE>(a, m);
        if ((tid & 31) == 0)
            sh[tid >> 5] = a;
        __syncthreads();
        if (tid < 32) {
            int nw = blockDim.x >> 5;
            a = tid < nw ? sh[tid] : acc4{{0.f, 0.f, 0.f, 0.f}};
            for (int m = 16; m > 0; m >>= 1)
                acc_shfl<MODE>(a, m);
            if (tid == 0) {
                float *dst = j.part + ((int64_t)split * j.O + o) * 4;
#pragma unroll
                for (int k = 0; k < 4; k++)
                    dst[k] = a.v[k];
            }
        }
    } else {
        sh[tid] = a;
        __syncthreads();
        if (threadIdx.y == 0) {
            for (int r = 1; r < (int)blockDim.y; r++)
                acc_merge<MODE>(a, sh[threadIdx.x + r * 32]);
            if (o < j.O) {
                float *dst = j.part + ((int64_t)split * j.O + o) * 4;
#pragma unroll
                for (int k = 0; k < 4; k++)
                    dst[k] = a.v[k];
            }
        }
    }
}

template <int MODE>
__global__ void k_finalize(const ng_job j)
{
    int64_t o = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= j.O)
        return;
    constexpr unsigned M = OPBIT(NG_ROW) | OPBIT(NG_MEAN) | OPBIT(NG_INV) | OPBIT(NG_RM) | OPBIT(NG_RV) |
                           OPBIT(NG_RMO) | OPBIT(NG_RVO) | OPBIT(NG_DSC) | OPBIT(NG_DBI);
    int64_t off[NG_NOPS];
    decomp<M, int64_t>(j.outer, o, off);
    const ng_ptrs &t = j.t;
    int64_t r = off[NG_ROW]; // workspace arrays are indexed by the flat row
    if (j.fin == NGF_LOAD) {
        j.mean[r] = j.rms ? 0.f : ldf(t.p[NG_MEAN], off[NG_MEAN], t.dt[NG_MEAN]);
        j.inv[r] = ldf(t.p[NG_INV], off[NG_INV], t.dt[NG_INV]);
        return;
    }
    acc4 a = {{0.f, 0.f, 0.f, 0.f}};
    for (int s = 0; s < j.nsplit; s++) {
        const float *src = j.part + ((int64_t)s * j.O + o) * 4;
        acc4 b = {{src[0], src[1], src[2], src[3]}};
        acc_merge<MODE>(a, b);
    }
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

// V = 4: the host divided the innermost dim by 4 (strides times 4); each
// thread handles 4 consecutive innermost elements from one decomposition.
template <int AM, int V, typename IT>
__global__ void k_apply(const ng_job j, IT numel)
{
    constexpr unsigned M = AM == NGA_FWD ? OPBIT(NG_X) | OPBIT(NG_Y) | OPBIT(NG_ROW) | OPBIT(NG_SC) | OPBIT(NG_BI)
                         : AM == NGA_BWD ? OPBIT(NG_X) | OPBIT(NG_DY) | OPBIT(NG_DX) | OPBIT(NG_ROW) | OPBIT(NG_SC)
                                         : OPBIT(NG_X) | OPBIT(NG_DY) | OPBIT(NG_DX) | OPBIT(NG_ROW);
    const ng_ptrs &t = j.t;
    for (IT i = (IT)blockIdx.x * blockDim.x + threadIdx.x; i < numel; i += (IT)gridDim.x * blockDim.x) {
        int64_t base[NG_NOPS];
        decomp<M, IT>(j.all, i, base);
#pragma unroll
        for (int v = 0; v < V; v++) {
        int64_t off[NG_NOPS];
#pragma unroll
        for (int k = 0; k < NG_NOPS; k++)
            off[k] = base[k] + (V > 1 ? (int64_t)v * (j.all.stride[k][j.all.n - 1] / V) : 0);
        int64_t r = off[NG_ROW];
        float x = ldf(t.p[NG_X], off[NG_X], t.dt[NG_X]);
        if (AM == NGA_FWD) {
            float sc = t.p[NG_SC] ? ldf(t.p[NG_SC], off[NG_SC], t.dt[NG_SC]) : 1.f;
            float bi = t.p[NG_BI] ? ldf(t.p[NG_BI], off[NG_BI], t.dt[NG_BI]) : 0.f;
            float m = j.rms ? 0.f : j.mean[r];
            stf(t.p[NG_Y], off[NG_Y], t.dt[NG_Y], (x - m) * j.inv[r] * sc + bi);
        } else if (AM == NGA_BWD) {
            float dy = ldf(t.p[NG_DY], off[NG_DY], t.dt[NG_DY]);
            float sc = t.p[NG_SC] ? ldf(t.p[NG_SC], off[NG_SC], t.dt[NG_SC]) : 1.f;
            float iv = j.inv[r], xhat = (x - (j.rms ? 0.f : j.mean[r])) * iv;
            float g = dy * sc, sa = j.rms ? 0.f : j.a[r];
            stf(t.p[NG_DX], off[NG_DX], t.dt[NG_DX], iv / j.D * (j.D * g - sa - xhat * j.b[r]));
        } else {
            float dy = ldf(t.p[NG_DY], off[NG_DY], t.dt[NG_DY]);
            float dx = j.log_softmax ? dy - expf(x) * j.c[r] : x * (dy - j.a[r]);
            stf(t.p[NG_DX], off[NG_DX], t.dt[NG_DX], dx);
        }
        }
    }
}

// ---- one block per row: layernorm / rmsnorm forward with the row in
// registers (x read once).  Inner dims: one run, stride 1 in x and y.
enum { ROW_THREADS = 256, ROW_PER_THREAD = NG_ROW_MAX / ROW_THREADS };

template <typename T>
__device__ __forceinline__ float to_f(T v);
template <>
__device__ __forceinline__ float to_f<float>(float v) { return v; }
template <>
__device__ __forceinline__ float to_f<__half>(__half v) { return __half2float(v); }
template <>
__device__ __forceinline__ float to_f<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }

__device__ __forceinline__ float block_sum(float v, float *sh)
{
    for (int m = 16; m > 0; m >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, m);
    int w = threadIdx.x >> 5, nw = blockDim.x >> 5;
    __syncthreads(); // sh reuse
    if ((threadIdx.x & 31) == 0)
        sh[w] = v;
    __syncthreads();
    v = threadIdx.x < nw ? sh[threadIdx.x] : 0.f;
    if (w == 0)
        for (int m = 16; m > 0; m >>= 1)
            v += __shfl_xor_sync(0xffffffffu, v, m);
    if (threadIdx.x == 0)
        sh[0] = v;
    __syncthreads();
    return sh[0];
}

template <typename T>
__global__ void __launch_bounds__(ROW_THREADS) k_row_fwd(const ng_job j, int64_t D)
{
    __shared__ float sh[32];
    int64_t row = blockIdx.x;
    constexpr unsigned M = OPBIT(NG_X) | OPBIT(NG_Y) | OPBIT(NG_ROW) | OPBIT(NG_MEAN) | OPBIT(NG_INV);
    int64_t base[NG_NOPS];
    decomp<M, int64_t>(j.outer, row, base);
    const T *x = static_cast<const T *>(j.t.p[NG_X]) + base[NG_X];
    const int64_t scs = j.inner.stride[NG_SC][0], bis = j.inner.stride[NG_BI][0];
    float v[ROW_PER_THREAD];
    float sum = 0.f;
#pragma unroll
    for (int k = 0; k < ROW_PER_THREAD; k++) {
        int64_t i = threadIdx.x + (int64_t)k * blockDim.x;
        v[k] = i < D ? to_f<T>(x[i]) : 0.f;
        sum += v[k];
    }
    float mean = 0.f;
    if (!j.rms)
        mean = block_sum(sum, sh) / (float)D;
    float sq = 0.f;
#pragma unroll
    for (int k = 0; k < ROW_PER_THREAD; k++) {
        int64_t i = threadIdx.x + (int64_t)k * blockDim.x;
        float d = i < D ? v[k] - mean : 0.f;
        sq += d * d;
    }
    float inv = rsqrtf(block_sum(sq, sh) / (float)D + j.eps);
    if (threadIdx.x == 0) {
        if (j.t.p[NG_MEAN])
            stf(j.t.p[NG_MEAN], base[NG_MEAN], j.t.dt[NG_MEAN], mean);
        if (j.t.p[NG_INV])
            stf(j.t.p[NG_INV], base[NG_INV], j.t.dt[NG_INV], inv);
    }
#pragma unroll
    for (int k = 0; k < ROW_PER_THREAD; k++) {
        int64_t i = threadIdx.x + (int64_t)k * blockDim.x;
        if (i < D) {
            float sc = j.t.p[NG_SC] ? ldf(j.t.p[NG_SC], i * scs, j.t.dt[NG_SC]) : 1.f;
            float bi = j.t.p[NG_BI] ? ldf(j.t.p[NG_BI], i * bis, j.t.dt[NG_BI]) : 0.f;
            stf(j.t.p[NG_Y], base[NG_Y] + i, j.t.dt[NG_Y], (v[k] - mean) * inv * sc + bi);
        }
    }
}

int blocks_for(int64_t n, int threads)
{
    int64_t b = (n + threads - 1) / threads;
    int64_t cap = 132 * 16;
    return (int)(b < 1 ? 1 : b > cap ? cap : b);
}

template <int MODE, typename IT>
void launch_reduce(const ng_job *j, cudaStream_t s)
{
    if (j->col) {
        dim3 grid((unsigned)((j->O + 31) / 32), (unsigned)j->nsplit), block(32, 8);
        k_reduce<MODE, true, IT><<<grid, block, 0, s>>>(*j);
    } else {
        dim3 grid((unsigned)j->O, (unsigned)j->nsplit), block(256, 1);
        k_reduce<MODE, false, IT><<<grid, block, 0, s>>>(*j);
    }
}

template <typename IT>
void launch_reduce_mode(const ng_job *j, cudaStream_t s)
{
    switch (j->mode) {
    case NGR_WELFORD: launch_reduce<NGR_WELFORD, IT>(j, s); break;
    case NGR_SQUARES: launch_reduce<NGR_SQUARES, IT>(j, s); break;
    case NGR_BWD: launch_reduce<NGR_BWD, IT>(j, s); break;
    default: launch_reduce<NGR_SMB, IT>(j, s); break;
    }
}

template <int V, typename IT>
void launch_apply(const ng_job *j, int am, int64_t numel, cudaStream_t s)
{
    numel /= V;
    int blocks = blocks_for(numel, 256);
    switch (am) {
    case NGA_FWD: k_apply<NGA_FWD, V, IT><<<blocks, 256, 0, s>>>(*j, (IT)numel); break;
    case NGA_BWD: k_apply<NGA_BWD, V, IT><<<blocks, 256, 0, s>>>(*j, (IT)numel); break;
    default: k_apply<NGA_SMB, V, IT><<<blocks, 256, 0, s>>>(*j, (IT)numel); break;
    }
}

} // namespace

extern "C" int ng_launch_reduce(const ng_job *j, int index64, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (j->O <= 0 || j->nsplit <= 0)
        return 0;
    if (index64)
        launch_reduce_mode<uint64_t>(j, s);
    else
        launch_reduce_mode<uint32_t>(j, s);
    return (int)cudaGetLastError();
}

extern "C" int ng_launch_finalize(const ng_job *j, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (j->O <= 0)
        return 0;
    unsigned blocks = (unsigned)((j->O + 127) / 128);
    switch (j->mode) {
    case NGR_WELFORD: k_finalize<NGR_WELFORD><<<blocks, 128, 0, s>>>(*j); break;
    case NGR_SQUARES: k_finalize<NGR_SQUARES><<<blocks, 128, 0, s>>>(*j); break;
    default: k_finalize<NGR_BWD><<<blocks, 128, 0, s>>>(*j); break; // plain sums
    }
    return (int)cudaGetLastError();
}

extern "C" int ng_launch_apply(const ng_job *j, int apply_mode, int index64, int64_t numel, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (numel <= 0)
        return 0;
    if (j->vec4 && index64)
        launch_apply<4, uint64_t>(j, apply_mode, numel, s);
    else if (j->vec4)
        launch_apply<4, uint32_t>(j, apply_mode, numel, s);
    else if (index64)
        launch_apply<1, uint64_t>(j, apply_mode, numel, s);
    else
        launch_apply<1, uint32_t>(j, apply_mode, numel, s);
    return (int)cudaGetLastError();
}

extern "C" int ng_launch_row_fwd(const ng_job *j, int64_t rows, int64_t D, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (rows <= 0)
        return 0;
    int threads = ROW_THREADS;
    switch (j->t.dt[NG_X]) {
    case DT_F16: k_row_fwd<__half><<<(unsigned)rows, threads, 0, s>>>(*j, D); break;
    case DT_BF16: k_row_fwd<__nv_bfloat16><<<(unsigned)rows, threads, 0, s>>>(*j, D); break;
    default: k_row_fwd<float><<<(unsigned)rows, threads, 0, s>>>(*j, D); break;
    }
    return (int)cudaGetLastError();
}
