/* test_op_sdpa_fp8.c — the fp8 form of sdpa (src/ops/sdpa_fp8.c) against
 * the test's own computation: dequantize, softmax written out, P rounded to
 * e4m3 by a rounding written here from the format's table (not dtype.c),
 * P·V, and the amax results; random fp8 data on odd shapes (S not a
 * multiple of 16, GQA, causal, padding, dropout); a hand-computed case with
 * P saturating at 448; the inference rules and messages. */
#include "op_test_util.h"
#include "test_util.h"

#include "data/data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const op_desc op_sdpa_desc;

static const double NEG_INF = -(double)INFINITY;

enum { NPORTS = 14, Q_SCALE = 9, K_SCALE = 10, V_SCALE = 11, S_SCALE = 12, O_SCALE = 13 };

/* ---- e4m3 written out: code c in 0..126 is the c-th non-negative finite
 * value (codes grow with the value; 127 is the NaN).  Nearest, ties to the
 * even code (even mantissa), saturating at 448. */
static double e4m3_value(int c)
{
    int e = c >> 3, m = c & 7;
    return e == 0 ? m * ldexp(1.0, -9) : (1 + m / 8.0) * ldexp(1.0, e - 7);
}

static double e4m3_round(double x)
{
    double a = fabs(x);
    int best = 0;
    for (int c = 1; c <= 126; c++) {
        double d = fabs(e4m3_value(c) - a), db = fabs(e4m3_value(best) - a);
        if (d < db || (d == db && c % 2 == 0))
            best = c;
    }
    return copysign(e4m3_value(best), x);
}

typedef struct fp8_case {
    const char *name;
    int64_t B, Hq, Hk, Sq, Skv, D, Dv;
    bool causal, bottom_right;
    const double *len_kv;  /* NULL = full */
    double dropout;
    double sq, sk, sv, ss, so; /* the scales; so 0 = no o_scale */
    xdnn_dtype kv_dtype;       /* fp8_e4m3 or fp8_e5m2 for k and v */
    bool o_saturates;          /* some |O| / o_scale > 448: the case checks that it happens */
} fp8_case;

typedef struct fp8_inputs {
    ref_tensor t[NPORTS];
} fp8_inputs;

static ref_tensor scalar_of(double v)
{
    ref_tensor t = optest_ref_alloc(0, NULL);
    t.data[0] = v;
    return t;
}

/* Random fp8 values: uniform draws rounded to the format (what a tensor of
 * that dtype holds), with a spread that reaches the format's large values. */
static void fill_fp8(ref_tensor *t, uint64_t seed, xdnn_dtype dt)
{
    optest_fill_lcg(t, seed, -300, 300);
    for (int64_t i = 0; i < t->numel; i++)
        t->data[i] = dtype_round(dt, t->data[i]);
}

static void inputs_make(const fp8_case *cs, fp8_inputs *in, uint64_t seed)
{
    memset(in, 0, sizeof *in);
    in->t[0] = optest_ref_alloc(4, (int64_t[]){cs->B, cs->Hq, cs->Sq, cs->D});
    in->t[1] = optest_ref_alloc(4, (int64_t[]){cs->B, cs->Hk, cs->Skv, cs->D});
    in->t[2] = optest_ref_alloc(4, (int64_t[]){cs->B, cs->Hk, cs->Skv, cs->Dv});
    fill_fp8(&in->t[0], seed + 1, XDNN_FP8_E4M3);
    fill_fp8(&in->t[1], seed + 2, cs->kv_dtype);
    fill_fp8(&in->t[2], seed + 3, cs->kv_dtype);
    if (cs->len_kv) {
        in->t[5] = optest_ref_alloc(1, &cs->B);
        memcpy(in->t[5].data, cs->len_kv, (size_t)cs->B * sizeof(double));
    }
    /* scales as an f32 tensor holds them */
    in->t[Q_SCALE] = scalar_of((float)cs->sq);
    in->t[K_SCALE] = scalar_of((float)cs->sk);
    in->t[V_SCALE] = scalar_of((float)cs->sv);
    in->t[S_SCALE] = scalar_of((float)cs->ss);
    if (cs->so > 0)
        in->t[O_SCALE] = scalar_of((float)cs->so);
}

static void inputs_free(fp8_inputs *in)
{
    for (int i = 0; i < NPORTS; i++)
        optest_ref_free(&in->t[i]);
}

static void node_make(arena *a, xnode *n, const fp8_case *cs)
{
    optest_node(a, n, &op_sdpa_desc);
    optest_set_bool(n, &op_sdpa_desc, "causal", cs->causal);
    if (cs->bottom_right)
        optest_set_str(n, &op_sdpa_desc, "align", "bottom_right");
    optest_set_float(n, &op_sdpa_desc, "dropout", cs->dropout);
    optest_set_int(n, &op_sdpa_desc, "seed", 9);
}

/* The reference with every result: o, stats, amax_s, amax_o. */
static xdnn_status run_ref(const xnode *n, const fp8_inputs *in, ref_tensor *out, int nout, char *msg, size_t cap)
{
    xdnn_diags_t *diags = xdnn_diags_create();
    op_ref_ctx c = {.desc = &op_sdpa_desc, .node = n, .nin = NPORTS, .nresults = nout, .diags = diags};
    for (int i = 0; i < NPORTS; i++)
        c.in[i] = in->t[i].data ? &in->t[i] : NULL;
    for (int r = 0; r < nout; r++)
        c.out[r] = &out[r];
    xdnn_status st = op_sdpa_desc.reference(&c);
    snprintf(msg, cap, "%s", optest_first_error(diags));
    xdnn_diags_destroy(diags);
    return st;
}

/* The test's fp8 attention: O (before o_scale), stats, and the two amax. */
static void naive_fp8(const fp8_case *cs, const fp8_inputs *in, double *O, double *stats, double *amax_s,
                      double *amax_o)
{
    const double sq = in->t[Q_SCALE].data[0], sk = in->t[K_SCALE].data[0], sv = in->t[V_SCALE].data[0];
    const double ss = in->t[S_SCALE].data[0], scale = 1.0 / sqrt((double)cs->D);
    double *s = malloc((size_t)cs->Skv * sizeof *s);
    *amax_s = *amax_o = 0;
    for (int64_t b = 0; b < cs->B; b++)
        for (int64_t h = 0; h < cs->Hq; h++)
            for (int64_t i = 0; i < cs->Sq; i++) {
                int64_t hk = h / (cs->Hq / cs->Hk), row = (b * cs->Hq + h) * cs->Sq + i;
                int64_t lkv = cs->len_kv ? (int64_t)cs->len_kv[b] : cs->Skv;
                int64_t diag = cs->bottom_right ? i + lkv - cs->Sq : i;
                double m = NEG_INF, sum = 0;
                for (int64_t j = 0; j < cs->Skv; j++) {
                    double dot = 0;
                    for (int64_t d = 0; d < cs->D; d++)
                        dot += (in->t[0].data[row * cs->D + d] * sq) *
                               (in->t[1].data[((b * cs->Hk + hk) * cs->Skv + j) * cs->D + d] * sk);
                    bool visible = j < lkv && !(cs->causal && j > diag);
                    s[j] = visible ? scale * dot : NEG_INF;
                    m = fmax(m, s[j]);
                }
                for (int64_t d = 0; d < cs->Dv; d++)
                    O[row * cs->Dv + d] = 0;
                if (m == NEG_INF) {
                    stats[row] = NEG_INF;
                    continue;
                }
                for (int64_t j = 0; j < cs->Skv; j++)
                    sum += exp(s[j] - m);
                stats[row] = m + log(sum);
                for (int64_t j = 0; j < cs->Skv; j++) {
                    if (s[j] == NEG_INF)
                        continue;
                    double p = exp(s[j] - stats[row]);
                    if (cs->dropout > 0) {
                        p = optest_sdpa_keep(9, row, cs->Skv, j, cs->dropout) ? p / (1 - cs->dropout) : 0;
                    }
                    *amax_s = fmax(*amax_s, p);
                    double p8 = e4m3_round(p / ss) * ss;
                    for (int64_t d = 0; d < cs->Dv; d++)
                        O[row * cs->Dv + d] += p8 * (in->t[2].data[((b * cs->Hk + hk) * cs->Skv + j) * cs->Dv + d] * sv);
                }
                for (int64_t d = 0; d < cs->Dv; d++)
                    *amax_o = fmax(*amax_o, fabs(O[row * cs->Dv + d]));
            }
    free(s);
}

static void check_case(const fp8_case *cs)
{
    arena *a = arena_create();
    xnode n;
    node_make(a, &n, cs);
    fp8_inputs in;
    inputs_make(cs, &in, 500);
    int64_t od[4] = {cs->B, cs->Hq, cs->Sq, cs->Dv}, sd[4] = {cs->B, cs->Hq, cs->Sq, 1};
    ref_tensor out[4] = {optest_ref_alloc(4, od), optest_ref_alloc(4, sd), optest_ref_alloc(0, NULL),
                         optest_ref_alloc(0, NULL)};
    char msg[512];
    CHECK(run_ref(&n, &in, out, 4, msg, sizeof msg) == XDNN_OK, "%s: reference failed: %s", cs->name, msg);
    ref_tensor eo = optest_ref_alloc(4, od), es = optest_ref_alloc(4, sd);
    double amax_s, amax_o;
    naive_fp8(cs, &in, eo.data, es.data, &amax_s, &amax_o);
    const double so = cs->so > 0 ? in.t[O_SCALE].data[0] : 1;
    int64_t nonzero = 0, q_mismatch = 0, saturated = 0;
    for (int64_t i = 0; i < eo.numel; i++) {
        double want = eo.data[i] / so;
        nonzero += out[0].data[i] != 0;
        if (!(fabs(out[0].data[i] - want) <= 1e-12 * (1 + fabs(want)))) {
            CHECK(false, "%s: o[%lld] = %.17g, expected %.17g", cs->name, (long long)i, out[0].data[i], want);
            break;
        }
        /* what an fp8 o stores: one rounding of the unrounded value */
        if (cs->so > 0) {
            q_mismatch += dtype_round(XDNN_FP8_E4M3, out[0].data[i]) != e4m3_round(want);
            saturated += fabs(want) > 448;
        }
    }
    CHECK(q_mismatch == 0, "%s: %lld elements of o round to another e4m3 value", cs->name, (long long)q_mismatch);
    for (int64_t i = 0; i < es.numel; i++) {
        bool same = es.data[i] == NEG_INF ? out[1].data[i] == NEG_INF : fabs(out[1].data[i] - es.data[i]) <= 1e-9;
        if (!same) {
            CHECK(false, "%s: stats[%lld] = %.17g, expected %.17g", cs->name, (long long)i, out[1].data[i], es.data[i]);
            break;
        }
    }
    CHECK_NEAR(out[2].data[0], amax_s, 1e-15 * amax_s, "%s: amax_s", cs->name);
    CHECK_NEAR(out[3].data[0], amax_o, 1e-12 * amax_o, "%s: amax_o", cs->name);
    CHECK(nonzero > eo.numel / 2 && amax_s > 0, "%s: o mostly zero (the comparison proves little)", cs->name);
    if (cs->o_saturates)
        CHECK(saturated > 0, "%s: meant to saturate some of o, none did", cs->name);
    for (int r = 0; r < 4; r++)
        optest_ref_free(&out[r]);
    optest_ref_free(&eo);
    optest_ref_free(&es);
    inputs_free(&in);
    arena_destroy(a);
}

static const double lens_kv[3] = {37, 0, 20};

static void test_against_naive(void)
{
    /* q, k, v reach about +-300; q·k over D ~ 1e5 * sq * sk: scales keep the
     * logits of order 1 (as quant_scale = amax / 448 would). */
    const fp8_case cases[] = {
        {.name = "plain S=37", .B = 2, .Hq = 2, .Hk = 2, .Sq = 37, .Skv = 37, .D = 24, .Dv = 24, .sq = 3e-3,
         .sk = 2.5e-3, .sv = 1.0 / 256, .ss = 1.0 / 448, .kv_dtype = XDNN_FP8_E4M3},
        {.name = "GQA 6/2 causal Sq=19 Skv=45 o_scale", .B = 1, .Hq = 6, .Hk = 2, .Sq = 19, .Skv = 45, .D = 8,
         .Dv = 12, .causal = true, .sq = 7e-3, .sk = 6e-3, .sv = 3e-3, .ss = 1.0 / 448, .so = 0.004,
         .kv_dtype = XDNN_FP8_E4M3},
        {.name = "causal bottom_right, e5m2 k/v, o saturating", .B = 1, .Hq = 2, .Hk = 1, .Sq = 13, .Skv = 29,
         .D = 16, .Dv = 16, .causal = true, .bottom_right = true, .sq = 4e-3, .sk = 5e-3, .sv = 4e-3,
         .ss = 1.0 / 240, .so = 0.0005, .kv_dtype = XDNN_FP8_E5M2, .o_saturates = true},
        {.name = "seq_len_kv with an empty sequence", .B = 3, .Hq = 2, .Hk = 2, .Sq = 17, .Skv = 37, .D = 8,
         .Dv = 8, .len_kv = lens_kv, .sq = 6e-3, .sk = 6e-3, .sv = 2e-3, .ss = 1.0 / 448, .so = 0.003,
         .kv_dtype = XDNN_FP8_E4M3},
        {.name = "dropout 0.2 (P after dropout is quantized)", .B = 1, .Hq = 3, .Hk = 3, .Sq = 21, .Skv = 21,
         .D = 8, .Dv = 8, .dropout = 0.2, .sq = 6e-3, .sk = 6e-3, .sv = 2e-3, .ss = 1.0 / 300,
         .kv_dtype = XDNN_FP8_E4M3},
        {.name = "tiny s_scale: P above 0.0448 saturates at 448", .B = 1, .Hq = 2, .Hk = 2, .Sq = 9, .Skv = 33, .D = 8,
         .Dv = 8, .sq = 6e-3, .sk = 6e-3, .sv = 2e-3, .ss = 1e-4, .kv_dtype = XDNN_FP8_E4M3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(&cases[i]);
}

/* The test's e4m3 rounding is the format: spot values, ties to even,
 * saturation (so that agreeing with it means something). */
static void test_e4m3_table(void)
{
    CHECK(e4m3_round(448) == 448 && e4m3_round(1e9) == 448 && e4m3_round(-500) == -448, "saturation");
    CHECK(e4m3_round(17) == 16 && e4m3_round(19) == 20 && e4m3_round(18) == 18, "step 2 in [16, 32)");
    CHECK(e4m3_round(1.0625) == 1 && e4m3_round(1.1875) == 1.25, "ties to even mantissa at 1.0625, 1.1875");
    CHECK(e4m3_round(ldexp(1, -10)) == 0 && e4m3_round(ldexp(3, -10)) == ldexp(2, -9), "subnormal ties");
    for (int c = 0; c <= 126; c++)
        CHECK(dtype_round(XDNN_FP8_E4M3, e4m3_value(c)) == e4m3_value(c), "code %d is not an e4m3 value", c);
}

/* q = [1], k = [0, 1] with k_scale L = ln 3 (as f32), v = [2, 6], scale 1:
 * P = [1/(1+e^L), 1/(1+e^-L)] ~ [1/4, 3/4].
 *   s_scale 1/64:   P / s = [16, 48] exactly after rounding; O = (16*2 + 48*6) / 64 = 5.
 *   s_scale 1/1024: [256, 768 -> 448]: O = (256*2 + 448*6) / 1024 = 3.125 (P saturates).
 *   o_scale 1/128:  o = O * 128 = 640 stores as 448 (o saturates). */
static void test_hand_saturation(void)
{
    arena *a = arena_create();
    fp8_case cs = {.name = "hand", .B = 1, .Hq = 1, .Hk = 1, .Sq = 1, .Skv = 2, .D = 1, .Dv = 1};
    xnode n;
    node_make(a, &n, &cs);
    optest_set_float(&n, &op_sdpa_desc, "scale", 1.0);
    fp8_inputs in = {0};
    in.t[0] = optest_ref_alloc(4, (int64_t[]){1, 1, 1, 1});
    in.t[1] = optest_ref_alloc(4, (int64_t[]){1, 1, 2, 1});
    in.t[2] = optest_ref_alloc(4, (int64_t[]){1, 1, 2, 1});
    in.t[0].data[0] = 1;
    in.t[1].data[0] = 0, in.t[1].data[1] = 1;
    in.t[2].data[0] = 2, in.t[2].data[1] = 6;
    const double L = (float)log(3.0);
    in.t[Q_SCALE] = scalar_of(1), in.t[K_SCALE] = scalar_of(L), in.t[V_SCALE] = scalar_of(1);
    in.t[S_SCALE] = scalar_of(1.0 / 64);
    ref_tensor out[4] = {optest_ref_alloc(4, (int64_t[]){1, 1, 1, 1}), optest_ref_alloc(4, (int64_t[]){1, 1, 1, 1}),
                         optest_ref_alloc(0, NULL), optest_ref_alloc(0, NULL)};
    char msg[512];
    CHECK(run_ref(&n, &in, out, 4, msg, sizeof msg) == XDNN_OK, "hand: %s", msg);
    CHECK(out[0].data[0] == 5.0, "hand: o = %.17g, expected 5 exactly", out[0].data[0]);
    CHECK_NEAR(out[2].data[0], 1 / (1 + exp(-L)), 1e-15, "hand: amax_s is max P");
    CHECK(out[3].data[0] == 5.0, "hand: amax_o = %.17g", out[3].data[0]);
    CHECK_NEAR(out[1].data[0], log(1 + exp(L)), 1e-15, "hand: stats");

    in.t[S_SCALE].data[0] = 1.0 / 1024;
    CHECK(run_ref(&n, &in, out, 4, msg, sizeof msg) == XDNN_OK, "hand 1/1024: %s", msg);
    CHECK(out[0].data[0] == 3.125, "P saturating at 448: o = %.17g, expected 3.125", out[0].data[0]);
    CHECK_NEAR(out[2].data[0], 1 / (1 + exp(-L)), 1e-15, "amax_s is taken before P saturates");

    in.t[S_SCALE].data[0] = 1.0 / 64;
    in.t[O_SCALE] = scalar_of(1.0 / 128);
    CHECK(run_ref(&n, &in, out, 4, msg, sizeof msg) == XDNN_OK, "hand o_scale: %s", msg);
    CHECK(out[0].data[0] == 640 && dtype_round(XDNN_FP8_E4M3, out[0].data[0]) == 448,
          "o = O / o_scale = %.17g (stored %g), expected 640 stored as 448", out[0].data[0],
          dtype_round(XDNN_FP8_E4M3, out[0].data[0]));
    CHECK(out[3].data[0] == 5.0, "amax_o is taken before o is scaled: %.17g", out[3].data[0]);

    /* one target: o only, the same value */
    out[0].data[0] = NAN;
    CHECK(run_ref(&n, &in, out, 1, msg, sizeof msg) == XDNN_OK && out[0].data[0] == 640, "o alone: %g",
          out[0].data[0]);

    /* scales are positive and finite, checked when the values are known */
    in.t[S_SCALE].data[0] = 0;
    CHECK(run_ref(&n, &in, out, 4, msg, sizeof msg) == XDNN_ERR_SEMANTIC &&
              strcmp(msg, "sdpa: s_scale = 0 is not a positive finite scale") == 0,
          "s_scale 0: \"%s\"", msg);
    in.t[S_SCALE].data[0] = 1.0 / 64;
    in.t[K_SCALE].data[0] = NAN;
    CHECK(run_ref(&n, &in, out, 4, msg, sizeof msg) == XDNN_ERR_SEMANTIC &&
              strcmp(msg, "sdpa: k_scale = nan is not a positive finite scale") == 0,
          "k_scale NaN: \"%s\"", msg);
    for (int r = 0; r < 4; r++)
        optest_ref_free(&out[r]);
    inputs_free(&in);
    arena_destroy(a);
}

/* ---- inference: the dtype rule and the messages */

static void test_infer(void)
{
    arena *a = arena_create();
    xnode n;
    optest_node(a, &n, &op_sdpa_desc);
    tinfo q = optest_tinfo(XDNN_FP8_E4M3, 4, (int64_t[]){2, 8, 37, 64});
    tinfo k = optest_tinfo(XDNN_FP8_E4M3, 4, (int64_t[]){2, 2, 45, 64});
    tinfo v = optest_tinfo(XDNN_FP8_E5M2, 4, (int64_t[]){2, 2, 45, 32});
    tinfo s = optest_tinfo(XDNN_F32, 0, NULL), s1 = optest_tinfo(XDNN_F32, 4, (int64_t[]){1, 1, 1, 1});
    const tinfo *ins[NPORTS] = {&q, &k, &v, [Q_SCALE] = &s, [K_SCALE] = &s1, [V_SCALE] = &s, [S_SCALE] = &s};
    tinfo out[4];
    char msg[512];
    CHECK(optest_infer_msg(&op_sdpa_desc, &n, NPORTS, ins, 4, out, msg, sizeof msg) == XDNN_OK, "fp8 sdpa: %s", msg);
    CHECK(out[0].dtype == XDNN_BF16 && out[0].exact_dtype && out[0].rank == 4 && out[0].dims[2] == 37 &&
              out[0].dims[3] == 32,
          "o without o_scale: bf16 [2, 8, 37, 32]");
    CHECK(out[1].dtype == XDNN_F32 && out[1].dims[3] == 1, "stats f32");
    CHECK(out[2].dtype == XDNN_F32 && out[2].rank == 0 && out[3].dtype == XDNN_F32 && out[3].rank == 0,
          "amax_s, amax_o: f32 scalars");
    ins[O_SCALE] = &s;
    CHECK(optest_infer_msg(&op_sdpa_desc, &n, NPORTS, ins, 2, out, msg, sizeof msg) == XDNN_OK &&
              out[0].dtype == XDNN_FP8_E4M3 && out[0].exact_dtype,
          "o with o_scale: fp8_e4m3 (%s)", msg);

    tinfo s2 = optest_tinfo(XDNN_F32, 1, (int64_t[]){2}), sb = optest_tinfo(XDNN_BF16, 0, NULL);
    ins[K_SCALE] = &s2;
    optest_expect_infer_error(&op_sdpa_desc, &n, NPORTS, ins, 1,
                              "sdpa: k_scale must be one f32 element (a per-tensor scale), got f32[2]");
    ins[K_SCALE] = &s1;
    ins[O_SCALE] = &sb;
    optest_expect_infer_error(&op_sdpa_desc, &n, NPORTS, ins, 1,
                              "sdpa: o_scale must be one f32 element (a per-tensor scale), got bf16[]");
    ins[O_SCALE] = NULL;
    ins[S_SCALE] = NULL;
    optest_expect_infer_error(&op_sdpa_desc, &n, NPORTS, ins, 1,
                              "sdpa: q_scale (fp8 attention) needs s_scale too (q_scale, k_scale, v_scale and "
                              "s_scale are required)");
    ins[S_SCALE] = &s;
    tinfo qb = optest_tinfo(XDNN_BF16, 4, (int64_t[]){2, 8, 37, 64});
    ins[0] = &qb;
    optest_expect_infer_error(&op_sdpa_desc, &n, NPORTS, ins, 1,
                              "sdpa: q_scale (fp8 attention) needs q, k and v in fp8_e4m3 or fp8_e5m2, got bf16, "
                              "fp8_e4m3, fp8_e5m2");
    /* amax results alone also enter the fp8 form */
    optest_expect_infer_error(&op_sdpa_desc, &n, 3, (const tinfo *[]){&qb, &qb, &qb}, 4,
                              "sdpa: amax_s (fp8 attention) needs q, k and v in fp8_e4m3 or fp8_e5m2, got bf16, "
                              "bf16, bf16");
    /* fp8 q, k, v without scales: the plain form, as before (o in q's dtype) */
    CHECK(optest_infer_msg(&op_sdpa_desc, &n, 3, (const tinfo *[]){&q, &k, &k}, 2, out, msg, sizeof msg) == XDNN_OK &&
              out[0].dtype == XDNN_FP8_E4M3 && !out[0].exact_dtype,
          "unscaled fp8 sdpa: %s", msg);
    /* not with the serving forms */
    ins[0] = &q;
    tinfo pt = optest_tinfo(XDNN_I32, 2, (int64_t[]){2, 4}), lens = optest_tinfo(XDNN_I32, 1, (int64_t[]){2});
    ins[5] = &lens;
    ins[6] = &pt;
    optest_expect_infer_error(&op_sdpa_desc, &n, NPORTS, ins, 1,
                              "sdpa: the fp8 form (q_scale, k_scale, v_scale, s_scale, o_scale, amax_s, amax_o) is "
                              "not supported with page_table or seq_offsets");
    arena_destroy(a);
}

int main(void)
{
    test_e4m3_table();
    test_hand_saturation();
    test_against_naive();
    test_infer();
    return test_summary("test_op_sdpa_fp8");
}
