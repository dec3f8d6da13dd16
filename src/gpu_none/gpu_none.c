/* gpu_none.c — stands in for src/gpu when xdnn is built without CUDA (CUDA=0):
 * every GPU entry point says so clearly instead of failing at link time. */
#include "gpu/gpu.h"

#include <stdio.h>

bool gpu_available(char *why, size_t len)
{
    snprintf(why, len, "xdnn was built without CUDA (make CUDA=0); rebuild with the CUDA toolkit");
    return false;
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

void gpu_report_free(gpu_report *rep) { (void)rep; }

void gpu_release_caches(void) {}

xdnn_status gpu_print_partitions_dot(const xgraph *g, FILE *f, xdnn_diags_t *d)
{
    (void)g;
    (void)f;
    diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), "--partitions needs the GPU backend; xdnn was built without CUDA");
    return XDNN_ERR_UNSUPPORTED;
}
