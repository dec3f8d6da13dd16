/* test_gpu_seq.c — host-side logic of the attention and recurrent GPU engines,
 * no GPU needed: which engine accepts which sdpa (dtypes, head dims), the
 * kernel parameters read from the attributes (causal/window/align folding,
 * the dropout threshold, default scale, bias broadcast strides, bshd strides,
 * GQA, ragged THD tensors on the wgmma engines), and the rnn_cublas dims and
 * workspace layout.  CUDA=0: a no-op. */
#include <stdio.h>
#include <string.h>

#if XDNN_HAVE_CUDA
#include "gpu_fixture.h"
#include "test_util.h"

#include "gpu/eng_seq.h"
#include "gpu/engine.h"
#include "gpu/lower.h"

#include <math.h>

static bool accepts(const char *engine, const gplan *pl, const gpart *p, char *why, size_t len)
{
    const gpu_engine *e = gpu_engine_find(engine);
    gpu_device dev = {.sm_count = 132, .cc_major = 9, .cc_minor = 0};
    why[0] = 0;
    return e && p && e->supports(pl, p, &dev, why, len);
}

/* bf16 GQA causal with bottom_right, bias [B,1,1,Skv], dropout, bshd q. */
static void test_sdpa_params(void)
{
    fixture f;
    if (!fixture_setup(&f, "dnn 1;\ngraph g(seed=1) {\n  input q: bf16[2, 8, 33, 64] @bshd;\n  input k: bf16[2, 2, 40, 64];\n"
                   "  input v: bf16[2, 2, 40, 64];\n  input bias: f32[2, 1, 1, 40];\n  input lq: i32[2];\n"
                   "  o, stats = sdpa(q, k, v, bias=bias, seq_len_q=lq, causal=true, window=[5, 7],\n"
                   "                  align=\"bottom_right\", dropout=0.2, seed=11);\n  output o, stats;\n}\n"))
        return;
    const gpart *p = fixture_part_of_op(f.pl, "sdpa");
    xk_sdpa kp;
    sdpa_ids ids;
    char why[512];
    CHECK(p && gpu_sdpa_analyze(f.pl, p, SDPA_K_MMA, &kp, &ids, why, sizeof why));
    CHECK(kp.B == 2 && kp.Hq == 8 && kp.Hk == 2 && kp.Sq == 33 && kp.Skv == 40 && kp.D == 64 && kp.Dv == 64);
    CHECK(kp.left == 5 && kp.right == 0 && kp.bottom_right == 1); /* causal wins over right = 7 */
    CHECK(fabsf(kp.scale - 0.125f) < 1e-7f);
    CHECK(kp.drop_threshold == 13108u); /* round(0.2 * 65536) + 1 */
    CHECK(fabsf(kp.drop_scale - 1.25f) < 1e-6f && kp.seed == 11);
    /* q is bshd: [B, H, S, D] strides = [S*H*D, D, H*D, 1] */
    CHECK(kp.q.st[0] == 33 * 8 * 64 && kp.q.st[1] == 64 && kp.q.st[2] == 8 * 64 && kp.q.st[3] == 1);
    CHECK(kp.k.st[0] == 2 * 40 * 64 && kp.k.st[1] == 40 * 64 && kp.k.st[2] == 64);
    /* bias [2, 1, 1, 40]: broadcast over heads and rows */
    CHECK(kp.bias.dtype == XK_F32 && kp.bias.st[0] == 40 && kp.bias.st[1] == 0 && kp.bias.st[2] == 0 &&
          kp.bias.st[3] == 1);
    CHECK(kp.len_q.dtype == XK_I32 && kp.len_q.st[0] == 1 && ids.len_q >= 0 && ids.len_kv == -1);
    CHECK(ids.stats >= 0 && kp.stats.st[3] == 0 && kp.stats.st[2] == 1);
    CHECK(accepts("sdpa_flash", f.pl, p, why, sizeof why));
    CHECK(accepts("sdpa_naive", f.pl, p, why, sizeof why));
    CHECK(!accepts("sdpa_bwd", f.pl, p, why, sizeof why) && strstr(why, "sdpa_bwd"));
    fixture_teardown(&f);
}

/* flash takes f16/bf16 with any D, Dv <= 256; f32 (tf32 not allowed) falls to naive. */
static void test_sdpa_choices(void)
{
    static const struct {
        const char *dt;
        int D, Dv;
        bool flash, naive, wgmma; /* wgmma: sdpa_flash_wgmma (D % 8 == 0, Dv % 8 == 0) */
        const char *reason;
    } cases[] = {
        {"f16", 128, 128, true, true, true, NULL},
        {"f32", 64, 64, false, true, false, "f16 or bf16"},
        {"bf16", 96, 96, true, true, true, NULL},
        {"f16", 64, 32, true, true, true, NULL},
        {"f16", 64, 36, true, true, false, NULL}, /* Dv % 8 != 0: no 16-byte TMA rows */
        {"bf16", 192, 128, true, true, true, NULL},
        {"bf16", 40, 40, true, true, true, NULL},
        {"f16", 256, 200, true, true, true, NULL},
        {"f16", 320, 320, false, false, false, "head dims up to 256"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 "dnn 1;\ngraph g(seed=2) {\n  input q: %s[1, 2, 5, %d];\n  input k: %s[1, 2, 7, %d];\n"
                 "  input v: %s[1, 2, 7, %d];\n  o = sdpa(q, k, v);\n  output o;\n}\n",
                 cases[i].dt, cases[i].D, cases[i].dt, cases[i].D, cases[i].dt, cases[i].Dv);
        fixture f;
        if (!fixture_setup(&f, text))
            continue;
        const gpart *p = fixture_part_of_op(f.pl, "sdpa");
        char why[512];
        bool fl = accepts("sdpa_flash", f.pl, p, why, sizeof why);
        CHECK(fl == cases[i].flash);
        if (!fl && cases[i].reason && !cases[i].naive)
            CHECK(strstr(why, "sdpa") != NULL);
        if (!fl && cases[i].reason && cases[i].naive) {
            CHECK(strstr(why, cases[i].reason) != NULL);
            if (!strstr(why, cases[i].reason))
                fprintf(stderr, "  reason was: %s\n", why);
        }
        bool nv = accepts("sdpa_naive", f.pl, p, why, sizeof why);
        CHECK(nv == cases[i].naive);
        if (!nv && cases[i].reason)
            CHECK(strstr(why, cases[i].reason) != NULL);
        CHECK(accepts("sdpa_flash_wgmma", f.pl, p, why, sizeof why) == cases[i].wgmma);
        if (strcmp(cases[i].dt, "f32") == 0) /* the inherited reason names this engine */
            CHECK(strstr(why, "sdpa_flash_wgmma needs q in f16 or bf16") != NULL);
        /* the cheapest supporting engine wins: on sm_90 the Hopper forward */
        gpu_device dev = {.sm_count = 132, .cc_major = 9, .cc_minor = 0};
        if (cases[i].naive && gpu_select_engines(f.pl, &dev, NULL, 0, 0, NULL, f.d) == XDNN_OK)
            CHECK(strcmp(p->engine->name, cases[i].wgmma   ? "sdpa_flash_wgmma"
                                          : cases[i].flash ? "sdpa_flash"
                                                           : "sdpa_naive") == 0);
        fixture_teardown(&f);
    }
}

/* sdpa_flash_wgmma takes every mask (window, dropout here; bias and seq lens
 * in test_sdpa_wgmma_inputs) and refuses, naming the attribute and value,
 * what only the other engines take, and every device but compute capability 9.0. */
static void test_sdpa_wgmma_refusals(void)
{
    static const struct {
        const char *dt_o, *extra, *reason;
    } cases[] = {
        {"bf16", ", window=[8, 4]", NULL},
        {"bf16", ", window=[-1, 3], align=\"bottom_right\"", NULL},
        {"bf16", ", dropout=0.25, seed=1", NULL},
        {"bf16", ", scale=-0.5", "scale=-0.5"},
        {"f32", "", NULL}, /* the SPLIT kernel: P as hi + lo halves */
        {"f32", ", causal=true", NULL},
        {"f16", "", "sdpa_flash_wgmma needs q, k, v of one dtype and o of it or f32, got bf16, bf16, bf16 -> f16"},
        {"bf16", ", causal=true, align=\"bottom_right\"", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 "dnn 1;\ngraph g(seed=2) {\n  input q: bf16[1, 4, 5, 64];\n  input k: bf16[1, 2, 7, 64];\n"
                 "  input v: bf16[1, 2, 7, 64];\n  o = sdpa(q, k, v%s);\n  output o: %s;\n}\n",
                 cases[i].extra, cases[i].dt_o);
        fixture f;
        if (!fixture_setup(&f, text))
            continue;
        const gpart *p = fixture_part_of_op(f.pl, "sdpa");
        char why[512];
        bool ok = accepts("sdpa_flash_wgmma", f.pl, p, why, sizeof why);
        CHECK(ok == (cases[i].reason == NULL));
        if (cases[i].reason && !strstr(why, cases[i].reason)) {
            CHECK(!"reason names the attribute");
            fprintf(stderr, "  reason was: %s\n", why);
        }
        CHECK(accepts("sdpa_flash", f.pl, p, why, sizeof why) == (strcmp(cases[i].dt_o, "f16") != 0));
        const gpu_engine *e = gpu_engine_find("sdpa_flash_wgmma");
        gpu_device a100 = {.sm_count = 108, .cc_major = 8, .cc_minor = 0};
        CHECK(e && !e->supports(f.pl, p, &a100, why, sizeof why) && strstr(why, "compute capability 9.0"));
        fixture_teardown(&f);
    }
}

/* An f32 o (a graph's default intermediate dtype: o feeding the output
 * projection or sdpa_bwd) runs on sdpa_flash_wgmma's SPLIT kernel, priced
 * 1.33x its 16-bit o and still under sdpa_flash (which also multiplies P V
 * twice); with a bias too (v6's GEN variant: 2.7x sdpa_flash's bias time). */
static void test_sdpa_wgmma_f32_o(void)
{
    static const struct {
        int D;
        const char *extra, *inputs, *engine;
    } cases[] = {
        {64, "", "", "sdpa_flash_wgmma"},
        {128, ", causal=true", "", "sdpa_flash_wgmma"},
        {256, ", window=[64, 0]", "", "sdpa_flash_wgmma"},
        {128, ", bias=bias", "  input bias: f32[1024, 1024];\n", "sdpa_flash_wgmma"},
    };
    static const char graph[] = "dnn 1;\ngraph g(seed=2) {\n  input q: bf16[2, 16, 1024, %d];\n"
                                "  input k: bf16[2, 4, 1024, %d];\n  input v: bf16[2, 4, 1024, %d];\n"
                                "%s  o = sdpa(q, k, v%s);\n  output o: f32;\n}\n";
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[768];
        const int D = cases[i].D;
        snprintf(text, sizeof text, graph, D, D, D, cases[i].inputs, cases[i].extra);
        fixture f;
        if (!fixture_setup(&f, text))
            continue;
        const gpart *p = fixture_part_of_op(f.pl, "sdpa");
        char why[512];
        CHECK(accepts("sdpa_flash_wgmma", f.pl, p, why, sizeof why));
        gpu_device h100 = {.sm_count = 132, .cc_major = 9, .cc_minor = 0};
        if (gpu_select_engines(f.pl, &h100, NULL, 0, 0, NULL, f.d) == XDNN_OK) {
            CHECK(strcmp(p->engine->name, cases[i].engine) == 0);
            if (strcmp(p->engine->name, cases[i].engine) != 0)
                fprintf(stderr, "  D=%d%s: chose %s\n", D, cases[i].extra, p->engine->name);
        } else
            CHECK(!"engine selection");
        fixture_teardown(&f);
    }
}

/* sdpa_flash_wgmma and sdpa_bwd_wgmma take seq_len_q / seq_len_kv; the
 * forward takes a bias of any broadcast shape (and is chosen for it on sm_90:
 * 2.7x faster than sdpa_flash's bias path), the backward refuses it. */
static void test_sdpa_wgmma_inputs(void)
{
    static const struct {
        const char *inputs, *ports;
        bool bwd_ok;
    } cases[] = {
        {"  input lq: i32[2];\n  input lkv: i32[2];\n", ", seq_len_q=lq, seq_len_kv=lkv, causal=true", true},
        {"  input bias: bf16[1, 8, 33, 40];\n", ", bias=bias", false},
        {"  input bias: f32[2, 1, 33, 40];\n", ", bias=bias, window=[4, 4]", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int bwd = 0; bwd <= 1; bwd++) { /* with sdpa_bwd, o is an f32 intermediate: the forward alone */
            char text[1024];
            snprintf(text, sizeof text,
                     "dnn 1;\ngraph g(seed=6) {\n  input q: bf16[2, 8, 33, 64];\n  input k: bf16[2, 2, 40, 64];\n"
                     "  input v: bf16[2, 2, 40, 64];\n  input do: bf16[2, 8, 33, 64];\n%s"
                     "  o, stats = sdpa(q, k, v%s);\n%s%s%s  output %s;\n}\n",
                     cases[i].inputs, cases[i].ports, bwd ? "  dq, dk, dv = sdpa_bwd(q, k, v, o, do, stats" : "",
                     bwd ? cases[i].ports : "", bwd ? ");\n" : "", bwd ? "dq, dk, dv" : "o, stats");
            fixture f;
            if (!fixture_setup(&f, text))
                continue;
            char why[512];
            const char *op = bwd ? "sdpa_bwd" : "sdpa", *eng = bwd ? "sdpa_bwd_wgmma" : "sdpa_flash_wgmma";
            const bool ok = accepts(eng, f.pl, fixture_part_of_op(f.pl, op), why, sizeof why);
            CHECK(ok == (!bwd || cases[i].bwd_ok));
            /* on sm_90 the forward with a bias goes to sdpa_flash_wgmma (RESULTS-sdpa.md, session 8); the
             * 9-key window of case 2 is so little work that the warp-per-row engine wins it */
            gpu_device h100 = {.sm_count = 132, .cc_major = 9, .cc_minor = 0};
            if (!bwd && i < 2 && gpu_select_engines(f.pl, &h100, NULL, 0, 0, NULL, f.d) == XDNN_OK)
                CHECK(strcmp(fixture_part_of_op(f.pl, op)->engine->name, "sdpa_flash_wgmma") == 0);
            if (!ok && !strstr(why, "sdpa_bwd_wgmma takes no bias input")) {
                CHECK(!"the reason names the bias");
                fprintf(stderr, "  reason was: %s\n", why);
            }
            fixture_teardown(&f);
        }
}

/* sdpa_splitkv: refuses, naming the attribute and value, what it does not
 * take; decode (GQA 32/8, one query row, 4096 keys) is chosen for it on an
 * H100 with 32 splits of 2 key tiles and their workspace; a full prefill
 * stays on sdpa_flash_wgmma; few keys need one split, no workspace, and
 * leave the launch-bound shape to the others. */
static void test_sdpa_splitkv(void)
{
    static const struct {
        const char *dt, *dt_o, *extra, *inputs, *ports, *reason;
        int D;
    } refusals[] = {
        {"bf16", "bf16", "", "  input bias: f32[3, 7];\n", ", bias=bias", "takes no bias input", 64},
        {"bf16", "bf16", "", "  input lq: i32[1];\n", ", seq_len_q=lq", "takes no seq_len_q input", 64},
        {"bf16", "bf16", ", dropout=0.25, seed=1", "", "", "takes no dropout, got dropout=0.25", 64},
        {"bf16", "bf16", ", window=[8, 4]", "", "", "causal or no mask, got window=[8, 4]", 64},
        {"bf16", "f32", "", "", "", "o in q's dtype bf16, got f32", 64},
        {"f32", "f32", "", "", "", "sdpa_splitkv needs q in f16 or bf16", 64},
        {"f16", "f16", "", "", "", "head dims up to 256", 320},
        {"bf16", "bf16", "", "", "", "needs D % 8 == 0 and Dv % 8 == 0 (16-byte rows), got D=60", 60},
        {"f16", "f16", ", causal=true, align=\"bottom_right\"", "", "", NULL, 64},
    };
    for (size_t i = 0; i < sizeof refusals / sizeof refusals[0]; i++) {
        char text[768];
        const int D = refusals[i].D;
        snprintf(text, sizeof text,
                 "dnn 1;\ngraph g(seed=2) {\n  input q: %s[1, 4, 3, %d];\n  input k: %s[1, 2, 7, %d];\n"
                 "  input v: %s[1, 2, 7, %d];\n%s  o = sdpa(q, k, v%s%s);\n  output o: %s;\n}\n",
                 refusals[i].dt, D, refusals[i].dt, D, refusals[i].dt, D, refusals[i].inputs, refusals[i].ports,
                 refusals[i].extra, refusals[i].dt_o);
        fixture f;
        if (!fixture_setup(&f, text))
            continue;
        const gpart *p = fixture_part_of_op(f.pl, "sdpa");
        char why[512];
        bool ok = accepts("sdpa_splitkv", f.pl, p, why, sizeof why);
        CHECK(ok == (refusals[i].reason == NULL));
        /* (the planner puts the engine's name before the reason it prints) */
        if (refusals[i].reason && !strstr(why, refusals[i].reason)) {
            CHECK(!"reason names the attribute and its value");
            fprintf(stderr, "  reason was: %s\n", why);
        }
        const gpu_engine *e = gpu_engine_find("sdpa_splitkv");
        gpu_device t4 = {.sm_count = 40, .cc_major = 7, .cc_minor = 5};
        CHECK(e && !e->supports(f.pl, p, &t4, why, sizeof why) && strstr(why, "sm_80"));
        fixture_teardown(&f);
    }

    static const struct {
        int B, Sq, Skv, S_prefill;
        const char *engine;
        size_t ws;
    } picks[] = {
        /* 32 splits (64 key tiles / 2; 33 would fill 132 SMs twice) x 32 rows x (128 + 1) floats + 256 */
        {1, 1, 4096, 0, "sdpa_splitkv", 32 * 32 * 129 * 4 + 256},
        /* sdpa_splitkv's 49 splits: 396 block slots (3 per SM since session 10) / 8 KV heads, whole waves; but
         * sdpa_flash_wgmma's v10 (a group's heads packed, 66 key splits) is ranked first here (H100, session
         * 11: 201 us against 210, bench/RESULTS-sdpa.md) */
        {1, 1, 131072, 0, "sdpa_flash_wgmma", 49 * 32 * 129 * 4 + 256},
        {1, 1, 77, 0, "sdpa_flash_wgmma", 0}, /* 2 key tiles: one split, launch-bound: no gain to claim */
        {4, 0, 0, 4096, "sdpa_flash_wgmma", 0},                     /* 512 blocks: the device is full */
    };
    for (size_t i = 0; i < sizeof picks / sizeof picks[0]; i++) {
        char text[512];
        const int Sq = picks[i].S_prefill ? picks[i].S_prefill : picks[i].Sq;
        const int Skv = picks[i].S_prefill ? picks[i].S_prefill : picks[i].Skv;
        snprintf(text, sizeof text,
                 "dnn 1;\ngraph g(seed=3) {\n  input q: bf16[%d, 32, %d, 128];\n  input k: bf16[%d, 8, %d, 128];\n"
                 "  input v: bf16[%d, 8, %d, 128];\n  o = sdpa(q, k, v, causal=true, align=\"bottom_right\");\n"
                 "  output o;\n}\n",
                 picks[i].B, Sq, picks[i].B, Skv, picks[i].B, Skv);
        fixture f;
        if (!fixture_setup(&f, text))
            continue;
        const gpart *p = fixture_part_of_op(f.pl, "sdpa");
        gpu_device h100;
        CHECK(gpu_device_model("h100", &h100));
        CHECK(p && gpu_select_engines(f.pl, &h100, NULL, 0, 0, NULL, f.d) == XDNN_OK);
        if (p && p->engine) {
            CHECK(strcmp(p->engine->name, picks[i].engine) == 0);
            if (strcmp(p->engine->name, picks[i].engine) != 0)
                fprintf(stderr, "  Skv=%d chose %s\n", Skv, p->engine->name);
            const gpu_engine *e = gpu_engine_find("sdpa_splitkv");
            if (e && picks[i].ws)
                CHECK(e->workspace(f.pl, p, &h100) == picks[i].ws);
            if (e && !picks[i].S_prefill && !picks[i].ws)
                CHECK(e->workspace(f.pl, p, &h100) == 0);
        }
        fixture_teardown(&f);
    }
}

/* sdpa_bwd: all nine ports seen (do, stats beyond the old four-input limit),
 * three results, a delta workspace of B*Hq*Sq floats. */
static void test_sdpa_bwd(void)
{
    fixture f;
    if (!fixture_setup(&f, "dnn 1;\ngraph g(seed=3) {\n  input q: f16[2, 4, 9, 64];\n  input k: f16[2, 2, 11, 64];\n"
                   "  input v: f16[2, 2, 11, 32];\n  input do: f16[2, 4, 9, 32];\n"
                   "  o, stats = sdpa(q, k, v, causal=true);\n"
                   "  dq, dk, dv = sdpa_bwd(q, k, v, o, do, stats, causal=true);\n  output dq, dk, dv;\n}\n"))
        return;
    const gpart *p = fixture_part_of_op(f.pl, "sdpa_bwd");
    xk_sdpa kp;
    sdpa_ids ids;
    char why[512];
    CHECK(p && gpu_sdpa_analyze(f.pl, p, SDPA_K_BWD, &kp, &ids, why, sizeof why));
    CHECK(ids.dout >= 0 && ids.stats >= 0 && ids.o >= 0 && ids.dq >= 0 && ids.dk >= 0 && ids.dv >= 0);
    CHECK(kp.Dv == 32 && kp.right == 0 && kp.left == -1 && kp.drop_threshold == 0);
    /* stats is an intermediate read by another partition: materialized, produced by sdpa */
    CHECK(f.pl->materialized[ids.stats] && f.g->t[ids.stats].producer >= 0);
    const gpu_engine *e = gpu_engine_find("sdpa_bwd");
    gpu_device dev = {.sm_count = 132, .cc_major = 9, .cc_minor = 0};
    CHECK(e && e->workspace(f.pl, p, &dev) >= 2 * 4 * 9 * sizeof(float));
    fixture_teardown(&f);
}

/* The fp8 form of sdpa (src/ops/sdpa_fp8.c) has no GPU engine: the shared
 * analysis refuses it for every forward kind, naming the first scale port,
 * with all five scales lowered (14 ports: more than the old 12-input limit). */
static void test_sdpa_fp8_refused(void)
{
    fixture f;
    if (!fixture_setup(&f, "dnn 1;\ngraph g(seed=3) {\n  input q: fp8_e4m3[1, 2, 37, 64];\n"
                           "  input k: fp8_e4m3[1, 2, 37, 64];\n  input v: fp8_e4m3[1, 2, 37, 64];\n"
                           "  input s: f32[];\n  input so: f32[];\n"
                           "  o, stats, amax_s, amax_o = sdpa(q, k, v, q_scale=s, k_scale=s, v_scale=s, s_scale=s,"
                           " o_scale=so, causal=true);\n  output o, stats, amax_s, amax_o;\n}\n"))
        return;
    const gpart *p = fixture_part_of_op(f.pl, "sdpa");
    CHECK(p && f.g->n[p->anchor].nin == 14, "the fp8 sdpa node keeps its 14 ports in the GPU graph");
    const sdpa_kind kinds[] = {SDPA_K_ROWS, SDPA_K_MMA, SDPA_K_TF32, SDPA_K_SERVE};
    for (size_t i = 0; p && i < sizeof kinds / sizeof kinds[0]; i++) {
        xk_sdpa kp;
        sdpa_ids ids;
        char why[512] = "";
        CHECK(!gpu_sdpa_analyze(f.pl, p, kinds[i], &kp, &ids, why, sizeof why) &&
                  strcmp(why, "o: q_scale (fp8 attention) runs on sdpa_fp8_wgmma only") == 0,
              "kind %d: \"%s\"", (int)kinds[i], why);
    }
    fixture_teardown(&f);
}

/* sdpa_fp8_wgmma (eng_sdpa_fp8.c): chosen for the fp8 form it runs (e4m3 q, k, v, D = 128, no mask or causal,
 * GQA, o bf16 or fp8 with o_scale, scalar or tensor scales), with a workspace for V^T; refused with the port or
 * attribute and its value for the rest, and on every device but compute capability 9.0. */
static void test_sdpa_fp8_wgmma(void)
{
    static const struct {
        const char *qdt;
        int D;
        const char *ins, *extra, *o;
        const char *reason; /* NULL: accepted */
    } cases[] = {
        {"fp8_e4m3", 128, "", ", causal=true, align=\"bottom_right\"", "", NULL},
        {"fp8_e4m3", 128, "", ", o_scale=s", ": fp8_e5m2", NULL},
        {"fp8_e4m3", 128, "", ", o_scale=s", "", NULL}, /* o fp8_e4m3 by inference */
        {"fp8_e5m2", 128, "", "", "", "needs q in fp8_e4m3, got fp8_e5m2"},
        {"fp8_e4m3", 64, "", "", "", "needs head dim 128, got q with 64"},
        {"fp8_e4m3", 128, "", ", dropout=0.1, seed=2", "", "attribute dropout = 0.1"},
        {"fp8_e4m3", 128, "", ", window=[16, 0]", "", "attribute window = [16, 0]"},
        {"fp8_e4m3", 128, "  input b: f32[1, 1, 37, 53];\n", ", bias=b", "", "port bias"},
        {"fp8_e4m3", 128, "  input lq: i32[2];\n", ", seq_len_q=lq", "", "port seq_len_q"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        const int D = cases[i].D;
        snprintf(text, sizeof text,
                 "dnn 1;\ngraph g(seed=8) {\n  input q: %s[2, 8, 37, %d] @bshd;\n  input k: %s[2, 2, 53, %d];\n"
                 "  input v: %s[2, 2, 53, %d];\n  input s: f32[];\n%s"
                 "  o, stats, amax_s, amax_o = sdpa(q, k, v, q_scale=s, k_scale=0.5, v_scale=s, s_scale=s%s);\n"
                 "  output o%s, stats, amax_s, amax_o;\n}\n",
                 cases[i].qdt, D, cases[i].qdt, D, cases[i].qdt, D, cases[i].ins, cases[i].extra, cases[i].o);
        fixture f;
        if (!fixture_setup(&f, text))
            continue;
        const gpart *p = fixture_part_of_op(f.pl, "sdpa");
        char why[512];
        const bool ok = accepts("sdpa_fp8_wgmma", f.pl, p, why, sizeof why);
        CHECK(ok == (cases[i].reason == NULL), "case %zu: %s", i, why);
        if (cases[i].reason && !strstr(why, cases[i].reason)) {
            CHECK(!"reason names the port or attribute");
            fprintf(stderr, "  reason was: %s\n", why);
        }
        const gpu_engine *e = gpu_engine_find("sdpa_fp8_wgmma");
        gpu_device a100 = {.sm_count = 108, .cc_major = 8, .cc_minor = 0};
        CHECK(e && !e->supports(f.pl, p, &a100, why, sizeof why) && strstr(why, "compute capability 9.0"));
        gpu_device h100 = {.sm_count = 132, .cc_major = 9, .cc_minor = 0};
        if (ok) { /* the only engine of the fp8 form; V^T [2, 2, 128, 64] bytes in its workspace */
            CHECK(gpu_select_engines(f.pl, &h100, NULL, 0, 0, NULL, f.d) == XDNN_OK);
            CHECK(strcmp(p->engine->name, "sdpa_fp8_wgmma") == 0);
            CHECK(e->workspace(f.pl, p, &h100) >= 2 * 2 * 128 * 64);
        }
        fixture_teardown(&f);
    }
}

/* sdpa_bwd_wgmma: chosen first on sm_90 where it applies (bf16 GQA causal
 * bottom_right, bshd q; D, Dv up to 256, D != Dv; dropout); refuses, naming the
 * attribute and its value, what sdpa_bwd_flash takes instead (a deterministic
 * plan past 128 columns too), and every device but compute capability 9.0. */
static void test_sdpa_bwd_wgmma(void)
{
    static const struct {
        const char *dt, *dt_out, *extra;
        int D, Dv;
        const char *reason; /* NULL: accepted */
    } cases[] = {
        {"bf16", "bf16", ", causal=true, align=\"bottom_right\"", 128, 128, NULL},
        {"f16", "f16", "", 64, 64, NULL},
        {"bf16", "bf16", ", causal=true", 40, 40, NULL},
        {"bf16", "bf16", ", window=[8, 4]", 64, 64, NULL},
        {"f16", "f16", ", window=[100, -1], align=\"bottom_right\"", 64, 64, NULL},
        {"bf16", "bf16", ", dropout=0.25, seed=1", 64, 64, NULL}, /* session 11: planned here, not on sdpa_bwd_flash */
        {"f16", "f16", ", causal=true, dropout=0.5, seed=3", 192, 128, NULL},
        {"bf16", "bf16", ", scale=-0.5", 64, 64, "scale=-0.5"},
        {"f16", "f16", "", 256, 256, NULL},
        {"bf16", "bf16", ", causal=true", 192, 128, NULL},
        {"f16", "f16", "", 64, 32, NULL},
        {"bf16", "bf16", ", window=[8, 4]", 160, 160, NULL},
        {"f16", "f16", "", 36, 36, "D % 8 == 0 and D <= 256, got D=36"},
        {"f16", "f16", "", 64, 36, "Dv % 8 == 0 and Dv <= 256, got Dv=36"},
        {"f32", "f32", "", 64, 64, "sdpa_bwd_wgmma needs q in f16 or bf16"},
        {"bf16", "f32", "", 64, 64, "dq in q's dtype bf16, got f32"},
        {"f16", "f16", ", scale=0.2", 128, 128, NULL}, /* o is an f32 intermediate here: taken too */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        const char *dt = cases[i].dt;
        snprintf(text, sizeof text,
                 "dnn 1;\ngraph g(seed=6) {\n  input q: %s[2, 8, 33, %d] @bshd;\n  input k: %s[2, 2, 40, %d];\n"
                 "  input v: %s[2, 2, 40, %d];\n  input do: %s[2, 8, 33, %d];\n  o, stats = sdpa(q, k, v%s);\n"
                 "  dq, dk, dv = sdpa_bwd(q, k, v, o, do, stats%s);\n  output dq: %s, dk, dv;\n}\n",
                 dt, cases[i].D, dt, cases[i].D, dt, cases[i].Dv, dt, cases[i].Dv, cases[i].extra, cases[i].extra,
                 cases[i].dt_out);
        fixture f;
        if (!fixture_setup(&f, text))
            continue;
        const gpart *p = fixture_part_of_op(f.pl, "sdpa_bwd");
        char why[512];
        const bool ok = accepts("sdpa_bwd_wgmma", f.pl, p, why, sizeof why);
        CHECK(ok == (cases[i].reason == NULL));
        if (cases[i].reason && !strstr(why, cases[i].reason)) {
            CHECK(!"reason names the attribute");
            fprintf(stderr, "  reason was: %s\n", why);
        }
        const gpu_engine *e = gpu_engine_find("sdpa_bwd_wgmma");
        gpu_device a100 = {.sm_count = 108, .cc_major = 8, .cc_minor = 0};
        CHECK(e && !e->supports(f.pl, p, &a100, why, sizeof why) && strstr(why, "compute capability 9.0"));
        gpu_device h100 = {.sm_count = 132, .cc_major = 9, .cc_minor = 0};
        if (ok) { /* the cheapest engine on sm_90; a workspace for lse, Delta and the f32 dQ sums */
            CHECK(gpu_select_engines(f.pl, &h100, NULL, 0, 0, NULL, f.d) == XDNN_OK);
            CHECK(strcmp(p->engine->name, "sdpa_bwd_wgmma") == 0);
            const size_t rows = 2 * 8 * 64; /* Sq = 33 padded to 64; dQ sums at the wider of D, Dv padded */
            const int dmax = cases[i].D > cases[i].Dv ? cases[i].D : cases[i].Dv;
            CHECK(e->workspace(f.pl, p, &h100) >= rows * 4 * 2 + rows * (size_t)((dmax + 63) / 64 * 64) * 4);
        }
        if (ok && (cases[i].D > 128 || cases[i].Dv > 128)) { /* the wide kernel's dQ sums are unordered */
            f.pl->deterministic = true;
            CHECK(!accepts("sdpa_bwd_wgmma", f.pl, p, why, sizeof why) &&
                  strstr(why, "no deterministic dQ past 128 columns, got D="));
            f.pl->deterministic = false;
        }
        fixture_teardown(&f);
    }
}

/* Ragged (THD) sequences on the Hopper pair: the packed training step (q
 * ragged, k/v ragged, either alone with the other side dense) plans onto
 * sdpa_flash_wgmma + sdpa_bwd_wgmma on sm_90, with the packed tensors read
 * as [1, H, T, D] (gpu_sdpa_bhsd) and the backward's workspace sized for T / 64
 * + B row blocks per head; what they cannot run they refuse naming it, and
 * the mma.sync pair takes it. */
static void test_sdpa_wgmma_ragged(void)
{
    static const struct {
        const char *q, *kv, *ports; /* q / do shape, k / v shape, the offsets and lengths */
        int D;
        const char *fwd, *bwd; /* the engines chosen on an H100 */
        const char *reason;    /* sdpa_bwd_wgmma's refusal, NULL: accepted */
    } cases[] = {
        {"[4100, 8]", "[4100, 2]", "seq_offsets_q=off, seq_offsets_kv=off", 128, "sdpa_flash_wgmma",
         "sdpa_bwd_wgmma", NULL},
        {"[4100, 8]", "[3, 2, 2100]", "seq_offsets_q=off, seq_len_kv=len", 64, "sdpa_flash_wgmma", "sdpa_bwd_wgmma",
         NULL},
        {"[3, 8, 2100]", "[4100, 2]", "seq_len_q=len, seq_offsets_kv=off", 64, "sdpa_flash_wgmma", "sdpa_bwd_wgmma",
         NULL},
        {"[4100, 8]", "[4100, 2]", "seq_offsets_q=off, seq_offsets_kv=off", 36, "sdpa_flash", "sdpa_bwd_flash",
         "D % 8 == 0 and D <= 256, got D=36"},
        {"[4100, 8]", "[4100, 2]", "seq_offsets_q=off, seq_offsets_kv=off", 192, "sdpa_flash_wgmma", "sdpa_bwd_wgmma",
         NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        const int D = cases[i].D;
        snprintf(text, sizeof text,
                 "dnn 1;\ngraph g(seed=6) {\n  input q: bf16%.*s, %d];\n  input k: bf16%.*s, %d];\n"
                 "  input v: bf16%.*s, %d];\n  input do: bf16%.*s, %d];\n"
                 "  input off: i32[4] = values(data=[0, 1, 2071, 4100]);\n  input len: i32[3] = values(data=[2100, 1, 70]);\n"
                 "  o, stats = sdpa(q, k, v, %s, causal=true);\n"
                 "  dq, dk, dv = sdpa_bwd(q, k, v, o, do, stats, %s, causal=true);\n  output dq, dk, dv;\n}\n",
                 (int)strlen(cases[i].q) - 1, cases[i].q, D, (int)strlen(cases[i].kv) - 1, cases[i].kv, D,
                 (int)strlen(cases[i].kv) - 1, cases[i].kv, D, (int)strlen(cases[i].q) - 1, cases[i].q, D,
                 cases[i].ports, cases[i].ports);
        fixture f;
        if (!fixture_setup(&f, text)) {
            CHECK(!"the ragged graph plans");
            continue;
        }
        const gpart *pf = fixture_part_of_op(f.pl, "sdpa"), *pb = fixture_part_of_op(f.pl, "sdpa_bwd");
        char why[512];
        CHECK(accepts("sdpa_flash", f.pl, pf, why, sizeof why) && accepts("sdpa_bwd_flash", f.pl, pb, why, sizeof why));
        const bool ok = accepts("sdpa_bwd_wgmma", f.pl, pb, why, sizeof why);
        CHECK(ok == (cases[i].reason == NULL));
        if (cases[i].reason && !strstr(why, cases[i].reason)) {
            CHECK(!"reason names the head dim");
            fprintf(stderr, "  reason was: %s\n", why);
        }
        xk_sdpa kp;
        sdpa_ids ids;
        CHECK(gpu_sdpa_analyze(f.pl, pb, SDPA_K_BWD_MMA, &kp, &ids, why, sizeof why) && kp.B == 3);
        int64_t dims[4], st[4];
        gpu_sdpa_bhsd(&f.pl->g->t[ids.q], dims, st);
        if (ids.off_q >= 0) /* [4100, 8, D] as one batch of 4100 rows: token stride 8 * D, head stride D */
            CHECK(dims[0] == 1 && dims[1] == 8 && dims[2] == 4100 && dims[3] == D && st[0] == 0 && st[1] == D &&
                  st[2] == 8 * D && st[3] == 1 && kp.Sq == 4100 && kp.q.st[0] == 0 && kp.q.st[2] == 8 * D);
        else
            CHECK(dims[0] == 3 && dims[2] == 2100 && st[2] == D);
        gpu_device h100 = {.sm_count = 132, .cc_major = 9, .cc_minor = 0};
        CHECK(gpu_select_engines(f.pl, &h100, NULL, 0, 0, NULL, f.d) == XDNN_OK);
        CHECK(pf->engine && strcmp(pf->engine->name, cases[i].fwd) == 0);
        CHECK(pb->engine && strcmp(pb->engine->name, cases[i].bwd) == 0);
        if (pf->engine && pb->engine && (strcmp(pf->engine->name, cases[i].fwd) || strcmp(pb->engine->name, cases[i].bwd)))
            fprintf(stderr, "  case %zu chose %s + %s\n", i, pf->engine->name, pb->engine->name);
        if (ok && ids.off_q >= 0) { /* lse and Delta rows: (4100 / 64 + 3) blocks of 64 per head, 8 heads */
            const size_t rows = (size_t)(4100 / 64 + 3) * 64 * 8;
            CHECK(gpu_engine_find("sdpa_bwd_wgmma")->workspace(f.pl, pb, &h100) >=
                  rows * 4 * 2 + rows * (size_t)(D <= 64 ? 64 : (D + 63) / 64 * 64) * 4);
        }
        fixture_teardown(&f);
    }
}

/* rnn_cublas: dims from the attributes, Iw packing, workspace offsets. */
static void test_rnn(void)
{
    fixture f;
    if (!fixture_setup(&f, "dnn 1;\ngraph g(seed=4) {\n  input x: f16[7, 3, 5];\n  input h0: f32[4, 3, 6];\n"
                   "  input c0: f32[4, 3, 6];\n  weight w_ih: f32[4, 24, 12];\n  weight w_hh: f32[4, 24, 6];\n"
                   "  y, hn, cn = lstm(x, h0, c0, w_ih, w_hh, layers=2, bidirectional=true);\n"
                   "  output y, hn, cn;\n}\n"))
        return;
    const gpart *p = fixture_part_of_op(f.pl, "lstm");
    rnn_plan rp;
    char why[512];
    CHECK(p && gpu_rnn_analyze(f.pl, p, &rp, why, sizeof why));
    CHECK(rp.T == 7 && rp.N == 3 && rp.I == 5 && rp.H == 6 && rp.L == 2 && rp.D == 2 && rp.G == 4 && rp.Iw == 12);
    CHECK(rp.b_ih == -1 && rp.b_hh == -1 && rp.c0 >= 0 && rp.h_n >= 0 && rp.c_n >= 0);
    /* x is 7*3*5 floats = 420 bytes, rounded up to 512 */
    CHECK(rp.off_x == 0 && rp.off_wih == 512 && rp.off_lt % 256 == 0 && rp.ws_total > rp.off_lt + (4u << 20));
    /* buffers never overlap: each offset is past the previous one's size */
    CHECK(rp.off_ain + 7 * 3 * 2 * 24 * sizeof(float) <= rp.off_hh);
    fixture_teardown(&f);

    if (!fixture_setup(&f, "dnn 1;\ngraph g(seed=5) {\n  input x: i32[2, 1, 3];\n  input h0: f32[1, 1, 4];\n"
                   "  weight w_ih: f32[1, 4, 3];\n  weight w_hh: f32[1, 4, 4];\n  y = rnn(x, h0, w_ih, w_hh);\n"
                   "  output y: f32;\n}\n"))
        return;
    p = fixture_part_of_op(f.pl, "rnn");
    CHECK(p && !gpu_rnn_analyze(f.pl, p, &rp, why, sizeof why) && strstr(why, "x has dtype i32"));
    fixture_teardown(&f);
}

int main(void)
{
    test_sdpa_params();
    test_sdpa_choices();
    test_sdpa_wgmma_refusals();
    test_sdpa_wgmma_f32_o();
    test_sdpa_wgmma_inputs();
    test_sdpa_splitkv();
    test_sdpa_bwd();
    test_sdpa_bwd_wgmma();
    test_sdpa_wgmma_ragged();
    test_sdpa_fp8_refused();
    test_sdpa_fp8_wgmma();
    test_rnn();
    return test_summary("test_gpu_seq");
}
#else
int main(void)
{
    printf("test_gpu_seq: skipped (built without CUDA)\n");
    return 0;
}
#endif
