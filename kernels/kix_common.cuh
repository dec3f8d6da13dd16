/* kix_common.cuh — typed loads and stores through a runtime xdnn_dtype code
 * for the index and cross-entropy kernels (kernels/index.cu, xent.cu,
 * bn_infer_var.cu): floats as double (f64 stays exact), index tensors as
 * int64.  The branch is uniform per launch. */
#ifndef XDNN_KIX_COMMON_CUH
#define XDNN_KIX_COMMON_CUH

#include "xdnn.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdint.h>

static __device__ __forceinline__ double kix_ld(const void *p, int dt, int64_t i)
{
    switch (dt) {
    case XDNN_F32: return static_cast<const float *>(p)[i];
    case XDNN_F16: return __half2float(static_cast<const __half *>(p)[i]);
    case XDNN_BF16: return __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[i]);
    case XDNN_F64: return static_cast<const double *>(p)[i];
    case XDNN_I8: return static_cast<const int8_t *>(p)[i];
    case XDNN_I32: return static_cast<const int32_t *>(p)[i];
    default: return (double)static_cast<const int64_t *>(p)[i];
    }
}

static __device__ __forceinline__ int64_t kix_ldi(const void *p, int dt, int64_t i)
{
    if (dt == XDNN_I8)
        return static_cast<const int8_t *>(p)[i];
    if (dt == XDNN_I32)
        return static_cast<const int32_t *>(p)[i];
    return static_cast<const int64_t *>(p)[i];
}

/* Store v (rounded once to dt; integer dtypes take a whole v). */
static __device__ __forceinline__ void kix_st(void *p, int dt, int64_t i, double v)
{
    switch (dt) {
    case XDNN_F32: static_cast<float *>(p)[i] = (float)v; break;
    case XDNN_F16: static_cast<__half *>(p)[i] = __double2half(v); break;
    case XDNN_BF16: static_cast<__nv_bfloat16 *>(p)[i] = __double2bfloat16(v); break;
    case XDNN_F64: static_cast<double *>(p)[i] = v; break;
    case XDNN_I8: static_cast<int8_t *>(p)[i] = (int8_t)v; break;
    case XDNN_I32: static_cast<int32_t *>(p)[i] = (int32_t)v; break;
    default: static_cast<int64_t *>(p)[i] = (int64_t)v; break;
    }
}

static __device__ __forceinline__ bool kix_is_int(int dt) { return dt == XDNN_I8 || dt == XDNN_I32 || dt == XDNN_I64; }

/* Grid for `total` items with `per_block` items per block, grid-stride beyond. */
static inline unsigned kix_grid(int64_t total, int64_t per_block)
{
    int64_t b = (total + per_block - 1) / per_block;
    return (unsigned)(b < 1 ? 1 : b > 65535 * 16 ? 65535 * 16 : b);
}

#endif
