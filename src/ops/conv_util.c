/* conv_util.c — window geometry (stride, dilation, pads, "same", output size)
 * and the conv shape checks shared by conv, conv_dgrad, conv_wgrad and the
 * pooling ops.  The formulas are in conv_util.h. */
#include "conv_util.h"

#include "core/checked.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

const char *conv_dim_name(int nsp, int i)
{
    static const char *const names[CONV_MAX_SPATIAL] = {"D", "H", "W"};
    int slot = CONV_MAX_SPATIAL - nsp + i;
    return slot >= 0 && slot < CONV_MAX_SPATIAL ? names[slot] : "?";
}

/* The attribute as written (after binding), for messages. */
static void attr_text(const xnode *n, const op_desc *d, const char *name, char *buf, size_t len)
{
    const value *v = op_attr(n, d, name);
    if (!v || v->kind == VAL_NONE) {
        snprintf(buf, len, "nothing");
        return;
    }
    arena *a = arena_create();
    snprintf(buf, len, "%s", value_to_text(a, v));
    arena_destroy(a);
}

/* stride or dilation: nsp ints >= 1 into the used slots. */
static bool read_positive(conv_geom *g, const xnode *n, const op_desc *d, const char *name,
                          const int64_t *dflt, int64_t *slots, char *err, size_t errlen)
{
    int64_t vals[CONV_MAX_SPATIAL];
    if (!op_attr_present(n, d, name)) {
        for (int i = 0; i < g->nsp; i++)
            vals[i] = dflt ? dflt[i] : 1;
    } else if (!op_attr_ints_n(n, d, name, g->nsp, vals)) {
        char got[256];
        attr_text(n, d, name, got, sizeof got);
        snprintf(err, errlen, "attribute '%s' must be an int or a list of %d ints (one per spatial dim), got %s",
                 name, g->nsp, got);
        return false;
    }
    for (int i = 0; i < g->nsp; i++) {
        if (vals[i] < 1) {
            char got[256];
            attr_text(n, d, name, got, sizeof got);
            snprintf(err, errlen, "attribute '%s' must be >= 1 along every spatial dim, got %s (%" PRId64 " along %s)",
                     name, got, vals[i], conv_dim_name(g->nsp, i));
            return false;
        }
        slots[g->first + i] = vals[i];
    }
    return true;
}

/* Checked by conv_geom_init before anything uses it. */
static int64_t extent(const conv_geom *g, int s) { return g->dilation[s] * (g->win[s] - 1) + 1; }

/* AT_PADS: int | [p per dim] | [[lo, hi] per dim] | "same". */
static bool read_pads(conv_geom *g, const xnode *n, const op_desc *d, const char *name, char *err,
                      size_t errlen)
{
    const value *v = op_attr(n, d, name);
    char got[256];
    attr_text(n, d, name, got, sizeof got);
    bool ok = true;
    if (!v || v->kind == VAL_NONE) {
        /* no pad */
    } else if (v->kind == VAL_STRING) {
        if (strcmp(v->s, "same") != 0) {
            snprintf(err, errlen, "attribute '%s' must be an int, a list of %d ints, a list of %d [before, after] pairs or \"same\", got %s",
                     name, g->nsp, g->nsp, got);
            return false;
        }
        for (int s = g->first; s < CONV_MAX_SPATIAL; s++) {
            /* ceil(in / stride), written so that a huge stride cannot overflow;
             * then (out - 1) * stride < in, and only adding the extent can. */
            int64_t out = (g->in[s] - 1) / g->stride[s] + 1, total;
            if (!ck_add((out - 1) * g->stride[s] - g->in[s], extent(g, s), &total)) {
                snprintf(err, errlen, "attribute '%s' = \"same\" needs a pad along %s that overflows 64 bits "
                         "(window extent %" PRId64 ")", name, conv_dim_name(g->nsp, s - g->first), extent(g, s));
                return false;
            }
            if (total < 0)
                total = 0;
            g->pad_lo[s] = total / 2;
            g->pad_hi[s] = total - total / 2;
        }
    } else if (v->kind == VAL_INT) {
        for (int s = g->first; s < CONV_MAX_SPATIAL; s++)
            g->pad_lo[s] = g->pad_hi[s] = v->i;
    } else if (v->kind == VAL_LIST && v->n == g->nsp) {
        for (int i = 0; i < g->nsp && ok; i++) {
            const value *it = &v->items[i];
            int s = g->first + i;
            if (it->kind == VAL_INT) {
                g->pad_lo[s] = g->pad_hi[s] = it->i;
            } else if (it->kind == VAL_LIST && it->n == 2 && it->items[0].kind == VAL_INT &&
                       it->items[1].kind == VAL_INT) {
                g->pad_lo[s] = it->items[0].i;
                g->pad_hi[s] = it->items[1].i;
            } else {
                ok = false;
            }
        }
    } else {
        ok = false;
    }
    if (!ok) {
        snprintf(err, errlen, "attribute '%s' must be an int, a list of %d ints, a list of %d [before, after] pairs or \"same\", got %s",
                 name, g->nsp, g->nsp, got);
        return false;
    }
    for (int i = 0; i < g->nsp; i++) {
        int s = g->first + i;
        if (g->pad_lo[s] < 0 || g->pad_hi[s] < 0) {
            snprintf(err, errlen, "attribute '%s' must not be negative, got %s (%" PRId64 ", %" PRId64 " along %s)",
                     name, got, g->pad_lo[s], g->pad_hi[s], conv_dim_name(g->nsp, i));
            return false;
        }
    }
    return true;
}

bool conv_geom_init(conv_geom *g, const xnode *n, const op_desc *d, int nsp, const int64_t *in,
                    const int64_t *win, const char *stride_attr, const int64_t *stride_dflt,
                    const char *dilation_attr, const char *pad_attr, bool ceil_mode, char *err,
                    size_t errlen)
{
    memset(g, 0, sizeof *g);
    g->nsp = nsp;
    g->first = CONV_MAX_SPATIAL - nsp;
    for (int s = 0; s < CONV_MAX_SPATIAL; s++)
        g->in[s] = g->win[s] = g->out[s] = g->stride[s] = g->dilation[s] = 1;
    for (int i = 0; i < nsp; i++) {
        g->in[g->first + i] = in[i];
        g->win[g->first + i] = win[i];
    }
    if (stride_attr && !read_positive(g, n, d, stride_attr, stride_dflt, g->stride, err, errlen))
        return false;
    if (dilation_attr && !read_positive(g, n, d, dilation_attr, NULL, g->dilation, err, errlen))
        return false;
    for (int i = 0; i < nsp; i++) {
        int s = g->first + i;
        int64_t e;
        if (!ck_extent(g->dilation[s], g->win[s], &e)) {
            char got[256];
            attr_text(n, d, dilation_attr ? dilation_attr : "dilation", got, sizeof got);
            snprintf(err, errlen, "attribute '%s' = %s makes the window extent along %s overflow 64 bits "
                     "(dilation %" PRId64 " * (window %" PRId64 " - 1) + 1)",
                     dilation_attr ? dilation_attr : "dilation", got, conv_dim_name(nsp, i), g->dilation[s], g->win[s]);
            return false;
        }
    }
    if (pad_attr && !read_pads(g, n, d, pad_attr, err, errlen))
        return false;
    for (int i = 0; i < nsp; i++) {
        int s = g->first + i;
        int64_t padded, span;
        if (!ck_add(g->in[s], g->pad_lo[s], &padded) || !ck_add(padded, g->pad_hi[s], &padded)) {
            char got[256];
            attr_text(n, d, pad_attr ? pad_attr : "pad", got, sizeof got);
            snprintf(err, errlen, "attribute '%s' = %s makes the padded size along %s overflow 64 bits "
                     "(input %" PRId64 " + pad %" PRId64 " + %" PRId64 ")",
                     pad_attr, got, conv_dim_name(nsp, i), g->in[s], g->pad_lo[s], g->pad_hi[s]);
            return false;
        }
        span = padded - extent(g, s);
        if (span < 0) {
            snprintf(err, errlen,
                     "output size along %s would be < 1: input %" PRId64 " + pad %" PRId64 "+%" PRId64
                     " = %" PRId64 " is smaller than the window extent %" PRId64 " (window %" PRId64
                     ", dilation %" PRId64 ")",
                     conv_dim_name(nsp, i), g->in[s], g->pad_lo[s], g->pad_hi[s], padded, extent(g, s),
                     g->win[s], g->dilation[s]);
            return false;
        }
        if (ceil_mode) {
            /* ceil(span / stride) + 1 without span + stride - 1; a last window
             * start past int64 is certainly past in + lo */
            g->out[s] = span / g->stride[s] + (span % g->stride[s] != 0) + 1;
            int64_t last;
            if (!ck_mul(g->out[s] - 1, g->stride[s], &last) || last >= g->in[s] + g->pad_lo[s])
                g->out[s]--;
        } else {
            g->out[s] = span / g->stride[s] + 1;
        }
    }
    return true;
}

char *conv_geom_str(const conv_geom *g, char *buf, size_t len)
{
    size_t k = 0;
    const char *parts[3] = {"stride [", "], pad [", "], dilation ["};
    for (int p = 0; p < 3 && k < len; p++) {
        k += (size_t)snprintf(buf + k, len - k, "%s", parts[p]);
        for (int i = 0; i < g->nsp && k < len; i++) {
            int s = g->first + i;
            const char *sep = i ? ", " : "";
            if (p == 0)
                k += (size_t)snprintf(buf + k, len - k, "%s%" PRId64, sep, g->stride[s]);
            else if (p == 1)
                k += (size_t)snprintf(buf + k, len - k, "%s[%" PRId64 ", %" PRId64 "]", sep, g->pad_lo[s],
                                      g->pad_hi[s]);
            else
                k += (size_t)snprintf(buf + k, len - k, "%s%" PRId64, sep, g->dilation[s]);
        }
    }
    if (k < len)
        snprintf(buf + k, len - k, "]");
    return buf;
}

bool conv_check_ranks(op_infer_ctx *c, const char *aname, const tinfo *a, const char *bname, const tinfo *b)
{
    char as[256], bs[256];
    shape_str(as, sizeof as, a->rank, a->dims);
    shape_str(bs, sizeof bs, b->rank, b->dims);
    if (a->rank < 3 || a->rank > 2 + CONV_MAX_SPATIAL) {
        op_error(c, "%s must have rank 3 to 5 ([N, C, W], [N, C, H, W] or [N, C, D, H, W]), got rank %d: %s is %s",
                 aname, a->rank, aname, as);
        return false;
    }
    if (b->rank != a->rank) {
        op_error(c, "%s must have the same rank as %s (%d), got rank %d: %s is %s, %s is %s", bname, aname, a->rank,
                 b->rank, aname, as, bname, bs);
        return false;
    }
    return true;
}

bool conv_check(op_infer_ctx *c, const char *xname, const int64_t *xdims, const char *wname,
                const int64_t *wdims, int rank, conv_geom *g, int64_t *ydims)
{
    char xs[256], ws[256];
    shape_str(xs, sizeof xs, rank, xdims);
    shape_str(ws, sizeof ws, rank, wdims);
    int64_t groups = op_attr_int(c->node, c->desc, "groups");
    int64_t C = xdims[1], K = wdims[0];
    if (groups < 1) {
        op_error(c, "attribute 'groups' must be >= 1, got %" PRId64, groups);
        return false;
    }
    if (C % groups != 0) {
        op_error(c, "attribute 'groups' = %" PRId64 " must divide the input channels C = %" PRId64 " (%s is %s)",
                 groups, C, xname, xs);
        return false;
    }
    if (K % groups != 0) {
        op_error(c, "attribute 'groups' = %" PRId64 " must divide the output channels K = %" PRId64 " (%s is %s)",
                 groups, K, wname, ws);
        return false;
    }
    if (wdims[1] != C / groups) {
        op_error(c, "%s's channel dim (dim 1) must be C/groups = %" PRId64 "/%" PRId64 " = %" PRId64
                    ", got %" PRId64 " (%s is %s, %s is %s)",
                 wname, C, groups, C / groups, wdims[1], xname, xs, wname, ws);
        return false;
    }
    char err[512];
    if (!conv_geom_init(g, c->node, c->desc, rank - 2, xdims + 2, wdims + 2, "stride", NULL, "dilation", "pad",
                        false, err, sizeof err)) {
        op_error(c, "%s (%s is %s, %s is %s)", err, xname, xs, wname, ws);
        return false;
    }
    ydims[0] = xdims[0];
    ydims[1] = K;
    for (int i = 0; i < g->nsp; i++)
        ydims[2 + i] = g->out[g->first + i];
    return true;
}

bool conv_ref_geom(op_ref_ctx *c, const int64_t *xdims, const int64_t *wdims, int rank, conv_geom *g)
{
    char err[512];
    if (conv_geom_init(g, c->node, c->desc, rank - 2, xdims + 2, wdims + 2, "stride", NULL, "dilation", "pad",
                       false, err, sizeof err))
        return true;
    op_ref_error(c, XDNN_ERR_INTERNAL, "%s", err);
    return false;
}

void conv_dims5(const ref_tensor *t, int64_t *d5)
{
    int nsp = t->rank - 2;
    d5[0] = t->dims[0];
    d5[1] = t->dims[1];
    for (int s = 0; s < CONV_MAX_SPATIAL; s++)
        d5[2 + s] = 1;
    for (int i = 0; i < nsp && i < CONV_MAX_SPATIAL; i++)
        d5[2 + CONV_MAX_SPATIAL - nsp + i] = t->dims[2 + i];
}
