// norm_cl.cu — batchnorm training forward and backward over channels-last x:
// every x-shaped operand is [M, C] with the C channels contiguous (stride 1)
// and one row stride (NHWC, NDHWC, [N, C]), the layout ResNet training runs.
// Three launches, each a plain pass over memory:
//   reduce    grid (channel blocks, splits of the M rows), block TX x TY:
//             threadIdx.x across V-channel vectors (16-byte loads when C and
//             the row strides allow, else V = 1), threadIdx.y across rows,
//             four vectors in flight per thread; the block's partials are
//             combined through shared memory in a fixed order and written
//             to part[split][C][4] (forward: count, mean, M2; backward:
//             0, 0, sum dy, sum dy xhat);
//   finalize  one warp per channel combines the splits (lanes stride the
//             splits, then a fixed shuffle tree: deterministic) and stores
//             what the generic finalize stores (fin_store); past
//             CL_WIDE_SPLITS splits (128: the three-launch forwards of
//             ResNet-50 N=256, 198-396 splits; genstats: one per 128-row M
//             tile of the producing conv, src/gpu/genstats.h, thousands) a
//             block of 8 warps per channel, merged in warp order (forward);
//   apply     the same grid with the splits in reverse order (session 13:
//             no help: the splits run side by side in one wave, so the
//             order across them is not the order in time), per-channel
//             constants in registers: y = act((x - mean) * inv * scale + bias),
//             or act(round(that) + r) with a fused residual r (partition.c),
//             or dx = inv / M * (M g - sum g - xhat sum g xhat), g = dy * scale.
// Hopper (ng_job.cl_pdl): the finalize and the apply are programmatic
// dependent launches: the reduce and the finalize let their successor's
// blocks become resident at once (griddepcontrol.launch_dependents at their
// start), and those wait (griddepcontrol.wait: the predecessor finished, its
// writes visible) before reading anything: the launch and block scheduling
// of the next pass overlap the tail of the last (a fixed cost per pass that
// the 13-100 MB batchnorms of ResNet-50 N=256 feel: 31-77 % of copy, the
// 400 MB ones 88 %).
// The L2 order of session 13 (ng_job.cl_l2: the second pass meeting first
// the rows the first read last, evict-first loads and stores) is
// norm_cl1.cu's only: here the reduce reading each split top down and the
// join's a, b, m evict-first gained nothing (the joined 1024@14 backward
// 0.3035 against 0.3030 ms), and cache hints in this apply, at its
// 80-register bound of three blocks an SM, spilled 50-130 bytes.
// Forward: x read twice (r once), y written once; backward: x and dy read twice, dx
// written once.  Backward with the fused join (session 11, ng_job.join): the
// reduce reads a, (b,) m instead of dy, makes dy = relu_bwd(a [+ b], m),
// stores it and sums it; the apply reads it back (one pass over dy and the
// pointwise partition's launch fewer).  The backward reads mean / inv from the saved tensors.
// Per thread and stream, 8 16-byte vectors in flight forward and 4 backward
// (session 8: ncu saw 4 / 2 at 59-65 % of DRAM, stalled on L1TEX
// scoreboard); 3 blocks per SM both ways: the apply's (and the backward
// reduce's) per-channel constants live in shared memory (one float4 per
// channel, [k][tx] so a warp's reads are conflict-free, read by ld.shared
// volatile so that they are not hoisted back into registers: with them in
// registers the 8-vector forward spilled ~200 bytes), the loaded vectors
// stay packed until used.  (Session 8's first variant, half the vectors in
// flight and the constants in registers, was retired in session 10: it lost
// or tied everywhere and doubled this file's compile time.)
#include "norm_cl_common.cuh"

#include <cstdlib> // getenv: XDNN_NORM_CL_FIN_WIDE

namespace {

// Blocks per SM: NG_CL_BLOCKS (plan_cl in eng_norm.c sizes the grid to
// match).  Vectors in flight per stream and thread (U): 8 forward (x), 4
// backward (x and dy, the same bytes), 4 forward with a fused residual (x
// and r).
enum { CL_THREADS = NG_CL_THREADS, CL_UNROLL = NG_CL_UNROLL };
template <bool BWD>
struct cl_cfg {
    static constexpr int U = (BWD ? CL_UNROLL / 2 : CL_UNROLL) * 2;
    static constexpr int blocks = NG_CL_BLOCKS;
    static constexpr bool shared_consts = true; // apply, backward reduce: per-channel constants in shared memory
};

// The fused join's dy for one vector (ng_job.join, eng_norm.c): relu_bwd(a
// [+ b], m), a + b rounded to join_dt first, in T as it is stored (the sums
// take the stored value, as the unfused partitions would).
template <typename T, int V, int JN>
__device__ __forceinline__ vec_t<T, V> cl_join_dy(const ng_job &j, const vec_t<T, V> &a, const vec_t<T, V> &b,
                                                  const vec_t<T, V> &m)
{
    vec_t<T, V> g;
#pragma unroll
    for (int k = 0; k < V; k++) {
        float v = cl_f<T, true>(a.v[k]), mv = cl_f<T, true>(m.v[k]);
        if (JN == 2)
            v = round_dt(v + cl_f<T, true>(b.v[k]), j.join_dt);
        g.v[k] = from_f<T>(mv > j.jp0 ? (mv < j.jp1 ? v : 0.f) : v * j.jp2);
    }
    return g;
}

// The backward reduce's rows q, q + TY, ... below q1 with the join (JN 1 or
// 2): x, a, (b,) m loaded for UJ rows (three or four streams), dy made,
// stored and summed; loaded elements widened where used (cl_f LATE).
template <typename T, int V, int JN, int UJ>
__device__ __forceinline__ void cl_reduce_join_rows(const ng_job &j, int64_t q, int64_t q1, int TY, int64_t c0,
                                                    const float4 *sc, int TX, float (&a)[V], float (&b)[V])
{
    const int64_t sx = j.inner.stride[NG_X][0], sd = j.inner.stride[NG_DY][0];
    for (; q < q1; q += UJ * TY) {
        vec_t<T, V> x[UJ], ja[UJ], jb[UJ], jm[UJ];
#pragma unroll
        for (int u = 0; u < UJ; u++) {
            const int64_t r = q + u * TY;
            if (r < q1) {
                x[u] = cl_ld<T, V>(j.t.p[NG_X], r * sx + c0);
                ja[u] = cl_ld<T, V>(j.t.p[NG_JA], r * sd + c0);
                if (JN == 2)
                    jb[u] = cl_ld<T, V>(j.t.p[NG_JB], r * sd + c0);
                jm[u] = cl_ld<T, V>(j.t.p[NG_JM], r * sd + c0);
            }
        }
#pragma unroll
        for (int u = 0; u < UJ; u++) {
            const int64_t r = q + u * TY;
            if (r >= q1)
                break;
            const vec_t<T, V> g = cl_join_dy<T, V, JN>(j, ja[u], jb[u], jm[u]);
            *reinterpret_cast<vec_t<T, V> *>(static_cast<T *>(j.t.p[NG_DY]) + r * sd + c0) = g;
#pragma unroll
            for (int k = 0; k < V; k++) {
                const float4 cv = cl_lds4(&sc[k * TX]);
                cl_accum<true>(cl_f<T, true>(x[u].v[k]), cl_f<T, true>(g.v[k]), cv.x, cv.y, 0.f, a[k], b[k]);
            }
        }
    }
}

// BWD = false: shifted sums of x per channel (shift: the thread's first
// value), turned into (count, mean, M2); BWD = true: sum dy, sum dy xhat
// (JN > 0: dy made from the fused join, cl_reduce_join_rows).
template <typename T, int V, bool BWD, int JN = 0>
__global__ void __launch_bounds__(CL_THREADS, (cl_cfg<BWD>::blocks)) k_cl_reduce(const ng_job j)
{
    using cfg = cl_cfg<BWD>;
    constexpr int U = cfg::U;
    constexpr bool SH = cfg::shared_consts;
    cl_let_next_start(); // the finalize waits for this grid's end itself
    __shared__ float s0[CL_THREADS * V], s1[CL_THREADS * V];
    __shared__ float4 sc[SH ? 32 * V : 1]; // (mean, inv) of the block's channels, [k][tx]
    const int tx = threadIdx.x, ty = threadIdx.y, TX = blockDim.x, TY = blockDim.y;
    const int64_t C = j.O, cbase = (int64_t)blockIdx.x * TX * V, c0 = cbase + (int64_t)tx * V;
    int64_t q0, q1;
    cl_rows(j, blockIdx.y, q0, q1);
    const int64_t sx = j.inner.stride[NG_X][0], sdy = BWD ? j.inner.stride[NG_DY][0] : 0;
    float shift[V], a[V], b[V], mean[V], inv[V];
#pragma unroll
    for (int k = 0; k < V; k++)
        shift[k] = a[k] = b[k] = mean[k] = inv[k] = 0.f;
    const int64_t first = q0 + ty;
    const float n = first < q1 ? (float)((q1 - first + TY - 1) / TY) : 0.f;
    if (BWD && (SH ? ty == 0 : first < q1) && c0 < C) { // one row of threads fills sc
#pragma unroll
        for (int k = 0; k < V; k++) {
            mean[k] = cl_chan(j, NG_MEAN, c0 + k, 0.f);
            inv[k] = cl_chan(j, NG_INV, c0 + k, 1.f);
            if (SH)
                sc[k * TX + tx] = make_float4(mean[k], inv[k], 0.f, 0.f);
        }
    }
    if (SH && BWD)
        __syncthreads();
    if (JN > 0 && c0 < C && first < q1) {
        // rows in flight: 2 (x, a, m), 1 with the add (x, a, b, m: 4 x 16 bytes; 2 spilled ~150 bytes)
        cl_reduce_join_rows<T, V, JN, JN == 2 ? U / 4 : U / 2>(j, first, q1, TY, c0, sc + tx, TX, a, b);
    } else if (c0 < C && first < q1) {
        int64_t q = first;
        if (!BWD) {
            cl_load<T, V>(j.t.p[NG_X], q * sx + c0, shift);
            q += TY;
        }
        // k outer: a channel's constants read once per U rows (from shared memory)
        for (; q + (U - 1) * TY < q1; q += U * TY) {
            vec_t<T, V> x[U], dy[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                x[u] = cl_ld<T, V>(j.t.p[NG_X], (q + u * TY) * sx + c0);
                if (BWD)
                    dy[u] = cl_ld<T, V>(j.t.p[NG_DY], (q + u * TY) * sdy + c0);
            }
#pragma unroll
            for (int k = 0; k < V; k++) {
                float mk = mean[k], ik = inv[k];
                if (SH) {
                    float4 cv = cl_lds4(&sc[k * TX + tx]);
                    mk = cv.x, ik = cv.y;
                }
#pragma unroll
                for (int u = 0; u < U; u++)
                    cl_accum<BWD>(cl_f<T, SH>(x[u].v[k]), BWD ? cl_f<T, SH>(dy[u].v[k]) : 0.f, mk, ik, shift[k], a[k],
                                  b[k]);
            }
        }
        for (; q < q1; q += TY) {
            float x[V], dy[V];
            cl_load<T, V>(j.t.p[NG_X], q * sx + c0, x);
            if (BWD)
                cl_load<T, V>(j.t.p[NG_DY], q * sdy + c0, dy);
#pragma unroll
            for (int k = 0; k < V; k++) {
                float mk = mean[k], ik = inv[k];
                if (BWD && SH) {
                    float4 cv = cl_lds4(&sc[k * TX + tx]);
                    mk = cv.x, ik = cv.y;
                }
                cl_accum<BWD>(x[k], BWD ? dy[k] : 0.f, mk, ik, shift[k], a[k], b[k]);
            }
        }
    }
    // per thread: (mean, M2) of its n rows, or the two sums
#pragma unroll
    for (int k = 0; k < V; k++) {
        float v0 = a[k], v1 = b[k];
        if (!BWD) {
            v0 = n > 0.f ? shift[k] + a[k] / n : 0.f;
            v1 = n > 0.f ? fmaxf(b[k] - a[k] * a[k] / n, 0.f) : 0.f;
        }
        s0[ty * TX * V + tx * V + k] = v0;
        s1[ty * TX * V + tx * V + k] = v1;
    }
    __syncthreads();
    // one thread per channel of the block combines the TY rows in order
    for (int t = ty * TX + tx; t < TX * V; t += CL_THREADS) {
        int64_t c = cbase + t;
        if (c >= C)
            continue;
        acc4 acc = {{0.f, 0.f, 0.f, 0.f}};
        for (int r = 0; r < TY; r++) {
            int64_t fr = q0 + r;
            float nr = fr < q1 ? (float)((q1 - fr + TY - 1) / TY) : 0.f;
            if (BWD) {
                acc.v[2] += s0[r * TX * V + t];
                acc.v[3] += s1[r * TX * V + t];
            } else {
                acc4 o = {{nr, s0[r * TX * V + t], s1[r * TX * V + t], 0.f}};
                acc_merge<NGR_WELFORD>(acc, o);
            }
        }
        float4 w = make_float4(acc.v[0], acc.v[1], acc.v[2], acc.v[3]);
        *reinterpret_cast<float4 *>(j.part + ((int64_t)blockIdx.y * C + c) * 4) = w;
    }
}

// W warps per channel (1, or 8: a block): cl_combine_splits, then (W > 1) the warps in order.
// The forward takes a block per channel past CL_WIDE_SPLITS splits (session 11: 128, was 1024 for
// genstats only): one warp over the 198-396 splits of the three-launch forwards of ResNet-50 N=256
// (the 13-26 MB tensors held whole, the residual ones) walks 7-13 partials a lane, 4 in flight: two
// to four dependent L2 round trips in the tail between reduce and apply; eight warps walk at most 2.
// XDNN_NORM_CL_FIN_WIDE=n moves the limit (0: always a block; 1024: the tree before session 11).
enum { CL_WIDE_SPLITS = 128 };
template <int MODE, int W>
__global__ void __launch_bounds__(CL_THREADS) k_cl_finalize(const ng_job j)
{
    cl_let_next_start();
    cl_wait_prev(); // the reduce's partials (or the conv's, genstats)
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, wq = warp % W;
    const int64_t c = (int64_t)blockIdx.x * (CL_THREADS / 32 / W) + warp / W;
    if (W == 1 && c >= j.O)
        return;
    acc4 a = cl_combine_splits<MODE>(j, c < j.O ? c : 0, wq * 32 + lane, 32 * W, c < j.O ? j.nsplit : 0);
    if (W > 1) {
        __shared__ acc4 wsum[CL_THREADS / 32];
        if (lane == 0)
            wsum[warp] = a;
        __syncthreads();
        if (wq != 0 || c >= j.O)
            return;
        for (int q = 1; q < W; q++)
            acc_merge<MODE>(a, wsum[warp + q]);
    }
    if (lane == 0)
        cl_fin_channel<MODE>(j, c, a);
}

// The apply's rows q0 + ty, + TY, ... below q1 for the thread's V channels
// from c0: U row vectors in flight per stream; RD: a second stream (the
// backward's dy, or the forward's fused residual r: y rounded to res_dt, r
// added, then the activation).  SH (always, since session 10): the constants (m, k1, k2, k3) of
// channel c0 + k at sc[k TX] in shared memory, read at each row (V 16-byte
// shared loads a row against 16 bytes of each stream from DRAM); else in
// m, k1, k2, k3.
template <typename T, int V, int AM, int ACT, int U, bool RD, bool SH>
__device__ __forceinline__ void cl_apply_rows(const ng_job &j, int64_t q0, int64_t q1, int ty, int TX, int TY,
                                              int64_t c0,
                                              const float4 *sc, const float (&m)[V], const float (&k1)[V],
                                              const float (&k2)[V], const float (&k3)[V])
{
    const int ko = AM == NGA_FWD ? NG_Y : NG_DX;
    const int64_t sx = j.inner.stride[NG_X][0], so = j.inner.stride[ko][0];
    const int64_t sdy = RD ? j.inner.stride[NG_DY][0] : 0;
    for (int64_t q = q0 + ty; q < q1; q += U * TY) {
        vec_t<T, V> x[U], dy[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            int64_t r = q + u * TY;
            if (r < q1) {
                x[u] = cl_ld<T, V>(j.t.p[NG_X], r * sx + c0);
                if (RD)
                    dy[u] = cl_ld<T, V>(j.t.p[NG_DY], r * sdy + c0);
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            int64_t r = q + u * TY;
            if (r >= q1)
                break;
            float o[V];
#pragma unroll
            for (int k = 0; k < V; k++) {
                float xv = cl_f<T, SH>(x[u].v[k]), dv = RD ? cl_f<T, SH>(dy[u].v[k]) : 0.f;
                float4 cv = SH ? cl_lds4(&sc[k * TX]) : make_float4(m[k], k1[k], k2[k], k3[k]);
                if (AM == NGA_FWD && RD)
                    o[k] = act_f(round_dt((xv - cv.x) * cv.y + cv.z, j.res_dt) + dv, ACT, j.act_dt);
                else if (AM == NGA_FWD)
                    o[k] = act_f((xv - cv.x) * cv.y + cv.z, ACT, j.act_dt);
                else
                    o[k] = cv.y * dv + (cv.z * (xv - cv.x) + cv.w);
            }
            cl_store<T, V>(j.t.p[ko], r * so + c0, o);
        }
    }
}

template <typename T, int V, int AM, int ACT>
__global__ void __launch_bounds__(CL_THREADS, (cl_cfg<AM == NGA_BWD>::blocks)) k_cl_apply(const ng_job j)
{
    using cfg = cl_cfg<AM == NGA_BWD>;
    constexpr int U = cfg::U;
    constexpr bool SH = cfg::shared_consts;
    __shared__ float4 sc[SH ? 32 * V : 1]; // [k][tx]
    cl_wait_prev(); // the finalize's mean / inv / sums
    const int tx = threadIdx.x, ty = threadIdx.y, TX = blockDim.x, TY = blockDim.y;
    const int64_t C = j.O, c0 = ((int64_t)blockIdx.x * blockDim.x + tx) * V;
    if (!SH && c0 >= C)
        return;
    int64_t q0, q1;
    cl_rows(j, gridDim.y - 1 - blockIdx.y, q0, q1);
    // per channel: forward y = (x - m) k1 + k2 (k1 = inv scale, k2 = bias);
    // backward dx = inv / M (M g - sum g - xhat sum g xhat) = k1 dy + k2 (x - m) + k3
    // (k1 = inv scale, k2 = -inv^2 sum g xhat / M, k3 = -inv sum g / M)
    float m[V], k1[V], k2[V], k3[V];
    const float fD = j.D;
#pragma unroll
    for (int k = 0; k < V; k++)
        m[k] = k1[k] = k2[k] = k3[k] = 0.f;
    if (c0 < C && (!SH || ty == 0)) {
#pragma unroll
        for (int k = 0; k < V; k++) {
            int64_t c = c0 + k;
            float sc_ = cl_chan(j, NG_SC, c, 1.f);
            if (AM == NGA_FWD) {
                m[k] = j.mean[c];
                k1[k] = j.inv[c] * sc_;
                k2[k] = cl_chan(j, NG_BI, c, 0.f);
            } else {
                float iv = cl_chan(j, NG_INV, c, 1.f);
                m[k] = cl_chan(j, NG_MEAN, c, 0.f);
                k1[k] = iv * sc_;
                k2[k] = -iv * iv * j.b[c] / fD;
                k3[k] = -iv * j.a[c] / fD;
            }
            if (SH)
                sc[k * TX + tx] = make_float4(m[k], k1[k], k2[k], k3[k]);
        }
    }
    if (SH) {
        __syncthreads();
        if (c0 >= C)
            return;
    }
    // the forward with a fused residual (NG_DY set) reads two streams: half the
    // vectors in flight per stream, as the backward (one stream of U spilled)
    if (AM == NGA_FWD && j.t.p[NG_DY])
        cl_apply_rows<T, V, AM, ACT, U / 2, true, SH>(j, q0, q1, ty, TX, TY, c0, sc + tx, m, k1, k2, k3);
    else
        cl_apply_rows<T, V, AM, ACT, U, AM == NGA_BWD, SH>(j, q0, q1, ty, TX, TY, c0, sc + tx, m, k1, k2, k3);
}

template <typename T, int V>
void cl_run(const ng_job *j, int what, int act, cudaStream_t s)
{
    cl_geo g = cl_geometry(j->O, V);
    dim3 grid(g.cblocks, (unsigned)j->nsplit), block((unsigned)g.tx, (unsigned)g.ty);
    switch (what) {
    case 0: k_cl_reduce<T, V, false><<<grid, block, 0, s>>>(*j); break;
    case 1:
        if (j->join == 2)
            k_cl_reduce<T, V, true, 2><<<grid, block, 0, s>>>(*j);
        else if (j->join == 1)
            k_cl_reduce<T, V, true, 1><<<grid, block, 0, s>>>(*j);
        else
            k_cl_reduce<T, V, true><<<grid, block, 0, s>>>(*j);
        break;
    case 2:
        switch (act) {
        case NGACT_RELU: cl_go(k_cl_apply<T, V, NGA_FWD, NGACT_RELU>, grid, block, s, j->cl_pdl, *j); break;
        case NGACT_SILU: cl_go(k_cl_apply<T, V, NGA_FWD, NGACT_SILU>, grid, block, s, j->cl_pdl, *j); break;
        case NGACT_GELU_TANH: cl_go(k_cl_apply<T, V, NGA_FWD, NGACT_GELU_TANH>, grid, block, s, j->cl_pdl, *j); break;
        case NGACT_GELU_ERF: cl_go(k_cl_apply<T, V, NGA_FWD, NGACT_GELU_ERF>, grid, block, s, j->cl_pdl, *j); break;
        default: cl_go(k_cl_apply<T, V, NGA_FWD, NGACT_NONE>, grid, block, s, j->cl_pdl, *j); break;
        }
        break;
    default: cl_go(k_cl_apply<T, V, NGA_BWD, NGACT_NONE>, grid, block, s, j->cl_pdl, *j); break;
    }
}

// what: 0 forward reduce, 1 backward reduce, 2 forward apply, 3 backward apply
template <typename T>
void cl_dispatch(const ng_job *j, int what, cudaStream_t s)
{
    static const int fwd_r[] = {NG_X}, bwd_r[] = {NG_X, NG_DY, NG_JA, NG_JM, NG_JB}, fwd_a[] = {NG_X, NG_Y, NG_DY},
                     bwd_a[] = {NG_X, NG_DY, NG_DX};
    const int *ops[] = {fwd_r, bwd_r, fwd_a, bwd_a};
    // the forward's residual r too; the backward reduce's join operands (read through dy's strides)
    const int nops[] = {1, j->join ? 3 + j->join : 2, j->t.p[NG_DY] ? 3 : 2, 3};
    const bool wide = cl_width<T>(j, ops[what], nops[what]) > 1;
    constexpr int VW = 16 / (int)sizeof(T);
    if (wide)
        cl_run<T, VW>(j, what, j->act, s);
    else
        cl_run<T, 1>(j, what, j->act, s);
}

int cl_launch(const ng_job *j, int what, cudaStream_t s)
{
    if (j->O <= 0 || j->Q <= 0 || j->nsplit <= 0)
        return 0;
    switch (j->t.dt[NG_X]) {
    case DT_F16: cl_dispatch<__half>(j, what, s); break;
    case DT_BF16: cl_dispatch<__nv_bfloat16>(j, what, s); break;
    default: cl_dispatch<float>(j, what, s); break;
    }
    return (int)cudaGetLastError();
}

} // namespace

extern "C" int ng_launch_cl_reduce(const ng_job *j, void *stream)
{
    return cl_launch(j, j->mode == NGR_BWD ? 1 : 0, static_cast<cudaStream_t>(stream));
}

extern "C" int ng_launch_cl_finalize(const ng_job *j, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (j->O <= 0)
        return 0;
    constexpr int per = CL_THREADS / 32; // channels per block at one warp each
    // read at each launch, not cached: difftest_norm's fin-wide/ cases set it per case
    const char *ew = getenv("XDNN_NORM_CL_FIN_WIDE");
    const int wide = ew && *ew ? atoi(ew) : CL_WIDE_SPLITS;
    if (j->nsplit > wide && j->mode != NGR_BWD) // many splits (genstats': thousands): a block per channel
        cl_go(k_cl_finalize<NGR_WELFORD, per>, (unsigned)j->O, CL_THREADS, s, j->cl_pdl, *j);
    else if (j->mode == NGR_BWD)
        cl_go(k_cl_finalize<NGR_BWD, 1>, (unsigned)((j->O + per - 1) / per), CL_THREADS, s, j->cl_pdl, *j);
    else
        cl_go(k_cl_finalize<NGR_WELFORD, 1>, (unsigned)((j->O + per - 1) / per), CL_THREADS, s, j->cl_pdl, *j);
    return (int)cudaGetLastError();
}

extern "C" int ng_launch_cl_apply(const ng_job *j, int apply_mode, void *stream)
{
    return cl_launch(j, apply_mode == NGA_BWD ? 3 : 2, static_cast<cudaStream_t>(stream));
}
