/* constfold.c — plan-time constants: which partitions of a plan compute only
 * from constant weights, so that a plan built with const_weights runs them
 * once instead of on every execute (issue 12 item 3).
 *
 * The default stays cuDNN's contract: every input, weights included, may
 * change between executes, so nothing is marked.  With the option, tensors
 * declared `weight` are promised constant; a partition is constant when each
 * materialized tensor it reads is such a weight or the result of a constant
 * partition (partitions come in execution order, so one pass suffices), it
 * writes no graph output (outputs are the caller's buffers, rebound at will)
 * and none of its nodes draws random numbers (dropout and rng may be asked
 * for fresh draws).  Typical hits: the cast of a bf16 weight to f32 before a
 * mixed-dtype matmul (lower.c's insert_matmul_casts), a permute of a weight
 * that strides cannot express, a weight's reshape materialized as a copy. */
#include "gpu/partition.h"
#include "ops/op.h"

#include <stdlib.h>

static bool draws_random(const ggraph *g, const gpart *q)
{
    for (int k = 0; k < q->nnodes; k++) {
        int op = g->n[q->nodes[k]].op_id;
        if (op == OP_rng || op == OP_dropout)
            return true;
    }
    return false;
}

int gpu_mark_constants(gplan *p)
{
    const ggraph *g = p->g;
    /* per tensor: a constant value (a weight, or written by a once partition) */
    bool *cst = calloc((size_t)g->nt + 1, sizeof *cst);
    if (!cst)
        return 0;
    for (int t = 0; t < g->nt; t++) { /* weights, and literals (no producer, not bound by the caller) */
        const gtensor *x = &g->t[t];
        bool literal = x->is_scalar || (!x->is_input && x->producer < 0 && x->view_of < 0);
        cst[t] = literal || (x->is_weight && !x->is_output); /* (literals carry `keep`, read as output) */
    }
    p->nonce = 0;
    for (int i = 0; i < p->nparts; i++) {
        gpart *q = &p->parts[i];
        bool ok = q->nins > 0 && !draws_random(g, q);
        for (int j = 0; j < q->nins && ok; j++)
            ok = cst[gg_storage(g, q->ins[j])];
        for (int j = 0; j < q->nouts && ok; j++)
            ok = !g->t[q->outs[j]].is_output;
        q->once = ok;
        if (!ok)
            continue;
        p->nonce++;
        for (int j = 0; j < q->nouts; j++) /* views of them resolve to this storage (gg_storage) */
            cst[q->outs[j]] = true;
    }
    free(cst);
    return p->nonce;
}
