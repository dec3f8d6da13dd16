#!/usr/bin/env bats
# The command line itself: help, version, usage errors and exit codes.
load helpers

@test "no arguments is a usage error" {
    run xdnn
    [ "$status" -eq 1 ]
    [[ "$output" == *"usage: xdnn <command>"* ]]
}

@test "--help and --version" {
    run xdnn --help
    [ "$status" -eq 0 ]
    [[ "$output" == *"commands:"* ]]
    run xdnn --version
    [ "$status" -eq 0 ]
    [[ "$output" =~ ^xdnn\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
}

@test "every subcommand has --help" {
    for c in check run convert dot ops engines; do
        run xdnn "$c" --help
        [ "$status" -eq 0 ]
        [[ "$output" == *"usage: xdnn $c"* ]]
    done
}

@test "unknown command and unknown option are usage errors" {
    run xdnn frobnicate
    [ "$status" -eq 1 ]
    [[ "$output" == *"unknown command 'frobnicate'"* ]]
    run xdnn check --frob graphs/x.dnn
    [ "$status" -eq 1 ]
    [[ "$output" == *"unknown option '--frob'"* ]]
}

@test "missing file is an I/O error (5)" {
    run xdnn check "$BATS_TEST_TMPDIR/nope.dnn"
    [ "$status" -eq 5 ]
    [[ "$output" == *"nope.dnn: error: cannot open"* ]]
}

@test "unknown --set param lists the known ones" {
    run xdnn check "$ROOT/graphs/conv_bias_relu.dnn" --set Q=3
    [ "$status" -eq 1 ]
    [[ "$output" == *"unknown param 'Q'"*"known: N, C, K, H, W"* ]]
}

@test "a derived param cannot be set" {
    run xdnn check "$ROOT/graphs/mlp_gelu.dnn" --set F=8
    [ "$status" -eq 1 ]
    [[ "$output" == *"'F' is derived (F = 4 * D)"* ]]
}

@test "a shape error names the --set values that caused it" {
    run xdnn check "$ROOT/graphs/transformer_block.dnn" --set D=130
    [ "$status" -eq 3 ]
    [[ "$output" == *"params set on the command line: D=130"* ]]
}

@test "GPU-only options on the CPU are errors, never ignored" {
    run xdnn run "$ROOT/graphs/conv_bias_relu.dnn" --device cpu --check
    [ "$status" -eq 1 ]
    [[ "$output" == *"--check compares the GPU"* ]]
    run xdnn run "$ROOT/graphs/conv_bias_relu.dnn" --device cpu --engine conv=foo
    [ "$status" -eq 1 ]
}

@test "bad option values are usage errors" {
    run xdnn run "$ROOT/graphs/conv_bias_relu.dnn" --device tpu
    [ "$status" -eq 1 ]
    run xdnn run "$ROOT/graphs/conv_bias_relu.dnn" --seed -4
    [ "$status" -eq 1 ]
    run xdnn run "$ROOT/graphs/conv_bias_relu.dnn" --format yaml
    [ "$status" -eq 1 ]
    run xdnn convert "$ROOT/graphs/conv_bias_relu.dnn" -o "$BATS_TEST_TMPDIR/out.txt"
    [ "$status" -eq 1 ]
    [[ "$output" == *"--to json|dnn"* ]]
}
