/* test_plan_options.c — the plan options that change what executes do,
 * through the public header only:
 *
 *   const_weights (issue 12.3): kept in the plan's bytes; on CUDA the weight
 *   casts run once (xdnn_plan_constant_partitions), results equal a plan
 *   without the option, and a weight changed after the first execute is NOT
 *   seen (while the default plan, and the CPU reference, see it);
 *
 *   dynamic params (issue 14.5): a plan built with T=1:512 resized to other
 *   values gives the outputs of a plan built for each value (bit for bit on
 *   the CPU; at f32 GEMM tolerance on CUDA, where a fresh plan may choose
 *   other engines), a derived param follows, the resized plan saves and loads
 *   at its own size, and bad ranges and values are refused.
 *
 * The backend comes from $XDNN_TEST_BACKEND (cpu, the default, or cuda), as
 * test_plan_exec.c. */
#include "xdnn.h"

#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if XDNN_HAVE_CUDA
#include <cuda_runtime.h>
#endif

/* Two bf16 weights meeting f32 activations (the matmuls cast them: the casts
 * are the plan-time constants), and a derived param T2 that reshapes by T. */
static const char graph_text[] = "dnn 1;\n"
                                 "param T = 37;\n"
                                 "param T2 = T * 2;\n"
                                 "graph g(io=f32, seed=5) {\n"
                                 "  input x: f32[T, 24];\n"
                                 "  weight w1: bf16[24, 40] = randn(std=0.3);\n"
                                 "  weight b1: f32[40] = uniform(lo=-0.5, hi=0.5);\n"
                                 "  weight w2: bf16[20, 16] = randn(std=0.3);\n"
                                 "  h = gelu(matmul(x, w1) + b1);\n"
                                 "  r = reshape(h, dims=[T2, 20]);\n"
                                 "  z = softmax(matmul(r, w2), axis=1);\n"
                                 "  output h;\n"
                                 "  output z;\n"
                                 "}\n";

enum { MAXT = 8 };

typedef struct bufs {
    size_t n;
    xdnn_tensor_info info[MAXT];
    void *host[MAXT], *ptr[MAXT], *ws;
    bool cuda;
} bufs;

static void *alloc_on(bool cuda, size_t n)
{
#if XDNN_HAVE_CUDA
    void *q = NULL;
    if (cuda)
        return cudaMalloc(&q, n ? n : 1) == cudaSuccess ? q : NULL;
#endif
    (void)cuda;
    return calloc(1, n ? n : 1);
}

static void free_on(bool cuda, void *q)
{
#if XDNN_HAVE_CUDA
    if (cuda) {
        cudaFree(q);
        return;
    }
#endif
    (void)cuda;
    free(q);
}

static void move(bool cuda, void *dst, const void *src, size_t n, bool to_dev)
{
#if XDNN_HAVE_CUDA
    if (cuda) {
        cudaMemcpy(dst, src, n, to_dev ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost);
        return;
    }
#endif
    (void)cuda;
    (void)to_dev;
    memcpy(dst, src, n);
}

/* Every tensor allocated, inputs and weights from the graph's initializers. */
static bool bufs_make(const xdnn_plan_t *p, bufs *b)
{
    memset(b, 0, sizeof *b);
    b->cuda = xdnn_plan_backend(p) == XDNN_BACKEND_CUDA;
    b->n = xdnn_plan_tensor_count(p);
    xdnn_diags_t *d = xdnn_diags_create();
    bool ok = b->n > 0 && b->n <= MAXT;
    for (size_t i = 0; ok && i < b->n; i++) {
        xdnn_tensor_info *t = &b->info[i];
        ok = xdnn_plan_tensor(p, i, t) == XDNN_OK && (b->host[i] = calloc(1, t->bytes)) &&
             (b->ptr[i] = alloc_on(b->cuda, t->bytes));
        if (ok && !t->is_output)
            ok = xdnn_plan_fill_tensor(p, t->name, b->host[i], t->bytes, NULL, d) == XDNN_OK;
        if (ok)
            move(b->cuda, b->ptr[i], b->host[i], t->bytes, true);
    }
    if (ok && xdnn_plan_workspace_size(p))
        ok = (b->ws = alloc_on(b->cuda, xdnn_plan_workspace_size(p))) != NULL;
    xdnn_diags_print(d, stderr);
    xdnn_diags_destroy(d);
    return ok;
}

static void bufs_free(bufs *b)
{
    for (size_t i = 0; i < b->n; i++) {
        free(b->host[i]);
        if (b->ptr[i])
            free_on(b->cuda, b->ptr[i]);
    }
    if (b->ws)
        free_on(b->cuda, b->ws);
}

static int find(const bufs *b, const char *name)
{
    for (size_t i = 0; i < b->n; i++)
        if (strcmp(b->info[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* Execute, then read the outputs back into host[]. */
static bool run(const xdnn_plan_t *p, bufs *b)
{
    xdnn_tensor_binding bind[MAXT];
    for (size_t i = 0; i < b->n; i++)
        bind[i] = (xdnn_tensor_binding){.name = b->info[i].name, .id = -1, .ptr = b->ptr[i]};
    xdnn_diags_t *d = xdnn_diags_create();
    bool ok = xdnn_plan_execute(p, bind, b->n, b->ws, NULL, d) == XDNN_OK;
#if XDNN_HAVE_CUDA
    ok = ok && (!b->cuda || cudaDeviceSynchronize() == cudaSuccess);
#endif
    for (size_t i = 0; ok && i < b->n; i++)
        if (b->info[i].is_output)
            move(b->cuda, b->host[i], b->ptr[i], b->info[i].bytes, false);
    xdnn_diags_print(d, stderr);
    xdnn_diags_destroy(d);
    return ok;
}

/* Largest |a - b| / (|b| + 1e-3) over output `name` of two buffer sets (inf: shapes differ). */
static double out_diff(const bufs *a, const bufs *b, const char *name)
{
    int i = find(a, name), j = find(b, name);
    if (i < 0 || j < 0 || a->info[i].bytes != b->info[j].bytes)
        return INFINITY;
    const float *x = a->host[i], *y = b->host[j];
    double worst = 0;
    for (size_t k = 0; k < a->info[i].bytes / sizeof *x; k++) {
        double e = fabs((double)x[k] - (double)y[k]) / (fabs((double)y[k]) + 1e-3);
        if (!(e <= worst))
            worst = e; /* NaN too */
    }
    return worst;
}

static xdnn_backend backend_asked(void)
{
    const char *b = getenv("XDNN_TEST_BACKEND");
    return b && strcmp(b, "cuda") == 0 ? XDNN_BACKEND_CUDA : XDNN_BACKEND_CPU;
}

static xdnn_plan_t *build(xdnn_graph_t *g, bool const_weights, const char *const *dyn, size_t ndyn, xdnn_diags_t *d)
{
    xdnn_plan_options o;
    xdnn_plan_options_init(&o);
    o.backend = backend_asked();
    o.const_weights = const_weights;
    o.dynamic = dyn;
    o.ndynamic = ndyn;
    xdnn_plan_t *p = NULL;
    xdnn_status s = xdnn_plan_build(g, &o, d, &p);
    xdnn_diags_print(d, stderr);
    return s == XDNN_OK ? p : NULL;
}

static xdnn_plan_t *round_trip(const xdnn_plan_t *p)
{
    xdnn_diags_t *d = xdnn_diags_create();
    void *bytes = NULL;
    size_t len = 0;
    xdnn_plan_t *q = NULL;
    if (xdnn_plan_serialize(p, &bytes, &len, d) == XDNN_OK)
        xdnn_plan_deserialize(bytes, len, 0, d, &q);
    xdnn_diags_print(d, stderr);
    xdnn_diags_destroy(d);
    free(bytes);
    return q;
}

/* ---------------------------------------------------------------- const_weights */

static void test_const_weights(xdnn_graph_t *g, xdnn_diags_t *d)
{
    bool cuda = backend_asked() == XDNN_BACKEND_CUDA;
    xdnn_plan_t *pd = build(g, false, NULL, 0, d), *pc = build(g, true, NULL, 0, d);
    CHECK(pd && pc, "plans with and without const_weights");
    if (!pd || !pc)
        goto out;
    CHECK(!xdnn_plan_const_weights(pd) && xdnn_plan_const_weights(pc));
    CHECK_EQ(xdnn_plan_constant_partitions(pd), 0);
    /* CUDA: the casts of w1 and w2 run once; the CPU reference runs every node */
    CHECK_EQ(xdnn_plan_constant_partitions(pc), cuda ? 2 : 0);
    xdnn_plan_t *loaded = round_trip(pc), *loaded_default = round_trip(pd);
    CHECK(loaded && xdnn_plan_const_weights(loaded), "const_weights is kept in the plan's bytes");
    CHECK(loaded && xdnn_plan_constant_partitions(loaded) == xdnn_plan_constant_partitions(pc));
    CHECK(loaded_default && !xdnn_plan_const_weights(loaded_default), "and absent when not asked");
    xdnn_plan_destroy(loaded_default);

    bufs bd, bc, bl;
    bool ok = bufs_make(pd, &bd) && bufs_make(pc, &bc) && loaded && bufs_make(loaded, &bl);
    CHECK(ok, "buffers");
    for (int rep = 0; ok && rep < 2; rep++) /* the second execute skips the casts */
        ok = run(pd, &bd) && run(pc, &bc) && run(loaded, &bl);
    CHECK(ok, "executes");
    CHECK(ok && out_diff(&bc, &bd, "z") == 0 && out_diff(&bc, &bd, "h") == 0, "const_weights changes no result");
    CHECK(ok && out_diff(&bl, &bd, "z") == 0, "nor does it after save and load");

    /* the caller changes weight w1 after the first execute */
    int w = find(&bc, "w1");
    CHECK(w >= 0);
    if (ok && w >= 0) {
        bufs *all[] = {&bd, &bc, &bl};
        for (int k = 0; k < 3; k++) {
            unsigned short *v = all[k]->host[w]; /* bf16: flip the sign bit */
            for (size_t i = 0; i < all[k]->info[w].bytes / sizeof *v; i++)
                v[i] ^= 0x8000;
            move(all[k]->cuda, all[k]->ptr[w], all[k]->host[w], all[k]->info[w].bytes, true);
        }
        bufs before;
        memset(&before, 0, sizeof before);
        int h = find(&bc, "h");
        float *kept = malloc(bc.info[h].bytes);
        if (kept)
            memcpy(kept, bc.host[h], bc.info[h].bytes);
        ok = kept && run(pd, &bd) && run(pc, &bc) && run(loaded, &bl);
        CHECK(ok, "executes after the change");
        bool same = ok && memcmp(kept, bc.host[h], bc.info[h].bytes) == 0;
        if (cuda)
            CHECK(same, "CUDA const_weights: the changed weight is not seen (h kept its value)");
        else
            CHECK(!same, "CPU: every node runs, the changed weight is seen");
        CHECK(ok && (out_diff(&bl, &bc, "h") == 0), "the loaded plan behaves the same");
        CHECK(ok && (out_diff(&bd, &bc, "h") == 0) == !cuda, "the default plan sees the change%s",
              cuda ? " (and the const plan does not)" : "");
        free(kept);
    }
    if (pd && pc)
        bufs_free(&bd), bufs_free(&bc);
    if (loaded)
        bufs_free(&bl);
    xdnn_plan_destroy(loaded);
out:
    xdnn_plan_destroy(pd);
    xdnn_plan_destroy(pc);
}

/* ---------------------------------------------------------------- dynamic params */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Print and empty *d (a fresh list: diags only grow). */
static void reset(xdnn_diags_t **d)
{
    xdnn_diags_print(*d, stderr);
    xdnn_diags_destroy(*d);
    *d = xdnn_diags_create();
}

/* s is a usage refusal whose first message holds text; *d is emptied. */
static void expect_refused(xdnn_status s, xdnn_diags_t **d, const char *text)
{
    const xdnn_diag *m = xdnn_diags_count(*d) ? xdnn_diags_get(*d, 0) : NULL;
    CHECK(s == XDNN_ERR_USAGE && m && strstr(m->message, text), "refused with '%s', got %s: %s", text,
          xdnn_status_name(s), m ? m->message : "(no message)");
    xdnn_diags_destroy(*d);
    *d = xdnn_diags_create();
}

static void test_dynamic(xdnn_graph_t *g)
{
    xdnn_diags_t *d = xdnn_diags_create();
    bool cuda = backend_asked() == XDNN_BACKEND_CUDA;
    static const char *const range[] = {"T=1:512"};
    xdnn_plan_t *p = build(g, false, range, 1, d);
    CHECK(p && xdnn_plan_dynamic_count(p) == 1, "a plan with a dynamic range");
    if (!p) {
        xdnn_diags_destroy(d);
        return;
    }
    const char *name;
    int64_t lo, hi;
    CHECK(xdnn_plan_dynamic(p, 0, &name, &lo, &hi) == XDNN_OK && strcmp(name, "T") == 0 && lo == 1 && hi == 512);
    static const char *const sizes[] = {"5", "100", "512", "37"};
    for (int k = 0; k < 4; k++) {
        xdnn_binding v = {"T", sizes[k]};
        xdnn_plan_t *q = NULL, *fresh = NULL;
        double t0 = now_ms();
        xdnn_status s = xdnn_plan_resize(p, &v, 1, d, &q);
        double t_resize = now_ms() - t0;
        CHECK(s == XDNN_OK && q, "resize to T=%s", sizes[k]);
        reset(&d);
        t0 = now_ms();
        bool bound = xdnn_graph_bind(g, &v, 1, d) == XDNN_OK;
        fresh = bound ? build(g, false, NULL, 0, d) : NULL;
        double t_fresh = now_ms() - t0;
        CHECK(fresh, "a plan built for T=%s", sizes[k]);
        xdnn_tensor_info t;
        long long want = atoll(sizes[k]);
        CHECK(q && xdnn_plan_find_tensor(q, "z", &t) == XDNN_OK && t.dims[0] == 2 * want && t.dims[1] == 16,
              "z is [2T, 16] after the resize (the derived param follows)");
        bufs a, b;
        bool ok = q && fresh && bufs_make(q, &a) && bufs_make(fresh, &b) && run(q, &a) && run(fresh, &b);
        CHECK(ok, "both run at T=%s", sizes[k]);
        double tol = cuda ? 1e-4 : 0; /* CPU: the same reference, bit for bit */
        CHECK(ok && out_diff(&a, &b, "z") <= tol && out_diff(&a, &b, "h") <= tol,
              "resized to T=%s: outputs of a plan built for it (z %g, h %g)", sizes[k], out_diff(&a, &b, "z"),
              out_diff(&a, &b, "h"));
        if (k == 1) { /* saved and loaded: the plan is at its own size, still dynamic */
            xdnn_plan_t *r = round_trip(q);
            bufs c;
            CHECK(r && xdnn_plan_dynamic_count(r) == 1 && xdnn_plan_find_tensor(r, "x", &t) == XDNN_OK &&
                      t.dims[0] == want, "a resized plan saves and loads at T=%s", sizes[k]);
            CHECK(r && bufs_make(r, &c) && run(r, &c) && out_diff(&c, &a, "z") == 0, "and runs the same");
            if (r)
                bufs_free(&c);
            xdnn_plan_destroy(r);
        }
        if (ok)
            bufs_free(&a), bufs_free(&b);
        printf("test_plan_options: T=%s: resize %.2f ms, plan from scratch %.2f ms (%s)\n", sizes[k], t_resize,
               t_fresh, cuda ? "cuda" : "cpu");
        xdnn_plan_destroy(q);
        xdnn_plan_destroy(fresh);
    }
    CHECK(xdnn_graph_bind(g, NULL, 0, d) == XDNN_OK);
    /* refusals */
    xdnn_plan_t *q = NULL;
    xdnn_binding bad[] = {{"T", "0"}, {"T", "513"}, {"T", "12x"}, {"T2", "8"}};
    expect_refused(xdnn_plan_resize(p, &bad[0], 1, d, &q), &d, "outside the plan's dynamic range 1:512");
    expect_refused(xdnn_plan_resize(p, &bad[1], 1, d, &q), &d, "T=513 is outside");
    expect_refused(xdnn_plan_resize(p, &bad[2], 1, d, &q), &d, "outside");
    expect_refused(xdnn_plan_resize(p, &bad[3], 1, d, &q), &d, "'T2' is not a dynamic param");
    CHECK(!q, "no plan after a refusal");
    xdnn_plan_t *fixed = build(g, false, NULL, 0, d);
    expect_refused(xdnn_plan_resize(fixed, &bad[0], 1, d, &q), &d, "has no dynamic params");
    xdnn_plan_destroy(fixed);
    xdnn_plan_options o;
    xdnn_plan_options_init(&o);
    o.backend = backend_asked();
    static const char *const wrong[][1] = {{"T=40:50"}, {"T2=1:10"}, {"T=1"}, {"T=9:3"}, {"Q=1:3"}};
    static const char *const why[] = {"bound with T=37, outside 40:50", "'T2' is derived from other params",
                                      "expected P=LO:HI", "expected P=LO:HI", "no integer param named 'Q'"};
    for (int k = 0; k < 5; k++) {
        o.dynamic = wrong[k];
        o.ndynamic = 1;
        xdnn_plan_t *x = NULL;
        expect_refused(xdnn_plan_build(g, &o, d, &x), &d, why[k]);
        CHECK(!x);
    }
    xdnn_plan_destroy(p);
    xdnn_diags_destroy(d);
}

int main(void)
{
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m = NULL;
    CHECK(xdnn_module_parse("options.dnn", graph_text, strlen(graph_text), false, d, &m) == XDNN_OK);
    xdnn_graph_t *g = m ? xdnn_module_find_graph(m, NULL) : NULL;
    CHECK(g && xdnn_graph_bind(g, NULL, 0, d) == XDNN_OK);
    xdnn_diags_print(d, stderr);
    char why[256];
    if (backend_asked() == XDNN_BACKEND_CUDA && !xdnn_backend_available(XDNN_BACKEND_CUDA, why, sizeof why)) {
        CHECK(false, "XDNN_TEST_BACKEND=cuda but no GPU: %s", why);
        g = NULL;
    }
    if (g) {
        test_const_weights(g, d);
        test_dynamic(g);
    }
    xdnn_diags_destroy(d);
    xdnn_module_destroy(m);
    xdnn_release_caches();
    return test_summary("test_plan_options");
}
