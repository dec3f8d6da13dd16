/* tensor_util.c — attribute and shape helpers shared by the tensor, norm and
 * random op families. */
#include "tensor_util.h"

#include <stdio.h>

bool attr_int_list(const xnode *node, const op_desc *d, const char *name, int max, int64_t *out, int *n)
{
    const value *v = op_attr(node, d, name);
    if (!v)
        return false;
    if (v->kind == VAL_INT) {
        if (max < 1)
            return false;
        out[0] = v->i;
        *n = 1;
        return true;
    }
    if (v->kind != VAL_LIST || v->n > max)
        return false;
    for (int i = 0; i < v->n; i++)
        if (v->items[i].kind != VAL_INT)
            return false;
    for (int i = 0; i < v->n; i++)
        out[i] = v->items[i].i;
    *n = v->n;
    return true;
}

bool infer_int_list(op_infer_ctx *c, const char *name, int max, int64_t *out, int *n)
{
    if (attr_int_list(c->node, c->desc, name, max, out, n))
        return true;
    const value *v = op_attr(c->node, c->desc, name);
    char got[256] = "nothing";
    if (v && v->kind != VAL_NONE) {
        arena *a = arena_create();
        snprintf(got, sizeof got, "%s", value_to_text(a, v));
        arena_destroy(a);
    }
    op_error(c, "attribute '%s' must be an int or a list of at most %d ints, got %s", name, max, got);
    return false;
}

char *tinfo_str(char *buf, size_t len, const tinfo *t)
{
    return shape_str(buf, len, t->rank, t->dims);
}

bool infer_need(op_infer_ctx *c, int port)
{
    if (port < c->nin && c->in[port])
        return true;
    op_error(c, "missing input '%s'", c->desc->ports[port < c->desc->nports ? port : c->desc->nports - 1]);
    return false;
}

int64_t node_port_numel(const xgraph *g, const xnode *n, int port)
{
    if (port >= n->ninputs || n->inputs[port].tensor < 0)
        return 0;
    return g->tensors[n->inputs[port].tensor].rnumel;
}

int64_t node_result_numel(const xgraph *g, const xnode *n, int k)
{
    if (k >= n->nresults || n->results[k] < 0)
        return 0;
    return g->tensors[n->results[k]].rnumel;
}

bool pad_amounts(const xnode *n, const op_desc *d, int rank, int64_t *before, int64_t *after)
{
    const value *v = op_attr(n, d, "pads");
    if (!v)
        return false;
    if (v->kind == VAL_INT) {
        for (int i = 0; i < rank; i++)
            before[i] = after[i] = v->i;
        return true;
    }
    if (v->kind != VAL_LIST)
        return false;
    bool nested = v->n > 0 && v->items[0].kind == VAL_LIST;
    if (nested) {
        if (v->n != rank)
            return false;
        for (int i = 0; i < rank; i++) {
            const value *p = &v->items[i];
            if (p->kind != VAL_LIST || p->n != 2 || p->items[0].kind != VAL_INT || p->items[1].kind != VAL_INT)
                return false;
            before[i] = p->items[0].i;
            after[i] = p->items[1].i;
        }
        return true;
    }
    for (int i = 0; i < v->n; i++)
        if (v->items[i].kind != VAL_INT)
            return false;
    if (v->n == rank) {
        for (int i = 0; i < rank; i++)
            before[i] = after[i] = v->items[i].i;
        return true;
    }
    if (v->n == 2 * rank) {
        for (int i = 0; i < rank; i++) {
            before[i] = v->items[2 * i].i;
            after[i] = v->items[2 * i + 1].i;
        }
        return true;
    }
    return false;
}
