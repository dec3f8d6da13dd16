#!/usr/bin/env bats
# The index ops (gather, gather_bwd, one_hot, argmax, argmin, cross_entropy,
# cross_entropy_bwd) and batchnorm_infer_var from the command line: dnn(5)'s
# example runs and checks, errors carry file:line:col and name op, attribute
# and value, and an out-of-range index is a clear run-time error.
load helpers

@test "the index-ops example of man/dnn.5 runs and its checks pass" {
    man_example index-example "$BATS_TEST_TMPDIR/ex.dnn"
    grep -q 'cross_entropy(logits, labels' "$BATS_TEST_TMPDIR/ex.dnn"
    run xdnn run "$BATS_TEST_TMPDIR/ex.dnn" --device cpu
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$(grep -c '^check .*: ok' <<< "$output")" -eq 3 ]
}

ix_graph() { # $1: body lines
    printf 'dnn 1;\ngraph g(seed=1) {\n  weight table: f32[5, 3] = arange();\n  weight ids: i32[4] = values([4, 0, 2, 0]);\n%s\n}\n' "$1" > "$BATS_TEST_TMPDIR/g.dnn"
}

@test "a bad attribute names the op, the attribute and the value at file:line:col" {
    ix_graph '  y = gather(table, ids, axis=2);
  output y;'
    run xdnn check "$BATS_TEST_TMPDIR/g.dnn"
    [ "$status" -eq 3 ]
    [[ "$output" == *"g.dnn:5:7: error: gather: attribute 'axis' (2) is out of range for x [5, 3]"* ]]
    ix_graph '  y = one_hot(ids, classes=0);
  output y;'
    run xdnn check "$BATS_TEST_TMPDIR/g.dnn"
    [ "$status" -eq 3 ]
    [[ "$output" == *"g.dnn:5:7: error: one_hot: attribute 'classes' must be >= 1, got 0"* ]]
    ix_graph '  y = cross_entropy(table, ids, reduction="avg");
  output y;'
    run xdnn check "$BATS_TEST_TMPDIR/g.dnn"
    [ "$status" -eq 3 ]
    [[ "$output" == *"g.dnn:5:43: error: cross_entropy: attribute 'reduction' must be one of none|mean|sum, got \"avg\""* ]]
    ix_graph '  y = gather(table, table);
  output y;'
    run xdnn check "$BATS_TEST_TMPDIR/g.dnn"
    [ "$status" -eq 3 ]
    [[ "$output" == *"gather: index must be an integer tensor (i8, i32 or i64), got f32"* ]]
}

@test "an index out of range is a run-time error naming it (exit 3), not garbage" {
    ix_graph '  weight bad: i64[2] = values([1, 5]);
  y = gather(table, bad);
  output y;'
    run xdnn run "$BATS_TEST_TMPDIR/g.dnn" --device cpu
    echo "$output"
    [ "$status" -eq 3 ]
    [[ "$output" == *"gather: index[1] = 5 is out of range [0, 5) (axis 0 of x [5, 3])"* ]]
    ix_graph '  weight t: i32[5] = values([0, 1, 2, -100, 3]);
  y = cross_entropy(table, t);
  output y;'
    run xdnn run "$BATS_TEST_TMPDIR/g.dnn" --device cpu
    [ "$status" -eq 3 ]
    [[ "$output" == *"cross_entropy: index[4] = 3 is out of range [0, 3) (classes = 3, ignore_index = -100)"* ]]
}

@test "gather_bwd sums repeated indices; one_hot, argmin and batchnorm_infer_var give known values" {
    ix_graph '  weight dy: f32[4, 3] = ones();
  dx = gather_bwd(dy, ids, x_dims=[5, 3]);
  check dx, values([2, 2, 2, 0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1]);
  oh = one_hot(ids, classes=5, dtype=i32);
  check oh, values([0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0]);
  am = argmin(table, axis=0);
  check am, values([0, 0, 0]);
  weight x: f32[1, 2, 1, 2] = values([1.0, 3.0, -2.0, 0.5]);
  weight sc: f32[2] = values([0.5, 2.0]);
  weight b: f32[2] = values([1.0, -1.0]);
  weight m: f32[2] = values([2.0, -1.0]);
  weight v: f32[2] = values([4.0, 0.25]);
  y = batchnorm_infer_var(x, sc, b, m, v);
  # Python: (x - m) / math.sqrt(v + 1e-5) * sc + b
  check y, values([0.7500003124994141, 1.2499996875005859, -4.99992000239992, 4.99988000359988]);
  output dx, oh, am, y;'
    run xdnn run "$BATS_TEST_TMPDIR/g.dnn" --device cpu
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$(grep -c '^check .*: ok' <<< "$output")" -eq 4 ]
}
