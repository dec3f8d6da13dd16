// sdpa_bwd_mma.cu — the tensor-core attention backward (f16/bf16 q, k, v, do;
// host side: src/gpu/eng_sdpa.c, semantics: src/ops/sdpa.h, helpers:
// sdpa_common.cuh).  Flash-attention-2's algorithm without atomics, so the
// result is deterministic (every output element is written by one thread,
// summed in one fixed order):
//
//  sdpa_bwd_delta    one warp per query row: Delta_i = do_i . o_i (f32, into
//                    the workspace p.delta).
//  sdpa_bwd_dq_mma   one block of 4 warps per 64 query rows of one head,
//                    streaming K/V tiles through two cp.async stages:
//                    S = Q K^T and dP = dO V^T (mma m16n8k16), P recomputed
//                    from the forward's logsumexp (stats), dS = P (f dP -
//                    Delta), dQ += dS K (K fragments by ldmatrix.trans).
//  sdpa_bwd_dkdv_mma one block of 4 warps per 64 keys of one kv head; loops
//                    over every query head of its GQA group and the query
//                    tiles that can see the keys (Q/dO/stats/Delta tiles
//                    double-buffered): S^T = K Q^T, dP^T = V dO^T,
//                    dV += (f P)^T dO, dK += dS^T Q.  GQA sums stay in
//                    registers: no second pass over memory.
// Head dims: D and Dv padded (zero-filled) to the bucket DP as in
// sdpa_mma.cu; the accumulated head dim is split into chunks of DC <= 128
// (blockIdx.z) so dK + dV (or dQ) fit in registers at DP = 256, at the price
// of recomputing S and dP once per chunk.  f = dropout factor (0 or
// 1/(1-p)), the same Philox decision as the forward (drop_rows_mma in dQ's
// layout, drop_words_oct in dK/dV's transposed one); P and dS enter the
// tensor cores rounded to the input type, everything accumulates in f32.
// Ragged THD sequences (kern_sdpa.h; 2026-11-24): each block finds its
// sequence's rows (rows_of) and exits when its tile starts past the
// sequence's end; Delta is [Hq, T] then (delta_at), one row per token.
#include "sdpa_common.cuh"

namespace {

// Delta's index of row `row` (qrow + i) of (b, h): [B, Hq, Sq] dense, [Hq, T]
// ragged (b is in the token there, as for every q-side tensor).
__device__ __forceinline__ int64_t delta_at(const xk_sdpa &p, int b, int h, int row)
{
    return ((int64_t)(p.off_q.p ? 0 : b) * p.Hq + h) * p.Sq + row;
}

template <int DP> struct bwd_cfg {
    static constexpr int NCH = DP <= 128 ? 1 : 2;     // chunks of the accumulated head dim
    static constexpr int DC = DP / NCH;               // 32..128, a multiple of 16
    static constexpr int LD = DP + 8;
    static constexpr int BN = DP <= 128 ? 64 : 32;    // dq: keys per tile
    static constexpr int QB = DC <= 64 ? 64 : 32;     // dkdv: queries per tile
    static constexpr int SMEM_DQ = (64 * 2 + 4 * BN) * LD * 2;
    static constexpr int SMEM_KV = (64 * 2 + 4 * QB) * LD * 2 + 4 * QB * 4;
};

// acc[nt] (+)= A(16 rows at r0 of As, K columns) * B^T where B is row-major
// [n][K] in Bs (NT n-tiles of 8 rows); KP/16 k-steps (zero padding included:
// a run-time bound breaks the unrolled loop).
template <typename T, int NT, int KP>
__device__ __forceinline__ void gemm_abt(float (&acc)[NT][4], const T *As, const T *Bs, int ld, int r0)
{
    const int lane = threadIdx.x & 31, g = lane >> 2, t4 = lane & 3;
#pragma unroll
    for (int nt = 0; nt < NT; nt++)
        acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < KP / 16; kk++) {
        uint32_t a[4];
        lds_a(a, As, ld, r0, kk * 16 + t4 * 2);
#pragma unroll
        for (int nt = 0; nt < NT; nt++) {
            uint32_t bf[2];
            const T *br = &Bs[(nt * 8 + g) * ld + kk * 16 + t4 * 2];
            bf[0] = *reinterpret_cast<const uint32_t *>(br);
            bf[1] = *reinterpret_cast<const uint32_t *>(br + 8);
            mma_t<T>::run(acc[nt], a, bf);
        }
    }
}

// acc[dt] += P * B where P is in C layout (NT n-tiles of 8 = NT/2 k-steps)
// and B row-major [k][n] in Bs; output columns c0 + dt*8.
template <typename T, int NT, int NC>
__device__ __forceinline__ void gemm_pb(float (&acc)[NC][4], const float (&pv)[NT][4], const T *Bs, int ld, int c0)
{
    const int lane = threadIdx.x & 31;
    uint32_t pa[NT / 2][4];
#pragma unroll
    for (int nt = 0; nt < NT; nt++) {
        pa[nt >> 1][(nt & 1) * 2 + 0] = mma_t<T>::pack(pv[nt][0], pv[nt][1]);
        pa[nt >> 1][(nt & 1) * 2 + 1] = mma_t<T>::pack(pv[nt][2], pv[nt][3]);
    }
#pragma unroll
    for (int dt = 0; dt < NC; dt++) {
#pragma unroll
        for (int jj = 0; jj < NT / 2; jj++) {
            uint32_t bf[2];
            ldsm_t2(bf, Bs, ld, jj * 16, c0 + dt * 8, lane);
            mma_t<T>::run(acc[dt], pa[jj], bf);
        }
    }
}

// Is every (query i in [i0, i0 + ni), key j in [j0, j0 + nj)) visible?
__device__ __forceinline__ bool tile_full(const xk_sdpa &p, int lq, int lkv, int i0, int ni, int j0, int nj)
{
    bool full = j0 + nj <= lkv && i0 + ni <= lq;
    if (full && p.right >= 0)
        full = j0 + nj - 1 <= diag_of(p, i0, lq, lkv) + p.right;
    if (full && p.left >= 0)
        full = j0 >= diag_of(p, i0 + ni - 1, lq, lkv) - p.left;
    return full;
}

// The probability (times log2e-domain inputs) and dS of one element: s2 is
// the masked, scaled logit in the log2 domain, lse2 the row's logsumexp in
// it, f its dropout factor.  Writes P*f (for dV) to *pf and returns dS =
// P (f dP - Delta).
__device__ __forceinline__ float ds_of(float s2, float lse2, float dp, float delta, float f, float *pf)
{
    if (s2 == -CUDART_INF_F) {
        *pf = 0.0f;
        return 0.0f;
    }
    float pr = exp2f(s2 - lse2);
    *pf = pr * f;
    return pr * (f * dp - delta);
}

// ---------------------------------------------------------------- Delta

// Rows: (b, h, i) dense; (h, token) ragged, as one batch (st[0] is 0 there).
__global__ void __launch_bounds__(128) sdpa_bwd_delta(xk_sdpa p)
{
    int64_t row = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (row >= (int64_t)(p.off_q.p ? 1 : p.B) * p.Hq * p.Sq)
        return;
    int i = (int)(row % p.Sq), h = (int)((row / p.Sq) % p.Hq), b = (int)(row / ((int64_t)p.Sq * p.Hq));
    float part = 0.0f;
    for (int d = lane; d < p.Dv; d += 32)
        part += ld_any(p.dout.p, p.dout.dtype, off4(p.dout, b, h, i, d)) *
                ld_any(p.o.p, p.o.dtype, off4(p.o, b, h, i, d));
    float delta = warp_sum(part);
    if (lane == 0)
        p.delta[row] = delta; // == delta_at(p, b, h, i)
}

// ---------------------------------------------------------------- dQ

template <typename T, int DP>
__global__ void __launch_bounds__(128) sdpa_bwd_dq_mma(xk_sdpa p, int vq, int vk, int vv, int vo)
{
    using C = bwd_cfg<DP>;
    constexpr int BN = C::BN, LD = C::LD, NT = BN / 8, DC = C::DC;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *Qs = reinterpret_cast<T *>(smem_raw), *dOs = Qs + 64 * LD;
#define XK_KS(st) (Qs + (128 + (st) * BN) * LD)
#define XK_VS(st) (Qs + (128 + (2 + (st)) * BN) * LD)
    const int bh = blockIdx.y, b = bh / p.Hq, h = bh % p.Hq, hk = h / (p.Hq / p.Hk);
    const int m0 = blockIdx.x * 64, c0 = blockIdx.z * DC;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t4 = lane & 3;
    const seq_rows sr = rows_of(p, b);
    if (m0 >= sr.nq) // a ragged sequence shorter than the grid's bound T: no rows here
        return;
    const int lq = sr.lq, lkv = sr.lkv, qend = sr.qrow + sr.nq, kend = sr.krow + sr.nkv;
    const float scale2 = p.scale * kLog2e;
    const int r0 = warp * 16 + g, row0 = m0 + r0;

    int jlo, jhi;
    block_keys(p, m0, lq, lkv, BN, &jlo, &jhi);

    float lse2[2], dl[2];
#pragma unroll
    for (int r = 0; r < 2; r++) {
        const int i = row0 + 8 * r;
        const bool in = i < sr.nq;
        lse2[r] = in ? ld_any(p.stats.p, p.stats.dtype, off4(p.stats, b, h, sr.qrow + i, 0)) * kLog2e : 0.0f;
        dl[r] = in ? p.delta[delta_at(p, b, h, sr.qrow + i)] : 0.0f;
    }
    float dq[DC / 8][4];
#pragma unroll
    for (int dt = 0; dt < DC / 8; dt++)
        dq[dt][0] = dq[dt][1] = dq[dt][2] = dq[dt][3] = 0.0f;

    load_tile<T, 64, DP>(Qs, LD, p.q, b, h, sr.qrow + m0, qend, p.D, vq != 0);
    load_tile<T, 64, DP>(dOs, LD, p.dout, b, h, sr.qrow + m0, qend, p.Dv, vo != 0);
    if (jlo < jhi) {
        load_tile<T, BN, DP>(XK_KS(0), LD, p.k, b, hk, sr.krow + jlo, kend, p.D, vk != 0);
        load_tile<T, BN, DP>(XK_VS(0), LD, p.v, b, hk, sr.krow + jlo, kend, p.Dv, vv != 0);
    }
    cp_async_commit();
    cp_async_wait();
    __syncthreads();

    for (int n0 = jlo, it = 0; n0 < jhi; n0 += BN, it++) {
        const int cur = it & 1;
        if (n0 + BN < jhi) {
            load_tile<T, BN, DP>(XK_KS(cur ^ 1), LD, p.k, b, hk, sr.krow + n0 + BN, kend, p.D, vk != 0);
            load_tile<T, BN, DP>(XK_VS(cur ^ 1), LD, p.v, b, hk, sr.krow + n0 + BN, kend, p.Dv, vv != 0);
        }
        cp_async_commit();
        const T *Kc = XK_KS(cur), *Vc = XK_VS(cur);
        float s[NT][4], dp[NT][4];
        gemm_abt<T, NT, DP>(s, Qs, Kc, LD, r0);
        gemm_abt<T, NT, DP>(dp, dOs, Vc, LD, r0);
        const bool full = tile_full(p, lq, lkv, m0, 64, n0, BN) && !p.bias.p;
        // dropout: the forward's layout, so its quad calls (drop_rows_mma) on f dP
        if (p.drop_threshold)
            drop_rows_mma<NT>(p, dp, b, h, row0, n0);
#pragma unroll
        for (int nt = 0; nt < NT; nt++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int r = e >> 1, i = row0 + 8 * r, j = n0 + nt * 8 + t4 * 2 + (e & 1);
                float x = full ? s[nt][e] * scale2
                               : visible(p, lq, lkv, i, j) ? s[nt][e] * scale2 + bias_at(p, b, h, i, j) * kLog2e
                                                           : -CUDART_INF_F;
                float pf;
                s[nt][e] = ds_of(x, lse2[r], dp[nt][e], dl[r], 1.0f, &pf); // dp holds f dP
            }
        gemm_pb<T, NT, DC / 8>(dq, s, Kc, LD, c0);
        cp_async_wait();
        __syncthreads();
    }
#pragma unroll
    for (int r = 0; r < 2; r++) {
        const int i = row0 + 8 * r, row = sr.qrow + i;
        if (i >= sr.nq)
            continue;
#pragma unroll
        for (int dt = 0; dt < DC / 8; dt++) {
            const int d = c0 + dt * 8 + t4 * 2;
            if (d < p.D)
                st_any(p.dq.p, p.dq.dtype, off4(p.dq, b, h, row, d), dq[dt][r * 2] * p.scale);
            if (d + 1 < p.D)
                st_any(p.dq.p, p.dq.dtype, off4(p.dq, b, h, row, d + 1), dq[dt][r * 2 + 1] * p.scale);
        }
    }
#undef XK_KS
#undef XK_VS
}

// ---------------------------------------------------------------- dK, dV

template <typename T, int DP>
__global__ void __launch_bounds__(128) sdpa_bwd_dkdv_mma(xk_sdpa p, int vq, int vk, int vv, int vo)
{
    using C = bwd_cfg<DP>;
    constexpr int QB = C::QB, LD = C::LD, NT = QB / 8, DC = C::DC;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *Ks = reinterpret_cast<T *>(smem_raw), *Vs = Ks + 64 * LD;
#define XK_QS(st) (Ks + (128 + (st) * QB) * LD)
#define XK_OS(st) (Ks + (128 + (2 + (st)) * QB) * LD)
    float *lse_s = reinterpret_cast<float *>(Ks + (128 + 4 * QB) * LD); // [2][QB], then delta [2][QB]
    float *dl_s = lse_s + 2 * QB;
    const int group = p.Hq / p.Hk;
    const int bh = blockIdx.y, b = bh / p.Hk, hk = bh % p.Hk;
    const int k0 = blockIdx.x * 64, c0 = blockIdx.z * DC;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t4 = lane & 3;
    const seq_rows sr = rows_of(p, b);
    if (k0 >= sr.nkv) // a ragged sequence shorter than the grid's bound T: no keys here
        return;
    const int lq = sr.lq, lkv = sr.lkv, qend = sr.qrow + sr.nq, kend = sr.krow + sr.nkv;
    const float scale2 = p.scale * kLog2e;
    const int r0 = warp * 16 + g, key0 = k0 + r0;

    int ilo = p.Sq, ihi = 0;
    for (int r = 0; r < 64; r++) {
        int lo, hi;
        row_range(p, lq, lkv, k0 + r, &lo, &hi);
        if (lo < hi) {
            ilo = min(ilo, lo);
            ihi = max(ihi, hi);
        }
    }
    ilo = ilo / QB * QB;
    const int ntiles = ilo < ihi ? (ihi - ilo + QB - 1) / QB : 0, total = ntiles * group;

    float dk[DC / 8][4], dv[DC / 8][4];
#pragma unroll
    for (int dt = 0; dt < DC / 8; dt++) {
        dk[dt][0] = dk[dt][1] = dk[dt][2] = dk[dt][3] = 0.0f;
        dv[dt][0] = dv[dt][1] = dv[dt][2] = dv[dt][3] = 0.0f;
    }
    // tile t: query head hk * group + t / ntiles, rows ilo + (t % ntiles) * QB
    auto load_q = [&](int t, int st) {
        const int h = hk * group + t / ntiles, q0 = ilo + (t % ntiles) * QB;
        load_tile<T, QB, DP>(XK_QS(st), LD, p.q, b, h, sr.qrow + q0, qend, p.D, vq != 0);
        load_tile<T, QB, DP>(XK_OS(st), LD, p.dout, b, h, sr.qrow + q0, qend, p.Dv, vo != 0);
        for (int r = threadIdx.x; r < QB; r += blockDim.x) {
            const int i = q0 + r, row = sr.qrow + i;
            const bool in = i < sr.nq;
            lse_s[st * QB + r] = in ? ld_any(p.stats.p, p.stats.dtype, off4(p.stats, b, h, row, 0)) * kLog2e : 0.0f;
            dl_s[st * QB + r] = in ? p.delta[delta_at(p, b, h, row)] : 0.0f;
        }
    };
    load_tile<T, 64, DP>(Ks, LD, p.k, b, hk, sr.krow + k0, kend, p.D, vk != 0);
    load_tile<T, 64, DP>(Vs, LD, p.v, b, hk, sr.krow + k0, kend, p.Dv, vv != 0);
    if (total > 0)
        load_q(0, 0);
    cp_async_commit();
    cp_async_wait();
    __syncthreads();

    for (int t = 0; t < total; t++) {
        const int cur = t & 1;
        if (t + 1 < total)
            load_q(t + 1, cur ^ 1);
        cp_async_commit();
        const int h = hk * group + t / ntiles, q0 = ilo + (t % ntiles) * QB;
        const T *Qc = XK_QS(cur), *Oc = XK_OS(cur);
        const float *lse_c = lse_s + cur * QB, *dl_c = dl_s + cur * QB;
        float s[NT][4], dp[NT][4];
        gemm_abt<T, NT, DP>(s, Ks, Qc, LD, r0);  // S^T: keys x queries
        gemm_abt<T, NT, DP>(dp, Vs, Oc, LD, r0); // dP^T
        const bool full = tile_full(p, lq, lkv, q0, QB, k0, 64) && !p.bias.p;
        // dropout, S^T's layout: per two query tiles, the 8 calls of a t4 column's (query, key group)
        // pairs, call q = 4 (nt - nt0) + e made by lane g = q (drop_words_oct)
        const uint64_t groups = (uint64_t)((p.Skv + 7) >> 3); // a row's calls
        const uint64_t mine = p.drop_threshold ? drop_call(p, b, h, q0 + (g >> 2) * 8 + t4 * 2 + (g & 1)) +
                                                     (uint32_t)((k0 + warp * 16) >> 3) + ((g >> 1) & 1)
                                               : 0;
#pragma unroll
        for (int nt0 = 0; nt0 < NT; nt0 += 2) {
            uint32_t u16[8] = {};
            if (p.drop_threshold)
                drop_words_oct(p.seed, mine + (uint64_t)nt0 * 8 * groups, u16);
#pragma unroll
            for (int q = 0; q < 8; q++) {
                const int nt = nt0 + (q >> 2), e = q & 3;
                const int ci = nt * 8 + t4 * 2 + (e & 1), i = q0 + ci, j = key0 + 8 * (e >> 1);
                float x = full ? s[nt][e] * scale2
                               : visible(p, lq, lkv, i, j) ? s[nt][e] * scale2 + bias_at(p, b, h, i, j) * kLog2e
                                                           : -CUDART_INF_F;
                const float f = p.drop_threshold ? drop_keep(p, u16[q]) : 1.0f;
                float pf;
                s[nt][e] = ds_of(x, lse_c[ci], dp[nt][e], dl_c[ci], f, &pf);
                dp[nt][e] = pf;
            }
        }
        gemm_pb<T, NT, DC / 8>(dv, dp, Oc, LD, c0); // dV += (f P)^T dO
        gemm_pb<T, NT, DC / 8>(dk, s, Qc, LD, c0);   // dK += dS^T Q
        cp_async_wait();
        __syncthreads();
    }
#pragma unroll
    for (int r = 0; r < 2; r++) {
        const int j = key0 + 8 * r, row = sr.krow + j;
        if (j >= sr.nkv)
            continue;
#pragma unroll
        for (int dt = 0; dt < DC / 8; dt++) {
            const int d = c0 + dt * 8 + t4 * 2;
            if (d < p.D)
                st_any(p.dk.p, p.dk.dtype, off4(p.dk, b, hk, row, d), dk[dt][r * 2] * p.scale);
            if (d + 1 < p.D)
                st_any(p.dk.p, p.dk.dtype, off4(p.dk, b, hk, row, d + 1), dk[dt][r * 2 + 1] * p.scale);
            if (d < p.Dv)
                st_any(p.dv.p, p.dv.dtype, off4(p.dv, b, hk, row, d), dv[dt][r * 2]);
            if (d + 1 < p.Dv)
                st_any(p.dv.p, p.dv.dtype, off4(p.dv, b, hk, row, d + 1), dv[dt][r * 2 + 1]);
        }
    }
#undef XK_QS
#undef XK_OS
}

template <typename K> cudaError_t opt_in(K kern, int bytes, bool *opted)
{
    if (*opted)
        return cudaSuccess;
    cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    if (e == cudaSuccess)
        *opted = true;
    return e;
}

template <typename T, int DP> cudaError_t launch_bwd(const xk_sdpa &p, cudaStream_t s)
{
    using C = bwd_cfg<DP>;
    static bool opted_dq = false, opted_kv = false;
    cudaError_t e = opt_in(sdpa_bwd_dq_mma<T, DP>, C::SMEM_DQ, &opted_dq);
    if (e == cudaSuccess)
        e = opt_in(sdpa_bwd_dkdv_mma<T, DP>, C::SMEM_KV, &opted_kv);
    if (e != cudaSuccess)
        return e;
    const int vq = vec_ok(p.q, p.D, 2), vk = vec_ok(p.k, p.D, 2), vv = vec_ok(p.v, p.Dv, 2),
              vo = vec_ok(p.dout, p.Dv, 2);
    if (p.Sq > 0) {
        dim3 g((unsigned)((p.Sq + 63) / 64), (unsigned)(p.B * p.Hq), C::NCH);
        sdpa_bwd_dq_mma<T, DP><<<g, 128, C::SMEM_DQ, s>>>(p, vq, vk, vv, vo);
    }
    if (p.Skv > 0) {
        dim3 g((unsigned)((p.Skv + 63) / 64), (unsigned)(p.B * p.Hk), C::NCH);
        sdpa_bwd_dkdv_mma<T, DP><<<g, 128, C::SMEM_KV, s>>>(p, vq, vk, vv, vo);
    }
    return cudaGetLastError();
}

template <typename T> cudaError_t launch_bwd_t(const xk_sdpa &p, cudaStream_t s)
{
#define XK_CASE(n) \
    case n: return launch_bwd<T, n>(p, s);
    switch (dp_bucket(p.D > p.Dv ? p.D : p.Dv)) {
        XK_SDPA_BUCKETS(XK_CASE)
    default: return cudaErrorInvalidValue;
    }
#undef XK_CASE
}

} // namespace

extern "C" int xk_sdpa_bwd_mma_smem(int D, int Dv)
{
    int a = 1 << 30, b = 0;
#define XK_CASE(n) \
    case n: a = bwd_cfg<n>::SMEM_DQ, b = bwd_cfg<n>::SMEM_KV; break;
    switch (dp_bucket(D > Dv ? D : Dv)) {
        XK_SDPA_BUCKETS(XK_CASE)
    default: break;
    }
#undef XK_CASE
    return a > b ? a : b;
}

extern "C" int xk_sdpa_bwd_mma(const xk_sdpa *p, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (p->D < 1 || p->Dv < 1 || p->D > 256 || p->Dv > 256)
        return (int)cudaErrorInvalidValue;
    int64_t qrows = (int64_t)(p->off_q.p ? 1 : p->B) * p->Hq * p->Sq; /* Delta's rows (delta_at) */
    if (qrows > 0)
        sdpa_bwd_delta<<<(unsigned)((qrows * 32 + 127) / 128), 128, 0, s>>>(*p);
    if (p->B * p->Hq == 0)
        return (int)cudaGetLastError();
    cudaError_t e = p->q.dtype == XK_BF16 ? launch_bwd_t<__nv_bfloat16>(*p, s) : launch_bwd_t<__half>(*p, s);
    return (int)e;
}
