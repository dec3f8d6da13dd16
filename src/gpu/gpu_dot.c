/* gpu_dot.c — `xdnn dot --partitions`: the graph as the GPU backend will run
 * it.  Each partition is a Graphviz cluster labelled with its kind; tensors that
 * are materialized in device memory are drawn as nodes, the ones that stay in
 * registers inside a fused partition as plain edges.  Host-only: it needs the
 * partitioner, not a device, so it works on any machine with a CUDA build. */
#include "gpu/gpu.h"

#include "gpu/lower.h"
#include "gpu/partition.h"

static void dot_id(FILE *f, const char *prefix, const char *name)
{
    fprintf(f, "\"%s", prefix);
    for (const char *s = name; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

xdnn_status gpu_print_partitions_dot(const xgraph *xg, FILE *f, xdnn_diags_t *d)
{
    arena *ar = arena_create();
    ggraph *g = gpu_lower(xg, ar);
    gplan *pl = g ? gpu_partition(g, false) : NULL;
    if (!pl) {
        arena_destroy(ar);
        diag_error(d, XDNN_ERR_INTERNAL, xloc_none(), "cannot partition graph '%s'", xg->name);
        return XDNN_ERR_INTERNAL;
    }
    fprintf(f, "digraph \"%s\" {\n  compound=true; rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n",
            xg->name);
    for (int i = 0; i < g->nt; i++) {
        const gtensor *t = &g->t[i];
        if (t->is_scalar || !pl->materialized[i])
            continue;
        fprintf(f, "  ");
        dot_id(f, "t:", t->name);
        fprintf(f, " [shape=%s, label=\"%s\\n%s\"];\n", t->is_input || t->is_output ? "ellipse" : "note", t->name,
                xdnn_dtype_name(t->dtype));
    }
    for (int pi = 0; pi < pl->nparts; pi++) {
        const gpart *p = &pl->parts[pi];
        fprintf(f, "  subgraph cluster_%d {\n    label=\"partition %d: %s\"; style=rounded; color=\"#4a7ab5\";\n", pi,
                pi, gpart_kind_name(p->kind));
        for (int k = 0; k < p->nnodes; k++) {
            const gnode *n = &g->n[p->nodes[k]];
            fprintf(f, "    ");
            dot_id(f, "n:", n->name);
            fprintf(f, " [shape=box, style=filled, fillcolor=\"#dde8f5\", label=\"%s\\n%s\"];\n", n->op, n->name);
        }
        fprintf(f, "  }\n");
    }
    for (int ni = 0; ni < g->nn; ni++) {
        const gnode *n = &g->n[ni];
        for (int k = 0; k < n->nin; k++) {
            int ti = n->in[k];
            const gtensor *t = &g->t[ti];
            if (t->is_scalar)
                continue;
            fprintf(f, "  ");
            if (pl->materialized[ti])
                dot_id(f, "t:", t->name);
            else
                dot_id(f, "n:", g->n[t->producer].name);
            fprintf(f, " -> ");
            dot_id(f, "n:", n->name);
            fprintf(f, "%s;\n", pl->materialized[ti] ? "" : " [style=dashed, label=\"reg\"]");
        }
        int nouts = n->nouts ? n->nouts : 1;
        for (int k = 0; k < nouts; k++) {
            int ti = n->nouts ? n->outs[k] : n->out;
            if (ti < 0 || !pl->materialized[ti])
                continue;
            fprintf(f, "  ");
            dot_id(f, "n:", n->name);
            fprintf(f, " -> ");
            dot_id(f, "t:", g->t[ti].name);
            fprintf(f, ";\n");
        }
    }
    fprintf(f, "}\n");
    arena_destroy(ar);
    return XDNN_OK;
}
