/* test_op_sdpa_ragged_bwd.c — ragged (THD-packed) sdpa_bwd
 * (src/ops/sdpa_serve.c): its dq, dk, dv must equal, bit for bit in double,
 * those of the dense sdpa_bwd run on each sequence alone (and the ragged
 * forward's o and stats those of the dense forward).  Odd and zero lengths,
 * GQA, causal with both alignments, windows, and the mixed forms (only q or
 * only k/v packed, the other dense with seq_len and NaN in its padding, so a
 * padded position that leaks in shows).  Then the shape checks' messages and
 * bad offsets at run time. */
#include "op_test_util.h"
#include "test_util.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const op_desc op_sdpa_desc, op_sdpa_bwd_desc;

enum { FWD_NP = 9, BWD_NP = 11, MAXB = 5 };
enum { P_O = 3, P_DO = 4, P_STATS = 5, P_BIAS = 6, P_LEN_Q = 7, P_LEN_KV = 8, P_OFF_Q = 9, P_OFF_KV = 10 };

typedef struct ragged_case {
    const char *name;
    int64_t B, Hq, Hk, D, Dv;
    bool ragged_q, ragged_kv, causal, bottom_right;
    int64_t window[2]; /* {0, 0}: none */
    int64_t lq[MAXB], lkv[MAXB];
} ragged_case;

/* Integer ports (offsets, lengths) are i32, every other input f32. */
static bool int_port(const op_desc *d, int port)
{
    const char *p = d->ports[port];
    return strncmp(p, "seq_", 4) == 0;
}

/* Infer (through the same checks a graph meets), allocate NaN-filled results
 * and run the reference; msg gets the first error. */
static xdnn_status run_op(const op_desc *d, const xnode *n, int nin, const ref_tensor *const *in, int nout,
                          ref_tensor *out, char *msg, size_t cap)
{
    tinfo ti[OP_MAX_PORTS], to[OP_MAX_RESULTS];
    const tinfo *tp[OP_MAX_PORTS] = {0};
    for (int i = 0; i < nin; i++)
        if (in[i]) {
            ti[i] = optest_tinfo(int_port(d, i) ? XDNN_I32 : XDNN_F32, in[i]->rank, in[i]->dims);
            tp[i] = &ti[i];
        }
    for (int i = 0; i < nout; i++)
        out[i] = (ref_tensor){0};
    xdnn_status st = optest_infer_msg(d, n, nin, tp, nout, to, msg, cap);
    if (st)
        return st;
    xdnn_diags_t *diags = xdnn_diags_create();
    op_ref_ctx c = {.desc = d, .node = n, .nin = nin, .nresults = nout, .diags = diags};
    for (int i = 0; i < nin; i++)
        c.in[i] = in[i];
    for (int i = 0; i < nout; i++) {
        out[i] = optest_ref_alloc(to[i].rank, to[i].dims); /* NaN: an unwritten element shows */
        c.out[i] = &out[i];
    }
    st = d->reference(&c);
    snprintf(msg, cap, "%s", optest_first_error(diags));
    xdnn_diags_destroy(diags);
    return st;
}

static void set_attrs(xnode *n, const op_desc *d, const ragged_case *cs)
{
    optest_set_bool(n, d, "causal", cs->causal);
    if (cs->bottom_right)
        optest_set_str(n, d, "align", "bottom_right");
    if (cs->window[0] || cs->window[1])
        optest_set_ints(n, d, "window", 2, cs->window);
}

/* One sequence alone, dense [1, H, L, W]: inputs, and the forward's and
 * backward's results. */
typedef struct seq_run {
    ref_tensor q, k, v, dout, res[2], grad[3]; /* res: o, stats; grad: dq, dk, dv */
} seq_run;

/* Where the rows of sequence b sit in a packed or padded tensor: token
 * off[b] + i of [T, H, W], or row (b, h, i) of [B, H, S, W]. */
static int64_t row_at(const ref_tensor *t, bool packed, const int64_t *off, int64_t b, int64_t h, int64_t i)
{
    if (packed)
        return ((off[b] + i) * t->dims[1] + h) * t->dims[2];
    return ((b * t->dims[1] + h) * t->dims[2] + i) * t->dims[3];
}

/* Packed [T, H, W] or padded [B, H, S, W] (padding NaN) holding the
 * sequences' [1, H, L, W] tensors of field `at` (offset into seq_run). */
static ref_tensor pack(const seq_run *seqs, size_t at, int64_t B, const int64_t *len, const int64_t *off, bool packed,
                       int64_t S)
{
    const ref_tensor *t0 = (const ref_tensor *)((const char *)&seqs[0] + at);
    const int64_t H = t0->dims[1], W = t0->dims[3];
    ref_tensor t = packed ? optest_ref_alloc(3, (int64_t[]){off[B], H, W}) : optest_ref_alloc(4, (int64_t[]){B, H, S, W});
    for (int64_t b = 0; b < B; b++) {
        const ref_tensor *s = (const ref_tensor *)((const char *)&seqs[b] + at);
        for (int64_t h = 0; h < H; h++)
            for (int64_t i = 0; i < len[b]; i++)
                memcpy(t.data + row_at(&t, packed, off, b, h, i), s->data + (h * len[b] + i) * W,
                       (size_t)W * sizeof(double));
    }
    return t;
}

/* Count the elements of a packed/padded result that differ from the
 * sequences' dense results (padding must be exactly 0). */
static void compare(const char *what, const ref_tensor *got, const seq_run *seqs, size_t at, int64_t B,
                    const int64_t *len, const int64_t *off, bool packed, int64_t *bad, int64_t *compared,
                    int64_t *nonzero)
{
    const int64_t H = got->dims[1], W = got->dims[got->rank - 1], S = packed ? 0 : got->dims[2];
    int64_t first = -1;
    for (int64_t b = 0; b < B; b++) {
        const ref_tensor *s = (const ref_tensor *)((const char *)&seqs[b] + at);
        for (int64_t h = 0; h < H; h++)
            for (int64_t i = 0; i < (packed ? len[b] : S); i++)
                for (int64_t w = 0; w < W; w++) {
                    const double g = got->data[row_at(got, packed, off, b, h, i) + w];
                    const double want = i < len[b] ? s->data[(h * len[b] + i) * W + w] : 0.0;
                    (*compared)++;
                    *nonzero += want != 0 && isfinite(want);
                    if (!(g == want)) { /* -inf == -inf: fully masked rows */
                        if (first < 0)
                            fprintf(stderr, "  %s: sequence %lld head %lld row %lld [%lld]: got %.17g, want %.17g\n",
                                    what, (long long)b, (long long)h, (long long)i, (long long)w, g, want);
                        first = 1;
                        (*bad)++;
                    }
                }
    }
}

static void check_case(const ragged_case *cs, uint64_t seed)
{
    arena *a = arena_create();
    xnode nf, nb;
    optest_node(a, &nf, &op_sdpa_desc);
    optest_node(a, &nb, &op_sdpa_bwd_desc);
    set_attrs(&nf, &op_sdpa_desc, cs);
    set_attrs(&nb, &op_sdpa_bwd_desc, cs);
    const int64_t B = cs->B, Hq = cs->Hq, Hk = cs->Hk, D = cs->D, Dv = cs->Dv;
    int64_t offq[MAXB + 1] = {0}, offkv[MAXB + 1] = {0}, Sq = 0, Skv = 0;
    for (int64_t b = 0; b < B; b++) {
        offq[b + 1] = offq[b] + cs->lq[b], offkv[b + 1] = offkv[b] + cs->lkv[b];
        Sq = cs->lq[b] > Sq ? cs->lq[b] : Sq, Skv = cs->lkv[b] > Skv ? cs->lkv[b] : Skv;
    }
    Sq += !cs->ragged_q, Skv += !cs->ragged_kv; /* dense: one padded row at least */
    char msg[512];

    /* each sequence alone through the dense forward and backward */
    seq_run seqs[MAXB];
    for (int64_t b = 0; b < B; b++) {
        seq_run *s = &seqs[b];
        const int64_t lq = cs->lq[b], lkv = cs->lkv[b];
        s->q = optest_ref_alloc(4, (int64_t[]){1, Hq, lq, D});
        s->k = optest_ref_alloc(4, (int64_t[]){1, Hk, lkv, D});
        s->v = optest_ref_alloc(4, (int64_t[]){1, Hk, lkv, Dv});
        s->dout = optest_ref_alloc(4, (int64_t[]){1, Hq, lq, Dv});
        optest_fill_lcg(&s->q, seed + 10 * (uint64_t)b + 1, -1.5, 1.5);
        optest_fill_lcg(&s->k, seed + 10 * (uint64_t)b + 2, -1.5, 1.5);
        optest_fill_lcg(&s->v, seed + 10 * (uint64_t)b + 3, -1, 1);
        optest_fill_lcg(&s->dout, seed + 10 * (uint64_t)b + 4, -1, 1);
        const ref_tensor *fin[FWD_NP] = {&s->q, &s->k, &s->v};
        CHECK(run_op(&op_sdpa_desc, &nf, 3, fin, 2, s->res, msg, sizeof msg) == XDNN_OK, "%s: dense forward %lld: %s",
              cs->name, (long long)b, msg);
        const ref_tensor *bin[BWD_NP] = {&s->q, &s->k, &s->v, &s->res[0], &s->dout, &s->res[1]};
        CHECK(run_op(&op_sdpa_bwd_desc, &nb, 6, bin, 3, s->grad, msg, sizeof msg) == XDNN_OK,
              "%s: dense backward %lld: %s", cs->name, (long long)b, msg);
    }

    /* the same values packed (or padded, with seq_len and NaN padding) */
    const bool rq = cs->ragged_q, rkv = cs->ragged_kv;
    ref_tensor q = pack(seqs, offsetof(seq_run, q), B, cs->lq, offq, rq, Sq);
    ref_tensor k = pack(seqs, offsetof(seq_run, k), B, cs->lkv, offkv, rkv, Skv);
    ref_tensor v = pack(seqs, offsetof(seq_run, v), B, cs->lkv, offkv, rkv, Skv);
    ref_tensor o = pack(seqs, offsetof(seq_run, res[0]), B, cs->lq, offq, rq, Sq);
    ref_tensor dout = pack(seqs, offsetof(seq_run, dout), B, cs->lq, offq, rq, Sq);
    ref_tensor stats = pack(seqs, offsetof(seq_run, res[1]), B, cs->lq, offq, rq, Sq);
    ref_tensor oq = optest_ref_ints(B + 1, offq), okv = optest_ref_ints(B + 1, offkv);
    ref_tensor lq = optest_ref_ints(B, cs->lq), lkv = optest_ref_ints(B, cs->lkv);
    const ref_tensor *fin[FWD_NP] = {&q, &k, &v, NULL, rq ? NULL : &lq, rkv ? NULL : &lkv, NULL,
                                     rq ? &oq : NULL, rkv ? &okv : NULL};
    const ref_tensor *bin[BWD_NP] = {&q, &k, &v, &o, &dout, &stats, NULL, rq ? NULL : &lq, rkv ? NULL : &lkv,
                                     rq ? &oq : NULL, rkv ? &okv : NULL};
    ref_tensor res[2], grad[3];
    CHECK(run_op(&op_sdpa_desc, &nf, FWD_NP, fin, 2, res, msg, sizeof msg) == XDNN_OK, "%s: ragged forward: %s",
          cs->name, msg);
    CHECK(run_op(&op_sdpa_bwd_desc, &nb, BWD_NP, bin, 3, grad, msg, sizeof msg) == XDNN_OK,
          "%s: ragged backward: %s", cs->name, msg);

    /* bit-exact: the same double sums in the same order; padding exactly 0 */
    int64_t bad = 0, compared = 0, nonzero[5] = {0};
    if (res[0].data && grad[0].data) {
        compare("o", &res[0], seqs, offsetof(seq_run, res[0]), B, cs->lq, offq, rq, &bad, &compared, &nonzero[0]);
        int64_t ignored = 0;
        for (int64_t b = 0; !rq && b < B; b++) /* padded stats rows are -inf, not 0: compare the valid rows */
            for (int64_t h = 0; h < Hq; h++)
                for (int64_t i = cs->lq[b]; i < Sq; i++)
                    bad += res[1].data[(b * Hq + h) * Sq + i] != -(double)INFINITY, res[1].data[(b * Hq + h) * Sq + i] = 0;
        compare("stats", &res[1], seqs, offsetof(seq_run, res[1]), B, cs->lq, offq, rq, &bad, &compared, &ignored);
        compare("dq", &grad[0], seqs, offsetof(seq_run, grad[0]), B, cs->lq, offq, rq, &bad, &compared, &nonzero[2]);
        compare("dk", &grad[1], seqs, offsetof(seq_run, grad[1]), B, cs->lkv, offkv, rkv, &bad, &compared,
                &nonzero[3]);
        compare("dv", &grad[2], seqs, offsetof(seq_run, grad[2]), B, cs->lkv, offkv, rkv, &bad, &compared,
                &nonzero[4]);
    }
    CHECK(bad == 0 && compared > 0 && nonzero[0] > 0 && nonzero[2] > 0 && nonzero[3] > 0 && nonzero[4] > 0,
          "%s (seed %llu): %lld of %lld values differ from the dense runs one sequence at a time "
          "(nonzero o %lld, dq %lld, dk %lld, dv %lld)",
          cs->name, (unsigned long long)seed, (long long)bad, (long long)compared, (long long)nonzero[0],
          (long long)nonzero[2], (long long)nonzero[3], (long long)nonzero[4]);

    for (int64_t b = 0; b < B; b++) {
        seq_run *s = &seqs[b];
        optest_ref_free(&s->q), optest_ref_free(&s->k), optest_ref_free(&s->v), optest_ref_free(&s->dout);
        for (int r = 0; r < 2; r++)
            optest_ref_free(&s->res[r]);
        for (int r = 0; r < 3; r++)
            optest_ref_free(&s->grad[r]);
    }
    for (int r = 0; r < 2; r++)
        optest_ref_free(&res[r]);
    for (int r = 0; r < 3; r++)
        optest_ref_free(&grad[r]);
    optest_ref_free(&q), optest_ref_free(&k), optest_ref_free(&v), optest_ref_free(&o), optest_ref_free(&dout);
    optest_ref_free(&stats), optest_ref_free(&oq), optest_ref_free(&okv), optest_ref_free(&lq), optest_ref_free(&lkv);
    arena_destroy(a);
}

static void test_equivalence(void)
{
    static const ragged_case cases[] = {
        {"odd lengths, no mask", 3, 2, 2, 5, 5, true, true, false, false, {0, 0}, {1, 7, 33}, {1, 7, 33}},
        {"GQA causal top_left", 3, 4, 2, 8, 6, true, true, true, false, {0, 0}, {7, 1, 33}, {9, 3, 33}},
        {"MQA causal bottom_right", 4, 3, 1, 6, 8, true, true, true, true, {0, 0}, {5, 1, 33, 2}, {13, 1, 40, 7}},
        {"zero-length sequences", 4, 4, 2, 4, 4, true, true, true, true, {0, 0}, {3, 0, 5, 2}, {6, 4, 5, 0}},
        {"window bottom_right", 3, 2, 1, 8, 8, true, true, false, true, {3, 1}, {7, 33, 1}, {11, 33, 4}},
        {"window and causal top_left GQA", 2, 6, 3, 4, 5, true, true, true, false, {2, -1}, {33, 7}, {35, 7}},
        {"ragged q, dense k/v with seq_len_kv", 3, 4, 2, 4, 4, true, false, true, true, {0, 0}, {4, 1, 7},
         {6, 2, 9}},
        {"ragged k/v, dense q with seq_len_q", 3, 2, 2, 6, 4, false, true, true, false, {0, 0}, {7, 1, 5},
         {7, 3, 5}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(&cases[i], 300 + 31 * i);
}

static void test_infer(void)
{
    arena *a = arena_create();
    xnode n;
    optest_node(a, &n, &op_sdpa_bwd_desc);
    const op_desc *d = &op_sdpa_bwd_desc;
    tinfo q = optest_tinfo(XDNN_BF16, 3, (int64_t[]){40, 8, 64}), k = optest_tinfo(XDNN_BF16, 3, (int64_t[]){90, 2, 64});
    tinfo v = optest_tinfo(XDNN_BF16, 3, (int64_t[]){90, 2, 32}), o = optest_tinfo(XDNN_BF16, 3, (int64_t[]){40, 8, 32});
    tinfo st = optest_tinfo(XDNN_F32, 3, (int64_t[]){40, 8, 1}), off = optest_tinfo(XDNN_I32, 1, (int64_t[]){4});
    tinfo out[3];
    char msg[512];
    CHECK(optest_infer_msg(d, &n, BWD_NP, (const tinfo *[]){&q, &k, &v, &o, &o, &st, NULL, NULL, NULL, &off, &off}, 3,
                           out, msg, sizeof msg) == XDNN_OK &&
              out[0].rank == 3 && out[0].dims[0] == 40 && out[0].dims[2] == 64 && out[1].dims[0] == 90 &&
              out[1].dims[1] == 2 && out[2].dims[2] == 32 && out[2].dtype == XDNN_BF16,
          "ragged backward: %s", msg);
    tinfo off5 = optest_tinfo(XDNN_I32, 1, (int64_t[]){5});
    optest_expect_infer_error(d, &n, BWD_NP, (const tinfo *[]){&q, &k, &v, &o, &o, &st, NULL, NULL, NULL, &off, &off5},
                              3, "sdpa_bwd: seq_offsets_kv has 5 entries, the batch of 3 sequences needs B+1 = 4");
    tinfo q4 = optest_tinfo(XDNN_BF16, 4, (int64_t[]){3, 8, 20, 64});
    optest_expect_infer_error(d, &n, BWD_NP, (const tinfo *[]){&q4, &k, &v, &o, &o, &st, NULL, NULL, NULL, &off, NULL}, 3,
                              "sdpa_bwd: q must be [T, H, D] (THD-packed) with seq_offsets_q, got [3, 8, 20, 64]");
    optest_expect_infer_error(d, &n, BWD_NP, (const tinfo *[]){&q, &k, &v, &q, &o, &st, NULL, NULL, NULL, &off, &off},
                              3, "sdpa_bwd: o must be [40, 8, 32], got [40, 8, 64]");
    optest_expect_infer_error(d, &n, BWD_NP, (const tinfo *[]){&q, &k, &v, &o, &v, &st, NULL, NULL, NULL, &off, &off},
                              3, "sdpa_bwd: do must be [40, 8, 32], got [90, 2, 32]");
    tinfo st4 = optest_tinfo(XDNN_F32, 4, (int64_t[]){3, 8, 40, 1});
    optest_expect_infer_error(d, &n, BWD_NP, (const tinfo *[]){&q, &k, &v, &o, &o, &st4, NULL, NULL, NULL, &off, &off},
                              3, "sdpa_bwd: stats must be [40, 8, 1], got [3, 8, 40, 1]");
    tinfo lens = optest_tinfo(XDNN_I32, 1, (int64_t[]){3});
    optest_expect_infer_error(d, &n, BWD_NP, (const tinfo *[]){&q, &k, &v, &o, &o, &st, NULL, &lens, NULL, &off, &off},
                              3, "sdpa_bwd: seq_len_q and seq_offsets_q exclude each other (the offsets give the "
                                 "lengths)");
    tinfo bias = optest_tinfo(XDNN_F32, 1, (int64_t[]){1});
    optest_expect_infer_error(d, &n, BWD_NP, (const tinfo *[]){&q, &k, &v, &o, &o, &st, &bias, NULL, NULL, &off, &off},
                              3, "sdpa_bwd: bias is not supported with seq_offsets");
    tinfo offf = optest_tinfo(XDNN_F32, 1, (int64_t[]){4});
    optest_expect_infer_error(d, &n, BWD_NP, (const tinfo *[]){&q, &k, &v, &o, &o, &st, NULL, NULL, NULL, &offf, &off},
                              3, "sdpa_bwd: seq_offsets_q must be i32 or i64, got f32");
    optest_set_float(&n, d, "dropout", 0.1);
    optest_expect_infer_error(d, &n, BWD_NP, (const tinfo *[]){&q, &k, &v, &o, &o, &st, NULL, NULL, NULL, &off, &off},
                              3, "sdpa_bwd: attribute 'dropout' must be 0 with seq_offsets, got 0.1");
    arena_destroy(a);
}

/* The cost model counts a THD-packed node as B sequences of the mean
 * length: the dense node of those shapes. */
static void test_flops(void)
{
    arena *a = arena_create();
    xnode n;
    optest_node(a, &n, &op_sdpa_bwd_desc);
    optest_set_bool(&n, &op_sdpa_bwd_desc, "causal", true);
    const tinfo none = {.rank = -1};
    tinfo q = optest_tinfo(XDNN_BF16, 3, (int64_t[]){39, 8, 64}), k = optest_tinfo(XDNN_BF16, 3, (int64_t[]){90, 2, 64});
    tinfo v = optest_tinfo(XDNN_BF16, 3, (int64_t[]){90, 2, 32}), o = optest_tinfo(XDNN_BF16, 3, (int64_t[]){39, 8, 32});
    tinfo st = optest_tinfo(XDNN_F32, 3, (int64_t[]){39, 8, 1}), off = optest_tinfo(XDNN_I32, 1, (int64_t[]){4});
    const tinfo ragged[BWD_NP] = {q, k, v, o, o, st, none, none, none, off, off};
    tinfo qd = optest_tinfo(XDNN_BF16, 4, (int64_t[]){3, 8, 13, 64});
    tinfo kd = optest_tinfo(XDNN_BF16, 4, (int64_t[]){3, 2, 30, 64});
    tinfo vd = optest_tinfo(XDNN_BF16, 4, (int64_t[]){3, 2, 30, 32});
    tinfo od = optest_tinfo(XDNN_BF16, 4, (int64_t[]){3, 8, 13, 32});
    tinfo sd = optest_tinfo(XDNN_F32, 4, (int64_t[]){3, 8, 13, 1});
    const tinfo dense[6] = {qd, kd, vd, od, od, sd};
    const double fr = optest_flops(&op_sdpa_bwd_desc, &n, BWD_NP, ragged, 3, ragged);
    const double fd = optest_flops(&op_sdpa_bwd_desc, &n, 6, dense, 3, dense);
    CHECK(fr > 0 && fr == fd, "ragged flops %g, dense flops %g", fr, fd);
    arena_destroy(a);
}

/* Offsets are checked when the op runs: not monotone, or not ending at T. */
static void test_bad_offsets(void)
{
    arena *a = arena_create();
    xnode n;
    optest_node(a, &n, &op_sdpa_bwd_desc);
    ref_tensor q = optest_ref_alloc(3, (int64_t[]){5, 2, 4}), k = optest_ref_alloc(3, (int64_t[]){6, 1, 4});
    ref_tensor o = optest_ref_alloc(3, (int64_t[]){5, 2, 4}), st = optest_ref_alloc(3, (int64_t[]){5, 2, 1});
    optest_fill_lcg(&q, 1, -1, 1), optest_fill_lcg(&k, 2, -1, 1), optest_fill_lcg(&o, 3, -1, 1);
    optest_fill_lcg(&st, 4, 0, 1);
    static const struct {
        int64_t offq[3], offkv[3];
        const char *want;
    } bad[] = {
        {{0, 4, 5}, {0, 2, 6}, NULL},
        {{0, 4, 3}, {0, 2, 6}, "sdpa_bwd: seq_offsets_q[2] = 3: offsets must be non-decreasing integers from 0 to T = 5"},
        {{0, 4, 5}, {0, 7, 6}, "sdpa_bwd: seq_offsets_kv[1] = 7: offsets must be non-decreasing integers from 0 to T = 6"},
        {{0, 4, 5}, {0, 3, 5}, "sdpa_bwd: seq_offsets_kv[2] = 5: offsets must be non-decreasing integers from 0 to T = 6"},
        {{1, 4, 5}, {0, 2, 6}, "sdpa_bwd: seq_offsets_q[0] = 1: offsets must be non-decreasing integers from 0 to T = 5"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ref_tensor oq = optest_ref_ints(3, bad[i].offq), okv = optest_ref_ints(3, bad[i].offkv), grad[3];
        char msg[512];
        const ref_tensor *in[BWD_NP] = {&q, &k, &k, &o, &o, &st, NULL, NULL, NULL, &oq, &okv};
        xdnn_status s = run_op(&op_sdpa_bwd_desc, &n, BWD_NP, in, 3, grad, msg, sizeof msg);
        if (!bad[i].want)
            CHECK(s == XDNN_OK, "good offsets rejected: %s", msg);
        else
            CHECK(s == XDNN_ERR_SEMANTIC && strcmp(msg, bad[i].want) == 0, "bad offsets %zu: status %d \"%s\"", i,
                  (int)s, msg);
        for (int r = 0; r < 3; r++)
            optest_ref_free(&grad[r]);
        optest_ref_free(&oq), optest_ref_free(&okv);
    }
    optest_ref_free(&q), optest_ref_free(&k), optest_ref_free(&o), optest_ref_free(&st);
    arena_destroy(a);
}

int main(void)
{
    test_equivalence();
    test_infer();
    test_flops();
    test_bad_offsets();
    return test_summary("test_op_sdpa_ragged_bwd");
}
