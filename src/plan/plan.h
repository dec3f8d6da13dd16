/* plan.h — execution plans: everything needed to run a bound graph again on
 * the same device without planning, tuning or compiling.
 *
 * A plan holds the specialized module (every param replaced by its bound
 * value, as JSON), the graph's name, one record per partition (CPU: per node)
 * with the engine and knobs that run it, the workspace layout, the compiled
 * GPU modules, the device fingerprint and the xdnn version.  The byte format
 * (plan_format.c) is documented in man/xdnn-plan.5. */
#ifndef XDNN_PLAN_PLAN_H
#define XDNN_PLAN_PLAN_H

#include "core/exec.h"
#include "plan/fingerprint.h"
#include "plan/plan_gpu_hooks.h"

#include <stdio.h>

enum { PLAN_FORMAT_VERSION = 1 };

/* An engine considered for a partition, as the selection saw it. */
typedef struct plan_candidate {
    char engine[64];
    bool supported, chosen;
    double cost_us;        /* cost model (supported ones) */
    double ms;             /* measured; -1 when not timed */
    char *reason;          /* why not ("" when supported); malloc'ed */
} plan_candidate;

/* One partition (on the CPU: one node) and the engine that runs it. */
typedef struct plan_part {
    char *name;            /* node name, or "a+b+c" for a GPU partition */
    char *ops;             /* "conv", "matmul+add+gelu" */
    char *sig;             /* tune signature (may be NULL in a loaded plan) */
    char engine[64];
    char knobs[128];
    int candidates;        /* ways that were (or could be) timed */
    double tuned_ms;       /* -1: chosen by heuristics */
    bool from_cache;       /* the choice came from the tune cache */
    double flops, bytes;   /* the cost model's counts (0: none) */
    plan_candidate *cands; /* every engine asked (may be empty in a loaded plan) */
    int ncands;
} plan_part;

void plan_parts_free(plan_part *parts, int n);

/* Workspace layout: the GPU's one scratch allocation (none on the CPU). */
typedef struct plan_workspace {
    uint64_t total_bytes;
    int nbuffers;          /* the layout's named regions (GPU backend) */
} plan_workspace;

/* A dynamic param: xdnn_plan_resize may give it any value in [lo, hi]. */
typedef struct plan_dynamic {
    char name[64];
    int64_t lo, hi;
} plan_dynamic;

/* A tensor the caller binds (xdnn_tensor_info without the pointers into g). */
typedef struct plan_tensor {
    int ir;                /* index into g->tensors */
    size_t bytes;
} plan_tensor;

struct xdnn_plan {
    uint32_t format_version;
    char xdnn_version[64];
    char device[FINGERPRINT_MAX];
    char *graph_name;
    char *module_json;     /* the specialized module */
    plan_part *parts;
    int nparts;
    plan_workspace ws;
    plan_blob *blobs;
    int nblobs;
    /* the parsed, bound graph (owned) */
    xdnn_module_t *m;
    xgraph *g;
    double load_ms;        /* deserialize: parse + bind + restore time, context creation excluded */
    double context_ms;     /* of which the backend spent opening the device (CUDA context) */
    double build_ms;       /* plan_build or deserialize, wall time */
    double compile_ms;     /* NVRTC time in prepare */
    int kernels_compiled, kernels_cached;
    /* execution (plan_exec.c, backend.h) */
    const struct plan_backend *be;   /* NULL: not executable (a foreign plan loaded to inspect) */
    void *exec;                      /* the backend's plan-time state */
    bool executable;                 /* prepared and built for a device here */
    int device_ordinal;
    bool deterministic;
    plan_tensor *tensors;            /* the bindable tensors, in graph order */
    int ntensors;
    int *bindable_of;                /* per IR tensor: its index in tensors, or -1 */
    /* options kept in the plan's bytes (the OPTS section) */
    bool const_weights;              /* plan-time constants (xdnn_plan_options.const_weights) */
    int nconst;                      /* partitions the backend runs once (CUDA; 0 elsewhere) */
    plan_dynamic *dyn;               /* dynamic params (malloc'ed) */
    int ndyn;
    bool resized;                    /* made by xdnn_plan_resize: module_json is the parent's, g is bound
                                        to other values (serialize writes g's own) */
};

/* ---- selection and tuning (plan_select.c) */
typedef struct select_opts {
    bool use_gpu;
    bool tune;             /* time every candidate and store the winner */
    int warmup, iters;     /* the tune timing loop */
    FILE *log;             /* ranking lines (NULL = quiet) */
    const char *fp;        /* device fingerprint */
} select_opts;

/* Choose an engine per partition of st's graph: the tune cache when it has
 * an entry, timing when o->tune, else heuristics.  CPU: st needs inputs only
 * when tuning.  GPU: st needs inputs and allocated results. */
xdnn_status plan_select(run_state *st, const select_opts *o, plan_part **parts, int *nparts, xdnn_diags_t *d);
/* Sort ms[0..n) and give its median, min, max and p90 (nearest rank). */
void plan_time_stats(double *ms, int n, double *median, double *min, double *max, double *p90);
/* "PART=ENGINE[:knobs]" strings for gpu_run_opts.force, malloc'ed; free with plan_force_free. */
char **plan_force_strings(const plan_part *parts, int n);
void plan_force_free(char **force, int n);

/* ---- building (plan_build.c) */
/* The module of g as JSON with every param replaced by its bound value and
 * sweeps dropped.  malloc'ed; NULL after a diagnostic. */
char *plan_specialized_json(const xgraph *g, bool keep_derived, xdnn_diags_t *d);
/* Parse module JSON and bind graph `name` with no overrides. */
xdnn_status plan_parse_graph(const char *json, const char *name, xdnn_module_t **m, xgraph **g, xdnn_diags_t *d);
/* The same with param overrides (xdnn_plan_resize). */
xdnn_status plan_parse_graph_with(const char *json, const char *name, const xdnn_binding *b, size_t nb,
                                  xdnn_module_t **m, xgraph **g, xdnn_diags_t *d);
/* ---- dynamic params (plan_dynamic.c) */
/* Read "P=LO:HI" texts against bound graph g into p->dyn. */
xdnn_status plan_dynamic_parse(xdnn_plan_t *p, const xgraph *g, const char *const *texts, size_t n, xdnn_diags_t *d);
/* Whether `param` is one of p's dynamic params. */
bool plan_is_dynamic(const xdnn_plan_t *p, const char *param);
/* Build an executable plan for bound graph g (not modified); the tune
 * ranking of measured selection goes to `log` (NULL: quiet). */
xdnn_status plan_build(const xgraph *g, const xdnn_plan_options *o, FILE *log, xdnn_diags_t *d, xdnn_plan_t **out);
/* Plans stay compatible only with the same device and xdnn version. */
xdnn_status plan_check_compatible(const xdnn_plan_t *p, bool use_gpu, xdnn_diags_t *d);
/* `xdnn plan --info`. */
void plan_print_info(const xdnn_plan_t *p, FILE *f);

/* ---- bytes (plan_format.c) */
xdnn_status plan_to_bytes(const xdnn_plan_t *p, unsigned char **data, size_t *len, xdnn_diags_t *d);
/* Parse and verify bytes; `name` labels diagnostics.  Does not check the
 * device or version (plan_check_compatible does). */
xdnn_status plan_from_bytes(const char *name, const unsigned char *data, size_t len, xdnn_diags_t *d,
                            xdnn_plan_t **out);

#endif
