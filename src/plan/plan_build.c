/* plan_build.c — make a plan from a bound graph (specialize, select engines,
 * collect compiled modules), check that a loaded plan fits this device and
 * version, and describe a plan (`xdnn plan --info`). */
#include "plan/plan.h"

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
 * literal; drop every sweep (a plan is one point). */
static void specialize_params(arena *a, xparam *dst, size_t ndst, const xparam *src, size_t nsrc)
{
    for (size_t i = 0; i < ndst; i++) {
        dst[i].sweep = NULL;
        dst[i].nsweep = 0;
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

char *plan_specialized_json(const xgraph *g, xdnn_diags_t *d)
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
    specialize_params(m2->ar, m2->params, m2->nparams, g->module->params, g->module->nparams);
    for (size_t i = 0; i < m2->ngraphs; i++) {
        xgraph *h = m2->graphs[i];
        if (strcmp(h->name, g->name) == 0)
            specialize_params(m2->ar, h->params, h->nparams, g->params, g->nparams);
        else
            specialize_params(m2->ar, h->params, h->nparams, NULL, 0);
    }
    text = json_write_module_ex(m2, JSON_WRITE_NO_LOCS);
    xdnn_module_destroy(m2);
    return text;
}

xdnn_status plan_parse_graph(const char *json, const char *name, xdnn_module_t **m, xgraph **g, xdnn_diags_t *d)
{
    *g = NULL;
    xdnn_status s = xdnn_module_parse("<plan graph>", json, strlen(json), true, d, m);
    if (s == XDNN_OK && !(*g = xdnn_module_find_graph(*m, name))) {
        diag_error(d, XDNN_ERR_IO, xloc_none(), "corrupt plan: its module has no graph named '%s'", name);
        s = XDNN_ERR_IO;
    }
    if (s == XDNN_OK)
        s = xdnn_graph_bind(*g, NULL, 0, d);
    return s;
}

xdnn_status plan_build(const xgraph *g, const select_opts *o, xdnn_diags_t *d, xdnn_plan_t **out)
{
    *out = NULL;
    if (!g->bound) {
        diag_error(d, XDNN_ERR_USAGE, xloc_none(), "xdnn_plan_create: graph '%s' is not bound", g->name);
        return XDNN_ERR_USAGE;
    }
    xdnn_plan_t *p = calloc(1, sizeof *p);
    if (!p)
        return XDNN_ERR_NOMEM;
    p->format_version = PLAN_FORMAT_VERSION;
    snprintf(p->xdnn_version, sizeof p->xdnn_version, "%s", XDNN_VERSION_STRING);
    snprintf(p->device, sizeof p->device, "%s", o->fp);
    p->graph_name = strdup(g->name);
    p->module_json = plan_specialized_json(g, d);
    xdnn_status s = p->graph_name && p->module_json ? XDNN_OK : xdnn_diags_error_count(d) ? xdnn_diags_status(d)
                                                                                           : XDNN_ERR_NOMEM;
    /* everything below runs on the specialized graph the plan will carry */
    if (s == XDNN_OK)
        s = plan_parse_graph(p->module_json, p->graph_name, &p->m, &p->g, d);
    run_state st;
    bool have_st = false;
    if (s == XDNN_OK) {
        s = run_state_init(&st, p->g, ".");
        have_st = s == XDNN_OK;
    }
    /* inputs are needed only to time something or to run the GPU once */
    if (s == XDNN_OK && (o->tune || o->use_gpu)) {
        s = exec_load_inputs(&st, NULL, 0, d);
        if (s == XDNN_OK)
            s = run_state_alloc_results(&st, d);
    }
    if (s == XDNN_OK)
        s = plan_select(&st, o, &p->parts, &p->nparts, d);
    if (s == XDNN_OK && o->use_gpu) {
        char **force = plan_force_strings(p->parts, p->nparts);
        s = force ? plan_gpu_export_blobs(&st, (const char *const *)force, p->nparts, &p->blobs, &p->nblobs, d)
                  : XDNN_ERR_NOMEM;
        plan_force_free(force, p->nparts);
    }
    if (have_st)
        run_state_free(&st);
    if (s != XDNN_OK) {
        xdnn_plan_destroy(p);
        return s;
    }
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
    fprintf(f, "\npartitions:   %d\n", p->nparts);
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
