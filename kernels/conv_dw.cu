/* conv_dw.cu — depthwise convolution (groups == C == K) forward and data
 * gradient, channels-last, f16 / bf16 / f32 (the conv_dw engine).
 *
 * A depthwise conv does R*S multiply-adds per element it reads: it is bound
 * by memory, so the kernel is built around the loads.
 *   block    (CVB, 256/CVB) threads: x walks channel vectors of V channels
 *            (one 16-byte load: 8 halves or 4 floats; V = 1 when C or the
 *            strides are not multiples of 8 / 4), y walks output strips;
 *   strip    QT consecutive outputs along W of one (n, o, p);
 *   weights  the slice's CVB*V channels x taps, as f32 in shared memory
 *            ([tap][channel]), loaded once per block (flipped for dgrad);
 *   v1 (generic, QT = 1): every tap is one vector load (L1 serves the
 *            overlap between neighbouring strips); the gather visits only
 *            the taps that reach its dx position (every s/gcd(s, dil)-th);
 *   v2 (S_, SW_ compile-time, dilation 1 along W): the strip's input window
 *            of (QT-1)*SW_ + S_ columns is loaded once per row into registers
 *            and reused by the QT outputs (QT = 4 at stride 1, 2 at stride 2).
 * dgrad at stride 1 is the forward conv of dy with flipped taps and pad
 * (win-1)*dil - pad; at larger strides a gather (mode `gather`): dx[i] takes
 * the taps r with (i + pad - r*dil) % stride == 0.  The forward epilogue
 * (conv_epi.cuh) is applied before the store.  f32 accumulation. */
#include "conv_epi.cuh"

namespace {

/* The problem as the kernel reads it: src (x, or dy) -> dst (y, or dx). */
struct dwg {
    int N, C, cv;                      /* channel vectors: C / V */
    int D[3], O[3];                    /* src and dst spatial sizes */
    int win[3], st[3], dil[3], pad[3];
    int64_t ss[5], sd[5], sw[5];       /* 5-slot strides (channel slot 1 is 1 for src/dst) */
    int rstep[3];                      /* gather: the taps of one dx position step by s / gcd(s, dil) */
    int dt_w, flip, gather, nq;        /* nq: strips along W */
};

__device__ __forceinline__ float tof(float v) { return v; }
__device__ __forceinline__ float tof(__half v) { return __half2float(v); }
__device__ __forceinline__ float tof(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ __forceinline__ T fromf(float v);
template <> __device__ __forceinline__ float fromf<float>(float v) { return v; }
template <> __device__ __forceinline__ __half fromf<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 fromf<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

/* V elements at p (16-byte aligned when V > 1) as floats. */
template <typename T, int V> __device__ __forceinline__ void ldv(const T *p, float *f)
{
    if constexpr (V == 1) {
        f[0] = tof(p[0]);
    } else {
        static_assert(V * sizeof(T) == 16, "one 16-byte vector");
        const uint4 u = __ldg(reinterpret_cast<const uint4 *>(p));
        const T *h = reinterpret_cast<const T *>(&u);
#pragma unroll
        for (int i = 0; i < V; i++)
            f[i] = tof(h[i]);
    }
}

template <typename T, int V> __device__ __forceinline__ void stv(T *p, const float *f)
{
    if constexpr (V == 1) {
        p[0] = fromf<T>(f[0]);
    } else {
        uint4 u;
        T *h = reinterpret_cast<T *>(&u);
#pragma unroll
        for (int i = 0; i < V; i++)
            h[i] = fromf<T>(f[i]);
        *reinterpret_cast<uint4 *>(p) = u;
    }
}

/* V weights of one tap from shared memory (16-byte loads when V % 4 == 0:
 * the slice rows are multiples of 4 floats). */
template <int V> __device__ __forceinline__ void ldw(const float *p, float *f)
{
    if constexpr (V % 4 == 0) {
#pragma unroll
        for (int i = 0; i < V; i += 4) {
            const float4 u = *reinterpret_cast<const float4 *>(p + i);
            f[i] = u.x, f[i + 1] = u.y, f[i + 2] = u.z, f[i + 3] = u.w;
        }
    } else {
#pragma unroll
        for (int i = 0; i < V; i++)
            f[i] = p[i];
    }
}

/* The src position read by output position o through tap r along dim d
 * (gather: r is one of the taps first_tap gives, the division is exact). */
__device__ __forceinline__ bool src_pos(const dwg &g, int d, int o, int r, int &i)
{
    if (!g.gather) {
        i = o * g.st[d] - g.pad[d] + r * g.dil[d];
        return (unsigned)i < (unsigned)g.D[d];
    }
    const int a = o + g.pad[d] - r * g.dil[d];
    i = a / g.st[d];
    return a >= 0 && i < g.D[d];
}

/* The first tap that reaches output position o along dim d (then every
 * rstep-th): all of them in the forward conv; in the gather, the r with
 * (o + pad - r*dil) % stride == 0 (win when none). */
__device__ __forceinline__ int first_tap(const dwg &g, int d, int o)
{
    if (!g.gather)
        return 0;
    for (int r = 0; r < g.rstep[d] && r < g.win[d]; r++)
        if ((o + g.pad[d] - r * g.dil[d]) % g.st[d] == 0)
            return r;
    return g.win[d];
}

template <typename T, int V, int S_, int SW_>
__global__ void __launch_bounds__(256) kdw_kernel(const dwg g, const T *__restrict__ src, const void *__restrict__ w,
                                                  T *__restrict__ dst, const kconv_epi epi)
{
    constexpr int QT = S_ == 0 ? 1 : SW_ == 1 ? 4 : 2;
    extern __shared__ float wsm[]; /* [tap][CVB * V] */
    const int CVB = blockDim.x, row = CVB * V;
    const int taps = g.win[0] * g.win[1] * g.win[2];
    const int cbase = blockIdx.y * row;
    for (int i = threadIdx.y * CVB + threadIdx.x; i < taps * row; i += CVB * blockDim.y) {
        const int tap = i / row, c = cbase + i % row;
        int t0 = tap / (g.win[1] * g.win[2]), t1 = (tap / g.win[2]) % g.win[1], t2 = tap % g.win[2];
        if (g.flip) {
            t0 = g.win[0] - 1 - t0;
            t1 = g.win[1] - 1 - t1;
            t2 = g.win[2] - 1 - t2;
        }
        wsm[i] = c < g.C ? kld(w, g.dt_w, c * g.sw[0] + t0 * g.sw[2] + t1 * g.sw[3] + t2 * g.sw[4]) : 0.f;
    }
    __syncthreads();
    const int cv = blockIdx.y * CVB + threadIdx.x;
    const int64_t strip = (int64_t)blockIdx.x * blockDim.y + threadIdx.y;
    if (cv >= g.cv || strip >= (int64_t)g.N * g.O[0] * g.O[1] * g.nq)
        return;
    const int c0 = cv * V;
    const int qs = (int)(strip % g.nq);
    int64_t rest = strip / g.nq;
    const int p = (int)(rest % g.O[1]);
    rest /= g.O[1];
    const int o = (int)(rest % g.O[0]), n = (int)(rest / g.O[0]);
    const int q0 = qs * QT;

    float acc[QT][V];
#pragma unroll
    for (int j = 0; j < QT; j++)
#pragma unroll
        for (int i = 0; i < V; i++)
            acc[j][i] = 0.f;
    const T *sn = src + n * g.ss[0] + c0;
    const float *wl = wsm + threadIdx.x * V;
    const int step0 = g.gather ? g.rstep[0] : 1, step1 = g.gather ? g.rstep[1] : 1, step2 = g.gather ? g.rstep[2] : 1;
    const int first1 = first_tap(g, 1, p), first2 = first_tap(g, 2, q0);
    for (int t0 = first_tap(g, 0, o); t0 < g.win[0]; t0 += step0) {
        int i0;
        if (!src_pos(g, 0, o, t0, i0))
            continue;
        for (int t1 = first1; t1 < g.win[1]; t1 += step1) {
            int i1;
            if (!src_pos(g, 1, p, t1, i1))
                continue;
            const T *rowp = sn + i0 * g.ss[2] + i1 * g.ss[3];
            const float *wr = wl + (t0 * g.win[1] + t1) * g.win[2] * row;
            if constexpr (S_ > 0) {
                constexpr int SPAN = (QT - 1) * SW_ + S_;
                float xw[SPAN][V];
                const int iw0 = q0 * SW_ - g.pad[2];
#pragma unroll
                for (int c = 0; c < SPAN; c++) {
                    const int iw = iw0 + c;
                    if ((unsigned)iw < (unsigned)g.D[2]) {
                        ldv<T, V>(rowp + iw * g.ss[4], xw[c]);
                    } else {
#pragma unroll
                        for (int i = 0; i < V; i++)
                            xw[c][i] = 0.f;
                    }
                }
#pragma unroll
                for (int s = 0; s < S_; s++) {
                    float wv[V];
                    ldw<V>(wr + s * row, wv);
#pragma unroll
                    for (int j = 0; j < QT; j++)
#pragma unroll
                        for (int i = 0; i < V; i++)
                            acc[j][i] = fmaf(xw[j * SW_ + s][i], wv[i], acc[j][i]);
                }
            } else {
                for (int t2 = first2; t2 < g.win[2]; t2 += step2) {
                    int i2;
                    if (!src_pos(g, 2, q0, t2, i2))
                        continue;
                    float xv[V], wv[V];
                    ldv<T, V>(rowp + i2 * g.ss[4], xv);
                    ldw<V>(wr + t2 * row, wv);
#pragma unroll
                    for (int i = 0; i < V; i++)
                        acc[0][i] = fmaf(xv[i], wv[i], acc[0][i]);
                }
            }
        }
    }
    if (epi.n) {
        int rc[QT][4], kc[V];
        bool rv[QT], cvv[V];
#pragma unroll
        for (int j = 0; j < QT; j++) {
            rc[j][0] = n, rc[j][1] = o, rc[j][2] = p, rc[j][3] = q0 + j;
            rv[j] = q0 + j < g.O[2];
        }
#pragma unroll
        for (int i = 0; i < V; i++)
            kc[i] = c0 + i, cvv[i] = true;
        kepi_tile<QT, V>(epi, acc, rc, kc, rv, cvv);
    }
#pragma unroll
    for (int j = 0; j < QT; j++) {
        const int q = q0 + j;
        if (q >= g.O[2])
            break;
        stv<T, V>(dst + n * g.sd[0] + o * g.sd[2] + p * g.sd[3] + q * g.sd[4] + c0, acc[j]);
    }
}

template <typename T, int V, int S_, int SW_>
int launch(const dwg &g0, const void *src, const void *w, void *dst, const kconv_epi &epi, cudaStream_t s)
{
    constexpr int QT = S_ == 0 ? 1 : SW_ == 1 ? 4 : 2;
    dwg g = g0;
    g.cv = g.C / V;
    g.nq = (g.O[2] + QT - 1) / QT;
    const int taps = g.win[0] * g.win[1] * g.win[2];
    /* the channel vectors in equal slices of at most 32 (C = 144 halves: 18
     * threads, not 32 with 14 idle), fewer while the weights overflow */
    int slices = (g.cv + 31) / 32, cvb = (g.cv + slices - 1) / slices;
    while (cvb > 1 && (size_t)taps * cvb * V * sizeof(float) > KDW_SMEM_MAX) {
        slices++;
        cvb = (g.cv + slices - 1) / slices;
    }
    const size_t smem = (size_t)taps * cvb * V * sizeof(float);
    if (smem > KDW_SMEM_MAX)
        return (int)cudaErrorInvalidConfiguration; /* gpu_conv_dw_check refuses these */
    const int ty = 256 / cvb; /* cvb * ty <= 256 threads */
    const int64_t strips = (int64_t)g.N * g.O[0] * g.O[1] * g.nq;
    dim3 grid((unsigned)((strips + ty - 1) / ty), (unsigned)((g.cv + cvb - 1) / cvb));
    kdw_kernel<T, V, S_, SW_><<<grid, dim3(cvb, ty), smem, s>>>(g, static_cast<const T *>(src), w,
                                                                 static_cast<T *>(dst), epi);
    return (int)cudaGetLastError();
}

/* The W-strip variant when the window along W is one of the compiled ones. */
template <typename T, int V>
int launch_v(const dwg &g, const void *src, const void *w, void *dst, const kconv_epi &epi, cudaStream_t s)
{
    if (!g.gather && g.dil[2] == 1) {
        const int S = g.win[2], SW = g.st[2];
        if (S == 3 && SW == 1) return launch<T, V, 3, 1>(g, src, w, dst, epi, s);
        if (S == 3 && SW == 2) return launch<T, V, 3, 2>(g, src, w, dst, epi, s);
        if (S == 5 && SW == 1) return launch<T, V, 5, 1>(g, src, w, dst, epi, s);
        if (S == 5 && SW == 2) return launch<T, V, 5, 2>(g, src, w, dst, epi, s);
    }
    return launch<T, V, 0, 0>(g, src, w, dst, epi, s);
}

template <typename T>
int launch_t(const dwg &g, const void *src, const void *w, void *dst, const kconv_epi &epi, cudaStream_t s)
{
    constexpr int V = 16 / sizeof(T);
    bool vec = g.C % V == 0 && (uintptr_t)src % 16 == 0 && (uintptr_t)dst % 16 == 0;
    for (int i = 0; i < 5; i++)
        vec = vec && (i == 1 || (g.ss[i] % V == 0 && g.sd[i] % V == 0));
    return vec ? launch_v<T, V>(g, src, w, dst, epi, s) : launch<T, 1, 0, 0>(g, src, w, dst, epi, s);
}

} /* namespace */

extern "C" int kconv_dw(const kconv_params *p, int dgrad, const void *src, const void *w, void *dst,
                        const kconv_epi *epi, void *stream)
{
    kconv_epi none;
    none.n = 0;
    dwg g;
    g.N = (int)p->N;
    g.C = (int)p->C;
    g.dt_w = p->dt_w;
    bool strided = false;
    for (int d = 0; d < KCONV_SP; d++)
        strided = strided || p->stride[d] != 1;
    g.flip = dgrad && !strided;
    g.gather = dgrad && strided;
    for (int d = 0; d < KCONV_SP; d++) {
        g.win[d] = (int)p->win[d];
        g.dil[d] = (int)p->dil[d];
        g.st[d] = (int)p->stride[d];
        /* fwd: x (in) -> y (out); dgrad: dy (out) -> dx (in) */
        g.D[d] = (int)(dgrad ? p->out[d] : p->in[d]);
        g.O[d] = (int)(dgrad ? p->in[d] : p->out[d]);
        g.pad[d] = (int)(g.flip ? (p->win[d] - 1) * p->dil[d] - p->pad[d] : p->pad[d]);
        int a = g.st[d], b = g.dil[d];
        while (b) {
            const int t = a % b;
            a = b;
            b = t;
        }
        g.rstep[d] = g.st[d] / a;
    }
    for (int i = 0; i < 5; i++) {
        g.ss[i] = dgrad ? p->sy[i] : p->sx[i];
        g.sd[i] = dgrad ? p->sx[i] : p->sy[i];
        g.sw[i] = p->sw[i];
    }
    const kconv_epi &e = epi && !dgrad ? *epi : none;
    cudaStream_t s = (cudaStream_t)stream;
    switch (p->dt_x) {
    case KDT_F16: return launch_t<__half>(g, src, w, dst, e, s);
    case KDT_BF16: return launch_t<__nv_bfloat16>(g, src, w, dst, e, s);
    default: return launch_t<float>(g, src, w, dst, e, s);
    }
}
