// sdpa_bwd_wgmma_sm90a.cu — the Hopper attention backward (host side: src/gpu/eng_sdpa_bwd_wgmma.c as
// sdpa_bwd_wgmma, semantics: src/ops/sdpa.h, building blocks: wgmma_sm90a.cuh).  Built for sm_90a only (the
// Makefile's *_sm90a.cu rule); other passes compile empty bodies and the engine refuses other devices.
//
//  sdpa_bwd_prep    8 lanes per query row (session 12; a warp per row before, XDNN_SDPA_BWD_PREP; rows padded to a
//                   multiple of BM): Delta = do . o and the logsumexp in the exp2 domain, +inf on padding rows and
//                   rows that see no key (so P = 0 there), into two f32 workspace vectors (the producer copies each
//                   tile's slice next to its Q and dO).
//  sdpa_bwd_wgmma<T, DP, kBand, kDrop>  flash-attention-3's loop order: one block per (128-key block, b, kv head), looping
//    over the query tiles (BM = 64 rows) of every query head of its GQA group that can see the keys; dK and dV
//    stay in registers for the whole loop (GQA sums included), dQ is accumulated in f32 in the workspace.
//    warpgroup 0, the producer (setmaxnreg 24): one thread loads K and V once, then streams Q and dO tiles
//      through an ST-stage ring with TMA (the forward's 4-d maps: bhsd and bshd alike, rows past S and columns
//      past D arrive as zeros) and the tile's 64 lse2 and Delta values with two 1-d bulk copies.
//    warpgroups 1 and 2, the consumers (setmaxnreg 240): 64 keys each.  Everything is computed transposed so
//      P and dS come out of the accumulators in the layout of a register A operand:
//        S^T = K Q^T, dP^T = V dO^T       wgmma m64n64, both operands from shared memory
//        P^T = exp2(S^T scale log2e - lse2), dS^T = P^T (dP^T - Delta)     in registers
//        dV += P^T dO, dK += dS^T Q       A from registers, B = dO / Q read MN-major (tnspB)
//        dS (16-bit) to shared memory (two buffers), then dQ_tile = dS K: at DP = 128 each consumer takes 64
//        head-dim columns over all 128 keys (a named barrier joins the two dS halves), at DP = 64 each its
//        own 64 keys over all columns.
//      The mask of sdpa.h (causal or window, either alignment, seq_len_q / seq_len_kv per batch): a block
//      visits only the query tiles whose rows see some of its keys, and masks per element only the tiles that
//      cross an edge of the band or a length; keys past lkv keep dK = dV = 0 (written).
//  v1: dQ tiles added with red.global.add.v2.f32 straight from the accumulators, every GEMM waited for in turn.
//  v2: the next tile's S^T (DP = 64: and dP^T) is issued as soon as this tile's dK/dV are in, so the tensor
//    cores run on while the dQ tile goes out; a consumer's 64 x 64 dQ tile is staged in shared memory and added
//    with one cp.reduce.async.bulk (16 KiB, contiguous: the workspace keeps dQ in the accumulators' order,
//    dq_index); XDNN_SDPA_BWD_DQ=red adds it with red.global.add.v4.f32 instead (bisecting, timing).
//    Either way the atomics make dQ's summation order vary run to run (last bits); sdpa_bwd_flash is the
//    deterministic engine.
//  v3 (2026-11-24, issue 14): ragged (THD) q and/or k, v on the band kernel: key blocks as slots of 128 keys per
//    sequence (sdpa_ragged.cuh), each sequence's rows from its first token, its workspace rows in blocks of 64 from
//    64 * slot_base; dK, dV, dq stored only for its own tokens.  H100, 8 packed sequences (8192 tokens, h16 d128
//    causal): 0.531 ms, against 2.787 on sdpa_bwd_flash (bench/RESULTS-sdpa.md).
//  v4 (2026-11-24, session 7, issue 10): ptxas had serialized every wgmma since v1 (C7518: a thread-0 branch with
//    wgmmas in flight; C7515 / C7514 behind it).  Now thread 0's bulk-group operations are predicated, the
//    deterministic spin votes warp-uniformly, a block with no tile exits on its own, and the loop is rotated:
//    the front half of tile t + 1 (S^T, P^T, dP^T) ends tile t's iteration drained, the last iteration
//    recomputing its own instead of branching.  dV, dK are issued before the dS stores, which are stmatrix
//    (XDNN_SDPA_BWD_SCHED).  H100 b4h16s4096d128: 3.33-3.48 -> 2.85 ms, causal 1.84-1.93 -> 1.60 ms.
//    Build with -Xptxas -v and check that no C751x "serialized" line comes back after a change.
//  v5 (2026-11-24, session 9, issue 10): causal grids walked longest key block first, in sections of heads
//    (lpt_heads, XDNN_SDPA_BWD_LPT; see lpt_heads_of); lse2 and Delta read from shared memory before the wgmma
//    waits, the tile's head and row block kept by the loop instead of divided out per tile, the causal/band mask
//    a block-uniform branch before the exp2 loop.  H100 (bench/RESULTS-sdpa.md): b4h16s4096d128 plain main kernel
//    -12% cycles (partition 2.67 ms, 1.04x cuDNN), causal 1.52 ms (0.92x), b2h32k8 causal (Llama) 1.60 (0.92x).
//  v6 (2026-11-24, session 9, issue 10): D != Dv, both sides zero-padded by TMA to DP of the wider (dV stored to
//    Dv); past 128 columns the launcher runs sdpa_bwd_wide (sdpa_bwd_wide_sm90a.cuh, included below).
//  v7 (2026-11-24, session 10, issue 10): the side passes folded, behind XDNN_SDPA_BWD_FOLD and off by default
//    (both modes measured slower, bench/RESULTS-sdpa.md): prep clears the f32 sums, and per 64 x 64 dQ tile an
//    arrival counter (dq_arrivals: how many key blocks visit it) lets the last block to add into a tile
//    convert it to dq (fold_mode 1 at the end of each block, 2 in the loop).
//  v8 (2026-11-24, session 11, issue 10): dropout (kDrop, on the band kernel; the wide kernel too): sdpa.h's mask
//    replayed in S^T's layout (drop_sign: BM / 16 Philox calls per thread and tile, their words transposed among a
//    t4 column's 8 lanes by drop_words_t8), a dropped P^T element carried as -P^T to the dS loop, which takes
//    P f = max(x, 0) / (1 - p) for dV and dS = P (f dP - Delta) = P f dP - |x| Delta.  H100 b4h16s4096d128 bf16
//    dropout 0.1: 16.97 ms on sdpa_bwd_flash -> 3.66 (cuDNN 3.48), causal 2.02 (2.01), Llama GQA causal 1.96 (2.05).
//  v9 (2026-11-25, session 12, issue 10): sdpa_bwd_prep at 8 lanes per row (the side passes 0.224 -> 0.177 ms at
//    b4h16s4096d128).  The wgmma descriptors of a GEMM's k-steps by one add to a base descriptor (kDescAdd; the
//    default since session 13, XDNN_SDPA_BWD_DESC=0 the A/B): ncu showed a consumer warp building descriptors with
//    ~250 of its 743 instructions per tile, and ptxas's 28 / 36 bytes of spills at DP = 128 (plain / band) go to 0
//    with it; H100 b4h16s4096d128 bf16 2.638 -> 2.525 ms (544 TFLOP/s; cuDNN 2.704 in the same call).
//    Session 15: the kDescAdd instance takes the warpgroup index from a lane-0 broadcast (sdpa_fwd_wgmma v12), so
//    its descriptors live in uniform registers (R2UR 126 -> 61 in its SASS): b4h16s4096d128 2.501-2.520 ms, causal
//    1.423 (session 13: 2.525 / 1.461; XDNN_SDPA_BWD_DESC=0 in the same call 2.658-2.660 / 1.506-1.523).
//    Tried and dropped (bench/RESULTS-sdpa.md): the dQ reduce-adds issued by producer warps (FA3's dQ writer) and
//    dV issued before the dS arithmetic: neither faster, together slower, with more spills.
//  sdpa_bwd_dq_out  dq = scale * workspace, in q's dtype (16-byte stores).
#include "sdpa_ragged.cuh"
#include "wgmma_sm90a.cuh"

#include "gpu/kern_sdpa_bwd_wgmma.h"

#include <stdlib.h>
#include <string.h>
#include <type_traits>

namespace {

template <int DP> struct bw_cfg {
    static constexpr int BN = 128;                  // keys per block (2 consumers x 64)
    static constexpr int BM = 64;                   // query rows per tile
    static constexpr int NB = DP / 64;              // 128-byte column blocks of a row
    static constexpr int ST = DP <= 64 ? 3 : 2;     // Q/dO ring stages
    static constexpr int KV_BYTES = NB * BN * 128;  // K (or V)
    static constexpr int QT_BYTES = NB * BM * 128;  // one stage of Q (or dO)
    static constexpr int DS_BYTES = BN * BM * 2;    // one dS buffer: 2 column blocks of 64 keys x BM rows
    static constexpr int DQ_BYTES = 64 * 64 * 4;    // one consumer's dQ tile staged for the bulk reduce-add
    static constexpr int LD_BYTES = 2 * BM * 4;     // lse2 and Delta of one stage's rows
    static constexpr int BAR_BYTES = 8 * (1 + 2 * ST);
    static constexpr int FLAG_BYTES = 16;           // the folded dq conversion: each consumer's "last arrival" flag
    static constexpr int SMEM =
        1024 + 2 * KV_BYTES + 2 * ST * QT_BYTES + 2 * DS_BYTES + 2 * DQ_BYTES + ST * LD_BYTES + BAR_BYTES + FLAG_BYTES;
};

constexpr int kThreads = 384;
// the consumers' schedule of a tile's dS (bits of sched, XDNN_SDPA_BWD_SCHED): kSchedEarlyDKV issues dV, dK
// before the dS stores so the stores run beside them; kSchedStm stores dS with stmatrix (4 per thread, not 32
// 16-bit stores)
constexpr int kSchedEarlyDKV = 1, kSchedStm = 2;
constexpr int kPadRows = 64; // the workspace's rows per (b, h): Sq rounded up to this (bw_cfg::BM)

#if XW_DEVICE
__device__ __forceinline__ void red_add4(float *addr, float a, float b, float c, float d)
{
    asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(addr), "f"(a), "f"(b), "f"(c), "f"(d)
                 : "memory");
}
// n bytes (a multiple of 16) from global src to shared dst, completing on mbarrier bar
__device__ __forceinline__ void bulk_load(uint32_t dst, const void *src, uint32_t n, uint32_t bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                     dst),
                 "l"(src), "r"(n), "r"(bar)
                 : "memory");
}
// Thread 0's bulk-group operations as predicated instructions, not branches (see the consumers' loop):
// wait until the reductions committed have read shared memory / completed; one n-byte reduce-add of shared
// src into global dst, committed as a group.
__device__ __forceinline__ void bulk_wait_read_if(bool on)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %0, 0;\n@p cp.async.bulk.wait_group.read 0;\n}\n" ::"r"((int)on)
                 : "memory");
}
__device__ __forceinline__ void bulk_wait_if(bool on)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %0, 0;\n@p cp.async.bulk.wait_group 0;\n}\n" ::"r"((int)on)
                 : "memory");
}
__device__ __forceinline__ void bulk_reduce_if(bool on, float *dst, uint32_t src, int n)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %0, 0;\n"
                 "@p cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%1], [%2], %3;\n"
                 "@p cp.async.bulk.commit_group;\n}\n" ::"r"((int)on),
                 "l"(dst), "r"(src), "r"(n)
                 : "memory");
}
// The folded dq conversion's arrival in the loop (XDNN_SDPA_BWD_FOLD=2; thread 0 of a consumer, predicated: see
// bulk_reduce_if): once all but the newest one of its bulk groups of reduce-adds are complete in global memory,
// one release-acquire add on the counter of the tile two back; its old value.
__device__ __forceinline__ int arrive_if(bool on, int *cnt)
{
    int old = -1;
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %1, 0;\n@p cp.async.bulk.wait_group 1;\n"
                 "@p fence.proxy.async.global;\n@p atom.add.acq_rel.gpu.global.s32 %0, [%2], 1;\n}\n"
                 : "+r"(old)
                 : "r"((int)on), "l"(cnt)
                 : "memory");
    return old;
}
__device__ __forceinline__ void st_shared_if(bool on, uint32_t addr, int v)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %0, 0;\n@p st.shared.s32 [%1], %2;\n}\n" ::"r"((int)on), "r"(addr),
                 "r"(v)
                 : "memory");
}
__device__ __forceinline__ void st_global_if(bool on, void *addr, uint32_t v)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %0, 0;\n@p st.global.b32 [%1], %2;\n}\n" ::"r"((int)on), "l"(addr),
                 "r"(v)
                 : "memory");
}
#endif

// ---------------------------------------------------------------- prep: Delta and lse2

// Workspace row r: dense, (b, h) = r / Sqp and row i = r % Sqp; ragged q, head h = r / Sqp and sequence b's row
// block slot_base(b) (blocks of 64) on: its row i = r % Sqp - 64 * slot_base(b), and *tok the packed token.
// False for a padding row (past Sq, or no sequence's: lse2 +inf, Delta 0, so P = dS = 0 there).
__device__ __forceinline__ bool ws_row(const xk_sdpa &p, int64_t r, int Sqp, int *b, int *h, int *tok)
{
    const int wr = (int)(r % Sqp);
    if (!p.off_q.p) {
        const int bh = (int)(r / Sqp);
        *b = bh / p.Hq, *h = bh % p.Hq, *tok = wr;
        return wr < p.Sq;
    }
    *h = (int)(r / Sqp);
    int m0;
    slot_seq(p.off_q, p.B, p.Sq, kPadRows, wr / kPadRows, b, &m0);
    int a, n;
    ragged_span(p.off_q, *b, p.Sq, &a, &n);
    const int i = m0 + wr % kPadRows;
    *tok = a + i;
    return m0 >= 0 && i < n;
}

// How many key blocks of BN keys add into the dQ rows [m BM, m BM + BM) of a batch with lq / lkv rows / keys
// and diagonal offset off, under the main kernel's visiting rule (its rlo / rhi below, non-deterministic: the
// left edge applied): a block at n0 < lkv visits the row tiles m with rlo < min((m + 1) BM, lq) and
// m BM < rhi; both bounds grow with n0, so the blocks that visit tile m are a run [k0, k1) of key blocks.
// The folded dQ conversion (dq_cnt) counts arrivals against it; 0: no block adds there (dq rows of zeros).
__device__ __forceinline__ int dq_arrivals(const xk_sdpa &p, int lq, int lkv, int off, int m, int BM, int BN)
{
    int64_t k0 = 0, k1 = (lkv + BN - 1) / BN;
    if ((int64_t)m * BM >= lq)
        return 0;
    if (p.left >= 0) { // rhi = min(lq, min(n0 + BN, lkv) + left - off) > m BM
        const int64_t x = (int64_t)m * BM - p.left + off;
        if (lkv <= x)
            return 0;
        k0 = x <= 0 ? 0 : x / BN; // n0 + BN > x
    }
    if (p.right >= 0) { // rlo = max(0, n0 - right - off) < min((m + 1) BM, lq)
        const int64_t y = min((int64_t)(m + 1) * BM, (int64_t)lq) + p.right + off;
        k1 = min(k1, y <= 0 ? (int64_t)0 : (y + BN - 1) / BN); // n0 < y
    }
    return (int)max((int64_t)0, k1 - k0);
}

// Folded side passes (XDNN_SDPA_BWD_FOLD, off by default): zero, when not null, clears zwords floats (a multiple
// of 4) there, the f32 dQ sums and the counters after them, a chunk per warp (no cudaMemset pass); dq_zero: the
// main kernel converts dQ itself (dq_cnt), so prep writes the dq rows no key block adds into (rows that see no
// key: seq_len_q, bottom-right causal with Sq > Skv) as zeros, which sdpa_bwd_dq_out would have written.
// lpr lanes per row (a power of two, 4..32; XDNN_SDPA_BWD_PREP): at 32 (the pass before session 12) half a warp
// idled at Dv = 128 and each warp made one 512-byte round of loads; 8 has each lane load 2 x 16 bytes of do
// and o per row at Dv = 128, four rows per warp (H100, b4h16s4096d128: the side passes 0.224 -> 0.177 ms).
template <typename T>
__global__ void __launch_bounds__(256) sdpa_bwd_prep(const xk_sdpa p, float *lse2, float *delta, int64_t nrows, int Sqp,
                                                     float *zero, int64_t zwords, int dq_zero, int lpr)
{
    const int64_t row = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> (__ffs(lpr) - 1);
    const int lane = threadIdx.x & (lpr - 1), step = lpr * 8;
    // the row's lanes (the shuffles below stay among them; nrows is a multiple of 64, so no warp is cut)
    const unsigned grp = (lpr == 32 ? 0xffffffffu : (1u << lpr) - 1u) << ((threadIdx.x & 31) & ~(lpr - 1));
    if (row >= nrows)
        return;
    if (zero) {
        const int64_t chunk = ((zwords + nrows - 1) / nrows + 3) & ~(int64_t)3, end = min(zwords, (row + 1) * chunk);
        for (int64_t k = row * chunk + lane * 4; k < end; k += 4 * lpr)
            *reinterpret_cast<float4 *>(zero + k) = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
    int b, h, i;
    float dl = 0.0f, l2 = CUDART_INF_F;
    if (ws_row(p, row, Sqp, &b, &h, &i)) { // i: the row of (b, h) in q's addressing (ragged: the token, st[0] 0)
        const T *dor = static_cast<const T *>(p.dout.p) + off4(p.dout, b, h, i, 0);
        const int64_t oo = off4(p.o, b, h, i, 0);
        float part = 0.0f;
#pragma unroll 2
        for (int d = lane * 8; d < p.Dv; d += step) { // Dv % 8 == 0, rows 16-byte aligned (the engine checks)
            const uint4 a = *reinterpret_cast<const uint4 *>(dor + d);
            const T *ae = reinterpret_cast<const T *>(&a);
            float oe[8];
            if (p.o.dtype == XK_F32) { // o kept in f32 (an intermediate of a training graph)
                const float4 *src = reinterpret_cast<const float4 *>(static_cast<const float *>(p.o.p) + oo + d);
                const float4 x = src[0], y = src[1];
                oe[0] = x.x, oe[1] = x.y, oe[2] = x.z, oe[3] = x.w, oe[4] = y.x, oe[5] = y.y, oe[6] = y.z, oe[7] = y.w;
            } else {
                const uint4 c = *reinterpret_cast<const uint4 *>(static_cast<const T *>(p.o.p) + oo + d);
                const T *ce = reinterpret_cast<const T *>(&c);
#pragma unroll
                for (int e = 0; e < 8; e++)
                    oe[e] = (float)ce[e];
            }
#pragma unroll
            for (int e = 0; e < 8; e++)
                part += (float)ae[e] * oe[e];
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
            if (o < lpr)
                part += __shfl_xor_sync(grp, part, o);
        dl = part; // identical in the row's lanes
        const float lse = ld_any(p.stats.p, p.stats.dtype, off4(p.stats, b, h, i, 0));
        l2 = lse == -CUDART_INF_F ? CUDART_INF_F : lse * kLog2e; // a row that saw no key has P = 0
        if (dq_zero) { // dense q only (the engine folds nothing else): row i of (b, h)
            const seq_rows sr = rows_of(p, b);
            if (dq_arrivals(p, sr.lq, sr.lkv, p.bottom_right ? sr.lkv - sr.lq : 0, i / kPadRows, kPadRows, bw_cfg<64>::BN) == 0) {
                T *dst = static_cast<T *>(const_cast<void *>(p.dq.p)) + off4(p.dq, b, h, i, 0);
                for (int d = lane * 8; d < p.D; d += step)
                    *reinterpret_cast<uint4 *>(dst + d) = make_uint4(0, 0, 0, 0);
            }
        }
    }
    if (lane == 0) {
        lse2[row] = l2;
        delta[row] = dl;
    }
}

// ---------------------------------------------------------------- dropout in S^T's layout

// The Philox words of S^T's layout: the 8 lanes g of a t4 column hold keys kbase + g of one query each, so
// among them the 8 calls q of two n-tiles (query q / 4 of the pair's, element q % 4: sdpa_bwd_mma's pattern)
// form an 8 x 8 matrix of 16-bit values, call q's row held by lane q, key g's column wanted by lane g.  Lane g
// makes call g (counter mine) and the matrix is transposed in three butterfly stages over lane bits 2, 1, 0 of
// g (words, then halves): 6 shuffles, 8 selects, 6 byte permutes, against drop_words_oct's 7 shuffles, 32
// selects and 8 extracts (sdpa_common.cuh; H100, b4h16s4096d128 dropout 0.1: 3.66 ms against 3.87 with
// drop_words_oct in the same call, causal 2.02 / 2.16, bench/RESULTS-sdpa.md session 11).  On return w[q / 2]
// holds lane g's value of call q in half q % 2.
__device__ __forceinline__ void drop_words_t8(uint64_t seed, uint64_t mine, uint32_t (&w)[4])
{
    const int g = (threadIdx.x >> 2) & 7;
    philox4(seed, kDropStream, mine, w); // key j of call g: word j / 2, half j % 2
    // g's bit 2 against the word's bit 1 (lanes 16 apart): keep the two words of my keys' half, send the others
    // and put the partner's in their place (word bit 1 = the call's bit 2 from here on)
    const bool b2 = (g & 4) != 0, b1 = (g & 2) != 0, b0 = (g & 1) != 0;
    uint32_t r0 = __shfl_xor_sync(0xffffffffu, b2 ? w[0] : w[2], 16), r1 = __shfl_xor_sync(0xffffffffu, b2 ? w[1] : w[3], 16);
    w[0] = b2 ? r0 : w[0], w[1] = b2 ? r1 : w[1], w[2] = b2 ? w[2] : r0, w[3] = b2 ? w[3] : r1;
    // g's bit 1 against the word's bit 0 (lanes 8 apart; word bit 0 = the call's bit 1 after)
    r0 = __shfl_xor_sync(0xffffffffu, b1 ? w[0] : w[1], 8), r1 = __shfl_xor_sync(0xffffffffu, b1 ? w[2] : w[3], 8);
    w[0] = b1 ? r0 : w[0], w[1] = b1 ? w[1] : r0, w[2] = b1 ? r1 : w[2], w[3] = b1 ? w[3] : r1;
    // g's bit 0 against the half (lanes 4 apart): the other halves of words (0, 1) and (2, 3) go in one word
    // each; the low half of a word ends as the even call's, the high half as the odd one's
    const uint32_t sel = b0 ? 0x5410u : 0x7632u, lo = b0 ? 0x3254u : 0x5410u, hi = b0 ? 0x3276u : 0x7610u;
    r0 = __shfl_xor_sync(0xffffffffu, __byte_perm(w[0], w[1], sel), 4);
    r1 = __shfl_xor_sync(0xffffffffu, __byte_perm(w[2], w[3], sel), 4);
    w[0] = __byte_perm(w[0], r0, lo), w[1] = __byte_perm(w[1], r0, hi);
    w[2] = __byte_perm(w[2], r1, lo), w[3] = __byte_perm(w[3], r1, hi);
}

// Dropout (sdpa.h's mask: the forward's decision, one Philox call per row and 8 keys) on P^T held as S^T
// accumulators sa (element e of n-tile nt: key kbase + warp's g + 8 (e >> 1), query m0 + 8 nt + 2 t4 + (e & 1);
// kbase, this warp's 16 keys, a multiple of 8), query head h of batch b.  A dropped element keeps its
// magnitude with the sign flipped (P >= 0): the mask travels in the sign bits, no register holds it from here
// to the dS loop (the consumers of sdpa_bwd_wgmma run at 230+ of their 240 registers).  BM / 16 Philox calls per
// thread and tile, shared by the 8 lanes of a t4 column (drop_words_t8).  keep iff u16 >= t compares
// (u16 << 16) >= (t << 16) (t <= 65535: the engine refuses more), so the high half is compared in place and the
// low one after one shift.
template <int BM>
__device__ __forceinline__ void drop_sign(const xk_sdpa &p, float (&sa)[BM / 2], int b, int h, int m0, int kbase)
{
    const int lane = threadIdx.x & 31, g = lane >> 2, t4 = lane & 3;
    const uint64_t groups = (uint64_t)((p.Skv + 7) >> 3); // a row's calls
    const uint64_t mine = drop_call(p, b, h, m0 + (g >> 2) * 8 + t4 * 2 + (g & 1)) + (uint32_t)(kbase >> 3) + ((g >> 1) & 1);
    const uint32_t T = (p.drop_threshold - 1u) << 16;
#pragma unroll
    for (int nt0 = 0; nt0 < BM / 8; nt0 += 2) { // call q: n-tile nt0 + q / 4, element q % 4
        uint32_t w[4];
        drop_words_t8(p.seed, mine + (uint64_t)nt0 * 8 * groups, w);
#pragma unroll
        for (int q = 0; q < 8; q++)
            if (((q & 1) ? w[q >> 1] : w[q >> 1] << 16) < T)
                sa[nt0 * 4 + q] = -sa[nt0 * 4 + q];
    }
}

// P f of a signed P (drop_sign): P / (1 - p) kept, 0 dropped; |x| is P either way.
__device__ __forceinline__ float drop_kept(const xk_sdpa &p, float x) { return fmaxf(x, 0.0f) * p.drop_scale; }

// ---------------------------------------------------------------- the main kernel

// kBand: a window or seq_len_q / seq_len_kv (each thread's keys carry their band of rows); without it only
// no mask or causal, tested per element as one compare on the diagonal tiles, as before the band existed:
// the band's two compares per element cost 5-7% on unmasked shapes (H100, b4h16s4096d128: 3.47 vs 3.32 ms).
// kDrop: dropout (launched with kBand only, one instance per dtype and DP): see drop_sign and the dS loop.
// kDescAdd: wgmma descriptors by one add from a base descriptor (DSC).  One instance, bf16 DP 128 without the
// band or dropout, the default there (XDNN_SDPA_BWD_DESC=0: the plain instance, the A/B).  ptxas -v, DP 128: the plain and band instances' spills 28 and 36 bytes -> 0 with it, the
// dropout instance's 104 -> 136 (so not there).
template <typename T, int DP, bool kBand, bool kDrop, bool kDescAdd = false>
__global__ void __launch_bounds__(kThreads, 1)
    sdpa_bwd_wgmma(const __grid_constant__ CUtensorMap tq, const __grid_constant__ CUtensorMap tdo,
                   const __grid_constant__ CUtensorMap tk, const __grid_constant__ CUtensorMap tv, const xk_sdpa p,
                   const float *__restrict__ lse2, const float *__restrict__ delta, float *dqacc, int *sems, int Sqp,
                   int dq_red, int sched, int lpt_heads, int *dq_cnt, int fold_mode)
{
#if XW_DEVICE
    using C = bw_cfg<DP>;
    constexpr int BN = C::BN, BM = C::BM, NB = C::NB, ST = C::ST;
    extern __shared__ unsigned char smem_raw[];
    const uint32_t sK = (smem_u32(smem_raw) + 1023u) & ~1023u; // swizzled tiles need 1024-byte alignment
    const uint32_t sV = sK + C::KV_BYTES, sQ = sV + C::KV_BYTES, sO = sQ + ST * C::QT_BYTES;
    const uint32_t sDS = sO + ST * C::QT_BYTES, sDQ = sDS + 2 * C::DS_BYTES, sLD = sDQ + 2 * C::DQ_BYTES;
    const uint32_t sBar = sLD + ST * C::LD_BYTES, sFlag = sBar + C::BAR_BYTES;
    const uint32_t fullKV = sBar;
    // generic pointers to the lse2 / Delta rows of the stages (read with plain loads)
    const float *ld_gen = reinterpret_cast<const float *>(smem_raw + (sLD - smem_u32(smem_raw)));
#define XB_FULL(s) (sBar + 8u * (1 + (s)))
#define XB_EMPTY(s) (sBar + 8u * (1 + ST + (s)))
    // kDescAdd: warp-uniform by a broadcast from lane 0 (ptxas cannot prove threadIdx.x / 128 is), so the shared
    // addresses derived from it and the descriptors built on them live in uniform registers (sdpa_fwd_wgmma v12)
    const int wg = kDescAdd ? __shfl_sync(0xffffffffu, threadIdx.x / 128, 0) : threadIdx.x / 128;
    // Ragged k, v (kBand only): blockIdx.x is a slot of 128 keys (slot_seq), blockIdx.y the kv head; a slot no
    // keys fall in exits.  Ragged q: the query rows of sequence b are tokens qrow + i, its workspace rows start
    // at 64 * slot_base(b).  qb / kb: the batch coordinate of the q, do / k, v maps (0 when packed).
    const bool rq = kBand && p.off_q.p, rkv = kBand && p.off_kv.p;
    int b, n0, hk;
    if (rkv) {
        slot_seq(p.off_kv, p.B, p.Skv, BN, blockIdx.x, &b, &n0);
        hk = blockIdx.y;
    } else if (lpt_heads > 0) {
        // longest first (causal: key block 0 sees the most rows), in sections of lpt_heads (b, kv head) pairs
        // so that the blocks running together share their heads' Q, dO and dQ sums in L2: the grid's linear
        // index walks the key blocks x of a section, and inside each x its heads.  x still grows with the
        // index inside a head, as the deterministic dQ order needs.
        const int nx = gridDim.x, nh = gridDim.y, L = blockIdx.y * nx + blockIdx.x;
        const int h0 = L / (lpt_heads * nx) * lpt_heads, nin = min(lpt_heads, nh - h0), l = L - h0 * nx;
        const int bh = h0 + l % nin;
        n0 = l / nin * BN, b = bh / p.Hk, hk = bh % p.Hk;
    } else {
        n0 = blockIdx.x * BN, b = blockIdx.y / p.Hk, hk = blockIdx.y % p.Hk;
    }
    const int group = p.Hq / p.Hk;
    // this batch's lengths (seq_len_q / seq_len_kv or the offsets, else Sq / Skv) and the band of sdpa.h: row
    // i sees key j iff i < lq, j < lkv and i + off - left <= j <= i + off + right (a side at -1 is open)
    const seq_rows sr = rows_of(p, b);
    if (rkv && (n0 < 0 || n0 >= sr.nkv))
        return; // a slot past the sequence's keys: nothing to compute, nothing to store
    const int lq = sr.lq, lkv = sr.lkv, qrow = rq ? sr.qrow : 0, krow = rkv ? sr.krow : 0;
    const int qb = rq ? 0 : b, kb = rkv ? 0 : b;
    const int64_t wq0 = rq ? (int64_t)kPadRows * slot_base(p.off_q, b, p.Sq, kPadRows) : 0;
    const int off = p.bottom_right ? lkv - lq : 0;
    // the query tiles that see keys [n0, min(n0 + BN, lkv)): rows [rlo, rhi), 64-bit (off + left may pass
    // INT32_MAX).  Deterministic dQ (sems) needs every block that adds into a dQ tile to be preceded by all
    // the blocks before it: a left bound would break that, so there the block walks from the band's first row
    // to the last row and the masks do the rest.
    const int64_t nhi = min(n0 + BN, lkv);
    int64_t rlo = 0, rhi = nhi > n0 ? lq : 0;
    if (p.right >= 0)
        rlo = max((int64_t)0, (int64_t)n0 - p.right - off);
    if (p.left >= 0 && !sems)
        rhi = min(rhi, nhi + p.left - off);
    const int mlo = (int)(rlo / BM * BM);
    const int ntq = rhi > rlo ? (int)((rhi - mlo + BM - 1) / BM) : 0, total = ntq * group;
    // tile t: query head hk * group + t / ntq, rows mlo + (t % ntq) * BM; its workspace row (b, h, m0)
    auto row_of = [&](int t) -> int64_t {
        return (int64_t)(qb * p.Hq + hk * group + t / ntq) * Sqp + wq0 + mlo + (t % ntq) * BM;
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

    if (wg == 0) { // ---- producer
        asm volatile("setmaxnreg.dec.sync.aligned.u32 24;\n");
        if (threadIdx.x == 0) {
            mb_expect(fullKV, 2 * C::KV_BYTES);
#pragma unroll
            for (int c = 0; c < NB; c++) {
                tma_load(sK + c * BN * 128, &tk, fullKV, c * 64, krow + n0, hk, kb);
                tma_load(sV + c * BN * 128, &tv, fullKV, c * 64, krow + n0, hk, kb);
            }
            for (int t = 0; t < total; t++) {
                const int s = t % ST, h = hk * group + t / ntq, m0 = mlo + (t % ntq) * BM;
                const int64_t r = row_of(t);
                mb_wait(XB_EMPTY(s), ((t / ST) & 1) ^ 1);
                mb_expect(XB_FULL(s), 2 * C::QT_BYTES + C::LD_BYTES);
#pragma unroll
                for (int c = 0; c < NB; c++) {
                    tma_load(sQ + s * C::QT_BYTES + c * BM * 128, &tq, XB_FULL(s), c * 64, qrow + m0, h, qb);
                    tma_load(sO + s * C::QT_BYTES + c * BM * 128, &tdo, XB_FULL(s), c * 64, qrow + m0, h, qb);
                }
                bulk_load(sLD + s * C::LD_BYTES, lse2 + r, BM * 4, XB_FULL(s));
                bulk_load(sLD + s * C::LD_BYTES + BM * 4, delta + r, BM * 4, XB_FULL(s));
            }
        }
    } else { // ---- consumers
        asm volatile("setmaxnreg.inc.sync.aligned.u32 240;\n");
        const int cw = wg - 1, tid = threadIdx.x - 128 * wg, warp = tid >> 5, lane = tid & 31;
        const int g = lane >> 2, t4 = lane & 3;
        const float scale2 = p.scale * kLog2e;
        const int key0 = n0 + cw * 64 + warp * 16 + g; // this thread's keys: key0, key0 + 8
        int rlo_k[2] = {0, 0}, rhi_k[2] = {0, 0};        // the rows that see them: [rlo_k, rhi_k]
        if constexpr (kBand) {
#pragma unroll
            for (int r = 0; r < 2; r++)
                band_rows(p, lq, lkv, off, key0 + 8 * r, &rlo_k[r], &rhi_k[r]);
        }
        const uint32_t kA = sK + cw * 64 * 128, vA = sV + cw * 64 * 128; // this warpgroup's 64 key rows
        // DSC(base, off, lbo): the wgmma descriptor of shared address base + off (off a compile-time constant once
        // the k-steps are unrolled; 1024-byte stride of 8-row groups).  kDescAdd adds off >> 4 to the low word of
        // base's descriptor, one add per wgmma instead of the mask-shift-or of gdesc on base + off (ncu, session
        // 12: ~250 of a consumer warp's 743 instructions per tile built descriptors, and the wgmma issue chains
        // stalled on them: 19% of the samples "wait"); base + off < 2^18, so the 14-bit field takes no carry.
        // (without kDescAdd it expands to the very expression of the kernel before, so that those instances compile
        // as they did: base, off unparenthesized on purpose)
#define DSC(base, off, lbo) (kDescAdd ? desc_add(gdesc(base, lbo, 1024), off) : gdesc(base + off, lbo, 1024))
        const uint32_t dqs = sDQ + cw * C::DQ_BYTES; // this warpgroup's dQ staging tile
        float dk[DP / 2], dv[DP / 2], sa[BM / 2], dpa[BM / 2];
#pragma unroll
        for (int i = 0; i < DP / 2; i++)
            dk[i] = dv[i] = 0.0f;
        // dK (times scale) and dV straight from the accumulators, 16-bit pairs
        auto store_dkv = [&]() {
            T *dkp = static_cast<T *>(const_cast<void *>(p.dk.p)), *dvp = static_cast<T *>(const_cast<void *>(p.dv.p));
#pragma unroll
            for (int r = 0; r < 2; r++) {
                const int j = key0 + 8 * r;
                if (j >= sr.nkv) // past Skv, or (ragged) the next sequence's key: never written
                    continue;
                T *kr = dkp + (int64_t)b * p.dk.st[0] + (int64_t)hk * p.dk.st[1] + (int64_t)(krow + j) * p.dk.st[2];
                T *vr = dvp + (int64_t)b * p.dv.st[0] + (int64_t)hk * p.dv.st[1] + (int64_t)(krow + j) * p.dv.st[2];
#pragma unroll
                for (int q = 0; q < DP / 8; q++) {
                    const int d = q * 8 + t4 * 2;
                    if (d < p.D)
                        *reinterpret_cast<uint32_t *>(kr + d) =
                            pack2<T>(dk[q * 4 + r * 2] * p.scale, dk[q * 4 + r * 2 + 1] * p.scale);
                    if (d < p.Dv) // D != Dv: both padded to DP (TMA fills the columns past each with zeros)
                        *reinterpret_cast<uint32_t *>(vr + d) = pack2<T>(dv[q * 4 + r * 2], dv[q * 4 + r * 2 + 1]);
                }
            }
        };
        // S^T = K Q^T (after the stage of tile t has landed) and dP^T = V dO^T: one commit group each.  The
        // next tile's S^T (DP = 64: and dP^T) is issued before this tile's dQ is stored, so the tensor cores
        // run on while the dQ tile goes out; at DP = 128 dP^T waits for the top of the loop (registers).
        constexpr bool kEarlyDP = DP <= 64;
        auto issue_s = [&](int t) {
            const int s = t % ST;
            const uint32_t qb = sQ + s * C::QT_BYTES;
            mb_wait(XB_FULL(s), (t / ST) & 1);
            wg_fence();
            keep(sa);
#pragma unroll
            for (int kk = 0; kk < DP / 16; kk++) {
                const uint32_t co = (kk >> 2), ko = (kk & 3) * 32u;
                wg_ss(sa, DSC(kA, co * BN * 128 + ko, 16), DSC(qb, co * BM * 128 + ko, 16), kk > 0, T());
            }
            wg_commit();
        };
        auto issue_dp = [&](int t) {
            const uint32_t ob = sO + (t % ST) * C::QT_BYTES;
            wg_fence();
            keep(dpa);
#pragma unroll
            for (int kk = 0; kk < DP / 16; kk++) {
                const uint32_t co = (kk >> 2), ko = (kk & 3) * 32u;
                wg_ss(dpa, DSC(vA, co * BN * 128 + ko, 16), DSC(ob, co * BM * 128 + ko, 16),
                      kk > 0, T());
            }
            wg_commit();
        };
        mb_wait(fullKV, 0); // (also: K, V have landed before any thread exits)
        if (total <= 0) { // no query row sees these keys: dK = dV = 0
            // an exit of its own, so that no path carries non-wgmma values into the accumulators past the
            // loop (ptxas would serialize every wgmma, C7515)
            store_dkv();
            return;
        }
        // The tile's front half: S^T of tile t is in after one wait, P^T = exp2(...) in sa while dP^T runs,
        // then dP^T too.  The loop below runs it for tile t + 1 at the end of tile t's iteration, so no wgmma is
        // in flight across the loop's back edge (ptxas serializes every wgmma of a loop that carries one, C7514).
        // it: the tile's place in its head (t % ntq, kept by the loop: no division per tile).  lse2 is read
        // into registers before the wait and Delta (dl, for the loop's dS) before the second, so the shared
        // memory latency runs under the GEMMs rather than in front of the first FFMA (ncu, session 9: 7% of
        // the stall samples on those FFMAs).
        float2 dl[BM / 8];
        auto front = [&](int t, int th, int it) {
            const int s = t % ST, m0 = mlo + it * BM;
            const float *lr = ld_gen + s * (C::LD_BYTES / 4); // lse2 of the stage's rows (Delta at lr + BM)
            float2 l[BM / 8];
#pragma unroll
            for (int nt = 0; nt < BM / 8; nt++)
                l[nt] = *reinterpret_cast<const float2 *>(lr + nt * 8 + t4 * 2);
            if (!kEarlyDP)
                issue_dp(t);
            wg_wait<1>(); // S^T of tile t is in
            keep(sa);
            // P^T: accumulator e of n-tile nt is key key0 + 8 * (e >> 1), query m0 + nt * 8 + t4 * 2 + (e & 1);
            // the per-element mask only on tiles that cross a length or an edge of the band
            // (without kBand: keys past Skv need no mask, K and V are zero there, so their dQ terms vanish and
            // their dK, dV rows are never stored; causal masks only the tiles that cross the diagonal)
            const bool masked = kBand ? n0 + BN > lkv || m0 + BM > lq ||
                                            (p.right >= 0 && n0 + BN - 1 > (int64_t)m0 + off + p.right) ||
                                            (p.left >= 0 && n0 < (int64_t)m0 + BM - 1 + off - p.left)
                                      : p.right == 0 && n0 + BN - 1 > m0 + off;
            // the mask as a block-uniform branch of its own (S^T = -inf gives x = -inf: lse2 is finite or +inf),
            // not a select per element in the exp2 loop: that cost every tile ~80 instructions in front of the
            // exp2s (ncu, session 9: 5% of the stall samples at b4h16s4096d128, where no tile is masked)
            if (masked) {
#pragma unroll
                for (int nt = 0; nt < BM / 8; nt++)
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        const int i = m0 + nt * 8 + t4 * 2 + (e & 1);
                        const bool hidden = kBand ? !(i >= rlo_k[e >> 1] && i <= rhi_k[e >> 1])
                                                  : key0 + 8 * (e >> 1) > i + off;
                        if (hidden)
                            sa[nt * 4 + e] = -CUDART_INF_F;
                    }
            }
#pragma unroll
            for (int nt = 0; nt < BM / 8; nt++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    sa[nt * 4 + e] = ex2(fmaf(sa[nt * 4 + e], scale2, -((e & 1) ? l[nt].y : l[nt].x)));
            if constexpr (kDrop) // while dP^T runs
                drop_sign<BM>(p, sa, b, hk * group + th, m0, n0 + cw * 64 + warp * 16);
#pragma unroll
            for (int nt = 0; nt < BM / 8; nt++)
                dl[nt] = *reinterpret_cast<const float2 *>(lr + BM + nt * 8 + t4 * 2);
            wg_wait<0>(); // dP^T too
            keep(dpa);
        };
        keep(dk); // the zeros are in before the first wgmma is issued
        keep(dv);
        issue_s(0);
        if (kEarlyDP)
            issue_dp(0);
        front(0, 0, 0);

        // tile t is query head hk * group + th, rows mlo + it * BM (th, it: t / ntq, t % ntq); its workspace
        // row row_of(t) = row0 + th * Sqp + it * BM
        const int64_t row0 = row_of(0);
        // The folded dq conversion (dq_cnt): each consumer counts its arrival on a tile's counter once its
        // reduce-add into the tile has completed; the arrival that brings the count to the tile's arrivals
        // (dq_arrivals) converts the tile's 64 x 64 sums to dq (XDNN_SDPA_BWD_FOLD; off by default: both modes
        // measured slower than the conversion pass, bench/RESULTS-sdpa.md session 10).  fold_mode 1: every
        // arrival at the end of the block, one wait for the bulk groups, the counters added by all 128 threads
        // (+11% at b4h16s4096d128, +35% at the Llama shape: the last block of a tile's run converts it after its
        // own loop, 64 tiles one after another at the plain shape).  fold_mode 2: in the loop, tile t - 2's at
        // tile t's dS barrier (wait_group 1; +47%, as much as one tile late: not the reduce-add's latency), the
        // flag crossing that barrier and the warpgroup converting while tile t + 1's S^T runs (every store
        // predicated, the branch a warp vote: a thread-dependent branch with wgmmas in flight serializes them,
        // C7518); the last two tiles' as in mode 1.
        const bool fold = dq_cnt != nullptr, fold_loop = fold && fold_mode == 2;
        const int arrivals = DP > 64 ? 1 : 2; // DP = 64: both consumers add into the one column tile
        auto tile_of = [&](int th_, int it_) -> int64_t {
            return ((row0 + (int64_t)th_ * Sqp + it_ * BM) / BM * NB + (DP > 64 ? cw : 0)) * (64 * 64);
        };
        // thread 0: count tile (th_, it_) in (on), then every thread of the warpgroup learns at the next named
        // barrier whether it was the last arrival (the flag at sFlag + 4 cw, read right after that barrier)
        auto arrive = [&](bool on, int th_, int it_) {
            const int64_t tl = tile_of(th_, it_);
            const int want = arrivals * dq_arrivals(p, lq, lkv, off, (mlo + it_ * BM) / BM, BM, BN);
            const int old = arrive_if(on && tid == 0, dq_cnt + tl / (64 * 64));
            st_shared_if(tid == 0, sFlag + 4u * cw, on && old + 1 == want);
        };
        auto read_flag = [&]() {
            int v;
            asm volatile("ld.shared.s32 %0, [%1];\n" : "=r"(v) : "r"(sFlag + 4u * cw) : "memory");
            return __any_sync(0xffffffffu, v != 0);
        };
        // dq = scale * the sums of tile (th_, it_): each thread its 8 float4s (the accumulator order, dq_index),
        // rows past the batch's (dense q: nq = Sq) and columns past D not stored
        auto convert = [&](int th_, int it_) {
            const int64_t tl = tile_of(th_, it_);
            const int h = hk * group + th_, r0 = mlo + it_ * BM + warp * 16 + g, c0 = DP > 64 ? cw * 64 : 0;
            T *dqp = static_cast<T *>(const_cast<void *>(p.dq.p));
            const int64_t o0 = off4(p.dq, qb, h, min(r0, sr.nq - 1), 0), o8 = off4(p.dq, qb, h, min(r0 + 8, sr.nq - 1), 0);
#pragma unroll
            for (int c = 0; c < 8; c++) {
                const float4 a = __ldcg(reinterpret_cast<const float4 *>(dqacc + tl + (c * 128 + tid) * 4));
                const int d = c0 + c * 8 + t4 * 2;
                st_global_if(d < p.D && r0 < sr.nq, dqp + o0 + d, pack2<T>(a.x * p.scale, a.y * p.scale));
                st_global_if(d < p.D && r0 + 8 < sr.nq, dqp + o8 + d, pack2<T>(a.z * p.scale, a.w * p.scale));
            }
        };
        int pth = 0, pit = 0, ppth = 0, ppit = 0; // the (th, it) of tiles t - 1 and t - 2
        for (int t = 0, th = 0, it = 0; t < total; t++) {
            const int s = t % ST;
            const uint32_t qb = sQ + s * C::QT_BYTES, ob = sO + s * C::QT_BYTES, dsb = sDS + (t & 1) * C::DS_BYTES;
            // this thread's query columns: m0 + nt * 8 + t4 * 2 + {0, 1}; Delta (dl) read by front
#pragma unroll
            for (int nt = 0; nt < BM / 8; nt++) {
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const float dn = (e & 1) ? dl[nt].y : dl[nt].x;
                    if constexpr (kDrop) { // dS^T = P^T (f dP^T - Delta); P^T f, dV's A operand, back into sa
                        const float pf_ = drop_kept(p, sa[nt * 4 + e]);
                        dpa[nt * 4 + e] = fmaf(pf_, dpa[nt * 4 + e], -fabsf(sa[nt * 4 + e]) * dn);
                        sa[nt * 4 + e] = pf_;
                    } else {
                        dpa[nt * 4 + e] = sa[nt * 4 + e] * (dpa[nt * 4 + e] - dn);
                    }
                }
            }
            // P^T and dS^T as A fragments (k = queries)
            uint32_t pf[BM / 16][4], df[BM / 16][4];
#pragma unroll
            for (int kk = 0; kk < BM / 16; kk++)
#pragma unroll
                for (int q = 0; q < 4; q++) {
                    pf[kk][q] = pack2<T>(sa[kk * 8 + q * 2], sa[kk * 8 + q * 2 + 1]);
                    df[kk][q] = pack2<T>(dpa[kk * 8 + q * 2], dpa[kk * 8 + q * 2 + 1]);
                }
            // dS (queries x keys, keys along the 128-byte rows, swizzled as TMA would) into this warpgroup's
            // column block of the buffer: element (query c, key r) at c * 128 + ((r / 8) ^ (c % 8)) * 16 + r % 8 * 2
            const uint32_t blk = dsb + cw * (BM * 128);
            auto store_ds = [&](const uint32_t (&v)[BM / 16][4]) {
                if (sched & kSchedStm) {
                    // stmatrix .trans: fragment q of k-step kk is the 8 x 8 block (keys warp * 16 + 8 (q & 1) + g,
                    // queries kk * 16 + 8 (q >> 1) + 2 t4 + e); lane 8 q + j names memory row j of block q,
                    // query c = kk * 16 + 8 (q >> 1) + j, 16 bytes at key block rb = 2 warp + (q & 1), c % 8 = j
                    const int q = lane >> 3, j = lane & 7, rb = warp * 2 + (q & 1);
                    const uint32_t a0 = blk + ((q >> 1) * 8 + j) * 128 + ((rb ^ j) << 4);
#pragma unroll
                    for (int kk = 0; kk < BM / 16; kk++)
                        asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(
                                         a0 + kk * 16 * 128),
                                     "r"(v[kk][0]), "r"(v[kk][1]), "r"(v[kk][2]), "r"(v[kk][3])
                                     : "memory");
                    return;
                }
#pragma unroll
                for (int kk = 0; kk < BM / 16; kk++)
#pragma unroll
                    for (int q = 0; q < 4; q++) {
                        const int r = warp * 16 + g + 8 * (q & 1), c = kk * 16 + (q >> 1) * 8 + t4 * 2;
#pragma unroll
                        for (int e = 0; e < 2; e++) {
                            const int cc = c + e;
                            const uint32_t a = blk + cc * 128 + ((((r >> 3) ^ (cc & 7)) << 4) | ((r & 7) << 1));
                            asm volatile("st.shared.u16 [%0], %1;\n" ::"r"(a), "h"((unsigned short)(v[kk][q] >> (16 * e)))
                                         : "memory");
                        }
                    }
            };
            auto issue_dkv = [&]() { // dV += P^T dO, dK += dS^T Q (B: 16 query rows per k-step)
                wg_fence();
                keep(pf);
                keep(df);
#pragma unroll
                for (int kk = 0; kk < BM / 16; kk++) {
                    wg_rs(dv, pf[kk], DSC(ob, kk * 16 * 128, BM * 128), T());
                    wg_rs(dk, df[kk], DSC(qb, kk * 16 * 128, BM * 128), T());
                }
                wg_commit();
            };
            if (sched & kSchedEarlyDKV) {
                // dV, dK go to the tensor cores first (their A operands are registers, not the dS buffer), the
                // dS stores run beside them; the stores re-pack dS from dpa, since an in-flight wgmma's A
                // registers may not be read
                issue_dkv();
                keep(dpa);
                uint32_t ds2[BM / 16][4];
#pragma unroll
                for (int kk = 0; kk < BM / 16; kk++)
#pragma unroll
                    for (int q = 0; q < 4; q++)
                        ds2[kk][q] = pack2<T>(dpa[kk * 8 + q * 2], dpa[kk * 8 + q * 2 + 1]);
                store_ds(ds2);
                asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); // generic writes -> wgmma reads
            } else {
                store_ds(df);
                asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); // generic writes -> wgmma reads
                issue_dkv();
            }
            // the previous tile's dQ reduction has read the staging tile (thread 0's bulk group; predicated, not
            // branched: a thread-dependent branch while a wgmma is in flight serializes them all, C7518)
            bulk_wait_read_if(!dq_red && tid == 0);
            if (fold_loop)
                arrive(t > 1, ppth, ppit);
            if (DP > 64)
                asm volatile("bar.sync 1, 256;\n" ::: "memory"); // both halves of dS are in
            else
                asm volatile("bar.sync %0, 128;\n" ::"r"(2 + cw) : "memory");
            const bool conv = fold_loop && read_flag(); // tile t - 2's sums are complete: convert them below
            float dq[32];
            wg_fence();
            if (DP > 64) { // dq[:, cw * 64 + 0..63] over the 128 keys
#pragma unroll
                for (int kk = 0; kk < BN / 16; kk++)
                    if constexpr (kDescAdd) // this consumer's 64 columns of K
                        wg_ss_tb(dq, DSC(dsb, (kk >> 2) * (BM * 128) + (kk & 3) * 32, 16),
                                 DSC(sK + cw * BN * 128, kk * 16 * 128, BN * 128), kk > 0, T());
                    else
                        wg_ss_tb(dq, gdesc(dsb + (kk >> 2) * (BM * 128) + (kk & 3) * 32, 16, 1024),
                                 gdesc(sK + kk * 16 * 128 + cw * BN * 128, BN * 128, 1024), kk > 0, T());
            } else { // dq[:, 0..63] over this warpgroup's 64 keys
#pragma unroll
                for (int kk = 0; kk < 4; kk++)
                    if constexpr (kDescAdd) // this consumer's 64 keys
                        wg_ss_tb(dq, DSC(dsb + cw * (BM * 128), kk * 32, 16), DSC(sK + cw * 64 * 128, kk * 16 * 128, BN * 128),
                                 kk > 0, T());
                    else
                        wg_ss_tb(dq, gdesc(dsb + cw * (BM * 128) + kk * 32, 16, 1024),
                                 gdesc(sK + (cw * 64 + kk * 16) * 128, BN * 128, 1024), kk > 0, T());
            }
            wg_commit();
            wg_wait<1>(); // dV, dK of this tile are in: the stage is free, the next tile's GEMMs may start
            keep(dk);
            keep(dv);
            keep(pf);
            keep(df);
            mb_arrive(XB_EMPTY(s));
            // the next tile's S^T (DP = 64: and dP^T) runs on while dQ goes out; after the last tile, the last
            // again (straight-line code: a branch here with wgmmas in flight serializes them all, C7515)
            const int tn = t + 1 < total ? t + 1 : t;
            issue_s(tn);
            if (kEarlyDP) {
                issue_dp(tn);
                wg_wait<2>(); // dQ of this tile is in
            } else {
                wg_wait<1>();
            }
            keep(dq);
            // dq into the workspace in the thread-major order of dq_index (below): float4 c of thread tid
            const int64_t tile = tile_of(th, it);
            if (dq_red) {
#pragma unroll
                for (int c = 0; c < 8; c++)
                    red_add4(dqacc + tile + (c * 128 + tid) * 4, dq[c * 4], dq[c * 4 + 1], dq[c * 4 + 2],
                             dq[c * 4 + 3]);
            } else { // staged in shared memory, then one bulk reduce-add of 16 KiB
#pragma unroll
                for (int c = 0; c < 8; c++)
                    asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(dqs + (c * 128 + tid) * 16),
                                 "f"(dq[c * 4]), "f"(dq[c * 4 + 1]), "f"(dq[c * 4 + 2]), "f"(dq[c * 4 + 3])
                                 : "memory");
                asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
                asm volatile("bar.sync %0, 128;\n" ::"r"(4 + cw) : "memory");
                // deterministic (sems): the key blocks add into a dQ tile in their order, DP = 64 consumer 0
                // before 1; every block that sees a tile's rows also sees those of the blocks before it, and
                // blocks are dispatched in index order (lpt_heads keeps a head's key blocks in it), so the wait
                // always ends.  Every thread spins on a
                // warp-uniform vote (a thread-dependent branch would serialize the wgmmas in flight, C7518).
                if (sems) {
                    int *sem = sems + tile / (64 * 64);
                    const int kblk = n0 / BN; // the key block's place in its sequence (ragged: not blockIdx.x)
                    const int turn = DP > 64 ? kblk : 2 * kblk + cw;
                    int v;
                    do
                        asm volatile("ld.acquire.gpu.global.s32 %0, [%1];\n" : "=r"(v) : "l"(sem) : "memory");
                    while (__any_sync(0xffffffffu, v != turn));
                    asm volatile("fence.proxy.async.global;\n" ::: "memory");
                    bulk_reduce_if(tid == 0, dqacc + tile, dqs, C::DQ_BYTES);
                    // the sums are in global memory before the next block's turn
                    bulk_wait_if(tid == 0);
                    asm volatile("{\n.reg .pred p;\nsetp.eq.b32 p, %0, 0;\n@p fence.proxy.async.global;\n"
                                 "@p st.release.gpu.global.s32 [%1], %2;\n}\n" ::"r"(tid),
                                 "l"(sem), "r"(turn + 1)
                                 : "memory");
                } else {
                    bulk_reduce_if(tid == 0, dqacc + tile, dqs, C::DQ_BYTES);
                }
            }
            if (conv) // tile t - 2, while tile t + 1's S^T runs
                convert(ppth, ppit);
            ppth = pth, ppit = pit, pth = th, pit = it;
            const bool last = t + 1 >= total, wrap = it + 1 == ntq; // tn's place (tn = t after the last)
            th = last || !wrap ? th : th + 1;
            it = last ? it : wrap ? 0 : it + 1;
            front(tn, th, it);
        }
        bulk_wait_if(!dq_red && tid == 0); // shared memory must outlive the last reduction's reads
        if (fold) { // the arrivals not yet counted (no wgmma in flight here; the bulk groups waited for above)
            // thread 0's reduce-adds, complete, ordered before the counters' adds of every thread (the barrier)
            asm volatile("{\n.reg .pred p;\nsetp.eq.b32 p, %0, 0;\n@p fence.proxy.async.global;\n"
                         "@p fence.acq_rel.gpu;\n}\n" ::"r"(tid)
                         : "memory");
            int *list = reinterpret_cast<int *>(smem_raw + (dqs - smem_u32(smem_raw))); // the free dQ staging tile
            int *nlist = reinterpret_cast<int *>(smem_raw + (sFlag + 4u * cw - smem_u32(smem_raw)));
            constexpr int kList = C::DQ_BYTES / 4;
            for (int base = fold_loop ? max(total - 2, 0) : 0; base < total; base += kList) {
                if (tid == 0)
                    *nlist = 0;
                asm volatile("bar.sync %0, 128;\n" ::"r"(4 + cw) : "memory");
                asm volatile("fence.acq_rel.gpu;\n" ::: "memory"); // with the atomics below: a release pattern
                for (int u = base + tid; u < min(total, base + kList); u += 128) {
                    const int uth = u / ntq, uit = u - uth * ntq;
                    const int want = arrivals * dq_arrivals(p, lq, lkv, off, (mlo + uit * BM) / BM, BM, BN);
                    if (atomicAdd(dq_cnt + tile_of(uth, uit) / (64 * 64), 1) + 1 == want)
                        list[atomicAdd(nlist, 1)] = u;
                }
                asm volatile("fence.acq_rel.gpu;\n" ::: "memory"); // the last arrivals' sums seen by every thread
                asm volatile("bar.sync %0, 128;\n" ::"r"(4 + cw) : "memory");
                const int n = *nlist;
                for (int i = 0; i < n; i++) {
                    const int u = list[i], uth = u / ntq;
                    convert(uth, u - uth * ntq);
                }
                asm volatile("bar.sync %0, 128;\n" ::"r"(4 + cw) : "memory"); // the list read before it is reused
            }
        }

        store_dkv();
    }
#undef DSC
#undef XB_FULL
#undef XB_EMPTY
#else
    __trap(); // not the sm_90a pass: the engine never launches this (it refuses devices other than 9.0)
#endif
}

// ---------------------------------------------------------------- dq = scale * workspace

// The workspace keeps dQ in the order the consumers hold it, so that a thread's 32 accumulators are 8 float4s
// and a consumer's 64 x 64 tile is one contiguous 16 KiB: tile (b, h, 64-row block, 64-column half), inside it
// float4 c (8 columns) of thread tid = warp * 32 + g * 4 + t4 at (c * 128 + tid) * 4, then the rows g, g + 8
// as pairs of columns.  Index of element (row i, column d) of (b, h) = bh:
template <int DP> __device__ __forceinline__ int64_t dq_index(int64_t bh, int Sqp, int i, int d)
{
    const int r = i & 63, dl = d & 63, tid = (r >> 4) * 32 + (r & 7) * 4 + ((dl & 7) >> 1);
    const int64_t tile = ((bh * (Sqp / 64) + (i >> 6)) * (DP / 64) + (d >> 6)) * (64 * 64);
    return tile + ((dl >> 3) * 128 + tid) * 4 + ((r >> 3) & 1) * 2 + (dl & 1);
}

template <typename T, int DP>
__global__ void __launch_bounds__(256) sdpa_bwd_dq_out(const xk_sdpa p, const float *dqacc, int Sqp)
{
    const int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, per = p.D / 8;
    const int64_t nb = p.off_q.p ? 1 : p.B; // ragged q: one batch of T tokens
    if (idx >= nb * p.Hq * p.Sq * per)
        return;
    const int d = (int)(idx % per) * 8;
    const int64_t r = idx / per;
    const int i = (int)(r % p.Sq), bh = (int)(r / p.Sq), b = bh / p.Hq, h = bh % p.Hq;
    T *dst = static_cast<T *>(const_cast<void *>(p.dq.p)) + off4(p.dq, b, h, i, d);
    int64_t wrow = i; // the row's place in the workspace of (b, h): ragged, its sequence's blocks from slot_base
    if (p.off_q.p) {
        int sb;
        const int m = token_row(p.off_q, p.B, p.Sq, i, &sb);
        if (m < 0) { // a token no sequence holds (offsets clamped by the engine): dq = 0
            *reinterpret_cast<uint4 *>(dst) = make_uint4(0, 0, 0, 0);
            return;
        }
        wrow = (int64_t)kPadRows * slot_base(p.off_q, sb, p.Sq, kPadRows) + m;
    }
    const float *src = dqacc + dq_index<DP>(bh, Sqp, (int)wrow, d); // columns d + 2 t4 + {0, 1} at src + 4 t4
    uint32_t o[4];
#pragma unroll
    for (int t4 = 0; t4 < 4; t4++) {
        const float2 a = *reinterpret_cast<const float2 *>(src + 4 * t4);
        o[t4] = mma_t<T>::pack(a.x * p.scale, a.y * p.scale);
    }
    *reinterpret_cast<uint4 *>(dst) = make_uint4(o[0], o[1], o[2], o[3]);
}

// ---------------------------------------------------------------- host

struct ws_layout {
    int Sqp, DP;
    size_t lse, delta, acc, sem, total; // byte offsets from a 256-aligned base
};
// rows of (b, h) (ragged q: of h, sequence b's from its slot_base, Sq = T tokens in T / 64 + B blocks of 64)
ws_layout layout_of(int B, int Hq, int Sq, int D, bool ragged_q)
{
    ws_layout w;
    w.Sqp = ragged_q ? (Sq / kPadRows + B) * kPadRows : (Sq + kPadRows - 1) / kPadRows * kPadRows;
    w.DP = D <= 64 ? 64 : D <= 128 ? 128 : D <= 192 ? 192 : 256; // D: max(D, Dv); past 128 sdpa_bwd_wide's
    const size_t rows = (size_t)(ragged_q ? 1 : B) * (size_t)Hq * (size_t)w.Sqp;
    auto up = [](size_t x) { return (x + 255) & ~(size_t)255; };
    w.lse = 0;
    w.delta = up(rows * 4);
    w.acc = w.delta + up(rows * 4);
    w.sem = w.acc + up(rows * (size_t)w.DP * 4);                    // one int per 64 x 64 dQ tile
    w.total = w.sem + up(rows / 64 * (size_t)(w.DP / 64) * 4);
    return w;
}

// XDNN_SDPA_BWD_DQ=red adds dQ tiles with red.global.add.v4.f32 from registers instead of staging them in
// shared memory for one cp.reduce.async.bulk per tile (for bisecting and timing; read once).
int dq_red_knob()
{
    static int k = -1;
    if (k < 0) {
        const char *e = getenv("XDNN_SDPA_BWD_DQ");
        k = e && strcmp(e, "red") == 0;
    }
    return k;
}

// XDNN_SDPA_BWD_SCHED=N sets the consumers' dS schedule bits (default kSchedEarlyDKV | kSchedStm, 0 the
// schedule before 2026-11-24 session 7); XDNN_SDPA_BWD_MAIN=0
// skips the main kernel, to time the prep, memset and dq passes alone (dq, dK, dV then come out wrong).  Timing
// knobs, read once: knobs[0] the schedule, knobs[1] skip.
static const int *timing_knobs()
{
    static int k[2] = {-1, -1};
    if (k[0] < 0) {
        const char *e = getenv("XDNN_SDPA_BWD_SCHED"), *m = getenv("XDNN_SDPA_BWD_MAIN");
        k[1] = m && strcmp(m, "0") == 0;
        k[0] = e && e[0] ? atoi(e) & 3 : kSchedEarlyDKV | kSchedStm;
    }
    return k;
}

// XDNN_SDPA_BWD_BAND=1 runs the band kernel (kBand) on shapes without a window or seq lens too (timing the
// cost of the band test against the plain kernel in one process; read once).
static bool band_knob()
{
    static int k = -1;
    if (k < 0) {
        const char *e = getenv("XDNN_SDPA_BWD_BAND");
        k = e && strcmp(e, "1") == 0;
    }
    return k;
}

// The causal block order (kernel argument lpt_heads): a causal key block x sees S - 128 x rows, so in the
// grid's order (x fastest) the longest blocks of the last heads start in the last wave and run alone: b2h32k8
// s4096 causal (512 blocks of 4 query heads each on 132 SMs) models at 1.28x its balanced time, b4h16 at 1.07x.
// Longest first (x-major) in sections of at least a wave of blocks (heads: a power of two, ceil(SMs / nx) up)
// models at 1.00-1.02x.  Not for windows with a left edge (even work; the grid's order shares Q tiles
// between neighbouring key blocks) or ragged keys (slots).  XDNN_SDPA_BWD_LPT=N sets the section's heads, 0
// the grid's order (A/B; read once).
static int lpt_heads_of(const xk_sdpa &p, int nx, int nh)
{
    static int knob = -2, sms = 0;
    if (knob == -2) {
        const char *e = getenv("XDNN_SDPA_BWD_LPT");
        knob = e && e[0] ? atoi(e) : -1;
        int dev = 0;
        if (cudaGetDevice(&dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
            sms = 132;
    }
    if (p.off_kv.p || p.right < 0 || p.left >= 0 || knob == 0)
        return 0;
    int h = 1;
    while (h < nh && h * nx < sms)
        h *= 2;
    return knob > 0 ? knob : h;
}

// XDNN_SDPA_BWD_DETERMINISTIC=1 takes the ordered dQ sums without the plan asking (timing, testing).
int det_knob()
{
    static int k = -1;
    if (k < 0) {
        const char *e = getenv("XDNN_SDPA_BWD_DETERMINISTIC");
        k = e && e[0] == '1';
    }
    return k;
}

// What both backward kernels (sdpa_bwd_wgmma, sdpa_bwd_wide) are launched with: the four TMA maps (a packed
// side is one batch of T rows; st: the engine's [0, head, token, 1] strides), the grid of key blocks of BN per
// kv head (ragged k, v: T / BN + B key-block slots per kv head, slot_seq; the empty ones exit) and whether the
// band kernel runs (ragged too: its per-batch row base and the lengths as mask bounds).
struct bw_launch {
    CUtensorMap tq, tdo, tk, tv;
    dim3 grid;
    bool band;
};

static bool bw_launch_of(bw_launch *l, const xk_sdpa &p, const int64_t (*st)[4], int BM, int BN)
{
    const bool bf = p.q.dtype == XK_BF16;
    const int64_t bq = p.off_q.p ? 1 : p.B, bkv = p.off_kv.p ? 1 : p.B;
    const int64_t qd[4] = {bq, p.Hq, p.Sq, p.D}, kd[4] = {bkv, p.Hk, p.Skv, p.D};
    const int64_t od[4] = {bq, p.Hq, p.Sq, p.Dv}, vd[4] = {bkv, p.Hk, p.Skv, p.Dv};
    if (!make_map(&l->tq, p.q.p, bf, qd, st[0], BM) || !make_map(&l->tk, p.k.p, bf, kd, st[1], BN) ||
        !make_map(&l->tv, p.v.p, bf, vd, st[2], BN) || !make_map(&l->tdo, p.dout.p, bf, od, st[3], BM))
        return false;
    l->grid = dim3(p.off_kv.p ? (unsigned)(p.Skv / BN + p.B) : (unsigned)((p.Skv + BN - 1) / BN),
                   (unsigned)(p.off_kv.p ? p.Hk : p.B * p.Hk));
    l->band = p.left >= 0 || p.right > 0 || p.len_q.p || p.len_kv.p || p.off_q.p || p.off_kv.p || band_knob();
    return true;
}

// dq = scale * the f32 sums, in q's dtype: the last pass of both launchers
template <typename T, int DP> cudaError_t bw_dq_out(const xk_sdpa &p, const float *acc, int Sqp, cudaStream_t s)
{
    const int64_t items = (int64_t)(p.off_q.p ? 1 : p.B) * p.Hq * p.Sq * (p.D / 8);
    if (items > 0)
        sdpa_bwd_dq_out<T, DP><<<(unsigned)((items + 255) / 256), 256, 0, s>>>(p, acc, Sqp);
    return cudaGetLastError();
}

// XDNN_SDPA_BWD_FOLD=1 folds the side passes into the prep pass (the f32 sums cleared there, no cudaMemset) and
// the main kernel (the dq conversion, counted at the end of each block: the kernel's fold_mode 1), 2 likewise
// with the arrivals counted in the loop (fold_mode 2); unset or 0, a memset and sdpa_bwd_dq_out as before.  Off
// by default: both folds lost on the H100 (session 10, bench/RESULTS-sdpa.md: b4h16s4096d128 2.70 ms unfolded,
// 2.99 mode 1, 3.97 mode 2; Llama causal 1.61, 2.17, 2.95).  A/B, read once.
static int fold_knob()
{
    static int k = -1;
    if (k < 0) {
        const char *e = getenv("XDNN_SDPA_BWD_FOLD");
        k = e && e[0] ? atoi(e) : 0;
        k = k < 0 || k > 2 ? 0 : k;
    }
    return k;
}

// XDNN_SDPA_BWD_PREP=N: sdpa_bwd_prep's lanes per row (4, 8, 16 or 32; default 8, 32 the pass before session 12).
// A/B timing, read once.
static int prep_lanes_knob()
{
    static int k = -1;
    if (k < 0) {
        const char *e = getenv("XDNN_SDPA_BWD_PREP");
        const int v = e && e[0] ? atoi(e) : 8;
        k = v == 4 || v == 16 || v == 32 ? v : 8;
    }
    return k;
}

// whether environment variable name is set to v
static bool env_is(const char *name, const char *v)
{
    const char *e = getenv(name);
    return e && strcmp(e, v) == 0;
}

// bf16 at DP 128 without the band or dropout runs the kDescAdd instance (descriptors by one add per wgmma) unless
// XDNN_SDPA_BWD_DESC=0 (the A/B).  Read once.
static bool desc_knob()
{
    static const bool k = !env_is("XDNN_SDPA_BWD_DESC", "0");
    return k;
}

// Both launchers' start: the plain, band and dropout instantiations opted in to smem bytes of shared memory
// (once per launcher: *opted), the f32 sums cleared (clear bytes from w.acc: the dQ sums, and the semaphores or
// arrival counters after them; folded: by sdpa_bwd_prep, else a cudaMemset), then Delta and lse2 by
// sdpa_bwd_prep (dq_zero: and dq's rows that no key block adds into, see sdpa_bwd_prep).
template <typename T, size_t N>
static cudaError_t bw_begin(const void *const (&kern)[N], int smem, bool *opted, const xk_sdpa &p,
                            unsigned char *ws, const ws_layout &w, size_t clear, bool dq_zero, cudaStream_t s)
{
    if (!*opted) {
        for (const void *k : kern) {
            const cudaError_t e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
            if (e != cudaSuccess)
                return e;
        }
        *opted = true;
    }
    const bool fold = fold_knob() != 0;
    if (!fold) {
        cudaError_t e = cudaMemsetAsync(ws + w.acc, 0, clear, s);
        if (e != cudaSuccess)
            return e;
    }
    float *lse2 = reinterpret_cast<float *>(ws + w.lse), *delta = reinterpret_cast<float *>(ws + w.delta);
    const int64_t rows = (int64_t)(p.off_q.p ? 1 : p.B) * p.Hq * w.Sqp;
    const int lpr = prep_lanes_knob();
    sdpa_bwd_prep<T><<<(unsigned)((rows * lpr + 255) / 256), 256, 0, s>>>(
        p, lse2, delta, rows, w.Sqp, fold ? reinterpret_cast<float *>(ws + w.acc) : nullptr,
        (int64_t)(clear / 4), dq_zero, lpr);
    return cudaSuccess;
}

template <typename T, int DP>
cudaError_t launch_bw(const xk_sdpa &p, const int64_t (*st)[4], unsigned char *ws, const ws_layout &w, bool det,
                      cudaStream_t s)
{
    using C = bw_cfg<DP>;
    static bool opted = false;
    const int red = det ? 0 : dq_red_knob();
    // the dq conversion folded into the main kernel (per-tile arrival counters in the semaphores' place): not
    // for the ordered sums (their own path), red.global adds (no bulk group to wait for) or ragged q (tokens of
    // no sequence, rows by slot)
    const bool conv = fold_knob() != 0 && !det && !red && !p.off_q.p;
    // the kDescAdd instance (unless XDNN_SDPA_BWD_DESC=0): bf16 DP 128 without the band only
    constexpr bool kAB = DP == 128 && std::is_same<T, __nv_bfloat16>::value;
    const void *const kern[4] = {(const void *)sdpa_bwd_wgmma<T, DP, false, false>,
                                 (const void *)sdpa_bwd_wgmma<T, DP, true, false>,
                                 (const void *)sdpa_bwd_wgmma<T, DP, true, true>,
                                 (const void *)sdpa_bwd_wgmma<T, DP, false, false, kAB>};
    cudaError_t e = bw_begin<T>(kern, C::SMEM, &opted, p, ws, w, (det || conv ? w.total : w.sem) - w.acc, conv, s);
    if (e != cudaSuccess)
        return e;
    float *lse2 = reinterpret_cast<float *>(ws + w.lse), *delta = reinterpret_cast<float *>(ws + w.delta);
    float *acc = reinterpret_cast<float *>(ws + w.acc);
    int *sems = det ? reinterpret_cast<int *>(ws + w.sem) : nullptr, *cnt = conv ? reinterpret_cast<int *>(ws + w.sem) : nullptr;
    bw_launch l;
    if (!bw_launch_of(&l, p, st, C::BM, C::BN))
        return cudaErrorInvalidValue;
    const int lpt = lpt_heads_of(p, (int)l.grid.x, (int)l.grid.y);
    bool added = false;
    if constexpr (kAB)
        if (!timing_knobs()[1] && !p.drop_threshold && !l.band && desc_knob()) {
            sdpa_bwd_wgmma<T, DP, false, false, true><<<l.grid, kThreads, C::SMEM, s>>>(
                l.tq, l.tdo, l.tk, l.tv, p, lse2, delta, acc, sems, w.Sqp, red, timing_knobs()[0], lpt, cnt, fold_knob());
            added = true;
        }
    if (timing_knobs()[1] || added)
        ;
    else if (p.drop_threshold) // dropout: the band kernel's masks (one instance more per dtype and DP, not two)
        sdpa_bwd_wgmma<T, DP, true, true><<<l.grid, kThreads, C::SMEM, s>>>(l.tq, l.tdo, l.tk, l.tv, p, lse2, delta, acc,
                                                                           sems, w.Sqp, red, timing_knobs()[0], lpt, cnt, fold_knob());
    else if (l.band)
        sdpa_bwd_wgmma<T, DP, true, false><<<l.grid, kThreads, C::SMEM, s>>>(l.tq, l.tdo, l.tk, l.tv, p, lse2, delta, acc,
                                                                     sems, w.Sqp, red, timing_knobs()[0], lpt, cnt, fold_knob());
    else
        sdpa_bwd_wgmma<T, DP, false, false><<<l.grid, kThreads, C::SMEM, s>>>(l.tq, l.tdo, l.tk, l.tv, p, lse2, delta, acc,
                                                                      sems, w.Sqp, red, timing_knobs()[0], lpt, cnt, fold_knob());
    return conv ? cudaGetLastError() : bw_dq_out<T, DP>(p, acc, w.Sqp, s);
}

} // namespace

#include "sdpa_bwd_wide_sm90a.cuh"

extern "C" int xk_sdpa_bwd_wgmma_built(void)
{
#ifdef XK_HAVE_SM90A
    return 1;
#else
    return 0;
#endif
}

extern "C" int xk_sdpa_bwd_wgmma_smem(int D)
{
    return D <= 64 ? bw_cfg<64>::SMEM : D <= 128 ? bw_cfg<128>::SMEM : D <= 192 ? wide_cfg<192>::SMEM
                                                                   : D <= 256 ? wide_cfg<256>::SMEM : 1 << 30;
}

extern "C" size_t xk_sdpa_bwd_wgmma_ws(int B, int Hq, int Sq, int D, int ragged_q)
{
    return layout_of(B, Hq, Sq, D, ragged_q != 0).total + 256;
}

extern "C" int xk_sdpa_bwd_wgmma(const xk_sdpa *p, const int64_t (*st)[4], void *ws, int deterministic, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if ((int64_t)p->B * p->Hq == 0)
        return 0;
    if (p->D < 8 || p->D > 256 || p->Dv < 8 || p->Dv > 256 || p->D % 8 != 0 || p->Dv % 8 != 0 ||
        !(p->scale > 0.0f) || p->Sq < 1 || p->Skv < 1 || p->drop_threshold > 65536u || (deterministic && (p->D > 128 || p->Dv > 128)))
        return (int)cudaErrorInvalidValue;
    if (p->drop_threshold && (p->off_q.p || p->off_kv.p)) // the mask is keyed by dense rows: not the ragged slots
        return (int)cudaErrorInvalidValue;
    const void *rows16[] = {p->o.p, p->dout.p, p->dq.p, p->dk.p, p->dv.p}; // 16-byte row loads and stores
    for (int i = 0; i < 5; i++)
        if (reinterpret_cast<uintptr_t>(rows16[i]) & 15)
            return (int)cudaErrorInvalidValue;
    unsigned char *base = reinterpret_cast<unsigned char *>(((uintptr_t)ws + 255) & ~(uintptr_t)255);
    const ws_layout w = layout_of(p->B, p->Hq, p->Sq, p->D > p->Dv ? p->D : p->Dv, p->off_q.p != nullptr);
    const bool bf = p->q.dtype == XK_BF16, det = deterministic || det_knob();
    if (w.DP > 128) // sdpa_bwd_wide (its dQ sums unordered: the engine refuses a deterministic plan there)
        return (int)(w.DP == 192 ? (bf ? launch_wide<__nv_bfloat16, 192>(*p, st, base, w, s)
                                       : launch_wide<__half, 192>(*p, st, base, w, s))
                                 : (bf ? launch_wide<__nv_bfloat16, 256>(*p, st, base, w, s)
                                       : launch_wide<__half, 256>(*p, st, base, w, s)));
    cudaError_t e = w.DP == 64 ? (bf ? launch_bw<__nv_bfloat16, 64>(*p, st, base, w, det, s)
                                     : launch_bw<__half, 64>(*p, st, base, w, det, s))
                               : (bf ? launch_bw<__nv_bfloat16, 128>(*p, st, base, w, det, s)
                                     : launch_bw<__half, 128>(*p, st, base, w, det, s));
    return (int)e;
}
