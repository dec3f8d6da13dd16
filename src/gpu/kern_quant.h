/* kern_quant.h — the quantize / dequantize / amax kernels (kernels/quant.cu)
 * as the host sees them.  x is packed row-major, seen as [rows, cols] with
 * cols its last dim; the scale element of (row, col) is
 *     sum_d (lead_idx[d] / lead_blk[d]) * lead_sst[d] + (col / col_blk) * col_sst
 * where lead_idx is row split over lead_dims (the map of src/ops/quant.h).
 * KQ_SCALE (quant_scale) is elementwise over x's rows * cols elements.
 * Indices are 32-bit: the host refuses tensors of 2^31 elements or more. */
#ifndef XDNN_GPU_KERN_QUANT_H
#define XDNN_GPU_KERN_QUANT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { KQ_MAXD = 8 };
typedef enum kq_mode { KQ_QUANT, KQ_DEQUANT, KQ_AMAX, KQ_SCALE } kq_mode;

typedef struct kq_params {
    int mode;                      /* kq_mode */
    int xdt, ydt, sdt;             /* xdnn_dtype codes of x (q for dequant), y, scale */
    uint32_t rows, cols, nscale;   /* nscale: scale elements (amax: y's) */
    int nlead;
    uint32_t lead_dims[KQ_MAXD], lead_blk[KQ_MAXD], lead_sst[KQ_MAXD];
    uint32_t col_blk, col_sst;
    float qmax;                    /* KQ_SCALE (quant_scale): f32 scale = amax / qmax */
    int emax;                      /* KQ_SCALE: e8m0 scale = 2^(floor(log2 amax) - emax) */
    const void *x, *s;
    void *y;
} kq_params;

/* Enqueue on `stream` (a cudaStream_t); returns a cudaError_t value. */
int kq_launch(const kq_params *p, void *stream);

/* The epilogue of the exact-sum GEMMs (scaled_matmul on i8, scaled_conv on
 * i8 or fp8): from the sums acc[r * ld_acc + c] (int32, or f32 with
 * acc_f32), v = acc * sa * sb[c] (double; sb one element when nsb is 1, else
 * one per column), + bias[c] when bias is non-NULL, and y(r, c) = v rounded
 * once to ydt (f32, f16, bf16), or with sc (non-NULL) v / sc rounded once
 * onto ydt's grid (i8, fp8_e4m3, fp8_e5m2), saturating; amax (non-NULL,
 * zeroed by the caller) gets max |v| as f32.  y(r, c) is at
 * c * ycs + sum_d idx_d * ystr[d], idx the split of r over ydims[0..nyd)
 * (innermost last): [rows] with ystr {ldy} for a row-major matrix; [N, D,
 * H, W] with the pixel strides for a convolution's y (any layout). */
typedef struct kq_epi {
    const void *acc;
    int acc_f32;
    uint32_t rows, cols, ld_acc;
    const float *sa, *sb, *bias, *sc;
    uint32_t nsb;
    float *amax;
    void *y;
    int ydt;
    int nyd;
    uint32_t ydims[4];
    int64_t ystr[4], ycs;
} kq_epi;
int kq_epilogue_launch(const kq_epi *e, void *stream);
/* scaled_matmul's i8 epilogue through kq_epilogue_launch: per-tensor sa, sb,
 * no bias, packed int32 acc, y[r * ldy + c]. */
int kq_rescale_i32_launch(const int32_t *acc, uint32_t rows, uint32_t cols, uint32_t ldy, const float *sa,
                          const float *sb, const float *sc, float *amax, void *y, int ydt, void *stream);
/* The fp8 GEMM's epilogue when it requantizes or reports amax: v[r * cols + c]
 * (f32, the scaled product cuBLASLt wrote) to y as above (the quotient v / sc
 * rounded exactly, as quantize does); amax likewise. */
int kq_requant_f32_launch(const float *v, uint32_t rows, uint32_t cols, uint32_t ldy, const float *sc, float *amax,
                          void *y, int ydt, void *stream);

#ifdef __cplusplus
}
#endif

#endif
