/* plan_exec.c — the executable side of the public plan API: options, the
 * backend table, queries (workspace, tensors, partitions, candidates), the
 * variant pack check and execute, and initializer fills for callers that
 * want the graph's own inputs. */
#include "plan/backend.h"

#include "data/data.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *xdnn_backend_name(xdnn_backend b)
{
    switch (b) {
    case XDNN_BACKEND_AUTO: return "auto";
    case XDNN_BACKEND_CPU: return "cpu";
    case XDNN_BACKEND_CUDA: return "cuda";
    }
    return "?";
}

const plan_backend *plan_backend_get(xdnn_backend b)
{
    switch (b) {
    case XDNN_BACKEND_CPU: return &plan_backend_cpu;
    case XDNN_BACKEND_CUDA: return &plan_backend_cuda;
    case XDNN_BACKEND_AUTO: return plan_backend_cuda.available(NULL, 0) ? &plan_backend_cuda : &plan_backend_cpu;
    }
    return NULL;
}

bool xdnn_backend_available(xdnn_backend b, char *why, size_t len)
{
    const plan_backend *be = plan_backend_get(b);
    if (!be) {
        if (why && len)
            snprintf(why, len, "unknown backend %d", (int)b);
        return false;
    }
    return be->available(why, len);
}

void xdnn_plan_options_init(xdnn_plan_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->backend = XDNN_BACKEND_AUTO;
    o->heuristic = XDNN_HEUR_FAST;
    o->tf32 = -1;
    o->tune_warmup = 1;
    o->tune_iters = 5;
}

/* ---------------------------------------------------------------- tensors */

xdnn_status plan_collect_tensors(xdnn_plan_t *p, xdnn_diags_t *d)
{
    free(p->tensors);
    free(p->bindable_of);
    p->ntensors = 0;
    p->tensors = calloc(p->g->ntensors + 1, sizeof *p->tensors);
    p->bindable_of = malloc((p->g->ntensors + 1) * sizeof *p->bindable_of);
    if (!p->tensors || !p->bindable_of) {
        diag_error(d, XDNN_ERR_NOMEM, xloc_none(), "out of memory listing the plan's tensors");
        return XDNN_ERR_NOMEM;
    }
    for (size_t i = 0; i < p->g->ntensors; i++) {
        const xtensor *t = &p->g->tensors[i];
        p->bindable_of[i] = -1;
        if (!t->rdefined || (t->kind == TK_VIRTUAL && !t->is_output && !t->keep))
            continue;
        p->bindable_of[i] = p->ntensors;
        int64_t elems;
        size_t bytes;
        if (!tensor_span(t->rdtype, t->rrank, t->rdims, t->rstrides, &elems, &bytes)) { /* bind bounds the span */
            diag_error(d, XDNN_ERR_SEMANTIC, t->loc, "'%s' spans more bytes than a 64-bit size holds", t->name);
            return XDNN_ERR_SEMANTIC;
        }
        p->tensors[p->ntensors++] = (plan_tensor){.ir = (int)i, .bytes = bytes};
    }
    return XDNN_OK;
}

xdnn_backend xdnn_plan_backend(const xdnn_plan_t *p) { return p && p->be ? p->be->id : XDNN_BACKEND_AUTO; }

bool xdnn_plan_executable(const xdnn_plan_t *p) { return p && p->be && p->executable; }

const char *xdnn_plan_device(const xdnn_plan_t *p) { return p ? p->device : ""; }

size_t xdnn_plan_workspace_size(const xdnn_plan_t *p) { return p ? (size_t)p->ws.total_bytes : 0; }

size_t xdnn_plan_tensor_count(const xdnn_plan_t *p) { return p ? (size_t)p->ntensors : 0; }

xdnn_status xdnn_plan_tensor(const xdnn_plan_t *p, size_t i, xdnn_tensor_info *out)
{
    if (!p || !out || i >= (size_t)p->ntensors)
        return XDNN_ERR_USAGE;
    const xtensor *t = &p->g->tensors[p->tensors[i].ir];
    memset(out, 0, sizeof *out);
    out->name = t->name;
    out->id = (int)i;
    out->kind = t->kind == TK_INPUT ? XDNN_TENSOR_INPUT : t->kind == TK_WEIGHT ? XDNN_TENSOR_WEIGHT : XDNN_TENSOR_VIRTUAL;
    out->is_output = t->kind == TK_VIRTUAL;
    out->dtype = t->rdtype;
    out->rank = t->rrank;
    memcpy(out->dims, t->rdims, sizeof out->dims);
    memcpy(out->strides, t->rstrides, sizeof out->strides);
    out->bytes = p->tensors[i].bytes;
    return XDNN_OK;
}

/* The bindable index of a name (the graph's hashed lookup: execute binds
 * every tensor by name on every call), or -1. */
static int find_bindable(const xdnn_plan_t *p, const char *name)
{
    int ir = p->bindable_of ? ir_find_tensor(p->g, name) : -1; /* none before the graph is bound */
    return ir < 0 ? -1 : p->bindable_of[ir];
}

xdnn_status xdnn_plan_find_tensor(const xdnn_plan_t *p, const char *name, xdnn_tensor_info *out)
{
    if (!p || !name || !out)
        return XDNN_ERR_USAGE;
    int i = find_bindable(p, name);
    return i < 0 ? XDNN_ERR_SEMANTIC : xdnn_plan_tensor(p, (size_t)i, out);
}

/* ---------------------------------------------------------------- partitions */

size_t xdnn_plan_partition_count(const xdnn_plan_t *p) { return p ? (size_t)p->nparts : 0; }

xdnn_status xdnn_plan_partition(const xdnn_plan_t *p, size_t i, xdnn_partition_info *out)
{
    if (!p || !out || i >= (size_t)p->nparts)
        return XDNN_ERR_USAGE;
    const plan_part *q = &p->parts[i];
    *out = (xdnn_partition_info){.name = q->name, .ops = q->ops ? q->ops : "", .engine = q->engine,
                                 .knobs = q->knobs, .tuned_ms = q->tuned_ms, .ncandidates = (size_t)q->ncands,
                                 .flops = q->flops, .bytes = q->bytes, .from_cache = q->from_cache};
    return XDNN_OK;
}

xdnn_status xdnn_plan_candidate(const xdnn_plan_t *p, size_t part, size_t i, xdnn_candidate_info *out)
{
    if (!p || !out || part >= (size_t)p->nparts || i >= (size_t)p->parts[part].ncands)
        return XDNN_ERR_USAGE;
    const plan_candidate *c = &p->parts[part].cands[i];
    *out = (xdnn_candidate_info){.engine = c->engine, .supported = c->supported, .chosen = c->chosen,
                                 .cost_us = c->cost_us, .measured_ms = c->ms, .reason = c->reason ? c->reason : ""};
    return XDNN_OK;
}

/* ---------------------------------------------------------------- execute */

enum { STACK_TENSORS = 256 };

static xdnn_status execute_range(const xdnn_plan_t *p, size_t first, size_t count, const xdnn_tensor_binding *b,
                                 size_t n, void *workspace, void *stream, xdnn_diags_t *d)
{
    if (!p || (n && !b)) {
        diag_error(d, XDNN_ERR_USAGE, xloc_none(), "xdnn_plan_execute: %s is NULL", p ? "bindings" : "plan");
        return XDNN_ERR_USAGE;
    }
    if (!p->be || !p->executable) {
        diag_error(d, XDNN_ERR_USAGE, xloc_none(), "xdnn_plan_execute: this plan is for device '%s' and cannot run here "
                   "(a device-model plan, or another device's loaded with XDNN_PLAN_ANY_DEVICE)", p->device);
        return XDNN_ERR_USAGE;
    }
    if (p->ws.total_bytes && !workspace) {
        diag_error(d, XDNN_ERR_USAGE, xloc_none(), "xdnn_plan_execute: the plan needs a workspace of %llu bytes",
                   (unsigned long long)p->ws.total_bytes);
        return XDNN_ERR_USAGE;
    }
    if (p->be->id == XDNN_BACKEND_CUDA && p->ws.total_bytes && (uintptr_t)workspace % 256) {
        diag_error(d, XDNN_ERR_USAGE, xloc_none(), "xdnn_plan_execute: the workspace at %p is not 256-byte aligned "
                   "(the plan lays out its scratch from a 256-byte boundary; cudaMalloc gives one)", workspace);
        return XDNN_ERR_USAGE;
    }
    /* one pointer per IR tensor; small graphs need no heap */
    void *local[STACK_TENSORS];
    size_t nt = p->g->ntensors;
    void **ptr = nt <= STACK_TENSORS ? local : calloc(nt, sizeof *ptr);
    if (!ptr)
        return XDNN_ERR_NOMEM;
    memset(ptr, 0, nt * sizeof *ptr);
    xdnn_status s = XDNN_OK;
    int bound = 0;
    for (size_t k = 0; k < n && s == XDNN_OK; k++) {
        /* a pack built from xdnn_plan_tensor's records, in its order, names
         * each tensor by the plan's own string: found without hashing */
        bool own_name = k < (size_t)p->ntensors && b[k].name == p->g->tensors[p->tensors[k].ir].name;
        int i = own_name  ? (int)k
                : b[k].name ? find_bindable(p, b[k].name)
                : b[k].id >= 0 && b[k].id < p->ntensors ? b[k].id
                                                        : -1;
        if (i < 0) {
            if (b[k].name)
                diag_error(d, XDNN_ERR_USAGE, xloc_none(),
                           "xdnn_plan_execute: binding %zu: graph '%s' has no input, weight or output '%s'", k,
                           p->graph_name, b[k].name);
            else
                diag_error(d, XDNN_ERR_USAGE, xloc_none(), "xdnn_plan_execute: binding %zu: tensor id %d is not in 0..%d",
                           k, b[k].id, p->ntensors - 1);
            s = XDNN_ERR_USAGE;
            break;
        }
        const xtensor *t = &p->g->tensors[p->tensors[i].ir];
        if (ptr[p->tensors[i].ir]) {
            diag_error(d, XDNN_ERR_USAGE, xloc_none(), "xdnn_plan_execute: '%s' is bound twice", t->name);
            s = XDNN_ERR_USAGE;
        } else if (!b[k].ptr && p->tensors[i].bytes) {
            diag_error(d, XDNN_ERR_USAGE, xloc_none(), "xdnn_plan_execute: '%s' is bound to NULL", t->name);
            s = XDNN_ERR_USAGE;
        } else if (p->be->id == XDNN_BACKEND_CUDA && p->tensors[i].bytes &&
                   (uintptr_t)b[k].ptr % XDNN_CUDA_ALIGNMENT) {
            /* the engines move 16-byte vectors and TMA tiles: refused here rather than a device fault */
            diag_error(d, XDNN_ERR_USAGE, xloc_none(), "xdnn_plan_execute: '%s' is bound at %p, not %d-byte aligned "
                       "(cudaMalloc gives 256; a view at another offset needs a copy)", t->name, b[k].ptr,
                       XDNN_CUDA_ALIGNMENT);
            s = XDNN_ERR_USAGE;
        }
        ptr[p->tensors[i].ir] = b[k].ptr;
        bound++;
    }
    for (int i = 0; i < p->ntensors && s == XDNN_OK; i++)
        if (!ptr[p->tensors[i].ir] && p->tensors[i].bytes) {
            const xtensor *t = &p->g->tensors[p->tensors[i].ir];
            diag_error(d, XDNN_ERR_USAGE, xloc_none(), "xdnn_plan_execute: %s '%s' is not bound",
                       t->kind == TK_INPUT ? "input" : t->kind == TK_WEIGHT ? "weight" : "output", t->name);
            s = XDNN_ERR_USAGE;
        }
    if (s == XDNN_OK)
        s = p->be->execute(p, (int)first, (int)count, ptr, workspace, stream, d);
    if (ptr != local)
        free(ptr);
    return s;
}

xdnn_status xdnn_plan_execute(const xdnn_plan_t *p, const xdnn_tensor_binding *b, size_t n, void *workspace,
                              void *stream, xdnn_diags_t *d)
{
    return execute_range(p, 0, p ? (size_t)p->nparts : 0, b, n, workspace, stream, d);
}

xdnn_status xdnn_plan_execute_partitions(const xdnn_plan_t *p, size_t first, size_t count,
                                         const xdnn_tensor_binding *b, size_t n, void *workspace, void *stream,
                                         xdnn_diags_t *d)
{
    if (p && (first > (size_t)p->nparts || count > (size_t)p->nparts - first)) {
        diag_error(d, XDNN_ERR_USAGE, xloc_none(), "xdnn_plan_execute_partitions: partitions %zu..+%zu are not in "
                   "0..%d", first, count, p->nparts - 1);
        return XDNN_ERR_USAGE;
    }
    return execute_range(p, first, count, b, n, workspace, stream, d);
}

xdnn_status xdnn_plan_get_stats(const xdnn_plan_t *p, xdnn_plan_stats *out)
{
    if (!p || !out)
        return XDNN_ERR_USAGE;
    *out = (xdnn_plan_stats){.build_ms = p->build_ms, .context_ms = p->context_ms, .compile_ms = p->compile_ms,
                             .kernels_compiled = p->kernels_compiled, .kernels_cached = p->kernels_cached,
                             .modules = p->nblobs};
    return XDNN_OK;
}

xdnn_status xdnn_plan_fill_tensor(const xdnn_plan_t *p, const char *name, void *host, size_t bytes,
                                  const char *base_dir, xdnn_diags_t *d)
{
    if (!p || !name || (!host && bytes))
        return XDNN_ERR_USAGE;
    int i = find_bindable(p, name);
    const xtensor *t = i >= 0 ? &p->g->tensors[p->tensors[i].ir] : NULL;
    if (!t || t->kind == TK_VIRTUAL) {
        diag_error(d, XDNN_ERR_USAGE, xloc_none(), "xdnn_plan_fill_tensor: graph '%s' has no input or weight '%s'",
                   p->graph_name, name);
        return XDNN_ERR_USAGE;
    }
    if (bytes < p->tensors[i].bytes) {
        diag_error(d, XDNN_ERR_USAGE, xloc_none(), "xdnn_plan_fill_tensor: '%s' needs %zu bytes, the buffer has %zu",
                   name, p->tensors[i].bytes, bytes);
        return XDNN_ERR_USAGE;
    }
    double *vals = malloc((size_t)(t->rnumel ? t->rnumel : 1) * sizeof *vals);
    if (!vals) {
        diag_error(d, XDNN_ERR_NOMEM, t->loc, "cannot allocate %lld values to initialize '%s'", (long long)t->rnumel,
                   t->name);
        return XDNN_ERR_NOMEM;
    }
    xdnn_status s = init_fill(p->g, t, base_dir ? base_dir : ".", vals, d);
    if (s == XDNN_OK) {
        host_tensor h = {.dtype = t->rdtype, .rank = t->rrank, .numel = t->rnumel, .data = host, .bytes = bytes};
        memcpy(h.dims, t->rdims, sizeof h.dims);
        memcpy(h.strides, t->rstrides, sizeof h.strides);
        tensor_scatter(&h, vals);
    }
    free(vals);
    return s;
}
