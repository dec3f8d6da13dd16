/* difftest_rnnbwd.c — the differential tester of the rnn_bwd_direct engine
 * (rnn_bwd tanh/relu, lstm_bwd, gru_bwd): each case is a tiny .dnn graph run
 * by the CPU reference (src/ops/rnn_bwd.c) and by the GPU with the engine
 * forced; every result (dx, dh0, [dc0,] dw_ih, dw_hh, db_ih, db_hh) compared
 * with the METHOD.md tolerances of its dtype.  Sweep: T 1..5, N 1..3, I != H
 * (also I > D*H and I < D*H with L = 2, so w_ih has unused columns), L 1-2,
 * uni/bidirectional, with/without biases and dh_n/dc_n, f32/f16/bf16, some
 * inputs with permuted or padded strides.  One line per case, then
 * "N passed, N failed".  Usage:
 *   difftest_rnnbwd [--quick] [--list] [--dry] [FILTER]
 * --quick: reduced sweep (compute-sanitizer); --dry: no GPU, run the
 * reference and plan every case (the forced engine must accept).
 * Built by tests/gpu/run.sh BUILD --only rnnbwd. */
#include "diffharness.h"

#include "core/exec.h"
#include "data/data.h"
#include "gpu/engine.h"
#include "gpu/gpu.h"
#include "gpu/lower.h"
#include "ops/op.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_CASES = 512, TEXT_MAX = 2048 };

typedef struct tcase {
    char id[200];
    char text[TEXT_MAX];
    char force[48]; /* "OP=ENGINE" */
} tcase;

static tcase *cases;
static int ncases;
static dh_opts opts;

/* --dry (no GPU): lower, partition and select engines (the forced one must
 * accept) on a pretend sm_90. */
static xdnn_status dry_run(xgraph *g, const char *force, char *engines, size_t len, xdnn_diags_t *d)
{
    arena *ar = arena_create();
    ggraph *gg = gpu_lower(g, ar);
    gplan *pl = gpu_partition(gg, false);
    gpu_device dev = {.sm_count = 132, .cc_major = 9, .cc_minor = 0};
    const char *const f[1] = {force};
    xdnn_status s = gpu_select_engines(pl, &dev, f, 1, 0, NULL, d);
    for (int i = 0; i < pl->nparts && s == XDNN_OK; i++) {
        size_t n = strlen(engines);
        snprintf(engines + n, len - n, "%s%s(ws %zu)", i ? "," : "", pl->parts[i].engine->name, pl->parts[i].ws_bytes);
    }
    arena_destroy(ar);
    return s;
}

__attribute__((format(printf, 3, 4))) static void add_case(const char *id, const char *force, const char *fmt, ...)
{
    if (ncases >= MAX_CASES) { /* a case dropped silently would be a test that cannot fail */
        fprintf(stderr, "%s: more than %d cases: raise MAX_CASES\n", id, (int)MAX_CASES);
        exit(2);
    }
    tcase *c = &cases[ncases++];
    snprintf(c->id, sizeof c->id, "%s", id);
    snprintf(c->force, sizeof c->force, "%s", force);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->text, sizeof c->text, fmt, ap);
    va_end(ap);
}

static void rnnbwd_cases(void)
{
    static const char *const ops[] = {"rnn", "rnn-relu", "lstm", "gru"};
    static const int tnih[][4] = {{1, 1, 3, 4}, {3, 2, 5, 7}, {5, 3, 6, 4}, {4, 2, 9, 3}, {2, 3, 4, 6}};
    static const char *const dts[] = {"f32", "f16", "f32", "bf16"};
    int ns = opts.quick ? 3 : 5, serial = 0;
    for (int si = 0; si < ns; si++)
        for (int oi = 0; oi < 4; oi++)
            for (int L = 1; L <= 2; L++)
                for (int bidir = 0; bidir <= 1; bidir++) {
                    serial++;
                    if (opts.quick && (L + bidir + oi + si) % 2)
                        continue;
                    int T = tnih[si][0], N = tnih[si][1], I = tnih[si][2], H = tnih[si][3], D = bidir ? 2 : 1;
                    int G = oi == 2 ? 4 : oi == 3 ? 3 : 1, Iw = L > 1 && D * H > I ? D * H : I, LD = L * D;
                    bool lstm = oi == 2, biases = (si + oi + L) % 3 != 1, grads_n = (si + oi + bidir) % 2 == 0;
                    bool strided = serial % 5 == 2; /* x batch-major, dy padded rows */
                    const char *dt = dts[serial % 4];
                    const char *op = lstm ? "lstm_bwd" : oi == 3 ? "gru_bwd" : "rnn_bwd";
                    char id[200], c0[96] = "", gn[160] = "", xl[64] = "", dyl[64] = "", attrs[200], ins[160];
                    snprintf(id, sizeof id, "%s/%s/%s/L%d%s/%s%s/T%dN%dI%dH%d", ops[oi], biases ? "bias" : "nobias",
                             grads_n ? "dhn" : "nodhn", L, bidir ? "-bidir" : "", dt, strided ? "/strided" : "", T, N,
                             I, H);
                    if (lstm)
                        snprintf(c0, sizeof c0, "  input c0: %s[%d, %d, %d];\n", dt, LD, N, H);
                    if (grads_n && !lstm)
                        snprintf(gn, sizeof gn, "  input dhn: %s[%d, %d, %d];\n", dt, LD, N, H);
                    if (grads_n && lstm)
                        snprintf(gn, sizeof gn, "  input dhn: %s[%d, %d, %d];\n  input dcn: %s[%d, %d, %d];\n", dt,
                                 LD, N, H, dt, LD, N, H);
                    if (strided) {
                        snprintf(xl, sizeof xl, " @strides(%d, %d, 1)", I, T * I);
                        snprintf(dyl, sizeof dyl, " @strides(%d, %d, 1)", N * (D * H + 3), D * H + 3);
                    }
                    snprintf(attrs, sizeof attrs, ", layers=%d, bidirectional=%s%s%s%s%s", L,
                             bidir ? "true" : "false", oi == 1 ? ", nonlinearity=\"relu\"" : "",
                             biases ? ", b_ih=b_ih, b_hh=b_hh" : "", grads_n ? ", dh_n=dhn" : "",
                             grads_n && lstm ? ", dc_n=dcn" : "");
                    snprintf(ins, sizeof ins, "x, h0%s, w_ih, w_hh, dy", lstm ? ", c0" : "");
                    char force[48];
                    snprintf(force, sizeof force, "%s=rnn_bwd_direct", op);
                    add_case(id, force,
                             "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[%d, %d, %d]%s;\n  input h0: %s[%d, %d, %d];\n"
                             "%s  weight w_ih: %s[%d, %d, %d] = uniform(lo=-0.4, hi=0.4);\n"
                             "  weight w_hh: %s[%d, %d, %d] = uniform(lo=-0.4, hi=0.4);\n"
                             "  weight b_ih: %s[%d, %d] = uniform(lo=%s, hi=0.3);\n"
                             "  weight b_hh: %s[%d, %d] = uniform(lo=-0.3, hi=0.3);\n"
                             "  input dy: %s[%d, %d, %d]%s;\n%s"
                             "  dx, dh0%s, dwi, dwh, dbi, dbh = %s(%s%s);\n"
                             "  output dx, dh0%s, dwi, dwh, dbi, dbh;\n}\n",
                             serial + 300, dt, T, N, I, xl, dt, LD, N, H, c0, dt, LD, G * H, Iw, dt, LD, G * H, H, dt,
                             LD, G * H, oi == 1 ? "0.1" : "-0.3", dt, LD, G * H, dt, T, N, D * H, dyl, gn, lstm ? ", dc0" : "", op, ins, attrs,
                             lstm ? ", dc0" : "");
                }
}

/* ---- running one case (as tests/gpu/difftest_seq.c) */
static const char *case_id(int i)
{
    return cases[i].id;
}

static const char *case_text(int i)
{
    return cases[i].text;
}

static void run_case(int i, dh_outcome *out)
{
    const tcase *c = &cases[i];
    dh_case_run r = {0};
    xdnn_status s = dh_case_begin(&r, c->id, c->text, true, out);
    xgraph *g = r.g;
    if (s != XDNN_OK)
        goto done;
    const char *force[1] = {c->force};
    if (opts.dry) {
        s = dry_run(g, c->force, out->engines, sizeof out->engines, r.d);
        bool some = false; /* a case whose reference is all zeros would compare nothing */
        for (size_t k = 0; k < g->noutputs; k++)
            some |= dh_tensor_absmax(&r.cpu.tensors[g->outputs[k]]) > 0;
        out->ok = s == XDNN_OK && some && strstr(out->engines, "rnn_bwd_direct") != NULL;
        snprintf(out->msg, sizeof out->msg, "(dry: reference ran%s, engines planned, not run on a GPU)",
                 some ? "" : " but every result is zero");
        goto done;
    }
    gpu_run_opts o = {.warmup = 0, .iters = 1, .log = stderr, .verbose = getenv("DIFFTEST_VERBOSE") ? 1 : 0,
                      .force = force, .nforce = 1};
    s = dh_gpu_run(&r, &o, out);
    if (s != XDNN_OK)
        goto done;
    /* Every result must match; a result whose reference is all zeros (e.g. a
     * relu cell that never fires) compares only zeros, so at least one result
     * of the case must be nonzero. */
    out->ok = true;
    bool any_nonzero = false;
    size_t n = 0;
    for (size_t k = 0; k < g->noutputs; k++) {
        dh_rule rule = {0};
        dh_default_tolerance(g, g->outputs[k], &rule.rtol, &rule.atol);
        bool nonzero;
        out->ok &= dh_compare_output(&r, g->outputs[k], &rule, out->msg, sizeof out->msg, &n, &nonzero);
        any_nonzero |= nonzero;
    }
    if (!any_nonzero) {
        out->ok = false;
        snprintf(out->msg + n, sizeof out->msg - n, " (every reference result is zero: compares nothing)");
    }
done:
    dh_case_end(&r, c->id, out->ok);
}

int main(int argc, char **argv)
{
    dh_parse_args(argc, argv, false, &opts);
    cases = calloc(MAX_CASES, sizeof *cases);
    if (!cases)
        return 2;
    rnnbwd_cases();
    dh_tester t = {.name = "difftest_rnnbwd", .ncases = ncases, .case_id = case_id, .case_text = case_text,
                   .run_case = run_case};
    int rc = dh_run(&t, &opts);
    free(cases);
    return rc;
}
