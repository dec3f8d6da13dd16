/* run_gpu.h — `xdnn run --device gpu` through the public plan API (run_gpu.c). */
#ifndef XDNN_CLI_RUN_GPU_H
#define XDNN_CLI_RUN_GPU_H

#include "xdnn.h"

#include "core/exec.h"
#include "gpu/gpu.h"

typedef struct run_gpu_opts {
    int warmup, iters;            /* timing loop, per partition and for the whole plan */
    bool cuda_graph;              /* time the whole plan as a replayed CUDA graph */
    const char *const *force;     /* --engine X=ENGINE */
    size_t nforce;
    int verbose;                  /* -v: partitions and candidates on stderr */
    const xdnn_plan_t *plan;      /* a plan of g to run as it is (loaded from a file), or NULL: plan g */
} run_gpu_opts;

/* Plan g for CUDA, run it once on st's inputs (st's outputs receive that run's
 * results), then time it; rep gets the device, per-partition and total times. */
xdnn_status run_gpu(xdnn_graph_t *g, run_state *st, const run_gpu_opts *o, gpu_report *rep, xdnn_diags_t *d);

#endif
