/* index_util.c — index dtypes and the run-time range check of index values
 * (see index_util.h). */
#include "index_util.h"

#include <math.h>
#include <stdio.h>

bool index_dtype_ok(xdnn_dtype t) { return t == XDNN_I8 || t == XDNN_I32 || t == XDNN_I64; }

bool index_check_port(op_infer_ctx *c, int port)
{
    if (!infer_need(c, port))
        return false;
    if (index_dtype_ok(c->in[port]->dtype))
        return true;
    op_error(c, "%s must be an integer tensor (i8, i32 or i64), got %s", c->desc->ports[port],
             xdnn_dtype_name(c->in[port]->dtype));
    return false;
}

static bool ref_get(op_ref_ctx *c, const ref_tensor *t, int64_t k, int64_t n, bool has_ignore, int64_t ignore,
                    const char *what, int64_t *out)
{
    double v = t->data[k];
    if (has_ignore && v == (double)ignore) {
        *out = -1;
        return true;
    }
    /* integer storage makes v whole; the range test also keeps the cast defined */
    if (v >= 0 && v < (double)n && v == floor(v)) {
        *out = (int64_t)v;
        return true;
    }
    op_ref_error(c, XDNN_ERR_SEMANTIC, "index[%lld] = %.17g is out of range [0, %lld) (%s)", (long long)k, v,
                 (long long)n, what);
    return false;
}

bool index_ref_get_or(op_ref_ctx *c, const ref_tensor *t, int64_t k, int64_t n, int64_t ignore, const char *what,
                      int64_t *out)
{
    return ref_get(c, t, k, n, true, ignore, what, out);
}

bool index_ref_get(op_ref_ctx *c, const ref_tensor *t, int64_t k, int64_t n, const char *what, int64_t *out)
{
    return ref_get(c, t, k, n, false, 0, what, out);
}
