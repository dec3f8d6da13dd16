/* eng_sdpa_fp8.c — sdpa_fp8_wgmma, the fp8 form of sdpa (src/ops/sdpa_fp8.c:
 * q_scale, k_scale, v_scale, s_scale[, o_scale] with fp8 q, k, v; results o,
 * stats, amax_s, amax_o) on Hopper: kernels/sdpa_fp8_wgmma_sm90a.cu (a V
 * transpose pre-pass into the workspace, then TMA + fp8 wgmma with P
 * quantized to e4m3 in registers).
 *
 * Takes: q, k, v fp8_e4m3 [B, H, S, 128] (bhsd or bshd: head dim contiguous,
 * the other strides multiples of 16 bytes), Hq a multiple of Hk (GQA/MQA),
 * any Sq, Skv; no mask or causal (either alignment); scale > 0; o bf16, or
 * fp8_e4m3 / fp8_e5m2 with o_scale (head dim contiguous, even strides);
 * stats; amax_s, amax_o; each scale a one-element f32 tensor or a scalar.
 * Refuses, naming the port or attribute and its value: fp8_e5m2 q, k or v,
 * D != 128, bias, seq_len_q / seq_len_kv, dropout, window, page_table,
 * seq_offsets_q / seq_offsets_kv.  Compute capability 9.0 only.
 * Accuracy: P8 is rounded from the running-max probabilities, not the
 * normalized ones the reference rounds (the kernel file says why), so o is
 * within fp8 rounding noise of the reference, not bit-exact. */
#include "gpu/engine.h"
#include "gpu/kern_sdpa_fp8.h"
#include "ops/op.h"
#include "ops/sdpa.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char ENG[] = "sdpa: sdpa_fp8_wgmma";
enum { FP8_D = 128 };

/* Tensor ids of the node (-1 = absent), in port / result order. */
typedef struct fp8_ids {
    int q, k, v, sc[5], o, stats, amax_s, amax_o;
} fp8_ids;

typedef struct fp8_priv {
    xk_sdpa_fp8 kp;
    fp8_ids ids;
    char detail[160];
} fp8_priv;

static int port_of(const gnode *n, int i) { return i < n->nin ? n->in[i] : -1; }
static int result_of(const gnode *n, int r) { return r < n->nouts ? n->outs[r] : (r == 0 ? n->out : -1); }

/* The head dim contiguous and the other strides multiples of `align` elements (size-1 dims aside). */
static bool strides_ok(const gtensor *t, int align, const char *name, char *why, size_t len)
{
    if (t->strides[3] != 1 && t->dims[3] != 1)
        return gpu_refuse(why, len, "%s needs %s's head dim contiguous, got stride %lld", ENG, name,
                          (long long)t->strides[3]);
    for (int d = 0; d < 3; d++)
        if (t->dims[d] != 1 && t->strides[d] % align != 0)
            return gpu_refuse(why, len, "%s needs %s's strides in multiples of %d elements, got %lld in dim %d", ENG,
                              name, align, (long long)t->strides[d], d);
    return true;
}

/* Fill kp (all but the device pointers) and ids; false with the reason. */
static bool fp8_analyze(const gplan *pl, const gpart *p, xk_sdpa_fp8 *kp, fp8_ids *ids, char *why, size_t len)
{
    const ggraph *g = pl->g;
    memset(kp, 0, sizeof *kp);
    if (p->kind != GP_SINGLE || p->anchor < 0 || p->nnodes != 1)
        return gpu_refuse(why, len, "%s needs a single sdpa node, got a %s partition", ENG, gpart_kind_name(p->kind));
    const gnode *n = &g->n[p->anchor];
    if (strcmp(n->op, "sdpa") != 0)
        return gpu_refuse(why, len, "%s runs sdpa, not %s", ENG, n->op);
    if (!n->ir)
        return gpu_refuse(why, len, "%s: node has no IR attributes (hand-built graph)", n->name);
    const op_desc *d = op_get(n->ir->op);
    bool fp8 = false;
    for (int i = 0; i < 5; i++)
        fp8 |= (ids->sc[i] = port_of(n, SDPA_Q_SCALE + i)) >= 0;
    if (!fp8)
        return gpu_refuse(why, len, "%s runs the fp8 form of sdpa only (q_scale ... s_scale), %s has no scales", ENG,
                          n->name);
    /* what the kernel has no code for, named by its port */
    static const int unsupported[] = {SDPA_BIAS, SDPA_LEN_Q, SDPA_LEN_KV, SDPA_PAGE_TABLE, SDPA_OFF_Q, SDPA_OFF_KV};
    for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++)
        if (port_of(n, unsupported[i]) >= 0)
            return gpu_refuse(why, len, "%s: %s: port %s is not supported (no mask beyond causal)", ENG, n->name,
                              d->ports[unsupported[i]]);
    const xnode *ir = n->ir;
    const double drop = op_attr_float(ir, d, "dropout");
    if (drop != 0)
        return gpu_refuse(why, len, "%s: attribute dropout = %g is not supported", ENG, drop);
    int64_t w[2] = {-1, -1};
    if (op_attr_present(ir, d, "window") && op_attr_ints_n(ir, d, "window", 2, w) && (w[0] >= 0 || w[1] >= 0))
        return gpu_refuse(why, len, "%s: attribute window = [%lld, %lld] is not supported (causal is)", ENG,
                          (long long)w[0], (long long)w[1]);
    ids->q = port_of(n, SDPA_Q);
    ids->k = port_of(n, SDPA_K);
    ids->v = port_of(n, SDPA_V);
    ids->o = result_of(n, SDPA_R_O);
    ids->stats = result_of(n, SDPA_R_STATS);
    ids->amax_s = result_of(n, SDPA_R_AMAX_S);
    ids->amax_o = result_of(n, SDPA_R_AMAX_O);
    const struct { int id; const char *name; } io[] = {{ids->q, "q"}, {ids->k, "k"}, {ids->v, "v"}, {ids->o, "o"}};
    for (int i = 0; i < 4; i++) {
        const gtensor *t = io[i].id >= 0 ? &g->t[io[i].id] : NULL;
        if (!t || t->is_scalar || t->rank != 4)
            return gpu_refuse(why, len, "%s needs q, k, v and o as rank-4 tensors", ENG);
        if (i < 3 && t->dtype != XDNN_FP8_E4M3)
            return gpu_refuse(why, len, "%s needs %s in fp8_e4m3, got %s", ENG, io[i].name, gg_dtype_name(t->dtype));
        if (t->dims[3] != FP8_D)
            return gpu_refuse(why, len, "%s needs head dim %d, got %s with %lld", ENG, FP8_D, io[i].name,
                              (long long)t->dims[3]);
        if (!strides_ok(t, i < 3 ? 16 : 2, io[i].name, why, len)) /* q, k, v: 16-byte rows; o: pair stores */
            return false;
    }
    const gtensor *q = &g->t[ids->q], *k = &g->t[ids->k], *o = &g->t[ids->o];
    const bool has_o_scale = ids->sc[4] >= 0;
    if (has_o_scale ? o->dtype != XDNN_FP8_E4M3 && o->dtype != XDNN_FP8_E5M2 : o->dtype != XDNN_BF16)
        return gpu_refuse(why, len, "%s needs o in %s, got %s", ENG, has_o_scale ? "fp8_e4m3 or fp8_e5m2" : "bf16",
                          gg_dtype_name(o->dtype));
    for (int i = 0; i < 4; i++)
        if (q->dims[i] > INT32_MAX / 2 || k->dims[i] > INT32_MAX / 2)
            return gpu_refuse(why, len, "%s: dim %d exceeds the kernel's 32-bit indexing", ENG, i);
    kp->B = (int32_t)q->dims[0], kp->Hq = (int32_t)q->dims[1], kp->Sq = (int32_t)q->dims[2];
    kp->Hk = (int32_t)k->dims[1], kp->Skv = (int32_t)k->dims[2], kp->D = FP8_D;
    if (kp->Hk < 1 || kp->Hq % kp->Hk != 0)
        return gpu_refuse(why, len, "%s: Hq=%d is not a multiple of Hk=%d", ENG, kp->Hq, kp->Hk);
    for (int i = 0; i < 5; i++) {
        if (ids->sc[i] < 0)
            continue;
        const gtensor *t = &g->t[ids->sc[i]];
        if (t->dtype != XDNN_F32 || (!t->is_scalar && t->numel != 1))
            return gpu_refuse(why, len, "%s needs %s as one f32, got %s of %lld elements", ENG,
                              d->ports[SDPA_Q_SCALE + i], gg_dtype_name(t->dtype), (long long)t->numel);
        kp->sc_v[i] = t->is_scalar ? (float)t->scalar : 0.0f;
    }
    if (ids->stats >= 0 && (g->t[ids->stats].dtype != XDNN_F32 || g->t[ids->stats].rank != 4))
        return gpu_refuse(why, len, "%s needs stats in f32 [B, Hq, Sq, 1], got %s", ENG,
                          gg_dtype_name(g->t[ids->stats].dtype));
    const double scale = op_attr_present(ir, d, "scale") ? op_attr_float(ir, d, "scale") : 1.0 / sqrt((double)FP8_D);
    if (!(scale > 0))
        return gpu_refuse(why, len, "%s needs scale > 0, got scale=%g", ENG, scale);
    kp->scale = (float)scale;
    kp->causal = op_attr_bool(ir, d, "causal");
    const char *align = op_attr_str(ir, d, "align");
    kp->bottom_right = align && strcmp(align, "bottom_right") == 0;
    kp->o_fp8 = o->dtype == XDNN_FP8_E4M3 ? 1 : o->dtype == XDNN_FP8_E5M2 ? 2 : 0;
    const struct { int id; int64_t *st; int n; } st[] = {{ids->q, kp->q_st, 4}, {ids->k, kp->k_st, 4},
                                                         {ids->v, kp->v_st, 4}, {ids->o, kp->o_st, 4},
                                                         {ids->stats, kp->stats_st, 3}};
    for (int i = 0; i < 5; i++)
        if (st[i].id >= 0)
            memcpy(st[i].st, g->t[st[i].id].strides, (size_t)st[i].n * sizeof(int64_t));
    return true;
}

static bool fp8_supports(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    if (dev->cc_major != 9 || dev->cc_minor != 0)
        return gpu_refuse(why, len, "sdpa_fp8_wgmma needs compute capability 9.0 (sm_90a fp8 wgmma), device is sm_%d%d",
                          dev->cc_major, dev->cc_minor);
    if (!xk_sdpa_fp8_built())
        return gpu_refuse(why, len, "sdpa_fp8_wgmma: this build has no sm_90a code (kernels/*_sm90a.cu rule)");
    xk_sdpa_fp8 kp;
    fp8_ids ids;
    if (!fp8_analyze(pl, p, &kp, &ids, why, len))
        return false;
    const size_t need = (size_t)xk_sdpa_fp8_smem(), have = gpu_smem_per_block(dev);
    if (need > have)
        return gpu_refuse(why, len, "sdpa_fp8_wgmma needs %zu bytes of shared memory per block, the device gives %zu",
                          need, have);
    return true;
}

/* The only engine of the fp8 form: the rate it reached on the H100 at b4h16s4096d128 (bench/RESULTS-lowp.md
 * 2026-11-24: 690-700 TFLOP/s, causal 560). */
static double fp8_cost(const gplan *pl, const gpart *p, const gpu_device *dev) { return gpu_roofline_us(p, 690.0); }

static size_t fp8_ws(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    xk_sdpa_fp8 kp;
    fp8_ids ids;
    char why[256];
    if (!fp8_analyze(pl, p, &kp, &ids, why, sizeof why))
        return 0;
    return xk_sdpa_fp8_ws(kp.B, kp.Hk, kp.Skv, kp.D); /* V^T, 256 bytes of alignment slack included */
}

static xdnn_status fp8_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d)
{
    fp8_priv *fp = calloc(1, sizeof *fp);
    if (!fp)
        return XDNN_ERR_NOMEM;
    p->priv = fp;
    char why[512];
    if (!fp8_analyze(c->plan, p, &fp->kp, &fp->ids, why, sizeof why)) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), "sdpa_fp8_wgmma: %s: %s", p->name, why);
        return XDNN_ERR_UNSUPPORTED;
    }
    const xk_sdpa_fp8 *k = &fp->kp;
    snprintf(fp->detail, sizeof fp->detail, "sdpa_fp8_wgmma B=%d Hq=%d Hk=%d Sq=%d Skv=%d D=%d%s o=%s (+ V^T pre-pass)",
             k->B, k->Hq, k->Hk, k->Sq, k->Skv, k->D, k->causal ? " causal" : "",
             k->o_fp8 == 1 ? "fp8_e4m3" : k->o_fp8 == 2 ? "fp8_e5m2" : "bf16");
    return XDNN_OK;
}

static xdnn_status fp8_execute(gpu_ctx *c, gpart *p, cudaStream_t s, xdnn_diags_t *d)
{
    fp8_priv *fp = p->priv;
    xk_sdpa_fp8 k = fp->kp;
    const fp8_ids *ids = &fp->ids;
    k.q = c->dptr[ids->q];
    k.k = c->dptr[ids->k];
    k.v = c->dptr[ids->v];
    k.o = c->dptr[ids->o];
    k.stats = ids->stats >= 0 ? c->dptr[ids->stats] : NULL;
    k.amax_s = ids->amax_s >= 0 ? c->dptr[ids->amax_s] : NULL;
    k.amax_o = ids->amax_o >= 0 ? c->dptr[ids->amax_o] : NULL;
    for (int i = 0; i < 5; i++)
        k.sc_p[i] = ids->sc[i] >= 0 && !c->plan->g->t[ids->sc[i]].is_scalar ? c->dptr[ids->sc[i]] : NULL;
    k.vt = (void *)(((uintptr_t)(c->ws + p->ws_offset) + 255) & ~(uintptr_t)255);
    return gpu_check_cuda((cudaError_t)xk_sdpa_fp8_fwd(&k, s), "xk_sdpa_fp8_fwd", __FILE__, __LINE__, d);
}

static void fp8_release(gpart *p)
{
    free(p->priv);
    p->priv = NULL;
}

static const char *fp8_detail(const gpart *p)
{
    const fp8_priv *fp = p->priv;
    return fp ? fp->detail : "";
}

const gpu_engine gpu_engine_sdpa_fp8_wgmma = {
    .name = "sdpa_fp8_wgmma",
    .summary = "fp8 attention forward on Hopper (sm_90a: V^T pre-pass, TMA + fp8 wgmma, P to e4m3 in registers): "
               "e4m3 q, k, v, D = 128, causal or none, GQA, o bf16 or fp8 with o_scale, amax_s/amax_o",
    .supports = fp8_supports, .cost = fp8_cost, .workspace = fp8_ws,
    .build = fp8_build, .execute = fp8_execute, .release = fp8_release, .detail = fp8_detail,
};
