/* test_gpu_plan_hooks.c — the GPU side of plans and --tune that needs no GPU:
 *   CUDA=1: "PART=ENGINE:KNOBS" forcing (the knob text reaches the partition;
 *           a knob an engine does not know, or any knob on an engine without
 *           knobs, is a usage error naming the text), the knob tables of the
 *           engines that have them, and the NVRTC module-name check of
 *           plan_gpu_import_blobs (before any device is touched);
 *   CUDA=0: the plan hooks of gpu_none.c say "built without CUDA" honestly. */
#include "test_util.h"

#include "plan/plan_gpu_hooks.h"

#include <stdio.h>
#include <string.h>

/* The first diagnostic's message, or "" when there is none. */
static const char *first_message(const xdnn_diags_t *d)
{
    return xdnn_diags_count(d) ? xdnn_diags_get(d, 0)->message : "";
}

#if XDNN_HAVE_CUDA
#include "gpu/engine.h"
#include "gpu/lower.h"

typedef struct fixture {
    xdnn_module_t *m;
    arena *ar;
    gplan *pl;
} fixture;

/* y = relu(a * b) (one pointwise partition "y.0+y"); z = matmul(a, c). */
static const char *const GRAPH =
    "dnn 1;\n"
    "graph g(io=f32, compute=f32, intermediate=f32, seed=1) {\n"
    "  input a: f32[64, 32];\n"
    "  input b: f32[64, 32];\n"
    "  input c: f32[32, 16];\n"
    "  y = relu(a * b);\n"
    "  z = matmul(a, c);\n"
    "  output y, z;\n"
    "}\n";

static bool setup(fixture *f)
{
    memset(f, 0, sizeof *f);
    xdnn_diags_t *d = xdnn_diags_create();
    bool ok = xdnn_module_parse("t.dnn", GRAPH, strlen(GRAPH), false, d, &f->m) == XDNN_OK &&
              xdnn_graph_bind(xdnn_module_find_graph(f->m, NULL), NULL, 0, d) == XDNN_OK;
    CHECK(ok, "%s", first_message(d));
    xdnn_diags_destroy(d);
    if (!ok)
        return false;
    f->ar = arena_create();
    f->pl = gpu_partition(gpu_lower(xdnn_module_find_graph(f->m, NULL), f->ar), false);
    return true;
}

static void teardown(fixture *f)
{
    if (f->ar)
        arena_destroy(f->ar);
    xdnn_module_destroy(f->m);
}

static const gpart *part_with_node(const gplan *pl, const char *node)
{
    for (int i = 0; i < pl->nparts; i++)
        for (int k = 0; k < pl->parts[i].nnodes; k++)
            if (strcmp(pl->g->n[pl->parts[i].nodes[k]].name, node) == 0)
                return &pl->parts[i];
    return NULL;
}

/* Select with one force string; the status and the first message. */
static xdnn_status select_with(const char *force, char *msg, size_t len, fixture *f)
{
    gpu_device dev = {.sm_count = 132, .cc_major = 9, .cc_minor = 0};
    xdnn_diags_t *d = xdnn_diags_create();
    const char *forces[] = {force};
    xdnn_status s = gpu_select_engines(f->pl, &dev, forces, 1, 0, NULL, d);
    snprintf(msg, len, "%s", first_message(d));
    xdnn_diags_destroy(d);
    return s;
}

static void test_force_knobs(void)
{
    fixture f;
    if (!setup(&f))
        return;
    char msg[512];
    const gpart *y = part_with_node(f.pl, "y"), *z = part_with_node(f.pl, "z");
    CHECK(y && z, "partitions of y and z");
    if (!y || !z) {
        teardown(&f);
        return;
    }

    /* a knob the engine knows reaches the partition; the others get "" */
    CHECK_EQ(select_with("y=pointwise_nvrtc:block=128", msg, sizeof msg, &f), XDNN_OK, "%s", msg);
    CHECK_STR(y->engine ? y->engine->name : "(none)", "pointwise_nvrtc");
    CHECK_STR(y->knobs, "block=128");
    CHECK_STR(z->knobs, "");
    CHECK_STR(z->engine ? z->engine->name : "(none)", "matmul_cublaslt");

    /* the plain form still works and clears the knobs */
    CHECK_EQ(select_with("y=pointwise_nvrtc", msg, sizeof msg, &f), XDNN_OK, "%s", msg);
    CHECK_STR(y->knobs, "");

    CHECK_EQ(select_with("z=matmul_cublaslt:algo=3", msg, sizeof msg, &f), XDNN_OK, "%s", msg);
    CHECK_STR(z->knobs, "algo=3");

    /* a knob value out of range: a usage error naming the text and the engine */
    CHECK_EQ(select_with("y=pointwise_nvrtc:block=100", msg, sizeof msg, &f), XDNN_ERR_USAGE);
    CHECK(strstr(msg, "'block=100'") && strstr(msg, "pointwise_nvrtc") && strstr(msg, "multiple of 32"), "%s", msg);
    CHECK_EQ(select_with("z=matmul_cublaslt:algo=99", msg, sizeof msg, &f), XDNN_ERR_USAGE);
    CHECK(strstr(msg, "'algo=99'") && strstr(msg, "algo=K"), "%s", msg);
    /* an unknown knob name */
    CHECK_EQ(select_with("z=matmul_cublaslt:tile=128x128", msg, sizeof msg, &f), XDNN_ERR_USAGE);
    CHECK(strstr(msg, "'tile=128x128'"), "%s", msg);
    /* any knob text on an engine without knobs */
    CHECK_EQ(select_with("y=copy_strided:block=128", msg, sizeof msg, &f), XDNN_ERR_USAGE);
    CHECK(strstr(msg, "copy_strided has no knobs") && strstr(msg, "'block=128'"), "%s", msg);
    /* an unknown engine before the ':' */
    CHECK_EQ(select_with("y=nosuch:block=128", msg, sizeof msg, &f), XDNN_ERR_USAGE);
    CHECK(strstr(msg, "y=nosuch:block=128") != NULL, "%s", msg);
    teardown(&f);
}

static void test_knob_tables(void)
{
    fixture f;
    if (!setup(&f))
        return;
    gpu_device dev = {.sm_count = 132, .cc_major = 9, .cc_minor = 0};
    char out[16][GPU_KNOB_LEN], why[256];
    const gpu_knobs *mm = gpu_engine_knobs(gpu_engine_find("matmul_cublaslt"));
    const gpu_knobs *pw = gpu_engine_knobs(gpu_engine_find("pointwise_nvrtc"));
    const gpu_knobs *rd = gpu_engine_knobs(gpu_engine_find("reduce_nvrtc"));
    CHECK(mm && pw && rd, "the three engines with knobs");
    CHECK(gpu_engine_knobs(gpu_engine_find("copy_strided")) == NULL, "an engine without knobs has no entry");
    if (mm && pw) {
        const gpart *z = part_with_node(f.pl, "z"), *y = part_with_node(f.pl, "y");
        int n = z ? mm->variants(f.pl, z, &dev, out, 16) : 0;
        CHECK_EQ(n, 6);
        CHECK_STR(out[0], "algo=0");
        CHECK_STR(out[5], "algo=5");
        for (int i = 0; i < n; i++) /* every listed variant is accepted when forced */
            CHECK(mm->valid(out[i], why, sizeof why), "%s: %s", out[i], why);
        n = y ? pw->variants(f.pl, y, &dev, out, 2) : 0;
        CHECK_EQ(n, 2, "variants respect max");
        CHECK_STR(out[0], "block=64");
        CHECK(pw->valid("block=256", why, sizeof why), "%s", why);
        CHECK(!pw->valid("block=512", why, sizeof why), "over the kernels' launch bounds");
        CHECK(!pw->valid("block=64,x", why, sizeof why), "trailing text");
        CHECK(!mm->valid("algo=-1", why, sizeof why), "negative");
    }
    teardown(&f);
}

/* Module names are checked before the device is touched. */
static void test_import_names(void)
{
    unsigned char bytes[4] = {1, 2, 3, 4};
    const char *bad[] = {"", "abc.cubin", "0123456789ABCDEF.cubin", "0123456789abcdef.elf",
                         "0123456789abcdef.cubin.x", "0123456789abcdef0.cubin"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        xdnn_diags_t *d = xdnn_diags_create();
        xdnn_status s = gpu_nvrtc_preload(bad[i], bytes, sizeof bytes, d);
        CHECK_EQ(s, XDNN_ERR_IO, "name '%s'", bad[i]);
        CHECK(strstr(first_message(d), "16 hex digits") != NULL, "%s", first_message(d));
        xdnn_diags_destroy(d);
    }
    xdnn_diags_t *d = xdnn_diags_create();
    CHECK_EQ(plan_gpu_import_blobs(NULL, 0, d), XDNN_OK, "nothing to import");
    xdnn_diags_destroy(d);
}

int main(void)
{
    test_force_knobs();
    test_knob_tables();
    test_import_names();
    return test_summary("test_gpu_plan_hooks");
}

#else

int main(void)
{
    char buf[256];
    CHECK_EQ(plan_gpu_fingerprint(buf, sizeof buf), XDNN_ERR_DEVICE);
    CHECK(strstr(buf, "without CUDA") != NULL, "%s", buf);

    xdnn_diags_t *d = xdnn_diags_create();
    plan_gpu_choice *c = (plan_gpu_choice *)buf; /* must be reset to NULL */
    int n = 5;
    CHECK_EQ(plan_gpu_candidates(NULL, true, 1, 1, &c, &n, d), XDNN_ERR_DEVICE);
    CHECK(c == NULL && n == 0, "no candidates");
    CHECK(strstr(first_message(d), "without CUDA") != NULL, "%s", first_message(d));
    xdnn_diags_destroy(d);

    d = xdnn_diags_create();
    CHECK_EQ(plan_gpu_import_blobs(NULL, 0, d), XDNN_OK, "an empty BLOB section loads anywhere");
    plan_blob one = {.name = "0123456789abcdef.cubin", .data = (unsigned char *)buf, .size = 4};
    CHECK_EQ(plan_gpu_import_blobs(&one, 1, d), XDNN_ERR_DEVICE);
    xdnn_diags_destroy(d);
    return test_summary("test_gpu_plan_hooks");
}

#endif
