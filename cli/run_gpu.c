/* run_gpu.c — `xdnn run --device gpu` as a client of the public plan API:
 * build the plan once (forced engines; -v prints its partitions and
 * candidates from the plan's records), copy the run state's inputs to the
 * device, execute once and check it, time the whole execute and each
 * partition alone (xdnn_plan_execute_partitions) with CUDA events, optionally
 * replay the execute captured as a CUDA graph, and hand the first execute's
 * outputs back to the run.  --cold-l2 flushes the L2 before each timed run
 * (benchdnn's --cold-cache, nvbench's default): small problems otherwise
 * run from the cache their previous run left warm. */
#include "run_gpu.h"

#include "plan_explain.h"

#include <stdlib.h>
#include <string.h>

#if XDNN_HAVE_CUDA
#include <cuda_runtime.h>

static xdnn_status cuda_error(cudaError_t e, const char *what, xdnn_diags_t *d)
{
    if (e == cudaSuccess)
        return XDNN_OK;
    fprintf(stderr, "xdnn run: %s failed: %s: %s\n", what, cudaGetErrorName(e), cudaGetErrorString(e));
    (void)d;
    return e == cudaErrorMemoryAllocation ? XDNN_ERR_NOMEM : XDNN_ERR_DEVICE;
}
#define CU(call, what)                                    \
    do {                                                  \
        if ((s = cuda_error((call), (what), d)) != XDNN_OK) \
            goto done;                                    \
    } while (0)

typedef struct timing {
    const xdnn_plan_t *p;
    xdnn_tensor_binding *bind;
    size_t n;
    void *ws;
    cudaStream_t stream;
    cudaEvent_t ev[2];
    void *flush;          /* --cold-l2: twice the L2, rewritten before each timed run; NULL: warm runs */
    size_t flush_bytes;
    int flushes;
} timing;

/* Evict the L2: write the flush buffer (a new byte each time) on the stream,
 * before the start event, so the write is not timed. */
static xdnn_status flush_l2(timing *t, xdnn_diags_t *d)
{
    xdnn_status s = XDNN_OK;
    if (t->flush)
        CU(cudaMemsetAsync(t->flush, ++t->flushes & 0xff, t->flush_bytes, t->stream), "cudaMemsetAsync (--cold-l2)");
done:
    return s;
}

/* Time `iters` runs of partitions [first, first + count) (the whole plan when
 * count is 0) after `warmup` untimed ones. */
static xdnn_status time_runs(timing *t, size_t first, size_t count, int warmup, int iters, double *ms,
                             xdnn_diags_t *d)
{
    xdnn_status s = XDNN_OK;
    for (int it = 0; it < warmup + iters && s == XDNN_OK; it++) {
        if (it >= warmup && (s = flush_l2(t, d)) != XDNN_OK)
            goto done;
        if (it >= warmup)
            CU(cudaEventRecord(t->ev[0], t->stream), "cudaEventRecord");
        s = count ? xdnn_plan_execute_partitions(t->p, first, count, t->bind, t->n, t->ws, t->stream, d)
                  : xdnn_plan_execute(t->p, t->bind, t->n, t->ws, t->stream, d);
        if (s == XDNN_OK && it >= warmup) {
            float one;
            CU(cudaEventRecord(t->ev[1], t->stream), "cudaEventRecord");
            CU(cudaEventSynchronize(t->ev[1]), "cudaEventSynchronize");
            CU(cudaEventElapsedTime(&one, t->ev[0], t->ev[1]), "cudaEventElapsedTime");
            ms[it - warmup] = one;
        }
    }
done:
    return s;
}

/* The execute captured once as a CUDA graph, replayed `iters` times. */
static xdnn_status time_graph(timing *t, int warmup, int iters, double *ms, xdnn_diags_t *d)
{
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    xdnn_status s;
    CU(cudaStreamBeginCapture(t->stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
    s = xdnn_plan_execute(t->p, t->bind, t->n, t->ws, t->stream, d);
    cudaError_t e = cudaStreamEndCapture(t->stream, &graph);
    if (s != XDNN_OK)
        goto done;
    CU(e, "cudaStreamEndCapture");
    CU(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    for (int it = 0; it < warmup + iters; it++) {
        if (it >= warmup && (s = flush_l2(t, d)) != XDNN_OK)
            goto done;
        CU(cudaEventRecord(t->ev[0], t->stream), "cudaEventRecord");
        CU(cudaGraphLaunch(exec, t->stream), "cudaGraphLaunch");
        CU(cudaEventRecord(t->ev[1], t->stream), "cudaEventRecord");
        CU(cudaEventSynchronize(t->ev[1]), "cudaEventSynchronize");
        float one;
        CU(cudaEventElapsedTime(&one, t->ev[0], t->ev[1]), "cudaEventElapsedTime");
        if (it >= warmup)
            ms[it - warmup] = one;
    }
done:
    if (exec)
        cudaGraphExecDestroy(exec);
    if (graph)
        cudaGraphDestroy(graph);
    return s;
}

static char *dup_str(const char *s) { return strdup(s ? s : ""); }

xdnn_status run_gpu(xdnn_graph_t *g, xdnn_run_t *r, const run_gpu_opts *o, run_gpu_report *rep, xdnn_diags_t *d)
{
    memset(rep, 0, sizeof *rep);
    xdnn_plan_options po;
    xdnn_plan_options_init(&po);
    po.backend = XDNN_BACKEND_CUDA;
    po.force = o->force;
    po.nforce = o->nforce;
    xdnn_plan_t *owned = NULL;
    xdnn_status s = o->plan ? XDNN_OK : xdnn_plan_build(g, &po, d, &owned);
    if (s != XDNN_OK)
        return s;
    const xdnn_plan_t *p = o->plan ? o->plan : owned;
    if (o->verbose)
        plan_explain_print(p, true, stderr);
    size_t n = xdnn_plan_tensor_count(p), np = xdnn_plan_partition_count(p);
    int warmup = o->warmup > 0 ? o->warmup : 0, iters = o->iters > 0 ? o->iters : 1;
    timing t = {.p = p, .n = n};
    xdnn_tensor_binding *bind = calloc(n + 1, sizeof *bind);
    void **host = calloc(n + 1, sizeof *host);
    double *ms = calloc((size_t)iters, sizeof *ms);
    t.bind = bind;
    if (!bind || !host || !ms) {
        s = XDNN_ERR_NOMEM;
        goto done;
    }
    /* every bindable tensor on the device: inputs copied in, outputs poisoned
     * (all-ones bytes are NaN in f32/f16/bf16) */
    for (size_t i = 0; i < n; i++) {
        xdnn_tensor_info ti;
        xdnn_plan_tensor(p, i, &ti);
        int ir = xdnn_graph_find_tensor(g, ti.name);
        size_t have = 0;
        host[i] = ir >= 0 ? xdnn_run_data(r, (size_t)ir, &have) : NULL;
        bind[i] = (xdnn_tensor_binding){.name = ti.name, .id = -1};
        if (!host[i] || have < ti.bytes) {
            fprintf(stderr, "xdnn run: internal error: no host buffer of %zu bytes for '%s'\n", ti.bytes, ti.name);
            s = XDNN_ERR_INTERNAL;
            goto done;
        }
        CU(cudaMalloc(&bind[i].ptr, ti.bytes ? ti.bytes : 1), "cudaMalloc");
        if (ti.is_output)
            CU(cudaMemset(bind[i].ptr, 0xff, ti.bytes), "cudaMemset");
        else
            CU(cudaMemcpy(bind[i].ptr, host[i], ti.bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    }
    if (xdnn_plan_workspace_size(p))
        CU(cudaMalloc(&t.ws, xdnn_plan_workspace_size(p)), "cudaMalloc (workspace)");
    CU(cudaStreamCreateWithFlags(&t.stream, cudaStreamNonBlocking), "cudaStreamCreate");
    CU(cudaEventCreate(&t.ev[0]), "cudaEventCreate");
    CU(cudaEventCreate(&t.ev[1]), "cudaEventCreate");
    if (o->cold_l2) {
        int dev = 0, l2 = 0;
        CU(cudaGetDevice(&dev), "cudaGetDevice");
        CU(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev), "cudaDeviceGetAttribute (L2 size)");
        t.flush_bytes = 2 * (size_t)(l2 > 0 ? l2 : 64 << 20); /* unknown: more than any GPU's so far */
        CU(cudaMalloc(&t.flush, t.flush_bytes), "cudaMalloc (--cold-l2 buffer)");
    }

    /* one checked run first: errors surface here, not inside timing */
    if ((s = xdnn_plan_execute(p, bind, n, t.ws, t.stream, d)) != XDNN_OK)
        goto done;
    CU(cudaStreamSynchronize(t.stream), "the first execute");
    for (size_t i = 0; i < n; i++) {
        xdnn_tensor_info ti;
        xdnn_plan_tensor(p, i, &ti);
        if (ti.is_output)
            CU(cudaMemcpy(host[i], bind[i].ptr, ti.bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
    }

    xdnn_plan_stats stats;
    xdnn_plan_get_stats(p, &stats);
    snprintf(rep->device, sizeof rep->device, "%s", xdnn_plan_device(p));
    rep->plan_ms = stats.build_ms;
    rep->compile_ms = stats.compile_ms;
    rep->parts = calloc(np + 1, sizeof *rep->parts);
    if (!rep->parts) {
        s = XDNN_ERR_NOMEM;
        goto done;
    }
    for (size_t i = 0; i < np && s == XDNN_OK; i++) {
        xdnn_partition_info pi;
        xdnn_plan_partition(p, i, &pi);
        run_part_report *row = &rep->parts[rep->nparts++];
        row->name = dup_str(pi.name);
        row->engine = dup_str(pi.engine);
        row->detail = dup_str(pi.knobs);
        row->flops = pi.flops;
        row->bytes = pi.bytes;
        if ((s = time_runs(&t, i, 1, warmup, iters, ms, d)) == XDNN_OK)
            xdnn_time_stats_of(ms, (size_t)iters, &row->ms);
    }
    if (s == XDNN_OK)
        s = o->cuda_graph ? time_graph(&t, warmup, iters, ms, d) : time_runs(&t, 0, 0, warmup > 0, iters, ms, d);
    if (s == XDNN_OK) {
        xdnn_time_stats total;
        xdnn_time_stats_of(ms, (size_t)iters, &total);
        rep->total_ms = total.median_ms;
    }
done:
    if (t.stream)
        cudaStreamSynchronize(t.stream);
    for (size_t i = 0; bind && i < n; i++)
        cudaFree(bind[i].ptr);
    cudaFree(t.ws);
    cudaFree(t.flush);
    if (t.ev[0])
        cudaEventDestroy(t.ev[0]);
    if (t.ev[1])
        cudaEventDestroy(t.ev[1]);
    if (t.stream)
        cudaStreamDestroy(t.stream);
    free(bind);
    free(host);
    free(ms);
    xdnn_plan_destroy(owned);
    return s;
}

#else

xdnn_status run_gpu(xdnn_graph_t *g, xdnn_run_t *r, const run_gpu_opts *o, run_gpu_report *rep, xdnn_diags_t *d)
{
    (void)g, (void)r, (void)o;
    memset(rep, 0, sizeof *rep);
    fprintf(stderr, "xdnn run: xdnn was built without CUDA; use --device cpu\n");
    (void)d;
    return XDNN_ERR_DEVICE;
}

#endif

void run_gpu_report_free(run_gpu_report *rep)
{
    for (int i = 0; i < rep->nparts; i++) {
        free(rep->parts[i].name);
        free(rep->parts[i].engine);
        free(rep->parts[i].detail);
    }
    free(rep->parts);
    memset(rep, 0, sizeof *rep);
}
