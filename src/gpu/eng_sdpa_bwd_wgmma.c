/* eng_sdpa_bwd_wgmma.c — sdpa_bwd_wgmma, the Hopper attention backward
 * (kernels/sdpa_bwd_wgmma_sm90a.cu: TMA, wgmma, a producer warpgroup and two
 * consumers, one block per 128 keys looping over the query tiles; dQ summed
 * in an f32 workspace by bulk reduce-adds, in key-block order when the plan
 * is deterministic).  Compute capability 9.0 only; q, k, v, o,
 * do, dq, dk, dv in one of f16/bf16, D and Dv <= 256 with D % 8 == Dv % 8 == 0 (D != Dv:
 * both zero-padded to the wider; past 128 the wide kernel, sdpa_bwd_wide_sm90a.cuh, with its dQ sums
 * unordered, so a deterministic plan is refused there), rows
 * contiguous and strides TMA can describe (o may be f32); scale > 0, causal or
 * window (either alignment; query tiles outside the band skipped),
 * seq_len_q/seq_len_kv, ragged THD q and/or k, v (seq_offsets_q/kv: one
 * block per 128 keys of a sequence, each sequence's rows from its first
 * token, the band kernel masking the neighbours' rows), GQA/MQA, bhsd or
 * bshd, dropout (sdpa.h's Philox mask replayed in the S^T layout; not with
 * ragged, which gpu_sdpa_analyze refuses).  Everything else (bias, D or
 * Dv > 256, Sq or Skv of 0) is refused with the attribute and its value, and
 * sdpa_bwd_flash (any shape) takes it.  Semantics: src/ops/sdpa.h. */
#include "gpu/eng_seq.h"
#include "gpu/engine.h"
#include "gpu/kern_sdpa_bwd_wgmma.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ENG "sdpa_bwd_wgmma"

typedef struct bw_priv {
    xk_sdpa kp;
    sdpa_ids ids;
    int64_t st[4][4]; /* q, k, v, do element strides as stored */
    bool deterministic; /* the plan asks for it: dQ tiles summed in key-block order */
    char detail[160];
} bw_priv;

/* sdpa_bwd_flash's analysis, then what this engine adds; kp, ids filled. */
static bool bw_check(const gplan *pl, const gpart *p, xk_sdpa *kp, sdpa_ids *ids, char *why, size_t len)
{
    if (!gpu_sdpa_analyze(pl, p, SDPA_K_BWD_MMA, kp, ids, why, len)) {
        /* the inherited reason names sdpa_bwd_flash: say whose reason it is (same length) */
        char *at = strstr(why, "sdpa_bwd_flash");
        if (at)
            memcpy(at, ENG, strlen(ENG));
        return false;
    }
    const ggraph *g = pl->g;
    /* ragged (THD) q and/or k, v: [1, H, T, D] maps from each sequence's first token, the band kernel's masks
     * (gpu_sdpa_analyze took the rest: no bias, no dropout, offsets [B+1] in i32/i64) */
    const xdnn_dtype t = g->t[ids->q].dtype;
    const struct { int id; const char *name; } io[] = {{ids->q, "q"},   {ids->k, "k"},   {ids->v, "v"},
                                                       {ids->o, "o"},   {ids->dout, "do"}, {ids->dq, "dq"},
                                                       {ids->dk, "dk"}, {ids->dv, "dv"}};
    for (size_t i = 3; i < sizeof io / sizeof io[0]; i++)
        if (g->t[io[i].id].dtype != t && !(i == 3 && g->t[io[i].id].dtype == XDNN_F32))
            return gpu_refuse(why, len, "sdpa_bwd: " ENG " needs %s in q's dtype %s%s, got %s", io[i].name, gg_dtype_name(t),
                        i == 3 ? " or f32" : "", gg_dtype_name(g->t[io[i].id].dtype));
    if (kp->D % 8 != 0 || kp->D > 256)
        return gpu_refuse(why, len, "sdpa_bwd: " ENG " needs D %% 8 == 0 and D <= 256, got D=%d", kp->D);
    if (kp->Dv % 8 != 0 || kp->Dv > 256)
        return gpu_refuse(why, len, "sdpa_bwd: " ENG " needs Dv %% 8 == 0 and Dv <= 256, got Dv=%d", kp->Dv);
    /* past 128 columns the wide kernel adds dQ tiles unordered (no shared memory left to stage them) */
    if (pl->deterministic && (kp->D > 128 || kp->Dv > 128))
        return gpu_refuse(why, len, "sdpa_bwd: " ENG " has no deterministic dQ past 128 columns, got D=%d Dv=%d",
                          kp->D, kp->Dv);
    if (kp->Sq < 1 || kp->Skv < 1)
        return gpu_refuse(why, len, "sdpa_bwd: " ENG " needs Sq, Skv >= 1, got Sq=%d Skv=%d", kp->Sq, kp->Skv);
    if (ids->bias >= 0)
        return gpu_refuse(why, len, "sdpa_bwd: " ENG " takes no bias input");
    /* t = round(p 65536) = 65536 drops everything: the kernels compare u16 << 16 against t << 16 in 32 bits */
    if (kp->drop_threshold > 65536u)
        return gpu_refuse(why, len, "sdpa_bwd: " ENG " needs dropout < 1 - 2^-17 (16-bit keep test), got dropout=%.9g",
                          1.0 - 1.0 / (double)kp->drop_scale);
    if (!(kp->scale > 0.0f))
        return gpu_refuse(why, len, "sdpa_bwd: " ENG " needs scale > 0, got scale=%g", (double)kp->scale);
    if ((int64_t)kp->B * kp->Hk > 65535)
        return gpu_refuse(why, len, "sdpa_bwd: " ENG " grid: B*Hk = %lld exceeds 65535", (long long)kp->B * kp->Hk);
    for (size_t i = 0; i < sizeof io / sizeof io[0]; i++) {
        int64_t dims[4], st[4];
        gpu_sdpa_bhsd(&g->t[io[i].id], dims, st);
        if (st[3] != 1)
            return gpu_refuse(why, len, "sdpa_bwd: " ENG " needs %s's head dim contiguous, got stride %lld", io[i].name,
                        (long long)st[3]);
        for (int d = 0; d < 3; d++)
            if (st[d] % 8 != 0 && dims[d] != 1)
                return gpu_refuse(why, len, "sdpa_bwd: " ENG " needs %s's strides in multiples of 8 elements (16 bytes), "
                                      "got %lld in dim %d", io[i].name, (long long)st[d], d);
    }
    return true;
}

static bool bw_supports(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    if (dev->cc_major != 9 || dev->cc_minor != 0)
        return gpu_refuse(why, len, ENG " needs compute capability 9.0 (sm_90a wgmma), device is sm_%d%d", dev->cc_major,
                    dev->cc_minor);
    if (!xk_sdpa_bwd_wgmma_built())
        return gpu_refuse(why, len, ENG ": this build has no sm_90a code (kernels/*_sm90a.cu rule)");
    xk_sdpa kp;
    sdpa_ids ids;
    if (!bw_check(pl, p, &kp, &ids, why, len))
        return false;
    const int dmax = kp.D > kp.Dv ? kp.D : kp.Dv;
    const size_t need = (size_t)xk_sdpa_bwd_wgmma_smem(dmax), have = gpu_smem_per_block(dev);
    if (need > have)
        return gpu_refuse(why, len, ENG ": D=%d Dv=%d needs %zu bytes of shared memory per block, the device gives %zu",
                          kp.D, kp.Dv, need, have);
    return true;
}

/* H100, bench/RESULTS-sdpa.md 2026-11-24: well ahead of sdpa_bwd_flash (50) wherever it runs; with dropout
 * (session 11) 375 TFLOP/s at b4h16s4096d128 against sdpa_bwd_flash's 81, so 300 plans it there too. */
static double bw_cost(const gplan *pl, const gpart *p, const gpu_device *dev) { return gpu_roofline_us(p, 300.0); }

static size_t bw_ws(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    xk_sdpa kp;
    sdpa_ids ids;
    char why[256];
    if (!bw_check(pl, p, &kp, &ids, why, sizeof why))
        return 0;
    return xk_sdpa_bwd_wgmma_ws(kp.B, kp.Hq, kp.Sq, kp.D > kp.Dv ? kp.D : kp.Dv, ids.off_q >= 0);
}

static xdnn_status bw_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d)
{
    bw_priv *bp = calloc(1, sizeof *bp);
    if (!bp)
        return XDNN_ERR_NOMEM;
    p->priv = bp;
    char why[512];
    if (!bw_check(c->plan, p, &bp->kp, &bp->ids, why, sizeof why)) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), ENG ": %s: %s", p->name, why);
        return XDNN_ERR_UNSUPPORTED;
    }
    bp->deterministic = c->plan->deterministic;
    const int ids[4] = {bp->ids.q, bp->ids.k, bp->ids.v, bp->ids.dout};
    for (int i = 0; i < 4; i++) {
        int64_t dims[4];
        gpu_sdpa_bhsd(&c->plan->g->t[ids[i]], dims, bp->st[i]);
    }
    const xk_sdpa *k = &bp->kp;
    snprintf(bp->detail, sizeof bp->detail, ENG " B=%d Hq=%d Hk=%d Sq=%d Skv=%d D=%d Dv=%d%s%s%s%s%s%s%s%s%s", k->B, k->Hq,
             k->Hk, k->Sq, k->Skv, k->D, k->Dv, k->D > 128 || k->Dv > 128 ? " wide" : "", k->right == 0 && k->left < 0 ? " causal" : "",
             k->left >= 0 || k->right > 0 ? " window" : "", k->right >= 0 && k->bottom_right ? " bottom_right" : "",
             bp->ids.len_q >= 0 || bp->ids.len_kv >= 0 ? " seqlens" : "", bp->ids.off_q >= 0 ? " ragged-q" : "",
             bp->ids.off_kv >= 0 ? " ragged-kv" : "", k->drop_threshold ? " dropout" : "",
             bp->deterministic ? " deterministic" : "");
    return XDNN_OK;
}

static const void *dev_ptr(const gpu_ctx *c, int id) { return id >= 0 ? c->dptr[id] : NULL; }

static xdnn_status bw_execute(gpu_ctx *c, gpart *p, cudaStream_t s, xdnn_diags_t *d)
{
    const bw_priv *bp = p->priv;
    xk_sdpa k = bp->kp;
    const sdpa_ids *ids = &bp->ids;
    k.q.p = dev_ptr(c, ids->q);
    k.k.p = dev_ptr(c, ids->k);
    k.v.p = dev_ptr(c, ids->v);
    k.o.p = dev_ptr(c, ids->o);
    k.stats.p = dev_ptr(c, ids->stats);
    k.len_q.p = dev_ptr(c, ids->len_q);
    k.len_kv.p = dev_ptr(c, ids->len_kv);
    k.dout.p = dev_ptr(c, ids->dout);
    k.dq.p = dev_ptr(c, ids->dq);
    k.dk.p = dev_ptr(c, ids->dk);
    k.dv.p = dev_ptr(c, ids->dv);
    k.off_q.p = dev_ptr(c, ids->off_q);
    k.off_kv.p = dev_ptr(c, ids->off_kv);
    int rc = xk_sdpa_bwd_wgmma(&k, (const int64_t(*)[4])bp->st, c->ws + p->ws_offset, bp->deterministic, s);
    return gpu_check_cuda((cudaError_t)rc, "xk_sdpa_bwd_wgmma", __FILE__, __LINE__, d);
}

static void bw_release(gpart *p)
{
    free(p->priv);
    p->priv = NULL;
}

static const char *bw_detail(const gpart *p)
{
    const bw_priv *bp = p->priv;
    return bp ? bp->detail : "";
}

const gpu_engine gpu_engine_sdpa_bwd_wgmma = {
    .name = ENG,
    .summary = "attention backward on Hopper (sm_90a: TMA + wgmma, keys per block, dQ by f32 bulk adds, ordered "
               "when deterministic), f16/bf16, D, Dv <= 256 (past 128 a kernel of 64 keys per block), causal, window, seq lens, ragged (THD), GQA, dropout",
    .supports = bw_supports, .cost = bw_cost, .workspace = bw_ws,
    .build = bw_build, .execute = bw_execute, .release = bw_release, .detail = bw_detail,
};
