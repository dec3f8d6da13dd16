/* backend_cpu.c — the CPU reference as a backend: one partition per node, each
 * run by its op's reference; the caller's host buffers are the tensors
 * themselves (no copies), intermediates are allocated per execute, so one
 * plan runs from several threads at once. */
#include "plan/backend.h"

#include <stdlib.h>
#include <string.h>

static bool cpu_available(char *why, size_t len)
{
    if (why && len)
        why[0] = '\0';
    return true;
}

static xdnn_status cpu_prepare(xdnn_plan_t *p, const plan_prepare_opts *o, xdnn_diags_t *d)
{
    for (int i = 0; i < o->nforce; i++) {
        const char *eq = strchr(o->force[i], '=');
        if (!eq || strcmp(eq + 1, "cpu_reference") != 0) {
            diag_error(d, XDNN_ERR_USAGE, xloc_none(),
                       "engine '%s': the CPU backend has one engine, cpu_reference, for every op", o->force[i]);
            return XDNN_ERR_USAGE;
        }
    }
    /* the partitions come from plan_select (or the plan's bytes): one per node */
    if ((size_t)p->nparts != p->g->nnodes) {
        diag_error(d, XDNN_ERR_INTERNAL, xloc_none(), "CPU plan has %d partitions for %zu nodes", p->nparts,
                   p->g->nnodes);
        return XDNN_ERR_INTERNAL;
    }
    for (int i = 0; i < p->nparts; i++) {
        plan_part *q = &p->parts[i];
        if (q->ncands)
            continue;
        q->cands = calloc(1, sizeof *q->cands);
        if (!q->cands)
            return XDNN_ERR_NOMEM;
        q->ncands = 1;
        snprintf(q->cands[0].engine, sizeof q->cands[0].engine, "cpu_reference");
        q->cands[0].supported = q->cands[0].chosen = true;
        q->cands[0].ms = q->tuned_ms;
        q->cands[0].reason = strdup("");
        if (!q->cands[0].reason)
            return XDNN_ERR_NOMEM;
    }
    p->ws.total_bytes = 0;
    p->ws.nbuffers = 0;
    p->executable = true; /* no state to keep */
    return XDNN_OK;
}

static xdnn_status cpu_execute(const xdnn_plan_t *p, int first, int count, void *const *ptr, void *ws, void *stream,
                               xdnn_diags_t *d)
{
    if (first != 0 || count != p->nparts) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(),
                   "the CPU backend runs whole plans (it keeps no intermediates between calls): partitions %d..%d "
                   "of %d asked", first, first + count - 1, p->nparts);
        return XDNN_ERR_UNSUPPORTED;
    }
    run_state st;
    xdnn_status s = run_state_init(&st, p->g, ".");
    if (s != XDNN_OK)
        return s;
    /* borrow the caller's buffers: the reference reads and writes them in place */
    for (int i = 0; i < p->ntensors; i++) {
        const xtensor *t = &p->g->tensors[p->tensors[i].ir];
        host_tensor *h = &st.tensors[p->tensors[i].ir];
        h->dtype = t->rdtype;
        h->rank = t->rrank;
        memcpy(h->dims, t->rdims, sizeof h->dims);
        memcpy(h->strides, t->rstrides, sizeof h->strides);
        h->numel = t->rnumel;
        h->data = ptr[p->tensors[i].ir];
        h->bytes = p->tensors[i].bytes;
    }
    s = run_state_alloc_results(&st, d);
    if (s == XDNN_OK)
        s = exec_cpu_run(&st, d);
    for (int i = 0; i < p->ntensors; i++)
        st.tensors[p->tensors[i].ir].data = NULL;
    run_state_free(&st);
    return s;
}

static void cpu_release(xdnn_plan_t *p) { p->executable = false; }

const plan_backend plan_backend_cpu = {
    XDNN_BACKEND_CPU, "cpu", cpu_available, cpu_prepare, cpu_execute, cpu_release,
};
