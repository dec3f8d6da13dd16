/* eng_pool.c — pool_direct: maxpool / avgpool forward and backward on the
 * GPU (kernels/pool.cu), 1-3 spatial dims, any stride / pad / dilation /
 * ceil_mode / include_pad, any strides and f32/f16/bf16.  The backward is a
 * gather (one thread per dx element, no atomics) with the reference's tie
 * rule: dy goes to the first maximum of each window (the first NaN if any);
 * maxpool's finds each window's winner once, into the workspace, except over
 * 3x3 stride-2 windows, walked in one pass (detail "bwd walk16", "bwd walk"
 * with XDNN_POOL_BWD_WIDE=0), as are the average pooling's of those windows
 * (details "fwd walk", "bwd walk"). */
#include "gpu/conv_analyze.h"
#include "gpu/engine.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct pool_priv {
    gpool_problem pp;
    char detail[96];
} pool_priv;

static bool pool_supports(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    gpool_problem pp;
    return gpu_pool_analyze(pl, p, &pp, why, len);
}

/* Memory-bound: the roofline of its bytes (flops are compares/adds). */
static double pool_cost(const gplan *pl, const gpart *p, const gpu_device *dev) { return gpu_roofline_us(p, 20.0); }

/* maxpool backward: one byte per dy element, each window's winning tap (kernels/pool.cu, v3; none for v4). */
static size_t pool_workspace(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    gpool_problem pp;
    char why[8];
    return gpu_pool_analyze(pl, p, &pp, why, sizeof why) && pp.bwd ? kpool_bwd_ws_bytes(&pp.kp) : 0;
}

static xdnn_status pool_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d)
{
    pool_priv *pv = calloc(1, sizeof *pv);
    if (!pv)
        return XDNN_ERR_NOMEM;
    p->priv = pv;
    char why[512];
    if (!gpu_pool_analyze(c->plan, p, &pv->pp, why, sizeof why)) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), "pool_direct: %s: %s", p->name, why);
        return XDNN_ERR_UNSUPPORTED;
    }
    const kpool_params *kp = &pv->pp.kp;
    static const char *const bwd[] = {"bwd gather", "bwd walk", "bwd walk16"}; /* kpool_bwd_one_pass */
    const char *pass = !pv->pp.bwd ? (kpool_fwd_avg_walk(kp) ? "fwd walk" : "fwd") : bwd[kpool_bwd_one_pass(kp)];
    snprintf(pv->detail, sizeof pv->detail, "%s %s, %d-D%s", pv->pp.kp.is_max ? "max" : "avg", pass, pv->pp.nsp,
             pv->pp.kp.include_pad ? ", include_pad" : "");
    return XDNN_OK;
}

static xdnn_status pool_execute(gpu_ctx *c, gpart *p, cudaStream_t s, xdnn_diags_t *d)
{
    const gpool_problem *pp = &((const pool_priv *)p->priv)->pp;
    int e = pp->bwd ? kpool_bwd(&pp->kp, c->dptr[pp->x], c->dptr[pp->y], c->dptr[pp->dx], c->ws + p->ws_offset,
                                p->ws_bytes, s)
                    : kpool_fwd(&pp->kp, c->dptr[pp->x], c->dptr[pp->y], s);
    return gpu_check_cuda((cudaError_t)e, pp->bwd ? "kpool_bwd launch" : "kpool_fwd launch", __FILE__, __LINE__, d);
}

static void pool_release(gpart *p)
{
    free(p->priv);
    p->priv = NULL;
}

static const char *pool_detail(const gpart *p)
{
    const pool_priv *pv = p->priv;
    return pv ? pv->detail : "";
}

const gpu_engine gpu_engine_pool_direct = {
    "pool_direct", "maxpool/avgpool fwd and bwd (gather, no atomics): 1-3-D, any stride/pad/dilation/layout",
    pool_supports, pool_cost, pool_workspace, pool_build, pool_execute, pool_release, pool_detail,
};
