// sdpa_common.cuh — what the attention kernel files share (kernels/sdpa.cu,
// sdpa_mma.cu, sdpa_tf32.cu, sdpa_bwd_mma.cu): typed loads and stores, the
// mask rule, key and row ranges, the dropout decision (semantics:
// src/ops/sdpa.h), the mma.sync wrappers, cp.async and the tile loader.
// Everything sits in an unnamed namespace: each file gets its own copy.
#ifndef XDNN_KERNELS_SDPA_COMMON_CUH
#define XDNN_KERNELS_SDPA_COMMON_CUH

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

// Philox-4x32-10, all four output words (src/data/philox.c has the recipe).
__device__ __forceinline__ void philox4(uint64_t seed, uint64_t stream, uint64_t index, uint32_t (&w)[4])
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
    w[0] = c0;
    w[1] = c1;
    w[2] = c2;
    w[3] = c3;
}

// ---- dropout (the rule: src/ops/sdpa.h).  One Philox call per (row, group of 8 keys), counter
// drop_call(p, b, h, i) + j / 8; element j takes the 16-bit half j % 2 of word (j % 8) / 2.
// p.drop_threshold = t + 1 (0: no dropout), so keep iff u16 + 1 >= drop_threshold.

// Counter of row (b, h, i)'s first key group.
__device__ __forceinline__ uint64_t drop_call(const xk_sdpa &p, int b, int h, int i)
{
    return (((uint64_t)b * p.Hq + h) * p.Sq + i) * (uint64_t)((p.Skv + 7) >> 3);
}

// The factor of a 16-bit value: 1/(1-p) kept, 0 dropped.
__device__ __forceinline__ float drop_keep(const xk_sdpa &p, uint32_t u16)
{
    return u16 + 1u >= p.drop_threshold ? p.drop_scale : 0.0f;
}

// Dropout factor of probability (b, h, i, j): 0, 1/(1-p), or 1 without dropout.  One Philox call per
// element: for the row kernels (sdpa.cu); the tensor-core kernels share the calls (drop_words_quad,
// drop_words_oct).
__device__ __forceinline__ float drop_factor(const xk_sdpa &p, int b, int h, int i, int j)
{
    if (p.drop_threshold == 0)
        return 1.0f;
    uint32_t w[4];
    philox4(p.seed, kDropStream, drop_call(p, b, h, i) + (uint32_t)(j >> 3), w);
    const int k = j & 7;
    const uint32_t word = k < 4 ? (k < 2 ? w[0] : w[1]) : (k < 6 ? w[2] : w[3]);
    return drop_keep(p, (word >> (16 * (k & 1))) & 0xffffu);
}

// x[k] <- x[k ^ m] for k = 0..N-1 (N = 4 or 8, m < N a per-lane value): conditional swaps, one stage per
// bit of m, as selects (a dynamic register index would go to local memory).
template <int N> __device__ __forceinline__ void xor_permute(uint32_t (&x)[N], int m)
{
#pragma unroll
    for (int bit = 1; bit < N; bit <<= 1) {
        const bool sw = (m & bit) != 0;
#pragma unroll
        for (int k = 0; k < N; k++)
            if (!(k & bit)) {
                const uint32_t a = x[k], b = x[k | bit];
                x[k] = sw ? b : a;
                x[k | bit] = sw ? a : b;
            }
    }
}

// The S accumulator layout of mma.sync m16n8k16 and of wgmma: the 4 lanes of a quad (t4 = lane & 3)
// hold one row and keys 8c + 2 t4 + {0, 1} of each 8-key group c, i.e. lane t4 needs word t4 (both
// halves) of the row's call for group c.  The quad's 4 calls q = 0..3: lane t4 makes call q = t4 only
// (counter `mine`), and a 4x4 transpose of words through 3 shuffles gives every lane its word of each:
// word[q] = word t4 of call q.  4x fewer calls than a call per (row, group) in every lane, 8x fewer
// than one per element.  Every lane of the warp must take part.
__device__ __forceinline__ void drop_words_quad(uint64_t seed, uint64_t mine, uint32_t (&word)[4])
{
    const int t4 = threadIdx.x & 3;
    uint32_t w[4];
    philox4(seed, kDropStream, mine, w);
    xor_permute<4>(w, t4); // w[k] = my word t4 ^ k: what lane t4 ^ k wants of my call
#pragma unroll
    for (int k = 1; k < 4; k++)
        w[k] = __shfl_xor_sync(0xffffffffu, w[k], k); // now w[k] = word t4 of call t4 ^ k
    xor_permute<4>(w, t4);                            // w[q] = word t4 of call q
#pragma unroll
    for (int q = 0; q < 4; q++)
        word[q] = w[q];
}

// The transposed layout of sdpa_bwd_mma's dK/dV pass (S^T: rows are keys): the 8 lanes g = lane >> 2
// of one t4 column hold keys 8G + g (one group G) of one query, so lane g needs half g & 1 of word g >> 1.
// Their 8 calls q = 0..7: lane g makes call q = g (counter `mine`); 7 shuffles give every lane
// u16[q] = its 16-bit value of call q.
__device__ __forceinline__ void drop_words_oct(uint64_t seed, uint64_t mine, uint32_t (&u16)[8])
{
    const int g = (threadIdx.x >> 2) & 7;
    uint32_t w[4];
    philox4(seed, kDropStream, mine, w);
    xor_permute<4>(w, g >> 1); // w[m] = my word m ^ (g >> 1); lane g ^ k wants word (g ^ k) >> 1 = w[k >> 1]
    uint32_t r[8];
#pragma unroll
    for (int k = 0; k < 8; k++)
        r[k] = k ? __shfl_xor_sync(0xffffffffu, w[k >> 1], k << 2) : w[0]; // r[k]: my word of call g ^ k
    xor_permute<8>(r, g);                                                // r[q]: my word of call q
    const int sh = 16 * (g & 1);
#pragma unroll
    for (int q = 0; q < 8; q++)
        u16[q] = (r[q] >> sh) & 0xffffu;
}

__device__ __forceinline__ int seq_len(const xk_tensor &t, int b, int full)
{
    if (!t.p)
        return full;
    int v = (int)ld_any(t.p, t.dtype, (int64_t)b * t.st[0]);
    return v < 0 ? 0 : v > full ? full : v;
}

// Where sequence b's rows are, and its lengths (src/ops/sdpa.h; ragged THD:
// kern_sdpa.h).  Every address a kernel forms for row i of sequence b uses
// row qrow + i of the q-side tensors (q, o, stats, do, dq) or krow + j of the
// kv-side ones (k, v, dk, dv), through (b, h) as usual:
//   dense:  qrow = krow = 0 (b steps st[0]); nq = Sq, nkv = Skv (padded rows
//           included: they get o = 0, stats = -inf, dq = dk = dv = 0);
//   ragged: qrow = off_q[b] (st[0] is 0, so the token alone places the row),
//           nq = off_q[b+1] - off_q[b] (rows past it are the next sequence's:
//           never loaded, never stored); likewise krow, nkv.
// lq, lkv: the lengths the mask rule uses (seq_len_q/kv clamped, or nq/nkv).
struct seq_rows {
    int qrow, nq, lq, krow, nkv, lkv;
};

// Tokens [*lo, *lo + *n) of sequence b: offsets clamped into [0, T], end >= start.
__device__ __forceinline__ void ragged_span(const xk_tensor &off, int b, int T, int *lo, int *n)
{
    const bool i64 = off.dtype == XK_I64;
    const int64_t ia = (int64_t)b * off.st[0], ie = ia + off.st[0];
    int64_t a = i64 ? static_cast<const long long *>(off.p)[ia] : static_cast<const int32_t *>(off.p)[ia];
    int64_t e = i64 ? static_cast<const long long *>(off.p)[ie] : static_cast<const int32_t *>(off.p)[ie];
    a = a < 0 ? 0 : a > T ? T : a;
    e = e < a ? a : e > T ? T : e;
    *lo = (int)a;
    *n = (int)(e - a);
}

__device__ __forceinline__ seq_rows rows_of(const xk_sdpa &p, int b)
{
    seq_rows r;
    if (p.off_q.p) {
        ragged_span(p.off_q, b, p.Sq, &r.qrow, &r.nq);
        r.lq = r.nq;
    } else {
        r.qrow = 0, r.nq = p.Sq, r.lq = seq_len(p.len_q, b, p.Sq);
    }
    if (p.off_kv.p) {
        ragged_span(p.off_kv, b, p.Skv, &r.krow, &r.nkv);
        r.lkv = r.nkv;
    } else {
        r.krow = 0, r.nkv = p.Skv, r.lkv = seq_len(p.len_kv, b, p.Skv);
    }
    return r;
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


// m16n8k8 tf32 (f32 accumulate); operands are tf32 bit patterns.
__device__ __forceinline__ void mma_tf32(float *c, const uint32_t *a, const uint32_t *b)
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ uint32_t to_tf32(float x)
{
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
}

// A fragment of a row-major 16-bit tile: rows r0, r0 + 8, columns c, c + 8.
template <typename T> __device__ __forceinline__ void lds_a(uint32_t *a, const T *s, int ld, int r0, int c)
{
    a[0] = *reinterpret_cast<const uint32_t *>(&s[r0 * ld + c]);
    a[1] = *reinterpret_cast<const uint32_t *>(&s[(r0 + 8) * ld + c]);
    a[2] = *reinterpret_cast<const uint32_t *>(&s[r0 * ld + c + 8]);
    a[3] = *reinterpret_cast<const uint32_t *>(&s[(r0 + 8) * ld + c + 8]);
}

// B fragments of a row-major [k][n] 16-bit tile (V, dO, Q, K as the right
// operand of P V, dS K, ...) by ldmatrix.trans: lanes 0-15 address rows
// k0 + lane, 8 columns from n0.
template <typename T>
__device__ __forceinline__ void ldsm_t2(uint32_t *bf, const T *base, int ld, int k0, int n0, int lane)
{
    unsigned addr = (unsigned)__cvta_generic_to_shared(&base[(k0 + (lane & 15)) * ld + n0]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(bf[0]), "=r"(bf[1])
                 : "r"(addr));
}

__device__ __forceinline__ void cp_async16(void *smem, const void *gmem, bool valid)
{
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    int n = valid ? 16 : 0; // 0: no global read, the 16 bytes are zero-filled
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(n));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group 0;\n" ::); }

template <typename E> __device__ __forceinline__ E zero_of() { return E(0.0f); }
template <> __device__ __forceinline__ __half zero_of<__half>() { return __float2half_rn(0.0f); }
template <> __device__ __forceinline__ __nv_bfloat16 zero_of<__nv_bfloat16>() { return __float2bfloat16_rn(0.0f); }

// Copy rows [r0, r0 + R) x [0, DP) of (b, h) into shared memory (row stride
// lds), zero-filling rows >= nrows and columns >= ncols (the head dim padded
// up to the kernel's DP).  `vec` (contiguous last dim, 16-byte aligned rows,
// ncols a multiple of the chunk): 16-byte cp.async copies that complete at
// the next cp_async_wait(); otherwise element loads and 16-byte stores.
template <typename E, int R, int DP>
__device__ __forceinline__ void load_tile(E *sm, int lds, const xk_tensor &t, int b, int h, int r0, int nrows,
                                          int ncols, bool vec)
{
    constexpr int V = 16 / (int)sizeof(E); // elements per 16-byte chunk
    constexpr int CH = DP / V;             // chunks per row
    const E *base = static_cast<const E *>(t.p) + (int64_t)b * t.st[0] + (int64_t)h * t.st[1];
    for (int idx = threadIdx.x; idx < R * CH; idx += blockDim.x) {
        int r = idx / CH, c = (idx % CH) * V;
        int gr = r0 + r;
        bool ok = gr < nrows && c < ncols;
        if (vec) {
            const E *src = ok ? base + (int64_t)gr * t.st[2] + c : base;
            cp_async16(sm + r * lds + c, src, ok);
            continue;
        }
        E vals[V];
        const E *src = base + (int64_t)gr * t.st[2];
#pragma unroll
        for (int e = 0; e < V; e++)
            vals[e] = ok && c + e < ncols ? src[(int64_t)(c + e) * t.st[3]] : zero_of<E>();
        *reinterpret_cast<uint4 *>(sm + r * lds + c) = *reinterpret_cast<uint4 *>(vals);
    }
}

// 16-byte loads of a tensor's rows: contiguous last dim, aligned rows and
// base, and a head dim that is a whole number of chunks.
inline bool vec_ok(const xk_tensor &t, int ncols, int elem_bytes)
{
    const int v = 16 / elem_bytes;
    return t.st[3] == 1 && t.st[2] % v == 0 && t.st[1] % v == 0 && t.st[0] % v == 0 &&
           (reinterpret_cast<uintptr_t>(t.p) & 15) == 0 && ncols % v == 0;
}

// The padded head-dim buckets (the kernels' template parameter DP), and the
// bucket of a head dim: the smallest that holds it.  48 and 80 exist for
// D = 40 (Stable Diffusion) and D = 80: padding them to 64 and 96 cost 35% and
// 20% (computed padding, sdpa_mma.cu).  Every DP is a multiple of 16.
#define XK_SDPA_BUCKETS(X) X(32) X(48) X(64) X(80) X(96) X(128) X(160) X(192) X(256)
inline int dp_bucket(int d)
{
#define XK_B(n) if (d <= n) return n;
    XK_SDPA_BUCKETS(XK_B)
#undef XK_B
    return 256;
}

constexpr float kLog2e = 1.4426950408889634f, kLn2 = 0.6931471805599453f;

// ---- the forwards' shared steps (sdpa_mma.cu, sdpa_tf32.cu): blocks of
// kBM = 64 query rows, 4 warps x 16 rows, C-fragment layout of S and o.
constexpr int kBM = 64;

// Dropout on s[nt][e] in the C-fragment layout (rows row0 + 8 (e >> 1), keys n0 + 8 nt + 2 t4 + (e & 1);
// n0 a multiple of 8): the quad's 4 calls per two 8-key groups (drop_words_quad).
template <int NT>
__device__ __forceinline__ void drop_rows_mma(const xk_sdpa &p, float (&s)[NT][4], int b, int h, int row0, int n0)
{
    static_assert(NT % 2 == 0, "key tiles of 16");
    const int t4 = threadIdx.x & 3;
    // call q = 2 (nt - nt0) + r: lane t4 makes (nt0 + (t4 >> 1), row r = t4 & 1)
    const uint64_t mine = drop_call(p, b, h, row0 + 8 * (t4 & 1)) + (uint32_t)(n0 >> 3) + (t4 >> 1);
#pragma unroll
    for (int nt0 = 0; nt0 < NT; nt0 += 2) {
        uint32_t word[4];
        drop_words_quad(p.seed, mine + nt0, word);
#pragma unroll
        for (int e = 0; e < 8; e++) {
            const uint32_t wq = word[(e >> 2) * 2 + ((e >> 1) & 1)];
            s[nt0 + (e >> 2)][e & 3] *= drop_keep(p, (e & 1) ? wq >> 16 : wq & 0xffffu);
        }
    }
}

// The online-softmax step shared by the 16-bit and tf32 forwards: s holds the
// raw Q K^T of rows row(0), row(1) and keys n0 + nt*8 + t4*2 + {0,1}; on
// return it holds the probabilities (dropout applied), mrow/lrow are updated
// and corr says how much to rescale o by.
template <int NT>
__device__ __forceinline__ void softmax_step(const xk_sdpa &p, float (&s)[NT][4], int b, int h, int m0, int row0,
                                             int n0, int lq, int lkv, float scale2, float *mrow, float *lrow,
                                             float *corr)
{
    constexpr int BN = NT * 8;
    const int t4 = threadIdx.x & 3;
    // Is every (row, key) of this tile visible?  Then no per-element mask.
    bool full = n0 + BN <= lkv && m0 + kBM <= lq;
    if (full && p.right >= 0)
        full = n0 + BN - 1 <= diag_of(p, m0, lq, lkv) + p.right;
    if (full && p.left >= 0)
        full = n0 >= diag_of(p, m0 + kBM - 1, lq, lkv) - p.left;
    float mx[2] = {-CUDART_INF_F, -CUDART_INF_F};
    if (full && !p.bias.p) {
#pragma unroll
        for (int nt = 0; nt < NT; nt++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                s[nt][e] *= scale2;
                mx[e >> 1] = fmaxf(mx[e >> 1], s[nt][e]);
            }
    } else {
#pragma unroll
        for (int nt = 0; nt < NT; nt++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int i = row0 + 8 * (e >> 1), j = n0 + nt * 8 + t4 * 2 + (e & 1);
                float x = full || visible(p, lq, lkv, i, j) ? s[nt][e] * scale2 + bias_at(p, b, h, i, j) * kLog2e
                                                            : -CUDART_INF_F;
                s[nt][e] = x;
                mx[e >> 1] = fmaxf(mx[e >> 1], x);
            }
    }
    float muse[2];
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
    // probabilities: row sums without dropout, P V with it
#pragma unroll
    for (int nt = 0; nt < NT; nt++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            float x = exp2f(s[nt][e] - muse[e >> 1]);
            lrow[e >> 1] += x;
            s[nt][e] = x;
        }
    if (p.drop_threshold) // masked entries (rows past Sq, keys past Skv included) are 0 already
        drop_rows_mma<NT>(p, s, b, h, row0, n0);
}

// Keys [*jlo, *jhi) any row of the block may see; jlo rounded down to BN.
__device__ __forceinline__ void block_keys(const xk_sdpa &p, int m0, int lq, int lkv, int bn, int *jlo, int *jhi)
{
    int lo_all = p.Skv, hi_all = 0;
    for (int r = 0; r < kBM; r++) {
        int lo, hi;
        key_range(p, lq, lkv, m0 + r, &lo, &hi);
        if (lo < hi) {
            lo_all = min(lo_all, lo);
            hi_all = max(hi_all, hi);
        }
    }
    *jlo = lo_all / bn * bn;
    *jhi = hi_all;
}

// Quad sums of l, normalize, store o (d < Dv) and the stats of rows row0,
// row0 + 8 of sequence b (rows >= sr.nq are not its own: skipped).
template <int DP>
__device__ __forceinline__ void finish_rows(const xk_sdpa &p, float (&o)[DP / 8][4], const float *mrow, float *lrow,
                                            int b, int h, int row0, const seq_rows &sr)
{
    const int t4 = threadIdx.x & 3;
#pragma unroll
    for (int r = 0; r < 2; r++) {
        lrow[r] += __shfl_xor_sync(0xffffffffu, lrow[r], 1);
        lrow[r] += __shfl_xor_sync(0xffffffffu, lrow[r], 2);
    }
#pragma unroll
    for (int r = 0; r < 2; r++) {
        const int i = row0 + 8 * r, row = sr.qrow + i;
        if (i >= sr.nq)
            continue;
        const bool empty = mrow[r] == -CUDART_INF_F; // a NaN l (+inf or NaN scores) stays NaN, as in the reference
        const float inv = empty ? 0.0f : 1.0f / lrow[r];
#pragma unroll
        for (int dt = 0; dt < DP / 8; dt++) {
            const int d = dt * 8 + t4 * 2;
            if (d < p.Dv)
                st_any(p.o.p, p.o.dtype, off4(p.o, b, h, row, d), o[dt][r * 2] * inv);
            if (d + 1 < p.Dv)
                st_any(p.o.p, p.o.dtype, off4(p.o, b, h, row, d + 1), o[dt][r * 2 + 1] * inv);
        }
        if (t4 == 0 && p.stats.p)
            st_any(p.stats.p, p.stats.dtype, off4(p.stats, b, h, row, 0),
                   empty ? -CUDART_INF_F : (mrow[r] + log2f(lrow[r])) * kLn2);
    }
}


} // namespace

#endif
