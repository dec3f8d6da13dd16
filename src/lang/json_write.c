/* json_write.c — a module as JSON: the flattened op graph (man/dnn.5 "JSON
 * FORM", dsl-proposal §5.7).  The tree is built with cJSON and printed by a
 * small printer of our own, so numbers keep their exact spelling and short
 * objects (one tensor, one node) stay on one line.
 *
 * THE VALUE RULE — how a compile-time value (dim, attribute, init argument,
 * param value, sweep item, context seed/tf32, check tolerance, by-value
 * scalar) is spelled, everywhere:
 *   - an int literal is a JSON number without '.' or exponent:   3, -1
 *   - a float literal is a JSON number with '.' or an exponent:  0.5, 1e-05, 2.0
 *     (its digits round-trip exactly: the .dnn spelling when valid JSON,
 *     else the shortest %g that reads back to the same double)
 *   - true / false are bools, a JSON string is a string value:   "tanh"
 *   - a JSON array is a list, item by item by this same rule:    [1, {"expr": "D"}]
 *   - anything else is an object {"expr": "<.dnn expression>"}:  {"expr": "3 * D"},
 *     {"expr": "inf"}, {"expr": "f16"} (a dtype in an untyped position)
 * So a JSON string is never parsed as an expression.  Fields whose type is
 * always a dtype (tensor "dtype", context "io"/"compute"/"intermediate", op
 * attributes of type dtype) hold the dtype name as a plain string instead
 * (a string value there, which bind refuses, is {"expr": "\"f16\""}).
 * Positions with their own shape:
 *   - params:   {"value": <literal>} or, when not a literal, {"expr": "D / H"};
 *               optional "sweep": [values]
 *   - asserts:  {"expr": "D % H == 0", "msg": "..."}
 *   - node inputs: a JSON string names a tensor; a by-value scalar is
 *               {"scalar": <literal>} or {"expr": "lr"}
 *   - node outputs: port -> tensor name; discarded results are omitted, and
 *               "nresults" gives the variant when trailing results are discarded
 *   - variadic ports/results are numbered: x0, x1, ...
 *   - "loc": "file:line:col" on params, asserts, graphs, tensors, inits,
 *               nodes and checks (left out with JSON_WRITE_NO_LOCS)
 * Unknown keys are errors for the reader, except keys starting with "x-" in
 * objects of fixed shape; the keys of name maps ("params", "tensors",
 * "inputs", "outputs", "attrs") are always names.  A JSON number must be
 * strict RFC 8259 (no 01, 1. or .5).
 */
#include "json.h"

#include "json_internal.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct jwriter {
    arena *tmp;       /* expression texts and the like; freed at the end */
    unsigned flags;
    bool oom;
} jwriter;

/* ---------------------------------------------------------------- building */

static cJSON *jw_check(jwriter *w, cJSON *item)
{
    if (!item)
        w->oom = true;
    return item;
}

static void jw_add(jwriter *w, cJSON *obj, const char *key, cJSON *item)
{
    if (!obj || !item || !cJSON_AddItemToObject(obj, key, item)) {
        w->oom = true;
        cJSON_Delete(item);
    }
}

static void jw_push(jwriter *w, cJSON *arr, cJSON *item)
{
    if (!arr || !item || !cJSON_AddItemToArray(arr, item)) {
        w->oom = true;
        cJSON_Delete(item);
    }
}

static cJSON *jw_str(jwriter *w, const char *s) { return jw_check(w, cJSON_CreateString(s ? s : "")); }
static cJSON *jw_raw(jwriter *w, const char *s) { return jw_check(w, cJSON_CreateRaw(s)); }
static cJSON *jw_obj(jwriter *w) { return jw_check(w, cJSON_CreateObject()); }
static cJSON *jw_arr(jwriter *w) { return jw_check(w, cJSON_CreateArray()); }

static void jw_add_loc(jwriter *w, cJSON *obj, xloc loc)
{
    if (w->flags & JSON_WRITE_NO_LOCS)
        return;
    char *t = loc_to_text(w->tmp, loc);
    if (t)
        jw_add(w, obj, "loc", jw_str(w, t));
}

/* ---------------------------------------------------------------- values */

/* The number text of an int or float literal, possibly negated; false when
 * `e` is not a numeric literal JSON can hold. */
static bool number_text(const expr *e, char *buf, size_t len)
{
    bool neg = false;
    if (e->kind == EX_UNARY && e->op == '-' && e->nargs == 1) {
        neg = true;
        e = e->args[0];
    }
    if (e->kind == EX_INT) {
        if (neg && e->i == INT64_MIN)
            return false;
        snprintf(buf, len, "%lld", (long long)(neg ? -e->i : e->i));
        return true;
    }
    if (e->kind == EX_FLOAT) {
        if (!neg)
            return float_literal_text(e->f, e->text, buf, len);
        char tmp[64];
        const char *t = e->text && e->text[0] != '-' ? e->text : NULL;
        if (t && strlen(t) + 2 <= sizeof tmp) {
            tmp[0] = '-';
            strcpy(tmp + 1, t);
            t = tmp;
        } else {
            t = NULL;
        }
        return float_literal_text(-e->f, t, buf, len);
    }
    return false;
}

static bool is_json_literal(const expr *e)
{
    char buf[64];
    switch (e->kind) {
    case EX_BOOL:
    case EX_STRING: return true;
    case EX_LIST:
        for (int i = 0; i < e->nargs; i++)
            if (!is_json_literal(e->args[i]))
                return false;
        return true;
    default: return number_text(e, buf, sizeof buf);
    }
}

static cJSON *expr_object(jwriter *w, const expr *e)
{
    cJSON *o = jw_obj(w);
    jw_add(w, o, "expr", jw_str(w, expr_to_text(w->tmp, e)));
    return o;
}

enum { JSON_LIST_MAX_DEPTH = 64 }; /* deeper literal lists are written as {"expr": ...} */

/* A value by the rule above; `dtype_names`: the position is typed dtype. */
static cJSON *value_json(jwriter *w, const expr *e, bool dtype_names)
{
    char buf[64];
    if (number_text(e, buf, sizeof buf))
        return jw_raw(w, buf);
    switch (e->kind) {
    case EX_BOOL: return jw_check(w, cJSON_CreateBool(e->b));
    case EX_STRING:
        /* In a dtype position a plain string reads back as a dtype name, so a
         * string there (an error bind reports) is spelled as an expression. */
        if (dtype_names)
            return expr_object(w, e);
        return jw_str(w, e->s);
    case EX_DTYPE:
        if (dtype_names)
            return jw_str(w, xdnn_dtype_name(e->dt));
        return expr_object(w, e);
    case EX_LIST: {
        if (e->depth > JSON_LIST_MAX_DEPTH) /* as text: the document's own nesting stays far from cJSON's 1000 */
            return expr_object(w, e);
        cJSON *a = jw_arr(w);
        for (int i = 0; i < e->nargs; i++)
            jw_push(w, a, value_json(w, e->args[i], false));
        return a;
    }
    default: return expr_object(w, e);
    }
}

static cJSON *init_json(jwriter *w, const xinit *in)
{
    cJSON *o = jw_obj(w);
    jw_add(w, o, "fn", jw_str(w, in->fn));
    for (int i = 0; i < in->nargs; i++)
        jw_add(w, o, in->names[i], value_json(w, in->args[i], false));
    jw_add_loc(w, o, in->loc);
    return o;
}

/* ---------------------------------------------------------------- module parts */

static cJSON *param_json(jwriter *w, const xparam *p)
{
    cJSON *o = jw_obj(w);
    if (p->value && is_json_literal(p->value))
        jw_add(w, o, "value", value_json(w, p->value, false));
    else if (p->value)
        jw_add(w, o, "expr", jw_str(w, expr_to_text(w->tmp, p->value)));
    if (p->nsweep > 0) {
        cJSON *s = jw_arr(w);
        for (int i = 0; i < p->nsweep; i++)
            jw_push(w, s, value_json(w, p->sweep[i], false));
        jw_add(w, o, "sweep", s);
    }
    jw_add_loc(w, o, p->loc);
    return o;
}

static cJSON *params_json(jwriter *w, const xparam *ps, size_t n)
{
    cJSON *o = jw_obj(w);
    for (size_t i = 0; i < n; i++)
        jw_add(w, o, ps[i].name, param_json(w, &ps[i]));
    return o;
}

static cJSON *asserts_json(jwriter *w, const xassert *as, size_t n)
{
    cJSON *a = jw_arr(w);
    for (size_t i = 0; i < n; i++) {
        cJSON *o = jw_obj(w);
        jw_add(w, o, "expr", jw_str(w, expr_to_text(w->tmp, as[i].cond)));
        if (as[i].msg)
            jw_add(w, o, "msg", jw_str(w, as[i].msg));
        jw_add_loc(w, o, as[i].loc);
        jw_push(w, a, o);
    }
    return a;
}

static cJSON *dtype_field(jwriter *w, const expr *e)
{
    return e->kind == EX_DTYPE ? jw_str(w, xdnn_dtype_name(e->dt)) : expr_object(w, e);
}

static cJSON *context_json(jwriter *w, const xgraph *g)
{
    cJSON *o = jw_obj(w);
    if (g->ctx_io)
        jw_add(w, o, "io", dtype_field(w, g->ctx_io));
    if (g->ctx_compute)
        jw_add(w, o, "compute", dtype_field(w, g->ctx_compute));
    if (g->ctx_intermediate)
        jw_add(w, o, "intermediate", dtype_field(w, g->ctx_intermediate));
    if (g->ctx_seed)
        jw_add(w, o, "seed", value_json(w, g->ctx_seed, false));
    if (g->ctx_tf32)
        jw_add(w, o, "tf32", value_json(w, g->ctx_tf32, false));
    return o;
}

static const char *kind_name(tensor_kind k)
{
    return k == TK_INPUT ? "input" : k == TK_WEIGHT ? "weight" : "virtual";
}

/* dims, perm entries, strides: the reader takes ints or {"expr": ...} there (json_read_graph.c jr_int_list), so
 * an int literal is a number and anything else, a float or bool literal included (which bind refuses), is an
 * expression: a module that has one still reads back and reports it where it is. */
static cJSON *expr_array(jwriter *w, expr *const *items, int n)
{
    cJSON *a = jw_arr(w);
    for (int i = 0; i < n; i++) {
        const expr *e = items[i];
        const expr *lit = e->kind == EX_UNARY && e->op == '-' && e->nargs == 1 ? e->args[0] : e;
        jw_push(w, a, lit->kind == EX_INT ? value_json(w, e, false) : expr_object(w, e));
    }
    return a;
}

static cJSON *tensor_json(jwriter *w, const xtensor *t)
{
    cJSON *o = jw_obj(w);
    jw_add(w, o, "kind", jw_str(w, kind_name(t->kind)));
    if (t->is_output)
        jw_add(w, o, "output", jw_check(w, cJSON_CreateTrue()));
    if (t->has_dtype)
        jw_add(w, o, "dtype", jw_str(w, xdnn_dtype_name(t->dtype)));
    if (t->has_odtype)
        jw_add(w, o, "output_dtype", jw_str(w, xdnn_dtype_name(t->odtype)));
    if (t->kind != TK_VIRTUAL)
        jw_add(w, o, "dims", expr_array(w, t->dims, t->dims ? t->rank : 0));
    switch (t->layout.kind) {
    case LAYOUT_DEFAULT: break;
    case LAYOUT_NAMED: jw_add(w, o, "layout", jw_str(w, t->layout.name)); break;
    case LAYOUT_PERM: jw_add(w, o, "perm", expr_array(w, t->layout.args, t->layout.nargs)); break;
    case LAYOUT_STRIDES: jw_add(w, o, "strides", expr_array(w, t->layout.args, t->layout.nargs)); break;
    }
    if (t->init)
        jw_add(w, o, "init", init_json(w, t->init));
    jw_add_loc(w, o, t->loc);
    return o;
}

static const char *tensor_name(const xgraph *g, int i)
{
    return i >= 0 && (size_t)i < g->ntensors ? g->tensors[i].name : "?";
}

static cJSON *node_json(jwriter *w, const xgraph *g, const xnode *n)
{
    const op_desc *d = op_get(n->op);
    char buf[64];
    cJSON *o = jw_obj(w);
    jw_add(w, o, "name", jw_str(w, n->name));
    jw_add(w, o, "op", jw_str(w, d->name));
    cJSON *in = jw_obj(w);
    for (int i = 0; i < n->ninputs; i++) {
        const xport *p = &n->inputs[i];
        const char *port = port_name(d, i, buf, sizeof buf);
        if (p->tensor >= 0) {
            jw_add(w, in, port, jw_str(w, tensor_name(g, p->tensor)));
        } else if (p->scalar && is_json_literal(p->scalar)) {
            cJSON *s = jw_obj(w);
            jw_add(w, s, "scalar", value_json(w, p->scalar, false));
            jw_add(w, in, port, s);
        } else if (p->scalar) {
            jw_add(w, in, port, expr_object(w, p->scalar));
        }
    }
    jw_add(w, o, "inputs", in);
    cJSON *out = jw_obj(w);
    int last = -1;
    for (int k = 0; k < n->nresults; k++) {
        if (n->results[k] < 0)
            continue;
        jw_add(w, out, result_name(d, k), jw_str(w, tensor_name(g, n->results[k])));
        last = k;
    }
    jw_add(w, o, "outputs", out);
    if (last + 1 < n->nresults)
        jw_add(w, o, "nresults", jw_check(w, cJSON_CreateNumber(n->nresults)));
    if (n->nattrs > 0) {
        cJSON *at = jw_obj(w);
        for (int i = 0; i < n->nattrs; i++) {
            int ai = op_attr_index(d, n->attrs[i].name);
            bool is_dtype = ai >= 0 && d->attrs[ai].type == AT_DTYPE;
            jw_add(w, at, n->attrs[i].name, value_json(w, n->attrs[i].e, is_dtype));
        }
        jw_add(w, o, "attrs", at);
    }
    jw_add_loc(w, o, n->loc);
    if (n->origin && !(w->flags & JSON_WRITE_NO_LOCS))
        jw_add(w, o, "origin", jw_str(w, n->origin));
    return o;
}

static cJSON *number_or_expr(jwriter *w, const expr *e)
{
    char buf[64];
    return number_text(e, buf, sizeof buf) ? jw_raw(w, buf) : expr_object(w, e);
}

static cJSON *check_json(jwriter *w, const xgraph *g, const xcheck *c)
{
    cJSON *o = jw_obj(w);
    jw_add(w, o, "tensor", jw_str(w, tensor_name(g, c->tensor)));
    if (c->ref)
        jw_add(w, o, "ref", init_json(w, c->ref));
    /* the reader takes a number or {"expr": ...} here: any other literal (bind refuses it) as an expression */
    if (c->rtol)
        jw_add(w, o, "rtol", number_or_expr(w, c->rtol));
    if (c->atol)
        jw_add(w, o, "atol", number_or_expr(w, c->atol));
    jw_add_loc(w, o, c->loc);
    return o;
}

static cJSON *graph_json(jwriter *w, const xgraph *g)
{
    cJSON *o = jw_obj(w);
    jw_add(w, o, "name", jw_str(w, g->name));
    jw_add_loc(w, o, g->loc);
    if (g->ctx_io || g->ctx_compute || g->ctx_intermediate || g->ctx_seed || g->ctx_tf32)
        jw_add(w, o, "context", context_json(w, g));
    if (g->nparams)
        jw_add(w, o, "params", params_json(w, g->params, g->nparams));
    if (g->nasserts)
        jw_add(w, o, "asserts", asserts_json(w, g->asserts, g->nasserts));
    cJSON *ts = jw_obj(w);
    for (size_t i = 0; i < g->ntensors; i++)
        jw_add(w, ts, g->tensors[i].name, tensor_json(w, &g->tensors[i]));
    jw_add(w, o, "tensors", ts);
    cJSON *ns = jw_arr(w);
    for (size_t i = 0; i < g->nnodes; i++)
        jw_push(w, ns, node_json(w, g, &g->nodes[i]));
    jw_add(w, o, "nodes", ns);
    cJSON *outs = jw_arr(w);
    for (size_t i = 0; i < g->noutputs; i++)
        jw_push(w, outs, jw_str(w, tensor_name(g, g->outputs[i])));
    jw_add(w, o, "outputs", outs);
    if (g->nchecks) {
        cJSON *cs = jw_arr(w);
        for (size_t i = 0; i < g->nchecks; i++)
            jw_push(w, cs, check_json(w, g, &g->checks[i]));
        jw_add(w, o, "checks", cs);
    }
    return o;
}

static cJSON *module_json(jwriter *w, const xdnn_module_t *m)
{
    cJSON *o = jw_obj(w);
    jw_add(w, o, "format", jw_str(w, "xdnn-graph"));
    jw_add(w, o, "version", jw_raw(w, "1"));
    if (m->nsources) {
        cJSON *s = jw_arr(w);
        for (size_t i = 0; i < m->nsources; i++)
            jw_push(w, s, jw_str(w, m->sources[i]));
        jw_add(w, o, "sources", s);
    }
    if (m->default_graph >= 0 && (size_t)m->default_graph < m->ngraphs)
        jw_add(w, o, "default_graph", jw_str(w, m->graphs[m->default_graph]->name));
    jw_add(w, o, "params", params_json(w, m->params, m->nparams));
    jw_add(w, o, "asserts", asserts_json(w, m->asserts, m->nasserts));
    cJSON *gs = jw_arr(w);
    for (size_t i = 0; i < m->ngraphs; i++)
        jw_push(w, gs, graph_json(w, m->graphs[i]));
    jw_add(w, o, "graphs", gs);
    return o;
}

/* ---------------------------------------------------------------- printing */

enum { LINE_WIDTH = 120 };

static void put_json_string(sbuf *b, const char *s)
{
    sb_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': sb_puts(b, "\\\""); break;
        case '\\': sb_puts(b, "\\\\"); break;
        case '\n': sb_puts(b, "\\n"); break;
        case '\t': sb_puts(b, "\\t"); break;
        case '\r': sb_puts(b, "\\r"); break;
        case '\b': sb_puts(b, "\\b"); break;
        case '\f': sb_puts(b, "\\f"); break;
        default:
            if (*p < 0x20)
                sb_printf(b, "\\u%04x", *p);
            else
                sb_putc(b, (char)*p);
        }
    }
    sb_putc(b, '"');
}

static void print_compact(sbuf *b, const cJSON *j)
{
    if (cJSON_IsRaw(j)) {
        sb_puts(b, j->valuestring);
    } else if (cJSON_IsString(j)) {
        put_json_string(b, j->valuestring);
    } else if (cJSON_IsTrue(j)) {
        sb_puts(b, "true");
    } else if (cJSON_IsFalse(j)) {
        sb_puts(b, "false");
    } else if (cJSON_IsNumber(j)) {
        sb_printf(b, "%.17g", j->valuedouble);
    } else if (cJSON_IsArray(j) || cJSON_IsObject(j)) {
        bool obj = cJSON_IsObject(j);
        sb_putc(b, obj ? '{' : '[');
        for (const cJSON *c = j->child; c; c = c->next) {
            if (obj) {
                put_json_string(b, c->string);
                sb_puts(b, ": ");
            }
            print_compact(b, c);
            if (c->next)
                sb_puts(b, ", ");
        }
        sb_putc(b, obj ? '}' : ']');
    } else {
        sb_puts(b, "null");
    }
}

/* Length of the compact form, or more than `limit` when it is longer. */
static size_t compact_len(const cJSON *j, size_t limit)
{
    sbuf t = {0};
    print_compact(&t, j); /* values are small next to the limit; fine */
    size_t n = t.oom ? limit + 1 : t.n;
    free(t.s);
    return n;
}

static void indent(sbuf *b, int depth)
{
    for (int i = 0; i < depth; i++)
        sb_puts(b, "  ");
}

/* Containers whose one-line form fits the width stay on one line. */
static void print_pretty(sbuf *b, const cJSON *j, int depth, size_t used)
{
    bool container = cJSON_IsArray(j) || cJSON_IsObject(j);
    if (!container || !j->child || used + compact_len(j, LINE_WIDTH) <= LINE_WIDTH) {
        print_compact(b, j);
        return;
    }
    bool obj = cJSON_IsObject(j);
    sb_puts(b, obj ? "{\n" : "[\n");
    for (const cJSON *c = j->child; c; c = c->next) {
        indent(b, depth + 1);
        size_t start = b->n;
        if (obj) {
            put_json_string(b, c->string);
            sb_puts(b, ": ");
        }
        print_pretty(b, c, depth + 1, (size_t)(depth + 1) * 2 + (b->n - start) + 1);
        sb_puts(b, c->next ? ",\n" : "\n");
    }
    indent(b, depth);
    sb_putc(b, obj ? '}' : ']');
}

char *json_write_module_ex(const xdnn_module_t *m, unsigned flags)
{
    jwriter w = {.tmp = arena_create(), .flags = flags};
    cJSON *root = module_json(&w, m);
    sbuf b = {0};
    if (!w.oom) {
        print_pretty(&b, root, 0, 0);
        sb_putc(&b, '\n');
    } else {
        b.oom = true;
    }
    cJSON_Delete(root);
    arena_destroy(w.tmp);
    return sb_finish(&b);
}

char *json_write_module(const xdnn_module_t *m) { return json_write_module_ex(m, 0); }
