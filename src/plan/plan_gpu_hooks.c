/* plan_gpu_hooks.c — weak stand-ins for the GPU hooks of plan_gpu_hooks.h.
 * The GPU backend replaces them with strong definitions; until then a GPU
 * fingerprint or GPU tuning is reported as unavailable, never faked. */
#include "plan/plan_gpu_hooks.h"

#include <stdio.h>

#define WEAK __attribute__((weak))

WEAK xdnn_status plan_gpu_fingerprint(char *buf, size_t len)
{
    snprintf(buf, len, "the GPU backend does not provide a device fingerprint (plan_gpu_fingerprint)");
    return XDNN_ERR_DEVICE;
}

WEAK xdnn_status plan_gpu_candidates(run_state *st, bool time_them, int warmup, int iters, plan_gpu_choice **out,
                                     int *n, xdnn_diags_t *d)
{
    (void)st, (void)time_them, (void)warmup, (void)iters;
    *out = NULL;
    *n = 0;
    diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(),
               "GPU engine enumeration is not available in this build (plan_gpu_candidates)");
    return XDNN_ERR_UNSUPPORTED;
}

WEAK xdnn_status plan_gpu_export_blobs(run_state *st, const char *const *force, int nforce, plan_blob **out,
                                       int *n, xdnn_diags_t *d)
{
    (void)st, (void)force, (void)nforce, (void)d;
    *out = NULL;
    *n = 0;
    return XDNN_OK;
}

WEAK xdnn_status plan_gpu_import_blobs(const plan_blob *blobs, int n, xdnn_diags_t *d)
{
    (void)blobs;
    if (n == 0)
        return XDNN_OK;
    diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(),
               "this build cannot load compiled GPU modules from a plan (plan_gpu_import_blobs)");
    return XDNN_ERR_UNSUPPORTED;
}
