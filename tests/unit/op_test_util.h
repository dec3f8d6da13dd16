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
 * The checking helpers below count and report through test_util.h.
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
/* optest_run with the dtype infer sees for each input: dts[i] (dts NULL: all
 * f32, which is optest_run), for ops whose inference checks dtypes. */
xdnn_status optest_run_typed(const op_desc *d, const xnode *n, int nin, const ref_tensor *const *in,
                             const xdnn_dtype *dts, int nout, ref_tensor *out, xdnn_diags_t *diags);
/* Infer only: fills out[0..nout) with the result shapes. */
xdnn_status optest_infer(const op_desc *d, const xnode *n, int nin, const tinfo *const *in, int nout, tinfo *out,
                         xdnn_diags_t *diags);
/* Message of the first error in diags, or "" when there is none. */
const char *optest_first_error(const xdnn_diags_t *diags);

/* optest_infer, with the first error's message copied to msg ("" when none). */
xdnn_status optest_infer_msg(const op_desc *d, const xnode *n, int nin, const tinfo *const *in, int nout, tinfo *out,
                             char *msg, size_t cap);
/* The first error message of inferring d, or "(no error)" when inference
 * succeeds; CHECKs that the status is XDNN_OK or XDNN_ERR_SEMANTIC (anything
 * else is a crash-class bug, not a message to compare).  The text lives in a
 * static buffer that the next call overwrites. */
const char *optest_infer_error(const op_desc *d, const xnode *n, int nin, const tinfo *const *in, int nout);
/* CHECKs that inferring d fails with XDNN_ERR_SEMANTIC and that the first
 * error message is exactly `want`. */
void optest_expect_infer_error(const op_desc *d, const xnode *n, int nin, const tinfo *const *in, int nout,
                               const char *want);

/* The registered op called name; CHECKs that there is one (NULL if not). */
const op_desc *optest_op_named(const char *name);

/* d->flops on a one-node graph whose bound tensors are in[0..nin) then
 * out[0..nout) (dtype, dims, strides, numel from the tinfos; an input of
 * rank -1 is an absent port); n keeps its attributes, its ports point at
 * those tensors only during the call. */
double optest_flops(const op_desc *d, xnode *n, int nin, const tinfo *in, int nout, const tinfo *out);

/* A tinfo from a dims list. */
tinfo optest_tinfo(xdnn_dtype dt, int rank, const int64_t *dims);

/* A packed ref_tensor of dims with malloc'ed data (NaN-filled); free with
 * optest_ref_free. */
ref_tensor optest_ref_alloc(int rank, const int64_t *dims);
void optest_ref_free(ref_tensor *t);

/* Deterministic test data, independent of the library's Philox (so a bug
 * there cannot hide in both the data and the answer).
 * optest_rand: xorshift64*, the next value uniform in [-1, 1) from *state
 * (nonzero).  optest_ref_of: optest_ref_alloc filled with vals, or with
 * optest_rand(rng) draws when vals is NULL.  optest_fill_lcg: t's values
 * become lo + (hi - lo) * u, u uniform in [0, 1) from a 64-bit LCG seeded
 * with seed. */
double optest_rand(uint64_t *state);
ref_tensor optest_ref_of(int rank, const int64_t *dims, const double *vals, uint64_t *rng);
/* A [n] tensor of the integers vals (sequence lengths, offsets, indices). */
ref_tensor optest_ref_ints(int64_t n, const int64_t *vals);
void optest_fill_lcg(ref_tensor *t, uint64_t seed, double lo, double hi);

/* The attention dropout rule of src/ops/sdpa.h, written out for the oracles
 * (not the library's sdpa_dropout_factor): is key j of flat row `row` = (b*Hq
 * + h)*Sq + i kept at probability p under key seed?  One Philox call per row
 * and 8 keys (counter row * ceil(Skv/8) + j/8, stream "sdpa"), 16 bits of it
 * per key, kept iff they are >= round(p * 65536). */
bool optest_sdpa_keep(uint64_t seed, int64_t row, int64_t Skv, int64_t j, double p);

#endif
