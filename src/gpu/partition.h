/* partition.h — grouping a ggraph's nodes into partitions, each run by one
 * engine, and deciding which tensors live in device memory.
 *
 * Rules (partition.c):
 *  - matmul + its single-consumer pointwise epilogue chain of the same shape
 *    (bias add, activation, scale, residual add, cast); a forward conv with
 *    the chain steps its engines apply in their store (conv_epi.h);
 *  - a conv_dgrad + the relu_bwd that alone reads its dx (the mask applied
 *    in the dgrad's store; XDNN_NO_DGRAD_EPI=1 keeps them apart);
 *  - a batchnorm_bwd + the relu_bwd (+ the add before it) that makes its dy,
 *    when dy is stored anyway (eng_norm.h gpu_norm_join; XDNN_NO_NORM_JOIN=1
 *    keeps them apart);
 *  - connected pointwise nodes of the same output shape (any broadcasting of
 *    their outside operands, mixed dtypes), merged only when no other
 *    partition sits on a path between them (no cycles);
 *  - reduce / softmax with the pointwise partition that feeds it when that
 *    partition exists only to feed it;
 *  - every other node alone.
 * A tensor is materialized when it is an input/weight, a graph output, or is
 * read by a partition other than its producer's; the rest stay in registers.
 */
#ifndef XDNN_GPU_PARTITION_H
#define XDNN_GPU_PARTITION_H

#include "gpu/ggraph.h"

#include <stdio.h>

typedef enum gpart_kind { GP_POINTWISE, GP_REDUCE, GP_MATMUL, GP_SINGLE } gpart_kind;

struct gpu_engine;

/* One engine as the selection saw it for one partition. */
typedef struct gcand {
    const struct gpu_engine *engine;
    bool ok;
    double cost;            /* estimated microseconds (ok ones) */
    const char *why;        /* reason it declined ("" when ok) */
} gcand;

typedef struct gpart {
    int id;
    const char *name;       /* its nodes joined by '+', in order */
    gpart_kind kind;
    int *nodes;             /* topological order */
    int nnodes;
    int anchor;             /* the reduce/softmax/matmul node, or -1 */
    int *ins;               /* materialized tensors it reads (no scalars) */
    int nins;
    int *outs;              /* materialized tensors it writes */
    int nouts;
    double flops, bytes;    /* cost-model counts */
    /* filled by the engine selection and planner */
    const struct gpu_engine *engine;
    void *priv;             /* engine state */
    size_t ws_bytes, ws_offset;
    const char *knobs;      /* forced knob text of the engine ("" = its own choice) */
    /* a remembered choice (the tune cache) taken unless a force names the
     * partition; set before gpu_select_engines, NULL = none */
    const struct gpu_engine *preset;
    const char *preset_knobs;
    gcand *cands;           /* every engine asked, in table order (arena) */
    int ncands;
    bool once;              /* constant: run when the plan is built, skipped by executes (constfold.c) */
    /* genstats (genstats.h): GS_WRITE, a forward conv whose store also writes the batchnorm statistics
     * partials of its y into the head of partition gen_peer's workspace; GS_READ, a batchnorm that takes
     * them from there instead of reducing x (set after the engine selection; GS_NONE = 0 otherwise) */
    int genstats;
    int gen_peer;
} gpart;

enum { GS_NONE, GS_WRITE, GS_READ };

typedef struct gplan {
    ggraph *g;
    gpart *parts;           /* in execution order */
    int nparts;
    int *part_of;           /* per node: its partition */
    bool *materialized;     /* per tensor */
    /* workspace (plan.c) */
    size_t *offset;         /* per tensor: offset in the workspace, or SIZE_MAX */
    size_t ws_total;
    /* the once partitions' results sit at the end, in [const_base, ws_total):
     * gpu_run keeps them in its workspace; a plan (backend_cuda.c) in device
     * memory of its own, outside the caller's workspace */
    size_t const_base;
    int nonce;              /* partitions marked once (gpu_mark_constants) */
    bool deterministic;     /* the plan's option: engines whose sums vary run to run order them or refuse */
} gplan;

/* Partition g (which must be gg_finish'ed); everything lives in g->ar.
 * `no_fusion` puts every node alone (for bisecting). */
gplan *gpu_partition(ggraph *g, bool no_fusion);
const char *gpart_kind_name(gpart_kind k);
void gpu_print_partitions(const gplan *p, FILE *f);

/* Plan-time constants (constfold.c, opt-in: a plan built with const_weights).
 * Marks `once` every partition that reads only weights (tensors declared
 * `weight`, which the option promises not to change between executes) or the
 * results of other once partitions, writes no graph output and holds no
 * random op: the casts and layout changes of constant weights.  Returns how
 * many.  Their results stay live for the whole plan (gpu_plan_workspace), the
 * first run computes them, later executes skip them. */
int gpu_mark_constants(gplan *p);

/* Liveness-based workspace layout (plan.c): every materialized tensor that is
 * neither an input/weight nor an output, plus each partition's engine
 * workspace (ws_bytes, live only during that partition), gets an offset in one
 * buffer, 256-byte aligned; buffers whose lifetimes overlap never overlap.
 * Results of once partitions come after all of those (const_base). */
void gpu_plan_workspace(gplan *p);

#endif
