#!/usr/bin/env bash
# device_session.sh BUILD_DIR OUT_DIR — everything one lent-GPU session runs:
# device facts, the GPU unit tests, every differential tester (full sweep),
# compute-sanitizer memcheck on each tester's reduced sweep, and
# `xdnn run --device gpu --check` on every shipped graph.  Logs go to OUT_DIR;
# a summary is printed.  Needs no flex, bison or bats on the GPU machine.
set -uo pipefail
build=${1:?BUILD_DIR}; out=${2:?OUT_DIR}
mkdir -p "$out"
export LD_LIBRARY_PATH="$(cd "$build/lib" 2>/dev/null && pwd):${LD_LIBRARY_PATH:-}"
export XDNN_CACHE_DIR=/tmp/xdnn-cache
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv; \
  /usr/local/cuda/bin/nvcc --version | tail -1; } > "$out/device.txt" 2>&1
cat "$out/device.txt"
for t in "$build"/tests/test_gpu_*; do echo "$(basename "$t"): $("$t" 2>&1 | tail -1)"; done | tee "$out/unit.log"
# the public plan API on CUDA: queries, binding errors, save/load, threads, CUDA-graph capture
[ -x "$build/tests/test_plan_exec" ] && XDNN_TEST_BACKEND=cuda "$build/tests/test_plan_exec" 2>&1 | tail -1 | tee -a "$out/unit.log"
# plan options: const_weights (casts run once, a changed weight not seen), resized plans = plans made per size
[ -x "$build/tests/test_plan_options" ] && XDNN_TEST_BACKEND=cuda "$build/tests/test_plan_options" 2>&1 | tail -1 | tee -a "$out/unit.log"
# every shipped graph through the public API: bits vs gpu_run, plan/load/execute overheads
cc=${CC:-gcc}; cuda=${CUDA_HOME:-/usr/local/cuda}
"$cc" -std=c11 -D_GNU_SOURCE -O2 -DXDNN_HAVE_CUDA=1 -Iinclude -Isrc -I"$cuda/include" -o "$build/plan_api_check" \
    tests/gpu/plan_api_check.c "$build/libxdnn.a" -L"$build/lib" -lcjson -lm -fopenmp -L"$cuda/lib64" \
    -lcudart_static -lstdc++ -ldl -lpthread -lrt && "$build/plan_api_check" graphs/*.dnn > "$out/plan_api.md" 2>&1
echo "plan_api_check rc=$?"
# SWEEP_ARGS: arguments for every tester (--quick: the reduced sweep)
[ -n "${SKIP_SWEEP:-}" ] || timeout ${SWEEP_S:-360} tests/gpu/run.sh "$build" ${SWEEP_ARGS:-} > "$out/difftest.log" 2>&1
echo "difftest rc=$?"
grep -E "^==|^FAIL|passed," "$out/difftest.log" | tail -12
if [ -z "${SKIP_SAN:-}" ]; then
    : > "$out/sanitizer.log"
    for tester in "$build"/difftest*; do
        [ -x "$tester" ] && [ "${tester%.log}" = "$tester" ] || continue
        echo "== $(basename "$tester")" >> "$out/sanitizer.log"
        timeout ${SAN_S:-150} compute-sanitizer --tool memcheck --error-exitcode 3 "$tester" --quick \
            >> "$out/sanitizer.log" 2>&1; echo "rc=$?" >> "$out/sanitizer.log"
    done
    grep -E "^==|ERROR SUMMARY|passed,|^rc=" "$out/sanitizer.log"
fi
{ for g in graphs/*.dnn; do
    echo "== $g"; timeout 120 "$build/xdnn" run --device gpu --check "$g" 2>&1 | grep -E "^(reference|device|total)|error|FAILED"
    echo "rc=${PIPESTATUS[0]}"; done; } > "$out/graphs.log" 2>&1
grep -E "^==|rc=" "$out/graphs.log" | paste - - 
