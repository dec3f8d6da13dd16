/* sdpa_bwd.c — the backward of scaled dot-product attention (layouts, mask
 * rule and dropout in sdpa.h).
 *
 *   dq, dk, dv = sdpa_bwd(q, k, v, o, do, stats, bias=, seq_len_q=, seq_len_kv=,
 *                         seq_offsets_q=, seq_offsets_kv=)
 *   q [B,Hq,Sq,D]  k [B,Hk,Skv,D]  v [B,Hk,Skv,Dv]  o, do [B,Hq,Sq,Dv]  stats [B,Hq,Sq,1]
 *   dq like q, dk like k, dv like v.  Attributes as sdpa (they must match the forward).
 *   Ragged (THD) sequences: sdpa_serve.c gathers them and calls sdpa_backward_ref.
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

/* o, do or stats: exactly the shape `want` (the forward's o or stats). */
static xdnn_status check_like(op_infer_ctx *c, int port, const tinfo *want)
{
    const tinfo *t = c->in[port];
    const char *name = c->desc->ports[port];
    if (!t)
        return op_error(c, "missing input '%s'", name);
    bool ok = t->rank == want->rank;
    for (int d = 0; ok && d < want->rank; d++)
        ok = t->dims[d] == want->dims[d];
    if (!ok) {
        char got[128], want_s[128];
        return op_error(c, "%s must be %s, got %s", name, shape_str(want_s, sizeof want_s, want->rank, want->dims),
                        shape_str(got, sizeof got, t->rank, t->dims));
    }
    return XDNN_OK;
}

static xdnn_status sdpa_bwd_infer(op_infer_ctx *c)
{
    tinfo o, stats;
    xdnn_status st;
    if (sdpa_serving(&sdpa_bwd_port_map, c->nin, (const void *const *)c->in)) {
        st = sdpa_serve_check(c, &sdpa_bwd_port_map, &o, &stats);
    } else {
        sdpa_dims n;
        if ((st = sdpa_check(c, SDPA_BWD_BIAS, SDPA_BWD_LEN_Q, SDPA_BWD_LEN_KV, &n)))
            return st;
        o = (tinfo){.rank = 4, .dims = {n.B, n.Hq, n.Sq, n.Dv}};
        stats = (tinfo){.rank = 4, .dims = {n.B, n.Hq, n.Sq, 1}};
    }
    if (st || (st = check_like(c, SDPA_BWD_O, &o)) || (st = check_like(c, SDPA_BWD_DO, &o)) ||
        (st = check_like(c, SDPA_BWD_STATS, &stats)))
        return st;
    for (int r = 0; r < 3; r++) {
        const tinfo *in = c->in[r]; /* dq like q, dk like k, dv like v */
        c->out[r] = *in;
    }
    return XDNN_OK;
}

xdnn_status sdpa_backward_ref(op_ref_ctx *c, const sdpa_cfg *cfgp, const double *q, const double *k, const double *v,
                              const double *o, const double *dout, const double *stats, double *dq, double *dk,
                              double *dv)
{
    const sdpa_cfg cfg = *cfgp;
    const sdpa_dims n = cfg.n;
    const int64_t group = n.Hq / n.Hk;
    memset(dq, 0, (size_t)(n.B * n.Hq * n.Sq * n.D) * sizeof *dq);
    memset(dk, 0, (size_t)(n.B * n.Hk * n.Skv * n.D) * sizeof *dk);
    memset(dv, 0, (size_t)(n.B * n.Hk * n.Skv * n.Dv) * sizeof *dv);
    double *scratch = malloc((size_t)(n.B * n.Hk * n.Skv > 0 ? n.B * n.Hk * n.Skv : 1) * sizeof *scratch);
    if (!scratch)
        return op_ref_error(c, XDNN_ERR_NOMEM, "out of memory for the logits");
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
    return XDNN_OK;
}

static xdnn_status sdpa_bwd_reference(op_ref_ctx *c)
{
    if (sdpa_serving(&sdpa_bwd_port_map, c->nin, (const void *const *)c->in))
        return sdpa_serve_bwd_reference(c);
    sdpa_cfg cfg;
    xdnn_status st = sdpa_config(c, SDPA_BWD_BIAS, SDPA_BWD_LEN_Q, SDPA_BWD_LEN_KV, &cfg);
    if (st)
        return st;
    st = sdpa_backward_ref(c, &cfg, c->in[SDPA_Q]->data, c->in[SDPA_K]->data, c->in[SDPA_V]->data,
                           c->in[SDPA_BWD_O]->data, c->in[SDPA_BWD_DO]->data, c->in[SDPA_BWD_STATS]->data,
                           c->out[0]->data, c->out[1]->data, c->out[2]->data);
    sdpa_config_free(&cfg);
    return st;
}

static double sdpa_bwd_flops(const xgraph *g, const xnode *n) { return sdpa_flops_of(g, n, true); }

static const char *const sdpa_bwd_ports[] = {"q", "k", "v", "o", "do", "stats", "bias", "seq_len_q", "seq_len_kv",
                                             "seq_offsets_q", "seq_offsets_kv"};
static const char *const sdpa_bwd_results[] = {"dq", "dk", "dv"};

const op_desc op_sdpa_bwd_desc = {
    .name = "sdpa_bwd",
    .summary = "backward of sdpa from its o and stats: dq, dk, dv (GQA: dk/dv summed over the query heads "
               "of a kv head); attributes must match the forward (dropout replays the same mask); ragged (THD): "
               "q/o/do/dq [Tq,Hq,D] with seq_offsets_q [B+1], k/v/dk/dv [Tkv,Hk,D] with seq_offsets_kv [B+1], "
               "stats [Tq,Hq,1]",
    .ports = sdpa_bwd_ports,
    .nports = 11,
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
