/* eng_xent.c — xent_direct: cross_entropy and cross_entropy_bwd on the GPU
 * (kernels/xent.cu), checked against src/ops/xent.c by
 * tests/gpu/difftest_index.c.  One warp per row of logits; the "mean" and
 * "sum" reductions add the per-row losses in a fixed order (the same bits on
 * every run).  Packed row-major tensors; logits f32/f16/bf16/f64, targets
 * i8/i32/i64.  A target outside [0, C) that is not ignore_index gives NaN
 * where the CPU reference refuses (kern_index.h). */
#include "gpu/eng_index.h"
#include "gpu/kern_index.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct xent_priv {
    kxe_params kp;
    int x, t, dy, y;  /* tensor ids (dy: -1 forward) */
    char detail[96];
} xent_priv;

static bool xent_analyze(const gplan *pl, const gpart *p, xent_priv *q, char *why, size_t len)
{
    memset(q, 0, sizeof *q);
    static const int ops[] = {OP_cross_entropy, OP_cross_entropy_bwd};
    const gnode *n = gpu_ix_lone_node(pl, p, ops, 2, "cross_entropy and cross_entropy_bwd", why, len);
    if (!n)
        return false;
    const ggraph *g = pl->g;
    const op_desc *d = op_get(n->op_id);
    kxe_params *k = &q->kp;
    k->bwd = n->op_id == OP_cross_entropy_bwd;
    int base = k->bwd ? 1 : 0;
    if (n->nin < base + 2 || n->in[base] < 0 || n->in[base + 1] < 0 || (k->bwd && n->in[0] < 0))
        GPU_REFUSE("%s: node %s lacks an operand", n->op, n->name);
    q->dy = k->bwd ? n->in[0] : -1;
    q->x = n->in[base];
    q->t = n->in[base + 1];
    q->y = n->out;
    const gtensor *x = &g->t[q->x], *t = &g->t[q->t], *y = &g->t[q->y], *dy = q->dy >= 0 ? &g->t[q->dy] : NULL;
    const gtensor *all[4] = {x, t, y, dy};
    for (int i = 0; i < 4; i++) {
        if (all[i] && all[i]->is_scalar)
            GPU_REFUSE("%s: operand '%s' is a scalar; expected a tensor", n->op, all[i]->name);
        if (all[i] && !gpu_ix_packed(all[i], why, len))
            return false;
    }
    if (!gpu_ix_float(x->dtype) || !gpu_ix_float(y->dtype) || (dy && !gpu_ix_float(dy->dtype)))
        GPU_REFUSE("%s: logits, dy and the result must be f32, f16, bf16 or f64, got %s -> %s", n->op,
             xdnn_dtype_name(x->dtype), xdnn_dtype_name(y->dtype));
    if (!gpu_ix_int(t->dtype))
        GPU_REFUSE("%s: target '%s' has dtype %s (expected i8, i32 or i64)", n->op, t->name, xdnn_dtype_name(t->dtype));
    const char *red = op_attr_str(n->ir, d, "reduction");
    k->reduction = red && strcmp(red, "none") == 0 ? KXE_NONE : red && strcmp(red, "sum") == 0 ? KXE_SUM : KXE_MEAN;
    k->ignore_index = op_attr_int(n->ir, d, "ignore_index");
    k->label_smoothing = (float)op_attr_float(n->ir, d, "label_smoothing");
    k->C = x->rank ? x->dims[x->rank - 1] : 1;
    k->R = t->numel;
    if (k->R * k->C != x->numel)
        GPU_REFUSE("%s: logits has %lld elements, expected %lld rows of %lld", n->op, (long long)x->numel, (long long)k->R,
             (long long)k->C);
    k->xdt = (int)x->dtype;
    k->tdt = (int)t->dtype;
    k->ydt = (int)y->dtype;
    k->dydt = dy ? (int)dy->dtype : 0;
    static const char *const reds[] = {"none", "mean", "sum"};
    snprintf(q->detail, sizeof q->detail, "%s, %lld rows of %lld, reduction %s, warp per row",
             k->bwd ? "backward" : "forward", (long long)k->R, (long long)k->C, reds[k->reduction]);
    return true;
}

static bool xent_supports(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    xent_priv q;
    return xent_analyze(pl, p, &q, why, len);
}

static double xent_cost(const gplan *pl, const gpart *p, const gpu_device *dev) { return gpu_roofline_us(p, 20.0); }

static size_t xent_workspace(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    xent_priv q;
    char why[256];
    return xent_analyze(pl, p, &q, why, sizeof why) ? kxe_ws_bytes(q.kp.R) : 0;
}

static xdnn_status xent_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d)
{
    xent_priv *q = calloc(1, sizeof *q);
    if (!q)
        return XDNN_ERR_NOMEM;
    p->priv = q;
    char why[512];
    if (!xent_analyze(c->plan, p, q, why, sizeof why)) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), "xent_direct: %s: %s", p->name, why);
        return XDNN_ERR_UNSUPPORTED;
    }
    return XDNN_OK;
}

static xdnn_status xent_execute(gpu_ctx *c, gpart *p, cudaStream_t s, xdnn_diags_t *d)
{
    const xent_priv *q = p->priv;
    kxe_params k = q->kp;
    k.x = c->dptr[q->x];
    k.t = c->dptr[q->t];
    k.dy = q->dy >= 0 ? c->dptr[q->dy] : NULL;
    k.y = c->dptr[q->y];
    k.ws = c->ws + p->ws_offset;
    return gpu_check_cuda((cudaError_t)kxe_launch(&k, s), "kxe_launch", __FILE__, __LINE__, d);
}

static void xent_release(gpart *p)
{
    free(p->priv);
    p->priv = NULL;
}

static const char *xent_detail(const gpart *p)
{
    const xent_priv *q = p->priv;
    return q ? q->detail : "";
}

const gpu_engine gpu_engine_xent_direct = {
    "xent_direct", "cross_entropy fwd/bwd: warp per row, fixed-order reductions (deterministic), ignore_index, smoothing",
    xent_supports, xent_cost, xent_workspace, xent_build, xent_execute, xent_release, xent_detail,
};
