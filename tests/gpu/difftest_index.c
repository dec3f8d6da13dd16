/* difftest_index.c — the differential tester of the index engines:
 * index_direct (gather, gather_bwd, one_hot, argmax, argmin), xent_direct
 * (cross_entropy, cross_entropy_bwd) and bn_infer_var (batchnorm_infer_var),
 * each against the CPU reference on fresh Philox data, outputs poisoned by
 * the harness first.
 *
 *  - gather/..., gather_bwd/..., one_hot/..., argmax/..., argmin/...: odd
 *    shapes (1, primes, 1000+ rows, K up to 5000 indices for the sort),
 *    axis first/middle/last, data f32/bf16/f16, indices i8/i32/i64 (random
 *    in [0, n), so gather_bwd meets repeated indices).  Exact: gather copies,
 *    one_hot and argmax are discrete, and gather_bwd sums in double in k
 *    order with one rounding, as the reference does.
 *  - argrules/...: argmax/argmin on literal rows with ties, NaNs and -0.
 *  - xent/...: rows x classes 1x2 to 64x4097, reductions none/mean/sum,
 *    label_smoothing 0 and 0.1, ignore_index hitting real targets; forward
 *    and backward.  f32 at rtol 1e-4 (a length-C softmax in f32 exp), bf16
 *    outputs at 1e-2.
 *  - bnvar/...: batchnorm_infer_var on 2-5-D x, per-channel and one-element
 *    parameters, f32 and bf16 x; rtol 1e-5 (f32), 1e-2 (bf16).
 *  - gather_bwd and the reduced xent cases run twice: the same bytes both
 *    times (sorted keys and fixed-order sums, no atomics).
 *  - oob/...: an index out of range: the reference refuses it, so the GPU
 *    runs alone and must write NaN exactly on the rows that index points to.
 * Usage: difftest_index [--quick] [--list] [--dry] [FILTER]
 * Built and run by tests/gpu/run.sh BUILD --only index. */
#include "diffharness.h"

#include "core/exec.h"
#include "data/data.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_CASES = 512, TEXT_MAX = 2048 };

typedef enum ckind { CK_EXACT, CK_TOL, CK_OOB } ckind;

typedef struct tcase {
    char id[160];
    char text[TEXT_MAX];
    ckind kind;
    int nan_row;      /* CK_OOB: the y row that must be NaN (every other row finite) */
    bool twice;       /* run the GPU again: the outputs must be the same bytes (fixed-order sums) */
} tcase;

static tcase *cases;
static int ncases;
static dh_opts opts;

__attribute__((format(printf, 3, 4))) static tcase *add_case(const char *id, ckind kind, const char *fmt, ...)
{
    if (ncases >= MAX_CASES) { /* a case dropped silently would be a test that cannot fail */
        fprintf(stderr, "%s: more than %d cases: raise MAX_CASES\n", id, (int)MAX_CASES);
        exit(2);
    }
    tcase *c = &cases[ncases++];
    memset(c, 0, sizeof *c);
    snprintf(c->id, sizeof c->id, "%s", id);
    c->kind = kind;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->text, sizeof c->text, fmt, ap);
    va_end(ap);
    return c;
}

/* "[2, 3]" and "2x3" of a dims list. */
static void dims_text(int r, const int *d, char *s, size_t ls, char *id, size_t li)
{
    size_t a = (size_t)snprintf(s, ls, "["), b = 0;
    id[0] = '\0';
    for (int i = 0; i < r; i++) {
        a += (size_t)snprintf(s + a, ls - a, "%s%d", i ? ", " : "", d[i]);
        b += (size_t)snprintf(id + b, li - b, "%s%d", i ? "x" : "", d[i]);
    }
    snprintf(s + a, ls - a, "]");
}

static const char *const fdts[] = {"f32", "bf16", "f16"}, *const idts[] = {"i32", "i64", "i8"};

typedef struct gshape {
    int xr, x[4];   /* x dims */
    int axis;
    int ir, ix[3];  /* index dims */
} gshape;

static void gather_cases(void)
{
    static const gshape sh[] = {
        {2, {7, 3}, 0, 1, {5}},              {2, {1000, 64}, 0, 2, {3, 7}},   {2, {101, 129}, 0, 3, {2, 3, 5}},
        {2, {13, 1}, 0, 1, {33}},            {3, {3, 11, 5}, 1, 2, {4, 6}},   {2, {6, 17}, -1, 1, {9}},
        {2, {1000, 16}, 0, 1, {5000}},       {4, {2, 3, 5, 7}, 2, 1, {11}},   {1, {37}, 0, 2, {3, 3}},
    };
    int nsh = (int)(sizeof sh / sizeof sh[0]), k = 0;
    for (int si = 0; si < nsh; si++) {
        if (opts.quick && si == 6)
            continue;
        const gshape *g = &sh[si];
        int ax = g->axis < 0 ? g->axis + g->xr : g->axis, n = g->x[ax];
        char xs[64], xid[64], is[64], iid[64];
        dims_text(g->xr, g->x, xs, sizeof xs, xid, sizeof xid);
        dims_text(g->ir, g->ix, is, sizeof is, iid, sizeof iid);
        /* the y (dy) dims: x[:ax] + index + x[ax+1:] */
        int yd[8], yr = 0;
        for (int i = 0; i < ax; i++)
            yd[yr++] = g->x[i];
        for (int i = 0; i < g->ir; i++)
            yd[yr++] = g->ix[i];
        for (int i = ax + 1; i < g->xr; i++)
            yd[yr++] = g->x[i];
        char ys[64], yid[64];
        dims_text(yr, yd, ys, sizeof ys, yid, sizeof yid);
        for (int v = 0; v < 2; v++, k++) {
            const char *ft = fdts[k % 3], *it = idts[n <= 127 ? k % 3 : k % 2];
            char id[160];
            snprintf(id, sizeof id, "gather/%s/axis%d/idx%s/%s/%s", xid, g->axis, iid, ft, it);
            add_case(id, CK_EXACT,
                     "dnn 1;\ngraph g(io=%s, compute=f32, intermediate=%s, seed=%d) {\n"
                     "  input x: %s%s = randn();\n  weight ix: %s%s = uniform(lo=0, hi=%d);\n"
                     "  y = gather(x, ix, axis=%d);\n  output y;\n}\n",
                     ft, ft, 100 + k, ft, xs, it, is, n - 1, g->axis);
            snprintf(id, sizeof id, "gather_bwd/%s/axis%d/idx%s/%s/%s", xid, g->axis, iid, ft, it);
            tcase *c = add_case(id, CK_EXACT,
                     "dnn 1;\ngraph g(io=%s, compute=f32, intermediate=%s, seed=%d) {\n"
                     "  input dy: %s%s = randn();\n  weight ix: %s%s = uniform(lo=0, hi=%d);\n"
                     "  dx = gather_bwd(dy, ix, axis=%d, x_dims=%s);\n  output dx;\n}\n",
                     ft, ft, 200 + k, ft, ys, it, is, n - 1, g->axis, xs);
            if (c)
                c->twice = true;
        }
    }
}

/* gather reading a reshape view of its table (a view with packed strides) */
static void view_cases(void)
{
    add_case("gather/view/reshape6x10->3x20/f32/i32", CK_EXACT,
             "dnn 1;\ngraph g(seed=7) {\n  input x: f32[6, 10] = randn();\n"
             "  weight ix: i32[4, 2] = uniform(lo=0, hi=2);\n  y = gather(reshape(x, dims=[3, 20]), ix);\n"
             "  output y;\n}\n");
}

static void one_hot_cases(void)
{
    static const struct { int r, d[2], classes; const char *dt, *it; } c[] = {
        {1, {13}, 7, "f32", "i32"}, {2, {3, 5}, 129, "bf16", "i64"}, {1, {1}, 1, "f32", "i8"},
        {2, {17, 9}, 33, "i32", "i32"}, {1, {250}, 1000, "i64", "i64"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char s[64], sid[64], id[160];
        dims_text(c[i].r, c[i].d, s, sizeof s, sid, sizeof sid);
        snprintf(id, sizeof id, "one_hot/%s/classes%d/%s/%s", sid, c[i].classes, c[i].it, c[i].dt);
        add_case(id, CK_EXACT,
                 "dnn 1;\ngraph g(seed=%d) {\n  weight ix: %s%s = uniform(lo=0, hi=%d);\n"
                 "  y = one_hot(ix, classes=%d, dtype=%s);\n  output y;\n}\n",
                 (int)i + 300, c[i].it, s, c[i].classes - 1, c[i].classes, c[i].dt);
    }
}

static void arg_cases(void)
{
    /* few-valued data (rounded uniform) makes ties common; bf16 rounds more */
    static const struct { int r, d[3], axis; } sh[] = {
        {2, {7, 33}, -1}, {2, {3, 1000}, -1}, {2, {300, 5}, -1}, {2, {33, 7}, 0}, {3, {4, 9, 6}, 1}, {1, {129}, 0},
    };
    int k = 0;
    for (size_t si = 0; si < sizeof sh / sizeof sh[0]; si++)
        for (int op = 0; op < 2; op++, k++) {
            char s[64], sid[64], id[160];
            dims_text(sh[si].r, sh[si].d, s, sizeof s, sid, sizeof sid);
            const char *ft = fdts[k % 3], *yt = k % 2 ? "i32" : "i64";
            snprintf(id, sizeof id, "%s/%s/axis%d/%s->%s", op ? "argmin" : "argmax", sid, sh[si].axis, ft, yt);
            add_case(id, CK_EXACT,
                     "dnn 1;\ngraph g(io=%s, compute=f32, intermediate=%s, seed=%d) {\n"
                     "  input x: %s%s = uniform(lo=-%d, hi=%d);\n  y = %s(x, axis=%d, dtype=%s);\n  output y;\n}\n",
                     ft, ft, 400 + k, ft, s, k % 2 ? 3 : 1000, k % 2 ? 3 : 1000, op ? "argmin" : "argmax",
                     sh[si].axis, yt);
        }
}

/* The tie and NaN rules on literal rows: ties (5, 5), NaNs (the first wins
 * both ways), -0 == +0; the reference gives argmax [1, 0, 0], argmin [0, 0, 2]. */
static void arg_rule_cases(void)
{
    static const char *const dts[] = {"f32", "bf16"};
    for (int i = 0; i < 2; i++) {
        char id[64];
        snprintf(id, sizeof id, "argrules/3x4/%s", dts[i]);
        add_case(id, CK_EXACT,
                 "dnn 1;\ngraph g(seed=1) {\n"
                 "  input x: %s[3, 4] = values([1, 5, 5, 2, nan, 1, nan, 3, -0.0, 0.0, -1, 0.0]);\n"
                 "  a = argmax(x);\n  b = argmin(x, dtype=i32);\n  output a, b;\n}\n", dts[i]);
    }
}

static void xent_cases(void)
{
    static const struct { int r, d[3]; } sh[] = {
        {2, {1, 2}}, {2, {7, 5}}, {2, {300, 33}}, {3, {2, 3, 1000}}, {2, {64, 4097}}, {1, {11}},
    };
    static const char *const reds[] = {"none", "mean", "sum"};
    int k = 0;
    for (size_t si = 0; si < sizeof sh / sizeof sh[0]; si++) {
        if (opts.quick && si == 4)
            continue;
        int r = sh[si].r, C = sh[si].d[r - 1], R = 1;
        for (int i = 0; i < r - 1; i++)
            R *= sh[si].d[i];
        char xs[64], xid[64], ts[64], tid[64];
        dims_text(r, sh[si].d, xs, sizeof xs, xid, sizeof xid);
        dims_text(r - 1, sh[si].d, ts, sizeof ts, tid, sizeof tid);
        if (r == 1)
            snprintf(ts, sizeof ts, "[]");
        for (int v = 0; v < 3; v++, k++) {
            const char *red = reds[v], *ft = k % 4 == 3 ? "bf16" : "f32", *it = idts[k % 2];
            double ls = k % 2 ? 0.1 : 0;
            /* 0 hits real targets: those rows drop out (not with few rows: all could) */
            int ignore = k % 3 == 0 && R >= 7 ? 0 : -100;
            char id[160];
            snprintf(id, sizeof id, "xent/%s/%s/ls%g/ignore%d/%s/%s", xid, red, ls, ignore, ft, it);
            char dyd[64];
            snprintf(dyd, sizeof dyd, "%s", v == 0 ? ts : "[]");
            tcase *c = add_case(id, CK_TOL,
                     "dnn 1;\ngraph g(io=%s, compute=f32, intermediate=%s, seed=%d) {\n"
                     "  input x: %s%s = randn(std=3);\n  weight t: %s%s = uniform(lo=0, hi=%d);\n"
                     "  input dy: %s%s = uniform(lo=0.5, hi=2);\n"
                     "  y = cross_entropy(x, t, reduction=\"%s\", ignore_index=%d, label_smoothing=%g);\n"
                     "  dx = cross_entropy_bwd(dy, x, t, reduction=\"%s\", ignore_index=%d, label_smoothing=%g);\n"
                     "  output y, dx;\n}\n",
                     ft, ft, 500 + k, ft, xs, it, ts, C - 1, ft, dyd, red, ignore, ls, red, ignore, ls);
            if (c)
                c->twice = v != 0;
        }
    }
}

/* +-inf logits: log(relu(u) + relu(r)) subtracted (+inf where u <= 0, ~1 draw in 11, in the rows where r <= 0,
 * about half) and log(relu(w)) added (-inf rows; crossing a +inf, NaN logits): a row with a +inf has a NaN
 * log-softmax, so its loss and gradient are NaN (as PyTorch's), the other rows keep theirs.  Reduction none: a
 * mean or sum over NaN rows would compare one NaN. */
static void xent_inf_cases(void)
{
    static const struct { int R, C; } sh[] = {{7, 5}, {300, 33}, {8, 4097}};
    for (int si = 0; si < 3; si++)
        for (int v = 0; v < 2; v++) {
            const char *ft = v ? "bf16" : "f32";
            int R = sh[si].R, C = sh[si].C;
            char id[160];
            snprintf(id, sizeof id, "xent/inf-logits/%dx%d/none/%s", R, C, ft);
            add_case(id, CK_TOL,
                     "dnn 1;\ngraph g(io=%s, compute=f32, intermediate=%s, seed=%d) {\n"
                     "  input x0: %s[%d, %d] = randn(std=3);\n  input u: %s[%d, %d] = uniform(lo=-0.1, hi=1);\n"
                     "  input r: %s[%d, 1] = uniform(lo=-1, hi=1);\n  input w: %s[%d, 1] = uniform(lo=-0.3, hi=1);\n"
                     "  weight t: i32[%d] = uniform(lo=0, hi=%d);\n  input dy: %s[%d] = uniform(lo=0.5, hi=2);\n"
                     "  x = x0 - log(relu(u) + relu(r)) + log(relu(w));\n"
                     "  y = cross_entropy(x, t, reduction=\"none\");\n  dx = cross_entropy_bwd(dy, x, t, reduction=\"none\");\n"
                     "  output x, y, dx;\n}\n",
                     ft, ft, 700 + si * 2 + v, ft, R, C, ft, R, C, ft, R, ft, R, R, C - 1, ft, R);
        }
}

static void bnvar_cases(void)
{
    static const struct { int r, d[5]; bool one; } sh[] = {
        {4, {2, 3, 5, 7}, false}, {2, {33, 17}, false}, {3, {3, 17, 9}, true}, {4, {1, 64, 1, 1}, false},
        {5, {2, 5, 3, 4, 3}, false}, {4, {4, 128, 14, 14}, false},
    };
    for (size_t si = 0; si < sizeof sh / sizeof sh[0]; si++) {
        char xs[64], xid[64], id[160], ps[32];
        dims_text(sh[si].r, sh[si].d, xs, sizeof xs, xid, sizeof xid);
        snprintf(ps, sizeof ps, "[%d]", sh[si].one ? 1 : sh[si].d[1]);
        const char *ft = si % 2 ? "bf16" : "f32";
        snprintf(id, sizeof id, "bnvar/%s/%s%s", xid, ft, sh[si].one ? "/one-element" : "");
        add_case(id, CK_TOL,
                 "dnn 1;\ngraph g(io=%s, compute=f32, intermediate=%s, seed=%d) {\n"
                 "  input x: %s%s = randn(std=2);\n  weight sc: f32%s = uniform(lo=0.5, hi=2);\n"
                 "  weight b: f32%s = randn();\n  weight m: f32%s = randn();\n"
                 "  weight v: f32%s = uniform(lo=0.05, hi=3);\n"
                 "  y = batchnorm_infer_var(x, sc, b, m, v, eps=1e-3);\n  output y;\n}\n",
                 ft, ft, 600 + (int)si, ft, xs, ps, ps, ps, ps);
    }
}

static void oob_cases(void)
{
    tcase *c = add_case("oob/gather/5x3/idx[1,7,0]", CK_OOB,
                        "dnn 1;\ngraph g(seed=1) {\n  input x: f32[5, 3] = randn();\n"
                        "  weight ix: i32[3] = values([1, 7, 0]);\n  y = gather(x, ix);\n  output y;\n}\n");
    if (c)
        c->nan_row = 1;
    c = add_case("oob/gather/5x8/idx[1,7,0]/16-byte-rows", CK_OOB,
                 "dnn 1;\ngraph g(seed=1) {\n  input x: f32[5, 8] = randn();\n"
                 "  weight ix: i64[3] = values([1, -7, 0]);\n  y = gather(x, ix);\n  output y;\n}\n");
    if (c)
        c->nan_row = 1;
    c = add_case("oob/xent/3x4/target[2,-3,1]", CK_OOB,
                 "dnn 1;\ngraph g(seed=1) {\n  input x: f32[3, 4] = randn();\n"
                 "  weight t: i64[3] = values([2, -3, 1]);\n  y = cross_entropy(x, t, reduction=\"none\");\n"
                 "  output y;\n}\n");
    if (c)
        c->nan_row = 1;
}

static const char *case_id(int i) { return cases[i].id; }
static const char *case_text(int i) { return cases[i].text; }

/* CK_OOB: row nan_row of the only output is all NaN, every other element finite. */
static bool oob_check(const tcase *c, const dh_case_run *r, char *msg, size_t cap)
{
    const host_tensor *y = &r->gpu.tensors[r->g->outputs[0]];
    const xtensor *xt = &r->g->tensors[r->g->outputs[0]];
    int64_t row = xt->rrank > 1 ? xt->rdims[xt->rrank - 1] : 1, bad = 0;
    for (int64_t i = 0; i < y->numel; i++) {
        bool in_row = i / row == c->nan_row, nan = isnan(dtype_load(y->dtype, y->data, i));
        bad += in_row != nan;
    }
    snprintf(msg, cap, "%lld element(s) where NaN should mark exactly row %d", (long long)bad, c->nan_row);
    return bad == 0 && y->numel > 0;
}

/* rtol for a CK_TOL output by its dtype: bf16 1e-2, f16 5e-3, f32 1e-4 (a
 * length-C softmax with f32 exp; bnvar is double inside and far tighter). */
static double tol_of(xdnn_dtype t) { return t == XDNN_BF16 ? 1e-2 : t == XDNN_F16 ? 5e-3 : 1e-4; }

/* Run the GPU again; every output must come back as the same bytes. */
static bool same_twice(dh_case_run *r, const gpu_run_opts *o, dh_outcome *out, size_t *n)
{
    size_t no = r->g->noutputs;
    void **first = calloc(no ? no : 1, sizeof *first);
    bool ok = first != NULL;
    for (size_t k = 0; ok && k < no; k++) {
        const host_tensor *t = &r->gpu.tensors[r->g->outputs[k]];
        ok = (first[k] = malloc(t->bytes ? t->bytes : 1)) != NULL;
        if (ok)
            memcpy(first[k], t->data, t->bytes);
    }
    gpu_report_free(&r->rep);
    char engines[sizeof out->engines];
    memcpy(engines, out->engines, sizeof engines);
    ok = ok && dh_gpu_run(r, o, out) == XDNN_OK;
    memcpy(out->engines, engines, sizeof engines);
    for (size_t k = 0; ok && k < no; k++) {
        const host_tensor *t = &r->gpu.tensors[r->g->outputs[k]];
        ok = memcmp(first[k], t->data, t->bytes) == 0;
    }
    *n += (size_t)snprintf(out->msg + *n, *n < sizeof out->msg ? sizeof out->msg - *n : 0, "%s",
                           ok ? " (a second run gave the same bytes)" : " (a second run gave other bytes)");
    for (size_t k = 0; first && k < no; k++)
        free(first[k]);
    free(first);
    return ok;
}

static void run_case(int i, dh_outcome *out)
{
    const tcase *c = &cases[i];
    dh_case_run r = {0};
    xdnn_status s = dh_case_begin(&r, c->id, c->text, c->kind != CK_OOB, out);
    xgraph *g = r.g;
    if (s != XDNN_OK)
        goto done;
    if (opts.dry) {
        s = dh_dry_select(g, out->engines, sizeof out->engines, r.d);
        out->ok = s == XDNN_OK;
        snprintf(out->msg, sizeof out->msg, "(dry: reference ran, engines selected, not run)");
        goto done;
    }
    gpu_run_opts o = {.warmup = 0, .iters = 1, .log = stderr, .verbose = getenv("DIFFTEST_VERBOSE") ? 1 : 0};
    s = dh_gpu_run(&r, &o, out);
    if (s != XDNN_OK)
        goto done;
    if (c->kind == CK_OOB) {
        out->ok = oob_check(c, &r, out->msg, sizeof out->msg);
        goto done;
    }
    out->ok = true;
    size_t n = 0;
    for (size_t k = 0; k < g->noutputs; k++) {
        int t = g->outputs[k];
        const host_tensor *ref = &r.cpu.tensors[t];
        double rt = c->kind == CK_EXACT ? 0 : tol_of(ref->dtype);
        /* atol: a fraction of the output's scale (a loss near 0 has no useful relative error) */
        dh_rule rule = {.rtol = rt, .atol = rt * dh_tensor_absmax(ref), .require_nonzero = true};
        out->ok &= dh_compare_output(&r, t, &rule, out->msg, sizeof out->msg, &n, NULL);
    }
    if (c->twice && out->ok)
        out->ok = same_twice(&r, &o, out, &n);
done:
    dh_case_end(&r, c->id, out->ok);
}

int main(int argc, char **argv)
{
    dh_parse_args(argc, argv, false, &opts);
    cases = calloc(MAX_CASES, sizeof *cases);
    if (!cases)
        return 2;
    gather_cases();
    view_cases();
    one_hot_cases();
    arg_cases();
    arg_rule_cases();
    xent_cases();
    xent_inf_cases();
    bnvar_cases();
    oob_cases();
    dh_tester t = {.name = "difftest_index", .ncases = ncases, .case_id = case_id, .case_text = case_text,
                   .run_case = run_case};
    int rc = dh_run(&t, &opts);
    free(cases);
    return rc;
}
