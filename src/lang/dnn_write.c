/* dnn_write.c — canonical .dnn text of a flattened module (`xdnn fmt`).
 *
 * Shape of the output:
 *   dnn 1;
 *   param N = 32 sweep [1, 8, 32];          module params, then asserts
 *   assert D % H == 0, "msg";
 *   graph g(io=f16, compute=f32, seed=1) {
 *     param ...;                            graph params
 *     input x: f16[N, C, H, W] @nhwc = randn(mean=0.0, std=0.05);
 *     `y.0` = conv(x, w, stride=1, pad=1);  one statement per node, node order
 *     y: f16 @nhwc = relu(`y.1`);           annotations on the targets
 *     assert ...;                           graph asserts (after every name they may use)
 *     output y;
 *     check y, load(path="r.npy"), rtol=0.01;
 *   }
 * Every node is a call by op name: infix operators, nested calls and
 * fragments were flattened and stay so.  Names that are not plain
 * identifiers (generated `y.0`, fragment locals `h.0/y.0`) are back-quoted.
 * Input/weight declarations keep their position among the nodes' results in
 * the IR's tensor order, so that parsing this text recreates the same IR
 * (and the same JSON: text -> JSON -> text -> JSON is a fixed point).
 * Comments and source locations are not kept.
 */
#include "json.h"

#include "json_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct dwriter {
    sbuf b;
    arena *tmp;
} dwriter;

static void put_name(dwriter *w, const char *name)
{
    if (dnn_is_plain_ident(name)) {
        sb_puts(&w->b, name);
    } else {
        sb_putc(&w->b, '`');
        sb_puts(&w->b, name);
        sb_putc(&w->b, '`');
    }
}

/* A copy of `e` whose float literals are spelled as JSON spells them (1. and
 * .5 become 1.0 and 0.5), so the text from .dnn and from JSON agree. */
static expr *canonical_floats(arena *a, const expr *e)
{
    char buf[64];
    expr *c = arena_alloc(a, sizeof *c);
    *c = *e;
    if (e->kind == EX_FLOAT && float_literal_text(e->f, e->text, buf, sizeof buf))
        c->text = arena_strdup(a, buf);
    if (e->nargs > 0) {
        c->args = arena_alloc(a, sizeof *c->args * (size_t)e->nargs);
        for (int i = 0; i < e->nargs; i++)
            c->args[i] = canonical_floats(a, e->args[i]);
    }
    return c;
}

static void put_expr(dwriter *w, const expr *e)
{
    sb_puts(&w->b, expr_to_text(w->tmp, canonical_floats(w->tmp, e)));
}

static void put_string(dwriter *w, const char *s)
{
    sb_putc(&w->b, '"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            sb_putc(&w->b, '\\');
        if (*s == '\n')
            sb_puts(&w->b, "\\n");
        else if (*s == '\t')
            sb_puts(&w->b, "\\t");
        else
            sb_putc(&w->b, *s);
    }
    sb_putc(&w->b, '"');
}

static void put_params(dwriter *w, const xparam *ps, size_t n, const char *indent)
{
    for (size_t i = 0; i < n; i++) {
        sb_printf(&w->b, "%sparam ", indent);
        put_name(w, ps[i].name);
        sb_puts(&w->b, " = ");
        put_expr(w, ps[i].value);
        if (ps[i].nsweep > 0) {
            sb_puts(&w->b, " sweep [");
            for (int k = 0; k < ps[i].nsweep; k++) {
                if (k)
                    sb_puts(&w->b, ", ");
                put_expr(w, ps[i].sweep[k]);
            }
            sb_putc(&w->b, ']');
        }
        sb_puts(&w->b, ";\n");
    }
}

static void put_asserts(dwriter *w, const xassert *as, size_t n, const char *indent)
{
    for (size_t i = 0; i < n; i++) {
        sb_printf(&w->b, "%sassert ", indent);
        put_expr(w, as[i].cond);
        if (as[i].msg) {
            sb_puts(&w->b, ", ");
            put_string(w, as[i].msg);
        }
        sb_puts(&w->b, ";\n");
    }
}

/* fn(name=value, ...): keyword arguments only, in the stored order. */
static void put_init(dwriter *w, const xinit *in)
{
    sb_puts(&w->b, in->fn);
    sb_putc(&w->b, '(');
    for (int i = 0; i < in->nargs; i++) {
        sb_printf(&w->b, "%s%s=", i ? ", " : "", in->names[i]);
        put_expr(w, in->args[i]);
    }
    sb_putc(&w->b, ')');
}

static void put_layout(dwriter *w, const xlayout *l)
{
    if (l->kind == LAYOUT_DEFAULT)
        return;
    sb_puts(&w->b, " @");
    sb_puts(&w->b, layout_to_text(w->tmp, l));
}

static void put_decl(dwriter *w, const xtensor *t)
{
    sb_puts(&w->b, t->kind == TK_INPUT ? "  input " : "  weight ");
    put_name(w, t->name);
    sb_printf(&w->b, ": %s[", xdnn_dtype_name(t->has_dtype ? t->dtype : XDNN_F32));
    for (int i = 0; t->dims && i < t->rank; i++) {
        if (i)
            sb_puts(&w->b, ", ");
        put_expr(w, t->dims[i]);
    }
    sb_putc(&w->b, ']');
    put_layout(w, &t->layout);
    if (t->init) {
        sb_puts(&w->b, " = ");
        put_init(w, t->init);
    }
    sb_puts(&w->b, ";\n");
}

static void put_node(dwriter *w, const xgraph *g, const xnode *n)
{
    const op_desc *d = op_get(n->op);
    sb_puts(&w->b, "  ");
    for (int k = 0; k < n->nresults; k++) {
        if (k)
            sb_puts(&w->b, ", ");
        int ti = n->results[k];
        if (ti < 0 || (size_t)ti >= g->ntensors) {
            sb_putc(&w->b, '_');
            continue;
        }
        const xtensor *t = &g->tensors[ti];
        put_name(w, t->name);
        if (t->has_dtype || t->layout.kind != LAYOUT_DEFAULT) {
            sb_putc(&w->b, ':');
            if (t->has_dtype)
                sb_printf(&w->b, " %s", xdnn_dtype_name(t->dtype));
            put_layout(w, &t->layout);
        }
    }
    sb_printf(&w->b, " = %s(", d->name);
    bool first = true;
    char buf[32];
    for (int i = 0; i < n->ninputs; i++) {
        const xport *p = &n->inputs[i];
        if (p->tensor < 0 && !p->scalar)
            continue;
        sb_puts(&w->b, first ? "" : ", ");
        first = false;
        /* Required and variadic ports are positional, optional ones keywords. */
        bool positional = i < d->nrequired || (d->variadic && i >= d->nports - 1);
        if (!positional)
            sb_printf(&w->b, "%s=", port_name(d, i, buf, sizeof buf));
        if (p->tensor >= 0 && (size_t)p->tensor < g->ntensors)
            put_name(w, g->tensors[p->tensor].name);
        else
            put_expr(w, p->scalar);
    }
    for (int i = 0; i < n->nattrs; i++) {
        sb_printf(&w->b, "%s%s=", first ? "" : ", ", n->attrs[i].name);
        first = false;
        put_expr(w, n->attrs[i].e);
    }
    sb_puts(&w->b, ");\n");
}

static void put_context(dwriter *w, const xgraph *g)
{
    const char *names[] = {"io", "compute", "intermediate", "seed", "tf32"};
    const expr *vals[] = {g->ctx_io, g->ctx_compute, g->ctx_intermediate, g->ctx_seed, g->ctx_tf32};
    bool any = false;
    for (int i = 0; i < 5; i++) {
        if (!vals[i])
            continue;
        sb_printf(&w->b, "%s%s=", any ? ", " : "(", names[i]);
        put_expr(w, vals[i]);
        any = true;
    }
    if (any)
        sb_putc(&w->b, ')');
}

/* Lowest tensor index among a node's results (its place in tensor order). */
static size_t first_result(const xnode *n)
{
    size_t lo = (size_t)-1;
    for (int k = 0; k < n->nresults; k++)
        if (n->results[k] >= 0 && (size_t)n->results[k] < lo)
            lo = (size_t)n->results[k];
    return lo;
}

static void put_graph(dwriter *w, const xgraph *g)
{
    sb_puts(&w->b, "\ngraph ");
    put_name(w, g->name);
    put_context(w, g);
    sb_puts(&w->b, " {\n");
    put_params(w, g->params, g->nparams, "  ");
    bool *done = arena_alloc(w->tmp, sizeof *done * (g->ntensors + 1));
    size_t next = 0; /* next tensor index to consider for a declaration */
    for (size_t ni = 0; ni < g->nnodes; ni++) {
        const xnode *n = &g->nodes[ni];
        /* declarations before this node's results in tensor order ... */
        for (size_t lo = first_result(n); next < g->ntensors && next < lo; next++)
            if (g->tensors[next].kind != TK_VIRTUAL && !done[next]) {
                put_decl(w, &g->tensors[next]);
                done[next] = true;
            }
        /* ... and any the node reads that a hand-written JSON put later */
        for (int i = 0; i < n->ninputs; i++) {
            int ti = n->inputs[i].tensor;
            if (ti >= 0 && (size_t)ti < g->ntensors && g->tensors[ti].kind != TK_VIRTUAL && !done[ti]) {
                put_decl(w, &g->tensors[ti]);
                done[ti] = true;
            }
        }
        put_node(w, g, n);
    }
    for (; next < g->ntensors; next++)
        if (g->tensors[next].kind != TK_VIRTUAL && !done[next])
            put_decl(w, &g->tensors[next]);
    put_asserts(w, g->asserts, g->nasserts, "  ");
    if (g->noutputs) {
        sb_puts(&w->b, "  output ");
        for (size_t i = 0; i < g->noutputs; i++) {
            if (i)
                sb_puts(&w->b, ", ");
            const xtensor *t = &g->tensors[g->outputs[i]];
            put_name(w, t->name);
            if (t->has_odtype)
                sb_printf(&w->b, ": %s", xdnn_dtype_name(t->odtype));
        }
        sb_puts(&w->b, ";\n");
    }
    for (size_t i = 0; i < g->nchecks; i++) {
        const xcheck *c = &g->checks[i];
        sb_puts(&w->b, "  check ");
        put_name(w, g->tensors[c->tensor].name);
        sb_puts(&w->b, ", ");
        put_init(w, c->ref);
        if (c->rtol) {
            sb_puts(&w->b, ", rtol=");
            put_expr(w, c->rtol);
        }
        if (c->atol) {
            sb_puts(&w->b, ", atol=");
            put_expr(w, c->atol);
        }
        sb_puts(&w->b, ";\n");
    }
    sb_puts(&w->b, "}\n");
}

char *dnn_write_module(const xdnn_module_t *m)
{
    dwriter w = {.tmp = arena_create()};
    sb_puts(&w.b, "dnn 1;\n");
    if (m->nparams || m->nasserts)
        sb_putc(&w.b, '\n');
    put_params(&w, m->params, m->nparams, "");
    put_asserts(&w, m->asserts, m->nasserts, "");
    for (size_t i = 0; i < m->ngraphs; i++)
        put_graph(&w, m->graphs[i]);
    arena_destroy(w.tmp);
    return sb_finish(&w.b);
}
