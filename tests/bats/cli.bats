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

@test "every subcommand has --help, the same as xdnn help CMD, and a line in xdnn(1)'s synopsis" {
    cmds=$(xdnn --help | sed -n '/^commands:/,/^$/s/^  \([a-z]*\) .*/\1/p')
    [ "$(wc -w <<< "$cmds")" -ge 11 ]
    synopsis=$(sed -n '/^\.SH SYNOPSIS/,/^\.SH DESCRIPTION/p' "$ROOT/man/xdnn.1")
    for c in $cmds; do
        run xdnn "$c" --help
        [ "$status" -eq 0 ]
        [[ "$output" == *"usage: xdnn $c"* ]] || { echo "$c --help: $output"; false; }
        [ "$(xdnn help "$c")" = "$output" ] || { echo "xdnn help $c differs from xdnn $c --help"; false; }
        grep -q "^\.B xdnn $c\$" <<< "$synopsis" || { echo "xdnn(1) SYNOPSIS lacks '$c'"; false; }
    done
    run xdnn help frobnicate
    [ "$status" -eq 1 ]
    [[ "$output" == "xdnn help: unknown command 'frobnicate'"* ]]
}

@test "xdnn(1)'s SEE ALSO names every other man page" {
    see_also=$(sed -n '/^\.SH SEE ALSO/,$p' "$ROOT/man/xdnn.1")
    for page in "$ROOT"/man/*.[1-9]; do
        name=$(basename "$page"); sec=${name##*.}; name=${name%.*}
        [ "$name.$sec" = xdnn.1 ] && continue
        grep -q "^\.BR ${name//-/\\\\-} ($sec)" <<< "$see_also" ||
            grep -q "^\.BR $name ($sec)" <<< "$see_also" || { echo "SEE ALSO lacks $name($sec)"; false; }
    done
}

@test "unknown command and unknown option are usage errors" {
    run xdnn frobnicate
    [ "$status" -eq 1 ]
    [[ "$output" == *"unknown command 'frobnicate'"* ]]
    run xdnn check --frob graphs/x.dnn
    [ "$status" -eq 1 ]
    [[ "$output" == *"unknown option '--frob'"* ]]
    # one message per error, from xdnn (getopt's own "unrecognized option" is off), for every command
    for c in check run convert dot plan bench compare merge; do
        run xdnn "$c" --frob
        [ "$status" -eq 1 ]
        [ "${lines[0]}" = "xdnn $c: unknown option '--frob'" ] || { echo "$c: $output"; false; }
        [ "${#lines[@]}" -eq 2 ] || { echo "$c: $output"; false; }
    done
    run xdnn run "$ROOT/graphs/mlp_gelu.dnn" --iters
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "xdnn run: option '--iters' needs a value" ]
}

@test "GPU-only options on a CPU run and sweeps given to run are usage errors, never ignored" {
    G="$ROOT/graphs/mlp_gelu.dnn"
    for opt in "--iters 3" "--warmup 1" "-v" "--cuda-graph" "--check" "--engine h=matmul_cublaslt"; do
        run xdnn run "$G" --device cpu --set T=2 --set D=4 $opt
        [ "$status" -eq 1 ] || { echo "$opt: exit $status"; false; }
        [[ "${lines[0]}" == "xdnn run: "*"--device gpu"* ]] || { echo "$opt: $output"; false; }
    done
    for v in 32,64 32:256; do
        run xdnn run "$G" --device cpu --set T=$v --set D=4
        [ "$status" -eq 1 ]
        [[ "$output" == *"--set T=$v: a list or range of values is a sweep, which 'xdnn bench' runs"* ]]
    done
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

# Output that cannot be written is an error (exit 5 with a message), never a
# silent success: /dev/full fails every write with ENOSPC, a closed stdout
# with EBADF.  cli/main.c checks stdout once after every command.
xdnn_stdout_to() {
    local out=$1
    shift
    if [ "$out" = closed ]; then xdnn "$@" >&-; else xdnn "$@" > "$out"; fi
}

full_stdout_fails() {
    run xdnn_stdout_to /dev/full "$@"
    [ "$status" -eq 5 ] || { echo "$*: exit $status"; echo "$output"; return 1; }
    [[ "$output" == *"write to stdout: No space left on device"* || "$output" == *"error writing to stdout"* ]] ||
        { echo "$*: $output"; return 1; }
}

@test "a full stdout fails every command with exit 5 and a message" {
    cd "$ROOT"
    export XDNN_CACHE_DIR="$BATS_TEST_TMPDIR/cache"
    full_stdout_fails run --device cpu --format json graphs/classifier_head.dnn
    full_stdout_fails run --device cpu graphs/classifier_head.dnn
    full_stdout_fails check graphs/mlp_gelu.dnn
    full_stdout_fails dot graphs/mlp_gelu.dnn
    full_stdout_fails ops
    full_stdout_fails ops conv
    full_stdout_fails engines
    full_stdout_fails bench graphs/mlp_gelu.dnn --device cpu --set T=8 --iters 1 --format jsonl
    full_stdout_fails cache list
    full_stdout_fails convert graphs/mlp_gelu.dnn --to json -o -
    full_stdout_fails --help
    full_stdout_fails --version
    full_stdout_fails check --help
}

@test "a write error in the middle of a large output is not lost; a closed stdout fails too" {
    cd "$ROOT"
    # --print-full writes far more than one stdio buffer: the first failed
    # write happens long before the final flush.
    full_stdout_fails run --device cpu --print-full graphs/resnet_basic_block.dnn --set N=1
    run xdnn_stdout_to closed check graphs/mlp_gelu.dnn
    [ "$status" -eq 5 ]
    [[ "$output" == *"error writing to stdout: Bad file descriptor"* ]]
    # a failing stdout does not hide the command's own error code
    run xdnn_stdout_to /dev/full check tests/errors/12-unknown-tensor.dnn
    [ "$status" -eq 3 ]
}

@test "check and ops speak JSON: the same tensors, nodes and ops as the text, and check's memory figures" {
    G="$ROOT/graphs/mlp_gelu.dnn"
    run xdnn check "$G" --set T=2 --set D=4 --format json
    [ "$status" -eq 0 ]
    text=$(xdnn check "$G" --set T=2 --set D=4)
    python3 - "$output" "$text" <<'P'
import json, sys
d, text = json.loads(sys.argv[1]), sys.argv[2]
assert d["graph"] == "mlp_gelu" and d["params"]["T"] == "2", d["params"]
names = [l.split()[1] for l in text.split("nodes:")[0].splitlines()[3:]]
assert [t["name"] for t in d["tensors"]] == names, ([t["name"] for t in d["tensors"]], names)
x = next(t for t in d["tensors"] if t["name"] == "x")
assert x["kind"] == "input" and x["shape"] == [2, 4] and x["dtype"] == "f16", x
assert len(d["nodes"]) == text.split("nodes:")[1].count(" = "), len(d["nodes"])
mm = d["nodes"][0]
assert mm["op"] == "matmul" and mm["inputs"] == {"a": "x", "b": "w1"} and mm["attrs"]["trans_b"] == "true", mm
m = d["memory"]
assert m["reference_tensor_bytes"] > 0 and m["reference_scratch_bytes"] > 0, m
P
    run xdnn check "$G" --format yaml
    [ "$status" -eq 1 ]
    run xdnn ops --format json
    [ "$status" -eq 0 ]
    ntext=$(xdnn ops | grep -c '^[a-z]')
    python3 -c 'import json,sys; d = json.loads(sys.argv[1]); assert len(d) == int(sys.argv[2]), len(d); c = next(o for o in d if o["name"] == "conv"); a = {x["name"]: x for x in c["attrs"]}; assert a["stride"]["type"] == "ints", a["stride"]; assert c["ports"][0] == {"name": "x", "required": True, "variadic": False}, c["ports"][0]' "$output" "$ntext"
    run xdnn ops --format json softmax
    [ "$status" -eq 0 ]
    python3 -c 'import json,sys; assert all("softmax" in o["name"] for o in json.loads(sys.argv[1]))' "$output"
    run xdnn ops --format json frob
    [ "$status" -eq 1 ]
}

@test "engines --format json lists the same engines as the text, with their op classes" {
    run xdnn engines --format json
    [ "$status" -eq 0 ]
    text=$(xdnn engines)
    python3 -c '
import json, sys
d = json.loads(sys.argv[1])
if sys.argv[2].startswith("no GPU engines"):
    assert d == [], d
else:
    assert [e["name"] for e in d] == [l.split()[0] for l in sys.argv[2].splitlines()], d
    assert all(e["classes"] and e["summary"] for e in d), d' "$output" "$text"
    run xdnn engines --format yaml
    [ "$status" -eq 1 ]
}
