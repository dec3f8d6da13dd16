/* conv_pack.cu — a tensor of the 5-slot view copied channels-last and
 * contiguous with its channel count padded: how conv_igemm reads a forward
 * conv whose x or w it cannot take as is (C = 3 stems, odd C, NCHW).  One
 * thread per destination element, channel fastest (coalesced stores); the
 * padding channels are written as zeros, so they add nothing to the sums. */
#include "kern_common.cuh"

namespace {

__global__ void kpack_kernel(const int64_t d0, const int64_t d2, const int64_t d3, const int64_t d4, const int64_t C,
                             const int64_t Cp, const int64_t s0, const int64_t s1, const int64_t s2, const int64_t s3,
                             const int64_t s4, int dt, const void *__restrict__ src, void *__restrict__ dst)
{
    const int64_t total = d0 * d2 * d3 * d4 * Cp;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t c = i % Cp;
        int64_t r = i / Cp;
        const int64_t x4 = r % d4;
        r /= d4;
        const int64_t x3 = r % d3;
        r /= d3;
        const int64_t x2 = r % d2, x0 = r / d2;
        const float v = c < C ? kld(src, dt, x0 * s0 + c * s1 + x2 * s2 + x3 * s3 + x4 * s4) : 0.f;
        kst(dst, dt, i, v);
    }
}

} /* namespace */

extern "C" int kconv_pack_cl(const int64_t *dims, const int64_t *strides, int dt, const void *src, void *dst,
                             int64_t Cp, void *stream)
{
    const int64_t total = dims[0] * dims[2] * dims[3] * dims[4] * Cp;
    kpack_kernel<<<kgrid(total, 256), 256, 0, (cudaStream_t)stream>>>(dims[0], dims[2], dims[3], dims[4], dims[1], Cp,
                                                                      strides[0], strides[1], strides[2], strides[3],
                                                                      strides[4], dt, src, dst);
    return (int)cudaGetLastError();
}
