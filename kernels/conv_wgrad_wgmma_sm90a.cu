// conv_wgrad_wgmma_sm90a.cu — the Hopper weight gradient (the conv_wgrad_wgmma engine,
// src/gpu/eng_conv_wgrad_wgmma.c): 1-/2-/3-D channels-last x and dy, groups 1, f16/bf16, C % 4 == 0, K % 8 == 0.
//
// 3-D (session 11): m = (n, o, p, q), j = (t, r, s, c); the depth is one more coordinate of the gather's rows
// and taps, bounds-tested as H and W (runtime, no instance of its own: a 2-D conv has D = O = T = 1 and the
// test passes).  x comes by the gather there (the TMA im2col map is 4-d).  C % 8 == 4 (the BraTS stem, C = 4):
// the GEMM's channels are Cg = C + 4, each 16-byte chunk gathered as two 8-byte copies (x's pixels are 8-byte
// aligned only), the half past C zero-filled, and the reduction kernel drops those columns.
//
// GEMM view: dW[k, j] = sum_m dY[m, k] X[m, j], k over K filters, j = (r, s, c) over R*S*C (c fastest: KRSC),
// m = (n, p, q) over N*P*Q output pixels; X[m, j] = x[n, p*sh - ph + r*dh, q*sw - pw + s*dw, c] (0 in the
// padding).  In NHWC both operands lie reduction-major: a row m of dY holds K contiguous filters and a row of
// X a tap's C contiguous channels.  So the tiles are gathered as they lie (one 128-byte row per m and 64
// columns, 64 rows m per slice, the 128-byte swizzle: 16-byte chunk c of row r at c ^ (r % 8)) and wgmma reads
// both MN-major (its transpose bits, 16-bit types only): a descriptor's 8-row groups along the reduction are
// SBO = 1024 bytes apart, its 64-column blocks along M / N LBO = 64 * 128 bytes apart (as the attention
// kernels read V).
//
// CTA tile bm x bn of dW (128 x 128, 128 x 256, or 64 x 256 for K <= 64: K = 64 fills it), 3 warpgroups:
//   warpgroup 0, the producer (setmaxnreg down to 80): each thread owns chunk column cc = t % 16 of rows
//     t / 16 + 8 i of a slice; the row's (n, p, q) is divided out once (multiply-high) and serves its X chunks,
//     whose taps are fixed per CTA (the j tile does not move), and its dY chunk.  16-byte cp.async,
//     zero-filled (src-size 0) past M, K, R*S*C and in the padding; copies of LAG slices stay in flight per
//     thread, then it fences them into the async proxy and arrives on the slice's "full" mbarrier.  When dY
//     is a plain [M, K] matrix (NHWC, packed pixels) its tiles come by TMA instead (thread 0: one box of
//     64 x 64 per 64 filters, zeros past M and K, completing on the same barrier): cp.async's requests in
//     flight per SM bound what the gather streams (session 9, call 1: ~32 KB a microsecond an SM, 250
//     TFLOP/s), and the bulk copy takes half of them off it.  "full" counts 128 thread arrivals (+ 1 with TMA).
//     With dY by TMA, x comes by TMA too where an im2col map expresses it (kwx_x_tma: C % 64 == 0, so
//     that a 64-column block of j is one tap's 64 channels; the map's corners within its range): then
//     thread 0 alone feeds the ring, one im2col box of 64 pixels x 64 channels per 64-column block, the
//     tap's (r*dh, s*dw) as the box's offsets, at the slice's first pixel's base input position; the box
//     lands in the same 128-byte swizzle as the gather, zeros in the padding and past N*P*Q, and "full"
//     counts that one arrival (session 10; XDNN_WGRAD_X_NO_TMA=1 keeps the gather).
//   warpgroups 1 and 2, the consumers (setmaxnreg up to 208): a 64 x 128 or 64 x 256 part each (the two
//     64-filter halves of a 128 x 128 or 128 x 256 tile, or the two 128-column halves of a 64 x 256 one; the
//     128 x 256 tile halves the bytes a FLOP takes from L2, session 10), wgmma m64n128k16, one or two
//     from shared memory, 4 k-steps a slice, one slice's group in flight; "empty" (256 arrivals) hands a
//     stage back once the group after it is issued and it has retired.
// Split reduction: grid (j tiles, k tiles, splits), j fastest (CTAs at once read the same rows of dY and x);
// split z reduces slices [z * per, ...) and stores its raw f32 tile to ws[z][K][J]; kwx_reduce sums the splits
// in order (deterministic) and stores dw in its type through its strides.
// Offsets are 32-bit: the engine refuses tensors spanning 2^31 elements or more.
#include "kern_common.cuh"
#include "kern_fdiv.cuh"
#include "wgmma_sm90a.cuh"

#include "gpu/kern_conv_wgrad_wgmma.h"

#include <stdlib.h>
#include <string.h>

namespace {

#if XW_DEVICE
// 8-byte cp.async (the .ca form: .cg takes 16 only), zero-filled when !valid: the C % 8 == 4 gather's halves
__device__ __forceinline__ void kwx_cpa8(uint32_t dst, const void *src, bool valid)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 8 : 0)
                 : "memory");
}
#endif

struct kwx_geom {
    int H, W, C, K, S;
    int sh, sw, ph, pw, dh, dw;
    int xN, xH, xW; // x strides (elements); channel stride 1
    int yN, yP, yQ; // dy strides; channel stride 1
    int M, J, slices, per; // N*O*P*Q, T*R*S*Cg, KWX_BK-row slices, slices per split
    int tma;               // dY's tiles by TMA (dY a plain [M, K] matrix), else by the producer's cp.async
    int xtma;              // x's tiles by TMA im2col too (needs tma): thread 0 feeds the ring alone
    kfdiv dPQ, dQ;
    // depth (session 11): x depth D, filter depth taps over R*S taps (RS), stride / lead pad / dilation, x and
    // dy depth strides, O = dy's depth (dO divides it out of m / (P*Q)); a 1-/2-D conv has D = O = 1, sd = dd
    // = 1, pd = 0, so the depth test passes and adds nothing
    int D, RS, sd, pd, dd, xD, yO;
    kfdiv dO;
    // channels in the GEMM: Cg = C rounded up to 8 (J's c runs over Cg); C % 8 == 4 (the 3-D stem's C = 4,
    // x's pixels 8-byte aligned only) gathers each chunk as two 8-byte halves, the one past C zero-filled
    int Cg, half;
};

constexpr int kwxThreads = 384, kwxBudget = 208 * 1024;

template <int BM, int BN_> struct kwx_cfg {
    static constexpr int BN = BN_;
    static constexpr int BLK = KWX_BK * 128;                  // one 64-column block of a slice (bytes)
    static constexpr int A_BYTES = BM / 64 * BLK, STAGE = A_BYTES + BN / 64 * BLK;
    static constexpr int ST = kwxBudget / STAGE;                // 6 (128 x 128), 5 (64 x 256), 4 (128 x 256)
    static constexpr int LAG = ST - 2;                          // slices of copies in flight per producer thread
    static constexpr int SMEM = ST * STAGE + 2 * ST * 8 + 1024; // + barriers, + alignment slack
    static constexpr int AC = BM / 8;                           // dY chunks per row (16 or 8)
    static constexpr int NU = BN / 128;                         // X chunks per row and producer thread
    // a consumer's part: 64 filters x CN columns (BM = 64: half the columns; else all), as NH m64n128 halves
    static constexpr int CN = BM == 64 ? BN / 2 : BN, NH = CN / 128;
};

#if XW_DEVICE
// The producer when every tile comes by TMA (thread 0 of warpgroup 0): per slice one dY box per 64 filters
// and one x im2col box per 64-column block of j that holds columns (each one tap, C % 64 == 0).  All ST
// stages can be in flight (no copies of its own to wait for).
template <int BM, int BN>
__device__ __forceinline__ void kwx_produce_tma(const CUtensorMap *tdy, const CUtensorMap *tx, const kwx_geom &g,
                                                uint32_t sbase, uint32_t sbar, int bn, int bm, int sl0, int KT)
{
    using C = kwx_cfg<BM, BN>;
    constexpr int ST = C::ST, NB = BN / 64;
    int xc[NB];
    uint16_t xow[NB], xoh[NB];
    int nb = 0;
#pragma unroll
    for (int b = 0; b < NB; b++) {
        const int j0 = bn + 64 * b, tap = j0 / g.C;
        if (j0 < g.J)
            nb = b + 1;
        xc[b] = j0 - tap * g.C;
        xoh[b] = (uint16_t)((tap / g.S) * g.dh);
        xow[b] = (uint16_t)((tap % g.S) * g.dw);
    }
    const uint32_t bytes = (uint32_t)(C::A_BYTES + nb * C::BLK);
    for (int kt = 0; kt < KT; kt++) {
        const int st = kt % ST;
        const uint32_t full = sbar + 8u * st, sA = sbase + st * C::STAGE, sB = sA + C::A_BYTES;
        mb_wait(sbar + 8u * (ST + st), ((kt / ST) & 1) ^ 1);
        mb_expect(full, bytes);
        const int m0 = (sl0 + kt) * KWX_BK;
#pragma unroll
        for (int a = 0; a < BM / 64; a++)
            tma_load(sA + a * C::BLK, tdy, full, bm + a * 64, m0, 0, 0);
        const uint32_t n = kfdiv_div((uint32_t)m0, g.dPQ), rem = (uint32_t)m0 - n * g.dPQ.d;
        const uint32_t p = kfdiv_div(rem, g.dQ), q = rem - p * g.dQ.d;
        const int w0 = (int)q * g.sw - g.pw, h0 = (int)p * g.sh - g.ph;
#pragma unroll
        for (int b = 0; b < NB; b++)
            if (b < nb)
                tma_load_im2col_4d(sB + b * C::BLK, tx, full, xc[b], w0, h0, (int)n, xow[b], xoh[b]);
    }
}
#endif

template <typename T, int BM, int BN>
__global__ void __launch_bounds__(kwxThreads, 1)
    kwx_kernel(const __grid_constant__ CUtensorMap tdy, const __grid_constant__ CUtensorMap tx, const kwx_geom g,
               const T *__restrict__ x,
               const T *__restrict__ dy, float *__restrict__ ws)
{
#if XW_DEVICE
    using C = kwx_cfg<BM, BN>;
    constexpr int ST = C::ST, BLK = C::BLK, NH = C::NH;
    extern __shared__ unsigned char smem_raw[];
    const uint32_t sbase = (smem_u32(smem_raw) + 1023u) & ~1023u; // swizzled tiles need 1024-byte alignment
    const uint32_t sbar = sbase + ST * C::STAGE;
#define KWX_FULL(s) (sbar + 8u * (s))
#define KWX_EMPTY(s) (sbar + 8u * (ST + (s)))
    // warp-uniform by a lane-0 broadcast, which ptxas can prove (threadIdx.x / 128 it cannot): the shared
    // addresses derived from it, and the wgmma descriptors on them, then live in uniform registers (no R2UR)
    const int wg = __shfl_sync(0xffffffffu, threadIdx.x / 128, 0);
    const int bn = blockIdx.x * BN, bm = blockIdx.y * BM, z = blockIdx.z;
    const int sl0 = z * g.per, KT = max(0, min(g.per, g.slices - sl0));

    if (threadIdx.x == 0) {
#pragma unroll
        for (int s = 0; s < ST; s++) {
            mb_init(KWX_FULL(s), g.xtma ? 1 : 128 + (g.tma ? 1 : 0));
            mb_init(KWX_EMPTY(s), 256);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    if (wg == 0) { // ---- producer
        asm volatile("setmaxnreg.dec.sync.aligned.u32 80;\n");
        if (g.xtma) { // every tile by TMA: one thread
            if (threadIdx.x == 0)
                kwx_produce_tma<BM, BN>(&tdy, &tx, g, sbase, sbar, bn, bm, sl0, KT);
            return;
        }
        const int t = threadIdx.x, cc = t & 15, r0 = t >> 4; // chunk column; rows r0 + 8 i (r0 == row % 8)
        // the dY chunk: filters ka .. ka + 7 (BM = 64: columns 0-7, rows of parity cc / 8)
        const int ac = cc % C::AC, ka = bm + ac * 8;
        const bool aval = ka < g.K;
        const uint32_t aoff = (uint32_t)((ac >> 3) * BLK + (((ac & 7) ^ r0) << 4));
        // the X chunks: j = bn + cc * 8 + 128 u, one tap each (Cg % 8 == 0), fixed for the CTA; tap = (t, r, s)
        int xc[C::NU], xdr[C::NU], xds[C::NU], xdt[C::NU];
        bool xval[C::NU];
#pragma unroll
        for (int u = 0; u < C::NU; u++) {
            const int j = bn + cc * 8 + 128 * u;
            xval[u] = j < g.J;
            const int jj = xval[u] ? j : 0, tap = jj / g.Cg, t3 = tap / g.RS, rs = tap - t3 * g.RS;
            xc[u] = jj - tap * g.Cg;
            xdt[u] = t3 * g.dd;
            xdr[u] = (rs / g.S) * g.dh;
            xds[u] = (rs % g.S) * g.dw;
        }
        const uint32_t swz = (uint32_t)(((cc & 7) ^ r0) << 4);
        for (int kt = 0; kt < KT; kt++) {
            const int st = kt % ST;
            mb_wait(KWX_EMPTY(st), ((kt / ST) & 1) ^ 1);
            const uint32_t sA = sbase + st * C::STAGE, sB = sA + C::A_BYTES;
            const int mrow0 = (sl0 + kt) * KWX_BK + r0;
            if (g.tma && t == 0) {
                mb_expect(KWX_FULL(st), (uint32_t)C::A_BYTES);
#pragma unroll
                for (int a = 0; a < BM / 64; a++)
                    tma_load(sA + a * BLK, &tdy, KWX_FULL(st), bm + a * 64, (sl0 + kt) * KWX_BK, 0, 0);
            }
#pragma unroll
            for (int i = 0; i < 8; i++) {
                const int m = mrow0 + 8 * i, row = r0 + 8 * i;
                const bool v = m < g.M;
                const uint32_t mm = v ? (uint32_t)m : 0u;
                const uint32_t no = kfdiv_div(mm, g.dPQ), rem = mm - no * g.dPQ.d; // no = n * O + o
                const uint32_t p = kfdiv_div(rem, g.dQ), q = rem - p * g.dQ.d;
                const uint32_t n = kfdiv_div(no, g.dO), o = no - n * g.dO.d;
                if (!g.tma && (BM == KWX_BM_BIG || (i & 1) == (cc >> 3))) {
                    const bool va = v && aval;
                    const T *src =
                        va ? dy + ((int)n * g.yN + (int)o * g.yO + (int)p * g.yP + (int)q * g.yQ + ka) : dy;
                    cpa16(sA + row * 128 + aoff, src, va);
                }
                const int ih0 = (int)p * g.sh - g.ph, iw0 = (int)q * g.sw - g.pw, id0 = (int)o * g.sd - g.pd;
                const int xb = (int)n * g.xN;
#pragma unroll
                for (int u = 0; u < C::NU; u++) {
                    const int ih = ih0 + xdr[u], iw = iw0 + xds[u], id = id0 + xdt[u];
                    const bool vb = v && xval[u] && (unsigned)ih < (unsigned)g.H && (unsigned)iw < (unsigned)g.W &&
                                    (unsigned)id < (unsigned)g.D;
                    const uint32_t dst = sB + (2 * u + (cc >> 3)) * BLK + row * 128 + swz;
                    const T *src = vb ? x + (xb + id * g.xD + ih * g.xH + iw * g.xW + xc[u]) : x;
                    if (g.half) { // channels xc .. xc + 3 then xc + 4 .. xc + 7 (zeros past C)
                        const bool v2 = vb && xc[u] + 4 < g.C;
                        kwx_cpa8(dst, src, vb);
                        kwx_cpa8(dst + 8, v2 ? src + 4 : x, v2);
                    } else {
                        cpa16(dst, src, vb);
                    }
                }
            }
            cpa_commit();
            if (kt >= C::LAG) { // the copies of slice kt - LAG have landed: hand it over
                cpa_wait<C::LAG>();
                fence_async();
                mb_arrive(KWX_FULL((kt - C::LAG) % ST));
            }
        }
        cpa_wait<0>();
        fence_async();
        for (int j = max(0, KT - C::LAG); j < KT; j++)
            mb_arrive(KWX_FULL(j % ST));
        return;
    }

    // ---- consumers
    asm volatile("setmaxnreg.inc.sync.aligned.u32 208;\n");
    const int cw = wg - 1, tid = threadIdx.x - 128 * wg, warp = tid >> 5, lane = tid & 31;
    const int acol = BM == 64 ? 0 : cw, bcol = BM == 64 ? 2 * cw : 0; // 64-column blocks
    float acc[NH][64];
#pragma unroll
    for (int h = 0; h < NH; h++)
#pragma unroll
        for (int i = 0; i < 64; i++)
            acc[h][i] = 0.f;
    for (int kt = 0; kt < KT; kt++) {
        const int st = kt % ST;
        mb_wait(KWX_FULL(st), (kt / ST) & 1);
        const uint32_t sA = sbase + st * C::STAGE + acol * BLK, sB = sbase + st * C::STAGE + C::A_BYTES + bcol * BLK;
        wg_fence();
#pragma unroll
        for (int k16 = 0; k16 < KWX_BK / 16; k16++)
#pragma unroll
            for (int h = 0; h < NH; h++)
                wg_tt(acc[h], desc_add(gdesc(sA, BLK, 1024), k16 * 2048),
                      desc_add(gdesc(sB, BLK, 1024), 2 * h * BLK + k16 * 2048), kt > 0 || k16 > 0, T());
        wg_commit();
        wg_wait<1>(); // the previous slice's group has retired: its stage goes back
        if (kt > 0)
            mb_arrive(KWX_EMPTY((kt - 1) % ST));
    }
    wg_wait<0>();
#pragma unroll
    for (int h = 0; h < NH; h++)
        keep(acc[h]);
    // the raw f32 tile to this split's partial: accumulator layout of m64n128 (per warp, per 8-column block jj):
    // rows lane/4 and lane/4 + 8, columns jj*8 + (lane%4)*2 + {0, 1} at acc[jj*4 + h*2 + {0, 1}]; half hn of
    // a consumer's columns 128 further on
    float *wz = ws + (size_t)z * g.K * g.J;
    const int jb = bn + bcol * 64 + (lane & 3) * 2;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int k = bm + acol * 64 + warp * 16 + lane / 4 + h * 8;
        if (k >= g.K)
            continue;
#pragma unroll
        for (int hn = 0; hn < NH; hn++)
#pragma unroll
            for (int jj = 0; jj < 16; jj++) {
                const int j = jb + 128 * hn + jj * 8;
                if (j < g.J) // J % 8 == 0: the pair is wholly in or out
                    *reinterpret_cast<float2 *>(wz + (size_t)k * g.J + j) =
                        make_float2(acc[hn][jj * 4 + h * 2], acc[hn][jj * 4 + h * 2 + 1]);
            }
    }
#undef KWX_FULL
#undef KWX_EMPTY
#endif
}

// dw[k, c, t, r, s] = sum over the splits (in order) of ws[z][k][j], j = ((t*R + r)*S + s)*Cg + c; 4 columns a
// thread (J % 8 == 0: the 4 share a tap; Cg = C + 4 when C % 8 == 4: a group wholly past C is the padding, not
// stored).
__global__ void __launch_bounds__(256) kwx_reduce(const float *__restrict__ ws, int splits, int K, int J, int Cg,
                                                  int C, int S, int RS, void *__restrict__ dw, int dt, int64_t swK,
                                                  int64_t swC, int64_t swT, int64_t swR, int64_t swS)
{
    const int64_t per = (int64_t)K * J, total = per / 4;
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total; t += (int64_t)gridDim.x * blockDim.x) {
        const int64_t e = t * 4;
        float4 s = make_float4(0.f, 0.f, 0.f, 0.f);
        for (int z = 0; z < splits; z++) {
            const float4 v = __ldg(reinterpret_cast<const float4 *>(ws + z * per + e));
            s.x += v.x;
            s.y += v.y;
            s.z += v.z;
            s.w += v.w;
        }
        const int k = (int)(e / J), j = (int)(e % J), tap = j / Cg, c = j - tap * Cg, t3 = tap / RS,
                  rs = tap - t3 * RS;
        if (c >= C)
            continue;
        const int64_t o = k * swK + c * swC + t3 * swT + (rs / S) * swR + (rs % S) * swS;
        kst(dw, dt, o, s.x);
        kst(dw, dt, o + swC, s.y);
        kst(dw, dt, o + 2 * swC, s.z);
        kst(dw, dt, o + 3 * swC, s.w);
    }
}

template <typename T, int BM, int BN>
int launch(const CUtensorMap &tdy, const CUtensorMap &tx, const kwx_geom &g, const void *x, const void *dy, float *ws,
           int splits, cudaStream_t s)
{
    typedef kwx_cfg<BM, BN> cf;
    static bool attr_set = false; // the attribute is per function, set once per process
    if (!attr_set) {
        cudaError_t e = cudaFuncSetAttribute(kwx_kernel<T, BM, BN>, cudaFuncAttributeMaxDynamicSharedMemorySize, cf::SMEM);
        if (e != cudaSuccess)
            return (int)e;
        attr_set = true;
    }
    dim3 grid((unsigned)((g.J + BN - 1) / BN), (unsigned)((g.K + BM - 1) / BM), (unsigned)splits);
    kwx_kernel<T, BM, BN><<<grid, kwxThreads, cf::SMEM, s>>>(tdy, tx, g, static_cast<const T *>(x),
                                                          static_cast<const T *>(dy), ws);
    return (int)cudaGetLastError();
}

template <typename T> int launch_t(const CUtensorMap &tdy, const CUtensorMap &tx, const kwx_geom &g, const void *x,
                                   const void *dy, float *ws, int bm, int bn, int splits, cudaStream_t s)
{
    if (bm == 64)
        return launch<T, 64, 256>(tdy, tx, g, x, dy, ws, splits, s);
    return bn == 256 ? launch<T, 128, 256>(tdy, tx, g, x, dy, ws, splits, s)
                     : launch<T, 128, 128>(tdy, tx, g, x, dy, ws, splits, s);
}

// dY a plain [N*O*P*Q, K] matrix: its pixels packed rows of one stride (the stride of a unit O or P is any: a
// 1-D conv's slot 1 has stride 0).
bool kwx_dy_packed(const kconv_params *p)
{
    const int64_t Q = p->out[2], P = p->out[1], O = p->out[0], rs = p->sy[4];
    return p->sy[0] == O * P * Q * rs && (O == 1 || p->sy[2] == P * Q * rs) && (P == 1 || p->sy[3] == Q * rs);
}

// a conv with a depth (3-D): x's tiles by the gather (the im2col map is 4-d)
bool kwx_has_depth(const kconv_params *p) { return p->in[0] != 1 || p->win[0] != 1 || p->out[0] != 1; }

// x by TMA im2col: dY by TMA (dy packed; XDNN_WGRAD_NO_TMA unset), XDNN_WGRAD_X_NO_TMA unset, a 64-channel
// block one tap's (C % 64 == 0), the corners and the taps' offsets within what the map and the instruction
// hold, strides within elementStrides' 8.
bool kwx_x_tma_ok(const kconv_params *p)
{
    const char *e = getenv("XDNN_WGRAD_NO_TMA"), *ex = getenv("XDNN_WGRAD_X_NO_TMA");
    if ((e && *e == '1') || (ex && *ex == '1') || p->C % 64 != 0 || kwx_has_depth(p))
        return false;
    if (!kwx_dy_packed(p))
        return false;
    return im2col_offsets_fit((p->win[1] - 1) * p->dil[1], (p->win[2] - 1) * p->dil[2]) &&
           im2col_map_fits((int)p->in[1], (int)p->in[2], (int)p->out[1], (int)p->out[2], (int)p->stride[1],
                           (int)p->stride[2], (int)p->pad[1], (int)p->pad[2]);
}

// The im2col map of x: boxes of KWX_BK pixels (the reduction's slice) x 64 channels, the conv stride as the
// pixel walk's step (wgmma_sm90a.cuh's make_im2col_map, the forward conv's too).
bool kwx_make_x_map(CUtensorMap *m, const kconv_params *p, const void *x)
{
    return make_im2col_map(m, x, p->dt_x == KDT_BF16, (int)p->N, (int)p->in[1], (int)p->in[2], (int)p->C, p->sx[0],
                           p->sx[3], p->sx[4], (int)p->out[1], (int)p->out[2], (int)p->stride[1], (int)p->stride[2],
                           (int)p->pad[1], (int)p->pad[2], KWX_BK);
}

} // namespace

extern "C" int kconv_wgrad_wgmma_built(void)
{
#ifdef XK_HAVE_SM90A
    return 1;
#else
    return 0;
#endif
}

extern "C" int kconv_wgrad_wgmma_smem(int bm, int bn)
{
    return bm == 64 ? kwx_cfg<64, 256>::SMEM : bn == 256 ? kwx_cfg<128, 256>::SMEM : kwx_cfg<128, 128>::SMEM;
}

extern "C" int kconv_wgrad_wgmma_x_tma(const kconv_params *p) { return kwx_x_tma_ok(p) ? 1 : 0; }

extern "C" int kconv_wgrad_wgmma(const kconv_params *p, const void *x, void *dw, const void *dy, float *ws, int bm,
                                 int bn, int splits, void *stream)
{
    if (!((bm == 64 && bn == 256) || (bm == 128 && (bn == 128 || bn == 256))))
        return (int)cudaErrorInvalidValue;
    kwx_geom g; // slots 0-2 of the 5-slot view: D, H, W (a 1-D conv has unit D and H, a 2-D one unit D)
    g.H = (int)p->in[1]; g.W = (int)p->in[2];
    g.D = (int)p->in[0]; g.RS = (int)(p->win[1] * p->win[2]);
    g.sd = (int)p->stride[0]; g.pd = (int)p->pad[0]; g.dd = (int)p->dil[0];
    g.xD = (int)p->sx[2]; g.yO = (int)p->sy[2];
    g.Cg = (int)(p->C + 7) / 8 * 8; g.half = p->C % 8 != 0;
    g.C = (int)p->C; g.K = (int)p->K; g.S = (int)p->win[2];
    g.sh = (int)p->stride[1]; g.sw = (int)p->stride[2];
    g.ph = (int)p->pad[1]; g.pw = (int)p->pad[2];
    g.dh = (int)p->dil[1]; g.dw = (int)p->dil[2];
    g.xN = (int)p->sx[0]; g.xH = (int)p->sx[3]; g.xW = (int)p->sx[4];
    g.yN = (int)p->sy[0]; g.yP = (int)p->sy[3]; g.yQ = (int)p->sy[4];
    const int P = (int)p->out[1], Q = (int)p->out[2], O = (int)p->out[0];
    g.M = (int)p->N * O * P * Q;
    g.J = (int)(p->win[0] * p->win[1] * p->win[2]) * g.Cg;
    g.dPQ = kfdiv_make((uint32_t)(P * Q));
    g.dQ = kfdiv_make((uint32_t)Q);
    g.dO = kfdiv_make((uint32_t)O);
    g.slices = (g.M + KWX_BK - 1) / KWX_BK;
    if (g.M == 0 || g.K == 0 || g.J == 0)
        return 0;
    if (splits < 1)
        splits = 1;
    if (splits > g.slices)
        splits = g.slices;
    g.per = (g.slices + splits - 1) / splits;
    splits = (g.slices + g.per - 1) / g.per; // none empty
    // dY by TMA when its pixels are packed rows of one stride (a [M, K] matrix); XDNN_WGRAD_NO_TMA=1 keeps
    // the cp.async path (the A/B of session 9)
    CUtensorMap tdy;
    memset(&tdy, 0, sizeof tdy);
    const char *no_tma = getenv("XDNN_WGRAD_NO_TMA");
    const int64_t rs = p->sy[4];
    g.tma = !(no_tma && *no_tma == '1') && kwx_dy_packed(p);
    if (g.tma) {
        const int64_t dims[4] = {1, 1, g.M, g.K}, st[4] = {0, 0, rs, 1};
        g.tma = make_map(&tdy, dy, p->dt_x == KDT_BF16, dims, st, KWX_BK);
    }
    CUtensorMap tx;
    memset(&tx, 0, sizeof tx);
    g.xtma = g.tma && kwx_x_tma_ok(p) && kwx_make_x_map(&tx, p, x);
    cudaStream_t s = (cudaStream_t)stream;
    int e = p->dt_x == KDT_BF16 ? launch_t<__nv_bfloat16>(tdy, tx, g, x, dy, ws, bm, bn, splits, s)
                                : launch_t<__half>(tdy, tx, g, x, dy, ws, bm, bn, splits, s);
    if (e)
        return e;
    const int64_t total = (int64_t)g.K * g.J / 4;
    kwx_reduce<<<kgrid(total, 256), 256, 0, s>>>(ws, splits, g.K, g.J, g.Cg, g.C, g.S, g.RS, dw, p->dt_w, p->sw[0],
                                                 p->sw[1], p->sw[2], p->sw[3], p->sw[4]);
    return (int)cudaGetLastError();
}
