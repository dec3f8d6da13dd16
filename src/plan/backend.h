/* backend.h — the CPU reference and CUDA behind one small table.
 *
 * A backend turns a plan (its bound graph, and its partitions when they were
 * chosen earlier or loaded from bytes) into something executable, then runs
 * it given one pointer per IR tensor.  Everything costly — partitioning,
 * engine selection, workspace layout, compilation, library handles — happens
 * once in `prepare`; `execute` only enqueues.  The CPU row lives in
 * backend_cpu.c; the CUDA row in src/gpu/backend_cuda.c, or an honest
 * "built without CUDA" row in src/gpu_none/ (exactly one is linked).
 */
#ifndef XDNN_PLAN_BACKEND_H
#define XDNN_PLAN_BACKEND_H

#include "plan/plan.h"

typedef struct plan_prepare_opts {
    const char *const *force;  /* "OP=ENGINE[:knobs]" / "PART=ENGINE[:knobs]" */
    int nforce;
    bool restore;              /* p->parts holds the choices: restore them as data, choose nothing */
    const char *model;         /* plan for this described device: select only, build nothing */
    int verbose;               /* -v: partitions and candidates to `log` */
    FILE *log;
    /* Optional: a remembered choice (the tune cache) for a partition, used
     * unless a force names it; false when there is none. */
    bool (*cached)(void *user, const char *partition, char *engine, size_t elen, char *knobs, size_t klen);
    void *user;
} plan_prepare_opts;

typedef struct plan_backend {
    xdnn_backend id;
    const char *name;
    /* Can it run here?  If not, a one-line reason. */
    bool (*available)(char *why, size_t len);
    /* Make p executable: choose an engine per partition (or restore p->parts),
     * lay out the workspace, compile and build.  Fills p->parts (when not
     * restoring), p->ws and p->exec, and sets p->executable when it built. */
    xdnn_status (*prepare)(xdnn_plan_t *p, const plan_prepare_opts *o, xdnn_diags_t *d);
    /* Run partitions [first, first + count): ptr[i] is the address of IR
     * tensor i (NULL for every tensor the caller does not bind).  No
     * allocation on the device, no synchronization. */
    xdnn_status (*execute)(const xdnn_plan_t *p, int first, int count, void *const *ptr, void *ws, void *stream,
                           xdnn_diags_t *d);
    void (*release)(xdnn_plan_t *p);
} plan_backend;

extern const plan_backend plan_backend_cpu;
extern const plan_backend plan_backend_cuda;

/* The row of b (AUTO resolves to CUDA when available, else the CPU). */
const plan_backend *plan_backend_get(xdnn_backend b);

/* Fill p->tensors from p->g: every input, weight, output and `keep` tensor. */
xdnn_status plan_collect_tensors(xdnn_plan_t *p, xdnn_diags_t *d);

#endif
