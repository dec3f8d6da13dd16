/* test_gpu_views.c — views.c, no GPU needed: which reshape / permute / slice /
 * split / broadcast nodes become views (strides and offsets checked against
 * hand-computed ones), which stay copies and why (graph output, reversed
 * slice, unaligned offset, a consumer that needs its own layout), that the
 * partitioner orders, stores and keeps alive a view's storage, and that
 * XDNN_NO_VIEWS=1 keeps every copy.  Built with CUDA=1 only. */
#include <stdio.h>

#if XDNN_HAVE_CUDA
#include "gpu_fixture.h"
#include "test_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int count_op(const gplan *p, const char *op)
{
    int n = 0;
    for (int k = 0; k < p->g->nn; k++)
        n += strcmp(p->g->n[k].op, op) == 0;
    return n;
}

static void check_strides(const ggraph *g, const char *name, int rank, const int64_t *want, int64_t off, int base)
{
    const gtensor *t = &g->t[fixture_tensor(g, name)];
    CHECK(t->view_of == base, "%s views %d, want %d", name, t->view_of, base);
    CHECK_EQ(t->view_offset, off, "%s offset", name);
    for (int d = 0; d < rank; d++)
        CHECK_EQ(t->strides[d], want[d], "%s stride %d", name, d);
}

/* The attention pattern: split -> reshape -> permute -> sdpa, and the output
 * permute -> reshape -> matmul, all views; sdpa writes o as [B,S,H,HD]. */
static void test_attention(void)
{
    const char *text = "dnn 1;\ngraph g(seed=1) {\n"
                       "  input x: f32[2, 8, 64];\n  weight w: f32[64, 192] = randn();\n"
                       "  weight wo: f32[64, 64] = randn();\n"
                       "  qkv = matmul(x, w);\n  q, k, v = split(qkv, axis=2, parts=3);\n"
                       "  qh = permute(reshape(q, dims=[2, 8, 4, 16]), perm=[0, 2, 1, 3]);\n"
                       "  kh = permute(reshape(k, dims=[2, 8, 4, 16]), perm=[0, 2, 1, 3]);\n"
                       "  vh = permute(reshape(v, dims=[2, 8, 4, 16]), perm=[0, 2, 1, 3]);\n"
                       "  o = sdpa(qh, kh, vh, causal=true);\n"
                       "  a = reshape(permute(o, perm=[0, 2, 1, 3]), dims=[2, 8, 64]);\n"
                       "  y = matmul(a, wo);\n  output y;\n}\n";
    fixture f;
    if (!fixture_setup(&f, text))
        return;
    const ggraph *g = f.g;
    int qkv = fixture_tensor(g, "qkv"), o = fixture_tensor(g, "o");
    CHECK_EQ(count_op(f.pl, "split") + count_op(f.pl, "reshape") + count_op(f.pl, "permute"), 0);
    CHECK_EQ(f.pl->nparts, 3, "matmul, sdpa, matmul");
    check_strides(g, "q", 3, (int64_t[]){1536, 192, 1}, 0, qkv);
    check_strides(g, "k", 3, (int64_t[]){1536, 192, 1}, 64, qkv);
    check_strides(g, "vh", 4, (int64_t[]){1536, 16, 192, 1}, 128, qkv);
    /* o laid out [B, S, H, HD] for the permute after it */
    const gtensor *to = &g->t[o];
    CHECK(to->view_of < 0);
    CHECK(to->strides[0] == 512 && to->strides[1] == 16 && to->strides[2] == 64 && to->strides[3] == 1);
    check_strides(g, "a", 3, (int64_t[]){512, 64, 1}, 0, o);
    CHECK(f.pl->materialized[qkv] && f.pl->materialized[o]);
    /* the storage lives until the last view reader: qkv's offset range is
     * not reused by o while sdpa reads it */
    gpu_plan_workspace(f.pl);
    size_t qa = f.pl->offset[qkv], qb = qa + gg_span_bytes(&g->t[qkv]);
    size_t oa = f.pl->offset[o], ob = oa + gg_span_bytes(to);
    CHECK(qa != SIZE_MAX && oa != SIZE_MAX);
    CHECK(qb <= oa || ob <= qa, "qkv [%zu, %zu) and o [%zu, %zu) overlap", qa, qb, oa, ob);
    fixture_teardown(&f);

    setenv("XDNN_NO_VIEWS", "1", 1);
    if (fixture_setup(&f, text)) {
        CHECK_EQ(count_op(f.pl, "permute"), 4, "XDNN_NO_VIEWS=1 keeps the copies");
        fixture_teardown(&f);
    }
    unsetenv("XDNN_NO_VIEWS");
}

/* What stays a copy, and why. */
static void test_kept_copies(void)
{
    static const struct {
        const char *body, *why;
        int copies;
    } cases[] = {
        /* a graph output keeps the caller's layout */
        {"  y = permute(relu(x), perm=[1, 0]);\n  output y;\n", "output", 1},
        /* a reversed slice would need a negative stride */
        {"  y = relu(slice(relu(x), axis=1, step=-1));\n  output y;\n", "negative", 1},
        /* offset 3 floats: not 256-byte aligned */
        {"  y = relu(slice(relu(x), axis=1, start=3));\n  output y;\n", "unaligned", 1},
        /* offset 64 floats: aligned, a strided pointwise operand */
        {"  y = relu(slice(relu(x), axis=1, start=64, step=2));\n  output y;\n", "aligned", 0},
        /* layernorm takes no strided operand: a permute of an input before it stays */
        {"  y = layernorm(permute(x, perm=[1, 0]), s24, b24, axes=[-1]);\n  output y;\n", "layernorm", 1},
        /* ... unless its producer can write the permuted layout (relu does) */
        {"  y = layernorm(permute(relu(x), perm=[1, 0]), s24, b24, axes=[-1]);\n  output y;\n", "relaid", 0},
        /* a packed reshape is the layout layernorm had anyway */
        {"  y = layernorm(reshape(relu(x), dims=[192, 64]), s64, b64, axes=[-1]);\n  output y;\n", "packed", 0},
        /* broadcast into a pointwise op: stride 0 */
        {"  b = broadcast(relu(c), dims=[24, 512]);\n  y = x + b;\n  output y;\n", "broadcast", 0},
        /* a matmul operand with no contiguous dim in its last two stays a copy */
        {"  y = matmul(slice(relu(x), axis=1, step=2, end=48), relu(w));\n  output y;\n", "matmul", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[2048];
        snprintf(text, sizeof text,
                 "dnn 1;\ngraph g(seed=1) {\n  input x: f32[24, 512];\n  input c: f32[1, 512];\n"
                 "  input w: f32[24, 16];\n  weight s24: f32[24] = fill(1.0);\n  weight b24: f32[24] = fill(0.0);\n"
                 "  weight s64: f32[64] = fill(1.0);\n  weight b64: f32[64] = fill(0.0);\n%s}\n",
                 cases[i].body);
        fixture f;
        if (!fixture_setup(&f, text))
            continue;
        int copies = 0;
        for (int k = 0; k < f.g->nn; k++)
            copies += (strcmp(f.g->n[k].op, "permute") == 0 ||
                                                              strcmp(f.g->n[k].op, "slice") == 0 ||
                                                              strcmp(f.g->n[k].op, "reshape") == 0 ||
                                                              strcmp(f.g->n[k].op, "broadcast") == 0);
        CHECK_EQ(copies, cases[i].copies, "case %s", cases[i].why);
        fixture_teardown(&f);
    }
}

/* A pointwise group never reads a view of what it writes itself (one kernel
 * would read elements other threads have not stored yet). */
static void test_no_fusion_through_view(void)
{
    const char *text = "dnn 1;\ngraph g(seed=1) {\n  input x: f32[64, 64];\n"
                       "  a = relu(x);\n  b = permute(a, perm=[1, 0]);\n  y = a + b;\n  output y;\n}\n";
    fixture f;
    if (!fixture_setup(&f, text))
        return;
    const ggraph *g = f.g;
    int a = fixture_tensor(g, "a"), b = fixture_tensor(g, "b");
    CHECK(g->t[b].view_of == a, "b is a view of a");
    CHECK_EQ(f.pl->nparts, 2, "relu and add stay apart");
    CHECK(f.pl->materialized[a]);
    if (f.pl->nparts == 2)
        CHECK(f.pl->part_of[g->t[a].producer] == 0, "relu runs first");
    fixture_teardown(&f);
}

/* A split whose piece feeds layernorm keeps that piece a copy; the others are views. */
static void test_partial_split(void)
{
    const char *text = "dnn 1;\ngraph g(seed=1) {\n  input x: f32[16, 128];\n"
                       "  weight s: f32[64] = fill(1.0);\n  weight b: f32[64] = fill(0.0);\n"
                       "  p, q = split(relu(x), axis=1, parts=2);\n  y = layernorm(p, s, b, axes=[-1]);\n"
                       "  z = q * 2.0;\n  output y, z;\n}\n";
    fixture f;
    if (!fixture_setup(&f, text))
        return;
    const ggraph *g = f.g;
    int p = fixture_tensor(g, "p"), q = fixture_tensor(g, "q");
    CHECK_EQ(count_op(f.pl, "split"), 1);
    CHECK(g->t[p].view_of < 0 && g->t[p].producer >= 0, "p is written by the split");
    if (g->t[p].producer >= 0) /* q views the split's input from element 64 on */
        check_strides(g, "q", 2, (int64_t[]){128, 1}, 64, g->n[g->t[p].producer].in[0]);
    CHECK(g->t[q].producer < 0, "q is a view, not written");
    fixture_teardown(&f);
}

int main(void)
{
    test_attention();
    test_partial_split();
    test_kept_copies();
    test_no_fusion_through_view();
    return test_summary("test_gpu_views");
}
#else
int main(void)
{
    puts("test_gpu_views: built without CUDA, nothing to test");
    return 0;
}
#endif
