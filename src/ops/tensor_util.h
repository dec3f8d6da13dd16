/* tensor_util.h — attribute and shape helpers shared by the tensor, norm and
 * random op families (lists of ints of any length, "[1, 2]" text). */
#ifndef XDNN_TENSOR_UTIL_H
#define XDNN_TENSOR_UTIL_H

#include "op.h"

/* An int or a list of ints of any length up to `max` (an int gives one item).
 * False when the attribute is absent or of another kind; reports nothing. */
bool attr_int_list(const xnode *node, const op_desc *d, const char *name, int max, int64_t *out, int *n);
/* The same for inference: reports "attribute 'dims' must be ..." on failure. */
bool infer_int_list(op_infer_ctx *c, const char *name, int max, int64_t *out, int *n);
/* "[2, 3]" of a tinfo, for messages (the caller's buffer). */
char *tinfo_str(char *buf, size_t len, const tinfo *t);
/* Inference check that input `port` is present; reports "missing input 'x'". */
bool infer_need(op_infer_ctx *c, int port);
/* The numel of an IR tensor given as port `port` of `n` (0 when absent or not bound). */
int64_t node_port_numel(const xgraph *g, const xnode *n, int port);
/* The numel of result `k` of `n` (0 when discarded or not bound). */
int64_t node_result_numel(const xgraph *g, const xnode *n, int k);

/* `pads` of a pad node as before/after amounts per dim, from any of its forms (int,
 * rank ints, 2*rank ints [b0, a0, ...], rank [b, a] pairs); false if none fits.
 * Shared by the CPU reference and the GPU copy engine. */
bool pad_amounts(const xnode *n, const op_desc *d, int rank, int64_t *before, int64_t *after);

#endif
