// sdpa_splitkv.cu — the split-KV attention forward for decode and chunked
// prefill (host side: src/gpu/eng_sdpa_splitkv.c, launcher declared in
// src/gpu/kern_sdpa_splitkv.h, semantics: src/ops/sdpa.h, helpers:
// sdpa_common.cuh).
//
//  splitkv_fwd<T, DP, WM>  one block of 4 warps per (split, row tile, batch,
//      KV head).  The query rows of a KV head's group are packed into the M
//      dimension (packed row r = position * G + head in group), so K and V
//      are read once per group, not once per query head.  Each block streams
//      its share of the keys (a split) through `ns` cp.async stages (a
//      launch parameter: the shared memory, hence blocks per SM, follows it)
//      and, with `pf` > 0, asks the L2 for the tiles pf beyond them (Hopper's
//      bulk prefetch: DRAM reads in flight with no shared memory held), and
//      runs S = Q K^T, O += P V on mma.sync m16n8k16 with an online softmax
//      (exp2 domain).  WM warps split the rows (16 each), the other 4 / WM
//      split each key tile: WM = 1 (<= 16 packed rows: decode, where the
//      tensor cores would otherwise multiply 48 padding rows) or WM = 4 (64
//      rows: chunked prefill).  The warps' (max, sum, o) are merged in shared
//      memory; the block then writes o and stats itself (one split) or the
//      partial o / log2-sum-exp of its split into the workspace.
//  splitkv_combine  one block per query row: the splits' partials weighted by
//      2^(lse_s - max), o and stats in their dtypes; on Hopper launched as a
//      programmatic dependent of the split pass (its launch overlaps it).
// Head dims pad to the bucket DP of 64, 128 or 256 (zeros in shared memory,
// like sdpa_mma.cu); decode is memory-bound, so padding costs only math.
#include "gpu/kern_sdpa_splitkv.h"
#include "sdpa_common.cuh"

namespace {

template <int DP, int WM> struct skv_cfg {
    static constexpr int WN = 4 / WM;                       // warps along the keys
    static constexpr int BM = 16 * WM;                      // packed rows per block
    static constexpr int BN = DP > 128 && WM == 4 ? 32 : 64; // keys per tile (o needs DP/2 registers)
    static constexpr int KW = BN / WN;                      // keys per warp per tile
    static constexpr int NT = KW / 8;
    // Decode tiles (WM 1, DP <= 128) are held to 170 registers, three blocks
    // per SM (12 warps; 232 registers allowed two: 8 warps per SM kept too
    // few loads in flight, b16 Skv 4k at 77-79% of the copy rate), with 2
    // stages so that three fit in shared memory.  The rest: 2 blocks per SM.
    static constexpr int MIN_BLOCKS = WM == 1 && DP <= 128 ? 3 : 1;
    static constexpr int STAGES = WM == 1 && DP == 128 ? 2 : DP <= 128 ? 3 : 2; // the default stage count
    static constexpr int MAX_STAGES = 6;
    static constexpr bool QREG = DP <= 128;
    static constexpr int LD = DP + 8;                       // 16-bit elements; +8: conflict-free fragments
    static constexpr int MERGE = 4 * 16 * DP * 4 + 2 * 4 * 16 * 4; // each warp's o, m, l in f32
    static constexpr int smem(int ns)
    {
        return (BM + 2 * ns * BN) * LD * 2 > MERGE ? (BM + 2 * ns * BN) * LD * 2 : MERGE;
    }
};

__device__ __forceinline__ void cp_async_wait_n(int n)
{
    // wait_group takes an immediate: the few depths the stage counts need
    if (n <= 0)
        asm volatile("cp.async.wait_group 0;\n" ::);
    else if (n == 1)
        asm volatile("cp.async.wait_group 1;\n" ::);
    else if (n == 2)
        asm volatile("cp.async.wait_group 2;\n" ::);
    else if (n == 3)
        asm volatile("cp.async.wait_group 3;\n" ::);
    else
        asm volatile("cp.async.wait_group 4;\n" ::);
}

// Packed rows [r0, r0 + BM) of KV head hk's group into shared memory (row
// stride LD), zero-filled past the last row and past column D.
template <typename T, int BM, int DP>
__device__ __forceinline__ void load_q(T *sm, int ld, const xk_sdpa &p, int b, int hk, int G, int r0, bool vec)
{
    constexpr int V = 8, CH = DP / V;
    const int nrows = G * p.Sq;
    for (int idx = threadIdx.x; idx < BM * CH; idx += blockDim.x) {
        const int r = idx / CH, c = (idx % CH) * V, gr = r0 + r;
        const bool ok = gr < nrows && c < p.D;
        const int i = ok ? gr / G : 0, h = ok ? hk * G + gr % G : 0;
        const T *src = static_cast<const T *>(p.q.p) + off4(p.q, b, h, i, 0);
        if (vec) {
            cp_async16(sm + r * ld + c, ok ? src + c : static_cast<const T *>(p.q.p), ok);
            continue;
        }
        T vals[V];
#pragma unroll
        for (int e = 0; e < V; e++)
            vals[e] = ok && c + e < p.D ? src[(int64_t)(c + e) * p.q.st[3]] : zero_of<T>();
        *reinterpret_cast<uint4 *>(sm + r * ld + c) = *reinterpret_cast<uint4 *>(vals);
    }
}

__device__ __forceinline__ int64_t ld_index(const void *p, int dt, int64_t i)
{
    return dt == XK_I64 ? (int64_t) static_cast<const long long *>(p)[i] : (int64_t) static_cast<const int32_t *>(p)[i];
}

__device__ __forceinline__ void shift_tokens(xk_tensor &t, int64_t tokens)
{
    if (!t.p)
        return;
    const int64_t bytes = t.dtype == XK_F32 ? 4 : t.dtype == XK_F64 ? 8 : 2;
    t.p = static_cast<const char *>(t.p) + tokens * t.st[2] * bytes;
}

// [lo, hi) of sequence b in a THD tensor of T tokens (offsets clamped into [0, T]).
__device__ __forceinline__ void seq_range(const void *off, int dt, int b, int64_t T, int64_t *lo, int64_t *hi)
{
    const int64_t a = ld_index(off, dt, b), e = ld_index(off, dt, b + 1);
    *lo = a < 0 ? 0 : a > T ? T : a;
    *hi = e < *lo ? *lo : e > T ? T : e;
}

// Sequence b as a dense problem: Sq, Skv its lengths, ragged tensors' bases at
// its first token (their st[0] is 0), len_kv folded into Skv.
__device__ __forceinline__ xk_sdpa seq_view(const xk_sdpa &p0, const xk_splitkv_serve &sv, int b)
{
    xk_sdpa p = p0;
    int64_t lo, hi;
    if (sv.off_q) {
        seq_range(sv.off_q, sv.off_q_dtype, b, p0.Sq, &lo, &hi);
        p.Sq = (int)(hi - lo);
        shift_tokens(p.q, lo);
        shift_tokens(p.o, lo);
        shift_tokens(p.stats, lo);
    }
    if (sv.off_kv) {
        seq_range(sv.off_kv, sv.off_kv_dtype, b, p0.Skv, &lo, &hi);
        p.Skv = (int)(hi - lo);
        shift_tokens(p.k, lo);
        shift_tokens(p.v, lo);
    } else {
        p.Skv = seq_len(p0.len_kv, b, p0.Skv);
    }
    return p;
}

// One 16-byte chunk (columns [c, c + V)) of a row into shared memory: cp.async
// when vec, else element loads; zeros past ncols or for a row that is not
// there (row_ok false; `any` is a valid address for the zero-filling copy).
template <typename E, int V>
__device__ __forceinline__ void copy_chunk(E *dst, const E *row, const E *any, bool row_ok, int c, int ncols,
                                           int64_t st3, bool vec)
{
    const bool ok = row_ok && c < ncols;
    if (vec) {
        cp_async16(dst, ok ? row + c : any, ok);
        return;
    }
    E vals[V];
#pragma unroll
    for (int e = 0; e < V; e++)
        vals[e] = ok && c + e < ncols ? row[(int64_t)(c + e) * st3] : zero_of<E>();
    *reinterpret_cast<uint4 *>(dst) = *reinterpret_cast<uint4 *>(vals);
}

// Keys [r0, r0 + R) of sequence b (nrows of them valid) of k and v into
// shared memory (sk, sv_): dense through load_tile; paged through the page
// table.  Paged: the pages of this thread's rows are looked up first, all
// loads in flight at once, then the copies are issued (a lookup per copy
// serialized its latency: 50% of the copy rate); a tile within one page
// (page_size % R == 0: tiles start at multiples of R) needs one lookup.  The
// same rows of k and v share the lookups.  Launched with 128 threads.
template <typename E, int R, int DP>
__device__ __forceinline__ void load_kv(E *sk, E *sv_, int lds, const xk_sdpa &p, const xk_splitkv_serve &sv, int b,
                                        int h, int r0, int nrows, bool vec_k, bool vec_v)
{
    if (!sv.page_table) {
        load_tile<E, R, DP>(sk, lds, p.k, b, h, r0, nrows, p.D, vec_k);
        load_tile<E, R, DP>(sv_, lds, p.v, b, h, r0, nrows, p.Dv, vec_v);
        return;
    }
    constexpr int V = 16 / (int)sizeof(E), CH = DP / V, NIT = R * CH / 128;
    static_assert(R * CH % 128 == 0, "whole chunks per thread");
    const int64_t row0 = (int64_t)b * sv.pt_stride;
    int64_t pg[NIT];
    if (sv.page_size % R == 0) {
        const int64_t x = ld_index(sv.page_table, sv.pt_dtype, row0 + r0 / sv.page_size);
#pragma unroll
        for (int it = 0; it < NIT; it++)
            pg[it] = x;
    } else {
#pragma unroll
        for (int it = 0; it < NIT; it++) {
            const int gr = r0 + (threadIdx.x + it * 128) / CH;
            pg[it] = gr < nrows ? ld_index(sv.page_table, sv.pt_dtype, row0 + gr / sv.page_size) : 0;
        }
    }
    const E *kb = static_cast<const E *>(p.k.p) + (int64_t)h * p.k.st[1];
    const E *vb = static_cast<const E *>(p.v.p) + (int64_t)h * p.v.st[1];
#pragma unroll
    for (int it = 0; it < NIT; it++) {
        const int idx = threadIdx.x + it * 128, r = idx / CH, c = (idx % CH) * V, gr = r0 + r;
        const int64_t page = pg[it] < 0 ? 0 : pg[it] >= sv.num_pages ? sv.num_pages - 1 : pg[it];
        const int64_t slot = gr % sv.page_size;
        const E *krow = kb + page * p.k.st[0] + slot * p.k.st[2], *vrow = vb + page * p.v.st[0] + slot * p.v.st[2];
        copy_chunk<E, V>(sk + r * lds + c, krow, kb, gr < nrows, c, p.D, p.k.st[3], vec_k);
        copy_chunk<E, V>(sv_ + r * lds + c, vrow, vb, gr < nrows, c, p.Dv, p.v.st[3], vec_v);
    }
}

// Asks the L2 for keys [n0, n0 + R) of k and v (at most nrows), so that the
// cp.async copies of that tile, issued pf tiles later, hit the L2: more DRAM
// reads in flight per SM than the shared-memory stages hold (Little's law:
// ~3 TB/s x the loaded latency).  Hopper's bulk prefetch (no registers, no
// shared memory, no completion to wait for): one per tile when its rows are
// contiguous (bhsd K/V, head-major page pools), else one per row.  Paged
// pools only when a tile lies in one page (one lookup); a no-op before sm_90
// and for unaligned rows (vec false).
template <typename E, int R>
__device__ __forceinline__ void prefetch_kv(const xk_sdpa &p, const xk_splitkv_serve &sv, int b, int h, int n0,
                                            int nrows, bool vec)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (!vec || n0 >= nrows || (sv.page_table && sv.page_size % R != 0))
        return;
    const int rows = min(R, nrows - n0);
    const E *kb = static_cast<const E *>(p.k.p) + (int64_t)h * p.k.st[1];
    const E *vb = static_cast<const E *>(p.v.p) + (int64_t)h * p.v.st[1];
    if (sv.page_table) {
        int64_t page = ld_index(sv.page_table, sv.pt_dtype, (int64_t)b * sv.pt_stride + n0 / sv.page_size);
        page = page < 0 ? 0 : page >= sv.num_pages ? sv.num_pages - 1 : page;
        const int64_t slot = n0 % sv.page_size;
        kb += page * p.k.st[0] + slot * p.k.st[2];
        vb += page * p.v.st[0] + slot * p.v.st[2];
    } else {
        kb += (int64_t)b * p.k.st[0] + (int64_t)n0 * p.k.st[2];
        vb += (int64_t)b * p.v.st[0] + (int64_t)n0 * p.v.st[2];
    }
    const unsigned kbytes = (unsigned)p.D * (unsigned)sizeof(E), vbytes = (unsigned)p.Dv * (unsigned)sizeof(E);
    if (p.k.st[2] == p.D && p.v.st[2] == p.Dv) { // contiguous rows: one request per tensor
        if (threadIdx.x == 0)
            asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" ::"l"(kb), "r"(kbytes * rows) : "memory");
        else if (threadIdx.x == 32)
            asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" ::"l"(vb), "r"(vbytes * rows) : "memory");
        return;
    }
    for (int r = threadIdx.x; r < 2 * rows; r += blockDim.x) {
        const bool isk = r < rows;
        const E *row = isk ? kb + (int64_t)r * p.k.st[2] : vb + (int64_t)(r - rows) * p.v.st[2];
        asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" ::"l"(row), "r"(isk ? kbytes : vbytes) : "memory");
    }
#endif
}

// Keys [0, *hi) that packed row r may see (no left window: the engine refuses it).
__device__ __forceinline__ int row_keys(const xk_sdpa &p, int G, int r)
{
    const int i = r / G;
    if (p.right < 0)
        return p.Skv;
    const int diag = p.bottom_right ? i + p.Skv - p.Sq : i;
    return max(0, min(p.Skv, diag + p.right + 1));
}

template <typename T, int DP, int WM>
__global__ void __launch_bounds__(128, skv_cfg<DP, WM>::MIN_BLOCKS) splitkv_fwd(xk_sdpa p0, xk_splitkv_serve sv, float *ws_o, float *ws_l, int vec_q,
                                                   int vec_k, int vec_v, int S, int pf)
{
    using C = skv_cfg<DP, WM>;
    constexpr int BM = C::BM, BN = C::BN, LD = C::LD, NT = C::NT, KW = C::KW; // S: stages (2..MAX_STAGES)
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *Qs = reinterpret_cast<T *>(smem_raw);
    T *KV = Qs + BM * LD; // stage st: K at KV + 2 * st * BN * LD, V right after it
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    // the combine pass may be scheduled now: it waits (griddepcontrol.wait)
    // for this grid's completion, but its launch latency is hidden
    asm volatile("griddepcontrol.launch_dependents;\n" ::);
#endif
    const int split = blockIdx.x, nsplit = gridDim.x, r0 = blockIdx.y * BM;
    const int b = blockIdx.z / p0.Hk, hk = blockIdx.z % p0.Hk;
    const xk_sdpa p = seq_view(p0, sv, b); // this sequence's lengths and bases
    const int G = p.Hq / p.Hk, nrows = G * p.Sq;
    if (r0 >= nrows)
        return; // a row tile past a ragged sequence's rows (the grid covers the token count)
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t4 = lane & 3;
    const int wm = warp % WM, wn = warp / WM, kofs = wn * KW;
    const float scale2 = p.scale * kLog2e;

    // keys of the tile's rows: [0, hi_max); every row sees [0, hi_min)
    const int rlast = min(nrows, r0 + BM) - 1;
    const int hi_max = row_keys(p, G, rlast), hi_min = row_keys(p, G, r0);
    const int ntiles = (hi_max + BN - 1) / BN, per = (ntiles + nsplit - 1) / nsplit;
    const int t_lo = split * per, t_hi = min(ntiles, t_lo + per);

    load_q<T, BM, DP>(Qs, LD, p, b, hk, G, r0, vec_q != 0);
    for (int st = 0; st < S - 1; st++) { // prologue: the first S - 1 tiles
        if (t_lo + st < t_hi) {
            const int n0 = (t_lo + st) * BN;
            load_kv<T, BN, DP>(KV + 2 * st * BN * LD, KV + (2 * st + 1) * BN * LD, LD, p, sv, b, hk, n0, p.Skv,
                               vec_k != 0, vec_v != 0);
        }
        cp_async_commit();
    }
    const bool vec_kv = vec_k != 0 && vec_v != 0;
    for (int t = t_lo + S - 1; t < min(t_hi, t_lo + S - 1 + pf); t++) // the prefetch lead: pf tiles beyond
        prefetch_kv<T, BN>(p, sv, b, hk, t * BN, p.Skv, vec_kv);

    const int ra = wm * 16 + g; // this thread's rows in the tile: ra, ra + 8
    int hi_r[2];
#pragma unroll
    for (int r = 0; r < 2; r++)
        hi_r[r] = r0 + ra + 8 * r < nrows ? row_keys(p, G, r0 + ra + 8 * r) : 0;
    float o[DP / 8][4];
#pragma unroll
    for (int dt = 0; dt < DP / 8; dt++)
        o[dt][0] = o[dt][1] = o[dt][2] = o[dt][3] = 0.0f;
    float mrow[2] = {-CUDART_INF_F, -CUDART_INF_F}, lrow[2] = {0.0f, 0.0f};
    uint32_t qf[C::QREG ? DP / 16 : 1][4];

    for (int t = t_lo; t < t_hi; t++) {
        const int it = t - t_lo;
        cp_async_wait_n(S - 2); // tile t landed (this thread's copies) ...
        __syncthreads();        // ... everyone's; and stage (it - 1) % S is free again
        if (it == 0 && C::QREG) {
#pragma unroll
            for (int kk = 0; kk < DP / 16; kk++)
                lds_a(qf[C::QREG ? kk : 0], Qs, LD, ra, kk * 16 + t4 * 2);
        }
        if (t + S - 1 < t_hi) {
            const int st = (it + S - 1) % S, n0 = (t + S - 1) * BN;
            load_kv<T, BN, DP>(KV + 2 * st * BN * LD, KV + (2 * st + 1) * BN * LD, LD, p, sv, b, hk, n0, p.Skv,
                               vec_k != 0, vec_v != 0);
            if (pf > 0 && t + S - 1 + pf < t_hi)
                prefetch_kv<T, BN>(p, sv, b, hk, (t + S - 1 + pf) * BN, p.Skv, vec_kv);
        }
        cp_async_commit();
        const T *Kc = KV + 2 * (it % S) * BN * LD, *Vc = Kc + BN * LD;
        const int n0 = t * BN;

        float s[NT][4];
#pragma unroll
        for (int nt = 0; nt < NT; nt++)
            s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.0f;
#pragma unroll
        for (int kk = 0; kk < DP / 16; kk++) {
            uint32_t qa[4];
            if (!C::QREG)
                lds_a(qa, Qs, LD, ra, kk * 16 + t4 * 2);
#pragma unroll
            for (int nt = 0; nt < NT; nt++) {
                uint32_t bf[2];
                const T *kr = &Kc[(kofs + nt * 8 + g) * LD + kk * 16 + t4 * 2];
                bf[0] = *reinterpret_cast<const uint32_t *>(kr);
                bf[1] = *reinterpret_cast<const uint32_t *>(kr + 8);
                mma_t<T>::run(s[nt], C::QREG ? qf[C::QREG ? kk : 0] : qa, bf);
            }
        }
        // scale and mask (only a tile reaching past some row's last key)
        const bool full = n0 + BN <= hi_min;
        float mx[2] = {-CUDART_INF_F, -CUDART_INF_F};
#pragma unroll
        for (int nt = 0; nt < NT; nt++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int j = n0 + kofs + nt * 8 + t4 * 2 + (e & 1);
                const float x = full || j < hi_r[e >> 1] ? s[nt][e] * scale2 : -CUDART_INF_F;
                s[nt][e] = x;
                mx[e >> 1] = fmaxf(mx[e >> 1], x);
            }
        float corr[2], muse[2];
#pragma unroll
        for (int r = 0; r < 2; r++) {
            mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
            mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
            const float mn = fmaxf(mrow[r], mx[r]);
            muse[r] = mn == -CUDART_INF_F ? 0.0f : mn;
            corr[r] = exp2f(mrow[r] - muse[r]);
            mrow[r] = mn;
            lrow[r] *= corr[r];
        }
        uint32_t pa[NT / 2][4];
#pragma unroll
        for (int nt = 0; nt < NT; nt++) {
#pragma unroll
            for (int e = 0; e < 4; e++) {
                s[nt][e] = exp2f(s[nt][e] - muse[e >> 1]);
                lrow[e >> 1] += s[nt][e];
            }
            pa[nt >> 1][(nt & 1) * 2 + 0] = mma_t<T>::pack(s[nt][0], s[nt][1]);
            pa[nt >> 1][(nt & 1) * 2 + 1] = mma_t<T>::pack(s[nt][2], s[nt][3]);
        }
#pragma unroll
        for (int dt = 0; dt < DP / 8; dt++) {
            o[dt][0] *= corr[0];
            o[dt][1] *= corr[0];
            o[dt][2] *= corr[1];
            o[dt][3] *= corr[1];
#pragma unroll
            for (int jj = 0; jj < NT / 2; jj++) {
                uint32_t bf[2];
                ldsm_t2(bf, Vc, LD, kofs + jj * 16, dt * 8, lane);
                mma_t<T>::run(o[dt], pa[jj], bf);
            }
        }
    }
    cp_async_wait_n(0);
    __syncthreads(); // the stages are free: shared memory now holds the warps' results

    // each warp's rows: m, l (quad sums) and unnormalized o, in f32
    float *so = reinterpret_cast<float *>(smem_raw);          // [WN][BM][DP]
    float *sm_m = so + 4 * 16 * DP, *sm_l = sm_m + 4 * 16;    // [WN][BM]
#pragma unroll
    for (int r = 0; r < 2; r++) {
        lrow[r] += __shfl_xor_sync(0xffffffffu, lrow[r], 1);
        lrow[r] += __shfl_xor_sync(0xffffffffu, lrow[r], 2);
        const int row = wn * BM + ra + 8 * r;
        if (t4 == 0) {
            sm_m[row] = mrow[r];
            sm_l[row] = lrow[r];
        }
#pragma unroll
        for (int dt = 0; dt < DP / 8; dt++) {
            so[row * DP + dt * 8 + t4 * 2] = o[dt][2 * r];
            so[row * DP + dt * 8 + t4 * 2 + 1] = o[dt][2 * r + 1];
        }
    }
    __syncthreads();
    // merge the key-splitting warps and write, one (row, d) per thread
    for (int idx = threadIdx.x; idx < BM * p.Dv; idx += blockDim.x) {
        const int rr = idx / p.Dv, d = idx % p.Dv, gr = r0 + rr;
        if (gr >= nrows)
            break; // rows beyond the group: the rest of the loop is too
        float m = -CUDART_INF_F;
#pragma unroll
        for (int w = 0; w < C::WN; w++)
            m = fmaxf(m, sm_m[w * BM + rr]);
        float l = 0.0f, acc = 0.0f;
#pragma unroll
        for (int w = 0; w < C::WN; w++) {
            const float f = m == -CUDART_INF_F ? 0.0f : exp2f(sm_m[w * BM + rr] - m);
            l += sm_l[w * BM + rr] * f;
            acc += so[(w * BM + rr) * DP + d] * f;
        }
        const bool empty = m == -CUDART_INF_F; // a NaN l (+inf or NaN scores) gives a NaN lse2: the combine keeps it
        const float val = empty ? 0.0f : acc / l, lse2 = empty ? -CUDART_INF_F : m + log2f(l);
        const int i = gr / G, h = hk * G + gr % G;
        if (nsplit == 1) {
            st_any(p.o.p, p.o.dtype, off4(p.o, b, h, i, d), val);
            if (d == 0 && p.stats.p)
                st_any(p.stats.p, p.stats.dtype, off4(p.stats, b, h, i, 0), lse2 * kLn2);
        } else {
            const int64_t row = ((int64_t)b * p.Hq + h) * p0.Sq + i, nall = (int64_t)p.B * p.Hq * p0.Sq;
            ws_o[((int64_t)split * nall + row) * p.Dv + d] = val;
            if (d == 0)
                ws_l[(int64_t)split * nall + row] = lse2;
        }
    }
}

__device__ __forceinline__ float ld_any_t(float x) { return x; }
__device__ __forceinline__ float ld_any_t(__half x) { return __half2float(x); }
__device__ __forceinline__ float ld_any_t(__nv_bfloat16 x) { return __bfloat162float(x); }

// One block per query row (b, h, i): o = sum_s 2^(lse_s - M) o_s / sum_s 2^(lse_s - M).  The partials o_s in
// PT (f32 here; sdpa_flash_wgmma's key splits write o's dtype), lse_s times lse_mul in the log2 domain (1 here;
// log2(e) for sdpa_flash_wgmma's natural-log stats).
template <typename PT>
__global__ void __launch_bounds__(128) splitkv_combine(xk_sdpa p0, xk_splitkv_serve sv, int nsplit, const PT *ws_o,
                                                       const float *ws_l, float lse_mul)
{
    extern __shared__ float wts[]; // [nsplit]
    __shared__ float s_m, s_sum;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;\n" ::: "memory"); // the split pass has finished and its writes are visible
#endif
    const int64_t row = blockIdx.x, nall = (int64_t)p0.B * p0.Hq * p0.Sq;
    const int i = (int)(row % p0.Sq), h = (int)(row / p0.Sq % p0.Hq), b = (int)(row / ((int64_t)p0.Sq * p0.Hq));
    const xk_sdpa p = seq_view(p0, sv, b);
    if (i >= p.Sq)
        return; // past a ragged sequence: no partials, no such row of o
    if (threadIdx.x < 32) {
        float m = -CUDART_INF_F;
        for (int s = threadIdx.x; s < nsplit; s += 32)
            m = fmaxf(m, ws_l[s * nall + row] * lse_mul);
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
            m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
        float sum = 0.0f;
        // fmaxf passed over NaN partials (a split that saw +inf or NaN scores): their weight is NaN, even when
        // every other split is empty (m -inf), so the row is NaN as in the reference; an empty split weighs 0
        for (int s = threadIdx.x; s < nsplit; s += 32) {
            const float lse = ws_l[s * nall + row] * lse_mul, w = lse == -CUDART_INF_F ? 0.0f : exp2f(lse - m);
            wts[s] = w;
            sum += w;
        }
        sum = warp_sum(sum);
        if (threadIdx.x == 0) {
            s_m = m;
            s_sum = sum;
        }
    }
    __syncthreads();
    const bool empty = s_sum == 0.0f; // every split empty; a NaN sum stays NaN
    const float inv = empty ? 0.0f : 1.0f / s_sum;
    for (int d = threadIdx.x; d < p.Dv; d += blockDim.x) {
        float acc = 0.0f;
        for (int s = 0; s < nsplit; s++)
            acc += wts[s] * ld_any_t(ws_o[(s * nall + row) * p.Dv + d]);
        st_any(p.o.p, p.o.dtype, off4(p.o, b, h, i, d), acc * inv);
    }
    if (threadIdx.x == 0 && p.stats.p)
        st_any(p.stats.p, p.stats.dtype, off4(p.stats, b, h, i, 0),
               empty ? -CUDART_INF_F : (s_m + log2f(s_sum)) * kLn2);
}

// The launch's knobs: ns stages (0: the default; capped), pf prefetch lead.
struct knobs {
    int vq, vk, vv, ns, pf;
};

template <int DP, int WM> int stages_of(int ns)
{
    using C = skv_cfg<DP, WM>;
    return ns < 2 ? C::STAGES : ns > C::MAX_STAGES ? C::MAX_STAGES : ns;
}

template <typename T, int DP, int WM>
cudaError_t launch_split(const xk_sdpa &p, const xk_splitkv_serve &sv, dim3 grid, float *wo, float *wl, cudaStream_t s,
                         const knobs &kn)
{
    static int opted = 0; // the largest dynamic shared memory opted in so far
    const int ns = stages_of<DP, WM>(kn.ns), bytes = skv_cfg<DP, WM>::smem(ns);
    if (bytes > opted) {
        cudaError_t e =
            cudaFuncSetAttribute(splitkv_fwd<T, DP, WM>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
        if (e != cudaSuccess)
            return e;
        opted = bytes;
    }
    splitkv_fwd<T, DP, WM><<<grid, 128, bytes, s>>>(p, sv, wo, wl, kn.vq, kn.vk, kn.vv, ns, kn.pf < 0 ? 0 : kn.pf);
    return cudaGetLastError();
}

template <typename T, int WM>
cudaError_t launch_wm(const xk_sdpa &p, const xk_splitkv_serve &sv, int dp, dim3 grid, float *wo, float *wl,
                      cudaStream_t s, const knobs &kn)
{
    switch (dp) {
    case 64: return launch_split<T, 64, WM>(p, sv, grid, wo, wl, s, kn);
    case 128: return launch_split<T, 128, WM>(p, sv, grid, wo, wl, s, kn);
    case 256: return launch_split<T, 256, WM>(p, sv, grid, wo, wl, s, kn);
    default: return cudaErrorInvalidValue;
    }
}

int dp_of(int D, int Dv)
{
    const int d = D > Dv ? D : Dv;
    return d <= 64 ? 64 : d <= 128 ? 128 : 256;
}

template <int DP, int WM> xk_splitkv_shape shape_dp(int ns)
{
    using C = skv_cfg<DP, WM>;
    const int n = stages_of<DP, WM>(ns);
    return {C::BM, C::BN, C::smem(n), n, C::MIN_BLOCKS > 2 ? C::MIN_BLOCKS : 2};
}

template <int WM> xk_splitkv_shape shape_of(int dp, int ns)
{
    switch (dp) {
    case 64: return shape_dp<64, WM>(ns);
    case 128: return shape_dp<128, WM>(ns);
    default: return shape_dp<256, WM>(ns);
    }
}

// The combine pass over nsplit partials at (wo, wl): on Hopper a programmatic dependent launch (the split pass
// lets it start early, it waits for the split pass's end in the kernel)
template <typename PT>
cudaError_t combine(const xk_sdpa &p0, const xk_splitkv_serve &sv, int nsplit, const PT *wo, const float *wl,
                    float lse_mul, cudaStream_t s)
{
    const size_t nall = (size_t)p0.B * p0.Hq * p0.Sq;
    int dev = 0, cc = 0;
    if (cudaGetDevice(&dev) == cudaSuccess)
        cudaDeviceGetAttribute(&cc, cudaDevAttrComputeCapabilityMajor, dev);
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)nall);
    cfg.blockDim = dim3(128);
    // whole 16-byte units: compute-sanitizer saw a 12-byte shared read at the
    // end of 2 floats (nsplit 2); the padding is never written or used
    cfg.dynamicSmemBytes = (size_t)((nsplit + 3) & ~3) * sizeof(float);
    cfg.stream = s;
    cfg.attrs = &attr;
    cfg.numAttrs = cc >= 9 ? 1 : 0;
    return cudaLaunchKernelEx(&cfg, splitkv_combine<PT>, p0, sv, nsplit, wo, wl, lse_mul);
}

} // namespace

extern "C" xk_splitkv_shape xk_sdpa_splitkv_shape(int group_rows, int D, int Dv, int stages)
{
    const int dp = dp_of(D, Dv);
    return group_rows <= 16 ? shape_of<1>(dp, stages) : shape_of<4>(dp, stages);
}

extern "C" size_t xk_sdpa_splitkv_ws(const xk_sdpa *p, int nsplit)
{
    if (nsplit <= 1)
        return 0;
    const size_t rows = (size_t)p->B * (size_t)p->Hq * (size_t)p->Sq;
    return (size_t)nsplit * rows * ((size_t)p->Dv + 1) * sizeof(float) + 256;
}

extern "C" int xk_sdpa_splitkv_combine(const xk_sdpa *p, int nsplit, void *ws, int part_dtype, int lse_ln,
                                       void *stream)
{
    if (nsplit <= 1 || (int64_t)p->B * p->Hq * p->Sq == 0 || p->Dv == 0)
        return 0;
    float *wo = NULL, *wl = NULL;
    xk_splitkv_ws_parts(p, nsplit, ws, &wo, &wl);
    const xk_splitkv_serve sv = {};
    const float mul = lse_ln ? kLog2e : 1.0f;
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    switch (part_dtype) {
    case XK_F32: return (int)combine(*p, sv, nsplit, (const float *)wo, wl, mul, s);
    case XK_F16: return (int)combine(*p, sv, nsplit, (const __half *)(void *)wo, wl, mul, s);
    case XK_BF16: return (int)combine(*p, sv, nsplit, (const __nv_bfloat16 *)(void *)wo, wl, mul, s);
    default: return (int)cudaErrorInvalidValue;
    }
}

extern "C" int xk_sdpa_splitkv(const xk_sdpa *p, const xk_splitkv_serve *svp, int nsplit, const xk_splitkv_tune *tune,
                               void *ws, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    xk_splitkv_serve sv = {};
    if (svp)
        sv = *svp;
    if (sv.page_table && (sv.page_size < 1 || sv.num_pages < 1))
        return (int)cudaErrorInvalidValue;
    if ((int64_t)p->B * p->Hq * p->Sq == 0 || p->Dv == 0)
        return 0;
    if (p->D < 1 || p->Dv < 1 || p->D > 256 || p->Dv > 256 || p->Hk < 1 || p->Hq % p->Hk || nsplit < 1 ||
        (nsplit > 1 && !ws))
        return (int)cudaErrorInvalidValue;
    const int G = p->Hq / p->Hk, rows = G * p->Sq, dp = dp_of(p->D, p->Dv);
    const xk_splitkv_shape sh = xk_sdpa_splitkv_shape(rows, p->D, p->Dv, 0);
    dim3 grid((unsigned)nsplit, (unsigned)((rows + sh.rows - 1) / sh.rows), (unsigned)(p->B * p->Hk));
    float *wo = NULL, *wl = NULL;
    xk_splitkv_ws_parts(p, nsplit, ws, &wo, &wl);
    const knobs kn = {vec_ok(p->q, p->D, 2), vec_ok(p->k, p->D, 2), vec_ok(p->v, p->Dv, 2), tune ? tune->stages : 0,
                      tune ? tune->prefetch : 0};
    const bool bf = p->q.dtype == XK_BF16;
    cudaError_t e = sh.rows == 16 ? (bf ? launch_wm<__nv_bfloat16, 1>(*p, sv, dp, grid, wo, wl, s, kn)
                                        : launch_wm<__half, 1>(*p, sv, dp, grid, wo, wl, s, kn))
                                  : (bf ? launch_wm<__nv_bfloat16, 4>(*p, sv, dp, grid, wo, wl, s, kn)
                                        : launch_wm<__half, 4>(*p, sv, dp, grid, wo, wl, s, kn));
    if (e != cudaSuccess || nsplit == 1)
        return (int)e;
    return combine(*p, sv, nsplit, (const float *)wo, wl, 1.0f, s);
}
