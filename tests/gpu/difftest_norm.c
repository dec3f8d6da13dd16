/* difftest_norm.c — the differential tester for the gpunorm engines:
 * norm_welford (batch/layer/rms/group/instance norm fwd+bwd, softmax_bwd),
 * copy_strided (reshape/permute/broadcast/slice/concat/split/pad),
 * conv + batchnorm pairs with genstats (the conv's store writes the statistics) and
 * rng_philox (dropout, rng), and for plans built with const_weights
 * (const/).  Each case is a tiny .dnn graph run by the CPU reference and the GPU on the same Philox inputs; every output is compared
 * with METHOD.md's per-dtype tolerances.  One line per case, then
 * "N passed, N failed".  Sweeps: odd sizes, batch 1, NCHW and NHWC, @col /
 * @perm / padded @strides inputs and outputs, f32/f16/bf16.
 * Usage: difftest_norm [--quick] [--bench] [--list] [--dry] [FILTER]
 *   --quick  reduced sweep (for compute-sanitizer)
 *   --bench  time the torch_baseline shapes on the GPU only (median of 50)
 *   --dry    no GPU: CPU reference + engine selection only
 * Built and run by tests/gpu/run.sh BUILD --only norm. */
#include "diffharness.h"

#include "core/exec.h"
#include "data/data.h"
#include "gpu/eng_norm.h"
#include "gpu/engine.h"
#include "gpu/gpu.h"
#include "gpu/lower.h"
#include "ops/op.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_CASES = 4096, TEXT_MAX = 3072 };

typedef struct tcase {
    char id[192];
    char text[TEXT_MAX];
    double tol_scale;
    bool rel_only; /* atol 0: results near the bottom of the range compared by their relative error alone */
    char env[96]; /* "NAME=VALUE ..." set while the case is planned and run */
} tcase;

static tcase *cases;
static int ncases;
static dh_opts opts;
/* what add_case gives the cases being added: a prefix of their ids and their environment (cl1_cases) */
static const char *case_prefix = "", *case_env = "";

__attribute__((format(printf, 3, 4))) static void add_case(const char *id, double tol_scale, const char *fmt, ...)
{
    if (ncases >= MAX_CASES) { /* a case dropped silently would be a test that cannot fail */
        fprintf(stderr, "%s: more than %d cases: raise MAX_CASES\n", id, (int)MAX_CASES);
        exit(2);
    }
    tcase *c = &cases[ncases++];
    snprintf(c->id, sizeof c->id, "%s%s", case_prefix, id);
    snprintf(c->env, sizeof c->env, "%s", case_env);
    c->tol_scale = tol_scale;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->text, sizeof c->text, fmt, ap);
    va_end(ap);
}

static const char *const dts[] = {"f32", "f16", "bf16"};

/* "[2, 3, 5]" and "2x3x5" */
static void shp(char *buf, size_t len, int rank, const int *d)
{
    size_t n = (size_t)snprintf(buf, len, "[");
    for (int i = 0; i < rank; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%d", i ? ", " : "", d[i]);
    snprintf(buf + n, len - n, "]");
}
static void sid(char *buf, size_t len, int rank, const int *d)
{
    size_t n = 0;
    buf[0] = 0;
    for (int i = 0; i < rank; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%d", i ? "x" : "", d[i]);
}

/* The texts of one shape row {rank, dims...}: "[2, 3, 5]", "2x3x5" and the channel dim "[3]". */
typedef struct shape_txt {
    int r;
    const int *d;
    char s[64], id[64], ch[32];
} shape_txt;

static shape_txt shape_of(const int *row)
{
    shape_txt t;
    t.r = row[0];
    t.d = &row[1];
    shp(t.s, sizeof t.s, t.r, t.d);
    sid(t.id, sizeof t.id, t.r, t.d);
    snprintf(t.ch, sizeof t.ch, "[%d]", t.d[1]);
    return t;
}

/* ---- norms */

static void layer_cases(void)
{
    /* rows of <= 2048 run 8 elements per thread, longer ones 32 (norm.cu v2): 2049 and 2052 sit just above */
    static const int shapes[][4] = {{2, 1, 7},       {2, 3, 17},       {3, 2, 5, 64}, {2, 33, 1000},
                                    {2, 2, 9000},    {3, 1, 4, 4096},  {2, 5, 2049},  {2, 3, 2052}};
    int nsh = opts.quick ? 3 : 8;
    for (int si = 0; si < nsh; si++) {
        int r = shapes[si][0];
        const int *d = &shapes[si][1];
        char s[64], id[64], last[32];
        shp(s, sizeof s, r, d);
        sid(id, sizeof id, r, d);
        snprintf(last, sizeof last, "[%d]", d[r - 1]);
        for (int ti = 0; ti < 3; ti++) {
            const char *t = dts[ti];
            char name[192];
            snprintf(name, sizeof name, "layernorm/infer/%s/%s", t, id);
            add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s%s;\n  weight s: %s%s;\n  weight b: %s%s;\n"
                              "  y = layernorm(x, s, b, eps=1e-5);\n  output y: %s;\n}\n", si * 3 + ti, t, s, t, last, t, last, t);
            snprintf(name, sizeof name, "layernorm/train+bwd/%s/%s", t, id);
            add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s%s;\n  input dy: %s%s;\n  weight s: %s%s;\n"
                              "  weight b: %s%s;\n  y, m, iv = layernorm(x, s, b);\n"
                              "  dx, ds, db = layernorm_bwd(dy, x, s, m, iv);\n  output y: %s, m, iv, dx: %s, ds: f32, db: f32;\n}\n",
                     si * 5 + ti, t, s, t, s, t, last, t, last, t, t);
            snprintf(name, sizeof name, "rmsnorm/train+bwd/%s/%s", t, id);
            add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s%s;\n  input dy: %s%s;\n  weight s: %s%s;\n"
                              "  y, ir = rmsnorm(x, s);\n  dx, ds = rmsnorm_bwd(dy, x, s, ir);\n"
                              "  output y: %s, ir, dx: %s, ds: f32;\n}\n",
                     si * 7 + ti, t, s, t, s, t, last, t, t);
            if (opts.quick)
                continue;
            snprintf(name, sizeof name, "rmsnorm/bias+bwd3/%s/%s", t, id);
            add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s%s;\n  input dy: %s%s;\n  weight s: %s%s;\n"
                              "  weight b: %s%s;\n  y, ir = rmsnorm(x, s, b, eps=1e-3);\n  dx, ds, db = rmsnorm_bwd(dy, x, s, ir);\n"
                              "  output y: %s, dx: %s, ds: f32, db: f32;\n}\n",
                     si * 11 + ti, t, s, t, s, t, last, t, last, t, t);
        }
        if (r >= 3 && !opts.quick) {
            /* two trailing axes, a strided (@col-like permuted) input, one-element scale */
            char two[32], name[192];
            snprintf(two, sizeof two, "[%d, %d]", d[r - 2], d[r - 1]);
            snprintf(name, sizeof name, "layernorm/axes2+perm-in/f32/%s", id);
            char perm[64];
            snprintf(perm, sizeof perm, r == 3 ? "@perm(2, 0, 1)" : "@perm(3, 2, 0, 1)");
            add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: f32%s %s;\n  input dy: f32%s %s;\n"
                              "  weight s: f32%s;\n  weight b: f32[1];\n  y, m, iv = layernorm(x, s, b, axes=[-2, -1]);\n"
                              "  dx, ds, db = layernorm_bwd(dy, x, s, m, iv, axes=[-1, -2]);\n"
                              "  output y: f32 @perm(%s), m, iv, dx, ds, db;\n}\n",
                     si, s, perm, s, perm, two, r == 3 ? "1, 2, 0" : "0, 3, 1, 2");
            snprintf(name, sizeof name, "layernorm/scalar-scale/bf16/%s", id);
            add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: bf16%s;\n  input dy: bf16%s;\n  weight s: f32[1];\n"
                              "  weight b: f32[1];\n  y, m, iv = layernorm(x, s, b);\n"
                              "  dx, ds, db = layernorm_bwd(dy, x, s, m, iv);\n  output y: bf16, dx: bf16, ds, db;\n}\n",
                     si + 40, s, s);
        }
    }
    /* more rows than the fused row backward has blocks (ng_launch_row_bwd_pg: each block walks
     * several rows and keeps the dscale/dbias partials of its columns across them); D = 4096
     * (16 per thread) and 6000 (32 per thread), dscale in x's dtype as a Llama block has it */
    static const int many[][3] = {{2, 1500, 1024}, {4100, 1, 64}, {1, 1200, 4096}, {1, 1100, 6000}};
    for (int si = 0; si < (opts.quick ? 2 : 4); si++) {
        const char *t = dts[si % 3];
        char s[64], id[64], last[32], name[192];
        shp(s, sizeof s, 3, many[si]);
        sid(id, sizeof id, 3, many[si]);
        snprintf(last, sizeof last, "[%d]", many[si][2]);
        snprintf(name, sizeof name, "rmsnorm/many-rows+bwd/%s/%s", t, id);
        add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s%s;\n  input dy: %s%s;\n  weight s: %s%s;\n"
                          "  y, ir = rmsnorm(x, s);\n  dx, ds = rmsnorm_bwd(dy, x, s, ir);\n"
                          "  output dx: %s, ds: %s;\n}\n",
                 si + 90, t, s, t, s, t, last, t, t);
        snprintf(name, sizeof name, "layernorm/many-rows+bwd/%s/%s", t, id);
        add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s%s;\n  input dy: %s%s;\n  weight s: %s%s;\n"
                          "  weight b: %s%s;\n  y, m, iv = layernorm(x, s, b);\n"
                          "  dx, ds, db = layernorm_bwd(dy, x, s, m, iv);\n  output dx: %s, ds: f32, db: f32;\n}\n",
                 si + 95, t, s, t, s, t, last, t, last, t);
    }
}

static void batch_cases(void)
{
    static const int shapes[][6] = {{4, 1, 3, 5, 7}, {4, 4, 16, 9, 9}, {2, 6, 5}, {4, 2, 64, 33, 7}, {5, 2, 3, 4, 5, 3}};
    int nsh = opts.quick ? 2 : 5;
    for (int si = 0; si < nsh; si++) {
        int r = shapes[si][0];
        const int *d = &shapes[si][1];
        int r5 = r == 5 ? 1 : 0;
        (void)r5;
        char s[64], id[64], ch[32], ch4[48];
        shp(s, sizeof s, r, d);
        sid(id, sizeof id, r, d);
        snprintf(ch, sizeof ch, "[%d]", d[1]);
        if (r == 4)
            snprintf(ch4, sizeof ch4, "[1, %d, 1, 1]", d[1]);
        else
            snprintf(ch4, sizeof ch4, "[%d]", d[1]);
        const char *layouts[] = {"", r == 4 ? "@nhwc" : r == 5 ? "@perm(0, 2, 3, 4, 1)" : "@col"};
        for (int li = 0; li < 2; li++) {
            const char *lay = layouts[li];
            const char *lname = li ? "cl" : "cf";
            for (int ti = 0; ti < 3; ti++) {
                const char *t = dts[ti];
                if (opts.quick && ti == 2)
                    continue;
                char name[192];
                snprintf(name, sizeof name, "batchnorm/train5+bwd/%s/%s/%s", lname, t, id);
                add_case(name, 2,
                         "dnn 1;\ngraph g(seed=%d) {\n  input x: %s%s %s;\n  input dy: %s%s %s;\n  weight s: f32%s;\n"
                         "  weight b: f32%s;\n  weight rm: f32%s;\n  weight rv: f32%s = uniform(0.5, 2.0);\n"
                         "  y, m, iv, rmn, rvn = batchnorm(x, s, b, running_mean=rm, running_var=rv, momentum=0.25);\n"
                         "  dx, ds, db = batchnorm_bwd(dy, x, s, m, iv);\n"
                         "  output y: %s %s, m, iv, rmn, rvn, dx: %s, ds, db;\n}\n",
                         si * 13 + ti + li, t, s, lay, t, s, lay, ch4, ch4, ch, ch, t, lay, t);
                if (opts.quick)
                    continue;
                snprintf(name, sizeof name, "batchnorm/train3+infer/%s/%s/%s", lname, t, id);
                add_case(name, 2,
                         "dnn 1;\ngraph g(seed=%d) {\n  input x: %s%s %s;\n  weight s: f32%s;\n  weight b: %s%s;\n"
                         "  y, m, iv = batchnorm(x, s, b, eps=1e-3);\n  z = batchnorm_infer(x, s, b, m, iv);\n"
                         "  output y: %s, m, iv, z: f32;\n}\n",
                         si * 17 + ti + li, t, s, lay, ch, t, ch, t);
            }
        }
        if (!opts.quick) {
            char name[192];
            snprintf(name, sizeof name, "batchnorm/scalar-scale+bwd/f32/%s", id);
            add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: f32%s;\n  input dy: f32%s;\n  weight s: f32[1];\n"
                              "  weight b: f32[1];\n  y, m, iv = batchnorm(x, s, b);\n"
                              "  dx, ds, db = batchnorm_bwd(dy, x, s, m, iv);\n  output y, m, iv, dx, ds, db;\n}\n",
                     si + 70, s, s);
        }
    }
}

/* batchnorm over channels-last x (kernels/norm_cl.cu): C not a multiple of
 * the 16-byte vector (scalar path), one row, a prime row count, several
 * splits, more than 256 channels (several channel blocks), [N, C] with C
 * contiguous, rows padded past C (@strides), the fused relu, and the
 * backward with dscale / dbias from the row sums. */
static void cl_cases(void)
{
    static const int shapes[][5] = {{4, 1, 13, 1, 1}, {4, 3, 20, 7, 11}, {4, 1, 24, 1, 4099},
                                    {4, 2, 72, 67, 61}, {4, 2, 520, 5, 7}, {2, 131, 40}};
    int nsh = opts.quick ? 3 : 6;
    for (int si = 0; si < nsh; si++) {
        shape_txt st = shape_of(shapes[si]);
        int r = st.r;
        const int *d = st.d;
        const char *s = st.s, *id = st.id, *ch = st.ch;
        const char *lay = r == 4 ? "@nhwc" : "";
        for (int ti = 0; ti < 3; ti++) {
            const char *t = dts[ti], *pt = ti == 2 && si == 1 ? t : "f32"; /* parameters of x's dtype once */
            char name[192], dxo[64];
            snprintf(name, sizeof name, "batchnorm-cl/train5+relu+bwd/%s/%s", t, id);
            snprintf(dxo, sizeof dxo, ", dx: %s %s, ds", t, lay);
            /* x off zero (the statistics' shift matters).  One row has no unbiased running
             * variance and a zero dx / dscale (only dbias is compared).  dscale = sum dy xhat
             * moves by ulp(mean) * inv * sum dy: the tolerance grows with sqrt(M). */
            int M = d[0] * (r == 4 ? d[2] * d[3] : 1);
            bool run = M > 1;
            double ts = sqrt((double)M) / 32;
            add_case(name, 2 * (ts > 1 ? ts : 1),
                     "dnn 1;\ngraph g(seed=%d) {\n  input x: %s%s %s = uniform(4.0, 7.0);\n  input dy: %s%s %s;\n"
                     "  weight s: %s%s = uniform(0.5, 1.5);\n  weight b: %s%s = uniform(-0.5, 0.5);\n"
                     "  weight rm: f32%s;\n  weight rv: f32%s = uniform(0.5, 2.0);\n"
                     "  y0, m, iv%s = batchnorm(x, s, b%s);\n"
                     "  y = relu(y0);\n  dx, ds, db = batchnorm_bwd(dy, x, s, m, iv);\n"
                     "  output y: %s %s, m, iv%s%s, db;\n}\n",
                     300 + si * 7 + ti, t, s, lay, t, s, lay, pt, ch, pt, ch, ch, ch, run ? ", rmn, rvn" : "",
                     run ? ", running_mean=rm, running_var=rv, momentum=0.25" : "", t, lay, run ? ", rmn, rvn" : "",
                     run ? dxo : "");
        }
    }
    if (opts.quick)
        return;
    /* rows padded past C: [N, C] rows of 48 elements holding 40 channels */
    for (int ti = 0; ti < 3; ti++) {
        const char *t = dts[ti];
        char name[192];
        snprintf(name, sizeof name, "batchnorm-cl/padded-rows/%s/97x40", t);
        add_case(name, 2,
                 "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[97, 40] @strides(48, 1);\n  input dy: %s[97, 40];\n"
                 "  weight s: f32[40];\n  weight b: f32[40];\n  y, m, iv = batchnorm(x, s, b);\n"
                 "  dx, ds, db = batchnorm_bwd(dy, x, s, m, iv);\n  output y: %s, m, iv, dx: %s, ds, db;\n}\n",
                 330 + ti, t, t, t, t);
    }
}

static void group_cases(void)
{
    static const int shapes[][5] = {{4, 1, 4, 5, 7}, {4, 2, 6, 9, 9}, {3, 3, 8, 31, 0}, {4, 2, 32, 16, 16}};
    static const int groups[] = {2, 3, 4, 8};
    int nsh = opts.quick ? 2 : 4;
    for (int si = 0; si < nsh; si++) {
        shape_txt st = shape_of(shapes[si]);
        int r = st.r;
        const char *s = st.s, *id = st.id, *ch = st.ch;
        const char *lay = r == 4 && si % 2 ? "@nhwc" : "";
        for (int ti = 0; ti < 3; ti++) {
            const char *t = dts[ti];
            char name[192];
            snprintf(name, sizeof name, "groupnorm/g%d+bwd/%s/%s%s", groups[si], t, id, *lay ? "/nhwc" : "");
            add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s%s %s;\n  input dy: %s%s %s;\n  weight s: f32%s;\n"
                              "  weight b: f32%s;\n  y, m, iv = groupnorm(x, s, b, groups=%d);\n"
                              "  dx, ds, db = groupnorm_bwd(dy, x, s, m, iv, groups=%d);\n"
                              "  output y: %s, m, iv, dx: %s, ds, db;\n}\n",
                     si * 19 + ti, t, s, lay, t, s, lay, ch, ch, groups[si], groups[si], t, t);
            if (opts.quick)
                continue;
            snprintf(name, sizeof name, "instancenorm/fwd1+train+bwd/%s/%s%s", t, id, *lay ? "/nhwc" : "");
            add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s%s %s;\n  input dy: %s%s;\n  weight s: f32%s;\n"
                              "  weight b: f32%s;\n  z = instancenorm(x, s, b);\n  y, m, iv = instancenorm(x, s, b);\n"
                              "  dx, ds, db = instancenorm_bwd(dy, x, s, m, iv);\n"
                              "  output z: %s %s, m, iv, dx: %s, ds, db;\n}\n",
                     si * 23 + ti, t, s, lay, t, s, ch, ch, t, r == 4 ? "@nhwc" : "", t);
        }
    }
}

static void softmax_bwd_cases(void)
{
    static const int shapes[][4] = {{2, 1, 7}, {2, 33, 130}, {3, 4, 5, 6}, {2, 64, 4097}};
    int nsh = opts.quick ? 2 : 4;
    for (int si = 0; si < nsh; si++) {
        int r = shapes[si][0];
        const int *d = &shapes[si][1];
        char s[64], id[64];
        shp(s, sizeof s, r, d);
        sid(id, sizeof id, r, d);
        for (int ti = 0; ti < 3; ti++) {
            const char *t = dts[ti];
            for (int ax = 0; ax < 2; ax++) {
                int axis = ax ? 0 : -1;
                if (ax && d[0] == 1) /* softmax over a size-1 axis: the gradient is 0 */
                    continue;
                char name[192];
                snprintf(name, sizeof name, "softmax_bwd/axis%d/%s/%s", axis, t, id);
                add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s%s;\n  input dy: %s%s;\n"
                                  "  y = softmax(x, axis=%d);\n  dx = softmax_bwd(dy, y, axis=%d);\n"
                                  "  l = log_softmax(x, axis=%d);\n  dl = log_softmax_bwd(dy, l, axis=%d);\n"
                                  "  output dx: %s, dl: %s;\n}\n",
                         si * 29 + ti + ax, t, s, t, s, axis, axis, axis, axis, t, t);
            }
        }
    }
}

/* ---- tensor copies */

static void copy_cases(void)
{
    for (int ti = 0; ti < 3; ti++) {
        const char *t = dts[ti];
        char name[192];
        snprintf(name, sizeof name, "copy/permute+reshape/%s", t);
        add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[2, 3, 5, 7];\n"
                          "  p = permute(x, perm=[0, 2, 3, 1]);\n  r = reshape(p, dims=[10, -1]);\n"
                          "  q = reshape(x, dims=[6, 35]);\n  output p: %s, r: %s, q: %s @col;\n}\n",
                 ti, t, t, t, t);
        snprintf(name, sizeof name, "copy/reshape-strided/%s", t);
        add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[3, 4, 6] @strides(40, 8, 1);\n"
                          "  r = reshape(x, dims=[2, 36]);\n  output r: %s @col;\n}\n", ti + 3, t, t);
        snprintf(name, sizeof name, "copy/slice+broadcast/%s", t);
        add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[5, 9, 4];\n  input v: %s[1, 4];\n"
                          "  a = slice(x, axis=1, start=1, end=8, step=2);\n  b = slice(x, axis=0, step=-2);\n"
                          "  c = slice(x, axis=-1, start=-3);\n  d = broadcast(v, dims=[3, 5, 4]);\n"
                          "  output a: %s, b: %s @perm(2, 0, 1), c: %s, d: %s;\n}\n",
                 ti + 6, t, t, t, t, t, t);
        snprintf(name, sizeof name, "copy/concat+split/%s", t);
        add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input a: %s[2, 3, 8];\n  input b: %s[2, 5, 8] @col;\n"
                          "  input c: %s[2, 1, 8];\n  y = concat(a, b, c, axis=1);\n"
                          "  s0, s1, s2 = split(y, axis=1, sizes=[4, 3, 2]);\n  e0, e1 = split(a, axis=-1);\n"
                          "  output y: %s, s0: %s, s1: %s @col, s2: %s, e0: %s, e1: %s;\n}\n",
                 ti + 9, t, t, t, t, t, t, t, t, t);
        const char *modes[] = {"constant", "reflect", "replicate", "circular"};
        for (int mi = 0; mi < 4; mi++) {
            snprintf(name, sizeof name, "copy/pad-%s/%s", modes[mi], t);
            add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[2, 3, 5, 4] @nhwc;\n"
                              "  y = pad(x, pads=[[0, 0], [1, 2], [2, 1], [3, 3]], mode=\"%s\", value=0.75);\n"
                              "  z = pad(x, pads=1, mode=\"%s\");\n  output y: %s, z: %s @nhwc;\n}\n",
                     ti * 4 + mi, t, modes[mi], modes[mi], t, t);
        }
    }
    add_case("copy/convert-f32-to-bf16+big", 1, "dnn 1;\ngraph g(seed=3) {\n  input x: f32[64, 257, 33];\n"
                                                "  y = permute(x, perm=[2, 0, 1]);\n  z = slice(x, axis=2, start=1);\n"
                                                "  output y: bf16, z: f16;\n}\n");
    add_case("copy/i32+bool", 1, "dnn 1;\ngraph g(seed=4) {\n  input x: f32[6, 10];\n  m = gt(x, 0.0);\n"
                                 "  i = cast(x * 100.0, dtype=i32);\n  a = permute(m, perm=[1, 0]);\n"
                                 "  b = concat(i, i, axis=0);\n  output a, b;\n}\n");
    add_case("copy/vector-16B/f16", 1, "dnn 1;\ngraph g(seed=5) {\n  input x: f16[4, 64, 96];\n"
                                       "  y = concat(x, x, axis=1);\n  z = slice(x, axis=2, start=8, end=72);\n"
                                       "  output y, z;\n}\n");
}

/* ---- views as operands (src/gpu/views.c): split / reshape / permute / slice /
 * broadcast results that are not graph outputs are read in place by the
 * pointwise, reduce, softmax, matmul and sdpa engines; those that feed
 * layernorm stay copies.  Offsets are 256-byte aligned in every dtype. */
static void view_cases(void)
{
    for (int ti = 0; ti < 3; ti++) {
        const char *t = dts[ti];
        char name[192];
        snprintf(name, sizeof name, "view/split-consumers/%s", t);
        add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[3, 5, 384];\n"
                          "  a, b, c = split(relu(x) - 0.25, axis=2, parts=3);\n  y1 = a + c * 2.0;\n"
                          "  y2 = softmax(b, axis=1);\n  y3 = reduce(permute(b, perm=[2, 0, 1]), axes=[0], op=\"max\");\n"
                          "  y4 = matmul(a, permute(c, perm=[0, 2, 1]));\n"
                          "  output y1: %s, y2: %s, y3: %s, y4: f32;\n}\n",
                 40 + ti, t, t, t, t);
        snprintf(name, sizeof name, "view/slice-step+broadcast/%s", t);
        add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[7, 9, 256];\n  input v: %s[1, 9, 1];\n"
                          "  s = slice(x * 1.5, axis=2, start=128, step=3);\n"
                          "  y1 = relu(s) + broadcast(v, dims=[7, 9, 43]);\n"
                          "  y2 = exp(slice(x * 0.5, axis=0, start=0, step=2));\n  output y1: %s, y2: %s;\n}\n",
                 43 + ti, t, t, t, t);
        snprintf(name, sizeof name, "view/relayout+layernorm/%s", t);
        add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[2, 4, 13, 16];\n  weight s: %s[64];\n"
                          "  weight b: %s[64];\n  weight s2: %s[16];\n  weight b2: %s[16];\n  o = x * 2.0 + 1.0;\n"
                          "  y1 = layernorm(reshape(permute(o, perm=[0, 2, 1, 3]), dims=[2, 13, 64]), s, b, axes=[-1]);\n"
                          "  q = slice(x, axis=0, start=1);\n  y2 = layernorm(reshape(q, dims=[1, 52, 16]), s2, b2, axes=[-1]);\n"
                          "  y3 = layernorm(slice(o, axis=2, start=8), s2, b2, axes=[-1]);\n"
                          "  output y1: %s, y2: %s, y3: %s;\n}\n",
                 46 + ti, t, t, t, t, t, t, t, t);
    }
    add_case("view/attention/bf16", 4, "dnn 1;\ngraph g(seed=49) {\n  input x: bf16[2, 37, 128];\n"
                                        "  weight w: bf16[128, 384] = randn(std=0.05);\n"
                                        "  qkv = matmul(x, w);\n  q, k, v = split(qkv, axis=2, parts=3);\n"
                                        "  qh = permute(reshape(q, dims=[2, 37, 4, 32]), perm=[0, 2, 1, 3]);\n"
                                        "  kh = permute(reshape(k, dims=[2, 37, 4, 32]), perm=[0, 2, 1, 3]);\n"
                                        "  vh = permute(reshape(v, dims=[2, 37, 4, 32]), perm=[0, 2, 1, 3]);\n"
                                        "  o = sdpa(qh, kh, vh, causal=true);\n"
                                        "  y = reshape(permute(o, perm=[0, 2, 1, 3]), dims=[2, 37, 128]) * 1.0;\n"
                                        "  output y: bf16;\n}\n");
}

/* ---- a forward norm + the relu / silu / gelu that alone reads its y: one
 * partition (partition.c), the activation applied before the store, in the
 * row kernels and the apply kernel; y also read elsewhere: no fusion. */
static void fused_act_cases(void)
{
    for (int ti = 0; ti < 3; ti++) {
        const char *t = dts[ti];
        char name[192];
        snprintf(name, sizeof name, "fuse/layernorm+gelu/%s", t);
        add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[3, 7, 1000];\n  weight s: %s[1000];\n"
                          "  weight b: %s[1000];\n  y = gelu(layernorm(x, s, b, axes=[-1]));\n"
                          "  z = gelu(layernorm(x, s, b, axes=[-1]), approx=\"tanh\");\n  output y: %s, z: %s;\n}\n",
                 70 + ti, t, t, t, t, t);
        snprintf(name, sizeof name, "fuse/rmsnorm+silu/%s", t);
        add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[5, 4096];\n  weight s: %s[4096];\n"
                          "  y = silu(rmsnorm(x, s, axes=[-1]));\n  output y: %s;\n}\n", 73 + ti, t, t, t);
        snprintf(name, sizeof name, "fuse/batchnorm+relu/%s/nhwc", t);
        add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[4, 24, 5, 7] @nhwc;\n"
                          "  weight s: f32[24] = uniform(0.5, 1.5);\n  weight b: f32[24] = uniform(-0.5, 0.5);\n"
                          "  weight rm: f32[24] = fill(0.0);\n  weight rv: f32[24] = fill(1.0);\n"
                          "  y0, m, iv, rmn, rvn = batchnorm(x, s, b, running_mean=rm, running_var=rv);\n"
                          "  y = relu(y0);\n  output y: %s @nhwc, m, iv, rmn, rvn;\n}\n", 76 + ti, t, t);
        snprintf(name, sizeof name, "fuse/groupnorm+silu/%s", t);
        add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[2, 12, 9, 5];\n  weight s: f32[12];\n"
                          "  weight b: f32[12];\n  y = silu(groupnorm(x, s, b, groups=4));\n  output y: %s;\n}\n",
                 79 + ti, t, t);
        snprintf(name, sizeof name, "fuse/not-y-output/%s", t);
        add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[6, 64];\n  weight s: %s[64];\n"
                          "  weight b: %s[64];\n  y = layernorm(x, s, b, axes=[-1]);\n  z = relu(y);\n"
                          "  output y: %s, z: %s;\n}\n", 82 + ti, t, t, t, t, t);
    }
}

/* ---- a batchnorm + the residual add that alone reads its y + the activation
 * of the sum (a ResNet block's relu(z3 + x)): one partition (partition.c), y
 * rounded to its dtype, r added, the activation applied, only the sum's
 * activation stored.  Channels last (norm_cl.cu) with 16-byte vectors, odd C
 * (scalar), C over 256 (several channel blocks); NCHW and inference
 * (k_apply); r as first or second operand; r of another layout than x (the
 * generic apply); gelu; no activation; z read twice (no fusion); a training
 * block with the projection shortcut relu(z3 + zp) and the backward. */
/* A case of residual_cases: the graph (seed, intermediates of dtype t), scale
 * and bias of `ch` channels, then `body` (printf-style). */
__attribute__((format(printf, 6, 7))) static void res_case(const char *id, double tol, int seed, const char *t,
                                                           const char *ch, const char *body, ...)
{
    char text[TEXT_MAX];
    int n = snprintf(text, sizeof text,
                     "dnn 1;\ngraph g(seed=%d, intermediate=%s) {\n"
                     "  weight s: f32%s = uniform(0.5, 1.5);\n  weight b: f32%s = uniform(-0.5, 0.5);\n",
                     seed, t, ch, ch);
    va_list ap;
    va_start(ap, body);
    vsnprintf(text + n, sizeof text - (size_t)n, body, ap);
    va_end(ap);
    add_case(id, tol, "%s", text);
}

static void residual_cases(void)
{
    static const int shapes[][5] = {{4, 2, 40, 7, 9}, {4, 3, 13, 5, 11}, {4, 2, 520, 5, 7}};
    const char *nchw = "[2, 12, 9, 7]", *nc = "[12]", *c40 = "[3, 40, 5, 7]";
    for (int ti = 0; ti < 3; ti++) {
        const char *t = dts[ti];
        char name[192];
        for (int si = 0; si < 3; si++) {
            shape_txt st = shape_of(shapes[si]);
            snprintf(name, sizeof name, "fuse/batchnorm+residual+relu/%s/nhwc/%s", t, st.id);
            res_case(name, 2, 400 + 4 * si + ti, t, st.ch,
                     "  input c: %s%s @nhwc = uniform(-2.0, 3.0);\n  input x: %s%s @nhwc;\n"
                     "  weight rm: f32%s;\n  weight rv: f32%s = uniform(0.5, 2.0);\n"
                     "  z: @nhwc, m: f32, iv: f32, rmn: f32, rvn: f32 = batchnorm(c, s, b, running_mean=rm, "
                     "running_var=rv);\n  y: @nhwc = relu(%s);\n  output y: %s @nhwc, m, iv, rmn, rvn;\n}\n",
                     t, st.s, t, st.s, st.ch, st.ch, si == 1 ? "x + z" : "z + x", t);
        }
        snprintf(name, sizeof name, "fuse/batchnorm+residual+relu/%s/nchw", t);
        res_case(name, 2, 420 + ti, t, nc,
                 "  input c: %s%s = uniform(-2.0, 3.0);\n  input x: %s%s;\n  z, m, iv = batchnorm(c, s, b);\n"
                 "  y = relu(x + z);\n  output y: %s, m, iv;\n}\n", t, nchw, t, nchw, t);
        snprintf(name, sizeof name, "fuse/batchnorm+residual/%s/r-nchw-z-nhwc", t);
        res_case(name, 2, 423 + ti, t, nc,
                 "  input c: %s%s @nhwc = uniform(-2.0, 3.0);\n  input x: %s%s;\n"
                 "  z: @nhwc, m: f32, iv: f32 = batchnorm(c, s, b);\n  y: @nhwc = z + x;\n"
                 "  output y: %s @nhwc, m, iv;\n}\n", t, nchw, t, nchw, t);
        snprintf(name, sizeof name, "fuse/batchnorm_infer+residual+gelu/%s", t);
        res_case(name, 2, 426 + ti, t, nc,
                 "  input c: %s%s = uniform(-2.0, 3.0);\n  input x: %s%s;\n  weight mu: f32%s;\n"
                 "  weight va: f32%s = uniform(0.5, 2.0);\n  z = batchnorm_infer(c, s, b, mu, va);\n"
                 "  y = gelu(z + x, approx=\"tanh\");\n  output y: %s;\n}\n", t, nchw, t, nchw, nc, nc, t);
        snprintf(name, sizeof name, "fuse/batchnorm_infer+residual+relu/%s/nhwc", t);
        res_case(name, 2, 429 + ti, t, "[40]",
                 "  input c: %s%s @nhwc;\n  input x: %s%s @nhwc;\n  weight mu: f32[40];\n"
                 "  weight va: f32[40] = uniform(0.5, 2.0);\n  z: @nhwc = batchnorm_infer(c, s, b, mu, va);\n"
                 "  y: @nhwc = relu(x + z);\n  output y: %s @nhwc;\n}\n", t, c40, t, c40, t);
        snprintf(name, sizeof name, "fuse/batchnorm+residual/%s/z-read-twice", t);
        res_case(name, 2, 432 + ti, t, "[40]",
                 "  input c: %s%s @nhwc;\n  input x: %s%s @nhwc;\n"
                 "  z: @nhwc, m: f32, iv: f32 = batchnorm(c, s, b);\n  y: @nhwc = relu(z + x);\n"
                 "  w: @nhwc = z * 2.0;\n  output y: %s @nhwc, w: %s @nhwc;\n}\n", t, c40, t, c40, t, t);
        /* lib/resnet.dnn's projection block, without the convolutions: relu(z3 + zp), then the backward */
        snprintf(name, sizeof name, "net/batchnorm+residual/%s/projection-block", t);
        res_case(name, 4, 435 + ti, t, "[64]",
                 "  input c3: %s[2, 64, 7, 11] @nhwc = uniform(-2.0, 3.0);\n  input cp: %s[2, 64, 7, 11] @nhwc;\n"
                 "  input dy: %s[2, 64, 7, 11] @nhwc;\n  weight sp: f32[64] = uniform(0.5, 1.5);\n"
                 "  z3: @nhwc, m3: f32, v3: f32 = batchnorm(c3, s, b);\n"
                 "  zp: @nhwc, mp: f32, vp: f32 = batchnorm(cp, sp, b);\n  y: @nhwc = relu(z3 + zp);\n"
                 "  ds: @nhwc = relu_bwd(dy, y);\n  d3: @nhwc, g3: f32, b3: f32 = batchnorm_bwd(ds, c3, s, m3, v3);\n"
                 "  dp: @nhwc, gp: f32, bp: f32 = batchnorm_bwd(ds, cp, sp, mp, vp);\n"
                 "  output y: %s @nhwc, d3: %s @nhwc, g3, b3, dp: %s @nhwc, gp, bp;\n}\n", t, t, t, t, t, t);
    }
}

/* The persistent launch (kernels/norm_cl1.cu) leaves the batchnorm-cl/ and
 * fuse/ cases above to the three launches by default (they fit on chip
 * whole); these run them again through the three launches (XDNN_NORM_CL1=0,
 * whatever the default) and through the persistent
 * launch holding 0 or 3 rows a block (every other row read again), then
 * [5, 64, 33, 32] (40 rows a block on 132 SMs) held whole (forced: by
 * default what a block holds whole runs the three launches), and the two
 * sides of a re-read limit of 1 (XDNN_NORM_CL1_REREAD; the default for a
 * forward with a residual): a block holding 20 re-reads 20 (at the limit:
 * persistent), holding 19 re-reads 21 (past it: the three launches). */
static void cl1_cases(void)
{
    static const char *const runs[][2] = {{"three-launch/", "XDNN_NORM_CL1=0"},
                                           {"cl1-held0/", "XDNN_NORM_CL1=all XDNN_NORM_CL1_ROWS=0"},
                                           {"cl1-held3/", "XDNN_NORM_CL1=all XDNN_NORM_CL1_ROWS=3"}};
    for (int k = 0; k < 3; k++) {
        case_prefix = runs[k][0], case_env = runs[k][1];
        cl_cases();
        if (!opts.quick)
            residual_cases();
    }
    static const char *const sides[][2] = {{"held-all", "XDNN_NORM_CL1=all"}, {"limit-at", "XDNN_NORM_CL1_REREAD=1 XDNN_NORM_CL1_ROWS=20"},
                                            {"limit-past", "XDNN_NORM_CL1_REREAD=1 XDNN_NORM_CL1_ROWS=19"}};
    for (int k = 0; k < 3; k++) {
        case_prefix = "", case_env = sides[k][1];
        for (int ti = 0; ti < 3; ti++) {
            const char *t = dts[ti];
            char name[192];
            snprintf(name, sizeof name, "batchnorm-cl1/%s/%s/5x64x33x32", sides[k][0], t);
            res_case(name, 4, 450 + 3 * k + ti, t, "[64]",
                     "  input c: %s[5, 64, 33, 32] @nhwc = uniform(-2.0, 3.0);\n  input r: %s[5, 64, 33, 32] @nhwc;\n"
                     "  input dy: %s[5, 64, 33, 32] @nhwc;\n"
                     "  z: @nhwc, m: f32, iv: f32 = batchnorm(c, s, b);\n  y: @nhwc = relu(z + r);\n"
                     "  dx: @nhwc, ds: f32, db: f32 = batchnorm_bwd(dy, c, s, m, iv);\n"
                     "  output y: %s @nhwc, m, iv, dx: %s @nhwc, ds, db;\n}\n", t, t, t, t, t);
        }
    }
    case_prefix = case_env = "";
}

/* ---- warp rows (kernels/norm_warp.cu): a warp or 2 / 4 / 8 per row, 16-byte
 * chunks.  Row lengths at each boundary: under a chunk per lane (8), one
 * chunk per lane (256 f16), the 16 elements a lane one warp takes (512) and
 * just above (520: two warps), 1024 / 1032 (two / four), 2048 / 2056 (four /
 * eight), 4096 and the 8192 limit (8 warps, 2 / 4 chunks of 16-bit, 4 / 8 of
 * f32 a lane), 8200 above it (layer/rms: the split path; softmax:
 * reduce_nvrtc), a multiple of 4 not of 8 (f16:
 * norm.cu's block), padded rows whose stride keeps (1008) or breaks (1004)
 * 16-byte alignment; row counts that leave a block's last row groups empty.
 * Softmax rows also: lengths 1, 7, 17, 2049, 4097 (element loads), -inf in
 * x, and -inf from a mask (log(relu(u)): about half of each row masked, and
 * whole rows masked from a [R, 1] mask: NaN in the reference and the GPU
 * alike). */
enum { WR_NORM = 1, WR_SOFTMAX = 2, WR_MASKED = 4, WR_QUICK = 8 };

/* layer+rms (x, y, stats; f32 rms scale), layer+gelu / rms+silu (fused) */
static void warp_norm_row(int seed, const char *t, int R, int D)
{
    char name[192];
    snprintf(name, sizeof name, "warp-rows/layer+rms/%s/%dx%d", t, R, D);
    add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[%d, %d];\n  weight s: %s[%d];\n"
                      "  weight b: %s[%d];\n  weight s2: f32[%d];\n  y, m, iv = layernorm(x, s, b);\n"
                      "  z, ir = rmsnorm(x, s2, eps=1e-3);\n  output y: %s, m, iv, z: %s, ir;\n}\n",
             seed, t, R, D, t, D, t, D, D, t, t);
    if (opts.quick)
        return;
    snprintf(name, sizeof name, "warp-rows/layer+gelu,rms+silu/%s/%dx%d", t, R, D);
    add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[%d, %d];\n  weight s: %s[%d];\n"
                      "  weight b: f32[%d];\n  y = gelu(layernorm(x, s, b));\n"
                      "  z = silu(rmsnorm(x, s, b));\n  output y: %s, z: %s;\n}\n",
             seed + 1, t, R, D, t, D, D, t, t);
}

/* softmax + log_softmax; with WR_MASKED also -inf in x itself (draws below
 * the dtype's range round to -inf: f16 from -1e5, f32 / bf16 from -1e39) and
 * a mask computed in f32 (its 16-bit softmax reads f32 x and stays on
 * reduce_nvrtc; f32 takes the warp rows) */
static void warp_softmax_row(int seed, const char *t, int R, int D, bool masked)
{
    char name[192];
    snprintf(name, sizeof name, "warp-rows/softmax%s/%s/%dx%d", D > 1 ? "+log" : "", t, R, D);
    if (D == 1) /* log_softmax of one element is all zeros: a comparison of nothing */
        add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[%d, %d];\n  y = softmax(x, axis=-1);\n"
                          "  output y: %s;\n}\n", seed, t, R, D, t);
    else
        add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[%d, %d] = uniform(-4.0, 4.0);\n"
                          "  y = softmax(x, axis=-1);\n  l = log_softmax(x, axis=-1);\n  output y: %s, l: %s;\n}\n",
                 seed, t, R, D, t, t);
    if (!masked || D == 1)
        return;
    snprintf(name, sizeof name, "warp-rows/softmax+log/inf-inputs/%s/%dx%d", t, R, D);
    add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[%d, %d] = uniform(%s, 8.0);\n"
                      "  y = softmax(x, axis=-1);\n  l = log_softmax(x, axis=-1);\n  output y: %s, l: %s;\n}\n",
             seed + 1, t, R, D, strcmp(t, "f16") == 0 ? "-1e5" : "-1e39", t, t);
    snprintf(name, sizeof name, "warp-rows/softmax+log/masked/%s/%dx%d", t, R, D);
    add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[%d, %d];\n  input u: %s[%d, %d];\n"
                      "  input r: %s[%d, 1];\n  xm = x + log(relu(u));\n  xr = x + log(relu(r));\n"
                      "  y = softmax(xm, axis=-1);\n  l = log_softmax(xm, axis=-1);\n  z = softmax(xr, axis=1);\n"
                      "  output xm: %s, xr: %s, y: %s, l: %s, z: %s;\n}\n",
             seed + 2, t, R, D, t, R, D, t, R, t, t, t, t, t);
    /* +inf in x: log(relu(u) + relu(r)) subtracted, u <= 0 in ~1 of 11 draws and r ([R, 1]) <= 0 in a third of
     * the rows, so most rows hold none and the others one or several: such a row is NaN throughout, as in
     * PyTorch (it was NaN at the +inf and 0 elsewhere), and the rows beside it are untouched */
    snprintf(name, sizeof name, "warp-rows/softmax+log/plus-inf/%s/%dx%d", t, R, D);
    add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[%d, %d];\n  input u: %s[%d, %d] = uniform(-0.1, 1.0);\n"
                      "  input r: %s[%d, 1] = uniform(-0.5, 1.0);\n  xp = x - log(relu(u) + relu(r));\n"
                      "  y = softmax(xp, axis=-1);\n  l = log_softmax(xp, axis=-1);\n  output xp: %s, y: %s, l: %s;\n}\n",
             seed + 3, t, R, D, t, R, D, t, R, t, t, t);
    if (D > 64) /* the draws below would put a +inf in every long row: a comparison of NaN alone */
        return;
    /* the same on x as read (the 16-bit softmax above reads xp in f32, on reduce_nvrtc): ~6 % of the draws
     * round to +inf (f16 past 65520, bf16 / f32 past their max) */
    snprintf(name, sizeof name, "warp-rows/softmax+log/plus-inf-inputs/%s/%dx%d", t, R, D);
    add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[%d, %d] = uniform(-8.0, %s);\n"
                      "  y = softmax(x, axis=-1);\n  l = log_softmax(x, axis=-1);\n  output y: %s, l: %s;\n}\n",
             seed + 4, t, R, D, strcmp(t, "f16") == 0 ? "69000.0" : "3.6e38", t, t);
}

static void warp_row_cases(void)
{
    static const struct {
        int D, R;
        unsigned what;
    } rows[] = {
        {1, 5, WR_SOFTMAX | WR_QUICK},        {7, 9, WR_SOFTMAX | WR_MASKED | WR_QUICK},
        {8, 13, WR_NORM | WR_SOFTMAX | WR_MASKED | WR_QUICK},
        {17, 3, WR_SOFTMAX},                  {256, 11, WR_NORM | WR_SOFTMAX | WR_QUICK},
        {512, 5, WR_NORM | WR_SOFTMAX},       {520, 3, WR_NORM | WR_SOFTMAX},
        {1000, 7, WR_SOFTMAX | WR_MASKED},    {1004, 5, WR_NORM | WR_QUICK},
        {1024, 7, WR_NORM | WR_SOFTMAX},      {1032, 9, WR_NORM | WR_SOFTMAX},
        {2048, 11, WR_NORM},                  {2049, 3, WR_SOFTMAX},
        {2056, 6, WR_NORM | WR_SOFTMAX | WR_MASKED},
        {4096, 5, WR_NORM},                   {4097, 3, WR_SOFTMAX},
        {4104, 2, WR_SOFTMAX},                {8192, 3, WR_NORM | WR_SOFTMAX | WR_MASKED},
        {8200, 2, WR_NORM | WR_SOFTMAX},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if (opts.quick && !(rows[i].what & WR_QUICK))
            continue;
        for (int ti = 0; ti < 3; ti++) {
            int seed = 500 + (int)i * 10 + ti * 3;
            if (rows[i].what & WR_NORM)
                warp_norm_row(seed, dts[ti], rows[i].R, rows[i].D);
            if (rows[i].what & WR_SOFTMAX)
                warp_softmax_row(seed + 200, dts[ti], rows[i].R, rows[i].D,
                                 (rows[i].what & WR_MASKED) && (!opts.quick || rows[i].D == 8));
        }
    }
    for (int ti = 0; ti < 3 && !opts.quick; ti++) {
        const char *t = dts[ti];
        for (int pad = 1004; pad <= 1008; pad += 4) {
            char name[192];
            snprintf(name, sizeof name, "warp-rows/layernorm/padded-rows/%s/13x1000@%d", t, pad);
            add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[13, 1000] @strides(%d, 1);\n"
                              "  weight s: %s[1000];\n  weight b: %s[1000];\n  y = layernorm(x, s, b);\n"
                              "  output y: %s;\n}\n", 560 + ti + pad, t, pad, t, t, t);
        }
    }
    /* NaN in softmax rows (sqrt of x + c, c such that ~1/3 of the rows hold one: 0.98 (1 % of the elements) for
     * rows of 40, 3.35 (4e-4) for rows of 1000, so most rows stay finite and are compared): the reference's row is
     * all NaN.  The warp rows' max skips NaN as the reference's fmax and the sum
     * turns NaN; the generated form (reduce_nvrtc: the sqrt fused, or 16-bit rows) once zeroed the sum of a thread that met
     * only NaN, so a row's lone NaN gave finite neighbours. */
    for (int ti = 0; ti < 3; ti++)
        for (int di = 0; di < 2; di++) {
            const int D = di ? 1000 : 40, R = di ? 30 : 64;
            char name[192];
            snprintf(name, sizeof name, "warp-rows/softmax+log/nan/%s/%dx%d", dts[ti], R, D);
            const double c = di ? 3.35 : 0.98;
            add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[%d, %d];\n  s = sqrt(x + %g);\n"
                              "  y = softmax(s, axis=-1);\n  l = log_softmax(s, axis=-1);\n  output y: %s, l: %s;\n}\n",
                     580 + ti * 2 + di, dts[ti], R, D, c, dts[ti], dts[ti]);
            snprintf(name, sizeof name, "warp-rows/softmax/nan-f32-in/%s/%dx%d", dts[ti], R, D);
            add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: f32[%d, %d];\n"
                              "  y = softmax(sqrt(x + %g), axis=-1);\n  output y: %s;\n}\n",
                     590 + ti * 2 + di, R, D, c, dts[ti]);
        }
    for (int ti = 0; ti < 3 && !opts.quick; ti++) {
        const char *t = dts[ti];
        char name[192];
        snprintf(name, sizeof name, "warp-rows/softmax+log/strided-rank4/%s", t);
        add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[2, 1, 3, 1000] @strides(6012, 6012, 2004, 1);\n"
                          "  y = softmax(x, axis=3);\n  l = log_softmax(x, axis=-1);\n  output y: %s, l: %s;\n}\n",
                 690 + ti, t, t, t);
    }
}

/* ---- warp-row backward and the v2 forward (kernels/norm_warp_bwd.cu,
 * norm_warp.cu's k_warp_norm2, session 9): persistent row groups, rows staged
 * through shared memory.  Widths at the geometry's edges: a chunk of one lane
 * (8), 264 (one warp, two chunks), 768 (GPT; 16-bit forward one warp of 3
 * chunks, backward two warps of 2), 1024 / 2048 / 4096 (the backward's widest
 * 16-bit rows), 4104 (16-bit backward past them: norm.cu), f32 2048 / 2056
 * (its widest f32 row / past it); row counts past what one pass of the grid
 * holds (7001 x 64: one-warp groups; 1001 x 4096: eight-warp groups, each
 * group several rows, so the staging ring wraps and the dscale / dbias
 * partials gather several rows); dx alone (no parameter gradients: dscale
 * discarded, `_`) + a residual, dscale alone (rmsnorm), dbias alone, dscale +
 * dbias; forward
 * with f32 scale / bias (v1's element loads) and a scale of x's dtype.  Odd widths (1, 7,
 * 13, 769, 8191: not 16-byte rows, norm.cu's block kernels) beside them. */
static void warp_bwd_row(int seed, const char *t, int R, int D)
{
    char name[192], sh[48];
    snprintf(sh, sizeof sh, "[%d, %d]", R, D);
    snprintf(name, sizeof name, "warp-rows/bwd/layernorm+rmsnorm/%s/%dx%d", t, R, D);
    add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s%s;\n  input dy: %s%s;\n  weight s: %s[%d];\n"
                      "  weight b: %s[%d];\n  y, m, iv = layernorm(x, s, b);\n"
                      "  dx, ds, db = layernorm_bwd(dy, x, s, m, iv);\n  z, ir = rmsnorm(x, s);\n"
                      "  ex, es = rmsnorm_bwd(dy, x, s, ir);\n"
                      "  output y: %s, m, iv, dx: %s, ds: f32, db: f32, z: %s, ir, ex: %s, es: f32;\n}\n",
             seed, t, sh, t, sh, t, D, t, D, t, t, t, t);
    if (opts.quick)
        return;
    snprintf(name, sizeof name, "warp-rows/bwd/dx-only+residual/%s/%dx%d", t, R, D);
    add_case(name, 2, "dnn 1;\ngraph g(seed=%d, intermediate=%s) {\n  input x: %s%s;\n  input dy: %s%s;\n"
                      "  input r0: %s%s;\n  weight s: %s[%d];\n  input ir: f32[%d, 1] = uniform(0.5, 2.0);\n"
                      "  input m: f32[%d, 1];\n  e0, _ = rmsnorm_bwd(dy, x, s, ir);\n  ex = r0 + e0;\n"
                      "  dx, _, db = layernorm_bwd(dy, x, s, m, ir);\n  output ex: %s, dx: %s, db: f32;\n}\n",
             seed + 1, t, t, sh, t, sh, t, sh, t, D, R, R, t, t);
    snprintf(name, sizeof name, "warp-rows/fwd/f32-params/%s/%dx%d", t, R, D);
    add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s%s;\n  weight s: f32[%d];\n  weight b: f32[%d];\n"
                      "  y, m, iv = layernorm(x, s, b);\n  z = rmsnorm(x, s);\n  input u: %s[%d] = fill(1.0);\n"
                      "  w = rmsnorm(x, u, eps=1e-3);\n  output y: %s, m, iv, z: %s, w: %s;\n}\n",
             seed + 2, t, sh, D, D, t, D, t, t, t);
}

/* layernorm and rmsnorm forward and backward (and softmax) of one [R, D] x of
 * dtype t, every output compared */
static void lnrms_pair_case(const char *name, int seed, const char *t, int R, int D, bool softmax)
{
    char dxo[48] = ""; /* one element a row: xhat = 0, dx and dscale all zeros (nothing to compare) */
    if (D > 1)
        snprintf(dxo, sizeof dxo, "dx: %s, ds: f32, ", t);
    char sm[48] = "", smo[24] = "";
    if (softmax) {
        snprintf(sm, sizeof sm, "  p = softmax(x, axis=-1);\n");
        snprintf(smo, sizeof smo, ", p: %s", t);
    }
    add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[%d, %d];\n  input dy: %s[%d, %d];\n"
                      "  weight s: %s[%d];\n  weight b: %s[%d];\n  y, m, iv = layernorm(x, s, b);\n"
                      "  dx, ds, db = layernorm_bwd(dy, x, s, m, iv);\n"
                      "  z, ir = rmsnorm(x, s);\n  ex, es = rmsnorm_bwd(dy, x, s, ir);\n%s"
                      "  output y: %s, m, iv, %sdb: f32, z: %s, ir, ex: %s, es: f32%s;\n}\n",
             seed, t, R, D, t, R, D, t, D, t, D, sm, t, dxo, t, t, smo);
}

static void warp_bwd_cases(void)
{
    static const int rows[][3] = { /* R, D, quick */
        {13, 8, 1},   {37, 264, 1}, {50, 768, 1}, {9, 1024, 0},  {11, 2048, 0}, {9, 4096, 1},
        {3, 4104, 0}, {5, 2056, 0}, {7001, 64, 1}, {1001, 4096, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if (opts.quick && !rows[i][2])
            continue;
        for (int ti = 0; ti < 3; ti++)
            warp_bwd_row(800 + 10 * (int)i + 3 * ti, dts[ti], rows[i][0], rows[i][1]);
    }
    static const int odd[] = {1, 7, 13, 769, 8191};
    for (int k = 0; k < 5; k++) {
        if (opts.quick && odd[k] > 13)
            continue;
        for (int ti = 0; ti < 3; ti++) {
            const char *t = dts[ti];
            char name[192];
            const int D = odd[k], R = D > 1000 ? 3 : 11;
            snprintf(name, sizeof name, "warp-rows/odd-width/%s/%dx%d", t, R, D);
            lnrms_pair_case(name, 900 + 7 * k + ti, t, R, D, true);
        }
    }
}

/* ---- whole-network fusions (the Llama block's): RoPE's rotated halves
 * written in place into the concat's result (views.c; a half of 8 elements is
 * 16-byte aligned in every dtype, one of 3 is not and stays a copy; a piece
 * that is a graph input is copied beside in-place ones), read by a pointwise,
 * a reduce and a matmul; sibling pointwise kernels reading the same tensors
 * (silu's forward and backward); a layer/rms backward with the residual add
 * of its dx (row kernels with and without the fused parameter gradients, the
 * general apply for rows over 8192, a scalar row of odd length).  With the
 * network's bf16/f16 intermediates: the fusions need one dtype throughout. */
static void network_fusion_cases(void)
{
    static const char rope[] =
        "dnn 1;\ngraph g(seed=%d, intermediate=%s) {\n  input x: %s[2, 5, 3, %d];\n  input c: f32[5, 1, %d];\n"
        "  input s: f32[5, 1, %d];\n  weight w: %s[%d, 7];\n  x1, x2 = split(x, axis=-1, parts=2);\n"
        "  r = concat(x1 * c - x2 * s, x2 * c + x1 * s, axis=-1);\n  q = concat(x1 * c, x, axis=-1);\n"
        "  y1 = r * 1.5;\n  y2 = reduce(r, op=\"sum\", axes=[-1]);\n"
        "  y3 = matmul(reshape(r, dims=[30, %d]), w);\n  y4 = q + 1.0;\n"
        "  output y1: %s, y2: f32, y3: f32, y4: %s;\n}\n";
    for (int ti = 0; ti < 3; ti++) {
        const char *t = dts[ti];
        char name[192];
        for (int hi = 0; hi < 2; hi++) {
            int hd = hi ? 6 : 16;
            snprintf(name, sizeof name, "net/rope-in-place/%s/hd%d", t, hd);
            add_case(name, 2, rope, 100 + 2 * ti + hi, t, t, hd, hd / 2, hd / 2, t, hd, hd, t, t);
        }
        snprintf(name, sizeof name, "net/siblings-silu/%s", t);
        add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input gt: %s[5, 33, 40];\n  input up: %s[5, 33, 40];\n"
                          "  input dm: %s[5, 33, 40];\n  m = silu(gt) * up;\n  dg = silu_bwd(dm * up, gt);\n"
                          "  du = dm * silu(gt);\n  output m: %s, dg: %s, du: %s;\n}\n",
                 110 + ti, t, t, t, t, t, t);
        static const int res_shapes[][2] = {{14, 264}, {3, 1001}, {2, 9000}, {1100, 512}};
        for (int si = 0; si < 4; si++) {
            char sh[48];
            snprintf(sh, sizeof sh, "[%d, %d]", res_shapes[si][0], res_shapes[si][1]);
            snprintf(name, sizeof name, "net/rmsnorm_bwd+residual/%s/%dx%d", t, res_shapes[si][0], res_shapes[si][1]);
            add_case(name, 2, "dnn 1;\ngraph g(seed=%d, intermediate=%s) {\n  input x: %s%s;\n  input dy: %s%s;\n"
                              "  input r0: %s%s;\n"
                              "  weight s: %s[%d];\n  y, ir = rmsnorm(x, s);\n  d0, ds = rmsnorm_bwd(dy, x, s, ir);\n"
                              "  dx = r0 + d0;\n  output dx: %s, ds: %s;\n}\n",
                     120 + 4 * ti + si, t, t, sh, t, sh, t, sh, t, res_shapes[si][1], t, t);
            snprintf(name, sizeof name, "net/layernorm_bwd+residual/%s/%dx%d", t, res_shapes[si][0], res_shapes[si][1]);
            add_case(name, 2, "dnn 1;\ngraph g(seed=%d, intermediate=%s) {\n  input x: %s%s;\n  input dy: %s%s;\n"
                              "  input r0: %s%s;\n"
                              "  weight s: %s[%d];\n  weight b: %s[%d];\n  y, m, iv = layernorm(x, s, b);\n"
                              "  d0, ds, db = layernorm_bwd(dy, x, s, m, iv);\n  dx = d0 + r0;\n"
                              "  output dx: %s, ds: f32, db: f32;\n}\n",
                     140 + 4 * ti + si, t, t, sh, t, sh, t, sh, t, res_shapes[si][1], t, res_shapes[si][1], t);
        }
    }
}

/* ---- genstats (src/gpu/genstats.h): a conv on conv_igemm_wgmma (sm_90) whose store writes the statistics
 * partials of the training batchnorm that reads its result, [+ residual] + relu, the batchnorm's outputs
 * and running statistics compared.  K odd multiples of 8 (24, 136) and 64, M = N*H*W with tails past the
 * 128-row tiles (18, 27, 41 rows) and none, small and large (1272 tiles: the block-per-channel finalize);
 * zero-mean inputs, so a bf16 rounding flip of c moves y by a fraction of its own size. */
static void genstats_cases(void)
{
    static const int shapes[][5] = {/* N, HW, C, K, R */ {2, 29, 64, 136, 3}, {3, 61, 64, 24, 3}, {8, 56, 64, 64, 3},
                                    {41, 63, 128, 24, 1}};
    int nsh = opts.quick ? 2 : 4;
    for (int si = 0; si < nsh; si++) {
        const int *d = shapes[si], M = d[0] * d[1] * d[1];
        const double ts = sqrt((double)M) / 32;
        for (int ti = 1; ti < 3; ti++)
            for (int res = 0; res < 2; res++) {
                const char *t = dts[ti];
                char name[192];
                snprintf(name, sizeof name, "genstats/conv+batchnorm%s+relu/%s/n%d-hw%d-c%d-k%d-r%d",
                         res ? "+residual" : "", t, d[0], d[1], d[2], d[3], d[4]);
                /* + 8: the GPU's c (f32 sums) and the reference's (double) round apart where a sum sits
                 * at a rounding boundary (1 of 136 channels at M = 1682, session 8 call 1: c off by 0.125,
                 * 1 ulp); the mean of that channel moves by 0.125 / M = 7.4e-5, 3x the f32 atol x 2.56 */
                add_case(name, 2 * (ts > 1 ? ts : 1) + 8,
                         "dnn 1;\ngraph g(seed=%d, intermediate=%s) {\n  input x: %s[%d, %d, %d, %d] @nhwc;\n"
                         "  weight w: %s[%d, %d, %d, %d] @nhwc;\n  input r: %s[%d, %d, %d, %d] @nhwc;\n"
                         "  weight s: f32[%d] = uniform(0.5, 1.5);\n  weight b: f32[%d] = uniform(-0.5, 0.5);\n"
                         "  weight rm: f32[%d];\n  weight rv: f32[%d] = uniform(0.5, 2.0);\n"
                         "  c: @nhwc = conv(x, w, pad=%d);\n  z: @nhwc, m: f32, iv: f32, rmn: f32, rvn: f32 = "
                         "batchnorm(c, s, b, running_mean=rm, running_var=rv, momentum=0.25);\n"
                         "  y: @nhwc = relu(%s);\n  output y: %s @nhwc, m, iv, rmn, rvn%s;\n}\n",
                         600 + 4 * si + 2 * ti + res, t, t, d[0], d[2], d[1], d[1], t, d[3], d[2], d[4], d[4], t,
                         d[0], d[3], d[1], d[1], d[3], d[3], d[3], d[3], d[4] / 2, res ? "z + r" : "z", t,
                         res ? "" : ", c");
            }
    }
}

/* ---- the vectorized paths: pointwise 16-byte chunks (codegen.c v2) with
 * broadcast operands and mixed dtypes, NHWC pooling 16-byte chunks (pool.cu
 * v2); odd sizes beside them take the scalar paths. */
static void vector_cases(void)
{
    for (int ti = 0; ti < 3; ti++) {
        const char *t = dts[ti];
        char name[192];
        snprintf(name, sizeof name, "vec/pointwise/%s", t);
        add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[5, 3, 64];\n  input b: f32[64];\n"
                          "  input c: %s[5, 3, 1];\n  y = gelu(x * c + b);\n  z = tanh(x) - c;\n"
                          "  output y: %s, z: f32;\n}\n",
                 50 + ti, t, t, t);
        snprintf(name, sizeof name, "vec/pointwise-odd/%s", t);
        add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[5, 3, 61];\n  y = sigmoid(x) * x;\n"
                          "  output y: %s;\n}\n", 53 + ti, t, t);
        /* an NHWC output: threads walk N, H, W, C (C innermost), per-channel operands in chunks */
        snprintf(name, sizeof name, "vec/pointwise-nhwc/%s", t);
        add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[3, 16, 5, 7] @nhwc;\n  input s: f32[1, 16, 1, 1];\n"
                          "  input z: %s[3, 16, 5, 7];\n  input w: %s[3, 3, 5, 7] @nhwc;\n"
                          "  y = relu(x * s + 0.5);\n  y2 = x + z;\n  y3 = w * 2.0 - 1.0;\n"
                          "  output y: %s @nhwc, y2: %s @nhwc, y3: %s @nhwc;\n}\n",
                 65 + ti, t, t, t, t, t, t);
        const int C = 16;
        snprintf(name, sizeof name, "vec/maxpool-3x3s2p1/%s/nhwc", t);
        add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[3, %d, 13, 11] @nhwc;\n"
                          "  y = maxpool(x, window=[3, 3], stride=[2, 2], pad=[1, 1]);\n  output y: %s @nhwc;\n}\n",
                 56 + ti, t, C, t);
        snprintf(name, sizeof name, "vec/maxpool-dil2-ties/%s/nhwc", t);
        add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[2, %d, 12, 9] @nhwc;\n"
                          "  y = maxpool(floor(x * 2.0), window=[2, 3], stride=[1, 2], dilation=[2, 1], pad=[[1, 0], [0, 1]]);\n"
                          "  output y: %s @nhwc;\n}\n",
                 59 + ti, t, 2 * C, t);
        snprintf(name, sizeof name, "vec/avgpool-incpad/%s/nhwc", t);
        add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[2, %d, 9, 10] @nhwc;\n"
                          "  y = avgpool(x, window=[3, 3], stride=[2, 2], pad=[1, 1], include_pad=%s);\n"
                          "  output y: %s @nhwc;\n}\n",
                 62 + ti, t, C, ti == 1 ? "true" : "false", t);
        /* backward v3 (pool.cu kpool_winners_vec + kpool_bwd_vec): the same windows, dy in y's shape; ties and NaN-free
         * duplicates pick the forward's winner; C = 12 is no whole chunk and takes v1 beside them */
        snprintf(name, sizeof name, "vec/maxpool_bwd-3x3s2p1/%s/nhwc", t);
        add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input dy: %s[3, %d, 7, 6] @nhwc;\n  input x: %s[3, %d, 13, 11] @nhwc;\n"
                          "  dx = maxpool_bwd(dy, x, window=[3, 3], stride=[2, 2], pad=[1, 1]);\n  output dx: %s @nhwc;\n}\n",
                 70 + ti, t, C, t, C, t);
        /* the 3x3 stride-2 gather enumerates the (at most 2 x 2) windows over a pixel from the padding: even
         * extents, a top padding of 2 (the first window row all padding) and none at the left */
        snprintf(name, sizeof name, "vec/maxpool_bwd-3x3s2-asym/%s/nhwc", t);
        add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input dy: %s[2, %d, 6, 5] @nhwc;\n  input x: %s[2, %d, 12, 10] @nhwc;\n"
                          "  dx = maxpool_bwd(dy, x, window=[3, 3], stride=[2, 2], pad=[[2, 0], [0, 1]]);\n"
                          "  output dx: %s @nhwc;\n}\n",
                 88 + ti, t, C, t, C, t);
        snprintf(name, sizeof name, "vec/maxpool_bwd-dil2-ties/%s/nhwc", t);
        add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input dy: %s[2, %d, 11, 4] @nhwc;\n  input x: %s[2, %d, 12, 9] @nhwc;\n"
                          "  dx = maxpool_bwd(dy, floor(x * 2.0), window=[2, 3], stride=[1, 2], dilation=[2, 1], pad=[[1, 0], [0, 1]]);\n"
                          "  output dx: %s @nhwc;\n}\n",
                 73 + ti, t, 2 * C, t, 2 * C, t);
        snprintf(name, sizeof name, "vec/avgpool_bwd-incpad/%s/nhwc", t);
        add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input dy: %s[2, %d, 5, 5] @nhwc;\n  input x: %s[2, %d, 9, 10] @nhwc;\n"
                          "  dx = avgpool_bwd(dy, x, window=[3, 3], stride=[2, 2], pad=[1, 1], include_pad=%s);\n"
                          "  output dx: %s @nhwc;\n}\n",
                 76 + ti, t, C, t, C, ti == 1 ? "true" : "false", t);
        /* v3 (winners stored by a first pass) against NaN: sqrt of the negative half of x makes NaN taps, and
         * dy goes to each window's first NaN; a 16x16 window (256 taps, more than a stored byte can name)
         * keeps v2, which finds the winners again per pixel */
        snprintf(name, sizeof name, "vec/maxpool_bwd-nan/%s/nhwc", t);
        add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input dy: %s[3, %d, 7, 6] @nhwc;\n  input x: %s[3, %d, 13, 11] @nhwc;\n"
                          "  dx = maxpool_bwd(dy, sqrt(x), window=[3, 3], stride=[2, 2], pad=[1, 1]);\n"
                          "  output dx: %s @nhwc;\n}\n",
                 82 + ti, t, C, t, C, t);
        snprintf(name, sizeof name, "vec/maxpool_bwd-256taps/%s/nhwc", t);
        add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input dy: %s[2, %d, 4, 3] @nhwc;\n  input x: %s[2, %d, 37, 29] @nhwc;\n"
                          "  dx = maxpool_bwd(dy, x, window=[16, 16], stride=[7, 6]);\n  output dx: %s @nhwc;\n}\n",
                 85 + ti, t, C, t, C, t);
        snprintf(name, sizeof name, "vec/maxpool_bwd-c12/%s/nhwc", t);
        add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input dy: %s[2, 12, 7, 6] @nhwc;\n  input x: %s[2, 12, 13, 11] @nhwc;\n"
                          "  dx = maxpool_bwd(dy, x, window=[3, 3], stride=[2, 2], pad=[1, 1]);\n  output dx: %s @nhwc;\n}\n",
                 79 + ti, t, t, t);
    }
}

/* ---- plan-time constants (src/gpu/constfold.c): with const_weights the
 * casts / layout changes of weights run with the first execute only; the
 * outputs compared come from the last execute, which skipped them (run.c),
 * so a constant clobbered in the workspace would show. */
static void const_cases(void)
{
    add_case("const/transformer-mini/bf16", 1,
             "dnn 1;\ngraph g(io=bf16, compute=f32, intermediate=f32, seed=91) {\n"
             "  input x: bf16[2, 16, 32];\n  weight g1: bf16[32] = uniform(0.5, 1.5);\n"
             "  weight b1: bf16[32];\n  weight wq: bf16[32, 96] = randn(std=0.1);\n"
             "  weight wo: bf16[32, 32] = randn(std=0.1);\n  weight wu: bf16[32, 128] = randn(std=0.1);\n"
             "  weight wd: bf16[128, 32] = randn(std=0.1);\n  h = layernorm(x, g1, b1, axes=[-1]);\n"
             "  qkv = matmul(h, wq);\n  q, k, v = split(qkv, axis=2, parts=3);\n"
             "  r = x + matmul(q + k + v, wo);\n  y = r + matmul(gelu(matmul(r, wu)), wd);\n  output y;\n}\n");
    add_case("const/weight-views/f32", 1,
             "dnn 1;\ngraph g(seed=92) {\n  input x: f32[4, 8];\n  weight w: bf16[8, 16];\n"
             "  weight w2: bf16[16, 8];\n  input wi: bf16[8, 16];\n  weight wt: f32[16, 8];\n"
             "  h = matmul(x, w);\n  z = matmul(x, wi);\n  y = matmul(h, w2);\n"
             "  p = permute(wt, perm=[1, 0]) * 2.0;\n  q = matmul(x, p);\n  output y, z, q;\n}\n");
}

/* ---- dropout / rng */

static void rng_cases(void)
{
    static const int shapes[][4] = {{1, 1}, {2, 17, 33}, {3, 4, 5, 67}, {1, 100003}};
    int nsh = opts.quick ? 2 : 4;
    for (int si = 0; si < nsh; si++) {
        int r = shapes[si][0];
        const int *d = &shapes[si][1];
        char s[64], id[64];
        shp(s, sizeof s, r, d);
        sid(id, sizeof id, r, d);
        for (int ti = 0; ti < 3; ti++) {
            const char *t = dts[ti];
            char name[192];
            snprintf(name, sizeof name, "dropout/y+mask/%s/%s", t, id);
            add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s%s;\n  y, m = dropout(x, p=%s);\n"
                              "  z = dropout(x, p=%s, seed=1234);\n  output y: %s%s, m, z: %s;\n}\n",
                     si * 31 + ti, t, s, d[r - 1] == 1 ? "0.001" : "0.3", d[r - 1] == 1 ? "0.001" : "0.5", t,
                     r == 2 ? " @col" : "", t);
            snprintf(name, sizeof name, "rng/uniform+normal/%s/%s", t, id);
            add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  u = rng(shape=%s, lo=-2, hi=3);\n"
                              "  n = rng(shape=%s, dist=\"normal\", mean=0.5, std=2, seed=77);\n"
                              "  output u: %s, n: %s;\n}\n",
                     si * 37 + ti, s, s, t, t);
        }
    }
}

/* ---- session 10: odd row counts and widths of layernorm / rmsnorm forward and
 * backward after the kernel trim: widths 1, 7 (element kernels), 4095 (not 16-byte
 * aligned: norm.cu's block rows), 4097 (16-bit: past the warp-row backward's 4096),
 * 12288 (past NG_WARP_ROW_MAX: the split path); rows 1, 3 and 8191 (a prime past
 * one pass of the persistent grid).  Registered last: the seeds of the cases
 * before them do not move. */
static void odd_row_cases(void)
{
    static const int shapes[][3] = { /* R, D, quick */
        {1, 1, 1},    {3, 1, 1},    {8191, 1, 0},    {1, 7, 1},    {3, 7, 1},    {8191, 7, 0},    {1, 4095, 1},
        {3, 4095, 0}, {1, 4097, 0}, {3, 4097, 1},    {1, 12288, 0}, {3, 12288, 0}, {8191, 4095, 0},
    };
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        if (opts.quick && !shapes[k][2])
            continue;
        for (int ti = 0; ti < 3; ti++) {
            const char *t = dts[ti];
            const int R = shapes[k][0], D = shapes[k][1];
            char name[192];
            snprintf(name, sizeof name, "odd-rows/%s/%dx%d", t, R, D);
            lnrms_pair_case(name, 1000 + 3 * (int)k + ti, t, R, D, false);
        }
    }
}

/* ---- bench: the torch_baseline shapes */

static void bench_cases(void)
{
    add_case("bench/layernorm/f16/8192x8192", 1,
             "dnn 1;\ngraph g(seed=1) {\n  input x: f16[8192, 8192];\n  weight s: f16[8192];\n  weight b: f16[8192];\n"
             "  y = layernorm(x, s, b);\n  output y: f16;\n}\n");
    add_case("bench/layernorm/f32/8192x8192", 1,
             "dnn 1;\ngraph g(seed=1) {\n  input x: f32[8192, 8192];\n  weight s: f32[8192];\n  weight b: f32[8192];\n"
             "  y = layernorm(x, s, b);\n  output y: f32;\n}\n");
    add_case("bench/softmax/f16/8192x8192", 1,
             "dnn 1;\ngraph g(seed=2) {\n  input x: f16[8192, 8192];\n  y = softmax(x);\n  output y: f16;\n}\n");
    add_case("bench/softmax/f32/8192x8192", 1,
             "dnn 1;\ngraph g(seed=2) {\n  input x: f32[8192, 8192];\n  y = softmax(x);\n  output y: f32;\n}\n");
    /* the Llama block's rmsnorm rows (bf16, hidden 4096, 8192 tokens) and a log_softmax */
    add_case("bench/rmsnorm/bf16/8192x4096", 1,
             "dnn 1;\ngraph g(seed=2) {\n  input x: bf16[8192, 4096];\n  weight s: bf16[4096];\n"
             "  y = rmsnorm(x, s);\n  output y: bf16;\n}\n");
    add_case("bench/log_softmax/f16/8192x8192", 1,
             "dnn 1;\ngraph g(seed=2) {\n  input x: f16[8192, 8192];\n  y = log_softmax(x);\n  output y: f16;\n}\n");
    add_case("bench/batchnorm_train/f32/nhwc/32x256x56x56", 1,
             "dnn 1;\ngraph g(seed=3) {\n  input x: f32[32, 256, 56, 56] @nhwc;\n  weight s: f32[256] = fill(1.0);\n"
             "  weight b: f32[256] = fill(0.0);\n  weight rm: f32[256] = fill(0.0);\n  weight rv: f32[256] = fill(1.0);\n"
             "  y, m, iv, rmn, rvn = batchnorm(x, s, b, running_mean=rm, running_var=rv);\n"
             "  output y: f32 @nhwc, rmn, rvn;\n}\n");
    add_case("bench/batchnorm_train/f16/nhwc/32x256x56x56", 1,
             "dnn 1;\ngraph g(seed=3) {\n  input x: f16[32, 256, 56, 56] @nhwc;\n  weight s: f32[256] = fill(1.0);\n"
             "  weight b: f32[256] = fill(0.0);\n  weight rm: f32[256] = fill(0.0);\n  weight rv: f32[256] = fill(1.0);\n"
             "  y, m, iv, rmn, rvn = batchnorm(x, s, b, running_mean=rm, running_var=rv);\n"
             "  output y: f16 @nhwc, rmn, rvn;\n}\n");
    /* ResNet-50 stage-1 sizes, bf16 activations and f32 parameters as graphs/resnet50_train_step.dnn */
    add_case("bench/batchnorm_train_relu/bf16/nhwc/32x256x56x56", 1,
             "dnn 1;\ngraph g(seed=3) {\n  input x: bf16[32, 256, 56, 56] @nhwc;\n  weight s: f32[256] = fill(1.0);\n"
             "  weight b: f32[256] = fill(0.0);\n  weight rm: f32[256] = fill(0.0);\n  weight rv: f32[256] = fill(1.0);\n"
             "  y0, m, iv, rmn, rvn = batchnorm(x, s, b, running_mean=rm, running_var=rv);\n  y = relu(y0);\n"
             "  output y: bf16 @nhwc, m, iv, rmn, rvn;\n}\n");
    add_case("bench/batchnorm_bwd/bf16/nhwc/32x256x56x56", 1,
             "dnn 1;\ngraph g(seed=3) {\n  input x: bf16[32, 256, 56, 56] @nhwc;\n  input dy: bf16[32, 256, 56, 56] @nhwc;\n"
             "  weight s: f32[256] = fill(1.0);\n  input m: f32[256];\n  input iv: f32[256] = uniform(0.5, 2);\n"
             "  dx, ds, db = batchnorm_bwd(dy, x, s, m, iv);\n  output dx: bf16 @nhwc, ds, db;\n}\n");
    add_case("bench/batchnorm_bwd/f16/nhwc/32x256x56x56", 1,
             "dnn 1;\ngraph g(seed=3) {\n  input x: f16[32, 256, 56, 56] @nhwc;\n  input dy: f16[32, 256, 56, 56] @nhwc;\n"
             "  weight s: f32[256] = fill(1.0);\n  input m: f32[256];\n  input iv: f32[256] = uniform(0.5, 2);\n"
             "  dx, ds, db = batchnorm_bwd(dy, x, s, m, iv);\n  output dx: f16 @nhwc, ds, db;\n}\n");
    /* ResNet-50 N = 256's batchnorm shapes (bf16 activations, f32 parameters, as
     * graphs/resnet50_train_step.dnn): batchnorm + relu and its backward, one
     * graph (two partitions) per shape; bench/bn_peer.py --resnet is the peer */
    static const int rn50[][2] = {{64, 112}, {64, 56}, {256, 56}, {128, 28}, {512, 28},
                                  {256, 14}, {1024, 14}, {512, 7}, {2048, 7}};
    for (int k = 0; k < 9; k++) {
        const int C = rn50[k][0], HW = rn50[k][1];
        char name[192];
        snprintf(name, sizeof name, "bench/rn50/bf16/256x%dx%dx%d", C, HW, HW);
        add_case(name, 1,
                 "dnn 1;\ngraph g(seed=9) {\n  input x: bf16[256, %d, %d, %d] @nhwc;\n"
                 "  input dy: bf16[256, %d, %d, %d] @nhwc;\n  weight s: f32[%d] = uniform(0.5, 1.5);\n"
                 "  weight b: f32[%d];\n  weight rm: f32[%d];\n  weight rv: f32[%d] = fill(1.0);\n"
                 "  y0, m, iv, rmn, rvn = batchnorm(x, s, b, running_mean=rm, running_var=rv);\n  y = relu(y0);\n"
                 "  dx, ds, db = batchnorm_bwd(dy, x, s, m, iv);\n"
                 "  output y: bf16 @nhwc, rmn, rvn, dx: bf16 @nhwc, ds, db;\n}\n",
                 C, HW, HW, C, HW, HW, C, C, C, C);
    }
    /* session 11: ResNet-50 N = 256's residual joins (the shapes of a block's output: every other row
     * of rn50 above from 256@56) with the batchnorm backward that reads them (bench/bn_peer.py --join is
     * the peer): ds = relu_bwd(d0 + dn, y), dx = batchnorm_bwd(ds, ..), ds also an output (the shortcut
     * reads it); run with and without XDNN_NO_NORM_JOIN=1 */
    for (int k = 2; k < 9; k += 2) {
        const int C = rn50[k][0], HW = rn50[k][1];
        char name[192];
        snprintf(name, sizeof name, "bench/rn50join/bf16/256x%dx%dx%d", C, HW, HW);
        add_case(name, 1,
                 "dnn 1;\ngraph g(seed=9, intermediate=bf16) {\n  input c: bf16[256, %d, %d, %d] @nhwc;\n"
                 "  input d0: bf16[256, %d, %d, %d] @nhwc;\n  input dn: bf16[256, %d, %d, %d] @nhwc;\n"
                 "  input y: bf16[256, %d, %d, %d] @nhwc;\n  weight s: f32[%d] = uniform(0.5, 1.5);\n"
                 "  input m: f32[%d];\n  input iv: f32[%d] = uniform(0.5, 2);\n"
                 "  ds: @nhwc = relu_bwd(d0 + dn, y);\n  dc: @nhwc, dg: f32, db: f32 = batchnorm_bwd(ds, c, s, m, iv);\n"
                 "  output ds: bf16 @nhwc, dc: bf16 @nhwc, dg, db;\n}\n",
                 C, HW, HW, C, HW, HW, C, HW, HW, C, HW, HW, C, C, C);
    }
    add_case("bench/layernorm_bwd/f16/8192x8192", 1,
             "dnn 1;\ngraph g(seed=4) {\n  input x: f16[8192, 8192];\n  input dy: f16[8192, 8192];\n"
             "  weight s: f16[8192];\n  input m: f32[8192, 1];\n  input iv: f32[8192, 1] = uniform(0.5, 2);\n"
             "  dx, ds, db = layernorm_bwd(dy, x, s, m, iv);\n  output dx: f16, ds: f32, db: f32;\n}\n");
    /* session 9: the widths of GPT / BERT (768, 1024) and the Llama block's rmsnorm backward
     * (dx + the residual, dscale in x's dtype), forward and backward on the warp rows */
    add_case("bench/layernorm/f16/8192x768", 1,
             "dnn 1;\ngraph g(seed=1) {\n  input x: f16[8192, 768];\n  weight s: f16[768];\n  weight b: f16[768];\n"
             "  y = layernorm(x, s, b);\n  output y: f16;\n}\n");
    add_case("bench/layernorm/bf16/16384x1024", 1,
             "dnn 1;\ngraph g(seed=1) {\n  input x: bf16[16384, 1024];\n  weight s: bf16[1024];\n"
             "  weight b: bf16[1024];\n  y = layernorm(x, s, b);\n  output y: bf16;\n}\n");
    add_case("bench/layernorm_bwd/f16/8192x768", 1,
             "dnn 1;\ngraph g(seed=4) {\n  input x: f16[8192, 768];\n  input dy: f16[8192, 768];\n"
             "  weight s: f16[768];\n  input m: f32[8192, 1];\n  input iv: f32[8192, 1] = uniform(0.5, 2);\n"
             "  dx, ds, db = layernorm_bwd(dy, x, s, m, iv);\n  output dx: f16, ds: f32, db: f32;\n}\n");
    add_case("bench/rmsnorm_bwd/bf16/8192x4096", 1,
             "dnn 1;\ngraph g(seed=4) {\n  input x: bf16[8192, 4096];\n  input dy: bf16[8192, 4096];\n"
             "  weight s: bf16[4096];\n  input ir: f32[8192, 1] = uniform(0.5, 2);\n"
             "  dx, ds = rmsnorm_bwd(dy, x, s, ir);\n  output dx: bf16, ds: bf16;\n}\n");
    add_case("bench/rmsnorm_bwd+residual/bf16/8192x4096", 1,
             "dnn 1;\ngraph g(seed=4, intermediate=bf16) {\n  input x: bf16[8192, 4096];\n"
             "  input dy: bf16[8192, 4096];\n  input r0: bf16[8192, 4096];\n  weight s: bf16[4096];\n"
             "  input ir: f32[8192, 1] = uniform(0.5, 2);\n  d0, ds = rmsnorm_bwd(dy, x, s, ir);\n"
             "  dx = r0 + d0;\n  output dx: bf16, ds: bf16;\n}\n");
    add_case("bench/dropout/f16/8192x8192", 1,
             "dnn 1;\ngraph g(seed=5) {\n  input x: f16[8192, 8192];\n  y, m = dropout(x, p=0.1);\n"
             "  output y: f16, m;\n}\n");
    add_case("bench/permute/f16/32x256x56x56->nhwc", 1,
             "dnn 1;\ngraph g(seed=6) {\n  input x: f16[32, 256, 56, 56];\n  y = permute(x, perm=[0, 2, 3, 1]);\n"
             "  output y: f16;\n}\n");
    /* ResNet-50's stem pooling (3x3 stride 2 over 112x112, 64 channels) at N = 64 */
    add_case("bench/maxpool_bwd/bf16/nhwc/64x64x112x112", 1,
             "dnn 1;\ngraph g(seed=8) {\n  input dy: bf16[64, 64, 56, 56] @nhwc;\n  input x: bf16[64, 64, 112, 112] @nhwc;\n"
             "  dx = maxpool_bwd(dy, x, window=[3, 3], stride=[2, 2], pad=[1, 1]);\n  output dx: bf16 @nhwc;\n}\n");
    add_case("bench/concat/f16/2x[8192,4096]", 1,
             "dnn 1;\ngraph g(seed=7) {\n  input a: f16[8192, 4096];\n  input b: f16[8192, 4096];\n"
             "  y = concat(a, b, axis=1);\n  output y: f16;\n}\n");
    /* session 10: layernorm / rmsnorm forward and backward, bf16, at 8192 x 4096 and
     * 8192 x 8192 (bench/norm_torch.py session10 times the same beside torch.compile) */
    static const int wide[] = {4096, 8192};
    for (int k = 0; k < 2; k++) {
        const int D = wide[k];
        char name[128];
        snprintf(name, sizeof name, "bench/s10/rmsnorm/bf16/8192x%d", D);
        add_case(name, 1, "dnn 1;\ngraph g(seed=2) {\n  input x: bf16[8192, %d];\n  weight s: bf16[%d];\n"
                          "  y = rmsnorm(x, s);\n  output y: bf16;\n}\n", D, D);
        snprintf(name, sizeof name, "bench/s10/layernorm/bf16/8192x%d", D);
        add_case(name, 1, "dnn 1;\ngraph g(seed=1) {\n  input x: bf16[8192, %d];\n  weight s: bf16[%d];\n"
                          "  weight b: bf16[%d];\n  y = layernorm(x, s, b);\n  output y: bf16;\n}\n", D, D, D);
        snprintf(name, sizeof name, "bench/s10/rmsnorm_bwd/bf16/8192x%d", D);
        add_case(name, 1, "dnn 1;\ngraph g(seed=4) {\n  input x: bf16[8192, %d];\n  input dy: bf16[8192, %d];\n"
                          "  weight s: bf16[%d];\n  input ir: f32[8192, 1] = uniform(0.5, 2);\n"
                          "  dx, ds = rmsnorm_bwd(dy, x, s, ir);\n  output dx: bf16, ds: bf16;\n}\n", D, D, D);
        snprintf(name, sizeof name, "bench/s10/layernorm_bwd/bf16/8192x%d", D);
        add_case(name, 1, "dnn 1;\ngraph g(seed=4) {\n  input x: bf16[8192, %d];\n  input dy: bf16[8192, %d];\n"
                          "  weight s: bf16[%d];\n  input m: f32[8192, 1];\n  input iv: f32[8192, 1] = uniform(0.5, 2);\n"
                          "  dx, ds, db = layernorm_bwd(dy, x, s, m, iv);\n  output dx: bf16, ds: f32, db: f32;\n}\n",
                 D, D, D);
    }
}

/* ---- session 12 (issue 12 item 1): the consolidated memory-bound table, one row per engine at >= 64 MB
 * (bench/mem_peer.py times the same rows in PyTorch eager and torch.compile, and a copy of the same bytes).
 * The layernorm / rmsnorm rows are bench/s10/ at 8192 x 8192, batchnorm bench/rn50/ at 256x256x56x56. */
typedef struct bench_row {
    const char *id, *body;
} bench_row;

/* bench/<dir>/<id> for each row: the body as graph g(seed=SEED) */
static void add_bench_rows(const char *dir, int seed, const bench_row *r, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        char name[192];
        snprintf(name, sizeof name, "bench/%s/%s", dir, r[k].id);
        add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n%s\n}\n", seed, r[k].body);
    }
}

static void s12_bench_cases(void)
{
    static const bench_row r[] = {
        {"pw/relu/bf16/8192x8192", "  input x: bf16[8192, 8192];\n  y = relu(x);\n  output y: bf16;"},
        {"pw/gelu/bf16/8192x8192", "  input x: bf16[8192, 8192];\n  y = gelu(x);\n  output y: bf16;"},
        {"pw/silu/bf16/8192x8192", "  input x: bf16[8192, 8192];\n  y = silu(x);\n  output y: bf16;"},
        {"pw/add-bcast/bf16/8192x8192", "  input x: bf16[8192, 8192];\n  weight b: bf16[8192];\n  y = x + b;\n"
                                        "  output y: bf16;"},
        {"pw/add/bf16/8192x8192", "  input x: bf16[8192, 8192];\n  input z: bf16[8192, 8192];\n  y = x + z;\n"
                                  "  output y: bf16;"},
        {"pw/cast/bf16->f32/8192x8192", "  input x: bf16[8192, 8192];\n  y = cast(x, dtype=f32);\n  output y: f32;"},
        {"reduce/sum-last/f32/8192x8192", "  input x: f32[8192, 8192];\n  y = reduce(x, op=\"sum\", axes=[-1]);\n"
                                          "  output y: f32;"},
        {"reduce/sum-first/f32/8192x8192", "  input x: f32[8192, 8192];\n  y = reduce(x, op=\"sum\", axes=[0]);\n"
                                           "  output y: f32;"},
        {"reduce/max-last/bf16/8192x8192", "  input x: bf16[8192, 8192];\n  y = reduce(x, op=\"max\", axes=[-1]);\n"
                                           "  output y: bf16;"},
        {"reduce/max-first/bf16/8192x8192", "  input x: bf16[8192, 8192];\n  y = reduce(x, op=\"max\", axes=[0]);\n"
                                            "  output y: bf16;"},
        {"softmax/bf16/8192x8192", "  input x: bf16[8192, 8192];\n  y = softmax(x);\n  output y: bf16;"},
        {"log_softmax/bf16/8192x8192", "  input x: bf16[8192, 8192];\n  y = log_softmax(x);\n  output y: bf16;"},
        {"softmax_bwd/bf16/8192x8192", "  input dy: bf16[8192, 8192];\n  input y: bf16[8192, 8192] = uniform(0, 0.001);\n"
                                       "  dx = softmax_bwd(dy, y);\n  output dx: bf16;"},
        {"log_softmax_bwd/bf16/8192x8192", "  input dy: bf16[8192, 8192];\n  input l: bf16[8192, 8192] = uniform(-12, -8);\n"
                                           "  dx = log_softmax_bwd(dy, l);\n  output dx: bf16;"},
        {"groupnorm/bf16/64x256x56x56", "  input x: bf16[64, 256, 56, 56];\n  weight s: f32[256] = uniform(0.5, 1.5);\n"
                                        "  weight b: f32[256];\n  y, m, iv = groupnorm(x, s, b, groups=32);\n"
                                        "  output y: bf16, m, iv;"},
        {"groupnorm_bwd/bf16/64x256x56x56", "  input x: bf16[64, 256, 56, 56];\n  input dy: bf16[64, 256, 56, 56];\n"
                                            "  weight s: f32[256] = uniform(0.5, 1.5);\n  input m: f32[64, 32];\n"
                                            "  input iv: f32[64, 32] = uniform(0.5, 2);\n"
                                            "  dx, ds, db = groupnorm_bwd(dy, x, s, m, iv, groups=32);\n"
                                            "  output dx: bf16, ds, db;"},
        {"maxpool/bf16/nhwc/64x256x56x56", "  input x: bf16[64, 256, 56, 56] @nhwc;\n"
                                           "  y = maxpool(x, window=[3, 3], stride=[2, 2], pad=[1, 1]);\n  output y: bf16 @nhwc;"},
        {"maxpool/bf16/nhwc/64x64x112x112", "  input x: bf16[64, 64, 112, 112] @nhwc;\n"
                                            "  y = maxpool(x, window=[3, 3], stride=[2, 2], pad=[1, 1]);\n  output y: bf16 @nhwc;"},
        {"maxpool_bwd/bf16/nhwc/64x256x56x56", "  input dy: bf16[64, 256, 28, 28] @nhwc;\n  input x: bf16[64, 256, 56, 56] @nhwc;\n"
                                               "  dx = maxpool_bwd(dy, x, window=[3, 3], stride=[2, 2], pad=[1, 1]);\n"
                                               "  output dx: bf16 @nhwc;"},
        {"avgpool/bf16/nhwc/64x256x56x56", "  input x: bf16[64, 256, 56, 56] @nhwc;\n"
                                           "  y = avgpool(x, window=[3, 3], stride=[2, 2], pad=[1, 1]);\n  output y: bf16 @nhwc;"},
        {"avgpool_bwd/bf16/nhwc/64x256x56x56", "  input dy: bf16[64, 256, 28, 28] @nhwc;\n  input x: bf16[64, 256, 56, 56] @nhwc;\n"
                                               "  dx = avgpool_bwd(dy, x, window=[3, 3], stride=[2, 2], pad=[1, 1]);\n"
                                               "  output dx: bf16 @nhwc;"},
        {"permute/bf16/64x256x56x56->nhwc", "  input x: bf16[64, 256, 56, 56];\n  y = permute(x, perm=[0, 2, 3, 1]);\n"
                                            "  output y: bf16;"},
        {"permute/bf16/64x56x56x256->nchw", "  input x: bf16[64, 56, 56, 256];\n  y = permute(x, perm=[0, 3, 1, 2]);\n"
                                            "  output y: bf16;"},
        {"permute/f32/8192x8192->T", "  input x: f32[8192, 8192];\n  y = permute(x, perm=[1, 0]);\n  output y: f32;"},
        {"concat/bf16/2x[8192,4096]", "  input a: bf16[8192, 4096];\n  input b: bf16[8192, 4096];\n"
                                      "  y = concat(a, b, axis=1);\n  output y: bf16;"},
        /* session 12 (smbwd, last): softmax_bwd over a narrower 16-bit row (1024: 2 warps of 2 chunks on the warp
         * rows) and log_softmax_bwd over the widest f32 row they take (4096: 8 warps of 4 chunks) */
        {"softmax_bwd/bf16/32768x1024", "  input dy: bf16[32768, 1024];\n  input y: bf16[32768, 1024] = uniform(0, 0.002);\n"
                                        "  dx = softmax_bwd(dy, y);\n  output dx: bf16;"},
        {"log_softmax_bwd/f32/8192x4096", "  input dy: f32[8192, 4096];\n  input l: f32[8192, 4096] = uniform(-10, -6);\n"
                                          "  dx = log_softmax_bwd(dy, l);\n  output dx: f32;"},
    };
    add_bench_rows("s12", 12, r, sizeof r / sizeof r[0]);
}

/* ---- session 11: the residual join fused into the batchnorm backward
 * (partition.c fuse_norm_joins, norm_cl.cu's reduce with ng_job.join): ds =
 * relu_bwd(d0 + dn, y) read by the batchnorm backward and by a second add (the
 * shortcut, as lib/resnet.dnn's block), the mask y = relu(z) from the forward
 * (zeros in it).  16-byte vectors (C = 40, 520: several channel blocks), odd
 * C (13: scalar), one row, rows padded past C (stride 48 for 40 channels);
 * relu_bwd alone (no add); then, bf16, the cases that stay apart: dn
 * broadcast over the rows, ds read by the batchnorm alone, and the switch
 * XDNN_NO_NORM_JOIN=1. */
__attribute__((format(printf, 5, 6))) static void join_case(const char *id, int seed, const char *t, int M,
                                                           const char *body, ...)
{
    char text[TEXT_MAX];
    int n = snprintf(text, sizeof text, "dnn 1;\ngraph g(seed=%d, intermediate=%s) {\n", seed, t);
    va_list ap;
    va_start(ap, body);
    n += vsnprintf(text + n, sizeof text - (size_t)n, body, ap);
    va_end(ap);
    snprintf(text + n, sizeof text - (size_t)n, "}\n");
    double ts = sqrt((double)M) / 32; /* as cl_cases: dscale's tolerance grows with sqrt(M) */
    add_case(id, 4 * (ts > 1 ? ts : 1), "%s", text);
}

static void join_cases(void)
{
    static const int shapes[][5] = {{4, 2, 40, 7, 9}, {4, 3, 13, 5, 11}, {4, 2, 520, 5, 7}};
    for (int ti = 0; ti < 3; ti++) {
        const char *t = dts[ti];
        char name[192];
        /* one row (it stays apart: the channels-last kernels want two): the mask an input (a batchnorm's y
         * of one row is 0), dx = 0 and dscale = 0: dbias and the shortcut's sum (+ dx) compare */
        snprintf(name, sizeof name, "join/add+relu_bwd+batchnorm_bwd/%s/nhwc/1x24x1x1", t);
        join_case(name, 624 + 2 * ti, t, 1,
                  "  input c: %s[1, 24, 1, 1] @nhwc;\n  input d0: %s[1, 24, 1, 1] @nhwc;\n"
                  "  input dn: %s[1, 24, 1, 1] @nhwc;\n  input y: %s[1, 24, 1, 1] @nhwc = uniform(-1.0, 1.0);\n"
                  "  weight s: f32[24] = uniform(0.5, 1.5);\n  input m: f32[24];\n  input iv: f32[24] = uniform(0.5, 2.0);\n"
                  "  ds: @nhwc = relu_bwd(d0 + dn, y);\n  dc: @nhwc, _, db = batchnorm_bwd(ds, c, s, m, iv);\n"
                  "  dx: @nhwc = ds + d0 + dc;\n  output db, dx: %s @nhwc;\n", t, t, t, t, t);
        for (int si = 0; si < 3; si++) {
            shape_txt st = shape_of(shapes[si]);
            const int M = st.d[0] * st.d[2] * st.d[3];
            for (int one = 0; one < 2; one++) {
                if (one && si != 0)
                    continue;
                snprintf(name, sizeof name, "join/%s+batchnorm_bwd/%s/nhwc/%s", one ? "relu_bwd" : "add+relu_bwd", t,
                         st.id);
                join_case(name, 600 + 8 * si + 2 * ti + one, t, M,
                          "  input c: %s%s @nhwc = uniform(-2.0, 3.0);\n  input d0: %s%s @nhwc;\n"
                          "  input dn: %s%s @nhwc;\n  weight s: f32%s = uniform(0.5, 1.5);\n"
                          "  weight b: f32%s = uniform(-0.5, 0.5);\n"
                          "  z: @nhwc, m: f32, iv: f32 = batchnorm(c, s, b);\n  y: @nhwc = relu(z);\n"
                          "  ds: @nhwc = relu_bwd(%s, y);\n"
                          "  dc: @nhwc, dg: f32, db: f32 = batchnorm_bwd(ds, c, s, m, iv);\n"
                          "  dx: @nhwc = ds + d0;\n  output y: %s @nhwc, dc: %s @nhwc, dg, db, dx: %s @nhwc;\n",
                          t, st.s, t, st.s, t, st.s, st.ch, st.ch, one ? "dn" : "d0 + dn", t, t, t);
            }
        }
        snprintf(name, sizeof name, "join/add+relu_bwd+batchnorm_bwd/%s/padded-rows/97x40", t);
        join_case(name, 640 + ti, t, 97,
                  "  input c: %s[97, 40] @strides(48, 1) = uniform(-2.0, 3.0);\n  input d0: %s[97, 40] @strides(48, 1);\n"
                  "  input dn: %s[97, 40] @strides(48, 1);\n  input y: %s[97, 40] @strides(48, 1) = uniform(-1.0, 1.0);\n"
                  "  weight s: f32[40] = uniform(0.5, 1.5);\n  input m: f32[40] = uniform(-2.0, 3.0);\n"
                  "  input iv: f32[40] = uniform(0.5, 2.0);\n"
                  "  ds: @strides(48, 1) = relu_bwd(d0 + dn, y);\n"
                  "  dc: @strides(48, 1), dg: f32, db: f32 = batchnorm_bwd(ds, c, s, m, iv);\n"
                  "  dx = ds + d0;\n  output dc: %s @strides(48, 1), dg, db, dx: %s;\n",
                  t, t, t, t, t, t);
    }
    /* bf16: the forms that stay apart (and must still be right) */
    const char *body = "  input c: bf16[2, 40, 7, 9] @nhwc = uniform(-2.0, 3.0);\n  input d0: bf16[2, 40, 7, 9] @nhwc;\n"
                       "  input dn: bf16%s @nhwc;\n  weight s: f32[40] = uniform(0.5, 1.5);\n"
                       "  weight b: f32[40] = uniform(-0.5, 0.5);\n"
                       "  z: @nhwc, m: f32, iv: f32 = batchnorm(c, s, b);\n  y: @nhwc = relu(z);\n"
                       "  ds: @nhwc = relu_bwd(d0 + dn, y);\n"
                       "  dc: @nhwc, dg: f32, db: f32 = batchnorm_bwd(ds, c, s, m, iv);\n"
                       "  %s\n  output y: bf16 @nhwc, dc: bf16 @nhwc, dg, db%s;\n";
    join_case("join/apart/bf16/dn-broadcast", 650, "bf16", 126, body, "[1, 40, 1, 1]", "dx: @nhwc = ds + d0;",
              ", dx: bf16 @nhwc");
    join_case("join/apart/bf16/ds-read-once", 651, "bf16", 126, body, "[2, 40, 7, 9]", "", "");
    case_env = "XDNN_NO_NORM_JOIN=1";
    join_case("join/apart/bf16/switch-off", 652, "bf16", 126, body, "[2, 40, 7, 9]", "dx: @nhwc = ds + d0;",
              ", dx: bf16 @nhwc");
    case_env = "";
}

/* session 11 (bnfwd): the forward's finalize with a block of 8 warps per channel (kernels/norm_cl.cu,
 * past CL_WIDE_SPLITS = 128 splits; was 1024).  The batchnorm-cl/ cases (C 13 / 20 / 24 / 72 / 520 / 40,
 * one row, 4099 rows, padded rows, relu or not, f32 / f16 / bf16) and the residual forwards again with
 * XDNN_NORM_CL_FIN_WIDE=0 (a block per channel at every split count) on the three launches; then
 * [8, 40, 64, 65] @nhwc (33280 rows: 130 splits of 256, held whole on the persistent launch, so the three
 * launches) where the default limit takes the block per channel itself. */
static void finwide_cases(void)
{
    case_prefix = "fin-wide/", case_env = "XDNN_NORM_CL1=0 XDNN_NORM_CL_FIN_WIDE=0";
    cl_cases();
    if (!opts.quick)
        residual_cases();
    case_prefix = case_env = "";
    for (int ti = 0; ti < 3; ti++) {
        const char *t = dts[ti];
        char name[192];
        snprintf(name, sizeof name, "fin-wide/default/batchnorm+relu/%s/nhwc/8x40x64x65", t);
        res_case(name, 4, 470 + ti, t, "[40]",
                 "  input c: %s[8, 40, 64, 65] @nhwc = uniform(2.0, 5.0);\n  weight rm: f32[40];\n"
                 "  weight rv: f32[40] = uniform(0.5, 2.0);\n"
                 "  z: @nhwc, m: f32, iv: f32, rmn: f32, rvn: f32 = batchnorm(c, s, b, running_mean=rm, "
                 "running_var=rv);\n  y: @nhwc = relu(z);\n  output y: %s @nhwc, m, iv, rmn, rvn;\n}\n", t, t);
    }
}

/* A case body with each $T replaced by the dtype t. */
static void with_dtype(const char *text, const char *t, char *body, size_t cap)
{
    size_t m = 0;
    for (const char *q = text; *q && m + strlen(t) + 1 < cap; q++) {
        if (q[0] == '$' && q[1] == 'T') {
            m += (size_t)snprintf(body + m, cap - m, "%s", t);
            q++;
        } else {
            body[m++] = *q;
        }
    }
    body[m] = 0;
}

/* ---- session 12 (pool): max / avg pooling v3 (pool.cu kpool_roll3x3s2: 3x3 stride-2 windows walked down
 * runs of 2 (or 4) output rows, the backward's winners from the same walk) and the tiled transposing copy (copy.cu
 * k_transpose).  Pooling: channels in whole 16-byte chunks (C = 8, 24 bf16 / f16; 4, 12 f32) and not (C = 20:
 * the element kernel), output rows 1, 5, 6, 9 (runs of 2 or 4 with tails), pads 0 / 1 / asymmetric, ceil_mode (a last
 * window past the padding), NaN taps (sqrt of negatives) and ties (floor), NCHW (the element kernel).  Copies:
 * NCHW <-> NHWC with odd extents, 2-D transposes with tails, a batched [0, 2, 1], a permuted slice (ibase), i32 and
 * bool (4- and 1-byte units), extents under a tile (the element loop), even extents (2-byte units in pairs).
 * Registered last. */
static void s12_pool_copy_cases(void)
{
    static const struct { int n, c, h, w; const char *attrs; } pc[] = {
        {2, 8, 13, 11, "pad=[1, 1]"},
        {3, 24, 9, 18, "pad=[0, 0]"},
        {1, 8, 17, 3, "pad=[[0, 1], [1, 0]]"},
        {2, 8, 12, 12, "pad=[1, 1], ceil_mode=true"},
        {2, 8, 2, 3, "pad=[1, 1]"},
        {1, 20, 11, 9, "pad=[1, 1]"},
    };
    for (size_t k = 0; k < sizeof pc / sizeof pc[0]; k++)
        for (int ti = 0; ti < 3; ti++) {
            const char *t = dts[ti];
            const int C = ti == 0 && pc[k].c % 8 == 0 ? pc[k].c / 2 : pc[k].c; /* f32: 4 per chunk */
            char name[192], lay[16];
            snprintf(lay, sizeof lay, "%s", k == 4 && ti == 0 ? "" : "@nhwc"); /* one NCHW case */
            const int seed = 1200 + (int)k * 3 + ti;
            snprintf(name, sizeof name, "s12-pool/max+avg/%s/%dx%dx%dx%d/%d", t, pc[k].n, C, pc[k].h, pc[k].w, (int)k);
            add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[%d, %d, %d, %d] %s;\n"
                              "  y = maxpool(x, window=[3, 3], stride=[2, 2], %s);\n"
                              "  t = maxpool(floor(x * 2.0), window=[3, 3], stride=[2, 2], %s);\n"
                              "  a = avgpool(x, window=[3, 3], stride=[2, 2], %s);\n"
                              "  b = avgpool(x, window=[3, 3], stride=[2, 2], %s, include_pad=true);\n"
                              "  output y: %s %s, t: %s %s, a: %s %s, b: %s %s;\n}\n",
                     seed, t, pc[k].n, C, pc[k].h, pc[k].w, lay, pc[k].attrs, pc[k].attrs, pc[k].attrs, pc[k].attrs,
                     t, lay, t, lay, t, lay, t, lay);
            snprintf(name, sizeof name, "s12-pool/max-nan/%s/%dx%dx%dx%d/%d", t, pc[k].n, C, pc[k].h, pc[k].w, (int)k);
            add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[%d, %d, %d, %d] %s;\n"
                              "  y = maxpool(sqrt(x + 0.8), window=[3, 3], stride=[2, 2], %s);\n  output y: %s %s;\n}\n",
                     seed + 50, t, pc[k].n, C, pc[k].h, pc[k].w, lay, pc[k].attrs, t, lay);
            /* the backward: dy in y's shape, ties (floor) and NaN taps (sqrt) pick the forward's winner */
            snprintf(name, sizeof name, "s12-pool/max_bwd/%s/%dx%dx%dx%d/%d", t, pc[k].n, C, pc[k].h, pc[k].w, (int)k);
            add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[%d, %d, %d, %d] %s;\n"
                              "  y = maxpool(x, window=[3, 3], stride=[2, 2], %s);\n  dy = y * 0.5 + 1.0;\n"
                              "  d1 = maxpool_bwd(dy, x, window=[3, 3], stride=[2, 2], %s);\n"
                              "  d2 = maxpool_bwd(dy, floor(x * 2.0), window=[3, 3], stride=[2, 2], %s);\n"
                              "  d3 = maxpool_bwd(dy, sqrt(x + 0.8), window=[3, 3], stride=[2, 2], %s);\n"
                              "  output d1: %s %s, d2: %s %s, d3: %s %s;\n}\n",
                     seed + 100, t, pc[k].n, C, pc[k].h, pc[k].w, lay, pc[k].attrs, pc[k].attrs, pc[k].attrs,
                     pc[k].attrs, t, lay, t, lay, t, lay);
        }
    static const struct { const char *id, *body; } cc[] = {
        {"nchw->nhwc/3x37x5x7", "  input x: $T[3, 37, 5, 7];\n  y = permute(x, perm=[0, 2, 3, 1]);\n  output y: $T;"},
        {"nhwc->nchw/2x9x7x40", "  input x: $T[2, 9, 7, 40];\n  y = permute(x, perm=[0, 3, 1, 2]);\n  output y: $T;"},
        {"2d/33x70", "  input x: $T[33, 70];\n  y = permute(x, perm=[1, 0]);\n  output y: $T;"},
        {"2d/129x200", "  input x: $T[129, 200];\n  y = permute(x, perm=[1, 0]);\n  output y: $T;"},
        {"batched/5x48x17", "  input x: $T[5, 48, 17];\n  y = permute(x, perm=[0, 2, 1]);\n  output y: $T;"},
        {"slice+perm/4x40x36", "  input x: $T[4, 40, 36];\n  s = slice(x, axis=2, start=3, end=35);\n"
                                "  y = permute(s, perm=[0, 2, 1]);\n  output y: $T;"},
        {"3-way/6x20x3x24", "  input x: $T[6, 20, 3, 24];\n  y = permute(x, perm=[3, 1, 0, 2]);\n  output y: $T;"},
        {"small/4x7x9", "  input x: $T[4, 7, 9];\n  y = permute(x, perm=[0, 2, 1]);\n  output y: $T;"},
        {"out-col/50x70", "  input x: $T[50, 70];\n  y = slice(x, axis=0, start=0, end=50);\n  output y: $T @col;"},
        /* even extents and offsets: 2-byte units in pairs (copy.cu cp_pairs_ok), with tile tails */
        {"pairs/nchw->nhwc/2x24x6x10", "  input x: $T[2, 24, 6, 10];\n  y = permute(x, perm=[0, 2, 3, 1]);\n"
                                       "  output y: $T;"},
        {"pairs/2d/66x130", "  input x: $T[66, 130];\n  y = permute(x, perm=[1, 0]);\n  output y: $T;"},
        {"pairs/slice+perm/4x40x36", "  input x: $T[4, 40, 36];\n  s = slice(x, axis=2, start=2, end=34);\n"
                                     "  y = permute(s, perm=[0, 2, 1]);\n  output y: $T;"},
    };
    for (size_t k = 0; k < sizeof cc / sizeof cc[0]; k++)
        for (int ti = 0; ti < 3; ti++) {
            char name[192], body[512];
            with_dtype(cc[k].body, dts[ti], body, sizeof body);
            snprintf(name, sizeof name, "s12-copy/transpose/%s/%s", cc[k].id, dts[ti]);
            add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n%s\n}\n", 1300 + (int)k * 3 + ti, body);
        }
    add_case("s12-copy/transpose/i32+bool/40x72", 1,
             "dnn 1;\ngraph g(seed=1330) {\n  input x: f32[40, 72];\n  m = gt(x, 0.0);\n"
             "  i = cast(x * 100.0, dtype=i32);\n  a = permute(m, perm=[1, 0]);\n  b = permute(i, perm=[1, 0]);\n"
             "  output a, b;\n}\n");
}

/* session 12 (normwide): the layernorm / rmsnorm backward over rows too wide
 * for the warp rows (kernels/norm_wide_bwd.cu: 16-bit rows of 4097 to 8192
 * elements, f32 2049 to 8192; a block per row, dscale / dbias partials per
 * block).  Widths 4097 (not 16-byte: norm.cu's rows), 6000 (a block of 384
 * threads, the last chunks past the row), 8192 (512 threads, every chunk),
 * 12288 and 16384 (past 8192: the split path); 263 rows (past one pass of
 * the persistent grid: each block walks 2 rows and its ring wraps) or 37
 * past 8192; f32 / f16 / bf16.  Each width: the layernorm / rmsnorm pair
 * with scale, bias and every gradient; dx alone (dscale discarded) + the
 * Llama residual add, and layernorm dx + dbias alone; then rows padded past
 * D (an outer stride that is not D), and the switch XDNN_NORM_WIDE_BWD=0
 * (norm.cu's row kernels, the A/B). */
static void wide_row_cases(void)
{
    static const int widths[][2] = {{4097, 0}, {6000, 1}, {8192, 1}, {12288, 0}, {16384, 0}}; /* D, quick */
    for (int k = 0; k < 5; k++) {
        if (opts.quick && !widths[k][1])
            continue;
        for (int ti = 0; ti < 3; ti++) {
            const char *t = dts[ti];
            const int D = widths[k][0], R = D > 8192 ? 37 : 263;
            char name[192], sh[48];
            snprintf(name, sizeof name, "wide-rows/layer+rms/%s/%dx%d", t, R, D);
            lnrms_pair_case(name, 1100 + 10 * k + 3 * ti, t, R, D, false);
            if (opts.quick && ti != 2)
                continue;
            snprintf(sh, sizeof sh, "[%d, %d]", R, D);
            snprintf(name, sizeof name, "wide-rows/dx-only+residual/%s/%dx%d", t, R, D);
            add_case(name, 2, "dnn 1;\ngraph g(seed=%d, intermediate=%s) {\n  input x: %s%s;\n  input dy: %s%s;\n"
                              "  input r0: %s%s;\n  weight s: %s[%d];\n  input ir: f32[%d, 1] = uniform(0.5, 2.0);\n"
                              "  input m: f32[%d, 1];\n  e0, _ = rmsnorm_bwd(dy, x, s, ir);\n  ex = r0 + e0;\n"
                              "  dx, _, db = layernorm_bwd(dy, x, s, m, ir);\n  output ex: %s, dx: %s, db: f32;\n}\n",
                     1101 + 10 * k + 3 * ti, t, t, sh, t, sh, t, sh, t, D, R, R, t, t);
        }
    }
    for (int ti = 0; ti < 3; ti++) {
        const char *t = dts[ti];
        char name[192];
        snprintf(name, sizeof name, "wide-rows/padded-rows/%s/37x6000@6016", t);
        add_case(name, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[37, 6000] @strides(6016, 1);\n"
                          "  input dy: %s[37, 6000] @strides(6016, 1);\n  weight s: %s[6000];\n"
                          "  input m: f32[37, 1];\n  input iv: f32[37, 1] = uniform(0.5, 2.0);\n"
                          "  dx: @strides(6016, 1), ds: f32, db: f32 = layernorm_bwd(dy, x, s, m, iv);\n"
                          "  ex: @strides(6016, 1), es: f32 = rmsnorm_bwd(dy, x, s, iv);\n"
                          "  output dx: %s @strides(6016, 1), ds, db, ex: %s @strides(6016, 1), es;\n}\n",
                 1160 + ti, t, t, t, t, t);
    }
    case_env = "XDNN_NORM_WIDE_BWD=0";
    lnrms_pair_case("wide-rows/switch-off/bf16/263x8192", 1170, "bf16", 263, 8192, false);
    case_env = "";
    /* rows enough that each block walks 5 or more (132 blocks on an H100): the ring's slots reused, its
     * wait_group with groups outstanding; with the residual too (two operands staged, a shallower ring) */
    static const struct { const char *t; int D; } ring[] = {{"bf16", 4104}, {"f32", 2052}};
    for (int i = 0; i < 2; i++) {
        const char *t = ring[i].t;
        const int R = 1500, D = ring[i].D;
        char name[192], sh[48];
        snprintf(name, sizeof name, "wide-rows/ring/%s/%dx%d", t, R, D);
        lnrms_pair_case(name, 1180 + 2 * i, t, R, D, false);
        snprintf(sh, sizeof sh, "[%d, %d]", R, D);
        snprintf(name, sizeof name, "wide-rows/ring+residual/%s/%dx%d", t, R, D);
        add_case(name, 2, "dnn 1;\ngraph g(seed=%d, intermediate=%s) {\n  input x: %s%s;\n  input dy: %s%s;\n"
                          "  input r0: %s%s;\n  weight s: %s[%d];\n  input ir: f32[%d, 1] = uniform(0.5, 2.0);\n"
                          "  e0, es = rmsnorm_bwd(dy, x, s, ir);\n  ex = r0 + e0;\n  output ex: %s, es: f32;\n}\n",
                 1181 + 2 * i, t, t, sh, t, sh, t, sh, t, D, R, t);
    }
}

/* session 15 (rmsb): the layernorm / rmsnorm backward's v4 (kernels/norm_warp_bwd.cu: rows of 4-8 warps of 2
 * chunks a lane taken two rows a barrier; XDNN_NORM_BWD_PAIR=0 keeps v2).  Widths at its edges: 16-bit 1024
 * (2 warps: v3, not v4) / 1032 (4 warps, the first v4 width) / 2048 / 2056 (8 warps) / 4088 / 4096 (the last),
 * f32 512 / 516 / 2044 / 2048; rows 1 (a pair of one row, most groups empty), 7 (every group one row: half
 * pairs only), 1001 (groups of 3 and 4 rows: whole and half pairs, the ring's two stages reused), 8193 at
 * the Llama width (one group one row past the rest), 2001 x 2056 (groups of 7 and 8); the layernorm /
 * rmsnorm pair with every gradient, dx alone + the residual, and the Llama form (rmsnorm dx + residual with
 * dscale); f32 / f16 / bf16; the switch off on a few.  --quick: 4096 and f32 2048 at 7 / 1001 rows, the
 * Llama form at 1001. */
static void rmsb_llama_case(const char *name, int seed, const char *t, int R, int D)
{
    char sh[48];
    snprintf(sh, sizeof sh, "[%d, %d]", R, D);
    add_case(name, 2, "dnn 1;\ngraph g(seed=%d, intermediate=%s) {\n  input x: %s%s;\n  input dy: %s%s;\n"
                      "  input r0: %s%s;\n  weight s: %s[%d];\n  input ir: f32[%d, 1] = uniform(0.5, 2.0);\n"
                      "  e0, es = rmsnorm_bwd(dy, x, s, ir);\n  ex = r0 + e0;\n  output ex: %s, es: f32;\n}\n",
             seed, t, t, sh, t, sh, t, sh, t, D, R, t);
}

static void rmsb_cases(void)
{
    static const struct { int ti, D, quick; } widths[] = {
        {0, 512, 0}, {0, 516, 0}, {0, 2044, 0}, {0, 2048, 1}, {1, 1024, 0}, {1, 1032, 0}, {1, 2056, 0},
        {1, 4096, 1}, {2, 1032, 0}, {2, 2048, 0}, {2, 2056, 0}, {2, 4088, 0}, {2, 4096, 1},
    };
    static const int rows[] = {1, 7, 1001};
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++)
        for (int k = 0; k < 3; k++) {
            if (opts.quick && (!widths[w].quick || k == 0))
                continue;
            const char *t = dts[widths[w].ti];
            const int D = widths[w].D, R = rows[k], seed = 1500 + 10 * (int)w + 3 * k;
            char name[192], sh[48];
            snprintf(name, sizeof name, "pair-bwd/layer+rms/%s/%dx%d", t, R, D);
            lnrms_pair_case(name, seed, t, R, D, false);
            if (opts.quick)
                continue;
            snprintf(name, sizeof name, "pair-bwd/llama/%s/%dx%d", t, R, D);
            rmsb_llama_case(name, seed + 1, t, R, D);
            snprintf(sh, sizeof sh, "[%d, %d]", R, D);
            snprintf(name, sizeof name, "pair-bwd/dx-only+residual/%s/%dx%d", t, R, D);
            add_case(name, 2, "dnn 1;\ngraph g(seed=%d, intermediate=%s) {\n  input x: %s%s;\n  input dy: %s%s;\n"
                              "  input r0: %s%s;\n  weight s: %s[%d];\n  input ir: f32[%d, 1] = uniform(0.5, 2.0);\n"
                              "  input m: f32[%d, 1];\n  e0, _ = rmsnorm_bwd(dy, x, s, ir);\n  ex = r0 + e0;\n"
                              "  dx, _, db = layernorm_bwd(dy, x, s, m, ir);\n  output ex: %s, dx: %s, db: f32;\n}\n",
                     seed + 2, t, t, sh, t, sh, t, sh, t, D, R, R, t, t);
        }
    if (opts.quick) {
        rmsb_llama_case("pair-bwd/llama/bf16/1001x4096", 1590, "bf16", 1001, 4096);
        return;
    }
    rmsb_llama_case("pair-bwd/llama/bf16/8193x4096", 1591, "bf16", 8193, 4096);
    lnrms_pair_case("pair-bwd/layer+rms/f16/2001x2056", 1592, "f16", 2001, 2056, false);
    /* (review) rows of 4 warps (two row groups a block) walking several pairs, a group's last pair one row */
    lnrms_pair_case("pair-bwd/layer+rms/bf16/2501x2048", 1595, "bf16", 2501, 2048, false);
    rmsb_llama_case("pair-bwd/llama/f32/2501x1024", 1596, "f32", 2501, 1024);
    case_env = "XDNN_NORM_BWD_PAIR=0";
    lnrms_pair_case("pair-bwd/switch-off/layer+rms/bf16/1001x4096", 1593, "bf16", 1001, 4096, false);
    rmsb_llama_case("pair-bwd/switch-off/llama/bf16/1001x4096", 1594, "bf16", 1001, 4096);
    case_env = "";
}

/* session 12 (smbwd): softmax_bwd and log_softmax_bwd on the warp rows
 * (kernels/softmax_warp_bwd.cu, XDNN_SOFTMAX_BWD_ROWS=1: y and dy in
 * registers, one reduction a row).  Widths 1 (one element: y and l inputs,
 * since a softmax of one element has a zero gradient), 7 and 31 (element
 * loads, one warp), 768 (two warps of 16-bit, f32 16-byte chunks), 4096 (8
 * warps: 16-bit 2 chunks a lane, f32 4, its widest row), 4097 (16-bit
 * element loads, 8 warps; f32 past its rows: the split path), 8192 (16-bit:
 * 8 warps of 4 chunks; f32: split), 8193 (past every row: split); rows 1, 3,
 * 1001 (a block's last groups empty); f32 / f16 / bf16; y = softmax(x), l =
 * log_softmax(x) in the graph, dy the harness's fill.  Then padded rows
 * (strides 1008: 16-byte loads; 1004: f32 16-byte, 16-bit element loads),
 * outer dims that do not merge (rank 4: the offsets' division path), the
 * axis not the contiguous one (the split path, switch on), each with the
 * switch on; then 1001 rows of 7 / 768 / 4096 / 8192 with
 * XDNN_SOFTMAX_BWD_ROWS=0 (the split path, the default until session 13: the A/B's correctness).  --quick: rows 3, widths 1 / 7 / 768 / 4097
 * / 8192, the strided forms. */
static void smbwd_case(const char *id, int seed, const char *t, int R, int D)
{
    char sh[48];
    snprintf(sh, sizeof sh, "[%d, %d]", R, D);
    if (D == 1)
        add_case(id, 2, "dnn 1;\ngraph g(seed=%d, intermediate=%s) {\n  input dy: %s%s;\n  input y: %s%s = uniform(0.05, 1.0);\n"
                        "  input l: %s%s = uniform(-3.0, 0.0);\n  dx = softmax_bwd(dy, y, axis=-1);\n"
                        "  dl = log_softmax_bwd(dy, l, axis=-1);\n  output dx: %s, dl: %s;\n}\n",
                 seed, t, t, sh, t, sh, t, sh, t, t);
    else
        add_case(id, 2, "dnn 1;\ngraph g(seed=%d, intermediate=%s) {\n  input x: %s%s = uniform(-4.0, 4.0);\n  input dy: %s%s;\n"
                        "  y = softmax(x, axis=-1);\n  dx = softmax_bwd(dy, y, axis=-1);\n"
                        "  l = log_softmax(x, axis=-1);\n  dl = log_softmax_bwd(dy, l, axis=-1);\n"
                        "  output dx: %s, dl: %s;\n}\n",
                 seed, t, t, sh, t, sh, t, t);
}

/* off: the default path's share of the grid (1001 rows of 7, 768, 4096, 8192: the widths whose path the switch
 * changes), for the A/B's correctness; the rest of the default path is the softmax_bwd/ sweep's */
static void smbwd_grid(const char *prefix, int seed0, bool off)
{
    static const int widths[] = {1, 7, 31, 768, 4096, 4097, 8192, 8193}, rows[] = {1, 3, 1001};
    for (int wi = 0; wi < 8; wi++)
        for (int ri = 0; ri < 3; ri++) {
            const int D = widths[wi], R = rows[ri];
            if (opts.quick && (R != 3 || !(D == 1 || D == 7 || D == 768 || D == 4097 || D == 8192)))
                continue;
            if (off && (R != 1001 || !(D == 7 || D == 768 || D == 4096 || D == 8192)))
                continue;
            for (int ti = 0; ti < 3; ti++) {
                char name[192];
                snprintf(name, sizeof name, "%s/%s/%dx%d", prefix, dts[ti], R, D);
                smbwd_case(name, seed0 + 30 * wi + 10 * ri + ti, dts[ti], R, D);
            }
        }
}

static void smbwd_cases(void)
{
    case_env = "XDNN_SOFTMAX_BWD_ROWS=1";
    smbwd_grid("smbwd/rows", 1400, false);
    for (int ti = 0; ti < 3; ti++) {
        const char *t = dts[ti];
        char name[192];
        for (int pad = 1004; pad <= 1008; pad += 4) {
            snprintf(name, sizeof name, "smbwd/padded-rows/%s/37x1000@%d", t, pad);
            add_case(name, 2, "dnn 1;\ngraph g(seed=%d, intermediate=%s) {\n  input x: %s[37, 1000] = uniform(-4.0, 4.0);\n"
                              "  input dy: %s[37, 1000] @strides(%d, 1);\n  y: @strides(%d, 1) = softmax(x, axis=-1);\n"
                              "  dx: @strides(%d, 1) = softmax_bwd(dy, y, axis=-1);\n"
                              "  l: @strides(%d, 1) = log_softmax(x, axis=-1);\n"
                              "  dl: @strides(%d, 1) = log_softmax_bwd(dy, l, axis=-1);\n"
                              "  output dx: %s @strides(%d, 1), dl: %s @strides(%d, 1);\n}\n",
                     1650 + ti + pad, t, t, t, pad, pad, pad, pad, pad, t, pad, t, pad);
        }
        snprintf(name, sizeof name, "smbwd/strided-rank4/%s/2x1x3x1000", t);
        add_case(name, 2, "dnn 1;\ngraph g(seed=%d, intermediate=%s) {\n  input x: %s[2, 1, 3, 1000] = uniform(-4.0, 4.0);\n"
                          "  input dy: %s[2, 1, 3, 1000] @strides(7000, 7000, 2008, 1);\n"
                          "  y = softmax(x, axis=3);\n  dx = softmax_bwd(dy, y, axis=3);\n"
                          "  l = log_softmax(x, axis=-1);\n  dl = log_softmax_bwd(dy, l, axis=-1);\n"
                          "  output dx: %s, dl: %s;\n}\n", 1660 + ti, t, t, t, t, t);
        snprintf(name, sizeof name, "smbwd/axis0-split/%s/33x130", t);
        add_case(name, 2, "dnn 1;\ngraph g(seed=%d, intermediate=%s) {\n  input x: %s[33, 130] = uniform(-4.0, 4.0);\n"
                          "  input dy: %s[33, 130];\n  y = softmax(x, axis=0);\n  dx = softmax_bwd(dy, y, axis=0);\n"
                          "  l = log_softmax(x, axis=0);\n  dl = log_softmax_bwd(dy, l, axis=0);\n"
                          "  output dx: %s, dl: %s;\n}\n", 1670 + ti, t, t, t, t, t);
    }
    case_env = "XDNN_SOFTMAX_BWD_ROWS=0";
    if (!opts.quick)
        smbwd_grid("smbwd/switch-off", 1700, true);
    case_env = "";
}

/* --dry: the path each softmax_bwd / log_softmax_bwd partition of g plans
 * onto ("rows": kernels/softmax_warp_bwd.cu, "split": norm.cu's split
 * reduction), appended to msg: the smbwd/ cases' CPU check of the routing. */
static void smbwd_dry_paths(xgraph *g, char *msg, size_t len)
{
    arena *ar = arena_create();
    gplan *pl = gpu_partition(gpu_lower(g, ar), false);
    size_t n = strlen(msg);
    for (int i = 0; i < pl->nparts; i++) {
        const gpart *p = &pl->parts[i];
        norm_kind k = p->anchor >= 0 ? gpu_norm_kind(pl->g->n[p->anchor].op) : NK_NONE;
        norm_plan np;
        char why[256];
        if ((k == NK_SMB || k == NK_LSMB) && n < len)
            n += (size_t)snprintf(msg + n, len - n, " %s:%s", pl->g->n[p->anchor].op,
                                  !gpu_norm_analyze(pl, p, 132, &np, why, sizeof why) ? "refused"
                                  : np.smb_rows                                         ? "rows"
                                                                                        : "split");
    }
    arena_destroy(ar);
}

/* ---- session 12 (gnorm): group / instance norm on kernels/norm_group.cu
 * (XDNN_GROUPNORM_V2=1, planned by eng_norm.c plan_gn): forward + backward
 * in one graph over groups 1, 2, 32 and C (instance-norm-like), odd spatial
 * (1x1, 7x5, 57x57, rank 3 and rank 2), N 1 and 3, every dtype; the group
 * held in shared memory (>= 264 groups: 9x64x12x12, 17x32x24x24) or split
 * (few or long groups: 1x32x57x57, 3x16x32x32 g1, 1x320x16x16); groups
 * whose length is not a multiple of 16 bytes (the scalar loops); a
 * one-element scale and bias (the affine off: 1 and 0, dscale / dbias one
 * sum); the fused silu; NHWC (the split paths' scalar loops: 3x64x7x5,
 * 2x320x9x7, 3x64x1x1).  Registered three times: gnv2-on/ (the switch on), gnv2-split/
 * (on, the row paths off: XDNN_GROUPNORM_V2_SPLIT=1) and gnv2-off/ (the same
 * cases with XDNN_GROUPNORM_V2=0, the generic path: the A/B); --quick: gnv2-on/ only.
 * (Groups v2 is the default since session 13: the gnv2-on/ switch is explicit.) */
/* groupnorm and its backward over x, dy: T SHAPE LAY ("" or " @nhwc"), scale / bias f32 PAR ("[C]": uniform(0.5,
 * 1.5) and Philox; "[1]": 1 and 0, the affine off) */
static void gn_pair_case(const char *id, double tol, int seed, const char *t, const char *shape, const char *lay,
                         const char *par, int G)
{
    const bool one = strcmp(par, "[1]") == 0;
    add_case(id, tol, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s%s%s;\n  input dy: %s%s%s;\n"
                      "  weight s: f32%s = %s;\n  weight b: f32%s%s;\n  y, m, iv = groupnorm(x, s, b, groups=%d);\n"
                      "  dx, ds, db = groupnorm_bwd(dy, x, s, m, iv, groups=%d);\n"
                      "  output y: %s%s, m, iv, dx: %s%s, ds, db;\n}\n",
             seed, t, shape, lay, t, shape, lay, par, one ? "fill(1.0)" : "uniform(0.5, 1.5)", par,
             one ? " = fill(0.0)" : "", G, G, t, lay, t, lay);
}

/* silu(groupnorm(x)) of x: T SHAPE LAY, scale / bias f32 PAR */
static void gn_silu_case(const char *id, int seed, const char *t, const char *shape, const char *lay, const char *par,
                         int G)
{
    add_case(id, 2, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s%s%s;\n  weight s: f32%s = uniform(0.5, 1.5);\n"
                    "  weight b: f32%s;\n  y = silu(groupnorm(x, s, b, groups=%d));\n  output y: %s%s;\n}\n",
             seed, t, shape, lay, par, par, G, t, lay);
}

static void gn_v2_table(void)
{
    static const int shapes[][7] = { /* rank, dims (N, C, spatial...), groups */
        {4, 3, 64, 7, 5, 32},     {4, 1, 32, 57, 57, 2}, {4, 3, 6, 9, 9, 6},   {4, 2, 64, 1, 1, 32},
        {4, 1, 320, 16, 16, 32},  {4, 3, 16, 32, 32, 1}, {4, 9, 64, 12, 12, 32}, {4, 17, 32, 24, 24, 16},
        {3, 3, 12, 37, 4},        {2, 5, 12, 3},
    };
    const int nsh = opts.quick ? 4 : (int)(sizeof shapes / sizeof shapes[0]);
    for (int si = 0; si < nsh; si++) {
        shape_txt st = shape_of(shapes[si]);
        const int r = st.r, G = shapes[si][r + 1];
        int64_t M = st.d[0]; /* dscale's sum length: N * spatial */
        for (int q = 2; q < r; q++)
            M *= st.d[q];
        const double ts = 4 * (sqrt((double)M) / 32 > 1 ? sqrt((double)M) / 32 : 1);
        for (int ti = 0; ti < 3; ti++) {
            char name[192];
            snprintf(name, sizeof name, "gn/g%d+bwd/%s/%s", G, dts[ti], st.id);
            gn_pair_case(name, ts, 1200 + 7 * si + ti, dts[ti], st.s, "", st.ch, G);
            if (opts.quick && ti != 2)
                continue;
            snprintf(name, sizeof name, "gn/silu/%s/%s", dts[ti], st.id);
            gn_silu_case(name, 1280 + 7 * si + ti, dts[ti], st.s, "", st.ch, G);
        }
    }
    for (int ti = 0; ti < 3; ti++) {
        const char *t = dts[ti];
        char name[192];
        /* the affine off: a one-element scale 1 and bias 0 (dscale / dbias: one sum over every channel) */
        snprintf(name, sizeof name, "gn/no-affine+bwd/%s/3x24x7x5", t);
        gn_pair_case(name, 4, 1350 + ti, t, "[3, 24, 7, 5]", "", "[1]", 4);
        snprintf(name, sizeof name, "gn/instancenorm+bwd/%s/3x16x9x7", t);
        add_case(name, 4, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[3, 16, 9, 7];\n  input dy: %s[3, 16, 9, 7];\n"
                          "  weight s: f32[16] = uniform(0.5, 1.5);\n  weight b: f32[16];\n"
                          "  y, m, iv = instancenorm(x, s, b);\n  dx, ds, db = instancenorm_bwd(dy, x, s, m, iv);\n"
                          "  output y: %s, m, iv, dx: %s, ds, db;\n}\n", 1355 + ti, t, t, t, t);
        /* NHWC: odd spatial; SD's 10 channels a group (20 bytes a position in 16-bit); 1x1 spatial */
        snprintf(name, sizeof name, "gn/nhwc+bwd/%s/3x64x7x5", t);
        gn_pair_case(name, 4, 1360 + ti, t, "[3, 64, 7, 5]", " @nhwc", "[64]", 32);
        snprintf(name, sizeof name, "gn/nhwc+silu/%s/3x64x7x5", t);
        gn_silu_case(name, 1363 + ti, t, "[3, 64, 7, 5]", " @nhwc", "[64]", 32);
        snprintf(name, sizeof name, "gn/nhwc+bwd/%s/2x320x9x7", t);
        gn_pair_case(name, 4, 1365 + ti, t, "[2, 320, 9, 7]", " @nhwc", "[320]", 32);
        snprintf(name, sizeof name, "gn/nhwc+silu/%s/3x64x1x1", t);
        gn_silu_case(name, 1368 + ti, t, "[3, 64, 1, 1]", " @nhwc", "[64]", 16);
    }
}

static void gn_v2_cases(void)
{
    case_prefix = "gnv2-on/", case_env = "XDNN_GROUPNORM_V2=1";
    gn_v2_table();
    if (!opts.quick) {
        case_prefix = "gnv2-split/", case_env = "XDNN_GROUPNORM_V2=1 XDNN_GROUPNORM_V2_SPLIT=1";
        gn_v2_table();
        case_prefix = "gnv2-off/", case_env = "XDNN_GROUPNORM_V2=0";
        gn_v2_table();
    }
    case_prefix = case_env = "";
}

/* session 12 (review): the row kernels with 16-byte vectors that cross a channel (35 elements a channel):
 * 320 groups of D = 280 (two an SM or more on an H100: the row path), forward + backward and + silu */
static void gn_v2_cross_cases(void)
{
    case_prefix = "gnv2-on/", case_env = "XDNN_GROUPNORM_V2=1";
    for (int ti = 0; ti < 3; ti++) {
        char name[192];
        snprintf(name, sizeof name, "gn/cross+bwd/%s/10x256x7x5", dts[ti]);
        gn_pair_case(name, 4, 1370 + ti, dts[ti], "[10, 256, 7, 5]", "", "[256]", 32);
        snprintf(name, sizeof name, "gn/cross+silu/%s/10x256x7x5", dts[ti]);
        gn_silu_case(name, 1373 + ti, dts[ti], "[10, 256, 7, 5]", "", "[256]", 32);
    }
    case_prefix = case_env = "";
}

/* ---- session 12 (gnorm): Stable Diffusion's groupnorm + silu (issue 12: 32 groups, C 320-1280, 64x64 down
 * to 8x8, NCHW and NHWC), bench rows beside bench/s12/groupnorm (bench/mem_peer.py has their peers) */
static void gn_bench_cases(void)
{
    static const struct { const char *id; int N, C, H; const char *lay; } r[] = {
        {"2x320x64x64", 2, 320, 64, ""},   {"2x640x32x32", 2, 640, 32, ""}, {"2x1280x16x16", 2, 1280, 16, ""},
        {"2x1280x8x8", 2, 1280, 8, ""},    {"nhwc/2x320x64x64", 2, 320, 64, " @nhwc"},
    };
    for (size_t k = 0; k < sizeof r / sizeof r[0]; k++) {
        char name[192];
        snprintf(name, sizeof name, "bench/s12/groupnorm+silu/bf16/%s", r[k].id);
        add_case(name, 1, "dnn 1;\ngraph g(seed=12) {\n  input x: bf16[%d, %d, %d, %d]%s;\n"
                          "  weight s: f32[%d] = uniform(0.5, 1.5);\n  weight b: f32[%d];\n"
                          "  y = silu(groupnorm(x, s, b, groups=32));\n  output y: bf16%s;\n}\n",
                 r[k].N, r[k].C, r[k].H, r[k].H, r[k].lay, r[k].C, r[k].C, r[k].lay);
    }
}

/* ---- session 13 (pw, issue 12): the last memory-bound rows behind PyTorch.
 * s13-pw/: the logistic family's approximate forms for 16-bit results (lower.c pw_fast_form: silu, sigmoid,
 * swish and the backwards of those and softplus; f32 keeps the exact ones), over |x| up to 30 and 200, and the
 * extremes: exp(100 x) makes +inf and 0, its negation -inf, log(x < 0) NaN; every output on its own (no sums
 * that would cancel a 1-ulp rounding flip).  Widening casts (bf16 / f16 -> f32, alone and after silu) and a
 * narrowing one: chunks of 16 bytes of the widest full stream (codegen.c vec_width); odd widths take 1.
 * s13-copy/: concat / split pieces in one launch (copy.cu k_copy_pieces): 16-byte, 4-byte and 2-byte units,
 * pieces past the grid (grid-stride across a piece boundary), axis 0, 4-D, uneven splits (unit sizes differ:
 * one launch each), 9 pieces (past CP_GROUP_MAX: one each).  The -exact/, -narrowest/ and -off/ prefixes run
 * some of them with the switch that keeps the old path. */
static void s13_pw_table(int seed0, bool logistic, bool widen, int nshapes)
{
    static const char *const shapes[] = {"[3, 1001]", "[5, 64]", "[2, 17, 40]", "[1000003]", "[33, 4104]"};
    for (int si = 0; si < nshapes; si++)
        for (int ti = 0; ti < 3; ti++) {
            const char *t = dts[ti], *sh = shapes[si];
            const int seed = seed0 + si * 10 + ti * 3;
            char name[192];
            if (logistic) {
                snprintf(name, sizeof name, "logistic/%s/%s", t, sh);
                add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s%s = uniform(-30, 30);\n  input dy: %s%s;\n"
                                  "  y = silu(x);\n  s = sigmoid(x);\n  w = swish(x, beta=1.75);\n  d = silu_bwd(dy, x);\n"
                                  "  e = sigmoid_bwd(dy, x);\n  f = swish_bwd(dy, x, beta=0.5);\n"
                                  "  h = softplus_bwd(dy, x, beta=2.0);\n  output y, s, w, d, e, f, h;\n}\n",
                         seed, t, sh, t, sh);
                snprintf(name, sizeof name, "extremes/%s/%s", t, sh);
                add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s%s = uniform(-1, 1);\n  input dy: %s%s;\n"
                                  "  u = exp(x * 100.0);\n  y = silu(u);\n  z = silu(u * -1.0);\n  s = sigmoid(u * -1.0);\n"
                                  "  r = sigmoid(u);\n  n = silu(log(x));\n  b = silu_bwd(dy, x * 200.0);\n"
                                  "  c = sigmoid_bwd(dy, u * -1.0);\n  output y, z, s, r, n, b, c;\n}\n",
                         seed + 1, t, sh, t, sh);
            }
            if (widen && ti > 0) {
                snprintf(name, sizeof name, "widen/%s->f32/%s", t, sh);
                add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s%s;\n  y = cast(x, dtype=f32);\n"
                                  "  z = silu(x);\n  w = x * 0.5 + 1.0;\n  output y, z: f32, w: f32;\n}\n",
                         seed + 2, t, sh);
            } else if (widen) {
                snprintf(name, sizeof name, "narrow/f32->bf16+f16/%s", sh);
                add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: f32%s;\n  y = cast(x, dtype=bf16);\n"
                                  "  z = cast(x * 3.0, dtype=f16);\n  output y, z;\n}\n",
                         seed + 2, sh);
            }
        }
}

static void s13_copy_table(int seed0)
{
    for (int ti = 0; ti < 3; ti++) {
        const char *t = dts[ti];
        const int seed = seed0 + ti * 10;
        char name[192];
        snprintf(name, sizeof name, "concat3-16B/%s", t);
        add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input a: %s[5, 24];\n  input b: %s[5, 40];\n  input c: %s[5, 8];\n"
                          "  y = concat(a, b, c, axis=1);\n  output y;\n}\n", seed, t, t, t);
        static const struct { const char *id, *a, *b; int axis; } two[] = {
            {"concat2-odd", "[129, 1031]", "[129, 5]", 1},     {"concat-axis0", "[1001, 24]", "[3, 24]", 0},
            {"concat-4d", "[2, 3, 5, 7]", "[2, 4, 5, 7]", 1}, {"concat-big", "[1031, 2050]", "[1031, 2046]", 1},
        };
        for (int k = 0; k < 4; k++) {
            snprintf(name, sizeof name, "%s/%s", two[k].id, t);
            add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input a: %s%s;\n  input b: %s%s;\n"
                              "  y = concat(a, b, axis=%d);\n  output y;\n}\n", seed + 1 + k, t, two[k].a, t, two[k].b,
                     two[k].axis);
        }
        snprintf(name, sizeof name, "split3/%s", t);
        add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[6, 960];\n  s0, s1, s2 = split(x, axis=1);\n"
                          "  output s0, s1, s2;\n}\n", seed + 5, t);
        snprintf(name, sizeof name, "split-uneven/%s", t);
        add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[7, 1000];\n"
                          "  s0, s1, s2 = split(x, axis=1, sizes=[300, 500, 200]);\n  output s0, s1, s2;\n}\n",
                 seed + 6, t);
        char text[TEXT_MAX];
        int n = snprintf(text, sizeof text, "dnn 1;\ngraph g(seed=%d) {\n", seed + 7);
        for (int k = 0; k < 9; k++)
            n += snprintf(text + n, sizeof text - (size_t)n, "  input a%d: %s[%d, 8];\n", k, t, k + 1);
        n += snprintf(text + n, sizeof text - (size_t)n, "  y = concat(a0, a1, a2, a3, a4, a5, a6, a7, a8, axis=0);\n"
                                                         "  output y;\n}\n");
        snprintf(name, sizeof name, "concat9/%s", t);
        add_case(name, 1, "%s", text);
    }
}

static void s13_cases(void)
{
    case_prefix = "s13-pw/";
    s13_pw_table(1300, true, true, opts.quick ? 2 : 5);
    case_prefix = "s13-copy/";
    s13_copy_table(1360);
    case_prefix = "s13-pw-exact/", case_env = "XDNN_PW_APPROX=0";
    s13_pw_table(1300, true, false, 2);
    case_prefix = "s13-pw-narrowest/", case_env = "XDNN_PW_VEC_WIDEST=0";
    s13_pw_table(1300, false, true, 3);
    case_prefix = "s13-copy-off/", case_env = "XDNN_COPY_ONE_LAUNCH=0";
    s13_copy_table(1360);
    case_prefix = case_env = "";
}

/* session 13 (pw): the siblings of the three rows (bench/s12/ pw/silu, pw/cast/bf16->f32, concat), with
 * their peers in bench/mem_peer.py */
static void s13_bench_cases(void)
{
    static const bench_row r[] = {
        {"pw/sigmoid/bf16/8192x8192", "  input x: bf16[8192, 8192];\n  y = sigmoid(x);\n  output y: bf16;"},
        {"pw/silu_bwd/bf16/8192x8192", "  input dy: bf16[8192, 8192];\n  input x: bf16[8192, 8192];\n"
                                       "  dx = silu_bwd(dy, x);\n  output dx: bf16;"},
        {"pw/silu->f32/bf16/8192x8192", "  input x: bf16[8192, 8192];\n  y = silu(x);\n  output y: f32;"},
        {"pw/cast/f16->f32/8192x8192", "  input x: f16[8192, 8192];\n  y = cast(x, dtype=f32);\n  output y: f32;"},
        {"pw/cast/f32->bf16/8192x8192", "  input x: f32[8192, 8192];\n  y = cast(x, dtype=bf16);\n  output y: bf16;"},
        {"split/bf16/[8192,8192]->2x[8192,4096]", "  input x: bf16[8192, 8192];\n  a, b = split(x, axis=1);\n"
                                                  "  output a, b;"},
    };
    add_bench_rows("s13", 13, r, sizeof r / sizeof r[0]);
}

/* ---- running one case (the shared part is tests/gpu/diffharness.c) */

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
    bool bench = opts.bench;
    /* the case's environment (cl1_cases), set while it is planned and run */
    char envbuf[sizeof c->env];
    dh_env env = {0};
    snprintf(envbuf, sizeof envbuf, "%s", c->env);
    for (char *sv = NULL, *tok = strtok_r(envbuf, " ", &sv); tok; tok = strtok_r(NULL, " ", &sv)) {
        char *eq = strchr(tok, '=');
        if (!eq)
            continue;
        *eq = 0;
        dh_env_set(&env, tok, eq + 1);
    }
    dh_case_run r = {0};
    xdnn_status s = dh_case_begin(&r, c->id, c->text, !bench, out);
    xgraph *g = r.g;
    if (s != XDNN_OK)
        goto done;
    /* the genstats/ cases test the pairing whatever its default (src/gpu/genstats.c) */
    const bool gs_on = strncmp(c->id, "genstats/", 9) == 0 && !getenv("XDNN_GENSTATS");
    if (gs_on)
        setenv("XDNN_GENSTATS", "1", 1);
    if (opts.dry) {
        s = dh_dry_select(g, out->engines, sizeof out->engines, r.d);
        if (gs_on)
            unsetenv("XDNN_GENSTATS");
        out->ok = s == XDNN_OK;
        snprintf(out->msg, sizeof out->msg, "(dry: planned, not run)");
        if (s == XDNN_OK && strncmp(c->id, "smbwd/", 6) == 0) /* set while the case's environment is */
            smbwd_dry_paths(g, out->msg, sizeof out->msg);
        goto done;
    }
    gpu_run_opts o = {.warmup = bench ? 10 : 0, .iters = bench ? 50 : 1, .log = stderr,
                      .verbose = getenv("DIFFTEST_VERBOSE") ? 1 : 0,
                      .const_weights = strncmp(c->id, "const/", 6) == 0};
    s = dh_gpu_run(&r, &o, out);
    if (gs_on)
        unsetenv("XDNN_GENSTATS");
    if (s != XDNN_OK)
        goto done;
    if (bench) {
        size_t n = 0;
        for (int k = 0; k < r.rep.nparts && n < sizeof out->msg; k++) {
            const gpu_partition_report *p = &r.rep.parts[k];
            double sec = p->ms_median * 1e-3;
            n += (size_t)snprintf(out->msg + n, sizeof out->msg - n,
                                  "\n    BENCH %s | %s | %s | median %.4f ms (min %.4f max %.4f) | %.1f GB/s | %s",
                                  c->id, p->name, p->engine, p->ms_median, p->ms_min, p->ms_max,
                                  sec > 0 ? p->bytes / sec * 1e-9 : 0, p->detail ? p->detail : "");
        }
        out->ok = dh_outputs_finite(&r);
        goto done;
    }
    out->ok = true;
    size_t n = 0;
    for (size_t k = 0; k < g->noutputs; k++) {
        /* METHOD.md's per-dtype tolerance, widened by the case's scale. */
        dh_rule rule = {.require_nonzero = true};
        dh_default_tolerance(g, g->outputs[k], &rule.rtol, &rule.atol);
        rule.rtol *= c->tol_scale;
        rule.atol *= c->rel_only ? 0 : c->tol_scale;
        out->ok &= dh_compare_output(&r, g->outputs[k], &rule, out->msg, sizeof out->msg, &n, NULL);
    }
done:
    dh_env_restore(&env);
    dh_case_end(&r, c->id, out->ok);
}

/* ---- session 14: the logistic family's fast forms (codegen.c xd_sigmoid_fast, lower.c pw_fast_form) at the
 * ends of the range, compared with atol 0 (relative error alone: the default atol would pass a 0 or a 100 %
 * error on results this small).  Session 13's form flushed e^-x's reciprocal below 2^-126 to 0, so bf16 silu /
 * silu_bwd of x from -91 to -87.3 (normal results, -2.7e-38 to -1e-36) gave 0; e / (1 + e) from a non-ftz ex2
 * keeps them.  sigmoid itself there is a bf16 subnormal, whose coarse steps a 1-ulp f32 difference can flip,
 * so only its normal side (x from -87.2 to -80) is compared: a guard of the new form (the old one passed it).
 * silu_bwd at x = -91 with dy = 0.5 is 1.3e-38, just above the normal range: keep both bounds.  sigmoid_bwd of x from 9 to 16 (1.1e-7 to 1.2e-4):
 * its 1 - sigmoid(x) was a cancellation of f32 values off by an ulp of 1 (up to 100 % off at x = 16; the CPU
 * reference computes in double), now sigmoid(-x). */
static void s14_cases(void)
{
    static const char *const shapes[] = {"[4, 1003]", "[65536]"};
    for (int si = 0; si < 2; si++) {
        char name[96];
        snprintf(name, sizeof name, "s14-logistic-low/silu/bf16/%s", shapes[si]);
        add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: bf16%s = uniform(-91, -87.5);\n"
                          "  input dy: bf16%s = uniform(0.5, 2);\n  y = silu(x);\n  d = silu_bwd(dy, x);\n"
                          "  output y, d;\n}\n", 1400 + si, shapes[si], shapes[si]);
        cases[ncases - 1].rel_only = true;
        snprintf(name, sizeof name, "s14-logistic-low/sigmoid/bf16/%s", shapes[si]);
        add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: bf16%s = uniform(-87.2, -80);\n"
                          "  y = sigmoid(x);\n  output y;\n}\n", 1410 + si, shapes[si]);
        cases[ncases - 1].rel_only = true;
        snprintf(name, sizeof name, "s14-logistic-high/sigmoid_bwd/bf16/%s", shapes[si]);
        add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: bf16%s = uniform(9, 16);\n"
                          "  input dy: bf16%s = uniform(0.5, 2);\n  d = sigmoid_bwd(dy, x);\n  output d;\n}\n",
                 1420 + si, shapes[si], shapes[si]);
        cases[ncases - 1].rel_only = true;
    }
}

/* A transposing-copy family: the cases cc in f32 / f16 / bf16, compared exactly (a copy moves bits; "many/" ones
 * in f32 only under --quick) with seeds seed_cc + 3 k + dtype; NaN (sqrt of negatives) and +-Inf (x / 0: floor(2x)
 * = 0 on [0, 0.5)) through an R x C transpose, at the tolerance of their pointwise producers (seeds seed_nan +
 * dtype); and the cases ic in i32, i64 and bool (seeds seed_ic + k).  Ids PREFIX/transpose/... */
typedef struct { const char *id, *body; } tp_case;
typedef struct { const char *id, *shape, *perm; } tp_int_case;
static void transpose_family(const char *prefix, const tp_case *cc, size_t ncc, int seed_cc, int nan_r, int nan_c,
                             int seed_nan, const tp_int_case *ic, size_t nic, int seed_ic)
{
    char name[192], body[512];
    for (size_t k = 0; k < ncc; k++)
        for (int ti = 0; ti < 3; ti++) {
            if (opts.quick && strncmp(cc[k].id, "many/", 5) == 0 && ti > 0)
                continue;
            with_dtype(cc[k].body, dts[ti], body, sizeof body);
            snprintf(name, sizeof name, "%s/transpose/%s/%s", prefix, cc[k].id, dts[ti]);
            add_case(name, 0, "dnn 1;\ngraph g(seed=%d) {\n%s\n}\n", seed_cc + (int)k * 3 + ti, body);
        }
    for (int ti = 0; ti < 3; ti++) {
        snprintf(name, sizeof name, "%s/transpose/nan-inf/2d/%dx%d/%s", prefix, nan_r, nan_c, dts[ti]);
        add_case(name, 1, "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[%d, %d];\n  p: %s = sqrt(x);\n"
                          "  q: %s = x / floor(x * 2.0);\n  a = permute(p, perm=[1, 0]);\n"
                          "  b = permute(q, perm=[1, 0]);\n  output a: %s, b: %s;\n}\n",
                 seed_nan + ti, dts[ti], nan_r, nan_c, dts[ti], dts[ti], dts[ti], dts[ti]);
    }
    for (size_t k = 0; k < nic; k++) {
        snprintf(name, sizeof name, "%s/transpose/%s/i32+i64+bool", prefix, ic[k].id);
        add_case(name, 0, "dnn 1;\ngraph g(seed=%d) {\n  input x: f32%s;\n  m = gt(x, 0.0);\n"
                          "  i = cast(x * 1000.0, dtype=i32);\n  l = cast(x * 1000.0, dtype=i64);\n"
                          "  a = permute(i, perm=%s);\n  b = permute(l, perm=%s);\n  c = permute(m, perm=%s);\n"
                          "  output a, b, c;\n}\n", seed_ic + (int)k, ic[k].shape, ic[k].perm, ic[k].perm, ic[k].perm);
    }
}

/* ---- session 15 (tpose15): the pipelined transposing copy (copy.cu k_transpose_piped: the next tile's loads in
 * flight, a grid of the resident blocks; XDNN_COPY_TILED_V2=0 is k_transpose, =2 tiles twice as deep), compared
 * exactly (a copy moves bits).  Tiles partial at both edges (odd extents; even ones move 2-byte units in pairs),
 * 1-sized batch dims, batch dims on both sides of the tiled ones (5-D), 2-D transposes with a line and a half of
 * tail, slices as views (a first unit past 0, 16-byte aligned as views need; odd and even strides) and as the
 * copy's own offset (a slice written column-major: an odd and an even first unit), NaN / Inf moved as they are,
 * shapes under a tile (the element loop: C = 5, a row of one), and shapes of 2000-9000 tiles (several a block:
 * the pipeline's steady state and its end); every unit size: f32 / f16 / bf16, i32, i64 (8-byte units) and bool
 * (1-byte units: k_transpose).  Registered last. */
static void tp15_cases(void)
{
    static const tp_case cc[] = {
        {"nchw->nhwc/3x5x7x9", "  input x: $T[3, 5, 7, 9];\n  y = permute(x, perm=[0, 2, 3, 1]);\n  output y: $T;"},
        {"nchw->nhwc/3x17x7x9", "  input x: $T[3, 17, 7, 9];\n  y = permute(x, perm=[0, 2, 3, 1]);\n  output y: $T;"},
        {"4d/1x1x65x63", "  input x: $T[1, 1, 65, 63];\n  y = permute(x, perm=[0, 1, 3, 2]);\n  output y: $T;"},
        {"nchw->nhwc/2x130x33x17", "  input x: $T[2, 130, 33, 17];\n  y = permute(x, perm=[0, 2, 3, 1]);\n"
                                   "  output y: $T;"},
        {"nhwc->nchw/2x33x17x130", "  input x: $T[2, 33, 17, 130];\n  y = permute(x, perm=[0, 3, 1, 2]);\n"
                                   "  output y: $T;"},
        {"pairs/nchw->nhwc/2x130x34x17", "  input x: $T[2, 130, 34, 17];\n  y = permute(x, perm=[0, 2, 3, 1]);\n"
                                         "  output y: $T;"},
        {"pairs/nhwc->nchw/2x34x17x130", "  input x: $T[2, 34, 17, 130];\n  y = permute(x, perm=[0, 3, 1, 2]);\n"
                                         "  output y: $T;"},
        {"2d/8193x127", "  input x: $T[8193, 127];\n  y = permute(x, perm=[1, 0]);\n  output y: $T;"},
        {"2d/127x8193", "  input x: $T[127, 8193];\n  y = permute(x, perm=[1, 0]);\n  output y: $T;"},
        {"2d/1x8192", "  input x: $T[1, 8192];\n  y = permute(x, perm=[1, 0]);\n  output y: $T;"},
        {"5d/2x3x20x5x18", "  input x: $T[2, 3, 20, 5, 18];\n  y = permute(x, perm=[4, 1, 0, 3, 2]);\n"
                           "  output y: $T;"},
        {"view/slice+perm/2x150x33x17", "  input x: $T[2, 150, 33, 17];\n"
                                        "  s: $T = slice(x, axis=1, start=16, end=146);\n"
                                        "  y = permute(s, perm=[0, 2, 3, 1]);\n  output y: $T;"},
        {"view/slice+perm/4x40x81", "  input x: $T[4, 40, 81];\n  s: $T = slice(x, axis=2, start=8, end=72);\n"
                                    "  y = permute(s, perm=[0, 2, 1]);\n  output y: $T;"},
        {"view/slice+perm/pairs/4x40x80", "  input x: $T[4, 40, 80];\n  s: $T = slice(x, axis=2, start=8, end=72);\n"
                                          "  y = permute(s, perm=[0, 2, 1]);\n  output y: $T;"},
        {"slice-col/70x90", "  input x: $T[70, 90];\n  y = slice(x, axis=1, start=3, end=88);\n  output y: $T @col;"},
        {"slice-col/pairs/70x90", "  input x: $T[70, 90];\n  y = slice(x, axis=1, start=2, end=84);\n"
                                  "  output y: $T @col;"},
        {"many/nchw->nhwc/32x200x45x47", "  input x: $T[32, 200, 45, 47];\n  y = permute(x, perm=[0, 2, 3, 1]);\n"
                                         "  output y: $T;"},
        {"many/nchw->nhwc/16x256x56x56", "  input x: $T[16, 256, 56, 56];\n  y = permute(x, perm=[0, 2, 3, 1]);\n"
                                         "  output y: $T;"},
        {"many/nhwc->nchw/16x56x56x256", "  input x: $T[16, 56, 56, 256];\n  y = permute(x, perm=[0, 3, 1, 2]);\n"
                                         "  output y: $T;"},
        {"many/2d/3001x2999", "  input x: $T[3001, 2999];\n  y = permute(x, perm=[1, 0]);\n  output y: $T;"},
    };
    static const tp_int_case ic[] = {
        {"nchw->nhwc/2x130x33x17", "[2, 130, 33, 17]", "[0, 2, 3, 1]"},
        {"2d/8193x127", "[8193, 127]", "[1, 0]"},
        {"many/2d/1500x1999", "[1500, 1999]", "[1, 0]"},
    };
    transpose_family("tp15", cc, sizeof cc / sizeof cc[0], 1500, 130, 70, 1580, ic, sizeof ic / sizeof ic[0], 1590);
}

/* ---- session 16 (tpose): the transposing copy through cp.async (copy.cu k_transpose_async: 16-byte chunks of the
 * input's lines straight into one of 3 shared buffers, a thread's LP x SP block transposed in registers; taken
 * when the input's lines split into whole 16-byte chunks and the output's into runs of SP = 4 or 2 units), compared
 * exactly.  Shapes that take it with partial tiles along a and d (a: 48, 288, 136 units; d: 20, 130, 3000),
 * runs of 2 (d = 130: SP = 2) and of 4, 1-sized dims, a 5-D job with batch dims on both sides, views (a slice
 * before the tiled dims and one along a: first units 16-byte aligned), a column-major output written from a
 * slice, NaN / Inf, shapes of 1000-3000 tiles (several a block: the three buffers' steady state and their end),
 * and every unit size: f32 / f16 / bf16, i32, i64 (SP = 2) and bool (1-byte units, LP = 16).  Beside them,
 * v2/ (an odd d) and a slice along a at unit 4 (off the 16-byte chunks in 16-bit types: v2, or a copy first)
 * take the other paths in the same process.  With
 * XDNN_COPY_TILED_V2=1 every case runs session 15's kernel.  Registered last. */
static void tp16_cases(void)
{
    static const tp_case cc[] = {
        {"nchw->nhwc/3x20x8x6", "  input x: $T[3, 20, 8, 6];\n  y = permute(x, perm=[0, 2, 3, 1]);\n  output y: $T;"},
        {"sp2/nchw->nhwc/2x130x24x12", "  input x: $T[2, 130, 24, 12];\n  y = permute(x, perm=[0, 2, 3, 1]);\n"
                                       "  output y: $T;"},
        {"nhwc->nchw/2x24x12x136", "  input x: $T[2, 24, 12, 136];\n  y = permute(x, perm=[0, 3, 1, 2]);\n"
                                   "  output y: $T;"},
        {"2d/264x1000", "  input x: $T[264, 1000];\n  y = permute(x, perm=[1, 0]);\n  output y: $T;"},
        {"sp2/2d/130x96", "  input x: $T[130, 96];\n  y = permute(x, perm=[1, 0]);\n  output y: $T;"},
        {"v2/2d/129x1000", "  input x: $T[129, 1000];\n  y = permute(x, perm=[1, 0]);\n  output y: $T;"},
        {"4d/1x1x64x48", "  input x: $T[1, 1, 64, 48];\n  y = permute(x, perm=[0, 1, 3, 2]);\n  output y: $T;"},
        {"5d/2x3x24x5x16", "  input x: $T[2, 3, 24, 5, 16];\n  y = permute(x, perm=[4, 1, 0, 3, 2]);\n"
                           "  output y: $T;"},
        {"view/slice+perm/2x150x24x16", "  input x: $T[2, 150, 24, 16];\n"
                                        "  s: $T = slice(x, axis=1, start=16, end=144);\n"
                                        "  y = permute(s, perm=[0, 2, 3, 1]);\n  output y: $T;"},
        {"view/slice-a+perm/4x40x96", "  input x: $T[4, 40, 96];\n  s: $T = slice(x, axis=2, start=8, end=88);\n"
                                      "  y = permute(s, perm=[0, 2, 1]);\n  output y: $T;"},
        {"view/slice-a-at-4+perm/4x40x96", "  input x: $T[4, 40, 96];\n  s: $T = slice(x, axis=2, start=4, end=84);\n"
                                         "  y = permute(s, perm=[0, 2, 1]);\n  output y: $T;"},
        {"slice-col/72x96", "  input x: $T[72, 96];\n  y = slice(x, axis=1, start=8, end=88);\n  output y: $T @col;"},
        {"many/nchw->nhwc/16x256x56x56", "  input x: $T[16, 256, 56, 56];\n  y = permute(x, perm=[0, 2, 3, 1]);\n"
                                         "  output y: $T;"},
        {"many/nhwc->nchw/16x56x56x256", "  input x: $T[16, 56, 56, 256];\n  y = permute(x, perm=[0, 3, 1, 2]);\n"
                                         "  output y: $T;"},
        {"many/2d/3000x2992", "  input x: $T[3000, 2992];\n  y = permute(x, perm=[1, 0]);\n  output y: $T;"},
    };
    /* i32 (4-byte units), i64 (8: SP = 2), bool (1: LP = 16; SP = 2 on d = 130, 4 on the 2-D ones) */
    static const tp_int_case ic[] = {
        {"sp2/nchw->nhwc/2x130x24x16", "[2, 130, 24, 16]", "[0, 2, 3, 1]"},
        {"2d/96x320", "[96, 320]", "[1, 0]"},
        {"many/2d/1504x2000", "[1504, 2000]", "[1, 0]"},
    };
    transpose_family("tp16", cc, sizeof cc / sizeof cc[0], 1600, 136, 72, 1660, ic, sizeof ic / sizeof ic[0], 1670);
}

/* ---- session 13 (bnl2): the persistent launch (kernels/norm_cl1.cu) walking its re-read rows top down with
 * evict-first loads and stores (ng_job.cl_l2, by default for x of 32-256 MB; XDNN_NORM_CL_L2).  The
 * batchnorm-cl/, fuse/ and join/ cases again with it on (=1) on the three launches (which ignore it since call 2;
 * in call 1 their reduce read top down), and on the persistent launch holding 3 rows a block (the other rows
 * read again, top down; pass 1's loads switching policy at the held rows' end); the batchnorm-cl/ cases with
 * the switch off (=0: the order before).  Then odd shapes where a thread's rows are not a whole number of its
 * groups (U rows) and splits end unevenly: [3, 40, 37, 41] (4551 rows) and [9, 64, 97, 121] (105633 rows: two
 * or three groups a thread on either launch), forward + residual + relu and the backward apart, on the three
 * launches, the persistent one holding 5 rows, and the default.  Registered last. */
static void l2_cases(void)
{
    static const char *const runs[][2] = {{"l2-on/", "XDNN_NORM_CL_L2=1 XDNN_NORM_CL1=0"},
                                           {"l2-on-cl1/", "XDNN_NORM_CL_L2=1 XDNN_NORM_CL1=all XDNN_NORM_CL1_ROWS=3"},
                                           {"l2-off/", "XDNN_NORM_CL_L2=0"}};
    for (int k = 0; k < 3; k++) {
        case_prefix = runs[k][0], case_env = runs[k][1];
        cl_cases();
        if (k < 2 && !opts.quick)
            residual_cases();
        if (k == 0 && !opts.quick)
            join_cases();
    }
    case_prefix = case_env = "";
    static const char *const odd_env[][2] = {{"three", "XDNN_NORM_CL_L2=1 XDNN_NORM_CL1=0"},
                                             {"cl1-held5", "XDNN_NORM_CL_L2=1 XDNN_NORM_CL1=all XDNN_NORM_CL1_ROWS=5"},
                                             {"default", ""}};
    static const int odd[][5] = {{4, 3, 40, 37, 41}, {4, 9, 64, 97, 121}};
    for (int si = 0; si < (opts.quick ? 1 : 2); si++) {
        shape_txt st = shape_of(odd[si]);
        const int M = st.d[0] * st.d[2] * st.d[3];
        const double ts = sqrt((double)M) / 32; /* dscale: as cl_cases */
        for (int k = 0; k < 3; k++) {
            case_env = odd_env[k][1];
            for (int ti = 0; ti < 3; ti++) {
                const char *t = dts[ti];
                char name[192];
                snprintf(name, sizeof name, "l2-odd/%s/batchnorm+residual+relu/%s/nhwc/%s", odd_env[k][0], t, st.id);
                res_case(name, 2, 700 + 20 * si + 3 * k + ti, t, st.ch,
                         "  input c: %s%s @nhwc = uniform(-2.0, 3.0);\n  input r: %s%s @nhwc;\n"
                         "  z: @nhwc, m: f32, iv: f32 = batchnorm(c, s, b);\n  y: @nhwc = relu(z + r);\n"
                         "  output y: %s @nhwc, m, iv;\n}\n", t, st.s, t, st.s, t);
                snprintf(name, sizeof name, "l2-odd/%s/batchnorm_bwd/%s/nhwc/%s", odd_env[k][0], t, st.id);
                add_case(name, 2 * (ts > 1 ? ts : 1),
                         "dnn 1;\ngraph g(seed=%d) {\n  input x: %s%s @nhwc = uniform(-2.0, 3.0);\n"
                         "  input dy: %s%s @nhwc;\n  weight s: f32%s = uniform(0.5, 1.5);\n"
                         "  input m: f32%s = uniform(0.0, 1.0);\n  input iv: f32%s = uniform(0.5, 2.0);\n"
                         "  dx, ds, db = batchnorm_bwd(dy, x, s, m, iv);\n  output dx: %s @nhwc, ds, db;\n}\n",
                         760 + 20 * si + 3 * k + ti, t, st.s, t, st.s, st.ch, st.ch, st.ch, t);
            }
        }
    }
    case_env = "";
}

/* ---- session 15 (pool15): the max-pooling backward of 3x3 stride-2 windows in one pass (pool.cu v4,
 * kpool_bwd_walk: a thread per 2 x 2 block of input pixels walking down the blocks).  Compared exactly (tolerance
 * 0): dy is a max pooling of uniform(-4, 4) floored to eighths, so every dx (a sum of at most 4 of them) is exact in
 * f32 and in the output dtype.  x as drawn (no ties), with ties (floor: integers -2..2), -inf (80 % of taps, whole
 * windows of them, where the first tap inside x takes dy; the rest 8..11) and NaN (40 % of taps, the first NaN takes
 * dy), every value exact on both sides (log and sqrt of integers: a tap's order is the reference's).
 * Shapes: odd extents (7 x 9, 113 x 57), 1 x 1 and 2 x 2 (one window), pads 0 / 1 / 2 / asymmetric, ceil_mode (a
 * last window past the padding), N = 1 and 2-3, C of one 16-byte chunk and of several (f32 takes C / 2); then C = 12
 * (6 for f32: no whole chunk), which v4 leaves to the element kernel.  XDNN_POOL_BWD_WALK=0 / 4 / 8 (read once per
 * process) run the same cases on v3's two passes and on walks of 4 or 8 blocks (2 by default).  Registered last. */
static void pbw15_cases(void)
{
    static const struct { int n, c, h, w; const char *attrs; } pc[] = {
        {2, 8, 7, 9, "pad=[1, 1]"},
        {1, 8, 1, 1, "pad=[1, 1]"},
        {3, 8, 2, 2, "pad=[1, 1]"},
        {1, 16, 113, 57, "pad=[1, 1]"},
        {2, 24, 13, 11, "pad=[0, 0]"},
        {2, 8, 12, 10, "pad=[[2, 0], [0, 1]]"},
        {1, 8, 17, 3, "pad=[[0, 1], [1, 0]]"},
        {2, 8, 12, 12, "pad=[1, 1], ceil_mode=true"},
        {2, 12, 9, 7, "pad=[1, 1]"},
    };
    for (size_t k = 0; k < sizeof pc / sizeof pc[0]; k++)
        for (int ti = 0; ti < 3; ti++) {
            const char *t = dts[ti], *a = pc[k].attrs;
            const int C = ti == 0 ? pc[k].c / 2 : pc[k].c; /* f32: 4 per chunk */
            char name[192];
            snprintf(name, sizeof name, "pbw15/max_bwd/%s/%dx%dx%dx%d/%d", t, pc[k].n, C, pc[k].h, pc[k].w, (int)k);
            add_case(name, 0, "dnn 1;\ngraph g(seed=%d, intermediate=%s) {\n"
                              "  input x: %s[%d, %d, %d, %d] @nhwc = uniform(-2.0, 3.0);\n"
                              "  input g0: %s[%d, %d, %d, %d] @nhwc = uniform(-4.0, 4.0);\n"
                              "  dy: @nhwc = floor(maxpool(g0, window=[3, 3], stride=[2, 2], %s) * 8.0) * 0.125;\n"
                              "  d0 = maxpool_bwd(dy, x, window=[3, 3], stride=[2, 2], %s);\n"
                              "  xt: @nhwc = floor(x);\n  xi: @nhwc = log(relu(xt - 1.0)) + floor(x * 4.0);\n"
                              "  xn: @nhwc = sqrt(xt);\n"
                              "  d1 = maxpool_bwd(dy, xt, window=[3, 3], stride=[2, 2], %s);\n"
                              "  d2 = maxpool_bwd(dy, xi, window=[3, 3], stride=[2, 2], %s);\n"
                              "  d3 = maxpool_bwd(dy, xn, window=[3, 3], stride=[2, 2], %s);\n"
                              "  output d0: %s @nhwc, d1: %s @nhwc, d2: %s @nhwc, d3: %s @nhwc;\n}\n",
                     1500 + (int)k * 3 + ti, t, t, pc[k].n, C, pc[k].h, pc[k].w, t, pc[k].n, C, pc[k].h, pc[k].w, a,
                     a, a, a, a, t, t, t, t);
        }
}

/* ---- session 16 (maxbwd): pool.cu v5 (kpool_bwd_wide), the one-pass max-pooling backward of 3x3 stride-2 windows
 * with 16 bytes of channels a thread (XDNN_POOL_BWD_WIDE=0: v4's 8).  Compared exactly, as pbw15/ (dy in eighths).
 * What the layout adds: one chunk a pixel (C = 8, f32 4: a warp spans 32 pixels of a row, so column edges and
 * pads fall inside warps) on wide maps, an odd count of chunks (C = 40, f32 20), a ResNet-like map; and the sums a
 * pixel takes in the dtype (one window: dy + 0; two: (a + b) + 0) with -0 dy (relu(dy) * -1.0) over integer ties,
 * so a pixel winning several windows sums -0s (the comparison does not tell -0 from +0: these cases check that
 * the sums and their routing hold with -0 operands, not the zeros' signs).  Registered last. */
static void pbw16_cases(void)
{
    static const struct { int n, c, h, w; const char *attrs; } pc[] = {
        {2, 8, 30, 62, "pad=[1, 1]"},
        {1, 8, 9, 67, "pad=[[0, 2], [2, 1]]"},
        {1, 40, 9, 13, "pad=[[2, 0], [1, 2]]"},
        {2, 40, 6, 5, "pad=[0, 0], ceil_mode=true"},
        {2, 16, 56, 56, "pad=[1, 1]"},
        {1, 8, 3, 1, "pad=[1, 1]"},
    };
    for (size_t k = 0; k < sizeof pc / sizeof pc[0]; k++)
        for (int ti = 0; ti < 3; ti++) {
            const char *t = dts[ti], *a = pc[k].attrs;
            const int C = ti == 0 ? pc[k].c / 2 : pc[k].c; /* f32: 4 per chunk */
            char name[192];
            snprintf(name, sizeof name, "pbw16/max_bwd/%s/%dx%dx%dx%d/%d", t, pc[k].n, C, pc[k].h, pc[k].w, (int)k);
            add_case(name, 0, "dnn 1;\ngraph g(seed=%d, intermediate=%s) {\n"
                              "  input x: %s[%d, %d, %d, %d] @nhwc = uniform(-2.0, 3.0);\n"
                              "  input g0: %s[%d, %d, %d, %d] @nhwc = uniform(-4.0, 4.0);\n"
                              "  dy: @nhwc = floor(maxpool(g0, window=[3, 3], stride=[2, 2], %s) * 8.0) * 0.125;\n"
                              "  dz: @nhwc = relu(dy) * -1.0;\n"
                              "  d0 = maxpool_bwd(dy, x, window=[3, 3], stride=[2, 2], %s);\n"
                              "  xt: @nhwc = floor(x);\n  xi: @nhwc = log(relu(xt - 1.0)) + floor(x * 4.0);\n"
                              "  xn: @nhwc = sqrt(xt);\n"
                              "  d1 = maxpool_bwd(dy, xt, window=[3, 3], stride=[2, 2], %s);\n"
                              "  d2 = maxpool_bwd(dy, xi, window=[3, 3], stride=[2, 2], %s);\n"
                              "  d3 = maxpool_bwd(dy, xn, window=[3, 3], stride=[2, 2], %s);\n"
                              "  d4 = maxpool_bwd(dz, xt, window=[3, 3], stride=[2, 2], %s);\n"
                              "  output d0: %s @nhwc, d1: %s @nhwc, d2: %s @nhwc, d3: %s @nhwc, d4: %s @nhwc;\n}\n",
                     1600 + (int)k * 3 + ti, t, t, pc[k].n, C, pc[k].h, pc[k].w, t, pc[k].n, C, pc[k].h, pc[k].w, a,
                     a, a, a, a, a, t, t, t, t, t);
        }
}

/* ---- session 16 (avgpool): average pooling of 3x3 stride-2 windows, pool.cu v5 (pool_avg.cuh): the forward's lean
 * walk policy (int32 divisor, one reciprocal a window) and the backward's walk (a thread per 2 x 2 block of input
 * pixels walking down the blocks, dy read once per window row, dx written once).  Each graph pools with include_pad
 * false and true; the forward also pools NaN taps (sqrt of x + 2 for x drawn from [-2.1, 3]: ~2 % of taps;
 * x + 2 is exact where it nears 0, so f32 sums near a log's pole do not amplify a rounded literal) and -inf taps (log of relu:
 * ~2 %), the backward takes dy as a max pooling of g0 (dy's values exact on both sides), with NaN windows (sqrt
 * before the pooling: ~20 % of windows) and -inf windows (a min pooling of log(relu)).  Shapes: odd extents (7 x 9,
 * 113 x 57), 1 x 1 and 2 x 2 (one window), pads 0 / 1 / 2 / asymmetric, ceil_mode (a last window past the padding,
 * with pads 1 and 2 after), N = 1 and 2-3, C of one 16-byte chunk and of several (f32 takes C / 2); then C = 12 (6
 * for f32: no whole chunk), left to the element kernel.  (A window always holds a tap of x: conv_util.c refuses
 * pads of the window's extent and drops a ceil_mode window starting in the padding after.)
 * XDNN_POOL_AVG_WALK=0 / 4 / 8 (read once per process) run the same cases on v3 and on walks of 4 or 8 blocks
 * (2 by default).
 * Registered last. */
static void avg16_cases(void)
{
    static const struct { int n, c, h, w; const char *attrs; } pc[] = {
        {2, 8, 7, 9, "pad=[1, 1]"},
        {1, 8, 1, 1, "pad=[1, 1]"},
        {3, 8, 2, 2, "pad=[1, 1]"},
        {1, 16, 113, 57, "pad=[1, 1]"},
        {2, 24, 13, 11, "pad=[0, 0]"},
        {2, 8, 11, 10, "pad=[2, 2]"},
        {2, 8, 12, 10, "pad=[[2, 0], [0, 1]]"},
        {1, 8, 17, 3, "pad=[[0, 1], [1, 0]]"},
        {2, 8, 9, 8, "pad=[[1, 2], [2, 2]], ceil_mode=true"},
        {2, 8, 12, 12, "pad=[1, 1], ceil_mode=true"},
        {1, 8, 10, 9, "pad=[[0, 1], [1, 0]], ceil_mode=true"},
        {2, 12, 9, 7, "pad=[1, 1]"},
    };
    for (size_t k = 0; k < sizeof pc / sizeof pc[0]; k++)
        for (int ti = 0; ti < 3; ti++) {
            if (opts.quick && ti == 1) /* memcheck: f32 and bf16 (f16 runs the same code as bf16) */
                continue;
            const char *t = dts[ti], *a = pc[k].attrs;
            const int C = ti == 0 ? pc[k].c / 2 : pc[k].c; /* f32: 4 per chunk */
            const int seed = 1600 + (int)k * 3 + ti;
            char name[192], shape[64];
            snprintf(shape, sizeof shape, "[%d, %d, %d, %d]", pc[k].n, C, pc[k].h, pc[k].w);
            snprintf(name, sizeof name, "avg16/fwd/%s/%dx%dx%dx%d/%d", t, pc[k].n, C, pc[k].h, pc[k].w, (int)k);
            add_case(name, 1, "dnn 1;\ngraph g(seed=%d, intermediate=%s) {\n"
                              "  input x: %s%s @nhwc = uniform(-2.1, 3.0);\n"
                              "  y0 = avgpool(x, window=[3, 3], stride=[2, 2], %s);\n"
                              "  y1 = avgpool(x, window=[3, 3], stride=[2, 2], %s, include_pad=true);\n"
                              "  xn: @nhwc = sqrt(x + 2.0);\n  xi: @nhwc = log(relu(x + 2.0));\n"
                              "  y2 = avgpool(xn, window=[3, 3], stride=[2, 2], %s);\n"
                              "  y3 = avgpool(xi, window=[3, 3], stride=[2, 2], %s, include_pad=true);\n"
                              "  output y0: %s @nhwc, y1: %s @nhwc, y2: %s @nhwc, y3: %s @nhwc;\n}\n",
                     seed, t, t, shape, a, a, a, a, t, t, t, t);
            snprintf(name, sizeof name, "avg16/bwd/%s/%dx%dx%dx%d/%d", t, pc[k].n, C, pc[k].h, pc[k].w, (int)k);
            add_case(name, 1, "dnn 1;\ngraph g(seed=%d, intermediate=%s) {\n"
                              "  input x: %s%s @nhwc;\n  input g0: %s%s @nhwc = uniform(-4.2, 4.0);\n"
                              "  dy: @nhwc = maxpool(g0, window=[3, 3], stride=[2, 2], %s);\n"
                              "  gn: @nhwc = sqrt(g0 + 4.0);\n  gi: @nhwc = neg(log(relu(g0 + 4.0)));\n"
                              "  dn: @nhwc = maxpool(gn, window=[3, 3], stride=[2, 2], %s);\n"
                              "  di: @nhwc = neg(maxpool(gi, window=[3, 3], stride=[2, 2], %s));\n"
                              "  d0 = avgpool_bwd(dy, x, window=[3, 3], stride=[2, 2], %s);\n"
                              "  d1 = avgpool_bwd(dy, x, window=[3, 3], stride=[2, 2], %s, include_pad=true);\n"
                              "  d2 = avgpool_bwd(dn, x, window=[3, 3], stride=[2, 2], %s);\n"
                              "  d3 = avgpool_bwd(di, x, window=[3, 3], stride=[2, 2], %s, include_pad=true);\n"
                              "  output d0: %s @nhwc, d1: %s @nhwc, d2: %s @nhwc, d3: %s @nhwc;\n}\n",
                     seed + 50, t, t, shape, t, shape, a, a, a, a, a, a, a, t, t, t, t);
        }
}

/* session 16 (avgpool): ResNet's stem shape beside the s12 rows (bench/mem_peer.py times the same) */
static void avg16_bench_cases(void)
{
    static const bench_row r[] = {
        {"avgpool/bf16/nhwc/64x64x112x112", "  input x: bf16[64, 64, 112, 112] @nhwc;\n"
                                            "  y = avgpool(x, window=[3, 3], stride=[2, 2], pad=[1, 1]);\n  output y: bf16 @nhwc;"},
        {"avgpool_bwd/bf16/nhwc/64x64x112x112", "  input dy: bf16[64, 64, 56, 56] @nhwc;\n  input x: bf16[64, 64, 112, 112] @nhwc;\n"
                                                "  dx = avgpool_bwd(dy, x, window=[3, 3], stride=[2, 2], pad=[1, 1]);\n"
                                                "  output dx: bf16 @nhwc;"},
    };
    add_bench_rows("avg16", 16, r, sizeof r / sizeof r[0]);
}

int main(int argc, char **argv)
{
    dh_parse_args(argc, argv, true, &opts);
    cases = calloc(MAX_CASES, sizeof *cases);
    if (!cases)
        return 2;
    if (opts.bench) {
        bench_cases();
        s12_bench_cases(); /* session 12 (pool): registered last */
        gn_bench_cases();  /* session 12 (gnorm): registered last */
        s13_bench_cases(); /* session 13 (pw): registered last */
        avg16_bench_cases(); /* session 16 (avgpool): registered last */
    } else {
        layer_cases();
        batch_cases();
        cl_cases();
        group_cases();
        softmax_bwd_cases();
        copy_cases();
        view_cases();
        vector_cases();
        fused_act_cases();
        residual_cases();
        warp_row_cases();
        warp_bwd_cases();
        network_fusion_cases();
        genstats_cases();
        cl1_cases();
        const_cases();
        rng_cases();
        odd_row_cases();
        join_cases();
        finwide_cases(); /* session 11 (bnfwd) */
        s12_pool_copy_cases(); /* session 12 (pool): registered last */
        wide_row_cases(); /* session 12 (normwide): registered last */
        smbwd_cases(); /* session 12 (smbwd): registered last */
        gn_v2_cases();    /* session 12 (gnorm): registered last */
        gn_v2_cross_cases(); /* session 12 (review): registered last */
        s13_cases();         /* session 13 (pw): registered last */
        l2_cases();          /* session 13 (bnl2): registered last */
        s14_cases();         /* session 14: registered last */
        tp15_cases();        /* session 15 (tpose15): registered last */
        pbw15_cases();       /* session 15 (pool15): registered last */
        rmsb_cases();        /* session 15 (rmsb): registered last */
        tp16_cases();        /* session 16 (tpose): registered last */
        pbw16_cases();       /* session 16 (maxbwd) */
        avg16_cases();       /* session 16 (avgpool) */
    }
    dh_tester t = {.name = "difftest_norm", .ncases = ncases, .case_id = case_id, .case_text = case_text,
                   .run_case = run_case};
    int rc = dh_run(&t, &opts);
    free(cases);
    return rc;
}
