// sdpa_wgmma_sm90a.cu — the Hopper attention forward (host side: src/gpu/eng_sdpa.c as sdpa_flash_wgmma,
// semantics: src/ops/sdpa.h).  Built for sm_90a only (Makefile: the *_sm90a.cu rule); the device code is
// compiled out for any other target, so the file builds and links everywhere and the engine refuses devices
// other than compute capability 9.0.
//
//  sdpa_fwd_wgmma<T, DP>  flash-attention-3 style, one block = 3 warpgroups, 128 query rows of one (b, h):
//    warpgroup 0, the producer (setmaxnreg down to 24): one thread loads the Q tile once and streams the K and
//      V tiles of BN keys through an ST-stage ring with TMA (cp.async.bulk.tensor, 4-d tensor maps over
//      [B, H, S, D] with the tensors' own strides, so bhsd and bshd are the same code; rows past S and head-dim
//      columns past D arrive as zeros, which is how tails and the padding of D up to DP are handled).  Each
//      stage has full barriers for K and V (transaction bytes) and empty barriers the consumers arrive on.
//    warpgroups 1 and 2, the consumers (setmaxnreg up to 240): 64 query rows each.  S = Q K^T by wgmma
//      m64nBNk16 with both operands in shared memory (128-byte swizzle descriptors); online softmax in
//      registers (exp2 domain, masks only on tiles that cross an edge of the band or a length); P is
//      packed to 16 bits in registers and is the register A operand of O += P V (V from shared memory,
//      transposed by the descriptor: tnspB).  The GEMMs of two tiles overlap the softmax: tile j's S = Q K^T
//      is issued together with tile j-1's P V, so the tensor cores run P V while the warps do tile j's
//      softmax (and the other consumer warpgroup fills the gaps of this one).
//    Masks (sdpa.h): causal and window (top-left or bottom-right) and seq_len_q / seq_len_kv give each work item
//    the key tiles its rows can see (item_of): the producer loads only those, the consumers mask per element
//    only the tiles that cross an edge of the band or a length, with each row's key range computed once.
//    A band open on one side (causal) schedules the longest row blocks first, one block per item.  The bias
//    (any broadcast, read per element from global memory and added in Q K^T units) and dropout (sdpa_flash's
//    Philox words) are the GEN variant of the kernel (v6 below).  Dv != D: q, k in maps of D columns, v of Dv,
//    both zero-padded to DP; o stored for d < Dv.
//    GQA/MQA: the kv head is h / (Hq / Hk), nothing is repeated.
//  v2: without a one-sided band, a persistent grid (one block per SM walks the work items; the producer loads
//    the next item's Q and K/V while the consumers finish the last P V and store o: an empty-Q barrier hands
//    Q over), and
//    ping-pong between the two consumers (named barriers 1 and 2: one warpgroup issues its GEMMs while the
//    other runs its softmax), as flash-attention-3 schedules them.  Both are run-time switches
//    (knobs_of below) so either can be bisected without a rebuild.
//  v3 (2026-11-24, issue 10): every mask, Dv != D.
//  DP (max(D, Dv) padded to 64, 128 or 256) sets BN (128, 128, 64) and ST (3, 2, 2 stages): shared memory
//  is 112, 160 and 192 KiB (v11 / v13's wide tiles: 176 keys at DP 128, 192 at DP 64).  o is written straight from the accumulators (16-bit pairs), stats as logsumexp.
//  v4 (2026-11-24, issue 10): SPLIT, o in f32 (what a graph's intermediates default to).  P rounded to 16 bits
//    has T's relative error (up to 2^-8 bf16, 2^-11 f16), far above the f32 tolerance an f32 o is held to, so as in
//    sdpa_flash's SPLIT P enters the tensor cores as hi + lo: pl packs the residual P - float(hi) and each P V
//    k-step issues a second RS wgmma from pl into the same accumulators (V is exact in T, the accumulation is
//    f32; what is left is lo's rounding, up to 2^-16 (bf16) / 2^-22 (f16) of P).  o is stored as float2 pairs.
//    The 16-bit path (SPLIT = false) has no trace of pl (ptxas: the same spills as before).  pl adds BN/16 * 4
//    registers per consumer thread (32 at DP 64, 128; 16 at DP 256); ptxas 12.x, spill stores / loads in bytes,
//    plain and GEN, 16-bit o -> f32 o: DP 64 0/0 -> 0/0 both; DP 128 0/0 -> 28/28, GEN 28/28 -> 36/36;
//    DP 256 32/32 -> 128/168, GEN 48/60 -> 80/96.  DP 256 is taken all the same (the spills sit beside 64-key
//    tiles of 256-wide GEMMs); fwdf32_session.sh times it against sdpa_flash's f32 o.
//  v5 (2026-11-24, issue 14): ragged (THD) q and/or k, v: [1, H, T, D] maps read from each sequence's first
//    token, work items as slots of 128 rows per sequence (sdpa_ragged.cuh, item_of), the next sequence's rows
//    masked as padding and never stored.  H100, 8 packed sequences (8192 tokens, h16 d128 causal): 0.196 ms,
//    against 0.798 on sdpa_flash (bench/RESULTS-sdpa.md).
//  v6 (2026-11-24, issue 10): GEN's wgmmas no longer serialized (ptxas C7520, "WG.AR in divergent path": one
//    HGMMA at a time, each waited for).  The divergent path was the mbarrier spin on the previous tile's V
//    between the two GEMMs of a loop iteration (Q K^T in flight); GEN waits for that V before the fence
//    instead (asked for before the tile's K, so it has nearly always landed).  Once they overlap, the registers
//    of the P V in flight (o, pf, SPLIT: pl) are held through the softmax, and two things there spilled: the
//    per-element mask select on every tile (GEN masks only the edge tiles now, as the plain variant does) and
//    the bias's dtype switch per element, which also made each bias load wait for the one before (bias_add:
//    one switch per tile, the loads straight-line).  The plain variants' PTX is unchanged.  ptxas 13.0, spill
//    stores/loads in bytes, GEN before -> after: DP 64 0/0 -> 0/0; DP 128 20/16 -> 0/0; DP 256 72/76 -> 0/0;
//    SPLIT DP 64 0/0 -> 0/0; SPLIT DP 128 56/52 -> 68/120 (bf16; f16 64/104); SPLIT DP 256 88/100 -> 100/156
//    (a few of the work item's scalars reloaded per tile).
//  v7 (2026-11-24, issue 10): GEN's bias by TMA (btma).  The producer loads each key tile's bias [BM rows, BN
//    keys] right after its K into ST stages of its own (full/empty barriers as K's), through a 4-d map over the
//    bias's own dims [B or 1, Hq or 1, Sq, Skv] (a broadcast b or h is a dim of 1 read at 0: TMA has no zero
//    strides), boxes of 64 keys x BM rows in the 128-byte swizzle, zeros past Sq and Skv (masked keys are still
//    set to -inf on the edge tiles).  The consumers add it from shared memory with ldmatrix.x4 straight into S's
//    fragment layout (bias_smem), instead of 64 global loads per thread per tile through the math warps.  Taken
//    for a bias in q's dtype with contiguous keys, rows not broadcast and 16-byte strides (bias_map); the rest
//    (f32 and other dtypes, Skv % 8 != 0, [.., 1, Skv]) and DP 256 (registers: wg_cfg::BT) keep v6's loads.
//    Shared memory SMEM_BIAS: 210, 226 KiB at DP 64, 128.  Also GEN's exp2 loop made straight-line (softmax:
//    the per-element dropout test had split it into 64 branches).  H100, b4h16s4096d128 bf16: bias 4.46 ms (v6)
//    -> 1.08-1.12 for every broadcast (cuDNN 1.72-1.97), 2.07-2.13 with BIAS_TMA=0; dropout 6.83 -> 5.88.
//  v8 (2026-11-24, issue 10): a band open on one side (causal) on v2's persistent grid too.  Its items have every
//    length (1 .. nmblk key tiles), so a static walk (v2's w += gridDim.x) left SMs idle for ~12% of the run, and
//    v7's one block per item paid a block's prologue per item and, in (b, h)-major order, still started the last
//    heads' longest items near the end (~7% tail, a list-scheduling model).  Now the items are ordered longest
//    first within sections of heads whose K and V fit in 32 MB of L2 (item_of's sec, flash-attention-3's order)
//    and the producer of each of the SMs' blocks draws the next item from a counter in the engine's workspace
//    (zeroed by a memset before the launch), handing its index to the consumers beside the item's Q (sItem):
//    every SM takes the next longest item as it frees, the next Q and K/V load while the consumers finish.
//    XDNN_SDPA_WGMMA_CAUSAL=0/1/2 (knobs_of): v7, the section order with one block per item, the counter.
//    H100 (session 9, run 1): causal b4h16s4096d128 0.542 (v7) -> 0.486 ms, 566 TFLOP/s counted as half the
//    matrix; ncu: the SMs' active cycles within 1.5% of each other (balanced).  What was left is per item: the
//    non-causal kernel's rate per 128x128 tile, 0.890 ms for the same 2048 items of 32 tiles, puts ~3.6 us on
//    each item (the first tile's softmax without a P V beside it, the last P V alone, the store of o, and the
//    next Q, asked for only once the last Q K^T was done, arriving ~1-2 us later).  So, on a persistent grid
//    where shared memory allows (SMEM_Q2: DP 64, 128 without a TMA bias), two Q buffers that the items take
//    in turn: the producer loads the next item's Q as soon as it has drawn the item, an item ahead.
//    XDNN_SDPA_WGMMA_QBUF=1 keeps one.
//    Run 2: 0.4956 ms (555 TFLOP/s; QBUF=1 0.4977, v7 0.5537, cuDNN 0.5036 in the same call): the second Q
//    buffer gives 0.4-3% on causal, nothing without a mask; the rest of the per-item cost is the first tile's
//    softmax alone, the last P V alone and the store of o (bench/RESULTS-sdpa.md, session 9).
//  v9 (2026-11-24, issue 10, session 10): the stream.  v8 ended each item alone: the last P V waited for, o
//    stored, the next item's index, Q and setup, then its first Q K^T issued in a turn of its own and waited
//    for.  Where the next item's Q is loaded an item ahead (two Q buffers), q is dense and every item has a key
//    tile (every_item_has_keys), the consumers now run the block's tiles as one sequence: each turn issues the
//    next tile's Q K^T, this item's or the next item's first, beside this tile's P V, so the item's last P V
//    shares its turn with the next item's first Q K^T and o is stored once that P V is in (one turn fewer per
//    item, no idle Q K^T latency between items).  Not GEN (bias, dropout), nor DP 256 (one Q buffer).
//    XDNN_SDPA_WGMMA_CHAIN=0 keeps v8's loop (the same kernel).  H100: the static walk (no mask, bands bounded
//    on both sides) 1-3% faster; on the counter's walk (causal) 1-3% slower (the next item, drawn by an
//    atomic only when the producer gets to it, has its Q and first K in later than the stream's turn wants
//    them), so the stream takes the static walk only.
//  v10 (2026-11-24, issue 10, session 11): few query rows (chunked prefill, speculative decode).  Where the plain
//    grid (an item per 128 rows of a head) has fewer items than SMs, the tile packs a GQA group's G = Hq / Hk
//    heads (G a divisor of 128): tile row r is head h + r % G, position m0 + r / G (position-major, so a causal
//    band stays narrow), one TMA box of 64 columns x G heads x 128 / G positions from a map over [D, H, S, B]
//    (make_pack_map), so K and V are streamed once per group instead of once per q head; and each item's key
//    tiles are split into nsplit shares (items = shares x row blocks x B x Hk <= SMs, one block each), their
//    partial o (o's dtype) and logsumexp written by the same stores into the workspace (o and stats pointed
//    there, the share as a batch index: no branch, which C7520 punishes) and combined by sdpa_splitkv's pass
//    (launched as a programmatic dependent).  Dense q and k/v without bias or dropout; the rest of the kernel
//    is v9's (the stream off: a share may have no key tile).  XDNN_SDPA_WGMMA_PACK=0 / _SPLITS=n (knobs_of).
//  v11 (2026-11-25, issue 10, session 12): (a) the wide key tile: 176 keys at DP 128 with 16-bit o and no band
//    (wide_tile; flash-attention-3's tile at D = 128 without a causal mask): S = Q K^T by wgmma m64n176k16 (88
//    accumulators), P V in 11 k-steps; one Q buffer (208 KiB of shared memory, a second does not fit), so v8's
//    loop, not v9's stream.  The per-tile costs that do not grow with the keys (max shuffles, o rescale, the
//    turn's barriers, the GEMMs' issue and wait) spread over 1.375x the matrix work, less the stream and, at
//    S = 4096, 3% of keys computed past the end (24 x 176).  XDNN_SDPA_WGMMA_WIDE=0 keeps 128, =2 takes 176 for
//    a causal-like band too.  (b) ahead: on the counter's walk (causal) with two Q buffers the producer draws
//    the next item as soon as it begins one and loads that item's Q right after this item's first K and V
//    (hand_q, load_tile), so v9's stream takes the counter's walk too (session 10: without this it lost 1-3%
//    there, its next Q in late).  XDNN_SDPA_WGMMA_AHEAD=0 keeps v8's producer order.  ptxas: the producer's
//    spills (24 registers) 24/8 -> 84/64 bytes of plain instances; the consumers' code is unchanged.
//    H100 (session 12, run 2, the variants in turn): no mask 176 / 128 keys 0.999 (b4h16s4096d128), 0.989
//    (Llama b2h32k8s4096d128), 1.02 (b1h32s16384d128, noisy; by the minima 0.98-0.99 on all three); causal
//    ahead 0.990, 0.998, 0.990, 0.990 (b16h16s1024d64); WIDE=2 on causal 1.004, 0.991, 0.967 of ahead alone.
//    Measured and dropped: the o rescale skipped by a warp vote where no row's max moved (exact: corr 1) was
//    0.3-1.4% slower on every row in the same binary, and that binary's 128-key paths ran 3-12% slower than
//    run 2's without it (bench/RESULTS-sdpa.md, session 12).
//  Measured and dropped in session 13 (issue 10, bench/RESULTS-sdpa.md; plain bf16 instances behind a switch, the
//    variants in turn per shape on one H100): (a) flash-attention-4's split, 19% or 31% of the exponentials as a
//    degree-3 exp2 polynomial on the FMA pipe (Cody-Waite: floor by the 1.5 * 2^23 round-down add, exponent
//    added into the bits; 8.8e-5 relative): 3.5% / 6% slower on every row.  ncu (no mask, 176 keys): the MUFU's
//    XU pipe at 36% of its peak (28% with the polynomial), issue active 41% (44%): the softmax between the turns
//    is not MUFU-bound, and each emulated exp2's ~8 issues in place of one lengthened it.  (b) the row max as a
//    tree over the column groups and the row sum in four partial chains (shorter dependency chains, ~44 more
//    live registers in the softmax): 1.5-3.4% slower on every row but the noisy b1h32s16384.  ptxas's schedule
//    of the softmax beside the P V in flight (168 registers, the consumers at their 240 cap) is what both
//    disturbed; neither the MUFU's rate nor the chains' latency is what the turn waits on.
//  v12 (2026-11-25, issue 10, session 15): the wgmma descriptors of a GEMM's k-steps by one add to the tile's
//    base descriptor (desc_add, as sdpa_bwd_wgmma's kDescAdd since session 13).  ncu's source view (no mask,
//    b4h16s4096d128, 176 keys): each k-step's two descriptors were built whole by a dependent chain of ~5
//    instructions each (add, mask, shift, or, R2UR) on the consumer's issue path, ~38 descriptors a tile at
//    DP 128 (8 Q K^T k-steps x 2, 11 P V k-steps x 2 column halves), their "wait" stalls among the turn's.
//    With the shorter issue, v11's 176-key tile now wins on causal too (wide_tile: WIDE=2 the default).
//    With the warpgroup index broadcast from lane 0 (__shfl_sync: warp-uniform in ptxas's eyes), the bases and
//    the adds run on the uniform datapath: sm_90a SASS of the bf16 176-key instance, a Q K^T k-step 4 uniform
//    instructions instead of ~9 vector ones ending in four R2UR, a P V k-step 2 instead of 5.
//    XDNN_SDPA_WGMMA_DESC=0 keeps v11's descriptors (bf16 plain instances, the A/B).  H100 (session 15, one call,
//    v12 / v11 in turn per shape): no mask b4h16s4096d128 0.8934 -> 0.8519 ms (615 -> 645 TFLOP/s; cuDNN 0.8768),
//    Llama b2h32k8s4096d128 0.8923 -> 0.8452 (650), causal -0.6 / -0.7 %, b16h16s1024d64 +0.8 % / causal -2 %.
//  v13 (2026-11-25, issue 10, session 15): v11's wide tile at DP 64 (max(D, Dv) <= 64): 192 keys, S = Q K^T by
//    wgmma m64n192k16 (96 accumulators), P V in 12 k-steps of m64n64k16, under wide_tile's conditions.  At DP
//    64 the 128-key tile does half of DP 128's matrix work per tile, so the per-tile costs (max shuffles, o
//    rescale, the turn's barriers, the GEMMs' issue and wait) weigh twice as much per flop; 192 keys spread
//    them over 1.5x the work.  Registers: S 96 + o 32 + P 48, below the 176 tile's 88 + 64 + 44 (256 keys, 128
//    + 32 + 64, would not fit the consumers' 240).  Shared memory: 161 KiB, 178 KiB with two Q buffers, so
//    unlike the 176 tile it keeps v9's stream.  XDNN_SDPA_WGMMA_WIDE=0 keeps 128 keys here too.  ptxas 13.0,
//    spill stores/loads in bytes: 88/56 (the 128-key DP 64 instance 84/64), all the producer's (24 registers):
//    with the producer's loop compiled out both are 0/0, and neither has C7518/C7520.  H100 (session 15, 192 / 128
//    keys): b4h16s4096d64 0.6852 -> 0.6370 ms, causal 0.3744 -> 0.3588, but b16h16s1024d64 +1 %, causal +6 %
//    (1024 keys are 5.33 tiles of 192): taken from 2048 keys only (kWide64MinKeys; WIDE=3 at any length).
#include "gpu/kern_sdpa_splitkv.h"
#include "sdpa_ragged.cuh"
#include "wgmma_sm90a.cuh"

#include <stdlib.h>
#include <type_traits>

namespace {

// BNX: the wide key tile (wide_bn: v11's 176 keys at DP 128, v13's 192 at DP 64; 16-bit o, no band or one open
// on one side); 0: the BN below
template <int DP, int BNX = 0> struct wg_cfg {
    static constexpr int BM = 128;                          // query rows per block (2 consumers x 64)
    static constexpr int BN = BNX ? BNX : DP <= 128 ? 128 : 64; // keys per tile
    static constexpr int ST = DP <= 64 ? 3 : 2;             // ring stages
    static constexpr int NB = DP / 64;                      // 128-byte column blocks of a row
    static constexpr int ON = DP < 128 ? DP : 128;          // n of one P V wgmma
    static constexpr int OC = DP / ON;                      // P V wgmmas per k-step
    static constexpr int Q_BYTES = NB * BM * 128;
    static constexpr int KV_BYTES = NB * BN * 128;          // one K (or V) stage
    static constexpr int BAR_BYTES = 8 * (6 + 6 * ST);      // full/empty Q, full K/V, empty K/V, full/empty bias,
                                                            // the item's index (v8's dynamic walk), and the
                                                            // second Q buffer's full/empty and index (v8)
    static constexpr int SMEM = 1024 + Q_BYTES + 2 * ST * KV_BYTES + BAR_BYTES; // +1024: alignment slack
    // GEN with a TMA bias (v7): ST stages of the bias tile [BM rows, BN keys] in 16 bits, BN / 64 boxes of 64
    // keys (128-byte rows, 128-byte swizzle), 1024 bytes after the barriers: 210, 226 KiB at DP 64, 128
    // Only at DP <= 128: at DP 256 the consumers' 128 o registers leave no room (ptxas spilled 20 bytes with
    // either bias path beside the other, 264 with the TMA path alone), so GEN keeps v6's loads there.
    static constexpr bool BT = DP <= 128;
    static constexpr int B_BYTES = BM * BN * 2;
    static constexpr int SMEM_BIAS = 1024 + Q_BYTES + 2 * ST * KV_BYTES + 1024 + ST * B_BYTES;
    // v8, a persistent grid without a TMA bias: a second Q buffer at the bias tiles' place, so the producer loads
    // the next item's Q while the consumers still run this one's last Q K^T (one buffer: only after it, its
    // latency in the gap between items).  130, 194 KiB at DP 64, 128; DP 256 (256 KiB) has no room.
    // v11, BN 176 at DP 128: 209 KiB with one Q buffer; a second (241 KiB) does not fit, so no v9 stream.
    // v13, BN 192 at DP 64: 161 KiB, 178 KiB with two Q buffers (the stream stays)
    static constexpr int SMEM_Q2 = 1024 + Q_BYTES + 2 * ST * KV_BYTES + 1024 + Q_BYTES;
};

constexpr int kThreads = 384;


// One work item = (row block, b, h); items w = blockIdx.x, + gridDim.x, ... (a persistent grid of one block per
// SM, or one block per item), or (v8, next) whatever index the producer draws from the launch's counter.
// rev: the last row blocks first (a causal-like band: they are the longest).  sec > 0 (v8, dense only): the
// items in sections of sec (b, h) heads, row-block major within a section and longest first, so the heads in
// flight at once share their K/V in L2 and the block scheduler (or the counter) hands out long items before
// short ones in every section (flash-attention-3's longest-processing-time-first order); sec = 0: (b, h) major.
// The item's key tiles t0 .. t0 + ntiles - 1 cover the keys any of its rows may see (sdpa.h's band with this
// batch's seq_len_q / seq_len_kv, clipped to them); the tiles outside are never loaded.  Rows of the block
// past lq see nothing: an item made of them has no tiles and writes o = 0, stats = -inf.
// Ragged q (off_q): items are (slot, h), nmblk slots of BM rows per head (slot_seq: T / BM + B of them), and
// an item whose rows are not its sequence's (skip) is passed over by every warpgroup alike.  Where the rows are
// (rows_of: the token of the sequence's first row in the packed q or k, v) is looked up again where it is used
// (the producer's loads, the consumers' stores), so that the consumers keep no more registers across the
// main loop than the dense kernel did.  Rows past the sequence's end (the next sequence's) are loaded and
// masked as padding is, never stored.
struct wg_item {
    int b, h, hk, m0, t0, ntiles, lq, lkv, off;
    int split; // v10: the item's share of the keys (0 without a key split)
    bool skip;
};
// The walk over the work items: nwork items of nmblk row blocks; next: the dynamic scheduler's counter (v8: a
// zeroed int of the launch's workspace, null for a static walk); nq: the Q buffers the items take in turn.
struct wg_walk {
    int rev, nmblk, nwork, sec, nq; // nq: Q buffers, 1 or 2 (v8: the second at sB, launched with SMEM_Q2)
    int chain; // v9: the consumers run the items' tiles as one stream (nq 2, dense q, no item without a key tile)
    int *next;
    // v10: pack > 0: a tile holds pack (= Hq / Hk) heads' rows of BM / pack positions, position-major (tile row
    // r: head h + r % pack, position m0 + r / pack), so a GQA group's K/V is streamed once; nsplit > 1: each
    // item's key tiles are split into nsplit shares, items (split, row block, b, hk) with the split minor, each
    // writing its partial o (normalized, in o's dtype) and logsumexp into the workspace (the kernel's o and
    // stats are pointed there: store_o) for sdpa_splitkv's combine pass
    int pack, nsplit;
    int ahead; // v11: the dynamic walk's producer draws the next item and loads its Q an item ahead (nq 2)
};
__device__ __forceinline__ wg_item item_of(const xk_sdpa &p, int w, const wg_walk &k, int bm, int bn)
{
    wg_item t;
    const int nmblk = k.nmblk;
    t.split = 0;
    if (k.pack) { // v10 (dense q): w = ((b, hk) * nmblk + row block) * nsplit + split; m0, bm in positions
        const int w2 = w / k.nsplit, bh = w2 / nmblk;
        t.split = w % k.nsplit;
        t.b = bh / p.Hk;
        t.h = bh % p.Hk * k.pack; // the group's first head
        bm /= k.pack;
        t.m0 = w2 % nmblk * bm;
    } else if (p.off_q.p) {
        const int mb = w % nmblk;
        t.h = w / nmblk;
        slot_seq(p.off_q, p.B, p.Sq, bm, k.rev ? nmblk - 1 - mb : mb, &t.b, &t.m0);
    } else {
        int bh, mb;
        if (k.sec) { // section s0 / sec of n heads (the last may have fewer), n items per row block
            const int span = k.sec * nmblk, s0 = w / span * k.sec, r = w % span, n = min(k.sec, p.B * p.Hq - s0);
            bh = s0 + r % n;
            mb = r / n;
        } else {
            bh = w / nmblk;
            mb = w % nmblk;
        }
        t.b = bh / p.Hq;
        t.h = bh % p.Hq;
        t.m0 = (k.rev ? nmblk - 1 - mb : mb) * bm;
    }
    t.hk = t.h / (p.Hq / p.Hk);
    const seq_rows sr = rows_of(p, t.b);
    t.lq = sr.lq, t.lkv = sr.lkv;
    t.skip = t.m0 < 0 || t.m0 >= sr.nq; // only a ragged slot (dense items start below Sq)
    t.off = p.bottom_right ? t.lkv - t.lq : 0; // row i's diagonal is key i + off
    const int rhi = min(t.m0 + bm, t.lq);       // rows [m0, rhi) see keys; the band's ends grow with the row
    int64_t jlo = 0, jhi = rhi > t.m0 ? t.lkv : 0; // 64-bit: off + right may pass INT32_MAX
    if (p.left >= 0)
        jlo = max((int64_t)0, (int64_t)t.m0 + t.off - p.left);
    if (p.right >= 0)
        jhi = min(jhi, (int64_t)rhi + t.off + p.right);
    t.t0 = (int)(jlo / bn);
    t.ntiles = jhi > jlo ? (int)((jhi + bn - 1) / bn) - t.t0 : 0;
    if (k.nsplit > 1) { // v10: this split's share of the tiles (none past the end: o = 0, lse = -inf, weight 0)
        const int per = (t.ntiles + k.nsplit - 1) / k.nsplit, lo = min(t.ntiles, t.split * per);
        t.t0 += lo;
        t.ntiles = min(per, t.ntiles - lo);
    }
    return t;
}

// The dynamic walk's item index in shared memory (sItem)
__device__ __forceinline__ void st_shared_s32(uint32_t a, int v)
{
    asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(a), "r"(v) : "memory");
}
__device__ __forceinline__ int ld_shared_s32(uint32_t a)
{
    int v;
    asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(v) : "r"(a) : "memory");
    return v;
}

// GEN's bias of a thread's tile elements, added to S in Q K^T units (s + bias / scale).  Element (c, e) of the
// accumulator layout is row rp[e >> 1]'s key j = n0 + c * 8 + t4 * 2 + (e & 1), clamped to Skv - 1 (the keys past
// it are masked; the rows past Sq were clamped in rp).  One dtype per call, chosen once per tile (bias_add), so
// the NE loads are straight-line code the scheduler overlaps: a dtype switch per element (ld_any) made each load
// wait for the one before it.
template <typename B> __device__ __forceinline__ float bias_f(B x) { return (float)x; }
template <> __device__ __forceinline__ float bias_f(__half x) { return __half2float(x); }
template <> __device__ __forceinline__ float bias_f(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename B, int NE>
__device__ __forceinline__ void bias_tile(float *s, const void *rp0, const void *rp1, int64_t st3, int j0, int jmax,
                                          float inv_scale)
{
    const B *rp[2] = {static_cast<const B *>(rp0), static_cast<const B *>(rp1)};
#pragma unroll
    for (int c = 0; c < NE / 4; c++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int j = min(j0 + c * 8 + (e & 1), jmax);
            s[c * 4 + e] = fmaf(bias_f(rp[e >> 1][(int64_t)j * st3]), inv_scale, s[c * 4 + e]);
        }
}
template <int NE>
__device__ __forceinline__ void bias_add(const xk_sdpa &p, float *s, int b, int h, int row0, int n0, int t4,
                                         float inv_scale)
{
    const xk_tensor &bt = p.bias;
    const int esz = bt.dtype == XK_F16 || bt.dtype == XK_BF16 ? 2 : bt.dtype == XK_I64 || bt.dtype == XK_F64 ? 8 : 4;
    const char *base = static_cast<const char *>(bt.p) + ((int64_t)b * bt.st[0] + (int64_t)h * bt.st[1]) * esz;
    const void *rp0 = base + (int64_t)min(row0, p.Sq - 1) * bt.st[2] * esz,
               *rp1 = base + (int64_t)min(row0 + 8, p.Sq - 1) * bt.st[2] * esz;
    const int j0 = n0 + t4 * 2, jmax = p.Skv - 1;
    switch (bt.dtype) { // uniform (a kernel parameter): no divergent path
    case XK_F16: bias_tile<__half, NE>(s, rp0, rp1, bt.st[3], j0, jmax, inv_scale); break;
    case XK_BF16: bias_tile<__nv_bfloat16, NE>(s, rp0, rp1, bt.st[3], j0, jmax, inv_scale); break;
    case XK_F32: bias_tile<float, NE>(s, rp0, rp1, bt.st[3], j0, jmax, inv_scale); break;
    default: // i32, i64, f64: the per-element dtype switch
#pragma unroll
        for (int c = 0; c < NE / 4; c++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                s[c * 4 + e] = fmaf(ld_any(bt.p, bt.dtype,
                                           off4(bt, b, h, min(row0 + 8 * (e >> 1), p.Sq - 1),
                                                min(j0 + c * 8 + (e & 1), jmax))),
                                    inv_scale, s[c * 4 + e]);
    }
}

// v7's bias from shared memory: the tile [BM rows, BN keys] the producer loaded by TMA, BN / 64 boxes of
// [BM rows, 64 keys] with 128-byte rows in the 128-byte swizzle (16-byte chunk k of row r at chunk k ^ (r & 7)).
// One ldmatrix.x4 gives a thread the accumulator layout's elements of two 8-key column groups c, c + 1 for its
// rows r, r + 8 (matrix i's row addresses from lanes 8i .. 8i + 7: rows r, r + 8, r, r + 8 of chunks c, c, c + 1,
// c + 1; each thread gets row lane / 4, keys 2 (lane % 4), + 1 of each), the same layout as S's fragments.  The
// eight rows a matrix reads are 8 consecutive rows (r & 7 = 0 .. 7), so the swizzle puts their chunks in 8
// different bank quads: no bank conflict.  lrow: this lane's row address (its warp's rows + (lane & 7) +
// 8 ((lane >> 3) & 1), times 128); x = (lane >> 4) ^ (lane & 7): chunk c + (lane >> 4) of row r, c even, is at
// (c + (lane >> 4)) ^ (r & 7) = c ^ x.
template <typename T> __device__ __forceinline__ float2 unpack2(uint32_t w);
template <> __device__ __forceinline__ float2 unpack2<__nv_bfloat16>(uint32_t w)
{
    return make_float2(__uint_as_float(w << 16), __uint_as_float(w & 0xffff0000u));
}
template <> __device__ __forceinline__ float2 unpack2<__half>(uint32_t w)
{
    return __half22float2(*reinterpret_cast<const __half2 *>(&w));
}
template <typename T, int NE, int BM>
__device__ __forceinline__ void bias_smem(float *s, uint32_t tile, uint32_t lrow, uint32_t x, float inv_scale)
{
    // (ptxas hoists the loads ahead of their FMAs as far as registers allow)
#pragma unroll
    for (int c = 0; c < NE / 4; c += 2) {
        uint32_t r[4];
        const uint32_t a = tile + (c / 8) * BM * 128 + lrow + (((uint32_t)(c % 8) ^ x) << 4);
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(a)
                     : "memory");
#pragma unroll
        for (int m = 0; m < 4; m++) { // matrix m: column group c + (m >> 1), row r + 8 (m & 1)
            const float2 b = unpack2<T>(r[m]);
            float *d = s + (c + (m >> 1)) * 4 + (m & 1) * 2;
            d[0] = fmaf(b.x, inv_scale, d[0]);
            d[1] = fmaf(b.y, inv_scale, d[1]);
        }
    }
}

// GEN: the additive bias and dropout (per-element loads and Philox words in the softmax); without them the
// kernel has no trace of either, so the plain and band-masked cases keep their registers and schedule.
// kDescAdd (v12): the k-steps' wgmma descriptors by one add to a tile's base descriptor (desc_add); false only
// in the bf16 plain instances that XDNN_SDPA_WGMMA_DESC=0 selects, the A/B.
template <typename T, int DP, bool GEN, bool SPLIT, int BNX, bool kDescAdd>
__global__ void __launch_bounds__(kThreads, 1)
    sdpa_fwd_wgmma(const __grid_constant__ CUtensorMap tq, const __grid_constant__ CUtensorMap tk,
                   const __grid_constant__ CUtensorMap tv, const __grid_constant__ CUtensorMap tb, const xk_sdpa p,
                   const wg_walk walk, int pingpong, int btma)
{
#if XW_DEVICE
    using C = wg_cfg<DP, BNX>;
    constexpr int BM = C::BM, BN = C::BN, ST = C::ST, NB = C::NB;
    extern __shared__ unsigned char smem_raw[];
    const uint32_t sQ = (smem_u32(smem_raw) + 1023u) & ~1023u; // swizzled tiles need 1024-byte alignment
    const uint32_t sK = sQ + C::Q_BYTES, sV = sK + ST * C::KV_BYTES, sBar = sV + ST * C::KV_BYTES;
    // Q buffer b (walk.nq of them, v8; item n of a block in buffer n % nq, its phase (n / nq) & 1) at sQ, sB:
    // full/empty barriers and, for the dynamic walk, the item's index: the producer writes the index it drew
    // before the item's Q arrives (fullQ), the consumers read it after waiting for that Q (mbarrier arrive/wait
    // order the write before the read); an index >= nwork, with fullQ arrived on and no Q, ends the block
#define XW_FULLQ(b) (sBar + ((b) ? 8u * (3 + 6 * ST) : 0u))
#define XW_EMPTYQ(b) (XW_FULLQ(b) + 8u)
#define XW_ITEM(b) (sBar + ((b) ? 8u * (5 + 6 * ST) : 8u * (2 + 6 * ST)))
    // btma (GEN only, v7): the bias tiles by TMA into ST stages at sB (launched with SMEM_BIAS), beside K and V
    const uint32_t sB = sBar + 1024;
#define XW_FULLK(s) (sBar + 8u * (2 + (s)))
#define XW_FULLV(s) (sBar + 8u * (2 + ST + (s)))
#define XW_EMPTYK(s) (sBar + 8u * (2 + 2 * ST + (s)))
#define XW_EMPTYV(s) (sBar + 8u * (2 + 3 * ST + (s)))
#define XW_FULLB(s) (sBar + 8u * (2 + 4 * ST + (s)))
#define XW_EMPTYB(s) (sBar + 8u * (2 + 5 * ST + (s)))
    // v12: warp-uniform by a broadcast from lane 0, which ptxas can prove (threadIdx.x / 128 it cannot): what
    // derives from it, this warpgroup's shared addresses and so the wgmma descriptors, then lives in uniform
    // registers (v11 built each descriptor in vector registers and moved it over by four R2UR)
    const int wg = kDescAdd ? __shfl_sync(0xffffffffu, threadIdx.x / 128, 0) : threadIdx.x / 128;
    if (walk.nsplit > 1) // v10: the combine pass may be scheduled now (it waits for this grid's end)
        asm volatile("griddepcontrol.launch_dependents;\n" ::);

    if (threadIdx.x == 0) {
        for (int b = 0; b < 2; b++) {
            mb_init(XW_FULLQ(b), 1);
            mb_init(XW_EMPTYQ(b), 256);
        }
#pragma unroll
        for (int s = 0; s < ST; s++) {
            mb_init(XW_FULLK(s), 1);
            mb_init(XW_FULLV(s), 1);
            mb_init(XW_EMPTYK(s), 256);
            mb_init(XW_EMPTYV(s), 256);
            mb_init(XW_FULLB(s), 1);
            mb_init(XW_EMPTYB(s), 256);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    }
    __syncthreads();

    if (wg == 0) { // ---- producer: the ring position runs on across work items
        asm volatile("setmaxnreg.dec.sync.aligned.u32 24;\n");
        if (threadIdx.x == 0) {
            int gt = 0; // the ring position
            // Item w's Q into the buffer of the block's n-th item, after the consumers' last Q K^T of that
            // buffer's previous item; on the dynamic walk the index goes with it (sItem), or, past the last
            // item, the end (fullQ arrived on without a Q): false then
            auto hand_q = [&](int w, int n, const wg_item &t) {
                const int qs = n % walk.nq, qph = (n / walk.nq) & 1;
                mb_wait(XW_EMPTYQ(qs), qph ^ 1);
                if (walk.next) {
                    st_shared_s32(XW_ITEM(qs), w);
                    if (w >= walk.nwork) {
                        mb_arrive(XW_FULLQ(qs));
                        return false;
                    }
                }
                // the rows' first token and the map's batch coordinate (a packed side: [1, H, T, D] from 0)
                const int qrow = p.off_q.p ? rows_of(p, t.b).qrow : 0, qb = p.off_q.p ? 0 : t.b;
                mb_expect(XW_FULLQ(qs), C::Q_BYTES);
#pragma unroll
                for (int c = 0; c < NB; c++)
                    tma_load((qs ? sB : sQ) + c * BM * 128, &tq, XW_FULLQ(qs), c * 64,
                             walk.pack ? t.h : qrow + t.m0, walk.pack ? t.m0 : t.h, qb); // v10: [D, H, S, B]
                return true;
            };
            // Key tile it of item t (its K, bias, V) at the next ring position; krow: the sequence's first key
            auto load_tile = [&](const wg_item &t, int krow, int it) {
                const int s = gt % ST, ph = (gt / ST) & 1, kb = p.off_kv.p ? 0 : t.b;
                gt++;
                mb_wait(XW_EMPTYK(s), ph ^ 1);
                mb_expect(XW_FULLK(s), C::KV_BYTES);
#pragma unroll
                for (int c = 0; c < NB; c++)
                    tma_load(sK + s * C::KV_BYTES + c * BN * 128, &tk, XW_FULLK(s), c * 64, krow + (t.t0 + it) * BN,
                             t.hk, kb);
                if (C::BT && btma) { // the bias tile: rows m0 .. m0 + BM - 1 of its (b, h), zeros outside
                    mb_wait(XW_EMPTYB(s), ph ^ 1);
                    mb_expect(XW_FULLB(s), C::B_BYTES);
#pragma unroll
                    for (int c = 0; c < BN / 64; c++)
                        tma_load(sB + s * C::B_BYTES + c * BM * 128, &tb, XW_FULLB(s), (t.t0 + it) * BN + c * 64,
                                 t.m0, p.bias.st[1] ? t.h : 0, p.bias.st[0] ? t.b : 0);
                }
                mb_wait(XW_EMPTYV(s), ph ^ 1);
                mb_expect(XW_FULLV(s), C::KV_BYTES);
#pragma unroll
                for (int c = 0; c < NB; c++)
                    tma_load(sV + s * C::KV_BYTES + c * BN * 128, &tv, XW_FULLV(s), c * 64, krow + (t.t0 + it) * BN,
                             t.hk, kb);
            };
            if (walk.ahead) {
                // v11 (ahead, the dynamic walk with two Q buffers): the next item is drawn as soon as this one
                // begins and its Q asked for right after this item's first K and V (once the consumers are
                // through the last item's Q K^T), not once this item's last V is out: the counter's latency
                // and the Q's load sit under this item's tiles, so v9's stream can take the counter's walk
                // (the item is worked out again after the next one's Q: with 24 registers, keeping it across
                // that spilled)
                int w = atomicAdd(walk.next, 1), wi = 0;
                bool live = hand_q(w, wi, item_of(p, min(w, walk.nwork - 1), walk, BM, BN));
                while (live) {
                    const int wn = atomicAdd(walk.next, 1);
                    {
                        const wg_item t = item_of(p, w, walk, BM, BN);
                        if (t.ntiles > 0)
                            load_tile(t, p.off_kv.p ? rows_of(p, t.b).krow : 0, 0);
                    }
                    live = hand_q(wn, wi + 1, item_of(p, min(wn, walk.nwork - 1), walk, BM, BN));
                    const wg_item t = item_of(p, w, walk, BM, BN);
                    const int krow = p.off_kv.p ? rows_of(p, t.b).krow : 0;
                    for (int it = 1; it < t.ntiles; it++)
                        load_tile(t, krow, it);
                    w = wn, wi++;
                }
            } else {
                for (int w = walk.next ? atomicAdd(walk.next, 1) : blockIdx.x, wi = 0;;
                     w = walk.next ? atomicAdd(walk.next, 1) : w + gridDim.x) {
                    if (!walk.next && w >= walk.nwork)
                        break;
                    const wg_item t = item_of(p, min(w, walk.nwork - 1), walk, BM, BN);
                    if (t.skip)
                        continue;
                    if (!hand_q(w, wi++, t))
                        break;
                    const int krow = p.off_kv.p ? rows_of(p, t.b).krow : 0;
                    for (int it = 0; it < t.ntiles; it++)
                        load_tile(t, krow, it);
                }
            }
        }
    } else { // ---- consumers
        asm volatile("setmaxnreg.inc.sync.aligned.u32 240;\n");
        constexpr int NS = BN / 2, ON = C::ON, OC = C::OC;
        const int cw = wg - 1, tid = threadIdx.x - 128 * wg, warp = tid >> 5, lane = tid & 31;
        const int g = lane >> 2, t4 = lane & 3;
        const float scale2 = p.scale * kLog2e; // scale > 0 (the engine checks)
        const float inv_scale = 1.0f / p.scale; // bias enters S in Q K^T units: s + bias / scale
        // btma: this lane's row of the bias tile for ldmatrix and its swizzle term (bias_smem)
        const uint32_t brow = (uint32_t)(cw * 64 + warp * 16 + (lane & 7) + 8 * ((lane >> 3) & 1)) * 128u,
                       bx = (uint32_t)((lane >> 4) ^ (lane & 7));
        // Ping-pong: named barriers 1 and 2 hand the tensor cores from one consumer to the other, so one
        // warpgroup's softmax runs while the other's GEMMs do.  Consumer 0 starts.
        auto my_turn = [&]() {
            if (pingpong)
                asm volatile("bar.sync %0, 256;\n" ::"r"(1 + cw) : "memory");
        };
        auto your_turn = [&]() {
            if (pingpong)
                asm volatile("bar.arrive %0, 256;\n" ::"r"(2 - cw) : "memory");
        };
        if (cw == 1)
            your_turn();

        float s[NS], o[OC][ON / 2];
        uint32_t pf[BN / 16][4], pl[SPLIT ? BN / 16 : 1][4]; // pl: P's residual below pf (SPLIT only)
        int gt = 0; // ring position
        // The work item in hand and this thread's part of it (v9: outside the item loops, which the two
        // schedules below share with the lambdas)
        wg_item t = {};
        int wi = -1;             // the items this block has taken (the Q buffer and its barriers' parity)
        int qs = 0, qph = 0;     // the item's Q buffer and its phase
        uint32_t qbase = 0;      // this warpgroup's 64 rows of that Q
        // this warpgroup's rows' first and last positions; this thread's rows' positions row0, row1 (row0 + 8
        // but with v10's packing) and, packed, their heads' offsets in the group hr0, hr1
        int wlo = 0, whi = 0, row0 = 0, row1 = 0, hr0 = 0, hr1 = 0;
        int klo[2], khi[2];      // the keys those rows see: [klo, khi]
        float mrow[2], lrow[2];
        auto begin_item = [&]() { // t is the next item this block takes
            wi++;
            qs = wi % walk.nq, qph = (wi / walk.nq) & 1;
            qbase = (qs ? sB : sQ) + cw * 64 * 128;
            const int tr = cw * 64 + warp * 16 + g; // this thread's first row of the tile
            if (walk.pack) {
                const int G = walk.pack;
                wlo = t.m0 + cw * 64 / G, whi = t.m0 + (cw * 64 + 63) / G;
                row0 = t.m0 + tr / G, row1 = t.m0 + (tr + 8) / G, hr0 = tr % G, hr1 = (tr + 8) % G;
            } else {
                wlo = t.m0 + cw * 64, whi = wlo + 63;
                row0 = wlo + warp * 16 + g, row1 = row0 + 8;
            }
#pragma unroll
            for (int r = 0; r < 2; r++) {
                band_keys(p, t.lq, t.lkv, t.off, r ? row1 : row0, &klo[r], &khi[r]);
                mrow[r] = -CUDART_INF_F, lrow[r] = 0.0f;
            }
#pragma unroll
            for (int c = 0; c < OC; c++)
#pragma unroll
                for (int i = 0; i < ON / 2; i++)
                    o[c][i] = 0.0f;
        };
        // the block's next item as the producer drew it (it comes with its Q), or wc on a static walk
        auto next_item = [&](int wc) {
            if (!walk.next)
                return wc;
            const int n = wi + 1;
            mb_wait(XW_FULLQ(n % walk.nq), (n / walk.nq) & 1);
            return ld_shared_s32(XW_ITEM(n % walk.nq));
        };

        // The per-tile steps, shared by both schedules below (indented as when they were the item loop's, so
        // that v9 left their lines as they were)
            // S = Q K^T of a K tile (DP/16 k-steps of 16 head-dim columns)
            auto issue_qk = [&](uint32_t kb, uint32_t qb) { // kb: the K tile; qb: this warpgroup's rows of Q
                const uint64_t dq0 = gdesc(qb, 16, 1024), dk0 = gdesc(kb, 16, 1024);
#pragma unroll
                for (int kk = 0; kk < DP / 16; kk++) {
                    const uint32_t co = (kk >> 2) * 128u, ko = (kk & 3) * 32u;
                    if (kDescAdd)
                        wg_ss(s, desc_add(dq0, co * BM + ko), desc_add(dk0, co * BN + ko), kk > 0, T());
                    else
                        wg_ss(s, gdesc(qb + co * BM + ko, 16, 1024), gdesc(kb + co * BN + ko, 16, 1024), kk > 0,
                              T());
                }
            };
            // O += P V of the tile in stage st (BN/16 k-steps of 16 keys; V rows are 128-byte lines)
            auto issue_pv = [&](int st) {
                const uint32_t vb = sV + st * C::KV_BYTES;
                const uint64_t dv0 = gdesc(vb, BN * 128, 1024);
#pragma unroll
                for (int kk = 0; kk < BN / 16; kk++)
#pragma unroll
                    for (int c = 0; c < OC; c++) {
                        const uint32_t off = kk * 16 * 128 + c * 2 * BN * 128;
                        const uint64_t dv = kDescAdd ? desc_add(dv0, off) : gdesc(vb + off, BN * 128, 1024);
                        wg_rs(o[c], pf[kk], dv, T());
                        if (SPLIT)
                            wg_rs(o[c], pl[SPLIT ? kk : 0], dv, T());
                    }
            };
            // Mask (only tiles that cross the key tail or the causal diagonal), online softmax; returns the
            // rescale factors of o in corr.
            auto softmax = [&](int it, float *corr) {
                const int n0 = (t.t0 + it) * BN;
                // a tile needs the per-element mask where it crosses the key or row end (seq lens) or an edge
                // of the band for this warpgroup's 64 rows
                const bool edge = n0 + BN > t.lkv || whi >= t.lq ||
                                  (p.right >= 0 && n0 + BN - 1 > (int64_t)wlo + t.off + p.right) ||
                                  (p.left >= 0 && n0 < (int64_t)whi + t.off - p.left);
                if (GEN && p.bias.p) { // btma: the tile from shared memory, else every lane loads (clamped to the
                                       // bias) from global memory; both uniform: no divergent branch
                    if (C::BT && btma) {
                        const int bs = (gt + it) % ST;
                        bias_smem<T, NS, BM>(s, sB + bs * C::B_BYTES, brow, bx, inv_scale);
                        mb_arrive(XW_EMPTYB(bs));
                    } else {
                        bias_add<NS>(p, s, t.b, t.h, row0, n0, t4, inv_scale);
                    }
                }
                // (GEN too masks only the edge tiles: run on every tile, ptxas made the select a branch per
                // element beside the P V in flight, and spilled)
                if (edge) {
#pragma unroll
                    for (int c = 0; c < BN / 8; c++)
#pragma unroll
                        for (int e = 0; e < 4; e++) {
                            const int j = n0 + c * 8 + t4 * 2 + (e & 1);
                            const bool vis = !edge || (j >= klo[e >> 1] && j <= khi[e >> 1]);
                            float x = s[c * 4 + e];
                            s[c * 4 + e] = vis ? x : -CUDART_INF_F;
                        }
                }
                float mx[2] = {mrow[0], mrow[1]};
#pragma unroll
                for (int c = 0; c < BN / 8; c++) {
                    mx[0] = fmaxf(mx[0], fmaxf(s[c * 4], s[c * 4 + 1]));
                    mx[1] = fmaxf(mx[1], fmaxf(s[c * 4 + 2], s[c * 4 + 3]));
                }
                float muse[2];
#pragma unroll
                for (int r = 0; r < 2; r++) {
                    mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
                    mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
                    muse[r] = mx[r] == -CUDART_INF_F ? 0.0f : mx[r] * scale2;
                    corr[r] = ex2(mrow[r] * scale2 - muse[r]); // 0 while the row has seen nothing
                    mrow[r] = mx[r];
                    lrow[r] *= corr[r];
                }
                // Two copies of the exponentials and row sums (the row sums are taken before dropout, sdpa.h)
                // under one uniform branch.  v7: with the dropout test inside one loop ptxas put a branch between
                // consecutive elements (each element's exp2, Philox word, then a jump over them), so GEN's 64
                // exp2 per tile ran one after another, their latencies exposed, bias or not (SASS: MUFU.EX2 and
                // BRA alternating).  Without dropout the loop is now straight-line, as the plain variant's; with
                // it, the factor stays fused per element (the exp2s first and the factors in a second loop
                // spilled 24-56 bytes: 64 Philox words scheduled side by side).
                // Dropout (2026-11-24): one Philox call per row and 8 keys, made once per quad and shared by
                // shuffles (drop_words_quad), per pair of 8-key groups beside their 8 exponentials.
                auto exps = [&](auto drop) { // drop: std::true_type / false_type, a copy of the loop each
                    const uint64_t mine = decltype(drop)::value ? drop_call(p, t.b, t.h, row0 + 8 * (t4 & 1)) +
                                                                      (uint32_t)(n0 >> 3) + (t4 >> 1)
                                                                : 0;
#pragma unroll
                    for (int c0 = 0; c0 < BN / 8; c0 += 2) {
                        uint32_t word[4] = {};
                        if (decltype(drop)::value)
                            drop_words_quad(p.seed, mine + c0, word);
#pragma unroll
                        for (int e8 = 0; e8 < 8; e8++) {
                            const int c = c0 + (e8 >> 2), e = e8 & 3;
                            const float x = ex2(fmaf(s[c * 4 + e], scale2, -muse[e >> 1]));
                            lrow[e >> 1] += x;
                            const uint32_t wq = word[(e8 >> 2) * 2 + (e >> 1)];
                            s[c * 4 + e] = decltype(drop)::value ? x * drop_keep(p, (e & 1) ? wq >> 16 : wq & 0xffffu)
                                                                 : x;
                        }
                    }
                };
                if (GEN && p.drop_threshold) // masked entries are 0 already, whatever the word says
                    exps(std::true_type());
                else
                    exps(std::false_type());
            };
            // P (the accumulator layout of S) as the A fragments of the P V k-steps
            auto pack_p = [&]() {
#pragma unroll
                for (int kk = 0; kk < BN / 16; kk++) {
                    pf[kk][0] = pack2<T>(s[kk * 8 + 0], s[kk * 8 + 1]);
                    pf[kk][1] = pack2<T>(s[kk * 8 + 2], s[kk * 8 + 3]);
                    pf[kk][2] = pack2<T>(s[kk * 8 + 4], s[kk * 8 + 5]);
                    pf[kk][3] = pack2<T>(s[kk * 8 + 6], s[kk * 8 + 7]);
                    if (SPLIT) {
                        float r[8];
#pragma unroll
                        for (int e = 0; e < 8; e++)
                            r[e] = s[kk * 8 + e] - mma_t<T>::to_float(mma_t<T>::from(s[kk * 8 + e]));
#pragma unroll
                        for (int e = 0; e < 4; e++)
                            pl[SPLIT ? kk : 0][e] = pack2<T>(r[2 * e], r[2 * e + 1]);
                    }
                }
            };
            auto keep_p = [&]() {
                keep(pf);
                if (SPLIT)
                    keep(pl);
            };
            auto keep_o = [&]() {
#pragma unroll
                for (int c = 0; c < OC; c++)
                    keep(o[c]);
            };
            auto rescale_o = [&](const float *corr) { // o *= the rows' corr (online softmax)
#pragma unroll
                for (int c = 0; c < OC; c++)
#pragma unroll
                    for (int i = 0; i < ON / 2; i++)
                        o[c][i] *= corr[(i >> 1) & 1];
            };
            // An item's first tile: its Q K^T alone in a turn, then its softmax (P in pf)
            auto first_tile = [&](float *corr) {
                mb_wait(XW_FULLK(gt % ST), (gt / ST) & 1);
                if (C::BT && btma) // (before the fence, as the V wait below: no spin loop with a wgmma in flight)
                    mb_wait(XW_FULLB(gt % ST), (gt / ST) & 1);
                my_turn();
                wg_fence();
                keep(s);
                issue_qk(sK + (gt % ST) * C::KV_BYTES, qbase);
                wg_commit();
                your_turn();
                wg_wait<0>();
                keep(s);
                mb_arrive(XW_EMPTYK(gt % ST));
                softmax(0, corr);
                pack_p();
            };

        // o normalized and stored, and the stats (the item in t)
        auto store_o = [&]() {
            // normalize and store: thread rows row0, row0 + 8; accumulator i of chunk c holds column
            // c * ON + (i / 4) * 8 + t4 * 2 + (i & 1) of row row0 + 8 * ((i / 2) & 1)
#pragma unroll
            for (int r = 0; r < 2; r++) {
                lrow[r] += __shfl_xor_sync(0xffffffffu, lrow[r], 1);
                lrow[r] += __shfl_xor_sync(0xffffffffu, lrow[r], 2);
            }
            // rows [qrow, qrow + nq) of the packed q are this sequence's (dense: 0 and Sq)
            int qrow = 0, nq = p.Sq;
            if (p.off_q.p)
                ragged_span(p.off_q, t.b, p.Sq, &qrow, &nq);
            using OT = typename std::conditional<SPLIT, float, T>::type;
            OT *op = static_cast<OT *>(const_cast<void *>(p.o.p));
            // v10's key split: o and stats are the workspace's partials, [nsplit x B, Hq, Sq, Dv] and [.., 1]
            // (the host's views), split s of batch b at b + s B; the same stores, no branch (a branch here made
            // ptxas serialize the wgmmas, C7520)
            const int ob = t.b + t.split * p.B;
#pragma unroll
            for (int r = 0; r < 2; r++) {
                const int i = r ? row1 : row0, h = t.h + (r ? hr1 : hr0);
                if (i >= nq) // past Sq, or (ragged) the next sequence's row: never written
                    continue;
                // empty: every score -inf (l == 0 then too; written so, ptxas's spills are v11's); a NaN l (+inf /
                // NaN scores) stays NaN
                const bool empty = mrow[r] == -CUDART_INF_F || lrow[r] == 0.0f;
                const float inv = empty ? 0.0f : 1.0f / lrow[r];
                OT *orow =
                    op + (int64_t)ob * p.o.st[0] + (int64_t)h * p.o.st[1] + (int64_t)(qrow + i) * p.o.st[2];
#pragma unroll
                for (int c = 0; c < OC; c++)
#pragma unroll
                    for (int q = 0; q < ON / 8; q++) {
                        const int d = c * ON + q * 8 + t4 * 2;
                        if (d >= p.Dv)
                            continue;
                        const float x0 = o[c][q * 4 + r * 2] * inv, x1 = o[c][q * 4 + r * 2 + 1] * inv;
                        if (SPLIT) // d even, o's strides multiples of 8 elements, base 8-byte aligned (host checks)
                            *reinterpret_cast<float2 *>(orow + d) = make_float2(x0, x1);
                        else
                            *reinterpret_cast<uint32_t *>(orow + d) = pack2<T>(x0, x1);
                    }
                if (t4 == 0 && p.stats.p)
                    st_any(p.stats.p, p.stats.dtype, off4(p.stats, ob, h, qrow + i, 0),
                           empty ? -CUDART_INF_F : (mrow[r] * scale2 + log2f(lrow[r])) * kLn2);
            }
        };

        // v9 (walk.chain): the stream.  The items' tiles as one sequence: each turn issues the next tile's
        // Q K^T (this item's, or the next item's first) and this tile's P V, so an item's last P V goes to the
        // tensor cores beside the next item's first Q K^T, and o is stored while the softmax of that tile waits
        // its turn.  One shape for every turn (the Q K^T issued even after the last item, on this V tile,
        // its S never read): a first tile skipped by a branch before the main loop, or a wgmma under a branch
        // on the chain, made ptxas serialize every wgmma of the kernel (C7520).
        constexpr bool CHAIN = !GEN && C::SMEM_Q2 <= 227 * 1024;
        if (CHAIN && walk.chain) {
            int w = next_item(blockIdx.x);
            if (w < walk.nwork) { // every item has a key tile (the host checks)
                t = item_of(p, w, walk, BM, BN);
                begin_item();
                mb_wait(XW_FULLQ(qs), qph);
                float corr[2];
                first_tile(corr);
                for (int it = 0;;) { // tile it of t is in P (pf); ring position ct
                    const int ct = gt + it, cs = ct % ST, ns = (ct + 1) % ST;
                    const bool same = it + 1 < t.ntiles; // the next tile is this item's
                    bool more = same;
                    int wn = w;
                    if (!same) {
                        mb_arrive(XW_EMPTYQ(qs)); // every Q K^T of this item is done
                        wn = next_item(w + gridDim.x);
                        more = wn < walk.nwork;
                        if (more && !walk.next)
                            mb_wait(XW_FULLQ((wi + 1) % walk.nq), ((wi + 1) / walk.nq) & 1);
                    }
                    const uint32_t nqb = same ? qbase : (((wi + 1) % walk.nq) ? sB : sQ) + cw * 64 * 128;
                    if (more) // the next item's first K follows this item's last V in the ring
                        mb_wait(XW_FULLK(ns), ((ct + 1) / ST) & 1);
                    mb_wait(XW_FULLV(cs), (ct / ST) & 1);
                    my_turn();
                    wg_fence();
                    keep(s);
                    keep_o();
                    keep_p();
                    issue_qk(more ? sK + ns * C::KV_BYTES : sV + cs * C::KV_BYTES,
                             more ? nqb : sV + cs * C::KV_BYTES + cw * 64 * 128);
                    wg_commit();
                    issue_pv(cs);
                    wg_commit();
                    your_turn();
                    wg_wait<1>(); // S of the next tile is in
                    keep(s);
                    if (more)
                        mb_arrive(XW_EMPTYK(ns));
                    if (!same) { // this item's last P V: o complete, stored while the next item's S waits
                        wg_wait<0>();
                        keep_o();
                        keep_p();
                        mb_arrive(XW_EMPTYV(cs)); // (the Q K^T past the last item read it too: in as well)
                        store_o();
                        gt += t.ntiles;
                        if (!more)
                            break;
                        w = wn;
                        t = item_of(p, w, walk, BM, BN);
                        begin_item(); // o = 0, the row maxima -inf: corr below is 0
                        it = -1;
                    }
                    softmax(it + 1, corr);
                    wg_wait<0>(); // P V of this tile is in
                    keep_o();
                    keep_p();
                    if (same)
                        mb_arrive(XW_EMPTYV(cs));
                    rescale_o(corr);
                    pack_p();
                    it++;
                }
            }
        } else {
            // v8: each item alone
            for (int w = blockIdx.x;; w += gridDim.x) {
                w = next_item(w);
                if (w >= walk.nwork)
                    break;
                t = item_of(p, w, walk, BM, BN);
                if (t.skip)
                    continue;
                begin_item();

                mb_wait(XW_FULLQ(qs), qph);
                if (t.ntiles > 0) {
                    float corr[2];
                    first_tile(corr);
                    for (int it = 1; it < t.ntiles; it++) {
                        const int ct = gt + it, st = ct % ST, ps = (ct - 1) % ST;
                        mb_wait(XW_FULLK(st), (ct / ST) & 1);
                        // GEN: the previous tile's V too, before the fence: the spin loop between the two GEMMs
                        // (below) is a divergent path with Q K^T in flight, and in this variant ptxas then
                        // serializes every wgmma (C7520).  V of tile ct - 1 was asked for before K of tile ct, so
                        // this wait is nearly always over at once.
                        if (GEN)
                            mb_wait(XW_FULLV(ps), ((ct - 1) / ST) & 1);
                        if (C::BT && btma) // this tile's bias, asked for right after its K
                            mb_wait(XW_FULLB(st), (ct / ST) & 1);
                        my_turn();
                        wg_fence();
                        keep(s);
                        keep_o();
                        keep_p();
                        issue_qk(sK + st * C::KV_BYTES, qbase);
                        wg_commit();
                        if (!GEN)
                            mb_wait(XW_FULLV(ps), ((ct - 1) / ST) & 1);
                        issue_pv(ps);
                        wg_commit();
                        your_turn();
                        wg_wait<1>(); // S of this tile is in
                        keep(s);
                        mb_arrive(XW_EMPTYK(st));
                        softmax(it, corr);
                        wg_wait<0>(); // P V of the previous tile is in
                        keep_o();
                        keep_p();
                        mb_arrive(XW_EMPTYV(ps));
                        rescale_o(corr);
                        pack_p();
                    }
                    mb_arrive(XW_EMPTYQ(qs)); // every Q K^T of this item is done: the buffer may take another Q
                    const int lt = gt + t.ntiles - 1, ls = lt % ST;
                    mb_wait(XW_FULLV(ls), (lt / ST) & 1);
                    my_turn();
                    wg_fence();
                    keep_o();
                    keep_p();
                    issue_pv(ls);
                    wg_commit();
                    your_turn();
                    wg_wait<0>();
                    keep_o();
                    keep_p();
                    mb_arrive(XW_EMPTYV(ls));
                    gt += t.ntiles;
                } else {
                    mb_arrive(XW_EMPTYQ(qs));
                }

                store_o();
            }
        }
        if (cw == 0)
            my_turn(); // the other consumer's last hand-over
    }
#undef XW_FULLQ
#undef XW_EMPTYQ
#undef XW_ITEM
#undef XW_FULLK
#undef XW_FULLV
#undef XW_EMPTYK
#undef XW_EMPTYV
#undef XW_FULLB
#undef XW_EMPTYB
#else
    __trap(); // not the sm_90a pass: the engine never launches this (it refuses devices other than 9.0)
#endif
}

// Schedule knobs, read once: XDNN_SDPA_WGMMA_PINGPONG=0 lets both consumers issue their GEMMs freely,
// XDNN_SDPA_WGMMA_PERSISTENT=0 launches one block per work item instead of one per SM (for bisecting; measured
// on the H100, ping-pong gains 5-12%, the persistent grid 2-12% without a causal mask).
// XDNN_SDPA_WGMMA_BIAS_TMA=0 keeps v6's per-element global bias loads for every bias (A/B of v7).
// XDNN_SDPA_WGMMA_CAUSAL (v8), a band open on one side (causal) with dense q: 0 one block per item, (b, h) major
// (v7); 1 one block per item in longest-first sections (item_of's sec); 2 (the default) a persistent grid that
// draws the items in that order from a counter in the workspace (PERSISTENT=0 makes 2 into 1).
// XDNN_SDPA_WGMMA_QBUF=1 keeps one Q buffer on the persistent grid (v8: two where shared memory allows).
// XDNN_SDPA_WGMMA_CHAIN=0 ends each work item before the next begins (v8) instead of issuing the next item's
// first Q K^T beside the last P V (v9, where there are two Q buffers).
// XDNN_SDPA_WGMMA_PACK=0 (v10) keeps one head per tile and every item's keys in one block where the plain
// grid has fewer items than SMs; XDNN_SDPA_WGMMA_SPLITS=n caps v10's key splits at n (1: packing alone).
// XDNN_SDPA_WGMMA_WIDE=0 (v11) keeps 128-key tiles where the wide tile (176 keys at DP 128, v13: 192 at DP 64)
// would be taken (wide_tile); 1 takes it without a band only (v11's default); 2, the default since v12, for a
// band open on one side (causal-like) too; 3 as 2, and the 192-key tile at DP 64 below 2048 keys as well.  XDNN_SDPA_WGMMA_AHEAD=0 (v11) keeps the counter's walk
// drawing each item when its producer gets to it (and so the stream off there).
// XDNN_SDPA_WGMMA_DESC=0 (v12) runs bf16 plain attention (no bias, no dropout, 16-bit o) on instances that
// build every k-step's wgmma descriptors whole (v11), the A/B of kDescAdd.
struct knobs {
    int pingpong, persistent, sms, bias_tma, smem, causal, qbuf, chain, pack, splits, wide, ahead, desc_add;
};
static knobs read_knobs()
{
    knobs k = {};
    {
        const char *pp = getenv("XDNN_SDPA_WGMMA_PINGPONG"), *pe = getenv("XDNN_SDPA_WGMMA_PERSISTENT"),
                   *bt = getenv("XDNN_SDPA_WGMMA_BIAS_TMA"), *ca = getenv("XDNN_SDPA_WGMMA_CAUSAL"),
                   *qb = getenv("XDNN_SDPA_WGMMA_QBUF"), *ch = getenv("XDNN_SDPA_WGMMA_CHAIN");
        int dev = 0, sms = 0, smem = 0;
        if (cudaGetDevice(&dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess)
            sms = 0, smem = 0;
        k.sms = sms;
        k.smem = smem;
        k.persistent = sms > 0 && !(pe && pe[0] == '0');
        k.pingpong = !(pp && pp[0] == '0');
        k.bias_tma = !(bt && bt[0] == '0');
        k.causal = ca && ca[0] >= '0' && ca[0] <= '2' ? ca[0] - '0' : 2;
        if (!k.persistent && k.causal == 2)
            k.causal = 1;
        k.qbuf = qb && qb[0] == '1' ? 1 : 2;
        k.chain = !(ch && ch[0] == '0');
        const char *pk = getenv("XDNN_SDPA_WGMMA_PACK"), *sp = getenv("XDNN_SDPA_WGMMA_SPLITS");
        k.pack = !(pk && pk[0] == '0');
        k.splits = sp ? atoi(sp) : 0;
        const char *wd = getenv("XDNN_SDPA_WGMMA_WIDE");
        k.wide = wd && wd[0] >= '0' && wd[0] <= '3' ? wd[0] - '0' : 2;
        const char *ah = getenv("XDNN_SDPA_WGMMA_AHEAD");
        k.ahead = !(ah && ah[0] == '0');
        const char *da = getenv("XDNN_SDPA_WGMMA_DESC");
        k.desc_add = !(da && da[0] == '0');
    }
    return k;
}
// Read once per process; a function-local static is initialized once even when two threads make their first
// attention call together (a flag set before the other fields let the second copy half-read knobs).
knobs knobs_of()
{
    static const knobs k = read_knobs();
    return k;
}

// v10: few query rows (chunked prefill, speculative decode).  Where the plain grid (one item per 128 rows of a
// head) has fewer items than SMs, a tile packs a GQA group's heads (pack = Hq / Hk, a divisor of 128: the tile
// is pack x 128 / pack positions, one TMA box) so the group's K/V is streamed once, not once per q head, and
// the items' keys are split over blocks so that the grid fills the SMs (nsplit shares of the key tiles, at most
// one block per SM in all: an item costs ~3.6 us beside ~1.7 us a tile, so more shares than SMs lose), combined
// by sdpa_splitkv's pass.  Dense q and k/v, no bias or dropout (GEN).  nsplit shrinks to what ws_bytes holds.
struct pack_plan {
    int pack, nmblk, nsplit;
};
pack_plan plan_pack(const xk_sdpa &p, bool gen, const knobs &k, int sms, int bn, size_t ws_bytes)
{
    pack_plan pl = {0, 0, 1};
    const int G = p.Hk > 0 ? p.Hq / p.Hk : 0;
    const int64_t plain = (int64_t)(p.Sq + 127) / 128 * p.B * p.Hq;
    if (!k.pack || gen || p.off_q.p || p.off_kv.p || sms <= 0 || plain >= sms || G < 1 || 128 % G != 0)
        return pl;
    const int P = 128 / G; // positions per tile
    const int64_t nmblk = (p.Sq + P - 1) / P, items = nmblk * p.B * p.Hk;
    const int ntiles = (p.Skv + bn - 1) / bn;
    int ns = (int)(sms / items);
    if (k.splits > 0 && ns > k.splits)
        ns = k.splits;
    ns = ns > ntiles ? ntiles : ns < 1 ? 1 : ns;
    const int per = (ntiles + ns - 1) / ns;
    ns = (ntiles + per - 1) / per; // no share left empty by the rounding
    while (ns > 1 && xk_sdpa_splitkv_ws(&p, ns) > ws_bytes)
        ns--;
    pl.pack = G, pl.nmblk = (int)nmblk, pl.nsplit = ns;
    return pl;
}

// v10's Q map: dims [D, Hq, Sq, B] (heads before positions), boxes of 64 columns x pack heads x 128 / pack
// positions, so that box row r is head h + r % pack, position m0 + r / pack (the tile's position-major packing)
bool make_pack_map(CUtensorMap *m, const void *base, bool bf16, const int64_t *dims, const int64_t *st, int pack)
{
    const cuuint64_t gdim[4] = {(cuuint64_t)dims[3], (cuuint64_t)dims[1], (cuuint64_t)dims[2], (cuuint64_t)dims[0]};
    const int64_t s[3] = {st[1], st[2], st[0]};
    cuuint64_t gst[3];
    for (int i = 0; i < 3; i++)
        gst[i] = (cuuint64_t)(s[i] ? s[i] : 8) * 2;
    const cuuint32_t box[4] = {64, (cuuint32_t)pack, (cuuint32_t)(128 / pack), 1};
    return encode_map16(m, base, bf16, gdim, gst, box);
}

// v7: the bias through a tensor map when TMA can describe it: q's 16-bit dtype (the tile is converted as T),
// keys contiguous, rows not broadcast (a zero row stride over Sq > 1 rows has no map), the other strides in
// multiples of 16 bytes and a 16-byte aligned base (make_map checks it), and SMEM_BIAS within the device's
// limit.  The map is over the bias's own dims [B or 1, Hq or 1, Sq, Skv] (a broadcast b or h is a dim of 1,
// read at coordinate 0), in boxes of 64 keys x BM rows.  Anything else (f32 and other dtypes, odd row strides
// such as Skv % 8 != 0, [.., 1, Skv]) keeps v6's loads.
template <int DP> bool bias_map(CUtensorMap *m, const xk_sdpa &p, const knobs &k)
{
    const xk_tensor &b = p.bias;
    if (!b.p || !k.bias_tma || !xk_sdpa_bias_tma_layout(&p, p.off_q.p || p.off_kv.p) || wg_cfg<DP>::SMEM_BIAS > k.smem)
        return false;
    const int64_t dims[4] = {b.st[0] ? p.B : 1, b.st[1] ? p.Hq : 1, p.Sq, p.Skv};
    return make_map(m, b.p, p.q.dtype == XK_BF16, dims, b.st, wg_cfg<DP>::BM);
}

// v9's stream of tiles takes no item without a key tile: dense q without seq lens, and every row block seeing
// a key under the band (item_of's arithmetic with lq = Sq, lkv = Skv; rows past Sq see nothing, so the last
// block's rows are clipped as there).
bool every_item_has_keys(const xk_sdpa &p, int bm)
{
    if (p.off_q.p || p.off_kv.p || p.len_q.p || p.len_kv.p || p.Skv < 1)
        return false;
    const int64_t off = p.bottom_right ? (int64_t)p.Skv - p.Sq : 0;
    for (int64_t m0 = 0; m0 < p.Sq; m0 += bm) {
        const int64_t rhi = m0 + bm < p.Sq ? m0 + bm : p.Sq;
        int64_t jlo = 0, jhi = p.Skv;
        if (p.left >= 0 && m0 + off - p.left > jlo)
            jlo = m0 + off - p.left;
        if (p.right >= 0 && rhi + off + p.right < jhi)
            jhi = rhi + off + p.right;
        if (jhi <= jlo)
            return false;
    }
    return true;
}

template <typename T, int DP, bool GEN, bool SPLIT, int BNX = 0, bool kDescAdd = true>
cudaError_t launch_wg(const xk_sdpa &p, const int64_t (*st)[4], int *sched, void *ws, size_t ws_bytes,
                      cudaStream_t s)
{
    using C = wg_cfg<DP, BNX>;
    const knobs k = knobs_of();
    CUtensorMap tb;
    const bool btma = GEN && C::BT && bias_map<DP>(&tb, p, k);
    const bool bf = p.q.dtype == XK_BF16;
    // a packed side is one batch of T rows (st: the engine's [0, head, token, 1] strides)
    const int64_t bq = p.off_q.p ? 1 : p.B, bkv = p.off_kv.p ? 1 : p.B;
    const int64_t qd[4] = {bq, p.Hq, p.Sq, p.D}, kd[4] = {bkv, p.Hk, p.Skv, p.D}, vd[4] = {bkv, p.Hk, p.Skv, p.Dv};
    const pack_plan pk = plan_pack(p, GEN, k, k.sms, C::BN, ws ? ws_bytes : 0);
    CUtensorMap tq, tk, tv;
    if (!(pk.pack ? make_pack_map(&tq, p.q.p, bf, qd, st[0], pk.pack) : make_map(&tq, p.q.p, bf, qd, st[0], C::BM)) ||
        !make_map(&tk, p.k.p, bf, kd, st[1], C::BN) || !make_map(&tv, p.v.p, bf, vd, st[2], C::BN))
        return cudaErrorInvalidValue;
    if (!btma)
        tb = tq; // not read
    // Items of one length (no band, or a band bounded on both sides) suit the persistent grid's static walk.
    // A band open on one side gives items of every length (rev: a causal-like band, longest at the end): v8
    // orders them longest first in L2-sized sections of heads (item_of's sec) and, by default, a persistent grid
    // draws them from a counter (walk.next), each SM taking the next item as it frees, as the hardware's block
    // scheduler would, without a block's prologue per item and with the next item's Q and K/V loaded while the
    // consumers finish.  Ragged q keeps v7's one block per item.
    const bool uniform = (p.left < 0) == (p.right < 0);
    wg_walk walk;
    walk.rev = p.right >= 0 && p.left < 0;
    // ragged q: T / BM + B slots per head (slot_seq), the empty ones passed over
    const int64_t nmblk = pk.pack    ? pk.nmblk
                          : p.off_q.p ? (int64_t)p.Sq / C::BM + p.B
                                      : (p.Sq + C::BM - 1) / C::BM;
    const int64_t nwork =
        pk.pack ? nmblk * p.B * p.Hk * pk.nsplit : nmblk * (p.off_q.p ? 1 : p.B) * p.Hq; // v10: <= the SMs
    if (nwork > INT32_MAX)
        return cudaErrorInvalidValue;
    walk.nmblk = (int)nmblk, walk.nwork = (int)nwork, walk.sec = 0, walk.next = NULL, walk.ahead = 0;
    walk.pack = pk.pack, walk.nsplit = pk.nsplit;
    xk_sdpa pk_p = p; // v10's key split: o and stats become the partials in the workspace (store_o)
    if (pk.nsplit > 1) {
        float *wo, *wl;
        xk_splitkv_ws_parts(&p, pk.nsplit, ws, &wo, &wl);
        const int64_t rows = (int64_t)p.Sq * p.Hq;
        pk_p.o.p = wo;
        pk_p.o.st[0] = rows * p.Dv, pk_p.o.st[1] = (int64_t)p.Sq * p.Dv, pk_p.o.st[2] = p.Dv, pk_p.o.st[3] = 1;
        pk_p.stats.p = wl;
        pk_p.stats.dtype = XK_F32;
        pk_p.stats.st[0] = rows, pk_p.stats.st[1] = p.Sq, pk_p.stats.st[2] = 1, pk_p.stats.st[3] = 0;
    }
    const int mode = uniform || p.off_q.p || pk.pack ? 0 : k.causal;
    if (mode >= 1) { // sections: as many kv heads' K and V as fit in 32 MB of L2 (a power of 2), their q heads
        const int64_t kv_bytes = (int64_t)p.Skv * (p.D + p.Dv) * 2;
        int64_t sec = 1;
        while (sec * 2 * kv_bytes <= (32 << 20))
            sec *= 2;
        sec *= p.Hq / p.Hk;
        walk.sec = (int)(sec < (int64_t)p.B * p.Hq ? sec : (int64_t)p.B * p.Hq);
    }
    if (mode == 2 && sched && nwork > k.sms) { // a zeroed counter for this launch (the engine's workspace)
        cudaError_t e = cudaMemsetAsync(sched, 0, sizeof(int), s);
        if (e != cudaSuccess)
            return e;
        walk.next = sched;
    }
    // (H100, v7: causal b4h16s4096d128 0.511 ms with one block per item, 0.520 with the static persistent walk;
    // non-causal 0.906 / 0.888, b16h16s1024d64 0.212 / 0.185)
    const int grid = k.persistent && (uniform || walk.next) && nwork > k.sms ? k.sms : (int)nwork;
    // two Q buffers where a block takes several items and the bias tiles do not hold the room
    walk.nq = grid < nwork && !btma && k.qbuf == 2 && C::SMEM_Q2 <= k.smem ? 2 : 1;
    const int smem = walk.nq == 2 ? C::SMEM_Q2 : btma ? C::SMEM_BIAS : C::SMEM;
    // v9: the next item's first Q K^T beside the last P V needs its Q loaded an item ahead (two buffers), every
    // item's rows its own (dense q) and a key tile in every item (the stream has no turn for an empty one)
    // (H100, session 10: on the counter's walk, causal, it lost 1-3%: the next item is drawn by an atomic only
    // when the producer reaches it, so its Q and first K arrive after the consumers want them; the static walk
    // gained 1-2.5%).  v11: the counter's walk too where its producer works an item ahead (walk.ahead).
    walk.ahead = walk.next && walk.nq == 2 && k.ahead;
    walk.chain = k.chain && walk.nq == 2 && (!walk.next || walk.ahead) && !p.off_q.p && !GEN && !pk.pack &&
                 every_item_has_keys(p, C::BM);
    static int opted = 0; // the dynamic shared memory this instantiation may use so far
    if (opted < smem) {
        cudaError_t e =
            cudaFuncSetAttribute(sdpa_fwd_wgmma<T, DP, GEN, SPLIT, BNX, kDescAdd>,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
        if (e != cudaSuccess)
            return e;
        opted = smem;
    }
    sdpa_fwd_wgmma<T, DP, GEN, SPLIT, BNX, kDescAdd>
        <<<grid, kThreads, smem, s>>>(tq, tk, tv, tb, pk_p, walk, k.pingpong, btma);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess || pk.nsplit <= 1)
        return e;
    // v10: the shares into o and stats (partials in o's dtype, natural-log lse)
    return (cudaError_t)xk_sdpa_splitkv_combine(&p, pk.nsplit, ws, SPLIT ? XK_F32 : p.q.dtype, 1, s);
}

// v11: the wide key tile (BN 176 at DP 128; v13: 192 at DP 64, wide_bn) where there is no band (no mask but seq lens),
// q and k/v dense, 16-bit o (f32 o's P residual needs 44 registers more than the consumers have), no bias or dropout,
// and v10's packing not taken.  flash-attention-3's tile at D = 128 without a causal mask: the per-tile costs that do
// not grow with the keys (the max shuffles, the o rescale, the turn's barriers and the GEMMs' issue and wait) over
// 1.375x the matrix work.  A band bounded on both sides keeps 128 (its edge tiles); one open on one side (causal) takes
// 176 too since v12 (one Q buffer there as well): v11 measured it level with 128 (items of every length, the edge
// tiles), but with v12's shorter issue it gained 3-5 % (H100, session 15: causal b4h16s4096d128 0.4921 / 0.4986 ->
// 0.4776 / 0.4716 ms, Llama GQA 0.4989 / 0.4973 -> 0.4773 / 0.4739).
template <int DP> constexpr int wide_bn = DP <= 64 ? 192 : 176;
// At DP 64 the 192-key tile only from 2048 keys (WIDE=3 takes it at any length, for the tests): H100, session 15,
// 192 / 128 keys: b4h16s4096d64 0.6445 / 0.6866 ms, causal 0.3617 / 0.3735, but b16h16s1024d64 0.2104 / 0.2079
// and causal 0.1605 / 0.1512 (1024 keys are 5.33 tiles of 192: 11 % computed past the end, and the causal edge
// tiles a third of the items' tiles).
constexpr int64_t kWide64MinKeys = 2048;
template <int DP> bool wide_tile(const xk_sdpa &p, const knobs &k, size_t ws_bytes)
{
    const bool band = p.left >= 0 || p.right >= 0, one_side = (p.left < 0) != (p.right < 0);
    const bool long_enough = DP > 64 || k.wide == 3 || p.Skv >= kWide64MinKeys;
    return (k.wide == 1 ? !band : k.wide >= 2 && (!band || one_side)) && long_enough && !p.off_q.p && !p.off_kv.p &&
           wg_cfg<DP, wide_bn<DP>>::SMEM <= k.smem && !plan_pack(p, false, k, k.sms, 128, ws_bytes).pack;
}

template <typename T, bool SPLIT>
cudaError_t launch_t(const xk_sdpa &p, const int64_t (*st)[4], int *sched, void *ws, size_t wb, cudaStream_t s)
{
    const int d = p.D > p.Dv ? p.D : p.Dv;
    const bool plain = !p.bias.p && !p.drop_threshold;
    if constexpr (std::is_same<T, __nv_bfloat16>::value && !SPLIT) // XDNN_SDPA_WGMMA_DESC=0: v11's descriptors
        if (plain && !knobs_of().desc_add) {
            if (d <= 64 && wide_tile<64>(p, knobs_of(), ws ? wb : 0))
                return launch_wg<T, 64, false, false, wide_bn<64>, false>(p, st, sched, ws, wb, s);
            if (d > 64 && d <= 128 && wide_tile<128>(p, knobs_of(), ws ? wb : 0))
                return launch_wg<T, 128, false, false, wide_bn<128>, false>(p, st, sched, ws, wb, s);
            return d <= 64    ? launch_wg<T, 64, false, false, 0, false>(p, st, sched, ws, wb, s)
                   : d <= 128 ? launch_wg<T, 128, false, false, 0, false>(p, st, sched, ws, wb, s)
                              : launch_wg<T, 256, false, false, 0, false>(p, st, sched, ws, wb, s);
        }
    if (!SPLIT && plain && d <= 64 && wide_tile<64>(p, knobs_of(), ws ? wb : 0))
        return launch_wg<T, 64, false, false, wide_bn<64>>(p, st, sched, ws, wb, s);
    if (!SPLIT && plain && d > 64 && d <= 128 && wide_tile<128>(p, knobs_of(), ws ? wb : 0))
        return launch_wg<T, 128, false, false, wide_bn<128>>(p, st, sched, ws, wb, s);
    if (p.bias.p || p.drop_threshold)
        return d <= 64    ? launch_wg<T, 64, true, SPLIT>(p, st, sched, ws, wb, s)
               : d <= 128 ? launch_wg<T, 128, true, SPLIT>(p, st, sched, ws, wb, s)
                          : launch_wg<T, 256, true, SPLIT>(p, st, sched, ws, wb, s);
    return d <= 64    ? launch_wg<T, 64, false, SPLIT>(p, st, sched, ws, wb, s)
           : d <= 128 ? launch_wg<T, 128, false, SPLIT>(p, st, sched, ws, wb, s)
                      : launch_wg<T, 256, false, SPLIT>(p, st, sched, ws, wb, s);
}

} // namespace

extern "C" int xk_sdpa_fwd_wgmma_built(void)
{
#ifdef XK_HAVE_SM90A
    return 1;
#else
    return 0;
#endif
}

extern "C" int xk_sdpa_fwd_wgmma_smem(int D)
{
    return D <= 64 ? wg_cfg<64>::SMEM : D <= 128 ? wg_cfg<128>::SMEM : D <= 256 ? wg_cfg<256>::SMEM : 1 << 30;
}

extern "C" size_t xk_sdpa_fwd_wgmma_ws(const xk_sdpa *p, int sm_count, int *pack, int *nsplit)
{
    const int d = p->D > p->Dv ? p->D : p->Dv;
    const pack_plan pk = plan_pack(*p, p->bias.p || p->drop_threshold, knobs_of(), sm_count, d <= 128 ? 128 : 64,
                                   (size_t)-1);
    *pack = pk.pack;
    *nsplit = pk.nsplit;
    return pk.nsplit > 1 ? xk_sdpa_splitkv_ws(p, pk.nsplit) : 0;
}

extern "C" int xk_sdpa_fwd_wgmma(const xk_sdpa *p, const int64_t (*qkv_st)[4], int *sched, void *ws, size_t ws_bytes,
                                 void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if ((int64_t)p->B * p->Hq * p->Sq == 0)
        return 0;
    if (p->D < 1 || p->D > 256 || p->Dv < 1 || p->Dv > 256 || !(p->scale > 0.0f))
        return (int)cudaErrorInvalidValue;
    const bool f32o = p->o.dtype == XK_F32; // SPLIT: float2 stores (the engine checks o's strides; the base here)
    if ((f32o && (uintptr_t)p->o.p % 8 != 0) || (!f32o && p->o.dtype != p->q.dtype))
        return (int)cudaErrorInvalidValue;
    const bool bf = p->q.dtype == XK_BF16;
    const size_t wb = ws_bytes;
    cudaError_t e = f32o ? (bf ? launch_t<__nv_bfloat16, true>(*p, qkv_st, sched, ws, wb, s)
                               : launch_t<__half, true>(*p, qkv_st, sched, ws, wb, s))
                         : (bf ? launch_t<__nv_bfloat16, false>(*p, qkv_st, sched, ws, wb, s)
                               : launch_t<__half, false>(*p, qkv_st, sched, ws, wb, s));
    return (int)e;
}
