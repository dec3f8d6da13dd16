/* plan_api_check.c — the public plan API on the GPU, graph by graph:
 *  1. the outputs of xdnn_plan_execute are bit-identical to gpu_run's (the
 *     run-and-time path `xdnn run` uses) on the same inputs;
 *  2. plan build time, cold (first in the process: NVRTC or disk cache) and
 *     warm (kernels in memory); plan load time (deserialize, context excluded);
 *  3. host time per execute and per partition (enqueue only, no sync; the
 *     best of 5 bursts of 10, so a full launch queue never blocks it), with
 *     the variant pack bound by name and by id (the name lookups' share),
 *     GPU time per execute, and the same with the execute captured as a CUDA graph;
 *  4. every tensor bound 16 bytes past a 256-byte boundary (XDNN_CUDA_ALIGNMENT,
 *     less than cudaMalloc's 256 that the plan's engines ran on so far): the
 *     same bits; then one element past it: the execute refuses, no fault.
 * Usage: plan_api_check GRAPH.dnn...   Exit 1 when an output differs. */
#include "xdnn.h"

#include "core/exec.h"
#include "gpu/gpu.h"

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { REPS = 200, HOST_REPS = 10 };

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static xdnn_plan_t *build(xdnn_graph_t *g, double *ms, xdnn_diags_t *d)
{
    xdnn_plan_options o;
    xdnn_plan_options_init(&o);
    o.backend = XDNN_BACKEND_CUDA;
    xdnn_plan_t *p = NULL;
    double t0 = now_ms();
    if (xdnn_plan_build(g, &o, d, &p) != XDNN_OK)
        return NULL;
    *ms = now_ms() - t0;
    return p;
}

/* The variant pack of q: a device buffer per tensor, the binding at its start + off bytes (ONE_ELEMENT: one
 * element of its dtype), inputs and weights from gpu_run's run_state st, outputs poisoned.  base[i] is what
 * to cudaFree. */
#define ONE_ELEMENT ((size_t)-1)
static bool bind_all(xdnn_plan_t *q, xdnn_graph_t *g, const run_state *st, size_t off, xdnn_tensor_binding *bind,
                     void **base)
{
    for (size_t i = 0; i < xdnn_plan_tensor_count(q); i++) {
        xdnn_tensor_info t;
        xdnn_plan_tensor(q, i, &t);
        size_t at = off == ONE_ELEMENT ? (xdnn_dtype_size(t.dtype) ? xdnn_dtype_size(t.dtype) : 1) : off;
        base[i] = NULL;
        if (cudaMalloc(&base[i], t.bytes + at + 1) != cudaSuccess) {
            fprintf(stderr, "cudaMalloc of %zu bytes for '%s' failed\n", t.bytes + at + 1, t.name);
            for (size_t k = 0; k < i; k++)
                cudaFree(base[k]);
            memset(base, 0, sizeof *base * xdnn_plan_tensor_count(q));
            return false;
        }
        char *dp = (char *)base[i] + at;
        /* the run_state tensor of the same name holds gpu_run's input or output */
        const host_tensor *h = NULL;
        for (size_t k = 0; k < g->ntensors; k++)
            if (strcmp(g->tensors[k].name, t.name) == 0)
                h = &st->tensors[k];
        if (!t.is_output && h && h->data)
            cudaMemcpy(dp, h->data, t.bytes < h->bytes ? t.bytes : h->bytes, cudaMemcpyHostToDevice);
        else
            cudaMemset(dp, 0xff, t.bytes);
        bind[i] = (xdnn_tensor_binding){.name = t.name, .id = -1, .ptr = dp};
    }
    return true;
}

/* Whether every output of q bound in bind[] holds the bits of want[] (NULL entries skipped); each one that does
 * not is named with `when`. */
static bool outputs_same(const char *path, xdnn_plan_t *q, const xdnn_tensor_binding *bind, void *const *want,
                         const char *when)
{
    bool same = true;
    for (size_t i = 0; i < xdnn_plan_tensor_count(q); i++) {
        xdnn_tensor_info t;
        xdnn_plan_tensor(q, i, &t);
        if (!t.is_output || !want[i])
            continue;
        void *back = malloc(t.bytes ? t.bytes : 1);
        cudaMemcpy(back, bind[i].ptr, t.bytes, cudaMemcpyDeviceToHost);
        if (memcmp(back, want[i], t.bytes) != 0) {
            fprintf(stderr, "%s: output %s differs %s\n", path, t.name, when);
            same = false;
        }
        free(back);
    }
    return same;
}

/* Item 4: execute q with every tensor at base + off bytes (or ONE_ELEMENT); outputs against want[] (the
 * aligned execute's bits).  Returns "same bits", "refused" (the diagnostic printed), or NULL when it differs
 * or faults. */
static const char *offset_check(const char *path, xdnn_plan_t *q, xdnn_graph_t *g, const run_state *st,
                                void *const *want, size_t ws_bytes, size_t off)
{
    size_t n = xdnn_plan_tensor_count(q);
    xdnn_tensor_binding *bind = calloc(n ? n : 1, sizeof *bind);
    void **base = calloc(n ? n : 1, sizeof *base);
    const char *verdict = "same bits";
    if (!bind || !base)
        return NULL;
    if (!bind_all(q, g, st, off, bind, base)) { /* a second set of buffers beside the first: skipped, not failed */
        free(bind);
        free(base);
        return "skipped (device memory)";
    }
    char at[32];
    if (off == ONE_ELEMENT)
        snprintf(at, sizeof at, "one element");
    else
        snprintf(at, sizeof at, "%zu bytes", off);
    void *ws = NULL;
    if (ws_bytes)
        cudaMalloc(&ws, ws_bytes);
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_status rs = xdnn_plan_execute(q, bind, n, ws, NULL, d);
    cudaError_t ce = cudaDeviceSynchronize();
    if (ce != cudaSuccess) {
        fprintf(stderr, "%s: bindings at +%s: CUDA error %s\n", path, at, cudaGetErrorString(ce));
        verdict = NULL;
    } else if (rs != XDNN_OK) {
        fprintf(stderr, "%s: bindings at +%s refused: ", path, at);
        xdnn_diags_print(d, stderr);
        verdict = "refused";
    }
    char when[64];
    snprintf(when, sizeof when, "with bindings at +%s", at);
    if (verdict && rs == XDNN_OK && !outputs_same(path, q, bind, want, when))
        verdict = NULL;
    for (size_t i = 0; i < n; i++)
        cudaFree(base[i]);
    cudaFree(ws);
    free(bind);
    free(base);
    xdnn_diags_destroy(d);
    return verdict;
}

static int check_graph(const char *path)
{
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m = NULL;
    int bad = 0;
    if (xdnn_module_load(path, NULL, d, &m) != XDNN_OK) {
        xdnn_diags_print(d, stderr);
        return 1;
    }
    xdnn_graph_t *g = xdnn_module_find_graph(m, NULL);
    if (xdnn_graph_bind(g, NULL, 0, d) != XDNN_OK) {
        xdnn_diags_print(d, stderr);
        return 1;
    }
    /* cold: the first build in this process (kernels from NVRTC or the disk cache) */
    double cold, warm;
    xdnn_plan_t *p = build(g, &cold, d);
    /* the old path: gpu_run on seeded inputs */
    run_state st;
    gpu_report rep = {0};
    gpu_run_opts go = {.warmup = 0, .iters = 1};
    if (run_state_init(&st, g, ".") != XDNN_OK || exec_load_inputs(&st, NULL, 0, d) != XDNN_OK ||
        run_state_alloc_results(&st, d) != XDNN_OK || gpu_run(&st, &go, &rep, d) != XDNN_OK) {
        xdnn_diags_print(d, stderr);
        return 1;
    }
    xdnn_plan_t *p2 = p ? build(g, &warm, d) : NULL;
    if (!p || !p2) {
        xdnn_diags_print(d, stderr);
        return 1;
    }
    xdnn_plan_destroy(p2);
    void *bytes;
    size_t len;
    xdnn_plan_t *q = NULL;
    if (xdnn_plan_serialize(p, &bytes, &len, d) != XDNN_OK || xdnn_plan_deserialize(bytes, len, 0, d, &q) != XDNN_OK) {
        xdnn_diags_print(d, stderr);
        return 1;
    }
    free(bytes);

    /* as many bindings as the plan has tensors: a training step has hundreds
     * (a fixed 64 overflowed on the ResNet-50 step's 534) */
    size_t n = xdnn_plan_tensor_count(q);
    xdnn_tensor_binding *bind = calloc(n ? n : 1, sizeof *bind);
    void **host_out = calloc(n ? n : 1, sizeof *host_out), **base = calloc(n ? n : 1, sizeof *base);
    if (!bind || !host_out || !base)
        return 1;
    if (!bind_all(q, g, &st, 0, bind, base))
        return 1;
    void *ws = NULL;
    if (xdnn_plan_workspace_size(q))
        cudaMalloc(&ws, xdnn_plan_workspace_size(q));
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    xdnn_status rs = xdnn_plan_execute(q, bind, n, ws, s, d);
    cudaStreamSynchronize(s);
    for (size_t i = 0; rs == XDNN_OK && i < n; i++) {
        xdnn_tensor_info t;
        xdnn_plan_tensor(q, i, &t);
        if (!t.is_output)
            continue;
        const host_tensor *h = NULL;
        for (size_t k = 0; k < g->ntensors; k++)
            if (strcmp(g->tensors[k].name, t.name) == 0)
                h = &st.tensors[k];
        host_out[i] = malloc(t.bytes ? t.bytes : 1);
        cudaMemcpy(host_out[i], bind[i].ptr, t.bytes, cudaMemcpyDeviceToHost);
        if (!h || memcmp(host_out[i], h->data, t.bytes) != 0) {
            fprintf(stderr, "%s: output %s differs from gpu_run's\n", path, t.name);
            bad = 1;
        }
    }
    if (rs != XDNN_OK) {
        xdnn_diags_print(d, stderr);
        bad = 1;
    }
    /* host time per execute (enqueue only: few enough that the launch queue
     * never fills and blocks the host), then GPU time per execute */
    xdnn_tensor_binding *by_id = calloc(n ? n : 1, sizeof *by_id);
    for (size_t i = 0; by_id && i < n; i++)
        by_id[i] = (xdnn_tensor_binding){.name = NULL, .id = (int)i, .ptr = bind[i].ptr};
    double host_us = 1e30, host_id_us = 1e30;
    for (int k = 0; k < 10; k++) { /* alternate the two forms: the same conditions for both */
        const xdnn_tensor_binding *b = k % 2 && by_id ? by_id : bind;
        cudaStreamSynchronize(s);
        double t0 = now_ms();
        for (int r = 0; r < HOST_REPS; r++)
            xdnn_plan_execute(q, b, n, ws, s, NULL);
        double us = (now_ms() - t0) * 1e3 / HOST_REPS, *best = b == bind ? &host_us : &host_id_us;
        *best = us < *best ? us : *best;
    }
    free(by_id);
    cudaStreamSynchronize(s);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    cudaEventRecord(e0, s);
    for (int r = 0; r < REPS; r++)
        xdnn_plan_execute(q, bind, n, ws, s, NULL);
    cudaEventRecord(e1, s);
    cudaEventSynchronize(e1);
    float gpu_ms;
    cudaEventElapsedTime(&gpu_ms, e0, e1);
    /* the same, captured once as a CUDA graph */
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
    xdnn_plan_execute(q, bind, n, ws, s, NULL);
    cudaStreamEndCapture(s, &graph);
    float graph_ms = -1;
    double graph_host_us = -1;
    if (graph && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess) {
        cudaGraphLaunch(exec, s);
        cudaStreamSynchronize(s);
        double t0 = now_ms();
        cudaEventRecord(e0, s);
        for (int r = 0; r < REPS; r++)
            cudaGraphLaunch(exec, s);
        graph_host_us = (now_ms() - t0) * 1e3 / REPS;
        cudaEventRecord(e1, s);
        cudaEventSynchronize(e1);
        cudaEventElapsedTime(&graph_ms, e0, e1);
        /* the replayed outputs are the same bits */
        if (!outputs_same(path, q, bind, host_out, "after CUDA-graph replay"))
            bad = 1;
    }
    cudaError_t ce = cudaDeviceSynchronize();
    if (ce != cudaSuccess) {
        fprintf(stderr, "%s: CUDA error %s\n", path, cudaGetErrorString(ce));
        bad = 1;
    }
    /* last: a fault here leaves the context unusable */
    const char *at16 = "not run", *odd = "not run";
    if (!bad) {
        at16 = offset_check(path, q, g, &st, host_out, xdnn_plan_workspace_size(q), 16);
        odd = at16 ? offset_check(path, q, g, &st, host_out, xdnn_plan_workspace_size(q), ONE_ELEMENT) : "not run";
        bad = !at16 || (strcmp(at16, "same bits") != 0 && strncmp(at16, "skipped", 7) != 0) || !odd ||
              (strcmp(odd, "refused") != 0 && strncmp(odd, "skipped", 7) != 0);
        at16 = at16 ? at16 : "FAILED";
        odd = odd ? odd : "FAILED";
    }
    size_t np = xdnn_plan_partition_count(q);
    printf("| %s | %zu | %.1f | %.1f | %.3f | %.1f | %.2f | %.2f | %.4f | %.1f | %.4f | %s | %s | %s |\n", path, np, cold,
           warm, xdnn_plan_load_ms(q), host_us, host_us / (double)(np ? np : 1), host_id_us / (double)(np ? np : 1),
           gpu_ms / REPS, graph_host_us, graph_ms / REPS, bad ? "DIFFERS" : "bit-identical", at16, odd);
    fflush(stdout);
    if (exec)
        cudaGraphExecDestroy(exec);
    if (graph)
        cudaGraphDestroy(graph);
    for (size_t i = 0; i < n; i++) {
        cudaFree(base[i]);
        free(host_out[i]);
    }
    free(base);
    free(bind);
    free(host_out);
    cudaFree(ws);
    cudaStreamDestroy(s);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    xdnn_plan_destroy(q);
    xdnn_plan_destroy(p);
    gpu_report_free(&rep);
    run_state_free(&st);
    xdnn_module_destroy(m);
    xdnn_diags_destroy(d);
    return bad;
}

int main(int argc, char **argv)
{
    printf("| graph | partitions | build cold ms | build warm ms | load ms | host us/execute | host us/partition | "
           "host us/partition (by id) | GPU ms/execute | graph-replay host us | graph-replay GPU ms | outputs vs "
           "gpu_run | bound at +16 bytes | at +1 element |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    int bad = 0;
    for (int i = 1; i < argc; i++)
        bad |= check_graph(argv[i]);
    return bad;
}
