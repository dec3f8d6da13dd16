/* eng_index.c — index_direct: gather, gather_bwd (deterministic: sorted
 * keys, no atomics), one_hot, argmax and argmin on the GPU (kernels/index.cu),
 * checked against src/ops/gather.c and src/ops/argmax.c by
 * tests/gpu/difftest_index.c.  Packed row-major tensors only (a strided one
 * is refused naming its strides: a copy_strided partition in front is the
 * way); data f32/f16/bf16/f64, indices i8/i32/i64.  An index outside [0, n)
 * gives NaN where the CPU reference refuses (kern_index.h). */
#include "gpu/eng_index.h"
#include "gpu/kern_index.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct index_priv {
    kix_params kp;
    int x, idx, y;    /* tensor ids */
    char detail[96];
} index_priv;

bool gpu_ix_packed(const gtensor *t, char *why, size_t len)
{
    int64_t want = 1;
    for (int i = t->rank - 1; i >= 0; i--) {
        if (t->dims[i] != 1 && t->strides[i] != want) {
            char st[128];
            size_t m = 0;
            for (int d = 0; d < t->rank; d++)
                m += (size_t)snprintf(st + m, sizeof st - m, "%s%lld", d ? "," : "", (long long)t->strides[d]);
            GPU_REFUSE("'%s' is not packed row-major (strides %s); this engine reads and writes packed tensors", t->name, st);
        }
        want *= t->dims[i];
    }
    return true; /* a packed view (reshape) is read through its own pointer (gg_bind_views) */
}

bool gpu_ix_float(xdnn_dtype t) { return t == XDNN_F32 || t == XDNN_F16 || t == XDNN_BF16 || t == XDNN_F64; }
bool gpu_ix_int(xdnn_dtype t) { return t == XDNN_I8 || t == XDNN_I32 || t == XDNN_I64; }

/* The lone node of p when it is one of the ops in `ops` (n of them). */
const gnode *gpu_ix_lone_node(const gplan *pl, const gpart *p, const int *ops, int n, const char *what, char *why,
                              size_t len)
{
    if (p->nnodes != 1) {
        snprintf(why, len, "needs a lone %s node, got partition %s of %d nodes", what, p->name, p->nnodes);
        return NULL;
    }
    const gnode *g = &pl->g->n[p->nodes[0]];
    for (int i = 0; i < n; i++)
        if (g->op_id == ops[i]) {
            if (!g->ir || g->out < 0) {
                snprintf(why, len, "%s: node %s lacks its IR node or its result", g->op, g->name);
                return NULL;
            }
            return g;
        }
    snprintf(why, len, "runs %s only, not %s", what, g->op);
    return NULL;
}

static bool index_analyze(const gplan *pl, const gpart *p, index_priv *q, char *why, size_t len)
{
    memset(q, 0, sizeof *q);
    static const int ops[] = {OP_gather, OP_gather_bwd, OP_one_hot, OP_argmax, OP_argmin};
    const gnode *n = gpu_ix_lone_node(pl, p, ops, 5, "gather, gather_bwd, one_hot, argmax and argmin", why, len);
    if (!n)
        return false;
    const ggraph *g = pl->g;
    const op_desc *d = op_get(n->op_id);
    kix_params *k = &q->kp;
    k->mode = n->op_id == OP_gather       ? KIX_GATHER
            : n->op_id == OP_gather_bwd   ? KIX_GATHER_BWD
            : n->op_id == OP_one_hot      ? KIX_ONE_HOT
            : n->op_id == OP_argmax       ? KIX_ARGMAX
                                          : KIX_ARGMIN;
    bool has_idx = k->mode != KIX_ARGMAX && k->mode != KIX_ARGMIN;
    int xp = k->mode == KIX_ONE_HOT ? -1 : 0, iport = k->mode == KIX_ONE_HOT ? 0 : has_idx ? 1 : -1;
    q->x = xp >= 0 && n->nin > xp ? n->in[xp] : -1;
    q->idx = iport >= 0 && n->nin > iport ? n->in[iport] : -1;
    q->y = n->out;
    if ((xp >= 0 && q->x < 0) || (iport >= 0 && q->idx < 0))
        GPU_REFUSE("%s: node %s lacks an operand", n->op, n->name);
    const gtensor *x = q->x >= 0 ? &g->t[q->x] : NULL, *ix = q->idx >= 0 ? &g->t[q->idx] : NULL, *y = &g->t[q->y];
    const gtensor *all[3] = {x, ix, y};
    for (int i = 0; i < 3; i++) {
        if (all[i] && all[i]->is_scalar)
            GPU_REFUSE("%s: operand '%s' is a scalar; expected a tensor", n->op, all[i]->name);
        if (all[i] && !gpu_ix_packed(all[i], why, len))
            return false;
        if (all[i] && all[i]->numel >= (int64_t)1 << 40)
            GPU_REFUSE("%s: '%s' has %lld elements (at most 2^40 here)", n->op, all[i]->name, (long long)all[i]->numel);
    }
    if (x && !gpu_ix_float(x->dtype))
        GPU_REFUSE("%s: '%s' has dtype %s; index_direct takes f32, f16, bf16 or f64 data", n->op, x->name,
             xdnn_dtype_name(x->dtype));
    if (ix && !gpu_ix_int(ix->dtype))
        GPU_REFUSE("%s: index '%s' has dtype %s (expected i8, i32 or i64)", n->op, ix->name, xdnn_dtype_name(ix->dtype));
    bool int_out = k->mode == KIX_ARGMAX || k->mode == KIX_ARGMIN;
    if (int_out ? !(y->dtype == XDNN_I32 || y->dtype == XDNN_I64)
                : !(gpu_ix_float(y->dtype) || (k->mode == KIX_ONE_HOT && gpu_ix_int(y->dtype))))
        GPU_REFUSE("%s: result '%s' has dtype %s, which index_direct does not write", n->op, y->name,
             xdnn_dtype_name(y->dtype));
    k->xdt = x ? (int)x->dtype : 0;
    k->idt = ix ? (int)ix->dtype : 0;
    k->ydt = (int)y->dtype;
    k->K = ix ? ix->numel : 0;
    int ax = 0;
    const gtensor *full = k->mode == KIX_GATHER_BWD ? y : x; /* the tensor of rank r the axis names */
    if (k->mode == KIX_ONE_HOT) {
        k->outer = 1;
        k->n = y->dims[y->rank - 1];
        k->inner = 1;
    } else if (!op_axis(full->rank, op_attr_int(n->ir, d, "axis"), &ax)) {
        GPU_REFUSE("%s: attribute 'axis' out of range for rank %d", n->op, full->rank);
    } else {
        k->outer = 1;
        for (int i = 0; i < ax; i++)
            k->outer *= full->dims[i];
        k->n = full->dims[ax];
        k->inner = 1;
        for (int i = ax + 1; i < full->rank; i++)
            k->inner *= full->dims[i];
    }
    if (k->mode == KIX_GATHER_BWD && (k->K >= (int64_t)1 << 32 || k->n >= (int64_t)1 << 31))
        GPU_REFUSE("%s: %lld indices into %lld rows; the sort keys hold < 2^32 indices and < 2^31 rows", n->op,
             (long long)k->K, (long long)k->n);
    static const char *const names[] = {"gather", "gather_bwd sorted scatter", "one_hot", "argmax", "argmin"};
    snprintf(q->detail, sizeof q->detail, "%s, outer %lld n %lld inner %lld%s", names[k->mode], (long long)k->outer,
             (long long)k->n, (long long)k->inner, int_out && k->inner == 1 ? ", warp per row" : "");
    return true;
}

static bool index_supports(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    index_priv q;
    return index_analyze(pl, p, &q, why, len);
}

/* Memory-bound: the roofline of its bytes (gather_bwd's sort adds passes, but it stays the only candidate). */
static double index_cost(const gplan *pl, const gpart *p, const gpu_device *dev) { return gpu_roofline_us(p, 20.0); }

static size_t index_workspace(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    index_priv q;
    char why[256];
    if (!index_analyze(pl, p, &q, why, sizeof why) || q.kp.mode != KIX_GATHER_BWD)
        return 0;
    return kix_bwd_ws_bytes(q.kp.K);
}

static xdnn_status index_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d)
{
    index_priv *q = calloc(1, sizeof *q);
    if (!q)
        return XDNN_ERR_NOMEM;
    p->priv = q;
    char why[512];
    if (!index_analyze(c->plan, p, q, why, sizeof why)) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), "index_direct: %s: %s", p->name, why);
        return XDNN_ERR_UNSUPPORTED;
    }
    return XDNN_OK;
}

static xdnn_status index_execute(gpu_ctx *c, gpart *p, cudaStream_t s, xdnn_diags_t *d)
{
    const index_priv *q = p->priv;
    kix_params k = q->kp;
    k.x = q->x >= 0 ? c->dptr[q->x] : NULL;
    k.idx = q->idx >= 0 ? c->dptr[q->idx] : NULL;
    k.y = c->dptr[q->y];
    k.ws = c->ws + p->ws_offset;
    return gpu_check_cuda((cudaError_t)kix_launch(&k, s), "kix_launch", __FILE__, __LINE__, d);
}

static void index_release(gpart *p)
{
    free(p->priv);
    p->priv = NULL;
}

static const char *index_detail(const gpart *p)
{
    const index_priv *q = p->priv;
    return q ? q->detail : "";
}

const gpu_engine gpu_engine_index_direct = {
    "index_direct", "gather (embedding), gather_bwd (sorted scatter-add, deterministic), one_hot, argmax/argmin",
    index_supports, index_cost, index_workspace, index_build, index_execute, index_release, index_detail,
};
