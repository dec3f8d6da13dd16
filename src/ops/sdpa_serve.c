/* sdpa_serve.c — the serving forms of sdpa and sdpa_bwd: a paged K/V cache
 * (page_table, the forward only) and ragged THD-packed sequences
 * (seq_offsets_q, seq_offsets_kv); see sdpa.h for their definition.  The
 * references gather the pages and the packed tokens into zero-padded dense
 * [B, H, max L, D] tensors, run the dense forward (sdpa_forward_ref) or
 * backward (sdpa_backward_ref) with the lengths as seq_len_q/kv, and scatter
 * the results back: a paged or ragged graph equals its dense equivalent by
 * construction, so the one mask rule and softmax stay in sdpa.c.
 */
#include "sdpa.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const sdpa_port_map sdpa_fwd_port_map = {.bias = SDPA_BIAS, .len_q = SDPA_LEN_Q, .len_kv = SDPA_LEN_KV,
                                          .page_table = SDPA_PAGE_TABLE, .off_q = SDPA_OFF_Q, .off_kv = SDPA_OFF_KV};
const sdpa_port_map sdpa_bwd_port_map = {.bias = SDPA_BWD_BIAS, .len_q = SDPA_BWD_LEN_Q, .len_kv = SDPA_BWD_LEN_KV,
                                          .page_table = -1, .off_q = SDPA_BWD_OFF_Q, .off_kv = SDPA_BWD_OFF_KV};

bool sdpa_serving(const sdpa_port_map *pm, int nin, const void *const *in)
{
    const int ports[3] = {pm->page_table, pm->off_q, pm->off_kv};
    for (int i = 0; i < 3; i++)
        if (ports[i] >= 0 && ports[i] < nin && in[ports[i]])
            return true;
    return false;
}

static const tinfo *in_at(const op_infer_ctx *c, int port) { return port >= 0 && port < c->nin ? c->in[port] : NULL; }

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

xdnn_status sdpa_serve_check(op_infer_ctx *c, const sdpa_port_map *pm, tinfo *o, tinfo *stats)
{
    const tinfo *q = c->in[SDPA_Q], *k = c->in[SDPA_K], *v = c->in[SDPA_V];
    const tinfo *pt = in_at(c, pm->page_table);
    const bool rq = in_at(c, pm->off_q) != NULL, rkv = in_at(c, pm->off_kv) != NULL, paged = pt != NULL;
    char sh[128], sh2[128];
    xdnn_status st;
    if (paged && rkv)
        return op_error(c, "page_table and seq_offsets_kv exclude each other (keys are paged or packed, not both)");
    if (in_at(c, pm->bias))
        return op_error(c, "bias is not supported with %s", paged ? "page_table" : "seq_offsets");
    double p = op_attr_float(c->node, c->desc, "dropout");
    if (p != 0.0)
        return op_error(c, "attribute 'dropout' must be 0 with %s, got %g", paged ? "page_table" : "seq_offsets", p);
    if (rq && in_at(c, pm->len_q))
        return op_error(c, "seq_len_q and seq_offsets_q exclude each other (the offsets give the lengths)");
    if (rkv && in_at(c, pm->len_kv))
        return op_error(c, "seq_len_kv and seq_offsets_kv exclude each other (the offsets give the lengths)");
    if (paged && !in_at(c, pm->len_kv))
        return op_error(c, "page_table needs seq_len_kv (the number of keys of each sequence)");
    if ((st = check_rank(c, "q", q, rq, false)) || (st = check_rank(c, "k", k, rkv, paged)) ||
        (st = check_rank(c, "v", v, rkv, paged)))
        return st;

    int64_t B = rq ? -1 : q->dims[0];
    if (rq && (st = check_offsets(c, pm->off_q, &B)))
        return st;
    if (rkv && (st = check_offsets(c, pm->off_kv, &B)))
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
    const tinfo *lkv = in_at(c, pm->len_kv), *lq = in_at(c, pm->len_q);
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
        *o = (tinfo){.dtype = q->dtype, .rank = 3, .dims = {q->dims[0], Hq, Dv}};
        *stats = (tinfo){.dtype = XDNN_F32, .rank = 3, .dims = {q->dims[0], Hq, 1}};
    } else {
        *o = (tinfo){.dtype = q->dtype, .rank = 4, .dims = {B, Hq, q->dims[2], Dv}};
        *stats = (tinfo){.dtype = XDNN_F32, .rank = 4, .dims = {B, Hq, q->dims[2], 1}};
    }
    return XDNN_OK;
}

/* ---- the references */

static const ref_tensor *ref_at(const op_ref_ctx *c, int port) { return port >= 0 && port < c->nin ? c->in[port] : NULL; }

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

/* Offset of the row (head h, position i) of sequence b in a [T, H, W]
 * tensor (i is then the token) or a [B, H, S, W] one. */
static int64_t row_index(const ref_tensor *t, int64_t b, int64_t h, int64_t i)
{
    if (t->rank == 3)
        return (i * t->dims[1] + h) * t->dims[2];
    return ((b * t->dims[1] + h) * t->dims[2] + i) * t->dims[3];
}

/* A node's tensors as the dense references see them. */
typedef struct serve_buf {
    bool rq, rkv, paged;
    int64_t B, Hq, Hk, Sq, Skv, D, Dv, page_size;
    int64_t *offq, *offkv, *lq, *lkv, *kpos; /* kpos [B*Skv]: source row of each dense key (-1 = none) */
    double *q, *k, *v;                       /* dense [B, H, S, D], zero-padded */
    double *o, *dout, *stats, *dq, *dk, *dv; /* dense results, or the backward's further inputs */
} serve_buf;

static void serve_free(serve_buf *s)
{
    free(s->offq), free(s->offkv), free(s->lq), free(s->lkv), free(s->kpos);
    free(s->q), free(s->k), free(s->v);
    free(s->o), free(s->dout), free(s->stats), free(s->dq), free(s->dk), free(s->dv);
}

/* A zeroed dense buffer of n doubles (one at least: calloc(0) may be NULL). */
static double *dense_alloc(int64_t n) { return calloc((size_t)n + 1, sizeof(double)); }

/* Row of sequence b, head h, query i of a q-like tensor (q, o, do, stats, dq):
 * token off_q[b] + i when ragged, else row (b, h, i). */
static int64_t query_row(const serve_buf *s, const ref_tensor *t, int64_t b, int64_t h, int64_t i)
{
    return s->rq ? row_index(t, 0, h, s->offq[b] + i) : row_index(t, b, h, i);
}

/* Row of head hk of k or v at source position pos (kpos): page * page_size
 * + slot when paged, else the token (ragged) or key (dense) index. */
static int64_t key_row(const serve_buf *s, const ref_tensor *t, int64_t b, int64_t pos, int64_t hk)
{
    if (s->paged)
        return row_index(t, pos / s->page_size, hk, pos % s->page_size);
    return row_index(t, s->rkv ? 0 : b, hk, pos);
}

/* q-like rows of each sequence into dense [B, H, Sq, W]; padded rows stay 0. */
static void gather_queries(const serve_buf *s, const ref_tensor *t, double *dense)
{
    const int64_t H = t->dims[1], W = t->dims[t->rank - 1];
    for (int64_t b = 0; b < s->B; b++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t i = 0; i < s->lq[b]; i++)
                memcpy(dense + ((b * H + h) * s->Sq + i) * W, t->data + query_row(s, t, b, h, i),
                       (size_t)W * sizeof(double));
}

/* Dense [B, H, Sq, W] back into a q-like result: every packed token is in one
 * sequence, and a dense result gets its padded rows (zeros) too, so every
 * element is written. */
static void scatter_queries(const serve_buf *s, const double *dense, ref_tensor *t)
{
    const int64_t H = t->dims[1], W = t->dims[t->rank - 1];
    for (int64_t b = 0; b < s->B; b++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t i = 0; i < (s->rq ? s->lq[b] : s->Sq); i++)
                memcpy(t->data + query_row(s, t, b, h, i), dense + ((b * H + h) * s->Sq + i) * W,
                       (size_t)W * sizeof(double));
}

/* k or v rows (through kpos) into dense [B, Hk, Skv, W]; padded keys stay 0. */
static void gather_keys(const serve_buf *s, const ref_tensor *t, double *dense)
{
    const int64_t W = t->dims[t->rank - 1];
    for (int64_t b = 0; b < s->B; b++)
        for (int64_t h = 0; h < s->Hk; h++)
            for (int64_t j = 0; j < s->Skv; j++) {
                const int64_t pos = s->kpos[b * s->Skv + j];
                if (pos >= 0)
                    memcpy(dense + ((b * s->Hk + h) * s->Skv + j) * W, t->data + key_row(s, t, b, pos, h),
                           (size_t)W * sizeof(double));
            }
}

/* Dense [B, Hk, Skv, W] back into dk or dv (never paged): the keys of each
 * packed sequence, or every dense row, padding (zeros) included. */
static void scatter_keys(const serve_buf *s, const double *dense, ref_tensor *t)
{
    const int64_t W = t->dims[t->rank - 1];
    for (int64_t b = 0; b < s->B; b++)
        for (int64_t h = 0; h < s->Hk; h++)
            for (int64_t j = 0; j < (s->rkv ? s->lkv[b] : s->Skv); j++)
                memcpy(t->data + key_row(s, t, b, s->rkv ? s->offkv[b] + j : j, h),
                       dense + ((b * s->Hk + h) * s->Skv + j) * W, (size_t)W * sizeof(double));
}

/* Where each dense key of sequence b comes from (s->kpos); the pages a
 * sequence reads must exist. */
static xdnn_status locate_keys(op_ref_ctx *c, const ref_tensor *pt, serve_buf *s)
{
    const int64_t npages = s->paged ? c->in[SDPA_K]->dims[0] : 0;
    for (int64_t b = 0; b < s->B; b++)
        for (int64_t j = 0; j < s->Skv; j++) {
            int64_t pos = -1;
            if (j < s->lkv[b] && s->paged) {
                double pg = pt->data[b * pt->dims[1] + j / s->page_size];
                if (!(pg >= 0 && pg < (double)npages && pg == floor(pg)))
                    return op_ref_error(c, XDNN_ERR_SEMANTIC,
                                        "page_table[%lld, %lld] = %g is not a page in [0, %lld) (sequence %lld has %lld keys)",
                                        (long long)b, (long long)(j / s->page_size), pg, (long long)npages,
                                        (long long)b, (long long)s->lkv[b]);
                pos = (int64_t)pg * s->page_size + j % s->page_size;
            } else if (j < s->lkv[b]) {
                pos = s->rkv ? s->offkv[b] + j : j;
            }
            s->kpos[b * s->Skv + j] = pos;
        }
    return XDNN_OK;
}

/* Read the lengths (offsets, seq_len_q/kv or the dense dims), locate the
 * keys, gather q, k, v into s, allocate the dense o and stats (and for the
 * backward do, dq, dk, dv) and fill *cfg (its lengths point into s: no
 * sdpa_config_free).  On failure s is freed. */
static xdnn_status serve_open(op_ref_ctx *c, bool backward, serve_buf *s, sdpa_cfg *cfg)
{
    const sdpa_port_map *pm = backward ? &sdpa_bwd_port_map : &sdpa_fwd_port_map;
    const ref_tensor *q = c->in[SDPA_Q], *k = c->in[SDPA_K], *v = c->in[SDPA_V];
    const ref_tensor *pt = ref_at(c, pm->page_table);
    memset(s, 0, sizeof *s);
    s->rq = ref_at(c, pm->off_q) != NULL, s->rkv = ref_at(c, pm->off_kv) != NULL, s->paged = pt != NULL;
    s->B = s->rq ? c->in[pm->off_q]->dims[0] - 1 : s->rkv ? c->in[pm->off_kv]->dims[0] - 1 : q->dims[0];
    s->Hq = q->dims[1], s->Hk = k->dims[1], s->D = q->dims[q->rank - 1], s->Dv = v->dims[v->rank - 1];
    s->page_size = s->paged ? k->dims[2] : 0;
    const int64_t B = s->B;
    const size_t nb = (size_t)B + 1;
    s->offq = calloc(nb, sizeof *s->offq), s->offkv = calloc(nb, sizeof *s->offkv);
    s->lq = calloc(nb, sizeof *s->lq), s->lkv = calloc(nb, sizeof *s->lkv);
    xdnn_status st = XDNN_OK;
    if (!s->offq || !s->offkv || !s->lq || !s->lkv)
        st = op_ref_error(c, XDNN_ERR_NOMEM, "out of memory for sequence offsets");
    /* lengths: offsets, seq_len_kv (paged), or the dense dims */
    if (!st && s->rq) {
        st = read_offsets(c, pm->off_q, q->dims[0], s->offq, B);
        for (int64_t b = 0; !st && b < B; b++)
            s->lq[b] = s->offq[b + 1] - s->offq[b], s->Sq = s->lq[b] > s->Sq ? s->lq[b] : s->Sq;
    } else if (!st) {
        s->Sq = q->dims[2];
        st = read_lens(c, pm->len_q, B, s->Sq, s->lq);
    }
    if (!st && s->rkv) {
        st = read_offsets(c, pm->off_kv, k->dims[0], s->offkv, B);
        for (int64_t b = 0; !st && b < B; b++)
            s->lkv[b] = s->offkv[b + 1] - s->offkv[b], s->Skv = s->lkv[b] > s->Skv ? s->lkv[b] : s->Skv;
    } else if (!st) {
        s->Skv = s->paged ? pt->dims[1] * s->page_size : k->dims[2];
        st = read_lens(c, pm->len_kv, B, s->Skv, s->lkv);
    }
    if (!st) {
        const int64_t nq = B * s->Hq * s->Sq, nk = B * s->Hk * s->Skv;
        s->kpos = malloc((size_t)(B * s->Skv > 0 ? B * s->Skv : 1) * sizeof *s->kpos);
        s->q = dense_alloc(nq * s->D), s->k = dense_alloc(nk * s->D), s->v = dense_alloc(nk * s->Dv);
        s->o = dense_alloc(nq * s->Dv), s->stats = dense_alloc(nq);
        bool ok = s->kpos && s->q && s->k && s->v && s->o && s->stats;
        if (backward) {
            s->dout = dense_alloc(nq * s->Dv), s->dq = dense_alloc(nq * s->D);
            s->dk = dense_alloc(nk * s->D), s->dv = dense_alloc(nk * s->Dv);
            ok = ok && s->dout && s->dq && s->dk && s->dv;
        }
        if (!ok)
            st = op_ref_error(c, XDNN_ERR_NOMEM, "out of memory for the dense copies of the attention tensors");
    }
    if (!st)
        st = locate_keys(c, pt, s);
    if (st) {
        serve_free(s);
        return st;
    }
    gather_queries(s, q, s->q);
    gather_keys(s, k, s->k);
    gather_keys(s, v, s->v);
    *cfg = (sdpa_cfg){.n = {.B = B, .Hq = s->Hq, .Hk = s->Hk, .Sq = s->Sq, .Skv = s->Skv, .D = s->D, .Dv = s->Dv},
                      .len_q = s->lq, .len_kv = s->lkv};
    sdpa_config_attrs(c->node, c->desc, cfg);
    return XDNN_OK;
}

xdnn_status sdpa_serve_reference(op_ref_ctx *c)
{
    serve_buf s;
    sdpa_cfg cfg;
    xdnn_status st = serve_open(c, false, &s, &cfg);
    if (st)
        return st;
    st = sdpa_forward_ref(c, &cfg, s.q, s.k, s.v, s.o, s.stats);
    if (!st) {
        scatter_queries(&s, s.o, c->out[0]);
        if (c->nresults > 1 && c->out[1])
            scatter_queries(&s, s.stats, c->out[1]);
    }
    serve_free(&s);
    return st;
}

xdnn_status sdpa_serve_bwd_reference(op_ref_ctx *c)
{
    serve_buf s;
    sdpa_cfg cfg;
    xdnn_status st = serve_open(c, true, &s, &cfg);
    if (st)
        return st;
    gather_queries(&s, c->in[SDPA_BWD_O], s.o);
    gather_queries(&s, c->in[SDPA_BWD_DO], s.dout);
    gather_queries(&s, c->in[SDPA_BWD_STATS], s.stats);
    st = sdpa_backward_ref(c, &cfg, s.q, s.k, s.v, s.o, s.dout, s.stats, s.dq, s.dk, s.dv);
    if (!st) {
        scatter_queries(&s, s.dq, c->out[0]);
        scatter_keys(&s, s.dk, c->out[1]);
        scatter_keys(&s, s.dv, c->out[2]);
    }
    serve_free(&s);
    return st;
}
