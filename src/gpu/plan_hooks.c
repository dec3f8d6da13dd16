/* plan_hooks.c — what plans and --tune need from the GPU backend
 * (src/plan/plan_gpu_hooks.h; src/gpu_none/gpu_none.c has the CPU-build
 * stand-ins):
 *
 *   plan_gpu_fingerprint   the device as a plan/tune-cache key;
 *   plan_gpu_candidates    every (partition, engine, knob variant) of st's
 *                          graph, partitioned exactly as gpu_run does (it IS a
 *                          gpu_run: the candidates are timed from its
 *                          after_first_run hook, on st's inputs, with every
 *                          intermediate already computed);
 *   plan_gpu_import_blobs  preloading a plan's NVRTC modules (the ones its
 *                          CUDA backend built with, backend_cuda.c) so the
 *                          next build compiles nothing.
 *
 * Timing one candidate: the partition's chosen engine state is set aside, the
 * candidate is built with its own scratch buffer (c->ws swapped for the
 * duration, ws_offset 0, so the plan's workspace layout stays as planned),
 * run `warmup` times untimed and `iters` times between CUDA events (median),
 * released, and the chosen state restored.  A candidate whose build or run
 * fails is reported unsupported with the error's text; the tuning goes on. */
#include "plan/plan_gpu_hooks.h"

#include "gpu/engine.h"
#include "gpu/gpu.h"
#include "gpu/lower.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_KNOB_VARIANTS = 16 };

/* Fields of the fingerprint may not contain ';' (its separator). */
static void no_semicolons(char *s)
{
    for (; *s; s++)
        if (*s == ';')
            *s = ',';
}

xdnn_status plan_gpu_fingerprint(char *buf, size_t len)
{
    char why[256];
    if (!gpu_probe(why, sizeof why)) {
        snprintf(buf, len, "no usable GPU: %s", why);
        return XDNN_ERR_DEVICE;
    }
    xdnn_diags_t *d = xdnn_diags_create();
    gpu_device dev;
    xdnn_status st = gpu_device_open(&dev, d);
    int driver = 0;
    cudaError_t e = st == XDNN_OK ? cudaDriverGetVersion(&driver) : cudaSuccess;
    if (st != XDNN_OK) {
        const xdnn_diag *m = xdnn_diags_count(d) ? xdnn_diags_get(d, 0) : NULL;
        snprintf(buf, len, "cannot open the GPU: %s", m ? m->message : "unknown error");
    } else if (e != cudaSuccess) {
        snprintf(buf, len, "cudaDriverGetVersion failed: %s", cudaGetErrorString(e));
        st = XDNN_ERR_DEVICE;
    } else {
        /* What makes two GPUs interchangeable for plans and tuning: model, SMs,
         * compute capability and the driver's major CUDA version (12080 -> 12).
         * No bus id or serial, so identical GPUs, in one host or several,
         * share plans and one tune-cache file. */
        no_semicolons(dev.name);
        snprintf(buf, len, "gpu; name=%s; sm=%d; cc=%d.%d; driver=%d", dev.name, dev.sm_count, dev.cc_major,
                 dev.cc_minor, driver / 1000);
    }
    xdnn_diags_destroy(d);
    return st;
}

/* ---- candidates */

typedef struct cand_list {
    plan_gpu_choice *v;
    int *part;              /* per choice: its partition's index (names may be cut to fit) */
    int n, cap;
} cand_list;

/* A bounded copy (a name longer than the field is cut, never overflows). */
static void copy_text(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static plan_gpu_choice *cand_push(cand_list *l, int part, const char *name, const char *engine, const char *knobs)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 32;
        plan_gpu_choice *v = realloc(l->v, (size_t)cap * sizeof *v);
        if (!v)
            return NULL;
        l->v = v;
        int *pi = realloc(l->part, (size_t)cap * sizeof *pi);
        if (!pi)
            return NULL;
        l->part = pi;
        l->cap = cap;
    }
    l->part[l->n] = part;
    plan_gpu_choice *c = &l->v[l->n++];
    memset(c, 0, sizeof *c);
    copy_text(c->partition, sizeof c->partition, name);
    copy_text(c->engine, sizeof c->engine, engine);
    copy_text(c->knobs, sizeof c->knobs, knobs);
    c->ms = -1;
    return c;
}

/* Every (engine, knob variant) of every partition, with supports()' verdict.
 * Timing fills ms later. */
static xdnn_status list_candidates(const gplan *pl, const gpu_device *dev, cand_list *l)
{
    char knobs[MAX_KNOB_VARIANTS][GPU_KNOB_LEN];
    for (int pi = 0; pi < pl->nparts; pi++) {
        const gpart *p = &pl->parts[pi];
        op_class cls = gpu_part_class(pl, p);
        for (int e = 0; e < gpu_nengines; e++) {
            const gpu_engine *eng = gpu_engine_rows[e].engine;
            if (!gpu_engine_serves(e, cls))
                continue;
            char why[512] = "";
            bool ok = eng->supports(pl, p, dev, why, sizeof why);
            const gpu_knobs *kn = gpu_engine_knobs(eng);
            int nk = kn ? kn->variants(pl, p, dev, knobs, MAX_KNOB_VARIANTS) : 0;
            if (nk > MAX_KNOB_VARIANTS)
                nk = MAX_KNOB_VARIANTS;
            for (int k = 0; k < (nk > 0 ? nk : 1); k++) {
                plan_gpu_choice *c = cand_push(l, pi, p->name, eng->name, nk > 0 ? knobs[k] : "");
                if (!c)
                    return XDNN_ERR_NOMEM;
                c->supported = ok;
                if (!ok)
                    copy_text(c->why, sizeof c->why, why);
            }
        }
    }
    return XDNN_OK;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* warmup untimed runs, then the median of iters event-timed runs of one partition. */
static xdnn_status time_partition(gpu_ctx *c, gpart *p, int warmup, int iters, float *ms, double *median,
                                  xdnn_diags_t *d)
{
    cudaEvent_t ev[2] = {NULL, NULL};
    xdnn_status st = XDNN_OK;
    CUDA_GOTO(cudaEventCreate(&ev[0]), st, out);
    CUDA_GOTO(cudaEventCreate(&ev[1]), st, out);
    for (int it = 0; it < warmup + iters && st == XDNN_OK; it++) {
        bool timed = it >= warmup;
        if (timed)
            CUDA_GOTO(cudaEventRecord(ev[0], c->stream), st, out);
        st = p->engine->execute(c, p, c->stream, d);
        if (st == XDNN_OK && timed) {
            CUDA_GOTO(cudaEventRecord(ev[1], c->stream), st, out);
            CUDA_GOTO(cudaEventSynchronize(ev[1]), st, out);
            CUDA_GOTO(cudaEventElapsedTime(&ms[it - warmup], ev[0], ev[1]), st, out);
        }
    }
    if (st == XDNN_OK)
        CUDA_GOTO(cudaStreamSynchronize(c->stream), st, out);
    if (st == XDNN_OK) {
        qsort(ms, (size_t)iters, sizeof *ms, cmp_float);
        *median = iters % 2 ? (double)ms[iters / 2] : 0.5 * ((double)ms[iters / 2 - 1] + (double)ms[iters / 2]);
    }
out:
    if (ev[0])
        cudaEventDestroy(ev[0]);
    if (ev[1])
        cudaEventDestroy(ev[1]);
    return st;
}

typedef struct tune_job {
    bool time_them;
    int warmup, iters;
    cand_list list;
} tune_job;

/* Build, time and release one candidate on partition p, leaving p as it was. */
static void time_candidate(gpu_ctx *c, gpart *p, const gpu_engine *eng, plan_gpu_choice *cand, const tune_job *j,
                           float *ms)
{
    gpart saved = *p;
    char *saved_ws = c->ws;
    xdnn_diags_t *dl = xdnn_diags_create();
    void *scratch = NULL;
    p->engine = eng;
    p->priv = NULL;
    p->knobs = cand->knobs;
    p->genstats = GS_NONE; /* timed alone: a genstats pair's peer does not run (genstats.h) */
    p->ws_bytes = eng->workspace(c->plan, p, &c->dev);
    p->ws_offset = 0;
    xdnn_status st = gpu_check_cuda(cudaMalloc(&scratch, p->ws_bytes ? p->ws_bytes : 1), "cudaMalloc", __FILE__,
                                    __LINE__, dl);
    if (st == XDNN_OK) {
        c->ws = scratch;
        st = eng->build(c, p, dl);
        if (st == XDNN_OK)
            st = time_partition(c, p, j->warmup, j->iters, ms, &cand->ms, dl);
        if (eng->release)
            eng->release(p);
    }
    if (st != XDNN_OK) {
        const xdnn_diag *m = xdnn_diags_count(dl) ? xdnn_diags_get(dl, 0) : NULL;
        cand->supported = false;
        cand->ms = -1;
        copy_text(cand->why, sizeof cand->why, m ? m->message : "build or run failed");
        cudaGetLastError(); /* a launch error must not be seen by the next candidate */
    }
    cudaFree(scratch);
    c->ws = saved_ws;
    *p = saved;
    xdnn_diags_destroy(dl);
}

static xdnn_status tune_hook(gpu_ctx *c, void *user, xdnn_diags_t *d)
{
    tune_job *j = user;
    xdnn_status st = list_candidates(c->plan, &c->dev, &j->list);
    if (st != XDNN_OK || !j->time_them)
        return st;
    float *ms = malloc((size_t)j->iters * sizeof *ms);
    if (!ms)
        return XDNN_ERR_NOMEM;
    for (int i = 0; i < j->list.n; i++) {
        plan_gpu_choice *cand = &j->list.v[i];
        if (!cand->supported)
            continue;
        const gpu_engine *eng = gpu_engine_find(cand->engine);
        if (eng)
            time_candidate(c, &c->plan->parts[j->list.part[i]], eng, cand, j, ms);
    }
    free(ms);
    /* a candidate that failed on the device may have left the stream in error */
    return gpu_check_cuda(cudaStreamSynchronize(c->stream), "cudaStreamSynchronize", __FILE__, __LINE__, d);
}

xdnn_status plan_gpu_candidates(run_state *st, bool time_them, int warmup, int iters, plan_gpu_choice **out,
                                int *n, xdnn_diags_t *d)
{
    *out = NULL;
    *n = 0;
    tune_job j = {.time_them = time_them, .warmup = warmup > 0 ? warmup : 0, .iters = iters > 0 ? iters : 1};
    xdnn_status s;
    if (!time_them) {
        /* listing needs no run: lower and partition as gpu_run does, ask supports() */
        gpu_device dev;
        if ((s = gpu_device_open(&dev, d)) != XDNN_OK)
            return s;
        arena *ar = arena_create();
        ggraph *g = gpu_lower(st->g, ar);
        gplan *pl = gpu_partition(g, getenv("XDNN_NO_FUSION") != NULL);
        s = list_candidates(pl, &dev, &j.list);
        arena_destroy(ar);
    } else {
        /* a real run: every partition gets its heuristic engine and runs once,
         * so each candidate is timed on the intermediates it would really read */
        gpu_report rep;
        gpu_run_opts o = {.warmup = 0, .iters = 1, .after_first_run = tune_hook, .user = &j, .log = stderr};
        s = gpu_run(st, &o, &rep, d);
        gpu_report_free(&rep);
    }
    free(j.list.part);
    if (s != XDNN_OK) {
        free(j.list.v);
        return s;
    }
    *out = j.list.v;
    *n = j.list.n;
    return XDNN_OK;
}

/* ---- compiled modules */

xdnn_status plan_gpu_import_blobs(const plan_blob *blobs, int n, xdnn_diags_t *d)
{
    if (n == 0)
        return XDNN_OK;
    gpu_device dev;
    xdnn_status s = gpu_device_open(&dev, d); /* a clear "no GPU" before any module load */
    for (int i = 0; i < n && s == XDNN_OK; i++)
        s = gpu_nvrtc_preload(blobs[i].name, blobs[i].data, blobs[i].size, d);
    return s;
}
