/* conv_stem.cu — conv_stem's kernels (layouts in src/gpu/kern_conv_stem.h):
 * the small-C 2-D conv (the ResNet stem: C = 3, 7x7 stride 2) as an implicit
 * GEMM on mma.sync m16n8k16 whose im2col columns live only in registers.
 *
 * Why: conv_im2col_gemm writes the column matrix (N*P*Q x 168 16-bit values,
 * 1.08 GB at N = 256) and reads it back into cuBLASLt; y alone is 411 MB.
 * Here each CTA step takes an 8 x 16 tile of output pixels, stages the input
 * patch the tile reads ((8-1)*sh + R rows of (16-1)*sw + S pixels) in shared
 * memory once (a 7x7 stride-2 window overlaps its neighbours' ~3.5x), and
 * the fragments come from that patch.  CTAs are persistent (a grid-stride
 * loop over tiles), so the weights are staged once per CTA.
 *
 * kstem_fwd_kernel: y [pixels, K] = cols [pixels, Kc] . Wr [K, Kc]^T.  The
 * reduction is packed per filter row, kc = r * ldr + j (ldr = roundup(S*C,
 * 2), j = s * C + c), so that kc and kc + 1 are adjacent in the patch
 * ([row][pixel][c]): an A register (two columns of one pixel) is one 32-bit
 * shared load.  The patch is stored twice, the second copy shifted by one
 * element, so every pair is 4-byte aligned in one of them (the parity of a
 * pixel's base offset is fixed per thread).  A per-pair table gives the
 * offset and a mask that zeroes the padding columns (j >= S*C, exactly 0
 * even under a NaN or Inf neighbour).  Wr [64][Kc + 8] stays in shared
 * memory for the CTA's life; its B fragments by ldmatrix.  4 warps, each two
 * output rows (2 m16 tiles) x 64 channels (8 n8 tiles).
 *
 * kstem_wgrad_kernel: dWr [K, Kc] = dy^T [K, pixels] . cols [pixels, Kc],
 * the reduction over pixels.  A = dy^T by ldmatrix.trans from the tile's dy
 * staged [pixel][64 + 8]; B = the columns, whose fragments pair two adjacent
 * output pixels of one (r, s, c): the patch is staged de-interleaved by the
 * stride phase, [row][c][iw % sw][iw / sw], so pixels ow and ow + 1 read
 * adjacent elements (and the shifted copy makes the pair aligned).  4 warps x
 * 5 n8 tiles cover 160 columns (kc = (r * S + s) * C + c, the natural order;
 * more in grid.z chunks), 4 m16 tiles the 64 channels of grid.y's block.
 * Each CTA sums a contiguous range of tiles into its f32 partial; then
 * kstem_reduce_kernel sums the partials in a fixed order (deterministic).
 * Pixels past OH / OW are zeros in the staged dy, and their halves of the B
 * fragments are zeroed too: their x columns are real, and a NaN or Inf of x
 * that only they reach would otherwise give 0 * Inf = NaN in dw.
 *
 * Session 11's second pass (forward): y leaves through shared memory in
 * 16-byte stores of whole pixels (the fragments' 4-byte pieces gave 8 pixels
 * x 16 bytes a warp store), and the next tile's patch rows are prefetched
 * into L2 during this tile's MMAs; fwd N = 256 0.40 -> 0.38 ms.  A double-
 * buffered patch by cp.async was not done (see bench/RESULTS-conv.md).
 */
#include "gpu/kern_conv_stem.h"
#include "conv_mma.cuh"

namespace {

constexpr int TH = KSTEM_TH, TW = KSTEM_TW, BK = KSTEM_BK, BKC = KSTEM_BKC, NT = 128, DSP = BK + 8;

__host__ __device__ __forceinline__ int rup(int v, int m) { return (v + m - 1) / m * m; }

/* fwd: patch rows, pitch (even), filter-row pitch of the reduction, Kc (a multiple of 16) */
struct fwd_dims {
    int PH, PWC, ldr, KP;
    __host__ __device__ explicit fwd_dims(const kstem_geom &g)
        : PH((TH - 1) * g.sh + g.R), PWC(rup(((TW - 1) * g.sw + g.S) * g.C + 2, 2)), ldr(rup(g.S * g.C, 2)),
          KP(rup(g.R * rup(g.S * g.C, 2), 16))
    {
    }
    __host__ __device__ int psz() const { return PH * PWC + 2; }
    __host__ __device__ size_t smem() const
    {
        return (size_t)BK * (KP + 8) * 2 + (size_t)KP / 2 * 8 + (size_t)rup(2 * psz(), 8) * 2 + (size_t)TH * TW * DSP * 2;
    }
};

/* wgrad: patch rows, q count (even) per phase, row pitch C * sw * PQ */
struct wg_dims {
    int PH, PQ, RP;
    __host__ __device__ explicit wg_dims(const kstem_geom &g)
        : PH((TH - 1) * g.sh + g.R), PQ(rup(TW + (g.S - 1) / g.sw, 2)), RP(g.C * g.sw * rup(TW + (g.S - 1) / g.sw, 2))
    {
    }
    __host__ __device__ int psz() const { return PH * RP + 2; }
    __host__ __device__ size_t smem() const { return (size_t)TH * TW * DSP * 2 + 2 * (size_t)psz() * 2; }
};

__device__ __forceinline__ uint32_t lds32(uint32_t a)
{
    uint32_t v;
    asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(v) : "r"(a));
    return v;
}

/* The 128-byte lines of [p, p + bytes) into L2 (a hint: nothing waits for it). */
__device__ __forceinline__ void prefetch_l2(const void *p, int64_t bytes, int lane0, int lanes)
{
    const uintptr_t a0 = (uintptr_t)p & ~(uintptr_t)127, a1 = (uintptr_t)p + (uintptr_t)bytes;
    for (uintptr_t a = a0 + (uintptr_t)lane0 * 128; a < a1; a += (uintptr_t)lanes * 128)
        asm volatile("prefetch.global.L2 [%0];\n" ::"l"(a));
}

/* The next tile's patch rows (x columns [c0, c1) of rows ih0 .. ih0 + PH - 1, clamped to x) into L2, issued before
 * this tile's MMAs so that its staging reads L2 rather than DRAM: the loads of a tile are waited for (the patch
 * goes through registers) and a CTA's tiles are otherwise serial. */
__device__ __forceinline__ void prefetch_patch(const kstem_geom &g, const uint16_t *x, int n, int ih0, int PH, int c0,
                                               int c1)
{
    c0 = c0 < 0 ? 0 : c0;
    c1 = c1 > g.W * g.C ? g.W * g.C : c1;
    if (c1 <= c0)
        return;
    for (int pr = threadIdx.x >> 2; pr < PH; pr += NT / 4) { /* 4 threads a row */
        const int ih = ih0 + pr;
        if (ih >= 0 && ih < g.H)
            prefetch_l2(x + (int64_t)n * g.sxn + (int64_t)ih * g.sxh + c0, (int64_t)(c1 - c0) * 2, threadIdx.x & 3, 4);
    }
}

template <typename T> __device__ __forceinline__ uint32_t pack2(float a, float b);
template <> __device__ __forceinline__ uint32_t pack2<__half>(float a, float b)
{
    __half2 h = __floats2half2_rn(a, b);
    return *reinterpret_cast<uint32_t *>(&h);
}
template <> __device__ __forceinline__ uint32_t pack2<__nv_bfloat16>(float a, float b)
{
    __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
    return *reinterpret_cast<uint32_t *>(&h);
}

/* tile -> (n, oh0, ow0) */
__device__ __forceinline__ void tile_origin(const kstem_geom &g, int64_t tile, int &n, int &oh0, int &ow0)
{
    const int tw = (g.OW + TW - 1) / TW, th = (g.OH + TH - 1) / TH;
    const int64_t rest = tile / tw;
    ow0 = (int)(tile - rest * tw) * TW;
    oh0 = (int)(rest % th) * TH;
    n = (int)(rest / th);
}

/* Both copies of patch element i = v (copy 1 holds element i + 1 at i). */
__device__ __forceinline__ void put2(uint16_t *p0, uint16_t *p1, int i, uint16_t v)
{
    p0[i] = v;
    if (i > 0)
        p1[i - 1] = v;
}

/* Stage a tile's patch: PH rows of `pitch` elements; element e of row pr is x's input row ih0 + pr of image n
 * at offset colof(e) (-1: a zero; rows outside x are zeros); both copies, their tails zeroed.  The loads go out
 * in batches of RB rows x MB columns per thread before any is stored (one memory latency per batch, not per
 * element: a first version that stored each element as it came ran the stem at ~13 us per tile). */
template <typename F>
__device__ __forceinline__ void stage_patch(const kstem_geom &g, const uint16_t *__restrict__ x, int n, int ih0, int PH,
                                            int pitch, uint16_t *p0, uint16_t *p1, F colof)
{
    constexpr int RB = 6, MB = 4;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const uint16_t *xn = x + (int64_t)n * g.sxn;
    for (int e0 = lane; e0 < pitch; e0 += 32 * MB) {
        int off[MB];
#pragma unroll
        for (int b = 0; b < MB; b++)
            off[b] = e0 + 32 * b < pitch ? colof(e0 + 32 * b) : -1;
        for (int pr0 = warp; pr0 < PH; pr0 += (NT / 32) * RB) {
            uint16_t v[RB][MB];
#pragma unroll
            for (int a = 0; a < RB; a++) {
                const int ih = ih0 + pr0 + (NT / 32) * a;
                const bool rin = pr0 + (NT / 32) * a < PH && ih >= 0 && ih < g.H;
                const uint16_t *xr = xn + (rin ? (int64_t)ih * g.sxh : 0);
#pragma unroll
                for (int b = 0; b < MB; b++)
                    v[a][b] = rin && off[b] >= 0 ? xr[off[b]] : (uint16_t)0;
            }
#pragma unroll
            for (int a = 0; a < RB; a++)
#pragma unroll
                for (int b = 0; b < MB; b++) {
                    const int pr = pr0 + (NT / 32) * a, e = e0 + 32 * b;
                    if (pr < PH && e < pitch)
                        put2(p0, p1, pr * pitch + e, v[a][b]);
                }
        }
    }
    if (threadIdx.x < 3)
        p1[PH * pitch - 1 + threadIdx.x] = 0;
    if (threadIdx.x < 2)
        p0[PH * pitch + threadIdx.x] = 0;
}

template <int M, int N> __device__ __forceinline__ void zero_acc(float (&acc)[M][N][4])
{
#pragma unroll
    for (int mi = 0; mi < M; mi++)
#pragma unroll
        for (int ni = 0; ni < N; ni++)
#pragma unroll
            for (int q = 0; q < 4; q++)
                acc[mi][ni][q] = 0.0f;
}

/* The address of the pair starting at patch offset `off` (its parity fixed per thread). */
__device__ __forceinline__ uint32_t pair_addr(const uint16_t *p0, const uint16_t *p1, int off)
{
    return kmma::smem_addr((off & 1) ? p1 + off - 1 : p0 + off);
}

/* MINB: CTAs an SM (3: 168 registers; 4: 128, a few bytes spilled outside the k loop, one more CTA to hide the
 * patch's wait) */
template <typename T, int MINB>
__global__ void __launch_bounds__(NT, MINB) kstem_fwd_kernel(const kstem_geom g, const uint16_t *__restrict__ x,
                                                       const uint16_t *__restrict__ w, uint16_t *__restrict__ y,
                                                       int64_t tiles, int vec)
{
    extern __shared__ __align__(16) unsigned char smem[];
    const fwd_dims d(g);
    const int KPS = d.KP + 8, SC = g.S * g.C, psz = d.psz();
    uint16_t *ws = reinterpret_cast<uint16_t *>(smem);
    int2 *tab = reinterpret_cast<int2 *>(smem + (size_t)BK * KPS * 2);
    uint16_t *p0 = reinterpret_cast<uint16_t *>(tab + d.KP / 2), *p1 = p0 + psz;
    uint16_t *ys = p0 + rup(2 * psz, 8); /* 16-byte aligned y tile [pixel][64 + 8], each warp's 32 pixels its own (no CTA barrier) */
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g8 = lane >> 2, t4 = lane & 3;
    const int kb = blockIdx.y * BK;
    for (int i0 = tid; i0 < BK * d.KP; i0 += NT * 8) { /* Wr block, zeros past K and in padding columns */
        uint16_t v[8];
        int at[8];
#pragma unroll
        for (int u = 0; u < 8; u++) { /* 8 loads in flight per thread */
            const int i = i0 + u * NT, n = i / d.KP, kc = i - n * d.KP, r = kc / d.ldr, j = kc - r * d.ldr;
            const int s = j / g.C, c = j - s * g.C;
            const bool in = i < BK * d.KP && kb + n < g.K && r < g.R && j < SC;
            v[u] = in ? w[(kb + n) * g.swk + c * g.swc + r * g.swr + s * g.sws] : (uint16_t)0;
            at[u] = i < BK * d.KP ? n * KPS + kc : -1;
        }
#pragma unroll
        for (int u = 0; u < 8; u++)
            if (at[u] >= 0)
                ws[at[u]] = v[u];
    }
    for (int p = tid; p < d.KP / 2; p += NT) { /* pair p = columns 2p, 2p + 1: patch offset, mask */
        const int kc = 2 * p, r = kc / d.ldr, j = kc - r * d.ldr;
        int2 e = make_int2(0, 0);
        if (r < g.R)
            e = make_int2(r * d.PWC + j, (j < SC ? 0xffff : 0) | (j + 1 < SC ? (int)0xffff0000u : 0));
        tab[p] = e;
    }
    /* ldmatrix lane address: matrix i = lane / 8 is n8 tile (i >> 1) of the pair, k half i & 1 */
    const uint16_t *wl = ws + (((lane >> 4) * 8 + (lane & 7)) * KPS + ((lane >> 3) & 1) * 8);
    const int WC = g.W * g.C, PWpC = ((TW - 1) * g.sw + g.S) * g.C;
    for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        int n, oh0, ow0;
        tile_origin(g, tile, n, oh0, ow0);
        __syncthreads(); /* the previous tile's reads (and the tables' writes) are done */
        const int pos0 = (ow0 * g.sw - g.pw) * g.C;
        stage_patch(g, x, n, oh0 * g.sh - g.ph, d.PH, d.PWC, p0, p1, [&](int e) {
            const int pos = pos0 + e;
            return e < PWpC && pos >= 0 && pos < WC ? pos : -1;
        });
        __syncthreads();
        if (tile + gridDim.x < tiles) {
            int nn, noh0, now0;
            tile_origin(g, tile + gridDim.x, nn, noh0, now0);
            const int npos0 = (now0 * g.sw - g.pw) * g.C;
            prefetch_patch(g, x, nn, noh0 * g.sh - g.ph, d.PH, npos0, npos0 + PWpC);
        }
        uint32_t pa[2][2]; /* per m16 tile, rows g8 and g8 + 8: the pixel's base in its aligned copy */
#pragma unroll
        for (int mi = 0; mi < 2; mi++)
#pragma unroll
            for (int h = 0; h < 2; h++)
                pa[mi][h] = pair_addr(p0, p1, (warp * 2 + mi) * g.sh * d.PWC + (g8 + 8 * h) * g.sw * g.C);
        float acc[2][8][4];
        zero_acc(acc);
        for (int ks = 0; ks < d.KP / 16; ks++) {
            const int2 e0 = tab[ks * 8 + t4], e1 = tab[ks * 8 + 4 + t4];
            unsigned af[2][4], bf[8][2], r4[4];
#pragma unroll
            for (int mi = 0; mi < 2; mi++) {
                af[mi][0] = lds32(pa[mi][0] + 2 * e0.x) & (uint32_t)e0.y;
                af[mi][1] = lds32(pa[mi][1] + 2 * e0.x) & (uint32_t)e0.y;
                af[mi][2] = lds32(pa[mi][0] + 2 * e1.x) & (uint32_t)e1.y;
                af[mi][3] = lds32(pa[mi][1] + 2 * e1.x) & (uint32_t)e1.y;
            }
#pragma unroll
            for (int j = 0; j < 4; j++) {
                kmma::ldmatrix_x4(r4, wl + j * 16 * KPS + ks * 16);
                kmma::b_pair(bf, j, r4);
            }
#pragma unroll
            for (int mi = 0; mi < 2; mi++)
#pragma unroll
                for (int ni = 0; ni < 8; ni++)
                    kmma::mma16816<T>(acc[mi][ni], af[mi], bf[ni]);
        }
        /* y through shared memory: the fragments' 4-byte pieces (8 pixels x 16 bytes a store) staged, then whole
         * 128-byte pixel rows leave in 16-byte stores */
        uint16_t *yw = ys + warp * 32 * DSP;
#pragma unroll
        for (int mi = 0; mi < 2; mi++)
#pragma unroll
            for (int h = 0; h < 2; h++)
#pragma unroll
                for (int ni = 0; ni < 8; ni++)
                    *reinterpret_cast<uint32_t *>(yw + (mi * 16 + g8 + 8 * h) * DSP + ni * 8 + 2 * t4) =
                        pack2<T>(acc[mi][ni][2 * h], acc[mi][ni][2 * h + 1]);
        __syncwarp();
        if (vec) { /* K % 8 == 0, 16-byte aligned pixels */
#pragma unroll
            for (int u = 0; u < 8; u++) {
                const int i = lane + 32 * u, px = i >> 3, ch = (i & 7) * 8;
                const int oh = oh0 + warp * 2 + (px >> 4), ow = ow0 + (px & 15);
                if (oh < g.OH && ow < g.OW && kb + ch < g.K)
                    *reinterpret_cast<uint4 *>(y + (int64_t)n * g.syn + (int64_t)oh * g.syh + (int64_t)ow * g.syw + kb +
                                               ch) = *reinterpret_cast<const uint4 *>(yw + px * DSP + ch);
            }
        } else {
            for (int i = lane; i < 32 * BK; i += 32) {
                const int px = i / BK, ch = i % BK, oh = oh0 + warp * 2 + (px >> 4), ow = ow0 + (px & 15);
                if (oh < g.OH && ow < g.OW && kb + ch < g.K)
                    y[(int64_t)n * g.syn + (int64_t)oh * g.syh + (int64_t)ow * g.syw + kb + ch] = yw[px * DSP + ch];
            }
        }
    }
}
template <typename T>
__global__ void __launch_bounds__(NT, 3) kstem_wgrad_kernel(const kstem_geom g, const uint16_t *__restrict__ dy,
                                                         const uint16_t *__restrict__ x, float *__restrict__ part,
                                                         int64_t tiles, int vec)
{
    extern __shared__ __align__(16) unsigned char smem[];
    const wg_dims d(g);
    const int SC = g.S * g.C, RSC = g.R * SC, psz = d.psz();
    uint16_t *ds = reinterpret_cast<uint16_t *>(smem);
    uint16_t *p0 = ds + TH * TW * DSP, *p1 = p0 + psz;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g8 = lane >> 2, t4 = lane & 3;
    const int kb = blockIdx.y * BK, kc0 = blockIdx.z * BKC + warp * 40;
    uint32_t pb[5]; /* per n8 tile: column kc0 + 8 * ni + g8's (r, s, c) at pixel 0 of row 0, aligned copy */
#pragma unroll
    for (int ni = 0; ni < 5; ni++) {
        const int kc = kc0 + ni * 8 + g8;
        int off = 0;
        if (kc < RSC) {
            const int r = kc / SC, rem = kc - r * SC, s = rem / g.C, c = rem - s * g.C;
            off = r * d.RP + (c * g.sw + s % g.sw) * d.PQ + s / g.sw;
        }
        pb[ni] = pair_addr(p0, p1, off) + 4 * t4; /* pixel pair (2 t4, 2 t4 + 1) */
    }
    /* ldmatrix.trans lane address: matrix i = lane / 8 is pixels (i >> 1) * 8.., channels (i & 1) * 8.. */
    const uint16_t *al = ds + (((lane >> 4) * 8 + (lane & 7)) * DSP + ((lane >> 3) & 1) * 8);
    float acc[4][5][4];
    zero_acc(acc);
    const int64_t t_lo = tiles * blockIdx.x / gridDim.x, t_hi = tiles * (blockIdx.x + 1) / gridDim.x;
    for (int64_t tile = t_lo; tile < t_hi; tile++) {
        int n, oh0, ow0;
        tile_origin(g, tile, n, oh0, ow0);
        __syncthreads();
        if (vec) { /* 16-byte pieces by cp.async (K % 8 == 0, 16-byte aligned pixels), in flight during the patch */
#pragma unroll
            for (int u = 0; u < TH * TW * BK / 8 / NT; u++) {
                const int i = tid + u * NT, px = i >> 3, k = kb + (i & 7) * 8, oh = oh0 + px / TW, ow = ow0 + px % TW;
                const bool in = oh < g.OH && ow < g.OW && k < g.K;
                kmma::cp_async16(ds + px * DSP + (i & 7) * 8,
                                 in ? dy + (int64_t)n * g.syn + (int64_t)oh * g.syh + (int64_t)ow * g.syw + k : dy, in);
            }
            kmma::cp_async_commit();
        } else {
            for (int i = tid; i < TH * TW * BK; i += NT) {
                const int px = i / BK, k = kb + i % BK, oh = oh0 + px / TW, ow = ow0 + px % TW;
                ds[px * DSP + i % BK] = oh < g.OH && ow < g.OW && k < g.K
                                            ? dy[(int64_t)n * g.syn + (int64_t)oh * g.syh + (int64_t)ow * g.syw + k]
                                            : (uint16_t)0;
            }
        }
        const int iw0 = ow0 * g.sw - g.pw, cp = g.sw * d.PQ;
        stage_patch(g, x, n, oh0 * g.sh - g.ph, d.PH, d.RP, p0, p1, [&](int e) {
            /* e = (c * sw + phase) * PQ + q */
            const int c = e / cp, rest = e - c * cp, phs = rest / d.PQ, q = rest - phs * d.PQ;
            const int iw = iw0 + q * g.sw + phs;
            return iw >= 0 && iw < g.W ? iw * g.C + c : -1;
        });
        kmma::cp_async_wait<0>();
        __syncthreads();
        /* Pixels past OH / OW: their dy is staged as zeros, but their x columns are real, so an Inf or NaN of x that
         * only they reach would give 0 * Inf = NaN in dw: their halves of the B fragments are zeroed (exact, one AND
         * a register) and the rows past OH are skipped. */
        const int ncol = g.OW - ow0, nrow = g.OH - oh0 < TH ? g.OH - oh0 : TH;
        const uint32_t m0 = (2 * t4 < ncol ? 0xffffu : 0u) | (2 * t4 + 1 < ncol ? 0xffff0000u : 0u),
                       m1 = (2 * t4 + 8 < ncol ? 0xffffu : 0u) | (2 * t4 + 9 < ncol ? 0xffff0000u : 0u);
#pragma unroll 2
        for (int r = 0; r < nrow; r++) { /* k16 step: output row r's 16 pixels */
            const uint32_t ro = 2u * (uint32_t)(r * g.sh * d.RP);
            unsigned bf[5][2], af[4];
#pragma unroll
            for (int ni = 0; ni < 5; ni++) {
                bf[ni][0] = lds32(pb[ni] + ro) & m0;
                bf[ni][1] = lds32(pb[ni] + ro + 16) & m1;
            }
#pragma unroll
            for (int mi = 0; mi < 4; mi++) {
                kmma::ldmatrix_x4_trans(af, al + r * TW * DSP + mi * 16);
#pragma unroll
                for (int ni = 0; ni < 5; ni++)
                    kmma::mma16816<T>(acc[mi][ni], af, bf[ni]);
            }
        }
    }
    float *pp = part + (size_t)blockIdx.x * g.K * RSC;
#pragma unroll
    for (int mi = 0; mi < 4; mi++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int k = kb + mi * 16 + g8 + 8 * h;
            if (k >= g.K)
                continue;
#pragma unroll
            for (int ni = 0; ni < 5; ni++) {
                const int kc = kc0 + ni * 8 + 2 * t4;
                if (kc < RSC)
                    pp[(size_t)k * RSC + kc] = acc[mi][ni][2 * h];
                if (kc + 1 < RSC)
                    pp[(size_t)k * RSC + kc + 1] = acc[mi][ni][2 * h + 1];
            }
        }
}

/* dw[k, c, r, s] = the partials' sum, in a fixed order (deterministic): 32 outputs a block, each summed by 8
 * threads over the splits b = j, j + 8, ... in order, then those 8 sums in order.  One thread an output, serial
 * over ~400 splits, left ~37 blocks on the whole GPU, each waiting out one load after another: the N = 32 stem's
 * weight gradient went 0.092 -> 0.080 ms with this (session 11, second pass). */
enum { RED_OUT = 32, RED_PAR = 8 };
__global__ void __launch_bounds__(RED_OUT * RED_PAR) kstem_reduce_kernel(const kstem_geom g,
                                                                         const float *__restrict__ part, int splits,
                                                                         void *dw, int dt)
{
    __shared__ float sum[RED_PAR][RED_OUT];
    const int SC = g.S * g.C, RSC = g.R * SC, o = threadIdx.x % RED_OUT, j = threadIdx.x / RED_OUT;
    const int64_t total = (int64_t)g.K * RSC;
    for (int64_t i0 = (int64_t)blockIdx.x * RED_OUT; i0 < total; i0 += (int64_t)gridDim.x * RED_OUT) {
        const int64_t i = i0 + o;
        float v = 0.0f;
        if (i < total) {
            int b = j;
            for (; b + 3 * RED_PAR < splits; b += 4 * RED_PAR) { /* 4 loads in flight, summed in order */
                const float a0 = part[(size_t)b * total + i], a1 = part[(size_t)(b + RED_PAR) * total + i],
                            a2 = part[(size_t)(b + 2 * RED_PAR) * total + i],
                            a3 = part[(size_t)(b + 3 * RED_PAR) * total + i];
                v = (((v + a0) + a1) + a2) + a3;
            }
            for (; b < splits; b += RED_PAR)
                v += part[(size_t)b * total + i];
        }
        __syncthreads(); /* the previous step's sums are read */
        sum[j][o] = v;
        __syncthreads();
        if (j == 0 && i < total) {
            for (int q = 1; q < RED_PAR; q++)
                v += sum[q][o];
            const int k = (int)(i / RSC), kc = (int)(i - (int64_t)k * RSC), r = kc / SC, rem = kc - r * SC,
                      s = rem / g.C, c = rem - s * g.C;
            kst(dw, dt, k * g.swk + c * g.swc + r * g.swr + s * g.sws, v);
        }
    }
}

/* Launch kern (its dynamic shared memory raised past the 48 KiB default when it needs more). */
template <typename Kern, typename... A> int launch(Kern kern, dim3 grid, size_t smem, cudaStream_t s, A... args)
{
    if (smem > 48 * 1024) {
        const int e = (int)cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        if (e != 0)
            return e;
    }
    kern<<<grid, NT, smem, s>>>(args...);
    return (int)cudaGetLastError();
}

} /* namespace */

extern "C" size_t kstem_fwd_smem(const kstem_geom *g) { return fwd_dims(*g).smem(); }
extern "C" size_t kstem_wgrad_smem(const kstem_geom *g) { return wg_dims(*g).smem(); }

extern "C" int64_t kstem_tiles(const kstem_geom *g)
{
    return (int64_t)g->N * ((g->OH + TH - 1) / TH) * ((g->OW + TW - 1) / TW);
}

extern "C" int kstem_kchunks(const kstem_geom *g) { return (g->R * g->S * g->C + BKC - 1) / BKC; }

extern "C" int kstem_fwd_launch(const kstem_geom *g, const void *x, const void *w, void *y, int ctas, int ctas_per_sm,
                                void *stream)
{
    const int64_t tiles = kstem_tiles(g);
    const int kbl = (g->K + BK - 1) / BK;
    int64_t gx = ctas / kbl < 1 ? 1 : ctas / kbl;
    if (gx > tiles)
        gx = tiles;
    const int vec = g->K % 8 == 0 && (g->syn | g->syh | g->syw) % 8 == 0 && (uintptr_t)y % 16 == 0;
    const size_t sm = kstem_fwd_smem(g);
    const dim3 grid((unsigned)gx, (unsigned)kbl);
    const uint16_t *xs = static_cast<const uint16_t *>(x), *ws = static_cast<const uint16_t *>(w);
    uint16_t *ys = static_cast<uint16_t *>(y);
    cudaStream_t s = (cudaStream_t)stream;
    if (ctas_per_sm >= 4)
        return g->bf16 ? launch(kstem_fwd_kernel<__nv_bfloat16, 4>, grid, sm, s, *g, xs, ws, ys, tiles, vec)
                       : launch(kstem_fwd_kernel<__half, 4>, grid, sm, s, *g, xs, ws, ys, tiles, vec);
    return g->bf16 ? launch(kstem_fwd_kernel<__nv_bfloat16, 3>, grid, sm, s, *g, xs, ws, ys, tiles, vec)
                   : launch(kstem_fwd_kernel<__half, 3>, grid, sm, s, *g, xs, ws, ys, tiles, vec);
}

extern "C" int kstem_wgrad_launch(const kstem_geom *g, const void *dy, const void *x, float *partials, int splits,
                                  void *dw, int dt_w, void *stream)
{
    const int64_t tiles = kstem_tiles(g);
    const int vec = g->K % 8 == 0 && (g->syn | g->syh | g->syw) % 8 == 0 && (uintptr_t)dy % 16 == 0;
    const size_t sm = kstem_wgrad_smem(g);
    const dim3 grid((unsigned)splits, (unsigned)((g->K + BK - 1) / BK), (unsigned)kstem_kchunks(g));
    const uint16_t *dys = static_cast<const uint16_t *>(dy), *xs = static_cast<const uint16_t *>(x);
    cudaStream_t s = (cudaStream_t)stream;
    const int e = g->bf16 ? launch(kstem_wgrad_kernel<__nv_bfloat16>, grid, sm, s, *g, dys, xs, partials, tiles, vec)
                          : launch(kstem_wgrad_kernel<__half>, grid, sm, s, *g, dys, xs, partials, tiles, vec);
    if (e != 0)
        return e;
    const int64_t total = (int64_t)g->K * g->R * g->S * g->C;
    kstem_reduce_kernel<<<kgrid(total, RED_OUT), RED_OUT * RED_PAR, 0, s>>>(*g, partials, splits, dw, dt_w);
    return (int)cudaGetLastError();
}
