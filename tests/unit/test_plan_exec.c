/* test_plan_exec.c — plan once, execute many, through the public header only:
 * tensor and partition queries, the variant pack's errors, outputs equal to
 * the reference, the same bits after save/load, concurrent execution from
 * several threads, and (CUDA) CUDA-graph capture.
 *
 * The backend comes from $XDNN_TEST_BACKEND (cpu, the default, or cuda).
 * On cuda, every output is also compared with the CPU backend's at the
 * tolerance of f32 GEMMs (METHOD.md: 1e-4 relative), and the threads use their
 * own streams and workspaces.  Without a GPU, the cuda backend must refuse
 * cleanly, which is checked too. */
#include "xdnn.h"

#include "test_util.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if XDNN_HAVE_CUDA
#include <cuda_runtime.h>
#endif

/* matmul + bias + gelu feeding a second matmul and a softmax: fused
 * partitions, a materialized intermediate (workspace), two outputs. */
static const char graph_text[] = "dnn 1;\n"
                                 "param T = 37;\n"
                                 "graph mlp(io=f32, seed=11) {\n"
                                 "  input x: f32[T, 24];\n"
                                 "  weight w1: f32[24, 40] = randn(std=0.3);\n"
                                 "  weight b1: f32[40] = uniform(lo=-0.5, hi=0.5);\n"
                                 "  weight w2: f32[40, 19] = randn(std=0.3);\n"
                                 "  h = gelu(matmul(x, w1) + b1);\n"
                                 "  z = softmax(matmul(h, w2), axis=1);\n"
                                 "  output h;\n"
                                 "  output z;\n"
                                 "}\n";

enum { MAXT = 16, THREADS = 4, REPEATS = 5 };

typedef struct buffers {
    size_t n;
    xdnn_tensor_info info[MAXT];
    void *host[MAXT];      /* host copy (inputs filled, outputs read back) */
    void *ptr[MAXT];       /* what execute is given: host or device */
    void *ws;
} buffers;

static bool on_cuda(const xdnn_plan_t *p) { return xdnn_plan_backend(p) == XDNN_BACKEND_CUDA; }

static void *dev_alloc(const xdnn_plan_t *p, size_t bytes)
{
#if XDNN_HAVE_CUDA
    if (on_cuda(p)) {
        void *q = NULL;
        return cudaMalloc(&q, bytes ? bytes : 1) == cudaSuccess ? q : NULL;
    }
#endif
    return malloc(bytes ? bytes : 1);
}

static void dev_free(const xdnn_plan_t *p, void *q)
{
#if XDNN_HAVE_CUDA
    if (on_cuda(p)) {
        cudaFree(q);
        return;
    }
#endif
    free(q);
}

static void copy(const xdnn_plan_t *p, void *dst, const void *src, size_t n, bool to_dev)
{
#if XDNN_HAVE_CUDA
    if (on_cuda(p)) {
        cudaMemcpy(dst, src, n, to_dev ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost);
        return;
    }
#endif
    (void)to_dev;
    memcpy(dst, src, n);
}

/* Allocate every tensor, fill inputs from the graph's initializers, poison outputs (NaN bytes). */
static bool buffers_make(const xdnn_plan_t *p, buffers *b)
{
    memset(b, 0, sizeof *b);
    xdnn_diags_t *d = xdnn_diags_create();
    b->n = xdnn_plan_tensor_count(p);
    bool ok = b->n > 0 && b->n <= MAXT;
    for (size_t i = 0; ok && i < b->n; i++) {
        xdnn_tensor_info *t = &b->info[i];
        ok = xdnn_plan_tensor(p, i, t) == XDNN_OK && (b->host[i] = malloc(t->bytes)) && (b->ptr[i] = dev_alloc(p, t->bytes));
        if (!ok)
            break;
        if (t->is_output)
            memset(b->host[i], 0xff, t->bytes);
        else
            ok = xdnn_plan_fill_tensor(p, t->name, b->host[i], t->bytes, NULL, d) == XDNN_OK;
        copy(p, b->ptr[i], b->host[i], t->bytes, true);
    }
    size_t ws = xdnn_plan_workspace_size(p);
    if (ok && ws)
        ok = (b->ws = dev_alloc(p, ws)) != NULL;
    xdnn_diags_print(d, stderr);
    xdnn_diags_destroy(d);
    return ok;
}

static void buffers_free(const xdnn_plan_t *p, buffers *b)
{
    for (size_t i = 0; i < b->n; i++) {
        free(b->host[i]);
        if (b->ptr[i])
            dev_free(p, b->ptr[i]);
    }
    if (b->ws)
        dev_free(p, b->ws);
}

static void bind_all(const buffers *b, xdnn_tensor_binding *out)
{
    for (size_t i = 0; i < b->n; i++)
        out[i] = (xdnn_tensor_binding){.name = b->info[i].name, .id = -1, .ptr = b->ptr[i]};
}

static xdnn_status run(const xdnn_plan_t *p, buffers *b, void *stream)
{
    xdnn_tensor_binding bind[MAXT];
    bind_all(b, bind);
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_status s = xdnn_plan_execute(p, bind, b->n, b->ws, stream, d);
#if XDNN_HAVE_CUDA
    if (s == XDNN_OK && on_cuda(p) && cudaStreamSynchronize((cudaStream_t)stream) != cudaSuccess)
        s = XDNN_ERR_DEVICE;
#endif
    for (size_t i = 0; s == XDNN_OK && i < b->n; i++)
        if (b->info[i].is_output)
            copy(p, b->host[i], b->ptr[i], b->info[i].bytes, false);
    xdnn_diags_print(d, stderr);
    xdnn_diags_destroy(d);
    return s;
}

/* Every output element finite (the poison was overwritten). */
static bool outputs_written(const buffers *b)
{
    for (size_t i = 0; i < b->n; i++) {
        if (!b->info[i].is_output)
            continue;
        const float *v = b->host[i];
        for (size_t k = 0; k < b->info[i].bytes / sizeof *v; k++)
            if (!isfinite(v[k]))
                return false;
    }
    return true;
}

static bool same_bits(const buffers *a, const buffers *b)
{
    for (size_t i = 0; i < a->n; i++)
        if (a->info[i].is_output && memcmp(a->host[i], b->host[i], a->info[i].bytes) != 0)
            return false;
    return true;
}

/* ---------------------------------------------------------------- threads */

typedef struct worker {
    const xdnn_plan_t *p;
    const buffers *want;
    bool ok;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    buffers b;
    w->ok = buffers_make(w->p, &b);
    void *stream = NULL;
#if XDNN_HAVE_CUDA
    if (on_cuda(w->p))
        w->ok = w->ok && cudaStreamCreateWithFlags((cudaStream_t *)&stream, cudaStreamNonBlocking) == cudaSuccess;
#endif
    for (int r = 0; w->ok && r < REPEATS; r++)
        w->ok = run(w->p, &b, stream) == XDNN_OK && same_bits(&b, w->want);
#if XDNN_HAVE_CUDA
    if (stream)
        cudaStreamDestroy((cudaStream_t)stream);
#endif
    buffers_free(w->p, &b);
    return NULL;
}

/* ---------------------------------------------------------------- checks */

/* A virtual tensor that the graph's own `check` observes is kept: a plan
 * lists it (it can be bound and read after execute), on the CPU and for a
 * described GPU, where fusion would otherwise leave it unwritten (it is
 * reported as an output: readable after execute). */
static void check_checked_tensor_kept(xdnn_diags_t *d)
{
    static const char text[] = "dnn 1;\ngraph g(io=f32, seed=2) {\n  input x: f32[3, 5];\n"
                               "  s = reduce(softmax(x, axis=1), op=\"sum\", axes=[1]);\n  check s, fill(1), atol=1e-6;\n"
                               "  y = exp(x) * 2;\n  output y;\n}\n";
    xdnn_module_t *m = NULL;
    CHECK(xdnn_module_parse("checked.dnn", text, strlen(text), false, d, &m) == XDNN_OK);
    xdnn_graph_t *g = m ? xdnn_module_find_graph(m, NULL) : NULL;
    CHECK(g && xdnn_graph_bind(g, NULL, 0, d) == XDNN_OK);
    static const char *const models[] = {NULL, "h100"};
#if XDNN_HAVE_CUDA
    const int nmodels = 2;
#else
    const int nmodels = 1; /* a described GPU is planned by the CUDA build only */
#endif
    for (int i = 0; g && i < nmodels; i++) {
        xdnn_plan_options o;
        xdnn_plan_options_init(&o);
        o.backend = models[i] ? XDNN_BACKEND_AUTO : XDNN_BACKEND_CPU;
        o.device_model = models[i];
        xdnn_plan_t *p = NULL;
        xdnn_tensor_info t;
        CHECK(xdnn_plan_build(g, &o, d, &p) == XDNN_OK && p, "plan %s", models[i] ? models[i] : "cpu");
        CHECK(p && xdnn_plan_find_tensor(p, "s", &t) == XDNN_OK && t.is_output && t.dims[0] == 3,
              "checked tensor s in the %s plan", models[i] ? models[i] : "cpu");
        xdnn_plan_destroy(p);
    }
    xdnn_module_destroy(m);
}

static void check_queries(const xdnn_plan_t *p)
{
    CHECK_EQ(xdnn_plan_tensor_count(p), 6);
    xdnn_tensor_info t;
    CHECK(xdnn_plan_find_tensor(p, "x", &t) == XDNN_OK && t.kind == XDNN_TENSOR_INPUT && t.rank == 2 &&
          t.dims[0] == 37 && t.dims[1] == 24 && t.strides[0] == 24 && t.strides[1] == 1 && t.bytes == 37 * 24 * 4);
    CHECK(xdnn_plan_find_tensor(p, "z", &t) == XDNN_OK && t.is_output && t.dtype == XDNN_F32 && t.dims[1] == 19);
    CHECK(xdnn_plan_find_tensor(p, "nope", &t) == XDNN_ERR_SEMANTIC);
    size_t np = xdnn_plan_partition_count(p);
    CHECK(np >= 1);
    for (size_t i = 0; i < np; i++) {
        xdnn_partition_info pi;
        CHECK(xdnn_plan_partition(p, i, &pi) == XDNN_OK && pi.engine[0] && pi.ncandidates >= 1, "partition %zu", i);
        int chosen = 0;
        for (size_t k = 0; k < pi.ncandidates; k++) {
            xdnn_candidate_info c;
            CHECK(xdnn_plan_candidate(p, i, k, &c) == XDNN_OK);
            chosen += c.chosen;
            if (c.chosen)
                CHECK_STR(c.engine, pi.engine);
            if (!c.supported)
                CHECK(c.reason[0] != '\0', "engine %s declines %s without a reason", c.engine, pi.name);
        }
        CHECK_EQ(chosen, 1, "partition %s", pi.name);
    }
    xdnn_partition_info pi;
    CHECK(xdnn_plan_partition(p, np, &pi) == XDNN_ERR_USAGE);
}

/* Measured selection records what it measured: every supported candidate of
 * every partition has its time, the chosen one the partition's tuned_ms; the
 * cost model's choice (FAST) has none.  The tune cache is off, so nothing is
 * read from or left in it. */
static void check_measured(xdnn_graph_t *g, xdnn_backend backend)
{
    for (int measured = 0; measured < 2; measured++) {
        xdnn_plan_options o;
        xdnn_plan_options_init(&o);
        CHECK(o.tune_warmup == 1 && o.tune_iters == 5);
        o.backend = backend;
        o.heuristic = measured ? XDNN_HEUR_MEASURED : XDNN_HEUR_FAST;
        o.tune_iters = 2;
        xdnn_diags_t *d = xdnn_diags_create();
        xdnn_plan_t *p = NULL;
        CHECK(xdnn_plan_build(g, &o, d, &p) == XDNN_OK && p, "heuristic %d", measured);
        xdnn_diags_print(d, stderr);
        xdnn_diags_destroy(d);
        for (size_t i = 0; p && i < xdnn_plan_partition_count(p); i++) {
            xdnn_partition_info pi;
            CHECK(xdnn_plan_partition(p, i, &pi) == XDNN_OK && pi.ncandidates >= 1 && !pi.from_cache);
            CHECK(measured ? pi.tuned_ms >= 0 : pi.tuned_ms == -1, "%s: tuned_ms %g", pi.name, pi.tuned_ms);
            for (size_t k = 0; k < pi.ncandidates; k++) {
                xdnn_candidate_info c;
                CHECK(xdnn_plan_candidate(p, i, k, &c) == XDNN_OK);
                if (!measured || !c.supported)
                    CHECK(c.measured_ms == -1, "%s on %s: measured_ms %g", c.engine, pi.name, c.measured_ms);
                else
                    CHECK(c.measured_ms >= 0, "%s on %s was not timed", c.engine, pi.name);
                if (measured && c.chosen)
                    CHECK(c.measured_ms == pi.tuned_ms, "%s: chosen %g ms, tuned %g ms", pi.name, c.measured_ms,
                          pi.tuned_ms);
            }
        }
        xdnn_plan_destroy(p);
    }
}

/* The variant pack's errors: each names the tensor and changes nothing. */
static void check_binding_errors(const xdnn_plan_t *p, buffers *b)
{
    xdnn_tensor_binding bind[MAXT + 1];
    bind_all(b, bind);
    xdnn_diags_t *d = xdnn_diags_create();
    CHECK(xdnn_plan_execute(p, bind, b->n - 1, b->ws, NULL, d) == XDNN_ERR_USAGE);
    CHECK(xdnn_diags_count(d) && strstr(xdnn_diags_get(d, 0)->message, "is not bound"));
    xdnn_diags_destroy(d);

    d = xdnn_diags_create();
    bind[b->n] = bind[0];
    CHECK(xdnn_plan_execute(p, bind, b->n + 1, b->ws, NULL, d) == XDNN_ERR_USAGE);
    CHECK(xdnn_diags_count(d) && strstr(xdnn_diags_get(d, 0)->message, "bound twice"));
    xdnn_diags_destroy(d);

    d = xdnn_diags_create();
    xdnn_tensor_binding saved = bind[1];
    bind[1].name = "no_such_tensor";
    CHECK(xdnn_plan_execute(p, bind, b->n, b->ws, NULL, d) == XDNN_ERR_USAGE);
    CHECK(xdnn_diags_count(d) && strstr(xdnn_diags_get(d, 0)->message, "no input, weight or output 'no_such_tensor'"));
    bind[1] = saved;
    xdnn_diags_destroy(d);

    d = xdnn_diags_create(); /* by id */
    for (size_t i = 0; i < b->n; i++)
        bind[i] = (xdnn_tensor_binding){.name = NULL, .id = (int)i, .ptr = b->ptr[i]};
    bind[0].id = 99;
    CHECK(xdnn_plan_execute(p, bind, b->n, b->ws, NULL, d) == XDNN_ERR_USAGE);
    xdnn_diags_destroy(d);
    CHECK(xdnn_plan_execute(NULL, bind, b->n, b->ws, NULL, NULL) == XDNN_ERR_USAGE);

    if (on_cuda(p)) { /* a pointer off XDNN_CUDA_ALIGNMENT, then a workspace off 256: refused before any launch */
        bind_all(b, bind);
        bind[0].ptr = (char *)bind[0].ptr + 2;
        d = xdnn_diags_create();
        CHECK(xdnn_plan_execute(p, bind, b->n, b->ws, NULL, d) == XDNN_ERR_USAGE);
        CHECK(xdnn_diags_count(d) && strstr(xdnn_diags_get(d, 0)->message, "not 16-byte aligned"));
        xdnn_diags_destroy(d);
        bind[0].ptr = (char *)bind[0].ptr - 2;
        if (b->ws) {
            d = xdnn_diags_create();
            CHECK(xdnn_plan_execute(p, bind, b->n, (char *)b->ws + 16, NULL, d) == XDNN_ERR_USAGE);
            CHECK(xdnn_diags_count(d) && strstr(xdnn_diags_get(d, 0)->message, "not 256-byte aligned"));
            xdnn_diags_destroy(d);
        }
    }
}

int main(void)
{
    const char *want_backend = getenv("XDNN_TEST_BACKEND");
    bool cuda = want_backend && strcmp(want_backend, "cuda") == 0;
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m = NULL;
    CHECK(xdnn_module_parse("mlp.dnn", graph_text, strlen(graph_text), false, d, &m) == XDNN_OK);
    xdnn_graph_t *g = xdnn_module_find_graph(m, NULL);
    CHECK(g && xdnn_graph_bind(g, NULL, 0, d) == XDNN_OK);

    xdnn_plan_options o;
    xdnn_plan_options_init(&o);
    CHECK(o.struct_size == sizeof o && o.backend == XDNN_BACKEND_AUTO && o.tf32 == -1);
    xdnn_plan_t *p = NULL;
    xdnn_plan_options bad = o;
    bad.struct_size = 0;
    CHECK(xdnn_plan_build(g, &bad, d, &p) == XDNN_ERR_USAGE && !p);
    xdnn_diags_destroy(d);
    d = xdnn_diags_create();

    char why[256];
    bool have_gpu = xdnn_backend_available(XDNN_BACKEND_CUDA, why, sizeof why);
    CHECK(xdnn_backend_available(XDNN_BACKEND_CPU, NULL, 0));
    if (!have_gpu) {
        /* no GPU: a clear refusal, naming the backend and the reason */
        o.backend = XDNN_BACKEND_CUDA;
        CHECK(xdnn_plan_build(g, &o, d, &p) == XDNN_ERR_DEVICE && !p);
        CHECK(xdnn_diags_count(d) && strstr(xdnn_diags_get(d, 0)->message, "the cuda backend cannot run here"));
        xdnn_diags_destroy(d);
        d = xdnn_diags_create();
        CHECK(!cuda, "XDNN_TEST_BACKEND=cuda but no GPU: %s", why);
    }

    /* a described GPU: selection on the host, queryable, not executable */
    xdnn_plan_options mo = o;
    mo.backend = XDNN_BACKEND_AUTO;
    mo.device_model = "h100";
    xdnn_plan_t *mp = NULL;
    xdnn_status ms = xdnn_plan_build(g, &mo, d, &mp);
#if XDNN_HAVE_CUDA
    CHECK(ms == XDNN_OK && mp && !xdnn_plan_executable(mp) && xdnn_plan_backend(mp) == XDNN_BACKEND_CUDA);
    CHECK(mp && strcmp(xdnn_plan_device(mp), "gpu; model=h100") == 0);
    if (mp) {
        check_queries(mp);
        xdnn_diags_t *e = xdnn_diags_create();
        CHECK(xdnn_plan_execute(mp, NULL, 0, NULL, NULL, e) == XDNN_ERR_USAGE);
        CHECK(xdnn_diags_count(e) && strstr(xdnn_diags_get(e, 0)->message, "cannot run here"));
        xdnn_diags_destroy(e);
    }
#else
    CHECK(ms == XDNN_ERR_DEVICE && !mp);
#endif
    xdnn_plan_destroy(mp);
    check_checked_tensor_kept(d);
    mo.device_model = "z80";
    CHECK(xdnn_plan_build(g, &mo, d, &mp) != XDNN_OK && !mp);
    xdnn_diags_destroy(d);
    d = xdnn_diags_create();

    const char *cache = getenv("XDNN_CACHE_DIR");
    char *saved = cache ? strdup(cache) : NULL;
    setenv("XDNN_CACHE_DIR", "off", 1); /* measured choices are neither read nor stored */
    check_measured(g, cuda ? XDNN_BACKEND_CUDA : XDNN_BACKEND_CPU);
    if (saved)
        setenv("XDNN_CACHE_DIR", saved, 1);
    else
        unsetenv("XDNN_CACHE_DIR");
    free(saved);

    /* the reference: a CPU plan */
    o.backend = XDNN_BACKEND_CPU;
    xdnn_plan_t *ref = NULL;
    CHECK(xdnn_plan_build(g, &o, d, &ref) == XDNN_OK && ref);
    buffers rb;
    CHECK(ref && buffers_make(ref, &rb) && run(ref, &rb, NULL) == XDNN_OK && outputs_written(&rb));

    o.backend = cuda ? XDNN_BACKEND_CUDA : XDNN_BACKEND_CPU;
    o.tf32 = 0; /* exact f32 GEMMs: compared with the reference at 1e-4 */
    CHECK(xdnn_plan_build(g, &o, d, &p) == XDNN_OK && p);
    xdnn_diags_print(d, stderr);
    if (!p || !ref)
        return test_summary("test_plan_exec");
    CHECK(xdnn_plan_backend(p) == o.backend);
    check_queries(p);

    buffers b;
    CHECK(buffers_make(p, &b));
    check_binding_errors(p, &b);
    CHECK(run(p, &b, NULL) == XDNN_OK && outputs_written(&b));
    for (size_t i = 0; i < b.n; i++) {
        if (!b.info[i].is_output)
            continue;
        const float *got = b.host[i], *want = rb.host[i];
        size_t n = b.info[i].bytes / sizeof *got, bad_at = n;
        for (size_t k = 0; k < n && bad_at == n; k++)
            if (!(fabsf(got[k] - want[k]) <= 1e-5f + 1e-4f * fabsf(want[k])))
                bad_at = k;
        CHECK(bad_at == n, "%s[%zu]: got %g, want %g", b.info[i].name, bad_at, bad_at < n ? (double)got[bad_at] : 0.0,
              bad_at < n ? (double)want[bad_at] : 0.0);
    }

    /* partition by partition after a full execute: the same bits on CUDA; the
     * CPU runs whole plans only */
    {
        xdnn_tensor_binding bind[MAXT];
        bind_all(&b, bind);
        size_t np = xdnn_plan_partition_count(p);
        xdnn_diags_t *e = xdnn_diags_create();
        CHECK(xdnn_plan_execute_partitions(p, np, 1, bind, b.n, b.ws, NULL, e) == XDNN_ERR_USAGE);
        CHECK(xdnn_plan_execute_partitions(p, 0, np, bind, b.n, b.ws, NULL, e) == XDNN_OK);
        xdnn_status one = XDNN_OK;
        for (size_t i = 0; i < np && one == XDNN_OK; i++)
            one = xdnn_plan_execute_partitions(p, i, 1, bind, b.n, b.ws, NULL, e);
        CHECK(on_cuda(p) ? one == XDNN_OK : one == XDNN_ERR_UNSUPPORTED || np == 1);
        xdnn_diags_destroy(e);
        buffers once;
        CHECK(buffers_make(p, &once));
        for (size_t i = 0; i < b.n; i++)
            if (b.info[i].is_output)
                copy(p, once.host[i], b.ptr[i], b.info[i].bytes, false);
        CHECK(same_bits(&b, &once));
        buffers_free(p, &once);
        xdnn_plan_stats st;
        CHECK(xdnn_plan_get_stats(p, &st) == XDNN_OK && st.build_ms > 0 && st.compile_ms >= 0);
    }

    /* executing again gives the same bits; so does a plan loaded from bytes */
    buffers again;
    CHECK(buffers_make(p, &again) && run(p, &again, NULL) == XDNN_OK && same_bits(&b, &again));
    buffers_free(p, &again);
    void *bytes = NULL;
    size_t len = 0;
    CHECK(xdnn_plan_serialize(p, &bytes, &len, d) == XDNN_OK);
    xdnn_plan_t *q = NULL;
    CHECK(xdnn_plan_deserialize(bytes, len, 0, d, &q) == XDNN_OK && q);
    /* the same from a file; a missing file is an I/O error naming it */
    char path[] = "/tmp/xdnn-plan-exec-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    CHECK(f && fwrite(bytes, 1, len, f) == len);
    if (f)
        fclose(f);
    xdnn_plan_t *fq = NULL;
    CHECK(xdnn_plan_load(path, 0, d, &fq) == XDNN_OK && fq && xdnn_plan_executable(fq));
    CHECK(fq && xdnn_plan_partition_count(fq) == xdnn_plan_partition_count(p));
    xdnn_plan_destroy(fq);
    remove(path);
    xdnn_diags_t *e = xdnn_diags_create();
    CHECK(xdnn_plan_load(path, 0, e, &fq) == XDNN_ERR_IO && !fq);
    CHECK(xdnn_diags_count(e) && xdnn_diags_get(e, 0)->file && strcmp(xdnn_diags_get(e, 0)->file, path) == 0);
    xdnn_diags_destroy(e);
    free(bytes);
    if (q) {
        CHECK(xdnn_plan_load_ms(q) >= 0 && xdnn_plan_backend(q) == o.backend);
        CHECK_EQ(xdnn_plan_partition_count(q), xdnn_plan_partition_count(p));
        for (size_t i = 0; i < xdnn_plan_partition_count(q); i++) {
            xdnn_partition_info a, c;
            CHECK(xdnn_plan_partition(p, i, &a) == XDNN_OK && xdnn_plan_partition(q, i, &c) == XDNN_OK &&
                  strcmp(a.engine, c.engine) == 0 && strcmp(a.knobs, c.knobs) == 0 && strcmp(a.name, c.name) == 0 &&
                  a.ncandidates == c.ncandidates);
        }
        buffers lb;
        CHECK(buffers_make(q, &lb) && run(q, &lb, NULL) == XDNN_OK && same_bits(&b, &lb));
        buffers_free(q, &lb);
        xdnn_plan_destroy(q);
    }

    /* one plan, several threads at once, each with its own buffers */
    pthread_t th[THREADS];
    worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker){.p = p, .want = &b};
        CHECK(pthread_create(&th[i], NULL, work, &w[i]) == 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        CHECK(w[i].ok, "thread %d", i);
    }

#if XDNN_HAVE_CUDA
    if (on_cuda(p)) {
        /* an execute captured into a CUDA graph replays to the same bits */
        buffers cb;
        CHECK(buffers_make(p, &cb));
        cudaStream_t s;
        cudaGraph_t graph = NULL;
        cudaGraphExec_t exec = NULL;
        xdnn_tensor_binding bind[MAXT];
        bind_all(&cb, bind);
        CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
        CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
        CHECK(xdnn_plan_execute(p, bind, cb.n, cb.ws, s, d) == XDNN_OK);
        CHECK(cudaStreamEndCapture(s, &graph) == cudaSuccess && graph);
        CHECK(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
        for (int r = 0; r < 3; r++)
            CHECK(cudaGraphLaunch(exec, s) == cudaSuccess);
        CHECK(cudaStreamSynchronize(s) == cudaSuccess);
        for (size_t i = 0; i < cb.n; i++)
            if (cb.info[i].is_output)
                copy(p, cb.host[i], cb.ptr[i], cb.info[i].bytes, false);
        CHECK(same_bits(&b, &cb), "CUDA-graph replay differs from a direct execute");
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
        cudaStreamDestroy(s);
        buffers_free(p, &cb);
    }
#endif
    xdnn_diags_print(d, stderr);
    buffers_free(p, &b);
    buffers_free(ref, &rb);
    xdnn_plan_destroy(p);
    xdnn_plan_destroy(ref);
    xdnn_module_destroy(m);
    xdnn_diags_destroy(d);
    return test_summary(cuda ? "test_plan_exec (cuda)" : "test_plan_exec (cpu)");
}
