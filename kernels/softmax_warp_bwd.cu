// softmax_warp_bwd.cu — softmax_bwd and log_softmax_bwd over rows of up to
// NG_SMB_ROW_BYTES (16-bit rows up to 8192 elements, f32 up to 4096) on the
// warp rows of norm_warp.cuh: a row group of 1, 2, 4 or 8 warps of a block of
// 8 warps holds one row of y and dy in registers.  As the CPU reference
// (src/ops/softmax.c), with s the row's one sum:
//   softmax_bwd      s = sum dy y,  dx = y (dy - s)
//   log_softmax_bwd  s = sum dy,    dx = dy - exp(y) s        (y: log_softmax's output)
// f32 math: y and dy converted exactly, the products dy y of 16-bit inputs
// exact in f32, each lane's partial of at most 32 terms, then the shuffle
// tree and the group's warps in a fixed order; dx rounded once, on its store
// (the reference sums in double and rounds once; norm.cu's split path, the
// one this replaces, sums in f32 too).
// v1 (session 12, "smbwd"; the default since session 13, XDNN_SOFTMAX_BWD_ROWS=0
// is the A/B; eng_norm.c): replaces, for these rows, norm.cu's split
// reduction (reduce -> finalize -> apply: y and dy read twice, three
// launches; bf16 8192 x 8192 at 24 % of copy).  y and dy read once, every
// load issued before the row's one reduction, dx written once:
//  - VEC (the row 16-byte aligned in y, dy and dx, D % VW == 0: checked at
//    launch): lane l of warp w of the row holds 16-byte chunk k at element
//    ((k wpr + w) 32 + l) VW, NV chunks of y and NV of dy as loaded (uint4),
//    unpacked at each use (16-bit rows: half the registers of floats);
//  - otherwise (odd D, rows padded or offset off 16 bytes) element e is
//    (e wpr + w) 32 + l, scalar loads (coalesced), NV VW values of each as
//    loaded (16-bit rows of 4 chunks: 123 registers, 162 as floats): a
//    correct path for any layout, not a fast one;
//  - geometry (smb_pick): the fewest warps whose lanes hold the row in 16
//    elements of each operand (as the forward's WR_PREF), then the fewest
//    chunks, a power of two up to 4 (a 16-bit row of 8192: 8 warps of 4
//    chunks; f32 4096: 8 warps of 4); one row per group, a grid of
//    ceil(rows / groups a block) blocks (the forward softmax's v1 shape,
//    91-92 % of copy on the H100).
#include "norm_warp.cuh"

namespace {

enum { SMB_MAX_NV = 4, SMB_PREF = 16 };
static_assert(WR_WARPS * 32 * SMB_MAX_NV * 16 == NG_SMB_ROW_BYTES, "kern_norm.h names this width");

// dx of one element from y, dy and the row's sum s.
__device__ __forceinline__ float smb_dx(float y, float dy, float s, int log)
{
    return log ? dy - expf(y) * s : y * (dy - s);
}

template <typename T, bool VEC, int NV>
__global__ void __launch_bounds__(WR_WARPS * 32) k_warp_softmax_bwd(const ng_row_job j, int64_t rows, int D, int wpr,
                                                                     int log)
{
    constexpr int VW = 16 / sizeof(T), N = NV * VW;
    __shared__ float sh[2][WR_WARPS];
    const wr_pos p = wr_here(wpr);
    const int64_t row = (int64_t)blockIdx.x * (WR_WARPS / wpr) + p.group;
    if (row >= rows) // the group's warps leave together: no barrier waits on them
        return;
    int64_t o[NG_NOPS];
    wr_offsets<OPBIT(NG_X) | OPBIT(NG_DY) | OPBIT(NG_DX)>(j.outer, row, o);
    const T *yr = static_cast<const T *>(j.t.p[NG_X]) + o[NG_X];
    const T *dyr = static_cast<const T *>(j.t.p[NG_DY]) + o[NG_DY];
    T *dxr = static_cast<T *>(j.t.p[NG_DX]) + o[NG_DX];
    float s = 0.f;
    if constexpr (VEC) {
        uint4 cy[NV], cd[NV];
        wr_load_row<T, NV>(yr, D, p, cy); // all loads first; past D: zeros, adding nothing to s
        wr_load_row<T, NV>(dyr, D, p, cd);
#pragma unroll
        for (int k = 0; k < NV; k++) {
            float fy[VW], fd[VW];
            wr_unpack<T>(cy[k], fy);
            wr_unpack<T>(cd[k], fd);
#pragma unroll
            for (int q = 0; q < VW; q++)
                s += log ? fd[q] : fd[q] * fy[q];
        }
        s = wr_reduce<false>(s, p, sh, 0);
#pragma unroll
        for (int k = 0; k < NV; k++) {
            const int i = wr_index<T, true>(k * VW, p);
            if (i >= D)
                continue;
            float fy[VW], fd[VW];
            wr_unpack<T>(cy[k], fy);
            wr_unpack<T>(cd[k], fd);
            chunk16<T> out;
#pragma unroll
            for (int q = 0; q < VW; q++)
                out.v[q] = from_f<T>(smb_dx(fy[q], fd[q], s, log));
            *reinterpret_cast<chunk16<T> *>(dxr + i) = out;
        }
    } else {
        T vy[N], vd[N]; // as loaded: converted at each use
#pragma unroll
        for (int e = 0; e < N; e++) { // all loads first
            const int i = wr_index<T, false>(e, p);
            vy[e] = i < D ? yr[i] : from_f<T>(0.f);
            vd[e] = i < D ? dyr[i] : from_f<T>(0.f);
        }
#pragma unroll
        for (int e = 0; e < N; e++)
            s += log ? to_f<T>(vd[e]) : to_f<T>(vd[e]) * to_f<T>(vy[e]);
        s = wr_reduce<false>(s, p, sh, 0);
#pragma unroll
        for (int e = 0; e < N; e++) {
            const int i = wr_index<T, false>(e, p);
            if (i < D)
                dxr[i] = from_f<T>(smb_dx(to_f<T>(vy[e]), to_f<T>(vd[e]), s, log));
        }
    }
}

// The fewest warps per row (1, 2, 4, 8) whose lanes hold the row in
// SMB_PREF elements, else 8; then the fewest chunks, a power of two of at
// most SMB_MAX_NV.  False past 8 warps of SMB_MAX_NV chunks.
template <typename T>
bool smb_pick(int64_t D, wr_geom *g)
{
    const int64_t unit = 32 * (16 / sizeof(T)), pref = SMB_PREF / (16 / sizeof(T)); // elements a chunk a warp; chunks
    int wpr = 1;
    while (wpr < WR_WARPS && D > pref * unit * wpr)
        wpr *= 2;
    int nv = 1;
    while (nv < SMB_MAX_NV && nv * unit * wpr < D)
        nv *= 2;
    if (D < 1 || nv * unit * wpr < D)
        return false;
    *g = {wpr, nv};
    return true;
}

// VEC: y, dy and dx 16-byte aligned at every row (pointers, outer strides)
// and D a whole number of chunks.
template <typename T>
bool smb_vec(const ng_job *j, int64_t D)
{
    constexpr int VW = 16 / sizeof(T);
    const int ops[] = {NG_X, NG_DY, NG_DX};
    if (D % VW)
        return false;
    for (int q = 0; q < 3; q++) {
        if (!aligned16(j->t.p[ops[q]]))
            return false;
        for (int i = 0; i < j->outer.n; i++)
            if (j->outer.stride[ops[q]][i] % VW)
                return false;
    }
    return true;
}

template <typename T>
int smb_launch(const ng_job *j, int64_t rows, int64_t D, cudaStream_t s)
{
    wr_geom g;
    if (!smb_pick<T>(D, &g))
        return -1;
    const bool vec = smb_vec<T>(j, D);
    const int64_t gpb = WR_WARPS / g.wpr;
    const int64_t blocks = (rows + gpb - 1) / gpb;
    if (blocks > 0x7fffffffLL) // past the grid's x limit: the caller's split path
        return -1;
    const unsigned grid = (unsigned)blocks;
    const ng_row_job rj = wr_row_job(j);
    const int log = j->log_softmax;
#define SMB(NV)                                                                                                    \
    (vec ? k_warp_softmax_bwd<T, true, NV><<<grid, WR_WARPS * 32, 0, s>>>(rj, rows, (int)D, g.wpr, log)            \
         : k_warp_softmax_bwd<T, false, NV><<<grid, WR_WARPS * 32, 0, s>>>(rj, rows, (int)D, g.wpr, log))
    switch (g.nv) {
    case 1: SMB(1); break;
    case 2: SMB(2); break;
    default: SMB(4); break;
    }
#undef SMB
    return (int)cudaGetLastError();
}

} // namespace

extern "C" int ng_launch_warp_softmax_bwd(const ng_job *j, int64_t rows, int64_t D, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (rows <= 0)
        return 0;
    switch (j->t.dt[NG_X]) {
    case DT_F16: return smb_launch<__half>(j, rows, D, s);
    case DT_BF16: return smb_launch<__nv_bfloat16>(j, rows, D, s);
    default: return smb_launch<float>(j, rows, D, s);
    }
}
