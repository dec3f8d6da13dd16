/* conv_im2col_gemm.cu — the operands of conv_im2col_gemm (layouts in
 * src/gpu/kern_conv_im2col.h; the GEMMs are cuBLASLt's).
 *
 * kim_im2col, the fast kernel (kim_rows_kernel): x channels-last (channel
 * stride 1, pixel stride C), unit dilation along W, and a chunk of whole
 * output rows (n, oh).  Then column j of filter row r of pixel ow is the
 * element at offset (ow * sw - pw) * C + j of input row ih = oh * sh - ph +
 * r * dh: one block per output row stages its R input rows (the span the
 * row's pixels reach, zeros outside x) in shared memory with coalesced
 * loads, and writes the row's OW * Kc values of A, which are contiguous, in
 * 16-byte stores.  The session-7 first version (one thread per 16 bytes of
 * A, 64-bit index divisions, loads from global) ran the stem's im2col at
 * about a third of the copy bandwidth.
 *
 * kim_pixels_kernel, a 1x1 window on a channels-last x with C % 8 == 0
 * (the strided 1x1 weight gradients, Kc = C): row m of A is the C channels
 * of the one input pixel output pixel m reads, contiguous in x, so A is a
 * subsampling copy in 16-byte pieces, one per thread (32-bit index math),
 * reading only the pixels the stride keeps.
 *
 * kim_gather_kernel, every other case (NCHW x, a W dilation, rows staged
 * past the shared memory): one thread per 8 consecutive columns of a row of
 * A, each element through x's strides (s = j / C, c = j % C).
 *
 * kim_pack_w / kim_unpack_dw: one thread per element of the small weight
 * matrices (K * Kc), any strides. */
#include "gpu/kern_conv_im2col.h"
#include "kern_common.cuh"

namespace {

__device__ __forceinline__ uint16_t kim_zero_or(bool in, const uint16_t *p) { return in ? *p : (uint16_t)0; }

/* Staged row span: pixel ow's filter row starts at element ow * sw * C of
 * its staged row, which covers offsets -pw * C .. (OW - 1) * sw * C - pw * C + ldr. */
__global__ void kim_rows_kernel(const kim_geom g, int64_t m0, uint32_t nrows, const uint16_t *__restrict__ x,
                                uint16_t *__restrict__ a, uint32_t span)
{
    extern __shared__ uint16_t sm[];
    const uint32_t R = (uint32_t)g.R, OW = (uint32_t)g.OW, OH = (uint32_t)g.OH;
    const uint32_t ldr = (uint32_t)g.ldr, sc = (uint32_t)(g.S * g.C), step = (uint32_t)(g.sw * g.C);
    const uint32_t per_px = (uint32_t)g.Kc / 8, per_r = ldr / 8, wc = (uint32_t)(g.W * g.C);
    const int32_t lo = -(int32_t)(g.pw * g.C);
    for (uint32_t row = blockIdx.x; row < nrows; row += gridDim.x) {
        const uint32_t orow = (uint32_t)(m0 / OW) + row; /* (n, oh) */
        const uint32_t oh = orow % OH, n = orow / OH;
        __syncthreads(); /* the previous row's reads are done */
        for (uint32_t i = threadIdx.x; i < R * span; i += blockDim.x) {
            const uint32_t r = i / span;
            const int32_t pos = (int32_t)(i - r * span) + lo;
            const int64_t ih = (int64_t)oh * g.sh - g.ph + (int64_t)r * g.dh;
            const bool in = ih >= 0 && ih < g.H && pos >= 0 && (uint32_t)pos < wc;
            sm[i] = kim_zero_or(in, x + (in ? (int64_t)n * g.sxn + ih * g.sxh + pos : 0));
        }
        __syncthreads();
        uint4 *dst = reinterpret_cast<uint4 *>(a) + (size_t)row * OW * per_px;
        for (uint32_t i = threadIdx.x; i < OW * per_px; i += blockDim.x) {
            const uint32_t ow = i / per_px, q = i - ow * per_px, r = q / per_r, j0 = (q - r * per_r) * 8;
            const uint16_t *src = sm + r * span + ow * step + j0;
            union {
                uint4 v;
                uint16_t e[8];
            } u;
#pragma unroll
            for (uint32_t e = 0; e < 8; e++)
                u.e[e] = j0 + e < sc ? src[e] : (uint16_t)0;
            dst[i] = u.v;
        }
    }
}

/* pieces = rows * C / 8; x's strides multiples of 8 and x 16-byte aligned
 * (checked by the launcher), m0 + rows <= 2^31. */
__global__ void kim_pixels_kernel(const kim_geom g, uint32_t m0, uint32_t pieces, const uint4 *__restrict__ x,
                                  uint4 *__restrict__ a)
{
    const uint32_t per_m = (uint32_t)g.C / 8, OW = (uint32_t)g.OW, OH = (uint32_t)g.OH;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < pieces; i += gridDim.x * blockDim.x) {
        const uint32_t ml = i / per_m, q = i - ml * per_m, m = m0 + ml;
        const uint32_t ow = m % OW, t = m / OW, oh = t % OH, n = t / OH;
        const int64_t ih = (int64_t)oh * g.sh - g.ph, iw = (int64_t)ow * g.sw - g.pw;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (ih >= 0 && ih < g.H && iw >= 0 && iw < g.W)
            v = x[((int64_t)n * g.sxn + ih * g.sxh + iw * g.sxw) / 8 + q];
        a[i] = v;
    }
}

__global__ void kim_gather_kernel(const kim_geom g, int64_t m0, uint32_t pieces, const uint16_t *__restrict__ x,
                                  uint16_t *__restrict__ a)
{
    const uint32_t per_row = (uint32_t)g.ldr / 8, per_m = (uint32_t)g.Kc / 8;
    const int64_t sc = g.S * g.C;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < pieces; i += gridDim.x * blockDim.x) {
        const uint32_t ml = i / per_m, q = i - ml * per_m;
        const uint32_t r = q / per_row, j0 = (q - r * per_row) * 8;
        const int64_t m = m0 + ml;
        const int64_t ow = m % g.OW, oh = m / g.OW % g.OH, n = m / g.OW / g.OH;
        const int64_t ih = oh * g.sh - g.ph + (int64_t)r * g.dh;
        union {
            uint4 v;
            uint16_t e[8];
        } u;
        u.v = make_uint4(0, 0, 0, 0);
        if (ih >= 0 && ih < g.H) {
            const uint16_t *row = x + n * g.sxn + ih * g.sxh;
            const int64_t iw0 = ow * g.sw - g.pw;
#pragma unroll
            for (int e = 0; e < 8; e++) {
                const int64_t j = j0 + e;
                if (j < sc) {
                    const int64_t s = j / g.C, c = j - s * g.C, iw = iw0 + s * g.dw;
                    if (iw >= 0 && iw < g.W)
                        u.e[e] = row[iw * g.sxw + c * g.sxc];
                }
            }
        }
        reinterpret_cast<uint4 *>(a)[i] = u.v;
    }
}

/* Wr's column kc = r * ldr + j of filter k as w's offset, or -1 for a padding column. */
__device__ __forceinline__ int64_t kim_w_offset(const kim_geom &g, int64_t k, int64_t kc)
{
    const int64_t r = kc / g.ldr, j = kc - r * g.ldr;
    if (j >= g.S * g.C)
        return -1;
    const int64_t s = j / g.C, c = j - s * g.C;
    return k * g.swk + c * g.swc + r * g.swr + s * g.sws;
}

__global__ void kim_pack_w_kernel(const kim_geom g, const uint16_t *__restrict__ w, uint16_t *__restrict__ wr)
{
    const int64_t total = g.K * g.Kc;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t k = i / g.Kc, o = kim_w_offset(g, k, i - k * g.Kc);
        wr[i] = o >= 0 ? w[o] : (uint16_t)0;
    }
}

/* The partials summed in slot order (deterministic). */
__global__ void kim_unpack_dw_kernel(const kim_geom g, const float *__restrict__ p, int parts, void *dw, int dt)
{
    const int64_t total = g.K * g.Kc, slot = g.K * g.Kc;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t k = i / g.Kc, o = kim_w_offset(g, k, i - k * g.Kc);
        if (o < 0)
            continue;
        float v = 0.0f;
        for (int b = 0; b < parts; b++)
            v += p[b * slot + i];
        kst(dw, dt, o, v);
    }
}

} /* namespace */

extern "C" int kim_im2col_launch(const kim_geom *g, int64_t m0, int64_t rows, const void *x, void *a, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    const uint16_t *xs = static_cast<const uint16_t *>(x);
    uint16_t *as = static_cast<uint16_t *>(a);
    const int64_t span = (g->OW - 1) * g->sw * g->C + g->ldr, smem = g->R * span * 2;
    if (g->R == 1 && g->S == 1 && g->C % 8 == 0 && g->sxc == 1 && (g->sxn | g->sxh | g->sxw) % 8 == 0 &&
        (uintptr_t)x % 16 == 0 && m0 + rows <= 0x7fffffff) {
        const uint32_t pieces = (uint32_t)(rows * (g->C / 8));
        kim_pixels_kernel<<<kgrid(pieces, 256), 256, 0, s>>>(*g, (uint32_t)m0, pieces, static_cast<const uint4 *>(x),
                                                            static_cast<uint4 *>(a));
    } else if (g->sxc == 1 && g->sxw == g->C && g->dw == 1 && m0 % g->OW == 0 && rows % g->OW == 0 && smem <= 48 * 1024 &&
        (m0 + rows) / g->OW <= 0x7fffffff) {
        const int64_t nrows = rows / g->OW;
        kim_rows_kernel<<<(unsigned)(nrows < 65535 * 8 ? nrows : 65535 * 8), 256, (size_t)smem, s>>>(
            *g, m0, (uint32_t)nrows, xs, as, (uint32_t)span);
    } else {
        const uint32_t pieces = (uint32_t)(rows * (g->Kc / 8));
        kim_gather_kernel<<<kgrid(pieces, 256), 256, 0, s>>>(*g, m0, pieces, xs, as);
    }
    return (int)cudaGetLastError();
}

extern "C" int kim_pack_w_launch(const kim_geom *g, const void *w, void *wr, void *stream)
{
    kim_pack_w_kernel<<<kgrid(g->K * g->Kc, 256), 256, 0, (cudaStream_t)stream>>>(
        *g, static_cast<const uint16_t *>(w), static_cast<uint16_t *>(wr));
    return (int)cudaGetLastError();
}

extern "C" int kim_unpack_dw_launch(const kim_geom *g, const float *partials, int parts, void *dw, int dt, void *stream)
{
    kim_unpack_dw_kernel<<<kgrid(g->K * g->Kc, 256), 256, 0, (cudaStream_t)stream>>>(*g, partials, parts, dw, dt);
    return (int)cudaGetLastError();
}
