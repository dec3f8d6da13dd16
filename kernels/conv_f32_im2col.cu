/* conv_f32_im2col.cu — the operands of conv_f32_gemm (layouts in
 * src/gpu/kern_conv_f32.h; the GEMMs are cuBLASLt's f32 / tf32 ones).
 *
 * kf32_im2col_kernel: a block of 256 threads takes 256 consecutive columns
 * m of the column matrix (their (n, od, oh, ow) decoded once) and a range
 * of consecutive rows j: per row the tap (c, t, r, s) is uniform across the
 * block and stepped by one, so each row costs a bounds test, one load and
 * one coalesced store per thread.  In an NCHW x consecutive ow read
 * consecutive (stride 1) or strided elements of one input row.
 *
 * kf32_col2im_kernel: one thread per dx element (iw fastest), summing the
 * columns of its taps in (t, r, s) order: an input position i is read by
 * output o at tap r when i + pad - r * dil = o * stride, 0 <= o < out.
 *
 * kf32_epi_kernel: one thread per output element (the innermost dim
 * fastest): the fused epilogue (conv_epi.cuh) where cuBLASLt's own cannot
 * take it, in place on y or from the flat form's buffer, stored in y's type.
 *
 * kf32_copy5_kernel: one thread per element of the small weight tensors. */
#include "gpu/kern_conv_f32.h"
#include "conv_epi.cuh"
#include "kern_common.cuh"

namespace {

/* Block (x, y) writes columns 256 x .. of rows y * per .. (y + 1) * per - 1,
 * stepping the tap (s, r, t, c) of the row by one instead of dividing. */
__global__ void kf32_im2col_kernel(const kf32_geom g, int64_t n0, uint32_t ncols, uint32_t ld, uint32_t crs,
                                   uint32_t per, const float *__restrict__ x, float *__restrict__ cols)
{
    const uint32_t m = blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t j0 = blockIdx.y * per, j1 = min(j0 + per, crs);
    if (m >= ncols || j0 >= j1)
        return;
    const uint32_t OD = (uint32_t)g.out[0], OH = (uint32_t)g.out[1], OW = (uint32_t)g.out[2];
    const uint32_t pq = OD * OH * OW, nl = m / pq, rem = m - nl * pq;
    const uint32_t od = rem / (OH * OW), r2 = rem - od * OH * OW, oh = r2 / OW, ow = r2 - oh * OW;
    const int64_t i0 = (int64_t)od * g.stride[0] - g.pad[0], i1 = (int64_t)oh * g.stride[1] - g.pad[1],
                  i2 = (int64_t)ow * g.stride[2] - g.pad[2];
    const float *xn = x + (n0 + nl) * g.sx[0];
    const uint32_t T = (uint32_t)g.win[0], R = (uint32_t)g.win[1], S = (uint32_t)g.win[2];
    uint32_t s = j0 % S, q = j0 / S, r = q % R, q2 = q / R, t = q2 % T, c = q2 / T;
    for (uint32_t j = j0; j < j1; j++) {
        const int64_t d = i0 + (int64_t)t * g.dil[0], h = i1 + (int64_t)r * g.dil[1], w = i2 + (int64_t)s * g.dil[2];
        const bool in = d >= 0 && d < g.in[0] && h >= 0 && h < g.in[1] && w >= 0 && w < g.in[2];
        cols[(size_t)j * ld + m] = in ? xn[c * g.sx[1] + d * g.sx[2] + h * g.sx[3] + w * g.sx[4]] : 0.0f;
        if (++s == S) {
            s = 0;
            if (++r == R) {
                r = 0;
                if (++t == T) {
                    t = 0;
                    c++;
                }
            }
        }
    }
}

/* The output index o with i + pad - k * dil = o * stride (per dim), or -1.
 * 32-bit: a 64-bit division is a ~100-instruction sequence, and a dx
 * element asks this once per tap row and column (every size here is below
 * 2^31: the engine's chunks are). */
__device__ __forceinline__ int kf32_src(int i, int k, int pad, int dil, int stride, int out)
{
    const int v = i + pad - k * dil;
    if (v < 0)
        return -1;
    const int o = stride == 1 ? v : v / stride;
    return o * stride == v && o < out ? o : -1;
}

__global__ void kf32_col2im_kernel(const kf32_geom g, int64_t n0, int64_t ld, uint32_t total,
                                   const float *__restrict__ dcols, float *__restrict__ dx, const kconv_epi epi)
{
    const uint32_t e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= total)
        return;
    const uint32_t D = (uint32_t)g.in[0], H = (uint32_t)g.in[1], W = (uint32_t)g.in[2], C = (uint32_t)g.C;
    const uint32_t iw = e % W, q1 = e / W, ih = q1 % H, q2 = q1 / H, id = q2 % D, q3 = q2 / D, c = q3 % C,
                   nl = q3 / C;
    const int OD = (int)g.out[0], OH = (int)g.out[1], OW = (int)g.out[2];
    const int T = (int)g.win[0], R = (int)g.win[1], S = (int)g.win[2];
    const float *col = dcols + (int64_t)nl * OD * OH * OW;
    float v = 0.0f;
    for (int t = 0; t < T; t++) {
        const int od = kf32_src((int)id, t, (int)g.pad[0], (int)g.dil[0], (int)g.stride[0], OD);
        if (od < 0)
            continue;
        for (int r = 0; r < R; r++) {
            const int oh = kf32_src((int)ih, r, (int)g.pad[1], (int)g.dil[1], (int)g.stride[1], OH);
            if (oh < 0)
                continue;
            const int64_t row = (((int64_t)c * T + t) * R + r) * S;
            for (int s = 0; s < S; s++) {
                const int ow = kf32_src((int)iw, s, (int)g.pad[2], (int)g.dil[2], (int)g.stride[2], OW);
                if (ow >= 0)
                    v += col[(row + s) * ld + (od * OH + oh) * OW + ow];
            }
        }
    }
    if (epi.n) /* the dgrad's relu_bwd mask, read at dx's coordinate */
        v = kepi_apply(epi, v, n0 + nl, c, id, ih, iw);
    dx[(n0 + nl) * g.sx[0] + c * g.sx[1] + id * g.sx[2] + ih * g.sx[3] + iw * g.sx[4]] = v;
}

/* dst[n0 + nl, k, o, p, q] (type dt) = the epilogue of src[nl, k, o, p, q]
 * (0 without src: the broadcast C of cuBLASLt's path, the bias summed). */
__global__ void kf32_epi_kernel(uint32_t K, uint32_t D0, uint32_t D1, uint32_t D2, uint32_t total, int64_t n0,
                                const float *src, const int64_t s0, const int64_t s1, const int64_t s2,
                                const int64_t s3, const int64_t s4, void *dst, int dt, const int64_t d0,
                                const int64_t d1, const int64_t d2, const int64_t d3, const int64_t d4,
                                const kconv_epi e)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= total)
        return;
    const uint32_t q = i % D2, r1 = i / D2, p = r1 % D1, r2 = r1 / D1, o = r2 % D0, r3 = r2 / D0, k = r3 % K,
                   nl = r3 / K;
    float v = src ? src[nl * s0 + k * s1 + o * s2 + p * s3 + q * s4] : 0.0f;
    const int64_t n = n0 + nl;
    v = kepi_apply(e, v, n, k, o, p, q);
    kst(dst, dt, n * d0 + k * d1 + o * d2 + p * d3 + q * d4, v);
}

__global__ void kf32_copy5_kernel(int64_t d1, int64_t d2, int64_t d3, int64_t d4, int64_t total, int64_t s0,
                                  int64_t s1, int64_t s2, int64_t s3, int64_t s4, float *t, float *p, int pack)
{
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
        int64_t q = e;
        const int64_t i4 = q % d4;
        q /= d4;
        const int64_t i3 = q % d3;
        q /= d3;
        const int64_t i2 = q % d2;
        q /= d2;
        const int64_t i1 = q % d1, i0 = q / d1;
        const int64_t o = i0 * s0 + i1 * s1 + i2 * s2 + i3 * s3 + i4 * s4;
        if (pack)
            p[e] = t[o];
        else
            t[o] = p[e];
    }
}

} /* namespace */

extern "C" int kf32_im2col_launch(const kf32_geom *g, int64_t n0, int64_t nb, int64_t ld, const float *x,
                                  float *cols, void *stream)
{
    const int64_t ncols = nb * g->out[0] * g->out[1] * g->out[2];
    const int64_t crs = g->C * g->win[0] * g->win[1] * g->win[2];
    /* ~4096 blocks fill the device; rows per block so that y stays within 65535 */
    const int64_t bx = (ncols + 255) / 256;
    int64_t by = (4096 + bx - 1) / bx;
    by = by < crs ? by : crs;
    by = by < 65535 ? by : 65535;
    const int64_t per = (crs + by - 1) / by;
    const dim3 grid((unsigned)bx, (unsigned)((crs + per - 1) / per));
    kf32_im2col_kernel<<<grid, 256, 0, (cudaStream_t)stream>>>(*g, n0, (uint32_t)ncols, (uint32_t)ld, (uint32_t)crs,
                                                                        (uint32_t)per, x, cols);
    return (int)cudaGetLastError();
}

extern "C" int kf32_col2im_launch(const kf32_geom *g, int64_t n0, int64_t nb, int64_t ld, const float *dcols,
                                  float *dx, const kconv_epi *epi, void *stream)
{
    const int64_t total = nb * g->C * g->in[0] * g->in[1] * g->in[2];
    kconv_epi e = {0};
    if (epi)
        e = *epi;
    kf32_col2im_kernel<<<(unsigned)((total + 255) / 256), 256, 0, (cudaStream_t)stream>>>(*g, n0, ld, (uint32_t)total,
                                                                                          dcols, dx, e);
    return (int)cudaGetLastError();
}

extern "C" int kf32_epi_launch(const int64_t *dims, int64_t n0, const float *src, const int64_t *ss, void *dst,
                               int dt, const int64_t *sd, const kconv_epi *epi, void *stream)
{
    const int64_t total = dims[0] * dims[1] * dims[2] * dims[3] * dims[4];
    if (total == 0)
        return 0;
    kf32_epi_kernel<<<(unsigned)((total + 255) / 256), 256, 0, (cudaStream_t)stream>>>(
        (uint32_t)dims[1], (uint32_t)dims[2], (uint32_t)dims[3], (uint32_t)dims[4], (uint32_t)total, n0, src, ss[0],
        ss[1], ss[2], ss[3], ss[4], dst, dt, sd[0], sd[1], sd[2], sd[3], sd[4], *epi);
    return (int)cudaGetLastError();
}

extern "C" int kf32_copy5_launch(const int64_t *dims, const int64_t *strides, float *t, float *p, int pack,
                                 void *stream)
{
    const int64_t total = dims[0] * dims[1] * dims[2] * dims[3] * dims[4];
    kf32_copy5_kernel<<<kgrid(total, 256), 256, 0, (cudaStream_t)stream>>>(
        dims[1], dims[2], dims[3], dims[4], total, strides[0], strides[1], strides[2], strides[3], strides[4], t, p,
        pack);
    return (int)cudaGetLastError();
}
