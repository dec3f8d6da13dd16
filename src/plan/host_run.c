/* host_run.c — xdnn_run_t (include/xdnn.h): one host buffer per tensor of a
 * bound graph, what the CPU reference computes and what a program feeds to,
 * and reads back from, a plan on any backend.  Inputs come from the graph's
 * initializers or files; outputs are reported (statistics, values), saved
 * (.npy, .safetensors) and compared (with another run, a golden .npy, or the
 * graph's own `check` statements) through the same records. */
#include "core/exec.h"
#include "data/data.h"
#include "ops/op.h"

#include <stdlib.h>
#include <string.h>

struct xdnn_run {
    run_state st;
    char *base_dir;     /* owned: where relative load() paths start */
};

xdnn_status xdnn_run_create(xdnn_graph_t *g, const char *base_dir, xdnn_run_t **out)
{
    if (!out)
        return XDNN_ERR_USAGE;
    *out = NULL;
    if (!g)
        return XDNN_ERR_USAGE;
    xdnn_run_t *r = calloc(1, sizeof *r);
    if (!r || !(r->base_dir = strdup(base_dir ? base_dir : "."))) {
        free(r);
        return XDNN_ERR_NOMEM;
    }
    xdnn_status s = run_state_init(&r->st, g, r->base_dir);
    if (s != XDNN_OK) {
        xdnn_run_destroy(r);
        return s;
    }
    *out = r;
    return XDNN_OK;
}

void xdnn_run_destroy(xdnn_run_t *r)
{
    if (!r)
        return;
    run_state_free(&r->st);
    free(r->base_dir);
    free(r);
}

xdnn_status xdnn_run_load_inputs(xdnn_run_t *r, const xdnn_input_file *files, size_t n, xdnn_diags_t *d)
{
    if (!r || (n && !files) || n > INT32_MAX)
        return XDNN_ERR_USAGE;
    input_override *ov = calloc(n ? n : 1, sizeof *ov);
    if (!ov)
        return XDNN_ERR_NOMEM;
    for (size_t i = 0; i < n; i++)
        ov[i] = (input_override){files[i].tensor, files[i].path};
    xdnn_status s = exec_load_inputs(&r->st, ov, (int)n, d);
    free(ov);
    return s;
}

xdnn_status xdnn_run_alloc_results(xdnn_run_t *r, xdnn_diags_t *d)
{
    return r ? run_state_alloc_results(&r->st, d) : XDNN_ERR_USAGE;
}

xdnn_status xdnn_run_reference(xdnn_run_t *r, xdnn_diags_t *d) { return r ? exec_cpu_run(&r->st, d) : XDNN_ERR_USAGE; }

xdnn_status xdnn_run_copy_inputs(xdnn_run_t *dst, const xdnn_run_t *src)
{
    if (!dst || !src || dst->st.g != src->st.g)
        return XDNN_ERR_USAGE;
    return run_state_copy_inputs(&dst->st, &src->st);
}

/* Tensor i's host tensor (empty until materialized), NULL for a bad index. */
static const host_tensor *held(const xdnn_run_t *r, size_t i)
{
    return r && i < r->st.g->ntensors ? &r->st.tensors[i] : NULL;
}

void *xdnn_run_data(xdnn_run_t *r, size_t tensor, size_t *bytes)
{
    const host_tensor *h = held(r, tensor);
    if (bytes)
        *bytes = h ? h->bytes : 0;
    return h ? h->data : NULL;
}

double xdnn_run_node_ms(const xdnn_run_t *r, size_t node)
{
    return r && node < r->st.g->nnodes ? r->st.node_ms[node] : 0;
}

double xdnn_run_total_ms(const xdnn_run_t *r) { return r ? r->st.total_ms : 0; }

xdnn_status xdnn_run_tensor_stats(const xdnn_run_t *r, size_t tensor, xdnn_tensor_stats *out)
{
    const host_tensor *h = held(r, tensor);
    if (!h || !out)
        return XDNN_ERR_USAGE;
    tensor_stats s;
    tensor_compute_stats(h, &s);
    *out = (xdnn_tensor_stats){.min = s.min, .max = s.max, .mean = s.mean, .std = s.std, .nan = s.nan,
                               .inf = s.inf, .checksum = s.checksum};
    return XDNN_OK;
}

xdnn_status xdnn_run_tensor_values(const xdnn_run_t *r, size_t tensor, double *out, size_t n)
{
    const host_tensor *h = held(r, tensor);
    if (!h || (n && !out))
        return XDNN_ERR_USAGE;
    size_t numel = (size_t)h->numel;
    double *all = n >= numel ? out : malloc((numel ? numel : 1) * sizeof *all);
    if (!all)
        return XDNN_ERR_NOMEM;
    tensor_gather(h, all);
    if (all != out) {
        memcpy(out, all, n * sizeof *out);
        free(all);
    }
    return XDNN_OK;
}

xdnn_status xdnn_run_save_npy(const xdnn_run_t *r, size_t tensor, const char *path, xdnn_diags_t *d)
{
    const host_tensor *h = held(r, tensor);
    return h && path ? npy_write(path, h, d) : XDNN_ERR_USAGE;
}

xdnn_status xdnn_run_save_safetensors(const xdnn_run_t *r, const int *tensors, size_t n, const char *path,
                                      xdnn_diags_t *d)
{
    if (!r || !path || (n && !tensors) || n > INT32_MAX)
        return XDNN_ERR_USAGE;
    const char **names = calloc(n ? n : 1, sizeof *names);
    const host_tensor **ts = calloc(n ? n : 1, sizeof *ts);
    xdnn_status s = names && ts ? XDNN_OK : XDNN_ERR_NOMEM;
    for (size_t i = 0; i < n && s == XDNN_OK; i++) {
        ts[i] = tensors[i] >= 0 ? held(r, (size_t)tensors[i]) : NULL;
        if (!ts[i])
            s = XDNN_ERR_USAGE;
        else
            names[i] = r->st.g->tensors[tensors[i]].name;
    }
    if (s == XDNN_OK)
        s = safetensors_write(path, (int)n, names, ts, d);
    free(names);
    free(ts);
    return s;
}

/* ---------------------------------------------------------------- comparisons */

static void fill_compare(const compare_result *c, double rtol, double atol, xdnn_compare_result *out)
{
    *out = (xdnn_compare_result){.rtol = rtol, .atol = atol, .count = c->count, .mismatches = c->mismatches,
                                 .max_abs = c->max_abs, .max_rel = c->max_rel, .rel_norm = c->rel_norm,
                                 .nworst = c->nworst, .ok = c->ok};
    for (int i = 0; i < c->nworst && i < XDNN_COMPARE_WORST; i++) {
        const compare_worst *w = &c->worst[i];
        out->worst[i] = (xdnn_mismatch){.got = w->got, .ref = w->ref, .abs_err = w->abs_err, .rel_err = w->rel_err};
        memcpy(out->worst[i].index, w->index, sizeof w->index);
    }
}

_Static_assert(sizeof ((compare_result *)0)->worst / sizeof ((compare_result *)0)->worst[0] == XDNN_COMPARE_WORST,
               "xdnn_compare_result keeps every worst element compare_tensors finds");

xdnn_status xdnn_graph_default_tolerance(const xdnn_graph_t *g, size_t tensor, double *rtol, double *atol)
{
    if (!g || tensor >= g->ntensors || !rtol || !atol)
        return XDNN_ERR_USAGE;
    const xtensor *t = &g->tensors[tensor];
    compare_default_tolerance(t->rdtype, t->producer >= 0 ? g->nodes[t->producer].op : -1, rtol, atol);
    if (g->rtf32 && t->rdtype == XDNN_F32) { /* tf32 allowed: the GPU's f32 GEMMs and attention round their */
        *rtol = *rtol > 5e-3 ? *rtol : 5e-3; /* inputs to 10-bit mantissas, ~1e-3 relative (METHOD.md) */
        *atol = *atol > 1e-3 ? *atol : 1e-3;
    }
    return XDNN_OK;
}

static xdnn_status compare_with(const xdnn_run_t *r, size_t tensor, const host_tensor *ref, double rtol,
                                double atol, xdnn_compare_result *out)
{
    const host_tensor *got = held(r, tensor);
    if (!got || !ref || !out)
        return XDNN_ERR_USAGE;
    compare_result c;
    compare_tensors(got, ref, rtol, atol, &c);
    fill_compare(&c, rtol, atol, out);
    return XDNN_OK;
}

xdnn_status xdnn_run_compare(const xdnn_run_t *got, size_t tensor, const xdnn_run_t *ref, double rtol, double atol,
                             xdnn_compare_result *out)
{
    if (!ref || ref->st.g != (got ? got->st.g : NULL))
        return XDNN_ERR_USAGE;
    return compare_with(got, tensor, held(ref, tensor), rtol, atol, out);
}

xdnn_status xdnn_run_compare_npy(const xdnn_run_t *r, size_t tensor, const char *path, double rtol, double atol,
                                 xdnn_compare_result *out, xdnn_diags_t *d)
{
    if (!held(r, tensor) || !path || !out)
        return XDNN_ERR_USAGE;
    const xtensor *t = &r->st.g->tensors[tensor];
    host_tensor ref = {0};
    xdnn_status s = npy_read(path, &ref, d);
    if (s == XDNN_OK) {
        bool same = ref.rank == t->rrank;
        for (int k = 0; same && k < t->rrank; k++)
            same = ref.dims[k] == t->rdims[k];
        if (!same) {
            diag_error(d, XDNN_ERR_CHECK, ((xloc){.file = path}), "golden shape differs from output '%s'", t->name);
            s = XDNN_ERR_CHECK;
        }
    }
    if (s == XDNN_OK)
        s = compare_with(r, tensor, &ref, rtol, atol, out);
    host_tensor_free(&ref);
    return s;
}

size_t xdnn_graph_check_count(const xdnn_graph_t *g) { return g ? g->nchecks : 0; }

xdnn_status xdnn_run_graph_check(xdnn_run_t *r, size_t k, int *tensor, xdnn_compare_result *out, xdnn_diags_t *d)
{
    if (!r || k >= r->st.g->nchecks || !tensor || !out)
        return XDNN_ERR_USAGE;
    xgraph *g = r->st.g;
    const xcheck *c = &g->checks[k];
    const xtensor *t = &g->tensors[c->tensor];
    *tensor = c->tensor;
    /* the reference is the tensor's declaration with the check's initializer */
    xtensor ref_decl = *t;
    ref_decl.init = c->ref;
    ref_decl.kind = TK_INPUT;
    host_tensor ref = {0};
    xdnn_status s = host_tensor_alloc(&ref, XDNN_F64, t->rrank, t->rdims, NULL);
    double *vals = s == XDNN_OK ? malloc((size_t)(t->rnumel ? t->rnumel : 1) * sizeof *vals) : NULL;
    if (s == XDNN_OK && !vals)
        s = XDNN_ERR_NOMEM;
    if (s == XDNN_OK)
        s = init_fill(g, &ref_decl, r->st.base_dir, vals, d);
    if (s == XDNN_OK) {
        tensor_scatter(&ref, vals);
        double rtol, atol;
        xdnn_graph_default_tolerance(g, (size_t)c->tensor, &rtol, &atol);
        value v;
        if (c->rtol && graph_eval(g, c->rtol, d, &v))
            value_as_float(&v, &rtol);
        if (c->atol && graph_eval(g, c->atol, d, &v))
            value_as_float(&v, &atol);
        s = compare_with(r, (size_t)c->tensor, &ref, rtol, atol, out);
    }
    free(vals);
    host_tensor_free(&ref);
    return s;
}

/* ---------------------------------------------------------------- graph facts a report prints */

const char *xdnn_graph_tensor_layout(const xdnn_graph_t *g, size_t tensor)
{
    if (!g || tensor >= g->ntensors)
        return NULL;
    return layout_to_text(g->module->ar, &g->tensors[tensor].layout);
}

void xdnn_graph_cost(const xdnn_graph_t *g, double *flops, double *bytes)
{
    double f = 0, b = 0;
    for (size_t i = 0; g && i < g->nnodes; i++) {
        const xnode *n = &g->nodes[i];
        const op_desc *desc = op_get(n->op);
        if (desc->flops)
            f += desc->flops(g, n);
        else if (n->nresults > 0 && n->results[0] >= 0) /* elementwise: one op per output element */
            f += (double)g->tensors[n->results[0]].rnumel;
    }
    for (size_t i = 0; g && i < g->ntensors; i++) {
        const xtensor *t = &g->tensors[i];
        if (t->kind != TK_VIRTUAL || t->is_output)
            b += (double)t->rnumel * (double)xdnn_dtype_size(t->rdtype);
    }
    if (flops)
        *flops = f;
    if (bytes)
        *bytes = b;
}

xdnn_status xdnn_graph_node_info(const xdnn_graph_t *g, size_t i, const char **name, const char **op)
{
    if (!g || i >= g->nnodes)
        return XDNN_ERR_USAGE;
    if (name)
        *name = g->nodes[i].name;
    if (op)
        *op = op_get(g->nodes[i].op)->name;
    return XDNN_OK;
}
