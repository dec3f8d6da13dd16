/* ex_common.c — buffers for a plan's variant pack, on the host or the device.
 *
 * The CPU backend takes host pointers and needs no workspace; the CUDA backend
 * takes device pointers.  Which one a plan got is xdnn_plan_backend(p): with
 * XDNN_BACKEND_AUTO it is CUDA only when a device is usable.  The device path
 * is compiled when XDNN_EXAMPLE_CUDA is defined (examples/Makefile does that
 * when the CUDA toolkit is there); without it a CUDA plan is refused with a
 * message, and --backend cpu always works.
 */
#include "ex_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef XDNN_EXAMPLE_CUDA
#include <cuda_runtime.h>

static xdnn_status cuda_ok(cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return XDNN_OK;
    fprintf(stderr, "error: %s: %s\n", what, cudaGetErrorString(e));
    return e == cudaErrorMemoryAllocation ? XDNN_ERR_NOMEM : XDNN_ERR_DEVICE;
}
#endif

bool ex_parse_args(int argc, char **argv, int default_iters, ex_options *o)
{
    o->backend = XDNN_BACKEND_AUTO;
    o->iters = default_iters;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--backend") == 0 && v) {
            if (strcmp(v, "auto") == 0)
                o->backend = XDNN_BACKEND_AUTO;
            else if (strcmp(v, "cpu") == 0)
                o->backend = XDNN_BACKEND_CPU;
            else if (strcmp(v, "cuda") == 0)
                o->backend = XDNN_BACKEND_CUDA;
            else
                goto usage;
            i++;
        } else if (strcmp(a, "--iters") == 0 && v && atoi(v) > 0) {
            o->iters = atoi(v);
            i++;
        } else {
            goto usage;
        }
    }
    return true;
usage:
    fprintf(stderr, "usage: %s [--backend auto|cpu|cuda] [--iters N]\n", argv[0]);
    return false;
}

int ex_fail(const char *what, xdnn_status s, const xdnn_diags_t *d)
{
    if (d)
        xdnn_diags_print(d, stderr);
    fprintf(stderr, "%s failed: %s\n", what, xdnn_status_name(s));
    return 1;
}

double ex_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---------------------------------------------------------------- memory */

static xdnn_status mem_alloc(xdnn_backend where, size_t bytes, void **out)
{
    *out = NULL;
    if (bytes == 0)
        return XDNN_OK;
#ifdef XDNN_EXAMPLE_CUDA
    if (where == XDNN_BACKEND_CUDA)
        return cuda_ok(cudaMalloc(out, bytes), "cudaMalloc");
#endif
    (void)where;
    *out = malloc(bytes);
    return *out ? XDNN_OK : XDNN_ERR_NOMEM;
}

static void mem_free(xdnn_backend where, void *ptr)
{
#ifdef XDNN_EXAMPLE_CUDA
    if (where == XDNN_BACKEND_CUDA) {
        cudaFree(ptr);
        return;
    }
#endif
    (void)where;
    free(ptr);
}

/* dst <- src, either side on the backend's memory as the flags say. */
static xdnn_status mem_copy(xdnn_backend where, void *dst, bool dst_host, const void *src, bool src_host,
                            size_t bytes)
{
#ifdef XDNN_EXAMPLE_CUDA
    if (where == XDNN_BACKEND_CUDA) {
        enum cudaMemcpyKind kind = dst_host ? (src_host ? cudaMemcpyHostToHost : cudaMemcpyDeviceToHost)
                                            : (src_host ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToDevice);
        /* cudaMemcpy on the legacy default stream waits for the plan's work */
        return cuda_ok(cudaMemcpy(dst, src, bytes, kind), "cudaMemcpy");
    }
#endif
    (void)where;
    (void)dst_host;
    (void)src_host;
    memcpy(dst, src, bytes);
    return XDNN_OK;
}

/* ---------------------------------------------------------------- buffers */

void ex_buffers_destroy(ex_buffers *b)
{
    for (size_t i = 0; b->bind && i < b->n; i++)
        mem_free(b->backend, b->bind[i].ptr);
    mem_free(b->backend, b->workspace);
    free(b->bind);
    free(b->info);
    memset(b, 0, sizeof *b);
}

xdnn_status ex_buffers_create(const xdnn_plan_t *p, ex_buffers *b, xdnn_diags_t *d)
{
    memset(b, 0, sizeof *b);
    b->backend = xdnn_plan_backend(p);
#ifndef XDNN_EXAMPLE_CUDA
    if (b->backend == XDNN_BACKEND_CUDA) {
        fprintf(stderr, "error: the plan runs on CUDA but this example was built without it "
                        "(rebuild with the CUDA toolkit, or pass --backend cpu)\n");
        return XDNN_ERR_UNSUPPORTED;
    }
#endif
    b->n = xdnn_plan_tensor_count(p);
    b->info = calloc(b->n ? b->n : 1, sizeof *b->info);
    b->bind = calloc(b->n ? b->n : 1, sizeof *b->bind);
    if (!b->info || !b->bind) {
        ex_buffers_destroy(b);
        return XDNN_ERR_NOMEM;
    }
    xdnn_status s = mem_alloc(b->backend, xdnn_plan_workspace_size(p), &b->workspace);
    for (size_t i = 0; i < b->n && s == XDNN_OK; i++) {
        xdnn_tensor_info *t = &b->info[i];
        s = xdnn_plan_tensor(p, i, t);
        if (s != XDNN_OK)
            break;
        b->bind[i] = (xdnn_tensor_binding){.name = t->name, .id = t->id};
        s = mem_alloc(b->backend, t->bytes, &b->bind[i].ptr);
        if (s != XDNN_OK || t->is_output || t->bytes == 0)
            continue;
        /* inputs and weights: the graph's own initializer, made on the host */
        void *host = malloc(t->bytes);
        if (!host) {
            s = XDNN_ERR_NOMEM;
            break;
        }
        s = xdnn_plan_fill_tensor(p, t->name, host, t->bytes, NULL, d);
        if (s == XDNN_OK)
            s = mem_copy(b->backend, b->bind[i].ptr, false, host, true, t->bytes);
        free(host);
    }
    if (s != XDNN_OK)
        ex_buffers_destroy(b);
    return s;
}

static const xdnn_tensor_info *find(const ex_buffers *b, const char *name, size_t *index)
{
    for (size_t i = 0; i < b->n; i++)
        if (strcmp(b->info[i].name, name) == 0) {
            *index = i;
            return &b->info[i];
        }
    fprintf(stderr, "error: the plan binds no tensor '%s'\n", name);
    return NULL;
}

xdnn_status ex_read_f32(const ex_buffers *b, const char *name, float *out, size_t count)
{
    size_t i;
    const xdnn_tensor_info *t = find(b, name, &i);
    if (!t)
        return XDNN_ERR_USAGE;
    if (t->dtype != XDNN_F32 || t->bytes != count * sizeof(float)) {
        fprintf(stderr, "error: '%s' is %s of %zu bytes, not %zu f32 values\n", name, xdnn_dtype_name(t->dtype),
                t->bytes, count);
        return XDNN_ERR_USAGE;
    }
    return mem_copy(b->backend, out, true, b->bind[i].ptr, false, t->bytes);
}

xdnn_status ex_copy(const ex_buffers *b, const char *dst, const char *src)
{
    size_t i, j;
    const xdnn_tensor_info *d = find(b, dst, &i), *s = find(b, src, &j);
    if (!d || !s)
        return XDNN_ERR_USAGE;
    if (d->bytes != s->bytes) {
        fprintf(stderr, "error: cannot copy '%s' (%zu bytes) into '%s' (%zu bytes)\n", src, s->bytes, dst, d->bytes);
        return XDNN_ERR_USAGE;
    }
    return mem_copy(b->backend, b->bind[i].ptr, false, b->bind[j].ptr, false, d->bytes);
}

bool ex_checksum(const ex_buffers *b, const char *name, double *sum, double *abs_sum)
{
    size_t i;
    const xdnn_tensor_info *t = find(b, name, &i);
    if (!t)
        return false;
    size_t count = t->bytes / sizeof(float);
    float *v = malloc((count ? count : 1) * sizeof *v);
    if (!v || ex_read_f32(b, name, v, count) != XDNN_OK) {
        free(v);
        return false;
    }
    *sum = *abs_sum = 0;
    for (size_t k = 0; k < count; k++) {
        *sum += v[k];
        *abs_sum += v[k] < 0 ? -(double)v[k] : (double)v[k];
    }
    free(v);
    return true;
}

bool ex_plan(xdnn_graph_t *g, const ex_options *opt, xdnn_diags_t *d, xdnn_plan_t **plan, ex_buffers *b)
{
    memset(b, 0, sizeof *b);
    /* Plan once: backend, engines and workspace are fixed from here on. */
    xdnn_plan_options o;
    xdnn_plan_options_init(&o);
    o.backend = opt->backend;   /* AUTO: CUDA when a device is usable, else the CPU */
    o.deterministic = true;     /* no engine whose result varies run to run (atomics) */
    xdnn_status s = xdnn_plan_build(g, &o, d, plan);
    if (s != XDNN_OK) {
        ex_fail("xdnn_plan_build", s, d);
        return false;
    }
    printf("backend: %s, workspace: %zu bytes\n", xdnn_backend_name(xdnn_plan_backend(*plan)),
           xdnn_plan_workspace_size(*plan));
    for (size_t i = 0; i < xdnn_plan_partition_count(*plan); i++) {
        xdnn_partition_info pi;
        if (xdnn_plan_partition(*plan, i, &pi) == XDNN_OK)
            printf("partition %zu: %s on %s\n", i, pi.ops, pi.engine);
    }
    if ((s = ex_buffers_create(*plan, b, d)) != XDNN_OK) {
        ex_fail("allocating and filling the tensors", s, d);
        return false;
    }
    return true;
}
