/* bench_sweep.c — from one spec to its cases: --set lists and ranges, the
 * params' own sweep lists, the cartesian product, --dtype rewriting, and
 * loading + binding one case.
 *
 * --dtype T, precisely: the graph must declare an io dtype (graph g(io=...));
 * its io context becomes T, and every input, weight, output or target whose
 * declared or annotated dtype equals the old io dtype becomes T.  compute and
 * intermediate dtypes, other declared dtypes (e.g. an f32 `stats` output) and
 * dtype attributes of ops (cast) are left alone. */
#include "bench.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void bench_set_free(bench_set *s)
{
    for (int i = 0; i < s->nvalues; i++)
        free(s->values[i]);
    free(s->values);
    s->values = NULL;
    s->nvalues = 0;
}

static bool push_value(const char *cmd, bench_set *s, const char *text, size_t len)
{
    if (s->nvalues == BENCH_MAX_VALUES) {
        cli_usage_error(cmd, "--set %s: more than %d values", s->name, BENCH_MAX_VALUES);
        return false;
    }
    if (!s->values && !(s->values = calloc(BENCH_MAX_VALUES, sizeof *s->values)))
        return false;
    s->values[s->nvalues++] = strndup(text, len);
    return true;
}

static bool parse_int(const char *s, long long *out)
{
    char *end;
    errno = 0;
    *out = strtoll(s, &end, 10);
    return *s && !*end && !errno;
}

bool bench_parse_set(const char *cmd, char *arg, bench_set *out)
{
    memset(out, 0, sizeof *out);
    char *eq = strchr(arg, '=');
    if (!eq || eq == arg || !eq[1]) {
        cli_usage_error(cmd, "--set needs NAME=VALUES (1,8,32 or START:STOP:STEP), got '%s'", arg);
        return false;
    }
    *eq = 0;
    out->name = arg;
    char *save = NULL;
    for (char *item = strtok_r(eq + 1, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        if (!strchr(item, ':')) {
            if (!*item || !push_value(cmd, out, item, strlen(item)))
                goto fail;
            continue;
        }
        /* START:STOP[:STEP], inclusive of STOP when the steps land on it */
        char buf[128];
        snprintf(buf, sizeof buf, "%s", item);
        char *f[3] = {buf, NULL, NULL};
        int nf = 1;
        for (char *c = buf; *c; c++)
            if (*c == ':') {
                *c = 0;
                if (nf == 3) {
                    nf = 4;
                    break;
                }
                f[nf++] = c + 1;
            }
        long long a, b, step = 1;
        if (nf > 3 || !parse_int(f[0], &a) || !parse_int(f[1], &b) || (nf == 3 && !parse_int(f[2], &step)) ||
            step <= 0 || b < a) {
            cli_usage_error(cmd, "--set %s: bad range '%s' (want START:STOP[:STEP] with integers, STOP >= START, STEP > 0)",
                            out->name, item);
            goto fail;
        }
        /* stops before v + step would pass STOP or overflow (v += step near
         * LLONG_MAX was undefined behaviour that wrapped into a negative value) */
        for (long long v = a;;) {
            char num[32];
            int n = snprintf(num, sizeof num, "%lld", v);
            if (!push_value(cmd, out, num, (size_t)n))
                goto fail;
            if (__builtin_add_overflow(v, step, &v) || v > b)
                break;
        }
    }
    if (out->nvalues == 0) {
        cli_usage_error(cmd, "--set %s: no values", out->name);
        goto fail;
    }
    return true;
fail:
    bench_set_free(out);
    return false;
}

xdnn_status bench_load_module(const bench_spec *sp, xdnn_module_t **m, xdnn_graph_t **g, xdnn_diags_t *d)
{
    *m = NULL;
    *g = NULL;
    xdnn_status s;
    if (sp->path) {
        s = xdnn_module_load(sp->path, sp->includes, d, m);
    } else {
        char err[512];
        char *text = bench_problem_text(sp->problem, sp->desc, sp->layout, err, sizeof err);
        if (!text) {
            xdnn_diags_add(d, XDNN_SEV_ERROR, XDNN_ERR_USAGE, "%s %s: %s", sp->problem, sp->desc, err);
            return XDNN_ERR_USAGE;
        }
        char name[256];
        snprintf(name, sizeof name, "<%s %s>", sp->problem, sp->desc);
        s = xdnn_module_parse(name, text, strlen(text), false, d, m);
        free(text);
    }
    if (s == XDNN_OK && !(*g = xdnn_module_find_graph(*m, sp->graph))) {
        xdnn_diags_add(d, XDNN_SEV_ERROR, XDNN_ERR_USAGE, "%s: %s", sp->path ? sp->path : sp->problem,
                       sp->graph ? "no graph of that name" : "the file defines no graph");
        if (sp->graph)
            xdnn_diags_add(d, XDNN_SEV_NOTE, XDNN_OK, "asked for --graph %s", sp->graph);
        s = XDNN_ERR_USAGE;
    }
    return s;
}

xdnn_status bench_load_case(const bench_case *c, xdnn_module_t **m, xdnn_graph_t **g, xdnn_diags_t *d)
{
    xdnn_status s = bench_load_module(c->spec, m, g, d);
    if (s == XDNN_OK && c->dtype) {
        xdnn_dtype t;
        xdnn_dtype_from_name(c->dtype, &t); /* validated by bench_expand */
        s = xdnn_graph_set_io_dtype(*g, t, d);
    }
    if (s == XDNN_OK)
        s = xdnn_graph_bind(*g, c->points, (size_t)c->npoints, d);
    return s;
}

/* One sweep axis: a param and its values. */
typedef struct axis {
    const char *name;
    const char *const *values;
    int n;
    const char **sweep; /* values when they are the param's sweep list (our array), else NULL */
} axis;

void bench_cases_free(bench_case *cases, int n)
{
    for (int i = 0; cases && i < n; i++)
        for (int k = 0; k < cases[i].npoints; k++) {
            free((void *)(uintptr_t)cases[i].points[k].name); /* strdup'ed by bench_expand */
            free((void *)(uintptr_t)cases[i].points[k].value_text);
        }
    free(cases);
}

static const bench_set *find_set(const bench_spec *sp, const char *name)
{
    for (int i = 0; i < sp->nsets; i++)
        if (strcmp(sp->sets[i].name, name) == 0)
            return &sp->sets[i];
    return NULL;
}

static void free_axes(axis *axes, int n)
{
    for (int i = 0; i < n; i++)
        free(axes[i].sweep);
}

static void list_params(FILE *f, const xdnn_graph_t *g)
{
    int n = 0;
    for (size_t i = 0; i < xdnn_graph_param_count(g); i++) {
        xdnn_param_info p;
        if (xdnn_graph_param(g, i, &p) == XDNN_OK && !p.derived)
            fprintf(f, "%s%s", n++ ? ", " : "", p.name);
    }
    fprintf(f, "%s\n", n ? "" : "(none)");
}

/* Append the axis of param i: its --set list, else its sweep list (values
 * borrowed from the module, which outlives the axes). */
static xdnn_status add_axis(const bench_spec *sp, const xdnn_graph_t *g, size_t i, axis *axes, int *nax)
{
    xdnn_param_info p;
    xdnn_status s = xdnn_graph_param(g, i, &p);
    if (s != XDNN_OK)
        return s;
    const bench_set *set = find_set(sp, p.name);
    if (set) {
        axes[(*nax)++] = (axis){p.name, (const char *const *)set->values, set->nvalues, NULL};
        return XDNN_OK;
    }
    if (p.nsweep == 0 || p.derived)
        return XDNN_OK;
    const char **vals = calloc(p.nsweep, sizeof *vals);
    if (!vals)
        return XDNN_ERR_NOMEM;
    for (size_t k = 0; k < p.nsweep; k++)
        if (!(vals[k] = xdnn_graph_param_sweep(g, i, k))) {
            free(vals);
            return XDNN_ERR_NOMEM;
        }
    axes[(*nax)++] = (axis){p.name, vals, (int)p.nsweep, vals};
    return XDNN_OK;
}

xdnn_status bench_expand(const bench_spec *sp, bench_case **cases, int *ncases)
{
    *cases = NULL;
    *ncases = 0;
    const char *cmd = "bench";
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m;
    xdnn_graph_t *g;
    xdnn_status s = bench_load_module(sp, &m, &g, d);
    xdnn_diags_print(d, stderr);
    xdnn_diags_destroy(d);
    if (s != XDNN_OK) {
        xdnn_module_destroy(m);
        return s;
    }
    const char *where = sp->where ? sp->where : "";
    const char *sep = sp->where ? ": " : "";
    /* every --set names a settable param */
    for (int i = 0; i < sp->nsets; i++) {
        int pi = xdnn_graph_find_param(g, sp->sets[i].name);
        xdnn_param_info p;
        if (pi < 0 || xdnn_graph_param(g, (size_t)pi, &p) != XDNN_OK) {
            fprintf(stderr, "xdnn bench: %s%s--set %s: graph '%s' has no param '%s'; its params: ", where, sep,
                    sp->sets[i].name, xdnn_graph_name(g), sp->sets[i].name);
            list_params(stderr, g);
            xdnn_module_destroy(m);
            return XDNN_ERR_USAGE;
        }
        if (p.derived) {
            fprintf(stderr, "xdnn bench: %s%s--set %s: '%s' is derived (%s = %s); set the params it is computed from\n",
                    where, sep, p.name, p.name, p.name, p.value_text);
            xdnn_module_destroy(m);
            return XDNN_ERR_USAGE;
        }
    }
    /* --dtype needs an io dtype to rewrite, and known dtype names */
    for (int i = 0; i < sp->ndtypes; i++) {
        xdnn_dtype t;
        if (!xdnn_dtype_from_name(sp->dtypes[i], &t)) {
            fprintf(stderr, "xdnn bench: %s%s--dtype: unknown dtype '%s'\n", where, sep, sp->dtypes[i]);
            xdnn_module_destroy(m);
            return XDNN_ERR_USAGE;
        }
    }
    if (sp->ndtypes && !xdnn_graph_declares_io_dtype(g)) {
        fprintf(stderr,
                "xdnn bench: %s%s--dtype: graph '%s' declares no io dtype, so nothing says which dtypes to rewrite "
                "(declare graph %s(io=...))\n",
                where, sep, xdnn_graph_name(g), xdnn_graph_name(g));
        xdnn_module_destroy(m);
        return XDNN_ERR_USAGE;
    }
    axis axes[2 * CLI_MAX_LIST + 64];
    int nax = 0;
    /* the module's params, then the graph's own, as many as a case holds */
    for (size_t i = 0; i < xdnn_graph_param_count(g) && nax < CLI_MAX_LIST && s == XDNN_OK; i++)
        s = add_axis(sp, g, i, axes, &nax);
    long long total = sp->ndtypes ? sp->ndtypes : 1;
    for (int i = 0; i < nax; i++) {
        total *= axes[i].n;
        if (total > BENCH_MAX_CASES)
            break;
    }
    if (s == XDNN_OK && total > BENCH_MAX_CASES) {
        fprintf(stderr, "xdnn bench: %s%smore than %d cases; narrow the --set lists\n", where, sep, BENCH_MAX_CASES);
        s = XDNN_ERR_USAGE;
    }
    bench_case *cs = s == XDNN_OK ? calloc((size_t)total, sizeof *cs) : NULL;
    if (s == XDNN_OK && !cs)
        s = XDNN_ERR_NOMEM;
    if (s != XDNN_OK) {
        free_axes(axes, nax);
        xdnn_module_destroy(m);
        return s;
    }
    int idx[2 * CLI_MAX_LIST + 64] = {0};
    int n = 0;
    for (int dt = 0; dt < (sp->ndtypes ? sp->ndtypes : 1); dt++) {
        memset(idx, 0, sizeof idx);
        for (;;) {
            bench_case *c = &cs[n++];
            c->spec = sp;
            c->dtype = sp->ndtypes ? sp->dtypes[dt] : NULL;
            for (int a = 0; a < nax; a++)
                c->points[c->npoints++] = (xdnn_binding){strdup(axes[a].name), strdup(axes[a].values[idx[a]])};
            /* odometer: the last param moves fastest */
            int a = nax - 1;
            while (a >= 0 && ++idx[a] == axes[a].n)
                idx[a--] = 0;
            if (a < 0)
                break;
        }
    }
    (void)cmd;
    free_axes(axes, nax);
    xdnn_module_destroy(m);
    *cases = cs;
    *ncases = n;
    return XDNN_OK;
}
