/* plan_gpu_hooks.h — what plans and --tune need from the GPU backend.
 *
 * Implemented in src/gpu/plan_hooks.c (CUDA=1) and by honest "built without
 * CUDA" stand-ins in src/gpu_none/gpu_none.c (CUDA=0), the same split as
 * gpu.h: exactly one definition of each is linked, no weak symbols.
 * /work/notes/bench-to-gpu.md describes each one. */
#ifndef XDNN_PLAN_GPU_HOOKS_H
#define XDNN_PLAN_GPU_HOOKS_H

#include "core/exec.h"

#include <stddef.h>

/* "gpu; name=<name>; sm=<SM count>; cc=<major.minor>; driver=<cudaDriverGetVersion>"
 * of the device gpu_run uses.  No GPU (or CUDA=0): XDNN_ERR_DEVICE and the reason in buf. */
xdnn_status plan_gpu_fingerprint(char *buf, size_t len);

/* One way to run one partition: an engine with one of its knob variants. */
typedef struct plan_gpu_choice {
    char partition[128];   /* as gpu_partition_report.name */
    char engine[64];
    char knobs[128];       /* "" or e.g. "tile=128x128x32,stages=3" */
    bool supported;
    char why[200];         /* the engine's reason when !supported */
    double ms;             /* median of `iters` timed runs; -1 when not timed */
} plan_gpu_choice;

/* Partition st's bound graph for the GPU and list every (partition, engine,
 * knob variant); when time_them, time each supported one on st's inputs.
 * *out is malloc'ed (caller frees).  CUDA=0: XDNN_ERR_DEVICE. */
xdnn_status plan_gpu_candidates(run_state *st, bool time_them, int warmup, int iters, plan_gpu_choice **out,
                                int *n, xdnn_diags_t *d);

/* A compiled module (cubin) a plan carries. */
typedef struct plan_blob {
    char name[128];        /* the key the backend's kernel cache uses */
    unsigned char *data;   /* malloc'ed */
    size_t size;
} plan_blob;

/* (A plan's modules are the ones its CUDA backend built with: backend_cuda.c.)
 * Preload blobs into the kernel cache so the next build compiles nothing.
 * CUDA=0: XDNN_OK for n == 0, else XDNN_ERR_DEVICE. */
xdnn_status plan_gpu_import_blobs(const plan_blob *blobs, int n, xdnn_diags_t *d);

#endif
