// norm_warp.cu — row kernels with a warp (or a few warps) per row, the row
// held in registers: layernorm / rmsnorm forward (with scale, bias, the
// statistics outputs and the fused activation) and softmax / log_softmax
// over the last axis, for rows of up to NG_WARP_ROW_MAX contiguous elements
// (kern_norm.h).  f32 math.
//
// v1 (replaces, for these rows, norm.cu's one block per row, whose block-wide
// reductions (two __syncthreads rounds each) and 8-byte loads held a 16 KB
// f16 row to 46 % of copy bandwidth):
//  - 8 warps a block; WPR = 1, 2, 4 or 8 warps per row (picked at launch,
//    wr_pick: the fewest whose lanes hold the row in 16 elements, else 8;
//    at most 8 chunks a lane, 32 elements without VEC), 8 / WPR rows a
//    block.  The caps keep every variant within 128 registers, no spills
//    (nvcc -Xptxas -v; 16 chunks of f16 took 255 registers, the element-load
//    forms spilled);
//  - each lane holds NV chunks of VW = 16 / sizeof(T) elements.  VEC: the
//    row is 16-byte aligned and D % VW == 0: chunk k of lane l of warp w of
//    the row starts at element ((k WPR + w) 32 + l) VW, one 16-byte load, and
//    every load is issued before the first reduction.  Without VEC (softmax
//    only: odd D or an unaligned row), element e of the lane is
//    (e WPR + w) 32 + l, scalar loads, coalesced;
//  - reductions: warp shuffles; with WPR > 1 the row's warps then swap their
//    partials through shared memory behind a named barrier of the row's
//    warps only (one slot per reduction, so no barrier guards reuse).
#include "norm_common.cuh"

#include <stdint.h>
#include <stdlib.h>

namespace {

enum { WR_WARPS = 8, WR_MAX_NV = 8, WR_MAX_SCALAR = 32 };

// The most chunks a lane holds: WR_MAX_NV, or WR_MAX_SCALAR elements
// without VEC; NV above it never launches, so it is not instantiated.
template <typename T, bool VEC>
__host__ __device__ constexpr int wr_cap(int nv)
{
    return VEC || nv * (int)(16 / sizeof(T)) <= WR_MAX_SCALAR ? nv : WR_MAX_SCALAR / (int)(16 / sizeof(T));
}

// Which warp of its row this one is, the row group in the block, the lane.
struct wr_pos {
    int lane, wr, group, wpr;
};

__device__ __forceinline__ wr_pos wr_here(int wpr)
{
    int w = threadIdx.x >> 5;
    return {(int)(threadIdx.x & 31), w % wpr, w / wpr, wpr};
}

// Sum (MAX: max) over the row: shuffles, then the row's warps through
// sh[slot][warp] behind barrier 1 + group (0 is __syncthreads').
template <bool MAX>
__device__ __forceinline__ float wr_reduce(float v, const wr_pos &p, float (*sh)[WR_WARPS], int slot)
{
#pragma unroll
    for (int m = 16; m > 0; m >>= 1) {
        float o = __shfl_xor_sync(0xffffffffu, v, m);
        v = MAX ? fmaxf(v, o) : v + o;
    }
    if (p.wpr == 1)
        return v;
    int w0 = p.group * p.wpr;
    if (p.lane == 0)
        sh[slot][w0 + p.wr] = v;
    asm volatile("bar.sync %0, %1;" ::"r"(1 + p.group), "r"(p.wpr * 32) : "memory");
    v = sh[slot][w0];
    for (int i = 1; i < p.wpr; i++)
        v = MAX ? fmaxf(v, sh[slot][w0 + i]) : v + sh[slot][w0 + i];
    return v;
}

template <typename T>
struct __align__(16) chunk16 {
    T v[16 / sizeof(T)];
};

// Element index of value e (0 .. NV*VW-1) of this lane within its row (an
// int: rows are at most NG_WARP_ROW_MAX long, and 64-bit indices per element
// took the element-load forms to ~190 registers).
template <typename T, bool VEC>
__device__ __forceinline__ int wr_index(int e, const wr_pos &p)
{
    constexpr int VW = 16 / sizeof(T);
    return VEC ? (((e / VW) * p.wpr + p.wr) * 32 + p.lane) * VW + e % VW : (e * p.wpr + p.wr) * 32 + p.lane;
}

// The lane's values of one row; elements past D read as `pad`.
template <typename T, bool VEC, int NV>
__device__ __forceinline__ void wr_load(const T *row, int D, const wr_pos &p, float pad,
                                        float (&v)[NV * 16 / sizeof(T)])
{
    constexpr int VW = 16 / sizeof(T);
    if (VEC) {
        chunk16<T> c[NV];
#pragma unroll
        for (int k = 0; k < NV; k++) { // all loads first
            int i = wr_index<T, true>(k * VW, p);
            if (i < D)
                c[k] = *reinterpret_cast<const chunk16<T> *>(row + i);
        }
#pragma unroll
        for (int k = 0; k < NV; k++) {
            bool in = wr_index<T, true>(k * VW, p) < D;
#pragma unroll
            for (int q = 0; q < VW; q++)
                v[k * VW + q] = in ? to_f<T>(c[k].v[q]) : pad;
        }
    } else {
#pragma unroll
        for (int e = 0; e < NV * VW; e++) {
            int i = wr_index<T, false>(e, p);
            v[e] = i < D ? to_f<T>(row[i]) : pad;
        }
    }
}

template <typename T, bool VEC, int NV>
__device__ __forceinline__ void wr_store(T *row, int D, const wr_pos &p, const float (&v)[NV * 16 / sizeof(T)])
{
    constexpr int VW = 16 / sizeof(T);
    if (VEC) {
#pragma unroll
        for (int k = 0; k < NV; k++) {
            int i = wr_index<T, true>(k * VW, p);
            if (i < D) {
                chunk16<T> c;
#pragma unroll
                for (int q = 0; q < VW; q++)
                    c.v[q] = from_f<T>(v[k * VW + q]);
                *reinterpret_cast<chunk16<T> *>(row + i) = c;
            }
        }
    } else {
#pragma unroll
        for (int e = 0; e < NV * VW; e++) {
            int i = wr_index<T, false>(e, p);
            if (i < D)
                row[i] = from_f<T>(v[e]);
        }
    }
}

// Scale or bias chunk k (VW values at element i): 16 bytes when it is
// contiguous, of x's dtype and 16-byte aligned; else element loads.
template <typename T>
__device__ __forceinline__ void wr_param(const void *p, int dt, int64_t stride, bool vec, int i, float dflt,
                                         float (&w)[16 / sizeof(T)])
{
    constexpr int VW = 16 / sizeof(T);
    if (!p) {
#pragma unroll
        for (int q = 0; q < VW; q++)
            w[q] = dflt;
    } else if (vec) {
        chunk16<T> c = *reinterpret_cast<const chunk16<T> *>(static_cast<const T *>(p) + i);
#pragma unroll
        for (int q = 0; q < VW; q++)
            w[q] = to_f<T>(c.v[q]);
    } else {
#pragma unroll
        for (int q = 0; q < VW; q++)
            w[q] = ldf(p, (i + q) * stride, dt);
    }
}

__host__ __device__ __forceinline__ bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

// The VW values of a 16-byte chunk as loaded (uint4), as floats.  16-bit
// types convert through volatile asm, so each use converts again rather than
// the compiler keeping the converted row live in twice the registers (bf16
// rows of 4 chunks a lane: 64 registers, 79 with plain conversions).
template <typename T>
__device__ __forceinline__ void wr_unpack(const uint4 &c, float (&f)[16 / sizeof(T)])
{
    const uint32_t w[4] = {c.x, c.y, c.z, c.w};
    if constexpr (sizeof(T) == 4) {
#pragma unroll
        for (int q = 0; q < 4; q++)
            f[q] = __uint_as_float(w[q]);
    } else {
#pragma unroll
        for (int q = 0; q < 4; q++) {
            uint32_t lo, hi;
            if constexpr (dt_of<T>::v == DT_F16)
                asm volatile("{.reg .f16 l, h;\n mov.b32 {l, h}, %2;\n cvt.f32.f16 %0, l;\n cvt.f32.f16 %1, h;}"
                             : "=f"(f[2 * q]), "=f"(f[2 * q + 1]) : "r"(w[q]));
            else {
                asm volatile("shl.b32 %0, %2, 16;\n and.b32 %1, %2, 0xffff0000;" : "=r"(lo), "=r"(hi) : "r"(w[q]));
                f[2 * q] = __uint_as_float(lo), f[2 * q + 1] = __uint_as_float(hi);
            }
        }
    }
}

// layernorm / rmsnorm forward: y = act((x - mean) inv scale + bias); mean and
// inv stored when asked.  VEC only (the launcher sends other rows to norm.cu).
// The row stays as loaded (NV uint4 a lane) and is unpacked at each of its
// three uses: 16-bit rows take half the registers of floats, so more rows
// fit an SM.
template <typename T, int NV>
__global__ void __launch_bounds__(WR_WARPS * 32) k_warp_norm(const ng_job j, int64_t rows, int D, int wpr)
{
    constexpr int VW = 16 / sizeof(T);
    __shared__ float sh[2][WR_WARPS];
    const wr_pos p = wr_here(wpr);
    int64_t row = (int64_t)blockIdx.x * (WR_WARPS / wpr) + p.group;
    if (row >= rows) // the row's warps leave together: no barrier waits on them
        return;
    constexpr unsigned M = OPBIT(NG_X) | OPBIT(NG_Y) | OPBIT(NG_MEAN) | OPBIT(NG_INV);
    int64_t base[NG_NOPS];
    decomp<M, int64_t>(j.outer, row, base);
    const T *xr = static_cast<const T *>(j.t.p[NG_X]) + base[NG_X];
    uint4 c[NV];
#pragma unroll
    for (int k = 0; k < NV; k++) { // all loads first; past D: zeros (+0 in every dtype)
        int i = wr_index<T, true>(k * VW, p);
        c[k] = i < D ? *reinterpret_cast<const uint4 *>(xr + i) : make_uint4(0, 0, 0, 0);
    }
    const float fD = (float)D;
    float mean = 0.f;
    if (!j.rms) {
        float s = 0.f;
#pragma unroll
        for (int k = 0; k < NV; k++) {
            float f[VW];
            wr_unpack<T>(c[k], f);
#pragma unroll
            for (int q = 0; q < VW; q++)
                s += f[q];
        }
        mean = wr_reduce<false>(s, p, sh, 0) / fD;
    }
    float sq = 0.f;
#pragma unroll
    for (int k = 0; k < NV; k++) {
        const bool in = wr_index<T, true>(k * VW, p) < D;
        float f[VW];
        wr_unpack<T>(c[k], f);
#pragma unroll
        for (int q = 0; q < VW; q++) {
            float d = in ? f[q] - mean : 0.f;
            sq += d * d;
        }
    }
    const float inv = rsqrtf(wr_reduce<false>(sq, p, sh, 1) / fD + j.eps);
    if (p.wr == 0 && p.lane == 0) {
        if (j.t.p[NG_MEAN])
            stf(j.t.p[NG_MEAN], base[NG_MEAN], j.t.dt[NG_MEAN], mean);
        if (j.t.p[NG_INV])
            stf(j.t.p[NG_INV], base[NG_INV], j.t.dt[NG_INV], inv);
    }
    const void *ps = j.t.p[NG_SC], *pb = j.t.p[NG_BI];
    const int64_t ss = j.inner.stride[NG_SC][0], sb = j.inner.stride[NG_BI][0];
    const bool vs = ps && ss == 1 && j.t.dt[NG_SC] == dt_of<T>::v && aligned16(ps);
    const bool vb = pb && sb == 1 && j.t.dt[NG_BI] == dt_of<T>::v && aligned16(pb);
    T *yr = static_cast<T *>(j.t.p[NG_Y]) + base[NG_Y];
#pragma unroll
    for (int k = 0; k < NV; k++) {
        int i = wr_index<T, true>(k * VW, p);
        if (i >= D)
            continue;
        float f[VW], w[VW], b[VW];
        wr_unpack<T>(c[k], f);
        wr_param<T>(ps, j.t.dt[NG_SC], ss, vs, i, 1.f, w);
        wr_param<T>(pb, j.t.dt[NG_BI], sb, vb, i, 0.f, b);
        chunk16<T> o;
#pragma unroll
        for (int q = 0; q < VW; q++)
            o.v[q] = from_f<T>(act_f((f[q] - mean) * inv * w[q] + b[q], j.act, j.act_dt));
        *reinterpret_cast<chunk16<T> *>(yr + i) = o;
    }
}

// softmax (log = 0) / log_softmax over rows at x + row * ldx, y + row * ldy.
// As the CPU reference (src/ops/softmax.c): a row whose max is infinite
// (fully masked, or a +inf) takes 0 for the max, so the result is NaN
// where the reference's is.
template <typename T, bool VEC, int NV>
__global__ void __launch_bounds__(WR_WARPS * 32) k_warp_softmax(const T *x, T *y, int64_t rows, int D,
                                                                 int64_t ldx, int64_t ldy, int wpr, int log)
{
    constexpr int N = NV * 16 / sizeof(T);
    __shared__ float sh[2][WR_WARPS];
    const wr_pos p = wr_here(wpr);
    int64_t row = (int64_t)blockIdx.x * (WR_WARPS / wpr) + p.group;
    if (row >= rows)
        return;
    float v[N];
    wr_load<T, VEC, NV>(x + row * ldx, D, p, -INFINITY, v);
    float mx = -INFINITY;
#pragma unroll
    for (int e = 0; e < N; e++)
        mx = fmaxf(mx, v[e]); // fmaxf skips NaN, as the reference's fmax
    mx = wr_reduce<true>(mx, p, sh, 0);
    if (isinf(mx))
        mx = 0.f;
    float sum = 0.f;
#pragma unroll
    for (int e = 0; e < N; e++) {
        float ex = expf(v[e] - mx); // padding: exp(-inf) = 0
        sum += ex;
        if (!log)
            v[e] = ex;
    }
    sum = wr_reduce<false>(sum, p, sh, 1);
    if (log) {
        const float sub = mx + logf(sum);
#pragma unroll
        for (int e = 0; e < N; e++)
            v[e] -= sub;
    } else {
        const float r = 1.f / sum;
#pragma unroll
        for (int e = 0; e < N; e++)
            v[e] *= r;
    }
    wr_store<T, VEC, NV>(y + row * ldy, D, p, v);
}

// The geometry: the fewest warps per row (1, 2, 4, 8) whose lanes hold the
// row in 16 elements (WR_PREF), else 8 warps; then the fewest chunks (a power
// of two, at most wr_cap).  Measured on the H100 (RESULTS-norm.md, session 7):
// 8 warps of 32 f16 elements a lane ran layernorm 8192² in 0.147 ms, 4 warps
// of 64 in 0.243; rmsnorm bf16 4096: 8 warps of 16 0.070 ms, 2 of 64 0.126.
// XDNN_NORM_WPR=n forces n warps per row where the row still fits (A/B).
enum { WR_PREF = 16 };
struct wr_geom {
    int wpr, nv;
};

static int env_int(const char *name, int dflt)
{
    const char *e = getenv(name);
    return e && *e ? atoi(e) : dflt;
}

template <typename T>
bool wr_pick(int64_t D, bool vec, wr_geom *g)
{
    const int64_t unit = 32 * (16 / sizeof(T)); // elements per chunk per warp
    const int64_t most = vec ? wr_cap<T, true>(WR_MAX_NV) : wr_cap<T, false>(WR_MAX_NV);
    const int64_t pref = WR_PREF / (16 / sizeof(T)); // chunks
    int wpr = 1;
    while (wpr < WR_WARPS && D > pref * unit * wpr)
        wpr *= 2;
    if (D > most * unit * wpr || D > NG_WARP_ROW_MAX)
        return false;
    static int forced = -1;
    if (forced < 0)
        forced = env_int("XDNN_NORM_WPR", 0);
    if ((forced == 1 || forced == 2 || forced == 4 || forced == 8) && D <= most * unit * forced)
        wpr = forced;
    int nv = 1;
    while (nv * unit * wpr < D)
        nv *= 2;
    *g = {wpr, nv};
    return true;
}

unsigned wr_blocks(int64_t rows, int wpr)
{
    int64_t per = WR_WARPS / wpr;
    return (unsigned)((rows + per - 1) / per);
}

#define WR_NV_SWITCH(nv, CALL)                                                                              \
    switch (nv) {                                                                                            \
    case 1: CALL(1); break;                                                                                  \
    case 2: CALL(2); break;                                                                                  \
    case 4: CALL(4); break;                                                                                  \
    default: CALL(8); break;                                                                                 \
    }

template <typename T>
int wr_norm(const ng_job *j, int64_t rows, int64_t D, cudaStream_t s)
{
    constexpr int VW = 16 / sizeof(T);
    wr_geom g;
    if (D % VW || !aligned16(j->t.p[NG_X]) || !aligned16(j->t.p[NG_Y]) || !wr_pick<T>(D, true, &g))
        return -1;
    for (int i = 0; i < j->outer.n; i++)
        if (j->outer.stride[NG_X][i] % VW || j->outer.stride[NG_Y][i] % VW)
            return -1;
    unsigned grid = wr_blocks(rows, g.wpr);
#define WR_NORM(NV) k_warp_norm<T, NV><<<grid, WR_WARPS * 32, 0, s>>>(*j, rows, (int)D, g.wpr)
    WR_NV_SWITCH(g.nv, WR_NORM)
#undef WR_NORM
    return (int)cudaGetLastError();
}

template <typename T>
int wr_softmax(const void *x, void *y, int log, int64_t rows, int64_t D, int64_t ldx, int64_t ldy, cudaStream_t s)
{
    constexpr int VW = 16 / sizeof(T);
    wr_geom g;
    const bool vec = D % VW == 0 && ldx % VW == 0 && ldy % VW == 0 && aligned16(x) && aligned16(y);
    if (!wr_pick<T>(D, vec, &g))
        return (int)cudaErrorInvalidValue;
    unsigned grid = wr_blocks(rows, g.wpr);
    const T *xt = static_cast<const T *>(x);
    T *yt = static_cast<T *>(y);
#define WR_SM(NV)                                                                                          \
    (vec ? k_warp_softmax<T, true, NV><<<grid, WR_WARPS * 32, 0, s>>>(xt, yt, rows, (int)D, ldx, ldy, g.wpr, log) \
         : k_warp_softmax<T, false, wr_cap<T, false>(NV)><<<grid, WR_WARPS * 32, 0, s>>>(xt, yt, rows, (int)D, ldx, \
                                                                                       ldy, g.wpr, log))
    WR_NV_SWITCH(g.nv, WR_SM)
#undef WR_SM
    return (int)cudaGetLastError();
}

} // namespace

extern "C" int ng_launch_warp_norm(const ng_job *j, int64_t rows, int64_t D, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (rows <= 0)
        return 0;
    switch (j->t.dt[NG_X]) {
    case DT_F16: return wr_norm<__half>(j, rows, D, s);
    case DT_BF16: return wr_norm<__nv_bfloat16>(j, rows, D, s);
    default: return wr_norm<float>(j, rows, D, s);
    }
}

extern "C" int ng_launch_warp_softmax(const void *x, void *y, int dt, int log, int64_t rows, int64_t D, int64_t ldx,
                                      int64_t ldy, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (rows <= 0)
        return 0;
    switch (dt) {
    case DT_F16: return wr_softmax<__half>(x, y, log, rows, D, ldx, ldy, s);
    case DT_BF16: return wr_softmax<__nv_bfloat16>(x, y, log, rows, D, ldx, ldy, s);
    default: return wr_softmax<float>(x, y, log, rows, D, ldx, ldy, s);
    }
}
