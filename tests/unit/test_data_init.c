/* test_data_init.c — initializers (init.c) on tensors built through the C
 * API: random fills match the documented Philox recipe exactly, constants,
 * arange, values, and load() from npy/raw/safetensors with layout= and dtype
 * conversion; errors name the tensor, the initializer and the argument. */
#include "data/data.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[64];
static xdnn_module_t *mod;
static xdnn_graph_t *graph;
static int serial;

/* Declare input `name` with an initializer and fill in the bound fields
 * init_fill reads (as graph_bind would). */
static xtensor *declare(xdnn_dtype dt, int rank, const int64_t *dims, const char *init, const char *layout)
{
    char name[16];
    snprintf(name, sizeof name, "t%d", serial++);
    xdnn_diags_t *d = xdnn_diags_create();
    int ti = xdnn_graph_add_tensor(graph, name, XDNN_TENSOR_INPUT, dt, rank, dims, init, d);
    if (ti < 0) {
        if (xdnn_diags_count(d))
            fprintf(stderr, "declare %s: %s\n", init, xdnn_diags_get(d, 0)->message);
        xdnn_diags_destroy(d);
        return NULL;
    }
    if (layout)
        xdnn_graph_set_layout(graph, name, layout, 0, NULL, d);
    xdnn_diags_destroy(d);
    xtensor *t = &graph->tensors[ti];
    t->rdtype = dt;
    t->rrank = rank;
    t->rnumel = 1;
    for (int i = 0; i < rank; i++) {
        t->rdims[i] = dims[i];
        t->rnumel *= dims[i];
    }
    return t;
}

/* Run init_fill; on failure copy the first message (and a note, if any). */
static xdnn_status fill(const xtensor *t, double *out, char *msg, size_t cap)
{
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_status st = init_fill(graph, t, tmpdir, out, d);
    msg[0] = 0;
    for (size_t i = 0; i < xdnn_diags_count(d); i++) {
        size_t n = strlen(msg);
        snprintf(msg + n, cap - n, "%s%s", i ? " | " : "", xdnn_diags_get(d, i)->message);
    }
    xdnn_diags_destroy(d);
    return st;
}

static void expect_error(const xtensor *t, xdnn_status want_st, const char *want, const char *what)
{
    double out[64];
    char msg[1024];
    CHECK(t != NULL, "%s: declared", what);
    if (!t)
        return;
    xdnn_status st = fill(t, out, msg, sizeof msg);
    CHECK(st == want_st, "%s: status %d, want %d (%s)", what, st, want_st, msg);
    CHECK(strstr(msg, want), "%s: message '%s' lacks '%s'", what, msg, want);
}

static void test_generators(void)
{
    int64_t d23[2] = {2, 3};
    double out[6];
    char msg[512];
    xtensor *t = declare(XDNN_F32, 2, d23, NULL, NULL);
    CHECK(t && fill(t, out, msg, sizeof msg) == XDNN_OK, "default init: %s", msg);
    uint64_t seed = rng_tensor_seed(graph->rseed, t->name);
    for (int k = 0; k < 6; k++)
        CHECK(out[k] == -1 + 2 * rng_uniform01(seed, 0, (uint64_t)k), "default uniform element %d", k);
    t = declare(XDNN_F32, 2, d23, "uniform(seed=auto)", NULL);
    double auto_out[6];
    CHECK(t && fill(t, auto_out, msg, sizeof msg) == XDNN_OK, "seed=auto: %s", msg);
    seed = rng_tensor_seed(graph->rseed, t->name);
    CHECK(auto_out[0] == -1 + 2 * rng_uniform01(seed, 0, 0), "seed=auto is the derived seed");
    t = declare(XDNN_F32, 2, d23, "uniform(lo=2, hi=4, seed=9)", NULL);
    CHECK(t && fill(t, out, msg, sizeof msg) == XDNN_OK, "uniform: %s", msg);
    for (int k = 0; k < 6; k++)
        CHECK(out[k] == 2 + 2 * rng_uniform01(9, 0, (uint64_t)k), "uniform element %d uses seed 9 as is", k);
    t = declare(XDNN_BF16, 2, d23, "randn(mean=1, std=0.5)", NULL);
    CHECK(t && fill(t, out, msg, sizeof msg) == XDNN_OK, "randn: %s", msg);
    seed = rng_tensor_seed(graph->rseed, t->name);
    for (int k = 0; k < 6; k++)
        CHECK(out[k] == 1 + 0.5 * rng_normal(seed, 0, (uint64_t)k), "randn element %d", k);
    t = declare(XDNN_F32, 2, d23, "randn(std=2, seed=3)", NULL);
    CHECK(t && fill(t, out, msg, sizeof msg) == XDNN_OK && out[4] == 2 * rng_normal(3, 0, 4), "randn seed=3");

    t = declare(XDNN_F32, 2, d23, "fill(3.5)", NULL);
    CHECK(t && fill(t, out, msg, sizeof msg) == XDNN_OK && out[0] == 3.5 && out[5] == 3.5, "fill: %s", msg);
    t = declare(XDNN_I32, 2, d23, "zeros()", NULL);
    CHECK(t && fill(t, out, msg, sizeof msg) == XDNN_OK && out[0] == 0 && out[5] == 0, "zeros");
    t = declare(XDNN_I32, 2, d23, "ones()", NULL);
    CHECK(t && fill(t, out, msg, sizeof msg) == XDNN_OK && out[0] == 1 && out[5] == 1, "ones");
    t = declare(XDNN_F32, 2, d23, "arange(start=10, step=-2)", NULL);
    CHECK(t && fill(t, out, msg, sizeof msg) == XDNN_OK && out[0] == 10 && out[1] == 8 && out[5] == 0, "arange");
    t = declare(XDNN_F32, 2, d23, "arange()", NULL);
    CHECK(t && fill(t, out, msg, sizeof msg) == XDNN_OK && out[3] == 3, "arange defaults");
    t = declare(XDNN_F32, 2, d23, "values([[1, 2, 3], [4, 5, 6.5]])", NULL);
    CHECK(t && fill(t, out, msg, sizeof msg) == XDNN_OK && out[0] == 1 && out[2] == 3 && out[5] == 6.5,
          "values nested: %s", msg);
    t = declare(XDNN_F32, 2, d23, "values([7])", NULL);
    CHECK(t && fill(t, out, msg, sizeof msg) == XDNN_OK && out[0] == 7 && out[5] == 7, "values broadcast 1");
    t = declare(XDNN_F32, 2, d23, "values([1, 2, 3, 4, 5])", NULL);
    expect_error(t, XDNN_ERR_SEMANTIC, "values: 5 numbers for t", "values count");
    expect_error(t, XDNN_ERR_SEMANTIC, ": f32[2, 3] (6 elements)", "values count names the type");
    t = declare(XDNN_F32, 2, d23, "values([1, \"a\", 3, 4, 5, 6])", NULL);
    expect_error(t, XDNN_ERR_SEMANTIC, "values: item 1 for", "values string item");
    t = declare(XDNN_F32, 2, d23, "uniform(lo=\"zero\")", NULL);
    expect_error(t, XDNN_ERR_SEMANTIC, "uniform: argument 'lo' for", "uniform lo string");
    t = declare(XDNN_F32, 2, d23, "randn(seed=1.5)", NULL);
    expect_error(t, XDNN_ERR_SEMANTIC, "randn: argument 'seed' for", "seed float");
}

static void write_npy(const char *name, xdnn_dtype dt, int rank, const int64_t *dims, const double *vals)
{
    host_tensor h;
    host_tensor_alloc(&h, dt, rank, dims, NULL);
    tensor_scatter(&h, vals);
    char path[160];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    xdnn_diags_t *d = xdnn_diags_create();
    CHECK(npy_write(path, &h, d) == XDNN_OK, "write %s", path);
    xdnn_diags_destroy(d);
    host_tensor_free(&h);
}

static void test_load(void)
{
    int64_t d23[2] = {2, 3}, d32[2] = {3, 2};
    const double v6[6] = {1, 2, 3, 4, 5, 6.25};
    double out[64];
    char msg[1024];
    write_npy("a.npy", XDNN_F64, 2, d23, v6);
    xtensor *t = declare(XDNN_F16, 2, d23, "load(\"a.npy\")", NULL);
    CHECK(t && fill(t, out, msg, sizeof msg) == XDNN_OK && out[0] == 1 && out[5] == 6.25, "load npy: %s", msg);
    t = declare(XDNN_F32, 2, d32, "load(\"a.npy\")", NULL);
    expect_error(t, XDNN_ERR_IO, "a.npy: shape (2, 3) does not match input t", "shape mismatch");
    expect_error(t, XDNN_ERR_IO, ": f32[3, 2]", "shape mismatch names the type");
    t = declare(XDNN_F32, 2, d23, "load(\"a.npy\", dtype=f16)", NULL);
    expect_error(t, XDNN_ERR_IO, "load: a.npy holds f64 data, but dtype=f16 was given", "dtype mismatch");
    t = declare(XDNN_F32, 2, d23, "load(\"missing.npy\")", NULL);
    expect_error(t, XDNN_ERR_IO, "cannot open", "missing file");
    t = declare(XDNN_F32, 2, d23, "load(\"a.dat\")", NULL);
    expect_error(t, XDNN_ERR_SEMANTIC, "load: cannot tell the format of \"a.dat\"", "unknown extension");
    t = declare(XDNN_F32, 2, d23, "load(\"a.dat\", format=\"npy\")", NULL);
    expect_error(t, XDNN_ERR_IO, "cannot open", "format= overrides the extension");
    t = declare(XDNN_F32, 2, d23, "load(\"a.npy\", layout=\"nhwc\")", NULL);
    expect_error(t, XDNN_ERR_SEMANTIC, "load: layout \"nhwc\" does not fit", "layout of the wrong rank");

    /* layout="nhwc": file (N, H, W, C) = (1, 2, 3, 2); tensor NCHW (1, 2, 2, 3). */
    int64_t nhwc[4] = {1, 2, 3, 2}, nchw[4] = {1, 2, 2, 3};
    double fv[12];
    for (int h = 0; h < 2; h++)
        for (int w = 0; w < 3; w++)
            for (int c = 0; c < 2; c++)
                fv[(h * 3 + w) * 2 + c] = 100 * c + 10 * h + w;
    write_npy("x_nhwc.npy", XDNN_F32, 4, nhwc, fv);
    t = declare(XDNN_F32, 4, nchw, "load(\"x_nhwc.npy\", layout=\"nhwc\")", NULL);
    CHECK(t && fill(t, out, msg, sizeof msg) == XDNN_OK, "layout=nhwc: %s", msg);
    for (int c = 0; c < 2; c++)
        for (int h = 0; h < 2; h++)
            for (int w = 0; w < 3; w++)
                CHECK(out[(c * 2 + h) * 3 + w] == 100 * c + 10 * h + w, "nhwc element c%d h%d w%d = %g", c, h, w,
                      out[(c * 2 + h) * 3 + w]);
    t = declare(XDNN_F32, 4, nchw, "load(\"x_nhwc.npy\")", "nhwc");
    expect_error(t, XDNN_ERR_IO, "x_nhwc.npy: shape (1, 2, 3, 2) does not match input t", "physical file");
    expect_error(t, XDNN_ERR_IO, "f32[1, 2, 2, 3] @nhwc", "error shows the layout");
    expect_error(t, XDNN_ERR_IO, "use load(\"x_nhwc.npy\", layout=\"nhwc\") for a physically nhwc file",
                 "note suggests layout=");
    t = declare(XDNN_F32, 4, nchw, "load(\"x_nhwc.npy\", layout=[0, 2, 3, 1])", NULL);
    CHECK(t && fill(t, out, msg, sizeof msg) == XDNN_OK && out[(1 * 2 + 1) * 3 + 2] == 112, "layout perm list: %s",
          msg);

    /* raw: file dtype from dtype=, tensor dtype differs */
    char path[160];
    snprintf(path, sizeof path, "%s/r.bin", tmpdir);
    const uint16_t f16[6] = {0x3C00, 0x4000, 0x4200, 0x4400, 0x4500, 0xC600};
    FILE *f = fopen(path, "wb");
    fwrite(f16, 2, 6, f);
    fclose(f);
    t = declare(XDNN_F32, 2, d23, "load(\"r.bin\", dtype=f16)", NULL);
    CHECK(t && fill(t, out, msg, sizeof msg) == XDNN_OK && out[1] == 2 && out[5] == -6, "raw f16 into f32: %s", msg);
    t = declare(XDNN_F32, 2, d23, "load(\"r.bin\")", NULL);
    expect_error(t, XDNN_ERR_IO, "raw file has 12 bytes, but f32[2, 3] needs exactly 24 bytes", "raw size");

    /* safetensors: by key, by the tensor's own name, or the only tensor */
    host_tensor a, b;
    host_tensor_alloc(&a, XDNN_BF16, 2, d23, NULL);
    host_tensor_alloc(&b, XDNN_I8, 2, d32, NULL);
    tensor_scatter(&a, v6);
    tensor_scatter(&b, v6);
    snprintf(path, sizeof path, "%s/w.safetensors", tmpdir);
    const char *names[2] = {"fc.weight", "t99"};
    const host_tensor *ts[2] = {&a, &b};
    xdnn_diags_t *d = xdnn_diags_create();
    CHECK(safetensors_write(path, 2, names, ts, d) == XDNN_OK, "write safetensors");
    snprintf(path, sizeof path, "%s/one.safetensors", tmpdir);
    CHECK(safetensors_write(path, 1, names, ts, d) == XDNN_OK, "write one-tensor safetensors");
    xdnn_diags_destroy(d);
    host_tensor_free(&a);
    host_tensor_free(&b);
    t = declare(XDNN_F32, 2, d23, "load(\"w.safetensors\", key=\"fc.weight\")", NULL);
    CHECK(t && fill(t, out, msg, sizeof msg) == XDNN_OK && out[5] == 6.25, "safetensors key: %s", msg);
    t = declare(XDNN_F32, 2, d23, "load(\"one.safetensors\")", NULL);
    CHECK(t && fill(t, out, msg, sizeof msg) == XDNN_OK && out[2] == 3, "safetensors only tensor: %s", msg);
    t = declare(XDNN_F32, 2, d23, "load(\"w.safetensors\")", NULL);
    expect_error(t, XDNN_ERR_IO, "the file holds 2 tensors; choose one with key= (fc.weight, t99)", "no key");
    serial = 99; /* the next tensor is named t99, like the file's I8 tensor */
    t = declare(XDNN_F32, 2, d32, "load(\"w.safetensors\")", NULL);
    CHECK(t && fill(t, out, msg, sizeof msg) == XDNN_OK && out[5] == 6, "safetensors by tensor name: %s", msg);
    t = declare(XDNN_F32, 2, d23, "load(\"a.npy\", key=\"k\")", NULL);
    expect_error(t, XDNN_ERR_SEMANTIC, "argument 'key' for", "key on npy");
}

int main(void)
{
    if (!test_tmpdir_make(tmpdir, sizeof tmpdir, "xdnn_init"))
        return 1;
    mod = xdnn_module_create();
    graph = xdnn_module_add_graph(mod, "g");
    graph->rseed = 1234;
    test_generators();
    test_load();
    xdnn_module_destroy(mod);
    test_tmpdir_remove(tmpdir);
    return test_summary("test_data_init");
}
