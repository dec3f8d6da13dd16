// philox.cu — dropout and rng on the GPU with the Philox-4x32-10 stream of
// src/data/philox.c (recipe in its header comment; see src/gpu/kern_rng.h).
// Uniform values are bit-identical to the CPU; normal values use CUDA's
// double log/cos/sqrt (within an ulp or two of glibc's double, which
// vanishes on rounding to f32 and narrower except at rounding boundaries).
#include "gpu/kern_rng.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace {

enum { DT_F32 = 0, DT_F16 = 1, DT_BF16 = 2, DT_I8 = 5, DT_I32 = 6, DT_BOOL = 7, DT_F64 = 9 };

__device__ __forceinline__ void philox(uint32_t c[4], uint32_t k0, uint32_t k1)
{
    const uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u, W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
#pragma unroll
    for (int round = 0; round < 10; round++) {
        if (round > 0) {
            k0 += W0;
            k1 += W1;
        }
        uint32_t hi0 = __umulhi(M0, c[0]), lo0 = M0 * c[0];
        uint32_t hi1 = __umulhi(M1, c[2]), lo1 = M1 * c[2];
        uint32_t n0 = hi1 ^ c[1] ^ k0, n2 = hi0 ^ c[3] ^ k1;
        c[0] = n0;
        c[1] = lo1;
        c[2] = n2;
        c[3] = lo0;
    }
}

__device__ __forceinline__ double load_d(const void *p, int64_t i, int dt)
{
    switch (dt) {
    case DT_F16: return (double)__half2float(static_cast<const __half *>(p)[i]);
    case DT_BF16: return (double)__bfloat162float(static_cast<const __nv_bfloat16 *>(p)[i]);
    case DT_F64: return static_cast<const double *>(p)[i];
    default: return (double)static_cast<const float *>(p)[i];
    }
}

__device__ __forceinline__ void store_d(void *p, int64_t i, int dt, double v)
{
    switch (dt) {
    case DT_F16: static_cast<__half *>(p)[i] = __double2half(v); break;
    case DT_BF16: static_cast<__nv_bfloat16 *>(p)[i] = __double2bfloat16(v); break;
    case DT_F64: static_cast<double *>(p)[i] = v; break;
    case DT_BOOL:
    case DT_I8: static_cast<signed char *>(p)[i] = (signed char)(v != 0.0); break;
    case DT_I32: static_cast<int *>(p)[i] = (int)(v != 0.0); break;
    default: static_cast<float *>(p)[i] = __double2float_rn(v); break;
    }
}

template <typename IT>
__global__ void k_rng(const rg_job j)
{
    const double two_m24 = 1.0 / 16777216.0;
    uint32_t k0 = (uint32_t)j.key, k1 = (uint32_t)(j.key >> 32);
    for (IT i = (IT)blockIdx.x * blockDim.x + threadIdx.x; i < (IT)j.numel; i += (IT)gridDim.x * blockDim.x) {
        int64_t xo = 0, yo = 0, mo = 0;
        IT f = i;
        for (int d = j.n - 1; d >= 0; d--) {
            IT s = (IT)j.size[d], q = f / s;
            int64_t r = (int64_t)(f - q * s);
            f = q;
            xo += r * j.xst[d];
            yo += r * j.yst[d];
            mo += r * j.mst[d];
        }
        uint64_t idx = (uint64_t)i;
        uint32_t c[4] = {(uint32_t)idx, (uint32_t)(idx >> 32), (uint32_t)j.stream, (uint32_t)(j.stream >> 32)};
        philox(c, k0, k1);
        if (j.kind == RGK_DROPOUT) {
            double u = (double)(c[0] >> 8) * two_m24;
            bool keep = u >= j.p;
            double x = load_d(j.x, xo, j.xdt);
            store_d(j.y, yo, j.ydt, keep ? __dmul_rn(x, j.keep_scale) : 0.0);
            if (j.mask)
                store_d(j.mask, mo, j.mdt, keep ? 1.0 : 0.0);
        } else if (j.kind == RGK_UNIFORM) {
            double u = (double)(c[0] >> 8) * two_m24;
            store_d(j.y, yo, j.ydt, __dadd_rn(j.a, __dmul_rn(j.b, u)));
        } else {
            double u1 = (double)((c[0] >> 8) + 1u) * two_m24, u2 = (double)(c[1] >> 8) * two_m24;
            double r = __dmul_rn(sqrt(__dmul_rn(-2.0, log(u1))), cos(__dmul_rn(__dmul_rn(2.0, 3.141592653589793), u2)));
            store_d(j.y, yo, j.ydt, __dadd_rn(j.a, __dmul_rn(j.b, r)));
        }
    }
}

} // namespace

extern "C" int rg_launch(const rg_job *j, void *stream)
{
    if (j->numel <= 0)
        return 0;
    int64_t b = (j->numel + 255) / 256, cap = 132 * 16;
    int blocks = (int)(b < 1 ? 1 : b > cap ? cap : b);
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (j->numel > 0x7fffffffLL)
        k_rng<uint64_t><<<blocks, 256, 0, s>>>(*j);
    else
        k_rng<uint32_t><<<blocks, 256, 0, s>>>(*j);
    return (int)cudaGetLastError();
}
