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
#include "norm_warp.cuh"

namespace {

enum { WR2_BWD_NV = 2 };

// The operands staged per row: x, dy, and the residual when there is one.
enum { WR_BX, WR_BDY, WR_BR };

// Stage this lane's chunks of row `row` (x, dy, residual) into ring stage `st`.
template <typename T, int NV>
__device__ __forceinline__ void wr_bwd_stage(const ng_job &j, int64_t row, int D, const wr_pos &p, uint4 *mine,
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

// mean (0 for rms) and inv of a row, from the statistics tensors.
__device__ __forceinline__ float2 wr_bwd_stats(const ng_job &j, int64_t row)
{
    int64_t o[NG_NOPS];
    wr_offsets<OPBIT(NG_MEAN) | OPBIT(NG_INV)>(j.outer, row, o);
    return make_float2(j.rms ? 0.f : ldf(j.t.p[NG_MEAN], o[NG_MEAN], j.t.dt[NG_MEAN]),
                       ldf(j.t.p[NG_INV], o[NG_INV], j.t.dt[NG_INV]));
}

// PG: 0 no parameter gradients, 1 dscale, 2 dscale and dbias (j.part holds
// gridDim.x * (8 / wpr) groups of 2 D floats).  Rows with a bias gradient
// only (no dscale) take PG = 2 too.  Dynamic shared memory: the ring,
// WR2_STAGES x ops x NV x 256 chunks (ops: 3 with a residual, else 2).
template <typename T, int NV, int PG>
__global__ void __launch_bounds__(WR_WARPS * 32, 2) k_warp_norm_bwd(const ng_job j, int64_t rows, int D, int wpr)
{
    constexpr int VW = 16 / sizeof(T), N = NV * VW, TH = WR_WARPS * 32;
    extern __shared__ uint4 wr_stage[];
    __shared__ float2 sh[2][WR_WARPS];
    const wr_pos p = wr_here(wpr);
    const int64_t gid = (int64_t)blockIdx.x * (WR_WARPS / wpr) + p.group;
    const int64_t step = (int64_t)gridDim.x * (WR_WARPS / wpr);
    const T *sc = static_cast<const T *>(j.t.p[NG_SC]);
    const bool has_r = j.t.p[NG_Y] != nullptr;
    const int ops = has_r ? 3 : 2;
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
            float2 s = make_float2(0.f, 0.f); // sum g, sum g xhat
#pragma unroll
            for (int k = 0; k < NV; k++) {
                const int i = wr_index<T, true>(k * VW, p);
                const bool in = i < D;
                float fx[VW], fd[VW], fw[VW];
                wr_unpack<T>(at[(WR_BX * NV + k) * TH], fx);
                wr_unpack<T>(at[(WR_BDY * NV + k) * TH], fd);
                if (sc)
                    wr_unpack<T>(in ? *reinterpret_cast<const uint4 *>(sc + i) : make_uint4(0, 0, 0, 0), fw);
#pragma unroll
                for (int q = 0; q < VW; q++) {
                    const float xh = in ? (fx[q] - mean) * inv : 0.f, g = fd[q] * (sc ? fw[q] : 1.f);
                    if (PG)
                        ps[k * VW + q] += fd[q] * xh;
                    if (PG == 2)
                        pb[k * VW + q] += fd[q];
                    s.x += g;
                    s.y += g * xh;
                }
            }
            s = wr_reduce<false>(s, p, sh, slot);
            slot ^= 1;
            const float sa = j.rms ? 0.f : s.x, sb = s.y, k_inv = inv / fD;
            int64_t o[NG_NOPS];
            wr_offsets<OPBIT(NG_DX)>(j.outer, row, o);
            T *dxr = static_cast<T *>(j.t.p[NG_DX]) + o[NG_DX];
#pragma unroll
            for (int k = 0; k < NV; k++) {
                const int i = wr_index<T, true>(k * VW, p);
                if (i >= D)
                    continue;
                float fx[VW], fd[VW], fw[VW], fr[VW];
                wr_unpack<T>(at[(WR_BX * NV + k) * TH], fx);
                wr_unpack<T>(at[(WR_BDY * NV + k) * TH], fd);
                if (sc)
                    wr_unpack<T>(*reinterpret_cast<const uint4 *>(sc + i), fw);
                if (has_r)
                    wr_unpack<T>(at[(WR_BR * NV + k) * TH], fr);
                chunk16<T> out;
#pragma unroll
                for (int q = 0; q < VW; q++) {
                    const float xh = (fx[q] - mean) * inv, g = fd[q] * (sc ? fw[q] : 1.f);
                    float dx = k_inv * (fD * g - sa - xh * sb);
                    if (has_r)
                        dx = round_dt(dx, j.res_dt) + fr[q];
                    out.v[q] = from_f<T>(dx);
                }
                *reinterpret_cast<chunk16<T> *>(dxr + i) = out;
            }
            mi = nmi;
        }
    }
    if (!PG)
        return;
    // every group writes its partials, zeros when it had no row: the column
    // sum reads all of them
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

template <typename T, int NV, int PG>
int wr_bwd_launch(const ng_job *j, int64_t rows, int D, int wpr, cudaStream_t s)
{
    const int64_t gpb = WR_WARPS / wpr;
    const size_t smem = (size_t)WR2_STAGES * (j->t.p[NG_Y] ? 3 : 2) * NV * WR_WARPS * 32 * 16;
    const unsigned grid = wr2_grid((const void *)k_warp_norm_bwd<T, NV, PG>, smem, rows, wpr,
                                   PG ? j->pg_blocks / gpb : INT32_MAX);
    k_warp_norm_bwd<T, NV, PG><<<grid, WR_WARPS * 32, smem, s>>>(*j, rows, D, wpr);
    int e = (int)cudaGetLastError();
    return e || !PG ? e : ng_launch_pgrad_cols(j, D, (int)(grid * gpb), s);
}

template <typename T>
int wr_norm_bwd(const ng_job *j, int64_t rows, int64_t D, cudaStream_t s)
{
    constexpr int VW = 16 / sizeof(T);
    const int ops[] = {NG_X, NG_DY, NG_DX, NG_Y};
    if (D % VW || env_int("XDNN_NORM_WARP_V", 2) == 1 || !wr2_params_ok<T>(j, NG_SC))
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
    if (!wr2_pick<T>(D, WR2_BWD_NV, &g) || (pg && (!j->part || j->pg_blocks < WR_WARPS / g.wpr)))
        return -1;
#define WR_BWD(NV)                                                                                           \
    (pg == 2   ? wr_bwd_launch<T, NV, 2>(j, rows, (int)D, g.wpr, s)                                           \
     : pg == 1 ? wr_bwd_launch<T, NV, 1>(j, rows, (int)D, g.wpr, s)                                           \
               : wr_bwd_launch<T, NV, 0>(j, rows, (int)D, g.wpr, s))
    return g.nv == 1 ? WR_BWD(1) : WR_BWD(2);
#undef WR_BWD
}

} // namespace

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
