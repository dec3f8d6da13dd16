/* eng_rng.c — the rng_philox engine: dropout (y and the keep mask) and rng
 * (uniform / normal) on kernels/philox.cu, drawing the same Philox numbers as
 * src/ops/random.c: key = the `seed` attribute, else
 * rng_tensor_seed(graph seed, node name); dropout uses stream 1, rng stream
 * 0; element i is the logical row-major index, so values do not depend on
 * the layout.  Uniform results are bit-identical to the CPU reference. */
#include "gpu/eng_rng.h"

#include "data/data.h"
#include "gpu/engine.h"
#include "ops/op.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { DROPOUT_STREAM = 1, RNG_STREAM = 0 };

static bool value_dt(xdnn_dtype t) { return t == XDNN_F32 || t == XDNN_F16 || t == XDNN_BF16 || t == XDNN_F64; }
static bool mask_dt(xdnn_dtype t) { return value_dt(t) || t == XDNN_BOOL || t == XDNN_I8 || t == XDNN_I32; }

bool gpu_rng_analyze(const gplan *pl, const gpart *p, rg_job *j, int tids[3], char *why, size_t len)
{
    memset(j, 0, sizeof *j);
    tids[0] = tids[1] = tids[2] = -1;
    if (p->kind != GP_SINGLE || p->nnodes != 1)
        GPU_REFUSE("needs a single-node partition, got %s with %d nodes", gpart_kind_name(p->kind), p->nnodes);
    const ggraph *g = pl->g;
    const gnode *n = &g->n[p->nodes[0]];
    bool dropout = n->op_id == OP_dropout;
    if (!dropout && n->op_id != OP_rng)
        GPU_REFUSE("op %s is not dropout or rng", n->op);
    if (!n->ir)
        GPU_REFUSE("%s: node %s has no IR node (attributes unknown)", n->op, n->name);
    const op_desc *desc = op_get(n->ir->op);
    j->key = op_attr_present(n->ir, desc, "seed") ? (uint64_t)op_attr_int(n->ir, desc, "seed")
                                                   : rng_tensor_seed(g->seed, n->ir->name);
    int y = n->nouts > 0 ? n->outs[0] : n->out;
    int mask = dropout && n->nouts > 1 ? n->outs[1] : -1;
    int x = dropout && n->nin > 0 ? n->in[0] : -1;
    if (y < 0)
        GPU_REFUSE("%s: result y is discarded", n->op);
    if (dropout && x < 0)
        GPU_REFUSE("dropout: input x is missing");
    const gtensor *ty = &g->t[y];
    if (!value_dt(ty->dtype))
        GPU_REFUSE("%s: result '%s' has dtype %s; rng_philox writes f32, f16, bf16, f64", n->op, ty->name,
             gg_dtype_name(ty->dtype));
    if (x >= 0 && (g->t[x].is_scalar || !value_dt(g->t[x].dtype) || !gg_same_dims(&g->t[x], ty)))
        GPU_REFUSE("dropout: x '%s' must be an f32/f16/bf16/f64 tensor of y's dims", g->t[x].name);
    if (mask >= 0 && (!mask_dt(g->t[mask].dtype) || !gg_same_dims(&g->t[mask], ty)))
        GPU_REFUSE("dropout: mask '%s' has dtype %s; expected bool, i8, i32 or a float type of y's dims", g->t[mask].name,
             gg_dtype_name(g->t[mask].dtype));
    tids[0] = x, tids[1] = y, tids[2] = mask;
    if (dropout) {
        j->kind = RGK_DROPOUT;
        j->stream = DROPOUT_STREAM;
        j->p = op_attr_float(n->ir, desc, "p");
        j->keep_scale = j->p < 1 ? 1.0 / (1.0 - j->p) : 0.0;
    } else {
        const char *dist = op_attr_str(n->ir, desc, "dist");
        bool normal = dist && strcmp(dist, "normal") == 0;
        j->kind = normal ? RGK_NORMAL : RGK_UNIFORM;
        j->stream = RNG_STREAM;
        j->a = op_attr_float(n->ir, desc, normal ? "mean" : "lo");
        j->b = normal ? op_attr_float(n->ir, desc, "std")
                      : op_attr_float(n->ir, desc, "hi") - op_attr_float(n->ir, desc, "lo");
    }
    j->ydt = (int)ty->dtype;
    j->xdt = x >= 0 ? (int)g->t[x].dtype : 0;
    j->mdt = mask >= 0 ? (int)g->t[mask].dtype : 0;
    j->numel = ty->numel;
    /* dims in row-major order (the index is logical); merge where all three
     * tensors are contiguous across neighbours */
    int m = 0;
    for (int d = 0; d < ty->rank; d++) {
        if (ty->dims[d] == 1)
            continue;
        int64_t xs = x >= 0 ? g->t[x].strides[d] : 0, ms = mask >= 0 ? g->t[mask].strides[d] : 0;
        int64_t sz = ty->dims[d], ys = ty->strides[d];
        if (m > 0 && j->yst[m - 1] == ys * sz && j->xst[m - 1] == xs * sz && j->mst[m - 1] == ms * sz) {
            j->size[m - 1] *= sz;
            j->xst[m - 1] = xs, j->yst[m - 1] = ys, j->mst[m - 1] = ms;
            continue;
        }
        if (m >= RG_MAXD)
            GPU_REFUSE("%s: more than %d non-mergeable dims", n->op, RG_MAXD);
        j->size[m] = sz, j->xst[m] = xs, j->yst[m] = ys, j->mst[m] = ms;
        m++;
    }
    j->n = m;
    return true;
}

typedef struct rng_priv {
    rg_job job;
    int tids[3];
} rng_priv;

static bool rng_supports(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    rg_job j;
    int t[3];
    return gpu_rng_analyze(pl, p, &j, t, why, len);
}

static double rng_cost(const gplan *pl, const gpart *p, const gpu_device *dev) { return gpu_roofline_us(p, 20.0); }

static size_t rng_workspace(const gplan *pl, const gpart *p, const gpu_device *dev) { return 0; }

static xdnn_status rng_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d)
{
    rng_priv *rp = calloc(1, sizeof *rp);
    if (!rp)
        return XDNN_ERR_NOMEM;
    p->priv = rp;
    char why[512];
    if (!gpu_rng_analyze(c->plan, p, &rp->job, rp->tids, why, sizeof why)) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), "rng_philox: %s", why);
        return XDNN_ERR_UNSUPPORTED;
    }
    return XDNN_OK;
}

static xdnn_status rng_execute(gpu_ctx *c, gpart *p, cudaStream_t s, xdnn_diags_t *d)
{
    rng_priv *rp = p->priv;
    rg_job j = rp->job;
    j.x = rp->tids[0] >= 0 ? c->dptr[rp->tids[0]] : NULL;
    j.y = c->dptr[rp->tids[1]];
    j.mask = rp->tids[2] >= 0 ? c->dptr[rp->tids[2]] : NULL;
    int e = rg_launch(&j, (void *)s);
    if (e != 0) {
        diag_error(d, XDNN_ERR_DEVICE, xloc_none(), "rng_philox: launch for %s failed: %s", p->name,
                   cudaGetErrorString((cudaError_t)e));
        return XDNN_ERR_DEVICE;
    }
    return XDNN_OK;
}

static void rng_release(gpart *p)
{
    free(p->priv);
    p->priv = NULL;
}

static const char *rng_detail(const gpart *p)
{
    const rng_priv *rp = p->priv;
    if (!rp)
        return "";
    return rp->job.kind == RGK_DROPOUT ? "dropout, Philox stream 1"
         : rp->job.kind == RGK_NORMAL  ? "normal, Philox stream 0"
                                       : "uniform, Philox stream 0";
}

const gpu_engine gpu_engine_rng_philox = {
    "rng_philox", "dropout (y, mask) and rng uniform/normal on the CPU's Philox-4x32-10 stream",
    rng_supports, rng_cost, rng_workspace, rng_build, rng_execute, rng_release, rng_detail,
};
