/* module.c — the module part of the public API (include/xdnn.h): loading a
 * .dnn or JSON file, graphs of a module, writing it back, and building a
 * graph by hand from C (text arguments parsed by the .dnn text parsers). */
#include "xdnn.h"

#include "ast.h"
#include "core/fileio.h"
#include "core/ir.h"
#include "json.h"
#include "ops/op.h"
#include "parse.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The public API stays visible in libxdnn.so (built with -fvisibility=hidden). */

xdnn_module_t *xdnn_module_create(void)
{
    arena *a = arena_create();
    xdnn_module_t *m = arena_alloc(a, sizeof *m);
    m->ar = a;
    m->default_graph = -1;
    return m;
}

void xdnn_module_destroy(xdnn_module_t *m)
{
    if (m)
        arena_destroy(m->ar);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static bool looks_like_json(const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
            continue;
        return c == '{';
    }
    return false;
}

/* NULL when `full` (canonical) lies under one of the roots, else why not. */
static const char *confined_to(const char *const *roots, size_t nroots, const char *path, const char *full,
                               const char *outside)
{
    if (path[0] == '/')
        return "it is an absolute path";
    char buf[PATH_MAX];
    if (!realpath(full, buf)) /* it does not exist (the read will say so): judge the words */
        return strstr(path, "..") ? "it goes through '..'" : NULL;
    for (size_t i = 0; i < nroots; i++) {
        size_t n = strlen(roots[i]);
        if (strncmp(buf, roots[i], n) == 0 && (buf[n] == '/' || buf[n] == 0 || n == 1))
            return NULL;
    }
    return outside;
}

const char *module_confinement(const xdnn_module_t *m, const char *path, const char *full)
{
    if (!m || !m->nroots)
        return NULL;
    return confined_to(m->roots, m->nroots, path, full, "it leads outside the graph's folder and the -I folders");
}

const char *module_confinement_at(const xdnn_module_t *m, const char *path, const char *full, const char *base_dir)
{
    const char *why = module_confinement(m, path, full);
    char root[PATH_MAX];
    if (why || !m || !m->confine_to_base)
        return why;
    const char *roots[] = {realpath(base_dir ? base_dir : ".", root) ? root : "/nonexistent/xdnn-confined"};
    return confined_to(roots, 1, path, full, "it leads outside the plan's folder");
}

/* Records the folders a confined module may read from: the graph file's and
 * the include folders, canonical (a symlink cannot lead out). */
static void confine(xdnn_module_t *m, const char *path, const char *const *include_dirs)
{
    size_t n = 1;
    for (size_t i = 0; include_dirs && include_dirs[i]; i++)
        n++;
    m->roots = arena_alloc(m->ar, n * sizeof *m->roots);
    char buf[PATH_MAX];
    const char *dir = path_dirname(m->ar, path);
    if (realpath(dir, buf))
        m->roots[m->nroots++] = arena_strdup(m->ar, buf);
    for (size_t i = 0; include_dirs && include_dirs[i]; i++)
        if (realpath(include_dirs[i], buf))
            m->roots[m->nroots++] = arena_strdup(m->ar, buf);
    if (!m->nroots) /* nothing resolvable: nothing may be read */
        m->roots[m->nroots++] = "/nonexistent/xdnn-confined";
}

static xdnn_status module_from_text(const char *name, const char *text, size_t len, bool is_json,
                                    const char *const *include_dirs, bool confined, xdnn_diags_t *diags,
                                    xdnn_module_t **out)
{
    xdnn_module_t *m = xdnn_module_create();
    if (confined)
        confine(m, name, include_dirs);
    xdnn_status s = is_json ? json_read_into(m, name, text, len, diags)
                            : dnn_parse_into(m, name, text, len, include_dirs, diags);
    if (s != XDNN_OK) {
        xdnn_module_destroy(m);
        m = NULL;
    }
    *out = m;
    return s;
}

static xdnn_status module_load(const char *path, const char *const *include_dirs, bool confined,
                               xdnn_diags_t *diags, xdnn_module_t **out);

xdnn_status xdnn_module_load_confined(const char *path, const char *const *include_dirs, xdnn_diags_t *diags,
                                      xdnn_module_t **out)
{
    return module_load(path, include_dirs, true, diags, out);
}

xdnn_status xdnn_module_load(const char *path, const char *const *include_dirs, xdnn_diags_t *diags,
                             xdnn_module_t **out)
{
    return module_load(path, include_dirs, false, diags, out);
}

static xdnn_status module_load(const char *path, const char *const *include_dirs, bool confined,
                               xdnn_diags_t *diags, xdnn_module_t **out)
{
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    xdnn_status s = file_read_all(path, &text, &len, diags);
    if (s != XDNN_OK)
        return s;
    bool is_json = ends_with(path, ".json") || (!ends_with(path, ".dnn") && looks_like_json(text, len));
    s = module_from_text(path, text, len, is_json, include_dirs, confined, diags, out);
    free(text);
    return s;
}

xdnn_status xdnn_module_parse(const char *name, const char *text, size_t len, bool is_json, xdnn_diags_t *diags,
                              xdnn_module_t **out)
{
    *out = NULL;
    return module_from_text(name ? name : "<input>", text, len, is_json, NULL, false, diags, out);
}

size_t xdnn_module_graph_count(const xdnn_module_t *m) { return m ? m->ngraphs : 0; }

xdnn_graph_t *xdnn_module_graph(xdnn_module_t *m, size_t i) { return m && i < m->ngraphs ? m->graphs[i] : NULL; }

xdnn_graph_t *xdnn_module_find_graph(xdnn_module_t *m, const char *name)
{
    if (!m || m->ngraphs == 0)
        return NULL;
    if (!name) {
        if (m->default_graph >= 0 && (size_t)m->default_graph < m->ngraphs)
            return m->graphs[m->default_graph];
        return m->graphs[m->ngraphs - 1];
    }
    for (size_t i = 0; i < m->ngraphs; i++)
        if (strcmp(m->graphs[i]->name, name) == 0)
            return m->graphs[i];
    return NULL;
}

/* ---------------------------------------------------------------- writing */

static xdnn_status write_text(char *text, const char *path, xdnn_diags_t *diags)
{
    if (!text) {
        diag_error(diags, XDNN_ERR_NOMEM, ((xloc){.file = path}), "out of memory writing the module");
        return XDNN_ERR_NOMEM;
    }
    xdnn_status s = file_write_atomic(path, text, strlen(text), diags);
    free(text);
    return s;
}

xdnn_status xdnn_module_write_json(const xdnn_module_t *m, const char *path, xdnn_diags_t *diags)
{
    return write_text(json_write_module(m), path, diags);
}

xdnn_status xdnn_module_write_dnn(const xdnn_module_t *m, const char *path, xdnn_diags_t *diags)
{
    return write_text(dnn_write_module(m), path, diags);
}

char *xdnn_module_to_json(const xdnn_module_t *m) { return m ? json_write_module(m) : NULL; }
char *xdnn_module_to_dnn(const xdnn_module_t *m) { return m ? dnn_write_module(m) : NULL; }

/* ---------------------------------------------------------------- params */

static xdnn_status add_param(xdnn_module_t *m, const char *name, expr *v, bool derived, xdnn_diags_t *diags)
{
    if (!m || !name || !v)
        return XDNN_ERR_USAGE;
    if (!dnn_is_plain_ident(name)) { /* the rules of .dnn text (lower.c lower_param), which JSON shares */
        diag_error(diags, XDNN_ERR_USAGE, xloc_none(), "param name '%s' is not an identifier", name);
        return XDNN_ERR_USAGE;
    }
    bool taken = ir_find_param(m, NULL, name) != NULL;
    for (size_t i = 0; !taken && i < m->ngraphs; i++)
        taken = ir_find_param(m, m->graphs[i], name) != NULL;
    if (taken) {
        diag_error(diags, XDNN_ERR_SEMANTIC, xloc_none(), "param '%s' is already defined", name);
        return XDNN_ERR_SEMANTIC;
    }
    xparam p = {.name = arena_strdup(m->ar, name), .value = v, .derived = derived};
    ir_add_param(m, NULL, p);
    return XDNN_OK;
}

xdnn_status xdnn_module_add_param_int(xdnn_module_t *m, const char *name, int64_t v)
{
    return m ? add_param(m, name, expr_int(m->ar, v, xloc_none()), false, NULL) : XDNN_ERR_USAGE;
}

xdnn_status xdnn_module_add_param_float(xdnn_module_t *m, const char *name, double v)
{
    return m ? add_param(m, name, expr_float(m->ar, v, xloc_none()), false, NULL) : XDNN_ERR_USAGE;
}

static bool mentions_name(const expr *e)
{
    if (e->kind == EX_IDENT)
        return strcmp(e->s, "inf") != 0 && strcmp(e->s, "nan") != 0;
    for (int i = 0; i < e->nargs; i++)
        if (mentions_name(e->args[i]))
            return true;
    return false;
}

xdnn_status xdnn_module_add_param_expr(xdnn_module_t *m, const char *name, const char *expr_text,
                                       xdnn_diags_t *diags)
{
    if (!m || !expr_text)
        return XDNN_ERR_USAGE;
    expr *e = expr_parse_text(m->ar, expr_text, xloc_none(), diags);
    if (!e)
        return XDNN_ERR_SYNTAX;
    return add_param(m, name, e, mentions_name(e), diags);
}

/* ---------------------------------------------------------------- graphs by hand */

xdnn_graph_t *xdnn_module_add_graph(xdnn_module_t *m, const char *name)
{
    if (!m || !name || !dnn_is_plain_ident(name) || xdnn_module_find_graph(m, name))
        return NULL;
    return ir_add_graph(m, name, xloc_none());
}

void xdnn_graph_set_context(xdnn_graph_t *g, xdnn_dtype io, xdnn_dtype compute, xdnn_dtype intermediate,
                            uint64_t seed)
{
    if (!g)
        return;
    arena *a = g->module->ar;
    g->ctx_io = expr_dtype(a, io, xloc_none());
    g->ctx_compute = expr_dtype(a, compute, xloc_none());
    g->ctx_intermediate = expr_dtype(a, intermediate, xloc_none());
    g->ctx_seed = expr_int(a, (int64_t)seed, xloc_none());
}

int xdnn_graph_add_tensor(xdnn_graph_t *g, const char *name, xdnn_tensor_kind kind, xdnn_dtype dtype, int rank,
                          const int64_t *dims, const char *init_text, xdnn_diags_t *diags)
{
    if (!g || !name || rank < 0 || rank > XDNN_MAX_RANK || (rank && !dims) || kind == XDNN_TENSOR_VIRTUAL ||
        (unsigned)dtype >= XDNN_DTYPE_COUNT) {
        diag_error(diags, XDNN_ERR_USAGE, xloc_none(), "xdnn_graph_add_tensor: bad arguments for '%s'",
                   name ? name : "(null)");
        return -1;
    }
    if (!dnn_is_writable_name(name)) { /* what .dnn text and JSON can hold */
        diag_error(diags, XDNN_ERR_USAGE, xloc_none(), "xdnn_graph_add_tensor: a tensor cannot be named '%s' "
                   "(\"_\" discards a result; no back-quote or control character)", name);
        return -1;
    }
    arena *a = g->module->ar;
    xinit *init = NULL;
    if (init_text && !(init = init_parse_text(a, init_text, xloc_none(), diags)))
        return -1;
    int ti = ir_add_tensor(g, name, kind == XDNN_TENSOR_INPUT ? TK_INPUT : TK_WEIGHT, xloc_none(), diags);
    if (ti < 0)
        return -1;
    xtensor *t = &g->tensors[ti];
    t->has_dtype = true;
    t->dtype = dtype;
    t->rank = rank;
    t->dims = arena_alloc(a, sizeof *t->dims * (size_t)(rank ? rank : 1));
    for (int i = 0; i < rank; i++)
        t->dims[i] = expr_int(a, dims[i], xloc_none());
    t->init = init;
    return ti;
}

xdnn_status xdnn_graph_set_layout(xdnn_graph_t *g, const char *tensor, const char *tag, int rank,
                                  const int64_t *perm, xdnn_diags_t *diags)
{
    int ti = g && tensor ? ir_find_tensor(g, tensor) : -1;
    if (ti < 0) {
        diag_error(diags, XDNN_ERR_USAGE, xloc_none(), "xdnn_graph_set_layout: no tensor '%s'",
                   tensor ? tensor : "(null)");
        return XDNN_ERR_USAGE;
    }
    arena *a = g->module->ar;
    xtensor *t = &g->tensors[ti];
    int probe[XDNN_MAX_RANK];
    if (tag) {
        if (!layout_perm_for_tag(tag, t->rank, probe)) {
            diag_error(diags, XDNN_ERR_SEMANTIC, xloc_none(), "layout '%s' does not fit '%s' of rank %d", tag,
                       tensor, t->rank);
            return XDNN_ERR_SEMANTIC;
        }
        t->layout = (xlayout){.kind = LAYOUT_NAMED, .name = arena_strdup(a, tag)};
        return XDNN_OK;
    }
    if (!perm || rank != t->rank) {
        diag_error(diags, XDNN_ERR_USAGE, xloc_none(), "xdnn_graph_set_layout: '%s' needs a tag or a perm of %d entries",
                   tensor, t->rank);
        return XDNN_ERR_USAGE;
    }
    expr **args = arena_alloc(a, sizeof *args * (size_t)(rank ? rank : 1));
    for (int i = 0; i < rank; i++)
        args[i] = expr_int(a, perm[i], xloc_none());
    t->layout = (xlayout){.kind = LAYOUT_PERM, .args = args, .nargs = rank};
    return XDNN_OK;
}

int xdnn_graph_add_node(xdnn_graph_t *g, const char *op, int n_inputs, const char *const *inputs, int n_results,
                        const char *const *results, const char *attrs, xdnn_diags_t *diags)
{
    int opid = g && op ? op_lookup(op) : -1;
    if (opid < 0) {
        diag_error(diags, XDNN_ERR_SEMANTIC, xloc_none(), "unknown op '%s'", op ? op : "(null)");
        return -1;
    }
    const op_desc *d = op_get(opid);
    arena *a = g->module->ar;
    if (n_inputs < 0 || n_inputs > OP_MAX_PORTS || (!d->variadic && n_inputs > d->nports) ||
        (n_inputs && !inputs)) {
        diag_error(diags, XDNN_ERR_SEMANTIC, xloc_none(), "%s takes %d inputs, got %d", op, d->nports, n_inputs);
        return -1;
    }
    bool counts_ok = d->variadic_results   ? n_results >= 1 && n_results <= d->nresults
                     : d->result_counts    ? n_results >= 0 && n_results < 32 && ((d->result_counts >> n_results) & 1u)
                                           : n_results == d->nresults;
    if (!counts_ok || (n_results && !results)) {
        diag_error(diags, XDNN_ERR_SEMANTIC, xloc_none(), "%s cannot give %d results", op, n_results);
        return -1;
    }
    xport *ports = arena_alloc(a, sizeof *ports * (size_t)(n_inputs > d->nports ? n_inputs : d->nports) + 1);
    int nports = n_inputs > d->nports ? n_inputs : d->nports;
    for (int i = 0; i < nports; i++)
        ports[i].tensor = -1;
    for (int i = 0; i < n_inputs; i++) {
        if (!inputs[i])
            continue;
        if ((ports[i].tensor = ir_find_tensor(g, inputs[i])) < 0) {
            diag_error(diags, XDNN_ERR_SEMANTIC, xloc_none(), "%s: unknown input tensor '%s'", op, inputs[i]);
            return -1;
        }
    }
    for (int i = 0; i < d->nrequired && i < nports; i++) {
        if (ports[i].tensor < 0) {
            diag_error(diags, XDNN_ERR_SEMANTIC, xloc_none(), "%s needs input '%s'", op, d->ports[i]);
            return -1;
        }
    }
    const char **anames = NULL;
    expr **avals = NULL;
    int nattrs = 0;
    if (attrs && !kwargs_parse_text(a, attrs, xloc_none(), diags, &anames, &avals, &nattrs))
        return -1;
    for (int i = 0; i < nattrs; i++) {
        if (op_attr_index(d, anames[i]) < 0) {
            diag_error(diags, XDNN_ERR_SEMANTIC, xloc_none(), "%s has no attribute '%s'", op, anames[i]);
            return -1;
        }
    }
    const char *name = NULL;
    for (int i = 0; i < n_results && !name; i++)
        if (results[i] && strcmp(results[i], "_") != 0)
            name = results[i];
    if (!name) {
        diag_error(diags, XDNN_ERR_SEMANTIC, xloc_none(), "%s: every result is discarded", op);
        return -1;
    }
    for (int i = 0; i < n_results; i++) {
        if (results[i] && strcmp(results[i], "_") != 0 && ir_find_tensor(g, results[i]) >= 0) {
            diag_error(diags, XDNN_ERR_SEMANTIC, xloc_none(), "'%s' is defined twice", results[i]);
            return -1;
        }
        if (results[i] && strcmp(results[i], "_") != 0 && !dnn_is_writable_name(results[i])) {
            diag_error(diags, XDNN_ERR_USAGE, xloc_none(), "%s: a tensor cannot be named '%s' (no back-quote or "
                       "control character)", op, results[i]);
            return -1;
        }
    }
    xnode *n = ir_add_node(g, opid, name, xloc_none());
    int ni = ir_node_index(g, n);
    n->inputs = ports;
    n->ninputs = nports;
    n->nresults = n_results;
    n->nattrs = nattrs;
    n->attrs = arena_alloc(a, sizeof *n->attrs * (size_t)(nattrs ? nattrs : 1));
    for (int i = 0; i < nattrs; i++)
        n->attrs[i] = (xattr){anames[i], avals[i], xloc_none()};
    for (int i = 0; i < n_results; i++) {
        if (!results[i] || strcmp(results[i], "_") == 0)
            continue;
        int ti = ir_add_tensor(g, results[i], TK_VIRTUAL, xloc_none(), diags);
        g->tensors[ti].producer = ni;
        g->nodes[ni].results[i] = ti;
    }
    return ni;
}

xdnn_status xdnn_graph_mark_output(xdnn_graph_t *g, const char *tensor, xdnn_diags_t *diags)
{
    int ti = g && tensor ? ir_find_tensor(g, tensor) : -1;
    if (ti < 0) {
        diag_error(diags, XDNN_ERR_SEMANTIC, xloc_none(), "no tensor '%s' to mark as output",
                   tensor ? tensor : "(null)");
        return XDNN_ERR_SEMANTIC;
    }
    if (g->tensors[ti].is_output)
        return XDNN_OK;
    g->tensors[ti].is_output = true;
    VEC_PUSH(g->module->ar, g->outputs, g->noutputs, g->capoutputs, ti);
    return XDNN_OK;
}
