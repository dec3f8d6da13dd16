#!/usr/bin/env bash
# device_session.sh BUILD_DIR OUT_DIR — everything one lent-GPU session runs
# (see bench/RESULTS.md): device facts, GPU unit tests, the full differential
# sweep, compute-sanitizer memcheck on the reduced sweep, the benchmark cases
# and a few CLI runs with --check.  Logs go to OUT_DIR; a summary is printed.
set -uo pipefail
build=${1:?BUILD_DIR}; out=${2:?OUT_DIR}
mkdir -p "$out"
export LD_LIBRARY_PATH="$(cd "$build/lib" 2>/dev/null && pwd):${LD_LIBRARY_PATH:-}"
export XDNN_CACHE_DIR=/tmp/xdnn-cache
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv; \
  /usr/local/cuda/bin/nvcc --version | tail -1; command -v gcc compute-sanitizer; } > "$out/device.txt" 2>&1
cat "$out/device.txt"
for t in test_gpu_plan test_gpu_nvrtc; do "$build/tests/$t" 2>&1 | tail -3; done | tee "$out/unit.log"
if command -v gcc >/dev/null; then run="tests/gpu/run.sh $build"; else run="$build/difftest"; fi
timeout ${SWEEP_S:-300} $run ${SWEEP_FILTER:-} > "$out/difftest.log" 2>&1; echo "difftest rc=$?"
grep -E "^FAIL|passed," "$out/difftest.log" | head -40
XDNN_NO_FUSION=1 timeout 60 "$build/difftest" ${NOFUSE_FILTER:-graph/} > "$out/nofusion.log" 2>&1; echo "no-fusion rc=$?"
tail -1 "$out/nofusion.log"
timeout ${SAN_S:-120} compute-sanitizer --tool memcheck --error-exitcode 3 "$build/difftest" --quick ${SAN_FILTER:-} \
    > "$out/sanitizer.log" 2>&1; echo "sanitizer rc=$?"
grep -E "ERROR SUMMARY|passed,|^FAIL" "$out/sanitizer.log" | tail -5
timeout ${BENCH_S:-90} "$build/difftest" --bench > "$out/bench.log" 2>&1; echo "bench rc=$?"
grep -vE "^\s*$" "$out/bench.log" | tail -40
{ for g in graphs/mlp_gelu.dnn graphs/classifier_head.dnn; do
    echo "== $g"; timeout 60 "$build/xdnn" run --device gpu --check -v "$g" 2>&1 | tail -30; echo "rc=$?"; done; } > "$out/cli.log" 2>&1
grep -E "^==|rc=|error|check" "$out/cli.log" | head -30
