/* conv_dw_tile.cu — conv_dw v2 (session 12; the default since session 13,
 * XDNN_CONV_DW_V2=0: v1): depthwise 2-D convolution (groups == C == K),
 * f16 / bf16 channels-last, square K x K window (3 or 5), stride 1 or 2 on
 * both dims, dilation 1; the forward (with conv_epi.cuh's fused epilogue),
 * the stride-1 dgrad (the forward of dy with flipped taps) and the stride-2
 * dgrad by stride phases (TR below).
 *
 * Why: conv_dw.cu's v1 strip (QT outputs along W of ONE output row) reads
 * every input row K times (once per output row that uses it, through L1),
 * one row at a time; at 46-52 % of copy on the large MobileNet rows.  Here
 * a thread owns a 2-D tile of TH output rows x QT columns x 8 channels (one
 * 16-byte vector): the (TH-1)*ST + K input rows of its tile are each loaded
 * ONCE (SPAN 16-byte vectors a row, the next row's loads issued before the
 * current row's FMAs) and feed every output row of the tile that uses them.
 * Vectors read per output: ROWS*SPAN / (TH*QT) = 3 (3x3 s1, TH 4, QT 2)
 * against v1's 3 * 6/4 = 4.5.
 *   block    (cvb, 128/cvb) threads: x walks channel vectors (cvb <= 16,
 *            equal slices), y walks tiles; small images (O_h < 28: the 7x7
 *            and 14x14 layers) take TH = 2 for twice the blocks;
 *   weights  the block's cvb*8 channels x K*K taps as f32 in shared memory
 *            ([tap][channel], flipped for the stride-1 dgrad), loaded once per
 *            block (8 loads a thread in flight, channel-major: no gain
 *            measured in session 13, 0-13 % slower; the prologue is not the
 *            limit).
 * The stride-2 dgrad (TR): dx pixel t = ih + pad takes dy row o through tap
 * r = t - 2o, so a dx row's parity (its phase) picks every other tap.  The
 * tile is TH = 2 dx rows x QT = 2 columns starting at an even t (one row of
 * each phase): it reads TH/2 + (K-1)/2 dy rows x QT/2 + (K-1)/2 columns (2x2
 * for 3x3: one dy vector an output, where v1's gather loads one a tap) and
 * output row j takes dy row ir through tap r = j - 2 ir + K-1 (compile time).
 * f32 accumulation; rows / columns past the output are computed on zeros
 * (masked loads) and not stored. */
#include "conv_epi.cuh"
#include "gpu/kern_conv_dw_tile.h"

#include <string.h>

namespace {

/* The problem as the kernel reads it: src (x, or dy) -> dst (y, or dx),
 * 2-D (the depth slot has size 1). */
struct dwt {
    int N, C, cv;             /* channel vectors: C / 8 */
    int Dh, Dw, Oh, Ow;       /* src and dst spatial sizes */
    int pad_h, pad_w;         /* leading pads (the stride-1 dgrad's: K-1 - pad; TR: the forward's) */
    int nth, ntw;             /* tiles along H and W */
    int64_t ss[5], sd[5], sw[5];
    int dt_w, flip;
};

template <typename T> __device__ __forceinline__ float tofl(T v);
template <> __device__ __forceinline__ float tofl<__half>(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float tofl<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ __forceinline__ T fromfl(float v);
template <> __device__ __forceinline__ __half fromfl<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 fromfl<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

/* TR: the stride-2 dgrad by stride phases (ST_ is then 2; see the top).  Registers: 3x3 up to 255 (124-168
 * used: 3-4 blocks an SM), 5x5 at most 168 for 3 blocks (12 warps; 185-244 unbounded held 2): 8 % faster at 5x5
 * 240@28 s1, 25 % at 672@14 s2 (88 B spilled at TH 4); the same bound on the 3x3 kernels (128: 4 blocks) gained
 * 5 % at 32@112 but lost 8-16 % at 144@56 / 192@28 (session 13's A/B, XDNN_CONV_DW_OCC). */
template <typename T, int K_, int ST_, int TH, bool TR>
__global__ void __launch_bounds__(128, K_ == 5 ? 3 : 1) kdwt_kernel(const dwt g, const T *__restrict__ src, const void *__restrict__ w,
                                                   T *__restrict__ dst, const kconv_epi epi)
{
    constexpr int V = 8, QT = 2;
    static_assert(!TR || (ST_ == 2 && TH % 2 == 0), "TR: stride 2, whole phase pairs");
    constexpr int ROWS = TR ? TH / 2 + (K_ - 1) / 2 : (TH - 1) * ST_ + K_;
    constexpr int SPAN = TR ? QT / 2 + (K_ - 1) / 2 : (QT - 1) * ST_ + K_;
    extern __shared__ float wsm[]; /* [tap][cvb * V] */
    const int cvb = blockDim.x, row = cvb * V;
    const int cbase = blockIdx.y * row;
    for (int i = threadIdx.y * cvb + threadIdx.x; i < K_ * K_ * row; i += cvb * blockDim.y) {
        const int tap = i / row, c = cbase + i % row;
        int r = tap / K_, s = tap % K_;
        if (g.flip)
            r = K_ - 1 - r, s = K_ - 1 - s;
        wsm[i] = c < g.C ? kld(w, g.dt_w, c * g.sw[0] + r * g.sw[3] + s * g.sw[4]) : 0.f;
    }
    __syncthreads();
    const int cv = blockIdx.y * cvb + threadIdx.x;
    const int64_t tile = (int64_t)blockIdx.x * blockDim.y + threadIdx.y;
    if (cv >= g.cv || tile >= (int64_t)g.N * g.nth * g.ntw)
        return;
    const int c0 = cv * V;
    const int tw = (int)(tile % g.ntw);
    const int64_t rest = tile / g.ntw;
    const int th = (int)(rest % g.nth), n = (int)(rest / g.nth);
    /* TR: the tile starts at an even t = p + pad (p0 may be -1: that row is not stored) and its first dy row
     * reaches it through tap K-1 */
    const int p0 = th * TH - (TR ? g.pad_h & 1 : 0), q0 = tw * QT - (TR ? g.pad_w & 1 : 0);
    const int ih0 = TR ? (p0 + g.pad_h) / 2 - (K_ - 1) / 2 : p0 * ST_ - g.pad_h;
    const int iw0 = TR ? (q0 + g.pad_w) / 2 - (K_ - 1) / 2 : q0 * ST_ - g.pad_w;
    const T *sn = src + n * g.ss[0] + c0;
    const float *wl = wsm + threadIdx.x * V;

    /* which columns of the window are inside the image: the same for every row */
    bool colok[SPAN];
#pragma unroll
    for (int c = 0; c < SPAN; c++)
        colok[c] = (unsigned)(iw0 + c) < (unsigned)g.Dw;

    float acc[TH][QT][V];
#pragma unroll
    for (int j = 0; j < TH; j++)
#pragma unroll
        for (int q = 0; q < QT; q++)
#pragma unroll
            for (int i = 0; i < V; i++)
                acc[j][q][i] = 0.f;

    /* one input row's SPAN vectors, raw; zero outside the image (the pad) */
    auto load_row = [&](int ir, uint4 (&buf)[SPAN]) {
        const int ih = ih0 + ir;
        const bool rok = (unsigned)ih < (unsigned)g.Dh;
        const T *rp = sn + (int64_t)ih * g.ss[3] + (int64_t)iw0 * g.ss[4];
#pragma unroll
        for (int c = 0; c < SPAN; c++)
            buf[c] = rok && colok[c] ? __ldg(reinterpret_cast<const uint4 *>(rp + (int64_t)c * g.ss[4]))
                                     : make_uint4(0, 0, 0, 0);
    };

    uint4 cur[SPAN], nxt[SPAN];
    load_row(0, cur);
#pragma unroll
    for (int ir = 0; ir < ROWS; ir++) {
        if (ir + 1 < ROWS)
            load_row(ir + 1, nxt); /* in flight while this row's FMAs run */
        float x[SPAN][V];
#pragma unroll
        for (int c = 0; c < SPAN; c++) {
            const T *h = reinterpret_cast<const T *>(&cur[c]);
#pragma unroll
            for (int i = 0; i < V; i++)
                x[c][i] = tofl<T>(h[i]);
        }
        /* output row j reads input row ir through tap r = ir - j*ST (TR: j - 2 ir + K-1), output column q reads
         * input column c through tap s = c - q*ST (TR: q - 2c + K-1); all compile-time after unrolling */
#pragma unroll
        for (int j = 0; j < TH; j++) {
            const int r = TR ? j - 2 * ir + K_ - 1 : ir - j * ST_;
            if (r < 0 || r >= K_)
                continue;
#pragma unroll
            for (int s = 0; s < K_; s++) {
                const float *wp = wl + (r * K_ + s) * row;
                const float4 wa = *reinterpret_cast<const float4 *>(wp);
                const float4 wb = *reinterpret_cast<const float4 *>(wp + 4);
                const float wv[V] = {wa.x, wa.y, wa.z, wa.w, wb.x, wb.y, wb.z, wb.w};
#pragma unroll
                for (int q = 0; q < QT; q++) {
                    const int c2 = q + K_ - 1 - s; /* TR: 2c */
                    const int c = TR ? c2 / 2 : q * ST_ + s;
                    if (TR && (c2 % 2 != 0 || c < 0 || c >= SPAN))
                        continue;
#pragma unroll
                    for (int i = 0; i < V; i++)
                        acc[j][q][i] = fmaf(x[c][i], wv[i], acc[j][q][i]);
                }
            }
        }
        if (ir + 1 < ROWS) {
#pragma unroll
            for (int c = 0; c < SPAN; c++)
                cur[c] = nxt[c];
        }
    }

#pragma unroll
    for (int j = 0; j < TH; j++) {
        const int p = p0 + j;
        if (p < 0)
            continue;
        if (p >= g.Oh)
            break;
        if (epi.n) {
            int rc[QT][4], kc[V];
            bool rv[QT], cvv[V];
#pragma unroll
            for (int q = 0; q < QT; q++) {
                rc[q][0] = n, rc[q][1] = 0, rc[q][2] = p, rc[q][3] = q0 + q;
                rv[q] = q0 + q < g.Ow;
            }
#pragma unroll
            for (int i = 0; i < V; i++)
                kc[i] = c0 + i, cvv[i] = true;
            kepi_tile<QT, V>(epi, acc[j], rc, kc, rv, cvv);
        }
#pragma unroll
        for (int q = 0; q < QT; q++) {
            if (q0 + q < 0)
                continue;
            if (q0 + q >= g.Ow)
                break;
            uint4 u;
            T *h = reinterpret_cast<T *>(&u);
#pragma unroll
            for (int i = 0; i < V; i++)
                h[i] = fromfl<T>(acc[j][q][i]);
            *reinterpret_cast<uint4 *>(dst + n * g.sd[0] + (int64_t)p * g.sd[3] + (int64_t)(q0 + q) * g.sd[4] + c0) = u;
        }
    }
}

template <typename T, int K_, int ST_, int TH, bool TR = false>
int launch(const dwt &g0, const void *src, const void *w, void *dst, const kconv_epi &epi, cudaStream_t s)
{
    dwt g = g0;
    /* TR: the tiles start at an even p + pad, one row / column before the image when the pad is odd */
    g.nth = (g.Oh + (TR ? g.pad_h & 1 : 0) + TH - 1) / TH;
    g.ntw = (g.Ow + (TR ? g.pad_w & 1 : 0) + 1) / 2;
    /* the channel vectors in equal slices of at most 16 (C = 144: 18 vectors -> 2 slices of 9) */
    const int slices = (g.cv + 15) / 16, cvb = (g.cv + slices - 1) / slices;
    const int ty = 128 / cvb;
    const size_t smem = (size_t)K_ * K_ * cvb * 8 * sizeof(float); /* <= 25 * 128 * 4 = 12.8 KB */
    const int64_t tiles = (int64_t)g.N * g.nth * g.ntw;
    dim3 grid((unsigned)((tiles + ty - 1) / ty), (unsigned)((g.cv + cvb - 1) / cvb));
    kdwt_kernel<T, K_, ST_, TH, TR><<<grid, dim3(cvb, ty), smem, s>>>(g, static_cast<const T *>(src), w,
                                                                 static_cast<T *>(dst), epi);
    return (int)cudaGetLastError();
}

template <typename T, int K_, int ST_>
int launch_th(const dwt &g, const void *src, const void *w, void *dst, const kconv_epi &epi, cudaStream_t s)
{
    /* stride 2 and the small images: 2 rows a thread (more tiles to fill 132 SMs, fewer idle rows at 7x7) */
    if constexpr (ST_ == 2) {
        return launch<T, K_, ST_, 2>(g, src, w, dst, epi, s);
    } else {
        /* TH 2 at O_h >= 28 measured 2-9 % slower (3x3) and 9 % (5x5 240@28), session 13 */
        if (g.Oh < 28)
            return launch<T, K_, ST_, 2>(g, src, w, dst, epi, s);
        return launch<T, K_, ST_, 4>(g, src, w, dst, epi, s);
    }
}

template <typename T>
int launch_t(const dwt &g, int K, int st, bool tr, const void *src, const void *w, void *dst, const kconv_epi &epi,
             cudaStream_t s)
{
    if (tr)
        return K == 3 ? launch<T, 3, 2, 2, true>(g, src, w, dst, epi, s) : launch<T, 5, 2, 2, true>(g, src, w, dst, epi, s);
    if (K == 3 && st == 1) return launch_th<T, 3, 1>(g, src, w, dst, epi, s);
    if (K == 3 && st == 2) return launch_th<T, 3, 2>(g, src, w, dst, epi, s);
    if (K == 5 && st == 1) return launch_th<T, 5, 1>(g, src, w, dst, epi, s);
    return launch_th<T, 5, 2>(g, src, w, dst, epi, s);
}

} /* namespace */

extern "C" int kconv_dw_tile_fits(const kconv_params *p, int dgrad)
{
    const int64_t K = p->win[2], st = p->stride[2];
    /* C: grid.y counts slices of at most 16 vectors */
    bool ok = (p->dt_x == KDT_F16 || p->dt_x == KDT_BF16) && p->C % 8 == 0 && p->C <= 16 * 8 * 65535 &&
              p->in[0] == 1 && p->out[0] == 1 && p->win[0] == 1 && p->stride[0] == 1 && p->win[1] == K &&
              (K == 3 || K == 5) && p->stride[1] == st && (st == 1 || st == 2) && p->dil[1] == 1 &&
              p->dil[2] == 1;
    for (int i = 0; i < 5; i++)
        ok = ok && (i == 1 || (p->sx[i] % 8 == 0 && p->sy[i] % 8 == 0));
    return ok;
}

extern "C" int kconv_dw_tile(const kconv_params *p, int dgrad, const void *src, const void *w, void *dst,
                             const kconv_epi *epi, void *stream)
{
    /* a misaligned base (a view into a larger buffer) or a shape v2 does not take: v1 */
    if (!kconv_dw_tile_fits(p, dgrad) || (uintptr_t)src % 16 || (uintptr_t)dst % 16)
        return kconv_dw(p, dgrad, src, w, dst, epi, stream);
    kconv_epi none;
    none.n = 0;
    dwt g;
    g.N = (int)p->N;
    g.C = (int)p->C;
    g.cv = g.C / 8;
    g.dt_w = p->dt_w;
    const int K = (int)p->win[2], st = (int)p->stride[2];
    const bool tr = dgrad && st == 2;
    g.flip = dgrad && !tr;
    /* fwd: x (in) -> y (out); dgrad: dy (out) -> dx (in), stride 1 with pad (K-1) - pad, stride 2 (TR) with the
     * forward's pad */
    g.Dh = (int)(dgrad ? p->out[1] : p->in[1]);
    g.Dw = (int)(dgrad ? p->out[2] : p->in[2]);
    g.Oh = (int)(dgrad ? p->in[1] : p->out[1]);
    g.Ow = (int)(dgrad ? p->in[2] : p->out[2]);
    g.pad_h = (int)(g.flip ? p->win[1] - 1 - p->pad[1] : p->pad[1]);
    g.pad_w = (int)(g.flip ? p->win[2] - 1 - p->pad[2] : p->pad[2]);
    const int64_t *ss = dgrad ? p->sy : p->sx, *sd = dgrad ? p->sx : p->sy;
    memcpy(g.ss, ss, sizeof g.ss);
    memcpy(g.sd, sd, sizeof g.sd);
    memcpy(g.sw, p->sw, sizeof g.sw);
    /* a dgrad has no epilogue (gpu_conv_dw_check) */
    const kconv_epi &e = epi && !dgrad ? *epi : none;
    return p->dt_x == KDT_F16 ? launch_t<__half>(g, K, st, tr, src, w, dst, e, (cudaStream_t)stream)
                              : launch_t<__nv_bfloat16>(g, K, st, tr, src, w, dst, e, (cudaStream_t)stream);
}
