/* xent.cu — cross_entropy and cross_entropy_bwd for the xent_direct engine
 * (src/gpu/eng_xent.c); semantics are src/ops/xent.c.
 *
 * v1: one warp per row of C logits, lanes striding the row (coalesced).
 * Pass 1: max and the sum of logits; pass 2: sum of e^(x - max) (expf, f32
 * per lane, lanes combined in double); the loss (or, backward, pass 3 writes
 * g (softmax - (1 - ls) one_hot - ls / C)).  Reductions "sum"/"mean": the
 * per-row losses and not-ignored flags go to the workspace and one block of
 * 1024 threads adds them in a fixed order (strided per thread, then a tree),
 * so the scalar is the same bits on every run.  The backward's "mean" counts
 * the rows not ignored the same way first.  A target outside [0, C) that is
 * not ignore_index makes the row's loss (dlogits) NaN. */
#include "gpu/kern_index.h"
#include "kix_common.cuh"

enum { KXE_THREADS = 256, KXE_RED = 1024 };

/* Workspace: per-row loss (double) then per-row counted flag (double). */
extern "C" size_t kxe_ws_bytes(int64_t R) { return (size_t)(2 * R + 1) * sizeof(double); }

static __device__ __forceinline__ double kxe_warp_sum(double v)
{
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

/* max, sum of logits and log-sum-exp of one row (every lane gets them). */
static __device__ void kxe_row_stats(const kxe_params &p, int64_t r, int lane, float *m_out, double *sum, double *lse)
{
    float m = -INFINITY;
    double s = 0;
    for (int64_t c = lane; c < p.C; c += 32) {
        float v = (float)kix_ld(p.x, p.xdt, r * p.C + c);
        m = fmaxf(m, v);
        s += v;
    }
    for (int off = 16; off > 0; off >>= 1)
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
    /* as the reference: all -inf takes 0 (avoids -inf - -inf), a +inf NaN (the row's log-softmax is NaN) */
    float mm = isinf(m) ? (m > 0.f ? __int_as_float(0x7fffffff) : 0.f) : m;
    float e = 0;
    for (int64_t c = lane; c < p.C; c += 32)
        e += expf((float)kix_ld(p.x, p.xdt, r * p.C + c) - mm);
    double es = kxe_warp_sum((double)e);
    *m_out = mm;
    *sum = kxe_warp_sum(s);
    *lse = (double)mm + log(es);
}

static __global__ void kxe_fwd(kxe_params p)
{
    int lane = threadIdx.x & 31;
    int64_t warps = (int64_t)gridDim.x * blockDim.x / 32;
    double *wl = static_cast<double *>(p.ws), *wc = wl + p.R;
    for (int64_t r = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / 32; r < p.R; r += warps) {
        int64_t t = kix_ldi(p.t, p.tdt, r);
        double loss = 0, counted = 0;
        if (t != p.ignore_index) {
            counted = 1;
            float m;
            double sum, lse;
            kxe_row_stats(p, r, lane, &m, &sum, &lse);
            if (t < 0 || t >= p.C) {
                loss = NAN;
            } else {
                double xt = kix_ld(p.x, p.xdt, r * p.C + t), ls = p.label_smoothing;
                loss = -(1 - ls) * (xt - lse) - ls / (double)p.C * (sum - (double)p.C * lse);
            }
        }
        if (lane == 0) {
            if (p.reduction == KXE_NONE) {
                kix_st(p.y, p.ydt, r, loss);
            } else {
                wl[r] = loss;
                wc[r] = counted;
            }
        }
    }
}

/* One block: total loss (and count) over R rows in a fixed order; writes the
 * scalar y (forward) or the count into ws[2R] (backward). */
static __global__ void kxe_reduce(kxe_params p, bool count_only)
{
    __shared__ double sl[KXE_RED], sc[KXE_RED];
    const double *wl = static_cast<const double *>(p.ws), *wc = wl + p.R;
    double l = 0, c = 0;
    for (int64_t r = threadIdx.x; r < p.R; r += KXE_RED) {
        if (count_only) {
            int64_t t = kix_ldi(p.t, p.tdt, r);
            c += t != p.ignore_index;
        } else {
            l += wl[r];
            c += wc[r];
        }
    }
    sl[threadIdx.x] = l;
    sc[threadIdx.x] = c;
    __syncthreads();
    for (int h = KXE_RED / 2; h > 0; h >>= 1) {
        if ((int)threadIdx.x < h) {
            sl[threadIdx.x] += sl[threadIdx.x + h];
            sc[threadIdx.x] += sc[threadIdx.x + h];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        if (count_only)
            static_cast<double *>(p.ws)[2 * p.R] = sc[0];
        else
            kix_st(p.y, p.ydt, 0, p.reduction == KXE_SUM ? sl[0] : sl[0] / sc[0]); /* 0/0: NaN, as the reference */
    }
}

static __global__ void kxe_bwd(kxe_params p)
{
    int lane = threadIdx.x & 31;
    int64_t warps = (int64_t)gridDim.x * blockDim.x / 32;
    const double *count = static_cast<const double *>(p.ws) + 2 * p.R;
    for (int64_t r = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / 32; r < p.R; r += warps) {
        int64_t t = kix_ldi(p.t, p.tdt, r);
        if (t == p.ignore_index) {
            for (int64_t c = lane; c < p.C; c += 32)
                kix_st(p.y, p.ydt, r * p.C + c, 0.0);
            continue;
        }
        float m;
        double sum, lse;
        kxe_row_stats(p, r, lane, &m, &sum, &lse);
        double g = p.reduction == KXE_NONE ? kix_ld(p.dy, p.dydt, r)
                 : p.reduction == KXE_SUM  ? kix_ld(p.dy, p.dydt, 0)
                                           : kix_ld(p.dy, p.dydt, 0) / *count;
        bool bad = t < 0 || t >= p.C;
        double ls = p.label_smoothing, off = ls / (double)p.C;
        for (int64_t c = lane; c < p.C; c += 32) {
            double sm = exp(kix_ld(p.x, p.xdt, r * p.C + c) - lse);
            kix_st(p.y, p.ydt, r * p.C + c, bad ? (double)NAN : g * (sm - (1 - ls) * (c == t) - off));
        }
    }
}

extern "C" int kxe_launch(const kxe_params *p, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    unsigned grid = kix_grid(p->R * 32, KXE_THREADS);
    if (!p->bwd) {
        kxe_fwd<<<grid, KXE_THREADS, 0, s>>>(*p);
        if (p->reduction != KXE_NONE)
            kxe_reduce<<<1, KXE_RED, 0, s>>>(*p, false);
    } else {
        if (p->reduction == KXE_MEAN)
            kxe_reduce<<<1, KXE_RED, 0, s>>>(*p, true);
        kxe_bwd<<<grid, KXE_THREADS, 0, s>>>(*p);
    }
    return (int)cudaGetLastError();
}
