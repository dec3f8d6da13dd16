/* test_op_sdpa.c — sdpa and sdpa_bwd against known answers: a hand-computed
 * case, a separate naive softmax(q·kᵀ·scale + mask + bias)·v written here
 * (causal, windows, both alignments, GQA/MQA, sequence lengths, bias
 * broadcasting, dropout), central finite differences of <do, sdpa(q, k, v)>
 * for the backward, and exact inference error messages. */
#include "op_test_util.h"
#include "test_util.h"

#include "data/data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const op_desc op_sdpa_desc, op_sdpa_bwd_desc;

static const double NEG_INF = -(double)INFINITY;

typedef struct sdpa_case {
    const char *name;
    int64_t B, Hq, Hk, Sq, Skv, D, Dv;
    bool causal, bottom_right, window;
    int64_t left, right;
    bool has_scale;
    double scale;
    int bias_rank;              /* 0 = no bias */
    int64_t bias_dims[4];
    const double *len_q, *len_kv; /* NULL = full */
    double dropout;
    int64_t seed;
} sdpa_case;

/* Inputs of one case: q, k, v, bias, seq_len_q, seq_len_kv (absent = data NULL). */
typedef struct sdpa_inputs {
    ref_tensor t[6];
} sdpa_inputs;

static void inputs_make(const sdpa_case *cs, sdpa_inputs *in, uint64_t seed)
{
    memset(in, 0, sizeof *in);
    in->t[0] = optest_ref_alloc(4, (int64_t[]){cs->B, cs->Hq, cs->Sq, cs->D});
    in->t[1] = optest_ref_alloc(4, (int64_t[]){cs->B, cs->Hk, cs->Skv, cs->D});
    in->t[2] = optest_ref_alloc(4, (int64_t[]){cs->B, cs->Hk, cs->Skv, cs->Dv});
    optest_fill_lcg(&in->t[0], seed + 1, -1.5, 1.5);
    optest_fill_lcg(&in->t[1], seed + 2, -1.5, 1.5);
    optest_fill_lcg(&in->t[2], seed + 3, -1, 1);
    if (cs->bias_rank) {
        in->t[3] = optest_ref_alloc(cs->bias_rank, cs->bias_dims);
        optest_fill_lcg(&in->t[3], seed + 4, -2, 2);
    }
    const double *lens[2] = {cs->len_q, cs->len_kv};
    for (int k = 0; k < 2; k++) {
        if (!lens[k])
            continue;
        in->t[4 + k] = optest_ref_alloc(1, &cs->B);
        memcpy(in->t[4 + k].data, lens[k], (size_t)cs->B * sizeof(double));
    }
}

static void inputs_free(sdpa_inputs *in)
{
    for (int i = 0; i < 6; i++)
        optest_ref_free(&in->t[i]);
}

static void node_make(arena *a, xnode *n, const op_desc *d, const sdpa_case *cs)
{
    optest_node(a, n, d);
    optest_set_bool(n, d, "causal", cs->causal);
    if (cs->bottom_right)
        optest_set_str(n, d, "align", "bottom_right");
    if (cs->window)
        optest_set_ints(n, d, "window", 2, (int64_t[]){cs->left, cs->right});
    if (cs->has_scale)
        optest_set_float(n, d, "scale", cs->scale);
    optest_set_float(n, d, "dropout", cs->dropout);
    optest_set_int(n, d, "seed", cs->seed);
}

static xdnn_status run_fwd(const xnode *n, const sdpa_inputs *in, ref_tensor *o, ref_tensor *stats)
{
    xdnn_diags_t *diags = xdnn_diags_create();
    op_ref_ctx c = {.desc = &op_sdpa_desc, .node = n, .nin = 6, .nresults = stats ? 2 : 1, .diags = diags};
    for (int i = 0; i < 6; i++)
        c.in[i] = in->t[i].data ? &in->t[i] : NULL;
    c.out[0] = o;
    c.out[1] = stats;
    xdnn_status st = op_sdpa_desc.reference(&c);
    if (st)
        xdnn_diags_print(diags, stderr);
    xdnn_diags_destroy(diags);
    return st;
}

/* The test's own attention: scores for every (i, j), then -inf where a mask
 * says no, written rule by rule; softmax; dropout; times v. */
static void naive_sdpa(const sdpa_case *cs, const sdpa_inputs *in, double *o, double *stats)
{
    const double *q = in->t[0].data, *k = in->t[1].data, *v = in->t[2].data;
    double scale = cs->has_scale ? cs->scale : 1.0 / sqrt((double)cs->D);
    double *s = malloc((size_t)cs->Skv * sizeof *s);
    for (int64_t b = 0; b < cs->B; b++)
        for (int64_t h = 0; h < cs->Hq; h++)
            for (int64_t i = 0; i < cs->Sq; i++) {
                int64_t hk = h * cs->Hk / cs->Hq;
                int64_t lq = cs->len_q ? (int64_t)cs->len_q[b] : cs->Sq;
                int64_t lkv = cs->len_kv ? (int64_t)cs->len_kv[b] : cs->Skv;
                int64_t shift = cs->bottom_right ? lkv - lq : 0;
                double m = NEG_INF;
                for (int64_t j = 0; j < cs->Skv; j++) {
                    double dot = 0;
                    for (int64_t d = 0; d < cs->D; d++)
                        dot += q[((b * cs->Hq + h) * cs->Sq + i) * cs->D + d] *
                               k[((b * cs->Hk + hk) * cs->Skv + j) * cs->D + d];
                    s[j] = scale * dot;
                    if (cs->bias_rank) {
                        int64_t full[4] = {b, h, i, j}, off = 0;
                        for (int d = 0; d < cs->bias_rank; d++) {
                            int64_t dim = cs->bias_dims[d];
                            off = off * dim + (dim == 1 ? 0 : full[4 - cs->bias_rank + d]);
                        }
                        s[j] += in->t[3].data[off];
                    }
                    if (i >= lq || j >= lkv)
                        s[j] = NEG_INF;
                    if (cs->causal && j > i + shift)
                        s[j] = NEG_INF;
                    if (cs->window && cs->left >= 0 && (i + shift) - j > cs->left)
                        s[j] = NEG_INF;
                    if (cs->window && cs->right >= 0 && j - (i + shift) > cs->right)
                        s[j] = NEG_INF;
                    m = fmax(m, s[j]);
                }
                int64_t row = (b * cs->Hq + h) * cs->Sq + i;
                for (int64_t d = 0; d < cs->Dv; d++)
                    o[row * cs->Dv + d] = 0;
                if (m == NEG_INF) {
                    stats[row] = NEG_INF;
                    continue;
                }
                double sum = 0;
                for (int64_t j = 0; j < cs->Skv; j++)
                    sum += exp(s[j] - m);
                stats[row] = m + log(sum);
                for (int64_t j = 0; j < cs->Skv; j++) {
                    double p = exp(s[j] - m) / sum;
                    if (cs->dropout > 0) {
                        bool keep = optest_sdpa_keep((uint64_t)cs->seed, row, cs->Skv, j, cs->dropout);
                        p = keep ? p / (1 - cs->dropout) : 0;
                    }
                    for (int64_t d = 0; d < cs->Dv; d++)
                        o[row * cs->Dv + d] += p * v[((b * cs->Hk + hk) * cs->Skv + j) * cs->Dv + d];
                }
            }
    free(s);
}

/* Compare sdpa with naive_sdpa; returns the number of nonzero outputs seen. */
static int64_t check_case(const sdpa_case *cs)
{
    arena *a = arena_create();
    xnode n;
    node_make(a, &n, &op_sdpa_desc, cs);
    sdpa_inputs in;
    inputs_make(cs, &in, 100);
    int64_t odims[4] = {cs->B, cs->Hq, cs->Sq, cs->Dv}, sdims[4] = {cs->B, cs->Hq, cs->Sq, 1};
    ref_tensor o = optest_ref_alloc(4, odims), stats = optest_ref_alloc(4, sdims);
    ref_tensor eo = optest_ref_alloc(4, odims), es = optest_ref_alloc(4, sdims);
    CHECK(run_fwd(&n, &in, &o, &stats) == XDNN_OK, "%s: reference failed", cs->name);
    naive_sdpa(cs, &in, eo.data, es.data);
    int64_t nonzero = 0;
    double worst = 0;
    for (int64_t i = 0; i < o.numel; i++) {
        worst = fmax(worst, fabs(o.data[i] - eo.data[i]));
        nonzero += o.data[i] != 0;
        if (!(fabs(o.data[i] - eo.data[i]) <= 1e-12)) {
            CHECK(false, "%s: o[%lld] = %.17g, expected %.17g", cs->name, (long long)i, o.data[i], eo.data[i]);
            break;
        }
    }
    for (int64_t i = 0; i < stats.numel; i++) {
        bool same = es.data[i] == NEG_INF ? stats.data[i] == NEG_INF : fabs(stats.data[i] - es.data[i]) <= 1e-12;
        if (!same) {
            CHECK(false, "%s: stats[%lld] = %.17g, expected %.17g", cs->name, (long long)i, stats.data[i],
                  es.data[i]);
            break;
        }
    }
    CHECK(nonzero > 0, "%s: the output is all zero (the comparison proves nothing)", cs->name);
    optest_ref_free(&o);
    optest_ref_free(&stats);
    optest_ref_free(&eo);
    optest_ref_free(&es);
    inputs_free(&in);
    arena_destroy(a);
    return nonzero;
}

/* q = [1], k = [0, ln 3], v = [2, 6], scale 1: p = [1/4, 3/4], o = 5, stats = ln 4.
 * With causal and two query rows, row 0 sees key 0 only: o = 2, stats = q0·k0. */
static void test_hand_computed(void)
{
    arena *a = arena_create();
    xnode n;
    sdpa_case cs = {.name = "hand", .B = 1, .Hq = 1, .Hk = 1, .Sq = 1, .Skv = 2, .D = 1, .Dv = 1,
                    .has_scale = true, .scale = 1};
    node_make(a, &n, &op_sdpa_desc, &cs);
    sdpa_inputs in = {0};
    in.t[0] = optest_ref_alloc(4, (int64_t[]){1, 1, 1, 1});
    in.t[1] = optest_ref_alloc(4, (int64_t[]){1, 1, 2, 1});
    in.t[2] = optest_ref_alloc(4, (int64_t[]){1, 1, 2, 1});
    in.t[0].data[0] = 1;
    in.t[1].data[0] = 0, in.t[1].data[1] = log(3.0);
    in.t[2].data[0] = 2, in.t[2].data[1] = 6;
    ref_tensor o = optest_ref_alloc(4, (int64_t[]){1, 1, 1, 1}), st = optest_ref_alloc(4, (int64_t[]){1, 1, 1, 1});
    CHECK(run_fwd(&n, &in, &o, &st) == XDNN_OK, "hand: reference failed");
    CHECK(fabs(o.data[0] - 5.0) < 1e-14, "hand: o = %.17g, expected 5", o.data[0]);
    CHECK(fabs(st.data[0] - log(4.0)) < 1e-14, "hand: stats = %.17g, expected ln 4", st.data[0]);
    /* 1 target: no stats written, same o */
    o.data[0] = NAN;
    CHECK(run_fwd(&n, &in, &o, NULL) == XDNN_OK && fabs(o.data[0] - 5.0) < 1e-14, "hand: o without stats = %g",
          o.data[0]);
    inputs_free(&in);
    optest_ref_free(&o);
    optest_ref_free(&st);

    /* causal, 2 rows, q = [2, 1], k = [0.5, 1], v = [2, 6], scale 1 */
    optest_set_bool(&n, &op_sdpa_desc, "causal", true);
    in.t[0] = optest_ref_alloc(4, (int64_t[]){1, 1, 2, 1});
    in.t[1] = optest_ref_alloc(4, (int64_t[]){1, 1, 2, 1});
    in.t[2] = optest_ref_alloc(4, (int64_t[]){1, 1, 2, 1});
    in.t[0].data[0] = 2, in.t[0].data[1] = 1;
    in.t[1].data[0] = 0.5, in.t[1].data[1] = 1;
    in.t[2].data[0] = 2, in.t[2].data[1] = 6;
    o = optest_ref_alloc(4, (int64_t[]){1, 1, 2, 1});
    st = optest_ref_alloc(4, (int64_t[]){1, 1, 2, 1});
    CHECK(run_fwd(&n, &in, &o, &st) == XDNN_OK, "hand causal: reference failed");
    /* row 1: s = [0.5, 1]; p1 = e^1 / (e^0.5 + e^1) */
    double p1 = exp(1.0) / (exp(0.5) + exp(1.0));
    CHECK(fabs(o.data[0] - 2.0) < 1e-14 && fabs(st.data[0] - 1.0) < 1e-14, "hand causal row 0: o=%g stats=%g",
          o.data[0], st.data[0]);
    CHECK(fabs(o.data[1] - (2 * (1 - p1) + 6 * p1)) < 1e-14, "hand causal row 1: o=%.17g", o.data[1]);
    CHECK(fabs(st.data[1] - log(exp(0.5) + exp(1.0))) < 1e-14, "hand causal row 1: stats=%.17g", st.data[1]);
    inputs_free(&in);
    optest_ref_free(&o);
    optest_ref_free(&st);
    arena_destroy(a);
}

static const double lens_q[2] = {3, 5}, lens_kv[2] = {4, 6}, lens_kv_zero[2] = {0, 6};

static void test_against_naive(void)
{
    const sdpa_case cases[] = {
        {.name = "plain", .B = 2, .Hq = 2, .Hk = 2, .Sq = 5, .Skv = 7, .D = 4, .Dv = 4},
        {.name = "scale+Dv", .B = 1, .Hq = 2, .Hk = 2, .Sq = 4, .Skv = 3, .D = 5, .Dv = 3, .has_scale = true,
         .scale = 0.7},
        {.name = "causal", .B = 2, .Hq = 2, .Hk = 2, .Sq = 6, .Skv = 6, .D = 4, .Dv = 4, .causal = true},
        {.name = "causal Sq<Skv top_left", .B = 1, .Hq = 2, .Hk = 2, .Sq = 3, .Skv = 7, .D = 4, .Dv = 2,
         .causal = true},
        {.name = "causal Sq<Skv bottom_right", .B = 1, .Hq = 2, .Hk = 2, .Sq = 3, .Skv = 7, .D = 4, .Dv = 2,
         .causal = true, .bottom_right = true},
        {.name = "window [1,0]", .B = 1, .Hq = 2, .Hk = 2, .Sq = 6, .Skv = 6, .D = 3, .Dv = 3, .window = true,
         .left = 1, .right = 0},
        {.name = "window [2,1]", .B = 1, .Hq = 1, .Hk = 1, .Sq = 7, .Skv = 7, .D = 3, .Dv = 3, .window = true,
         .left = 2, .right = 1},
        {.name = "window [-1,2] bottom_right", .B = 1, .Hq = 1, .Hk = 1, .Sq = 4, .Skv = 8, .D = 3, .Dv = 3,
         .window = true, .left = -1, .right = 2, .bottom_right = true},
        {.name = "window [3,-1] + causal", .B = 1, .Hq = 1, .Hk = 1, .Sq = 8, .Skv = 8, .D = 3, .Dv = 3,
         .window = true, .left = 3, .right = -1, .causal = true},
        {.name = "GQA 4/2", .B = 2, .Hq = 4, .Hk = 2, .Sq = 5, .Skv = 6, .D = 4, .Dv = 3},
        {.name = "MQA 3/1 causal", .B = 1, .Hq = 3, .Hk = 1, .Sq = 5, .Skv = 5, .D = 4, .Dv = 4, .causal = true},
        {.name = "seq lens", .B = 2, .Hq = 2, .Hk = 1, .Sq = 5, .Skv = 6, .D = 4, .Dv = 4, .len_q = lens_q,
         .len_kv = lens_kv},
        {.name = "seq lens bottom_right causal", .B = 2, .Hq = 2, .Hk = 2, .Sq = 5, .Skv = 6, .D = 4, .Dv = 4,
         .len_q = lens_q, .len_kv = lens_kv, .causal = true, .bottom_right = true},
        {.name = "seq_len_kv 0 (batch 0 fully masked)", .B = 2, .Hq = 1, .Hk = 1, .Sq = 3, .Skv = 6, .D = 4,
         .Dv = 4, .len_kv = lens_kv_zero},
        {.name = "bias full", .B = 2, .Hq = 2, .Hk = 2, .Sq = 4, .Skv = 5, .D = 4, .Dv = 4, .bias_rank = 4,
         .bias_dims = {2, 2, 4, 5}},
        {.name = "bias [Sq, Skv]", .B = 2, .Hq = 2, .Hk = 2, .Sq = 4, .Skv = 5, .D = 4, .Dv = 4, .bias_rank = 2,
         .bias_dims = {4, 5}},
        {.name = "bias [B,1,1,Skv] + causal", .B = 2, .Hq = 2, .Hk = 1, .Sq = 5, .Skv = 5, .D = 4, .Dv = 4,
         .bias_rank = 4, .bias_dims = {2, 1, 1, 5}, .causal = true},
        {.name = "dropout 0.3", .B = 2, .Hq = 2, .Hk = 1, .Sq = 6, .Skv = 7, .D = 4, .Dv = 4, .dropout = 0.3,
         .seed = 7},
        {.name = "dropout + causal + bias", .B = 1, .Hq = 2, .Hk = 2, .Sq = 5, .Skv = 5, .D = 4, .Dv = 4,
         .dropout = 0.5, .seed = 11, .causal = true, .bias_rank = 1, .bias_dims = {5}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(&cases[i]);
}

/* Specific facts the naive comparison would also pass if both were wrong the
 * same way: which rows are zero, -inf stats, and that the mask really masks. */
static void test_mask_facts(void)
{
    arena *a = arena_create();
    /* seq lens: rows i >= len_q are 0 with stats -inf; keys j >= len_kv do not matter. */
    sdpa_case cs = {.name = "facts", .B = 2, .Hq = 1, .Hk = 1, .Sq = 5, .Skv = 6, .D = 3, .Dv = 2,
                    .len_q = lens_q, .len_kv = lens_kv};
    xnode n;
    node_make(a, &n, &op_sdpa_desc, &cs);
    sdpa_inputs in;
    inputs_make(&cs, &in, 5);
    ref_tensor o = optest_ref_alloc(4, (int64_t[]){2, 1, 5, 2}), st = optest_ref_alloc(4, (int64_t[]){2, 1, 5, 1});
    ref_tensor o2 = optest_ref_alloc(4, (int64_t[]){2, 1, 5, 2});
    run_fwd(&n, &in, &o, &st);
    for (int64_t b = 0; b < 2; b++)
        for (int64_t i = 0; i < 5; i++) {
            bool padded = i >= (int64_t)lens_q[b];
            int64_t row = b * 5 + i;
            if (padded)
                CHECK(o.data[2 * row] == 0 && o.data[2 * row + 1] == 0 && st.data[row] == NEG_INF,
                      "padded row b=%lld i=%lld: o=[%g,%g] stats=%g", (long long)b, (long long)i, o.data[2 * row],
                      o.data[2 * row + 1], st.data[row]);
            else
                CHECK(isfinite(st.data[row]) && o.data[2 * row] != 0, "valid row b=%lld i=%lld: stats=%g",
                      (long long)b, (long long)i, st.data[row]);
        }
    /* changing padded keys (j >= len_kv) changes nothing */
    for (int64_t b = 0; b < 2; b++)
        for (int64_t j = (int64_t)lens_kv[b]; j < 6; j++)
            for (int64_t d = 0; d < 3; d++)
                in.t[1].data[(b * 6 + j) * 3 + d] += 100;
    run_fwd(&n, &in, &o2, NULL);
    CHECK(memcmp(o.data, o2.data, (size_t)o.numel * sizeof(double)) == 0, "padded keys changed the output");
    optest_ref_free(&o);
    optest_ref_free(&o2);
    optest_ref_free(&st);
    inputs_free(&in);

    /* causal top-left: row 0 equals v[0] exactly (one visible key) */
    sdpa_case cc = {.name = "causal row0", .B = 1, .Hq = 1, .Hk = 1, .Sq = 3, .Skv = 3, .D = 2, .Dv = 2,
                    .causal = true};
    node_make(a, &n, &op_sdpa_desc, &cc);
    inputs_make(&cc, &in, 9);
    o = optest_ref_alloc(4, (int64_t[]){1, 1, 3, 2});
    run_fwd(&n, &in, &o, NULL);
    CHECK(o.data[0] == in.t[2].data[0] && o.data[1] == in.t[2].data[1], "causal row 0 = v[0]: got [%g, %g]",
          o.data[0], o.data[1]);
    /* bottom-right with Sq > Skv: the first Sq - Skv rows see no key */
    optest_ref_free(&o);
    inputs_free(&in);
    sdpa_case br = {.name = "bottom_right Sq>Skv", .B = 1, .Hq = 1, .Hk = 1, .Sq = 4, .Skv = 2, .D = 2, .Dv = 2,
                    .causal = true, .bottom_right = true};
    node_make(a, &n, &op_sdpa_desc, &br);
    inputs_make(&br, &in, 13);
    o = optest_ref_alloc(4, (int64_t[]){1, 1, 4, 2});
    st = optest_ref_alloc(4, (int64_t[]){1, 1, 4, 1});
    run_fwd(&n, &in, &o, &st);
    CHECK(st.data[0] == NEG_INF && st.data[1] == NEG_INF && isfinite(st.data[2]) && isfinite(st.data[3]),
          "bottom_right Sq>Skv stats = [%g, %g, %g, %g]", st.data[0], st.data[1], st.data[2], st.data[3]);
    CHECK(o.data[4] == in.t[2].data[0] && o.data[5] == in.t[2].data[1], "bottom_right row 2 = v[0]");
    optest_ref_free(&o);
    optest_ref_free(&st);
    inputs_free(&in);
    arena_destroy(a);
}

static void test_dropout(void)
{
    arena *a = arena_create();
    sdpa_case cs = {.name = "dropout", .B = 2, .Hq = 2, .Hk = 2, .Sq = 16, .Skv = 16, .D = 4, .Dv = 4,
                    .dropout = 0.25, .seed = 42};
    xnode n;
    node_make(a, &n, &op_sdpa_desc, &cs);
    sdpa_inputs in;
    inputs_make(&cs, &in, 21);
    int64_t od[4] = {2, 2, 16, 4}, sd[4] = {2, 2, 16, 1};
    ref_tensor o1 = optest_ref_alloc(4, od), o2 = optest_ref_alloc(4, od), o3 = optest_ref_alloc(4, od);
    ref_tensor s1 = optest_ref_alloc(4, sd), s0 = optest_ref_alloc(4, sd), o0 = optest_ref_alloc(4, od);
    run_fwd(&n, &in, &o1, &s1);
    run_fwd(&n, &in, &o2, NULL);
    CHECK(memcmp(o1.data, o2.data, (size_t)o1.numel * sizeof(double)) == 0, "dropout is not reproducible");
    optest_set_int(&n, &op_sdpa_desc, "seed", 43);
    run_fwd(&n, &in, &o3, NULL);
    CHECK(memcmp(o1.data, o3.data, (size_t)o1.numel * sizeof(double)) != 0, "seed 43 gives the seed-42 mask");
    optest_set_float(&n, &op_sdpa_desc, "dropout", 0.0);
    run_fwd(&n, &in, &o0, &s0);
    CHECK(memcmp(s1.data, s0.data, (size_t)s1.numel * sizeof(double)) == 0, "stats depend on dropout");
    CHECK(memcmp(o1.data, o0.data, (size_t)o1.numel * sizeof(double)) != 0, "dropout changed nothing");
    /* the documented keep rule drops about p of 2*2*16*16 = 1024 weights */
    int64_t dropped = 0;
    for (uint64_t idx = 0; idx < 1024; idx++)
        dropped += rng_uniform01(42, 0x73647061, idx) < 0.25;
    CHECK(dropped > 200 && dropped < 312, "dropped %lld of 1024 at p = 0.25", (long long)dropped);
    optest_ref_free(&o0);
    optest_ref_free(&o1);
    optest_ref_free(&o2);
    optest_ref_free(&o3);
    optest_ref_free(&s0);
    optest_ref_free(&s1);
    inputs_free(&in);
    arena_destroy(a);
}

/* ---- backward vs central finite differences of L = <do, sdpa(q, k, v)> */

static double loss_of(const xnode *n, const sdpa_inputs *in, const ref_tensor *dout, ref_tensor *o)
{
    run_fwd(n, in, o, NULL);
    double l = 0;
    for (int64_t i = 0; i < o->numel; i++)
        l += dout->data[i] * o->data[i];
    return l;
}

static void check_bwd(const sdpa_case *cs)
{
    arena *a = arena_create();
    xnode nf, nb;
    node_make(a, &nf, &op_sdpa_desc, cs);
    node_make(a, &nb, &op_sdpa_bwd_desc, cs);
    sdpa_inputs in;
    inputs_make(cs, &in, 300);
    int64_t od[4] = {cs->B, cs->Hq, cs->Sq, cs->Dv}, sd[4] = {cs->B, cs->Hq, cs->Sq, 1};
    ref_tensor o = optest_ref_alloc(4, od), st = optest_ref_alloc(4, sd), dout = optest_ref_alloc(4, od);
    ref_tensor tmp = optest_ref_alloc(4, od);
    optest_fill_lcg(&dout, 77, -1, 1);
    run_fwd(&nf, &in, &o, &st);
    ref_tensor grads[3];
    for (int g = 0; g < 3; g++)
        grads[g] = optest_ref_alloc(4, in.t[g].dims);
    xdnn_diags_t *diags = xdnn_diags_create();
    op_ref_ctx c = {.desc = &op_sdpa_bwd_desc, .node = &nb, .nin = 9, .nresults = 3, .diags = diags};
    c.in[0] = &in.t[0], c.in[1] = &in.t[1], c.in[2] = &in.t[2];
    c.in[3] = &o, c.in[4] = &dout, c.in[5] = &st;
    for (int i = 3; i < 6; i++)
        c.in[3 + i] = in.t[i].data ? &in.t[i] : NULL;
    for (int g = 0; g < 3; g++)
        c.out[g] = &grads[g];
    CHECK(op_sdpa_bwd_desc.reference(&c) == XDNN_OK, "%s: sdpa_bwd failed", cs->name);
    const char *names[3] = {"dq", "dk", "dv"};
    const double h = 1e-5;
    for (int g = 0; g < 3; g++) {
        double worst = 0, norm = 0;
        for (int64_t i = 0; i < in.t[g].numel; i++) {
            double save = in.t[g].data[i];
            in.t[g].data[i] = save + h;
            double lp = loss_of(&nf, &in, &dout, &tmp);
            in.t[g].data[i] = save - h;
            double lm = loss_of(&nf, &in, &dout, &tmp);
            in.t[g].data[i] = save;
            double fd = (lp - lm) / (2 * h);
            double err = fabs(fd - grads[g].data[i]);
            worst = fmax(worst, err);
            norm = fmax(norm, fabs(fd));
            if (!(err <= 1e-7 + 1e-6 * fabs(fd))) {
                CHECK(false, "%s: %s[%lld] = %.12g, finite difference %.12g", cs->name, names[g], (long long)i,
                      grads[g].data[i], fd);
                break;
            }
        }
        CHECK(norm > 1e-3, "%s: %s is all zero (the comparison proves nothing)", cs->name, names[g]);
    }
    for (int g = 0; g < 3; g++)
        optest_ref_free(&grads[g]);
    xdnn_diags_destroy(diags);
    optest_ref_free(&o);
    optest_ref_free(&st);
    optest_ref_free(&dout);
    optest_ref_free(&tmp);
    inputs_free(&in);
    arena_destroy(a);
}

static void test_backward(void)
{
    const sdpa_case cases[] = {
        {.name = "bwd plain", .B = 1, .Hq = 2, .Hk = 2, .Sq = 3, .Skv = 4, .D = 3, .Dv = 2},
        {.name = "bwd causal", .B = 2, .Hq = 1, .Hk = 1, .Sq = 4, .Skv = 4, .D = 3, .Dv = 3, .causal = true},
        {.name = "bwd GQA 4/2 causal", .B = 1, .Hq = 4, .Hk = 2, .Sq = 3, .Skv = 3, .D = 2, .Dv = 3, .causal = true},
        {.name = "bwd MQA 3/1", .B = 1, .Hq = 3, .Hk = 1, .Sq = 3, .Skv = 4, .D = 2, .Dv = 2},
        {.name = "bwd seq lens + bias + window", .B = 2, .Hq = 2, .Hk = 1, .Sq = 5, .Skv = 6, .D = 2, .Dv = 2,
         .len_q = lens_q, .len_kv = lens_kv, .bias_rank = 4, .bias_dims = {1, 2, 5, 6}, .window = true, .left = 2,
         .right = 1},
        {.name = "bwd dropout", .B = 1, .Hq = 2, .Hk = 1, .Sq = 4, .Skv = 5, .D = 3, .Dv = 2, .dropout = 0.3,
         .seed = 5, .has_scale = true, .scale = 0.8},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_bwd(&cases[i]);
}

/* ---- inference */

static void test_infer(void)
{
    arena *a = arena_create();
    xnode n;
    optest_node(a, &n, &op_sdpa_desc);
    tinfo q = optest_tinfo(XDNN_BF16, 4, (int64_t[]){2, 8, 16, 64});
    tinfo k = optest_tinfo(XDNN_BF16, 4, (int64_t[]){2, 2, 32, 64});
    tinfo v = optest_tinfo(XDNN_BF16, 4, (int64_t[]){2, 2, 32, 128});
    char msg[512];
    tinfo out[3];
    const tinfo *ins[6] = {&q, &k, &v};
    CHECK(optest_infer_msg(&op_sdpa_desc, &n, 3, ins, 2, out, msg, sizeof msg) == XDNN_OK, "valid GQA sdpa rejected: %s",
          msg);
    CHECK(out[0].rank == 4 && out[0].dims[0] == 2 && out[0].dims[1] == 8 && out[0].dims[2] == 16 &&
              out[0].dims[3] == 128 && out[0].dtype == XDNN_BF16,
          "o shape/dtype wrong");
    CHECK(out[1].rank == 4 && out[1].dims[1] == 8 && out[1].dims[2] == 16 && out[1].dims[3] == 1 &&
              out[1].dtype == XDNN_F32,
          "stats shape/dtype wrong");

    tinfo k_bad_d = optest_tinfo(XDNN_BF16, 4, (int64_t[]){2, 2, 32, 128});
    optest_expect_infer_error(&op_sdpa_desc, &n, 3, (const tinfo *[]){&q, &k_bad_d, &v}, 1,
                 "sdpa: q has head dim 64 but k has head dim 128");
    tinfo k3 = optest_tinfo(XDNN_BF16, 4, (int64_t[]){2, 3, 32, 64});
    tinfo v3 = optest_tinfo(XDNN_BF16, 4, (int64_t[]){2, 3, 32, 64});
    optest_expect_infer_error(&op_sdpa_desc, &n, 3, (const tinfo *[]){&q, &k3, &v3}, 1,
                 "sdpa: q has 8 heads, not a multiple of the 3 heads of k and v (GQA/MQA)");
    optest_expect_infer_error(&op_sdpa_desc, &n, 3, (const tinfo *[]){&q, &k, &v3}, 1,
                              "sdpa: k has 2 heads but v has 3 heads");
    tinfo q3 = optest_tinfo(XDNN_BF16, 3, (int64_t[]){2, 16, 64});
    optest_expect_infer_error(&op_sdpa_desc, &n, 3, (const tinfo *[]){&q3, &k, &v}, 1,
                 "sdpa: q must have rank 4 [B, H, S, D], got [2, 16, 64]");
    tinfo bias_bad = optest_tinfo(XDNN_F32, 2, (int64_t[]){16, 31});
    optest_expect_infer_error(&op_sdpa_desc, &n, 4, (const tinfo *[]){&q, &k, &v, &bias_bad}, 1,
                 "sdpa: bias [16, 31] does not broadcast to [B, Hq, Sq, Skv] = [2, 8, 16, 32]");
    tinfo bias_ok = optest_tinfo(XDNN_F32, 4, (int64_t[]){1, 8, 1, 32});
    CHECK(optest_infer_msg(&op_sdpa_desc, &n, 4, (const tinfo *[]){&q, &k, &v, &bias_ok}, 1, out, msg, sizeof msg) ==
              XDNN_OK,
          "bias [1, 8, 1, 32] rejected: %s", msg);
    tinfo len_bad = optest_tinfo(XDNN_I32, 1, (int64_t[]){3});
    optest_expect_infer_error(&op_sdpa_desc, &n, 5, (const tinfo *[]){&q, &k, &v, NULL, &len_bad}, 1,
                 "sdpa: seq_len_q must be [B] or [B, 1, 1, 1] with B=2, got [3]");
    tinfo len_ok = optest_tinfo(XDNN_I32, 4, (int64_t[]){2, 1, 1, 1});
    CHECK(optest_infer_msg(&op_sdpa_desc, &n, 6, (const tinfo *[]){&q, &k, &v, NULL, NULL, &len_ok}, 1, out, msg,
                           sizeof msg) == XDNN_OK,
          "seq_len_kv [2, 1, 1, 1] rejected: %s", msg);
    optest_set_float(&n, &op_sdpa_desc, "dropout", 1.0);
    optest_expect_infer_error(&op_sdpa_desc, &n, 3, ins, 1, "sdpa: attribute 'dropout' must be in [0, 1), got 1");
    optest_set_float(&n, &op_sdpa_desc, "dropout", 0.0);
    optest_set_ints(&n, &op_sdpa_desc, "window", 2, (int64_t[]){-2, 0});
    optest_expect_infer_error(&op_sdpa_desc, &n, 3, ins, 1,
                 "sdpa: attribute 'window' bounds must be >= -1 (-1 = unbounded), got [-2, 0]");
    optest_unset(&n, &op_sdpa_desc, "window");

    /* sdpa_bwd: o, do, stats shapes; results like q, k, v */
    xnode nb;
    optest_node(a, &nb, &op_sdpa_bwd_desc);
    tinfo o = optest_tinfo(XDNN_BF16, 4, (int64_t[]){2, 8, 16, 128});
    tinfo st = optest_tinfo(XDNN_F32, 4, (int64_t[]){2, 8, 16, 1});
    tinfo o_bad = optest_tinfo(XDNN_BF16, 4, (int64_t[]){2, 8, 16, 64});
    CHECK(optest_infer_msg(&op_sdpa_bwd_desc, &nb, 6, (const tinfo *[]){&q, &k, &v, &o, &o, &st}, 3, out, msg,
                           sizeof msg) == XDNN_OK &&
              out[0].dims[3] == 64 && out[1].dims[1] == 2 && out[2].dims[3] == 128 && out[1].dtype == XDNN_BF16,
          "sdpa_bwd infer: %s", msg);
    optest_expect_infer_error(&op_sdpa_bwd_desc, &nb, 6, (const tinfo *[]){&q, &k, &v, &o, &o_bad, &st}, 1,
                 "sdpa_bwd: do must be [2, 8, 16, 128], got [2, 8, 16, 64]");
    optest_expect_infer_error(&op_sdpa_bwd_desc, &nb, 6, (const tinfo *[]){&q, &k, &v, &o, &o, &o}, 1,
                 "sdpa_bwd: stats must be [2, 8, 16, 1], got [2, 8, 16, 128]");
    arena_destroy(a);
}

/* A sequence length outside [0, S] is a reported error, not a crash. */
static void test_bad_lengths(void)
{
    arena *a = arena_create();
    static const double too_long[2] = {3, 9};
    sdpa_case cs = {.name = "bad len", .B = 2, .Hq = 1, .Hk = 1, .Sq = 5, .Skv = 6, .D = 2, .Dv = 2,
                    .len_kv = too_long};
    xnode n;
    node_make(a, &n, &op_sdpa_desc, &cs);
    sdpa_inputs in;
    inputs_make(&cs, &in, 1);
    ref_tensor o = optest_ref_alloc(4, (int64_t[]){2, 1, 5, 2});
    xdnn_diags_t *diags = xdnn_diags_create();
    op_ref_ctx c = {.desc = &op_sdpa_desc, .node = &n, .nin = 6, .nresults = 1, .diags = diags};
    for (int i = 0; i < 6; i++)
        c.in[i] = in.t[i].data ? &in.t[i] : NULL;
    c.out[0] = &o;
    xdnn_status st = op_sdpa_desc.reference(&c);
    const char *msg = xdnn_diags_count(diags) ? xdnn_diags_get(diags, 0)->message : "";
    CHECK(st == XDNN_ERR_SEMANTIC && strcmp(msg, "sdpa: seq_len_kv[1] = 9 is not an integer in [0, 6]") == 0,
          "bad length: status %d \"%s\"", (int)st, msg);
    xdnn_diags_destroy(diags);
    optest_ref_free(&o);
    inputs_free(&in);
    arena_destroy(a);
}

int main(void)
{
    test_hand_computed();
    test_against_naive();
    test_mask_facts();
    test_dropout();
    test_backward();
    test_infer();
    test_bad_lengths();
    return test_summary("test_op_sdpa");
}
