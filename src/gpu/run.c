/* run.c — gpu_run: lower, partition, pick engines, plan the workspace,
 * allocate everything once, upload, build (NVRTC / cuBLASLt), run, time each
 * partition with CUDA events (warmup, then iters: median/min/max), optionally
 * replay the whole plan as a CUDA graph, and download the outputs. */
#include "gpu/engine.h"
#include "gpu/lower.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

bool gpu_available(char *why, size_t len) { return gpu_probe(why, len); }

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

static xdnn_status run_plan(gpu_ctx *c, cudaStream_t s, xdnn_diags_t *d)
{
    for (int i = 0; i < c->plan->nparts; i++) {
        gpart *p = &c->plan->parts[i];
        if (p->once && c->consts_done)
            continue;
        xdnn_status st = p->engine->execute(c, p, s, d);
        if (st != XDNN_OK)
            return st;
    }
    return XDNN_OK;
}

/* Time `iters` runs of partition `pi` (all when pi < 0) with event pairs. */
static xdnn_status time_runs(gpu_ctx *c, int pi, int warmup, int iters, float *ms, xdnn_diags_t *d)
{
    cudaEvent_t ev[2];
    CUDA_TRY(cudaEventCreate(&ev[0]));
    xdnn_status st = gpu_check_cuda(cudaEventCreate(&ev[1]), "cudaEventCreate", __FILE__, __LINE__, d);
    if (st != XDNN_OK) {
        cudaEventDestroy(ev[0]);
        return st;
    }
    for (int it = 0; it < warmup + iters && st == XDNN_OK; it++) {
        bool timed = it >= warmup;
        if (timed)
            CUDA_GOTO(cudaEventRecord(ev[0], c->stream), st, out);
        st = pi < 0 ? run_plan(c, c->stream, d) : c->plan->parts[pi].engine->execute(c, &c->plan->parts[pi], c->stream, d);
        if (st == XDNN_OK && timed) {
            CUDA_GOTO(cudaEventRecord(ev[1], c->stream), st, out);
            CUDA_GOTO(cudaEventSynchronize(ev[1]), st, out);
            CUDA_GOTO(cudaEventElapsedTime(&ms[it - warmup], ev[0], ev[1]), st, out);
        }
    }
    if (st == XDNN_OK)
        CUDA_GOTO(cudaStreamSynchronize(c->stream), st, out);
out:
    cudaEventDestroy(ev[0]);
    cudaEventDestroy(ev[1]);
    return st;
}

static void summarize_p90(float *ms, int n, double *med, double *mn, double *mx, double *p90)
{
    if (n <= 0) {
        *med = *mn = *mx = *p90 = 0;
        return;
    }
    qsort(ms, (size_t)n, sizeof *ms, cmp_float);
    *mn = ms[0];
    *mx = ms[n - 1];
    *med = n % 2 ? (double)ms[n / 2] : 0.5 * ((double)ms[n / 2 - 1] + (double)ms[n / 2]);
    /* nearest rank, as bench's plan_time_stats: the smallest time at least 90% of the runs do not exceed */
    *p90 = ms[(9 * n + 9) / 10 - 1];
}

static void summarize(float *ms, int n, double *med, double *mn, double *mx)
{
    double p90;
    summarize_p90(ms, n, med, mn, mx, &p90);
}

/* Replay the whole plan as one CUDA graph; median time of a replay. */
static xdnn_status time_graph(gpu_ctx *c, int warmup, int iters, float *ms, double *med, xdnn_diags_t *d)
{
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    cudaEvent_t ev[2] = {NULL, NULL};
    xdnn_status st;
    CUDA_GOTO(cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeThreadLocal), st, out);
    st = run_plan(c, c->stream, d);
    cudaError_t e = cudaStreamEndCapture(c->stream, &graph);
    if (st != XDNN_OK)
        goto out;
    CUDA_GOTO(e, st, out);
    CUDA_GOTO(cudaGraphInstantiate(&exec, graph, 0), st, out);
    CUDA_GOTO(cudaEventCreate(&ev[0]), st, out);
    CUDA_GOTO(cudaEventCreate(&ev[1]), st, out);
    for (int it = 0; it < warmup + iters; it++) {
        CUDA_GOTO(cudaEventRecord(ev[0], c->stream), st, out);
        CUDA_GOTO(cudaGraphLaunch(exec, c->stream), st, out);
        CUDA_GOTO(cudaEventRecord(ev[1], c->stream), st, out);
        CUDA_GOTO(cudaEventSynchronize(ev[1]), st, out);
        if (it >= warmup)
            CUDA_GOTO(cudaEventElapsedTime(&ms[it - warmup], ev[0], ev[1]), st, out);
    }
    double mn, mx;
    summarize(ms, iters, med, &mn, &mx);
out:
    if (ev[0])
        cudaEventDestroy(ev[0]);
    if (ev[1])
        cudaEventDestroy(ev[1]);
    if (exec)
        cudaGraphExecDestroy(exec);
    if (graph)
        cudaGraphDestroy(graph);
    return st;
}

static void release(gpu_ctx *c, void **owned, int nowned)
{
    if (c->plan)
        for (int i = 0; i < c->plan->nparts; i++)
            if (c->plan->parts[i].engine && c->plan->parts[i].engine->release)
                c->plan->parts[i].engine->release(&c->plan->parts[i]);
    for (int i = 0; i < nowned; i++)
        cudaFree(owned[i]);
    if (c->ws)
        cudaFree(c->ws);
    if (c->lt)
        cublasLtDestroy(c->lt);
    if (c->stream)
        cudaStreamDestroy(c->stream);
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s ? s : "") + 1;
    char *r = malloc(n);
    if (r)
        memcpy(r, s ? s : "", n);
    return r;
}

xdnn_status gpu_run_ggraph(ggraph *g, void *const *host, const gpu_run_opts *o, gpu_report *rep,
                           xdnn_diags_t *d)
{
    memset(rep, 0, sizeof *rep);
    double t_plan = now_ms();
    gpu_ctx c;
    memset(&c, 0, sizeof c);
    xdnn_status st = gpu_device_open(&c.dev, d);
    if (st != XDNN_OK)
        return st;
    gpu_device_describe(&c.dev, rep->device, sizeof rep->device);
    FILE *log = o->log ? o->log : stderr;

    c.plan = gpu_partition(g, getenv("XDNN_NO_FUSION") != NULL);
    gplan *pl = c.plan;
    if (o->const_weights)
        gpu_mark_constants(pl);
    if (o->verbose) {
        fprintf(log, "gpu: %s, %d partitions (materialized tensors they read and write):\n", rep->device,
                pl->nparts);
        gpu_print_partitions(pl, log);
        if (o->const_weights)
            fprintf(log, "gpu: %d of them compute from constant weights only: run once\n", pl->nonce);
    }
    st = gpu_select_engines(pl, &c.dev, o->force, o->nforce, o->verbose, log, d);
    if (st != XDNN_OK)
        return st;
    gpu_plan_workspace(pl);
    if (o->verbose)
        fprintf(log, "gpu: workspace %zu bytes\n", pl->ws_total);

    c.dptr = arena_alloc(g->ar, ((size_t)g->nt + 1) * sizeof *c.dptr);
    void **owned = arena_alloc(g->ar, ((size_t)g->nt + 1) * sizeof *owned);
    int nowned = 0;
    int warmup = o->warmup > 0 ? o->warmup : 0, iters = o->iters > 0 ? o->iters : 1;
    float *ms = arena_alloc(g->ar, (size_t)iters * sizeof *ms);

    /* Every buffer is allocated here, before anything runs. */
    for (int t = 0; t < g->nt && st == XDNN_OK; t++) {
        const gtensor *x = &g->t[t];
        if (!pl->materialized[t])
            continue;
        if (x->is_input || x->is_output) {
            size_t bytes = gg_span_bytes(x);
            CUDA_GOTO(cudaMalloc(&c.dptr[t], bytes ? bytes : 1), st, done);
            owned[nowned++] = c.dptr[t];
            if (x->is_input && bytes)
                CUDA_GOTO(cudaMemcpy(c.dptr[t], host[t], bytes, cudaMemcpyHostToDevice), st, done);
            else if (bytes) /* poison: all-ones bytes are NaN in f32/f16/bf16 */
                CUDA_GOTO(cudaMemset(c.dptr[t], 0xff, bytes), st, done);
        }
    }
    if (st == XDNN_OK && pl->ws_total)
        CUDA_GOTO(cudaMalloc((void **)&c.ws, pl->ws_total), st, done);
    for (int t = 0; t < g->nt; t++)
        if (pl->offset[t] != SIZE_MAX)
            c.dptr[t] = c.ws + pl->offset[t];
    gg_bind_views(g, c.dptr);
    if (st == XDNN_OK)
        CUDA_GOTO(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking), st, done);
    if (st == XDNN_OK && (st = gpu_check_cublas(cublasLtCreate(&c.lt), "cublasLtCreate", __FILE__, __LINE__, d)) != XDNN_OK)
        goto done;
    rep->plan_ms = now_ms() - t_plan;

    for (int i = 0; i < pl->nparts && st == XDNN_OK; i++) {
        st = pl->parts[i].engine->build(&c, &pl->parts[i], d);
        if (o->verbose && st == XDNN_OK && pl->parts[i].engine->detail)
            fprintf(log, "gpu: partition %d %s: %s %s\n", i, pl->parts[i].name, pl->parts[i].engine->name,
                    pl->parts[i].engine->detail(&pl->parts[i]));
    }
    rep->compile_ms = c.cstats.compile_ms;
    if (st != XDNN_OK)
        goto done;
    if (o->verbose)
        fprintf(log, "gpu: %d kernels compiled (%.1f ms), %d from memory, %d from disk cache\n", c.cstats.compiled,
                c.cstats.compile_ms, c.cstats.mem_hits, c.cstats.disk_hits);

    /* One checked run first: errors surface here, not inside timing. */
    if ((st = run_plan(&c, c.stream, d)) != XDNN_OK)
        goto done;
    CUDA_GOTO(cudaStreamSynchronize(c.stream), st, done);
    c.consts_done = true;
    if (o->after_first_run && (st = o->after_first_run(&c, o->user, d)) != XDNN_OK)
        goto done;

    rep->parts = calloc((size_t)pl->nparts + 1, sizeof *rep->parts);
    if (!rep->parts) {
        st = XDNN_ERR_NOMEM;
        goto done;
    }
    rep->nparts = pl->nparts;
    for (int i = 0; i < pl->nparts && st == XDNN_OK; i++) {
        gpart *p = &pl->parts[i];
        gpu_partition_report *r = &rep->parts[i];
        r->name = dup_str(p->name);
        r->engine = dup_str(p->engine->name);
        r->detail = dup_str(p->engine->detail ? p->engine->detail(p) : "");
        r->flops = p->flops;
        r->bytes = p->bytes;
        st = time_runs(&c, i, warmup, iters, ms, d);
        if (st == XDNN_OK)
            summarize_p90(ms, iters, &r->ms_median, &r->ms_min, &r->ms_max, &r->ms_p90);
    }
    if (st != XDNN_OK)
        goto done;
    if (o->cuda_graph) {
        st = time_graph(&c, warmup, iters, ms, &rep->total_ms, d);
    } else {
        double mn, mx;
        st = time_runs(&c, -1, warmup > 0 ? 1 : 0, iters, ms, d);
        if (st == XDNN_OK)
            summarize(ms, iters, &rep->total_ms, &mn, &mx);
    }
    if (st != XDNN_OK)
        goto done;

    for (int t = 0; t < g->nt && st == XDNN_OK; t++) {
        const gtensor *x = &g->t[t];
        size_t bytes = gg_span_bytes(x);
        if (x->is_output && !x->is_input && bytes && host[t])
            CUDA_GOTO(cudaMemcpy(host[t], c.dptr[t], bytes, cudaMemcpyDeviceToHost), st, done);
    }
done:
    release(&c, owned, nowned);
    return st;
}

xdnn_status gpu_run(run_state *st, const gpu_run_opts *opts, gpu_report *rep, xdnn_diags_t *d)
{
    memset(rep, 0, sizeof *rep);
    arena *ar = arena_create();
    ggraph *g = gpu_lower(st->g, ar);
    void **host = arena_alloc(ar, ((size_t)g->nt + 1) * sizeof *host);
    xdnn_status s = XDNN_OK;
    for (int t = 0; t < g->nt; t++) {
        const gtensor *x = &g->t[t];
        if (x->ir_index < 0 || (!x->is_input && !x->is_output))
            continue;
        host_tensor *h = &st->tensors[x->ir_index];
        if (!h->data || h->bytes < gg_span_bytes(x)) {
            diag_error(d, XDNN_ERR_INTERNAL, xloc_none(), "gpu_run: host tensor %s is %s (%zu bytes, need %zu)", x->name,
                       h->data ? "too small" : "not allocated", h->bytes, gg_span_bytes(x));
            s = XDNN_ERR_INTERNAL;
            break;
        }
        host[t] = h->data;
    }
    if (s == XDNN_OK)
        s = gpu_run_ggraph(g, host, opts, rep, d);
    arena_destroy(ar);
    return s;
}

void gpu_report_free(gpu_report *rep)
{
    if (!rep)
        return;
    for (int i = 0; i < rep->nparts; i++) {
        free((void *)(uintptr_t)rep->parts[i].name);
        free((void *)(uintptr_t)rep->parts[i].engine);
        free((void *)(uintptr_t)rep->parts[i].detail);
    }
    free(rep->parts);
    rep->parts = NULL;
    rep->nparts = 0;
}

void gpu_release_caches(void) { gpu_nvrtc_cache_clear(); }
