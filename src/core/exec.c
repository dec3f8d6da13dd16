/* exec.c — the run state of a bound graph and the CPU reference executor.
 *
 * Every tensor lives on the host in its bound dtype and strides.  For each
 * node the executor gathers the inputs into packed logical doubles, calls the
 * op's reference, and scatters each result back, which rounds it to the
 * tensor's dtype exactly as a GPU engine storing that dtype would.  An output
 * that other ops read is kept twice: rounded to its output dtype (tensors) and
 * in the dtype it would have unmarked (values), which its consumers read. */
#include "exec.h"

#include "data/data.h"
#include "fileio.h"
#include "ops/op.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

xdnn_status run_state_init(run_state *st, xgraph *g, const char *base_dir)
{
    memset(st, 0, sizeof *st);
    if (!g->bound)
        return XDNN_ERR_USAGE;
    st->g = g;
    st->base_dir = base_dir;
    st->tensors = calloc(g->ntensors ? g->ntensors : 1, sizeof *st->tensors);
    st->values = calloc(g->ntensors ? g->ntensors : 1, sizeof *st->values);
    st->node_ms = calloc(g->nnodes ? g->nnodes : 1, sizeof *st->node_ms);
    if (!st->tensors || !st->values || !st->node_ms) {
        run_state_free(st);
        return XDNN_ERR_NOMEM;
    }
    return XDNN_OK;
}

void run_state_free(run_state *st)
{
    if (!st->g)
        return;
    for (size_t i = 0; st->tensors && i < st->g->ntensors; i++)
        host_tensor_free(&st->tensors[i]);
    for (size_t i = 0; st->values && i < st->g->ntensors; i++)
        host_tensor_free(&st->values[i]);
    free(st->tensors);
    free(st->values);
    free(st->node_ms);
    memset(st, 0, sizeof *st);
}

static xdnn_status alloc_tensor(run_state *st, size_t i, xdnn_diags_t *d)
{
    const xtensor *t = &st->g->tensors[i];
    if (st->tensors[i].data)
        return XDNN_OK;
    if (!t->rdefined)
        return XDNN_OK; /* a discarded or unreached tensor */
    xdnn_status s = host_tensor_alloc(&st->tensors[i], t->rdtype, t->rrank, t->rdims, t->rstrides);
    if (s != XDNN_OK)
        diag_error(d, s, t->loc, "cannot allocate '%s' (%lld elements)", t->name, (long long)t->rnumel);
    return s;
}

/* The results a caller reads back (outputs, and what checks or --keep hold):
 * a GPU run downloads only those, and the CPU reference allocates the other
 * intermediates as it produces them, so allocating every virtual here would
 * only cost host memory (36 GiB of ResNet-50 intermediates at N = 256, and
 * the time to poison them). */
xdnn_status run_state_alloc_results(run_state *st, xdnn_diags_t *d)
{
    for (size_t i = 0; i < st->g->ntensors; i++) {
        const xtensor *t = &st->g->tensors[i];
        if (t->kind != TK_VIRTUAL || !(t->is_output || t->keep))
            continue;
        xdnn_status s = alloc_tensor(st, i, d);
        if (s != XDNN_OK)
            return s;
    }
    return XDNN_OK;
}

xdnn_status run_state_copy_inputs(run_state *dst, const run_state *src)
{
    for (size_t i = 0; i < src->g->ntensors; i++) {
        if (src->g->tensors[i].kind == TK_VIRTUAL || !src->tensors[i].data)
            continue;
        const host_tensor *s = &src->tensors[i];
        host_tensor *t = &dst->tensors[i];
        host_tensor_free(t);
        *t = *s;
        t->data = malloc(s->bytes ? s->bytes : 1);
        if (!t->data)
            return XDNN_ERR_NOMEM;
        memcpy(t->data, s->data, s->bytes);
    }
    return XDNN_OK;
}

/* ------------------------------------------------------------------ inputs */

static bool has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), k = strlen(suf);
    return n >= k && strcmp(s + n - k, suf) == 0;
}

/* Read an override file into `dst` (allocated in the tensor's dtype/layout). */
static xdnn_status load_override(run_state *st, const xtensor *t, host_tensor *dst, const char *spec,
                                 xdnn_diags_t *d)
{
    host_tensor file = {0};
    xdnn_status s;
    char *path = strdup(spec);
    if (!path)
        return XDNN_ERR_NOMEM;
    /* "FILE.safetensors#KEY" and "FILE.npz#KEY" name a tensor inside the
     * file; any other '#' is part of the path ("runs#3/x.npy"), and so is one
     * in a path that exists as written. */
    static const char *const keyed[] = {".safetensors#", ".npz#"};
    char *key = NULL;
    struct stat whole;
    for (size_t e = 0; e < sizeof keyed / sizeof *keyed && stat(path, &whole) != 0; e++)
        for (char *at = strstr(path, keyed[e]); at; at = strstr(at + 1, keyed[e]))
            key = at + strlen(keyed[e]) - 1;
    if (key)
        *key++ = 0;
    if (has_suffix(path, ".npy")) {
        s = npy_read(path, &file, d);
        host_tensor_retype(&file, t->rdtype); /* 'V1' bytes of an e5m2 input are e5m2 */
    }
    else if (has_suffix(path, ".safetensors"))
        s = safetensors_read(path, key ? key : t->name, &file, d);
    else if (has_suffix(path, ".npz")) {
        s = npz_read(path, key ? key : t->name, &file, d);
        host_tensor_retype(&file, t->rdtype);
    }
    else
        s = raw_read(path, t->rdtype, t->rrank, t->rdims, &file, d);
    if (s == XDNN_OK) {
        bool same = file.rank == t->rrank;
        for (int i = 0; same && i < t->rrank; i++)
            same = file.dims[i] == t->rdims[i];
        if (!same) {
            char a[256], b[256];
            diag_error(d, XDNN_ERR_IO, ((xloc){.file = path}), "shape %s does not match %s '%s': %s %s",
                       shape_str(a, sizeof a, file.rank, file.dims), t->kind == TK_WEIGHT ? "weight" : "input",
                       t->name, xdnn_dtype_name(t->rdtype), shape_str(b, sizeof b, t->rrank, t->rdims));
            s = XDNN_ERR_IO;
        } else {
            tensor_convert(&file, dst);
        }
    }
    host_tensor_free(&file);
    free(path);
    (void)st;
    return s;
}

xdnn_status exec_load_inputs(run_state *st, const input_override *ov, int nov, xdnn_diags_t *d)
{
    xgraph *g = st->g;
    for (int k = 0; k < nov; k++) {
        int ti = ir_find_tensor(g, ov[k].name);
        if (ti < 0 || g->tensors[ti].kind == TK_VIRTUAL) {
            diag_error(d, XDNN_ERR_USAGE, xloc_none(), "--input %s=%s: graph '%s' has no input or weight '%s'",
                       ov[k].name, ov[k].path, g->name, ov[k].name);
            return XDNN_ERR_USAGE;
        }
    }
    for (size_t i = 0; i < g->ntensors; i++) {
        const xtensor *t = &g->tensors[i];
        if (t->kind == TK_VIRTUAL)
            continue;
        xdnn_status s = alloc_tensor(st, i, d);
        if (s != XDNN_OK)
            return s;
        const char *file = NULL;
        for (int k = 0; k < nov; k++)
            if (strcmp(ov[k].name, t->name) == 0)
                file = ov[k].path;
        if (file) {
            s = load_override(st, t, &st->tensors[i], file, d);
        } else {
            size_t n = (size_t)(t->rnumel ? t->rnumel : 1);
            double *vals = n <= SIZE_MAX / sizeof *vals ? malloc(n * sizeof *vals) : NULL;
            if (!vals) {
                diag_error(d, XDNN_ERR_NOMEM, t->loc, "cannot allocate %zu bytes of scratch to initialize '%s'",
                           n > SIZE_MAX / sizeof *vals ? SIZE_MAX : n * sizeof *vals, t->name);
                return XDNN_ERR_NOMEM;
            }
            s = init_fill(g, t, st->base_dir, vals, d);
            if (s == XDNN_OK)
                tensor_scatter(&st->tensors[i], vals);
            free(vals);
        }
        if (s != XDNN_OK)
            return s;
    }
    return XDNN_OK;
}

/* ------------------------------------------------------------------ CPU run */

static void ref_free(ref_tensor *r)
{
    free(r->data);
    r->data = NULL;
}

static xdnn_status ref_from_host(const host_tensor *h, ref_tensor *r)
{
    r->rank = h->rank;
    memcpy(r->dims, h->dims, sizeof r->dims);
    r->numel = h->numel;
    r->dtype = h->dtype;
    r->data = malloc((size_t)(h->numel ? h->numel : 1) * sizeof *r->data);
    if (!r->data)
        return XDNN_ERR_NOMEM;
    tensor_gather(h, r->data);
    return XDNN_OK;
}

/* Run one node's reference; results are scattered into their tensors. */
static xdnn_status run_node(run_state *st, xnode *n, xdnn_diags_t *d)
{
    xgraph *g = st->g;
    const op_desc *desc = op_get(n->op);
    if (!desc->reference) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, n->loc, "%s: no CPU reference for this op", desc->name);
        return XDNN_ERR_UNSUPPORTED;
    }
    ref_tensor ins[OP_MAX_PORTS] = {{0}}, outs[OP_MAX_RESULTS] = {{0}};
    op_ref_ctx rc = {.desc = desc, .graph = g, .node = n, .nresults = n->nresults, .seed = g->rseed, .diags = d};
    /* Re-run inference for the shapes of discarded results (scratch). */
    tinfo tin[OP_MAX_PORTS];
    op_infer_ctx ic = {.desc = desc, .graph = g, .node = n, .nresults = n->nresults};
    xdnn_status s = XDNN_OK;
    for (int i = 0; i < n->ninputs && i < OP_MAX_PORTS && s == XDNN_OK; i++) {
        const xport *p = &n->inputs[i];
        if (p->tensor >= 0) {
            const host_tensor *h = st->values[p->tensor].data ? &st->values[p->tensor] : &st->tensors[p->tensor];
            s = ref_from_host(h, &ins[i]);
            tin[i] = (tinfo){.dtype = ins[i].dtype, .rank = ins[i].rank};
            memcpy(tin[i].dims, ins[i].dims, sizeof tin[i].dims);
        } else if (p->scalar) {
            ins[i] = (ref_tensor){.rank = 0, .numel = 1, .dtype = g->rcompute};
            ins[i].data = malloc(sizeof(double));
            if (!ins[i].data)
                s = XDNN_ERR_NOMEM;
            else if (!value_as_float(&n->rscalars[i], &ins[i].data[0]))
                ins[i].data[0] = n->rscalars[i].kind == VAL_BOOL ? n->rscalars[i].b : 0;
            tin[i] = (tinfo){.dtype = g->rcompute};
        } else {
            continue;
        }
        rc.in[i] = &ins[i];
        ic.in[i] = &tin[i];
        rc.nin = ic.nin = i + 1;
    }
    if (s == XDNN_OK && desc->infer(&ic) != XDNN_OK)
        s = XDNN_ERR_INTERNAL;
    for (int i = 0; i < n->nresults && s == XDNN_OK; i++) {
        int ti = n->results[i];
        ref_tensor *o = &outs[i];
        o->rank = ic.out[i].rank;
        memcpy(o->dims, ic.out[i].dims, sizeof o->dims);
        o->numel = shape_numel(o->rank, o->dims);
        o->dtype = ti >= 0 ? g->tensors[ti].rvdtype : ic.out[i].dtype;
        o->data = calloc((size_t)(o->numel ? o->numel : 1), sizeof *o->data);
        if (!o->data)
            s = XDNN_ERR_NOMEM;
        rc.out[i] = o;
    }
    if (s == XDNN_OK)
        s = desc->reference(&rc);
    for (int i = 0; i < n->nresults && s == XDNN_OK; i++) {
        int ti = n->results[i];
        if (ti < 0)
            continue;
        s = alloc_tensor(st, (size_t)ti, d);
        if (s == XDNN_OK)
            tensor_scatter(&st->tensors[ti], outs[i].data);
        const xtensor *t = &g->tensors[ti];
        if (s == XDNN_OK && t->rvdtype != t->rdtype) { /* an output others read: they get the unrounded value */
            host_tensor *v = &st->values[ti];
            if (!v->data && (s = host_tensor_alloc(v, t->rvdtype, t->rrank, t->rdims, t->rstrides)) != XDNN_OK)
                diag_error(d, s, t->loc, "cannot allocate the value of '%s' (%lld elements)", t->name,
                           (long long)t->rnumel);
            if (s == XDNN_OK)
                tensor_scatter(v, outs[i].data);
        }
    }
    for (int i = 0; i < OP_MAX_PORTS; i++)
        ref_free(&ins[i]);
    for (int i = 0; i < OP_MAX_RESULTS; i++)
        ref_free(&outs[i]);
    if (s == XDNN_ERR_NOMEM) { /* name the largest operand: usually the one that did not fit */
        int64_t most = 0;
        const char *which = NULL;
        for (int i = 0; i < n->ninputs; i++)
            if (n->inputs[i].tensor >= 0 && g->tensors[n->inputs[i].tensor].rnumel > most)
                most = g->tensors[n->inputs[i].tensor].rnumel, which = g->tensors[n->inputs[i].tensor].name;
        for (int i = 0; i < n->nresults; i++)
            if (n->results[i] >= 0 && g->tensors[n->results[i]].rnumel > most)
                most = g->tensors[n->results[i]].rnumel, which = g->tensors[n->results[i]].name;
        diag_error(d, s, n->loc, "%s: out of host memory (its operands widened to double; the largest, '%s', is %lld "
                   "elements, %lld bytes as double)", desc->name, which ? which : "?", (long long)most,
                   (long long)(most > INT64_MAX / 8 ? INT64_MAX : most * 8));
    }
    else if (s == XDNN_ERR_INTERNAL)
        diag_error(d, s, n->loc, "%s: inference failed at run time (internal error)", desc->name);
    return s;
}

xdnn_status exec_cpu_run(run_state *st, xdnn_diags_t *d)
{
    double t0 = now_ms();
    for (size_t i = 0; i < st->g->nnodes; i++) {
        double t = now_ms();
        xdnn_status s = run_node(st, &st->g->nodes[i], d);
        st->node_ms[i] = now_ms() - t;
        if (s != XDNN_OK)
            return s;
    }
    st->total_ms = now_ms() - t0;
    return XDNN_OK;
}
