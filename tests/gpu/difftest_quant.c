/* difftest_quant.c — the differential tester of the lowp engines:
 * quant_direct (quantize, dequantize, amax, quant_scale),
 * matmul_fp8_cublaslt / matmul_i8_cublaslt (scaled_matmul) and
 * scaled_conv_im2col (scaled_conv).
 *
 *  - table/...: the hand-computed quantize table of tests/unit/quant_cases.h
 *    (ties, f32-rounded quotients on a tie, subnormals, saturation, Inf, -0;
 *    NaN rows stay in the unit test: a .dnn literal cannot be NaN) as literal tensors, one scale per element: the GPU bytes must equal the
 *    table's, not just the CPU's.
 *  - chain/...: s = quant_scale(amax(x)), q = quantize(x, s), y = dequantize(q, s)
 *    on fresh Philox data, every granularity (per-tensor, axis 0 / -1, blocks
 *    [1,32] [1,7] [128,128] [2,3,5]), x f32/f16/bf16, q e4m3/e5m2/i8, scales
 *    f32/e8m0, y f32/bf16/f16, odd shapes and cols % 8 == 0 ones (the v3 vector
 *    path, with a partial last iteration); every output bit-exact against the CPU reference
 *    (outputs are poisoned by the harness first).
 *  - smm/...: scaled_matmul on fp8 (e4m3 x e4m3, e4m3 x e5m2, e5m2 x e4m3) ->
 *    bf16/f16/f32 against the double reference (METHOD.md's fp8 tolerance:
 *    here fp32 accumulation of exact products, so 1e-2 of the output's max),
 *    and refusals that must name the reason (M = 17, e5m2 x e5m2); on i8 x i8
 *    (matmul_i8_cublaslt: exact int32 sums, scales applied once in double)
 *    bit-exact against the reference.
 *  - smm-q/...: the requantizing epilogue (c_scale, c in fp8_e4m3 / fp8_e5m2 /
 *    i8) and the amax result: bit-exact from i8 operands; from fp8 operands
 *    (f32 accumulation) c within one step of its grid (rtol 2^-3 for e4m3,
 *    2^-2 for e5m2: their widest relative steps; i8 atol 1) and amax within
 *    1e-3.
 *  - sconv/...: scaled_conv on scaled_conv_im2col: i8 x i8 -> bf16/f16/f32/i8/
 *    fp8_e4m3 bit-exact (int32 sums, the reference's double epilogue), per-
 *    tensor and per-channel w_scale, with and without bias; 3x3 pad 1 stride
 *    1 and 2, 1x1 (x as A, and through im2col), the C = 3 7x7 stem (Kc = 147
 *    padded), K = 24 (padded), dilation 2, odd H x W, 1-D, 3-D, NCHW (the
 *    strided gather / scatter), x with padded pixel rows (16-byte loads at
 *    its own strides); fp8 operands with CK_QGEMM's tolerances;
 *    refusals (groups 2, e5m2 x e5m2, an i8 window of 2^17 products).
 *  --bench: quantize/dequantize/amax GB/s at 8192x8192, fp8 GEMM TFLOP/s
 *    (8192^3 and LLM shapes) and int8 / fp8 convs (ResNet-50-like layers at
 *    N = 32, NHWC), medians of 50 after 10 warm-ups.
 * Usage: difftest_quant [--quick] [--bench] [--list] [--dry] [FILTER]
 * Built and run by tests/gpu/run.sh BUILD --only quant. */
#include "diffharness.h"

#include "../unit/quant_cases.h"
#include "core/exec.h"
#include "data/data.h"
#include "gpu/engine.h"
#include "gpu/lower.h"
#include "gpu/partition.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_CASES = 1024, TEXT_MAX = 8192 };

typedef enum ckind { CK_EXACT, CK_TABLE, CK_GEMM, CK_QGEMM, CK_REFUSE } ckind;

typedef struct tcase {
    char id[160];
    char text[TEXT_MAX];
    ckind kind;
    xdnn_dtype table_dt;  /* CK_TABLE: which rows of the table */
    char expect[96];      /* CK_REFUSE: text the refusal must contain */
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

static float bits_f32(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

/* A .dnn literal for a float: exact (17 digits), inf by name. */
static void literal(char *buf, size_t len, float f)
{
    if (isinf(f))
        snprintf(buf, len, "%sinf", f < 0 ? "-" : "");
    else
        snprintf(buf, len, "%s%.17g%s", signbit(f) ? "-" : "", (double)fabsf(f), f == 0 ? ".0" : "");
}

static void table_cases(void)
{
    static const xdnn_dtype dts[] = {XDNN_FP8_E4M3, XDNN_FP8_E5M2, XDNN_I8};
    for (int di = 0; di < 3; di++) {
        char xs[2048] = "", ss[2048] = "";
        size_t nx = 0, ns = 0;
        int n = 0;
        for (size_t i = 0; i < sizeof qcases / sizeof qcases[0]; i++) {
            if (qcases[i].dt != dts[di] || isnan(bits_f32(qcases[i].xbits)))
                continue; /* a .dnn literal has no NaN: those rows are the unit test's */
            char a[48], b[48];
            literal(a, sizeof a, bits_f32(qcases[i].xbits));
            literal(b, sizeof b, bits_f32(qcases[i].sbits));
            nx += (size_t)snprintf(xs + nx, sizeof xs - nx, "%s%s", n ? ", " : "", a);
            ns += (size_t)snprintf(ss + ns, sizeof ss - ns, "%s%s", n ? ", " : "", b);
            n++;
        }
        char id[64];
        snprintf(id, sizeof id, "table/%s/%d", xdnn_dtype_name(dts[di]), n);
        tcase *c = add_case(id, CK_TABLE,
                            "dnn 1;\ngraph g(seed=1) {\n  weight x: f32[%d] = values([%s]);\n"
                            "  weight s: f32[%d] = values([%s]);\n  q = quantize(x, s, block=[1], dtype=%s);\n"
                            "  output q;\n}\n",
                            n, xs, n, ss, xdnn_dtype_name(dts[di]));
        if (c)
            c->table_dt = dts[di];
    }
}

typedef struct gran {
    const char *name, *attr; /* attribute text (with a leading ", ") */
    int min_rank;
} gran;

static void chain_cases(void)
{
    /* the quick sweep's four include [2, 3, 40] (cols % 8 == 0: the v3 vector
     * path, under memcheck); [129, 264] has a partial last iteration of v3 */
    static const int shapes[][4] = {{1, 1}, {2, 3, 5}, {3, 2, 3, 40}, {2, 7, 33}, {2, 129, 257}, {2, 64, 4096},
                                    {2, 129, 264}};
    static const gran grans[] = {
        {"tensor", "", 1},           {"axis0", ", axis=0", 1},       {"axis-1", ", axis=-1", 1},
        {"blk1x32", ", block=[1, 32]", 2}, {"blk1x7", ", block=[1, 7]", 2}, {"blk128", ", block=[128, 128]", 2},
        {"blk2x3x5", ", block=[2, 3, 5]", 3},
    };
    static const char *const xdts[] = {"f32", "bf16", "f16"}, *const qdts[] = {"fp8_e4m3", "fp8_e5m2", "i8"};
    static const char *const sdts[] = {"f32", "e8m0"}, *const ydts[] = {"f32", "bf16", "f16"};
    int nsh = opts.quick ? 4 : 7, k = 0;
    for (int si = 0; si < nsh; si++) {
        int r = shapes[si][0];
        const int *d = &shapes[si][1];
        char s[64] = "[", sid[64] = "";
        for (int i = 0; i < r; i++) {
            snprintf(s + strlen(s), sizeof s - strlen(s), "%s%d", i ? ", " : "", d[i]);
            snprintf(sid + strlen(sid), sizeof sid - strlen(sid), "%s%d", i ? "x" : "", d[i]);
        }
        strcat(s, "]");
        for (size_t gi = 0; gi < sizeof grans / sizeof grans[0]; gi++) {
            if (r < grans[gi].min_rank)
                continue;
            /* every dtype combination would be 36 per shape: rotate through them */
            for (int v = 0; v < (opts.quick ? 2 : 4); v++, k++) {
                const char *xt = xdts[k % 3], *qt = qdts[(k / 3) % 3], *st = sdts[(k / 9) % 2], *yt = ydts[(k / 2) % 3];
                char id[160];
                snprintf(id, sizeof id, "chain/%s/%s/%s->%s/%s-scale/%s", grans[gi].name, sid, xt, qt, st, yt);
                add_case(id, CK_EXACT,
                         "dnn 1;\ngraph g(seed=%d) {\n  input x: %s%s = randn(std=%g);\n"
                         "  a = amax(x%s);\n  s = quant_scale(a, dtype=%s, scale_dtype=%s);\n"
                         "  q = quantize(x, s%s, dtype=%s);\n  y = dequantize(q, s%s, dtype=%s);\n"
                         "  output a, s, q, y;\n}\n",
                         k, xt, s, k % 4 == 3 ? 1e-3 : 3.0, grans[gi].attr, qt, st, grans[gi].attr, qt,
                         grans[gi].attr, yt);
            }
        }
    }
}

/* pow2/...: quantize over power-of-two scales on the v3 path (cols % 8 == 0): an f32 per-tensor 2^-7 and e8m0
 * [1, 32] blocks of 2^-7 / 2^3, x f32 / bf16 / f16 at std 3 (bf16 over 2^-7 meets an e4m3 tie 1 element in 16)
 * and 1e-3 (quotients in the fp8 grids' subnormal steps), e4m3 and e5m2, bit-exact.  By default they go
 * through kq_quant8_fp8's power-of-two path (no kq_settle), with XDNN_QUANT_POW2=0 through kq_settle. */
static void pow2_cases(void)
{
    static const char *const xdts[] = {"f32", "bf16", "f16"}, *const qdts[] = {"fp8_e4m3", "fp8_e5m2"};
    static const double stds[] = {3.0, 1e-3};
    int k = 0;
    for (int xi = 0; xi < 3; xi++)
        for (int qi = 0; qi < 2; qi++)
            for (int si = 0; si < 2; si++, k++) {
                char id[128];
                snprintf(id, sizeof id, "pow2/tensor-f32/%s->%s/std%g", xdts[xi], qdts[qi], stds[si]);
                add_case(id, CK_EXACT,
                         "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[3, 64, 1032] = randn(std=%g);\n"
                         "  weight s: f32[1] = fill(0.0078125);\n  q = quantize(x, s, dtype=%s);\n  output q;\n}\n",
                         700 + k, xdts[xi], stds[si], qdts[qi]);
                snprintf(id, sizeof id, "pow2/blk1x32-e8m0/%s->%s/std%g", xdts[xi], qdts[qi], stds[si]);
                add_case(id, CK_EXACT,
                         "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[3, 64, 1024] = randn(std=%g);\n"
                         "  weight s: e8m0[3, 64, 32] = fill(%s);\n  q = quantize(x, s, block=[1, 1, 32], dtype=%s);\n"
                         "  output q;\n}\n",
                         720 + k, xdts[xi], stds[si], si ? "0.0078125" : "8.0", qdts[qi]);
            }
    /* the edges on the v3 path (cols % 8 == 0, one scale): per-tensor scales 2^-126, 2^124 and -2^-7 (the
     * power-of-two path), 3 * 2^-7 (not one: kq_settle), x with -0, saturating, fp8-subnormal and f32-huge
     * quotients, ties of e4m3 (2^-7 x 1.0625 over 2^-7) */
    static const char *const scales[] = {"1.1754943508222875e-38", "2.1267647932558654e37", "-0.0078125", "0.0234375"};
    for (int si = 0; si < 4; si++)
        for (int qi = 0; qi < 2; qi++) {
            char id[128];
            snprintf(id, sizeof id, "pow2/edges/scale%d->%s", si, qdts[qi]);
            add_case(id, CK_EXACT,
                     "dnn 1;\ngraph g(seed=%d) {\n  weight x: f32[2, 8] = values([[-0.0, 1.0, -3.0e38, 1.0e-40, "
                     "0.0078125, 0.00830078125, 448.0, -1.0e-30], [3.0e38, -2.5, 1.0e30, 2.0e-45, 0.5, -0.00830078125, "
                     "65504.0, 7.0]]);\n  weight s: f32[1] = fill(%s);\n  q = quantize(x, s, dtype=%s);\n"
                     "  output q;\n}\n", 760 + 2 * si + qi, scales[si], qdts[qi]);
        }
}

/* v rounded to nearest even at p significant bits, subnormal below 2^emin (f32: 24, -126; bf16: 8, -126;
 * f16: 11, -14); v + d of its steps when d != 0 (steps of the result's binade). */
static double round_bits(double v, int p, int emin, int d)
{
    if (v == 0)
        return d ? copysign(ldexp(1.0, emin - p + 1), d) : v;
    int e;
    frexp(fabs(v), &e); /* |v| in [2^(e-1), 2^e) */
    const double step = ldexp(1.0, (e - 1 < emin ? emin : e - 1) - p + 1);
    return nearbyint(v / step) * step + d * step; /* the default rounding mode: ties to even */
}

/* settle/...: quantize onto fp8 over scales that are not powers of two (3, 3 +- one f32 ulp, 0.1, 7/3, -7/3,
 * 0.0123) with x on the ties of the fp8 grid times s, rounded to x's dtype, and 1 or 2 of x's steps off (for
 * 3 +- an ulp and bf16 x: quotients a fraction of an f32 ulp off a tie, on both sides), a few f32 ulps from
 * one (f32 x over 0.1 or 7/3), in the fp8 grid's subnormal steps and at its top (448, 464), plus -0, 0,
 * Inf, f32-subnormal and f32-huge x; per-tensor [2, 128], blocks [128, 64] (two scales) and [1, 32]
 * (eight).  kq_quant8_fp8's bracket (kq_bracket8) must leave every such chunk to kq_settle and agree with it
 * elsewhere: bit-exact against the CPU reference, with and without XDNN_QUANT_FAST_SETTLE=0. */
static void settle_cases(void)
{
    static const char *const xdts[] = {"bf16", "f32", "f16"}, *const qdts[] = {"fp8_e4m3", "fp8_e5m2"};
    static const int xp[] = {8, 24, 11}, xemin[] = {-126, -126, -14};
    static const uint32_t sbits[] = {0x40400000u, 0x40400001u, 0x403fffffu, 0x3dcccccdu,
                                     0x40155555u, 0xc0155555u, 0x3c4985f0u, 0x3f8ccccdu};
    static const struct { const char *name, *shape, *attr, *sdecl; int rows, cols, bc, nsc; } grans[] = {
        {"tensor", "[2, 128]", "", "f32[1]", 2, 128, 128, 1},
        {"blk128x64", "[2, 128]", ", block=[128, 64]", "f32[1, 2]", 2, 128, 64, 2},
        {"blk1x32", "[2, 128]", ", block=[1, 32]", "f32[2, 4]", 2, 128, 32, 8},
    };
    uint32_t rng = 12345;
    int k = 0;
    for (int xi = 0; xi < 3; xi++)
        for (int qi = 0; qi < 2; qi++)
            for (size_t gi = 0; gi < sizeof grans / sizeof grans[0]; gi++)
                for (int si = 0; si < (grans[gi].nsc == 1 ? 7 : 1); si++, k++) {
                    const int mb = qi ? 2 : 3, emin = qi ? -14 : -6, emax = qi ? 15 : 8;
                    char xs[6000] = "", ss[512] = "";
                    size_t nx = 0, ns = 0;
                    for (int b = 0; b < grans[gi].nsc; b++)
                        ns += (size_t)snprintf(ss + ns, sizeof ss - ns, "%s%.9g", b ? ", " : "",
                                               (double)bits_f32(sbits[(si + b) % 8]));
                    for (int r = 0; r < grans[gi].rows; r++)
                        for (int c = 0; c < grans[gi].cols; c++) {
                            const int blk = grans[gi].nsc == 1 ? 0
                                            : grans[gi].nsc == 2 ? c / grans[gi].bc
                                                                 : r * 4 + c / grans[gi].bc;
                            const double s = bits_f32(sbits[(si + blk) % 8]);
                            rng = rng * 1664525u + 1013904223u;
                            const uint32_t u = rng >> 8;
                            /* a tie: (2^mb + j + 1/2) 2^(e - mb), or (j + 1/2) 2^(emin - mb) (subnormal steps) */
                            const int e = emin - 1 + (int)(u % (unsigned)(emax - emin + 2)), j = (int)((u >> 5) % (1u << mb));
                            double m = e < emin ? ldexp(j + 0.5, emin - mb) : ldexp((1 << mb) + j + 0.5, e - mb);
                            if ((u >> 9) % 16 == 0)
                                m = qi ? 61440.0 : 464.0; /* above the largest finite: saturates */
                            const int d = (int)((u >> 13) % 5) - 2; /* 0, +-1, +-2 of x's steps */
                            double x = round_bits(m * s, xp[xi], xemin[xi], 0);
                            x = round_bits(x, xp[xi], xemin[xi], d) * ((u >> 16) & 1 ? -1 : 1);
                            const int i = r * grans[gi].cols + c;
                            char lit[40];
                            if (i % 61 == 7) /* the exact paths' values, some in most chunks' neighbours */
                                snprintf(lit, sizeof lit, "%s", (const char *[]){"-0.0", "0.0", "inf", "-inf",
                                                                  "1.0e-40", "3.0e38", "-2.0e-39"}[(i / 61) % 7]);
                            else if (xi == 2 && fabs(x) > 65504)
                                snprintf(lit, sizeof lit, "%s65504.0", x < 0 ? "-" : "");
                            else
                                snprintf(lit, sizeof lit, "%.9g", x);
                            if (xi == 2 && strcmp(lit, "3.0e38") == 0) /* f16's largest instead */
                                snprintf(lit, sizeof lit, "65504.0");
                            nx += (size_t)snprintf(xs + nx, sizeof xs - nx, "%s%s", i ? ", " : "", lit);
                        }
                    if (nx >= sizeof xs - 1) {
                        fprintf(stderr, "settle_cases: x literal too long\n");
                        exit(2);
                    }
                    char id[128];
                    snprintf(id, sizeof id, "settle/%s/%s->%s/s%s", grans[gi].name, xdts[xi], qdts[qi],
                             grans[gi].nsc == 1 ? (const char *[]){"3", "3+ulp", "3-ulp", "0.1", "7|3", "-7|3", "0.0123"}[si]
                                                : "mixed");
                    tcase *tc = add_case(id, CK_EXACT,
                                         "dnn 1;\ngraph g(seed=%d) {\n  weight x: %s%s = values([%s]);\n"
                                         "  weight s: %s = values([%s]);\n  q = quantize(x, s%s, dtype=%s);\n"
                                         "  output q;\n}\n",
                                         900 + k, xdts[xi], grans[gi].shape, xs, grans[gi].sdecl, ss, grans[gi].attr,
                                         qdts[qi]);
                    if (strlen(tc->text) >= TEXT_MAX - 1) {
                        fprintf(stderr, "%s: text over TEXT_MAX\n", id);
                        exit(2);
                    }
                }
    /* NaN (a .dnn literal has none: sqrt of negatives, made positive by abs: the CPU's sqrt gives -NaN, the
     * GPU's +NaN, and the fp8 NaN byte keeps the sign) next to ties, through the bracket's fallback */
    for (int qi = 0; qi < 2; qi++) {
        char id[64];
        snprintf(id, sizeof id, "settle/nan/f32->%s", qdts[qi]);
        add_case(id, CK_EXACT,
                 "dnn 1;\ngraph g(seed=%d) {\n  input x: f32[4, 64] = uniform(lo=-4, hi=60);\n"
                 "  weight s: f32[1] = fill(3.0);\n  r = abs(sqrt(x));\n  q = quantize(r, s, dtype=%s);\n  output q;\n}\n",
                 990 + qi, qdts[qi]);
    }
}

static void smm_case(int m, int n, int kk, const char *ta, const char *tb, const char *out, ckind kind,
                     const char *expect)
{
    char id[160];
    snprintf(id, sizeof id, "smm/%s_x_%s->%s/m%dn%dk%d", ta, tb, out, m, n, kk);
    tcase *c = add_case(id, kind,
                        "dnn 1;\ngraph g(seed=%d) {\n  input a: %s[%d, %d];\n  weight b: %s[%d, %d];\n"
                        "  weight sa: f32[1] = uniform(lo=0.5, hi=2);\n  weight sb: f32[1] = uniform(lo=0.5, hi=2);\n"
                        "  c = scaled_matmul(a, b, sa, sb, trans_b=true, dtype=%s);\n  output c;\n}\n",
                        m + n + kk, ta, m, kk, tb, n, kk, out);
    if (c && expect)
        snprintf(c->expect, sizeof c->expect, "%s", expect);
}

/* scaled_matmul with c_scale (when out is fp8/i8) and the amax result. */
static void smm_qcase(int m, int n, int kk, const char *ta, const char *out, ckind kind)
{
    char id[160];
    bool quantized = strcmp(out, "i8") == 0 || strncmp(out, "fp8", 3) == 0;
    snprintf(id, sizeof id, "smm-q/%s_x_%s->%s%s+amax/m%dn%dk%d", ta, ta, out, quantized ? "/c_scale" : "", m, n, kk);
    add_case(id, kind,
             "dnn 1;\ngraph g(seed=%d) {\n  input a: %s[%d, %d] = randn(std=%s);\n  weight b: %s[%d, %d] = "
             "randn(std=%s);\n  weight sa: f32[1] = uniform(lo=0.5, hi=2);\n  weight sb: f32[1] = uniform(lo=0.5, "
             "hi=2);\n  weight sc: f32[1] = uniform(lo=0.5, hi=3);\n"
             "  c, m = scaled_matmul(a, b, sa, sb%s, trans_b=true, dtype=%s);\n  output c, m;\n}\n",
             m + 3 * n + kk, ta, m, kk, strcmp(ta, "i8") == 0 ? "6" : "1", ta, n, kk,
             strcmp(ta, "i8") == 0 ? "6" : "1", quantized ? ", sc" : "", out);
}

static void smm_cases(void)
{
    smm_case(16, 16, 16, "fp8_e4m3", "fp8_e4m3", "bf16", CK_GEMM, NULL);
    smm_case(64, 48, 32, "fp8_e4m3", "fp8_e5m2", "f32", CK_GEMM, NULL);
    smm_case(128, 256, 512, "fp8_e5m2", "fp8_e4m3", "f16", CK_GEMM, NULL);
    smm_case(48, 4096, 4096, "fp8_e4m3", "fp8_e4m3", "bf16", CK_GEMM, NULL);
    if (!opts.quick)
        smm_case(1024, 1024, 2048, "fp8_e4m3", "fp8_e4m3", "f32", CK_GEMM, NULL);
    smm_case(17, 32, 32, "fp8_e4m3", "fp8_e4m3", "bf16", CK_REFUSE, "multiples of 16, got M = 17");
    smm_case(32, 32, 32, "fp8_e5m2", "fp8_e5m2", "bf16", CK_REFUSE, "fp8_e5m2 x fp8_e5m2 has no Hopper fp8 kernel");
    smm_case(16, 16, 16, "i8", "i8", "bf16", CK_EXACT, NULL);
    smm_case(64, 48, 32, "i8", "i8", "f32", CK_EXACT, NULL);
    smm_case(128, 256, 512, "i8", "i8", "f16", CK_EXACT, NULL);
    smm_case(48, 4096, 4096, "i8", "i8", "bf16", CK_EXACT, NULL);
    if (!opts.quick)
        smm_case(1024, 1024, 2048, "i8", "i8", "f32", CK_EXACT, NULL);
    smm_case(32, 17 * 16, 40, "i8", "i8", "bf16", CK_REFUSE, "multiples of 16, got K = 40");
    static const char *const qout[] = {"i8", "fp8_e4m3", "fp8_e5m2", "bf16"};
    for (int i = 0; i < 4; i++) {
        smm_qcase(64, 48, 32, "i8", qout[i], CK_EXACT);
        smm_qcase(128, 256, 1024, "i8", qout[i], CK_EXACT);
        smm_qcase(64, 48, 32, "fp8_e4m3", qout[i], CK_QGEMM);
        smm_qcase(256, 512, 2048, "fp8_e4m3", qout[i], CK_QGEMM);
    }
}

/* ---- scaled_conv (scaled_conv_im2col) */

/* One scaled_conv: x [N, C, sp...] and w [K, C/G, win...] in xdt / wdt,
 * channels-last unless nchw, per-channel w_scale (pc) or one element, an
 * optional bias, y in out (requantized with y_scale when out is i8/fp8).
 * sp/win: nsp sizes (1-D: W; 2-D: H, W; 3-D: D, H, W).  The scales keep v
 * near 36 sqrt(Kc) sx sw (i8 operands of std 6) or sqrt(Kc) sx sw (fp8,
 * std 1); y_scale puts v / y_scale around 40, so the tails saturate i8. */
typedef struct sconv_spec {
    int n, c, k, nsp, sp[3], win[3], stride, pad, dil, groups;
    const char *xdt, *wdt, *out;
    bool pc, bias, nchw;
    bool wide_px; /* 2-D x channels-last with pixels 2C apart (padded rows: the 16-byte path on strided x) */
} sconv_spec;

static void sconv_case(const sconv_spec *q, ckind kind, const char *expect)
{
    static const char *const cl[4] = {"", "@nwc", "@nhwc", "@ndhwc"};
    const bool i8 = strcmp(q->xdt, "i8") == 0;
    const bool requant = strcmp(q->out, "i8") == 0 || strncmp(q->out, "fp8", 3) == 0;
    const int groups = q->groups ? q->groups : 1, dil = q->dil ? q->dil : 1;
    char xs[64] = "", ws[64] = "", sid[64] = "", wid[32] = "";
    int taps = 1;
    for (int i = 0; i < q->nsp; i++) {
        snprintf(xs + strlen(xs), sizeof xs - strlen(xs), ", %d", q->sp[i]);
        snprintf(ws + strlen(ws), sizeof ws - strlen(ws), ", %d", q->win[i]);
        snprintf(sid + strlen(sid), sizeof sid - strlen(sid), "%s%d", i ? "x" : "", q->sp[i]);
        snprintf(wid + strlen(wid), sizeof wid - strlen(wid), "%s%d", i ? "x" : "", q->win[i]);
        taps *= q->win[i];
    }
    const double sm = i8 ? 0.015 : 1.25, vt = (i8 ? 36.0 : 1.0) * sqrt((double)taps * q->c / groups) * sm * sm;
    char id[160];
    snprintf(id, sizeof id, "sconv/%s_x_%s->%s/%s%s%s/n%dc%dk%d/%s/w%ss%dp%dd%d%s", q->xdt, q->wdt, q->out,
             q->pc ? "pc" : "pt", q->bias ? "+bias" : "", q->nchw ? "/nchw" : q->wide_px ? "/wide-px" : "", q->n, q->c,
             q->k, sid, wid,
             q->stride, q->pad, dil, groups > 1 ? "/g2" : "");
    const char *lay = q->nchw ? "" : cl[q->nsp];
    char xlay[96];
    snprintf(xlay, sizeof xlay, "%s", lay);
    if (q->wide_px && q->nsp == 2)
        snprintf(xlay, sizeof xlay, "@strides(%d, 1, %d, %d)", q->sp[0] * q->sp[1] * 2 * q->c, q->sp[1] * 2 * q->c,
                 2 * q->c);
    char ports[96];
    snprintf(ports, sizeof ports, "%s%s", q->bias ? ", b" : "", requant ? ", y_scale=sy" : "");
    tcase *c = add_case(id, kind,
                        "dnn 1;\ngraph g(seed=%d) {\n  input x: %s[%d, %d%s] %s = randn(std=%d);\n"
                        "  weight w: %s[%d, %d%s] %s = randn(std=%d);\n"
                        "  weight sx: f32[1] = uniform(lo=%g, hi=%g);\n  weight sw: f32[%d] = uniform(lo=%g, hi=%g);\n"
                        "  weight b: f32[%d] = uniform(lo=%g, hi=%g);\n  weight sy: f32[1] = uniform(lo=%g, hi=%g);\n"
                        "  y: %s %s = scaled_conv(x, w, sx, sw%s, stride=%d, pad=%d, dilation=%d, groups=%d, "
                        "dtype=%s);\n  output y;\n}\n",
                        q->n + 7 * q->c + 3 * q->k + q->sp[0], q->xdt, q->n, q->c, xs, xlay, i8 ? 6 : 1, q->wdt, q->k,
                        q->c / groups, ws, lay, i8 ? 6 : 1, sm * 0.5, sm * 1.5, q->pc ? q->k : 1, sm * 0.5, sm * 1.5,
                        q->k, -vt, vt, vt / 50, vt / 30, q->out, lay, ports, q->stride, q->pad, dil, groups, q->out);
    if (c && expect)
        snprintf(c->expect, sizeof c->expect, "%s", expect);
}

static void sconv_cases(void)
{
    /* i8: bit-exact (int32 sums, the reference's double epilogue) */
    static const sconv_spec ex[] = {
        /* 3x3 pad 1, stride 1 and 2, odd H x W, N = 2 */
        {2, 16, 16, 2, {13, 9}, {3, 3}, 1, 1, 0, 0, "i8", "i8", "bf16", true, true, false, false},
        {2, 32, 48, 2, {13, 9}, {3, 3}, 2, 1, 0, 0, "i8", "i8", "f32", false, false, false, false},
        {2, 64, 64, 2, {14, 14}, {3, 3}, 1, 1, 0, 0, "i8", "i8", "i8", true, true, false, false},
        {1, 48, 64, 2, {13, 9}, {3, 3}, 2, 1, 0, 0, "i8", "i8", "fp8_e4m3", false, true, false, false},
        {2, 16, 48, 2, {13, 9}, {3, 3}, 1, 1, 0, 0, "i8", "i8", "fp8_e4m3", true, false, false, false},
        {2, 32, 16, 2, {13, 9}, {3, 3}, 2, 1, 0, 0, "i8", "i8", "i8", false, false, false, false},
        /* 1x1: x is A as it is (M = 128, C = 64), and through im2col (M = 234; stride 2) */
        {2, 64, 64, 2, {8, 8}, {1, 1}, 1, 0, 0, 0, "i8", "i8", "bf16", true, false, false, false},
        {2, 64, 48, 2, {8, 8}, {1, 1}, 1, 0, 0, 0, "i8", "i8", "fp8_e4m3", false, true, false, false},
        {2, 32, 48, 2, {13, 9}, {1, 1}, 1, 0, 0, 0, "i8", "i8", "i8", true, true, false, false},
        {2, 16, 16, 2, {13, 9}, {1, 1}, 2, 0, 0, 0, "i8", "i8", "f32", false, true, false, false},
        /* the stem: C = 3, 7x7 stride 2 pad 3 (Kc = 147, padded to 160) */
        {2, 3, 64, 2, {29, 23}, {7, 7}, 2, 3, 0, 0, "i8", "i8", "bf16", true, true, false, false},
        {2, 3, 48, 2, {29, 23}, {7, 7}, 2, 3, 0, 0, "i8", "i8", "i8", true, true, false, false},
        {1, 3, 16, 2, {13, 9}, {7, 7}, 2, 3, 0, 0, "i8", "i8", "f32", false, false, false, false},
        /* K not a multiple of 16 (24: B and acc padded to 32), f16, dilation 2 */
        {2, 16, 24, 2, {13, 9}, {3, 3}, 1, 1, 0, 0, "i8", "i8", "f32", true, true, false, false},
        {2, 16, 16, 2, {13, 9}, {3, 3}, 1, 1, 0, 0, "i8", "i8", "f16", true, true, false, false},
        {2, 16, 16, 2, {13, 9}, {3, 3}, 1, 2, 2, 0, "i8", "i8", "bf16", false, true, false, false},
        /* 1-D and 3-D */
        {2, 16, 48, 1, {37}, {5}, 1, 2, 0, 0, "i8", "i8", "bf16", true, true, false, false},
        {2, 32, 16, 1, {37}, {3}, 2, 1, 0, 0, "i8", "i8", "i8", true, false, false, false},
        {1, 16, 16, 3, {5, 6, 7}, {3, 3, 3}, 1, 1, 0, 0, "i8", "i8", "bf16", true, true, false, false},
        /* NCHW x, w and y: gathered / scattered through their strides */
        {2, 16, 16, 2, {13, 9}, {3, 3}, 1, 1, 0, 0, "i8", "i8", "bf16", true, true, true, false},
        {2, 3, 48, 2, {29, 23}, {7, 7}, 2, 3, 0, 0, "i8", "i8", "i8", true, true, true, false},
        {2, 32, 16, 1, {37}, {3}, 2, 1, 0, 0, "i8", "i8", "f32", false, false, true, false},
        /* x with padded pixel rows (a strided NHWC view's layout): 16-byte loads at its own strides */
        {2, 32, 48, 2, {13, 9}, {3, 3}, 2, 1, 0, 0, "i8", "i8", "i8", true, true, false, true},
        {2, 64, 64, 2, {8, 8}, {1, 1}, 1, 0, 0, 0, "i8", "i8", "bf16", true, false, false, true},
    };
    for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++)
        sconv_case(&ex[i], CK_EXACT, NULL);
    /* fp8: f32 sums of exact products on cuBLASLt: CK_QGEMM's tolerances */
    static const sconv_spec f8[] = {
        {2, 32, 48, 2, {13, 9}, {3, 3}, 1, 1, 0, 0, "fp8_e4m3", "fp8_e4m3", "bf16", true, true, false, false},
        {2, 32, 48, 2, {13, 9}, {3, 3}, 2, 1, 0, 0, "fp8_e4m3", "fp8_e4m3", "fp8_e4m3", true, true, false, false},
        {2, 3, 64, 2, {29, 23}, {7, 7}, 2, 3, 0, 0, "fp8_e4m3", "fp8_e5m2", "bf16", true, true, false, false},
        {2, 64, 16, 2, {8, 8}, {1, 1}, 1, 0, 0, 0, "fp8_e5m2", "fp8_e4m3", "fp8_e4m3", false, false, false, false},
        {2, 16, 16, 1, {37}, {3}, 1, 1, 0, 0, "fp8_e4m3", "fp8_e4m3", "bf16", false, true, true, false},
    };
    for (size_t i = 0; i < sizeof f8 / sizeof f8[0]; i++)
        sconv_case(&f8[i], CK_QGEMM, NULL);
    /* refusals: grouped, e5m2 x e5m2, i8 sums that could overflow int32 (C * window = 2^17) */
    static const sconv_spec no[] = {
        {2, 16, 16, 2, {13, 9}, {3, 3}, 1, 1, 0, 2, "i8", "i8", "bf16", true, true, false, false},
        {2, 16, 16, 2, {13, 9}, {3, 3}, 1, 1, 0, 0, "fp8_e5m2", "fp8_e5m2", "bf16", false, false, false, false},
        {1, 131072, 16, 2, {1, 1}, {1, 1}, 1, 0, 0, 0, "i8", "i8", "bf16", false, false, false, false},
    };
    static const char *const why[] = {"groups=2", "fp8_e5m2 x fp8_e5m2 has no Hopper fp8 kernel",
                                      "could overflow the int32 accumulator"};
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        sconv_case(&no[i], CK_REFUSE, why[i]);
}

/* ---- bench */
static void bench_cases(void)
{
    static const int g[][3] = {{8192, 8192, 8192}, {4096, 4096, 4096}, {16, 8192, 8192}, {4096, 14336, 4096},
                               {4096, 4096, 14336}};
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++)
        smm_case(g[i][0], g[i][1], g[i][2], "fp8_e4m3", "fp8_e4m3", "bf16", CK_GEMM, NULL);
    smm_case(8192, 8192, 8192, "i8", "i8", "bf16", CK_EXACT, NULL);
    smm_case(4096, 14336, 4096, "i8", "i8", "bf16", CK_EXACT, NULL);
    static const char X[] = "  input x: bf16[8192, 8192];\n", Q[] = "  input q8: fp8_e4m3[8192, 8192];\n",
                      S1[] = "  weight s: f32[1] = fill(0.01);\n",
                      SB[] = "  weight sb: e8m0[8192, 256] = fill(0.0078125);\n",
                      S2[] = "  weight s2: f32[64, 64] = fill(0.01);\n";
    static const struct { const char *id, *decl1, *decl2, *body; } q[] = {
        {"bench/quantize/bf16->e4m3/tensor/8192x8192", X, S1, "  q = quantize(x, s);\n  output q;"},
        {"bench/quantize/bf16->e4m3/blk1x32-e8m0/8192x8192", X, SB, "  q = quantize(x, sb, block=[1, 32]);\n  output q;"},
        {"bench/quantize/bf16->e4m3/blk128/8192x8192", X, S2, "  q = quantize(x, s2, block=[128, 128]);\n  output q;"},
        {"bench/dequantize/e4m3->bf16/blk1x32-e8m0/8192x8192", Q, SB,
         "  y = dequantize(q8, sb, block=[1, 32], dtype=bf16);\n  output y;"},
        {"bench/amax/bf16/tensor/8192x8192", X, "", "  a = amax(x);\n  output a;"},
        {"bench/amax/bf16/blk1x32/8192x8192", X, "", "  a = amax(x, block=[1, 32]);\n  output a;"},
        {"bench/copy/bf16->f32/8192x8192", X, "", "  y = cast(x, dtype=f32);\n  output y: f32;"},
    };
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++)
        add_case(q[i].id, CK_EXACT, "dnn 1;\ngraph g(seed=1) {\n%s%s%s\n}\n", q[i].decl1, q[i].decl2, q[i].body);
    /* int8 conv (scaled_conv_im2col), ResNet-50-like layers at N = 32, NHWC */
    static const sconv_spec rc[] = {
        {32, 256, 256, 2, {56, 56}, {3, 3}, 1, 1, 0, 0, "i8", "i8", "bf16", true, true, false, false},
        {32, 256, 256, 2, {56, 56}, {3, 3}, 1, 1, 0, 0, "i8", "i8", "i8", true, true, false, false},
        {32, 64, 64, 2, {56, 56}, {3, 3}, 1, 1, 0, 0, "i8", "i8", "i8", true, true, false, false},
        {32, 256, 64, 2, {56, 56}, {1, 1}, 1, 0, 0, 0, "i8", "i8", "i8", true, true, false, false},
        {32, 256, 256, 2, {14, 14}, {3, 3}, 1, 1, 0, 0, "i8", "i8", "i8", true, true, false, false},
        {32, 3, 64, 2, {224, 224}, {7, 7}, 2, 3, 0, 0, "i8", "i8", "i8", true, true, false, false},
        {32, 256, 256, 2, {56, 56}, {3, 3}, 1, 1, 0, 0, "fp8_e4m3", "fp8_e4m3", "bf16", true, true, false, false},
    };
    for (size_t i = 0; i < sizeof rc / sizeof rc[0]; i++)
        sconv_case(&rc[i], CK_EXACT, NULL);
}

static const char *case_id(int i) { return cases[i].id; }
static const char *case_text(int i) { return cases[i].text; }

/* Byte-exact comparison of output t (both states hold it packed). */
static bool exact_output(const dh_case_run *r, int t, char *msg, size_t cap, size_t *n)
{
    const host_tensor *got = &r->gpu.tensors[t], *ref = &r->cpu.tensors[t];
    size_t esz = xdnn_dtype_size(ref->dtype), bad = 0, first = 0;
    for (int64_t i = 0; i < ref->numel; i++) {
        if (memcmp((const char *)got->data + i * esz, (const char *)ref->data + i * esz, esz) != 0) {
            if (!bad++)
                first = (size_t)i;
        }
    }
    const char *name = r->g->tensors[t].name;
    if (!bad) {
        *n += (size_t)snprintf(msg + *n, cap - *n, " %s: %lld bytes-exact", name, (long long)ref->numel);
        return ref->numel > 0;
    }
    *n += (size_t)snprintf(msg + *n, cap - *n, " %s: %zu of %lld differ; first at %zu: got %.9g, ref %.9g", name, bad,
                           (long long)ref->numel, first, dtype_load(got->dtype, got->data, (int64_t)first),
                           dtype_load(ref->dtype, ref->data, (int64_t)first));
    return false;
}

/* The bytes of q against the written-out table rows of its dtype. */
static bool table_bytes(const tcase *c, const host_tensor *q, char *msg, size_t cap, size_t *n)
{
    bool ok = true;
    int j = 0;
    for (size_t k = 0; k < sizeof qcases / sizeof qcases[0]; k++) {
        if (qcases[k].dt != c->table_dt || isnan(bits_f32(qcases[k].xbits)))
            continue;
        uint8_t b = ((const uint8_t *)q->data)[j++];
        if (b != qcases[k].want) {
            ok = false;
            *n += (size_t)snprintf(msg + *n, cap - *n, " [%s: got 0x%02X want 0x%02X]", qcases[k].why, b,
                                   qcases[k].want);
        }
    }
    return ok;
}

static void run_case(int i, dh_outcome *out)
{
    const tcase *c = &cases[i];
    bool bench = opts.bench;
    dh_case_run r = {0};
    xdnn_status s = dh_case_begin(&r, c->id, c->text, !bench && c->kind != CK_REFUSE, out);
    xgraph *g = r.g;
    if (s != XDNN_OK)
        goto done;
    if (opts.dry) {
        s = dh_dry_select(g, out->engines, sizeof out->engines, r.d);
        out->ok = (s == XDNN_OK) == (c->kind != CK_REFUSE);
        size_t n = (size_t)snprintf(out->msg, sizeof out->msg, "(dry: reference ran, engines selected, not run)");
        if (c->kind == CK_TABLE)
            out->ok &= table_bytes(c, &r.cpu.tensors[g->outputs[0]], out->msg, sizeof out->msg, &n);
        goto done;
    }
    gpu_run_opts o = {.warmup = bench ? 10 : 0, .iters = bench ? 50 : 1, .log = stderr,
                      .verbose = getenv("DIFFTEST_VERBOSE") ? 1 : 0};
    if (c->kind == CK_REFUSE) {
        s = dh_gpu_run(&r, &o, out);
        bool named = false; /* the refusal's own text is in the diagnostics */
        for (size_t k = 0; k < xdnn_diags_count(r.d) && !named; k++)
            named = strstr(xdnn_diags_get(r.d, k)->message, c->expect) != NULL;
        out->ok = s == XDNN_ERR_UNSUPPORTED && named;
        if (!out->ok)
            snprintf(out->msg + strlen(out->msg), sizeof out->msg - strlen(out->msg),
                     " (expected a refusal naming '%s')", c->expect);
        else
            snprintf(out->msg, sizeof out->msg, "refused: %s", c->expect);
        goto done;
    }
    s = dh_gpu_run(&r, &o, out);
    if (s != XDNN_OK)
        goto done;
    if (bench) {
        size_t n = 0;
        for (int k = 0; k < r.rep.nparts && n < sizeof out->msg; k++) {
            const gpu_partition_report *p = &r.rep.parts[k];
            double sec = p->ms_median * 1e-3;
            n += (size_t)snprintf(out->msg + n, sizeof out->msg - n,
                                  "\n    BENCH %s | %s | %s | median %.4f ms (min %.4f max %.4f) | %.1f GB/s | %.1f "
                                  "TFLOP/s | %s",
                                  c->id, p->name, p->engine, p->ms_median, p->ms_min, p->ms_max,
                                  sec > 0 ? p->bytes / sec * 1e-9 : 0, sec > 0 ? p->flops / sec * 1e-12 : 0,
                                  p->detail ? p->detail : "");
        }
        out->ok = dh_outputs_finite(&r);
        goto done;
    }
    out->ok = true;
    size_t n = 0;
    for (size_t k = 0; k < g->noutputs; k++) {
        int t = g->outputs[k];
        if (c->kind == CK_QGEMM) {
            /* f32 accumulation of exact products: v within ~1e-6; c may land one grid step away */
            xdnn_dtype dt = r.cpu.tensors[t].dtype;
            dh_rule rule = dt == XDNN_F32  ? (dh_rule){.rtol = 1e-3, .atol = 0, .require_nonzero = true}
                           : dt == XDNN_I8 ? (dh_rule){.rtol = 0, .atol = 1, .require_nonzero = true}
                                           : (dh_rule){.rtol = dt == XDNN_FP8_E5M2 ? 0.25 : 0.125,
                                                       .atol = 1.0 / 64, .require_nonzero = true};
            if (dt == XDNN_BF16)
                rule = (dh_rule){.rtol = 1e-2, .atol = 1e-2 * dh_tensor_absmax(&r.cpu.tensors[t]),
                                 .max_rel_norm = 1e-2, .require_nonzero = true};
            out->ok &= dh_compare_output(&r, t, &rule, out->msg, sizeof out->msg, &n, NULL);
            continue;
        }
        if (c->kind == CK_GEMM) {
            const host_tensor *ref = &r.cpu.tensors[t];
            double mx = dh_tensor_absmax(ref);
            /* exact products, fp32 accumulation, one rounding to the output */
            dh_rule rule = {.rtol = 1e-2, .atol = 1e-2 * mx, .max_rel_norm = 1e-2, .require_nonzero = true};
            out->ok &= dh_compare_output(&r, t, &rule, out->msg, sizeof out->msg, &n, NULL);
            continue;
        }
        out->ok &= exact_output(&r, t, out->msg, sizeof out->msg, &n);
    }
    if (c->kind == CK_TABLE && out->ok) /* the table's own bytes, not just the CPU's */
        out->ok = table_bytes(c, &r.gpu.tensors[g->outputs[0]], out->msg, sizeof out->msg, &n);
done:
    dh_case_end(&r, c->id, out->ok);
}

int main(int argc, char **argv)
{
    dh_parse_args(argc, argv, true, &opts);
    cases = calloc(MAX_CASES, sizeof *cases);
    if (!cases)
        return 2;
    if (opts.bench) {
        bench_cases();
    } else {
        table_cases();
        chain_cases();
        pow2_cases(); /* session 14 (q14) */
        settle_cases(); /* session 16 (quant) */
        smm_cases();
        sconv_cases();
    }
    dh_tester t = {.name = "difftest_quant", .ncases = ncases, .case_id = case_id, .case_text = case_text,
                   .run_case = run_case};
    int rc = dh_run(&t, &opts);
    free(cases);
    return rc;
}
