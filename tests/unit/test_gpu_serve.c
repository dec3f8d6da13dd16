/* test_gpu_serve.c — host side of serving attention on the GPU (paged K/V,
 * ragged THD; src/ops/sdpa.h), no GPU needed: sdpa_splitkv takes both and is
 * chosen on an H100 for paged and ragged decode; sdpa_flash_wgmma and
 * sdpa_flash take ragged (not paged), sdpa_flash_wgmma is chosen for packed
 * prefill; every other attention engine refuses, naming the input and the
 * engines that take it.  The ragged sdpa_bwd runs on sdpa_bwd_wgmma (chosen)
 * and sdpa_bwd_flash; sdpa_bwd refuses it.  CUDA=0: a no-op. */
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

/* A packed prefill of 4096 tokens: blocks of 64 or 128 query rows fill the
 * device, and sdpa_flash_wgmma (450 TFLOP/s) beats sdpa_flash (110) and
 * sdpa_splitkv (25). */
static const char *const RAGGED_PREFILL =
    "dnn 1;\ngraph g(seed=1) {\n  input q: bf16[4096, 16, 128];\n  input k: bf16[4096, 16, 128];\n"
    "  input v: bf16[4096, 16, 128];\n  input off: i32[5] = values(data=[0, 2048, 3072, 3584, 4096]);\n"
    "  o = sdpa(q, k, v, seq_offsets_q=off, seq_offsets_kv=off, causal=true);\n  output o;\n}\n";

/* Ragged decode: one query row per sequence, 4096 keys each: sdpa_flash would run 32 blocks on 132 SMs. */
static const char *const RAGGED_DECODE =
    "dnn 1;\ngraph g(seed=1) {\n  input q: bf16[4, 32, 128];\n  input k: bf16[16384, 8, 128];\n"
    "  input v: bf16[16384, 8, 128];\n  input oq: i32[5] = values(data=[0, 1, 2, 3, 4]);\n"
    "  input okv: i64[5] = values(data=[0, 4096, 8192, 12288, 16384]);\n"
    "  o = sdpa(q, k, v, seq_offsets_q=oq, seq_offsets_kv=okv);\n  output o;\n}\n";

/* Engines that take the graph (`takers`, NULL-terminated), the one chosen on
 * an H100 (`chosen`); every other forward refuses, naming `input` and
 * sdpa_splitkv (the engine that takes every serving form). */
static void check_graph(const char *text, const char *input, const char *const *takers, const char *chosen)
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
    static const char *const all[] = {"sdpa_flash_wgmma", "sdpa_splitkv", "sdpa_flash", "sdpa_naive",
                                      "sdpa_flash_tf32"};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        const gpu_engine *e = gpu_engine_find(all[i]);
        bool takes = false;
        for (const char *const *t = takers; *t; t++)
            takes |= strcmp(*t, all[i]) == 0;
        why[0] = 0;
        const bool ok = e && p && e->supports(f.pl, p, &h100, why, sizeof why);
        CHECK(ok == takes);
        if (ok != takes || (!takes && (!strstr(why, input) || !strstr(why, "sdpa_splitkv")))) {
            CHECK(takes || !"the refusal names the serving input and the engine that takes it");
            fprintf(stderr, "  %s: %s\n", all[i], why[0] ? why : "(accepted)");
        }
    }
    CHECK(p && gpu_select_engines(f.pl, &h100, NULL, 0, 0, NULL, f.d) == XDNN_OK && p->engine &&
          strcmp(p->engine->name, chosen) == 0);
    if (p && p->engine && strcmp(p->engine->name, chosen) != 0)
        fprintf(stderr, "  chose %s, expected %s\n", p->engine->name, chosen);
    fixture_teardown(&f);
}

/* The ragged backward runs on sdpa_bwd_wgmma (chosen) and sdpa_bwd_flash; sdpa_bwd refuses it, naming the port
 * and both. */
static const char *const RAGGED_BWD =
    "dnn 1;\ngraph g(seed=1) {\n  input q: bf16[9, 8, 64];\n  input k: bf16[40, 2, 64];\n  input v: bf16[40, 2, 64];\n"
    "  input do: bf16[9, 8, 64];\n  input oq: i32[3] = values(data=[0, 4, 9]);\n"
    "  input okv: i32[3] = values(data=[0, 33, 40]);\n"
    "  o, stats = sdpa(q, k, v, seq_offsets_q=oq, seq_offsets_kv=okv, causal=true);\n"
    "  dq, dk, dv = sdpa_bwd(q, k, v, o, do, stats, seq_offsets_q=oq, seq_offsets_kv=okv, causal=true);\n"
    "  output dq, dk, dv;\n}\n";

static void check_bwd(void)
{
    fixture f;
    if (!fixture_setup(&f, RAGGED_BWD)) {
        CHECK(!"the ragged backward graph plans");
        return;
    }
    const gpart *p = fixture_part_of_op(f.pl, "sdpa_bwd");
    gpu_device h100;
    CHECK(gpu_device_model("h100", &h100));
    const gpu_engine *rows = gpu_engine_find("sdpa_bwd");
    char why[512] = "";
    CHECK(rows && p && !rows->supports(f.pl, p, &h100, why, sizeof why));
    if (!strstr(why, "seq_offsets_q (ragged attention backward) runs on sdpa_bwd_wgmma and sdpa_bwd_flash only")) {
        CHECK(!"the refusal names seq_offsets_q, sdpa_bwd_wgmma and sdpa_bwd_flash");
        fprintf(stderr, "  sdpa_bwd: %s\n", why);
    }
    static const char *const takers[] = {"sdpa_bwd_wgmma", "sdpa_bwd_flash"};
    for (size_t i = 0; i < sizeof takers / sizeof takers[0]; i++) {
        const gpu_engine *e = gpu_engine_find(takers[i]);
        why[0] = 0;
        CHECK(e && p && e->supports(f.pl, p, &h100, why, sizeof why));
        if (why[0])
            fprintf(stderr, "  %s: %s\n", takers[i], why);
    }
    CHECK(p && gpu_select_engines(f.pl, &h100, NULL, 0, 0, NULL, f.d) == XDNN_OK && p->engine &&
          strcmp(p->engine->name, "sdpa_bwd_wgmma") == 0);
    if (p && p->engine && strcmp(p->engine->name, "sdpa_bwd_wgmma") != 0)
        fprintf(stderr, "  chose %s, expected sdpa_bwd_wgmma\n", p->engine->name);
    fixture_teardown(&f);
}

int main(void)
{
    static const char *const splitkv[] = {"sdpa_splitkv", NULL},
                             *const ragged[] = {"sdpa_splitkv", "sdpa_flash", "sdpa_flash_wgmma", NULL};
    check_graph(PAGED, "page_table", splitkv, "sdpa_splitkv");
    /* 9 tokens: one row tile per head on either tensor-core engine, sdpa_flash_wgmma's rate decides */
    check_graph(RAGGED, "seq_offsets_q", ragged, "sdpa_flash_wgmma");
    check_graph(RAGGED_DECODE, "seq_offsets_q", ragged, "sdpa_splitkv");
    check_graph(RAGGED_PREFILL, "seq_offsets_q", ragged, "sdpa_flash_wgmma");
    check_bwd();
    return test_summary("test_gpu_serve");
}
#else
int main(void)
{
    printf("test_gpu_serve: skipped (built without CUDA)\n");
    return 0;
}
#endif
