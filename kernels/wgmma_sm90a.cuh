// wgmma_sm90a.cuh — the Hopper building blocks shared by the sm_90a kernels (sdpa_wgmma_sm90a.cu: attention
// forward, sdpa_bwd_wgmma_sm90a.cu: backward, conv_igemm_wgmma_sm90a.cu and conv_wgrad_wgmma_sm90a.cu: the
// convolutions): mbarriers, TMA tile loads, cp.async gathers, wgmma shared-memory descriptors and the wgmma
// shapes they issue, and on the host the tensor maps TMA reads through.
// Everything sits in an anonymous namespace: each kernel file gets its own copy, nothing is exported.
// XW_DEVICE is 1 only in the sm_90a device pass; the other passes see the declarations they need and no asm.
#ifndef XDNN_KERNELS_WGMMA_SM90A_CUH
#define XDNN_KERNELS_WGMMA_SM90A_CUH

#include "sdpa_common.cuh"

#include <cuda.h> // CUtensorMap and cuTensorMapEncodeTiled's types (the function itself is fetched at run time)

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define XW_DEVICE 1 // the sm_90a pass: the real kernel
#else
#define XW_DEVICE 0 // the host pass, or a target without wgmma: an empty body
#endif

namespace {

#if XW_DEVICE
__device__ __forceinline__ uint32_t smem_u32(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void mb_init(uint32_t bar, int count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}
__device__ __forceinline__ void mb_expect(uint32_t bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mb_arrive(uint32_t bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mb_wait(uint32_t bar, int parity)
{
    uint32_t done;
    do {
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
    } while (!done);
}

// One box {64 columns, rows, 1, 1} of a 4-d map at (col, row, head, batch) into shared memory at dst.
__device__ __forceinline__ void tma_load(uint32_t dst, const CUtensorMap *map, uint32_t bar, int col, int row,
                                         int head, int batch)
{
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5, %6}], [%2];\n" ::"r"(dst),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(col), "r"(row), "r"(head), "r"(batch)
                 : "memory");
}

// One im2col box of a 4-d channels-last map (make_im2col_map: {C, W, H, N}) into shared memory at dst: the map's
// pixelsPerColumn pixels x channelsPerPixel channels from channel c on, the first pixel at (w, h) of image n
// shifted by the filter tap (ow, oh) = (s * dw, r * dh), then on along W by the map's element stride, wrapping at
// the bounding box's row end to its next row and at its last row to the next image (the box moves with the tap;
// pixels outside the tensor, images past N included, arrive as zeros and count towards complete_tx).
__device__ __forceinline__ void tma_load_im2col_4d(uint32_t dst, const CUtensorMap *map, uint32_t bar, int c, int w,
                                                   int h, int n, uint16_t ow, uint16_t oh)
{
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5, %6}], [%2], {%7, %8};\n" ::"r"(dst),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c), "r"(w), "r"(h), "r"(n), "h"(ow), "h"(oh)
                 : "memory");
}

// The 5-d form for a 3-D conv's x (make_im2col_map5: {C, W, H, D, N}): the same walk with the depth between H and
// the image, the tap's offsets (ow, oh, od) = (s * dw, r * dh, t * dd), each in [0, 31] (the PTX ISA's 5-d range).
__device__ __forceinline__ void tma_load_im2col_5d(uint32_t dst, const CUtensorMap *map, uint32_t bar, int c, int w,
                                                   int h, int d, int n, uint16_t ow, uint16_t oh, uint16_t od)
{
    asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5, %6, %7}], [%2], {%8, %9, %10};\n" ::"r"(dst),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c), "r"(w), "r"(h), "r"(d), "r"(n), "h"(ow),
                 "h"(oh), "h"(od)
                 : "memory");
}

// 16-byte cp.async, zero-filled (src-size 0) where !valid; its groups; and the fence that makes the copies a
// thread saw complete visible to wgmma (the async proxy).  The conv kernels' producers gather with these.
__device__ __forceinline__ void cpa16(uint32_t dst, const void *src, bool valid)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0)
                 : "memory");
}
__device__ __forceinline__ void cpa_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void cpa_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void fence_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// A wgmma shared-memory descriptor, 128-byte swizzle (the layout TMA's SWIZZLE_128B writes): start address,
// leading and stride byte offsets, all in 16-byte units.
__device__ __forceinline__ uint64_t gdesc(uint32_t addr, uint32_t lbo, uint32_t sbo)
{
    return (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)((lbo >> 4) & 0x3FFF) << 16) |
           ((uint64_t)((sbo >> 4) & 0x3FFF) << 32) | (1ull << 62);
}

// The descriptor of address a + off from a's (gdesc): off >> 4 added to the address field, one add per wgmma
// k-step instead of gdesc's mask-shift-or chain on a + off (a + off < 2^18, as every shared address is: the
// 14-bit field takes no carry into the leading byte offset above it).
__device__ __forceinline__ uint64_t desc_add(uint64_t d, uint32_t off)
{
    return (d & 0xffffffff00000000ull) | (uint32_t)((uint32_t)d + (off >> 4));
}

// The same for a 64-byte swizzled K-major operand (TMA's SWIZZLE_64B: rows of 64 bytes, 16-byte chunk c of row
// r at c ^ (r / 2 % 4)): 8-row groups 512 bytes apart, a k16 step 32 bytes along the row.
__device__ __forceinline__ uint64_t gdesc64(uint32_t addr)
{
    return (uint64_t)((addr & 0x3FFFF) >> 4) | (1ull << 16) | ((uint64_t)(512 >> 4) << 32) | (2ull << 62);
}

__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wg_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Pin registers that an in-flight wgmma reads or writes: the compiler may not move their uses across.
template <int N> __device__ __forceinline__ void keep(float (&r)[N])
{
#pragma unroll
    for (int i = 0; i < N; i++)
        asm volatile("" : "+f"(r[i])::"memory");
}
template <int N> __device__ __forceinline__ void keep(uint32_t (&r)[N][4])
{
#pragma unroll
    for (int i = 0; i < N; i++)
#pragma unroll
        for (int e = 0; e < 4; e++)
            asm volatile("" : "+r"(r[i][e])::"memory");
}

__device__ __forceinline__ float ex2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

#define XW_F8(d, i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
                    "+f"(d[i + 6]), "+f"(d[i + 7])
#define XW_F32(d) XW_F8(d, 0), XW_F8(d, 8), XW_F8(d, 16), XW_F8(d, 24)
#define XW_F64(d) XW_F8(d, 0), XW_F8(d, 8), XW_F8(d, 16), XW_F8(d, 24), XW_F8(d, 32), XW_F8(d, 40), \
                  XW_F8(d, 48), XW_F8(d, 56)

// wg_ss: D (+)= A B^T, both from shared memory, K-major (S = Q K^T); acc = 0 overwrites D.
// wg_ss_tb: the same with B MN-major (tnspB: rows of B along k, as K in dQ = dS K).
// wg_rs: D += A B with A in registers (the m16n8k16 A-fragment layout per warp) and B MN-major (tnspB: V).
// wg_tt: D (+)= A B with both MN-major (tnspA, tnspB: the weight gradient's dY^T X, both reduction-major).
// The last argument only selects the dtype.
// m64n128k16 from shared memory, TR the transpose bits of A and B ("0, 0": K-major; "1, 1": MN-major)
#define XW_SS128(NAME, TN, TY, TR)                                                                       \
    __device__ __forceinline__ void NAME(float (&d)[64], uint64_t da, uint64_t db, int acc, TN)        \
    {                                                                                                   \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                       \
                     "wgmma.mma_async.sync.aligned.m64n128k16.f32." TY "." TY " {"                      \
                     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "           \
                     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
                     "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
                     "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"   \
                     "}, %64, %65, p, 1, 1, " TR ";\n}\n"                                                 \
                     : XW_F64(d)                                                                        \
                     : "l"(da), "l"(db), "r"(acc));                                                     \
    }

#define XW_OPS(TN, TY)                                                                                  \
    __device__ __forceinline__ void wg_ss(float (&d)[32], uint64_t da, uint64_t db, int acc, TN)        \
    {                                                                                                   \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                                       \
                     "wgmma.mma_async.sync.aligned.m64n64k16.f32." TY "." TY " {"                       \
                     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "           \
                     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"   \
                     "}, %32, %33, p, 1, 1, 0, 0;\n}\n"                                                 \
                     : XW_F32(d)                                                                        \
                     : "l"(da), "l"(db), "r"(acc));                                                     \
    }                                                                                                   \
    __device__ __forceinline__ void wg_ss_tb(float (&d)[32], uint64_t da, uint64_t db, int acc, TN)     \
    {                                                                                                   \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                                       \
                     "wgmma.mma_async.sync.aligned.m64n64k16.f32." TY "." TY " {"                       \
                     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "           \
                     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"   \
                     "}, %32, %33, p, 1, 1, 0, 1;\n}\n"                                                 \
                     : XW_F32(d)                                                                        \
                     : "l"(da), "l"(db), "r"(acc));                                                     \
    }                                                                                                   \
    __device__ __forceinline__ void wg_rs(float (&d)[32], const uint32_t (&a)[4], uint64_t db, TN)      \
    {                                                                                                   \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"                                       \
                     "wgmma.mma_async.sync.aligned.m64n64k16.f32." TY "." TY " {"                       \
                     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "           \
                     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"   \
                     "}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"                                   \
                     : XW_F32(d)                                                                        \
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));                    \
    }                                                                                                   \
    XW_SS128(wg_ss, TN, TY, "0, 0")                                                                 \
    __device__ __forceinline__ void wg_rs(float (&d)[64], const uint32_t (&a)[4], uint64_t db, TN)      \
    {                                                                                                   \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"                                       \
                     "wgmma.mma_async.sync.aligned.m64n128k16.f32." TY "." TY " {"                      \
                     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "           \
                     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
                     "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
                     "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"   \
                     "}, {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"                                   \
                     : XW_F64(d)                                                                        \
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));                    \
    }                                                                                                   \
    XW_SS128(wg_tt, TN, TY, "1, 1")
XW_OPS(__nv_bfloat16, "bf16")
XW_OPS(__half, "f16")
// m64n32k16 from shared memory, both K-major (conv_igemm_wgmma's 32-wide tile: the 3-D UNet's K = 32 layers)
#define XW_SS32(TN, TY)                                                                                 \
    __device__ __forceinline__ void wg_ss(float (&d)[16], uint64_t da, uint64_t db, int acc, TN)        \
    {                                                                                                   \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"                                       \
                     "wgmma.mma_async.sync.aligned.m64n32k16.f32." TY "." TY " {"                       \
                     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"             \
                     "}, %16, %17, p, 1, 1, 0, 0;\n}\n"                                                 \
                     : XW_F8(d, 0), XW_F8(d, 8)                                                         \
                     : "l"(da), "l"(db), "r"(acc));                                                     \
    }
XW_SS32(__nv_bfloat16, "bf16")
XW_SS32(__half, "f16")
#undef XW_SS32
#undef XW_OPS
// m64n176k16 from shared memory, both K-major (sdpa_flash_wgmma's wide key tile, kernel v11: S = Q K^T of 176 keys)
#define XW_SS176(TN, TY)                                                                                 \
    __device__ __forceinline__ void wg_ss(float (&d)[88], uint64_t da, uint64_t db, int acc, TN)        \
    {                                                                                                   \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %90, 0;\n"                                       \
                     "wgmma.mma_async.sync.aligned.m64n176k16.f32." TY "." TY " {"                      \
                     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "   \
                     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "   \
                     "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "   \
                     "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "   \
                     "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "   \
                     "%80, %81, %82, %83, %84, %85, %86, %87"   \
                     "}, %88, %89, p, 1, 1, 0, 0;\n}\n"                                                 \
                     : XW_F64(d), XW_F8(d, 64), XW_F8(d, 72), XW_F8(d, 80)                              \
                     : "l"(da), "l"(db), "r"(acc));                                                     \
    }
XW_SS176(__nv_bfloat16, "bf16")
XW_SS176(__half, "f16")
#undef XW_SS176
// m64n192k16 from shared memory, both K-major (sdpa_flash_wgmma's wide key tile at head dim 64: 192 keys)
#define XW_SS192(TN, TY)                                                                                 \
    __device__ __forceinline__ void wg_ss(float (&d)[96], uint64_t da, uint64_t db, int acc, TN)        \
    {                                                                                                   \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n"                                       \
                     "wgmma.mma_async.sync.aligned.m64n192k16.f32." TY "." TY " {"                      \
                     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "           \
                     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
                     "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
                     "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
                     "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
                     "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"   \
                     "}, %96, %97, p, 1, 1, 0, 0;\n}\n"                                                 \
                     : XW_F64(d), XW_F8(d, 64), XW_F8(d, 72), XW_F8(d, 80), XW_F8(d, 88)                \
                     : "l"(da), "l"(db), "r"(acc));                                                     \
    }
XW_SS192(__nv_bfloat16, "bf16")
XW_SS192(__half, "f16")
#undef XW_SS192
#undef XW_SS128
#undef XW_F8
#undef XW_F32
#undef XW_F64

// sdpa.h's mask rule as inclusive ranges, computed once per row (or key) so that the per-element mask is two
// 32-bit compares and a select: no branch (ptxas serializes the wgmmas of a kernel where a thread-dependent
// branch runs while one is in flight, C7518/C7520) and no 64-bit math in the softmax.  off: the diagonal of
// row i is key i + off in this batch; lq, lkv its lengths.  An empty range is [0, -1].
// Keys [*lo, *hi] that row i sees.
__device__ __forceinline__ void band_keys(const xk_sdpa &p, int lq, int lkv, int off, int i, int *lo, int *hi)
{
    const int64_t d = (int64_t)i + off; // 64-bit: off + left or right may pass INT32_MAX
    const int64_t l = p.left >= 0 ? max((int64_t)0, d - p.left) : 0;
    const int64_t h = p.right >= 0 ? min((int64_t)lkv - 1, d + p.right) : (int64_t)lkv - 1;
    const bool none = i >= lq || h < l;
    *lo = none ? 0 : (int)l;
    *hi = none ? -1 : (int)h;
}
// Rows [*lo, *hi] that see key j.
__device__ __forceinline__ void band_rows(const xk_sdpa &p, int lq, int lkv, int off, int j, int *lo, int *hi)
{
    const int64_t d = (int64_t)j - off;
    const int64_t l = p.right >= 0 ? max((int64_t)0, d - p.right) : 0;
    const int64_t h = p.left >= 0 ? min((int64_t)lq - 1, d + p.left) : (int64_t)lq - 1;
    const bool none = j >= lkv || h < l;
    *lo = none ? 0 : (int)l;
    *hi = none ? -1 : (int)h;
}

template <typename T> __device__ __forceinline__ uint32_t pack2(float lo, float hi)
{
    return mma_t<T>::pack(lo, hi);
}
#endif // XW_DEVICE

// cuTensorMapEncodeTiled from the driver, looked up once (cudart is static and the driver library is not
// linked: this is the only driver call the engine makes).
typedef CUresult (*encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                              const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                              CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// A driver function by name (CUDA 12.0's ABI), NULL where the driver has none.
void *driver_entry(const char *name)
{
    void *f = nullptr;
    cudaDriverEntryPointQueryResult q;
    return cudaGetDriverEntryPointByVersion(name, &f, 12000, cudaEnableDefault, &q) == cudaSuccess &&
                   q == cudaDriverEntryPointSuccess
               ? f
               : nullptr;
}

encode_fn tensor_map_encoder()
{
    static encode_fn fn = nullptr;
    if (!fn)
        fn = reinterpret_cast<encode_fn>(driver_entry("cuTensorMapEncodeTiled"));
    return fn;
}

// A 4-d tiled map of a 16-bit tensor (gdim innermost first, gst the byte strides of dims 1-3), 128-byte swizzled
// boxes, zeros outside; false without the driver's encoder or on a base that is not 16-byte aligned.
bool encode_map16(CUtensorMap *m, const void *base, bool bf16, const cuuint64_t *gdim, const cuuint64_t *gst,
                  const cuuint32_t *box)
{
    encode_fn enc = tensor_map_encoder();
    if (!enc || (reinterpret_cast<uintptr_t>(base) & 15))
        return false;
    const cuuint32_t est[4] = {1, 1, 1, 1};
    return enc(m, bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 4,
               const_cast<void *>(base), gdim, gst, box, est, CU_TENSOR_MAP_INTERLEAVE_NONE,
               CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// The map of a [B, H, S, D] tensor (element strides st; 0 on size-1 dims is replaced, the coordinate is
// always 0 there) read in boxes of 64 head-dim columns x `rows` rows.
bool make_map(CUtensorMap *m, const void *base, bool bf16, const int64_t *dims, const int64_t *st, int rows)
{
    const cuuint64_t gdim[4] = {(cuuint64_t)dims[3], (cuuint64_t)dims[2], (cuuint64_t)dims[1], (cuuint64_t)dims[0]};
    cuuint64_t gst[3];
    for (int i = 0; i < 3; i++)
        gst[i] = (cuuint64_t)(st[2 - i] ? st[2 - i] : 8) * 2;
    const cuuint32_t box[4] = {64, (cuuint32_t)rows, 1, 1};
    return encode_map16(m, base, bf16, gdim, gst, box);
}

// cuTensorMapEncodeIm2col from the driver, looked up once like the tiled encoder.
typedef CUresult (*encode_im2col_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                     const cuuint64_t *, const int *, const int *, cuuint32_t, cuuint32_t,
                                     const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                     CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

encode_im2col_fn im2col_map_encoder()
{
    static encode_im2col_fn fn = nullptr;
    if (!fn)
        fn = reinterpret_cast<encode_im2col_fn>(driver_entry("cuTensorMapEncodeIm2col"));
    return fn;
}

// Whether a 4-d im2col load can carry the filter's largest tap offsets (oh, ow) = ((R - 1) dh, (S - 1) dw): the
// PTX ISA gives the instruction's offsets of a 4-d tensor the range [0, 2^8 - 1] (3-d 2^16, 5-d 2^5), whatever
// their 16-bit operands could hold.  Every caller of tma_load_im2col_4d asks this before choosing TMA.
bool im2col_offsets_fit(int64_t oh, int64_t ow) { return oh >= 0 && oh <= 255 && ow >= 0 && ow <= 255; }

// Whether make_im2col_map's geometry fits a 4-d im2col map (before the pointer and the driver are asked): the
// corners in the encoder's 8-bit range, traversal strides 1..8.
bool im2col_map_fits(int H, int W, int P, int Q, int sh, int sw, int ph, int pw)
{
    const int c[4] = {-pw, -ph, -pw + (Q - 1) * sw - (W - 1), -ph + (P - 1) * sh - (H - 1)};
    for (int i = 0; i < 4; i++)
        if (c[i] < -128 || c[i] > 127)
            return false;
    return sh >= 1 && sh <= 8 && sw >= 1 && sw <= 8;
}

// The im2col view of a channels-last 2-D conv input x[N][H][W][C] (element strides xn, xh, xw; channel stride 1)
// for tma_load_im2col_4d: boxes of `pixels` output pixels (GEMM rows, in (n, p, q) order) x 64 channels (one
// 128-byte row, 128-byte swizzled), zeros outside x.  The bounding box is the range of the filter's first tap
// over the P x Q output lattice: lower corner (-pw, -ph), upper corner the last output's tap relative to
// (W - 1, H - 1), so that the traversal, stepping (sw, sh), visits exactly the output pixels in order, and the
// instruction's coordinates are the tile's first output pixel's tap (q * sw - pw, p * sh - ph, n).  False
// where the driver or the map's limits refuse (corners in [-128, 127], strides <= 8, 16-byte aligned base and
// strides): the caller gathers by hand there.
bool make_im2col_map(CUtensorMap *m, const void *x, bool bf16, int N, int H, int W, int C, int64_t xn, int64_t xh,
                     int64_t xw, int P, int Q, int sh, int sw, int ph, int pw, int pixels)
{
    encode_im2col_fn enc = im2col_map_encoder();
    if (H == 1) // a size-1 dimension's stride is never stepped: make it the dense one the encoder accepts
        xh = xw * W;
    if (N == 1)
        xn = xh * H;
    const int lo[2] = {-pw, -ph}; // {W, H}, innermost first, as every array the encoder takes
    const int hi[2] = {-pw + (Q - 1) * sw - (W - 1), -ph + (P - 1) * sh - (H - 1)};
    if (!enc || !im2col_map_fits(H, W, P, Q, sh, sw, ph, pw) || (reinterpret_cast<uintptr_t>(x) & 15) ||
        (xn | xh | xw) % 8 || pixels < 1 || pixels > 1024)
        return false;
    const cuuint64_t gdim[4] = {(cuuint64_t)C, (cuuint64_t)W, (cuuint64_t)H, (cuuint64_t)N};
    const cuuint64_t gst[3] = {(cuuint64_t)xw * 2, (cuuint64_t)xh * 2, (cuuint64_t)xn * 2}; // bytes, dims 1..3
    const cuuint32_t est[4] = {1, (cuuint32_t)sw, (cuuint32_t)sh, 1};
    return enc(m, bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 4, const_cast<void *>(x),
               gdim, gst, lo, hi, 64, (cuuint32_t)pixels, est, CU_TENSOR_MAP_INTERLEAVE_NONE,
               CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// The 5-d im2col view of a channels-last 3-D conv input x[N][D][H][W][C] (element strides xn, xd, xh, xw; channel
// stride 1) for tma_load_im2col_5d, as make_im2col_map's 4-d one with the depth: boxes of `pixels` output pixels
// (GEMM rows in (n, o, p, q) order) x `chans` channels, zeros outside x; chans 64 (one 128-byte row, 128-byte
// swizzle) or 32 (a 64-byte row, 64-byte swizzle: a slice of C = 32 is two taps' boxes side by side).  The
// encoder's 5-d corners lie in [-16, 15] (the 4-d [-128, 127]), traversal strides 1..8.  False where the driver
// or those limits refuse: the caller gathers by hand there.
bool im2col_map5_fits(const int *in, const int *out, const int *st, const int *pad)
{
    for (int i = 0; i < 3; i++) { // D, H, W
        const int lo = -pad[i], hi = -pad[i] + (out[i] - 1) * st[i] - (in[i] - 1);
        if (lo < -16 || lo > 15 || hi < -16 || hi > 15 || st[i] < 1 || st[i] > 8)
            return false;
    }
    return true;
}

bool make_im2col_map5(CUtensorMap *m, const void *x, bool bf16, int N, const int *in, int C, int64_t xn,
                      const int64_t *xs, const int *out, const int *st, const int *pad, int chans, int pixels)
{
    encode_im2col_fn enc = im2col_map_encoder();
    int64_t s[4] = {xs[2], xs[1], xs[0], xn}; // W, H, D, N strides; a size-1 dimension's is never stepped:
    const int64_t ext[4] = {in[2], in[1], in[0], N}; // make it the dense one the encoder accepts
    for (int i = 1; i < 4; i++)
        if (ext[i] == 1)
            s[i] = s[i - 1] * ext[i - 1];
    if (!enc || !im2col_map5_fits(in, out, st, pad) || (reinterpret_cast<uintptr_t>(x) & 15) ||
        (s[0] | s[1] | s[2] | s[3]) % 8 || pixels < 1 || pixels > 1024 || (chans != 32 && chans != 64))
        return false;
    const cuuint64_t gdim[5] = {(cuuint64_t)C, (cuuint64_t)in[2], (cuuint64_t)in[1], (cuuint64_t)in[0],
                                (cuuint64_t)N};
    const cuuint64_t gst[4] = {(cuuint64_t)s[0] * 2, (cuuint64_t)s[1] * 2, (cuuint64_t)s[2] * 2,
                               (cuuint64_t)s[3] * 2}; // bytes, dims 1..4
    const int lo[3] = {-pad[2], -pad[1], -pad[0]}; // {W, H, D}, innermost first
    const int hi[3] = {-pad[2] + (out[2] - 1) * st[2] - (in[2] - 1), -pad[1] + (out[1] - 1) * st[1] - (in[1] - 1),
                       -pad[0] + (out[0] - 1) * st[0] - (in[0] - 1)};
    const cuuint32_t est[5] = {1, (cuuint32_t)st[2], (cuuint32_t)st[1], (cuuint32_t)st[0], 1};
    return enc(m, bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 5, const_cast<void *>(x),
               gdim, gst, lo, hi, (cuuint32_t)chans, (cuuint32_t)pixels, est, CU_TENSOR_MAP_INTERLEAVE_NONE,
               chans == 64 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

} // namespace

#endif
