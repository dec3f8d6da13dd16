/* conv_mma.cuh — the sm_80 tensor-core building blocks shared by the
 * implicit-GEMM convolution kernels (conv_igemm.cu, conv_wgrad_mma.cu):
 * 16-byte cp.async with zero fill, ldmatrix (plain and transposed) and
 * mma.sync m16n8k16 (f16 / bf16 in, f32 accumulate). */
#ifndef XDNN_CONV_MMA_CUH
#define XDNN_CONV_MMA_CUH

#include "kern_common.cuh"

namespace kmma {

__device__ __forceinline__ unsigned smem_addr(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

/* 16 bytes global -> shared; valid false writes 16 zero bytes (src unread). */
__device__ __forceinline__ void cp_async16(void *dst, const void *src, bool valid)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
                 "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__device__ __forceinline__ void ldmatrix_x4(unsigned *r, const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}

/* Transposed: lane l receives (rows 2(l%4), 2(l%4)+1; column l/4) of each
 * 8x8 matrix whose 8 row addresses lanes 8i..8i+7 give. */
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned *r, const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}

template <typename T> __device__ __forceinline__ void mma16816(float *c, const unsigned *a, const unsigned *b);
template <> __device__ __forceinline__ void mma16816<__half>(float *c, const unsigned *a, const unsigned *b)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
template <> __device__ __forceinline__ void mma16816<__nv_bfloat16>(float *c, const unsigned *a, const unsigned *b)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* One x4 load of B fragments covers two n8 tiles: r4 -> bf[2nj], bf[2nj+1]. */
__device__ __forceinline__ void b_pair(unsigned (*bf)[2], int nj, const unsigned *r4)
{
    bf[2 * nj][0] = r4[0];
    bf[2 * nj][1] = r4[1];
    bf[2 * nj + 1][0] = r4[2];
    bf[2 * nj + 1][1] = r4[3];
}

/* The warp tile's MMAs for one k16 step: MI x 4 tiles of 16 x 8. */
template <typename T, int MI>
__device__ __forceinline__ void mma_warp_tile(float (*acc)[4][4], const unsigned (*af)[4], const unsigned (*bf)[2])
{
#pragma unroll
    for (int mi = 0; mi < MI; mi++)
#pragma unroll
        for (int ni = 0; ni < 4; ni++)
            mma16816<T>(acc[mi][ni], af[mi], bf[ni]);
}

} /* namespace kmma */

#endif
