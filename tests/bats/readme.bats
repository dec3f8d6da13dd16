#!/usr/bin/env bats
# Every ```sh block of the README's tour runs and exits 0 (docs are executed).
load helpers

@test "README tour commands run" {
    cd "$ROOT"
    # The regression example times a suite twice; on a shared CI machine the
    # noise is large, so only correctness may fail this test.
    export THRESHOLD=1000 REGRESS_DIR="$BATS_TEST_TMPDIR/regress" XDNN OMP_NUM_THREADS=1
    cmds=$(awk '/^## A short tour/{on=1} /^## Layout/{on=0} on && /^```sh$/{inb=1; next} inb && /^```$/{inb=0} inb' README.md)
    [ -n "$cmds" ]
    while IFS= read -r line; do
        line=${line%%#*}
        line=${line//.\/build\/xdnn/xdnn}
        line=${line//\/tmp\//$BATS_TEST_TMPDIR/} # the tour's /tmp files go to this test's own folder
        [ -n "${line// }" ] || continue
        echo "+ $line"
        eval "$line"
    done <<< "$cmds"
}

@test "README error example is real" {
    cd "$ROOT"
    run xdnn check graphs/conv_bias_relu.dnn --set C=0
    [ "$status" -eq 3 ]
    expected=$(grep -A1 '^\$ ./build/xdnn check graphs/conv_bias_relu.dnn --set C=0' README.md | tail -1)
    [[ "$output" == *"$expected"* ]]
}
