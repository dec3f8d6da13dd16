/* run_gpu.h — `xdnn run --device gpu` through the public plan API (run_gpu.c). */
#ifndef XDNN_CLI_RUN_GPU_H
#define XDNN_CLI_RUN_GPU_H

#include "xdnn.h"

typedef struct run_gpu_opts {
    int warmup, iters;            /* timing loop, per partition and for the whole plan */
    bool cuda_graph;              /* time the whole plan as a replayed CUDA graph */
    bool cold_l2;                 /* --cold-l2: write a buffer of twice the L2's size before each timed
                                     run, outside the timed region, so every run starts from DRAM */
    const char *const *force;     /* --engine X=ENGINE */
    size_t nforce;
    int verbose;                  /* -v: partitions and candidates on stderr */
    const xdnn_plan_t *plan;      /* a plan of g to run as it is (loaded from a file), or NULL: plan g */
} run_gpu_opts;

/* One partition's row of the report. */
typedef struct run_part_report {
    char *name;                   /* its nodes, e.g. "y.0+y.1+y" (malloc'ed) */
    char *engine;                 /* the engine that ran (malloc'ed) */
    char *detail;                 /* its knobs, e.g. the cuBLASLt algorithm, or "" (malloc'ed) */
    xdnn_time_stats ms;           /* its timed runs alone */
    double flops, bytes;          /* the partition's own counts */
} run_part_report;

typedef struct run_gpu_report {
    char device[XDNN_FINGERPRINT_MAX];
    run_part_report *parts;
    int nparts;
    double plan_ms, compile_ms, total_ms;
} run_gpu_report;

void run_gpu_report_free(run_gpu_report *rep);

/* Plan g for CUDA, run it once on r's inputs (r's outputs receive that run's
 * results), then time it; rep gets the device, per-partition and total times. */
xdnn_status run_gpu(xdnn_graph_t *g, xdnn_run_t *r, const run_gpu_opts *o, run_gpu_report *rep, xdnn_diags_t *d);

#endif
