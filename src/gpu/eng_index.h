/* eng_index.h — what the engines of the index ops and batchnorm_infer_var
 * (eng_index.c, eng_xent.c, eng_bn_var.c) share: the packed-layout check, the
 * dtype sets, and finding the partition's lone node of a given op. */
#ifndef XDNN_GPU_ENG_INDEX_H
#define XDNN_GPU_ENG_INDEX_H

#include "gpu/engine.h"

/* t is packed row-major (a view may be); else why says which strides. */
bool gpu_ix_packed(const gtensor *t, char *why, size_t len);
bool gpu_ix_float(xdnn_dtype t); /* f32, f16, bf16, f64 */
bool gpu_ix_int(xdnn_dtype t);   /* i8, i32, i64 */
/* p's only node when its op is one of ops[0..n) (with its IR node and
 * result); else NULL and why ("runs <what> only, not <op>"). */
const gnode *gpu_ix_lone_node(const gplan *pl, const gpart *p, const int *ops, int n, const char *what, char *why,
                              size_t len);

#endif
