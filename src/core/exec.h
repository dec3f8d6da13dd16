/* exec.h — the run state of one bound graph (a host tensor per IR tensor) and
 * the CPU reference executor.  The GPU backend reads inputs from, and writes
 * outputs into, the same run_state, so the two are compared element by element. */
#ifndef XDNN_EXEC_H
#define XDNN_EXEC_H

#include "ir.h"
#include "tensor.h"

typedef struct run_state {
    xgraph *g;
    host_tensor *tensors;   /* one per g->tensors; data NULL until materialized */
    host_tensor *values;    /* one per g->tensors: what consumers read of an output stored in another
                               dtype (rvdtype != rdtype); data NULL for every other tensor */
    double *node_ms;        /* wall time of each node in the last run */
    double total_ms;
    const char *base_dir;   /* where relative load() paths start */
} run_state;

typedef struct input_override {
    const char *name;       /* tensor */
    const char *path;       /* .npy, .safetensors (path:key) or raw (.bin) */
} input_override;

xdnn_status run_state_init(run_state *st, xgraph *g, const char *base_dir);
void run_state_free(run_state *st);
/* Allocate output/virtual tensors in their bound dtype and strides (poisoned). */
xdnn_status run_state_alloc_results(run_state *st, xdnn_diags_t *d);
/* Fill every input and weight from its initializer or an override file. */
xdnn_status exec_load_inputs(run_state *st, const input_override *ov, int nov, xdnn_diags_t *d);
/* Run every node with the CPU reference, in order. */
xdnn_status exec_cpu_run(run_state *st, xdnn_diags_t *d);
/* Copy the inputs and weights of `src` into `dst` (same graph). */
xdnn_status run_state_copy_inputs(run_state *dst, const run_state *src);

/* Element-wise comparison |got - ref| <= atol + rtol*|ref|, NaN/Inf must match. */
typedef struct compare_worst {
    int64_t index[XDNN_MAX_RANK];
    double got, ref, abs_err, rel_err;
} compare_worst;

typedef struct compare_result {
    int64_t count, mismatches;
    double max_abs, max_rel, rel_norm;  /* ||got-ref|| / ||ref|| */
    compare_worst worst[5];
    int nworst;
    bool ok;
} compare_result;

void compare_tensors(const host_tensor *got, const host_tensor *ref, double rtol, double atol,
                     compare_result *r);
/* Default tolerance for a tensor produced by `op` in `dtype` (METHOD.md). */
void compare_default_tolerance(xdnn_dtype dtype, int op, double *rtol, double *atol);

#endif
