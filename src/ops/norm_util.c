/* norm_util.c — shape rules shared by the normalization ops (see norm_util.h). */
#include "norm_util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

xdnn_dtype norm_stats_dtype(xdnn_dtype x) { return x == XDNN_F64 ? XDNN_F64 : XDNN_F32; }

bool norm_check_eps(op_infer_ctx *c, double *eps)
{
    double e = op_attr_float(c->node, c->desc, "eps");
    if (!isfinite(e) || e < 0) {
        op_error(c, "attribute 'eps' must be a finite number >= 0, got %g", e);
        return false;
    }
    if (eps)
        *eps = e;
    return true;
}

static bool all_ones(const tinfo *t)
{
    for (int i = 0; i < t->rank; i++)
        if (t->dims[i] != 1)
            return false;
    return true;
}

bool norm_check_nc(op_infer_ctx *c, const tinfo *x)
{
    if (x->rank >= 2)
        return true;
    char xs[128];
    op_error(c, "x must have rank >= 2 ([N, C, ...]), got %s", tinfo_str(xs, sizeof xs, x));
    return false;
}

bool norm_check_channel_param(op_infer_ctx *c, int port, const tinfo *x)
{
    if (!infer_need(c, port))
        return false;
    const tinfo *p = c->in[port];
    int64_t C = x->dims[1];
    bool ok = all_ones(p) || (p->rank == 1 && p->dims[0] == C);
    if (!ok && p->rank == x->rank) {
        ok = true;
        for (int i = 0; i < p->rank; i++)
            if (p->dims[i] != (i == 1 ? C : 1))
                ok = false;
    }
    if (ok)
        return true;
    char ps[128], xs[128], full[128];
    int64_t want[XDNN_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
        want[i] = i == 1 ? C : 1;
    op_error(c, "%s must be [%" PRId64 "] or %s (one value per channel of x %s), got %s", c->desc->ports[port], C,
             shape_str(full, sizeof full, x->rank, want), tinfo_str(xs, sizeof xs, x), tinfo_str(ps, sizeof ps, p));
    return false;
}

bool norm_check_feature_param(op_infer_ctx *c, int port, const tinfo *x, int k)
{
    if (!infer_need(c, port))
        return false;
    const tinfo *p = c->in[port];
    bool ok = all_ones(p);
    if (!ok && p->rank >= k && p->rank <= x->rank) {
        ok = true;
        for (int i = 0; i < p->rank; i++) {
            int xd = x->rank - p->rank + i;
            bool normalized = xd >= x->rank - k;
            if (p->dims[i] != (normalized ? x->dims[xd] : 1))
                ok = false;
        }
    }
    if (ok)
        return true;
    char ps[128], xs[128], want[128];
    op_error(c, "%s must be %s (the normalized trailing dims of x %s, optionally with leading 1s), got %s",
             c->desc->ports[port], shape_str(want, sizeof want, k, x->dims + x->rank - k), tinfo_str(xs, sizeof xs, x),
             tinfo_str(ps, sizeof ps, p));
    return false;
}

bool norm_check_same_shape(op_infer_ctx *c, int port, int like_port)
{
    if (!infer_need(c, port) || !infer_need(c, like_port))
        return false;
    const tinfo *p = c->in[port], *x = c->in[like_port];
    bool ok = p->rank == x->rank;
    for (int i = 0; ok && i < p->rank; i++)
        ok = p->dims[i] == x->dims[i];
    if (ok)
        return true;
    char ps[128], xs[128];
    op_error(c, "%s must have the shape of %s %s, got %s", c->desc->ports[port], c->desc->ports[like_port],
             tinfo_str(xs, sizeof xs, x), tinfo_str(ps, sizeof ps, p));
    return false;
}

bool norm_check_stats(op_infer_ctx *c, int port, int64_t want, const tinfo *like)
{
    if (!infer_need(c, port))
        return false;
    const tinfo *p = c->in[port];
    if (shape_numel(p->rank, p->dims) == want)
        return true;
    char ps[128], ls[128];
    op_error(c, "%s must have %" PRId64 " elements (shape %s), got %s", c->desc->ports[port], want,
             tinfo_str(ls, sizeof ls, like), tinfo_str(ps, sizeof ps, p));
    return false;
}

int norm_trailing_axes(const xnode *n, const op_desc *d, int rank)
{
    int64_t axes[XDNN_MAX_RANK];
    int na = 0;
    if (!attr_int_list(n, d, "axes", XDNN_MAX_RANK, axes, &na) || na < 1 || na > rank)
        return -1;
    bool seen[XDNN_MAX_RANK] = {false};
    for (int i = 0; i < na; i++) {
        int a;
        if (!op_axis(rank, axes[i], &a) || a < rank - na || seen[a])
            return -1;
        seen[a] = true;
    }
    return na;
}

int norm_infer_trailing_axes(op_infer_ctx *c, const tinfo *x)
{
    int k = norm_trailing_axes(c->node, c->desc, x->rank);
    if (k >= 0)
        return k;
    const value *v = op_attr(c->node, c->desc, "axes");
    char got[256] = "nothing";
    if (v && v->kind != VAL_NONE) {
        arena *a = arena_create();
        snprintf(got, sizeof got, "%s", value_to_text(a, v));
        arena_destroy(a);
    }
    char xs[128];
    op_error(c, "attribute 'axes' must name distinct trailing axes of x %s (e.g. [-1] or [-2, -1]), got %s",
             tinfo_str(xs, sizeof xs, x), got);
    return -1;
}

int64_t norm_spatial(const ref_tensor *x)
{
    int64_t s = 1;
    for (int i = 2; i < x->rank; i++)
        s *= x->dims[i];
    return s;
}

double norm_flops_fwd(const xgraph *g, const xnode *n) { return 8.0 * (double)node_port_numel(g, n, 0); }
double norm_flops_bwd(const xgraph *g, const xnode *n) { return 12.0 * (double)node_port_numel(g, n, 0); }
