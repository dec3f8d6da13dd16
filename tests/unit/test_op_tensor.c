/* test_op_tensor.c — exact answers for the tensor ops (reshape, permute,
 * broadcast, slice, concat, split, pad) on small arange inputs, and their
 * inference errors with exact messages. */
#include "op_test_util.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define X(id) extern const op_desc op_##id##_desc;
X(reshape) X(permute) X(broadcast) X(slice) X(concat) X(split) X(pad)
#undef X

/* 0, 1, 2, ... in row-major order (plus `base`). */
static ref_tensor arange(int rank, const int64_t *dims, double base)
{
    ref_tensor t = optest_ref_alloc(rank, dims);
    for (int64_t i = 0; i < t.numel; i++)
        t.data[i] = base + (double)i;
    return t;
}

/* y must have dims `dims` and exactly the values `want` (two checks,
 * reported at the caller's line; the first wrong element is named). */
static void expect(int line, const ref_tensor *y, int rank, const int64_t *dims, const double *want)
{
    bool shape_ok = y->rank == rank && y->data;
    for (int i = 0; shape_ok && i < rank; i++)
        shape_ok = y->dims[i] == dims[i];
    char got[128], exp[128];
    CHECK_AT(line, shape_ok, "shape %s, want %s", shape_str(got, sizeof got, y->rank, y->dims),
             shape_str(exp, sizeof exp, rank, dims));
    if (!shape_ok)
        return;
    int64_t bad = 0;
    while (bad < y->numel && y->data[bad] == want[bad])
        bad++;
    CHECK_AT(line, bad == y->numel, "element %lld = %g, want %g", (long long)bad, y->data[bad], want[bad]);
}

/* Run a one-input, n-result op; returns the status. */
static xdnn_status run1(const op_desc *d, const xnode *n, const ref_tensor *x, int nout, ref_tensor *out)
{
    xdnn_diags_t *diags = xdnn_diags_create();
    const ref_tensor *in[] = {x};
    xdnn_status st = optest_run(d, n, 1, in, nout, out, diags);
    if (st != XDNN_OK)
        xdnn_diags_print(diags, stderr);
    xdnn_diags_destroy(diags);
    return st;
}

static void test_reshape(arena *a)
{
    xnode n;
    optest_node(a, &n, &op_reshape_desc);
    ref_tensor x = arange(2, (int64_t[]){2, 6}, 0), y;
    optest_set_ints(&n, &op_reshape_desc, "dims", 3, (int64_t[]){3, -1, 2});
    CHECK(run1(&op_reshape_desc, &n, &x, 1, &y) == XDNN_OK);
    expect(__LINE__, &y, 3, (int64_t[]){3, 2, 2}, x.data);
    optest_ref_free(&y);

    tinfo t = optest_tinfo(XDNN_F32, 2, (int64_t[]){2, 3});
    optest_set_ints(&n, &op_reshape_desc, "dims", 2, (int64_t[]){4, 2});
    CHECK_STR(optest_infer_error(&op_reshape_desc, &n, 1, (const tinfo *[]){&t}, 1),
              "reshape: cannot reshape x [2, 3] (6 elements) into [4, 2] (8 elements)");
    optest_set_ints(&n, &op_reshape_desc, "dims", 2, (int64_t[]){4, -1});
    CHECK_STR(optest_infer_error(&op_reshape_desc, &n, 1, (const tinfo *[]){&t}, 1),
              "reshape: cannot reshape x [2, 3] (6 elements) into [4, -1]: 6 is not a multiple of 4");
    optest_set_ints(&n, &op_reshape_desc, "dims", 2, (int64_t[]){-1, -1});
    CHECK_STR(optest_infer_error(&op_reshape_desc, &n, 1, (const tinfo *[]){&t}, 1),
              "reshape: attribute 'dims' [-1, -1] may contain only one -1");
    optest_set_ints(&n, &op_reshape_desc, "dims", 3, (int64_t[]){6, 0, 1});
    CHECK_STR(optest_infer_error(&op_reshape_desc, &n, 1, (const tinfo *[]){&t}, 1),
              "reshape: attribute 'dims' [6, 0, 1] must hold sizes >= 1 (or one -1), got 0 at index 1");
    optest_ref_free(&x);
}

static void test_permute(arena *a)
{
    xnode n;
    optest_node(a, &n, &op_permute_desc);
    /* x [2, 3, 4] = arange; y = permute(x, [2, 0, 1]) is [4, 2, 3] with y[k, i, j] = x[i, j, k] = 12i + 4j + k */
    ref_tensor x = arange(3, (int64_t[]){2, 3, 4}, 0), y;
    optest_set_ints(&n, &op_permute_desc, "perm", 3, (int64_t[]){2, 0, -2});
    CHECK(run1(&op_permute_desc, &n, &x, 1, &y) == XDNN_OK);
    double want[24];
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++)
                want[(k * 2 + i) * 3 + j] = 12 * i + 4 * j + k;
    expect(__LINE__, &y, 3, (int64_t[]){4, 2, 3}, want);
    optest_ref_free(&y);

    /* 2-D transpose, literally */
    ref_tensor m = arange(2, (int64_t[]){2, 3}, 0);
    optest_set_ints(&n, &op_permute_desc, "perm", 2, (int64_t[]){1, 0});
    CHECK(run1(&op_permute_desc, &n, &m, 1, &y) == XDNN_OK);
    expect(__LINE__, &y, 2, (int64_t[]){3, 2}, (double[]){0, 3, 1, 4, 2, 5});
    optest_ref_free(&y);

    tinfo t = optest_tinfo(XDNN_F32, 3, (int64_t[]){2, 3, 4});
    optest_set_ints(&n, &op_permute_desc, "perm", 3, (int64_t[]){0, 1, 1});
    CHECK_STR(optest_infer_error(&op_permute_desc, &n, 1, (const tinfo *[]){&t}, 1),
              "permute: attribute 'perm' must be a permutation of the 3 axes of x [2, 3, 4], got [0, 1, 1]");
    optest_ref_free(&x);
    optest_ref_free(&m);
}

static void test_broadcast(arena *a)
{
    xnode n;
    optest_node(a, &n, &op_broadcast_desc);
    ref_tensor x = arange(2, (int64_t[]){3, 1}, 1), y;
    optest_set_ints(&n, &op_broadcast_desc, "dims", 3, (int64_t[]){2, 3, 2});
    CHECK(run1(&op_broadcast_desc, &n, &x, 1, &y) == XDNN_OK);
    expect(__LINE__, &y, 3, (int64_t[]){2, 3, 2}, (double[]){1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3});
    optest_ref_free(&y);
    tinfo t = optest_tinfo(XDNN_F32, 2, (int64_t[]){3, 1});
    optest_set_ints(&n, &op_broadcast_desc, "dims", 2, (int64_t[]){2, 4});
    CHECK_STR(optest_infer_error(&op_broadcast_desc, &n, 1, (const tinfo *[]){&t}, 1),
              "broadcast: cannot broadcast x [3, 1] to [2, 4] (dims align from the right; each must match or be 1)");
    optest_ref_free(&x);
}

static void test_slice(arena *a)
{
    xnode n;
    ref_tensor x = arange(2, (int64_t[]){2, 6}, 0), y; /* rows 0..5 and 6..11 */

    optest_node(a, &n, &op_slice_desc);
    optest_set_int(&n, &op_slice_desc, "axis", 1);
    optest_set_int(&n, &op_slice_desc, "start", -4);
    optest_set_int(&n, &op_slice_desc, "end", -1); /* [2:5] */
    CHECK(run1(&op_slice_desc, &n, &x, 1, &y) == XDNN_OK);
    expect(__LINE__, &y, 2, (int64_t[]){2, 3}, (double[]){2, 3, 4, 8, 9, 10});
    optest_ref_free(&y);

    optest_set_int(&n, &op_slice_desc, "start", 1);
    optest_unset(&n, &op_slice_desc, "end");
    optest_set_int(&n, &op_slice_desc, "step", 2); /* [1::2] */
    CHECK(run1(&op_slice_desc, &n, &x, 1, &y) == XDNN_OK);
    expect(__LINE__, &y, 2, (int64_t[]){2, 3}, (double[]){1, 3, 5, 7, 9, 11});
    optest_ref_free(&y);

    optest_unset(&n, &op_slice_desc, "start");
    optest_set_int(&n, &op_slice_desc, "step", -2); /* [::-2] */
    CHECK(run1(&op_slice_desc, &n, &x, 1, &y) == XDNN_OK);
    expect(__LINE__, &y, 2, (int64_t[]){2, 3}, (double[]){5, 3, 1, 11, 9, 7});
    optest_ref_free(&y);

    optest_set_int(&n, &op_slice_desc, "axis", -2);
    optest_set_int(&n, &op_slice_desc, "start", -1);
    optest_set_int(&n, &op_slice_desc, "end", 100); /* rows [-1:100]: clamps */
    optest_set_int(&n, &op_slice_desc, "step", 1);
    CHECK(run1(&op_slice_desc, &n, &x, 1, &y) == XDNN_OK);
    expect(__LINE__, &y, 2, (int64_t[]){1, 6}, (double[]){6, 7, 8, 9, 10, 11});
    optest_ref_free(&y);

    tinfo t = optest_tinfo(XDNN_F32, 2, (int64_t[]){2, 6});
    optest_set_int(&n, &op_slice_desc, "axis", 1);
    optest_set_int(&n, &op_slice_desc, "start", 4);
    optest_set_int(&n, &op_slice_desc, "end", -3);
    CHECK_STR(optest_infer_error(&op_slice_desc, &n, 1, (const tinfo *[]){&t}, 1),
              "slice: slice start=4, end=-3, step=1 of axis 1 (size 6) of x [2, 6] is empty");
    optest_set_int(&n, &op_slice_desc, "axis", 2);
    CHECK_STR(optest_infer_error(&op_slice_desc, &n, 1, (const tinfo *[]){&t}, 1),
              "slice: attribute 'axis' must be in [-2, 1] for x [2, 6], got 2");
    optest_set_int(&n, &op_slice_desc, "axis", 0);
    optest_set_int(&n, &op_slice_desc, "step", 0);
    CHECK_STR(optest_infer_error(&op_slice_desc, &n, 1, (const tinfo *[]){&t}, 1),
              "slice: attribute 'step' must not be 0");
    optest_ref_free(&x);
}

static void test_concat(arena *a)
{
    xnode n;
    optest_node(a, &n, &op_concat_desc);
    ref_tensor x0 = arange(2, (int64_t[]){2, 2}, 0), x1 = arange(2, (int64_t[]){2, 1}, 10);
    ref_tensor x2 = arange(2, (int64_t[]){1, 2}, 20), y;
    const ref_tensor *cols[] = {&x0, &x1, &x0};
    optest_set_int(&n, &op_concat_desc, "axis", -1);
    CHECK(optest_run(&op_concat_desc, &n, 3, cols, 1, &y, NULL) == XDNN_OK);
    expect(__LINE__, &y, 2, (int64_t[]){2, 5}, (double[]){0, 1, 10, 0, 1, 2, 3, 11, 2, 3});
    optest_ref_free(&y);

    const ref_tensor *rows[] = {&x2, &x0};
    optest_set_int(&n, &op_concat_desc, "axis", 0);
    CHECK(optest_run(&op_concat_desc, &n, 2, rows, 1, &y, NULL) == XDNN_OK);
    expect(__LINE__, &y, 2, (int64_t[]){3, 2}, (double[]){20, 21, 0, 1, 2, 3});
    optest_ref_free(&y);

    /* the middle axis of rank 3 */
    ref_tensor a0 = arange(3, (int64_t[]){2, 1, 2}, 0), a1 = arange(3, (int64_t[]){2, 2, 2}, 100);
    const ref_tensor *mid[] = {&a0, &a1};
    optest_set_int(&n, &op_concat_desc, "axis", 1);
    CHECK(optest_run(&op_concat_desc, &n, 2, mid, 1, &y, NULL) == XDNN_OK);
    expect(__LINE__, &y, 3, (int64_t[]){2, 3, 2}, (double[]){0, 1, 100, 101, 102, 103, 2, 3, 104, 105, 106, 107});
    optest_ref_free(&y);

    tinfo t0 = optest_tinfo(XDNN_F32, 3, (int64_t[]){2, 3, 3}), t1 = optest_tinfo(XDNN_F32, 3, (int64_t[]){2, 5, 4});
    tinfo t2 = optest_tinfo(XDNN_F32, 2, (int64_t[]){2, 3});
    CHECK_STR(optest_infer_error(&op_concat_desc, &n, 2, (const tinfo *[]){&t0, &t1}, 1),
              "concat: input x1 [2, 5, 4] differs from x0 [2, 3, 3] in dim 2 (only axis 1 may differ)");
    CHECK_STR(optest_infer_error(&op_concat_desc, &n, 2, (const tinfo *[]){&t0, &t2}, 1),
              "concat: input x1 [2, 3] must have the rank of x0 [2, 3, 3]");
    optest_ref_free(&x0);
    optest_ref_free(&x1);
    optest_ref_free(&x2);
    optest_ref_free(&a0);
    optest_ref_free(&a1);
}

static void test_split(arena *a)
{
    xnode n;
    optest_node(a, &n, &op_split_desc);
    ref_tensor x = arange(2, (int64_t[]){2, 6}, 0), y[3];
    optest_set_int(&n, &op_split_desc, "axis", 1);
    optest_set_int(&n, &op_split_desc, "parts", 3);
    CHECK(run1(&op_split_desc, &n, &x, 3, y) == XDNN_OK);
    expect(__LINE__, &y[0], 2, (int64_t[]){2, 2}, (double[]){0, 1, 6, 7});
    expect(__LINE__, &y[1], 2, (int64_t[]){2, 2}, (double[]){2, 3, 8, 9});
    expect(__LINE__, &y[2], 2, (int64_t[]){2, 2}, (double[]){4, 5, 10, 11});
    for (int i = 0; i < 3; i++)
        optest_ref_free(&y[i]);

    /* parts defaults to the number of targets */
    optest_unset(&n, &op_split_desc, "parts");
    optest_set_int(&n, &op_split_desc, "axis", 0);
    CHECK(run1(&op_split_desc, &n, &x, 2, y) == XDNN_OK);
    expect(__LINE__, &y[1], 2, (int64_t[]){1, 6}, (double[]){6, 7, 8, 9, 10, 11});
    for (int i = 0; i < 2; i++)
        optest_ref_free(&y[i]);

    optest_set_int(&n, &op_split_desc, "axis", -1);
    optest_set_ints(&n, &op_split_desc, "sizes", 3, (int64_t[]){1, 3, 2});
    CHECK(run1(&op_split_desc, &n, &x, 3, y) == XDNN_OK);
    expect(__LINE__, &y[0], 2, (int64_t[]){2, 1}, (double[]){0, 6});
    expect(__LINE__, &y[1], 2, (int64_t[]){2, 3}, (double[]){1, 2, 3, 7, 8, 9});
    expect(__LINE__, &y[2], 2, (int64_t[]){2, 2}, (double[]){4, 5, 10, 11});
    for (int i = 0; i < 3; i++)
        optest_ref_free(&y[i]);

    tinfo t = optest_tinfo(XDNN_F32, 2, (int64_t[]){2, 6});
    CHECK_STR(optest_infer_error(&op_split_desc, &n, 1, (const tinfo *[]){&t}, 2),
              "split: attribute 'sizes' [1, 3, 2] must have one size >= 1 per target (2) and sum to the split dim 6");
    optest_unset(&n, &op_split_desc, "sizes");
    optest_set_int(&n, &op_split_desc, "parts", 3);
    CHECK_STR(optest_infer_error(&op_split_desc, &n, 1, (const tinfo *[]){&t}, 2),
              "split: attribute 'parts' is 3 but 2 targets are written");
    optest_set_int(&n, &op_split_desc, "parts", 4);
    CHECK_STR(optest_infer_error(&op_split_desc, &n, 1, (const tinfo *[]){&t}, 4),
              "split: the split dim 6 is not divisible into 4 equal parts");
    optest_ref_free(&x);
}

static void test_pad(arena *a)
{
    xnode n;
    optest_node(a, &n, &op_pad_desc);
    ref_tensor x = arange(2, (int64_t[]){2, 3}, 1), y; /* [[1, 2, 3], [4, 5, 6]] */
    /* asymmetric: dim 0 [1, 0], dim 1 [0, 2], constant 9 */
    optest_set_pads(&n, &op_pad_desc, "pads", 2, (int64_t[]){1, 0, 0, 2});
    optest_set_float(&n, &op_pad_desc, "value", 9);
    CHECK(run1(&op_pad_desc, &n, &x, 1, &y) == XDNN_OK);
    expect(__LINE__, &y, 2, (int64_t[]){3, 5}, (double[]){9, 9, 9, 9, 9, 1, 2, 3, 9, 9, 4, 5, 6, 9, 9});
    optest_ref_free(&y);

    /* the flat form [b0, a0, b1, a1] is the same */
    optest_set_ints(&n, &op_pad_desc, "pads", 4, (int64_t[]){1, 0, 0, 2});
    CHECK(run1(&op_pad_desc, &n, &x, 1, &y) == XDNN_OK);
    expect(__LINE__, &y, 2, (int64_t[]){3, 5}, (double[]){9, 9, 9, 9, 9, 1, 2, 3, 9, 9, 4, 5, 6, 9, 9});
    optest_ref_free(&y);

    /* dim 1 only, [2, 1], in each border mode */
    optest_set_pads(&n, &op_pad_desc, "pads", 2, (int64_t[]){0, 0, 2, 1});
    optest_set_str(&n, &op_pad_desc, "mode", "reflect");
    CHECK(run1(&op_pad_desc, &n, &x, 1, &y) == XDNN_OK);
    expect(__LINE__, &y, 2, (int64_t[]){2, 6}, (double[]){3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5});
    optest_ref_free(&y);
    optest_set_str(&n, &op_pad_desc, "mode", "replicate");
    CHECK(run1(&op_pad_desc, &n, &x, 1, &y) == XDNN_OK);
    expect(__LINE__, &y, 2, (int64_t[]){2, 6}, (double[]){1, 1, 1, 2, 3, 3, 4, 4, 4, 5, 6, 6});
    optest_ref_free(&y);
    optest_set_str(&n, &op_pad_desc, "mode", "circular");
    CHECK(run1(&op_pad_desc, &n, &x, 1, &y) == XDNN_OK);
    expect(__LINE__, &y, 2, (int64_t[]){2, 6}, (double[]){2, 3, 1, 2, 3, 1, 5, 6, 4, 5, 6, 4});
    optest_ref_free(&y);

    /* one int pads every side */
    optest_set_int(&n, &op_pad_desc, "pads", 1);
    optest_set_str(&n, &op_pad_desc, "mode", "constant");
    optest_set_float(&n, &op_pad_desc, "value", 0);
    CHECK(run1(&op_pad_desc, &n, &x, 1, &y) == XDNN_OK);
    expect(__LINE__, &y, 2, (int64_t[]){4, 5},
           (double[]){0, 0, 0, 0, 0, 0, 1, 2, 3, 0, 0, 4, 5, 6, 0, 0, 0, 0, 0, 0});
    optest_ref_free(&y);

    tinfo t = optest_tinfo(XDNN_F32, 2, (int64_t[]){2, 3});
    optest_set_str(&n, &op_pad_desc, "mode", "reflect");
    optest_set_pads(&n, &op_pad_desc, "pads", 2, (int64_t[]){0, 0, 3, 0});
    CHECK_STR(optest_infer_error(&op_pad_desc, &n, 1, (const tinfo *[]){&t}, 1),
              "pad: mode \"reflect\" allows pads of at most 2 on dim 1 (size 3) of x [2, 3], got [3, 0]");
    optest_set_ints(&n, &op_pad_desc, "pads", 3, (int64_t[]){1, 2, 3});
    CHECK_STR(optest_infer_error(&op_pad_desc, &n, 1, (const tinfo *[]){&t}, 1),
              "pad: attribute 'pads' must be an int, 2 ints, 4 ints [before0, after0, ...] or 2 [before, after] "
              "pairs for x [2, 3], got [1, 2, 3]");
    optest_set_pads(&n, &op_pad_desc, "pads", 2, (int64_t[]){0, 0, -1, 0});
    CHECK_STR(optest_infer_error(&op_pad_desc, &n, 1, (const tinfo *[]){&t}, 1),
              "pad: pads of dim 1 must be >= 0, got [-1, 0]");
    optest_ref_free(&x);
}

int main(void)
{
    arena *a = arena_create();
    test_reshape(a);
    test_permute(a);
    test_broadcast(a);
    test_slice(a);
    test_concat(a);
    test_split(a);
    test_pad(a);
    arena_destroy(a);
    return test_summary("test_op_tensor");
}
