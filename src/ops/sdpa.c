/* sdpa.c — scaled dot-product attention: the forward op, and the checks, mask
 * rule and dropout decision it shares with sdpa_bwd (see sdpa.h for the
 * layouts, the mask rule and the dropout stream).
 *
 *   o[, stats] = sdpa(q, k, v, bias=, seq_len_q=, seq_len_kv=)
 *   (paged and ragged forms: sdpa_serve.c; the fp8 form with scales and
 *   amax_s, amax_o results: sdpa_fp8.c)
 *
 * Math, per batch b, query head h (kv head hk = h / (Hq/Hk)) and row i:
 *   s_j     = scale * sum_d q[b,h,i,d] k[b,hk,j,d] + bias[b,h,i,j]   (visible j)
 *   stats_i = log sum_j exp(s_j)                                      (visible j)
 *   p_j     = exp(s_j - stats_i) * dropout_factor(b,h,i,j)
 *   o[b,h,i,:] = sum_j p_j v[b,hk,j,:]
 * scale defaults to 1/sqrt(D).  Sums are in double; the row maximum is
 * subtracted before exponentiating.
 */
#include "sdpa.h"

#include "data/data.h"
#include "quant.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const attr_spec sdpa_attrs[SDPA_NATTRS] = {
    {"scale", AT_FLOAT, NULL, NULL, "multiplies q·kᵀ; none = 1/sqrt(D)"},
    {"causal", AT_BOOL, "false", NULL, "mask keys right of the diagonal (window right bound 0)"},
    {"window", AT_INTS, NULL, NULL, "[left, right] inclusive band around the diagonal; -1 = unbounded side"},
    {"align", AT_STRING, "\"top_left\"", "top_left|bottom_right",
     "diagonal of causal/window: row i at key i, or at key i + Lkv - Lq"},
    {"dropout", AT_FLOAT, "0.0", NULL,
     "probability p of dropping an attention weight, in [0, 1); quantized to 1/65536: a weight is dropped with "
     "probability round(p*65536)/65536 (16 bits of a Philox call per row and 8 keys, sdpa.h), kept ones scaled "
     "by 1/(1-p)"},
    {"seed", AT_INT, "0", NULL, "Philox key of the dropout mask"},
};

static bool is_float_dtype(xdnn_dtype t)
{
    switch (t) {
    case XDNN_F32: case XDNN_F16: case XDNN_BF16: case XDNN_FP8_E4M3: case XDNN_FP8_E5M2: case XDNN_F64:
        return true;
    default:
        return false;
    }
}

static xdnn_status check_qkv_tensor(op_infer_ctx *c, const char *name, const tinfo *t)
{
    char sh[128];
    if (!t)
        return op_error(c, "missing input '%s'", name);
    if (t->rank != 4)
        return op_error(c, "%s must have rank 4 [B, H, S, D], got %s", name, shape_str(sh, sizeof sh, t->rank, t->dims));
    if (!is_float_dtype(t->dtype))
        return op_error(c, "%s must be a floating-point tensor, got %s", name, xdnn_dtype_name(t->dtype));
    return XDNN_OK;
}

static xdnn_status check_seq_len(op_infer_ctx *c, int port, int64_t B)
{
    const tinfo *t = port >= 0 && port < c->nin ? c->in[port] : NULL;
    if (!t)
        return XDNN_OK;
    bool ok = (t->rank == 1 || t->rank == 4) && t->dims[0] == B && shape_numel(t->rank, t->dims) == B;
    if (!ok) {
        char sh[128];
        return op_error(c, "%s must be [B] or [B, 1, 1, 1] with B=%lld, got %s", c->desc->ports[port], (long long)B,
                        shape_str(sh, sizeof sh, t->rank, t->dims));
    }
    return XDNN_OK;
}

xdnn_status sdpa_check(op_infer_ctx *c, int bias_port, int len_q_port, int len_kv_port, sdpa_dims *n)
{
    const tinfo *q = c->in[SDPA_Q], *k = c->in[SDPA_K], *v = c->in[SDPA_V];
    xdnn_status st;
    if ((st = check_qkv_tensor(c, "q", q)) || (st = check_qkv_tensor(c, "k", k)) ||
        (st = check_qkv_tensor(c, "v", v)))
        return st;
    *n = (sdpa_dims){.B = q->dims[0], .Hq = q->dims[1], .Hk = k->dims[1], .Sq = q->dims[2], .Skv = k->dims[2],
                     .D = q->dims[3], .Dv = v->dims[3]};
    if (k->dims[0] != n->B || v->dims[0] != n->B)
        return op_error(c, "batch differs: q has B=%lld, k has B=%lld, v has B=%lld", (long long)n->B,
                        (long long)k->dims[0], (long long)v->dims[0]);
    if (k->dims[3] != n->D)
        return op_error(c, "q has head dim %lld but k has head dim %lld", (long long)n->D, (long long)k->dims[3]);
    if (v->dims[1] != n->Hk)
        return op_error(c, "k has %lld heads but v has %lld heads", (long long)n->Hk, (long long)v->dims[1]);
    if (v->dims[2] != n->Skv)
        return op_error(c, "k has sequence length %lld but v has %lld", (long long)n->Skv, (long long)v->dims[2]);
    if (n->Hk == 0 || n->Hq % n->Hk != 0)
        return op_error(c, "q has %lld heads, not a multiple of the %lld heads of k and v (GQA/MQA)",
                        (long long)n->Hq, (long long)n->Hk);

    const tinfo *bias = bias_port < c->nin ? c->in[bias_port] : NULL;
    if (bias) {
        int64_t full[4] = {n->B, n->Hq, n->Sq, n->Skv};
        bool ok = bias->rank <= 4;
        for (int d = 0; ok && d < bias->rank; d++) {
            int64_t want = full[4 - bias->rank + d];
            ok = bias->dims[d] == want || bias->dims[d] == 1;
        }
        if (!ok) {
            char sh[128], want[128];
            return op_error(c, "bias %s does not broadcast to [B, Hq, Sq, Skv] = %s",
                            shape_str(sh, sizeof sh, bias->rank, bias->dims), shape_str(want, sizeof want, 4, full));
        }
    }
    if ((st = check_seq_len(c, len_q_port, n->B)) || (st = check_seq_len(c, len_kv_port, n->B)))
        return st;

    double p = op_attr_float(c->node, c->desc, "dropout");
    if (!(p >= 0.0 && p < 1.0))
        return op_error(c, "attribute 'dropout' must be in [0, 1), got %g", p);
    return sdpa_check_band(c);
}

xdnn_status sdpa_check_band(op_infer_ctx *c)
{
    if (op_attr_present(c->node, c->desc, "window")) {
        int64_t w[2];
        if (!op_attr_ints(c, "window", 2, w))
            return XDNN_ERR_SEMANTIC;
        if (w[0] < -1 || w[1] < -1)
            return op_error(c, "attribute 'window' bounds must be >= -1 (-1 = unbounded), got [%lld, %lld]",
                            (long long)w[0], (long long)w[1]);
    }
    if (op_attr_present(c->node, c->desc, "scale")) {
        double s = op_attr_float(c->node, c->desc, "scale");
        if (!isfinite(s))
            return op_error(c, "attribute 'scale' must be finite, got %g", s);
    }
    return XDNN_OK;
}

/* Sequence lengths from a [B] tensor of integers (any dtype), or `full`. */
static xdnn_status read_lengths(op_ref_ctx *c, int port, int64_t B, int64_t full, int64_t **out)
{
    int64_t *len = malloc((size_t)(B > 0 ? B : 1) * sizeof *len);
    if (!len)
        return op_ref_error(c, XDNN_ERR_NOMEM, "out of memory for sequence lengths");
    const ref_tensor *t = port < c->nin ? c->in[port] : NULL;
    for (int64_t b = 0; b < B; b++) {
        if (!t) {
            len[b] = full;
            continue;
        }
        double x = t->data[b];
        if (!(x >= 0 && x <= (double)full && x == floor(x))) {
            free(len);
            return op_ref_error(c, XDNN_ERR_SEMANTIC, "%s[%lld] = %g is not an integer in [0, %lld]",
                                c->desc->ports[port], (long long)b, x, (long long)full);
        }
        len[b] = (int64_t)x;
    }
    *out = len;
    return XDNN_OK;
}

/* The band of the mask rule from a node's attributes (window, causal, align):
 * left/right -1 = unbounded, causal folded into right. */
static void sdpa_band(const xnode *node, const op_desc *d, int64_t *left, int64_t *right, bool *bottom_right)
{
    *left = *right = -1;
    int64_t w[2];
    if (op_attr_present(node, d, "window") && op_attr_ints_n(node, d, "window", 2, w)) {
        *left = w[0];
        *right = w[1];
    }
    if (op_attr_bool(node, d, "causal"))
        *right = 0; /* the intersection of "j <= diag" with any right bound >= 0 */
    const char *align = op_attr_str(node, d, "align");
    *bottom_right = align && strcmp(align, "bottom_right") == 0;
}

void sdpa_config_attrs(const xnode *node, const op_desc *d, sdpa_cfg *cfg)
{
    cfg->scale = op_attr_present(node, d, "scale") ? op_attr_float(node, d, "scale") : 1.0 / sqrt((double)cfg->n.D);
    sdpa_band(node, d, &cfg->left, &cfg->right, &cfg->bottom_right);
    cfg->dropout = op_attr_float(node, d, "dropout");
    cfg->seed = (uint64_t)op_attr_int(node, d, "seed");
}

xdnn_status sdpa_config(op_ref_ctx *c, int bias_port, int len_q_port, int len_kv_port, sdpa_cfg *cfg)
{
    const ref_tensor *q = c->in[SDPA_Q], *k = c->in[SDPA_K], *v = c->in[SDPA_V];
    memset(cfg, 0, sizeof *cfg);
    cfg->n = (sdpa_dims){.B = q->dims[0], .Hq = q->dims[1], .Hk = k->dims[1], .Sq = q->dims[2],
                         .Skv = k->dims[2], .D = q->dims[3], .Dv = v->dims[3]};
    sdpa_config_attrs(c->node, c->desc, cfg);
    cfg->bias = bias_port < c->nin ? c->in[bias_port] : NULL;
    xdnn_status st = read_lengths(c, len_q_port, cfg->n.B, cfg->n.Sq, &cfg->len_q);
    if (!st)
        st = read_lengths(c, len_kv_port, cfg->n.B, cfg->n.Skv, &cfg->len_kv);
    if (st)
        sdpa_config_free(cfg);
    return st;
}

void sdpa_config_free(sdpa_cfg *cfg)
{
    free(cfg->len_q);
    free(cfg->len_kv);
    cfg->len_q = cfg->len_kv = NULL;
}

bool sdpa_visible(const sdpa_cfg *cfg, int64_t b, int64_t i, int64_t j)
{
    int64_t lq = cfg->len_q[b], lkv = cfg->len_kv[b];
    if (i >= lq || j >= lkv)
        return false;
    int64_t diag = cfg->bottom_right ? i + lkv - lq : i;
    if (cfg->left >= 0 && j < diag - cfg->left)
        return false;
    if (cfg->right >= 0 && j > diag + cfg->right)
        return false;
    return true;
}

double sdpa_row_logits(const sdpa_cfg *cfg, const double *q, const double *k, int64_t b, int64_t h, int64_t i,
                       double *s)
{
    const sdpa_dims *n = &cfg->n;
    int64_t hk = h / (n->Hq / n->Hk);
    const double *qrow = q + ((b * n->Hq + h) * n->Sq + i) * n->D;
    double m = SDPA_NEG_INF;
    for (int64_t j = 0; j < n->Skv; j++) {
        if (!sdpa_visible(cfg, b, i, j)) {
            s[j] = SDPA_NEG_INF;
            continue;
        }
        const double *krow = k + ((b * n->Hk + hk) * n->Skv + j) * n->D;
        double dot = 0;
        for (int64_t d = 0; d < n->D; d++)
            dot += qrow[d] * krow[d];
        double x = cfg->scale * dot;
        if (cfg->bias) {
            int64_t idx[4] = {b, h, i, j};
            x += cfg->bias->data[ref_broadcast_offset(cfg->bias, 4, idx)];
        }
        s[j] = x;
        if (x > m)
            m = x;
    }
    return m;
}

uint32_t sdpa_dropout_threshold(double p)
{
    double t = floor(p * 65536.0 + 0.5);
    return t <= 0 ? 0u : t >= 65536.0 ? 65536u : (uint32_t)t;
}

uint32_t sdpa_dropout_u16(uint64_t seed, const sdpa_dims *n, int64_t b, int64_t h, int64_t i, int64_t j)
{
    const uint64_t groups = (uint64_t)(n->Skv + 7) / 8;
    const uint64_t index = (uint64_t)((b * n->Hq + h) * n->Sq + i) * groups + (uint64_t)j / 8;
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    const uint32_t ctr[4] = {(uint32_t)index, (uint32_t)(index >> 32), (uint32_t)SDPA_DROPOUT_STREAM,
                             (uint32_t)(SDPA_DROPOUT_STREAM >> 32)};
    uint32_t w[4];
    philox4x32_10(ctr, key, w);
    return (w[(j % 8) / 2] >> (16 * (j % 2))) & 0xffffu;
}

double sdpa_dropout_factor(const sdpa_cfg *cfg, int64_t b, int64_t h, int64_t i, int64_t j)
{
    if (cfg->dropout <= 0)
        return 1.0;
    bool keep = sdpa_dropout_u16(cfg->seed, &cfg->n, b, h, i, j) >= sdpa_dropout_threshold(cfg->dropout);
    return keep ? 1.0 / (1.0 - cfg->dropout) : 0.0;
}

/* (query, key) pairs of one (batch, head) that the mask band leaves visible
 * at full sequence lengths: what a kernel that skips masked tiles computes
 * (FlashAttention and cuDNN count causal attention as half the work). */
static double sdpa_visible_pairs(int64_t Sq, int64_t Skv, int64_t left, int64_t right, bool bottom_right)
{
    double pairs = 0;
    for (int64_t i = 0; i < Sq; i++) {
        int64_t diag = bottom_right ? i + Skv - Sq : i;
        int64_t lo = left < 0 ? 0 : diag - left, hi = right < 0 ? Skv - 1 : diag + right;
        lo = lo < 0 ? 0 : lo;
        hi = hi > Skv - 1 ? Skv - 1 : hi;
        pairs += hi >= lo ? (double)(hi - lo + 1) : 0.0;
    }
    return pairs;
}

/* The bound tensor at a node's port, or NULL (absent, or no such port). */
static const xtensor *port_tensor(const xgraph *g, const xnode *n, int port)
{
    return port >= 0 && port < n->ninputs && n->inputs[port].tensor >= 0 ? &g->tensors[n->inputs[port].tensor] : NULL;
}

double sdpa_flops_of(const xgraph *g, const xnode *n, bool backward)
{
    const xtensor *q = port_tensor(g, n, SDPA_Q), *k = port_tensor(g, n, SDPA_K), *v = port_tensor(g, n, SDPA_V);
    if (!q || !k || !v)
        return 0;
    /* B, Sq, Skv: a THD-packed tensor counts as B sequences of the mean
     * length T/B (the lengths are run-time data), paged keys as max_pages
     * pages */
    const sdpa_port_map *pm = backward ? &sdpa_bwd_port_map : &sdpa_fwd_port_map;
    const xtensor *offq = port_tensor(g, n, pm->off_q), *offkv = port_tensor(g, n, pm->off_kv);
    const xtensor *pt = port_tensor(g, n, pm->page_table), *off = offq ? offq : offkv;
    const int64_t B = off ? off->rdims[0] - 1 : q->rdims[0];
    if (B < 1)
        return 0;
    const int64_t Sq = offq ? q->rdims[0] / B : q->rdims[2];
    const int64_t Skv = offkv ? k->rdims[0] / B : pt ? pt->rdims[1] * k->rdims[2] : k->rdims[2];
    int64_t left, right;
    bool bottom_right;
    sdpa_band(n, op_get(n->op), &left, &right, &bottom_right);
    double rows = (double)B * (double)q->rdims[1] * sdpa_visible_pairs(Sq, Skv, left, right, bottom_right);
    double D = (double)q->rdims[q->rrank - 1], Dv = (double)v->rdims[v->rrank - 1];
    /* forward: q·kᵀ and p·v; backward: q·kᵀ again, dO·vᵀ, pᵀ·dO, dS·k and dSᵀ·q */
    return backward ? 2 * rows * (3 * D + 2 * Dv) : 2 * rows * (D + Dv);
}

/* ---- the forward op */

static xdnn_status sdpa_infer(op_infer_ctx *c)
{
    const bool fp8 = sdpa_fp8_form(c->nin, (const void *const *)c->in, c->nresults);
    if (sdpa_serving(&sdpa_fwd_port_map, c->nin, (const void *const *)c->in)) {
        if (fp8)
            return op_error(c, "the fp8 form (q_scale, k_scale, v_scale, s_scale, o_scale, amax_s, amax_o) is not "
                               "supported with page_table or seq_offsets");
        tinfo stats;
        xdnn_status st = sdpa_serve_check(c, &sdpa_fwd_port_map, &c->out[0], &stats);
        if (!st && c->nresults > 1)
            c->out[1] = stats;
        return st;
    }
    sdpa_dims n;
    xdnn_status st = sdpa_check(c, SDPA_BIAS, SDPA_LEN_Q, SDPA_LEN_KV, &n);
    if (st)
        return st;
    if (fp8)
        return sdpa_fp8_infer(c, &n);
    c->out[0] = (tinfo){.dtype = c->in[SDPA_Q]->dtype, .rank = 4, .dims = {n.B, n.Hq, n.Sq, n.Dv}};
    if (c->nresults > 1)
        c->out[1] = (tinfo){.dtype = XDNN_F32, .rank = 4, .dims = {n.B, n.Hq, n.Sq, 1}};
    return XDNN_OK;
}

xdnn_status sdpa_forward_ref(op_ref_ctx *c, const sdpa_cfg *cfgp, const double *q, const double *k,
                             const double *v, double *o, double *stats)
{
    const sdpa_cfg cfg = *cfgp;
    const sdpa_dims n = cfg.n;
    /* one row of logits per (b, h): rows of one head run on one thread */
    double *scratch = malloc((size_t)(n.B * n.Hq * n.Skv > 0 ? n.B * n.Hq * n.Skv : 1) * sizeof *scratch);
    double *amax = calloc((size_t)(n.B * n.Hq > 0 ? n.B * n.Hq : 1), sizeof *amax); /* max |P| per (b, h) */
    if (!scratch || !amax) {
        free(scratch);
        free(amax);
        return op_ref_error(c, XDNN_ERR_NOMEM, "out of memory for the logits");
    }
#pragma omp parallel for schedule(static)
    for (int64_t bh = 0; bh < n.B * n.Hq; bh++) {
        int64_t b = bh / n.Hq, h = bh % n.Hq, hk = h / (n.Hq / n.Hk);
        double *s = scratch + bh * n.Skv;
        for (int64_t i = 0; i < n.Sq; i++) {
            double *orow = o + (bh * n.Sq + i) * n.Dv;
            for (int64_t d = 0; d < n.Dv; d++)
                orow[d] = 0;
            double m = sdpa_row_logits(&cfg, q, k, b, h, i, s);
            if (m == SDPA_NEG_INF) { /* fully masked row */
                if (stats)
                    stats[bh * n.Sq + i] = SDPA_NEG_INF;
                continue;
            }
            double sum = 0;
            for (int64_t j = 0; j < n.Skv; j++)
                sum += exp(s[j] - m);
            double lse = m + log(sum);
            if (stats)
                stats[bh * n.Sq + i] = lse;
            for (int64_t j = 0; j < n.Skv; j++) {
                if (s[j] == SDPA_NEG_INF)
                    continue;
                double p = exp(s[j] - lse) * sdpa_dropout_factor(&cfg, b, h, i, j);
                if (cfg.s_scale > 0) { /* fp8 form: P·V reads P rounded to e4m3 (sdpa_fp8.c) */
                    amax[bh] = quant_amax_fold(amax[bh], p);
                    p = dtype_round(XDNN_FP8_E4M3, p / cfg.s_scale) * cfg.s_scale;
                }
                const double *vrow = v + ((b * n.Hk + hk) * n.Skv + j) * n.Dv;
                for (int64_t d = 0; d < n.Dv; d++)
                    orow[d] += p * vrow[d];
            }
        }
    }
    if (cfg.amax_s) {
        *cfg.amax_s = 0;
        for (int64_t bh = 0; bh < n.B * n.Hq; bh++)
            *cfg.amax_s = quant_amax_fold(*cfg.amax_s, amax[bh]);
    }
    free(scratch);
    free(amax);
    return XDNN_OK;
}

static xdnn_status sdpa_reference(op_ref_ctx *c)
{
    if (sdpa_serving(&sdpa_fwd_port_map, c->nin, (const void *const *)c->in))
        return sdpa_serve_reference(c);
    if (sdpa_fp8_form(c->nin, (const void *const *)c->in, c->nresults))
        return sdpa_fp8_reference(c);
    sdpa_cfg cfg;
    xdnn_status st = sdpa_config(c, SDPA_BIAS, SDPA_LEN_Q, SDPA_LEN_KV, &cfg);
    if (st)
        return st;
    st = sdpa_forward_ref(c, &cfg, c->in[SDPA_Q]->data, c->in[SDPA_K]->data, c->in[SDPA_V]->data, c->out[0]->data,
                          c->nresults > 1 && c->out[1] ? c->out[1]->data : NULL);
    sdpa_config_free(&cfg);
    return st;
}

static double sdpa_flops(const xgraph *g, const xnode *n) { return sdpa_flops_of(g, n, false); }

static const char *const sdpa_ports[] = {"q", "k", "v", "bias", "seq_len_q", "seq_len_kv",
                                         "page_table", "seq_offsets_q", "seq_offsets_kv",
                                         "q_scale", "k_scale", "v_scale", "s_scale", "o_scale"};
static const char *const sdpa_results[] = {"o", "stats", "amax_s", "amax_o"};

const op_desc op_sdpa_desc = {
    .name = "sdpa",
    .summary = "scaled dot-product attention: o[, stats] = softmax(scale*q·kᵀ + bias + mask)·v; "
               "q [B,Hq,Sq,D], k [B,Hk,Skv,D], v [B,Hk,Skv,Dv] (GQA: Hq % Hk == 0); "
               "stats = f32 logsumexp [B,Hq,Sq,1]; seq_len_q/seq_len_kv [B] pad rows/keys; "
               "fully masked rows give o = 0, stats = -inf; paged K/V: k, v [P,Hk,page_size,D] pages (@bshd: "
               "[P,page_size,Hk,D]) with page_table [B,max_pages] and seq_len_kv; ragged (THD): q/o [Tq,Hq,D] with "
               "seq_offsets_q [B+1], k/v [Tkv,Hk,D] with seq_offsets_kv [B+1]; fp8 (cuDNN's fp8 SDPA): q, k, v "
               "fp8 with f32 dequantization scales q_scale, k_scale, v_scale, P quantized to e4m3 as P / s_scale "
               "before P·V, o bf16 or fp8 = O / o_scale, amax_s = max |P|, amax_o = max |O| (f32 scalars)",
    .ports = sdpa_ports,
    .nports = 14,
    .nrequired = 3,
    .results = sdpa_results,
    .nresults = 4,
    .result_counts = (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4),
    .attrs = sdpa_attrs,
    .nattrs = SDPA_NATTRS,
    .infer = sdpa_infer,
    .reference = sdpa_reference,
    .flops = sdpa_flops,
};
