/* test_gpu_nvrtc.c — every kind of generated kernel compiles with NVRTC for
 * sm_90 (NVRTC needs no GPU, so this runs in CPU CI): pointwise with mixed
 * dtypes, broadcasting and layouts, every pointwise mode of the .def list
 * (forward and backward), reduce ops, softmax/log_softmax with prologues, a
 * matmul's generated epilogue.  A codegen bug shows here with the NVRTC log. */
#include <stdio.h>
#include <string.h>

#if XDNN_HAVE_CUDA
#include "test_util.h"

#include "gpu/engine.h"
#include "gpu/lower.h"
#include "gpu_fixture.h"

static int kernels; /* generated kernels compiled */

static void compile_graph(const char *label, const char *text)
{
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m = NULL;
    if (xdnn_module_parse(label, text, strlen(text), false, d, &m) != XDNN_OK ||
        xdnn_graph_bind(xdnn_module_find_graph(m, NULL), NULL, 0, d) != XDNN_OK) {
        CHECK(false, "%s: graph did not bind (diagnostics below)", label);
        xdnn_diags_print(d, stderr);
        xdnn_module_destroy(m);
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

int main(void)
{
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
