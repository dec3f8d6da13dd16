/* test_gpu_shapeclass.c — generated pointwise kernels with their sizes as
 * arguments (ggraph.sizes_as_args, the mode of plans with dynamic params;
 * codegen.h), no GPU needed: at two sizes of one shape class every kernel's
 * source is the same (so a resized plan compiles nothing: the NVRTC cache is
 * keyed by source) and only the argument values differ; a size that changes
 * the class (a dim becoming 1) gives another source; with literal sizes (the
 * default) the sources differ, as before; every source compiles for sm_90.
 * Built with CUDA=1 only (else it just says so). */
#include <stdio.h>
#include <string.h>

#if XDNN_HAVE_CUDA
#include "test_util.h"

#include "gpu/engine.h"
#include "gpu/lower.h"
#include "gpu_fixture.h"

enum { MAXK = 32, MAXV = 64 };

/* Bias + gelu + residual on [B, S, D] (a vectorized kernel), a permuted
 * input read through strides (scalar kernel), a matmul whose epilogue is
 * generated, a softmax over S with a prologue and a mean over S (reduce
 * kernels). */
static const char text[] = "dnn 1;\nparam B = 2;\nparam S = 64;\n"
                           "graph g(io=f32, seed=1) {\n"
                           "  input x: f32[B, S, 64];\n  input t: f32[B, 64, S];\n  weight b: f32[64];\n"
                           "  weight w: f32[64, 64];\n"
                           "  y = x + gelu(x + b) * permute(t, perm=[0, 2, 1]);\n"
                           "  z = tanh(matmul(y, w)) + x;\n"
                           "  s = softmax(z * 0.5, axis=1);\n  r = reduce(t, op=\"mean\", axes=[2]);\n"
                           "  output y, s, r;\n}\n";

typedef struct kernels {
    int n;
    char *src[MAXK];
    int64_t vals[MAXK][MAXV]; /* the size arguments (the first MAXV) */
    int nvals[MAXK];
    int reduce;          /* of them reduce or softmax kernels */
} kernels;

/* Generate every pointwise kernel (and matmul epilogue) of g bound with S=s, B=b. */
static void generate(const char *s, const char *b, bool args, kernels *out)
{
    memset(out, 0, sizeof *out);
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m = NULL;
    xdnn_binding bind[] = {{"S", s}, {"B", b}};
    bool ok = xdnn_module_parse("shapeclass.dnn", text, strlen(text), false, d, &m) == XDNN_OK &&
              xdnn_graph_bind(xdnn_module_find_graph(m, NULL), bind, 2, d) == XDNN_OK;
    CHECK(ok, "graph binds at S=%s B=%s", s, b);
    arena *ar = arena_create();
    ggraph *g = ok ? gpu_lower(xdnn_module_find_graph(m, NULL), ar) : NULL;
    if (g)
        g->sizes_as_args = args;
    gplan *pl = g ? gpu_partition(g, false) : NULL;
    for (int i = 0; pl && i < pl->nparts && out->n < MAXK; i++) {
        gpart *p = &pl->parts[i];
        cg_kernel k;
        char why[256] = "";
        const int got = fixture_partition_kernel(pl, p, &k, why, sizeof why);
        if (got == 0)
            continue;
        out->reduce += p->kind == GP_REDUCE;
        CHECK(got == 1, "partition %s generates: %s", p->name, why);
        if (got != 1)
            continue;
        CHECK(gpu_nvrtc_check(k.src, "k", "sm_90", d) == XDNN_OK, "partition %s at S=%s compiles:\n%s", p->name, s,
              k.src);
        out->src[out->n] = strdup(k.src);
        out->nvals[out->n] = k.nvals;
        for (int j = 0; j < k.nvals && j < MAXV; j++)
            out->vals[out->n][j] = k.vals[j];
        out->n++;
    }
    xdnn_diags_print(d, stderr);
    arena_destroy(ar);
    xdnn_module_destroy(m);
    xdnn_diags_destroy(d);
}

static void kernels_free(kernels *k)
{
    for (int i = 0; i < k->n; i++)
        free(k->src[i]);
}

int main(void)
{
    kernels a, b, c, la, lb;
    generate("64", "2", true, &a);
    generate("1000", "2", true, &b);
    generate("64", "1", true, &c); /* B = 1: the batch dim drops out of the offsets: another class */
    generate("64", "2", false, &la);
    generate("1000", "2", false, &lb);
    CHECK(a.n >= 4 && a.n == b.n && a.n == la.n && a.n == lb.n, "the same kernels at both sizes (%d, %d)", a.n, b.n);
    CHECK(a.reduce >= 2, "a softmax and a reduce among them (%d)", a.reduce);
    int same = 0, differ_literal = 0, class_change = 0;
    for (int i = 0; i < a.n && i < b.n; i++) {
        same += strcmp(a.src[i], b.src[i]) == 0;
        CHECK(a.nvals[i] > 0 && a.nvals[i] == b.nvals[i], "kernel %d takes its sizes as arguments", i);
        bool scales = false; /* some count (elements, or a row's length) is S times the same factor */
        for (int j = 0; j < a.nvals[i] && j < MAXV; j++)
            scales |= a.vals[i][j] > 0 && a.vals[i][j] * 1000 == b.vals[i][j] * 64;
        CHECK(scales, "kernel %d: a size argument scales with S", i);
        CHECK(strstr(a.src[i], "const xd_sizes sh") != NULL && strstr(a.src[i], "typedef long long xd_idx") != NULL);
    }
    CHECK(same == a.n, "every kernel's source is the same at S=64 and S=1000 (%d of %d)", same, a.n);
    for (int i = 0; i < la.n && i < lb.n; i++) {
        differ_literal += strcmp(la.src[i], lb.src[i]) != 0;
        CHECK(la.nvals[i] == 0 && strstr(la.src[i], "xd_sizes") == NULL, "literal sizes by default (kernel %d)", i);
    }
    CHECK(differ_literal == la.n, "with literal sizes each size is its own source (%d of %d)", differ_literal, la.n);
    for (int i = 0; i < a.n && i < c.n; i++)
        class_change += strcmp(a.src[i], c.src[i]) != 0;
    CHECK(class_change > 0, "a dim becoming 1 changes the class of some kernel");
    kernels *all[] = {&a, &b, &c, &la, &lb};
    for (int i = 0; i < 5; i++)
        kernels_free(all[i]);
    return test_summary("test_gpu_shapeclass");
}
#else
int main(void)
{
    printf("test_gpu_shapeclass: built without CUDA, nothing to test\n");
    return 0;
}
#endif
