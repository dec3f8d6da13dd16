/* plan_build.c — make a plan from a bound graph (specialize, select engines,
 * collect compiled modules), check that a loaded plan fits this device and
 * version, and describe a plan (`xdnn plan --info`). */
#include "plan/backend.h"
#include "plan/fingerprint.h"
#include "plan/tune.h"

#include "lang/json.h"
#include "ops/op.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static expr *literal_of(arena *a, const value *v)
{
    xloc none = xloc_none();
    switch (v->kind) {
    case VAL_INT: return expr_int(a, v->i, none);
    case VAL_FLOAT: return expr_float(a, v->f, none);
    case VAL_BOOL: return expr_bool(a, v->b, none);
    case VAL_STRING: return expr_string(a, v->s, none);
    case VAL_DTYPE: return expr_dtype(a, v->dt, none);
    case VAL_LIST: {
        expr **items = arena_alloc(a, sizeof *items * (size_t)(v->n ? v->n : 1));
        for (int i = 0; i < v->n; i++)
            if (!(items[i] = literal_of(a, &v->items[i])))
                return NULL;
        return expr_list(a, items, v->n, none);
    }
    default: return NULL;
    }
}

/* Give every param of `dst` that is bound in `src` its bound value as a
 * literal; drop every sweep (a plan is one point).  keep_derived (a plan
 * with dynamic params) leaves derived params as derivations, so that they
 * follow the dynamic ones when xdnn_plan_resize binds other values. */
static void specialize_params(arena *a, xparam *dst, size_t ndst, const xparam *src, size_t nsrc, bool keep_derived)
{
    for (size_t i = 0; i < ndst; i++) {
        dst[i].sweep = NULL;
        dst[i].nsweep = 0;
        if (keep_derived && dst[i].derived)
            continue;
        for (size_t k = 0; k < nsrc; k++) {
            if (strcmp(dst[i].name, src[k].name) != 0 || !src[k].bound)
                continue;
            expr *lit = literal_of(a, &src[k].rvalue);
            if (lit) {
                dst[i].value = lit;
                dst[i].derived = false;
            }
        }
    }
}

char *plan_specialized_json(const xgraph *g, bool keep_derived, xdnn_diags_t *d)
{
    char *text = json_write_module_ex(g->module, JSON_WRITE_NO_LOCS);
    xdnn_module_t *m2 = NULL;
    if (!text || xdnn_module_parse("<plan graph>", text, strlen(text), true, d, &m2) != XDNN_OK) {
        free(text);
        xdnn_module_destroy(m2);
        if (!xdnn_diags_error_count(d))
            diag_error(d, XDNN_ERR_INTERNAL, xloc_none(), "the graph's JSON form does not read back");
        return NULL;
    }
    free(text);
    specialize_params(m2->ar, m2->params, m2->nparams, g->module->params, g->module->nparams, keep_derived);
    for (size_t i = 0; i < m2->ngraphs; i++) {
        xgraph *h = m2->graphs[i];
        if (strcmp(h->name, g->name) == 0)
            specialize_params(m2->ar, h->params, h->nparams, g->params, g->nparams, keep_derived);
        else
            specialize_params(m2->ar, h->params, h->nparams, NULL, 0, keep_derived);
    }
    text = json_write_module_ex(m2, JSON_WRITE_NO_LOCS);
    xdnn_module_destroy(m2);
    return text;
}

xdnn_status plan_parse_graph(const char *json, const char *name, xdnn_module_t **m, xgraph **g, xdnn_diags_t *d)
{
    return plan_parse_graph_with(json, name, NULL, 0, m, g, d);
}

xdnn_status plan_parse_graph_with(const char *json, const char *name, const xdnn_binding *b, size_t nb,
                                  xdnn_module_t **m, xgraph **g, xdnn_diags_t *d)
{
    *g = NULL;
    xdnn_status s = xdnn_module_parse("<plan graph>", json, strlen(json), true, d, m);
    if (s == XDNN_OK) /* a plan comes from elsewhere: its load()s stay in its folder (--sandbox's rule) */
        (*m)->confine_to_base = true;
    if (s == XDNN_OK && !(*g = xdnn_module_find_graph(*m, name))) {
        diag_error(d, XDNN_ERR_IO, xloc_none(), "corrupt plan: its module has no graph named '%s'", name);
        s = XDNN_ERR_IO;
    }
    if (s == XDNN_OK)
        s = xdnn_graph_bind(*g, b, nb, d);
    return s;
}

/* The tune cache's choice for a partition (plan_prepare_opts.cached). */
typedef struct cache_ctx {
    const xdnn_plan_t *p;
    arena *a;
} cache_ctx;

static bool cached_choice(void *user, const char *partition, char *engine, size_t elen, char *knobs, size_t klen)
{
    cache_ctx *cc = user;
    tune_entry e;
    const char *sig = tune_partition_signature(cc->p->g, partition, cc->a);
    if (!sig || !tune_cache_lookup(cc->p->device, sig, &e))
        return false;
    snprintf(engine, elen, "%s", e.engine);
    snprintf(knobs, klen, "%s", e.knobs);
    tune_entry_free(&e);
    return true;
}

/* Tune signatures of the parts, and what the cache says of each choice. */
static xdnn_status sign_parts(xdnn_plan_t *p)
{
    arena *a = arena_create();
    for (int i = 0; i < p->nparts; i++) {
        plan_part *q = &p->parts[i];
        if (!q->sig) {
            const char *sig = tune_partition_signature(p->g, q->name, a);
            if (!(q->sig = strdup(sig ? sig : ""))) {
                arena_destroy(a);
                return XDNN_ERR_NOMEM;
            }
        }
        tune_entry e;
        if (q->tuned_ms < 0 && q->sig[0] && tune_cache_lookup(p->device, q->sig, &e)) {
            if (strcmp(e.engine, q->engine) == 0 && strcmp(e.knobs, q->knobs) == 0) {
                q->tuned_ms = e.ms;
                q->from_cache = true;
            }
            tune_entry_free(&e);
        }
    }
    arena_destroy(a);
    return XDNN_OK;
}

/* What the caller set on the bound graph after binding (a seed override, the
 * tensors to keep) and tf32 as the options say: the seed and tf32 are
 * written into the specialized module, so a saved plan keeps them; `keep`
 * (report an intermediate) is a property of this plan only. */
static xdnn_status apply_overrides(xdnn_plan_t *p, const xgraph *src, int tf32, xdnn_diags_t *d)
{
    for (size_t i = 0; i < src->ntensors; i++)
        if (src->tensors[i].keep) {
            int t = ir_find_tensor(p->g, src->tensors[i].name);
            if (t >= 0)
                p->g->tensors[t].keep = true;
        }
    bool new_tf32 = tf32 >= 0 && (bool)tf32 != p->g->rtf32, new_seed = src->rseed != p->g->rseed;
    if (!new_tf32 && !new_seed)
        return XDNN_OK;
    if (new_tf32)
        p->g->ctx_tf32 = expr_bool(p->m->ar, tf32 != 0, xloc_none());
    if (new_seed)
        p->g->ctx_seed = expr_int(p->m->ar, (int64_t)src->rseed, xloc_none());
    xdnn_status s = xdnn_graph_bind(p->g, NULL, 0, d);
    if (s != XDNN_OK)
        return s;
    free(p->module_json);
    p->module_json = json_write_module_ex(p->m, JSON_WRITE_NO_LOCS);
    return p->module_json ? XDNN_OK : XDNN_ERR_NOMEM;
}

/* Measured selection (and every CPU plan): plan_select times or looks up
 * each partition; the backend then restores that choice. */
static xdnn_status select_measured(xdnn_plan_t *p, const xdnn_plan_options *o, FILE *log, xdnn_diags_t *d)
{
    run_state st;
    xdnn_status s = run_state_init(&st, p->g, o->base_dir ? o->base_dir : ".");
    if (s != XDNN_OK)
        return s;
    bool gpu = p->be->id == XDNN_BACKEND_CUDA, tune = o->heuristic != XDNN_HEUR_FAST;
    if (tune || gpu) {
        s = exec_load_inputs(&st, NULL, 0, d);
        if (s == XDNN_OK)
            s = run_state_alloc_results(&st, d);
    }
    select_opts so = {.use_gpu = gpu, .tune = tune, .warmup = o->tune_warmup > 0 ? o->tune_warmup : 0,
                      .iters = o->tune_iters > 1 ? o->tune_iters : 1, .log = log, .fp = p->device};
    if (s == XDNN_OK)
        s = plan_select(&st, &so, &p->parts, &p->nparts, d);
    run_state_free(&st);
    return s;
}

xdnn_status plan_build(const xgraph *g, const xdnn_plan_options *o, FILE *log, xdnn_diags_t *d, xdnn_plan_t **out)
{
    *out = NULL;
    if (!g->bound) {
        diag_error(d, XDNN_ERR_USAGE, xloc_none(), "xdnn_plan_build: graph '%s' is not bound", g->name);
        return XDNN_ERR_USAGE;
    }
    const char *model = o->device_model;
    if (model && (o->backend == XDNN_BACKEND_CPU || o->heuristic != XDNN_HEUR_FAST)) {
        diag_error(d, XDNN_ERR_USAGE, xloc_none(), "device model '%s': %s", model,
                   o->backend == XDNN_BACKEND_CPU ? "models describe GPUs; the CPU backend plans for this CPU"
                                                  : "a described device cannot be timed: use the fast heuristic");
        return XDNN_ERR_USAGE;
    }
    const plan_backend *be = plan_backend_get(model ? XDNN_BACKEND_CUDA : o->backend);
    char why[256] = "";
    if (!be || (!model && !be->available(why, sizeof why))) {
        diag_error(d, XDNN_ERR_DEVICE, xloc_none(), "the %s backend cannot run here: %s", xdnn_backend_name(o->backend),
                   be ? why : "unknown backend");
        return XDNN_ERR_DEVICE;
    }
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    xdnn_plan_t *p = calloc(1, sizeof *p);
    if (!p)
        return XDNN_ERR_NOMEM;
    p->be = be;
    p->device_ordinal = o->device;
    p->deterministic = o->deterministic;
    p->const_weights = o->const_weights;
    p->format_version = PLAN_FORMAT_VERSION;
    snprintf(p->xdnn_version, sizeof p->xdnn_version, "%s", XDNN_VERSION_STRING);
    xdnn_status s = XDNN_OK;
    if (model)
        snprintf(p->device, sizeof p->device, "gpu; model=%s", model);
    else
        s = fingerprint_device(be->id == XDNN_BACKEND_CUDA, p->device, sizeof p->device);
    if (s != XDNN_OK)
        diag_error(d, s, xloc_none(), "cannot identify the device: %s", p->device);
    if (s == XDNN_OK && o->ndynamic)
        s = plan_dynamic_parse(p, g, o->dynamic, o->ndynamic, d);
    if (s == XDNN_OK) {
        p->graph_name = strdup(g->name);
        p->module_json = plan_specialized_json(g, p->ndyn > 0, d);
        s = p->graph_name && p->module_json ? XDNN_OK : xdnn_diags_error_count(d) ? xdnn_diags_status(d)
                                                                                   : XDNN_ERR_NOMEM;
    }
    /* everything below works on the specialized graph the plan carries */
    if (s == XDNN_OK)
        s = plan_parse_graph(p->module_json, p->graph_name, &p->m, &p->g, d);
    if (s == XDNN_OK)
        s = apply_overrides(p, g, o->tf32, d);
    if (s == XDNN_OK)
        s = plan_collect_tensors(p, d);
    bool measured = o->heuristic != XDNN_HEUR_FAST || be->id == XDNN_BACKEND_CPU;
    if (s == XDNN_OK && measured)
        s = select_measured(p, o, log, d);
    cache_ctx cc = {p, arena_create()};
    plan_prepare_opts po = {.force = o->force, .nforce = (int)o->nforce, .restore = measured, .model = model,
                            .cached = model ? NULL : cached_choice, .user = &cc};
    if (s == XDNN_OK)
        s = be->prepare(p, &po, d);
    arena_destroy(cc.a);
    if (s == XDNN_OK)
        s = sign_parts(p);
    if (s == XDNN_OK && o->workspace_limit && p->ws.total_bytes > o->workspace_limit) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(),
                   "plan of graph '%s' needs %llu bytes of workspace, above the limit of %llu", p->graph_name,
                   (unsigned long long)p->ws.total_bytes, (unsigned long long)o->workspace_limit);
        s = XDNN_ERR_UNSUPPORTED;
    }
    if (s != XDNN_OK) {
        xdnn_plan_destroy(p);
        return s;
    }
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    p->build_ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-6;
    *out = p;
    return XDNN_OK;
}

xdnn_status plan_check_compatible(const xdnn_plan_t *p, bool use_gpu, xdnn_diags_t *d)
{
    char here[FINGERPRINT_MAX];
    xdnn_status s = fingerprint_device(use_gpu, here, sizeof here);
    if (s != XDNN_OK) {
        diag_error(d, s, xloc_none(), "cannot identify this device: %s", here);
        return s;
    }
    if (strcmp(p->xdnn_version, XDNN_VERSION_STRING) != 0) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(),
                   "plan refused: it was made by xdnn %s, this is xdnn %s (rebuild it: xdnn plan --replan PLAN -o PLAN)",
                   p->xdnn_version, XDNN_VERSION_STRING);
        return XDNN_ERR_UNSUPPORTED;
    }
    if (strcmp(p->device, here) != 0 && fingerprint_same_hardware(p->device, here)) {
        diag_note(d, xloc_none(),
                  "plan made under another driver ('%s'; this device is '%s'): loaded as it is (its engine choices and "
                  "compiled kernels depend on the GPU and its compute capability, not on the driver)",
                  p->device, here);
        return XDNN_OK;
    }
    if (strcmp(p->device, here) != 0) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(),
                   "plan refused: it was made for device '%s', this device is '%s' (rebuild it: xdnn plan --replan PLAN -o PLAN)",
                   p->device, here);
        return XDNN_ERR_UNSUPPORTED;
    }
    return XDNN_OK;
}

void plan_print_info(const xdnn_plan_t *p, FILE *f)
{
    fprintf(f, "plan format:  %u\n", p->format_version);
    fprintf(f, "xdnn:         %s%s\n", p->xdnn_version,
            strcmp(p->xdnn_version, XDNN_VERSION_STRING) ? " (not this xdnn: " XDNN_VERSION_STRING ")" : "");
    fprintf(f, "device:       %s\n", p->device);
    fprintf(f, "graph:        %s", p->graph_name);
    if (p->g) {
        fprintf(f, " (%zu tensors, %zu nodes; inputs:", p->g->ntensors, p->g->nnodes);
        for (size_t i = 0; i < p->g->ntensors; i++) {
            const xtensor *t = &p->g->tensors[i];
            if (t->kind != TK_INPUT)
                continue;
            fprintf(f, " %s: %s[", t->name, xdnn_dtype_name(t->rdtype));
            for (int k = 0; k < t->rrank; k++)
                fprintf(f, "%s%lld", k ? ", " : "", (long long)t->rdims[k]);
            fprintf(f, "]");
        }
        fprintf(f, ")");
    }
    fprintf(f, "\nparams:      ");
    if (p->m) {
        int n = 0;
        for (size_t i = 0; i < p->m->nparams; i++)
            if (p->m->params[i].bound)
                fprintf(f, " %s=%s", p->m->params[i].name, value_to_text(p->m->ar, &p->m->params[i].rvalue)), n++;
        for (size_t i = 0; p->g && i < p->g->nparams; i++)
            if (p->g->params[i].bound)
                fprintf(f, " %s=%s", p->g->params[i].name, value_to_text(p->m->ar, &p->g->params[i].rvalue)), n++;
        if (!n)
            fprintf(f, " (none)");
    }
    fprintf(f, "\n");
    if (p->ndyn) {
        fprintf(f, "dynamic:     ");
        for (int i = 0; i < p->ndyn; i++)
            fprintf(f, " %s=%lld:%lld", p->dyn[i].name, (long long)p->dyn[i].lo, (long long)p->dyn[i].hi);
        fprintf(f, " (xdnn_plan_resize: other values without planning again)\n");
    }
    if (p->const_weights)
        fprintf(f, "constants:    weights promised constant: %d partition%s computing from them only run%s once\n",
                p->nconst, p->nconst == 1 ? "" : "s", p->nconst == 1 ? "s" : "");
    fprintf(f, "partitions:   %d\n", p->nparts);
    for (int i = 0; i < p->nparts; i++) {
        const plan_part *q = &p->parts[i];
        char tuned[64];
        if (q->tuned_ms >= 0)
            snprintf(tuned, sizeof tuned, "%s %.4f ms", q->from_cache ? "cached" : "tuned", q->tuned_ms);
        else
            snprintf(tuned, sizeof tuned, "heuristic");
        fprintf(f, "  %-20s %-16s %-16s%s%s  %d candidate%s, %s\n", q->name, q->ops, q->engine, q->knobs[0] ? ":" : "",
                q->knobs, q->candidates, q->candidates == 1 ? "" : "s", tuned);
    }
    fprintf(f, "workspace:    %llu bytes in %d buffer%s\n", (unsigned long long)p->ws.total_bytes, p->ws.nbuffers,
            p->ws.nbuffers == 1 ? "" : "s");
    size_t blob_bytes = 0;
    for (int i = 0; i < p->nblobs; i++)
        blob_bytes += p->blobs[i].size;
    fprintf(f, "compiled:     %d module%s, %zu bytes%s\n", p->nblobs, p->nblobs == 1 ? "" : "s", blob_bytes,
            p->nblobs ? "" : " (none: the CPU reference compiles nothing)");
    for (int i = 0; i < p->nblobs; i++)
        fprintf(f, "  %s  %zu bytes\n", p->blobs[i].name, p->blobs[i].size);
}
