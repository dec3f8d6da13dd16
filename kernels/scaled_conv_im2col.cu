/* scaled_conv_im2col.cu — the GEMM operands of scaled_conv's im2col engine
 * (src/gpu/eng_scaled_conv.c; layouts in src/gpu/kern_scaled_conv.h).  i8 and fp8 are
 * moved as raw bytes: nothing here converts a value.
 *
 * k8_im2col: one thread per 16-byte chunk of a row of A (16 consecutive kc),
 * grid-stride.  When C % 16 == 0 and x is channel-contiguous with 16-byte
 * aligned pixels (the NHWC case the engine is for), a chunk is 16 channels
 * of one tap: one uint4 load (or zeros for a padding tap), one uint4 store;
 * neighbouring threads read neighbouring channels, so loads coalesce within
 * a tap.  Otherwise (C = 3 stems, odd C, NCHW x) each byte is gathered by
 * its own strides and the chunk stored at once.  The host keeps A below
 * 2^31 bytes and x's span below 2^31, so indices are 32-bit.
 *
 * k8_pack_w: one thread per byte of B (weights are small; any layout of w,
 * zero padding to Kp rows and ldk columns). */
#include "gpu/kern_scaled_conv.h"
#include "kern_common.cuh"

namespace {

/* kc = ((z * R + r) * S + s) * C + c into its tap (z, r, s) and channel c. */
struct k8_tap {
    uint32_t z, r, s, c;
};

__device__ __forceinline__ k8_tap k8_split_kc(const k8_geom &g, uint32_t kc)
{
    k8_tap t;
    const uint32_t C = (uint32_t)g.C, R = (uint32_t)g.win[1], S = (uint32_t)g.win[2];
    t.c = kc % C;
    uint32_t tap = kc / C;
    t.s = tap % S;
    tap /= S;
    t.r = tap % R;
    t.z = tap / R;
    return t;
}

/* The offset in x of the tap's pixel for output row m at channel 0, or -1
 * when it falls in the padding. */
__device__ __forceinline__ int64_t k8_x_offset(const k8_geom &g, uint32_t m, const k8_tap &t)
{
    const uint32_t O2 = (uint32_t)g.out[2], O1 = (uint32_t)g.out[1], O0 = (uint32_t)g.out[0];
    const uint32_t ow = m % O2, oh = m / O2 % O1, od = m / O2 / O1 % O0, n = m / O2 / O1 / O0;
    const int64_t id = (int64_t)od * g.stride[0] - g.pad[0] + (int64_t)t.z * g.dil[0];
    const int64_t ih = (int64_t)oh * g.stride[1] - g.pad[1] + (int64_t)t.r * g.dil[1];
    const int64_t iw = (int64_t)ow * g.stride[2] - g.pad[2] + (int64_t)t.s * g.dil[2];
    if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1] || iw < 0 || iw >= g.in[2])
        return -1;
    return (int64_t)n * g.sx[0] + id * g.sx[2] + ih * g.sx[3] + iw * g.sx[4];
}

template <bool VEC>
__global__ void k8_im2col_kernel(const k8_geom g, uint32_t M, uint32_t Mp, uint32_t Kc, uint32_t ldk,
                                 const unsigned char *__restrict__ x, unsigned char *__restrict__ a)
{
    const uint32_t per_row = ldk / 16, total = Mp * per_row;
    for (uint32_t ch = blockIdx.x * blockDim.x + threadIdx.x; ch < total; ch += gridDim.x * blockDim.x) {
        const uint32_t m = ch / per_row, kc0 = (ch - m * per_row) * 16;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (m < M && kc0 < Kc) {
            if (VEC) { /* C % 16 == 0: the chunk is 16 channels of one tap */
                const k8_tap t = k8_split_kc(g, kc0);
                const int64_t o = k8_x_offset(g, m, t);
                if (o >= 0)
                    v = *reinterpret_cast<const uint4 *>(x + o + t.c);
            } else {
                union {
                    uint4 v;
                    unsigned char b[16];
                } u;
                u.v = v;
                for (uint32_t j = 0; j < 16; j++) {
                    if (kc0 + j < Kc) {
                        const k8_tap t = k8_split_kc(g, kc0 + j);
                        const int64_t o = k8_x_offset(g, m, t);
                        if (o >= 0)
                            u.b[j] = x[o + (int64_t)t.c * g.sx[1]];
                    }
                }
                v = u.v;
            }
        }
        *reinterpret_cast<uint4 *>(a + (size_t)m * ldk + kc0) = v;
    }
}

__global__ void k8_pack_w_kernel(const k8_geom g, uint32_t Kp, uint32_t Kc, uint32_t ldk,
                                 const unsigned char *__restrict__ w, unsigned char *__restrict__ b)
{
    const uint32_t total = Kp * ldk;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
        const uint32_t k = i / ldk, kc = i - k * ldk;
        unsigned char v = 0;
        if (k < (uint32_t)g.K && kc < Kc) {
            const k8_tap t = k8_split_kc(g, kc);
            v = w[(int64_t)k * g.sw[0] + (int64_t)t.c * g.sw[1] + (int64_t)t.z * g.sw[2] + (int64_t)t.r * g.sw[3] +
                  (int64_t)t.s * g.sw[4]];
        }
        b[i] = v;
    }
}

} /* namespace */

extern "C" int k8_im2col_launch(const k8_geom *g, int64_t Mp, int64_t ldk, const void *x, void *a, void *stream)
{
    const int64_t M = g->N * g->out[0] * g->out[1] * g->out[2], Kc = g->C * g->win[0] * g->win[1] * g->win[2];
    const int64_t total = Mp * (ldk / 16);
    const bool vec = g->C % 16 == 0 && g->sx[1] == 1 && (uintptr_t)x % 16 == 0 && g->sx[0] % 16 == 0 &&
                     g->sx[2] % 16 == 0 && g->sx[3] % 16 == 0 && g->sx[4] % 16 == 0;
    const unsigned grid = kgrid(total, 256);
    cudaStream_t s = (cudaStream_t)stream;
    const unsigned char *xb = static_cast<const unsigned char *>(x);
    unsigned char *ab = static_cast<unsigned char *>(a);
    if (vec)
        k8_im2col_kernel<true><<<grid, 256, 0, s>>>(*g, (uint32_t)M, (uint32_t)Mp, (uint32_t)Kc, (uint32_t)ldk, xb, ab);
    else
        k8_im2col_kernel<false><<<grid, 256, 0, s>>>(*g, (uint32_t)M, (uint32_t)Mp, (uint32_t)Kc, (uint32_t)ldk, xb, ab);
    return (int)cudaGetLastError();
}

extern "C" int k8_pack_w_launch(const k8_geom *g, int64_t Kp, int64_t ldk, const void *w, void *b, void *stream)
{
    const int64_t Kc = g->C * g->win[0] * g->win[1] * g->win[2];
    k8_pack_w_kernel<<<kgrid(Kp * ldk, 256), 256, 0, (cudaStream_t)stream>>>(
        *g, (uint32_t)Kp, (uint32_t)Kc, (uint32_t)ldk, static_cast<const unsigned char *>(w),
        static_cast<unsigned char *>(b));
    return (int)cudaGetLastError();
}
