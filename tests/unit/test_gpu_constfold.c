/* test_gpu_constfold.c — plan-time constants (src/gpu/constfold.c), no GPU
 * needed: which partitions a plan built with const_weights runs once (casts
 * and layout changes of weights; not of inputs, not random ones, not ones
 * writing graph outputs), that nothing is marked by default, and that the
 * workspace keeps their results apart from every other buffer for the whole
 * plan (later executes read them without recomputing).  Built with CUDA=1
 * only (else it just says so). */
#include <stdio.h>
#include <string.h>

#if XDNN_HAVE_CUDA
#include "gpu_fixture.h"
#include "test_util.h"

#include "gpu/partition.h"

#include <stdint.h>

/* bf16 weights meeting f32 activations in matmuls (lower.c casts the weight),
 * the same for an input, a weight read through a permute view and scaled, a
 * random draw from a weight, and a graph output computed from a weight. */
static const char *const graph_text =
    "dnn 1;\ngraph g(seed=3) {\n"
    "  input x: f32[4, 8];\n  weight w: bf16[8, 16];\n  weight w2: bf16[16, 8];\n"
    "  input wi: bf16[8, 16];\n  weight wt: f32[16, 8];\n"
    "  h = matmul(x, w);\n  z = matmul(x, wi);\n  y = matmul(h, w2);\n"
    "  p = permute(wt, perm=[1, 0]) * 2.0;\n  q = matmul(x, p);\n"
    "  d, dm = dropout(wt, p=0.5);\n  s2 = wt * 3.0;\n"
    "  output y, z, q, d, s2;\n}\n";

static bool has_node(const ggraph *g, const gpart *q, const char *name)
{
    for (int k = 0; k < q->nnodes; k++)
        if (strcmp(g->n[q->nodes[k]].name, name) == 0)
            return true;
    return false;
}

static const gpart *part_with(const gplan *p, const char *node)
{
    for (int i = 0; i < p->nparts; i++)
        if (has_node(p->g, &p->parts[i], node))
            return &p->parts[i];
    CHECK(false, "a partition holds node %s", node);
    return NULL;
}

static void test_marking(void)
{
    fixture f;
    if (!fixture_setup(&f, graph_text))
        return;
    gplan *p = f.pl;
    for (int i = 0; i < p->nparts; i++)
        CHECK(!p->parts[i].once, "nothing is constant by default (partition %s)", p->parts[i].name);
    int n = gpu_mark_constants(p);
    CHECK(n == 3 && p->nonce == 3, "3 constant partitions, got %d", n);
    const gpart *cw = part_with(p, "h.cast1"), *cw2 = part_with(p, "y.cast1"), *ci = part_with(p, "z.cast1");
    CHECK(cw && cw->once && cw->nnodes == 1, "the cast of weight w runs once");
    CHECK(cw2 && cw2->once, "the cast of weight w2 runs once");
    CHECK(ci && !ci->once, "the cast of input wi runs on every execute");
    const gpart *pp = part_with(p, "p");
    CHECK(pp && pp->once, "a weight through a permute view, scaled: once");
    CHECK(part_with(p, "q") && !part_with(p, "q")->once, "the matmul reads the input x");
    CHECK(part_with(p, "d") && !part_with(p, "d")->once, "dropout draws afresh");
    CHECK(part_with(p, "s2") && !part_with(p, "s2")->once, "a graph output is the caller's buffer");
    CHECK(part_with(p, "h") && !part_with(p, "h")->once && part_with(p, "y") && !part_with(p, "y")->once);
    /* the listing says which */
    char buf[4096] = "";
    FILE *m = fmemopen(buf, sizeof buf - 1, "w");
    if (m) {
        gpu_print_partitions(p, m);
        fclose(m);
    }
    CHECK(strstr(buf, ", once] h.cast1") != NULL, "listing marks the once partitions:\n%s", buf);

    /* results of once partitions: never overlapping another workspace buffer */
    gpu_plan_workspace(p);
    const ggraph *g = f.g;
    int checked = 0;
    for (int i = 0; i < p->nparts; i++) {
        const gpart *q = &p->parts[i];
        if (!q->once)
            continue;
        for (int j = 0; j < q->nouts; j++) {
            int t = q->outs[j];
            CHECK(p->offset[t] != SIZE_MAX, "constant %s lives in the workspace", g->t[t].name);
            size_t a0 = p->offset[t], a1 = a0 + gg_span_bytes(&g->t[t]);
            for (int u = 0; u < g->nt; u++) {
                if (u == t || p->offset[u] == SIZE_MAX)
                    continue;
                size_t b0 = p->offset[u], b1 = b0 + gg_span_bytes(&g->t[u]);
                CHECK(a1 <= b0 || b1 <= a0, "constant %s [%zu, %zu) overlaps %s [%zu, %zu)", g->t[t].name, a0, a1,
                      g->t[u].name, b0, b1);
                checked++;
            }
        }
    }
    CHECK(checked > 0, "the overlap check compared something");
    fixture_teardown(&f);
}

/* The transformer block's four bf16 weight casts (issue 12: "4 re-cast
 * constant weights on every run") are exactly its constant partitions. */
static void test_transformer_block(void)
{
    fixture f;
    if (!fixture_setup(&f, "dnn 1;\ngraph g(io=bf16, compute=f32, intermediate=f32, seed=7) {\n"
                           "  input x: bf16[2, 16, 32];\n  weight g1: bf16[32] = fill(1.0);\n"
                           "  weight b1: bf16[32] = fill(0.0);\n  weight wq: bf16[32, 96];\n  weight wo: bf16[32, 32];\n"
                           "  weight wu: bf16[32, 128];\n  weight wd: bf16[128, 32];\n"
                           "  h = layernorm(x, g1, b1, axes=[-1]);\n  qkv = matmul(h, wq);\n"
                           "  q, k, v = split(qkv, axis=2, parts=3);\n  r = x + matmul(q + k + v, wo);\n"
                           "  y = r + matmul(gelu(matmul(r, wu)), wd);\n  output y;\n}\n"))
        return;
    int before = f.pl->nparts, n = gpu_mark_constants(f.pl);
    int casts = 0;
    for (int i = 0; i < f.pl->nparts; i++) {
        const gpart *q = &f.pl->parts[i];
        bool cast = q->nnodes == 1 && strstr(q->name, ".cast") != NULL;
        casts += cast;
        CHECK(q->once == cast, "partition %s: once iff it is a weight cast", q->name);
    }
    CHECK(n == 4 && casts == 4, "4 weight casts run once, got %d of %d", n, casts);
    CHECK(f.pl->nparts - f.pl->nonce == before - 4, "each execute runs 4 partitions fewer");
    fixture_teardown(&f);
}

int main(void)
{
    test_marking();
    test_transformer_block();
    return test_summary("test_gpu_constfold");
}
#else
int main(void)
{
    printf("test_gpu_constfold: built without CUDA, nothing to test\n");
    return 0;
}
#endif
