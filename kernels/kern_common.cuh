/* kern_common.cuh — device helpers shared by the conv and pooling kernels:
 * typed loads/stores through a runtime KDT_* code (the direct kernels handle
 * every dtype mix with one instantiation; the branch is uniform per launch)
 * and the 5-slot index split of kern_conv.h. */
#ifndef XDNN_KERN_COMMON_CUH
#define XDNN_KERN_COMMON_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "gpu/kern_conv.h"

static __device__ __forceinline__ float kld(const void *p, int dt, int64_t i)
{
    if (dt == KDT_F32)
        return static_cast<const float *>(p)[i];
    if (dt == KDT_F16)
        return __half2float(static_cast<const __half *>(p)[i]);
    return __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[i]);
}

static __device__ __forceinline__ void kst(void *p, int dt, int64_t i, float v)
{
    if (dt == KDT_F32)
        static_cast<float *>(p)[i] = v;
    else if (dt == KDT_F16)
        static_cast<__half *>(p)[i] = __float2half_rn(v);
    else
        static_cast<__nv_bfloat16 *>(p)[i] = __float2bfloat16_rn(v);
}

/* Grid-stride loop bound for `total` work items with 256-thread blocks. */
static inline unsigned kgrid(int64_t total, int64_t per_block)
{
    int64_t b = (total + per_block - 1) / per_block;
    if (b < 1)
        b = 1;
    return (unsigned)(b > 65535 * 32 ? 65535 * 32 : b);
}

#endif
