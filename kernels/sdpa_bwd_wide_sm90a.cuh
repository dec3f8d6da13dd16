// sdpa_bwd_wide_sm90a.cuh — the Hopper attention backward for head dims past 128 (2026-11-24, session 9,
// issue 10): D and Dv up to 256, D != Dv, both zero-padded by TMA to DP = 192 or 256 columns.  Included by
// sdpa_bwd_wgmma_sm90a.cu, whose prep (lse2, Delta), f32 dQ workspace (dq_index order), dq_out and host
// helpers it shares; launched from xk_sdpa_bwd_wgmma when max(D, Dv) > 128.
//
// Why another kernel: sdpa_bwd_wgmma keeps dK and dV of 64 keys x DP columns in each consumer's registers,
// DP floats per thread, which passes the 240-register budget past DP = 128.  Here a block owns 64 keys and its
// two consumer warpgroups split the work by tensor instead of by keys:
//   warpgroup 1 ("P side"):  S^T = K Q^T, P^T = exp2(S^T scale log2e - lse2) (masked), P^T to shared memory
//                            (f32, in the accumulator order), dV += P^T dO (A = P^T from registers)
//   warpgroup 2 ("dS side"): dP^T = V dO^T, dS^T = P^T (dP^T - Delta) with P^T read back, dS to shared memory
//                            (16-bit, swizzled for dQ), dK += dS^T Q (A = dS^T from registers)
//   both:                    dQ_tile = dS K, warpgroup w taking the 64-column blocks w, w + 2 (DP = 192: the
//                            dS side computes block 2 again and drops it), added with red.global.add.v4.f32
// so each consumer holds one 64 x DP accumulator (DP / 2 floats per thread) and the GEMMs split evenly.  The
// two sides meet at two named barriers per tile (1: P^T written, 2: dS written).  Every GEMM of a side is
// waited for inside the tile and the side-specific code runs with no wgmma in flight (ptxas serializes wgmmas
// across thread-dependent branches, C7518 / C7520).  Shared memory at DP = 256: K, V 64 KiB, two stages of
// Q, dO 128 KiB, dS 8, P^T 16 (218 KiB): no room to stage dQ tiles for bulk adds, hence the red.global adds.
// The dQ sums are not ordered: the engine refuses a deterministic plan here (sdpa_bwd_flash takes it).
//  v1 (2026-11-24, session 9): every GEMM of a side waited for in its tile.  H100 (bench/RESULTS-sdpa.md),
//    b2h8s4096 D = 256: 1.75-1.83 ms (sdpa_bwd_flash 21.1, cuDNN 2.14); 192/128 b2h16: 3.10 (cuDNN 3.38); D = 160
//    b2h16: 3.07 (cuDNN 3.09).  Tried and dropped: the next tile's S^T / dP^T issued between a tile's two dQ
//    blocks (1.91 ms at D = 256 against v1's 1.75 in the same call; 192/128 and 160 within 1%).

namespace {

template <int DP> struct wide_cfg {
    static constexpr int BN = 64;                   // keys per block
    static constexpr int BM = 64;                   // query rows per tile
    static constexpr int NB = DP / 64;              // 128-byte column blocks of a row
    static constexpr int ST = DP <= 192 ? 3 : 2;    // Q/dO ring stages
    static constexpr int KV_BYTES = NB * BN * 128;  // K (or V)
    static constexpr int QT_BYTES = NB * BM * 128;  // one stage of Q (or dO)
    static constexpr int DS_BYTES = BM * BN * 2;    // dS, queries x keys
    static constexpr int P_BYTES = BN * BM * 4;     // P^T handed from the P side to the dS side
    static constexpr int LD_BYTES = 2 * BM * 4;     // lse2 and Delta of one stage's rows
    static constexpr int BAR_BYTES = 8 * (1 + 2 * ST);
    static constexpr int SMEM =
        1024 + 2 * KV_BYTES + 2 * ST * QT_BYTES + DS_BYTES + P_BYTES + ST * LD_BYTES + BAR_BYTES;
};

// The block's work, as sdpa_bwd_wgmma derives it (blockIdx: key block or ragged slot, b x kv head): keys
// [n0, n0 + BN) of batch b, kv head hk; ntq query tiles of BM rows from mlo per query head of the group.
struct wide_block {
    int b, n0, hk, group, lq, lkv, qrow, krow, nkv, qb, kb, off, mlo, ntq, total;
    int64_t wq0;
    bool empty; // a ragged slot past its sequence's keys
};

#if XW_DEVICE
template <int BN, int BM> __device__ __forceinline__ wide_block wide_block_of(const xk_sdpa &p, bool band)
{
    wide_block w;
    const bool rq = band && p.off_q.p, rkv = band && p.off_kv.p;
    if (rkv) {
        slot_seq(p.off_kv, p.B, p.Skv, BN, blockIdx.x, &w.b, &w.n0);
        w.hk = blockIdx.y;
    } else {
        w.n0 = blockIdx.x * BN, w.b = blockIdx.y / p.Hk, w.hk = blockIdx.y % p.Hk;
    }
    w.group = p.Hq / p.Hk;
    const seq_rows sr = rows_of(p, w.b);
    w.nkv = sr.nkv;
    w.empty = rkv && (w.n0 < 0 || w.n0 >= sr.nkv);
    w.lq = sr.lq, w.lkv = sr.lkv, w.qrow = rq ? sr.qrow : 0, w.krow = rkv ? sr.krow : 0;
    w.qb = rq ? 0 : w.b, w.kb = rkv ? 0 : w.b;
    w.wq0 = rq ? (int64_t)kPadRows * slot_base(p.off_q, w.b, p.Sq, kPadRows) : 0;
    w.off = p.bottom_right ? w.lkv - w.lq : 0;
    // the rows that see keys [n0, min(n0 + BN, lkv)): [rlo, rhi), 64-bit (off + left may pass INT32_MAX)
    const int64_t nhi = min(w.n0 + BN, w.lkv);
    int64_t rlo = 0, rhi = nhi > w.n0 ? w.lq : 0;
    if (p.right >= 0)
        rlo = max((int64_t)0, (int64_t)w.n0 - p.right - w.off);
    if (p.left >= 0)
        rhi = min(rhi, nhi + p.left - w.off);
    w.mlo = (int)(rlo / BM * BM);
    w.ntq = rhi > rlo ? (int)((rhi - w.mlo + BM - 1) / BM) : 0;
    w.total = w.empty ? 0 : w.ntq * w.group;
    return w;
}
#endif

// kDrop: dropout (launched with kBand only): the P side flips the sign of the dropped P^T elements before they
// go to shared memory (drop_sign), dV takes P f, the dS side P (f dP - Delta).
template <typename T, int DP, bool kBand, bool kDrop>
__global__ void __launch_bounds__(kThreads, 1)
    sdpa_bwd_wide(const __grid_constant__ CUtensorMap tq, const __grid_constant__ CUtensorMap tdo,
                  const __grid_constant__ CUtensorMap tk, const __grid_constant__ CUtensorMap tv, const xk_sdpa p,
                  const float *__restrict__ lse2, const float *__restrict__ delta, float *dqacc, int Sqp)
{
#if XW_DEVICE
    using C = wide_cfg<DP>;
    constexpr int BN = C::BN, BM = C::BM, NB = C::NB, ST = C::ST;
    extern __shared__ unsigned char smem_raw[];
    const uint32_t sK = (smem_u32(smem_raw) + 1023u) & ~1023u; // swizzled tiles need 1024-byte alignment
    const uint32_t sV = sK + C::KV_BYTES, sQ = sV + C::KV_BYTES, sO = sQ + ST * C::QT_BYTES;
    const uint32_t sDS = sO + ST * C::QT_BYTES, sP = sDS + C::DS_BYTES, sLD = sP + C::P_BYTES;
    const uint32_t sBar = sLD + ST * C::LD_BYTES, fullKV = sBar;
    const float *ld_gen = reinterpret_cast<const float *>(smem_raw + (sLD - smem_u32(smem_raw)));
#define XB_FULL(s) (sBar + 8u * (1 + (s)))
#define XB_EMPTY(s) (sBar + 8u * (1 + ST + (s)))
    // warp-uniform by a lane-0 broadcast, which ptxas can prove (threadIdx.x / 128 it cannot): the shared
    // addresses derived from it, and the wgmma descriptors on them, then live in uniform registers (no R2UR)
    const int wg = __shfl_sync(0xffffffffu, threadIdx.x / 128, 0);
    const wide_block w = wide_block_of<BN, BM>(p, kBand);
    if (w.empty)
        return; // a ragged slot past the sequence's keys: nothing to compute, nothing to store
    const int n0 = w.n0, hk = w.hk, total = w.total;
    // tile t: query head hk * group + t / ntq, rows mlo + (t % ntq) * BM; its workspace row (b, h, m0)
    auto row_of = [&](int t) -> int64_t {
        return (int64_t)(w.qb * p.Hq + hk * w.group + t / w.ntq) * Sqp + w.wq0 + w.mlo + (t % w.ntq) * BM;
    };

    if (threadIdx.x == 0) {
        mb_init(fullKV, 1);
#pragma unroll
        for (int s = 0; s < ST; s++) {
            mb_init(XB_FULL(s), 1);
            mb_init(XB_EMPTY(s), 256);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    }
    __syncthreads();

    if (wg == 0) { // ---- producer: K, V once, then Q, dO, lse2, Delta per tile through the ring
        asm volatile("setmaxnreg.dec.sync.aligned.u32 24;\n");
        if (threadIdx.x == 0) {
            mb_expect(fullKV, 2 * C::KV_BYTES);
#pragma unroll
            for (int c = 0; c < NB; c++) {
                tma_load(sK + c * BN * 128, &tk, fullKV, c * 64, w.krow + n0, hk, w.kb);
                tma_load(sV + c * BN * 128, &tv, fullKV, c * 64, w.krow + n0, hk, w.kb);
            }
            for (int t = 0; t < total; t++) {
                const int s = t % ST, h = hk * w.group + t / w.ntq, m0 = w.mlo + (t % w.ntq) * BM;
                const int64_t r = row_of(t);
                mb_wait(XB_EMPTY(s), ((t / ST) & 1) ^ 1);
                mb_expect(XB_FULL(s), 2 * C::QT_BYTES + C::LD_BYTES);
#pragma unroll
                for (int c = 0; c < NB; c++) {
                    tma_load(sQ + s * C::QT_BYTES + c * BM * 128, &tq, XB_FULL(s), c * 64, w.qrow + m0, h, w.qb);
                    tma_load(sO + s * C::QT_BYTES + c * BM * 128, &tdo, XB_FULL(s), c * 64, w.qrow + m0, h, w.qb);
                }
                bulk_load(sLD + s * C::LD_BYTES, lse2 + r, BM * 4, XB_FULL(s));
                bulk_load(sLD + s * C::LD_BYTES + BM * 4, delta + r, BM * 4, XB_FULL(s));
            }
        }
        return;
    }
    // ---- consumers: cw 0 the P side (S^T, P^T, dV), cw 1 the dS side (dP^T, dS^T, dK)
    asm volatile("setmaxnreg.inc.sync.aligned.u32 240;\n");
    const int cw = wg - 1, tid = threadIdx.x - 128 * wg, warp = tid >> 5, lane = tid & 31;
    const int g = lane >> 2, t4 = lane & 3;
    const float scale2 = p.scale * kLog2e;
    const int key0 = n0 + warp * 16 + g; // this thread's keys: key0, key0 + 8
    int rlo_k[2] = {0, 0}, rhi_k[2] = {0, 0}; // the rows that see them: [rlo_k, rhi_k]
    if constexpr (kBand) {
#pragma unroll
        for (int r = 0; r < 2; r++)
            band_rows(p, w.lq, w.lkv, w.off, key0 + 8 * r, &rlo_k[r], &rhi_k[r]);
    }
    // A of this side's first GEMM (K or V, keys x DP), its B (the stage's Q or dO) and the B of its
    // accumulation (dO for dV, Q for dK)
    const uint32_t aS = cw ? sV : sK, bS = cw ? sO : sQ, bA = cw ? sQ : sO;
    // the 64 x DP accumulator (dV or dK): columns 0-127 in acc0, the rest in acc1; element (key key0 + 8 r,
    // column q * 8 + 2 t4 + e) at [q * 4 + 2 r + e] of the whole
    float acc0[64], acc1[DP / 2 - 64], sa[BM / 2];
#pragma unroll
    for (int i = 0; i < 64; i++)
        acc0[i] = 0.0f;
#pragma unroll
    for (int i = 0; i < DP / 2 - 64; i++)
        acc1[i] = 0.0f;
    auto store_acc = [&]() { // dV, or dK times scale, 16-bit pairs
        T *base = static_cast<T *>(const_cast<void *>(cw ? p.dk.p : p.dv.p));
        const int64_t s0 = cw ? p.dk.st[0] : p.dv.st[0], s1 = cw ? p.dk.st[1] : p.dv.st[1],
                      s2 = cw ? p.dk.st[2] : p.dv.st[2];
        const float sc = cw ? p.scale : 1.0f;
        const int lim = cw ? p.D : p.Dv;
#pragma unroll
        for (int r = 0; r < 2; r++) {
            const int j = key0 + 8 * r;
            if (j >= w.nkv) // past Skv, or (ragged) the next sequence's key: never written
                continue;
            T *row = base + (int64_t)w.b * s0 + (int64_t)hk * s1 + (int64_t)(w.krow + j) * s2;
#pragma unroll
            for (int q = 0; q < DP / 8; q++) {
                const int d = q * 8 + t4 * 2;
                const float x = q < 16 ? acc0[q * 4 + r * 2] : acc1[(q - 16) * 4 + r * 2];
                const float y = q < 16 ? acc0[q * 4 + r * 2 + 1] : acc1[(q - 16) * 4 + r * 2 + 1];
                if (d < lim)
                    *reinterpret_cast<uint32_t *>(row + d) = pack2<T>(x * sc, y * sc);
            }
        }
    };
    mb_wait(fullKV, 0); // (also: K, V have landed before any thread exits)
    if (total <= 0) { // no query row sees these keys: dK = dV = 0
        store_acc();
        return;
    }
    keep(acc0); // the zeros are in before the first wgmma is issued
    keep(acc1);
    for (int t = 0; t < total; t++) {
        const int s = t % ST, m0 = w.mlo + (t % w.ntq) * BM;
        const float *lr = ld_gen + s * (C::LD_BYTES / 4); // lse2 of the stage's rows, Delta at lr + BM
        // S^T = K Q^T (P side) or dP^T = V dO^T (dS side), keys x queries
        mb_wait(XB_FULL(s), (t / ST) & 1);
        wg_fence();
        keep(sa);
#pragma unroll
        for (int kk = 0; kk < DP / 16; kk++) {
            const uint32_t co = (kk >> 2), ko = (kk & 3) * 32u;
            wg_ss(sa, gdesc(aS + co * BN * 128 + ko, 16, 1024),
                  gdesc(bS + s * C::QT_BYTES + co * BM * 128 + ko, 16, 1024), kk > 0, T());
        }
        wg_commit();
        wg_wait<0>();
        keep(sa);
        // accumulator e of n-tile nt: key key0 + 8 (e >> 1), query m0 + nt * 8 + 2 t4 + (e & 1)
        if (cw == 0) { // P^T, masked per element only on tiles that cross a length or an edge of the band
            const bool masked = kBand ? n0 + BN > w.lkv || m0 + BM > w.lq ||
                                            (p.right >= 0 && n0 + BN - 1 > (int64_t)m0 + w.off + p.right) ||
                                            (p.left >= 0 && n0 < (int64_t)m0 + BM - 1 + w.off - p.left)
                                      : p.right == 0 && n0 + BN - 1 > m0 + w.off;
#pragma unroll
            for (int nt = 0; nt < BM / 8; nt++) {
                const float2 l = *reinterpret_cast<const float2 *>(lr + nt * 8 + t4 * 2);
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    float x = fmaf(sa[nt * 4 + e], scale2, -((e & 1) ? l.y : l.x));
                    const int i = m0 + nt * 8 + t4 * 2 + (e & 1);
                    const bool hidden = kBand ? !(i >= rlo_k[e >> 1] && i <= rhi_k[e >> 1])
                                              : key0 + 8 * (e >> 1) > i + w.off;
                    if (masked && hidden)
                        x = -CUDART_INF_F;
                    sa[nt * 4 + e] = ex2(x);
                }
                if constexpr (!kDrop)
                    asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(sP + (nt * 128 + tid) * 16),
                                 "f"(sa[nt * 4]), "f"(sa[nt * 4 + 1]), "f"(sa[nt * 4 + 2]), "f"(sa[nt * 4 + 3])
                                 : "memory");
            }
            if constexpr (kDrop) { // signed P^T to shared memory, then P^T f for dV
                drop_sign<BM>(p, sa, w.b, hk * w.group + t / w.ntq, m0, n0 + warp * 16);
#pragma unroll
                for (int nt = 0; nt < BM / 8; nt++)
                    asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(sP + (nt * 128 + tid) * 16),
                                 "f"(sa[nt * 4]), "f"(sa[nt * 4 + 1]), "f"(sa[nt * 4 + 2]), "f"(sa[nt * 4 + 3])
                                 : "memory");
#pragma unroll
                for (int i = 0; i < BM / 2; i++)
                    sa[i] = drop_kept(p, sa[i]);
            }
            asm volatile("bar.arrive 1, 256;\n" ::: "memory"); // P^T is in shared memory
        } else { // dS^T = P^T (dP^T - Delta), P^T from the P side's thread of the same place
            asm volatile("bar.sync 1, 256;\n" ::: "memory");
#pragma unroll
            for (int nt = 0; nt < BM / 8; nt++) {
                const float2 dl = *reinterpret_cast<const float2 *>(lr + BM + nt * 8 + t4 * 2);
                float4 pt;
                asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                             : "=f"(pt.x), "=f"(pt.y), "=f"(pt.z), "=f"(pt.w)
                             : "r"(sP + (nt * 128 + tid) * 16)
                             : "memory");
                if constexpr (kDrop) { // P (f dP - Delta), P signed (drop_sign)
                    sa[nt * 4] = fmaf(drop_kept(p, pt.x), sa[nt * 4], -fabsf(pt.x) * dl.x);
                    sa[nt * 4 + 1] = fmaf(drop_kept(p, pt.y), sa[nt * 4 + 1], -fabsf(pt.y) * dl.y);
                    sa[nt * 4 + 2] = fmaf(drop_kept(p, pt.z), sa[nt * 4 + 2], -fabsf(pt.z) * dl.x);
                    sa[nt * 4 + 3] = fmaf(drop_kept(p, pt.w), sa[nt * 4 + 3], -fabsf(pt.w) * dl.y);
                } else {
                    sa[nt * 4] = pt.x * (sa[nt * 4] - dl.x);
                    sa[nt * 4 + 1] = pt.y * (sa[nt * 4 + 1] - dl.y);
                    sa[nt * 4 + 2] = pt.z * (sa[nt * 4 + 2] - dl.x);
                    sa[nt * 4 + 3] = pt.w * (sa[nt * 4 + 3] - dl.y);
                }
            }
        }
        // P^T or dS^T as A fragments (k = queries)
        uint32_t fr[BM / 16][4];
#pragma unroll
        for (int kk = 0; kk < BM / 16; kk++)
#pragma unroll
            for (int q = 0; q < 4; q++)
                fr[kk][q] = pack2<T>(sa[kk * 8 + q * 2], sa[kk * 8 + q * 2 + 1]);
        if (cw == 1) {
            // dS (queries x keys, keys along the 128-byte rows, swizzled as TMA would) by stmatrix .trans:
            // fragment q of k-step kk is the 8 x 8 block (keys warp * 16 + 8 (q & 1) + g, queries kk * 16 +
            // 8 (q >> 1) + 2 t4 + e); lane 8 q + j names memory row j of block q (sdpa_bwd_wgmma's store_ds)
            const int q = lane >> 3, j = lane & 7, rb = warp * 2 + (q & 1);
            const uint32_t a0 = sDS + ((q >> 1) * 8 + j) * 128 + ((rb ^ j) << 4);
#pragma unroll
            for (int kk = 0; kk < BM / 16; kk++)
                asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(
                                 a0 + kk * 16 * 128),
                             "r"(fr[kk][0]), "r"(fr[kk][1]), "r"(fr[kk][2]), "r"(fr[kk][3])
                             : "memory");
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); // generic writes -> wgmma reads
        }
        // dV += P^T dO or dK += dS^T Q (B: 16 query rows per k-step, MN-major), N = 128 then DP - 128
        {
            const uint32_t ob = bA + s * C::QT_BYTES;
            wg_fence();
            keep(fr);
#pragma unroll
            for (int kk = 0; kk < BM / 16; kk++) {
                wg_rs(acc0, fr[kk], gdesc(ob + kk * 16 * 128, BM * 128, 1024), T());
                wg_rs(acc1, fr[kk], gdesc(ob + 2 * BM * 128 + kk * 16 * 128, BM * 128, 1024), T());
            }
            wg_commit();
        }
        asm volatile("bar.sync 2, 256;\n" ::: "memory"); // dS is in shared memory
        // dQ tile = dS K, 64-column blocks c = 2 j + cw (DP = 192: the dS side's second is block 2 again,
        // computed and dropped so that both sides run the same code), into the workspace in dq_index order
        const int64_t tile0 = (row_of(t) / BM) * NB;
#pragma unroll
        for (int j = 0; j < (NB + 1) / 2; j++) {
            const int c = min(2 * j + cw, NB - 1);
            float dq[32];
            wg_fence();
#pragma unroll
            for (int kk = 0; kk < BN / 16; kk++)
                wg_ss_tb(dq, gdesc(sDS + kk * 32, 16, 1024), gdesc(sK + c * BN * 128 + kk * 16 * 128, BN * 128, 1024),
                         kk > 0, T());
            wg_commit();
            wg_wait<0>(); // (the first also waits for dV / dK)
            keep(dq);
            keep(fr);
            keep(acc0);
            keep(acc1);
            if (2 * j + cw < NB) {
                float *dst = dqacc + (tile0 + c) * (64 * 64);
#pragma unroll
                for (int i = 0; i < 8; i++)
                    red_add4(dst + (i * 128 + tid) * 4, dq[i * 4], dq[i * 4 + 1], dq[i * 4 + 2], dq[i * 4 + 3]);
            }
        }
        mb_arrive(XB_EMPTY(s)); // this side is done with the stage
    }
    store_acc();
#undef XB_FULL
#undef XB_EMPTY
#else
    __trap(); // not the sm_90a pass: the engine never launches this (it refuses devices other than 9.0)
#endif
}

template <typename T, int DP>
cudaError_t launch_wide(const xk_sdpa &p, const int64_t (*st)[4], unsigned char *ws, const ws_layout &w,
                        cudaStream_t s)
{
    using C = wide_cfg<DP>;
    static bool opted = false;
    const void *const kern[3] = {(const void *)sdpa_bwd_wide<T, DP, false, false>,
                                 (const void *)sdpa_bwd_wide<T, DP, true, false>, (const void *)sdpa_bwd_wide<T, DP, true, true>};
    cudaError_t e = bw_begin<T>(kern, C::SMEM, &opted, p, ws, w, w.sem - w.acc, false, s); // the dQ sums (atomics: no semaphores)
    if (e != cudaSuccess)
        return e;
    float *lse2 = reinterpret_cast<float *>(ws + w.lse), *delta = reinterpret_cast<float *>(ws + w.delta);
    float *acc = reinterpret_cast<float *>(ws + w.acc);
    bw_launch l;
    if (!bw_launch_of(&l, p, st, C::BM, C::BN))
        return cudaErrorInvalidValue;
    if (timing_knobs()[1])
        ;
    else if (p.drop_threshold) // dropout: the band kernel's masks
        sdpa_bwd_wide<T, DP, true, true><<<l.grid, kThreads, C::SMEM, s>>>(l.tq, l.tdo, l.tk, l.tv, p, lse2, delta, acc,
                                                                          w.Sqp);
    else if (l.band)
        sdpa_bwd_wide<T, DP, true, false><<<l.grid, kThreads, C::SMEM, s>>>(l.tq, l.tdo, l.tk, l.tv, p, lse2, delta, acc,
                                                                    w.Sqp);
    else
        sdpa_bwd_wide<T, DP, false, false><<<l.grid, kThreads, C::SMEM, s>>>(l.tq, l.tdo, l.tk, l.tv, p, lse2, delta, acc,
                                                                     w.Sqp);
    return bw_dq_out<T, DP>(p, acc, w.Sqp, s);
}

} // namespace
