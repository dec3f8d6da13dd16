/* init.c — initializers: the values an input or weight starts with.
 *
 *   uniform(lo=-1, hi=1, seed=auto)   lo + (hi - lo) * u, u in [0, 1)  (the default)
 *   randn(mean=0, std=1, seed=auto)   mean + std * z, z standard normal
 *   fill(value), zeros(), ones()      constants
 *   arange(start=0, step=1)           start + step * k, k = logical row-major index
 *   values(data)                      nested lists flattened row-major; numel or 1 numbers
 *   load(path, key=, format=, layout="row", dtype=)
 *
 * Random values come from philox.c, stream 0, counter = logical index, so they
 * do not depend on the tensor's layout.  seed=auto (or no seed) means
 * rng_tensor_seed(graph seed, tensor name); an explicit seed=s is used as is.
 *
 * load: format "npy", "safetensors" or "raw", by default from the extension
 * (.npy, .safetensors, .bin/.raw).  Paths are relative to base_dir (the .dnn
 * file's folder).  Files hold the tensor in logical dim order unless
 * layout= says otherwise: layout="nhwc" (any tag, or a perm list) means the
 * file holds that physical order, so its shape is the permuted dims and it is
 * permuted back while reading.  safetensors: key= names the tensor; without
 * it, the tensor named like the xdnn tensor, or else the file's only tensor.
 * raw: the file dtype is dtype= or the tensor's dtype.  npy/safetensors carry
 * their dtype; dtype=, if given, must agree.  The file dtype may differ from
 * the tensor's: values are converted (the caller rounds them to the tensor's
 * dtype; i64 beyond 2^53 is not exact in the double buffer).
 *
 * Errors name the initializer, the tensor and the argument and point at the
 * initializer's source location.
 */
#include "data.h"

#include "core/fileio.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct init_ctx {
    xgraph *g;
    const xtensor *t;
    const xinit *in;
    xdnn_diags_t *d;
    char desc[64 + XDNN_MAX_RANK * 24]; /* "x: f32[2, 3]" */
} init_ctx;

static xdnn_status init_report(init_ctx *c, xdnn_status st, const char *fmt, va_list ap)
{
    diag_vreport(c->d, XDNN_SEV_ERROR, st, c->in ? c->in->loc : c->t->loc, NULL, fmt, ap);
    return st;
}

/* A mistake in the initializer itself. */
static xdnn_status init_error(init_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static xdnn_status init_error(init_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    xdnn_status st = init_report(c, XDNN_ERR_SEMANTIC, fmt, ap);
    va_end(ap);
    return st;
}

/* A file that does not fit the tensor (the CLI's "file format" exit code). */
static xdnn_status file_error(init_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static xdnn_status file_error(init_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    xdnn_status st = init_report(c, XDNN_ERR_IO, fmt, ap);
    va_end(ap);
    return st;
}

static void shape_text(char *buf, size_t cap, int rank, const int64_t *dims, const char *open, const char *close)
{
    size_t n = (size_t)snprintf(buf, cap, "%s", open);
    for (int i = 0; i < rank && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%" PRId64, i ? ", " : "", dims[i]);
    if (n < cap)
        snprintf(buf + n, cap - n, "%s", close);
}

/* ---------------------------------------------------------------- arguments */

static const expr *arg_expr(const init_ctx *c, const char *name)
{
    for (int i = 0; c->in && i < c->in->nargs; i++)
        if (c->in->names[i] && strcmp(c->in->names[i], name) == 0)
            return c->in->args[i];
    return NULL;
}

static bool arg_present(const init_ctx *c, const char *name) { return arg_expr(c, name) != NULL; }

/* Evaluate argument `name`; false (error reported) if evaluation fails. */
static bool arg_value(init_ctx *c, const char *name, value *out)
{
    const expr *e = arg_expr(c, name);
    if (!e) {
        *out = (value){0};
        return true;
    }
    return graph_eval(c->g, e, c->d, out);
}

static xdnn_status arg_number(init_ctx *c, const char *name, double dflt, bool required, double *out)
{
    value v;
    if (!arg_value(c, name, &v))
        return XDNN_ERR_SEMANTIC;
    if (v.kind == VAL_NONE) {
        if (required)
            return init_error(c, "%s: missing argument '%s' for %s", c->in->fn, name, c->desc);
        *out = dflt;
        return XDNN_OK;
    }
    if (v.kind == VAL_BOOL) {
        *out = v.b;
        return XDNN_OK;
    }
    if (!value_as_float(&v, out))
        return init_error(c, "%s: argument '%s' for %s must be a number, got %s", c->in->fn, name, c->desc,
                          val_kind_name(v.kind));
    return XDNN_OK;
}

/* NULL when absent; errors if present and not a string. */
static xdnn_status arg_string(init_ctx *c, const char *name, const char **out)
{
    value v;
    *out = NULL;
    if (!arg_value(c, name, &v))
        return XDNN_ERR_SEMANTIC;
    if (v.kind == VAL_NONE)
        return XDNN_OK;
    if (v.kind != VAL_STRING)
        return init_error(c, "%s: argument '%s' for %s must be a string, got %s", c->in->fn, name, c->desc,
                          val_kind_name(v.kind));
    *out = v.s;
    return XDNN_OK;
}

static xdnn_status arg_seed(init_ctx *c, uint64_t *seed)
{
    const expr *e = arg_expr(c, "seed");
    bool is_auto = !e || ((e->kind == EX_IDENT || e->kind == EX_STRING) && e->s && strcmp(e->s, "auto") == 0);
    if (is_auto) {
        *seed = rng_tensor_seed(c->g->rseed, c->t->name);
        return XDNN_OK;
    }
    value v;
    int64_t s;
    if (!graph_eval(c->g, e, c->d, &v))
        return XDNN_ERR_SEMANTIC;
    if (v.kind != VAL_INT || !value_as_int(&v, &s))
        return init_error(c, "%s: argument 'seed' for %s must be an integer or auto, got %s", c->in->fn, c->desc,
                          val_kind_name(v.kind));
    *seed = (uint64_t)s;
    return XDNN_OK;
}

/* Every argument must be one the initializer takes (the front ends check this
 * too; JSON or API-built graphs might not). */
static xdnn_status check_arg_names(init_ctx *c, const char *const *params, int nparams)
{
    for (int i = 0; i < c->in->nargs; i++) {
        const char *nm = c->in->names[i];
        bool ok = false;
        for (int p = 0; nm && p < nparams; p++)
            ok |= strcmp(params[p], nm) == 0;
        if (!ok) {
            char list[128] = "";
            size_t n = 0;
            for (int p = 0; p < nparams; p++)
                n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", p ? ", " : "", params[p]);
            return init_error(c, "%s: unknown argument '%s' for %s (%s takes: %s)", c->in->fn, nm ? nm : "?",
                              c->desc, c->in->fn, nparams ? list : "no arguments");
        }
    }
    return XDNN_OK;
}

/* ---------------------------------------------------------------- values() */

/* Count (out == NULL) or copy the numbers of a nested list, row-major. */
static xdnn_status flatten(init_ctx *c, const value *v, double *out, int64_t *n)
{
    if (v->kind == VAL_LIST) {
        for (int i = 0; i < v->n; i++) {
            xdnn_status st = flatten(c, &v->items[i], out, n);
            if (st != XDNN_OK)
                return st;
        }
        return XDNN_OK;
    }
    double x;
    if (v->kind == VAL_BOOL)
        x = v->b;
    else if (!value_as_float(v, &x))
        return init_error(c, "values: item %" PRId64 " for %s is a %s, not a number", *n, c->desc,
                          val_kind_name(v->kind));
    if (out)
        out[*n] = x;
    ++*n;
    return XDNN_OK;
}

static xdnn_status init_values(init_ctx *c, double *out)
{
    value v;
    if (!arg_value(c, "data", &v))
        return XDNN_ERR_SEMANTIC;
    if (v.kind == VAL_NONE)
        return init_error(c, "values: missing argument 'data' for %s", c->desc);
    int64_t n = 0;
    xdnn_status st = flatten(c, &v, NULL, &n);
    if (st != XDNN_OK)
        return st;
    if (n != c->t->rnumel && n != 1)
        return init_error(c, "values: %" PRId64 " number%s for %s (%" PRId64 " element%s)", n, n == 1 ? "" : "s",
                          c->desc, c->t->rnumel, c->t->rnumel == 1 ? "" : "s");
    if (n == 1) {
        double x;
        n = 0;
        flatten(c, &v, &x, &n);
        for (int64_t k = 0; k < c->t->rnumel; k++)
            out[k] = x;
        return XDNN_OK;
    }
    n = 0;
    return flatten(c, &v, out, &n);
}

/* ---------------------------------------------------------------- load() */

typedef enum file_format { FMT_NPY, FMT_SAFETENSORS, FMT_RAW } file_format;

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* File strides (elements, indexed by logical dim) for layout=, and the file's
 * shape: the logical dims in physical order (outermost = largest stride; on a
 * tie the size-1 dim is the inner one). */
static xdnn_status load_layout(init_ctx *c, int64_t *fstrides, int64_t *fdims)
{
    const xtensor *t = c->t;
    int rank = t->rrank, perm[XDNN_MAX_RANK];
    value v;
    if (!arg_value(c, "layout", &v))
        return XDNN_ERR_SEMANTIC;
    if (v.kind == VAL_NONE) {
        for (int i = 0; i < rank; i++)
            perm[i] = i;
    } else if (v.kind == VAL_STRING) {
        if (!layout_perm_for_tag(v.s, rank, perm))
            return init_error(c, "load: layout \"%s\" does not fit %s (unknown tag or wrong rank)", v.s, c->desc);
    } else if (v.kind == VAL_LIST) {
        bool seen[XDNN_MAX_RANK] = {false}, ok = v.n == rank;
        for (int i = 0; ok && i < rank; i++) {
            int64_t p;
            ok = v.items[i].kind == VAL_INT && value_as_int(&v.items[i], &p) && p >= 0 && p < rank && !seen[p];
            if (ok) {
                seen[p] = true;
                perm[i] = (int)p;
            }
        }
        if (!ok)
            return init_error(c, "load: layout for %s must be a permutation of 0..%d", c->desc, rank - 1);
    } else {
        return init_error(c, "load: argument 'layout' for %s must be a layout tag string or a perm list, got %s",
                          c->desc, val_kind_name(v.kind));
    }
    strides_from_perm(rank, t->rdims, perm, fstrides);
    int order[XDNN_MAX_RANK];
    for (int i = 0; i < rank; i++)
        order[i] = i;
    for (int i = 1; i < rank; i++) { /* insertion sort: stride descending, then size descending */
        for (int j = i; j > 0; j--) {
            int a = order[j - 1], b = order[j];
            bool swap = fstrides[b] > fstrides[a] || (fstrides[b] == fstrides[a] && t->rdims[b] > t->rdims[a]);
            if (!swap)
                break;
            order[j - 1] = b;
            order[j] = a;
        }
    }
    for (int i = 0; i < rank; i++)
        fdims[i] = t->rdims[order[i]];
    return XDNN_OK;
}

static xdnn_status load_safetensors(init_ctx *c, const char *full, const char *key, host_tensor *ft)
{
    if (key)
        return safetensors_read(full, key, ft, c->d);
    char *buf;
    size_t len;
    xdnn_status st = safetensors_read_bytes(full, &buf, &len, c->d);
    if (st != XDNN_OK)
        return st;
    /* No key: the tensor named like ours, else the only one (errors from the
     * first try are dropped: the second reports the real problem). */
    xdnn_diags_t *scratch = xdnn_diags_create();
    st = safetensors_parse(full, (const unsigned char *)buf, len, c->t->name, ft, scratch);
    xdnn_diags_destroy(scratch);
    if (st != XDNN_OK)
        st = safetensors_parse(full, (const unsigned char *)buf, len, NULL, ft, c->d);
    free(buf);
    return st;
}

static xdnn_status init_load(init_ctx *c, const char *base_dir, double *out)
{
    const xtensor *t = c->t;
    const char *path, *key, *fmt_name;
    xdnn_status st;
    if ((st = arg_string(c, "path", &path)) != XDNN_OK || (st = arg_string(c, "key", &key)) != XDNN_OK ||
        (st = arg_string(c, "format", &fmt_name)) != XDNN_OK)
        return st;
    if (!path)
        return init_error(c, "load: missing argument 'path' for %s", c->desc);
    file_format fmt;
    const char *fmt_src = fmt_name ? fmt_name : path;
    if (fmt_name ? strcmp(fmt_name, "npy") == 0 : has_suffix(path, ".npy"))
        fmt = FMT_NPY;
    else if (fmt_name ? strcmp(fmt_name, "safetensors") == 0 : has_suffix(path, ".safetensors"))
        fmt = FMT_SAFETENSORS;
    else if (fmt_name ? strcmp(fmt_name, "raw") == 0 : has_suffix(path, ".bin") || has_suffix(path, ".raw"))
        fmt = FMT_RAW;
    else if (fmt_name)
        return init_error(c, "load: format \"%s\" for %s is not supported (npy, safetensors, raw)", fmt_src, c->desc);
    else
        return init_error(c, "load: cannot tell the format of \"%s\" for %s from its extension; give "
                          "format=\"npy\", \"safetensors\" or \"raw\"", path, c->desc);
    if (key && fmt != FMT_SAFETENSORS)
        return init_error(c, "load: argument 'key' for %s applies to safetensors files only", c->desc);
    bool has_dtype = arg_present(c, "dtype");
    xdnn_dtype fdtype = t->rdtype;
    if (has_dtype) {
        value v;
        if (!arg_value(c, "dtype", &v))
            return XDNN_ERR_SEMANTIC;
        if (v.kind == VAL_DTYPE)
            fdtype = v.dt;
        else if (v.kind != VAL_STRING || !xdnn_dtype_from_name(v.s, &fdtype))
            return init_error(c, "load: argument 'dtype' for %s must be a dtype such as f16, got %s", c->desc,
                              v.kind == VAL_STRING ? v.s : val_kind_name(v.kind));
    }
    int rank = t->rrank;
    int64_t fstrides[XDNN_MAX_RANK], fdims[XDNN_MAX_RANK];
    if ((st = load_layout(c, fstrides, fdims)) != XDNN_OK)
        return st;

    const char *full = path_join(c->g->module->ar, base_dir, path);
    const char *why = module_confinement_at(c->g->module, path, full, base_dir);
    if (why)
        return file_error(c, "load: '%s' for %s is refused in a confined graph (%s): %s", path, c->desc,
                          c->g->module->confine_to_base ? "a plan's graph always is" : "--sandbox", why);
    host_tensor ft = {0};
    if (fmt == FMT_NPY) {
        st = npy_read(full, &ft, c->d);
        host_tensor_retype(&ft, fdtype); /* untyped 'V1'/'V2' bytes mean what was declared */
    }
    else if (fmt == FMT_SAFETENSORS)
        st = load_safetensors(c, full, key, &ft);
    else
        st = raw_read(full, fdtype, rank, fdims, &ft, c->d);
    if (st != XDNN_OK) {
        host_tensor_free(&ft);
        return st;
    }
    if (has_dtype && fmt != FMT_RAW && ft.dtype != fdtype) {
        host_tensor_free(&ft);
        return file_error(c, "load: %s holds %s data, but dtype=%s was given for %s", path,
                          xdnn_dtype_name(ft.dtype), xdnn_dtype_name(fdtype), c->desc);
    }
    bool same = ft.rank == rank;
    for (int i = 0; same && i < rank; i++)
        same = ft.dims[i] == fdims[i];
    if (!same) {
        char fshape[XDNN_MAX_RANK * 24 + 8], want[XDNN_MAX_RANK * 24 + 8];
        shape_text(fshape, sizeof fshape, ft.rank, ft.dims, "(", ")");
        shape_text(want, sizeof want, rank, fdims, "(", ")");
        host_tensor_free(&ft);
        const char *kind = t->kind == TK_WEIGHT ? "weight" : "input";
        const char *at = t->layout.kind == LAYOUT_DEFAULT ? "" : " @";
        const char *lay = t->layout.kind == LAYOUT_DEFAULT ? "" : layout_to_text(c->g->module->ar, &t->layout);
        if (arg_present(c, "layout"))
            return file_error(c, "%s: shape %s does not match %s %s%s%s (with this layout= the file shape must be %s)",
                              path, fshape, kind, c->desc, at, lay, want);
        file_error(c, "%s: shape %s does not match %s %s%s%s", path, fshape, kind, c->desc, at, lay);
        if (t->layout.kind == LAYOUT_NAMED && t->layout.name) {
            /* A physically laid-out file is the usual cause: say how to load it. */
            int perm[XDNN_MAX_RANK];
            bool match = layout_perm_for_tag(t->layout.name, rank, perm) && ft.rank == rank;
            for (int i = 0; match && i < rank; i++)
                match = ft.dims[i] == t->rdims[perm[i]];
            if (match)
                diag_note(c->d, c->in->loc,
                          "files hold the logical order; use load(\"%s\", layout=\"%s\") for a physically %s file",
                          path, t->layout.name, t->layout.name);
        }
        return XDNN_ERR_IO;
    }
    double *tmp = malloc(sizeof *tmp * (size_t)(ft.numel ? ft.numel : 1));
    if (!tmp) {
        host_tensor_free(&ft);
        diag_error(c->d, XDNN_ERR_NOMEM, c->in ? c->in->loc : c->t->loc,
                   "load: cannot allocate %zu bytes to convert %s for %s",
                   sizeof *tmp * (size_t)(ft.numel ? ft.numel : 1), path, c->desc);
        return XDNN_ERR_NOMEM;
    }
    tensor_gather(&ft, tmp); /* file order (physical), converted to double */
    int64_t idx[XDNN_MAX_RANK] = {0};
    for (int64_t k = 0; k < t->rnumel; k++) {
        int64_t off = 0;
        for (int i = 0; i < rank; i++)
            off += idx[i] * fstrides[i];
        out[k] = tmp[off];
        for (int i = rank - 1; i >= 0; i--) {
            if (++idx[i] < t->rdims[i])
                break;
            idx[i] = 0;
        }
    }
    free(tmp);
    host_tensor_free(&ft);
    return XDNN_OK;
}

/* ---------------------------------------------------------------- entry point */

static const char *const p_uniform[] = {"lo", "hi", "seed"};
static const char *const p_randn[] = {"mean", "std", "seed"};
static const char *const p_fill[] = {"value"};
static const char *const p_arange[] = {"start", "step"};
static const char *const p_values[] = {"data"};
static const char *const p_load[] = {"path", "key", "format", "layout", "dtype"};

static const struct {
    const char *fn;
    const char *const *params;
    int nparams;
} init_fns[] = {
    {"uniform", p_uniform, 3}, {"randn", p_randn, 3},   {"fill", p_fill, 1},     {"zeros", NULL, 0},
    {"ones", NULL, 0},         {"arange", p_arange, 2}, {"values", p_values, 1}, {"load", p_load, 5},
};

xdnn_status init_fill(xgraph *g, const xtensor *t, const char *base_dir, double *out, xdnn_diags_t *d)
{
    init_ctx c = {.g = g, .t = t, .in = t->init, .d = d};
    char shape[XDNN_MAX_RANK * 24 + 8];
    shape_text(shape, sizeof shape, t->rrank, t->rdims, "[", "]");
    snprintf(c.desc, sizeof c.desc, "%s: %s%s", t->name, xdnn_dtype_name(t->rdtype), shape);
    int64_t n = t->rnumel;
    const char *fn = t->init ? t->init->fn : "uniform";
    size_t which = 0, nfns = sizeof init_fns / sizeof init_fns[0];
    while (which < nfns && strcmp(init_fns[which].fn, fn) != 0)
        which++;
    if (which == nfns)
        return init_error(&c, "unknown initializer '%s' for %s", fn, c.desc);
    xdnn_status st;
    if (t->init && (st = check_arg_names(&c, init_fns[which].params, init_fns[which].nparams)) != XDNN_OK)
        return st;

    if (strcmp(fn, "uniform") == 0 || strcmp(fn, "randn") == 0) {
        bool uniform = fn[0] == 'u';
        double a, b;
        uint64_t seed = 0;
        if ((st = arg_number(&c, uniform ? "lo" : "mean", uniform ? -1.0 : 0.0, false, &a)) != XDNN_OK ||
            (st = arg_number(&c, uniform ? "hi" : "std", 1.0, false, &b)) != XDNN_OK ||
            (st = arg_seed(&c, &seed)) != XDNN_OK)
            return st;
        /* counter-based: element k is a function of k alone, so threads give the sequential values */
#pragma omp parallel for schedule(static) if (n > 65536)
        for (int64_t k = 0; k < n; k++)
            out[k] = uniform ? a + (b - a) * rng_uniform01(seed, 0, (uint64_t)k)
                             : a + b * rng_normal(seed, 0, (uint64_t)k);
        return XDNN_OK;
    }
    if (strcmp(fn, "fill") == 0 || strcmp(fn, "zeros") == 0 || strcmp(fn, "ones") == 0) {
        double v = fn[0] == 'o' ? 1.0 : 0.0;
        if (fn[0] == 'f' && (st = arg_number(&c, "value", 0, true, &v)) != XDNN_OK)
            return st;
        for (int64_t k = 0; k < n; k++)
            out[k] = v;
        return XDNN_OK;
    }
    if (strcmp(fn, "arange") == 0) {
        double start, step;
        if ((st = arg_number(&c, "start", 0, false, &start)) != XDNN_OK ||
            (st = arg_number(&c, "step", 1, false, &step)) != XDNN_OK)
            return st;
        for (int64_t k = 0; k < n; k++)
            out[k] = start + step * (double)k;
        return XDNN_OK;
    }
    if (strcmp(fn, "values") == 0)
        return init_values(&c, out);
    return init_load(&c, base_dir, out);
}
