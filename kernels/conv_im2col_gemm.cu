/* conv_im2col_gemm.cu — the operands of conv_im2col_gemm (layouts in
 * src/gpu/kern_conv_im2col.h; the GEMMs are cuBLASLt's).
 *
 * kim_im2col: one thread per 8 consecutive columns of a row of A (one
 * 16-byte store).  The 8 columns lie in one filter row r (ldr is a multiple
 * of 8), so one bounds test on the input row ih decides the whole piece.
 * For a channels-last x (channel stride 1, pixel stride C) with unit
 * dilation along W, column j of row r is the element at offset
 * (ow * sw - pw) * C + j of input row ih: consecutive threads read
 * consecutive elements (a warp covers 256 contiguous columns, the 7 runs of
 * 21 values of neighbouring pixels overlapping in L1), and a tap is outside
 * x exactly when that offset leaves [0, W * C).  Other layouts or a W
 * dilation gather each element through its strides (s = j / C, c = j % C).
 *
 * kim_pack_w / kim_unpack_dw: one thread per element of the small weight
 * matrices (K * Kc), any strides. */
#include "gpu/kern_conv_im2col.h"
#include "kern_common.cuh"

namespace {

template <bool FAST>
__global__ void kim_im2col_kernel(const kim_geom g, int64_t m0, uint32_t pieces, const uint16_t *__restrict__ x,
                                  uint16_t *__restrict__ a)
{
    const uint32_t per_row = (uint32_t)g.ldr / 8, per_m = (uint32_t)g.Kc / 8;
    const int64_t sc = g.S * g.C, wc = g.W * g.C;
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
                if (FAST) {
                    const int64_t pos = iw0 * g.C + j;
                    if (j < sc && pos >= 0 && pos < wc)
                        u.e[e] = row[pos];
                } else if (j < sc) {
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
    const uint32_t pieces = (uint32_t)(rows * (g->Kc / 8));
    const bool fast = g->sxc == 1 && g->sxw == g->C && g->dw == 1;
    const unsigned grid = kgrid(pieces, 256);
    cudaStream_t s = (cudaStream_t)stream;
    const uint16_t *xs = static_cast<const uint16_t *>(x);
    uint16_t *as = static_cast<uint16_t *>(a);
    if (fast)
        kim_im2col_kernel<true><<<grid, 256, 0, s>>>(*g, m0, pieces, xs, as);
    else
        kim_im2col_kernel<false><<<grid, 256, 0, s>>>(*g, m0, pieces, xs, as);
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
