#!/usr/bin/env bash
# shard_session.sh BUILD OUT — `xdnn bench` across processes on a real GPU
# (issue 15; tests/bats/shard.bats covers the same on the CPU in CI).  Run from
# the repository root; BUILD holds the xdnn binary (and lib/ with libcjson.so*
# on a machine without it).  On one suite of ~30 cases, each run with a fresh
# tune cache so that rows compare:
#   1. one process (--device gpu), the reference rows;
#   2. --device 0, --devices 0 and --devices all: the same rows (timings and
#      from_cache aside), in the same order, from the same device fingerprint;
#   3. --shard 1/2 and 2/2 (--device 0), then xdnn merge: the reference rows;
#   4. --devices all --tune: as many tune-cache entries as one process's --tune;
#   5. XDNN_BENCH_FAULT=crash:3 with --devices all: exit 9, that case failed,
#      every other row passed;
#   6. wall time of 1 vs --devices all (meaningful only with several GPUs).
# One line per check, then "N passed, N failed"; exit 1 when one failed.
set -u -o pipefail
build=${1:?usage: shard_session.sh BUILD OUT}
out=${2:?usage: shard_session.sh BUILD OUT}
mkdir -p "$out"
xdnn=$(cd "$build" && pwd)/xdnn
[ -d "$build/lib" ] && export LD_LIBRARY_PATH="$(cd "$build/lib" && pwd):${LD_LIBRARY_PATH:-}"
pass=0 fail=0
check() { # NAME CONDITION-COMMAND...
    local name=$1; shift
    if "$@" >> "$out/checks.log" 2>&1; then echo "PASS $name"; pass=$((pass + 1)); else echo "FAIL $name"; fail=$((fail + 1)); fi
}
fresh() { export XDNN_CACHE_DIR=$out/cache-$1; rm -rf "$XDNN_CACHE_DIR"; }
# rows without what differs run to run; "same ROWS_A ROWS_B" compares two files
untimed() {
    python3 -c '
import json,sys
drop = {"iters","median_ms","min_ms","max_ms","p90_ms","p95_ms","p99_ms","mean_ms","stddev_ms","spread","gflops","gbps","timestamp"}
for l in open(sys.argv[1]):
    r = json.loads(l)
    for e in r.get("engines", []): e.pop("from_cache", None)
    print(json.dumps({k: v for k, v in r.items() if k not in drop}, sort_keys=True))' "$1"
}
same() { diff <(untimed "$1") <(untimed "$2"); }

nvidia-smi -L | tee "$out/gpus.txt"
suite=$out/suite.txt
{
    echo "$PWD/graphs/mlp_gelu.dnn --set T=64,256,1024 --set D=256,1024"
    echo "$PWD/graphs/conv_bias_relu.dnn --set N=1,8 --set C=64 --set K=64 --set H=28 --set W=28"
    for m in 256 1024 4096; do echo "matmul m${m}n${m}k${m}"; done
    echo "softmax n4096c1024"
    echo "layernorm n4096c1024"
    echo "sdpa b2h8s1024d64"
    echo "sdpa b2h8s1024d64c1"
    echo "conv n8c64h56k64r3p1"
    echo "conv dgrad:n8c64h56k64r3p1"
    echo "conv wgrad:n8c64h56k64r3p1"
    echo "pool max:n8c64h56r2"
} > "$suite"
b() { "$xdnn" bench --batch "$suite" --iters 10 --format jsonl "$@"; }

fresh one; t=$SECONDS
b --device gpu -o "$out/one.jsonl" > "$out/one.log" 2>&1; rc=$?
t_one=$((SECONDS - t))
check "one process exits 0" test $rc -eq 0
n=$(wc -l < "$out/one.jsonl")
echo "$n cases, $t_one s in one process"
check "one process: every case passed" python3 -c '
import json,sys; rows=[json.loads(l) for l in open(sys.argv[1])]
assert rows and all(r["status"] == "passed" for r in rows), [r["key"] for r in rows if r["status"] != "passed"]' "$out/one.jsonl"

fresh dev0
b --device 0 -o "$out/dev0.jsonl" > "$out/dev0.log" 2>&1
check "--device 0: the same rows" same "$out/one.jsonl" "$out/dev0.jsonl"
fresh w0
b --devices 0 -o "$out/w0.jsonl" > "$out/w0.log" 2>&1
check "--devices 0 (one worker): the same rows" same "$out/one.jsonl" "$out/w0.jsonl"
fresh wall; t=$SECONDS
b --devices all -o "$out/wall.jsonl" > "$out/wall.log" 2>&1
t_all=$((SECONDS - t))
check "--devices all: the same rows" same "$out/one.jsonl" "$out/wall.jsonl"
echo "wall time: one process $t_one s, --devices all ($(grep -c '^GPU' "$out/gpus.txt") GPUs) $t_all s"

fresh shard
b --device 0 --shard 1/2 -o "$out/s1.jsonl" > "$out/s1.log" 2>&1
b --device 0 --shard 2/2 -o "$out/s2.jsonl" > "$out/s2.log" 2>&1
"$xdnn" merge "$out/s1.jsonl" "$out/s2.jsonl" -o "$out/merged.jsonl" > "$out/merge.log" 2>&1
check "--shard 1/2 + 2/2, merged: the same rows" same "$out/one.jsonl" "$out/merged.jsonl"

fresh tune1
b --device gpu --tune -o "$out/tune1.jsonl" > "$out/tune1.log" 2>&1
"$xdnn" cache list > "$out/cache1.txt"
fresh tuneall
b --devices all --tune -o "$out/tuneall.jsonl" > "$out/tuneall.log" 2>&1
"$xdnn" cache list > "$out/cacheall.txt"
tail -n 1 "$out/cache1.txt" "$out/cacheall.txt"
check "--devices all --tune: every entry in the cache" test "$(tail -n 1 "$out/cache1.txt")" = "$(tail -n 1 "$out/cacheall.txt")"

fresh crash
XDNN_BENCH_FAULT=crash:3 b --devices all -o "$out/crash.jsonl" > "$out/crash.log" 2>&1; rc=$?
check "a crashed worker: exit 9" test $rc -eq 9
check "a crashed worker: its case failed, the others passed" python3 -c '
import json,sys; rows=[json.loads(l) for l in open(sys.argv[1])]
bad=[i for i,r in enumerate(rows) if r["status"] != "passed"]
assert len(rows) == int(sys.argv[2]) and bad == [3] and "killed by signal 9" in rows[3]["error"], bad' "$out/crash.jsonl" "$n"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
