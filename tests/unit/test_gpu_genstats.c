/* test_gpu_genstats.c — the genstats pairing (src/gpu/genstats.h) without a
 * GPU: which conv + training batchnorm pairs it marks on a described H100,
 * the workspaces it gives them (the batchnorm's live from the conv on), and
 * what keeps a pair apart (another device, dtype, inference batchnorm,
 * XDNN_NO_GENSTATS over XDNN_GENSTATS).  Built with CUDA=1 only (else it just says so). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if XDNN_HAVE_CUDA
#include "gpu_fixture.h"
#include "test_util.h"

#include "gpu/eng_norm.h"
#include "gpu/engine.h"
#include "gpu/genstats.h"
#include "gpu/gpu.h"

static const gpu_device h100 = {.sm_count = 132, .cc_major = 9, .cc_minor = 0};
static const gpu_device a100 = {.sm_count = 108, .cc_major = 8, .cc_minor = 0};

/* conv (3x3, C=64 -> K, NHWC, on conv_igemm_wgmma at these sizes) -> `bn` -> relu, in dtype t */
static bool setup(fixture *f, const char *t, int n, int hw, int k, const char *mid, const char *bn)
{
    char text[2048];
    snprintf(text, sizeof text,
             "dnn 1;\ngraph g(seed=1, intermediate=%s) {\n  input x: %s[%d, 64, %d, %d] @nhwc;\n  weight w: %s[%d, 64, 3, 3] @nhwc;\n"
             "  weight s: f32[%d];\n  weight b: f32[%d];\n  weight m0: f32[%d];\n  weight v0: f32[%d];\n"
             "  c: @nhwc = %s;\n  %s;\n  a = relu(y);\n  output a: %s @nhwc;\n}\n",
             t, t, n, hw, hw, t, k, k, k, k, k, mid, bn, t);
    return fixture_setup(f, text);
}

static const char *const train = "y: @nhwc, m, iv = batchnorm(c, s, b)";

static int pairs(fixture *f, const gpu_device *dev, const gpart **cv, const gpart **bn)
{
    *cv = *bn = NULL;
    CHECK(gpu_select_engines(f->pl, dev, NULL, 0, 0, NULL, f->d) == XDNN_OK, "engines selected");
    int n = 0;
    for (int i = 0; i < f->pl->nparts; i++) {
        const gpart *p = &f->pl->parts[i];
        if (p->genstats == GS_WRITE)
            *cv = p, n++;
        else if (p->genstats == GS_READ)
            *bn = p;
    }
    return n;
}

static void test_pair_marked(void)
{
    static const int ks[] = {136, 24, 64};
    static const int hws[] = {29, 61, 56}; /* N*H*W = 3364, 14884, 12544: M tails of 36, 36, 0 rows */
    for (int i = 0; i < 3; i++) {
        fixture f;
        if (!setup(&f, "bf16", 4, hws[i], ks[i], "conv(x, w, pad=1)", train))
            continue;
        const gpart *cv, *bn;
        CHECK(pairs(&f, &h100, &cv, &bn) == 1, "one conv + batchnorm pair (K=%d)", ks[i]);
        if (cv && bn) {
            CHECK(strcmp(cv->engine->name, "conv_igemm_wgmma") == 0 && strcmp(bn->engine->name, "norm_welford") == 0);
            CHECK(cv->gen_peer == bn->id && bn->gen_peer == cv->id && cv->id < bn->id);
            norm_plan np;
            char why[256];
            CHECK(gpu_norm_analyze(f.pl, bn, h100.sm_count, &np, why, sizeof why), "%s", why);
            const int64_t M = 4LL * hws[i] * hws[i], tiles = (M + 127) / 128;
            CHECK(np.gen_splits == tiles, "one split per 128-row M tile: %d, want %lld", np.gen_splits,
                  (long long)tiles);
            CHECK(np.off_part == 0 && bn->ws_bytes >= (size_t)tiles * (size_t)ks[i] * 16,
                  "the partials at the batchnorm workspace's head");
            /* the batchnorm's workspace is live from the conv on: clear of the conv's own and of y */
            gpu_plan_workspace(f.pl);
            const size_t b0 = bn->ws_offset, b1 = b0 + bn->ws_bytes;
            if (cv->ws_bytes)
                CHECK(cv->ws_offset + cv->ws_bytes <= b0 || b1 <= cv->ws_offset, "conv and batchnorm scratch apart");
            const int c = fixture_tensor(f.g, "c");
            if (f.pl->offset[c] != SIZE_MAX)
                CHECK(f.pl->offset[c] + gg_span_bytes(&f.g->t[c]) <= b0 || b1 <= f.pl->offset[c],
                      "the conv's y and the partials apart");
        }
        fixture_teardown(&f);
    }
}

static void test_pair_refused(void)
{
    fixture f;
    const gpart *cv, *bn;
    if (setup(&f, "bf16", 4, 29, 136, "conv(x, w, pad=1)", train)) { /* sm_80: conv_igemm, its own reduce */
        CHECK(pairs(&f, &a100, &cv, &bn) == 0, "no pair on sm_80");
        fixture_teardown(&f);
    }
    if (setup(&f, "bf16", 4, 29, 136, "conv(x, w, pad=1)", train)) {
        setenv("XDNN_NO_GENSTATS", "1", 1);
        CHECK(pairs(&f, &h100, &cv, &bn) == 0, "XDNN_NO_GENSTATS=1 keeps them apart");
        unsetenv("XDNN_NO_GENSTATS");
        fixture_teardown(&f);
    }
    if (setup(&f, "f32", 4, 29, 136, "conv(x, w, pad=1)", train)) {
        CHECK(pairs(&f, &h100, &cv, &bn) == 0, "f32: no pair");
        fixture_teardown(&f);
    }
    if (setup(&f, "bf16", 4, 29, 136, "conv(x, w, pad=1)", "y: @nhwc = batchnorm_infer(c, s, b, m0, v0)")) {
        CHECK(pairs(&f, &h100, &cv, &bn) == 0, "inference batchnorm: no pair");
        fixture_teardown(&f);
    }
    /* the conv's relu fused in its store: the batchnorm reads what the store writes */
    if (setup(&f, "bf16", 4, 29, 136, "relu(conv(x, w, pad=1))", train)) {
        CHECK(pairs(&f, &h100, &cv, &bn) == 1, "conv+relu -> batchnorm: a pair");
        fixture_teardown(&f);
    }
}

int main(void)
{
    setenv("XDNN_GENSTATS", "1", 1); /* on whatever the default */
    test_pair_marked();
    test_pair_refused();
    gpu_release_caches();
    return test_summary("test_gpu_genstats");
}
#else
int main(void)
{
    printf("test_gpu_genstats: skipped (built without CUDA)\n");
    return 0;
}
#endif
