/* gpu_none.c — stands in for src/gpu when xdnn is built without CUDA (CUDA=0):
 * every GPU entry point says so clearly instead of failing at link time. */
#include "gpu/gpu.h"
#include "plan/backend.h"
#include "plan/plan_gpu_hooks.h"

#include <stdio.h>
#include <string.h>

bool gpu_available(char *why, size_t len)
{
    snprintf(why, len, "xdnn was built without CUDA (make CUDA=0); rebuild with the CUDA toolkit");
    return false;
}

int gpu_device_count(char *why, size_t len)
{
    gpu_available(why, len);
    return 0;
}

xdnn_status gpu_run(run_state *st, const gpu_run_opts *opts, gpu_report *rep, xdnn_diags_t *d)
{
    (void)st;
    (void)opts;
    (void)rep;
    diag_error(d, XDNN_ERR_DEVICE, xloc_none(), "xdnn was built without CUDA; use --device cpu");
    return XDNN_ERR_DEVICE;
}

void gpu_print_engines(FILE *f)
{
    fprintf(f, "no GPU engines: xdnn was built without CUDA\n");
}

char *gpu_engines_json(void) { return strdup("[]"); }

void gpu_report_free(gpu_report *rep) { (void)rep; }

void gpu_release_caches(void) {}

xdnn_status gpu_print_partitions_dot(const xgraph *g, FILE *f, xdnn_diags_t *d)
{
    (void)g;
    (void)f;
    diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), "--partitions needs the GPU backend; xdnn was built without CUDA");
    return XDNN_ERR_UNSUPPORTED;
}

/* ---- the plan/tune hooks (plan/plan_gpu_hooks.h); src/gpu/plan_hooks.c has the real ones */

xdnn_status plan_gpu_fingerprint(char *buf, size_t len)
{
    snprintf(buf, len, "xdnn was built without CUDA: no GPU device fingerprint");
    return XDNN_ERR_DEVICE;
}

xdnn_status plan_gpu_candidates(run_state *st, bool time_them, int warmup, int iters, plan_gpu_choice **out, int *n,
                                xdnn_diags_t *d)
{
    (void)st, (void)time_them, (void)warmup, (void)iters;
    *out = NULL;
    *n = 0;
    diag_error(d, XDNN_ERR_DEVICE, xloc_none(), "xdnn was built without CUDA: no GPU engines to list or tune");
    return XDNN_ERR_DEVICE;
}

xdnn_status plan_gpu_import_blobs(const plan_blob *blobs, int n, xdnn_diags_t *d)
{
    (void)blobs;
    if (n == 0)
        return XDNN_OK;
    diag_error(d, XDNN_ERR_DEVICE, xloc_none(),
               "this plan carries %d compiled GPU module%s, but xdnn was built without CUDA", n, n == 1 ? "" : "s");
    return XDNN_ERR_DEVICE;
}

/* ---- the CUDA plan backend (plan/backend.h): never available in this build */

static bool none_available(char *why, size_t len)
{
    if (why && len)
        snprintf(why, len, "xdnn was built without CUDA (make CUDA=0); rebuild with the CUDA toolkit");
    return false;
}

static xdnn_status none_prepare(xdnn_plan_t *p, const plan_prepare_opts *o, xdnn_diags_t *d)
{
    (void)p;
    (void)o;
    diag_error(d, XDNN_ERR_DEVICE, xloc_none(), "xdnn was built without CUDA; use the CPU backend");
    return XDNN_ERR_DEVICE;
}

static xdnn_status none_execute(const xdnn_plan_t *p, int first, int count, void *const *ptr, void *ws, void *stream,
                                xdnn_diags_t *d)
{
    (void)p, (void)first, (void)count, (void)ptr, (void)ws, (void)stream;
    diag_error(d, XDNN_ERR_DEVICE, xloc_none(), "xdnn was built without CUDA; use the CPU backend");
    return XDNN_ERR_DEVICE;
}

static void none_release(xdnn_plan_t *p) { (void)p; }

const plan_backend plan_backend_cuda = {
    XDNN_BACKEND_CUDA, "cuda", none_available, none_prepare, none_execute, none_release,
};
