/* kern_rng.h — the Philox kernels (kernels/philox.cu) as the host sees them:
 * dropout (y and the keep mask) and rng (uniform / normal).  Element i is the
 * logical row-major index over `size`; each tensor is addressed through its
 * own strides.  The numbers are those of src/data/philox.c: counter
 * (i lo, i hi, stream lo, stream hi), key (seed lo, seed hi), 10 rounds;
 * u = (out0 >> 8) * 2^-24; normal = sqrt(-2 ln u1) cos(2 pi u2) in double;
 * results computed in double without FMA contraction and rounded once. */
#ifndef XDNN_GPU_KERN_RNG_H
#define XDNN_GPU_KERN_RNG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { RG_MAXD = 8 };
typedef enum rg_kind { RGK_DROPOUT, RGK_UNIFORM, RGK_NORMAL } rg_kind;

typedef struct rg_job {
    int kind;                      /* rg_kind */
    uint64_t key, stream;
    double p, keep_scale;          /* dropout */
    double a, b;                   /* rng: y = a + b * (u or normal) */
    int n;                         /* dims, innermost last (row-major order kept) */
    int64_t size[RG_MAXD], xst[RG_MAXD], yst[RG_MAXD], mst[RG_MAXD];
    int xdt, ydt, mdt;             /* xdnn_dtype codes */
    int64_t numel;
    const void *x;
    void *y, *mask;                /* mask NULL when not written */
} rg_job;

/* Enqueue on `stream` (a cudaStream_t); returns a cudaError_t value. */
int rg_launch(const rg_job *j, void *stream);

#ifdef __cplusplus
}
#endif

#endif
