/* sdpa_serve.c — the serving forms of sdpa: a paged K/V cache (page_table)
 * and ragged THD-packed sequences (seq_offsets_q, seq_offsets_kv); see
 * sdpa.h for their definition.  The reference gathers the pages and the
 * packed tokens into zero-padded dense [B, H, max L, D] tensors, runs the
 * dense forward (sdpa_forward_ref) with the lengths as seq_len_q/kv, and
 * scatters o and stats back: a paged or ragged graph equals its dense
 * equivalent by construction, so the one mask rule and softmax stay in sdpa.c.
 */
#include "sdpa.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool sdpa_serving(int nin, const void *const *in)
{
    for (int p = SDPA_PAGE_TABLE; p <= SDPA_OFF_KV; p++)
        if (p < nin && in[p])
            return true;
    return false;
}

static const tinfo *in_at(const op_infer_ctx *c, int port) { return port < c->nin ? c->in[port] : NULL; }

static bool is_int_dtype(xdnn_dtype t) { return t == XDNN_I32 || t == XDNN_I64; }

/* An offsets tensor: integer [B+1] (B >= 1); sets *B or checks it. */
static xdnn_status check_offsets(op_infer_ctx *c, int port, int64_t *B)
{
    const tinfo *t = in_at(c, port);
    const char *name = c->desc->ports[port];
    char sh[128];
    if (!t)
        return op_error(c, "missing input '%s'", name);
    if (t->rank != 1 || t->dims[0] < 2)
        return op_error(c, "%s must be [B+1] (cumulative token offsets, B >= 1), got %s", name,
                        shape_str(sh, sizeof sh, t->rank, t->dims));
    if (!is_int_dtype(t->dtype))
        return op_error(c, "%s must be i32 or i64, got %s", name, xdnn_dtype_name(t->dtype));
    if (*B >= 0 && t->dims[0] != *B + 1)
        return op_error(c, "%s has %lld entries, the batch of %lld sequences needs B+1 = %lld", name,
                        (long long)t->dims[0], (long long)*B, (long long)*B + 1);
    *B = t->dims[0] - 1;
    return XDNN_OK;
}

/* q/o-like (which = "q") or k/v-like tensor: rank 3 [T, H, D] when ragged, else rank 4. */
static xdnn_status check_rank(op_infer_ctx *c, const char *name, const tinfo *t, bool ragged, bool paged)
{
    char sh[128];
    if (!t)
        return op_error(c, "missing input '%s'", name);
    if (ragged && t->rank != 3)
        return op_error(c, "%s must be [T, H, D] (THD-packed) with %s, got %s", name,
                        name[0] == 'q' ? "seq_offsets_q" : "seq_offsets_kv", shape_str(sh, sizeof sh, t->rank, t->dims));
    if (!ragged && t->rank != 4)
        return op_error(c, "%s must have rank 4 %s, got %s", name,
                        paged ? "[num_pages, Hk, page_size, D] (page pools, @bshd: [num_pages, page_size, Hk, D])"
                              : "[B, H, S, D]",
                        shape_str(sh, sizeof sh, t->rank, t->dims));
    if (t->dtype != XDNN_F32 && t->dtype != XDNN_F16 && t->dtype != XDNN_BF16 && t->dtype != XDNN_F64)
        return op_error(c, "%s must be a floating-point tensor, got %s", name, xdnn_dtype_name(t->dtype));
    return XDNN_OK;
}

/* [heads, head dim] of a q/k/v tensor, ragged (rank 3) or not. */
static int64_t heads_of(const tinfo *t) { return t->dims[1]; } /* THD and BHSD alike */
static int64_t hdim_of(const tinfo *t) { return t->dims[t->rank - 1]; }

xdnn_status sdpa_serve_infer(op_infer_ctx *c)
{
    const tinfo *q = c->in[SDPA_Q], *k = c->in[SDPA_K], *v = c->in[SDPA_V];
    const tinfo *pt = in_at(c, SDPA_PAGE_TABLE);
    const bool rq = in_at(c, SDPA_OFF_Q) != NULL, rkv = in_at(c, SDPA_OFF_KV) != NULL, paged = pt != NULL;
    char sh[128], sh2[128];
    xdnn_status st;
    if (paged && rkv)
        return op_error(c, "page_table and seq_offsets_kv exclude each other (keys are paged or packed, not both)");
    if (in_at(c, SDPA_BIAS))
        return op_error(c, "bias is not supported with %s", paged ? "page_table" : "seq_offsets");
    double p = op_attr_float(c->node, c->desc, "dropout");
    if (p != 0.0)
        return op_error(c, "attribute 'dropout' must be 0 with %s, got %g", paged ? "page_table" : "seq_offsets", p);
    if (rq && in_at(c, SDPA_LEN_Q))
        return op_error(c, "seq_len_q and seq_offsets_q exclude each other (the offsets give the lengths)");
    if (rkv && in_at(c, SDPA_LEN_KV))
        return op_error(c, "seq_len_kv and seq_offsets_kv exclude each other (the offsets give the lengths)");
    if (paged && !in_at(c, SDPA_LEN_KV))
        return op_error(c, "page_table needs seq_len_kv (the number of keys of each sequence)");
    if ((st = check_rank(c, "q", q, rq, false)) || (st = check_rank(c, "k", k, rkv, paged)) ||
        (st = check_rank(c, "v", v, rkv, paged)))
        return st;

    int64_t B = rq ? -1 : q->dims[0];
    if (rq && (st = check_offsets(c, SDPA_OFF_Q, &B)))
        return st;
    if (rkv && (st = check_offsets(c, SDPA_OFF_KV, &B)))
        return st;
    if (paged) {
        if (pt->rank != 2 || pt->dims[0] != B || pt->dims[1] < 1)
            return op_error(c, "page_table must be [B, max_pages] with B=%lld, got %s", (long long)B,
                            shape_str(sh, sizeof sh, pt->rank, pt->dims));
        if (!is_int_dtype(pt->dtype))
            return op_error(c, "page_table must be i32 or i64, got %s", xdnn_dtype_name(pt->dtype));
    } else if (!rkv && k->dims[0] != B) {
        return op_error(c, "batch differs: q has B=%lld, k has B=%lld", (long long)B, (long long)k->dims[0]);
    }
    const int64_t Hq = heads_of(q), Hk = heads_of(k), D = hdim_of(q);
    if (hdim_of(k) != D)
        return op_error(c, "q has head dim %lld but k has head dim %lld", (long long)D, (long long)hdim_of(k));
    if (heads_of(v) != Hk)
        return op_error(c, "k has %lld heads but v has %lld heads", (long long)Hk, (long long)heads_of(v));
    for (int d = 0; d < k->rank - 1; d++)
        if (d != 1 && v->dims[d] != k->dims[d])
            return op_error(c, "k is %s but v is %s (they differ outside the head dim)",
                            shape_str(sh, sizeof sh, k->rank, k->dims), shape_str(sh2, sizeof sh2, v->rank, v->dims));
    if (Hk == 0 || Hq % Hk != 0)
        return op_error(c, "q has %lld heads, not a multiple of the %lld heads of k and v (GQA/MQA)", (long long)Hq,
                        (long long)Hk);
    const tinfo *lkv = in_at(c, SDPA_LEN_KV), *lq = in_at(c, SDPA_LEN_Q);
    const tinfo *lens[2] = {lq, lkv};
    for (int i = 0; i < 2; i++)
        if (lens[i] && !((lens[i]->rank == 1 || lens[i]->rank == 4) && lens[i]->dims[0] == B &&
                         shape_numel(lens[i]->rank, lens[i]->dims) == B))
            return op_error(c, "%s must be [B] or [B, 1, 1, 1] with B=%lld, got %s", i ? "seq_len_kv" : "seq_len_q",
                            (long long)B, shape_str(sh, sizeof sh, lens[i]->rank, lens[i]->dims));
    if ((st = sdpa_check_band(c)))
        return st;
    const int64_t Dv = hdim_of(v);
    if (rq) {
        c->out[0] = (tinfo){.dtype = q->dtype, .rank = 3, .dims = {q->dims[0], Hq, Dv}};
        if (c->nresults > 1)
            c->out[1] = (tinfo){.dtype = XDNN_F32, .rank = 3, .dims = {q->dims[0], Hq, 1}};
    } else {
        c->out[0] = (tinfo){.dtype = q->dtype, .rank = 4, .dims = {B, Hq, q->dims[2], Dv}};
        if (c->nresults > 1)
            c->out[1] = (tinfo){.dtype = XDNN_F32, .rank = 4, .dims = {B, Hq, q->dims[2], 1}};
    }
    return XDNN_OK;
}

/* ---- the reference */

static const ref_tensor *ref_at(const op_ref_ctx *c, int port) { return port < c->nin ? c->in[port] : NULL; }

/* Offsets [B+1] of T packed tokens: non-decreasing integers from 0 to T, so
 * that every token belongs to exactly one sequence (every row of o is
 * written). */
static xdnn_status read_offsets(op_ref_ctx *c, int port, int64_t T, int64_t *off, int64_t B)
{
    const ref_tensor *t = c->in[port];
    for (int64_t b = 0; b <= B; b++) {
        double x = t->data[b];
        if (!(x >= 0 && x <= (double)T && x == floor(x)) || (b > 0 && x < (double)off[b - 1]) ||
            (b == 0 && x != 0) || (b == B && x != (double)T))
            return op_ref_error(c, XDNN_ERR_SEMANTIC,
                                "%s[%lld] = %g: offsets must be non-decreasing integers from 0 to T = %lld",
                                c->desc->ports[port], (long long)b, x, (long long)T);
        off[b] = (int64_t)x;
    }
    return XDNN_OK;
}

static xdnn_status read_lens(op_ref_ctx *c, int port, int64_t B, int64_t full, int64_t *len)
{
    const ref_tensor *t = ref_at(c, port);
    for (int64_t b = 0; b < B; b++) {
        double x = t ? t->data[b] : (double)full;
        if (!(x >= 0 && x <= (double)full && x == floor(x)))
            return op_ref_error(c, XDNN_ERR_SEMANTIC, "%s[%lld] = %g is not an integer in [0, %lld]",
                                c->desc->ports[port], (long long)b, x, (long long)full);
        len[b] = (int64_t)x;
    }
    return XDNN_OK;
}

/* Row `tok` of a [T, H, D] tensor or row (b, h, i) of a [B, H, S, D] one. */
static const double *row_of(const ref_tensor *t, int64_t b, int64_t h, int64_t i)
{
    if (t->rank == 3)
        return t->data + (i * t->dims[1] + h) * t->dims[2];
    return t->data + ((b * t->dims[1] + h) * t->dims[2] + i) * t->dims[3];
}

typedef struct serve_buf {
    int64_t *offq, *offkv, *lq, *lkv, *kpos; /* kpos [B*Skv]: source row of each dense key (-1 = none) */
    double *q, *k, *v, *o, *stats;
} serve_buf;

static void serve_free(serve_buf *s)
{
    free(s->offq), free(s->offkv), free(s->lq), free(s->lkv), free(s->kpos);
    free(s->q), free(s->k), free(s->v), free(s->o), free(s->stats);
}

/* Row of head hk of k or v at source position pos (kpos): page * page_size
 * + slot when paged, else the token (ragged) or key (dense) index. */
static const double *key_row(const ref_tensor *t, bool paged, int64_t b, int64_t pos, int64_t page_size, int64_t hk)
{
    if (paged)
        return row_of(t, pos / page_size, hk, pos % page_size);
    return row_of(t, t->rank == 3 ? 0 : b, hk, pos);
}

xdnn_status sdpa_serve_reference(op_ref_ctx *c)
{
    const ref_tensor *q = c->in[SDPA_Q], *k = c->in[SDPA_K], *v = c->in[SDPA_V];
    const ref_tensor *pt = ref_at(c, SDPA_PAGE_TABLE);
    const bool rq = ref_at(c, SDPA_OFF_Q) != NULL, rkv = ref_at(c, SDPA_OFF_KV) != NULL, paged = pt != NULL;
    const int64_t B = rq ? c->in[SDPA_OFF_Q]->dims[0] - 1 : rkv ? c->in[SDPA_OFF_KV]->dims[0] - 1 : q->dims[0];
    const int64_t Hq = q->dims[1], Hk = k->dims[1], D = q->dims[q->rank - 1], Dv = v->dims[v->rank - 1];
    const int64_t page_size = paged ? k->dims[2] : 0, npages = paged ? k->dims[0] : 0;
    serve_buf s = {0};
    xdnn_status st = XDNN_OK;
    const size_t nb = (size_t)B + 1;
    s.offq = calloc(nb, sizeof *s.offq), s.offkv = calloc(nb, sizeof *s.offkv);
    s.lq = calloc(nb, sizeof *s.lq), s.lkv = calloc(nb, sizeof *s.lkv);
    if (!s.offq || !s.offkv || !s.lq || !s.lkv) {
        serve_free(&s);
        return op_ref_error(c, XDNN_ERR_NOMEM, "out of memory for sequence offsets");
    }
    /* lengths: offsets, seq_len_kv (paged), or the dense dims */
    int64_t Sq = 0, Skv = 0;
    if (rq) {
        st = read_offsets(c, SDPA_OFF_Q, q->dims[0], s.offq, B);
        for (int64_t b = 0; !st && b < B; b++)
            s.lq[b] = s.offq[b + 1] - s.offq[b], Sq = s.lq[b] > Sq ? s.lq[b] : Sq;
    } else {
        Sq = q->dims[2];
        st = read_lens(c, SDPA_LEN_Q, B, Sq, s.lq);
    }
    if (!st && rkv) {
        st = read_offsets(c, SDPA_OFF_KV, k->dims[0], s.offkv, B);
        for (int64_t b = 0; !st && b < B; b++)
            s.lkv[b] = s.offkv[b + 1] - s.offkv[b], Skv = s.lkv[b] > Skv ? s.lkv[b] : Skv;
    } else if (!st) {
        Skv = paged ? pt->dims[1] * page_size : k->dims[2];
        st = read_lens(c, SDPA_LEN_KV, B, Skv, s.lkv);
    }
    if (st) {
        serve_free(&s);
        return st;
    }
    /* where each dense key comes from; the pages a sequence uses must exist */
    s.kpos = malloc((size_t)(B * Skv > 0 ? B * Skv : 1) * sizeof *s.kpos);
    const size_t nq = (size_t)(B * Hq * Sq), nk = (size_t)(B * Hk * Skv);
    s.q = calloc(nq * D + 1, sizeof(double)), s.o = calloc(nq * Dv + 1, sizeof(double));
    s.stats = calloc(nq + 1, sizeof(double));
    s.k = calloc(nk * D + 1, sizeof(double)), s.v = calloc(nk * Dv + 1, sizeof(double));
    if (!s.kpos || !s.q || !s.o || !s.stats || !s.k || !s.v) {
        serve_free(&s);
        return op_ref_error(c, XDNN_ERR_NOMEM, "out of memory for the dense copies of q, k, v");
    }
    for (int64_t b = 0; b < B; b++)
        for (int64_t j = 0; j < Skv; j++) {
            int64_t pos = -1;
            if (j < s.lkv[b] && paged) {
                double pg = pt->data[b * pt->dims[1] + j / page_size];
                if (!(pg >= 0 && pg < (double)npages && pg == floor(pg))) {
                    const long long keys = (long long)s.lkv[b]; /* read before s is freed */
                    serve_free(&s);
                    return op_ref_error(c, XDNN_ERR_SEMANTIC,
                                        "page_table[%lld, %lld] = %g is not a page in [0, %lld) (sequence %lld has %lld keys)",
                                        (long long)b, (long long)(j / page_size), pg, (long long)npages, (long long)b,
                                        keys);
                }
                pos = (int64_t)pg * page_size + j % page_size;
            } else if (j < s.lkv[b]) {
                pos = rkv ? s.offkv[b] + j : j;
            }
            s.kpos[b * Skv + j] = pos;
        }
    /* gather into dense [B, H, S, D]; padding stays 0 (masked by the lengths) */
    for (int64_t b = 0; b < B; b++) {
        for (int64_t h = 0; h < Hq; h++)
            for (int64_t i = 0; i < s.lq[b]; i++)
                memcpy(s.q + ((b * Hq + h) * Sq + i) * D, row_of(q, b, h, rq ? s.offq[b] + i : i), (size_t)D * sizeof(double));
        for (int64_t h = 0; h < Hk; h++)
            for (int64_t j = 0; j < Skv; j++) {
                int64_t pos = s.kpos[b * Skv + j];
                if (pos < 0)
                    continue;
                memcpy(s.k + ((b * Hk + h) * Skv + j) * D, key_row(k, paged, b, pos, page_size, h),
                       (size_t)D * sizeof(double));
                memcpy(s.v + ((b * Hk + h) * Skv + j) * Dv, key_row(v, paged, b, pos, page_size, h),
                       (size_t)Dv * sizeof(double));
            }
    }
    sdpa_cfg cfg = {.n = {.B = B, .Hq = Hq, .Hk = Hk, .Sq = Sq, .Skv = Skv, .D = D, .Dv = Dv},
                    .len_q = s.lq, .len_kv = s.lkv};
    sdpa_config_attrs(c->node, c->desc, &cfg);
    double *stats = c->nresults > 1 && c->out[1] ? c->out[1]->data : NULL;
    st = sdpa_forward_ref(c, &cfg, s.q, s.k, s.v, s.o, s.stats);
    if (!st) {
        double *o = c->out[0]->data; /* every token is in one sequence: every row is written */
        for (int64_t b = 0; b < B; b++)
            for (int64_t h = 0; h < Hq; h++)
                for (int64_t i = 0; i < (rq ? s.lq[b] : Sq); i++) {
                    const int64_t dense = (b * Hq + h) * Sq + i;
                    const int64_t out = rq ? (s.offq[b] + i) * Hq + h : dense;
                    memcpy(o + out * Dv, s.o + dense * Dv, (size_t)Dv * sizeof(double));
                    if (stats)
                        stats[out] = s.stats[dense];
                }
    }
    serve_free(&s);
    return st;
}
