/* ir.h — the op-graph IR every part of xdnn shares.
 *
 * One xdnn_module holds the flattened program: includes resolved, fragments
 * expanded, infix and nested calls turned into nodes with generated names
 * (y.0, y.1, ...).  Dims, attributes and initializer arguments stay symbolic
 * (expr *) so the module can be written back as JSON or .dnn unchanged; the
 * `r*` fields are filled by graph_bind() for one set of param values.
 *
 * Tensors and nodes are referred to by index into their graph's arrays.
 */
#ifndef XDNN_IR_H
#define XDNN_IR_H

#include "arena.h"
#include "diag.h"
#include "expr.h"
#include "strmap.h"

typedef struct xparam {
    const char *name;
    expr *value;         /* default value or derivation */
    expr **sweep;        /* sweep [..] list, may be empty */
    int nsweep;
    bool derived;        /* value mentions another param: cannot be --set */
    xloc loc;
    /* bound */
    value rvalue;
    bool bound, binding; /* binding: evaluation in progress (cycle check) */
    bool overridden;     /* set from the command line */
} xparam;

typedef struct xassert {
    expr *cond;
    const char *msg;     /* may be NULL */
    xloc loc;
} xassert;

/* Layout of a tensor in memory.  Dims are always logical (the op's canonical
 * order); the layout says how they are laid out.  LAYOUT_NAMED tags: row, col,
 * nchw, nhwc, ncdhw, ndhwc, bhsd, bshd, sbhd. */
typedef enum layout_kind { LAYOUT_DEFAULT = 0, LAYOUT_NAMED, LAYOUT_PERM, LAYOUT_STRIDES } layout_kind;

typedef struct xlayout {
    layout_kind kind;
    const char *name;    /* tag for LAYOUT_NAMED */
    expr **args;         /* perm or strides */
    int nargs;
    xloc loc;
} xlayout;

/* An initializer call: fn(args...).  Positional arguments are given their
 * parameter names by the front end, so `names` has no NULL entries. */
typedef struct xinit {
    const char *fn;      /* uniform randn fill zeros ones arange values load */
    const char **names;
    expr **args;
    int nargs;
    xloc loc;
} xinit;

typedef enum tensor_kind { TK_INPUT, TK_WEIGHT, TK_VIRTUAL } tensor_kind;

typedef struct xtensor {
    const char *name;
    tensor_kind kind;
    bool is_output;       /* materialized graph output */
    bool keep;            /* reported and materialized on request (run --keep) */
    bool has_dtype;       /* declared or annotated dtype (on the target: what consumers read) */
    xdnn_dtype dtype;
    bool has_odtype;      /* annotated in `output y: dt`: the stored copy's dtype only */
    xdnn_dtype odtype;
    expr **dims;          /* declared dims (inputs/weights); NULL for virtuals */
    int rank;             /* declared rank */
    xlayout layout;
    xinit *init;          /* inputs/weights; NULL = default (uniform) */
    int producer;         /* node index, -1 for inputs/weights */
    xloc loc;
    /* bound */
    xdnn_dtype rdtype;    /* as stored and reported (an output's declared dtype) */
    xdnn_dtype rvdtype;   /* as consumers read it: differs from rdtype only for an output that other
                             ops read, whose value keeps the dtype it would have unmarked (dnn(5)) */
    int rrank;
    int64_t rdims[XDNN_MAX_RANK];
    int64_t rstrides[XDNN_MAX_RANK]; /* in elements */
    int64_t rnumel;
    bool rdefined;        /* shape known (bind reached it) */
} xtensor;

/* A node's input port: a tensor, a compile-time scalar (`0.5 * x`), or absent. */
typedef struct xport {
    int tensor;           /* index or -1 */
    expr *scalar;         /* by-value scalar when tensor < 0; NULL = absent */
} xport;

typedef struct xattr {
    const char *name;
    expr *e;
    xloc loc;
} xattr;

typedef struct xnode {
    const char *name;     /* = its first target, or the generated y.k */
    int op;               /* index into the op table (op_id) */
    xport *inputs;        /* one per port of the op, in descriptor order */
    int ninputs;
    int *results;         /* one per result port; -1 = discarded or beyond the variant */
    int nresults;         /* number of targets written: selects the variant */
    xattr *attrs;         /* as written (defaults not filled) */
    int nattrs;
    xloc loc;
    const char *origin;   /* "in fragment 'f' called from file:l:c" chain, may be NULL */
    /* bound: one value per attribute of the op's descriptor, defaults filled */
    value *rattrs;
    value *rscalars;      /* per input port: value of a by-value scalar */
} xnode;

typedef struct xcheck {
    int tensor;
    xinit *ref;
    expr *rtol, *atol;    /* may be NULL: per-dtype defaults */
    xloc loc;
} xcheck;

typedef struct xgraph {
    xdnn_module_t *module;
    const char *name;
    xloc loc;
    /* context; NULL = default (io: from inputs, compute f32, intermediate f32, seed 0) */
    expr *ctx_io, *ctx_compute, *ctx_intermediate, *ctx_seed, *ctx_tf32;
    xtensor *tensors;
    size_t ntensors, captensors;
    strmap tensor_index;  /* name -> index into tensors (ir_add_tensor keeps it) */
    xnode *nodes;
    size_t nnodes, capnodes;
    int *outputs;         /* tensor indices, in `output` order */
    size_t noutputs, capoutputs;
    xcheck *checks;
    size_t nchecks, capchecks;
    xparam *params;       /* graph-scoped params */
    size_t nparams, capparams;
    strmap param_index;   /* name -> index into params (ir_add_param keeps it) */
    xassert *asserts;
    size_t nasserts, capasserts;
    /* bound */
    xdnn_dtype rio, rcompute, rintermediate;
    bool rio_set;
    uint64_t rseed;
    bool rtf32;
    bool bound;
} xgraph;

struct xdnn_module {
    arena *ar;
    const char **sources; /* main file first, then includes */
    size_t nsources, capsources;
    xparam *params;
    size_t nparams, capparams;
    strmap param_index;   /* name -> index into params (ir_add_param keeps it) */
    xassert *asserts;
    size_t nasserts, capasserts;
    xgraph **graphs;
    size_t ngraphs, capgraphs;
    int default_graph;    /* index, -1 = the last one */
    /* Confined (xdnn_module_load_confined): includes and load() read only files
     * under these folders (canonical paths: the graph's own, then -I ones). */
    const char **roots;
    size_t nroots;
    /* A plan's graph (plan_build.c): load() reads only under the folder a run
     * resolves its paths against (the plan's own), with or without --sandbox:
     * a plan is a file from elsewhere, like an untrusted graph. */
    bool confine_to_base;
};

/* NULL when `path` (as given in an include or load()) may be read by a
 * module confined to m->roots, else why not; always NULL for an unconfined
 * module.  `full` is the path as resolved against the including file. */
const char *module_confinement(const xdnn_module_t *m, const char *path, const char *full);
/* The same for a load() resolved against base_dir: also confines a plan's
 * graph (confine_to_base) to base_dir. */
const char *module_confinement_at(const xdnn_module_t *m, const char *path, const char *full, const char *base_dir);

/* ---- building (used by the .dnn front end, the JSON reader and the C API) */
xgraph *ir_add_graph(xdnn_module_t *m, const char *name, xloc loc);
/* Returns the index, or -1 after reporting a redefinition. */
int ir_add_tensor(xgraph *g, const char *name, tensor_kind kind, xloc loc, xdnn_diags_t *d);
int ir_find_tensor(const xgraph *g, const char *name);
/* New node with `op`'s port and result arrays sized from its descriptor. */
xnode *ir_add_node(xgraph *g, int op, const char *name, xloc loc);
/* A graph's param (g may be NULL), else the module's; NULL when neither has it. */
xparam *ir_find_param(xdnn_module_t *m, const xgraph *g, const char *name);
/* Append p to g's params (g != NULL) or the module's; the caller has checked
 * that the name is new.  Returns the stored param. */
xparam *ir_add_param(xdnn_module_t *m, xgraph *g, xparam p);
int ir_node_index(const xgraph *g, const xnode *n);

/* Strides (elements) for a named layout, or false if the tag is unknown or the
 * rank does not fit it. */
bool layout_perm_for_tag(const char *tag, int rank, int *perm);
void strides_from_perm(int rank, const int64_t *dims, const int *perm, int64_t *strides);
/* Name of a layout as written (row, nhwc, perm(0,2,1), strides(...)). */
char *layout_to_text(arena *a, const xlayout *l);

/* ---- binding (bind.c) */
/* Evaluate an expression in the scope of graph g (graph params, then module params). */
bool graph_eval(xgraph *g, const expr *e, xdnn_diags_t *d, value *out);

#endif
