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
/* The scale offset of x's row-major element index idx[0..rank). */
static inline int64_t quant_scale_offset(const quant_map *m, const int64_t *idx)
{
    int64_t off = 0;
    for (int i = 0; i < m->rank; i++)
        off += idx[i] / m->blk[i] * m->sst[i];
    return off;
}

#endif
