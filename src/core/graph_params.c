/* graph_params.c — the public view of a graph's params and io dtype
 * (include/xdnn.h): what a sweep needs (names, derived or not, values, sweep
 * lists, bound values as text) and the io-dtype rewrite of `bench --dtype`. */
#include "core/expr.h"
#include "core/ir.h"

#include <string.h>

size_t xdnn_graph_param_count(const xdnn_graph_t *g) { return g ? g->module->nparams + g->nparams : 0; }

/* Param i: the module's first, then the graph's own. */
static const xparam *param_at(const xdnn_graph_t *g, size_t i)
{
    if (!g)
        return NULL;
    if (i < g->module->nparams)
        return &g->module->params[i];
    i -= g->module->nparams;
    return i < g->nparams ? &g->params[i] : NULL;
}

xdnn_status xdnn_graph_param(const xdnn_graph_t *g, size_t i, xdnn_param_info *out)
{
    const xparam *p = param_at(g, i);
    if (!p || !out)
        return XDNN_ERR_USAGE;
    arena *a = g->module->ar;
    char *text = expr_to_text(a, p->value);
    char *bound = p->bound ? value_to_text(a, &p->rvalue) : NULL;
    if (!text || (p->bound && !bound))
        return XDNN_ERR_NOMEM;
    *out = (xdnn_param_info){.name = p->name, .graph_own = i >= g->module->nparams, .derived = p->derived,
                             .value_text = text, .bound_text = bound, .nsweep = (size_t)p->nsweep};
    return XDNN_OK;
}

const char *xdnn_graph_param_sweep(const xdnn_graph_t *g, size_t i, size_t k)
{
    const xparam *p = param_at(g, i);
    return p && k < (size_t)p->nsweep ? expr_to_text(g->module->ar, p->sweep[k]) : NULL;
}

int xdnn_graph_find_param(const xdnn_graph_t *g, const char *name)
{
    if (!g || !name)
        return -1;
    /* the graph's own param hides a module param of the same name */
    for (size_t i = 0; i < g->nparams; i++)
        if (strcmp(g->params[i].name, name) == 0)
            return (int)(g->module->nparams + i);
    for (size_t i = 0; i < g->module->nparams; i++)
        if (strcmp(g->module->params[i].name, name) == 0)
            return (int)i;
    return -1;
}

bool xdnn_graph_io_dtype(const xdnn_graph_t *g, xdnn_dtype *out)
{
    if (!g || !g->rio_set)
        return false;
    if (out)
        *out = g->rio;
    return true;
}

bool xdnn_graph_declares_io_dtype(const xdnn_graph_t *g) { return g && g->ctx_io; }

xdnn_status xdnn_graph_set_io_dtype(xdnn_graph_t *g, xdnn_dtype to, xdnn_diags_t *d)
{
    if (!g || (unsigned)to >= XDNN_DTYPE_COUNT)
        return XDNN_ERR_USAGE;
    if (!g->ctx_io) {
        diag_error(d, XDNN_ERR_USAGE, g->loc,
                   "--dtype: graph '%s' declares no io dtype, so nothing says which dtypes to rewrite (declare graph %s(io=...))",
                   g->name, g->name);
        return XDNN_ERR_USAGE;
    }
    value v;
    if (!graph_eval(g, g->ctx_io, d, &v) || v.kind != VAL_DTYPE) {
        diag_error(d, XDNN_ERR_USAGE, g->loc, "--dtype: the io dtype of graph '%s' is not a dtype", g->name);
        return XDNN_ERR_USAGE;
    }
    xdnn_dtype from = v.dt;
    g->ctx_io = expr_dtype(g->module->ar, to, g->ctx_io->loc);
    for (size_t i = 0; i < g->ntensors; i++)
    {
        if (g->tensors[i].has_dtype && g->tensors[i].dtype == from)
            g->tensors[i].dtype = to;
        if (g->tensors[i].has_odtype && g->tensors[i].odtype == from)
            g->tensors[i].odtype = to;
    }
    return XDNN_OK;
}
