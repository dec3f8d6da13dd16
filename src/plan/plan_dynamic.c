/* plan_dynamic.c — dynamic params (issue 14 item 5): a plan built with
 * ranges ("S=1:8192") is resized to other values in them without selecting
 * or tuning engines again (xdnn_plan_resize), and the queries of a plan's
 * ranges and plan-time constants.
 *
 * Resizing is planning with every choice already made: the plan's module
 * (its derived params left as derivations) is parsed and bound to the new
 * values, its partitions' engines and knobs are restored as data by index
 * (the backend refuses when the graph partitions otherwise at the new sizes
 * or an engine cannot run them), and the backend lays out the workspace and
 * builds.  On CUDA a dynamic plan's generated kernels (pointwise fusions,
 * casts, matmul epilogues, reductions, softmax) take their sizes as
 * arguments (codegen.h), so a new size of a known shape class is an NVRTC
 * cache hit; a new class compiles once (then comes from the in-memory and
 * on-disk kernel caches). */
#include "plan/backend.h"

#include "core/expr.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* The bound param `name` of g (the graph's own first, as binding does). */
static const xparam *find_param(const xgraph *g, const char *name)
{
    for (size_t i = 0; i < g->nparams; i++)
        if (strcmp(g->params[i].name, name) == 0)
            return &g->params[i];
    for (size_t i = 0; i < g->module->nparams; i++)
        if (strcmp(g->module->params[i].name, name) == 0)
            return &g->module->params[i];
    return NULL;
}

/* A decimal integer filling all of text. */
static bool parse_int(const char *text, int64_t *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(text, &end, 10);
    if (errno || end == text || *end)
        return false;
    *v = x;
    return true;
}

xdnn_status plan_dynamic_parse(xdnn_plan_t *p, const xgraph *g, const char *const *texts, size_t n, xdnn_diags_t *d)
{
    free(p->dyn);
    p->ndyn = 0;
    if (!(p->dyn = calloc(n ? n : 1, sizeof *p->dyn)))
        return XDNN_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        const char *t = texts[i] ? texts[i] : "";
        const char *eq = strchr(t, '='), *colon = eq ? strchr(eq, ':') : NULL;
        char name[64], lo_text[32], hi_text[32];
        int64_t lo = 0, hi = 0;
        bool shaped = eq && colon && eq > t && (size_t)(eq - t) < sizeof name &&
                      (size_t)(colon - eq - 1) < sizeof lo_text && strlen(colon + 1) < sizeof hi_text;
        if (shaped) {
            snprintf(name, sizeof name, "%.*s", (int)(eq - t), t);
            snprintf(lo_text, sizeof lo_text, "%.*s", (int)(colon - eq - 1), eq + 1);
            snprintf(hi_text, sizeof hi_text, "%s", colon + 1);
            shaped = parse_int(lo_text, &lo) && parse_int(hi_text, &hi);
        }
        if (!shaped || lo < 1 || lo > hi) {
            diag_error(d, XDNN_ERR_USAGE, xloc_none(), "dynamic param '%s': expected P=LO:HI with integers 1 <= LO <= HI",
                       t);
            return XDNN_ERR_USAGE;
        }
        const xparam *x = find_param(g, name);
        if (x && x->derived) {
            diag_error(d, XDNN_ERR_USAGE, xloc_none(),
                       "dynamic param '%s': '%s' is derived from other params (make those dynamic: it follows them)", t,
                       name);
            return XDNN_ERR_USAGE;
        }
        if (!x || !x->bound || x->rvalue.kind != VAL_INT) {
            diag_error(d, XDNN_ERR_USAGE, xloc_none(), "dynamic param '%s': graph '%s' has no integer param named '%s'",
                       t, g->name, name);
            return XDNN_ERR_USAGE;
        }
        if (x->rvalue.i < lo || x->rvalue.i > hi) {
            diag_error(d, XDNN_ERR_USAGE, xloc_none(),
                       "dynamic param '%s': the graph is bound with %s=%lld, outside %lld:%lld", t, name,
                       (long long)x->rvalue.i, (long long)lo, (long long)hi);
            return XDNN_ERR_USAGE;
        }
        if (plan_is_dynamic(p, name)) {
            diag_error(d, XDNN_ERR_USAGE, xloc_none(), "dynamic param '%s' is given twice", name);
            return XDNN_ERR_USAGE;
        }
        plan_dynamic *y = &p->dyn[p->ndyn++];
        snprintf(y->name, sizeof y->name, "%s", name);
        y->lo = lo;
        y->hi = hi;
    }
    return XDNN_OK;
}

bool plan_is_dynamic(const xdnn_plan_t *p, const char *param)
{
    for (int i = 0; i < p->ndyn; i++)
        if (strcmp(p->dyn[i].name, param) == 0)
            return true;
    return false;
}

bool xdnn_plan_const_weights(const xdnn_plan_t *p) { return p && p->const_weights; }

size_t xdnn_plan_constant_partitions(const xdnn_plan_t *p) { return p ? (size_t)p->nconst : 0; }

size_t xdnn_plan_dynamic_count(const xdnn_plan_t *p) { return p ? (size_t)p->ndyn : 0; }

xdnn_status xdnn_plan_dynamic(const xdnn_plan_t *p, size_t i, const char **name, int64_t *lo, int64_t *hi)
{
    if (!p || i >= (size_t)p->ndyn)
        return XDNN_ERR_USAGE;
    if (name)
        *name = p->dyn[i].name;
    if (lo)
        *lo = p->dyn[i].lo;
    if (hi)
        *hi = p->dyn[i].hi;
    return XDNN_OK;
}

/* Every dynamic param's value for the resized plan: the one asked, else p's. */
static xdnn_status new_values(const xdnn_plan_t *p, const xdnn_binding *v, size_t n, xdnn_binding *b, char (*text)[32],
                              xdnn_diags_t *d)
{
    for (size_t k = 0; k < n; k++) {
        int64_t x;
        int i = -1;
        for (int j = 0; v[k].name && j < p->ndyn; j++)
            if (strcmp(p->dyn[j].name, v[k].name) == 0)
                i = j;
        if (i < 0) {
            diag_error(d, XDNN_ERR_USAGE, xloc_none(),
                       "xdnn_plan_resize: '%s' is not a dynamic param of this plan of graph '%s' (plan it with a range: "
                       "xdnn plan --dynamic %s=LO:HI)", v[k].name ? v[k].name : "(null)", p->graph_name,
                       v[k].name ? v[k].name : "P");
            return XDNN_ERR_USAGE;
        }
        if (!v[k].value_text || !parse_int(v[k].value_text, &x) || x < p->dyn[i].lo || x > p->dyn[i].hi) {
            diag_error(d, XDNN_ERR_USAGE, xloc_none(),
                       "xdnn_plan_resize: %s=%s is outside the plan's dynamic range %lld:%lld (an integer in it, or a "
                       "new plan)", p->dyn[i].name, v[k].value_text ? v[k].value_text : "(null)",
                       (long long)p->dyn[i].lo, (long long)p->dyn[i].hi);
            return XDNN_ERR_USAGE;
        }
        snprintf(text[i], sizeof text[i], "%lld", (long long)x);
    }
    for (int i = 0; i < p->ndyn; i++) {
        if (!text[i][0]) {
            const xparam *x = find_param(p->g, p->dyn[i].name);
            if (!x || x->rvalue.kind != VAL_INT) { /* checked when built: a loaded plan's OPTS may still lie */
                diag_error(d, XDNN_ERR_IO, xloc_none(), "corrupt plan: its dynamic param '%s' is not an int param "
                           "of graph '%s'", p->dyn[i].name, p->graph_name);
                return XDNN_ERR_IO;
            }
            snprintf(text[i], sizeof text[i], "%lld", (long long)x->rvalue.i);
        }
        b[i] = (xdnn_binding){.name = p->dyn[i].name, .value_text = text[i]};
    }
    return XDNN_OK;
}

/* p's choices, without what selection saw (the candidates, the signatures). */
static xdnn_status copy_choices(const xdnn_plan_t *p, xdnn_plan_t *q)
{
    q->parts = calloc((size_t)p->nparts + 1, sizeof *q->parts);
    if (!q->parts)
        return XDNN_ERR_NOMEM;
    for (int i = 0; i < p->nparts; i++) {
        const plan_part *a = &p->parts[i];
        plan_part *b = &q->parts[q->nparts++];
        b->name = strdup(a->name);
        b->ops = strdup(a->ops ? a->ops : "");
        memcpy(b->engine, a->engine, sizeof b->engine);
        memcpy(b->knobs, a->knobs, sizeof b->knobs);
        b->tuned_ms = -1;
        if (!b->name || !b->ops)
            return XDNN_ERR_NOMEM;
    }
    return XDNN_OK;
}

xdnn_status xdnn_plan_resize(const xdnn_plan_t *p, const xdnn_binding *values, size_t n, xdnn_diags_t *d,
                             xdnn_plan_t **out)
{
    if (!out)
        return XDNN_ERR_USAGE;
    *out = NULL;
    if (!p || (n && !values))
        return XDNN_ERR_USAGE;
    if (!p->be || !p->executable || !p->g) {
        diag_error(d, XDNN_ERR_USAGE, xloc_none(), "xdnn_plan_resize: this plan of graph '%s' cannot run here (a "
                   "device-model plan, or one loaded to inspect): resize a plan that executes", p->graph_name);
        return XDNN_ERR_USAGE;
    }
    if (!p->ndyn) {
        diag_error(d, XDNN_ERR_USAGE, xloc_none(), "xdnn_plan_resize: the plan of graph '%s' has no dynamic params "
                   "(build it with ranges: xdnn_plan_options.dynamic, xdnn plan --dynamic P=LO:HI)", p->graph_name);
        return XDNN_ERR_USAGE;
    }
    double t0 = now_ms();
    xdnn_binding *b = calloc((size_t)p->ndyn, sizeof *b);
    char(*text)[32] = calloc((size_t)p->ndyn, sizeof *text);
    xdnn_plan_t *q = calloc(1, sizeof *q);
    xdnn_status s = b && text && q ? XDNN_OK : XDNN_ERR_NOMEM;
    if (s == XDNN_OK)
        s = new_values(p, values, n, b, text, d);
    if (s == XDNN_OK) {
        q->be = p->be;
        q->format_version = p->format_version;
        memcpy(q->xdnn_version, p->xdnn_version, sizeof q->xdnn_version);
        memcpy(q->device, p->device, sizeof q->device);
        q->device_ordinal = p->device_ordinal;
        q->deterministic = p->deterministic;
        q->const_weights = p->const_weights;
        q->resized = true;
        q->graph_name = strdup(p->graph_name);
        q->module_json = strdup(p->module_json);
        q->dyn = malloc((size_t)p->ndyn * sizeof *q->dyn);
        if (!q->graph_name || !q->module_json || !q->dyn)
            s = XDNN_ERR_NOMEM;
        else
            memcpy(q->dyn, p->dyn, (size_t)p->ndyn * sizeof *q->dyn), q->ndyn = p->ndyn;
    }
    if (s == XDNN_OK)
        s = plan_parse_graph_with(q->module_json, q->graph_name, b, (size_t)p->ndyn, &q->m, &q->g, d);
    for (size_t i = 0; s == XDNN_OK && i < p->g->ntensors && i < q->g->ntensors; i++) /* `keep` marks are the caller's, not the module's */
        q->g->tensors[i].keep = p->g->tensors[i].keep;
    if (s == XDNN_OK)
        s = plan_collect_tensors(q, d);
    if (s == XDNN_OK)
        s = copy_choices(p, q);
    plan_prepare_opts po = {.restore = true};
    if (s == XDNN_OK)
        s = q->be->prepare(q, &po, d);
    free(b);
    free(text);
    if (s != XDNN_OK) {
        xdnn_plan_destroy(q);
        return s;
    }
    q->build_ms = q->load_ms = now_ms() - t0; /* a resize is its plan's load */
    *out = q;
    return XDNN_OK;
}
