/* test_op_rnn.c — rnn, lstm, gru and their backwards against known answers:
 * one step equals the gate equations written out here; a bidirectional
 * layer's reverse half equals a forward run on reversed time; two stacked
 * layers equal two single-layer runs (weight packing); every _bwd equals
 * central finite differences of <dy, y> + <dh_n, h_n> (+ <dc_n, c_n>) on
 * T=3, N=2, I=3, H=2, L=2, bidirectional; inference shapes and exact errors. */
#include "op_test_util.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const op_desc op_rnn_desc, op_lstm_desc, op_gru_desc, op_rnn_bwd_desc, op_lstm_bwd_desc, op_gru_bwd_desc;

static double sigm(double v) { return 1 / (1 + exp(-v)); }

typedef enum kind { K_RNN, K_LSTM, K_GRU } kind;

typedef struct rnn_case {
    const char *name;
    kind k;
    bool relu;
    int64_t T, N, I, H, L, D;
    bool biases, dh_n;
} rnn_case;

/* The tensors of one case, by role; absent ones have data NULL. */
enum { X, H0, C0, WIH, WHH, BIH, BHH, NROLE };
typedef struct rnn_set {
    ref_tensor t[NROLE];
} rnn_set;

static const op_desc *fwd_desc(kind k) { return k == K_LSTM ? &op_lstm_desc : k == K_GRU ? &op_gru_desc : &op_rnn_desc; }
static const op_desc *bwd_desc(kind k)
{
    return k == K_LSTM ? &op_lstm_bwd_desc : k == K_GRU ? &op_gru_bwd_desc : &op_rnn_bwd_desc;
}
static int64_t gates(kind k) { return k == K_LSTM ? 4 : k == K_GRU ? 3 : 1; }
static int64_t in_cols(const rnn_case *cs)
{
    return cs->L > 1 && cs->D * cs->H > cs->I ? cs->D * cs->H : cs->I;
}

static void set_make(const rnn_case *cs, rnn_set *s, uint64_t seed)
{
    memset(s, 0, sizeof *s);
    int64_t LD = cs->L * cs->D, GH = gates(cs->k) * cs->H;
    s->t[X] = optest_ref_alloc(3, (int64_t[]){cs->T, cs->N, cs->I});
    s->t[H0] = optest_ref_alloc(3, (int64_t[]){LD, cs->N, cs->H});
    if (cs->k == K_LSTM)
        s->t[C0] = optest_ref_alloc(3, (int64_t[]){LD, cs->N, cs->H});
    s->t[WIH] = optest_ref_alloc(3, (int64_t[]){LD, GH, in_cols(cs)});
    s->t[WHH] = optest_ref_alloc(3, (int64_t[]){LD, GH, cs->H});
    if (cs->biases) {
        s->t[BIH] = optest_ref_alloc(2, (int64_t[]){LD, GH});
        s->t[BHH] = optest_ref_alloc(2, (int64_t[]){LD, GH});
    }
    for (int r = 0; r < NROLE; r++)
        if (s->t[r].data)
            optest_fill_lcg(&s->t[r], seed + (uint64_t)r, -0.9, 0.9);
}

static void set_free(rnn_set *s)
{
    for (int r = 0; r < NROLE; r++)
        optest_ref_free(&s->t[r]);
}

static const ref_tensor *role(const rnn_set *s, int r) { return s->t[r].data ? &s->t[r] : NULL; }

static void node_make(arena *a, xnode *n, const op_desc *d, const rnn_case *cs)
{
    optest_node(a, n, d);
    optest_set_int(n, d, "layers", cs->L);
    optest_set_bool(n, d, "bidirectional", cs->D == 2);
    if (cs->k == K_RNN)
        optest_set_str(n, d, "nonlinearity", cs->relu ? "relu" : "tanh");
}

/* Run the forward op; hn, cn may be NULL (fewer targets). */
static xdnn_status run_fwd(const rnn_case *cs, const xnode *n, const rnn_set *s, ref_tensor *y, ref_tensor *hn,
                           ref_tensor *cn)
{
    const op_desc *d = fwd_desc(cs->k);
    xdnn_diags_t *diags = xdnn_diags_create();
    op_ref_ctx c = {.desc = d, .node = n, .nin = d->nports, .diags = diags};
    int p = 0;
    c.in[p++] = role(s, X);
    c.in[p++] = role(s, H0);
    if (cs->k == K_LSTM)
        c.in[p++] = role(s, C0);
    c.in[p++] = role(s, WIH);
    c.in[p++] = role(s, WHH);
    c.in[p++] = role(s, BIH);
    c.in[p++] = role(s, BHH);
    c.out[0] = y;
    c.out[1] = hn;
    c.out[2] = cn;
    c.nresults = cn ? 3 : hn ? 2 : 1;
    xdnn_status st = d->reference(&c);
    if (st)
        xdnn_diags_print(diags, stderr);
    xdnn_diags_destroy(diags);
    return st;
}

/* ---- one step against the written-out gate equations */

static void test_one_step(kind k, bool relu)
{
    const char *names[] = {"rnn", "lstm", "gru"};
    rnn_case cs = {.name = names[k], .k = k, .relu = relu, .T = 1, .N = 2, .I = 3, .H = 2, .L = 1, .D = 1,
                   .biases = true};
    arena *a = arena_create();
    xnode n;
    node_make(a, &n, fwd_desc(k), &cs);
    rnn_set s;
    set_make(&cs, &s, 40 + (uint64_t)k);
    ref_tensor y = optest_ref_alloc(3, (int64_t[]){1, 2, 2}), hn = optest_ref_alloc(3, (int64_t[]){1, 2, 2});
    ref_tensor cn = optest_ref_alloc(3, (int64_t[]){1, 2, 2});
    CHECK(run_fwd(&cs, &n, &s, &y, &hn, k == K_LSTM ? &cn : NULL) == XDNN_OK, "%s: reference failed", cs.name);
    const double *x = s.t[X].data, *h0 = s.t[H0].data, *wi = s.t[WIH].data, *wh = s.t[WHH].data;
    const double *bi = s.t[BIH].data, *bh = s.t[BHH].data;
    for (int64_t b = 0; b < 2; b++)
        for (int64_t j = 0; j < 2; j++) {
            /* gate row r*H + j: W_i[r] x + b_i[r] and W_h[r] h + b_h[r] */
            double ai[4], ah[4];
            for (int64_t r = 0; r < gates(k); r++) {
                int64_t row = r * 2 + j;
                ai[r] = bi[row] + wi[row * 3 + 0] * x[b * 3 + 0] + wi[row * 3 + 1] * x[b * 3 + 1] +
                        wi[row * 3 + 2] * x[b * 3 + 2];
                ah[r] = bh[row] + wh[row * 2 + 0] * h0[b * 2 + 0] + wh[row * 2 + 1] * h0[b * 2 + 1];
            }
            double want, want_c = 0;
            if (k == K_RNN) {
                want = relu ? fmax(0, ai[0] + ah[0]) : tanh(ai[0] + ah[0]);
            } else if (k == K_LSTM) {
                double i = sigm(ai[0] + ah[0]), f = sigm(ai[1] + ah[1]), g = tanh(ai[2] + ah[2]),
                       o = sigm(ai[3] + ah[3]);
                want_c = f * s.t[C0].data[b * 2 + j] + i * g;
                want = o * tanh(want_c);
            } else {
                double r = sigm(ai[0] + ah[0]), z = sigm(ai[1] + ah[1]), nn = tanh(ai[2] + r * ah[2]);
                want = (1 - z) * nn + z * h0[b * 2 + j];
            }
            CHECK(fabs(y.data[b * 2 + j] - want) < 1e-14, "%s%s one step y[%lld][%lld] = %.17g, expected %.17g",
                  cs.name, relu ? " relu" : "", (long long)b, (long long)j, y.data[b * 2 + j], want);
            CHECK(hn.data[b * 2 + j] == y.data[b * 2 + j], "%s: h_n differs from y at the last step", cs.name);
            if (k == K_LSTM)
                CHECK(fabs(cn.data[b * 2 + j] - want_c) < 1e-14, "lstm one step c_n = %.17g, expected %.17g",
                      cn.data[b * 2 + j], want_c);
        }
    /* absent biases equal zero biases */
    rnn_set unbiased = s; /* shares the data; only the bias ports are absent */
    unbiased.t[BIH].data = unbiased.t[BHH].data = NULL;
    ref_tensor y2 = optest_ref_alloc(3, (int64_t[]){1, 2, 2});
    CHECK(run_fwd(&cs, &n, &unbiased, &y2, NULL, NULL) == XDNN_OK, "%s: 1 target failed", cs.name);
    memset(s.t[BIH].data, 0, (size_t)s.t[BIH].numel * sizeof(double));
    memset(s.t[BHH].data, 0, (size_t)s.t[BHH].numel * sizeof(double));
    CHECK(run_fwd(&cs, &n, &s, &y, NULL, NULL) == XDNN_OK, "%s: zero biases failed", cs.name);
    CHECK(memcmp(y.data, y2.data, 4 * sizeof(double)) == 0, "%s: absent biases differ from zero biases", cs.name);
    optest_ref_free(&y);
    optest_ref_free(&y2);
    optest_ref_free(&hn);
    optest_ref_free(&cn);
    set_free(&s);
    arena_destroy(a);
}

/* ---- structure: reverse direction and layer stacking */

/* A tensor holding rows [from, from+count) of dim 0 of t, and only the first
 * `cols` entries of its last dim. */
static ref_tensor slice_rows(const ref_tensor *t, int64_t from, int64_t count, int64_t cols)
{
    int64_t dims[3] = {count, t->dims[1], t->rank == 3 ? cols : 0};
    ref_tensor r = optest_ref_alloc(t->rank, dims);
    int64_t inner = t->rank == 3 ? t->dims[1] : 1, last = t->dims[t->rank - 1];
    int64_t keep = t->rank == 3 ? cols : last;
    for (int64_t i = 0; i < count; i++)
        for (int64_t m = 0; m < inner; m++)
            for (int64_t c = 0; c < keep; c++)
                r.data[(i * inner + m) * keep + c] = t->data[((from + i) * inner + m) * last + c];
    return r;
}

static void test_structure(kind k)
{
    arena *a = arena_create();
    const char *names[] = {"rnn", "lstm", "gru"};
    /* bidirectional, 1 layer: y[:, :, H:] equals a forward run of the
     * direction-1 weights over reversed x, reversed back. */
    rnn_case bi = {.name = names[k], .k = k, .T = 4, .N = 2, .I = 3, .H = 2, .L = 1, .D = 2, .biases = true};
    rnn_set s;
    set_make(&bi, &s, 90);
    xnode n;
    node_make(a, &n, fwd_desc(k), &bi);
    ref_tensor y = optest_ref_alloc(3, (int64_t[]){4, 2, 4}), hn = optest_ref_alloc(3, (int64_t[]){2, 2, 2});
    ref_tensor cn = optest_ref_alloc(3, (int64_t[]){2, 2, 2});
    CHECK(run_fwd(&bi, &n, &s, &y, &hn, k == K_LSTM ? &cn : NULL) == XDNN_OK, "bidir %s failed", bi.name);

    rnn_case uni = bi;
    uni.D = 1;
    rnn_set r = {0};
    r.t[X] = optest_ref_alloc(3, (int64_t[]){4, 2, 3});
    for (int64_t t = 0; t < 4; t++)
        memcpy(r.t[X].data + t * 6, s.t[X].data + (3 - t) * 6, 6 * sizeof(double));
    for (int role_i = H0; role_i < NROLE; role_i++)
        if (s.t[role_i].data)
            r.t[role_i] = slice_rows(&s.t[role_i], 1, 1, s.t[role_i].dims[2]);
    xnode nu;
    node_make(a, &nu, fwd_desc(k), &uni);
    ref_tensor yr = optest_ref_alloc(3, (int64_t[]){4, 2, 2}), hr = optest_ref_alloc(3, (int64_t[]){1, 2, 2});
    CHECK(run_fwd(&uni, &nu, &r, &yr, &hr, NULL) == XDNN_OK, "reversed %s failed", bi.name);
    double worst = 0;
    for (int64_t t = 0; t < 4; t++)
        for (int64_t b = 0; b < 2; b++)
            for (int64_t j = 0; j < 2; j++)
                worst = fmax(worst, fabs(y.data[(t * 2 + b) * 4 + 2 + j] - yr.data[((3 - t) * 2 + b) * 2 + j]));
    for (int64_t i = 0; i < 4; i++)
        worst = fmax(worst, fabs(hn.data[4 + i] - hr.data[i]));
    CHECK(worst < 1e-14, "%s: reverse direction differs from a run on reversed time by %g", bi.name, worst);
    set_free(&r);
    optest_ref_free(&yr);
    optest_ref_free(&hr);
    optest_ref_free(&y);
    optest_ref_free(&hn);
    optest_ref_free(&cn);
    set_free(&s);

    /* 2 layers (I = 3 > H = 2, so w_ih has 3 columns and layer 1 uses the
     * first 2) equal layer 0 then layer 1 run separately. */
    rnn_case two = {.name = names[k], .k = k, .T = 3, .N = 2, .I = 3, .H = 2, .L = 2, .D = 1, .biases = true};
    set_make(&two, &s, 120);
    node_make(a, &n, fwd_desc(k), &two);
    y = optest_ref_alloc(3, (int64_t[]){3, 2, 2});
    hn = optest_ref_alloc(3, (int64_t[]){2, 2, 2});
    CHECK(run_fwd(&two, &n, &s, &y, &hn, NULL) == XDNN_OK, "2-layer %s failed", two.name);
    rnn_case one = two;
    one.L = 1;
    node_make(a, &nu, fwd_desc(k), &one);
    rnn_set l0 = {0}, l1 = {0};
    l0.t[X] = slice_rows(&s.t[X], 0, 3, 3);
    for (int role_i = H0; role_i < NROLE; role_i++)
        if (s.t[role_i].data) {
            int64_t cols = s.t[role_i].rank == 3 ? s.t[role_i].dims[2] : 0;
            l0.t[role_i] = slice_rows(&s.t[role_i], 0, 1, cols);
            l1.t[role_i] = slice_rows(&s.t[role_i], 1, 1, role_i == WIH ? 2 : cols);
        }
    ref_tensor y0 = optest_ref_alloc(3, (int64_t[]){3, 2, 2}), y1 = optest_ref_alloc(3, (int64_t[]){3, 2, 2});
    CHECK(run_fwd(&one, &nu, &l0, &y0, NULL, NULL) == XDNN_OK, "layer 0 alone failed");
    l1.t[X] = y0;
    rnn_case one_h = one;
    one_h.I = 2;
    CHECK(run_fwd(&one_h, &nu, &l1, &y1, NULL, NULL) == XDNN_OK, "layer 1 alone failed");
    worst = 0;
    for (int64_t i = 0; i < y.numel; i++)
        worst = fmax(worst, fabs(y.data[i] - y1.data[i]));
    CHECK(worst < 1e-14, "%s: 2 stacked layers differ from two single-layer runs by %g", two.name, worst);
    l1.t[X].data = NULL; /* owned by y0 */
    set_free(&l0);
    set_free(&l1);
    optest_ref_free(&y0);
    optest_ref_free(&y1);
    optest_ref_free(&y);
    optest_ref_free(&hn);
    set_free(&s);
    arena_destroy(a);
}

/* ---- backward vs central finite differences */

typedef struct loss_grads {
    ref_tensor dy, dh_n, dc_n;
} loss_grads;

static double loss_of(const rnn_case *cs, const xnode *n, const rnn_set *s, const loss_grads *lg)
{
    int64_t LD = cs->L * cs->D;
    ref_tensor y = optest_ref_alloc(3, (int64_t[]){cs->T, cs->N, cs->D * cs->H});
    ref_tensor hn = optest_ref_alloc(3, (int64_t[]){LD, cs->N, cs->H}), cn = optest_ref_alloc(3, (int64_t[]){LD, cs->N, cs->H});
    run_fwd(cs, n, s, &y, &hn, cs->k == K_LSTM ? &cn : NULL);
    double l = 0;
    for (int64_t i = 0; i < y.numel; i++)
        l += lg->dy.data[i] * y.data[i];
    if (lg->dh_n.data)
        for (int64_t i = 0; i < hn.numel; i++)
            l += lg->dh_n.data[i] * hn.data[i];
    if (lg->dc_n.data)
        for (int64_t i = 0; i < cn.numel; i++)
            l += lg->dc_n.data[i] * cn.data[i];
    optest_ref_free(&y);
    optest_ref_free(&hn);
    optest_ref_free(&cn);
    return l;
}

static void check_bwd(const rnn_case *cs)
{
    arena *a = arena_create();
    const op_desc *bd = bwd_desc(cs->k);
    xnode nf, nb;
    node_make(a, &nf, fwd_desc(cs->k), cs);
    node_make(a, &nb, bd, cs);
    rnn_set s;
    set_make(cs, &s, 200 + (uint64_t)cs->k);
    int64_t LD = cs->L * cs->D;
    loss_grads lg = {0};
    lg.dy = optest_ref_alloc(3, (int64_t[]){cs->T, cs->N, cs->D * cs->H});
    optest_fill_lcg(&lg.dy, 7, -1, 1);
    if (cs->dh_n) {
        lg.dh_n = optest_ref_alloc(3, (int64_t[]){LD, cs->N, cs->H});
        optest_fill_lcg(&lg.dh_n, 8, -1, 1);
        if (cs->k == K_LSTM) {
            lg.dc_n = optest_ref_alloc(3, (int64_t[]){LD, cs->N, cs->H});
            optest_fill_lcg(&lg.dc_n, 9, -1, 1);
        }
    }
    /* results in order: dx, dh0, [dc0], dw_ih, dw_hh, db_ih, db_hh */
    int roles[7], nres = 0;
    roles[nres++] = X;
    roles[nres++] = H0;
    if (cs->k == K_LSTM)
        roles[nres++] = C0;
    roles[nres++] = WIH;
    roles[nres++] = WHH;
    roles[nres++] = BIH;
    roles[nres++] = BHH;
    int64_t GH = gates(cs->k) * cs->H;
    ref_tensor grads[7];
    for (int r = 0; r < nres; r++)
        grads[r] = roles[r] == BIH || roles[r] == BHH ? optest_ref_alloc(2, (int64_t[]){LD, GH})
                                                      : optest_ref_alloc(s.t[roles[r]].rank, s.t[roles[r]].dims);
    xdnn_diags_t *diags = xdnn_diags_create();
    op_ref_ctx c = {.desc = bd, .node = &nb, .nin = bd->nports, .nresults = nres, .diags = diags};
    int p = 0;
    c.in[p++] = role(&s, X);
    c.in[p++] = role(&s, H0);
    if (cs->k == K_LSTM)
        c.in[p++] = role(&s, C0);
    c.in[p++] = role(&s, WIH);
    c.in[p++] = role(&s, WHH);
    c.in[p++] = &lg.dy;
    c.in[p++] = role(&s, BIH);
    c.in[p++] = role(&s, BHH);
    c.in[p++] = lg.dh_n.data ? &lg.dh_n : NULL;
    if (cs->k == K_LSTM)
        c.in[p++] = lg.dc_n.data ? &lg.dc_n : NULL;
    for (int r = 0; r < nres; r++)
        c.out[r] = &grads[r];
    CHECK(bd->reference(&c) == XDNN_OK, "%s: backward failed", cs->name);
    const char *role_names[NROLE] = {"dx", "dh0", "dc0", "dw_ih", "dw_hh", "db_ih", "db_hh"};
    const double h = 1e-6;
    for (int r = 0; r < nres; r++) {
        ref_tensor *t = &s.t[roles[r]];
        if (!t->data) { /* absent bias: its gradient must still be there */
            double norm = 0;
            for (int64_t i = 0; i < grads[r].numel; i++)
                norm += fabs(grads[r].data[i]);
            CHECK(norm > 1e-3 && isfinite(norm), "%s: %s of an absent bias is %g", cs->name, role_names[roles[r]],
                  norm);
            continue;
        }
        double norm = 0;
        for (int64_t i = 0; i < t->numel; i++) {
            double save = t->data[i];
            t->data[i] = save + h;
            double lp = loss_of(cs, &nf, &s, &lg);
            t->data[i] = save - h;
            double lm = loss_of(cs, &nf, &s, &lg);
            t->data[i] = save;
            double fd = (lp - lm) / (2 * h);
            norm = fmax(norm, fabs(fd));
            if (!(fabs(fd - grads[r].data[i]) <= 1e-7 + 1e-6 * fabs(fd))) {
                CHECK(false, "%s: %s[%lld] = %.12g, finite difference %.12g", cs->name, role_names[roles[r]],
                      (long long)i, grads[r].data[i], fd);
                break;
            }
        }
        CHECK(norm > 1e-3, "%s: %s is all zero (the comparison proves nothing)", cs->name, role_names[roles[r]]);
    }
    for (int r = 0; r < nres; r++)
        optest_ref_free(&grads[r]);
    optest_ref_free(&lg.dy);
    optest_ref_free(&lg.dh_n);
    optest_ref_free(&lg.dc_n);
    xdnn_diags_destroy(diags);
    set_free(&s);
    arena_destroy(a);
}

static void test_backward(void)
{
    const rnn_case cases[] = {
        {.name = "rnn_bwd tanh L2 bidir", .k = K_RNN, .T = 3, .N = 2, .I = 3, .H = 2, .L = 2, .D = 2, .biases = true,
         .dh_n = true},
        {.name = "rnn_bwd relu L2 bidir", .k = K_RNN, .relu = true, .T = 3, .N = 2, .I = 3, .H = 2, .L = 2, .D = 2,
         .biases = true, .dh_n = true},
        {.name = "lstm_bwd L2 bidir", .k = K_LSTM, .T = 3, .N = 2, .I = 3, .H = 2, .L = 2, .D = 2, .biases = true,
         .dh_n = true},
        {.name = "gru_bwd L2 bidir", .k = K_GRU, .T = 3, .N = 2, .I = 3, .H = 2, .L = 2, .D = 2, .biases = true,
         .dh_n = true},
        {.name = "lstm_bwd no biases, no dh_n", .k = K_LSTM, .T = 3, .N = 2, .I = 3, .H = 2, .L = 1, .D = 1},
        {.name = "gru_bwd L2 uni, I > H", .k = K_GRU, .T = 3, .N = 2, .I = 3, .H = 2, .L = 2, .D = 1, .biases = true,
         .dh_n = true},
        {.name = "rnn_bwd L2 uni, I < H", .k = K_RNN, .T = 3, .N = 2, .I = 1, .H = 2, .L = 2, .D = 1, .biases = true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_bwd(&cases[i]);
}

/* ---- inference */

static bool dims_are(const tinfo *t, int rank, const int64_t *dims)
{
    if (t->rank != rank)
        return false;
    for (int i = 0; i < rank; i++)
        if (t->dims[i] != dims[i])
            return false;
    return true;
}

static void test_infer(void)
{
    arena *a = arena_create();
    char msg[512];
    tinfo out[8];
    /* lstm, 2 layers, bidirectional: T=5 N=4 I=3 H=6 -> Iw = max(3, 12) = 12 */
    rnn_case cs = {.k = K_LSTM, .L = 2, .D = 2};
    xnode n;
    node_make(a, &n, &op_lstm_desc, &cs);
    tinfo x = optest_tinfo(XDNN_F16, 3, (int64_t[]){5, 4, 3});
    tinfo h0 = optest_tinfo(XDNN_F32, 3, (int64_t[]){4, 4, 6});
    tinfo wih = optest_tinfo(XDNN_F16, 3, (int64_t[]){4, 24, 12});
    tinfo whh = optest_tinfo(XDNN_F16, 3, (int64_t[]){4, 24, 6});
    tinfo b = optest_tinfo(XDNN_F16, 2, (int64_t[]){4, 24});
    CHECK(optest_infer_msg(&op_lstm_desc, &n, 7, (const tinfo *[]){&x, &h0, &h0, &wih, &whh, &b, &b}, 3, out, msg,
                           sizeof msg) == XDNN_OK,
          "valid lstm rejected: %s", msg);
    CHECK(dims_are(&out[0], 3, (int64_t[]){5, 4, 12}) && out[0].dtype == XDNN_F16, "lstm y shape");
    CHECK(dims_are(&out[1], 3, (int64_t[]){4, 4, 6}) && dims_are(&out[2], 3, (int64_t[]){4, 4, 6}) &&
              out[1].dtype == XDNN_F32,
          "lstm h_n/c_n shape");
    tinfo h0_bad = optest_tinfo(XDNN_F32, 3, (int64_t[]){2, 4, 6});
    optest_expect_infer_error(&op_lstm_desc, &n, 5, (const tinfo *[]){&x, &h0_bad, &h0, &wih, &whh}, 1,
                 "lstm: h0 must be [4, 4, H] = [layers*directions, N, H], got [2, 4, 6]");
    tinfo c0_bad = optest_tinfo(XDNN_F32, 3, (int64_t[]){4, 4, 5});
    optest_expect_infer_error(&op_lstm_desc, &n, 5, (const tinfo *[]){&x, &h0, &c0_bad, &wih, &whh}, 1,
                 "lstm: c0 must be [4, 4, 6] = [layers*directions, N, H], got [4, 4, 5]");
    tinfo wih_bad = optest_tinfo(XDNN_F16, 3, (int64_t[]){4, 24, 3});
    optest_expect_infer_error(&op_lstm_desc, &n, 5, (const tinfo *[]){&x, &h0, &h0, &wih_bad, &whh}, 1,
                 "lstm: w_ih must be [4, 24, 12] = [layers*directions, 4*H, max(I, directions*H)], got [4, 24, 3]");
    tinfo b_bad = optest_tinfo(XDNN_F16, 2, (int64_t[]){4, 6});
    optest_expect_infer_error(&op_lstm_desc, &n, 7, (const tinfo *[]){&x, &h0, &h0, &wih, &whh, NULL, &b_bad}, 1,
                 "lstm: b_hh must be [4, 24] = [layers*directions, 4*H], got [4, 6]");
    tinfo x2 = optest_tinfo(XDNN_F16, 2, (int64_t[]){5, 3});
    optest_expect_infer_error(&op_lstm_desc, &n, 5, (const tinfo *[]){&x2, &h0, &h0, &wih, &whh}, 1,
                 "lstm: x must have rank 3 [T, N, I], got [5, 3]");

    /* gru, 1 layer: w_ih [1, 3H, I]; the bwd results */
    rnn_case g1 = {.k = K_GRU, .L = 1, .D = 1};
    xnode ng;
    node_make(a, &ng, &op_gru_desc, &g1);
    tinfo gx = optest_tinfo(XDNN_F32, 3, (int64_t[]){7, 2, 5});
    tinfo gh0 = optest_tinfo(XDNN_F32, 3, (int64_t[]){1, 2, 4});
    tinfo gwih = optest_tinfo(XDNN_F32, 3, (int64_t[]){1, 12, 5});
    tinfo gwhh = optest_tinfo(XDNN_F32, 3, (int64_t[]){1, 12, 4});
    tinfo gwhh_bad = optest_tinfo(XDNN_F32, 3, (int64_t[]){1, 16, 4});
    optest_expect_infer_error(&op_gru_desc, &ng, 4, (const tinfo *[]){&gx, &gh0, &gwih, &gwhh_bad}, 1,
                 "gru: w_hh must be [1, 12, 4] = [layers*directions, 3*H, H], got [1, 16, 4]");
    xnode ngb;
    node_make(a, &ngb, &op_gru_bwd_desc, &g1);
    tinfo gdy = optest_tinfo(XDNN_F32, 3, (int64_t[]){7, 2, 4});
    CHECK(optest_infer_msg(&op_gru_bwd_desc, &ngb, 5, (const tinfo *[]){&gx, &gh0, &gwih, &gwhh, &gdy}, 6, out, msg,
                sizeof msg) == XDNN_OK,
          "valid gru_bwd rejected: %s", msg);
    CHECK(dims_are(&out[0], 3, gx.dims) && dims_are(&out[1], 3, gh0.dims) && dims_are(&out[2], 3, gwih.dims) &&
              dims_are(&out[3], 3, gwhh.dims) && dims_are(&out[4], 2, (int64_t[]){1, 12}) &&
              dims_are(&out[5], 2, (int64_t[]){1, 12}),
          "gru_bwd result shapes");
    tinfo gdy_bad = optest_tinfo(XDNN_F32, 3, (int64_t[]){7, 2, 8});
    optest_expect_infer_error(&op_gru_bwd_desc, &ngb, 5, (const tinfo *[]){&gx, &gh0, &gwih, &gwhh, &gdy_bad}, 1,
                 "gru_bwd: dy must be [7, 2, 4] = [T, N, directions*H], got [7, 2, 8]");

    /* gru, 2 layers, I = 5 > D*H = 4: w_ih is [2, 3H, max(I, D*H)] = [2, 12, 5] */
    rnn_case g2 = {.k = K_GRU, .L = 2, .D = 1};
    xnode ng2;
    node_make(a, &ng2, &op_gru_desc, &g2);
    tinfo g2h0 = optest_tinfo(XDNN_F32, 3, (int64_t[]){2, 2, 4});
    tinfo g2wih = optest_tinfo(XDNN_F32, 3, (int64_t[]){2, 12, 5});
    tinfo g2whh = optest_tinfo(XDNN_F32, 3, (int64_t[]){2, 12, 4});
    CHECK(optest_infer_msg(&op_gru_desc, &ng2, 4, (const tinfo *[]){&gx, &g2h0, &g2wih, &g2whh}, 2, out, msg,
                           sizeof msg) == XDNN_OK &&
              dims_are(&out[1], 3, g2h0.dims),
          "valid 2-layer gru with I > D*H rejected: %s", msg);
    tinfo g2wih_bad = optest_tinfo(XDNN_F32, 3, (int64_t[]){2, 12, 4});
    optest_expect_infer_error(&op_gru_desc, &ng2, 4, (const tinfo *[]){&gx, &g2h0, &g2wih_bad, &g2whh}, 1,
                 "gru: w_ih must be [2, 12, 5] = [layers*directions, 3*H, max(I, directions*H)], got [2, 12, 4]");

    /* rnn: layers 0 */
    rnn_case r0 = {.k = K_RNN, .L = 0, .D = 1};
    xnode nr;
    node_make(a, &nr, &op_rnn_desc, &r0);
    tinfo rwih = optest_tinfo(XDNN_F32, 3, (int64_t[]){1, 4, 5});
    tinfo rwhh = optest_tinfo(XDNN_F32, 3, (int64_t[]){1, 4, 4});
    optest_expect_infer_error(&op_rnn_desc, &nr, 4, (const tinfo *[]){&gx, &gh0, &rwih, &rwhh}, 1,
                 "rnn: attribute 'layers' must be >= 1, got 0");
    optest_set_int(&nr, &op_rnn_desc, "layers", 1);
    CHECK(optest_infer_msg(&op_rnn_desc, &nr, 4, (const tinfo *[]){&gx, &gh0, &rwih, &rwhh}, 2, out, msg, sizeof msg) ==
                  XDNN_OK &&
              dims_are(&out[0], 3, (int64_t[]){7, 2, 4}),
          "valid rnn rejected: %s", msg);
    arena_destroy(a);
}

int main(void)
{
    test_one_step(K_RNN, false);
    test_one_step(K_RNN, true);
    test_one_step(K_LSTM, false);
    test_one_step(K_GRU, false);
    test_structure(K_RNN);
    test_structure(K_LSTM);
    test_structure(K_GRU);
    test_backward();
    test_infer();
    return test_summary("test_op_rnn");
}
