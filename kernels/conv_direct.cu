/* conv_direct.cu — direct convolution kernels (fwd, dgrad, wgrad) of the
 * conv_direct engine: the fallback that is correct for every configuration
 * the conv ops allow (1-3 spatial dims, stride, asymmetric pad, dilation,
 * groups incl. depthwise, any strides, any f32/f16/bf16 mix).  Semantics are
 * those of src/ops/conv.c and conv_grad.c; see kern_conv.h for the 5-slot
 * view.  f32 accumulation everywhere.
 *
 * fwd:   one thread per y element (the fused epilogue of conv_epi.cuh at the
 *        store); each thread computes KCD_KB consecutive
 *        output channels of one group so an x tap is loaded once for all of
 *        them.  Thread order follows y's layout (K innermost when K is
 *        y's contiguous dim, else W) so neighbouring threads touch
 *        neighbouring memory.
 * dgrad: one thread per dx element, gathering over the taps r whose output
 *        position o = (i + pad - r*dil) / stride is exact and inside dy; a fused
 *        relu_bwd mask (conv_epi.cuh) at the store.
 * wgrad: groups 1: the tiled split reduction kconv_tiled_wgrad (below);
 *        groups > 1: one 256-thread block per dw element reducing over
 *        N x out positions (warp shuffles, then shared memory).  Neither uses
 *        atomics: deterministic. */
#include "conv_epi.cuh"

#include <string.h>

enum { KCD_KB = 4, KCD_THREADS = 256 };

extern "C" {

/* Split a flat index over dims d[0..4] (row-major) into idx[0..4]. */
static __device__ __forceinline__ void split5(int64_t i, const int64_t *d, int64_t *idx)
{
    for (int k = 4; k >= 0; k--) {
        idx[k] = i % d[k];
        i /= d[k];
    }
}

__global__ void __launch_bounds__(KCD_THREADS) kconv_direct_fwd_kernel(kconv_params p, const void *x, const void *w,
                                                                        void *y, int k_inner, const kconv_epi epi)
{
    const int64_t Kg = p.K / p.G, Cg = p.C / p.G;
    const int64_t kblocks_per_group = (Kg + KCD_KB - 1) / KCD_KB;
    const int64_t KB = p.G * kblocks_per_group; /* k-blocks across all groups */
    /* work dims in y-layout order */
    int64_t d[5];
    if (k_inner) {
        d[0] = p.N; d[1] = p.out[0]; d[2] = p.out[1]; d[3] = p.out[2]; d[4] = KB;
    } else {
        d[0] = p.N; d[1] = KB; d[2] = p.out[0]; d[3] = p.out[1]; d[4] = p.out[2];
    }
    const int64_t total = p.N * KB * p.out[0] * p.out[1] * p.out[2];
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total; t += (int64_t)gridDim.x * blockDim.x) {
        int64_t ix[5], n, kb, o0, o1, o2;
        split5(t, d, ix);
        if (k_inner) {
            n = ix[0]; o0 = ix[1]; o1 = ix[2]; o2 = ix[3]; kb = ix[4];
        } else {
            n = ix[0]; kb = ix[1]; o0 = ix[2]; o1 = ix[3]; o2 = ix[4];
        }
        const int64_t grp = kb / kblocks_per_group;
        const int64_t k0 = grp * Kg + (kb % kblocks_per_group) * KCD_KB;
        const int64_t kend = min(k0 + KCD_KB, (grp + 1) * Kg);
        float acc[KCD_KB] = {0.f, 0.f, 0.f, 0.f};
        const int64_t i0b = o0 * p.stride[0] - p.pad[0], i1b = o1 * p.stride[1] - p.pad[1],
                      i2b = o2 * p.stride[2] - p.pad[2];
        for (int64_t ci = 0; ci < Cg; ci++) {
            const int64_t xc = n * p.sx[0] + (grp * Cg + ci) * p.sx[1];
            for (int64_t r0 = 0; r0 < p.win[0]; r0++) {
                const int64_t i0 = i0b + r0 * p.dil[0];
                if (i0 < 0 || i0 >= p.in[0])
                    continue;
                for (int64_t r1 = 0; r1 < p.win[1]; r1++) {
                    const int64_t i1 = i1b + r1 * p.dil[1];
                    if (i1 < 0 || i1 >= p.in[1])
                        continue;
                    for (int64_t r2 = 0; r2 < p.win[2]; r2++) {
                        const int64_t i2 = i2b + r2 * p.dil[2];
                        if (i2 < 0 || i2 >= p.in[2])
                            continue;
                        const float xv = kld(x, p.dt_x, xc + i0 * p.sx[2] + i1 * p.sx[3] + i2 * p.sx[4]);
                        const int64_t wo = ci * p.sw[1] + r0 * p.sw[2] + r1 * p.sw[3] + r2 * p.sw[4];
#pragma unroll
                        for (int j = 0; j < KCD_KB; j++)
                            if (k0 + j < kend)
                                acc[j] += xv * kld(w, p.dt_w, (k0 + j) * p.sw[0] + wo);
                    }
                }
            }
        }
        const int64_t yo = n * p.sy[0] + o0 * p.sy[2] + o1 * p.sy[3] + o2 * p.sy[4];
#pragma unroll
        for (int j = 0; j < KCD_KB; j++)
            if (k0 + j < kend)
                kst(y, p.dt_y, yo + (k0 + j) * p.sy[1],
                    epi.n ? kepi_apply(epi, acc[j], n, k0 + j, o0, o1, o2) : acc[j]);
    }
}

__global__ void __launch_bounds__(KCD_THREADS) kconv_direct_dgrad_kernel(kconv_params p, void *dx, const void *w,
                                                                          const void *dy, const kconv_epi epi)
{
    const int64_t Kg = p.K / p.G, Cg = p.C / p.G;
    const int64_t d[5] = {p.N, p.C, p.in[0], p.in[1], p.in[2]};
    const int64_t total = p.N * p.C * p.in[0] * p.in[1] * p.in[2];
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total; t += (int64_t)gridDim.x * blockDim.x) {
        int64_t ix[5];
        split5(t, d, ix);
        const int64_t n = ix[0], ch = ix[1], grp = ch / Cg, ci = ch % Cg;
        float acc = 0.f;
        for (int64_t r0 = 0; r0 < p.win[0]; r0++) {
            const int64_t t0 = ix[2] + p.pad[0] - r0 * p.dil[0];
            if (t0 < 0 || t0 % p.stride[0] || t0 / p.stride[0] >= p.out[0])
                continue;
            for (int64_t r1 = 0; r1 < p.win[1]; r1++) {
                const int64_t t1 = ix[3] + p.pad[1] - r1 * p.dil[1];
                if (t1 < 0 || t1 % p.stride[1] || t1 / p.stride[1] >= p.out[1])
                    continue;
                for (int64_t r2 = 0; r2 < p.win[2]; r2++) {
                    const int64_t t2 = ix[4] + p.pad[2] - r2 * p.dil[2];
                    if (t2 < 0 || t2 % p.stride[2] || t2 / p.stride[2] >= p.out[2])
                        continue;
                    const int64_t yo = n * p.sy[0] + t0 / p.stride[0] * p.sy[2] + t1 / p.stride[1] * p.sy[3] +
                                       t2 / p.stride[2] * p.sy[4];
                    const int64_t wo = ci * p.sw[1] + r0 * p.sw[2] + r1 * p.sw[3] + r2 * p.sw[4];
                    for (int64_t kk = 0; kk < Kg; kk++) {
                        const int64_t k = grp * Kg + kk;
                        acc += kld(dy, p.dt_y, yo + k * p.sy[1]) * kld(w, p.dt_w, wo + k * p.sw[0]);
                    }
                }
            }
        }
        kst(dx, p.dt_x, n * p.sx[0] + ch * p.sx[1] + ix[2] * p.sx[2] + ix[3] * p.sx[3] + ix[4] * p.sx[4],
            epi.n ? kepi_apply(epi, acc, n, ch, ix[2], ix[3], ix[4]) : acc);
    }
}

__global__ void __launch_bounds__(KCD_THREADS) kconv_direct_wgrad_kernel(kconv_params p, const void *x, void *dw,
                                                                          const void *dy)
{
    __shared__ float partial[KCD_THREADS / 32];
    const int64_t Kg = p.K / p.G, Cg = p.C / p.G;
    const int64_t wd[5] = {p.K, Cg, p.win[0], p.win[1], p.win[2]};
    const int64_t od[5] = {p.N, 1, p.out[0], p.out[1], p.out[2]};
    const int64_t nw = p.K * Cg * p.win[0] * p.win[1] * p.win[2];
    const int64_t red = p.N * p.out[0] * p.out[1] * p.out[2];
    for (int64_t e = blockIdx.x; e < nw; e += gridDim.x) {
        int64_t ix[5];
        split5(e, wd, ix);
        const int64_t k = ix[0], ci = ix[1], ch = (k / Kg) * Cg + ci;
        float acc = 0.f;
        for (int64_t j = threadIdx.x; j < red; j += blockDim.x) {
            int64_t o[5];
            split5(j, od, o);
            const int64_t i0 = o[2] * p.stride[0] - p.pad[0] + ix[2] * p.dil[0];
            const int64_t i1 = o[3] * p.stride[1] - p.pad[1] + ix[3] * p.dil[1];
            const int64_t i2 = o[4] * p.stride[2] - p.pad[2] + ix[4] * p.dil[2];
            if (i0 < 0 || i0 >= p.in[0] || i1 < 0 || i1 >= p.in[1] || i2 < 0 || i2 >= p.in[2])
                continue;
            acc += kld(dy, p.dt_y, o[0] * p.sy[0] + k * p.sy[1] + o[2] * p.sy[2] + o[3] * p.sy[3] + o[4] * p.sy[4]) *
                   kld(x, p.dt_x, o[0] * p.sx[0] + ch * p.sx[1] + i0 * p.sx[2] + i1 * p.sx[3] + i2 * p.sx[4]);
        }
        for (int off = 16; off > 0; off >>= 1)
            acc += __shfl_down_sync(0xffffffffu, acc, off);
        if ((threadIdx.x & 31) == 0)
            partial[threadIdx.x >> 5] = acc;
        __syncthreads();
        if (threadIdx.x < 32) {
            float v = threadIdx.x < KCD_THREADS / 32 ? partial[threadIdx.x] : 0.f;
            for (int off = 16; off > 0; off >>= 1)
                v += __shfl_down_sync(0xffffffffu, v, off);
            if (threadIdx.x == 0)
                kst(dw, p.dt_w, k * p.sw[0] + ci * p.sw[1] + ix[2] * p.sw[2] + ix[3] * p.sw[3] + ix[4] * p.sw[4], v);
        }
        __syncthreads(); /* partial[] is reused by the next element */
    }
}

/* Tiled wgrad (groups 1): dW[k, j] = sum_m dY[m, k] * X[m, j] with m = (n, o)
 * and j = (r, c) (c fastest).  A CTA owns a 32 x 32 tile of (k, j) and one
 * slice of m (split z of gridDim.z); per 32-m step it stages dY and the
 * gathered X in shared memory (each m split once into (n, o) for both) and
 * every thread accumulates a 2 x 2 block.  Partials go to ws[z][k][j] (f32);
 * kconv_wgrad_reduce_kernel sums the splits in order: deterministic. */
enum { KTW = 32 };

__global__ void __launch_bounds__(KCD_THREADS) kconv_wgrad_tiled_kernel(kconv_params p, const void *x, const void *dy,
                                                                         float *ws, int64_t mchunk)
{
    __shared__ float sdy[KTW][KTW + 1];
    __shared__ float sx[KTW][KTW + 1];
    const int64_t J = p.C * p.win[0] * p.win[1] * p.win[2];
    const int64_t Mtot = p.N * p.out[0] * p.out[1] * p.out[2];
    const int64_t k0 = (int64_t)blockIdx.y * KTW, j0 = (int64_t)blockIdx.x * KTW;
    const int64_t mbeg = (int64_t)blockIdx.z * mchunk, mend = min(Mtot, mbeg + mchunk);
    const int t = threadIdx.x, tx = t % 16, ty = t / 16;
    float acc[2][2] = {{0.f, 0.f}, {0.f, 0.f}};
    for (int64_t m0 = mbeg; m0 < mend; m0 += KTW) {
#pragma unroll
        for (int i = 0; i < KTW * KTW / KCD_THREADS; i++) {
            const int e = t + i * KCD_THREADS, mm = e / KTW, cc = e % KTW;
            const int64_t m = m0 + mm;
            float vdy = 0.f, vx = 0.f;
            if (m < mend) {
                int64_t r = m;
                const int64_t o2 = r % p.out[2]; r /= p.out[2];
                const int64_t o1 = r % p.out[1]; r /= p.out[1];
                const int64_t o0 = r % p.out[0], n = r / p.out[0];
                const int64_t k = k0 + cc, j = j0 + cc;
                if (k < p.K)
                    vdy = kld(dy, p.dt_y, n * p.sy[0] + k * p.sy[1] + o0 * p.sy[2] + o1 * p.sy[3] + o2 * p.sy[4]);
                if (j < J) {
                    int64_t q = j;
                    const int64_t c = q % p.C; q /= p.C;
                    const int64_t r2 = q % p.win[2]; q /= p.win[2];
                    const int64_t r1 = q % p.win[1], r0 = q / p.win[1];
                    const int64_t i0 = o0 * p.stride[0] - p.pad[0] + r0 * p.dil[0];
                    const int64_t i1 = o1 * p.stride[1] - p.pad[1] + r1 * p.dil[1];
                    const int64_t i2 = o2 * p.stride[2] - p.pad[2] + r2 * p.dil[2];
                    if (i0 >= 0 && i0 < p.in[0] && i1 >= 0 && i1 < p.in[1] && i2 >= 0 && i2 < p.in[2])
                        vx = kld(x, p.dt_x, n * p.sx[0] + c * p.sx[1] + i0 * p.sx[2] + i1 * p.sx[3] + i2 * p.sx[4]);
                }
            }
            sdy[mm][cc] = vdy;
            sx[mm][cc] = vx;
        }
        __syncthreads();
#pragma unroll 8
        for (int mm = 0; mm < KTW; mm++) {
            const float a0 = sdy[mm][ty * 2], a1 = sdy[mm][ty * 2 + 1];
            const float b0 = sx[mm][tx * 2], b1 = sx[mm][tx * 2 + 1];
            acc[0][0] += a0 * b0;
            acc[0][1] += a0 * b1;
            acc[1][0] += a1 * b0;
            acc[1][1] += a1 * b1;
        }
        __syncthreads();
    }
#pragma unroll
    for (int a = 0; a < 2; a++)
#pragma unroll
        for (int b = 0; b < 2; b++) {
            const int64_t k = k0 + ty * 2 + a, j = j0 + tx * 2 + b;
            if (k < p.K && j < J)
                ws[((int64_t)blockIdx.z * p.K + k) * J + j] = acc[a][b];
        }
}

__global__ void __launch_bounds__(KCD_THREADS) kconv_wgrad_reduce_kernel(kconv_params p, const float *ws, int splits,
                                                                          void *dw)
{
    const int64_t J = p.C * p.win[0] * p.win[1] * p.win[2], total = p.K * J;
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total; t += (int64_t)gridDim.x * blockDim.x) {
        float sum = 0.f;
        for (int z = 0; z < splits; z++)
            sum += ws[z * total + t];
        const int64_t k = t / J;
        int64_t q = t % J;
        const int64_t c = q % p.C; q /= p.C;
        const int64_t r2 = q % p.win[2]; q /= p.win[2];
        const int64_t r1 = q % p.win[1], r0 = q / p.win[1];
        kst(dw, p.dt_w, k * p.sw[0] + c * p.sw[1] + r0 * p.sw[2] + r1 * p.sw[3] + r2 * p.sw[4], sum);
    }
}

int kconv_tiled_wgrad(const kconv_params *p, const void *x, void *dw, const void *dy, float *ws, int splits,
                      void *stream)
{
    const int64_t J = p->C * p->win[0] * p->win[1] * p->win[2];
    const int64_t Mtot = p->N * p->out[0] * p->out[1] * p->out[2];
    int64_t mchunk = (Mtot + splits - 1) / splits;
    mchunk = (mchunk + KTW - 1) / KTW * KTW;
    const int zs = (int)((Mtot + mchunk - 1) / mchunk);
    dim3 grid((unsigned)((J + KTW - 1) / KTW), (unsigned)((p->K + KTW - 1) / KTW), (unsigned)zs);
    cudaStream_t s = (cudaStream_t)stream;
    kconv_wgrad_tiled_kernel<<<grid, KCD_THREADS, 0, s>>>(*p, x, dy, ws, mchunk);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return (int)e;
    kconv_wgrad_reduce_kernel<<<kgrid(p->K * J, KCD_THREADS), KCD_THREADS, 0, s>>>(*p, ws, zs, dw);
    return (int)cudaGetLastError();
}

/* wt packed [C][T0][T1][T2][K] (the phase's taps, flipped): t = (((c*T0 + i0)*T1 + i1)*T2 + i2)*K + k */
typedef struct kpack_taps {
    int64_t r0[KCONV_SP], rstep[KCONV_SP], taps[KCONV_SP];
} kpack_taps;

__global__ void __launch_bounds__(KCD_THREADS) kconv_pack_kernel(kconv_params p, kpack_taps tp, const void *w,
                                                                  void *wt, int dt_wt)
{
    const int64_t T0 = tp.taps[0], T1 = tp.taps[1], T2 = tp.taps[2], total = p.C * T0 * T1 * T2 * p.K;
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total; t += (int64_t)gridDim.x * blockDim.x) {
        int64_t q = t;
        const int64_t k = q % p.K; q /= p.K;
        const int64_t i2 = q % T2; q /= T2;
        const int64_t i1 = q % T1; q /= T1;
        const int64_t i0 = q % T0, c = q / T0;
        const int64_t r0 = tp.r0[0] + (T0 - 1 - i0) * tp.rstep[0], r1 = tp.r0[1] + (T1 - 1 - i1) * tp.rstep[1],
                      r2 = tp.r0[2] + (T2 - 1 - i2) * tp.rstep[2];
        kst(wt, dt_wt, t, kld(w, p.dt_w, k * p.sw[0] + c * p.sw[1] + r0 * p.sw[2] + r1 * p.sw[3] + r2 * p.sw[4]));
    }
}

/* The same through 32 x 32 (k, c) tiles of one tap in shared memory (blockIdx.z: the phase's tap): loads
 * along c (w's rows, channel-contiguous in KRSC), stores along k (wt's rows): both coalesced, where the loop
 * above reads neighbouring k, R*S*C elements apart, one sector each (measured ~20 us of a 0.067 ms dgrad of
 * ResNet's 3x3 512 -> 512: 2.4 M weights). */
__device__ __forceinline__ void kconv_pack_tile(const kconv_params &p, const kpack_taps &tp, int64_t tap,
                                                const void *w, void *wt, int dt_wt)
{
    __shared__ float tile[32][33];
    const int64_t T1 = tp.taps[1], T2 = tp.taps[2], taps = tp.taps[0] * T1 * T2;
    const int64_t i2 = tap % T2, i1 = (tap / T2) % T1, i0 = tap / (T1 * T2);
    const int64_t woff = (tp.r0[0] + (tp.taps[0] - 1 - i0) * tp.rstep[0]) * p.sw[2] +
                         (tp.r0[1] + (T1 - 1 - i1) * tp.rstep[1]) * p.sw[3] +
                         (tp.r0[2] + (T2 - 1 - i2) * tp.rstep[2]) * p.sw[4];
    const int64_t kb = (int64_t)blockIdx.x * 32, cb = (int64_t)blockIdx.y * 32;
    for (int j = threadIdx.y; j < 32; j += 8) {
        const int64_t k = kb + j, c = cb + threadIdx.x;
        if (k < p.K && c < p.C)
            tile[j][threadIdx.x] = kld(w, p.dt_w, k * p.sw[0] + c * p.sw[1] + woff);
    }
    __syncthreads();
    for (int j = threadIdx.y; j < 32; j += 8) {
        const int64_t c = cb + j, k = kb + threadIdx.x;
        if (k < p.K && c < p.C)
            kst(wt, dt_wt, (c * taps + tap) * p.K + k, tile[threadIdx.x][j]);
    }
}

__global__ void __launch_bounds__(256) kconv_pack_tiled_kernel(kconv_params p, kpack_taps tp, const void *w,
                                                               void *wt, int dt_wt)
{
    kconv_pack_tile(p, tp, blockIdx.z, w, wt, dt_wt);
}

/* Several phases' packs in one launch (kconv_pack_phases, session 11): blockIdx.z runs over phase i's taps from
 * z0[i] on, its weights at wt + wt_off[i] elements. */
enum { KPACK_PH_MAX = 8 };
typedef struct kpack_phases {
    int n, z0[KPACK_PH_MAX + 1];
    int64_t wt_off[KPACK_PH_MAX];
    kpack_taps tp[KPACK_PH_MAX];
} kpack_phases;

__global__ void __launch_bounds__(256) kconv_pack_phases_kernel(kconv_params p, const __grid_constant__ kpack_phases ph,
                                                                const void *w, void *wt, int dt_wt)
{
    int i = 0;
    while (i + 1 < ph.n && (int)blockIdx.z >= ph.z0[i + 1])
        i++;
    char *wi = static_cast<char *>(wt) + ph.wt_off[i] * (dt_wt == KDT_F32 ? 4 : 2);
    kconv_pack_tile(p, ph.tp[i], blockIdx.z - ph.z0[i], w, wi, dt_wt);
}

int kconv_pack_phases(const kconv_params *p, const void *w, void *wt, int dt_wt, int n, const int64_t *wt_off,
                      const int64_t (*r0)[KCONV_SP], const int64_t (*rstep)[KCONV_SP],
                      const int64_t (*taps)[KCONV_SP], void *stream)
{
    const int64_t kt = (p->K + 31) / 32, ct = (p->C + 31) / 32;
    if (n < 1 || n > KPACK_PH_MAX || ct > 65535 || kt >= ((int64_t)1 << 31))
        return (int)cudaErrorInvalidValue;
    kpack_phases ph;
    memset(&ph, 0, sizeof ph);
    ph.n = n;
    for (int i = 0; i < n; i++) {
        ph.wt_off[i] = wt_off[i];
        for (int d = 0; d < KCONV_SP; d++) {
            ph.tp[i].r0[d] = r0[i][d];
            ph.tp[i].rstep[d] = rstep[i][d];
            ph.tp[i].taps[d] = taps[i][d];
        }
        ph.z0[i + 1] = ph.z0[i] + (int)(taps[i][0] * taps[i][1] * taps[i][2]);
    }
    if (ph.z0[n] == 0 || ph.z0[n] > 65535)
        return ph.z0[n] == 0 ? 0 : (int)cudaErrorInvalidValue;
    kconv_pack_phases_kernel<<<dim3((unsigned)kt, (unsigned)ct, (unsigned)ph.z0[n]), dim3(32, 8), 0,
                               (cudaStream_t)stream>>>(*p, ph, w, wt, dt_wt);
    return (int)cudaGetLastError();
}

int kconv_pack_phase(const kconv_params *p, const void *w, void *wt, int dt_wt, const int64_t *r0,
                     const int64_t *rstep, const int64_t *taps, void *stream)
{
    kpack_taps tp;
    for (int d = 0; d < KCONV_SP; d++) {
        tp.r0[d] = r0[d];
        tp.rstep[d] = rstep[d];
        tp.taps[d] = taps[d];
    }
    const int64_t ntaps = taps[0] * taps[1] * taps[2], kt = (p->K + 31) / 32, ct = (p->C + 31) / 32;
    if (ntaps <= 65535 && ct <= 65535 && kt < ((int64_t)1 << 31)) {
        kconv_pack_tiled_kernel<<<dim3((unsigned)kt, (unsigned)ct, (unsigned)ntaps), dim3(32, 8), 0,
                                  (cudaStream_t)stream>>>(*p, tp, w, wt, dt_wt);
        return (int)cudaGetLastError();
    }
    const int64_t total = p->C * ntaps * p->K;
    kconv_pack_kernel<<<kgrid(total, KCD_THREADS), KCD_THREADS, 0, (cudaStream_t)stream>>>(*p, tp, w, wt, dt_wt);
    return (int)cudaGetLastError();
}

/* Channel innermost: neighbouring threads write neighbouring NHWC elements. */
__global__ void __launch_bounds__(KCD_THREADS) kconv_zero_kernel(kconv_params f, void *y)
{
    const int64_t d[5] = {f.N, f.out[0], f.out[1], f.out[2], f.K};
    const int64_t total = f.N * f.out[0] * f.out[1] * f.out[2] * f.K;
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total; t += (int64_t)gridDim.x * blockDim.x) {
        int64_t ix[5];
        split5(t, d, ix);
        kst(y, f.dt_y, ix[0] * f.sy[0] + ix[4] * f.sy[1] + ix[1] * f.sy[2] + ix[2] * f.sy[3] + ix[3] * f.sy[4], 0.f);
    }
}

/* The same with one 16-byte store per thread: channel-contiguous y whose
 * channel runs and pixel strides are 16-byte aligned, offsets < 2^31. */
__global__ void __launch_bounds__(KCD_THREADS) kconv_zero16_kernel(kconv_params f, int vecs_per_px, int vec, void *y)
{
    const int o0 = (int)f.out[0], o1 = (int)f.out[1], o2 = (int)f.out[2];
    const int total = (int)(f.N * f.out[0] * f.out[1] * f.out[2]) * vecs_per_px;
    for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < total; t += gridDim.x * blockDim.x) {
        int q = t / vecs_per_px;
        const int v = t - q * vecs_per_px;
        const int a2 = q % o2;
        q /= o2;
        const int a1 = q % o1;
        q /= o1;
        const int a0 = q % o0, n = q / o0;
        const int64_t e = n * f.sy[0] + a0 * f.sy[2] + a1 * f.sy[3] + a2 * f.sy[4] + (int64_t)v * vec;
        *reinterpret_cast<uint4 *>(static_cast<char *>(y) + e * (vec == 4 ? 4 : 2)) = make_uint4(0, 0, 0, 0);
    }
}

int kconv_zero_lattice(const kconv_params *f, void *y, void *stream)
{
    const int64_t px = f->N * f->out[0] * f->out[1] * f->out[2], total = px * f->K;
    const int vec = f->dt_y == KDT_F32 ? 4 : 8; /* elements per 16 bytes */
    bool v16 = f->sy[1] == 1 && f->K % vec == 0 && ((uintptr_t)y & 15) == 0 && total < ((int64_t)1 << 30);
    for (int i = 0; i < 5; i++)
        v16 = v16 && (i == 1 || f->sy[i] % vec == 0);
    if (v16) {
        const int64_t nv = px * (f->K / vec);
        kconv_zero16_kernel<<<kgrid(nv, KCD_THREADS), KCD_THREADS, 0, (cudaStream_t)stream>>>(*f, (int)(f->K / vec),
                                                                                             vec, y);
        return (int)cudaGetLastError();
    }
    kconv_zero_kernel<<<kgrid(total, KCD_THREADS), KCD_THREADS, 0, (cudaStream_t)stream>>>(*f, y);
    return (int)cudaGetLastError();
}

int kconv_direct_fwd(const kconv_params *p, const void *x, const void *w, void *y, const kconv_epi *epi,
                     void *stream)
{
    kconv_epi none;
    none.n = 0;
    const int64_t KB = p->G * ((p->K / p->G + KCD_KB - 1) / KCD_KB);
    const int64_t total = p->N * KB * p->out[0] * p->out[1] * p->out[2];
    const int k_inner = p->sy[1] == 1;
    kconv_direct_fwd_kernel<<<kgrid(total, KCD_THREADS), KCD_THREADS, 0, (cudaStream_t)stream>>>(*p, x, w, y, k_inner,
                                                                                                epi ? *epi : none);
    return (int)cudaGetLastError();
}

int kconv_direct_dgrad(const kconv_params *p, void *dx, const void *w, const void *dy, const kconv_epi *epi,
                       void *stream)
{
    kconv_epi none;
    none.n = 0;
    const int64_t total = p->N * p->C * p->in[0] * p->in[1] * p->in[2];
    kconv_direct_dgrad_kernel<<<kgrid(total, KCD_THREADS), KCD_THREADS, 0, (cudaStream_t)stream>>>(*p, dx, w, dy,
                                                                                                  epi ? *epi : none);
    return (int)cudaGetLastError();
}

int kconv_direct_wgrad(const kconv_params *p, const void *x, void *dw, const void *dy, void *stream)
{
    const int64_t nw = p->K * (p->C / p->G) * p->win[0] * p->win[1] * p->win[2];
    kconv_direct_wgrad_kernel<<<kgrid(nw, 1), KCD_THREADS, 0, (cudaStream_t)stream>>>(*p, x, dw, dy);
    return (int)cudaGetLastError();
}

} /* extern "C" */
