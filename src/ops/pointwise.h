/* pointwise.h — the pointwise, reduce and softmax families as data, for the
 * reference (pointwise.c, reduce.c, softmax.c) and the GPU code generator:
 * every pointwise op's descriptor carries a pw_mode in desc->family with the
 * mode's expression text (see pointwise_modes.def for the variables it uses)
 * and its double evaluator. */
#ifndef XDNN_POINTWISE_H
#define XDNN_POINTWISE_H

#include "op.h"

enum { PW_MAX_PARAMS = 3 };

typedef enum pw_out {
    PW_OUT_SAME, /* dtype of the first tensor operand (select: of a/b) */
    PW_OUT_BOOL, /* comparisons and logic */
    PW_OUT_CAST  /* the `dtype` attribute */
} pw_out;

/* Evaluator of one mode on doubles.  Forward: (a, b, c) are the inputs in port
 * order; backward: (dy, x, unused).  p0..p2 as pw_params() fills them. */
typedef double (*pw_eval_fn)(double in0, double in1, double in2, double p0, double p1, double p2);

typedef struct pw_mode {
    const char *name; /* the op name: "relu", "relu_bwd" */
    int arity;        /* tensor inputs: 1..3 (backward: 2) */
    pw_out out;
    bool backward;    /* inputs are (dy, x); expr uses dy and a */
    const char *expr; /* the C expression text, as written in pointwise_modes.def */
    pw_eval_fn eval;
} pw_mode;

/* The mode of a pointwise op, or NULL if `d` is not one. */
const pw_mode *pw_mode_of(const op_desc *d);

/* The op's numeric parameters p0..p2 from the bound attributes, in declaration
 * order: floats and ints as numbers (absent = +infinity), bools as 0/1,
 * strings with choices as the index of the value, dtypes skipped.  Unused
 * slots are 0.  Returns the number filled. */
int pw_params(const xnode *n, const op_desc *d, double p[PW_MAX_PARAMS]);

/* reduce: mask[i] = axis i is reduced, from the node's bound `axes` (absent =
 * all).  False with a reason in `why` if an axis is out of range or repeated. */
bool reduce_axes_mask(const xnode *n, const op_desc *d, int rank, bool *mask, char *why, size_t why_len);

#endif
