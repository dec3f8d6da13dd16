#!/usr/bin/env bats
# `xdnn bench` in several processes and `xdnn merge`, on the CPU backend:
# --workers N (the worker code --devices uses on GPUs), --shard I/N, merging
# the shards, the refusals of merge, a worker that crashes or hangs, --tune
# from several workers, and the README's Slurm array script run locally.
load helpers

G="$ROOT/graphs/mlp_gelu.dnn"
export OMP_NUM_THREADS=1

setup() { export XDNN_CACHE_DIR="$BATS_TEST_TMPDIR/cache"; }

# A sweep of 8 cases of different sizes (so the cost order differs from the input order).
sweep() { xdnn bench "$G" --device cpu --iters 1 --set T=2,8,4,16 --set D=4,8 "$@"; }

# The rows of jsonl files with the timings (which differ run to run) removed, one per line.
untimed() {
    python3 -c '
import json,sys
drop = {"iters","median_ms","min_ms","max_ms","p90_ms","p95_ms","p99_ms","mean_ms","stddev_ms","spread","gflops","gbps","timestamp"}
for f in sys.argv[1:]:
    for l in open(f):
        r = json.loads(l)
        print(json.dumps({k: v for k, v in r.items() if k not in drop}, sort_keys=True))' "$@"
}

@test "--workers: the same rows in the same order as one process, in jsonl, csv and table" {
    sweep --format jsonl -o "$BATS_TEST_TMPDIR/one.jsonl"
    run sweep --workers 3 --format jsonl -o "$BATS_TEST_TMPDIR/three.jsonl"
    [ "$status" -eq 0 ]
    [ "$output" = "8 passed, 0 failed, 0 skipped" ]
    [ "$(untimed "$BATS_TEST_TMPDIR/one.jsonl")" = "$(untimed "$BATS_TEST_TMPDIR/three.jsonl")" ]
    [ "$(wc -l < "$BATS_TEST_TMPDIR/three.jsonl")" -eq 8 ]
    # csv and table: the same columns, keys and repro lines
    cut_timings() { sed -E 's/[0-9]+\.[0-9]+/T/g'; }
    [ "$(sweep --format csv 2>/dev/null | cut_timings)" = "$(sweep --workers 2 --format csv 2>/dev/null | cut_timings)" ]
    [ "$(sweep 2>/dev/null | cut_timings | tr -s ' ')" = "$(sweep --workers 2 2>/dev/null | cut_timings | tr -s ' ')" ]
}

@test "--shard I/N: every case exactly once over the shards; the merge equals one process's output" {
    sweep --format jsonl -o "$BATS_TEST_TMPDIR/one.jsonl"
    for n in 1 3 8 11; do
        rm -f "$BATS_TEST_TMPDIR"/s-*.jsonl
        for i in $(seq 1 $n); do
            sweep --shard $i/$n --format jsonl -o "$BATS_TEST_TMPDIR/s-$i.jsonl" > /dev/null
        done
        # together the shards hold each key once (11 shards of 8 cases: some are empty)
        cat "$BATS_TEST_TMPDIR"/s-*.jsonl | python3 -c '
import json,sys,collections
rows = [json.loads(l) for l in sys.stdin]
keys = collections.Counter(r["key"] for r in rows)
assert len(keys) == 8 and set(keys.values()) == {1}, keys
assert sorted(r["shard"]["case"] for r in rows) == list(range(8)), rows
assert all(r["shard"]["count"] == '$n' and r["shard"]["cases"] == 8 for r in rows)'
        run xdnn merge "$BATS_TEST_TMPDIR"/s-*.jsonl -o "$BATS_TEST_TMPDIR/all.jsonl"
        [ "$status" -eq 0 ]
        [[ "$output" == *"8 rows from $n file"* ]]
        [ "$(untimed "$BATS_TEST_TMPDIR/one.jsonl")" = "$(untimed "$BATS_TEST_TMPDIR/all.jsonl")" ]
    done
    # the same split every time, and in worker mode too
    sweep --shard 2/3 --format jsonl -o "$BATS_TEST_TMPDIR/a.jsonl"
    sweep --shard 2/3 --workers 2 --format jsonl -o "$BATS_TEST_TMPDIR/b.jsonl"
    [ "$(untimed "$BATS_TEST_TMPDIR/a.jsonl")" = "$(untimed "$BATS_TEST_TMPDIR/b.jsonl")" ]
    # the shards balance the estimated cost: the 16x8 case is alone or nearly so
    [ "$(wc -l < "$BATS_TEST_TMPDIR/a.jsonl")" -ge 2 ]
    # reordering the --set lists moves no case to another shard
    sorted_keys() { python3 -c 'import json,sys; print(" ".join(sorted(json.loads(l)["key"] for l in sys.stdin)))'; }
    for i in 1 2 3; do
        a=$(sweep --shard $i/3 --format jsonl 2>/dev/null | sorted_keys)
        b=$(xdnn bench "$G" --device cpu --iters 1 --set T=16,4,2,8 --set D=8,4 --shard $i/3 --format jsonl 2>/dev/null | sorted_keys)
        [ -n "$a" ] && [ "$a" = "$b" ]
    done
}

@test "merge refuses duplicates, mixed versions or devices, partial or different sweeps; nothing written on failure" {
    cd "$BATS_TEST_TMPDIR"
    sweep --shard 1/2 --format jsonl -o s1.jsonl
    sweep --shard 2/2 --format jsonl -o s2.jsonl
    echo previous > out.jsonl
    run xdnn merge s1.jsonl s2.jsonl s1.jsonl -o out.jsonl
    [ "$status" -eq 6 ]
    first=$(head -1 s1.jsonl | python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["key"])')
    [[ "$output" == *"s1.jsonl:1: error: case '$first' is already in s1.jsonl:1"* ]]
    [ "$(cat out.jsonl)" = previous ]
    # another xdnn version, another device: refused, unless --allow-mixed
    sed '1s/"xdnn":"[^"]*"/"xdnn":"9.9.9"/' s2.jsonl > v.jsonl
    run xdnn merge s1.jsonl v.jsonl -o out.jsonl
    [ "$status" -eq 6 ]
    [[ "$output" == *"v.jsonl:1: error: written by xdnn 9.9.9, but s1.jsonl:1 by xdnn "* ]]
    [[ "$output" == *"(--allow-mixed accepts it)"* ]]
    sed '2s/"fingerprint":"[^"]*"/"fingerprint":"gpu; name=Other"/' s2.jsonl > d.jsonl
    run xdnn merge s1.jsonl d.jsonl -o out.jsonl
    [ "$status" -eq 6 ]
    [[ "$output" == *"d.jsonl:2: error: measured on 'gpu; name=Other', but s1.jsonl:1 on 'cpu; "* ]]
    [ "$(cat out.jsonl)" = previous ]
    run xdnn merge s1.jsonl d.jsonl --allow-mixed -o out.jsonl
    [ "$status" -eq 0 ]
    [ "$(wc -l < out.jsonl)" -eq 8 ]
    # a shard missing; shards of another sweep
    run xdnn merge s1.jsonl -o part.jsonl
    [ "$status" -eq 6 ]
    [[ "$output" == *"of the sweep's 8 cases are missing (shards present: 1 of 2); --allow-partial merges what is there"* ]]
    [ ! -e part.jsonl ]
    run xdnn merge s1.jsonl --allow-partial -o part.jsonl
    [ "$status" -eq 0 ]
    xdnn bench "$G" --device cpu --iters 1 --set T=3 --set D=4 --shard 1/2 --format jsonl -o other.jsonl
    run xdnn merge s1.jsonl other.jsonl
    [ "$status" -eq 6 ]
    [[ "$output" == *"other.jsonl:1: error: shard 1/2 of a sweep of 1 cases"*"not the same sweep"* ]]
    # plain rows with shard rows; not a row; unreadable
    sweep --format jsonl -o plain.jsonl
    run xdnn merge plain.jsonl s1.jsonl
    [ "$status" -eq 6 ]
    [[ "$output" == *"s1.jsonl:1: error: a shard row (bench --shard) among the plain rows of plain.jsonl:1"* ]]
    printf '{"key":"a","status":"passed"}\nnot json\n' > bad.jsonl
    run xdnn merge s1.jsonl bad.jsonl -o out.jsonl
    [ "$status" -eq 2 ]
    [[ "$output" == *"bad.jsonl:2: error: not a bench row"* ]]
    run xdnn merge s1.jsonl missing.jsonl -o out.jsonl
    [ "$status" -eq 5 ]
    [[ "$output" == *"cannot read 'missing.jsonl'"* ]]
    [ "$(wc -l < out.jsonl)" -eq 8 ] # the --allow-mixed merge above wrote it; the failures since did not
    run xdnn merge
    [ "$status" -eq 1 ]
    [[ "$output" == *"no input files"* ]]
}

@test "a worker that crashes or hangs: its case failed with the reason, every other row kept, exit status says so" {
    # case 2 in input order is T=8,D=4
    XDNN_BENCH_FAULT=crash:2 run sweep --workers 2 --format jsonl -o "$BATS_TEST_TMPDIR/c.jsonl"
    [ "$status" -eq 9 ]
    [[ "$output" == *"worker "[12]" killed by signal 9 (Killed) on case 2; its other rows are kept"* ]]
    [[ "$output" == *"7 passed, 1 failed, 0 skipped"* ]]
    python3 -c '
import json,sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 8, rows
bad = [r for r in rows if r["status"] != "passed"]
assert [r["key"] for r in bad] == ["mlp_gelu[T=8,D=4]:f16"], bad
assert "killed by signal 9 (Killed) while running this case" in bad[0]["error"], bad
assert bad[0]["repro"] == "xdnn run '"$G"' --set T=8 --set D=4 --device cpu", bad' "$BATS_TEST_TMPDIR/c.jsonl"
    # a hang: --timeout kills it; the replacement worker runs the rest
    XDNN_BENCH_FAULT=hang:5 run sweep --workers 1 --timeout 2 --format csv
    [ "$status" -eq 9 ]
    [[ "$output" == *"worker 1 timed out after 2 s (killed) while running this case"* ]]
    [[ "$output" == *"7 passed, 1 failed, 0 skipped"* ]]
    # the worker's own messages reach stderr behind its name
    run xdnn bench "$ROOT/graphs/conv_bias_relu.dnn" --device cpu --iters 1 --set C=0 --workers 1
    [ "$status" -eq 3 ]
    [[ "$output" == *"[worker 1] xdnn bench: case $ROOT/graphs/conv_bias_relu.dnn[N=1,C=0]:-:"* ]]
    [[ "$output" == *"[worker 1] $ROOT/graphs/conv_bias_relu.dnn:10:20: error: dim 1 of 'x' must be >= 1, got 0"* ]]
}

@test "--tune in several workers: every result reaches the tune cache" {
    export XDNN_CACHE_DIR="$BATS_TEST_TMPDIR/c1"
    xdnn bench --batch "$ROOT/tests/regress/suite.txt" --device cpu --iters 1 --tune > /dev/null 2>&1
    one=$(xdnn cache list | tail -1)
    export XDNN_CACHE_DIR="$BATS_TEST_TMPDIR/c4"
    xdnn bench --batch "$ROOT/tests/regress/suite.txt" --device cpu --iters 1 --tune --workers 4 > /dev/null 2>&1
    [ "$(xdnn cache list | tail -1)" = "$one" ]
    [[ "$one" == *" entries in 1 file" ]]
    [ "${one%% *}" -gt 4 ]
}

@test "options of several processes: clear errors before anything runs" {
    run sweep --workers 2 --device auto
    [ "$status" -eq 1 ]; [[ "$output" == *"--workers N runs processes on the CPU: it needs --device cpu (GPUs: --devices)"* ]]
    run xdnn bench "$G" --devices 0 --device cpu
    [ "$status" -eq 1 ]; [[ "$output" == *"--devices picks the GPUs itself"* ]]
    run xdnn bench "$G" --devices 0,0
    [ "$status" -eq 1 ]; [[ "$output" == *"--devices names GPU 0 twice"* ]]
    run xdnn bench "$G" --devices 1,x
    [ "$status" -eq 1 ]; [[ "$output" == *"--devices needs 'all' or GPU numbers such as 0,1,3, got '1,x'"* ]]
    run sweep --timeout 5
    [ "$status" -eq 1 ]; [[ "$output" == *"--timeout applies to worker processes"* ]]
    for bad in 0/2 3/2 2 a/b 1/0; do
        run sweep --shard $bad
        [ "$status" -eq 1 ]; [[ "$output" == *"--shard needs I/N with 1 <= I <= N (e.g. 2/8), got '$bad'"* ]]
    done
    run xdnn bench "$G" --shard 1/2 --dump-graph
    [ "$status" -eq 1 ]; [[ "$output" == *"--dump-graph runs nothing"* ]]
    CUDA_VISIBLE_DEVICES=5 run xdnn run "$G" --device 1
    [ "$status" -eq 1 ]; [[ "$output" == *"--device GPU 1: CUDA_VISIBLE_DEVICES='5' shows fewer GPUs"* ]]
}

@test "on a machine without a GPU, --devices and --device N say so (exit 7)" {
    if nvidia-smi -L > /dev/null 2>&1; then skip "this machine has a GPU"; fi
    run xdnn bench "$G" --devices all
    [ "$status" -eq 7 ]; [[ "$output" == *"--devices: no usable GPU: "* ]]
    run xdnn run "$G" --device 1
    [ "$status" -eq 7 ]; [[ "$output" == *"(--device 1: this process sees only CUDA_VISIBLE_DEVICES=1)"* ]]
    CUDA_VISIBLE_DEVICES=4,6 run xdnn plan "$G" --device 1 -o "$BATS_TEST_TMPDIR/p.xplan"
    [ "$status" -eq 7 ]; [[ "$output" == *"xdnn plan: no usable GPU: "*"(--device 1: this process sees only CUDA_VISIBLE_DEVICES=6)"* ]]
    [ ! -e "$BATS_TEST_TMPDIR/p.xplan" ]
    run xdnn bench "$G" --device 0 --iters 1
    [ "$status" -eq 7 ]; [[ "$output" == *"xdnn bench: no usable GPU: "*"(--device 0: this process sees only CUDA_VISIBLE_DEVICES=0)"* ]]
}

@test "README: the Slurm array script, run here as a 3-task array, and its merge" {
    cd "$BATS_TEST_TMPDIR"
    awk '/^### Across GPUs and hosts/{on=1} on && /^```bash$/{inb=1; n++; next} inb && /^```$/{inb=0} inb {print > ("block" n ".sh")}' "$ROOT/README.md"
    [ -s block1.sh ] && [ -s block2.sh ]
    grep -q '^#SBATCH .*--array=' block1.sh
    for f in block1.sh block2.sh; do
        sed -i -e "s|\./build/xdnn|$XDNN|g" -e "s|tests/regress/suite.txt|$ROOT/tests/regress/suite.txt|g" $f
    done
    for i in 1 2 3; do
        SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_COUNT=3 bash block1.sh 2>/dev/null
    done
    bash block2.sh
    xdnn bench --batch "$ROOT/tests/regress/suite.txt" --iters 3 --format jsonl -o one.jsonl 2>/dev/null
    [ "$(untimed one.jsonl)" = "$(untimed all.jsonl)" ]
}
