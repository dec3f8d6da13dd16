/* eng_conv_wgmma.c — conv_igemm_wgmma: the forward conv and its data
 * gradient as implicit GEMMs on Hopper tensor cores
 * (kernels/conv_igemm_wgmma_sm90a.cu: wgmma from 128-byte swizzled shared
 * memory, a cp.async producer warpgroup feeding two consumer warpgroups
 * through an mbarrier ring, 64-deep k slices).  1-/2-/3-D channels-last
 * f16/bf16 with C and K multiples of 8 (a conv_dgrad's dx: C even, stored
 * in pairs), groups 1, 32-, 64- or 128-wide tiles, the fused epilogue of
 * conv_igemm (conv_epi.h) and its ordered split-K reduction for the
 * small-spatial layers.  An x or w the kernel cannot read as is (C not a
 * multiple of 8, as in the C = 3 stem; NCHW) is copied channels-last with
 * C padded to 8 into the workspace first (conv_pack.h, as conv_igemm does)
 * and the unchanged kernel runs on the copies.  A conv_dgrad runs as
 * conv_igemm runs it (conv_dgrad.h): one forward conv of dy per stride
 * phase of dx with the phase's flipped, C/K-swapped weights, the GEMM on
 * this kernel; empty phases on a GEMM phase's lattice (the 1x1 stride-2
 * projection's three) are zero-filled by that GEMM's store, the others by a
 * launch each.  On compute capability 9.0 it ranks ahead of conv_igemm once
 * the conv is large enough for one CTA per SM to pay (GCW_MIN_FLOPS) and its
 * reduction longer than one slice; conv_igemm keeps sm_80, the small and the
 * one-slice convs and what this engine refuses (gpu_conv_wgmma_check lists
 * the rules). */
#include "gpu/conv_dgrad.h"
#include "gpu/conv_epi.h"
#include "gpu/conv_pack.h"
#include "gpu/conv_wgmma.h"
#include "gpu/engine.h"
#include "gpu/kern_conv_wgmma.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ENG "conv_igemm_wgmma"

/* Below ~0.25 GFLOP a conv is launch- and latency-bound on either engine:
 * conv_igemm's 2 CTAs per SM of 256 threads are the better fit there. */
#define GCW_MIN_FLOPS 2.5e8

_Static_assert((int)KCW_ZERO_MAX <= (int)GCONV_MAX_ZERO, "the kernel's zero lattices fit the dgrad plan's");

typedef struct cw_priv {
    gconv_problem cp;
    gconv_packed pk; /* pk.on: the kernel runs on padded copies of x and w (workspace head) */
    gconv_dgrad dg;  /* conv_dgrad: its stride phases */
    int bn, splits;  /* the tile width; the forward conv's split-K */
    bool stage;      /* y by the staged store (kern_conv_wgmma.h); XDNN_CONV_WGMMA_NO_STAGE turns it off */
    int tma;         /* KCW_TMA_* bits: the producer loads by TMA where it can (kern_conv_wgmma.h; cw_tma_bits) */
    bool pingpong;   /* the ping-pong consumers on 64-wide tiles (cw_pingpong_on, cw_pingpong_epi_ok) */
    size_t ws_total;
    char detail[448];
} cw_priv;

static const char *dt_name(int dt) { return dt == KDT_F32 ? "f32" : dt == KDT_F16 ? "f16" : "bf16"; }

static int64_t span(const gtensor *t)
{
    int64_t s = 1;
    for (int i = 0; i < t->rank; i++)
        s += (t->dims[i] - 1) * t->strides[i];
    return s;
}

/* x and w as the kernel reads them: C % 8 == 0, channel-contiguous, rows
 * and taps on 16-byte boundaries.  False with the reason. */
static bool operands_ok(const kconv_params *k, char *why, size_t len)
{
    if (k->C % 8 != 0)
        GPU_REFUSE(ENG " needs C %% 8 == 0, got C=%" PRId64, k->C);
    if (k->sx[1] != 1 || k->sw[1] != 1)
        GPU_REFUSE(ENG " needs channels-last x and w (@nhwc), got channel strides x %" PRId64 ", w %" PRId64,
                   k->sx[1], k->sw[1]);
    for (int i = 0; i < 5; i++)
        if (k->sx[i] % 8 || k->sw[i] % 8)
            if (i != 1)
                GPU_REFUSE(ENG " needs x and w strides in multiples of 8 elements (16 bytes), got %" PRId64
                               " and %" PRId64 " in slot %d", k->sx[i], k->sw[i], i);
    return true;
}

/* The kernel's 32-bit offsets: the tensors of cp from ids[first] on span < 2^31 elements. */
static bool spans_ok(const ggraph *g, const gconv_problem *cp, int first, char *why, size_t len)
{
    const int ids[3] = {cp->x, cp->w, cp->y};
    for (int i = first; i < 3; i++)
        if (span(&g->t[ids[i]]) >= ((int64_t)1 << 31))
            GPU_REFUSE(ENG " needs tensors spanning < 2^31 elements, %s spans %" PRId64, g->t[ids[i]].name,
                       span(&g->t[ids[i]]));
    return true;
}

/* A conv_dgrad as the forward convs of its stride phases (conv_dgrad.h):
 * each GEMM reads dy as its x (channels K: the GEMM's C) and the packed
 * phase weights (written here, always aligned), and stores dx (channels C:
 * the GEMM's K; any strides) as its y.  No padded copies: the phase weights
 * would need K padded too. */
static bool dgrad_ok(const ggraph *g, const gconv_problem *cp, char *why, size_t len)
{
    const kconv_params *k = &cp->kp;
    if (k->dt_y != k->dt_w || k->dt_y == KDT_F32)
        GPU_REFUSE(ENG " needs conv_dgrad's dy and w both f16 or both bf16, got %s and %s", dt_name(k->dt_y),
                   dt_name(k->dt_w));
    if (k->K % 8 != 0)
        GPU_REFUSE(ENG " needs conv_dgrad's dy channels K %% 8 == 0, got K=%" PRId64, k->K);
    /* dx is the GEMM's y: C % 8 != 0 (the 3-D UNet stem's C = 4) is stored in pairs of channels */
    if (k->C % 2 != 0)
        GPU_REFUSE(ENG " needs conv_dgrad's dx channels C %% 2 == 0, got C=%" PRId64, k->C);
    if (k->sy[1] != 1)
        GPU_REFUSE(ENG " needs channels-last dy (@nhwc) for conv_dgrad, got channel stride %" PRId64, k->sy[1]);
    for (int i = 0; i < 5; i++)
        if (i != 1 && k->sy[i] % 8)
            GPU_REFUSE(ENG " needs dy strides in multiples of 8 elements (16 bytes), got %" PRId64 " in slot %d",
                       k->sy[i], i);
    const int64_t nph = k->stride[0] * k->stride[1] * k->stride[2];
    if (nph > GCONV_MAX_PHASES)
        GPU_REFUSE(ENG " runs conv_dgrad with at most %d stride phases, got %" PRId64, GCONV_MAX_PHASES, nph);
    return spans_ok(g, cp, 0, why, len);
}

bool gpu_conv_wgmma_check(const ggraph *g, const gconv_problem *cp, const gpu_device *dev, gconv_packed *pk,
                          char *why, size_t len)
{
    const kconv_params *k = &cp->kp;
    gconv_packed own;
    if (!pk)
        pk = &own;
    pk->on = false;
    if (dev->cc_major != 9 || dev->cc_minor != 0)
        GPU_REFUSE(ENG " needs compute capability 9.0 (sm_90a wgmma), device is sm_%d%d", dev->cc_major,
                   dev->cc_minor);
    if (cp->dir == GCONV_WGRAD)
        GPU_REFUSE(ENG " runs conv and conv_dgrad, not %s", cp->node->op);
    if (cp->nsp > 3)
        GPU_REFUSE(ENG " runs 1-D to 3-D convs, got %d spatial dims", cp->nsp);
    if (k->G != 1)
        GPU_REFUSE(ENG " needs groups == 1, got groups=%" PRId64, k->G);
    if (cp->dir == GCONV_DGRAD)
        return dgrad_ok(g, cp, why, len);
    if (k->dt_x != k->dt_w || k->dt_x == KDT_F32)
        GPU_REFUSE(ENG " needs x and w both f16 or both bf16, got %s and %s", dt_name(k->dt_x), dt_name(k->dt_w));
    if (k->K % 8 != 0)
        GPU_REFUSE(ENG " needs K %% 8 == 0, got K=%" PRId64, k->K);
    char own_why[256];
    if (!operands_ok(k, own_why, sizeof own_why) && !gpu_conv_pack_plan(k, 8, pk))
        GPU_REFUSE("%s, and its channels-last copies with C padded to %" PRId64 " would span 2^31 elements or more",
                   own_why, pk->k.C);
    /* the tensors it reads (the copies: gpu_conv_pack_plan bounds them) and y */
    return spans_ok(g, cp, pk->on ? 2 : 0, why, len);
}

/* The 32-wide tile (session 12): XDNN_CONV_WGMMA_BN32=0 never (A/B: the 64-wide tile, and the cost model's
 * idle-column charge then leaves 3-D K = 32 on conv_igemm), =1 for every conv of K <= 32 (tests: 1-/2-D too),
 * unset for the 3-D ones (the UNet's K = 32 layers and C = 32 / C = 4 dgrads; 1-/2-D narrow convs keep the
 * 64-wide tile's TMA producer and their measured rule). */
static bool narrow_tile(const kconv_params *k)
{
    const char *env = getenv("XDNN_CONV_WGMMA_BN32");
    if (k->K > KCW_BN_NARROW || (env && strcmp(env, "0") == 0))
        return false;
    return (env && strcmp(env, "1") == 0) || k->in[0] > 1 || k->win[0] > 1 || k->out[0] > 1;
}

int gpu_conv_wgmma_bn(const kconv_params *k)
{
    if (narrow_tile(k))
        return KCW_BN_NARROW;
    static const int64_t bns[2] = {KCW_BN_BIG, KCW_BN_SMALL};
    for (int i = 0; i < 2; i++)
        if ((k->K + bns[i] - 1) / bns[i] * bns[i] - k->K <= k->K / 8)
            return (int)bns[i];
    return KCW_BN_SMALL;
}

int gpu_conv_wgmma_splits(const kconv_params *k, int sm_count)
{
    const int64_t M = k->N * k->out[0] * k->out[1] * k->out[2], bn = gpu_conv_wgmma_bn(k);
    const int64_t kt = (k->C * k->win[0] * k->win[1] * k->win[2] + KCW_BK - 1) / KCW_BK;
    const int64_t tiles = ((M + KCW_BM - 1) / KCW_BM) * ((k->K + bn - 1) / bn);
    return gpu_conv_split_k(kt, tiles, 1, 4, sm_count); /* one CTA per SM (192 KiB of stages) */
}

size_t gpu_conv_wgmma_ws_bytes(const kconv_params *k, int splits) { return gpu_conv_igemm_split_ws_bytes(k, splits); }

/* Whether a conv_dgrad's GEMM phases run in one launch (kconv_wgmma_phases, session 11).
 * XDNN_DGRAD_ONE_LAUNCH=0: each phase its own launch; =1: one launch wherever the kernel's table holds them (A/B,
 * tests); unset: a 3-D dgrad (eight small phases at stride 2, launched one after another, each left SMs idle:
 * 28 TFLOP/s in session 9; one launch 1.9x faster, 0.134 -> 0.071 ms, session 11), whose own launches gather
 * by cp.async too (the TMA map is 4-d).  The one launch runs the 3-D code (cp.async, register store, the geometry read from
 * the table per work item): the 2-D phases keep their TMA loads and staged store unless =1 (their A/B: ResNet's
 * N = 256 stride-2 dgrads 1.5-2.1x slower in one launch; small 2-D phase sets off TMA not measured). */
static bool cw_one_launch(const gconv_problem *cp, const gconv_dgrad *dg)
{
    int gemms = 0;
    for (int i = 0; i < dg->nph; i++)
        gemms += !dg->ph[i].none && !dg->ph[i].empty;
    const char *env = getenv("XDNN_DGRAD_ONE_LAUNCH");
    if (gemms < 2 || gemms > KCW_PH_MAX || (env && strcmp(env, "0") == 0))
        return false;
    return (env && strcmp(env, "1") == 0) || cp->nsp == 3;
}

/* The producer's TMA maps a partition may use (kern_conv_wgmma.h's KCW_TMA_* bits).  XDNN_CONV_WGMMA_NO_TMA (A/B,
 * session 10): set and not "0" = the cp.async gather everywhere.  XDNN_CONV_WGMMA_TMA3D (session 13): "0" = a 3-D
 * conv's (and a 3-D dgrad phase's) x gathered by cp.async as before; unset or anything else = loaded through a
 * 5-d im2col map where the kernel can make one (C % 64 == 0, or C == 32 two taps a slice).  1-/2-D convs on the
 * 32-wide tile (XDNN_CONV_WGMMA_BN32=1) keep the gather. */
static int cw_tma_bits(int nsp)
{
    const char *notma = getenv("XDNN_CONV_WGMMA_NO_TMA"), *t3 = getenv("XDNN_CONV_WGMMA_TMA3D");
    if (notma && strcmp(notma, "0") != 0)
        return 0;
    return KCW_TMA_2D | (nsp == 3 && !(t3 && strcmp(t3, "0") == 0) ? KCW_TMA_3D : 0);
}

/* XDNN_CONV_WGMMA_PINGPONG (session 12): 0 = both consumer warpgroups share each 128 x 64 tile (the cooperative
 * schedule); unset or anything else = the ping-pong schedule on the 64-wide tiles (kern_conv_wgmma.h: each
 * warpgroup a whole tile, the two taking turns).  Measured on the H100 (bench/RESULTS-conv.md, session 12):
 * ResNet-50's N = 256 3x3 64@56 forward 1.18x faster, its masked dgrad 1.15x.  The 64-wide ping-pong tile given
 * to the 128- to 512-channel layers instead of the 128-wide cooperative one lost 0.66-0.91x (x loaded once per
 * 64 columns): they keep the 128-wide tile. */
static bool cw_pingpong_on(void)
{
    const char *env = getenv("XDNN_CONV_WGMMA_PINGPONG");
    return !env || strcmp(env, "0") != 0;
}

/* The ping-pong store serves no fused epilogue but a dgrad's relu_bwd mask (read into registers before the
 * mainloop): one warpgroup runs a tile's whole epilogue there, and the N = 32 64@56 forward with bias + relu ran
 * 0.87x (0.0813 -> 0.0937 ms), with bias + residual + relu 0.89x, against the cooperative store (session 12,
 * call 2; the plain conv 1.00x, the masked dgrads 1.03-1.16x faster). */
static bool cw_pingpong_epi_ok(const kconv_epi *e)
{
    return e->n == 0 || (e->n == 1 && e->s[0].op == KEPI_RELU_BWD);
}

/* Whether the kernel runs partition cv's tiles ping-pong (cv->pingpong, then kernels/conv_igemm_wgmma_sm90a.cu's
 * launch_t: 64-wide, 1-/2-D, no genstats; the one-launch dgrad runs the 3-D code). */
static bool cw_pingpong(const cw_priv *cv, bool genstats)
{
    return cv->pingpong && cv->bn == KCW_BN_SMALL && cv->cp.nsp < 3 && !genstats &&
           !(cv->cp.dir == GCONV_DGRAD && cv->dg.one_launch);
}

/* The engine's plan of partition p on dev: the rules, then for a forward
 * conv its padded copies and split-K, for a conv_dgrad its stride phases
 * (each split; the empty phases folded into GEMM stores where they can be),
 * the tile width and the workspace.  False with the reason. */
static bool cw_prepare(const gplan *pl, const gpart *p, const gpu_device *dev, cw_priv *cv, char *why, size_t len)
{
    if (!gpu_conv_analyze(pl, p, &cv->cp, why, len) || !gpu_conv_wgmma_check(pl->g, &cv->cp, dev, &cv->pk, why, len))
        return false;
    const char *off = getenv("XDNN_CONV_WGMMA_NO_STAGE"); /* A/B switch: set and not "0" = the register store */
    cv->stage = !off || strcmp(off, "0") == 0;
    cv->tma = cw_tma_bits(cv->cp.nsp);
    cv->pingpong = cw_pingpong_on() && cw_pingpong_epi_ok(&cv->cp.epi);
    if (cv->cp.dir == GCONV_DGRAD) {
        if (!gpu_conv_dgrad_plan(&cv->cp, dev->sm_count, gpu_conv_wgmma_splits, &cv->dg, why, len))
            return false;
        cv->bn = gpu_conv_wgmma_bn(&cv->dg.ph[0].f); /* every phase's K is dx's C */
        if (cv->dg.ph[0].f.K % 8) /* dx C % 8 != 0 stores channel pairs: measured on the plain schedule only */
            cv->pingpong = false;
        cv->dg.one_launch = cw_one_launch(&cv->cp, &cv->dg);
        if (cv->dg.one_launch) /* the table's phases run whole, on the 64- or 128-wide MP instances */
            gpu_conv_dgrad_unsplit(&cv->dg);
        if (cv->dg.one_launch && cv->bn == KCW_BN_NARROW)
            cv->bn = KCW_BN_SMALL;
        gpu_conv_dgrad_fold(&cv->dg, 8, KCW_ZERO_MAX); /* 16-byte zero stores */
        cv->ws_total = cv->dg.ws_total;
        return true;
    }
    const kconv_params *k = cv->pk.on ? &cv->pk.k : &cv->cp.kp;
    cv->bn = gpu_conv_wgmma_bn(k);
    /* genstats: the statistics come from the fused store, which split-K's reduction does not run */
    cv->splits = p->genstats == GS_WRITE ? 1 : gpu_conv_wgmma_splits(k, dev->sm_count);
    /* [x copy | w copy | split-K partials of the (padded) problem] */
    cv->ws_total = (cv->pk.on ? cv->pk.xbytes + cv->pk.wbytes : 0) + gpu_conv_wgmma_ws_bytes(k, cv->splits);
    return true;
}

bool gpu_conv_wgmma_genstats_ok(const gplan *pl, const gpart *p, const gpu_device *dev, int y, int64_t C, int64_t M,
                                char *why, size_t len)
{
    cw_priv *cv = calloc(1, sizeof *cv);
    if (!cv)
        GPU_REFUSE(ENG ": out of host memory");
    bool ok = cw_prepare(pl, p, dev, cv, why, len);
    const kconv_params *k = &cv->cp.kp;
    const int64_t NPQ = k->N * k->out[0] * k->out[1] * k->out[2];
    if (ok && cv->cp.dir != GCONV_FWD)
        ok = false, snprintf(why, len, ENG ": genstats needs a forward conv, got %s", cv->cp.node->op);
    else if (ok && cv->cp.y != y)
        ok = false, snprintf(why, len, ENG ": genstats: the partition stores %s, not the batchnorm's x %s",
                             pl->g->t[cv->cp.y].name, pl->g->t[y].name);
    else if (ok && k->dt_y != KDT_F16 && k->dt_y != KDT_BF16)
        ok = false, snprintf(why, len, ENG ": genstats needs y f16 or bf16, got %s", dt_name(k->dt_y));
    else if (ok && (k->K != C || NPQ != M))
        ok = false, snprintf(why, len, ENG ": genstats: y holds K=%" PRId64 " channels of N*P*Q=%" PRId64
                             " rows, the batchnorm reduces C=%" PRId64 " over M=%" PRId64, k->K, NPQ, C, M);
    free(cv);
    return ok;
}

static bool cw_supports(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    cw_priv *cv = calloc(1, sizeof *cv);
    if (!cv)
        GPU_REFUSE(ENG ": out of host memory");
    bool ok = cw_prepare(pl, p, dev, cv, why, len);
    const int bn = cv->bn, need = ok ? kconv_wgmma_smem(bn) : 0;
    free(cv);
    if (!ok)
        return false;
    if (!kconv_wgmma_built())
        GPU_REFUSE(ENG ": this build has no sm_90a code (kernels/*_sm90a.cu rule)");
    if ((size_t)need > gpu_smem_per_block(dev))
        GPU_REFUSE(ENG ": a 128x%d tile needs %d bytes of shared memory per block, the device gives %zu", bn, need,
                   gpu_smem_per_block(dev));
    return true;
}

/* wgmma at ~450 TFLOP/s against conv_igemm's 300 on the large convs; below
 * GCW_MIN_FLOPS, or with a reduction of one 64-deep slice (the 1x1 convs of
 * C = 64: conv_igemm measured 0.027-0.028 ms against 0.030-0.035 on
 * ResNet's 64 -> 64 at 56x56, 0.073-0.078 against 0.080-0.090 on 64 -> 256,
 * bench/RESULTS-conv.md), a shade above conv_igemm's estimate, so it keeps them.
 * On padded copies both engines count the copies and the C_pad / C wasted
 * work alike (gpu_conv_pack_cost_us), so the Hopper engine takes the packed
 * convs it would take unpacked: the ResNet stem (C = 3 -> 8, 7x7 s2, K = 64;
 * the GEMM M = N*112*112, N = 64, reduction 392 = 6 1/8 slices) from N = 2
 * up, conv_igemm the N = 1 stem (0.24 GFLOP < GCW_MIN_FLOPS).  Expected (NOT
 * YET MEASURED) at N = 32: the padded GEMM is 20.1 GFLOP (23 with the 7th
 * slice's zero tail); at the 125 TFLOP/s this kernel reached on the nearest
 * measured shape (3x3 64 -> 64 at 56x56: N = 64, reduction 576,
 * bench/RESULTS-conv.md) ~0.17 ms, plus the copies (x: 25.7 MB written and
 * read, ~0.02 ms): ~0.19 ms, against conv_igemm's packed 0.337 ms (60 TFLOP/s
 * on the padded GEMM, half its unpacked rate: every 16-byte chunk it gathers
 * is one tap) and cuDNN's 0.105 ms.  The same gather may halve this kernel's
 * rate too (~0.3 ms): stem_session.sh measures; a loader that reads C = 3
 * taps straight into a zero-padded slice would remove the copy and the 8/3.
 * A conv_dgrad is judged by the same rule on its phases' longest reduction
 * (dy's K times the phase's taps: ResNet's 1x1 dgrad of K = 64 stays on
 * conv_igemm), plus ~1 us per launch past a stride-1 dgrad's pack and GEMM,
 * as conv_igemm counts its phases: the folded zero fills cost none, so the
 * 1x1 stride-2 projection's dgrad (one GEMM, three empty phases) is charged
 * 8 us less here than on conv_igemm. */
static double cw_cost(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    cw_priv *cv = calloc(1, sizeof *cv);
    char why[256];
    if (!cv || !cw_prepare(pl, p, dev, cv, why, sizeof why)) {
        free(cv);
        return 1e30;
    }
    const kconv_params *k = &cv->cp.kp;
    int64_t red = (cv->pk.on ? cv->pk.k.C : k->C) * k->win[0] * k->win[1] * k->win[2]; /* the kernel's, padded */
    int launches = 0;
    if (cv->cp.dir == GCONV_DGRAD) {
        red = 0;
        for (int i = 0; i < cv->dg.nph; i++) {
            const kconv_params *f = &cv->dg.ph[i].f;
            const int64_t fr = f->C * f->win[0] * f->win[1] * f->win[2];
            if (!cv->dg.ph[i].empty && !cv->dg.ph[i].none && fr > red)
                red = fr;
        }
        launches = gpu_conv_dgrad_launches(&cv->dg);
    }
    /* a dgrad's k is its forward conv's: the same GEMM size */
    const double flops = 2.0 * (double)(k->N * k->out[0] * k->out[1] * k->out[2]) * (double)k->K *
                         (double)(k->C * k->win[0] * k->win[1] * k->win[2]);
    double us = flops < GCW_MIN_FLOPS || red <= KCW_BK ? gpu_roofline_us(p, 300.0) + 0.5
                                                        : 0.95 * gpu_roofline_us(p, 450.0);
    if (launches > 2)
        us += 1.0 * launches;
    /* 3-D: charged for the tile's idle columns (the GEMM's N, dx's C for a dgrad, padded to the 64- or 128-wide
     * tile; the 32-wide tile's are free).  Measured on the H100 (bench/RESULTS-conv.md): with half of each 64-wide
     * tile idle the UNet's K = 32 layers ran 1.05-1.13x slower than on conv_igemm, the K = 64-256 ones 0.81-0.99x
     * of its time (session 9).  On the 32-wide tile (session 12) the K = 32 fwd / dgrad ran 0.98x conv_igemm's
     * time and the stem's dgrad (dx C = 4: 4 of 32 columns) 0.97x, at the same ~0.9 us a slice whatever the
     * columns used (the producer's gather bounds it), so only the wider tiles' idle columns are charged; the stem
     * forward on padded copies (C 4 -> 8, a 3.4-slice reduction) ran 1.11x slower than conv_igemm's packed path
     * and is charged 2x, which leaves it there.  A 1-/2-D dgrad with dx C % 8 != 0 (the
     * channel-pair store, measured on 3-D only) is charged its idle columns too, which keeps it on conv_igemm as
     * before session 12 (forced plans still take it); other 1-/2-D convs keep their measured rule. */
    const int64_t n = cv->cp.dir == GCONV_DGRAD ? cv->dg.ph[0].f.K : k->K, bn = cv->bn;
    if (cv->cp.nsp == 3 ? bn > KCW_BN_NARROW : cv->cp.dir == GCONV_DGRAD && n % 8)
        us *= (double)((n + bn - 1) / bn * bn) / (double)n;
    if (cv->cp.nsp == 3 && cv->pk.on && cv->pk.k.C != k->C) /* measured on the stem's C padding, not layout copies */
        us *= 2.0;
    const double floor = gpu_conv_1x1_floor_us(&cv->cp); /* the 1x1 layers as measured (conv_analyze.h) */
    if (floor > 0.0)
        us = (floor > us ? floor : us) + 0.01 * us;
    if (cv->pk.on)
        us = gpu_conv_pack_cost_us(&cv->cp.kp, &cv->pk, us);
    free(cv);
    return us;
}

static size_t cw_workspace(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    cw_priv *cv = calloc(1, sizeof *cv);
    char why[256];
    const size_t bytes = cv && cw_prepare(pl, p, dev, cv, why, sizeof why) ? cv->ws_total : 0;
    free(cv);
    return bytes;
}

/* The detail of a conv_dgrad's plan: its phases, the zero ones and how many of those a GEMM's store writes. */
static int dgrad_detail(const gconv_dgrad *dg, char *buf, size_t len)
{
    int folded = 0;
    for (int i = 0; i < dg->nph; i++)
        folded += dg->folded[i];
    return snprintf(buf, len, "dgrad as %d flipped-weight phase conv(s) (%d zero, %d of them in a GEMM's store%s), ",
                    dg->nph, gpu_conv_dgrad_empty(dg), folded, dg->one_launch ? "; GEMMs in one launch" : "");
}

static xdnn_status cw_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d)
{
    cw_priv *cv = calloc(1, sizeof *cv);
    if (!cv)
        return XDNN_ERR_NOMEM;
    p->priv = cv;
    char why[512];
    if (!cw_prepare(c->plan, p, &c->dev, cv, why, sizeof why)) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), ENG ": %s: %s", p->name, why);
        return XDNN_ERR_UNSUPPORTED;
    }
    const bool dgrad = cv->cp.dir == GCONV_DGRAD;
    const kconv_params *k = dgrad ? &cv->dg.ph[0].f : cv->pk.on ? &cv->pk.k : &cv->cp.kp;
    const size_t copies = cv->pk.on ? cv->pk.xbytes + cv->pk.wbytes : dgrad ? cv->dg.split_off : 0;
    if (copies > p->ws_bytes) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), ENG ": %s: the %s need %zu bytes of workspace, the plan "
                   "gave %zu", p->name, dgrad ? "phase weights" : "padded copies of x and w", copies, p->ws_bytes);
        return XDNN_ERR_UNSUPPORTED;
    }
    if (cv->ws_total > p->ws_bytes) { /* planned for another SM count: unsplit */
        cv->splits = 1;
        gpu_conv_dgrad_unsplit(&cv->dg);
        gpu_conv_dgrad_fold(&cv->dg, 8, KCW_ZERO_MAX);
    }
    int most = cv->splits;
    for (int i = 0; i < (dgrad ? cv->dg.nph : 0); i++)
        most = cv->dg.splits[i] > most ? cv->dg.splits[i] : most;
    /* the staged store where y allows it (the kernel checks the rest: 16-byte aligned rows; split-K's partials
     * leave from registers) */
    /* (3-D convs: the register store, kernels/conv_igemm_wgmma_sm90a.cu's launch_t) */
    const bool one = dgrad && cv->dg.one_launch;
    /* the 3-D instances: the one launch's gather, the others' 5-d TMA map where it serves */
    const int tma = one ? 0 : kconv_wgmma_tma(k, cv->bn, cv->tma);
    const bool staged = cv->stage && kconv_wgmma_staged(cv->bn) && k->dt_y != KDT_F32 && k->sy[1] == 1 && most <= 1 &&
                        cv->cp.nsp < 3 && !one;
    const int stages = kconv_wgmma_stages(cv->bn, staged);
    const bool pp = cw_pingpong(cv, p->genstats == GS_WRITE);
    int n = 0;
    if (cv->pk.on)
        n = snprintf(cv->detail, sizeof cv->detail, "x and w copied channels-last with C %" PRId64 " -> %" PRId64 ", ",
                     cv->cp.kp.C, k->C);
    if (dgrad)
        n = dgrad_detail(&cv->dg, cv->detail, sizeof cv->detail);
    n += snprintf(cv->detail + n, sizeof cv->detail - (size_t)n,
                     "implicit GEMM M=%" PRId64 " N=%" PRId64 " K=%" PRId64 ", tile %dx%dx%d, %d stages, wgmma "
                     "m64n%dk16, %s producer warpgroup + 2 consumers%s%s",
                     k->N * k->out[0] * k->out[1] * k->out[2], k->K, k->C * k->win[0] * k->win[1] * k->win[2], KCW_BM,
                     cv->bn, KCW_BK,
                     stages, cv->bn < 128 ? cv->bn : 128,
                     tma == 2 ? "TMA (5-d im2col x, tiled w)" : tma ? "TMA (im2col x, tiled w)" : "cp.async",
                     pp ? ", ping-pong (a tile each, in turns)" : "",
                     staged ? ", y staged in shared memory and bulk-copied" : "");
    if (most > 1 && n > 0 && (size_t)n < sizeof cv->detail)
        n += snprintf(cv->detail + n, sizeof cv->detail - (size_t)n, ", split-K %d (ordered f32 reduction)", most);
    gconv_epi_append(&cv->cp.epi, cv->detail, sizeof cv->detail);
    n = (int)strlen(cv->detail);
    if (p->genstats == GS_WRITE && (size_t)n < sizeof cv->detail)
        snprintf(cv->detail + n, sizeof cv->detail - (size_t)n, ", + batchnorm statistics for partition %d "
                 "(genstats)", p->gen_peer);
    return XDNN_OK;
}

/* One dgrad phase's GEMM on this kernel, its folded zero lattices in the store (gpu_conv_dgrad_run). */
static int cw_phase_gemm(const void *ctx, const gconv_dgrad *dg, int i, const void *dy, const void *wt,
                         void *dx_phase, const kconv_epi *epi, float *part, void *stream)
{
    const cw_priv *cv = ctx;
    return kconv_wgmma_fwd(&dg->ph[i].f, dy, wt, dx_phase, epi, part, dg->splits[i], cv->bn, dg->nzero[i],
                           dg->zoff[i], NULL, cv->stage, cv->tma, cv->pingpong, stream);
}

/* Every GEMM phase of a dgrad in one launch (gpu_conv_dgrad_run_one); one launch per phase where the kernel
 * cannot apply epi at every phase's offset (kconv_wgmma_phases_ok). */
static int cw_phases_gemm(const void *ctx, const gconv_dgrad *dg, const void *dy, const void *wt, void *dx,
                          const kconv_epi *epi, void *stream)
{
    const cw_priv *cv = ctx;
    kconv_params f[KCW_PH_MAX];
    int64_t woff[KCW_PH_MAX], yoff[KCW_PH_MAX], zoff[KCW_PH_MAX][KCW_ZERO_MAX];
    int nzero[KCW_PH_MAX], idx[KCW_PH_MAX], n = 0;
    for (int i = 0; i < dg->nph && n < KCW_PH_MAX; i++) {
        const gconv_phase *q = &dg->ph[i];
        if (q->none || q->empty)
            continue;
        f[n] = q->f;
        woff[n] = q->wt_off;
        yoff[n] = q->dx_off;
        nzero[n] = dg->nzero[i];
        memcpy(zoff[n], dg->zoff[i], sizeof zoff[n]);
        idx[n++] = i;
    }
    if (kconv_wgmma_phases_ok(epi, n, yoff))
        return kconv_wgmma_phases(n, f, woff, yoff, nzero, (const int64_t(*)[KCW_ZERO_MAX])zoff, dy, wt, dx, epi,
                                  cv->bn, stream);
    const size_t esz_w = f[0].dt_w == KDT_F32 ? 4 : 2, esz_x = f[0].dt_y == KDT_F32 ? 4 : 2;
    int e = 0;
    for (int j = 0; j < n && e == 0; j++) {
        kconv_epi pe;
        if (epi && epi->n)
            gpu_conv_dgrad_phase_epi(epi, &dg->ph[idx[j]], &pe); /* epi's tensors at dx's offsets: shift */
        e = cw_phase_gemm(ctx, dg, idx[j], dy, (const char *)wt + (size_t)woff[j] * esz_w,
                          (char *)dx + (size_t)yoff[j] * esz_x, epi && epi->n ? &pe : NULL, NULL, stream);
    }
    return e;
}

static xdnn_status cw_execute(gpu_ctx *c, gpart *p, cudaStream_t s, xdnn_diags_t *d)
{
    const cw_priv *cv = p->priv;
    const gconv_problem *cp = &cv->cp;
    char *ws = c->ws + p->ws_offset;
    kconv_epi epi;
    gpu_conv_epi_bind(cp, c->dptr, &epi);
    if (cp->dir == GCONV_DGRAD) {
        int e = cv->dg.one_launch ? gpu_conv_dgrad_run_one(cp, &cv->dg, c->dptr[cp->y], c->dptr[cp->w],
                                                           c->dptr[cp->x], &epi, ws, cw_phases_gemm, cv, s)
                                  : gpu_conv_dgrad_run(cp, &cv->dg, c->dptr[cp->y], c->dptr[cp->w], c->dptr[cp->x],
                                                       &epi, ws, cw_phase_gemm, cv, s);
        return gpu_check_cuda((cudaError_t)e, "kconv_wgmma_fwd dgrad launch", __FILE__, __LINE__, d);
    }
    /* genstats: the partials at the head of the batchnorm partition's workspace (genstats.h) */
    float *stats = p->genstats == GS_WRITE ? (float *)(void *)(c->ws + c->plan->parts[p->gen_peer].ws_offset) : NULL;
    if (cv->pk.on) { /* the copies at the workspace head (256-aligned: 16-byte cp.async rows), then the partials */
        const size_t copies = cv->pk.xbytes + cv->pk.wbytes;
        float *part = cv->splits > 1 ? (float *)(void *)(ws + copies) : NULL;
        int e = gpu_conv_pack_run(&cp->kp, &cv->pk, c->dptr[cp->x], c->dptr[cp->w], ws, s);
        if (e == 0)
            e = kconv_wgmma_fwd(&cv->pk.k, ws, ws + cv->pk.xbytes, c->dptr[cp->y], &epi, part, cv->splits, cv->bn, 0,
                                NULL, stats, cv->stage, cv->tma, cv->pingpong, s);
        return gpu_check_cuda((cudaError_t)e, "kconv_wgmma_fwd (packed) launch", __FILE__, __LINE__, d);
    }
    float *part = cv->splits > 1 ? (float *)(void *)ws : NULL;
    int e = kconv_wgmma_fwd(&cp->kp, c->dptr[cp->x], c->dptr[cp->w], c->dptr[cp->y], &epi, part, cv->splits, cv->bn,
                            0, NULL, stats, cv->stage, cv->tma, cv->pingpong, s);
    return gpu_check_cuda((cudaError_t)e, "kconv_wgmma_fwd launch", __FILE__, __LINE__, d);
}

static void cw_release(gpart *p)
{
    free(p->priv);
    p->priv = NULL;
}

static const char *cw_detail(const gpart *p)
{
    const cw_priv *cv = p->priv;
    return cv ? cv->detail : "";
}

const gpu_engine gpu_engine_conv_igemm_wgmma = {
    ENG, "Hopper implicit-GEMM conv and dgrad (wgmma, TMA im2col or cp.async producer warpgroup, split-K; dgrad by stride phases): 1-/2-/3-D, groups 1, f16/bf16, K % 8 == 0, sm_90; x and w channels-last with C % 8 == 0, else padded channels-last copies (C = 3 stem; fwd only)",
    cw_supports, cw_cost, cw_workspace, cw_build, cw_execute, cw_release, cw_detail,
};
