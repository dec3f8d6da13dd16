// norm_group.cu — group norm / instance norm over packed NCHW x, where group
// (n, g) is one contiguous run of D = C/G * S elements, or packed NHWC
// (layout in src/gpu/kern_norm.h, ng_gn_job).  Planned by eng_norm.c with
// default since session 13 (XDNN_GROUPNORM_V2=0: norm.cu's generic split
// reduce, 0.590 ms forward, 1.285 ms backward for bf16 64x256x56x56 / 32
// groups, 12 % and 8 % of copy; here 0.109 and 0.150 ms, 63 % and 69 %).
// Variants:
//   forward, row (k_gn_row): one 512-thread block per group, the group held
//     in shared memory (<= NG_GN_ROW_BYTES): x read once; the mean, then
//     sum (x - mean)^2 over shared memory (the two passes of
//     src/ops/norm_group.c, in f32); y written once.
//   forward, split (k_gn_stats + k_gn_apply): few or long groups: nsplit
//     blocks a group, each a chunk: shifted sums per thread and Chan's
//     combination (norm_common.cuh, as norm.cu) -> part[row][split][4]; every
//     apply block combines its group's partials in one fixed order (warp 0:
//     strided by lane, then a shuffle tree; the same result in each), then
//     writes y of its chunk.
//   backward, row (k_gn_bwd_row): one 512-thread block per group, x and dy
//     held in shared memory (<= NG_GN_BWD_ROW_BYTES, read once): a warp per
//     channel sums dy and dy * xhat there (also -> part[n][c][2]), warp 0
//     the group's sum g = sum_c scale_c * sum dy and sum g xhat, then dx.
//   backward, split (k_gn_bwd_chan, k_gn_bwd_dx): a warp per (n, c) for its
//     two sums -> part[n][c][2]; then dx in the forward's chunks, each block
//     forming its group's two sums as above.
//   then (both) k_gn_bwd_pgrad: dscale_c / dbias_c = the sums over n in
//     order (deterministic: no atomics anywhere).
// 16-byte loads and stores when every group (backward: every channel) starts
// 16-byte aligned (j.vec and the pointers); else scalar loops.  NHWC (j.nhwc:
// a group is CG channels at each of S positions, C apart): the split paths'
// scalar loops only (gn_base / gn_at), the backward's channel sums C apart.
#include "norm_common.cuh"

#include <stdint.h>

namespace {

template <typename T>
struct gn_vec {
    static constexpr int V = 16 / (int)sizeof(T);
};

static inline bool gn_al16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

template <typename T>
__device__ __forceinline__ void gn_unpack(const uint4 &u, float (&f)[16 / sizeof(T)])
{
    const T *e = reinterpret_cast<const T *>(&u);
#pragma unroll
    for (int k = 0; k < 16 / (int)sizeof(T); k++)
        f[k] = to_f<T>(e[k]);
}

template <typename T>
__device__ __forceinline__ uint4 gn_pack(const float (&f)[16 / sizeof(T)])
{
    uint4 u;
    T *e = reinterpret_cast<T *>(&u);
#pragma unroll
    for (int k = 0; k < 16 / (int)sizeof(T); k++)
        e[k] = from_f<T>(f[k]);
    return u;
}

// v merged over the block (`warp` merges a warp's lanes by shuffles; then
// warp 0 merges the warps' results), to every thread.  sh: 32 elements;
// callable again at once (the first barrier keeps the last call's readers).
template <typename A, typename WARP>
__device__ __forceinline__ A gn_block_merge(A v, A *sh, A zero, WARP warp)
{
    warp(v);
    __syncthreads();
    if ((threadIdx.x & 31) == 0)
        sh[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < (blockDim.x >> 5) ? sh[threadIdx.x] : zero;
        warp(v);
        if (threadIdx.x == 0)
            sh[0] = v;
    }
    __syncthreads();
    return sh[0];
}

__device__ __forceinline__ float gn_block_sum(float v, float *sh)
{
    return gn_block_merge(v, sh, 0.f, [](float &u) {
        for (int m = 16; m > 0; m >>= 1)
            u += __shfl_xor_sync(0xffffffffu, u, m);
    });
}

// Welford partials (count, mean, M2), Chan's combination.
__device__ __forceinline__ acc4 gn_block_welford(acc4 a, acc4 *sh)
{
    return gn_block_merge(a, sh, acc4{{0.f, 0.f, 0.f, 0.f}}, [](acc4 &u) {
        for (int m = 16; m > 0; m >>= 1)
            acc_shfl<NGR_WELFORD>(u, m);
    });
}

// Per channel of group g: A[c] = scale * inv, B[c] = bias (y = (x - mean) * A + B).
__device__ __forceinline__ void gn_params(const ng_gn_job &j, int64_t g, float inv, float *A, float *B)
{
    for (int c = threadIdx.x; c < (int)j.CG; c += blockDim.x) {
        int64_t ch = g * j.CG + c;
        float sc = j.sc ? ldf(j.sc, ch * j.sc_st, j.sc_dt) : 1.f;
        A[c] = sc * inv;
        B[c] = j.bi ? ldf(j.bi, ch * j.bi_st, j.bi_dt) : 0.f;
    }
}

// y of the NV elements from i (the index in the group): the channel
// i / S once, then stepped (S may be below NV: 1x1 spatial).
template <int NV>
__device__ __forceinline__ void gn_y(float (&f)[NV], int i, int S, float mean, const float *A, const float *B,
                                     int act, int act_dt)
{
    int c = i / S, rem = i - c * S;
#pragma unroll
    for (int k = 0; k < NV; k++) {
        f[k] = act_f((f[k] - mean) * A[c] + B[c], act, act_dt);
        if (++rem == S)
            rem = 0, ++c;
    }
}

__device__ __forceinline__ void gn_store_stats(const ng_gn_job &j, int64_t row, float mean, float inv)
{
    if (j.mean)
        stf(j.mean, row, j.mean_dt, mean);
    if (j.inv)
        stf(j.inv, row, j.inv_dt, inv);
}

// Where group `row` starts in the x-shaped operands: NCHW row * D; NHWC
// (j.nhwc: channels last, packed) n * S * C + g * CG.
__device__ __forceinline__ int64_t gn_base(const ng_gn_job &j, int64_t row)
{
    return j.nhwc ? (row / j.G) * j.S * j.C + (row % j.G) * j.CG : row * j.D;
}

// Element i of a group: its offset from the group's base, and in *c its
// channel within the group.  NCHW: i, i / S; NHWC (i = s * CG + k): s * C + k,
// k.  The scalar loops only (NHWC takes no vectors).
__device__ __forceinline__ int64_t gn_at(const ng_gn_job &j, int i, int *c)
{
    if (!j.nhwc) {
        *c = i / (int)j.S;
        return i;
    }
    const int sp = i / (int)j.CG;
    *c = i - sp * (int)j.CG;
    return (int64_t)sp * j.C + *c;
}

// ---- forward, row: the group in shared memory (vec only: D % V == 0, aligned)
template <typename T>
__global__ void __launch_bounds__(NG_GN_ROW_THREADS) k_gn_row(const ng_gn_job j)
{
    extern __shared__ uint4 gn_dyn[];
    __shared__ float red[32];
    constexpr int V = gn_vec<T>::V;
    const int D = (int)j.D, nth = (int)blockDim.x;
    const int64_t row = blockIdx.x;
    uint4 *xs = gn_dyn;                                   // D / V chunks
    float *A = reinterpret_cast<float *>(gn_dyn + D / V), *B = A + j.CG;
    const uint4 *x = reinterpret_cast<const uint4 *>(static_cast<const T *>(j.x) + row * j.D);
    float s = 0.f;
    for (int v = threadIdx.x; v < D / V; v += nth) {
        uint4 u = x[v];
        xs[v] = u;
        float f[V];
        gn_unpack<T>(u, f);
#pragma unroll
        for (int k = 0; k < V; k++)
            s += f[k];
    }
    const float mean = gn_block_sum(s, red) / (float)D; // its barriers also publish xs
    float q = 0.f;
    for (int v = threadIdx.x; v < D / V; v += nth) {
        float f[V];
        gn_unpack<T>(xs[v], f);
#pragma unroll
        for (int k = 0; k < V; k++)
            q += (f[k] - mean) * (f[k] - mean);
    }
    const float inv = rsqrtf(gn_block_sum(q, red) / (float)D + j.eps);
    if (threadIdx.x == 0)
        gn_store_stats(j, row, mean, inv);
    gn_params(j, row % j.G, inv, A, B);
    __syncthreads();
    uint4 *y = reinterpret_cast<uint4 *>(static_cast<T *>(j.y) + row * j.D);
    for (int v = threadIdx.x; v < D / V; v += nth) {
        float f[V];
        gn_unpack<T>(xs[v], f);
        gn_y<V>(f, v * V, (int)j.S, mean, A, B, j.act, j.act_dt);
        y[v] = gn_pack<T>(f);
    }
}

// ---- forward, split: partial statistics of chunk blockIdx.y of group blockIdx.x
template <typename T, bool VEC>
__global__ void __launch_bounds__(NG_GN_THREADS) k_gn_stats(const ng_gn_job j)
{
    __shared__ acc4 sh[32];
    constexpr int V = gn_vec<T>::V;
    const int64_t row = blockIdx.x;
    const int q0 = (int)(blockIdx.y * j.chunk), q1 = (int)(q0 + j.chunk < j.D ? q0 + j.chunk : j.D);
    const T *x = static_cast<const T *>(j.x) + gn_base(j, row);
    acc4 a = {{0.f, 0.f, 0.f, 0.f}};
    if (VEC) {
        for (int i = q0 + (int)threadIdx.x * V; i < q1; i += (int)blockDim.x * V) {
            float f[V];
            gn_unpack<T>(*reinterpret_cast<const uint4 *>(x + i), f);
#pragma unroll
            for (int k = 0; k < V; k++)
                acc_x<NGR_WELFORD>(a, f[k]);
        }
    } else {
        for (int i = q0 + (int)threadIdx.x; i < q1; i += (int)blockDim.x) {
            int c;
            acc_x<NGR_WELFORD>(a, to_f<T>(x[gn_at(j, i, &c)]));
        }
    }
    acc_to_welford(a);
    a = gn_block_welford(a, sh);
    if (threadIdx.x == 0) {
        float *dst = j.part + (row * j.nsplit + blockIdx.y) * 4;
#pragma unroll
        for (int k = 0; k < 4; k++)
            dst[k] = a.v[k];
    }
}

// ---- forward, split: the group's partials combined (split order), y of the chunk
template <typename T, bool VEC>
__global__ void __launch_bounds__(NG_GN_THREADS) k_gn_apply(const ng_gn_job j)
{
    extern __shared__ uint4 gn_dyn[];
    __shared__ float mi[2];
    constexpr int V = gn_vec<T>::V;
    float *A = reinterpret_cast<float *>(gn_dyn), *B = A + j.CG;
    const int64_t row = blockIdx.x;
    if (threadIdx.x < 32) { // warp 0: lane l merges splits l, l + 32, ..., then the lanes' tree (lane 0's
                            // result is the same in every block of the group: the same order)
        acc4 a = {{0.f, 0.f, 0.f, 0.f}};
        for (int s = threadIdx.x; s < j.nsplit; s += 32) {
            const float *src = j.part + (row * j.nsplit + s) * 4;
            acc4 b = {{src[0], src[1], src[2], src[3]}};
            acc_merge<NGR_WELFORD>(a, b);
        }
        for (int m = 16; m > 0; m >>= 1)
            acc_shfl<NGR_WELFORD>(a, m);
        if (threadIdx.x == 0) {
            float var = a.v[0] > 0.f ? a.v[2] / a.v[0] : 0.f;
            mi[0] = a.v[1];
            mi[1] = rsqrtf(var + j.eps);
            if (blockIdx.y == 0)
                gn_store_stats(j, row, mi[0], mi[1]);
        }
    }
    __syncthreads();
    const float mean = mi[0];
    gn_params(j, row % j.G, mi[1], A, B);
    __syncthreads();
    const int q0 = (int)(blockIdx.y * j.chunk), q1 = (int)(q0 + j.chunk < j.D ? q0 + j.chunk : j.D), S = (int)j.S;
    const T *x = static_cast<const T *>(j.x) + gn_base(j, row);
    T *y = static_cast<T *>(j.y) + gn_base(j, row);
    if (VEC) {
        for (int i = q0 + (int)threadIdx.x * V; i < q1; i += (int)blockDim.x * V) {
            float f[V];
            gn_unpack<T>(*reinterpret_cast<const uint4 *>(x + i), f);
            gn_y<V>(f, i, S, mean, A, B, j.act, j.act_dt);
            *reinterpret_cast<uint4 *>(y + i) = gn_pack<T>(f);
        }
    } else {
        for (int i = q0 + (int)threadIdx.x; i < q1; i += (int)blockDim.x) {
            int c;
            const int64_t o = gn_at(j, i, &c);
            float f[1] = {to_f<T>(x[o])};
            gn_y<1>(f, c, 1, mean, A, B, j.act, j.act_dt); // element c of "S = 1": channel c
            y[o] = from_f<T>(f[0]);
        }
    }
}

// The sums of a and b over the warp (xor tree: every lane the same).
__device__ __forceinline__ void gn_warp_sum2(float &a, float &b)
{
    for (int k = 16; k > 0; k >>= 1) {
        a += __shfl_xor_sync(0xffffffffu, a, k);
        b += __shfl_xor_sync(0xffffffffu, b, k);
    }
}

// A lane's part of a channel's sum dy and sum dy * xhat: elements lane,
// lane + 32, ... of its S, `st` apart (scalar loads; NHWC: C).
template <typename T>
__device__ __forceinline__ void gn_chan_sums(const T *x, const T *dy, int S, int64_t st, int lane, float m, float iv,
                                             float &sd, float &sdx)
{
    for (int i = lane; i < S; i += 32) {
        float fd = to_f<T>(dy[i * st]);
        sd += fd;
        sdx += fd * ((to_f<T>(x[i * st]) - m) * iv);
    }
}

// Warp 0: the group's sum g = sum_c scale_c * sum dy and sum g xhat from its
// channels' pairs p[c][2] (fixed lanes: deterministic) into sums[2].
__device__ __forceinline__ void gn_group_sums(const float *A, const float *p, int CG, float *sums)
{
    if (threadIdx.x >= 32)
        return;
    float sg = 0.f, sgx = 0.f;
    for (int c = threadIdx.x; c < CG; c += 32) {
        sg += A[c] * p[2 * c];
        sgx += A[c] * p[2 * c + 1];
    }
    gn_warp_sum2(sg, sgx);
    if (threadIdx.x == 0)
        sums[0] = sg, sums[1] = sgx;
}

// dx of the NV elements from i (fd: dy in, dx out), the channel stepped as
// gn_y; as norm.cu's k_apply: dx = inv / D * (D g - sum g - xhat sum g xhat),
// g = dy * scale.
template <int NV>
__device__ __forceinline__ void gn_dx(const float (&fx)[NV], float (&fd)[NV], int i, int S, float m, float iv, float Df,
                                      const float *A, float sg, float sgx)
{
    int c = i / S, rem = i - c * S;
#pragma unroll
    for (int k = 0; k < NV; k++) {
        float xhat = (fx[k] - m) * iv;
        fd[k] = iv / Df * (Df * (fd[k] * A[c]) - sg - xhat * sgx);
        if (++rem == S)
            rem = 0, ++c;
    }
}

// ---- backward: a warp per (n, c): sum dy, sum dy * xhat over the S elements
template <typename T, bool VEC>
__global__ void __launch_bounds__(NG_GN_THREADS) k_gn_bwd_chan(const ng_gn_job j)
{
    constexpr int V = gn_vec<T>::V;
    const int64_t nc = (int64_t)blockIdx.x * (NG_GN_THREADS / 32) + (threadIdx.x >> 5);
    const int lane = threadIdx.x & 31, S = (int)j.S;
    if (nc >= j.N * j.C) // the whole warp: no block barrier below
        return;
    const int64_t n = nc / j.C, c = nc - n * j.C, row = n * j.G + c / j.CG;
    const float m = ldf(j.mean, row, j.mean_dt), iv = ldf(j.inv, row, j.inv_dt);
    const int64_t cb = j.nhwc ? n * j.S * j.C + c : nc * j.S; // the channel's first element (NHWC: then C apart)
    const T *x = static_cast<const T *>(j.x) + cb, *dy = static_cast<const T *>(j.dy) + cb;
    float sd = 0.f, sdx = 0.f;
    if (VEC) {
        for (int i = lane * V; i < S; i += 32 * V) {
            float fx[V], fd[V];
            gn_unpack<T>(*reinterpret_cast<const uint4 *>(x + i), fx);
            gn_unpack<T>(*reinterpret_cast<const uint4 *>(dy + i), fd);
#pragma unroll
            for (int k = 0; k < V; k++) {
                sd += fd[k];
                sdx += fd[k] * ((fx[k] - m) * iv);
            }
        }
    } else {
        gn_chan_sums<T>(x, dy, S, j.nhwc ? j.C : 1, lane, m, iv, sd, sdx);
    }
    gn_warp_sum2(sd, sdx);
    if (lane == 0) {
        j.part[nc * 2] = sd;
        j.part[nc * 2 + 1] = sdx;
    }
}

// ---- backward: dx of chunk blockIdx.y of group blockIdx.x
template <typename T, bool VEC>
__global__ void __launch_bounds__(NG_GN_THREADS) k_gn_bwd_dx(const ng_gn_job j)
{
    extern __shared__ uint4 gn_dyn[];
    __shared__ float sums[2];
    constexpr int V = gn_vec<T>::V;
    float *A = reinterpret_cast<float *>(gn_dyn); // scale per channel of the group
    const int64_t row = blockIdx.x, n = row / j.G, g = row - n * j.G;
    for (int c = threadIdx.x; c < (int)j.CG; c += blockDim.x) {
        int64_t ch = g * j.CG + c;
        A[c] = j.sc ? ldf(j.sc, ch * j.sc_st, j.sc_dt) : 1.f;
    }
    __syncthreads();
    gn_group_sums(A, j.part + (n * j.C + g * j.CG) * 2, (int)j.CG, sums);
    __syncthreads();
    const float m = ldf(j.mean, row, j.mean_dt), iv = ldf(j.inv, row, j.inv_dt), Df = (float)j.D;
    const float sg = sums[0], sgx = sums[1];
    const int q0 = (int)(blockIdx.y * j.chunk), q1 = (int)(q0 + j.chunk < j.D ? q0 + j.chunk : j.D), S = (int)j.S;
    const int64_t base = gn_base(j, row);
    const T *x = static_cast<const T *>(j.x) + base, *dy = static_cast<const T *>(j.dy) + base;
    T *dx = static_cast<T *>(j.dx) + base;
    if (VEC) {
        for (int i = q0 + (int)threadIdx.x * V; i < q1; i += (int)blockDim.x * V) {
            float fx[V], fd[V];
            gn_unpack<T>(*reinterpret_cast<const uint4 *>(x + i), fx);
            gn_unpack<T>(*reinterpret_cast<const uint4 *>(dy + i), fd);
            gn_dx<V>(fx, fd, i, S, m, iv, Df, A, sg, sgx);
            *reinterpret_cast<uint4 *>(dx + i) = gn_pack<T>(fd);
        }
    } else {
        for (int i = q0 + (int)threadIdx.x; i < q1; i += (int)blockDim.x) {
            int c;
            const int64_t o = gn_at(j, i, &c);
            float fx[1] = {to_f<T>(x[o])}, fd[1] = {to_f<T>(dy[o])};
            gn_dx<1>(fx, fd, c, 1, m, iv, Df, A, sg, sgx); // as gn_y<1>: channel c
            dx[o] = from_f<T>(fd[0]);
        }
    }
}

// ---- backward, row: x and dy of the group in shared memory (vec only): read
// once; a warp per channel sums dy and dy * xhat over its S elements there
// (part[n][c][2] too, for k_gn_bwd_pgrad), warp 0 the group's sum g and
// sum g xhat, then dx from shared memory.
template <typename T>
__global__ void __launch_bounds__(NG_GN_ROW_THREADS) k_gn_bwd_row(const ng_gn_job j)
{
    extern __shared__ uint4 gn_dyn[];
    __shared__ float sums[2];
    constexpr int V = gn_vec<T>::V;
    const int D = (int)j.D, S = (int)j.S, CG = (int)j.CG, nth = (int)blockDim.x;
    const int64_t row = blockIdx.x, n = row / j.G, g = row - n * j.G;
    uint4 *xs = gn_dyn, *ds = gn_dyn + D / V;
    float *A = reinterpret_cast<float *>(ds + D / V), *P = A + CG; // scale a channel; its two sums
    const uint4 *x = reinterpret_cast<const uint4 *>(static_cast<const T *>(j.x) + row * j.D);
    const uint4 *dy = reinterpret_cast<const uint4 *>(static_cast<const T *>(j.dy) + row * j.D);
    for (int v = threadIdx.x; v < D / V; v += nth) {
        xs[v] = x[v];
        ds[v] = dy[v];
    }
    for (int c = threadIdx.x; c < CG; c += nth)
        A[c] = j.sc ? ldf(j.sc, (g * j.CG + c) * j.sc_st, j.sc_dt) : 1.f;
    const float m = ldf(j.mean, row, j.mean_dt), iv = ldf(j.inv, row, j.inv_dt), Df = (float)j.D;
    __syncthreads();
    const T *xe = reinterpret_cast<const T *>(xs), *de = reinterpret_cast<const T *>(ds);
    const int lane = threadIdx.x & 31;
    for (int c = threadIdx.x >> 5; c < CG; c += nth >> 5) { // whole warps: the shuffles are full
        float sd = 0.f, sdx = 0.f;
        gn_chan_sums<T>(xe + c * S, de + c * S, S, 1, lane, m, iv, sd, sdx);
        gn_warp_sum2(sd, sdx);
        if (lane == 0) {
            P[2 * c] = sd, P[2 * c + 1] = sdx;
            float *pp = j.part + (n * j.C + g * j.CG + c) * 2;
            pp[0] = sd, pp[1] = sdx;
        }
    }
    __syncthreads();
    gn_group_sums(A, P, CG, sums);
    __syncthreads();
    const float sg = sums[0], sgx = sums[1];
    uint4 *dx = reinterpret_cast<uint4 *>(static_cast<T *>(j.dx) + row * j.D);
    for (int v = threadIdx.x; v < D / V; v += nth) {
        float fx[V], fd[V];
        gn_unpack<T>(xs[v], fx);
        gn_unpack<T>(ds[v], fd);
        gn_dx<V>(fx, fd, v * V, S, m, iv, Df, A, sg, sgx);
        dx[v] = gn_pack<T>(fd);
    }
}

// ---- backward: dscale_c / dbias_c, the channel's sums over n in order
// (pg_one: one dscale / dbias for every channel, a one-element scale:
// thread 0 sums them all, channel by channel)
__global__ void __launch_bounds__(NG_GN_THREADS) k_gn_bwd_pgrad(const ng_gn_job j)
{
    const int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j.pg_one ? c != 0 : c >= j.C)
        return;
    const int64_t c1 = j.pg_one ? j.C : c + 1;
    float sd = 0.f, sdx = 0.f;
    for (int64_t cc = j.pg_one ? 0 : c; cc < c1; cc++)
        for (int64_t n = 0; n < j.N; n++) {
            sd += j.part[(n * j.C + cc) * 2];
            sdx += j.part[(n * j.C + cc) * 2 + 1];
        }
    if (j.dsc)
        stf(j.dsc, c * j.dsc_st, j.dsc_dt, sdx);
    if (j.dbi)
        stf(j.dbi, c * j.dbi_st, j.dbi_dt, sd);
}

// Dynamic shared memory over 48 KB needs the opt-in: once per kernel, for
// the most its path asks (most), so every later size fits under it.  False
// (the error cleared) where the device allows less: the row paths then take
// the split ones.
template <typename K>
static bool gn_smem(K k, size_t bytes, size_t most, bool &done)
{
    if (bytes <= 48 * 1024 || done)
        return true;
    if (cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)most) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    done = true;
    return true;
}

enum : size_t { GN_PAR_MOST = (size_t)NG_GN_MAX_CG * 2 * sizeof(float) };

template <typename T>
static int gn_fwd(const ng_gn_job *j, cudaStream_t s)
{
    const bool vec = j->vec && gn_al16(j->x) && gn_al16(j->y);
    const size_t pbytes = (size_t)j->CG * 2 * sizeof(float);
    static bool opt_row;
    const size_t row_bytes = (size_t)j->D * sizeof(T) + pbytes; // the plan: <= NG_GN_ROW_BYTES
    if (j->row_smem && vec && gn_smem(k_gn_row<T>, row_bytes, NG_GN_ROW_BYTES, opt_row)) {
        k_gn_row<T><<<(unsigned)j->rows, NG_GN_ROW_THREADS, row_bytes, s>>>(*j);
        return (int)cudaGetLastError();
    }
    // the split path (also a row plan whose pointers are not 16-byte aligned: the plan sized part for it)
    static bool opt[2];
    const dim3 grid((unsigned)j->rows, (unsigned)j->nsplit);
    if (vec) {
        if (!gn_smem(k_gn_apply<T, true>, pbytes, GN_PAR_MOST, opt[0]))
            return (int)cudaErrorInvalidConfiguration; // the device's opt-in is under 64 KB
        k_gn_stats<T, true><<<grid, NG_GN_THREADS, 0, s>>>(*j);
        k_gn_apply<T, true><<<grid, NG_GN_THREADS, pbytes, s>>>(*j);
    } else {
        if (!gn_smem(k_gn_apply<T, false>, pbytes, GN_PAR_MOST, opt[1]))
            return (int)cudaErrorInvalidConfiguration;
        k_gn_stats<T, false><<<grid, NG_GN_THREADS, 0, s>>>(*j);
        k_gn_apply<T, false><<<grid, NG_GN_THREADS, pbytes, s>>>(*j);
    }
    return (int)cudaGetLastError();
}

// The backward's three launches: the channels' sums, dx by chunks (its pgrad: the caller's).
template <typename T>
static int gn_bwd_split(const ng_gn_job *j, bool vec_c, bool vec, cudaStream_t s)
{
    const size_t pbytes = (size_t)j->CG * sizeof(float);
    const int64_t nc = j->N * j->C, wpb = NG_GN_THREADS / 32;
    const unsigned cblocks = (unsigned)((nc + wpb - 1) / wpb);
    if (vec_c)
        k_gn_bwd_chan<T, true><<<cblocks, NG_GN_THREADS, 0, s>>>(*j);
    else
        k_gn_bwd_chan<T, false><<<cblocks, NG_GN_THREADS, 0, s>>>(*j);
    static bool opt[2];
    const dim3 grid((unsigned)j->rows, (unsigned)j->nsplit);
    if (vec) {
        if (!gn_smem(k_gn_bwd_dx<T, true>, pbytes, GN_PAR_MOST, opt[0]))
            return (int)cudaErrorInvalidConfiguration; // the device's opt-in is under 64 KB
        k_gn_bwd_dx<T, true><<<grid, NG_GN_THREADS, pbytes, s>>>(*j);
    } else {
        if (!gn_smem(k_gn_bwd_dx<T, false>, pbytes, GN_PAR_MOST, opt[1]))
            return (int)cudaErrorInvalidConfiguration;
        k_gn_bwd_dx<T, false><<<grid, NG_GN_THREADS, pbytes, s>>>(*j);
    }
    return 0;
}

template <typename T>
static int gn_bwd(const ng_gn_job *j, cudaStream_t s)
{
    const bool al = gn_al16(j->x) && gn_al16(j->dy) && gn_al16(j->dx);
    const bool vec_c = al && !j->nhwc && j->S % gn_vec<T>::V == 0, vec = al && j->vec;
    const size_t pbytes = (size_t)j->CG * sizeof(float);
    static bool opt_row;
    const size_t row_bytes = (size_t)j->D * sizeof(T) * 2 + pbytes * 3; // the plan: <= NG_GN_BWD_ROW_BYTES
    // (a row plan whose pointers are not 16-byte aligned takes the split: part is sized for it)
    if (j->row_smem && vec && gn_smem(k_gn_bwd_row<T>, row_bytes, NG_GN_BWD_ROW_BYTES, opt_row)) {
        k_gn_bwd_row<T><<<(unsigned)j->rows, NG_GN_ROW_THREADS, row_bytes, s>>>(*j);
    } else if (int e = gn_bwd_split<T>(j, vec_c, vec, s)) {
        return e;
    }
    if (j->dsc || j->dbi)
        k_gn_bwd_pgrad<<<(unsigned)((j->C + NG_GN_THREADS - 1) / NG_GN_THREADS), NG_GN_THREADS, 0, s>>>(*j);
    return (int)cudaGetLastError();
}

} // namespace

extern "C" int ng_launch_gn_fwd(const ng_gn_job *j, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (j->rows <= 0 || j->D <= 0)
        return 0;
    switch (j->dt) {
    case DT_F16: return gn_fwd<__half>(j, s);
    case DT_BF16: return gn_fwd<__nv_bfloat16>(j, s);
    default: return gn_fwd<float>(j, s);
    }
}

extern "C" int ng_launch_gn_bwd(const ng_gn_job *j, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (j->rows <= 0 || j->D <= 0)
        return 0;
    switch (j->dt) {
    case DT_F16: return gn_bwd<__half>(j, s);
    case DT_BF16: return gn_bwd<__nv_bfloat16>(j, s);
    default: return gn_bwd<float>(j, s);
    }
}
