// norm_warp_bwd.cu — layernorm / rmsnorm backward over rows of up to
// WR2_BWD_NV 16-byte chunks a lane (16-bit rows up to 4096 elements, f32 up
// to 2048: the Llama block's rmsnorm rows, GPT / BERT / ViT layernorm widths)
// with the warp-row geometry of norm_warp.cuh:
//   xhat = (x - mean) inv, g = dy scale,
//   dx = inv / D (D g - sum g - xhat sum g xhat)   (rms: no mean, no sum g),
//   dx = round(dx) + r when the partition adds a residual r (NG_Y);
//   dscale += dy xhat, dbias += dy, summed over the rows.
// v1 (session 9; replaces, for these rows, norm.cu's k_row_bwd_pg / k_row_bwd
// behind a statistics-loading finalize: a block per row, 8-byte loads of
// 16-bit rows, three __syncthreads per reduction, and the next row's loads
// only after the current row's store):
//  - a persistent grid (wr2_grid); row group g walks rows g, g + G, ..., so
//    a lane owns the same columns in every row: scale loaded once, and the
//    dscale / dbias partials of its columns stay in registers (f32) until the
//    end, written once to part[group][2][D]; ng_launch_pgrad_cols sums them;
//  - x, dy, the residual and mean / inv (read from the statistics tensors
//    themselves: no finalize launch) of the next row are loaded before the
//    current row's reduction: two rows in flight per group;
//  - sum g and sum g xhat reduced together (one shuffle tree of float2, one
//    barrier).
// v3 (session 9, "normbwd"; rows of 1-2 warps, wr_norm_bwd; v2 kept the
// rows of 4-8 warps, where v3 lost (v4 has them since session 15): each width runs the one that won there,
// session 10 retired the switch XDNN_NORM_BWD_V and v2's one-chunk forms):
// v2 held
// 118-128 registers (16-bit rows with parameter gradients: 16-32 partials a
// lane), 2 blocks an SM.  v3 keeps
//  - the partials in shared memory, each lane its own slots [e][thread] (no
//    conflicts, no barrier while the rows run), and sums the block's groups
//    at the end in a fixed order (deterministic) into one partial per block:
//    part[block][2][D], 8 / wpr times fewer than v2's per group (8192 x 768:
//    1056 groups x 6 KB written and read again, a third of the rows' bytes);
//  - the residual out of the ring: loaded into registers after the row's
//    wait, before its reduction (two operands staged: a smaller ring);
//  - __launch_bounds__(256, 3): at most 80 registers, 3 blocks an SM where
//    the shared memory allows it.
// v4 (session 15, "rmsb"; the rows of 4-8 warps, v2's, by default): two
// rows a barrier, k_warp_norm_bwd_pair below.
#include "norm_warp.cuh"

namespace {

enum { WR2_BWD_NV = 2 };
static_assert(WR_WARPS * 32 * WR2_BWD_NV * 16 == NG_WARP_BWD_ROW_BYTES, "kern_norm.h names this width");

// The operands staged per row: x, dy, and the residual when there is one.
enum { WR_BX, WR_BDY, WR_BR };

// Stage this lane's chunks of row `row` (x, dy, residual) into ring stage `st`.
template <typename T, int NV>
__device__ __forceinline__ void wr_bwd_stage(const ng_row_job &j, int64_t row, int D, const wr_pos &p, uint4 *mine,
                                             int st, int ops)
{
    constexpr int TH = WR_WARPS * 32;
    constexpr unsigned M = OPBIT(NG_X) | OPBIT(NG_DY) | OPBIT(NG_Y);
    int64_t o[NG_NOPS];
    wr_offsets<M>(j.outer, row, o);
    uint4 *at = mine + st * ops * NV * TH;
    wr_stage_row<T, NV>(at + WR_BX * NV * TH, static_cast<const T *>(j.t.p[NG_X]) + o[NG_X], D, p);
    wr_stage_row<T, NV>(at + WR_BDY * NV * TH, static_cast<const T *>(j.t.p[NG_DY]) + o[NG_DY], D, p);
    if (ops > WR_BR)
        wr_stage_row<T, NV>(at + WR_BR * NV * TH, static_cast<const T *>(j.t.p[NG_Y]) + o[NG_Y], D, p);
}

// v3's end: the block's partial of each column, summed over its groups in
// group order (deterministic), to part[blockIdx.x][2][D].  psh: the block's
// partials, value e of thread t at psh[e * 256 + t] (dbias: e + N).
template <typename T, int NV, int PG>
__device__ void wr_bwd_block_partials(const ng_row_job &j, int D, int wpr, const float *psh)
{
    constexpr int VW = 16 / sizeof(T), N = NV * VW, TH = WR_WARPS * 32;
    __syncthreads();
    float *out = j.part + (int64_t)blockIdx.x * 2 * D;
    const int gpb = WR_WARPS / wpr;
    for (int c = threadIdx.x; c < D; c += TH) {
        // the lane of group 0 owning column c (wr_index inverted), value e
        const int ch = c / VW, lane = ch & 31, wr = (ch >> 5) % wpr, k = (ch >> 5) / wpr;
        const int e = k * VW + c % VW, t = wr * 32 + lane;
        float a = 0.f, b = 0.f;
        for (int g = 0; g < gpb; g++) {
            a += psh[e * TH + g * wpr * 32 + t];
            if (PG == 2)
                b += psh[(N + e) * TH + g * wpr * 32 + t];
        }
        out[c] = a;
        if (PG == 2)
            out[D + c] = b;
    }
}

// A row group's parameter-gradient partials (this lane's columns, dbias after dscale) to part[gid][2][D]: v2's
// and v4's column sums read every group's.
template <typename T, int NV, int PG>
__device__ __forceinline__ void wr_bwd_group_partials(const ng_row_job &j, int D, const wr_pos &p, int64_t gid,
                                                      const float *ps, const float *pb)
{
    constexpr int VW = 16 / sizeof(T);
    float *out = j.part + gid * 2 * D;
#pragma unroll
    for (int k = 0; k < NV; k++) {
        const int i = wr_index<T, true>(k * VW, p);
        if (i >= D)
            continue;
#pragma unroll
        for (int q = 0; q < VW; q += 4) {
            *reinterpret_cast<float4 *>(out + i + q) =
                make_float4(ps[k * VW + q], ps[k * VW + q + 1], ps[k * VW + q + 2], ps[k * VW + q + 3]);
            if (PG == 2)
                *reinterpret_cast<float4 *>(out + D + i + q) =
                    make_float4(pb[k * VW + q], pb[k * VW + q + 1], pb[k * VW + q + 2], pb[k * VW + q + 3]);
        }
    }
}

// PG: 0 no parameter gradients, 1 dscale, 2 dscale and dbias (j.part holds
// gridDim.x * (8 / wpr) groups of 2 D floats).  Rows with a bias gradient
// only (no dscale) take PG = 2 too.  Dynamic shared memory: the ring,
// WR2_STAGES x ops x NV x 256 chunks (ops: 3 with a residual, else 2).
// V3: the partials in shared memory after the ring (PG x N x 256 floats),
// the residual loaded into registers (module comment).
template <typename T, int NV, int PG, bool V3>
__global__ void __launch_bounds__(WR_WARPS * 32, V3 ? 3 : 2)
    k_warp_norm_bwd(const ng_row_job j, int64_t rows, int D, int wpr)
{
    constexpr int VW = 16 / sizeof(T), N = NV * VW, TH = WR_WARPS * 32;
    extern __shared__ uint4 wr_stage[];
    __shared__ float2 sh[2][WR_WARPS];
    const wr_pos p = wr_here(wpr);
    const int64_t gid = (int64_t)blockIdx.x * (WR_WARPS / wpr) + p.group;
    const int64_t step = (int64_t)gridDim.x * (WR_WARPS / wpr);
    const T *sc = static_cast<const T *>(j.t.p[NG_SC]);
    const bool has_r = j.t.p[NG_Y] != nullptr;
    const int ops = has_r && !V3 ? 3 : 2;
    const float fD = (float)D;
    uint4 *mine = wr_stage + threadIdx.x;
    // V3: this thread's partial e at psh[e * TH] (dscale), psh[(N + e) * TH] (dbias)
    float *psh = reinterpret_cast<float *>(wr_stage + WR2_STAGES * 2 * NV * TH) + threadIdx.x;
    float ps[PG && !V3 ? N : 1], pb[PG == 2 && !V3 ? N : 1];
#pragma unroll
    for (int e = 0; e < (PG && !V3 ? N : 1); e++)
        ps[e] = 0.f;
#pragma unroll
    for (int e = 0; e < (PG == 2 && !V3 ? N : 1); e++)
        pb[e] = 0.f;
    if (V3)
        for (int e = 0; e < PG * N; e++)
            psh[e * TH] = 0.f;
    if (gid < rows) {
        for (int s = 0; s < WR2_STAGES - 1; s++) { // the first rows in flight
            if (gid + s * step < rows)
                wr_bwd_stage<T, NV>(j, gid + s * step, D, p, mine, s, ops);
            wr_cp_commit(); // empty groups too: the wait counts groups
        }
        float2 mi = wr_bwd_stats(j, gid);
        int slot = 0, st = 0;
        for (int64_t row = gid; row < rows; row += step) {
            const int64_t ahead = row + (WR2_STAGES - 1) * step, next = row + step;
            if (ahead < rows)
                wr_bwd_stage<T, NV>(j, ahead, D, p, mine, (st + WR2_STAGES - 1) % WR2_STAGES, ops);
            wr_cp_commit();
            const float2 nmi = next < rows ? wr_bwd_stats(j, next) : mi; // a row ahead, in registers
            wr_cp_wait_oldest();
            const uint4 *at = mine + st * ops * NV * TH;
            st = st + 1 == WR2_STAGES ? 0 : st + 1;
            const float mean = mi.x, inv = mi.y;
            uint4 rr[V3 ? NV : 1]; // v3: the residual, in flight during the reduction
            if (V3 && has_r) {
                int64_t o[NG_NOPS];
                wr_offsets<OPBIT(NG_Y)>(j.outer, row, o);
                wr_load_row<T, V3 ? NV : 1>(static_cast<const T *>(j.t.p[NG_Y]) + o[NG_Y], D, p, rr);
            }
            float2 s = make_float2(0.f, 0.f); // sum g, sum g xhat
#pragma unroll
            for (int k = 0; k < NV; k++) {
                const int i = wr_index<T, true>(k * VW, p);
                const bool in = i < D;
                float fx[VW], fd[VW], fw[VW];
                wr_unpack_xdw<T>(at[(WR_BX * NV + k) * TH], at[(WR_BDY * NV + k) * TH], sc ? sc + i : sc, in, fx, fd,
                                 fw);
#pragma unroll
                for (int q = 0; q < VW; q++) {
                    const float xh = in ? (fx[q] - mean) * inv : 0.f, g = fd[q] * fw[q];
                    if (PG && V3)
                        psh[(k * VW + q) * TH] += fd[q] * xh;
                    else if (PG)
                        ps[k * VW + q] += fd[q] * xh;
                    if (PG == 2 && V3)
                        psh[(N + k * VW + q) * TH] += fd[q];
                    else if (PG == 2)
                        pb[k * VW + q] += fd[q];
                    s.x += g;
                    s.y += g * xh;
                }
            }
            s = wr_reduce<false>(s, p, sh, slot);
            slot ^= 1;
            const wr_dx_row rc = {mean, inv, j.rms ? 0.f : s.x, s.y, inv / fD, fD, j.res_dt};
            int64_t o[NG_NOPS];
            wr_offsets<OPBIT(NG_DX)>(j.outer, row, o);
            T *dxr = static_cast<T *>(j.t.p[NG_DX]) + o[NG_DX];
#pragma unroll
            for (int k = 0; k < NV; k++) {
                const int i = wr_index<T, true>(k * VW, p);
                if (i < D)
                    wr_store_dx<T>(dxr + i, at[(WR_BX * NV + k) * TH], at[(WR_BDY * NV + k) * TH], sc ? sc + i : sc,
                                   has_r, V3 ? rr[V3 ? k : 0] : at[(WR_BR * NV + k) * TH], rc);
            }
            mi = nmi;
        }
    }
    if (!PG)
        return;
    if (V3) {
        wr_bwd_block_partials<T, NV, PG>(j, D, wpr, psh - threadIdx.x);
        return;
    }
    // every group writes its partials, zeros when it had no row: the column
    // sum reads all of them
    wr_bwd_group_partials<T, NV, PG>(j, D, p, gid, ps, pb);
}

// v4 (session 15, "rmsb"; rows of 4-8 warps of 2 chunks a lane, where v2 ran:
// 16-bit widths 1025-4096, f32 513-2048; XDNN_NORM_BWD_PAIR=0 keeps v2):
// v2 at 8 warps a row is one row group a block, 2 blocks an SM (16 warps),
// and every row waits at its group's barrier after a chain of shuffles, so
// the SM idles between the rows (bf16 8192 x 4096: 66-69 % of copy while
// its loads run two rows ahead).  v4 takes the group's rows two at a time:
// both rows' first passes back to back (independent loads and arithmetic),
// one shuffle tree of float4 (both rows' sum g, sum g xhat) and one barrier
// for the two, then both stores: half the barriers and reduction chains a
// row, the same registers for the partials (the rows share the columns).
// The ring holds two pairs (the one in use and the next, in flight: rows
// staged two row-times ahead, as v2's three single rows); the residual stays
// in the ring.  The partials are v2's, one per group, summed by v3's column
// sum (8 loads in flight a thread; v2's column sum loads one at a time).
template <typename T, int PG>
__global__ void __launch_bounds__(WR_WARPS * 32, 2)
    k_warp_norm_bwd_pair(const ng_row_job j, int64_t rows, int D, int wpr)
{
    constexpr int NV = WR2_BWD_NV, VW = 16 / sizeof(T), N = NV * VW, TH = WR_WARPS * 32;
    extern __shared__ uint4 wr_stage[];
    __shared__ float4 sh[2][WR_WARPS];
    const wr_pos p = wr_here(wpr);
    const int64_t gid = (int64_t)blockIdx.x * (WR_WARPS / wpr) + p.group;
    const int64_t step = (int64_t)gridDim.x * (WR_WARPS / wpr);
    const T *sc = static_cast<const T *>(j.t.p[NG_SC]);
    const bool has_r = j.t.p[NG_Y] != nullptr;
    const int ops = has_r ? 3 : 2, row_slots = ops * NV * TH;
    const float fD = (float)D;
    uint4 *mine = wr_stage + threadIdx.x;
    float ps[PG ? N : 1], pb[PG == 2 ? N : 1];
#pragma unroll
    for (int e = 0; e < (PG ? N : 1); e++)
        ps[e] = 0.f;
#pragma unroll
    for (int e = 0; e < (PG == 2 ? N : 1); e++)
        pb[e] = 0.f;
    if (gid < rows) {
        // pair q (the group's rows row and row + step) in ring slots 2 (q & 1) and 2 (q & 1) + 1
        for (int r = 0; r < 2; r++)
            if (gid + r * step < rows)
                wr_bwd_stage<T, NV>(j, gid + r * step, D, p, mine, r, ops);
        wr_cp_commit();
        float2 mi[2] = {wr_bwd_stats(j, gid), gid + step < rows ? wr_bwd_stats(j, gid + step) : make_float2(0.f, 0.f)};
        int slot = 0, st = 0;
        for (int64_t row = gid; row < rows; row += 2 * step) {
            const int64_t next = row + 2 * step;
            for (int r = 0; r < 2; r++)
                if (next + r * step < rows)
                    wr_bwd_stage<T, NV>(j, next + r * step, D, p, mine, 2 * (st ^ 1) + r, ops);
            wr_cp_commit();
            const float2 nmi[2] = {next < rows ? wr_bwd_stats(j, next) : mi[0],
                                   next + step < rows ? wr_bwd_stats(j, next + step) : mi[1]};
            asm volatile("cp.async.wait_group 1;" ::: "memory"); // this pair landed, the next may not have
            const uint4 *at[2] = {mine + 2 * st * row_slots, mine + (2 * st + 1) * row_slots};
            st ^= 1;
            const bool two = row + step < rows; // group-uniform: the barrier below is reached by all
            // each chunk's scale unpacked once for the two rows (loaded once in each pass)
            float4 s = make_float4(0.f, 0.f, 0.f, 0.f); // sum g, sum g xhat of the two rows
#pragma unroll
            for (int k = 0; k < NV; k++) {
                const int i = wr_index<T, true>(k * VW, p);
                const bool in = i < D;
                float fx[VW], fd[VW], fw[VW];
                wr_unpack_xdw<T>(at[0][(WR_BX * NV + k) * TH], at[0][(WR_BDY * NV + k) * TH], sc ? sc + i : sc, in,
                                 fx, fd, fw);
#pragma unroll
                for (int r = 0; r < 2; r++) {
                    if (r == 1) {
                        if (!two)
                            break;
                        wr_unpack<T>(at[1][(WR_BX * NV + k) * TH], fx);
                        wr_unpack<T>(at[1][(WR_BDY * NV + k) * TH], fd);
                    }
                    const float mean = mi[r].x, inv = mi[r].y;
                    float sg = 0.f, sgx = 0.f;
#pragma unroll
                    for (int q = 0; q < VW; q++) {
                        const float xh = in ? (fx[q] - mean) * inv : 0.f, g = fd[q] * fw[q];
                        if (PG)
                            ps[k * VW + q] += fd[q] * xh;
                        if (PG == 2)
                            pb[k * VW + q] += fd[q];
                        sg += g;
                        sgx += g * xh;
                    }
                    if (r == 0)
                        s.x += sg, s.y += sgx;
                    else
                        s.z += sg, s.w += sgx;
                }
            }
            s = wr_reduce<false>(s, p, sh, slot);
            slot ^= 1;
            wr_dx_row rc[2];
            T *dxr[2];
#pragma unroll
            for (int r = 0; r < 2; r++) {
                const float sa = r ? s.z : s.x, sb = r ? s.w : s.y;
                rc[r] = {mi[r].x, mi[r].y, j.rms ? 0.f : sa, sb, mi[r].y / fD, fD, j.res_dt};
                int64_t o[NG_NOPS];
                wr_offsets<OPBIT(NG_DX)>(j.outer, row + r * step, o); // past the rows for a lone row: not stored
                dxr[r] = static_cast<T *>(j.t.p[NG_DX]) + o[NG_DX];
            }
#pragma unroll
            for (int k = 0; k < NV; k++) {
                const int i = wr_index<T, true>(k * VW, p);
                if (i >= D)
                    continue;
                float fw[VW];
                if (sc)
                    wr_unpack<T>(*reinterpret_cast<const uint4 *>(sc + i), fw);
                else
                    for (int q = 0; q < VW; q++)
                        fw[q] = 1.f;
#pragma unroll
                for (int r = 0; r < 2; r++)
                    if (r == 0 || two)
                        wr_store_dx_fw<T>(dxr[r] + i, at[r][(WR_BX * NV + k) * TH], at[r][(WR_BDY * NV + k) * TH], fw,
                                          has_r, at[r][(WR_BR * NV + k) * TH], rc[r]);
            }
            mi[0] = nmi[0], mi[1] = nmi[1];
        }
    }
    if (!PG)
        return;
    wr_bwd_group_partials<T, NV, PG>(j, D, p, gid, ps, pb); // zeros when it had no row (as v2)
}

// v3's column sum of the blocks' partials part[nblk][2][D] into dscale /
// dbias (v2: norm.cu's k_pgrad_cols, 8 warps of a 32-column block walking the
// partials one load each a step).  Here 16 warps, each walking every 16th
// partial 8 at a time (8 loads in flight a thread: 8192 x 768 has 24 column
// blocks, and one load a step left them waiting on latency), then the warps'
// sums in warp order: deterministic.
enum { WR_PC_WARPS = 16 };

__global__ void __launch_bounds__(32 * WR_PC_WARPS) k_wr_pgrad_cols(const ng_row_job j, int D, int nblk)
{
    __shared__ float sh[2][WR_PC_WARPS][33];
    const int col = blockIdx.x * 32 + threadIdx.x;
    const bool bias = j.t.p[NG_DBI] != nullptr;
    float s = 0.f, b = 0.f;
    if (col < D) {
        const float *src = j.part + col;
        int k = threadIdx.y;
        for (; k + 7 * WR_PC_WARPS < nblk; k += 8 * WR_PC_WARPS) {
            float a[8], c[8];
#pragma unroll
            for (int u = 0; u < 8; u++) {
                a[u] = src[(int64_t)(k + u * WR_PC_WARPS) * 2 * D];
                c[u] = bias ? src[(int64_t)(k + u * WR_PC_WARPS) * 2 * D + D] : 0.f;
            }
#pragma unroll
            for (int u = 0; u < 8; u++)
                s += a[u], b += c[u];
        }
        for (; k < nblk; k += WR_PC_WARPS) {
            s += src[(int64_t)k * 2 * D];
            if (bias)
                b += src[(int64_t)k * 2 * D + D];
        }
    }
    sh[0][threadIdx.y][threadIdx.x] = s;
    sh[1][threadIdx.y][threadIdx.x] = b;
    __syncthreads();
    if (threadIdx.y != 0 || col >= D)
        return;
    for (int w = 1; w < WR_PC_WARPS; w++)
        s += sh[0][w][threadIdx.x], b += sh[1][w][threadIdx.x];
    if (j.t.p[NG_DSC])
        stf(j.t.p[NG_DSC], (int64_t)col * j.inner.stride[NG_DSC][0], j.t.dt[NG_DSC], s);
    if (bias)
        stf(j.t.p[NG_DBI], (int64_t)col * j.inner.stride[NG_DBI][0], j.t.dt[NG_DBI], b);
}

// v3 writes a partial per block, v2 one per group (gpb a block).
template <typename T, int NV, int PG, bool V3>
int wr_bwd_launch(const ng_job *j, int64_t rows, int D, int wpr, cudaStream_t s)
{
    constexpr int TH = WR_WARPS * 32;
    const int64_t gpb = WR_WARPS / wpr, per_part = V3 ? 1 : gpb;
    const size_t smem = (size_t)WR2_STAGES * (j->t.p[NG_Y] && !V3 ? 3 : 2) * NV * TH * 16 +
                        (V3 ? (size_t)PG * NV * (16 / sizeof(T)) * TH * sizeof(float) : 0);
    const unsigned grid = wr2_grid((const void *)k_warp_norm_bwd<T, NV, PG, V3>, smem, rows, wpr,
                                   PG ? j->pg_blocks / per_part : INT32_MAX);
    k_warp_norm_bwd<T, NV, PG, V3><<<grid, TH, smem, s>>>(wr_row_job(j), rows, D, wpr);
    int e = (int)cudaGetLastError();
    if (e || !PG)
        return e;
    if (!V3)
        return ng_launch_pgrad_cols(j, D, (int)(grid * per_part), s);
    return ng_launch_block_pgrad_cols(j, D, (int)grid, s);
}

// v4: two rows a barrier (the kernel's comment); partials per group, v3's column sum.
template <typename T, int PG>
int wr_bwd_pair_launch(const ng_job *j, int64_t rows, int D, int wpr, cudaStream_t s)
{
    constexpr int TH = WR_WARPS * 32;
    const int64_t gpb = WR_WARPS / wpr;
    const size_t smem = (size_t)4 * (j->t.p[NG_Y] ? 3 : 2) * WR2_BWD_NV * TH * 16; // two pairs of rows
    const unsigned grid =
        wr2_grid((const void *)k_warp_norm_bwd_pair<T, PG>, smem, rows, wpr, PG ? j->pg_blocks / gpb : INT32_MAX);
    k_warp_norm_bwd_pair<T, PG><<<grid, TH, smem, s>>>(wr_row_job(j), rows, D, wpr);
    int e = (int)cudaGetLastError();
    if (e || !PG)
        return e;
    return ng_launch_block_pgrad_cols(j, D, (int)(grid * gpb), s);
}

template <typename T>
int wr_norm_bwd(const ng_job *j, int64_t rows, int64_t D, cudaStream_t s)
{
    constexpr int VW = 16 / sizeof(T);
    const int ops[] = {NG_X, NG_DY, NG_DX, NG_Y};
    static const int wv = env_int("XDNN_NORM_WARP_V", 2);
    if (D % VW || wv == 1 || !wr2_params_ok<T>(j, NG_SC))
        return -1;
    for (int q = 0; q < 4; q++) {
        if (!j->t.p[ops[q]])
            continue;
        if (!aligned16(j->t.p[ops[q]]))
            return -1;
        for (int i = 0; i < j->outer.n; i++)
            if (j->outer.stride[ops[q]][i] % VW)
                return -1;
    }
    const int pg = j->t.p[NG_DBI] ? 2 : j->t.p[NG_DSC] ? 1 : 0;
    wr_geom g;
    if (!wr2_pick<T>(D, WR2_BWD_NV, &g)) {
        // wider than 8 warps of 2 chunks: a block per row (norm_wide_bwd.cu);
        // the plan's XDNN_NORM_WIDE_BWD=0 leaves them to norm.cu's row kernels (A/B)
        return j->no_wide_bwd ? -1 : ng_launch_wide_norm_bwd(j, rows, D, s);
    }
    if (pg && (!j->part || j->pg_blocks < WR_WARPS / g.wpr))
        return -1;
    // v3 where a block holds 4 or 8 row groups (rows of 1-2 warps): its one
    // partial a block cuts the partials 4-8x; measured (H100, 7876890) layernorm_bwd
    // f16 8192x768 0.0402 -> 0.0362 ms.  Rows of 8 warps (one group a block) gain
    // nothing there and lost to the shared-memory partials: rmsnorm_bwd bf16
    // 8192x4096 0.1015 -> 0.1116 ms, so v2 (4 warps: unmeasured, v2 kept).  Rows
    // of 4-8 warps hold 2 chunks a lane unless XDNN_NORM_WPR forces more warps:
    // those one-chunk rows take v3 (v2 is built for 2 chunks only).  v2's rows
    // take v4 unless XDNN_NORM_BWD_PAIR=0.
    const bool v3 = g.wpr <= 2 || g.nv == 1;
#define WR_BWD(NV, V3)                                                                                       \
    (pg == 2   ? wr_bwd_launch<T, NV, 2, V3>(j, rows, (int)D, g.wpr, s)                                       \
     : pg == 1 ? wr_bwd_launch<T, NV, 1, V3>(j, rows, (int)D, g.wpr, s)                                       \
               : wr_bwd_launch<T, NV, 0, V3>(j, rows, (int)D, g.wpr, s))
    if (v3)
        return g.nv == 1 ? WR_BWD(1, true) : WR_BWD(2, true);
    if (!j->no_pair_bwd) // the plan's XDNN_NORM_BWD_PAIR=0 keeps v2 (A/B)
        return pg == 2   ? wr_bwd_pair_launch<T, 2>(j, rows, (int)D, g.wpr, s)
               : pg == 1 ? wr_bwd_pair_launch<T, 1>(j, rows, (int)D, g.wpr, s)
                         : wr_bwd_pair_launch<T, 0>(j, rows, (int)D, g.wpr, s);
    return WR_BWD(2, false);
#undef WR_BWD
}

} // namespace

extern "C" int ng_launch_block_pgrad_cols(const ng_job *j, int64_t D, int nblk, void *stream)
{
    k_wr_pgrad_cols<<<(unsigned)((D + 31) / 32), dim3(32, WR_PC_WARPS), 0, static_cast<cudaStream_t>(stream)>>>(
        wr_row_job(j), (int)D, nblk);
    return (int)cudaGetLastError();
}

extern "C" int ng_launch_warp_norm_bwd(const ng_job *j, int64_t rows, int64_t D, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (rows <= 0)
        return 0;
    switch (j->t.dt[NG_X]) {
    case DT_F16: return wr_norm_bwd<__half>(j, rows, D, s);
    case DT_BF16: return wr_norm_bwd<__nv_bfloat16>(j, rows, D, s);
    default: return wr_norm_bwd<float>(j, rows, D, s);
    }
}
