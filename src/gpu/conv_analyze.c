/* conv_analyze.c — from a conv / pooling partition to the kernel parameter
 * blocks (see conv_analyze.h).  The geometry comes from conv_geom_init, the
 * same function the CPU reference uses, so pads ("same", asymmetric),
 * stride defaults and ceil_mode cannot drift between the two backends. */
#include "gpu/conv_analyze.h"

#include "gpu/conv_epi.h"
#include "gpu/conv_pack.h"

#include "ops/conv_util.h"
#include "ops/op.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
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
void gpu_conv_strides5(const gtensor *t, int64_t *s5)
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
static const gnode *single_node(const gplan *pl, const gpart *p, const int *ops, int nops, const char *family,
                                char *why, size_t len)
{
    if (p->nnodes != 1) {
        snprintf(why, len, "needs a lone %s node, got partition %s of %d nodes", family, p->name, p->nnodes);
        return NULL;
    }
    const gnode *n = &pl->g->n[p->nodes[0]];
    for (int i = 0; i < nops; i++)
        if (n->op_id == ops[i]) {
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

/* A forward conv's partition with its epilogue chain, or a conv_dgrad's
 * with its relu_bwd mask (conv_epi.h): the conv node, the steps in cp->epi,
 * the chain's last result in *last. */
static const gnode *conv_with_epilogue(const gplan *pl, const gpart *p, gconv_problem *cp, int *last, char *why,
                                       size_t len)
{
    const ggraph *g = pl->g;
    const bool dgrad = p->anchor >= 0 && gconv_dgrad_epi_anchor(g, p->anchor);
    if (p->anchor < 0 || (!dgrad && !gconv_epi_anchor(g, p->anchor)) || (dgrad && p->nnodes != 2)) {
        snprintf(why, len, "needs a lone conv node, a conv with its epilogue or a conv_dgrad with its relu_bwd, "
                 "got partition %s of %d nodes", p->name, p->nnodes);
        return NULL;
    }
    int cur = g->n[p->anchor].out;
    for (int i = 0; i < p->nnodes; i++) {
        const int k = p->nodes[i];
        if (k == p->anchor)
            continue;
        kepi_step st;
        int t = -1;
        if (cp->epi.n == KEPI_MAX || (dgrad ? !gconv_dgrad_epi_step(g, k, cur, &st, &t, why, len)
                                            : !gconv_epi_step(g, k, cur, &st, &t, why, len))) {
            if (cp->epi.n == KEPI_MAX)
                snprintf(why, len, "conv epilogue of partition %s has more than %d steps", p->name, KEPI_MAX);
            return NULL;
        }
        if (st.op >= 0) {
            cp->epi_t[cp->epi.n] = t;
            cp->epi.s[cp->epi.n++] = st;
        }
        cur = g->n[k].out;
    }
    *last = cur;
    return &g->n[p->anchor];
}

bool gpu_conv_analyze(const gplan *pl, const gpart *p, gconv_problem *cp, char *why, size_t len)
{
    static const int ops[] = {OP_conv, OP_conv_dgrad, OP_conv_wgrad};
    memset(cp, 0, sizeof *cp);
    const ggraph *g = pl->g;
    int last = -1;
    const gnode *n = p->nnodes == 1 ? single_node(pl, p, ops, 3, "conv", why, len)
                                    : conv_with_epilogue(pl, p, cp, &last, why, len);
    if (!n)
        return false;
    cp->node = n;
    cp->dir = n->op_id == OP_conv ? GCONV_FWD : n->op_id == OP_conv_dgrad ? GCONV_DGRAD : GCONV_WGRAD;
    if (n->nin < 2 || n->in[0] < 0 || n->in[1] < 0 || n->out < 0) {
        snprintf(why, len, "%s: node %s needs two tensor operands and a result", n->op, n->name);
        return false;
    }
    /* roles: fwd (x, w) -> y; dgrad (dy, w) -> dx; wgrad (dy, x) -> dw */
    switch (cp->dir) {
    case GCONV_FWD: cp->x = n->in[0], cp->w = n->in[1], cp->y = last >= 0 ? last : n->out; break;
    case GCONV_DGRAD: cp->y = n->in[0], cp->w = n->in[1], cp->x = last >= 0 ? last : n->out; break;
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
    gpu_conv_strides5(x, k->sx);
    gpu_conv_strides5(w, k->sw);
    gpu_conv_strides5(y, k->sy);
    return true;
}

void gpu_conv_epi_bind(const gconv_problem *cp, void *const *dptr, kconv_epi *out)
{
    *out = cp->epi;
    for (int i = 0; i < out->n; i++)
        out->s[i].t = cp->epi_t[i] >= 0 ? dptr[cp->epi_t[i]] : NULL;
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

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* dx[i] = sum_r dy[(i + pad - r*dil) / s] w[r] over the r where the division
 * is exact.  For i = s*a + phi the valid r are r0 + t*rstep (rstep =
 * s/gcd(s, dil)) with dy index a + t0 - t*D (D = dil/gcd, t0 =
 * (phi + pad - r0*dil)/s); flipping t' = taps-1-t gives the forward conv
 * dx_phi[a] = sum_t' dy[a - pad' + t'*D] wt[t'], pad' = (taps-1)*D - t0. */
int gpu_conv_dgrad_phases(const gconv_problem *cp, gconv_phase *ph, int max, char *why, size_t len)
{
    const kconv_params *k = &cp->kp;
    if (cp->dir != GCONV_DGRAD || k->G != 1) {
        snprintf(why, len, "conv_igemm runs conv_dgrad only with groups 1, got groups=%" PRId64, k->G);
        return -1;
    }
    const int64_t nph = k->stride[0] * k->stride[1] * k->stride[2];
    if (nph > max) {
        snprintf(why, len, "conv_igemm runs conv_dgrad with at most %d stride phases, got stride [%" PRId64
                           ", %" PRId64 ", %" PRId64 "]", max, k->stride[0], k->stride[1], k->stride[2]);
        return -1;
    }
    int64_t wt_off = 0;
    for (int64_t pi = 0; pi < nph; pi++) {
        gconv_phase *q = &ph[pi];
        memset(q, 0, sizeof *q);
        kconv_params *f = &q->f;
        f->dt_x = k->dt_y;
        f->dt_w = k->dt_y; /* the packed copy is written in dy's type */
        f->dt_y = k->dt_x;
        f->N = k->N;
        f->C = k->K;
        f->K = k->C;
        f->G = 1;
        int64_t rest = pi, phi[KCONV_SP];
        for (int d = KCONV_SP - 1; d >= 0; d--) {
            phi[d] = rest % k->stride[d];
            rest /= k->stride[d];
        }
        int64_t ntaps = 1;
        for (int d = 0; d < KCONV_SP; d++) {
            const int64_t s = k->stride[d], dil = k->dil[d], g = gcd64(s, dil);
            q->rstep[d] = s / g;
            q->r0[d] = -1;
            for (int64_t r = 0; r < k->win[d] && q->r0[d] < 0; r++)
                if (((phi[d] + k->pad[d] - r * dil) % s + s) % s == 0)
                    q->r0[d] = r;
            q->taps[d] = q->r0[d] < 0 ? 0 : (k->win[d] - 1 - q->r0[d]) / q->rstep[d] + 1;
            ntaps *= q->taps[d];
            const int64_t D = dil / g, t0 = q->r0[d] < 0 ? 0 : (phi[d] + k->pad[d] - q->r0[d] * dil) / s;
            f->in[d] = k->out[d];
            f->out[d] = k->in[d] > phi[d] ? (k->in[d] - phi[d] + s - 1) / s : 0;
            f->win[d] = q->taps[d] > 0 ? q->taps[d] : 1;
            f->stride[d] = 1;
            f->dil[d] = D;
            f->pad[d] = (f->win[d] - 1) * D - t0;
            f->sy[2 + d] = k->sx[2 + d] * s;
            f->sx[2 + d] = k->sy[2 + d];
            q->dx_off += phi[d] * k->sx[2 + d];
            if (f->out[d] == 0)
                q->none = true;
        }
        q->empty = ntaps == 0;
        f->sx[0] = k->sy[0];
        f->sx[1] = k->sy[1];
        f->sy[0] = k->sx[0];
        f->sy[1] = k->sx[1];
        /* packed [C][taps0][taps1][taps2][K] viewed as [K' = C, C' = K, taps...] */
        const int64_t T0 = f->win[0], T1 = f->win[1], T2 = f->win[2];
        const int64_t sw[5] = {T0 * T1 * T2 * k->K, 1, T1 * T2 * k->K, T2 * k->K, k->K};
        memcpy(f->sw, sw, sizeof sw);
        q->wt_off = wt_off;
        if (!q->empty)
            wt_off += ntaps * k->K * k->C;
    }
    return (int)nph;
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
    const int64_t xs[4] = {k->sx[0], k->sx[2], k->sx[3], k->sx[4]}, ws[4] = {k->sw[0], k->sw[2], k->sw[3], k->sw[4]};
    for (int i = 0; i < 4; i++) {
        if (xs[i] % vec || ws[i] % vec) {
            snprintf(why, len, "conv_igemm needs x and w strides that are multiples of %" PRId64
                               " elements (16-byte rows), got x %" PRId64 ", w %" PRId64, vec, xs[i], ws[i]);
            return false;
        }
    }
    const int64_t m = k->N * k->out[0] * k->out[1] * k->out[2], red = k->C * k->win[0] * k->win[1] * k->win[2];
    const int64_t big = (int64_t)1 << 31;
    if (m >= big || red >= big) {
        snprintf(why, len, "conv_igemm needs N*out and taps*C < 2^31, got %" PRId64 " and %" PRId64, m, red);
        return false;
    }
    return true;
}

static bool spans_ok(const ggraph *g, const gconv_problem *cp, const char *eng, char *why, size_t len)
{
    const int ids[3] = {cp->x, cp->w, cp->y};
    for (int i = 0; i < 3; i++) {
        if (span_elems(&g->t[ids[i]]) >= ((int64_t)1 << 31)) {
            snprintf(why, len, "%s needs tensors spanning < 2^31 elements, %s spans %" PRId64, eng,
                     g->t[ids[i]].name, span_elems(&g->t[ids[i]]));
            return false;
        }
    }
    return true;
}

bool gpu_conv_igemm_packed(const gconv_problem *cp, bool tf32, kconv_params *pk, size_t *xbytes, size_t *wbytes)
{
    const kconv_params *k = &cp->kp;
    char why[256];
    gconv_packed q;
    if (cp->dir != GCONV_FWD || k->G != 1 || igemm_params_ok(k, tf32, why, sizeof why) ||
        !gpu_conv_pack_plan(k, k->dt_x == KDT_F32 ? 4 : 8, &q) || !igemm_params_ok(&q.k, tf32, why, sizeof why))
        return false;
    *pk = q.k;
    *xbytes = q.xbytes;
    *wbytes = q.wbytes;
    return true;
}

bool gpu_conv_igemm_check(const ggraph *g, const gconv_problem *cp, bool tf32, char *why, size_t len)
{
    if (cp->dir == GCONV_WGRAD) {
        snprintf(why, len, "conv_igemm runs conv and conv_dgrad, not %s", cp->node->op);
        return false;
    }
    if (cp->dir == GCONV_DGRAD) {
        gconv_phase ph[GCONV_MAX_PHASES];
        int n = gpu_conv_dgrad_phases(cp, ph, GCONV_MAX_PHASES, why, len);
        if (n < 0)
            return false;
        for (int i = 0; i < n; i++)
            if (!ph[i].empty && !ph[i].none && !igemm_params_ok(&ph[i].f, tf32, why, len))
                return false;
        /* with every phase empty or none the rules still hold for dy and w */
        if (!igemm_params_ok(&ph[0].f, tf32, why, len))
            return false;
    } else if (!igemm_params_ok(&cp->kp, tf32, why, len)) {
        kconv_params pk;
        size_t xb, wb;
        if (!gpu_conv_igemm_packed(cp, tf32, &pk, &xb, &wb))
            return false; /* why: the kernel's own rule on the conv's tensors */
    }
    return spans_ok(g, cp, "conv_igemm", why, len);
}

bool gpu_conv_dw_check(const ggraph *g, const gconv_problem *cp, char *why, size_t len)
{
    const kconv_params *k = &cp->kp;
    if (cp->dir == GCONV_DGRAD && cp->epi.n) {
        snprintf(why, len, "conv_dw runs conv_dgrad without a fused epilogue, partition fuses %s's relu_bwd",
                 cp->node->name);
        return false;
    }
    if (k->G != k->C || k->K != k->C) {
        snprintf(why, len, "conv_dw needs depthwise groups == C == K, got groups=%" PRId64 ", C=%" PRId64
                           ", K=%" PRId64, k->G, k->C, k->K);
        return false;
    }
    if (k->sx[1] != 1 || k->sy[1] != 1) {
        snprintf(why, len, "conv_dw needs channel-contiguous (channels-last) x and y, got channel strides %" PRId64
                           " and %" PRId64, k->sx[1], k->sy[1]);
        return false;
    }
    if (k->dt_x != k->dt_y) {
        snprintf(why, len, "conv_dw needs x and y of one dtype, got %s and %s", kdt_name(k->dt_x), kdt_name(k->dt_y));
        return false;
    }
    const int64_t taps = k->win[0] * k->win[1] * k->win[2];
    if (cp->dir != GCONV_WGRAD && taps * 8 * 4 > KDW_SMEM_MAX) {
        snprintf(why, len, "conv_dw keeps the window in shared memory: at most %d taps, got %" PRId64,
                 KDW_SMEM_MAX / 32, taps);
        return false;
    }
    const int64_t strips = k->N * k->in[0] * k->in[1] * (k->in[2] > k->out[2] ? k->in[2] : k->out[2]);
    if (strips >= ((int64_t)1 << 31) || k->C >= ((int64_t)1 << 31) / 32)
        return snprintf(why, len, "conv_dw needs N*D*H*W < 2^31, got %" PRId64, strips), false;
    return spans_ok(g, cp, "conv_dw", why, len);
}

bool gpu_conv_wgrad_mma_check(const ggraph *g, const gconv_problem *cp, bool *vec, char *why, size_t len)
{
    const kconv_params *k = &cp->kp;
    if (cp->dir != GCONV_WGRAD) {
        snprintf(why, len, "conv_wgrad_mma runs conv_wgrad only, not %s", cp->node->op);
        return false;
    }
    if (k->G > 65535) {
        snprintf(why, len, "conv_wgrad_mma needs groups <= 65535, got %" PRId64, k->G);
        return false;
    }
    if (k->dt_x != k->dt_y || k->dt_x == KDT_F32) {
        snprintf(why, len, "conv_wgrad_mma needs dy and x both f16 or both bf16, got %s and %s", kdt_name(k->dt_y),
                 kdt_name(k->dt_x));
        return false;
    }
    const int64_t m = k->N * k->out[0] * k->out[1] * k->out[2];
    if (m >= ((int64_t)1 << 31) - 64) {
        snprintf(why, len, "conv_wgrad_mma needs N*out < 2^31, got %" PRId64, m);
        return false;
    }
    if (!spans_ok(g, cp, "conv_wgrad_mma", why, len))
        return false;
    const int64_t Kg = k->K / k->G, Cg = k->C / k->G;
    bool v = k->sx[1] == 1 && k->sy[1] == 1 && Kg % 8 == 0 && Cg % 8 == 0;
    for (int i = 0; i < 5; i++)
        if (i != 1 && (k->sx[i] % 8 || k->sy[i] % 8))
            v = false;
    *vec = v;
    return true;
}

int gpu_conv_split_k(int64_t kt, int64_t tiles, int per_sm, int64_t min_slices, int sm_count)
{
    const int64_t sms = sm_count > 0 ? sm_count : 132;
    int64_t s = 1;
    const char *env = getenv("XDNN_CONV_SPLITK");
    if (env && *env) {
        s = strtol(env, NULL, 10);
    } else if (tiles < sms) {
        /* fewer CTAs than SMs leaves SMs idle: fill per_sm CTAs on each */
        s = per_sm * sms / tiles;
        if (s > kt / min_slices)
            s = kt / min_slices;
        if (s > 16)
            s = 16;
    }
    if (s > kt)
        s = kt;
    if (s <= 1)
        return 1;
    const int64_t per = (kt + s - 1) / s;
    return (int)((kt + per - 1) / per);
}

int gpu_conv_igemm_splits(const kconv_params *f, int sm_count)
{
    const int64_t M = f->N * f->out[0] * f->out[1] * f->out[2];
    const int64_t bk = f->dt_x == KDT_F32 ? KIG_BK32 : KIG_BK16, bn = f->K <= KIG_BN_SMALL ? KIG_BN_SMALL : KIG_BN;
    const int64_t kt = (f->C * f->win[0] * f->win[1] * f->win[2] + bk - 1) / bk;
    const int64_t ctas = ((M + KIG_BM - 1) / KIG_BM) * ((f->K + bn - 1) / bn);
    /* 2 CTAs per SM fit (kern_conv.h), each split at least 8 slices */
    return gpu_conv_split_k(kt, ctas, 2, 8, sm_count);
}

size_t gpu_conv_igemm_split_ws_bytes(const kconv_params *f, int splits)
{
    if (splits <= 1)
        return 0;
    const size_t bytes = (size_t)splits * (size_t)(f->N * f->out[0] * f->out[1] * f->out[2]) * (size_t)f->K * 4;
    return (bytes + 255) / 256 * 256;
}

/* The kernel's tiles (kernels/conv_wgrad_mma.cu): k 64 or 128, j 128, m 32. */
int gpu_conv_wgrad_mma_splits(const kconv_params *k, int sm_count)
{
    const int64_t Kg = k->K / k->G, J = (k->C / k->G) * k->win[0] * k->win[1] * k->win[2];
    const int64_t bm = Kg <= 64 ? 64 : 128;
    const int64_t tiles = k->G * ((Kg + bm - 1) / bm) * ((J + 127) / 128);
    const int64_t steps = (k->N * k->out[0] * k->out[1] * k->out[2] + 31) / 32;
    int64_t s = 2 * (int64_t)(sm_count > 0 ? sm_count : 132) / tiles;
    if (s > steps / 8)
        s = steps / 8;
    if (s > 65535 / k->G)
        s = 65535 / k->G;
    if (s > 1024)
        s = 1024;
    return s < 1 ? 1 : (int)s;
}

size_t gpu_conv_wgrad_mma_ws_bytes(const kconv_params *k, int sm_count)
{
    const int64_t J = (k->C / k->G) * k->win[0] * k->win[1] * k->win[2];
    size_t bytes = (size_t)gpu_conv_wgrad_mma_splits(k, sm_count) * (size_t)(k->K * J) * sizeof(float);
    return (bytes + 255) / 256 * 256;
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
    static const int ops[] = {OP_maxpool, OP_avgpool, OP_maxpool_bwd, OP_avgpool_bwd};
    memset(pp, 0, sizeof *pp);
    const ggraph *g = pl->g;
    const gnode *n = single_node(pl, p, ops, 4, "pooling", why, len);
    if (!n)
        return false;
    pp->node = n;
    pp->bwd = n->op_id == OP_maxpool_bwd || n->op_id == OP_avgpool_bwd;
    bool is_max = n->op_id == OP_maxpool || n->op_id == OP_maxpool_bwd;
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
    gpu_conv_strides5(x, k->sx);
    gpu_conv_strides5(y, k->sy);
    if (pp->bwd)
        gpu_conv_strides5(&g->t[pp->dx], k->sdx);
    return true;
}

double gpu_conv_1x1_floor_us(const gconv_problem *cp)
{
    const kconv_params *k = &cp->kp;
    const bool one = k->win[0] == 1 && k->win[1] == 1 && k->win[2] == 1;
    const bool unit = k->stride[0] == 1 && k->stride[1] == 1 && k->stride[2] == 1;
    if (!one || cp->dir == GCONV_WGRAD || (cp->dir == GCONV_DGRAD && !unit) ||
        (k->dt_x != KDT_F16 && k->dt_x != KDT_BF16))
        return 0.0;
    const bool dg = cp->dir == GCONV_DGRAD;
    const double pix = dg ? (double)(k->N * k->in[0] * k->in[1] * k->in[2])
                          : (double)(k->N * k->out[0] * k->out[1] * k->out[2]);
    const double outs = pix * (double)(dg ? k->C : k->K), red = (double)(dg ? k->K : k->C);
    return outs * (2.13e-6 + red * 7.25e-9);
}
