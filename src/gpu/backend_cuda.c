/* backend_cuda.c — CUDA as a plan backend (plan/backend.h).
 *
 * prepare: lower the plan's graph, partition it, choose an engine per
 * partition (or restore the plan's choices as data: engine and knobs by
 * partition index, no strings parsed), lay out the workspace, create the
 * cuBLASLt handle and build every partition (NVRTC kernels come from the plan's
 * modules or the kernel cache; the modules used are kept in the plan).
 * execute: a gpu_ctx on the stack with the caller's pointers, workspace and
 * stream; every partition's engine enqueues.  Nothing is allocated on the
 * device, nothing compiled, nothing synchronized.  The plan state is read-only
 * during execute, so threads may execute one plan concurrently.
 * Plan-time constants (p->const_weights, constfold.c): the once partitions
 * write into device memory the plan owns (cuda_plan.consts); the first
 * execute runs them under a lock and synchronizes its stream before any
 * execute may skip them, so no thread reads a constant not yet written. */
#include "gpu/engine.h"
#include "gpu/genstats.h"
#include "gpu/lower.h"
#include "plan/backend.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

typedef struct cuda_plan {
    arena *ar;
    gpu_ctx c;            /* dev, lt, plan; no pointers, no stream */
    bool built;           /* prepared for a present device: execute may run */
    char *consts;         /* the once partitions' results: [const_base, ws_total) of the layout */
    pthread_mutex_t fold_lock;
    atomic_bool folded;   /* the once partitions have run (and their stream was synchronized) */
} cuda_plan;

static bool cuda_available(char *why, size_t len)
{
    char buf[256];
    bool ok = gpu_probe(buf, sizeof buf);
    if (why && len)
        snprintf(why, len, "%s", ok ? "" : buf);
    return ok;
}

static void cuda_release(xdnn_plan_t *p)
{
    cuda_plan *cp = p->exec;
    if (!cp)
        return;
    gplan *pl = cp->c.plan;
    for (int i = 0; pl && i < pl->nparts; i++)
        if (pl->parts[i].engine && pl->parts[i].engine->release && pl->parts[i].priv)
            pl->parts[i].engine->release(&pl->parts[i]);
    if (cp->c.lt)
        cublasLtDestroy(cp->c.lt);
    if (cp->consts)
        cudaFree(cp->consts);
    pthread_mutex_destroy(&cp->fold_lock);
    arena_destroy(cp->ar);
    free(cp);
    p->exec = NULL;
}

/* Restore the choices of p->parts: same partitions, in order, by name. */
static xdnn_status restore_choices(xdnn_plan_t *p, gplan *pl, const gpu_device *dev, xdnn_diags_t *d)
{
    if (p->nparts != pl->nparts) {
        diag_error(d, XDNN_ERR_IO, xloc_none(),
                   "plan does not fit this xdnn: it has %d partitions, the graph partitions into %d (rebuild it: "
                   "xdnn plan --replan PLAN -o PLAN)", p->nparts, pl->nparts);
        return XDNN_ERR_IO;
    }
    for (int i = 0; i < pl->nparts; i++) {
        gpart *g = &pl->parts[i];
        const plan_part *q = &p->parts[i];
        const gpu_engine *eng = gpu_engine_find(q->engine);
        char why[512] = "";
        if (strcmp(g->name, q->name) != 0 || !eng) {
            diag_error(d, XDNN_ERR_IO, xloc_none(), "plan partition %d is %s on %s; here it is %s%s", i, q->name,
                       q->engine, g->name, eng ? "" : " and that engine does not exist");
            return XDNN_ERR_IO;
        }
        if (!eng->supports(pl, g, dev, why, sizeof why)) {
            diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), "plan partition %s: engine %s cannot run it here: %s",
                       q->name, eng->name, why);
            return XDNN_ERR_UNSUPPORTED;
        }
        const gpu_knobs *kn = gpu_engine_knobs(eng);
        if (q->knobs[0] && (!kn || !kn->valid(q->knobs, why, sizeof why))) {
            diag_error(d, XDNN_ERR_IO, xloc_none(), "plan partition %s: engine %s does not take knobs '%s'%s%s", q->name,
                       eng->name, q->knobs, kn ? ": " : "", kn ? why : "");
            return XDNN_ERR_IO;
        }
        g->engine = eng;
        g->knobs = arena_strdup(pl->g->ar, q->knobs);
        p->parts[i].flops = g->flops;
        p->parts[i].bytes = g->bytes;
        g->ws_bytes = eng->workspace(pl, g, dev);
    }
    gpu_genstats_pair(pl, dev, NULL); /* as the selection pairs them (genstats.h) */
    return XDNN_OK;
}

/* The remembered choice of each partition (the tune cache), as its preset
 * when its engine still runs it; a stale entry leaves the heuristics to choose. */
static void preset_cached(gplan *pl, const gpu_device *dev, const plan_prepare_opts *o)
{
    for (int i = 0; o->cached && i < pl->nparts; i++) {
        char engine[64], knobs[128], why[512];
        gpart *g = &pl->parts[i];
        if (!o->cached(o->user, g->name, engine, sizeof engine, knobs, sizeof knobs))
            continue;
        const gpu_engine *eng = gpu_engine_find(engine);
        const gpu_knobs *kn = eng ? gpu_engine_knobs(eng) : NULL;
        if (!eng || !eng->supports(pl, g, dev, why, sizeof why) || (knobs[0] && (!kn || !kn->valid(knobs, why, sizeof why))))
            continue;
        g->preset = eng;
        g->preset_knobs = arena_strdup(pl->g->ar, knobs);
    }
}

/* The op names of a partition's nodes, joined by '+'. */
static char *ops_of(const gplan *pl, const gpart *g)
{
    size_t len = 1;
    for (int k = 0; k < g->nnodes; k++)
        len += strlen(pl->g->n[g->nodes[k]].op) + 1;
    char *s = malloc(len), *w = s;
    for (int k = 0; s && k < g->nnodes; k++)
        w += sprintf(w, "%s%s", k ? "+" : "", pl->g->n[g->nodes[k]].op);
    if (s && g->nnodes == 0)
        *s = '\0';
    return s;
}

/* Record the selection in p->parts (structured: engine, knobs, candidates). */
static xdnn_status record_choices(xdnn_plan_t *p, const gplan *pl)
{
    plan_parts_free(p->parts, p->nparts);
    p->nparts = 0;
    p->parts = calloc((size_t)pl->nparts + 1, sizeof *p->parts);
    if (!p->parts)
        return XDNN_ERR_NOMEM;
    for (int i = 0; i < pl->nparts; i++) {
        const gpart *g = &pl->parts[i];
        plan_part *q = &p->parts[p->nparts++];
        q->name = strdup(g->name);
        q->ops = ops_of(pl, g);
        q->tuned_ms = -1;
        q->flops = g->flops;
        q->bytes = g->bytes;
        snprintf(q->engine, sizeof q->engine, "%s", g->engine->name);
        snprintf(q->knobs, sizeof q->knobs, "%s", g->knobs ? g->knobs : "");
        q->cands = calloc((size_t)g->ncands + 1, sizeof *q->cands);
        if (!q->name || !q->ops || !q->cands)
            return XDNN_ERR_NOMEM;
        for (int k = 0; k < g->ncands; k++) {
            plan_candidate *c = &q->cands[q->ncands++];
            snprintf(c->engine, sizeof c->engine, "%s", g->cands[k].engine->name);
            c->supported = g->cands[k].ok;
            c->chosen = g->cands[k].engine == g->engine;
            c->cost_us = g->cands[k].cost;
            c->ms = -1;
            c->reason = strdup(g->cands[k].why ? g->cands[k].why : "");
            if (!c->reason)
                return XDNN_ERR_NOMEM;
            q->candidates += c->supported;
        }
    }
    return XDNN_OK;
}

/* Keep the NVRTC modules the build used, so a saved plan compiles nothing. */
static xdnn_status keep_modules(xdnn_plan_t *p, unsigned mark)
{
    int n = gpu_nvrtc_used_since(mark, NULL, 0);
    if (n <= 0)
        return XDNN_OK;
    gpu_nvrtc_module *mods = calloc((size_t)n, sizeof *mods);
    p->blobs = calloc((size_t)n, sizeof *p->blobs);
    if (!mods || !p->blobs) {
        free(mods);
        return XDNN_ERR_NOMEM;
    }
    gpu_nvrtc_used_since(mark, mods, n);
    for (int i = 0; i < n; i++) {
        plan_blob *b = &p->blobs[p->nblobs];
        b->data = malloc(mods[i].len ? mods[i].len : 1);
        if (!b->data) {
            free(mods);
            return XDNN_ERR_NOMEM;
        }
        snprintf(b->name, sizeof b->name, "%s", mods[i].name);
        memcpy(b->data, mods[i].code, mods[i].len);
        b->size = mods[i].len;
        p->nblobs++;
    }
    free(mods);
    return XDNN_OK;
}

static xdnn_status cuda_prepare(xdnn_plan_t *p, const plan_prepare_opts *o, xdnn_diags_t *d)
{
    cuda_plan *cp = calloc(1, sizeof *cp);
    if (!cp)
        return XDNN_ERR_NOMEM;
    p->exec = cp;
    pthread_mutex_init(&cp->fold_lock, NULL);
    atomic_init(&cp->folded, false);
    cp->ar = arena_create();
    gpu_ctx *c = &cp->c;
    xdnn_status s = XDNN_OK;
    if (o->model) {
        if (!gpu_device_model(o->model, &c->dev)) {
            char names[128];
            gpu_device_model_names(names, sizeof names);
            diag_error(d, XDNN_ERR_USAGE, xloc_none(), "unknown device model '%s' (known: %s)", o->model, names);
            return XDNN_ERR_USAGE;
        }
    } else {
        /* Opening the device, its primary context (created lazily: made now)
         * and the cuBLASLt handle (the first one loads the library) are the
         * process's setup, timed apart from the plan's own work. */
        double t0 = now_ms();
        s = gpu_device_open_at(&c->dev, p->device_ordinal, d);
        if (s == XDNN_OK)
            s = gpu_check_cuda(cudaFree(NULL), "cudaFree(NULL)", __FILE__, __LINE__, d);
        if (s == XDNN_OK)
            s = gpu_check_cublas(cublasLtCreate(&c->lt), "cublasLtCreate", __FILE__, __LINE__, d);
        p->context_ms = now_ms() - t0;
        if (s != XDNN_OK)
            return s;
    }
    ggraph *g = gpu_lower(p->g, cp->ar);
    g->sizes_as_args = p->ndyn > 0; /* a resize to a known shape class then compiles nothing (codegen.h) */
    c->plan = gpu_partition(g, getenv("XDNN_NO_FUSION") != NULL);
    gplan *pl = c->plan;
    pl->deterministic = p->deterministic;
    p->nconst = p->const_weights ? gpu_mark_constants(pl) : 0;
    FILE *log = o->log ? o->log : stderr;
    if (o->verbose) {
        char desc[256];
        gpu_device_describe(&c->dev, desc, sizeof desc);
        fprintf(log, "gpu: %s, %d partitions (materialized tensors they read and write):\n", desc, pl->nparts);
        gpu_print_partitions(pl, log);
        if (p->const_weights)
            fprintf(log, "gpu: %d of them compute from constant weights only: run once\n", p->nconst);
    }
    if (o->restore) {
        s = restore_choices(p, pl, &c->dev, d);
    } else {
        preset_cached(pl, &c->dev, o);
        s = gpu_select_engines(pl, &c->dev, o->force, o->nforce, o->verbose, log, d);
    }
    if (s == XDNN_OK && !o->restore)
        s = record_choices(p, pl);
    if (s != XDNN_OK)
        return s;
    gpu_plan_workspace(pl);
    p->ws.total_bytes = pl->const_base; /* the constants are the plan's own (cuda_plan.consts) */
    p->ws.nbuffers = 0;
    for (int t = 0; t < g->nt; t++)
        p->ws.nbuffers += pl->offset[t] != SIZE_MAX;
    for (int i = 0; i < pl->nparts; i++)
        p->ws.nbuffers += pl->parts[i].ws_bytes > 0;
    if (o->verbose)
        fprintf(log, "gpu: workspace %zu bytes\n", pl->ws_total);
    if (o->model)
        return XDNN_OK; /* a described device: nothing can be built for it here */
    if (pl->ws_total > pl->const_base &&
        (s = gpu_check_cuda(cudaMalloc((void **)&cp->consts, pl->ws_total - pl->const_base), "cudaMalloc", __FILE__,
                            __LINE__, d)) != XDNN_OK)
        return s;
    unsigned mark = gpu_nvrtc_use_mark();
    for (int i = 0; i < pl->nparts && s == XDNN_OK; i++) {
        s = pl->parts[i].engine->build(c, &pl->parts[i], d);
        if (o->verbose && s == XDNN_OK && pl->parts[i].engine->detail)
            fprintf(log, "gpu: partition %d %s: %s %s\n", i, pl->parts[i].name, pl->parts[i].engine->name,
                    pl->parts[i].engine->detail(&pl->parts[i]));
    }
    if (s == XDNN_OK && o->verbose)
        fprintf(log, "gpu: %d kernels compiled (%.1f ms), %d from memory, %d from disk cache\n", c->cstats.compiled,
                c->cstats.compile_ms, c->cstats.mem_hits, c->cstats.disk_hits);
    if (s == XDNN_OK && p->nblobs == 0)
        s = keep_modules(p, mark);
    p->compile_ms = c->cstats.compile_ms;
    p->kernels_compiled = c->cstats.compiled;
    p->kernels_cached = c->cstats.mem_hits + c->cstats.disk_hits;
    cp->built = p->executable = s == XDNN_OK;
    return s;
}

enum { STACK_PTRS = 512 };

/* Run every once partition (weights to plan-owned constants) and wait for
 * them, once per plan: concurrent first executes wait on the lock, and only
 * a finished fold lets an execute skip them. */
static xdnn_status fold_constants(cuda_plan *cp, gpu_ctx *c, xdnn_diags_t *d)
{
    const gplan *pl = c->plan;
    xdnn_status s = XDNN_OK;
    pthread_mutex_lock(&cp->fold_lock);
    if (!atomic_load(&cp->folded)) {
        for (int i = 0; i < pl->nparts && s == XDNN_OK; i++)
            if (pl->parts[i].once)
                s = pl->parts[i].engine->execute(c, &pl->parts[i], c->stream, d);
        if (s == XDNN_OK)
            s = gpu_check_cuda(cudaStreamSynchronize(c->stream), "cudaStreamSynchronize (plan-time constants)",
                               __FILE__, __LINE__, d);
        if (s == XDNN_OK)
            atomic_store(&cp->folded, true);
    }
    pthread_mutex_unlock(&cp->fold_lock);
    return s;
}

static xdnn_status cuda_execute(const xdnn_plan_t *p, int first, int count, void *const *ptr, void *ws, void *stream,
                                xdnn_diags_t *d)
{
    cuda_plan *cp = p->exec; /* only its fold state changes, under its lock */
    if (!cp || !cp->built)
        return XDNN_ERR_USAGE;
    gpu_ctx c = cp->c;
    const gplan *pl = c.plan;
    const ggraph *g = pl->g;
    c.stream = (cudaStream_t)stream;
    c.ws = ws;
    void *local[STACK_PTRS];
    c.dptr = g->nt <= STACK_PTRS ? local : calloc((size_t)g->nt, sizeof *c.dptr);
    if (!c.dptr)
        return XDNN_ERR_NOMEM;
    for (int t = 0; t < g->nt; t++) {
        const gtensor *x = &g->t[t];
        if (pl->offset[t] != SIZE_MAX && pl->offset[t] >= pl->const_base)
            c.dptr[t] = cp->consts + (pl->offset[t] - pl->const_base);
        else if (pl->offset[t] != SIZE_MAX)
            c.dptr[t] = c.ws + pl->offset[t];
        else if (x->ir_index >= 0 && (x->is_input || x->is_output))
            c.dptr[t] = ptr[x->ir_index];
        else
            c.dptr[t] = NULL;
    }
    gg_bind_views(g, c.dptr);
    xdnn_status s = XDNN_OK;
    if (pl->nonce && !atomic_load(&cp->folded))
        s = fold_constants(cp, &c, d);
    for (int i = first; i < first + count && s == XDNN_OK; i++)
        if (!pl->parts[i].once)
            s = pl->parts[i].engine->execute(&c, &pl->parts[i], c.stream, d);
    if (c.dptr != local)
        free(c.dptr);
    return s;
}

const plan_backend plan_backend_cuda = {
    XDNN_BACKEND_CUDA, "cuda", cuda_available, cuda_prepare, cuda_execute, cuda_release,
};
