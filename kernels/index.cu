/* index.cu — gather, gather_bwd, one_hot, argmax and argmin for the
 * index_direct engine (src/gpu/eng_index.c); semantics are src/ops/gather.c
 * and src/ops/argmax.c.
 *
 * v1 (memory-bound, simple):
 *  - gather / one_hot: one thread per output element, grid-stride; threads
 *    of a warp run along the innermost dim, so loads and stores coalesce.
 *    v2 (kix_gather_vec): 16-byte chunks when a row allows (embeddings).
 *  - gather_bwd: deterministic scatter-add without atomics.  Keys
 *    index << 32 | k (unique) are bitonic-sorted in the workspace (one launch
 *    per step: log2(P)^2 / 2 launches for P = next power of two >= K); then
 *    one thread per dx element finds its run of keys by binary search and
 *    sums dy over it in k order, in double.  Every dx element is written
 *    (zeros where no index points), so nothing needs clearing first.
 *  - argmax / argmin: inner == 1 (the last axis): one warp per row, lanes
 *    stride the row, then a shuffle reduction; otherwise one thread per
 *    output, threads along inner.  The combine rule (NaN beats numbers, the
 *    smaller index wins ties) does not depend on the order of combination,
 *    so the result is the reference's "first extreme".
 * An index outside [0, n) gives NaN (one_hot into an integer dtype: -1). */
#include "gpu/kern_index.h"
#include "kix_common.cuh"

enum { KIX_THREADS = 256 };

static __global__ void kix_gather(kix_params p)
{
    int64_t total = p.outer * p.K * p.inner;
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
        int64_t i = e % p.inner, t = e / p.inner, k = t % p.K, o = t / p.K;
        int64_t v = kix_ldi(p.idx, p.idt, k);
        double val = v >= 0 && v < p.n ? kix_ld(p.x, p.xdt, (o * p.n + v) * p.inner + i) : (double)NAN;
        kix_st(p.y, p.ydt, e, val);
    }
}

/* v2 of gather, when x and y share a dtype and a row of `inner` elements is a
 * whole number of 16-byte chunks (both buffers 16-byte aligned): one thread
 * per chunk, uint4 loads and stores.  An index out of range NaN-fills its
 * chunk element by element. */
static __global__ void kix_gather_vec(kix_params p, int64_t cpr, int esize)
{
    int64_t total = p.outer * p.K * cpr;
    const uint4 *src = static_cast<const uint4 *>(p.x);
    uint4 *dst = static_cast<uint4 *>(p.y);
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
        int64_t c = e % cpr, t = e / cpr, k = t % p.K, o = t / p.K;
        int64_t v = kix_ldi(p.idx, p.idt, k);
        if (v >= 0 && v < p.n) {
            dst[e] = src[(o * p.n + v) * cpr + c];
        } else {
            int per = 16 / esize;
            for (int j = 0; j < per; j++)
                kix_st(p.y, p.ydt, e * per + j, (double)NAN);
        }
    }
}

static int kix_esize(int dt)
{
    return dt == XDNN_F64 || dt == XDNN_I64 ? 8 : dt == XDNN_F32 || dt == XDNN_I32 ? 4 : dt == XDNN_I8 ? 1 : 2;
}

static __global__ void kix_one_hot(kix_params p)
{
    int64_t total = p.K * p.n;
    bool is_int = kix_is_int(p.ydt);
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
        int64_t c = e % p.n, v = kix_ldi(p.idx, p.idt, e / p.n);
        double val = v >= 0 && v < p.n ? (double)(c == v) : is_int ? -1.0 : (double)NAN;
        kix_st(p.y, p.ydt, e, val);
    }
}

/* ---- gather_bwd */

static __global__ void kix_make_keys(kix_params p, uint64_t *keys, int64_t P)
{
    for (int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; k < P; k += (int64_t)gridDim.x * blockDim.x) {
        if (k >= p.K) {
            keys[k] = ~0ull;
            continue;
        }
        int64_t v = kix_ldi(p.idx, p.idt, k);
        uint64_t row = v >= 0 && v < p.n ? (uint64_t)v : (uint64_t)p.n; /* out of range: past every row */
        keys[k] = row << 32 | (uint64_t)k;
    }
}

static __global__ void kix_bitonic_step(uint64_t *keys, int64_t P, int64_t size, int64_t stride)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < P; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t j = i ^ stride;
        if (j <= i)
            continue;
        bool up = (i & size) == 0;
        uint64_t a = keys[i], b = keys[j];
        if ((a > b) == up) {
            keys[i] = b;
            keys[j] = a;
        }
    }
}

/* First position in keys[0, K) whose key is >= want. */
static __device__ __forceinline__ int64_t kix_lower_bound(const uint64_t *keys, int64_t K, uint64_t want)
{
    int64_t lo = 0, hi = K;
    while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        if (keys[mid] < want)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static __global__ void kix_scatter_sum(kix_params p, const uint64_t *keys)
{
    int64_t total = p.outer * p.n * p.inner;
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
        int64_t i = e % p.inner, t = e / p.inner, v = t % p.n, o = t / p.n;
        int64_t lo = kix_lower_bound(keys, p.K, (uint64_t)v << 32);
        double acc = 0;
        for (int64_t q = lo; q < p.K && (keys[q] >> 32) == (uint64_t)v; q++) {
            int64_t k = (int64_t)(keys[q] & 0xffffffffu);
            acc += kix_ld(p.x, p.xdt, (o * p.K + k) * p.inner + i);
        }
        kix_st(p.y, p.ydt, e, acc);
    }
}

static int64_t kix_pow2(int64_t K)
{
    int64_t P = 1;
    while (P < K)
        P <<= 1;
    return P;
}

extern "C" size_t kix_bwd_ws_bytes(int64_t K) { return (size_t)kix_pow2(K) * sizeof(uint64_t); }

/* ---- argmax / argmin */

/* Does (a, ia) beat (b, ib)?  NaN beats numbers; equals go to the smaller index. */
static __device__ __forceinline__ bool kix_better(bool is_max, double a, int64_t ia, double b, int64_t ib)
{
    bool na = isnan(a), nb = isnan(b);
    if (na || nb)
        return na && (!nb || ia < ib);
    if (a == b)
        return ia < ib;
    return is_max ? a > b : a < b;
}

static __global__ void kix_arg_rows(kix_params p, bool is_max)
{
    int lane = threadIdx.x & 31;
    int64_t warps = (int64_t)gridDim.x * blockDim.x / 32;
    for (int64_t r = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / 32; r < p.outer; r += warps) {
        double best = 0;
        int64_t bi = -1;
        for (int64_t k = lane; k < p.n; k += 32) {
            double v = kix_ld(p.x, p.xdt, r * p.n + k);
            if (bi < 0 || kix_better(is_max, v, k, best, bi)) {
                best = v;
                bi = k;
            }
        }
        for (int off = 16; off > 0; off >>= 1) {
            double ob = __shfl_down_sync(0xffffffffu, best, off);
            long long oi = __shfl_down_sync(0xffffffffu, (long long)bi, off);
            if (oi >= 0 && (bi < 0 || kix_better(is_max, ob, oi, best, bi))) {
                best = ob;
                bi = oi;
            }
        }
        if (lane == 0)
            kix_st(p.y, p.ydt, r, (double)bi);
    }
}

static __global__ void kix_arg_cols(kix_params p, bool is_max)
{
    int64_t total = p.outer * p.inner;
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
        int64_t i = e % p.inner, o = e / p.inner;
        const int64_t base = o * p.n * p.inner + i;
        double best = kix_ld(p.x, p.xdt, base);
        int64_t bi = 0;
        for (int64_t k = 1; k < p.n; k++) {
            double v = kix_ld(p.x, p.xdt, base + k * p.inner);
            if (kix_better(is_max, v, k, best, bi)) {
                best = v;
                bi = k;
            }
        }
        kix_st(p.y, p.ydt, e, (double)bi);
    }
}

extern "C" int kix_launch(const kix_params *p, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    const int T = KIX_THREADS;
    switch (p->mode) {
    case KIX_GATHER: {
        int es = kix_esize(p->xdt);
        bool vec = p->xdt == p->ydt && (p->inner * es) % 16 == 0 && (uintptr_t)p->x % 16 == 0 &&
                   (uintptr_t)p->y % 16 == 0;
        if (vec) {
            int64_t cpr = p->inner * es / 16;
            kix_gather_vec<<<kix_grid(p->outer * p->K * cpr, T), T, 0, s>>>(*p, cpr, es);
        } else {
            kix_gather<<<kix_grid(p->outer * p->K * p->inner, T), T, 0, s>>>(*p);
        }
        break;
    }
    case KIX_ONE_HOT:
        kix_one_hot<<<kix_grid(p->K * p->n, T), T, 0, s>>>(*p);
        break;
    case KIX_GATHER_BWD: {
        int64_t P = kix_pow2(p->K);
        uint64_t *keys = static_cast<uint64_t *>(p->ws);
        kix_make_keys<<<kix_grid(P, T), T, 0, s>>>(*p, keys, P);
        for (int64_t size = 2; size <= P; size <<= 1)
            for (int64_t stride = size / 2; stride > 0; stride >>= 1)
                kix_bitonic_step<<<kix_grid(P, T), T, 0, s>>>(keys, P, size, stride);
        kix_scatter_sum<<<kix_grid(p->outer * p->n * p->inner, T), T, 0, s>>>(*p, keys);
        break;
    }
    case KIX_ARGMAX:
    case KIX_ARGMIN:
        if (p->inner == 1)
            kix_arg_rows<<<kix_grid(p->outer * 32, T), T, 0, s>>>(*p, p->mode == KIX_ARGMAX);
        else
            kix_arg_cols<<<kix_grid(p->outer * p->inner, T), T, 0, s>>>(*p, p->mode == KIX_ARGMAX);
        break;
    default:
        return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}
