/* test_gpu_norm.c — host-side logic of the gpunorm engines, no GPU needed:
 *  - norm_welford: which ops it takes, rows / elements per row, the chosen
 *    path (one block per row, warp rows, coalesced-column reduce, 4-wide
 *    apply), the softmax rows it takes from reduce_nvrtc,
 *    parameter-gradient plans, rejection reasons;
 *  - copy_strided: the jobs of every tensor op, replayed on the host with
 *    the kernel's own index arithmetic and compared with the CPU reference
 *    (pad in all modes, negative-step slice, concat/split with @col,
 *    reshape of a strided input, converting copies, 16-byte vectorizing);
 *  - rng_philox: key, stream and addressing, replayed on the host and
 *    compared with the CPU reference bit for bit.
 * Built with CUDA=1 only (else it just says so). */
#include <stdio.h>
#include <string.h>

#if XDNN_HAVE_CUDA
#include "test_util.h"

#include "core/exec.h"
#include "data/data.h"
#include "gpu/eng_copy.h"
#include "gpu/eng_norm.h"
#include "gpu/eng_rng.h"
#include "gpu/engine.h"
#include "gpu/lower.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct fixture {
    xdnn_module_t *m;
    xdnn_diags_t *d;
    xgraph *xg;
    arena *ar;
    ggraph *g;
    gplan *pl;
    run_state cpu;
} fixture;

/* Parse, bind, lower and partition; with `run`, also the CPU reference. */
static bool setup(fixture *f, const char *text, bool run)
{
    memset(f, 0, sizeof *f);
    f->d = xdnn_diags_create();
    if (xdnn_module_parse("test.dnn", text, strlen(text), false, f->d, &f->m) != XDNN_OK ||
        xdnn_graph_bind(xdnn_module_find_graph(f->m, NULL), NULL, 0, f->d) != XDNN_OK) {
        xdnn_diags_print(f->d, stderr);
        CHECK(false, "the test graph sets up (diagnostics above)");
        return false;
    }
    f->xg = xdnn_module_find_graph(f->m, NULL);
    f->ar = arena_create();
    f->g = gpu_lower(f->xg, f->ar);
    f->pl = gpu_partition(f->g, false);
    if (run && (run_state_init(&f->cpu, f->xg, ".") != XDNN_OK || exec_load_inputs(&f->cpu, NULL, 0, f->d) != XDNN_OK ||
                run_state_alloc_results(&f->cpu, f->d) != XDNN_OK || exec_cpu_run(&f->cpu, f->d) != XDNN_OK)) {
        xdnn_diags_print(f->d, stderr);
        CHECK(false, "the test graph sets up (diagnostics above)");
        return false;
    }
    return true;
}

static void teardown(fixture *f)
{
    run_state_free(&f->cpu);
    if (f->ar)
        arena_destroy(f->ar);
    xdnn_module_destroy(f->m);
    xdnn_diags_destroy(f->d);
}

/* The partition whose first node writes tensor `name`. */
static const gpart *part_of(const fixture *f, const char *name)
{
    for (int i = 0; i < f->pl->nparts; i++) {
        const gnode *n = &f->g->n[f->pl->parts[i].nodes[0]];
        if (strcmp(n->name, name) == 0)
            return &f->pl->parts[i];
    }
    return NULL;
}

static bool norm_plan_of(const fixture *f, const char *name, norm_plan *np, char *why, size_t len)
{
    const gpart *p = part_of(f, name);
    return p && gpu_norm_analyze(f->pl, p, 132, np, why, len);
}

/* ---- norm_welford */

/* A batchnorm + the residual add that alone reads its y (either operand
 * order) + the relu of the sum: one partition storing only the relu's
 * result, r in NG_DY's slot, y rounded to its own dtype (res_dt) before the
 * add; a y read twice, a layernorm's y, an add of another dtype stay apart. */
static void test_norm_residual(void)
{
    fixture f;
    norm_plan np;
    char why[512];
    if (setup(&f, "dnn 1;\ngraph g(intermediate=bf16) {\n  input c: bf16[4, 24, 5, 7] @nhwc;\n"
                  "  input x: bf16[4, 24, 5, 7] @nhwc;\n"
                  "  weight s: f32[24];\n  weight b: f32[24];\n  weight mu: f32[24];\n  weight va: f32[24];\n"
                  "  weight s7: bf16[7];\n  z: bf16 @nhwc, m: f32, iv: f32 = batchnorm(c, s, b);\n"
                  "  y: @nhwc = relu(z + x);\n  zi: bf16 @nhwc = batchnorm_infer(c, s, b, mu, va);\n  yi = x + zi;\n"
                  "  zt: bf16 @nhwc, mt: f32, ivt: f32 = batchnorm(c, s, b);\n  yt: @nhwc = relu(zt + x);\n"
                  "  w = zt * 2.0;\n  zf: f32, mf, ivf = batchnorm(c, s, b);\n  yf = zf + x;\n"
                  "  zl: bf16 = layernorm(c, s7, s7, axes=[-1]);\n  yl = zl + x;\n"
                  "  output y: bf16 @nhwc, m, iv, yi: bf16 @nhwc, yt: bf16 @nhwc, w: bf16 @nhwc, yl: bf16 @nhwc,\n"
                  "    mt, ivt, yf, mf, ivf;\n}\n",
              false)) {
        const gpart *p = part_of(&f, "z");
        CHECK(p && p->nnodes == 3, "batchnorm + add + relu: one partition");
        CHECK(norm_plan_of(&f, "z", &np, why, sizeof why), "%s", why);
        const ggraph *g = f.g;
        CHECK(np.cl && np.stats.act == NGACT_RELU && np.stats.res_dt == (int)XDNN_BF16);
        CHECK(strcmp(g->t[np.tid[NG_DY]].name, "x") == 0 && strcmp(g->t[np.tid[NG_Y]].name, "y") == 0);
        int z = g->n[p->anchor].outs[0];
        CHECK(!f.pl->materialized[z], "z is not stored");
        p = part_of(&f, "zi");
        CHECK(p && p->nnodes == 2, "batchnorm_infer + add (r first): one partition");
        CHECK(norm_plan_of(&f, "zi", &np, why, sizeof why), "%s", why);
        CHECK(!np.cl && np.stats.act == NGACT_NONE && strcmp(g->t[np.tid[NG_Y]].name, "yi") == 0);
        CHECK(strcmp(g->t[np.tid[NG_DY]].name, "x") == 0);
        p = part_of(&f, "zt");
        CHECK(p && p->nnodes == 1, "a y read twice stays apart");
        CHECK(norm_plan_of(&f, "zt", &np, why, sizeof why) && np.tid[NG_DY] < 0);
        p = part_of(&f, "zf");
        CHECK(p && p->nnodes == 1, "an f32 y + a bf16 r stays apart");
        p = part_of(&f, "zl");
        CHECK(p && p->nnodes == 1, "a layernorm's y takes no residual");
    }
    teardown(&f);
    setenv("XDNN_NO_NORM_RESIDUAL", "1", 1);
    if (setup(&f, "dnn 1;\ngraph g {\n  input c: f32[4, 24, 5, 7];\n  input x: f32[4, 24, 5, 7];\n"
                  "  weight s: f32[24];\n  weight b: f32[24];\n  z, m, iv = batchnorm(c, s, b);\n"
                  "  y = relu(z + x);\n  output y, m, iv;\n}\n", false)) {
        const gpart *p = part_of(&f, "z");
        CHECK(p && p->nnodes == 1, "XDNN_NO_NORM_RESIDUAL keeps the add apart");
    }
    teardown(&f);
    unsetenv("XDNN_NO_NORM_RESIDUAL");
}

/* bnl2 (session 13): the persistent channels-last batchnorm walks its re-read rows top down with evict-first
 * policies (ng_job.cl_l2) where x is past 32 MB and at most 256 MB by default; XDNN_NORM_CL_L2=0 / 1 force it. */
static void test_norm_cl_l2(void)
{
    fixture f;
    norm_plan np;
    char why[512];
    static const char *text =
        "dnn 1;\ngraph g {\n  input a: bf16[256, 128, 28, 28] @nhwc;\n  input b: bf16[256, 256, 14, 14] @nhwc;\n"
        "  input c: bf16[256, 64, 112, 112] @nhwc;\n  weight s1: f32[128];\n  weight s2: f32[256];\n"
        "  weight s3: f32[64];\n  ya, ma, ia = batchnorm(a, s1, s1);\n  yb, mb, ib = batchnorm(b, s2, s2);\n"
        "  yc, mc, ic = batchnorm(c, s3, s3);\n  output ya: bf16 @nhwc, yb: bf16 @nhwc, yc: bf16 @nhwc;\n}\n";
    unsetenv("XDNN_NORM_CL_L2");
    if (setup(&f, text, false)) {
        CHECK(norm_plan_of(&f, "ya", &np, why, sizeof why) && np.cl && np.stats.cl_l2 == 1, "51 MB: on %s", why);
        CHECK(norm_plan_of(&f, "yb", &np, why, sizeof why) && np.cl && np.stats.cl_l2 == 0, "26 MB: off");
        CHECK(norm_plan_of(&f, "yc", &np, why, sizeof why) && np.cl && np.stats.cl_l2 == 0, "411 MB: off");
        setenv("XDNN_NORM_CL_L2", "1", 1);
        CHECK(norm_plan_of(&f, "yb", &np, why, sizeof why) && np.stats.cl_l2 == 1, "=1: on at 26 MB");
        setenv("XDNN_NORM_CL_L2", "0", 1);
        CHECK(norm_plan_of(&f, "ya", &np, why, sizeof why) && np.stats.cl_l2 == 0, "=0: off at 51 MB");
        unsetenv("XDNN_NORM_CL_L2");
    }
    teardown(&f);
}

static void test_norm_paths(void)
{
    fixture f;
    norm_plan np;
    char why[512];
    if (setup(&f, "dnn 1;\ngraph g {\n  input x: f32[4, 6, 10];\n  input h: f16[3, 8];\n  weight s: f32[10];\n"
                  "  weight b: f32[10];\n  weight s8: f16[8];\n  y = layernorm(x, s, b);\n"
                  "  z, m, iv = layernorm(h, s8, s8);\n  output y, z, m, iv;\n}\n", false)) {
        CHECK(gpu_norm_kind("layernorm") == NK_LN && gpu_norm_kind("matmul") == NK_NONE);
        CHECK(norm_plan_of(&f, "y", &np, why, sizeof why));
        CHECK(np.kind == NK_LN && np.rows == 24 && np.D == 10 && np.row_fast && !np.stats.vec4);
        CHECK(np.ws_bytes == 0);
        CHECK(norm_plan_of(&f, "z", &np, why, sizeof why));
        CHECK(np.rows == 3 && np.D == 8 && np.row_fast && np.stats.vec4);
        CHECK(np.tid[NG_MEAN] >= 0 && np.tid[NG_INV] >= 0);
    }
    teardown(&f);

    /* batchnorm: NHWC reduces with threads across channels, NCHW along rows */
    if (setup(&f, "dnn 1;\ngraph g {\n  input a: f32[2, 8, 3, 5] @nhwc;\n  input c: f32[2, 8, 3, 5];\n"
                  "  weight s: f32[8];\n  weight b: f32[8];\n  weight rm: f32[8];\n  weight rv: f32[8];\n"
                  "  y, m, iv, rmn, rvn = batchnorm(a, s, b, running_mean=rm, running_var=rv);\n"
                  "  u, m2, iv2 = batchnorm(c, s, b);\n  output y: f32 @nhwc, m, iv, rmn, rvn, u;\n}\n", false)) {
        CHECK(norm_plan_of(&f, "y", &np, why, sizeof why));
        CHECK(np.kind == NK_BN && np.rows == 8 && np.D == 30 && !np.row_fast);
        CHECK(np.stats.col == 1 && np.stats.mode == NGR_WELFORD && np.stats.fin == NGF_STATS);
        CHECK(np.stats.outer.n == 1 && np.stats.inner.n == 1 && np.stats.inner.stride[NG_X][0] == 8);
        CHECK(np.tid[NG_RMO] >= 0 && np.tid[NG_RVO] >= 0 && fabsf(np.stats.unbias - 30.0f / 29.0f) < 1e-6f);
        /* apply: innermost dim C = 8 -> 2 groups of 4 */
        CHECK(np.stats.vec4 && np.stats.all.size[np.stats.all.n - 1] == 2);
        CHECK(np.ws_bytes > 0 && np.off_rows[0] >= np.off_part);
        /* channels last: norm_cl.cu, splits of at least two rounds of 4 loads per thread */
        CHECK(np.cl && np.stats.nsplit == 1 && np.stats.chunk == 30);
        CHECK(norm_plan_of(&f, "u", &np, why, sizeof why));
        CHECK(np.stats.col == 0 && np.stats.inner.n == 2); /* [N (stride 120), HW (stride 1)] */
        CHECK(!np.cl);
    }
    teardown(&f);

    /* norm_cl.cu: the backward too, rows padded past C, splits that fill the
     * device with at most 65535 of them; y in another layout than x, or dy of
     * another dtype, stay on the generic path */
    if (setup(&f, "dnn 1;\ngraph g {\n  input x: bf16[64, 96, 56, 56] @nhwc;\n  input dy: bf16[64, 96, 56, 56] @nhwc;\n"
                  "  input p: f16[4000, 40] @strides(48, 1);\n  input dh: f32[4000, 40];\n"
                  "  weight s: f32[96];\n  weight b: f32[96];\n  weight s4: f32[40];\n  weight b4: f32[40];\n"
                  "  y, m, iv = batchnorm(x, s, b);\n  dx, ds, db = batchnorm_bwd(dy, x, s, m, iv);\n"
                  "  z, zm, ziv = batchnorm(x, s, b);\n  q, qm, qiv = batchnorm(p, s4, b4);\n"
                  "  qx, qs, qb = batchnorm_bwd(dh, p, s4, qm, qiv);\n"
                  "  output y: bf16 @nhwc, dx: bf16 @nhwc, ds, db, z: bf16, q: f16, qx: f16, qs, qb;\n}\n", false)) {
        CHECK(norm_plan_of(&f, "y", &np, why, sizeof why));
        /* 96 channels in vectors of 8: 12 -> 16 threads across, 16 rows: 1 channel block, 396 splits */
        CHECK(np.cl && np.stats.O == 96 && np.stats.Q == 64 * 56 * 56 && np.stats.nsplit == 396);
        CHECK(np.stats.chunk * np.stats.nsplit >= np.stats.Q && np.stats.chunk * (np.stats.nsplit - 1) < np.stats.Q);
        CHECK(np.ws_bytes >= (size_t)396 * 96 * 16 + 6 * 96 * 4);
        CHECK(norm_plan_of(&f, "dx", &np, why, sizeof why));
        CHECK(np.cl && np.pgrad_from_rows && np.apply_mode == NGA_BWD && np.stats.mode == NGR_BWD);
        CHECK(norm_plan_of(&f, "z", &np, why, sizeof why));
        CHECK(!np.cl);
        CHECK(norm_plan_of(&f, "q", &np, why, sizeof why));
        CHECK(np.cl && np.stats.inner.stride[NG_X][0] == 48 && np.stats.inner.stride[NG_Y][0] == 40);
        CHECK(norm_plan_of(&f, "qx", &np, why, sizeof why));
        CHECK(!np.cl);
    }
    teardown(&f);

    /* backward plans: batchnorm takes dscale/dbias from its row sums unless the
     * scale is one element; group norm reduces them over (N, spatial) */
    if (setup(&f, "dnn 1;\ngraph g {\n  input x: f32[2, 6, 4, 4];\n  input dy: f32[2, 6, 4, 4];\n"
                  "  weight s: f32[6];\n  weight s1: f32[1];\n  weight b: f32[6];\n"
                  "  y, m, iv = batchnorm(x, s, b);\n  dx, ds, db = batchnorm_bwd(dy, x, s, m, iv);\n"
                  "  dx1, ds1, db1 = batchnorm_bwd(dy, x, s1, m, iv);\n"
                  "  z, gm, giv = groupnorm(x, s, b, groups=3);\n"
                  "  gx, gs, gb = groupnorm_bwd(dy, x, s, gm, giv, groups=3);\n"
                  "  output dx, ds, db, dx1, ds1, db1, gx, gs, gb;\n}\n", false)) {
        CHECK(norm_plan_of(&f, "dx", &np, why, sizeof why));
        CHECK(np.kind == NK_BN_BWD && np.has_pgrad && np.pgrad_from_rows && np.stats.write_pgrad);
        CHECK(norm_plan_of(&f, "dx1", &np, why, sizeof why));
        CHECK(np.has_pgrad && !np.pgrad_from_rows && np.pgrad.O == 1 && np.pgrad.Q == 2 * 6 * 16);
        CHECK(norm_plan_of(&f, "gx", &np, why, sizeof why));
        CHECK(np.kind == NK_GN_BWD && np.rows == 6 && np.D == 32 && np.pgrad.O == 6 && np.pgrad.Q == 32);
        CHECK(np.apply_mode == NGA_BWD && np.stats.mode == NGR_BWD);
    }
    teardown(&f);

    /* softmax_bwd over axis 0: rows are the other dims, threads across them */
    if (setup(&f, "dnn 1;\ngraph g {\n  input x: f32[5, 64];\n  input dy: f32[5, 64];\n"
                  "  y = softmax(x, axis=0);\n  dx = softmax_bwd(dy, y, axis=0);\n  output dx;\n}\n", false)) {
        CHECK(norm_plan_of(&f, "dx", &np, why, sizeof why));
        CHECK(np.kind == NK_SMB && np.rows == 64 && np.D == 5 && np.stats.col == 1 && np.apply_mode == NGA_SMB);
    }
    teardown(&f);

    /* warp rows (norm_warp.cu): layer/rms rows whose length and strides keep 16
     * bytes; softmax / log_softmax over contiguous last-axis rows (the rows of a
     * padded view are ldx apart); another axis, a fused prologue or rows over
     * NG_WARP_ROW_MAX stay on reduce_nvrtc, with the reason */
    if (setup(&f, "dnn 1;\ngraph g {\n  input x: f16[6, 1000] @strides(1008, 1);\n  input h: f16[6, 1004];\n"
                  "  input w: f32[3, 8200];\n  weight s: f16[1000];\n  weight s4: f16[1004];\n"
                  "  y = layernorm(x, s, s);\n  k = rmsnorm(h, s4);\n  p = softmax(x, axis=-1);\n"
                  "  q = log_softmax(x, axis=1);\n  r = softmax(x, axis=0);\n  t = softmax(w, axis=1);\n"
                  "  u = softmax(x * 2.0, axis=1);\n  output y, k, p, q, r, t, u;\n}\n", false)) {
        CHECK(norm_plan_of(&f, "y", &np, why, sizeof why) && np.row_fast && np.warp_rows);
        CHECK(norm_plan_of(&f, "k", &np, why, sizeof why) && np.row_fast && !np.warp_rows, "1004 f16: 8-byte rows");
        CHECK(norm_plan_of(&f, "p", &np, why, sizeof why), "%s", why);
        CHECK(np.kind == NK_SM && np.rows == 6 && np.D == 1000 && np.ldx == 1008 && np.ldy == 1000 && np.ws_bytes == 0);
        CHECK(norm_plan_of(&f, "q", &np, why, sizeof why) && np.kind == NK_LSM);
        CHECK(!norm_plan_of(&f, "r", &np, why, sizeof why) && strstr(why, "softmax") && strstr(why, "'axis'"), "%s", why);
        CHECK(!norm_plan_of(&f, "t", &np, why, sizeof why) && strstr(why, "8200"), "%s", why);
        const gpart *pu = NULL; /* its first node is the prologue's: find it by its anchor */
        for (int i = 0; i < f.pl->nparts; i++)
            if (f.pl->parts[i].anchor >= 0 && strcmp(f.g->n[f.pl->parts[i].anchor].name, "u") == 0)
                pu = &f.pl->parts[i];
        CHECK(pu && pu->nnodes > 1 && !gpu_norm_analyze(f.pl, pu, 132, &np, why, sizeof why) &&
              strstr(why, "prologue"), "%s", why);
        f.g->sizes_as_args = true; /* a dynamic plan: its softmax may outgrow the limit on a resize */
        CHECK(!norm_plan_of(&f, "p", &np, why, sizeof why) && strstr(why, "dynamic"), "%s", why);
        f.g->sizes_as_args = false;
    }
    teardown(&f);

    /* rejections name the op, the tensor and the dtype */
    if (setup(&f, "dnn 1;\ngraph g {\n  input x: f64[4, 6];\n  weight s: f64[6];\n  weight b: f64[6];\n"
                  "  y = layernorm(x, s, b);\n  z = relu(x);\n  output y, z;\n}\n", false)) {
        CHECK(!norm_plan_of(&f, "y", &np, why, sizeof why));
        CHECK(strstr(why, "layernorm") && strstr(why, "f64"));
        CHECK(!norm_plan_of(&f, "z", &np, why, sizeof why) && strstr(why, "norm node"));
    }
    teardown(&f);

    /* a forward norm and the activation that alone reads its y: one partition
     * storing the activation's result; a y read twice stays apart */
    if (setup(&f, "dnn 1;\ngraph g {\n  input x: f16[4, 64];\n  weight s: f16[64];\n  weight b: f16[64];\n"
                  "  h = layernorm(x, s, b);\n  y = gelu(h, approx=\"tanh\");\n  k = layernorm(x, s, b);\n"
                  "  z = silu(k) + k;\n  output y, z;\n}\n", false)) {
        CHECK(norm_plan_of(&f, "h", &np, why, sizeof why), "%s", why);
        const gpart *p = part_of(&f, "h");
        CHECK(np.act_node >= 0 && np.stats.act == NGACT_GELU_TANH);
        CHECK(p && np.stats.act_dt == (int)f.g->t[f.g->n[p->anchor].outs[0]].dtype, "the norm's own y dtype");
        CHECK(p && p->nnodes == 2 && np.tid[NG_Y] == f.g->n[np.act_node].out);
        CHECK(norm_plan_of(&f, "k", &np, why, sizeof why) && np.act_node < 0 && np.stats.act == NGACT_NONE);
    }
    teardown(&f);
    test_norm_residual();
    test_norm_cl_l2();
}

/* softmax_bwd / log_softmax_bwd on the warp rows (kernels/softmax_warp_bwd.cu,
 * session 12; the default since 13, XDNN_SOFTMAX_BWD_ROWS=0: never): rows of one stride-1 run
 * in y, dy and dx of one dtype, at most NG_SMB_ROW_BYTES (16-bit 8192, f32
 * 4096 elements), any outer strides (padded rows, outer dims that do not
 * merge), one element a row; wider rows, another axis, mixed dtypes stay on
 * the split path. */
static void test_smb_rows(void)
{
    fixture f;
    norm_plan np;
    char why[256];
    const char *text =
        "dnn 1;\ngraph g {\n  input a: bf16[3, 8192];\n  input b: f32[3, 4096];\n  input c: f32[3, 4097];\n"
        "  input d: bf16[3, 8193];\n  input e: f16[5, 1];\n  input h: f16[6, 1000] @strides(1004, 1);\n"
        "  input k: bf16[2, 1, 3, 1000] @strides(7000, 7000, 2008, 1);\n  input m: f32[3, 64];\n"
        "  input n: bf16[3, 64];\n"
        "  da = softmax_bwd(a, a);\n  db = log_softmax_bwd(b, b);\n  dc = softmax_bwd(c, c);\n"
        "  dd = log_softmax_bwd(d, d);\n  de = softmax_bwd(e, e);\n  dh: @strides(1004, 1) = softmax_bwd(h, h);\n"
        "  dk = log_softmax_bwd(k, k);\n  d0 = softmax_bwd(m, m, axis=0);\n  dm = softmax_bwd(n, m);\n"
        "  output da: bf16, db: f32, dc: f32, dd: bf16, de: f16, dh: f16 @strides(1004, 1), dk: bf16, d0: f32, dm: bf16;\n}\n";
    if (setup(&f, text, false)) {
        unsetenv("XDNN_SOFTMAX_BWD_ROWS");
        CHECK(norm_plan_of(&f, "da", &np, why, sizeof why) && np.kind == NK_SMB && np.smb_rows && np.rows == 3 &&
              np.D == 8192, "on by default: %s", why);
        setenv("XDNN_SOFTMAX_BWD_ROWS", "1", 1);
        CHECK(norm_plan_of(&f, "db", &np, why, sizeof why) && np.smb_rows && np.kind == NK_LSMB && np.stats.log_softmax,
              "f32 4096");
        CHECK(norm_plan_of(&f, "dc", &np, why, sizeof why) && !np.smb_rows, "f32 4097: past the rows");
        CHECK(norm_plan_of(&f, "dd", &np, why, sizeof why) && !np.smb_rows, "bf16 8193: past the rows");
        CHECK(norm_plan_of(&f, "de", &np, why, sizeof why) && np.smb_rows && np.rows == 5 && np.D == 1 &&
              np.stats.inner.n == 0, "one element a row");
        CHECK(norm_plan_of(&f, "dh", &np, why, sizeof why) && np.smb_rows && np.stats.outer.n == 1 &&
              np.stats.outer.stride[NG_X][0] == 1004 && np.stats.outer.stride[NG_DX][0] == 1004, "padded rows");
        CHECK(norm_plan_of(&f, "dk", &np, why, sizeof why) && np.smb_rows && np.rows == 6 && np.stats.outer.n == 2,
              "outer dims that do not merge");
        CHECK(norm_plan_of(&f, "d0", &np, why, sizeof why) && !np.smb_rows, "axis 0: not contiguous");
        CHECK(norm_plan_of(&f, "dm", &np, why, sizeof why) && !np.smb_rows, "dy bf16, y f32");
        setenv("XDNN_SOFTMAX_BWD_ROWS", "0", 1);
        CHECK(norm_plan_of(&f, "da", &np, why, sizeof why) && !np.smb_rows, "=0: off");
        unsetenv("XDNN_SOFTMAX_BWD_ROWS");
    }
    teardown(&f);
}

/* ---- copy_strided: replay the jobs with the kernel's index arithmetic */

static bool job_offsets(const cp_job *j, int64_t i, int64_t *io, int64_t *oo)
{
    *io = j->ibase;
    *oo = j->obase;
    if (j->kind == CPK_RESHAPE) {
        int64_t fi = i;
        for (int d = j->n - 1; d >= 0; d--) {
            *oo += fi % j->size[d] * j->ost[d];
            fi /= j->size[d];
        }
        fi = i;
        for (int d = j->in_n - 1; d >= 0; d--) {
            *io += fi % j->in_size[d] * j->in_st[d];
            fi /= j->in_size[d];
        }
        return true;
    }
    bool inside = true;
    for (int d = j->n - 1; d >= 0; d--) {
        int64_t r = i % j->size[d];
        i /= j->size[d];
        *oo += r * j->ost[d];
        if (j->kind == CPK_PAD) {
            int64_t L = j->ilen[d], v = r - j->before[d];
            if (v < 0 || v >= L) {
                switch (j->pad_mode) {
                case CPP_REFLECT: v = v < 0 ? -v : 2 * (L - 1) - v; break;
                case CPP_REPLICATE: v = v < 0 ? 0 : L - 1; break;
                case CPP_CIRCULAR: v = ((v % L) + L) % L; break;
                default: inside = false; v = 0; break;
                }
            }
            *io += v * j->ist[d];
        } else {
            *io += r * j->ist[d];
        }
    }
    return inside;
}

/* Run every copy partition on the host and compare with the reference. */
static void replay_copies(fixture *f, int *njobs_out, int *max_esize)
{
    *njobs_out = 0;
    *max_esize = 0;
    for (int pi = 0; pi < f->pl->nparts; pi++) {
        const gpart *p = &f->pl->parts[pi];
        if (!gpu_copy_op(f->g->n[p->nodes[0]].op_id))
            continue;
        cp_plan *cp = calloc(1, sizeof *cp);
        char why[512];
        CHECK(cp && gpu_copy_analyze(f->pl, p, cp, why, sizeof why));
        /* sim holds every destination in its own layout */
        host_tensor sim[CP_MAX_JOBS];
        int ndst = 0, dsts[CP_MAX_JOBS];
        for (int k = 0; cp && k < cp->njobs; k++) {
            int dt = cp->dst[k], slot = -1;
            for (int q = 0; q < ndst; q++)
                if (dsts[q] == dt)
                    slot = q;
            if (slot < 0) {
                const host_tensor *ref = &f->cpu.tensors[f->g->t[dt].ir_index];
                slot = ndst++;
                dsts[slot] = dt;
                CHECK(host_tensor_alloc(&sim[slot], ref->dtype, ref->rank, ref->dims, ref->strides) == XDNN_OK);
            }
            const cp_job *j = &cp->jobs[k];
            const host_tensor *src = &f->cpu.tensors[f->g->t[cp->src[k]].ir_index];
            char *out = sim[slot].data;
            const char *in = src->data;
            for (int64_t i = 0; i < j->numel; i++) {
                int64_t io, oo;
                bool inside = job_offsets(j, i, &io, &oo);
                if (j->idt != j->odt) {
                    double v = inside ? dtype_load((xdnn_dtype)j->idt, in, io) : 0;
                    if (inside)
                        dtype_store((xdnn_dtype)j->odt, out, oo, v);
                    else
                        memcpy(out + oo * (int64_t)xdnn_dtype_size((xdnn_dtype)j->odt), j->fill,
                               xdnn_dtype_size((xdnn_dtype)j->odt));
                } else {
                    memcpy(out + oo * j->esize, inside ? in + io * j->esize : (const char *)j->fill, (size_t)j->esize);
                }
            }
            (*njobs_out)++;
            if (j->esize > *max_esize && j->idt == j->odt)
                *max_esize = j->esize;
        }
        for (int q = 0; q < ndst; q++) {
            const host_tensor *ref = &f->cpu.tensors[f->g->t[dsts[q]].ir_index];
            compare_result r;
            compare_tensors(&sim[q], ref, 0, 0, &r);
            if (!(r.ok && r.count == ref->numel))
                fprintf(stderr, "copy %s: %lld of %lld differ\n", f->g->t[dsts[q]].name, (long long)r.mismatches,
                        (long long)r.count);
            CHECK(r.ok && r.count == ref->numel);
            host_tensor_free(&sim[q]);
        }
        free(cp);
    }
}

/* Session 13: the pieces of a concat / split as one launch (kern_copy.h cp_group_ok) when they share a unit size
 * and number 2..CP_GROUP_MAX; one launch each past that, with unit sizes that differ, or XDNN_COPY_ONE_LAUNCH=0. */
static void test_copy_one_launch(void)
{
    static const struct { const char *text; bool one; const char *why; } cases[] = {
        {"dnn 1;\ngraph g {\n  input a: bf16[8, 4096];\n  input b: bf16[8, 4096];\n  y = concat(a, b, axis=1);\n"
         "  output y;\n}\n", true, "two 16-byte pieces"},
        {"dnn 1;\ngraph g {\n  input x: bf16[6, 960];\n  s0, s1, s2 = split(x, axis=1);\n  output s0, s1, s2;\n}\n",
         true, "three split pieces"},
        {"dnn 1;\ngraph g {\n  input x: bf16[7, 1000];\n  s0, s1, s2 = split(x, axis=1, sizes=[300, 500, 200]);\n"
         "  output s0, s1, s2;\n}\n", false, "unit sizes 8, 8 and 16 bytes"},
        {"dnn 1;\ngraph g {\n  input a: f32[3, 8];\n  y = concat(a, a, a, a, a, a, a, a, a, axis=0);\n  output y;\n}\n",
         false, "9 pieces"},
    };
    for (int off = 0; off < 2; off++) {
        if (off)
            setenv("XDNN_COPY_ONE_LAUNCH", "0", 1);
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            fixture f;
            if (setup(&f, cases[i].text, false)) {
                for (int pi = 0; pi < f.pl->nparts; pi++) {
                    const gpart *p = &f.pl->parts[pi];
                    if (!gpu_copy_op(f.g->n[p->nodes[0]].op_id))
                        continue;
                    cp_plan *cp = calloc(1, sizeof *cp);
                    char why[512] = "";
                    CHECK(cp && gpu_copy_analyze(f.pl, p, cp, why, sizeof why), "%s", why);
                    if (cp)
                        CHECK(cp->one_launch == (cases[i].one && !off), "%s (switch %s): one launch %d",
                              cases[i].why, off ? "0" : "unset", (int)cp->one_launch);
                    free(cp);
                }
            }
            teardown(&f);
        }
    }
    unsetenv("XDNN_COPY_ONE_LAUNCH");
}

static void test_copies(void)
{
    static const char *const graphs[] = {
        /* pad, every mode, NHWC in and out */
        "dnn 1;\ngraph g(seed=1) {\n  input x: f16[2, 3, 5, 4] @nhwc;\n"
        "  a = pad(x, pads=[[0, 0], [1, 2], [2, 1], [3, 3]], value=0.75);\n"
        "  b = pad(x, pads=[0, 0, 1, 2, 4, 4, 3, 3], mode=\"reflect\");\n"
        "  c = pad(x, pads=2, mode=\"replicate\");\n  e = pad(x, pads=[1, 3, 5, 4], mode=\"circular\");\n"
        "  output a, b: f16 @nhwc, c, e;\n}\n",
        /* slices (negative step), broadcast, permute, reshape of a strided input */
        "dnn 1;\ngraph g(seed=2) {\n  input x: f32[5, 9, 4];\n  input v: f32[1, 4];\n  input s: f32[3, 4, 6] @strides(40, 8, 1);\n"
        "  a = slice(x, axis=1, start=1, end=8, step=2);\n  b = slice(x, axis=0, step=-2);\n"
        "  c = slice(x, axis=-1, start=-3);\n  d = broadcast(v, dims=[3, 5, 4]);\n"
        "  p = permute(x, perm=[2, 0, 1]);\n  r = reshape(s, dims=[2, 36]);\n"
        "  output a, b: f32 @perm(2, 0, 1), c, d, p, r: f32 @col;\n}\n",
        /* concat / split with @col pieces, a discarded piece, converting copies */
        "dnn 1;\ngraph g(seed=3) {\n  input a: f32[2, 3, 8];\n  input b: f32[2, 5, 8] @col;\n  input c: f32[2, 1, 8];\n"
        "  y = concat(a, b, c, axis=1);\n  s0, s1, s2 = split(y, axis=1, sizes=[4, 3, 2]);\n"
        "  e0, e1 = split(a, axis=-1);\n  h = permute(a, perm=[1, 0, 2]);\n"
        "  output y, s0, s1: f32 @col, s2, e1, h: bf16;\n}\n",
        /* 16-byte units: f16 rows of 96 */
        "dnn 1;\ngraph g(seed=4) {\n  input x: f16[4, 8, 96];\n  y = concat(x, x, axis=1);\n"
        "  z = slice(x, axis=2, start=8, end=72);\n  output y, z;\n}\n",
    };
    for (size_t gi = 0; gi < sizeof graphs / sizeof graphs[0]; gi++) {
        fixture f;
        if (setup(&f, graphs[gi], true)) {
            int njobs, esize;
            replay_copies(&f, &njobs, &esize);
            CHECK(njobs >= 3);
            if (gi == 3)
                CHECK(esize == 16);
        }
        teardown(&f);
    }
    /* a dtype change that is not a float conversion is refused with a reason */
    fixture f;
    if (setup(&f, "dnn 1;\ngraph g {\n  input x: f32[4, 6];\n  y = permute(x, perm=[1, 0]);\n  output y: i32;\n}\n",
              false)) {
        cp_plan *cp = calloc(1, sizeof *cp);
        char why[512] = "";
        const gpart *p = part_of(&f, "y");
        CHECK(cp && p && !gpu_copy_analyze(f.pl, p, cp, why, sizeof why));
        CHECK(strstr(why, "permute") && strstr(why, "i32"));
        free(cp);
    }
    teardown(&f);
}

/* ---- rng_philox: replay the job on the host (the same Philox function) */

static void test_rng(void)
{
    fixture f;
    if (setup(&f, "dnn 1;\ngraph g(seed=42) {\n  input x: f32[5, 7];\n  y, m = dropout(x, p=0.25);\n"
                  "  u = rng(shape=[5, 7], lo=-2, hi=3, seed=77);\n  output y: f32 @col, m, u: f16 @col;\n}\n", true)) {
        rg_job j;
        int t[3];
        char why[256];
        const gpart *p = part_of(&f, "y");
        CHECK(p && gpu_rng_analyze(f.pl, p, &j, t, why, sizeof why));
        CHECK(j.kind == RGK_DROPOUT && j.stream == 1 && j.key == rng_tensor_seed(42, "y") && t[2] >= 0);
        CHECK(fabs(j.keep_scale - 1.0 / 0.75) < 1e-15);
        /* the y offsets of the job, element i = logical index */
        const host_tensor *yref = &f.cpu.tensors[f.g->t[t[1]].ir_index], *xin = &f.cpu.tensors[f.g->t[t[0]].ir_index];
        int bad = 0;
        for (int64_t i = 0; i < j.numel; i++) {
            int64_t fi = i, xo = 0, yo = 0;
            for (int d = j.n - 1; d >= 0; d--) {
                xo += fi % j.size[d] * j.xst[d];
                yo += fi % j.size[d] * j.yst[d];
                fi /= j.size[d];
            }
            bool keep = rng_uniform01(j.key, j.stream, (uint64_t)i) >= j.p;
            double want = keep ? dtype_load(XDNN_F32, xin->data, xo) * j.keep_scale : 0;
            bad += dtype_load(XDNN_F32, yref->data, yo) != dtype_round(XDNN_F32, want);
        }
        CHECK(bad == 0);
        p = part_of(&f, "u");
        CHECK(p && gpu_rng_analyze(f.pl, p, &j, t, why, sizeof why));
        CHECK(j.kind == RGK_UNIFORM && j.stream == 0 && j.key == 77 && j.a == -2 && j.b == 5 && t[0] < 0);
        const host_tensor *uref = &f.cpu.tensors[f.g->t[t[1]].ir_index];
        bad = 0;
        for (int64_t i = 0; i < j.numel; i++) {
            int64_t fi = i, yo = 0;
            for (int d = j.n - 1; d >= 0; d--) {
                yo += fi % j.size[d] * j.yst[d];
                fi /= j.size[d];
            }
            double want = j.a + j.b * rng_uniform01(j.key, j.stream, (uint64_t)i);
            bad += dtype_load(XDNN_F16, uref->data, yo) != dtype_round(XDNN_F16, want);
        }
        CHECK(bad == 0);
    }
    teardown(&f);
}

/* ---- groups v2 (kernels/norm_group.cu, session 12; the default since 13,
 * XDNN_GROUPNORM_V2=0: the generic path): which group norms plan_gn takes (packed NCHW, one dtype) and the
 * geometry it picks for 132 SMs; then, on the host, the kernels' index
 * walks over those jobs: the split chunks cover each group once (16-byte
 * starts when vec), the channel a thread steps through (i / S once per
 * vector, then stepped) is (i + k) / S for every element; NHWC's offsets. */
static void gn_walk(const ng_gn_job *j, int V, int *bad)
{
    int64_t covered = 0;
    for (int s = 0; s < j->nsplit; s++) {
        int64_t q0 = s * j->chunk, q1 = q0 + j->chunk < j->D ? q0 + j->chunk : j->D;
        *bad += q0 >= j->D || (j->vec && q0 % V != 0);
        covered += q1 - q0;
    }
    *bad += covered != j->D;
    const int step = j->vec ? V : 1, S = (int)j->S;
    for (int i = 0; i < (int)j->D; i += step) { /* gn_y / k_gn_bwd_dx's stepping */
        int c = i / S, rem = i - c * S;
        for (int k = 0; k < step; k++) {
            *bad += c != (i + k) / S || c >= j->CG;
            if (++rem == S)
                rem = 0, ++c;
        }
    }
}

/* NHWC (kernels/norm_group.cu gn_base / gn_at, replayed): the groups' elements
 * are every element of x exactly once, each in channel g * CG + its k. */
static void gn_walk_nhwc(const ng_gn_job *j, int *bad)
{
    const int64_t total = j->N * j->S * j->C;
    unsigned char *seen = calloc((size_t)total, 1);
    for (int64_t row = 0; row < j->rows && seen; row++) {
        const int64_t base = (row / j->G) * j->S * j->C + (row % j->G) * j->CG;
        for (int i = 0; i < (int)j->D; i++) {
            const int sp = i / (int)j->CG, k = i - sp * (int)j->CG;
            const int64_t o = base + (int64_t)sp * j->C + k;
            *bad += o < 0 || o >= total || seen[o]++ || o % j->C != (row % j->G) * j->CG + k;
        }
    }
    for (int64_t o = 0; o < total && seen; o++)
        *bad += seen[o] != 1;
    free(seen);
}

static void test_norm_groups_v2(void)
{
    static const char *text =
        "dnn 1;\ngraph g {\n  input x: bf16[64, 256, 56, 56];\n  input dy: bf16[64, 256, 56, 56];\n"
        "  weight s: f32[256];\n  weight b: f32[256];\n  y, m, iv = groupnorm(x, s, b, groups=32);\n"
        "  dx, ds, db = groupnorm_bwd(dy, x, s, m, iv, groups=32);\n"
        "  input xs: bf16[1, 320, 64, 64];\n  weight s3: f32[320];\n  z0 = groupnorm(xs, s3, s3, groups=32);\n"
        "  z = silu(z0);\n  input xo: f32[3, 64, 7, 5];\n  weight s6: f32[64];\n"
        "  o = groupnorm(xo, s6, s6, groups=32);\n  input xh: bf16[3, 64, 7, 5] @nhwc;\n"
        "  h = groupnorm(xh, s6, s6, groups=32);\n  weight one: f32[1];\n  input x1: f16[3, 24, 1, 1];\n"
        "  input d1: f16[3, 24, 1, 1];\n  u, um, ui = groupnorm(x1, one, one, groups=12);\n"
        "  du, dus, dub = groupnorm_bwd(d1, x1, one, um, ui, groups=12);\n"
        "  output y: bf16, m, iv, dx: bf16, ds, db, z: bf16, o, h: bf16 @nhwc, u: f16, um, ui, du: f16, dus, dub;\n}\n";
    fixture f;
    norm_plan np;
    char why[512];
    int bad = 0;
    setenv("XDNN_GROUPNORM_V2", "0", 1);
    if (setup(&f, text, false)) {
        CHECK(norm_plan_of(&f, "y", &np, why, sizeof why) && !np.gn, "=0: the generic path");
    }
    teardown(&f);
    unsetenv("XDNN_GROUPNORM_V2"); /* the default */
    if (setup(&f, text, false)) {
        /* 2048 groups of 25088 (50 KB): a block each, the group in shared memory */
        CHECK(norm_plan_of(&f, "y", &np, why, sizeof why) && np.gn, "%s", why);
        CHECK(np.gnj.row_smem && np.gnj.vec && np.gnj.rows == 2048 && np.gnj.D == 25088 && np.gnj.CG == 8);
        CHECK(np.gnj.mean_dt == (int)XDNN_F32 && np.gnj.sc_st == 1 && np.ws_bytes > 0);
        gn_walk(&np.gnj, 8, &bad);
        /* the backward: x and dy of a group on chip (2 x 50 KB); part[64][256][2] for dscale / dbias */
        CHECK(norm_plan_of(&f, "dx", &np, why, sizeof why) && np.gn, "%s", why);
        CHECK(np.gnj.row_smem && np.gnj.nsplit >= 1 && np.ws_bytes == 64 * 256 * 2 * sizeof(float));
        gn_walk(&np.gnj, 8, &bad);
        /* XDNN_GROUPNORM_V2_SPLIT=1: the split paths (a warp per (n, c), dx in chunks) */
        setenv("XDNN_GROUPNORM_V2_SPLIT", "1", 1);
        CHECK(norm_plan_of(&f, "dx", &np, why, sizeof why) && np.gn && !np.gnj.row_smem, "%s", why);
        gn_walk(&np.gnj, 8, &bad);
        CHECK(norm_plan_of(&f, "y", &np, why, sizeof why) && np.gn && !np.gnj.row_smem && np.gnj.nsplit == 1, "%s",
              why);
        gn_walk(&np.gnj, 8, &bad);
        unsetenv("XDNN_GROUPNORM_V2_SPLIT");
        /* SD: 32 groups of 40960: split (8 * 132 blocks wanted, 4 vectors a thread: 5 chunks) + silu */
        CHECK(norm_plan_of(&f, "z0", &np, why, sizeof why) && np.gn, "%s", why);
        CHECK(!np.gnj.row_smem && np.gnj.nsplit == 5 && np.gnj.chunk % 8 == 0 && np.gnj.act == NGACT_SILU);
        CHECK(np.gnj.act_dt == (int)XDNN_F32, "silu reads z0, an f32 intermediate (the graph default)");
        gn_walk(&np.gnj, 8, &bad);
        /* 7x5 spatial, f32: groups of 70 elements (not 16 bytes: scalar), few groups: split of one */
        CHECK(norm_plan_of(&f, "o", &np, why, sizeof why) && np.gn, "%s", why);
        CHECK(!np.gnj.vec && !np.gnj.row_smem && np.gnj.nsplit == 1 && np.gnj.D == 70 && np.gnj.S == 35);
        gn_walk(&np.gnj, 4, &bad);
        /* NHWC: the split's scalar loops; every element of x once over the groups, in its group's channel */
        CHECK(norm_plan_of(&f, "h", &np, why, sizeof why) && np.gn, "%s", why);
        CHECK(np.gnj.nhwc && !np.gnj.vec && !np.gnj.row_smem && np.gnj.S == 35 && np.gnj.CG == 2);
        gn_walk(&np.gnj, 8, &bad);
        gn_walk_nhwc(&np.gnj, &bad);
        /* 1x1 spatial, one-element scale and bias: S = 1, D = 2; dscale / dbias one sum (pg_one) */
        CHECK(norm_plan_of(&f, "u", &np, why, sizeof why) && np.gn, "%s", why);
        CHECK(np.gnj.S == 1 && np.gnj.D == 2 && np.gnj.sc_st == 0 && !np.gnj.vec);
        gn_walk(&np.gnj, 8, &bad);
        CHECK(norm_plan_of(&f, "du", &np, why, sizeof why) && np.gn && np.gnj.pg_one, "%s", why);
        gn_walk(&np.gnj, 8, &bad);
        CHECK(bad == 0, "%d index walks went wrong", bad);
    }
    teardown(&f);
    unsetenv("XDNN_GROUPNORM_V2");
}

int main(void)
{
    test_norm_paths();
    test_smb_rows();
    test_copies();
    test_copy_one_launch();
    test_rng();
    test_norm_groups_v2(); /* session 12 (gnorm) */
    return test_summary("test_gpu_norm");
}
#else
int main(void)
{
    printf("test_gpu_norm: built without CUDA, nothing to test\n");
    return 0;
}
#endif
