/* tensor.c — host tensors and the gather/scatter through strides that lets
 * every reference op ignore layouts (see tensor.h). */
#include "tensor.h"

#include "data/data.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bool tensor_span(xdnn_dtype dtype, int rank, const int64_t *dims, const int64_t *strides, int64_t *elems,
                 size_t *bytes)
{
    /* Sizes come from files too: every product is checked, and an empty
     * tensor (some dim 0) is empty whatever its other dims claim. */
    int64_t span = 1, b;
    for (int i = 0; i < rank; i++)
        if (dims[i] == 0) {
            *elems = 0;
            *bytes = 0;
            return true;
        }
    for (int i = 0; i < rank; i++) {
        int64_t extent, stride = strides[i] < 0 ? -strides[i] : strides[i];
        if (__builtin_mul_overflow(dims[i] - 1, stride, &extent) || __builtin_add_overflow(span, extent, &span))
            return false;
    }
    if (__builtin_mul_overflow(span, (int64_t)xdnn_dtype_size(dtype), &b))
        return false;
    *elems = span;
    *bytes = (size_t)b;
    return true;
}

xdnn_status host_tensor_alloc(host_tensor *t, xdnn_dtype dtype, int rank, const int64_t *dims,
                              const int64_t *strides)
{
    memset(t, 0, sizeof *t);
    t->dtype = dtype;
    t->rank = rank;
    bool empty = false; /* an empty tensor is empty whatever its other dims claim */
    for (int i = 0; i < rank; i++)
        empty |= dims[i] == 0;
    int64_t numel = 1, span;
    for (int i = rank - 1; i >= 0; i--) {
        if (dims[i] < 0)
            return XDNN_ERR_USAGE;
        t->dims[i] = dims[i];
        t->strides[i] = strides ? strides[i] : numel;
        if (!empty && __builtin_mul_overflow(numel, dims[i], &numel))
            return XDNN_ERR_NOMEM;
    }
    if (!tensor_span(dtype, rank, t->dims, t->strides, &span, &t->bytes))
        return XDNN_ERR_NOMEM;
    t->numel = empty ? 0 : numel;
    t->data = malloc(t->bytes ? t->bytes : 1);
    if (!t->data)
        return XDNN_ERR_NOMEM;
    /* poison: all-ones bytes are a NaN in every float format here (f64, f32,
     * f16, bf16, fp8 e4m3 and e5m2, e8m0), and one memset is ~50x faster than
     * storing NaN element by element over a tensor of billions */
    memset(t->data, dtype_is_float(dtype) ? 0xFF : 0x5A, t->bytes);
    return XDNN_OK;
}

void host_tensor_free(host_tensor *t)
{
    if (!t)
        return;
    free(t->data);
    t->data = NULL;
}

int64_t host_tensor_offset(const host_tensor *t, const int64_t *idx)
{
    int64_t off = 0;
    for (int i = 0; i < t->rank; i++)
        off += idx[i] * t->strides[i];
    return off;
}

/* Walk logical order over [k0, k1), mapping each element to its storage offset. */
#define FOR_EACH_LOGICAL(t, k0, k1, k, off, body)                               \
    do {                                                                         \
        int64_t idx_[XDNN_MAX_RANK] = {0};                                       \
        for (int64_t r_ = (k0), d_ = (t)->rank - 1; d_ >= 0; d_--) {             \
            idx_[d_] = r_ % (t)->dims[d_];                                       \
            r_ /= (t)->dims[d_];                                                 \
        }                                                                        \
        for (int64_t k = (k0); k < (k1); k++) {                                  \
            int64_t off = host_tensor_offset((t), idx_);                         \
            body;                                                                \
            for (int d_ = (t)->rank - 1; d_ >= 0; d_--) {                        \
                if (++idx_[d_] < (t)->dims[d_])                                  \
                    break;                                                       \
                idx_[d_] = 0;                                                    \
            }                                                                    \
        }                                                                        \
    } while (0)

/* Large tensors are walked in ranges of logical indices by OpenMP threads: every element's
 * offset and value depend on its index alone, so the result is the sequential walk's, bit for bit.  The
 * host-side fill of inputs and weights goes through here (a ResNet-50 step at N=256 or a 32k-key decode had
 * its device run wait tens of seconds on one core). */
enum { PAR_MIN_ELEMS = 1 << 16 };

/* Whether no two logical indices share a storage element: the strides of the dims > 1, in increasing order,
 * pack them densely.  Stores go in parallel only then (a broadcast or overlapping view keeps the
 * sequential walk, where the last index written wins). */
static bool dense_permutation(const host_tensor *t)
{
    int64_t st[XDNN_MAX_RANK], dm[XDNN_MAX_RANK];
    int n = 0;
    for (int i = 0; i < t->rank; i++) {
        if (t->dims[i] == 1)
            continue;
        int j = n++;
        for (; j > 0 && st[j - 1] > t->strides[i]; j--) {
            st[j] = st[j - 1];
            dm[j] = dm[j - 1];
        }
        st[j] = t->strides[i];
        dm[j] = t->dims[i];
    }
    int64_t expect = 1;
    for (int i = 0; i < n; i++) {
        if (st[i] != expect)
            return false;
        expect *= dm[i];
    }
    return true;
}

/* Chunks of logical indices, so that no OpenMP runtime call (and no omp.h) is needed. */
enum { WALK_CHUNK = 1 << 14 };

void tensor_gather(const host_tensor *t, double *out)
{
    if (t->numel < PAR_MIN_ELEMS) {
        FOR_EACH_LOGICAL(t, 0, t->numel, k, off, out[k] = dtype_load(t->dtype, t->data, off));
        return;
    }
    const int64_t nchunks = (t->numel + WALK_CHUNK - 1) / WALK_CHUNK;
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < nchunks; c++) {
        const int64_t k0 = c * WALK_CHUNK, k1 = k0 + WALK_CHUNK < t->numel ? k0 + WALK_CHUNK : t->numel;
        FOR_EACH_LOGICAL(t, k0, k1, k, off, out[k] = dtype_load(t->dtype, t->data, off));
    }
}

void tensor_scatter(host_tensor *t, const double *in)
{
    if (t->numel < PAR_MIN_ELEMS || !dense_permutation(t)) {
        FOR_EACH_LOGICAL(t, 0, t->numel, k, off, dtype_store(t->dtype, t->data, off, in[k]));
        return;
    }
    const int64_t nchunks = (t->numel + WALK_CHUNK - 1) / WALK_CHUNK;
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < nchunks; c++) {
        const int64_t k0 = c * WALK_CHUNK, k1 = k0 + WALK_CHUNK < t->numel ? k0 + WALK_CHUNK : t->numel;
        FOR_EACH_LOGICAL(t, k0, k1, k, off, dtype_store(t->dtype, t->data, off, in[k]));
    }
}

void tensor_convert(const host_tensor *src, host_tensor *dst)
{
    double *tmp = malloc((size_t)(src->numel ? src->numel : 1) * sizeof *tmp);
    if (!tmp)
        return;
    tensor_gather(src, tmp);
    tensor_scatter(dst, tmp);
    free(tmp);
}

void host_tensor_retype(host_tensor *t, xdnn_dtype declared)
{
    bool floaty = declared == XDNN_BF16 || declared == XDNN_F16 || declared == XDNN_FP8_E4M3 ||
                  declared == XDNN_FP8_E5M2 || declared == XDNN_E8M0;
    if (t->untyped && floaty && xdnn_dtype_size(declared) == xdnn_dtype_size(t->dtype))
        t->dtype = declared;
}
