/* test_gpu_nvrtc.c — every kind of generated kernel compiles with NVRTC for
 * sm_90 (NVRTC needs no GPU, so this runs in CPU CI): pointwise with mixed
 * dtypes, broadcasting and layouts, every pointwise mode of the .def list
 * (forward and backward), reduce ops, softmax/log_softmax with prologues, a
 * matmul's generated epilogue.  A codegen bug shows here with the NVRTC log. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if XDNN_HAVE_CUDA
#include "test_util.h"

#include "gpu/engine.h"
#include "gpu/lower.h"
#include "gpu_fixture.h"

static int kernels; /* generated kernels compiled */

/* Parse and bind `text`; NULL (the diagnostics printed, m destroyed) when it does not bind. */
static xdnn_module_t *bind_graph(const char *label, const char *text, xdnn_diags_t *d)
{
    xdnn_module_t *m = NULL;
    if (xdnn_module_parse(label, text, strlen(text), false, d, &m) != XDNN_OK ||
        xdnn_graph_bind(xdnn_module_find_graph(m, NULL), NULL, 0, d) != XDNN_OK) {
        CHECK(false, "%s: graph did not bind (diagnostics below)", label);
        xdnn_diags_print(d, stderr);
        xdnn_module_destroy(m);
        return NULL;
    }
    return m;
}

static void compile_graph(const char *label, const char *text)
{
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m = bind_graph(label, text, d);
    if (!m) {
        xdnn_diags_destroy(d);
        return;
    }
    arena *ar = arena_create();
    ggraph *g = gpu_lower(xdnn_module_find_graph(m, NULL), ar);
    gplan *pl = gpu_partition(g, false);
    for (int i = 0; i < pl->nparts; i++) {
        gpart *p = &pl->parts[i];
        cg_kernel k;
        char why[256] = "";
        const int got = fixture_partition_kernel(pl, p, &k, why, sizeof why);
        if (got == 0)
            continue;
        kernels++;
        CHECK(got == 1, "%s: partition %s does not generate: %s (diagnostics below)", label, p->name, why);
        if (got != 1) {
            xdnn_diags_print(d, stderr);
            continue;
        }
        const xdnn_status st = gpu_nvrtc_check(k.src, "k", "sm_90", d);
        CHECK(st == XDNN_OK, "%s: partition %s does not compile (diagnostics below)", label, p->name);
        if (st != XDNN_OK)
            xdnn_diags_print(d, stderr);
    }
    arena_destroy(ar);
    xdnn_module_destroy(m);
    xdnn_diags_destroy(d);
}

/* Reduce v2 (codegen_redcol.c, the default): each graph's one reduce takes the form `form` (0: the old one)
 * with `splits` row splits, and compiles; with XDNN_REDUCE_V2=0 the same graph keeps the old form. */
static void reduce_v2(const char *label, const char *text, int form, int splits)
{
    for (int on = 1; on >= 0; on--) {
        if (on)
            unsetenv("XDNN_REDUCE_V2"); /* the default */
        else
            setenv("XDNN_REDUCE_V2", "0", 1);
        xdnn_diags_t *d = xdnn_diags_create();
        xdnn_module_t *m = bind_graph(label, text, d);
        if (!m) {
            xdnn_diags_destroy(d);
            continue;
        }
        arena *ar = arena_create();
        ggraph *g = gpu_lower(xdnn_module_find_graph(m, NULL), ar);
        gplan *pl = gpu_partition(g, false);
        int seen = 0;
        for (int i = 0; i < pl->nparts; i++) {
            gpart *p = &pl->parts[i];
            cg_kernel k;
            char why[256] = "";
            if (p->kind != GP_REDUCE || fixture_partition_kernel(pl, p, &k, why, sizeof why) != 1)
                continue;
            seen++;
            kernels++;
            CHECK(k.form == (on ? form : 0), "%s (switch %s): form %d, expected %d", label, on ? "on" : "off", k.form,
                  on ? form : 0);
            CHECK(k.form != CG_FORM_COL || (int)k.grid_y == splits, "%s: %u splits, expected %d", label, k.grid_y,
                  splits);
            CHECK((k.name2 != NULL) == (k.form == CG_FORM_COL && splits > 1), "%s: fold kernel %s", label,
                  k.name2 ? k.name2 : "(none)");
            const xdnn_status st = gpu_nvrtc_check(k.src, "k", "sm_90", d);
            CHECK(st == XDNN_OK, "%s (switch %s): does not compile (diagnostics below)", label, on ? "on" : "off");
            if (st != XDNN_OK)
                xdnn_diags_print(d, stderr);
        }
        CHECK(seen == 1, "%s: %d reduce kernels, expected 1", label, seen);
        arena_destroy(ar);
        xdnn_module_destroy(m);
        xdnn_diags_destroy(d);
    }
}

int main(void)
{
    /* 8192x8192 f32 over rows: 256 tiles of 32 columns, 4 splits to reach 1024 blocks; bf16: 128 tiles, 8 */
    reduce_v2("v2-first-f32", "dnn 1;\ngraph g {\n  input x: f32[8192, 8192];\n  y = reduce(x, axes=[0]);\n"
                              "  output y;\n}\n", CG_FORM_COL, 4);
    reduce_v2("v2-first-bf16", "dnn 1;\ngraph g {\n  input x: bf16[8192, 8192];\n  y = reduce(x, op=\"max\", axes=[0]);\n"
                               "  output y;\n}\n", CG_FORM_COL, 8);
    /* misaligned columns (scalar loads), a middle axis, one split (7 rows) */
    reduce_v2("v2-mid-f16", "dnn 1;\ngraph g {\n  input x: f16[3, 7, 4097];\n"
                            "  y = reduce(x, op=\"norm2\", axes=[1], keepdims=false);\n  output y: f16;\n}\n",
              CG_FORM_COL, 1);
    reduce_v2("v2-last-bf16", "dnn 1;\ngraph g {\n  input x: bf16[300, 1000];\n  y = reduce(x, op=\"mean\", axes=[-1]);\n"
                              "  output y;\n}\n", CG_FORM_ROW, 0);
    reduce_v2("v2-last-long", "dnn 1;\ngraph g {\n  input x: f32[64, 8192];\n  y = reduce(x, op=\"amax\", axes=[1]);\n"
                              "  output y;\n}\n", CG_FORM_ROW, 0);
    /* stays old: a prologue, a kept dim between reduced ones, an i32 input */
    reduce_v2("v2-prologue", "dnn 1;\ngraph g {\n  input x: f32[64, 96];\n  y = reduce(x * 2.0, axes=[0]);\n"
                             "  output y;\n}\n", 0, 0);
    reduce_v2("v2-interleaved", "dnn 1;\ngraph g {\n  input x: f32[4, 5, 6];\n  y = reduce(x, axes=[0, 2]);\n"
                                "  output y;\n}\n", 0, 0);
    unsetenv("XDNN_REDUCE_V2");
    compile_graph("mixed.dnn", "dnn 1;\ngraph g {\n  input a: f16[3, 5] @col;\n  input b: bf16[5];\n"
                               "  input c: i32[3, 1];\n  input k: bool[3, 5];\n"
                               "  y = select(k, relu(a * b, slope=0.25) + c, gelu(a, approx=\"tanh\"));\n"
                               "  z = (y > 0.5);\n  q = cast(y, dtype=i8);\n  output y: bf16, z, q;\n}\n");
    /* Every unary mode and its backward, then binary ones, in one graph each. */
    compile_graph("unary.dnn",
                  "dnn 1;\ngraph g {\n  input x: f32[7, 9];\n  input dy: f32[7, 9];\n"
                  "  u = neg(abs(exp(log(sqrt(rsqrt(reciprocal(sin(cos(tan(erf(floor(ceil(x)))))))))))));\n"
                  "  v = sigmoid(tanh(gelu(gelu_tanh(swish(silu(elu(softplus(mish(identity(x))))))))));\n"
                  "  w = relu_bwd(dy, x) + sigmoid_bwd(dy, x) + tanh_bwd(dy, x) + gelu_bwd(dy, x)"
                  " + gelu_tanh_bwd(dy, x) + swish_bwd(dy, x) + silu_bwd(dy, x) + elu_bwd(dy, x)"
                  " + softplus_bwd(dy, x) + mish_bwd(dy, x) + exp_bwd(dy, x) + log_bwd(dy, x)"
                  " + sqrt_bwd(dy, x) + rsqrt_bwd(dy, x) + reciprocal_bwd(dy, x) + sin_bwd(dy, x)"
                  " + cos_bwd(dy, x) + tan_bwd(dy, x) + erf_bwd(dy, x) + abs_bwd(dy, x) + neg_bwd(dy, x);\n"
                  "  output u, v, w;\n}\n");
    /* bf16 results: the logistic family's approximate forms (lower.c pw_fast_form) */
    compile_graph("logistic-bf16.dnn",
                  "dnn 1;\ngraph g {\n  input x: bf16[7, 16];\n  input dy: bf16[7, 16];\n"
                  "  v = sigmoid(swish(silu(x), beta=1.5));\n"
                  "  w = sigmoid_bwd(dy, x) + silu_bwd(dy, x) + swish_bwd(dy, x, beta=0.5) + softplus_bwd(dy, x);\n"
                  "  output v, w;\n}\n");
    compile_graph("binary.dnn",
                  "dnn 1;\ngraph g {\n  input a: f32[4, 6];\n  input b: f32[6];\n"
                  "  y = max(a, b) - min(a, b) + pow(a, b) / mod(a, b) + add_square(a, b);\n"
                  "  l = logical_or(logical_and(eq(a, b), ne(a, b)), logical_not(lt(a, b)));\n"
                  "  m = le(a, b) + ge(a, b);\n  output y, l, m;\n}\n");
    compile_graph("reduce.dnn",
                  "dnn 1;\ngraph g {\n  input x: f16[5, 6, 7];\n"
                  "  s = reduce(x * 2.0, op=\"sum\", axes=[1]);\n  a = reduce(x, op=\"mean\", axes=[0, 2]);\n"
                  "  b = reduce(x, op=\"max\", keepdims=false);\n  c = reduce(x, op=\"min\", axes=[2]);\n"
                  "  d = reduce(x, op=\"amax\", axes=[-1]);\n  e = reduce(x, op=\"prod\", axes=[0]);\n"
                  "  f = reduce(x, op=\"norm1\", axes=[1, 2]);\n  h = reduce(x, op=\"norm2\", axes=[2]);\n"
                  "  output s, a, b, c, d, e, f, h;\n}\n");
    compile_graph("softmax.dnn",
                  "dnn 1;\ngraph g {\n  input x: bf16[4, 3, 33];\n  input m: f32[33];\n"
                  "  s = softmax(x * 0.125 + m);\n  l = log_softmax(x, axis=1);\n  output s, l;\n}\n");
    compile_graph("epilogue.dnn",
                  "dnn 1;\ngraph g {\n  input x: f16[2, 8, 16];\n  weight w: f16[16, 24];\n  weight r: f32[2, 8, 24];\n"
                  "  y = tanh(matmul(x, w)) * 0.5 + r;\n  output y: f16;\n}\n");
    gpu_release_caches();
    CHECK(kernels >= 12, "only %d kernels compiled", kernels);
    return test_summary("test_gpu_nvrtc");
}
#else
int main(void)
{
    printf("test_gpu_nvrtc: skipped (built without CUDA)\n");
    return 0;
}
#endif
