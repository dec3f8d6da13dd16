// norm_warp.cuh — what the warp-row kernels share (kernels/norm_warp.cu:
// layernorm / rmsnorm forward and softmax rows; kernels/norm_warp_bwd.cu:
// layernorm / rmsnorm backward): a row group of 1, 2, 4 or 8 warps of a block
// of 8 warps holds one row in registers, lane l of warp w owning 16-byte
// chunk k at element ((k wpr + w) 32 + l) VW; its reductions (shuffles, then
// the group's warps through shared memory behind a named barrier), the chunk
// loads and unpacking, and the persistent grid of the v2 kernels.
#ifndef XDNN_NORM_WARP_CUH
#define XDNN_NORM_WARP_CUH

#include "norm_common.cuh"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mutex>

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

// The values a reduction carries: one float (a sum or a max), or two sums
// at once (float2: the backward's sum g and sum g xhat, one barrier), or
// four (float4: those of two rows, the backward's v4).
__device__ __forceinline__ float wr_comb(float a, float b, bool mx) { return mx ? fmaxf(a, b) : a + b; }
__device__ __forceinline__ float2 wr_comb(float2 a, float2 b, bool) { return make_float2(a.x + b.x, a.y + b.y); }
__device__ __forceinline__ float4 wr_comb(float4 a, float4 b, bool)
{
    return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}
__device__ __forceinline__ float wr_shfl(float v, int m) { return __shfl_xor_sync(0xffffffffu, v, m); }
__device__ __forceinline__ float2 wr_shfl(float2 v, int m)
{
    return make_float2(__shfl_xor_sync(0xffffffffu, v.x, m), __shfl_xor_sync(0xffffffffu, v.y, m));
}
__device__ __forceinline__ float4 wr_shfl(float4 v, int m)
{
    return make_float4(__shfl_xor_sync(0xffffffffu, v.x, m), __shfl_xor_sync(0xffffffffu, v.y, m),
                       __shfl_xor_sync(0xffffffffu, v.z, m), __shfl_xor_sync(0xffffffffu, v.w, m));
}

// Sum (MAX: max) over the row: shuffles, then the row's warps through
// sh[slot][warp] behind barrier 1 + group (0 is __syncthreads').  A caller
// that reduces again before every warp has read a slot alternates slots: a
// warp that runs ahead writes the other one, and cannot come back to this
// one before the group's next barrier, which waits for every reader.
template <bool MAX, typename V>
__device__ __forceinline__ V wr_reduce(V v, const wr_pos &p, V (*sh)[WR_WARPS], int slot)
{
#pragma unroll
    for (int m = 16; m > 0; m >>= 1)
        v = wr_comb(v, wr_shfl(v, m), MAX);
    if (p.wpr == 1)
        return v;
    int w0 = p.group * p.wpr;
    if (p.lane == 0)
        sh[slot][w0 + p.wr] = v;
    asm volatile("bar.sync %0, %1;" ::"r"(1 + p.group), "r"(p.wpr * 32) : "memory");
    v = sh[slot][w0];
    for (int i = 1; i < p.wpr; i++)
        v = wr_comb(v, sh[slot][w0 + i], MAX);
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


// A row's 16-byte chunks of this lane, as loaded; past D: zeros (+0 in every
// dtype).  VEC rows only (D % VW == 0, the row 16-byte aligned).
template <typename T, int NV>
__device__ __forceinline__ void wr_load_row(const T *row, int D, const wr_pos &p, uint4 (&c)[NV])
{
    constexpr int VW = 16 / sizeof(T);
#pragma unroll
    for (int k = 0; k < NV; k++) {
        int i = wr_index<T, true>(k * VW, p);
        c[k] = i < D ? *reinterpret_cast<const uint4 *>(row + i) : make_uint4(0, 0, 0, 0);
    }
}

struct wr_geom {
    int wpr, nv;
};

static int env_int(const char *name, int dflt)
{
    const char *e = getenv(name);
    return e && *e ? atoi(e) : dflt;
}

// v2 geometry: the fewest warps per row (1, 2, 4, 8) whose lanes hold the
// row in at most `most` 16-byte chunks, nv = the chunks that takes (any count
// up to `most`: a 768-wide f16 row is one warp of 3 chunks, where v1's
// power-of-two chunks left a quarter of two warps idle).  XDNN_NORM_WPR=n
// forces n warps where the row still fits (A/B).
template <typename T>
bool wr2_pick(int64_t D, int most, wr_geom *g)
{
    const int64_t unit = 32 * (16 / sizeof(T));
    int wpr = 1;
    while (wpr < WR_WARPS && D > most * unit * wpr)
        wpr *= 2;
    if (D > most * unit * wpr || D > NG_WARP_ROW_MAX)
        return false;
    static const int forced = env_int("XDNN_NORM_WPR", 0);
    if ((forced == 1 || forced == 2 || forced == 4 || forced == 8) && D <= most * unit * forced)
        wpr = forced;
    *g = {wpr, (int)((D + unit * wpr - 1) / (unit * wpr))};
    return true;
}

// ---- v2: a persistent grid, rows staged through shared memory by cp.async
// Each lane copies its own 16-byte chunks of a row into its own slots of a
// ring of WR2_STAGES rows (slot (stage, operand, chunk) of thread t at
// ((stage * ops + operand) * NV + chunk) * 256 + t) and later reads back only
// those: a lane waits for its own copies (cp.async.wait_group), no barrier.
// WR2_STAGES - 1 rows of each group are in flight while it reduces and
// stores another, whatever the registers (v1: one row, in registers, between
// its load and its reductions).
enum { WR2_STAGES = 3 };

__device__ __forceinline__ void wr_cp16(uint4 *dst, const void *src, bool in)
{
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(src), "r"(in ? 16 : 0) : "memory");
}

__device__ __forceinline__ void wr_cp_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }

// Wait until at most WR2_STAGES - 1 of this thread's copy groups are pending
// (the rows ahead, one group each, empty ones too): the oldest, the row about
// to be used, has landed.
__device__ __forceinline__ void wr_cp_wait_oldest()
{
    asm volatile("cp.async.wait_group %0;" ::"n"(WR2_STAGES - 1) : "memory");
}

// Copy this lane's chunks of a row into its slots at `slot` (chunk k at
// slot[k * 256]); past D: zero-filled.
template <typename T, int NV>
__device__ __forceinline__ void wr_stage_row(uint4 *slot, const T *row, int D, const wr_pos &p)
{
    constexpr int VW = 16 / sizeof(T);
#pragma unroll
    for (int k = 0; k < NV; k++) {
        const int i = wr_index<T, true>(k * VW, p);
        wr_cp16(slot + k * WR_WARPS * 32, i < D ? row + i : row, i < D);
    }
}

// The persistent grid of a v2 kernel: enough blocks to fill every SM at the
// kernel's occupancy (with `smem` bytes of dynamic shared memory, allowed
// first), no more than the rows need; `cap` bounds it further (the
// backward's parameter-gradient partials have room for so many groups).
// The current device's SM count, asked once per device (host calls before a
// launch are part of what a partition's timing measures).
static int wr_sm_count()
{
    static int sms_of[16];
    int dev = 0, sms = 0;
    cudaGetDevice(&dev);
    if (dev >= 0 && dev < 16 && sms_of[dev] > 0)
        return sms_of[dev];
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (dev >= 0 && dev < 16)
        sms_of[dev] = sms;
    return sms;
}

static unsigned wr_grid_for(const void *kern, size_t smem, int threads, int64_t rows, int64_t gpb, int64_t cap)
{
    // the attribute and the occupancy once per kernel, shared-memory size,
    // block size and device: a few microseconds of host calls per launch
    // showed in the timings of the small rows (8192 x 768: ~20 us a launch)
    struct seen {
        const void *kern;
        size_t smem;
        int threads, dev, blocks;
    };
    static seen cache[64];
    static int ncache;
    static std::mutex lock; // host threads launching at once: the cache and the grow-only limit stay whole
    int dev = 0, per_sm = -1;
    const int sms = wr_sm_count();
    cudaGetDevice(&dev);
    std::unique_lock<std::mutex> held(lock);
    for (int i = 0; i < ncache && per_sm < 0; i++)
        if (cache[i].kern == kern && cache[i].smem == smem && cache[i].threads == threads && cache[i].dev == dev)
            per_sm = cache[i].blocks;
    if (per_sm < 0) {
        // the kernel's dynamic shared memory limit only grows: a launch
        // found in the cache still fits after the kernel ran smaller (the
        // backward with and without a residual stages 3 or 2 operands; a
        // limit set down to the smaller size failed the larger launch)
        size_t most = smem;
        for (int i = 0; i < ncache; i++)
            if (cache[i].kern == kern && cache[i].dev == dev && cache[i].smem > most)
                most = cache[i].smem;
        cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)most);
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, threads, smem);
        if (ncache < 64)
            cache[ncache++] = {kern, smem, threads, dev, per_sm};
    }
    held.unlock();
    int64_t n = (int64_t)(per_sm < 1 ? 1 : per_sm) * (sms < 1 ? 1 : sms), need = (rows + gpb - 1) / gpb;
    n = n < need ? n : need;
    n = n < cap ? n : cap;
    // balanced (session 10; XDNN_NORM_WR2_BALANCE=0 turns it off, A/B): as few
    // groups as give every group the same number of rows to within one, so
    // they finish together (8192 rows on 792 groups: 270 of them walk an 11th
    // row while the other 522 are done; on 745 groups all walk 11)
    static const int balance = env_int("XDNN_NORM_WR2_BALANCE", 1);
    if (balance && n > 0) {
        const int64_t per = (rows + n * gpb - 1) / (n * gpb), groups = (rows + per - 1) / per;
        n = (groups + gpb - 1) / gpb;
    }
    return (unsigned)(n < 1 ? 1 : n);
}

// v2's grid: blocks of WR_WARPS warps, WR_WARPS / wpr row groups each.
static unsigned wr2_grid(const void *kern, size_t smem, int64_t rows, int wpr, int64_t cap)
{
    return wr_grid_for(kern, smem, WR_WARPS * 32, rows, WR_WARPS / wpr, cap);
}

// A parameter (scale, bias) the v2 kernels load once as 16-byte chunks:
// absent, or per feature (no outer stride), contiguous, of x's dtype and
// 16-byte aligned.
template <typename T>
bool wr2_params_ok(const ng_job *j, int k)
{
    if (!j->t.p[k])
        return true;
    for (int i = 0; i < j->outer.n; i++)
        if (j->outer.stride[k][i] != 0)
            return false;
    return j->inner.stride[k][0] == 1 && j->t.dt[k] == dt_of<T>::v && aligned16(j->t.p[k]);
}

// The warp-row kernels' launch parameter from the engine's job (kern_norm.h).
static ng_row_job wr_row_job(const ng_job *j)
{
    ng_row_job r;
    memset(&r, 0, sizeof r);
    r.outer.n = j->outer.n;
    memcpy(r.outer.size, j->outer.size, sizeof r.outer.size);
    memcpy(r.outer.stride, j->outer.stride, sizeof r.outer.stride); // the first NG_ROW_NOPS operands
    for (int k = 0; k < NG_NOPS; k++)
        r.inner.stride[k][0] = j->inner.stride[k][0];
    r.t = j->t;
    r.part = j->part;
    r.eps = j->eps;
    r.rms = j->rms, r.act = j->act, r.act_dt = j->act_dt, r.res_dt = j->res_dt;
    return r;
}

// decomp's offsets for the row-major outer dims of the warp rows: with one
// outer dim (plain [rows, D] tensors) a multiply each, no 64-bit division.
template <unsigned MASK, typename DIMS>
__device__ __forceinline__ void wr_offsets(const DIMS &d, int64_t row, int64_t (&o)[NG_NOPS])
{
    static_assert(MASK >> (sizeof d.stride / sizeof d.stride[0]) == 0, "an operand the dims carry no stride for");
    if (d.n != 1) {
        decomp<MASK, int64_t>(d, row, o);
        return;
    }
#pragma unroll
    for (int k = 0; k < NG_NOPS; k++)
        o[k] = MASK >> k & 1u ? row * d.stride[k][0] : 0;
}

// mean (0 for rms) and inv of a row, from the statistics tensors (the
// backward kernels: no statistics-loading finalize first).
__device__ __forceinline__ float2 wr_bwd_stats(const ng_row_job &j, int64_t row)
{
    int64_t o[NG_NOPS];
    wr_offsets<OPBIT(NG_MEAN) | OPBIT(NG_INV)>(j.outer, row, o);
    return make_float2(j.rms ? 0.f : ldf(j.t.p[NG_MEAN], o[NG_MEAN], j.t.dt[NG_MEAN]),
                       ldf(j.t.p[NG_INV], o[NG_INV], j.t.dt[NG_INV]));
}

// The backward's first pass over one 16-byte chunk: x, dy and the scale's
// chunk at sc (1 where there is none; not read past the row: `in` false) as
// floats.
template <typename T>
__device__ __forceinline__ void wr_unpack_xdw(const uint4 &cx, const uint4 &cd, const T *sc, bool in,
                                              float (&fx)[16 / sizeof(T)], float (&fd)[16 / sizeof(T)],
                                              float (&fw)[16 / sizeof(T)])
{
    wr_unpack<T>(cx, fx);
    wr_unpack<T>(cd, fd);
    if (sc)
        wr_unpack<T>(in ? *reinterpret_cast<const uint4 *>(sc) : make_uint4(0, 0, 0, 0), fw);
    else
        for (int q = 0; q < 16 / (int)sizeof(T); q++)
            fw[q] = 1.f;
}

// A backward row's constants for its dx: mean (0 for rms), inv, sa = sum g
// (0 for rms), sb = sum g xhat, k_inv = inv / D, fD = D, res_dt (the dtype
// dx is rounded to before the residual is added).
struct wr_dx_row {
    float mean, inv, sa, sb, k_inv, fD;
    int res_dt;
};

// dx = inv / D (D g - sum g - xhat sum g xhat) of one 16-byte chunk, stored
// at dst: x and dy as loaded, the scale's chunk fw as floats (1 where there
// is none), the residual's chunk cr added after rounding when has_r.
template <typename T>
__device__ __forceinline__ void wr_store_dx_fw(T *dst, const uint4 &cx, const uint4 &cd,
                                               const float (&fw)[16 / sizeof(T)], bool has_r, const uint4 &cr,
                                               const wr_dx_row &r)
{
    constexpr int VW = 16 / sizeof(T);
    float fx[VW], fd[VW], fr[VW];
    wr_unpack<T>(cx, fx);
    wr_unpack<T>(cd, fd);
    if (has_r)
        wr_unpack<T>(cr, fr);
    chunk16<T> out;
#pragma unroll
    for (int q = 0; q < VW; q++) {
        const float xh = (fx[q] - r.mean) * r.inv, g = fd[q] * fw[q];
        float dx = r.k_inv * (r.fD * g - r.sa - xh * r.sb);
        if (has_r)
            dx = round_dt(dx, r.res_dt) + fr[q];
        out.v[q] = from_f<T>(dx);
    }
    *reinterpret_cast<chunk16<T> *>(dst) = out;
}

// wr_store_dx_fw with the scale's chunk at sc (null: 1).
template <typename T>
__device__ __forceinline__ void wr_store_dx(T *dst, const uint4 &cx, const uint4 &cd, const T *sc, bool has_r,
                                            const uint4 &cr, const wr_dx_row &r)
{
    constexpr int VW = 16 / sizeof(T);
    float fw[VW];
    if (sc)
        wr_unpack<T>(*reinterpret_cast<const uint4 *>(sc), fw);
    else
        for (int q = 0; q < VW; q++)
            fw[q] = 1.f;
    wr_store_dx_fw<T>(dst, cx, cd, fw, has_r, cr, r);
}

} // namespace

#endif