/* mem_estimate.c — how much host memory the CPU reference needs for a bound
 * graph, before it allocates any: `check` prints it and `run` refuses early
 * when it cannot fit (instead of failing, or being killed, half way).
 *
 * What exec.c holds at once: every tensor it keeps (inputs, weights,
 * intermediates and outputs, each at its dtype and strided span), plus, for
 * the node being run, its inputs and results widened to double (the reference
 * computes in double), or the double scratch of the largest initializer. */
#include "xdnn.h"

#include "core/ir.h"
#include "core/tensor.h"

#include <stdint.h>

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

static uint64_t doubles(int64_t numel)
{
    return sat_mul(numel > 0 ? (uint64_t)numel : 1, sizeof(double));
}

xdnn_status xdnn_graph_reference_memory(const xdnn_graph_t *g, uint64_t *tensor_bytes, uint64_t *scratch_bytes)
{
    *tensor_bytes = *scratch_bytes = 0;
    if (!g->bound)
        return XDNN_ERR_USAGE;
    uint64_t kept = 0, scratch = 0;
    for (size_t i = 0; i < g->ntensors; i++) {
        const xtensor *t = &g->tensors[i];
        if (!t->rdefined)
            continue;
        int64_t elems;
        size_t bytes;
        kept = sat_add(kept, tensor_span(t->rdtype, t->rrank, t->rdims, t->rstrides, &elems, &bytes) ? bytes
                                                                                                        : UINT64_MAX);
        if (t->kind != TK_VIRTUAL && doubles(t->rnumel) > scratch) /* an initializer fills doubles first */
            scratch = doubles(t->rnumel);
    }
    for (size_t i = 0; i < g->nnodes; i++) {
        const xnode *n = &g->nodes[i];
        uint64_t node = 0;
        for (int p = 0; p < n->ninputs; p++)
            if (n->inputs[p].tensor >= 0)
                node = sat_add(node, doubles(g->tensors[n->inputs[p].tensor].rnumel));
        for (int r = 0; r < n->nresults; r++)
            if (n->results[r] >= 0)
                node = sat_add(node, doubles(g->tensors[n->results[r]].rnumel));
        if (node > scratch)
            scratch = node;
    }
    *tensor_bytes = kept;
    *scratch_bytes = scratch;
    return XDNN_OK;
}
