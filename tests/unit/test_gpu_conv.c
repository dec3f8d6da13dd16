/* test_gpu_conv.c — host-side logic of the conv_direct, conv_igemm and
 * pool_direct engines, no GPU needed: the geometry handed to the kernels
 * (asymmetric and "same" pads, dilation, groups, 1-D slot placement, strides
 * of NCHW / NHWC tensors, pooling ceil_mode and stride defaults), the
 * conv_igemm accept / reject decisions with their exact reasons, the
 * stride-1 dgrad rewrite, and engine selection.  Built with CUDA=1 only
 * (else it just says so). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if XDNN_HAVE_CUDA
#include "test_util.h"

#include "gpu/conv_analyze.h"
#include "gpu/conv_dgrad.h"
#include "gpu/conv_epi.h"
#include "gpu/conv_wgmma.h"
#include "gpu/conv_wgrad_wgmma.h"
#include "gpu/engine.h"
#include "gpu/kern_conv_wgrad_wgmma.h"
#include "gpu/lower.h"

typedef struct fixture {
    xdnn_module_t *m;
    xdnn_diags_t *d;
    arena *ar;
    ggraph *g;
    gplan *pl;
    gpart *p; /* the last partition: the conv / pool node in these graphs */
} fixture;

static bool setup(fixture *f, const char *body, bool tf32)
{
    char text[1024];
    snprintf(text, sizeof text, "dnn 1;\ngraph g(seed=1, tf32=%s) {\n%s}\n", tf32 ? "true" : "false", body);
    memset(f, 0, sizeof *f);
    f->d = xdnn_diags_create();
    if (xdnn_module_parse("test.dnn", text, strlen(text), false, f->d, &f->m) != XDNN_OK ||
        xdnn_graph_bind(xdnn_module_find_graph(f->m, NULL), NULL, 0, f->d) != XDNN_OK) {
        xdnn_diags_print(f->d, stderr);
        CHECK(false, "the test graph sets up (diagnostics above)");
        return false;
    }
    f->ar = arena_create();
    f->g = gpu_lower(xdnn_module_find_graph(f->m, NULL), f->ar);
    f->pl = gpu_partition(f->g, false);
    f->p = &f->pl->parts[f->pl->nparts - 1];
    return true;
}

static void teardown(fixture *f)
{
    if (f->ar)
        arena_destroy(f->ar);
    xdnn_module_destroy(f->m);
    xdnn_diags_destroy(f->d);
}

static const gpu_device h100 = {.sm_count = 132, .cc_major = 9, .cc_minor = 0};

/* conv_igemm's verdict on the fixture; its reason in why. */
static bool igemm_ok(fixture *f, char *why, size_t len)
{
    why[0] = 0;
    return gpu_engine_find("conv_igemm")->supports(f->pl, f->p, &h100, why, len);
}

static void test_geometry_nchw_asym_dil_groups(void)
{
    fixture f;
    if (!setup(&f, "  input x: f32[2, 6, 13, 10];\n  weight w: f32[4, 3, 3, 2];\n"
                   "  y = conv(x, w, stride=[2, 1], pad=[[1, 0], [0, 2]], dilation=[1, 2], groups=2);\n"
                   "  output y;\n", false))
        return;
    gconv_problem cp;
    char why[512];
    CHECK(gpu_conv_analyze(f.pl, f.p, &cp, why, sizeof why));
    const kconv_params *k = &cp.kp;
    CHECK(cp.dir == GCONV_FWD && cp.nsp == 2);
    CHECK(k->N == 2 && k->C == 6 && k->K == 4 && k->G == 2);
    /* slot 0 (D) is identity; H: (13 + 1 + 0 - 3) / 2 + 1 = 6; W: (10 + 0 + 2 - 3) / 1 + 1 = 10 */
    CHECK(k->in[0] == 1 && k->win[0] == 1 && k->out[0] == 1 && k->stride[0] == 1 && k->pad[0] == 0);
    CHECK(k->out[1] == 6 && k->out[2] == 10);
    CHECK(k->stride[1] == 2 && k->stride[2] == 1 && k->dil[1] == 1 && k->dil[2] == 2);
    CHECK(k->pad[1] == 1 && k->pad[2] == 0);
    /* NCHW x [2, 6, 13, 10]: strides 780, 130, -, 10, 1 */
    CHECK(k->sx[0] == 780 && k->sx[1] == 130 && k->sx[2] == 0 && k->sx[3] == 10 && k->sx[4] == 1);
    CHECK(k->dt_x == KDT_F32 && k->dt_w == KDT_F32 && k->dt_y == KDT_F32);
    /* direct takes it; igemm says why not (groups first) */
    CHECK(gpu_engine_find("conv_direct")->supports(f.pl, f.p, &h100, why, sizeof why));
    CHECK(!igemm_ok(&f, why, sizeof why));
    CHECK(strcmp(why, "conv_igemm needs groups == 1, got groups=2") == 0);
    teardown(&f);
}

static void test_geometry_1d_same_nwc(void)
{
    fixture f;
    if (!setup(&f, "  input x: f16[1, 6, 13] @nwc;\n  weight w: f16[9, 2, 4] @nwc;\n"
                   "  y = conv(x, w, pad=\"same\", stride=2, groups=3);\n  output y: f16 @nwc;\n", false))
        return;
    gconv_problem cp;
    char why[512];
    CHECK(gpu_conv_analyze(f.pl, f.p, &cp, why, sizeof why));
    const kconv_params *k = &cp.kp;
    /* "same": out = ceil(13 / 2) = 7, total pad = (7-1)*2 + 4 - 13 = 3: lo 1, hi 2 */
    CHECK(cp.nsp == 1 && k->out[2] == 7 && k->pad[2] == 1 && k->in[1] == 1 && k->win[1] == 1);
    /* NWC x [1, 6, 13]: channel stride 1, W stride 6, N stride 0 (size 1) */
    CHECK(k->sx[1] == 1 && k->sx[4] == 6 && k->sx[3] == 0 && k->sx[2] == 0);
    CHECK(k->dt_x == KDT_F16);
    CHECK(!igemm_ok(&f, why, sizeof why));
    CHECK_STR(why, "conv_igemm needs groups == 1, got groups=3", "1-D grouped");
    teardown(&f);
}

static void test_igemm_accepts_nhwc_f16(void)
{
    fixture f;
    if (!setup(&f, "  input x: f16[2, 16, 9, 9] @nhwc;\n  weight w: f16[24, 16, 3, 3] @nhwc;\n"
                   "  y = conv(x, w, pad=1);\n  output y: f16 @nhwc;\n", false))
        return;
    char why[512];
    CHECK(igemm_ok(&f, why, sizeof why));
    /* and the selection prefers it over direct */
    CHECK(gpu_select_engines(f.pl, &h100, NULL, 0, 0, NULL, f.d) == XDNN_OK);
    CHECK(f.p->engine && strcmp(f.p->engine->name, "conv_igemm") == 0);
    CHECK(f.p->ws_bytes == 0);
    /* an sm_75 device cannot run it */
    gpu_device old = {.cc_major = 7, .cc_minor = 5};
    CHECK(!gpu_engine_find("conv_igemm")->supports(f.pl, f.p, &old, why, sizeof why));
    CHECK(strstr(why, "sm_80") != NULL);
    teardown(&f);
}

static void test_igemm_rejections(void)
{
    static const struct {
        const char *body;
        bool tf32;
        const char *reason;
    } cases[] = {
        {"  input x: f32[2, 16, 9, 9] @nhwc;\n  weight w: f32[8, 16, 3, 3] @nhwc;\n  y = conv(x, w);\n  output y;\n",
         false, "conv_igemm runs f32 only as tf32, and the graph does not allow tf32 (tf32=false)"},
        {"  input dy: f16[2, 8, 7, 7] @nhwc;\n  input x: f16[2, 16, 9, 9] @nhwc;\n"
         "  dw = conv_wgrad(dy, x, w_dims=[8, 16, 3, 3]);\n  output dw;\n",
         false, "conv_igemm runs conv and conv_dgrad, not conv_wgrad"},
        {"  input dy: f16[2, 8, 4, 4] @nhwc;\n  weight w: f16[8, 8, 3, 3] @nhwc;\n"
         "  dx = conv_dgrad(dy, w, x_dims=[2, 16, 9, 9], stride=2, groups=2);\n  output dx;\n",
         false, "conv_igemm runs conv_dgrad only with groups 1, got groups=2"},
        {"  input dy: f16[2, 12, 7, 7] @nhwc;\n  weight w: f16[12, 16, 3, 3] @nhwc;\n"
         "  dx = conv_dgrad(dy, w, x_dims=[2, 16, 9, 9]);\n  output dx;\n",
         false, "conv_igemm needs C % 8 == 0, got C=12"}, /* dgrad: the GEMM's C is dy's K */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fixture f;
        if (!setup(&f, cases[i].body, cases[i].tf32))
            continue;
        char why[512];
        CHECK(!igemm_ok(&f, why, sizeof why));
        CHECK_STR(why, cases[i].reason, "case %zu", i);
        /* conv_direct takes every one of them */
        CHECK(gpu_engine_find("conv_direct")->supports(f.pl, f.p, &h100, why, sizeof why));
        if (i == 1) { /* the wgrad: tiled, M = 2*7*7 = 98 < 256 -> 1 split, [8][16*3*3] f32 partials */
            gconv_problem cp;
            CHECK(gpu_conv_analyze(f.pl, f.p, &cp, why, sizeof why) && cp.dir == GCONV_WGRAD);
            CHECK(gpu_conv_wgrad_splits(&cp.kp) == 1);
            CHECK(gpu_engine_find("conv_direct")->workspace(f.pl, f.p, &h100) == (8 * 144 * 4 + 255) / 256 * 256);
        }
        teardown(&f);
    }
}

/* conv + bias + relu plans as ONE partition whose analysis carries the
 * steps (bias read along K only, relu with lower 0 / upper inf), writing the
 * chain's end; a node the kernels cannot apply (exp) ends the chain. */
static void test_epilogue_fusion(void)
{
    fixture f;
    if (!setup(&f, "  input x: f16[2, 16, 9, 9] @nhwc;\n  weight w: f16[24, 16, 3, 3] @nhwc;\n"
                   "  weight b: f16[1, 24, 1, 1];\n  input r: f16[2, 24, 9, 9] @nhwc;\n"
                   "  y = relu(conv(x, w, pad=1) + b + r, upper=6.0);\n  output y: f32 @nhwc;\n", false))
        return;
    CHECK(f.pl->nparts == 1);
    char why[512];
    gconv_problem cp;
    CHECK(gpu_conv_analyze(f.pl, f.p, &cp, why, sizeof why));
    CHECK(cp.epi.n == 3 && cp.epi.s[0].op == KEPI_ADD_T && cp.epi.s[1].op == KEPI_ADD_T &&
          cp.epi.s[2].op == KEPI_RELU);
    CHECK(cp.epi.s[0].st[0] == 0 && cp.epi.s[0].st[1] == 1 && cp.epi.s[0].st[3] == 0 && cp.epi.s[0].st[4] == 0);
    CHECK(cp.epi.s[1].st[1] == 1 && cp.epi.s[1].st[4] == 24 && cp.epi.s[1].st[3] == 9 * 24); /* r, NHWC */
    CHECK(cp.epi.s[2].p0 == 0 && cp.epi.s[2].p1 == 6.0f && cp.epi.s[2].p2 == 0);
    CHECK(cp.kp.dt_y == KDT_F32 && strcmp(f.g->t[cp.y].name, "y") == 0);
    char steps[128];
    gconv_epi_describe(&cp.epi, steps, sizeof steps);
    CHECK_STR(steps, "bias+residual+clipped_relu", "describe");
    CHECK(igemm_ok(&f, why, sizeof why));
    teardown(&f);
    if (!setup(&f, "  input x: f16[2, 16, 9, 9] @nhwc;\n  weight w: f16[24, 16, 3, 3] @nhwc;\n"
                   "  weight b: f16[24, 1, 1];\n  y = exp(conv(x, w, pad=1) * 0.5 - b);\n  output y: f16 @nhwc;\n", false))
        return;
    CHECK(f.pl->nparts == 2);
    CHECK(gpu_conv_analyze(f.pl, &f.pl->parts[0], &cp, why, sizeof why));
    CHECK(cp.epi.n == 2 && cp.epi.s[0].op == KEPI_MUL_S && cp.epi.s[0].p0 == 0.5f && cp.epi.s[1].op == KEPI_SUB_T);
    CHECK(cp.epi.s[1].st[1] == 1 && cp.epi.s[1].st[0] == 0); /* a rank-3 [K, 1, 1] operand aligns with K */
    teardown(&f);
}

/* conv_dw takes depthwise fwd / dgrad only, and says why not otherwise. */
static void test_dw_rules(void)
{
    static const struct { const char *body, *reason; } cases[] = {
        {"  input x: f16[2, 16, 9, 9] @nhwc;\n  weight w: f16[16, 1, 3, 3] @nhwc;\n"
         "  y = conv(x, w, pad=1, groups=16);\n  output y: f16 @nhwc;\n", NULL},
        {"  input x: f16[2, 16, 9, 9];\n  weight w: f16[16, 1, 3, 3];\n"
         "  y = conv(x, w, pad=1, groups=16);\n  output y;\n",
         "conv_dw needs channel-contiguous (channels-last) x and y, got channel strides 81 and 81"},
        {"  input x: f16[2, 16, 9, 9] @nhwc;\n  weight w: f16[32, 1, 3, 3] @nhwc;\n"
         "  y = conv(x, w, pad=1, groups=16);\n  output y: f16 @nhwc;\n",
         "conv_dw needs depthwise groups == C == K, got groups=16, C=16, K=32"},
        {"  input x: f16[1, 8, 64, 64] @nhwc;\n  weight w: f16[8, 1, 40, 40] @nhwc;\n"
         "  y = conv(x, w, groups=8);\n  output y: f16 @nhwc;\n", "conv_dw keeps the window in shared memory: at most 1536 taps, got 1600"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fixture f;
        if (!setup(&f, cases[i].body, false))
            continue;
        char why[512] = "";
        const bool ok = gpu_engine_find("conv_dw")->supports(f.pl, f.p, &h100, why, sizeof why);
        CHECK(ok == !cases[i].reason, "case %zu: %s", i, why);
        if (cases[i].reason)
            CHECK_STR(why, cases[i].reason, "case %zu", i);
        else
            CHECK(gpu_select_engines(f.pl, &h100, NULL, 0, 0, NULL, f.d) == XDNN_OK &&
                  strcmp(f.p->engine->name, "conv_dw") == 0);
        teardown(&f);
    }
}

/* Forward convs the kernel cannot read as is run on packed copies: C padded
 * to the 16-byte chunk, channels-last; the copies sit in the workspace. */
static void test_igemm_packed(void)
{
    static const struct {
        const char *body;
        bool tf32;
        int64_t cp, xbytes, wbytes;
    } cases[] = {
        {"  input x: f16[2, 3, 9, 9] @nhwc;\n  weight w: f16[8, 3, 3, 3] @nhwc;\n  y = conv(x, w);\n  output y;\n",
         false, 8, 2 * 81 * 8 * 2, 8 * 9 * 8 * 2},
        {"  input x: f16[2, 16, 9, 9];\n  weight w: f16[8, 16, 3, 3];\n  y = conv(x, w);\n  output y;\n", false, 16,
         2 * 81 * 16 * 2, 8 * 9 * 16 * 2},
        {"  input x: f32[2, 6, 9, 9] @nhwc;\n  weight w: f32[8, 6, 3, 3] @nhwc;\n  y = conv(x, w);\n  output y;\n",
         true, 8, 2 * 81 * 8 * 4, 8 * 9 * 8 * 4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fixture f;
        if (!setup(&f, cases[i].body, cases[i].tf32))
            continue;
        char why[512];
        gconv_problem cp;
        kconv_params pk;
        size_t xb = 0, wb = 0;
        CHECK(igemm_ok(&f, why, sizeof why), "case %zu: %s", i, why);
        CHECK(gpu_conv_analyze(f.pl, f.p, &cp, why, sizeof why));
        CHECK(gpu_conv_igemm_packed(&cp, cases[i].tf32, &pk, &xb, &wb));
        CHECK(pk.C == cases[i].cp && pk.sx[1] == 1 && pk.sx[4] == pk.C && pk.sw[4] == pk.C && pk.sw[0] == 9 * pk.C);
        CHECK(xb == (size_t)(cases[i].xbytes + 255) / 256 * 256 && wb == (size_t)(cases[i].wbytes + 255) / 256 * 256);
        CHECK(gpu_engine_find("conv_igemm")->workspace(f.pl, f.p, &h100) == xb + wb);
        teardown(&f);
    }
}

static void test_dgrad_rewrite(void)
{
    fixture f;
    if (!setup(&f, "  input dy: bf16[2, 24, 9, 9] @nhwc;\n  weight w: bf16[24, 16, 3, 3] @nhwc;\n"
                   "  dx = conv_dgrad(dy, w, x_dims=[2, 16, 9, 12], pad=[[2, 0], [0, 1]], dilation=[1, 2]);\n"
                   "  output dx: bf16 @nhwc;\n", false))
        return;
    gconv_problem cp;
    gconv_phase ph[GCONV_MAX_PHASES];
    char why[512];
    CHECK(gpu_conv_analyze(f.pl, f.p, &cp, why, sizeof why) && cp.dir == GCONV_DGRAD);
    CHECK(gpu_conv_dgrad_phases(&cp, ph, GCONV_MAX_PHASES, why, sizeof why) == 1); /* stride 1: one phase */
    const kconv_params *fw = &ph[0].f;
    /* GEMM: C' = K = 24 in-channels (dy), K' = C = 16 out-channels (dx) */
    CHECK(fw->C == 24 && fw->K == 16 && fw->G == 1 && !ph[0].empty && ph[0].dx_off == 0);
    /* dy spatial in, dx spatial out; pad' = dil*(R-1) - pad: H 1*2-2 = 0, W 2*2-0 = 4 */
    CHECK(fw->in[1] == 9 && fw->in[2] == 9 && fw->out[1] == 9 && fw->out[2] == 12);
    CHECK(fw->pad[1] == 0 && fw->pad[2] == 4 && fw->stride[1] == 1 && fw->dil[2] == 2);
    /* packed [C][R][S][K] weights: strides R*S*K, 1, R*S*K... S*K, K */
    CHECK(fw->sw[0] == 3 * 3 * 24 && fw->sw[1] == 1 && fw->sw[3] == 3 * 24 && fw->sw[4] == 24);
    CHECK(fw->sx[1] == 1 && fw->sy[1] == 1);
    CHECK(igemm_ok(&f, why, sizeof why));
    CHECK(gpu_select_engines(f.pl, &h100, NULL, 0, 0, NULL, f.d) == XDNN_OK);
    CHECK(strcmp(f.p->engine->name, "conv_igemm") == 0);
    CHECK(f.p->ws_bytes == (24 * 16 * 9 * 2 + 255) / 256 * 256); /* the flipped weights */
    teardown(&f);
}

/* Strided dgrad: one stride-1 conv per phase of dx. */
static void test_dgrad_phases(void)
{
    fixture f;
    /* 1x1 stride 2 (the ResNet projection): phase (0,0) has the tap, the other three are zero */
    if (!setup(&f, "  input dy: f16[2, 16, 4, 5] @nhwc;\n  weight w: f16[16, 24, 1, 1] @nhwc;\n"
                   "  dx = conv_dgrad(dy, w, x_dims=[2, 24, 8, 9], stride=2);\n  output dx: f16 @nhwc;\n", false))
        return;
    gconv_problem cp;
    gconv_phase ph[GCONV_MAX_PHASES];
    char why[512];
    CHECK(gpu_conv_analyze(f.pl, f.p, &cp, why, sizeof why));
    CHECK(gpu_conv_dgrad_phases(&cp, ph, GCONV_MAX_PHASES, why, sizeof why) == 4);
    CHECK(!ph[0].empty && ph[1].empty && ph[2].empty && ph[3].empty);
    /* phase (0, 1): dx rows 0, 2, 4, 6 and columns 1, 3, 5, 7: 4 x 4, offset one pixel (24 channels) */
    CHECK(ph[1].f.out[1] == 4 && ph[1].f.out[2] == 4 && ph[1].dx_off == 24);
    CHECK(ph[0].f.out[1] == 4 && ph[0].f.out[2] == 5 && ph[0].f.pad[1] == 0 && ph[0].f.sy[4] == 2 * 24);
    CHECK(igemm_ok(&f, why, sizeof why));
    teardown(&f);
    /* 3x3 stride 2 pad 1: per dim phase 0 takes r = 1 (t0 = 0), phase 1 takes r = 0, 2 (t0 = 1, pad' = 1 - 1 = 0) */
    if (!setup(&f, "  input dy: f16[1, 8, 5, 5] @nhwc;\n  weight w: f16[8, 8, 3, 3] @nhwc;\n"
                   "  dx = conv_dgrad(dy, w, x_dims=[1, 8, 9, 10], stride=2, pad=1);\n  output dx: f16 @nhwc;\n",
               false))
        return;
    CHECK(gpu_conv_analyze(f.pl, f.p, &cp, why, sizeof why));
    CHECK(gpu_conv_dgrad_phases(&cp, ph, GCONV_MAX_PHASES, why, sizeof why) == 4);
    CHECK(ph[0].taps[1] == 1 && ph[0].r0[1] == 1 && ph[0].f.pad[1] == 0);
    CHECK(ph[3].taps[1] == 2 && ph[3].r0[1] == 0 && ph[3].rstep[1] == 2 && ph[3].f.pad[1] == 0);
    CHECK(ph[3].f.dil[1] == 1 && ph[3].f.out[1] == 4 && ph[3].f.out[2] == 5);
    /* packed weights: 1 + 2 + 2 + 4 taps of 8 x 8, in phase order */
    CHECK(ph[1].wt_off == 64 && ph[2].wt_off == 64 * 3 && ph[3].wt_off == 64 * 5);
    teardown(&f);
}

/* conv_wgrad_mma: accepts f16/bf16 in any layout; 16-byte loads only for
 * channels-last with K/G, C/G % 8; rejects f32 and mixed types. */
static void test_wgrad_mma(void)
{
    fixture f;
    if (!setup(&f, "  input dy: f16[32, 64, 56, 56] @nhwc;\n  input x: f16[32, 64, 56, 56] @nhwc;\n"
                   "  dw = conv_wgrad(dy, x, w_dims=[64, 64, 3, 3], pad=1);\n  output dw: f16 @nhwc;\n", false))
        return;
    gconv_problem cp;
    char why[512];
    bool vec = false;
    CHECK(gpu_conv_analyze(f.pl, f.p, &cp, why, sizeof why));
    CHECK(gpu_conv_wgrad_mma_check(f.g, &cp, &vec, why, sizeof why) && vec);
    /* tiles 1 x 5 (k 64, j 576): 264 / 5 = 52 splits */
    CHECK(gpu_conv_wgrad_mma_splits(&cp.kp, 132) == 52);
    /* on 9.0 conv_wgrad_wgmma takes it since its x came by TMA (session 10: 64 x 256, 44 splits) */
    CHECK(gpu_select_engines(f.pl, &h100, NULL, 0, 0, NULL, f.d) == XDNN_OK);
    CHECK(strcmp(f.p->engine->name, "conv_wgrad_wgmma") == 0);
    CHECK(f.p->ws_bytes == (size_t)44 * 64 * 576 * 4);
    teardown(&f);
    if (!setup(&f, "  input dy: bf16[1, 13, 7, 7];\n  input x: bf16[1, 3, 9, 9];\n"
                   "  dw = conv_wgrad(dy, x, w_dims=[13, 3, 3, 3]);\n  output dw;\n", false))
        return;
    CHECK(gpu_conv_analyze(f.pl, f.p, &cp, why, sizeof why));
    CHECK(gpu_conv_wgrad_mma_check(f.g, &cp, &vec, why, sizeof why) && !vec); /* NCHW, odd: element loads */
    teardown(&f);
    if (!setup(&f, "  input dy: f32[1, 8, 7, 7] @nhwc;\n  input x: f32[1, 8, 9, 9] @nhwc;\n"
                   "  dw = conv_wgrad(dy, x, w_dims=[8, 8, 3, 3]);\n  output dw;\n", false))
        return;
    CHECK(!gpu_engine_find("conv_wgrad_mma")->supports(f.pl, f.p, &h100, why, sizeof why));
    CHECK_STR(why, "conv_wgrad_mma needs dy and x both f16 or both bf16, got f32 and f32", "f32 wgrad");
    teardown(&f);
}

static void test_wgrad_splits(void)
{
    /* ResNet 3x3 64 -> 64 at 56x56, batch 32: tiles 2 x 18 = 36, 2048/36 -> 57 splits */
    kconv_params k = {.N = 32, .C = 64, .K = 64, .G = 1, .in = {1, 56, 56}, .win = {1, 3, 3}, .out = {1, 56, 56}};
    CHECK(gpu_conv_wgrad_splits(&k) == 57);
    CHECK(gpu_conv_wgrad_ws_bytes(&k) == 57 * 64 * 576 * 4);
    /* a short reduction is never split below 8 steps of 32: M = 1000 -> 3 */
    kconv_params s = {.N = 1, .C = 4, .K = 4, .G = 1, .in = {1, 1, 1000}, .win = {1, 1, 1}, .out = {1, 1, 1000}};
    CHECK(gpu_conv_wgrad_splits(&s) == 3);
}

/* conv_igemm's split-K: the heuristic on ResNet-50's small-spatial layers
 * (132 SMs), the normalisation (no empty split), the forcing knob, and the
 * partials in the engine's workspace. */
static void test_igemm_splitk(void)
{
    unsetenv("XDNN_CONV_SPLITK");
    /* 3x3 512 -> 512 at 7x7, N = 32: M = 1568 -> 13 x 4 = 52 tiles, 144 slices: 264 / 52 = 5 splits of 29
     * (ceil(144/5) = 29 -> ceil(144/29) = 5) */
    kconv_params k7 = {.dt_x = KDT_F16, .N = 32, .C = 512, .K = 512, .G = 1, .in = {1, 7, 7}, .win = {1, 3, 3},
                       .out = {1, 7, 7}};
    CHECK(gpu_conv_igemm_splits(&k7, 132) == 5);
    CHECK(gpu_conv_igemm_split_ws_bytes(&k7, 5) == (size_t)5 * 1568 * 512 * 4);
    /* 3x3 256 -> 256 at 14x14: 49 x 2 = 98 tiles < 132 SMs: 264 / 98 = 2 */
    kconv_params k14 = k7;
    k14.C = k14.K = 256;
    k14.in[1] = k14.in[2] = k14.out[1] = k14.out[2] = 14;
    CHECK(gpu_conv_igemm_splits(&k14, 132) == 2);
    /* 3x3 128 -> 128 at 28x28: 196 tiles fill the SMs: unsplit, no partials */
    kconv_params k28 = k14;
    k28.C = k28.K = 128;
    k28.in[1] = k28.in[2] = k28.out[1] = k28.out[2] = 28;
    CHECK(gpu_conv_igemm_splits(&k28, 132) == 1);
    CHECK(gpu_conv_igemm_split_ws_bytes(&k28, 1) == 0);
    /* 1x1 2048 -> 512 at 7x7: 52 tiles, 64 slices: at least 8 slices a split -> 5 (of 13, 13, 13, 13, 12) */
    kconv_params k1 = k7;
    k1.C = 2048;
    k1.win[1] = k1.win[2] = 1;
    CHECK(gpu_conv_igemm_splits(&k1, 132) == 5);
    /* a short reduction is not split: 3x3 C = 8 (3 slices) */
    kconv_params ks = k7;
    ks.C = 8;
    CHECK(gpu_conv_igemm_splits(&ks, 132) == 1);
    /* forced: 7 of 18 slices -> per 3 -> 6 splits; more than the slices -> one per slice */
    kconv_params kf = {.dt_x = KDT_BF16, .N = 2, .C = 64, .K = 24, .G = 1, .in = {1, 11, 9}, .win = {1, 3, 3},
                       .out = {1, 11, 9}};
    setenv("XDNN_CONV_SPLITK", "7", 1);
    CHECK(gpu_conv_igemm_splits(&kf, 132) == 6);
    setenv("XDNN_CONV_SPLITK", "99", 1);
    CHECK(gpu_conv_igemm_splits(&kf, 132) == 18);
    setenv("XDNN_CONV_SPLITK", "1", 1);
    CHECK(gpu_conv_igemm_splits(&k7, 132) == 1);
    unsetenv("XDNN_CONV_SPLITK");

    /* the engine: the detail names the split, the workspace holds the partials (after nothing else) */
    fixture f;
    if (!setup(&f, "  input x: f16[32, 512, 7, 7] @nhwc;\n  weight w: f16[512, 512, 3, 3] @nhwc;\n"
                   "  y = conv(x, w, pad=1);\n  output y: f16 @nhwc;\n", false))
        return;
    const gpu_engine *e = gpu_engine_find("conv_igemm");
    CHECK(e->workspace(f.pl, f.p, &h100) == (size_t)5 * 1568 * 512 * 4);
    /* on 9.0 the Hopper engine ranks first (test_wgmma_rules); conv_igemm's own plan is built here */
    CHECK(gpu_select_engines(f.pl, &h100, NULL, 0, 0, NULL, f.d) == XDNN_OK &&
          strcmp(f.p->engine->name, "conv_igemm_wgmma") == 0);
    f.p->ws_bytes = e->workspace(f.pl, f.p, &h100);
    /* build (host only): the detail names the split; a workspace planned smaller (another SM count) drops it */
    gpu_ctx c;
    memset(&c, 0, sizeof c);
    c.plan = f.pl;
    c.dev = h100;
    CHECK(e->build(&c, f.p, f.d) == XDNN_OK && strstr(e->detail(f.p), "split-K 5"), "%s", e->detail(f.p));
    e->release(f.p);
    f.p->ws_bytes = 4096;
    CHECK(e->build(&c, f.p, f.d) == XDNN_OK && !strstr(e->detail(f.p), "split-K"), "%s", e->detail(f.p));
    e->release(f.p);
    teardown(&f);
    /* a stride-1 dgrad (one phase): the phase's packed weights, then the partials, 256-aligned */
    if (!setup(&f, "  input dy: f16[32, 256, 14, 14] @nhwc;\n  weight w: f16[256, 256, 3, 3] @nhwc;\n"
                   "  dx = conv_dgrad(dy, w, x_dims=[32, 256, 14, 14], pad=1);\n  output dx: f16 @nhwc;\n", false))
        return;
    CHECK(e->workspace(f.pl, f.p, &h100) == (size_t)256 * 256 * 9 * 2 + (size_t)2 * 6272 * 256 * 4);
    teardown(&f);
}

/* conv_igemm_wgmma on padded copies (conv_pack.h): C = 12 and NCHW are
 * accepted on copies with C padded to 8 (the workspace holds them, then the
 * partials); the ResNet stem goes to it from N = 2 on 9.0, the N = 1 stem
 * (under GCW_MIN_FLOPS) and the stem on 8.0 to conv_igemm's packed path. */
static void test_wgmma_packed(const gpu_engine *e)
{
    static const struct { const char *body; int64_t cp; size_t xb, wb; } cases[] = {
        {"  input x: f16[2, 12, 9, 9] @nhwc;\n  weight w: f16[16, 12, 3, 3] @nhwc;\n  y = conv(x, w);\n"
         "  output y: f16 @nhwc;\n", 16, 2 * 81 * 16 * 2, 16 * 9 * 16 * 2},
        {"  input x: bf16[2, 16, 9, 9];\n  weight w: bf16[16, 16, 3, 3];\n  y = conv(x, w);\n  output y: bf16;\n",
         16, 2 * 81 * 16 * 2, 16 * 9 * 16 * 2},
        {"  input x: f16[1, 3, 37, 29] @nhwc;\n  weight w: f16[8, 3, 3, 3] @nhwc;\n  y = conv(x, w, pad=1);\n"
         "  output y: f16 @nhwc;\n", 8, 37 * 29 * 8 * 2, 8 * 9 * 8 * 2},
    };
    char why[512];
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        fixture f;
        if (!setup(&f, cases[i].body, false))
            continue;
        gconv_problem cp;
        gconv_packed pk;
        why[0] = 0;
        CHECK(e->supports(f.pl, f.p, &h100, why, sizeof why), "case %d: %s", i, why);
        CHECK(gpu_conv_analyze(f.pl, f.p, &cp, why, sizeof why) &&
              gpu_conv_wgmma_check(f.pl->g, &cp, &h100, &pk, why, sizeof why) && pk.on, "case %d: %s", i, why);
        CHECK(pk.k.C == cases[i].cp && pk.k.sx[1] == 1 && pk.k.sx[4] == pk.k.C && pk.k.sw[1] == 1 &&
              pk.k.sw[0] == 9 * pk.k.C && pk.k.K == cp.kp.K, "case %d", i);
        const size_t xb = (cases[i].xb + 255) / 256 * 256, wb = (cases[i].wb + 255) / 256 * 256;
        CHECK(pk.xbytes == xb && pk.wbytes == wb, "case %d: %zu %zu", i, pk.xbytes, pk.wbytes);
        CHECK(e->workspace(f.pl, f.p, &h100) == xb + wb, "case %d: %zu", i, e->workspace(f.pl, f.p, &h100));
        /* build (host only): the detail names the copies; a workspace short of them is an error, not a crash */
        f.p->ws_bytes = xb + wb;
        gpu_ctx c;
        memset(&c, 0, sizeof c);
        c.plan = f.pl;
        c.dev = h100;
        char want[64];
        snprintf(want, sizeof want, "C %lld -> %lld", (long long)cp.kp.C, (long long)pk.k.C);
        CHECK(e->build(&c, f.p, f.d) == XDNN_OK && strstr(e->detail(f.p), want), "%s", e->detail(f.p));
        e->release(f.p);
        f.p->ws_bytes = xb;
        CHECK(e->build(&c, f.p, f.d) == XDNN_ERR_UNSUPPORTED);
        e->release(f.p);
        teardown(&f);
    }
    /* the ResNet stem: this engine runs it (the copies, then 2 k-splits' partials or none), but the planner
     * gives it to conv_stem (session 11: 0.076 ms at N = 32 against conv_im2col_gemm's 0.157 and this
     * engine's 0.31) */
    static const struct { int n; const char *want; } stems[] = {{32, "conv_stem"}, {2, "conv_stem"}, {1, "conv_stem"}};
    for (int i = 0; i < 3; i++) {
        char body[512];
        snprintf(body, sizeof body, "  input x: f16[%d, 3, 224, 224] @nhwc;\n  weight w: f16[64, 3, 7, 7] @nhwc;\n"
                 "  y = conv(x, w, stride=2, pad=3);\n  output y: f16 @nhwc;\n", stems[i].n);
        fixture f;
        if (!setup(&f, body, false))
            continue;
        CHECK(e->supports(f.pl, f.p, &h100, why, sizeof why), "%s", why);
        CHECK(gpu_select_engines(f.pl, &h100, NULL, 0, 0, NULL, f.d) == XDNN_OK &&
              strcmp(f.p->engine->name, stems[i].want) == 0, "stem N=%d: %s", stems[i].n, f.p->engine->name);
        const size_t xb = (size_t)stems[i].n * 224 * 224 * 8 * 2, wb = 64 * 49 * 8 * 2;
        CHECK(e->workspace(f.pl, f.p, &h100) >= xb + (wb + 255) / 256 * 256);
        if (stems[i].n == 32) { /* the 8.0 device: conv_stem too (mma.sync; modelled, not measured), conv_igemm
                                  * next after conv_im2col_gemm */
            const gpu_device a100 = {.sm_count = 108, .cc_major = 8, .cc_minor = 0};
            CHECK(gpu_select_engines(f.pl, &a100, NULL, 0, 0, NULL, f.d) == XDNN_OK &&
                  strcmp(f.p->engine->name, "conv_stem") == 0);
            CHECK(!e->supports(f.pl, f.p, &a100, why, sizeof why));
            CHECK(gpu_engine_find("conv_igemm")->cost(f.pl, f.p, &a100) <
                  gpu_engine_find("conv_direct")->cost(f.pl, f.p, &a100));
        }
        teardown(&f);
    }
}

/* e's plan of f's partition built on the host for 9.0 (f->p->ws_bytes as set), its detail in detail, released. */
static xdnn_status build_host(const gpu_engine *e, fixture *f, char *detail, size_t len)
{
    gpu_ctx c;
    memset(&c, 0, sizeof c);
    c.plan = f->pl;
    c.dev = h100;
    xdnn_status st = e->build(&c, f->p, f->d);
    snprintf(detail, len, "%s", st == XDNN_OK ? e->detail(f->p) : "");
    e->release(f->p);
    return st;
}

/* f set up for the conv of body: e supports it on 9.0, and the selection there gives it to want.  False
 * when the set-up failed (nothing to tear down). */
static bool chosen(const gpu_engine *e, fixture *f, const char *body, const char *want)
{
    char why[512] = "";
    if (!setup(f, body, false))
        return false;
    CHECK(e->supports(f->pl, f->p, &h100, why, sizeof why), "%s", why);
    CHECK(gpu_select_engines(f->pl, &h100, NULL, 0, 0, NULL, f->d) == XDNN_OK &&
          strcmp(f->p->engine->name, want) == 0, "%s: %s", want, f->p->engine->name);
    return true;
}

static void check_choice(const gpu_engine *e, const char *body, const char *want)
{
    fixture f;
    if (chosen(e, &f, body, want))
        teardown(&f);
}

/* A refusal case: the partition body and the reason an engine must give on 9.0. */
typedef struct refusal_case {
    const char *body, *reason;
} refusal_case;

/* The engine named `name` refuses each case on 9.0 with its reason; the engine (NULL when not found). */
static const gpu_engine *check_refusals(const char *name, const refusal_case *cases, int n)
{
    const gpu_engine *e = gpu_engine_find(name);
    CHECK(e != NULL, "%s", name);
    if (!e)
        return NULL;
    char why[512];
    for (int i = 0; i < n; i++) {
        fixture f;
        if (!setup(&f, cases[i].body, false))
            continue;
        why[0] = 0;
        CHECK(!e->supports(f.pl, f.p, &h100, why, sizeof why));
        CHECK_STR(why, cases[i].reason, "%s refusal", e->name);
        teardown(&f);
    }
    return e;
}

/* On 8.0 engine e refuses f's partition with its compute-capability reason and the selection gives it to
 * `other`. */
static void check_sm80(const gpu_engine *e, fixture *f, const char *other)
{
    const gpu_device a100 = {.sm_count = 108, .cc_major = 8, .cc_minor = 0};
    char why[512], want[160];
    snprintf(want, sizeof want, "%s needs compute capability 9.0 (sm_90a wgmma), device is sm_80", e->name);
    CHECK(!e->supports(f->pl, f->p, &a100, why, sizeof why));
    CHECK_STR(why, want, "on sm_80");
    CHECK(gpu_select_engines(f->pl, &a100, NULL, 0, 0, NULL, f->d) == XDNN_OK &&
          strcmp(f->p->engine->name, other) == 0, "%s", f->p->engine->name);
}

/* conv_igemm_wgmma: its refusals name the attribute and value; on 9.0 the
 * selection prefers it to conv_igemm for a large conv and leaves it the
 * small ones and other devices; tile widths and split-K. */
static void test_wgmma_rules(void)
{
    static const refusal_case cases[] = {
        {"  input x: f16[2, 16, 9, 9] @nhwc;\n  weight w: f16[130, 16, 3, 3] @nhwc;\n  y = conv(x, w);\n"
         "  output y: f16 @nhwc;\n", "conv_igemm_wgmma needs K % 8 == 0, got K=130"},
        {"  input x: f32[2, 16, 9, 9] @nhwc;\n  weight w: f32[16, 16, 3, 3] @nhwc;\n  y = conv(x, w);\n"
         "  output y: f32 @nhwc;\n", "conv_igemm_wgmma needs x and w both f16 or both bf16, got f32 and f32"},
        {"  input x: f16[2, 16, 9, 9] @nhwc;\n  weight w: f16[16, 8, 3, 3] @nhwc;\n  y = conv(x, w, groups=2);\n"
         "  output y: f16 @nhwc;\n", "conv_igemm_wgmma needs groups == 1, got groups=2"},
        {"  input dy: f16[2, 16, 7, 7] @nhwc;\n  input x: f16[2, 16, 9, 9] @nhwc;\n"
         "  dw = conv_wgrad(dy, x, w_dims=[16, 16, 3, 3]);\n  output dw: f16 @nhwc;\n",
         "conv_igemm_wgmma runs conv and conv_dgrad, not conv_wgrad"},
        /* conv_dgrad: the GEMM reads dy (its C is dy's K) and writes dx (its K is dx's C) */
        {"  input dy: f16[2, 12, 7, 7] @nhwc;\n  weight w: f16[12, 16, 3, 3] @nhwc;\n"
         "  dx = conv_dgrad(dy, w, x_dims=[2, 16, 9, 9]);\n  output dx: f16 @nhwc;\n",
         "conv_igemm_wgmma needs conv_dgrad's dy channels K % 8 == 0, got K=12"},
        {"  input dy: f16[2, 16, 7, 7] @nhwc;\n  weight w: f16[16, 13, 3, 3] @nhwc;\n"
         "  dx = conv_dgrad(dy, w, x_dims=[2, 13, 9, 9]);\n  output dx: f16 @nhwc;\n",
         "conv_igemm_wgmma needs conv_dgrad's dx channels C % 2 == 0, got C=13"},
        {"  input dy: f16[2, 16, 7, 7];\n  weight w: f16[16, 16, 3, 3] @nhwc;\n"
         "  dx = conv_dgrad(dy, w, x_dims=[2, 16, 9, 9]);\n  output dx: f16 @nhwc;\n",
         "conv_igemm_wgmma needs channels-last dy (@nhwc) for conv_dgrad, got channel stride 49"},
        {"  input dy: f32[2, 16, 7, 7] @nhwc;\n  weight w: f32[16, 16, 3, 3] @nhwc;\n"
         "  dx = conv_dgrad(dy, w, x_dims=[2, 16, 9, 9]);\n  output dx: f32 @nhwc;\n",
         "conv_igemm_wgmma needs conv_dgrad's dy and w both f16 or both bf16, got f32 and f32"},
        {"  input dy: f16[2, 16, 4, 4] @nhwc;\n  weight w: f16[16, 8, 3, 3] @nhwc;\n"
         "  dx = conv_dgrad(dy, w, x_dims=[2, 16, 9, 9], stride=2, groups=2);\n  output dx: f16 @nhwc;\n",
         "conv_igemm_wgmma needs groups == 1, got groups=2"},
        /* 3-D runs (the kernel's D3 instances) with the same rules (the UNet stem's dgrad, dx of C = 4, runs:
         * pairs of channels) */
        {"  input dy: f16[1, 32, 3, 4, 5] @ndhwc;\n  weight w: f16[32, 3, 3, 3, 3] @ndhwc;\n"
         "  dx = conv_dgrad(dy, w, x_dims=[1, 3, 5, 6, 7]);\n  output dx: f16 @ndhwc;\n",
         "conv_igemm_wgmma needs conv_dgrad's dx channels C % 2 == 0, got C=3"},
    };
    const gpu_engine *e = check_refusals("conv_igemm_wgmma", cases, (int)(sizeof cases / sizeof cases[0]));
    if (!e)
        return;
    /* ResNet's 3x3 64 -> 64 at 56x56 (N = 32): taken on 9.0 and preferred, refused on 8.0 */
    fixture f;
    if (!chosen(e, &f, "  input x: f16[32, 64, 56, 56] @nhwc;\n  weight w: f16[64, 64, 3, 3] @nhwc;\n"
                       "  y = conv(x, w, pad=1);\n  output y: f16 @nhwc;\n", "conv_igemm_wgmma"))
        return;
    CHECK(f.p->ws_bytes == 0);
    check_sm80(e, &f, "conv_igemm");
    teardown(&f);
    /* a 1x1 conv of C = 64 (one 64-deep slice): alone, conv_im2col_gemm's one GEMM (session 8: 0.20 ms
     * against 0.48 at N = 256); with a fused relu, conv_igemm, measured faster there than this engine */
    check_choice(e, "  input x: f16[32, 64, 56, 56] @nhwc;\n  weight w: f16[256, 64, 1, 1] @nhwc;\n"
                    "  y = conv(x, w);\n  output y: f16 @nhwc;\n", "conv_im2col_gemm");
    check_choice(e, "  input x: f16[32, 64, 56, 56] @nhwc;\n  weight w: f16[256, 64, 1, 1] @nhwc;\n"
                    "  y = relu(conv(x, w));\n  output y: f16 @nhwc;\n", "conv_igemm");
    /* 3-D UNet layers (bench/RESULTS-conv.md, session 9): K = 64 here (0.094 ms against conv_igemm's 0.107),
     * K = 32 on conv_igemm (half of each 64-wide tile idle: 0.433 against 0.412), forward and dgrad */
    check_choice(e, "  input x: bf16[2, 64, 32, 32, 32] @ndhwc;\n  weight w: bf16[64, 64, 3, 3, 3] @ndhwc;\n"
                    "  y = conv(x, w, pad=1);\n  output y: bf16 @ndhwc;\n", "conv_igemm_wgmma");
    check_choice(e, "  input dy: bf16[2, 64, 32, 32, 32] @ndhwc;\n  weight w: bf16[64, 64, 3, 3, 3] @ndhwc;\n"
                    "  dx = conv_dgrad(dy, w, x_dims=[2, 64, 32, 32, 32], pad=1);\n  output dx: bf16 @ndhwc;\n",
                    "conv_igemm_wgmma");
    /* the 3-D K = 32 layer on the 32-wide tile (session 12); with XDNN_CONV_WGMMA_BN32=0 the 64-wide tile's
     * idle half is charged and conv_igemm keeps it, as before */
    static const char u32[] = "  input x: bf16[2, 32, 64, 64, 64] @ndhwc;\n  weight w: bf16[32, 32, 3, 3, 3] @ndhwc;\n"
                              "  y = conv(x, w, pad=1);\n  output y: bf16 @ndhwc;\n";
    check_choice(e, u32, "conv_igemm_wgmma");
    setenv("XDNN_CONV_WGMMA_BN32", "0", 1);
    check_choice(e, u32, "conv_igemm");
    unsetenv("XDNN_CONV_WGMMA_BN32");
    /* the BraTS stem (C = 4): its dgrad (dx C = 4 in pairs) on the 32-wide tile, 0.97x conv_igemm's time; its
     * forward on padded copies stays on conv_igemm (1.11x faster there), as measured in session 12 */
    check_choice(e, "  input dy: bf16[1, 32, 128, 128, 128] @ndhwc;\n  weight w: bf16[32, 4, 3, 3, 3] @ndhwc;\n"
                    "  dx = conv_dgrad(dy, w, x_dims=[1, 4, 128, 128, 128], pad=1);\n  output dx: bf16 @ndhwc;\n",
                    "conv_igemm_wgmma");
    check_choice(e, "  input x: bf16[1, 4, 128, 128, 128] @ndhwc;\n  weight w: bf16[32, 4, 3, 3, 3] @ndhwc;\n"
                    "  y = conv(x, w, pad=1);\n  output y: bf16 @ndhwc;\n", "conv_igemm");
    /* a small conv stays on conv_igemm though this engine could run it */
    check_choice(e, "  input x: f16[2, 16, 9, 9] @nhwc;\n  weight w: f16[24, 16, 3, 3] @nhwc;\n"
                    "  y = conv(x, w, pad=1);\n  output y: f16 @nhwc;\n", "conv_igemm");

    test_wgmma_packed(e);

    /* tile widths: 128 when it pads K by at most an eighth, else 64 */
    static const int64_t ks[][2] = {{8, 64}, {64, 64}, {120, 128}, {136, 64}, {256, 128}, {384, 128}, {240, 128},
                                    {224, 64}, {200, 64}};
    for (int i = 0; i < (int)(sizeof ks / sizeof ks[0]); i++) {
        kconv_params k = {.K = ks[i][0]};
        CHECK(gpu_conv_wgmma_bn(&k) == ks[i][1], "K=%lld: bn %d", (long long)ks[i][0], gpu_conv_wgmma_bn(&k));
    }
    /* 32 for a 3-D conv of K <= 32 (any conv with XDNN_CONV_WGMMA_BN32=1, none with =0) */
    kconv_params k3 = {.K = 32, .in = {5, 9, 9}, .win = {3, 3, 3}, .out = {5, 9, 9}}, k2 = {.K = 24};
    CHECK(gpu_conv_wgmma_bn(&k3) == 32 && gpu_conv_wgmma_bn(&k2) == 64);
    k3.K = 40;
    CHECK(gpu_conv_wgmma_bn(&k3) == 64);
    k3.K = 8;
    setenv("XDNN_CONV_WGMMA_BN32", "1", 1);
    CHECK(gpu_conv_wgmma_bn(&k3) == 32 && gpu_conv_wgmma_bn(&k2) == 32);
    setenv("XDNN_CONV_WGMMA_BN32", "0", 1);
    CHECK(gpu_conv_wgmma_bn(&k3) == 64 && gpu_conv_wgmma_bn(&k2) == 64);
    unsetenv("XDNN_CONV_WGMMA_BN32");
    /* split-K: 3x3 512 -> 512 at 7x7, N = 32: 13 x 4 tiles of 128 x 128, 72 slices: 132 / 52 = 2 splits of 36;
     * 3x3 256 -> 256 at 14x14: 98 tiles (a persistent CTA per SM takes the rest): unsplit */
    unsetenv("XDNN_CONV_SPLITK");
    kconv_params k7 = {.dt_x = KDT_F16, .N = 32, .C = 512, .K = 512, .G = 1, .in = {1, 7, 7}, .win = {1, 3, 3},
                       .out = {1, 7, 7}};
    CHECK(gpu_conv_wgmma_splits(&k7, 132) == 2);
    CHECK(gpu_conv_wgmma_ws_bytes(&k7, 2) == (size_t)2 * 1568 * 512 * 4);
    kconv_params k14 = k7;
    k14.C = k14.K = 256;
    k14.in[1] = k14.in[2] = k14.out[1] = k14.out[2] = 14;
    CHECK(gpu_conv_wgmma_splits(&k14, 132) == 1 && gpu_conv_wgmma_ws_bytes(&k14, 1) == 0);
    /* 3x3 512 -> 128 at 7x7: 13 tiles, 72 slices: 132 / 13 = 10 splits, per 8 -> 9 */
    kconv_params kn = k7;
    kn.K = 128;
    CHECK(gpu_conv_wgmma_splits(&kn, 132) == 9, "%d", gpu_conv_wgmma_splits(&kn, 132));
    /* forced: 7 of 9 slices (C = 64, 3x3) -> per 2 -> 5 splits */
    kconv_params kf = {.dt_x = KDT_BF16, .N = 2, .C = 64, .K = 24, .G = 1, .in = {1, 11, 9}, .win = {1, 3, 3},
                       .out = {1, 11, 9}};
    setenv("XDNN_CONV_SPLITK", "7", 1);
    CHECK(gpu_conv_wgmma_splits(&kf, 132) == 5);
    unsetenv("XDNN_CONV_SPLITK");
    /* the engine's plan on the 7x7 layer: partials in the workspace, the split and tile in the detail */
    if (!setup(&f, "  input x: f16[32, 512, 7, 7] @nhwc;\n  weight w: f16[512, 512, 3, 3] @nhwc;\n"
                   "  y = conv(x, w, pad=1);\n  output y: f16 @nhwc;\n", false))
        return;
    CHECK(e->workspace(f.pl, f.p, &h100) == (size_t)2 * 1568 * 512 * 4);
    f.p->ws_bytes = e->workspace(f.pl, f.p, &h100);
    char detail[512];
    CHECK(build_host(e, &f, detail, sizeof detail) == XDNN_OK && strstr(detail, "split-K 2") &&
              strstr(detail, "tile 128x128x64"), "%s", detail);
    teardown(&f);
}

/* conv_igemm_wgmma on conv_dgrad (conv_dgrad.h): ResNet's 3x3 dgrad is
 * taken on 9.0 and ranked first, conv_igemm keeps it on 8.0 and keeps the
 * one-slice 1x1 dgrad (dy K = 64); the 1x1 stride-2 projection's three
 * empty phases are zero-filled by its GEMM's store (the offsets of one
 * pixel, one row and both), and on an odd dx only the phase on the GEMM's
 * lattice is. */
/* conv_wgrad_wgmma: its refusals name the attribute and value; on 9.0 the
 * selection gives it ResNet-50's 3x3 wgrads at N = 256, 64@56x56 too since
 * x comes by TMA (session 10: its 64 x 256 tile 0.18 ms against
 * conv_wgrad_mma's 0.40), leaves the 1x1 ones to conv_im2col_gemm and other
 * devices to conv_wgrad_mma; its tile (128 x 256 from 256 channels on),
 * splits and workspace. */
static void test_wgrad_wgmma(void)
{
    static const refusal_case cases[] = {
        {"  input dy: f32[2, 16, 7, 7] @nhwc;\n  input x: f32[2, 16, 9, 9] @nhwc;\n"
         "  dw = conv_wgrad(dy, x, w_dims=[16, 16, 3, 3]);\n  output dw: f32 @nhwc;\n",
         "conv_wgrad_wgmma needs dy and x both f16 or both bf16, got f32 and f32"},
        {"  input dy: f16[2, 16, 7, 7] @nhwc;\n  input x: f16[2, 6, 9, 9] @nhwc;\n"
         "  dw = conv_wgrad(dy, x, w_dims=[16, 6, 3, 3]);\n  output dw: f16 @nhwc;\n",
         "conv_wgrad_wgmma needs x channels C % 4 == 0, got C=6"},
        {"  input dy: f16[2, 12, 7, 7] @nhwc;\n  input x: f16[2, 16, 9, 9] @nhwc;\n"
         "  dw = conv_wgrad(dy, x, w_dims=[12, 16, 3, 3]);\n  output dw: f16 @nhwc;\n",
         "conv_wgrad_wgmma needs dy channels K % 8 == 0, got K=12"},
        {"  input dy: f16[2, 16, 7, 7];\n  input x: f16[2, 16, 9, 9];\n"
         "  dw = conv_wgrad(dy, x, w_dims=[16, 16, 3, 3]);\n  output dw: f16;\n",
         "conv_wgrad_wgmma needs channels-last dy and x (@nhwc), got channel strides dy 49, x 81"},
        {"  input dy: f16[2, 16, 7, 7] @nhwc;\n  input x: f16[2, 16, 9, 9] @nhwc;\n"
         "  dw = conv_wgrad(dy, x, w_dims=[16, 8, 3, 3], groups=2);\n  output dw: f16 @nhwc;\n",
         "conv_wgrad_wgmma needs groups == 1, got groups=2"},
        {"  input x: f16[2, 16, 9, 9] @nhwc;\n  weight w: f16[16, 16, 3, 3] @nhwc;\n  y = conv(x, w);\n"
         "  output y: f16 @nhwc;\n", "conv_wgrad_wgmma runs conv_wgrad only, not conv"},
    };
    const gpu_engine *e = check_refusals("conv_wgrad_wgmma", cases, (int)(sizeof cases / sizeof cases[0]));
    if (!e)
        return;
    char why[512];
    /* 3x3 128 -> 128 at 28x28, N = 256: 9 tiles of 128 x 128, 3136 slices in 14 splits (one wave of 126
     * CTAs), taken on 9.0; refused on 8.0, where conv_wgrad_mma takes it */
    fixture f;
    if (!chosen(e, &f, "  input dy: bf16[256, 128, 28, 28] @nhwc;\n  input x: bf16[256, 128, 28, 28] @nhwc;\n"
                       "  dw = conv_wgrad(dy, x, w_dims=[128, 128, 3, 3], pad=1);\n  output dw: bf16 @nhwc;\n",
                "conv_wgrad_wgmma"))
        return;
    gconv_problem cp;
    gwx_plan wp;
    CHECK(gpu_conv_analyze(f.pl, f.p, &cp, why, sizeof why));
    gpu_conv_wgrad_wgmma_plan(&cp.kp, 132, &wp);
    CHECK(wp.bm == 128 && wp.bn == 128 && wp.tiles == 9 && wp.slices == 3136 && wp.splits == 14,
          "bm %d bn %d tiles %lld slices %lld splits %d", wp.bm, wp.bn, (long long)wp.tiles, (long long)wp.slices,
          wp.splits);
    CHECK(f.p->ws_bytes == gpu_conv_wgrad_wgmma_ws_bytes(&cp.kp, &wp) && f.p->ws_bytes == (size_t)14 * 128 * 1152 * 4);
    CHECK(wp.us > 80.0 && wp.us < 110.0, "modelled %.1f us (measured 90.1, session 10)", wp.us);
    char detail[256];
    CHECK(build_host(e, &f, detail, sizeof detail) == XDNN_OK && strstr(detail, "9 tiles x 14 splits"), "%s", detail);
    check_sm80(e, &f, "conv_wgrad_mma");
    teardown(&f);
    /* the 7x7 layer (72 tiles of 128 x 256) and the stride-2 one into it; 64@56x56 takes the 64 x 256 tile;
     * a 1x1 wgrad stays on conv_im2col_gemm */
    check_choice(e, "  input dy: bf16[256, 512, 7, 7] @nhwc;\n  input x: bf16[256, 512, 7, 7] @nhwc;\n"
                    "  dw = conv_wgrad(dy, x, w_dims=[512, 512, 3, 3], pad=1);\n  output dw: bf16 @nhwc;\n",
                 "conv_wgrad_wgmma");
    check_choice(e, "  input dy: bf16[256, 512, 7, 7] @nhwc;\n  input x: bf16[256, 512, 14, 14] @nhwc;\n"
                    "  dw = conv_wgrad(dy, x, w_dims=[512, 512, 3, 3], stride=2, pad=1);\n  output dw: bf16 @nhwc;\n",
                 "conv_wgrad_wgmma");
    check_choice(e, "  input dy: bf16[256, 64, 56, 56] @nhwc;\n  input x: bf16[256, 64, 56, 56] @nhwc;\n"
                    "  dw = conv_wgrad(dy, x, w_dims=[64, 64, 3, 3], pad=1);\n  output dw: bf16 @nhwc;\n",
                 "conv_wgrad_wgmma");
    kconv_params k = {.N = 256, .C = 64, .K = 64, .G = 1, .in = {1, 56, 56}, .win = {1, 3, 3}, .out = {1, 56, 56}};
    gpu_conv_wgrad_wgmma_plan(&k, 132, &wp);
    CHECK(wp.bm == 64 && wp.bn == 256 && wp.tiles == 3 && wp.splits == 44, "bm %d tiles %lld splits %d", wp.bm,
          (long long)wp.tiles, wp.splits);
    /* 256@14x14: the 128 x 256 tile, 18 tiles x 7 splits (0.092 ms, call 1); x by TMA im2col but for C % 64
     * != 0, a 1-D conv's unit H taken (its stride 0 in the view), and XDNN_WGRAD_X_NO_TMA=1 */
    kconv_params k2 = {.dt_x = KDT_BF16, .N = 256, .C = 256, .K = 256, .G = 1, .in = {1, 14, 14}, .win = {1, 3, 3},
                       .out = {1, 14, 14}, .stride = {1, 1, 1}, .dil = {1, 1, 1}, .pad = {0, 1, 1},
                       .sx = {14 * 14 * 256, 1, 0, 14 * 256, 256}, .sy = {14 * 14 * 256, 1, 0, 14 * 256, 256}};
    gpu_conv_wgrad_wgmma_plan(&k2, 132, &wp);
    CHECK(wp.bm == 128 && wp.bn == 256 && wp.tiles == 18 && wp.splits == 7, "bm %d bn %d tiles %lld splits %d", wp.bm,
          wp.bn, (long long)wp.tiles, wp.splits);
    CHECK(kconv_wgrad_wgmma_x_tma(&k2) == 1);
    setenv("XDNN_WGRAD_X_NO_TMA", "1", 1);
    CHECK(kconv_wgrad_wgmma_x_tma(&k2) == 0);
    unsetenv("XDNN_WGRAD_X_NO_TMA");
    k2.C = 72;
    CHECK(kconv_wgrad_wgmma_x_tma(&k2) == 0);
    kconv_params k1 = {.dt_x = KDT_F16, .N = 3, .C = 64, .K = 24, .G = 1, .in = {1, 1, 101}, .win = {1, 1, 5},
                       .out = {1, 1, 49}, .stride = {1, 1, 2}, .dil = {1, 1, 2}, .pad = {0, 0, 3},
                       .sx = {6464, 1, 0, 0, 64}, .sy = {1176, 1, 0, 0, 24}};
    CHECK(kconv_wgrad_wgmma_x_tma(&k1) == 1);
    /* 3-D (session 11): x by the gather (the im2col map is 4-d); the BraTS stem's C = 4 taken as 8 channels
     * (its J = 27 * 8) and its dw workspace sized so */
    kconv_params k3 = {.dt_x = KDT_BF16, .N = 2, .C = 64, .K = 64, .G = 1, .in = {32, 32, 32}, .win = {3, 3, 3},
                       .out = {32, 32, 32}, .stride = {1, 1, 1}, .dil = {1, 1, 1}, .pad = {1, 1, 1},
                       .sx = {32 * 32 * 32 * 64, 1, 32 * 32 * 64, 32 * 64, 64},
                       .sy = {32 * 32 * 32 * 64, 1, 32 * 32 * 64, 32 * 64, 64}};
    CHECK(kconv_wgrad_wgmma_x_tma(&k3) == 0);
    gpu_conv_wgrad_wgmma_plan(&k3, 132, &wp);
    CHECK(wp.bm == 64 && wp.bn == 256 && wp.tiles == 7 && wp.slices == 1024, "bm %d tiles %lld slices %lld", wp.bm,
          (long long)wp.tiles, (long long)wp.slices);
    kconv_params k4 = k3;
    k4.N = 1;
    k4.C = 4;
    k4.K = 32;
    gpu_conv_wgrad_wgmma_plan(&k4, 132, &wp);
    CHECK(wp.bm == 64 && wp.tiles == 1 && gpu_conv_wgrad_wgmma_ws_bytes(&k4, &wp) == (size_t)wp.splits * 32 * 216 * 4,
          "bm %d tiles %lld splits %d", wp.bm, (long long)wp.tiles, wp.splits);
    check_choice(e, "  input dy: bf16[1, 32, 128, 128, 128] @ndhwc;\n"
                    "  input x: bf16[1, 4, 128, 128, 128] @ndhwc;\n"
                    "  dw = conv_wgrad(dy, x, w_dims=[32, 4, 3, 3, 3], pad=1);\n  output dw: bf16 @ndhwc;\n",
                 "conv_wgrad_wgmma");
    check_choice(e, "  input dy: bf16[256, 256, 14, 14] @nhwc;\n  input x: bf16[256, 1024, 14, 14] @nhwc;\n"
                    "  dw = conv_wgrad(dy, x, w_dims=[256, 1024, 1, 1]);\n  output dw: bf16 @nhwc;\n",
                 "conv_im2col_gemm");
}

/* e's build of body says its GEMM phases run in one launch, or not (want). */
static void check_one_launch(const gpu_engine *e, const char *body, bool want)
{
    fixture f;
    if (!setup(&f, body, false))
        return;
    f.p->ws_bytes = e->workspace(f.pl, f.p, &h100);
    char detail[512];
    CHECK(build_host(e, &f, detail, sizeof detail) == XDNN_OK &&
              (strstr(detail, "GEMMs in one launch") != NULL) == want && (!want || strstr(detail, "cp.async")),
          "%s", detail);
    teardown(&f);
}

static void test_wgmma_dgrad(void)
{
    const gpu_engine *e = gpu_engine_find("conv_igemm_wgmma");
    const gpu_device a100 = {.sm_count = 108, .cc_major = 8, .cc_minor = 0};
    char why[512] = "";
    fixture f;
    if (!chosen(e, &f, "  input dy: f16[32, 64, 56, 56] @nhwc;\n  weight w: f16[64, 64, 3, 3] @nhwc;\n"
                       "  dx = conv_dgrad(dy, w, x_dims=[32, 64, 56, 56], pad=1);\n  output dx: f16 @nhwc;\n",
                "conv_igemm_wgmma"))
        return;
    CHECK(f.p->ws_bytes == 64 * 64 * 9 * 2); /* the flipped weights; 784 x 1 tiles: unsplit */
    CHECK(gpu_select_engines(f.pl, &a100, NULL, 0, 0, NULL, f.d) == XDNN_OK &&
          strcmp(f.p->engine->name, "conv_igemm") == 0);
    teardown(&f);
    /* the 1x1 dgrad of K = 64 alone: conv_im2col_gemm's one GEMM (session 8: 0.21 ms against 0.50 at N = 256) */
    check_choice(e, "  input dy: f16[32, 64, 56, 56] @nhwc;\n  weight w: f16[64, 256, 1, 1] @nhwc;\n"
                    "  dx = conv_dgrad(dy, w, x_dims=[32, 256, 56, 56]);\n  output dx: f16 @nhwc;\n",
                 "conv_im2col_gemm");
    /* the projection: dx [32, 256, 56, 56] NHWC, phase (0,0) the GEMM, (0,1) (1,0) (1,1) at +W, +H, +H+W */
    if (!setup(&f, "  input dy: f16[32, 512, 28, 28] @nhwc;\n  weight w: f16[512, 256, 1, 1] @nhwc;\n"
                   "  dx = conv_dgrad(dy, w, x_dims=[32, 256, 56, 56], stride=2);\n  output dx: f16 @nhwc;\n", false))
        return;
    gconv_problem cp;
    gconv_dgrad *dg = calloc(1, sizeof *dg);
    CHECK(gpu_conv_analyze(f.pl, f.p, &cp, why, sizeof why) &&
          gpu_conv_dgrad_plan(&cp, 132, gpu_conv_wgmma_splits, dg, why, sizeof why) && dg->nph == 4, "%s", why);
    gpu_conv_dgrad_fold(dg, 8, 3);
    CHECK(dg->nzero[0] == 3 && dg->folded[1] && dg->folded[2] && dg->folded[3] && !dg->folded[0]);
    CHECK(dg->zoff[0][0] == 256 && dg->zoff[0][1] == 56 * 256 && dg->zoff[0][2] == 57 * 256);
    CHECK(gpu_conv_dgrad_launches(dg) == 2 && gpu_conv_dgrad_empty(dg) == 3);
    CHECK(gpu_select_engines(f.pl, &h100, NULL, 0, 0, NULL, f.d) == XDNN_OK &&
          strcmp(f.p->engine->name, "conv_igemm_wgmma") == 0);
    CHECK(f.p->ws_bytes == 512 * 256 * 2);
    char detail[512];
    CHECK(build_host(e, &f, detail, sizeof detail) == XDNN_OK &&
              strstr(detail, "(3 zero, 3 of them in a GEMM's store)") && strstr(detail, "M=25088 N=256 K=512"),
          "%s", detail);
    f.p->ws_bytes = 1024; /* short of the phase weights: an error, not a crash */
    CHECK(build_host(e, &f, detail, sizeof detail) == XDNN_ERR_UNSUPPORTED);
    teardown(&f);
    /* an odd dx (13 x 12): phase (0,1) has the GEMM's 7 x 6 lattice, (1,0) and (1,1) 6 x 6: launched */
    if (!setup(&f, "  input dy: f16[2, 16, 7, 6] @nhwc;\n  weight w: f16[16, 24, 1, 1] @nhwc;\n"
                   "  dx = conv_dgrad(dy, w, x_dims=[2, 24, 13, 12], stride=2);\n  output dx: f16 @nhwc;\n", false))
        return;
    CHECK(gpu_conv_analyze(f.pl, f.p, &cp, why, sizeof why) &&
          gpu_conv_dgrad_plan(&cp, 132, gpu_conv_wgmma_splits, dg, why, sizeof why) && dg->nph == 4, "%s", why);
    gpu_conv_dgrad_fold(dg, 8, 3);
    CHECK(dg->nzero[0] == 1 && dg->zoff[0][0] == 24 && dg->folded[1] && !dg->folded[2] && !dg->folded[3]);
    CHECK(gpu_conv_dgrad_launches(dg) == 4);
    /* split-K GEMMs store through the reduction: nothing folds */
    dg->splits[0] = 2;
    memset(dg->folded, 0, sizeof dg->folded);
    memset(dg->nzero, 0, sizeof dg->nzero);
    gpu_conv_dgrad_fold(dg, 8, 3);
    CHECK(dg->nzero[0] == 0 && gpu_conv_dgrad_launches(dg) == 5);
    free(dg);
    teardown(&f);
    /* session 11: the GEMM phases in one launch (kconv_wgmma_phases): the 3-D UNet's stride-2 dgrad (eight
     * phases); not 2-D ones by default (ResNet-50's at N = 256, a small one off TMA), nor one GEMM phase beside
     * empty ones, nor with XDNN_DGRAD_ONE_LAUNCH=0; =1 takes the 2-D ones */
    static const char *const u3d = "  input dy: bf16[2, 128, 16, 16, 16] @ndhwc;\n"
                                   "  weight w: bf16[128, 64, 3, 3, 3] @ndhwc;\n"
                                   "  dx = conv_dgrad(dy, w, x_dims=[2, 64, 32, 32, 32], stride=2, pad=1);\n"
                                   "  output dx: bf16 @ndhwc;\n";
    static const char *const r50 = "  input dy: bf16[256, 256, 14, 14] @nhwc;\n"
                                   "  weight w: bf16[256, 256, 3, 3] @nhwc;\n"
                                   "  dx = conv_dgrad(dy, w, x_dims=[256, 256, 28, 28], stride=2, pad=1);\n"
                                   "  output dx: bf16 @nhwc;\n";
    check_one_launch(e, u3d, true);
    check_one_launch(e, "  input dy: f16[3, 24, 8, 7] @nhwc;\n  weight w: f16[24, 40, 3, 3] @nhwc;\n"
                        "  dx = conv_dgrad(dy, w, x_dims=[3, 40, 15, 13], stride=2, pad=1);\n  output dx: f16 @nhwc;\n",
                     false);
    check_one_launch(e, r50, false);
    check_one_launch(e, "  input dy: f16[2, 16, 7, 6] @nhwc;\n  weight w: f16[16, 24, 1, 1] @nhwc;\n"
                        "  dx = conv_dgrad(dy, w, x_dims=[2, 24, 13, 12], stride=2);\n  output dx: f16 @nhwc;\n",
                     false);
    setenv("XDNN_DGRAD_ONE_LAUNCH", "0", 1);
    check_one_launch(e, u3d, false);
    setenv("XDNN_DGRAD_ONE_LAUNCH", "1", 1);
    check_one_launch(e, r50, true);
    unsetenv("XDNN_DGRAD_ONE_LAUNCH");
}

/* e's build of body on 9.0: its detail holds want (the producer it names). */
static void check_detail(const gpu_engine *e, const char *body, const char *want)
{
    fixture f;
    if (!setup(&f, body, false))
        return;
    f.p->ws_bytes = e->workspace(f.pl, f.p, &h100);
    char detail[512];
    CHECK(build_host(e, &f, detail, sizeof detail) == XDNN_OK && strstr(detail, want), "%s: %s", want, detail);
    teardown(&f);
}

/* session 13: the 3-D code's producer by the 5-d im2col map (XDNN_CONV_WGMMA_TMA3D): the 3-D UNet's C = 32 (two
 * taps a slice) and C = 64 layers, the stride-1 dgrad of K = 32 (its phase reads dy's 32 channels) and the C = 4
 * stem's dgrad; the gather for the stem forward's packed copies (C 4 -> 8), the strided dgrad's one launch, C = 48,
 * a 2-D conv on the 32-wide tile, and everything with the switch at 0 */
static void test_wgmma_tma3d(void)
{
    const gpu_engine *e = gpu_engine_find("conv_igemm_wgmma");
    static const char *const c32 = "  input x: bf16[2, 32, 64, 64, 64] @ndhwc;\n  weight w: bf16[32, 32, 3, 3, 3] @ndhwc;\n"
                                   "  y = conv(x, w, pad=1);\n  output y: bf16 @ndhwc;\n";
    static const char *const c64 = "  input x: bf16[2, 64, 32, 32, 32] @ndhwc;\n  weight w: bf16[64, 64, 3, 3, 3] @ndhwc;\n"
                                   "  y = conv(x, w, pad=1);\n  output y: bf16 @ndhwc;\n";
    static const char *const d32 = "  input dy: bf16[2, 32, 64, 64, 64] @ndhwc;\n  weight w: bf16[32, 32, 3, 3, 3] @ndhwc;\n"
                                   "  dx = conv_dgrad(dy, w, x_dims=[2, 32, 64, 64, 64], pad=1);\n  output dx: bf16 @ndhwc;\n";
    static const char *const stem_dg = "  input dy: bf16[1, 32, 128, 128, 128] @ndhwc;\n"
                                       "  weight w: bf16[32, 4, 3, 3, 3] @ndhwc;\n"
                                       "  dx = conv_dgrad(dy, w, x_dims=[1, 4, 128, 128, 128], pad=1);\n"
                                       "  output dx: bf16 @ndhwc;\n";
    static const char t5[] = "TMA (5-d im2col x, tiled w)", ca[] = "cp.async";
    check_detail(e, c32, t5);
    check_detail(e, c64, t5);
    check_detail(e, d32, t5);
    check_detail(e, stem_dg, t5);
    check_detail(e, "  input x: bf16[1, 4, 16, 16, 16] @ndhwc;\n  weight w: bf16[32, 4, 3, 3, 3] @ndhwc;\n"
                    "  y = conv(x, w, pad=1);\n  output y: bf16 @ndhwc;\n", ca);
    check_detail(e, "  input dy: bf16[2, 128, 16, 16, 16] @ndhwc;\n  weight w: bf16[128, 64, 3, 3, 3] @ndhwc;\n"
                    "  dx = conv_dgrad(dy, w, x_dims=[2, 64, 32, 32, 32], stride=2, pad=1);\n"
                    "  output dx: bf16 @ndhwc;\n", ca);
    check_detail(e, "  input x: bf16[2, 48, 9, 9, 9] @ndhwc;\n  weight w: bf16[32, 48, 3, 3, 3] @ndhwc;\n"
                    "  y = conv(x, w, pad=1);\n  output y: bf16 @ndhwc;\n", ca);
    setenv("XDNN_CONV_WGMMA_BN32", "1", 1);
    check_detail(e, "  input x: bf16[2, 64, 13, 11] @nhwc;\n  weight w: bf16[32, 64, 3, 3] @nhwc;\n"
                    "  y = conv(x, w, pad=1);\n  output y: bf16 @nhwc;\n", "m64n32k16, cp.async");
    unsetenv("XDNN_CONV_WGMMA_BN32");
    setenv("XDNN_CONV_WGMMA_TMA3D", "0", 1);
    check_detail(e, c32, ca);
    check_detail(e, d32, ca);
    unsetenv("XDNN_CONV_WGMMA_TMA3D");
}

/* conv_dgrad + the relu_bwd that alone reads its dx: one partition
 * (partition.c fuse_dgrad_masks), analysed as a dgrad whose dx is the
 * relu_bwd's result with one KEPI_RELU_BWD step reading the mask; each
 * stride phase reads it from its first dx position through its dx strides;
 * taken by conv_igemm_wgmma, conv_igemm and conv_direct, refused by conv_dw
 * with the reason.  Not fused: d read twice, the mask in another layout, d
 * as the mask, XDNN_NO_DGRAD_EPI=1. */
static const char *dgrad_epi_body(const char *alay, const char *tail)
{
    static char body[640];
    snprintf(body, sizeof body,
             "  input dy: bf16[2, 16, 7, 6] @nhwc;\n  weight w: bf16[16, 24, 3, 3] @nhwc;\n"
             "  input a: bf16[2, 24, 13, 12] @%s;\n"
             "  d: @nhwc = conv_dgrad(dy, w, x_dims=[2, 24, 13, 12], stride=2, pad=1);\n%s", alay, tail);
    return body;
}

static void test_dgrad_epi_fusion(void)
{
    fixture f;
    char why[512] = "", detail[512];
    if (!setup(&f, dgrad_epi_body("nhwc", "  dx: @nhwc = relu_bwd(d, a, slope=0.25);\n  output dx: bf16 @nhwc;\n"),
               false))
        return;
    CHECK(f.pl->nparts == 1 && f.p->nnodes == 2, "%d partitions", f.pl->nparts);
    gconv_problem cp;
    CHECK(gpu_conv_analyze(f.pl, f.p, &cp, why, sizeof why), "%s", why);
    CHECK(cp.dir == GCONV_DGRAD && strcmp(f.g->t[cp.x].name, "dx") == 0 && cp.epi.n == 1 &&
          cp.epi.s[0].op == KEPI_RELU_BWD && strcmp(f.g->t[cp.epi_t[0]].name, "a") == 0);
    CHECK(cp.epi.s[0].p0 == 0 && cp.epi.s[0].p1 > 1e38f && cp.epi.s[0].p2 == 0.25f && cp.epi.s[0].dt == KDT_BF16);
    CHECK(cp.epi.s[0].st[1] == 1 && cp.epi.s[0].st[4] == 24 && cp.epi.s[0].st[3] == 12 * 24); /* a, NHWC */
    char steps[64];
    gconv_epi_describe(&cp.epi, steps, sizeof steps);
    CHECK_STR(steps, "relu_bwd", "describe");
    /* phase (1, 1) of the 3x3 stride-2 dgrad reads a from dx's (1, 1) on, every second row and column */
    gconv_dgrad *dg = calloc(1, sizeof *dg);
    CHECK(gpu_conv_dgrad_plan(&cp, 132, gpu_conv_wgmma_splits, dg, why, sizeof why) && dg->nph == 4, "%s", why);
    kconv_epi bound = cp.epi, pe;
    bound.s[0].t = (const void *)(uintptr_t)0x10000;
    for (int i = 0; i < dg->nph; i++) {
        gpu_conv_dgrad_phase_epi(&bound, &dg->ph[i], &pe);
        CHECK(pe.n == 1 && (uintptr_t)pe.s[0].t == 0x10000 + (uintptr_t)dg->ph[i].dx_off * 2 &&
              pe.s[0].st[1] == 1 && pe.s[0].st[3] == 2 * 12 * 24 && pe.s[0].st[4] == 2 * 24 &&
              pe.s[0].st[0] == 24 * 13 * 12);
    }
    CHECK(dg->ph[3].dx_off == 12 * 24 + 24);
    free(dg);
    static const char *const takers[] = {"conv_igemm_wgmma", "conv_igemm", "conv_direct"};
    for (int i = 0; i < 3; i++) {
        const gpu_engine *e = gpu_engine_find(takers[i]);
        CHECK(e->supports(f.pl, f.p, &h100, why, sizeof why), "%s: %s", takers[i], why);
    }
    f.p->ws_bytes = 1 << 20;
    CHECK(build_host(gpu_engine_find("conv_igemm_wgmma"), &f, detail, sizeof detail) == XDNN_OK &&
              strstr(detail, "fused epilogue relu_bwd"), "%s", detail);
    CHECK(!gpu_engine_find("conv_dw")->supports(f.pl, f.p, &h100, why, sizeof why) && strstr(why, "relu_bwd"),
          "%s", why);
    teardown(&f);
    /* not fused: d also an output; the mask NCHW under an NHWC dx; d as the mask */
    static const char *const apart[][2] = {
        {"nhwc", "  dx: @nhwc = relu_bwd(d, a);\n  output dx: bf16 @nhwc;\n  output d: @nhwc;\n"},
        {"nchw", "  dx: @nhwc = relu_bwd(d, a);\n  output dx: bf16 @nhwc;\n"},
        {"nhwc", "  dx: @nhwc = relu_bwd(a, d);\n  output dx: bf16 @nhwc;\n"},
    };
    for (int i = 0; i < 3; i++) {
        if (!setup(&f, dgrad_epi_body(apart[i][0], apart[i][1]), false))
            return;
        CHECK(f.pl->nparts == 2, "case %d: %d partitions", i, f.pl->nparts);
        for (int k = 0; k < f.g->nn; k++)
            if (f.g->n[k].op_id == OP_relu_bwd && i == 1)
                CHECK(!gconv_dgrad_epi_step(f.g, k, f.g->n[k].in[0], NULL, NULL, why, sizeof why) &&
                          strstr(why, "dx's dims and layout"), "%s", why);
        teardown(&f);
    }
    setenv("XDNN_NO_DGRAD_EPI", "1", 1);
    if (setup(&f, dgrad_epi_body("nhwc", "  dx: @nhwc = relu_bwd(d, a);\n  output dx: bf16 @nhwc;\n"), false)) {
        CHECK(f.pl->nparts == 2);
        teardown(&f);
    }
    unsetenv("XDNN_NO_DGRAD_EPI");
}

/* conv_dw on the depthwise weight gradient: accepted channels-last with a
 * workspace for the block partials, refused NCHW with the reason. */
static void test_dw_wgrad(void)
{
    fixture f;
    if (!setup(&f, "  input dy: f16[32, 144, 56, 56] @nhwc;\n  input x: f16[32, 144, 56, 56] @nhwc;\n"
                   "  dw = conv_wgrad(dy, x, w_dims=[144, 1, 3, 3], pad=1, groups=144);\n  output dw: f16 @nhwc;\n",
               false))
        return;
    char why[512] = "";
    const gpu_engine *e = gpu_engine_find("conv_dw");
    CHECK(e->supports(f.pl, f.p, &h100, why, sizeof why), "%s", why);
    /* 3x3: one tap group of 3 rows, at most 8 * 132 chunks: 9 taps * 144 channels * 1056 chunks of f32 */
    CHECK(e->workspace(f.pl, f.p, &h100) == (size_t)9 * 144 * 1056 * 4);
    CHECK(gpu_select_engines(f.pl, &h100, NULL, 0, 0, NULL, f.d) == XDNN_OK &&
          strcmp(f.p->engine->name, "conv_dw") == 0);
    teardown(&f);
    if (!setup(&f, "  input dy: f16[2, 16, 9, 9];\n  input x: f16[2, 16, 9, 9];\n"
                   "  dw = conv_wgrad(dy, x, w_dims=[16, 1, 3, 3], pad=1, groups=16);\n  output dw: f16;\n", false))
        return;
    CHECK(!e->supports(f.pl, f.p, &h100, why, sizeof why));
    CHECK_STR(why, "conv_dw needs channel-contiguous (channels-last) x and y, got channel strides 81 and 81");
    teardown(&f);
}

static void test_pool_geometry(void)
{
    fixture f;
    if (!setup(&f, "  input x: f32[2, 3, 10, 11] @nhwc;\n"
                   "  y = avgpool(x, window=3, stride=2, pad=[[1, 1], [0, 1]], ceil_mode=true, include_pad=true);\n"
                   "  output y: f32 @nhwc;\n", false))
        return;
    gpool_problem pp;
    char why[512];
    CHECK(gpu_pool_analyze(f.pl, f.p, &pp, why, sizeof why));
    const kpool_params *k = &pp.kp;
    /* H: ceil((10+2-3)/2)+1 = 6, last start 10 < 10+1: keep 6; W: ceil((11+1-3)/2)+1 = 6, start 10 < 11: 6 */
    CHECK(k->out[1] == 6 && k->out[2] == 6 && !k->is_max && k->include_pad);
    CHECK(k->pad_lo[1] == 1 && k->pad_hi[1] == 1 && k->pad_lo[2] == 0 && k->pad_hi[2] == 1);
    CHECK(k->sx[1] == 1 && k->sy[1] == 1 && !pp.bwd);
    CHECK(gpu_engine_find("pool_direct")->supports(f.pl, f.p, &h100, why, sizeof why));
    CHECK(!gpu_engine_find("conv_direct")->supports(f.pl, f.p, &h100, why, sizeof why));
    CHECK(strcmp(why, "runs conv ops only, not avgpool") == 0);
    teardown(&f);

    if (!setup(&f, "  input dy: f16[1, 2, 3];\n  input x: f16[1, 2, 9];\n"
                   "  dx = maxpool_bwd(dy, x, window=3, dilation=2, pad=1);\n  output dx: f16;\n", false))
        return;
    CHECK(gpu_pool_analyze(f.pl, f.p, &pp, why, sizeof why));
    /* stride defaults to the window (3); extent 2*(3-1)+1 = 5; out = (9 + 2 - 5) / 3 + 1 = 3 */
    CHECK(pp.bwd && pp.kp.is_max && pp.kp.stride[2] == 3 && pp.kp.dil[2] == 2 && pp.kp.out[2] == 3);
    teardown(&f);
}

/* conv_im2col_gemm (C < 8 convs on the per-filter-row im2col): what it
 * claims, each refusal with its reason, its workspace (cuBLASLt's 32 MiB,
 * one L2-sized chunk of A, the wgrad partials) and the planner's choice of
 * it for ResNet-50's stem weight gradient on an H100. */
static bool im2col_ok(const char *body, char *why, size_t len)
{
    fixture f;
    if (!setup(&f, body, false))
        return false;
    bool ok = gpu_engine_find("conv_im2col_gemm")->supports(f.pl, f.p, &h100, why, len);
    teardown(&f);
    return ok;
}

static void test_im2col_rules(void)
{
    char why[512] = "";
    CHECK(im2col_ok("  input x: bf16[2, 3, 23, 21] @nhwc;\n  weight w: bf16[64, 3, 7, 7] @nhwc;\n"
                    "  y = conv(x, w, stride=2, pad=3);\n  output y: bf16 @nhwc;\n", why, sizeof why));
    CHECK(im2col_ok("  input x: f16[2, 5, 17] @ncw;\n  weight w: f16[16, 5, 3];\n"
                    "  y = conv(x, w, dilation=2);\n  output y: f16 @nwc;\n", why, sizeof why)); /* 1-D, x gathered */
    static const struct { const char *body, *want; } no[] = {
        {"  input x: f16[2, 8, 9, 9] @nhwc;\n  weight w: f16[16, 8, 3, 3] @nhwc;\n  y = conv(x, w);\n  output y: f16 @nhwc;\n",
         "conv_im2col_gemm runs a conv with C >= 8 for a 1x1 window only (x's pixels as they are; the filter-row "
         "packing is for C < 8 and the forward conv and conv_wgrad), got C=8 and a 3x3 window"},
        {"  input x: f16[2, 3, 9, 9] @nhwc;\n  weight w: f16[16, 3, 3, 3] @nhwc;\n  y = conv(x, w);\n  output y: f16 @nchw;\n",
         "conv_im2col_gemm needs y 'y' packed channels-last (the GEMM's row-major [N*out, K]), not a view"},
        {"  input x: f16[2, 3, 9, 9] @nhwc;\n  weight w: f16[12, 3, 3, 3] @nhwc;\n  y = conv(x, w);\n  output y: f16 @nhwc;\n",
         "conv_im2col_gemm needs K % 8 == 0 (16-byte GEMM rows of y 'y'), got K=12"},
        {"  input x: f32[2, 3, 9, 9] @nhwc;\n  weight w: f32[16, 3, 3, 3] @nhwc;\n  y = conv(x, w);\n  output y: f32 @nhwc;\n",
         "conv_im2col_gemm needs x 'x' f16 or bf16, got f32"},
        {"  input x: f16[2, 4, 9, 9] @nhwc;\n  weight w: f16[16, 2, 3, 3] @nhwc;\n  y = conv(x, w, groups=2);\n"
         "  output y: f16 @nhwc;\n", "conv_im2col_gemm needs groups 1, got groups=2"},
        {"  input x: f16[1, 3, 5, 6, 7] @ndhwc;\n  weight w: f16[8, 3, 2, 3, 3] @ndhwc;\n  y = conv(x, w);\n"
         "  output y: f16 @ndhwc;\n", "conv_im2col_gemm runs 1-D and 2-D convs, y is 3-D"},
        {"  input dy: f16[2, 16, 9, 9] @nhwc;\n  weight w: f16[16, 3, 3, 3] @nhwc;\n"
         "  dx = conv_dgrad(dy, w, x_dims=[2, 3, 9, 9], pad=1);\n  output dx: f16 @nhwc;\n",
         "conv_im2col_gemm runs a conv_dgrad with C >= 8 for a 1x1 window only (x's pixels as they are; the "
         "filter-row packing is for C < 8 and the forward conv and conv_wgrad), got C=3 and a 3x3 window"},
    };
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        CHECK(!im2col_ok(no[i].body, why, sizeof why));
        CHECK_STR(why, no[i].want, "im2col refusal");
    }
    fixture f;
    if (setup(&f, "  input x: f16[2, 3, 9, 9] @nhwc;\n  weight w: f16[16, 3, 3, 3] @nhwc;\n"
                  "  y = relu(conv(x, w, pad=1));\n  output y: f16 @nhwc;\n", false)) {
        CHECK(!gpu_engine_find("conv_im2col_gemm")->supports(f.pl, f.p, &h100, why, sizeof why));
        CHECK(strstr(why, "runs a lone conv") != NULL);
        teardown(&f);
    }
    /* the stem's weight gradient at N = 256: conv_im2col_gemm's workspace 32 MiB + 795648 rows x 168 x 2 bytes
     * of A (256 MiB rounded to 222 units of OW 112 x 32 items) + 32 f32 partials of 64 x 168; the planner now
     * gives it to conv_stem (session 11: 0.42 ms against 1.18 measured; conv_wgrad_mma 3.08), whose
     * workspace is 396 CTAs' f32 partials of 64 x 147 */
    if (setup(&f, "  input dy: bf16[256, 64, 112, 112] @nhwc;\n  input x: bf16[256, 3, 224, 224] @nhwc;\n"
                  "  dw = conv_wgrad(dy, x, w_dims=[64, 3, 7, 7], stride=2, pad=3);\n  output dw: bf16 @nhwc;\n",
              false)) {
        CHECK(gpu_engine_find("conv_im2col_gemm")->workspace(f.pl, f.p, &h100) ==
              (size_t)(32 << 20) + (size_t)795648 * 168 * 2 + (size_t)32 * 64 * 168 * 4);
        CHECK(gpu_select_engines(f.pl, &h100, NULL, 0, 0, NULL, f.d) == XDNN_OK);
        CHECK(strcmp(f.p->engine->name, "conv_stem") == 0, "%s", f.p->engine->name);
        CHECK(f.p->ws_bytes == (size_t)396 * 64 * 147 * 4, "%zu", f.p->ws_bytes);
        teardown(&f);
    }
}

/* conv_im2col_gemm's 1x1 weight gradient (C % 8 == 0): x in place at
 * stride 1 (workspace: cuBLASLt's alone, dw written by the GEMM), the
 * subsampling copy at stride 2, f32 partials for a dw of another dtype, each
 * refusal with its reason, and the planner's choice of it on an H100 for
 * the ResNet-50 1x1 wgrads at N = 256 that are not bound by DRAM alone. */
static void test_im2col_wgrad_1x1(void)
{
    static const char *const rn = "conv_im2col_gemm";
    char why[512] = "";
    fixture f;
    /* in place: one GEMM into dw; workspace 32 MiB (cuBLASLt's) */
    if (setup(&f, "  input dy: bf16[3, 24, 7, 9] @nhwc;\n  input x: bf16[3, 16, 7, 9] @nhwc;\n"
                  "  dw = conv_wgrad(dy, x, w_dims=[24, 16, 1, 1]);\n  output dw: bf16 @nhwc;\n", false)) {
        const char *force[1] = {"conv_wgrad=conv_im2col_gemm"};
        CHECK(gpu_engine_find(rn)->supports(f.pl, f.p, &h100, why, sizeof why));
        CHECK(gpu_select_engines(f.pl, &h100, force, 1, 0, NULL, f.d) == XDNN_OK);
        CHECK(strcmp(f.p->engine->name, rn) == 0);
        CHECK(f.p->ws_bytes == (size_t)(32 << 20));
        teardown(&f);
    }
    /* stride 2: A = 3 x 4 x 5 = 60 pixels x 16 channels (one chunk, one GEMM of 60 rows; 1920 bytes rounded to
     * 2048); dw f32 still written by the GEMM */
    if (setup(&f, "  input dy: f16[3, 24, 4, 5] @nhwc;\n  input x: f16[3, 16, 7, 9] @nhwc;\n"
                  "  dw = conv_wgrad(dy, x, w_dims=[24, 16, 1, 1], stride=2);\n  output dw: f32 @nhwc;\n", false)) {
        CHECK(gpu_engine_find(rn)->supports(f.pl, f.p, &h100, why, sizeof why));
        CHECK(gpu_engine_find(rn)->workspace(f.pl, f.p, &h100) == (size_t)(32 << 20) + 2048);
        teardown(&f);
    }
    /* dw bf16 from f16 operands: f32 partials (24 x 16) + the unpack */
    if (setup(&f, "  input dy: f16[3, 24, 7, 9] @nhwc;\n  input x: f16[3, 16, 7, 9] @nhwc;\n"
                  "  dw = conv_wgrad(dy, x, w_dims=[24, 16, 1, 1]);\n  output dw: bf16 @nhwc;\n", false)) {
        CHECK(gpu_engine_find(rn)->workspace(f.pl, f.p, &h100) == (size_t)(32 << 20) + 24 * 16 * 4);
        teardown(&f);
    }
    static const struct { const char *body, *want; } no[] = {
        {"  input dy: f16[2, 16, 9, 9] @nhwc;\n  input x: f16[2, 16, 9, 9] @nhwc;\n"
         "  dw = conv_wgrad(dy, x, w_dims=[16, 16, 3, 3], pad=1);\n  output dw: f16 @nhwc;\n",
         "conv_im2col_gemm runs a conv_wgrad with C >= 8 for a 1x1 window only (x's pixels as they are; the "
         "filter-row packing is for C < 8 and the forward conv and conv_wgrad), got C=16 and a 3x3 window"},
        {"  input dy: f16[2, 16, 11, 11] @nhwc;\n  input x: f16[2, 16, 9, 9] @nhwc;\n"
         "  dw = conv_wgrad(dy, x, w_dims=[16, 16, 1, 1], pad=1);\n  output dw: f16 @nhwc;\n",
         "conv_im2col_gemm runs a 1x1 conv_wgrad with C >= 8 without pad, got pad=[1, 1] (leading) and 11x11 outputs "
         "of a 9x9 x at stride [1, 1]"},
        {"  input dy: f16[2, 16, 9, 9] @nhwc;\n  input x: f16[2, 12, 9, 9] @nhwc;\n"
         "  dw = conv_wgrad(dy, x, w_dims=[16, 12, 1, 1]);\n  output dw: f16 @nhwc;\n",
         "conv_im2col_gemm needs C % 8 == 0 for a 1x1 conv_wgrad with C >= 8 (16-byte GEMM rows of x 'x'), got C=12"},
        {"  input dy: f16[2, 16, 9, 9] @nhwc;\n  input x: f16[2, 16, 9, 9];\n"
         "  dw = conv_wgrad(dy, x, w_dims=[16, 16, 1, 1]);\n  output dw: f16 @nhwc;\n",
         "conv_im2col_gemm needs x 'x' channels-last for a 1x1 conv_wgrad with C >= 8 (channel stride 1, pixel "
         "strides multiples of 8, not a view), got strides n=1296 c=81 h=9 w=1"},
        {"  input dy: f16[2, 12, 9, 9] @nhwc;\n  input x: f16[2, 16, 9, 9] @nhwc;\n"
         "  dw = conv_wgrad(dy, x, w_dims=[12, 16, 1, 1]);\n  output dw: f16 @nhwc;\n",
         "conv_im2col_gemm needs K % 8 == 0 (16-byte GEMM rows of dy 'dy'), got K=12"},
        {"  input dy: f16[2, 16, 9, 9];\n  input x: f16[2, 16, 9, 9] @nhwc;\n"
         "  dw = conv_wgrad(dy, x, w_dims=[16, 16, 1, 1]);\n  output dw: f16 @nhwc;\n",
         "conv_im2col_gemm needs dy 'dy' packed channels-last (the GEMM's row-major [N*out, K]), not a view"},
        {"  input dy: f16[2, 16, 9, 9] @nhwc;\n  input x: f16[2, 16, 9, 9] @nhwc;\n"
         "  dw = conv_wgrad(dy, x, w_dims=[16, 8, 1, 1], groups=2);\n  output dw: f16 @nhwc;\n",
         "conv_im2col_gemm needs groups 1, got groups=2"},
    };
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        CHECK(!im2col_ok(no[i].body, why, sizeof why));
        CHECK_STR(why, no[i].want, "1x1 wgrad refusal");
    }
    /* the planner on ResNet-50's 1x1 wgrads at N = 256, bf16 NHWC (C, H, K, stride): on conv_im2col_gemm all but
     * the four 56x56 ones whose 64 or 256 input channels make them DRAM-bound (64->64, 256->64, 256->128), which
     * conv_wgrad_mma's cost puts at 77-229 us against 85-243 here: the bench rows of both decide them */
    static const int layers[][4] = {{64, 56, 256, 1},  {128, 28, 512, 1},  {512, 28, 128, 1}, {256, 56, 512, 2},
                                    {512, 28, 256, 1}, {256, 14, 1024, 1}, {1024, 14, 256, 1}, {512, 28, 1024, 2},
                                    {1024, 14, 512, 1}, {512, 7, 2048, 1}, {2048, 7, 512, 1},  {1024, 14, 2048, 2}};
    for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++) {
        const int C = layers[i][0], H = layers[i][1], K = layers[i][2], st = layers[i][3], P = H / st;
        char body[512];
        snprintf(body, sizeof body,
                 "  input dy: bf16[256, %d, %d, %d] @nhwc;\n  input x: bf16[256, %d, %d, %d] @nhwc;\n"
                 "  dw = conv_wgrad(dy, x, w_dims=[%d, %d, 1, 1], stride=%d);\n  output dw: bf16 @nhwc;\n",
                 K, P, P, C, H, H, K, C, st);
        if (!setup(&f, body, false))
            continue;
        CHECK(gpu_select_engines(f.pl, &h100, NULL, 0, 0, NULL, f.d) == XDNN_OK);
        CHECK(strcmp(f.p->engine->name, rn) == 0, "ResNet-50 1x1 wgrad C=%d H=%d K=%d stride %d on %s", C, H, K, st,
              f.p->engine->name);
        /* in place: cuBLASLt's workspace alone; strided: + A (M x C) */
        const size_t a = st == 1 ? 0 : ((size_t)256 * P * P * C * 2 + 255) / 256 * 256;
        CHECK(f.p->ws_bytes == (size_t)(32 << 20) + a);
        teardown(&f);
    }
}

/* conv_im2col_gemm's 1x1 forward conv and conv_dgrad (C % 8 == 0): x in place at stride 1, w read in place
 * (workspace: cuBLASLt's alone), the subsampling copy at stride 2, each refusal
 * with its reason, and the planner's choice of it on an H100 for every ResNet-50 1x1 fwd and stride-1 dgrad
 * at N = 256 (measured 0.8-1.0x cuDNN where the implicit-GEMM engines ran 1.3-2.9x) but a fused one. */
typedef struct im2col_refusal {
    const char *body, *want;
} im2col_refusal;

/* Each body refused by conv_im2col_gemm with exactly its reason. */
static void check_im2col_refusals(const im2col_refusal *no, size_t n, const char *what)
{
    char why[512] = "";
    for (size_t i = 0; i < n; i++) {
        CHECK(!im2col_ok(no[i].body, why, sizeof why));
        CHECK_STR(why, no[i].want, "%s", what);
    }
}

static void test_im2col_fd_1x1(void)
{
    static const char *const rn = "conv_im2col_gemm";
    char why[512] = "";
    fixture f;
    /* in place: cuBLASLt's workspace alone (a weight stored NCHW, KCRS, is the same packed [K, C]); stride 2:
     * + A = 3 x 4 x 5 = 60 pixels x 16 channels (1920 bytes -> 2048) */
    static const struct { const char *body; size_t ws; } yes[] = {
        {"  input x: bf16[3, 24, 7, 9] @nhwc;\n  weight w: bf16[40, 24, 1, 1] @nhwc;\n  y = conv(x, w);\n"
         "  output y: bf16 @nhwc;\n", 0},
        {"  input dy: f16[3, 40, 7, 9] @nhwc;\n  weight w: f16[40, 24, 1, 1] @nchw;\n"
         "  dx = conv_dgrad(dy, w, x_dims=[3, 24, 7, 9]);\n  output dx: f16 @nhwc;\n", 0},
        {"  input x: f16[3, 16, 7, 9] @nhwc;\n  weight w: f16[24, 16, 1, 1] @nhwc;\n  y = conv(x, w, stride=2);\n"
         "  output y: f16 @nhwc;\n", 2048},
    };
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (!setup(&f, yes[i].body, false))
            continue;
        CHECK(gpu_engine_find(rn)->supports(f.pl, f.p, &h100, why, sizeof why), "%s", why);
        CHECK(gpu_engine_find(rn)->workspace(f.pl, f.p, &h100) == (size_t)(32 << 20) + yes[i].ws);
        teardown(&f);
    }
    static const im2col_refusal no[] = {
        {"  input dy: f16[2, 16, 5, 5] @nhwc;\n  weight w: f16[16, 16, 1, 1] @nhwc;\n"
         "  dx = conv_dgrad(dy, w, x_dims=[2, 16, 9, 9], stride=2);\n  output dx: f16 @nhwc;\n",
         "conv_im2col_gemm runs a 1x1 conv_dgrad at stride 1 only (dx = dy . W, one GEMM row per pixel; a strided dx "
         "has zero pixels between), got stride [2, 2]"},
        {"  input x: f16[2, 16, 9, 9] @nhwc;\n  weight w: f16[16, 16, 1, 1] @nhwc;\n  y = conv(x, w, pad=1);\n"
         "  output y: f16 @nhwc;\n",
         "conv_im2col_gemm runs a 1x1 conv with C >= 8 without pad, got pad=[1, 1] (leading) and 11x11 outputs of a "
         "9x9 x at stride [1, 1]"},
        {"  input dy: f16[2, 16, 9, 9] @nhwc;\n  weight w: f16[16, 12, 1, 1] @nhwc;\n"
         "  dx = conv_dgrad(dy, w, x_dims=[2, 12, 9, 9]);\n  output dx: f16 @nhwc;\n",
         "conv_im2col_gemm needs C % 8 == 0 for a 1x1 conv_dgrad with C >= 8 (16-byte GEMM rows of dx 'dx'), got C=12"},
        {"  input x: f16[2, 16, 9, 9];\n  weight w: f16[16, 16, 1, 1] @nhwc;\n  y = conv(x, w);\n"
         "  output y: f16 @nhwc;\n",
         "conv_im2col_gemm needs x 'x' channels-last for a 1x1 conv with C >= 8 (channel stride 1, pixel strides "
         "multiples of 8, not a view), got strides n=1296 c=81 h=9 w=1"},
    };
    check_im2col_refusals(no, sizeof no / sizeof no[0], "1x1 fwd/dgrad refusal");
    setenv("XDNN_IM2COL_NO_1X1_FD", "1", 1);
    CHECK(!im2col_ok("  input x: f16[2, 16, 9, 9] @nhwc;\n  weight w: f16[16, 16, 1, 1] @nhwc;\n  y = conv(x, w);\n"
                     "  output y: f16 @nhwc;\n", why, sizeof why));
    CHECK_STR(why, "conv_im2col_gemm: the 1x1 conv is turned off (XDNN_IM2COL_NO_1X1_FD=1)", "A/B switch");
    unsetenv("XDNN_IM2COL_NO_1X1_FD");
    static const int layers[][4] = {{64, 56, 64, 1},    {64, 56, 256, 1},   {256, 56, 64, 1},   {256, 56, 128, 1},
                                    {128, 28, 512, 1},  {256, 56, 512, 2},  {512, 28, 128, 1},  {512, 28, 256, 1},
                                    {256, 14, 1024, 1}, {512, 28, 1024, 2}, {1024, 14, 256, 1}, {1024, 14, 512, 1},
                                    {512, 7, 2048, 1},  {1024, 14, 2048, 2}, {2048, 7, 512, 1}};
    for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++)
        for (int dir = 0; dir < 2; dir++) {
            const int C = layers[i][0], H = layers[i][1], K = layers[i][2], st = layers[i][3];
            if (dir == 1 && st != 1)
                continue;
            char body[512];
            if (dir == 0)
                snprintf(body, sizeof body,
                         "  input x: bf16[256, %d, %d, %d] @nhwc;\n  weight w: bf16[%d, %d, 1, 1] @nhwc;\n"
                         "  y = conv(x, w, stride=%d);\n  output y: bf16 @nhwc;\n", C, H, H, K, C, st);
            else
                snprintf(body, sizeof body,
                         "  input dy: bf16[256, %d, %d, %d] @nhwc;\n  weight w: bf16[%d, %d, 1, 1] @nhwc;\n"
                         "  dx = conv_dgrad(dy, w, x_dims=[256, %d, %d, %d]);\n  output dx: bf16 @nhwc;\n",
                         K, H, H, K, C, C, H, H);
            if (!setup(&f, body, false))
                continue;
            CHECK(gpu_select_engines(f.pl, &h100, NULL, 0, 0, NULL, f.d) == XDNN_OK);
            CHECK(strcmp(f.p->engine->name, rn) == 0, "ResNet-50 1x1 %s C=%d H=%d K=%d stride %d on %s",
                  dir ? "dgrad" : "fwd", C, H, K, st, f.p->engine->name);
            teardown(&f);
        }
    /* a fused epilogue stays on the implicit-GEMM engines */
    if (setup(&f, "  input x: bf16[256, 64, 56, 56] @nhwc;\n  weight w: bf16[256, 64, 1, 1] @nhwc;\n"
                  "  y = relu(conv(x, w));\n  output y: bf16 @nhwc;\n", false)) {
        CHECK(gpu_select_engines(f.pl, &h100, NULL, 0, 0, NULL, f.d) == XDNN_OK);
        CHECK(strcmp(f.p->engine->name, rn) != 0);
        teardown(&f);
    }
}

/* conv_f32_gemm's fused epilogues (session 11): the planner gives an f32 conv + bias + relu (ResNet-50's
 * 64-channel 3x3 at N = 32, NCHW, tf32 off) and an f32 dgrad with its relu_bwd mask to conv_f32_gemm, not
 * conv_direct (13-48x slower); an f16 output cast is taken (the flat form); a grouped conv with an epilogue
 * is refused by name. */
static void test_f32_epi(void)
{
    const gpu_engine *e = gpu_engine_find("conv_f32_gemm");
    char why[512] = "";
    fixture f;
    if (setup(&f, "  input x: f32[32, 64, 56, 56];\n  weight w: f32[64, 64, 3, 3];\n  weight b: f32[1, 64, 1, 1];\n"
                  "  y = relu(conv(x, w, pad=1) + b);\n  output y: f32;\n", false)) {
        CHECK(f.pl->nparts == 1 && f.p->nnodes == 3, "%d partitions", f.pl->nparts);
        CHECK(e->supports(f.pl, f.p, &h100, why, sizeof why), "%s", why);
        CHECK(gpu_select_engines(f.pl, &h100, NULL, 0, 0, NULL, f.d) == XDNN_OK &&
              strcmp(f.p->engine->name, "conv_f32_gemm") == 0, "%s", f.p->engine->name);
        /* the broadcast bias image (64 x 3136 f32) after the column buffer */
        CHECK(e->workspace(f.pl, f.p, &h100) >= (size_t)(32 << 20) + (size_t)64 * 3136 * 4, "%zu",
              e->workspace(f.pl, f.p, &h100));
        teardown(&f);
    }
    if (setup(&f, "  input x: f32[2, 13, 11, 9] @nhwc;\n  weight w: f32[7, 13, 3, 3] @nhwc;\n"
                  "  weight b: f32[1, 7, 1, 1];\n  y = relu(conv(x, w, pad=1) + b);\n  output y: f16 @nhwc;\n",
              true)) {
        CHECK(e->supports(f.pl, f.p, &h100, why, sizeof why), "%s", why);
        teardown(&f);
    }
    if (setup(&f, "  input x: f32[2, 6, 7, 9];\n  weight w: f32[4, 3, 3, 3];\n"
                  "  y = relu(conv(x, w, pad=1, groups=2));\n  output y: f32;\n", false)) {
        CHECK(!e->supports(f.pl, f.p, &h100, why, sizeof why));
        CHECK(strstr(why, "needs groups 1 for conv") != NULL, "%s", why);
        teardown(&f);
    }
    if (setup(&f, "  input dy: f32[32, 64, 56, 56];\n  weight w: f32[64, 64, 3, 3];\n"
                  "  input a: f32[32, 64, 56, 56];\n  d = conv_dgrad(dy, w, x_dims=[32, 64, 56, 56], pad=1);\n"
                  "  dx = relu_bwd(d, a);\n  output dx: f32;\n", false)) {
        CHECK(f.p->nnodes == 2, "%d nodes", f.p->nnodes);
        CHECK(e->supports(f.pl, f.p, &h100, why, sizeof why), "%s", why);
        CHECK(gpu_select_engines(f.pl, &h100, NULL, 0, 0, NULL, f.d) == XDNN_OK &&
              strcmp(f.p->engine->name, "conv_f32_gemm") == 0, "%s", f.p->engine->name);
        teardown(&f);
    }
    /* x read in place past 2^31 elements (3.3e9): chunks of images, not a refusal */
    if (setup(&f, "  input x: f32[4096, 256, 56, 56];\n  weight w: f32[64, 256, 1, 1];\n  y = conv(x, w);\n"
                  "  output y: f32;\n", false)) {
        CHECK(e->supports(f.pl, f.p, &h100, why, sizeof why), "%s", why);
        teardown(&f);
    }
}

int main(void)
{
    test_geometry_nchw_asym_dil_groups();
    test_geometry_1d_same_nwc();
    test_igemm_accepts_nhwc_f16();
    test_igemm_rejections();
    test_igemm_packed();
    test_epilogue_fusion();
    test_dw_rules();
    test_dgrad_rewrite();
    test_dgrad_phases();
    test_wgrad_mma();
    test_wgrad_splits();
    test_igemm_splitk();
    test_wgmma_rules();
    test_wgrad_wgmma();
    test_wgmma_dgrad();
    test_wgmma_tma3d();
    test_dgrad_epi_fusion();
    test_dw_wgrad();
    test_im2col_rules();
    test_im2col_wgrad_1x1();
    test_im2col_fd_1x1();
    test_pool_geometry();
    test_f32_epi();
    gpu_release_caches();
    return test_summary("test_gpu_conv");
}
#else
int main(void)
{
    printf("test_gpu_conv: built without CUDA, nothing to test\n");
    return 0;
}
#endif
