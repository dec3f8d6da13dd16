/* views.c — reshape, permute, slice, split and broadcast that strides can
 * express cost nothing: the node is dropped from the ggraph and each result
 * becomes a view (gtensor.view_of / view_offset) that reads its input's
 * storage through its own strides.  Consumers take strided operands: the
 * pointwise, reduce and softmax generators index every operand through its
 * strides, cuBLASLt takes leading dims and batch strides, the sdpa engines any
 * strides, the copy engine any strides.  Other engines see a view only when it
 * has exactly the strides the tensor had anyway (a packed reshape).
 *
 * A view is not made when: the result is a graph output or kept (the caller's
 * buffer has its own layout), a stride would be negative (a reversed slice),
 * the offset breaks the 256-byte alignment every engine may assume of a
 * buffer (cuBLASLt's default; 16 bytes when every consumer is a generated
 * kernel or a copy, which move at most 16-byte words), a reshape does not fit
 * the input's strides, or some consumer cannot take the strides.  Then the
 * node stays and copy_strided runs it, as before.
 *
 * One layout choice is made here too: a permute whose input is written only
 * for it by an engine that writes any strides (sdpa, pointwise) has that
 * input laid out so the permute's result is packed row-major; the permute,
 * and a reshape after it, are then views (the attention output
 * [B,H,S,D] -> [B,S,H*D] of a transformer block needs no copy).
 *
 * XDNN_NO_VIEWS=1 keeps every such node a copy (for bisecting). */
#include "gpu/eng_copy.h"
#include "gpu/lower.h"
#include "ops/op.h"
#include "ops/tensor_util.h"

#include <stdlib.h>
#include <string.h>

enum { VIEW_ALIGN = 256, VEC_ALIGN = 16 };

static bool is_view_op(int op)
{
    return op == OP_reshape || op == OP_permute || op == OP_slice || op == OP_split || op == OP_broadcast;
}

/* Row-major strides of dims, 0 on size-1 dims (the ggraph's convention). */
static void packed_strides(int rank, const int64_t *dims, int64_t *st)
{
    int64_t c = 1;
    for (int i = rank - 1; i >= 0; i--) {
        st[i] = dims[i] == 1 ? 0 : c;
        c *= dims[i];
    }
}

/* Strides for reshaping (xd, xs) to yd without moving data, or false (the
 * chunk walk of PyTorch's computeStride: runs of x dims that nest in memory
 * are split or merged freely, never across a gap). */
static bool reshape_strides(int xr, const int64_t *xd, const int64_t *xs, int yr, const int64_t *yd, int64_t *ys)
{
    int64_t od[XDNN_MAX_RANK], os[XDNN_MAX_RANK];
    int n = 0;
    for (int i = 0; i < xr; i++)
        if (xd[i] != 1)
            od[n] = xd[i], os[n] = xs[i], n++;
    int vd = yr - 1;
    int64_t base = n ? os[n - 1] : 1, tn = 1, vn = 1;
    for (int td = n - 1; td >= 0; td--) {
        tn *= od[td];
        if (td == 0 || os[td - 1] != tn * base) {
            while (vd >= 0 && (vn < tn || yd[vd] == 1)) {
                ys[vd] = vn * base;
                vn *= yd[vd];
                vd--;
            }
            if (vn != tn)
                return false;
            if (td > 0) {
                base = os[td - 1];
                tn = vn = 1;
            }
        }
    }
    for (; vd >= 0; vd--) /* leading 1s (or all of y when x has no dim > 1) */
        if (yd[vd] != 1)
            return false;
    return true;
}

/* Strides and offset of result r of view node n over its input x, or false. */
static bool view_of_result(const ggraph *g, const gnode *n, int r, int64_t *ys, int64_t *off)
{
    const gtensor *x = &g->t[n->in[0]], *y = &g->t[n->outs[r]];
    const op_desc *desc = op_get(n->ir->op);
    *off = x->view_of >= 0 ? x->view_offset : 0;
    int axis = 0;
    switch (n->op_id) {
    case OP_reshape:
        return x->numel == y->numel && reshape_strides(x->rank, x->dims, x->strides, y->rank, y->dims, ys);
    case OP_permute: {
        int64_t pv[XDNN_MAX_RANK];
        int np = 0;
        if (!attr_int_list(n->ir, desc, "perm", XDNN_MAX_RANK, pv, &np) || np != x->rank || y->rank != x->rank)
            return false;
        for (int d = 0; d < y->rank; d++) {
            if (!op_axis(x->rank, pv[d], &axis))
                return false;
            ys[d] = x->strides[axis];
        }
        return true;
    }
    case OP_broadcast: {
        int lead = y->rank - x->rank;
        if (lead < 0)
            return false;
        for (int d = 0; d < y->rank; d++)
            ys[d] = d >= lead && x->dims[d - lead] != 1 ? x->strides[d - lead] : 0;
        return true;
    }
    case OP_slice: {
        if (!op_axis(x->rank, op_attr_int(n->ir, desc, "axis"), &axis) || y->rank != x->rank)
            return false;
        int64_t start, step, count;
        gpu_slice_resolve(n->ir, desc, x->dims[axis], &start, &step, &count);
        memcpy(ys, x->strides, sizeof x->strides);
        ys[axis] = step * x->strides[axis];
        *off += start * x->strides[axis];
        return true;
    }
    case OP_split: {
        if (!op_axis(x->rank, op_attr_int(n->ir, desc, "axis"), &axis) || y->rank != x->rank)
            return false;
        for (int q = 0; q < r; q++) { /* the pieces before r (none is discarded: checked by the caller) */
            if (n->outs[q] < 0)
                return false;
            *off += g->t[n->outs[q]].dims[axis] * x->strides[axis];
        }
        memcpy(ys, x->strides, sizeof x->strides);
        return true;
    }
    default:
        return false;
    }
}

static bool same_strides(const gtensor *t, const int64_t *st)
{
    for (int d = 0; d < t->rank; d++)
        if (t->dims[d] != 1 && t->strides[d] != st[d])
            return false;
    return true;
}

/* Can node c read tensor y (dims y->dims) through strides st? */
static bool consumer_takes(const ggraph *g, const gnode *c, const gtensor *y, const int64_t *st)
{
    switch (c->kind) {
    case GN_POINTWISE: case GN_REDUCE: case GN_SOFTMAX:
        return true;
    case GN_MATMUL: { /* cuBLASLt: one of the last two dims contiguous, the other its leading dim */
        if (y->rank < 2)
            return same_strides(y, st);
        int64_t r = y->dims[y->rank - 2], k = y->dims[y->rank - 1], sr = st[y->rank - 2], sk = st[y->rank - 1];
        bool row = (k == 1 || sk == 1) && (r == 1 || sr >= k);
        bool col = (r == 1 || sr == 1) && (k == 1 || sk >= r);
        return row || col;
    }
    default:
        if (c->op_id == OP_sdpa || c->op_id == OP_sdpa_bwd || gpu_copy_op(c->op_id))
            return true;
        return same_strides(y, st); /* every other engine: only the layout it had anyway */
    }
}

/* Does node c take an operand that starts only 16-byte aligned?  The
 * generated kernels move at most 16-byte words (and check each pointer's
 * alignment when they bind it), the copy engine picks its unit from the
 * offsets: a RoPE half of a head (64 bf16 = 128 bytes in) stays a view. */
static bool small_align_ok(const gnode *c)
{
    return c->kind == GN_POINTWISE || c->kind == GN_REDUCE || c->kind == GN_SOFTMAX || gpu_copy_op(c->op_id);
}

static int producer_of(const ggraph *g, int t, int before)
{
    for (int k = 0; k < before; k++) {
        if (g->n[k].out == t)
            return k;
        for (int r = 0; r < g->n[k].nouts; r++)
            if (g->n[k].outs[r] == t)
                return k;
    }
    return -1;
}

static int readers(const ggraph *g, int t)
{
    int c = 0;
    for (int k = 0; k < g->nn; k++)
        for (int j = 0; j < g->n[k].nin; j++)
            c += g->n[k].in[j] == t;
    return c;
}

/* A permute's input x, written only for it by sdpa or a pointwise node, is
 * laid out so the permute's result is packed (see the file comment). */
static void lay_out_for_permute(ggraph *g, int k)
{
    const gnode *n = &g->n[k];
    int xt = n->in[0], yt = n->out;
    gtensor *x = &g->t[xt];
    if (yt < 0 || x->is_input || x->is_output || x->view_of >= 0 || readers(g, xt) != 1 || g->t[yt].is_output)
        return;
    int p = producer_of(g, xt, k);
    if (p < 0 || !(g->n[p].kind == GN_POINTWISE || (g->n[p].op_id == OP_sdpa && g->n[p].outs[0] == xt)))
        return;
    int64_t pv[XDNN_MAX_RANK], yst[XDNN_MAX_RANK], xst[XDNN_MAX_RANK];
    int np = 0, a;
    packed_strides(x->rank, x->dims, xst);
    if (!same_strides(x, xst)) /* a layout the graph declared (o: bf16 @bshd) stays */
        return;
    const op_desc *desc = op_get(n->ir->op);
    if (!attr_int_list(n->ir, desc, "perm", XDNN_MAX_RANK, pv, &np) || np != x->rank)
        return;
    packed_strides(g->t[yt].rank, g->t[yt].dims, yst);
    for (int d = 0; d < np; d++) {
        if (!op_axis(x->rank, pv[d], &a))
            return;
        xst[a] = yst[d];
    }
    memcpy(x->strides, xst, (size_t)np * sizeof *xst);
}

/* Can result r of view node n (over x) be a view?  Its strides and offset. */
static bool result_view(const ggraph *g, const gnode *n, int r, int64_t *st, int64_t *off)
{
    const gtensor *x = &g->t[n->in[0]];
    int yt = n->outs[r];
    if (yt < 0)
        return false;
    const gtensor *y = &g->t[yt];
    if (y->is_output || y->is_input || y->dtype != x->dtype || y->numel == 0)
        return false;
    if (!view_of_result(g, n, r, st, off))
        return false;
    for (int d = 0; d < y->rank; d++) {
        if (y->dims[d] == 1)
            st[d] = 0;
        if (st[d] < 0)
            return false;
    }
    int64_t align = VEC_ALIGN;
    for (int c = 0; c < g->nn; c++)
        for (int j = 0; j < g->n[c].nin; j++)
            if (g->n[c].in[j] == yt) {
                if (!consumer_takes(g, &g->n[c], y, st))
                    return false;
                if (!small_align_ok(&g->n[c]))
                    align = VIEW_ALIGN;
            }
    return (*off * (int64_t)gg_dtype_bytes(y->dtype)) % align == 0;
}

/* Can copy_strided still place a split's pieces when some are discarded?
 * It takes their sizes from `sizes`, else equal parts. */
static bool pieces_known(const ggraph *g, const gnode *n)
{
    const op_desc *desc = op_get(n->ir->op);
    if (op_attr_present(n->ir, desc, "sizes"))
        return true;
    const gtensor *x = &g->t[n->in[0]];
    int axis;
    if (!op_axis(x->rank, op_attr_int(n->ir, desc, "axis"), &axis))
        return false;
    for (int r = 0; r < n->nouts; r++)
        if (n->outs[r] < 0 || g->t[n->outs[r]].dims[axis] * n->nouts != x->dims[axis])
            return false;
    return true;
}

/* Make the results of node k views where they can be; true when all are
 * (the node is dropped).  A split keeps the pieces that stay copies. */
static bool fold(ggraph *g, int k)
{
    gnode *n = &g->n[k];
    if (!n->ir || n->nin < 1 || n->in[0] < 0 || n->nouts < 1 || n->nouts > GG_MAX_OUT)
        return false;
    if (n->op_id == OP_permute)
        lay_out_for_permute(g, k);
    const gtensor *x = &g->t[n->in[0]];
    if (x->is_scalar || x->numel == 0)
        return false;
    int64_t st[GG_MAX_OUT][XDNN_MAX_RANK], off[GG_MAX_OUT];
    bool ok[GG_MAX_OUT];
    int nok = 0;
    for (int r = 0; r < n->nouts; r++)
        nok += ok[r] = result_view(g, n, r, st[r], &off[r]);
    if (nok == 0 || (nok < n->nouts && !(n->op_id == OP_split && pieces_known(g, n))))
        return false;
    int base = gg_storage(g, n->in[0]);
    for (int r = 0; r < n->nouts; r++) {
        if (!ok[r])
            continue;
        gtensor *y = &g->t[n->outs[r]];
        memcpy(y->strides, st[r], sizeof st[r]);
        y->view_of = base;
        y->view_offset = off[r];
    }
    if (nok == n->nouts)
        return true;
    n->out = -1;
    for (int r = n->nouts - 1; r >= 0; r--) {
        if (ok[r])
            n->outs[r] = -1; /* now a view: the copy skips it */
        else
            n->out = n->outs[r];
    }
    return false;
}

/* Concat in place: a piece written by a pointwise node only for the concat
 * becomes a view of the concat's result (its strides, at the piece's offset),
 * so the generated kernel stores straight into the result.  The concat node
 * stays (it orders the readers of the result after the writers of its pieces)
 * and copies only the pieces that are not in place (copy_strided skips the
 * rest): RoPE's two rotated halves of q and k, and of dq and dk, are written
 * where the concat would have put them.  Such a view is the one kind a node
 * writes (tensor.producer >= 0; views.c's other views have none), and its
 * storage lives from the first of its writers on (plan.c). */
static void concat_in_place(ggraph *g, int k)
{
    const gnode *n = &g->n[k];
    int yt = n->out;
    if (yt < 0 || n->nin < 2 || !n->ir)
        return;
    gtensor *y = &g->t[yt];
    int axis;
    if (y->is_output || y->is_input || y->is_scalar || y->view_of >= 0 ||
        !op_axis(y->rank, op_attr_int(n->ir, op_get(n->ir->op), "axis"), &axis))
        return;
    int64_t off = 0;
    for (int i = 0; i < n->nin; i++) {
        int t = n->in[i];
        if (t < 0)
            return;
        gtensor *x = &g->t[t];
        int64_t here = off;
        off += x->dims[axis];
        int p = producer_of(g, t, k);
        if (x->view_of >= 0 || x->is_input || x->is_output || x->is_scalar || x->dtype != y->dtype ||
            x->rank != y->rank || p < 0 || g->n[p].kind != GN_POINTWISE || g->n[p].out != t || readers(g, t) != 1)
            continue;
        bool viewed = false, twice = false;
        for (int v = 0; v < g->nt; v++)
            viewed |= g->t[v].view_of == t;
        for (int j = 0; j < i; j++)
            twice |= n->in[j] == t;
        int64_t eoff = here * y->strides[axis];
        if (viewed || twice || (eoff * (int64_t)gg_dtype_bytes(y->dtype)) % VEC_ALIGN != 0)
            continue;
        for (int d = 0; d < x->rank; d++)
            x->strides[d] = x->dims[d] == 1 ? 0 : y->strides[d];
        x->view_of = yt;
        x->view_offset = eoff;
    }
}

void gpu_fold_views(ggraph *g)
{
    const char *env = getenv("XDNN_NO_VIEWS");
    if (env && *env && strcmp(env, "0") != 0)
        return;
    for (int k = 0; k < g->nn;) {
        if (!is_view_op(g->n[k].op_id) || !fold(g, k)) {
            k++;
            continue;
        }
        /* dropped: later nodes move up one, order kept */
        memmove(&g->n[k], &g->n[k + 1], (size_t)(g->nn - k - 1) * sizeof *g->n);
        g->nn--;
    }
    for (int k = 0; k < g->nn; k++)
        if (g->n[k].op_id == OP_concat)
            concat_in_place(g, k);
}
