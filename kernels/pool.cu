/* pool.cu — max / average pooling forward and backward for the pool_direct
 * engine, 1-3 spatial dims (5-slot view of kern_conv.h), any strides, any
 * f32/f16/bf16 mix.  Semantics are src/ops/pool.c exactly:
 *  - maxpool: taps in padding are skipped; the winner is the first maximum in
 *    row-major window order, replaced only by a strictly larger value or the
 *    first NaN (so NaN propagates); a window of only padding gives -inf.
 *  - avgpool: sum of the taps inside x / divisor; the divisor counts taps
 *    inside x, or (include_pad) inside [-pad_lo, in + pad_hi).
 *  - backward: one thread per dx element gathers from every window that
 *    covers it (o = (i + pad - r*dil) / stride exact and inside dy): maxpool
 *    adds dy[o] when this element is o's winning tap (the same tie rule),
 *    avgpool adds dy[o] / divisor(o).  No atomics; deterministic.
 * Variants of the forward:
 *  v1 kpool_fwd_kernel: one thread per y element, runtime dtypes, any layout;
 *  v2 kpool_fwd_vec: channels-contiguous x and y of one dtype, C and every
 *     other stride a multiple of 16 bytes' worth of elements, 16-byte-aligned
 *     buffers: one thread per output pixel and 16-byte chunk of channels,
 *     every tap one 16-byte load, index math once per chunk (the launcher
 *     picks it; the result is the same value by value);
 *  v3 kpool_roll3x3s2 (3x3 stride-2 windows, 2-D, int32 offsets: ResNet's
 *     pooling): one thread per (n, run of 2 (or 4) output rows, output
 *     column, 16-byte chunk) walks down its rows, reducing each input row's
 *     3 taps once and carrying the shared row (row 2o + 2 is row 0 of o + 1)
 *     to the next output: v2 read every input 2.25 times through L1/L2 (35-42 %
 *     of copy), v3 ~1.1 times vertically (the column shared by neighbouring
 *     outputs is an L1 hit of the neighbouring warp).  The first maximum in
 *     row-major window order is the first row maximum of the first row that
 *     holds the window maximum (NaN likewise), so the winners and values are
 *     those of v2; avgpool sums per row, then the rows (other rounding than
 *     the tap order); 16-bit max forward on packed pairs (max.NaN).  The same
 *     walk can store the backward's winners (XDNN_POOL_ROLL_WINNERS=1).
 *     The avgpool backward of those windows enumerates the at most 2 x 2
 *     windows over a pixel as the maxpool's does (kp_taps3 for the divisor).
 *     XDNN_POOL_ROLL=0 keeps v2 for both.
 *  v4 kpool_bwd_walk: the max backward of those windows in one pass, a thread per 2 x 2 block of input pixels and
 *     8 bytes of channels walking down the blocks; no winner bytes (XDNN_POOL_BWD_WALK=0 keeps v3's two passes);
 *  v5 kpool_bwd_wide: v4 with 16 bytes of channels a thread, rows reduced once per window, taps compared packed
 *     (XDNN_POOL_BWD_WIDE=0 keeps v4); average pooling of those windows on walks of its own, forward and
 *     backward (pool_avg.cuh, XDNN_POOL_AVG_WALK=0 keeps v3's). */
#include "kern_common.cuh"
#include "kern_fdiv.cuh"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { KP_THREADS = 256 };

extern "C" {

/* Plane-relative offset (x strides) of o's winning tap, or -1: max_tap of pool.c. */
static __device__ int64_t kp_max_tap(const kpool_params &p, const void *x, int64_t xbase, int64_t o0, int64_t o1,
                                     int64_t o2, float *best_val)
{
    int64_t best = -1;
    float bv = 0.f;
    for (int64_t r0 = 0; r0 < p.win[0]; r0++) {
        const int64_t i0 = o0 * p.stride[0] - p.pad_lo[0] + r0 * p.dil[0];
        if (i0 < 0 || i0 >= p.in[0])
            continue;
        for (int64_t r1 = 0; r1 < p.win[1]; r1++) {
            const int64_t i1 = o1 * p.stride[1] - p.pad_lo[1] + r1 * p.dil[1];
            if (i1 < 0 || i1 >= p.in[1])
                continue;
            for (int64_t r2 = 0; r2 < p.win[2]; r2++) {
                const int64_t i2 = o2 * p.stride[2] - p.pad_lo[2] + r2 * p.dil[2];
                if (i2 < 0 || i2 >= p.in[2])
                    continue;
                const int64_t off = i0 * p.sx[2] + i1 * p.sx[3] + i2 * p.sx[4];
                const float v = kld(x, p.dt_x, xbase + off);
                if (best < 0 || (!isnan(bv) && (v > bv || isnan(v)))) {
                    best = off;
                    bv = v;
                }
            }
        }
    }
    *best_val = bv;
    return best;
}

/* The avgpool divisor at o: avg_divisor of pool.c. */
static __device__ int64_t kp_divisor(const kpool_params &p, const int64_t *o)
{
    int64_t count = 1;
    for (int s = 0; s < KCONV_SP; s++) {
        const int64_t lo = p.include_pad ? -p.pad_lo[s] : 0;
        const int64_t hi = p.include_pad ? p.in[s] + p.pad_hi[s] : p.in[s];
        int64_t taps = 0;
        for (int64_t r = 0; r < p.win[s]; r++) {
            const int64_t i = o[s] * p.stride[s] - p.pad_lo[s] + r;
            taps += i >= lo && i < hi;
        }
        count *= taps;
    }
    return count;
}

/* Split flat work index t over [N, C, sp0, sp1, sp2] into (n, c, i[3]), in
 * the order of the tensor's layout: C innermost when channels are contiguous
 * (NHWC: neighbouring threads read neighbouring channels), else W innermost. */
static __device__ __forceinline__ void kp_split(int64_t t, const kpool_params &p, const int64_t *sp, int c_inner,
                                                int64_t *n, int64_t *c, int64_t *i)
{
    if (c_inner) {
        *c = t % p.C;
        t /= p.C;
    }
    i[2] = t % sp[2]; t /= sp[2];
    i[1] = t % sp[1]; t /= sp[1];
    i[0] = t % sp[0]; t /= sp[0];
    if (!c_inner) {
        *c = t % p.C;
        t /= p.C;
    }
    *n = t;
}

__global__ void __launch_bounds__(KP_THREADS) kpool_fwd_kernel(kpool_params p, const void *x, void *y, int c_inner)
{
    const int64_t total = p.N * p.C * p.out[0] * p.out[1] * p.out[2];
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total; t += (int64_t)gridDim.x * blockDim.x) {
        int64_t n, c, o[3];
        kp_split(t, p, p.out, c_inner, &n, &c, o);
        const int64_t o0 = o[0], o1 = o[1], o2 = o[2];
        const int64_t xbase = n * p.sx[0] + c * p.sx[1];
        float v;
        if (p.is_max) {
            float bv;
            v = kp_max_tap(p, x, xbase, o0, o1, o2, &bv) < 0 ? -INFINITY : bv;
        } else {
            float sum = 0.f;
            for (int64_t r0 = 0; r0 < p.win[0]; r0++) {
                const int64_t i0 = o0 * p.stride[0] - p.pad_lo[0] + r0;
                if (i0 < 0 || i0 >= p.in[0])
                    continue;
                for (int64_t r1 = 0; r1 < p.win[1]; r1++) {
                    const int64_t i1 = o1 * p.stride[1] - p.pad_lo[1] + r1;
                    if (i1 < 0 || i1 >= p.in[1])
                        continue;
                    for (int64_t r2 = 0; r2 < p.win[2]; r2++) {
                        const int64_t i2 = o2 * p.stride[2] - p.pad_lo[2] + r2;
                        if (i2 >= 0 && i2 < p.in[2])
                            sum += kld(x, p.dt_x, xbase + i0 * p.sx[2] + i1 * p.sx[3] + i2 * p.sx[4]);
                    }
                }
            }
            const int64_t div = kp_divisor(p, o);
            v = div > 0 ? sum / (float)div : 0.f;
        }
        kst(y, p.dt_y, n * p.sy[0] + c * p.sy[1] + o0 * p.sy[2] + o1 * p.sy[3] + o2 * p.sy[4], v);
    }
}

__global__ void __launch_bounds__(KP_THREADS) kpool_bwd_kernel(kpool_params p, const void *x, const void *dy, void *dx,
                                                               int c_inner)
{
    const int64_t total = p.N * p.C * p.in[0] * p.in[1] * p.in[2];
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total; t += (int64_t)gridDim.x * blockDim.x) {
        int64_t n, c, i[3];
        kp_split(t, p, p.in, c_inner, &n, &c, i);
        const int64_t xbase = n * p.sx[0] + c * p.sx[1], ybase = n * p.sy[0] + c * p.sy[1];
        const int64_t my_off = i[0] * p.sx[2] + i[1] * p.sx[3] + i[2] * p.sx[4];
        float acc = 0.f;
        for (int64_t r0 = 0; r0 < p.win[0]; r0++) {
            const int64_t t0 = i[0] + p.pad_lo[0] - r0 * p.dil[0];
            if (t0 < 0 || t0 % p.stride[0] || t0 / p.stride[0] >= p.out[0])
                continue;
            for (int64_t r1 = 0; r1 < p.win[1]; r1++) {
                const int64_t t1 = i[1] + p.pad_lo[1] - r1 * p.dil[1];
                if (t1 < 0 || t1 % p.stride[1] || t1 / p.stride[1] >= p.out[1])
                    continue;
                for (int64_t r2 = 0; r2 < p.win[2]; r2++) {
                    const int64_t t2 = i[2] + p.pad_lo[2] - r2 * p.dil[2];
                    if (t2 < 0 || t2 % p.stride[2] || t2 / p.stride[2] >= p.out[2])
                        continue;
                    const int64_t o[3] = {t0 / p.stride[0], t1 / p.stride[1], t2 / p.stride[2]};
                    const float g = kld(dy, p.dt_y, ybase + o[0] * p.sy[2] + o[1] * p.sy[3] + o[2] * p.sy[4]);
                    if (p.is_max) {
                        float bv;
                        if (kp_max_tap(p, x, xbase, o[0], o[1], o[2], &bv) == my_off)
                            acc += g;
                    } else {
                        const int64_t div = kp_divisor(p, o);
                        if (div > 0)
                            acc += g / (float)div;
                    }
                }
            }
        }
        kst(dx, p.dt_dx, n * p.sdx[0] + c * p.sdx[1] + i[0] * p.sdx[2] + i[1] * p.sdx[3] + i[2] * p.sdx[4], acc);
    }
}

} /* extern "C" */

/* The geometry of the vector kernels in index type I: int32_t when every
 * count and element offset of the call fits (kp_fits_i32), int64_t otherwise.
 * Their divisions and remainders by the runtime extents were 64-bit (a
 * library call of ~70 instructions each, a dozen per element): the ResNet-50
 * stem's max-pool backward at N = 256 (205 M elements, int32 is enough) ran
 * at 535 GB/s of its bytes. */
template <typename I, bool K3S2> struct kp_ix {
    I N, C, in[3], win[3], out[3], stride[3], dil[3], pad_lo[3], sx[5], sy[5], sdx[5];
    __device__ explicit kp_ix(const kpool_params &p) : N((I)p.N), C((I)p.C)
    {
        for (int s = 0; s < 3; s++) {
            in[s] = (I)p.in[s], win[s] = (I)p.win[s], out[s] = (I)p.out[s];
            stride[s] = (I)p.stride[s], dil[s] = (I)p.dil[s], pad_lo[s] = (I)p.pad_lo[s];
        }
        for (int d = 0; d < 5; d++)
            sx[d] = (I)p.sx[d], sy[d] = (I)p.sy[d], sdx[d] = (I)p.sdx[d];
    }
    /* K3S2: 2-D (slot 0 of extent 1), a 3x3 window at stride 2, no dilation — ResNet's stem pooling, with
     * the divisions by the stride and the window loops' bounds known to the compiler (kp_is_3x3s2) */
    __device__ I In(int d) const { return K3S2 && d == 0 ? 1 : in[d]; }
    __device__ I Out(int d) const { return K3S2 && d == 0 ? 1 : out[d]; }
    __device__ I W(int d) const { return K3S2 ? (d ? 3 : 1) : win[d]; }
    __device__ I S(int d) const { return K3S2 ? (d ? 2 : 1) : stride[d]; }
    __device__ I D(int d) const { return K3S2 ? 1 : dil[d]; }
};

/* The divisors of a vector kernel's flat index split as multiply-high
 * magics (kern_fdiv.cuh), made on the host: C / V and the three spatial
 * extents the split runs over (in for the backward gather, out for the
 * forward and the winners pass).  Even in int32 the four runtime divisions
 * and remainders were ~80 instructions per chunk. */
struct kp_fast {
    kfdiv chunks, e[3];
};

static kp_fast kp_fast_make(const kpool_params *p, int64_t V, const int64_t *ext)
{
    kp_fast f;
    f.chunks = kfdiv_make((uint32_t)(p->C / V));
    for (int d = 0; d < 3; d++)
        f.e[d] = kfdiv_make((uint32_t)ext[d]);
    return f;
}

/* t / d: by the magic f in the int32 instantiations (every flat index is
 * below 2^31 there: kp_fits_i32), a division in int64. */
template <typename I> static __device__ __forceinline__ I kp_div(I t, I d, const kfdiv &f)
{
    return sizeof(I) == 4 ? (I)kfdiv_div((uint32_t)t, f) : t / d;
}

/* Flat work index t over [N, sp0, sp1, sp2, C / V] (channels innermost):
 * the first channel c of the chunk and the spatial index sp; returns n. */
template <typename I>
static __device__ __forceinline__ I kp_split_chunk(I t, I chunks, int V, I e0, I e1, I e2, const kp_fast &f,
                                                   I (&sp)[3], I &c)
{
    I q = kp_div(t, chunks, f.chunks);
    c = (t - q * chunks) * V;
    t = q;
    q = kp_div(t, e2, f.e[2]), sp[2] = t - q * e2, t = q;
    q = kp_div(t, e1, f.e[1]), sp[1] = t - q * e1, t = q;
    q = kp_div(t, e0, f.e[0]), sp[0] = t - q * e0;
    return q;
}

template <typename T> static __device__ __forceinline__ float kp_f(T v);
template <> __device__ __forceinline__ float kp_f<float>(float v) { return v; }
template <> __device__ __forceinline__ float kp_f<__half>(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float kp_f<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> static __device__ __forceinline__ T kp_t(float v);
template <> __device__ __forceinline__ float kp_t<float>(float v) { return v; }
template <> __device__ __forceinline__ __half kp_t<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 kp_t<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

/* v2: V = 16 / sizeof(T) channels per thread (see the file header). */
template <typename T, typename I, bool K3S2>
__global__ void __launch_bounds__(KP_THREADS) kpool_fwd_vec(kpool_params p, const kp_fast f, const T *__restrict__ x,
                                                            T *__restrict__ y)
{
    const kp_ix<I, K3S2> g(p);
    constexpr int V = 16 / sizeof(T);
    union chunk { uint4 q; T e[V]; };
    const int64_t total = p.N * (p.C / V) * p.out[0] * p.out[1] * p.out[2];
    const I chunks = g.C / V;
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total; t += (int64_t)gridDim.x * blockDim.x) {
        I o[3], c;
        const I n = kp_split_chunk((I)t, chunks, V, g.Out(0), g.Out(1), g.Out(2), f, o, c);
        const I o0 = o[0], o1 = o[1], o2 = o[2];
        const T *xb = x + n * g.sx[0] + c;
        float acc[V];
        bool any = false;
        for (int k = 0; k < V; k++)
            acc[k] = p.is_max ? -INFINITY : 0.f;
        for (I r0 = 0; r0 < g.W(0); r0++) {
            const I i0 = o0 * g.S(0) - g.pad_lo[0] + r0 * (p.is_max ? g.D(0) : 1);
            if (i0 < 0 || i0 >= g.In(0))
                continue;
            for (I r1 = 0; r1 < g.W(1); r1++) {
                const I i1 = o1 * g.S(1) - g.pad_lo[1] + r1 * (p.is_max ? g.D(1) : 1);
                if (i1 < 0 || i1 >= g.In(1))
                    continue;
                for (I r2 = 0; r2 < g.W(2); r2++) {
                    const I i2 = o2 * g.S(2) - g.pad_lo[2] + r2 * (p.is_max ? g.D(2) : 1);
                    if (i2 < 0 || i2 >= g.In(2))
                        continue;
                    chunk v;
                    v.q = *reinterpret_cast<const uint4 *>(xb + i0 * g.sx[2] + i1 * g.sx[3] + i2 * g.sx[4]);
                    any = true;
#pragma unroll
                    for (int k = 0; k < V; k++) {
                        const float f = kp_f<T>(v.e[k]);
                        if (!p.is_max)
                            acc[k] += f;
                        else if (!isnan(acc[k]) && (f > acc[k] || isnan(f))) /* NaN propagates */
                            acc[k] = f;
                    }
                }
            }
        }
        float div = 1.f;
        if (!p.is_max) {
            const int64_t o64[3] = {o0, o1, o2}, d = kp_divisor(p, o64);
            div = d > 0 ? (float)d : 0.f;
        }
        chunk out;
#pragma unroll
        for (int k = 0; k < V; k++)
            out.e[k] = kp_t<T>(p.is_max ? (any ? acc[k] : -INFINITY) : div > 0.f ? acc[k] / div : 0.f);
        *reinterpret_cast<uint4 *>(y + n * g.sy[0] + c + o0 * g.sy[2] + o1 * g.sy[3] + o2 * g.sy[4]) = out.q;
    }
}

/* The winning tap of window o for each of the V channels of a chunk at xb
 * (the forward's tie rule per channel: the first maximum in row-major window
 * order, replaced only by a strictly larger value or the first NaN), as the
 * tap's row-major window index; -1 for a window entirely in the padding. */
template <typename T, int V, typename I, bool K3S2>
static __device__ __forceinline__ void kp_window_winners(const kp_ix<I, K3S2> &g, const T *__restrict__ xb, const I *o,
                                                         int (&win)[V])
{
    union chunk { uint4 q; T e[V]; };
    float best[V];
#pragma unroll
    for (int k = 0; k < V; k++) {
        win[k] = -1;
        best[k] = 0.f;
    }
    for (I q0 = 0; q0 < g.W(0); q0++) {
        const I j0 = o[0] * g.S(0) - g.pad_lo[0] + q0 * g.D(0);
        if (j0 < 0 || j0 >= g.In(0))
            continue;
        for (I q1 = 0; q1 < g.W(1); q1++) {
            const I j1 = o[1] * g.S(1) - g.pad_lo[1] + q1 * g.D(1);
            if (j1 < 0 || j1 >= g.In(1))
                continue;
            for (I q2 = 0; q2 < g.W(2); q2++) {
                const I j2 = o[2] * g.S(2) - g.pad_lo[2] + q2 * g.D(2);
                if (j2 < 0 || j2 >= g.In(2))
                    continue;
                chunk v;
                v.q = *reinterpret_cast<const uint4 *>(xb + j0 * g.sx[2] + j1 * g.sx[3] + j2 * g.sx[4]);
                const int tap = (int)((q0 * g.W(1) + q1) * g.W(2) + q2);
#pragma unroll
                for (int k = 0; k < V; k++) {
                    const float f = kp_f<T>(v.e[k]);
                    if (win[k] < 0 || (!isnan(best[k]) && (f > best[k] || isnan(f)))) {
                        win[k] = tap;
                        best[k] = f;
                    }
                }
            }
        }
    }
}

/* Winner bytes per chunk: V = 8 (16-bit types) travel as a uint2, V = 4 (f32) as a uint32. */
template <int V> struct kp_win_bytes;
template <> struct kp_win_bytes<8> { typedef uint2 type; };
template <> struct kp_win_bytes<4> { typedef uint32_t type; };
enum { KP_NO_WINNER = 255 }; /* a window of only padding; window taps are < 255 when winners are stored */

/* Backward v3, first pass (maxpool): the winning tap of every window, found
 * once per window and stored as one byte per output element (w8, [N, out...,
 * C] in the order of the flat output pixel index).  v2 found them again for
 * every input pixel a window covers: 4 windows x 9 taps of 16-byte loads per
 * pixel for ResNet-50's 3x3 stride-2 stem pooling, 7.6 ms of its N = 256
 * training step (H100, 122 GB/s). */
template <typename T, typename I, bool K3S2>
__global__ void __launch_bounds__(KP_THREADS) kpool_winners_vec(kpool_params p, const kp_fast f,
                                                                const T *__restrict__ x, uint8_t *__restrict__ w8)
{
    const kp_ix<I, K3S2> g(p);
    constexpr int V = 16 / sizeof(T);
    typedef typename kp_win_bytes<V>::type wtype;
    const int64_t total = p.N * (p.C / V) * p.out[0] * p.out[1] * p.out[2];
    const I chunks = g.C / V;
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total; t += (int64_t)gridDim.x * blockDim.x) {
        I o[3], c;
        const I n = kp_split_chunk((I)t, chunks, V, g.Out(0), g.Out(1), g.Out(2), f, o, c);
        const I op = ((n * g.Out(0) + o[0]) * g.Out(1) + o[1]) * g.Out(2) + o[2]; /* flat output pixel */
        int win[V];
        kp_window_winners<T, V, I, K3S2>(g, x + n * g.sx[0] + c, o, win);
        union { wtype w; uint8_t b[V]; } out;
#pragma unroll
        for (int k = 0; k < V; k++)
            out.b[k] = win[k] < 0 ? (uint8_t)KP_NO_WINNER : (uint8_t)win[k];
        *reinterpret_cast<wtype *>(w8 + op * g.C + c) = out.w;
    }
}

/* The taps of a 3-tap stride-2 window at o along spatial slot d inside the divisor's extent (kp_divisor per dim). */
static __device__ __forceinline__ int kp_taps3(const kpool_params &p, int d, int o)
{
    const int lo = p.include_pad ? -(int)p.pad_lo[d] : 0;
    const int hi = (int)(p.include_pad ? p.in[d] + p.pad_hi[d] : p.in[d]);
    int taps = 0;
#pragma unroll
    for (int r = 0; r < 3; r++) {
        const int i = 2 * o - (int)p.pad_lo[d] + r;
        taps += i >= lo && i < hi;
    }
    return taps;
}

/* Backward v2 / v3: one thread per input pixel and 16-byte chunk of channels
 * (channels contiguous, one dtype): for every window that covers the pixel,
 * one 16-byte load of dy and, for maxpool, the window's winners for the V
 * channels: found again from x (v2, kStored false: 16-byte loads of every
 * tap) or read as V bytes that kpool_winners_vec stored (v3); then one
 * 16-byte store of dx.  v1 recomputed every window per element with scalar
 * loads: 27 GB/s on ResNet-50's stem pooling (H100). */
template <typename T, bool kStored, typename I, bool K3S2>
__global__ void __launch_bounds__(KP_THREADS)
    kpool_bwd_vec(kpool_params p, const kp_fast f, const T *__restrict__ x, const T *__restrict__ dy,
                  T *__restrict__ dx, const uint8_t *__restrict__ w8, bool quad_avg)
{
    const kp_ix<I, K3S2> g(p);
    constexpr int V = 16 / sizeof(T);
    typedef typename kp_win_bytes<V>::type wtype;
    union chunk { uint4 q; T e[V]; };
    const int64_t total = p.N * (p.C / V) * p.in[0] * p.in[1] * p.in[2];
    const I chunks = g.C / V;
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total; t += (int64_t)gridDim.x * blockDim.x) {
        I i[3], c;
        const I n = kp_split_chunk((I)t, chunks, V, g.In(0), g.In(1), g.In(2), f, i, c);
        const I i0 = i[0], i1 = i[1], i2 = i[2];
        const T *xb = x + n * g.sx[0] + c;
        const T *dyb = dy + n * g.sy[0] + c;
        float acc[V];
#pragma unroll
        for (int k = 0; k < V; k++)
            acc[k] = 0.f;
        /* 3x3 stride 2: the at most 2 x 2 windows over the pixel enumerated (max with stored winners; avgpool
         * unless XDNN_POOL_ROLL=0, where each window's divisor was kp_divisor's 64-bit loops: 35 % of copy) */
        const bool quad = K3S2 && (kStored || (quad_avg && !p.is_max));
        if (quad) {
            /* the windows that cover row a - p at stride 2, window 3: o with 2o <= a <= 2o + 2, at most two per
             * dim, tap a - 2o; descending o, the order in which the tap loop below meets them (tap
             * ascending), so the sums are the same.  v3 tested all 9 taps with their bounds. */
            const I a1 = i1 + g.pad_lo[1], a2 = i2 + g.pad_lo[2];
            const I hi1 = min(a1 >> 1, g.out[1] - 1), lo1 = max((a1 - 1) >> 1, (I)0);
            const I hi2 = min(a2 >> 1, g.out[2] - 1), lo2 = max((a2 - 1) >> 1, (I)0);
#pragma unroll
            for (int j1 = 0; j1 < 2; j1++) /* trip counts the compiler can see: no loop of unknown length */
#pragma unroll
                for (int j2 = 0; j2 < 2; j2++) {
                    const I o1 = hi1 - j1, o2 = hi2 - j2;
                    if (o1 < lo1 || o2 < lo2)
                        continue;
                    chunk dyv;
                    dyv.q = *reinterpret_cast<const uint4 *>(dyb + o1 * g.sy[3] + o2 * g.sy[4]);
                    if (!kStored) { /* avgpool: kp_divisor of (o1, o2), the taps inside per dim */
                        const float d = (float)(kp_taps3(p, 1, o1) * kp_taps3(p, 2, o2));
#pragma unroll
                        for (int k = 0; k < V; k++)
                            acc[k] += d > 0 ? kp_f<T>(dyv.e[k]) / d : 0.f;
                        continue;
                    }
                    const int mine = (int)((a1 - 2 * o1) * 3 + (a2 - 2 * o2));
                    const I op = (n * g.out[1] + o1) * g.out[2] + o2;
                    union { wtype w; uint8_t b[V]; } wb;
                    wb.w = *reinterpret_cast<const wtype *>(w8 + op * g.C + c);
#pragma unroll
                    for (int k = 0; k < V; k++)
                        if (wb.b[k] == mine)
                            acc[k] += kp_f<T>(dyv.e[k]);
                }
        }
        for (I r0 = 0; r0 < (quad ? 0 : g.W(0)); r0++) {
            const I t0 = i0 + g.pad_lo[0] - r0 * g.D(0);
            if (t0 < 0 || t0 % g.S(0) || t0 / g.S(0) >= g.Out(0))
                continue;
            for (I r1 = 0; r1 < g.W(1); r1++) {
                const I t1 = i1 + g.pad_lo[1] - r1 * g.D(1);
                if (t1 < 0 || t1 % g.S(1) || t1 / g.S(1) >= g.Out(1))
                    continue;
                for (I r2 = 0; r2 < g.W(2); r2++) {
                    const I t2 = i2 + g.pad_lo[2] - r2 * g.D(2);
                    if (t2 < 0 || t2 % g.S(2) || t2 / g.S(2) >= g.Out(2))
                        continue;
                    const I o[3] = {t0 / g.S(0), t1 / g.S(1), t2 / g.S(2)};
                    chunk dyv;
                    dyv.q = *reinterpret_cast<const uint4 *>(dyb + o[0] * g.sy[2] + o[1] * g.sy[3] + o[2] * g.sy[4]);
                    if (!p.is_max) {
                        const int64_t o64[3] = {o[0], o[1], o[2]}, d = kp_divisor(p, o64);
#pragma unroll
                        for (int k = 0; k < V; k++)
                            acc[k] += d > 0 ? kp_f<T>(dyv.e[k]) / (float)d : 0.f;
                        continue;
                    }
                    /* o's winner per channel: the tap index in row-major window order */
                    const int mine = (int)((r0 * g.W(1) + r1) * g.W(2) + r2);
                    int win[V];
                    if (kStored) {
                        const I op = ((n * g.Out(0) + o[0]) * g.Out(1) + o[1]) * g.Out(2) + o[2];
                        union { wtype w; uint8_t b[V]; } wb;
                        wb.w = *reinterpret_cast<const wtype *>(w8 + op * g.C + c);
#pragma unroll
                        for (int k = 0; k < V; k++)
                            win[k] = wb.b[k];
                    } else {
                        kp_window_winners<T, V, I, K3S2>(g, xb, o, win);
                    }
#pragma unroll
                    for (int k = 0; k < V; k++)
                        if (win[k] == mine)
                            acc[k] += kp_f<T>(dyv.e[k]);
                }
            }
        }
        chunk out;
#pragma unroll
        for (int k = 0; k < V; k++)
            out.e[k] = kp_t<T>(acc[k]);
        *reinterpret_cast<uint4 *>(dx + n * g.sdx[0] + c + i0 * g.sdx[2] + i1 * g.sdx[3] + i2 * g.sdx[4]) = out.q;
    }
}

/* Does v2 apply? (same dtype, channels contiguous, every stride in whole chunks, aligned buffers) */
static bool kp_vec_ok(const kpool_params *p, const void *x, const void *y, int64_t V)
{
    if (p->dt_x != p->dt_y || p->sx[1] != 1 || p->sy[1] != 1 || p->C % V || (uintptr_t)x % 16 || (uintptr_t)y % 16)
        return false;
    for (int d = 0; d < 5; d++)
        if (d != 1 && (p->sx[d] % V || p->sy[d] % V))
            return false;
    return true;
}

/* Does every count and element offset of the call fit int32_t (kp_ix)?  The
 * element counts of x and y (the flat work indices stay below them) and the
 * spans of x, y (dy) and dx through their strides. */
static bool kp_fits_i32(const kpool_params *p)
{
    const int64_t ext_x[5] = {p->N, p->C, p->in[0], p->in[1], p->in[2]};
    const int64_t ext_y[5] = {p->N, p->C, p->out[0], p->out[1], p->out[2]};
    int64_t span_x = 1, span_y = 1, span_dx = 1, n_x = 1, n_y = 1;
    for (int d = 0; d < 5; d++) {
        span_x += (ext_x[d] - 1) * llabs(p->sx[d]);
        span_y += (ext_y[d] - 1) * llabs(p->sy[d]);
        span_dx += (ext_x[d] - 1) * llabs(p->sdx[d]);
        n_x *= ext_x[d];
        n_y *= ext_y[d];
    }
    const int64_t lim = INT32_MAX;
    return span_x < lim && span_y < lim && span_dx < lim && n_x < lim && n_y < lim;
}

/* ResNet's stem pooling (kp_ix's K3S2): 2-D, 3x3 at stride 2, no dilation; any padding of the two real
 * dims (slot 0 unpadded: kpool_bwd_vec's K3S2 gather takes its one window as covering row 0). */
static bool kp_is_3x3s2(const kpool_params *p)
{
    return p->in[0] == 1 && p->out[0] == 1 && p->win[0] == 1 && p->pad_lo[0] == 0 && p->win[1] == 3 &&
           p->win[2] == 3 &&
           p->stride[1] == 2 && p->stride[2] == 2 && p->dil[1] == 1 && p->dil[2] == 1;
}

/* v3 (see the file header): RR output rows per thread; 2 (the default) reads 5 input rows for 2 output rows,
 * 4 (XDNN_POOL_ROLL_ROWS=4) 9 for 4 with half the threads (fewer waves: more of a partial last one). */

/* The walk is one skeleton (kpool_roll3x3s2) over a policy that reduces a row's 3 taps (row), merges a window
 * row into the window (take: rows in window order, `first` = the row's first tap) and stores (store):
 *  KpRollMax16: max forward of 16-bit types, 4 packed pairs per chunk (max.NaN: the value is the first maximum's;
 *     the scalar compares below held 64 registers, 4 blocks of 256 per SM);
 *  KpRollMax<T, kWinners>: the first maximum with its tap (2 bits of column, 4 of tap per channel), the forward of
 *     f32 or the backward's winners (one byte per channel);
 *  KpRollAvg: sums per row, then the rows; the divisor of v2. */
template <typename T> struct kp_pair;
template <> struct kp_pair<__half> { typedef __half2 t; };
template <> struct kp_pair<__nv_bfloat16> { typedef __nv_bfloat162 t; };

/* One row's 3 taps (columns cols, valid: ok), loaded together; false when none lies in x. */
template <typename T>
static __device__ __forceinline__ int kp_roll_load(const T *__restrict__ xr, bool row_ok, const int (&cols)[3],
                                                   const bool (&ok)[3], int sxw, uint4 (&t)[3])
{
#pragma unroll
    for (int q = 0; q < 3; q++)
        t[q] = row_ok && ok[q] ? *reinterpret_cast<const uint4 *>(xr + cols[q] * sxw) : make_uint4(0, 0, 0, 0);
    return row_ok && (ok[0] || ok[1] || ok[2]);
}

template <typename T> struct KpRollMax16 {
    enum { kMinBlocks = 5 }; /* blocks of 256 per SM the registers allow (__launch_bounds__; 6 spilled) */
    typedef typename kp_pair<T>::t P;
    struct acc { P m[4]; };
    static __device__ __forceinline__ bool row(const T *xr, bool row_ok, const int (&cols)[3], const bool (&ok)[3],
                                               int sxw, acc &a)
    {
        uint4 t[3];
        const bool any = kp_roll_load<T>(xr, row_ok, cols, ok, sxw, t);
        bool have = false;
#pragma unroll
        for (int q = 0; q < 3; q++) {
            if (!row_ok || !ok[q])
                continue;
            const P *e = reinterpret_cast<const P *>(&t[q]);
#pragma unroll
            for (int k = 0; k < 4; k++)
                a.m[k] = have ? __hmax2_nan(a.m[k], e[k]) : e[k];
            have = true;
        }
        return any;
    }
    static __device__ __forceinline__ void take(acc &a, bool &have, const acc &r, bool h, int first)
    {
#pragma unroll
        for (int k = 0; k < 4 && h; k++)
            a.m[k] = have ? __hmax2_nan(a.m[k], r.m[k]) : r.m[k];
        have |= h;
    }
    static __device__ __forceinline__ void store(const kpool_params &p, T *y, uint8_t *w8, int y_off, int op, int c,
                                                 int oh, int ow, const acc &a, bool have)
    {
        union { uint4 q; P e[4]; } out;
        const T ninf = kp_t<T>(-INFINITY);
#pragma unroll
        for (int k = 0; k < 4; k++)
            out.e[k] = have ? a.m[k] : P(ninf, ninf);
        *reinterpret_cast<uint4 *>(y + y_off) = out.q;
    }
};

template <typename T, bool kWinners> struct KpRollMax {
    enum { V = 16 / sizeof(T), kMinBlocks = 3 }; /* 4 spilled */
    struct acc { float v[V]; uint32_t bits; }; /* row: 2 bits of column per channel; window: 4 bits of tap */
    static __device__ __forceinline__ bool row(const T *xr, bool row_ok, const int (&cols)[3], const bool (&ok)[3],
                                               int sxw, acc &a)
    {
        union chunk { uint4 q; T e[V]; } t[3];
        uint4 raw[3];
        const bool any = kp_roll_load<T>(xr, row_ok, cols, ok, sxw, raw);
        bool have = false;
        a.bits = 0;
#pragma unroll
        for (int q = 0; q < 3; q++) {
            if (!row_ok || !ok[q])
                continue;
            t[q].q = raw[q];
#pragma unroll
            for (int k = 0; k < V; k++) {
                const float f = kp_f<T>(t[q].e[k]);
                if (!have || (!isnan(a.v[k]) && (f > a.v[k] || isnan(f)))) { /* v2's rule: first max, first NaN */
                    a.v[k] = f;
                    a.bits = (a.bits & ~(3u << 2 * k)) | (uint32_t)q << 2 * k;
                }
            }
            have = true;
        }
        return any;
    }
    static __device__ __forceinline__ void take(acc &a, bool &have, const acc &r, bool h, int first)
    {
#pragma unroll
        for (int k = 0; k < V && h; k++)
            if (!have || (!isnan(a.v[k]) && (r.v[k] > a.v[k] || isnan(r.v[k])))) { /* the window's first row wins */
                a.v[k] = r.v[k];
                a.bits = (a.bits & ~(15u << 4 * k)) | ((((r.bits >> 2 * k) & 3u) + (uint32_t)first) << 4 * k);
            }
        have |= h;
    }
    static __device__ __forceinline__ void store(const kpool_params &p, T *y, uint8_t *w8, int y_off, int op, int c,
                                                 int oh, int ow, const acc &a, bool have)
    {
        if (kWinners) {
            typedef typename kp_win_bytes<V>::type wtype;
            union { wtype w; uint8_t b[V]; } out;
#pragma unroll
            for (int k = 0; k < V; k++)
                out.b[k] = have ? (uint8_t)((a.bits >> 4 * k) & 15u) : (uint8_t)KP_NO_WINNER;
            *reinterpret_cast<wtype *>(w8 + op * p.C + c) = out.w;
        } else {
            union { uint4 q; T e[V]; } out;
#pragma unroll
            for (int k = 0; k < V; k++)
                out.e[k] = kp_t<T>(have ? a.v[k] : -INFINITY);
            *reinterpret_cast<uint4 *>(y + y_off) = out.q;
        }
    }
};

template <typename T> struct KpRollAvg {
    enum { V = 16 / sizeof(T), kMinBlocks = 4 };
    struct acc { float v[V]; };
    static __device__ __forceinline__ bool row(const T *xr, bool row_ok, const int (&cols)[3], const bool (&ok)[3],
                                               int sxw, acc &a)
    {
        union chunk { uint4 q; T e[V]; } t[3];
        uint4 raw[3];
        const bool any = kp_roll_load<T>(xr, row_ok, cols, ok, sxw, raw);
#pragma unroll
        for (int k = 0; k < V; k++)
            a.v[k] = 0.f;
#pragma unroll
        for (int q = 0; q < 3; q++) {
            t[q].q = raw[q];
            if (row_ok && ok[q])
#pragma unroll
                for (int k = 0; k < V; k++)
                    a.v[k] += kp_f<T>(t[q].e[k]);
        }
        return any;
    }
    static __device__ __forceinline__ void take(acc &a, bool &have, const acc &r, bool h, int first)
    {
#pragma unroll
        for (int k = 0; k < V && h; k++)
            a.v[k] = have ? a.v[k] + r.v[k] : r.v[k];
        have |= h;
    }
    static __device__ __forceinline__ void store(const kpool_params &p, T *y, uint8_t *w8, int y_off, int op, int c,
                                                 int oh, int ow, const acc &a, bool have)
    {
        const int64_t o64[3] = {0, oh, ow}, d = kp_divisor(p, o64);
        const float div = d > 0 ? (float)d : 0.f;
        union { uint4 q; T e[V]; } out;
#pragma unroll
        for (int k = 0; k < V; k++)
            out.e[k] = kp_t<T>(have && div > 0.f ? a.v[k] / div : 0.f);
        *reinterpret_cast<uint4 *>(y + y_off) = out.q;
    }
};

template <typename T, class Pol, int RR>
__global__ void __launch_bounds__(KP_THREADS, Pol::kMinBlocks)
    kpool_roll3x3s2(kpool_params p, const kp_fast f, const T *__restrict__ x, T *__restrict__ y, uint8_t *__restrict__ w8)
{
    typedef typename Pol::acc acc;
    const kp_ix<int32_t, true> g(p);
    constexpr int V = 16 / sizeof(T);
    const int chunks = g.C / V, segs = (g.out[1] + RR - 1) / RR;
    const int64_t total = (int64_t)g.N * segs * g.out[2] * chunks;
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total; t += (int64_t)gridDim.x * blockDim.x) {
        int32_t sp[3], c;
        const int32_t n = kp_split_chunk((int32_t)t, chunks, V, 1, segs, g.out[2], f, sp, c);
        const int ow = sp[2], oh0 = sp[1] * RR, oh1 = min(oh0 + RR, (int)g.out[1]);
        const T *xb = x + n * g.sx[0] + c;
        int cols[3];
        bool ok[3];
#pragma unroll
        for (int q = 0; q < 3; q++) {
            cols[q] = 2 * ow - g.pad_lo[2] + q;
            ok[q] = cols[q] >= 0 && cols[q] < g.in[2];
        }
        /* the carried row: window row 0 of the next output row (row 2 of the one before), reduced */
        acc carried;
        int r = 2 * oh0 - g.pad_lo[1];
        bool chave = Pol::row(xb + r * g.sx[3], r >= 0 && r < g.in[1], cols, ok, g.sx[4], carried);
#pragma unroll
        for (int j = 0; j < RR; j++) {
            const int oh = oh0 + j;
            if (oh >= oh1)
                break;
            r = 2 * oh - g.pad_lo[1];
            acc r1, r2, a;
            const bool h1 = Pol::row(xb + (r + 1) * g.sx[3], r + 1 >= 0 && r + 1 < g.in[1], cols, ok, g.sx[4], r1);
            const bool h2 = Pol::row(xb + (r + 2) * g.sx[3], r + 2 >= 0 && r + 2 < g.in[1], cols, ok, g.sx[4], r2);
            bool have = false;
            Pol::take(a, have, carried, chave, 0); /* rows in window order */
            Pol::take(a, have, r1, h1, 3);
            Pol::take(a, have, r2, h2, 6);
            Pol::store(p, y, w8, n * g.sy[0] + c + oh * g.sy[3] + ow * g.sy[4], (n * g.out[1] + oh) * g.out[2] + ow,
                       c, oh, ow, a, have);
            carried = r2;
            chave = h2;
        }
    }
}

/* v3's switch: XDNN_POOL_ROLL=0 keeps v2 (and v2's winners pass), read once. */
static bool kp_roll_on(void)
{
    static const char *const e = getenv("XDNN_POOL_ROLL");
    return !e || strcmp(e, "0") != 0;
}

/* Output rows per thread of the walk: 2, or 4 with XDNN_POOL_ROLL_ROWS=4, read once (A/B).  Session 12's second
 * call, bf16 64x256x56x56 3x3 s2: max 0.0503 ms with 2 rows, 0.0556 with 4 (5 blocks per SM: 2.4 waves of 4-row
 * threads against 4.8 of 2-row ones); avg 0.0655 / 0.0649. */
static int kp_roll_rows(void)
{
    static const char *const e = getenv("XDNN_POOL_ROLL_ROWS");
    return e && atoi(e) == 4 ? 4 : 2;
}

/* v3 over a 3x3 stride-2 call that fits int32 (kp_is_3x3s2, kp_fits_i32) with policy Pol. */
template <typename T, class Pol>
static void kp_roll_launch(const kpool_params *p, const T *x, T *y, uint8_t *w8, cudaStream_t s)
{
    const int rr = kp_roll_rows();
    const int64_t V = 16 / sizeof(T), segs = (p->out[1] + rr - 1) / rr;
    const int64_t ext[3] = {1, segs, p->out[2]};
    const kp_fast f = kp_fast_make(p, V, ext);
    const unsigned grid = kgrid(p->N * segs * p->out[2] * (p->C / V), KP_THREADS);
    if (rr == 2)
        kpool_roll3x3s2<T, Pol, 2><<<grid, KP_THREADS, 0, s>>>(*p, f, x, y, w8);
    else
        kpool_roll3x3s2<T, Pol, 4><<<grid, KP_THREADS, 0, s>>>(*p, f, x, y, w8);
}

template <typename T> static void kp_roll_max_go(const kpool_params *p, const T *x, T *y, cudaStream_t s)
{
    kp_roll_launch<T, KpRollMax16<T> >(p, x, y, NULL, s);
}

static void kp_roll_max_go(const kpool_params *p, const float *x, float *y, cudaStream_t s)
{
    kp_roll_launch<float, KpRollMax<float, false> >(p, x, y, NULL, s);
}

/* The backward's winners from v3's walk too: XDNN_POOL_ROLL_WINNERS=1 (read once; by default v2's winners pass,
 * session 12's first call: the walk's winners held 92 registers and lost, 0.167 against 0.136 ms). */
static bool kp_roll_winners_on(void)
{
    static const char *const e = getenv("XDNN_POOL_ROLL_WINNERS");
    return e && strcmp(e, "0") != 0;
}

/* v3: y (forward), or w8 (the winners). */
template <typename T>
static void kp_roll_go(const kpool_params *p, const T *x, T *y, uint8_t *w8, cudaStream_t s)
{
    if (w8)
        kp_roll_launch<T, KpRollMax<T, true> >(p, x, NULL, w8, s);
    else if (!p->is_max)
        kp_roll_launch<T, KpRollAvg<T> >(p, x, y, NULL, s);
    else
        kp_roll_max_go(p, x, y, s);
}

/* The blocks of v4 along a dim of extent n padded by pad in front (padded rows 2b + 1, 2b + 2 with one inside x):
 * how many, from b = *lo. */
static __host__ __device__ __forceinline__ int kpw_blocks(int n, int pad, int *lo)
{
    *lo = (pad - 1) >> 1;
    return ((n + pad - 2) >> 1) - *lo + 1;
}

/* The walks' work (kpool_bwd_walk, kpool_bwd_wide, kpool_avg_bwd_walk): an item per image, run of S blocks down a
 * block column, block column and chunk of V channels, split by kp_fast over {1, segs, nq} (kpw_grid). */
struct kpw_walk {
    int H, W, OH, OW, ph, pw, b_lo, q_lo, nb, nq, chunks, segs;
    int64_t total;
    __device__ __forceinline__ kpw_walk(const kp_ix<int32_t, true> &g, int V, int S)
        : H(g.in[1]), W(g.in[2]), OH(g.out[1]), OW(g.out[2]), ph(g.pad_lo[1]), pw(g.pad_lo[2])
    {
        nb = kpw_blocks(H, ph, &b_lo);
        nq = kpw_blocks(W, pw, &q_lo);
        chunks = g.C / V;
        segs = (nb + S - 1) / S;
        total = (int64_t)g.N * segs * nq * chunks;
    }
    /* item t: its image (returned), channel c, block column q and blocks b0 .. b_end - 1 */
    __device__ __forceinline__ int32_t item(int64_t t, const kp_fast &f, int V, int S, int32_t &c, int &q, int &b0,
                                            int &b_end) const
    {
        int32_t sp[3];
        const int32_t n = kp_split_chunk((int32_t)t, chunks, V, 1, segs, nq, f, sp, c);
        q = q_lo + sp[2];
        b0 = b_lo + sp[1] * S;
        b_end = min(b0 + S, b_lo + nb);
        return n;
    }
};

/* The walks' grid and the kp_fast that splits their work index (kpw_walk), one thread an item. */
static unsigned kpw_grid(const kpool_params *p, int S, int64_t V, kp_fast *f)
{
    int lo;
    const int64_t segs = (kpw_blocks((int)p->in[1], (int)p->pad_lo[1], &lo) + S - 1) / S;
    const int64_t ext[3] = {1, segs, kpw_blocks((int)p->in[2], (int)p->pad_lo[2], &lo)};
    *f = kp_fast_make(p, V, ext);
    return kgrid(p->N * segs * ext[2] * (p->C / V), KP_THREADS);
}

/* v4, the max-pooling backward of 3x3 stride-2 windows in one pass (kpool_bwd_walk; XDNN_POOL_BWD_WALK=0 keeps v3's
 * two passes).  In padded coordinates (i + pad_lo) the windows over rows 2b + 1 and 2b + 2 are window rows b and
 * b + 1 alone (columns alike), so a thread owns that 2 x 2 block of pixels (b, q) for 8 bytes of channels and walks
 * down S blocks: each step finds the winners of windows (b + 1, q) and (b + 1, q + 1) from padded rows 2b + 2 ..
 * 2b + 4 and columns 2q .. 2q + 4, reads their dy, and writes block b's dx from them and from window row b's winners
 * and dy, carried from the step before, as is the running state of row 2b + 4 (row 0 of window row b + 2).  x comes
 * from DRAM once (the row and column shared with neighbouring threads through L1 / L2), dy once, dx is written once;
 * v3 wrote and read a byte per window and channel between its two passes (52-57 % of copy).  Winners stream in
 * row-major window order with pool.c's rule (a later tap wins only when strictly larger, or as the first NaN), as
 * masks on packed pairs for the 16-bit types, the tap a byte per channel; a window whose taps are all -inf keeps its
 * first tap inside x, as the reference does.  dx sums up to 4 dy in f32 in window order, the reference's order.
 * 8 bytes a thread (KPW_LANES): with 16 the four windows' state and a row's 5 chunks held 141 registers, spilling
 * at 64; with 8, 64 and 4 blocks of 256 per SM. */
enum { KPW_LANES = 2, KPW_NONE = 15 }; /* 32-bit lanes a thread; the tap of no window (past the output, or padding) */

/* A 32-bit lane of channels: a packed pair of a 16-bit type (E = 2 channels), or one float. */
template <typename T> struct KpwLane {
    enum { E = 2 };
    typedef typename kp_pair<T>::t P;
    static __device__ __forceinline__ P pair(uint32_t u)
    {
        union { uint32_t u; P p; } v;
        v.u = u;
        return v.p;
    }
    /* per channel, all ones where tap t replaces the running maximum m (strictly larger, or NaN over a number) */
    static __device__ __forceinline__ uint32_t wins(uint32_t t, uint32_t m)
    {
        return __hgtu2_mask(pair(t), pair(m)) & ~__hneu2_mask(pair(m), pair(m));
    }
    /* the masks of lanes a, b as a byte per channel (a's in bytes 0-1, b's in 2-3) */
    static __device__ __forceinline__ uint32_t bytes(uint32_t a, uint32_t b) { return __byte_perm(a, b, 0x6420); }
    static __device__ __forceinline__ uint32_t ninf()
    {
        union { T e[2]; uint32_t u; } v;
        v.e[0] = v.e[1] = kp_t<T>(-INFINITY);
        return v.u;
    }
};

template <> struct KpwLane<float> {
    enum { E = 1 };
    static __device__ __forceinline__ uint32_t wins(uint32_t t, uint32_t m)
    {
        const float a = __uint_as_float(t), b = __uint_as_float(m);
        return a > b || (isnan(a) && !isnan(b)) ? ~0u : 0u;
    }
    static __device__ __forceinline__ uint32_t bytes(uint32_t a, uint32_t b) { return __byte_perm(a, b, 0x4040); }
    static __device__ __forceinline__ uint32_t ninf() { return __float_as_uint(-INFINITY); }
};

/* One window's running maxima (per lane) and their taps (row-major window index, a byte per channel: channel i in
 * byte i % (2E) of code[i / (2E)]). */
template <int NL> struct kpw_win {
    uint32_t m[NL], code[NL / 2];
};

/* NL lanes of a thread's channels, loaded and stored in one access */
template <int NL> struct alignas(4 * NL) kpw_vec {
    uint32_t w[NL];
};

/* The first index inside [0, n) of a 3-tap run starting at i0, relative to i0, or -1. */
static __device__ __forceinline__ int kpw_first(int i0, int n)
{
    const int r = max(0, -i0);
    return r < 3 && i0 + r < n ? r : -1;
}

/* A window before its taps: no maximum yet (-inf) and its first tap inside x as the winner, which a window of -inf
 * keeps, as the reference's first tap; KPW_NONE when no tap is inside. */
template <typename T, int NL>
static __device__ __forceinline__ void kpw_start(kpw_win<NL> &w, int row0, int H, int col_first)
{
    const int rf = kpw_first(row0, H);
    const uint32_t tap = rf >= 0 && col_first >= 0 ? (uint32_t)(3 * rf + col_first) : (uint32_t)KPW_NONE;
#pragma unroll
    for (int k = 0; k < NL; k++)
        w.m[k] = KpwLane<T>::ninf();
#pragma unroll
    for (int h = 0; h < NL / 2; h++)
        w.code[h] = tap * 0x01010101u;
}

template <typename T, int NL>
static __device__ __forceinline__ void kpw_take(kpw_win<NL> &w, const kpw_vec<NL> &t, uint32_t tap)
{
    typedef KpwLane<T> L;
    uint32_t win[NL];
#pragma unroll
    for (int k = 0; k < NL; k++) {
        win[k] = L::wins(t.w[k], w.m[k]);
        w.m[k] = (w.m[k] & ~win[k]) | (t.w[k] & win[k]);
    }
#pragma unroll
    for (int h = 0; h < NL / 2; h++) {
        const uint32_t b = L::bytes(win[2 * h], win[2 * h + 1]);
        w.code[h] = (w.code[h] & ~b) | (tap * 0x01010101u & b);
    }
}

/* Row xr (inside x: row_ok; xr at column 2q of the padded row) as tap row tr of windows l (columns 0..2 of the 5)
 * and r (columns 2..4), and with kNext as tap row 0 of nl and nr. */
template <typename T, int NL, bool kNext>
static __device__ __forceinline__ void kpw_row(const T *__restrict__ xr, bool row_ok, int sxw, const bool (&ok)[5],
                                               uint32_t tr, kpw_win<NL> &l, kpw_win<NL> &r, kpw_win<NL> &nl,
                                               kpw_win<NL> &nr)
{
    kpw_vec<NL> t[5];
#pragma unroll
    for (int j = 0; j < 5; j++)
        if (row_ok && ok[j])
            t[j] = *reinterpret_cast<const kpw_vec<NL> *>(xr + j * sxw);
#pragma unroll
    for (int j = 0; j < 5; j++) {
        if (!row_ok || !ok[j])
            continue;
        if (j <= 2)
            kpw_take<T, NL>(l, t[j], 3 * tr + j);
        if (j >= 2)
            kpw_take<T, NL>(r, t[j], 3 * tr + j - 2);
        if (kNext && j <= 2)
            kpw_take<T, NL>(nl, t[j], j);
        if (kNext && j >= 2)
            kpw_take<T, NL>(nr, t[j], j - 2);
    }
}

/* dx of one pixel: the dy of up to 4 windows (code: their winners, KPW_NONE-filled for no window) where the pixel
 * is their winning tap, in f32, stored when the pixel is inside x. */
template <typename T, int NL> struct kpw_pix {
    enum { V = NL * KpwLane<T>::E, CPW = 2 * KpwLane<T>::E };
    float acc[V];
    __device__ __forceinline__ kpw_pix()
    {
#pragma unroll
        for (int i = 0; i < V; i++)
            acc[i] = 0.f;
    }
    __device__ __forceinline__ kpw_pix &add(const uint32_t (&code)[NL / 2], uint32_t tap, const kpw_vec<NL> &dyv)
    {
        union { kpw_vec<NL> q; T e[V]; } d;
        d.q = dyv;
#pragma unroll
        for (int i = 0; i < V; i++)
            if (((code[i / CPW] >> 8 * (i % CPW)) & 0xffu) == tap)
                acc[i] += kp_f<T>(d.e[i]);
        return *this;
    }
    __device__ __forceinline__ void store(T *dst, bool ok) const
    {
        union { kpw_vec<NL> q; T e[V]; } out;
#pragma unroll
        for (int i = 0; i < V; i++)
            out.e[i] = kp_t<T>(acc[i]);
        if (ok)
            *reinterpret_cast<kpw_vec<NL> *>(dst) = out.q;
    }
};

template <typename T, int NL>
__global__ void __launch_bounds__(KP_THREADS, 4)
    kpool_bwd_walk(kpool_params p, const kp_fast f, int S, const T *__restrict__ x, const T *__restrict__ dy,
                   T *__restrict__ dx)
{
    const kp_ix<int32_t, true> g(p);
    constexpr int V = NL * KpwLane<T>::E;
    const kpw_walk w(g, V, S);
    const int H = w.H, W = w.W, OH = w.OH, OW = w.OW, ph = w.ph, pw = w.pw;
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < w.total; t += (int64_t)gridDim.x * blockDim.x) {
        int32_t c;
        int q, b0, b_end;
        const int32_t n = w.item(t, f, V, S, c, q, b0, b_end);
        /* padded columns 2q .. 2q + 4 of the two windows (input column c0 + j); the block's are 2q + 1, 2q + 2 */
        const int c0 = 2 * q - pw;
        bool ok[5];
#pragma unroll
        for (int j = 0; j < 5; j++)
            ok[j] = c0 + j >= 0 && c0 + j < W;
        const int fl = kpw_first(c0, W), fr = kpw_first(c0 + 2, W);
        const bool out_l = q >= 0 && q < OW, out_r = q + 1 < OW;
        const T *xb = x + n * g.sx[0] + c + c0 * g.sx[4];
        const T *dyb = dy + n * g.sy[0] + c + q * g.sy[4];
        T *dxb = dx + n * g.sdx[0] + c + (c0 + 1) * g.sdx[4];
        kpw_win<NL> wl, wr; /* window row b + 1 */
        int r = 2 * b0 - ph;
        kpw_start<T, NL>(wl, r, H, fl);
        kpw_start<T, NL>(wr, r, H, fr);
        kpw_row<T, NL, false>(xb + r * g.sx[3], r >= 0 && r < H, g.sx[4], ok, 0, wl, wr, wl, wr);
        uint32_t pl[NL / 2] = {}, pr[NL / 2] = {}; /* window row b: winners and dy */
        kpw_vec<NL> dpl = {}, dpr = {};
#pragma unroll 1
        for (int b = b0 - 1; b < b_end; b++) {
            /* window row b + 1 has its row 0: rows 1 and 2 (r, r + 1); row 2 is row 0 of window row b + 2 */
            r = 2 * b + 3 - ph;
            kpw_row<T, NL, false>(xb + r * g.sx[3], r >= 0 && r < H, g.sx[4], ok, 1, wl, wr, wl, wr);
            kpw_win<NL> nl, nr;
            kpw_start<T, NL>(nl, r + 1, H, fl);
            kpw_start<T, NL>(nr, r + 1, H, fr);
            kpw_row<T, NL, true>(xb + (r + 1) * g.sx[3], r + 1 >= 0 && r + 1 < H, g.sx[4], ok, 2, wl, wr, nl, nr);
            const int o = b + 1;
            const bool in_l = o >= 0 && o < OH && out_l, in_r = o >= 0 && o < OH && out_r;
            kpw_vec<NL> dcl = {}, dcr = {};
            if (in_l)
                dcl = *reinterpret_cast<const kpw_vec<NL> *>(dyb + o * g.sy[3]);
            if (in_r)
                dcr = *reinterpret_cast<const kpw_vec<NL> *>(dyb + o * g.sy[3] + g.sy[4]);
            const uint32_t none = KPW_NONE * 0x01010101u;
            uint32_t cl[NL / 2], cr[NL / 2];
#pragma unroll
            for (int h = 0; h < NL / 2; h++) {
                cl[h] = in_l ? wl.code[h] : none;
                cr[h] = in_r ? wr.code[h] : none;
            }
            if (b >= b0) {
                /* block b: its pixels (i, j) are taps (1 + i, 1 + j) of window (b, q), (1 + i, j - 1) of (b, q + 1),
                 * (i - 1, 1 + j) of (b + 1, q) and (i - 1, j - 1) of (b + 1, q + 1) */
                const int i0 = 2 * b + 1 - ph;
                T *d0 = dxb + i0 * g.sdx[3], *d1 = d0 + g.sdx[3];
                const bool ok0 = i0 >= 0 && i0 < H, ok1 = i0 + 1 >= 0 && i0 + 1 < H;
                kpw_pix<T, NL>().add(pl, 4, dpl).store(d0, ok0 && ok[1]);
                kpw_pix<T, NL>().add(pl, 5, dpl).add(pr, 3, dpr).store(d0 + g.sdx[4], ok0 && ok[2]);
                kpw_pix<T, NL>().add(pl, 7, dpl).add(cl, 1, dcl).store(d1, ok1 && ok[1]);
                kpw_pix<T, NL>().add(pl, 8, dpl).add(pr, 6, dpr).add(cl, 2, dcl).add(cr, 0, dcr).store(d1 + g.sdx[4],
                                                                                                    ok1 && ok[2]);
            }
#pragma unroll
            for (int h = 0; h < NL / 2; h++)
                pl[h] = cl[h], pr[h] = cr[h];
            dpl = dcl, dpr = dcr;
            wl = nl, wr = nr;
        }
    }
}

/* v5, v4's walk with 16 bytes of channels a thread (kpool_bwd_wide; XDNN_POOL_BWD_WIDE=0 keeps v4's 8): v4's
 * bookkeeping held 141 registers at 16 bytes, so the state is recast to fit ~80 (3 blocks of 256 per SM) with
 * fewer instructions a byte:
 *  - an input row's 3 taps under each of the two windows are reduced once (the first maximum and its column),
 *    then merged into the window as its tap row (strictly larger or the first NaN replaces: the first maximum in
 *    row-major order is the first row maximum of the first row holding it, v3's rule); the row shared with the
 *    next window row is that row's row 0 as reduced: 12 compare steps a lane and step against v4's 18 taps;
 *  - the taps are numbers in f16 in the lanes' layout (a pair a 32-bit lane of 16-bit channels; an integer for
 *    f32), so one packed compare is a tap's mask over a lane of dy;
 *  - a pixel's dx sums the masked dy (a loser's +0 changes no sum): one window: dy + 0 (the reference's 0 + dy
 *    makes -0 +0); two: (a + b) + 0 in the dtype, one rounding, the reference's double sum rounded once more
 *    (innocuous: <= 24-bit values); four (a block's lower right pixel) in f32 in window order, as v4;
 *  - the lower pixels' shares of the window row above are carried as masked dy (3 lanes), not winners and dy.
 * Columns outside x read as -inf (never strictly larger: the reduction's start, the first column inside, stays);
 * rows outside x are skipped, a window's first row inside starting it. */
static __host__ __device__ constexpr uint32_t kpv_f16(int k) /* the f16 bits of k, 0 <= k < 32 */
{
    return k == 0  ? 0u
           : k < 2  ? 0x3c00u
           : k < 4  ? 0x4000u | (uint32_t)(k - 2) << 9
           : k < 8  ? 0x4400u | (uint32_t)(k - 4) << 8
           : k < 16 ? 0x4800u | (uint32_t)(k - 8) << 7
                    : 0x4c00u | (uint32_t)(k - 16) << 6;
}

/* v5's lane of 16-bit channels (E = 2): taps as f16 pairs */
template <typename T> struct KpvLane : KpwLane<T> {
    typedef typename kp_pair<T>::t P;
    static __device__ __forceinline__ uint32_t word(P v)
    {
        union { P p; uint32_t u; } w;
        w.p = v;
        return w.u;
    }
    static __device__ __forceinline__ __half2 h2(uint32_t u)
    {
        union { uint32_t u; __half2 h; } w;
        w.u = u;
        return w.h;
    }
    static __device__ __forceinline__ uint32_t hw(__half2 h)
    {
        union { __half2 h; uint32_t u; } w;
        w.h = h;
        return w.u;
    }
    static __host__ __device__ constexpr uint32_t tap(int k) { return kpv_f16(k) * 0x10001u; }
    static __device__ __forceinline__ uint32_t is(uint32_t code, int k) { return __heq2_mask(h2(code), h2(tap(k))); }
    static __device__ __forceinline__ uint32_t code_add(uint32_t code, int k)
    {
        return hw(__hadd2_rn(h2(code), h2(tap(k))));
    }
    static __device__ __forceinline__ uint32_t sum1(uint32_t a)
    {
        return word(__hadd2_rn(KpwLane<T>::pair(a), KpwLane<T>::pair(0u)));
    }
    static __device__ __forceinline__ uint32_t sum2(uint32_t a, uint32_t b)
    {
        typedef KpwLane<T> B;
        return word(__hadd2_rn(__hadd2_rn(B::pair(a), B::pair(b)), B::pair(0u)));
    }
    static __device__ __forceinline__ uint32_t sum4(uint32_t a, uint32_t b, uint32_t c, uint32_t d)
    {
        union { uint32_t u; T e[2]; } va, vb, vc, vd, r;
        va.u = a, vb.u = b, vc.u = c, vd.u = d;
#pragma unroll
        for (int i = 0; i < 2; i++)
            r.e[i] = kp_t<T>(((kp_f<T>(va.e[i]) + kp_f<T>(vb.e[i])) + kp_f<T>(vc.e[i])) + kp_f<T>(vd.e[i]));
        return sum1(r.u);
    }
};

/* f32 channels (E = 1): taps as integers */
template <> struct KpvLane<float> : KpwLane<float> {
    static __host__ __device__ constexpr uint32_t tap(int k) { return (uint32_t)k; }
    static __device__ __forceinline__ uint32_t is(uint32_t code, int k) { return code == (uint32_t)k ? ~0u : 0u; }
    static __device__ __forceinline__ uint32_t code_add(uint32_t code, int k) { return code + (uint32_t)k; }
    static __device__ __forceinline__ uint32_t sum1(uint32_t a) { return __float_as_uint(__uint_as_float(a) + 0.f); }
    static __device__ __forceinline__ uint32_t sum2(uint32_t a, uint32_t b)
    {
        return __float_as_uint((__uint_as_float(a) + __uint_as_float(b)) + 0.f);
    }
    static __device__ __forceinline__ uint32_t sum4(uint32_t a, uint32_t b, uint32_t c, uint32_t d)
    {
        return sum2(__float_as_uint((__uint_as_float(a) + __uint_as_float(b)) + __uint_as_float(c)), d);
    }
};

enum { KPV_LANES = 4 }; /* 16 bytes */
typedef kpw_vec<KPV_LANES> kpv_vec;

/* Running maxima and their taps, a lane each: a row's 3 columns (tap = column) or a window (tap = 3 row + column). */
struct kpv_state {
    uint32_t m[KPV_LANES], code[KPV_LANES];
};

/* A window before its first row inside x: no taps (KPW_NONE; the maxima are never read). */
template <typename T> static __device__ __forceinline__ void kpv_empty(kpv_state &s)
{
#pragma unroll
    for (int k = 0; k < KPV_LANES; k++)
        s.m[k] = KpwLane<T>::ninf(), s.code[k] = KpvLane<T>::tap(KPW_NONE);
}

/* Columns j0 .. j0 + 2 of row t reduced: started at column j0 with tap cs (the first column inside x, its value
 * -inf when outside, or KPW_NONE for none inside), replaced by a later column strictly larger or the first NaN. */
template <typename T>
static __device__ __forceinline__ void kpv_reduce(const kpv_vec (&t)[5], int j0, uint32_t cs, kpv_state &s)
{
    typedef KpvLane<T> L;
#pragma unroll
    for (int k = 0; k < KPV_LANES; k++) {
        uint32_t m = t[j0].w[k], code = cs;
#pragma unroll
        for (int j = 1; j < 3; j++) {
            const uint32_t v = t[j0 + j].w[k], w = L::wins(v, m);
            m = (m & ~w) | (v & w);
            code = (code & ~w) | (L::tap(j) & w);
        }
        s.m[k] = m, s.code[k] = code;
    }
}

/* Row s into window w as its tap row `row`; the window's first row inside x (first) starts it. */
template <typename T>
static __device__ __forceinline__ void kpv_merge(kpv_state &w, const kpv_state &s, int row, bool first)
{
    typedef KpvLane<T> L;
#pragma unroll
    for (int k = 0; k < KPV_LANES; k++) {
        const uint32_t win = first ? ~0u : L::wins(s.m[k], w.m[k]);
        w.m[k] = (w.m[k] & ~win) | (s.m[k] & win);
        w.code[k] = (w.code[k] & ~win) | (L::code_add(s.code[k], 3 * row) & win);
    }
}

/* Row xr (xr at column 2q of the padded row) reduced under windows l (columns 0..2) and r (2..4). */
template <typename T>
static __device__ __forceinline__ void kpv_row(const T *__restrict__ xr, int sxw, const bool (&ok)[5], uint32_t csl,
                                               uint32_t csr, kpv_state &l, kpv_state &r)
{
    kpv_vec t[5];
#pragma unroll
    for (int j = 0; j < 5; j++) {
        if (ok[j]) {
            t[j] = *reinterpret_cast<const kpv_vec *>(xr + j * sxw);
        } else {
#pragma unroll
            for (int k = 0; k < KPV_LANES; k++)
                t[j].w[k] = KpwLane<T>::ninf();
        }
    }
    kpv_reduce<T>(t, 0, csl, l);
    kpv_reduce<T>(t, 2, csr, r);
}

/* dy of a window masked to the channels where tap k is its winner */
template <typename T> static __device__ __forceinline__ kpv_vec kpv_mask(const kpv_vec &d, const kpv_state &w, int k)
{
    kpv_vec r;
#pragma unroll
    for (int i = 0; i < KPV_LANES; i++)
        r.w[i] = d.w[i] & KpvLane<T>::is(w.code[i], k);
    return r;
}

template <typename T>
__global__ void __launch_bounds__(KP_THREADS, 3)
    kpool_bwd_wide(kpool_params p, const kp_fast f, int S, const T *__restrict__ x, const T *__restrict__ dy,
                   T *__restrict__ dx)
{
    typedef KpvLane<T> L;
    const kp_ix<int32_t, true> g(p);
    constexpr int V = KPV_LANES * L::E;
    const kpw_walk w(g, V, S);
    const int H = w.H, W = w.W, OH = w.OH, OW = w.OW, ph = w.ph, pw = w.pw;
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < w.total; t += (int64_t)gridDim.x * blockDim.x) {
        int32_t c;
        int q, b0, b_end;
        const int32_t n = w.item(t, f, V, S, c, q, b0, b_end);
        /* padded columns 2q .. 2q + 4 of windows (., q) and (., q + 1) (input column c0 + j); the block's are
         * 2q + 1, 2q + 2 */
        const int c0 = 2 * q - pw;
        bool ok[5];
#pragma unroll
        for (int j = 0; j < 5; j++)
            ok[j] = c0 + j >= 0 && c0 + j < W;
        const int fl = kpw_first(c0, W), fr = kpw_first(c0 + 2, W);
        const uint32_t csl = fl == 0 ? L::tap(0) : fl == 1 ? L::tap(1) : fl == 2 ? L::tap(2) : L::tap(KPW_NONE);
        const uint32_t csr = fr == 0 ? L::tap(0) : fr == 1 ? L::tap(1) : fr == 2 ? L::tap(2) : L::tap(KPW_NONE);
        const bool out_l = q >= 0 && q < OW, out_r = q + 1 < OW;
        const T *xb = x + n * g.sx[0] + c + c0 * g.sx[4];
        const T *dyb = dy + n * g.sy[0] + c + q * g.sy[4];
        T *dxb = dx + n * g.sdx[0] + c + (c0 + 1) * g.sdx[4];
        kpv_state wl, wr; /* window row w so far */
        kpv_empty<T>(wl);
        kpv_empty<T>(wr);
        int r = 2 * b0 - ph;
        bool have = r >= 0 && r < H; /* a row of window row w inside x */
        if (have)
            kpv_row<T>(xb + r * g.sx[3], g.sx[4], ok, csl, csr, wl, wr);
        kpv_vec c10 = {}, c11l = {}, c11r = {}; /* block w - 1's lower pixels: window row w - 1's dy, masked */
#pragma unroll 1
        for (int w = b0; w <= b_end; w++) {
            r = 2 * w + 1 - ph; /* window row w's tap rows 1 and 2; row 2 is row 0 of w + 1 */
            if (r >= 0 && r < H) {
                kpv_state sl, sr;
                kpv_row<T>(xb + r * g.sx[3], g.sx[4], ok, csl, csr, sl, sr);
                kpv_merge<T>(wl, sl, 1, !have);
                kpv_merge<T>(wr, sr, 1, !have);
                have = true;
            }
            kpv_state nl, nr;
            kpv_empty<T>(nl);
            kpv_empty<T>(nr);
            const bool next = r + 1 >= 0 && r + 1 < H;
            if (next) {
                kpv_row<T>(xb + (r + 1) * g.sx[3], g.sx[4], ok, csl, csr, nl, nr);
                kpv_merge<T>(wl, nl, 2, !have);
                kpv_merge<T>(wr, nr, 2, !have);
            }
            const bool in_l = w >= 0 && w < OH && out_l, in_r = w >= 0 && w < OH && out_r;
            kpv_vec dl = {}, dr = {}; /* no window: dy 0, masking to +0 */
            if (in_l)
                dl = *reinterpret_cast<const kpv_vec *>(dyb + w * g.sy[3]);
            if (in_r)
                dr = *reinterpret_cast<const kpv_vec *>(dyb + w * g.sy[3] + g.sy[4]);
            /* block b's pixels (i, j) are taps (1 + i, 1 + j) of window (b, q), (1 + i, j - 1) of (b, q + 1),
             * (i - 1, 1 + j) of (b + 1, q) and (i - 1, j - 1) of (b + 1, q + 1) */
            if (w > b0) { /* block w - 1's lower row, padded row 2w */
                const int i = 2 * w - ph;
                const bool row_ok = i >= 0 && i < H;
                const kpv_vec a = kpv_mask<T>(dl, wl, 1), b = kpv_mask<T>(dl, wl, 2), e = kpv_mask<T>(dr, wr, 0);
                kpv_vec p0, p1;
#pragma unroll
                for (int k = 0; k < KPV_LANES; k++) {
                    p0.w[k] = L::sum2(c10.w[k], a.w[k]);
                    p1.w[k] = L::sum4(c11l.w[k], c11r.w[k], b.w[k], e.w[k]);
                }
                T *d = dxb + i * g.sdx[3];
                if (row_ok && ok[1])
                    *reinterpret_cast<kpv_vec *>(d) = p0;
                if (row_ok && ok[2])
                    *reinterpret_cast<kpv_vec *>(d + g.sdx[4]) = p1;
            }
            if (w < b_end) { /* block w's upper row, padded row 2w + 1; its lower row's shares of window row w */
                const int i = 2 * w + 1 - ph;
                const bool row_ok = i >= 0 && i < H;
                const kpv_vec a = kpv_mask<T>(dl, wl, 4), b = kpv_mask<T>(dl, wl, 5), e = kpv_mask<T>(dr, wr, 3);
                kpv_vec p0, p1;
#pragma unroll
                for (int k = 0; k < KPV_LANES; k++) {
                    p0.w[k] = L::sum1(a.w[k]);
                    p1.w[k] = L::sum2(b.w[k], e.w[k]);
                }
                T *d = dxb + i * g.sdx[3];
                if (row_ok && ok[1])
                    *reinterpret_cast<kpv_vec *>(d) = p0;
                if (row_ok && ok[2])
                    *reinterpret_cast<kpv_vec *>(d + g.sdx[4]) = p1;
                c10 = kpv_mask<T>(dl, wl, 7);
                c11l = kpv_mask<T>(dl, wl, 8);
                c11r = kpv_mask<T>(dr, wr, 6);
            }
            wl = nl, wr = nr;
            have = next;
        }
    }
}

/* v4's and v5's switch, read once: blocks walked per thread, 2 by default (v5 on the H100, two runs alternated:
 * 2 blocks 0.106-0.110 ms on both ResNet rows, 4 blocks 0.110-0.112; bench/RESULTS-norm.md, session 16);
 * XDNN_POOL_BWD_WALK=0 keeps v3 (the winners pass and the gather), 1 .. 16 walks that many (A/B: fewer threads
 * against more rows read twice). */
static int kp_walk_blocks(void)
{
    static const char *const e = getenv("XDNN_POOL_BWD_WALK");
    if (!e)
        return 2;
    const int v = atoi(e);
    return strcmp(e, "0") == 0 ? 0 : v >= 1 && v <= 16 ? v : 2;
}

/* v5's switch, read once: XDNN_POOL_BWD_WIDE=0 keeps v4 (8 bytes of channels a thread). */
static bool kp_wide_on(void)
{
    static const char *const e = getenv("XDNN_POOL_BWD_WIDE");
    return !e || strcmp(e, "0") != 0;
}

/* Does v4 take the call?  maxpool, 3x3 stride-2 windows in int32 (kp_is_3x3s2, kp_fits_i32), x, dy and dx of one
 * dtype in whole chunks (kp_vec_ok without the buffers: their alignment is the launcher's to check). */
static bool kp_walk_ok(const kpool_params *p)
{
    const int64_t V = p->dt_x == KDT_F32 ? 4 : 8;
    kpool_params q = *p;
    memcpy(q.sy, p->sdx, sizeof q.sy);
    q.dt_y = p->dt_dx;
    return kp_walk_blocks() > 0 && p->is_max && kp_is_3x3s2(p) && kp_fits_i32(p) && kp_vec_ok(p, NULL, NULL, V) &&
           kp_vec_ok(&q, NULL, NULL, V);
}

template <typename T> static void kp_walk_launch(const kpool_params *p, const T *x, const T *dy, T *dx, cudaStream_t s)
{
    const int S = kp_walk_blocks();
    const bool wide = kp_wide_on();
    const int64_t V = (wide ? (int)KPV_LANES : (int)KPW_LANES) * (sizeof(T) == 4 ? 1 : 2);
    kp_fast f;
    const unsigned grid = kpw_grid(p, S, V, &f);
    if (wide)
        kpool_bwd_wide<T><<<grid, KP_THREADS, 0, s>>>(*p, f, S, x, dy, dx);
    else
        kpool_bwd_walk<T, KPW_LANES><<<grid, KP_THREADS, 0, s>>>(*p, f, S, x, dy, dx);
}

#include "pool_avg.cuh" /* v5: average pooling of 3x3 stride-2 windows (XDNN_POOL_AVG_WALK=0 keeps v3) */

template <typename T, typename I, bool K3S2>
static void kp_bwd_vec_go(const kpool_params *p, const T *x, const T *dy, T *dx, uint8_t *w8, cudaStream_t s)
{
    const int64_t V = 16 / sizeof(T);
    const int64_t work = p->N * (p->C / V) * p->in[0] * p->in[1] * p->in[2];
    const kp_fast fi = kp_fast_make(p, V, p->in), fo = kp_fast_make(p, V, p->out);
    if (w8) {
        const int64_t wins = p->N * (p->C / V) * p->out[0] * p->out[1] * p->out[2];
        if (K3S2 && kp_roll_on() && kp_roll_winners_on())
            kp_roll_go<T>(p, x, NULL, w8, s);
        else
            kpool_winners_vec<T, I, K3S2><<<kgrid(wins, KP_THREADS), KP_THREADS, 0, s>>>(*p, fo, x, w8);
        kpool_bwd_vec<T, true, I, K3S2><<<kgrid(work, KP_THREADS), KP_THREADS, 0, s>>>(*p, fi, x, dy, dx, w8, false);
    } else {
        kpool_bwd_vec<T, false, I, K3S2><<<kgrid(work, KP_THREADS), KP_THREADS, 0, s>>>(*p, fi, x, dy, dx, NULL,
                                                                                         kp_roll_on());
    }
}

template <typename T>
static void kp_bwd_vec_launch(const kpool_params *p, const void *x, const void *dy, void *dx, uint8_t *w8,
                              cudaStream_t s)
{
    const T *xt = (const T *)x, *dyt = (const T *)dy;
    if (!kp_fits_i32(p))
        kp_bwd_vec_go<T, int64_t, false>(p, xt, dyt, (T *)dx, w8, s);
    else if (kp_avg_walk_ok(p, true))
        kp_avg_bwd_launch<T>(p, dyt, (T *)dx, s);
    else if (kp_is_3x3s2(p))
        kp_bwd_vec_go<T, int32_t, true>(p, xt, dyt, (T *)dx, w8, s);
    else
        kp_bwd_vec_go<T, int32_t, false>(p, xt, dyt, (T *)dx, w8, s);
}

template <typename T>
static void kp_fwd_vec_launch(const kpool_params *p, const void *x, void *y, cudaStream_t s)
{
    const int64_t V = 16 / sizeof(T);
    const int64_t work = p->N * (p->C / V) * p->out[0] * p->out[1] * p->out[2];
    const unsigned grid = kgrid(work, KP_THREADS);
    const kp_fast f = kp_fast_make(p, V, p->out);
    if (!kp_fits_i32(p))
        kpool_fwd_vec<T, int64_t, false><<<grid, KP_THREADS, 0, s>>>(*p, f, (const T *)x, (T *)y);
    else if (kp_avg_walk_ok(p, false))
        kp_avg_fwd_launch<T>(p, (const T *)x, (T *)y, s);
    else if (kp_is_3x3s2(p) && kp_roll_on())
        kp_roll_go<T>(p, (const T *)x, (T *)y, NULL, s);
    else if (kp_is_3x3s2(p))
        kpool_fwd_vec<T, int32_t, true><<<grid, KP_THREADS, 0, s>>>(*p, f, (const T *)x, (T *)y);
    else
        kpool_fwd_vec<T, int32_t, false><<<grid, KP_THREADS, 0, s>>>(*p, f, (const T *)x, (T *)y);
}

extern "C" {

int kpool_fwd(const kpool_params *p, const void *x, void *y, void *stream)
{
    const int64_t V = p->dt_x == KDT_F32 ? 4 : 8;
    if (kp_vec_ok(p, x, y, V)) {
        cudaStream_t s = (cudaStream_t)stream;
        if (p->dt_x == KDT_F32)
            kp_fwd_vec_launch<float>(p, x, y, s);
        else if (p->dt_x == KDT_F16)
            kp_fwd_vec_launch<__half>(p, x, y, s);
        else
            kp_fwd_vec_launch<__nv_bfloat16>(p, x, y, s);
        return (int)cudaGetLastError();
    }
    const int64_t total = p->N * p->C * p->out[0] * p->out[1] * p->out[2];
    kpool_fwd_kernel<<<kgrid(total, KP_THREADS), KP_THREADS, 0, (cudaStream_t)stream>>>(*p, x, y, p->sy[1] == 1);
    return (int)cudaGetLastError();
}

/* The bisecting switches, read once: XDNN_POOL_BWD_V1 keeps the element kernel, XDNN_POOL_BWD_V2 v2's winners found
 * again per pixel (neither takes v4). */
static bool kp_bwd_forced_v1(void)
{
    static const char *const e = getenv("XDNN_POOL_BWD_V1");
    return e && strcmp(e, "0") != 0;
}
static bool kp_bwd_forced_v2(void)
{
    static const char *const e = getenv("XDNN_POOL_BWD_V2");
    return e && strcmp(e, "0") != 0;
}

/* For the engine's detail: 2 for max v5, 1 for max v4 or the avg walk (v5), 0 for the gather, unless a bisecting
 * switch says otherwise (buffers off their 16-byte alignment, known only at launch, also fall back to the element
 * kernel). */
int kpool_bwd_one_pass(const kpool_params *p)
{
    if (kp_bwd_forced_v1())
        return 0;
    if (kp_avg_walk_ok(p, true))
        return 1;
    return kp_walk_ok(p) && !kp_bwd_forced_v2() ? (kp_wide_on() ? 2 : 1) : 0;
}

size_t kpool_bwd_ws_bytes(const kpool_params *p)
{
    const int64_t taps = p->win[0] * p->win[1] * p->win[2];
    if (!p->is_max || taps >= KP_NO_WINNER || kp_walk_ok(p))
        return 0;
    return (size_t)(p->N * p->C * p->out[0] * p->out[1] * p->out[2]);
}

int kpool_bwd(const kpool_params *p, const void *x, const void *dy, void *dx, void *ws, size_t ws_bytes,
              void *stream)
{
    const int64_t V = p->dt_x == KDT_F32 ? 4 : 8;
    /* v2 wants x, dy and dx of one dtype in chunks: check dx as a second "y" */
    kpool_params q = *p;
    memcpy(q.sy, p->sdx, sizeof q.sy);
    q.dt_y = p->dt_dx;
    const bool v1_only = kp_bwd_forced_v1(), v2_only = kp_bwd_forced_v2();
    if (kp_vec_ok(p, x, dy, V) && kp_vec_ok(&q, x, dx, V) && !v1_only) {
        const size_t need = kpool_bwd_ws_bytes(p);
        uint8_t *w8 = need && ws && ws_bytes >= need && !v2_only ? (uint8_t *)ws : NULL;
        cudaStream_t s = (cudaStream_t)stream;
        if (kp_walk_ok(p) && !v2_only) {
            if (p->dt_x == KDT_F32)
                kp_walk_launch<float>(p, (const float *)x, (const float *)dy, (float *)dx, s);
            else if (p->dt_x == KDT_F16)
                kp_walk_launch<__half>(p, (const __half *)x, (const __half *)dy, (__half *)dx, s);
            else
                kp_walk_launch<__nv_bfloat16>(p, (const __nv_bfloat16 *)x, (const __nv_bfloat16 *)dy,
                                              (__nv_bfloat16 *)dx, s);
            return (int)cudaGetLastError();
        }
        if (p->dt_x == KDT_F32)
            kp_bwd_vec_launch<float>(p, x, dy, dx, w8, s);
        else if (p->dt_x == KDT_F16)
            kp_bwd_vec_launch<__half>(p, x, dy, dx, w8, s);
        else
            kp_bwd_vec_launch<__nv_bfloat16>(p, x, dy, dx, w8, s);
        return (int)cudaGetLastError();
    }
    const int64_t total = p->N * p->C * p->in[0] * p->in[1] * p->in[2];
    kpool_bwd_kernel<<<kgrid(total, KP_THREADS), KP_THREADS, 0, (cudaStream_t)stream>>>(*p, x, dy, dx, p->sdx[1] == 1);
    return (int)cudaGetLastError();
}

} /* extern "C" */
