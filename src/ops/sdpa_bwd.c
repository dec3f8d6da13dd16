/* sdpa_bwd.c — the backward of scaled dot-product attention (layouts, mask
 * rule and dropout in sdpa.h).
 *
 *   dq, dk, dv = sdpa_bwd(q, k, v, o, do, stats, bias=, seq_len_q=, seq_len_kv=)
 *   q [B,Hq,Sq,D]  k [B,Hk,Skv,D]  v [B,Hk,Skv,Dv]  o, do [B,Hq,Sq,Dv]  stats [B,Hq,Sq,1]
 *   dq like q, dk like k, dv like v.  Attributes as sdpa (they must match the forward).
 *
 * Math, per (b, h, i) with kv head hk = h / (Hq/Hk), visible keys j, the
 * forward's o and stats (as cuDNN and FlashAttention do):
 *   P_j  = exp(s_j - stats_i)            s_j recomputed exactly as the forward
 *   F_j  = dropout factor (0 or 1/(1-p)), the same keep decision as the forward
 *   dv[hk,j]  += P_j F_j do_i
 *   dP_j       = F_j (do_i · v[hk,j])
 *   Delta_i    = do_i · o_i              (= sum_j P_j dP_j)
 *   dS_j       = P_j (dP_j - Delta_i)
 *   dq_i      += scale dS_j k[hk,j]
 *   dk[hk,j]  += scale dS_j q_i
 * GQA: dk and dv of a kv head sum over the Hq/Hk query heads that read it; one
 * thread owns one (b, hk) so the sums need no atomics.  Fully masked rows get
 * no gradient.
 */
#include "sdpa.h"

#include <stdlib.h>
#include <string.h>

enum { BWD_O = 3, BWD_DO = 4, BWD_STATS = 5, BWD_BIAS = 6, BWD_LEN_Q = 7, BWD_LEN_KV = 8 };

static xdnn_status check_like(op_infer_ctx *c, int port, const int64_t *want)
{
    const tinfo *t = c->in[port];
    const char *name = c->desc->ports[port];
    if (!t)
        return op_error(c, "missing input '%s'", name);
    bool ok = t->rank == 4;
    for (int d = 0; ok && d < 4; d++)
        ok = t->dims[d] == want[d];
    if (!ok) {
        char got[128], want_s[128];
        return op_error(c, "%s must be %s, got %s", name, shape_str(want_s, sizeof want_s, 4, want),
                        shape_str(got, sizeof got, t->rank, t->dims));
    }
    return XDNN_OK;
}

static xdnn_status sdpa_bwd_infer(op_infer_ctx *c)
{
    sdpa_dims n;
    xdnn_status st = sdpa_check(c, BWD_BIAS, BWD_LEN_Q, BWD_LEN_KV, &n);
    if (st)
        return st;
    int64_t odims[4] = {n.B, n.Hq, n.Sq, n.Dv}, sdims[4] = {n.B, n.Hq, n.Sq, 1};
    if ((st = check_like(c, BWD_O, odims)) || (st = check_like(c, BWD_DO, odims)) ||
        (st = check_like(c, BWD_STATS, sdims)))
        return st;
    for (int r = 0; r < 3; r++) {
        const tinfo *in = c->in[r]; /* dq like q, dk like k, dv like v */
        c->out[r] = *in;
    }
    return XDNN_OK;
}

static xdnn_status sdpa_bwd_reference(op_ref_ctx *c)
{
    sdpa_cfg cfg;
    xdnn_status st = sdpa_config(c, BWD_BIAS, BWD_LEN_Q, BWD_LEN_KV, &cfg);
    if (st)
        return st;
    const sdpa_dims n = cfg.n;
    const int64_t group = n.Hq / n.Hk;
    const double *q = c->in[SDPA_Q]->data, *k = c->in[SDPA_K]->data, *v = c->in[SDPA_V]->data;
    const double *o = c->in[BWD_O]->data, *dout = c->in[BWD_DO]->data, *stats = c->in[BWD_STATS]->data;
    double *dq = c->out[0]->data, *dk = c->out[1]->data, *dv = c->out[2]->data;
    memset(dq, 0, (size_t)c->out[0]->numel * sizeof *dq);
    memset(dk, 0, (size_t)c->out[1]->numel * sizeof *dk);
    memset(dv, 0, (size_t)c->out[2]->numel * sizeof *dv);
    double *scratch = malloc((size_t)(n.B * n.Hk * n.Skv > 0 ? n.B * n.Hk * n.Skv : 1) * sizeof *scratch);
    if (!scratch) {
        sdpa_config_free(&cfg);
        return op_ref_error(c, XDNN_ERR_NOMEM, "out of memory for the logits");
    }
#pragma omp parallel for schedule(static)
    for (int64_t bk = 0; bk < n.B * n.Hk; bk++) {
        int64_t b = bk / n.Hk, hk = bk % n.Hk;
        double *s = scratch + bk * n.Skv;
        for (int64_t h = hk * group; h < (hk + 1) * group; h++) {
            for (int64_t i = 0; i < n.Sq; i++) {
                int64_t row = (b * n.Hq + h) * n.Sq + i;
                if (sdpa_row_logits(&cfg, q, k, b, h, i, s) == SDPA_NEG_INF)
                    continue; /* fully masked: no gradient */
                const double *qrow = q + row * n.D, *orow = o + row * n.Dv, *dorow = dout + row * n.Dv;
                double *dqrow = dq + row * n.D;
                double lse = stats[row];
                double delta = 0;
                for (int64_t d = 0; d < n.Dv; d++)
                    delta += dorow[d] * orow[d];
                for (int64_t j = 0; j < n.Skv; j++) {
                    if (s[j] == SDPA_NEG_INF)
                        continue;
                    int64_t kvrow = (b * n.Hk + hk) * n.Skv + j;
                    const double *krow = k + kvrow * n.D, *vrow = v + kvrow * n.Dv;
                    double *dkrow = dk + kvrow * n.D, *dvrow = dv + kvrow * n.Dv;
                    double p = exp(s[j] - lse);
                    double f = sdpa_dropout_factor(&cfg, b, h, i, j);
                    double dp = 0;
                    for (int64_t d = 0; d < n.Dv; d++) {
                        dvrow[d] += p * f * dorow[d];
                        dp += dorow[d] * vrow[d];
                    }
                    double ds = p * (f * dp - delta);
                    for (int64_t d = 0; d < n.D; d++) {
                        dqrow[d] += cfg.scale * ds * krow[d];
                        dkrow[d] += cfg.scale * ds * qrow[d];
                    }
                }
            }
        }
    }
    free(scratch);
    sdpa_config_free(&cfg);
    return XDNN_OK;
}

static double sdpa_bwd_flops(const xgraph *g, const xnode *n) { return sdpa_flops_of(g, n, true); }

static const char *const sdpa_bwd_ports[] = {"q", "k", "v", "o", "do", "stats", "bias", "seq_len_q", "seq_len_kv"};
static const char *const sdpa_bwd_results[] = {"dq", "dk", "dv"};

const op_desc op_sdpa_bwd_desc = {
    .name = "sdpa_bwd",
    .summary = "backward of sdpa from its o and stats: dq, dk, dv (GQA: dk/dv summed over the query heads "
               "of a kv head); attributes must match the forward (dropout replays the same mask)",
    .ports = sdpa_bwd_ports,
    .nports = 9,
    .nrequired = 6,
    .results = sdpa_bwd_results,
    .nresults = 3,
    .result_counts = 0,
    .attrs = sdpa_attrs,
    .nattrs = SDPA_NATTRS,
    .infer = sdpa_bwd_infer,
    .reference = sdpa_bwd_reference,
    .flops = sdpa_bwd_flops,
};
