/* bind.c — specialize a graph for one set of param values: fold params,
 * asserts, dims, layouts and attributes, then run every op's inference in
 * program order so each tensor gets its dtype, shape and strides.
 *
 * Errors are reported per statement and binding continues where it can (a
 * node whose inputs failed is skipped silently, so one mistake is reported
 * once).  When params were overridden, a closing note lists their values so a
 * shape error can be traced to the --set that caused it. */
#include "ir.h"

#include "data/data.h"
#include "lang/parse.h"
#include "ops/op.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

typedef struct bind_ctx {
    xgraph *g;
    xdnn_diags_t *d;
    eval_env env;
    bool *consumed;      /* per tensor: some node reads it */
} bind_ctx;

static bool lookup_param(void *self, const char *name, value *out, xloc loc, xdnn_diags_t *d, bool *failed);

static bool tensor_dim(void *self, const char *tensor, int64_t axis, int64_t *out)
{
    xgraph *g = self;
    int t = ir_find_tensor(g, tensor);
    if (t < 0 || !g->tensors[t].rdefined)
        return false;
    int ax;
    if (!op_axis(g->tensors[t].rrank, axis, &ax))
        return false;
    *out = g->tensors[t].rdims[ax];
    return true;
}

static eval_env graph_env(xgraph *g, xdnn_diags_t *d)
{
    return (eval_env){.lookup = lookup_param, .tensor_dim = tensor_dim, .self = g, .ar = g->module->ar, .diags = d};
}

static bool lookup_param(void *self, const char *name, value *out, xloc loc, xdnn_diags_t *d, bool *failed)
{
    xgraph *g = self;
    xparam *p = ir_find_param(g->module, g, name);
    if (!p)
        return false;
    if (!p->bound) {
        if (p->binding) {
            diag_error(d, XDNN_ERR_SEMANTIC, loc, "param '%s' is defined in terms of itself", name);
            *failed = true;
            return false;
        }
        p->binding = true;
        eval_env env = graph_env(g, d);
        bool ok = expr_eval(p->value, &env, &p->rvalue);
        p->binding = false;
        if (!ok) {
            *failed = true;
            return false;
        }
        p->bound = true;
    }
    *out = p->rvalue;
    return true;
}

bool graph_eval(xgraph *g, const expr *e, xdnn_diags_t *d, value *out)
{
    eval_env env = graph_env(g, d);
    return expr_eval(e, &env, out);
}

/* ------------------------------------------------------------------ params */

static void reset_params(xparam *ps, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        ps[i].bound = ps[i].binding = ps[i].overridden = false;
        ps[i].rvalue = (value){0};
    }
}

static void list_params(arena *a, const xdnn_module_t *m, const xgraph *g, char *buf, size_t len)
{
    size_t k = 0;
    buf[0] = 0;
    for (int pass = 0; pass < 2; pass++) {
        const xparam *ps = pass ? g->params : m->params;
        size_t n = pass ? g->nparams : m->nparams;
        for (size_t i = 0; i < n && k < len; i++)
            k += (size_t)snprintf(buf + k, len - k, "%s%s", k ? ", " : "", ps[i].name);
    }
    (void)a;
    if (!buf[0])
        snprintf(buf, len, "none");
}

static bool apply_binding(bind_ctx *c, const xdnn_binding *b)
{
    xgraph *g = c->g;
    xparam *p = ir_find_param(g->module, g, b->name);
    if (!p) {
        char known[512];
        list_params(g->module->ar, g->module, g, known, sizeof known);
        diag_error(c->d, XDNN_ERR_USAGE, xloc_none(), "unknown param '%s' in --set (known: %s)", b->name, known);
        return false;
    }
    if (p->derived) {
        diag_error(c->d, XDNN_ERR_USAGE, p->loc, "'%s' is derived (%s = %s); set the params it is computed from",
                   p->name, p->name, expr_to_text(g->module->ar, p->value));
        return false;
    }
    xloc loc = {.file = "--set"};
    expr *e = expr_parse_text(g->module->ar, b->value_text, loc, c->d);
    if (!e)
        return false;
    value v;
    eval_env env = {.ar = g->module->ar, .diags = c->d};
    if (!expr_is_literal(e) || !expr_eval(e, &env, &v)) {
        diag_error(c->d, XDNN_ERR_USAGE, xloc_none(), "--set %s=%s: the value must be a literal", b->name,
                   b->value_text);
        return false;
    }
    /* The default decides the param's type; an int default accepts only ints. */
    value dflt;
    eval_env denv = graph_env(g, c->d);
    if (expr_eval(p->value, &denv, &dflt)) {
        if (dflt.kind == VAL_FLOAT && v.kind == VAL_INT)
            v = (value){.kind = VAL_FLOAT, .f = (double)v.i};
        if (dflt.kind != v.kind) {
            diag_error(c->d, XDNN_ERR_USAGE, p->loc, "--set %s=%s: '%s' is %s, got %s", b->name, b->value_text,
                       p->name, val_kind_name(dflt.kind), val_kind_name(v.kind));
            return false;
        }
    }
    p->rvalue = v;
    p->bound = true;
    p->overridden = true;
    return true;
}

/* Collect "N=8" for every param an expression mentions (for assert messages). */
static void mention_values(bind_ctx *c, const expr *e, char *buf, size_t len, size_t *k)
{
    if (e->kind == EX_IDENT) {
        xparam *p = ir_find_param(c->g->module, c->g, e->s);
        if (p && p->bound && *k < len && !strstr(buf, e->s))
            *k += (size_t)snprintf(buf + *k, len - *k, "%s%s=%s", *k ? " " : "", p->name,
                                   value_to_text(c->g->module->ar, &p->rvalue));
        return;
    }
    for (int i = 0; i < e->nargs; i++)
        if (!(e->kind == EX_CALL && strcmp(e->s, "dim") == 0 && i == 0))
            mention_values(c, e->args[i], buf, len, k);
}

static void check_asserts(bind_ctx *c, const xassert *as, size_t n)
{
    for (size_t i = 0; i < n && !diag_too_many(c->d); i++) {
        value v;
        if (!expr_eval(as[i].cond, &c->env, &v))
            continue;
        if (v.kind != VAL_BOOL) {
            diag_error(c->d, XDNN_ERR_SEMANTIC, as[i].loc, "assert needs a bool condition, got %s",
                       val_kind_name(v.kind));
            continue;
        }
        if (v.b)
            continue;
        char vals[512] = "";
        size_t k = 0;
        mention_values(c, as[i].cond, vals, sizeof vals, &k);
        diag_error(c->d, XDNN_ERR_SEMANTIC, as[i].loc, "assertion failed: %s%s%s%s",
                   expr_to_text(c->g->module->ar, as[i].cond), as[i].msg ? " (" : "", as[i].msg ? as[i].msg : "",
                   as[i].msg ? ")" : "");
        if (vals[0])
            diag_note(c->d, as[i].loc, "with %s", vals);
    }
}

/* ------------------------------------------------------------------ context */

static bool eval_dtype(bind_ctx *c, const expr *e, const char *what, xdnn_dtype *out)
{
    value v;
    if (!expr_eval(e, &c->env, &v))
        return false;
    if (v.kind != VAL_DTYPE) {
        diag_error(c->d, XDNN_ERR_SEMANTIC, e->loc, "graph option '%s' must be a dtype, got %s", what,
                   val_kind_name(v.kind));
        return false;
    }
    *out = v.dt;
    return true;
}

static void bind_context(bind_ctx *c)
{
    xgraph *g = c->g;
    g->rio_set = false;
    g->rcompute = g->rintermediate = XDNN_F32;
    g->rseed = 0;
    g->rtf32 = false;
    if (g->ctx_io)
        g->rio_set = eval_dtype(c, g->ctx_io, "io", &g->rio);
    if (g->ctx_compute)
        eval_dtype(c, g->ctx_compute, "compute", &g->rcompute);
    if (g->ctx_intermediate)
        eval_dtype(c, g->ctx_intermediate, "intermediate", &g->rintermediate);
    value v;
    if (g->ctx_seed && expr_eval(g->ctx_seed, &c->env, &v)) {
        if (v.kind != VAL_INT || v.i < 0)
            diag_error(c->d, XDNN_ERR_SEMANTIC, g->ctx_seed->loc, "graph option 'seed' must be an int >= 0");
        else
            g->rseed = (uint64_t)v.i;
    }
    if (g->ctx_tf32 && expr_eval(g->ctx_tf32, &c->env, &v)) {
        if (v.kind != VAL_BOOL)
            diag_error(c->d, XDNN_ERR_SEMANTIC, g->ctx_tf32->loc, "graph option 'tf32' must be a bool");
        else
            g->rtf32 = v.b;
    }
}

/* ------------------------------------------------------------------ tensors */

static bool eval_int_list(bind_ctx *c, expr **es, int n, int64_t *out, const char *what, const char *tname)
{
    for (int i = 0; i < n; i++) {
        value v;
        if (!expr_eval(es[i], &c->env, &v))
            return false;
        if (v.kind != VAL_INT) {
            diag_error(c->d, XDNN_ERR_SEMANTIC, es[i]->loc, "%s %d of '%s' must be an int, got %s", what, i, tname,
                       val_kind_name(v.kind));
            return false;
        }
        out[i] = v.i;
    }
    return true;
}

/* Strides for tensor t from its layout (t->rrank and t->rdims are set). */
static bool bind_layout(bind_ctx *c, xtensor *t)
{
    int r = t->rrank;
    int perm[XDNN_MAX_RANK];
    const xlayout *l = &t->layout;
    switch (l->kind) {
    case LAYOUT_DEFAULT:
        shape_strides(r, t->rdims, t->rstrides);
        return true;
    case LAYOUT_NAMED:
        if (!layout_perm_for_tag(l->name, r, perm)) {
            diag_error(c->d, XDNN_ERR_SEMANTIC, l->loc.file ? l->loc : t->loc,
                       "layout @%s does not fit '%s' of rank %d", l->name, t->name, r);
            return false;
        }
        strides_from_perm(r, t->rdims, perm, t->rstrides);
        return true;
    case LAYOUT_PERM: {
        int64_t p[XDNN_MAX_RANK];
        bool seen[XDNN_MAX_RANK] = {false};
        if (l->nargs != r) {
            diag_error(c->d, XDNN_ERR_SEMANTIC, l->loc, "@perm has %d entries but '%s' has rank %d", l->nargs,
                       t->name, r);
            return false;
        }
        if (!eval_int_list(c, l->args, r, p, "perm entry", t->name))
            return false;
        for (int i = 0; i < r; i++) {
            if (p[i] < 0 || p[i] >= r || seen[p[i]]) {
                diag_error(c->d, XDNN_ERR_SEMANTIC, l->loc, "@perm of '%s' is not a permutation of 0..%d", t->name,
                           r - 1);
                return false;
            }
            seen[p[i]] = true;
            perm[i] = (int)p[i];
        }
        strides_from_perm(r, t->rdims, perm, t->rstrides);
        return true;
    }
    case LAYOUT_STRIDES:
        if (l->nargs != r) {
            diag_error(c->d, XDNN_ERR_SEMANTIC, l->loc, "@strides has %d entries but '%s' has rank %d", l->nargs,
                       t->name, r);
            return false;
        }
        if (!eval_int_list(c, l->args, r, t->rstrides, "stride", t->name))
            return false;
        for (int i = 0; i < r; i++)
            if (t->rstrides[i] < 0) {
                diag_error(c->d, XDNN_ERR_SEMANTIC, l->loc, "stride %d of '%s' is negative", i, t->name);
                return false;
            }
        /* the memory the strides span, in elements, bounded as set_numel bounds the count (a plan sizes the
         * buffer from it: tensor_span) */
        int64_t span = 1, extent;
        for (int i = 0; i < r; i++)
            if (__builtin_mul_overflow(t->rdims[i] - 1, t->rstrides[i], &extent) ||
                __builtin_add_overflow(span, extent, &span) || span > (INT64_MAX >> 4)) {
                diag_error(c->d, XDNN_ERR_SEMANTIC, l->loc, "the strides of '%s' span more than 2^59 elements",
                           t->name);
                return false;
            }
        return true;
    }
    return false;
}

static bool set_numel(bind_ctx *c, xtensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->rrank; i++) {
        /* Keep numel * 8 bytes (the reference's doubles) inside int64 too. */
        if (__builtin_mul_overflow(n, t->rdims[i], &n) || n > (INT64_MAX >> 4)) {
            char s[256];
            diag_error(c->d, XDNN_ERR_SEMANTIC, t->loc, "'%s': dims %s overflow a 64-bit element count", t->name,
                       shape_str(s, sizeof s, t->rrank, t->rdims));
            return false;
        }
    }
    t->rnumel = n;
    return true;
}

static void bind_decl(bind_ctx *c, xtensor *t)
{
    t->rdefined = false;
    if (t->rank > XDNN_MAX_RANK) {
        diag_error(c->d, XDNN_ERR_SEMANTIC, t->loc, "'%s' has rank %d; at most %d is supported", t->name, t->rank,
                   XDNN_MAX_RANK);
        return;
    }
    t->rrank = t->rank;
    if (!eval_int_list(c, t->dims, t->rank, t->rdims, "dim", t->name))
        return;
    for (int i = 0; i < t->rank; i++)
        if (t->rdims[i] < 1) {
            diag_error(c->d, XDNN_ERR_SEMANTIC, t->dims[i]->loc, "dim %d of '%s' must be >= 1, got %" PRId64, i,
                       t->name, t->rdims[i]);
            return;
        }
    t->rdtype = t->rvdtype = t->dtype;
    if (!set_numel(c, t) || !bind_layout(c, t))
        return;
    t->rdefined = true;
}

/* ------------------------------------------------------------------ nodes */

static bool attr_type_ok(const attr_spec *s, const value *v)
{
    if (v->kind == VAL_NONE)
        return true;
    switch (s->type) {
    case AT_INT: return v->kind == VAL_INT;
    case AT_FLOAT: return v->kind == VAL_INT || v->kind == VAL_FLOAT;
    case AT_BOOL: return v->kind == VAL_BOOL;
    case AT_STRING: return v->kind == VAL_STRING;
    case AT_DTYPE: return v->kind == VAL_DTYPE;
    case AT_INTS:
        if (v->kind == VAL_INT)
            return true;
        if (v->kind != VAL_LIST)
            return false;
        for (int i = 0; i < v->n; i++)
            if (v->items[i].kind != VAL_INT)
                return false;
        return true;
    case AT_FLOATS:
        if (v->kind == VAL_INT || v->kind == VAL_FLOAT)
            return true;
        if (v->kind != VAL_LIST)
            return false;
        for (int i = 0; i < v->n; i++)
            if (v->items[i].kind != VAL_INT && v->items[i].kind != VAL_FLOAT)
                return false;
        return true;
    case AT_PADS:
        if (v->kind == VAL_INT || v->kind == VAL_STRING)
            return v->kind == VAL_INT || strcmp(v->s, "same") == 0;
        if (v->kind != VAL_LIST)
            return false;
        for (int i = 0; i < v->n; i++) {
            const value *it = &v->items[i];
            if (it->kind == VAL_INT)
                continue;
            if (it->kind != VAL_LIST || it->n != 2 || it->items[0].kind != VAL_INT || it->items[1].kind != VAL_INT)
                return false;
        }
        return true;
    }
    return false;
}

static const char *attr_type_name(attr_type t)
{
    switch (t) {
    case AT_INT: return "an int";
    case AT_FLOAT: return "a number";
    case AT_BOOL: return "a bool";
    case AT_STRING: return "a string";
    case AT_INTS: return "an int or a list of ints";
    case AT_FLOATS: return "a number or a list of numbers";
    case AT_DTYPE: return "a dtype";
    case AT_PADS: return "an int, a list of ints, a list of [before, after] pairs or \"same\"";
    }
    return "?";
}

static bool bind_attrs(bind_ctx *c, xnode *n, const op_desc *desc)
{
    arena *a = c->g->module->ar;
    n->rattrs = arena_alloc(a, (size_t)(desc->nattrs ? desc->nattrs : 1) * sizeof *n->rattrs);
    bool ok = true, *given = arena_alloc(a, (size_t)desc->nattrs + 1);
    for (int i = 0; i < n->nattrs; i++) {
        int k = op_attr_index(desc, n->attrs[i].name);
        if (k < 0) {
            diag_error(c->d, XDNN_ERR_SEMANTIC, n->attrs[i].loc, "%s: unknown attribute '%s'", desc->name,
                       n->attrs[i].name);
            ok = false;
            continue;
        }
        given[k] = true;
        if (!expr_eval(n->attrs[i].e, &c->env, &n->rattrs[k])) {
            ok = false;
            continue;
        }
    }
    for (int k = 0; k < desc->nattrs; k++) {
        const attr_spec *s = &desc->attrs[k];
        if (!given[k] && s->dflt) {
            expr *e = expr_parse_text(a, s->dflt, xloc_none(), c->d);
            eval_env env = {.ar = a, .diags = c->d};
            if (!e || !expr_eval(e, &env, &n->rattrs[k])) {
                diag_error(c->d, XDNN_ERR_INTERNAL, n->loc, "%s: bad default '%s' for attribute '%s'", desc->name,
                           s->dflt, s->name);
                ok = false;
                continue;
            }
        }
        const value *v = &n->rattrs[k];
        xloc loc = n->loc;
        for (int i = 0; i < n->nattrs; i++)
            if (strcmp(n->attrs[i].name, s->name) == 0)
                loc = n->attrs[i].e->loc;
        if (!attr_type_ok(s, v)) {
            diag_error(c->d, XDNN_ERR_SEMANTIC, loc, "%s: attribute '%s' must be %s, got %s", desc->name, s->name,
                       attr_type_name(s->type), value_to_text(a, v));
            ok = false;
            continue;
        }
        if (s->type == AT_STRING && s->choices && v->kind == VAL_STRING) {
            size_t len = strlen(v->s);
            const char *p = s->choices;
            bool found = false;
            while (*p) {
                const char *bar = strchr(p, '|');
                size_t k2 = bar ? (size_t)(bar - p) : strlen(p);
                if (k2 == len && strncmp(p, v->s, len) == 0)
                    found = true;
                p += k2 + (bar ? 1 : 0);
                if (!bar)
                    break;
            }
            if (!found) {
                diag_error(c->d, XDNN_ERR_SEMANTIC, loc, "%s: attribute '%s' must be one of %s, got \"%s\"",
                           desc->name, s->name, s->choices, v->s);
                ok = false;
            }
        }
    }
    return ok;
}

static bool dtype_is_floating(xdnn_dtype t)
{
    return t == XDNN_F32 || t == XDNN_F16 || t == XDNN_BF16 || t == XDNN_FP8_E4M3 || t == XDNN_FP8_E5M2 ||
           t == XDNN_F64 || t == XDNN_E8M0;
}

/* The dtype a produced tensor gets: annotation, then the graph's io type for
 * outputs, the intermediate type for virtuals; non-float results (bool
 * comparisons, int indices) keep their natural type.  as_output = false gives
 * the dtype it would have unmarked: what consumers of an output read. */
static xdnn_dtype result_dtype(const xgraph *g, const xtensor *t, xdnn_dtype natural, bool as_output)
{
    if (as_output && t->has_odtype)
        return t->odtype;
    if (t->has_dtype)
        return t->dtype;
    if (!dtype_is_floating(natural))
        return natural;
    if (as_output)
        return g->rio_set ? g->rio : natural;
    return g->rintermediate;
}

/* After an op's inference refused its operands: the op speaks of its ports
 * ("a [2, 3]"), so say which of the user's tensors each port is, when any
 * differs from its port's name ("a is 'q' [2, 3], b is 'w' [4, 5]"). */
static void note_operands(bind_ctx *c, const xnode *n, const op_desc *desc)
{
    char text[1024];
    size_t len = 0;
    bool differs = false;
    int shown = 0;
    for (int i = 0; i < n->ninputs && len < sizeof text; i++) {
        if (n->inputs[i].tensor < 0)
            continue;
        if (shown++ == 6) { /* a long variadic list: the first few say enough */
            len += (size_t)snprintf(text + len, sizeof text - len, ", ...");
            break;
        }
        const xtensor *t = &c->g->tensors[n->inputs[i].tensor];
        bool variadic = desc->variadic && i >= desc->nports - 1;
        const char *port = desc->ports[variadic ? desc->nports - 1 : i];
        char label[64], shape[XDNN_MAX_RANK * 24 + 8];
        if (variadic)
            snprintf(label, sizeof label, "%s[%d]", port, i - (desc->nports - 1));
        else
            snprintf(label, sizeof label, "%s", port);
        differs |= strcmp(label, t->name) != 0;
        len += (size_t)snprintf(text + len, sizeof text - len, "%s%s is '%s' %s", len ? ", " : "", label, t->name,
                                t->rdefined ? shape_str(shape, sizeof shape, t->rrank, t->rdims) : "(no shape)");
    }
    if (differs)
        diag_note(c->d, n->loc, "%s", text);
}

static void bind_node(bind_ctx *c, xnode *n)
{
    xgraph *g = c->g;
    const op_desc *desc = op_get(n->op);
    static const tinfo empty;
    op_infer_ctx ic = {.desc = desc, .graph = g, .node = n, .diags = c->d, .nresults = n->nresults};
    /* The operand tables hold OP_MAX_PORTS / OP_MAX_RESULTS entries: a longer
     * variadic call (concat of 40 tensors) must be refused, not cut short. */
    if (n->ninputs > OP_MAX_PORTS) {
        diag_error(c->d, XDNN_ERR_UNSUPPORTED, n->loc,
                   "%s: %d inputs, more than the %d an op takes; apply it in steps (e.g. %s the first %d, then "
                   "that and the rest)",
                   desc->name, n->ninputs, OP_MAX_PORTS, desc->name, OP_MAX_PORTS);
        return;
    }
    if (n->nresults > OP_MAX_RESULTS) {
        diag_error(c->d, XDNN_ERR_UNSUPPORTED, n->loc, "%s: %d results, more than the %d an op gives; apply it in steps",
                   desc->name, n->nresults, OP_MAX_RESULTS);
        return;
    }
    tinfo ins[OP_MAX_PORTS];
    n->rscalars = arena_alloc(g->module->ar, (size_t)(n->ninputs ? n->ninputs : 1) * sizeof *n->rscalars);
    bool inputs_ok = true;
    for (int i = 0; i < n->ninputs && i < OP_MAX_PORTS; i++) {
        const xport *p = &n->inputs[i];
        if (p->tensor >= 0) {
            const xtensor *t = &g->tensors[p->tensor];
            if (!t->rdefined) {
                inputs_ok = false;
                continue;
            }
            ins[i] = (tinfo){.dtype = t->rvdtype, .rank = t->rrank};
            memcpy(ins[i].dims, t->rdims, sizeof t->rdims);
            ic.in[i] = &ins[i];
        } else if (p->scalar) {
            value v;
            if (!expr_eval(p->scalar, &c->env, &v)) {
                inputs_ok = false;
                continue;
            }
            if (v.kind != VAL_INT && v.kind != VAL_FLOAT && v.kind != VAL_BOOL) {
                diag_error(c->d, XDNN_ERR_SEMANTIC, p->scalar->loc, "%s: operand '%s' must be a number, got %s",
                           desc->name, desc->ports[i < desc->nports ? i : desc->nports - 1], val_kind_name(v.kind));
                inputs_ok = false;
                continue;
            }
            n->rscalars[i] = v;
            ins[i] = empty;
            ins[i].dtype = g->rcompute;
            ic.in[i] = &ins[i];
        }
        ic.nin = i + 1;
    }
    if (!inputs_ok || !bind_attrs(c, n, desc))
        return;
    if (!desc->infer) {
        diag_error(c->d, XDNN_ERR_UNSUPPORTED, n->loc, "%s: op has no shape inference yet", desc->name);
        return;
    }
    if (desc->infer(&ic) != XDNN_OK) {
        note_operands(c, n, desc);
        return;
    }
    for (int i = 0; i < n->nresults && i < OP_MAX_RESULTS; i++) {
        int ti = n->results[i];
        if (ti < 0)
            continue;
        xtensor *t = &g->tensors[ti];
        t->rrank = ic.out[i].rank;
        memcpy(t->rdims, ic.out[i].dims, sizeof t->rdims);
        xdnn_dtype natural = ic.out[i].dtype;
        bool exact = ic.out[i].exact_dtype && !t->has_dtype;
        xdnn_dtype unmarked = exact ? natural : result_dtype(g, t, natural, false);
        t->rdtype = !t->is_output                    ? unmarked
                    : t->has_odtype || !exact        ? result_dtype(g, t, natural, true)
                                                     : natural;
        /* Marking a tensor `output` must not change what other ops read: they
         * read the value it would have unmarked, and the output is a rounded
         * copy (dnn(5), OUTPUT AND CHECK). */
        t->rvdtype = t->is_output && c->consumed[ti] ? unmarked : t->rdtype;
        if (!set_numel(c, t) || !bind_layout(c, t))
            continue;
        t->rdefined = true;
    }
}

static void bind_checks(bind_ctx *c)
{
    for (size_t i = 0; i < c->g->nchecks; i++) {
        xcheck *k = &c->g->checks[i];
        /* The graph reads what it checks after the run: keep it materialized on
         * every backend (a GPU plan would otherwise fuse it away or leave it in
         * the workspace, and the check would compare an unwritten buffer). */
        if (k->tensor >= 0 && (size_t)k->tensor < c->g->ntensors)
            c->g->tensors[k->tensor].keep = true;
        value v;
        if (k->rtol && expr_eval(k->rtol, &c->env, &v) && v.kind != VAL_INT && v.kind != VAL_FLOAT)
            diag_error(c->d, XDNN_ERR_SEMANTIC, k->rtol->loc, "check: rtol must be a number");
        if (k->atol && expr_eval(k->atol, &c->env, &v) && v.kind != VAL_INT && v.kind != VAL_FLOAT)
            diag_error(c->d, XDNN_ERR_SEMANTIC, k->atol->loc, "check: atol must be a number");
    }
}

/* A tensor may not take the name of a param of its graph or module (nor inf or nan): an expression naming it
 * means the param before the tensor's definition and the tensor after it in .dnn text, while the JSON form,
 * which lists every tensor before any node, reads it as the tensor everywhere.  Refused here, where .dnn, JSON
 * and the C API's graphs all pass, so no reader has to guess. */
static void check_name_clashes(bind_ctx *c)
{
    xgraph *g = c->g;
    for (size_t i = 0; i < g->ntensors; i++) {
        const xtensor *t = &g->tensors[i];
        const xparam *p = ir_find_param(g->module, g, t->name);
        if (p) {
            diag_error(c->d, XDNN_ERR_SEMANTIC, t->loc, "tensor '%s' has the name of a param; rename one of them",
                       t->name);
            if (p->loc.file)
                diag_note(c->d, p->loc, "param '%s' is declared here", p->name);
        } else if (strcmp(t->name, "inf") == 0 || strcmp(t->name, "nan") == 0) {
            diag_error(c->d, XDNN_ERR_SEMANTIC, t->loc, "'%s' names a constant; a tensor cannot take that name",
                       t->name);
        }
    }
}

static void note_overrides(bind_ctx *c)
{
    char buf[512] = "";
    size_t k = 0;
    for (int pass = 0; pass < 2; pass++) {
        const xparam *ps = pass ? c->g->params : c->g->module->params;
        size_t n = pass ? c->g->nparams : c->g->module->nparams;
        for (size_t i = 0; i < n && k < sizeof buf; i++)
            if (ps[i].overridden)
                k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%s=%s", k ? " " : "", ps[i].name,
                                      value_to_text(c->g->module->ar, &ps[i].rvalue));
    }
    if (buf[0])
        diag_note(c->d, xloc_none(), "params set on the command line: %s", buf);
}

xdnn_status xdnn_graph_bind(xdnn_graph_t *g, const xdnn_binding *bindings, size_t n_bindings, xdnn_diags_t *d)
{
    if (!g)
        return XDNN_ERR_USAGE;
    size_t errors_before = xdnn_diags_error_count(d);
    bind_ctx c = {.g = g, .d = d, .env = graph_env(g, d)};
    g->bound = false;
    reset_params(g->module->params, g->module->nparams);
    reset_params(g->params, g->nparams);
    /* Only non-derived params can be set, and their defaults mention no other
     * param, so checking an override's type caches nothing stale. */
    for (size_t i = 0; i < n_bindings; i++)
        if (!apply_binding(&c, &bindings[i]))
            return xdnn_diags_status(d);
    check_asserts(&c, g->module->asserts, g->module->nasserts);
    check_name_clashes(&c);
    bind_context(&c);
    for (size_t i = 0; i < g->nnodes; i++)
        for (int r = 0; r < g->nodes[i].nresults; r++)
            if (g->nodes[i].results[r] >= 0)
                g->tensors[g->nodes[i].results[r]].producer = (int)i;
    c.consumed = arena_alloc(g->module->ar, (g->ntensors ? g->ntensors : 1) * sizeof *c.consumed);
    for (size_t i = 0; i < g->nnodes; i++)
        for (int p = 0; p < g->nodes[i].ninputs; p++)
            if (g->nodes[i].inputs[p].tensor >= 0)
                c.consumed[g->nodes[i].inputs[p].tensor] = true;
    for (size_t i = 0; i < g->ntensors; i++) {
        xtensor *t = &g->tensors[i];
        t->rdefined = false;
        if (t->kind != TK_VIRTUAL)
            bind_decl(&c, t);
    }
    for (size_t i = 0; i < g->nnodes && !diag_too_many(d); i++)
        bind_node(&c, &g->nodes[i]);
    /* Graph asserts may use dim(t, i), so they run once shapes are known. */
    check_asserts(&c, g->asserts, g->nasserts);
    bind_checks(&c);
    if (g->noutputs == 0)
        diag_error(d, XDNN_ERR_SEMANTIC, g->loc, "graph '%s' has no outputs (add an 'output' statement)", g->name);
    if (xdnn_diags_error_count(d) > errors_before) {
        note_overrides(&c);
        return xdnn_diags_status(d);
    }
    g->bound = true;
    return XDNN_OK;
}

size_t xdnn_graph_tensor_count(const xdnn_graph_t *g) { return g ? g->ntensors : 0; }
size_t xdnn_graph_node_count(const xdnn_graph_t *g) { return g ? g->nnodes : 0; }
const char *xdnn_graph_name(const xdnn_graph_t *g) { return g ? g->name : NULL; }
