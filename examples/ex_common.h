/* ex_common.h — what the two examples share: their command line, one buffer
 * per tensor a plan binds (host memory for the CPU backend, device memory for
 * CUDA), and reading f32 outputs back to the host.
 *
 * The pattern every xdnn client follows (see mlp_infer.c for it written out):
 *   1. a bound graph (built by hand, or parsed from .dnn / JSON text);
 *   2. xdnn_plan_build once: backend, engines, workspace size are decided here;
 *   3. xdnn_plan_tensor_count / xdnn_plan_tensor: what to allocate, and how;
 *   4. xdnn_plan_execute as many times as needed with the same pointers.
 */
#ifndef EX_COMMON_H
#define EX_COMMON_H

#include <xdnn.h>

/* --backend auto|cpu|cuda (default auto: CUDA when a device is usable),
 * --iters N (how many times the plan is executed). */
typedef struct ex_options {
    xdnn_backend backend;
    int iters;
} ex_options;

/* Parse argv into *o (defaults first); prints usage and returns false on an
 * unknown argument. */
bool ex_parse_args(int argc, char **argv, int default_iters, ex_options *o);

/* The variant pack of a plan and the memory behind it. */
typedef struct ex_buffers {
    xdnn_backend backend;          /* where the pointers live: CPU (host) or CUDA (device) */
    size_t n;
    xdnn_tensor_info *info;        /* from xdnn_plan_tensor, one per bindable tensor */
    xdnn_tensor_binding *bind;     /* bind[i] = {info[i].name, info[i].id, pointer} */
    void *workspace;               /* xdnn_plan_workspace_size bytes, or NULL */
} ex_buffers;

/* Plan bound graph g once for o->backend (xdnn_plan_build; deterministic
 * engines only, so every run gives the same numbers), print the backend and
 * the engine of each partition, then allocate and fill the buffers
 * (ex_buffers_create).  On failure prints the diagnostics and returns false;
 * the caller still destroys *plan and *b (both may be empty). */
bool ex_plan(xdnn_graph_t *g, const ex_options *o, xdnn_diags_t *d, xdnn_plan_t **plan, ex_buffers *b);

/* Allocate a buffer for every tensor of plan p (inputs, weights and outputs)
 * and its workspace, and fill inputs and weights with the values of the
 * graph's initializers (xdnn_plan_fill_tensor, copied to the device on CUDA).
 * On failure, frees what it allocated; the reason is in d or on stderr. */
xdnn_status ex_buffers_create(const xdnn_plan_t *p, ex_buffers *b, xdnn_diags_t *d);
void ex_buffers_destroy(ex_buffers *b);

/* Copy f32 tensor `name` (all of it, packed in its layout) to host memory
 * `out` of `count` floats; waits for the device first on CUDA. */
xdnn_status ex_read_f32(const ex_buffers *b, const char *name, float *out, size_t count);
/* Copy the bytes of tensor `src` into tensor `dst` (same size): how a
 * training loop feeds `w_next` back as `w`. */
xdnn_status ex_copy(const ex_buffers *b, const char *dst, const char *src);
/* Sum and sum of absolute values of f32 tensor `name`; false on error. */
bool ex_checksum(const ex_buffers *b, const char *name, double *sum, double *abs_sum);

/* Print the diagnostics and what failed; returns 1 (the examples' exit code). */
int ex_fail(const char *what, xdnn_status s, const xdnn_diags_t *d);

/* Wall-clock milliseconds since an arbitrary start. */
double ex_now_ms(void);

#endif
