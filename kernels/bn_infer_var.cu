/* bn_infer_var.cu — batchnorm_infer_var for the bn_infer_var engine
 * (src/gpu/eng_bn_var.c); semantics are src/ops/norm_infer_var.c.
 *
 * v1: one thread per element of x [N, C, S], grid-stride, coalesced along S;
 * the channel's four parameters come through the read-only cache and
 * 1 / sqrt(var + eps) is computed in double per element (cheap next to the
 * memory traffic, and one rounding from the reference's double). */
#include "gpu/kern_index.h"
#include "kix_common.cuh"

enum { KBV_THREADS = 256 };

static __global__ void kbv_kernel(kbv_params p)
{
    int64_t total = p.N * p.C * p.S;
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
        int64_t c = (e / p.S) % p.C;
        double q[4];
        for (int j = 0; j < 4; j++)
            q[j] = kix_ld(p.p[j], p.pdt[j], p.pnumel[j] == 1 ? 0 : c);
        double x = kix_ld(p.x, p.xdt, e);
        kix_st(p.y, p.ydt, e, (x - q[2]) / sqrt(q[3] + p.eps) * q[0] + q[1]);
    }
}

extern "C" int kbv_launch(const kbv_params *p, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    kbv_kernel<<<kix_grid(p->N * p->C * p->S, KBV_THREADS), KBV_THREADS, 0, s>>>(*p);
    return (int)cudaGetLastError();
}
