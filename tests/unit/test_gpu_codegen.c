/* test_gpu_codegen.c — the shape of generated pointwise kernels (codegen.c),
 * no GPU needed: which partitions get the 16-byte-chunk form and how wide
 * (8 f16 / 4 f32 elements, 1 when a size or stride does not divide or an
 * operand is strided along the walked dim), which operands move in chunks
 * and which are read per element (broadcast along it), and the order threads
 * walk the dims (the output's layout: C innermost for NHWC).  The kernels
 * themselves are compiled by test_gpu_nvrtc and run by tests/gpu/difftest_norm.c
 * (vec/ cases).  Built with CUDA=1 only. */
#include <stdio.h>

#if XDNN_HAVE_CUDA
#include "gpu_fixture.h"
#include "test_util.h"

#include "gpu/codegen.h"

#include <stdlib.h>
#include <string.h>

/* The kernel of the (only) pointwise partition of `body` over inputs `decl`. */
static bool kernel_of(fixture *f, const char *decl, const char *body, cg_kernel *k)
{
    char text[1024];
    snprintf(text, sizeof text, "dnn 1;\ngraph g(seed=1) {\n%s%s}\n", decl, body);
    if (!fixture_setup(f, text))
        return false;
    for (int i = 0; i < f->pl->nparts; i++) {
        const gpart *p = &f->pl->parts[i];
        if (p->kind == GP_POINTWISE)
            return cg_pointwise(f->g, p->nodes, p->nnodes, p->outs, p->nouts, "k", k) == XDNN_OK;
    }
    CHECK(false, "no pointwise partition in: %s", body);
    return false;
}

static void test_widths(void)
{
    static const struct {
        const char *decl, *body;
        int vec;
        const char *why;
    } cases[] = {
        {"  input x: f16[6, 64];\n", "  y = gelu(x);\n  output y: f16;\n", 8, "f16: 16 bytes = 8"},
        {"  input x: f32[6, 64];\n", "  y = gelu(x);\n  output y: f32;\n", 4, "f32: 16 bytes = 4"},
        {"  input x: f16[6, 64];\n", "  y = gelu(x);\n  output y: f32;\n", 4, "16 bytes of the widest output (f32)"},
        {"  input x: f32[6, 64];\n", "  y = cast(x, dtype=bf16);\n  output y: bf16;\n", 8,
         "f32 -> bf16: a wider input does not count"},
        {"  input x: f16[6, 61];\n", "  y = gelu(x);\n  output y: f16;\n", 1, "61 does not divide"},
        {"  input x: f16[6, 60];\n", "  y = gelu(x);\n  output y: f16;\n", 4, "60: 4 divides, 8 does not"},
        {"  input x: f16[6, 64] @col;\n", "  y = x + 1.0;\n  output y: f16;\n", 1, "x strided along the last dim"},
        {"  input x: f16[6, 64];\n  input b: f16[6, 1];\n", "  y = x * b;\n  output y: f16;\n", 8,
         "b broadcast along the last dim: per element"},
        {"  input x: f16[3, 16, 5, 7] @nhwc;\n  input s: f32[1, 16, 1, 1];\n",
         "  y = relu(x * s);\n  output y: f16 @nhwc;\n", 8, "NHWC: chunks along C"},
        {"  input x: f16[3, 16, 5, 7] @nhwc;\n  input z: f16[3, 16, 5, 7];\n", "  y = x + z;\n  output y: f16 @nhwc;\n",
         1, "z (NCHW) is strided along C"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fixture f;
        cg_kernel k;
        if (kernel_of(&f, cases[i].decl, cases[i].body, &k)) {
            CHECK_EQ(k.vec, cases[i].vec, "%s", cases[i].why);
            CHECK(k.work > 0 && k.work * k.vec == f.g->t[fixture_tensor(f.g, "y")].numel, "%s: one thread per chunk",
                  cases[i].why);
            if (k.vec > 1 && strstr(cases[i].why, "per element"))
                CHECK(k.contig[fixture_tensor(f.g, "x")] && !k.contig[fixture_tensor(f.g, "b")]);
            if (k.vec > 1 && strstr(cases[i].why, "NHWC")) {
                /* threads walk N, H, W, C: c1 (C) is split off first, innermost */
                const char *d = strstr(k.src, "xd_idx r_ = le;");
                CHECK(d && strstr(d, "c1 = r_ % 16;") && strstr(d, "c1 = r_ % 16;") < strstr(d, "c3 = r_ % 7;"),
                      "C innermost");
                CHECK(k.contig[fixture_tensor(f.g, "s")], "the per-channel operand moves in chunks along C");
            }
        }
        fixture_teardown(&f);
    }
}

/* XDNN_PW_VEC_WIDEST=0: the narrowest dtype sets the chunk (8 bf16 elements, two 16-byte f32 stores). */
static void test_narrowest(void)
{
    setenv("XDNN_PW_VEC_WIDEST", "0", 1);
    fixture f;
    cg_kernel k;
    if (kernel_of(&f, "  input x: bf16[6, 64];\n", "  y = cast(x, dtype=f32);\n  output y: f32;\n", &k))
        CHECK_EQ(k.vec, 8, "the narrowest dtype sets it");
    fixture_teardown(&f);
    unsetenv("XDNN_PW_VEC_WIDEST");
}

/* The logistic family's 16-bit results take xd_sigmoid_fast (lower.c pw_fast_form); f32 results, and every
 * result with XDNN_PW_APPROX=0, the exact expf and division. */
static void test_logistic_forms(void)
{
    static const struct { const char *dt, *body; bool fast; } cases[] = {
        {"bf16", "  y = silu(x);\n  output y: bf16;\n", true},
        {"f16", "  y = sigmoid(x);\n  output y: f16;\n", true},
        {"bf16", "  y = swish(x, beta=2.0);\n  output y: bf16;\n", true},
        {"f32", "  y = silu(x);\n  output y: f32;\n", false},
        {"bf16", "  y = gelu(x);\n  output y: bf16;\n", false},
    };
    for (int off = 0; off < 2; off++) {
        if (off)
            setenv("XDNN_PW_APPROX", "0", 1);
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            char decl[64];
            snprintf(decl, sizeof decl, "  input x: %s[6, 64];\n", cases[i].dt);
            fixture f;
            cg_kernel k;
            if (kernel_of(&f, decl, cases[i].body, &k)) {
                const char *body = strstr(k.src, "extern \"C\"");
                bool fast = body && strstr(body, "xd_sigmoid_fast(");
                CHECK(fast == (cases[i].fast && !off), "%s %s (XDNN_PW_APPROX %s): fast form %d", cases[i].dt,
                      cases[i].body, off ? "0" : "unset", (int)fast);
            }
            fixture_teardown(&f);
        }
    }
    unsetenv("XDNN_PW_APPROX");
}

int main(void)
{
    test_widths();
    test_narrowest();
    test_logistic_forms();
    return test_summary("test_gpu_codegen");
}
#else
int main(void)
{
    puts("test_gpu_codegen: built without CUDA, nothing to test");
    return 0;
}
#endif
