/* op.h — what an op is: its descriptor (ports, results, typed attributes with
 * defaults), its shape/dtype inference and its CPU reference.
 *
 * Every op is registered once, in ops.def; its descriptor `op_<id>_desc`
 * lives in src/ops/<family>.c together with its inference and reference.
 * Nothing outside src/ops knows about individual ops.
 */
#ifndef XDNN_OP_H
#define XDNN_OP_H

#include "../core/ir.h"

enum { OP_MAX_PORTS = 32, OP_MAX_RESULTS = 32 };

typedef enum op_id {
#define XDNN_OP(id) OP_##id,
#include "ops.def"
#undef XDNN_OP
    OP_COUNT
} op_id;

/* The family of an op in ops.def. */
typedef enum op_class {
    OPC_POINTWISE, OPC_REDUCE, OPC_MATMUL, OPC_CONV, OPC_POOL, OPC_NORM, OPC_SDPA, OPC_RNN, OPC_TENSOR,
    OPC_RANDOM, OPC_QUANT, OPC_INDEX, OPC_COUNT
} op_class;

op_class op_class_of(int op);
const char *op_class_name(op_class c);   /* "pointwise", "conv", ... */

/* Attribute types.  Checked generically by bind before infer runs:
 *  AT_INT     int (bool not accepted)          AT_INTS   int or list of ints (an int broadcasts)
 *  AT_FLOAT   int or float                     AT_FLOATS number or list of numbers
 *  AT_BOOL    bool                             AT_STRING string (one of `choices`, if given)
 *  AT_DTYPE   dtype                            AT_PADS   int | [int...] | [[lo,hi]...] | "same"
 */
typedef enum attr_type { AT_INT, AT_FLOAT, AT_BOOL, AT_STRING, AT_INTS, AT_FLOATS, AT_DTYPE, AT_PADS } attr_type;

typedef struct attr_spec {
    const char *name;
    attr_type type;
    const char *dflt;    /* default as .dnn expression text; NULL = no default (VAL_NONE) */
    const char *choices; /* AT_STRING: "a|b|c", or NULL */
    const char *doc;     /* one line for `xdnn ops` and man/dnn.5 */
} attr_spec;

/* Shape/dtype facts of one tensor during inference. */
typedef struct tinfo {
    xdnn_dtype dtype;
    int rank;
    int64_t dims[XDNN_MAX_RANK];
    bool exact_dtype;  /* infer: the op chose dtype on purpose (quantize's dtype=): only an
                          annotation overrides it, not the graph's io/intermediate types */
} tinfo;

typedef struct op_desc op_desc;

typedef struct op_infer_ctx {
    const op_desc *desc;
    const xgraph *graph;
    const xnode *node;        /* node->rattrs are bound (defaults filled) */
    const tinfo *in[OP_MAX_PORTS]; /* NULL = absent; a by-value scalar is rank 0 */
    int nin;                  /* ports given (variadic ops: the tensors passed) */
    tinfo out[OP_MAX_RESULTS];/* fill out[0..nresults-1]: rank, dims, natural dtype */
    int nresults;             /* number of targets: the variant */
    xdnn_diags_t *diags;
} op_infer_ctx;

/* Reference tensors are packed row-major doubles in logical dim order; the
 * executor gathers inputs through their strides/dtypes and scatters outputs
 * back (rounding to the output's dtype), so references never see layouts. */
typedef struct ref_tensor {
    double *data;
    int rank;
    int64_t dims[XDNN_MAX_RANK];
    int64_t numel;
    xdnn_dtype dtype;         /* the storage dtype (cast and rounding semantics) */
} ref_tensor;

typedef struct op_ref_ctx {
    const op_desc *desc;
    const xgraph *graph;
    const xnode *node;
    const ref_tensor *in[OP_MAX_PORTS];  /* NULL = absent */
    int nin;
    ref_tensor *out[OP_MAX_RESULTS];     /* NULL = beyond the variant; discarded results get scratch */
    int nresults;
    uint64_t seed;            /* graph seed (dropout, rng) */
    xdnn_diags_t *diags;
} op_ref_ctx;

typedef xdnn_status (*op_infer_fn)(op_infer_ctx *c);
typedef xdnn_status (*op_ref_fn)(op_ref_ctx *c);

struct op_desc {
    const char *name;
    const char *summary;
    const char *const *ports;  /* input port names, positional order */
    int nports;
    int nrequired;             /* ports [nrequired, nports) are optional */
    bool variadic;             /* the last port repeats (concat): ports x0, x1, ... */
    const char *const *results;
    int nresults;              /* max results (variadic_results: upper bound) */
    uint32_t result_counts;    /* bit k set: k targets allowed; 0 = exactly nresults */
    bool variadic_results;     /* split: as many results as targets */
    const attr_spec *attrs;
    int nattrs;
    op_infer_fn infer;
    op_ref_fn reference;
    /* Cost model for the bench and heuristics; NULL = elementwise estimate. */
    double (*flops)(const xgraph *g, const xnode *n);
    const void *family;        /* family-private data (e.g. the pointwise mode) */
};

extern const op_desc *const op_table[OP_COUNT];

/* Lookup by .dnn name; -1 if unknown. */
int op_lookup(const char *name);
static inline const op_desc *op_get(int id) { return op_table[id]; }
int op_port_index(const op_desc *d, const char *port);
int op_attr_index(const op_desc *d, const char *attr);

/* ---- helpers for infer and reference (op_util.c) */

/* Report "<op>: message" at the node, with the fragment origin as a note. */
xdnn_status op_error(op_infer_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
xdnn_status op_unsupported(op_infer_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
xdnn_status op_ref_error(op_ref_ctx *c, xdnn_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

const value *op_attr(const xnode *n, const op_desc *d, const char *name);
int64_t op_attr_int(const xnode *n, const op_desc *d, const char *name);
double op_attr_float(const xnode *n, const op_desc *d, const char *name);
bool op_attr_bool(const xnode *n, const op_desc *d, const char *name);
const char *op_attr_str(const xnode *n, const op_desc *d, const char *name);
bool op_attr_present(const xnode *n, const op_desc *d, const char *name);
/* An int or list attr as exactly `n` ints (a single int broadcasts). */
bool op_attr_ints(op_infer_ctx *c, const char *name, int n, int64_t *out);
bool op_attr_ints_n(const xnode *node, const op_desc *d, const char *name, int n, int64_t *out);
/* Normalize an axis (negative counts from the end); false if out of range. */
bool op_axis(int rank, int64_t axis, int *out);

/* NumPy broadcasting of n shapes into out (rank = max rank). */
bool shape_broadcast(const tinfo *const *shapes, int n, tinfo *out);
/* "[32, 64, 56, 56]" into an arena-free static-free buffer the caller owns. */
char *shape_str(char *buf, size_t len, int rank, const int64_t *dims);
int64_t shape_numel(int rank, const int64_t *dims);
/* Row-major strides for dims. */
void shape_strides(int rank, const int64_t *dims, int64_t *strides);
/* Offset into a packed tensor of `rank` from an index that may have lower rank
 * and size-1 (broadcast) dims: NumPy right-aligned broadcasting. */
int64_t ref_broadcast_offset(const ref_tensor *t, int out_rank, const int64_t *out_idx);
/* Advance a row-major multi-index; false after the last. */
bool index_next(int rank, const int64_t *dims, int64_t *idx);

#endif
