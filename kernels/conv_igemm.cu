/* conv_igemm.cu — implicit-GEMM forward convolution on tensor cores (the
 * conv_igemm engine).
 *
 * The conv is the GEMM  Y[m, k] = sum_j A[m, j] * B[j, k]  with
 *   m = (n, o, p, q) over N*O*P*Q output positions,   k over K output channels,
 *   j = (t, r, s, c) over T*R*S*C filter taps (c fastest),
 *   A[m, j] = x[n, o*sd - pd + t*dd, p*sh - ph + r*dh, q*sw - pw + s*dw, c]
 *             (0 in the padding),
 *   B[j, k] = w[k, t, r, s, c].
 * 1-D and 2-D convs are 3-D ones with unit depth (and height): the 5-slot
 * view of kern_conv.h.
 * x is NHWC-like (channel stride 1), w KRSC-like (channel stride 1); A and B
 * are never materialized: every 16-byte chunk (8 halves / 4 floats of one
 * (r, s) tap, hence C % 8 == 0 for f16/bf16 and C % 4 == 0 for f32) is fetched
 * by cp.async straight into shared memory, zero-filled when it falls in the
 * padding or past a tail.
 *
 * Tiles (knobs in kern_conv.h: KIG_BM, KIG_BN, KIG_BK16/KIG_BK32, KIG_STAGES):
 *   CTA tile  BM x BN = 128 x 128 of Y, 256 threads = 8 warps as 2 (M) x 4 (N),
 *             warp tile 64 x 32 = 4 x 4 mma tiles of 16 x 8; for K <= 64 the
 *             variant BN = 64: warps 4 (M) x 2 (N), warp tile 32 x 32;
 *   k slice   BK = 32 halves (f16/bf16: 2 mma k-steps of 16, m16n8k16)
 *             or 16 floats (tf32: 2 k-steps of 8, m16n8k8), 64 bytes per row;
 *   pipeline  STAGES = 4 shared-memory buffers, cp.async groups
 *             (prefetch STAGES-1 slices ahead, one __syncthreads per slice);
 *   shared    rows padded to 80 bytes: ldmatrix / fragment loads hit 32
 *             distinct banks; 4 * (128 + BN) * 80 B = 80 or 60 KiB dynamic
 *             (4 stages, not 3: 3 slices in flight for a CTA alone on its
 *             SM; measured +2-4% on the split-K layers, bench/RESULTS-conv.md).
 * f32 accumulation; the epilogue applies the fused steps (conv_epi.cuh:
 * bias, activation, residual, scale), converts and stores through y's own
 * strides (two halves at once when K is y's contiguous dim).  Offsets are 32-bit:
 * the engine rejects tensors spanning 2^31 elements or more. */
#include "conv_epi.cuh"
#include "conv_mma.cuh"

extern "C" {

typedef struct kig_geom {
    int N, D, H, W, C, K, T, R, S, O, P, Q; /* depth D / T / O: 1 in 1-D and 2-D */
    int sd, sh, sw, pd, ph, pw, dd, dh, dw;
    int xN, xD, xH, xW;     /* x strides (elements); channel stride 1 */
    int wK, wT, wR, wS;     /* w strides; channel stride 1 */
    int yN, yK, yO, yP, yQ; /* y strides */
    int M, Kred;        /* N*P*Q, R*S*C */
    int dt_y;
    int kt_per;         /* split-K: k slices per split (blockIdx.z); all of them when unsplit */
} kig_geom;

} /* extern "C" */

namespace {

constexpr int BM = KIG_BM, STAGES = KIG_STAGES, NT = KIG_THREADS;

/* BN_ is KIG_BN (128: warps 2 x 4, warp tile 64 x 32) or KIG_BN_SMALL (64:
 * warps 4 x 2, warp tile 32 x 32) — the latter for K <= 64, where a 128-wide
 * tile would spend half its MMAs on padding channels. */
template <typename T, int BN_> struct kig_cfg {
    static constexpr int BK = sizeof(T) == 2 ? KIG_BK16 : KIG_BK32; /* elements per slice row */
    static constexpr int EPC = 16 / (int)sizeof(T);                 /* elements per 16-byte chunk */
    static constexpr int LDS = BK + EPC;                            /* padded row, elements */
    static constexpr int WARPS_N = BN_ / 32, WARPS_M = (NT / 32) / WARPS_N;
    static constexpr int MI = BM / WARPS_M / 16;                    /* 16-row mma tiles per warp */
    static constexpr int SMEM = STAGES * (BM + BN_) * LDS * (int)sizeof(T);
};

using namespace kmma;

__device__ __forceinline__ unsigned to_tf32(float f)
{
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(f));
    return r;
}

__device__ __forceinline__ void mma1688_tf32(float *c, const unsigned *a, const unsigned *b)
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* Per-thread loader state: two A rows and two B rows (the same chunk column
 * cc of each), and the (r, s, c) position of that chunk in the current slice. */
struct kig_loader {
    const char *xrow[2];
    int id0[2], ih0[2], iw0[2];
    bool mvalid[2];
    const char *wrow[2];
    bool kvalid[2];
    int c, s, r, t, kk;
};

template <typename T, int BN_>
__device__ __forceinline__ void load_slice(const kig_geom &g, const T *x, kig_loader &L, T *As, T *Bs, int row0)
{
    typedef kig_cfg<T, BN_> cf;
    const int cc = threadIdx.x % 4;
    const bool kin = L.kk < g.Kred;
    const int dt = L.t * g.dd, dr = L.r * g.dh, ds = L.s * g.dw;
#pragma unroll
    for (int i = 0; i < 2; i++) {
        const int row = row0 + i * (NT / 4);
        const int id = L.id0[i] + dt, ih = L.ih0[i] + dr, iw = L.iw0[i] + ds;
        const bool va = kin && L.mvalid[i] && (unsigned)id < (unsigned)g.D && (unsigned)ih < (unsigned)g.H &&
                        (unsigned)iw < (unsigned)g.W;
        const void *srca =
            va ? (const void *)(L.xrow[i] + ((size_t)id * g.xD + (size_t)ih * g.xH + (size_t)iw * g.xW + L.c) * sizeof(T))
               : (const void *)x;
        cp_async16(As + row * cf::LDS + cc * cf::EPC, srca, va);
        if (i * (NT / 4) >= BN_) /* compile-time: BN = 64 loads one B row per thread */
            continue;
        const bool vb = kin && L.kvalid[i];
        const void *srcb =
            vb ? (const void *)(L.wrow[i] + ((size_t)L.t * g.wT + (size_t)L.r * g.wR + (size_t)L.s * g.wS + L.c) *
                                                sizeof(T))
               : (const void *)x;
        cp_async16(Bs + row * cf::LDS + cc * cf::EPC, srcb, vb);
    }
    /* advance the chunk by one slice: kk += BK, carrying c into s, r and t */
    L.kk += cf::BK;
    L.c += cf::BK;
    while (L.c >= g.C) {
        L.c -= g.C;
        if (++L.s == g.S) {
            L.s = 0;
            if (++L.r == g.R) {
                L.r = 0;
                ++L.t;
            }
        }
    }
}

template <typename T, int BN_>
__global__ void __launch_bounds__(NT, 2) kig_fwd_kernel(kig_geom g, const T *__restrict__ x, const T *__restrict__ w,
                                                         void *__restrict__ y, const kconv_epi epi,
                                                         float *__restrict__ part)
{
    typedef kig_cfg<T, BN_> cf;
    constexpr int BN = BN_, MI = cf::MI;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *As = reinterpret_cast<T *>(smem_raw);
    T *Bs = As + STAGES * BM * cf::LDS;
    const int tid = threadIdx.x, lane = tid % 32, wid = tid / 32;
    const int wm = wid % cf::WARPS_M, wn = wid / cf::WARPS_M;
    const int bm = blockIdx.x * BM, bn = blockIdx.y * BN;

    kig_loader L;
    const int row0 = tid / 4;
#pragma unroll
    for (int i = 0; i < 2; i++) {
        const int m = bm + row0 + i * (NT / 4);
        L.mvalid[i] = m < g.M;
        const int mm = L.mvalid[i] ? m : 0;
        const int q = mm % g.Q, p = (mm / g.Q) % g.P, o = (mm / (g.P * g.Q)) % g.O, n = mm / (g.O * g.P * g.Q);
        L.xrow[i] = reinterpret_cast<const char *>(x) + (size_t)n * g.xN * sizeof(T);
        L.id0[i] = o * g.sd - g.pd;
        L.ih0[i] = p * g.sh - g.ph;
        L.iw0[i] = q * g.sw - g.pw;
        const int k = bn + row0 + i * (NT / 4);
        L.kvalid[i] = k < g.K;
        L.wrow[i] = reinterpret_cast<const char *>(w) + (size_t)(L.kvalid[i] ? k : 0) * g.wK * sizeof(T);
    }
    /* split-K: this CTA reduces k slices [kt0, kt0 + KT) of the whole reduction */
    const int KT_all = (g.Kred + cf::BK - 1) / cf::BK, kt0 = blockIdx.z * g.kt_per;
    const int KT = min(g.kt_per, KT_all - kt0);
    L.kk = kt0 * cf::BK + (tid % 4) * cf::EPC;
    L.c = L.kk % g.C;
    L.s = (L.kk / g.C) % g.S;
    L.r = (L.kk / (g.C * g.S)) % g.R;
    L.t = L.kk / (g.C * g.S * g.R);

    float acc[MI][4][4];
#pragma unroll
    for (int a = 0; a < MI; a++)
#pragma unroll
        for (int b = 0; b < 4; b++)
#pragma unroll
            for (int c = 0; c < 4; c++)
                acc[a][b][c] = 0.f;

#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < KT)
            load_slice<T, BN_>(g, x, L, As + s * BM * cf::LDS, Bs + s * BN * cf::LDS, row0);
        cp_async_commit();
    }
    for (int kt = 0; kt < KT; kt++) {
        cp_async_wait<STAGES - 2>();
        __syncthreads();
        const int nk = kt + STAGES - 1;
        if (nk < KT)
            load_slice<T, BN_>(g, x, L, As + (nk % STAGES) * BM * cf::LDS, Bs + (nk % STAGES) * BN * cf::LDS, row0);
        cp_async_commit();
        const T *A = As + (kt % STAGES) * BM * cf::LDS + wm * (MI * 16) * cf::LDS;
        const T *B = Bs + (kt % STAGES) * BN * cf::LDS + wn * 32 * cf::LDS;
        if constexpr (sizeof(T) == 2) {
#pragma unroll
            for (int ks = 0; ks < cf::BK; ks += 16) {
                unsigned af[MI][4], bf[4][2];
#pragma unroll
                for (int mi = 0; mi < MI; mi++)
                    ldmatrix_x4(af[mi], A + (mi * 16 + lane % 16) * cf::LDS + ks + (lane / 16) * 8);
#pragma unroll
                for (int nj = 0; nj < 2; nj++) {
                    unsigned r4[4];
                    const int mid = lane / 8;
                    ldmatrix_x4(r4, B + (nj * 16 + lane % 8 + (mid / 2) * 8) * cf::LDS + ks + (mid % 2) * 8);
                    b_pair(bf, nj, r4);
                }
                mma_warp_tile<T, MI>(acc, af, bf);
            }
        } else {
            const float *Af = reinterpret_cast<const float *>(A), *Bf = reinterpret_cast<const float *>(B);
            const int fr = lane / 4, fc = lane % 4;
#pragma unroll
            for (int ks = 0; ks < cf::BK; ks += 8) {
                unsigned af[MI][4], bf[4][2];
#pragma unroll
                for (int mi = 0; mi < MI; mi++) {
                    const float *a = Af + (mi * 16 + fr) * cf::LDS + ks + fc;
                    af[mi][0] = to_tf32(a[0]);
                    af[mi][1] = to_tf32(a[8 * cf::LDS]);
                    af[mi][2] = to_tf32(a[4]);
                    af[mi][3] = to_tf32(a[8 * cf::LDS + 4]);
                }
#pragma unroll
                for (int ni = 0; ni < 4; ni++) {
                    const float *b = Bf + (ni * 8 + fr) * cf::LDS + ks + fc;
                    bf[ni][0] = to_tf32(b[0]);
                    bf[ni][1] = to_tf32(b[4]);
                }
#pragma unroll
                for (int mi = 0; mi < MI; mi++)
#pragma unroll
                    for (int ni = 0; ni < 4; ni++)
                        mma1688_tf32(acc[mi][ni], af[mi], bf[ni]);
            }
        }
    }
    cp_async_wait<0>();

    if (part) { /* split-K: the raw f32 tile to this split's partial [M][K]; kig_reduce finishes */
        float *pz = part + (size_t)blockIdx.z * g.M * g.K;
#pragma unroll
        for (int mi = 0; mi < MI; mi++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int m = bm + wm * (MI * 16) + mi * 16 + lane / 4 + h * 8;
                if (m >= g.M)
                    continue;
#pragma unroll
                for (int ni = 0; ni < 4; ni++) {
                    const int k = bn + wn * 32 + ni * 8 + (lane % 4) * 2;
                    float *d = pz + (size_t)m * g.K + k;
                    if (k + 1 < g.K && !(g.K & 1)) { /* k even, K even: 8-byte aligned */
                        *reinterpret_cast<float2 *>(d) = make_float2(acc[mi][ni][2 * h], acc[mi][ni][2 * h + 1]);
                        continue;
                    }
                    if (k < g.K)
                        d[0] = acc[mi][ni][2 * h];
                    if (k + 1 < g.K)
                        d[1] = acc[mi][ni][2 * h + 1];
                }
            }
        return;
    }

    /* epilogue: c0,c1 at (row, col..col+1), c2,c3 at (row+8, col..col+1);
     * the fused steps run on one mi slice (2 rows x 8 columns) at a time */
#pragma unroll
    for (int mi = 0; mi < MI; mi++) {
        int rc[2][4]; /* n, o, p, q of the two rows */
        bool rv[2];
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int m = bm + wm * (MI * 16) + mi * 16 + lane / 4 + h * 8;
            rv[h] = m < g.M;
            const int mm = rv[h] ? m : 0;
            rc[h][3] = mm % g.Q;
            rc[h][2] = (mm / g.Q) % g.P;
            rc[h][1] = (mm / (g.P * g.Q)) % g.O;
            rc[h][0] = mm / (g.O * g.P * g.Q);
        }
        if (epi.n) {
            float v[2][8];
            int kc[8];
            bool cv[8];
#pragma unroll
            for (int c = 0; c < 8; c++) {
                kc[c] = bn + wn * 32 + (c / 2) * 8 + (lane % 4) * 2 + c % 2;
                cv[c] = kc[c] < g.K; /* only real channels: the operands end at K */
#pragma unroll
                for (int h = 0; h < 2; h++)
                    v[h][c] = acc[mi][c / 2][2 * h + c % 2];
            }
            kepi_tile<2, 8>(epi, v, rc, kc, rv, cv);
#pragma unroll
            for (int c = 0; c < 8; c++)
#pragma unroll
                for (int h = 0; h < 2; h++)
                    acc[mi][c / 2][2 * h + c % 2] = v[h][c];
        }
#pragma unroll
        for (int h = 0; h < 2; h++) {
            if (!rv[h])
                continue;
            const int64_t yrow = (int64_t)rc[h][0] * g.yN + (int64_t)rc[h][1] * g.yO + (int64_t)rc[h][2] * g.yP +
                                 (int64_t)rc[h][3] * g.yQ;
#pragma unroll
            for (int ni = 0; ni < 4; ni++) {
                const int k = bn + wn * 32 + ni * 8 + (lane % 4) * 2;
                const float v0 = acc[mi][ni][2 * h], v1 = acc[mi][ni][2 * h + 1];
                const int64_t yo = yrow + (int64_t)k * g.yK;
                if (g.yK == 1 && k + 1 < g.K && g.dt_y != KDT_F32 &&
                    ((reinterpret_cast<uintptr_t>(y) / 2 + (uint64_t)yo) & 1) == 0) { /* 4-byte aligned pair */
                    if (g.dt_y == KDT_F16)
                        *reinterpret_cast<__half2 *>(static_cast<__half *>(y) + yo) = __floats2half2_rn(v0, v1);
                    else
                        *reinterpret_cast<__nv_bfloat162 *>(static_cast<__nv_bfloat16 *>(y) + yo) =
                            __floats2bfloat162_rn(v0, v1);
                    continue;
                }
                if (k < g.K)
                    kst(y, g.dt_y, yo, v0);
                if (k + 1 < g.K)
                    kst(y, g.dt_y, yo + g.yK, v1);
            }
        }
    }
}

/* Split-K's second pass: y = epilogue(sum of the splits' partials, in split
 * order: deterministic), one thread per V consecutive channels of one m. */
template <int V>
__global__ void __launch_bounds__(256) kig_reduce_kernel(kig_geom g, const float *__restrict__ part, int splits,
                                                         void *__restrict__ y, const kconv_epi epi)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, kv = g.K / V;
    if (i >= (int64_t)g.M * kv)
        return;
    const int m = (int)(i / kv), k0 = (int)(i % kv) * V;
    const size_t stride = (size_t)g.M * g.K, off = (size_t)m * g.K + k0;
    float v[V];
    if constexpr (V == 4) {
        float4 a = *reinterpret_cast<const float4 *>(part + off);
        for (int z = 1; z < splits; z++) {
            const float4 b = *reinterpret_cast<const float4 *>(part + z * stride + off);
            a.x += b.x, a.y += b.y, a.z += b.z, a.w += b.w;
        }
        v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w;
    } else {
        v[0] = part[off];
        for (int z = 1; z < splits; z++)
            v[0] += part[z * stride + off];
    }
    const int q = m % g.Q, p = (m / g.Q) % g.P, o = (m / (g.P * g.Q)) % g.O, n = m / (g.O * g.P * g.Q);
    const int64_t yrow = (int64_t)n * g.yN + (int64_t)o * g.yO + (int64_t)p * g.yP + (int64_t)q * g.yQ;
#pragma unroll
    for (int j = 0; j < V; j++)
        kst(y, g.dt_y, yrow + (int64_t)(k0 + j) * g.yK, epi.n ? kepi_apply(epi, v[j], n, k0 + j, o, p, q) : v[j]);
}

template <typename T, int BN_>
int launch_bn(const kig_geom &g, const void *x, const void *w, void *y, const kconv_epi &epi, float *part,
              int splits, cudaStream_t s)
{
    typedef kig_cfg<T, BN_> cf;
    static bool attr_set = false; /* the attribute is per function, set once per process */
    if (!attr_set) {
        cudaError_t e =
            cudaFuncSetAttribute(kig_fwd_kernel<T, BN_>, cudaFuncAttributeMaxDynamicSharedMemorySize, cf::SMEM);
        if (e != cudaSuccess)
            return (int)e;
        attr_set = true;
    }
    /* splits as gpu_conv_igemm_splits normalised them: ceil(KT / per) == splits, none empty */
    kig_geom gs = g;
    const int KT = (g.Kred + cf::BK - 1) / cf::BK;
    if (splits < 1 || !part)
        splits = 1;
    gs.kt_per = (KT + splits - 1) / splits;
    splits = (KT + gs.kt_per - 1) / gs.kt_per;
    dim3 grid((unsigned)((g.M + BM - 1) / BM), (unsigned)((g.K + BN_ - 1) / BN_), (unsigned)splits);
    kig_fwd_kernel<T, BN_><<<grid, NT, cf::SMEM, s>>>(gs, static_cast<const T *>(x), static_cast<const T *>(w), y,
                                                                     epi, splits > 1 ? part : nullptr);
    if (splits == 1)
        return (int)cudaGetLastError();
    const bool v4 = g.K % 4 == 0;
    const int64_t threads = (int64_t)g.M * (v4 ? g.K / 4 : g.K);
    const unsigned blocks = (unsigned)((threads + 255) / 256);
    if (v4)
        kig_reduce_kernel<4><<<blocks, 256, 0, s>>>(gs, part, splits, y, epi);
    else
        kig_reduce_kernel<1><<<blocks, 256, 0, s>>>(gs, part, splits, y, epi);
    return (int)cudaGetLastError();
}

template <typename T>
int launch(const kig_geom &g, const void *x, const void *w, void *y, const kconv_epi &epi, float *part, int splits,
           cudaStream_t s)
{
    return g.K <= KIG_BN_SMALL ? launch_bn<T, KIG_BN_SMALL>(g, x, w, y, epi, part, splits, s)
                               : launch_bn<T, KIG_BN>(g, x, w, y, epi, part, splits, s);
}

} /* namespace */

/* The kernels' geometry of p: slots 0, 1, 2 of the 5-slot view are D, H, W (unit in 1-D / 2-D). */
static kig_geom geom_of(const kconv_params *p)
{
    kig_geom g;
    g.N = (int)p->N; g.C = (int)p->C; g.K = (int)p->K;
    g.D = (int)p->in[0]; g.H = (int)p->in[1]; g.W = (int)p->in[2];
    g.T = (int)p->win[0]; g.R = (int)p->win[1]; g.S = (int)p->win[2];
    g.O = (int)p->out[0]; g.P = (int)p->out[1]; g.Q = (int)p->out[2];
    g.sd = (int)p->stride[0]; g.sh = (int)p->stride[1]; g.sw = (int)p->stride[2];
    g.pd = (int)p->pad[0]; g.ph = (int)p->pad[1]; g.pw = (int)p->pad[2];
    g.dd = (int)p->dil[0]; g.dh = (int)p->dil[1]; g.dw = (int)p->dil[2];
    g.xN = (int)p->sx[0]; g.xD = (int)p->sx[2]; g.xH = (int)p->sx[3]; g.xW = (int)p->sx[4];
    g.wK = (int)p->sw[0]; g.wT = (int)p->sw[2]; g.wR = (int)p->sw[3]; g.wS = (int)p->sw[4];
    g.yN = (int)p->sy[0]; g.yK = (int)p->sy[1]; g.yO = (int)p->sy[2]; g.yP = (int)p->sy[3]; g.yQ = (int)p->sy[4];
    g.M = g.N * g.O * g.P * g.Q;
    g.Kred = g.T * g.R * g.S * g.C;
    g.dt_y = p->dt_y;
    g.kt_per = 0; /* launch_bn sets it */
    return g;
}

extern "C" int kconv_igemm_fwd(const kconv_params *p, const void *x, const void *w, void *y, const kconv_epi *epi,
                               float *part, int splits, void *stream)
{
    kconv_epi none;
    none.n = 0;
    const kig_geom g = geom_of(p);
    cudaStream_t s = (cudaStream_t)stream;
    const kconv_epi &e = epi ? *epi : none;
    switch (p->dt_x) {
    case KDT_F16: return launch<__half>(g, x, w, y, e, part, splits, s);
    case KDT_BF16: return launch<__nv_bfloat16>(g, x, w, y, e, part, splits, s);
    default: return launch<float>(g, x, w, y, e, part, splits, s);
    }
}

extern "C" int kconv_igemm_reduce(const kconv_params *p, const float *part, int splits, void *y, const kconv_epi *epi,
                                  void *stream)
{
    kconv_epi none;
    none.n = 0;
    const kig_geom g = geom_of(p);
    if (g.M == 0 || g.K == 0)
        return 0;
    const bool v4 = g.K % 4 == 0;
    const int64_t threads = (int64_t)g.M * (v4 ? g.K / 4 : g.K);
    const unsigned blocks = (unsigned)((threads + 255) / 256);
    cudaStream_t s = (cudaStream_t)stream;
    if (v4)
        kig_reduce_kernel<4><<<blocks, 256, 0, s>>>(g, part, splits, y, epi ? *epi : none);
    else
        kig_reduce_kernel<1><<<blocks, 256, 0, s>>>(g, part, splits, y, epi ? *epi : none);
    return (int)cudaGetLastError();
}
