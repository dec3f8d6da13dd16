/* conv_analyze.c — from a conv / pooling partition to the kernel parameter
 * blocks (see conv_analyze.h).  The geometry comes from conv_geom_init, the
 * same function the CPU reference uses, so pads ("same", asymmetric),
 * stride defaults and ceil_mode cannot drift between the two backends. */
#include "gpu/conv_analyze.h"

#include "ops/conv_util.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int gpu_kdt(xdnn_dtype t)
{
    switch (t) {
    case XDNN_F32: return KDT_F32;
    case XDNN_F16: return KDT_F16;
    case XDNN_BF16: return KDT_BF16;
    default: return -1;
    }
}

/* Strides of a rank 3..5 tensor in the 5-slot view (leading slots stride 0). */
static void strides5(const gtensor *t, int64_t *s5)
{
    int nsp = t->rank - 2;
    s5[0] = t->strides[0];
    s5[1] = t->strides[1];
    for (int s = 0; s < CONV_MAX_SPATIAL; s++)
        s5[2 + s] = 0;
    for (int i = 0; i < nsp; i++)
        s5[2 + CONV_MAX_SPATIAL - nsp + i] = t->strides[2 + i];
}

/* The lone node of p, if p is a GP_SINGLE partition of one of `ops`. */
static const gnode *single_node(const gplan *pl, const gpart *p, const char *const *ops, int nops, const char *family,
                                char *why, size_t len)
{
    if (p->nnodes != 1) {
        snprintf(why, len, "needs a lone %s node, got partition %s of %d nodes", family, p->name, p->nnodes);
        return NULL;
    }
    const gnode *n = &pl->g->n[p->nodes[0]];
    for (int i = 0; i < nops; i++)
        if (strcmp(n->op, ops[i]) == 0) {
            if (!n->ir) {
                snprintf(why, len, "%s node %s has no IR node (attributes unknown)", n->op, n->name);
                return NULL;
            }
            return n;
        }
    snprintf(why, len, "runs %s ops only, not %s", family, n->op);
    return NULL;
}

static bool dtype_ok(const gnode *n, const char *role, const gtensor *t, char *why, size_t len)
{
    if (gpu_kdt(t->dtype) >= 0)
        return true;
    snprintf(why, len, "%s: %s '%s' has dtype %s (expected f32, f16 or bf16)", n->op, role, t->name,
             gg_dtype_name(t->dtype));
    return false;
}

static void copy_geom(const conv_geom *g, int64_t *in, int64_t *win, int64_t *out, int64_t *stride, int64_t *dil,
                      int64_t *pad_lo, int64_t *pad_hi)
{
    for (int s = 0; s < CONV_MAX_SPATIAL; s++) {
        in[s] = g->in[s];
        win[s] = g->win[s];
        out[s] = g->out[s];
        stride[s] = g->stride[s];
        dil[s] = g->dilation[s];
        pad_lo[s] = g->pad_lo[s];
        if (pad_hi)
            pad_hi[s] = g->pad_hi[s];
    }
}

bool gpu_conv_analyze(const gplan *pl, const gpart *p, gconv_problem *cp, char *why, size_t len)
{
    static const char *const ops[] = {"conv", "conv_dgrad", "conv_wgrad"};
    memset(cp, 0, sizeof *cp);
    const ggraph *g = pl->g;
    const gnode *n = single_node(pl, p, ops, 3, "conv", why, len);
    if (!n)
        return false;
    cp->node = n;
    cp->dir = strcmp(n->op, "conv") == 0 ? GCONV_FWD : strcmp(n->op, "conv_dgrad") == 0 ? GCONV_DGRAD : GCONV_WGRAD;
    if (n->nin < 2 || n->in[0] < 0 || n->in[1] < 0 || n->out < 0) {
        snprintf(why, len, "%s: node %s needs two tensor operands and a result", n->op, n->name);
        return false;
    }
    /* roles: fwd (x, w) -> y; dgrad (dy, w) -> dx; wgrad (dy, x) -> dw */
    switch (cp->dir) {
    case GCONV_FWD: cp->x = n->in[0], cp->w = n->in[1], cp->y = n->out; break;
    case GCONV_DGRAD: cp->y = n->in[0], cp->w = n->in[1], cp->x = n->out; break;
    case GCONV_WGRAD: cp->y = n->in[0], cp->x = n->in[1], cp->w = n->out; break;
    }
    const gtensor *x = &g->t[cp->x], *w = &g->t[cp->w], *y = &g->t[cp->y];
    static const char *const names[3][3] = {{"input x", "input w", "result y"},
                                            {"result dx", "input w", "input dy"},
                                            {"input x", "result dw", "input dy"}};
    if (!dtype_ok(n, names[cp->dir][0], x, why, len) || !dtype_ok(n, names[cp->dir][1], w, why, len) ||
        !dtype_ok(n, names[cp->dir][2], y, why, len))
        return false;
    if (x->rank < 3 || x->rank > 5 || w->rank != x->rank || y->rank != x->rank) {
        snprintf(why, len, "%s: ranks must be equal and 3..5, got x %d, w %d, y %d", n->op, x->rank, w->rank, y->rank);
        return false;
    }
    const op_desc *desc = op_get(n->ir->op);
    int nsp = x->rank - 2;
    conv_geom geo;
    char err[384];
    if (!conv_geom_init(&geo, n->ir, desc, nsp, x->dims + 2, w->dims + 2, "stride", NULL, "dilation", "pad", false,
                        err, sizeof err)) {
        snprintf(why, len, "%s: %s", n->op, err);
        return false;
    }
    int64_t groups = op_attr_int(n->ir, desc, "groups");
    if (groups < 1 || x->dims[1] % groups || w->dims[0] % groups || w->dims[1] * groups != x->dims[1]) {
        snprintf(why, len, "%s: attribute 'groups' = %" PRId64 " does not fit C = %" PRId64 ", K = %" PRId64, n->op,
                 groups, x->dims[1], w->dims[0]);
        return false;
    }
    for (int i = 0; i < nsp; i++) {
        if (geo.out[geo.first + i] != y->dims[2 + i]) {
            snprintf(why, len, "%s: output size along %s is %" PRId64 " by the geometry but %" PRId64 " in %s", n->op,
                     conv_dim_name(nsp, i), geo.out[geo.first + i], y->dims[2 + i], y->name);
            return false;
        }
    }
    cp->nsp = nsp;
    kconv_params *k = &cp->kp;
    k->dt_x = gpu_kdt(x->dtype);
    k->dt_w = gpu_kdt(w->dtype);
    k->dt_y = gpu_kdt(y->dtype);
    k->N = x->dims[0];
    k->C = x->dims[1];
    k->K = w->dims[0];
    k->G = groups;
    int64_t unused[CONV_MAX_SPATIAL];
    copy_geom(&geo, k->in, k->win, k->out, k->stride, k->dil, k->pad, unused);
    strides5(x, k->sx);
    strides5(w, k->sw);
    strides5(y, k->sy);
    return true;
}

/* Largest element offset a tensor reaches, +1. */
static int64_t span_elems(const gtensor *t)
{
    int64_t s = 1;
    for (int i = 0; i < t->rank; i++)
        s += (t->dims[i] - 1) * t->strides[i];
    return s;
}

static const char *kdt_name(int dt) { return dt == KDT_F32 ? "f32" : dt == KDT_F16 ? "f16" : "bf16"; }

bool gpu_conv_dgrad_as_fwd(const gconv_problem *cp, kconv_params *f, char *why, size_t len)
{
    const kconv_params *k = &cp->kp;
    if (cp->dir != GCONV_DGRAD || cp->nsp != 2 || k->G != 1) {
        snprintf(why, len, "conv_igemm runs conv_dgrad only in 2-D with groups 1, got %d-D groups=%" PRId64, cp->nsp,
                 k->G);
        return false;
    }
    if (k->stride[1] != 1 || k->stride[2] != 1) {
        snprintf(why, len, "conv_igemm runs conv_dgrad only with stride 1, got stride [%" PRId64 ", %" PRId64 "]",
                 k->stride[1], k->stride[2]);
        return false;
    }
    /* dx[h] = sum_r dy[h + pad - r*dil] w[r] = sum_r' dy[h - pad' + r'*dil] wt[r']
     * with r' = R-1-r and pad' = dil*(R-1) - pad: a stride-1 forward conv. */
    memset(f, 0, sizeof *f);
    f->dt_x = k->dt_y;
    f->dt_w = k->dt_y; /* the flipped copy is written in dy's type */
    f->dt_y = k->dt_x;
    f->N = k->N;
    f->C = k->K;
    f->K = k->C;
    f->G = 1;
    for (int s = 0; s < KCONV_SP; s++) {
        f->in[s] = k->out[s];
        f->out[s] = k->in[s];
        f->win[s] = k->win[s];
        f->stride[s] = 1;
        f->dil[s] = k->dil[s];
        f->pad[s] = k->dil[s] * (k->win[s] - 1) - k->pad[s];
    }
    memcpy(f->sx, k->sy, sizeof f->sx);
    memcpy(f->sy, k->sx, sizeof f->sy);
    /* wt packed [C][R][S][K] viewed as [K' = C, C' = K, 1, R, S] */
    const int64_t R = k->win[1], S = k->win[2];
    const int64_t sw[5] = {R * S * k->K, 1, 0, S * k->K, k->K};
    memcpy(f->sw, sw, sizeof sw);
    return true;
}

/* The kernel's rules on a forward problem (its own or a dgrad's). */
static bool igemm_params_ok(const kconv_params *k, bool tf32, char *why, size_t len)
{
    if (k->G != 1) {
        snprintf(why, len, "conv_igemm needs groups == 1, got groups=%" PRId64, k->G);
        return false;
    }
    if (k->dt_x != k->dt_w) {
        snprintf(why, len, "conv_igemm needs x and w of one dtype, got %s and %s", kdt_name(k->dt_x),
                 kdt_name(k->dt_w));
        return false;
    }
    if (k->dt_x == KDT_F32 && !tf32) {
        snprintf(why, len, "conv_igemm runs f32 only as tf32, and the graph does not allow tf32 (tf32=false)");
        return false;
    }
    const int64_t vec = k->dt_x == KDT_F32 ? 4 : 8; /* elements per 16-byte chunk */
    if (k->C % vec) {
        snprintf(why, len, "conv_igemm needs C %% %" PRId64 " == 0, got C=%" PRId64, vec, k->C);
        return false;
    }
    if (k->sx[1] != 1 || k->sw[1] != 1) {
        snprintf(why, len, "conv_igemm needs channel-contiguous x and w (@nhwc), got channel strides x %" PRId64
                           ", w %" PRId64, k->sx[1], k->sw[1]);
        return false;
    }
    const int64_t xs[3] = {k->sx[0], k->sx[3], k->sx[4]}, ws[3] = {k->sw[0], k->sw[3], k->sw[4]};
    for (int i = 0; i < 3; i++) {
        if (xs[i] % vec || ws[i] % vec) {
            snprintf(why, len, "conv_igemm needs x and w strides that are multiples of %" PRId64
                               " elements (16-byte rows), got x %" PRId64 ", w %" PRId64, vec, xs[i], ws[i]);
            return false;
        }
    }
    int64_t m = k->N * k->out[1] * k->out[2];
    int64_t big = (int64_t)1 << 31;
    if (m >= big || k->C * k->win[1] * k->win[2] >= big) {
        snprintf(why, len, "conv_igemm needs N*P*Q and R*S*C < 2^31, got %" PRId64 " and %" PRId64, m,
                 k->C * k->win[1] * k->win[2]);
        return false;
    }
    return true;
}

bool gpu_conv_igemm_check(const ggraph *g, const gconv_problem *cp, bool tf32, char *why, size_t len)
{
    if (cp->dir == GCONV_WGRAD) {
        snprintf(why, len, "conv_igemm runs conv and stride-1 conv_dgrad, not %s", cp->node->op);
        return false;
    }
    if (cp->nsp != 2) {
        snprintf(why, len, "conv_igemm needs 2 spatial dims, got %d", cp->nsp);
        return false;
    }
    kconv_params f;
    if (cp->dir == GCONV_DGRAD) {
        if (!gpu_conv_dgrad_as_fwd(cp, &f, why, len))
            return false;
    } else {
        f = cp->kp;
    }
    if (!igemm_params_ok(&f, tf32, why, len))
        return false;
    const int ids[3] = {cp->x, cp->w, cp->y};
    for (int i = 0; i < 3; i++) {
        if (span_elems(&g->t[ids[i]]) >= ((int64_t)1 << 31)) {
            snprintf(why, len, "conv_igemm needs tensors spanning < 2^31 elements, %s spans %" PRId64,
                     g->t[ids[i]].name, span_elems(&g->t[ids[i]]));
            return false;
        }
    }
    return true;
}

int gpu_conv_wgrad_splits(const kconv_params *k)
{
    const int64_t J = k->C * k->win[0] * k->win[1] * k->win[2];
    const int64_t M = k->N * k->out[0] * k->out[1] * k->out[2];
    const int64_t tiles = ((k->K + 31) / 32) * ((J + 31) / 32);
    int64_t s = (2048 + tiles - 1) / tiles, most = M / (32 * 8);
    if (s > most)
        s = most;
    if (s > 256)
        s = 256;
    return s < 1 ? 1 : (int)s;
}

size_t gpu_conv_wgrad_ws_bytes(const kconv_params *k)
{
    const int64_t J = k->C * k->win[0] * k->win[1] * k->win[2];
    size_t bytes = (size_t)gpu_conv_wgrad_splits(k) * (size_t)(k->K * J) * sizeof(float);
    return (bytes + 255) / 256 * 256;
}

bool gpu_pool_analyze(const gplan *pl, const gpart *p, gpool_problem *pp, char *why, size_t len)
{
    static const char *const ops[] = {"maxpool", "avgpool", "maxpool_bwd", "avgpool_bwd"};
    memset(pp, 0, sizeof *pp);
    const ggraph *g = pl->g;
    const gnode *n = single_node(pl, p, ops, 4, "pooling", why, len);
    if (!n)
        return false;
    pp->node = n;
    pp->bwd = strstr(n->op, "_bwd") != NULL;
    bool is_max = strncmp(n->op, "max", 3) == 0;
    if (n->nin < (pp->bwd ? 2 : 1) || n->in[0] < 0 || (pp->bwd && n->in[1] < 0) || n->out < 0) {
        snprintf(why, len, "%s: node %s lacks a tensor operand or its result", n->op, n->name);
        return false;
    }
    if (pp->bwd) {
        pp->y = n->in[0];
        pp->x = n->in[1];
        pp->dx = n->out;
    } else {
        pp->x = n->in[0];
        pp->y = n->out;
        pp->dx = -1;
    }
    const gtensor *x = &g->t[pp->x], *y = &g->t[pp->y];
    if (!dtype_ok(n, "input x", x, why, len) || !dtype_ok(n, pp->bwd ? "input dy" : "result y", y, why, len) ||
        (pp->bwd && !dtype_ok(n, "result dx", &g->t[pp->dx], why, len)))
        return false;
    if (x->rank < 3 || x->rank > 5 || y->rank != x->rank) {
        snprintf(why, len, "%s: x and y need the same rank 3..5, got %d and %d", n->op, x->rank, y->rank);
        return false;
    }
    const op_desc *desc = op_get(n->ir->op);
    int nsp = x->rank - 2;
    int64_t win[CONV_MAX_SPATIAL];
    if (!op_attr_ints_n(n->ir, desc, "window", nsp, win)) {
        snprintf(why, len, "%s: attribute 'window' must be %d ints", n->op, nsp);
        return false;
    }
    conv_geom geo;
    char err[384];
    if (!conv_geom_init(&geo, n->ir, desc, nsp, x->dims + 2, win, "stride", win, is_max ? "dilation" : NULL, "pad",
                        op_attr_bool(n->ir, desc, "ceil_mode"), err, sizeof err)) {
        snprintf(why, len, "%s: %s", n->op, err);
        return false;
    }
    for (int i = 0; i < nsp; i++) {
        if (geo.out[geo.first + i] != y->dims[2 + i] || y->dims[0] != x->dims[0] || y->dims[1] != x->dims[1]) {
            snprintf(why, len, "%s: %s does not match the pooling geometry of x along %s", n->op, y->name,
                     conv_dim_name(nsp, i));
            return false;
        }
    }
    pp->nsp = nsp;
    kpool_params *k = &pp->kp;
    k->dt_x = gpu_kdt(x->dtype);
    k->dt_y = gpu_kdt(y->dtype);
    k->dt_dx = pp->bwd ? gpu_kdt(g->t[pp->dx].dtype) : KDT_F32;
    k->is_max = is_max;
    k->include_pad = !is_max && op_attr_bool(n->ir, desc, "include_pad");
    k->N = x->dims[0];
    k->C = x->dims[1];
    copy_geom(&geo, k->in, k->win, k->out, k->stride, k->dil, k->pad_lo, k->pad_hi);
    strides5(x, k->sx);
    strides5(y, k->sy);
    if (pp->bwd)
        strides5(&g->t[pp->dx], k->sdx);
    return true;
}
