/* quant.h — how a quantization scale tensor maps onto the tensor it scales,
 * shared by quantize / dequantize / amax (quant.c) and their GPU engine
 * (src/gpu/eng_quant.c).
 *
 * Element idx of x (rank r, logical row-major) uses scale element
 *     sum_d (idx[d] / blk[d]) * sst[d]
 * of the packed scale tensor.  The granularity comes from the attributes:
 *   neither axis nor block  per-tensor: the scale has one element (any rank
 *                           whose dims are all 1); sst = 0 everywhere.
 *   axis = k                per-channel: the scale is [x.dims[k]]; sst[k] = 1.
 *   block = [b0, ..., bj]   blocks over x's trailing j+1 dims (leading dims
 *                           get block 1): the scale has x's rank and dims
 *                           ceil(x.dims[d] / blk[d]) (a partial last block is
 *                           fine), packed: sst = its row-major strides.
 *                           [1, 32] is MX's 1x32, [128, 128] DeepSeek's 2-D.
 */
#ifndef XDNN_OPS_QUANT_H
#define XDNN_OPS_QUANT_H

#include "op.h"

#include <math.h>

typedef struct quant_map {
    int rank;                  /* x's rank */
    int64_t blk[XDNN_MAX_RANK];
    int64_t sst[XDNN_MAX_RANK];
    int srank;                 /* the scale shape the attributes ask for */
    int64_t sdims[XDNN_MAX_RANK];
    enum { QM_TENSOR, QM_CHANNEL, QM_BLOCK } kind;
} quant_map;

/* The map of node n (attributes axis, block) for an x of rank/dims.  false
 * with a one-line reason (naming the attribute and value) when the attributes
 * do not fit x.  The scale's own shape is checked by quant_scale_fits. */
bool quant_map_of(const xnode *n, const op_desc *d, int rank, const int64_t *dims, quant_map *m, char *why,
                  size_t len);
/* Does a scale of srank/sdims fit m?  (Per-tensor: any all-ones shape.) */
bool quant_scale_fits(const quant_map *m, int srank, const int64_t *sdims);
/* quant_scale's constants for format t: the largest finite value and the
 * exponent of its largest power of two (448, 8 / 57344, 15 / 127, 6). */
void quant_format_limits(xdnn_dtype t, double *qmax, int *emax);
/* amax folding one more |value| v into a: NaN sticks (nothing compares above it). */
static inline double quant_amax_fold(double a, double v)
{
    v = v < 0 ? -v : v;
    return isnan(a) ? a : isnan(v) || v > a ? v : a;
}
/* ---- shared by the scaled compute ops, scaled_matmul (quant_matmul.c) and
 * scaled_conv (quant_conv.c) */

static inline bool quant_is_fp8(xdnn_dtype t) { return t == XDNN_FP8_E4M3 || t == XDNN_FP8_E5M2; }
/* Their two low-precision operands: both fp8 (any mix of e4m3 and e5m2) or
 * both i8.  XDNN_OK, or an op_error naming an and bn. */
xdnn_status quant_check_operands(op_infer_ctx *c, const char *an, const tinfo *a, const char *bn, const tinfo *b);
/* A per-tensor scale port: one f32 element (any all-ones shape). */
xdnn_status quant_check_tensor_scale(op_infer_ctx *c, const char *name, const tinfo *s);
/* What quantize (and scaled_conv's requantizing epilogue) hands the store for
 * value x and dequantization scale s: the quotient in double.  The store
 * (dtype.c) then rounds it once, ties to even, saturating, so every
 * quantizing op rounds the same way. */
static inline double quant_quotient(double x, double s) { return x / s; }

/* The scale offset of x's row-major element index idx[0..rank). */
static inline int64_t quant_scale_offset(const quant_map *m, const int64_t *idx)
{
    int64_t off = 0;
    for (int i = 0; i < m->rank; i++)
        off += idx[i] / m->blk[i] * m->sst[i];
    return off;
}

#endif
