/* print_json.c — the machine-readable views: the typed graph of `xdnn check
 * --format json` and the op catalogue of `xdnn ops --format json`, the same
 * facts as print.c's text (one field per column), for scripts. */
#include "print.h"

#include "ops/op.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

static cJSON *int_array(int n, const int64_t *v)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v[i]));
    return a;
}

static void add_params(cJSON *obj, const xparam *ps, size_t n, arena *a)
{
    for (size_t i = 0; i < n; i++)
        if (ps[i].bound)
            cJSON_AddStringToObject(obj, ps[i].name, value_to_text(a, &ps[i].rvalue));
}

static cJSON *tensor_json(const xgraph *g, const xtensor *t)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind", print_kind_word(t));
    cJSON_AddStringToObject(o, "name", t->name);
    cJSON_AddStringToObject(o, "dtype", xdnn_dtype_name(t->rdtype));
    cJSON_AddItemToObject(o, "shape", int_array(t->rrank, t->rdims));
    cJSON_AddStringToObject(o, "layout", layout_to_text(g->module->ar, &t->layout));
    cJSON_AddItemToObject(o, "strides", int_array(t->rrank, t->rstrides));
    return o;
}

static cJSON *node_json(const xgraph *g, const xnode *n)
{
    arena *a = g->module->ar;
    const op_desc *d = op_get(n->op);
    cJSON *o = cJSON_CreateObject(), *res = cJSON_CreateArray(), *ins = cJSON_CreateObject(),
          *attrs = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "op", d->name);
    for (int r = 0; r < n->nresults; r++)
        cJSON_AddItemToArray(res, n->results[r] >= 0 ? cJSON_CreateString(g->tensors[n->results[r]].name)
                                                     : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "results", res);
    for (int p = 0; p < n->ninputs; p++) {
        const xport *in = &n->inputs[p];
        if (in->tensor < 0 && !in->scalar)
            continue;
        const char *port = d->variadic && p >= d->nports - 1 ? d->ports[d->nports - 1] : d->ports[p];
        const char *text = in->tensor >= 0 ? g->tensors[in->tensor].name : expr_to_text(a, in->scalar);
        cJSON *prev = cJSON_GetObjectItemCaseSensitive(ins, port);
        if (d->variadic && p >= d->nports - 1) { /* a variadic port is a list */
            if (!prev)
                cJSON_AddItemToObject(ins, port, prev = cJSON_CreateArray());
            cJSON_AddItemToArray(prev, cJSON_CreateString(text));
        } else {
            cJSON_AddStringToObject(ins, port, text);
        }
    }
    cJSON_AddItemToObject(o, "inputs", ins);
    for (int k = 0; k < d->nattrs && n->rattrs; k++)
        if (n->rattrs[k].kind != VAL_NONE)
            cJSON_AddStringToObject(attrs, d->attrs[k].name, value_to_text(a, &n->rattrs[k]));
    cJSON_AddItemToObject(o, "attrs", attrs);
    return o;
}

char *xdnn_graph_typed_json(const xdnn_graph_t *g)
{
    arena *a = g->module->ar;
    cJSON *root = cJSON_CreateObject(), *ctx = cJSON_CreateObject(), *params = cJSON_CreateObject(),
          *tensors = cJSON_CreateArray(), *nodes = cJSON_CreateArray(), *mem = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "graph", g->name);
    cJSON_AddStringToObject(ctx, "io", g->rio_set ? xdnn_dtype_name(g->rio) : "auto");
    cJSON_AddStringToObject(ctx, "compute", xdnn_dtype_name(g->rcompute));
    cJSON_AddStringToObject(ctx, "intermediate", xdnn_dtype_name(g->rintermediate));
    cJSON_AddNumberToObject(ctx, "seed", (double)g->rseed);
    cJSON_AddItemToObject(root, "context", ctx);
    add_params(params, g->module->params, g->module->nparams, a);
    add_params(params, g->params, g->nparams, a);
    cJSON_AddItemToObject(root, "params", params); /* values as .dnn text: "8", "0.5" */
    for (size_t i = 0; i < g->ntensors; i++)
        if (g->tensors[i].rdefined)
            cJSON_AddItemToArray(tensors, tensor_json(g, &g->tensors[i]));
    cJSON_AddItemToObject(root, "tensors", tensors);
    for (size_t i = 0; i < g->nnodes; i++)
        cJSON_AddItemToArray(nodes, node_json(g, &g->nodes[i]));
    cJSON_AddItemToObject(root, "nodes", nodes);
    uint64_t kept, scratch;
    if (xdnn_graph_reference_memory(g, &kept, &scratch) == XDNN_OK) {
        cJSON_AddNumberToObject(mem, "reference_tensor_bytes", (double)kept);
        cJSON_AddNumberToObject(mem, "reference_scratch_bytes", (double)scratch);
    }
    cJSON_AddItemToObject(root, "memory", mem);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    return text;
}

char *xdnn_ops_json(void)
{
    cJSON *root = cJSON_CreateArray();
    for (int i = 0; i < OP_COUNT; i++) {
        const op_desc *d = op_get(i);
        cJSON *o = cJSON_CreateObject(), *ports = cJSON_CreateArray(), *results = cJSON_CreateArray(),
              *attrs = cJSON_CreateArray();
        cJSON_AddStringToObject(o, "name", d->name);
        cJSON_AddStringToObject(o, "summary", d->summary ? d->summary : "");
        for (int p = 0; p < d->nports; p++) {
            cJSON *port = cJSON_CreateObject();
            cJSON_AddStringToObject(port, "name", d->ports[p]);
            cJSON_AddBoolToObject(port, "required", p < d->nrequired);
            cJSON_AddBoolToObject(port, "variadic", d->variadic && p == d->nports - 1);
            cJSON_AddItemToArray(ports, port);
        }
        for (int r = 0; r < d->nresults; r++)
            cJSON_AddItemToArray(results, cJSON_CreateString(d->results[r]));
        for (int k = 0; k < d->nattrs; k++) {
            const attr_spec *s = &d->attrs[k];
            cJSON *at = cJSON_CreateObject();
            cJSON_AddStringToObject(at, "name", s->name);
            cJSON_AddStringToObject(at, "type", print_attr_type_word(s->type));
            if (s->dflt)
                cJSON_AddStringToObject(at, "default", s->dflt);
            else
                cJSON_AddNullToObject(at, "default");
            if (s->choices)
                cJSON_AddStringToObject(at, "choices", s->choices);
            if (s->doc)
                cJSON_AddStringToObject(at, "doc", s->doc);
            cJSON_AddItemToArray(attrs, at);
        }
        cJSON_AddItemToObject(o, "ports", ports);
        cJSON_AddItemToObject(o, "results", results);
        cJSON_AddBoolToObject(o, "variadic_results", d->variadic_results);
        cJSON_AddItemToObject(o, "attrs", attrs);
        cJSON_AddItemToArray(root, o);
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    return text;
}
