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
 * by rlen, norm2 takes the root), stored through the output's rounding.
 *
 *  packed (session 15; XDNN_REDUCE_PACKED=0: the f32 accumulation above):
 *      max, min and amax of f16/bf16 are exact in the input's own dtype, so
 *      both forms keep their accumulators as pairs of it in 32-bit words and
 *      combine with one max.NaN/min.NaN .f16x2/.bf16x2 a pair (amax clears
 *      the sign bits first): a 16-byte load is 4 ops, not 8 converts and 8
 *      compares.  The column form's pairs are two adjacent columns (only the
 *      store unpacks them; its split partials are the input's 16 bits); the
 *      row form folds the two halves once, after the block's reduction.  The
 *      .NaN forms give NaN when an input is NaN, as the reference does, and
 *      order +0 above -0 (the f32 path's xd_max_nan is max.NaN.f32).  A lone
 *      element (vec 1: odd extents) rides in the low half, the identity in the
 *      high one. */
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

bool cg_reduce_packed_enabled(void)
{
    /* off unless "1": measured level with the f32 accumulation (session 15, H100: max-last bf16 8192^2 0.0508
     * against 0.0503 ms, max-first 0.0548 against 0.0564), and its packed PTX needs sm_80 */
    const char *e = getenv("XDNN_REDUCE_PACKED");
    return e && e[0] == '1' && e[1] == '\0';
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
    rc->packed = esize == 2 && (n->red == RED_MAX || n->red == RED_MIN || n->red == RED_AMAX) &&
                 cg_reduce_packed_enabled();
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
        const size_t part = rc->packed ? 2 : sizeof(float); /* a partial: the input's 16 bits, or f32 */
        rc->ws_bytes = rc->splits > 1 ? (size_t)rc->splits * (size_t)(rc->outer * rc->cols) * part : 0;
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
    case RED_MAX: fprintf(f, "%s = xd_max_nan(%s, %s);", acc, acc, v); break;
    case RED_MIN: fprintf(f, "%s = xd_min_nan(%s, %s);", acc, acc, v); break;
    case RED_AMAX: fprintf(f, "%s = xd_max_nan(%s, fabsf(%s));", acc, acc, v); break;
    case RED_NORM1: fprintf(f, "%s = %s + fabsf(%s);", acc, acc, v); break;
    case RED_PROD: fprintf(f, "%s = %s * %s;", acc, acc, v); break;
    case RED_NORM2: fprintf(f, "%s = %s + %s * %s;", acc, acc, v, v); break;
    default: fprintf(f, "%s = %s + %s;", acc, acc, v); break;
    }
}

/* How two partial results meet (cg_reduce's block reductions). */
static const char *combine_of(gred_op r)
{
    return r == RED_MAX || r == RED_AMAX ? "xd_max_nan(A, B)" : r == RED_MIN ? "xd_min_nan(A, B)"
           : r == RED_PROD                ? "(A) * (B)"
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

/* The column form's geometry: lane, outer index, first column, the block's slice of rows. */
static void emit_col_lanes(FILE *f, const cg_redv2 *rc)
{
    fprintf(f, "  const int lc = threadIdx.x %% %d, lr = threadIdx.x / %d;\n", rc->lanes_c, rc->lanes_c);
    fprintf(f, "  const long long o = blockIdx.x / %" PRId64 ", c = (long long)(blockIdx.x %% %" PRId64 ") * %d + lc * %d;\n",
            rc->tiles, rc->tiles, rc->lanes_c * rc->vec, rc->vec);
    fprintf(f, "  const long long r0 = (long long)blockIdx.y * %" PRId64 ";\n", rc->split_rows);
    fprintf(f, "  const long long r1 = r0 + %" PRId64 " < %" PRId64 " ? r0 + %" PRId64 " : %" PRId64 ";\n",
            rc->split_rows, rc->rlen, rc->split_rows, rc->rlen);
}

/* The loop over the slice's rows: q points at this lane's vector of row r (the body and its braces follow). */
static void emit_col_rows(FILE *f, const cg_redv2 *rc, const char *xs)
{
    /* vec divides cols and c is a multiple of vec: a tile's vector is all in or all out */
    fprintf(f, "  if (c < %" PRId64 ") {\n", rc->cols);
    fprintf(f, "    const %s *q = p1 + o * %" PRId64 " + (r0 + lr) * %" PRId64 " + c;\n", xs, rc->rlen * rc->cols,
            rc->cols);
    fprintf(f, "#pragma unroll 4\n    for (long long r = r0 + lr; r < r1; r += %d, q += %" PRId64 ") {\n",
            rc->lanes_r, (int64_t)rc->lanes_r * rc->cols);
}

/* Row lanes meet: a fixed tree over lr (lanes_r is a power of two) on the n accumulators a lane holds, by
 * comb(A, B); then only row lane 0 of a column inside cols goes on. */
static void emit_col_tree(FILE *f, const cg_redv2 *rc, int n, const char *comb)
{
    const int tn = rc->lanes_c * n;
    fprintf(f, "#pragma unroll\n  for (int u = 0; u < %d; u++) xd_sh[lr * %d + lc * %d + u] = acc[u];\n", n, tn, n);
    fprintf(f, "  __syncthreads();\n");
    fprintf(f, "  for (int s = %d; s > 0; s >>= 1) {\n", rc->lanes_r / 2);
    fprintf(f, "    if (lr < s) {\n#pragma unroll\n      for (int u = 0; u < %d; u++) {\n", n);
    fprintf(f, "        acc[u] = %s(acc[u], xd_sh[(lr + s) * %d + lc * %d + u]); xd_sh[lr * %d + lc * %d + u] = acc[u];\n"
               "      }\n    }\n    __syncthreads();\n  }\n", comb, tn, n, tn, n);
    fprintf(f, "  if (lr != 0 || c >= %" PRId64 ") return;\n", rc->cols);
}

static void emit_col(FILE *f, const cg_redv2 *rc, gred_op r, const gtensor *x, const gtensor *y, const char *kname)
{
    const char *xs = cg_storage_type(x->dtype), *ys = cg_storage_type(y->dtype);
    const int V = rc->vec;
    const size_t vb = gg_dtype_bytes(x->dtype) * (size_t)V;
    fprintf(f, "#define XD_COMB(A, B) %s\n", combine_of(r));
    fprintf(f, "extern \"C\" __global__ void __launch_bounds__(%d) %s(%s *__restrict__ p0, const %s *__restrict__ p1, "
               "float *__restrict__ ws)\n{\n", (int)CG_BLOCK, kname, ys, xs);
    fprintf(f, "  __shared__ float xd_sh[%d];\n", CG_BLOCK * V);
    emit_col_lanes(f, rc);
    fprintf(f, "  float acc[%d];\n#pragma unroll\n  for (int u = 0; u < %d; u++) acc[u] = %s;\n", V, V,
            cg_red_init(r));
    emit_col_rows(f, rc, xs);
    if (V > 1) {
        fprintf(f, "      union { xd_v%zu w; %s e[%d]; } v; v.w = *(const xd_v%zu *)q;\n", vb, xs, V, vb);
        fprintf(f, "#pragma unroll\n      for (int u = 0; u < %d; u++) { const float e = %s(v.e[u]); ", V,
                load_of(x->dtype));
    } else {
        fprintf(f, "      { const int u = 0; const float e = %s(*q); ", load_of(x->dtype));
    }
    emit_update(f, r, "acc[u]", "e");
    fprintf(f, " }\n    }\n  }\n");
    emit_col_tree(f, rc, V, "XD_COMB");
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

/* The row form's loop over rows: a warp's rows (lane, wpb) or a block's. */
static void emit_row_loop(FILE *f, const cg_redv2 *rc)
{
    if (rc->warp_rows) {
        fprintf(f, "  const int lane = threadIdx.x & 31, wpb = blockDim.x >> 5;\n");
        fprintf(f, "  for (long long row = (long long)blockIdx.x * wpb + (threadIdx.x >> 5); row < %" PRId64
                   "; row += (long long)gridDim.x * wpb) {\n", rc->outer);
    } else {
        fprintf(f, "  for (long long row = blockIdx.x; row < %" PRId64 "; row += gridDim.x) {\n", rc->outer);
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
    if (!rc->warp_rows)
        fprintf(f, "  __shared__ float xd_sh[32];\n");
    emit_row_loop(f, rc);
    if (rc->warp_rows) {
        fprintf(f, "    float acc = %s;\n    for (long long e = lane; e < %" PRId64 "; e += 32) {\n", cg_red_init(r), nv);
    } else {
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

/* ---- packed 16-bit max/min/amax (rc->packed) */
typedef struct pk_op {
    const char *ptx;    /* the combine of two words: max.NaN.bf16x2, ... */
    unsigned id;        /* the identity, one half: -inf (max), +inf (min), 0 (amax) */
    bool abs;           /* amax: |x| by clearing the sign bits */
    const char *to_f32; /* one half to f32, exactly */
} pk_op;

static pk_op pk_of(gred_op r, xdnn_dtype t)
{
    const bool bf = t == XDNN_BF16;
    pk_op k = {.abs = r == RED_AMAX, .to_f32 = bf ? "xd_b2f" : "xd_h2f"};
    k.ptx = r == RED_MIN ? (bf ? "min.NaN.bf16x2" : "min.NaN.f16x2") : (bf ? "max.NaN.bf16x2" : "max.NaN.f16x2");
    k.id = r == RED_AMAX ? 0u : r == RED_MIN ? (bf ? 0x7f80u : 0x7c00u) : (bf ? 0xff80u : 0xfc00u);
    return k;
}

/* xd_pk (the combine), XD_PK_ID (two identities), XD_PK_IN (a loaded word to the
 * accumulator's terms), and for the row form's blocks xd_block_pk. */
static void emit_pk_helpers(FILE *f, const pk_op *k, bool block)
{
    fprintf(f, "__device__ __forceinline__ unsigned xd_pk(unsigned a, unsigned b)"
               " { unsigned d; asm(\"%s %%0, %%1, %%2;\" : \"=r\"(d) : \"r\"(a), \"r\"(b)); return d; }\n", k->ptx);
    fprintf(f, "#define XD_PK_ID 0x%04x%04xu\n", k->id, k->id);
    fprintf(f, "#define XD_PK_IN(W) %s\n", k->abs ? "((W) & 0x7fff7fffu)" : "(W)");
    if (block)
        fputs("__device__ __forceinline__ unsigned xd_block_pk(unsigned v, unsigned *sh) {\n"
              "  for (int o = 16; o > 0; o >>= 1) v = xd_pk(v, __shfl_xor_sync(0xffffffffu, v, o));\n"
              "  int wid = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = (blockDim.x + 31) >> 5;\n"
              "  __syncthreads(); if (lane == 0) sh[wid] = v; __syncthreads();\n"
              "  v = lane < nw ? sh[lane] : XD_PK_ID;\n"
              "  for (int o = 16; o > 0; o >>= 1) v = xd_pk(v, __shfl_xor_sync(0xffffffffu, v, o));\n"
              "  return v; }\n", f);
}

/* The accumulator's update by what `ptr` points at: a vector of V inputs (V / 2 words), or one input in the low
 * half with the identity in the high one. */
static void emit_pk_update(FILE *f, int V, const char *vtype_ptr, const char *ind)
{
    if (V > 1) {
        fprintf(f, "%sunion { xd_v%d w; unsigned e[%d]; } v; v.w = %s;\n", ind, 2 * V, V / 2, vtype_ptr);
        fprintf(f, "#pragma unroll\n%sfor (int u = 0; u < %d; u++) acc[u] = xd_pk(acc[u], XD_PK_IN(v.e[u]));\n", ind,
                V / 2);
    } else {
        fprintf(f, "%sacc[0] = xd_pk(acc[0], XD_PK_IN((XD_PK_ID & 0xffff0000u) | %s));\n", ind, vtype_ptr);
    }
}

/* p0[off] = half `hi` of word w, through f32 (exact) and the output's rounding (exact for the input's dtype) */
static void emit_pk_store(FILE *f, const pk_op *k, xdnn_dtype yt, const char *w, bool hi, const char *off,
                          const char *ind)
{
    fprintf(f, "%sp0[%s] = %s(%s((unsigned short)(%s%s)));\n", ind, off, cg_store_fn(yt), k->to_f32, w,
            hi ? " >> 16" : "");
}

static void emit_col_packed(FILE *f, const cg_redv2 *rc, gred_op r, const gtensor *x, const gtensor *y,
                            const char *kname)
{
    const char *xs = cg_storage_type(x->dtype), *ys = cg_storage_type(y->dtype);
    const int V = rc->vec, W = V > 1 ? V / 2 : 1; /* words a thread */
    const int64_t N = rc->outer * rc->cols;
    const pk_op k = pk_of(r, x->dtype);
    emit_pk_helpers(f, &k, false);
    fprintf(f, "extern \"C\" __global__ void __launch_bounds__(%d) %s(%s *__restrict__ p0, const %s *__restrict__ p1, "
               "float *__restrict__ ws)\n{\n", (int)CG_BLOCK, kname, ys, xs);
    fprintf(f, "  __shared__ unsigned xd_sh[%d];\n", CG_BLOCK * W);
    emit_col_lanes(f, rc);
    fprintf(f, "  unsigned acc[%d];\n#pragma unroll\n  for (int u = 0; u < %d; u++) acc[u] = XD_PK_ID;\n", W, W);
    emit_col_rows(f, rc, xs);
    char load[64];
    snprintf(load, sizeof load, V > 1 ? "*(const xd_v%d *)q" : "*q", 2 * V);
    emit_pk_update(f, V, load, "      ");
    fprintf(f, "    }\n  }\n");
    emit_col_tree(f, rc, W, "xd_pk"); /* on words */
    if (rc->splits > 1) {
        /* partials in the input's dtype: words at even offsets (vec, hence cols and c, even), else halves */
        if (V > 1)
            fprintf(f, "  unsigned *w = (unsigned *)ws + ((long long)blockIdx.y * %" PRId64 " + o * %" PRId64
                       " + c) / 2;\n#pragma unroll\n  for (int u = 0; u < %d; u++) w[u] = acc[u];\n}\n",
                    N, rc->cols, W);
        else
            fprintf(f, "  ((unsigned short *)ws)[(long long)blockIdx.y * %" PRId64 " + o * %" PRId64
                       " + c] = (unsigned short)acc[0];\n}\n", N, rc->cols);
        /* the second pass: splits folded in order (any order gives the same bits: the combine is exact) */
        const int64_t units = V > 1 ? N / 2 : N;
        fprintf(f, "extern \"C\" __global__ void __launch_bounds__(%d) %s_fin(%s *__restrict__ p0, "
                   "const float *__restrict__ ws)\n{\n", (int)CG_BLOCK, kname, ys);
        fprintf(f, "  const %s *w = (const %s *)ws;\n", V > 1 ? "unsigned" : "unsigned short",
                V > 1 ? "unsigned" : "unsigned short");
        fprintf(f, "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < %" PRId64
                   "; i += (long long)gridDim.x * blockDim.x) {\n", units);
        fprintf(f, "    unsigned a = w[i];\n    for (int s = 1; s < %d; s++) a = xd_pk(a, w[(long long)s * %" PRId64
                   " + i]);\n", rc->splits, units);
        if (V > 1) {
            emit_pk_store(f, &k, y->dtype, "a", false, "2 * i", "    ");
            emit_pk_store(f, &k, y->dtype, "a", true, "2 * i + 1", "    ");
        } else {
            emit_pk_store(f, &k, y->dtype, "a", false, "i", "    ");
        }
        fprintf(f, "  }\n}\n");
    } else {
        char lo[64], hi[64];
        snprintf(lo, sizeof lo, "o * %" PRId64 " + c + 2 * u", rc->cols);
        snprintf(hi, sizeof hi, "o * %" PRId64 " + c + 2 * u + 1", rc->cols);
        fprintf(f, "#pragma unroll\n  for (int u = 0; u < %d; u++) {\n", W);
        emit_pk_store(f, &k, y->dtype, "acc[u]", false, lo, "    ");
        if (V > 1)
            emit_pk_store(f, &k, y->dtype, "acc[u]", true, hi, "    ");
        fprintf(f, "  }\n}\n");
    }
}

static void emit_row_packed(FILE *f, const cg_redv2 *rc, gred_op r, const gtensor *x, const gtensor *y,
                            const char *kname)
{
    const char *xs = cg_storage_type(x->dtype), *ys = cg_storage_type(y->dtype);
    const int V = rc->vec, W = V > 1 ? V / 2 : 1;
    const int64_t nv = rc->rlen / V; /* vec divides rlen */
    const pk_op k = pk_of(r, x->dtype);
    emit_pk_helpers(f, &k, !rc->warp_rows);
    fprintf(f, "extern \"C\" __global__ void __launch_bounds__(%d) %s(%s *__restrict__ p0, const %s *__restrict__ p1)\n{\n",
            (int)CG_BLOCK, kname, ys, xs);
    if (!rc->warp_rows)
        fprintf(f, "  __shared__ unsigned xd_sh[32];\n");
    emit_row_loop(f, rc);
    fprintf(f, "    unsigned acc[%d];\n#pragma unroll\n    for (int u = 0; u < %d; u++) acc[u] = XD_PK_ID;\n", W, W);
    if (rc->warp_rows)
        fprintf(f, "    for (long long e = lane; e < %" PRId64 "; e += 32) {\n", nv);
    else
        fprintf(f, "#pragma unroll 4\n    for (long long e = threadIdx.x; e < %" PRId64 "; e += blockDim.x) {\n", nv);
    char load[96];
    if (V > 1)
        snprintf(load, sizeof load, "((const xd_v%d *)(p1 + row * %" PRId64 "))[e]", 2 * V, rc->rlen);
    else
        snprintf(load, sizeof load, "p1[row * %" PRId64 " + e]", rc->rlen);
    emit_pk_update(f, V, load, "      ");
    fprintf(f, "    }\n");
    if (W > 1)
        fprintf(f, "#pragma unroll\n    for (int u = 1; u < %d; u++) acc[0] = xd_pk(acc[0], acc[u]);\n", W);
    if (rc->warp_rows)
        fprintf(f, "    for (int s = 16; s > 0; s >>= 1) acc[0] = xd_pk(acc[0], __shfl_xor_sync(0xffffffffu, acc[0], s));\n"
                   "    if (lane == 0) {\n");
    else
        fprintf(f, "    acc[0] = xd_block_pk(acc[0], xd_sh);\n    if (threadIdx.x == 0) {\n");
    /* the pair's two halves meet once: the low half of the result */
    fprintf(f, "      const unsigned h = xd_pk(acc[0], acc[0] >> 16);\n");
    emit_pk_store(f, &k, y->dtype, "h", false, "row", "      ");
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
        (rc->packed ? emit_col_packed : emit_col)(f, rc, n->red, x, y, kname);
    else
        (rc->packed ? emit_row_packed : emit_row)(f, rc, n->red, x, y, kname);
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
    k->packed = rc->packed;
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
            k->work2 = rc->packed && rc->vec > 1 ? rc->outer * rc->cols / 2 : rc->outer * rc->cols; /* words */
        }
    } else {
        k->work = rc->warp_rows ? (rc->outer + CG_BLOCK / 32 - 1) / (CG_BLOCK / 32) : rc->outer;
        k->per_row = true;
    }
    return k->src ? XDNN_OK : XDNN_ERR_NOMEM;
}
