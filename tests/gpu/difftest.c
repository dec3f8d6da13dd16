/* difftest.c — the GPU differential tester: for every engine it sweeps shapes
 * (1, primes, tails, batch 1, broadcasting), dtypes and layouts (col,
 * permuted, strided outputs), builds each case as a tiny .dnn graph, runs the
 * CPU reference and the GPU on the same Philox inputs, and compares every
 * output with the per-dtype tolerances of METHOD.md.  One line per case:
 *
 *   PASS pw/chain/f16/[17,33]/col  engines=pointwise_nvrtc  max_abs=... rel_norm=...
 *
 * then "N passed, N failed".  A failure prints the graph text, the seed and
 * the worst elements.  Usage:
 *   difftest [--quick] [--bench] [--list] [--dry] [FILTER]
 * --quick: a reduced sweep (compute-sanitizer runs); --bench: time large
 * cases on the GPU only (no CPU reference) and print a table; --dry: no GPU
 * needed, check the CPU reference, the plan and that every kernel compiles. */
#include "diffharness.h"

#include "core/exec.h"
#include "data/data.h"
#include "gpu/engine.h"
#include "gpu/gpu.h"
#include "gpu/lower.h"
#include "ops/op.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_CASES = 2048, TEXT_MAX = 2048 };

typedef struct tcase {
    char id[160];
    char text[TEXT_MAX];
    double tol_scale;   /* widen the default tolerance (tf32) */
    bool cuda_graph;    /* bench: replay as a CUDA graph */
    int pk_axis;        /* redpk/: x's reduced axis (its values placed by place_specials); -1 otherwise */
} tcase;

static tcase *cases;
static int ncases;
static dh_opts opts;

/* --dry (no GPU): lower, partition, choose engines and NVRTC-compile every
 * generated kernel for sm_90, so a sweep can be checked before device time. */
static xdnn_status dry_run(xgraph *g, char *engines, size_t len, xdnn_diags_t *d)
{
    arena *ar = arena_create();
    ggraph *gg = gpu_lower(g, ar);
    gplan *pl = gpu_partition(gg, false);
    gpu_device dev = {.sm_count = 132, .cc_major = 9, .cc_minor = 0};
    xdnn_status s = gpu_select_engines(pl, &dev, NULL, 0, 0, NULL, d);
    for (int i = 0; i < pl->nparts && s == XDNN_OK; i++) {
        gpart *p = &pl->parts[i];
        size_t n = strlen(engines);
        snprintf(engines + n, len - n, "%s%s", i ? "," : "", p->engine->name);
        cg_kernel k = {0};
        if (p->kind == GP_POINTWISE) {
            s = cg_pointwise(gg, p->nodes, p->nnodes, p->outs, p->nouts, "k", &k);
        } else if (p->kind == GP_REDUCE) {
            int pro[64], npro = 0;
            for (int j = 0; j < p->nnodes && npro < 64; j++)
                if (p->nodes[j] != p->anchor)
                    pro[npro++] = p->nodes[j];
            s = cg_reduce(gg, p->anchor, pro, npro, "k", &k);
            if (s == XDNN_OK && k.form) { /* reduce v2 took it (the default) */
                n = strlen(engines);
                snprintf(engines + n, len - n, "(v2-%s%s%s)", k.form == CG_FORM_COL ? "col" : "row",
                         k.name2 ? "+fold" : "", k.packed ? "+packed" : "");
            }
        } else if (p->kind == GP_MATMUL) {
            mm_shape ms;
            char why[256];
            if (!gpu_matmul_analyze(pl, p, gg->tf32, &ms, why, sizeof why))
                s = XDNN_ERR_UNSUPPORTED;
            else if (ms.need_kernel)
                s = cg_pointwise(gg, ms.epi_nodes, ms.nepi, p->outs, p->nouts, "k", &k);
            n = strlen(engines);
            snprintf(engines + n, len - n, "(%s)", ms.lt_epilogue != CUBLASLT_EPILOGUE_DEFAULT ? "lt-epilogue" : ms.addend >= 0 ? "addend" : ms.need_kernel ? "kernel-epilogue" : "plain");
        }
        if (s == XDNN_OK && k.src)
            s = gpu_nvrtc_check(k.src, "k", "sm_90", d);
    }
    arena_destroy(ar);
    return s;
}


__attribute__((format(printf, 3, 4))) static void add_case(const char *id, double tol_scale, const char *fmt, ...)
{
    if (ncases >= MAX_CASES) { /* a case dropped silently would be a test that cannot fail */
        fprintf(stderr, "%s: more than %d cases: raise MAX_CASES\n", id, (int)MAX_CASES);
        exit(2);
    }
    tcase *c = &cases[ncases++];
    snprintf(c->id, sizeof c->id, "%s", id);
    c->tol_scale = tol_scale;
    c->pk_axis = -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->text, sizeof c->text, fmt, ap);
    va_end(ap);
}

static const char *dims_str(char *buf, size_t len, int rank, const int *d)
{
    size_t n = 0;
    buf[n++] = '[';
    for (int i = 0; i < rank && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%d", i ? ", " : "", d[i]);
    snprintf(buf + n, len - n, "]");
    return buf;
}

static const char *id_dims(char *buf, size_t len, int rank, const int *d)
{
    size_t n = 0;
    for (int i = 0; i < rank && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%d", i ? "x" : "", d[i]);
    return buf;
}

/* ---- the sweeps */
static void pointwise_cases(void)
{
    static const int shapes[][5] = {{1, 1}, {1, 7}, {2, 3, 5}, {2, 17, 33}, {2, 1, 64}, {4, 2, 3, 5, 7}, {1, 1000003}};
    static const char *const dts[] = {"f32", "f16", "bf16"};
    int nshapes = opts.quick ? 4 : 7;
    for (int si = 0; si < nshapes; si++) {
        int rank = shapes[si][0];
        const int *d = &shapes[si][1];
        char sd[64], last[32], idd[64], lead1[64];
        dims_str(sd, sizeof sd, rank, d);
        snprintf(last, sizeof last, "[%d]", d[rank - 1]);
        id_dims(idd, sizeof idd, rank, d);
        /* [d0, 1, ..., 1] for a leading-dim broadcast */
        int l1[4];
        for (int i = 0; i < rank; i++)
            l1[i] = i == 0 ? d[0] : 1;
        dims_str(lead1, sizeof lead1, rank, l1);
        for (int ti = 0; ti < 3; ti++) {
            const char *t = dts[ti];
            char id[160];
            snprintf(id, sizeof id, "pw/chain/%s/%s", t, idd);
            add_case(id, 1, "dnn 1;\ngraph g(seed=%d) {\n  input a: %s%s;\n  input b: %s%s;\n  input c: f32%s;\n"
                            "  y = relu(a * b + 0.5, slope=0.125) - tanh(c);\n  output y: %s;\n}\n",
                     si * 7 + ti, t, sd, t, last, lead1, t);
            if (opts.quick && si > 1)
                continue;
            snprintf(id, sizeof id, "pw/act/%s/%s", t, idd);
            add_case(id, 1, "dnn 1;\ngraph g(seed=%d) {\n  input a: %s%s;\n  input b: %s%s;\n"
                            "  y = gelu(a) + sigmoid(b) * exp(a * 0.5);\n  z = select(gt(a, b), silu(a), gelu(b, approx=\"tanh\"));\n"
                            "  output y, z;\n}\n",
                     si * 11 + ti, t, sd, t, sd);
            snprintf(id, sizeof id, "pw/bwd/%s/%s", t, idd);
            add_case(id, 1, "dnn 1;\ngraph g(seed=%d) {\n  input dy: %s%s;\n  input x: %s%s;\n"
                            "  dx = gelu_bwd(dy, x) + tanh_bwd(dy, x) * 0.5;\n  output dx;\n}\n",
                     si * 13 + ti, t, sd, t, sd);
        }
        if (rank == 2) {
            char id[160];
            snprintf(id, sizeof id, "pw/layout/col-in-out/f16/%s", idd);
            add_case(id, 1, "dnn 1;\ngraph g(seed=5) {\n  input a: f16%s @col;\n  input b: f32%s;\n"
                            "  y = a * b + 1.0;\n  output y: f32 @col;\n}\n", sd, sd);
            snprintf(id, sizeof id, "pw/cast/f32-to-bf16-i8/%s", idd);
            add_case(id, 1, "dnn 1;\ngraph g(seed=9) {\n  input a: f32%s;\n"
                            "  y = cast(a * 100.0, dtype=i8);\n  z = cast(a, dtype=bf16);\n  output y, z;\n}\n", sd);
        }
        if (rank == 4) {
            char id[160];
            snprintf(id, sizeof id, "pw/layout/nhwc/f16/%s", idd);
            add_case(id, 1, "dnn 1;\ngraph g(seed=6) {\n  input a: f16%s @nhwc;\n  input b: f16[%d, 1, 1];\n"
                            "  y = relu(a + b);\n  output y: f16 @nhwc;\n}\n", sd, d[1]);
            snprintf(id, sizeof id, "pw/layout/perm-out/bf16/%s", idd);
            add_case(id, 1, "dnn 1;\ngraph g(seed=8) {\n  input a: bf16%s;\n"
                            "  y = a * a;\n  output y: bf16 @perm(3, 1, 0, 2);\n}\n", sd);
        }
    }
}

static void reduce_cases(void)
{
    static const int shapes[][4] = {{2, 1, 1}, {2, 7, 13}, {2, 3, 1000}, {2, 64, 4097}, {3, 5, 6, 7}, {3, 2, 33, 130}};
    static const char *const ops[] = {"sum", "mean", "max", "min", "amax", "norm1", "norm2"};
    static const char *const dts[] = {"f32", "f16", "bf16"};
    int nshapes = opts.quick ? 3 : 6;
    for (int si = 0; si < nshapes; si++) {
        int rank = shapes[si][0];
        const int *d = &shapes[si][1];
        char sd[64], idd[64];
        dims_str(sd, sizeof sd, rank, d);
        id_dims(idd, sizeof idd, rank, d);
        for (int oi = 0; oi < 7; oi++) {
            const char *t = dts[oi % 3];
            char id[160];
            snprintf(id, sizeof id, "reduce/%s/last/%s/%s", ops[oi], t, idd);
            add_case(id, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s%s;\n"
                            "  y = reduce(x, op=\"%s\", axes=[-1]);\n  output y: f32;\n}\n",
                     si * 17 + oi, t, sd, ops[oi]);
            if (opts.quick)
                continue;
            snprintf(id, sizeof id, "reduce/%s/axis0-nokeep/%s/%s", ops[oi], t, idd);
            add_case(id, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s%s;\n"
                            "  y = reduce(x, op=\"%s\", axes=[0], keepdims=false);\n  output y: f32;\n}\n",
                     si * 19 + oi, t, sd, ops[oi]);
        }
        char id[160];
        snprintf(id, sizeof id, "reduce/sum/all+prologue/f16/%s", idd);
        add_case(id, 1, "dnn 1;\ngraph g(seed=3) {\n  input x: f16%s;\n  y = reduce(x * x + 0.25, op=\"sum\");\n"
                        "  output y: f32;\n}\n", sd);
        if (rank == 3) {
            snprintf(id, sizeof id, "reduce/mean/axes02/bf16/%s", idd);
            add_case(id, 1, "dnn 1;\ngraph g(seed=4) {\n  input x: bf16%s;\n"
                            "  y = reduce(x, op=\"mean\", axes=[0, 2]);\n  output y;\n}\n", sd);
            snprintf(id, sizeof id, "softmax/mid-axis/f32/%s", idd);
            add_case(id, 1, "dnn 1;\ngraph g(seed=2) {\n  input x: f32%s;\n  y = softmax(x, axis=1);\n"
                            "  output y;\n}\n", sd);
        }
        /* softmax over the last axis with a prologue (scale + mask), and log_softmax */
        for (int ti = 0; ti < 3; ti++) {
            const char *t = dts[ti];
            snprintf(id, sizeof id, "softmax/last+prologue/%s/%s", t, idd);
            add_case(id, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s%s;\n  input m: f32[%d];\n"
                            "  y = softmax(x * 2.5 + m);\n  output y: %s;\n}\n",
                     si * 23 + ti, t, sd, d[rank - 1], t);
            if (opts.quick)
                continue;
            if (d[0] == 1) /* log_softmax over one element is all zeros: compares nothing */
                continue;
            snprintf(id, sizeof id, "log_softmax/axis0/%s/%s", t, idd);
            add_case(id, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s%s;\n  y = log_softmax(x, axis=0);\n"
                            "  output y: f32;\n}\n", si * 29 + ti, t, sd);
        }
    }
}

static void matmul_cases(void)
{
    static const int mnk[][3] = {{1, 1, 1}, {7, 13, 5}, {64, 48, 32}, {127, 129, 65}, {256, 512, 384}};
    static const char *const dts[] = {"f32", "f32-tf32", "f16", "bf16"};
    int nsh = opts.quick ? 3 : 5;
    for (int si = 0; si < nsh; si++) {
        int M = mnk[si][0], N = mnk[si][1], K = mnk[si][2];
        for (int ti = 0; ti < 4; ti++) {
            bool tf32 = ti == 1;
            const char *t = tf32 ? "f32" : dts[ti];
            /* tf32 rounds inputs to 10 bits: ~1e-3 relative (METHOD.md). */
            double tol = tf32 ? 20 : 1;
            char id[160];
            snprintf(id, sizeof id, "matmul/plain/%s/%dx%dx%d", dts[ti], M, N, K);
            add_case(id, tol, "dnn 1;\ngraph g(seed=%d, tf32=%s) {\n  input a: %s[%d, %d];\n  input b: %s[%d, %d];\n"
                              "  c = matmul(a, b);\n  output c;\n}\n",
                     si * 31 + ti, tf32 ? "true" : "false", t, M, K, t, K, N);
            if (opts.quick && si > 1)
                continue;
            snprintf(id, sizeof id, "matmul/transab+bias-relu/%s/%dx%dx%d", dts[ti], M, N, K);
            if (M * N > 1) /* a single relu output may well be 0: compares nothing */
                add_case(id, tol, "dnn 1;\ngraph g(seed=%d, tf32=%s) {\n  input a: %s[%d, %d];\n  weight w: %s[%d, %d];\n"
                                  "  weight b: %s[%d];\n  h = relu(matmul(a, w, trans_a=true, trans_b=true) + b);\n"
                                  "  output h: %s;\n}\n",
                         si * 37 + ti, tf32 ? "true" : "false", t, K, M, t, N, K, t, N, t);
            snprintf(id, sizeof id, "matmul/bias-gelu-tanh/%s/%dx%dx%d", dts[ti], M, N, K);
            add_case(id, tol, "dnn 1;\ngraph g(seed=%d, tf32=%s) {\n  input a: %s[%d, %d];\n  weight w: %s[%d, %d];\n"
                              "  weight b: %s[%d];\n  h = gelu(matmul(a, w) + b, approx=\"tanh\");\n"
                              "  output h: %s;\n}\n",
                     si * 41 + ti, tf32 ? "true" : "false", t, M, K, t, K, N, t, N, t);
            snprintf(id, sizeof id, "matmul/epilogue-kernel/%s/%dx%dx%d", dts[ti], M, N, K);
            add_case(id, tol, "dnn 1;\ngraph g(seed=%d, tf32=%s) {\n  input a: %s[%d, %d] @col;\n  input b: %s[%d, %d];\n"
                              "  input r: f32[%d, %d];\n  y = gelu(matmul(a, b) * 0.5) + r;\n  output y: f32 @col;\n}\n",
                     si * 43 + ti, tf32 ? "true" : "false", t, M, K, t, K, N, M, N);
            snprintf(id, sizeof id, "matmul/batched/%s/3x%dx%dx%d", dts[ti], M, N, K);
            add_case(id, tol, "dnn 1;\ngraph g(seed=%d, tf32=%s) {\n  input a: %s[3, %d, %d];\n  input b: %s[3, %d, %d];\n"
                              "  c = matmul(a, b);\n  output c;\n}\n",
                     si * 47 + ti, tf32 ? "true" : "false", t, M, K, t, K, N);
            snprintf(id, sizeof id, "matmul/broadcast-batch/%s/2x3x%dx%dx%d", dts[ti], M, N, K);
            add_case(id, tol, "dnn 1;\ngraph g(seed=%d, tf32=%s) {\n  input a: %s[2, 1, %d, %d];\n  input b: %s[3, %d, %d];\n"
                              "  c = matmul(a, b, trans_b=false);\n  output c;\n}\n",
                     si * 53 + ti, tf32 ? "true" : "false", t, M, K, t, K, N);
        }
    }
}

/* A small graph mixing every engine: MLP block with a softmax head. */
static void graph_cases(void)
{
    add_case("graph/mlp-softmax/f16", 1,
             "dnn 1;\ngraph g(seed=11) {\n  input x: f16[33, 64];\n  weight w1: f16[64, 96];\n  weight b1: f16[96];\n"
             "  weight w2: f16[96, 10];\n  h = relu(matmul(x, w1) + b1);\n  l = matmul(h, w2);\n"
             "  p = softmax(l * 0.5);\n  s = reduce(p, op=\"sum\", axes=[-1]);\n  output p, s: f32;\n}\n");
}

/* A residual add after a GEMM (r = x + a @ b) runs as cuBLASLt's C with beta = 1
 * (session 11); the broadcast and batched forms keep the generated epilogue. */
static void matmul_addend_cases(void)
{
    static const int mnk[][3] = {{1, 1, 1}, {7, 13, 5}, {127, 129, 65}, {256, 200, 384}};
    static const char *const dts[] = {"f32", "f16", "bf16"};
    for (int si = 0; si < (opts.quick ? 3 : 4); si++) {
        int M = mnk[si][0], N = mnk[si][1], K = mnk[si][2];
        for (int ti = 0; ti < 3; ti++) {
            const char *t = dts[ti];
            char id[160];
            snprintf(id, sizeof id, "matmul/addend/%s/%dx%dx%d", t, M, N, K);
            add_case(id, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[%d, %d];\n  input a: %s[%d, %d];\n"
                            "  weight w: %s[%d, %d];\n  r = x + matmul(a, w, trans_b=true);\n  output r: %s;\n}\n",
                     si * 59 + ti, t, M, N, t, M, K, t, N, K, t);
            /* Llama's form: [B, S, K] activations, [N, K] weights, the sum of two GEMMs (dh2), with
             * f32 products (the residual C by default).  Not with bf16 products: the reference rounds
             * each, and where the sum cancels one GEMM's 1-ulp flip is past the sum's tolerance (the
             * kernel epilogue path too: 2x256x200x384, max_abs 0.125 of a sum near 8, session 11). */
            snprintf(id, sizeof id, "matmul/addend-two-gemms/%s/2x%dx%dx%d", t, M, N, K);
            add_case(id, 1, "dnn 1;\ngraph g(seed=%d, intermediate=f32) {\n  input a: %s[2, %d, %d];\n"
                            "  input b: %s[2, %d, %d];\n  weight v: %s[%d, %d];\n  weight w: %s[%d, %d];\n"
                            "  d = matmul(a, v, trans_b=true) + matmul(b, w, trans_b=true);\n  output d: f32;\n}\n",
                     si * 61 + ti, t, M, K, t, M, N, t, N, K, t, N, N);
            if (opts.quick && si > 1)
                continue;
            /* a column broadcast and a true batch keep the generated epilogue */
            snprintf(id, sizeof id, "matmul/addend-broadcast/%s/%dx%dx%d", t, M, N, K);
            add_case(id, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[%d, 1];\n  input a: %s[%d, %d];\n"
                            "  input b: %s[%d, %d];\n  r = matmul(a, b) + x;\n  output r: %s;\n}\n",
                     si * 67 + ti, t, M, t, M, K, t, K, N, t);
            snprintf(id, sizeof id, "matmul/addend-batched/%s/3x%dx%dx%d", t, M, N, K);
            add_case(id, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[3, %d, %d];\n  input a: %s[3, %d, %d];\n"
                            "  input b: %s[3, %d, %d];\n  r = matmul(a, b) + x;\n  output r: %s;\n}\n",
                     si * 73 + ti, t, M, N, t, M, K, t, K, N, t);
            /* the row fold alone: [2, 3, M, K] @ [K, N] + bias, relu (a cuBLASLt epilogue once folded) */
            snprintf(id, sizeof id, "matmul/rowfold-bias-relu/%s/2x3x%dx%dx%d", t, M, N, K);
            if (M * N > 1)
                add_case(id, 1, "dnn 1;\ngraph g(seed=%d) {\n  input a: %s[2, 3, %d, %d];\n  weight w: %s[%d, %d];\n"
                                "  weight b: %s[%d];\n  h = relu(matmul(a, w) + b);\n  output h: %s;\n}\n",
                         si * 79 + ti, t, M, K, t, K, N, t, N, t);
            snprintf(id, sizeof id, "matmul/addend-f32-out/%s/%dx%dx%d", t, M, N, K);
            add_case(id, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: f32[%d, %d];\n  input a: %s[%d, %d];\n"
                            "  input b: %s[%d, %d];\n  r = x + matmul(a, b);\n  output r: f32;\n}\n",
                     si * 71 + ti, M, N, t, M, K, t, K, N);
        }
    }
}

/* ---- running one case (the shared part is tests/gpu/diffharness.c) */
static const char *case_id(int i)
{
    return cases[i].id;
}

static const char *case_text(int i)
{
    return cases[i].text;
}

/* Session 12 (redcol): reduce v2 (the default since session 13; XDNN_REDUCE_V2=0: the old forms; src/gpu/codegen_redcol.c) — column form for outer
 * reduced axes (first, middle, several), row form for the last axis; odd row counts (1, 7, 8191), odd and
 * misaligned column counts (3, 40, 4097: not multiples of the 16-byte vector), 8-column tiles, every dtype,
 * sum/mean/max/min in each (keepdims alternating), amax/norm1/norm2 on two shapes, 16-bit outputs rounded.
 * Registered last; the ids start "redcol/" so they run on their own with the switch on and off. */
/* redcol/<name>/OP/DT/RxC[/keep]: [R, C] reduced over `axis`, sum/mean/max/min x every dtype, keepdims on
 * sum and max, the 16-bit outputs of max/min rounded to the input's dtype. */
static void redcol_2d(const char *name, const char *axis, const int (*shapes)[2], int nshapes, int seed0)
{
    static const char *const ops[] = {"sum", "mean", "max", "min"};
    static const char *const dts[] = {"f32", "f16", "bf16"};
    char id[160];
    for (int si = 0; si < nshapes; si++)
        for (int oi = 0; oi < 4; oi++)
            for (int ti = 0; ti < 3; ti++) {
                const int r = shapes[si][0], c = shapes[si][1];
                const bool keep = oi % 2 == 0;
                snprintf(id, sizeof id, "redcol/%s/%s/%s/%dx%d%s", name, ops[oi], dts[ti], r, c, keep ? "/keep" : "");
                add_case(id, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[%d, %d];\n"
                                "  y = reduce(x, op=\"%s\", axes=[%s], keepdims=%s);\n  output y: %s;\n}\n",
                         seed0 + si * 12 + oi * 3 + ti, dts[ti], r, c, ops[oi], axis, keep ? "true" : "false",
                         oi < 2 ? "f32" : dts[ti]);
            }
}

static void redcol_cases(void)
{
    static const char *const ops[] = {"sum", "mean", "max", "min"};
    static const char *const dts[] = {"f32", "f16", "bf16"};
    static const int first[][2] = {{1, 3}, {7, 3}, {8191, 3}, {1, 40}, {7, 40}, {8191, 40}, {7, 8}, {8191, 8},
                                   {1, 4097}, {7, 4097}, {300, 4096}};
    int nfirst = opts.quick ? 5 : (int)(sizeof first / sizeof first[0]);
    redcol_2d("first", "0", first, nfirst, 100);
    char id[160];
    static const int mid[][3] = {{3, 7, 5}, {3, 1031, 64}, {2, 9, 4097}};
    int nmid = opts.quick ? 1 : 3;
    for (int si = 0; si < nmid; si++)
        for (int oi = 0; oi < 4; oi++)
            for (int ti = 0; ti < 3; ti++) {
                const int *d = mid[si];
                const bool keep = oi % 2 == 1;
                snprintf(id, sizeof id, "redcol/mid/%s/%s/%dx%dx%d%s", ops[oi], dts[ti], d[0], d[1], d[2],
                         keep ? "/keep" : "");
                add_case(id, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[%d, %d, %d];\n"
                                "  y = reduce(x, op=\"%s\", axes=[1], keepdims=%s);\n  output y: %s;\n}\n",
                         300 + si * 12 + oi * 3 + ti, dts[ti], d[0], d[1], d[2], ops[oi], keep ? "true" : "false",
                         oi == 0 ? dts[ti] : "f32");
            }
    /* several outer axes in one run: [5, 7, 24] over 0 and 1; [4, 6, 2, 12] over 1 and 2 */
    for (int ti = 0; ti < 3; ti++) {
        snprintf(id, sizeof id, "redcol/axes01/sum/%s/5x7x24", dts[ti]);
        add_case(id, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[5, 7, 24];\n"
                        "  y = reduce(x, op=\"sum\", axes=[0, 1]);\n  output y: f32;\n}\n", 340 + ti, dts[ti]);
        snprintf(id, sizeof id, "redcol/axes12/max/%s/4x6x2x12", dts[ti]);
        add_case(id, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[4, 6, 2, 12];\n"
                        "  y = reduce(x, op=\"max\", axes=[1, 2], keepdims=false);\n  output y: %s;\n}\n", 343 + ti,
                 dts[ti], dts[ti]);
    }
    /* the other ops of the column form */
    static const char *const more[] = {"amax", "norm1", "norm2"};
    for (int oi = 0; oi < 3; oi++)
        for (int ti = 0; ti < 3; ti++) {
            snprintf(id, sizeof id, "redcol/first/%s/%s/1031x40", more[oi], dts[ti]);
            add_case(id, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[1031, 40];\n"
                            "  y = reduce(x, op=\"%s\", axes=[0]);\n  output y: f32;\n}\n", 350 + oi * 3 + ti,
                     dts[ti], more[oi]);
        }
    /* last axis (row form): a warp per row up to 64 vectors, a block per row beyond */
    static const int last[][2] = {{7, 3}, {7, 1000}, {300, 40}, {7, 8}, {300, 4097}, {7, 8192}, {1, 1}};
    int nlast = opts.quick ? 3 : (int)(sizeof last / sizeof last[0]);
    redcol_2d("last", "-1", last, nlast, 400);
}

/* Session 15 (redmax15): packed 16-bit max/min (XDNN_REDUCE_PACKED; src/gpu/codegen_redcol.c) and the f32
 * accumulation's max.NaN / min.NaN against the reference, exactly.  redpk/KIND/OP/DT/AXIS/DIMS: bf16, f16 and f32,
 * max and min (amax on a few), the last, first and a middle axis; reduced lengths 1 (no reduction: cg_reduce's
 * form), 3, 7, 9, 8191, 8193 (vector width 1: a lone element in a pair) and 8 .. 8194 (widths 8, 4, 2), odd column
 * counts (width 1), splits with their fold; AXIS "pro": a prologue (neg) on cg_reduce's form.  x's values are
 * placed by place_specials: by output, ties, all-negative slices whose max is -0, +0 or both (+0 wins), subnormals,
 * +-Inf, and in KIND "nan" a NaN (the reference propagates it; fmaxf / fminf, the combine before session 15's
 * max.NaN, dropped it).  With XDNN_REDUCE_PACKED=0 the 16-bit cases take the f32 accumulation: all must pass too.
 * Registered last. */
enum { PK_CLASSES = 8 };

static double pk_value(int cls, bool nan_case, int64_t r, int64_t R, int64_t o, double u, xdnn_dtype dt)
{
    const double q = floor(u * 4) / 4, neg = -(1 + fabs(q)); /* a coarse grid: ties */
    switch (cls) {
    case 0: return q;
    case 1: return neg;                                                  /* all negative */
    case 2: return r % 5 == 2 ? -0.0 : neg;                              /* max -0 */
    case 3: return r % 5 == 2 ? 0.0 : neg;                               /* max +0 */
    case 4: return r % 5 == 2 ? -0.0 : r % 7 == 3 ? 0.0 : neg;           /* both zeros: either sign */
    case 5: return r == (o * 7 + 3) % R ? (nan_case ? (double)NAN : (double)INFINITY) : q;
    case 6: return nan_case ? (r == R - 1 ? (double)NAN : r == 0 ? (double)INFINITY : q) : (double)-INFINITY;
    default: return ldexp(u, dt == XDNN_F16 ? -15 : -127);               /* subnormals */
    }
}

/* x viewed as [A, R, C] around the reduced axis */
static void pk_geometry(const host_tensor *x, int axis, int64_t *A, int64_t *R, int64_t *C)
{
    *A = *C = 1;
    for (int d = 0; d < x->rank; d++) {
        if (d < axis)
            *A *= x->dims[d];
        else if (d > axis)
            *C *= x->dims[d];
    }
    *R = x->dims[axis];
}

static int pk_input(const dh_case_run *r)
{
    for (size_t t = 0; t < r->g->ntensors; t++)
        if (strcmp(r->g->tensors[t].name, "x") == 0)
            return (int)t;
    return -1;
}

/* Write x's values in both run states (min: their mirror, -v), then run the CPU reference (dh_case_begin ran
 * without it).  The class of an output is its index modulo PK_CLASSES, so neighbouring columns (a packed pair)
 * differ. */
static xdnn_status place_specials(const tcase *c, dh_case_run *r, dh_outcome *out)
{
    const int xi = pk_input(r);
    if (xi < 0) {
        snprintf(out->msg, sizeof out->msg, "redpk: the graph has no input x");
        return XDNN_ERR_USAGE;
    }
    host_tensor *x = &r->cpu.tensors[xi];
    int64_t A, R, C;
    pk_geometry(x, c->pk_axis, &A, &R, &C);
    double *v = malloc((size_t)x->numel * sizeof *v);
    if (!v)
        return XDNN_ERR_NOMEM;
    tensor_gather(x, v); /* the Philox uniform(-1, 1) values */
    const bool nan_case = strstr(c->id, "/nan/") != NULL, mirror = strstr(c->id, "/min/") != NULL;
    for (int64_t i = 0; i < x->numel; i++) {
        const int64_t o = i / (R * C) * C + i % C, k = i / C % R;
        const double e = pk_value((int)(o % PK_CLASSES), nan_case, k, R, o, v[i], x->dtype);
        v[i] = mirror ? -e : e;
    }
    tensor_scatter(x, v);
    tensor_scatter(&r->gpu.tensors[xi], v);
    free(v);
    xdnn_status st = run_state_alloc_results(&r->cpu, r->d);
    if (st == XDNN_OK)
        st = exec_cpu_run(&r->cpu, r->d);
    if (st != XDNN_OK)
        snprintf(out->msg, sizeof out->msg, "redpk: CPU reference failed (%s)", xdnn_status_name(st));
    return st;
}

/* compare_tensors at zero tolerance does not see a zero's sign: y's zeros must carry the reference's sign (its
 * reduce ranks +0 above -0, the order of the slice does not matter). */
static bool pk_zero_signs(const dh_case_run *r, int yt, char *msg, size_t cap, size_t *n)
{
    const int64_t ny = r->gpu.tensors[yt].numel;
    double *got = malloc((size_t)ny * sizeof *got), *ref = malloc((size_t)ny * sizeof *ref);
    bool ok = got && ref && r->cpu.tensors[yt].numel == ny;
    int64_t bad = 0, first = -1;
    if (ok) {
        tensor_gather(&r->gpu.tensors[yt], got);
        tensor_gather(&r->cpu.tensors[yt], ref);
        for (int64_t j = 0; j < ny; j++)
            if (ref[j] == 0 && got[j] == 0 && !signbit(ref[j]) != !signbit(got[j]) && bad++ == 0)
                first = j;
    }
    if (!ok)
        *n += (size_t)snprintf(msg + *n, *n < cap ? cap - *n : 0, "\n      zero signs: not checked (no memory)");
    else if (bad)
        *n += (size_t)snprintf(msg + *n, *n < cap ? cap - *n : 0,
                               "\n      %lld zeros of the wrong sign, the first at output %lld: got %s0 expected %s0",
                               (long long)bad, (long long)first, signbit(got[first]) ? "-" : "+",
                               signbit(ref[first]) ? "-" : "+");
    *n = *n < cap ? *n : cap - 1;
    free(got);
    free(ref);
    return ok && bad == 0;
}

/* axname "pro": reduce(neg(x)), a prologue: cg_reduce's form (exact: neg flips the sign, zeros' too) */
static void redpk_case(const char *kind, const char *op, const char *dt, const char *axname, int axis, int rank,
                       const int *d, const char *ydt, bool keep, int seed)
{
    char id[160], idd[64], sd[64];
    id_dims(idd, sizeof idd, rank, d);
    dims_str(sd, sizeof sd, rank, d);
    snprintf(id, sizeof id, "redpk/%s/%s/%s/%s/%s%s", kind, op, dt, axname, idd, keep ? "/keep" : "");
    add_case(id, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s%s;\n  y = reduce(%s, op=\"%s\", axes=[%d], keepdims=%s);\n"
                    "  output y: %s;\n}\n", seed, dt, sd, strcmp(axname, "pro") == 0 ? "neg(x)" : "x", op, axis,
             keep ? "true" : "false", ydt);
    cases[ncases - 1].pk_axis = axis;
}

static void redpk_cases(void)
{
    static const char *const dts[] = {"bf16", "f16", "f32"};
    static const char *const ops[] = {"max", "min"};
    static const int last[] = {1, 3, 7, 9, 8191, 8193, 8, 520, 1000, 4100, 8194, 8192};
    static const int first[][2] = {{7, 3}, {8191, 3}, {9, 33}, {8193, 9}, {7, 6}, {8191, 40}, {300, 4100},
                                   {7, 8194}, {1031, 64}, {2049, 1024}};
    static const int mid[][3] = {{3, 7, 5}, {3, 1031, 64}, {2, 9, 4097}, {5, 8193, 6}};
    const int nlast = opts.quick ? 6 : 12, nfirst = opts.quick ? 4 : 10, nmid = opts.quick ? 2 : 4;
    int seed = 1500;
    for (int ki = 0; ki < 2; ki++)
        for (int oi = 0; oi < 2; oi++)
            for (int ti = 0; ti < 3; ti++) {
                const char *kind = ki ? "nan" : "fin";
                for (int si = 0; si < nlast; si++) /* 16 rows: every class twice */
                    redpk_case(kind, ops[oi], dts[ti], "last", 1, 2, (int[]){16, last[si]}, dts[ti], si % 2, seed++);
                for (int si = 0; si < 2; si++) /* a prologue: cg_reduce's form, over the last axis and the first */
                    redpk_case(kind, ops[oi], dts[ti], "pro", si, 2, si ? (int[]){16, 1000} : (int[]){1031, 9},
                               dts[ti], false, seed++);
                for (int si = 0; si < nfirst; si++)
                    redpk_case(kind, ops[oi], dts[ti], "first", 0, 2, first[si], dts[ti], si % 2 == 0, seed++);
                for (int si = 0; si < nmid; si++) /* the output f32: the store path through another dtype */
                    redpk_case(kind, ops[oi], dts[ti], "mid", 1, 3, mid[si], "f32", si % 2, seed++);
            }
    /* amax: |x| by the sign bits, the identity 0 */
    static const int am[][2] = {{16, 8192}, {16, 9}, {8191, 40}, {7, 3}};
    for (int ki = 0; ki < 2; ki++)
        for (int ti = 0; ti < 3; ti++)
            for (int si = 0; si < 4; si++)
                redpk_case(ki ? "nan" : "fin", "amax", dts[ti], si < 2 ? "last" : "first", si < 2 ? 1 : 0, 2, am[si],
                           dts[ti], false, seed++);
}

/* Pointwise max / min with NaN (sqrt of x + 0.9: 5 % of the elements) in either operand or both, and +-Inf
 * (log of relu: -inf where x <= 0; its negation +inf): NaN propagates, as torch.maximum / torch.minimum.
 * Tolerance 20x the pointwise default: where log(z) wins the max, the GPU's logf near z = 1 is 1.3e-4 relative
 * off the double reference (H100, session 15), 1.2e-6 absolute. */
static void pw_nan_cases(void)
{
    static const char *const dts[] = {"f32", "f16", "bf16"};
    for (int ti = 0; ti < 3; ti++) {
        char id[96];
        snprintf(id, sizeof id, "pwnan/max+min/%s/33x1031", dts[ti]);
        add_case(id, 20, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[33, 1031];\n  input z: %s[33, 1031];\n"
                        "  a = sqrt(x + 0.9);\n  b = sqrt(z + 0.9);\n  l = log(relu(z));\n"
                        "  y = max(a, b);\n  w = min(a, 0.5);\n  u = max(l, a);\n  v = min(neg(l), b);\n"
                        "  output y: %s, w: %s, u: %s, v: %s;\n}\n",
                 1600 + ti, dts[ti], dts[ti], dts[ti], dts[ti], dts[ti], dts[ti]);
    }
}

static void run_case(int i, dh_outcome *out)
{
    const tcase *c = &cases[i];
    bool bench = opts.bench;
    dh_case_run r = {0};
    const bool specials = c->pk_axis >= 0 && !bench;
    xdnn_status s = dh_case_begin(&r, c->id, c->text, !bench && !specials, out);
    xgraph *g = r.g;
    if (s == XDNN_OK && specials)
        s = place_specials(c, &r, out);
    if (s != XDNN_OK)
        goto done;
    if (opts.dry) {
        s = dry_run(g, out->engines, sizeof out->engines, r.d);
        out->ok = s == XDNN_OK;
        snprintf(out->msg, sizeof out->msg, "(dry: planned and compiled, not run)");
        goto done;
    }
    gpu_run_opts o = {.warmup = bench ? 3 : 0, .iters = bench ? 20 : 1, .log = stderr, .cuda_graph = c->cuda_graph,
                      .verbose = getenv("DIFFTEST_VERBOSE") ? 1 : 0};
    s = dh_gpu_run(&r, &o, out);
    if (s != XDNN_OK)
        goto done;
    if (bench) {
        size_t n = 0;
        for (int k = 0; k < r.rep.nparts && n < sizeof out->msg; k++) {
            const gpu_partition_report *p = &r.rep.parts[k];
            double sec = p->ms_median * 1e-3;
            n += (size_t)snprintf(out->msg + n, sizeof out->msg - n,
                                  "\n    %-24s %-16s median %.4f ms (min %.4f max %.4f) %.1f GB/s %.1f TFLOP/s %s",
                                  p->name, p->engine, p->ms_median, p->ms_min, p->ms_max,
                                  sec > 0 ? p->bytes / sec * 1e-9 : 0, sec > 0 ? p->flops / sec * 1e-12 : 0,
                                  p->detail ? p->detail : "");
        }
        if (n < sizeof out->msg)
            snprintf(out->msg + n, sizeof out->msg - n, "\n    total %.4f ms, plan %.1f ms, compile %.1f ms",
                     r.rep.total_ms, r.rep.plan_ms, r.rep.compile_ms);
        /* Even unchecked, every output must be written and finite. */
        out->ok = dh_outputs_finite(&r);
        goto done;
    }
    out->ok = true;
    size_t n = 0;
    for (size_t k = 0; k < g->noutputs; k++) {
        int t = g->outputs[k];
        const xtensor *xt = &g->tensors[t];
        dh_rule rule = {.require_nonzero = true};
        /* Outputs of a matmul partition carry the GEMM's accumulation error
         * (and cuBLASLt's GELU epilogue), so they get matmul's tolerance. */
        int op = xt->producer >= 0 ? g->nodes[xt->producer].op : -1;
        if (strncmp(c->id, "matmul/", 7) == 0)
            op = op_lookup("matmul");
        compare_default_tolerance(xt->rdtype, op, &rule.rtol, &rule.atol);
        if (c->tol_scale > 1) { /* tf32: 10-bit mantissa inputs, error grows with sqrt(K) */
            rule.rtol = 5e-3;
            rule.atol = 1e-2;
        }
        if (specials) /* max/min are exact: the reference's values, NaN for NaN, and zeros' signs */
            rule = (dh_rule){.rtol = 0, .atol = 0};
        out->ok &= dh_compare_output(&r, t, &rule, out->msg, sizeof out->msg, &n, NULL);
        if (specials)
            out->ok &= pk_zero_signs(&r, t, out->msg, sizeof out->msg, &n);
    }
done:
    dh_case_end(&r, c->id, out->ok);
}

static void bench_cases(void)
{
    add_case("bench/pw/chain/f16/16Mi", 1,
             "dnn 1;\ngraph g(seed=1) {\n  input a: f16[4096, 4096];\n  input b: f16[4096];\n"
             "  y = relu(a * b + 0.5);\n  output y: f16;\n}\n");
    add_case("bench/pw/unfused-3x/f16/16Mi", 1,
             "dnn 1;\ngraph g(seed=1) {\n  input a: f16[4096, 4096];\n  input b: f16[4096];\n"
             "  t = a * b;\n  u = t + 0.5;\n  y = relu(u);\n  output t: f16, u: f16, y: f16;\n}\n");
    add_case("bench/softmax/f16/4096x4096", 1,
             "dnn 1;\ngraph g(seed=2) {\n  input x: f16[4096, 4096];\n  y = softmax(x);\n  output y: f16;\n}\n");
    add_case("bench/reduce/sum-last/f32/8192x4096", 1,
             "dnn 1;\ngraph g(seed=3) {\n  input x: f32[8192, 4096];\n  y = reduce(x, axes=[-1]);\n  output y;\n}\n");
    add_case("bench/matmul/bf16/4096^3", 1,
             "dnn 1;\ngraph g(seed=4) {\n  input a: bf16[4096, 4096];\n  input b: bf16[4096, 4096];\n"
             "  c = matmul(a, b);\n  output c: bf16;\n}\n");
    add_case("bench/matmul/f16+bias+relu/4096^3", 1,
             "dnn 1;\ngraph g(seed=5) {\n  input a: f16[4096, 4096];\n  weight w: f16[4096, 4096];\n"
             "  weight b: f16[4096];\n  h = relu(matmul(a, w, trans_b=true) + b);\n  output h: f16;\n}\n");
    add_case("bench/matmul/tf32/4096^3", 1,
             "dnn 1;\ngraph g(seed=6, tf32=true) {\n  input a: f32[4096, 4096];\n  input b: f32[4096, 4096];\n"
             "  c = matmul(a, b);\n  output c;\n}\n");
    static const char mlp[] =
        "dnn 1;\ngraph g(seed=8) {\n  input x: f16[512, 1024];\n  weight w1: f16[1024, 4096];\n  weight b1: f16[4096];\n"
        "  weight w2: f16[4096, 1024];\n  h = relu(matmul(x, w1) + b1);\n  y = softmax(matmul(h, w2) * 0.5);\n"
        "  output y: f16;\n}\n";
    add_case("bench/graph/mlp-softmax/f16", 1, "%s", mlp);
    add_case("bench/graph/mlp-softmax/f16/cuda-graph", 1, "%s", mlp);
    cases[ncases - 1].cuda_graph = true;
    add_case("bench/matmul/f32/4096^3", 1,
             "dnn 1;\ngraph g(seed=7) {\n  input a: f32[4096, 4096];\n  input b: f32[4096, 4096];\n"
             "  c = matmul(a, b);\n  output c;\n}\n");
}

int main(int argc, char **argv)
{
    dh_parse_args(argc, argv, true, &opts);
    cases = calloc(MAX_CASES, sizeof *cases);
    if (!cases)
        return 2;
    if (opts.bench) {
        bench_cases();
    } else {
        pointwise_cases();
        reduce_cases();
        matmul_cases();
        graph_cases();
        matmul_addend_cases(); /* session 11: registered last (the seeds follow the case count) */
        redcol_cases();        /* session 12: reduce v2, after every older case */
        redpk_cases();         /* session 15: packed 16-bit max/min, after those */
        pw_nan_cases();        /* session 15: pointwise max / min propagate NaN */
    }
    dh_tester t = {.name = "difftest", .ncases = ncases, .case_id = case_id, .case_text = case_text,
                   .run_case = run_case};
    int rc = dh_run(&t, &opts);
    free(cases);
    return rc;
}
