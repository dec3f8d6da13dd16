/* gpu.h — the GPU backend's entry points, as the CLI sees them.
 * Implemented in src/gpu/ (CUDA=1) or src/gpu_none/ (CUDA=0). */
#ifndef XDNN_GPU_H
#define XDNN_GPU_H

#include "core/exec.h"

#include <stdio.h>

/* True when a CUDA device is usable; otherwise `why` says what is missing
 * (no driver, no device, built without CUDA). */
bool gpu_available(char *why, size_t len);
/* How many CUDA devices this process sees (CUDA_VISIBLE_DEVICES applies);
 * 0 with `why` when none is usable. */
int gpu_device_count(char *why, size_t len);

struct gpu_ctx;

typedef struct gpu_run_opts {
    int warmup, iters;            /* timing loop per partition */
    bool cuda_graph;              /* replay the whole plan as a CUDA graph */
    const char *const *force;     /* "PART=ENGINE" or "OP=ENGINE" strings */
    int nforce;
    int verbose;                  /* -v: candidates and rejection reasons */
    FILE *log;                    /* where -v output goes (stderr) */
    /* Optional: called once after the first checked run, before the timing
     * loops, with every partition built and every buffer valid (plan_hooks.c
     * times engine candidates here); a non-OK status ends the run with it. */
    xdnn_status (*after_first_run)(struct gpu_ctx *c, void *user, xdnn_diags_t *d);
    void *user;
    /* Plan-time constants (opt-in; constfold.c): weights do not change
     * between executes, so the partitions computing only from them (casts,
     * layout copies) run with the first execute and never again. */
    bool const_weights;
} gpu_run_opts;

typedef struct gpu_partition_report {
    const char *name;             /* partition name: its nodes, e.g. "y.0+y.1+y" */
    const char *engine;           /* the engine that ran */
    double ms_median, ms_min, ms_max;
    double flops, bytes;          /* the partition's own counts */
    const char *detail;           /* engine's choice, e.g. the cuBLASLt algorithm (may be "") */
    double ms_p90;                /* 90th percentile of the timed runs (nearest rank) */
} gpu_partition_report;

typedef struct gpu_report {
    char device[256];
    gpu_partition_report *parts;
    int nparts;
    double plan_ms, compile_ms, total_ms;
} gpu_report;

/* Upload st's inputs/weights, plan, run and time every partition, download the
 * outputs into st (which must have results allocated). */
xdnn_status gpu_run(run_state *st, const gpu_run_opts *opts, gpu_report *rep, xdnn_diags_t *d);
void gpu_report_free(gpu_report *rep);
void gpu_print_engines(FILE *f);
/* The same as a JSON array [{name, classes: [...], summary}] (malloc'ed; NULL
 * when out of memory); "[]" without CUDA. */
char *gpu_engines_json(void);
/* Graphviz DOT of g (bound) as the GPU backend partitions it: one cluster per
 * partition, materialized tensors as nodes, register-resident ones as dashed
 * edges.  Needs no device. */
xdnn_status gpu_print_partitions_dot(const xgraph *g, FILE *f, xdnn_diags_t *d);
/* Unload the compiled-kernel cache (process end; keeps valgrind quiet). */
void gpu_release_caches(void);

#endif
