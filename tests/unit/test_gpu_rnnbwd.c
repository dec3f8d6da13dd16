/* test_gpu_rnnbwd.c — host-side logic of the rnn_bwd_direct GPU engine, no
 * GPU needed: which nodes it accepts (and the reasons it gives otherwise),
 * the port/result mapping of rnn_bwd/lstm_bwd/gru_bwd, the dims read from the
 * shapes and attributes, and the workspace size (computed by hand below).
 * CUDA=0: a no-op. */
#include <stdio.h>
#include <string.h>

#if XDNN_HAVE_CUDA
#include "gpu_fixture.h"
#include "test_util.h"

#include "gpu/eng_rnn_bwd.h"
#include "gpu/engine.h"
#include "gpu/lower.h"
#include "ops/rnn.h"

static const gpu_device dev = {.sm_count = 132, .cc_major = 9, .cc_minor = 0};

/* lstm_bwd T=2 N=3 I=4 H=6, no biases, dh_n and dc_n given, f16. */
static void test_lstm_plan(void)
{
    fixture f;
    if (!fixture_setup(&f, "dnn 1;\ngraph g(seed=1) {\n  input x: f16[2, 3, 4];\n  input h0: f16[1, 3, 6];\n"
                   "  input c0: f16[1, 3, 6];\n  weight w_ih: f16[1, 24, 4];\n  weight w_hh: f16[1, 24, 6];\n"
                   "  input dy: f16[2, 3, 6];\n  input dhn: f16[1, 3, 6];\n  input dcn: f16[1, 3, 6];\n"
                   "  dx, dh0, dc0, dwi, dwh, dbi, dbh = lstm_bwd(x, h0, c0, w_ih, w_hh, dy, dh_n=dhn, dc_n=dcn);\n"
                   "  output dx, dh0, dc0, dwi, dwh, dbi, dbh;\n}\n"))
        return;
    const gpart *p = fixture_part_of_op(f.pl, "lstm_bwd");
    const gpu_engine *e = gpu_engine_find("rnn_bwd_direct");
    CHECK(e != NULL);
    rnnb_plan rp;
    char why[256] = "";
    if (p && e) {
        CHECK(e->supports(f.pl, p, &dev, why, sizeof why));
        CHECK(gpu_rnnb_analyze(f.pl, p, &rp, why, sizeof why));
        CHECK(rp.cell == RNN_CELL_LSTM);
        CHECK(rp.T == 2 && rp.N == 3 && rp.I == 4 && rp.H == 6 && rp.L == 1 && rp.D == 1 && rp.G == 4 && rp.Iw == 4);
        CHECK(rp.c0 >= 0 && rp.dh_n >= 0 && rp.dc_n >= 0 && rp.b_ih < 0 && rp.b_hh < 0);
        CHECK(rp.dx >= 0 && rp.dh0 >= 0 && rp.dc0 >= 0 && rp.dw_ih >= 0 && rp.db_hh >= 0);
        CHECK(strcmp(f.g->t[rp.dc_n].name, "dcn") == 0 && strcmp(f.g->t[rp.dy].name, "dy") == 0);
        CHECK(strcmp(f.g->t[rp.dc0].name, "dc0") == 0 && strcmp(f.g->t[rp.db_ih].name, "dbi") == 0);
        /* f32 buffers, each rounded up to 256 bytes:
         *  256 x, bih, bhh, dy, dhs, dcs, ys, h, c, direct, g0, g1, dbi, dbh (14)
         *  512 wih (96 floats), dwi;  768 whh (144), gates, dai, dah, dwh;  hn 0;  + 256 slack */
        CHECK(rp.ws_total == 14 * 256 + 2 * 512 + 5 * 768 + 256);
        CHECK(e->workspace(f.pl, p, &dev) == rp.ws_total);
    }
    fixture_teardown(&f);
}

/* gru_bwd with two bidirectional layers: Iw = max(I, D*H); rnn relu cell. */
static void test_gru_rnn_dims(void)
{
    fixture f;
    if (!fixture_setup(&f, "dnn 1;\ngraph g(seed=1) {\n  input x: f32[3, 2, 5];\n  input h0: f32[4, 2, 7];\n"
                   "  weight w_ih: f32[4, 21, 14];\n  weight w_hh: f32[4, 21, 7];\n  weight b: f32[4, 21];\n"
                   "  input dy: f32[3, 2, 14];\n"
                   "  dx, dh0, dwi, dwh, dbi, dbh = gru_bwd(x, h0, w_ih, w_hh, dy, b_ih=b, b_hh=b, layers=2, "
                   "bidirectional=true);\n"
                   "  weight wr: f32[1, 7, 5];\n  weight wrh: f32[1, 7, 7];\n  input h1: f32[1, 2, 7];\n"
                   "  input dy1: f32[3, 2, 7];\n"
                   "  ex, eh0, ewi, ewh, ebi, ebh = rnn_bwd(x, h1, wr, wrh, dy1, nonlinearity=\"relu\");\n"
                   "  output dx, dh0, dwi, dwh, dbi, dbh, ex, eh0, ewi, ewh, ebi, ebh;\n}\n"))
        return;
    rnnb_plan rp;
    char why[256] = "";
    const gpart *p = fixture_part_of_op(f.pl, "gru_bwd");
    if (p && gpu_rnnb_analyze(f.pl, p, &rp, why, sizeof why)) {
        CHECK(rp.cell == RNN_CELL_GRU && rp.G == 3 && rp.L == 2 && rp.D == 2 && rp.Iw == 14 && rp.H == 7);
        CHECK(rp.b_ih >= 0 && rp.b_hh >= 0 && rp.dh_n < 0 && rp.dc_n < 0 && rp.c0 < 0 && rp.dc0 < 0);
        CHECK(rp.off_hn > rp.off_gates && rp.ws_total > rp.off_dbh);
    } else {
        CHECK(!"gru_bwd accepted");
        fprintf(stderr, "  why: %s\n", why);
    }
    p = fixture_part_of_op(f.pl, "rnn_bwd");
    if (p && gpu_rnnb_analyze(f.pl, p, &rp, why, sizeof why)) {
        CHECK(rp.cell == RNN_CELL_RELU && rp.G == 1 && rp.L == 1 && rp.D == 1 && rp.Iw == 5);
        CHECK(strcmp(f.g->t[rp.dw_hh].name, "ewh") == 0 && strcmp(f.g->t[rp.dy].name, "dy1") == 0);
    } else {
        CHECK(!"rnn_bwd accepted");
    }
    fixture_teardown(&f);
}

/* Rejections name the op and the reason. */
static void test_rejects(void)
{
    fixture f;
    if (!fixture_setup(&f, "dnn 1;\ngraph g(seed=1) {\n  input x: f64[2, 1, 3];\n  input h0: f64[1, 1, 4];\n"
                   "  weight w_ih: f64[1, 4, 3];\n  weight w_hh: f64[1, 4, 4];\n  input dy: f64[2, 1, 4];\n"
                   "  dx, dh0, dwi, dwh, dbi, dbh = rnn_bwd(x, h0, w_ih, w_hh, dy);\n"
                   "  input xf: f32[2, 1, 3];\n  input hf: f32[1, 1, 4];\n  weight wi: f32[1, 4, 3];\n"
                   "  weight wh: f32[1, 4, 4];\n  y = rnn(xf, hf, wi, wh);\n"
                   "  output dx, dh0, dwi, dwh, dbi, dbh, y;\n}\n"))
        return;
    const gpu_engine *e = gpu_engine_find("rnn_bwd_direct");
    char why[256] = "";
    const gpart *p = fixture_part_of_op(f.pl, "rnn_bwd");
    if (p && e) {
        CHECK(!e->supports(f.pl, p, &dev, why, sizeof why));
        CHECK(strstr(why, "rnn_bwd") && strstr(why, "x") && strstr(why, "f64"));
    }
    p = fixture_part_of_op(f.pl, "rnn");
    why[0] = 0;
    if (p && e) {
        CHECK(!e->supports(f.pl, p, &dev, why, sizeof why));
        CHECK(strstr(why, "not rnn") != NULL);
    }
    fixture_teardown(&f);
}

int main(void)
{
    test_lstm_plan();
    test_gru_rnn_dims();
    test_rejects();
    return test_summary("test_gpu_rnnbwd");
}
#else
int main(void)
{
    printf("test_gpu_rnnbwd: skipped (CUDA=0)\n");
    return 0;
}
#endif
