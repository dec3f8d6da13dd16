/* print.c — human views of a bound graph: the typed listing of `xdnn check`
 * and the Graphviz DOT of `xdnn dot`, plus the op catalogue of `xdnn ops`. */
#include "print.h"

#include "ops/op.h"

#include <inttypes.h>
#include <string.h>

const char *print_kind_word(const xtensor *t)
{
    if (t->kind == TK_INPUT)
        return "input";
    if (t->kind == TK_WEIGHT)
        return "weight";
    return t->is_output ? "output" : "virtual";
}

static void print_ints(FILE *f, int n, const int64_t *v)
{
    fputc('[', f);
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%" PRId64, i ? ", " : "", v[i]);
    fputc(']', f);
}

static void print_params(FILE *f, const xparam *ps, size_t n, arena *a)
{
    for (size_t i = 0; i < n; i++)
        if (ps[i].bound)
            fprintf(f, " %s=%s", ps[i].name, value_to_text(a, &ps[i].rvalue));
}

void xdnn_graph_print_typed(const xdnn_graph_t *g, FILE *f)
{
    arena *a = g->module->ar;
    fprintf(f, "graph %s(io=%s, compute=%s, intermediate=%s, seed=%" PRIu64 ")\n", g->name,
            g->rio_set ? xdnn_dtype_name(g->rio) : "auto", xdnn_dtype_name(g->rcompute),
            xdnn_dtype_name(g->rintermediate), g->rseed);
    fprintf(f, "params:");
    print_params(f, g->module->params, g->module->nparams, a);
    print_params(f, g->params, g->nparams, a);
    fprintf(f, "\ntensors:\n");
    for (size_t i = 0; i < g->ntensors; i++) {
        const xtensor *t = &g->tensors[i];
        if (!t->rdefined)
            continue;
        char shape[256];
        fprintf(f, "  %-7s %-12s %s%s", print_kind_word(t), t->name, xdnn_dtype_name(t->rdtype),
                shape_str(shape, sizeof shape, t->rrank, t->rdims));
        fprintf(f, " @%s strides ", layout_to_text(a, &t->layout));
        print_ints(f, t->rrank, t->rstrides);
        fputc('\n', f);
    }
    fprintf(f, "nodes:\n");
    for (size_t i = 0; i < g->nnodes; i++) {
        const xnode *n = &g->nodes[i];
        const op_desc *d = op_get(n->op);
        fprintf(f, "  ");
        for (int r = 0; r < n->nresults; r++)
            fprintf(f, "%s%s", r ? ", " : "", n->results[r] >= 0 ? g->tensors[n->results[r]].name : "_");
        fprintf(f, " = %s(", d->name);
        bool first = true;
        for (int p = 0; p < n->ninputs; p++) {
            const xport *in = &n->inputs[p];
            if (in->tensor < 0 && !in->scalar)
                continue;
            const char *port = d->variadic && p >= d->nports - 1 ? d->ports[d->nports - 1] : d->ports[p];
            bool positional = p < d->nrequired || (d->variadic && p >= d->nports - 1);
            fprintf(f, "%s%s%s%s", first ? "" : ", ", positional ? "" : port, positional ? "" : "=",
                    in->tensor >= 0 ? g->tensors[in->tensor].name : expr_to_text(a, in->scalar));
            first = false;
        }
        for (int k = 0; k < d->nattrs && n->rattrs; k++)
            if (n->rattrs[k].kind != VAL_NONE)
                fprintf(f, "%s%s=%s", first ? "" : ", ", d->attrs[k].name, value_to_text(a, &n->rattrs[k])),
                    first = false;
        fprintf(f, ")\n");
    }
}

static void dot_escape(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        fputc(*s, f);
    }
}

void xdnn_graph_print_dot(const xdnn_graph_t *g, FILE *f)
{
    fprintf(f, "digraph \"");
    dot_escape(f, g->name);
    fprintf(f, "\" {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n");
    for (size_t i = 0; i < g->ntensors; i++) {
        const xtensor *t = &g->tensors[i];
        if (t->kind == TK_VIRTUAL && !t->is_output)
            continue;
        char shape[256];
        fprintf(f, "  \"t:");
        dot_escape(f, t->name);
        fprintf(f, "\" [shape=%s, label=\"", t->kind == TK_VIRTUAL ? "doubleoctagon" : "ellipse");
        dot_escape(f, t->name);
        fprintf(f, "\\n%s%s\"];\n", xdnn_dtype_name(t->rdtype), shape_str(shape, sizeof shape, t->rrank, t->rdims));
    }
    for (size_t i = 0; i < g->nnodes; i++) {
        const xnode *n = &g->nodes[i];
        fprintf(f, "  \"n:");
        dot_escape(f, n->name);
        fprintf(f, "\" [shape=box, style=filled, fillcolor=\"#dde8f5\", label=\"%s\\n", op_get(n->op)->name);
        dot_escape(f, n->name);
        fprintf(f, "\"];\n");
    }
    /* Edges: tensor -> consumer.  A virtual tensor is drawn as an edge from its
     * producer node, labelled with its shape. */
    for (size_t i = 0; i < g->nnodes; i++) {
        const xnode *n = &g->nodes[i];
        for (int p = 0; p < n->ninputs; p++) {
            int ti = n->inputs[p].tensor;
            if (ti < 0)
                continue;
            const xtensor *t = &g->tensors[ti];
            char shape[256];
            if (t->kind == TK_VIRTUAL && t->producer >= 0) {
                fprintf(f, "  \"n:");
                dot_escape(f, g->nodes[t->producer].name);
            } else {
                fprintf(f, "  \"t:");
                dot_escape(f, t->name);
            }
            fprintf(f, "\" -> \"n:");
            dot_escape(f, n->name);
            fprintf(f, "\" [label=\"%s%s\"];\n", xdnn_dtype_name(t->rvdtype), /* what the consumer reads */
                    shape_str(shape, sizeof shape, t->rrank, t->rdims));
        }
        for (int r = 0; r < n->nresults; r++) {
            int ti = n->results[r];
            if (ti < 0 || !g->tensors[ti].is_output)
                continue;
            fprintf(f, "  \"n:");
            dot_escape(f, n->name);
            fprintf(f, "\" -> \"t:");
            dot_escape(f, g->tensors[ti].name);
            fprintf(f, "\";\n");
        }
    }
    fprintf(f, "}\n");
}

const char *print_attr_type_word(attr_type t)
{
    static const char *const w[] = {"int", "float", "bool", "string", "ints", "floats", "dtype", "pads"};
    return (unsigned)t < sizeof w / sizeof *w ? w[t] : "?";
}

void xdnn_ops_print(FILE *f)
{
    for (int i = 0; i < OP_COUNT; i++) {
        const op_desc *d = op_get(i);
        fprintf(f, "%s(", d->name);
        for (int p = 0; p < d->nports; p++)
            fprintf(f, "%s%s%s%s", p ? ", " : "", d->ports[p], p >= d->nrequired ? "=" : "",
                    d->variadic && p == d->nports - 1 ? "..." : "");
        fprintf(f, ") -> ");
        for (int r = 0; r < d->nresults; r++)
            fprintf(f, "%s%s", r ? ", " : "", d->results[r]);
        if (d->variadic_results)
            fprintf(f, "...");
        fprintf(f, "\n    %s\n", d->summary ? d->summary : "");
        for (int k = 0; k < d->nattrs; k++) {
            const attr_spec *s = &d->attrs[k];
            fprintf(f, "    %s: %s = %s%s%s%s%s\n", s->name, print_attr_type_word(s->type),
                    s->dflt ? s->dflt : "none",
                    s->choices ? "  (" : "", s->choices ? s->choices : "", s->choices ? ")" : "",
                    s->doc ? "" : "");
            if (s->doc)
                fprintf(f, "        %s\n", s->doc);
        }
    }
}
