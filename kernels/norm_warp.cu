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
#include "norm_warp.cuh"

namespace {


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

// mean (0 for rms) and inv = 1 / sqrt(var + eps) of the row the group holds
// as loaded (c): two passes over the registers (the mean, then the squares
// about it), one reduction each; `slot` alternates between reductions.
template <typename T, int NV>
__device__ __forceinline__ void wr_row_stats(const uint4 (&c)[NV], int D, int rms, float eps, const wr_pos &p,
                                             float (*sh)[WR_WARPS], int &slot, float &mean, float &inv)
{
    constexpr int VW = 16 / sizeof(T);
    const float fD = (float)D;
    mean = 0.f;
    if (!rms) {
        float s = 0.f;
#pragma unroll
        for (int k = 0; k < NV; k++) {
            float f[VW];
            wr_unpack<T>(c[k], f);
#pragma unroll
            for (int q = 0; q < VW; q++)
                s += f[q];
        }
        mean = wr_reduce<false>(s, p, sh, slot) / fD;
        slot ^= 1;
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
    inv = rsqrtf(wr_reduce<false>(sq, p, sh, slot) / fD + eps);
    slot ^= 1;
}

// y of the row the group holds as loaded (c) at offset `yo`: scale and bias
// as 16-byte chunks when contiguous of x's dtype and aligned, else element
// loads (v1 only: the launcher gives v2 none of those).  The common case, no
// fused activation and 16-byte parameters (or none), has a loop of its own:
// with the activation's and the element loads' code inlined beside every
// element, the one loop ran out of the instruction cache (ncu, session 9:
// layernorm f16 8192x768 stalled mostly on instruction fetch).
template <typename T, int NV>
__device__ __forceinline__ void wr_store_y(const ng_row_job &j, const uint4 (&c)[NV], int64_t yo, int D, const wr_pos &p,
                                           float mean, float inv)
{
    constexpr int VW = 16 / sizeof(T);
    const void *ps = j.t.p[NG_SC], *pb = j.t.p[NG_BI];
    const int64_t ss = j.inner.stride[NG_SC][0], sb = j.inner.stride[NG_BI][0];
    const bool vs = ps && ss == 1 && j.t.dt[NG_SC] == dt_of<T>::v && aligned16(ps);
    const bool vb = pb && sb == 1 && j.t.dt[NG_BI] == dt_of<T>::v && aligned16(pb);
    T *yr = static_cast<T *>(j.t.p[NG_Y]) + yo;
    if (j.act == NGACT_NONE && (vs || !ps) && (vb || !pb)) {
        const T *ts = static_cast<const T *>(ps), *tb = static_cast<const T *>(pb);
#pragma unroll
        for (int k = 0; k < NV; k++) {
            const int i = wr_index<T, true>(k * VW, p);
            if (i >= D)
                continue;
            float f[VW], w[VW], b[VW];
            wr_unpack<T>(c[k], f);
            if (ts)
                wr_unpack<T>(*reinterpret_cast<const uint4 *>(ts + i), w);
            if (tb)
                wr_unpack<T>(*reinterpret_cast<const uint4 *>(tb + i), b);
            chunk16<T> o;
#pragma unroll
            for (int q = 0; q < VW; q++)
                o.v[q] = from_f<T>((f[q] - mean) * inv * (ts ? w[q] : 1.f) + (tb ? b[q] : 0.f));
            *reinterpret_cast<chunk16<T> *>(yr + i) = o;
        }
        return;
    }
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

// The row's mean / inv into the statistics outputs the forward has (lane 0
// of the group's first warp).
__device__ __forceinline__ void wr_put_stats(const ng_row_job &j, const int64_t (&base)[NG_NOPS], const wr_pos &p,
                                             float mean, float inv)
{
    if (p.wr != 0 || p.lane != 0)
        return;
    if (j.t.p[NG_MEAN])
        stf(j.t.p[NG_MEAN], base[NG_MEAN], j.t.dt[NG_MEAN], mean);
    if (j.t.p[NG_INV])
        stf(j.t.p[NG_INV], base[NG_INV], j.t.dt[NG_INV], inv);
}

// layernorm / rmsnorm forward: y = act((x - mean) inv scale + bias); mean and
// inv stored when asked.  VEC only (the launcher sends other rows to norm.cu).
// The row stays as loaded (NV uint4 a lane) and is unpacked at each of its
// three uses: 16-bit rows take half the registers of floats, so more rows
// fit an SM.
template <typename T, int NV>
__global__ void __launch_bounds__(WR_WARPS * 32) k_warp_norm(const ng_row_job j, int64_t rows, int D, int wpr)
{
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
    wr_load_row<T, NV>(xr, D, p, c); // all loads first
    float mean, inv;
    int slot = 0;
    wr_row_stats<T, NV>(c, D, j.rms, j.eps, p, sh, slot, mean, inv);
    wr_put_stats(j, base, p, mean, inv);
    wr_store_y<T, NV>(j, c, base[NG_Y], D, p, mean, inv);
}

// v2 (session 9): the same rows, a persistent grid (wr2_grid: the blocks
// that fit the SMs at once).  Row group g walks rows g, g + G, ... (G: every
// group of the grid), its rows staged through shared memory
// (norm_warp.cuh): WR2_STAGES - 1 rows of x in flight per group while it
// reduces and stores another (v1's group had none from its reductions to
// its exit).  Scale and bias, 16-byte chunks, are read where they are used:
// the same columns every row, L1 hits after the first.  Parameters absent,
// or contiguous of x's dtype and 16-byte aligned (the launcher sends others
// to v1); NV <= WR2_FWD_NV chunks a lane, at most WR2_FWD_WPR warps a row.
// Measured on the H100 (RESULTS-norm.md, session 9): v2 ahead where a row
// takes up to 4 warps (rmsnorm bf16 8192x4096 0.0619 ms against 0.0636,
// layernorm f16 8192x768 0.0170 against 0.0204, bf16 16384x1024 0.0393
// against 0.0428); v1 ahead for the 8-warp rows (layernorm f16 8192x8192
// 0.1007 against 0.1242: three groups an SM against v1's four blocks).
enum { WR2_FWD_NV = 4, WR2_FWD_WPR = 4 };

template <typename T, int NV>
__global__ void __launch_bounds__(WR_WARPS * 32, 3) k_warp_norm2(const ng_row_job j, int64_t rows, int D, int wpr)
{
    constexpr int TH = WR_WARPS * 32;
    extern __shared__ uint4 wr_stage[]; // [WR2_STAGES][NV][TH]
    __shared__ float sh[2][WR_WARPS];
    const wr_pos p = wr_here(wpr);
    const int64_t step = (int64_t)gridDim.x * (WR_WARPS / wpr);
    const int64_t first = (int64_t)blockIdx.x * (WR_WARPS / wpr) + p.group;
    if (first >= rows) // the group's warps leave together: no barrier waits on them
        return;
    const T *x = static_cast<const T *>(j.t.p[NG_X]);
    uint4 *mine = wr_stage + threadIdx.x;
    for (int s = 0; s < WR2_STAGES - 1; s++) { // the first rows in flight
        const int64_t r = first + s * step;
        if (r < rows) {
            int64_t o[NG_NOPS];
            wr_offsets<OPBIT(NG_X)>(j.outer, r, o);
            wr_stage_row<T, NV>(mine + s * NV * TH, x + o[NG_X], D, p);
        }
        wr_cp_commit(); // empty groups too: the wait counts groups
    }
    int slot = 0, st = 0;
    for (int64_t row = first; row < rows; row += step) {
        const int64_t ahead = row + (WR2_STAGES - 1) * step;
        if (ahead < rows) {
            int64_t o[NG_NOPS];
            wr_offsets<OPBIT(NG_X)>(j.outer, ahead, o);
            wr_stage_row<T, NV>(mine + ((st + WR2_STAGES - 1) % WR2_STAGES) * NV * TH, x + o[NG_X], D, p);
        }
        wr_cp_commit();
        wr_cp_wait_oldest();
        uint4 c[NV];
#pragma unroll
        for (int k = 0; k < NV; k++)
            c[k] = mine[(st * NV + k) * TH];
        st = st + 1 == WR2_STAGES ? 0 : st + 1;
        float mean, inv;
        wr_row_stats<T, NV>(c, D, j.rms, j.eps, p, sh, slot, mean, inv);
        constexpr unsigned M = OPBIT(NG_Y) | OPBIT(NG_MEAN) | OPBIT(NG_INV);
        int64_t base[NG_NOPS];
        wr_offsets<M>(j.outer, row, base);
        wr_put_stats(j, base, p, mean, inv);
        wr_store_y<T, NV>(j, c, base[NG_Y], D, p, mean, inv);
    }
}

// The launch parameter is the ~1 KB ng_row_job (session 12; the whole 3.6 KB
// ng_job before): rmsnorm bf16 8192 x 4096 0.0624 / 0.0637 ms against 0.0653,
// layernorm bf16 16384 x 1024 0.0392 / 0.0382 against 0.0406 (H100, 2bc164c).
template <typename T, int NV>
int wr_norm2_launch(const ng_job *j, int64_t rows, int D, int wpr, cudaStream_t s)
{
    const size_t smem = (size_t)WR2_STAGES * NV * WR_WARPS * 32 * 16;
    const unsigned grid = wr2_grid((const void *)k_warp_norm2<T, NV>, smem, rows, wpr, INT32_MAX);
    k_warp_norm2<T, NV><<<grid, WR_WARPS * 32, smem, s>>>(wr_row_job(j), rows, D, wpr);
    return (int)cudaGetLastError();
}

// softmax (log = 0) / log_softmax over rows at x + row * ldx, y + row * ldy.
// As the CPU reference (src/ops/softmax.c): a fully masked row (max -inf)
// takes 0 for the max (0 / 0 = NaN), a row holding a +inf takes NaN (the
// whole row NaN, as PyTorch's).
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
        mx = mx > 0.f ? __int_as_float(0x7fffffff) : 0.f;
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
    static const int wv = env_int("XDNN_NORM_WARP_V", 2); // 1: v1 everywhere (A/B)
    wr_geom g2;
    if (wr2_params_ok<T>(j, NG_SC) && wr2_params_ok<T>(j, NG_BI) && wv != 1 && wr2_pick<T>(D, WR2_FWD_NV, &g2) &&
        g2.wpr <= WR2_FWD_WPR) {
#define WR_NORM2(NV) return wr_norm2_launch<T, NV>(j, rows, (int)D, g2.wpr, s)
        switch (g2.nv) {
        case 1: WR_NORM2(1);
        case 2: WR_NORM2(2);
        case 3: WR_NORM2(3);
        default: WR_NORM2(4);
        }
#undef WR_NORM2
    }
    unsigned grid = wr_blocks(rows, g.wpr);
    const ng_row_job rj = wr_row_job(j);
#define WR_NORM(NV) k_warp_norm<T, NV><<<grid, WR_WARPS * 32, 0, s>>>(rj, rows, (int)D, g.wpr)
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
