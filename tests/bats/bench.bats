#!/usr/bin/env bats
# `xdnn bench`, `xdnn compare` and `xdnn cache` on the CPU reference: sweep
# expansion, ranges, dtypes, problems, batch files, formats, exit codes.
# Tiny sizes and --iters 1 keep it fast; one OpenMP thread keeps timings calm.
load helpers

G="$ROOT/graphs/mlp_gelu.dnn"
export OMP_NUM_THREADS=1

setup() { export XDNN_CACHE_DIR="$BATS_TEST_TMPDIR/cache"; }

# keys of the jsonl lines of $output (`run` mixes stderr in: notes, warnings, the summary)
keys() { python3 -c 'import json,sys; print(" ".join(json.loads(l)["key"] for l in sys.stdin if l.startswith("{")))'; }

@test "lists and ranges multiply in file order, the last param fastest; jsonl has one case per line" {
    run xdnn bench "$G" --device cpu --iters 1 --set T=2,4 --set D=4:8:4 --format jsonl
    [ "$status" -eq 0 ]
    [ "$(keys <<< "$output")" = "mlp_gelu[T=2,D=4]:f16 mlp_gelu[T=2,D=8]:f16 mlp_gelu[T=4,D=4]:f16 mlp_gelu[T=4,D=8]:f16" ]
    grep '^{' <<< "$output" | python3 -c '
import json,sys
for l in sys.stdin:
    r = json.loads(l)
    assert r["status"] == "passed" and r["device"] == "cpu", r
    assert r["min_ms"] <= r["median_ms"] <= r["max_ms"] and r["iters"] == 1, r
    assert r["min_ms"] <= r["p90_ms"] <= r["p95_ms"] <= r["p99_ms"] <= r["max_ms"] and r["stddev_ms"] == 0, r
    assert r["min_ms"] <= r["mean_ms"] <= r["max_ms"], r
    assert len(r["engines"]) == 18 and all(e["engine"] == "cpu_reference" for e in r["engines"]), r
    assert r["flops"] > 0 and r["repro"].startswith("xdnn run "), r' 
}

@test "a param's own sweep list is the default; --set replaces it" {
    out=$(xdnn bench "$ROOT/graphs/sdpa_fwd_bwd.dnn" --device cpu --iters 1 --set S=2 --set D=2 --set HQ=2 --set HK=1 --format jsonl 2>/dev/null | keys)
    [ "$out" = "sdpa_fwd_bwd[B=1,HQ=2,HK=1,S=2,D=2]:f16 sdpa_fwd_bwd[B=4,HQ=2,HK=1,S=2,D=2]:f16" ]
}

@test "table: header, a row and a repro line per case, summary last; the repro line reproduces the run" {
    xdnn bench "$G" --device cpu --iters 2 --set T=2 --set D=4 > "$BATS_TEST_TMPDIR/out" 2>/dev/null
    mapfile -t lines < "$BATS_TEST_TMPDIR/out"
    [[ "${lines[0]}" == case*engine*median_ms*min_ms*max_ms*p90_ms*GFLOP/s*GB/s*status ]]
    [[ "${lines[1]}" == "mlp_gelu[T=2,D=4]:f16 "*"cpu_reference x18"*passed ]]
    [ "${lines[2]}" = "    repro: xdnn run $G --set T=2 --set D=4 --device cpu" ]
    [ "${lines[-1]}" = "1 passed, 0 failed, 0 skipped" ]
    xdnn run "$G" --set T=2 --set D=4 --device cpu >/dev/null
}

@test "csv: a header and quoted fields; -o writes the rows and prints the summary" {
    run xdnn bench "$G" --device cpu --iters 1 --set T=2 --set D=4 --format csv -o "$BATS_TEST_TMPDIR/r.csv"
    [ "$status" -eq 0 ]
    [ "$output" = "1 passed, 0 failed, 0 skipped" ]
    python3 -c '
import csv,sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 1 and rows[0]["key"] == "mlp_gelu[T=2,D=4]:f16" and rows[0]["status"] == "passed", rows
assert float(rows[0]["median_ms"]) > 0 and rows[0]["engines"] == "cpu_reference x18", rows' "$BATS_TEST_TMPDIR/r.csv"
}

@test "csv and jsonl carry p95/p99, the mean and the standard deviation beside min/median/max/p90 (benchdnn's statistics)" {
    run xdnn bench "$G" --device cpu --iters 7 --set T=2 --set D=4 --format csv -o "$BATS_TEST_TMPDIR/r.csv"
    [ "$status" -eq 0 ]
    python3 -c '
import csv,sys
r = list(csv.DictReader(open(sys.argv[1])))[0]
v = {k: float(r[k]) for k in ("min_ms","median_ms","p90_ms","p95_ms","p99_ms","max_ms","mean_ms","stddev_ms")}
assert v["min_ms"] <= v["median_ms"] <= v["p90_ms"] <= v["p95_ms"] <= v["p99_ms"] == v["max_ms"], v  # 7 runs: p99 is the slowest
assert v["min_ms"] <= v["mean_ms"] <= v["max_ms"] and 0 <= v["stddev_ms"] <= v["max_ms"] - v["min_ms"], v' "$BATS_TEST_TMPDIR/r.csv"
}

@test "--dtype rewrites the io dtype: inputs and outputs follow, f32 stats stay; error without an io dtype" {
    run xdnn bench "$G" --device cpu --dtype bf16 --set T=2 --set D=4 --dump-graph
    [ "$status" -eq 0 ]
    [[ "$output" == *"io=bf16"* ]]
    [[ "$output" == *"input x: bf16[T, D]"* ]]
    [[ "$output" != *" f16["* ]]
    out=$(xdnn bench "$G" --device cpu --iters 1 --set T=2 --set D=4 --dtype f32,bf16 --format jsonl 2>/dev/null | keys)
    [ "$out" = "mlp_gelu[T=2,D=4]:f32 mlp_gelu[T=2,D=4]:bf16" ]
    printf 'dnn 1;\ngraph g {\n  input x: f32[2];\n  y = relu(x);\n  output y;\n}\n' > "$BATS_TEST_TMPDIR/noio.dnn"
    run xdnn bench "$BATS_TEST_TMPDIR/noio.dnn" --device cpu --dtype f16
    [ "$status" -eq 1 ]
    [[ "$output" == *"graph 'g' declares no io dtype"* ]]
    run xdnn bench "$G" --device cpu --dtype f17
    [ "$status" -eq 1 ]
    [[ "$output" == *"unknown dtype 'f17'"* ]]
}

@test "problem shorthands: every kind runs, --dump-graph prints the generated graph" {
    run xdnn bench conv dgrad:n1c2h4k2r3p1 --dump-graph --layout nhwc
    [ "$status" -eq 0 ]
    [[ "$output" == *"dx = conv_dgrad(dy, w, x_dims=[1, 2, 4, 4], stride=1, pad=1, dilation=1, groups=1);"* ]]
    [[ "$output" == *"input  dy: f32[1, 2, 4, 4] @nhwc;"* ]]
    cat > "$BATS_TEST_TMPDIR/problems.txt" <<'B'
conv n1c2h4k2r3p1
conv wgrad:n1c2h5k2r3u2   # stride 2
matmul b2m3n4k5
sdpa b1h2s3d4c1
sdpa bwd:b1h1s3d4
layernorm n2c4
softmax n2c4
pool max:n1c2h4r2
pool avg:n1c2h4r2p1 --layout nhwc
B
    run xdnn bench --batch "$BATS_TEST_TMPDIR/problems.txt" --device cpu --iters 1 --format csv
    [ "$status" -eq 0 ]
    [[ "$output" == *"conv wgrad:n1c2h5k2r3u2:f32,passed"* ]]
    [[ "$output" == *"pool avg:n1c2h4r2p1@nhwc:f32,passed"* ]]
    [[ "$output" == *"9 passed, 0 failed, 0 skipped" ]]
    run xdnn bench conv n1c2h4r3
    [ "$status" -eq 1 ]
    [[ "$output" == *"conv needs key 'k'"* ]]
    run xdnn bench matmul m2n2k2 --layout nhwc
    [ "$status" -eq 1 ]
    [[ "$output" == *"--layout applies to conv, pool and sdpa problems"* ]]
}

@test "benchdnn descriptors: conv mb..ic..ih.. and matmul BxMxK:BxKxN give xdnn's own problems" {
    same() { diff <(xdnn bench $1 "$2" --dump-graph | grep -v '^# generated') <(xdnn bench $1 "$3" --dump-graph | grep -v '^# generated'); }
    same conv mb32ic64ih56oc64kh3ph1 n32c64h56k64r3p1
    # benchdnn's dilation counts the gaps (dh1 = every other pixel = xdnn's l2); mb defaults to 2; n"name" is a label
    same conv 'wgrad:g2ic4ih8iw9oc4kh3kw3sh2sw2dh1dw1_n"resnet:c1"' wgrad:n2c4h8w9k4r3s3u2l2g2
    same conv mb1ic4ih8oc4oh6ow6kh3 n1c4h8k4r3
    same matmul 2x64x128:2x128x256 b2m64n256k128
    same matmul 64x128:128x256 m64n256k128
    run xdnn bench conv mb1ic4ih8oc4kh3 --device cpu --iters 1 --format csv
    [ "$status" -eq 0 ]
    [[ "$output" == *"conv mb1ic4ih8oc4kh3:f32,passed"* ]]
    # what xdnn cannot express is refused, naming it
    run xdnn bench conv mb1ic4id8ih8oc4kh3
    [ "$status" -eq 1 ]
    [[ "$output" == *"3-D convolutions are not supported: benchdnn key 'id'"* ]]
    run xdnn bench conv mb1ic4ih8oc4kh3sh1sw2
    [ "$status" -eq 1 ]
    [[ "$output" == *"xdnn's conv problems take one stride (sh = sw) for both axes, got 1 and 2"* ]]
    run xdnn bench conv mb1ic4ih8oc4oh5kh3
    [ "$status" -eq 1 ]
    [[ "$output" == *"benchdnn oh/ow 5x6 do not match the input, kernel, stride and pad (6x6)"* ]]
    run xdnn bench matmul 64x128:129x256
    [ "$status" -eq 1 ]
    [[ "$output" == *"K differs (128 on the left, 129 on the right)"* ]]
    run xdnn bench matmul 2x64x128:3x128x256
    [ "$status" -eq 1 ]
    [[ "$output" == *"the batch dims must be equal (2, 3)"* ]]
    run xdnn bench matmul 64x128:128x
    [ "$status" -eq 1 ]
    [[ "$output" == *"benchdnn matmul descriptor must be MxK:KxN or BxMxK:BxKxN, got '64x128:128x'"* ]]
}

@test "batch files: comments, includes relative to the file, per-line options, cycles are errors" {
    mkdir -p "$BATS_TEST_TMPDIR/suite/sub"
    cp "$G" "$BATS_TEST_TMPDIR/suite/"; cp -r "$ROOT/graphs/lib" "$BATS_TEST_TMPDIR/suite/"
    cat > "$BATS_TEST_TMPDIR/suite/main.txt" <<'B'
# the whole suite
mlp_gelu.dnn --set T=2 --set D=4        # per-line --set
include sub/more.txt
B
    printf 'softmax n2c4\n\n' > "$BATS_TEST_TMPDIR/suite/sub/more.txt"
    run xdnn bench --batch "$BATS_TEST_TMPDIR/suite/main.txt" --device cpu --iters 1 --format jsonl
    [ "$status" -eq 0 ]
    [ "$(keys <<< "$output")" = "mlp_gelu[T=2,D=4]:f16 softmax n2c4:f32" ]
    echo 'include ../main.txt' >> "$BATS_TEST_TMPDIR/suite/sub/more.txt"
    run xdnn bench --batch "$BATS_TEST_TMPDIR/suite/main.txt" --device cpu --iters 1
    [ "$status" -eq 1 ]
    [[ "$output" == *"includes itself"* ]]
    echo 'softmax n2c4 --iters 3' > "$BATS_TEST_TMPDIR/bad.txt"
    run xdnn bench --batch "$BATS_TEST_TMPDIR/bad.txt" --device cpu
    [ "$status" -eq 1 ]
    [[ "$output" == *"bad.txt:1: option '--iters' is not allowed in a batch line"* ]]
}

@test "unknown options and options that apply to nothing are errors, before anything runs" {
    run xdnn bench "$G" --device cpu --frobnicate
    [ "$status" -eq 1 ]; [[ "$output" == *"unknown option '--frobnicate'"* ]]
    run xdnn bench "$G" --device cpu --layout nhwc
    [ "$status" -eq 1 ]; [[ "$output" == *"--layout applies to problem shorthands"* ]]
    run xdnn bench "$G" --device cpu --check
    [ "$status" -eq 1 ]; [[ "$output" == *"--check compares the GPU"* ]]
    run xdnn bench "$G" --device cpu --engine cublaslt
    [ "$status" -eq 1 ]; [[ "$output" == *"the only engine is cpu_reference"* ]]
    run xdnn bench "$G" --device cpu --set Q=1
    [ "$status" -eq 1 ]; [[ "$output" == *"has no param 'Q'; its params: T, D"* ]]
    run xdnn bench "$G" --device cpu --set F=8
    [ "$status" -eq 1 ]; [[ "$output" == *"'F' is derived"* ]]
    run xdnn bench "$G" --device cpu --set T=8:2
    [ "$status" -eq 1 ]; [[ "$output" == *"bad range '8:2'"* ]]
    run xdnn bench softmax n2c4 --set T=1
    [ "$status" -eq 1 ]; [[ "$output" == *"apply to graph files, not to problem shorthands"* ]]
    run xdnn bench "$G" --dump-graph --iters 3
    [ "$status" -eq 1 ]
    run xdnn bench "$G" --device gpu
    [ "$status" -eq 7 ]
}

@test "a failing case is reported, the others still run, and the exit status is the failure's" {
    run xdnn bench "$G" --device cpu --iters 1 --set T=2 --set D=4,0 --format jsonl
    [ "$status" -eq 3 ]
    [[ "$output" == *'"key":"mlp_gelu[T=2,D=4]:f16"'*'"status":"passed"'* ]]
    [[ "$output" == *'"status":"failed"'* ]]
    [[ "$output" == *"1 passed, 1 failed, 0 skipped"* ]]
}

@test "--min-time runs until the time is spent; --tune records 1 candidate per op in the cache" {
    run xdnn bench softmax n2c4 --device cpu --min-time 0.05 --format jsonl
    [ "$status" -eq 0 ]
    grep '^{' <<< "$output" | python3 -c 'import json,sys; r = json.loads(sys.stdin.readline()); assert r["iters"] > 3, r' 
    run xdnn bench softmax n2c4 --device cpu --iters 2 --tune
    [ "$status" -eq 0 ]
    [[ "$output" == *"tune y (softmax): 1 candidate (the CPU has one engine per op): cpu_reference"*"kept"* ]]
    ls "$XDNN_CACHE_DIR"/tune-*.jsonl
    run xdnn cache list
    [ "$status" -eq 0 ]
    [[ "$output" == *"softmax    cpu_reference"*"1 candidate"* ]]
    [[ "$output" == *"1 entry in 1 file" ]]
    run xdnn cache list --format json
    [ "$status" -eq 0 ]
    python3 -c 'import json,sys; d = json.loads(sys.argv[1]); assert d["entries"] == 1 and d["dir"] == sys.argv[2], d; e = d["files"][0]["entries"][0]; assert e["op"] == "softmax" and e["engine"] == "cpu_reference" and e["candidates"] == 1, e; assert d["files"][0]["used"] is True' "$output" "$XDNN_CACHE_DIR"
    run xdnn cache list --format yaml
    [ "$status" -eq 1 ]
    run xdnn bench softmax n2c4 --device cpu --iters 1 --format jsonl
    [[ "$output" == *'"from_cache":true'* ]]
    run xdnn cache clear
    [ "$status" -eq 0 ]
    [ "$output" = "removed 1 entry in 1 file from $XDNN_CACHE_DIR" ]
    run xdnn cache list
    [[ "$output" == *"0 entries in 0 files" ]]
    run xdnn cache frob
    [ "$status" -eq 1 ]
}

@test "the tune cache: XDNN_CACHE_DIR=off keeps nothing (no ./off folder), a name too long is off too, a planted device is damage" {
    cd "$BATS_TEST_TMPDIR"
    XDNN_CACHE_DIR=off xdnn bench softmax n2c4 --device cpu --iters 1 --tune > /dev/null
    [ ! -e off ]
    run env XDNN_CACHE_DIR=off "$XDNN" cache list
    [[ "$output" == "tune cache: off"*"0 entries in 0 files" ]]
    long=$BATS_TEST_TMPDIR/$(printf 'x%.0s' {1..1100})/$(printf 'y%.0s' {1..200})/$(printf 'z%.0s' {1..3000})
    XDNN_CACHE_DIR=$long xdnn bench softmax n2c4 --device cpu --iters 1 --tune > /dev/null
    [ -z "$(ls "$BATS_TEST_TMPDIR" | grep '^x')" ] # nothing created under a truncated name
    xdnn bench softmax n2c4 --device cpu --iters 1 --tune > /dev/null
    f=$(ls "$XDNN_CACHE_DIR"/tune-*.jsonl)
    rm "$f" && ln -s /dev/zero "$f"
    run timeout 10 "$XDNN" cache list
    [ "$status" -eq 0 ]
    [[ "$output" == *"is damaged (a symbolic link, not followed)"* ]]
    rm "$f" && mkfifo "$f"
    run timeout 10 "$XDNN" cache list
    [ "$status" -eq 0 ]
    [[ "$output" == *"is damaged (not a regular file of at most 64 MB)"* ]]
    run timeout 10 "$XDNN" bench softmax n2c4 --device cpu --iters 1 --format jsonl
    [ "$status" -eq 0 ]
    [[ "$output" == *'"from_cache":false'* ]]
}

@test "compare: SAME on itself, SLOWER and exit 6 on a regression, FASTER, new and missing cases, malformed input" {
    xdnn bench "$G" --device cpu --iters 3 --set T=2,4 --set D=4 --format jsonl -o "$BATS_TEST_TMPDIR/old.jsonl"
    run xdnn compare "$BATS_TEST_TMPDIR/old.jsonl" "$BATS_TEST_TMPDIR/old.jsonl"
    [ "$status" -eq 0 ]
    [[ "${lines[-1]}" == "geomean ratio 1.000 over 2 cases: 0 faster, 0 slower, 2 same"* ]]
    python3 - "$BATS_TEST_TMPDIR" <<'P'
import json, sys
d = sys.argv[1]
rows = [json.loads(l) for l in open(d + "/old.jsonl")]
# a fixed 2% spread: how noisy this machine was must not decide the verdicts below (compare weighs a
# difference against the spread, and a loaded machine gives the CPU timings of T=2 spreads of 100x)
for r in rows:
    r["min_ms"], r["max_ms"] = r["median_ms"] * 0.99, r["median_ms"] * 1.01
open(d + "/old.jsonl", "w").write("".join(json.dumps(r) + "\n" for r in rows))
def scaled(f):
    out = []
    for r in rows:
        r = dict(r)
        for k in ("median_ms", "min_ms", "max_ms"):
            r[k] *= f
        out.append(r)
    return out
open(d + "/slow.jsonl", "w").write("".join(json.dumps(r) + "\n" for r in scaled(50)))
fast = scaled(0.01)[:1] + [dict(rows[1], key="other")]
open(d + "/fast.jsonl", "w").write("".join(json.dumps(r) + "\n" for r in fast))
P
    run xdnn compare "$BATS_TEST_TMPDIR/old.jsonl" "$BATS_TEST_TMPDIR/slow.jsonl"
    [ "$status" -eq 6 ]
    [[ "$output" == *"50.000"*SLOWER* ]]
    run xdnn compare "$BATS_TEST_TMPDIR/old.jsonl" "$BATS_TEST_TMPDIR/fast.jsonl"
    [ "$status" -eq 6 ] # the case missing from NEW is a regression
    [[ "$output" == *"0.010"*FASTER* ]]
    [[ "$output" == *"other"*NEW* ]]
    [[ "$output" == *"mlp_gelu[T=4,D=4]:f16"*"MISSING in new"* ]]
    [[ "${lines[-1]}" == *": 1 faster, 0 slower, 0 same, 0 no longer passing, 1 new, 1 missing" ]] # FASTER is not SAME
    run xdnn compare "$BATS_TEST_TMPDIR/old.jsonl" "$BATS_TEST_TMPDIR/fast.jsonl" --format json
    [ "$status" -eq 6 ]
    python3 -c '
import json, sys
d = json.loads(sys.argv[1])
v = {c["key"]: c for c in d["cases"]}
assert [c["verdict"] for c in d["cases"]] == ["FASTER", "NEW", "MISSING"], d["cases"]
f = d["cases"][0]
assert abs(f["ratio"] - 0.01) < 1e-9 and f["new_ms"] < f["old_ms"], f
g = d["summary"].pop("geomean_ratio")
assert abs(g - f["ratio"]) < 1e-12, g
assert d["summary"] == {"matched": 1, "faster": 1, "slower": 0, "same": 0, "no_longer_passing": 0, "new": 1,
                        "missing": 1}, d["summary"]' "$output"
    head -1 "$BATS_TEST_TMPDIR/fast.jsonl" > "$BATS_TEST_TMPDIR/fast1.jsonl"
    run xdnn compare "$BATS_TEST_TMPDIR/fast1.jsonl" "$BATS_TEST_TMPDIR/old.jsonl"
    [ "$status" -eq 6 ] # a 100x slowdown
    run xdnn compare "$BATS_TEST_TMPDIR/old.jsonl" "$BATS_TEST_TMPDIR/old.jsonl" --threshold 1000
    [ "$status" -eq 0 ]
    cat "$BATS_TEST_TMPDIR/old.jsonl" "$BATS_TEST_TMPDIR/old.jsonl" > "$BATS_TEST_TMPDIR/twice.jsonl"
    run xdnn compare "$BATS_TEST_TMPDIR/old.jsonl" "$BATS_TEST_TMPDIR/twice.jsonl"
    [ "$status" -eq 5 ]
    [[ "$output" == *"twice.jsonl:3: the key 'mlp_gelu[T=2,D=4]:f16' appears twice (two runs in one file?)"* ]]
    echo '{"key": "x"}' > "$BATS_TEST_TMPDIR/bad.jsonl"
    run xdnn compare "$BATS_TEST_TMPDIR/old.jsonl" "$BATS_TEST_TMPDIR/bad.jsonl"
    [ "$status" -eq 5 ]
    [[ "$output" == *"bad.jsonl:1: a case needs string fields \"key\" and \"status\""* ]]
    run xdnn compare "$BATS_TEST_TMPDIR/old.jsonl"
    [ "$status" -eq 1 ]
    run xdnn compare "$BATS_TEST_TMPDIR/old.jsonl" "$BATS_TEST_TMPDIR/old.jsonl" --threshold abc
    [ "$status" -eq 1 ]
}

@test "a --set range near the 64-bit limit stops at STOP instead of wrapping around" {
    # v += STEP past INT64_MAX was undefined behaviour that wrapped to a negative
    # value and went on until "more than 256 values"
    run xdnn bench "$ROOT/graphs/mlp_gelu.dnn" --device cpu --iters 1 --format jsonl \
        --set T=9223372036854775806:9223372036854775807:1000
    [ "$status" -eq 3 ]
    [[ "$output" == *"0 passed, 1 failed, 0 skipped"* ]]
    [[ "$output" == *"'x': dims [9223372036854775806, 128] overflow a 64-bit element count"* ]]
    [[ "$output" != *"more than"* ]]
}

@test "jsonl rows carry the params as an object and a UTC timestamp, also through worker processes" {
    for w in 1 2; do
        out=$(xdnn bench "$G" --device cpu --iters 1 --set T=2,4 --set D=4 --workers $w --format jsonl 2>/dev/null)
        python3 -c '
import json, re, sys
rows = [json.loads(l) for l in sys.stdin if l.startswith("{")]
assert [r["params"] for r in rows] == [{"T": "2", "D": "4"}, {"T": "4", "D": "4"}], rows
assert all(re.fullmatch(r"20\d\d-\d\d-\d\dT\d\d:\d\d:\d\dZ", r["timestamp"]) for r in rows), rows' <<< "$out"
    done
}

@test "sdpa FLOPs count the pairs the mask leaves visible: causal (both alignments) and windows, forward and backward" {
    # B=1, H=2, D=Dv=4: forward 2 * H * pairs * (D + Dv), backward 2 * H * pairs * (3D + 2Dv)
    flops() { xdnn bench sdpa "$1" --device cpu --iters 1 --format jsonl 2>/dev/null | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["flops"])'; }
    [ "$(flops b1h2s5d4)" = 800 ]            # 25 pairs
    [ "$(flops b1h2s5d4c1)" = 480 ]          # 15 pairs: row i sees keys 0..i
    [ "$(flops bwd:b1h2s5d4c1)" = 1680 ]     # its forward (480) and the five products over the same 15 pairs (1200)
    cat > "$BATS_TEST_TMPDIR/w.dnn" <<'G'
dnn 1;
graph g(io=f32, seed=1) {
  input q: f32[1, 2, 3, 4];
  input k: f32[1, 2, 6, 4];
  input v: f32[1, 2, 6, 4];
  a = sdpa(q, k, v, causal=true, align="bottom_right");
  b = sdpa(q, k, v, window=[1, 0]);
  output a, b;
}
G
    # bottom_right with 3 queries over 6 keys: rows see 4, 5, 6 keys (15 pairs);
    # window [1, 0] top-left: rows see 1, 2, 2 keys (5 pairs); 2 * 2 * 20 * 8 = 640
    run xdnn bench "$BATS_TEST_TMPDIR/w.dnn" --device cpu --iters 1 --format jsonl
    [ "$status" -eq 0 ]
    [ "$(grep '^{' <<< "$output" | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["flops"])')" = 640 ]
}

@test "the progress line names each case and gives an ETA (--progress: also when stderr is not a terminal)" {
    err=$(xdnn bench "$G" --set T=2,4,8 --set D=4 --dtype f32 --device cpu --iters 1 --progress 2>&1 > /dev/null)
    [[ "$err" == *"[1/3] mlp_gelu.dnn[T=2,D=4]:f32  ETA --"* ]]
    [[ "$err" =~ \[3/3\]\ mlp_gelu\.dnn\[T=8,D=4\]:f32\ \ ETA\ ([0-9]+s|\<1s) ]]
    # several workers: each case named as it finishes, and the last says done
    err=$(xdnn bench "$G" --set T=2,4 --set D=4 --device cpu --workers 2 --iters 1 --progress 2>&1 > /dev/null)
    [[ "$err" == *"[2/2] mlp_gelu[T="*",D=4]:f16  done"* ]]
    # not on a terminal, and not asked for: no progress line
    err=$(xdnn bench "$G" --set T=2 --set D=4 --device cpu --iters 1 2>&1 > /dev/null)
    [[ "$err" != *"[1/1]"* ]]
}

@test "--perf-template: benchdnn's rows (def, csv, %-codes with time and unit modifiers); unknown codes are usage errors" {
    cd "$BATS_TEST_TMPDIR"
    xdnn bench conv mb1ic4ih8oc4kh3 --device cpu --iters 3 --perf-template=def -o def.txt > /dev/null
    mapfile -t lines < def.txt
    [ "${lines[0]}" = "Output template: perf,%engine%,%impl%,%name%,%prb%,%Gops%,%-time%,%-Gflops%,%0time%,%0Gflops%" ]
    [[ "${lines[1]}" == "perf,cpu,cpu_reference,conv_fwd,conv mb1ic4ih8oc4kh3:f32,"* ]]
    # the numbers agree with each other: Gflops = Gops / seconds at the time the modifier picks
    python3 - "${lines[1]}" <<'P'
import sys
f = sys.argv[1].split(",")
gops, tmin, gmin, tavg, gavg = map(float, f[5:10])
assert gops == 2 * 1 * 4 * 6 * 6 * 4 * 9 / 1e9, gops
assert abs(gmin - gops / (tmin * 1e-3)) <= 1e-3 * gmin and abs(gavg - gops / (tavg * 1e-3)) <= 1e-3 * gavg, f
assert tmin <= tavg, f
P
    run xdnn bench "$G" --set T=2 --set D=4 --device cpu --iters 3 -o rows.txt --perf-template='%prb%;%-time%;%time%;%+time%;%status%;100%%'
    [ "$status" -eq 0 ]
    python3 - "$(sed -n 2p rows.txt)" <<'P'
import sys
key, tmin, tmed, tmax, status, pct = sys.argv[1].split(";")
assert key == "mlp_gelu[T=2,D=4]:f16" and status == "passed" and pct == "100%", sys.argv[1]
assert float(tmin) <= float(tmed) <= float(tmax), sys.argv[1]
P
    run xdnn bench conv mb1ic4ih8oc4kh3 --perf-template='%prb%,%Gtime%'
    [ "$status" -eq 1 ]
    [[ "$output" == *"--perf-template: unknown code '%Gtime%'"* ]]
    run xdnn bench conv mb1ic4ih8oc4kh3 --perf-template='%prb'
    [ "$status" -eq 1 ]
    [[ "$output" == *"a '%' without its closing '%'"* ]]
    run xdnn bench conv mb1ic4ih8oc4kh3 --perf-template=def --format csv
    [ "$status" -eq 1 ]
    [[ "$output" == *"--perf-template is a row format of its own: it does not go with --format"* ]]
}

@test "--cold-l2 flushes the GPU's L2 between timed runs: on the CPU (asked for, or all there is) a usage error, never ignored" {
    run xdnn bench conv mb1ic4ih8oc4kh3 --device cpu --cold-l2
    [ "$status" -eq 1 ]
    [[ "$output" == *"--cold-l2 flushes the GPU's L2 cache between timed runs; it needs a GPU (--device gpu)"* ]]
    run xdnn run "$G" --device cpu --set T=2 --set D=4 --cold-l2
    [ "$status" -eq 1 ]
    [[ "$output" == *"--cold-l2 flushes the GPU's L2 cache between timed runs; it needs --device gpu"* ]]
    if ! xdnn run "$G" --device gpu --set T=2 --set D=4 > /dev/null 2>&1; then # no GPU: auto falls back to the CPU
        run xdnn bench conv mb1ic4ih8oc4kh3 --cold-l2
        [ "$status" -eq 1 ]
        [[ "$output" == *"it needs a GPU"* ]]
    fi
}

@test "the sdpa shorthand: GQA/MQA (k kv heads), a value dim (v), bottom-right alignment (a1) and dropout (p percent), forward and backward" {
    run xdnn bench sdpa bwd:b1h4s8t12d16k2v8c1a1p10 --dump-graph
    [ "$status" -eq 0 ]
    [[ "$output" == *"input k: f32[1, 2, 12, 16] @bhsd;"* ]]
    [[ "$output" == *"input v: f32[1, 2, 12, 8] @bhsd;"* ]]
    [[ "$output" == *"input do: f32[1, 4, 8, 8] @bhsd;"* ]]
    [[ "$output" == *'dq, dk, dv = sdpa_bwd(q, k, v, o, do, stats, causal=true, align="bottom_right", dropout=0.1, seed=1);'* ]]
    cat > "$BATS_TEST_TMPDIR/sdpa.txt" <<'B'
sdpa b1h4s8t12d16k1v8c1a1p20
sdpa bwd:b1h4s8t12d16k2v8c1a1p20 --layout bshd
B
    run xdnn bench --batch "$BATS_TEST_TMPDIR/sdpa.txt" --device cpu --iters 1 --format csv
    [ "$status" -eq 0 ]
    [[ "$output" == *"2 passed, 0 failed, 0 skipped" ]]
    run xdnn bench sdpa b1h4s8d16k3 --device cpu
    [ "$status" -eq 1 ]
    [[ "$output" == *"sdpa needs k (kv heads) >= 1 dividing h (4)"* ]]
    run xdnn bench sdpa b1h4s8d16p100 --device cpu
    [ "$status" -eq 1 ]
    [[ "$output" == *"a dropout percent p0..p99"* ]]
}

@test "the table keeps its columns when a case key is wider than the case column: the key gets a line of its own" {
    cd "$BATS_TEST_TMPDIR"
    printf '%s\n' 'conv mb1ic4ih8oc4kh3ph1_n"a:problem:name:long:enough:to:overflow"' 'conv mb1ic4ih8oc4kh3' > cases.txt
    xdnn bench --batch cases.txt --device cpu --iters 1 > t.txt 2> /dev/null
    cat t.txt
    grep -qx 'conv mb1ic4ih8oc4kh3ph1_n"a:problem:name:long:enough:to:overflow":f32' t.txt
    # every row's engine column starts where the header's does
    col=$(head -1 t.txt | awk '{ print index($0, "engine") }')
    [ "$(grep -c ' cpu_reference ' t.txt)" -eq 2 ]
    grep ' cpu_reference ' t.txt | while IFS= read -r line; do [ "$(awk '{ print index($0, "cpu_reference") }' <<< "$line")" -eq "$col" ]; done
}
