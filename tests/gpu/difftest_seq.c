/* difftest_seq.c — the differential tester of the attention and recurrent
 * engines (sdpa_flash_wgmma, sdpa_flash, sdpa_naive, sdpa_bwd, rnn_cublas): each case is a tiny
 * .dnn graph run by the CPU reference and by the GPU with one engine forced
 * (also sdpa_flash_tf32 and sdpa_bwd_flash),
 * every output compared with the METHOD.md tolerances of its dtype.  One line
 * per case, then "N passed, N failed".  Usage:
 *   difftest_seq [--quick] [--bench] [--list] [--dry] [FILTER]
 * --quick: reduced sweep (compute-sanitizer); --bench: the SDPA shapes of
 * bench/sdpa_peer.py on the GPU only, one line per timed partition
 * (DIFFTEST_ITERS, default 10); --dry: no GPU, run the reference and plan
 * every case (forced engines must accept).  Built by tests/gpu/run.sh BUILD --only seq. */
#include "diffharness.h"

#include "core/exec.h"
#include "data/data.h"
#include "gpu/engine.h"
#include "gpu/gpu.h"
#include "gpu/lower.h"
#include "ops/op.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_CASES = 1536, TEXT_MAX = 2048 };

typedef struct tcase {
    char id[200];
    char text[TEXT_MAX];
    char force[2][48];   /* "OP=ENGINE" */
    int nforce;
} tcase;

static tcase *cases;
static int ncases;
static dh_opts opts;

/* --dry (no GPU): lower, partition and select engines (forced ones must
 * accept) on a pretend sm_90, so the sweep is checked before device time. */
static xdnn_status dry_run(xgraph *g, const char *const *force, int nforce, char *engines, size_t len,
                           xdnn_diags_t *d)
{
    arena *ar = arena_create();
    ggraph *gg = gpu_lower(g, ar);
    gplan *pl = gpu_partition(gg, false);
    gpu_device dev = {.sm_count = 132, .cc_major = 9, .cc_minor = 0};
    xdnn_status s = gpu_select_engines(pl, &dev, force, nforce, 0, NULL, d);
    for (int i = 0; i < pl->nparts && s == XDNN_OK; i++) {
        size_t n = strlen(engines);
        snprintf(engines + n, len - n, "%s%s(ws %zu)", i ? "," : "", pl->parts[i].engine->name, pl->parts[i].ws_bytes);
    }
    arena_destroy(ar);
    return s;
}

__attribute__((format(printf, 4, 5))) static void add_case(const char *id, const char *f0, const char *f1,
                                                           const char *fmt, ...)
{
    if (ncases >= MAX_CASES) { /* a case dropped silently would be a test that cannot fail */
        fprintf(stderr, "%s: more than %d cases: raise MAX_CASES\n", id, (int)MAX_CASES);
        exit(2);
    }
    tcase *c = &cases[ncases++];
    snprintf(c->id, sizeof c->id, "%s", id);
    c->nforce = 0;
    if (f0)
        snprintf(c->force[c->nforce++], sizeof c->force[0], "%s", f0);
    if (f1)
        snprintf(c->force[c->nforce++], sizeof c->force[0], "%s", f1);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->text, sizeof c->text, fmt, ap);
    va_end(ap);
}

/* ---- SDPA sweeps */
typedef struct sshape {
    int B, Hq, Hk, Sq, Skv, D, Dv;
} sshape;

typedef struct sopt {
    const char *tag;
    const char *attrs;   /* extra attribute text, starts with ", " or empty */
    int bias;            /* 0 none, 1 [Sq, Skv], 2 [B, 1, 1, Skv], 3 [1, Hq, Sq, Skv], 4 [B, 1, Sq, Skv],
                            5 [B, Hq, Sq, Skv], 6 [1, 1, Sq, Skv] (2: f32, the others in q's dtype) */
    bool lens;
} sopt;

static const sopt sopts[] = {
    {"plain", "", 0, false},
    {"causal", ", causal=true", 0, false},
    {"causal-br", ", causal=true, align=\"bottom_right\"", 0, false},
    {"window8-4", ", window=[8, 4]", 0, false},
    {"window-1+3-br", ", window=[-1, 3], align=\"bottom_right\"", 0, false},
    {"seqlens-causal", ", causal=true", 0, true},
    {"bias-2d", ", scale=0.3", 1, false},
    {"bias-b11s+causal", ", causal=true", 2, false},
    {"dropout", ", dropout=0.2, seed=7", 0, false},
    {"all", ", window=[16, 0], align=\"bottom_right\", dropout=0.1, seed=3", 1, true},
};
enum { NSOPTS = sizeof sopts / sizeof sopts[0] };

static void lens_text(char *buf, size_t len, const sshape *s, const char *name, int full)
{
    size_t n = (size_t)snprintf(buf, len, "  input %s: i32[%d] = values(data=[", name, s->B);
    for (int b = 0; b < s->B && n < len; b++) {
        int v = b == 0 ? full : (full * (b + 1)) / (s->B + 2); /* batch 0 full, others shorter (maybe 0) */
        n += (size_t)snprintf(buf + n, len - n, "%s%d", b ? ", " : "", v);
    }
    snprintf(buf + n, len - n, "]);\n");
}

/* One graph: forward (and backward when bwd) with the given option. */
static void sdpa_case2(const sshape *s, const sopt *o, const char *dt, const char *layout, const char *fwd_engine,
                       const char *bwd_engine, bool o_f32, bool tf32);

static void sdpa_case(const sshape *s, const sopt *o, const char *dt, const char *layout, const char *fwd_engine,
                      bool bwd, bool o_f32)
{
    sdpa_case2(s, o, dt, layout, fwd_engine, bwd ? "sdpa_bwd" : NULL, o_f32, false);
}

/* bwd_engine NULL: forward only; tf32: the graph allows tf32 (f32 forward on
 * sdpa_flash_tf32, checked with the tf32 tolerance). */
static void sdpa_case2(const sshape *s, const sopt *o, const char *dt, const char *layout, const char *fwd_engine,
                       const char *bwd_engine, bool o_f32, bool tf32)
{
    const bool bwd = bwd_engine != NULL;
    char id[200], lq[256] = "", lkv[256] = "", bias[128] = "", ports[128] = "";
    snprintf(id, sizeof id, "sdpa%s/%s%s%s/%s/%s%s/%s/b%dh%dk%dq%dkv%dd%dv%d", bwd ? "_bwd" : "", fwd_engine,
             bwd ? "+" : "", bwd ? bwd_engine : "", o->tag, dt,
             o_f32 ? "-o32" : "",
             layout[0] ? layout + 1 : "bhsd", s->B, s->Hq, s->Hk, s->Sq, s->Skv, s->D, s->Dv);
    if (o->bias == 1)
        snprintf(bias, sizeof bias, "  input bias: %s[%d, %d];\n", dt, s->Sq, s->Skv);
    else if (o->bias == 2)
        snprintf(bias, sizeof bias, "  input bias: f32[%d, 1, 1, %d];\n", s->B, s->Skv);
    else if (o->bias == 3)
        snprintf(bias, sizeof bias, "  input bias: %s[1, %d, %d, %d];\n", dt, s->Hq, s->Sq, s->Skv);
    else if (o->bias == 4)
        snprintf(bias, sizeof bias, "  input bias: %s[%d, 1, %d, %d];\n", dt, s->B, s->Sq, s->Skv);
    else if (o->bias == 5)
        snprintf(bias, sizeof bias, "  input bias: %s[%d, %d, %d, %d];\n", dt, s->B, s->Hq, s->Sq, s->Skv);
    else if (o->bias == 6)
        snprintf(bias, sizeof bias, "  input bias: %s[1, 1, %d, %d];\n", dt, s->Sq, s->Skv);
    if (o->lens) {
        lens_text(lq, sizeof lq, s, "lq", s->Sq);
        lens_text(lkv, sizeof lkv, s, "lkv", s->Skv);
    }
    snprintf(ports, sizeof ports, "%s%s", o->bias ? ", bias=bias" : "", o->lens ? ", seq_len_q=lq, seq_len_kv=lkv" : "");
    char force0[48], force1[48] = "";
    snprintf(force0, sizeof force0, "sdpa=%s", fwd_engine);
    if (bwd)
        snprintf(force1, sizeof force1, "sdpa_bwd=%s", bwd_engine);
    const char *gattr = tf32 ? ", tf32=true" : "";
    if (!bwd) {
        add_case(id, force0, NULL,
                 "dnn 1;\ngraph g(seed=%d%s) {\n  input q: %s[%d, %d, %d, %d]%s;\n  input k: %s[%d, %d, %d, %d]%s;\n"
                 "  input v: %s[%d, %d, %d, %d]%s;\n%s%s%s"
                 "  o, stats = sdpa(q, k, v%s%s);\n  output o%s, stats;\n}\n",
                 ncases + 1, gattr, dt, s->B, s->Hq, s->Sq, s->D, layout, dt, s->B, s->Hk, s->Skv, s->D, layout, dt,
                 s->B, s->Hk, s->Skv, s->Dv, layout, bias, lq, lkv, ports, o->attrs, o_f32 ? ": f32" : "");
    } else {
        add_case(id, force0, force1,
                 "dnn 1;\ngraph g(seed=%d%s) {\n  input q: %s[%d, %d, %d, %d]%s;\n  input k: %s[%d, %d, %d, %d]%s;\n"
                 "  input v: %s[%d, %d, %d, %d]%s;\n  input do: %s[%d, %d, %d, %d]%s;\n%s%s%s"
                 "  o, stats = sdpa(q, k, v%s%s);\n"
                 "  dq, dk, dv = sdpa_bwd(q, k, v, o, do, stats%s%s);\n  output o, stats, dq, dk, dv;\n}\n",
                 ncases + 1, gattr, dt, s->B, s->Hq, s->Sq, s->D, layout, dt, s->B, s->Hk, s->Skv, s->D, layout, dt,
                 s->B, s->Hk, s->Skv, s->Dv, layout, dt, s->B, s->Hq, s->Sq, s->Dv, layout, bias, lq, lkv, ports, o->attrs,
                 ports, o->attrs);
    }
}

/* v2 (2026-11-23): every head dim on the tensor cores (D, Dv not multiples
 * of 16, Dv != D, every bucket 32..256), the tf32 forward of f32 graphs, and
 * the tensor-core backward (sdpa_bwd_flash) on every option and GQA ratio. */
static void sdpa_cases_v2(void)
{
    static const sshape hd_shapes[] = {
        {1, 2, 2, 31, 47, 40, 40},    {2, 4, 2, 70, 33, 80, 80},     {1, 2, 1, 65, 129, 96, 96},
        {1, 3, 3, 50, 61, 112, 112},  {1, 2, 2, 37, 90, 160, 160},   {1, 2, 1, 66, 40, 256, 256},
        {1, 2, 2, 31, 47, 40, 24},    {2, 6, 3, 9, 5, 256, 200},     {1, 1, 1, 70, 70, 16, 80},
        {1, 2, 2, 33, 17, 8, 8},      {1, 4, 1, 45, 77, 72, 136},    {1, 1, 1, 100, 100, 192, 192},
        {1, 8, 1, 40, 50, 64, 64},    {1, 2, 2, 1, 130, 128, 128},   {1, 32, 1, 17, 23, 32, 32},
    };
    static const char *const half[] = {"f16", "bf16"};
    const int nh = (int)(sizeof hd_shapes / sizeof hd_shapes[0]);
    for (int si = 0; si < nh; si++) {
        const sshape *s = &hd_shapes[si];
        for (int k = 0; k < (opts.quick ? 1 : 4); k++) {
            const int oi = (si + 3 * k) % NSOPTS;
            const char *dt = half[(si + k) % 2];
            const char *lay = (si + k) % 3 == 0 ? " @bshd" : "";
            sdpa_case2(s, &sopts[oi], dt, lay, "sdpa_flash", NULL, k == 1, false);
            sdpa_case2(s, &sopts[oi], "f32", lay, "sdpa_flash_tf32", NULL, false, true);
            sdpa_case2(s, &sopts[oi], dt, lay, "sdpa_flash", "sdpa_bwd_flash", false, false);
        }
    }
    /* the backward on the forward's sweep: every option on D = 64, 128 shapes */
    static const sshape mma_shapes[] = {
        {1, 1, 1, 2, 5, 64, 64},     {2, 4, 4, 17, 33, 64, 64},  {1, 2, 2, 100, 77, 128, 128},
        {2, 8, 2, 65, 130, 64, 64},  {1, 4, 1, 64, 64, 128, 128}, {3, 2, 1, 129, 200, 64, 64},
    };
    for (int si = 0; si < (opts.quick ? 2 : 6); si++)
        for (int oi = 0; oi < NSOPTS; oi++) {
            if (opts.quick && oi % 3 != si % 3)
                continue;
            sdpa_case2(&mma_shapes[si], &sopts[oi], half[(si + oi + 1) % 2], (si + oi) % 3 == 1 ? " @bshd" : "",
                       "sdpa_flash", "sdpa_bwd_flash", false, false);
        }
}

/* Every shape with no mask, causal top-left and causal bottom-right (--quick:
 * one of the three), f16 and bf16, bhsd and bshd taking turns; the forward on
 * `fwd`, and the backward on `bwd` unless NULL. */
static void sdpa_sweep_masks(const sshape *shapes, int n, const char *fwd, const char *bwd)
{
    static const char *const half[] = {"f16", "bf16"};
    for (int si = 0; si < n; si++)
        for (int oi = 0; oi < 3; oi++) { /* plain, causal, causal-br */
            if (opts.quick && oi != si % 3)
                continue;
            sdpa_case2(&shapes[si], &sopts[oi], half[(si + oi) % 2], (si + oi) % 3 == 1 ? " @bshd" : "", fwd, bwd,
                       false, false);
        }
}

/* v3 (2026-11-23): the Hopper forward (sdpa_flash_wgmma) over what it
 * claims: D = Dv of 64, 128, 256 and the padded 40, 96, 200; Sq, Skv of 1,
 * 17, 130, 4097 and others crossing its 128-row and 128/64-key tiles; GQA
 * ratios 1, 2, 4, 8 and MQA; no mask, causal top-left and bottom-right (Sq <
 * Skv and Sq > Skv); bhsd and bshd; f16 and bf16; stats on every case; more
 * work items than SMs (the persistent grid's hand-over from item to item). */
static void sdpa_cases_wgmma(void)
{
    static const sshape shapes[] = {
        {1, 2, 2, 1, 130, 128, 128},    {2, 4, 2, 17, 23, 64, 64},      {1, 8, 1, 130, 129, 128, 128},
        {1, 2, 2, 257, 300, 256, 256},  {2, 4, 4, 200, 77, 64, 64},     {1, 4, 1, 4097, 260, 128, 128},
        {1, 2, 1, 130, 4097, 64, 64},   {1, 32, 8, 256, 256, 128, 128}, {1, 2, 2, 45, 77, 40, 40},
        {1, 3, 3, 100, 140, 96, 96},    {1, 2, 1, 65, 190, 200, 200},   {1, 1, 1, 1, 1, 64, 64},
        {3, 6, 2, 129, 129, 128, 128},  {1, 2, 2, 300, 1, 256, 256},    {2, 16, 4, 64, 512, 64, 64},
        /* more work items (row blocks x heads) than an H100 has SMs: the persistent grid walks several */
        {4, 40, 8, 200, 300, 64, 64},   {2, 36, 6, 257, 129, 128, 128}, {1, 70, 10, 130, 100, 256, 256},
    };
    sdpa_sweep_masks(shapes, (int)(sizeof shapes / sizeof shapes[0]), "sdpa_flash_wgmma", NULL);
}

/* v6 (2026-11-24): every mask on the Hopper forward and the band masks on
 * the Hopper backward: windows open on either side or bounded on both, of
 * both alignments (bands narrower than a key tile, wider than one, rows that
 * see no key: Sq > Skv bottom-right), seq_len_q / seq_len_kv (batch 0 full,
 * the others shorter, some 0), bias broadcast over heads, batch or both,
 * dropout, and all at once; Dv != D (192/128, 128/64, 64/128, 40/24). */
static const sopt wg_sopts[] = {
    {"window8-4", ", window=[8, 4]", 0, false},
    {"window-1+3-br", ", window=[-1, 3], align=\"bottom_right\"", 0, false},
    {"window100-1", ", window=[100, -1]", 0, false},
    {"window200+0-br", ", window=[200, 0], align=\"bottom_right\"", 0, false},
    {"seqlens", "", 0, true},
    {"seqlens-causal-br", ", causal=true, align=\"bottom_right\"", 0, true},
    {"seqlens-window30+20", ", window=[30, 20]", 0, true},
    {"bias-2d", ", scale=0.3", 1, false},
    {"bias-b11s+causal", ", causal=true", 2, false},
    {"bias-1hss", "", 3, false},
    {"bias-b1ss+window", ", window=[50, 10]", 4, false},
    {"dropout", ", dropout=0.2, seed=7", 0, false},
    {"all", ", window=[16, 0], align=\"bottom_right\", dropout=0.1, seed=3", 1, true},
};
enum { WG_NSOPTS = sizeof wg_sopts / sizeof wg_sopts[0], WG_NBAND = 7 }; /* the first 7: no bias, no dropout */

static void sdpa_cases_wgmma_masks(void)
{
    static const sshape fwd[] = {
        {1, 2, 2, 1, 130, 128, 128},    {2, 4, 2, 17, 23, 64, 64},     {1, 8, 1, 130, 129, 128, 128},
        {1, 2, 2, 257, 300, 256, 256},  {2, 4, 4, 200, 77, 64, 64},    {1, 2, 1, 131, 1000, 64, 64},
        {3, 6, 2, 129, 129, 128, 128},  {4, 40, 8, 200, 300, 64, 64},  {1, 2, 2, 100, 140, 192, 128},
        {2, 4, 2, 131, 67, 128, 64},    {1, 2, 1, 65, 190, 64, 128},   {1, 3, 3, 45, 77, 40, 24},
        {2, 32, 8, 300, 257, 128, 128},
    };
    static const sshape bwd[] = {
        {2, 4, 2, 17, 23, 64, 64},     {1, 8, 1, 130, 129, 128, 128}, {2, 4, 4, 200, 77, 64, 64},
        {1, 2, 1, 131, 509, 64, 64},   {3, 6, 2, 129, 129, 128, 128}, {1, 3, 3, 100, 140, 96, 96},
        {2, 8, 8, 384, 383, 128, 128}, {2, 16, 4, 64, 512, 64, 64},
    };
    static const char *const half[] = {"f16", "bf16"};
    const int nf = (int)(sizeof fwd / sizeof fwd[0]), nb = (int)(sizeof bwd / sizeof bwd[0]);
    for (int si = 0; si < nf; si++)
        for (int k = 0; k < (opts.quick ? 1 : 5); k++) {
            const int oi = (si * 5 + k) % WG_NSOPTS; /* 13 x 5 = every option 5 times over the shapes */
            sdpa_case2(&fwd[si], &wg_sopts[oi], half[(si + k) % 2], (si + k) % 3 == 1 ? " @bshd" : "",
                       "sdpa_flash_wgmma", NULL, false, false);
        }
    for (int si = 0; si < nb; si++)
        for (int k = 0; k < (opts.quick ? 1 : 4); k++) {
            const int oi = (si * 4 + k) % WG_NBAND;
            sdpa_case2(&bwd[si], &wg_sopts[oi], half[(si + k) % 2], (si + k) % 3 == 0 ? " @bshd" : "",
                       "sdpa_flash", "sdpa_bwd_wgmma", false, false); /* o: an f32 intermediate */
        }
}

/* The forward on sdpa_flash_wgmma over n shapes, each with `per` of the nso options in turn (shape si takes
 * options si * per .. si * per + per - 1, mod nso; --quick: the (si % per)-th of them), f16 and bf16 and bhsd and
 * bshd taking turns, and with an f32 o (the SPLIT kernel) on every o32_mod-th. */
static void sdpa_sweep_opts(const sshape *shapes, int n, const sopt *so, int nso, int per, int o32_mod)
{
    static const char *const half[] = {"f16", "bf16"};
    for (int si = 0; si < n; si++)
        for (int k = 0; k < per; k++) {
            if (opts.quick && k != si % per)
                continue;
            const sopt *o = &so[(si * per + k) % nso];
            const char *dt = half[(si + k) % 2], *lay = (si + k) % 3 == 1 ? " @bshd" : "";
            sdpa_case2(&shapes[si], o, dt, lay, "sdpa_flash_wgmma", NULL, false, false);
            if ((si + k) % o32_mod == 0)
                sdpa_case2(&shapes[si], o, dt, lay, "sdpa_flash_wgmma", NULL, true, false);
        }
}

/* v8 (2026-11-24, issue 10): the Hopper forward's bias by TMA (kernel v7: a
 * bias in q's dtype with keys contiguous and rows 16-byte aligned, Skv % 8
 * == 0 here), every broadcast shape ([Sq, Skv], [1, 1, Sq, Skv], [1, Hq, Sq,
 * Skv], [B, 1, Sq, Skv], [B, Hq, Sq, Skv]) with Sq and Skv off the 128-row /
 * 128- and 64-key tiles (TMA's zero fill on the edges, masked keys still
 * -inf), Sq != Skv both ways, Sq = 1, Skv = 8; D = Dv of 64, 128, 256 and
 * 192/128; GQA; causal top-left and bottom-right, windows, seq lens and
 * dropout beside the bias; more work items than SMs (the bias ring runs on
 * across items); f16 and bf16, bhsd and bshd; 16-bit and f32 o. */
static const sopt bt_sopts[] = {
    {"bias-2d", ", scale=0.3", 1, false},
    {"bias-1hss+causal", ", causal=true", 3, false},
    {"bias-b1ss+window", ", window=[50, 10]", 4, false},
    {"bias-bhss", "", 5, false},
    {"bias-11ss+seqlens", "", 6, true},
    {"bias-bhss+dropout-br", ", causal=true, align=\"bottom_right\", dropout=0.1, seed=5", 5, false},
    {"bias-1hss+seqlens-window", ", window=[30, 20]", 3, true},
};
enum { BT_NSOPTS = sizeof bt_sopts / sizeof bt_sopts[0] };

static void sdpa_cases_wgmma_biastma(void)
{
    static const sshape shapes[] = {
        {2, 4, 2, 200, 136, 128, 128}, {1, 2, 1, 77, 264, 64, 64},    {2, 3, 3, 130, 200, 256, 256},
        {1, 8, 2, 257, 392, 128, 128}, {3, 2, 2, 1, 88, 128, 128},    {1, 4, 4, 300, 8, 64, 64},
        {4, 40, 8, 200, 304, 64, 64},  {2, 36, 6, 136, 128, 128, 128}, {1, 2, 2, 100, 144, 192, 128},
    };
    sdpa_sweep_opts(shapes, (int)(sizeof shapes / sizeof shapes[0]), bt_sopts, BT_NSOPTS, BT_NSOPTS, 4);
}

/* v7 (2026-11-24): the Hopper forward with an f32 o (the SPLIT kernel: P as
 * hi + lo 16-bit halves, two P V wgmmas per k-step, o stored as floats), held
 * to the f32 tolerance: D = Dv of 64, 128, 256 and Dv != D; Sq, Skv odd (77,
 * 1000, 1) and crossing the tiles; GQA 1, 2, 4, 8; every option of sopts and
 * wg_sopts (masks, seq lens, bias, dropout); f16 and bf16, bhsd and bshd; and
 * the forward feeding sdpa_bwd_wgmma through its default f32 intermediate o. */
static void sdpa_cases_wgmma_o32(void)
{
    static const sshape shapes[] = {
        {1, 2, 2, 77, 1000, 64, 64},   {2, 4, 2, 130, 77, 128, 128},  {1, 8, 1, 1000, 77, 64, 64},
        {1, 2, 2, 257, 300, 256, 256}, {2, 4, 4, 200, 129, 128, 128}, {1, 2, 1, 1, 130, 128, 128},
        {1, 2, 2, 100, 140, 192, 128}, {2, 16, 4, 64, 512, 64, 64},   {1, 3, 3, 45, 77, 40, 24},
        {4, 40, 8, 200, 300, 64, 64},
    };
    static const char *const half[] = {"f16", "bf16"};
    const int n = (int)(sizeof shapes / sizeof shapes[0]);
    for (int si = 0; si < n; si++) {
        for (int oi = 0; oi < 3; oi++) /* plain, causal, causal-br */
            if (!opts.quick || oi == si % 3)
                sdpa_case2(&shapes[si], &sopts[oi], half[(si + oi) % 2], (si + oi) % 3 == 1 ? " @bshd" : "",
                           "sdpa_flash_wgmma", NULL, true, false);
        for (int k = 0; k < (opts.quick ? 1 : 3); k++) {
            const int oi = (si * 3 + k) % WG_NSOPTS; /* 10 x 3 = every option twice or more */
            sdpa_case2(&shapes[si], &wg_sopts[oi], half[(si + k + 1) % 2], (si + k) % 3 == 2 ? " @bshd" : "",
                       "sdpa_flash_wgmma", NULL, true, false);
        }
    }
    static const sshape bwd[] = {{2, 4, 2, 77, 130, 64, 64}, {1, 8, 2, 257, 300, 128, 128}};
    for (int si = 0; si < 2; si++)
        for (int oi = 0; oi < 2; oi++)
            sdpa_case2(&bwd[si], &sopts[oi], half[(si + oi) % 2], "", "sdpa_flash_wgmma", "sdpa_bwd_wgmma", false,
                       false); /* o: an f32 intermediate, now the forward's own */
}

/* Session 9 (2026-11-24, issue 10, kernel v8): a band open on one side (causal both alignments, window [L, -1] and
 * [-1, R], seq lens with causal) on sdpa_flash_wgmma's persistent grid drawing its items from a counter, every
 * shape with more work items (row blocks x B x Hq) than an H100's 132 SMs, so each block takes several items of
 * different lengths: Sq, Skv prime or off the tiles, Sq > Skv (bottom-right rows that see no key) and Sq < Skv,
 * GQA 1, 4, 8, 32, D = Dv 64, 128, 256, f16 and bf16, bhsd and bshd, 16-bit and f32 o, a bias beside causal.
 * (The section order itself also runs on the small shapes of the sweeps above, with one block per item.)  Ids
 * "sdpa/sdpa_flash_wgmma/lpt-...". */
static const sopt causal_sopts[] = {
    {"lpt-causal", ", causal=true", 0, false},
    {"lpt-causal-br", ", causal=true, align=\"bottom_right\"", 0, false},
    {"lpt-window100-1", ", window=[100, -1]", 0, false},
    {"lpt-window-1+3-br", ", window=[-1, 3], align=\"bottom_right\"", 0, false},
    {"lpt-seqlens-causal-br", ", causal=true, align=\"bottom_right\"", 0, true},
    {"lpt-bias-1hss+causal", ", causal=true", 3, false},
};
enum { CA_NSOPTS = sizeof causal_sopts / sizeof causal_sopts[0] };

static void sdpa_cases_wgmma_causal(void)
{
    static const sshape shapes[] = {
        {2, 32, 8, 263, 263, 128, 128}, {1, 64, 2, 389, 131, 64, 64},  {2, 48, 48, 131, 509, 64, 64},
        {3, 32, 1, 131, 200, 256, 256}, {4, 40, 8, 300, 200, 64, 64},  {1, 12, 4, 1543, 1543, 64, 64},
        {2, 36, 9, 257, 300, 128, 128}, {5, 29, 29, 137, 137, 128, 128},
    };
    sdpa_sweep_opts(shapes, (int)(sizeof shapes / sizeof shapes[0]), causal_sopts, CA_NSOPTS, 3, 5);
}

/* Session 10 (2026-11-24, issue 10, kernel v9): the persistent grid begins each next work item beside the last
 * P V of the one before (XDNN_SDPA_WGMMA_CHAIN).  Every shape has more items than an H100's 132 SMs, so each
 * block chains several: the static walk (no mask, a window bounded on both sides, seq lens: items with no key
 * tile between others) and the counter's walk (causal both alignments, a window open on one side: items of
 * different lengths); Sq 1, 77, 130 (a last row block of 2 rows), 300 > Skv, 389; GQA 1, 3, 5, 8; D 64, 128;
 * f16 and bf16, bhsd and bshd, 16-bit and f32 o.  Ids "sdpa/sdpa_flash_wgmma/chain-...". */
static const sopt chain_sopts[] = {
    {"chain-plain", "", 0, false},
    {"chain-causal", ", causal=true", 0, false},
    {"chain-causal-br", ", causal=true, align=\"bottom_right\"", 0, false},
    {"chain-seqlens", "", 0, true},
    {"chain-window8-4", ", window=[8, 4]", 0, false},
    {"chain-window100-1", ", window=[100, -1]", 0, false},
};
enum { CH_NSOPTS = sizeof chain_sopts / sizeof chain_sopts[0] };

static void sdpa_cases_wgmma_chain(void)
{
    static const sshape shapes[] = {
        {4, 40, 8, 1, 300, 128, 128},  {2, 72, 8, 77, 200, 64, 64},  {2, 36, 12, 130, 257, 128, 128},
        {3, 24, 24, 300, 130, 128, 128}, {1, 48, 6, 389, 389, 64, 64}, {2, 40, 8, 129, 140, 128, 128},
    };
    sdpa_sweep_opts(shapes, (int)(sizeof shapes / sizeof shapes[0]), chain_sopts, CH_NSOPTS, 3, 4);
}

/* v4 (2026-11-24): the Hopper backward (sdpa_bwd_wgmma, forward on
 * sdpa_flash) over what it claims: D = Dv of 64, 128 and 8, 40, 96 (padded
 * to 64/128); Sq, Skv of 1, primes, crossing its 64-query and 128-key tiles,
 * Sq != Skv both ways; GQA 1, 2, 4, 8 and MQA; no mask, causal top-left and
 * bottom-right; bhsd and bshd; f16 and bf16; stats on every case.  No shape
 * where every row sees one key (dq would be 0: nothing to compare), and no
 * 300 rows over 2 keys (dV sums 300 bf16-rounded P of ~0.5: 1.5e-2 absolute,
 * over the 1e-2 tolerance, in every engine that rounds P as FA2/FA3 do). */
static void sdpa_cases_bwd_wgmma(void)
{
    static const sshape shapes[] = {
        {1, 2, 2, 1, 130, 128, 128},   {2, 4, 2, 17, 23, 64, 64},     {1, 8, 1, 130, 129, 128, 128},
        {2, 4, 4, 200, 77, 64, 64},    {1, 4, 1, 257, 260, 128, 128}, {1, 2, 1, 131, 509, 64, 64},
        {1, 32, 8, 256, 256, 128, 128}, {1, 2, 2, 45, 77, 40, 40},    {1, 3, 3, 100, 140, 96, 96},
        {1, 1, 1, 2, 3, 64, 64},       {3, 6, 2, 129, 129, 128, 128}, {1, 2, 2, 300, 9, 128, 128},
        {2, 16, 4, 64, 512, 64, 64},   {1, 2, 2, 67, 31, 8, 8},       {2, 8, 8, 384, 383, 128, 128},
        /* the causal block order (longest key blocks first, in sections of heads; XDNN_SDPA_BWD_LPT=2 leaves a
         * section of one head at 9 = 3 x 3 heads): Sq < Skv and Sq > Skv, 5 and 6 key blocks */
        {3, 6, 3, 200, 520, 128, 128}, {2, 8, 2, 777, 700, 64, 64},
    };
    static const char *const half[] = {"f16", "bf16"};
    const int n = (int)(sizeof shapes / sizeof shapes[0]);
    for (int si = 0; si < n; si++)
        for (int oi = 0; oi < 3; oi++) { /* plain, causal, causal-br */
            if ((opts.quick && oi != si % 3) || (shapes[si].Sq == 1 && oi == 1)) /* one row sees key 0 only */
                continue;
            sdpa_case2(&shapes[si], &sopts[oi], half[(si + oi) % 2], (si + oi) % 3 == 1 ? " @bshd" : "",
                       "sdpa_flash", "sdpa_bwd_wgmma", false, false);
        }
}

/* v7 (2026-11-24, session 9): sdpa_bwd_wgmma past 128 columns (its wide kernel, 64 keys per block, DP = 192
 * or 256) and D != Dv (both sides zero-padded to the wider): D of 144, 160, 192, 200, 256, Dv != D both ways
 * (192/128 as DeepSeek's MLA, 128/64, 64/128, 256/128, 96/160); Sq, Skv of 1, 2, primes, crossing the 64-key
 * blocks; GQA and MQA; no mask, causal of both alignments, and one band option (windows, seq lens) per shape;
 * bhsd and bshd; f16 and bf16.  Ragged wide cases: sdpa_cases_ragged_wide. */
static void sdpa_cases_bwd_wide(void)
{
    /* sopts' plain, causal, causal-br under tags of their own: "wide-" picks these cases (memcheck --quick) */
    static const sopt mask[] = {{"wide-plain", "", 0, false},
                                {"wide-causal", ", causal=true", 0, false},
                                {"wide-causal-br", ", causal=true, align=\"bottom_right\"", 0, false}};
    static const sshape shapes[] = {
        {1, 2, 2, 1, 130, 256, 256},   {2, 4, 2, 17, 23, 192, 128},   {1, 8, 1, 130, 129, 160, 160},
        {2, 4, 4, 200, 77, 144, 144},  {1, 4, 1, 257, 260, 256, 256}, {1, 2, 1, 131, 509, 192, 128},
        {1, 4, 4, 67, 131, 128, 64},   {1, 2, 2, 45, 77, 64, 128},    {2, 6, 2, 129, 129, 256, 256},
        {1, 1, 1, 2, 3, 256, 256},     {1, 3, 3, 100, 140, 256, 128}, {1, 2, 1, 61, 200, 96, 160},
        {2, 16, 4, 64, 512, 256, 256}, {3, 6, 2, 131, 67, 200, 136},  {1, 4, 2, 384, 383, 192, 192},
    };
    static const char *const half[] = {"f16", "bf16"};
    const int n = (int)(sizeof shapes / sizeof shapes[0]);
    for (int si = 0; si < n; si++) {
        for (int oi = 0; oi < 3; oi++) { /* plain, causal, causal-br */
            if ((opts.quick && oi != si % 3) || (shapes[si].Sq == 1 && oi == 1)) /* one row sees key 0 only */
                continue;
            sdpa_case2(&shapes[si], &mask[oi], half[(si + oi) % 2], (si + oi) % 3 == 1 ? " @bshd" : "",
                       "sdpa_flash", "sdpa_bwd_wgmma", false, false);
        }
        if (!opts.quick || si % 4 == 0) /* a band option: windows, seq lens */
            sdpa_case2(&shapes[si], &wg_sopts[si % WG_NBAND], half[si % 2], si % 3 == 2 ? " @bshd" : "",
                       "sdpa_flash", "sdpa_bwd_wgmma", false, false);
    }
}

/* v5 (2026-11-24): the split-KV forward (sdpa_splitkv) for decode and
 * chunked prefill: Sq 1, 2, 7, 64, 130, 300 against Skv 1, 77, 4097, 33000
 * (one split when the keys are few, up to dozens when many); GQA 1, 4, 8, 32
 * and MQA (the group's heads packed into 16- or 64-row tiles); no mask,
 * causal bottom-right (Sq > Skv: rows that see no key) and top-left; D = Dv
 * of 64, 128, 256 and padded 96/80; bhsd and bshd; f16 and bf16; stats on
 * every case.  The references stay small: long Skv only with few rows. */
static void sdpa_cases_splitkv(void)
{
    static const sshape shapes[] = {
        {1, 32, 8, 1, 4097, 128, 128}, {2, 32, 4, 1, 33000, 128, 128}, {3, 32, 1, 1, 77, 64, 64},
        {1, 32, 32, 2, 4097, 64, 64},  {2, 8, 2, 7, 4097, 128, 128},   {1, 16, 2, 64, 4097, 128, 128},
        {1, 2, 1, 130, 33000, 64, 64}, {1, 4, 1, 300, 4097, 64, 64},   {2, 4, 4, 1, 1, 64, 64},
        {1, 8, 2, 300, 77, 256, 256},  {1, 4, 1, 2, 33000, 256, 256},  {1, 6, 2, 64, 1, 96, 80},
        {4, 32, 8, 1, 4097, 128, 128}, {1, 8, 8, 7, 33000, 64, 64},    {2, 64, 2, 2, 300, 128, 128},
        {1, 4, 1, 40, 1000, 256, 256}, {1, 4, 2, 3, 500, 72, 40}, /* D != Dv, both padded to 128 */
    };
    sdpa_sweep_masks(shapes, (int)(sizeof shapes / sizeof shapes[0]), "sdpa_splitkv", NULL);
    /* the shipped transformer block's attention (graphs/transformer_block.dnn: f32, causal, B 2, H 4, S 64,
     * HD 32) on sdpa_flash_tf32, the engine it takes when the graph allows tf32 */
    const sshape block = {2, 4, 4, 64, 64, 32, 32};
    sdpa_case2(&block, &sopts[1], "f32", " @bshd", "sdpa_flash_tf32", NULL, false, true);
}

/* ---- serving attention (issue 14): a paged K/V cache and ragged THD
 * sequences on sdpa_splitkv, the only engine that takes them.  Pages of 16,
 * 64 and 256 keys in a shuffled order (a pool with spare pages; table entries
 * past a sequence's last page are -1, never read), sequences of different
 * lengths (1, primes, a page boundary), GQA 32/8, 8/2 and MQA, D 64 and 128,
 * f16 and bf16, decode and chunked prefill (causal bottom-right), ragged q
 * and/or k/v.  Ids "sdpa/sdpa_splitkv/serve/...". */
typedef struct serve_shape {
    const char *tag;
    int B, Hq, Hk, D, ps, Sq; /* ps 0: k/v ragged (THD); Sq 0: q ragged (THD) */
    int lq[4], lkv[4];
    bool causal, bf16;
    bool head_major; /* the pools [P, Hk, page_size, D] in row order (head-major), else @bshd (vLLM's) */
} serve_shape;

static void serve_case(const serve_shape *s)
{
    char text[TEXT_MAX], id[200];
    const char *dt = s->bf16 ? "bf16" : "f16";
    int n = 0, maxl = 0, tq = 0, tkv = 0;
    for (int b = 0; b < s->B; b++) {
        maxl = s->lkv[b] > maxl ? s->lkv[b] : maxl;
        tq += s->lq[b];
        tkv += s->lkv[b];
    }
    snprintf(id, sizeof id, "sdpa/sdpa_splitkv/serve/%s/%s/b%dh%dk%dd%d", s->tag, dt, s->B, s->Hq, s->Hk, s->D);
    n += snprintf(text + n, sizeof text - (size_t)n, "dnn 1;\ngraph g(seed=%d) {\n", ncases + 7);
    if (s->Sq)
        n += snprintf(text + n, sizeof text - (size_t)n, "  input q: %s[%d, %d, %d, %d] @bshd;\n", dt, s->B, s->Hq,
                      s->Sq, s->D);
    else
        n += snprintf(text + n, sizeof text - (size_t)n, "  input q: %s[%d, %d, %d];\n", dt, tq, s->Hq, s->D);
    char ports[160] = "";
    if (s->ps) {
        const int mp = (maxl + s->ps - 1) / s->ps, P = s->B * mp + 2;
        int perm[1024];
        for (int i = 0; i < P && i < 1024; i++)
            perm[i] = i;
        uint32_t r = 12345u + (uint32_t)ncases;
        for (int i = P - 1; i > 0; i--) { /* Fisher-Yates with an LCG: a shuffled page order */
            r = r * 1664525u + 1013904223u;
            int j = (int)((r >> 8) % (uint32_t)(i + 1)), t = perm[i];
            perm[i] = perm[j], perm[j] = t;
        }
        n += snprintf(text + n, sizeof text - (size_t)n,
                      "  input k: %s[%d, %d, %d, %d]%s;\n  input v: %s[%d, %d, %d, %d]%s;\n"
                      "  input pt: i32[%d, %d] = values(data=[",
                      dt, P, s->Hk, s->ps, s->D, s->head_major ? "" : " @bshd", dt, P, s->Hk, s->ps, s->D,
                      s->head_major ? "" : " @bshd", s->B, mp);
        for (int b = 0; b < s->B; b++)
            for (int p = 0; p < mp; p++)
                n += snprintf(text + n, sizeof text - (size_t)n, "%s%d", b + p ? ", " : "",
                              p * s->ps < s->lkv[b] ? perm[b * mp + p] : -1);
        n += snprintf(text + n, sizeof text - (size_t)n, "]);\n  input lkv: i32[%d] = values(data=[", s->B);
        for (int b = 0; b < s->B; b++)
            n += snprintf(text + n, sizeof text - (size_t)n, "%s%d", b ? ", " : "", s->lkv[b]);
        n += snprintf(text + n, sizeof text - (size_t)n, "]);\n");
        snprintf(ports, sizeof ports, ", page_table=pt, seq_len_kv=lkv");
    } else {
        n += snprintf(text + n, sizeof text - (size_t)n, "  input k: %s[%d, %d, %d];\n  input v: %s[%d, %d, %d];\n",
                      dt, tkv, s->Hk, s->D, dt, tkv, s->Hk, s->D);
    }
    const int *lens[2] = {s->Sq ? NULL : s->lq, s->ps ? NULL : s->lkv};
    static const char *const names[2] = {"offq", "offkv"}, *const port_names[2] = {"seq_offsets_q", "seq_offsets_kv"};
    for (int w = 0; w < 2; w++) {
        if (!lens[w])
            continue;
        n += snprintf(text + n, sizeof text - (size_t)n, "  input %s: i32[%d] = values(data=[0", names[w], s->B + 1);
        for (int b = 0, acc = 0; b < s->B; b++)
            n += snprintf(text + n, sizeof text - (size_t)n, ", %d", acc += lens[w][b]);
        n += snprintf(text + n, sizeof text - (size_t)n, "]);\n");
        size_t pl = strlen(ports);
        snprintf(ports + pl, sizeof ports - pl, ", %s=%s", port_names[w], names[w]);
    }
    n += snprintf(text + n, sizeof text - (size_t)n, "  o, stats = sdpa(q, k, v%s%s);\n  output o, stats;\n}\n", ports,
                  s->causal ? ", causal=true, align=\"bottom_right\"" : "");
    if (n >= (int)sizeof text - 1) {
        fprintf(stderr, "difftest_seq: case %s does not fit TEXT_MAX\n", id);
        return;
    }
    add_case(id, "sdpa=sdpa_splitkv", NULL, "%s", text);
}

static void sdpa_cases_serve(void)
{
    static const serve_shape shapes[] = {
        {"paged16-decode", 4, 32, 8, 128, 16, 1, {0}, {1, 97, 509, 256}, false, true, false},
        {"paged64-decode-mqa", 3, 8, 1, 64, 64, 1, {0}, {13, 1021, 64}, false, false, false},
        {"paged256-decode", 2, 32, 8, 128, 256, 1, {0}, {2053, 257}, false, false, false},
        {"paged64-decode-long", 2, 32, 8, 64, 64, 1, {0}, {4099, 31}, false, true, false},
        {"paged64-prefill7-causal-br", 2, 8, 2, 128, 64, 7, {0}, {300, 7}, true, true, false},
        {"paged16-raggedq-causal-br", 2, 32, 8, 128, 16, 0, {3, 1}, {200, 37}, true, true, false},
        {"ragged-qkv-causal-br", 3, 8, 2, 64, 0, 0, {1, 5, 3}, {7, 131, 1}, true, false, false},
        {"ragged-kv-decode", 3, 4, 1, 128, 0, 1, {0}, {50, 3, 1000}, false, true, false},
        {"ragged-qkv-prefill", 2, 8, 8, 64, 0, 0, {67, 13}, {67, 13}, true, true, false},
        /* head-major pools; the page looked up a tile ahead (pages of 64, 256), every split count */
        {"paged64-decode-hm-gqa4", 4, 32, 8, 128, 64, 1, {0}, {1, 64, 65, 4099}, false, true, true},
        {"paged256-decode-hm-gqa1", 3, 4, 4, 128, 256, 1, {0}, {257, 1, 2053}, false, true, true},
        {"paged16-decode-hm-mqa", 3, 8, 1, 64, 16, 1, {0}, {17, 509, 1}, false, false, true},
        {"paged64-decode-gqa8-primes", 4, 64, 8, 128, 64, 1, {0}, {127, 2053, 3, 1}, false, true, false},
        {"paged256-prefill5-hm-causal-br", 2, 16, 2, 128, 256, 5, {0}, {5, 769}, true, true, true},
        {"paged256-decode-hm-long", 2, 32, 8, 128, 256, 1, {0}, {16411, 64}, false, true, true},
        {"paged256-decode-gqa1-bshd", 2, 8, 8, 128, 256, 1, {0}, {1031, 256}, false, false, false},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        if (!opts.quick || i % 2 == 0)
            serve_case(&shapes[i]);
}

/* ---- ragged THD sequences on the tensor cores (issue 14): the forward and
 * backward with seq_offsets_q and/or seq_offsets_kv, each shape on the
 * mma.sync pair (sdpa_flash + sdpa_bwd_flash) and on the Hopper pair
 * (sdpa_flash_wgmma + sdpa_bwd_wgmma, where TMA tiles of 128 rows cross into
 * the next sequence).  Lengths 0, 1, 7, 33, 64, 65, 100, 129, 257 (64-row tile
 * edges), GQA 8/2, MQA and MHA, causal with both alignments, windows, D 64
 * and 128, f16 and bf16, i32 and i64 offsets, packed q with dense k/v (with
 * and without seq_len_kv) and the reverse (with and without seq_len_q); the
 * forward alone also with an f32 o (P as hi + lo halves).  The wgmma pair
 * also takes longer odd packings (primes, 127/129/383: every 128-key block
 * of the backward and 128-row item of the forward straddles two sequences).
 * Ids "sdpa/sdpa_flash/ragged/...", "sdpa_bwd/sdpa_flash+sdpa_bwd_flash/ragged/...",
 * "sdpa/sdpa_flash_wgmma/ragged/..." and "sdpa_bwd/sdpa_flash_wgmma+sdpa_bwd_wgmma/ragged/...". */
typedef struct ragged_shape {
    const char *tag;
    int B, Hq, Hk, D;
    int Sq, Skv;       /* 0: that side packed (THD) with offsets from lq / lkv; else dense [B, H, S, D] */
    int lq[12], lkv[12]; /* lengths: packed sides' offsets, or a dense side's seq_len when lens */
    bool lens;         /* a dense side gets seq_len_q / seq_len_kv from lq / lkv */
    const char *attrs;
    bool bf16, i64, bwd, o_f32;
} ragged_shape;

static void ragged_case(const ragged_shape *s, bool wgmma)
{
    char text[TEXT_MAX], id[200], ports[160] = "", shape[2][64];
    const char *dt = s->bf16 ? "bf16" : "f16";
    const char *fwd = wgmma ? "sdpa_flash_wgmma" : "sdpa_flash", *bwd = wgmma ? "sdpa_bwd_wgmma" : "sdpa_bwd_flash";
    int n = 0, tot[2] = {0, 0};
    for (int b = 0; b < s->B; b++)
        tot[0] += s->lq[b], tot[1] += s->lkv[b];
    snprintf(id, sizeof id, "%s/%s%s%s/ragged/%s/%s%s/b%dh%dk%dd%d", s->bwd ? "sdpa_bwd" : "sdpa", fwd, s->bwd ? "+" : "",
             s->bwd ? bwd : "", s->tag, dt, s->o_f32 ? "-o32" : "", s->B, s->Hq, s->Hk, s->D);
    const int S[2] = {s->Sq, s->Skv}, H[2] = {s->Hq, s->Hk}, *len[2] = {s->lq, s->lkv};
    for (int w = 0; w < 2; w++) /* w = 0: q, o, do; w = 1: k, v */
        if (S[w])
            snprintf(shape[w], sizeof shape[w], "%s[%d, %d, %d, %d]", dt, s->B, H[w], S[w], s->D);
        else
            snprintf(shape[w], sizeof shape[w], "%s[%d, %d, %d]", dt, tot[w], H[w], s->D);
    n += snprintf(text + n, sizeof text - (size_t)n,
                  "dnn 1;\ngraph g(seed=%d) {\n  input q: %s;\n  input k: %s;\n  input v: %s;\n", ncases + 11,
                  shape[0], shape[1], shape[1]);
    if (s->bwd)
        n += snprintf(text + n, sizeof text - (size_t)n, "  input do: %s;\n", shape[0]);
    static const char *const offs[2] = {"seq_offsets_q", "seq_offsets_kv"}, *const lens[2] = {"seq_len_q", "seq_len_kv"};
    for (int w = 0; w < 2; w++) {
        if (S[w] && !s->lens)
            continue;
        const bool packed = S[w] == 0;
        n += snprintf(text + n, sizeof text - (size_t)n, "  input x%d: %s[%d] = values(data=[%s", w,
                      packed && s->i64 ? "i64" : "i32", s->B + (packed ? 1 : 0), packed ? "0" : "");
        for (int b = 0, acc = 0; b < s->B; b++) {
            acc = packed ? acc + len[w][b] : len[w][b];
            n += snprintf(text + n, sizeof text - (size_t)n, "%s%d", packed || b ? ", " : "", acc);
        }
        n += snprintf(text + n, sizeof text - (size_t)n, "]);\n");
        size_t pl = strlen(ports);
        snprintf(ports + pl, sizeof ports - pl, ", %s=x%d", packed ? offs[w] : lens[w], w);
    }
    n += snprintf(text + n, sizeof text - (size_t)n, "  o, stats = sdpa(q, k, v%s%s);\n", ports, s->attrs);
    if (s->bwd)
        n += snprintf(text + n, sizeof text - (size_t)n, "  dq, dk, dv = sdpa_bwd(q, k, v, o, do, stats%s%s);\n", ports,
                      s->attrs);
    n += snprintf(text + n, sizeof text - (size_t)n, "  output o%s, stats%s;\n}\n", s->o_f32 ? ": f32" : "",
                  s->bwd ? ", dq, dk, dv" : "");
    if (n >= (int)sizeof text - 1) {
        fprintf(stderr, "difftest_seq: case %s does not fit TEXT_MAX\n", id);
        return;
    }
    char force[2][48];
    snprintf(force[0], sizeof force[0], "sdpa=%s", fwd);
    snprintf(force[1], sizeof force[1], "sdpa_bwd=%s", bwd);
    add_case(id, force[0], s->bwd ? force[1] : NULL, "%s", text);
}

static void sdpa_cases_ragged(void)
{
    static const char CAUSAL[] = ", causal=true", CAUSAL_BR[] = ", causal=true, align=\"bottom_right\"";
    static const ragged_shape shapes[] = {
        {"qkv-plain", 4, 8, 2, 64, 0, 0, {1, 7, 33, 100}, {1, 7, 33, 100}, false, "", false, false, true, false},
        {"qkv-causal-br-empty", 5, 8, 2, 128, 0, 0, {7, 0, 100, 1, 33}, {9, 5, 100, 1, 40}, false, CAUSAL_BR, true,
         true, true, false},
        {"qkv-causal-tl", 4, 8, 2, 64, 0, 0, {33, 1, 100, 7}, {40, 3, 100, 7}, false, CAUSAL, true, false, true, false},
        {"qkv-window16-4", 3, 4, 4, 128, 0, 0, {100, 7, 65}, {70, 7, 128}, false, ", window=[16, 4]", false, false,
         true, false},
        {"qkv-window8-0-br-mqa", 3, 4, 1, 64, 0, 0, {64, 33, 1}, {100, 33, 7}, false,
         ", window=[8, 0], align=\"bottom_right\"", true, true, true, false},
        {"q-kvdense-causal-br", 4, 8, 2, 64, 0, 70, {1, 7, 0, 100}, {0}, false, CAUSAL_BR, false, false, true, false},
        {"q-kvdense-lens-causal", 3, 8, 2, 128, 0, 100, {33, 7, 1}, {100, 1, 50}, true, CAUSAL, false, true, true,
         false},
        {"kv-qdense-causal-br-empty", 4, 8, 2, 64, 33, 0, {0}, {1, 100, 0, 7}, false, CAUSAL_BR, true, false, true,
         false},
        {"kv-qdense-lens", 3, 4, 2, 128, 65, 0, {65, 1, 30}, {33, 100, 7}, true, "", false, true, true, false},
        {"qkv-causal-fwd", 4, 8, 2, 64, 0, 0, {1, 7, 33, 100}, {1, 7, 33, 100}, false, CAUSAL, false, false, false,
         true},
        {"qkv-causal-br-fwd-long", 3, 16, 2, 128, 0, 0, {129, 257, 64}, {129, 300, 64}, false, CAUSAL_BR, true, true,
         false, false},
        {"qkv-plain-fwd", 4, 8, 8, 64, 0, 0, {65, 0, 1, 7}, {33, 1, 0, 64}, false, "", true, false, false, false},
    };
    /* the Hopper pair only: longer odd packings, 128-row items and 128-key blocks across sequence ends */
    static const ragged_shape long_shapes[] = {
        {"qkv-causal-odd", 6, 8, 2, 128, 0, 0, {1, 0, 127, 129, 257, 509}, {1, 0, 127, 129, 257, 509}, false, CAUSAL,
         true, false, true, false},
        {"qkv-plain-odd", 5, 4, 4, 64, 0, 0, {383, 1, 200, 0, 131}, {383, 1, 200, 0, 131}, false, "", false, true,
         true, false},
        {"qkv-causal-br-diff", 4, 16, 2, 128, 0, 0, {61, 1, 300, 130}, {200, 7, 300, 129}, false, CAUSAL_BR, true,
         false, true, false},
        {"q-kvdense-lens-window", 3, 8, 8, 64, 0, 260, {257, 3, 130}, {260, 100, 1}, true, ", window=[64, 8]", false,
         false, true, false},
        {"kv-qdense-lens-causal-br-mqa", 3, 4, 1, 128, 190, 0, {190, 100, 7}, {1, 389, 190}, true, CAUSAL_BR, true,
         true, true, false},
        {"qkv-causal-fwd-odd", 3, 8, 2, 128, 0, 0, {129, 255, 1}, {129, 255, 1}, false, CAUSAL, true, false, false,
         true},
        {"qkv-causal-many", 12, 4, 2, 64, 0, 0, {5, 300, 1, 0, 77, 128, 129, 64, 1000, 3, 255, 17},
         {5, 300, 1, 0, 77, 128, 129, 64, 1000, 3, 255, 17}, false, CAUSAL, true, true, true, false},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        if (!opts.quick || i % 2 == 0) {
            ragged_case(&shapes[i], false);
            ragged_case(&shapes[i], true);
        }
    for (size_t i = 0; i < sizeof long_shapes / sizeof long_shapes[0]; i++)
        if (!opts.quick || i % 2 == 0)
            ragged_case(&long_shapes[i], true);
}

/* v7 (2026-11-24, session 9): ragged backward past 128 columns on the Hopper pair (sdpa_bwd_wgmma's wide
 * kernel: 64-key slots per sequence).  Registered after every older case (as sdpa_cases_bwd_wide): the seeds
 * come from the case count, so the older cases keep their inputs. */
static void sdpa_cases_ragged_wide(void)
{
    static const char CAUSAL[] = ", causal=true", CAUSAL_BR[] = ", causal=true, align=\"bottom_right\"";
    static const ragged_shape shapes[] = {
        {"qkv-causal-odd-d256", 4, 4, 2, 256, 0, 0, {1, 129, 0, 200}, {1, 129, 0, 200}, false, CAUSAL, true, false,
         true, false},
        {"kv-qdense-lens-causal-br-d192", 3, 4, 1, 192, 130, 0, {130, 61, 7}, {1, 200, 130}, true, CAUSAL_BR, true,
         true, true, false},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        ragged_case(&shapes[i], true);
}

/* v8 (2026-11-24, session 10): the folded side passes of sdpa_bwd_wgmma (XDNN_SDPA_BWD_FOLD: the f32 dQ sums
 * cleared by the prep pass, dq converted by the key block that adds into a 64 x 64 tile last, counted against
 * the number of key blocks that visit it): Sq of 1, 77, 300 (not multiples of the 64-row tiles), GQA 8, causal
 * of both alignments (bottom-right with Sq > Skv: whole row tiles no key block visits, their dq rows zeroed by
 * the prep pass), seq lens (rows past a batch's length), a window whose left edge bounds the blocks' rows,
 * D != Dv on both kernels (the wide one keeps its pass); f16 and bf16, bhsd and bshd. */
static void sdpa_cases_bwd_fold(void)
{
    static const sopt mask[] = {{"fold-plain", "", 0, false},
                                {"fold-causal", ", causal=true", 0, false},
                                {"fold-causal-br", ", causal=true, align=\"bottom_right\"", 0, false},
                                {"fold-seqlens-causal-br", ", causal=true, align=\"bottom_right\"", 0, true},
                                {"fold-window70+10", ", window=[70, 10]", 0, false}};
    static const sshape shapes[] = {
        {2, 16, 2, 1, 300, 128, 128}, {1, 8, 1, 77, 200, 64, 64},   {2, 8, 1, 300, 77, 128, 128},
        {1, 4, 4, 300, 300, 64, 64},  {2, 4, 2, 300, 77, 128, 64}, {1, 4, 2, 77, 131, 192, 128},
        {3, 8, 8, 77, 300, 40, 40},   {1, 16, 2, 300, 520, 128, 128},
    };
    static const char *const half[] = {"f16", "bf16"};
    const int n = (int)(sizeof shapes / sizeof shapes[0]), nm = (int)(sizeof mask / sizeof mask[0]);
    for (int si = 0; si < n; si++)
        for (int oi = 0; oi < nm; oi++) {
            if ((opts.quick && oi != si % nm) || (shapes[si].Sq == 1 && oi == 1)) /* one row sees key 0 only */
                continue;
            sdpa_case2(&shapes[si], &mask[oi], half[(si + oi) % 2], (si + oi) % 3 == 1 ? " @bshd" : "",
                       "sdpa_flash", "sdpa_bwd_wgmma", false, false);
        }
}

/* ---- fp8 attention (issue 14 item 3): the fp8 form of sdpa (src/ops/sdpa_fp8.c) on sdpa_fp8_wgmma.  q, k, v
 * fp8_e4m3 (randn, std 1, rounded), D = 128; Sq, Skv of 1, primes, tails of its 128-row and 128-key tiles,
 * Sq > Skv and Sq < Skv, a long Skv; GQA 1, 2, 3, 4, 8 and MQA; no mask, causal top-left and bottom-right;
 * bhsd and bshd; o bf16 and o fp8_e4m3 / fp8_e5m2 with o_scale 1/64; stats, amax_s and amax_o on every case;
 * scales as one-element weights (q, k, v drawn in [0.5, 2]; s_scale 1/448, cuDNN's recipe) and, in one case,
 * as scalars.  More work items than SMs in two shapes (the persistent walk).  Ids "sdpa/sdpa_fp8_wgmma/...";
 * the tolerance is run_case's (fp8_rule). */
static void fp8_case(const sshape *s, const sopt *o, const char *odt, const char *layout, bool scalar_scales)
{
    char id[200], scales[512], oscale[64] = "";
    const bool q8 = strcmp(odt, "bf16") != 0;
    snprintf(id, sizeof id, "sdpa/sdpa_fp8_wgmma/%s/e4m3-o%s%s/%s/b%dh%dk%dq%dkv%dd%d", o->tag, odt,
             scalar_scales ? "-scalar-scales" : "", layout[0] ? layout + 1 : "bhsd", s->B, s->Hq, s->Hk, s->Sq, s->Skv,
             s->D);
    if (scalar_scales) {
        snprintf(scales, sizeof scales, "q_scale=0.75, k_scale=1.25, v_scale=0.5, s_scale=%.17g", 1.0 / 448);
        if (q8)
            snprintf(oscale, sizeof oscale, ", o_scale=0.015625");
    } else {
        snprintf(scales, sizeof scales, "q_scale=sq, k_scale=sk, v_scale=sv, s_scale=ss");
        if (q8)
            snprintf(oscale, sizeof oscale, ", o_scale=so");
    }
    add_case(id, "sdpa=sdpa_fp8_wgmma", NULL,
             "dnn 1;\ngraph g(seed=%d) {\n  input q: fp8_e4m3[%d, %d, %d, %d]%s = randn(std=1);\n"
             "  input k: fp8_e4m3[%d, %d, %d, %d]%s = randn(std=1);\n"
             "  input v: fp8_e4m3[%d, %d, %d, %d]%s = randn(std=1);\n"
             "  weight sq: f32[1] = uniform(lo=0.5, hi=2);\n  weight sk: f32[1] = uniform(lo=0.5, hi=2);\n"
             "  weight sv: f32[1] = uniform(lo=0.5, hi=2);\n  weight ss: f32[1] = fill(value=%.17g);\n"
             "  weight so: f32[1] = fill(value=0.015625);\n"
             "  o, stats, amax_s, amax_o = sdpa(q, k, v, %s%s%s);\n  output o%s%s, stats, amax_s, amax_o;\n}\n",
             ncases + 500, s->B, s->Hq, s->Sq, s->D, layout, s->B, s->Hk, s->Skv, s->D, layout, s->B, s->Hk, s->Skv,
             s->D, layout, 1.0 / 448, scales, oscale, o->attrs, q8 ? ": " : "", q8 ? odt : "");
}

static void sdpa_cases_fp8(void)
{
    static const sshape shapes[] = {
        {1, 2, 2, 1, 1, 128, 128},      {1, 2, 2, 1, 130, 128, 128},    {2, 4, 2, 37, 53, 128, 128},
        {1, 8, 2, 131, 257, 128, 128},  {2, 4, 1, 200, 97, 128, 128},   {1, 2, 2, 300, 1, 128, 128},
        {3, 6, 2, 129, 129, 128, 128},  {1, 4, 4, 17, 4099, 128, 128},  {1, 6, 2, 127, 383, 128, 128},
        {1, 32, 8, 256, 256, 128, 128}, {2, 36, 6, 257, 129, 128, 128}, {1, 3, 3, 64, 64, 128, 128},
    };
    static const char *const odts[] = {"bf16", "fp8_e4m3", "bf16", "fp8_e5m2"};
    const int n = (int)(sizeof shapes / sizeof shapes[0]);
    for (int si = 0; si < n; si++)
        for (int oi = 0; oi < 3; oi++) { /* plain, causal, causal-br */
            if (opts.quick && oi != si % 3)
                continue;
            fp8_case(&shapes[si], &sopts[oi], odts[(si + oi) % 4], (si + oi) % 3 == 1 ? " @bshd" : "", false);
        }
    fp8_case(&shapes[2], &sopts[1], "fp8_e4m3", "", true);
    fp8_case(&shapes[3], &sopts[0], "bf16", "", true);
}

/* The tolerance of an fp8 attention output (METHOD.md: fp8 5e-2).  The kernel rounds P to e4m3 from the
 * running-max probabilities, the reference from the normalized ones (kernels/sdpa_fp8_wgmma_sm90a.cu): two
 * roundings of each weight, each within half an e4m3 step (2^-4 relative), so O differs by rounding noise: the
 * reference alone is 2.3e-2 (relative norm) from the f32 attention (tests/identities/sdpa_fp8_scales.dnn), two
 * independent roundings ~sqrt(2) times that.  Bounds, with what the H100 showed on this sweep (2026-11-24):
 *  - o bf16: relative norm 5e-2 (worst 3.7e-2); per element rtol 2^-3 and atol 0.5, the noise of a peaked row:
 *    up to 2^-4 of sum_j P_j |V_j|, |V| up to ~8 (randn e4m3 times v_scale <= 2) (worst 0.25);
 *  - o fp8 (O / o_scale, o_scale 1/64) adds its own rounding where O lands near a boundary: one step of 2^-3
 *    (e4m3) or 2^-2 (e5m2) relative: relative norm 7e-2 (e4m3, worst 5.1e-2) or 1e-1 (e5m2, worst 6.5e-2), rtol
 *    one step (0.25 / 0.5), atol 0.5 / o_scale plus a step near 32 (worst 32 and 64 at larger values);
 *  - stats: the f32 log-sum-exp of scores that the fp8 tensor cores sum with less than f32's precision (as in
 *    the fp8 GEMM, RESULTS-lowp.md): rtol 5e-4, atol 5e-3, relative norm 1e-3 (worst 2.7e-3 absolute, 2e-4 norm);
 *  - amax_s = max 1 / l: the relative error of l itself, which is the absolute error of log l, i.e. of the
 *    stats above (its bound 5e-3 absolute): rtol 5e-3 (worst 5.8e-4, then 1.05e-3 once the case table grew in
 *    session 10 and moved this case's inputs: 1e-3 was tighter than the stats it derives from); amax_o, the
 *    largest |O|, noisy as O: rtol 0.1 (worst 5.8e-2). */
static void fp8_rule(const xgraph *g, int t, dh_rule *rule)
{
    const xtensor *x = &g->tensors[t];
    const char *name = x->name ? x->name : "";
    xdnn_dtype dt = x->has_odtype ? x->odtype : x->dtype;
    if (strcmp(name, "o") == 0) {
        const bool e5 = dt == XDNN_FP8_E5M2, f8 = dt == XDNN_FP8_E4M3 || e5;
        rule->rtol = f8 ? (e5 ? 0.5 : 0.25) : 0.125;
        rule->atol = f8 ? 0.5 * 64 + (e5 ? 16 : 8) : 0.5;
        rule->max_rel_norm = f8 ? (e5 ? 0.1 : 7e-2) : 5e-2;
    } else if (strcmp(name, "amax_o") == 0) {
        rule->rtol = 0.1;
        rule->atol = 0;
        rule->max_rel_norm = 0.1;
    } else if (strcmp(name, "amax_s") == 0) {
        rule->rtol = 5e-3;
        rule->atol = 0;
        rule->max_rel_norm = 5e-3;
    } else { /* stats */
        rule->rtol = 5e-4;
        rule->atol = 5e-3;
        rule->max_rel_norm = 1e-3;
    }
}

static void sdpa_cases(void)
{
    static const sshape mma_shapes[] = {
        {1, 1, 1, 2, 5, 64, 64},     {2, 4, 4, 17, 33, 64, 64},  {1, 2, 2, 100, 77, 128, 128},
        {2, 8, 2, 65, 130, 64, 64},  {1, 4, 1, 64, 64, 128, 128}, {3, 2, 1, 129, 200, 64, 64},
    };
    static const sshape gen_shapes[] = {
        {1, 2, 2, 31, 47, 40, 24}, {2, 6, 3, 9, 5, 256, 200}, {1, 1, 1, 70, 70, 16, 80},
    };
    static const char *const half[] = {"f16", "bf16"};
    int nm = opts.quick ? 3 : 6;
    for (int si = 0; si < nm; si++) {
        for (int oi = 0; oi < NSOPTS; oi++) {
            if (opts.quick && oi % 3 != si % 3)
                continue;
            const char *dt = half[(si + oi) % 2];
            const char *lay = (si + oi) % 3 == 0 ? " @bshd" : "";
            sdpa_case(&mma_shapes[si], &sopts[oi], dt, lay, "sdpa_flash", false, false);
            if (!opts.quick && (si + oi) % 3 == 1) /* f32 o: P as hi + lo halves */
                sdpa_case(&mma_shapes[si], &sopts[oi], dt, lay, "sdpa_flash", false, true);
            sdpa_case(&mma_shapes[si], &sopts[oi], (si + oi) % 2 ? "f32" : dt, lay, "sdpa_naive", false, false);
            if (!opts.quick || oi == 0)
                sdpa_case(&mma_shapes[si], &sopts[oi], (si + oi) % 2 ? "f32" : dt, lay, "sdpa_naive", true, false);
        }
    }
    int ng = opts.quick ? 1 : 3;
    for (int si = 0; si < ng; si++)
        for (int oi = 0; oi < NSOPTS; oi += opts.quick ? 4 : 1) {
            const char *dt = oi % 3 == 0 ? "f32" : half[oi % 2];
            sdpa_case(&gen_shapes[si], &sopts[oi], dt, oi % 2 ? " @bshd" : "", "sdpa_naive", false, false);
            sdpa_case(&gen_shapes[si], &sopts[oi], dt, oi % 2 ? " @bshd" : "", "sdpa_naive", true, false);
        }
    sshape one = {1, 1, 1, 1, 1, 64, 64}; /* one row, one key: o = v */
    sdpa_case(&one, &sopts[0], "f16", "", "sdpa_flash", false, false);
    sdpa_case(&one, &sopts[0], "bf16", "", "sdpa_naive", false, false);
    /* the shipped graph's shape: GQA 8/2, causal, f16 io, bshd, f32 intermediates */
    sshape g = {2, 8, 2, 64, 64, 64, 64};
    sdpa_case(&g, &sopts[1], "f16", " @bshd", "sdpa_flash", true, false);
    /* flash forward feeding the backward through an f32 intermediate o */
    add_case("sdpa_bwd/sdpa_flash/intermediate-o/bf16/b2h4k2q50kv70d64", "sdpa=sdpa_flash", "sdpa_bwd=sdpa_bwd",
             "dnn 1;\ngraph g(seed=77) {\n  input q: bf16[2, 4, 50, 64];\n  input k: bf16[2, 2, 70, 64];\n"
             "  input v: bf16[2, 2, 70, 64];\n  input do: bf16[2, 4, 50, 64];\n"
             "  o, stats = sdpa(q, k, v, causal=true, align=\"bottom_right\");\n"
             "  dq, dk, dv = sdpa_bwd(q, k, v, o, do, stats, causal=true, align=\"bottom_right\");\n"
             "  output dq, dk, dv;\n}\n");
    sdpa_cases_v2();
    sdpa_cases_wgmma();
    sdpa_cases_splitkv();
    sdpa_cases_serve();
    sdpa_cases_ragged();
    sdpa_cases_bwd_wgmma();
    sdpa_cases_wgmma_masks();
    sdpa_cases_wgmma_biastma();
    sdpa_cases_wgmma_o32();
    sdpa_cases_fp8();
    add_case("sdpa_bwd/sdpa_flash+sdpa_bwd_wgmma/intermediate-o/f16/b2h4k2q50kv70d64", "sdpa=sdpa_flash",
             "sdpa_bwd=sdpa_bwd_wgmma", /* o stays an f32 intermediate */
             "dnn 1;\ngraph g(seed=78) {\n  input q: f16[2, 4, 50, 64];\n  input k: f16[2, 2, 70, 64];\n"
             "  input v: f16[2, 2, 70, 64];\n  input do: f16[2, 4, 50, 64];\n"
             "  o, stats = sdpa(q, k, v, causal=true, align=\"bottom_right\");\n"
             "  dq, dk, dv = sdpa_bwd(q, k, v, o, do, stats, causal=true, align=\"bottom_right\");\n"
             "  output dq, dk, dv;\n}\n");
}

/* ---- RNN sweeps */
static void rnn_cases(void)
{
    static const char *const ops[] = {"rnn", "rnn-relu", "lstm", "gru"};
    static const int tnih[][4] = {{1, 1, 5, 8}, {7, 3, 16, 33}, {12, 2, 9, 20}};
    int ns = opts.quick ? 2 : 3;
    for (int si = 0; si < ns; si++)
        for (int oi = 0; oi < 4; oi++)
            for (int L = 1; L <= 2; L++)
                for (int bidir = 0; bidir <= 1; bidir++) {
                    if (opts.quick && (L + bidir + oi) % 2)
                        continue;
                    int T = tnih[si][0], N = tnih[si][1], I = tnih[si][2], H = tnih[si][3], D = bidir ? 2 : 1;
                    int G = oi == 2 ? 4 : oi == 3 ? 3 : 1, Iw = L > 1 && D * H > I ? D * H : I;
                    bool lstm = oi == 2, biases = (si + oi) % 3 != 1;
                    const char *dt = (si + L + oi) % 3 == 2 ? "f16" : "f32";
                    const char *op = oi < 2 ? "rnn" : ops[oi];
                    char id[200], extra[160] = "", ins[128], c0[96] = "";
                    if (lstm)
                        snprintf(c0, sizeof c0, "  input c0: %s[%d, %d, %d];\n", dt, L * D, N, H);
                    snprintf(id, sizeof id, "%s/%s/L%d%s/%s/T%dN%dI%dH%d", ops[oi], biases ? "bias" : "nobias", L,
                             bidir ? "-bidir" : "", dt, T, N, I, H);
                    snprintf(extra, sizeof extra, ", layers=%d, bidirectional=%s%s%s", L, bidir ? "true" : "false",
                             oi == 1 ? ", nonlinearity=\"relu\"" : "", biases ? ", b_ih=b_ih, b_hh=b_hh" : "");
                    snprintf(ins, sizeof ins, "x, h0%s, w_ih, w_hh", lstm ? ", c0" : "");
                    add_case(id, oi < 2 ? "rnn=rnn_cublas" : lstm ? "lstm=rnn_cublas" : "gru=rnn_cublas", NULL,
                             "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[%d, %d, %d];\n  input h0: %s[%d, %d, %d];\n"
                             "%s  weight w_ih: %s[%d, %d, %d] = uniform(lo=-0.3, hi=0.3);\n"
                             "  weight w_hh: %s[%d, %d, %d] = uniform(lo=-0.3, hi=0.3);\n"
                             "  weight b_ih: %s[%d, %d];\n  weight b_hh: %s[%d, %d];\n"
                             "  y, hn%s = %s(%s%s);\n  output y, hn%s;\n}\n",
                             ncases + 100, dt, T, N, I, dt, L * D, N, H,
                             c0, dt, L * D, G * H, Iw, dt, L * D, G * H, H, dt, L * D,
                             G * H, dt, L * D, G * H, lstm ? ", cn" : "", op, ins, extra, lstm ? ", cn" : "");
                }
}

/* ---- bench: bench/sdpa_peer.py's shapes (the anchors' three, D = 64 at
 * S = 4096, Stable Diffusion's D = 40, D = 80, D = 256, Llama-3-8B GQA 32/8),
 * bf16, bhsd.  Forward on sdpa_flash (id "bench/sdpa_fwd...") and on
 * sdpa_flash_wgmma (id "bench/wgmma/sdpa_fwd..."); backward on sdpa_bwd_flash
 * (id "bench/.../sdpa_bwd..."; the forward that feeds it is timed too). */
/* The Hopper backward on one bench shape (its forward on sdpa_flash_wgmma).  intermediate=bf16: o is an output
 * that sdpa_bwd reads, so its value keeps the intermediate dtype (an output mark rounds only the stored copy,
 * dnn(5)); at the default f32 the forward writes an f32 o (its SPLIT kernel, bench_cases_o32). */
static void bench_bwd_wgmma(const char *id, int B, int Hq, int Hk, int S, int D, const char *cz)
{
    char wid[220];
    snprintf(wid, sizeof wid, "bench/wgmma/%s", id + 6);
    add_case(wid, "sdpa=sdpa_flash_wgmma", "sdpa_bwd=sdpa_bwd_wgmma",
             "dnn 1;\ngraph g(seed=1, intermediate=bf16) {\n  input q: bf16[%d, %d, %d, %d];\n  input k: bf16[%d, %d, %d, %d];\n"
             "  input v: bf16[%d, %d, %d, %d];\n  input do: bf16[%d, %d, %d, %d];\n"
             "  o, stats = sdpa(q, k, v, causal=%s);\n"
             "  dq, dk, dv = sdpa_bwd(q, k, v, o, do, stats, causal=%s);\n  output o, dq, dk, dv;\n}\n",
             B, Hq, S, D, B, Hk, S, D, B, Hk, S, D, B, Hq, S, D, cz, cz);
}

static void bench_cases(void)
{
    static const struct {
        int B, Hq, Hk, S, D;
        bool bwd;
    } shapes[] = {
        {4, 16, 16, 4096, 128, true}, {4, 16, 16, 4096, 64, true}, {16, 16, 16, 1024, 64, true},
        {1, 32, 32, 16384, 128, false}, {2, 8, 8, 4096, 40, true}, {4, 16, 16, 4096, 80, true},
        {4, 16, 16, 4096, 256, true}, {1, 32, 8, 4096, 128, true},
        {2, 32, 8, 4096, 128, false}, /* the Llama-3-8B block's attention (graphs/llama_block_train.dnn at B = 2) */
    };
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int causal = 0; causal <= 1; causal++)
            for (int bwd = 0; bwd <= (int)shapes[si].bwd; bwd++) {
                const int B = shapes[si].B, Hq = shapes[si].Hq, Hk = shapes[si].Hk, S = shapes[si].S,
                          D = shapes[si].D;
                const char *cz = causal ? "true" : "false";
                char id[200];
                snprintf(id, sizeof id, "bench/sdpa_%s_bf16%s/b%dh%dk%ds%dd%d", bwd ? "bwd" : "fwd",
                         causal ? "_causal" : "", B, Hq, Hk, S, D);
                if (!bwd) {
                    for (int wg = 0; wg <= 1; wg++) {
                        char wid[220];
                        snprintf(wid, sizeof wid, "bench/%s%s", wg ? "wgmma/" : "", id + 6);
                        add_case(wid, wg ? "sdpa=sdpa_flash_wgmma" : "sdpa=sdpa_flash", NULL,
                                 "dnn 1;\ngraph g(seed=1) {\n  input q: bf16[%d, %d, %d, %d];\n"
                                 "  input k: bf16[%d, %d, %d, %d];\n  input v: bf16[%d, %d, %d, %d];\n"
                                 "  o = sdpa(q, k, v, causal=%s);\n  output o;\n}\n",
                                 B, Hq, S, D, B, Hk, S, D, B, Hk, S, D, cz);
                    }
                    continue;
                }
                bench_bwd_wgmma(id, B, Hq, Hk, S, D, cz); /* "bench/wgmma/sdpa_bwd..." */
                add_case(id, "sdpa=sdpa_flash", "sdpa_bwd=sdpa_bwd_flash",
                         "dnn 1;\ngraph g(seed=1) {\n  input q: bf16[%d, %d, %d, %d];\n  input k: bf16[%d, %d, %d, %d];\n"
                         "  input v: bf16[%d, %d, %d, %d];\n  input do: bf16[%d, %d, %d, %d];\n"
                         "  o, stats = sdpa(q, k, v, causal=%s);\n"
                         "  dq, dk, dv = sdpa_bwd(q, k, v, o, do, stats, causal=%s);\n  output o, dq, dk, dv;\n}\n",
                         B, Hq, S, D, B, Hk, S, D, B, Hk, S, D, B, Hq, S, D, cz, cz);
            }
    /* issue 10's wide shapes (session 9): Gemma's D = 256, DeepSeek MLA's 192/128, 128/64, D = 160; the Hopper
     * backward ("bench/wgmma/...") beside sdpa_bwd_flash, both fed by sdpa_flash_wgmma; D = 256 with GQA 2 */
    static const struct {
        int B, H, Hk, S, D, Dv;
    } wide[] = {{2, 8, 8, 4096, 256, 256},    {2, 16, 16, 4096, 192, 128}, {4, 16, 16, 4096, 128, 64},
                {2, 16, 16, 4096, 160, 160}, {2, 8, 4, 4096, 256, 256}};
    for (size_t i = 0; i < sizeof wide / sizeof wide[0]; i++)
        for (int causal = 0; causal <= 1; causal++)
            for (int wg = 0; wg <= 1; wg++) {
                const int B = wide[i].B, H = wide[i].H, Hk = wide[i].Hk, S = wide[i].S, D = wide[i].D,
                          Dv = wide[i].Dv;
                char id[200];
                snprintf(id, sizeof id, "bench/%ssdpa_bwd_bf16%s/b%dh%dk%ds%dd%dv%d", wg ? "wgmma/" : "",
                         causal ? "_causal" : "", B, H, Hk, S, D, Dv);
                add_case(id, "sdpa=sdpa_flash_wgmma", wg ? "sdpa_bwd=sdpa_bwd_wgmma" : "sdpa_bwd=sdpa_bwd_flash",
                         "dnn 1;\ngraph g(seed=1, intermediate=bf16) {\n  input q: bf16[%d, %d, %d, %d];\n"
                         "  input k: bf16[%d, %d, %d, %d];\n  input v: bf16[%d, %d, %d, %d];\n"
                         "  input do: bf16[%d, %d, %d, %d];\n  o, stats = sdpa(q, k, v, causal=%s);\n"
                         "  dq, dk, dv = sdpa_bwd(q, k, v, o, do, stats, causal=%s);\n  output o, dq, dk, dv;\n}\n",
                         B, H, S, D, B, Hk, S, D, B, Hk, S, Dv, B, H, S, Dv, causal ? "true" : "false",
                         causal ? "true" : "false");
            }
    /* the long causal case on the Hopper backward only (sdpa_bwd_flash takes 78 ms there) */
    bench_bwd_wgmma("bench/sdpa_bwd_bf16_causal/b1h32k32s16384d128", 1, 32, 32, 16384, 128, "true");
    /* the attention of graphs/llama_block_train.dnn's step (B 2, GQA 32/8, causal) */
    bench_bwd_wgmma("bench/sdpa_bwd_bf16_causal/b2h32k8s4096d128", 2, 32, 8, 4096, 128, "true");
}

/* ---- bench, f32 o (issue 10): b4h16s4096d128 bf16 q, k, v with an f32 o (what a graph's intermediates default
 * to) on sdpa_flash_wgmma (the SPLIT kernel: two P V wgmmas per k-step) and on sdpa_flash (its mma.sync SPLIT,
 * the engine these graphs had before), ids "bench/o32/ENGINE/sdpa_fwd_bf16[_causal]/b4h16k16s4096d{128,256}";
 * the 16-bit o of the same shapes is "bench/wgmma/sdpa_fwd_bf16..." (bench_cases). */
static void bench_cases_o32(void)
{
    static const char *const eng[] = {"sdpa_flash_wgmma", "sdpa_flash"};
    for (int D = 128; D <= 256; D *= 2) /* D = 256: the SPLIT kernel spills most there (sdpa_wgmma_sm90a.cu) */
        for (int e = 0; e < 2; e++)
            for (int causal = 0; causal <= 1; causal++) {
                char id[200], f0[64];
                snprintf(id, sizeof id, "bench/o32/%s/sdpa_fwd_bf16%s/b4h16k16s4096d%d", eng[e],
                         causal ? "_causal" : "", D);
                snprintf(f0, sizeof f0, "sdpa=%s", eng[e]);
                add_case(id, f0, NULL,
                         "dnn 1;\ngraph g(seed=1) {\n  input q: bf16[4, 16, 4096, %d];\n  input k: bf16[4, 16, 4096, %d];\n"
                         "  input v: bf16[4, 16, 4096, %d];\n  o = sdpa(q, k, v, causal=%s);\n  output o: f32;\n}\n",
                         D, D, D, causal ? "true" : "false");
            }
}

/* Session 10 (2026-11-24, issue 10): the dropout mask of one Philox call per row and 8 keys, 16 bits per key
 * (src/ops/sdpa.h), on every engine that draws it: sdpa_flash_wgmma (the quad's calls shared by shuffles, 16-bit
 * and f32 o), sdpa_flash and sdpa_flash_tf32 (softmax_step), sdpa_bwd_flash (dQ in the forward's layout, dK/dV in
 * the transposed one), sdpa_naive and sdpa_bwd (a call per element).  Skv of 77 and 13 (the last group runs past
 * the keys), Sq 1, GQA 4 and 8, p 0.5 and 0.01, D 64, 128, 256 (key tiles of 32 and 64, dK/dV query tiles of 32
 * and 64), causal bottom-right and padding beside it.  Ids ".../drop16-...". */
static const sopt drop_sopts[] = {
    {"drop16-p0.5", ", dropout=0.5, seed=123456789", 0, false},
    {"drop16-p0.01", ", dropout=0.01, seed=5", 0, false},
    {"drop16-p0.5-causal-br", ", causal=true, align=\"bottom_right\", dropout=0.5, seed=9", 0, false},
    {"drop16-p0.2-seqlens", ", dropout=0.2, seed=77", 0, true},
};

static void sdpa_cases_dropout16(void)
{
    static const sshape shapes[] = {
        {1, 4, 1, 130, 77, 128, 128}, {2, 8, 1, 1, 13, 64, 64},   {1, 2, 2, 77, 13, 64, 64},
        {2, 8, 2, 65, 77, 256, 256},  {1, 4, 4, 200, 300, 64, 64}, {1, 2, 1, 1, 77, 128, 128},
        {2, 4, 1, 129, 77, 40, 40},   {1, 8, 8, 33, 133, 96, 96},
    };
    static const char *const half[] = {"f16", "bf16"};
    const int n = (int)(sizeof shapes / sizeof shapes[0]);
    for (int si = 0; si < n; si++)
        for (int k = 0; k < 2; k++) {
            if (opts.quick && k != si % 2)
                continue;
            const sopt *o = &drop_sopts[(si * 2 + k) % 4];
            const char *dt = half[(si + k) % 2], *lay = (si + k) % 3 == 1 ? " @bshd" : "";
            sdpa_case2(&shapes[si], o, dt, lay, "sdpa_flash_wgmma", NULL, (si + k) % 4 == 3, false);
            sdpa_case2(&shapes[si], o, dt, lay, "sdpa_flash", "sdpa_bwd_flash", false, false);
            if (k == 0)
                sdpa_case2(&shapes[si], o, "f32", lay, "sdpa_flash_tf32", NULL, false, true);
            if (k == 1 && shapes[si].Sq * shapes[si].Skv <= 10000)
                sdpa_case2(&shapes[si], o, (si % 2) ? "f32" : dt, lay, "sdpa_naive", "sdpa_bwd", false, false);
        }
}

/* Session 11 (2026-11-24, issue 10): dropout on sdpa_bwd_wgmma (the mask replayed in S^T's layout, dropped
 * P^T elements carried as negative values to the dS loop; the wide kernel's P side likewise).  p 0.1, 0.5, 0.9;
 * D 64, 128 and D != Dv on the main kernel (DP 64, 128), 192/128 and 256 on the wide one; no mask, causal of
 * both alignments, a window, padding by seq lens; GQA 32/8 and 4/1; Sq, Skv of 1, 77, 130, 300, 1000 (rows
 * and keys past the 64-row / 128-key tiles, Sq > Skv with rows that see no key); f16 and bf16, bhsd and bshd.
 * Ids ".../bwddrop-...": the session runs them again under XDNN_SDPA_BWD_DETERMINISTIC=1. */
static void sdpa_cases_bwd_dropout(void)
{
    static const sopt drop[] = {
        {"bwddrop-p0.1", ", dropout=0.1, seed=11", 0, false},
        {"bwddrop-p0.5-causal", ", causal=true, dropout=0.5, seed=12", 0, false},
        {"bwddrop-p0.9-causal-br", ", causal=true, align=\"bottom_right\", dropout=0.9, seed=13", 0, false},
        {"bwddrop-p0.1-seqlens", ", dropout=0.1, seed=14", 0, true},
        {"bwddrop-p0.5-window40+8", ", window=[40, 8], dropout=0.5, seed=15", 0, false},
    };
    static const sshape shapes[] = {
        {1, 4, 4, 77, 77, 64, 64},       {1, 32, 8, 77, 1000, 128, 128}, {1, 2, 2, 1000, 1000, 128, 128},
        {2, 4, 2, 1, 77, 64, 64},        {1, 4, 1, 1000, 77, 64, 64},    {1, 4, 2, 77, 300, 192, 128},
        {1, 2, 2, 130, 77, 256, 256},    {2, 8, 8, 300, 300, 128, 64},   {1, 8, 2, 129, 1000, 64, 64},
    };
    static const char *const half[] = {"f16", "bf16"};
    const int n = (int)(sizeof shapes / sizeof shapes[0]), nd = (int)(sizeof drop / sizeof drop[0]);
    for (int si = 0; si < n; si++)
        for (int k = 0; k < 2; k++) {
            const int oi = (si * 2 + k) % nd;
            if ((opts.quick && k != si % 2) || (shapes[si].Sq == 1 && oi == 1)) /* one row sees key 0 only */
                continue;
            sdpa_case2(&shapes[si], &drop[oi], half[(si + k) % 2], (si + k) % 3 == 1 ? " @bshd" : "", "sdpa_flash",
                       "sdpa_bwd_wgmma", false, false);
        }
}

/* ---- bench, dropout backward (session 11, issue 10): b4h16s4096d128 bf16 dropout 0.1, causal and not, and
 * the Llama block's GQA 32/8 causal (b2), on sdpa_bwd_wgmma (fed by sdpa_flash_wgmma, o in bf16), the same
 * shapes without dropout, and b4h16 dropout on sdpa_bwd_flash (the engine dropout had before); ids
 * "bench/drop/ENGINE/sdpa_bwd_bf16[_causal][_dropout]/SHAPE".  Inputs are constants (bench_cases_masks). */
static void bench_cases_bwd_dropout(void)
{
    static const struct {
        int B, H, Hk;
        bool causal, drop;
        const char *engine;
    } c[] = {{4, 16, 16, false, true, "sdpa_bwd_wgmma"}, {4, 16, 16, true, true, "sdpa_bwd_wgmma"},
             {2, 32, 8, true, true, "sdpa_bwd_wgmma"},   {4, 16, 16, false, false, "sdpa_bwd_wgmma"},
             {4, 16, 16, true, false, "sdpa_bwd_wgmma"}, {2, 32, 8, true, false, "sdpa_bwd_wgmma"},
             {4, 16, 16, false, true, "sdpa_bwd_flash"}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char id[200], f1[64], attrs[96];
        snprintf(id, sizeof id, "bench/drop/%s/sdpa_bwd_bf16%s%s/b%dh%dk%ds4096d128", c[i].engine,
                 c[i].causal ? "_causal" : "", c[i].drop ? "_dropout" : "", c[i].B, c[i].H, c[i].Hk);
        snprintf(f1, sizeof f1, "sdpa_bwd=%s", c[i].engine);
        snprintf(attrs, sizeof attrs, ", causal=%s%s", c[i].causal ? "true" : "false", c[i].drop ? ", dropout=0.1, seed=7" : "");
        add_case(id, "sdpa=sdpa_flash_wgmma", f1,
                 "dnn 1;\ngraph g(seed=1, intermediate=bf16) {\n  input q: bf16[%d, %d, 4096, 128] = fill(value=0.5);\n"
                 "  input k: bf16[%d, %d, 4096, 128] = fill(value=0.25);\n"
                 "  input v: bf16[%d, %d, 4096, 128] = fill(value=1);\n"
                 "  input do: bf16[%d, %d, 4096, 128] = fill(value=0.5);\n"
                 "  o, stats = sdpa(q, k, v%s);\n  dq, dk, dv = sdpa_bwd(q, k, v, o, do, stats%s);\n"
                 "  output o, dq, dk, dv;\n}\n",
                 c[i].B, c[i].H, c[i].B, c[i].Hk, c[i].B, c[i].Hk, c[i].B, c[i].H, attrs, attrs);
    }
}

/* Session 11 (2026-11-24, issue 10, kernel v10): few query rows on sdpa_flash_wgmma.  Where the plain grid has
 * fewer items than an H100's 132 SMs, a tile packs a GQA group's heads (Hq / Hk a divisor of 128: 128 / G
 * positions x G heads, position-major) and the keys are split over blocks, combined by sdpa_splitkv's pass.
 * Sq 1, 3, 7, 33, 64, 100, 256; GQA 1, 2, 4, 8, 32, 128 and 3 (no packing: the plain kernel); Skv 1, primes,
 * 32768; D = Dv 64, 128 and 96; no mask, causal top-left (most key shares empty) and bottom-right, a sliding
 * window bottom-right, a window on both sides, seq lens (seq_len_q and seq_len_kv, a batch with none);
 * f16 and bf16, bhsd and bshd, 16-bit and f32 o; stats output.  Ids "sdpa/sdpa_flash_wgmma/pack-...". */
static const sopt pack_sopts[] = {
    {"pack-plain", "", 0, false},
    {"pack-causal-br", ", causal=true, align=\"bottom_right\"", 0, false},
    {"pack-causal", ", causal=true", 0, false},
    {"pack-slide64-br", ", window=[64, 0], align=\"bottom_right\"", 0, false},
    {"pack-seqlens-causal-br", ", causal=true, align=\"bottom_right\"", 0, true},
    {"pack-window8-4", ", window=[8, 4]", 0, false},
    {"pack-seqlens", "", 0, true},
};
enum { PK_NSOPTS = sizeof pack_sopts / sizeof pack_sopts[0] };

static void sdpa_cases_wgmma_pack(void)
{
    static const sshape shapes[] = {
        {1, 32, 8, 64, 4099, 128, 128}, {1, 8, 8, 1, 1, 64, 64},        {2, 16, 8, 7, 331, 128, 128},
        {1, 32, 4, 100, 1021, 64, 64},  {1, 32, 1, 7, 2053, 128, 128},  {1, 8, 2, 64, 32768, 128, 128},
        {1, 12, 3, 64, 509, 96, 96},    {1, 16, 4, 256, 600, 64, 64},   {2, 32, 32, 1, 777, 128, 128},
        {1, 12, 4, 64, 300, 128, 128},  {1, 64, 2, 1, 1000, 64, 64},    {3, 16, 2, 33, 129, 128, 128},
        {1, 128, 1, 3, 700, 64, 64},
    };
    sdpa_sweep_opts(shapes, (int)(sizeof shapes / sizeof shapes[0]), pack_sopts, PK_NSOPTS, 3, 4);
}

/* Session 12 (2026-11-25, issue 10, kernel v11): sdpa_flash_wgmma's 176-key tile (no band, DP 128, 16-bit o;
 * XDNN_SDPA_WGMMA_WIDE=2: causal-like bands too, run on the lpt- and chain- cases).  The wide tile is taken where
 * v10's packing is not, so every shape has at least an H100's 132 work items (row blocks x B x Hq): Skv 1, 175,
 * 176 + 1, 353, 530, 1000 and 4097 (off the tile and below it), Sq 1, 3, 77, 129, 130, 200, 257, 300 (odd,
 * crossing the 128-row tile), GQA 1, 5, 6, 7, 8, 11; D = Dv 96, 128 and Dv != D (128/64, 64/128: DP 128); no
 * mask, seq lens (the wide tile's edge tiles), a scale; f16 and bf16, bhsd and bshd, 16-bit and f32 o (f32 o
 * keeps 128 keys).  Ids "sdpa/sdpa_flash_wgmma/k176-...". */
static const sopt wide_sopts[] = {
    {"k176-plain", "", 0, false},
    {"k176-seqlens", "", 0, true},
    {"k176-scale", ", scale=0.3", 0, false},
};
enum { WD_NSOPTS = sizeof wide_sopts / sizeof wide_sopts[0] };

static void sdpa_cases_wgmma_wide(void)
{
    static const sshape shapes[] = {
        {2, 66, 6, 77, 175, 128, 128},  {1, 144, 18, 1, 1, 128, 128},  {2, 36, 6, 257, 1000, 128, 128},
        {1, 48, 48, 300, 177, 96, 96},  {1, 132, 12, 3, 4097, 128, 128}, {2, 40, 8, 130, 353, 128, 64},
        {1, 70, 10, 200, 353, 64, 128}, {3, 24, 24, 129, 530, 128, 128},
    };
    sdpa_sweep_opts(shapes, (int)(sizeof shapes / sizeof shapes[0]), wide_sopts, WD_NSOPTS, 2, 3);
}

/* Session 15 (2026-11-25, issue 10, kernel v13): sdpa_flash_wgmma's 192-key tile at DP 64 (max(D, Dv) <= 64, 16-bit
 * o, no band or a causal-like one; XDNN_SDPA_WGMMA_WIDE=0 keeps 128 keys).  As for k176-, every shape has at least
 * an H100's 132 work items (row blocks x B x Hq), so v10's packing is not taken: Skv 1, 191, 193, 385 (192 + 1, 2 x
 * 192 + 1: a tile of one key), 389, 577 and 4099 (primes), 1000; Sq 1, 3, 77, 129, 130, 200, 257, 300, 600; GQA 1,
 * 4, 5; D = Dv 64, 56, 48, 40 and Dv != D (64/48, 40/64, 24/64; the engine takes D % 8 == 0); no mask, seq lens,
 * causal top-left and bottom-right (Sq > Skv too: rows that see no key), a scale; f16 and bf16, bhsd and bshd,
 * 16-bit and f32 o (f32 o keeps 128 keys).  Ids "sdpa/sdpa_flash_wgmma/k192-...".  The default takes the tile from
 * 2048 keys only (Skv 4099 here); tests/gpu/d64w_session.sh runs them with XDNN_SDPA_WGMMA_WIDE=3 too (the tile
 * at every length). */
static const sopt wide64_sopts[] = {
    {"k192-plain", "", 0, false},
    {"k192-causal", ", causal=true", 0, false},
    {"k192-seqlens", "", 0, true},
    {"k192-causal-br", ", causal=true, align=\"bottom_right\"", 0, false},
    {"k192-scale", ", scale=0.3", 0, false},
};
enum { WD64_NSOPTS = sizeof wide64_sopts / sizeof wide64_sopts[0] };

static void sdpa_cases_wgmma_wide64(void)
{
    static const sshape shapes[] = {
        {2, 66, 66, 77, 191, 64, 64},   {1, 144, 36, 1, 1, 64, 64},     {2, 36, 9, 257, 193, 48, 48},
        {1, 48, 12, 300, 385, 40, 40},  {1, 132, 33, 3, 4099, 56, 56},  {2, 40, 10, 130, 389, 64, 48},
        {1, 70, 14, 200, 577, 40, 64},  {3, 24, 6, 129, 1000, 64, 64},  {2, 33, 33, 129, 385, 24, 64},
        {1, 36, 9, 600, 193, 64, 64},
        /* (review) the default's tile (2048 keys and more) with two Q buffers: 216 items over 132 SMs (v9's
         * stream, the counter's walk ahead on causal), 2113 = 11 x 192 + 1 keys (a last tile of one key) */
        {1, 72, 8, 257, 2113, 64, 64},
    };
    sdpa_sweep_opts(shapes, (int)(sizeof shapes / sizeof shapes[0]), wide64_sopts, WD64_NSOPTS, 3, 4);
}

/* ---- bench, masks (issue 10): b4h16s4096d128 bf16 forward on sdpa_flash_wgmma and on sdpa_flash (the
 * fallback these masks had before), ids "bench/masks/ENGINE/...": windows of 256 and 1024 keys (time should
 * follow the visible pairs), padding to half the lengths, bias [1, H, S, S], [B, 1, S, S], [S, S] and
 * [B, H, S, S], and the unmasked
 * reference, dropout 0.1 (forward only, like the bias); the backward on sdpa_bwd_wgmma and sdpa_bwd_flash for
 * the window and the padding.  Inputs are
 * constants (fill): random ones took ~10 s per case on the host, and the kernels' time does not depend on the
 * values (no data-dependent skipping). */
static void bench_cases_masks(void)
{
    static const struct {
        const char *tag, *in, *attrs;
    } m[] = {
        {"plain", "", ""},
        {"window256", "", ", window=[256, 0]"},
        {"window1024", "", ", window=[1024, 0]"},
        {"pad-half", "  input lq: i32[4] = values(data=[2048, 2048, 2048, 2048]);\n"
                     "  input lkv: i32[4] = values(data=[2048, 2048, 2048, 2048]);\n", ", seq_len_q=lq, seq_len_kv=lkv"},
        {"bias-1hss", "  input bias: bf16[1, 16, 4096, 4096] = fill(value=0.25);\n", ", bias=bias"},
        {"bias-b1ss", "  input bias: bf16[4, 1, 4096, 4096] = fill(value=0.25);\n", ", bias=bias"},
        {"dropout", "", ", dropout=0.1, seed=7"},
        /* the bias's two ends: one [S, S] for all (L2-resident, 32 MB) and [B, H, S, S] (2 GB, each byte once) */
        {"bias-ss", "  input bias: bf16[4096, 4096] = fill(value=0.25);\n", ", bias=bias"},
        {"bias-bhss", "  input bias: bf16[4, 16, 4096, 4096] = fill(value=0.25);\n", ", bias=bias"},
    };
    static const char *const fe[] = {"sdpa_flash_wgmma", "sdpa_flash"}, *const be[] = {"sdpa_bwd_wgmma", "sdpa_bwd_flash"};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        for (int e = 0; e < 2; e++) {
            char id[200], f0[64], f1[64];
            snprintf(id, sizeof id, "bench/masks/%s/sdpa_fwd_bf16_%s/b4h16k16s4096d128", fe[e], m[i].tag);
            snprintf(f0, sizeof f0, "sdpa=%s", fe[e]);
            add_case(id, f0, NULL,
                     "dnn 1;\ngraph g(seed=1) {\n  input q: bf16[4, 16, 4096, 128] = fill(value=0.5);\n"
                     "  input k: bf16[4, 16, 4096, 128] = fill(value=0.25);\n"
                     "  input v: bf16[4, 16, 4096, 128] = fill(value=1);\n%s  o = sdpa(q, k, v%s);\n  output o;\n}\n",
                     m[i].in, m[i].attrs);
            /* the backward on the band and padding masks, and dropout on sdpa_bwd_flash (session 10, when
             * sdpa_bwd_wgmma refused dropout; its dropout rows since: bench_cases_bwd_dropout) */
            if ((i == 0 || i > 3) && !(strcmp(m[i].tag, "dropout") == 0 && e == 1))
                continue;
            snprintf(id, sizeof id, "bench/masks/%s/sdpa_bwd_bf16_%s/b4h16k16s4096d128", be[e], m[i].tag);
            snprintf(f1, sizeof f1, "sdpa_bwd=%s", be[e]);
            add_case(id, f1, NULL, /* the forward on the engine the plan picks (o is an f32 intermediate) */
                     "dnn 1;\ngraph g(seed=1) {\n  input q: bf16[4, 16, 4096, 128] = fill(value=0.5);\n"
                     "  input k: bf16[4, 16, 4096, 128] = fill(value=0.25);\n"
                     "  input v: bf16[4, 16, 4096, 128] = fill(value=1);\n"
                     "  input do: bf16[4, 16, 4096, 128] = fill(value=0.5);\n%s"
                     "  o, stats = sdpa(q, k, v%s);\n  dq, dk, dv = sdpa_bwd(q, k, v, o, do, stats%s);\n"
                     "  output o, dq, dk, dv;\n}\n",
                     m[i].in, m[i].attrs, m[i].attrs);
        }
}

/* Session 10 (2026-11-24, issue 10): sdpa_splitkv's odd shapes, registered last: Skv 1, 13, 4097, 131071; Sq 1,
 * 3, 65 (65 rows x GQA 4 = 260 packed rows: five 64-row tiles, the last of 4 rows); GQA 4 and 8; no mask and
 * causal bottom-right (Sq > Skv: rows that see no key); padding by seq_len_kv alone (batch 0 full, the others
 * shorter, some 0: rows with no key); bhsd and bshd; f16 and bf16; stats on every case; from 1 split to dozens.
 * The XDNN_SPLITKV_STAGES / _PREFETCH variants run these under the device script.  Ids
 * "sdpa/sdpa_splitkv/odd-...". */
static void sdpa_cases_splitkv_odd(void)
{
    static const sshape shapes[] = {
        {2, 8, 2, 1, 1, 128, 128},     {3, 16, 2, 3, 13, 128, 128},  {2, 32, 4, 1, 4097, 128, 128},
        {1, 8, 2, 3, 131071, 128, 128}, {1, 4, 1, 65, 4097, 64, 64},  {2, 16, 2, 65, 13, 128, 128},
        {1, 8, 1, 1, 131071, 64, 64},  {2, 8, 1, 3, 4097, 256, 256}, {1, 32, 4, 65, 300, 128, 128},
    };
    static const sopt odd[] = {{"odd-plain", "", 0, false},
                               {"odd-causal-br", ", causal=true, align=\"bottom_right\"", 0, false}};
    static const char *const half[] = {"f16", "bf16"};
    const int n = (int)(sizeof shapes / sizeof shapes[0]);
    for (int si = 0; si < n; si++)
        for (int oi = 0; oi < 2; oi++) {
            if (opts.quick && oi != si % 2)
                continue;
            sdpa_case2(&shapes[si], &odd[oi], half[(si + oi) % 2], (si + oi) % 3 == 1 ? " @bshd" : "",
                       "sdpa_splitkv", NULL, false, false);
        }
    /* seq_len_kv alone (the engine refuses seq_len_q), with and without causal bottom-right */
    static const sshape lshapes[] = {
        {5, 32, 8, 1, 4097, 128, 128}, {3, 8, 2, 1, 1, 64, 64}, {4, 16, 2, 3, 131071, 128, 128}, {3, 8, 2, 65, 13, 128, 128},
    };
    for (int si = 0; si < (int)(sizeof lshapes / sizeof lshapes[0]); si++) {
        const sshape *sh = &lshapes[si];
        const bool causal = si % 2 == 1;
        const char *dt = half[si % 2], *lay = si == 2 ? " @bshd" : "";
        char id[200], lkv[256];
        lens_text(lkv, sizeof lkv, sh, "lkv", sh->Skv);
        snprintf(id, sizeof id, "sdpa/sdpa_splitkv/odd-lenkv%s/%s/%s/b%dh%dk%dq%dkv%dd%dv%d", causal ? "-causal-br" : "",
                 dt, lay[0] ? lay + 1 : "bhsd", sh->B, sh->Hq, sh->Hk, sh->Sq, sh->Skv, sh->D, sh->Dv);
        add_case(id, "sdpa=sdpa_splitkv", NULL,
                 "dnn 1;\ngraph g(seed=%d) {\n  input q: %s[%d, %d, %d, %d]%s;\n  input k: %s[%d, %d, %d, %d]%s;\n"
                 "  input v: %s[%d, %d, %d, %d]%s;\n%s  o, stats = sdpa(q, k, v, seq_len_kv=lkv%s);\n"
                 "  output o, stats;\n}\n",
                 ncases + 1, dt, sh->B, sh->Hq, sh->Sq, sh->D, lay, dt, sh->B, sh->Hk, sh->Skv, sh->D, lay, dt, sh->B,
                 sh->Hk, sh->Skv, sh->Dv, lay, lkv, causal ? ", causal=true, align=\"bottom_right\"" : "");
    }
}

/* Session 16 (2026-11-25): +inf and NaN scores.  A row whose scores hold a +inf or a NaN is NaN in o and stats, as
 * in the reference and PyTorch (the kernels called it empty on a NaN l: o 0 or NaN, stats -inf, telling the
 * backward the row was masked); a row whose scores are all -inf stays empty (o 0, stats -inf).  Four ways in:
 *  - q-plus-inf: q[.., h, i, 0] = +inf on the rows where r_hi <= 0 (q0 - log(min(relu(r) + arange(D), 1))): scores
 *    +-inf by the sign of k[j, 0], a third of the rows, in every key split (the split-KV combine: all NaN);
 *  - k-nan: key 0 NaN in kv head 0 (k0 + log(2 min(arange(Hk) + arange(Skv), 1) - 1), k0 elsewhere): every
 *    row of its query heads NaN, in one key split of several (the combine's other partials finite);
 *  - bias-plus-inf: bias = x - log(relu(u) + relu(r)): +inf at ~9 % of the keys of a third of the rows;
 *  - bias-nan: bias = x + log(relu(u) + r): NaN at 10-55 % of the keys of a third of the rows.
 * The other rows stay finite (the comparison is not NaN alone).  No band on the NaN cases: a row seeing only NaN
 * keys is empty in the reference (its max passes over NaN) and NaN in the tensor-core kernels (o's NaN times 0).
 * Fixed seeds (--quick draws the same inputs).  Ids "sdpa/ENGINE/nonfinite-...". */
static void sdpa_nonfinite_case(int seed, const sshape *s, const char *kind, const char *attrs, const char *dt,
                                const char *engine, bool o_f32)
{
    const bool bias = strncmp(kind, "bias", 4) == 0, tf32 = strcmp(engine, "sdpa_flash_tf32") == 0;
    char id[200], force[48], qin[256], kin[256], bin[256] = "";
    snprintf(id, sizeof id, "sdpa/%s/nonfinite-%s%s/%s%s/b%dh%dk%dq%dkv%dd%dv%d", engine, kind,
             attrs[0] ? "-causal" : "", dt, o_f32 ? "-o32" : "", s->B, s->Hq, s->Hk, s->Sq, s->Skv, s->D, s->Dv);
    snprintf(force, sizeof force, "sdpa=%s", engine);
    if (strcmp(kind, "q-plus-inf") == 0)
        snprintf(qin, sizeof qin,
                 "  input q0: %s[%d, %d, %d, %d];\n  input r: %s[%d, %d, 1] = uniform(-0.5, 1.0);\n"
                 "  input e: %s[%d] = arange();\n  q: %s = q0 - log(min(relu(r) + e, 1.0));\n",
                 dt, s->B, s->Hq, s->Sq, s->D, dt, s->Hq, s->Sq, dt, s->D, dt);
    else
        snprintf(qin, sizeof qin, "  input q: %s[%d, %d, %d, %d];\n", dt, s->B, s->Hq, s->Sq, s->D);
    if (strcmp(kind, "k-nan") == 0)
        snprintf(kin, sizeof kin,
                 "  input k0: %s[%d, %d, %d, %d];\n  input h: %s[%d, 1, 1] = arange();\n"
                 "  input e: %s[%d, 1] = arange();\n  k: %s = k0 + log(min(h + e, 1.0) * 2.0 - 1.0);\n",
                 dt, s->B, s->Hk, s->Skv, s->D, dt, s->Hk, dt, s->Skv, dt);
    else
        snprintf(kin, sizeof kin, "  input k: %s[%d, %d, %d, %d];\n", dt, s->B, s->Hk, s->Skv, s->D);
    if (bias)
        snprintf(bin, sizeof bin,
                 "  input x: %s[%d, %d];\n  input u: %s[%d, %d] = uniform(-0.1, 1.0);\n"
                 "  input r: %s[%d, 1] = uniform(-0.5, 1.0);\n  bias: %s = x %s;\n",
                 dt, s->Sq, s->Skv, dt, s->Sq, s->Skv, dt, s->Sq, dt,
                 strcmp(kind, "bias-nan") == 0 ? "+ log(relu(u) + r)" : "- log(relu(u) + relu(r))");
    add_case(id, force, NULL,
             "dnn 1;\ngraph g(seed=%d%s) {\n%s%s  input v: %s[%d, %d, %d, %d];\n%s"
             "  o, stats = sdpa(q, k, v%s%s);\n  output o%s, stats;\n}\n",
             seed, tf32 ? ", tf32=true" : "", qin, kin, dt, s->B, s->Hk, s->Skv, s->Dv, bin, bias ? ", bias=bias" : "",
             attrs, o_f32 ? ": f32" : "");
}

static void sdpa_cases_nonfinite(void)
{
    static const char *const causal = ", causal=true";
    static const sshape small = {2, 4, 2, 33, 47, 64, 64}, tile = {1, 4, 4, 130, 200, 128, 128};
    static const sshape decode = {2, 16, 8, 1, 4097, 128, 128}, chunk = {1, 8, 2, 4, 4097, 128, 128};
    int seed = 1600;
    /* the reference's engine (sdpa.cu): f32 and 16-bit, a generic head dim */
    const sshape gen = {1, 2, 2, 31, 47, 40, 24};
    sdpa_nonfinite_case(seed++, &gen, "q-plus-inf", causal, "f32", "sdpa_naive", false);
    sdpa_nonfinite_case(seed++, &gen, "k-nan", "", "bf16", "sdpa_naive", false);
    sdpa_nonfinite_case(seed++, &small, "bias-plus-inf", "", "f16", "sdpa_naive", false);
    sdpa_nonfinite_case(seed++, &small, "bias-nan", "", "f32", "sdpa_naive", false);
    /* the mma forward (sdpa_mma.cu, sdpa_tf32.cu: finish_rows), 16-bit and f32 o, and tf32 */
    sdpa_nonfinite_case(seed++, &small, "q-plus-inf", causal, "f16", "sdpa_flash", false);
    sdpa_nonfinite_case(seed++, &tile, "k-nan", "", "bf16", "sdpa_flash", true);
    sdpa_nonfinite_case(seed++, &tile, "bias-plus-inf", causal, "bf16", "sdpa_flash", false);
    sdpa_nonfinite_case(seed++, &small, "bias-nan", "", "f16", "sdpa_flash", true);
    sdpa_nonfinite_case(seed++, &small, "bias-plus-inf", "", "f32", "sdpa_flash_tf32", false);
    /* the Hopper forward: tiles, the f32-o SPLIT kernel, v10's key splits (chunk: few rows, no bias) */
    sdpa_nonfinite_case(seed++, &tile, "q-plus-inf", causal, "bf16", "sdpa_flash_wgmma", false);
    sdpa_nonfinite_case(seed++, &tile, "k-nan", "", "f16", "sdpa_flash_wgmma", true);
    sdpa_nonfinite_case(seed++, &tile, "bias-plus-inf", "", "f16", "sdpa_flash_wgmma", false);
    sdpa_nonfinite_case(seed++, &tile, "bias-nan", "", "bf16", "sdpa_flash_wgmma", true);
    sdpa_nonfinite_case(seed++, &chunk, "q-plus-inf", "", "f16", "sdpa_flash_wgmma", false);
    sdpa_nonfinite_case(seed++, &chunk, "k-nan", "", "bf16", "sdpa_flash_wgmma", false);
    /* split-KV (no bias): decode over many splits, one split (short keys), chunked prefill */
    sdpa_nonfinite_case(seed++, &decode, "q-plus-inf", "", "bf16", "sdpa_splitkv", false);
    sdpa_nonfinite_case(seed++, &decode, "k-nan", "", "f16", "sdpa_splitkv", false);
    sdpa_nonfinite_case(seed++, &small, "q-plus-inf", "", "f16", "sdpa_splitkv", false);
    sdpa_nonfinite_case(seed++, &chunk, "k-nan", "", "bf16", "sdpa_splitkv", false);
}

/* ---- bench, decode and chunked prefill (bench/sdpa_decode_peer.py's
 * shapes): Llama-3-8B GQA 32/8, D = 128, bf16, bhsd; each on sdpa_splitkv and
 * on sdpa_flash_wgmma (the engine these shapes had before).  Ids
 * "bench/decode/ENGINE/..."; timed per call and as one CUDA-graph replay. */
static void bench_cases_decode(void)
{
    static const struct {
        int B, Sq, Skv;
    } shapes[] = {{1, 1, 4096}, {1, 1, 32768}, {1, 1, 131072}, {16, 1, 4096}, {1, 128, 8192}, {1, 256, 8192}};
    static const char *const engines[] = {"sdpa_splitkv", "sdpa_flash_wgmma"};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int e = 0; e < 2; e++) {
            const int B = shapes[si].B, Sq = shapes[si].Sq, Skv = shapes[si].Skv;
            const bool causal = Sq > 1; /* a single row sees every key either way */
            char id[200], force[64];
            snprintf(id, sizeof id, "bench/decode/%s/sdpa_fwd_bf16%s/b%dh32k8q%dkv%dd128", engines[e],
                     causal ? "_causal_br" : "", B, Sq, Skv);
            snprintf(force, sizeof force, "sdpa=%s", engines[e]);
            add_case(id, force, NULL,
                     "dnn 1;\ngraph g(seed=1) {\n  input q: bf16[%d, 32, %d, 128];\n  input k: bf16[%d, 8, %d, 128];\n"
                     "  input v: bf16[%d, 8, %d, 128];\n  o = sdpa(q, k, v%s);\n  output o;\n}\n",
                     B, Sq, B, Skv, B, Skv, causal ? ", causal=true, align=\"bottom_right\"" : "");
        }
}

/* ---- bench, fp8 attention (issue 14 item 3): b4h16s4096d128 e4m3 q, k, v on sdpa_fp8_wgmma, no mask and causal,
 * o bf16 and (no mask) o fp8_e4m3; the bf16 forward of the same shape is "bench/wgmma/sdpa_fwd_bf16..."
 * (bench_cases), the peer bench/sdpa_fp8_peer.py.  Ids "bench/fp8/...". */
static void bench_cases_fp8(void)
{
    for (int v = 0; v < 3; v++) {
        const bool causal = v == 1, o8 = v == 2;
        char id[200];
        snprintf(id, sizeof id, "bench/fp8/sdpa_fp8_wgmma/sdpa_fwd_e4m3%s-o%s/b4h16k16s4096d128", causal ? "_causal" : "",
                 o8 ? "fp8_e4m3" : "bf16");
        add_case(id, "sdpa=sdpa_fp8_wgmma", NULL,
                 "dnn 1;\ngraph g(seed=1) {\n  input q: fp8_e4m3[4, 16, 4096, 128] = randn(std=1);\n"
                 "  input k: fp8_e4m3[4, 16, 4096, 128] = randn(std=1);\n"
                 "  input v: fp8_e4m3[4, 16, 4096, 128] = randn(std=1);\n"
                 "  weight sq: f32[1] = fill(value=0.5);\n  weight so: f32[1] = fill(value=0.015625);\n"
                 "  o, stats, amax_s, amax_o = sdpa(q, k, v, q_scale=sq, k_scale=sq, v_scale=sq, s_scale=%.17g%s%s);\n"
                 "  output o%s, amax_s, amax_o;\n}\n",
                 1.0 / 448, o8 ? ", o_scale=so" : "", causal ? ", causal=true" : "", o8 ? ": fp8_e4m3" : "");
    }
}

/* ---- bench, paged decode (issue 14; bench/sdpa_paged_peer.py's shapes):
 * Llama-3-8B GQA 32/8, D = 128, bf16, one query row per sequence, every
 * sequence Skv keys; K/V dense (bhsd) or in pages of 64 or 256 keys
 * (@bshd pools, and head-major [P, Hk, page_size, D] pools "hmpage"; the
 * page table in reverse order: no two neighbouring pages adjacent), all on
 * sdpa_splitkv.  Ids "bench/decode/paged/...": timed per
 * call and as one CUDA-graph replay.  Constant inputs (host fill of ~1G
 * random values would take longer than the call); decode does not skip
 * work on values. */
static void bench_cases_paged(void)
{
    static const struct {
        int B, Skv;
    } shapes[] = {{16, 4096}, {64, 4096}, {16, 32768}};
    /* page 0: dense; the negative sizes: head-major pools ([P, Hk, page_size, D], ids "hmpage") */
    static const int pages[] = {0, 64, 256, -64, -256};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (size_t pi = 0; pi < sizeof pages / sizeof pages[0]; pi++) {
            const bool hm = pages[pi] < 0;
            const int B = shapes[si].B, S = shapes[si].Skv, ps = hm ? -pages[pi] : pages[pi], mp = ps ? S / ps : 0,
                      P = B * mp;
            char id[200];
            snprintf(id, sizeof id, "bench/decode/paged/sdpa_fwd_bf16_%s%d/b%dh32k8q1kv%dd128",
                     !ps ? "dense" : hm ? "hmpage" : "page", ps, B, S);
            if (!ps) {
                add_case(id, "sdpa=sdpa_splitkv", NULL,
                         "dnn 1;\ngraph g(seed=1) {\n  input q: bf16[%d, 32, 1, 128] = fill(value=0.5);\n"
                         "  input k: bf16[%d, 8, %d, 128] = fill(value=0.25);\n"
                         "  input v: bf16[%d, 8, %d, 128] = fill(value=1);\n  o = sdpa(q, k, v);\n  output o;\n}\n",
                         B, B, S, B, S);
                continue;
            }
            add_case(id, "sdpa=sdpa_splitkv", NULL,
                     "dnn 1;\ngraph g(seed=1) {\n  input q: bf16[%d, 32, 1, 128] = fill(value=0.5);\n"
                     "  input k: bf16[%d, 8, %d, 128]%s = fill(value=0.25);\n"
                     "  input v: bf16[%d, 8, %d, 128]%s = fill(value=1);\n"
                     "  input pt: i32[%d, %d] = arange(start=%d, step=-1);\n  input lkv: i32[%d] = fill(value=%d);\n"
                     "  o = sdpa(q, k, v, page_table=pt, seq_len_kv=lkv);\n  output o;\n}\n",
                     B, P, ps, hm ? "" : " @bshd", P, ps, hm ? "" : " @bshd", B, mp, P - 1, B, S);
        }
}

/* ---- bench, the decode table (session 10, issue 10): B 1/4/16/64, Hq/Hk 32/8 and 32/32, D 128, bf16, bhsd,
 * Skv 1k-128k (K + V at most ~2.2 GB), Sq 1 ("dec"), Sq 4 ("spec", speculative decode; causal bottom-right) and
 * chunked prefill Sq 64/256 ("chunk", causal bottom-right, on sdpa_splitkv and sdpa_flash_wgmma); the shapes
 * bench/sdpa_decode_peer.py's `table` times; "big": the 2.1 GB ones (fills take seconds).  "-ab" marks the few the XDNN_SPLITKV_* variants are compared on.
 * Constant inputs (a host fill of ~1G random values would outlast the call).  Ids "bench/decode/table/...". */
static void bench_cases_decode_table(void)
{
    static const struct {
        int B, Hk, Sq, Skv;
        const char *grp;
    } shapes[] = {
        {1, 8, 1, 1024, "dec"},      {1, 8, 1, 4096, "dec-ab"},  {1, 8, 1, 32768, "dec"},   {1, 8, 1, 131072, "dec-ab"},
        {4, 8, 1, 1024, "dec"},      {4, 8, 1, 4096, "dec"},     {4, 8, 1, 32768, "dec-ab"}, {4, 8, 1, 131072, "big"},
        {16, 8, 1, 1024, "dec"},     {16, 8, 1, 4096, "dec-ab"}, {16, 8, 1, 32768, "big"},  {64, 8, 1, 1024, "dec"},
        {64, 8, 1, 4096, "dec-ab"},  {1, 32, 1, 1024, "dec"},    {1, 32, 1, 4096, "dec"},   {1, 32, 1, 32768, "dec-ab"},
        {1, 32, 1, 131072, "big"},   {4, 32, 1, 1024, "dec"},    {4, 32, 1, 4096, "dec"},   {4, 32, 1, 32768, "big"},
        {16, 32, 1, 1024, "dec"},    {16, 32, 1, 4096, "dec-ab"}, {64, 32, 1, 1024, "dec"}, {1, 8, 4, 4096, "spec"},
        {1, 8, 4, 32768, "spec"},    {16, 8, 4, 4096, "spec"},   {1, 32, 4, 4096, "spec"},  {16, 32, 4, 4096, "spec"},
        {1, 8, 64, 4096, "chunk"},   {1, 8, 64, 32768, "chunk"}, {1, 8, 256, 4096, "chunk"}, {1, 8, 256, 32768, "chunk"},
        {1, 32, 64, 4096, "chunk"},  {1, 32, 64, 32768, "chunk"}, {1, 32, 256, 4096, "chunk"},
        {1, 32, 256, 32768, "chunk"},
    };
    static const char *const engines[] = {"sdpa_splitkv", "sdpa_flash_wgmma"};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int e = 0; e < 2; e++) {
            const int B = shapes[si].B, Hk = shapes[si].Hk, Sq = shapes[si].Sq, Skv = shapes[si].Skv;
            /* sdpa_flash_wgmma where it may win: Sq >= 64, and (session 11, v10: packed heads, split keys) the
             * decode and speculative rows of fewer than 132 plain items */
            if (e == 1 && strcmp(shapes[si].grp, "chunk") != 0 && (strcmp(shapes[si].grp, "big") == 0 || B * 32 >= 132))
                continue;
            char id[200], force[64];
            snprintf(id, sizeof id, "bench/decode/table/%s/%s/sdpa_fwd_bf16%s/b%dh32k%dq%dkv%dd128", shapes[si].grp,
                     engines[e], Sq > 1 ? "_causal_br" : "", B, Hk, Sq, Skv);
            snprintf(force, sizeof force, "sdpa=%s", engines[e]);
            add_case(id, force, NULL,
                     "dnn 1;\ngraph g(seed=1) {\n  input q: bf16[%d, 32, %d, 128] = fill(value=0.5);\n"
                     "  input k: bf16[%d, %d, %d, 128] = fill(value=0.25);\n"
                     "  input v: bf16[%d, %d, %d, 128] = fill(value=1);\n  o = sdpa(q, k, v%s);\n  output o;\n}\n",
                     B, Sq, B, Hk, Skv, B, Hk, Skv, Sq > 1 ? ", causal=true, align=\"bottom_right\"" : "");
        }
}

/* ---- bench, a ragged training step (issue 14): 8 sequences of 2048, 1536,
 * 1024, 1024, 768, 512, 1024 and 256 tokens (8192 in all), Hq = Hk = 16,
 * D = 128, bf16, causal.  The packed (THD) forward + backward on the engines
 * the plan picks (sdpa_flash_wgmma + sdpa_bwd_wgmma on an H100), forced onto
 * them and onto sdpa_flash + sdpa_bwd_flash, against the dense step padded to
 * 2048 rows with seq_len_q/kv on the same two pairs.  Compare milliseconds: the
 * TFLOP/s figures count the padded rows (dense) or mean-length sequences
 * (packed, sdpa_flops_of), not the visible pairs.  Constant inputs.  Ids
 * "bench/ragged/...". */
static void bench_cases_ragged(void)
{
    static const int len[8] = {2048, 1536, 1024, 1024, 768, 512, 1024, 256};
    char offs[128] = "0", lens[128] = "";
    for (int b = 0, acc = 0, n = 1, m = 0; b < 8; b++) {
        acc += len[b];
        n += snprintf(offs + n, sizeof offs - (size_t)n, ", %d", acc);
        m += snprintf(lens + m, sizeof lens - (size_t)m, "%s%d", b ? ", " : "", len[b]);
    }
    static const char *const pair[3][3] = {{"plan", NULL, NULL},
                                           {"sdpa_flash_wgmma+sdpa_bwd_wgmma", "sdpa=sdpa_flash_wgmma",
                                            "sdpa_bwd=sdpa_bwd_wgmma"},
                                           {"sdpa_flash+sdpa_bwd_flash", "sdpa=sdpa_flash", "sdpa_bwd=sdpa_bwd_flash"}};
    /* packed [T, H, D] with offsets, or padded [B, H, S, D] with lengths: the shape, the ports, their tensor */
    static const struct { const char *tag, *size, *shape, *lens, *ports; } form[2] = {
        {"packed", "t8192b8h16d128", "8192, 16, 128", "off: i32[9]", "seq_offsets_q=off, seq_offsets_kv=off"},
        {"padded", "b8h16s2048d128", "8, 16, 2048, 128", "len: i32[8]", "seq_len_q=len, seq_len_kv=len"}};
    char id[160];
    for (int f = 0; f < 2; f++)
        for (int e = 0; e < 3; e++) {
            snprintf(id, sizeof id, "bench/ragged/%s/%s/train_bf16_causal/%s", form[f].tag, pair[e][0], form[f].size);
            const char *sh = form[f].shape, *ports = form[f].ports;
            add_case(id, pair[e][1], pair[e][2],
                     "dnn 1;\ngraph g(seed=1) {\n  input q: bf16[%s] = fill(value=0.5);\n"
                     "  input k: bf16[%s] = fill(value=0.25);\n  input v: bf16[%s] = fill(value=1);\n"
                     "  input do: bf16[%s] = fill(value=0.5);\n  input %s = values(data=[%s]);\n"
                     "  o, stats = sdpa(q, k, v, %s, causal=true);\n"
                     "  dq, dk, dv = sdpa_bwd(q, k, v, o, do, stats, %s, causal=true);\n"
                     "  output o, dq, dk, dv;\n}\n",
                     sh, sh, sh, sh, form[f].lens, f ? lens : offs, ports, ports);
        }
}

/* ---- running one case (the shared part is tests/gpu/diffharness.c) */
static const char *case_id(int i)
{
    return cases[i].id;
}

static const char *case_text(int i)
{
    return cases[i].text;
}

static void run_case(int i, dh_outcome *out)
{
    const tcase *c = &cases[i];
    bool bench = opts.bench;
    dh_case_run r = {0};
    xdnn_status s = dh_case_begin(&r, c->id, c->text, !bench, out);
    xgraph *g = r.g;
    if (s != XDNN_OK)
        goto done;
    const char *force[2] = {c->force[0], c->force[1]};
    if (opts.dry) {
        s = dry_run(g, force, c->nforce, out->engines, sizeof out->engines, r.d);
        out->ok = s == XDNN_OK;
        snprintf(out->msg, sizeof out->msg, "(dry: reference ran, engines planned, not run on a GPU)");
        goto done;
    }
    const char *it = getenv("DIFFTEST_ITERS");
    gpu_run_opts o = {.warmup = bench ? 2 : 0, .iters = bench ? (it ? atoi(it) : 10) : 1, .log = stderr,
                      .verbose = getenv("DIFFTEST_VERBOSE") ? 1 : 0, .force = force, .nforce = c->nforce};
    /* decode is launch-bound: also one CUDA-graph replay per event pair, as bench/sdpa_decode_peer.py times */
    o.cuda_graph = bench && strncmp(c->id, "bench/decode/", 13) == 0;
    s = dh_gpu_run(&r, &o, out);
    if (s != XDNN_OK)
        goto done;
    if (bench) {
        size_t n = 0;
        for (int k = 0; k < r.rep.nparts && n < sizeof out->msg; k++) {
            const gpu_partition_report *p = &r.rep.parts[k];
            double sec = p->ms_median * 1e-3;
            n += (size_t)snprintf(out->msg + n, sizeof out->msg - n,
                                  "\n    TIME %-10s %-12s median %.4f ms (min %.4f max %.4f) %.1f TFLOP/s  %s", p->name,
                                  p->engine, p->ms_median, p->ms_min, p->ms_max, sec > 0 ? p->flops / sec * 1e-12 : 0,
                                  p->detail ? p->detail : "");
        }
        if (o.cuda_graph && n < sizeof out->msg)
            snprintf(out->msg + n, sizeof out->msg - n, "\n    GRAPH replay median %.4f ms", r.rep.total_ms);
        out->ok = dh_outputs_finite(&r);
        goto done;
    }
    out->ok = true;
    size_t n = 0;
    for (size_t k = 0; k < g->noutputs; k++) {
        dh_rule rule = {.require_nonzero = true};
        dh_default_tolerance(g, g->outputs[k], &rule.rtol, &rule.atol);
        /* atol alone would pass small outputs (dq, dk ~1e-3) wholesale: the
         * norm must also hold METHOD.md's bound for 16-bit inputs with f32
         * accumulation (worst seen on the H100: 3.8e-3, bf16 dq). */
        if (strncmp(c->id, "sdpa", 4) == 0)
            rule.max_rel_norm = 1e-2;
        if (strstr(c->id, "sdpa_fp8_wgmma"))
            fp8_rule(g, g->outputs[k], &rule);
        if (strstr(c->id, "tf32")) { /* tf32: 10-bit mantissa q, k, v, P: ~1e-3 relative (METHOD.md) */
            rule.rtol = 5e-3;
            rule.atol = 1e-2;
            rule.max_rel_norm = 2e-3;
        }
        out->ok &= dh_compare_output(&r, g->outputs[k], &rule, out->msg, sizeof out->msg, &n, NULL);
    }
done:
    dh_case_end(&r, c->id, out->ok);
}

/* ---- bench, layout (session 13): graphs/llama_block_train.dnn's attention as the step has it — q, k, v, do,
 * o and the gradients in BSHD memory (the heads of a token adjacent), B 2, GQA 32/8, causal, forward on
 * sdpa_flash_wgmma and backward on sdpa_bwd_wgmma — beside the BHSD rows of bench_cases ("bench/wgmma/sdpa_*_bf16
 * _causal/b2h32k8s4096d128"): the step's backward partition took 1.875 ms against the BHSD row's 1.559. */
static void bench_cases_layout(void)
{
    add_case("bench/layout/bshd/sdpa_bwd_bf16_causal/b2h32k8s4096d128", "sdpa=sdpa_flash_wgmma",
             "sdpa_bwd=sdpa_bwd_wgmma",
             "dnn 1;\ngraph g(seed=1, intermediate=bf16) {\n  input q: bf16[2, 32, 4096, 128] @bshd;\n"
             "  input k: bf16[2, 8, 4096, 128] @bshd;\n  input v: bf16[2, 8, 4096, 128] @bshd;\n"
             "  input do: bf16[2, 32, 4096, 128] @bshd;\n  o: @bshd, stats = sdpa(q, k, v, causal=true);\n"
             "  dq: @bshd, dk: @bshd, dv: @bshd = sdpa_bwd(q, k, v, o, do, stats, causal=true);\n"
             "  output o, dq, dk, dv;\n}\n");
    /* session 14 (written without a GPU): the two other differences from the step, one at a time — stats in
     * f32 (the step's; the row above keeps them in bf16), then also v as the step has it, a strided view of the
     * fused QKV GEMM's output (token stride 6144 elements, not 1024) */
    add_case("bench/layout/bshd-f32stats/sdpa_bwd_bf16_causal/b2h32k8s4096d128", "sdpa=sdpa_flash_wgmma",
             "sdpa_bwd=sdpa_bwd_wgmma",
             "dnn 1;\ngraph g(seed=1, intermediate=bf16) {\n  input q: bf16[2, 32, 4096, 128] @bshd;\n"
             "  input k: bf16[2, 8, 4096, 128] @bshd;\n  input v: bf16[2, 8, 4096, 128] @bshd;\n"
             "  input do: bf16[2, 32, 4096, 128] @bshd;\n  o: @bshd, stats: f32 = sdpa(q, k, v, causal=true);\n"
             "  dq: @bshd, dk: @bshd, dv: @bshd = sdpa_bwd(q, k, v, o, do, stats, causal=true);\n"
             "  output o, dq, dk, dv;\n}\n");
    add_case("bench/layout/qkv-view/sdpa_bwd_bf16_causal/b2h32k8s4096d128", "sdpa=sdpa_flash_wgmma",
             "sdpa_bwd=sdpa_bwd_wgmma",
             "dnn 1;\ngraph g(seed=1, intermediate=bf16) {\n  input q: bf16[2, 32, 4096, 128] @bshd;\n"
             "  input k: bf16[2, 8, 4096, 128] @bshd;\n  input qkv: bf16[2, 4096, 6144];\n"
             "  q0, k0, v0 = split(qkv, axis=2, sizes=[4096, 1024, 1024]);\n"
             "  v: @bshd = permute(reshape(v0, dims=[2, 4096, 8, 128]), perm=[0, 2, 1, 3]);\n"
             "  input do: bf16[2, 32, 4096, 128] @bshd;\n  o: @bshd, stats: f32 = sdpa(q, k, v, causal=true);\n"
             "  dq: @bshd, dk: @bshd, dv: @bshd = sdpa_bwd(q, k, v, o, do, stats, causal=true);\n"
             "  output o, dq, dk, dv;\n}\n");
}

int main(int argc, char **argv)
{
    dh_parse_args(argc, argv, true, &opts);
    cases = calloc(MAX_CASES, sizeof *cases);
    if (!cases)
        return 2;
    if (opts.bench) {
        bench_cases();
        bench_cases_decode();
        bench_cases_paged();
        bench_cases_masks();
        bench_cases_ragged();
        bench_cases_o32();
        bench_cases_fp8();
        bench_cases_decode_table();
        bench_cases_bwd_dropout();
        bench_cases_layout();
    } else {
        sdpa_cases();
        rnn_cases();
        /* the cases added since (session 9) last, in the order they were added: seeds come from the case
         * count, so the older cases keep their inputs */
        sdpa_cases_wgmma_causal();
        sdpa_cases_bwd_wide();
        sdpa_cases_ragged_wide();
        sdpa_cases_bwd_fold();
        sdpa_cases_splitkv_odd();
        sdpa_cases_wgmma_chain();
        sdpa_cases_dropout16();
        sdpa_cases_bwd_dropout();
        sdpa_cases_wgmma_pack();
        sdpa_cases_wgmma_wide();
        sdpa_cases_wgmma_wide64();
        sdpa_cases_nonfinite(); /* last */
    }
    dh_tester t = {.name = "difftest_seq", .ncases = ncases, .case_id = case_id, .case_text = case_text,
                   .run_case = run_case};
    int rc = dh_run(&t, &opts);
    free(cases);
    return rc;
}
