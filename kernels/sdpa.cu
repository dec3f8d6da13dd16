// sdpa.cu — scaled dot-product attention kernels (host side: src/gpu/eng_sdpa.c,
// semantics: src/ops/sdpa.h — mask rule, GQA, bias broadcast, dropout stream).
//
//  sdpa_fwd_rows  one warp per query row, f32 math, online softmax over the
//                 visible key range; any D, Dv <= 256 and any float dtypes.
//  sdpa_fwd_mma   flash-attention-2 style: a block of 4 warps owns 64 query
//                 rows, streams 64-key tiles of K and V through two cp.async
//                 stages, S = Q K^T and O += P V on mma.sync m16n8k16 tensor
//                 cores (f16/bf16 in, f32 accumulate; V fragments by
//                 ldmatrix.trans), online softmax in registers (exp2 domain),
//                 per-element masks only on tiles that cross a boundary;
//                 D == Dv in {64, 128}.
//  sdpa_bwd_rows  two passes, no atomics: (1) one warp per query row: Delta =
//                 do.o and dq; (2) one warp per key row: dk, dv summed over
//                 every query head of its kv group and every visible row.
//                 P is recomputed from the forward's stats (logsumexp).
// Dropout: keep iff philox(seed, 0x73647061, ((b*Hq+h)*Sq+i)*Skv+j) >> 8 >=
// ceil(p * 2^24), i.e. uniform01 >= p exactly as the CPU reference decides.
#include "gpu/kern_sdpa.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math_constants.h>
#include <stdint.h>

namespace {

constexpr uint64_t kDropStream = 0x73647061ull;

__device__ __forceinline__ float ld_any(const void *p, int dt, int64_t i)
{
    switch (dt) {
    case XK_F16: return __half2float(static_cast<const __half *>(p)[i]);
    case XK_BF16: return __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[i]);
    case XK_I32: return (float)static_cast<const int32_t *>(p)[i];
    case XK_I64: return (float)static_cast<const long long *>(p)[i];
    case XK_F64: return (float)static_cast<const double *>(p)[i];
    default: return static_cast<const float *>(p)[i];
    }
}

__device__ __forceinline__ void st_any(const void *p, int dt, int64_t i, float v)
{
    void *q = const_cast<void *>(p);
    switch (dt) {
    case XK_F16: static_cast<__half *>(q)[i] = __float2half_rn(v); break;
    case XK_BF16: static_cast<__nv_bfloat16 *>(q)[i] = __float2bfloat16_rn(v); break;
    case XK_F64: static_cast<double *>(q)[i] = (double)v; break;
    default: static_cast<float *>(q)[i] = v; break;
    }
}

__device__ __forceinline__ int64_t off4(const xk_tensor &t, int64_t a, int64_t b, int64_t c, int64_t d)
{
    return a * t.st[0] + b * t.st[1] + c * t.st[2] + d * t.st[3];
}

// Philox-4x32-10, first output word (src/data/philox.c has the recipe).
__device__ __forceinline__ uint32_t philox_word0(uint64_t seed, uint64_t stream, uint64_t index)
{
    uint32_t c0 = (uint32_t)index, c1 = (uint32_t)(index >> 32), c2 = (uint32_t)stream, c3 = (uint32_t)(stream >> 32);
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
#pragma unroll
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        uint32_t hi0 = __umulhi(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
        uint32_t hi1 = __umulhi(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
        uint32_t n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
        c0 = n0;
        c1 = lo1;
        c2 = n2;
        c3 = lo0;
    }
    return c0;
}

// Dropout factor of probability (b, h, i, j): 0, 1/(1-p), or 1 without dropout.
__device__ __forceinline__ float drop_factor(const xk_sdpa &p, int b, int h, int i, int j)
{
    if (p.drop_threshold == 0)
        return 1.0f;
    uint64_t idx = (((uint64_t)b * p.Hq + h) * p.Sq + i) * (uint64_t)p.Skv + j;
    return (philox_word0(p.seed, kDropStream, idx) >> 8) >= p.drop_threshold ? p.drop_scale : 0.0f;
}

__device__ __forceinline__ int seq_len(const xk_tensor &t, int b, int full)
{
    if (!t.p)
        return full;
    int v = (int)ld_any(t.p, t.dtype, (int64_t)b * t.st[0]);
    return v < 0 ? 0 : v > full ? full : v;
}

// The diagonal of row i (sdpa.h): i, or i + Lkv - Lq for bottom_right.
__device__ __forceinline__ int diag_of(const xk_sdpa &p, int i, int lq, int lkv)
{
    return p.bottom_right ? i + lkv - lq : i;
}

__device__ __forceinline__ bool visible(const xk_sdpa &p, int lq, int lkv, int i, int j)
{
    if (i >= lq || j >= lkv || j < 0)
        return false;
    int diag = diag_of(p, i, lq, lkv);
    if (p.left >= 0 && j < diag - p.left)
        return false;
    if (p.right >= 0 && j > diag + p.right)
        return false;
    return true;
}

// Keys [*lo, *hi) that row i may see.
__device__ __forceinline__ void key_range(const xk_sdpa &p, int lq, int lkv, int i, int *lo, int *hi)
{
    *lo = 0;
    *hi = i < lq ? lkv : 0;
    if (i >= lq)
        return;
    int diag = diag_of(p, i, lq, lkv);
    if (p.left >= 0)
        *lo = max(*lo, diag - p.left);
    if (p.right >= 0)
        *hi = min(*hi, diag + p.right + 1);
}

// Rows [*lo, *hi) that may see key j.
__device__ __forceinline__ void row_range(const xk_sdpa &p, int lq, int lkv, int j, int *lo, int *hi)
{
    *lo = 0;
    *hi = j < lkv ? lq : 0;
    if (j >= lkv)
        return;
    int off = p.bottom_right ? lkv - lq : 0; // diag = i + off; visible iff diag-left <= j <= diag+right
    if (p.right >= 0)
        *lo = max(*lo, j - p.right - off);
    if (p.left >= 0)
        *hi = min(*hi, j + p.left - off + 1);
}

__device__ __forceinline__ float bias_at(const xk_sdpa &p, int b, int h, int i, int j)
{
    return p.bias.p ? ld_any(p.bias.p, p.bias.dtype, off4(p.bias, b, h, i, j)) : 0.0f;
}

__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return __shfl_sync(0xffffffffu, v, 0); // identical in every lane
}

// ---------------------------------------------------------------- row kernels

// Forward, one warp per (b, h, i); lane owns columns lane + 32 c.
template <int NC>
__global__ void __launch_bounds__(128) sdpa_fwd_rows(xk_sdpa p)
{
    int64_t row = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (row >= (int64_t)p.B * p.Hq * p.Sq)
        return;
    int i = (int)(row % p.Sq), h = (int)((row / p.Sq) % p.Hq), b = (int)(row / ((int64_t)p.Sq * p.Hq));
    int hk = h / (p.Hq / p.Hk);
    int lq = seq_len(p.len_q, b, p.Sq), lkv = seq_len(p.len_kv, b, p.Skv);
    float q[NC], acc[NC];
#pragma unroll
    for (int c = 0; c < NC; c++) {
        int d = lane + 32 * c;
        q[c] = d < p.D ? ld_any(p.q.p, p.q.dtype, off4(p.q, b, h, i, d)) : 0.0f;
        acc[c] = 0.0f;
    }
    float m = -CUDART_INF_F, l = 0.0f;
    int lo, hi;
    key_range(p, lq, lkv, i, &lo, &hi);
    for (int j = lo; j < hi; j++) {
        float dot = 0.0f;
#pragma unroll
        for (int c = 0; c < NC; c++) {
            int d = lane + 32 * c;
            if (d < p.D)
                dot += q[c] * ld_any(p.k.p, p.k.dtype, off4(p.k, b, hk, j, d));
        }
        float s = warp_sum(dot) * p.scale + bias_at(p, b, h, i, j);
        if (s == -CUDART_INF_F)
            continue;
        float mn = fmaxf(m, s);
        float corr = expf(m - mn), e = expf(s - mn);
        l = l * corr + e;
        float pe = e * drop_factor(p, b, h, i, j);
#pragma unroll
        for (int c = 0; c < NC; c++) {
            int d = lane + 32 * c;
            float v = d < p.Dv ? ld_any(p.v.p, p.v.dtype, off4(p.v, b, hk, j, d)) : 0.0f;
            acc[c] = acc[c] * corr + pe * v;
        }
        m = mn;
    }
    bool empty = m == -CUDART_INF_F || !(l > 0.0f);
    float inv = empty ? 0.0f : 1.0f / l;
#pragma unroll
    for (int c = 0; c < NC; c++) {
        int d = lane + 32 * c;
        if (d < p.Dv)
            st_any(p.o.p, p.o.dtype, off4(p.o, b, h, i, d), empty ? 0.0f : acc[c] * inv);
    }
    if (lane == 0 && p.stats.p)
        st_any(p.stats.p, p.stats.dtype, off4(p.stats, b, h, i, 0), empty ? -CUDART_INF_F : m + logf(l));
}

// Backward pass 1: Delta_i = do_i . o_i and dq_i, one warp per (b, h, i).
template <int NC>
__global__ void __launch_bounds__(128) sdpa_bwd_dq_rows(xk_sdpa p)
{
    int64_t row = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (row >= (int64_t)p.B * p.Hq * p.Sq)
        return;
    int i = (int)(row % p.Sq), h = (int)((row / p.Sq) % p.Hq), b = (int)(row / ((int64_t)p.Sq * p.Hq));
    int hk = h / (p.Hq / p.Hk);
    int lq = seq_len(p.len_q, b, p.Sq), lkv = seq_len(p.len_kv, b, p.Skv);
    float q[NC], dO[NC], dq[NC], part = 0.0f;
#pragma unroll
    for (int c = 0; c < NC; c++) {
        int d = lane + 32 * c;
        q[c] = d < p.D ? ld_any(p.q.p, p.q.dtype, off4(p.q, b, h, i, d)) : 0.0f;
        dO[c] = d < p.Dv ? ld_any(p.dout.p, p.dout.dtype, off4(p.dout, b, h, i, d)) : 0.0f;
        if (d < p.Dv)
            part += dO[c] * ld_any(p.o.p, p.o.dtype, off4(p.o, b, h, i, d));
        dq[c] = 0.0f;
    }
    float delta = warp_sum(part);
    if (lane == 0)
        p.delta[row] = delta;
    float lse = ld_any(p.stats.p, p.stats.dtype, off4(p.stats, b, h, i, 0));
    int lo, hi;
    key_range(p, lq, lkv, i, &lo, &hi);
    for (int j = lo; j < hi; j++) {
        float dot = 0.0f, dpp = 0.0f;
#pragma unroll
        for (int c = 0; c < NC; c++) {
            int d = lane + 32 * c;
            if (d < p.D)
                dot += q[c] * ld_any(p.k.p, p.k.dtype, off4(p.k, b, hk, j, d));
            if (d < p.Dv)
                dpp += dO[c] * ld_any(p.v.p, p.v.dtype, off4(p.v, b, hk, j, d));
        }
        float s = warp_sum(dot) * p.scale + bias_at(p, b, h, i, j);
        float dp = warp_sum(dpp);
        if (s == -CUDART_INF_F)
            continue;
        float pr = expf(s - lse), f = drop_factor(p, b, h, i, j);
        float ds = pr * (f * dp - delta) * p.scale;
#pragma unroll
        for (int c = 0; c < NC; c++) {
            int d = lane + 32 * c;
            if (d < p.D)
                dq[c] += ds * ld_any(p.k.p, p.k.dtype, off4(p.k, b, hk, j, d));
        }
    }
#pragma unroll
    for (int c = 0; c < NC; c++) {
        int d = lane + 32 * c;
        if (d < p.D)
            st_any(p.dq.p, p.dq.dtype, off4(p.dq, b, h, i, d), dq[c]);
    }
}

// Backward pass 2: dk_j and dv_j of one kv head, one warp per (b, hk, j),
// summed over the query heads of the group and their visible rows.
template <int NC>
__global__ void __launch_bounds__(128) sdpa_bwd_dkdv_rows(xk_sdpa p)
{
    int64_t row = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (row >= (int64_t)p.B * p.Hk * p.Skv)
        return;
    int j = (int)(row % p.Skv), hk = (int)((row / p.Skv) % p.Hk), b = (int)(row / ((int64_t)p.Skv * p.Hk));
    int group = p.Hq / p.Hk;
    int lq = seq_len(p.len_q, b, p.Sq), lkv = seq_len(p.len_kv, b, p.Skv);
    float k[NC], v[NC], dk[NC], dv[NC];
#pragma unroll
    for (int c = 0; c < NC; c++) {
        int d = lane + 32 * c;
        k[c] = d < p.D ? ld_any(p.k.p, p.k.dtype, off4(p.k, b, hk, j, d)) : 0.0f;
        v[c] = d < p.Dv ? ld_any(p.v.p, p.v.dtype, off4(p.v, b, hk, j, d)) : 0.0f;
        dk[c] = dv[c] = 0.0f;
    }
    int lo, hi;
    row_range(p, lq, lkv, j, &lo, &hi);
    for (int h = hk * group; h < (hk + 1) * group; h++) {
        for (int i = lo; i < hi; i++) {
            float dot = 0.0f, dpp = 0.0f;
#pragma unroll
            for (int c = 0; c < NC; c++) {
                int d = lane + 32 * c;
                if (d < p.D)
                    dot += k[c] * ld_any(p.q.p, p.q.dtype, off4(p.q, b, h, i, d));
                if (d < p.Dv)
                    dpp += v[c] * ld_any(p.dout.p, p.dout.dtype, off4(p.dout, b, h, i, d));
            }
            float s = warp_sum(dot) * p.scale + bias_at(p, b, h, i, j);
            float dp = warp_sum(dpp);
            if (s == -CUDART_INF_F)
                continue;
            int64_t r = ((int64_t)b * p.Hq + h) * p.Sq + i;
            float lse = ld_any(p.stats.p, p.stats.dtype, off4(p.stats, b, h, i, 0));
            float pr = expf(s - lse), f = drop_factor(p, b, h, i, j);
            float ds = pr * (f * dp - p.delta[r]) * p.scale, pf = pr * f;
#pragma unroll
            for (int c = 0; c < NC; c++) {
                int d = lane + 32 * c;
                if (d < p.D)
                    dk[c] += ds * ld_any(p.q.p, p.q.dtype, off4(p.q, b, h, i, d));
                if (d < p.Dv)
                    dv[c] += pf * ld_any(p.dout.p, p.dout.dtype, off4(p.dout, b, h, i, d));
            }
        }
    }
#pragma unroll
    for (int c = 0; c < NC; c++) {
        int d = lane + 32 * c;
        if (d < p.D)
            st_any(p.dk.p, p.dk.dtype, off4(p.dk, b, hk, j, d), dk[c]);
        if (d < p.Dv)
            st_any(p.dv.p, p.dv.dtype, off4(p.dv, b, hk, j, d), dv[c]);
    }
}

// ---------------------------------------------------------------- tensor-core forward

template <typename T> struct mma_t;
template <> struct mma_t<__half> {
    static __device__ __forceinline__ void run(float *c, const uint32_t *a, const uint32_t *b)
    {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
    static __device__ __forceinline__ uint32_t pack(float lo, float hi)
    {
        __half2 v = __floats2half2_rn(lo, hi);
        return *reinterpret_cast<uint32_t *>(&v);
    }
    static __device__ __forceinline__ __half from(float x) { return __float2half_rn(x); }
    static __device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
};
template <> struct mma_t<__nv_bfloat16> {
    static __device__ __forceinline__ void run(float *c, const uint32_t *a, const uint32_t *b)
    {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
    static __device__ __forceinline__ uint32_t pack(float lo, float hi)
    {
        __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
        return *reinterpret_cast<uint32_t *>(&v);
    }
    static __device__ __forceinline__ __nv_bfloat16 from(float x) { return __float2bfloat16_rn(x); }
    static __device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
};

// Copy rows [r0, r0 + R) x [0, D) of (b, h) into shared memory (row stride
// lds), zero-filling rows >= nrows.  `vec` (contiguous last dim, 16-byte
// aligned rows): 16-byte cp.async copies that complete at the next
// cp_async_wait(); otherwise plain element loads and stores.
__device__ __forceinline__ void cp_async16(void *smem, const void *gmem, bool valid)
{
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    int n = valid ? 16 : 0; // 0: no global read, the 16 bytes are zero-filled
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(n));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group 0;\n" ::); }

template <typename T, int R, int D>
__device__ __forceinline__ void load_tile(T *sm, int lds, const xk_tensor &t, int b, int h, int r0, int nrows,
                                          bool vec)
{
    const T *base = static_cast<const T *>(t.p) + (int64_t)b * t.st[0] + (int64_t)h * t.st[1];
    constexpr int CH = D / 8; // chunks of 8 per row
    for (int idx = threadIdx.x; idx < R * CH; idx += blockDim.x) {
        int r = idx / CH, c8 = (idx % CH) * 8;
        int gr = r0 + r;
        if (vec) {
            const T *src = gr < nrows ? base + (int64_t)gr * t.st[2] + c8 : base;
            cp_async16(sm + r * lds + c8, src, gr < nrows);
            continue;
        }
        T vals[8];
        if (gr < nrows) {
            const T *src = base + (int64_t)gr * t.st[2];
#pragma unroll
            for (int e = 0; e < 8; e++)
                vals[e] = src[(int64_t)(c8 + e) * t.st[3]];
        } else {
#pragma unroll
            for (int e = 0; e < 8; e++)
                vals[e] = mma_t<T>::from(0.0f);
        }
        *reinterpret_cast<uint4 *>(sm + r * lds + c8) = *reinterpret_cast<uint4 *>(vals);
    }
}

constexpr int kBM = 64, kBN = 64;
constexpr float kLog2e = 1.4426950408889634f, kLn2 = 0.6931471805599453f;

template <int D> constexpr int mma_smem_bytes() { return (kBM + 4 * kBN) * (D + 8) * 2; }

// One block: 4 warps x 16 query rows.  Shared memory (dynamic): Q, then two
// stages of K and V (row-major, rows padded by 8 elements so fragment reads
// hit 32 different banks).  Tile n+1 streams in with cp.async while tile n
// is multiplied.  Softmax runs in the log2 domain (exp2).
// SPLIT: P goes to the tensor cores as hi + lo 16-bit parts (two P V
// products) so an f32 o keeps ~16 bits of P instead of 8 or 11.
template <typename T, int D, bool SPLIT>
__global__ void __launch_bounds__(128) sdpa_fwd_mma(xk_sdpa p, int vec_q, int vec_k, int vec_v)
{
    constexpr int LD = D + 8;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *Qs = reinterpret_cast<T *>(smem_raw);
    // stage st: K at Qs + (kBM + st * kBN) * LD, V at Qs + (kBM + (2 + st) * kBN) * LD
#define XK_KS(st) (Qs + (kBM + (st) * kBN) * LD)
#define XK_VS(st) (Qs + (kBM + (2 + (st)) * kBN) * LD)
    const int bh = blockIdx.y, b = bh / p.Hq, h = bh % p.Hq, hk = h / (p.Hq / p.Hk);
    const int m0 = blockIdx.x * kBM;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t4 = lane & 3;
    const int lq = seq_len(p.len_q, b, p.Sq), lkv = seq_len(p.len_kv, b, p.Skv);
    const float scale2 = p.scale * kLog2e;

    // Keys any row of this block may see.
    int jlo = p.Skv, jhi = 0;
    for (int r = 0; r < kBM; r++) {
        int lo, hi;
        key_range(p, lq, lkv, m0 + r, &lo, &hi);
        if (lo < hi) {
            jlo = min(jlo, lo);
            jhi = max(jhi, hi);
        }
    }
    jlo = jlo / kBN * kBN;

    load_tile<T, kBM, D>(Qs, LD, p.q, b, h, m0, p.Sq, vec_q != 0);
    if (jlo < jhi) {
        load_tile<T, kBN, D>(XK_KS(0), LD, p.k, b, hk, jlo, p.Skv, vec_k != 0);
        load_tile<T, kBN, D>(XK_VS(0), LD, p.v, b, hk, jlo, p.Skv, vec_v != 0);
    }
    cp_async_commit();
    cp_async_wait();
    __syncthreads();
    uint32_t qf[D / 16][4];
    {
        const int r0 = warp * 16 + g;
#pragma unroll
        for (int kk = 0; kk < D / 16; kk++) {
            const int c = kk * 16 + t4 * 2;
            qf[kk][0] = *reinterpret_cast<const uint32_t *>(&Qs[r0 * LD + c]);
            qf[kk][1] = *reinterpret_cast<const uint32_t *>(&Qs[(r0 + 8) * LD + c]);
            qf[kk][2] = *reinterpret_cast<const uint32_t *>(&Qs[r0 * LD + c + 8]);
            qf[kk][3] = *reinterpret_cast<const uint32_t *>(&Qs[(r0 + 8) * LD + c + 8]);
        }
    }
    const int row0 = m0 + warp * 16 + g; // and row0 + 8
#define row(r) (row0 + 8 * (r))

    float o[D / 8][4];
#pragma unroll
    for (int dt = 0; dt < D / 8; dt++)
        o[dt][0] = o[dt][1] = o[dt][2] = o[dt][3] = 0.0f;
    float mrow[2] = {-CUDART_INF_F, -CUDART_INF_F}, lrow[2] = {0.0f, 0.0f};

    for (int n0 = jlo, it = 0; n0 < jhi; n0 += kBN, it++) {
        const int cur = it & 1;
        if (n0 + kBN < jhi) { // prefetch the next tile into the other stage
            load_tile<T, kBN, D>(XK_KS(cur ^ 1), LD, p.k, b, hk, n0 + kBN, p.Skv, vec_k != 0);
            load_tile<T, kBN, D>(XK_VS(cur ^ 1), LD, p.v, b, hk, n0 + kBN, p.Skv, vec_v != 0);
        }
        cp_async_commit();
        const T *Kc = XK_KS(cur), *Vc = XK_VS(cur);

        float s[kBN / 8][4];
#pragma unroll
        for (int nt = 0; nt < kBN / 8; nt++) {
            s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.0f;
#pragma unroll
            for (int kk = 0; kk < D / 16; kk++) {
                uint32_t bf[2];
                const T *kr = &Kc[(nt * 8 + g) * LD + kk * 16 + t4 * 2];
                bf[0] = *reinterpret_cast<const uint32_t *>(kr);
                bf[1] = *reinterpret_cast<const uint32_t *>(kr + 8);
                mma_t<T>::run(s[nt], qf[kk], bf);
            }
        }
        // Is every (row, key) of this tile visible?  Then no per-element mask.
        bool full = n0 + kBN <= lkv && m0 + kBM <= lq;
        if (full && p.right >= 0)
            full = n0 + kBN - 1 <= diag_of(p, m0, lq, lkv) + p.right;
        if (full && p.left >= 0)
            full = n0 >= diag_of(p, m0 + kBM - 1, lq, lkv) - p.left;
        float mx[2] = {-CUDART_INF_F, -CUDART_INF_F};
        if (full && !p.bias.p) {
#pragma unroll
            for (int nt = 0; nt < kBN / 8; nt++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    s[nt][e] *= scale2;
                    mx[e >> 1] = fmaxf(mx[e >> 1], s[nt][e]);
                }
        } else {
#pragma unroll
            for (int nt = 0; nt < kBN / 8; nt++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int i = row(e >> 1), j = n0 + nt * 8 + t4 * 2 + (e & 1);
                    float x = full || visible(p, lq, lkv, i, j)
                                  ? s[nt][e] * scale2 + bias_at(p, b, h, i, j) * kLog2e
                                  : -CUDART_INF_F;
                    s[nt][e] = x;
                    mx[e >> 1] = fmaxf(mx[e >> 1], x);
                }
        }
        float corr[2], muse[2];
#pragma unroll
        for (int r = 0; r < 2; r++) {
            mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
            mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
            float mn = fmaxf(mrow[r], mx[r]);
            muse[r] = mn == -CUDART_INF_F ? 0.0f : mn;
            corr[r] = exp2f(mrow[r] - muse[r]);
            mrow[r] = mn;
            lrow[r] *= corr[r];
        }
#pragma unroll
        for (int dt = 0; dt < D / 8; dt++) {
            o[dt][0] *= corr[0];
            o[dt][1] *= corr[0];
            o[dt][2] *= corr[1];
            o[dt][3] *= corr[1];
        }
        // probabilities: row sums without dropout, P V with it
        uint32_t pa[kBN / 16][4], pl[SPLIT ? kBN / 16 : 1][4];
#pragma unroll
        for (int nt = 0; nt < kBN / 8; nt++) {
            float pe[4];
#pragma unroll
            for (int e = 0; e < 4; e++) {
                float x = exp2f(s[nt][e] - muse[e >> 1]);
                lrow[e >> 1] += x;
                if (p.drop_threshold) {
                    const int i = row(e >> 1), j = n0 + nt * 8 + t4 * 2 + (e & 1);
                    x *= (i < p.Sq && j < p.Skv) ? drop_factor(p, b, h, i, j) : 0.0f;
                }
                pe[e] = x;
            }
            pa[nt >> 1][(nt & 1) * 2 + 0] = mma_t<T>::pack(pe[0], pe[1]);
            pa[nt >> 1][(nt & 1) * 2 + 1] = mma_t<T>::pack(pe[2], pe[3]);
            if (SPLIT) {
                float r[4];
#pragma unroll
                for (int e = 0; e < 4; e++)
                    r[e] = pe[e] - mma_t<T>::to_float(mma_t<T>::from(pe[e]));
                pl[SPLIT ? nt >> 1 : 0][(nt & 1) * 2 + 0] = mma_t<T>::pack(r[0], r[1]);
                pl[SPLIT ? nt >> 1 : 0][(nt & 1) * 2 + 1] = mma_t<T>::pack(r[2], r[3]);
            }
        }
        // O += P V; V's B fragments straight from row-major V by ldmatrix.trans:
        // lanes 0-15 address keys jj*16 + lane, 8 dims from dt*8.
#pragma unroll
        for (int dt = 0; dt < D / 8; dt++) {
#pragma unroll
            for (int jj = 0; jj < kBN / 16; jj++) {
                uint32_t bf[2];
                unsigned addr = (unsigned)__cvta_generic_to_shared(&Vc[(jj * 16 + (lane & 15)) * LD + dt * 8]);
                asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
                             : "=r"(bf[0]), "=r"(bf[1])
                             : "r"(addr));
                mma_t<T>::run(o[dt], pa[jj], bf);
                if (SPLIT)
                    mma_t<T>::run(o[dt], pl[SPLIT ? jj : 0], bf);
            }
        }
        cp_async_wait();  // this thread's copies of the next tile landed
        __syncthreads();  // everyone's landed, and nobody still reads this stage
    }
    // finish: quad sums, normalize, store
#pragma unroll
    for (int r = 0; r < 2; r++) {
        lrow[r] += __shfl_xor_sync(0xffffffffu, lrow[r], 1);
        lrow[r] += __shfl_xor_sync(0xffffffffu, lrow[r], 2);
    }
#pragma unroll
    for (int r = 0; r < 2; r++) {
        const int i = row(r);
        if (i >= p.Sq)
            continue;
        const bool empty = mrow[r] == -CUDART_INF_F || !(lrow[r] > 0.0f);
        const float inv = empty ? 0.0f : 1.0f / lrow[r];
#pragma unroll
        for (int dt = 0; dt < D / 8; dt++) {
            const int d = dt * 8 + t4 * 2;
            st_any(p.o.p, p.o.dtype, off4(p.o, b, h, i, d), o[dt][r * 2] * inv);
            st_any(p.o.p, p.o.dtype, off4(p.o, b, h, i, d + 1), o[dt][r * 2 + 1] * inv);
        }
        if (t4 == 0 && p.stats.p)
            st_any(p.stats.p, p.stats.dtype, off4(p.stats, b, h, i, 0),
                   empty ? -CUDART_INF_F : (mrow[r] + log2f(lrow[r])) * kLn2);
    }
#undef XK_KS
#undef XK_VS
#undef row
}

// Launch with the dynamic shared memory it needs (opted in once).
template <typename T, int D, bool SPLIT>
cudaError_t launch_mma(const xk_sdpa &p, dim3 grid, cudaStream_t s, int vq, int vk, int vv)
{
    static bool opted = false;
    const int bytes = mma_smem_bytes<D>();
    if (!opted) {
        cudaError_t e = cudaFuncSetAttribute(sdpa_fwd_mma<T, D, SPLIT>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             bytes);
        if (e != cudaSuccess)
            return e;
        opted = true;
    }
    sdpa_fwd_mma<T, D, SPLIT><<<grid, 128, bytes, s>>>(p, vq, vk, vv);
    return cudaGetLastError();
}

bool vec_ok(const xk_tensor &t, int D)
{
    // 16-byte loads of 8 elements: contiguous last dim, aligned rows and base.
    return t.st[3] == 1 && t.st[2] % 8 == 0 && t.st[1] % 8 == 0 && t.st[0] % 8 == 0 &&
           (reinterpret_cast<uintptr_t>(t.p) & 15) == 0 && D % 8 == 0;
}

int rows_nc(int D, int Dv)
{
    int w = D > Dv ? D : Dv;
    return w <= 64 ? 2 : w <= 128 ? 4 : 8;
}

unsigned rows_grid(int64_t rows) { return (unsigned)((rows * 32 + 127) / 128); }

} // namespace

extern "C" int xk_sdpa_fwd_rows(const xk_sdpa *p, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    int64_t rows = (int64_t)p->B * p->Hq * p->Sq;
    if (rows == 0)
        return 0;
    switch (rows_nc(p->D, p->Dv)) {
    case 2: sdpa_fwd_rows<2><<<rows_grid(rows), 128, 0, s>>>(*p); break;
    case 4: sdpa_fwd_rows<4><<<rows_grid(rows), 128, 0, s>>>(*p); break;
    default: sdpa_fwd_rows<8><<<rows_grid(rows), 128, 0, s>>>(*p); break;
    }
    return (int)cudaGetLastError();
}

extern "C" int xk_sdpa_fwd_mma(const xk_sdpa *p, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if ((int64_t)p->B * p->Hq * p->Sq == 0)
        return 0;
    dim3 grid((unsigned)((p->Sq + kBM - 1) / kBM), (unsigned)(p->B * p->Hq));
    int vq = vec_ok(p->q, p->D), vk = vec_ok(p->k, p->D), vv = vec_ok(p->v, p->Dv);
    const bool bf = p->q.dtype == XK_BF16, split = p->o.dtype == XK_F32;
    cudaError_t e;
#define XK_MMA(T, D) (split ? launch_mma<T, D, true>(*p, grid, s, vq, vk, vv) : launch_mma<T, D, false>(*p, grid, s, vq, vk, vv))
    if (p->D == 64)
        e = bf ? XK_MMA(__nv_bfloat16, 64) : XK_MMA(__half, 64);
    else if (p->D == 128)
        e = bf ? XK_MMA(__nv_bfloat16, 128) : XK_MMA(__half, 128);
    else
        e = cudaErrorInvalidValue;
#undef XK_MMA
    return (int)e;
}

extern "C" int xk_sdpa_bwd_rows(const xk_sdpa *p, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    int64_t qrows = (int64_t)p->B * p->Hq * p->Sq, krows = (int64_t)p->B * p->Hk * p->Skv;
    int nc = rows_nc(p->D, p->Dv);
    if (qrows > 0) {
        switch (nc) {
        case 2: sdpa_bwd_dq_rows<2><<<rows_grid(qrows), 128, 0, s>>>(*p); break;
        case 4: sdpa_bwd_dq_rows<4><<<rows_grid(qrows), 128, 0, s>>>(*p); break;
        default: sdpa_bwd_dq_rows<8><<<rows_grid(qrows), 128, 0, s>>>(*p); break;
        }
    }
    if (krows > 0) {
        switch (nc) {
        case 2: sdpa_bwd_dkdv_rows<2><<<rows_grid(krows), 128, 0, s>>>(*p); break;
        case 4: sdpa_bwd_dkdv_rows<4><<<rows_grid(krows), 128, 0, s>>>(*p); break;
        default: sdpa_bwd_dkdv_rows<8><<<rows_grid(krows), 128, 0, s>>>(*p); break;
        }
    }
    return (int)cudaGetLastError();
}
