/* json_read_node.c — reading one node of the JSON form: its op, input ports
 * (tensors or by-value scalars; variadic ports x0, x1, ...), result ports
 * and variant, and attribute names checked against the op's descriptor
 * (their values' types are checked at bind, as for .dnn text). */
#include "json_read.h"

#include "lower.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- nodes */

/* Input slot of a port name (variadic ports: x0, x1, ... from the last
 * port's name); -1 if the op has no such port. */
static int port_slot(const op_desc *d, const char *key)
{
    if (d->variadic && d->nports > 0) {
        const char *base = d->ports[d->nports - 1];
        size_t bl = strlen(base);
        if (strncmp(key, base, bl) == 0 && key[bl] >= '0' && key[bl] <= '9' && (key[bl] != '0' || !key[bl + 1])) {
            char *end = NULL;
            long k = strtol(key + bl, &end, 10);
            if (!*end && k < OP_MAX_PORTS - d->nports)
                return d->nports - 1 + (int)k;
        }
        for (int i = 0; i < d->nports - 1; i++)
            if (strcmp(d->ports[i], key) == 0)
                return i;
        return -1;
    }
    return op_port_index(d, key);
}

static int result_slot(const op_desc *d, const char *key)
{
    for (int k = 0; k < d->nresults; k++)
        if (d->results[k] && strcmp(d->results[k], key) == 0)
            return k;
    return -1;
}

static char *name_list(arena *a, const char *const *names, int n, const char *variadic_suffix)
{
    char *s = NULL;
    for (int i = 0; i < n; i++)
        s = s ? arena_sprintf(a, "%s, %s", s, names[i]) : arena_strdup(a, names[i]);
    if (s && variadic_suffix)
        s = arena_sprintf(a, "%s%s", s, variadic_suffix);
    return s ? s : arena_strdup(a, "none");
}

/* A tensor a node reads: known, and defined before this node. */
static int jr_use_tensor(jreader *r, xgraph *g, const cJSON *v)
{
    int ti = ir_find_tensor(g, v->valuestring);
    if (ti < 0) {
        jr_err(r, v, false, XDNN_ERR_SEMANTIC, "unknown tensor \"%s\"", v->valuestring);
        return -1;
    }
    if (g->tensors[ti].kind == TK_VIRTUAL && g->tensors[ti].producer < 0) {
        jr_err(r, v, false, XDNN_ERR_SEMANTIC, "tensor \"%s\" is used before the node that produces it",
               v->valuestring);
        return -1;
    }
    return ti;
}

/* Names in a by-value scalar on a port: each must be a param (or inf, nan),
 * as the .dnn form requires when it lowers `op(x, NAME)`; dim(t, axis) names
 * a tensor, which jr_expr_text has checked. */
static bool scalar_names_known(jreader *r, const xgraph *g, const cJSON *at, const expr *e)
{
    if (e->kind == EX_IDENT && strcmp(e->s, "inf") != 0 && strcmp(e->s, "nan") != 0 &&
        !ir_find_param(r->m, g, e->s))
        return jr_err(r, at, false, XDNN_ERR_SEMANTIC, "unknown param '%s' in a scalar input",
                      e->s);
    bool is_dim = e->kind == EX_CALL && strcmp(e->s, "dim") == 0;
    for (int i = is_dim ? 1 : 0; i < e->nargs; i++)
        if (!scalar_names_known(r, g, at, e->args[i]))
            return false;
    return true;
}

/* A by-value scalar on a port is a number: a list, string or dtype there is
 * an attribute's value in .dnn text (`op(x, "s")` passes "s" to the first
 * attribute), so it could not be written back as an input. */
static bool port_scalar_ok(jreader *r, const xgraph *g, const op_desc *d, const char *port, int slot,
                           const cJSON *at, const expr *e)
{
    if (e->kind == EX_LIST || e->kind == EX_STRING || e->kind == EX_DTYPE)
        return jr_err(r, at, false, XDNN_ERR_SEMANTIC, "input '%s' of %s must be a tensor or a number, got %s",
                      port, d->name, jr_describe(r, at));
    /* a variadic op's slots past its required ports are written positionally, where .dnn text reads a number
     * as the next attribute (`concat(a, 1)` is axis=1) */
    if (d->variadic && slot >= d->nrequired)
        return jr_err(r, at, false, XDNN_ERR_SEMANTIC, "input '%s' of %s must be a tensor (a number there is an "
                      "attribute in .dnn text)", port, d->name);
    return scalar_names_known(r, g, at, e);
}

static bool jr_required_ports(jreader *r, const xnode *n, const op_desc *d, const cJSON *at);

static bool jr_node_inputs(jreader *r, xgraph *g, xnode *n, const op_desc *d, const cJSON *item)
{
    if (!jr_want_object(r, item, "an object of input ports") || !jr_no_duplicate_keys(r, item))
        return false;
    bool ok = true;
    for (const cJSON *c = item->child; c; c = c->next) {
        size_t mark = jr_push_key(r, c->string);
        int slot = port_slot(d, c->string);
        if (slot < 0) {
            ok = jr_err(r, c, true, XDNN_ERR_SEMANTIC, "%s has no input port \"%s\" (ports: %s)", d->name,
                        c->string, name_list(r->ar, d->ports, d->nports, d->variadic ? "0, ..." : NULL));
            jr_pop(r, mark);
            continue;
        }
        if (slot >= n->ninputs) { /* variadic: grow to the slot */
            xport *in = arena_alloc(r->ar, sizeof *in * (size_t)(slot + 1));
            memcpy(in, n->inputs, sizeof *in * (size_t)n->ninputs);
            for (int i = n->ninputs; i <= slot; i++)
                in[i].tensor = -1;
            n->inputs = in;
            n->ninputs = slot + 1;
        }
        xport *p = &n->inputs[slot];
        if (cJSON_IsString(c)) {
            p->tensor = jr_use_tensor(r, g, c);
            ok &= p->tensor >= 0;
        } else if (cJSON_IsObject(c) && jr_get(c, "scalar")) {
            static const char *const keys[] = {"scalar", NULL};
            size_t m2 = jr_push_key(r, "scalar");
            if (jr_keys(r, c, keys, keys))
                p->scalar = jr_call_arg(r, c, jr_value(r, jr_get(c, "scalar"), false, "a scalar value"));
            jr_pop(r, m2);
            ok &= p->scalar != NULL && port_scalar_ok(r, g, d, c->string, slot, jr_get(c, "scalar"), p->scalar);
        } else if (cJSON_IsObject(c)) {
            ok &= (p->scalar = jr_call_arg(r, c, jr_value(r, c, false, "a scalar value"))) != NULL &&
                  port_scalar_ok(r, g, d, c->string, slot, c, p->scalar);
        } else {
            ok = jr_err(r, c, false, XDNN_ERR_SYNTAX,
                        "expected a tensor name, {\"scalar\": ...} or {\"expr\": ...}, got %s", jr_describe(r, c));
        }
        jr_pop(r, mark);
    }
    return ok && jr_required_ports(r, n, d, item);
}

/* Every required port, and every variadic slot up to the last one given. */
static bool jr_required_ports(jreader *r, const xnode *n, const op_desc *d, const cJSON *at)
{
    bool ok = true;
    char buf[32];
    int need = d->variadic ? (d->nrequired > d->nports - 1 ? d->nports : d->nrequired) : d->nrequired;
    for (int i = 0; i < n->ninputs || i < need; i++) {
        bool given = i < n->ninputs && (n->inputs[i].tensor >= 0 || n->inputs[i].scalar);
        bool in_variadic_run = d->variadic && i >= d->nports - 1 && i < n->ninputs;
        if (!given && (i < need || in_variadic_run))
            ok = jr_err(r, at, false, XDNN_ERR_SEMANTIC, "missing input port \"%s\" of %s",
                        port_name(d, i, buf, sizeof buf), d->name);
    }
    return ok;
}

static bool jr_node_outputs(jreader *r, xgraph *g, xnode *n, int ni, const op_desc *d, const cJSON *item)
{
    if (!jr_want_object(r, item, "an object of result ports") || !jr_no_duplicate_keys(r, item))
        return false;
    bool ok = true;
    for (const cJSON *c = item->child; c; c = c->next) {
        size_t mark = jr_push_key(r, c->string);
        int k = result_slot(d, c->string);
        if (k < 0) {
            ok = jr_err(r, c, true, XDNN_ERR_SEMANTIC, "%s has no result \"%s\" (results: %s)", d->name, c->string,
                        d->variadic_results ? "y0, y1, ..." : name_list(r->ar, d->results, d->nresults, NULL));
        } else if (jr_want_string(r, c, "a tensor name")) {
            int ti = ir_find_tensor(g, c->valuestring);
            xtensor *t = ti >= 0 ? &g->tensors[ti] : NULL;
            if (!t)
                ok = jr_err(r, c, false, XDNN_ERR_SEMANTIC, "unknown tensor \"%s\" (declare it in \"tensors\")",
                            c->valuestring);
            else if (t->kind != TK_VIRTUAL)
                ok = jr_err(r, c, false, XDNN_ERR_SEMANTIC,
                            "tensor \"%s\" is an %s; a node can only produce a virtual tensor", t->name,
                            t->kind == TK_INPUT ? "input" : "weight");
            else if (t->producer >= 0)
                ok = jr_err(r, c, false, XDNN_ERR_SEMANTIC, "tensor \"%s\" is already produced by node \"%s\"",
                            t->name, g->nodes[t->producer].name);
            else {
                t->producer = ni;
                n->results[k] = ti;
                if (k + 1 > n->nresults)
                    n->nresults = k + 1;
            }
        } else {
            ok = false;
        }
        jr_pop(r, mark);
    }
    return ok;
}

/* Number of targets: the variant. */
static bool jr_node_variant(jreader *r, xnode *n, const op_desc *d, const cJSON *obj)
{
    const cJSON *nr = jr_get(obj, "nresults");
    bool ok = true;
    if (nr) {
        size_t mark = jr_push_key(r, "nresults");
        int64_t v = 0;
        if (!jr_int(r, nr, "an int", &v))
            ok = false;
        else if (v < n->nresults || v > d->nresults)
            ok = jr_err(r, nr, false, XDNN_ERR_SEMANTIC, "nresults %lld is out of range (%d to %d)", (long long)v,
                        n->nresults, d->nresults);
        else
            n->nresults = (int)v;
        jr_pop(r, mark);
        if (!ok)
            return false;
    }
    bool allowed = d->result_counts ? n->nresults < 32 && (d->result_counts >> n->nresults & 1u)
                 : d->variadic_results ? n->nresults >= 1
                                       : n->nresults == d->nresults;
    if (allowed)
        return true;
    char *counts = NULL;
    for (int k = 0; k <= d->nresults && k < 32; k++)
        if (d->result_counts ? (d->result_counts >> k & 1u) : k == d->nresults)
            counts = counts ? arena_sprintf(r->ar, "%s or %d", counts, k) : arena_sprintf(r->ar, "%d", k);
    return jr_err(r, obj, false, XDNN_ERR_SEMANTIC, "%s writes %s results, got %d", d->name,
                  d->variadic_results ? "at least 1" : counts ? counts : "?", n->nresults);
}

static const char *attr_expectation(const attr_spec *a)
{
    switch (a->type) {
    case AT_INT: return "an int";
    case AT_FLOAT: return "a number";
    case AT_BOOL: return "true or false";
    case AT_STRING: return "a string";
    case AT_INTS: return "an int or a list of ints";
    case AT_FLOATS: return "a number or a list of numbers";
    case AT_DTYPE: return "a dtype name";
    case AT_PADS: return "an int, a list of ints, a list of [lo, hi] pairs or \"same\"";
    }
    return "a value";
}

static bool jr_node_attrs(jreader *r, xnode *n, const op_desc *d, const cJSON *item)
{
    if (!jr_want_object(r, item, "an object of attributes") || !jr_no_duplicate_keys(r, item))
        return false;
    int k = cJSON_GetArraySize(item);
    n->attrs = arena_alloc(r->ar, sizeof *n->attrs * (size_t)(k ? k : 1));
    bool ok = true;
    for (const cJSON *c = item->child; c; c = c->next) {
        size_t mark = jr_push_key(r, c->string);
        int ai = op_attr_index(d, c->string);
        if (ai < 0) {
            char *names = NULL;
            for (int i = 0; i < d->nattrs; i++)
                names = names ? arena_sprintf(r->ar, "%s, %s", names, d->attrs[i].name)
                              : arena_strdup(r->ar, d->attrs[i].name);
            ok = jr_err(r, c, true, XDNN_ERR_SEMANTIC, "%s has no attribute \"%s\" (attributes: %s)", d->name,
                        c->string, names ? names : "none");
        } else {
            /* The value's type and choice are checked at bind, as for .dnn text
             * (where they may depend on params), so every graph `convert`
             * writes reads back and fails at bind with the same message.  In a
             * dtype attribute a plain string names a dtype; any other string
             * stays a string, for bind to refuse. */
            const attr_spec *a = &d->attrs[ai];
            xdnn_dtype dt;
            bool dtype_name = a->type == AT_DTYPE && cJSON_IsString(c) && xdnn_dtype_from_name(c->valuestring, &dt);
            expr *e = jr_call_arg(r, c, jr_value(r, c, dtype_name, attr_expectation(a)));
            if (e)
                n->attrs[n->nattrs++] = (xattr){d->attrs[ai].name, e, jr_loc(r, c, true)};
            ok &= e != NULL;
        }
        jr_pop(r, mark);
    }
    return ok;
}

void jr_node(jreader *r, xgraph *g, const cJSON *item)
{
    static const char *const keys[] = {"name", "op", "inputs", "outputs", "nresults", "attrs", "loc", "origin", NULL};
    static const char *const required[] = {"name", "op", NULL};
    if (!jr_want_object(r, item, "a node object {\"name\": ..., \"op\": ...}") || !jr_keys(r, item, keys, required))
        return;
    const cJSON *name = jr_get(item, "name"), *op = jr_get(item, "op");
    size_t mark = jr_push_key(r, "name");
    bool ok = jr_want_string(r, name, "a node name");
    jr_pop(r, mark);
    mark = jr_push_key(r, "op");
    int id = -1;
    if (jr_want_string(r, op, "an op name") && (id = op_lookup(op->valuestring)) < 0) {
        const char *names[OP_COUNT + 1];
        for (int i = 0; i < OP_COUNT; i++)
            names[i] = op_get(i)->name;
        jr_err(r, op, false, XDNN_ERR_SEMANTIC, "unknown op \"%s\"%s", op->valuestring,
               lower_suggest(r->ar, op->valuestring, names, OP_COUNT));
    }
    jr_pop(r, mark);
    if (!ok || id < 0)
        return;
    const op_desc *d = op_get(id);
    int ni = (int)g->nnodes;
    xnode *n = ir_add_node(g, id, name->valuestring, jr_loc(r, item, false));
    ok = jr_loc_field(r, item, &n->loc);
    const cJSON *origin = jr_get(item, "origin");
    if (origin) {
        mark = jr_push_key(r, "origin");
        if (jr_want_string(r, origin, "a string"))
            n->origin = arena_strdup(r->ar, origin->valuestring);
        else
            ok = false;
        jr_pop(r, mark);
    }
    /* attrs before outputs: dim() in an attribute cannot name the node's own results */
    static const char *const parts[] = {"inputs", "attrs", "outputs"};
    for (int p = 0; p < 3; p++) {
        const cJSON *v = jr_get(item, parts[p]);
        if (!v && p == 0)
            ok &= jr_required_ports(r, n, d, item);
        if (!v)
            continue;
        mark = jr_push_key(r, parts[p]);
        if (p == 0)
            ok &= jr_node_inputs(r, g, n, d, v);
        else if (p == 1)
            ok &= jr_node_attrs(r, n, d, v);
        else
            ok &= jr_node_outputs(r, g, n, ni, d, v);
        jr_pop(r, mark);
    }
    if (ok)
        jr_node_variant(r, n, d, item);
}
