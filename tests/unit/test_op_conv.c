/* test_op_conv.c — conv, conv_dgrad and conv_wgrad: hand-computed answers,
 * conv against an explicit im2col + matmul, the adjoint identities
 * <conv(x,w), dy> = <x, dgrad(dy,w)> = <w, wgrad(dy,x)>, and inference errors
 * with their exact messages. */
#include "op_test_util.h"
#include "test_util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

extern const op_desc op_conv_desc, op_conv_dgrad_desc, op_conv_wgrad_desc, op_matmul_desc;

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

/* vals, or random values in [-1, 1) when vals is NULL. */
static ref_tensor tensor_of(int rank, const int64_t *dims, const double *vals)
{
    return optest_ref_of(rank, dims, vals, &rng_state);
}

static double dot(const ref_tensor *a, const ref_tensor *b)
{
    double s = 0;
    for (int64_t i = 0; i < a->numel; i++)
        s += a->data[i] * b->data[i];
    return s;
}

/* Run conv-family op d on (a, b) and compare with `want` (NULL: only run).
 * Returns the output (caller frees). */
static ref_tensor run2(const op_desc *d, const xnode *n, const ref_tensor *a, const ref_tensor *b, int rank,
                       const int64_t *want_dims, const double *want, const char *what)
{
    xdnn_diags_t *dg = xdnn_diags_create();
    const ref_tensor *in[2] = {a, b};
    ref_tensor out;
    xdnn_status st = optest_run(d, n, 2, in, 1, &out, dg);
    CHECK(st == XDNN_OK, "%s: %s failed: %s", what, d->name, optest_first_error(dg));
    xdnn_diags_destroy(dg);
    if (st != XDNN_OK)
        return out;
    if (want_dims) {
        char got[128], exp[128];
        CHECK(out.rank == rank && memcmp(out.dims, want_dims, sizeof(int64_t) * (size_t)rank) == 0,
              "%s: shape %s, want %s", what, shape_str(got, sizeof got, out.rank, out.dims),
              shape_str(exp, sizeof exp, rank, want_dims));
    }
    if (want && out.rank == rank)
        for (int64_t i = 0; i < out.numel; i++)
            CHECK(fabs(out.data[i] - want[i]) < 1e-12, "%s: element %" PRId64 " = %g, want %g", what, i,
                  out.data[i], want[i]);
    return out;
}

/* ---------------------------------------------------------------- hand-computed cases */

static void test_conv2d_basic(arena *a)
{
    /* x = 1..9 as 3x3, w = [[1,2],[3,4]]: y[i,j] = x[i,j] + 2x[i,j+1] + 3x[i+1,j] + 4x[i+1,j+1]. */
    const double xv[] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, wv[] = {1, 2, 3, 4};
    ref_tensor x = tensor_of(4, (int64_t[]){1, 1, 3, 3}, xv), w = tensor_of(4, (int64_t[]){1, 1, 2, 2}, wv);
    xnode n;
    optest_node(a, &n, &op_conv_desc);
    ref_tensor y = run2(&op_conv_desc, &n, &x, &w, 4, (int64_t[]){1, 1, 2, 2}, (double[]){37, 47, 67, 77}, "basic");
    optest_ref_free(&y);

    /* stride 2, pad 1: the 5x5 padded input gives 2x2 windows at rows/cols {-1,0} and {1,2}. */
    optest_set_int(&n, &op_conv_desc, "stride", 2);
    optest_set_int(&n, &op_conv_desc, "pad", 1);
    y = run2(&op_conv_desc, &n, &x, &w, 4, (int64_t[]){1, 1, 2, 2}, (double[]){4, 18, 36, 77}, "stride 2 pad 1");
    optest_ref_free(&y);

    /* per-dim stride [1, 2]: rows 0..1, cols 0 only (out W = (3-2)/2+1 = 1). */
    optest_set_ints(&n, &op_conv_desc, "stride", 2, (int64_t[]){1, 2});
    optest_set_int(&n, &op_conv_desc, "pad", 0);
    y = run2(&op_conv_desc, &n, &x, &w, 4, (int64_t[]){1, 1, 2, 1}, (double[]){37, 67}, "stride [1,2]");
    optest_ref_free(&y);

    /* "same" with stride 1, window 2: total pad 1 along each dim, all of it after (lo 0, hi 1). */
    optest_set_int(&n, &op_conv_desc, "stride", 1);
    optest_set_str(&n, &op_conv_desc, "pad", "same");
    y = run2(&op_conv_desc, &n, &x, &w, 4, (int64_t[]){1, 1, 3, 3},
             (double[]){37, 47, 3 + 3 * 6, 67, 77, 6 + 3 * 9, 7 + 2 * 8, 8 + 2 * 9, 9},
             "same");
    optest_ref_free(&y);
    optest_ref_free(&x);
    optest_ref_free(&w);
}

static void test_conv1d_pad_dilation(arena *a)
{
    const double xv[] = {1, 2, 3, 4}, wv[] = {1, 10, 100};
    ref_tensor x = tensor_of(3, (int64_t[]){1, 1, 4}, xv), w = tensor_of(3, (int64_t[]){1, 1, 3}, wv);
    xnode n;
    optest_node(a, &n, &op_conv_desc);
    /* causal: pad [[2, 0]], y[o] = sum_r x[o - 2 + r] * w[r] */
    optest_set_pads(&n, &op_conv_desc, "pad", 1, (int64_t[]){2, 0});
    ref_tensor y = run2(&op_conv_desc, &n, &x, &w, 3, (int64_t[]){1, 1, 4}, (double[]){100, 210, 321, 432}, "pad [[2,0]]");
    optest_ref_free(&y);
    /* pad [[0, 2]]: the window runs off the end */
    optest_set_pads(&n, &op_conv_desc, "pad", 1, (int64_t[]){0, 2});
    y = run2(&op_conv_desc, &n, &x, &w, 3, (int64_t[]){1, 1, 4}, (double[]){321, 432, 43, 4}, "pad [[0,2]]");
    optest_ref_free(&y);
    /* pad given as [p] per dim */
    optest_set_ints(&n, &op_conv_desc, "pad", 1, (int64_t[]){1});
    y = run2(&op_conv_desc, &n, &x, &w, 3, (int64_t[]){1, 1, 4}, (double[]){210, 321, 432, 43}, "pad [1]");
    optest_ref_free(&y);
    optest_ref_free(&x);
    optest_ref_free(&w);

    /* dilation 2 with a 2-tap filter of ones: y[o] = x[o] + x[o+2] */
    const double x5[] = {1, 2, 3, 4, 5}, ones[] = {1, 1};
    x = tensor_of(3, (int64_t[]){1, 1, 5}, x5);
    w = tensor_of(3, (int64_t[]){1, 1, 2}, ones);
    optest_node(a, &n, &op_conv_desc);
    optest_set_int(&n, &op_conv_desc, "dilation", 2);
    y = run2(&op_conv_desc, &n, &x, &w, 3, (int64_t[]){1, 1, 3}, (double[]){4, 6, 8}, "dilation 2");
    optest_ref_free(&y);
    /* dilation 2, stride 2, "same": out = ceil(5/2) = 3, extent 3, total pad (3-1)*2+3-5 = 2 -> [1, 1];
     * y[o] = x[2o-1] + x[2o+1] */
    optest_set_int(&n, &op_conv_desc, "stride", 2);
    optest_set_str(&n, &op_conv_desc, "pad", "same");
    y = run2(&op_conv_desc, &n, &x, &w, 3, (int64_t[]){1, 1, 3}, (double[]){2, 2 + 4, 4}, "dilation 2 stride 2 same");
    optest_ref_free(&y);
    optest_ref_free(&x);
    optest_ref_free(&w);
}

static void test_conv_groups(arena *a)
{
    /* 4 channels of 2 samples, groups 2: y0 = c0 + c1, y1 = c2 - c3 */
    const double xv[] = {1, 2, 3, 4, 5, 6, 7, 8}, wv[] = {1, 1, 1, -1};
    ref_tensor x = tensor_of(3, (int64_t[]){1, 4, 2}, xv), w = tensor_of(3, (int64_t[]){2, 2, 1}, wv);
    xnode n;
    optest_node(a, &n, &op_conv_desc);
    optest_set_int(&n, &op_conv_desc, "groups", 2);
    ref_tensor y = run2(&op_conv_desc, &n, &x, &w, 3, (int64_t[]){1, 2, 2}, (double[]){4, 6, -2, -2}, "groups 2");
    optest_ref_free(&y);
    optest_ref_free(&x);
    optest_ref_free(&w);

    /* depthwise (groups = C = 3), 2-tap filters (1,1), (1,-1), (2,0) */
    const double xd[] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, wd[] = {1, 1, 1, -1, 2, 0};
    x = tensor_of(3, (int64_t[]){1, 3, 3}, xd);
    w = tensor_of(3, (int64_t[]){3, 1, 2}, wd);
    optest_set_int(&n, &op_conv_desc, "groups", 3);
    y = run2(&op_conv_desc, &n, &x, &w, 3, (int64_t[]){1, 3, 2}, (double[]){3, 5, -1, -1, 14, 16}, "depthwise");
    optest_ref_free(&y);
    optest_ref_free(&w);
    /* depthwise with multiplier 2 (K = 6): channel c feeds outputs 2c and 2c+1 */
    const double wm[] = {1, 0, 0, 1, 1, 1, 0, 0, 1, -1, -1, 1};
    w = tensor_of(3, (int64_t[]){6, 1, 2}, wm);
    y = run2(&op_conv_desc, &n, &x, &w, 3, (int64_t[]){1, 6, 2}, (double[]){1, 2, 2, 3, 9, 11, 0, 0, -1, -1, 1, 1},
             "depthwise x2");
    optest_ref_free(&y);
    optest_ref_free(&x);
    optest_ref_free(&w);
}

static void test_conv3d(arena *a)
{
    double xv[8], ones[8];
    for (int i = 0; i < 8; i++) {
        xv[i] = i + 1;
        ones[i] = 1;
    }
    ref_tensor x = tensor_of(5, (int64_t[]){1, 1, 2, 2, 2}, xv), w = tensor_of(5, (int64_t[]){1, 1, 2, 2, 2}, ones);
    xnode n;
    optest_node(a, &n, &op_conv_desc);
    ref_tensor y = run2(&op_conv_desc, &n, &x, &w, 5, (int64_t[]){1, 1, 1, 1, 1}, (double[]){36}, "3d");
    optest_ref_free(&y);
    /* pad 1: 3x3x3 output; corner windows see one element, the centre all eight,
     * (0,1,1) sees the d=0 plane (1+2+3+4), (2,1,1) the d=1 plane. */
    optest_set_int(&n, &op_conv_desc, "pad", 1);
    y = run2(&op_conv_desc, &n, &x, &w, 5, (int64_t[]){1, 1, 3, 3, 3}, NULL, "3d pad 1");
    if (y.numel == 27) {
        CHECK(y.data[0] == 1 && y.data[26] == 8 && y.data[13] == 36, "3d pad: %g %g %g", y.data[0], y.data[26],
              y.data[13]);
        CHECK(y.data[4] == 10 && y.data[22] == 26, "3d pad planes: %g %g", y.data[4], y.data[22]);
        CHECK(y.data[1] == 3 && y.data[3] == 4, "3d pad edges: %g %g", y.data[1], y.data[3]);
    }
    optest_ref_free(&y);
    optest_ref_free(&x);
    optest_ref_free(&w);
}

/* dgrad and wgrad by hand on the 1-D causal case: y[o] = sum_r x[o-2+r] w[r]. */
static void test_grads_by_hand(arena *a)
{
    const double xv[] = {1, 2, 3, 4}, wv[] = {1, 10, 100}, dyv[] = {1, 0, 0, 2};
    ref_tensor x = tensor_of(3, (int64_t[]){1, 1, 4}, xv), w = tensor_of(3, (int64_t[]){1, 1, 3}, wv);
    ref_tensor dy = tensor_of(3, (int64_t[]){1, 1, 4}, dyv);
    xnode n;
    optest_node(a, &n, &op_conv_dgrad_desc);
    optest_set_pads(&n, &op_conv_dgrad_desc, "pad", 1, (int64_t[]){2, 0});
    optest_set_ints(&n, &op_conv_dgrad_desc, "x_dims", 3, (int64_t[]){1, 1, 4});
    /* dx[i] = sum_o dy[o] w[i - o + 2]: dy[0] reaches x[0] through w[2]; dy[3] reaches x[1..3] through w[0..2] */
    ref_tensor dx = run2(&op_conv_dgrad_desc, &n, &dy, &w, 3, (int64_t[]){1, 1, 4}, (double[]){100, 2, 20, 200}, "dgrad");
    optest_ref_free(&dx);
    optest_node(a, &n, &op_conv_wgrad_desc);
    optest_set_pads(&n, &op_conv_wgrad_desc, "pad", 1, (int64_t[]){2, 0});
    optest_set_ints(&n, &op_conv_wgrad_desc, "w_dims", 3, (int64_t[]){1, 1, 3});
    /* dw[r] = sum_o dy[o] x[o - 2 + r] = dy[0] x[r-2] + 2 x[r+1] */
    ref_tensor dw = run2(&op_conv_wgrad_desc, &n, &dy, &x, 3, (int64_t[]){1, 1, 3}, (double[]){4, 6, 1 + 8}, "wgrad");
    optest_ref_free(&dw);
    optest_ref_free(&x);
    optest_ref_free(&w);
    optest_ref_free(&dy);
}

/* ---------------------------------------------------------------- sweeps */

typedef struct conv_case {
    int nsp;
    int64_t N, C, K, groups;
    int64_t in[3], win[3], stride[3], dil[3];
    int64_t pads[6]; /* lo, hi per dim */
    bool same;
} conv_case;

static const conv_case sweep[] = {
    {1, 2, 3, 4, 1, {7}, {3}, {1}, {1}, {1, 1}, false},
    {1, 1, 4, 6, 2, {9}, {2}, {2}, {1}, {0, 1}, false},
    {1, 3, 2, 2, 1, {10}, {3}, {3}, {2}, {2, 0}, false},
    {1, 2, 5, 5, 5, {8}, {3}, {2}, {2}, {0, 0}, true},
    {2, 2, 3, 4, 1, {5, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, false},
    {2, 1, 4, 4, 2, {7, 6}, {3, 2}, {2, 1}, {1, 2}, {1, 0, 0, 2}, false},
    {2, 2, 6, 3, 3, {6, 5}, {2, 3}, {2, 2}, {2, 1}, {0, 1, 1, 1}, false},
    {2, 1, 4, 8, 4, {5, 5}, {3, 3}, {2, 2}, {1, 1}, {0}, true},
    {2, 3, 1, 2, 1, {4, 9}, {1, 4}, {1, 3}, {1, 1}, {0, 0, 2, 1}, false},
    {2, 1, 2, 2, 1, {6, 6}, {3, 3}, {1, 1}, {2, 2}, {0}, true},
    {3, 1, 2, 3, 1, {4, 5, 3}, {2, 3, 2}, {1, 2, 1}, {1, 1, 2}, {1, 0, 0, 1, 1, 1}, false},
    {3, 2, 4, 2, 2, {5, 4, 4}, {3, 2, 2}, {2, 2, 1}, {1, 1, 1}, {0}, true},
};

/* Set the case's attributes on a conv-family node. */
static void set_case_attrs(xnode *n, const op_desc *d, const conv_case *cc)
{
    optest_set_ints(n, d, "stride", cc->nsp, cc->stride);
    optest_set_ints(n, d, "dilation", cc->nsp, cc->dil);
    optest_set_int(n, d, "groups", cc->groups);
    if (cc->same)
        optest_set_str(n, d, "pad", "same");
    else
        optest_set_pads(n, d, "pad", cc->nsp, cc->pads);
}

static void case_dims(const conv_case *cc, int64_t *xd, int64_t *wd)
{
    xd[0] = cc->N;
    xd[1] = cc->C;
    wd[0] = cc->K;
    wd[1] = cc->C / cc->groups;
    for (int i = 0; i < cc->nsp; i++) {
        xd[2 + i] = cc->in[i];
        wd[2 + i] = cc->win[i];
    }
}

/* "same" pads recomputed here from the definition (independently of conv_util). */
static void case_pads(const conv_case *cc, int64_t *lo, int64_t *hi)
{
    for (int i = 0; i < cc->nsp; i++) {
        if (!cc->same) {
            lo[i] = cc->pads[2 * i];
            hi[i] = cc->pads[2 * i + 1];
            continue;
        }
        int64_t out = (cc->in[i] + cc->stride[i] - 1) / cc->stride[i];
        int64_t need = (out - 1) * cc->stride[i] + cc->dil[i] * (cc->win[i] - 1) + 1 - cc->in[i];
        if (need < 0)
            need = 0;
        lo[i] = need / 2;
        hi[i] = need - need / 2;
    }
}

/* conv as im2col + one batched matmul per group:
 * cols[g, n*P + p, ci*R + r] = x[n, g*Cg + ci, o(p)*s - lo + r(r)*dil] (0 in the padding),
 * w viewed as [G, Kg, Cg*R]; c = matmul(cols, w, trans_b) is [G, N*P, Kg]. */
static void test_im2col(arena *a, const conv_case *cc, int index)
{
    int64_t xd[5], wd[5];
    case_dims(cc, xd, wd);
    int rank = cc->nsp + 2;
    ref_tensor x = tensor_of(rank, xd, NULL), w = tensor_of(rank, wd, NULL);
    xnode n;
    optest_node(a, &n, &op_conv_desc);
    set_case_attrs(&n, &op_conv_desc, cc);
    char what[64];
    snprintf(what, sizeof what, "im2col case %d", index);
    ref_tensor y = run2(&op_conv_desc, &n, &x, &w, rank, NULL, NULL, what);
    if (!y.data)
        goto done;

    int64_t lo[3], hi[3], outd[3];
    case_pads(cc, lo, hi);
    for (int i = 0; i < cc->nsp; i++) {
        int64_t ext = cc->dil[i] * (cc->win[i] - 1) + 1;
        outd[i] = (cc->in[i] + lo[i] + hi[i] - ext) / cc->stride[i] + 1;
        CHECK(y.dims[2 + i] == outd[i], "%s: out dim %d = %" PRId64 ", want %" PRId64, what, i, y.dims[2 + i], outd[i]);
    }
    const int64_t G = cc->groups, Cg = cc->C / G, Kg = cc->K / G, N = cc->N;
    const int64_t P = shape_numel(cc->nsp, outd), R = shape_numel(cc->nsp, cc->win);
    int64_t xstr[5];
    shape_strides(rank, xd, xstr);
    ref_tensor cols = optest_ref_alloc(3, (int64_t[]){G, N * P, Cg * R});
    for (int64_t g = 0; g < G; g++)
        for (int64_t nn = 0; nn < N; nn++) {
            int64_t o[3] = {0};
            int64_t p = 0;
            do {
                for (int64_t ci = 0; ci < Cg; ci++) {
                    int64_t r[3] = {0};
                    int64_t ri = 0;
                    do {
                        int64_t off = nn * xstr[0] + (g * Cg + ci) * xstr[1];
                        bool inside = true;
                        for (int i = 0; i < cc->nsp; i++) {
                            int64_t pos = o[i] * cc->stride[i] - lo[i] + r[i] * cc->dil[i];
                            inside = inside && pos >= 0 && pos < cc->in[i];
                            off += pos * xstr[2 + i];
                        }
                        cols.data[(g * N * P + nn * P + p) * Cg * R + ci * R + ri] = inside ? x.data[off] : 0.0;
                        ri++;
                    } while (index_next(cc->nsp, cc->win, r));
                }
                p++;
            } while (index_next(cc->nsp, outd, o));
        }
    ref_tensor wv = w;
    wv.rank = 3;
    wv.dims[0] = G;
    wv.dims[1] = Kg;
    wv.dims[2] = Cg * R;
    xnode mm;
    optest_node(a, &mm, &op_matmul_desc);
    optest_set_bool(&mm, &op_matmul_desc, "trans_b", true);
    ref_tensor c = run2(&op_matmul_desc, &mm, &cols, &wv, 3, (int64_t[]){G, N * P, Kg}, NULL, what);
    double maxerr = 0;
    if (c.data)
        for (int64_t nn = 0; nn < N; nn++)
            for (int64_t k = 0; k < cc->K; k++)
                for (int64_t p = 0; p < P; p++) {
                    double want = c.data[((k / Kg) * N * P + nn * P + p) * Kg + k % Kg];
                    double got = y.data[(nn * cc->K + k) * P + p];
                    maxerr = fmax(maxerr, fabs(got - want));
                }
    CHECK(c.data && maxerr < 1e-12, "%s: conv differs from im2col+matmul by %g", what, maxerr);
    optest_ref_free(&c);
    optest_ref_free(&cols);
    optest_ref_free(&y);
done:
    optest_ref_free(&x);
    optest_ref_free(&w);
}

/* <conv(x,w), dy> = <x, dgrad(dy,w)> = <w, wgrad(dy,x)> */
static void test_adjoint(arena *a, const conv_case *cc, int index)
{
    int64_t xd[5], wd[5];
    case_dims(cc, xd, wd);
    int rank = cc->nsp + 2;
    ref_tensor x = tensor_of(rank, xd, NULL), w = tensor_of(rank, wd, NULL);
    char what[64];
    snprintf(what, sizeof what, "adjoint case %d", index);
    xnode n;
    optest_node(a, &n, &op_conv_desc);
    set_case_attrs(&n, &op_conv_desc, cc);
    ref_tensor y = run2(&op_conv_desc, &n, &x, &w, rank, NULL, NULL, what);
    ref_tensor dy = tensor_of(rank, y.dims, NULL);

    optest_node(a, &n, &op_conv_dgrad_desc);
    set_case_attrs(&n, &op_conv_dgrad_desc, cc);
    optest_set_ints(&n, &op_conv_dgrad_desc, "x_dims", rank, xd);
    ref_tensor dx = run2(&op_conv_dgrad_desc, &n, &dy, &w, rank, xd, NULL, what);

    optest_node(a, &n, &op_conv_wgrad_desc);
    set_case_attrs(&n, &op_conv_wgrad_desc, cc);
    optest_set_ints(&n, &op_conv_wgrad_desc, "w_dims", rank, wd);
    ref_tensor dw = run2(&op_conv_wgrad_desc, &n, &dy, &x, rank, wd, NULL, what);

    if (y.data && dx.data && dw.data) {
        double fwd = dot(&y, &dy), bx = dot(&x, &dx), bw = dot(&w, &dw);
        double scale = fmax(fabs(fwd), 1e-300);
        CHECK(fabs(fwd) > 1e-3, "%s: <y,dy> = %g is too small to test anything", what, fwd);
        CHECK(fabs(bx - fwd) <= 1e-9 * scale, "%s: <x,dx> = %.17g but <y,dy> = %.17g", what, bx, fwd);
        CHECK(fabs(bw - fwd) <= 1e-9 * scale, "%s: <w,dw> = %.17g but <y,dy> = %.17g", what, bw, fwd);
    }
    optest_ref_free(&x);
    optest_ref_free(&w);
    optest_ref_free(&y);
    optest_ref_free(&dy);
    optest_ref_free(&dx);
    optest_ref_free(&dw);
}

/* ---------------------------------------------------------------- errors */

/* Infer conv-family op d on shapes (a, b) and expect `msg` exactly. */
static void expect_error(const op_desc *d, const xnode *n, int rank_a, const int64_t *a, int rank_b,
                         const int64_t *b, const char *msg)
{
    tinfo ta = optest_tinfo(XDNN_F32, rank_a, a), tb = optest_tinfo(XDNN_F32, rank_b, b);
    const tinfo *in[2] = {&ta, &tb};
    optest_expect_infer_error(d, n, 2, in, 1, msg);
}

static void test_errors(arena *a)
{
    xnode n;
    const op_desc *c = &op_conv_desc;
    optest_node(a, &n, c);
    int64_t x4[] = {8, 64, 56, 56}, w4[] = {128, 64, 3, 3};
    expect_error(c, &n, 2, (int64_t[]){8, 64}, 2, (int64_t[]){8, 64},
                 "conv: x must have rank 3 to 5 ([N, C, W], [N, C, H, W] or [N, C, D, H, W]), got rank 2: x is [8, 64]");
    expect_error(c, &n, 4, x4, 3, (int64_t[]){128, 64, 3},
                 "conv: w must have the same rank as x (4), got rank 3: x is [8, 64, 56, 56], w is [128, 64, 3]");
    expect_error(c, &n, 4, x4, 4, (int64_t[]){128, 32, 3, 3},
                 "conv: w's channel dim (dim 1) must be C/groups = 64/1 = 64, got 32 (x is [8, 64, 56, 56], w is "
                 "[128, 32, 3, 3])");
    optest_set_int(&n, c, "groups", 3);
    expect_error(c, &n, 4, x4, 4, w4,
                 "conv: attribute 'groups' = 3 must divide the input channels C = 64 (x is [8, 64, 56, 56])");
    optest_set_int(&n, c, "groups", 4);
    expect_error(c, &n, 4, x4, 4, (int64_t[]){126, 16, 3, 3},
                 "conv: attribute 'groups' = 4 must divide the output channels K = 126 (w is [126, 16, 3, 3])");
    optest_set_int(&n, c, "groups", 0);
    expect_error(c, &n, 4, x4, 4, w4, "conv: attribute 'groups' must be >= 1, got 0");
    optest_set_int(&n, c, "groups", 1);
    expect_error(c, &n, 4, (int64_t[]){1, 64, 2, 56}, 4, w4,
                 "conv: output size along H would be < 1: input 2 + pad 0+0 = 2 is smaller than the window extent 3 "
                 "(window 3, dilation 1) (x is [1, 64, 2, 56], w is [128, 64, 3, 3])");
    optest_set_ints(&n, c, "dilation", 2, (int64_t[]){1, 30});
    expect_error(c, &n, 4, x4, 4, w4,
                 "conv: output size along W would be < 1: input 56 + pad 0+0 = 56 is smaller than the window extent "
                 "61 (window 3, dilation 30) (x is [8, 64, 56, 56], w is [128, 64, 3, 3])");
    optest_set_int(&n, c, "dilation", 1);
    optest_set_ints(&n, c, "stride", 3, (int64_t[]){1, 1, 1});
    expect_error(c, &n, 4, x4, 4, w4,
                 "conv: attribute 'stride' must be an int or a list of 2 ints (one per spatial dim), got [1, 1, 1] "
                 "(x is [8, 64, 56, 56], w is [128, 64, 3, 3])");
    optest_set_ints(&n, c, "stride", 2, (int64_t[]){1, 0});
    expect_error(c, &n, 4, x4, 4, w4,
                 "conv: attribute 'stride' must be >= 1 along every spatial dim, got [1, 0] (0 along W) (x is [8, 64, "
                 "56, 56], w is [128, 64, 3, 3])");
    optest_set_int(&n, c, "stride", 1);
    optest_set_pads(&n, c, "pad", 2, (int64_t[]){1, 1, 0, -1});
    expect_error(c, &n, 4, x4, 4, w4,
                 "conv: attribute 'pad' must not be negative, got [[1, 1], [0, -1]] (0, -1 along W) (x is [8, 64, 56, "
                 "56], w is [128, 64, 3, 3])");
    optest_set_str(&n, c, "pad", "valid");
    expect_error(c, &n, 4, x4, 4, w4,
                 "conv: attribute 'pad' must be an int, a list of 2 ints, a list of 2 [before, after] pairs or "
                 "\"same\", got \"valid\" (x is [8, 64, 56, 56], w is [128, 64, 3, 3])");
    optest_set_ints(&n, c, "pad", 3, (int64_t[]){1, 1, 1});
    expect_error(c, &n, 4, x4, 4, w4,
                 "conv: attribute 'pad' must be an int, a list of 2 ints, a list of 2 [before, after] pairs or "
                 "\"same\", got [1, 1, 1] (x is [8, 64, 56, 56], w is [128, 64, 3, 3])");

    /* dgrad: dy must be conv's output for x_dims */
    optest_node(a, &n, &op_conv_dgrad_desc);
    optest_set_int(&n, &op_conv_dgrad_desc, "stride", 2);
    optest_set_int(&n, &op_conv_dgrad_desc, "pad", 1);
    expect_error(&op_conv_dgrad_desc, &n, 4, (int64_t[]){8, 128, 28, 28}, 4, w4,
                 "conv_dgrad: attribute 'x_dims' is required (a list of 4 ints)");
    optest_set_ints(&n, &op_conv_dgrad_desc, "x_dims", 4, x4);
    expect_error(&op_conv_dgrad_desc, &n, 4, (int64_t[]){8, 128, 27, 28}, 4, w4,
                 "conv_dgrad: dy is [8, 128, 27, 28] but conv of x_dims [8, 64, 56, 56] with w [128, 64, 3, 3] "
                 "(stride [2, 2], pad [[1, 1], [1, 1]], dilation [1, 1]) gives [8, 128, 28, 28]");
    optest_set_ints(&n, &op_conv_dgrad_desc, "x_dims", 3, x4);
    expect_error(&op_conv_dgrad_desc, &n, 4, (int64_t[]){8, 128, 28, 28}, 4, w4,
                 "conv_dgrad: attribute 'x_dims' must be a list of 4 ints (same rank as dy), got [8, 64, 56]");
    optest_node(a, &n, &op_conv_wgrad_desc);
    optest_set_ints(&n, &op_conv_wgrad_desc, "w_dims", 4, (int64_t[]){128, 64, 3, 3});
    expect_error(&op_conv_wgrad_desc, &n, 4, (int64_t[]){8, 128, 54, 54}, 4, (int64_t[]){8, 32, 56, 56},
                 "conv_wgrad: w_dims's channel dim (dim 1) must be C/groups = 32/1 = 32, got 64 (x is [8, 32, 56, "
                 "56], w_dims is [128, 64, 3, 3])");
    expect_error(&op_conv_wgrad_desc, &n, 4, (int64_t[]){8, 64, 54, 54}, 4, x4,
                 "conv_wgrad: dy is [8, 64, 54, 54] but conv of x [8, 64, 56, 56] with w_dims [128, 64, 3, 3] "
                 "(stride [1, 1], pad [[0, 0], [0, 0]], dilation [1, 1]) gives [8, 128, 54, 54]");
}

/* Shapes from infer for the grads, and flops via a one-node graph. */
static void test_infer_and_flops(arena *a)
{
    xnode n;
    optest_node(a, &n, &op_conv_desc);
    optest_set_int(&n, &op_conv_desc, "stride", 2);
    optest_set_str(&n, &op_conv_desc, "pad", "same");
    tinfo x = optest_tinfo(XDNN_F16, 4, (int64_t[]){2, 6, 15, 16}), w = optest_tinfo(XDNN_F32, 4, (int64_t[]){4, 6, 3, 3});
    tinfo out;
    const tinfo *in[2] = {&x, &w};
    xdnn_diags_t *dg = xdnn_diags_create();
    CHECK(optest_infer(&op_conv_desc, &n, 2, in, 1, &out, dg) == XDNN_OK, "same infer: %s", optest_first_error(dg));
    CHECK(out.rank == 4 && out.dims[0] == 2 && out.dims[1] == 4 && out.dims[2] == 8 && out.dims[3] == 8,
          "same stride 2: got [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "]", out.dims[0], out.dims[1],
          out.dims[2], out.dims[3]);
    CHECK(out.dtype == XDNN_F16, "conv output dtype follows x");

    /* flops: 2 * N*K*prod(out) * C/g * prod(window) */
    double f = optest_flops(&op_conv_desc, &n, 2, (tinfo[]){x, w}, 1, &out);
    CHECK(f == 2.0 * 2 * 4 * 64 * 6 * 9, "conv flops %g", f);
    xdnn_diags_destroy(dg);
}

int main(void)
{
    arena *a = arena_create();
    test_conv2d_basic(a);
    test_conv1d_pad_dilation(a);
    test_conv_groups(a);
    test_conv3d(a);
    test_grads_by_hand(a);
    int ncases = (int)(sizeof sweep / sizeof sweep[0]);
    for (int i = 0; i < ncases; i++) {
        test_im2col(a, &sweep[i], i);
        test_adjoint(a, &sweep[i], i);
    }
    test_errors(a);
    test_infer_and_flops(a);
    arena_destroy(a);
    printf("test_op_conv: %d sweep cases\n", ncases);
    if (test_failures())
        fprintf(stderr, "test_op_conv: rng seed 0x9E3779B97F4A7C15\n");
    return test_summary("test_op_conv");
}
