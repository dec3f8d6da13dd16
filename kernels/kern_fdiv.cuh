/* kern_fdiv.cuh — division by a runtime divisor as multiply-high, the magic
 * made once on the host (quant.cu's index maps, pool.cu's index splits): a
 * 32-bit division by a runtime value is ~20 instructions on the GPU, this is
 * three. */
#ifndef XDNN_KERN_FDIV_CUH
#define XDNN_KERN_FDIV_CUH

#include <stdint.h>

/* n / d for n < 2^31 by multiply-high (Granlund-Montgomery, the round-up
 * variant): l = ceil(log2 d), m = floor(2^32 (2^l - d) / d) + 1, then
 * n / d = (umulhi(n, m) + n) >> l (t + n < 2^32 since t <= n < 2^31). */
struct kfdiv {
    uint32_t d, m, l;
};

static inline kfdiv kfdiv_make(uint32_t d)
{
    kfdiv f;
    f.d = d ? d : 1;
    if (f.d > 0x80000000u) { /* every n < 2^31 gives 0 (and l = 32 would shift a uint32 by 32) */
        f.m = 0;
        f.l = 31;
        return f;
    }
    f.l = 0;
    while (f.l < 32 && (1ull << f.l) < f.d)
        f.l++;
    f.m = (uint32_t)(((1ull << 32) * ((1ull << f.l) - f.d)) / f.d + 1);
    return f;
}

static __device__ __forceinline__ uint32_t kfdiv_div(uint32_t n, const kfdiv &f)
{
    return (__umulhi(n, f.m) + n) >> f.l;
}

#endif
