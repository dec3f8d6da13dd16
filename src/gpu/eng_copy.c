/* eng_copy.c — the copy_strided engine: reshape, permute, broadcast, slice,
 * concat, split and pad (constant, reflect, replicate, circular) as jobs of
 * one strided-copy kernel family (kernels/copy.cu, kern_copy.h).
 *
 * Every output element maps to an input element through per-dim affine maps
 * (slice: start + k*step; permute: the permuted stride; broadcast: stride 0;
 * pad: index - before, folded by the mode); concat is one job per input into
 * its slab of the output, split one job per result.  Reshape is affine when
 * either side is packed row-major, else the flat index is decomposed over
 * both shapes.  Affine jobs are sorted by output stride, merged where both
 * sides are contiguous across dims, and a contiguous innermost run is moved
 * in 16/8/4-byte units.  Any dtype when in and out agree; f32/f16/bf16
 * conversions when the bound dtypes differ.  The affine pieces of one concat
 * or split (same unit size, none tiled) run as one launch over a table of
 * pieces (kern_copy.h cp_group_ok; XDNN_COPY_ONE_LAUNCH=0: one each). */
#include "gpu/eng_copy.h"

#include "data/data.h"
#include "gpu/engine.h"
#include "ops/tensor_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool gpu_copy_op(int op) { return op_class_of(op) == OPC_TENSOR; }

static bool float_dt(xdnn_dtype t) { return t == XDNN_F32 || t == XDNN_F16 || t == XDNN_BF16; }

/* Python slice.indices(len) then the count (as tensor_slice.c). */
void gpu_slice_resolve(const xnode *n, const op_desc *d, int64_t L, int64_t *start, int64_t *step, int64_t *count)
{
    int64_t st = op_attr_int(n, d, "step");
    bool neg = st < 0;
    int64_t lower = neg ? -1 : 0, upper = neg ? L - 1 : L, bound[2];
    const char *names[2] = {"start", "end"};
    for (int k = 0; k < 2; k++) {
        if (!op_attr_present(n, d, names[k])) {
            bound[k] = (k == 0) != neg ? lower : upper;
            continue;
        }
        int64_t v = op_attr_int(n, d, names[k]);
        if (v < 0)
            v += L;
        bound[k] = v < lower ? lower : v > upper ? upper : v;
    }
    *start = bound[0];
    *step = st;
    if (!neg)
        *count = bound[0] < bound[1] ? (bound[1] - bound[0] - 1) / st + 1 : 0;
    else
        *count = bound[1] < bound[0] ? (bound[0] - bound[1] - 1) / -st + 1 : 0;
}

static bool packed(const gtensor *t)
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

/* Row-major coefficients of dims. */
static void rm_coef(int rank, const int64_t *dims, int64_t *out)
{
    int64_t c = 1;
    for (int i = rank - 1; i >= 0; i--) {
        out[i] = dims[i] == 1 ? 0 : c;
        c *= dims[i];
    }
}

/* Drop size-1 dims; for affine jobs sort by output stride and merge. */
static bool normalize(cp_job *j, char *why, size_t len)
{
    int m = 0;
    for (int i = 0; i < j->n; i++) {
        if (j->size[i] == 1 && j->kind != CPK_PAD)
            continue;
        j->size[m] = j->size[i], j->ost[m] = j->ost[i], j->ist[m] = j->ist[i];
        j->before[m] = j->before[i], j->ilen[m] = j->ilen[i];
        m++;
    }
    j->n = m;
    if (j->kind == CPK_AFFINE) {
        for (int i = 1; i < j->n; i++) { /* stable: larger |ost| first */
            int64_t s = j->size[i], o = j->ost[i], in = j->ist[i];
            int k = i - 1;
            while (k >= 0 && llabs(j->ost[k]) < llabs(o)) {
                j->size[k + 1] = j->size[k], j->ost[k + 1] = j->ost[k], j->ist[k + 1] = j->ist[k];
                k--;
            }
            j->size[k + 1] = s, j->ost[k + 1] = o, j->ist[k + 1] = in;
        }
    }
    if (j->kind != CPK_PAD) {
        m = 0;
        for (int i = 0; i < j->n; i++) {
            if (m > 0 && j->ost[m - 1] == j->ost[i] * j->size[i] && j->ist[m - 1] == j->ist[i] * j->size[i]) {
                j->size[m - 1] *= j->size[i];
                j->ost[m - 1] = j->ost[i];
                j->ist[m - 1] = j->ist[i];
                continue;
            }
            j->size[m] = j->size[i], j->ost[m] = j->ost[i], j->ist[m] = j->ist[i];
            m++;
        }
        j->n = m;
    }
    if (j->kind == CPK_RESHAPE) { /* the input side: drop 1s and merge, order kept */
        m = 0;
        for (int i = 0; i < j->in_n; i++) {
            if (j->in_size[i] == 1)
                continue;
            if (m > 0 && j->in_st[m - 1] == j->in_st[i] * j->in_size[i]) {
                j->in_size[m - 1] *= j->in_size[i];
                j->in_st[m - 1] = j->in_st[i];
                continue;
            }
            j->in_size[m] = j->in_size[i], j->in_st[m] = j->in_st[i];
            m++;
        }
        j->in_n = m;
    }
    if (j->n > CP_MAXD || j->in_n > CP_MAXD)
        GPU_REFUSE("more than %d non-mergeable dims", CP_MAXD);
    return true;
}

/* Same-dtype affine jobs whose innermost dim is contiguous on both sides
 * move 16/8/4-byte units (buffers are 256-byte aligned). */
static void vectorize(cp_job *j)
{
    if (j->idt != j->odt || j->kind != CPK_AFFINE || j->n < 1)
        return;
    int last = j->n - 1;
    if (j->ost[last] != 1 || j->ist[last] != 1)
        return;
    for (int bytes = 16; bytes > j->esize; bytes /= 2) {
        int64_t v = bytes / j->esize;
        bool ok = j->size[last] % v == 0 && j->ibase % v == 0 && j->obase % v == 0;
        for (int i = 0; i < last && ok; i++)
            ok = j->ost[i] % v == 0 && j->ist[i] % v == 0;
        if (!ok)
            continue;
        j->size[last] /= v;
        for (int i = 0; i < last; i++)
            j->ost[i] /= v, j->ist[i] /= v;
        j->ibase /= v, j->obase /= v;
        j->esize = bytes;
        j->numel /= v;
        return;
    }
}

/* A job from x to y over iteration dims = y's dims. */
static bool start_job(cp_plan *cp, const ggraph *g, int src, int dst, const char *op, char *why, size_t len,
                      cp_job **out)
{
    if (cp->njobs >= CP_MAX_JOBS)
        GPU_REFUSE("%s: more than %d copies", op, CP_MAX_JOBS);
    const gtensor *x = &g->t[src], *y = &g->t[dst];
    if (x->is_scalar || y->is_scalar)
        GPU_REFUSE("%s: a scalar operand; expected tensors", op);
    if (x->dtype != y->dtype && !(float_dt(x->dtype) && float_dt(y->dtype)))
        GPU_REFUSE("%s: converting %s '%s' to %s '%s' is not a copy (only f32/f16/bf16 convert)", op,
             gg_dtype_name(x->dtype), x->name, gg_dtype_name(y->dtype), y->name);
    cp_job *j = &cp->jobs[cp->njobs];
    memset(j, 0, sizeof *j);
    cp->src[cp->njobs] = src;
    cp->dst[cp->njobs] = dst;
    cp->njobs++;
    j->idt = (int)x->dtype;
    j->odt = (int)y->dtype;
    j->esize = (int)gg_dtype_bytes(x->dtype);
    *out = j;
    return true;
}

bool gpu_copy_analyze(const gplan *pl, const gpart *p, cp_plan *cp, char *why, size_t len)
{
    memset(cp, 0, sizeof *cp);
    if (p->kind != GP_SINGLE || p->nnodes != 1)
        GPU_REFUSE("needs a single-node partition, got %s with %d nodes", gpart_kind_name(p->kind), p->nnodes);
    const ggraph *g = pl->g;
    const gnode *n = &g->n[p->nodes[0]];
    if (!gpu_copy_op(n->op_id))
        GPU_REFUSE("op %s is not a tensor copy (reshape/permute/broadcast/slice/concat/split/pad)", n->op);
    if (!n->ir)
        GPU_REFUSE("%s: node %s has no IR node (attributes unknown)", n->op, n->name);
    const op_desc *desc = op_get(n->ir->op);
    if (n->ir->ninputs > GG_MAX_IN)
        GPU_REFUSE("%s: %d inputs; the GPU graph holds at most %d", n->op, n->ir->ninputs, GG_MAX_IN);
    if (n->ir->nresults > GG_MAX_OUT)
        GPU_REFUSE("%s: %d results; the GPU graph holds at most %d", n->op, n->ir->nresults, GG_MAX_OUT);
    int y0 = n->nouts > 0 ? n->outs[0] : n->out;
    if (n->nin < 1 || n->in[0] < 0)
        GPU_REFUSE("%s: input x is missing", n->op);
    const gtensor *x = &g->t[n->in[0]];
    cp_job *j;
    if (n->op_id == OP_split) {
        int axis;
        if (!op_axis(x->rank, op_attr_int(n->ir, desc, "axis"), &axis))
            GPU_REFUSE("split: attribute 'axis' out of range for rank %d", x->rank);
        int64_t off = 0;
        for (int r = 0; r < (n->nouts > 0 ? n->nouts : 1); r++) {
            int yt = n->nouts > 0 ? n->outs[r] : n->out;
            int64_t piece = yt >= 0 ? g->t[yt].dims[axis] : 0;
            if (yt < 0) { /* a discarded piece: its size from the sizes attribute or equal parts */
                int64_t sizes[OP_MAX_RESULTS];
                int ns = 0;
                if (attr_int_list(n->ir, desc, "sizes", OP_MAX_RESULTS, sizes, &ns) && r < ns)
                    piece = sizes[r];
                else
                    piece = x->dims[axis] / (n->nouts > 0 ? n->nouts : 1);
                off += piece;
                continue;
            }
            if (!start_job(cp, g, n->in[0], yt, n->op, why, len, &j))
                return false;
            const gtensor *y = &g->t[yt];
            j->kind = CPK_AFFINE;
            j->n = y->rank;
            for (int d = 0; d < y->rank; d++)
                j->size[d] = y->dims[d], j->ost[d] = y->strides[d], j->ist[d] = x->strides[d];
            j->ibase = off * x->strides[axis];
            off += piece;
        }
    } else if (n->op_id == OP_concat) {
        if (y0 < 0)
            GPU_REFUSE("concat: the result is discarded");
        const gtensor *y = &g->t[y0];
        int axis;
        if (!op_axis(y->rank, op_attr_int(n->ir, desc, "axis"), &axis))
            GPU_REFUSE("concat: attribute 'axis' out of range for rank %d", y->rank);
        int64_t off = 0;
        for (int i = 0; i < n->nin; i++) {
            if (n->in[i] < 0)
                GPU_REFUSE("concat: input x%d is missing", i);
            const gtensor *xi = &g->t[n->in[i]];
            if (xi->view_of == y0 && xi->view_offset == off * y->strides[axis]) { /* written in place (views.c) */
                off += xi->dims[axis];
                continue;
            }
            if (!start_job(cp, g, n->in[i], y0, n->op, why, len, &j))
                return false;
            j->kind = CPK_AFFINE;
            j->n = xi->rank;
            for (int d = 0; d < xi->rank; d++)
                j->size[d] = xi->dims[d], j->ost[d] = y->strides[d], j->ist[d] = xi->strides[d];
            j->obase = off * y->strides[axis];
            off += xi->dims[axis];
        }
    } else {
        if (y0 < 0)
            GPU_REFUSE("%s: the result is discarded", n->op);
        const gtensor *y = &g->t[y0];
        if (!start_job(cp, g, n->in[0], y0, n->op, why, len, &j))
            return false;
        j->kind = CPK_AFFINE;
        j->n = y->rank;
        for (int d = 0; d < y->rank; d++)
            j->size[d] = y->dims[d], j->ost[d] = y->strides[d];
        if (n->op_id == OP_reshape) {
            if (x->numel != y->numel)
                GPU_REFUSE("reshape: x has %lld elements, y %lld", (long long)x->numel, (long long)y->numel);
            if (packed(x)) {
                rm_coef(y->rank, y->dims, j->ist);
            } else if (packed(y)) {
                j->n = x->rank;
                for (int d = 0; d < x->rank; d++)
                    j->size[d] = x->dims[d], j->ist[d] = x->strides[d];
                rm_coef(x->rank, x->dims, j->ost);
            } else {
                j->kind = CPK_RESHAPE;
                j->in_n = x->rank;
                for (int d = 0; d < x->rank; d++)
                    j->in_size[d] = x->dims[d], j->in_st[d] = x->strides[d];
            }
        } else if (n->op_id == OP_permute) {
            int64_t pv[XDNN_MAX_RANK];
            int np = 0;
            if (!attr_int_list(n->ir, desc, "perm", XDNN_MAX_RANK, pv, &np) || np != x->rank)
                GPU_REFUSE("permute: attribute 'perm' must list the %d axes of x", x->rank);
            for (int d = 0; d < y->rank; d++) {
                int a;
                if (!op_axis(x->rank, pv[d], &a))
                    GPU_REFUSE("permute: perm[%d] = %lld out of range", d, (long long)pv[d]);
                j->ist[d] = x->strides[a];
            }
        } else if (n->op_id == OP_broadcast) {
            int lead = y->rank - x->rank;
            if (lead < 0)
                GPU_REFUSE("broadcast: x has rank %d > y's %d", x->rank, y->rank);
            for (int d = 0; d < y->rank; d++)
                j->ist[d] = d >= lead && x->dims[d - lead] != 1 ? x->strides[d - lead] : 0;
        } else if (n->op_id == OP_slice) {
            int axis;
            if (!op_axis(x->rank, op_attr_int(n->ir, desc, "axis"), &axis))
                GPU_REFUSE("slice: attribute 'axis' out of range for rank %d", x->rank);
            int64_t start, step, count;
            gpu_slice_resolve(n->ir, desc, x->dims[axis], &start, &step, &count);
            if (count != y->dims[axis])
                GPU_REFUSE("slice: resolved count %lld differs from y's dim %lld", (long long)count,
                     (long long)y->dims[axis]);
            for (int d = 0; d < y->rank; d++)
                j->ist[d] = x->strides[d];
            j->ibase = start * x->strides[axis];
            j->ist[axis] = step * x->strides[axis];
        } else { /* pad */
            int64_t before[XDNN_MAX_RANK], after[XDNN_MAX_RANK];
            if (!pad_amounts(n->ir, desc, x->rank, before, after))
                GPU_REFUSE("pad: attribute 'pads' has an unknown form for rank %d", x->rank);
            const char *ms = op_attr_str(n->ir, desc, "mode");
            j->kind = CPK_PAD;
            j->pad_mode = !ms ? CPP_CONSTANT
                        : strcmp(ms, "reflect") == 0   ? CPP_REFLECT
                        : strcmp(ms, "replicate") == 0 ? CPP_REPLICATE
                        : strcmp(ms, "circular") == 0  ? CPP_CIRCULAR
                                                       : CPP_CONSTANT;
            for (int d = 0; d < y->rank; d++) {
                j->ist[d] = x->strides[d];
                j->before[d] = before[d];
                j->ilen[d] = x->dims[d];
            }
            unsigned char buf[16] = {0};
            dtype_store(y->dtype, buf, 0, op_attr_float(n->ir, desc, "value"));
            memcpy(j->fill, buf, sizeof buf);
        }
    }
    for (int i = 0; i < cp->njobs; i++) {
        cp_job *q = &cp->jobs[i];
        q->numel = 1;
        for (int d = 0; d < q->n; d++)
            q->numel *= q->size[d];
        if (!normalize(q, why, len)) {
            char tmp[256];
            snprintf(tmp, sizeof tmp, "%s: %s", n->op, why);
            snprintf(why, len, "%s", tmp);
            return false;
        }
        vectorize(q);
    }
    cp->one_launch = cp_group_ok(cp->jobs, cp->njobs);
    return true;
}

/* ---- engine */

static bool copy_supports(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    cp_plan *cp = malloc(sizeof *cp);
    if (!cp) {
        snprintf(why, len, "out of memory");
        return false;
    }
    bool ok = gpu_copy_analyze(pl, p, cp, why, len);
    free(cp);
    return ok;
}

static double copy_cost(const gplan *pl, const gpart *p, const gpu_device *dev) { return gpu_roofline_us(p, 20.0); }

static size_t copy_workspace(const gplan *pl, const gpart *p, const gpu_device *dev) { return 0; }

static xdnn_status copy_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d)
{
    cp_plan *cp = calloc(1, sizeof *cp);
    if (!cp)
        return XDNN_ERR_NOMEM;
    p->priv = cp;
    char why[512];
    if (!gpu_copy_analyze(c->plan, p, cp, why, sizeof why)) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), "copy_strided: %s", why);
        return XDNN_ERR_UNSUPPORTED;
    }
    return XDNN_OK;
}

static xdnn_status copy_execute(gpu_ctx *c, gpart *p, cudaStream_t s, xdnn_diags_t *d)
{
    cp_plan *cp = p->priv;
    if (cp->one_launch) { /* concat's / split's pieces in one launch */
        cp_job js[CP_GROUP_MAX];
        for (int i = 0; i < cp->njobs; i++) {
            js[i] = cp->jobs[i];
            js[i].src = c->dptr[cp->src[i]];
            js[i].dst = c->dptr[cp->dst[i]];
        }
        int e = cp_launch_group(js, cp->njobs, (void *)s);
        if (e != 0) {
            diag_error(d, XDNN_ERR_DEVICE, xloc_none(), "copy_strided: the launch of %s's %d pieces failed: %s",
                       p->name, cp->njobs, cudaGetErrorString((cudaError_t)e));
            return XDNN_ERR_DEVICE;
        }
        return XDNN_OK;
    }
    for (int i = 0; i < cp->njobs; i++) {
        cp_job j = cp->jobs[i];
        j.src = c->dptr[cp->src[i]];
        j.dst = c->dptr[cp->dst[i]];
        int e = cp_launch(&j, (void *)s);
        if (e != 0) {
            diag_error(d, XDNN_ERR_DEVICE, xloc_none(), "copy_strided: launch %d of %s failed: %s", i, p->name,
                       cudaGetErrorString((cudaError_t)e));
            return XDNN_ERR_DEVICE;
        }
    }
    return XDNN_OK;
}

static void copy_release(gpart *p)
{
    free(p->priv);
    p->priv = NULL;
}

static const char *copy_detail(const gpart *p)
{
    const cp_plan *cp = p->priv;
    if (!cp || cp->njobs < 1)
        return "";
    const cp_job *j = &cp->jobs[0];
    if (cp->one_launch)
        return j->esize == 16 ? "affine copy, 16-byte units, the pieces in one launch" : "affine copy, the pieces in one launch";
    return j->idt != j->odt           ? "converting copy"
         : j->kind == CPK_PAD         ? "pad copy"
         : j->kind == CPK_RESHAPE     ? "reshape (two decompositions)"
         : cp_tiled_async(j)          ? "transposing copy, shared-memory tiles, cp.async of the next two tiles"
         : cp_tiled_piped(j)          ? "transposing copy, shared-memory tiles, the next tile's loads in flight"
         : cp_tiled_axis(j) >= 0      ? "transposing copy, shared-memory tiles"
         : j->esize == 16             ? "affine copy, 16-byte units"
                                      : "affine copy";
}

const gpu_engine gpu_engine_copy_strided = {
    "copy_strided",
    "reshape/permute/broadcast/slice/concat/split/pad as strided copies (vectorized when contiguous)",
    copy_supports, copy_cost, copy_workspace, copy_build, copy_execute, copy_release, copy_detail,
};
