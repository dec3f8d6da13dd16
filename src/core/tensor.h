/* tensor.h — a tensor's bytes on the host, in its dtype and physical layout,
 * and the gather/scatter between that and packed logical-order doubles (the
 * form every CPU reference op works on). */
#ifndef XDNN_TENSOR_H
#define XDNN_TENSOR_H

#include "xdnn.h"

#include <stddef.h>
#include <stdint.h>

typedef struct host_tensor {
    xdnn_dtype dtype;
    int rank;
    int64_t dims[XDNN_MAX_RANK];
    int64_t strides[XDNN_MAX_RANK]; /* elements; may be 0 (broadcast) */
    int64_t numel;
    void *data;                     /* malloc'ed, owned */
    size_t bytes;                   /* allocation size */
    bool untyped;                   /* read from bytes of no stated type (npy 'V1'/'V2'): `dtype` is
                                       a guess that the declaration may correct (host_tensor_retype) */
} host_tensor;

/* A tensor read as untyped bytes takes the declared dtype when it has the same
 * element size and is a float type (fp8 e5m2 or e8m0 bytes in a 'V1' array
 * are not e4m3): the bytes stay, the meaning follows the declaration. */
void host_tensor_retype(host_tensor *t, xdnn_dtype declared);

/* Allocate for dims/strides (strides NULL = packed row-major).  Contents are
 * poisoned (NaN for floats, 0x5A bytes otherwise) so unwritten elements show. */
/* Elements and bytes a layout spans (strides in elements; 0 when a dim is
 * 0): what a buffer for it must hold.  false when that overflows. */
bool tensor_span(xdnn_dtype dtype, int rank, const int64_t *dims, const int64_t *strides, int64_t *elems,
                 size_t *bytes);
xdnn_status host_tensor_alloc(host_tensor *t, xdnn_dtype dtype, int rank, const int64_t *dims,
                              const int64_t *strides);
void host_tensor_free(host_tensor *t);
/* Element offset (in elements) of a logical multi-index. */
int64_t host_tensor_offset(const host_tensor *t, const int64_t *idx);
/* Packed logical-order doubles <-> storage (rounding to the dtype on store). */
void tensor_gather(const host_tensor *t, double *out);
void tensor_scatter(host_tensor *t, const double *in);
/* Copy with layout/dtype change; shapes must match. */
void tensor_convert(const host_tensor *src, host_tensor *dst);

#endif
