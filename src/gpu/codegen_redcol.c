/* codegen_redcol.c — reduce v2 (the default; XDNN_REDUCE_V2=0: the old forms): two generated forms for
 * plain reductions (no prologue) of a contiguous f32/f16/bf16 input, beside
 * cg_reduce's one block per output element.  Written in session 12, run on
 * the H100 in session 13 (8192^2: 79-97 % of copy, 1.3-7x the old forms,
 * ahead of PyTorch eager and torch.compile) and made the default then.
 *
 *  column form (CG_FORM_COL): the reduced axes are outer to a kept,
 *      contiguous run of `cols` columns; x is viewed as [outer, rlen, cols].
 *      A 256-thread block owns a tile of lanes_c * vec columns of one outer
 *      index and a slice of split_rows reduced rows (blockIdx.y): lanes_c
 *      column lanes move `vec` columns each with one 16-byte load (when cols
 *      allows), lanes_r = 256 / lanes_c row lanes stride over the slice, so a
 *      warp reads 32 / lanes_c rows of >= 128 contiguous bytes (the old form
 *      read one column per block: 32 lines per warp load).  The row lanes
 *      meet in shared memory by a fixed tree; with one split the block
 *      finalizes and stores, otherwise it writes f32 partials
 *      ws[split][outer * cols] and a second kernel (<name>_fin) folds the
 *      splits in order 0..splits-1: deterministic, no atomics.
 *  row form (CG_FORM_ROW): the reduced axes are the trailing ones (rows of
 *      rlen contiguous elements): 16-byte loads, one warp per row when a row
 *      is at most ROW_WARP_MAX vectors, else one block per row.
 * Everything else (prologues, sizes as arguments, other dtypes, strided or
 * interleaved axes, softmax) stays on cg_reduce's form.  The accumulation is
 * f32 with the same update, combine and finalize as cg_reduce (mean divides
 * by rlen, norm2 takes the root), stored through the output's rounding. */
#include "gpu/codegen.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    COL_TARGET_BLOCKS = 1024, /* 132 SMs x 8 resident 256-thread blocks: enough loads in flight */
    COL_MIN_ROWS_PER_LANE = 8, /* a split gives each row lane at least this many rows */
    ROW_WARP_MAX = 64,         /* row form: a warp per row up to 64 vectors (512 f32, 1024 bf16) */
};

bool cg_reduce_v2_enabled(void)
{
    const char *e = getenv("XDNN_REDUCE_V2"); /* on unless "0" (the A/B with the old forms) */
    return !(e && e[0] == '0' && e[1] == '\0');
}

bool cg_reduce_v2_plan(const ggraph *g, int anchor, int nprologue, cg_redv2 *rc)
{
    memset(rc, 0, sizeof *rc);
    if (!cg_reduce_v2_enabled())
        return false;
    const gnode *n = &g->n[anchor];
    if (n->kind != GN_REDUCE || nprologue != 0 || g->sizes_as_args || n->nin < 1 || n->in[0] < 0)
        return false;
    const gtensor *x = &g->t[n->in[0]], *y = &g->t[n->out];
    if ((x->dtype != XDNN_F32 && x->dtype != XDNN_F16 && x->dtype != XDNN_BF16) || x->is_scalar || x->numel <= 0 ||
        !gg_packed(x) || !gg_packed(y) || y->is_scalar || !cg_storage_type(y->dtype))
        return false;
    /* [outer, rlen, cols]: the non-unit reduced dims must be one run */
    int lo = -1, hi = -1;
    for (int i = 0; i < x->rank; i++)
        if (x->dims[i] != 1 && ((n->axes >> i) & 1u)) {
            if (lo < 0)
                lo = i;
            hi = i;
        }
    if (lo < 0)
        return false; /* nothing reduced: a copy, cg_reduce's form */
    rc->outer = rc->rlen = rc->cols = 1;
    for (int i = 0; i < x->rank; i++) {
        bool red = ((n->axes >> i) & 1u) != 0;
        if (x->dims[i] == 1)
            continue;
        if (i < lo)
            rc->outer *= x->dims[i];
        else if (i > hi)
            rc->cols *= x->dims[i];
        else if (red)
            rc->rlen *= x->dims[i];
        else
            return false; /* a kept dim between reduced ones */
    }
    if (y->numel != rc->outer * rc->cols)
        return false;
    const int64_t esize = (int64_t)gg_dtype_bytes(x->dtype);
    const int64_t run = rc->cols > 1 ? rc->cols : rc->rlen; /* the contiguous extent a vector must divide */
    rc->vec = (int)(16 / esize); /* a view's start must keep the vectors aligned too */
    while (rc->vec > 1 && (run % rc->vec || (x->view_of >= 0 && x->view_offset % rc->vec)))
        rc->vec /= 2;
    if (rc->cols > 1) {
        rc->form = CG_FORM_COL;
        int64_t vecs = (rc->cols + rc->vec - 1) / rc->vec; /* vectors across a row */
        int lc = (int)(128 / (esize * rc->vec));           /* >= 128 contiguous bytes per row of a warp */
        lc = lc < 1 ? 1 : lc > 32 ? 32 : lc;
        while (lc > 1 && lc / 2 >= vecs)
            lc /= 2;
        rc->lanes_c = lc;
        rc->lanes_r = CG_BLOCK / lc;
        rc->tiles = (rc->cols + (int64_t)lc * rc->vec - 1) / ((int64_t)lc * rc->vec);
        rc->grid_x = rc->outer * rc->tiles;
        if (rc->grid_x > INT32_MAX)
            return false;
        int64_t splits = (COL_TARGET_BLOCKS + rc->grid_x - 1) / rc->grid_x;
        int64_t most = (rc->rlen + (int64_t)rc->lanes_r * COL_MIN_ROWS_PER_LANE - 1) /
                       ((int64_t)rc->lanes_r * COL_MIN_ROWS_PER_LANE);
        splits = splits > most ? most : splits;
        splits = splits < 1 ? 1 : splits;
        rc->split_rows = (rc->rlen + splits - 1) / splits;
        rc->splits = (int)((rc->rlen + rc->split_rows - 1) / rc->split_rows); /* no empty split */
        rc->ws_bytes = rc->splits > 1 ? (size_t)rc->splits * (size_t)(rc->outer * rc->cols) * sizeof(float) : 0;
    } else {
        rc->form = CG_FORM_ROW;
        rc->warp_rows = (rc->rlen + rc->vec - 1) / rc->vec <= ROW_WARP_MAX;
    }
    return true;
}

/* ---- source text */
static const char *load_of(xdnn_dtype t)
{
    return t == XDNN_F16 ? "xd_h2f" : t == XDNN_BF16 ? "xd_b2f" : "";
}

static void emit_update(FILE *f, gred_op r, const char *acc, const char *v)
{
    switch (r) {
    case RED_MAX: fprintf(f, "%s = fmaxf(%s, %s);", acc, acc, v); break;
    case RED_MIN: fprintf(f, "%s = fminf(%s, %s);", acc, acc, v); break;
    case RED_AMAX: fprintf(f, "%s = fmaxf(%s, fabsf(%s));", acc, acc, v); break;
    case RED_NORM1: fprintf(f, "%s = %s + fabsf(%s);", acc, acc, v); break;
    case RED_PROD: fprintf(f, "%s = %s * %s;", acc, acc, v); break;
    case RED_NORM2: fprintf(f, "%s = %s + %s * %s;", acc, acc, v, v); break;
    default: fprintf(f, "%s = %s + %s;", acc, acc, v); break;
    }
}

/* How two partial results meet (cg_reduce's block reductions). */
static const char *combine_of(gred_op r)
{
    return r == RED_MAX || r == RED_AMAX ? "fmaxf(A, B)" : r == RED_MIN ? "fminf(A, B)" : r == RED_PROD ? "(A) * (B)"
                                                                                                          : "(A) + (B)";
}

/* acc = finalize(acc); store to p0[off] */
static void emit_final_store(FILE *f, const cg_redv2 *rc, gred_op r, xdnn_dtype yt, const char *acc, const char *off,
                             const char *ind)
{
    if (r == RED_MEAN)
        fprintf(f, "%s%s = %s / (float)%" PRId64 ";\n", ind, acc, acc, rc->rlen);
    if (r == RED_NORM2)
        fprintf(f, "%s%s = sqrtf(%s);\n", ind, acc, acc);
    fprintf(f, "%sp0[%s] = %s(%s);\n", ind, off, cg_store_fn(yt), acc);
}

static void emit_col(FILE *f, const cg_redv2 *rc, gred_op r, const gtensor *x, const gtensor *y, const char *kname)
{
    const char *xs = cg_storage_type(x->dtype), *ys = cg_storage_type(y->dtype);
    const int V = rc->vec, TC = rc->lanes_c * V;
    const size_t vb = gg_dtype_bytes(x->dtype) * (size_t)V;
    fprintf(f, "#define XD_COMB(A, B) %s\n", combine_of(r));
    fprintf(f, "extern \"C\" __global__ void __launch_bounds__(%d) %s(%s *__restrict__ p0, const %s *__restrict__ p1, "
               "float *__restrict__ ws)\n{\n", (int)CG_BLOCK, kname, ys, xs);
    fprintf(f, "  __shared__ float xd_sh[%d];\n", CG_BLOCK * V);
    fprintf(f, "  const int lc = threadIdx.x %% %d, lr = threadIdx.x / %d;\n", rc->lanes_c, rc->lanes_c);
    fprintf(f, "  const long long o = blockIdx.x / %" PRId64 ", c = (long long)(blockIdx.x %% %" PRId64 ") * %d + lc * %d;\n",
            rc->tiles, rc->tiles, TC, V);
    fprintf(f, "  const long long r0 = (long long)blockIdx.y * %" PRId64 ";\n", rc->split_rows);
    fprintf(f, "  const long long r1 = r0 + %" PRId64 " < %" PRId64 " ? r0 + %" PRId64 " : %" PRId64 ";\n",
            rc->split_rows, rc->rlen, rc->split_rows, rc->rlen);
    fprintf(f, "  float acc[%d];\n#pragma unroll\n  for (int u = 0; u < %d; u++) acc[u] = %s;\n", V, V,
            cg_red_init(r));
    /* vec divides cols and c is a multiple of vec: a tile's vector is all in or all out */
    fprintf(f, "  if (c < %" PRId64 ") {\n", rc->cols);
    fprintf(f, "    const %s *q = p1 + o * %" PRId64 " + (r0 + lr) * %" PRId64 " + c;\n", xs, rc->rlen * rc->cols,
            rc->cols);
    fprintf(f, "#pragma unroll 4\n    for (long long r = r0 + lr; r < r1; r += %d, q += %" PRId64 ") {\n",
            rc->lanes_r, (int64_t)rc->lanes_r * rc->cols);
    if (V > 1) {
        fprintf(f, "      union { xd_v%zu w; %s e[%d]; } v; v.w = *(const xd_v%zu *)q;\n", vb, xs, V, vb);
        fprintf(f, "#pragma unroll\n      for (int u = 0; u < %d; u++) { const float e = %s(v.e[u]); ", V,
                load_of(x->dtype));
    } else {
        fprintf(f, "      { const int u = 0; const float e = %s(*q); ", load_of(x->dtype));
    }
    emit_update(f, r, "acc[u]", "e");
    fprintf(f, " }\n    }\n  }\n");
    /* row lanes meet: a fixed tree over lr (lanes_r is a power of two) */
    fprintf(f, "#pragma unroll\n  for (int u = 0; u < %d; u++) xd_sh[lr * %d + lc * %d + u] = acc[u];\n", V, TC, V);
    fprintf(f, "  __syncthreads();\n");
    fprintf(f, "  for (int s = %d; s > 0; s >>= 1) {\n", rc->lanes_r / 2);
    fprintf(f, "    if (lr < s) {\n#pragma unroll\n      for (int u = 0; u < %d; u++) {\n", V);
    fprintf(f, "        acc[u] = XD_COMB(acc[u], xd_sh[(lr + s) * %d + lc * %d + u]); xd_sh[lr * %d + lc * %d + u] = acc[u];\n"
               "      }\n    }\n    __syncthreads();\n  }\n", TC, V, TC, V);
    fprintf(f, "  if (lr != 0 || c >= %" PRId64 ") return;\n", rc->cols);
    fprintf(f, "#pragma unroll\n  for (int u = 0; u < %d; u++) {\n", V);
    if (rc->splits > 1) {
        fprintf(f, "    ws[(long long)blockIdx.y * %" PRId64 " + o * %" PRId64 " + c + u] = acc[u];\n  }\n}\n",
                rc->outer * rc->cols, rc->cols);
        /* the second pass: splits folded in order */
        fprintf(f, "extern \"C\" __global__ void __launch_bounds__(%d) %s_fin(%s *__restrict__ p0, "
                   "const float *__restrict__ ws)\n{\n", (int)CG_BLOCK, kname, ys);
        fprintf(f, "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < %" PRId64
                   "; i += (long long)gridDim.x * blockDim.x) {\n", rc->outer * rc->cols);
        fprintf(f, "    float a = ws[i];\n    for (int s = 1; s < %d; s++) a = XD_COMB(a, ws[(long long)s * %" PRId64
                   " + i]);\n", rc->splits, rc->outer * rc->cols);
        emit_final_store(f, rc, r, y->dtype, "a", "i", "    ");
        fprintf(f, "  }\n}\n");
    } else {
        char off[64];
        snprintf(off, sizeof off, "o * %" PRId64 " + c + u", rc->cols);
        fprintf(f, "    float a = acc[u];\n");
        emit_final_store(f, rc, r, y->dtype, "a", off, "    ");
        fprintf(f, "  }\n}\n");
    }
}

static void emit_row(FILE *f, const cg_redv2 *rc, gred_op r, const gtensor *x, const gtensor *y, const char *kname)
{
    const char *xs = cg_storage_type(x->dtype), *ys = cg_storage_type(y->dtype);
    const int V = rc->vec;
    const size_t vb = gg_dtype_bytes(x->dtype) * (size_t)V;
    const int64_t nv = rc->rlen / V; /* vec divides rlen */
    fprintf(f, "#define XD_COMB(A, B) %s\n", combine_of(r));
    fprintf(f, "extern \"C\" __global__ void __launch_bounds__(%d) %s(%s *__restrict__ p0, const %s *__restrict__ p1)\n{\n",
            (int)CG_BLOCK, kname, ys, xs);
    if (rc->warp_rows) {
        fprintf(f, "  const int lane = threadIdx.x & 31, wpb = blockDim.x >> 5;\n");
        fprintf(f, "  for (long long row = (long long)blockIdx.x * wpb + (threadIdx.x >> 5); row < %" PRId64
                   "; row += (long long)gridDim.x * wpb) {\n", rc->outer);
        fprintf(f, "    float acc = %s;\n    for (long long e = lane; e < %" PRId64 "; e += 32) {\n", cg_red_init(r), nv);
    } else {
        fprintf(f, "  __shared__ float xd_sh[32];\n");
        fprintf(f, "  for (long long row = blockIdx.x; row < %" PRId64 "; row += gridDim.x) {\n", rc->outer);
        /* unrolled: several 16-byte loads in flight a thread (8 a thread for 8192 f32) */
        fprintf(f, "    float acc = %s;\n#pragma unroll 4\n    for (long long e = threadIdx.x; e < %" PRId64
                   "; e += blockDim.x) {\n", cg_red_init(r), nv);
    }
    if (V > 1) {
        fprintf(f, "      union { xd_v%zu w; %s e[%d]; } v; v.w = ((const xd_v%zu *)(p1 + row * %" PRId64 "))[e];\n", vb,
                xs, V, vb, rc->rlen);
        fprintf(f, "#pragma unroll\n      for (int u = 0; u < %d; u++) { const float x = %s(v.e[u]); ", V,
                load_of(x->dtype));
    } else {
        fprintf(f, "      { const float x = %s(p1[row * %" PRId64 " + e]); ", load_of(x->dtype), rc->rlen);
    }
    emit_update(f, r, "acc", "x");
    fprintf(f, " }\n    }\n");
    if (rc->warp_rows)
        fprintf(f, "    for (int s = 16; s > 0; s >>= 1) { const float w = __shfl_xor_sync(0xffffffffu, acc, s); "
                   "acc = XD_COMB(acc, w); }\n    if (lane == 0) {\n");
    else
        fprintf(f, "    acc = %s(acc, xd_sh);\n    if (threadIdx.x == 0) {\n",
                r == RED_MAX || r == RED_AMAX ? "xd_block_max" : r == RED_MIN ? "xd_block_min"
                : r == RED_PROD ? "xd_block_prod" : "xd_block_sum");
    emit_final_store(f, rc, r, y->dtype, "acc", "row", "      ");
    fprintf(f, "    }\n  }\n}\n");
}

xdnn_status cg_reduce_v2(const ggraph *g, int anchor, const cg_redv2 *rc, const char *kname, cg_kernel *k)
{
    memset(k, 0, sizeof *k);
    const gnode *n = &g->n[anchor];
    const gtensor *x = &g->t[n->in[0]], *y = &g->t[n->out];
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return XDNN_ERR_NOMEM;
    fputs(cg_prelude(), f);
    if (rc->form == CG_FORM_COL)
        emit_col(f, rc, n->red, x, y, kname);
    else
        emit_row(f, rc, n->red, x, y, kname);
    if (fclose(f) != 0 || !text) {
        free(text);
        return XDNN_ERR_NOMEM;
    }
    k->src = arena_strdup(g->ar, text);
    free(text);
    k->name = kname;
    k->params = arena_alloc(g->ar, 2 * sizeof(int));
    k->params[0] = n->out;
    k->params[1] = n->in[0];
    k->nparams = 2;
    k->form = rc->form;
    k->vec = 1; /* not the pointwise chunking: the v2 launcher checks x's alignment itself */
    k->align = (int)(gg_dtype_bytes(x->dtype) * (size_t)rc->vec);
    if (rc->form == CG_FORM_COL) {
        k->work = rc->grid_x;
        k->grid_y = (unsigned)rc->splits;
        k->ws_bytes = rc->ws_bytes;
        if (rc->splits > 1) {
            char nm[128];
            snprintf(nm, sizeof nm, "%s_fin", kname);
            k->name2 = arena_strdup(g->ar, nm);
            k->work2 = rc->outer * rc->cols;
        }
    } else {
        k->work = rc->warp_rows ? (rc->outer + CG_BLOCK / 32 - 1) / (CG_BLOCK / 32) : rc->outer;
        k->per_row = true;
    }
    return k->src ? XDNN_OK : XDNN_ERR_NOMEM;
}
