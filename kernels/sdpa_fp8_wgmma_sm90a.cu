// sdpa_fp8_wgmma_sm90a.cu — the Hopper fp8 attention forward (host side: src/gpu/eng_sdpa_fp8.c as
// sdpa_fp8_wgmma; semantics: src/ops/sdpa_fp8.c; parameters: src/gpu/kern_sdpa_fp8.h).  Built for sm_90a only
// (Makefile's *_sm90a.cu rule); other passes compile the kernels to a trap and the engine refuses other devices.
//
//  v1 (2026-11-24, issue 14 item 3), modelled on sdpa_wgmma_sm90a.cu (the bf16 forward):
//  sdpa_fp8_vt  the pre-pass: V [B, Hk, Skv, 128] -> the workspace as V^T [B, Hk, 128, Skv16] (Skv16 = Skv
//    rounded up to 16, keys past Skv zero) and amax_s = amax_o = 0.  fp8 wgmma takes both operands K-major, and
//    the K of P V is the key, so B must be V^T.  Inside each group of 16 keys the keys are stored in the order
//    perm(q) below, the order in which the P V A fragments hold them (next paragraph).  A separate kernel:
//    ~64 MB moved at b4h16s4096d128, a few percent of the attention's time (counted in the engine's time).
//  sdpa_fp8_fwd  one block = 3 warpgroups, 128 query rows of one (b, h), as in the bf16 kernel: warpgroup 0
//    (one thread) streams Q once and K, V^T tiles of 128 keys through a 3-stage TMA ring (128-byte rows: one
//    128-byte swizzle atom per row, so every tile is a single box); warpgroups 1 and 2 (64 rows each) issue
//    S = Q K^T as 4 wgmma m64n128k32 e4m3 (both from shared memory), run the online softmax (exp2 domain,
//    masks only on edge tiles), and O += P8 V^T as 4 wgmma m64n128k32 with P8 from registers.  Ping-pong of
//    the two consumers and the persistent grid (non-causal) as in the bf16 kernel.
//  P to fp8 in registers.  The f32 accumulator gives a thread, of each 16 keys of a row, the keys 2t4, 2t4+1,
//    8+2t4, 9+2t4 (t4 = lane % 4); the 8-bit A fragment of k32 wants positions 4t4 .. 4t4+3 (PTX ISA, register
//    fragments of 8-bit A: a0 row g k 4t4.., a1 row g+8, a2 row g k 16+4t4.., a3 row g+8).  Instead of moving
//    bytes between lanes, fragment position q of each 16-group holds key perm(q) = 8*((q&3)>>1) + 2*(q>>2) +
//    (q&1) — exactly what the thread has — and the pre-pass stores V^T's keys in the same order, so the sum over
//    positions is the sum over keys.  Four cvt.rn.satfinite.e4m3x2.f32 per 8 probabilities, no shuffles.
//  Quantizing P.  One pass cannot know the row sum l before P V, so P8 = sat(RNE(p / s_scale)) with p =
//    exp(s - m_running) in [0, 1] (the unnormalized probability, FlashAttention-3's and cuDNN's way), and
//    O = (sum P8 V^T) * s_scale * v_scale / l.  The CPU reference rounds the normalized P = p / l instead: the
//    two grids differ, so each P8 * s_scale differs from the reference's by up to an e4m3 step of P (2^-3
//    relative) — rounding noise, not a one-step-on-ties difference (difftest_seq's tolerance says why).
//    amax_s = max over rows of 1 / l (a row's largest P is exp(0) / l); amax_o = max |O| of the f32 O before it
//    is stored; both atomicMax on the bit pattern of |x| (NaN, 0x7fc00000 once its sign is cleared, sticks).
//    Rows that see no key add nothing, as in the reference.
//  D = 128 only (one 128-byte row per tile row); e4m3 q, k, v; no bias, dropout, window, seq lens (refused).
//  v2 (2026-11-24): p / s_scale straight from the exponent (log2(s_scale) folded into the row max), one FMUL per
//    probability less; v1 measured 700 TFLOP/s at b4h16s4096d128 on the H100 (bench/RESULTS-lowp.md).
//  v3 (2026-11-24): o is rescaled only when a row max of the warp grew (corr != 1), as FlashAttention-4 does.
//  v4 (2026-11-24): with fp8 the tensor cores finish a tile in half the bf16 time while the SFU work stays (64
//    MUFU.EX2 + 32 conversions per thread per tile, at 16 per SM per clock): 3 of every 8 exponentials move to
//    the FMA pipe (ex2_poly), FlashAttention-4's trick.  Measured on the H100 (b4h16s4096d128, one call): 641
//    TFLOP/s against 688 with every exponential on MUFU (causal 526 / 562): the SFU is not what binds this
//    schedule, the extra FMA-pipe instructions cost more than they free.  So it is off by default, kept behind
//    XDNN_SDPA_FP8_EX2_POLY=1 for the schedules to come (three consumers, longer key tiles).  v3 measured 688
//    against v2's 697 and v1's 700 in earlier calls: within the calls' spread (bench/RESULTS-lowp.md).
#include "wgmma_sm90a.cuh"

#include "gpu/kern_sdpa_fp8.h"

#include <stdlib.h>

namespace {

constexpr int BM = 128, BN = 128, DH = 128, ST = 3; // rows per block, keys per tile, head dim (bytes), stages
constexpr int TILE = 128 * 128;                     // bytes of a Q, K or V^T tile: 128 rows of 128 bytes
constexpr int BAR_BYTES = 8 * (2 + 4 * ST);         // full/empty Q, full K/V, empty K/V
constexpr int SMEM = 1024 + TILE + 2 * ST * TILE + BAR_BYTES; // +1024: alignment slack
constexpr int kThreads = 384;
constexpr int VT_KEYS = 64; // keys per pre-pass block

// Fragment position q (0..15) of a 16-key group holds key perm(q) of that group (the file header).
__host__ __device__ __forceinline__ int perm16(int q) { return ((q & 3) >> 1) * 8 + (q >> 2) * 2 + (q & 1); }

__global__ void __launch_bounds__(256) sdpa_fp8_vt(const xk_sdpa_fp8 p, int skv16)
{
    __shared__ __align__(16) unsigned char tile[VT_KEYS][DH + 16]; // +16: the column reads spread over banks
    if (blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0 && threadIdx.x == 0) {
        if (p.amax_s)
            *p.amax_s = 0.0f;
        if (p.amax_o)
            *p.amax_o = 0.0f;
    }
    const int j0 = blockIdx.x * VT_KEYS, hk = blockIdx.y, b = blockIdx.z;
    const unsigned char *v = static_cast<const unsigned char *>(p.v) + b * p.v_st[0] + hk * p.v_st[1];
    for (int c = threadIdx.x; c < VT_KEYS * DH / 16; c += blockDim.x) {
        const int r = c / (DH / 16), col = (c % (DH / 16)) * 16;
        uint4 x = make_uint4(0, 0, 0, 0);
        if (j0 + r < p.Skv) // rows 16-byte aligned: the engine checks v's strides and base
            x = *reinterpret_cast<const uint4 *>(v + (int64_t)(j0 + r) * p.v_st[2] + col);
        *reinterpret_cast<uint4 *>(&tile[r][col]) = x;
    }
    __syncthreads();
    unsigned char *vt = static_cast<unsigned char *>(p.vt) + ((int64_t)b * p.Hk + hk) * DH * skv16;
    for (int c = threadIdx.x; c < DH * (VT_KEYS / 16); c += blockDim.x) { // 16 bytes: one d row, one key group
        const int d = c / (VT_KEYS / 16), g = c % (VT_KEYS / 16), k0 = j0 + g * 16;
        if (k0 >= skv16)
            continue;
        uint32_t w[4];
#pragma unroll
        for (int q4 = 0; q4 < 4; q4++) {
            w[q4] = 0;
#pragma unroll
            for (int e = 0; e < 4; e++)
                w[q4] |= (uint32_t)tile[g * 16 + perm16(q4 * 4 + e)][d] << (8 * e);
        }
        *reinterpret_cast<uint4 *>(vt + (int64_t)d * skv16 + k0) = make_uint4(w[0], w[1], w[2], w[3]);
    }
}

#if XW_DEVICE
#define XF_R8(d, i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
                    "+f"(d[i + 6]), "+f"(d[i + 7])
#define XF_R64(d) XF_R8(d, 0), XF_R8(d, 8), XF_R8(d, 16), XF_R8(d, 24), XF_R8(d, 32), XF_R8(d, 40), \
                  XF_R8(d, 48), XF_R8(d, 56)
// S (+)= Q K^T, both e4m3 K-major in shared memory (fp8 wgmma has no transpose immediates); acc = 0 overwrites.
__device__ __forceinline__ void qk_ss(float (&d)[64], uint64_t da, uint64_t db, int acc)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
                 "}, %64, %65, p, 1, 1;\n}\n"
                 : XF_R64(d)
                 : "l"(da), "l"(db), "r"(acc));
}
// O += P8 V^T: P8 from registers (the 8-bit A fragment), V^T K-major in shared memory.
__device__ __forceinline__ void pv_rs(float (&d)[64], const uint32_t (&a)[4], uint64_t db)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
                 "}, {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
                 : XF_R64(d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));
}
#undef XF_R8
#undef XF_R64

// Four floats to e4m3 bytes, a in the lowest (cvt puts its first source in the upper byte), saturating.
__device__ __forceinline__ uint32_t e4m3x4(float a, float b, float c, float d)
{
    uint16_t lo, hi;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(lo) : "f"(b), "f"(a));
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(hi) : "f"(d), "f"(c));
    return (uint32_t)lo | ((uint32_t)hi << 16);
}
// 2^x on the FMA pipe (v4): x = j + f, j = round(x) by the 1.5 * 2^23 trick, 2^f on [-0.5, 0.5] by a cubic
// (relative error 7.5e-5, fitted for relative error at Chebyshev nodes; P is rounded to e4m3's 2^-4 next), 2^j added
// to the exponent bits.  x < -125 (masked keys: -inf) gives 2^-125, which e4m3 rounds to 0 and adds nothing to
// a row sum of at least 1; a NaN x stays NaN (the compare is false, and NaN's bits keep p's).
__device__ __forceinline__ float ex2_poly(float x)
{
    x = x < -125.0f ? -125.0f : x;
    const float t = x + 12582912.0f;
    const float f = x - (t - 12582912.0f);
    const float p = fmaf(fmaf(fmaf(0.0551716f, f, 0.24261118f), f, 0.693261f), f, 0.99992807f);
    return __int_as_float(__float_as_int(p) + (int)((uint32_t)(__float_as_int(t) - 0x4B400000) << 23));
}
// Two floats to fp8 bytes of o's dtype (1 e4m3, 2 e5m2), a in the lower byte.
__device__ __forceinline__ uint16_t fp8x2(float a, float b, int o_fp8)
{
    uint16_t r;
    if (o_fp8 == 1)
        asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(r) : "f"(b), "f"(a));
    else
        asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;\n" : "=h"(r) : "f"(b), "f"(a));
    return r;
}
#endif

// One work item = (row block, b, h), as in the bf16 kernel: its key tiles 0 .. ntiles - 1 cover the keys any of
// its rows sees (the causal band clips them); rev: the last row blocks (the longest under a causal band) first.
struct fp8_item {
    int b, h, hk, m0, ntiles, off;
};
__device__ __forceinline__ fp8_item item_of8(const xk_sdpa_fp8 &p, int w, int nmblk, int rev)
{
    fp8_item t;
    const int bh = w / nmblk, mb = w % nmblk;
    t.b = bh / p.Hq;
    t.h = bh % p.Hq;
    t.hk = t.h / (p.Hq / p.Hk);
    t.m0 = (rev ? nmblk - 1 - mb : mb) * BM;
    t.off = p.bottom_right ? p.Skv - p.Sq : 0; // row i's diagonal is key i + off
    const int rhi = min(t.m0 + BM, p.Sq);
    int64_t jhi = p.Skv;
    if (p.causal)
        jhi = min(jhi, (int64_t)rhi + t.off); // the last row rhi - 1 sees keys <= rhi - 1 + off
    t.ntiles = jhi > 0 ? (int)((jhi + BN - 1) / BN) : 0;
    return t;
}

// POLY: 3 of every 8 column chunks take ex2_poly instead of MUFU.EX2 (v4).
template <bool POLY>
__global__ void __launch_bounds__(kThreads, 1)
    sdpa_fp8_fwd(const __grid_constant__ CUtensorMap tq, const __grid_constant__ CUtensorMap tk,
                 const __grid_constant__ CUtensorMap tv, const xk_sdpa_fp8 p, int rev, int nmblk, int nwork,
                 int pingpong)
{
#if XW_DEVICE
    extern __shared__ unsigned char smem_raw[];
    const uint32_t sQ = (smem_u32(smem_raw) + 1023u) & ~1023u; // swizzled tiles need 1024-byte alignment
    const uint32_t sK = sQ + TILE, sV = sK + ST * TILE, sBar = sV + ST * TILE;
    const uint32_t fullQ = sBar, emptyQ = sBar + 8;
#define XF_FULLK(s) (sBar + 8u * (2 + (s)))
#define XF_FULLV(s) (sBar + 8u * (2 + ST + (s)))
#define XF_EMPTYK(s) (sBar + 8u * (2 + 2 * ST + (s)))
#define XF_EMPTYV(s) (sBar + 8u * (2 + 3 * ST + (s)))
    // warp-uniform by a lane-0 broadcast, which ptxas can prove (threadIdx.x / 128 it cannot): the shared
    // addresses derived from it, and the wgmma descriptors on them, then live in uniform registers (no R2UR)
    const int wg = __shfl_sync(0xffffffffu, threadIdx.x / 128, 0);
    if (threadIdx.x == 0) {
        mb_init(fullQ, 1);
        mb_init(emptyQ, 256);
#pragma unroll
        for (int s = 0; s < ST; s++) {
            mb_init(XF_FULLK(s), 1);
            mb_init(XF_FULLV(s), 1);
            mb_init(XF_EMPTYK(s), 256);
            mb_init(XF_EMPTYV(s), 256);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    }
    __syncthreads();

    if (wg == 0) { // ---- producer
        asm volatile("setmaxnreg.dec.sync.aligned.u32 24;\n");
        if (threadIdx.x == 0) {
            int gt = 0;
            for (int w = blockIdx.x, wi = 0; w < nwork; w += gridDim.x, wi++) {
                const fp8_item t = item_of8(p, w, nmblk, rev);
                mb_wait(emptyQ, (wi & 1) ^ 1);
                mb_expect(fullQ, TILE);
                tma_load(sQ, &tq, fullQ, 0, t.m0, t.h, t.b);
                for (int it = 0; it < t.ntiles; it++, gt++) {
                    const int s = gt % ST, ph = (gt / ST) & 1;
                    mb_wait(XF_EMPTYK(s), ph ^ 1);
                    mb_expect(XF_FULLK(s), TILE);
                    tma_load(sK + s * TILE, &tk, XF_FULLK(s), 0, it * BN, t.hk, t.b);
                    mb_wait(XF_EMPTYV(s), ph ^ 1);
                    mb_expect(XF_FULLV(s), TILE);
                    tma_load(sV + s * TILE, &tv, XF_FULLV(s), it * BN, 0, t.hk, t.b); // V^T: keys are columns
                }
            }
        }
    } else { // ---- consumers
        asm volatile("setmaxnreg.inc.sync.aligned.u32 240;\n");
        const int cw = wg - 1, tid = threadIdx.x - 128 * wg, warp = tid >> 5, lane = tid & 31;
        const int g = lane >> 2, t4 = lane & 3;
        float sc[5]; // q, k, v, s, o scales
#pragma unroll
        for (int i = 0; i < 5; i++)
            sc[i] = p.sc_p[i] ? *p.sc_p[i] : p.sc_v[i];
        const float ss = sc[3], so = sc[4];
        const float scale2 = p.scale * sc[0] * sc[1] * kLog2e; // S in exp2 units, dequantized
        // v2: the softmax computes p / s_scale directly, ex2(s * scale2 - m * scale2 - log2(s_scale)) (one FMUL
        // per probability less), so the row sums are l / s_scale: O = acc * s_scale * v_scale / l = acc * v_scale
        // / l', the largest P is 1 / l = 1 / (l' s_scale), and stats adds log2(s_scale) back.
        const float lss = log2f(ss);
        const float o_mul = sc[2];
        const uint32_t qbase = sQ + cw * 64 * 128;
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

        float s[64], o[64];
        uint32_t pf[BN / 32][4];
        uint32_t am_s = 0, am_o = 0; // |x| bit patterns: their unsigned max is the float max, NaN on top
        int gt = 0;
        for (int w = blockIdx.x, wi = 0; w < nwork; w += gridDim.x, wi++) {
            const fp8_item t = item_of8(p, w, nmblk, rev);
            const int wrow0 = t.m0 + cw * 64, row0 = wrow0 + warp * 16 + g;
            int khi[2]; // row row0 + 8r sees keys [0, khi[r]]
#pragma unroll
            for (int r = 0; r < 2; r++) {
                const int i = row0 + 8 * r;
                const int64_t h = p.causal ? min((int64_t)p.Skv - 1, (int64_t)i + t.off) : (int64_t)p.Skv - 1;
                khi[r] = i >= p.Sq || h < 0 ? -1 : (int)h;
            }
            float mrow[2] = {-CUDART_INF_F, -CUDART_INF_F}, lrow[2] = {0.0f, 0.0f};
#pragma unroll
            for (int i = 0; i < 64; i++)
                o[i] = 0.0f;

            auto issue_qk = [&](int st) {
                const uint32_t kb = sK + st * TILE;
#pragma unroll
                for (int kk = 0; kk < DH / 32; kk++)
                    qk_ss(s, desc_add(gdesc(qbase, 16, 1024), kk * 32), desc_add(gdesc(kb, 16, 1024), kk * 32), kk > 0);
            };
            auto issue_pv = [&](int st) {
                const uint32_t vb = sV + st * TILE;
#pragma unroll
                for (int kk = 0; kk < BN / 32; kk++)
                    pv_rs(o, pf[kk], desc_add(gdesc(vb, 16, 1024), kk * 32));
            };
            auto softmax = [&](int it, float *corr) {
                const int n0 = it * BN;
                const bool edge = n0 + BN > p.Skv || wrow0 + 64 > p.Sq ||
                                  (p.causal && (int64_t)n0 + BN - 1 > (int64_t)wrow0 + t.off);
                if (edge) {
#pragma unroll
                    for (int c = 0; c < BN / 8; c++)
#pragma unroll
                        for (int e = 0; e < 4; e++) {
                            const int j = n0 + c * 8 + t4 * 2 + (e & 1);
                            s[c * 4 + e] = j <= khi[e >> 1] ? s[c * 4 + e] : -CUDART_INF_F;
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
                    corr[r] = ex2(mrow[r] * scale2 - muse[r]);
                    muse[r] += lss; // the exponent of p / s_scale (the v2 note above)
                    mrow[r] = mx[r];
                    lrow[r] *= corr[r];
                }
#pragma unroll
                for (int c = 0; c < BN / 8; c++)
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        const float y = fmaf(s[c * 4 + e], scale2, -muse[e >> 1]);
                        const float x = POLY && c % 8 < 3 ? ex2_poly(y) : ex2(y);
                        lrow[e >> 1] += x; // l' sums the unquantized p / s_scale (the softmax denominator / s_scale)
                        s[c * 4 + e] = x;
                    }
            };
            // p of keys 32kk .. 32kk+31 as the A fragment of k-step kk (positions perm16, the file header)
            auto pack_p = [&]() {
#pragma unroll
                for (int kk = 0; kk < BN / 32; kk++) {
                    const float *x = s + kk * 16;
                    pf[kk][0] = e4m3x4(x[0], x[1], x[4], x[5]);
                    pf[kk][1] = e4m3x4(x[2], x[3], x[6], x[7]);
                    pf[kk][2] = e4m3x4(x[8], x[9], x[12], x[13]);
                    pf[kk][3] = e4m3x4(x[10], x[11], x[14], x[15]);
                }
            };

            mb_wait(fullQ, wi & 1);
            if (t.ntiles > 0) {
                float corr[2];
                mb_wait(XF_FULLK(gt % ST), (gt / ST) & 1);
                my_turn();
                wg_fence();
                keep(s);
                issue_qk(gt % ST);
                wg_commit();
                your_turn();
                wg_wait<0>();
                keep(s);
                mb_arrive(XF_EMPTYK(gt % ST));
                softmax(0, corr);
                pack_p();
                for (int it = 1; it < t.ntiles; it++) {
                    const int ct = gt + it, st = ct % ST, ps = (ct - 1) % ST;
                    mb_wait(XF_FULLK(st), (ct / ST) & 1);
                    my_turn();
                    wg_fence();
                    keep(s);
                    keep(o);
                    keep(pf);
                    issue_qk(st);
                    wg_commit();
                    mb_wait(XF_FULLV(ps), ((ct - 1) / ST) & 1);
                    issue_pv(ps);
                    wg_commit();
                    your_turn();
                    wg_wait<1>(); // S of this tile is in
                    keep(s);
                    mb_arrive(XF_EMPTYK(st));
                    softmax(it, corr);
                    wg_wait<0>(); // P V of the previous tile is in
                    keep(o);
                    keep(pf);
                    mb_arrive(XF_EMPTYV(ps));
                    // v3: a row's max rarely grows after the first tiles; then corr is exactly ex2(0) = 1 and
                    // the 64 multiplies are skipped, warp by warp (no wgmma is in flight here: the branch cannot
                    // serialize them)
                    if (__any_sync(0xffffffffu, corr[0] != 1.0f || corr[1] != 1.0f)) {
#pragma unroll
                        for (int i = 0; i < 64; i++)
                            o[i] *= corr[(i >> 1) & 1];
                    }
                    pack_p();
                }
                mb_arrive(emptyQ);
                const int lt = gt + t.ntiles - 1, ls = lt % ST;
                mb_wait(XF_FULLV(ls), (lt / ST) & 1);
                my_turn();
                wg_fence();
                keep(o);
                keep(pf);
                issue_pv(ls);
                wg_commit();
                your_turn();
                wg_wait<0>();
                keep(o);
                keep(pf);
                mb_arrive(XF_EMPTYV(ls));
                gt += t.ntiles;
            } else {
                mb_arrive(emptyQ);
            }

            // normalize, store o (bf16 pairs, or fp8 pairs of O / o_scale), stats; fold the amaxes
#pragma unroll
            for (int r = 0; r < 2; r++) {
                lrow[r] += __shfl_xor_sync(0xffffffffu, lrow[r], 1);
                lrow[r] += __shfl_xor_sync(0xffffffffu, lrow[r], 2);
            }
#pragma unroll
            for (int r = 0; r < 2; r++) {
                const int i = row0 + 8 * r;
                if (i >= p.Sq)
                    continue;
                // a row that saw a key has l >= 1 (its max term is exp(0)); a NaN l (NaN scores) stays NaN
                const bool empty = mrow[r] == -CUDART_INF_F;
                const float inv = empty ? 0.0f : o_mul / lrow[r];
                if (!empty)
                    am_s = max(am_s, __float_as_uint(fabsf(1.0f / (lrow[r] * ss))));
                const int64_t ro = (int64_t)t.b * p.o_st[0] + (int64_t)t.h * p.o_st[1] + (int64_t)i * p.o_st[2];
#pragma unroll
                for (int c = 0; c < DH / 8; c++) {
                    const int d = c * 8 + t4 * 2;
                    const float x0 = o[c * 4 + r * 2] * inv, x1 = o[c * 4 + r * 2 + 1] * inv;
                    am_o = max(am_o, max(__float_as_uint(fabsf(x0)), __float_as_uint(fabsf(x1))));
                    if (p.o_fp8)
                        *reinterpret_cast<uint16_t *>(static_cast<unsigned char *>(p.o) + ro + d) =
                            fp8x2(__fdiv_rn(x0, so), __fdiv_rn(x1, so), p.o_fp8);
                    else
                        *reinterpret_cast<uint32_t *>(static_cast<__nv_bfloat16 *>(p.o) + ro + d) =
                            pack2<__nv_bfloat16>(x0, x1);
                }
                if (t4 == 0 && p.stats)
                    p.stats[(int64_t)t.b * p.stats_st[0] + (int64_t)t.h * p.stats_st[1] + (int64_t)i * p.stats_st[2]] =
                        empty ? -CUDART_INF_F : (mrow[r] * scale2 + log2f(lrow[r]) + lss) * kLn2;
            }
        }
        if (cw == 0)
            my_turn(); // the other consumer's last hand-over
        am_s = __reduce_max_sync(0xffffffffu, am_s);
        am_o = __reduce_max_sync(0xffffffffu, am_o);
        if (lane == 0 && p.amax_s && am_s)
            atomicMax(reinterpret_cast<unsigned *>(p.amax_s), am_s);
        if (lane == 0 && p.amax_o && am_o)
            atomicMax(reinterpret_cast<unsigned *>(p.amax_o), am_o);
    }
#undef XF_FULLK
#undef XF_FULLV
#undef XF_EMPTYK
#undef XF_EMPTYV
#else
    __trap(); // not the sm_90a pass: the engine never launches this
#endif
}

// The map of a byte tensor [B, H, rows, cols] (byte strides st; a size-1 dim's stride is never used), read in
// boxes of 128 columns x box_rows rows, 128-byte swizzled, zeros outside.
bool make_map8(CUtensorMap *m, const void *base, const int64_t *dims, const int64_t *st, int box_rows)
{
    encode_fn enc = tensor_map_encoder();
    if (!enc || (reinterpret_cast<uintptr_t>(base) & 15))
        return false;
    cuuint64_t gdim[4] = {(cuuint64_t)dims[3], (cuuint64_t)dims[2], (cuuint64_t)dims[1], (cuuint64_t)dims[0]};
    cuuint64_t gst[3];
    for (int i = 0; i < 3; i++)
        gst[i] = dims[2 - i] == 1 ? 16 : (cuuint64_t)st[2 - i];
    cuuint32_t box[4] = {128, (cuuint32_t)box_rows, 1, 1}, est[4] = {1, 1, 1, 1};
    return enc(m, CU_TENSOR_MAP_DATA_TYPE_UINT8, 4, const_cast<void *>(base), gdim, gst, box, est,
               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

int skv16_of(int skv) { return (skv + 15) / 16 * 16; }

} // namespace

extern "C" int xk_sdpa_fp8_built(void)
{
#ifdef XK_HAVE_SM90A
    return 1;
#else
    return 0;
#endif
}

extern "C" int xk_sdpa_fp8_smem(void) { return SMEM; }

extern "C" size_t xk_sdpa_fp8_ws(int B, int Hk, int Skv, int D)
{
    return (size_t)B * Hk * D * skv16_of(Skv) + 256;
}

extern "C" int xk_sdpa_fp8_fwd(const xk_sdpa_fp8 *pp, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    const xk_sdpa_fp8 &p = *pp;
    if (p.D != DH || !(p.scale > 0.0f) || p.Hk < 1 || p.Hq % p.Hk != 0)
        return (int)cudaErrorInvalidValue;
    if ((int64_t)p.B * p.Hq * p.Sq == 0)
        return 0;
    const int skv16 = skv16_of(p.Skv);
    if (p.Skv > 0) {
        const dim3 vg((unsigned)((skv16 + VT_KEYS - 1) / VT_KEYS), (unsigned)p.Hk, (unsigned)p.B);
        sdpa_fp8_vt<<<vg, 256, 0, s>>>(p, skv16);
    } else { // no keys: o = 0 from the kernel; the amaxes still start at 0
        if (p.amax_s && cudaMemsetAsync(p.amax_s, 0, sizeof(float), s) != cudaSuccess)
            return (int)cudaGetLastError();
        if (p.amax_o && cudaMemsetAsync(p.amax_o, 0, sizeof(float), s) != cudaSuccess)
            return (int)cudaGetLastError();
    }
    // XDNN_SDPA_FP8_EX2_POLY=1: v4's 3 of 8 exponentials on the FMA pipe (slower today, the file header)
    const char *poly_env = getenv("XDNN_SDPA_FP8_EX2_POLY");
    const bool poly = poly_env && poly_env[0] == '1';
    static bool opted[2] = {false, false};
    if (!opted[poly]) {
        cudaError_t e = cudaFuncSetAttribute(poly ? sdpa_fp8_fwd<true> : sdpa_fp8_fwd<false>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM);
        if (e != cudaSuccess)
            return (int)e;
        opted[poly] = true;
    }
    const int64_t qd[4] = {p.B, p.Hq, p.Sq, DH}, kd[4] = {p.B, p.Hk, p.Skv, DH}, vd[4] = {p.B, p.Hk, DH, skv16};
    const int64_t vst[4] = {(int64_t)p.Hk * DH * skv16, (int64_t)DH * skv16, skv16, 1};
    CUtensorMap tq, tk, tv;
    if (!make_map8(&tq, p.q, qd, p.q_st, BM) || !make_map8(&tk, p.k, kd, p.k_st, BN) ||
        !make_map8(&tv, p.vt, vd, vst, DH))
        return (int)cudaErrorInvalidValue;
    const int nmblk = (p.Sq + BM - 1) / BM;
    const int64_t nwork = (int64_t)nmblk * p.B * p.Hq;
    if (nwork > INT32_MAX)
        return (int)cudaErrorInvalidValue;
    // Without a mask every item is as long: a persistent grid of one block per SM (ping-pong and the
    // persistent walk as in the bf16 kernel); causal items differ in length: one block per item, longest first.
    static int sms = -1;
    if (sms < 0) {
        int dev = 0;
        if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev))
            sms = 0;
    }
    const char *pp_env = getenv("XDNN_SDPA_WGMMA_PINGPONG");
    const int pingpong = !(pp_env && pp_env[0] == '0');
    const int grid = !p.causal && sms > 0 && nwork > sms ? sms : (int)nwork;
    if (poly)
        sdpa_fp8_fwd<true><<<grid, kThreads, SMEM, s>>>(tq, tk, tv, p, p.causal ? 1 : 0, nmblk, (int)nwork, pingpong);
    else
        sdpa_fp8_fwd<false><<<grid, kThreads, SMEM, s>>>(tq, tk, tv, p, p.causal ? 1 : 0, nmblk, (int)nwork, pingpong);
    return (int)cudaGetLastError();
}
