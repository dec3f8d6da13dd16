/* ir.c — building the op-graph IR, and layouts (tags, permutations, strides). */
#include "ir.h"

#include "ops/op.h"

#include <string.h>

xgraph *ir_add_graph(xdnn_module_t *m, const char *name, xloc loc)
{
    xgraph *g = arena_alloc(m->ar, sizeof *g);
    g->module = m;
    g->name = arena_strdup(m->ar, name);
    g->loc = loc;
    VEC_PUSH(m->ar, m->graphs, m->ngraphs, m->capgraphs, g);
    return g;
}

int ir_find_tensor(const xgraph *g, const char *name) { return strmap_get(&g->tensor_index, name); }

int ir_add_tensor(xgraph *g, const char *name, tensor_kind kind, xloc loc, xdnn_diags_t *d)
{
    int prev = ir_find_tensor(g, name);
    if (prev >= 0) {
        diag_error(d, XDNN_ERR_SEMANTIC, loc, "'%s' is defined twice", name);
        if (g->tensors[prev].loc.file)
            diag_note(d, g->tensors[prev].loc, "'%s' was first defined here", name);
        return -1;
    }
    xtensor t = {
        .name = arena_strdup(g->module->ar, name),
        .kind = kind,
        .producer = -1,
        .loc = loc,
    };
    VEC_PUSH(g->module->ar, g->tensors, g->ntensors, g->captensors, t);
    strmap_put(&g->tensor_index, g->module->ar, t.name, (int)g->ntensors - 1);
    return (int)g->ntensors - 1;
}

xnode *ir_add_node(xgraph *g, int op, const char *name, xloc loc)
{
    arena *a = g->module->ar;
    const op_desc *desc = op_get(op);
    xnode n = {.name = arena_strdup(a, name), .op = op, .loc = loc};
    n.ninputs = desc->nports;
    n.inputs = arena_alloc(a, (size_t)(desc->nports ? desc->nports : 1) * sizeof *n.inputs);
    for (int i = 0; i < desc->nports; i++)
        n.inputs[i].tensor = -1;
    int nres = desc->variadic_results ? OP_MAX_RESULTS : desc->nresults;
    n.results = arena_alloc(a, (size_t)(nres ? nres : 1) * sizeof *n.results);
    for (int i = 0; i < nres; i++)
        n.results[i] = -1;
    VEC_PUSH(a, g->nodes, g->nnodes, g->capnodes, n);
    return &g->nodes[g->nnodes - 1];
}

int ir_node_index(const xgraph *g, const xnode *n) { return (int)(n - g->nodes); }

xparam *ir_find_param(xdnn_module_t *m, const xgraph *g, const char *name)
{
    int i = g ? strmap_get(&g->param_index, name) : -1;
    if (i >= 0)
        return &g->params[i];
    i = strmap_get(&m->param_index, name);
    return i >= 0 ? &m->params[i] : NULL;
}

xparam *ir_add_param(xdnn_module_t *m, xgraph *g, xparam p)
{
    if (g) {
        VEC_PUSH(m->ar, g->params, g->nparams, g->capparams, p);
        strmap_put(&g->param_index, m->ar, p.name, (int)g->nparams - 1);
        return &g->params[g->nparams - 1];
    }
    VEC_PUSH(m->ar, m->params, m->nparams, m->capparams, p);
    strmap_put(&m->param_index, m->ar, p.name, (int)m->nparams - 1);
    return &m->params[m->nparams - 1];
}

/* Named layouts, major-to-minor lists of logical dims (see man/dnn.5). */
typedef struct layout_tag {
    const char *name;
    int rank;          /* 0 = any rank */
    int perm[5];
} layout_tag;

static const layout_tag layout_tags[] = {
    {"nchw", 4, {0, 1, 2, 3}},    {"nhwc", 4, {0, 2, 3, 1}},    {"ncdhw", 5, {0, 1, 2, 3, 4}},
    {"ndhwc", 5, {0, 2, 3, 4, 1}}, {"ncw", 3, {0, 1, 2}},       {"nwc", 3, {0, 2, 1}},
    {"bhsd", 4, {0, 1, 2, 3}},    {"bshd", 4, {0, 2, 1, 3}},    {"sbhd", 4, {2, 0, 1, 3}},
};

bool layout_perm_for_tag(const char *tag, int rank, int *perm)
{
    if (strcmp(tag, "row") == 0) {
        for (int i = 0; i < rank; i++)
            perm[i] = i;
        return true;
    }
    if (strcmp(tag, "col") == 0) {
        if (rank < 2)
            return false;
        for (int i = 0; i < rank; i++)
            perm[i] = i;
        perm[rank - 2] = rank - 1;
        perm[rank - 1] = rank - 2;
        return true;
    }
    for (size_t i = 0; i < sizeof layout_tags / sizeof *layout_tags; i++) {
        if (strcmp(layout_tags[i].name, tag) != 0)
            continue;
        if (layout_tags[i].rank != rank)
            return false;
        memcpy(perm, layout_tags[i].perm, (size_t)rank * sizeof *perm);
        return true;
    }
    return false;
}

void strides_from_perm(int rank, const int64_t *dims, const int *perm, int64_t *strides)
{
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        strides[perm[i]] = s;
        s *= dims[perm[i]];
    }
}

char *layout_to_text(arena *a, const xlayout *l)
{
    switch (l->kind) {
    case LAYOUT_DEFAULT: return arena_strdup(a, "row");
    case LAYOUT_NAMED: return arena_strdup(a, l->name);
    case LAYOUT_PERM:
    case LAYOUT_STRIDES: {
        expr list = {.kind = EX_LIST, .args = l->args, .nargs = l->nargs};
        char *items = expr_to_text(a, &list);
        items[strlen(items) - 1] = 0; /* drop the brackets: perm(0, 2, 1) */
        return arena_sprintf(a, "%s(%s)", l->kind == LAYOUT_PERM ? "perm" : "strides", items + 1);
    }
    }
    return arena_strdup(a, "row");
}
