/* index_util.h — what the index ops (gather, gather_bwd, one_hot, argmax,
 * argmin, cross_entropy and its backward) share: which dtypes an index tensor
 * may have, and the run-time check of one index value.
 *
 * Index tensors are integer (i8, i32, i64).  The CPU reference refuses an
 * index outside [0, n) with a clear error naming the op, the element and the
 * value (XDNN_ERR_SEMANTIC, as sdpa does for its sequence lengths); the GPU
 * engines cannot stop a kernel, so they write NaN (-1 in integer outputs)
 * where the reference would refuse: documented in dnn(5). */
#ifndef XDNN_INDEX_UTIL_H
#define XDNN_INDEX_UTIL_H

#include "op.h"
#include "tensor_util.h"

/* i8, i32 or i64. */
bool index_dtype_ok(xdnn_dtype t);
/* Input `port` is present and of an index dtype; reports "index must be an
 * integer tensor (i8, i32 or i64), got f32" otherwise. */
bool index_check_port(op_infer_ctx *c, int port);
/* Element k of index tensor t (the reference sees doubles) as an int64 in
 * [0, n); else reports "<op>: index[k] = v is out of range [0, n) (what)" and
 * returns false.  what names the dimension indexed, e.g. "axis 0 of x [5, 3]". */
bool index_ref_get(op_ref_ctx *c, const ref_tensor *t, int64_t k, int64_t n, const char *what, int64_t *out);
/* The ignore_index variant (cross_entropy): v == ignore is accepted as -1. */
bool index_ref_get_or(op_ref_ctx *c, const ref_tensor *t, int64_t k, int64_t n, int64_t ignore, const char *what,
                      int64_t *out);

#endif
