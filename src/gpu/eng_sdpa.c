/* eng_sdpa.c — the attention engines (kernels in kernels/sdpa*.cu, semantics
 * in src/ops/sdpa.h):
 *   sdpa_flash_wgmma the Hopper forward (kernels/sdpa_wgmma_sm90a.cu: TMA,
 *                    wgmma, a producer warpgroup and two consumers): compute
 *                    capability 9.0 only, q, k, v in one of f16/bf16, o in
 *                    it or f32 (then, as in sdpa_flash, P enters the P V
 *                    wgmmas as hi + lo halves: a second wgmma per k-step),
 *                    D, Dv <= 256 with D % 8 == Dv % 8 == 0, contiguous rows;
 *                    every mask: causal and window (either alignment, key
 *                    tiles outside the band skipped), seq_len_q/kv, bias,
 *                    dropout; GQA/MQA, stats, any strides TMA can describe;
 *   sdpa_flash       tensor-core (mma.sync m16n8k16) tiled online-softmax
 *                    forward: q, k, v in one of f16/bf16, o in it or f32 (then
 *                    P enters the tensor cores as hi + lo halves), any D, Dv
 *                    <= 256 (padded to a bucket of 32..256 in shared memory);
 *   sdpa_flash_tf32  the same forward for f32 graphs that allow tf32 (mma
 *                    m16n8k8 tf32: ~1e-3 relative, not f32's 1e-5);
 *   sdpa_naive       one warp per query row, f32 math: every forward the op
 *                    allows with D, Dv <= 256 and f32/f16/bf16 tensors;
 *   sdpa_bwd_flash   tensor-core backward (flash-attention-2 split: Delta,
 *                    a dQ pass over query tiles, a dK/dV pass over key tiles
 *                    that sums its GQA group): q, k, v, do in one of
 *                    f16/bf16, any D, Dv <= 256; no atomics, deterministic;
 *   sdpa_bwd         dq (one warp per query row) then dk, dv (one warp per key
 *                    row, summing its GQA group): no atomics, deterministic.
 * All of them: scale, causal, window, top_left/bottom_right, seq_len_q/kv,
 * additive bias of any broadcast shape, Philox dropout, stats (sdpa_flash_wgmma: strides TMA can describe).
 * Ragged THD sequences (seq_offsets_q/kv, src/ops/sdpa.h): sdpa_flash_wgmma,
 * sdpa_flash, sdpa_bwd_wgmma (eng_sdpa_bwd_wgmma.c), sdpa_bwd_flash and
 * sdpa_splitkv (eng_sdpa_splitkv.c); the others refuse them, naming the port
 * and the engines that take them.
 * None of them has the fp8 form (q_scale ... o_scale, amax_s, amax_o): they refuse it, naming the port and
 * sdpa_fp8_wgmma (eng_sdpa_fp8.c), its engine.
 * Attributes are read from the IR node (gnode.ir) exactly as sdpa_config does. */
#include "gpu/eng_seq.h"
#include "gpu/engine.h"
#include "ops/op.h"
#include "ops/sdpa.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PORT_Q = 0, PORT_K = 1, PORT_V = 2 };
enum { FWD_BIAS = 3, FWD_LEN_Q = 4, FWD_LEN_KV = 5, FWD_PAGE_TABLE = 6, FWD_OFF_Q = 7, FWD_OFF_KV = 8 };
enum { FWD_Q_SCALE = 9, FWD_O_SCALE = 13 }; /* the fp8 scales: q, k, v, s, o (src/ops/sdpa.h) */
enum { BWD_O = 3, BWD_DO = 4, BWD_STATS = 5, BWD_BIAS = 6, BWD_LEN_Q = 7, BWD_LEN_KV = 8, BWD_OFF_Q = 9,
       BWD_OFF_KV = 10 };
enum { ROWS_MAX_D = 256 };

static int xk_code(xdnn_dtype t)
{
    switch (t) {
    case XDNN_F32: return XK_F32;
    case XDNN_F16: return XK_F16;
    case XDNN_BF16: return XK_BF16;
    case XDNN_I32: return XK_I32;
    case XDNN_I64: return XK_I64;
    case XDNN_F64: return XK_F64;
    default: return -1;
    }
}

static bool is_float_io(xdnn_dtype t) { return t == XDNN_F32 || t == XDNN_F16 || t == XDNN_BF16; }

static int port(const gnode *n, int i) { return i < n->nin ? n->in[i] : -1; }
static int result(const gnode *n, int r) { return r < n->nouts ? n->outs[r] : (r == 0 ? n->out : -1); }

/* The tensor as the kernels see it: logical dims right-aligned into 4, stride
 * 0 on broadcast (size-1 or missing) dims. */
static xk_tensor xk_of(const ggraph *g, int id)
{
    xk_tensor x;
    memset(&x, 0, sizeof x);
    if (id < 0)
        return x;
    const gtensor *t = &g->t[id];
    x.dtype = xk_code(t->dtype);
    for (int d = 0; d < 4; d++) {
        int s = d - (4 - t->rank);
        x.st[d] = s >= 0 && t->dims[s] != 1 ? t->strides[s] : 0;
    }
    return x;
}

/* A seq-len tensor [B] or [B, 1, 1, 1]: its stride along B. */
static xk_tensor xk_len(const ggraph *g, int id)
{
    xk_tensor x;
    memset(&x, 0, sizeof x);
    if (id < 0)
        return x;
    const gtensor *t = &g->t[id];
    x.dtype = xk_code(t->dtype);
    x.st[0] = t->rank > 0 && t->dims[0] != 1 ? t->strides[0] : 0;
    return x;
}

/* Tensor t's dims and element strides as stored, in [B, H, S, D] order: a
 * rank-4 tensor's own, a ragged (THD, rank 3) one's as one batch of T rows:
 * [1, H, T, D] with strides [0, head, token, 1] (the TMA maps of the wgmma
 * engines read a packed tensor through them). */
void gpu_sdpa_bhsd(const gtensor *t, int64_t dims[4], int64_t st[4])
{
    if (t->rank == 3) {
        const int64_t d[4] = {1, t->dims[1], t->dims[0], t->dims[2]}, s[4] = {0, t->strides[1], t->strides[0],
                                                                              t->strides[2]};
        memcpy(dims, d, sizeof d);
        memcpy(st, s, sizeof s);
        return;
    }
    memcpy(dims, t->dims, 4 * sizeof *dims);
    memcpy(st, t->strides, 4 * sizeof *st);
}

static int32_t clamp_i32(int64_t v) { return v > INT32_MAX / 2 ? INT32_MAX / 2 : v < -1 ? -1 : (int32_t)v; }

bool gpu_sdpa_analyze(const gplan *pl, const gpart *p, sdpa_kind kind, xk_sdpa *kp, sdpa_ids *ids, char *why,
                      size_t len)
{
    const ggraph *g = pl->g;
    memset(kp, 0, sizeof *kp);
    memset(ids, 0xff, sizeof *ids); /* every id -1 */
    const bool bwd = kind == SDPA_K_BWD || kind == SDPA_K_BWD_MMA;
    const char *want = bwd ? "sdpa_bwd" : "sdpa";
    if (p->kind != GP_SINGLE || p->anchor < 0 || p->nnodes != 1)
        return gpu_refuse(why, len, "needs a single %s node, got a %s partition", want, gpart_kind_name(p->kind));
    const gnode *n = &g->n[p->anchor];
    if (strcmp(n->op, want) != 0)
        return gpu_refuse(why, len, "runs %s, not %s", want, n->op);
    if (!n->ir)
        return gpu_refuse(why, len, "%s: node has no IR attributes (hand-built graph)", n->name);
    ids->q = port(n, PORT_Q);
    ids->k = port(n, PORT_K);
    ids->v = port(n, PORT_V);
    if (bwd) {
        ids->o = port(n, BWD_O);
        ids->dout = port(n, BWD_DO);
        ids->stats = port(n, BWD_STATS);
        ids->bias = port(n, BWD_BIAS);
        ids->len_q = port(n, BWD_LEN_Q);
        ids->len_kv = port(n, BWD_LEN_KV);
        ids->off_q = port(n, BWD_OFF_Q);
        ids->off_kv = port(n, BWD_OFF_KV);
        ids->dq = result(n, 0);
        ids->dk = result(n, 1);
        ids->dv = result(n, 2);
    } else {
        ids->bias = port(n, FWD_BIAS);
        ids->len_q = port(n, FWD_LEN_Q);
        ids->len_kv = port(n, FWD_LEN_KV);
        ids->o = result(n, 0);
        ids->stats = result(n, 1);
        ids->page_table = port(n, FWD_PAGE_TABLE);
        ids->off_q = port(n, FWD_OFF_Q);
        ids->off_kv = port(n, FWD_OFF_KV);
    }
    /* the fp8 form (src/ops/sdpa_fp8.c) is sdpa_fp8_wgmma's (eng_sdpa_fp8.c).
     * Its amax results come only with the scales (inference requires them). */
    for (int i = FWD_Q_SCALE; !bwd && i <= FWD_O_SCALE; i++)
        if (port(n, i) >= 0)
            return gpu_refuse(why, len, "%s: %s (fp8 attention) runs on sdpa_fp8_wgmma only", n->name,
                              op_get(n->ir->op)->ports[i]);
    const bool serve = kind == SDPA_K_SERVE, ragged = ids->off_q >= 0 || ids->off_kv >= 0;
    const char *off_port = ids->off_q >= 0 ? "seq_offsets_q" : "seq_offsets_kv";
    if (serve)
        kind = SDPA_K_MMA;
    else if (ids->page_table >= 0)
        return gpu_refuse(why, len, "%s: page_table (paged attention) runs on sdpa_splitkv only", n->name);
    else if (ragged && kind != SDPA_K_MMA && kind != SDPA_K_BWD_MMA) /* the mma kernels address rows per sequence */
        return gpu_refuse(why, len, "%s: %s (ragged attention%s) runs on %s only", n->name, off_port,
                          bwd ? " backward" : "",
                          bwd ? "sdpa_bwd_wgmma and sdpa_bwd_flash" : "sdpa_flash_wgmma, sdpa_flash and sdpa_splitkv");
    const int need[] = {ids->q, ids->k, ids->v, ids->o};
    for (int i = 0; i < 4; i++) /* ragged (THD) tensors are rank 3 */
        if (need[i] < 0 || g->t[need[i]].is_scalar ||
            g->t[need[i]].rank != ((i == 0 || i == 3 ? ids->off_q : ids->off_kv) >= 0 ? 3 : 4))
            return gpu_refuse(why, len, "%s: q, k, v and o must be rank-4 tensors%s", n->name,
                              ragged ? " (rank 3 [T, H, D] with seq_offsets)" : "");
    if (bwd && (ids->dout < 0 || ids->stats < 0 || ids->dq < 0 || ids->dk < 0 || ids->dv < 0))
        return gpu_refuse(why, len, "%s: sdpa_bwd needs do, stats and all three results", n->name);
    const gtensor *q = &g->t[ids->q], *k = &g->t[ids->k], *v = &g->t[ids->v];
    int64_t dims[7] = {q->dims[0], q->dims[1], k->dims[1], q->dims[2], k->dims[2], q->dims[3], v->dims[3]};
    if (ids->off_q >= 0 || ids->off_kv >= 0) { /* THD [T, H, D]: B from the offsets, S = T (a bound) */
        const int off = ids->off_q >= 0 ? ids->off_q : ids->off_kv;
        dims[0] = g->t[off].rank == 1 ? g->t[off].dims[0] - 1 : 0;
        if (ids->off_q >= 0)
            dims[3] = q->dims[0], dims[5] = q->dims[2];
        if (ids->off_kv >= 0)
            dims[4] = k->dims[0], dims[6] = v->dims[2];
    }
    for (int i = 0; i < 7; i++)
        if (dims[i] > INT32_MAX / 2)
            return gpu_refuse(why, len, "%s: dim %lld exceeds the kernels' 32-bit indexing", n->name, (long long)dims[i]);
    kp->B = (int32_t)dims[0], kp->Hq = (int32_t)dims[1], kp->Hk = (int32_t)dims[2], kp->Sq = (int32_t)dims[3];
    kp->Skv = (int32_t)dims[4], kp->D = (int32_t)dims[5], kp->Dv = (int32_t)dims[6];
    if (kp->Hk < 1 || kp->Hq % kp->Hk != 0)
        return gpu_refuse(why, len, "%s: Hq=%d is not a multiple of Hk=%d", n->name, kp->Hq, kp->Hk);

    /* dtypes */
    const struct { int id; const char *name; } io[] = {
        {ids->q, "q"}, {ids->k, "k"}, {ids->v, "v"}, {ids->o, "o"}, {ids->bias, "bias"}, {ids->dout, "do"},
        {ids->dq, "dq"}, {ids->dk, "dk"}, {ids->dv, "dv"}, {ids->stats, "stats"}};
    for (size_t i = 0; i < sizeof io / sizeof io[0]; i++)
        if (io[i].id >= 0 && !is_float_io(g->t[io[i].id].dtype))
            return gpu_refuse(why, len, "%s: tensor %s has dtype %s (f32, f16 or bf16 supported)", want, io[i].name,
                        gg_dtype_name(g->t[io[i].id].dtype));
    const int lens[2] = {ids->len_q, ids->len_kv};
    for (int i = 0; i < 2; i++)
        if (lens[i] >= 0 && xk_code(g->t[lens[i]].dtype) < 0)
            return gpu_refuse(why, len, "%s: %s has dtype %s (i32, i64, f32, f16, bf16 or f64 supported)", want,
                        i ? "seq_len_kv" : "seq_len_q", gg_dtype_name(g->t[lens[i]].dtype));

    /* attributes, as sdpa_config reads them */
    const xnode *ir = n->ir;
    const op_desc *d = op_get(ir->op);
    double scale = op_attr_present(ir, d, "scale") ? op_attr_float(ir, d, "scale") : 1.0 / sqrt((double)dims[5]);
    int64_t w[2] = {-1, -1};
    if (op_attr_present(ir, d, "window") && !op_attr_ints_n(ir, d, "window", 2, w))
        w[0] = w[1] = -1;
    if (op_attr_bool(ir, d, "causal"))
        w[1] = 0;
    const char *align = op_attr_str(ir, d, "align");
    double drop = op_attr_float(ir, d, "dropout");
    if (!(drop >= 0 && drop < 1))
        return gpu_refuse(why, len, "%s: attribute 'dropout' = %g is not in [0, 1)", want, drop);
    kp->scale = (float)scale;
    kp->left = clamp_i32(w[0]);
    kp->right = clamp_i32(w[1]);
    kp->bottom_right = align && strcmp(align, "bottom_right") == 0;
    /* keep iff u16 >= t = round(p * 65536) (src/ops/sdpa.h); t + 1 so that 0 still says "no dropout" when a
     * tiny p rounds t to 0 (every element kept, scaled by 1/(1-p)) */
    kp->drop_threshold = drop > 0 ? sdpa_dropout_threshold(drop) + 1u : 0;
    kp->drop_scale = drop > 0 ? (float)(1.0 / (1.0 - drop)) : 1.0f;
    kp->seed = (uint64_t)op_attr_int(ir, d, "seed");

    kp->q = xk_of(g, ids->q);
    kp->k = xk_of(g, ids->k);
    kp->v = xk_of(g, ids->v);
    kp->o = xk_of(g, ids->o);
    kp->bias = xk_of(g, ids->bias);
    kp->len_q = xk_len(g, ids->len_q);
    kp->len_kv = xk_len(g, ids->len_kv);
    kp->stats = xk_of(g, ids->stats);
    kp->stats.st[3] = 0;
    kp->dout = xk_of(g, ids->dout);
    kp->dq = xk_of(g, ids->dq);
    kp->dk = xk_of(g, ids->dk);
    kp->dv = xk_of(g, ids->dv);
    if (ragged) { /* THD: xk_of put T in st[1], H in st[2]; swap them (st[0] is 0: rank 3) */
        const bool rq = ids->off_q >= 0, rkv = ids->off_kv >= 0;
        xk_tensor *thd[] = {rq ? &kp->q : NULL,  rq ? &kp->o : NULL,   rq ? &kp->stats : NULL,
                            rq ? &kp->dout : NULL, rq ? &kp->dq : NULL, rkv ? &kp->k : NULL,
                            rkv ? &kp->v : NULL,  rkv ? &kp->dk : NULL, rkv ? &kp->dv : NULL};
        for (size_t i = 0; i < sizeof thd / sizeof thd[0]; i++)
            if (thd[i]) {
                int64_t t = thd[i]->st[1];
                thd[i]->st[1] = thd[i]->st[2], thd[i]->st[2] = t;
            }
        const int offs[2] = {ids->off_q, ids->off_kv};
        for (int i = 0; i < 2; i++) {
            if (offs[i] < 0)
                continue;
            const gtensor *t = &g->t[offs[i]];
            if (t->rank != 1 || (t->dtype != XDNN_I32 && t->dtype != XDNN_I64))
                return gpu_refuse(why, len, "%s: %s must be [B+1] in i32 or i64, got %s of rank %d", want,
                                  i ? "seq_offsets_kv" : "seq_offsets_q", gg_dtype_name(t->dtype), t->rank);
        }
        kp->off_q = xk_len(g, ids->off_q);
        kp->off_kv = xk_len(g, ids->off_kv);
        /* the reference refuses these at inference (their index space is the padded one): never reached */
        if (ids->bias >= 0 || kp->drop_threshold)
            return gpu_refuse(why, len, "%s: %s with %s: ragged attention takes no bias or dropout", want,
                              ids->bias >= 0 ? "bias" : "dropout", off_port);
    }

    if (kp->D > ROWS_MAX_D || kp->Dv > ROWS_MAX_D)
        return gpu_refuse(why, len, "%s: head dims up to %d, got D=%d Dv=%d", want, ROWS_MAX_D, kp->D, kp->Dv);
    if (kind == SDPA_K_MMA || kind == SDPA_K_BWD_MMA) {
        const char *eng = kind == SDPA_K_MMA ? "sdpa_flash" : "sdpa_bwd_flash";
        xdnn_dtype t = q->dtype;
        if (t != XDNN_F16 && t != XDNN_BF16)
            return gpu_refuse(why, len, "%s: %s needs q in f16 or bf16 (tensor cores), got %s", want, eng,
                        gg_dtype_name(t));
        xdnn_dtype to = g->t[ids->o].dtype;
        if (k->dtype != t || v->dtype != t || (kind == SDPA_K_MMA && to != t && to != XDNN_F32))
            return gpu_refuse(why, len, "%s: %s needs q, k, v of one dtype%s, got %s, %s, %s -> %s", want, eng,
                        kind == SDPA_K_MMA ? " and o of it or f32" : "", gg_dtype_name(t), gg_dtype_name(k->dtype),
                        gg_dtype_name(v->dtype), gg_dtype_name(to));
        if (kind == SDPA_K_BWD_MMA && g->t[ids->dout].dtype != t)
            return gpu_refuse(why, len, "sdpa_bwd: sdpa_bwd_flash needs do of q's dtype %s, got %s", gg_dtype_name(t),
                        gg_dtype_name(g->t[ids->dout].dtype));
    }
    if (kind == SDPA_K_TF32) {
        if (q->dtype != XDNN_F32 || k->dtype != XDNN_F32 || v->dtype != XDNN_F32)
            return gpu_refuse(why, len, "sdpa: sdpa_flash_tf32 needs q, k, v in f32, got %s, %s, %s",
                        gg_dtype_name(q->dtype), gg_dtype_name(k->dtype), gg_dtype_name(v->dtype));
        if (!g->tf32)
            return gpu_refuse(why, len, "sdpa: sdpa_flash_tf32 rounds f32 to tf32, and the graph does not allow tf32 "
                                  "(tf32=false)");
    }
    if (kind != SDPA_K_ROWS && kind != SDPA_K_BWD &&
        ((int64_t)kp->B * kp->Hq > 65535 || (kind == SDPA_K_BWD_MMA && (int64_t)kp->B * kp->Hk > 65535)))
        return gpu_refuse(why, len, "%s: tensor-core grid: B*Hq = %lld exceeds 65535", want, (long long)kp->B * kp->Hq);
    return true;
}
/* ---- the six engines */

typedef struct sdpa_priv {
    xk_sdpa kp;
    sdpa_ids ids;
    sdpa_kind kind;
    bool wgmma;               /* SDPA_K_MMA on the sm_90a kernel */
    int64_t qkv_st[3][4];     /* q, k, v element strides as stored (kp's are 0 on size-1 dims) */
    char detail[160];
} sdpa_priv;

static bool supports_kind(const gplan *pl, const gpart *p, sdpa_kind kind, char *why, size_t len)
{
    xk_sdpa kp;
    sdpa_ids ids;
    return gpu_sdpa_analyze(pl, p, kind, &kp, &ids, why, len);
}

/* Shared memory a block may opt into: the device's figure, else the
 * architecture's (sm_80: 163 KiB, sm_90: 227 KiB). */
static size_t smem_limit(const gpu_device *dev)
{
    if (dev->smem_optin)
        return dev->smem_optin;
    return dev->cc_major >= 9 ? 232448 : dev->cc_major == 8 && dev->cc_minor == 0 ? 166912 : 101376;
}

static bool mma_supports(const gplan *pl, const gpart *p, const gpu_device *dev, sdpa_kind kind, const char *eng,
                         char *why, size_t len)
{
    if (dev->cc_major < 8)
        return gpu_refuse(why, len, "%s needs sm_80 or newer (mma.sync bf16/tf32), device is sm_%d%d", eng, dev->cc_major,
                    dev->cc_minor);
    xk_sdpa kp;
    sdpa_ids ids;
    if (!gpu_sdpa_analyze(pl, p, kind, &kp, &ids, why, len))
        return false;
    int need = kind == SDPA_K_MMA ? xk_sdpa_fwd_mma_smem(kp.D, kp.Dv)
               : kind == SDPA_K_TF32 ? xk_sdpa_fwd_tf32_smem(kp.D, kp.Dv)
                                     : xk_sdpa_bwd_mma_smem(kp.D, kp.Dv);
    if ((size_t)need > smem_limit(dev))
        return gpu_refuse(why, len, "%s: head dims D=%d Dv=%d need %d bytes of shared memory per block, the device "
                              "gives %zu", eng, kp.D, kp.Dv, need, smem_limit(dev));
    return true;
}

/* What the Hopper forward takes beyond sdpa_flash's analysis (kp, ids from
 * gpu_sdpa_analyze with SDPA_K_MMA): the one-line reason names the attribute
 * or tensor and its value; sdpa_flash takes everything refused here. */
static bool wgmma_check(const gplan *pl, const xk_sdpa *kp, const sdpa_ids *ids, char *why, size_t len)
{
    const ggraph *g = pl->g;
    const char *e = "sdpa: sdpa_flash_wgmma";
    /* ragged (THD) q and/or k, v: read through [1, H, T, D] maps from each sequence's first token (gpu_sdpa_analyze
     * took the rest: no bias, no dropout, offsets [B+1] in i32/i64) */
    /* gpu_sdpa_analyze took q, k, v of one 16-bit dtype and o of it or f32; an f32 o is the SPLIT kernel
     * (P as hi + lo halves: f32-level accuracy, o stored as float pairs) */
    if (g->t[ids->o].dtype != g->t[ids->q].dtype && g->t[ids->o].dtype != XDNN_F32)
        return gpu_refuse(why, len, "%s needs o in q's dtype %s or f32, got %s", e, gg_dtype_name(g->t[ids->q].dtype),
                    gg_dtype_name(g->t[ids->o].dtype));
    if (kp->D % 8 != 0 || kp->Dv % 8 != 0)
        return gpu_refuse(why, len, "%s needs D %% 8 == 0 and Dv %% 8 == 0 (16-byte TMA rows), got D=%d Dv=%d", e,
                          kp->D, kp->Dv);
    if (!(kp->scale > 0.0f))
        return gpu_refuse(why, len, "%s needs scale > 0, got scale=%g", e, (double)kp->scale);
    const struct { int id; const char *name; } t[] = {{ids->q, "q"}, {ids->k, "k"}, {ids->v, "v"}, {ids->o, "o"}};
    for (int i = 0; i < 4; i++) {
        int64_t dims[4], st[4];
        gpu_sdpa_bhsd(&g->t[t[i].id], dims, st);
        if (st[3] != 1)
            return gpu_refuse(why, len, "%s needs %s's head dim contiguous, got stride %lld", e, t[i].name,
                        (long long)st[3]);
        for (int d = 0; d < 3; d++)
            if (st[d] % 8 != 0 && dims[d] != 1)
                return gpu_refuse(why, len, "%s needs %s's strides in multiples of 8 elements (16 bytes), got "
                                      "%lld in dim %d", e, t[i].name, (long long)st[d], d);
    }
    return true;
}

/* (bias, window, seq lens and dropout are all taken: the kernel reads the bias and the lengths per element
 * and per batch, skips the key tiles outside the band and draws sdpa_flash's Philox words) */
static bool wgmma_supports(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    if (dev->cc_major != 9 || dev->cc_minor != 0)
        return gpu_refuse(why, len, "sdpa_flash_wgmma needs compute capability 9.0 (sm_90a wgmma), device is sm_%d%d",
                    dev->cc_major, dev->cc_minor);
    if (!xk_sdpa_fwd_wgmma_built())
        return gpu_refuse(why, len, "sdpa_flash_wgmma: this build has no sm_90a code (kernels/*_sm90a.cu rule)");
    xk_sdpa kp;
    sdpa_ids ids;
    if (!gpu_sdpa_analyze(pl, p, SDPA_K_MMA, &kp, &ids, why, len)) {
        /* sdpa_flash's requirements are this engine's too: say whose reason it is */
        char *at = strstr(why, "sdpa_flash ");
        if (at && strlen(why) + 6 < len) {
            memmove(at + 16, at + 10, strlen(at + 10) + 1);
            memcpy(at + 10, "_wgmma", 6);
        }
        return false;
    }
    if (!wgmma_check(pl, &kp, &ids, why, len))
        return false;
    int need = xk_sdpa_fwd_wgmma_smem(kp.D > kp.Dv ? kp.D : kp.Dv);
    if ((size_t)need > smem_limit(dev))
        return gpu_refuse(why, len, "sdpa_flash_wgmma: D=%d Dv=%d need %d bytes of shared memory per block, the "
                          "device gives %zu", kp.D, kp.Dv, need, smem_limit(dev));
    return true;
}

static bool flash_supports(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    return mma_supports(pl, p, dev, SDPA_K_MMA, "sdpa_flash", why, len);
}
static bool tf32_supports(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    return mma_supports(pl, p, dev, SDPA_K_TF32, "sdpa_flash_tf32", why, len);
}
static bool bwd_flash_supports(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    return mma_supports(pl, p, dev, SDPA_K_BWD_MMA, "sdpa_bwd_flash", why, len);
}
static bool naive_supports(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    return supports_kind(pl, p, SDPA_K_ROWS, why, len);
}
static bool bwd_supports(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    return supports_kind(pl, p, SDPA_K_BWD, why, len);
}

/* Rates the kernels reach, roughly (TFLOP/s of the op's own flop count on an
 * H100, bench/RESULTS-sdpa.md 2026-11-23: sdpa_flash 90-150, sdpa_bwd_flash
 * 25-75; sdpa_flash_tf32 not timed yet: a guess at half of sdpa_flash's rate,
 * still 10x the f32 warp-per-row loops). */
static double flash_cost(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    /* a bias or dropout: 45 / 148 TFLOP/s at b4h16s4096d128 (bench/RESULTS-sdpa.md, session 8 for the bias;
     * dropout 3.71 ms in session 10, one Philox call per row and 8 keys shared by a quad; 56 before) */
    xk_sdpa kp;
    sdpa_ids ids;
    char why[256];
    double rate = 110.0;
    if (gpu_sdpa_analyze(pl, p, SDPA_K_MMA, &kp, &ids, why, sizeof why) && (ids.bias >= 0 || kp.drop_threshold))
        rate = ids.bias >= 0 ? 45.0 : 148.0;
    return gpu_sdpa_underfill_us(pl, p, dev, 64, rate); /* one block per 64 query rows */
}
/* sdpa_flash_wgmma's plan for few query rows (its v10, xk_sdpa_fwd_wgmma_ws) where the kernel takes it: dense q
 * and k/v, no bias or dropout (decided from the ids: the tensors' addresses are not known when planning) */
static size_t wgmma_pack_plan(const xk_sdpa *kp, const sdpa_ids *ids, int sm_count, int *pack, int *nsplit)
{
    *pack = 0, *nsplit = 1;
    if (ids->bias >= 0 || kp->drop_threshold || ids->off_q >= 0 || ids->off_kv >= 0)
        return 0;
    return xk_sdpa_fwd_wgmma_ws(kp, sm_count, pack, nsplit);
}

/* sdpa_flash_wgmma on the H100 (bench/RESULTS-sdpa.md): 590-630 TFLOP/s at D = 128, 370-420 at D = 64, 225 at
 * D = 40 padded to 64: ranked ahead of sdpa_flash everywhere it runs. */
static double wgmma_cost(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    /* A bias or dropout, b4h16s4096d128 bf16 on the H100 (bench/RESULTS-sdpa.md, session 8, kernel v7): a bias
     * by TMA 1.08-1.12 ms for every broadcast (~500 TFLOP/s; cuDNN 1.72-1.97), one read per element from
     * global memory (f32 and other dtypes, odd strides, D > 128) 2.07-2.13 ms (~260); dropout 0.1 2.01 ms (273,
     * session 10: one Philox call per row and 8 keys, made once per quad; 5.88 ms, 93, with a call per element);
     * sdpa_flash 12.2 and 3.71.  Windows and seq lens cost nothing beyond the visible tiles. */
    xk_sdpa kp;
    sdpa_ids ids;
    char why[256];
    double rate = 450.0;
    if (gpu_sdpa_analyze(pl, p, SDPA_K_MMA, &kp, &ids, why, sizeof why)) {
        if (ids.bias >= 0)
            rate = xk_sdpa_bias_tma_layout(&kp, ids.off_q >= 0 || ids.off_kv >= 0) ? 480.0 : 250.0; /* TMA or v6 */
        if (kp.drop_threshold)
            rate = fmin(rate, 270.0);
        /* an f32 o: P V twice (hi + lo), one of the two GEMMs doubled, ~1.33x the tensor-core time (not measured
         * yet); sdpa_flash does the same second P V on mma.sync, so the order against it stays */
        if (pl->g->t[ids.o].dtype == XDNN_F32)
            rate /= 1.33;
        int pack, nsplit;
        wgmma_pack_plan(&kp, &ids, dev->sm_count, &pack, &nsplit);
        if (pack) {
            /* v10, few query rows (H100, session 11: 14-245 us at Sq 1-256, Skv 1k-128k, within ~15%): the
             * packed tiles' tensor work (padding rows included) at 560 TFLOP/s or K and V read once per group
             * at 2.7 TB/s, whichever is longer, + 12 us (the launch, a block's fill and drain) + 4 us with the
             * combine pass; never above the plain kernel's figure (v10 only takes what that grid underfills) */
            const double rows = ceil(kp.Sq / (128.0 / pack)) * 128.0 * kp.B * kp.Hk;
            const double flops = 2.0 * rows * kp.Skv * (kp.D + kp.Dv) * (450.0 / rate);
            const double bytes = 2.0 * kp.B * kp.Hk * (double)kp.Skv * (kp.D + kp.Dv);
            return fmin(fmax(flops / 560e6, bytes / 2.7e6) + 12.0 + (nsplit > 1 ? 4.0 : 0.0),
                        gpu_sdpa_underfill_us(pl, p, dev, 128, rate));
        }
    }
    return gpu_sdpa_underfill_us(pl, p, dev, 128, rate); /* one work item per 128 query rows */
}
static double tf32_cost(const gplan *pl, const gpart *p, const gpu_device *dev) { return gpu_roofline_us(p, 50.0); }
static double naive_cost(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    return gpu_sdpa_underfill_us(pl, p, dev, 4, 4.0); /* a warp per query row, 4 per block */
}
static double bwd_flash_cost(const gplan *pl, const gpart *p, const gpu_device *dev) { return gpu_roofline_us(p, 50.0); }
static double bwd_cost(const gplan *pl, const gpart *p, const gpu_device *dev) { return gpu_roofline_us(p, 3.0); }

static size_t no_ws(const gplan *pl, const gpart *p, const gpu_device *dev) { return 0; }
/* sdpa_flash_wgmma: one int, the counter its persistent grid draws a causal-like band's work items from (zeroed
 * by each launch in its stream, so concurrent executes each need their own: the workspace is per execute) */
/* and, after 256 bytes, v10's key splits' partials (xk_sdpa_fwd_wgmma_ws: chunked prefill, few query rows) */
static size_t wgmma_ws(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    xk_sdpa kp;
    sdpa_ids ids;
    char why[256];
    size_t split = 0;
    int pack, nsplit;
    if (gpu_sdpa_analyze(pl, p, SDPA_K_MMA, &kp, &ids, why, sizeof why))
        split = wgmma_pack_plan(&kp, &ids, dev->sm_count, &pack, &nsplit);
    return 256 + 256 + split;
}
static size_t bwd_ws_kind(const gplan *pl, const gpart *p, sdpa_kind kind)
{
    xk_sdpa kp;
    sdpa_ids ids;
    char why[256];
    if (!gpu_sdpa_analyze(pl, p, kind, &kp, &ids, why, sizeof why))
        return 0;
    /* Delta: [B, Hq, Sq] f32, or [Hq, T] for ragged q (kern_sdpa.h) */
    const size_t nb = ids.off_q >= 0 ? 1 : (size_t)kp.B;
    return nb * (size_t)kp.Hq * (size_t)kp.Sq * sizeof(float) + 256;
}
static size_t bwd_ws(const gplan *pl, const gpart *p, const gpu_device *dev) { return bwd_ws_kind(pl, p, SDPA_K_BWD); }
static size_t bwd_flash_ws(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    return bwd_ws_kind(pl, p, SDPA_K_BWD_MMA);
}

static xdnn_status build_kind2(gpu_ctx *c, gpart *p, sdpa_kind kind, bool wgmma, const char *eng, xdnn_diags_t *d)
{
    sdpa_priv *sp = calloc(1, sizeof *sp);
    if (!sp)
        return XDNN_ERR_NOMEM;
    p->priv = sp;
    sp->kind = kind;
    sp->wgmma = wgmma;
    char why[512];
    if (!gpu_sdpa_analyze(c->plan, p, kind, &sp->kp, &sp->ids, why, sizeof why) ||
        (wgmma && !wgmma_check(c->plan, &sp->kp, &sp->ids, why, sizeof why))) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), "%s: %s: %s", eng, p->name, why);
        return XDNN_ERR_UNSUPPORTED;
    }
    const int qkv[3] = {sp->ids.q, sp->ids.k, sp->ids.v};
    for (int i = 0; i < 3; i++) {
        int64_t dims[4];
        gpu_sdpa_bhsd(&c->plan->g->t[qkv[i]], dims, sp->qkv_st[i]);
    }
    const xk_sdpa *k = &sp->kp;
    snprintf(sp->detail, sizeof sp->detail, "%s B=%d Hq=%d Hk=%d Sq=%d Skv=%d D=%d Dv=%d%s%s%s%s%s%s%s%s", eng, k->B,
             k->Hq, k->Hk, k->Sq, k->Skv, k->D, k->Dv, k->right == 0 ? " causal" : "",
             k->left >= 0 || k->right > 0 ? " window" : "", sp->ids.bias >= 0 ? " bias" : "",
             k->drop_threshold ? " dropout" : "", sp->ids.len_q >= 0 || sp->ids.len_kv >= 0 ? " seqlens" : "",
             sp->ids.off_q >= 0 ? " ragged-q" : "", sp->ids.off_kv >= 0 ? " ragged-kv" : "",
             kind == SDPA_K_MMA && k->o.dtype == XK_F32 ? " o=f32" : ""); /* f32 o: P V as hi + lo */
    int pack, nsplit;
    if (wgmma && (wgmma_pack_plan(k, &sp->ids, c->dev.sm_count, &pack, &nsplit), pack)) { /* v10's plan */
        size_t n = strlen(sp->detail);
        snprintf(sp->detail + n, sizeof sp->detail - n, " pack=%d splits=%d", pack, nsplit);
    }
    return XDNN_OK;
}

static xdnn_status build_kind(gpu_ctx *c, gpart *p, sdpa_kind kind, const char *eng, xdnn_diags_t *d)
{
    return build_kind2(c, p, kind, false, eng, d);
}

static xdnn_status flash_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d) { return build_kind(c, p, SDPA_K_MMA, "sdpa_flash", d); }
static xdnn_status wgmma_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d)
{
    return build_kind2(c, p, SDPA_K_MMA, true, "sdpa_flash_wgmma", d);
}
static xdnn_status naive_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d) { return build_kind(c, p, SDPA_K_ROWS, "sdpa_naive", d); }
static xdnn_status bwd_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d) { return build_kind(c, p, SDPA_K_BWD, "sdpa_bwd", d); }
static xdnn_status tf32_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d)
{
    return build_kind(c, p, SDPA_K_TF32, "sdpa_flash_tf32", d);
}
static xdnn_status bwd_flash_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d)
{
    return build_kind(c, p, SDPA_K_BWD_MMA, "sdpa_bwd_flash", d);
}

static const void *dev_ptr(const gpu_ctx *c, int id) { return id >= 0 ? c->dptr[id] : NULL; }

static xdnn_status sdpa_execute(gpu_ctx *c, gpart *p, cudaStream_t s, xdnn_diags_t *d)
{
    sdpa_priv *sp = p->priv;
    xk_sdpa k = sp->kp;
    const sdpa_ids *ids = &sp->ids;
    k.q.p = dev_ptr(c, ids->q);
    k.k.p = dev_ptr(c, ids->k);
    k.v.p = dev_ptr(c, ids->v);
    k.o.p = dev_ptr(c, ids->o);
    k.bias.p = dev_ptr(c, ids->bias);
    k.len_q.p = dev_ptr(c, ids->len_q);
    k.len_kv.p = dev_ptr(c, ids->len_kv);
    k.stats.p = dev_ptr(c, ids->stats);
    k.dout.p = dev_ptr(c, ids->dout);
    k.dq.p = dev_ptr(c, ids->dq);
    k.dk.p = dev_ptr(c, ids->dk);
    k.dv.p = dev_ptr(c, ids->dv);
    k.off_q.p = dev_ptr(c, ids->off_q);
    k.off_kv.p = dev_ptr(c, ids->off_kv);
    int rc;
    const char *call;
    if (sp->kind == SDPA_K_BWD || sp->kind == SDPA_K_BWD_MMA) {
        k.delta = (float *)(void *)(((uintptr_t)(c->ws + p->ws_offset) + 255) & ~(uintptr_t)255);
        bool mma = sp->kind == SDPA_K_BWD_MMA;
        rc = mma ? xk_sdpa_bwd_mma(&k, s) : xk_sdpa_bwd_rows(&k, s);
        call = mma ? "xk_sdpa_bwd_mma" : "xk_sdpa_bwd_rows";
    } else if (sp->kind == SDPA_K_TF32) {
        rc = xk_sdpa_fwd_tf32(&k, s);
        call = "xk_sdpa_fwd_tf32";
    } else if (sp->wgmma) {
        /* the persistent causal grid's work counter (wgmma_ws) */
        int *sched = (int *)(void *)(((uintptr_t)(c->ws + p->ws_offset) + 255) & ~(uintptr_t)255);
        const size_t split_ws = p->ws_bytes > 512 ? p->ws_bytes - 512 : 0; /* past the counter (wgmma_ws) */
        rc = xk_sdpa_fwd_wgmma(&k, (const int64_t(*)[4])sp->qkv_st, sched, (char *)sched + 256, split_ws, s);
        call = "xk_sdpa_fwd_wgmma";
    } else if (sp->kind == SDPA_K_MMA) {
        rc = xk_sdpa_fwd_mma(&k, s);
        call = "xk_sdpa_fwd_mma";
    } else {
        rc = xk_sdpa_fwd_rows(&k, s);
        call = "xk_sdpa_fwd_rows";
    }
    return gpu_check_cuda((cudaError_t)rc, call, __FILE__, __LINE__, d);
}

static void sdpa_release(gpart *p)
{
    free(p->priv);
    p->priv = NULL;
}

static const char *sdpa_detail(const gpart *p)
{
    const sdpa_priv *sp = p->priv;
    return sp ? sp->detail : "";
}

const gpu_engine gpu_engine_sdpa_flash_wgmma = {
    .name = "sdpa_flash_wgmma",
    .summary = "attention forward on Hopper (sm_90a: TMA + wgmma, warp-specialized), f16/bf16 (o also f32), "
               "D, Dv <= 256, every mask, GQA",
    .supports = wgmma_supports, .cost = wgmma_cost, .workspace = wgmma_ws,
    .build = wgmma_build, .execute = sdpa_execute, .release = sdpa_release, .detail = sdpa_detail,
};
const gpu_engine gpu_engine_sdpa_flash = {
    .name = "sdpa_flash",
    .summary = "attention forward on tensor cores (mma.sync f16/bf16, f32 accumulate), any D, Dv <= 256, "
               "ragged (THD) sequences",
    .supports = flash_supports, .cost = flash_cost, .workspace = no_ws,
    .build = flash_build, .execute = sdpa_execute, .release = sdpa_release, .detail = sdpa_detail,
};
const gpu_engine gpu_engine_sdpa_flash_tf32 = {
    .name = "sdpa_flash_tf32",
    .summary = "attention forward for f32 graphs allowing tf32 (mma.sync tf32, ~1e-3 rel), any D, Dv <= 256",
    .supports = tf32_supports, .cost = tf32_cost, .workspace = no_ws,
    .build = tf32_build, .execute = sdpa_execute, .release = sdpa_release, .detail = sdpa_detail,
};
const gpu_engine gpu_engine_sdpa_naive = {
    .name = "sdpa_naive",
    .summary = "attention forward, one warp per query row in f32: any D, Dv <= 256, f32/f16/bf16",
    .supports = naive_supports, .cost = naive_cost, .workspace = no_ws,
    .build = naive_build, .execute = sdpa_execute, .release = sdpa_release, .detail = sdpa_detail,
};
const gpu_engine gpu_engine_sdpa_bwd_flash = {
    .name = "sdpa_bwd_flash",
    .summary = "attention backward on tensor cores (f16/bf16): dQ pass + dK/dV pass (GQA sums), no atomics, "
               "ragged (THD) sequences",
    .supports = bwd_flash_supports, .cost = bwd_flash_cost, .workspace = bwd_flash_ws,
    .build = bwd_flash_build, .execute = sdpa_execute, .release = sdpa_release, .detail = sdpa_detail,
};
const gpu_engine gpu_engine_sdpa_bwd = {
    .name = "sdpa_bwd",
    .summary = "attention backward: dq per query row, dk/dv per key row (GQA sums), no atomics",
    .supports = bwd_supports, .cost = bwd_cost, .workspace = bwd_ws,
    .build = bwd_build, .execute = sdpa_execute, .release = sdpa_release, .detail = sdpa_detail,
};
