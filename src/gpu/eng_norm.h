/* eng_norm.h — the host-side analysis behind the norm_welford engine
 * (eng_norm.c), exposed so unit tests can check it without a GPU: which ops
 * it runs, how x's dims become canonical row / reduced dims with one stride
 * per operand (kern_norm.h), and the launch geometry it picks. */
#ifndef XDNN_GPU_ENG_NORM_H
#define XDNN_GPU_ENG_NORM_H

#include "gpu/device.h"
#include "gpu/kern_norm.h"
#include "gpu/partition.h"

#include <stdbool.h>
#include <stddef.h>

typedef enum norm_kind {
    NK_BN, NK_BN_INFER, NK_BN_BWD, NK_LN, NK_LN_BWD, NK_RMS, NK_RMS_BWD,
    NK_GN, NK_GN_BWD, NK_IN, NK_IN_BWD, NK_SMB, NK_LSMB,
    NK_SM, NK_LSM, /* softmax / log_softmax forward over the last axis: a reduce partition (warp rows) */
    NK_NONE
} norm_kind;

/* The op name as a norm_kind (NK_NONE for other ops). */
norm_kind gpu_norm_kind(const char *op);

typedef struct norm_plan {
    norm_kind kind;
    int tid[NG_NOPS];          /* ggraph tensor of each operand, -1 = none */
    int64_t numel;             /* elements of x */
    int64_t rows, D;           /* statistics rows and elements per row */
    bool index64;
    bool row_fast;             /* one block per row, row in registers (forward) */
    bool warp_rows;            /* forward and backward: a warp (or a few) per row when the rows are 16-byte
                                  aligned at execute (kernels/norm_warp.cu), else row_fast's block */
    int64_t ldx, ldy;          /* softmax rows: the row strides of x and y, in elements */
    bool cl;                   /* batchnorm over channels-last x: kernels/norm_cl.cu */
    bool cl1_held;             /* ... in one launch (stats.cl1, norm_cl1.cu) holding every row on chip */
    int gen_splits;            /* genstats (genstats.h): the producing conv's M tiles wrote the partials
                                  (part[gen_splits][C][4]): no reduce launch; 0 = its own reduce */
    bool pgrad_from_rows;      /* batchnorm_bwd: dscale/dbias are the row sums */
    bool has_pgrad;            /* a backward writing dscale/dbias */
    bool pg_fused;             /* row backward: dscale/dbias summed in the dx pass (ng_launch_row_bwd_pg) */
    bool smb_rows;             /* softmax_bwd / log_softmax_bwd on the warp rows (kernels/softmax_warp_bwd.cu;
                                  the default; XDNN_SOFTMAX_BWD_ROWS=0), else the split reduction */
    ng_job stats;              /* reduce + finalize over the rows (or the loads of the backward) */
    ng_job load;               /* backward: saved mean/inv -> workspace */
    ng_job pgrad;              /* parameter-gradient reduce + finalize */
    int apply_mode;            /* ng_apply_mode */
    int act_node;              /* the fused activation's node, -1 = none */
    int join_relu, join_add;   /* the fused join's nodes (gpu_norm_join), -1 = none */
    char detail[192];          /* norm_detail's text */
    /* workspace layout, bytes from the partition's workspace base */
    size_t off_part, off_rows[6], ws_bytes;
    bool gn;                   /* groups v2 (unless XDNN_GROUPNORM_V2=0): group / instance norm on
                                  kernels/norm_group.cu (gnj: its geometry; pointers bound at execute) */
    ng_gn_job gnj;
} norm_plan;

/* The ng_act a norm partition can apply for pointwise node `node` (relu,
 * silu, gelu either form), NGACT_NONE for any other node. */
int gpu_norm_act(const ggraph *g, int node);
/* The y of node `node` when it is a normalization forward whose activation
 * could be fused (partition.c asks), else -1. */
int gpu_norm_fusable_y(const ggraph *g, int node);
/* Is node `node` a forward normalization whose y may take a fused residual
 * add `y + r` (then optionally an activation of the sum)?  Batchnorm, training
 * and inference: their applies (kernels/norm.cu k_apply, norm_cl.cu) read r;
 * the layer/rms row and warp kernels do not. */
bool gpu_norm_fusable_res(const ggraph *g, int node);
/* dx of a layernorm / rmsnorm backward node (else -1), and the other operand r
 * of `node` when it is `dx + r` (or `r + dx`) of dx's dims and dtype, which
 * norm_welford adds to dx (rounded to dx's dtype) before storing (else -1).
 * A forward's y takes the same add (gpu_norm_fusable_res). */
int gpu_norm_fusable_dx(const ggraph *g, int node);
int gpu_norm_res_add(const ggraph *g, int node, int dx);

/* Is the dy of batchnorm_bwd node `node` made by a relu_bwd(a, m) or
 * relu_bwd(a + b, m) (the add read by nothing else) that its channels-last
 * reduce can compute (kernels/norm_cl.cu): every x-shaped tensor of x's dtype
 * and layout, channels-last rows, no broadcast?  *relu and *add get the
 * nodes (*add -1 without one).  XDNN_NO_NORM_JOIN=1 (or XDNN_NORM_NO_CL)
 * says no.  partition.c asks; the partition also needs dy stored (it has
 * other readers). */
bool gpu_norm_join(const ggraph *g, int node, int *relu, int *add);

/* Analyze partition p (a single norm / softmax_bwd node, or a lone softmax /
 * log_softmax over contiguous last-axis rows) for a device with
 * sm_count SMs.  False with a reason naming the op and attribute/tensor. */
bool gpu_norm_analyze(const gplan *pl, const gpart *p, int sm_count, norm_plan *np, char *why, size_t len);

/* Can partition p take its statistics from the conv that writes its x
 * (genstats.h)?  A batchnorm in training mode on the channels-last kernels
 * (norm_cl.cu), x f16 or bf16: *x gets x's tensor, *C its channels, *M its
 * rows (N*H*W).  False with the reason. */
bool gpu_norm_genstats_ok(const gplan *pl, const gpart *p, const gpu_device *dev, int *x, int64_t *C, int64_t *M,
                          char *why, size_t len);

#endif
