/* op_util.c — attribute access, broadcasting and index helpers shared by every
 * op family's inference and reference. */
#include "op.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static xdnn_status op_vreport(xdnn_diags_t *d, xdnn_status st, const xnode *n, const op_desc *desc,
                              const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

static xdnn_status op_vreport(xdnn_diags_t *d, xdnn_status st, const xnode *n, const op_desc *desc,
                              const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    diag_error(d, st, n->loc, "%s: %s", desc->name, msg);
    if (n->origin)
        diag_note(d, n->loc, "%s", n->origin);
    return st;
}

xdnn_status op_error(op_infer_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    xdnn_status st = op_vreport(c->diags, XDNN_ERR_SEMANTIC, c->node, c->desc, fmt, ap);
    va_end(ap);
    return st;
}

xdnn_status op_unsupported(op_infer_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    xdnn_status st = op_vreport(c->diags, XDNN_ERR_UNSUPPORTED, c->node, c->desc, fmt, ap);
    va_end(ap);
    return st;
}

xdnn_status op_ref_error(op_ref_ctx *c, xdnn_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    op_vreport(c->diags, st, c->node, c->desc, fmt, ap);
    va_end(ap);
    return st;
}

const value *op_attr(const xnode *n, const op_desc *d, const char *name)
{
    int i = op_attr_index(d, name);
    return i >= 0 && n->rattrs ? &n->rattrs[i] : NULL;
}

bool op_attr_present(const xnode *n, const op_desc *d, const char *name)
{
    const value *v = op_attr(n, d, name);
    return v && v->kind != VAL_NONE;
}

int64_t op_attr_int(const xnode *n, const op_desc *d, const char *name)
{
    const value *v = op_attr(n, d, name);
    int64_t x = 0;
    if (v)
        value_as_int(v, &x);
    return x;
}

double op_attr_float(const xnode *n, const op_desc *d, const char *name)
{
    const value *v = op_attr(n, d, name);
    double x = 0;
    if (v)
        value_as_float(v, &x);
    return x;
}

bool op_attr_bool(const xnode *n, const op_desc *d, const char *name)
{
    const value *v = op_attr(n, d, name);
    return v && v->kind == VAL_BOOL && v->b;
}

const char *op_attr_str(const xnode *n, const op_desc *d, const char *name)
{
    const value *v = op_attr(n, d, name);
    return v && v->kind == VAL_STRING ? v->s : NULL;
}

bool op_attr_ints_n(const xnode *node, const op_desc *d, const char *name, int n, int64_t *out)
{
    const value *v = op_attr(node, d, name);
    if (!v)
        return false;
    if (v->kind == VAL_INT) {
        for (int i = 0; i < n; i++)
            out[i] = v->i;
        return true;
    }
    if (v->kind != VAL_LIST || v->n != n)
        return false;
    for (int i = 0; i < n; i++)
        if (!value_as_int(&v->items[i], &out[i]) || v->items[i].kind == VAL_BOOL)
            return false;
    return true;
}

bool op_attr_ints(op_infer_ctx *c, const char *name, int n, int64_t *out)
{
    if (op_attr_ints_n(c->node, c->desc, name, n, out))
        return true;
    const value *v = op_attr(c->node, c->desc, name);
    char got[256] = "nothing";
    if (v) {
        arena *a = arena_create();
        snprintf(got, sizeof got, "%s", value_to_text(a, v));
        arena_destroy(a);
    }
    op_error(c, "attribute '%s' must be an int or a list of %d ints, got %s", name, n, got);
    return false;
}

bool op_axis(int rank, int64_t axis, int *out)
{
    if (axis < -rank || axis >= rank || (rank == 0 && axis != 0))
        return false;
    *out = (int)(axis < 0 ? axis + rank : axis);
    return true;
}

bool shape_broadcast(const tinfo *const *shapes, int n, tinfo *out)
{
    int rank = 0;
    for (int i = 0; i < n; i++)
        if (shapes[i] && shapes[i]->rank > rank)
            rank = shapes[i]->rank;
    out->rank = rank;
    for (int d = 0; d < rank; d++)
        out->dims[d] = 1;
    for (int i = 0; i < n; i++) {
        const tinfo *s = shapes[i];
        if (!s)
            continue;
        for (int d = 0; d < s->rank; d++) {
            int od = rank - s->rank + d;
            int64_t a = out->dims[od], b = s->dims[d];
            if (a == b || b == 1)
                continue;
            if (a == 1)
                out->dims[od] = b;
            else
                return false;
        }
    }
    return true;
}

char *shape_str(char *buf, size_t len, int rank, const int64_t *dims)
{
    size_t k = 0;
    k += (size_t)snprintf(buf + k, len - k, "[");
    for (int i = 0; i < rank && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%" PRId64, i ? ", " : "", dims[i]);
    if (k < len)
        snprintf(buf + k, len - k, "]");
    return buf;
}

int64_t shape_numel(int rank, const int64_t *dims)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= dims[i];
    return n;
}

void shape_strides(int rank, const int64_t *dims, int64_t *strides)
{
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        strides[i] = s;
        s *= dims[i];
    }
}

int64_t ref_broadcast_offset(const ref_tensor *t, int out_rank, const int64_t *out_idx)
{
    int64_t off = 0, stride = 1;
    for (int d = t->rank - 1; d >= 0; d--) {
        int od = out_rank - t->rank + d;
        int64_t i = (od >= 0 && t->dims[d] != 1) ? out_idx[od] : 0;
        off += i * stride;
        stride *= t->dims[d];
    }
    return off;
}

bool index_next(int rank, const int64_t *dims, int64_t *idx)
{
    for (int d = rank - 1; d >= 0; d--) {
        if (++idx[d] < dims[d])
            return true;
        idx[d] = 0;
    }
    return false;
}
