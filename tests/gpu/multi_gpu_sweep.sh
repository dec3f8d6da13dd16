#!/usr/bin/env bash
# multi_gpu_sweep.sh BUILD OUT — issue 15's multi-GPU measurement: a sweep of
# 200 cases (matmul, conv fwd/dgrad/wgrad, sdpa, softmax, layernorm, pool) run
# by `xdnn bench` in one process on GPU 0, then with --devices all (one worker
# per GPU), each from a fresh tune cache.  Checks that the rows are the same
# (timings aside) and in the same order, then a worker killed mid-sweep
# (XDNN_BENCH_FAULT=crash:5): exit 9, that case failed, the others passed.
# Prints the wall times and the speed-up.  Run from the repository root;
# BUILD holds xdnn (and lib/ with libcjson.so* where the machine lacks it).
# tests/gpu/shard_session.sh checks the other paths (--shard + merge,
# --device N, --tune merging) on a smaller suite.
set -u -o pipefail
build=${1:?usage: multi_gpu_sweep.sh BUILD OUT}
out=${2:?usage: multi_gpu_sweep.sh BUILD OUT}
mkdir -p "$out"
xdnn=$(cd "$build" && pwd)/xdnn
[ -d "$build/lib" ] && export LD_LIBRARY_PATH="$(cd "$build/lib" && pwd):${LD_LIBRARY_PATH:-}"
limit=${SWEEP_RUN_S:-170}
nvidia-smi -L | tee "$out/gpus.txt"
ngpu=$(grep -c '^GPU' "$out/gpus.txt")
suite=$out/suite.txt
{
    for m in 512 1024 2048 4096; do for n in 512 1024 2048 4096; do for k in 512 1024 2048 4096; do
        echo "matmul m${m}n${n}k${k}"; done; done; done
    for b in 2 4; do for s in 256 1024 4096; do echo "matmul b${b}m${s}n${s}k512"; done; done
    for n in 8 32; do for c in 64 128 256; do for h in 14 28 56; do for dir in fwd dgrad wgrad; do
        echo "conv ${dir}:n${n}c${c}h${h}k${c}r3p1"; done; done; done; done
    for b in 1 4; do for h in 8 16; do for s in 512 1024 2048; do for d in 64 128; do for c in 0 1; do
        echo "sdpa b${b}h${h}s${s}d${d}c${c}"; done; done; done; done; done
    for n in 1024 4096 16384; do for c in 256 1024 4096; do
        echo "softmax n${n}c${c}"; echo "layernorm n${n}c${c}"; done; done
    for h in 28 56 112; do echo "pool max:n8c64h${h}r2"; echo "pool avg:n8c64h${h}r2"; done
    echo "matmul m8192n8192k8192"; echo "matmul m16n8192k8192"; echo "matmul m8192n16k8192"; echo "matmul m4096n14336k4096"
} > "$suite"
echo "$(grep -c . "$suite") cases"
b() { timeout "$limit" "$xdnn" bench --batch "$suite" --dtype bf16 --iters 10 --warmup 3 --no-progress --format jsonl "$@"; }
untimed() {
    python3 -c '
import json,sys
drop = {"iters","median_ms","min_ms","max_ms","p90_ms","spread","gflops","gbps","timestamp","mean_ms","stddev_ms","p95_ms","p99_ms"}
for l in open(sys.argv[1]):
    r = json.loads(l)
    for e in r.get("engines", []): e.pop("from_cache", None)
    print(json.dumps({k: v for k, v in r.items() if k not in drop}, sort_keys=True))' "$1"
}
pass=0 fail=0
check() { local name=$1; shift
    if "$@" >> "$out/checks.log" 2>&1; then echo "PASS $name"; pass=$((pass + 1)); else echo "FAIL $name"; fail=$((fail + 1)); fi; }

export XDNN_CACHE_DIR=$out/cache-one; rm -rf "$XDNN_CACHE_DIR"
secs() { python3 -c 'import sys; print("%.1f" % (float(sys.argv[2]) - float(sys.argv[1])))' "$1" "$(date +%s.%N)"; }
t=$(date +%s.%N); b --device 0 -o "$out/one.jsonl" > "$out/one.log" 2>&1; rc1=$?; t1=$(secs "$t")
export XDNN_CACHE_DIR=$out/cache-all; rm -rf "$XDNN_CACHE_DIR"
t=$(date +%s.%N); b --devices all -o "$out/all.jsonl" > "$out/all.log" 2>&1; rc2=$?; t2=$(secs "$t")
echo "one process (GPU 0): rc=$rc1, $(wc -l < "$out/one.jsonl" 2>/dev/null) rows, ${t1} s"
echo "--devices all ($ngpu GPUs): rc=$rc2, $(wc -l < "$out/all.jsonl" 2>/dev/null) rows, ${t2} s"
echo "speed-up: $(python3 -c 'import sys; print("%.2f" % (float(sys.argv[1]) / float(sys.argv[2])))' "$t1" "$t2")x on $ngpu GPUs"
check "one process: exit 0" test "$rc1" -eq 0
check "--devices all: exit 0" test "$rc2" -eq 0
check "--devices all: the same rows in the same order" diff <(untimed "$out/one.jsonl") <(untimed "$out/all.jsonl")
grep -h -i -E 'worker|gpu [0-9]' "$out/all.log" | head -5
export XDNN_CACHE_DIR=$out/cache-crash; rm -rf "$XDNN_CACHE_DIR"
head -40 "$suite" > "$out/suite40.txt"
XDNN_BENCH_FAULT=crash:5 timeout "$limit" "$xdnn" bench --batch "$out/suite40.txt" --dtype bf16 --iters 3 --no-progress \
    --format jsonl --devices all -o "$out/crash.jsonl" > "$out/crash.log" 2>&1; rc=$?
check "a crashed worker: exit 9" test "$rc" -eq 9
check "a crashed worker: its case failed, the other 39 passed" python3 -c '
import json,sys; rows=[json.loads(l) for l in open(sys.argv[1])]
bad=[i for i,r in enumerate(rows) if r["status"] != "passed"]
assert len(rows) == 40 and bad == [5], (len(rows), bad)' "$out/crash.jsonl"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
