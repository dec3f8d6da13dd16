// conv_igemm_wgmma_sm90a.cu — the Hopper implicit-GEMM forward convolution (the conv_igemm_wgmma engine,
// src/gpu/eng_conv_wgmma.c): 1-/2-/3-D channels-last x, K(T)RSC w, groups 1, f16/bf16, C % 8 == 0.
//
// GEMM view (as conv_igemm.cu): Y[m, k] = sum_j A[m, j] B[j, k], m = (n, p, q) over N*P*Q output pixels,
// k over K filters, j = (r, s, c) over R*S*C (c fastest); A[m, j] = x[n, p*sh - ph + r*dh, q*sw - pw + s*dw, c]
// (0 in the padding), B[j, k] = w[k, r, s, c].  Neither is materialised.
//
// Persistent CTAs (one per SM) loop over the 128 x BN tiles of Y (BN = 64 or 128, chosen per K by the host)
// and their split-K ranges, with 3 warpgroups; the ring of stages runs on across tiles, so the producer loads
// the next tile's slices while the consumers run the last one's epilogue (a 1x1 conv's reduction is 1-4
// slices: without that overlap every tile paid the load latency and the store in turn):
//   warpgroup 0, the producer (setmaxnreg down to 80): its 128 threads gather each 64-deep k slice of A
//     (128 rows x 128 bytes) and B (BN rows x 128 bytes) with 16-byte cp.async, zero-filled (src-size 0) in
//     the padding and past M, K and R*S*C, straight into the 128-byte swizzle a wgmma descriptor reads
//     (16-byte chunk c of row r at chunk c ^ (r % 8): what TMA's SWIZZLE_128B writes).  A thread waits for
//     its own copies LAG slices later, fences them into the async proxy and arrives on the slice's "full"
//     mbarrier (128 arrivals), so the copies of LAG slices stay in flight per thread.
//   warpgroups 1 and 2, the consumers (setmaxnreg up to 208): 64 rows each, wgmma m64nWNk16 from shared
//     memory (4 k-steps per slice), one slice's wgmma group kept in flight; a slice's "empty" mbarrier
//     (256 arrivals) hands its buffers back once the group after it is issued and it has retired.
//     PP instances (session 12, the ping-pong schedule: kcw_consume_pingpong): each consumer takes every other
//     work item whole (128 x 64, two m64n64k16 a k-step), the two taking turns at the tensor pipe, so that one
//     warpgroup's drain and store run while the other's wgmmas do (the "empty" mbarrier: 128 arrivals).
// ST stages fill 192 KiB (8 / 6 for BN = 64 / 128): one CTA per SM.  (A 256-wide tile's 128 accumulators a
// consumer thread spilled in the epilogue, and its producer's 16 rows of B in the mainloop: 64 and 128 only.)
// Split-K (splits > 1): work item z of a tile reduces k slices [z * kt_per, ...) and stores its raw f32 tile to
// part[z][M][K]; conv_igemm's ordered reduction (kconv_igemm_reduce) sums, runs the epilogue and stores y.
// Otherwise the fused epilogue (conv_epi.cuh) runs on the accumulators and y is stored through its strides:
// from registers (16-byte stores after a quad transpose), or, on 128-wide tiles of 16-bit y with 16-byte
// aligned rows (session 9), through shared-memory staging rows that one bulk copy per row writes to y while
// the consumers run the next tile's wgmmas (kcw_stage_*; XDNN_CONV_WGMMA_NO_STAGE=1 keeps the register store).
// conv_dgrad (conv_dgrad.h) runs here one stride phase at a time, as the forward conv of dy with the phase's
// flipped, C/K-swapped weights, y the phase's sub-lattice of dx; an empty phase on the same lattice (the 1x1
// stride-2 projection's three) is zero-filled by the store of the phase beside it (nz offsets from each row).
// genstats (stats set, unsplit; src/gpu/genstats.h): the store also writes, per 128-row M tile t and filter
// k, the (count, mean, M2) of the tile's y[., k] as stored (rounded to y's dtype) to stats[(t * K + k) * 4]:
// each thread's two rows per column give (mean, M2) exactly, a three-round xor-shuffle reduce-scatter of Chan
// merges (lanes 4, 8, 16 apart hold the same columns) gives each warp's 16 rows, and after a consumer barrier
// one thread per column merges the 8 warps in order: deterministic, and no sum / sum of squares in f32.
// 3-D convs (session 9) run the D3 instances: m = (n, o, p, q), j = (t, r, s, c), the depth bounds-tested like
// H and W; the 1-/2-D instances keep the code they had (D3 false folds the depth away), with the staged store.
// The MP instances (3-D code, session 11) run the stride phases of a conv_dgrad in one launch
// (kconv_wgmma_phases): each work item finds its phase's geometry, weights and dx sub-lattice in a table
// (kcw_phases).  Their own instances: read through the table, the geometry costs the lone 3-D convs ~1.4x
// (session 11, call 1: C64 32^3 fwd 0.094 -> 0.146 ms), so every other instance keeps its one geometry g.
// The 32-wide tile (session 12; BN = 32, wgmma m64n32k16, D3 code, register store): the 3-D UNet's K = 32 layers
// and their C = 32 (and the C = 4 stem's) dgrads left half of the 64-wide tile idle; its 20 KiB stages fit 11 in
// the ring (a slice more in flight for the gather-bound 3-D producer: 9 ran the K = 32 layers ~5% slower in
// session 12; x gathered through L1 by cp.async.ca, tried with 9 so that L1 kept room, won 1-7% on this tile, lost
// up to 6% on the 64-wide 3-D ones and did not make up the two stages: not kept).  It runs any 1-/2-/3-D conv (the
// D3 code folds a unit depth); the engine picks it (eng_conv_wgmma.c, XDNN_CONV_WGMMA_BN32).
// A y of K % 8 != 0 channels (a dgrad's dx of C = 4): the register store's 16-byte blocks are off, pairs only.
// The 3-D code's TMA producer (session 13; the engine's XDNN_CONV_WGMMA_TMA3D): one thread loads each slice
// through a 5-d im2col map of x (kcw_load_tap5: a box of the tile's 128 output pixels at one tap (t, r, s)) and
// w's tiled map, as the 1-/2-D code does through its 4-d map; C = 32 (the 3-D UNet's 64^3 layer and the K = 32
// dgrads' dy) makes a slice two taps' 32-channel boxes, A in two 64-byte swizzled halves (g.tma == 2,
// kcw_a_desc).  Measured 1.14-1.51x faster than the gather on the UNet's rows (bench/RESULTS-conv.md).
// Offsets are 32-bit: the engine refuses tensors spanning 2^31 elements or more.
#include "conv_epi.cuh"
#include "wgmma_sm90a.cuh"

#include "gpu/kern_conv_wgmma.h"

#include <string.h>
#include <type_traits>

namespace {

struct kcw_geom {
    int N, H, W, C, K, R, S, P, Q;
    int sh, sw, ph, pw, dh, dw;
    int xN, xH, xW;     // x strides (elements); channel stride 1
    int wK, wR, wS;     // w strides; channel stride 1
    int yN, yK, yP, yQ; // y strides, any
    // depth (3-D convs, the D3 kernels only; 1 / 0 in 1-D and 2-D, which never read them): x depth D, filter
    // depth T, output depth O, its stride, lead pad and dilation, and the x / w / y depth strides
    int D, T, O, sd, pd, dd, xD, wT, yO;
    int M, Kred, dt_y, kt_per;
    // the producer: 0 gathers by cp.async; else it loads B by a tiled map and A by an im2col map (launch_bn),
    // 1: a slice one 64-channel box (C % 64 == 0, 128-byte swizzle; a 4-d map, or 5-d in the D3 code), 2 (D3,
    // C == 32): a slice two taps' 32-channel boxes, A in two 64-byte swizzled halves (kcw_a_desc)
    int tma;
    int nz, zoff[KCW_ZERO_MAX]; // a dgrad phase's store also writes zeros at yrow + zoff[i] (folded empty phases)
};

// The MP instances' phases (kern_conv_wgmma.h's kconv_wgmma_phases): phase i owns work
// items [work0[i], work0[i + 1]) (M tile fastest, tiles_m[i] of them, then the K tile), its weights at w +
// woff[i], its y (and a relu_bwd mask) at + yoff[i] elements.
struct kcw_phases {
    int n, work0[KCW_PH_MAX + 1], tiles_m[KCW_PH_MAX], woff[KCW_PH_MAX], yoff[KCW_PH_MAX];
    kcw_geom g[KCW_PH_MAX];
};

constexpr int kcwBM = 128, kcwBK = 64, kcwThreads = 384, kcwStageBudget = 192 * 1024;

// STG: the staged store (kcw_stage_*): the finished tile in y's 16-bit type goes to a shared-memory staging
// buffer, one row of BN * 2 + 64 bytes per tile row (the 64-byte pad puts the two rows a quarter-warp's
// 16-byte stores touch on different banks), and leaves by one bulk copy per row, so the consumers start the
// next tile's wgmmas while the copy engine writes y.  It costs BN = 128 a stage (6 -> 5: 227 KiB in all).
// Launched for BN = 128 only (launch_t says why).
constexpr int kcwSmemMax = 227 * 1024; // an H100's opt-in dynamic shared memory per block
template <int BN> constexpr int kcw_stg_row = BN * 2 + 64;
template <int BN, bool STG> struct kcw_cfg {
    static constexpr int WN = BN < 128 ? BN : 128;        // one wgmma's n
    static constexpr int NB = BN / WN;                    // wgmmas per k-step
    static constexpr int A_BYTES = kcwBM * 128, B_BYTES = BN * 128, STAGE = A_BYTES + B_BYTES;
    static constexpr int SSM_TILE = 8 * BN * 2;           // genstats: per warp and column (mean, M2), floats,
                                                          // two tiles' (kcw_epilogue)
    static constexpr int STG_ROW = kcw_stg_row<BN>, STG_BYTES = STG ? kcwBM * STG_ROW + BN * 2 : 0; // + a zero row
    static constexpr int ST_FIT = (kcwSmemMax - 1024 - 2 * SSM_TILE * 4 - STG_BYTES - 256) / STAGE;
    static constexpr int ST_MAX = BN < 64 ? ST_FIT : kcwStageBudget / STAGE; // the 32-wide tile: all that fit
    static constexpr int ST = ST_FIT < ST_MAX ? ST_FIT : ST_MAX; // 8, 6 (unstaged); 8, 5 (staged); 11 (BN 32)
    static constexpr int LAG = ST - 2;                    // slices of copies in flight per producer thread
    static constexpr int STG_OFF = (ST * STAGE + 2 * ST * 8 + 127) / 128 * 128; // after the ring's mbarriers
    static constexpr int SSM = STG_OFF + STG_BYTES;       // genstats' buffers after the staging
    static constexpr int SMEM = SSM + 2 * SSM_TILE * 4 + 1024; // + alignment slack
    static constexpr int SMEM_PLAIN = SSM + 1024;         // without genstats: the L1 keeps the rest
    static_assert(SMEM <= kcwSmemMax, "one CTA per SM must fit");
};

#if XW_DEVICE
__device__ __forceinline__ uint32_t pack_y(int dt, float a, float b)
{
    if (dt == KDT_F16) {
        const __half2 h = __floats2half2_rn(a, b);
        return *reinterpret_cast<const uint32_t *>(&h);
    }
    const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
    return *reinterpret_cast<const uint32_t *>(&h);
}

// A dgrad's relu_bwd mask (conv_epi.h: the epilogue's one step) read into registers at the tile's start, as
// the 16-bit pairs the thread stores: loaded in the epilogue, each 8-column chunk waited a memory latency
// after the previous chunk's stores (the compiler cannot move a load above a store that may alias it), +0.1 to
// +0.45 ms a ResNet-50 N=256 dgrad (1.5x the mask's own pass); issued before the mainloop, the latency
// hides behind it.  Taken when the mask is 16-bit, channel-contiguous, and its pairs 4-byte aligned.
__device__ __forceinline__ bool kcw_mask_regs(const kconv_epi &epi, const float *part)
{
    const kepi_step &s = epi.s[0];
    return !part && epi.n == 1 && s.op == KEPI_RELU_BWD && s.dt != KDT_F32 && s.st[1] == 1 && s.st[0] % 2 == 0 &&
           s.st[3] % 2 == 0 && s.st[4] % 2 == 0 && (reinterpret_cast<uintptr_t>(s.t) & 3) == 0;
}

// The thread's mask pairs (rows mrow, mrow + 8; columns j*8 + (lane%4)*2 + {0, 1} of each wgmma block b), 0
// past M or K.
template <int BN, bool D3>
__device__ __forceinline__ void kcw_mask_load(const kcw_geom &g, const kepi_step &s, int toff,
                                              uint32_t (&mk)[kcw_cfg<BN, false>::NB][kcw_cfg<BN, false>::WN / 8][2], int bm,
                                              int bn, int cw, int warp, int lane)
{
    constexpr int WN = kcw_cfg<BN, false>::WN, NB = kcw_cfg<BN, false>::NB;
    const int mrow = bm + cw * 64 + warp * 16 + lane / 4;
    const uint16_t *t = static_cast<const uint16_t *>(s.t) + toff; // toff: the phase's (kcw_phases)
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int m = mrow + h * 8;
        const int mm = m < g.M ? m : 0;
        const int nn = mm / (g.P * g.Q); // D3: (n, o)
        const int64_t row = (int64_t)(D3 ? nn / g.O : nn) * s.st[0] + (D3 ? (int64_t)(nn % g.O) * s.st[2] : 0) +
                            (int64_t)((mm / g.Q) % g.P) * s.st[3] + (int64_t)(mm % g.Q) * s.st[4];
#pragma unroll
        for (int b = 0; b < NB; b++)
#pragma unroll
            for (int j = 0; j < WN / 8; j++) {
                const int k = bn + b * WN + j * 8 + (lane % 4) * 2;
                mk[b][j][h] = m < g.M && k < g.K ? __ldg(reinterpret_cast<const unsigned int *>(t + row + k)) : 0u;
            }
    }
}

__device__ __forceinline__ float2 unpack_pair(int dt, uint32_t u)
{
    if (dt == KDT_F16)
        return __half22float2(*reinterpret_cast<const __half2 *>(&u));
    return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162 *>(&u));
}

// a value as y stores it
__device__ __forceinline__ float kcw_round(int dt, float a)
{
    return dt == KDT_F16 ? __half2float(__float2half_rn(a)) : dt == KDT_BF16 ? __bfloat162float(__float2bfloat16_rn(a)) : a;
}

// genstats: the Chan weights of the three xor-shuffle merges (lanes 4, 8, 16 apart), from the rows each lane
// holds (the same for every column): the merge of (mean, M2) of na rows with a partner's of nb rows is
// mean += d nb / n, M2 += M2' + d^2 na nb / n (d = mean' - mean, n = na + nb).
struct kcw_chan {
    float f1[3], f2[3];
};
__device__ __forceinline__ kcw_chan kcw_chan_of(const bool (&rv)[2])
{
    kcw_chan w;
    float n = (float)rv[0] + (float)rv[1];
#pragma unroll
    for (int r = 0; r < 3; r++) {
        const float nb = __shfl_xor_sync(0xffffffffu, n, 4 << r), t = n + nb;
        w.f1[r] = t > 0.f ? nb / t : 0.f;
        w.f2[r] = t > 0.f ? n * nb / t : 0.f;
        n = t;
    }
    return w;
}

// One Chan merge of (mean, M2) with a partner group's (om, o2), weights of round r.
__device__ __forceinline__ void kcw_chan_merge(float &mean, float &m2, float om, float o2, const kcw_chan &w, int r)
{
    const float d = om - mean;
    mean += d * w.f1[r];
    m2 += o2 + d * d * w.f2[r];
}

// genstats: the warp's (mean, M2) over its 16 rows of the thread's 8 columns (v as stored) to
// ssm[(w8 * BN + column) * 2]; the columns of v[.][e]: col0 + (e / 2) * 8 + (lane % 4) * 2 + e % 2.
// Row mrow + 8 is in M only if mrow is.  A reduce-scatter over the 8 lanes of a column quad: each round
// a lane keeps half its columns (those whose bit matches its lane bit), sends the partner the other half
// and merges what it receives: 8 + 4 + 2 shuffles for the 8 columns (an all-reduce took 48, +44% on the
// wgmma convs of ResNet-50, session 8 call 1); lane l ends with column e = (l>>2 & 1) 4 + (l>>3 & 1) 2 +
// (l>>4 & 1).
template <int BN>
__device__ __forceinline__ void kcw_stats_cols(int dt, const float (&v)[2][8], const bool (&rv)[2],
                                               const kcw_chan &w, float *ssm, int w8, int lane, int col0)
{
    float m[8], q[8];
#pragma unroll
    for (int e = 0; e < 8; e++) {
        const float a = kcw_round(dt, v[0][e]), b = kcw_round(dt, v[1][e]), d0 = a - b;
        m[e] = rv[1] ? 0.5f * (a + b) : rv[0] ? a : 0.f;
        q[e] = rv[1] ? 0.5f * d0 * d0 : 0.f;
    }
#pragma unroll
    for (int r = 0, half = 4; r < 3; r++, half /= 2) {
        const bool hi = (lane >> (2 + r)) & 1;
#pragma unroll
        for (int i = 0; i < half; i++) {
            const float km = hi ? m[half + i] : m[i], kq = hi ? q[half + i] : q[i];
            const float sm = hi ? m[i] : m[half + i], sq = hi ? q[i] : q[half + i];
            m[i] = km;
            q[i] = kq;
            kcw_chan_merge(m[i], q[i], __shfl_xor_sync(0xffffffffu, sm, 4 << r),
                           __shfl_xor_sync(0xffffffffu, sq, 4 << r), w, r);
        }
    }
    const int e = ((lane >> 2) & 1) * 4 + ((lane >> 3) & 1) * 2 + ((lane >> 4) & 1);
    const int col = col0 + (e / 2) * 8 + (lane & 3) * 2 + e % 2;
    *reinterpret_cast<float2 *>(ssm + (w8 * BN + col) * 2) = make_float2(m[0], q[0]);
}

// genstats: after every consumer warp wrote ssm, consumer thread t < BN merges the 8 warps' (mean, M2) of
// column t in warp order (warp w8 holds rows bm + 16 w8 ...) and stores the tile's partial.
template <int BN>
__device__ __forceinline__ void kcw_stats_tile(const kcw_geom &g, const float *ssm, float *__restrict__ stats, int bm,
                                               int bn, int t)
{
    const int k = bn + t;
    if (t >= BN || k >= g.K)
        return;
    float n = 0.f, mean = 0.f, m2 = 0.f;
#pragma unroll
    for (int w8 = 0; w8 < 8; w8++) {
        const int left = g.M - (bm + 16 * w8);
        const float nb = (float)(left < 0 ? 0 : left < 16 ? left : 16);
        if (nb == 0.f)
            break;
        const float2 o = *reinterpret_cast<const float2 *>(ssm + (w8 * BN + t) * 2);
        const float tot = n + nb, d = o.x - mean;
        mean += d * (nb / tot);
        m2 += o.y + d * d * (n * nb / tot);
        n = tot;
    }
    *reinterpret_cast<float4 *>(stats + ((int64_t)(bm / kcwBM) * g.K + k) * 4) = make_float4(n, mean, m2, 0.f);
}

// the 256 consumer threads (barrier 0 is __syncthreads'; the producer warpgroup is not in it)
__device__ __forceinline__ void kcw_consumer_bar() { asm volatile("bar.sync 1, 256;\n" ::: "memory"); }

// ---- the staged store (STG): each consumer warpgroup owns 64 staging rows; per tile it waits until its last
// bulk copies have read them (kcw_stage_free), writes the finished values (16-byte st.shared after the quad
// transpose), fences them into the async proxy and hands each row to one thread's bulk copy (kcw_stage_issue).
// Barriers 2 and 3: the 128 threads of consumer warpgroup 0 and 1.
__device__ __forceinline__ void kcw_wg_bar(int cw)
{
    asm volatile("bar.sync %0, 128;\n" ::"r"(2 + cw) : "memory");
}
__device__ __forceinline__ void bulk_store(void *dst, uint32_t src, int bytes)
{
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(dst), "r"(src), "r"(bytes)
                 : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// this thread's bulk copies have read their shared memory (the staging rows may be written again)
__device__ __forceinline__ void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }
// this thread's bulk copies are complete (written to global memory): before the CTA exits
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
__device__ __forceinline__ void sts128(uint32_t a, uint32_t x, uint32_t y, uint32_t z, uint32_t w)
{
    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(a), "r"(x), "r"(y), "r"(z), "r"(w) : "memory");
}

__device__ __forceinline__ void kcw_stage_free(int cw)
{
    bulk_wait_read(); // a no-op in the threads that issued none
    kcw_wg_bar(cw);
}

// Warpgroup cw's 64 staged rows of the tile (bm, bn) to y: thread tid < 64 copies row tid (the columns in K),
// thread 64 + r the zeros of row r's folded empty phases (zoff) from the zero row.  Rows past M are skipped.
template <int BN>
__device__ __forceinline__ void kcw_stage_issue(const kcw_geom &g, void *y, uint32_t stg, uint32_t zrow, int bm,
                                                int bn, int cw, int tid)
{
    fence_async(); // this thread's st.shared become visible to the copy engine
    kcw_wg_bar(cw);
    const int r = tid & 63, m = bm + cw * 64 + r;
    if (m < g.M && (tid < 64 || g.nz > 0)) {
        const int q = m % g.Q, p = (m / g.Q) % g.P, n = m / (g.P * g.Q);
        const int64_t yo = (int64_t)n * g.yN + (int64_t)p * g.yP + (int64_t)q * g.yQ + bn;
        const int bytes = (g.K - bn < BN ? g.K - bn : BN) * 2; // K % 8 == 0: 16-byte multiples
        char *dst = static_cast<char *>(y) + yo * 2;
        if (tid < 64) {
            bulk_store(dst, stg + r * kcw_stg_row<BN>, bytes);
        } else {
#pragma unroll
            for (int z = 0; z < KCW_ZERO_MAX; z++)
                if (z < g.nz)
                    bulk_store(dst + (int64_t)g.zoff[z] * 2, zrow, bytes);
        }
    }
    bulk_commit();
}

// The tile's store: split-K's raw f32 partial, or the fused epilogue and y (mask: the epilogue is the relu_bwd
// mask in mk, kcw_mask_load's).  STG: y through the staging rows of this warpgroup (stg; zrow: the zero row;
// never with D3: kcw_stage_issue decomposes rows in 2-D).  D3: rows m = (n, o, p, q).
template <int BN, bool STG, bool D3>
__device__ __forceinline__ void kcw_epilogue(const kcw_geom &g, float (&acc)[kcw_cfg<BN, false>::NB][kcw_cfg<BN, false>::WN / 2],
                                             void *__restrict__ y, const kconv_epi &epi, float *__restrict__ part,
                                             int bm, int bn, int z, int cw, int warp, int lane, bool mask,
                                             const uint32_t (&mk)[kcw_cfg<BN, false>::NB][kcw_cfg<BN, false>::WN / 8][2],
                                             float *__restrict__ stats, float *ssm, uint32_t stg, uint32_t zrow)
{
    constexpr int WN = kcw_cfg<BN, false>::WN, NB = kcw_cfg<BN, false>::NB;
    // accumulator layout of m64nWN (per warp, per 8-column block j): rows lane/4 and lane/4 + 8,
    // columns j*8 + (lane%4)*2 + {0, 1} at acc[j*4 + h*2 + {0, 1}]
    const int mrow = bm + cw * 64 + warp * 16 + lane / 4;
    if (part) { // split-K: the raw f32 tile to this split's partial [M][K] (K % 8 == 0: float2 stores)
        float *pz = part + (size_t)z * g.M * g.K;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int m = mrow + h * 8;
            if (m >= g.M)
                continue;
#pragma unroll
            for (int b = 0; b < NB; b++)
#pragma unroll
                for (int j = 0; j < WN / 8; j++) {
                    const int k = bn + b * WN + j * 8 + (lane % 4) * 2;
                    if (k < g.K)
                        *reinterpret_cast<float2 *>(pz + (size_t)m * g.K + k) =
                            make_float2(acc[b][j * 4 + h * 2], acc[b][j * 4 + h * 2 + 1]);
                }
        }
        return;
    }
    int rc[2][4]; // n, o (0 unless D3), p, q of the thread's two rows
    bool rv[2];
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int m = mrow + h * 8;
        rv[h] = m < g.M;
        const int mm = rv[h] ? m : 0, nn = mm / (g.P * g.Q);
        rc[h][0] = D3 ? nn / g.O : nn;
        rc[h][1] = D3 ? nn % g.O : 0;
        rc[h][2] = (mm / g.Q) % g.P;
        rc[h][3] = mm % g.Q;
    }
    int64_t yrow[2];
#pragma unroll
    for (int h = 0; h < 2; h++)
        yrow[h] = (int64_t)rc[h][0] * g.yN + (D3 ? (int64_t)rc[h][1] * g.yO : 0) + (int64_t)rc[h][2] * g.yP +
                  (int64_t)rc[h][3] * g.yQ;
    // genstats: ssm alternates between two buffers by tile, so one barrier a tile suffices (a thread writes
    // this buffer again two tiles on, past the barrier of the tile between, which every reader of it reached)
    kcw_chan cwt;
    if (stats)
        cwt = kcw_chan_of(rv);
    if (STG)
        kcw_stage_free(cw);
#pragma unroll
    for (int b = 0; b < NB; b++)
#pragma unroll
        for (int j0 = 0; j0 < WN / 8; j0 += 4) { // 4 column blocks = 8 columns of the thread at a time
            float v[2][8];
            int kc[8];
            bool cv[8];
#pragma unroll
            for (int e = 0; e < 8; e++) {
                kc[e] = bn + b * WN + (j0 + e / 2) * 8 + (lane % 4) * 2 + e % 2;
                cv[e] = kc[e] < g.K;
#pragma unroll
                for (int h = 0; h < 2; h++)
                    v[h][e] = acc[b][(j0 + e / 2) * 4 + h * 2 + e % 2];
            }
            if (mask) {
                const kepi_step &ms = epi.s[0];
#pragma unroll
                for (int h = 0; h < 2; h++)
#pragma unroll
                    for (int jj = 0; jj < 4; jj++) {
                        const float2 a = unpack_pair(ms.dt, mk[b][j0 + jj][h]);
                        v[h][2 * jj] = kepi_relu_bwd(v[h][2 * jj], a.x, ms.p0, ms.p1, ms.p2);
                        v[h][2 * jj + 1] = kepi_relu_bwd(v[h][2 * jj + 1], a.y, ms.p0, ms.p1, ms.p2);
                    }
            } else if (epi.n) {
                kepi_tile<2, 8>(epi, v, rc, kc, rv, cv);
            }
            if (stats)
                kcw_stats_cols<BN>(g.dt_y, v, rv, cwt, ssm, cw * 4 + warp, lane, b * WN + j0 * 8);
#pragma unroll
            for (int h = 0; h < 2; h++) {
                // 16-byte stores: a 4x4 transpose of packed pairs within each quad of lanes gives lane q the 8
                // columns of block j0 + q (the 4 lanes of a row then write 64 contiguous bytes: whole sectors,
                // where each lane's own 4-byte pairs cost a 1x1 conv's epilogue half its time).  Every lane
                // shuffles (full mask); only rows in M store.
                const bool vec = STG || (g.yK == 1 && g.dt_y != KDT_F32 && g.K % 8 == 0 &&
                                        ((reinterpret_cast<uintptr_t>(y) + (uint64_t)yrow[h] * 2) & 15) == 0);
                if (vec) {
                    const int q = lane & 3;
                    uint32_t u[4], o[4];
#pragma unroll
                    for (int jj = 0; jj < 4; jj++)
                        u[jj] = pack_y(g.dt_y, v[h][2 * jj], v[h][2 * jj + 1]);
#pragma unroll
                    for (int r = 0; r < 4; r++) {
                        const int give = (q + r) & 3, from = (q - r) & 3;
                        const uint32_t mine = give == 0 ? u[0] : give == 1 ? u[1] : give == 2 ? u[2] : u[3];
                        const uint32_t got = __shfl_sync(0xffffffffu, mine, (lane & ~3) | from);
                        if (from == 0) o[0] = got;
                        else if (from == 1) o[1] = got;
                        else if (from == 2) o[2] = got;
                        else o[3] = got;
                    }
                    if (STG) { // the warpgroup's row warp * 16 + lane / 4 + 8 h; past M or K: never copied
                        sts128(stg + (warp * 16 + lane / 4 + h * 8) * kcw_stg_row<BN> +
                                   (b * WN + (j0 + q) * 8) * 2,
                               o[0], o[1], o[2], o[3]);
                        continue;
                    }
                    const int k = bn + b * WN + (j0 + q) * 8; // K % 8 == 0: the block is wholly in or out
                    if (rv[h] && k < g.K) {
                        *reinterpret_cast<uint4 *>(static_cast<char *>(y) + (yrow[h] + k) * 2) =
                            make_uint4(o[0], o[1], o[2], o[3]);
#pragma unroll
                        for (int z = 0; z < KCW_ZERO_MAX; z++) // zoff % 8 == 0 (the host folds only those)
                            if (z < g.nz)
                                *reinterpret_cast<uint4 *>(static_cast<char *>(y) + (yrow[h] + g.zoff[z] + k) * 2) =
                                    make_uint4(0, 0, 0, 0);
                    }
                    continue;
                }
                if (!rv[h])
                    continue;
#pragma unroll
                for (int e = 0; e < 8; e += 2) {
                    const int k = kc[e];
                    if (k >= g.K)
                        continue;
                    const int64_t yo = yrow[h] + (int64_t)k * g.yK;
#pragma unroll
                    for (int z = 0; z < KCW_ZERO_MAX; z++)
                        if (z < g.nz) {
                            kst(y, g.dt_y, yo + g.zoff[z], 0.f);
                            kst(y, g.dt_y, yo + g.zoff[z] + g.yK, 0.f);
                        }
                    if (g.yK == 1 && g.dt_y != KDT_F32 &&
                        ((reinterpret_cast<uintptr_t>(y) / 2 + (uint64_t)yo) & 1) == 0) { // 4-byte aligned pair
                        if (g.dt_y == KDT_F16)
                            *reinterpret_cast<__half2 *>(static_cast<__half *>(y) + yo) =
                                __floats2half2_rn(v[h][e], v[h][e + 1]);
                        else
                            *reinterpret_cast<__nv_bfloat162 *>(static_cast<__nv_bfloat16 *>(y) + yo) =
                                __floats2bfloat162_rn(v[h][e], v[h][e + 1]);
                        continue;
                    }
                    kst(y, g.dt_y, yo, v[h][e]);
                    kst(y, g.dt_y, yo + g.yK, v[h][e + 1]); // K % 8 == 0: k + 1 < K
                }
            }
        }
    if (STG)
        kcw_stage_issue<BN>(g, y, stg, zrow, bm, bn, cw, warp * 32 + lane);
    if (stats) {
        kcw_consumer_bar(); // every warp's columns are in ssm
        kcw_stats_tile<BN>(g, ssm, stats, bm, bn, cw * 128 + warp * 32 + lane);
    }
}
#endif

// Work item w (persistent CTAs take w = blockIdx.x, + gridDim.x, ...): M tile fastest, then the K tile, then
// the split, so the CTAs running at once share the weights' tiles.
struct kcw_item {
    int bm, bn, kt0, KT, z;
};
__device__ __forceinline__ kcw_item item_of(const kcw_geom &g, int w, int tiles_m, int tiles_n, int BN)
{
    kcw_item t;
    const int mt = w % tiles_m, rest = w / tiles_m;
    t.bm = mt * kcwBM;
    t.bn = (rest % tiles_n) * BN;
    t.z = rest / tiles_n;
    const int KT_all = (g.Kred + kcwBK - 1) / kcwBK;
    t.kt0 = t.z * g.kt_per;
    t.KT = min(g.kt_per, KT_all - t.kt0);
    return t;
}

// Work item wi's phase (MP: kcw_phases; the other instances: their one geometry g): its geometry, the item's
// index within it, its M tiles, its weights' and y's offsets (elements).
struct kcw_job {
    const kcw_geom *g;
    int w, tiles_m, woff, yoff;
};
template <bool MP>
__device__ __forceinline__ kcw_job job_of(const kcw_geom &g, const kcw_phases &ph, int wi, int tiles_m)
{
    if (!MP)
        return kcw_job{&g, wi, tiles_m, 0, 0};
    int i = 0;
    while (i + 1 < ph.n && wi >= ph.work0[i + 1])
        i++;
    return kcw_job{&ph.g[i], wi - ph.work0[i], ph.tiles_m[i], ph.woff[i], ph.yoff[i]};
}

#if XW_DEVICE
// ---- the ping-pong consumers (PP, session 12): warpgroup cw owns the CTA's work items li = cw, cw + 2, ... (li:
// the CTA's own count) whole, 128 rows x 64 columns, 8 m64n64k16 a slice (two 64-row halves: acc[0], acc[1]),
// and the two take turns at the tensor pipe: warpgroup cw issues its item's mainloop after the other has issued
// its previous one's (the math turn, barriers 4 and 5), then hands the turn over, drains its wgmmas and runs its
// epilogue while the other's mainloop runs.  With both consumers on one tile (the cooperative schedule) both
// drained and stored at each tile's end while the ring, filled, waited (session 11: ~0.43 us a slice + 2.5-5 us a
// tile on the 64-channel layers).  The producer is unchanged: it fills the ring in item order, so warpgroup cw
// counts every item's slices (its own and the other's) to keep the ring position gs; a slice's "empty" mbarrier
// takes the 128 arrivals of the one warpgroup that read it.
// The turn also keeps the ring's parities sound: warpgroup cw waits for the "full" mbarrier of slice gs only
// after every slice before its item has been waited for (by the other, in its turn), so that slice gs - ST has
// completed its phase.
// Barrier 4 + cw: warpgroup cw's turn (its 128 threads' bar.sync + the other's 128 bar.arrive).
__device__ __forceinline__ void kcw_turn_wait(int cw)
{
    asm volatile("bar.sync %0, 256;\n" ::"r"(4 + cw) : "memory");
}
__device__ __forceinline__ void kcw_turn_pass(int cw)
{
    asm volatile("bar.arrive %0, 256;\n" ::"r"(5 - cw) : "memory");
}

// A consumer warpgroup's items (2-D and 1-D, BN = 64, no genstats and no staging: launch_t says when): the ring's
// stages at sbase, their mbarriers at sbar (full, then empty), ST of them.
template <typename T, int BN, int ST>
__device__ __forceinline__ void kcw_consume_pingpong(const kcw_geom &g, void *__restrict__ y, const kconv_epi &epi,
                                                     float *__restrict__ part, uint32_t sbase, uint32_t sbar,
                                                     int tiles_m, int tiles_n, int nwork, int warp, int lane)
{
    // the warpgroup's index broadcast from lane 0: warp-uniform where the compiler can see it, so that the branches
    // on it below (whose paths hold wgmmas) are not divergent (threadIdx.x / 128 was: ptxas serialized the
    // wgmmas, C7518 "WG.DP in divergent path")
    const int cw = __shfl_sync(0xffffffffu, (int)threadIdx.x / 128, 0) - 1;
    using C = kcw_cfg<BN, false>;
    constexpr int WN = C::WN, NB = C::NB;
    static_assert(NB == 1, "a warpgroup's 128-row tile keeps 2 x BN / 2 accumulators a thread: BN = 64 only");
    float acc[2][NB][WN / 2];
#pragma unroll
    for (int h = 0; h < 2; h++)
#pragma unroll
        for (int i = 0; i < WN / 2; i++)
            acc[h][0][i] = 0.f;
    uint32_t mk[2][NB][WN / 8][2];
    const bool mask = kcw_mask_regs(epi, part);
    // every CTA has an item (the grid is at most nwork); an even count of turns, each warpgroup half of them
    const int mine = (nwork - (int)blockIdx.x + (int)gridDim.x - 1) / (int)gridDim.x, turns = (mine + 1) & ~1;
    if (cw == 1)
        kcw_turn_pass(1); // warpgroup 0 goes first
    int gs = 0;
    for (int li = 0; li < turns; li++) {
        const int wi = (int)blockIdx.x + li * (int)gridDim.x;
        const bool have = wi < nwork; // the last turn of an odd count is empty
        kcw_item it = {0, 0, 0, 0, 0};
        if (have)
            it = item_of(g, wi, tiles_m, tiles_n, BN);
        if ((li & 1) != cw) { // the other warpgroup's item: its slices pass by in the ring
            gs += it.KT;
            continue;
        }
        if (have && mask) // the mask's loads before the turn: their latency hides behind the wait
#pragma unroll
            for (int h = 0; h < 2; h++)
                kcw_mask_load<BN, false>(g, epi.s[0], 0, mk[h], it.bm, it.bn, h, warp, lane);
        kcw_turn_wait(cw);
        for (int kt = 0; kt < it.KT; kt++, gs++) {
            const int st = gs % ST;
            mb_wait(sbar + 8u * st, (gs / ST) & 1);
            const uint32_t sA = sbase + st * C::STAGE, sB = sA + C::A_BYTES;
            wg_fence();
#pragma unroll
            for (int k16 = 0; k16 < kcwBK / 16; k16++)
#pragma unroll
                for (int h = 0; h < 2; h++)
                    wg_ss(acc[h][0], gdesc(sA + h * 64 * 128 + k16 * 32, 16, 1024), gdesc(sB + k16 * 32, 16, 1024),
                          kt > 0 || k16 > 0, T());
            wg_commit();
            wg_wait<1>(); // the previous slice's group has retired: its buffers go back
            if (kt > 0)
                mb_arrive(sbar + 8u * (ST + (gs - 1) % ST));
        }
        if (li + 1 < turns || cw == 0) // the turn's last pass would have no taker
            kcw_turn_pass(cw);
        // the drain on every path, an empty turn's too: a branch around it left wgmmas in flight on a path that
        // ptxas took as divergent (C7518, the wgmmas serialized)
        wg_wait<0>();
#pragma unroll
        for (int h = 0; h < 2; h++)
            keep(acc[h][0]);
        if (!have)
            continue;
        mb_arrive(sbar + 8u * (ST + (gs - 1) % ST)); // the item's last slice
#pragma unroll
        for (int h = 0; h < 2; h++) // the halves as the cooperative consumers' rows: h stands for cw there
            kcw_epilogue<BN, false, false>(g, acc[h], y, epi, part, it.bm, it.bn, it.z, h, warp, lane, mask, mk[h],
                                           nullptr, nullptr, 0u, 0u);
    }
}
#endif

#if XW_DEVICE
// One tap's box of x through the 5-d im2col map (the D3 code's TMA producer): channels from c of tap = (t, r, s)
// (s fastest) for the 128 rows from the output pixel whose first tap is (w0, h0, d0) of image n0.
__device__ __forceinline__ void kcw_load_tap5(uint32_t dst, const CUtensorMap *tx, uint32_t bar, const kcw_geom &g,
                                              int c, int tap, int w0, int h0, int d0, int n0)
{
    const int s = tap % g.S, r = tap / g.S % g.R, t = tap / (g.S * g.R);
    tma_load_im2col_5d(dst, tx, bar, c, w0, h0, d0, n0, (uint16_t)(s * g.dw), (uint16_t)(r * g.dh),
                       (uint16_t)(t * g.dd));
}

// The wgmma descriptor of consumer cw's 64 rows of A at k step k16 of the stage at sA: 128-byte swizzled rows of
// the slice's 64 channels, or (g.tma == 2, D3) the two 64-byte swizzled halves of 32 channels, k16 0-1 in the
// first, 2-3 in the second.
template <bool D3> __device__ __forceinline__ uint64_t kcw_a_desc(const kcw_geom &g, uint32_t sA, int cw, int k16)
{
    if (D3 && g.tma == 2)
        return gdesc64(sA + (k16 >> 1) * (kcwBM * 64) + cw * 64 * 64 + (k16 & 1) * 32);
    return gdesc(sA + cw * 64 * 128 + k16 * 32, 16, 1024);
}
#endif

// D3: a 3-D conv (depth gathered and bounds-tested too); the 1-/2-D instances compile the depth away.  MP (with
// D3): a dgrad's phases from the table ph.
template <typename T, int BN, bool STG, bool D3, bool MP = false, bool PP = false>
__global__ void __launch_bounds__(kcwThreads, 1)
    kcw_fwd_kernel(const __grid_constant__ CUtensorMap tx, const __grid_constant__ CUtensorMap tw,
                   const __grid_constant__ kcw_geom g, const __grid_constant__ kcw_phases ph,
                   const T *__restrict__ x, const T *__restrict__ w, void *__restrict__ y,
                   const kconv_epi epi, float *__restrict__ part, float *__restrict__ stats, int tiles_m,
                   int tiles_n, int nwork)
{
#if XW_DEVICE
    using C = kcw_cfg<BN, STG>;
    constexpr int ST = C::ST, WN = C::WN, NB = C::NB;
    extern __shared__ unsigned char smem_raw[];
    const uint32_t sbase = (smem_u32(smem_raw) + 1023u) & ~1023u; // swizzled tiles need 1024-byte alignment
    const uint32_t sbar = sbase + ST * C::STAGE;
#define KCW_FULL(s) (sbar + 8u * (s))
#define KCW_EMPTY(s) (sbar + 8u * (ST + (s)))
    const int wg = threadIdx.x / 128;

    if (threadIdx.x == 0) {
#pragma unroll
        for (int s = 0; s < ST; s++) {
            mb_init(KCW_FULL(s), g.tma ? 1 : 128); // TMA: the one expect_tx arrival
            mb_init(KCW_EMPTY(s), PP ? 128 : 256); // PP: one warpgroup reads a slice
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    const uint32_t stg = sbase + C::STG_OFF, zrow = stg + kcwBM * C::STG_ROW; // STG: staging rows, zero row
    if (STG && threadIdx.x >= 128 && threadIdx.x < 128 + BN / 8) { // the zero row, 16 bytes a thread
        sts128(zrow + (threadIdx.x - 128) * 16, 0u, 0u, 0u, 0u);
        fence_async();
    }
    __syncthreads();

    if (wg == 0) { // ---- producer: the ring position gs runs on across work items
        asm volatile("setmaxnreg.dec.sync.aligned.u32 80;\n");
        if (g.tma) { // TMA: one thread issues a slice's loads; the copy engine zero-fills
            if (threadIdx.x != 0)
                return;
            const int taps = g.T * g.R * g.S;
            int gs = 0;
            for (int wi = blockIdx.x; wi < nwork; wi += gridDim.x) {
                const kcw_item it = item_of(g, wi, tiles_m, tiles_n, BN);
                // the tile's first output pixel's first tap: the im2col traversal walks its 128 rows from there
                // (across row ends, depth planes and images as m does; rows past M read images past N: zeros,
                // never stored)
                const int q0 = it.bm % g.Q, p0 = (it.bm / g.Q) % g.P, nn0 = it.bm / (g.P * g.Q);
                const int o0 = D3 ? nn0 % g.O : 0, n0 = D3 ? nn0 / g.O : nn0;
                const int w0 = q0 * g.sw - g.pw, h0 = p0 * g.sh - g.ph, d0 = o0 * g.sd - g.pd;
                for (int kt = 0; kt < it.KT; kt++, gs++) {
                    const int st = gs % ST, kk = (it.kt0 + kt) * kcwBK;
                    mb_wait(KCW_EMPTY(st), ((gs / ST) & 1) ^ 1);
                    const uint32_t sA = sbase + st * C::STAGE, sB = sA + C::A_BYTES;
                    mb_expect(KCW_FULL(st), C::STAGE); // whole boxes, zero-filled parts included
                    if (!D3) { // C % 64 == 0: a slice is 64 channels of one tap (r, s)
                        const int tap = kk / g.C;
                        tma_load_im2col_4d(sA, &tx, KCW_FULL(st), kk % g.C, w0, h0, n0,
                                           (uint16_t)(tap % g.S * g.dw), (uint16_t)(tap / g.S * g.dh));
                    } else if (g.tma == 1) { // 64 channels of one tap (t, r, s)
                        kcw_load_tap5(sA, &tx, KCW_FULL(st), g, kk % g.C, kk / g.C, w0, h0, d0, n0);
                    } else { // C == 32: taps 2 kt and 2 kt + 1 side by side
                        const int tap = kk / 32;
                        const bool past = tap + 1 >= taps; // an odd tap count's last slice: its second half
                        kcw_load_tap5(sA, &tx, KCW_FULL(st), g, 0, tap, w0, h0, d0, n0);
                        // past the last tap, images past N: TMA's zero fill (the box's bytes all the same), so
                        // w's zero columns past Kred meet zeros, not the last tap's pixels again (Inf x 0 = NaN)
                        kcw_load_tap5(sA + kcwBM * 64, &tx, KCW_FULL(st), g, 0, past ? tap : tap + 1, w0, h0, d0,
                                      past ? n0 + g.N : n0);
                    }
                    tma_load(sB, &tw, KCW_FULL(st), kk, it.bn, 0, 0); // w as [K][Kred]: rows past K are zeros
                }
            }
            return;
        }
        const int t = threadIdx.x, cc = t & 7, r0 = t >> 3; // chunk column; rows r0 + 16 i
        const uint32_t swz = (uint32_t)((cc ^ (r0 & 7)) << 4); // the row's swizzled chunk: r % 8 == r0 % 8
        int gs = 0;
        for (int wi = blockIdx.x; wi < nwork; wi += gridDim.x) {
            const kcw_job jb = job_of<MP>(g, ph, wi, tiles_m);
            const T *wq = w + jb.woff;
            const kcw_geom &g = *jb.g; // the work item's phase's geometry (MP) from here on, else the one g
            const kcw_item it = item_of(g, jb.w, jb.tiles_m, tiles_n, BN);
            int xoff[8], ih0[8], iw0[8], id0[D3 ? 8 : 1];
#pragma unroll
            for (int i = 0; i < 8; i++) {
                const int m = it.bm + r0 + 16 * i;
                const int mm = m < g.M ? m : 0;
                const int q = mm % g.Q, p = (mm / g.Q) % g.P, nn = mm / (g.P * g.Q);
                const int n = D3 ? nn / g.O : nn;
                if (D3)
                    id0[i] = (nn % g.O) * g.sd - g.pd;
                xoff[i] = n * g.xN;
                ih0[i] = m < g.M ? p * g.sh - g.ph : -(1 << 29); // a row past M never passes the bounds test
                iw0[i] = q * g.sw - g.pw;
            }
            // this thread's chunk of the first slice: kk = (t, r, s, c), c fastest (C % 8 == 0: a chunk is one
            // tap); t (the filter depth tap) is 0 unless D3
            int kk = it.kt0 * kcwBK + cc * 8;
            int c = kk % g.C, s = (kk / g.C) % g.S, r = kk / (g.C * g.S), t3 = 0;
            if (D3) {
                t3 = r / g.R;
                r %= g.R;
            }
            for (int kt = 0; kt < it.KT; kt++, gs++) {
                const int st = gs % ST;
                mb_wait(KCW_EMPTY(st), ((gs / ST) & 1) ^ 1);
                const uint32_t sA = sbase + st * C::STAGE, sB = sA + C::A_BYTES;
                const bool kin = kk < g.Kred;
                const int dr = r * g.dh, ds = s * g.dw, dd = D3 ? t3 * g.dd : 0;
#pragma unroll
                for (int i = 0; i < 8; i++) {
                    const int ih = ih0[i] + dr, iw = iw0[i] + ds, id = D3 ? id0[i] + dd : 0;
                    const bool v = kin && (unsigned)ih < (unsigned)g.H && (unsigned)iw < (unsigned)g.W &&
                                   (!D3 || (unsigned)id < (unsigned)g.D);
                    const T *src = v ? x + (xoff[i] + (D3 ? id * g.xD : 0) + ih * g.xH + iw * g.xW + c) : x;
                    cpa16(sA + (r0 + 16 * i) * 128 + swz, src, v);
                }
                const int woff = (D3 ? t3 * g.wT : 0) + r * g.wR + s * g.wS + c;
#pragma unroll
                for (int i = 0; i < BN / 16; i++) {
                    const int k = it.bn + r0 + 16 * i;
                    const bool v = kin && k < g.K;
                    const T *src = v ? wq + (k * g.wK + woff) : w;
                    cpa16(sB + (r0 + 16 * i) * 128 + swz, src, v);
                }
                cpa_commit();
                if (gs >= C::LAG) { // the copies of slice gs - LAG have landed: hand it over
                    cpa_wait<C::LAG>();
                    fence_async();
                    mb_arrive(KCW_FULL((gs - C::LAG) % ST));
                }
                kk += kcwBK; // carry c into s, r (and t3)
                c += kcwBK;
                while (c >= g.C) {
                    c -= g.C;
                    if (++s == g.S) {
                        s = 0;
                        if (++r == g.R && D3) {
                            r = 0;
                            ++t3;
                        }
                    }
                }
            }
        }
        cpa_wait<0>();
        fence_async();
        for (int j = max(0, gs - C::LAG); j < gs; j++)
            mb_arrive(KCW_FULL(j % ST));
        return;
    }

    // ---- consumers
    asm volatile("setmaxnreg.inc.sync.aligned.u32 208;\n");
    const int cw = wg - 1, tid = threadIdx.x - 128 * wg, warp = tid >> 5, lane = tid & 31;
    if (PP) // (never with STG, D3, MP or genstats: launch_t); the cooperative loop below then takes no item
        kcw_consume_pingpong<T, BN, ST>(g, y, epi, part, sbase, sbar, tiles_m, tiles_n, nwork, warp, lane);
    float acc[NB][WN / 2];
#pragma unroll
    for (int b = 0; b < NB; b++)
#pragma unroll
        for (int i = 0; i < WN / 2; i++)
            acc[b][i] = 0.f;
    int gs = 0;
    const bool mask = kcw_mask_regs(epi, part);
    float *ssm = reinterpret_cast<float *>(smem_raw + (sbase - smem_u32(smem_raw)) + C::SSM);
    uint32_t mk[NB][WN / 8][2];
    for (int wi = PP ? nwork : (int)blockIdx.x; wi < nwork; wi += gridDim.x) {
        const kcw_job jb = job_of<MP>(g, ph, wi, tiles_m);
        const kcw_geom &g = *jb.g; // the work item's phase's geometry (MP) from here on, else the one g
        const kcw_item it = item_of(g, jb.w, jb.tiles_m, tiles_n, BN);
        if (mask)
            kcw_mask_load<BN, D3>(g, epi.s[0], jb.yoff, mk, it.bm, it.bn, cw, warp, lane);
        for (int kt = 0; kt < it.KT; kt++, gs++) {
            const int st = gs % ST;
            mb_wait(KCW_FULL(st), (gs / ST) & 1);
            const uint32_t sA = sbase + st * C::STAGE, sB = sA + C::A_BYTES;
            wg_fence();
#pragma unroll
            for (int k16 = 0; k16 < kcwBK / 16; k16++)
#pragma unroll
                for (int b = 0; b < NB; b++)
                    wg_ss(acc[b], kcw_a_desc<D3>(g, sA, cw, k16), gdesc(sB + b * WN * 128 + k16 * 32, 16, 1024),
                          kt > 0 || k16 > 0, T());
            wg_commit();
            wg_wait<1>(); // the previous slice's group has retired: its buffers go back
            if (kt > 0)
                mb_arrive(KCW_EMPTY((gs - 1) % ST));
        }
        wg_wait<0>();
#pragma unroll
        for (int b = 0; b < NB; b++)
            keep(acc[b]);
        mb_arrive(KCW_EMPTY((gs - 1) % ST)); // the tile's last slice (the producer is already past it)
        void *yq = static_cast<char *>(y) + (size_t)jb.yoff * (g.dt_y == KDT_F32 ? 4 : 2);
        kcw_epilogue<BN, STG, D3>(g, acc, yq, epi, part, it.bm, it.bn, it.z, cw, warp, lane, mask, mk, stats,
                              ssm + ((wi / gridDim.x) & 1) * C::SSM_TILE, // this CTA's tiles alternate buffers
                              stg + cw * 64 * C::STG_ROW, zrow);
    }
    if (STG)
        bulk_wait_all(); // the staging must outlive the copies reading it
#undef KCW_FULL
#undef KCW_EMPTY
#endif
}

// The producer's TMA maps where the geometry allows them (else g.tma = 0, the cp.async gather): a 1-/2-D conv
// with C % 64 == 0 (a 64-deep slice is one tap's channels, the im2col box's one row), dense (r, s, c) weights
// read as a [K][R*S*C] matrix with 16-byte rows, and what make_im2col_map accepts (alignment, the corners'
// 8-bit range, strides <= 8).  Dilation needs nothing: it only scales the per-slice tap offsets.
bool tma_geom_ok(const kcw_geom &g)
{
    // (a size-1 dimension's stride is never stepped: 1x1 and 1-D filters, 1-D and batch-1 x may carry any)
    return g.D == 1 && g.T == 1 && g.O == 1 && g.C % kcwBK == 0 && (g.S == 1 || g.wS == g.C) &&
           (g.R == 1 || g.wR == g.S * g.C) && g.wK % 8 == 0 &&
           (g.N == 1 || g.xN % 8 == 0) && (g.H == 1 || g.xH % 8 == 0) && g.xW % 8 == 0 &&
           im2col_offsets_fit((int64_t)(g.R - 1) * g.dh, (int64_t)(g.S - 1) * g.dw) &&
           im2col_map_fits(g.H, g.W, g.P, g.Q, g.sh, g.sw, g.ph, g.pw);
}

bool tma_maps(const kcw_geom &g, const void *x, const void *w, bool bf16, int bn, CUtensorMap *tx, CUtensorMap *tw)
{
    if (!tma_geom_ok(g) || !make_im2col_map(tx, x, bf16, g.N, g.H, g.W, g.C, g.xN, g.xH, g.xW, g.P, g.Q, g.sh, g.sw,
                                            g.ph, g.pw, kcwBM))
        return false;
    const int64_t dims[4] = {1, 1, g.K, g.Kred}, st[4] = {0, 0, g.wK, 1};
    return make_map(tw, w, bf16, dims, st, bn);
}

// The D3 code's TMA producer (session 13, the 5-d im2col map): x's 64-channel blocks (C % 64 == 0: mode 1) or two
// taps' 32 channels a slice (C == 32: mode 2, the 3-D UNet's 32-channel layers), dense (t, r, s, c) weights read
// as [K][T*R*S*C] with 16-byte rows, x strides in 16-byte multiples, the taps' offsets (T-1) dd, (R-1) dh, (S-1)
// dw in the 5-d instruction's [0, 31] and the map's corners in [-16, 15] (make_im2col_map5).  0: the gather.
int tma3_mode(const kcw_geom &g)
{
    const int in[3] = {g.D, g.H, g.W}, out[3] = {g.O, g.P, g.Q}, st[3] = {g.sd, g.sh, g.sw};
    const int pad[3] = {g.pd, g.ph, g.pw};
    const bool ok = (g.C % kcwBK == 0 || g.C == 32) && (g.S == 1 || g.wS == g.C) && (g.R == 1 || g.wR == g.S * g.C) &&
                    (g.T == 1 || g.wT == g.R * g.S * g.C) && g.wK % 8 == 0 && (g.N == 1 || g.xN % 8 == 0) &&
                    (g.D == 1 || g.xD % 8 == 0) && (g.H == 1 || g.xH % 8 == 0) && g.xW % 8 == 0 &&
                    (g.T - 1) * g.dd <= 31 && (g.R - 1) * g.dh <= 31 && (g.S - 1) * g.dw <= 31 &&
                    im2col_map5_fits(in, out, st, pad);
    return ok ? (g.C == 32 ? 2 : 1) : 0;
}

int tma3_maps(const kcw_geom &g, const void *x, const void *w, bool bf16, int bn, CUtensorMap *tx, CUtensorMap *tw)
{
    const int mode = tma3_mode(g);
    const int in[3] = {g.D, g.H, g.W}, out[3] = {g.O, g.P, g.Q}, st[3] = {g.sd, g.sh, g.sw};
    const int pad[3] = {g.pd, g.ph, g.pw};
    const int64_t xs[3] = {g.xD, g.xH, g.xW};
    if (!mode || !make_im2col_map5(tx, x, bf16, g.N, in, g.C, g.xN, xs, out, st, pad, mode == 2 ? 32 : 64, kcwBM))
        return 0;
    const int64_t dims[4] = {1, 1, g.K, g.Kred}, wst[4] = {0, 0, g.wK, 1};
    return make_map(tw, w, bf16, dims, wst, bn) ? mode : 0;
}

// Whether a launch runs the D3 code (launch_t): the 32-wide tile, and every 3-D conv.
bool runs_d3(const kcw_geom &g, int bn) { return bn == 32 || g.D != 1 || g.T != 1 || g.O != 1 || g.pd != 0; }

// mp (MP, with D3, unsplit): the phases of a conv_dgrad in this one launch (kconv_wgmma_phases); else g alone.
// PP: the ping-pong consumers (kcw_consume_pingpong).
template <typename T, int BN, bool STG, bool D3, bool MP = false, bool PP = false>
int launch_bn(const kcw_geom &g, const void *x, const void *w, void *y, const kconv_epi &epi, float *part,
              float *stats, int splits, cudaStream_t s, const kcw_phases *mp = nullptr)
{
    typedef kcw_cfg<BN, STG> cf;
    static bool attr_set = false; // the attribute is per function, set once per process
    if (!attr_set) {
        cudaError_t e =
            cudaFuncSetAttribute(kcw_fwd_kernel<T, BN, STG, D3, MP, PP>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 cf::SMEM);
        if (e != cudaSuccess)
            return (int)e;
        attr_set = true;
    }
    kcw_geom gs = g; // splits as the host normalised them: ceil(KT / per) == splits, none empty
    CUtensorMap tx, tw;
    memset(&tx, 0, sizeof tx);
    memset(&tw, 0, sizeof tw);
    // the producer (g.tma: the caller's KCW_TMA_* bits): the MP table's phases gather
    const bool bf = std::is_same<T, __nv_bfloat16>::value;
    gs.tma = MP ? 0
         : D3 ? ((g.tma & KCW_TMA_3D) ? tma3_maps(g, x, w, bf, BN, &tx, &tw) : 0)
              : ((g.tma & KCW_TMA_2D) && tma_maps(g, x, w, bf, BN, &tx, &tw));
    const int KT = (g.Kred + kcwBK - 1) / kcwBK;
    if (splits < 1 || !part)
        splits = 1;
    gs.kt_per = (KT + splits - 1) / splits;
    splits = (KT + gs.kt_per - 1) / gs.kt_per;
    static int sms = 0; // one CTA per SM (192 KiB of stages), each looping over work items
    if (!sms) {
        int dev = 0;
        if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) !=
                                                      cudaSuccess || sms < 1)
            sms = 132;
    }
    const int tiles_m = (g.M + kcwBM - 1) / kcwBM, tiles_n = (g.K + BN - 1) / BN;
    int nwork = tiles_m * tiles_n * splits;
    kcw_phases ph; // MP: mp's phases (the other instances never read it)
    memset(&ph, 0, sizeof ph);
    if (MP && mp) {
        ph = *mp;
        nwork = ph.work0[ph.n];
    }
    const int smem = stats && splits <= 1 ? cf::SMEM : cf::SMEM_PLAIN; // the statistics' buffers only when used
    kcw_fwd_kernel<T, BN, STG, D3, MP, PP><<<(unsigned)min(nwork, sms), kcwThreads, smem, s>>>(
        tx, tw, gs, ph, static_cast<const T *>(x), static_cast<const T *>(w), y, epi, splits > 1 ? part : nullptr,
        splits > 1 ? nullptr : stats, tiles_m, tiles_n, nwork);
    return (int)cudaGetLastError();
}

// Whether the staged store can write y: unsplit, 16-bit y with unit channel stride and every row start (and
// zero lattice) on a 16-byte boundary, as a bulk copy needs; else the register store writes it.
bool stage_ok(const kcw_geom &g, const void *y, bool split)
{
    bool ok = !split && g.yK == 1 && g.dt_y != KDT_F32 && g.K % 8 == 0 && (reinterpret_cast<uintptr_t>(y) & 15) == 0 &&
              (g.N == 1 || g.yN % 8 == 0) && (g.P == 1 || g.yP % 8 == 0) && (g.Q == 1 || g.yQ % 8 == 0);
    for (int i = 0; i < g.nz; i++)
        ok = ok && g.zoff[i] % 8 == 0;
    return ok;
}

template <typename T>
int launch_t(const kcw_geom &g, const void *x, const void *w, void *y, const kconv_epi &epi, float *part,
             float *stats, int splits, int bn, bool stage, bool pingpong, cudaStream_t s)
{
    // the 32-wide tile: the D3 code whatever the dims (one instance a type)
    if (bn == 32)
        return launch_bn<T, 32, false, true>(g, x, w, y, epi, part, stats, splits, s);
    // 3-D: the register store (the staged one decomposes rows in 2-D; its 4 more instances would cost compile
    // time, and the 3-D UNet's 32-/64-channel layers run 64-wide tiles, which it does not serve)
    if (runs_d3(g, bn))
        return bn == 64 ? launch_bn<T, 64, false, true>(g, x, w, y, epi, part, stats, splits, s)
                        : launch_bn<T, 128, false, true>(g, x, w, y, epi, part, stats, splits, s);
    // the ping-pong consumers: 64-wide tiles (a warpgroup's 128 x 128 tile would hold 128 accumulators a thread,
    // which spilled in session 8's 256-wide tile); genstats merges both warpgroups' rows of one tile: cooperative
    if (pingpong && bn == 64 && !stats)
        return launch_bn<T, 64, false, false, false, true>(g, x, w, y, epi, part, stats, splits, s);
    // the 128-wide tile only: its 256-byte rows' copies made ResNet-50's BN = 128 partitions 1.09-1.20x faster,
    // the 128-byte rows of BN = 64 (the 64-channel layers) 0.92-0.96x (bench/RESULTS-conv.md, session 9)
    if (stage && bn == 128 && stage_ok(g, y, splits > 1 && part))
        return launch_bn<T, 128, true, false>(g, x, w, y, epi, part, stats, splits, s);
    return bn == 64 ? launch_bn<T, 64, false, false>(g, x, w, y, epi, part, stats, splits, s)
                    : launch_bn<T, 128, false, false>(g, x, w, y, epi, part, stats, splits, s);
}

// The kernel's geometry of a conv: slots 0, 1, 2 of the 5-slot view are D, H, W (a 2-D conv has unit D, a 1-D
// one unit D and H); nzero zero lattices at zoff for the store.
kcw_geom geom_of(const kconv_params *p, int nzero, const int64_t *zoff)
{
    kcw_geom g;
    g.N = (int)p->N; g.C = (int)p->C; g.K = (int)p->K;
    g.H = (int)p->in[1]; g.W = (int)p->in[2];
    g.R = (int)p->win[1]; g.S = (int)p->win[2];
    g.P = (int)p->out[1]; g.Q = (int)p->out[2];
    g.sh = (int)p->stride[1]; g.sw = (int)p->stride[2];
    g.ph = (int)p->pad[1]; g.pw = (int)p->pad[2];
    g.dh = (int)p->dil[1]; g.dw = (int)p->dil[2];
    g.xN = (int)p->sx[0]; g.xH = (int)p->sx[3]; g.xW = (int)p->sx[4];
    g.wK = (int)p->sw[0]; g.wR = (int)p->sw[3]; g.wS = (int)p->sw[4];
    g.yN = (int)p->sy[0]; g.yK = (int)p->sy[1]; g.yP = (int)p->sy[3]; g.yQ = (int)p->sy[4];
    g.D = (int)p->in[0]; g.T = (int)p->win[0]; g.O = (int)p->out[0];
    g.sd = (int)p->stride[0]; g.pd = (int)p->pad[0]; g.dd = (int)p->dil[0];
    g.xD = (int)p->sx[2]; g.wT = (int)p->sw[2]; g.yO = (int)p->sy[2];
    g.M = g.N * g.O * g.P * g.Q;
    g.Kred = g.T * g.R * g.S * g.C;
    g.dt_y = p->dt_y;
    g.kt_per = 0; // launch_bn sets it
    g.tma = 0;
    g.nz = nzero;
    for (int i = 0; i < KCW_ZERO_MAX; i++)
        g.zoff[i] = i < nzero ? (int)zoff[i] : 0;
    return g;
}

} // namespace

extern "C" int kconv_wgmma_built(void)
{
#ifdef XK_HAVE_SM90A
    return 1;
#else
    return 0;
#endif
}

extern "C" int kconv_wgmma_smem(int bn)
{
    constexpr int a = kcw_cfg<128, false>::SMEM, b = kcw_cfg<128, true>::SMEM;
    return bn == 32 ? kcw_cfg<32, false>::SMEM : bn == 64 ? kcw_cfg<64, false>::SMEM : a > b ? a : b;
}

extern "C" int kconv_wgmma_staged(int bn) { return bn == 128; }

extern "C" int kconv_wgmma_stages(int bn, int staged)
{
    return bn == 32 ? kcw_cfg<32, false>::ST : bn == 64 ? kcw_cfg<64, false>::ST
                    : staged ? kcw_cfg<128, true>::ST : kcw_cfg<128, false>::ST;
}

extern "C" int kconv_wgmma_tma(const kconv_params *p, int bn, int tma)
{
    const kcw_geom g = geom_of(p, 0, nullptr);
    if (runs_d3(g, bn))
        return (tma & KCW_TMA_3D) && tma3_mode(g) ? 2 : 0;
    return (tma & KCW_TMA_2D) && tma_geom_ok(g) ? 1 : 0;
}

extern "C" int kconv_wgmma_phases_ok(const kconv_epi *epi, int n, const int64_t *yoff)
{
    if (!epi || epi->n == 0)
        return 1;
    const kepi_step &s = epi->s[0]; // kcw_mask_regs' conditions, at every phase's offset
    bool ok = epi->n == 1 && s.op == KEPI_RELU_BWD && s.dt != KDT_F32 && s.st[1] == 1 && s.st[0] % 2 == 0 &&
              s.st[3] % 2 == 0 && s.st[4] % 2 == 0;
    for (int i = 0; i < n && ok; i++)
        ok = ((reinterpret_cast<uintptr_t>(s.t) + (uint64_t)yoff[i] * 2) & 3) == 0;
    return ok;
}

extern "C" int kconv_wgmma_phases(int n, const kconv_params *f, const int64_t *woff, const int64_t *yoff,
                                  const int *nzero, const int64_t (*zoff)[KCW_ZERO_MAX], const void *x, const void *w,
                                  void *y, const kconv_epi *epi, int bn, void *stream)
{
    if (n < 1 || n > KCW_PH_MAX || (bn != 64 && bn != 128) || !kconv_wgmma_phases_ok(epi, n, yoff))
        return (int)cudaErrorInvalidValue;
    kcw_phases ph;
    memset(&ph, 0, sizeof ph);
    ph.n = n;
    const int tiles_n = (int)((f[0].K + bn - 1) / bn);
    for (int i = 0; i < n; i++) { // each phase whole (unsplit): its kt_per is its reduction
        if (nzero[i] < 0 || nzero[i] > KCW_ZERO_MAX || f[i].K != f[0].K)
            return (int)cudaErrorInvalidValue;
        kcw_geom g = geom_of(&f[i], nzero[i], zoff[i]);
        g.kt_per = (g.Kred + kcwBK - 1) / kcwBK;
        ph.g[i] = g;
        ph.tiles_m[i] = (g.M + kcwBM - 1) / kcwBM;
        ph.woff[i] = (int)woff[i];
        ph.yoff[i] = (int)yoff[i];
        ph.work0[i + 1] = ph.work0[i] + (g.M > 0 ? ph.tiles_m[i] * tiles_n : 0);
    }
    if (ph.work0[n] == 0)
        return 0;
    kconv_epi none;
    none.n = 0;
    const kconv_epi &e = epi ? *epi : none;
    cudaStream_t s = (cudaStream_t)stream;
    if (f[0].dt_x == KDT_BF16)
        return bn == 64
                   ? launch_bn<__nv_bfloat16, 64, false, true, true>(ph.g[0], x, w, y, e, nullptr, nullptr, 1, s, &ph)
                   : launch_bn<__nv_bfloat16, 128, false, true, true>(ph.g[0], x, w, y, e, nullptr, nullptr, 1, s, &ph);
    return bn == 64 ? launch_bn<__half, 64, false, true, true>(ph.g[0], x, w, y, e, nullptr, nullptr, 1, s, &ph)
                    : launch_bn<__half, 128, false, true, true>(ph.g[0], x, w, y, e, nullptr, nullptr, 1, s, &ph);
}

extern "C" int kconv_wgmma_fwd(const kconv_params *p, const void *x, const void *w, void *y, const kconv_epi *epi,
                               float *part, int splits, int bn, int nzero, const int64_t *zoff, float *stats,
                               int stage, int tma, int pingpong, void *stream)
{
    if ((bn != 32 && bn != 64 && bn != 128) || nzero < 0 || nzero > KCW_ZERO_MAX || (nzero > 0 && splits > 1 && part) ||
        (stats && splits > 1 && part))
        return (int)cudaErrorInvalidValue;
    kconv_epi none;
    none.n = 0;
    kcw_geom g = geom_of(p, nzero, zoff);
    g.tma = tma; // KCW_TMA_* bits: launch_bn keeps them where the maps can be made
    if (g.M == 0 || g.K == 0)
        return 0;
    cudaStream_t s = (cudaStream_t)stream;
    const kconv_epi &e = epi ? *epi : none;
    int rc = p->dt_x == KDT_BF16
                 ? launch_t<__nv_bfloat16>(g, x, w, y, e, part, stats, splits, bn, stage != 0, pingpong != 0, s)
                 : launch_t<__half>(g, x, w, y, e, part, stats, splits, bn, stage != 0, pingpong != 0, s);
    if (rc != 0 || splits <= 1 || !part)
        return rc;
    return kconv_igemm_reduce(p, part, splits, y, epi, stream);
}
