/* eng_generated.c — the two NVRTC engines:
 *   pointwise_nvrtc  one generated kernel per pointwise partition;
 *   reduce_nvrtc     reduce over axes or softmax/log_softmax over an axis,
 *                    with its pointwise prologue inline (codegen.h). */
#include "gpu/engine.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gen_priv {
    cg_kernel k;
    gpu_kernel kern;
    gpu_kernel kern2;      /* reduce v2 column form with splits: the partials' fold */
    int block;
    char detail[96];       /* reduce v2: the form, for plan -v and --bench */
} gen_priv;

static bool dtypes_ok(const gplan *pl, const gpart *p, char *why, size_t len)
{
    int bad = cg_unsupported_dtype(pl->g, p->ins, p->nins);
    if (bad < 0)
        bad = cg_unsupported_dtype(pl->g, p->outs, p->nouts);
    if (bad >= 0) {
        snprintf(why, len, "tensor '%s' has dtype %s, which generated kernels do not load or store",
                 pl->g->t[bad].name, gg_dtype_name(pl->g->t[bad].dtype));
        return false;
    }
    return true;
}

static bool pw_supports(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    if (p->kind != GP_POINTWISE) {
        snprintf(why, len, "needs a pointwise partition, got %s", gpart_kind_name(p->kind));
        return false;
    }
    if (p->nouts < 1) {
        snprintf(why, len, "partition writes no materialized tensor");
        return false;
    }
    return dtypes_ok(pl, p, why, len);
}

static bool red_supports(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    if (p->kind != GP_REDUCE) {
        snprintf(why, len, "needs a reduce/softmax partition, got %s", gpart_kind_name(p->kind));
        return false;
    }
    const gnode *n = &pl->g->n[p->anchor];
    if (n->nin < 1 || n->in[0] < 0) {
        snprintf(why, len, "%s has no input", n->name);
        return false;
    }
    if (n->kind == GN_SOFTMAX && (n->axis < 0 || n->axis >= pl->g->t[n->in[0]].rank)) {
        snprintf(why, len, "softmax axis %d out of range for rank %d", n->axis, pl->g->t[n->in[0]].rank);
        return false;
    }
    return dtypes_ok(pl, p, why, len);
}

double gpu_roofline_us(const gpart *p, double tflops)
{
    /* Nominal Hopper-class rates; only the ranking between engines matters. */
    double mem = p->bytes / 3.0e12, math = p->flops / (tflops * 1e12);
    return 1e6 * (mem > math ? mem : math) + 3.0; /* + launch overhead */
}

static double gen_cost(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    return gpu_roofline_us(p, 50.0);
}

static size_t no_workspace(const gplan *pl, const gpart *p, const gpu_device *dev) { return 0; }

/* The prologue nodes of a reduce partition: all but the anchor. */
static int red_prologue(const gpart *p, int *pro)
{
    int npro = 0;
    for (int i = 0; i < p->nnodes; i++)
        if (p->nodes[i] != p->anchor)
            pro[npro++] = p->nodes[i];
    return npro;
}

/* Reduce v2's column form keeps partials per row split (f32, or 16-bit packed); 0 otherwise
 * (always 0 with XDNN_REDUCE_V2=0). */
static size_t red_workspace(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    cg_redv2 rc;
    int npro = 0;
    for (int i = 0; i < p->nnodes; i++)
        npro += p->nodes[i] != p->anchor;
    return p->kind == GP_REDUCE && cg_reduce_v2_plan(pl->g, p->anchor, npro, &rc) ? rc.ws_bytes : 0;
}

static xdnn_status gen_build(gpu_ctx *c, gpart *p, bool reduce, xdnn_diags_t *d)
{
    gen_priv *gp = calloc(1, sizeof *gp);
    if (!gp)
        return XDNN_ERR_NOMEM;
    p->priv = gp;
    const ggraph *g = c->plan->g;
    char kname[64];
    snprintf(kname, sizeof kname, "xdnn_%s_p%d", reduce ? "reduce" : "pw", p->id);
    char *name = arena_strdup(g->ar, kname);
    xdnn_status st;
    if (reduce) {
        int *pro = arena_alloc(g->ar, (size_t)p->nnodes * sizeof(int) + 1);
        int npro = red_prologue(p, pro);
        st = cg_reduce(g, p->anchor, pro, npro, name, &gp->k);
        /* Small rows get a smaller block (all threads must take part in the
         * block reduction, so it stays a multiple of 32). */
        const gnode *n = &g->n[p->anchor];
        int64_t rlen = g->t[n->in[0]].numel / (gp->k.work ? gp->k.work : 1);
        gp->block = 32;
        while (gp->block < CG_BLOCK && gp->block < rlen)
            gp->block *= 2;
    } else {
        st = cg_pointwise(g, p->nodes, p->nnodes, p->outs, p->nouts, name, &gp->k);
        gp->block = CG_BLOCK;
    }
    if (st != XDNN_OK)
        return st;
    int forced = 0;
    if (p->knobs && *p->knobs && sscanf(p->knobs, "block=%d", &forced) == 1)
        gp->block = forced; /* checked by gen_knobs_valid; the kernels stride, so any multiple of 32 works */
    if (gp->k.form == CG_FORM_COL)
        gp->block = CG_BLOCK; /* its lanes are laid out over exactly CG_BLOCK threads */
    else if (gp->k.form == CG_FORM_ROW && !forced)
        gp->block = CG_BLOCK;
    if (gp->k.form)
        snprintf(gp->detail, sizeof gp->detail, "%s v2 %s form, %d-byte loads%s%s", gp->k.name,
                 gp->k.form == CG_FORM_COL ? "column" : "row", gp->k.align, gp->k.name2 ? ", split + fold" : "",
                 gp->k.packed ? ", packed 16-bit pairs" : "");
    st = gpu_nvrtc_get(&c->dev, gp->k.src, gp->k.name, &gp->kern, &c->cstats, d);
    if (st == XDNN_OK && gp->k.name2)
        st = gpu_nvrtc_get(&c->dev, gp->k.src, gp->k.name2, &gp->kern2, &c->cstats, d);
    return st;
}

/* Reduce v2 (codegen_redcol.c): the input's vector loads need its alignment;
 * the column form runs (work x grid_y) blocks, then the fold of the splits. */
static xdnn_status launch_reduce_v2(gpu_ctx *c, gpart *p, gen_priv *gp, cudaStream_t s, xdnn_diags_t *d)
{
    const cg_kernel *k = &gp->k;
    void *y = c->dptr[k->params[0]], *x = c->dptr[k->params[1]];
    if (k->align > 1 && (uintptr_t)x % (uintptr_t)k->align) {
        diag_error(d, XDNN_ERR_USAGE, xloc_none(),
                   "%s: tensor '%s' is bound at %p, not %d-byte aligned as its vectorized reduce needs "
                   "(cudaMalloc gives 256)", k->name, c->plan->g->t[k->params[1]].name, x, k->align);
        return XDNN_ERR_USAGE;
    }
    if (k->form == CG_FORM_ROW)
        return gpu_launch_generated(c, &gp->kern, k, gp->block, s, d);
    float *ws = k->ws_bytes ? (float *)(void *)(c->ws + p->ws_offset) : NULL;
    void *args[3] = {&y, &x, &ws};
    dim3 grid = {(unsigned)k->work, k->grid_y, 1}, threads = {(unsigned)CG_BLOCK, 1, 1};
    cudaError_t e = cudaLaunchKernel((const void *)gp->kern.fn, grid, threads, args, 0, s);
    if (e == cudaSuccess && k->name2) {
        void *args2[2] = {&y, &ws};
        int64_t blocks = (k->work2 + CG_BLOCK - 1) / CG_BLOCK, cap = (int64_t)c->dev.sm_count * 16;
        dim3 grid2 = {(unsigned)(blocks > cap ? cap : blocks), 1, 1};
        e = cudaLaunchKernel((const void *)gp->kern2.fn, grid2, threads, args2, 0, s);
    }
    if (e != cudaSuccess)
        (void)cudaGetLastError();
    CUDA_TRY(e);
    return XDNN_OK;
}

/* Knob: the thread-block size, "block=N" with N a multiple of 32 up to the
 * generated kernels' __launch_bounds__ (CG_BLOCK). */
static bool gen_knobs_valid(const char *knobs, char *why, size_t len)
{
    int n = 0, used = 0;
    if (sscanf(knobs, "block=%d%n", &n, &used) != 1 || knobs[used] != '\0') {
        snprintf(why, len, "expected block=N");
        return false;
    }
    if (n < 32 || n > CG_BLOCK || n % 32) {
        snprintf(why, len, "block=%d: N must be a multiple of 32 in [32, %d]", n, (int)CG_BLOCK);
        return false;
    }
    return true;
}

static int gen_knob_variants(const gplan *pl, const gpart *p, const gpu_device *dev, char (*out)[GPU_KNOB_LEN],
                             int max)
{
    static const int blocks[] = {64, 128, 256};
    int n = 0;
    for (int i = 0; i < (int)(sizeof blocks / sizeof blocks[0]) && n < max; i++)
        snprintf(out[n++], GPU_KNOB_LEN, "block=%d", blocks[i]);
    return n;
}

static xdnn_status pw_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d) { return gen_build(c, p, false, d); }
static xdnn_status red_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d) { return gen_build(c, p, true, d); }

xdnn_status gpu_launch_generated(gpu_ctx *c, const gpu_kernel *kern, const cg_kernel *k, int block,
                                 cudaStream_t s, xdnn_diags_t *d)
{
    if (k->work <= 0)
        return XDNN_OK;
    void *args[2 * GG_MAX_IN * 8 + 1];
    if (k->nparams + 1 > (int)(sizeof args / sizeof args[0])) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), "generated kernel %s has %d parameters (max %zu)",
                   k->name, k->nparams, sizeof args / sizeof args[0] - 1);
        return XDNN_ERR_UNSUPPORTED;
    }
    for (int i = 0; i < k->nparams; i++) {
        args[i] = &c->dptr[k->params[i]];
        if (k->vec > 1 && k->contig[k->params[i]]) { /* chunks move as 16/8/4/2-byte words */
            const gtensor *t = &c->plan->g->t[k->params[i]];
            size_t w = gg_dtype_bytes(t->dtype) * (size_t)k->vec;
            w = w > 16 ? 16 : w;
            if ((uintptr_t)c->dptr[k->params[i]] % w) {
                diag_error(d, XDNN_ERR_USAGE, xloc_none(),
                           "%s: tensor '%s' is bound at %p, not %zu-byte aligned as its vectorized kernel needs "
                           "(cudaMalloc gives 256)", k->name, t->name, c->dptr[k->params[i]], w);
                return XDNN_ERR_USAGE;
            }
        }
    }
    if (k->nvals) /* sizes as arguments: struct xd_sizes by value, laid out as the array */
        args[k->nparams] = k->vals;
    int64_t blocks = k->per_row ? k->work : (k->work + block - 1) / block;
    int64_t cap = (int64_t)c->dev.sm_count * (k->per_row ? 32 : 16);
    if (blocks > cap)
        blocks = cap;
    if (blocks < 1)
        blocks = 1;
    dim3 grid = {(unsigned)blocks, 1, 1}, threads = {(unsigned)block, 1, 1};
    /* cudaLaunchKernel reports its own launch error: no cudaGetLastError on
     * the way (one runtime call less per partition and execute); a failure
     * clears the thread's last error so that it is reported once */
    cudaError_t e = cudaLaunchKernel((const void *)kern->fn, grid, threads, args, 0, s);
    if (e != cudaSuccess)
        (void)cudaGetLastError();
    CUDA_TRY(e);
    return XDNN_OK;
}

static xdnn_status gen_execute(gpu_ctx *c, gpart *p, cudaStream_t s, xdnn_diags_t *d)
{
    gen_priv *gp = p->priv;
    if (gp->k.form)
        return launch_reduce_v2(c, p, gp, s, d);
    return gpu_launch_generated(c, &gp->kern, &gp->k, gp->block, s, d);
}

static void gen_release(gpart *p)
{
    free(p->priv);
    p->priv = NULL;
}

static const char *gen_detail(const gpart *p)
{
    const gen_priv *gp = p->priv;
    return !gp ? "" : gp->k.form ? gp->detail : gp->k.name;
}

const gpu_engine gpu_engine_pointwise_nvrtc = {
    "pointwise_nvrtc", "one generated kernel per pointwise partition (NVRTC, f32 math, grid-stride)",
    pw_supports, gen_cost, no_workspace, pw_build, gen_execute, gen_release, gen_detail,
};
const gpu_knobs gpu_knobs_pointwise_nvrtc = {&gpu_engine_pointwise_nvrtc, gen_knob_variants, gen_knobs_valid};

const gpu_engine gpu_engine_reduce_nvrtc = {
    "reduce_nvrtc", "reduce over axes / softmax over an axis, one block per row, pointwise prologue inline",
    red_supports, gen_cost, red_workspace, red_build, gen_execute, gen_release, gen_detail,
};
const gpu_knobs gpu_knobs_reduce_nvrtc = {&gpu_engine_reduce_nvrtc, gen_knob_variants, gen_knobs_valid};
