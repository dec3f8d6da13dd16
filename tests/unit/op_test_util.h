/* op_test_util.h — helpers for unit tests that call an op's infer and
 * reference directly: a hand-made node whose bound attributes (rattrs) hold
 * the descriptor's defaults, setters to override them, and contexts.
 *
 * Typical use:
 *     arena *a = arena_create();
 *     xnode n;
 *     optest_node(a, &n, &op_conv_desc);           // defaults filled
 *     optest_set_int(&n, &op_conv_desc, "stride", 2);
 *     int64_t pads[] = {1, 2, 0, 1};              // [[1, 2], [0, 1]]
 *     optest_set_pads(&n, &op_conv_desc, "pad", 2, pads);
 *     ...
 *     arena_destroy(a);
 *
 * Setters return false (and print to stderr) when the attribute is unknown
 * to the descriptor, so a typo fails the test instead of being ignored.
 */
#ifndef XDNN_OP_TEST_UTIL_H
#define XDNN_OP_TEST_UTIL_H

#include "ops/op.h"

/* Longest list a setter stores (values per attribute, nested pairs included). */
enum { OPTEST_MAX_LIST = 3 * XDNN_MAX_RANK };

/* Zero *n, allocate n->rattrs (one value per attribute of d, plus list
 * storage for the setters) in `a`, and fill each with its default: the
 * attr_spec's dflt text parsed with expr_parse_text and folded with expr_eval
 * (no params in scope).  An attribute without a default is VAL_NONE.
 * n->op is set when d is registered in op_table. */
void optest_node(arena *a, xnode *n, const op_desc *d);

bool optest_set_int(xnode *n, const op_desc *d, const char *name, int64_t v);
bool optest_set_float(xnode *n, const op_desc *d, const char *name, double v);
bool optest_set_bool(xnode *n, const op_desc *d, const char *name, bool v);
/* The string is borrowed: keep it alive while the node is used (literals are fine). */
bool optest_set_str(xnode *n, const op_desc *d, const char *name, const char *v);
/* A list of k ints (k <= XDNN_MAX_RANK). */
bool optest_set_ints(xnode *n, const op_desc *d, const char *name, int k, const int64_t *vals);
/* A list of k floats (k <= XDNN_MAX_RANK). */
bool optest_set_floats(xnode *n, const op_desc *d, const char *name, int k, const double *vals);
/* A list of k [before, after] pairs, lo_hi interleaved: {lo0, hi0, lo1, hi1, ...}. */
bool optest_set_pads(xnode *n, const op_desc *d, const char *name, int k, const int64_t *lo_hi);
/* Any value; items of a list are borrowed. */
bool optest_set_value(xnode *n, const op_desc *d, const char *name, const value *v);
/* Reset to VAL_NONE (as if the attribute had no default and was not given). */
bool optest_unset(xnode *n, const op_desc *d, const char *name);

/* Run an op on reference tensors: infer (tinfo from each input, dtype f32),
 * allocate out[0..nout) with the inferred dims (free with optest_ref_free),
 * then the reference.  in[i] may be NULL (absent port); nout selects the
 * variant.  Returns the first failing status (outputs are then unallocated
 * where infer failed). */
xdnn_status optest_run(const op_desc *d, const xnode *n, int nin, const ref_tensor *const *in, int nout,
                       ref_tensor *out, xdnn_diags_t *diags);
/* Infer only: fills out[0..nout) with the result shapes. */
xdnn_status optest_infer(const op_desc *d, const xnode *n, int nin, const tinfo *const *in, int nout, tinfo *out,
                         xdnn_diags_t *diags);
/* Message of the first error in diags, or "" when there is none. */
const char *optest_first_error(const xdnn_diags_t *diags);

/* A tinfo from a dims list. */
tinfo optest_tinfo(xdnn_dtype dt, int rank, const int64_t *dims);

/* A packed ref_tensor of dims with malloc'ed data (NaN-filled); free with
 * optest_ref_free. */
ref_tensor optest_ref_alloc(int rank, const int64_t *dims);
void optest_ref_free(ref_tensor *t);

#endif
