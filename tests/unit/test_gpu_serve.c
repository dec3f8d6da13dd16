/* test_gpu_serve.c — host side of serving attention on the GPU (paged K/V,
 * ragged THD; src/ops/sdpa.h), no GPU needed: sdpa_splitkv takes them and is
 * chosen on an H100; every other attention engine refuses, naming the input.
 * The ragged sdpa_bwd has no GPU engine: all three backward engines refuse it.
 * CUDA=0: a no-op. */
#include <stdio.h>
#include <string.h>

#if XDNN_HAVE_CUDA
#include "gpu_fixture.h"
#include "test_util.h"

#include "gpu/engine.h"

static const char *const PAGED =
    "dnn 1;\ngraph g(seed=1) {\n  input q: bf16[3, 32, 1, 128];\n  input k: bf16[12, 8, 64, 128] @bshd;\n"
    "  input v: bf16[12, 8, 64, 128] @bshd;\n  input pt: i32[3, 4] = values(data=[11, 3, 0, 5, 6, 7, 8, 9, 1, 2, 4, 10]);\n"
    "  input lkv: i32[3] = values(data=[200, 1, 256]);\n"
    "  o = sdpa(q, k, v, page_table=pt, seq_len_kv=lkv);\n  output o;\n}\n";
static const char *const RAGGED =
    "dnn 1;\ngraph g(seed=1) {\n  input q: f16[9, 8, 64];\n  input k: f16[40, 2, 64];\n  input v: f16[40, 2, 64];\n"
    "  input oq: i32[3] = values(data=[0, 4, 9]);\n  input okv: i32[3] = values(data=[0, 33, 40]);\n"
    "  o, stats = sdpa(q, k, v, seq_offsets_q=oq, seq_offsets_kv=okv, causal=true, align=\"bottom_right\");\n"
    "  output o, stats;\n}\n";

static void check_graph(const char *text, const char *input)
{
    fixture f;
    if (!fixture_setup(&f, text)) {
        CHECK(!"the serving graph plans");
        return;
    }
    const gpart *p = fixture_part_of_op(f.pl, "sdpa");
    gpu_device h100;
    CHECK(gpu_device_model("h100", &h100));
    char why[512];
    static const char *const others[] = {"sdpa_flash_wgmma", "sdpa_flash", "sdpa_naive", "sdpa_flash_tf32"};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        const gpu_engine *e = gpu_engine_find(others[i]);
        why[0] = 0;
        CHECK(e && p && !e->supports(f.pl, p, &h100, why, sizeof why));
        if (!strstr(why, input) || !strstr(why, "sdpa_splitkv")) {
            CHECK(!"the refusal names the serving input and the engine that takes it");
            fprintf(stderr, "  %s: %s\n", others[i], why);
        }
    }
    const gpu_engine *s = gpu_engine_find("sdpa_splitkv");
    why[0] = 0;
    CHECK(s && p && s->supports(f.pl, p, &h100, why, sizeof why));
    if (why[0])
        fprintf(stderr, "  sdpa_splitkv: %s\n", why);
    CHECK(p && gpu_select_engines(f.pl, &h100, NULL, 0, 0, NULL, f.d) == XDNN_OK && p->engine &&
          strcmp(p->engine->name, "sdpa_splitkv") == 0);
    fixture_teardown(&f);
}

/* The ragged backward has no GPU engine: each sdpa_bwd engine refuses it, naming the port. */
static const char *const RAGGED_BWD =
    "dnn 1;\ngraph g(seed=1) {\n  input q: bf16[9, 8, 64];\n  input k: bf16[40, 2, 64];\n  input v: bf16[40, 2, 64];\n"
    "  input do: bf16[9, 8, 64];\n  input oq: i32[3] = values(data=[0, 4, 9]);\n"
    "  input okv: i32[3] = values(data=[0, 33, 40]);\n"
    "  o, stats = sdpa(q, k, v, seq_offsets_q=oq, seq_offsets_kv=okv, causal=true);\n"
    "  dq, dk, dv = sdpa_bwd(q, k, v, o, do, stats, seq_offsets_q=oq, seq_offsets_kv=okv, causal=true);\n"
    "  output dq, dk, dv;\n}\n";

static void check_bwd_refused(void)
{
    fixture f;
    if (!fixture_setup(&f, RAGGED_BWD)) {
        CHECK(!"the ragged backward graph plans");
        return;
    }
    const gpart *p = fixture_part_of_op(f.pl, "sdpa_bwd");
    gpu_device h100;
    CHECK(gpu_device_model("h100", &h100));
    static const char *const bwd[] = {"sdpa_bwd_wgmma", "sdpa_bwd_flash", "sdpa_bwd"};
    for (size_t i = 0; i < sizeof bwd / sizeof bwd[0]; i++) {
        const gpu_engine *e = gpu_engine_find(bwd[i]);
        char why[512] = "";
        CHECK(e && p && !e->supports(f.pl, p, &h100, why, sizeof why));
        if (!strstr(why, "sdpa_bwd with seq_offsets_q (ragged attention backward) has no GPU engine")) {
            CHECK(!"the refusal names sdpa_bwd and seq_offsets_q");
            fprintf(stderr, "  %s: %s\n", bwd[i], why);
        }
    }
    fixture_teardown(&f);
}

int main(void)
{
    check_graph(PAGED, "page_table");
    check_graph(RAGGED, "seq_offsets_q");
    check_bwd_refused();
    return test_summary("test_gpu_serve");
}
#else
int main(void)
{
    printf("test_gpu_serve: skipped (built without CUDA)\n");
    return 0;
}
#endif
