/* eng_bn_var.c — bn_infer_var: batchnorm_infer_var on the GPU
 * (kernels/bn_infer_var.cu), checked against src/ops/norm_infer_var.c by
 * tests/gpu/difftest_index.c.  One thread per element; x [N, C, ...] and y
 * packed row-major (any float dtype), the four parameters per-channel
 * (C elements, packed) or one element each. */
#include "gpu/eng_index.h"
#include "gpu/kern_index.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct bv_priv {
    kbv_params kp;
    int x, p[4], y;   /* tensor ids */
    char detail[64];
} bv_priv;

static bool bv_analyze(const gplan *pl, const gpart *p, bv_priv *q, char *why, size_t len)
{
    memset(q, 0, sizeof *q);
    static const int ops[] = {OP_batchnorm_infer_var};
    const gnode *n = gpu_ix_lone_node(pl, p, ops, 1, "batchnorm_infer_var", why, len);
    if (!n)
        return false;
    const ggraph *g = pl->g;
    if (n->nin < 5)
        GPU_REFUSE("%s: node %s lacks an operand", n->op, n->name);
    q->x = n->in[0];
    q->y = n->out;
    const gtensor *x = &g->t[q->x], *y = &g->t[q->y];
    if (!gpu_ix_packed(x, why, len) || !gpu_ix_packed(y, why, len))
        return false;
    if (x->rank < 2 || !gpu_ix_float(x->dtype) || !gpu_ix_float(y->dtype))
        GPU_REFUSE("%s: x must be [N, C, ...] of f32, f16, bf16 or f64, got rank %d %s", n->op, x->rank,
             xdnn_dtype_name(x->dtype));
    kbv_params *k = &q->kp;
    k->N = x->dims[0];
    k->C = x->dims[1];
    k->S = x->numel / (k->N * k->C);
    for (int j = 0; j < 4; j++) {
        q->p[j] = n->in[1 + j];
        if (q->p[j] < 0)
            GPU_REFUSE("%s: node %s lacks an operand", n->op, n->name);
        const gtensor *t = &g->t[q->p[j]];
        if (t->is_scalar || !gpu_ix_packed(t, why, len))
            GPU_REFUSE("%s: parameter '%s' must be a packed tensor", n->op, t->name);
        if (!gpu_ix_float(t->dtype) || (t->numel != 1 && t->numel != k->C))
            GPU_REFUSE("%s: parameter '%s' must hold C = %lld or 1 float elements, got %lld %s", n->op, t->name,
                 (long long)k->C, (long long)t->numel, xdnn_dtype_name(t->dtype));
        k->pdt[j] = (int)t->dtype;
        k->pnumel[j] = t->numel;
    }
    k->xdt = (int)x->dtype;
    k->ydt = (int)y->dtype;
    k->eps = op_attr_float(n->ir, op_get(n->op_id), "eps");
    snprintf(q->detail, sizeof q->detail, "N %lld C %lld S %lld", (long long)k->N, (long long)k->C, (long long)k->S);
    return true;
}

static bool bv_supports(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    bv_priv q;
    return bv_analyze(pl, p, &q, why, len);
}

static double bv_cost(const gplan *pl, const gpart *p, const gpu_device *dev) { return gpu_roofline_us(p, 20.0); }

static size_t bv_workspace(const gplan *pl, const gpart *p, const gpu_device *dev) { return 0; }

static xdnn_status bv_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d)
{
    bv_priv *q = calloc(1, sizeof *q);
    if (!q)
        return XDNN_ERR_NOMEM;
    p->priv = q;
    char why[512];
    if (!bv_analyze(c->plan, p, q, why, sizeof why)) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), "bn_infer_var: %s: %s", p->name, why);
        return XDNN_ERR_UNSUPPORTED;
    }
    return XDNN_OK;
}

static xdnn_status bv_execute(gpu_ctx *c, gpart *p, cudaStream_t s, xdnn_diags_t *d)
{
    const bv_priv *q = p->priv;
    kbv_params k = q->kp;
    k.x = c->dptr[q->x];
    for (int j = 0; j < 4; j++)
        k.p[j] = c->dptr[q->p[j]];
    k.y = c->dptr[q->y];
    return gpu_check_cuda((cudaError_t)kbv_launch(&k, s), "kbv_launch", __FILE__, __LINE__, d);
}

static void bv_release(gpart *p)
{
    free(p->priv);
    p->priv = NULL;
}

static const char *bv_detail(const gpart *p)
{
    const bv_priv *q = p->priv;
    return q ? q->detail : "";
}

const gpu_engine gpu_engine_bn_infer_var = {
    "bn_infer_var", "batchnorm_infer_var: (x - mean) / sqrt(var + eps) * scale + bias, one thread per element",
    bv_supports, bv_cost, bv_workspace, bv_build, bv_execute, bv_release, bv_detail,
};
