/* codegen.h — CUDA C source for one partition, compiled at run time by NVRTC.
 *
 * Generated kernels are specialized on shapes, strides and dtypes (all become
 * literals, so index division is by constants) and use a grid-stride loop.
 * With ggraph.sizes_as_args (plans with dynamic params) a generated kernel
 * (pointwise, reduce, softmax) takes its element or row counts, dims and
 * strides (other than 1) as one by-value argument instead: its source then
 * depends on the shape class only (ranks, dtypes, reduced axes, broadcast
 * pattern, unit strides, vector width) and a new size of a known class is an
 * NVRTC cache hit; 64-bit index math, division by values.
 * Values are computed in f32; each tensor is loaded and stored in its own
 * dtype (f16/bf16 through cvt instructions, so no headers are needed).
 *
 *  pointwise:  one thread per output element of the partition's shape; each
 *              input read through its own strides with NumPy broadcasting.
 *              v2 (vectorized): when every stored tensor runs contiguously
 *              along the last dim (or an input broadcasts along it), each
 *              thread moves a 16-byte chunk of the narrowest dtype (8 f16 /
 *              4 f32 elements) with one 16-byte load or store per tensor
 *              (several for wider dtypes), broadcast inputs per element.
 *  reduce:     one block per output element ("row"), threads stride over the
 *              reduced elements (contiguous for the last-axis case), f32
 *              accumulation, warp-shuffle + shared-memory block reduction.
 *  softmax:    one block per row: max, sum of exp, write (log_softmax too).
 *  reduce v2 (the default since session 13, codegen_redcol.c): a column
 *              form for outer reduced axes and 16-byte row loads for last-axis
 *              ones, for plain contiguous reductions; 16-bit max/min/amax
 *              combine on packed pairs of the input's dtype (session 15).
 * Pointwise producers in the same partition are evaluated inline, in registers.
 */
#ifndef XDNN_GPU_CODEGEN_H
#define XDNN_GPU_CODEGEN_H

#include "gpu/partition.h"

enum { CG_BLOCK = 256 };

typedef struct cg_kernel {
    const char *name;      /* extern "C" kernel name */
    char *src;             /* arena-owned source */
    int *params;           /* tensor index per kernel pointer parameter, in order */
    int nparams;
    int64_t work;          /* elements (pointwise) or rows (reduce): grid sizing */
    bool per_row;          /* one block per unit of work */
    /* pointwise: elements per thread (1, or a 16-byte chunk of the narrowest
     * tensor); contig[t]: tensor t moves in chunks, its pointer must be
     * aligned to the chunk's word (checked at launch) */
    int vec;
    const char *contig;
    /* sizes_as_args: the values of the kernel's last argument (struct xd_sizes,
     * nvals 64-bit integers); NULL/0 when the sizes are literals */
    int64_t *vals;
    int nvals;
    /* reduce v2 (codegen_redcol.c); form 0: the forms above */
    int form;              /* CG_FORM_COL or CG_FORM_ROW */
    int align;             /* bytes the input's address must be aligned to (its vector loads) */
    unsigned grid_y;       /* column form: row splits; blocks along x are `work` */
    const char *name2;     /* column form with splits > 1: the kernel folding the partials, */
    int64_t work2;         /* over work2 threads (output elements; pairs of them when packed with vec > 1) */
    size_t ws_bytes;       /* the partials (f32, or the input's 16 bits when packed) in the partition's workspace */
    bool packed;           /* reduce v2: combined on packed 16-bit pairs (cg_redv2.packed) */
} cg_kernel;

enum { CG_FORM_COL = 1, CG_FORM_ROW = 2 };

/* Reduce v2's geometry: x viewed as [outer, rlen, cols] (codegen_redcol.c). */
typedef struct cg_redv2 {
    int form;              /* 0: not taken (cg_reduce's form) */
    int64_t outer, rlen, cols;
    int vec;               /* elements per load (16 bytes where cols, or rlen for rows, allows) */
    int lanes_c, lanes_r;  /* column form: column and row lanes of a 256-thread block */
    int64_t tiles, grid_x; /* column tiles per outer index; blocks along x */
    int splits;            /* row slices over blockIdx.y, split_rows rows each */
    int64_t split_rows;
    size_t ws_bytes;
    bool warp_rows;        /* row form: a warp per row (else a block) */
    /* max/min/amax of f16/bf16: the accumulator stays two values of the input's
     * dtype per 32-bit word (max.NaN/min.NaN .f16x2/.bf16x2, exact), partials
     * included; off with XDNN_REDUCE_PACKED=0 (f32 accumulation as the rest) */
    bool packed;
} cg_redv2;

/* Reduce v2 is on unless XDNN_REDUCE_V2=0 (the A/B with the forms above). */
bool cg_reduce_v2_enabled(void);
/* Its packed 16-bit max/min is on unless XDNN_REDUCE_PACKED=0. */
bool cg_reduce_packed_enabled(void);
/* Does the reduce `anchor` with `nprologue` prologue nodes take a v2 form?
 * Fills rc when it does (false with the switch off). */
bool cg_reduce_v2_plan(const ggraph *g, int anchor, int nprologue, cg_redv2 *rc);
/* The v2 kernel(s) of a reduce that cg_reduce_v2_plan accepted. */
xdnn_status cg_reduce_v2(const ggraph *g, int anchor, const cg_redv2 *rc, const char *kname, cg_kernel *k);
/* Pieces of codegen.c that codegen_redcol.c shares. */
const char *cg_prelude(void);
const char *cg_storage_type(xdnn_dtype t);
const char *cg_store_fn(xdnn_dtype t);
const char *cg_red_init(gred_op r);

/* The first tensor whose dtype generated code cannot load/store (fp8), or -1. */
int cg_unsupported_dtype(const ggraph *g, const int *tensors, int n);

/* Pointwise kernel over `nodes` (all pointwise, same output shape).  Tensors
 * not produced by `nodes` are loaded from memory; `outs` are stored. */
xdnn_status cg_pointwise(const ggraph *g, const int *nodes, int nnodes, const int *outs, int nouts,
                         const char *kname, cg_kernel *k);
/* Reduce or softmax kernel: `anchor` with its pointwise prologue `nodes`. */
xdnn_status cg_reduce(const ggraph *g, int anchor, const int *nodes, int nnodes, const char *kname,
                      cg_kernel *k);
/* Replace whole-word identifiers from[i] by to[i] in one pass (so a -> b,
 * b -> c swaps cleanly); numbers such as 1e-5 are left alone.  Arena-owned. */
char *cg_subst(arena *ar, const char *expr, const char *const *from, const char *const *to, int n);

#endif
