/* eng_sdpa_splitkv.c — sdpa_splitkv, the attention forward for decode and
 * chunked prefill (kernel: kernels/sdpa_splitkv.cu): few query rows against
 * many keys, where one block per (batch, head, query tile) would leave most
 * SMs idle.  The keys are split across blocks (the count chosen here to fill
 * the device), each block writes a partial o and its log-sum-exp into the
 * workspace, a combine pass merges them.  GQA/MQA: a group's query heads and
 * rows share one tile, so K and V are read once per KV head.
 *
 * Takes: q, k, v, o of one dtype, f16 or bf16; D, Dv <= 256, multiples of
 * 8; scale; causal (top_left or bottom_right) or no mask; stats; seq_len_kv;
 * q, k, v with a contiguous head dim and 16-byte strides (bhsd, bshd), o any
 * strides.  Serving (sdpa.h): a paged K/V cache (page_table, any page size:
 * the page is looked up per key row of a tile) and ragged THD q/o and k/v
 * (seq_offsets_q/kv), the only engine that takes them.  Refuses, naming the
 * attribute: bias, seq_len_q, dropout, window, o in another dtype, other
 * head dims and strides.
 * Chosen by cost where the other forwards underfill the device
 * (gpu_sdpa_underfill_us, used by their costs in eng_sdpa.c). */
#include "gpu/eng_seq.h"
#include "gpu/engine.h"
#include "gpu/kern_sdpa_splitkv.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SPLIT_MAX = 128, MIN_TILES_PER_SPLIT = 2, GRID_YZ_MAX = 65535 };

static const char ENG[] = "sdpa: sdpa_splitkv";

/* The launch knobs, for A/B measurement (man/xdnn.1): XDNN_SPLITKV_STAGES=N
 * shared-memory stages (2..6; fewer when N do not fit the device's shared
 * memory), XDNN_SPLITKV_PREFETCH=N key tiles asked of the L2 beyond them
 * (Hopper; 0 = none: N = 2 and 4 ran 3-60% slower on the H100, session 10,
 * bench/RESULTS-sdpa.md). */
enum { PREFETCH_DEFAULT = 0 };

static int env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
}

static xk_splitkv_tune splitkv_tune(int group_rows, int D, int Dv, const gpu_device *dev)
{
    xk_splitkv_tune t = {env_int("XDNN_SPLITKV_STAGES", 0), env_int("XDNN_SPLITKV_PREFETCH", PREFETCH_DEFAULT)};
    const size_t lim = gpu_smem_per_block(dev);
    while (t.stages > 2 && (size_t)xk_sdpa_splitkv_shape(group_rows, D, Dv, t.stages).smem > lim)
        t.stages--;
    if (t.prefetch < 0 || dev->cc_major < 9)
        t.prefetch = 0; /* the bulk prefetch is Hopper's */
    return t;
}

static xk_splitkv_shape splitkv_shape(const xk_sdpa *kp, const gpu_device *dev)
{
    const int rows = kp->Hq / kp->Hk * kp->Sq;
    return xk_sdpa_splitkv_shape(rows, kp->D, kp->Dv, splitkv_tune(rows, kp->D, kp->Dv, dev).stages);
}

/* Everything beyond sdpa_flash's analysis (f16/bf16 q, k, v of one dtype,
 * D, Dv <= 256) that the split kernel needs. */
/* The page table and offsets (kp: Skv of a paged cache = max_pages * page_size). */
static bool serve_params(const ggraph *g, const sdpa_ids *ids, xk_sdpa *kp, xk_splitkv_serve *sv, char *why, size_t len)
{
    memset(sv, 0, sizeof *sv);
    const struct { int id; const char *name; int32_t *dt; } ix[] = {
        {ids->page_table, "page_table", &sv->pt_dtype}, {ids->off_q, "seq_offsets_q", &sv->off_q_dtype},
        {ids->off_kv, "seq_offsets_kv", &sv->off_kv_dtype}};
    for (int i = 0; i < 3; i++) {
        if (ix[i].id < 0)
            continue;
        const gtensor *t = &g->t[ix[i].id];
        if (t->dtype != XDNN_I32 && t->dtype != XDNN_I64)
            return gpu_refuse(why, len, "%s needs %s in i32 or i64, got %s", ENG, ix[i].name, gg_dtype_name(t->dtype));
        if (t->rank >= 1 && t->strides[t->rank - 1] != 1)
            return gpu_refuse(why, len, "%s needs %s contiguous", ENG, ix[i].name);
        *ix[i].dt = t->dtype == XDNN_I64 ? XK_I64 : XK_I32;
    }
    if (ids->page_table >= 0) {
        const gtensor *pt = &g->t[ids->page_table], *k = &g->t[ids->k];
        if (pt->rank != 2 || ids->len_kv < 0)
            return gpu_refuse(why, len, "%s: page_table must be [B, max_pages] with seq_len_kv", ENG);
        const int64_t skv = pt->dims[1] * k->dims[2];
        if (skv > INT32_MAX / 2 || k->dims[0] > INT32_MAX)
            return gpu_refuse(why, len, "%s: max_pages * page_size = %lld exceeds 32-bit indexing", ENG, (long long)skv);
        sv->page_size = (int32_t)k->dims[2];
        sv->num_pages = (int32_t)k->dims[0];
        sv->pt_stride = pt->dims[0] > 1 ? pt->strides[0] : 0;
        kp->Skv = (int32_t)skv;
    }
    return true;
}

static bool splitkv_analyze(const gplan *pl, const gpart *p, const gpu_device *dev, xk_sdpa *kp, sdpa_ids *ids,
                            xk_splitkv_serve *sv, char *why, size_t len)
{
    if (dev->cc_major < 8)
        return gpu_refuse(why, len, "%s needs sm_80 or newer (mma.sync bf16), device is sm_%d%d", ENG, dev->cc_major,
                    dev->cc_minor);
    if (!gpu_sdpa_analyze(pl, p, SDPA_K_SERVE, kp, ids, why, len)) {
        /* sdpa_flash's requirements are ours: say whose reason it is (the
         * planner already puts the engine's name before every reason) */
        char *at = strstr(why, "sdpa_flash ");
        if (at && strlen(why) + 2 < len) {
            memmove(at + 12, at + 10, strlen(at + 10) + 1);
            memcpy(at, "sdpa_splitkv", 12);
        }
        return false;
    }
    const ggraph *g = pl->g;
    if (g->t[ids->o].dtype != g->t[ids->q].dtype)
        return gpu_refuse(why, len, "%s needs o in q's dtype %s, got %s", ENG, gg_dtype_name(g->t[ids->q].dtype),
                    gg_dtype_name(g->t[ids->o].dtype));
    if (ids->bias >= 0)
        return gpu_refuse(why, len, "%s takes no bias input", ENG);
    if (ids->len_q >= 0)
        return gpu_refuse(why, len, "%s takes no seq_len_q input", ENG);
    if (!serve_params(g, ids, kp, sv, why, len))
        return false;
    if (kp->drop_threshold)
        return gpu_refuse(why, len, "%s takes no dropout, got dropout=%g", ENG, 1.0 - 1.0 / (double)kp->drop_scale);
    if (kp->left >= 0 || kp->right > 0)
        return gpu_refuse(why, len, "%s takes causal or no mask, got window=[%d, %d]", ENG, kp->left, kp->right);
    if (kp->D % 8 != 0 || kp->Dv % 8 != 0)
        return gpu_refuse(why, len, "%s needs D %% 8 == 0 and Dv %% 8 == 0 (16-byte rows), got D=%d Dv=%d", ENG, kp->D,
                    kp->Dv);
    const struct { int id; const char *name; } t[] = {{ids->q, "q"}, {ids->k, "k"}, {ids->v, "v"}};
    for (int i = 0; i < 3; i++) {
        const gtensor *x = &g->t[t[i].id];
        const int last = x->rank - 1; /* 3, or 2 for a ragged [T, H, D] */
        if (x->strides[last] != 1)
            return gpu_refuse(why, len, "%s needs %s's head dim contiguous, got stride %lld", ENG, t[i].name,
                        (long long)x->strides[last]);
        for (int d = 0; d < last; d++)
            if (x->strides[d] % 8 != 0 && x->dims[d] != 1)
                return gpu_refuse(why, len, "%s needs %s's strides in multiples of 8 elements (16 bytes), got %lld in dim %d",
                            ENG, t[i].name, (long long)x->strides[d], d);
    }
    const int G = kp->Hq / kp->Hk;
    const xk_splitkv_shape sh = splitkv_shape(kp, dev);
    const int64_t tiles = ((int64_t)G * kp->Sq + sh.rows - 1) / sh.rows;
    if (tiles > GRID_YZ_MAX || (int64_t)kp->B * kp->Hk > GRID_YZ_MAX)
        return gpu_refuse(why, len, "%s: grid of %lld row tiles x B*Hk = %lld exceeds 65535", ENG, (long long)tiles,
                    (long long)kp->B * kp->Hk);
    size_t lim = gpu_smem_per_block(dev);
    if ((size_t)sh.smem > lim)
        return gpu_refuse(why, len, "%s: D=%d Dv=%d need %d bytes of shared memory per block, the device gives %zu", ENG,
                    kp->D, kp->Dv, sh.smem, lim);
    return true;
}

/* Splits of the keys: the count with the least (waves of blocks) x (key
 * tiles per block + BLOCK_COST_TILES), as many blocks per SM as shared
 * memory and the kernel's registers allow (max_blocks: 3 for 16-row tiles up
 * to D 128 since session 10, else 2), fewer
 * splits on a tie; only counts whose every split gets tiles (17 splits of 64
 * tiles are 16 of 4 and an empty one).  BLOCK_COST_TILES is a block's fixed
 * cost (Q, the pipeline's fill and drain, the merge and partial write, the
 * page lookups) in key tiles, fitted on the H100 (bench/RESULTS-sdpa.md,
 * 2026-11-24 session 7): paged decode b64 Skv 4096 ran 1.67x slower in 17
 * splits of 4 tiles (the old waves-only count) than in 1 of 64, b16 Skv 32768
 * 1.21x slower in 33 of 16 than in 4 of 128.  Decode b16 Skv 4096 (GQA 4,
 * D 128): 3 splits (384 blocks of ~22 tiles, one wave of 3 per SM); b64: 3;
 * b1: 32 of 2 tiles (few keys: the device must be filled), 49 at 128k keys.
 * XDNN_SPLITKV_SPLITS=N forces N (capped likewise) for measuring. */
enum { BLOCK_COST_TILES = 3 };

static int splitkv_count(const xk_sdpa *kp, const gpu_device *dev)
{
    const int G = kp->Hq / kp->Hk;
    const xk_splitkv_shape sh = splitkv_shape(kp, dev);
    const int64_t base = (int64_t)kp->B * kp->Hk * (((int64_t)G * kp->Sq + sh.rows - 1) / sh.rows);
    size_t lim = gpu_smem_per_block(dev);
    const size_t per_block = (size_t)sh.smem + 1024; /* the 1 KB the driver reserves per block */
    int64_t per_sm = 1;
    while (per_sm < sh.max_blocks && (size_t)(per_sm + 1) * per_block <= lim + 1024)
        per_sm++; /* lim: a block's limit, 1 KB under the SM's */
    const int64_t target = (dev->sm_count > 0 ? dev->sm_count : 132) * per_sm;
    const int64_t ntiles = ((int64_t)kp->Skv + sh.keys - 1) / sh.keys;
    int64_t cap = ntiles / MIN_TILES_PER_SPLIT;
    if (cap > SPLIT_MAX)
        cap = SPLIT_MAX;
    const char *force = getenv("XDNN_SPLITKV_SPLITS");
    if (force && atoi(force) >= 1)
        return (int)(atoi(force) < cap ? atoi(force) : cap > 1 ? cap : 1);
    int best_n = 1;
    double best = 1e30;
    for (int64_t n = 1; n <= cap; n++) {
        const int64_t per = (ntiles + n - 1) / n; /* the kernel's tiles per split */
        if ((ntiles + per - 1) / per < n)
            continue; /* some split would be empty: a smaller count does the same work */
        const double waves = (double)((base * n + target - 1) / target), t = waves * (double)(per + BLOCK_COST_TILES);
        if (t < best * (1 - 1e-9)) {
            best = t;
            best_n = (int)n;
        }
    }
    return best_n;
}

double gpu_sdpa_underfill_us(const gplan *pl, const gpart *p, const gpu_device *dev, int rows_per_block,
                             double tflops)
{
    const double launch = 3.0, t = gpu_roofline_us(p, tflops) - launch; /* gpu_roofline_us adds 3 us */
    xk_sdpa kp;
    sdpa_ids ids;
    char why[256];
    if (rows_per_block < 1 || (!gpu_sdpa_analyze(pl, p, SDPA_K_ROWS, &kp, &ids, why, sizeof why) &&
                               !gpu_sdpa_analyze(pl, p, SDPA_K_MMA, &kp, &ids, why, sizeof why))) /* ragged */
        return t + launch;
    /* ragged q: the T packed tokens fill about T / rows_per_block tiles (the lengths are run-time data), not
     * B * T / rows_per_block: a batch of decode rows stays underfilled here and goes to sdpa_splitkv */
    const double tiles = (double)((kp.Sq + rows_per_block - 1) / rows_per_block);
    const double blocks = (ids.off_q >= 0 ? 1.0 : (double)kp.B) * kp.Hq * tiles;
    const double sms = dev->sm_count > 0 ? dev->sm_count : 132;
    return launch + (blocks > 0 && blocks < sms ? t * sms / blocks : t);
}

/* The kernel parameters when the engine can run p (cost and workspace need no reason). */
static bool splitkv_params(const gplan *pl, const gpart *p, const gpu_device *dev, xk_sdpa *kp)
{
    sdpa_ids ids;
    xk_splitkv_serve sv;
    char why[256];
    return splitkv_analyze(pl, p, dev, kp, &ids, &sv, why, sizeof why);
}

static bool splitkv_supports(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len)
{
    xk_sdpa kp;
    sdpa_ids ids;
    xk_splitkv_serve sv;
    return splitkv_analyze(pl, p, dev, &kp, &ids, &sv, why, len);
}

/* Memory-bound at ~80% of the copy rate (decode measured 73-90% at 32k-128k
 * keys, bench/RESULTS-sdpa.md 2026-11-24) or bound by its mma.sync rate:
 * measured 27 TFLOP/s with 64-row tiles (chunked prefill, 9x slower than
 * FlashAttention there: the one-block-per-tile engines win those shapes),
 * ~100 assumed with 16-row tiles (decode, where the math is small anyway);
 * 3 us per launch (gpu_roofline_us's figure), the combine pass a second.
 * With one split (few keys) it is one block per row tile like the other
 * forwards, and the shape is launch-bound: +1 us leaves them the tie. */
static double splitkv_cost(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    xk_sdpa kp;
    if (!splitkv_params(pl, p, dev, &kp))
        return 1e30;
    const bool split = splitkv_count(&kp, dev) > 1;
    const bool tall = splitkv_shape(&kp, dev).rows > 16;
    const double mem = p->bytes / (0.8 * 3.0e12), math = p->flops / (tall ? 25e12 : 100e12);
    return 1e6 * (mem > math ? mem : math) + (split ? 6.0 : 4.0);
}

static size_t splitkv_ws(const gplan *pl, const gpart *p, const gpu_device *dev)
{
    xk_sdpa kp;
    if (!splitkv_params(pl, p, dev, &kp))
        return 0;
    return xk_sdpa_splitkv_ws(&kp, splitkv_count(&kp, dev));
}

typedef struct splitkv_priv {
    xk_sdpa kp;
    sdpa_ids ids;
    xk_splitkv_serve sv;
    xk_splitkv_tune tune;
    int nsplit;
    char detail[224];
} splitkv_priv;

static xdnn_status splitkv_build(gpu_ctx *c, gpart *p, xdnn_diags_t *d)
{
    splitkv_priv *sp = calloc(1, sizeof *sp);
    if (!sp)
        return XDNN_ERR_NOMEM;
    p->priv = sp;
    char why[512];
    if (!splitkv_analyze(c->plan, p, &c->dev, &sp->kp, &sp->ids, &sp->sv, why, sizeof why)) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), "sdpa_splitkv: %s: %s", p->name, why);
        return XDNN_ERR_UNSUPPORTED;
    }
    sp->nsplit = splitkv_count(&sp->kp, &c->dev);
    while (sp->nsplit > 1 && xk_sdpa_splitkv_ws(&sp->kp, sp->nsplit) > p->ws_bytes)
        sp->nsplit--; /* planned for another device model: fit what was planned */
    const xk_sdpa *k = &sp->kp;
    const int rows = k->Hq / k->Hk * k->Sq;
    sp->tune = splitkv_tune(rows, k->D, k->Dv, &c->dev);
    const xk_splitkv_shape sh = xk_sdpa_splitkv_shape(rows, k->D, k->Dv, sp->tune.stages);
    snprintf(sp->detail, sizeof sp->detail,
             "sdpa_splitkv B=%d Hq=%d Hk=%d Sq=%d Skv=%d D=%d Dv=%d%s%s%s%s splits=%d tile=%dx%d stages=%d prefetch=%d",
             k->B, k->Hq, k->Hk, k->Sq, k->Skv, k->D, k->Dv, k->right == 0 ? " causal" : "",
             sp->ids.page_table >= 0 ? " paged" : "", sp->ids.off_q >= 0 ? " ragged-q" : "",
             sp->ids.off_kv >= 0 ? " ragged-kv" : "", sp->nsplit, sh.rows, sh.keys, sh.stages, sp->tune.prefetch);
    return XDNN_OK;
}

static const void *dev_ptr(const gpu_ctx *c, int id) { return id >= 0 ? c->dptr[id] : NULL; }

static xdnn_status splitkv_execute(gpu_ctx *c, gpart *p, cudaStream_t s, xdnn_diags_t *d)
{
    splitkv_priv *sp = p->priv;
    xk_sdpa k = sp->kp;
    k.q.p = dev_ptr(c, sp->ids.q);
    k.k.p = dev_ptr(c, sp->ids.k);
    k.v.p = dev_ptr(c, sp->ids.v);
    k.o.p = dev_ptr(c, sp->ids.o);
    k.stats.p = dev_ptr(c, sp->ids.stats);
    k.len_kv.p = dev_ptr(c, sp->ids.len_kv);
    xk_splitkv_serve sv = sp->sv;
    sv.page_table = dev_ptr(c, sp->ids.page_table);
    sv.off_q = dev_ptr(c, sp->ids.off_q);
    sv.off_kv = dev_ptr(c, sp->ids.off_kv);
    int rc = xk_sdpa_splitkv(&k, &sv, sp->nsplit, &sp->tune, sp->nsplit > 1 ? c->ws + p->ws_offset : NULL, s);
    return gpu_check_cuda((cudaError_t)rc, "xk_sdpa_splitkv", __FILE__, __LINE__, d);
}

static void splitkv_release(gpart *p)
{
    free(p->priv);
    p->priv = NULL;
}

static const char *splitkv_detail(const gpart *p)
{
    const splitkv_priv *sp = p->priv;
    return sp ? sp->detail : "";
}

const gpu_engine gpu_engine_sdpa_splitkv = {
    .name = "sdpa_splitkv",
    .summary = "attention forward for decode / chunked prefill: keys split across blocks + combine, GQA rows packed, "
               "f16/bf16, D, Dv <= 256, causal, seq_len_kv, paged K/V, ragged THD",
    .supports = splitkv_supports, .cost = splitkv_cost, .workspace = splitkv_ws,
    .build = splitkv_build, .execute = splitkv_execute, .release = splitkv_release, .detail = splitkv_detail,
};
