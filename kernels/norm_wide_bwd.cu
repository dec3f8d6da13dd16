// norm_wide_bwd.cu — layernorm / rmsnorm backward over rows too wide for the
// warp rows of norm_warp_bwd.cu (16-bit rows of 4097 to 8192 elements, f32
// rows of 2049 to 8192; session 12, "normwide"), the same math:
//   xhat = (x - mean) inv, g = dy scale,
//   dx = inv / D (D g - sum g - xhat sum g xhat)   (rms: no mean, no sum g),
//   dx = round(dx) + r when the partition adds a residual r (NG_Y);
//   dscale += dy xhat, dbias += dy, summed over the rows.
// A block per row (up to 512 threads, 16 elements a thread:
// thread t owns 16-byte chunk k at element (k nt + t) VW, nt the block's
// threads), a persistent grid: block b walks rows b, b + G, ..., so a thread
// owns the same columns in every row and keeps their dscale / dbias partials
// in registers to the end (32 floats), written once to part[block][2][D]
// and summed over the blocks in block order by norm_warp_bwd.cu's column sum
// (deterministic; no atomics).  x, dy (and the residual) of the next rows
// are staged by cp.async into a ring of `stages` rows in shared memory, each
// thread its own slots (no barrier on them), while the current row reduces;
// x and dy are read from DRAM once, dx written once.  One barrier a row: the
// warps' (sum g, sum g xhat) through two alternating slots.
// Before (kernels/norm.cu): a statistics-loading finalize, k_row_bwd_pg (a
// block per row, 8-byte loads, the next row's loads only after the current
// row's store) and a column sum: bf16 8192 x 8192 at 43-44 % of copy.
// Measured (H100, 57d434e, bench/RESULTS-norm.md session 12): layernorm_bwd /
// rmsnorm_bwd bf16 8192 x 8192 0.2002 / 0.1976 ms (0.3191 / 0.3119 before),
// 67-68 % of copy; the kernel alone 188 us = 72 %, latency-bound: 16 warps an
// SM, 7.3 cycles between a warp's instructions (ring depth 2 or 3: the same).
#include "norm_warp.cuh"

#include <atomic>

namespace {

// 16 elements a thread, 512 threads for an 8192-element row.  1024 threads
// of 8 (half the partials a thread, 64 registers, twice the warps an SM)
// lost: bf16 8192 x 8192 layernorm_bwd 0.2233 ms against 0.2002, rmsnorm_bwd
// 0.2145 against 0.1976 (H100, 57d434e).
enum { WB_ELEMS = 16, WB_THREADS = NG_WIDE_ROW_MAX / WB_ELEMS, WB_MAX_STAGES = 4 };

// The operands staged per row: x, dy, and the residual when there is one.
enum { WB_X, WB_DY, WB_R };

// Stage this thread's chunks of row `row` (x, dy, residual) into `at`
// (chunk k of operand q at at[(q NV + k) nt]); past D: zero-filled.
template <typename T, int NV>
__device__ __forceinline__ void wb_stage(const ng_row_job &j, int64_t row, int D, uint4 *at, int nt, int ops)
{
    constexpr int VW = 16 / sizeof(T);
    constexpr unsigned M = OPBIT(NG_X) | OPBIT(NG_DY) | OPBIT(NG_Y);
    const int opk[3] = {NG_X, NG_DY, NG_Y};
    int64_t o[NG_NOPS];
    wr_offsets<M>(j.outer, row, o);
    for (int q = 0; q < ops; q++) {
        const T *src = static_cast<const T *>(j.t.p[opk[q]]) + o[opk[q]];
#pragma unroll
        for (int k = 0; k < NV; k++) {
            const int i = (k * nt + (int)threadIdx.x) * VW;
            wr_cp16(at + (q * NV + k) * nt, i < D ? src + i : src, i < D);
        }
    }
}

// Wait until the oldest of this thread's copy groups (the row about to be
// used) has landed: at most stages - 1 pending (the rows ahead).
__device__ __forceinline__ void wb_wait(int stages)
{
    if (stages >= 4)
        asm volatile("cp.async.wait_group 3;" ::: "memory");
    else if (stages == 3)
        asm volatile("cp.async.wait_group 2;" ::: "memory");
    else
        asm volatile("cp.async.wait_group 1;" ::: "memory");
}

// Dynamic shared memory: the ring, stages x ops x NV x nt chunks (ops: 3
// with a residual, else 2).  j.part null: no parameter gradients (the
// partials are summed anyway, the cheaper branch-free form).
template <typename T>
__global__ void __launch_bounds__(WB_THREADS, 1) k_wide_norm_bwd(const ng_row_job j, int64_t rows, int D, int stages)
{
    constexpr int VW = 16 / sizeof(T), NV = WB_ELEMS / VW;
    extern __shared__ uint4 wb_ring[];
    __shared__ float2 sh[2][WB_THREADS / 32];
    const int nt = (int)blockDim.x, t = (int)threadIdx.x, nw = nt >> 5;
    const T *sc = static_cast<const T *>(j.t.p[NG_SC]);
    const bool has_r = j.t.p[NG_Y] != nullptr;
    const int ops = has_r ? 3 : 2, per_stage = ops * NV * nt;
    const float fD = (float)D;
    uint4 *mine = wb_ring + t;
    float ps[WB_ELEMS], pb[WB_ELEMS];
#pragma unroll
    for (int e = 0; e < WB_ELEMS; e++)
        ps[e] = pb[e] = 0.f;
    const int64_t step = gridDim.x;
    int64_t row = blockIdx.x;
    for (int s = 0; s < stages - 1; s++) { // the first rows in flight
        if (row + s * step < rows)
            wb_stage<T, NV>(j, row + s * step, D, mine + s * per_stage, nt, ops);
        wr_cp_commit(); // empty groups too: the wait counts groups
    }
    float2 mi = row < rows ? wr_bwd_stats(j, row) : make_float2(0.f, 0.f);
    int slot = 0, st = 0;
    for (; row < rows; row += step) {
        const int64_t ahead = row + (stages - 1) * step, next = row + step;
        if (ahead < rows)
            wb_stage<T, NV>(j, ahead, D, mine + (st == 0 ? stages - 1 : st - 1) * per_stage, nt, ops);
        wr_cp_commit();
        const float2 nmi = next < rows ? wr_bwd_stats(j, next) : mi; // a row ahead, in registers
        wb_wait(stages);
        const uint4 *at = mine + st * per_stage;
        st = st + 1 == stages ? 0 : st + 1;
        const float mean = mi.x, inv = mi.y;
        float2 s = make_float2(0.f, 0.f); // sum g, sum g xhat
#pragma unroll
        for (int k = 0; k < NV; k++) {
            const int i = (k * nt + t) * VW;
            const bool in = i < D;
            float fx[VW], fd[VW], fw[VW];
            wr_unpack_xdw<T>(at[(WB_X * NV + k) * nt], at[(WB_DY * NV + k) * nt], sc ? sc + i : sc, in, fx, fd, fw);
#pragma unroll
            for (int q = 0; q < VW; q++) {
                const float xh = in ? (fx[q] - mean) * inv : 0.f, g = fd[q] * fw[q];
                ps[k * VW + q] += fd[q] * xh;
                pb[k * VW + q] += fd[q];
                s.x += g;
                s.y += g * xh;
            }
        }
        // the block's sums: shuffles, the warps through sh[slot] (a warp
        // that runs ahead writes the other slot, and cannot come back to
        // this one before every warp has passed the next row's barrier)
#pragma unroll
        for (int m = 16; m > 0; m >>= 1)
            s = wr_comb(s, wr_shfl(s, m), false);
        if ((t & 31) == 0)
            sh[slot][t >> 5] = s;
        __syncthreads();
        s = sh[slot][0];
        for (int w = 1; w < nw; w++)
            s = wr_comb(s, sh[slot][w], false);
        slot ^= 1;
        const wr_dx_row rc = {mean, inv, j.rms ? 0.f : s.x, s.y, inv / fD, fD, j.res_dt};
        int64_t o[NG_NOPS];
        wr_offsets<OPBIT(NG_DX)>(j.outer, row, o);
        T *dxr = static_cast<T *>(j.t.p[NG_DX]) + o[NG_DX];
#pragma unroll
        for (int k = 0; k < NV; k++) {
            const int i = (k * nt + t) * VW;
            if (i < D)
                wr_store_dx<T>(dxr + i, at[(WB_X * NV + k) * nt], at[(WB_DY * NV + k) * nt], sc ? sc + i : sc, has_r,
                               at[(WB_R * NV + k) * nt], rc);
        }
        mi = nmi;
    }
    if (!j.part)
        return;
    // the block's partials of its columns (zeros when it had no row: the
    // column sum reads every block's)
    float *out = j.part + (int64_t)blockIdx.x * 2 * D;
#pragma unroll
    for (int k = 0; k < NV; k++) {
        const int i = (k * nt + t) * VW;
        if (i >= D)
            continue;
#pragma unroll
        for (int q = 0; q < VW; q += 4) {
            *reinterpret_cast<float4 *>(out + i + q) =
                make_float4(ps[k * VW + q], ps[k * VW + q + 1], ps[k * VW + q + 2], ps[k * VW + q + 3]);
            *reinterpret_cast<float4 *>(out + D + i + q) =
                make_float4(pb[k * VW + q], pb[k * VW + q + 1], pb[k * VW + q + 2], pb[k * VW + q + 3]);
        }
    }
}

// The dynamic shared memory a block of this kernel may ask for on the current
// device: the opt-in limit (227 KB on sm_90, 163 KB on sm_80, 99 KB on sm_86/89)
// less a margin for the kernel's static shared memory, at most 200 KB (the
// ring's measured depths fit under it on the H100).  Read once per device.
static size_t wb_smem_cap()
{
    static std::atomic<int> optin[16];
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= 16)
        return 0;
    int v = optin[dev].load(std::memory_order_relaxed);
    if (v == 0) {
        if (cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess || v <= 0)
            v = -1;
        optin[dev].store(v, std::memory_order_relaxed);
    }
    const size_t cap = v > 1024 ? (size_t)v - 1024 : 0;
    return cap < 200 * 1024 ? cap : 200 * 1024;
}

// The ring's depth: 3 rows (2 ahead of the one reducing) where it fits in
// shared memory (cap bytes), else 2, 0 where 2 do not fit (the caller leaves
// the rows to norm.cu); XDNN_NORM_WIDE_STAGES=n asks for n (2 to 4, A/B).
static int wb_stages(size_t per_stage, size_t cap)
{
    static const int want = env_int("XDNN_NORM_WIDE_STAGES", 3);
    int n = want < 2 ? 2 : want > WB_MAX_STAGES ? WB_MAX_STAGES : want;
    while (n > 2 && n * per_stage > cap)
        n--;
    return n * per_stage <= cap ? n : 0;
}

template <typename T>
int wb_launch(const ng_job *j, int64_t rows, int D, cudaStream_t s)
{
    constexpr int VW = 16 / sizeof(T), NV = WB_ELEMS / VW;
    const int pg = j->t.p[NG_DBI] || j->t.p[NG_DSC];
    // the fewest threads (whole warps) whose NV chunks cover the row
    const int chunks = (D + VW - 1) / VW, nt = ((chunks + NV - 1) / NV + 31) / 32 * 32;
    if (D % VW || nt > WB_THREADS || (pg && (!j->part || j->pg_blocks < 1)))
        return -1;
    const size_t per_stage = (size_t)(j->t.p[NG_Y] ? 3 : 2) * NV * nt * 16;
    const int stages = wb_stages(per_stage, wb_smem_cap());
    if (!stages) // pre-Hopper shared memory: two staged rows do not fit
        return -1;
    const size_t smem = stages * per_stage;
    const unsigned grid = wr_grid_for((const void *)k_wide_norm_bwd<T>, smem, nt, rows, 1,
                                      pg ? j->pg_blocks : INT32_MAX);
    ng_row_job k = wr_row_job(j);
    if (!pg)
        k.part = nullptr;
    k_wide_norm_bwd<T><<<grid, nt, smem, s>>>(k, rows, D, stages);
    int e = (int)cudaGetLastError();
    if (e || !pg)
        return e;
    return ng_launch_block_pgrad_cols(j, D, (int)grid, s);
}

} // namespace

extern "C" int ng_launch_wide_norm_bwd(const ng_job *j, int64_t rows, int64_t D, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (rows <= 0)
        return 0;
    if (D > NG_WIDE_ROW_MAX)
        return -1;
    switch (j->t.dt[NG_X]) {
    case DT_F16: return wb_launch<__half>(j, rows, (int)D, s);
    case DT_BF16: return wb_launch<__nv_bfloat16>(j, rows, (int)D, s);
    default: return wb_launch<float>(j, rows, (int)D, s);
    }
}
