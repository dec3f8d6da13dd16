/* graph_query.c — the public introspection of a bound graph's tensors
 * (include/xdnn.h): each tensor's kind, dtype, dims and strides, lookup by
 * name, the outputs in `output` order, and what a run should also keep. */
#include "core/ir.h"
#include "core/tensor.h"

#include <string.h>

xdnn_status xdnn_graph_tensor(const xdnn_graph_t *g, size_t i, xdnn_tensor_info *out)
{
    if (!g || !out || i >= g->ntensors)
        return XDNN_ERR_USAGE;
    const xtensor *t = &g->tensors[i];
    memset(out, 0, sizeof *out);
    out->name = t->name;
    out->id = (int)i;
    out->kind = t->kind == TK_INPUT ? XDNN_TENSOR_INPUT : t->kind == TK_WEIGHT ? XDNN_TENSOR_WEIGHT : XDNN_TENSOR_VIRTUAL;
    if (!t->rdefined)
        return XDNN_ERR_SEMANTIC;
    out->is_output = t->is_output;
    out->dtype = t->rdtype;
    out->rank = t->rrank;
    memcpy(out->dims, t->rdims, sizeof out->dims);
    memcpy(out->strides, t->rstrides, sizeof out->strides);
    int64_t elems;
    if (!tensor_span(t->rdtype, t->rrank, t->rdims, t->rstrides, &elems, &out->bytes))
        return XDNN_ERR_NOMEM;
    return XDNN_OK;
}

int xdnn_graph_find_tensor(const xdnn_graph_t *g, const char *name)
{
    return g && name ? ir_find_tensor(g, name) : -1;
}

size_t xdnn_graph_output_count(const xdnn_graph_t *g) { return g ? g->noutputs : 0; }

int xdnn_graph_output(const xdnn_graph_t *g, size_t i) { return g && i < g->noutputs ? g->outputs[i] : -1; }

xdnn_status xdnn_graph_keep_tensor(xdnn_graph_t *g, size_t i)
{
    if (!g || i >= g->ntensors)
        return XDNN_ERR_USAGE;
    g->tensors[i].keep = true;
    return XDNN_OK;
}

void xdnn_graph_set_seed(xdnn_graph_t *g, uint64_t seed)
{
    if (g)
        g->rseed = seed;
}
