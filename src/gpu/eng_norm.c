/* eng_norm.c — the norm_welford engine: batchnorm (training with or without
 * running statistics, inference, backward), layernorm, rmsnorm, groupnorm,
 * instancenorm (forward and backward) and softmax_bwd / log_softmax_bwd, on
 * the precompiled kernels of kernels/norm.cu (layouts in kern_norm.h).
 *
 * x's dims become canonical dims (group norm's channel dim split into
 * [G, C/G]), each a ROW dim (one statistic per index) or a reduced dim, with
 * one stride per operand; dims that every operand walks contiguously are
 * merged.  Then:
 *   forward   reduce (Welford, or sum of squares for rms) -> finalize (mean,
 *             inv_var, running statistics) -> apply y; layernorm/rmsnorm rows
 *             of <= 8192 contiguous elements instead use one block per row
 *             with the row in registers (x read once);
 *   backward  load saved mean/inv -> reduce the row sums (sum g, sum g xhat,
 *             sum dy, sum dy xhat) -> apply dx; parameter gradients by a
 *             second reduce over the parameter's dims (batchnorm: they are
 *             the row sums already);
 *   softmax_bwd  reduce sum dy*y (or sum dy) per row -> apply dx; by default
 *             (XDNN_SOFTMAX_BWD_ROWS=0: the split reduction for all) rows of
 *             <= NG_SMB_ROW_BYTES contiguous elements instead take a warp or a
 *             few per row (kernels/softmax_warp_bwd.cu, y and dy read once);
 *   softmax / log_softmax (a lone reduce partition over contiguous last-axis
 *             rows of <= NG_WARP_ROW_MAX elements): kernels/norm_warp.cu,
 *             a warp or a few per row (other softmax partitions, and all
 *             of a plan with dynamic sizes, stay on reduce_nvrtc).  The layernorm / rmsnorm rows above take the
 *             same warp kernels when their rows are 16-byte aligned.
 * The reduce runs with threads along the reduced dims, or, when the rows
 * are the contiguous dim (batchnorm NHWC, softmax over a leading axis),
 * 32 rows per block with threads along the rows (coalesced); long rows are
 * split into chunks whose partial statistics are combined (Chan) in the
 * finalize kernel.  All math in f32; any strides; f32/f16/bf16 tensors. */
#include "gpu/eng_norm.h"

#include "gpu/engine.h"
#include "gpu/kern_conv_wgmma.h"
#include "ops/norm_util.h"
#include "ops/op.h"
#include "ops/pointwise.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(XDNN_F32 == 0 && XDNN_F16 == 1 && XDNN_BF16 == 2 && XDNN_F64 == 9,
               "kernels/norm.cu hard-codes these dtype codes");

static const struct {
    const char *name;
    norm_kind kind;
} kinds[] = {
    {"batchnorm", NK_BN},       {"batchnorm_infer", NK_BN_INFER}, {"batchnorm_bwd", NK_BN_BWD},
    {"layernorm", NK_LN},       {"layernorm_bwd", NK_LN_BWD},     {"rmsnorm", NK_RMS},
    {"rmsnorm_bwd", NK_RMS_BWD}, {"groupnorm", NK_GN},            {"groupnorm_bwd", NK_GN_BWD},
    {"instancenorm", NK_IN},    {"instancenorm_bwd", NK_IN_BWD},  {"softmax_bwd", NK_SMB},
    {"log_softmax_bwd", NK_LSMB},
};

norm_kind gpu_norm_kind(const char *op)
{
    for (size_t i = 0; op && i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(kinds[i].name, op) == 0)
            return kinds[i].kind;
    return NK_NONE;
}

int gpu_norm_act(const ggraph *g, int node)
{
    const gnode *n = &g->n[node];
    if (n->kind != GN_POINTWISE || n->nin != 1)
        return NGACT_NONE;
    if (n->tag == PWT_RELU)
        return NGACT_RELU;
    if (n->op_id == OP_silu)
        return NGACT_SILU;
    if (n->tag == PWT_GELU_TANH)
        return NGACT_GELU_TANH;
    return n->op_id == OP_gelu ? NGACT_GELU_ERF : NGACT_NONE;
}

int gpu_norm_fusable_dx(const ggraph *g, int node)
{
    const gnode *n = &g->n[node];
    norm_kind k = n->kind == GN_OTHER ? gpu_norm_kind(n->op) : NK_NONE;
    return k == NK_LN_BWD || k == NK_RMS_BWD ? (n->nouts > 0 ? n->outs[0] : n->out) : -1;
}

int gpu_norm_res_add(const ggraph *g, int node, int dx)
{
    const gnode *n = &g->n[node];
    if (dx < 0 || n->kind != GN_POINTWISE || n->tag != PWT_ADD || n->nin != 2 || n->out < 0)
        return -1;
    int r = n->in[0] == dx ? n->in[1] : n->in[1] == dx ? n->in[0] : -1;
    if (r < 0 || r == dx)
        return -1;
    const gtensor *rt = &g->t[r], *d = &g->t[dx], *o = &g->t[n->out];
    bool ok = !rt->is_scalar && gg_same_dims(rt, d) && gg_same_dims(o, d) && rt->dtype == d->dtype &&
              o->dtype == d->dtype && !d->is_output && d->view_of < 0 && o->view_of < 0;
    return ok ? r : -1;
}

int gpu_norm_fusable_y(const ggraph *g, int node)
{
    const gnode *n = &g->n[node];
    norm_kind k = n->kind == GN_OTHER ? gpu_norm_kind(n->op) : NK_NONE;
    bool fwd = k == NK_BN || k == NK_BN_INFER || k == NK_LN || k == NK_RMS || k == NK_GN || k == NK_IN;
    return fwd ? (n->nouts > 0 ? n->outs[0] : n->out) : -1;
}

bool gpu_norm_fusable_res(const ggraph *g, int node)
{
    const gnode *n = &g->n[node];
    norm_kind k = n->kind == GN_OTHER ? gpu_norm_kind(n->op) : NK_NONE;
    return k == NK_BN || k == NK_BN_INFER;
}

static bool is_bwd(norm_kind k)
{
    return k == NK_BN_BWD || k == NK_LN_BWD || k == NK_RMS_BWD || k == NK_GN_BWD || k == NK_IN_BWD;
}
static bool is_bn(norm_kind k) { return k == NK_BN || k == NK_BN_INFER || k == NK_BN_BWD; }
static bool is_group(norm_kind k) { return k == NK_GN || k == NK_GN_BWD || k == NK_IN || k == NK_IN_BWD; }
static bool is_feature(norm_kind k) { return k == NK_LN || k == NK_LN_BWD || k == NK_RMS || k == NK_RMS_BWD; }
static bool is_rms(norm_kind k) { return k == NK_RMS || k == NK_RMS_BWD; }
static bool is_smb(norm_kind k) { return k == NK_SMB || k == NK_LSMB; }

/* An A/B switch: set and not "0" */
static bool env_on(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

/* A path that is the default: off only when NAME is "0" (its A/B switch). */
static bool env_default_on(const char *name)
{
    const char *v = getenv(name);
    return !(v && strcmp(v, "0") == 0);
}

/* ---- canonical dims (before merging: up to rank + 1) */

enum { CAN_MAX = XDNN_MAX_RANK + 2 };

typedef struct canon {
    int n;
    int64_t size[CAN_MAX];
    bool row[CAN_MAX];
    int xdim[CAN_MAX];        /* the x dim it comes from */
    int64_t st[NG_NOPS][CAN_MAX];
} canon;

/* Stride of the one dim of a per-channel tensor that holds C (0 if one element). */
static int64_t chan_stride(const gtensor *t)
{
    if (t->numel <= 1)
        return 0;
    for (int i = 0; i < t->rank; i++)
        if (t->dims[i] > 1)
            return t->strides[i];
    return 0;
}

/* Is t packed row-major (size-1 dims ignored)? */
static bool dense_row_major(const gtensor *t)
{
    int64_t want = 1;
    for (int i = t->rank - 1; i >= 0; i--) {
        if (t->dims[i] == 1)
            continue;
        if (t->strides[i] != want)
            return false;
        want *= t->dims[i];
    }
    return true;
}

static bool dtype_ok(xdnn_dtype t, bool allow_f64)
{
    return t == XDNN_F32 || t == XDNN_F16 || t == XDNN_BF16 || (allow_f64 && t == XDNN_F64);
}

/* ---- the residual join fused into a batchnorm backward (partition.c
 * fuse_norm_joins): dy = relu_bwd(a [+ b], m), ResNet's backward at a block's
 * output (ds = relu_bwd(d0 + ds_next, y)).  The channels-last reduce reads a,
 * b and m instead of dy, stores dy (it has other readers: the shortcut) and
 * sums it; the apply reads dy as before: one pass over dy and one launch
 * fewer than the pointwise partition + the batchnorm. */

/* t is channels-last rows: C (dim 1) of stride 1, the other dims one run of
 * rows (NHWC order, size-1 dims skipped) at least C apart. */
static bool cl_rows_layout(const gtensor *t)
{
    if (t->rank < 2 || (t->dims[1] > 1 && t->strides[1] != 1))
        return false;
    int64_t next = -1;
    for (int q = t->rank - 1; q >= 0; q--) { /* dims r-1 .. 2 (W, H, ...), then 0 (N) */
        if (q == 1 || t->dims[q] == 1)
            continue;
        if (next < 0 ? t->strides[q] < t->dims[1] : t->strides[q] != next)
            return false;
        next = t->strides[q] * t->dims[q];
    }
    return true;
}

static bool same_layout(const gtensor *a, const gtensor *b)
{
    if (!gg_same_dims(a, b) || a->is_scalar || b->is_scalar || a->view_of >= 0 || b->view_of >= 0)
        return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] > 1 && a->strides[i] != b->strides[i])
            return false;
    return true;
}

bool gpu_norm_join(const ggraph *g, int node, int *relu, int *add)
{
    const gnode *n = &g->n[node];
    *relu = *add = -1;
    if (env_on("XDNN_NO_NORM_JOIN") || env_on("XDNN_NORM_NO_CL")) /* A/B switches: the join apart; no cl path */
        return false;
    if (n->kind != GN_OTHER || gpu_norm_kind(n->op) != NK_BN_BWD || n->nin < 2 || n->in[0] < 0 || n->in[1] < 0)
        return false;
    const int dy = n->in[0], p = g->t[dy].producer;
    const gtensor *x = &g->t[n->in[1]];
    const int dx = n->nouts > 0 ? n->outs[0] : n->out;
    if (p < 0 || g->n[p].op_id != OP_relu_bwd || !g->n[p].ir || g->n[p].nin != 2 || dx < 0)
        return false;
    const int v = g->n[p].in[0], m = g->n[p].in[1];
    /* the channels-last kernels' geometry (plan_cl): one channel dim of >= 2, >= 2 rows in one run */
    if (v < 0 || m < 0 || v == m || !dtype_ok(x->dtype, false) || !cl_rows_layout(x) || x->dims[1] < 2 ||
        x->numel / x->dims[1] < 2)
        return false;
    /* dscale / dbias from the channels-last row sums (one scale per channel), not the generic reduce */
    if (n->nin < 3 || n->in[2] < 0 || g->t[n->in[2]].numel <= 1)
        return false;
    const int same[] = {dy, m, dx};
    for (int i = 0; i < 3; i++)
        if (g->t[same[i]].dtype != x->dtype || !same_layout(&g->t[same[i]], x))
            return false;
    /* the add a + b that alone feeds relu_bwd (of dy's dims: no broadcast), else relu_bwd(a, m) */
    const int q = g->t[v].producer;
    const gnode *an = q >= 0 ? &g->n[q] : NULL;
    const gtensor *vt = &g->t[v];
    if (an && an->kind == GN_POINTWISE && an->tag == PWT_ADD && an->nin == 2 && an->in[0] >= 0 && an->in[1] >= 0 &&
        an->in[0] != an->in[1] && !vt->is_output && vt->nconsumers == 1 && vt->view_of < 0 && dtype_ok(vt->dtype, false) &&
        gg_same_dims(vt, x) && g->t[an->in[0]].dtype == x->dtype && g->t[an->in[1]].dtype == x->dtype &&
        same_layout(&g->t[an->in[0]], x) && same_layout(&g->t[an->in[1]], x))
        *add = q;
    else if (vt->dtype != x->dtype || !same_layout(vt, x))
        return false;
    *relu = p;
    return true;
}

/* Build the ng_dims of the canonical dims selected by `want_row` (-1 = all),
 * sorted by decreasing stride of operand `key`, size-1 dims dropped, and
 * mergeable neighbours merged.  False when more than NG_MAXD dims remain. */
static bool make_dims(const canon *c, int want_row, int par_only, int key, ng_dims *out)
{
    int idx[CAN_MAX], n = 0;
    for (int i = 0; i < c->n; i++) {
        if (c->size[i] == 1)
            continue;
        if (par_only == 1 && c->st[NG_PAR][i] == 0)
            continue;
        if (par_only == 0 && c->st[NG_PAR][i] != 0)
            continue;
        if (par_only < 0 && want_row >= 0 && (int)c->row[i] != want_row)
            continue;
        idx[n++] = i;
    }
    /* stable insertion sort: larger |stride of key| first */
    for (int i = 1; i < n; i++) {
        int v = idx[i], j = i - 1;
        int64_t sv = llabs(c->st[key][v]);
        while (j >= 0 && llabs(c->st[key][idx[j]]) < sv) {
            idx[j + 1] = idx[j];
            j--;
        }
        idx[j + 1] = v;
    }
    ng_dims d;
    memset(&d, 0, sizeof d);
    int m = 0;
    int64_t size[CAN_MAX], st[NG_NOPS][CAN_MAX];
    for (int i = 0; i < n; i++) {
        int v = idx[i];
        if (m > 0) {
            bool merge = true;
            for (int k = 0; k < NG_NOPS && merge; k++)
                merge = st[k][m - 1] == c->st[k][v] * c->size[v];
            if (merge) {
                size[m - 1] *= c->size[v];
                for (int k = 0; k < NG_NOPS; k++)
                    st[k][m - 1] = c->st[k][v];
                continue;
            }
        }
        size[m] = c->size[v];
        for (int k = 0; k < NG_NOPS; k++)
            st[k][m] = c->st[k][v];
        m++;
    }
    if (m > NG_MAXD)
        return false;
    d.n = m;
    for (int i = 0; i < m; i++) {
        d.size[i] = size[i];
        for (int k = 0; k < NG_NOPS; k++)
            d.stride[k][i] = st[k][i];
    }
    *out = d;
    return true;
}

static int64_t dims_count(const ng_dims *d)
{
    int64_t n = 1;
    for (int i = 0; i < d->n; i++)
        n *= d->size[i];
    return n;
}

/* Reduce geometry: threads along the rows when the rows are the
 * contiguous dim; chunks so the grid fills the device. */
static void plan_reduce(ng_job *j, int sm_count)
{
    j->O = dims_count(&j->outer);
    j->Q = dims_count(&j->inner);
    bool outer_unit = j->outer.n > 0 && llabs(j->outer.stride[NG_X][j->outer.n - 1]) == 1;
    bool inner_unit = j->inner.n > 0 && llabs(j->inner.stride[NG_X][j->inner.n - 1]) == 1;
    j->col = outer_unit && !inner_unit;
    int64_t target = 8 * (int64_t)(sm_count > 0 ? sm_count : 132);
    int64_t oblocks = j->col ? (j->O + 31) / 32 : j->O, minchunk = j->col ? 64 : 2048;
    int64_t by_work = (j->Q + minchunk - 1) / minchunk, by_fill = (target + oblocks - 1) / oblocks;
    int64_t ns = by_work < by_fill ? by_work : by_fill;
    if (ns < 1)
        ns = 1;
    if (ns > 65535)
        ns = 65535;
    j->chunk = (j->Q + ns - 1) / ns;
    if (j->chunk < 1)
        j->chunk = 1;
    j->nsplit = (int)((j->Q + j->chunk - 1) / j->chunk);
    if (j->nsplit < 1)
        j->nsplit = 1;
}

/* the L2 order's range of x (plan_cl): ResNet-50 N=256's 13-26 MB batchnorms (14x14, 7x7; the three
 * launches anyway) and its 411 MB ones (stem, 256@56) keep the order before */
#define CL_L2_MIN_BYTES ((int64_t)32 << 20)
#define CL_L2_MAX_BYTES ((int64_t)256 << 20)

/* Batchnorm training forward / backward over channels-last x (norm_cl.cu):
 * the rows (channels) are one dim of stride 1 and the reduced dims one run
 * of rows in every x-shaped operand, all of x's dtype.  The splits: one wave
 * of the resident 256-thread blocks (NG_CL_BLOCKS per SM), each thread at
 * least two rounds of loads. */
static bool plan_cl(norm_plan *np, const ggraph *g, int sm_count)
{
    ng_job *j = &np->stats;
    /* A/B switch: the split path */
    if ((np->kind != NK_BN && np->kind != NK_BN_BWD) || env_on("XDNN_NORM_NO_CL"))
        return false;
    if (j->outer.n != 1 || j->inner.n != 1)
        return false;
    const int fwd[] = {NG_X, NG_Y, NG_DY}, bwd[] = {NG_X, NG_DY, NG_DX};
    const int *ops = np->kind == NK_BN ? fwd : bwd;
    int nops = np->kind == NK_BN ? (np->tid[NG_DY] >= 0 ? 3 : 2) : 3; /* the forward's residual too */
    xdnn_dtype xt = g->t[np->tid[NG_X]].dtype;
    for (int q = 0; q < nops; q++) {
        int k = ops[q];
        if (np->tid[k] < 0 || g->t[np->tid[k]].dtype != xt || j->outer.stride[k][0] != 1 ||
            j->inner.stride[k][0] < j->O)
            return false;
    }
    int64_t V = 16 / (int64_t)xdnn_dtype_size(xt), cv = (j->O + V - 1) / V, tx = 1;
    while (tx < cv && tx < 32)
        tx <<= 1;
    int64_t ty = NG_CL_THREADS / tx, cblocks = (cv + tx - 1) / tx;
    /* A/B switch: XDNN_NORM_CL_PDL=0 the finalize and apply launched plainly
     * (not as dependent launches) */
    const char *ep = getenv("XDNN_NORM_CL_PDL");
    j->cl_pdl = ep && *ep == '0' ? 0 : 1;
    /* The persistent launch's second read of x (and dy) from L2 (session 13; kernels/norm_cl1.cu): pass 1
     * walks each split's rows upward, all splits at once, so L2 holds the top of every split when the apply
     * starts; the apply walked the re-read rows upward too, reading first what L2 had lost and evicting, with
     * its own reads and stores, the tops before it got there.  With cl_l2 it walks them downward, loads them
     * and stores y / dx evict-first (the lines it has used go before the ones it still needs), and pass 1
     * loads the rows it holds in shared memory evict-first.  For x past CL_L2_MIN_BYTES (below it x stays in
     * L2 whole either way) up to CL_L2_MAX_BYTES: on ResNet-50 N=256's shapes (bench/RESULTS-norm.md, session
     * 13) the 51-103 MB rows ran 1.7-4 % faster, the 411 MB backward 1.2 % slower.  The three launches
     * (norm_cl.cu) ignore it (no gain there).  XDNN_NORM_CL_L2=0 | 1 forces it off / on. */
    const char *el = getenv("XDNN_NORM_CL_L2");
    const int64_t xbytes = j->Q * j->O * (int64_t)xdnn_dtype_size(xt);
    j->cl_l2 = el && *el ? strcmp(el, "0") != 0 : xbytes > CL_L2_MIN_BYTES && xbytes <= CL_L2_MAX_BYTES;
    int64_t target = NG_CL_BLOCKS * (int64_t)(sm_count > 0 ? sm_count : 132);
    int64_t ns = (target + cblocks - 1) / cblocks, min_rows = 2 * NG_CL_UNROLL * ty;
    int64_t by_work = (j->Q + min_rows - 1) / min_rows;
    if (ns > by_work)
        ns = by_work;
    if (ns < 1)
        ns = 1;
    if (ns > 65535)
        ns = 65535;
    j->chunk = (j->Q + ns - 1) / ns;
    j->nsplit = (int)((j->Q + j->chunk - 1) / j->chunk);
    np->cl = true;
    return true;
}

/* One persistent launch instead of the three (kernels/norm_cl1.cu) when it
 * fits (C at most 256 channel vectors a block, one block per SM): one split
 * per SM (one 512-thread block each), its rows held in shared memory as far
 * as they fit, the rest read a second time.  Where it pays, from ResNet-50
 * N=256's 107 batchnorm partitions on the H100 (bench/RESULTS-norm.md,
 * 2026-11-24 session 9): every batchnorm whose split does not fit whole
 * (-4 to -22 us a partition), but a forward with a fused residual only while
 * a block re-reads at most as many rows as it holds (CL1_REREAD_RES; past
 * that its apply, three streams, ran 5-14 us slower); the ones held whole
 * (12.8 and 25.7 MB) ran 1-4 us slower than the three dependent launches,
 * so they keep those.  XDNN_NORM_CL1=0 never, =all at every size;
 * XDNN_NORM_CL1_REREAD=f the re-read limit for every batchnorm;
 * XDNN_NORM_CL1_ROWS=n holds at most n rows a block (the tests of the
 * re-read rows and the limit).  The plan sizes with Hopper's 227 KiB of
 * shared memory a block; the launcher with the device's own (a smaller one
 * re-reads more rows), and falls back to the three launches when the grid
 * would not be resident at once.  Forward activations other than relu and
 * the backward with a fused residual stay on the three launches. */
#define CL1_REREAD 1e30
#define CL1_REREAD_RES 1.0
enum { CL1_SMEM_PLAN = 232448 };
static void plan_cl1(norm_plan *np, const ggraph *g, int sm_count)
{
    ng_job *j = &np->stats;
    j->cl1 = 0;
    j->cl1_rows = -1;
    const char *e = getenv("XDNN_NORM_CL1"), *er = getenv("XDNN_NORM_CL1_REREAD"), *en = getenv("XDNN_NORM_CL1_ROWS");
    const bool bwd = np->kind == NK_BN_BWD;
    if (!np->cl || np->gen_splits || j->join || (e && *e == '0')) /* norm_cl1 knows no fused join */
        return;
    if (bwd ? np->tid[NG_Y] >= 0 : j->act != NGACT_NONE && j->act != NGACT_RELU)
        return;
    const int64_t V = 16 / (int64_t)xdnn_dtype_size(g->t[np->tid[NG_X]].dtype), cv = (j->O + V - 1) / V;
    int64_t tx = 1;
    while (tx < cv && tx < 32)
        tx <<= 1;
    const int64_t sms = sm_count > 0 ? sm_count : 132, cblocks = (cv + tx - 1) / tx;
    if (cblocks > sms)
        return;
    const int64_t ns = sms / cblocks, chunk = (j->Q + ns - 1) / ns;
    const int64_t fixed = NG_CL1_THREADS / 2 * (2 * V + 1) * 4, rowb = tx * 16 * (bwd ? 2 : 1);
    int64_t held = (CL1_SMEM_PLAN - fixed) / rowb;
    if (en && *en) {
        j->cl1_rows = atoll(en);
        if (held > j->cl1_rows)
            held = j->cl1_rows;
    }
    const bool res = !bwd && np->tid[NG_DY] >= 0;
    const double reread = er && *er ? atof(er) : res ? CL1_REREAD_RES : CL1_REREAD;
    if (!(e && strcmp(e, "all") == 0) && (held >= chunk || (double)(chunk - held) > reread * (double)held))
        return;
    j->cl1 = 1;
    np->cl1_held = held >= chunk;
}

static size_t align256(size_t v) { return (v + 255) / 256 * 256; }

static int dt_bytes(xdnn_dtype t) { return t == XDNN_F32 ? 4 : 2; }

/* The rows of t along its last dim: stride 1 there, the other dims one run
 * of rows `*ld` elements apart (size-1 dims skipped). */
static bool last_axis_rows(const gtensor *t, int64_t *ld)
{
    int r = t->rank;
    int64_t D = t->dims[r - 1], next = 0;
    *ld = D;
    if (D > 1 && t->strides[r - 1] != 1)
        return false;
    bool first = true;
    for (int i = r - 2; i >= 0; i--) {
        if (t->dims[i] == 1)
            continue;
        if (first)
            *ld = t->strides[i], next = t->strides[i] * t->dims[i], first = false;
        else if (t->strides[i] != next)
            return false;
        else
            next *= t->dims[i];
    }
    return true;
}

/* A reduce partition that is one softmax / log_softmax node over the last
 * axis of contiguous rows (norm_warp.cu's k_warp_softmax); others (a fused
 * prologue, another axis, longer rows) stay on reduce_nvrtc. */
static bool softmax_rows(const gplan *pl, const gpart *p, norm_plan *np, char *why, size_t len)
{
    const ggraph *g = pl->g;
    const gnode *n = &g->n[p->anchor];
    if (n->kind != GN_SOFTMAX)
        GPU_REFUSE("%s: of the reduce partitions only softmax / log_softmax runs here", n->op);
    if (p->nnodes != 1)
        GPU_REFUSE("%s: a fused prologue (%d nodes) runs on reduce_nvrtc", n->op, p->nnodes);
    if (env_on("XDNN_NORM_NO_WARP")) /* A/B switch: the warp rows off */
        GPU_REFUSE("%s: XDNN_NORM_NO_WARP is set", n->op);
    /* a dynamic plan keeps its engines across resizes (plan_dynamic.c): the
     * row length may grow past the warp rows' limit, reduce_nvrtc takes any */
    if (g->sizes_as_args)
        GPU_REFUSE("%s: a plan with dynamic sizes keeps reduce_nvrtc (rows may outgrow %d elements)", n->op,
                   NG_WARP_ROW_MAX);
    if (n->nin < 1 || n->in[0] < 0 || n->out < 0)
        GPU_REFUSE("%s: input or output missing", n->op);
    const gtensor *x = &g->t[n->in[0]], *y = &g->t[n->out];
    if (x->is_scalar || !dtype_ok(x->dtype, false) || y->dtype != x->dtype)
        GPU_REFUSE("%s: x and y must share one dtype of f32, f16, bf16, got %s and %s", n->op,
                   gg_dtype_name(x->dtype), gg_dtype_name(y->dtype));
    if (n->axis != x->rank - 1)
        GPU_REFUSE("%s: attribute 'axis' must be the last axis (%d), got %d", n->op, x->rank - 1, n->axis);
    int64_t D = x->dims[x->rank - 1];
    if (x->numel == 0 || D > NG_WARP_ROW_MAX)
        GPU_REFUSE("%s: rows of %lld elements; the warp rows take 1 to %d", n->op, (long long)D, NG_WARP_ROW_MAX);
    if (!gg_same_dims(x, y) || !last_axis_rows(x, &np->ldx) || !last_axis_rows(y, &np->ldy))
        GPU_REFUSE("%s: x and y must be rows contiguous along the last axis", n->op);
    np->kind = n->log_softmax ? NK_LSM : NK_SM;
    np->tid[NG_X] = n->in[0], np->tid[NG_Y] = n->out;
    np->numel = x->numel;
    np->D = D;
    np->rows = x->numel / D;
    np->warp_rows = true;
    return true;
}

/* The nodes of partition p behind its norm anchor (partition.c
 * fuse_norm_epilogues): the residual add and its other operand r, and the
 * activation; false when p holds anything else. */
static bool norm_epilogue(const ggraph *g, const gpart *p, int *res_node, int *res_in, int *act_node)
{
    int dx = gpu_norm_fusable_dx(g, p->anchor), cur = gpu_norm_fusable_y(g, p->anchor);
    if (dx >= 0)
        cur = dx;
    for (int step = 1; step < p->nnodes; step++) {
        int e = -1; /* the node of p reading cur */
        for (int i = 0; i < p->nnodes && e < 0; i++) {
            const gnode *m = &g->n[p->nodes[i]];
            for (int j = 0; j < m->nin; j++)
                if (m->in[j] == cur && p->nodes[i] != p->anchor)
                    e = p->nodes[i];
        }
        if (e < 0 || cur < 0)
            return false;
        int r = *res_node < 0 && *act_node < 0 ? gpu_norm_res_add(g, e, cur) : -1;
        bool res_ok = r >= 0 && (dx >= 0 || gpu_norm_fusable_res(g, p->anchor));
        if (res_ok) {
            *res_node = e, *res_in = r;
        } else if (dx < 0 && *act_node < 0 && gpu_norm_act(g, e) != NGACT_NONE && g->n[e].in[0] == cur) {
            *act_node = e;
        } else {
            return false;
        }
        cur = g->n[e].out;
    }
    return dx < 0 || *act_node < 0;
}

/* softmax_bwd / log_softmax_bwd on the warp rows (kernels/softmax_warp_bwd.cu,
 * session 12: y and dy read once, one reduction a row, dx written once)
 * instead of the split reduction's three launches: the reduced axis one run
 * of stride 1 in y, dy and dx (or one element), all of one dtype, rows of at
 * most NG_SMB_ROW_BYTES.  Any outer strides (the launcher takes 16-byte loads
 * where every row is aligned, element loads otherwise).  The default;
 * XDNN_SOFTMAX_BWD_ROWS=0 keeps the split reduction (the A/B). */
static bool smb_rows_fit(const norm_plan *np, const ng_job *rows, const ggraph *g)
{
    if (!env_default_on("XDNN_SOFTMAX_BWD_ROWS"))
        return false;
    const int ops[] = {NG_X, NG_DY, NG_DX};
    const xdnn_dtype xt = g->t[np->tid[NG_X]].dtype;
    if (rows->inner.n > 1 || np->D * dt_bytes(xt) > NG_SMB_ROW_BYTES || np->rows > 0x7fffffffLL)
        return false;
    for (int q = 0; q < 3; q++)
        if (np->tid[ops[q]] < 0 || g->t[np->tid[ops[q]]].dtype != xt ||
            (rows->inner.n == 1 && rows->inner.stride[ops[q]][0] != 1))
            return false;
    return true;
}

/* Groups v2 (session 12, the default since session 13; XDNN_GROUPNORM_V2=0: the split path): group / instance
 * norm over packed NCHW x (group (n, g) one contiguous run of D = C/G * S
 * elements in x, y, dy, dx of x's dtype) on kernels/norm_group.cu.  One
 * block a group holding it in shared memory (the backward: x and dy) when it
 * fits (NG_GN_ROW_BYTES / NG_GN_BWD_ROW_BYTES with its channels'
 * parameters) and the groups fill the device (two a SM or more: bf16
 * 64x256x56x56 / 32 groups is 2048 groups of 50 KB), else blocks splitting
 * each group (Stable Diffusion's 1x320x64x64: 32 groups of 40960) with a
 * second pass over x (the backward: a warp per (n, c) for its sums, then dx
 * in the same chunks).  Packed NHWC takes the split paths' scalar loops (a
 * group: CG channels at each position, C apart).  False (the generic path
 * plans as before) for anything else: other strides, mixed dtypes, a fused
 * residual, statistics not packed, over NG_GN_MAX_CG channels a group. */
/* t is channels last and packed: C (dim 1) of stride 1, then the spatial dims
 * row-major, then N (size-1 dims ignored). */
static bool packed_channels_last(const gtensor *t)
{
    if (t->rank < 2 || (t->dims[1] > 1 && t->strides[1] != 1))
        return false;
    int64_t want = t->dims[1];
    for (int q = t->rank - 1; q >= 0; q--) { /* W, H, ..., then N */
        if (q == 1)
            continue;
        if (t->dims[q] > 1 && t->strides[q] != want)
            return false;
        want *= t->dims[q];
    }
    return true;
}

static bool plan_gn(norm_plan *np, const ggraph *g, const gtensor *x, int64_t G, int sm_count)
{
    const int *tid = np->tid;
    const bool bwd = is_bwd(np->kind);
    const int xk[] = {NG_X, bwd ? NG_DY : NG_Y, bwd ? NG_DX : NG_X};
    bool nchw = true, nhwc = true; /* every x-shaped operand packed in one of the two */
    for (int q = 0; q < 3; q++) {
        if (tid[xk[q]] < 0 || g->t[tid[xk[q]]].dtype != x->dtype)
            return false;
        nchw = nchw && dense_row_major(&g->t[tid[xk[q]]]);
        nhwc = nhwc && packed_channels_last(&g->t[tid[xk[q]]]);
    }
    if (!nchw && !nhwc)
        return false;
    if (tid[bwd ? NG_Y : NG_DY] >= 0) /* a fused residual: not on these kernels */
        return false;
    const int64_t N = x->dims[0], C = x->dims[1], CG = C / G, S = x->numel / (N * C), D = CG * S;
    if (CG > NG_GN_MAX_CG || D > 0x7fffffffLL || np->rows != N * G || np->rows > 0x7fffffffLL)
        return false;
    const int pk[] = {NG_SC, NG_BI, NG_DSC, NG_DBI}, sk[] = {NG_MEAN, NG_INV};
    for (int q = 0; q < 4; q++) /* one parameter a channel, or one for all, or none */
        if (tid[pk[q]] >= 0 && g->t[tid[pk[q]]].numel != C && g->t[tid[pk[q]]].numel != 1)
            return false;
    for (int q = 0; q < 2; q++) /* one statistic a group, packed (index n * G + g) */
        if (tid[sk[q]] >= 0 ? !dense_row_major(&g->t[tid[sk[q]]]) : bwd)
            return false;
    ng_gn_job *j = &np->gnj;
    memset(j, 0, sizeof *j);
    const int *dt = np->stats.t.dt;
    j->dt = (int)x->dtype;
    j->sc_dt = dt[NG_SC], j->bi_dt = dt[NG_BI], j->mean_dt = dt[NG_MEAN], j->inv_dt = dt[NG_INV];
    j->dsc_dt = dt[NG_DSC], j->dbi_dt = dt[NG_DBI];
    j->sc_st = tid[NG_SC] >= 0 ? chan_stride(&g->t[tid[NG_SC]]) : 0;
    j->bi_st = tid[NG_BI] >= 0 ? chan_stride(&g->t[tid[NG_BI]]) : 0;
    j->dsc_st = tid[NG_DSC] >= 0 ? chan_stride(&g->t[tid[NG_DSC]]) : 0;
    j->dbi_st = tid[NG_DBI] >= 0 ? chan_stride(&g->t[tid[NG_DBI]]) : 0;
    j->pg_one = (tid[NG_DSC] >= 0 && g->t[tid[NG_DSC]].numel == 1) ||
                (tid[NG_DBI] >= 0 && g->t[tid[NG_DBI]].numel == 1);
    j->N = N, j->C = C, j->G = G, j->CG = CG, j->S = S, j->D = D, j->rows = N * G;
    j->nhwc = !nchw; /* NHWC: the split paths' scalar loops */
    j->eps = np->stats.eps, j->act = np->stats.act, j->act_dt = np->stats.act_dt;
    const int64_t V = 16 / dt_bytes(x->dtype), sms = sm_count > 0 ? sm_count : 132;
    j->vec = D % V == 0 && !j->nhwc;
    /* a block a group holding it (backward: x and dy) on chip; XDNN_GROUPNORM_V2_SPLIT=1: never (the A/B) */
    const int64_t row_bytes = bwd ? 2 * D * dt_bytes(x->dtype) + CG * 12 : D * dt_bytes(x->dtype) + CG * 8;
    j->row_smem = j->vec && row_bytes <= (bwd ? NG_GN_BWD_ROW_BYTES : NG_GN_ROW_BYTES) && j->rows >= 2 * sms &&
                  !env_on("XDNN_GROUPNORM_V2_SPLIT");
    /* the split: a wave of 256-thread blocks (8 a SM), each thread 4 vectors or more */
    const int64_t minchunk = (int64_t)NG_GN_THREADS * V * 4;
    int64_t ns = (D + minchunk - 1) / minchunk, by_fill = (8 * sms + j->rows - 1) / j->rows;
    if (ns > by_fill)
        ns = by_fill;
    ns = ns < 1 ? 1 : ns > 65535 ? 65535 : ns;
    j->chunk = ((D + ns - 1) / ns + V - 1) / V * V;
    j->nsplit = (int)((D + j->chunk - 1) / j->chunk);
    np->gn = true;
    np->off_part = 0;
    np->ws_bytes = align256((size_t)(bwd ? N * C * 2 : j->rows * j->nsplit * 4) * sizeof(float));
    return true;
}

bool gpu_norm_analyze(const gplan *pl, const gpart *p, int sm_count, norm_plan *np, char *why, size_t len)
{
    memset(np, 0, sizeof *np);
    for (int k = 0; k < NG_NOPS; k++)
        np->tid[k] = -1;
    np->act_node = np->join_relu = np->join_add = -1;
    if (p->kind == GP_REDUCE && p->anchor >= 0)
        return softmax_rows(pl, p, np, why, len);
    if (p->kind != GP_SINGLE || p->anchor < 0 || p->nnodes > 3)
        GPU_REFUSE("needs a norm node (and at most a residual add and an activation), got %s with %d nodes",
                   gpart_kind_name(p->kind), p->nnodes);
    const ggraph *g = pl->g;
    const gnode *n = &g->n[p->anchor];
    /* what partition.c fused behind the norm: the `dx + r` of a layer/rms backward, or
     * on a forward's y an activation, or (batchnorm) `y + r` then optionally an activation */
    int res_node = -1, res_in = -1, njoin = 0;
    if (p->nnodes > 1 && gpu_norm_join(g, p->anchor, &np->join_relu, &np->join_add)) {
        /* a batchnorm backward with its join (partition.c fuse_norm_joins): exactly those nodes */
        njoin = 1 + (np->join_add >= 0);
        for (int i = 0; i < p->nnodes; i++)
            if (p->nodes[i] != p->anchor && p->nodes[i] != np->join_relu && p->nodes[i] != np->join_add)
                njoin = -1;
        if (njoin < 0 || p->nnodes != 1 + njoin)
            GPU_REFUSE("%s: a batchnorm backward runs with its relu_bwd join (and the add before it) and "
                       "nothing else, got %d nodes", n->op, p->nnodes);
    } else {
        np->join_relu = np->join_add = -1;
    }
    if (p->nnodes > 1 && !njoin && !norm_epilogue(g, p, &res_node, &res_in, &np->act_node))
        GPU_REFUSE("%s: only a forward normalization followed by relu, silu or gelu on its y, a batchnorm followed "
                   "by an add to its y (then optionally one of those), or a layer/rms backward followed by an add "
                   "to its dx, runs as one partition", n->op);
    norm_kind kind = gpu_norm_kind(n->op);
    np->kind = kind;
    if (kind == NK_NONE)
        GPU_REFUSE("op %s is not a normalization or softmax_bwd", n->op);
    if (!n->ir)
        GPU_REFUSE("%s: node %s has no IR node (attributes unknown)", n->op, n->name);
    const op_desc *desc = op_get(n->ir->op);
    int *tid = np->tid;
    int nres = n->nouts > 0 ? n->nouts : 1;
    int res0 = n->nouts > 0 ? n->outs[0] : n->out;
#define IN(i) (n->nin > (i) ? n->in[i] : -1)
#define RES(i) ((i) == 0 ? res0 : (n->nouts > (i) ? n->outs[i] : -1))
    switch (kind) {
    case NK_BN:
        tid[NG_X] = IN(0), tid[NG_SC] = IN(1), tid[NG_BI] = IN(2);
        tid[NG_Y] = RES(0), tid[NG_MEAN] = RES(1), tid[NG_INV] = RES(2);
        if (nres == 5)
            tid[NG_RM] = IN(3), tid[NG_RV] = IN(4), tid[NG_RMO] = RES(3), tid[NG_RVO] = RES(4);
        break;
    case NK_BN_INFER:
        tid[NG_X] = IN(0), tid[NG_SC] = IN(1), tid[NG_BI] = IN(2), tid[NG_MEAN] = IN(3), tid[NG_INV] = IN(4);
        tid[NG_Y] = RES(0);
        break;
    case NK_LN: case NK_GN: case NK_IN:
        tid[NG_X] = IN(0), tid[NG_SC] = IN(1), tid[NG_BI] = IN(2);
        tid[NG_Y] = RES(0), tid[NG_MEAN] = RES(1), tid[NG_INV] = RES(2);
        break;
    case NK_RMS:
        tid[NG_X] = IN(0), tid[NG_SC] = IN(1), tid[NG_BI] = IN(2);
        tid[NG_Y] = RES(0), tid[NG_INV] = RES(1);
        break;
    case NK_BN_BWD: case NK_LN_BWD: case NK_GN_BWD: case NK_IN_BWD:
        tid[NG_DY] = IN(0), tid[NG_X] = IN(1), tid[NG_SC] = IN(2), tid[NG_MEAN] = IN(3), tid[NG_INV] = IN(4);
        tid[NG_DX] = RES(0), tid[NG_DSC] = RES(1), tid[NG_DBI] = RES(2);
        break;
    case NK_RMS_BWD:
        tid[NG_DY] = IN(0), tid[NG_X] = IN(1), tid[NG_SC] = IN(2), tid[NG_INV] = IN(3);
        tid[NG_DX] = RES(0), tid[NG_DSC] = RES(1), tid[NG_DBI] = RES(2);
        break;
    case NK_SMB: case NK_LSMB:
        tid[NG_DY] = IN(0), tid[NG_X] = IN(1), tid[NG_DX] = RES(0);
        break;
    case NK_SM: case NK_LSM: case NK_NONE: /* softmax: softmax_rows */
        break;
    }
#undef IN
#undef RES
    int act_dt = 0, res_dt = 0;
    if (res_node >= 0 && is_bwd(kind)) { /* dx is rounded, r added, and the add's result stored */
        res_dt = (int)g->t[tid[NG_DX]].dtype;
        tid[NG_Y] = res_in;
        tid[NG_DX] = g->n[res_node].out;
    } else if (res_node >= 0) { /* y is rounded, r (in NG_DY's slot) added, the sum stored or activated */
        res_dt = tid[NG_Y] >= 0 ? (int)g->t[tid[NG_Y]].dtype : 0;
        tid[NG_DY] = res_in;
        tid[NG_Y] = g->n[res_node].out;
    }
    if (np->act_node >= 0) { /* y (or the sum) goes through the activation: the partition stores its result */
        act_dt = tid[NG_Y] >= 0 ? (int)g->t[tid[NG_Y]].dtype : 0;
        tid[NG_Y] = g->n[np->act_node].out;
    }
    if (tid[NG_X] < 0)
        GPU_REFUSE("%s: input x is missing", n->op);
    const gtensor *x = &g->t[tid[NG_X]];
    int out_main = is_bwd(kind) || is_smb(kind) ? tid[NG_DX] : tid[NG_Y];
    if (out_main < 0)
        GPU_REFUSE("%s: the main result is discarded", n->op);
    /* dtypes: x-shaped tensors f32/f16/bf16; parameters and statistics also f64 */
    for (int k = 0; k < NG_NOPS; k++) {
        if (tid[k] < 0)
            continue;
        const gtensor *t = &g->t[tid[k]];
        bool xlike = k == NG_X || k == NG_Y || k == NG_DY || k == NG_DX;
        if (t->is_scalar)
            GPU_REFUSE("%s: operand '%s' is a scalar; expected a tensor", n->op, t->name);
        if (!dtype_ok(t->dtype, !xlike))
            GPU_REFUSE("%s: tensor '%s' has dtype %s; norm_welford takes f32, f16, bf16", n->op, t->name,
                 gg_dtype_name(t->dtype));
        if (xlike && !gg_same_dims(t, x))
            GPU_REFUSE("%s: tensor '%s' must have x's dims", n->op, t->name);
    }
    int r = x->rank;
    np->numel = x->numel;
    np->index64 = x->numel > 0x7fffffffLL;
    if (x->numel == 0)
        GPU_REFUSE("%s: x is empty", n->op);

    /* attributes */
    double eps = 0, momentum = 0;
    int k_trail = 0, axis = -1;
    int64_t G = 1;
    if (op_attr_index(desc, "eps") >= 0)
        eps = op_attr_float(n->ir, desc, "eps");
    if (kind == NK_BN)
        momentum = op_attr_float(n->ir, desc, "momentum");
    if (is_feature(kind)) {
        k_trail = norm_trailing_axes(n->ir, desc, r);
        if (k_trail < 1)
            GPU_REFUSE("%s: attribute 'axes' must name trailing axes of x (rank %d)", n->op, r);
    }
    if (is_bn(kind) || is_group(kind)) {
        if (r < 2)
            GPU_REFUSE("%s: x must have rank >= 2, got %d", n->op, r);
    }
    if (is_group(kind)) {
        int64_t C = x->dims[1];
        G = op_attr_index(desc, "groups") >= 0 ? op_attr_int(n->ir, desc, "groups") : C;
        if (G < 1 || C % G != 0)
            GPU_REFUSE("%s: attribute 'groups' must divide C = %lld, got %lld", n->op, (long long)C, (long long)G);
    }
    if (is_smb(kind)) {
        if (!op_axis(r, op_attr_int(n->ir, desc, "axis"), &axis))
            GPU_REFUSE("%s: attribute 'axis' out of range for rank %d", n->op, r);
    }

    /* canonical dims */
    canon c;
    memset(&c, 0, sizeof c);
    for (int d = 0; d < r; d++) {
        bool split = is_group(kind) && d == 1;
        int parts = split ? 2 : 1;
        for (int s = 0; s < parts; s++) {
            int i = c.n++;
            c.xdim[i] = d;
            int64_t mult = 1;
            if (split) {
                c.size[i] = s == 0 ? G : x->dims[1] / G;
                mult = s == 0 ? x->dims[1] / G : 1;
                c.row[i] = s == 0;
            } else {
                c.size[i] = x->dims[d];
                c.row[i] = is_bn(kind) ? d == 1 : is_group(kind) ? d == 0 : is_feature(kind) ? d < r - k_trail : d != axis;
            }
            for (int k = NG_X; k <= NG_DX; k++)
                if (tid[k] >= 0)
                    c.st[k][i] = g->t[tid[k]].strides[d] * mult;
            /* parameters: per channel (dim 1) or per feature (trailing dims) */
            bool pdim = (is_bn(kind) || is_group(kind)) ? d == 1 : is_feature(kind) && d >= r - k_trail;
            if (pdim) {
                const int pk[] = {NG_SC, NG_BI, NG_DSC, NG_DBI, NG_PAR};
                for (int q = 0; q < 5; q++) {
                    int k = pk[q];
                    int t = tid[k == NG_PAR ? NG_SC : k];
                    if (t < 0)
                        continue;
                    const gtensor *pt = &g->t[t];
                    if (pt->numel <= 1)
                        continue; /* one element: every channel/feature reads it */
                    if (k == NG_PAR) {
                        c.st[k][i] = mult; /* feature dims get their row-major coefficients below */
                    } else if (is_feature(kind)) {
                        int pd = pt->rank - (r - d);
                        c.st[k][i] = pd >= 0 ? pt->strides[pd] : 0;
                    } else {
                        c.st[k][i] = chan_stride(pt) * mult;
                    }
                }
            }
        }
    }
    if (is_feature(kind) && tid[NG_SC] >= 0 && g->t[tid[NG_SC]].numel > 1) {
        int64_t coef = 1;
        for (int i = c.n - 1; i >= 0; i--)
            if (c.xdim[i] >= r - k_trail) {
                c.st[NG_PAR][i] = coef;
                coef *= c.size[i];
            }
    }
    /* flat row index over the ROW dims */
    np->rows = 1;
    for (int i = c.n - 1; i >= 0; i--)
        if (c.row[i]) {
            c.st[NG_ROW][i] = np->rows;
            np->rows *= c.size[i];
        }
    np->D = x->numel / np->rows;
    /* per-row tensors: statistics and running statistics */
    const int rk[] = {NG_MEAN, NG_INV, NG_RM, NG_RV, NG_RMO, NG_RVO};
    for (int q = 0; q < 6; q++) {
        int k = rk[q];
        if (tid[k] < 0)
            continue;
        const gtensor *t = &g->t[tid[k]];
        if (t->numel != np->rows && !(is_bn(kind) && t->numel == 1))
            GPU_REFUSE("%s: tensor '%s' has %lld elements, expected one per row (%lld)", n->op, t->name,
                 (long long)t->numel, (long long)np->rows);
        bool same_rank = t->rank == r;
        for (int i = 0; i < c.n && same_rank; i++) {
            int d = c.xdim[i];
            int64_t want = is_group(kind) && d == 1 ? G : c.row[i] ? x->dims[d] : 1;
            same_rank = t->dims[d] == want;
        }
        for (int i = 0; i < c.n; i++) {
            if (!c.row[i])
                continue;
            if (is_bn(kind))
                c.st[k][i] = chan_stride(t);
            else if (same_rank)
                c.st[k][i] = t->strides[c.xdim[i]];
            else if (dense_row_major(t))
                c.st[k][i] = c.st[NG_ROW][i];
            else
                GPU_REFUSE("%s: statistics tensor '%s' is neither shaped like the rows nor packed", n->op, t->name);
        }
    }

    /* jobs */
    bool bwd = is_bwd(kind);
    ng_job base;
    memset(&base, 0, sizeof base);
    base.rms = is_rms(kind);
    base.log_softmax = kind == NK_LSMB;
    base.eps = (float)eps;
    base.momentum = (float)momentum;
    base.D = (float)np->D;
    base.unbias = np->D > 1 ? (float)((double)np->D / (double)(np->D - 1)) : 1.0f;
    base.act = np->act_node >= 0 ? gpu_norm_act(g, np->act_node) : NGACT_NONE;
    base.act_dt = act_dt;
    base.res_dt = res_dt;
    for (int k = 0; k < NG_NOPS; k++)
        base.t.dt[k] = tid[k] >= 0 ? (int)g->t[tid[k]].dtype : 0;
    int okey = bwd || is_smb(kind) ? NG_DX : NG_Y;
    if (!make_dims(&c, -1, -1, okey, &base.all))
        GPU_REFUSE("%s: x has too many non-mergeable dims (max %d)", n->op, NG_MAXD);
    ng_job rows = base;
    if (!make_dims(&c, 1, -1, NG_X, &rows.outer) || !make_dims(&c, 0, -1, NG_X, &rows.inner))
        GPU_REFUSE("%s: x has too many non-mergeable dims (max %d)", n->op, NG_MAXD);
    plan_reduce(&rows, sm_count);
    np->apply_mode = bwd ? NGA_BWD : is_smb(kind) ? NGA_SMB : NGA_FWD;
    if (kind == NK_BN_INFER || bwd) {
        np->load = rows;
        np->load.fin = NGF_LOAD;
    }
    np->stats = rows;
    if (bwd) {
        np->stats.mode = NGR_BWD;
        np->stats.fin = NGF_SUMS;
        np->has_pgrad = tid[NG_DSC] >= 0 || tid[NG_DBI] >= 0;
        bool sc_full = tid[NG_SC] >= 0 && g->t[tid[NG_SC]].numel > 1;
        np->pgrad_from_rows = kind == NK_BN_BWD && sc_full;
        np->stats.write_pgrad = np->pgrad_from_rows;
        if (np->has_pgrad && !np->pgrad_from_rows) {
            np->pgrad = base;
            if (!make_dims(&c, -1, 1, NG_X, &np->pgrad.outer) || !make_dims(&c, -1, 0, NG_X, &np->pgrad.inner))
                GPU_REFUSE("%s: x has too many non-mergeable dims (max %d)", n->op, NG_MAXD);
            plan_reduce(&np->pgrad, sm_count);
            np->pgrad.mode = NGR_BWD;
            np->pgrad.fin = NGF_SUMS;
            np->pgrad.write_pgrad = 1;
        }
    } else if (is_smb(kind)) {
        np->stats.mode = NGR_SMB;
        np->stats.fin = NGF_SUMS;
        np->smb_rows = smb_rows_fit(np, &rows, g);
    } else {
        np->stats.mode = is_rms(kind) ? NGR_SQUARES : NGR_WELFORD;
        np->stats.fin = NGF_STATS;
    }
    /* one block per row for layernorm / rmsnorm forward and backward dx:
     * the reduced dims are one contiguous run of x, y (dy, dx) of x's dtype */
    bool fwd_row = kind == NK_LN || kind == NK_RMS, bwd_row = kind == NK_LN_BWD || kind == NK_RMS_BWD;
    if ((fwd_row || bwd_row) && rows.inner.n == 1 && np->D <= NG_ROW_MAX && np->rows <= 0x7fffffffLL &&
        !getenv("XDNN_NORM_GENERIC")) {
        const int ops_fwd[] = {NG_X, NG_Y}, ops_bwd[] = {NG_X, NG_DY, NG_DX, NG_Y};
        const int *ops = fwd_row ? ops_fwd : ops_bwd;
        int nops = fwd_row ? 2 : tid[NG_Y] >= 0 ? 4 : 3; /* the backward's residual too */
        bool ok = true, vec = np->D % 4 == 0;
        for (int q = 0; q < nops && ok; q++) {
            ok = rows.inner.stride[ops[q]][0] == 1 && g->t[tid[ops[q]]].dtype == x->dtype;
            for (int i = 0; i < rows.outer.n; i++)
                vec = vec && rows.outer.stride[ops[q]][i] % 4 == 0;
        }
        np->row_fast = ok;
        if (ok)
            np->stats.vec4 = vec;
        /* the warp rows need 16-byte rows (the pointers are checked at execute) */
        int vw = 16 / dt_bytes(x->dtype);
        bool w16 = ok && np->D % vw == 0 && np->D <= NG_WARP_ROW_MAX && !env_on("XDNN_NORM_NO_WARP");
        for (int q = 0; q < nops && w16; q++)
            for (int i = 0; i < rows.outer.n; i++)
                w16 = w16 && rows.outer.stride[ops[q]][i] % vw == 0;
        np->warp_rows = w16;
    }
    /* the row backward sums dscale/dbias itself when they are per feature
     * (one element per column of the row) and the rows take vector loads */
    if (np->row_fast && bwd_row && np->has_pgrad && np->stats.vec4 && np->D <= NG_ROW_PG_MAX &&
        !env_on("XDNN_NORM_PGRAD_APART")) { /* A/B switch: set and not "0" = the separate reduce */
        bool per_col = true;
        const int pk[] = {NG_DSC, NG_DBI};
        for (int q = 0; q < 2; q++) {
            if (tid[pk[q]] < 0)
                continue;
            per_col = per_col && g->t[tid[pk[q]]].numel == np->D;
            for (int i = 0; i < rows.outer.n; i++)
                per_col = per_col && rows.outer.stride[pk[q]][i] == 0;
        }
        np->pg_fused = per_col;
        /* a few blocks per SM; the launcher takes what fits (occupancy) up to this */
        np->stats.pg_blocks = per_col ? sm_count * 8 : 0;
    }
    /* apply: 4 consecutive innermost elements per thread when they divide */
    if (!np->row_fast && np->stats.all.n > 0 && np->stats.all.size[np->stats.all.n - 1] % 4 == 0) {
        ng_dims *a = &np->stats.all;
        a->size[a->n - 1] /= 4;
        for (int k = 0; k < NG_NOPS; k++)
            a->stride[k][a->n - 1] *= 4;
        np->stats.vec4 = 1;
    }

    plan_cl(np, g, sm_count);
    if (np->join_relu >= 0) { /* the join's operands (after the dims: read through dy's strides) */
        if (!np->cl)
            GPU_REFUSE("%s: the fused relu_bwd join needs the channels-last kernels (XDNN_NORM_NO_CL unset, one "
                       "run of rows)", n->op);
        const gnode *jr = &g->n[np->join_relu];
        double jp[PW_MAX_PARAMS] = {0};
        pw_params(jr->ir, op_get(jr->op_id), jp);
        ng_job *j = &np->stats;
        j->jp0 = (float)jp[0], j->jp1 = (float)jp[1], j->jp2 = (float)jp[2];
        tid[NG_JM] = jr->in[1];
        if (np->join_add >= 0) {
            const gnode *ja = &g->n[np->join_add];
            tid[NG_JA] = ja->in[0], tid[NG_JB] = ja->in[1];
            j->join = 2;
            j->join_dt = (int)g->t[jr->in[0]].dtype;
        } else {
            tid[NG_JA] = jr->in[0];
            j->join = 1;
            j->join_dt = (int)x->dtype;
        }
        const int jk[] = {NG_JA, NG_JB, NG_JM};
        for (int q = 0; q < 3; q++)
            j->t.dt[jk[q]] = tid[jk[q]] >= 0 ? (int)x->dtype : 0;
    }
    /* genstats: one partial per 128-row M tile of the conv's store, at the workspace head (off_part 0) */
    if (p->genstats == GS_READ) {
        if (!np->cl)
            GPU_REFUSE("%s: statistics from the conv's store (genstats) need the channels-last kernels", n->op);
        np->gen_splits = (int)((np->stats.Q + KCW_BM - 1) / KCW_BM);
    }
    plan_cl1(np, g, sm_count);
    if (is_group(kind) && env_default_on("XDNN_GROUPNORM_V2") && plan_gn(np, g, x, G, sm_count))
        return true; /* kernels/norm_group.cu (plan_gn sized its workspace) */
    /* workspace: partial sums (the persistent launch: one split per SM), then six per-row f32 arrays */
    size_t part = (size_t)np->stats.nsplit * (size_t)np->stats.O * 4 * sizeof(float);
    if (np->stats.cl1 && (size_t)(sm_count > 0 ? sm_count : 132) * (size_t)np->stats.O * 4 * sizeof(float) > part)
        part = (size_t)(sm_count > 0 ? sm_count : 132) * (size_t)np->stats.O * 4 * sizeof(float);
    if ((size_t)np->gen_splits * (size_t)np->stats.O * 4 * sizeof(float) > part)
        part = (size_t)np->gen_splits * (size_t)np->stats.O * 4 * sizeof(float);
    if (np->pg_fused && (size_t)np->stats.pg_blocks * 2 * (size_t)np->D * sizeof(float) > part)
        part = (size_t)np->stats.pg_blocks * 2 * (size_t)np->D * sizeof(float);
    if (np->has_pgrad && !np->pgrad_from_rows) {
        size_t p2 = (size_t)np->pgrad.nsplit * (size_t)np->pgrad.O * 4 * sizeof(float);
        if (p2 > part)
            part = p2;
    }
    size_t off = 0;
    np->off_part = off;
    off += align256(part);
    for (int a = 0; a < 6; a++) {
        np->off_rows[a] = off;
        off += align256((size_t)np->rows * sizeof(float));
    }
    np->ws_bytes = np->row_fast && !bwd ? 0 : off;
    return true;
}

bool gpu_norm_genstats_ok(const gplan *pl, const gpart *p, const gpu_device *dev, int *x, int64_t *C, int64_t *M,
                          char *why, size_t len)
{
    gpart alone = *p; /* the plan it would make on its own */
    alone.genstats = GS_NONE;
    norm_plan np;
    if (!gpu_norm_analyze(pl, &alone, dev->sm_count, &np, why, len))
        return false;
    if (np.kind != NK_BN || !np.cl)
        GPU_REFUSE("genstats needs a training batchnorm on the channels-last kernels, got %s%s",
                   pl->g->n[p->anchor].op, np.kind == NK_BN ? " on another path" : "");
    const xdnn_dtype xt = pl->g->t[np.tid[NG_X]].dtype;
    if (xt != XDNN_F16 && xt != XDNN_BF16)
        GPU_REFUSE("genstats needs x f16 or bf16, got %s", gg_dtype_name(xt));
    *x = np.tid[NG_X];
    *C = np.stats.O;
    *M = np.stats.Q;
    return true;
}

/* ---- engine */

static bool norm_supports(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    norm_plan np;
    return gpu_norm_analyze(pl, p, dev->sm_count, &np, why, len);
}

static double norm_cost(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    /* softmax rows: one read of x, one write of y, below reduce_nvrtc's
     * (gpu_roofline_us(p, 50)), whose generated kernel reads x twice */
    if (p->kind == GP_REDUCE)
        return gpu_roofline_us(p, 50.0) * 0.75;
    /* about one extra read of x for the statistics pass */
    return gpu_roofline_us(p, 20.0) * 1.5;
}

static size_t norm_workspace(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    norm_plan np;
    char why[256];
    return gpu_norm_analyze(pl, p, dev->sm_count, &np, why, sizeof why) ? np.ws_bytes : 0;
}

static int64_t x_bytes(const norm_plan *np) { return dt_bytes((xdnn_dtype)np->stats.t.dt[NG_X]); }

/* Does a layer/rms backward on the warp rows take norm_wide_bwd.cu's block
 * per row (rows past the warp rows' NG_WARP_BWD_ROW_BYTES, unless
 * XDNN_NORM_WIDE_BWD=0 at build: the A/B against norm.cu's row kernels)?  The
 * launcher reads the same flag (stats.no_wide_bwd); this names the path in the detail. */
static bool wide_bwd(const norm_plan *np)
{
    return is_bwd(np->kind) && np->D * x_bytes(np) > NG_WARP_BWD_ROW_BYTES && np->D <= NG_WIDE_ROW_MAX &&
           !np->stats.no_wide_bwd;
}

/* Does a layer/rms backward on the warp rows take norm_warp_bwd.cu's v4, two
 * rows a barrier (rows of 4-8 warps of 2 chunks: over 2048 bytes, up to
 * NG_WARP_BWD_ROW_BYTES), unless XDNN_NORM_BWD_PAIR=0 (the A/B against v2,
 * fixed with the plan: stats.no_pair_bwd, which the launcher reads)?  This
 * names the path in the detail. */
static bool pair_bwd(const norm_plan *np)
{
    const int64_t bytes = np->D * x_bytes(np);
    return is_bwd(np->kind) && bytes > 2048 && bytes <= NG_WARP_BWD_ROW_BYTES && !np->stats.no_pair_bwd;
}

static xdnn_status norm_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d)
{
    norm_plan *np = calloc(1, sizeof *np);
    if (!np)
        return XDNN_ERR_NOMEM;
    p->priv = np;
    char why[512];
    if (!gpu_norm_analyze(c->plan, p, c->dev.sm_count, np, why, sizeof why)) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), "norm_welford: %s", why);
        return XDNN_ERR_UNSUPPORTED;
    }
    const char *wide = getenv("XDNN_NORM_WIDE_BWD"); /* the A/B of the wide-row backward, fixed with the plan */
    np->stats.no_wide_bwd = wide && strcmp(wide, "0") == 0;
    const char *pair = getenv("XDNN_NORM_BWD_PAIR"); /* the A/B of the two-rows-a-barrier backward, likewise */
    np->stats.no_pair_bwd = pair && strcmp(pair, "0") == 0;
    static const char *const acts[] = {"", ", + relu", ", + silu", ", + gelu (tanh)", ", + gelu"};
    if (np->gn) {
        const ng_gn_job *j = &np->gnj;
        if (is_bwd(np->kind) && j->row_smem)
            snprintf(np->detail, sizeof np->detail, "groups v2: a block per group, x and dy held in shared memory "
                     "(read once), dscale / dbias in order");
        else if (is_bwd(np->kind))
            snprintf(np->detail, sizeof np->detail, "groups v2: a warp per channel's sums, dx in %d chunk%s a "
                     "group, dscale / dbias in order", j->nsplit, j->nsplit > 1 ? "s" : "");
        else if (j->row_smem)
            snprintf(np->detail, sizeof np->detail, "groups v2: a block per group, held in shared memory "
                     "(x read once)%s", acts[j->act]);
        else
            snprintf(np->detail, sizeof np->detail, "groups v2: %d block%s a group (partials, then the apply)%s",
                     j->nsplit, j->nsplit > 1 ? "s" : "", acts[j->act]);
        return XDNN_OK;
    }
    snprintf(np->detail, sizeof np->detail, "%s%s%s",
             np->kind == NK_SM || np->kind == NK_LSM ? "softmax rows: a warp or a few per row, in registers"
             : np->smb_rows ? "a warp or a few per row (y and dy in registers, one reduction; 16-byte loads "
                              "where the rows are aligned)"
             : np->warp_rows && wide_bwd(np) ? "a block per row (rows staged in shared memory, 16-byte loads), "
                                               "dscale / dbias partials per block"
             : np->warp_rows && !is_bwd(np->kind) ? "a warp or a few per row (row in registers, 16-byte loads)"
             : np->warp_rows && pair_bwd(np) ? "a few warps per row (two rows a barrier, 16-byte loads)"
             : np->warp_rows && np->D * x_bytes(np) <= NG_WARP_BWD_ROW_BYTES
                 ? "a warp or a few per row (row in registers, 16-byte loads)"
             : np->pg_fused ? "rows in registers, 4-wide loads, parameter gradients in the same pass"
             : np->row_fast ? (np->stats.vec4 ? "one block per row (row in registers, 4-wide loads)"
                                            : "one block per row (row in registers)")
             : np->cl && np->stats.cl1 ? (np->cl1_held ? "channels last, one persistent launch: rows held on chip"
                                                        : "channels last, one persistent launch: rows partly held on chip")
             : np->cl ? "channels last: column partials in vectors, warp-per-channel combine, apply"
             : np->stats.col ? "split reduce, threads across rows (coalesced columns)"
                             : "split reduce, threads along rows",
             !is_bwd(np->kind) && !is_smb(np->kind) && np->tid[NG_DY] >= 0 ? ", + residual" /* smb: dy, no residual */
             : np->stats.join == 2                   ? "; dy = relu_bwd(a + b, m) in the reduce (the join)"
             : np->stats.join == 1                   ? "; dy = relu_bwd(a, m) in the reduce (the join)"
                                                     : "",
             acts[np->stats.act]);
    if (np->gen_splits) {
        size_t n = strlen(np->detail);
        snprintf(np->detail + n, sizeof np->detail - n, "; statistics from partition %d's store (genstats)",
                 p->gen_peer);
    }
    return XDNN_OK;
}

static void bind(gpu_ctx *c, const gpart *p, const norm_plan *np, ng_job *j)
{
    for (int k = 0; k < NG_NOPS; k++)
        j->t.p[k] = np->tid[k] >= 0 ? c->dptr[np->tid[k]] : NULL;
    char *ws = c->ws ? c->ws + p->ws_offset : NULL;
    float *arr[6] = {NULL};
    for (int a = 0; a < 6; a++)
        arr[a] = ws ? (float *)(void *)(ws + np->off_rows[a]) : NULL;
    j->part = ws ? (float *)(void *)(ws + np->off_part) : NULL;
    j->mean = arr[0], j->inv = arr[1], j->a = arr[2], j->b = arr[3], j->c = arr[4], j->e = arr[5];
}

#define KTRY(call, what)                                                                                   \
    do {                                                                                                   \
        int e_ = (call);                                                                                   \
        if (e_ != 0) {                                                                                     \
            diag_error(d, XDNN_ERR_DEVICE, xloc_none(), "norm_welford: %s launch for %s failed: %s", what,  \
                       p->name, cudaGetErrorString((cudaError_t)e_));                                     \
            return XDNN_ERR_DEVICE;                                                                          \
        }                                                                                                  \
    } while (0)

static xdnn_status norm_execute(gpu_ctx *c, gpart *p, cudaStream_t s, xdnn_diags_t *d)
{
    norm_plan *np = p->priv;
    void *st = (void *)s;
    ng_job j = np->stats;
    bind(c, p, np, &j);
    if (np->kind == NK_SM || np->kind == NK_LSM) {
        KTRY(ng_launch_warp_softmax(j.t.p[NG_X], j.t.p[NG_Y], (int)c->plan->g->t[np->tid[NG_X]].dtype,
                                    np->kind == NK_LSM, np->rows, np->D, np->ldx, np->ldy, st),
             "softmax rows");
        return XDNN_OK;
    }
    if (np->smb_rows) { /* -1: not launched (rows past the grid), the split path below */
        int e = ng_launch_warp_softmax_bwd(&j, np->rows, np->D, st);
        if (e != -1) {
            KTRY(e, "softmax_bwd rows");
            return XDNN_OK;
        }
    }
    if (np->gn) { /* XDNN_GROUPNORM_V2: kernels/norm_group.cu */
        ng_gn_job gj = np->gnj;
        gj.x = j.t.p[NG_X], gj.dy = j.t.p[NG_DY], gj.sc = j.t.p[NG_SC], gj.bi = j.t.p[NG_BI];
        gj.y = j.t.p[NG_Y], gj.dx = j.t.p[NG_DX], gj.mean = j.t.p[NG_MEAN], gj.inv = j.t.p[NG_INV];
        gj.dsc = j.t.p[NG_DSC], gj.dbi = j.t.p[NG_DBI], gj.part = j.part;
        KTRY(is_bwd(np->kind) ? ng_launch_gn_bwd(&gj, st) : ng_launch_gn_fwd(&gj, st), "groups v2");
        return XDNN_OK;
    }
    if (np->row_fast && !is_bwd(np->kind)) {
        int e = np->warp_rows ? ng_launch_warp_norm(&j, np->rows, np->D, st) : -1;
        if (e == -1) /* not 16-byte aligned: one block per row */
            e = ng_launch_row_fwd(&j, np->rows, np->D, st);
        KTRY(e, "row");
        return XDNN_OK;
    }
    /* the channels-last kernels read the saved statistics themselves; the
     * generic parameter-gradient reduce reads them from the workspace */
    bool pgrad_apart = np->has_pgrad && !np->pgrad_from_rows && !np->pg_fused;
    if (np->row_fast && is_bwd(np->kind) && np->warp_rows && !pgrad_apart) {
        int e = ng_launch_warp_norm_bwd(&j, np->rows, np->D, st); /* reads mean / inv itself */
        if (e != -1) {
            KTRY(e, "warp-row backward");
            return XDNN_OK;
        }
    }
    if (np->kind == NK_BN_INFER || (is_bwd(np->kind) && (!np->cl || pgrad_apart))) {
        ng_job l = np->load;
        bind(c, p, np, &l);
        KTRY(ng_launch_finalize(&l, st), "load statistics");
    }
    /* the row sums need no c/e arrays unless batchnorm writes dscale/dbias from them */
    if (is_bwd(np->kind) && !np->pgrad_from_rows)
        j.c = j.e = NULL;
    if (j.join && !j.t.p[NG_DY]) { /* partition.c fuses the join only where dy is stored */
        diag_error(d, XDNN_ERR_INTERNAL, xloc_none(), "norm_welford: %s: the join's dy has no device buffer", p->name);
        return XDNN_ERR_INTERNAL;
    }
    int one = np->cl && j.cl1 ? ng_launch_cl1(&j, np->apply_mode, st) : -1; /* -1: not launched */
    if (one != -1) {
        KTRY(one, "channels-last persistent");
    } else if (np->cl) {
        ng_job f = j; /* genstats: the conv's store wrote one partial per M tile, no reduce here */
        if (np->gen_splits)
            f.nsplit = np->gen_splits;
        else
            KTRY(ng_launch_cl_reduce(&j, st), "channels-last reduce");
        KTRY(ng_launch_cl_finalize(&f, st), "channels-last finalize");
        KTRY(ng_launch_cl_apply(&j, np->apply_mode, st), "channels-last apply");
    } else if (np->row_fast && np->pg_fused) { /* ... with dscale / dbias in the same pass */
        KTRY(ng_launch_row_bwd_pg(&j, np->rows, np->D, st), "row backward with parameter gradients");
    } else if (np->row_fast) { /* layernorm / rmsnorm backward dx */
        KTRY(ng_launch_row_bwd(&j, np->rows, np->D, st), "row backward");
    } else {
        if (np->kind != NK_BN_INFER) {
            KTRY(ng_launch_reduce(&j, np->index64, st), "reduce");
            KTRY(ng_launch_finalize(&j, st), "finalize");
        }
        ng_job a = np->stats;
        bind(c, p, np, &a);
        KTRY(ng_launch_apply(&a, np->apply_mode, np->index64, np->numel, st), "apply");
    }
    if (pgrad_apart) {
        ng_job g = np->pgrad;
        bind(c, p, np, &g);
        g.a = g.b = g.c = g.e = NULL;
        KTRY(ng_launch_reduce(&g, np->index64, st), "parameter-gradient reduce");
        KTRY(ng_launch_finalize(&g, st), "parameter-gradient finalize");
    }
    return XDNN_OK;
}

static void norm_release(gpart *p)
{
    free(p->priv);
    p->priv = NULL;
}

static const char *norm_detail(const gpart *p)
{
    const norm_plan *np = p->priv;
    return np ? np->detail : "";
}

const gpu_engine gpu_engine_norm_welford = {
    "norm_welford",
    "batch/layer/rms/group/instance norm fwd+bwd, softmax_bwd: Welford split reductions, f32 math, any strides; "
    "layer/rms forward and softmax rows: a warp or a few per row",
    norm_supports, norm_cost, norm_workspace, norm_build, norm_execute, norm_release, norm_detail,
};
