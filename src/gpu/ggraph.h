/* ggraph.h — the GPU backend's own, flat view of one bound graph.
 *
 * Everything in src/gpu (partitioner, code generators, engines, planner) works
 * on this small struct rather than on the IR, so it can be unit-tested without
 * the op families and built directly by tests/gpu/difftest.c.  lower.c fills it
 * from a bound xgraph.
 *
 * Tensors carry their bound dtype, logical dims and strides (elements; 0 = a
 * broadcast dim).  Pointwise nodes carry their math as a C expression over the
 * operands `a`, `b`, `c` (f32 values; attributes already folded to literals),
 * so one text drives the CPU reference and the generated kernels.
 */
#ifndef XDNN_GPU_GGRAPH_H
#define XDNN_GPU_GGRAPH_H

#include "core/arena.h"
#include "xdnn.h"

#include <stdbool.h>
#include <stdint.h>

/* 16 inputs, 8 results: enough for sdpa (14 ports with the fp8 scales), sdpa_bwd (11 ports with the ragged
 * offsets) and lstm_bwd (10 ports, 7 results).  lower.c keeps the first GG_MAX_IN ports of a node
 * (test_gpu_lower checks that every fixed-arity op fits). */
enum { GG_MAX_IN = 16, GG_MAX_OUT = 8 };

typedef enum gnode_kind {
    GN_POINTWISE,  /* expr over a, b, c */
    GN_REDUCE,     /* reduce over `axes` with `red` */
    GN_SOFTMAX,    /* softmax / log_softmax over `axis` */
    GN_MATMUL,     /* [..., M, K] x [..., K, N] with trans flags, batch broadcast */
    GN_OTHER       /* anything else: no GPU engine yet */
} gnode_kind;

/* Pointwise patterns the matmul engine can hand to cuBLASLt epilogues. */
typedef enum gpw_tag { PWT_OTHER = 0, PWT_ADD, PWT_RELU, PWT_GELU_TANH, PWT_CAST } gpw_tag;

typedef enum gred_op { RED_SUM, RED_MEAN, RED_MAX, RED_MIN, RED_AMAX, RED_PROD, RED_NORM1, RED_NORM2 } gred_op;

typedef struct gtensor {
    const char *name;
    xdnn_dtype dtype;
    int rank;
    int64_t dims[XDNN_MAX_RANK];
    int64_t strides[XDNN_MAX_RANK];
    int64_t numel;
    bool is_input;     /* input or weight: uploaded before the run */
    bool is_weight;    /* declared `weight`: constant across executes when the plan is built with
                          const_weights (constfold.c); an `input` never is */
    bool is_output;    /* graph output: downloaded after the run */
    bool is_scalar;    /* a by-value scalar operand (no storage) */
    double scalar;
    int producer;      /* node index or -1 */
    int nconsumers;    /* filled by gg_finish */
    int ir_index;      /* index into run_state tensors, -1 if none */
    /* A view (views.c): it reads tensor view_of's storage from element
     * view_offset on, through its own strides; no node writes it, except a
     * concat's piece placed in the concat's result (producer >= 0).  -1: owns
     * its storage.  view_of is never itself a view. */
    int view_of;
    int64_t view_offset;
} gtensor;

typedef struct gnode {
    const char *name;
    const char *op;    /* op name, for messages and --engine OP=ENGINE */
    int op_id;         /* its op_id in the op table (ops/op.h); -1 for an unknown name */
    gnode_kind kind;
    int in[GG_MAX_IN];
    int nin;
    int out;
    /* pointwise */
    const char *expr;
    gpw_tag tag;
    /* reduce */
    gred_op red;
    uint32_t axes;     /* bit i: dim i of the input is reduced */
    /* softmax */
    int axis;
    bool log_softmax;
    /* matmul */
    bool trans_a, trans_b;
    double flops;      /* from the op descriptor; 0 = estimate */
    /* every result of a multi-result op (GN_OTHER), -1 where discarded;
     * outs[0] == out.  nouts = 0 in hand-built single-result nodes. */
    int outs[GG_MAX_OUT];
    int nouts;
    /* the IR node it was lowered from (NULL in hand-built graphs): engines of
     * GN_OTHER ops read their attributes through ops/op.h */
    const struct xnode *ir;
} gnode;

typedef struct ggraph {
    arena *ar;         /* owns everything below (borrowed) */
    gtensor *t;
    int nt, capt;
    gnode *n;
    int nn, capn;
    bool tf32;
    uint64_t seed;     /* the graph's bound seed (dropout / rng keys) */
    bool sizes_as_args; /* a plan with dynamic params: generated pointwise kernels take their sizes as
                           arguments (codegen.c), so another size of the same shape class compiles nothing */
} ggraph;

ggraph *gg_create(arena *ar);
/* A stored tensor with row-major strides (strides NULL) or the given ones. */
int gg_tensor(ggraph *g, const char *name, xdnn_dtype dt, int rank, const int64_t *dims,
              const int64_t *strides);
int gg_scalar(ggraph *g, double v);
/* Add a node; its output tensor `out` must exist.  Returns the node index. */
int gg_node(ggraph *g, gnode_kind kind, const char *name, const char *op, int nin, const int *in, int out);
/* Set producers and consumer counts after all nodes were added.  A view's
 * readers also count as readers of the tensor it views. */
void gg_finish(ggraph *g);
/* The tensor whose storage t reads: t itself, or what it is a view of. */
static inline int gg_storage(const ggraph *g, int t) { return t >= 0 && g->t[t].view_of >= 0 ? g->t[t].view_of : t; }
/* Point every view at its storage: dptr[v] = dptr[view_of] + offset (after
 * the storage pointers are set; views of a NULL pointer stay NULL). */
void gg_bind_views(const ggraph *g, void **dptr);

/* Bytes a tensor spans in memory (its strides may leave gaps). */
size_t gg_span_bytes(const gtensor *t);
/* Bytes per element (kept here so src/gpu needs nothing beyond core). */
size_t gg_dtype_bytes(xdnn_dtype dt);
const char *gg_dtype_name(xdnn_dtype dt);
bool gg_same_dims(const gtensor *a, const gtensor *b);
/* Row-major with no gaps (size-1 dims may have any stride). */
bool gg_packed(const gtensor *t);
const char *gg_kind_name(gnode_kind k);

#endif
