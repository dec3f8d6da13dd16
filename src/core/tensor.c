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
    if (dtype_is_float(dtype)) {
        for (int64_t i = 0; i < span; i++)
            dtype_store(dtype, t->data, i, (double)NAN);
    } else {
        memset(t->data, 0x5A, t->bytes);
    }
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

/* Walk logical order, mapping each element to its storage offset. */
#define FOR_EACH_LOGICAL(t, k, off, body)                                        \
    do {                                                                         \
        int64_t idx_[XDNN_MAX_RANK] = {0};                                       \
        for (int64_t k = 0; k < (t)->numel; k++) {                               \
            int64_t off = host_tensor_offset((t), idx_);                         \
            body;                                                                \
            for (int d_ = (t)->rank - 1; d_ >= 0; d_--) {                        \
                if (++idx_[d_] < (t)->dims[d_])                                  \
                    break;                                                       \
                idx_[d_] = 0;                                                    \
            }                                                                    \
        }                                                                        \
    } while (0)

void tensor_gather(const host_tensor *t, double *out)
{
    FOR_EACH_LOGICAL(t, k, off, out[k] = dtype_load(t->dtype, t->data, off));
}

void tensor_scatter(host_tensor *t, const double *in)
{
    FOR_EACH_LOGICAL(t, k, off, dtype_store(t->dtype, t->data, off, in[k]));
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
