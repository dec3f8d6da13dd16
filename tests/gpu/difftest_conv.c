/* difftest_conv.c — differential tester of the conv_direct, conv_igemm and
 * pool_direct engines: each case is a tiny .dnn graph run on the CPU
 * reference and on the GPU with the same Philox inputs, every output compared
 * with the METHOD.md tolerances (compare_default_tolerance; x20 for tf32).
 * The sweep: 1-D / 2-D / 3-D, odd sizes, batch 1, stride 2, asymmetric and
 * "same" pads, dilation 2, groups and depthwise, NCHW and NHWC (inputs and
 * outputs), f32 / f16 / bf16, conv fwd / dgrad / wgrad, max / avg pooling fwd
 * and bwd (ceil_mode, include_pad, ties); conv_igemm on packed copies (C = 3
 * stems, odd C, NCHW); conv_igemm's split-K (forced at several counts, one
 * not dividing the k slices, and chosen by the heuristic); conv_dw
 * (depthwise fwd, dgrad and wgrad); conv_im2col_gemm (C < 8, fwd and wgrad,
 * "im2c" cases); fused conv epilogues, which must plan as one partition;
 * conv_dgrad with its fused relu_bwd mask; conv_im2col_gemm's 1x1 weight
 * gradient ("w1x1" cases, and the refusals it must name); its 1x1 forward
 * conv and conv_dgrad ("fd1x1" cases, and their refusals); conv_wgrad_wgmma
 * (the Hopper weight gradient: "wgmma" cases, and its refusals); conv_f32_gemm
 * (f32 fwd / dgrad / wgrad through cuBLASLt's f32 or tf32 GEMM: "f32g" cases,
 * its flat and per-image forms, and its refusals).
 * One line per case, then
 * "N passed, N failed".
 *
 *   difftest_conv [--quick] [--bench] [--list] [--dry] [FILTER]
 * --dry: no GPU needed: CPU reference, plan and engine choice only;
 * --quick: the reduced sweep for compute-sanitizer; --bench: the ResNet-50
 * conv shapes of anchors/torch_baseline.py (and its maxpool) on the GPU only,
 * one "BENCH name shape engine median_ms" line each (bench/conv_peer.py
 * prints the PyTorch side with the same names).
 * Built and run by tests/gpu/run.sh BUILD --only conv. */
#include "diffharness.h"

#include "core/exec.h"
#include "data/data.h"
#include "gpu/conv_analyze.h"
#include "gpu/engine.h"
#include "gpu/gpu.h"
#include "gpu/kern_conv_dw_tile.h"
#include "gpu/lower.h"
#include "ops/op.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_CASES = 2048, TEXT_MAX = 1536 };

typedef struct tcase {
    char id[192];
    char text[TEXT_MAX];
    double tol_scale;
    const char *want_engine; /* the engine that must run it (NULL = any) */
    bool tf32;               /* compare with the tf32 error model (see run_case) */
    const char *force;       /* op name: force want_engine on it even where the heuristics would not */
    int want_parts;          /* > 0: the plan must have exactly this many partitions (fusion checks) */
    int splitk;              /* > 0: XDNN_CONV_SPLITK for this case (conv_igemm's split-K forced) */
    const char *want_detail; /* a substring the engine's detail must hold ("split-K 5") */
    const char *want_detail2, *reject_detail; /* another it must hold; one no partition's detail may hold */
    int im2col_rows, im2col_split; /* > 0: XDNN_IM2COL_ROWS / _SPLIT for this case (conv_im2col_gemm's chunks) */
    const char *refuse;      /* the forced engine must refuse the case with a reason holding this text */
    int wsplits;             /* > 0: XDNN_WGRAD_SPLITS for this case (conv_wgrad_wgmma's reduction splits) */
    bool regs;               /* XDNN_CONV_WGMMA_NO_STAGE=1: conv_igemm_wgmma's register store instead of the staged */
    const char *wtile;       /* XDNN_WGRAD_TILE for this case ("128x256": conv_wgrad_wgmma's tile forced) */
    int f32_images;          /* > 0: XDNN_F32GEMM_IMAGES for this case (conv_f32_gemm's images per chunk) */
    const char *f32_flat;    /* XDNN_F32GEMM_FLAT for this case ("0": conv_f32_gemm's per-image GEMMs) */
    bool one_launch;         /* XDNN_DGRAD_ONE_LAUNCH=1 for this case (a dgrad's phases in one launch forced) */
    const char *pingpong;    /* XDNN_CONV_WGMMA_PINGPONG for this case (conv_igemm_wgmma's consumer schedule) */
    const char *bn32;        /* XDNN_CONV_WGMMA_BN32 for this case ("1": conv_igemm_wgmma's 32-wide tile for 2-D) */
    const char *dw_v2;       /* XDNN_CONV_DW_V2 for this case ("": unset, the default v2; "0": v1) */
    bool dw_v2_fits;         /* with dw_v2 "": the conv_dw partition must take v2 (else it must stay on v1) */
    const char *tma3d;       /* XDNN_CONV_WGMMA_TMA3D for this case ("0": a 3-D conv's x gathered by cp.async);
                                the process's own value is restored after it */
    int x_inf[2][5];         /* x_inf[0..1] = x's logical (n, c, h, w) or (n, c, d, h, w) by its rank, != all
                                0: x holds +Inf there (both runs) before the reference; the outputs must match
                                its Infs and NaNs exactly (all finite where no valid output reads those places,
                                +-Inf where one does) */
} tcase;

static tcase *cases;
static int ncases;
static dh_opts opts;

/* --dry (no GPU): lower, partition and choose engines with a nominal sm_90
 * device, so the sweep's graphs and engine choices are checked before any
 * device time is spent. */
/* dw_fits (may be NULL): set to 1 when a conv_dw partition's problem fits
 * conv_dw v2 (kconv_dw_tile_fits: what dw_build checks with the switch on) */
static xdnn_status dry_run(xgraph *g, const char *const *force, int nforce, char *engines, size_t len,
                           xdnn_diags_t *d, int *dw_fits)
{
    arena *ar = arena_create();
    ggraph *gg = gpu_lower(g, ar);
    gplan *pl = gpu_partition(gg, false);
    gpu_device dev = {.sm_count = 132, .cc_major = 9, .cc_minor = 0};
    xdnn_status s = gpu_select_engines(pl, &dev, force, nforce, 0, NULL, d);
    for (int i = 0; i < pl->nparts && s == XDNN_OK; i++) {
        size_t n = strlen(engines);
        snprintf(engines + n, len - n, "%s%s", i ? "," : "", pl->parts[i].engine->name);
        gconv_problem cp;
        char why[256];
        if (dw_fits && strcmp(pl->parts[i].engine->name, "conv_dw") == 0 &&
            gpu_conv_analyze(pl, &pl->parts[i], &cp, why, sizeof why) && cp.dir != GCONV_WGRAD)
            *dw_fits = kconv_dw_tile_fits(&cp.kp, cp.dir == GCONV_DGRAD);
    }
    arena_destroy(ar);
    return s;
}

__attribute__((format(printf, 4, 5))) static tcase *add_case(const char *id, double tol, const char *want,
                                                             const char *fmt, ...)
{
    if (ncases >= MAX_CASES) { /* a case dropped silently would be a test that cannot fail */
        fprintf(stderr, "%s: more than %d cases: raise MAX_CASES\n", id, (int)MAX_CASES);
        exit(2);
    }
    tcase *c = &cases[ncases++];
    snprintf(c->id, sizeof c->id, "%s", id);
    c->tol_scale = tol;
    c->want_engine = want;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->text, sizeof c->text, fmt, ap);
    va_end(ap);
    return c;
}

/* ---- geometry helpers (the formulas of conv_util.h, to write dy shapes) */
typedef struct win_cfg {
    int nsp;
    int n, c, k, groups;
    int in[3], win[3], stride[3], dil[3], lo[3], hi[3];
    bool same, ceil;
} win_cfg;

static int out_size(const win_cfg *w, int i)
{
    int ext = w->dil[i] * (w->win[i] - 1) + 1;
    if (w->same)
        return (w->in[i] + w->stride[i] - 1) / w->stride[i];
    int span = w->in[i] + w->lo[i] + w->hi[i] - ext;
    if (!w->ceil)
        return span / w->stride[i] + 1;
    int o = (span + w->stride[i] - 1) / w->stride[i] + 1;
    if ((o - 1) * w->stride[i] >= w->in[i] + w->lo[i])
        o--;
    return o;
}

static void list_str(char *buf, size_t len, int n, const int *v)
{
    size_t k = (size_t)snprintf(buf, len, "[");
    for (int i = 0; i < n && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%d", i ? ", " : "", v[i]);
    snprintf(buf + k, len - k, "]");
}

/* [a, b, spatial...] */
static void dims_str(char *buf, size_t len, int a, int b, int nsp, const int *sp)
{
    int d[5] = {a, b};
    for (int i = 0; i < nsp; i++)
        d[2 + i] = sp[i];
    list_str(buf, len, 2 + nsp, d);
}

static void pad_str(char *buf, size_t len, const win_cfg *w)
{
    if (w->same) {
        snprintf(buf, len, "\"same\"");
        return;
    }
    size_t k = (size_t)snprintf(buf, len, "[");
    for (int i = 0; i < w->nsp && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s[%d, %d]", i ? ", " : "", w->lo[i], w->hi[i]);
    snprintf(buf + k, len - k, "]");
}

static const char *layout_tag(int nsp, bool last)
{
    static const char *const tags[2][3] = {{"ncw", "nchw", "ncdhw"}, {"nwc", "nhwc", "ndhwc"}};
    return tags[last][nsp - 1];
}

/* ---- conv sweeps */
/* The .dnn text of a conv's x, w and y shapes and of its attributes. */
typedef struct conv_text {
    char xs[96], ws[96], ys[96], attrs[320];
} conv_text;

static void conv_strs(const win_cfg *w, conv_text *t)
{
    char stride[48], dil[48], pad[96];
    int out[3];
    for (int i = 0; i < w->nsp; i++)
        out[i] = out_size(w, i);
    dims_str(t->xs, sizeof t->xs, w->n, w->c, w->nsp, w->in);
    dims_str(t->ws, sizeof t->ws, w->k, w->c / w->groups, w->nsp, w->win);
    dims_str(t->ys, sizeof t->ys, w->n, w->k, w->nsp, out);
    list_str(stride, sizeof stride, w->nsp, w->stride);
    list_str(dil, sizeof dil, w->nsp, w->dil);
    pad_str(pad, sizeof pad, w);
    snprintf(t->attrs, sizeof t->attrs, "stride=%s, pad=%s, dilation=%s, groups=%d", stride, pad, dil, w->groups);
}

static void conv_case(const char *name, const win_cfg *w, const char *dt, bool chlast, int dir, bool tf32,
                      const char *want, double tol)
{
    char id[192];
    conv_text ct;
    conv_strs(w, &ct);
    const char *xs = ct.xs, *ws = ct.ws, *ys = ct.ys, *attrs = ct.attrs;
    const char *lay = layout_tag(w->nsp, chlast);
    static const char *const dirs[] = {"fwd", "dgrad", "wgrad"};
    snprintf(id, sizeof id, "conv/%s/%s/%s%s/%s/%dd/%s", dirs[dir], name, dt, tf32 ? "-tf32" : "", lay, w->nsp, xs);
    for (char *p = id; *p; p++)
        if (*p == ' ')
            *p = '_';
    int seed = ncases * 7 + 1;
    tcase *tc;
    if (dir == 0)
        tc = add_case(id, tol, want,
                 "dnn 1;\ngraph g(seed=%d, tf32=%s) {\n  input x: %s%s @%s;\n  weight w: %s%s @%s;\n"
                 "  y = conv(x, w, %s);\n  output y: %s @%s;\n}\n",
                 seed, tf32 ? "true" : "false", dt, xs, lay, dt, ws, lay, attrs, dt, lay);
    else if (dir == 1)
        tc = add_case(id, tol, want,
                 "dnn 1;\ngraph g(seed=%d, tf32=%s) {\n  input dy: %s%s @%s;\n  weight w: %s%s @%s;\n"
                 "  dx = conv_dgrad(dy, w, x_dims=%s, %s);\n  output dx: %s @%s;\n}\n",
                 seed, tf32 ? "true" : "false", dt, ys, lay, dt, ws, lay, xs, attrs, dt, lay);
    else
        tc = add_case(id, tol, want,
                      "dnn 1;\ngraph g(seed=%d, tf32=%s) {\n  input dy: %s%s @%s;\n  input x: %s%s @%s;\n"
                      "  dw = conv_wgrad(dy, x, w_dims=%s, %s);\n  output dw: %s @%s;\n}\n",
                      seed, tf32 ? "true" : "false", dt, ys, lay, dt, xs, lay, ws, attrs, dt, lay);
    if (tc)
        tc->tf32 = tf32;
}

/* conv_case with the engine forced (small shapes where the heuristics would
 * still pick conv_direct for its single launch). */
static void conv_case_forced(const char *name, const win_cfg *w, const char *dt, bool chlast, int dir, bool tf32,
                             const char *want, double tol)
{
    static const char *const ops[] = {"conv", "conv_dgrad", "conv_wgrad"};
    conv_case(name, w, dt, chlast, dir, tf32, want, tol);
    if (ncases > 0)
        cases[ncases - 1].force = ops[dir];
}

static win_cfg cfg(int nsp, int n, int c, int k, int groups, const int *in, const int *win, const int *stride,
                   const int *dil, const int *lo, const int *hi, bool same)
{
    win_cfg w = {.nsp = nsp, .n = n, .c = c, .k = k, .groups = groups, .same = same};
    for (int i = 0; i < nsp; i++) {
        w.in[i] = in[i];
        w.win[i] = win[i];
        w.stride[i] = stride ? stride[i] : 1;
        w.dil[i] = dil ? dil[i] : 1;
        w.lo[i] = lo ? lo[i] : 0;
        w.hi[i] = hi ? hi[i] : 0;
    }
    return w;
}

static void conv_direct_cases(void)
{
    static const char *const dts[] = {"f32", "f16", "bf16"};
    struct { const char *name; win_cfg w; } cfgs[] = {
        {"3x3-pad1", cfg(2, 2, 3, 5, 1, (int[]){11, 9}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1}, (int[]){1, 1}, false)},
        {"s2-asym-pad", cfg(2, 2, 4, 6, 1, (int[]){13, 10}, (int[]){3, 2}, (int[]){2, 2}, NULL, (int[]){1, 0},
                            (int[]){0, 2}, false)},
        {"dil2", cfg(2, 1, 5, 3, 1, (int[]){12, 11}, (int[]){3, 3}, (int[]){1, 2}, (int[]){2, 2}, (int[]){2, 1},
                     (int[]){2, 1}, false)},
        {"groups2", cfg(2, 2, 6, 4, 2, (int[]){7, 9}, (int[]){3, 3}, (int[]){2, 1}, NULL, (int[]){1, 1},
                        (int[]){1, 1}, false)},
        {"depthwise", cfg(2, 2, 8, 8, 8, (int[]){9, 9}, (int[]){3, 3}, (int[]){1, 1}, NULL, (int[]){1, 1},
                          (int[]){1, 1}, false)},
        {"depthwise-x2-s2", cfg(2, 1, 4, 8, 4, (int[]){10, 7}, (int[]){5, 3}, (int[]){2, 2}, NULL, (int[]){2, 1},
                                (int[]){2, 1}, false)},
        {"same-s2", cfg(2, 1, 3, 4, 1, (int[]){10, 7}, (int[]){4, 3}, (int[]){2, 2}, NULL, NULL, NULL, true)},
        {"1x1", cfg(2, 3, 7, 9, 1, (int[]){5, 6}, (int[]){1, 1}, NULL, NULL, NULL, NULL, false)},
        {"1d-s2-dil2", cfg(1, 2, 4, 3, 1, (int[]){17}, (int[]){5}, (int[]){2}, (int[]){2}, (int[]){3}, (int[]){1},
                           false)},
        {"1d-same-groups", cfg(1, 1, 6, 9, 3, (int[]){13}, (int[]){4}, NULL, NULL, NULL, NULL, true)},
        {"3d", cfg(3, 1, 3, 4, 1, (int[]){5, 6, 7}, (int[]){2, 3, 3}, (int[]){1, 2, 1}, NULL, (int[]){1, 1, 0},
                   (int[]){0, 1, 2}, false)},
        {"3d-dil-groups", cfg(3, 2, 4, 6, 2, (int[]){6, 5, 7}, (int[]){3, 2, 3}, (int[]){2, 1, 2}, (int[]){1, 2, 2},
                              (int[]){1, 0, 2}, (int[]){1, 1, 2}, false)},
    };
    int ncfg = (int)(sizeof cfgs / sizeof cfgs[0]);
    for (int ci = 0; ci < ncfg; ci++) {
        for (int ti = 0; ti < 3; ti++) {
            for (int dir = 0; dir < 3; dir++) {
                bool chlast = (ci + ti + dir) % 2 == 1; /* both layouts over the sweep */
                if (opts.quick && (ti != (ci % 3) || ci % 2))
                    continue;
                /* f32 channels-last fwd with C % 4 == 0 and tf32 off: still direct */
                const win_cfg *w = &cfgs[ci].w;
                const bool dw = w->groups == w->c && w->k == w->c && chlast && dir < 2;
                conv_case(cfgs[ci].name, w, dts[ti], chlast, dir, false,
                          dir == 0 && ti > 0 && chlast && w->nsp == 2 && w->groups == 1 && w->c % 8 == 0
                              ? "conv_igemm"
                          : dw ? "conv_dw"
                               : "conv_direct",
                          1);
            }
        }
    }
}

/* conv_direct's tiled wgrad: reductions long enough for several splits, K and
 * C*R*S past the 32 x 32 tile with tails. */
static void conv_wgrad_tiled_cases(void)
{
    static const char *const dts[] = {"f32", "f16", "bf16"};
    struct { const char *name; win_cfg w; } cfgs[] = {
        {"tiled-c20-k40", cfg(2, 2, 20, 40, 1, (int[]){19, 19}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                              (int[]){1, 1}, false)},
        {"tiled-s2-asym", cfg(2, 4, 8, 36, 1, (int[]){21, 23}, (int[]){3, 3}, (int[]){2, 2}, NULL, (int[]){1, 0},
                              (int[]){0, 1}, false)},
        {"tiled-1d-dil2", cfg(1, 2, 12, 34, 1, (int[]){700}, (int[]){5}, NULL, (int[]){2}, NULL, NULL, false)},
    };
    for (int ci = 0; ci < 3; ci++)
        for (int ti = 0; ti < 3; ti++) {
            if (opts.quick && ti != ci)
                continue;
            conv_case(cfgs[ci].name, &cfgs[ci].w, dts[ti], (ci + ti) % 2 == 1, 2, false, "conv_direct", 1);
        }
}

static void conv_igemm_cases(void)
{
    static const char *const dts[] = {"f16", "bf16", "f32"};
    struct { const char *name; win_cfg w; } cfgs[] = {
        {"c8-k24-3x3", cfg(2, 2, 8, 24, 1, (int[]){11, 9}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1}, (int[]){1, 1},
                           false)},
        {"c16-s2-asym", cfg(2, 1, 16, 13, 1, (int[]){15, 12}, (int[]){3, 3}, (int[]){2, 2}, NULL, (int[]){1, 0},
                            (int[]){2, 1}, false)},
        {"c24-dil2", cfg(2, 2, 24, 40, 1, (int[]){13, 14}, (int[]){3, 3}, NULL, (int[]){2, 2}, (int[]){2, 2},
                         (int[]){2, 2}, false)},
        {"c64-k136-tails", cfg(2, 3, 64, 136, 1, (int[]){17, 15}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                               (int[]){1, 1}, false)},
        {"c72-1x1-s2", cfg(2, 2, 72, 130, 1, (int[]){15, 16}, (int[]){1, 1}, (int[]){2, 2}, NULL, NULL, NULL, false)},
        {"c8-7x7-s2-same", cfg(2, 1, 8, 16, 1, (int[]){23, 19}, (int[]){7, 7}, (int[]){2, 2}, NULL, NULL, NULL, true)},
        {"c256-k64-1x1", cfg(2, 1, 256, 64, 1, (int[]){14, 14}, (int[]){1, 1}, NULL, NULL, NULL, NULL, false)},
        {"c16-k32-asym-s1", cfg(2, 2, 16, 32, 1, (int[]){9, 12}, (int[]){3, 3}, NULL, NULL, (int[]){2, 0},
                                (int[]){0, 1}, false)},
    };
    int ncfg = (int)(sizeof cfgs / sizeof cfgs[0]);
    for (int ci = 0; ci < ncfg; ci++) {
        for (int ti = 0; ti < 3; ti++) {
            for (int dir = 0; dir < 2; dir++) {
                if (opts.quick && (ci % 3 || (dir && ti == 2)))
                    continue;
                bool f32 = ti == 2;
                /* dgrad runs on the igemm kernel by stride phases when dy's channels K % 8 == 0; f32
                 * dgrad stays without tf32 here: conv_direct's single launch at these sizes, but for the
                 * largest (3 x 64 x 17 x 15 from K = 136: 120 MFLOP), which conv_f32_gemm's GEMM takes */
                bool igemm = dir == 0 || (!f32 && cfgs[ci].w.k % 8 == 0);
                const char *other = f32 && cfgs[ci].w.k == 136 ? "conv_f32_gemm" : "conv_direct";
                /* strided dgrad (several phase launches) is forced: at these sizes direct ties */
                bool strided = dir == 1 && cfgs[ci].w.stride[0] * cfgs[ci].w.stride[1] > 1;
                (strided && igemm ? conv_case_forced : conv_case)(cfgs[ci].name, &cfgs[ci].w, dts[ti], true, dir,
                                                                  f32 && igemm, igemm ? "conv_igemm" : other, 1);
            }
        }
    }
    /* f32 without tf32 must fall back to direct; a small NCHW f16 conv too (its packed copies cost more) */
    conv_case("c16-s2-asym", &cfgs[1].w, "f32", true, 0, false, "conv_direct", 1);
    conv_case("c16-s2-asym", &cfgs[1].w, "f16", false, 0, false, "conv_direct", 1);
    /* forward convs on packed channels-last copies (C padded to the 16-byte chunk): the C = 3 stem,
     * odd C, NCHW, tf32 */
    struct { const char *name, *dt; bool chlast, tf32; win_cfg w; } packed[] = {
        {"packed-stem-c3-7x7-s2", "f16", true, false, cfg(2, 2, 3, 16, 1, (int[]){23, 21}, (int[]){7, 7},
                                                          (int[]){2, 2}, NULL, (int[]){3, 3}, (int[]){3, 3}, false)},
        {"packed-c3-nchw-dil2", "bf16", false, false, cfg(2, 1, 3, 13, 1, (int[]){14, 11}, (int[]){3, 3}, NULL,
                                                          (int[]){2, 2}, (int[]){2, 1}, (int[]){1, 2}, false)},
        {"packed-c5-k40-s2", "f16", true, false, cfg(2, 2, 5, 40, 1, (int[]){13, 12}, (int[]){3, 3}, (int[]){2, 2},
                                                     NULL, (int[]){1, 0}, (int[]){1, 1}, false)},
        {"packed-c21-k136", "bf16", true, false, cfg(2, 1, 21, 136, 1, (int[]){9, 10}, (int[]){3, 3}, NULL, NULL,
                                                     (int[]){1, 1}, (int[]){1, 1}, false)},
        {"packed-nchw-c16", "f16", false, false, cfg(2, 2, 16, 24, 1, (int[]){11, 9}, (int[]){3, 3}, NULL, NULL,
                                                     (int[]){1, 1}, (int[]){1, 1}, false)},
        {"packed-tf32-c3-nchw", "f32", false, true, cfg(2, 2, 3, 8, 1, (int[]){12, 13}, (int[]){5, 5},
                                                        (int[]){2, 2}, NULL, (int[]){2, 2}, (int[]){2, 2}, false)},
        {"packed-1d-c7", "f16", true, false, cfg(1, 2, 7, 16, 1, (int[]){41}, (int[]){5}, (int[]){2}, NULL,
                                                 (int[]){2}, (int[]){1}, false)},
    };
    for (int i = 0; i < (int)(sizeof packed / sizeof packed[0]); i++)
        if (!opts.quick || i % 2 == 0)
            conv_case_forced(packed[i].name, &packed[i].w, packed[i].dt, packed[i].chlast, 0, packed[i].tf32,
                             "conv_igemm", 1);
}

/* conv_wgrad_mma: vector (channels-last, K/G and C/G % 8) and element
 * (NCHW, odd channel counts) loaders, 1-/2-/3-D, strides 2 and 3, dilation
 * 2, asymmetric pads, groups, depthwise, N = 1, K past one 128 tile, and a
 * reduction long enough for many splits.  The engine is forced: at these
 * sizes the heuristics may prefer conv_direct's single launch. */
static void conv_wgrad_mma_cases(void)
{
    static const char *const dts[] = {"f16", "bf16"};
    struct { const char *name; win_cfg w; bool chlast; } cfgs[] = {
        {"c16-k24-3x3", cfg(2, 2, 16, 24, 1, (int[]){11, 9}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1}, (int[]){1, 1},
                            false), true},
        {"c8-k40-s2-asym", cfg(2, 1, 8, 40, 1, (int[]){15, 12}, (int[]){3, 3}, (int[]){2, 2}, NULL, (int[]){1, 0},
                               (int[]){2, 1}, false), true},
        {"c24-k136-dil2", cfg(2, 2, 24, 136, 1, (int[]){13, 14}, (int[]){3, 3}, NULL, (int[]){2, 2}, (int[]){2, 2},
                              (int[]){2, 2}, false), true},
        {"c16-s3", cfg(2, 2, 16, 16, 1, (int[]){17, 16}, (int[]){3, 3}, (int[]){3, 3}, NULL, (int[]){1, 0},
                       (int[]){0, 1}, false), true},
        {"c3-k13-odd", cfg(2, 1, 3, 13, 1, (int[]){12, 11}, (int[]){3, 3}, (int[]){2, 1}, NULL, (int[]){1, 1},
                           (int[]){0, 1}, false), true},
        {"nchw-c16-k8", cfg(2, 2, 16, 8, 1, (int[]){9, 10}, (int[]){3, 3}, NULL, (int[]){1, 2}, (int[]){1, 2},
                            (int[]){1, 2}, false), false},
        {"groups2-c16-k32", cfg(2, 2, 16, 32, 2, (int[]){9, 9}, (int[]){3, 3}, (int[]){2, 2}, NULL, (int[]){1, 1},
                                (int[]){1, 1}, false), true},
        {"groups3-c9-k6", cfg(2, 1, 9, 6, 3, (int[]){10, 9}, (int[]){3, 2}, NULL, NULL, (int[]){1, 0},
                              (int[]){1, 1}, false), true},
        {"depthwise-c8", cfg(2, 2, 8, 8, 8, (int[]){9, 11}, (int[]){3, 3}, (int[]){2, 1}, NULL, (int[]){1, 1},
                             (int[]){1, 1}, false), true},
        {"1d-c8-k16-s2-dil2", cfg(1, 2, 8, 16, 1, (int[]){301}, (int[]){5}, (int[]){2}, (int[]){2}, (int[]){3},
                                  (int[]){1}, false), true},
        {"1d-c5-k7-same", cfg(1, 1, 5, 7, 1, (int[]){57}, (int[]){4}, NULL, NULL, NULL, NULL, true), true},
        {"3d-c8-k16", cfg(3, 1, 8, 16, 1, (int[]){5, 6, 7}, (int[]){3, 3, 3}, (int[]){1, 2, 1}, NULL,
                          (int[]){1, 1, 0}, (int[]){0, 1, 2}, false), true},
        {"3d-c3-k5-dil", cfg(3, 2, 3, 5, 1, (int[]){6, 5, 7}, (int[]){2, 2, 3}, (int[]){2, 1, 2}, (int[]){1, 2, 1},
                             (int[]){1, 0, 1}, (int[]){0, 1, 1}, false), false},
        {"long-c32-k64", cfg(2, 4, 32, 64, 1, (int[]){40, 40}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                             (int[]){1, 1}, false), true},
        {"1x1-c64-k128", cfg(2, 3, 64, 128, 1, (int[]){21, 19}, (int[]){1, 1}, (int[]){2, 2}, NULL, NULL, NULL,
                             false), true},
    };
    int ncfg = (int)(sizeof cfgs / sizeof cfgs[0]);
    for (int ci = 0; ci < ncfg; ci++)
        for (int ti = 0; ti < 2; ti++) {
            if (opts.quick && ti != ci % 2)
                continue;
            conv_case_forced(cfgs[ci].name, &cfgs[ci].w, dts[ti], cfgs[ci].chlast, 2, false, "conv_wgrad_mma", 1);
        }
}

/* A channels-last wgrad case "wgmma-NAME" forced on conv_wgrad_wgmma; the case registered. */
static tcase *wgrad_wgmma_case(const char *name, const win_cfg *w, const char *dt)
{
    char id[64];
    snprintf(id, sizeof id, "wgmma-%s", name);
    conv_case_forced(id, w, dt, true, 2, false, "conv_wgrad_wgmma", 1);
    return &cases[ncases - 1];
}

/* conv_wgrad_wgmma (Hopper): odd N*P*Q (a slice's tail past M), K and C in {8, 24, 64, 136} (K past one
 * 128 tile; both tile shapes: 64 x 256 for K <= 64, 128 x 128 above), strides 1 and 2 (and 2 x 1), dilation
 * 2, pads 0 / 1 / asymmetric, 1-D, 5x5 and 3x2 windows, a 1x1 stride-2 one, and the reduction split chosen
 * by the model or forced (XDNN_WGRAD_SPLITS: 1, and 7 of 100 slices, the last split shorter).  Forced: at
 * these sizes the cost model may prefer another engine.  dw f16/bf16, NHWC (KRSC). */
static void conv_wgrad_wgmma_cases(void)
{
    static const char *const dts[] = {"f16", "bf16"};
    struct { const char *name; win_cfg w; int splits; } cfgs[] = {
        {"c8-k8-3x3", cfg(2, 1, 8, 8, 1, (int[]){7, 9}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1}, (int[]){1, 1},
                          false), 0},
        {"c24-k136-s2-asym", cfg(2, 3, 24, 136, 1, (int[]){13, 11}, (int[]){3, 3}, (int[]){2, 2}, NULL,
                                 (int[]){1, 0}, (int[]){0, 2}, false), 0},
        {"c64-k24-dil2", cfg(2, 2, 64, 24, 1, (int[]){15, 13}, (int[]){3, 3}, NULL, (int[]){2, 2}, (int[]){2, 2},
                             (int[]){2, 2}, false), 0},
        {"c136-k64-5x5", cfg(2, 1, 136, 64, 1, (int[]){11, 9}, (int[]){5, 5}, NULL, NULL, (int[]){2, 2},
                             (int[]){2, 2}, false), 0},
        {"c64-k64-pad0", cfg(2, 5, 64, 64, 1, (int[]){9, 9}, (int[]){3, 3}, NULL, NULL, NULL, NULL, false), 0},
        {"c8-k24-3x2-s2x1", cfg(2, 2, 8, 24, 1, (int[]){17, 10}, (int[]){3, 2}, (int[]){2, 1}, NULL,
                                (int[]){0, 1}, (int[]){1, 0}, false), 0},
        {"c8-k200", cfg(2, 3, 8, 200, 1, (int[]){11, 7}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1}, (int[]){1, 1},
                        false), 0},
        {"1d-c24-k8-s2-dil2", cfg(1, 3, 24, 8, 1, (int[]){101}, (int[]){5}, (int[]){2}, (int[]){2}, (int[]){3},
                                  (int[]){1}, false), 0},
        {"1x1-c16-k64-s2", cfg(2, 3, 16, 64, 1, (int[]){21, 19}, (int[]){1, 1}, (int[]){2, 2}, NULL, NULL, NULL,
                               false), 0},
        {"long-c64-k128", cfg(2, 4, 64, 128, 1, (int[]){40, 40}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                              (int[]){1, 1}, false), 0},
        {"long-c64-k128-split7", cfg(2, 4, 64, 128, 1, (int[]){40, 40}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                     (int[]){1, 1}, false), 7},
        {"long-c24-k64-split1", cfg(2, 3, 24, 64, 1, (int[]){33, 31}, (int[]){3, 3}, (int[]){1, 1}, NULL,
                                    (int[]){1, 1}, (int[]){1, 1}, false), 1},
    };
    int ncfg = (int)(sizeof cfgs / sizeof cfgs[0]);
    for (int ci = 0; ci < ncfg; ci++)
        for (int ti = 0; ti < 2; ti++) {
            if (opts.quick && ti != ci % 2)
                continue;
            wgrad_wgmma_case(cfgs[ci].name, &cfgs[ci].w, dts[ti]);
            if (ncases > 0 && cfgs[ci].splits) {
                cases[ncases - 1].wsplits = cfgs[ci].splits;
                cases[ncases - 1].want_detail = cfgs[ci].splits == 7 ? "x 7 splits" : "x 1 splits";
            }
        }
    /* what it refuses, with the reason named (conv_wgrad_mma keeps these) */
    static const struct { const char *name, *text, *why; } no[] = {
        {"c6", "  input dy: f16[2, 16, 7, 7] @nhwc;\n  input x: f16[2, 6, 9, 9] @nhwc;\n"
               "  dw = conv_wgrad(dy, x, w_dims=[16, 6, 3, 3]);\n  output dw: f16 @nhwc;\n",
         "conv_wgrad_wgmma needs x channels C % 4 == 0, got C=6"},
        {"nchw", "  input dy: f16[2, 16, 7, 7];\n  input x: f16[2, 16, 9, 9];\n"
                 "  dw = conv_wgrad(dy, x, w_dims=[16, 16, 3, 3]);\n  output dw: f16;\n",
         "conv_wgrad_wgmma needs channels-last dy and x (@nhwc)"},
        {"groups2", "  input dy: f16[2, 16, 7, 7] @nhwc;\n  input x: f16[2, 16, 9, 9] @nhwc;\n"
                    "  dw = conv_wgrad(dy, x, w_dims=[16, 8, 3, 3], groups=2);\n  output dw: f16 @nhwc;\n",
         "conv_wgrad_wgmma needs groups == 1, got groups=2"},
    };
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        char id[96];
        snprintf(id, sizeof id, "conv/wgrad/wgmma-refuses-%s", no[i].name);
        tcase *c = add_case(id, 1, "conv_wgrad_wgmma", "dnn 1;\ngraph g(seed=5) {\n%s}\n", no[i].text);
        if (c) {
            c->force = "conv_wgrad";
            c->refuse = no[i].why;
        }
    }
}

/* conv_igemm beyond 2-D stride-1: strided dgrad by stride phases (strides 2
 * and 3, dilation 2 with gcd(stride, dil) > 1 and = 1, phases no tap
 * reaches, odd dx channel counts), and 1-D / 3-D fwd and dgrad. */
static void conv_igemm_nd_cases(void)
{
    static const char *const dts[] = {"f16", "bf16"};
    struct { const char *name; win_cfg w; int dirs; } cfgs[] = {
        {"dg-s3-dil2-c13", cfg(2, 2, 13, 16, 1, (int[]){20, 17}, (int[]){3, 3}, (int[]){3, 3}, (int[]){2, 2},
                               (int[]){2, 1}, (int[]){0, 2}, false), 2},
        {"dg-s2-dil2", cfg(2, 1, 8, 24, 1, (int[]){15, 14}, (int[]){3, 3}, (int[]){2, 2}, (int[]){2, 2},
                           (int[]){2, 2}, (int[]){2, 1}, false), 2},
        {"dg-1x1-s2-c21", cfg(2, 2, 21, 32, 1, (int[]){13, 12}, (int[]){1, 1}, (int[]){2, 2}, NULL, NULL, NULL,
                              false), 2},
        {"dg-1x1-s2-c24", cfg(2, 2, 24, 16, 1, (int[]){13, 12}, (int[]){1, 1}, (int[]){2, 2}, NULL, NULL, NULL,
                              false), 2},
        {"dg-s2x3-5x4", cfg(2, 1, 16, 8, 1, (int[]){19, 23}, (int[]){5, 4}, (int[]){2, 3}, NULL, (int[]){2, 1},
                            (int[]){1, 2}, false), 2},
        {"1d-c16-k24-s2-dil2", cfg(1, 2, 16, 24, 1, (int[]){37}, (int[]){5}, (int[]){2}, (int[]){2}, (int[]){3},
                                   (int[]){1}, false), 3},
        {"1d-c8-k8-same", cfg(1, 1, 8, 8, 1, (int[]){50}, (int[]){3}, NULL, NULL, NULL, NULL, true), 3},
        {"3d-c8-k16", cfg(3, 1, 8, 16, 1, (int[]){5, 6, 7}, (int[]){3, 3, 3}, (int[]){1, 2, 1}, NULL,
                          (int[]){1, 1, 0}, (int[]){0, 1, 2}, false), 3},
        {"3d-c16-k8-dil", cfg(3, 2, 16, 8, 1, (int[]){6, 5, 7}, (int[]){2, 2, 3}, (int[]){2, 1, 2}, (int[]){1, 2, 1},
                              (int[]){1, 0, 1}, (int[]){0, 1, 1}, false), 3},
    };
    int ncfg = (int)(sizeof cfgs / sizeof cfgs[0]);
    for (int ci = 0; ci < ncfg; ci++)
        for (int ti = 0; ti < 2; ti++)
            for (int dir = 0; dir < 2; dir++) {
                if (!(cfgs[ci].dirs & (1 << dir)) || (opts.quick && ti != ci % 2))
                    continue;
                conv_case_forced(cfgs[ci].name, &cfgs[ci].w, dts[ti], true, dir, false, "conv_igemm", 1);
            }
}

/* conv_igemm's split-K (kernels/conv_igemm.cu): the C*R*S reduction cut
 * into f32 partials summed in order by a second kernel that runs the
 * epilogue.  Forced through XDNN_CONV_SPLITK at 2, 3 and 5 splits (of 18 k
 * slices for C = 64 3x3: 5 normalises to 5 splits of 4, 4, 4, 4, 2), 7
 * (normalised to 6 of 3) and more splits than slices (clamped); odd K and
 * K past one tile, stride 2 and asymmetric pads, dilation, tf32 (16-float
 * slices), bf16, a fused bias + residual + relu, dgrad at stride 1 and by
 * stride phases, 1-D and 3-D.  Two cases leave the count to the heuristic
 * (few output tiles, a long reduction): it must split ("split-K" in the
 * engine's detail). */
static void conv_igemm_splitk_cases(void)
{
    struct { const char *name, *dt; win_cfg w; int dir, splitk; bool tf32; } cfgs[] = {
        {"sk2-c64-k24-3x3", "f16", cfg(2, 2, 64, 24, 1, (int[]){11, 9}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                       (int[]){1, 1}, false), 0, 2, false},
        {"sk3-c64-k13-s2-asym", "bf16", cfg(2, 1, 64, 13, 1, (int[]){15, 12}, (int[]){3, 3}, (int[]){2, 2}, NULL,
                                            (int[]){1, 0}, (int[]){2, 1}, false), 0, 3, false},
        {"sk5-c64-k136-tails", "f16", cfg(2, 3, 64, 136, 1, (int[]){7, 9}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                          (int[]){1, 1}, false), 0, 5, false},
        {"sk7-c64-k130-dil2", "bf16", cfg(2, 2, 64, 130, 1, (int[]){13, 11}, (int[]){3, 3}, NULL, (int[]){2, 2},
                                          (int[]){2, 2}, (int[]){2, 2}, false), 0, 7, false},
        {"sk3-tf32-c36-k40", "f32", cfg(2, 2, 36, 40, 1, (int[]){9, 10}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                        (int[]){1, 1}, false), 0, 3, true},
        {"sk99-c16-k8-clamped", "f16", cfg(2, 1, 16, 8, 1, (int[]){7, 7}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                           (int[]){1, 1}, false), 0, 99, false},
        {"sk4-dgrad-c40-k64", "f16", cfg(2, 2, 40, 64, 1, (int[]){9, 11}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                         (int[]){1, 1}, false), 1, 4, false},
        {"sk3-dgrad-s2-c24-k48", "bf16", cfg(2, 2, 24, 48, 1, (int[]){13, 12}, (int[]){3, 3}, (int[]){2, 2}, NULL,
                                             (int[]){1, 1}, (int[]){1, 0}, false), 1, 3, false},
        {"sk2-1d-c32-k24", "f16", cfg(1, 2, 32, 24, 1, (int[]){37}, (int[]){5}, (int[]){2}, NULL, (int[]){2},
                                      (int[]){1}, false), 0, 2, false},
        {"sk3-3d-c16-k8", "bf16", cfg(3, 1, 16, 8, 1, (int[]){5, 6, 7}, (int[]){3, 3, 3}, NULL, NULL,
                                      (int[]){1, 1, 1}, (int[]){1, 1, 1}, false), 0, 3, false},
        /* the heuristic: one or two output tiles, a reduction of 72 and 36 slices */
        {"skauto-c256-k128-7x7", "f16", cfg(2, 2, 256, 128, 1, (int[]){7, 7}, (int[]){3, 3}, NULL, NULL,
                                            (int[]){1, 1}, (int[]){1, 1}, false), 0, 0, false},
        {"skauto-dgrad-c96-k128", "bf16", cfg(2, 1, 96, 128, 1, (int[]){9, 9}, (int[]){3, 3}, NULL, NULL,
                                              (int[]){1, 1}, (int[]){1, 1}, false), 1, 0, false},
    };
    for (int i = 0; i < (int)(sizeof cfgs / sizeof cfgs[0]); i++) {
        if (opts.quick && i % 2)
            continue;
        char name[64];
        snprintf(name, sizeof name, "%s", cfgs[i].name);
        conv_case_forced(name, &cfgs[i].w, cfgs[i].dt, true, cfgs[i].dir, cfgs[i].tf32, "conv_igemm", 1);
        tcase *c = &cases[ncases - 1];
        c->splitk = cfgs[i].splitk;
        c->want_detail = "split-K";
    }
    /* fused bias + residual + relu after the ordered reduction (the epilogue runs in the second kernel) */
    /* the f32 output carries the f32 sum of 576 products: the f32-conv tolerance (10x, as the epilogue cases) */
    tcase *c = add_case("conv/fwd/sk5-epi-bias-res-relu/f16/nhwc/2d", 10, "conv_igemm",
                        "dnn 1;\ngraph g(seed=91) {\n  input x: f16[2, 64, 9, 11] @nhwc;\n"
                        "  weight w: f16[40, 64, 3, 3] @nhwc;\n  weight b: f16[1, 40, 1, 1];\n"
                        "  input r: f16[2, 40, 9, 11] @nhwc;\n  y = relu(conv(x, w, pad=1) + b + r);\n"
                        "  output y: f32 @nhwc;\n}\n");
    if (c) {
        c->splitk = 5;
        c->want_parts = 1;
        c->want_detail = "split-K 5";
        c->force = "conv";
    }
}

/* conv_dw (groups == C == K, channels-last): the register-window variants
 * (3 and 5 wide, stride 1 and 2), the generic one (dilation, 7 wide, 1-D,
 * 3-D), scalar channels (C = 21, 13), odd sizes, N = 1, asymmetric pads;
 * dgrad at stride 1 (flipped taps) and 2-3 (gather).  Not forced: the cost
 * model must choose it.  NCHW depthwise falls back to conv_direct. */
static void conv_dw_cases(void)
{
    static const char *const dts[] = {"f16", "bf16", "f32"};
    struct { const char *name; win_cfg w; } cfgs[] = {
        {"dw-c32-3x3", cfg(2, 2, 32, 32, 32, (int[]){15, 13}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1}, (int[]){1, 1},
                        false)},
        {"dw-c24-3x3-s2-asym", cfg(2, 2, 24, 24, 24, (int[]){14, 17}, (int[]){3, 3}, (int[]){2, 2}, NULL,
                                (int[]){1, 0}, (int[]){0, 1}, false)},
        {"dw-c40-5x5-same", cfg(2, 1, 40, 40, 40, (int[]){11, 12}, (int[]){5, 5}, NULL, NULL, NULL, NULL, true)},
        {"dw-c16-5x5-s2", cfg(2, 2, 16, 16, 16, (int[]){13, 15}, (int[]){5, 5}, (int[]){2, 2}, NULL, (int[]){2, 1},
                           (int[]){2, 2}, false)},
        {"dw-c21-3x3-odd-c", cfg(2, 2, 21, 21, 21, (int[]){9, 11}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                              (int[]){1, 1}, false)},
        {"dw-c16-dil2", cfg(2, 1, 16, 16, 16, (int[]){12, 13}, (int[]){3, 3}, NULL, (int[]){2, 2}, (int[]){2, 2},
                         (int[]){2, 2}, false)},
        {"dw-c264-7x7-s3", cfg(2, 2, 264, 264, 264, (int[]){16, 17}, (int[]){7, 7}, (int[]){3, 3}, NULL, (int[]){3, 2},
                            (int[]){3, 3}, false)},
        {"dw-1d-c24-k3", cfg(1, 2, 24, 24, 24, (int[]){37}, (int[]){3}, NULL, NULL, (int[]){1}, (int[]){1}, false)},
        {"dw-3d-c13-3x3x3-s2", cfg(3, 1, 13, 13, 13, (int[]){5, 7, 6}, (int[]){3, 3, 3}, (int[]){1, 2, 2}, NULL,
                                (int[]){1, 1, 1}, (int[]){1, 0, 1}, false)},
        {"dw-c20-7x7-s1-p3", cfg(2, 2, 20, 20, 20, (int[]){17, 19}, (int[]){7, 7}, NULL, NULL, (int[]){3, 3},
                              (int[]){3, 3}, false)},
        {"dw-c36-7x7-s2", cfg(2, 1, 36, 36, 36, (int[]){23, 29}, (int[]){7, 7}, (int[]){2, 2}, NULL, (int[]){3, 2},
                           (int[]){3, 3}, false)},
        {"dw-3d-c16-3x3x3", cfg(3, 1, 16, 16, 16, (int[]){5, 6, 11}, (int[]){3, 3, 3}, NULL, NULL, (int[]){1, 1, 1},
                             (int[]){1, 1, 1}, false)},
    };
    int ncfg = (int)(sizeof cfgs / sizeof cfgs[0]);
    /* fwd and dgrad chosen by the cost model; wgrad forced (at these sizes conv_direct's one launch ties) */
    for (int ci = 0; ci < ncfg; ci++)
        for (int ti = 0; ti < 3; ti++)
            for (int dir = 0; dir < 3; dir++) {
                if (opts.quick && ti != ci % 3)
                    continue;
                (dir == 2 ? conv_case_forced : conv_case)(cfgs[ci].name, &cfgs[ci].w, dts[ti], true, dir, false,
                                                          "conv_dw", 1);
            }
    conv_case("dw-c32-3x3", &cfgs[0].w, "f16", false, 0, false, "conv_direct", 1);
    /* the depthwise wgrad at a size where the cost model must choose conv_dw over conv_direct, and one whose
     * reduction runs over many chunks (N*P*nq strips >> 8 per chunk) */
    win_cfg big = cfg(2, 4, 64, 64, 64, (int[]){56, 57}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1}, (int[]){1, 1},
                      false);
    conv_case("dw-wgrad-c64-56x57", &big, "f16", true, 2, false, "conv_dw", 1);
    win_cfg big7 = cfg(2, 3, 96, 96, 96, (int[]){29, 31}, (int[]){7, 7}, NULL, NULL, (int[]){3, 3}, (int[]){3, 3},
                       false);
    if (!opts.quick)
        conv_case("dw-wgrad-c96-7x7", &big7, "bf16", true, 2, false, "conv_dw", 1);
}

/* Forward conv + the epilogue chain the partitioner fuses into it (conv_epi.h):
 * per-channel bias, every activation, residual add, scale, output cast, on
 * conv_igemm (channels-last, C % 8 == 0), conv_direct (C = 5, NCHW) and
 * conv_dw (depthwise).  The case passes only when the whole graph ran as ONE
 * partition on the wanted engine (want_parts = 1) and matches the reference. */
static void conv_epilogue_cases(void)
{
    static const struct { const char *name, *expr; } acts[] = {
        {"bias-relu", "relu(conv(x, w, %s) + b)"},
        {"bias-clip6", "relu(conv(x, w, %s) + b, upper=6.0)"},
        {"bias-leaky", "relu(b + conv(x, w, %s), slope=0.125)"},
        {"bias-gelu", "gelu(conv(x, w, %s) + b)"},
        {"bias-gelu-tanh", "gelu(conv(x, w, %s) + b, approx=\"tanh\")"},
        {"bias-silu", "silu(conv(x, w, %s) + b)"},
        {"sigmoid-scale", "sigmoid(conv(x, w, %s) * 0.75 - 0.5)"},
        {"bias-tanh", "tanh(conv(x, w, %s) + b)"},
        {"bias-res-relu", "relu(conv(x, w, %s) + b + r)"},
        {"res-sub-mul", "(r - conv(x, w, %s)) * b"},
    };
    struct { const char *name, *want, *dt, *lay; win_cfg w; } cfgs[] = {
        {"igemm-c24-k40-s2-asym", "conv_igemm", "f16", "nhwc", cfg(2, 2, 24, 40, 1, (int[]){13, 11}, (int[]){3, 3},
                                                                   (int[]){2, 2}, NULL, (int[]){1, 0},
                                                                   (int[]){2, 1}, false)},
        {"igemm-c16-k13-dil2", "conv_igemm", "bf16", "nhwc", cfg(2, 1, 16, 13, 1, (int[]){12, 9}, (int[]){3, 3},
                                                                 NULL, (int[]){2, 2}, (int[]){2, 2}, (int[]){2, 2},
                                                                 false)},
        {"igemm-packed-c3-k16-7x7-s2", "conv_igemm", "f16", "nhwc", cfg(2, 2, 3, 16, 1, (int[]){17, 15},
                                                                        (int[]){7, 7}, (int[]){2, 2}, NULL,
                                                                        (int[]){3, 3}, (int[]){3, 3}, false)},
        {"wgmma-c24-k40-s2-asym", "conv_igemm_wgmma", "f16", "nhwc", cfg(2, 2, 24, 40, 1, (int[]){13, 11},
                                                                         (int[]){3, 3}, (int[]){2, 2}, NULL,
                                                                         (int[]){1, 0}, (int[]){2, 1}, false)},
        {"wgmma-c16-k24-dil2", "conv_igemm_wgmma", "bf16", "nhwc", cfg(2, 1, 16, 24, 1, (int[]){12, 9},
                                                                       (int[]){3, 3}, NULL, (int[]){2, 2},
                                                                       (int[]){2, 2}, (int[]){2, 2}, false)},
        {"direct-c5-k7", "conv_direct", "f32", "nchw", cfg(2, 2, 5, 7, 1, (int[]){9, 10}, (int[]){3, 3}, NULL, NULL,
                                                           (int[]){1, 1}, (int[]){1, 1}, false)},
        {"dw-c21-s2", "conv_dw", "f16", "nhwc", cfg(2, 2, 21, 21, 21, (int[]){13, 11}, (int[]){3, 3}, (int[]){2, 2},
                                                     NULL, (int[]){1, 1}, (int[]){0, 1}, false)},
        /* conv_igemm_wgmma on padded copies (C 3 -> 8, 5 -> 8): the epilogue runs on the unchanged kernel */
        {"wgp-epi-c3-k16-7x7-s2", "conv_igemm_wgmma", "f16", "nhwc", cfg(2, 2, 3, 16, 1, (int[]){17, 15},
                                                                              (int[]){7, 7}, (int[]){2, 2}, NULL,
                                                                              (int[]){3, 3}, (int[]){3, 3}, false)},
        {"wgp-epi-c5-k24", "conv_igemm_wgmma", "bf16", "nhwc", cfg(2, 1, 5, 24, 1, (int[]){13, 11},
                                                                       (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                                                       (int[]){1, 1}, false)},
    };
    int ncfg = (int)(sizeof cfgs / sizeof cfgs[0]), nact = (int)(sizeof acts / sizeof acts[0]);
    for (int ci = 0; ci < ncfg; ci++)
        for (int ai = 0; ai < nact; ai++) {
            if (opts.quick && (ai + ci) % 3)
                continue;
            const win_cfg *w = &cfgs[ci].w;
            char bs[96], expr[512], id[192];
            conv_text ct;
            conv_strs(w, &ct);
            const char *xs = ct.xs, *ws = ct.ws, *ys = ct.ys;
            dims_str(bs, sizeof bs, 1, w->k, w->nsp, (int[]){1, 1, 1});
            snprintf(expr, sizeof expr, acts[ai].expr, ct.attrs);
            const char *dt = cfgs[ci].dt, *lay = cfgs[ci].lay;
            /* the f32 output of an f16 conv: the cast is fused too */
            const char *ydt = (ci == 0 || ci == 3) && ai % 2 ? "f32" : dt;
            snprintf(id, sizeof id, "conv/fwd+epi/%s/%s/%s%s", cfgs[ci].name, acts[ai].name, dt,
                     strcmp(ydt, dt) ? "->f32" : "");
            char rdecl[160] = "";
            if (strstr(acts[ai].expr, " r") || strstr(acts[ai].expr, "(r"))
                snprintf(rdecl, sizeof rdecl, "  input r: %s%s @%s;\n", dt, ys, lay);
            /* an f32 output is judged by its last op's default (exact-math f32 for tanh, sigmoid ...), but
             * it carries the conv's f32 sum of C*R*S products (~sqrt(CRS) * 2^-24 of the terms): METHOD.md's
             * f32 conv figure is 10x the exact-math one */
            const double tol = strcmp(ydt, "f32") == 0 && strcmp(dt, "f32") ? 10 : 1;
            tcase *tc = add_case(id, tol, cfgs[ci].want,
                                 "dnn 1;\ngraph g(seed=%d) {\n  input x: %s%s @%s;\n  weight w: %s%s @%s;\n"
                                 "  weight b: %s%s;\n%s  y = %s;\n  output y: %s @%s;\n}\n",
                                 ncases * 3 + 11, dt, xs, lay, dt, ws, lay, dt, bs, rdecl, expr, ydt, lay);
            if (tc) {
                tc->force = "conv";
                tc->want_parts = 1;
            }
        }
}

/* ---- pooling sweeps */
static void pool_case(const char *name, const win_cfg *w, bool max, bool include_pad, const char *dt, bool chlast,
                      bool bwd, bool ties)
{
    char xs[96], ys[96], attrs[320], stride[48], dil[48], pad[96], id[192], win[48];
    int out[3];
    for (int i = 0; i < w->nsp; i++)
        out[i] = out_size(w, i);
    dims_str(xs, sizeof xs, w->n, w->c, w->nsp, w->in);
    dims_str(ys, sizeof ys, w->n, w->c, w->nsp, out);
    list_str(stride, sizeof stride, w->nsp, w->stride);
    list_str(dil, sizeof dil, w->nsp, w->dil);
    list_str(win, sizeof win, w->nsp, w->win);
    pad_str(pad, sizeof pad, w);
    size_t k = (size_t)snprintf(attrs, sizeof attrs, "window=%s, stride=%s, pad=%s, ceil_mode=%s", win, stride, pad,
                                w->ceil ? "true" : "false");
    if (max)
        snprintf(attrs + k, sizeof attrs - k, ", dilation=%s", dil);
    else
        snprintf(attrs + k, sizeof attrs - k, ", include_pad=%s", include_pad ? "true" : "false");
    const char *lay = layout_tag(w->nsp, chlast), *op = max ? "maxpool" : "avgpool";
    snprintf(id, sizeof id, "pool/%s%s/%s%s%s/%s/%s/%dd/%s", op, bwd ? "_bwd" : "", name, include_pad ? "-incpad" : "",
             ties ? "-ties" : "", dt, lay, w->nsp, xs);
    for (char *p = id; *p; p++)
        if (*p == ' ')
            *p = '_';
    int seed = ncases * 5 + 3;
    /* ties: x quantized to a few levels so windows hold equal maxima */
    const char *xexpr = ties ? "floor(x * 2.0)" : "x";
    if (!bwd)
        add_case(id, 1, "pool_direct",
                 "dnn 1;\ngraph g(seed=%d) {\n  input x: %s%s @%s;\n  y = %s(%s, %s);\n"
                 "  output y: %s @%s;\n}\n",
                 seed, dt, xs, lay, op, xexpr, attrs, dt, lay);
    else
        add_case(id, 1, "pool_direct",
                 "dnn 1;\ngraph g(seed=%d) {\n  input dy: %s%s @%s;\n  input x: %s%s @%s;\n"
                 "  dx = %s_bwd(dy, %s, %s);\n  output dx: %s @%s;\n}\n",
                 seed, dt, ys, lay, dt, xs, lay, op, xexpr, attrs, dt, lay);
}

static void pool_cases(void)
{
    static const char *const dts[] = {"f32", "f16", "bf16"};
    struct { const char *name; win_cfg w; } cfgs[] = {
        {"3x3-s2-p1", cfg(2, 2, 3, 3, 1, (int[]){11, 9}, (int[]){3, 3}, (int[]){2, 2}, NULL, (int[]){1, 1},
                          (int[]){1, 1}, false)},
        {"2x2", cfg(2, 1, 4, 4, 1, (int[]){8, 7}, (int[]){2, 2}, (int[]){2, 2}, NULL, NULL, NULL, false)},
        {"asym-pad-s1", cfg(2, 2, 2, 2, 1, (int[]){7, 10}, (int[]){3, 4}, (int[]){1, 2}, NULL, (int[]){0, 2},
                            (int[]){2, 1}, false)},
        {"same", cfg(2, 1, 3, 3, 1, (int[]){9, 8}, (int[]){3, 2}, (int[]){2, 3}, NULL, NULL, NULL, true)},
        {"1d", cfg(1, 2, 3, 3, 1, (int[]){19}, (int[]){4}, (int[]){3}, NULL, (int[]){1}, (int[]){2}, false)},
        {"3d", cfg(3, 1, 2, 2, 1, (int[]){6, 7, 5}, (int[]){2, 3, 2}, (int[]){2, 2, 1}, NULL, (int[]){1, 1, 0},
                   (int[]){0, 1, 1}, false)},
    };
    int ncfg = (int)(sizeof cfgs / sizeof cfgs[0]);
    for (int ci = 0; ci < ncfg; ci++) {
        for (int ti = 0; ti < 3; ti++) {
            if (opts.quick && ti != ci % 3)
                continue;
            bool chlast = (ci + ti) % 2 == 1;
            for (int bwd = 0; bwd < 2; bwd++) {
                pool_case(cfgs[ci].name, &cfgs[ci].w, true, false, dts[ti], chlast, bwd, false);
                pool_case(cfgs[ci].name, &cfgs[ci].w, false, ci % 2 == 0, dts[ti], chlast, bwd, false);
                if (ti == 0)
                    pool_case(cfgs[ci].name, &cfgs[ci].w, true, false, dts[ti], !chlast, bwd, true);
            }
        }
    }
    /* ceil_mode, dilation 2 (maxpool), include_pad with ceil_mode */
    win_cfg c1 = cfg(2, 2, 3, 3, 1, (int[]){10, 11}, (int[]){3, 3}, (int[]){2, 2}, NULL, (int[]){1, 0},
                     (int[]){1, 1}, false);
    c1.ceil = true;
    win_cfg c2 = cfg(2, 1, 2, 2, 1, (int[]){13, 12}, (int[]){3, 3}, (int[]){2, 1}, (int[]){2, 2}, (int[]){2, 1},
                     (int[]){1, 3}, false);
    win_cfg c3 = c2;
    c3.ceil = true;
    for (int bwd = 0; bwd < 2; bwd++) {
        pool_case("ceil", &c1, true, false, "f32", false, bwd, false);
        pool_case("ceil", &c1, false, true, "f16", true, bwd, false);
        pool_case("ceil", &c1, false, false, "bf16", false, bwd, false);
        pool_case("dil2", &c2, true, false, "f32", true, bwd, false);
        pool_case("dil2-ceil", &c3, true, false, "f16", false, bwd, true);
    }
}

/* conv_igemm_wgmma (kernels/conv_igemm_wgmma_sm90a.cu), forced: odd N*P*Q (partial 128-row tiles), C = 8,
 * 24, 64, 136 (reductions ending inside a 64-deep slice), K = 8, 24, 136 (the 64-wide tile with a tail), 120
 * and 256 (one and two 128-wide tiles), strides 1-3, dilation 2, asymmetric pads, 1x1 / 3x3 / 7x7 / 1x7 and
 * a 1-D conv, f16 and bf16; split-K forced at 2, 3 and 5 and left to the heuristic on a 7x7 map (it must
 * split); a large conv the cost model must give it unforced.  K % 8 != 0 is refused (test_gpu_conv.c). */
/* What the engine's detail says of a C it pads (the copies' channel count), NULL for C % 8 == 0. */
static const char *padded_detail(int c)
{
    static const char *const pads[] = {"C 3 -> 8", "C 5 -> 8", "C 12 -> 16"};
    return c == 3 ? pads[0] : c == 5 ? pads[1] : c == 12 ? pads[2] : NULL;
}

static void conv_wgmma_cases(void)
{
    static const char *const dts[] = {"f16", "bf16"};
    /* after the "wg-" rows the "wgp-" ones: C % 8 != 0 on channels-last copies with C padded to 8
     * (conv_pack.h; the detail names the padding): the ResNet stem (C = 3, 7x7 stride 2 pad 3, K = 64) at
     * N = 1, 2 and 32 (7.5 GFLOP on the CPU reference: not in --quick); C = 3 on an odd 37x29 map, 3x3 stride 1
     * pad 1; C = 5 and C = 12 (-> 16); a 1-D C = 3; NCHW C = 3; a padded reduction with split-K forced at 3 */
    struct { const char *name; win_cfg w; int splitk; } cfgs[] = {
        {"wg-c8-k8-1x1-odd", cfg(2, 3, 8, 8, 1, (int[]){13, 11}, (int[]){1, 1}, NULL, NULL, NULL, NULL, false), 0},
        {"wg-c24-k24-3x3-s2-asym", cfg(2, 2, 24, 24, 1, (int[]){15, 13}, (int[]){3, 3}, (int[]){2, 2}, NULL,
                                       (int[]){1, 0}, (int[]){2, 1}, false), 0},
        {"wg-c64-k136-3x3", cfg(2, 2, 64, 136, 1, (int[]){9, 11}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                (int[]){1, 1}, false), 0},
        {"wg-c136-k64-7x7-s3", cfg(2, 1, 136, 64, 1, (int[]){23, 19}, (int[]){7, 7}, (int[]){3, 3}, NULL,
                                   (int[]){3, 2}, (int[]){3, 3}, false), 0},
        {"wg-c64-k24-dil2", cfg(2, 2, 64, 24, 1, (int[]){12, 13}, (int[]){3, 3}, NULL, (int[]){2, 2},
                                (int[]){2, 2}, (int[]){1, 2}, false), 0},
        {"wg-c24-k256-1x7", cfg(2, 2, 24, 256, 1, (int[]){9, 17}, (int[]){1, 7}, NULL, NULL, (int[]){0, 3},
                                (int[]){0, 3}, false), 0},
        {"wg-c64-k120-3x3-n3", cfg(2, 3, 64, 120, 1, (int[]){11, 9}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                   (int[]){1, 1}, false), 0},
        {"wg-1d-c32-k120-s2", cfg(1, 2, 32, 120, 1, (int[]){37}, (int[]){5}, (int[]){2}, NULL, (int[]){2},
                                  (int[]){1}, false), 0},
        {"wg-sk2-c64-k24-3x3", cfg(2, 2, 64, 24, 1, (int[]){11, 9}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                   (int[]){1, 1}, false), 2},
        {"wg-sk3-c136-k136-s2", cfg(2, 1, 136, 136, 1, (int[]){15, 12}, (int[]){3, 3}, (int[]){2, 2}, NULL,
                                    (int[]){1, 0}, (int[]){2, 1}, false), 3},
        {"wg-sk5-c64-k256-3x3", cfg(2, 3, 64, 256, 1, (int[]){7, 9}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                    (int[]){1, 1}, false), 5},
        {"wg-skauto-c512-k256-7x7", cfg(2, 2, 512, 256, 1, (int[]){7, 7}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                        (int[]){1, 1}, false), -1},
        {"wgp-stem-n1", cfg(2, 1, 3, 64, 1, (int[]){224, 224}, (int[]){7, 7}, (int[]){2, 2}, NULL, (int[]){3, 3},
                            (int[]){3, 3}, false), 0},
        {"wgp-stem-n2", cfg(2, 2, 3, 64, 1, (int[]){224, 224}, (int[]){7, 7}, (int[]){2, 2}, NULL, (int[]){3, 3},
                            (int[]){3, 3}, false), 0},
        {"wgp-c3-k24-3x3-37x29", cfg(2, 2, 3, 24, 1, (int[]){37, 29}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                     (int[]){1, 1}, false), 0},
        {"wgp-c5-k40-5x5-s2", cfg(2, 3, 5, 40, 1, (int[]){19, 23}, (int[]){5, 5}, (int[]){2, 2}, NULL, (int[]){2, 1},
                                  (int[]){2, 2}, false), 0},
        {"wgp-c12-k136-3x3-dil2", cfg(2, 2, 12, 136, 1, (int[]){15, 13}, (int[]){3, 3}, NULL, (int[]){2, 2},
                                      (int[]){2, 2}, (int[]){2, 2}, false), 0},
        {"wgp-1d-c3-k16-s2", cfg(1, 2, 3, 16, 1, (int[]){41}, (int[]){7}, (int[]){2}, NULL, (int[]){3}, (int[]){3},
                                 false), 0},
        {"wgp-sk3-c12-k64-5x5", cfg(2, 2, 12, 64, 1, (int[]){9, 11}, (int[]){5, 5}, NULL, NULL, (int[]){2, 2},
                                    (int[]){2, 2}, false), 3},
        {"wgp-stem-n32", cfg(2, 32, 3, 64, 1, (int[]){224, 224}, (int[]){7, 7}, (int[]){2, 2}, NULL, (int[]){3, 3},
                             (int[]){3, 3}, false), 0},
        {"wgp-c3-nchw", cfg(2, 2, 3, 16, 1, (int[]){14, 11}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1}, (int[]){1, 1},
                            false), 0},
    };
    for (int ci = 0; ci < (int)(sizeof cfgs / sizeof cfgs[0]); ci++)
        for (int ti = 0; ti < 2; ti++) {
            if (opts.quick && (ti != ci % 2 || cfgs[ci].w.n >= 32))
                continue;
            const bool nchw = strstr(cfgs[ci].name, "nchw") != NULL;
            conv_case_forced(cfgs[ci].name, &cfgs[ci].w, dts[ti], !nchw, 0, false, "conv_igemm_wgmma", 1);
            tcase *c = &cases[ncases - 1];
            c->splitk = cfgs[ci].splitk > 0 ? cfgs[ci].splitk : 0;
            c->want_detail = padded_detail(cfgs[ci].w.c);
            if (!c->want_detail && cfgs[ci].splitk)
                c->want_detail = "split-K";
        }
    /* large enough for the cost model to choose it over conv_igemm on a 9.0 device */
    win_cfg big = cfg(2, 2, 64, 64, 1, (int[]){56, 56}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1}, (int[]){1, 1},
                      false);
    conv_case("wg-auto-c64-k64-56x56", &big, "f16", true, 0, false, "conv_igemm_wgmma", 1);
}

/* conv_igemm_wgmma on conv_dgrad (conv_dgrad.h: one GEMM per stride phase of dx), forced: odd N*H*W (partial
 * 128-row tiles), dx channels C = 8, 24, 136 (the GEMM's K: the 64-wide tile with a tail) and dy channels K = 8,
 * 24, 136 (the GEMM's reduction ending inside a 64-deep slice), 1x1 / 3x3 / 5x5 / 5x4, asymmetric pads, dilation
 * 2, stride 1, 2, 3 and 2x3 (phases with different tap counts, phases no tap reaches: launched, or folded into a
 * GEMM's store where on its lattice), 1-D, f16 and bf16; split-K forced and left to the heuristic (a 7x7 map:
 * it must split); a large dgrad the cost model must give it unforced.  Detail checks: the folded zero phases. */
static void conv_wgmma_dgrad_cases(void)
{
    static const char *const dts[] = {"f16", "bf16"};
    struct { const char *name; win_cfg w; int splitk; const char *detail; } cfgs[] = {
        {"wgd-c8-k8-1x1-odd", cfg(2, 3, 8, 8, 1, (int[]){13, 11}, (int[]){1, 1}, NULL, NULL, NULL, NULL, false), 0,
         NULL},
        {"wgd-c24-k136-3x3-asym", cfg(2, 2, 24, 136, 1, (int[]){9, 11}, (int[]){3, 3}, NULL, NULL, (int[]){1, 0},
                                      (int[]){2, 1}, false), 0, NULL},
        {"wgd-c136-k24-5x5-dil2", cfg(2, 1, 136, 24, 1, (int[]){12, 13}, (int[]){5, 5}, NULL, (int[]){2, 2},
                                      (int[]){4, 3}, (int[]){4, 5}, false), 0, NULL},
        {"wgd-c64-k64-3x3-s2", cfg(2, 2, 64, 64, 1, (int[]){15, 13}, (int[]){3, 3}, (int[]){2, 2}, NULL,
                                   (int[]){1, 1}, (int[]){1, 1}, false), 0, "(0 zero"},
        {"wgd-c24-k40-1x1-s2-fold", cfg(2, 2, 24, 40, 1, (int[]){14, 12}, (int[]){1, 1}, (int[]){2, 2}, NULL, NULL,
                                        NULL, false), 0, "(3 zero, 3 of them in a GEMM's store)"},
        {"wgd-c8-k24-1x1-s2-odd", cfg(2, 3, 8, 24, 1, (int[]){13, 12}, (int[]){1, 1}, (int[]){2, 2}, NULL, NULL,
                                      NULL, false), 0, "(3 zero, 1 of them in a GEMM's store)"},
        {"wgd-c16-k8-5x4-s2x3", cfg(2, 1, 16, 8, 1, (int[]){19, 23}, (int[]){5, 4}, (int[]){2, 3}, NULL,
                                    (int[]){2, 1}, (int[]){1, 2}, false), 0, NULL},
        {"wgd-c40-k24-3x3-s2-dil2", cfg(2, 2, 40, 24, 1, (int[]){15, 14}, (int[]){3, 3}, (int[]){2, 2}, (int[]){2, 2},
                                        (int[]){2, 2}, (int[]){2, 1}, false), 0, NULL},
        {"wgd-c24-k16-3x3-s3", cfg(2, 2, 24, 16, 1, (int[]){17, 16}, (int[]){3, 3}, (int[]){3, 3}, NULL,
                                   (int[]){1, 0}, (int[]){0, 1}, false), 0, NULL},
        {"wgd-1d-c24-k16-s2-dil2", cfg(1, 2, 24, 16, 1, (int[]){37}, (int[]){5}, (int[]){2}, (int[]){2}, (int[]){3},
                                       (int[]){1}, false), 0, NULL},
        {"wgd-1d-c8-k8-same", cfg(1, 1, 8, 8, 1, (int[]){50}, (int[]){3}, NULL, NULL, NULL, NULL, true), 0, NULL},
        {"wgd-sk3-c136-k64-3x3", cfg(2, 2, 136, 64, 1, (int[]){9, 11}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                     (int[]){1, 1}, false), 3, "split-K 3"},
        {"wgd-sk2-c24-k48-3x3-s2", cfg(2, 2, 24, 48, 1, (int[]){13, 12}, (int[]){3, 3}, (int[]){2, 2}, NULL,
                                       (int[]){1, 1}, (int[]){1, 0}, false), 2, "split-K 2"},
        {"wgd-skauto-c128-k512-7x7", cfg(2, 2, 128, 512, 1, (int[]){7, 7}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                         (int[]){1, 1}, false), 0, "split-K"},
    };
    for (int ci = 0; ci < (int)(sizeof cfgs / sizeof cfgs[0]); ci++)
        for (int ti = 0; ti < 2; ti++) {
            if (opts.quick && ti != ci % 2)
                continue;
            conv_case_forced(cfgs[ci].name, &cfgs[ci].w, dts[ti], true, 1, false, "conv_igemm_wgmma", 1);
            tcase *c = &cases[ncases - 1];
            c->splitk = cfgs[ci].splitk;
            c->want_detail = cfgs[ci].detail;
        }
    /* large enough for the cost model to choose it over conv_igemm on a 9.0 device */
    win_cfg big = cfg(2, 2, 64, 64, 1, (int[]){56, 56}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1}, (int[]){1, 1},
                      false);
    conv_case("wgd-auto-c64-k64-56x56", &big, "bf16", true, 1, false, "conv_igemm_wgmma", 1);
    /* dx stored by the kernel's element path: an f32 dx (the folded zeros too; the f32 sum of 40 products: the
     * f32-conv tolerance, 10x, as the epilogue cases) and an NCHW dx (offsets of one element: zero launches) */
    static const struct { const char *id, *dx, *lay, *detail; } elem[] = {
        {"conv/dgrad/wgd-f32dx-1x1-s2-fold/f16/nhwc/2d", "f32", "nhwc", "3 of them in a GEMM's store"},
        {"conv/dgrad/wgd-nchw-dx-1x1-s2/f16/nhwc/2d", "f16", "nchw", "0 of them in a GEMM's store"},
    };
    for (int i = 0; i < 2; i++) {
        tcase *c = add_case(elem[i].id, strcmp(elem[i].dx, "f32") ? 1 : 10, "conv_igemm_wgmma",
                            "dnn 1;\ngraph g(seed=%d) {\n  input dy: f16[2, 40, 7, 6] @nhwc;\n"
                            "  weight w: f16[40, 24, 1, 1] @nhwc;\n"
                            "  dx = conv_dgrad(dy, w, x_dims=[2, 24, 14, 12], stride=2);\n  output dx: %s @%s;\n}\n",
                            ncases * 3 + 5, elem[i].dx, elem[i].lay);
        if (c) {
            c->force = "conv_dgrad";
            c->want_detail = elem[i].detail;
        }
    }
}

/* One "conv/dgrad+relu_bwd/NAME/DT/nhwc/2d" case: dx = relu_bwd(conv_dgrad(dy, w), a) with a = floor(2 m) (m
 * uniform in [-1, 1): zeros, negatives and positives) and relu_bwd's extra arguments args; second: d is an output
 * too (then it must not fuse). */
static tcase *dgrad_relu_case(const char *name, const char *dt, const win_cfg *w, const char *args, const char *want,
                              bool second)
{
    conv_text ct;
    conv_strs(w, &ct);
    char id[192];
    const char *l = layout_tag(w->nsp, true); /* nhwc; ndhwc for the 3-D case */
    snprintf(id, sizeof id, "conv/dgrad+relu_bwd/%s/%s/%s/%dd", name, dt, l, w->nsp);
    return add_case(id, 1, want,
                    "dnn 1;\ngraph g(seed=%d) {\n  input dy: %s%s @%s;\n  weight w: %s%s @%s;\n"
                    "  input m: %s%s @%s;\n  a: @%s = floor(m * 2.0);\n"
                    "  d: @%s = conv_dgrad(dy, w, x_dims=%s, %s);\n  dx: @%s = relu_bwd(d, a%s);\n"
                    "  output dx: %s @%s;\n%s%s%s}\n",
                    ncases * 5 + 3, dt, ct.ys, l, dt, ct.ws, l, dt, ct.xs, l, l, l, ct.xs, ct.attrs, l, args, dt, l,
                    second ? "  output d: @" : "", second ? l : "", second ? ";\n" : "");
}

/* conv_dgrad + the relu_bwd that alone reads its dx, fused (partition.c
 * fuse_dgrad_masks; conv_epi.h): dx = relu_bwd(conv_dgrad(dy, w), a), the
 * mask a read at dx's coordinates in the dgrad's store.  a = floor(2 m), m
 * uniform in [-1, 1): zeros, negatives and positives (ResNet's mask is a relu
 * output: zeros and positives).  Forced on conv_igemm_wgmma (odd N*H*W,
 * C / K 8, 24, 136, 3x3 and 1x1, stride 1, stride 2 with its phases: zero
 * phases launched and folded into a GEMM's store, where the mask must leave
 * the zeros; split-K, where the reduction kernel applies it), on conv_igemm
 * and on conv_direct, f16 and bf16; a leaky / clipped relu_bwd (the slope
 * branch); each must plan as two partitions (the mask's floor, the fused
 * dgrad, its detail naming the epilogue).  A dx also read elsewhere (an
 * output) must not fuse (the relu_bwd joins the floor's partition). */
static void conv_dgrad_epi_cases(void)
{
    static const char *const dts[] = {"f16", "bf16"};
    struct { const char *name, *want; win_cfg w; int splitk; const char *args, *detail; } cfgs[] = {
        {"dge-c24-k136-3x3", "conv_igemm_wgmma", cfg(2, 2, 24, 136, 1, (int[]){9, 11}, (int[]){3, 3}, NULL, NULL,
                                                     (int[]){1, 1}, (int[]){1, 1}, false), 0, "", NULL},
        {"dge-c136-k24-3x3-s2", "conv_igemm_wgmma", cfg(2, 1, 136, 24, 1, (int[]){13, 11}, (int[]){3, 3},
                                                        (int[]){2, 2}, NULL, (int[]){1, 1}, (int[]){1, 1}, false),
         0, "", "(0 zero"},
        {"dge-c8-k8-1x1-odd", "conv_igemm_wgmma", cfg(2, 3, 8, 8, 1, (int[]){13, 11}, (int[]){1, 1}, NULL, NULL,
                                                      NULL, NULL, false), 0, "", NULL},
        {"dge-c24-k40-1x1-s2-fold", "conv_igemm_wgmma", cfg(2, 2, 24, 40, 1, (int[]){14, 12}, (int[]){1, 1},
                                                            (int[]){2, 2}, NULL, NULL, NULL, false),
         0, "", "(3 zero, 3 of them in a GEMM's store)"},
        {"dge-c8-k24-1x1-s2-odd", "conv_igemm_wgmma", cfg(2, 3, 8, 24, 1, (int[]){13, 12}, (int[]){1, 1},
                                                          (int[]){2, 2}, NULL, NULL, NULL, false),
         0, "", "(3 zero, 1 of them in a GEMM's store)"},
        {"dge-sk2-c24-k48-3x3-s2", "conv_igemm_wgmma", cfg(2, 2, 24, 48, 1, (int[]){13, 12}, (int[]){3, 3},
                                                           (int[]){2, 2}, NULL, (int[]){1, 1}, (int[]){1, 0},
                                                           false), 2, "", "split-K 2"},
        {"dge-leaky-clip-c24-k24-3x3-s2", "conv_igemm_wgmma", cfg(2, 1, 24, 24, 1, (int[]){11, 9}, (int[]){3, 3},
                                                                  (int[]){2, 2}, NULL, (int[]){1, 1},
                                                                  (int[]){1, 1}, false),
         0, ", slope=0.125, upper=0.5", NULL},
        {"dge-igemm-c24-k136-3x3", "conv_igemm", cfg(2, 2, 24, 136, 1, (int[]){9, 11}, (int[]){3, 3}, NULL, NULL,
                                                     (int[]){1, 1}, (int[]){1, 1}, false), 0, "", NULL},
        {"dge-igemm-c8-k24-1x1-s2-odd", "conv_igemm", cfg(2, 3, 8, 24, 1, (int[]){13, 12}, (int[]){1, 1},
                                                          (int[]){2, 2}, NULL, NULL, NULL, false), 0, "", NULL},
        {"dge-igemm-sk3-c24-k48-3x3-s2", "conv_igemm", cfg(2, 2, 24, 48, 1, (int[]){13, 12}, (int[]){3, 3},
                                                           (int[]){2, 2}, NULL, (int[]){1, 1}, (int[]){1, 0},
                                                           false), 3, "", "split-K 3"},
        {"dge-direct-c24-k8-3x3-s2", "conv_direct", cfg(2, 2, 24, 8, 1, (int[]){11, 10}, (int[]){3, 3},
                                                        (int[]){2, 2}, NULL, (int[]){1, 1}, (int[]){1, 1}, false),
         0, "", NULL},
    };
    const int ncfg = (int)(sizeof cfgs / sizeof cfgs[0]);
    for (int ci = 0; ci <= ncfg; ci++)
        for (int ti = 0; ti < 2; ti++) {
            if (opts.quick && ti != ci % 2)
                continue;
            const bool second = ci == ncfg; /* dx read twice: d is an output too */
            tcase *c = dgrad_relu_case(second ? "dge-d-read-twice" : cfgs[ci].name, dts[ti],
                                       second ? &cfgs[0].w : &cfgs[ci].w, second ? "" : cfgs[ci].args,
                                       second ? "conv_igemm_wgmma" : cfgs[ci].want, second);
            if (c) {
                c->force = "conv_dgrad";
                c->want_parts = 2;
                c->splitk = second ? 0 : cfgs[ci].splitk;
                c->want_detail = second ? NULL : cfgs[ci].detail;
                c->want_detail2 = second ? NULL : "fused epilogue relu_bwd";
                c->reject_detail = second ? "fused epilogue relu_bwd" : NULL;
            }
        }
}

/* conv_igemm_wgmma's staged store (y through shared-memory rows and one bulk copy per row while the next tile's
 * wgmmas run; kern_conv_wgmma.h), forced, on its 128-wide tiles (K = 248: BN 128 with a 120-column tail; "wide"
 * rows): M tails (M % 128 != 0), maps with more work items than an H100 has SMs (each CTA reuses its staging
 * rows: 170 and 226 items), a dgrad's three zero phases folded into the store (bulk copies of the zero row) and
 * its relu_bwd mask; f16 and bf16; each also with the register store (XDNN_CONV_WGMMA_NO_STAGE=1, "-regs").
 * The 64-wide tiles (K = 24, 40, 136) must take the register store, whose detail lacks "staged" (they ran
 * staged in session 9's first call, all passing: the kernel still holds that path); the register store also
 * runs what the staged one cannot (f32 / NCHW y, split-K: the wgd- and wg-sk cases). */
static void conv_wgmma_stage_cases(void)
{
    static const char *const dts[] = {"f16", "bf16"};
    const char *staged = "y staged in shared memory";
    struct { const char *name; win_cfg w; int dir; bool wide; } cfgs[] = {
        {"wgs-c16-k24-3x3-n4-101x99", cfg(2, 4, 16, 24, 1, (int[]){101, 99}, (int[]){3, 3}, NULL, NULL,
                                          (int[]){1, 1}, (int[]){1, 1}, false), 0, false},
        {"wgs-c24-k136-1x1-odd", cfg(2, 3, 24, 136, 1, (int[]){13, 11}, (int[]){1, 1}, NULL, NULL, NULL, NULL,
                                     false), 0, false},
        {"wgs-c16-k248-1x1-n4-61x59", cfg(2, 4, 16, 248, 1, (int[]){61, 59}, (int[]){1, 1}, NULL, NULL, NULL,
                                          NULL, false), 0, true},
        {"wgs-c8-k248-3x3-n3-61x59", cfg(2, 3, 8, 248, 1, (int[]){61, 59}, (int[]){3, 3}, NULL, NULL,
                                         (int[]){1, 1}, (int[]){1, 1}, false), 0, true},
        {"wgs-c24-k40-1x1-s2-fold-n4", cfg(2, 4, 24, 40, 1, (int[]){202, 198}, (int[]){1, 1}, (int[]){2, 2}, NULL,
                                           NULL, NULL, false), 1, false},
        {"wgs-c248-k16-1x1-s2-fold", cfg(2, 3, 248, 16, 1, (int[]){46, 42}, (int[]){1, 1}, (int[]){2, 2}, NULL,
                                         NULL, NULL, false), 1, true},
        {"wgs-mask-c136-k64-1x1-n4", cfg(2, 4, 136, 64, 1, (int[]){50, 51}, (int[]){1, 1}, NULL, NULL, NULL, NULL,
                                         false), 2, false},
        {"wgs-mask-c248-k24-1x1-n3", cfg(2, 3, 248, 24, 1, (int[]){45, 41}, (int[]){1, 1}, NULL, NULL, NULL, NULL,
                                         false), 2, true},
        {"wgs-mask-c248-k40-3x3-s2", cfg(2, 3, 248, 40, 1, (int[]){29, 27}, (int[]){3, 3}, (int[]){2, 2}, NULL,
                                         (int[]){1, 1}, (int[]){1, 1}, false), 2, true},
    };
    for (int ci = 0; ci < (int)(sizeof cfgs / sizeof cfgs[0]); ci++)
        for (int ti = 0; ti < 3; ti++) { /* f16, bf16, then the register store in f16 */
            if (opts.quick && ti != ci % 2)
                continue;
            const char *dt = dts[ti % 2 ? 1 : 0];
            char name[96];
            snprintf(name, sizeof name, "%s%s", cfgs[ci].name, ti == 2 ? "-regs" : "");
            tcase *c;
            if (cfgs[ci].dir < 2) {
                conv_case_forced(name, &cfgs[ci].w, dt, true, cfgs[ci].dir, false, "conv_igemm_wgmma", 1);
                c = &cases[ncases - 1];
            } else if ((c = dgrad_relu_case(name, dt, &cfgs[ci].w, "", "conv_igemm_wgmma", false))) {
                c->force = "conv_dgrad";
                c->want_parts = 2;
                c->want_detail2 = "fused epilogue relu_bwd";
            }
            if (!c)
                continue;
            c->regs = ti == 2;
            c->want_detail = ti < 2 && cfgs[ci].wide ? staged : NULL;
            c->reject_detail = ti < 2 && cfgs[ci].wide ? NULL : staged;
        }
}

/* conv_im2col_gemm (C < 8: the im2col packed per filter row + cuBLASLt), fwd
 * and wgrad, f16 and bf16, forced: the ResNet stem at N = 1 and on an odd
 * 61x57 map (M = 2697), C = 1, 4, 5, 7, a 5x5 stride-2 asymmetric pad, a W
 * dilation (the element gather), stride 3, 1-D, and the chunking with tiny
 * chunks (M = 3 x 19 x 18 = 1026 in chunks of 288 rows = 16 output rows, 4
 * wgrad items of 72: 3 full chunks, then a last one of 162 rows = two whole
 * items + 18 remainder rows; fwd: 4 GEMMs). */
static void conv_im2col_cases(void)
{
    static const char *const dts[] = {"f16", "bf16"};
    struct { const char *name; win_cfg w; int rows, split; } cfgs[] = {
        {"im2c-stem-n1", cfg(2, 1, 3, 64, 1, (int[]){224, 224}, (int[]){7, 7}, (int[]){2, 2}, NULL, (int[]){3, 3},
                             (int[]){3, 3}, false), 0, 0},
        {"im2c-stem-n3-61x57", cfg(2, 3, 3, 64, 1, (int[]){61, 57}, (int[]){7, 7}, (int[]){2, 2}, NULL,
                                   (int[]){3, 3}, (int[]){3, 3}, false), 0, 0},
        {"im2c-c1-k16-3x3-37x29", cfg(2, 2, 1, 16, 1, (int[]){37, 29}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                      (int[]){1, 1}, false), 0, 0},
        {"im2c-c4-k24-5x5-s2-asym", cfg(2, 3, 4, 24, 1, (int[]){19, 23}, (int[]){5, 5}, (int[]){2, 2}, NULL,
                                        (int[]){2, 1}, (int[]){1, 2}, false), 0, 0},
        {"im2c-c5-k8-3x3-dil2", cfg(2, 2, 5, 8, 1, (int[]){15, 13}, (int[]){3, 3}, NULL, (int[]){2, 2},
                                    (int[]){2, 2}, (int[]){1, 2}, false), 0, 0},
        {"im2c-c7-k8-3x3-s3", cfg(2, 2, 7, 8, 1, (int[]){20, 17}, (int[]){3, 3}, (int[]){3, 3}, NULL,
                                  (int[]){1, 0}, (int[]){0, 1}, false), 0, 0},
        {"im2c-1d-c3-k16-s2", cfg(1, 2, 3, 16, 1, (int[]){41}, (int[]){7}, (int[]){2}, NULL, (int[]){3}, (int[]){3},
                                  false), 0, 0},
        {"im2c-chunks-c3-k32", cfg(2, 3, 3, 32, 1, (int[]){38, 36}, (int[]){7, 7}, (int[]){2, 2}, NULL,
                                   (int[]){3, 3}, (int[]){3, 3}, false), 288, 4},
    };
    for (int ci = 0; ci < (int)(sizeof cfgs / sizeof cfgs[0]); ci++)
        for (int ti = 0; ti < 2; ti++)
            for (int dir = 0; dir < 3; dir += 2) {
                if (opts.quick && (ti != ci % 2 || ci == 0))
                    continue;
                conv_case_forced(cfgs[ci].name, &cfgs[ci].w, dts[ti], true, dir, false, "conv_im2col_gemm", 1);
                cases[ncases - 1].im2col_rows = cfgs[ci].rows;
                cases[ncases - 1].im2col_split = cfgs[ci].split;
                cases[ncases - 1].want_detail = cfgs[ci].rows ? "4 chunk(s) of 288" : "per-row im2col";
            }
    /* x (and w) NCHW, y NHWC: the im2col's element gather through x's strides, w repacked from KCRS */
    for (int ti = 0; ti < 2; ti++) {
        char id[128];
        snprintf(id, sizeof id, "conv/fwd/im2c-x-nchw-c3-k16-3x3/%s/nchw-nhwc/2d/[2,3,14,11]", dts[ti]);
        tcase *c = add_case(id, 1, "conv_im2col_gemm",
                            "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[2, 3, 14, 11] @nchw;\n"
                            "  weight w: %s[16, 3, 3, 3] @nchw;\n  y = conv(x, w, stride=[1, 2], pad=1);\n"
                            "  output y: %s @nhwc;\n}\n",
                            ncases * 7 + 1, dts[ti], dts[ti], dts[ti]);
        if (c)
            c->force = "conv";
    }
}

/* conv_im2col_gemm's 1x1 weight gradient (C % 8 == 0), forced, NHWC, f16
 * and bf16: x read in place at stride 1 and subsampled at strides 2 and 3
 * (odd maps, N*P*Q from 60 to 390, C and K of 8, 24, 136 and 256, 1-D); the
 * batch split forced (M = 3 x 19 x 18 = 1026: 2 items of 384 rows + 258
 * remainder rows into 3 f32 partials); chunks forced (300 rows -> 512 = 2
 * items of 256; M = 900: a full chunk, then an item and 132 remainder rows);
 * dw of another dtype (f32 written by the GEMM itself; bf16 from f16 and f16
 * from bf16 through the f32 partial); and the refusals (a pad, a 3x3 window,
 * an NCHW x). */
static void conv_wgrad_1x1_dw_case(const char *dt, const char *dwdt, const char *detail)
{
    char id[160];
    snprintf(id, sizeof id, "conv/wgrad/w1x1-dw-%s-c24-k16-11x9/%s/nhwc/2d/[2,24,11,9]", dwdt, dt);
    tcase *c = add_case(id, 1, "conv_im2col_gemm",
                        "dnn 1;\ngraph g(seed=%d) {\n  input dy: %s[2, 16, 11, 9] @nhwc;\n"
                        "  input x: %s[2, 24, 11, 9] @nhwc;\n  dw = conv_wgrad(dy, x, w_dims=[16, 24, 1, 1]);\n"
                        "  output dw: %s @nhwc;\n}\n",
                        ncases * 7 + 1, dt, dt, dwdt);
    if (c) {
        c->force = "conv_wgrad";
        c->want_detail = detail;
        c->want_parts = 1;
    }
}

static void conv_wgrad_1x1_cases(void)
{
    static const char *const dts[] = {"f16", "bf16"};
    static const char inplace[] = "x read in place", sub[] = "x subsampled at stride ";
    struct { const char *name; win_cfg w; int rows, split; const char *detail, *detail2; } cfgs[] = {
        {"w1x1-c8-k8-7x9", cfg(2, 3, 8, 8, 1, (int[]){7, 9}, (int[]){1, 1}, NULL, NULL, NULL, NULL, false), 0, 0,
         inplace, "dw written by the GEMM"},
        {"w1x1-c24-k136-13x11", cfg(2, 1, 24, 136, 1, (int[]){13, 11}, (int[]){1, 1}, NULL, NULL, NULL, NULL, false),
         0, 0, inplace, "dw written by the GEMM"},
        {"w1x1-c256-k256-15x13", cfg(2, 2, 256, 256, 1, (int[]){15, 13}, (int[]){1, 1}, NULL, NULL, NULL, NULL,
                                     false), 0, 0, inplace, "dw written by the GEMM"},
        {"w1x1-c136-k24-s2-9x11", cfg(2, 2, 136, 24, 1, (int[]){9, 11}, (int[]){1, 1}, (int[]){2, 2}, NULL, NULL,
                                      NULL, false), 0, 0, sub, "dw written by the GEMM"},
        {"w1x1-c256-k8-s2-13x11", cfg(2, 3, 256, 8, 1, (int[]){13, 11}, (int[]){1, 1}, (int[]){2, 2}, NULL, NULL,
                                      NULL, false), 0, 0, sub, "1 chunk(s) of 126 pixels"},
        {"w1x1-c8-k24-s3-10x10", cfg(2, 2, 8, 24, 1, (int[]){10, 10}, (int[]){1, 1}, (int[]){3, 3}, NULL, NULL,
                                     NULL, false), 0, 0, "x subsampled at stride 3x3", NULL},
        {"w1x1-1d-c16-k8-s2", cfg(1, 2, 16, 8, 1, (int[]){37}, (int[]){1}, (int[]){2}, NULL, NULL, NULL, false), 0,
         0, "x subsampled at stride 1x2", NULL},
        {"w1x1-split3-c24-k136", cfg(2, 3, 24, 136, 1, (int[]){19, 18}, (int[]){1, 1}, NULL, NULL, NULL, NULL,
                                     false), 0, 3, inplace, "3 f32 partial(s)"},
        {"w1x1-chunks-c136-k24-s2", cfg(2, 4, 136, 24, 1, (int[]){30, 30}, (int[]){1, 1}, (int[]){2, 2}, NULL, NULL,
                                        NULL, false), 300, 2, "2 chunk(s) of 512 pixels", "2 f32 partial(s)"},
    };
    for (int ci = 0; ci < (int)(sizeof cfgs / sizeof cfgs[0]); ci++)
        for (int ti = 0; ti < 2; ti++) {
            if (opts.quick && ti != ci % 2)
                continue;
            conv_case_forced(cfgs[ci].name, &cfgs[ci].w, dts[ti], true, 2, false, "conv_im2col_gemm", 1);
            tcase *c = &cases[ncases - 1];
            c->im2col_rows = cfgs[ci].rows;
            c->im2col_split = cfgs[ci].split;
            c->want_detail = cfgs[ci].detail;
            c->want_detail2 = cfgs[ci].detail2;
        }
    conv_wgrad_1x1_dw_case("f16", "f32", "dw written by the GEMM");
    conv_wgrad_1x1_dw_case("bf16", "f32", "dw written by the GEMM");
    conv_wgrad_1x1_dw_case("f16", "bf16", "1 f32 partial(s)");
    conv_wgrad_1x1_dw_case("bf16", "f16", "1 f32 partial(s)");
    struct { const char *name; win_cfg w; bool chlast; const char *why; } no[] = {
        {"w1x1-refused-pad1", cfg(2, 2, 16, 16, 1, (int[]){9, 9}, (int[]){1, 1}, NULL, NULL, (int[]){1, 1},
                                  (int[]){1, 1}, false), true, "without pad, got pad=[1, 1]"},
        {"w1x1-refused-3x3", cfg(2, 2, 16, 16, 1, (int[]){9, 9}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                 (int[]){1, 1}, false), true, "for a 1x1 window only"},
        {"w1x1-refused-nchw", cfg(2, 2, 16, 16, 1, (int[]){9, 9}, (int[]){1, 1}, NULL, NULL, NULL, NULL, false),
         false, "packed channels-last"},
    };
    for (int i = 0; i < (int)(sizeof no / sizeof no[0]); i++) {
        conv_case_forced(no[i].name, &no[i].w, "bf16", no[i].chlast, 2, false, "conv_im2col_gemm", 1);
        cases[ncases - 1].refuse = no[i].why;
    }
}

/* conv_im2col_gemm's 1x1 forward conv and conv_dgrad (C % 8 == 0) as one GEMM, forced, NHWC, f16 and bf16:
 * odd maps (N*P*Q 60 .. 390, not multiples of any tile), C and K of 8, 24, 40, 64, 136 and 256 (ResNet's
 * 64 <-> 256 among them), 1-D; the forward at strides 2 and 3 (x subsampled into A) and in forced chunks
 * (M = 4 x 15 x 15 = 900 in chunks of 300 -> 384 rows: 2 full + 132); w read in place; and the refusals (a pad, a 3x3 window, C % 8, an NCHW y, a strided dgrad). */
static void conv_fd_1x1_cases(void)
{
    static const char *const dts[] = {"f16", "bf16"};
    static const char wdirect[] = "w read in place";
    struct { const char *name; win_cfg w; bool dgrad; int rows; const char *detail, *detail2; } cfgs[] = {
        {"fd1x1-c8-k8-7x9", cfg(2, 3, 8, 8, 1, (int[]){7, 9}, (int[]){1, 1}, NULL, NULL, NULL, NULL, false), true,
         0, "read in place", wdirect},
        {"fd1x1-c24-k136-13x11", cfg(2, 1, 24, 136, 1, (int[]){13, 11}, (int[]){1, 1}, NULL, NULL, NULL, NULL,
                                     false), true, 0, "in place", wdirect},
        {"fd1x1-c136-k24-5x7", cfg(2, 2, 136, 24, 1, (int[]){5, 7}, (int[]){1, 1}, NULL, NULL, NULL, NULL, false),
         true, 0, "in place", wdirect},
        {"fd1x1-c64-k256-15x13", cfg(2, 2, 64, 256, 1, (int[]){15, 13}, (int[]){1, 1}, NULL, NULL, NULL, NULL,
                                     false), true, 0, "in place", wdirect},
        {"fd1x1-c256-k64-11x9", cfg(2, 3, 256, 64, 1, (int[]){11, 9}, (int[]){1, 1}, NULL, NULL, NULL, NULL, false),
         true, 0, "in place", wdirect},
        {"fd1x1-1d-c16-k40", cfg(1, 3, 16, 40, 1, (int[]){37}, (int[]){1}, NULL, NULL, NULL, NULL, false), true, 0,
         "in place", wdirect},
        {"fd1x1-c136-k24-s2-9x11", cfg(2, 2, 136, 24, 1, (int[]){9, 11}, (int[]){1, 1}, (int[]){2, 2}, NULL, NULL,
                                       NULL, false), false, 0, "x subsampled at stride 2x2", wdirect},
        {"fd1x1-c24-k40-s3-10x10", cfg(2, 2, 24, 40, 1, (int[]){10, 10}, (int[]){1, 1}, (int[]){3, 3}, NULL, NULL,
                                       NULL, false), false, 0, "x subsampled at stride 3x3", wdirect},
        {"fd1x1-1d-c16-k8-s2", cfg(1, 2, 16, 8, 1, (int[]){37}, (int[]){1}, (int[]){2}, NULL, NULL, NULL, false),
         false, 0, "x subsampled at stride 1x2", wdirect},
        {"fd1x1-chunks-c136-k24-s2", cfg(2, 4, 136, 24, 1, (int[]){30, 30}, (int[]){1, 1}, (int[]){2, 2}, NULL,
                                         NULL, NULL, false), false, 300, "3 chunk(s) of 384 pixels", wdirect},
    };
    for (int ci = 0; ci < (int)(sizeof cfgs / sizeof cfgs[0]); ci++)
        for (int ti = 0; ti < 2; ti++)
            for (int dir = 0; dir <= (cfgs[ci].dgrad ? 1 : 0); dir++) {
                if (opts.quick && ti != (ci + dir) % 2)
                    continue;
                conv_case_forced(cfgs[ci].name, &cfgs[ci].w, dts[ti], true, dir, false, "conv_im2col_gemm", 1);
                tcase *c = &cases[ncases - 1];
                c->im2col_rows = cfgs[ci].rows;
                c->want_detail = dir ? "1x1 dgrad: dx = dy . W" : cfgs[ci].detail;
                c->want_detail2 = cfgs[ci].detail2;
            }
    struct { const char *name; win_cfg w; bool chlast; int dir; const char *why; } no[] = {
        {"fd1x1-refused-pad1", cfg(2, 2, 16, 16, 1, (int[]){9, 9}, (int[]){1, 1}, NULL, NULL, (int[]){1, 1},
                                   (int[]){1, 1}, false), true, 0, "without pad, got pad=[1, 1]"},
        {"fd1x1-refused-3x3", cfg(2, 2, 16, 16, 1, (int[]){9, 9}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                  (int[]){1, 1}, false), true, 1, "for a 1x1 window only"},
        {"fd1x1-refused-c12", cfg(2, 2, 12, 16, 1, (int[]){9, 9}, (int[]){1, 1}, NULL, NULL, NULL, NULL, false),
         true, 1, "C % 8 == 0 for a 1x1 conv_dgrad"},
        {"fd1x1-refused-nchw", cfg(2, 2, 16, 16, 1, (int[]){9, 9}, (int[]){1, 1}, NULL, NULL, NULL, NULL, false),
         false, 0, "packed channels-last"},
        {"fd1x1-refused-dgrad-s2", cfg(2, 2, 16, 16, 1, (int[]){9, 9}, (int[]){1, 1}, (int[]){2, 2}, NULL, NULL,
                                       NULL, false), true, 1, "conv_dgrad at stride 1 only"},
    };
    for (int i = 0; i < (int)(sizeof no / sizeof no[0]); i++) {
        conv_case_forced(no[i].name, &no[i].w, "bf16", no[i].chlast, no[i].dir, false, "conv_im2col_gemm", 1);
        cases[ncases - 1].refuse = no[i].why;
    }
}

/* ---- benchmarks: torch_baseline.py's ResNet-50 layers (N, C, H, W, K, R, stride, pad) */
static const int r50[][8] = {{32, 64, 56, 56, 64, 1, 1, 0},   {32, 64, 56, 56, 64, 3, 1, 1},
                             {32, 64, 56, 56, 256, 1, 1, 0},  {32, 256, 56, 56, 64, 1, 1, 0},
                             {32, 128, 28, 28, 128, 3, 1, 1}, {32, 256, 14, 14, 256, 3, 1, 1},
                             {32, 512, 7, 7, 512, 3, 1, 1},   {32, 3, 224, 224, 64, 7, 2, 3},
                             {32, 256, 56, 56, 512, 1, 2, 0}, {32, 1024, 14, 14, 256, 1, 1, 0}};

/* One "conv_dgrad_f16_nhwc[_ENGINE] nNcChHkKrR" bench case of layer s (r50's row layout); forced: the engine
 * that must run it ("conv_igemm" gives the suffix _igemm, "conv_igemm_wgmma" _wgmma), NULL: the cost model's. */
static void dgrad_bench_case(const int *s, const char *forced)
{
    const int P = (s[2] + 2 * s[7] - s[5]) / s[6] + 1;
    char id[192];
    snprintf(id, sizeof id, "conv_dgrad_f16_nhwc%s n%dc%dh%dk%dr%d",
             !forced ? "" : strcmp(forced, "conv_igemm") == 0 ? "_igemm" : "_wgmma", s[0], s[1], s[2], s[4], s[5]);
    tcase *c = add_case(id, 1, forced,
                        "dnn 1;\ngraph g(seed=2) {\n  input dy: f16[%d, %d, %d, %d] @nhwc;\n"
                        "  weight w: f16[%d, %d, %d, %d] @nhwc;\n"
                        "  dx = conv_dgrad(dy, w, x_dims=[%d, %d, %d, %d], stride=%d, pad=%d);\n"
                        "  output dx: f16 @nhwc;\n}\n",
                        s[0], s[4], P, P, s[4], s[1], s[5], s[5], s[0], s[1], s[2], s[3], s[6], s[7]);
    if (c && forced)
        c->force = "conv_dgrad";
}

/* The 15 distinct 1x1 weight gradients of ResNet-50 at N = 256, bf16 NHWC (C, H, K, stride; set "w1x1" of
 * bench/conv_peer.py times cuDNN's and torch.mm's on the same shapes): as the planner places them
 * ("conv_wgrad1x1_bf16_nhwc", for --dry), forced on conv_im2col_gemm ("_im2col") and on conv_wgrad_mma
 * ("_mma") and on conv_wgrad_wgmma ("_wgmma", session 9), and the 56x56 stride-1 ones (the smallest outputs:
 * 64 x 64 .. 128 x 256) on conv_im2col_gemm with 8 batch items instead of cuBLASLt's own split-K alone
 * ("_split8"). */
static const int r50_1x1[][4] = {{64, 56, 64, 1},    {64, 56, 256, 1},   {256, 56, 64, 1},   {256, 56, 128, 1},
                                 {128, 28, 512, 1},  {256, 56, 512, 2},  {512, 28, 128, 1},  {512, 28, 256, 1},
                                 {256, 14, 1024, 1}, {512, 28, 1024, 2}, {1024, 14, 256, 1}, {1024, 14, 512, 1},
                                 {512, 7, 2048, 1},  {1024, 14, 2048, 2}, {2048, 7, 512, 1}};

static void wgrad_1x1_bench_cases(void)
{
    static const struct { const char *suffix, *engine; int split; } kinds[] = {
        {"", NULL, 0}, {"_im2col", "conv_im2col_gemm", 0}, {"_mma", "conv_wgrad_mma", 0},
        {"_split8", "conv_im2col_gemm", 8}, {"_wgmma", "conv_wgrad_wgmma", 0}};
    for (int k = 0; k < 5; k++)
        for (size_t i = 0; i < sizeof r50_1x1 / sizeof r50_1x1[0]; i++) {
            const int C = r50_1x1[i][0], H = r50_1x1[i][1], K = r50_1x1[i][2], st = r50_1x1[i][3], P = H / st;
            if (kinds[k].split && (H != 56 || st != 1))
                continue;
            char id[192];
            snprintf(id, sizeof id, "conv_wgrad1x1_bf16_nhwc%s n256c%dh%dk%ds%d", kinds[k].suffix, C, H, K, st);
            tcase *c = add_case(id, 1, kinds[k].engine,
                                "dnn 1;\ngraph g(seed=3) {\n  input dy: bf16[256, %d, %d, %d] @nhwc;\n"
                                "  input x: bf16[256, %d, %d, %d] @nhwc;\n"
                                "  dw = conv_wgrad(dy, x, w_dims=[%d, %d, 1, 1], stride=%d);\n"
                                "  output dw: bf16 @nhwc;\n}\n",
                                K, P, P, C, H, H, K, C, st);
            if (c && kinds[k].engine) {
                c->force = "conv_wgrad";
                c->im2col_split = kinds[k].split;
            }
        }
}

/* The 3x3 weight gradients of the ResNet-50 step at N = 256, bf16 NHWC (C = K, input H, stride; the count
 * of each in the step: 3, 1, 3, 1, 5, 1, 2), set "w3x3" of bench/conv_peer.py times cuDNN's: as the planner
 * places them ("conv_wgrad3x3_bf16_nhwc"), forced on conv_wgrad_wgmma ("_wgmma") and on conv_wgrad_mma
 * ("_mma", the engine before).  (wgrad_1x1_bench_cases has the 1x1 ones on conv_wgrad_wgmma.) */
static const int r50_3x3[][3] = {{64, 56, 1}, {128, 56, 2}, {128, 28, 1}, {256, 28, 2},
                                 {256, 14, 1}, {512, 14, 2}, {512, 7, 1}};

/* r50_3x3's rows at batch N, the first nk kinds (as planned, "_wgmma", "_mma") */
static void wgrad_3x3_rows(int N, int nk)
{
    static const struct { const char *suffix, *engine; } kinds[] = {
        {"", NULL}, {"_wgmma", "conv_wgrad_wgmma"}, {"_mma", "conv_wgrad_mma"}};
    for (int k = 0; k < nk; k++)
        for (size_t i = 0; i < sizeof r50_3x3 / sizeof r50_3x3[0]; i++) {
            const int C = r50_3x3[i][0], H = r50_3x3[i][1], st = r50_3x3[i][2], P = H / st;
            char id[192];
            snprintf(id, sizeof id, "conv_wgrad3x3_bf16_nhwc%s n%dc%dh%dk%ds%d", kinds[k].suffix, N, C, H, C, st);
            tcase *c = add_case(id, 1, kinds[k].engine,
                                "dnn 1;\ngraph g(seed=3) {\n  input dy: bf16[%d, %d, %d, %d] @nhwc;\n"
                                "  input x: bf16[%d, %d, %d, %d] @nhwc;\n"
                                "  dw = conv_wgrad(dy, x, w_dims=[%d, %d, 3, 3], stride=%d, pad=1);\n"
                                "  output dw: bf16 @nhwc;\n}\n",
                                N, C, P, P, N, C, H, H, C, C, st);
            if (c && kinds[k].engine)
                c->force = "conv_wgrad";
        }
}

static void wgrad_3x3_bench_cases(void) { wgrad_3x3_rows(256, 3); }

/* The same 3x3 weight gradients at N = 32 (set "w3x3n32" of bench/conv_peer.py): as the planner places them
 * and forced on conv_wgrad_wgmma ("_wgmma"); XDNN_WGRAD_TILE / XDNN_WGRAD_X_NO_TMA pick its tile and x's loader. */
static void wgrad_3x3_n32_bench_cases(void) { wgrad_3x3_rows(32, 2); }

/* ResNet-50's 1x1 forward convs and conv_dgrads at N = 256, bf16 NHWC, on r50_1x1's shapes (set "fd1x1" of
 * bench/conv_peer.py times cuDNN's and torch.mm's): "conv1x1_{fwd,dgrad}_bf16_nhwc" as the planner places
 * them, "_im2col" forced on conv_im2col_gemm (dgrad at stride 1 only), and the 56x56 stride-1 ones (the
 * session-8 partitions on conv_igemm: C or K = 64) forced on conv_igemm ("_igemm") and conv_igemm_wgmma
 * ("_wgmma"). */
static void fd_1x1_bench_cases(void)
{
    static const struct { const char *suffix, *engine; } kinds[] = {
        {"", NULL}, {"_im2col", "conv_im2col_gemm"}, {"_igemm", "conv_igemm"}, {"_wgmma", "conv_igemm_wgmma"}};
    for (int k = 0; k < 4; k++)
        for (int dir = 0; dir < 2; dir++)
            for (size_t i = 0; i < sizeof r50_1x1 / sizeof r50_1x1[0]; i++) {
                const int C = r50_1x1[i][0], H = r50_1x1[i][1], K = r50_1x1[i][2], st = r50_1x1[i][3], P = H / st;
                if ((dir == 1 && st != 1) || (k >= 2 && (H != 56 || st != 1)))
                    continue;
                char id[192];
                snprintf(id, sizeof id, "conv1x1_%s_bf16_nhwc%s n256c%dh%dk%ds%d", dir ? "dgrad" : "fwd",
                         kinds[k].suffix, C, H, K, st);
                tcase *c = dir == 0 ? add_case(id, 1, kinds[k].engine,
                                               "dnn 1;\ngraph g(seed=1) {\n  input x: bf16[256, %d, %d, %d] @nhwc;\n"
                                               "  weight w: bf16[%d, %d, 1, 1] @nhwc;\n  y = conv(x, w, stride=%d);\n"
                                               "  output y: bf16 @nhwc;\n}\n",
                                               C, H, H, K, C, st)
                                    : add_case(id, 1, kinds[k].engine,
                                               "dnn 1;\ngraph g(seed=2) {\n  input dy: bf16[256, %d, %d, %d] @nhwc;\n"
                                               "  weight w: bf16[%d, %d, 1, 1] @nhwc;\n"
                                               "  dx = conv_dgrad(dy, w, x_dims=[256, %d, %d, %d]);\n"
                                               "  output dx: bf16 @nhwc;\n}\n",
                                               K, P, P, K, C, C, H, H);
                if (c && kinds[k].engine)
                    c->force = dir ? "conv_dgrad" : "conv";
            }
}

/* The issue's other conv families at real sizes, bf16 channels-last, fwd / dgrad / wgrad as the planner places
 * them (set "zoo" of bench/conv_peer.py times cuDNN's on the same shapes): 3-D UNet levels (BraTS' 4-channel
 * stem at 128^3, 3x3x3 at 64^3 .. 8^3, a stride-2 downsampling), WaveNet's dilated 1-D convs (kernel 2,
 * dilation 1 / 16 / 256, unpadded) and its 1x1, GoogLeNet-v3's asymmetric 1x7 / 7x1 at 17x17.  Bench id
 * "convzoo_DIR_bf16 TAG"; the time is the whole plan's (layout copies included, when there are any). */
typedef struct zoo_conv {
    const char *tag;
    win_cfg w;
} zoo_conv;

static void zoo_bench_cases(void)
{
    const zoo_conv zoo[] = {
        {"u3d_c4k32d128", cfg(3, 1, 4, 32, 1, (int[]){128, 128, 128}, (int[]){3, 3, 3}, NULL, NULL,
                              (int[]){1, 1, 1}, (int[]){1, 1, 1}, false)},
        {"u3d_c32k32d64", cfg(3, 2, 32, 32, 1, (int[]){64, 64, 64}, (int[]){3, 3, 3}, NULL, NULL, (int[]){1, 1, 1},
                              (int[]){1, 1, 1}, false)},
        {"u3d_c64k64d32", cfg(3, 2, 64, 64, 1, (int[]){32, 32, 32}, (int[]){3, 3, 3}, NULL, NULL, (int[]){1, 1, 1},
                              (int[]){1, 1, 1}, false)},
        {"u3d_c128k128d16", cfg(3, 2, 128, 128, 1, (int[]){16, 16, 16}, (int[]){3, 3, 3}, NULL, NULL,
                                (int[]){1, 1, 1}, (int[]){1, 1, 1}, false)},
        {"u3d_c256k256d8", cfg(3, 2, 256, 256, 1, (int[]){8, 8, 8}, (int[]){3, 3, 3}, NULL, NULL, (int[]){1, 1, 1},
                               (int[]){1, 1, 1}, false)},
        {"u3d_c64k128d32s2", cfg(3, 2, 64, 128, 1, (int[]){32, 32, 32}, (int[]){3, 3, 3}, (int[]){2, 2, 2}, NULL,
                                 (int[]){1, 1, 1}, (int[]){1, 1, 1}, false)},
        {"wn_c64k128l16384d1", cfg(1, 8, 64, 128, 1, (int[]){16384}, (int[]){2}, NULL, (int[]){1}, NULL, NULL, false)},
        {"wn_c64k128l16384d16", cfg(1, 8, 64, 128, 1, (int[]){16384}, (int[]){2}, NULL, (int[]){16}, NULL, NULL,
                                    false)},
        {"wn_c64k128l16384d256", cfg(1, 8, 64, 128, 1, (int[]){16384}, (int[]){2}, NULL, (int[]){256}, NULL, NULL,
                                     false)},
        {"wn_c64k64l16384k1", cfg(1, 8, 64, 64, 1, (int[]){16384}, (int[]){1}, NULL, NULL, NULL, NULL, false)},
        {"g3_c128k128h17r1x7", cfg(2, 32, 128, 128, 1, (int[]){17, 17}, (int[]){1, 7}, NULL, NULL, (int[]){0, 3},
                                   (int[]){0, 3}, false)},
        {"g3_c128k192h17r7x1", cfg(2, 32, 128, 192, 1, (int[]){17, 17}, (int[]){7, 1}, NULL, NULL, (int[]){3, 0},
                                   (int[]){3, 0}, false)},
    };
    static const char *const dirs[] = {"fwd", "dgrad", "wgrad"};
    for (size_t i = 0; i < sizeof zoo / sizeof zoo[0]; i++)
        for (int dir = 0; dir < 3; dir++) {
            conv_case(zoo[i].tag, &zoo[i].w, "bf16", true, dir, false, NULL, 1);
            if (ncases > 0)
                snprintf(cases[ncases - 1].id, sizeof cases[ncases - 1].id, "convzoo_%s_bf16 %s", dirs[dir],
                         zoo[i].tag);
        }
    /* the 3-D wgrads forced on each Hopper-era engine (session 11's A/B: conv_wgrad_wgmma's depth against
     * conv_wgrad_mma, which ran them before): "convzoo_wgrad_bf16_{wgmma,mma} TAG" */
    static const char *const weng[2][2] = {{"wgmma", "conv_wgrad_wgmma"}, {"mma", "conv_wgrad_mma"}};
    for (int e = 0; e < 2; e++)
        for (size_t i = 0; i < sizeof zoo / sizeof zoo[0]; i++) {
            if (zoo[i].w.nsp != 3)
                continue;
            conv_case_forced(zoo[i].tag, &zoo[i].w, "bf16", true, 2, false, weng[e][1], 1);
            if (ncases > 0)
                snprintf(cases[ncases - 1].id, sizeof cases[ncases - 1].id, "convzoo_wgrad_bf16_%s %s", weng[e][0],
                         zoo[i].tag);
        }
    /* the 3-D K = 32 layers' fwd and dgrad (the stem's dx C = 4 too) forced on each implicit-GEMM engine
     * (session 12's A/B: conv_igemm_wgmma's 32-wide tile, with XDNN_CONV_WGMMA_BN32=0 its 64-wide one, against
     * conv_igemm, which ran them before): "convzoo_{fwd,dgrad}_bf16_{wgmma,igemm} TAG" */
    static const char *const feng[2][2] = {{"wgmma", "conv_igemm_wgmma"}, {"igemm", "conv_igemm"}};
    for (int e = 0; e < 2; e++)
        for (size_t i = 0; i < 2; i++) /* u3d_c4k32d128, u3d_c32k32d64 */
            for (int dir = 0; dir < 2; dir++) {
                conv_case_forced(zoo[i].tag, &zoo[i].w, "bf16", true, dir, false, feng[e][1], 1);
                if (ncases > 0)
                    snprintf(cases[ncases - 1].id, sizeof cases[ncases - 1].id, "convzoo_%s_bf16_%s %s", dirs[dir],
                             feng[e][0], zoo[i].tag);
            }
}

/* ResNet-50's conv_igemm_wgmma partitions of the N = 256 training step (bf16 NHWC; set "step256" of
 * bench/conv_peer.py times cuDNN's): the 3x3 forward convs, the 3x3 and 1x1 dgrads fused with their relu_bwd
 * mask (a given), the stride-2 1x1 projection dgrads; "conv_step_{fwd,dgmask,dgrad}_bf16_nhwc nNcChHkKrRsS"
 * (C, H, K, R, stride of the forward conv) as the planner places them, staged store, and "_regs" with the
 * register store (XDNN_CONV_WGMMA_NO_STAGE=1). */
static void step_bench_cases(void)
{
    static const int rows[][6] = { /* kind (0 fwd, 1 dgrad + mask, 2 dgrad), C, H, K, R, stride */
        {0, 64, 56, 64, 3, 1},   {0, 128, 28, 128, 3, 1},  {0, 256, 14, 256, 3, 1},  {0, 512, 7, 512, 3, 1},
        {0, 128, 56, 128, 3, 2}, {0, 256, 28, 256, 3, 2},  {0, 512, 14, 512, 3, 2},  {1, 64, 56, 64, 3, 1},
        {1, 128, 28, 128, 3, 1}, {1, 256, 14, 256, 3, 1},  {1, 512, 7, 512, 3, 1},   {1, 128, 56, 128, 3, 2},
        {1, 256, 28, 256, 3, 2}, {1, 512, 14, 512, 3, 2},  {1, 64, 56, 256, 1, 1},   {1, 128, 28, 512, 1, 1},
        {1, 256, 14, 1024, 1, 1}, {1, 512, 7, 2048, 1, 1}, {2, 256, 56, 512, 1, 2},  {2, 512, 28, 1024, 1, 2},
        {2, 1024, 14, 2048, 1, 2}};
    static const char *const kinds[] = {"fwd", "dgmask", "dgrad"};
    for (int regs = 0; regs < 2; regs++)
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
            const int kd = rows[i][0], C = rows[i][1], H = rows[i][2], K = rows[i][3], R = rows[i][4],
                      st = rows[i][5], pad = R / 2, P = (H + 2 * pad - R) / st + 1;
            char id[192], mask[128] = "", text[768];
            snprintf(id, sizeof id, "conv_step_%s_bf16_nhwc%s n256c%dh%dk%dr%ds%d", kinds[kd], regs ? "_regs" : "",
                     C, H, K, R, st);
            if (kd == 1)
                snprintf(mask, sizeof mask, "  input a: bf16[256, %d, %d, %d] @nhwc;\n", C, H, H);
            if (kd == 0)
                snprintf(text, sizeof text, "  input x: bf16[256, %d, %d, %d] @nhwc;\n  weight w: bf16[%d, %d, %d, %d] "
                         "@nhwc;\n  y = conv(x, w, stride=%d, pad=%d);\n  output y: bf16 @nhwc;\n", C, H, H, K, C, R, R,
                         st, pad);
            else
                snprintf(text, sizeof text, "  input dy: bf16[256, %d, %d, %d] @nhwc;\n  weight w: bf16[%d, %d, %d, %d] "
                         "@nhwc;\n%s  d%s = conv_dgrad(dy, w, x_dims=[256, %d, %d, %d], stride=%d, pad=%d);\n%s"
                         "  output dx: bf16 @nhwc;\n", K, P, P, K, C, R, R, mask, kd == 1 ? ": @nhwc" : "x", C, H, H, st,
                         pad, kd == 1 ? "  dx: @nhwc = relu_bwd(d, a);\n" : "");
            tcase *c = add_case(id, 1, NULL, "dnn 1;\ngraph g(seed=5) {\n%s}\n", text);
            if (c)
                c->regs = regs;
        }
}

/* f32 NCHW on r50's layers (set f32 of bench/conv_peer.py, tf32 off unless named): dgrad (not the stem) and
 * wgrad as planned (conv_f32_gemm), and the forward with tf32 as planned, forced on conv_igemm ("_igemm", its
 * packed channels-last copies) and on conv_f32_gemm ("_f32gemm") */
static void f32_bench_cases(void)
{
    static const char *const fwd_kinds[3][2] = {{"", NULL}, {"_igemm", "conv_igemm"}, {"_f32gemm", "conv_f32_gemm"}};
    for (int i = 0; i < 10; i++) {
        const int *s = r50[i];
        const int P = (s[2] + 2 * s[7] - s[5]) / s[6] + 1;
        char id[192];
        if (s[1] != 3) {
            snprintf(id, sizeof id, "conv_dgrad_f32_nchw n%dc%dh%dk%dr%d", s[0], s[1], s[2], s[4], s[5]);
            add_case(id, 1, NULL,
                     "dnn 1;\ngraph g(seed=2) {\n  input dy: f32[%d, %d, %d, %d];\n  weight w: f32[%d, %d, %d, %d];\n"
                     "  dx = conv_dgrad(dy, w, x_dims=[%d, %d, %d, %d], stride=%d, pad=%d);\n  output dx: f32;\n}\n",
                     s[0], s[4], P, P, s[4], s[1], s[5], s[5], s[0], s[1], s[2], s[3], s[6], s[7]);
        }
        snprintf(id, sizeof id, "conv_wgrad_f32_nchw n%dc%dh%dk%dr%d", s[0], s[1], s[2], s[4], s[5]);
        add_case(id, 1, NULL,
                 "dnn 1;\ngraph g(seed=3) {\n  input dy: f32[%d, %d, %d, %d];\n  input x: f32[%d, %d, %d, %d];\n"
                 "  dw = conv_wgrad(dy, x, w_dims=[%d, %d, %d, %d], stride=%d, pad=%d);\n  output dw: f32;\n}\n",
                 s[0], s[4], P, P, s[0], s[1], s[2], s[3], s[4], s[1], s[5], s[5], s[6], s[7]);
        for (int k = 0; k < 3; k++) {
            snprintf(id, sizeof id, "conv_fwd_f32tf32_nchw%s n%dc%dh%dk%dr%ds%dp%d", fwd_kinds[k][0], s[0], s[1], s[2],
                     s[4], s[5], s[6], s[7]);
            tcase *c = add_case(id, 1, fwd_kinds[k][1],
                                "dnn 1;\ngraph g(seed=1, tf32=true) {\n  input x: f32[%d, %d, %d, %d];\n"
                                "  weight w: f32[%d, %d, %d, %d];\n  y = conv(x, w, stride=%d, pad=%d);\n"
                                "  output y: f32;\n}\n",
                                s[0], s[1], s[2], s[3], s[4], s[1], s[5], s[5], s[6], s[7]);
            if (c && fwd_kinds[k][1])
                c->force = "conv";
        }
    }
}

/* conv_f32_gemm's fused epilogue against the conv alone (issue 11: <= 1.05x) on r50's f32 NCHW layers, tf32
 * off (bench/conv_peer.py f32epi: cuDNN, and cuDNN + eager bias / relu); relu alone (cuBLASLt's RELU, no C:
 * what the broadcast bias C costs) */
static void f32_epi_bench_cases(void)
{
    static const int layers[] = {1, 0, 3, 4, 5, 6};
    static const char *const ex[][2] = {{"none", "conv(x, w, stride=%d, pad=%d)"},
                                        {"bias_relu", "relu(conv(x, w, stride=%d, pad=%d) + b)"},
                                        {"relu", "relu(conv(x, w, stride=%d, pad=%d))"}};
    for (int i = 0; i < (int)(sizeof layers / sizeof layers[0]); i++)
        for (int e = 0; e < 3; e++) {
            const int *s = r50[layers[i]];
            char id[192], expr[128];
            snprintf(id, sizeof id, "convepi_f32_nchw n%dc%dh%dk%dr%ds%dp%d_%s", s[0], s[1], s[2], s[4], s[5], s[6],
                     s[7], ex[e][0]);
            snprintf(expr, sizeof expr, ex[e][1], s[6], s[7]);
            add_case(id, 1, NULL,
                     "dnn 1;\ngraph g(seed=12) {\n  input x: f32[%d, %d, %d, %d];\n  weight w: f32[%d, %d, %d, %d];\n"
                     "  weight b: f32[1, %d, 1, 1];\n  y = %s;\n  output y: f32;\n}\n",
                     s[0], s[1], s[2], s[3], s[4], s[1], s[5], s[5], s[4], expr);
        }
}

static void bench_cases(void)
{
    static const struct { const char *tag, *dt, *lay; } kinds[] = {
        {"f16_nhwc", "f16", "nhwc"}, {"f32_nchw", "f32", "nchw"}, {"bf16_nhwc", "bf16", "nhwc"}};
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < 10; i++) {
            const int *s = r50[i];
            char id[192];
            snprintf(id, sizeof id, "conv_fwd_%s n%dc%dh%dk%dr%ds%dp%d", kinds[k].tag, s[0], s[1], s[2], s[4], s[5],
                     s[6], s[7]);
            add_case(id, 1, NULL,
                     "dnn 1;\ngraph g(seed=1) {\n  input x: %s[%d, %d, %d, %d] @%s;\n"
                     "  weight w: %s[%d, %d, %d, %d] @%s;\n  y = conv(x, w, stride=%d, pad=%d);\n"
                     "  output y: %s @%s;\n}\n",
                     kinds[k].dt, s[0], s[1], s[2], s[3], kinds[k].lay, kinds[k].dt, s[4], s[1], s[5], s[5],
                     kinds[k].lay, s[6], s[7], kinds[k].dt, kinds[k].lay);
        }
    }
    /* conv_igemm forced on the f16 / bf16 layers (the cost model gives them to conv_igemm_wgmma on an H100):
     * the mma.sync engine's time beside the Hopper one's */
    for (int k = 0; k < 3; k += 2)
        for (int i = 0; i < 10; i++) {
            const int *s = r50[i];
            char id[192];
            snprintf(id, sizeof id, "conv_fwd_%s_igemm n%dc%dh%dk%dr%ds%dp%d", kinds[k].tag, s[0], s[1], s[2], s[4],
                     s[5], s[6], s[7]);
            tcase *c = add_case(id, 1, "conv_igemm",
                                "dnn 1;\ngraph g(seed=1) {\n  input x: %s[%d, %d, %d, %d] @nhwc;\n"
                                "  weight w: %s[%d, %d, %d, %d] @nhwc;\n  y = conv(x, w, stride=%d, pad=%d);\n"
                                "  output y: %s @nhwc;\n}\n",
                                kinds[k].dt, s[0], s[1], s[2], s[3], kinds[k].dt, s[4], s[1], s[5], s[5], s[6], s[7],
                                kinds[k].dt);
            if (c)
                c->force = "conv";
        }
    /* the ResNet stem (C = 3, padded copies) at N = 256 as the cost model places it (conv_igemm_wgmma on an
     * H100) and on conv_igemm's packed path; N = 32: r50's row 7 above (set "stem" of bench/conv_peer.py) */
    for (int k = 0; k < 3; k += 2)
        for (int forced = 0; forced < 2; forced++) {
            char id[192];
            snprintf(id, sizeof id, "conv_fwd_%s%s n256c3h224k64r7s2p3", kinds[k].tag, forced ? "_igemm" : "");
            tcase *c = add_case(id, 1, forced ? "conv_igemm" : NULL,
                                "dnn 1;\ngraph g(seed=1) {\n  input x: %s[256, 3, 224, 224] @nhwc;\n"
                                "  weight w: %s[64, 3, 7, 7] @nhwc;\n  y = conv(x, w, stride=2, pad=3);\n"
                                "  output y: %s @nhwc;\n}\n",
                                kinds[k].dt, kinds[k].dt, kinds[k].dt);
            if (c && forced)
                c->force = "conv";
        }
    /* the stem on conv_im2col_gemm (forced: "_im2col"), and its weight gradient as the planner places it
     * (conv_im2col_gemm on an H100) and forced on conv_wgrad_mma ("_mma"), N = 32 and 256 (set "stem" of
     * bench/conv_peer.py times cuDNN's fwd and wgrad) */
    for (int k = 0; k < 3; k += 2)
        for (int n = 32; n <= 256; n *= 8) {
            char id[192];
            snprintf(id, sizeof id, "conv_fwd_%s_im2col n%dc3h224k64r7s2p3", kinds[k].tag, n);
            tcase *c = add_case(id, 1, "conv_im2col_gemm",
                                "dnn 1;\ngraph g(seed=1) {\n  input x: %s[%d, 3, 224, 224] @nhwc;\n"
                                "  weight w: %s[64, 3, 7, 7] @nhwc;\n  y = conv(x, w, stride=2, pad=3);\n"
                                "  output y: %s @nhwc;\n}\n",
                                kinds[k].dt, n, kinds[k].dt, kinds[k].dt);
            if (c)
                c->force = "conv";
            for (int forced = 0; forced < 2; forced++) {
                snprintf(id, sizeof id, "conv_wgrad_%s%s n%dc3h224k64r7", kinds[k].tag, forced ? "_mma" : "", n);
                c = add_case(id, 1, forced ? "conv_wgrad_mma" : NULL,
                             "dnn 1;\ngraph g(seed=3) {\n  input dy: %s[%d, 64, 112, 112] @nhwc;\n"
                             "  input x: %s[%d, 3, 224, 224] @nhwc;\n"
                             "  dw = conv_wgrad(dy, x, w_dims=[64, 3, 7, 7], stride=2, pad=3);\n"
                             "  output dw: %s @nhwc;\n}\n",
                             kinds[k].dt, n, kinds[k].dt, n, kinds[k].dt);
                if (c && forced)
                    c->force = "conv_wgrad";
            }
        }
    /* the stem forced on conv_stem ("_stem", session 11: the implicit GEMM on the staged patch) and its weight
     * gradient forced on conv_im2col_gemm ("_im2col": the engine the planner gave it before), N = 32 and 256;
     * the rows without a suffix above are as the planner places them (set "stem" of bench/conv_peer.py) */
    for (int k = 0; k < 3; k += 2)
        for (int n = 32; n <= 256; n *= 8)
            for (int v = 0; v < 3; v++) {
                char id[192];
                tcase *c;
                if (v == 0) {
                    snprintf(id, sizeof id, "conv_fwd_%s_stem n%dc3h224k64r7s2p3", kinds[k].tag, n);
                    c = add_case(id, 1, "conv_stem",
                                 "dnn 1;\ngraph g(seed=1) {\n  input x: %s[%d, 3, 224, 224] @nhwc;\n"
                                 "  weight w: %s[64, 3, 7, 7] @nhwc;\n  y = conv(x, w, stride=2, pad=3);\n"
                                 "  output y: %s @nhwc;\n}\n",
                                 kinds[k].dt, n, kinds[k].dt, kinds[k].dt);
                } else {
                    snprintf(id, sizeof id, "conv_wgrad_%s_%s n%dc3h224k64r7", kinds[k].tag, v == 1 ? "stem" : "im2col",
                             n);
                    c = add_case(id, 1, v == 1 ? "conv_stem" : "conv_im2col_gemm",
                                 "dnn 1;\ngraph g(seed=3) {\n  input dy: %s[%d, 64, 112, 112] @nhwc;\n"
                                 "  input x: %s[%d, 3, 224, 224] @nhwc;\n"
                                 "  dw = conv_wgrad(dy, x, w_dims=[64, 3, 7, 7], stride=2, pad=3);\n"
                                 "  output dw: %s @nhwc;\n}\n",
                                 kinds[k].dt, n, kinds[k].dt, n, kinds[k].dt);
                }
                if (c)
                    c->force = v == 0 ? "conv" : "conv_wgrad";
            }
    /* the 1x1 layers at 7x7 (few output tiles: split-K's cases beside the 3x3 ones), f16 only */
    static const int r50_7x7[][8] = {{32, 2048, 7, 7, 512, 1, 1, 0}, {32, 512, 7, 7, 2048, 1, 1, 0}};
    for (int i = 0; i < 2; i++) {
        const int *s = r50_7x7[i];
        char id[192];
        snprintf(id, sizeof id, "conv_fwd_f16_nhwc n%dc%dh%dk%dr%ds%dp%d", s[0], s[1], s[2], s[4], s[5], s[6], s[7]);
        add_case(id, 1, NULL,
                 "dnn 1;\ngraph g(seed=1) {\n  input x: f16[%d, %d, %d, %d] @nhwc;\n"
                 "  weight w: f16[%d, %d, %d, %d] @nhwc;\n  y = conv(x, w, stride=%d, pad=%d);\n"
                 "  output y: f16 @nhwc;\n}\n",
                 s[0], s[1], s[2], s[3], s[4], s[1], s[5], s[5], s[6], s[7]);
    }
    /* dgrad of the ResNet layers the wgrad rows below leave out (the stem's dx is not needed), as the cost
     * model places them (conv_igemm_wgmma on an H100, but for the one-slice 1x1 dgrad of K = 64), then conv_igemm
     * forced ("_igemm") on the six dgrad layers below and two 1x1 ones: the mma.sync engine's time beside */
    static const int dg_layers[][8] = {{32, 64, 56, 56, 64, 1, 1, 0},   {32, 64, 56, 56, 256, 1, 1, 0},
                                       {32, 1024, 14, 14, 256, 1, 1, 0}, {32, 2048, 7, 7, 512, 1, 1, 0},
                                       {32, 512, 7, 7, 2048, 1, 1, 0}};
    for (int j = 0; j < 5; j++)
        dgrad_bench_case(dg_layers[j], NULL);
    static const int dg_forced[] = {1, 4, 5, 6, 3, 8, 2, 9};
    for (int j = 0; j < 8; j++)
        dgrad_bench_case(r50[dg_forced[j]], "conv_igemm");
    /* and conv_igemm_wgmma on the two one-slice 1x1 dgrads (dy K = 64) the cost model leaves to conv_igemm */
    dgrad_bench_case(r50[0], "conv_igemm_wgmma");
    dgrad_bench_case(r50[3], "conv_igemm_wgmma");
    /* 3x3 layers (56, 28, 14, 7), 1x1 256->64, 1x1 stride-2 projection */
    static const int bwd_layers[] = {1, 4, 5, 6, 3, 8};
    for (int j = 0; j < 6; j++) {
        const int *s = r50[bwd_layers[j]];
        int P = (s[2] + 2 * s[7] - s[5]) / s[6] + 1;
        char id[192];
        snprintf(id, sizeof id, "conv_dgrad_f16_nhwc n%dc%dh%dk%dr%d", s[0], s[1], s[2], s[4], s[5]);
        add_case(id, 1, NULL,
                 "dnn 1;\ngraph g(seed=2) {\n  input dy: f16[%d, %d, %d, %d] @nhwc;\n  weight w: f16[%d, %d, %d, %d] @nhwc;\n"
                 "  dx = conv_dgrad(dy, w, x_dims=[%d, %d, %d, %d], stride=%d, pad=%d);\n  output dx: f16 @nhwc;\n}\n",
                 s[0], s[4], P, P, s[4], s[1], s[5], s[5], s[0], s[1], s[2], s[3], s[6], s[7]);
        snprintf(id, sizeof id, "conv_wgrad_f16_nhwc n%dc%dh%dk%dr%d", s[0], s[1], s[2], s[4], s[5]);
        add_case(id, 1, NULL,
                 "dnn 1;\ngraph g(seed=3) {\n  input dy: f16[%d, %d, %d, %d] @nhwc;\n  input x: f16[%d, %d, %d, %d] @nhwc;\n"
                 "  dw = conv_wgrad(dy, x, w_dims=[%d, %d, %d, %d], stride=%d, pad=%d);\n  output dw: f16 @nhwc;\n}\n",
                 s[0], s[4], P, P, s[0], s[1], s[2], s[3], s[4], s[1], s[5], s[5], s[6], s[7]);
    }
    wgrad_1x1_bench_cases();
    wgrad_3x3_bench_cases();
    fd_1x1_bench_cases();
    zoo_bench_cases();
    step_bench_cases();
    add_case("conv_fwd_f32tf32_nhwc n32c64h56k64r3s1p1", 1, NULL,
             "dnn 1;\ngraph g(seed=4, tf32=true) {\n  input x: f32[32, 64, 56, 56] @nhwc;\n"
             "  weight w: f32[64, 64, 3, 3] @nhwc;\n  y = conv(x, w, pad=1);\n  output y: f32 @nhwc;\n}\n");
    /* the fused epilogue against the conv alone (target: <= 1.05x) on the
     * shape of graphs/conv_bias_relu.dnn at N=32 and a ResNet-50 layer */
    static const int epi_shapes[][3] = {{64, 28, 64}, {64, 56, 64}, {256, 14, 256}}; /* C, H, K */
    static const char *const epi_expr[][2] = {{"none", "conv(x, w, pad=1)"},
                                              {"bias_relu", "relu(conv(x, w, pad=1) + b)"},
                                              {"bias_res_relu", "relu(conv(x, w, pad=1) + b + r)"}};
    for (int i = 0; i < 3; i++)
        for (int e = 0; e < 3; e++) {
            const int C = epi_shapes[i][0], H = epi_shapes[i][1], K = epi_shapes[i][2];
            char id[192];
            snprintf(id, sizeof id, "convepi_f16_nhwc n32c%dh%dk%dr3_%s", C, H, K, epi_expr[e][0]);
            add_case(id, 1, NULL,
                     "dnn 1;\ngraph g(seed=6) {\n  input x: f16[32, %d, %d, %d] @nhwc;\n"
                     "  weight w: f16[%d, %d, 3, 3] @nhwc;\n  weight b: f16[1, %d, 1, 1];\n"
                     "  input r: f16[32, %d, %d, %d] @nhwc;\n  y = %s;\n  output y: f16 @nhwc;\n}\n",
                     C, H, H, K, C, K, K, H, H, epi_expr[e][1]);
        }
    /* depthwise: MobileNet-v2 / EfficientNet layers, f16 NHWC, N = 32 (C, H, R, stride) */
    static const int dw[][4] = {{32, 112, 3, 1}, {96, 112, 3, 2}, {144, 56, 3, 1}, {144, 56, 3, 2},
                                {192, 28, 3, 1}, {384, 14, 3, 1}, {576, 14, 3, 1}, {960, 7, 3, 1},
                                {240, 28, 5, 1}, {672, 14, 5, 2}};
    for (int i = 0; i < 10; i++) {
        const int C = dw[i][0], H = dw[i][1], R = dw[i][2], st = dw[i][3], P = (H + 2 * (R / 2) - R) / st + 1;
        char id[192];
        snprintf(id, sizeof id, "convdw_fwd_f16_nhwc n32c%dh%dr%ds%d", C, H, R, st);
        add_case(id, 1, NULL,
                 "dnn 1;\ngraph g(seed=7) {\n  input x: f16[32, %d, %d, %d] @nhwc;\n"
                 "  weight w: f16[%d, 1, %d, %d] @nhwc;\n  y = conv(x, w, stride=%d, pad=%d, groups=%d);\n"
                 "  output y: f16 @nhwc;\n}\n",
                 C, H, H, C, R, R, st, R / 2, C);
        if (i % 3 == 0 || i == 3) {
            snprintf(id, sizeof id, "convdw_dgrad_f16_nhwc n32c%dh%dr%ds%d", C, H, R, st);
            add_case(id, 1, NULL,
                     "dnn 1;\ngraph g(seed=8) {\n  input dy: f16[32, %d, %d, %d] @nhwc;\n"
                     "  weight w: f16[%d, 1, %d, %d] @nhwc;\n"
                     "  dx = conv_dgrad(dy, w, x_dims=[32, %d, %d, %d], stride=%d, pad=%d, groups=%d);\n"
                     "  output dx: f16 @nhwc;\n}\n",
                     C, P, P, C, R, R, C, H, H, st, R / 2, C);
        }
    }
    /* depthwise wgrad: MobileNet-v2 3x3 and ConvNeXt 7x7 layers, N = 32 (C, H, R, stride, bf16) */
    static const int dww[][5] = {{32, 112, 3, 1, 0}, {96, 112, 3, 2, 0}, {144, 56, 3, 1, 0}, {144, 56, 3, 2, 0},
                                 {384, 14, 3, 1, 0},  {960, 7, 3, 1, 0},   {96, 56, 7, 1, 0},  {192, 28, 7, 1, 0},
                                 {384, 14, 7, 1, 0},  {768, 7, 7, 1, 0},   {144, 56, 3, 1, 1}, {96, 56, 7, 1, 1}};
    for (int i = 0; i < 12; i++) {
        const int C = dww[i][0], H = dww[i][1], R = dww[i][2], st = dww[i][3], P = (H + 2 * (R / 2) - R) / st + 1;
        const char *dt = dww[i][4] ? "bf16" : "f16";
        char id[192];
        snprintf(id, sizeof id, "convdw_wgrad_%s_nhwc n32c%dh%dr%ds%d", dt, C, H, R, st);
        add_case(id, 1, NULL,
                 "dnn 1;\ngraph g(seed=9) {\n  input dy: %s[32, %d, %d, %d] @nhwc;\n  input x: %s[32, %d, %d, %d] @nhwc;\n"
                 "  dw = conv_wgrad(dy, x, w_dims=[%d, 1, %d, %d], stride=%d, pad=%d, groups=%d);\n"
                 "  output dw: %s @nhwc;\n}\n",
                 dt, C, P, P, dt, C, H, H, C, R, R, st, R / 2, C, dt);
    }
    add_case("maxpool3s2_float16_nhwc 32x256x56x56", 1, NULL,
             "dnn 1;\ngraph g(seed=5) {\n  input x: f16[32, 256, 56, 56] @nhwc;\n"
             "  y = maxpool(x, window=3, stride=2, pad=1);\n  output y: f16 @nhwc;\n}\n");
    add_case("maxpool3s2_float32_nhwc 32x256x56x56", 1, NULL,
             "dnn 1;\ngraph g(seed=5) {\n  input x: f32[32, 256, 56, 56] @nhwc;\n"
             "  y = maxpool(x, window=3, stride=2, pad=1);\n  output y: f32 @nhwc;\n}\n");
    wgrad_3x3_n32_bench_cases(); /* the bench rows before keep their order */
    f32_bench_cases();
    f32_epi_bench_cases();
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

/* The tolerance of output t: METHOD.md's per-dtype default times the case's
 * scale, with the f32 and tf32 error models below. */
static dh_rule conv_rule(const tcase *c, const dh_case_run *r, int t)
{
    dh_rule rule = {.require_nonzero = true};
    dh_default_tolerance(r->g, t, &rule.rtol, &rule.atol);
    rule.rtol *= c->tol_scale;
    rule.atol *= c->tol_scale;
    if (r->g->tensors[t].rdtype == XDNN_F32 && !c->tf32) {
        /* An f32 sum of n products errs by ~sqrt(n) * 2^-24 * |product|,
         * whatever the sum itself is: an output that cancels to ~0 keeps
         * the absolute error of its terms.  The output's rms measures the
         * terms' scale, so the absolute part of the tolerance scales with
         * it (1e-5 * rms: ~100x the f32 rounding of a 1000-term sum). */
        double rms = dh_tensor_rms(&r->cpu.tensors[t]);
        rule.atol *= rms > 1 ? rms : 1;
    }
    if (c->tf32) {
        /* tf32 rounds every input to 10 mantissa bits (2^-11 relative), so
         * each product errs by ~2^-11 of itself and a sum of R*S*C products
         * by ~2^-11 * rms(y) — independent of the element's own size: an
         * output that cancels to ~0 keeps the absolute error of its terms.
         * Per element: |err| <= 2e-3 |ref| + 4e-3 rms(ref) (8 sigma of that
         * model); overall: rel_norm <= 1e-3 (METHOD.md's tf32 figure). */
        rule.rtol = 2e-3;
        rule.atol = 4e-3 * dh_tensor_rms(&r->cpu.tensors[t]);
        rule.max_rel_norm = 1e-3;
    }
    return rule;
}

/* x_inf: +Inf written into input x (a conv_dgrad's dy) of both run states at the case's places (the tensor's
 * logical order, its strides), then the CPU reference run (dh_case_begin ran without it). */
static xdnn_status place_x_infs(const tcase *c, dh_case_run *r, dh_outcome *out)
{
    size_t xi = r->g->ntensors; /* x, or a conv_dgrad's dy */
    for (size_t t = 0; t < r->g->ntensors; t++)
        if (strcmp(r->g->tensors[t].name, "x") == 0 ||
            (xi == r->g->ntensors && strcmp(r->g->tensors[t].name, "dy") == 0))
            xi = t;
    if (xi == r->g->ntensors) {
        snprintf(out->msg, sizeof out->msg, "x_inf: the graph has no input x or dy");
        return XDNN_ERR_USAGE;
    }
    for (int s = 0; s < 2; s++) {
        host_tensor *ht = s ? &r->gpu.tensors[xi] : &r->cpu.tensors[xi];
        for (int k = 0; k < 2; k++) {
            const int *at = c->x_inf[k];
            if (!(at[0] | at[1] | at[2] | at[3] | at[4]) || ht->rank < 4 || ht->rank > 5 || !ht->data)
                continue;
            int64_t off = 0;
            for (int d = 0; d < ht->rank; d++)
                off += (int64_t)at[d] * ht->strides[d];
            if (ht->dtype == XDNN_F16)
                ((uint16_t *)ht->data)[off] = 0x7c00;
            else if (ht->dtype == XDNN_BF16)
                ((uint16_t *)ht->data)[off] = 0x7f80;
            else
                ((float *)ht->data)[off] = INFINITY;
        }
    }
    xdnn_status st = run_state_alloc_results(&r->cpu, r->d);
    if (st == XDNN_OK)
        st = exec_cpu_run(&r->cpu, r->d);
    if (st != XDNN_OK)
        snprintf(out->msg, sizeof out->msg, "x_inf: CPU reference failed (%s)", xdnn_status_name(st));
    return st;
}

static void run_case(int i, dh_outcome *out)
{
    const tcase *c = &cases[i];
    bool bench = opts.bench;
    dh_case_run r = {0};
    dh_env env = {0}; /* the case's switches, the process's own values put back after it */
    const bool infs = c->x_inf[0][0] | c->x_inf[0][1] | c->x_inf[0][2] | c->x_inf[0][3] | c->x_inf[0][4];
    xdnn_status s = dh_case_begin(&r, c->id, c->text, !bench && !c->refuse && !infs, out);
    xgraph *g = r.g;
    if (s == XDNN_OK && infs && !bench && !c->refuse)
        s = place_x_infs(c, &r, out);
    if (s != XDNN_OK)
        goto done;
    char force[96], sk[16];
    const char *forces[1] = {force};
    snprintf(sk, sizeof sk, "%d", c->splitk);
    dh_env_set(&env, "XDNN_CONV_SPLITK", c->splitk > 0 ? sk : NULL); /* 0: the heuristic's, whatever the caller set */
    char rows[16], split[16];
    snprintf(rows, sizeof rows, "%d", c->im2col_rows);
    snprintf(split, sizeof split, "%d", c->im2col_split);
    if (c->im2col_rows > 0)
        dh_env_set(&env, "XDNN_IM2COL_ROWS", rows);
    if (c->im2col_split > 0)
        dh_env_set(&env, "XDNN_IM2COL_SPLIT", split);
    char wsp[16];
    snprintf(wsp, sizeof wsp, "%d", c->wsplits);
    if (c->wsplits > 0)
        dh_env_set(&env, "XDNN_WGRAD_SPLITS", wsp);
    if (c->regs)
        dh_env_set(&env, "XDNN_CONV_WGMMA_NO_STAGE", "1");
    if (c->wtile)
        dh_env_set(&env, "XDNN_WGRAD_TILE", c->wtile);
    char f32img[16];
    snprintf(f32img, sizeof f32img, "%d", c->f32_images);
    if (c->f32_images > 0)
        dh_env_set(&env, "XDNN_F32GEMM_IMAGES", f32img);
    if (c->f32_flat)
        dh_env_set(&env, "XDNN_F32GEMM_FLAT", c->f32_flat);
    if (c->one_launch)
        dh_env_set(&env, "XDNN_DGRAD_ONE_LAUNCH", "1");
    if (c->pingpong)
        dh_env_set(&env, "XDNN_CONV_WGMMA_PINGPONG", c->pingpong);
    if (c->bn32)
        dh_env_set(&env, "XDNN_CONV_WGMMA_BN32", c->bn32);
    if (c->dw_v2) /* "": unset, the default */
        dh_env_set(&env, "XDNN_CONV_DW_V2", *c->dw_v2 ? c->dw_v2 : NULL);
    if (c->tma3d)
        dh_env_set(&env, "XDNN_CONV_WGMMA_TMA3D", c->tma3d);
    snprintf(force, sizeof force, "%s=%s", c->force ? c->force : "", c->want_engine ? c->want_engine : "");
    if (c->refuse) { /* planned only (dry or not): the forced engine's refusal, its reason named */
        gpu_run_opts o = {.iters = 1, .log = stderr, .force = forces, .nforce = 1};
        s = opts.dry ? dry_run(g, forces, 1, out->engines, sizeof out->engines, r.d, NULL) : dh_gpu_run(&r, &o, out);
        bool named = false;
        for (size_t k = 0; k < xdnn_diags_count(r.d) && !named; k++)
            named = strstr(xdnn_diags_get(r.d, k)->message, c->refuse) != NULL;
        out->ok = s == XDNN_ERR_UNSUPPORTED && named;
        snprintf(out->msg, sizeof out->msg, "%s '%s'", out->ok ? "refused, naming" : "expected a refusal naming",
                 c->refuse);
        goto done;
    }
    if (opts.dry) {
        int dw_fits = 0;
        s = dry_run(g, forces, c->force ? 1 : 0, out->engines, sizeof out->engines, r.d, &dw_fits);
        int nparts = out->engines[0] ? 1 : 0;
        for (const char *q = out->engines; *q; q++)
            nparts += *q == ',';
        out->ok = s == XDNN_OK && (!c->want_engine || strstr(out->engines, c->want_engine)) &&
                  (c->want_parts <= 0 || nparts == c->want_parts);
        /* conv_dw v2's cases: the shape takes v2 (or stays on v1) as the case says */
        const bool v2_bad = c->dw_v2 && !*c->dw_v2 && (dw_fits != 0) != c->dw_v2_fits;
        out->ok = out->ok && !v2_bad;
        snprintf(out->msg, sizeof out->msg, "(dry: planned, not run)%s%s", out->ok || v2_bad ? "" : " expected engine ",
                 v2_bad ? (c->dw_v2_fits ? " expected conv_dw v2" : " expected conv_dw v1") : out->ok ? "" : c->want_engine);
        goto done;
    }
    gpu_run_opts o = {.warmup = bench ? 2 : 0, .iters = bench ? 10 : 1, .log = stderr,
                      .verbose = getenv("DIFFTEST_VERBOSE") ? 1 : 0, .force = forces, .nforce = c->force ? 1 : 0};
    s = dh_gpu_run(&r, &o, out);
    bool engine_ok = !c->want_engine;
    for (int k = 0; k < r.rep.nparts; k++)
        if (c->want_engine && strcmp(r.rep.parts[k].engine, c->want_engine) == 0)
            engine_ok = true;
    if (s != XDNN_OK)
        goto done;
    if (bench) {
        /* the conv / pool partition: the last one; a plan of several (layout or padding copies before it) is
         * timed whole, its partitions' medians summed, so what the caller pays is what is reported */
        const gpu_partition_report *p = &r.rep.parts[r.rep.nparts - 1];
        double ms = 0, flops = 0;
        for (int k = 0; k < r.rep.nparts; k++) {
            ms += r.rep.parts[k].ms_median;
            flops += r.rep.parts[k].flops;
        }
        out->ms = ms;
        snprintf(out->msg, sizeof out->msg, "median %.4f ms (min %.4f max %.4f) %.1f TFLOP/s %.0f GB/s  %s%s",
                 ms, p->ms_min, p->ms_max, ms > 0 ? flops / (ms * 1e-3) * 1e-12 : 0,
                 p->ms_median > 0 ? p->bytes / (p->ms_median * 1e-3) * 1e-9 : 0, p->detail ? p->detail : "",
                 r.rep.nparts > 1 ? "  (whole plan; min/max and GB/s: its last partition)" : "");
        out->ok = dh_outputs_finite(&r);
        goto done;
    }
    out->ok = engine_ok;
    size_t n = 0;
    if (!engine_ok)
        n += (size_t)snprintf(out->msg, sizeof out->msg, " expected engine %s", c->want_engine);
    if (c->want_parts > 0 && r.rep.nparts != c->want_parts) {
        out->ok = false;
        n += (size_t)snprintf(out->msg + n, sizeof out->msg - n, " expected %d partition(s), planned %d",
                              c->want_parts, r.rep.nparts);
    }
    const char *const details[3] = {c->want_detail, c->want_detail2, c->reject_detail};
    for (int j = 0; j < 3; j++) {
        bool found = false;
        for (int k = 0; details[j] && k < r.rep.nparts; k++)
            found |= r.rep.parts[k].detail && strstr(r.rep.parts[k].detail, details[j]) != NULL;
        if (details[j] && found == (j == 2)) {
            out->ok = false;
            n += (size_t)snprintf(out->msg + n, sizeof out->msg - n, " %s '%s' in the engine detail",
                                  j == 2 ? "did not expect" : "expected", details[j]);
        }
    }
    for (size_t k = 0; k < g->noutputs; k++) {
        dh_rule rule = conv_rule(c, &r, g->outputs[k]);
        out->ok &= dh_compare_output(&r, g->outputs[k], &rule, out->msg, sizeof out->msg, &n, NULL);
    }
done:
    dh_env_restore(&env);
    dh_case_end(&r, c->id, out->ok);
}

static void bench_line(int i, const dh_outcome *o)
{
    printf("BENCH %s %s %.4f %s  %s\n", cases[i].id, o->engines, o->ok ? o->ms : -1.0, o->ok ? "ok" : "FAILED",
           o->msg);
}

/* One channels-last case forced on conv_igemm_wgmma (dir 0 fwd, 1 dgrad), split-K splitk (0: the heuristic's),
 * its detail holding `detail` (NULL: anything). */
static void wgmma_case(const char *name, const win_cfg *w, const char *dt, int dir, int splitk, const char *detail)
{
    conv_case_forced(name, w, dt, true, dir, false, "conv_igemm_wgmma", 1);
    tcase *c = &cases[ncases - 1];
    c->splitk = splitk;
    c->want_detail = detail;
}

/* y = relu(conv(x, w) + b) of 3-D channels-last dt tensors forced on conv_igemm_wgmma, the epilogue fused in its
 * store (one partition). */
static tcase *bias_relu_3d_case(const char *id, const win_cfg *w, const char *dt)
{
    conv_text ct;
    conv_strs(w, &ct);
    char bs[96];
    dims_str(bs, sizeof bs, 1, w->k, 3, (int[]){1, 1, 1});
    tcase *tc = add_case(id, 1, "conv_igemm_wgmma",
                         "dnn 1;\ngraph g(seed=%d) {\n  input x: %s%s @ndhwc;\n  weight w: %s%s @ndhwc;\n"
                         "  weight b: %s%s;\n  y = relu(conv(x, w, %s) + b);\n  output y: %s @ndhwc;\n}\n",
                         ncases * 3 + 11, dt, ct.xs, dt, ct.ws, dt, bs, ct.attrs, dt);
    if (tc) {
        tc->force = "conv";
        tc->want_parts = 1;
        tc->want_detail = "fused epilogue";
    }
    return tc;
}

/* conv_igemm_wgmma on 3-D convs (the kernel's D3 instances: m = (n, o, p, q), the depth gathered and
 * bounds-tested), forced, "wg3-" in every id: odd D/H/W (partial 128-row tiles), stride 2 in depth only and in
 * all dims, dilation (depth and width), asymmetric pads, T != R, K = 40 / 24 / 136 (tiles with a tail) and 128
 * (the 128-wide tile), C = 3 on padded copies, split-K forced; conv_dgrad with its stride phases (8 of them for
 * stride 2, a 1x1x1 stride-2 dgrad's 7 empty ones folded into the GEMM's store or launched), split-K; the fused
 * epilogue once each way (bias + relu forward, the relu_bwd mask of a strided dgrad).  Registered after every
 * other case: the seeds come from the case count. */
static void conv_wgmma_3d_cases(void)
{
    static const char *const dts[] = {"f16", "bf16"};
    struct { const char *name; int dir; win_cfg w; int splitk; const char *detail; } cfgs[] = {
        {"wg3-c8-k8-1x1x1-odd", 0, cfg(3, 3, 8, 8, 1, (int[]){5, 7, 9}, (int[]){1, 1, 1}, NULL, NULL, NULL, NULL,
                                       false), 0, NULL},
        {"wg3-c24-k40-3x3x3-asym", 0, cfg(3, 2, 24, 40, 1, (int[]){7, 9, 11}, (int[]){3, 3, 3}, NULL, NULL,
                                          (int[]){1, 0, 1}, (int[]){2, 1, 0}, false), 0, NULL},
        {"wg3-c32-k24-s2d", 0, cfg(3, 2, 32, 24, 1, (int[]){9, 7, 11}, (int[]){3, 3, 3}, (int[]){2, 1, 1}, NULL,
                                   (int[]){1, 1, 1}, (int[]){1, 1, 1}, false), 0, NULL},
        {"wg3-c16-k136-s2", 0, cfg(3, 1, 16, 136, 1, (int[]){9, 11, 13}, (int[]){3, 3, 3}, (int[]){2, 2, 2}, NULL,
                                   (int[]){1, 1, 1}, (int[]){0, 1, 1}, false), 0, NULL},
        {"wg3-c64-k72-dil", 0, cfg(3, 2, 64, 72, 1, (int[]){9, 8, 11}, (int[]){3, 3, 3}, NULL, (int[]){2, 1, 2},
                                   (int[]){2, 1, 2}, (int[]){2, 1, 1}, false), 0, NULL},
        {"wg3-c24-k128-3x1x5-s2x1x2", 0, cfg(3, 2, 24, 128, 1, (int[]){7, 6, 11}, (int[]){3, 1, 5},
                                             (int[]){2, 1, 2}, NULL, (int[]){1, 0, 2}, (int[]){1, 0, 1}, false),
         0, NULL},
        {"wg3-sk3-c64-k64-3x3x3", 0, cfg(3, 1, 64, 64, 1, (int[]){5, 6, 7}, (int[]){3, 3, 3}, NULL, NULL,
                                         (int[]){1, 1, 1}, (int[]){1, 1, 1}, false), 3, "split-K 3"},
        {"wg3p-c3-k16-3x3x3", 0, cfg(3, 2, 3, 16, 1, (int[]){7, 9, 8}, (int[]){3, 3, 3}, NULL, NULL,
                                     (int[]){1, 1, 1}, (int[]){1, 1, 1}, false), 0, "C 3 -> 8"},
        {"wg3d-c24-k40-3x3x3-asym", 1, cfg(3, 2, 24, 40, 1, (int[]){7, 9, 11}, (int[]){3, 3, 3}, NULL, NULL,
                                           (int[]){1, 0, 1}, (int[]){1, 2, 1}, false), 0, NULL},
        {"wg3d-c16-k24-s2", 1, cfg(3, 1, 16, 24, 1, (int[]){9, 11, 13}, (int[]){3, 3, 3}, (int[]){2, 2, 2}, NULL,
                                   (int[]){1, 1, 1}, (int[]){1, 1, 1}, false), 0, "8 flipped-weight"},
        {"wg3d-c32-k16-s2d-dil", 1, cfg(3, 2, 32, 16, 1, (int[]){9, 9, 7}, (int[]){3, 3, 3}, (int[]){2, 1, 1},
                                        (int[]){1, 2, 1}, (int[]){1, 2, 1}, (int[]){1, 2, 1}, false), 0, NULL},
        {"wg3d-c8-k24-1x1x1-s2", 1, cfg(3, 2, 8, 24, 1, (int[]){6, 8, 10}, (int[]){1, 1, 1}, (int[]){2, 2, 2}, NULL,
                                        NULL, NULL, false), 0, "(7 zero, 3 of them in a GEMM's store)"},
        {"wg3d-sk2-c64-k64-3x3x3", 1, cfg(3, 1, 64, 64, 1, (int[]){5, 6, 7}, (int[]){3, 3, 3}, NULL, NULL,
                                          (int[]){1, 1, 1}, (int[]){1, 1, 1}, false), 2, "split-K 2"},
    };
    for (int ci = 0; ci < (int)(sizeof cfgs / sizeof cfgs[0]); ci++)
        for (int ti = 0; ti < 2; ti++)
            if (!opts.quick || ti == ci % 2)
                wgmma_case(cfgs[ci].name, &cfgs[ci].w, dts[ti], cfgs[ci].dir, cfgs[ci].splitk, cfgs[ci].detail);
    /* the fused epilogue: bias + relu in the forward store; the relu_bwd mask (kcw_mask_load) of a stride-2 dgrad */
    bias_relu_3d_case("conv/fwd+epi/wg3-c24-k40-3x3x3-asym/bias-relu/bf16/ndhwc/3d", &cfgs[1].w, "bf16");
    tcase *tc = dgrad_relu_case("wg3-dge-c16-k24-s2", "f16", &cfgs[9].w, "", "conv_igemm_wgmma", false);
    if (tc) {
        tc->force = "conv_dgrad";
        tc->want_parts = 2;
        tc->want_detail2 = "fused epilogue relu_bwd";
    }
}

/* conv_igemm_wgmma's TMA producer (session 10: x's im2col slices by one cp.async.bulk.tensor im2col load, w's
 * rows by a tiled one; kern_conv_wgmma.h), forced, "wgt-" in every id, f16 and bf16: M tails (N*P*Q not a
 * multiple of 128) with 128-row tiles crossing image ends, P*Q < 128 (a tile spans several images), padding 0,
 * 2 and asymmetric, stride 2 and 3 on odd H / W, dilation 2, a 1-D conv, K = 8 (the w box's rows past K
 * zero-filled) and K = 72 / 128 (the 64-wide tile's tail, the staged 128-wide tile), split-K starting slices
 * mid-filter, and the dgrad phases (dy channels 64 / 128: strided, a 1x1 stride-2 one with folded zero phases).
 * Each must say which producer ran: TMA, or cp.async where the map cannot serve (C = 72: a 64-channel slice
 * would straddle two taps) or XDNN_CONV_WGMMA_NO_TMA is set (the sweep runs with it too).  Registered after
 * every other case: the seeds come from the case count. */
static void conv_wgmma_tma_cases(void)
{
    static const char *const dts[] = {"f16", "bf16"};
    const char *off = getenv("XDNN_CONV_WGMMA_NO_TMA");
    const bool tma = !off || strcmp(off, "0") == 0;
    struct { const char *name; int dir; win_cfg w; int splitk; bool no_tma; } cfgs[] = {
        {"wgt-c64-k64-3x3-mtail", 0, cfg(2, 3, 64, 64, 1, (int[]){13, 11}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                         (int[]){1, 1}, false), 0, false},
        {"wgt-c128-k72-3x3-pq35", 0, cfg(2, 9, 128, 72, 1, (int[]){5, 7}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                         (int[]){1, 1}, false), 0, false},
        {"wgt-c64-k128-3x3-pad0", 0, cfg(2, 2, 64, 128, 1, (int[]){9, 12}, (int[]){3, 3}, NULL, NULL, NULL, NULL,
                                         false), 0, false},
        {"wgt-c64-k64-5x5-pad2-asym", 0, cfg(2, 2, 64, 64, 1, (int[]){11, 10}, (int[]){5, 5}, NULL, NULL,
                                             (int[]){2, 3}, (int[]){3, 1}, false), 0, false},
        {"wgt-c64-k64-3x3-s2-odd", 0, cfg(2, 3, 64, 64, 1, (int[]){15, 13}, (int[]){3, 3}, (int[]){2, 2}, NULL,
                                          (int[]){1, 1}, (int[]){1, 1}, false), 0, false},
        {"wgt-c128-k24-3x3-s3-dil2", 0, cfg(2, 2, 128, 24, 1, (int[]){23, 21}, (int[]){3, 3}, (int[]){3, 3},
                                            (int[]){2, 2}, (int[]){2, 1}, (int[]){0, 2}, false), 0, false},
        {"wgt-c64-k8-3x3", 0, cfg(2, 2, 64, 8, 1, (int[]){10, 9}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                  (int[]){1, 1}, false), 0, false},
        {"wgt-c72-k64-3x3-cpasync", 0, cfg(2, 2, 72, 64, 1, (int[]){11, 9}, (int[]){3, 3}, NULL, NULL,
                                           (int[]){1, 1}, (int[]){1, 1}, false), 0, true},
        {"wgt-1d-c64-k40-s2", 0, cfg(1, 3, 64, 40, 1, (int[]){45}, (int[]){5}, (int[]){2}, NULL, (int[]){2},
                                     (int[]){1}, false), 0, false},
        {"wgt-sk4-c192-k64-3x3", 0, cfg(2, 2, 192, 64, 1, (int[]){7, 9}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                        (int[]){1, 1}, false), 4, false},
        {"wgtd-c64-k64-3x3", 1, cfg(2, 3, 64, 64, 1, (int[]){13, 11}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                    (int[]){1, 1}, false), 0, false},
        {"wgtd-c40-k128-3x3-s2-odd", 1, cfg(2, 2, 40, 128, 1, (int[]){15, 13}, (int[]){3, 3}, (int[]){2, 2}, NULL,
                                            (int[]){1, 1}, (int[]){1, 1}, false), 0, false},
        {"wgtd-c24-k64-1x1-s2-fold", 1, cfg(2, 2, 24, 64, 1, (int[]){14, 12}, (int[]){1, 1}, (int[]){2, 2}, NULL,
                                            NULL, NULL, false), 0, false},
    };
    for (int ci = 0; ci < (int)(sizeof cfgs / sizeof cfgs[0]); ci++)
        for (int ti = 0; ti < 2; ti++)
            if (!opts.quick || ti == ci % 2)
                wgmma_case(cfgs[ci].name, &cfgs[ci].w, dts[ti], cfgs[ci].dir, cfgs[ci].splitk,
                           tma && !cfgs[ci].no_tma ? "TMA (im2col x, tiled w) producer" : "cp.async producer");
}

/* A wgrad_wgmma_case with its tile (XDNN_WGRAD_TILE; NULL: the model's) and splits (0: the model's) forced, its
 * detail holding `detail` and the tile's name; the case registered. */
static tcase *wgrad_tile_case(const char *name, const win_cfg *w, const char *dt, const char *tile, int splits,
                              const char *detail)
{
    tcase *c = wgrad_wgmma_case(name, w, dt);
    c->wtile = tile;
    c->wsplits = splits;
    c->want_detail = detail;
    if (tile)
        c->want_detail2 = strcmp(tile, "128x256") == 0  ? "tile 128x256x"
                          : strcmp(tile, "64x256") == 0 ? "tile 64x256x"
                                                         : "tile 128x128x";
    return c;
}

/* conv_wgrad_wgmma with x's tiles by TMA im2col (session 10) and its 128 x 256 tile, forced, "wgmma-x-" in
 * every id (so the conv/wgrad/wgmma runs take them too): N*P*Q not a multiple of the 64-pixel slice, 7x7
 * maps (a slice spans images), stride 2 and 2x1, pads 0 / 2 / asymmetric, dilation 2, 1-D, 5x5, K = 8, 24,
 * 136 (a partial 128 tile), each tile forced (XDNN_WGRAD_TILE) with a partial last j tile, splits forced; C =
 * 72 (a 64-channel block would span two taps) takes the cp.async gather, in the wide tile too.  The detail
 * names the loader: "x by TMA im2col" where the map expresses the case, unless XDNN_WGRAD_NO_TMA=1 or
 * XDNN_WGRAD_X_NO_TMA=1 is set for the run (then "x by cp.async", the fallback under test). */
static void conv_wgrad_xtma_cases(void)
{
    static const char *const dts[] = {"f16", "bf16"};
    const char *e1 = getenv("XDNN_WGRAD_NO_TMA"), *e2 = getenv("XDNN_WGRAD_X_NO_TMA");
    const bool off = (e1 && *e1 == '1') || (e2 && *e2 == '1');
    struct { const char *name; win_cfg w; const char *tile; int splits; bool tma; } cfgs[] = {
        {"x-c64-k64-7x7-odd", cfg(2, 3, 64, 64, 1, (int[]){7, 7}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                  (int[]){1, 1}, false), NULL, 0, true},
        {"x-c128-k24-s2-pad0", cfg(2, 2, 128, 24, 1, (int[]){15, 13}, (int[]){3, 3}, (int[]){2, 2}, NULL, NULL,
                                   NULL, false), NULL, 0, true},
        {"x-c64-k8-pad2-dil2", cfg(2, 2, 64, 8, 1, (int[]){11, 9}, (int[]){3, 3}, NULL, (int[]){2, 2},
                                   (int[]){2, 2}, (int[]){2, 2}, false), NULL, 0, true},
        {"x-c64-k136-s2x1-asym", cfg(2, 2, 64, 136, 1, (int[]){13, 11}, (int[]){3, 3}, (int[]){2, 1}, NULL,
                                     (int[]){1, 0}, (int[]){0, 2}, false), NULL, 0, true},
        {"x-c72-k24-cpasync", cfg(2, 2, 72, 24, 1, (int[]){9, 11}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                  (int[]){1, 1}, false), NULL, 0, false},
        {"x-1d-c64-k24-s2-dil2", cfg(1, 3, 64, 24, 1, (int[]){101}, (int[]){5}, (int[]){2}, (int[]){2},
                                     (int[]){3}, (int[]){1}, false), NULL, 0, true},
        {"x-c64-k64-5x5-pad2", cfg(2, 2, 64, 64, 1, (int[]){11, 9}, (int[]){5, 5}, NULL, NULL, (int[]){2, 2},
                                   (int[]){2, 2}, false), NULL, 0, true},
        {"x-c192-k136-t128x256", cfg(2, 2, 192, 136, 1, (int[]){17, 15}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                     (int[]){1, 1}, false), "128x256", 0, true},
        {"x-c64-k24-t64x256", cfg(2, 3, 64, 24, 1, (int[]){20, 19}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                  (int[]){1, 1}, false), "64x256", 0, true},
        {"x-c128-k128-t128x128-split7", cfg(2, 4, 128, 128, 1, (int[]){14, 14}, (int[]){3, 3}, NULL, NULL,
                                            (int[]){1, 1}, (int[]){1, 1}, false), "128x128", 7, true},
        {"x-c72-k136-t128x256-cpasync", cfg(2, 2, 72, 136, 1, (int[]){13, 11}, (int[]){3, 3}, (int[]){2, 2}, NULL,
                                            (int[]){1, 1}, (int[]){1, 1}, false), "128x256", 0, false},
        {"x-long-c64-k128-t128x256-split5", cfg(2, 4, 64, 128, 1, (int[]){40, 40}, (int[]){3, 3}, NULL, NULL,
                                                (int[]){1, 1}, (int[]){1, 1}, false), "128x256", 5, true},
    };
    for (int ci = 0; ci < (int)(sizeof cfgs / sizeof cfgs[0]); ci++)
        for (int ti = 0; ti < 2; ti++) {
            if (opts.quick && ti != ci % 2)
                continue;
            wgrad_tile_case(cfgs[ci].name, &cfgs[ci].w, dts[ti], cfgs[ci].tile, cfgs[ci].splits,
                            cfgs[ci].tma && !off ? "x by TMA im2col" : "x by cp.async");
        }
}

/* conv_wgrad_wgmma on 3-D convs (session 11: m = (n, o, p, q), j = (t, r, s, c), x by the gather), forced,
 * "wgmma-w3-" in every id: odd D/H/W, stride 2 in all dims and in depth only, dilation in depth and width,
 * asymmetric pads, T != R (3x1x5), N = 1, K = 136 / 200 (partial 128 tiles), each tile forced, the reduction's
 * splits forced (7 of many slices, and 1), a 1x1x1 stride-2 window; C % 8 == 4 (x's channels padded to 8 in
 * the gather, the pad's columns dropped by the sum): the 3-D stem's C = 4 (stride 1 and 2), C = 12 in 2-D and
 * 1-D.  The sweep runs them again with XDNN_WGRAD_NO_TMA=1 (dY by the gather too: its depth stride).  The
 * reduction is deterministic (split order fixed): no option to test.  Registered last: the seeds come from
 * the case count. */
static void conv_wgrad_wgmma_3d_cases(void)
{
    static const char *const dts[] = {"f16", "bf16"};
    struct { const char *name; win_cfg w; const char *tile; int splits; } cfgs[] = {
        {"w3-c8-k8-3x3x3-odd", cfg(3, 2, 8, 8, 1, (int[]){5, 7, 9}, (int[]){3, 3, 3}, NULL, NULL, (int[]){1, 1, 1},
                                   (int[]){1, 1, 1}, false), NULL, 0},
        {"w3-c24-k40-asym", cfg(3, 2, 24, 40, 1, (int[]){7, 9, 11}, (int[]){3, 3, 3}, NULL, NULL, (int[]){1, 0, 1},
                                (int[]){2, 1, 0}, false), NULL, 0},
        {"w3-c16-k136-s2", cfg(3, 1, 16, 136, 1, (int[]){9, 11, 13}, (int[]){3, 3, 3}, (int[]){2, 2, 2}, NULL,
                               (int[]){1, 1, 1}, (int[]){0, 1, 1}, false), NULL, 0},
        {"w3-c32-k24-s2d", cfg(3, 2, 32, 24, 1, (int[]){9, 7, 11}, (int[]){3, 3, 3}, (int[]){2, 1, 1}, NULL,
                               (int[]){1, 1, 1}, (int[]){1, 1, 1}, false), NULL, 0},
        {"w3-c64-k72-dil", cfg(3, 2, 64, 72, 1, (int[]){9, 8, 11}, (int[]){3, 3, 3}, NULL, (int[]){2, 1, 2},
                               (int[]){2, 1, 2}, (int[]){2, 1, 1}, false), NULL, 0},
        {"w3-c24-k128-3x1x5-s2x1x2", cfg(3, 2, 24, 128, 1, (int[]){7, 6, 11}, (int[]){3, 1, 5}, (int[]){2, 1, 2},
                                         NULL, (int[]){1, 0, 2}, (int[]){1, 0, 1}, false), NULL, 0},
        {"w3-n1-c64-k64-t64x256", cfg(3, 1, 64, 64, 1, (int[]){9, 10, 11}, (int[]){3, 3, 3}, NULL, NULL,
                                      (int[]){1, 1, 1}, (int[]){1, 1, 1}, false), "64x256", 0},
        {"w3-c64-k200-t128x256", cfg(3, 1, 64, 200, 1, (int[]){6, 7, 9}, (int[]){3, 3, 3}, NULL, NULL,
                                     (int[]){1, 1, 1}, (int[]){1, 1, 1}, false), "128x256", 0},
        {"w3-c128-k128-t128x128-split7", cfg(3, 2, 128, 128, 1, (int[]){8, 8, 8}, (int[]){3, 3, 3}, NULL, NULL,
                                             (int[]){1, 1, 1}, (int[]){1, 1, 1}, false), "128x128", 7},
        {"w3-c32-k64-split1", cfg(3, 2, 32, 64, 1, (int[]){9, 9, 9}, (int[]){3, 3, 3}, NULL, NULL, (int[]){1, 1, 1},
                                  (int[]){1, 1, 1}, false), NULL, 1},
        {"w3-c16-k24-1x1x1-s2", cfg(3, 2, 16, 24, 1, (int[]){7, 8, 9}, (int[]){1, 1, 1}, (int[]){2, 2, 2}, NULL,
                                    NULL, NULL, false), NULL, 0},
        {"w3-c4-k32-stem", cfg(3, 1, 4, 32, 1, (int[]){9, 10, 11}, (int[]){3, 3, 3}, NULL, NULL, (int[]){1, 1, 1},
                               (int[]){1, 1, 1}, false), NULL, 0},
        {"w3-c4-k16-s2-asym", cfg(3, 2, 4, 16, 1, (int[]){9, 7, 11}, (int[]){3, 3, 3}, (int[]){2, 2, 2}, NULL,
                                  (int[]){1, 0, 1}, (int[]){0, 1, 1}, false), NULL, 0},
        {"w3-c12-k24-2d", cfg(2, 2, 12, 24, 1, (int[]){13, 11}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                              (int[]){1, 1}, false), NULL, 0},
        {"w3-c12-k8-1d-s2-dil2", cfg(1, 3, 12, 8, 1, (int[]){61}, (int[]){5}, (int[]){2}, (int[]){2}, (int[]){3},
                                     (int[]){1}, false), NULL, 0},
    };
    for (int ci = 0; ci < (int)(sizeof cfgs / sizeof cfgs[0]); ci++)
        for (int ti = 0; ti < 2; ti++) {
            if (opts.quick && ti != ci % 2)
                continue;
            tcase *c = wgrad_tile_case(cfgs[ci].name, &cfgs[ci].w, dts[ti], cfgs[ci].tile, cfgs[ci].splits,
                                       "x by cp.async");
            if (!cfgs[ci].tile && cfgs[ci].splits)
                c->want_detail2 = cfgs[ci].splits == 7 ? "x 7 splits" : "x 1 splits";
        }
}

/* A conv_dgrad's GEMM phases in one launch of conv_igemm_wgmma (session 11: kconv_wgmma_phases; the 3-D
 * instances' phase table), forced, "olp-" in every id, f16 and bf16: 3-D stride 2 (eight phases) on odd and
 * even dx, dx channels 24 / 64 / 136 (the 64- and 128-wide tiles, a partial N tile), stride 2 in depth only;
 * 2-D and 1-D (XDNN_DGRAD_ONE_LAUNCH=1: not taken by default); stride above the window (2x2x2 stride 3, 2x2
 * stride 3, 1-D 2 stride 3: GEMM phases beside empty ones, some zero-filled by a GEMM's store, some
 * launched); a 2-D phase set that would load by TMA; the fused relu_bwd mask read at each phase's offset (3-D
 * and 2-D).  Registered last: the seeds come
 * from the case count. */
static void conv_dgrad_one_launch_cases(void)
{
    static const char *const dts[] = {"f16", "bf16"};
    struct { const char *name; win_cfg w; } cfgs[] = {
        {"olp-3d-c24-k40-s2-odd", cfg(3, 2, 24, 40, 1, (int[]){9, 11, 13}, (int[]){3, 3, 3}, (int[]){2, 2, 2}, NULL,
                                      (int[]){1, 1, 1}, (int[]){1, 1, 1}, false)},
        {"olp-3d-c64-k128-s2", cfg(3, 2, 64, 128, 1, (int[]){8, 10, 12}, (int[]){3, 3, 3}, (int[]){2, 2, 2}, NULL,
                                   (int[]){1, 1, 1}, (int[]){1, 1, 1}, false)},
        {"olp-3d-c136-k24-s2-asym", cfg(3, 1, 136, 24, 1, (int[]){7, 9, 8}, (int[]){3, 3, 3}, (int[]){2, 2, 2}, NULL,
                                        (int[]){1, 0, 1}, (int[]){0, 1, 1}, false)},
        {"olp-3d-c32-k16-s2d", cfg(3, 2, 32, 16, 1, (int[]){9, 7, 6}, (int[]){3, 3, 3}, (int[]){2, 1, 1}, NULL,
                                   (int[]){1, 1, 1}, (int[]){1, 1, 1}, false)},
        {"olp-3d-c16-k24-2x2x2-s3", cfg(3, 2, 16, 24, 1, (int[]){10, 8, 11}, (int[]){2, 2, 2}, (int[]){3, 3, 3},
                                        NULL, NULL, NULL, false)},
        {"olp-2d-c40-k24-3x3-s2-odd", cfg(2, 3, 40, 24, 1, (int[]){15, 13}, (int[]){3, 3}, (int[]){2, 2}, NULL,
                                          (int[]){1, 1}, (int[]){1, 1}, false)},
        {"olp-2d-c24-k40-2x2-s3", cfg(2, 2, 24, 40, 1, (int[]){13, 11}, (int[]){2, 2}, (int[]){3, 3}, NULL, NULL,
                                      NULL, false)},
        {"olp-1d-c24-k8-5-s2", cfg(1, 3, 24, 8, 1, (int[]){61}, (int[]){5}, (int[]){2}, NULL, (int[]){2}, (int[]){2},
                                   false)},
        {"olp-1d-c16-k24-2-s3", cfg(1, 2, 16, 24, 1, (int[]){50}, (int[]){2}, (int[]){3}, NULL, NULL, NULL, false)},
    };
    for (int ci = 0; ci < (int)(sizeof cfgs / sizeof cfgs[0]); ci++)
        for (int ti = 0; ti < 2; ti++)
            if (!opts.quick || ti == ci % 2) {
                wgmma_case(cfgs[ci].name, &cfgs[ci].w, dts[ti], 1, 0, "GEMMs in one launch");
                cases[ncases - 1].one_launch = cfgs[ci].w.nsp < 3;
            }
    /* the 2-D phases TMA would load, in one launch by XDNN_DGRAD_ONE_LAUNCH=1 */
    const win_cfg t = cfg(2, 2, 64, 64, 1, (int[]){13, 11}, (int[]){3, 3}, (int[]){2, 2}, NULL, (int[]){1, 1},
                          (int[]){1, 1}, false);
    wgmma_case("olp-force-2d-c64-k64-3x3-s2", &t, "bf16", 1, 0, "GEMMs in one launch");
    cases[ncases - 1].one_launch = true;
    /* the relu_bwd mask read at each phase's offset: the 3-D and the 2-D stride-2 sets above */
    static const char *const mdt[2] = {"bf16", "f16"};
    const win_cfg *mw[2] = {&cfgs[0].w, &cfgs[5].w};
    for (int i = 0; i < 2; i++) {
        char name[48];
        snprintf(name, sizeof name, "olp-dge-%dd-s2", mw[i]->nsp);
        tcase *tc = dgrad_relu_case(name, mdt[i], mw[i], "", "conv_igemm_wgmma", false);
        if (!tc)
            continue;
        tc->one_launch = mw[i]->nsp < 3;
        tc->force = "conv_dgrad";
        tc->want_parts = 2;
        tc->want_detail = "GEMMs in one launch";
        tc->want_detail2 = "fused epilogue relu_bwd";
    }
}

/* The im2col loads' tap offsets (session 10's review): a 4-d im2col instruction carries offsets up to 255 only
 * (PTX ISA), so a filter reaching further, (S - 1) * dw = 300 here (WaveNet's dilations run to 512), must take
 * the cp.async gather in both Hopper conv engines, forward and weight gradient, and stay correct.  Registered
 * last: the seeds come from the case count. */
static void conv_tma_offset_cases(void)
{
    const win_cfg w = cfg(1, 2, 64, 64, 1, (int[]){700}, (int[]){2}, NULL, (int[]){300}, NULL, NULL, false);
    wgmma_case("wgt-1d-c64-k64-dil300-cpasync", &w, "bf16", 0, 0, "cp.async producer");
    tcase *c = wgrad_wgmma_case("x-1d-c64-k64-dil300-cpasync", &w, "f16");
    c->want_detail = "x by cp.async";
}

/* conv_f32_gemm (f32 through cuBLASLt's f32 / tf32 GEMM on an im2col),
 * forced: fwd, dgrad and wgrad, NCHW and NHWC, odd C and K (1, 3, 7, 13,
 * 130), 1x1 (x read in place at stride 1, im2col at stride 2), 3x3 s1 / s2
 * with asymmetric pads, dilation 2, the 7x7 s2 C = 3 stem, 1-D and 3-D,
 * N = 1 and chunks of images forced (N = 5 in chunks of 2), tf32 on half
 * the configurations (METHOD.md's tf32 model), x NCHW with y NHWC; and the
 * refusals (groups, dtype). */
static void conv_f32_gemm_cases(void)
{
    struct { const char *name; win_cfg w; int images; const char *detail; } cfgs[] = {
        {"f32g-3x3-c13-k7", cfg(2, 2, 13, 7, 1, (int[]){11, 9}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                (int[]){1, 1}, false), 0, "im2col"},
        {"f32g-s2-asym-c7-k13", cfg(2, 3, 7, 13, 1, (int[]){13, 10}, (int[]){3, 2}, (int[]){2, 2}, NULL,
                                    (int[]){1, 0}, (int[]){0, 2}, false), 0, NULL},
        {"f32g-dil2-c3-k5", cfg(2, 2, 3, 5, 1, (int[]){12, 11}, (int[]){3, 3}, NULL, (int[]){2, 2}, (int[]){2, 1},
                                (int[]){2, 1}, false), 0, NULL},
        {"f32g-stem-c3-k16-7x7-s2", cfg(2, 2, 3, 16, 1, (int[]){29, 31}, (int[]){7, 7}, (int[]){2, 2}, NULL,
                                        (int[]){3, 3}, (int[]){3, 3}, false), 0, NULL},
        {"f32g-1x1-c130-k13", cfg(2, 3, 130, 13, 1, (int[]){5, 6}, (int[]){1, 1}, NULL, NULL, NULL, NULL, false), 0,
         "in place"},
        {"f32g-1x1-s2-c13-k130", cfg(2, 2, 13, 130, 1, (int[]){9, 7}, (int[]){1, 1}, (int[]){2, 2}, NULL, NULL,
                                     NULL, false), 0, NULL},
        {"f32g-c1-k1-n1", cfg(2, 1, 1, 1, 1, (int[]){7, 5}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1}, (int[]){1, 1},
                              false), 0, NULL},
        {"f32g-1d-s2-dil2", cfg(1, 2, 7, 3, 1, (int[]){41}, (int[]){5}, (int[]){2}, (int[]){2}, (int[]){3},
                                (int[]){1}, false), 0, NULL},
        {"f32g-3d", cfg(3, 2, 3, 5, 1, (int[]){5, 6, 7}, (int[]){2, 3, 3}, (int[]){1, 2, 1}, NULL, (int[]){1, 1, 0},
                        (int[]){0, 1, 2}, false), 0, NULL},
        {"f32g-long-c130-k7-n1", cfg(2, 1, 130, 7, 1, (int[]){13, 13}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                     (int[]){1, 1}, false), 0, NULL},
        {"f32g-chunks-c7-k13", cfg(2, 5, 7, 13, 1, (int[]){9, 8}, (int[]){3, 3}, (int[]){2, 1}, NULL, (int[]){1, 1},
                                   (int[]){1, 1}, false), 2, "3 chunk(s) of 2 image(s)"},
        {"f32g-chunks-1x1-c13-k7", cfg(2, 5, 13, 7, 1, (int[]){6, 7}, (int[]){1, 1}, NULL, NULL, NULL, NULL, false),
         2, NULL},
    };
    for (int ci = 0; ci < (int)(sizeof cfgs / sizeof cfgs[0]); ci++)
        for (int lay = 0; lay < 2; lay++)
            for (int dir = 0; dir < 3; dir++)
                for (int tf = 0; tf < 2; tf++) {
                    if (tf && (ci + lay + dir) % 2) /* tf32 on half of them */
                        continue;
                    if (opts.quick && (ci + lay + dir + tf) % 3)
                        continue;
                    conv_case_forced(cfgs[ci].name, &cfgs[ci].w, "f32", lay == 1, dir, tf == 1, "conv_f32_gemm", 1);
                    tcase *c = &cases[ncases - 1];
                    c->f32_images = cfgs[ci].images;
                    c->want_detail = cfgs[ci].detail && (cfgs[ci].images || dir == 0) ? cfgs[ci].detail : NULL;
                    c->want_detail2 = tf ? "tf32" : "32F algo";
                }
    /* x and w NCHW, y NHWC: the GEMM writes y transposed from an NCHW im2col */
    for (int tf = 0; tf < 2; tf++) {
        char id[128];
        snprintf(id, sizeof id, "conv/fwd/f32g-x-nchw-y-nhwc-c5-k9/f32%s/nchw-nhwc/2d/[2,5,10,9]", tf ? "-tf32" : "");
        tcase *c = add_case(id, 1, "conv_f32_gemm",
                            "dnn 1;\ngraph g(seed=%d, tf32=%s) {\n  input x: f32[2, 5, 10, 9] @nchw;\n"
                            "  weight w: f32[9, 5, 3, 3] @nhwc;\n  y = conv(x, w, stride=[2, 1], pad=1);\n"
                            "  output y: f32 @nhwc;\n}\n",
                            ncases * 7 + 1, tf ? "true" : "false");
        if (c) {
            c->force = "conv";
            c->tf32 = tf == 1;
            c->want_detail = "w packed";
        }
    }
    struct { const char *name; win_cfg w; const char *dt; const char *why; } no[] = {
        {"f32g-refused-groups2", cfg(2, 2, 6, 4, 2, (int[]){7, 9}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                     (int[]){1, 1}, false), "f32", "needs groups 1 for conv"},
        {"f32g-refused-f16", cfg(2, 2, 8, 8, 1, (int[]){7, 9}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1}, (int[]){1, 1},
                                 false), "f16", "all f32, got f16"},
    };
    for (int i = 0; i < (int)(sizeof no / sizeof no[0]); i++) {
        conv_case_forced(no[i].name, &no[i].w, no[i].dt, false, 0, false, "conv_f32_gemm", 1);
        cases[ncases - 1].refuse = no[i].why;
    }
    /* the forward and dgrad as per-image batched GEMMs (XDNN_F32GEMM_FLAT=0; the cases above, whose P*Q are
     * small, take one GEMM over the chunk where x is not read in place), both layouts, tf32 on odd rows */
    for (int ci = 0; ci < (int)(sizeof cfgs / sizeof cfgs[0]); ci++)
        for (int lay = 0; lay < 2; lay++)
            for (int dir = 0; dir < 2; dir++) {
                const bool tf = (ci + lay + dir) % 3 == 0;
                if (opts.quick && (ci + lay + dir) % 3 != 1)
                    continue;
                conv_case_forced(cfgs[ci].name, &cfgs[ci].w, "f32", lay == 1, dir, tf, "conv_f32_gemm", 1);
                tcase *c = &cases[ncases - 1];
                snprintf(c->id + strlen(c->id), sizeof c->id - strlen(c->id), "/batched");
                c->f32_images = cfgs[ci].images;
                c->f32_flat = "0";
                c->reject_detail = "one GEMM";
            }
}

/* conv_f32_gemm's fused epilogues (session 11, issue 11), forced, "f32e-" in every id: per-channel bias, relu,
 * bias + relu, gelu and bias + gelu_tanh (the pass: cuBLASLt's GELU was 5e-5 off), residual (C in place), bias + residual
 * + relu (two C's: the pass), a leading scale (alpha) with bias and relu, sigmoid after a scale and an add (the
 * pass), and an f16 output cast (the flat form); NCHW and NHWC, tf32 on half; odd K; per-image GEMMs (the
 * epilogue in cuBLASLt's store), the flat form (the scatter), x read in place (1x1) and chunks of 2 of 5
 * images (the last chunk's own plan).  Each must run as ONE partition on conv_f32_gemm, its detail naming
 * where the epilogue ran.  Then the dgrad's relu_bwd mask: in the col2im gather (per-image and flat), in place
 * where dx is the GEMM's own (1x1), stride 2, a leaky / clipped slope.  Registered last: the seeds come from
 * the case count. */
static void conv_f32_epi_cases(void)
{
    static const struct { const char *name, *expr, *where; bool cast; } acts[] = {
        {"bias", "conv(x, w, %s) + b", "in cublasLt, C = the broadcast bias", false},
        {"relu", "relu(conv(x, w, %s))", "in cublasLt", false},
        {"bias-relu", "relu(conv(x, w, %s) + b)", "in cublasLt, C = the broadcast bias", false},
        {"gelu", "gelu(conv(x, w, %s))", "by a pass", false},
        {"bias-gelu-tanh", "gelu(b + conv(x, w, %s), approx=\"tanh\")", "by a pass", false},
        {"res", "conv(x, w, %s) + r", "in cublasLt, C = the residual", false},
        {"bias-res-relu", "relu(conv(x, w, %s) + b + r)", "by a pass", false},
        {"scale-bias-relu", "relu(conv(x, w, %s) * 0.75 + b)", "in cublasLt, C = the broadcast bias", false},
        {"sigmoid-scale", "sigmoid(conv(x, w, %s) * 0.75 - 0.5)", "by a pass", false},
        {"bias-relu-f16", "relu(conv(x, w, %s) + b)", "in the scatter, y cast", true},
    };
    struct { const char *name; win_cfg w; int images; const char *flat; } cfgs[] = {
        {"f32e-3x3-c13-k7", cfg(2, 2, 13, 7, 1, (int[]){11, 9}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                (int[]){1, 1}, false), 0, "0"},
        {"f32e-s2-asym-c7-k13-flat", cfg(2, 3, 7, 13, 1, (int[]){13, 10}, (int[]){3, 2}, (int[]){2, 2}, NULL,
                                         (int[]){1, 0}, (int[]){0, 2}, false), 0, NULL},
        {"f32e-1x1-c130-k13", cfg(2, 3, 130, 13, 1, (int[]){5, 6}, (int[]){1, 1}, NULL, NULL, NULL, NULL, false), 0,
         NULL},
        {"f32e-chunks-c7-k13", cfg(2, 5, 7, 13, 1, (int[]){9, 8}, (int[]){3, 3}, (int[]){2, 1}, NULL, (int[]){1, 1},
                                   (int[]){1, 1}, false), 2, "0"},
    };
    const int ncfg = (int)(sizeof cfgs / sizeof cfgs[0]), nact = (int)(sizeof acts / sizeof acts[0]);
    for (int ci = 0; ci < ncfg; ci++)
        for (int ai = 0; ai < nact; ai++)
            for (int lay = 0; lay < 2; lay++) {
                if (opts.quick && (ci + ai + lay) % 3)
                    continue;
                const win_cfg *w = &cfgs[ci].w;
                const bool tf = (ci + ai + lay) % 2 == 1;
                conv_text ct;
                conv_strs(w, &ct);
                const char *l = layout_tag(w->nsp, lay == 1);
                char bs[96], expr[512], id[192], rdecl[160] = "";
                dims_str(bs, sizeof bs, 1, w->k, w->nsp, (int[]){1, 1, 1});
                snprintf(expr, sizeof expr, acts[ai].expr, ct.attrs);
                snprintf(id, sizeof id, "conv/fwd+epi/%s/%s/f32%s/%s", cfgs[ci].name, acts[ai].name, tf ? "-tf32" : "",
                         l);
                if (strstr(acts[ai].expr, " r"))
                    snprintf(rdecl, sizeof rdecl, "  input r: f32%s @%s;\n", ct.ys, l);
                tcase *tc = add_case(id, 1, "conv_f32_gemm",
                                     "dnn 1;\ngraph g(seed=%d, tf32=%s) {\n  input x: f32%s @%s;\n"
                                     "  weight w: f32%s @%s;\n  weight b: f32%s;\n%s  y = %s;\n  output y: %s @%s;\n}\n",
                                     ncases * 3 + 11, tf ? "true" : "false", ct.xs, l, ct.ws, l, bs, rdecl, expr,
                                     acts[ai].cast ? "f16" : "f32", l);
                if (!tc)
                    continue;
                tc->force = "conv";
                tc->tf32 = tf;
                tc->want_parts = 1;
                tc->f32_images = cfgs[ci].images;
                tc->f32_flat = cfgs[ci].flat;
                /* cuBLASLt's store serves the per-image GEMMs; the flat form's scatter carries every epilogue */
                tc->want_detail = ci == 1 ? "in the scatter" : acts[ai].where;
                tc->want_detail2 = "fused epilogue";
            }
    /* the same chain on the pass (XDNN_F32GEMM_LTEPI=0 is not a case knob: a leaky relu is no cuBLASLt act) */
    tcase *tc = add_case("conv/fwd+epi/f32e-3x3-c13-k7/bias-leaky/f32/nchw", 1, "conv_f32_gemm",
                         "dnn 1;\ngraph g(seed=%d) {\n  input x: f32[2, 13, 11, 9];\n  weight w: f32[7, 13, 3, 3];\n"
                         "  weight b: f32[1, 7, 1, 1];\n  y = relu(conv(x, w, pad=1) + b, slope=0.125);\n"
                         "  output y: f32;\n}\n", ncases * 3 + 11);
    if (tc) {
        tc->force = "conv";
        tc->want_parts = 1;
        tc->f32_flat = "0";
        tc->want_detail = "by a pass";
    }
    /* the dgrad's relu_bwd mask */
    struct { const char *name; win_cfg w; const char *args, *flat, *detail; } dg[] = {
        {"f32e-dge-c13-k7-3x3", cfg(2, 2, 13, 7, 1, (int[]){11, 9}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                    (int[]){1, 1}, false), "", "0", "in the col2im"},
        {"f32e-dge-c7-k13-3x3-s2-flat", cfg(2, 3, 7, 13, 1, (int[]){13, 10}, (int[]){3, 3}, (int[]){2, 2}, NULL,
                                            (int[]){1, 1}, (int[]){1, 0}, false), "", NULL, "in the col2im"},
        {"f32e-dge-c130-k13-1x1", cfg(2, 3, 130, 13, 1, (int[]){5, 6}, (int[]){1, 1}, NULL, NULL, NULL, NULL, false),
         "", NULL, "by a pass"},
        {"f32e-dge-leaky-clip-c7-k5-3x3-s2", cfg(2, 1, 7, 5, 1, (int[]){11, 9}, (int[]){3, 3}, (int[]){2, 2}, NULL,
                                                 (int[]){1, 1}, (int[]){1, 1}, false),
         ", slope=0.125, upper=0.5", "0", "in the col2im"},
    };
    for (int i = 0; i < (int)(sizeof dg / sizeof dg[0]); i++) {
        tcase *c = dgrad_relu_case(dg[i].name, "f32", &dg[i].w, dg[i].args, "conv_f32_gemm", false);
        if (!c)
            continue;
        c->force = "conv_dgrad";
        c->want_parts = 2;
        c->f32_flat = dg[i].flat;
        c->want_detail = dg[i].detail;
        c->want_detail2 = "fused epilogue relu_bwd";
    }
}

/* conv_stem (session 11: the small-C 2-D conv as an implicit GEMM whose im2col fragments come from the CTA's
 * input patch in shared memory; kern_conv_stem.h), forced, "stem-" in every id, fwd and wgrad, f16 and bf16: the
 * ResNet stem at N = 1 and N = 5 on an odd 97x223 map (a partial row of tiles), C = 1 / 2 / 4 / 8, K = 7, 16, 24,
 * 64 and 136 (two 64-channel blocks and a tail), 3x3 stride 1, 5x5, 7x7 stride 2 and 3, asymmetric pads, odd
 * H / W (OW = 29: partial 16-pixel tiles), C = 8 7x7 (the weight gradient's 392 columns in 3 chunks of 160);
 * refusals named: dilation 2, C = 16, a 9x9 window.  Registered last: the seeds come from the case count. */
static void conv_stem_cases(void)
{
    static const char *const dts[] = {"f16", "bf16"};
    struct { const char *name; win_cfg w; } cfgs[] = {
        {"stem-r50-n1", cfg(2, 1, 3, 64, 1, (int[]){224, 224}, (int[]){7, 7}, (int[]){2, 2}, NULL, (int[]){3, 3},
                            (int[]){3, 3}, false)},
        {"stem-r50-n5-97x223", cfg(2, 5, 3, 64, 1, (int[]){97, 223}, (int[]){7, 7}, (int[]){2, 2}, NULL,
                                   (int[]){3, 3}, (int[]){3, 3}, false)},
        {"stem-c1-k24-3x3-37x29", cfg(2, 2, 1, 24, 1, (int[]){37, 29}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                      (int[]){1, 1}, false)},
        {"stem-c4-k7-7x7-s2-asym", cfg(2, 3, 4, 7, 1, (int[]){45, 38}, (int[]){7, 7}, (int[]){2, 2}, NULL,
                                       (int[]){3, 2}, (int[]){2, 3}, false)},
        {"stem-c4-k64-7x7-s2-61x57", cfg(2, 2, 4, 64, 1, (int[]){61, 57}, (int[]){7, 7}, (int[]){2, 2}, NULL,
                                         (int[]){3, 3}, (int[]){3, 3}, false)},
        {"stem-c3-k136-3x3-s2", cfg(2, 2, 3, 136, 1, (int[]){19, 23}, (int[]){3, 3}, (int[]){2, 2}, NULL,
                                    (int[]){1, 1}, (int[]){1, 1}, false)},
        {"stem-c2-k16-7x7-s3-asym", cfg(2, 2, 2, 16, 1, (int[]){40, 33}, (int[]){7, 7}, (int[]){3, 3}, NULL,
                                        (int[]){1, 3}, (int[]){2, 0}, false)},
        {"stem-c8-k24-7x7-30x27", cfg(2, 1, 8, 24, 1, (int[]){30, 27}, (int[]){7, 7}, NULL, NULL, (int[]){3, 3},
                                      (int[]){3, 3}, false)},
        {"stem-c3-k64-5x3-s2x1", cfg(2, 3, 3, 64, 1, (int[]){21, 35}, (int[]){5, 3}, (int[]){2, 1}, NULL,
                                     (int[]){2, 0}, (int[]){1, 2}, false)},
    };
    for (int ci = 0; ci < (int)(sizeof cfgs / sizeof cfgs[0]); ci++)
        for (int ti = 0; ti < 2; ti++)
            for (int dir = 0; dir < 3; dir += 2) {
                if (opts.quick && (ti != ci % 2 || ci == 0))
                    continue;
                conv_case_forced(cfgs[ci].name, &cfgs[ci].w, dts[ti], true, dir, false, "conv_stem", 1);
                cases[ncases - 1].want_detail = dir == 0 ? "implicit-GEMM fwd" : "implicit-GEMM wgrad";
            }
    struct { const char *name; win_cfg w; int dir; const char *why; } no[] = {
        {"stem-refused-dil2", cfg(2, 2, 3, 16, 1, (int[]){15, 13}, (int[]){3, 3}, NULL, (int[]){2, 2},
                                  (int[]){2, 2}, (int[]){2, 2}, false), 0, "needs dilation 1, got dilation=[2, 2]"},
        {"stem-refused-c16", cfg(2, 2, 16, 16, 1, (int[]){9, 9}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                 (int[]){1, 1}, false), 2, "runs C <= 8"},
        {"stem-refused-9x9", cfg(2, 1, 3, 16, 1, (int[]){20, 20}, (int[]){9, 9}, NULL, NULL, (int[]){4, 4},
                                 (int[]){4, 4}, false), 0, "windows up to 7x7, got 9x9"},
    };
    for (int i = 0; i < (int)(sizeof no / sizeof no[0]); i++) {
        conv_case_forced(no[i].name, &no[i].w, "bf16", true, no[i].dir, false, "conv_stem", 1);
        cases[ncases - 1].refuse = no[i].why;
    }
    /* session 11, second pass: +Inf in x where no valid output reads it (7x7 stride 2, no pad, 20x22: OH = 7,
     * OW = 8, so input row 19 and column 21 fall past the last window, inside the patch of the tile's pixels past
     * OH / OW): the reference stays finite, and so must dw (the weight gradient multiplied those pixels' zero dy
     * by the staged Inf: NaN) and y (the forward's padding column of a filter row reads column 21, c 0 for the
     * last valid pixel: masked, not multiplied) */
    const win_cfg inf_w = cfg(2, 2, 3, 64, 1, (int[]){20, 22}, (int[]){7, 7}, (int[]){2, 2}, NULL, NULL, NULL, false);
    for (int ti = 0; ti < 2; ti++)
        for (int dir = 0; dir < 3; dir += 2) {
            if (opts.quick && ti != dir / 2)
                continue;
            conv_case_forced("stem-inf-past-edge-20x22", &inf_w, dts[ti], true, dir, false, "conv_stem", 1);
            tcase *c = &cases[ncases - 1];
            memcpy(c->x_inf, (int[2][5]){{1, 2, 19, 4}, {0, 0, 9, 21}}, sizeof c->x_inf);
        }
}

/* conv_igemm_wgmma's ping-pong consumers (session 12: each consumer warpgroup a whole 128 x 64 tile, the two
 * taking turns; kern_conv_wgmma.h), forced, "wgpp" in every id, XDNN_CONV_WGMMA_PINGPONG=1, each detail holding
 * "ping-pong": M tails (M % 128 != 0), a CTA with one item (warpgroup 1 idle: its turn empty) and maps of 313
 * items (CTAs of 2 and 3: an odd count leaves the last turn empty), N = 1, K = 64, 72 (two tiles, an 8-column
 * tail) and 136, K = 128 (the 128-wide tile: cooperative, not ping-pong), C = 64 with pads 1, 2 and asymmetric,
 * stride 2, a 1-D conv, C = 24 (the cp.async producer), unsplit (XDNN_CONV_SPLITK=1) but for split-K 3 (the
 * partials' store); the fused epilogues bias + relu and bias + residual + relu, which must run cooperative (the
 * ping-pong store ran them correctly in session 12's calls but 0.87-0.89x slower); the dgrad (stride 1, and stride 2's phases) and the relu_bwd-masked
 * dgrad (3x3, 1x1 with a 256-deep reduction, 1x1 stride 2 with its zero phases folded into the store); and
 * mode 0, whose detail must not say ping-pong.  Registered last: the seeds come from the case count. */
static void conv_wgmma_pingpong_cases(void)
{
    static const char *const dts[] = {"f16", "bf16"};
    const char *pp = "ping-pong";
    struct { const char *name; int dir; win_cfg w; int splitk; const char *mode, *detail; } cfgs[] = {
        {"wgpp-c64-k64-3x3-n3-13x11", 0, cfg(2, 3, 64, 64, 1, (int[]){13, 11}, (int[]){3, 3}, NULL, NULL,
                                             (int[]){1, 1}, (int[]){1, 1}, false), 1, "1", "TMA"},
        {"wgpp-c64-k64-3x3-n4-101x99", 0, cfg(2, 4, 64, 64, 1, (int[]){101, 99}, (int[]){3, 3}, NULL, NULL,
                                              (int[]){1, 1}, (int[]){1, 1}, false), 1, "1", "TMA"},
        {"wgpp-n1-c64-k72-3x3-61x59", 0, cfg(2, 1, 64, 72, 1, (int[]){61, 59}, (int[]){3, 3}, NULL, NULL,
                                             (int[]){1, 1}, (int[]){1, 1}, false), 1, "1", "tile 128x64x64"},
        {"wgpp-c64-k136-3x3-s2-n4-57x55", 0, cfg(2, 4, 64, 136, 1, (int[]){57, 55}, (int[]){3, 3}, (int[]){2, 2},
                                                 NULL, (int[]){1, 1}, (int[]){1, 1}, false), 1, "1", NULL},
        {"wgpp-c64-k64-5x5-pad2-asym", 0, cfg(2, 2, 64, 64, 1, (int[]){23, 21}, (int[]){5, 5}, NULL, NULL,
                                              (int[]){2, 3}, (int[]){3, 1}, false), 1, "1", NULL},
        {"wgpp-c24-k40-3x3-n3-41x37", 0, cfg(2, 3, 24, 40, 1, (int[]){41, 37}, (int[]){3, 3}, NULL, NULL,
                                             (int[]){1, 1}, (int[]){1, 1}, false), 1, "1", "cp.async producer"},
        {"wgpp-sk3-c192-k64-3x3", 0, cfg(2, 2, 192, 64, 1, (int[]){7, 9}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                         (int[]){1, 1}, false), 3, "1", "split-K 3"},
        {"wgpp-1d-c64-k64-s2", 0, cfg(1, 3, 64, 64, 1, (int[]){301}, (int[]){5}, (int[]){2}, NULL, (int[]){2},
                                      (int[]){1}, false), 1, "1", NULL},
        {"wgppd-c64-k64-3x3-n3-35x33", 1, cfg(2, 3, 64, 64, 1, (int[]){35, 33}, (int[]){3, 3}, NULL, NULL,
                                              (int[]){1, 1}, (int[]){1, 1}, false), 1, "1", NULL},
        {"wgppd-c64-k128-3x3-s2-n2-29x27", 1, cfg(2, 2, 64, 128, 1, (int[]){29, 27}, (int[]){3, 3},
                                                  (int[]){2, 2}, NULL, (int[]){1, 1}, (int[]){1, 1}, false),
         1, "1", "flipped-weight"},
    };
    for (int ci = 0; ci < (int)(sizeof cfgs / sizeof cfgs[0]); ci++)
        for (int ti = 0; ti < 2; ti++)
            if (!opts.quick || ti == ci % 2) {
                wgmma_case(cfgs[ci].name, &cfgs[ci].w, dts[ti], cfgs[ci].dir, cfgs[ci].splitk, pp);
                cases[ncases - 1].pingpong = cfgs[ci].mode;
                cases[ncases - 1].want_detail2 = cfgs[ci].detail;
            }
    /* mode 0: the cooperative consumers on the same tile; K = 128: the 128-wide tile, cooperative whatever the mode */
    wgmma_case("wgpp-off-c64-k64-3x3-n3-13x11", &cfgs[0].w, "bf16", 0, 0, "TMA");
    cases[ncases - 1].pingpong = "0";
    cases[ncases - 1].reject_detail = pp;
    const win_cfg k128 = cfg(2, 2, 64, 128, 1, (int[]){29, 27}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                             (int[]){1, 1}, false);
    wgmma_case("wgpp-coop-c64-k128-3x3-n2-29x27", &k128, "f16", 0, 1, "tile 128x128x64");
    cases[ncases - 1].pingpong = "1";
    cases[ncases - 1].reject_detail = pp;
    /* the fused epilogues of the forward store */
    static const struct { const char *name, *expr; } acts[] = {
        {"bias-relu", "relu(conv(x, w, %s) + b)"},
        {"bias-res-relu", "relu(conv(x, w, %s) + b + r)"},
    };
    const win_cfg *ew = &cfgs[3].w; /* stride 2, K = 136: three 64-wide tiles, the last with an 8-column tail */
    for (int ai = 0; ai < 2; ai++)
        for (int ti = 0; ti < 2; ti++) {
            if (opts.quick && ti != ai)
                continue;
            conv_text ct;
            conv_strs(ew, &ct);
            char bs[96], expr[512], id[192], rdecl[160] = "";
            dims_str(bs, sizeof bs, 1, ew->k, ew->nsp, (int[]){1, 1, 1});
            snprintf(expr, sizeof expr, acts[ai].expr, ct.attrs);
            snprintf(id, sizeof id, "conv/fwd+epi/wgpp-c64-k136-3x3-s2/%s/%s", acts[ai].name, dts[ti]);
            if (ai == 1)
                snprintf(rdecl, sizeof rdecl, "  input r: %s%s @nhwc;\n", dts[ti], ct.ys);
            tcase *tc = add_case(id, 1, "conv_igemm_wgmma",
                                 "dnn 1;\ngraph g(seed=%d) {\n  input x: %s%s @nhwc;\n  weight w: %s%s @nhwc;\n"
                                 "  weight b: %s%s;\n%s  y = %s;\n  output y: %s @nhwc;\n}\n",
                                 ncases * 3 + 11, dts[ti], ct.xs, dts[ti], ct.ws, dts[ti], bs, rdecl, expr, dts[ti]);
            if (tc) {
                tc->force = "conv";
                tc->want_parts = 1;
                tc->splitk = 1; /* unsplit: the epilogue in the ping-pong store, not split-K's reduction */
                tc->pingpong = "1";
                tc->reject_detail = pp; /* the engine keeps fused epilogues on the cooperative store */
                tc->want_detail2 = "fused epilogue";
            }
        }
    /* the relu_bwd-masked dgrad (kcw_mask_load for both halves of a warpgroup's tile) */
    struct { const char *name; win_cfg w; const char *detail; } dg[] = {
        {"wgpp-dge-c64-k64-3x3-n4-35x33", cfg(2, 4, 64, 64, 1, (int[]){35, 33}, (int[]){3, 3}, NULL, NULL,
                                              (int[]){1, 1}, (int[]){1, 1}, false), NULL},
        {"wgpp-dge-c64-k256-1x1-n3-29x31", cfg(2, 3, 64, 256, 1, (int[]){29, 31}, (int[]){1, 1}, NULL, NULL, NULL,
                                               NULL, false), NULL},
        {"wgpp-dge-c64-k128-1x1-s2-fold", cfg(2, 2, 64, 128, 1, (int[]){30, 26}, (int[]){1, 1}, (int[]){2, 2}, NULL,
                                              NULL, NULL, false), "(3 zero, 3 of them in a GEMM's store)"},
    };
    for (int i = 0; i < (int)(sizeof dg / sizeof dg[0]); i++)
        for (int ti = 0; ti < 2; ti++) {
            if (opts.quick && ti != i % 2)
                continue;
            tcase *tc = dgrad_relu_case(dg[i].name, dts[ti], &dg[i].w, "", "conv_igemm_wgmma", false);
            if (!tc)
                continue;
            tc->force = "conv_dgrad";
            tc->want_parts = 2;
            tc->pingpong = "1";
            tc->want_detail = dg[i].detail ? dg[i].detail : pp;
            tc->want_detail2 = "fused epilogue relu_bwd";
            tc->splitk = 1; /* the mask in the ping-pong store */
        }
}

/* conv_igemm_wgmma's 32-wide tile (session 12: m64n32k16, the D3 code, 11 stages; kern_conv_wgmma.h), forced,
 * "wgn" in every id, f16 and bf16: 3-D K = 32 / 24 / 8 with odd D/H/W (partial 128-row tiles), stride 2 with
 * asymmetric pads, dilation, N = 1, split-K forced; the fused bias + relu; conv_dgrad with dx C = 32 (stride 1:
 * one phase on the 32-wide tile), the stem's dx C = 4 and C = 6 (C % 8 != 0: pairs of channels in the store;
 * stride 1, and stride 2's eight phases in one launch on the 64-wide MP tile), their relu_bwd masks; 2-D on the
 * 32-wide tile by XDNN_CONV_WGMMA_BN32=1 (a C = 64 conv TMA would load otherwise, a 1x1 stride-2 dgrad with its
 * folded zero phases), and the 2-D dgrad of dx C = 4 on its default 64-wide tile.  Each says which tile ran.
 * Registered last: the seeds come from the case count. */
static void conv_wgmma_narrow_cases(void)
{
    static const char *const dts[] = {"f16", "bf16"};
    static const char t32[] = "tile 128x32x64", t64[] = "tile 128x64x64";
    struct { const char *name; int dir; win_cfg w; int splitk; const char *detail, *bn32; } cfgs[] = {
        {"wgn-3d-c32-k32-3x3x3-odd", 0, cfg(3, 2, 32, 32, 1, (int[]){7, 9, 11}, (int[]){3, 3, 3}, NULL, NULL,
                                            (int[]){1, 1, 1}, (int[]){1, 1, 1}, false), 0, t32, NULL},
        {"wgn-3d-c24-k24-s2-asym", 0, cfg(3, 2, 24, 24, 1, (int[]){9, 11, 13}, (int[]){3, 3, 3}, (int[]){2, 2, 2},
                                          NULL, (int[]){1, 0, 1}, (int[]){0, 1, 2}, false), 0, t32, NULL},
        {"wgn-3d-n1-c16-k8-dil", 0, cfg(3, 1, 16, 8, 1, (int[]){8, 9, 10}, (int[]){3, 3, 3}, NULL, (int[]){2, 1, 2},
                                        (int[]){2, 1, 2}, (int[]){2, 1, 2}, false), 0, t32, NULL},
        {"wgn-3d-sk3-c32-k32", 0, cfg(3, 1, 32, 32, 1, (int[]){5, 6, 7}, (int[]){3, 3, 3}, NULL, NULL,
                                      (int[]){1, 1, 1}, (int[]){1, 1, 1}, false), 3, "split-K 3", NULL},
        {"wgn-3dp-c4-k32-stem", 0, cfg(3, 1, 4, 32, 1, (int[]){9, 10, 11}, (int[]){3, 3, 3}, NULL, NULL,
                                       (int[]){1, 1, 1}, (int[]){1, 1, 1}, false), 0, "C 4 -> 8", NULL},
        {"wgnd-3d-c32-k32-3x3x3-odd", 1, cfg(3, 2, 32, 32, 1, (int[]){7, 9, 11}, (int[]){3, 3, 3}, NULL, NULL,
                                             (int[]){1, 1, 1}, (int[]){1, 1, 1}, false), 0, t32, NULL},
        {"wgnd-3d-n1-c4-k32-stem", 1, cfg(3, 1, 4, 32, 1, (int[]){9, 10, 11}, (int[]){3, 3, 3}, NULL, NULL,
                                          (int[]){1, 1, 1}, (int[]){1, 1, 1}, false), 0, t32, NULL},
        {"wgnd-3d-c6-k16-asym", 1, cfg(3, 2, 6, 16, 1, (int[]){7, 8, 9}, (int[]){3, 3, 3}, NULL, NULL,
                                       (int[]){1, 0, 1}, (int[]){0, 2, 1}, false), 0, t32, NULL},
        {"wgnd-3d-c4-k32-s2", 1, cfg(3, 2, 4, 32, 1, (int[]){9, 10, 11}, (int[]){3, 3, 3}, (int[]){2, 2, 2}, NULL,
                                     (int[]){1, 1, 1}, (int[]){1, 1, 1}, false), 0, "GEMMs in one launch", NULL},
        {"wgnd-3d-sk2-c32-k16", 1, cfg(3, 1, 32, 16, 1, (int[]){5, 6, 7}, (int[]){3, 3, 3}, NULL, NULL,
                                       (int[]){1, 1, 1}, (int[]){1, 1, 1}, false), 2, "split-K 2", NULL},
        {"wgn-2d-c64-k32-3x3-bn32", 0, cfg(2, 2, 64, 32, 1, (int[]){13, 11}, (int[]){3, 3}, NULL, NULL,
                                           (int[]){1, 1}, (int[]){1, 1}, false), 0, "128x32x64, 11 stages, wgmma "
                                           "m64n32k16, cp.async", "1"},
        {"wgnd-2d-c24-k40-1x1-s2-bn32", 1, cfg(2, 2, 24, 40, 1, (int[]){14, 12}, (int[]){1, 1}, (int[]){2, 2},
                                               NULL, NULL, NULL, false), 0, "3 of them in a GEMM's store", "1"},
        {"wgnd-2d-c4-k16-3x3", 1, cfg(2, 2, 4, 16, 1, (int[]){13, 11}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                      (int[]){1, 1}, false), 0, t64, NULL},
    };
    for (int ci = 0; ci < (int)(sizeof cfgs / sizeof cfgs[0]); ci++)
        for (int ti = 0; ti < 2; ti++)
            if (!opts.quick || ti == ci % 2) {
                wgmma_case(cfgs[ci].name, &cfgs[ci].w, dts[ti], cfgs[ci].dir, cfgs[ci].splitk, cfgs[ci].detail);
                cases[ncases - 1].bn32 = cfgs[ci].bn32;
            }
    /* the fused epilogue on the 32-wide tile: bias + relu (N = 1, odd dims), the relu_bwd masks of the C = 32
     * and the C = 4 dgrads (pairs of 16-bit mask values at dx's even channel offsets) */
    const win_cfg ew = cfg(3, 1, 32, 32, 1, (int[]){7, 6, 9}, (int[]){3, 3, 3}, NULL, NULL, (int[]){1, 1, 1},
                           (int[]){1, 1, 1}, false);
    tcase *tc = bias_relu_3d_case("conv/fwd+epi/wgn-3d-n1-c32-k32/bias-relu/f16/ndhwc/3d", &ew, "f16");
    if (tc)
        tc->want_detail2 = t32;
    const win_cfg *mw[2] = {&cfgs[5].w, &cfgs[6].w};
    for (int i = 0; i < 2; i++) {
        char name[48];
        snprintf(name, sizeof name, "wgn-dge-3d-c%d", mw[i]->c);
        tc = dgrad_relu_case(name, dts[1 - i], mw[i], "", "conv_igemm_wgmma", false);
        if (!tc)
            continue;
        tc->force = "conv_dgrad";
        tc->want_parts = 2;
        tc->want_detail = t32;
        tc->want_detail2 = "fused epilogue relu_bwd";
    }
}

/* conv_igemm_wgmma's 5-d TMA producer for 3-D convs (session 13: x through a 5-d im2col map, one bulk copy a tap
 * and slice; XDNN_CONV_WGMMA_TMA3D), forced, "tm3" in every id, f16 and bf16, each case with the switch on ("on/"
 * in the id: its detail must say "5-d im2col") and the first three off too ("off/": "cp.async"): C = 32 (a slice
 * two taps' 32-channel boxes, 64-byte swizzled halves; 27 taps: the last slice half past the reduction) on the
 * 32- and 64-wide tiles, C = 64 / 128 (a slice one tap's 64 channels; 128: two slices a tap), odd D/H/W (partial
 * 128-row tiles across planes and images), pads 0 / 1 / asymmetric, stride 2 in every dim, dilation 2, a 1x3x5
 * filter, N = 1, split-K 3 (a split starting mid-filter), conv_dgrad stride 1 (one phase: the forward's producer
 * on dy, C = K = 32 and 64), the fused bias + relu; and C = 48 (neither: the gather, "cp.async", with the switch
 * on).  Registered last: the seeds come from the case count. */
static void conv_wgmma_tma3d_cases(void)
{
    static const char *const dts[] = {"f16", "bf16"};
    static const char t5[] = "TMA (5-d im2col x, tiled w)", ca[] = "cp.async producer";
    struct { const char *name; int dir; win_cfg w; int splitk; const char *detail2; } cfgs[] = {
        {"tm3-c32-k32-3x3x3-odd", 0, cfg(3, 2, 32, 32, 1, (int[]){7, 9, 11}, (int[]){3, 3, 3}, NULL, NULL,
                                         (int[]){1, 1, 1}, (int[]){1, 1, 1}, false), 0, "tile 128x32x64"},
        {"tm3-c64-k64-3x3x3-odd", 0, cfg(3, 2, 64, 64, 1, (int[]){9, 7, 5}, (int[]){3, 3, 3}, NULL, NULL,
                                         (int[]){1, 1, 1}, (int[]){1, 1, 1}, false), 0, "tile 128x64x64"},
        {"tm3d-c32-k32-3x3x3-odd", 1, cfg(3, 2, 32, 32, 1, (int[]){7, 9, 11}, (int[]){3, 3, 3}, NULL, NULL,
                                          (int[]){1, 1, 1}, (int[]){1, 1, 1}, false), 0, "tile 128x32x64"},
        {"tm3-c32-k64-s2-asym", 0, cfg(3, 2, 32, 64, 1, (int[]){9, 11, 13}, (int[]){3, 3, 3}, (int[]){2, 2, 2},
                                       NULL, (int[]){1, 0, 1}, (int[]){0, 1, 2}, false), 0, "tile 128x64x64"},
        {"tm3-c64-k32-s2-pad0", 0, cfg(3, 1, 64, 32, 1, (int[]){11, 9, 7}, (int[]){3, 3, 3}, (int[]){2, 2, 2},
                                       NULL, NULL, NULL, false), 0, "tile 128x32x64"},
        {"tm3-c128-k128-3x3x3", 0, cfg(3, 2, 128, 128, 1, (int[]){6, 5, 7}, (int[]){3, 3, 3}, NULL, NULL,
                                       (int[]){1, 1, 1}, (int[]){1, 1, 1}, false), 0, "tile 128x128x64"},
        {"tm3-c32-k32-dil2", 0, cfg(3, 2, 32, 32, 1, (int[]){9, 8, 7}, (int[]){3, 3, 3}, NULL, (int[]){2, 2, 2},
                                    (int[]){2, 2, 2}, (int[]){2, 2, 2}, false), 0, NULL},
        {"tm3-sk3-c32-k32", 0, cfg(3, 1, 32, 32, 1, (int[]){5, 6, 7}, (int[]){3, 3, 3}, NULL, NULL,
                                   (int[]){1, 1, 1}, (int[]){1, 1, 1}, false), 3, "split-K 3"},
        {"tm3-n1-c64-k40-1x3x5", 0, cfg(3, 1, 64, 40, 1, (int[]){5, 9, 13}, (int[]){1, 3, 5}, NULL, NULL,
                                        (int[]){0, 1, 2}, (int[]){0, 1, 2}, false), 0, NULL},
        {"tm3d-c64-k64-3x3x3-odd", 1, cfg(3, 2, 64, 64, 1, (int[]){7, 5, 9}, (int[]){3, 3, 3}, NULL, NULL,
                                          (int[]){1, 1, 1}, (int[]){1, 1, 1}, false), 0, NULL},
        {"tm3d-c64-k32-asym", 1, cfg(3, 1, 64, 32, 1, (int[]){6, 7, 9}, (int[]){3, 3, 3}, NULL, NULL,
                                     (int[]){1, 0, 2}, (int[]){1, 2, 0}, false), 0, NULL},
    };
    for (int ci = 0; ci < (int)(sizeof cfgs / sizeof cfgs[0]); ci++)
        for (int on = 1; on >= (ci < 3 ? 0 : 1); on--)
            for (int ti = 0; ti < 2; ti++) {
                if (opts.quick && ti != (ci + on) % 2)
                    continue;
                char name[96];
                snprintf(name, sizeof name, "%s/%s", on ? "on" : "off", cfgs[ci].name);
                wgmma_case(name, &cfgs[ci].w, dts[ti], cfgs[ci].dir, cfgs[ci].splitk, on ? t5 : ca);
                cases[ncases - 1].tma3d = on ? "1" : "0";
                cases[ncases - 1].want_detail2 = cfgs[ci].detail2;
            }
    /* C = 48: no 5-d map serves it (a 64-channel box would span two taps, a 32-channel one leaves 16) */
    const win_cfg c48 = cfg(3, 2, 48, 32, 1, (int[]){5, 6, 7}, (int[]){3, 3, 3}, NULL, NULL, (int[]){1, 1, 1},
                            (int[]){1, 1, 1}, false);
    wgmma_case("on/tm3-c48-k32-gather", &c48, "bf16", 0, 0, ca);
    cases[ncases - 1].tma3d = "1";
    /* the fused bias + relu behind the 5-d producer */
    const win_cfg ew = cfg(3, 1, 32, 32, 1, (int[]){7, 6, 9}, (int[]){3, 3, 3}, NULL, NULL, (int[]){1, 1, 1},
                           (int[]){1, 1, 1}, false);
    tcase *tc = bias_relu_3d_case("conv/fwd+epi/on/tm3-n1-c32-k32/bias-relu/bf16/ndhwc/3d", &ew, "bf16");
    if (tc) {
        tc->tma3d = "1";
        tc->want_detail2 = t5;
    }
    /* session 14: +Inf in x inside the volume, where every tap reads it for some output: with C = 32 and 27 taps
     * the last slice's second half read the last tap's pixels again against w's zero columns (Inf x 0 = NaN
     * where the reference has +-Inf, 0 after the relu); it now reads images past N (TMA's zeros) */
    const win_cfg infw = cfg(3, 2, 32, 32, 1, (int[]){7, 9, 11}, (int[]){3, 3, 3}, NULL, NULL, (int[]){1, 1, 1},
                             (int[]){1, 1, 1}, false);
    for (int dir = 0; dir < 2; dir++) {
        wgmma_case(dir ? "on/tm3d-inf-c32-k32-3x3x3" : "on/tm3-inf-c32-k32-3x3x3", &infw, "bf16", dir, 0, t5);
        cases[ncases - 1].tma3d = "1";
        memcpy(cases[ncases - 1].x_inf, (int[2][5]){{1, 5, 3, 4, 6}, {0, 31, 6, 8, 10}}, sizeof cases[0].x_inf);
    }
    tc = bias_relu_3d_case("conv/fwd+epi/on/tm3-inf-n1-c32-k32/bias-relu/bf16/ndhwc/3d", &ew, "bf16");
    if (tc) {
        tc->tma3d = "1";
        tc->want_detail2 = t5;
        memcpy(tc->x_inf, (int[2][5]){{0, 7, 3, 2, 4}, {0, 0, 0, 0, 1}}, sizeof tc->x_inf);
    }
}

/* conv_dw v2 (kernels/conv_dw_tile.cu; session 12, the default since
 * session 13): every case with XDNN_CONV_DW_V2 unset (the default, v2: the
 * id's "v2/") and =0 ("v1/").  On, the shapes v2 takes must say "v2 2-D tile" in the detail and
 * the others (C = 21, dilation 2) must not; off, none may.  The stride-2
 * dgrad (v1's gather until session 13) is here off only, as registered then
 * (the seeds); conv_dw_v2_phase_cases runs it on v2.  Odd shapes for the tile's edges: 13 and 57 (a partial last tile of
 * rows and of columns), 7 (TH = 2: 4 tiles of rows, the last half empty),
 * 112 (TH = 4, whole tiles), asymmetric pads, N = 1 and 3, C = 144 (two
 * slices of 9 vectors) and 960 (8 slices of 15).  Not forced: the cost
 * model must choose conv_dw. */
static void conv_dw_v2_cases(void)
{
    static const char *const dts[] = {"f16", "bf16"};
    struct { const char *name; win_cfg w; bool fits, dgrad; } cfgs[] = {
        {"dwv2-c144-3x3-13x13", cfg(2, 3, 144, 144, 144, (int[]){13, 13}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                    (int[]){1, 1}, false), true, true},
        {"dwv2-c960-3x3-7x7-n1", cfg(2, 1, 960, 960, 960, (int[]){7, 7}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                     (int[]){1, 1}, false), true, true},
        {"dwv2-c144-3x3-s2-57-asym", cfg(2, 1, 144, 144, 144, (int[]){57, 57}, (int[]){3, 3}, (int[]){2, 2}, NULL,
                                         (int[]){1, 0}, (int[]){0, 1}, false), true, true},
        {"dwv2-c24-5x5-57-asym", cfg(2, 1, 24, 24, 24, (int[]){57, 57}, (int[]){5, 5}, NULL, NULL, (int[]){2, 1},
                                     (int[]){1, 2}, false), true, true},
        {"dwv2-c144-5x5-13x13", cfg(2, 3, 144, 144, 144, (int[]){13, 13}, (int[]){5, 5}, NULL, NULL, (int[]){2, 2},
                                    (int[]){2, 2}, false), true, true},
        {"dwv2-c960-5x5-s2-13x13", cfg(2, 1, 960, 960, 960, (int[]){13, 13}, (int[]){5, 5}, (int[]){2, 2}, NULL,
                                       (int[]){2, 2}, (int[]){2, 2}, false), true, false},
        {"dwv2-c144-3x3-112-n1", cfg(2, 1, 144, 144, 144, (int[]){112, 112}, (int[]){3, 3}, NULL, NULL,
                                     (int[]){1, 1}, (int[]){1, 1}, false), true, true},
        {"dwv2-c32-3x3-s2-112-n3", cfg(2, 3, 32, 32, 32, (int[]){112, 112}, (int[]){3, 3}, (int[]){2, 2}, NULL,
                                       (int[]){1, 1}, (int[]){1, 1}, false), true, false},
        {"dwv2-c21-3x3-13x13", cfg(2, 3, 21, 21, 21, (int[]){13, 13}, (int[]){3, 3}, NULL, NULL, (int[]){1, 1},
                                   (int[]){1, 1}, false), false, true},
        {"dwv2-c144-3x3-dil2-13x13", cfg(2, 3, 144, 144, 144, (int[]){13, 13}, (int[]){3, 3}, NULL, (int[]){2, 2},
                                         (int[]){2, 2}, (int[]){2, 2}, false), false, true},
    };
    const int ncfg = (int)(sizeof cfgs / sizeof cfgs[0]);
    for (int ci = 0; ci < ncfg; ci++)
        for (int ti = 0; ti < 2; ti++)
            for (int dir = 0; dir < 2; dir++)
                for (int on = 1; on >= 0; on--) {
                    /* the stride-2 dgrad: once, off (as session 12 registered it; on: conv_dw_v2_phase_cases) */
                    const bool s2 = cfgs[ci].w.stride[0] == 2;
                    if ((dir == 1 && (!cfgs[ci].dgrad || (s2 && on))) || (opts.quick && ti != ci % 2))
                        continue;
                    char name[96];
                    snprintf(name, sizeof name, "%s/%s", on ? "v2" : "v1", cfgs[ci].name);
                    conv_case(name, &cfgs[ci].w, dts[ti], true, dir, false, "conv_dw", 1);
                    tcase *c = &cases[ncases - 1];
                    c->dw_v2 = on ? "" : "0";
                    c->dw_v2_fits = on && cfgs[ci].fits;
                    if (c->dw_v2_fits)
                        c->want_detail = "v2 2-D tile";
                    else
                        c->reject_detail = "v2 2-D tile";
                }
    /* the fused bias + relu on v2 (N = 3, 13x13: partial tiles) and on v1 beside it */
    for (int ti = 0; ti < 2; ti++)
        for (int on = 1; on >= 0; on--) {
            const win_cfg *w = &cfgs[ti ? 5 : 0].w;
            conv_text ct;
            conv_strs(w, &ct);
            char bs[96], id[192];
            dims_str(bs, sizeof bs, 1, w->k, w->nsp, (int[]){1, 1, 1});
            snprintf(id, sizeof id, "conv/fwd+epi/%s/%s/bias-relu/%s", on ? "v2" : "v1", cfgs[ti ? 5 : 0].name,
                     dts[ti]);
            tcase *c = add_case(id, 1, "conv_dw",
                                "dnn 1;\ngraph g(seed=%d) {\n  input x: %s%s @nhwc;\n  weight w: %s%s @nhwc;\n"
                                "  weight b: %s%s;\n  y = relu(conv(x, w, %s) + b);\n  output y: %s @nhwc;\n}\n",
                                ncases * 3 + 11, dts[ti], ct.xs, dts[ti], ct.ws, dts[ti], bs, ct.attrs, dts[ti]);
            if (!c)
                continue;
            c->force = "conv";
            c->want_parts = 1;
            c->dw_v2 = on ? "" : "0";
            c->dw_v2_fits = on;
            c->want_detail = on ? "v2 2-D tile" : "fused epilogue";
            c->want_detail2 = "fused epilogue";
            if (!on)
                c->reject_detail = "v2 2-D tile";
        }
}

/* conv_dw v2's stride-2 dgrad by stride phases and the 5x5 stride-1
 * forward at the bench's 28x28 size (session 13), each dtype with
 * XDNN_CONV_DW_V2 unset (v2: the detail must say "v2 2-D tile") and =0 (v1,
 * the gather: it must not).  Odd shapes for the phases: odd and even pads
 * per dim (the tile then starts one row / column before the image), pad 0
 * (dx's last row reached by no tap: zeros), asymmetric pads, pad 3 > K/2,
 * odd dx sizes, N = 1-3, C = 16 (one vector slice of 2) to 960. */
static void conv_dw_v2_phase_cases(void)
{
    static const char *const dts[] = {"f16", "bf16"};
    struct { const char *name; win_cfg w; int dir; } cfgs[] = {
        {"dwph-c144-3x3-s2-57x55-n3", cfg(2, 3, 144, 144, 144, (int[]){57, 55}, (int[]){3, 3}, (int[]){2, 2}, NULL,
                                          (int[]){1, 1}, (int[]){1, 1}, false), 1},
        {"dwph-c16-3x3-s2-16x15-pad01", cfg(2, 2, 16, 16, 16, (int[]){16, 15}, (int[]){3, 3}, (int[]){2, 2}, NULL,
                                            (int[]){0, 1}, (int[]){1, 0}, false), 1},
        {"dwph-c24-3x3-s2-8x9-pad0", cfg(2, 2, 24, 24, 24, (int[]){8, 9}, (int[]){3, 3}, (int[]){2, 2}, NULL,
                                         (int[]){0, 0}, (int[]){0, 0}, false), 1},
        {"dwph-c40-5x5-s2-29x30-asym", cfg(2, 1, 40, 40, 40, (int[]){29, 30}, (int[]){5, 5}, (int[]){2, 2}, NULL,
                                           (int[]){1, 2}, (int[]){2, 1}, false), 1},
        {"dwph-c672-5x5-s2-14x14-n2", cfg(2, 2, 672, 672, 672, (int[]){14, 14}, (int[]){5, 5}, (int[]){2, 2}, NULL,
                                          (int[]){2, 2}, (int[]){2, 2}, false), 1},
        {"dwph-c960-5x5-s2-11x12-pad30", cfg(2, 1, 960, 960, 960, (int[]){11, 12}, (int[]){5, 5}, (int[]){2, 2},
                                             NULL, (int[]){3, 0}, (int[]){0, 3}, false), 1},
        {"dwph-c32-3x3-s2-112-n1", cfg(2, 1, 32, 32, 32, (int[]){112, 112}, (int[]){3, 3}, (int[]){2, 2}, NULL,
                                       (int[]){1, 1}, (int[]){1, 1}, false), 1},
        {"dw5-c240-5x5-29x30-n2", cfg(2, 2, 240, 240, 240, (int[]){29, 30}, (int[]){5, 5}, NULL, NULL, (int[]){2, 1},
                                      (int[]){2, 3}, false), 0},
    };
    const int ncfg = (int)(sizeof cfgs / sizeof cfgs[0]);
    for (int ci = 0; ci < ncfg; ci++)
        for (int ti = 0; ti < 2; ti++)
            for (int on = 1; on >= 0; on--) {
                if (opts.quick && ti != ci % 2)
                    continue;
                char name[96];
                snprintf(name, sizeof name, "%s/%s", on ? "v2" : "v1", cfgs[ci].name);
                conv_case(name, &cfgs[ci].w, dts[ti], true, cfgs[ci].dir, false, "conv_dw", 1);
                tcase *c = &cases[ncases - 1];
                c->dw_v2 = on ? "" : "0";
                c->dw_v2_fits = on;
                if (on) {
                    c->want_detail = "v2 2-D tile";
                    c->want_detail2 = cfgs[ci].dir ? "dgrad (stride phases)" : NULL;
                } else {
                    c->reject_detail = "v2 2-D tile";
                }
            }
}

int main(int argc, char **argv)
{
    dh_parse_args(argc, argv, true, &opts);
    cases = calloc(MAX_CASES, sizeof *cases);
    if (!cases)
        return 2;
    if (opts.bench) {
        bench_cases();
    } else {
        conv_direct_cases();
        conv_wgrad_tiled_cases();
        conv_igemm_cases();
        conv_wgrad_mma_cases();
        conv_wgrad_wgmma_cases();
        conv_igemm_nd_cases();
        conv_epilogue_cases();
        conv_igemm_splitk_cases();
        conv_wgmma_cases();
        conv_wgmma_dgrad_cases();
        conv_dgrad_epi_cases();
        conv_wgmma_stage_cases();
        conv_im2col_cases();
        conv_wgrad_1x1_cases();
        conv_fd_1x1_cases();
        conv_dw_cases();
        pool_cases();
        conv_wgmma_3d_cases();
        conv_wgmma_tma_cases();  /* after the others: the cases before keep their seeds (ncases) */
        conv_wgrad_xtma_cases();
        conv_tma_offset_cases();
        conv_f32_gemm_cases();
        conv_stem_cases();
        conv_wgrad_wgmma_3d_cases();   /* session 11 */
        conv_dgrad_one_launch_cases();
        conv_f32_epi_cases();
        conv_wgmma_pingpong_cases(); /* session 12 (pingpong) */
        conv_wgmma_narrow_cases();   /* session 12 (conv3d32) */
        conv_dw_v2_cases();          /* session 12 (dwconv) */
        conv_wgmma_tma3d_cases();    /* session 13 (conv3d) */
        conv_dw_v2_phase_cases();    /* session 13 (dw): last */
    }
    dh_tester t = {.name = "difftest_conv", .ncases = ncases, .case_id = case_id, .case_text = case_text,
                   .run_case = run_case, .bench_line = bench_line};
    int rc = dh_run(&t, &opts);
    free(cases);
    return rc;
}
