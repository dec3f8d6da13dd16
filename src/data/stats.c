/* stats.c — summary statistics of a tensor for printing outputs and for
 * comparing runs.
 *
 * min, max, mean and std (population, two passes in double) are over the
 * finite elements only; NaN and +-Inf elements are counted in `nan` and
 * `inf` instead.  `count` is every element (numel).  With no finite element
 * min/max/mean/std are NaN.
 *
 * checksum = fnv1a64 over the element bytes as stored in the tensor's dtype,
 * visited in logical row-major order: the same values in two layouts (or two
 * stride patterns) give the same checksum, and the checksum is bit exact
 * (it tells -0 from +0 and one NaN payload from another).
 */
#include "data.h"

#include <math.h>

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

void tensor_compute_stats(const host_tensor *t, tensor_stats *s)
{
    s->count = t->numel;
    s->nan = s->inf = 0;
    s->checksum = FNV_OFFSET;
    size_t esize = xdnn_dtype_size(t->dtype);
    double sum = 0, lo = HUGE_VAL, hi = -HUGE_VAL;
    int64_t finite = 0;
    int64_t idx[XDNN_MAX_RANK] = {0};
    /* Pass 1: checksum, counts, min, max, sum. */
    for (int64_t k = 0; k < t->numel; k++) {
        int64_t off = host_tensor_offset(t, idx);
        const unsigned char *p = (const unsigned char *)t->data + (size_t)off * esize;
        for (size_t b = 0; b < esize; b++) {
            s->checksum ^= p[b];
            s->checksum *= FNV_PRIME;
        }
        double v = dtype_load(t->dtype, t->data, off);
        if (isnan(v)) {
            s->nan++;
        } else if (isinf(v)) {
            s->inf++;
        } else {
            finite++;
            sum += v;
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        for (int i = t->rank - 1; i >= 0; i--) {
            if (++idx[i] < t->dims[i])
                break;
            idx[i] = 0;
        }
    }
    if (!finite) {
        s->min = s->max = s->mean = s->std = (double)NAN;
        return;
    }
    double mean = sum / (double)finite;
    /* Pass 2: centred sum of squares (no cancellation from E[x^2] - E[x]^2). */
    double ss = 0;
    for (int i = 0; i < XDNN_MAX_RANK; i++)
        idx[i] = 0;
    for (int64_t k = 0; k < t->numel; k++) {
        double v = dtype_load(t->dtype, t->data, host_tensor_offset(t, idx));
        if (isfinite(v))
            ss += (v - mean) * (v - mean);
        for (int i = t->rank - 1; i >= 0; i--) {
            if (++idx[i] < t->dims[i])
                break;
            idx[i] = 0;
        }
    }
    s->min = lo;
    s->max = hi;
    s->mean = mean;
    s->std = sqrt(ss / (double)finite);
}
