/* kern_index.h — the kernels of the index ops and the row-wise ops added with
 * them (kernels/index.cu, kernels/xent.cu) as the host sees them.  Every
 * tensor is packed row-major; dtypes are xdnn_dtype codes.  Shapes are
 * int64; the host refuses what the 32-bit sort keys cannot hold.
 *
 *   gather       x [outer, n, inner], index [K] -> y [outer, K, inner]
 *   gather_bwd   dy [outer, K, inner], index [K] -> dx [outer, n, inner]:
 *                the (index, k) pairs are sorted as 64-bit keys index << 32 | k
 *                (unique, so any sort gives one order) in the workspace, then
 *                each dx element sums its run of dy rows in k order: no atomics,
 *                the same bits on every run.  Needs kix_bwd_ws_bytes(K).
 *   one_hot      index [K] -> y [K, n]
 *   argmax/min   x [outer, n, inner] -> y [outer, inner]
 * An index outside [0, n) writes NaN (-1 in an integer one_hot) where the CPU
 * reference refuses; gather_bwd skips such dy rows.
 *
 *   cross_entropy      logits [R, C], target [R] -> loss [R] or a scalar;
 *                      reductions sum the per-row losses in a fixed order
 *                      (workspace kxe_ws_bytes(R)).
 *   cross_entropy_bwd  dy, logits, target -> dlogits [R, C].
 *   batchnorm_infer_var  x [N, C, S], per-channel (or one-element) params.
 */
#ifndef XDNN_GPU_KERN_INDEX_H
#define XDNN_GPU_KERN_INDEX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kix_mode { KIX_GATHER, KIX_GATHER_BWD, KIX_ONE_HOT, KIX_ARGMAX, KIX_ARGMIN } kix_mode;

typedef struct kix_params {
    int mode;                 /* kix_mode */
    int xdt, idt, ydt;        /* dtypes: x (dy for the backward), index, y (dx) */
    int64_t outer, n, inner, K;
    const void *x, *idx;
    void *y;
    void *ws;                 /* gather_bwd: kix_bwd_ws_bytes(K) bytes */
} kix_params;

size_t kix_bwd_ws_bytes(int64_t K);
/* Enqueue on `stream` (a cudaStream_t); returns a cudaError_t value. */
int kix_launch(const kix_params *p, void *stream);

typedef enum kxe_red { KXE_NONE, KXE_MEAN, KXE_SUM } kxe_red;

typedef struct kxe_params {
    int bwd;                  /* 0: cross_entropy, 1: cross_entropy_bwd */
    int reduction;            /* kxe_red */
    int xdt, tdt, ydt, dydt;  /* logits, target, loss (dlogits), dy */
    int64_t R, C, ignore_index;
    float label_smoothing;
    const void *x, *t, *dy;
    void *y;
    void *ws;                 /* kxe_ws_bytes(R) bytes */
} kxe_params;

size_t kxe_ws_bytes(int64_t R);
int kxe_launch(const kxe_params *p, void *stream);

typedef struct kbv_params {
    int xdt, ydt, pdt[4];     /* x, y, and scale, bias, mean, var */
    int64_t N, C, S;
    int64_t pnumel[4];        /* C, or 1 for a one-element parameter */
    double eps;
    const void *x, *p[4];
    void *y;
} kbv_params;

int kbv_launch(const kbv_params *p, void *stream);

#ifdef __cplusplus
}
#endif

#endif
