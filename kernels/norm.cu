// norm.cu — normalization kernels (batch, layer, rms, group, instance norm,
// forward and backward) and softmax_bwd, over the canonical dims described
// in src/gpu/kern_norm.h.  f32 accumulation everywhere; statistics by
// Welford's update per thread and Chan's combination across threads/chunks.
#include "norm_common.cuh"

namespace {

// Accumulate one element: offsets o, row-array index from NG_ROW.
template <int MODE>
__device__ __forceinline__ void acc_add(acc4 &a, const ng_job &j, const int64_t (&o)[NG_NOPS])
{
    if (MODE == NGR_WELFORD || MODE == NGR_SQUARES) {
        acc_x<MODE>(a, ldf(j.t.p[NG_X], o[NG_X], j.t.dt[NG_X]));
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
        int64_t q = q0 + first;
        if ((MODE == NGR_WELFORD || MODE == NGR_SQUARES) && j.inner.n == 1) {
            /* v2: one strided run (batchnorm NHWC: the rows N*H*W, stride C):
             * no index division, four loads in flight before they are used */
            const int64_t st = j.inner.stride[NG_X][0], xb = base[NG_X];
            const void *px = j.t.p[NG_X];
            const int dt = j.t.dt[NG_X];
            for (; q + 3 * step < q1; q += 4 * step) {
                float x0 = ldf(px, xb + q * st, dt), x1 = ldf(px, xb + (q + step) * st, dt);
                float x2 = ldf(px, xb + (q + 2 * step) * st, dt), x3 = ldf(px, xb + (q + 3 * step) * st, dt);
                acc_x<MODE>(a, x0);
                acc_x<MODE>(a, x1);
                acc_x<MODE>(a, x2);
                acc_x<MODE>(a, x3);
            }
        }
        for (; q < q1; q += step) {
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
    fin_store<MODE>(j, off, a);
}

// V = 4: the host divided the innermost dim by 4 (strides times 4); each
// thread handles 4 consecutive innermost elements from one decomposition.
template <int AM, int V, typename IT>
__global__ void k_apply(const ng_job j, IT numel)
{
    constexpr unsigned M = AM == NGA_FWD ? OPBIT(NG_X) | OPBIT(NG_Y) | OPBIT(NG_ROW) | OPBIT(NG_SC) | OPBIT(NG_BI) |
                                               OPBIT(NG_DY)
                         : AM == NGA_BWD ? OPBIT(NG_X) | OPBIT(NG_DY) | OPBIT(NG_DX) | OPBIT(NG_ROW) | OPBIT(NG_SC) |
                                               OPBIT(NG_Y)
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
            float y = (x - m) * j.inv[r] * sc + bi;
            if (t.p[NG_DY]) // the fused residual add (batchnorm)
                y = round_dt(y, j.res_dt) + ldf(t.p[NG_DY], off[NG_DY], t.dt[NG_DY]);
            stf(t.p[NG_Y], off[NG_Y], t.dt[NG_Y], act_f(y, j.act, j.act_dt));
        } else if (AM == NGA_BWD) {
            float dy = ldf(t.p[NG_DY], off[NG_DY], t.dt[NG_DY]);
            float sc = t.p[NG_SC] ? ldf(t.p[NG_SC], off[NG_SC], t.dt[NG_SC]) : 1.f;
            float iv = j.inv[r], xhat = (x - (j.rms ? 0.f : j.mean[r])) * iv;
            float g = dy * sc, sa = j.rms ? 0.f : j.a[r];
            float dx = iv / j.D * (j.D * g - sa - xhat * j.b[r]);
            if (t.p[NG_Y]) // the fused residual add
                dx = round_dt(dx, j.res_dt) + ldf(t.p[NG_Y], off[NG_Y], t.dt[NG_Y]);
            stf(t.p[NG_DX], off[NG_DX], t.dt[NG_DX], dx);
        } else {
            float dy = ldf(t.p[NG_DY], off[NG_DY], t.dt[NG_DY]);
            float dx = j.log_softmax ? dy - expf(x) * j.c[r] : x * (dy - j.a[r]);
            stf(t.p[NG_DX], off[NG_DX], t.dt[NG_DX], dx);
        }
        }
    }
}

// ---- one block per row: layernorm / rmsnorm forward and the backward dx,
// the row held in registers (x, dy read once).  Inner dims: one run, stride
// 1 in x/y (dy/dx).  VEC: every row starts 4-element aligned and D % 4 == 0,
// so each thread moves 4 consecutive elements per access.
// PT elements per thread, the block sized to the row: v1 PT = 8 (up to 1024
// threads, rows up to 2048 elements); v2 PT = 32 for longer rows (up to 256
// threads: four times the rows per SM, 8 loads in flight per thread before the
// first reduction, which is what a row of 8192 f16 was short of).
enum { ROW_THREADS = 1024, ROW_PT_SHORT = 8, ROW_PT_LONG = 32, ROW_LONG_D = 2048 };
static_assert(ROW_PT_SHORT * ROW_THREADS >= NG_ROW_MAX && ROW_PT_LONG * 256 >= NG_ROW_MAX, "rows must fit");

template <typename T>
struct __align__(4 * sizeof(T)) pack4 {
    T v[4];
};

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

// Element e of this thread: index (VEC) 4 * (threadIdx.x + (e / 4) * blockDim.x) + e % 4,
// (scalar) threadIdx.x + e * blockDim.x.
template <bool VEC>
__device__ __forceinline__ int64_t row_index(int e)
{
    return VEC ? 4 * ((int64_t)threadIdx.x + (int64_t)(e >> 2) * blockDim.x) + (e & 3)
               : (int64_t)threadIdx.x + (int64_t)e * blockDim.x;
}

template <typename T, bool VEC, int PT>
__device__ __forceinline__ void row_load(const T *p, int64_t D, float (&v)[PT])
{
    if (VEC) {
#pragma unroll
        for (int c = 0; c < PT / 4; c++) {
            int64_t i = 4 * ((int64_t)threadIdx.x + (int64_t)c * blockDim.x);
            if (i < D) {
                pack4<T> q = *reinterpret_cast<const pack4<T> *>(p + i);
#pragma unroll
                for (int k = 0; k < 4; k++)
                    v[4 * c + k] = to_f<T>(q.v[k]);
            } else {
#pragma unroll
                for (int k = 0; k < 4; k++)
                    v[4 * c + k] = 0.f;
            }
        }
    } else {
#pragma unroll
        for (int e = 0; e < PT; e++) {
            int64_t i = row_index<false>(e);
            v[e] = i < D ? to_f<T>(p[i]) : 0.f;
        }
    }
}

template <typename T, bool VEC, int PT>
__device__ __forceinline__ void row_store(T *p, int64_t D, const float (&v)[PT])
{
    if (VEC) {
#pragma unroll
        for (int c = 0; c < PT / 4; c++) {
            int64_t i = 4 * ((int64_t)threadIdx.x + (int64_t)c * blockDim.x);
            if (i < D) {
                pack4<T> q;
#pragma unroll
                for (int k = 0; k < 4; k++)
                    q.v[k] = from_f<T>(v[4 * c + k]);
                *reinterpret_cast<pack4<T> *>(p + i) = q;
            }
        }
    } else {
#pragma unroll
        for (int e = 0; e < PT; e++) {
            int64_t i = row_index<false>(e);
            if (i < D)
                p[i] = from_f<T>(v[e]);
        }
    }
}

// A per-feature parameter (scale or bias) at element indices of this thread:
// vector loads when it is contiguous and of x's dtype.
template <typename T, bool VEC, int PT>
__device__ __forceinline__ void row_param(const void *p, int dt, int64_t stride, int64_t D, float dflt,
                                          float (&v)[PT])
{
    if (!p) {
#pragma unroll
        for (int e = 0; e < PT; e++)
            v[e] = dflt;
        return;
    }
    if (VEC && stride == 1 && dt == dt_of<T>::v) {
        row_load<T, true, PT>(static_cast<const T *>(p), D, v);
        return;
    }
#pragma unroll
    for (int e = 0; e < PT; e++) {
        int64_t i = row_index<VEC>(e);
        v[e] = i < D ? ldf(p, i * stride, dt) : 0.f;
    }
}

template <typename T, bool VEC, int PT>
__global__ void __launch_bounds__(PT > ROW_PT_SHORT ? 256 : ROW_THREADS) k_row_fwd(const ng_job j, int64_t D)
{
    __shared__ float sh[32];
    int64_t row = blockIdx.x;
    constexpr unsigned M = OPBIT(NG_X) | OPBIT(NG_Y) | OPBIT(NG_MEAN) | OPBIT(NG_INV);
    int64_t base[NG_NOPS];
    decomp<M, int64_t>(j.outer, row, base);
    float v[PT];
    row_load<T, VEC, PT>(static_cast<const T *>(j.t.p[NG_X]) + base[NG_X], D, v);
    float sum = 0.f;
#pragma unroll
    for (int e = 0; e < PT; e++)
        sum += v[e];
    float mean = 0.f;
    if (!j.rms)
        mean = block_sum(sum, sh) / (float)D;
    float sq = 0.f;
#pragma unroll
    for (int e = 0; e < PT; e++) {
        float d = row_index<VEC>(e) < D ? v[e] - mean : 0.f;
        sq += d * d;
    }
    float inv = rsqrtf(block_sum(sq, sh) / (float)D + j.eps);
    if (threadIdx.x == 0) {
        if (j.t.p[NG_MEAN])
            stf(j.t.p[NG_MEAN], base[NG_MEAN], j.t.dt[NG_MEAN], mean);
        if (j.t.p[NG_INV])
            stf(j.t.p[NG_INV], base[NG_INV], j.t.dt[NG_INV], inv);
    }
    float w[PT];
    row_param<T, VEC, PT>(j.t.p[NG_SC], j.t.dt[NG_SC], j.inner.stride[NG_SC][0], D, 1.f, w);
#pragma unroll
    for (int e = 0; e < PT; e++)
        v[e] = (v[e] - mean) * inv * w[e];
    row_param<T, VEC, PT>(j.t.p[NG_BI], j.t.dt[NG_BI], j.inner.stride[NG_BI][0], D, 0.f, w);
#pragma unroll
    for (int e = 0; e < PT; e++)
        v[e] = act_f(v[e] + w[e], j.act, j.act_dt);
    row_store<T, VEC, PT>(static_cast<T *>(j.t.p[NG_Y]) + base[NG_Y], D, v);
}

// The fused residual add of a backward: dx (rounded to its own dtype) + NG_Y.
template <typename T, bool VEC, int PT>
__device__ __forceinline__ void row_residual(const ng_job &j, int64_t base, int64_t D, float (&g)[PT])
{
    if (!j.t.p[NG_Y])
        return;
    float r[PT];
    row_load<T, VEC, PT>(static_cast<const T *>(j.t.p[NG_Y]) + base, D, r);
#pragma unroll
    for (int e = 0; e < PT; e++)
        g[e] = round_dt(g[e], j.res_dt) + r[e];
}

// dx = inv / D * (D g - sum g - xhat sum g xhat), g = dy * scale (rms: no
// mean, no sum g); mean/inv from the workspace arrays.
template <typename T, bool VEC, int PT>
__global__ void __launch_bounds__(PT > ROW_PT_SHORT ? 256 : ROW_THREADS) k_row_bwd(const ng_job j, int64_t D)
{
    __shared__ float sh[32];
    int64_t row = blockIdx.x;
    constexpr unsigned M = OPBIT(NG_X) | OPBIT(NG_DY) | OPBIT(NG_DX) | OPBIT(NG_ROW) | OPBIT(NG_Y);
    int64_t base[NG_NOPS];
    decomp<M, int64_t>(j.outer, row, base);
    float mean = j.rms ? 0.f : j.mean[base[NG_ROW]], inv = j.inv[base[NG_ROW]];
    float xh[PT], g[PT];
    row_load<T, VEC, PT>(static_cast<const T *>(j.t.p[NG_X]) + base[NG_X], D, xh);
    row_load<T, VEC, PT>(static_cast<const T *>(j.t.p[NG_DY]) + base[NG_DY], D, g);
    {
        float w[PT];
        row_param<T, VEC, PT>(j.t.p[NG_SC], j.t.dt[NG_SC], j.inner.stride[NG_SC][0], D, 1.f, w);
#pragma unroll
        for (int e = 0; e < PT; e++) {
            g[e] *= w[e];
            xh[e] = row_index<VEC>(e) < D ? (xh[e] - mean) * inv : 0.f;
        }
    }
    float sa = 0.f, sb = 0.f;
#pragma unroll
    for (int e = 0; e < PT; e++) {
        sa += g[e];
        sb += g[e] * xh[e];
    }
    sa = j.rms ? 0.f : block_sum(sa, sh);
    sb = block_sum(sb, sh);
    float fD = (float)D;
#pragma unroll
    for (int e = 0; e < PT; e++)
        g[e] = inv / fD * (fD * g[e] - sa - xh[e] * sb);
    row_residual<T, VEC, PT>(j, base[NG_Y], D, g);
    row_store<T, VEC, PT>(static_cast<T *>(j.t.p[NG_DX]) + base[NG_DX], D, g);
}

// The same dx with the parameter gradients (dscale = sum dy xhat, dbias =
// sum dy over the rows) in the one pass: a grid of at most j.pg_blocks blocks
// walks the rows (row = blockIdx.x, += gridDim.x); every thread owns the same
// columns in every row, so it keeps their partial sums in registers and writes
// them once, f32, to part[block][2][D]; k_pgrad_cols adds the blocks' partials
// per column.  The split reduce it replaces read x and dy a second time with
// threads along the reduced rows (rmsnorm_bwd of a Llama block, [8192, 4096]
// bf16: 0.39-0.44 ms for ~0.07 ms of traffic).  Vector rows only (VEC).
template <typename T, int PT, bool BIAS>
__global__ void __launch_bounds__(256) k_row_bwd_pg(const ng_job j, int64_t D, int64_t rows)
{
    __shared__ float sh[32];
    constexpr unsigned M = OPBIT(NG_X) | OPBIT(NG_DY) | OPBIT(NG_DX) | OPBIT(NG_ROW) | OPBIT(NG_Y);
    float w[PT], ps[PT], pb[PT];
    row_param<T, true, PT>(j.t.p[NG_SC], j.t.dt[NG_SC], j.inner.stride[NG_SC][0], D, 1.f, w);
#pragma unroll
    for (int e = 0; e < PT; e++)
        ps[e] = pb[e] = 0.f;
    float fD = (float)D;
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        int64_t base[NG_NOPS];
        decomp<M, int64_t>(j.outer, row, base);
        float mean = j.rms ? 0.f : j.mean[base[NG_ROW]], inv = j.inv[base[NG_ROW]];
        float xh[PT], g[PT];
        row_load<T, true, PT>(static_cast<const T *>(j.t.p[NG_X]) + base[NG_X], D, xh);
        row_load<T, true, PT>(static_cast<const T *>(j.t.p[NG_DY]) + base[NG_DY], D, g);
        float sa = 0.f, sb = 0.f;
#pragma unroll
        for (int e = 0; e < PT; e++) {
            xh[e] = row_index<true>(e) < D ? (xh[e] - mean) * inv : 0.f;
            ps[e] += g[e] * xh[e];
            if (BIAS)
                pb[e] += g[e];
            g[e] *= w[e];
            sa += g[e];
            sb += g[e] * xh[e];
        }
        sa = j.rms ? 0.f : block_sum(sa, sh);
        sb = block_sum(sb, sh);
#pragma unroll
        for (int e = 0; e < PT; e++)
            g[e] = inv / fD * (fD * g[e] - sa - xh[e] * sb);
        row_residual<T, true, PT>(j, base[NG_Y], D, g);
        row_store<T, true, PT>(static_cast<T *>(j.t.p[NG_DX]) + base[NG_DX], D, g);
    }
    float *out = j.part + (int64_t)blockIdx.x * 2 * D;
#pragma unroll
    for (int c = 0; c < PT / 4; c++) {
        int64_t i = 4 * ((int64_t)threadIdx.x + (int64_t)c * blockDim.x);
        if (i < D) {
            *reinterpret_cast<float4 *>(out + i) = make_float4(ps[4 * c], ps[4 * c + 1], ps[4 * c + 2], ps[4 * c + 3]);
            if (BIAS)
                *reinterpret_cast<float4 *>(out + D + i) =
                    make_float4(pb[4 * c], pb[4 * c + 1], pb[4 * c + 2], pb[4 * c + 3]);
        }
    }
}

// dscale / dbias of column c: the sum of the nblk blocks' partials.  Block
// 32 x 8: threadIdx.x across 32 columns (coalesced), threadIdx.y across blocks.
__global__ void __launch_bounds__(256) k_pgrad_cols(const ng_job j, int64_t D, int nblk)
{
    __shared__ float sh[2][8][33];
    int64_t col = (int64_t)blockIdx.x * 32 + threadIdx.x;
    float s = 0.f, b = 0.f;
    if (col < D)
        for (int k = threadIdx.y; k < nblk; k += 8) {
            const float *src = j.part + (int64_t)k * 2 * D;
            s += src[col];
            if (j.t.p[NG_DBI])
                b += src[D + col];
        }
    sh[0][threadIdx.y][threadIdx.x] = s;
    sh[1][threadIdx.y][threadIdx.x] = b;
    __syncthreads();
    if (threadIdx.y != 0 || col >= D)
        return;
    for (int k = 1; k < 8; k++)
        s += sh[0][k][threadIdx.x], b += sh[1][k][threadIdx.x];
    if (j.t.p[NG_DSC])
        stf(j.t.p[NG_DSC], col * j.inner.stride[NG_DSC][0], j.t.dt[NG_DSC], s);
    if (j.t.p[NG_DBI])
        stf(j.t.p[NG_DBI], col * j.inner.stride[NG_DBI][0], j.t.dt[NG_DBI], b);
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

#define ROW_LAUNCH1(kern, PT)                                                                         \
    switch (j->t.dt[NG_X]) {                                                                          \
    case DT_F16:                                                                                      \
        if (j->vec4) kern<__half, true, PT><<<(unsigned)rows, threads, 0, s>>>(*j, D);             \
        else kern<__half, false, PT><<<(unsigned)rows, threads, 0, s>>>(*j, D);                    \
        break;                                                                                        \
    case DT_BF16:                                                                                     \
        if (j->vec4) kern<__nv_bfloat16, true, PT><<<(unsigned)rows, threads, 0, s>>>(*j, D);      \
        else kern<__nv_bfloat16, false, PT><<<(unsigned)rows, threads, 0, s>>>(*j, D);             \
        break;                                                                                        \
    default:                                                                                          \
        if (j->vec4) kern<float, true, PT><<<(unsigned)rows, threads, 0, s>>>(*j, D);              \
        else kern<float, false, PT><<<(unsigned)rows, threads, 0, s>>>(*j, D);                     \
        break;                                                                                        \
    }
// The block: ceil(D / PT) threads rounded up to a warp.
#define ROW_LAUNCH(kern)                                                                              \
    const int pt = D > ROW_LONG_D ? ROW_PT_LONG : ROW_PT_SHORT;                                       \
    int threads = (int)((D + pt - 1) / pt + 31) / 32 * 32;                                            \
    threads = threads < 32 ? 32 : threads > ROW_THREADS ? ROW_THREADS : threads;                      \
    if (pt == ROW_PT_LONG) {                                                                          \
        ROW_LAUNCH1(kern, ROW_PT_LONG)                                                                \
    } else {                                                                                          \
        ROW_LAUNCH1(kern, ROW_PT_SHORT)                                                               \
    }

extern "C" int ng_launch_row_fwd(const ng_job *j, int64_t rows, int64_t D, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (rows <= 0)
        return 0;
    ROW_LAUNCH(k_row_fwd)
    return (int)cudaGetLastError();
}

extern "C" int ng_launch_row_bwd(const ng_job *j, int64_t rows, int64_t D, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (rows <= 0)
        return 0;
    ROW_LAUNCH(k_row_bwd)
    return (int)cudaGetLastError();
}

extern "C" int ng_launch_pgrad_cols(const ng_job *j, int64_t D, int nblk, void *stream)
{
    k_pgrad_cols<<<(unsigned)((D + 31) / 32), dim3(32, 8), 0, static_cast<cudaStream_t>(stream)>>>(*j, D, nblk);
    return (int)cudaGetLastError();
}

template <typename T, int PT, bool BIAS>
static int launch_row_bwd_pg1(const ng_job *j, int64_t rows, int64_t D, int threads, cudaStream_t s)
{
    int per_sm = 0, dev = 0, sms = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k_row_bwd_pg<T, PT, BIAS>, threads, 0);
    int64_t nblk = (int64_t)(per_sm < 1 ? 1 : per_sm) * (sms < 1 ? 1 : sms);
    nblk = nblk > j->pg_blocks ? j->pg_blocks : nblk;
    nblk = nblk > rows ? rows : nblk;
    k_row_bwd_pg<T, PT, BIAS><<<(unsigned)nblk, threads, 0, s>>>(*j, D, rows);
    return ng_launch_pgrad_cols(j, D, (int)nblk, s);
}

template <typename T, int PT>
static int launch_row_bwd_pg2(const ng_job *j, int64_t rows, int64_t D, int threads, cudaStream_t s)
{
    return j->t.p[NG_DBI] ? launch_row_bwd_pg1<T, PT, true>(j, rows, D, threads, s)
                          : launch_row_bwd_pg1<T, PT, false>(j, rows, D, threads, s);
}

extern "C" int ng_launch_row_bwd_pg(const ng_job *j, int64_t rows, int64_t D, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (rows <= 0)
        return 0;
    if (!j->vec4 || j->pg_blocks < 1 || D > NG_ROW_PG_MAX)
        return (int)cudaErrorInvalidValue;
    // PT 16: 256 threads hold a row of 4096 (the common hidden sizes up to 4096); 32 above
    const int pt = D > 4096 ? 32 : 16;
    int threads = (int)((D + pt - 1) / pt + 31) / 32 * 32;
    threads = threads < 32 ? 32 : threads;
    switch (j->t.dt[NG_X]) {
    case DT_F16:
        return pt == 16 ? launch_row_bwd_pg2<__half, 16>(j, rows, D, threads, s)
                        : launch_row_bwd_pg2<__half, 32>(j, rows, D, threads, s);
    case DT_BF16:
        return pt == 16 ? launch_row_bwd_pg2<__nv_bfloat16, 16>(j, rows, D, threads, s)
                        : launch_row_bwd_pg2<__nv_bfloat16, 32>(j, rows, D, threads, s);
    default:
        return pt == 16 ? launch_row_bwd_pg2<float, 16>(j, rows, D, threads, s)
                        : launch_row_bwd_pg2<float, 32>(j, rows, D, threads, s);
    }
}
