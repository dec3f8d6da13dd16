/* conv_wgrad_mma.cu — the weight gradient as an implicit GEMM on tensor
 * cores (the conv_wgrad_mma engine), 1-, 2- and 3-D, any stride, dilation,
 * padding and groups.
 *
 * Per group g the weight gradient is the GEMM
 *   dW[k, j] = sum_m dY[m, k] * X[m, j]
 * with k over the group's Kg output channels, m = (n, o0, o1, o2) over the
 * N * out positions (the reduction) and j = (r0, r1, r2, c) over the group's
 * R0*R1*R2*Cg filter taps (c fastest: KRSC order),
 *   X[m, j] = x[n, g*Cg + c, o*stride - pad + r*dil] (0 in the padding).
 * 1-D and 2-D problems are 3-D ones with unit leading dims (kern_conv.h).
 * Shared memory holds the tiles as they lie in NHWC memory, m-major
 * (dY[m][k], X[m][j]); ldmatrix.trans turns them into the k-by-m and
 * m-by-j fragments of mma.sync m16n8k16 (f16/bf16 in, f32 accumulate).
 *
 * Split reduction, deterministic: the m range is cut into `splits` slices of
 * mchunk rows; CTA (j tile, k tile, g*splits + slice) writes its f32
 * partial tile to ws[g*splits + slice][k][j], and kwg_reduce sums the slices
 * of each element in slice order and converts to dw's type through its
 * strides.  No atomics: bit-identical results from run to run.
 *
 * Variants (template knobs):
 *   BM = 128 (warps 2 x 4, warp tile 64 x 32) or 64 for Kg <= 64 (warp
 *        tile 32 x 32); BN = 128 taps; BK = 32 rows of m per slice, 3
 *        cp.async stages, rows padded by 16 bytes (ldmatrix conflict free);
 *   VEC  16-byte cp.async chunks straight from global memory: channel-
 *        contiguous dy and x, Kg % 8 == 0, Cg % 8 == 0, pixel strides % 8;
 *        else every element is loaded on its own (any layout, any channel
 *        count) and stored to shared memory by the thread.
 * Offsets are 32-bit: the engine rejects tensors spanning 2^31 elements. */
#include "conv_mma.cuh"

using namespace kmma;

namespace {

constexpr int BN = 128, BK = 32, STAGES = 3, NT = 256;

struct kwg_geom {
    int Kg, Cg, splits, mchunk;
    int in[3], win[3], out[3], st[3], pad[3], dil[3];
    int xN, xC, xs[3]; /* x strides (elements) */
    int yN, yK, ys[3]; /* dy strides */
    int M, J;          /* N * out positions, R0*R1*R2*Cg */
};

/* Per-thread row state: the thread owns rows tid/16 and tid/16 + 16 of
 * every slice; (n, o) advances by BK rows per slice with carries. */
struct kwg_row {
    int m, n, o[3];
    int yoff, xoff, ib[3];
};

__device__ __forceinline__ void row_set(const kwg_geom &g, kwg_row &r)
{
    r.yoff = r.n * g.yN + r.o[0] * g.ys[0] + r.o[1] * g.ys[1] + r.o[2] * g.ys[2];
    r.xoff = r.n * g.xN;
#pragma unroll
    for (int d = 0; d < 3; d++)
        r.ib[d] = r.o[d] * g.st[d] - g.pad[d];
}

__device__ __forceinline__ void row_init(const kwg_geom &g, kwg_row &r, int m)
{
    r.m = m;
    int q = m < g.M ? m : 0;
    r.o[2] = q % g.out[2];
    q /= g.out[2];
    r.o[1] = q % g.out[1];
    q /= g.out[1];
    r.o[0] = q % g.out[0];
    r.n = q / g.out[0];
    row_set(g, r);
}

__device__ __forceinline__ void row_advance(const kwg_geom &g, kwg_row &r)
{
    r.m += BK;
    r.o[2] += BK;
    while (r.o[2] >= g.out[2]) {
        r.o[2] -= g.out[2];
        if (++r.o[1] == g.out[1]) {
            r.o[1] = 0;
            if (++r.o[0] == g.out[0]) {
                r.o[0] = 0;
                ++r.n;
            }
        }
    }
    row_set(g, r);
}

/* One tap column of X: its channel/tap offset into x and its dilated tap. */
struct kwg_col {
    int xcol, dr[3];
    bool valid;
};

__device__ __forceinline__ kwg_col col_of(const kwg_geom &g, int grp, int j)
{
    kwg_col c;
    c.valid = j < g.J;
    int q = c.valid ? j : 0;
    const int ch = q % g.Cg;
    q /= g.Cg;
    const int r2 = q % g.win[2];
    q /= g.win[2];
    const int r1 = q % g.win[1], r0 = q / g.win[1];
    c.dr[0] = r0 * g.dil[0];
    c.dr[1] = r1 * g.dil[1];
    c.dr[2] = r2 * g.dil[2];
    c.xcol = (grp * g.Cg + ch) * g.xC + c.dr[0] * g.xs[0] + c.dr[1] * g.xs[1] + c.dr[2] * g.xs[2];
    return c;
}

__device__ __forceinline__ bool in_bounds(const kwg_geom &g, const kwg_row &r, const int *dr)
{
    bool ok = r.m < g.M;
#pragma unroll
    for (int d = 0; d < 3; d++)
        ok = ok && (unsigned)(r.ib[d] + dr[d]) < (unsigned)g.in[d];
    return ok;
}

__device__ __forceinline__ int x_off(const kwg_geom &g, const kwg_row &r, int xcol)
{
    return r.xoff + xcol + r.ib[0] * g.xs[0] + r.ib[1] * g.xs[1] + r.ib[2] * g.xs[2];
}

template <typename T, int BM_> struct kwg_cfg {
    static constexpr int LDA = BM_ + 8, LDB = BN + 8; /* padded rows, elements */
    static constexpr int WARPS_M = 2; /* and 4 along N */
    static constexpr int MI = BM_ / WARPS_M / 16;
    static constexpr int SMEM = STAGES * BK * (LDA + LDB) * (int)sizeof(T);
};

template <typename T, int BM_, bool VEC> struct kwg_loader {
    kwg_row row[2];
    kwg_col col;     /* VEC: the thread's one B chunk column */
    int acol, arow;  /* A chunk: kout chunk index (elements) and which row */
    bool avalid;
    int m_end;

    __device__ __forceinline__ void load(const kwg_geom &g, const T *x, const T *dy, T *As, T *Bs, int grp,
                                         int k0, int j0, const kwg_col *ctab)
    {
        typedef kwg_cfg<T, BM_> cf;
        const int tid = threadIdx.x, r0 = tid / 16, cc = tid % 16;
        const int kabs = grp * g.Kg + k0; /* the group's first channel of this k tile */
#pragma unroll
        for (int i = 0; i < 2; i++) {
            const kwg_row &r = row[i];
            const bool mok = r.m < m_end;
            T *bdst = Bs + (r0 + 16 * i) * cf::LDB + cc * 8;
            if constexpr (VEC) {
                const bool vb = mok && col.valid && in_bounds(g, r, col.dr);
                cp_async16(bdst, vb ? (const void *)(x + x_off(g, r, col.xcol)) : (const void *)x, vb);
                const bool mine = BM_ == 128 || arow == i;
                if (mine) {
                    const bool va = mok && avalid;
                    T *adst = As + (r0 + 16 * i) * cf::LDA + acol;
                    cp_async16(adst, va ? (const void *)(dy + r.yoff + (kabs + acol) * g.yK) : (const void *)dy, va);
                }
            } else {
                T v[8];
#pragma unroll
                for (int e = 0; e < 8; e++) {
                    const kwg_col &c = ctab[cc * 8 + e];
                    v[e] = mok && c.valid && in_bounds(g, r, c.dr) ? x[x_off(g, r, c.xcol)] : T(0.f);
                }
                *reinterpret_cast<uint4 *>(bdst) = *reinterpret_cast<const uint4 *>(v);
                const bool mine = BM_ == 128 || arow == i;
                if (mine) {
#pragma unroll
                    for (int e = 0; e < 8; e++) {
                        const int k = k0 + acol + e;
                        v[e] = mok && k < g.Kg ? dy[r.yoff + (kabs + acol + e) * g.yK] : T(0.f);
                    }
                    *reinterpret_cast<uint4 *>(As + (r0 + 16 * i) * cf::LDA + acol) =
                        *reinterpret_cast<const uint4 *>(v);
                }
            }
        }
        row_advance(g, row[0]);
        row_advance(g, row[1]);
    }
};

template <typename T, int BM_, bool VEC>
__global__ void __launch_bounds__(NT, 2) kwg_kernel(kwg_geom g, const T *__restrict__ x, const T *__restrict__ dy,
                                                     float *__restrict__ ws)
{
    typedef kwg_cfg<T, BM_> cf;
    constexpr int MI = cf::MI;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *As = reinterpret_cast<T *>(smem_raw);
    T *Bs = As + STAGES * BK * cf::LDA;
    __shared__ kwg_col ctab[VEC ? 1 : BN];
    const int tid = threadIdx.x, lane = tid % 32, wid = tid / 32;
    const int wm = wid % cf::WARPS_M, wn = wid / cf::WARPS_M;
    const int j0 = blockIdx.x * BN, k0 = blockIdx.y * BM_;
    const int grp = blockIdx.z / g.splits, slice = blockIdx.z % g.splits;
    const int mbeg = slice * g.mchunk, mend = min(g.M, mbeg + g.mchunk);

    kwg_loader<T, BM_, VEC> L;
    const int r0 = tid / 16, cc = tid % 16;
    L.m_end = mend;
    row_init(g, L.row[0], mbeg + r0);
    row_init(g, L.row[1], mbeg + r0 + 16);
    if constexpr (BM_ == 128) {
        L.acol = cc * 8;
        L.arow = 0;
    } else {
        L.acol = (cc % 8) * 8;
        L.arow = cc / 8;
    }
    L.avalid = k0 + L.acol < g.Kg;
    if constexpr (VEC) {
        L.col = col_of(g, grp, j0 + cc * 8);
    } else {
        if (tid < BN)
            ctab[tid] = col_of(g, grp, j0 + tid);
        __syncthreads();
    }

    float acc[MI][4][4];
#pragma unroll
    for (int a = 0; a < MI; a++)
#pragma unroll
        for (int b = 0; b < 4; b++)
#pragma unroll
            for (int c = 0; c < 4; c++)
                acc[a][b][c] = 0.f;

    const int KT = (mend - mbeg + BK - 1) / BK;
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < KT)
            L.load(g, x, dy, As + s * BK * cf::LDA, Bs + s * BK * cf::LDB, grp, k0, j0, ctab);
        cp_async_commit();
    }
    for (int kt = 0; kt < KT; kt++) {
        cp_async_wait<STAGES - 2>();
        __syncthreads();
        const int nk = kt + STAGES - 1;
        if (nk < KT)
            L.load(g, x, dy, As + (nk % STAGES) * BK * cf::LDA, Bs + (nk % STAGES) * BK * cf::LDB, grp, k0, j0,
                   ctab);
        cp_async_commit();
        const T *A = As + (kt % STAGES) * BK * cf::LDA + wm * (MI * 16);
        const T *B = Bs + (kt % STAGES) * BK * cf::LDB + wn * 32;
        const int mat = lane / 8, mr = lane % 8;
#pragma unroll
        for (int ks = 0; ks < BK; ks += 16) {
            unsigned af[MI][4], bf[4][2];
            /* A (k x m): matrices (k 0-7, m 0-7), (k 8-15, m 0-7), (k 0-7, m 8-15), (k 8-15, m 8-15) */
#pragma unroll
            for (int mi = 0; mi < MI; mi++)
                ldmatrix_x4_trans(af[mi], A + (ks + (mat / 2) * 8 + mr) * cf::LDA + mi * 16 + (mat % 2) * 8);
            /* B (m x j): matrices (m 0-7, j 0-7), (m 8-15, j 0-7), (m 0-7, j 8-15), (m 8-15, j 8-15) */
#pragma unroll
            for (int nj = 0; nj < 2; nj++) {
                unsigned r4[4];
                ldmatrix_x4_trans(r4, B + (ks + (mat % 2) * 8 + mr) * cf::LDB + nj * 16 + (mat / 2) * 8);
                b_pair(bf, nj, r4);
            }
            mma_warp_tile<T, MI>(acc, af, bf);
        }
    }
    cp_async_wait<0>();

    /* partial tile -> ws[blockIdx.z][k][j]: c0,c1 at (k, j..j+1), c2,c3 at (k+8, j..j+1) */
    float *out = ws + (size_t)blockIdx.z * g.Kg * g.J;
    const bool pair = (g.J % 2) == 0;
#pragma unroll
    for (int mi = 0; mi < MI; mi++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int k = k0 + wm * (MI * 16) + mi * 16 + lane / 4 + h * 8;
            if (k >= g.Kg)
                continue;
#pragma unroll
            for (int ni = 0; ni < 4; ni++) {
                const int j = j0 + wn * 32 + ni * 8 + (lane % 4) * 2;
                float *o = out + (size_t)k * g.J + j;
                const float v0 = acc[mi][ni][2 * h], v1 = acc[mi][ni][2 * h + 1];
                if (pair && j + 1 < g.J) {
                    *reinterpret_cast<float2 *>(o) = make_float2(v0, v1);
                    continue;
                }
                if (j < g.J)
                    o[0] = v0;
                if (j + 1 < g.J)
                    o[1] = v1;
            }
        }
}

/* dw[g*Kg + k, c, r0, r1, r2] = sum over slices (in order) of ws. */
__global__ void __launch_bounds__(256) kwg_reduce(kconv_params p, int Kg, int J, int splits, const float *ws,
                                                  void *dw)
{
    const int64_t per = (int64_t)Kg * J, total = p.G * per, Cg = p.C / p.G;
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total; t += (int64_t)gridDim.x * blockDim.x) {
        const int64_t grp = t / per, e = t % per;
        const float *src = ws + grp * splits * per + e;
        float sum = 0.f;
        for (int z = 0; z < splits; z++)
            sum += src[z * per];
        const int64_t k = grp * Kg + e / J;
        int64_t q = e % J;
        const int64_t c = q % Cg;
        q /= Cg;
        const int64_t r2 = q % p.win[2];
        q /= p.win[2];
        const int64_t r1 = q % p.win[1], r0 = q / p.win[1];
        kst(dw, p.dt_w, k * p.sw[0] + c * p.sw[1] + r0 * p.sw[2] + r1 * p.sw[3] + r2 * p.sw[4], sum);
    }
}

template <typename T, int BM_, bool VEC> int launch(const kwg_geom &g, int G, const void *x, const void *dy, float *ws,
                                                    cudaStream_t s)
{
    typedef kwg_cfg<T, BM_> cf;
    static bool attr_set = false; /* per function, once per process */
    if (!attr_set) {
        cudaError_t e = cudaFuncSetAttribute(kwg_kernel<T, BM_, VEC>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             cf::SMEM);
        if (e != cudaSuccess)
            return (int)e;
        attr_set = true;
    }
    dim3 grid((unsigned)((g.J + BN - 1) / BN), (unsigned)((g.Kg + BM_ - 1) / BM_), (unsigned)(G * g.splits));
    kwg_kernel<T, BM_, VEC><<<grid, NT, cf::SMEM, s>>>(g, static_cast<const T *>(x), static_cast<const T *>(dy), ws);
    return (int)cudaGetLastError();
}

template <typename T> int launch_t(const kwg_geom &g, int G, bool vec, const void *x, const void *dy, float *ws,
                                   cudaStream_t s)
{
    if (g.Kg <= 64)
        return vec ? launch<T, 64, true>(g, G, x, dy, ws, s) : launch<T, 64, false>(g, G, x, dy, ws, s);
    return vec ? launch<T, 128, true>(g, G, x, dy, ws, s) : launch<T, 128, false>(g, G, x, dy, ws, s);
}

} /* namespace */

extern "C" int kconv_wgrad_mma(const kconv_params *p, const void *x, void *dw, const void *dy, float *ws, int splits,
                               int vec, void *stream)
{
    kwg_geom g;
    g.Kg = (int)(p->K / p->G);
    g.Cg = (int)(p->C / p->G);
    for (int d = 0; d < 3; d++) {
        g.in[d] = (int)p->in[d];
        g.win[d] = (int)p->win[d];
        g.out[d] = (int)p->out[d];
        g.st[d] = (int)p->stride[d];
        g.pad[d] = (int)p->pad[d];
        g.dil[d] = (int)p->dil[d];
        g.xs[d] = (int)p->sx[2 + d];
        g.ys[d] = (int)p->sy[2 + d];
    }
    g.xN = (int)p->sx[0];
    g.xC = (int)p->sx[1];
    g.yN = (int)p->sy[0];
    g.yK = (int)p->sy[1];
    g.M = (int)(p->N * p->out[0] * p->out[1] * p->out[2]);
    g.J = (int)(p->win[0] * p->win[1] * p->win[2]) * g.Cg;
    /* the slices: splits of whole BK steps (the caller's count, rounded) */
    const int steps = (g.M + BK - 1) / BK;
    int per = (steps + splits - 1) / splits;
    g.mchunk = per * BK;
    g.splits = (g.M + g.mchunk - 1) / g.mchunk;
    cudaStream_t s = (cudaStream_t)stream;
    const int G = (int)p->G;
    int e = p->dt_x == KDT_F16 ? launch_t<__half>(g, G, vec != 0, x, dy, ws, s)
                               : launch_t<__nv_bfloat16>(g, G, vec != 0, x, dy, ws, s);
    if (e)
        return e;
    const int64_t total = p->G * (int64_t)g.Kg * g.J;
    kwg_reduce<<<kgrid(total, 256), 256, 0, s>>>(*p, g.Kg, g.J, g.splits, ws, dw);
    return (int)cudaGetLastError();
}
