/* tune_sig.c — partition signatures: the identity of the work a partition
 * does (ops, every tensor's dtype/shape/strides, bound attributes), used as
 * the autotune cache key.  Names of tensors are included only as port
 * positions, so two graphs doing the same work share cache entries. */
#include "plan/tune.h"

#include "ops/op.h"

#include <string.h>

static char *tensor_sig(const xgraph *g, int t, arena *a)
{
    const xtensor *x = &g->tensors[t];
    char *s = arena_sprintf(a, "%s[", xdnn_dtype_name(x->rdtype));
    for (int i = 0; i < x->rrank; i++)
        s = arena_sprintf(a, "%s%s%lld", s, i ? "," : "", (long long)x->rdims[i]);
    s = arena_sprintf(a, "%s]/[", s);
    for (int i = 0; i < x->rrank; i++)
        s = arena_sprintf(a, "%s%s%lld", s, i ? "," : "", (long long)x->rstrides[i]);
    return arena_sprintf(a, "%s]", s);
}

char *tune_node_signature(const xgraph *g, const xnode *n, arena *a)
{
    const op_desc *desc = op_get(n->op);
    char *s = arena_sprintf(a, "%s(", desc->name);
    for (int i = 0; i < n->ninputs; i++) {
        const char *in;
        if (n->inputs[i].tensor >= 0)
            in = tensor_sig(g, n->inputs[i].tensor, a);
        else if (n->inputs[i].scalar && n->rscalars)
            in = arena_sprintf(a, "scalar %s", value_to_text(a, &n->rscalars[i]));
        else
            in = "-";
        s = arena_sprintf(a, "%s%s%s", s, i ? ", " : "", in);
    }
    s = arena_sprintf(a, "%s)->(", s);
    for (int i = 0; i < n->nresults; i++)
        s = arena_sprintf(a, "%s%s%s", s, i ? ", " : "", n->results[i] >= 0 ? tensor_sig(g, n->results[i], a) : "_");
    s = arena_sprintf(a, "%s) {", s);
    for (int i = 0; n->rattrs && i < desc->nattrs; i++)
        s = arena_sprintf(a, "%s%s%s=%s", s, i ? ", " : "", desc->attrs[i].name, value_to_text(a, &n->rattrs[i]));
    return arena_sprintf(a, "%s} compute=%s", s, xdnn_dtype_name(g->rcompute));
}

char *tune_partition_signature(const xgraph *g, const char *partition, arena *a)
{
    char *s = NULL;
    const char *p = partition;
    while (*p) {
        size_t len = strcspn(p, "+");
        const char *name = arena_strndup(a, p, len);
        const char *one = arena_sprintf(a, "?%s", name); /* a name that is no node: kept visible */
        for (size_t i = 0; i < g->nnodes; i++)
            if (strcmp(g->nodes[i].name, name) == 0) {
                one = tune_node_signature(g, &g->nodes[i], a);
                break;
            }
        s = s ? arena_sprintf(a, "%s ; %s", s, one) : arena_strdup(a, one);
        p += len;
        if (*p == '+')
            p++;
    }
    return s ? s : arena_strdup(a, "");
}
