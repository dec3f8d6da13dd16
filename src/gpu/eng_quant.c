/* eng_quant.c — quant_direct: quantize, dequantize and amax on the GPU
 * and quant_scale (kernels/quant.cu), bit-exact with src/ops/quant.c.  Per-tensor,
 * per-channel and block scales (the map of src/ops/quant.h), f32 or e8m0
 * scales; x f32/f16/bf16 -> fp8_e4m3/fp8_e5m2/i8 and back to f32/f16/bf16/f64.
 * Packed row-major tensors only (a strided one is refused with its strides:
 * a copy_strided partition in front of it is the way), fewer than 2^31
 * elements. */
#include "gpu/engine.h"
#include "gpu/kern_quant.h"
#include "ops/quant.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct quant_priv {
    kq_params kp;
    int x, s, y;      /* tensor ids */
    char detail[96];
} quant_priv;

static bool one_of(xdnn_dtype t, const xdnn_dtype *set, int n)
{
    for (int i = 0; i < n; i++)
        if (set[i] == t)
            return true;
    return false;
}

static bool quant_analyze(const gplan *pl, const gpart *p, quant_priv *q, char *why, size_t len)
{
    memset(q, 0, sizeof *q);
    if (p->nnodes != 1)
        GPU_REFUSE("needs a lone quantize/dequantize/amax node, got partition %s of %d nodes", p->name, p->nnodes);
    const ggraph *g = pl->g;
    const gnode *n = &g->n[p->nodes[0]];
    kq_params *k = &q->kp;
    if (n->op_id == OP_quantize)
        k->mode = KQ_QUANT;
    else if (n->op_id == OP_dequantize)
        k->mode = KQ_DEQUANT;
    else if (n->op_id == OP_amax)
        k->mode = KQ_AMAX;
    else if (n->op_id == OP_quant_scale)
        k->mode = KQ_SCALE;
    else
        GPU_REFUSE("runs quantize, dequantize, amax and quant_scale only, not %s", n->op);
    bool has_scale = k->mode == KQ_QUANT || k->mode == KQ_DEQUANT;
    if (!n->ir || n->nin < 1 || n->in[0] < 0 || n->out < 0 || (has_scale && (n->nin < 2 || n->in[1] < 0)))
        GPU_REFUSE("%s: node %s lacks its operands or its IR node", n->op, n->name);
    q->x = n->in[0];
    q->s = has_scale ? n->in[1] : -1;
    q->y = n->out;
    const gtensor *x = &g->t[q->x], *y = &g->t[q->y], *s = q->s >= 0 ? &g->t[q->s] : NULL;
    static const xdnn_dtype wide[] = {XDNN_F32, XDNN_F16, XDNN_BF16};
    static const xdnn_dtype narrow[] = {XDNN_FP8_E4M3, XDNN_FP8_E5M2, XDNN_I8};
    static const xdnn_dtype deq_out[] = {XDNN_F32, XDNN_F16, XDNN_BF16, XDNN_F64};
    const gtensor *in_ok = x, *out_ok = y;
    bool dt_in = k->mode == KQ_DEQUANT ? one_of(x->dtype, narrow, 3) : one_of(x->dtype, wide, 3);
    bool dt_out = k->mode == KQ_QUANT ? one_of(y->dtype, narrow, 3)
                : k->mode == KQ_DEQUANT ? one_of(y->dtype, deq_out, 4)
                : k->mode == KQ_SCALE ? y->dtype == XDNN_F32 || y->dtype == XDNN_E8M0 : y->dtype == XDNN_F32;
    if (!dt_in)
        GPU_REFUSE("%s: input '%s' has dtype %s (expected %s)", n->op, in_ok->name, xdnn_dtype_name(x->dtype),
             k->mode == KQ_DEQUANT ? "fp8_e4m3, fp8_e5m2 or i8" : "f32, f16 or bf16");
    if (!dt_out)
        GPU_REFUSE("%s: output '%s' has dtype %s (expected %s)", n->op, out_ok->name, xdnn_dtype_name(y->dtype),
             k->mode == KQ_QUANT ? "fp8_e4m3, fp8_e5m2 or i8" : k->mode == KQ_DEQUANT ? "f32, f16, bf16 or f64"
             : k->mode == KQ_SCALE ? "f32 or e8m0" : "f32");
    if (s && s->dtype != XDNN_F32 && s->dtype != XDNN_E8M0)
        GPU_REFUSE("%s: scale '%s' has dtype %s (expected f32 or e8m0)", n->op, s->name, xdnn_dtype_name(s->dtype));
    const gtensor *all[3] = {x, y, s};
    for (int i = 0; i < 3; i++) {
        if (all[i] && !gg_packed(all[i])) {
            char st[128];
            size_t m = 0;
            for (int d = 0; d < all[i]->rank; d++)
                m += (size_t)snprintf(st + m, sizeof st - m, "%s%lld", d ? "," : "", (long long)all[i]->strides[d]);
            GPU_REFUSE("%s: '%s' is not packed row-major (strides %s); quant_direct reads and writes packed tensors", n->op,
                 all[i]->name, st);
        }
    }
    if (x->numel >= (int64_t)1 << 31)
        GPU_REFUSE("%s: '%s' has %lld elements; quant_direct indexes with 32 bits (< 2^31)", n->op, x->name,
             (long long)x->numel);
    quant_map m = {.kind = QM_TENSOR};
    char mwhy[256];
    if (k->mode == KQ_SCALE) {
        const value *v = op_attr(n->ir, op_get(n->op_id), "dtype");
        double qmax;
        quant_format_limits(v && v->kind == VAL_DTYPE ? v->dt : XDNN_FP8_E4M3, &qmax, &k->emax);
        k->qmax = (float)qmax;
        for (int d = 0; d < x->rank; d++)
            m.blk[d] = 1;
    } else if (!quant_map_of(n->ir, op_get(n->op_id), x->rank, x->dims, &m, mwhy, sizeof mwhy)) {
        GPU_REFUSE("%s: %s", n->op, mwhy);
    }
    k->xdt = x->dtype;
    k->ydt = y->dtype;
    k->sdt = s ? s->dtype : XDNN_F32;
    k->cols = (uint32_t)(x->rank ? x->dims[x->rank - 1] : 1);
    k->rows = k->cols ? (uint32_t)(x->numel / k->cols) : 0;
    k->nlead = x->rank > 1 ? x->rank - 1 : 0;
    for (int d = 0; d < k->nlead; d++) {
        k->lead_dims[d] = (uint32_t)x->dims[d];
        k->lead_blk[d] = (uint32_t)m.blk[d];
        k->lead_sst[d] = (uint32_t)m.sst[d];
    }
    k->col_blk = x->rank ? (uint32_t)m.blk[x->rank - 1] : 1;
    k->col_sst = x->rank ? (uint32_t)m.sst[x->rank - 1] : 0;
    k->nscale = (uint32_t)(s ? s->numel : y->numel);
    static const char *const gran[] = {"per-tensor", "per-channel", "block"};
    snprintf(q->detail, sizeof q->detail, "%s %s, %s scale%s", n->op, gran[m.kind],
             xdnn_dtype_name(k->mode == KQ_SCALE ? k->ydt : k->sdt),
             k->cols % 8 == 0 ? ", 8-wide vectors" : "");
    return true;
}

static bool quant_supports(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    quant_priv q;
    return quant_analyze(pl, p, &q, why, len);
}

/* Memory-bound: the roofline of its bytes. */
static double quant_cost(const gplan *pl, const gpart *p, const gpu_device *dev) { return gpu_roofline_us(p, 20.0); }

static size_t quant_workspace(const gplan *pl, const gpart *p, const gpu_device *dev) { return 0; }

static xdnn_status quant_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d)
{
    quant_priv *q = calloc(1, sizeof *q);
    if (!q)
        return XDNN_ERR_NOMEM;
    p->priv = q;
    char why[512];
    if (!quant_analyze(c->plan, p, q, why, sizeof why)) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), "quant_direct: %s: %s", p->name, why);
        return XDNN_ERR_UNSUPPORTED;
    }
    return XDNN_OK;
}

static xdnn_status quant_execute(gpu_ctx *c, gpart *p, cudaStream_t s, xdnn_diags_t *d)
{
    const quant_priv *q = p->priv;
    kq_params k = q->kp;
    k.x = c->dptr[q->x];
    k.s = q->s >= 0 ? c->dptr[q->s] : NULL;
    k.y = c->dptr[q->y];
    return gpu_check_cuda((cudaError_t)kq_launch(&k, s), "kq_launch", __FILE__, __LINE__, d);
}

static void quant_release(gpart *p)
{
    free(p->priv);
    p->priv = NULL;
}

static const char *quant_detail(const gpart *p)
{
    const quant_priv *q = p->priv;
    return q ? q->detail : "";
}

const gpu_engine gpu_engine_quant_direct = {
    "quant_direct", "quantize/dequantize/amax/quant_scale: per-tensor, per-channel, block scales (f32/e8m0), fp8/i8, exact RNE",
    quant_supports, quant_cost, quant_workspace, quant_build, quant_execute, quant_release, quant_detail,
};
