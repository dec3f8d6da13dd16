#!/usr/bin/env bash
# final_session.sh DEV OUT — the end-of-session device call: everything landed
# this session, checked together on one GPU.  DEV holds a stripped libxdnn.a,
# the CLI's objects (cli/*.o), the generated parser headers (gen/) and
# lib/libcjson.so* (the GPU machine has no flex, bison or libcjson); xdnn, the
# GPU unit tests and the differential testers are linked there with gcc.
#  1. device_session.sh's checks: GPU unit tests, the plan API on CUDA, every
#     differential tester (--quick unless FULL=1), `xdnn run --check` on every
#     shipped graph;
#  2. the peer suite (bench/run_peer_suite.sh) within SUITE_BUDGET_S seconds,
#     which prints the ratio table and appends it to bench/RESULTS.md there
#     (copied to OUT/RESULTS-section.md).
# SKIP_SUITE=1 leaves 2 out; SUITE_ARGS go to run_peer_suite.sh (e.g.
# "--filter sdpa|conv").  Logs under OUT.
set -uo pipefail
dev=${1:?DEV}; out=${2:?OUT}
mkdir -p "$out" "$dev/tests"
cuda=/usr/local/cuda
export LD_LIBRARY_PATH="$(cd "$dev/lib" && pwd):${LD_LIBRARY_PATH:-}"
export XDNN_CACHE_DIR=${XDNN_CACHE_DIR:-/tmp/xdnn-cache}
L=("$dev/libxdnn.a" -L"$dev/lib" -lcjson -lm -fopenmp -L"$cuda/lib64" -lcudart_static -lstdc++ -ldl -lpthread -lrt)
CF=(-std=c11 -D_GNU_SOURCE -O2 -DXDNN_HAVE_CUDA=1 -Iinclude -Isrc -I"$dev/gen" -I"$cuda/include")
t0=$SECONDS
step() { echo "== $1 ($((SECONDS - t0)) s)"; }

step link
[ -f "$dev/libxdnn.a.gz" ] && gunzip -f "$dev/libxdnn.a.gz"
gcc -o "$dev/xdnn" "$dev"/cli/*.o "${L[@]}" > "$out/link.log" 2>&1 &
unit_lib=$(ls tests/unit/*.c | grep -v '/test_')
for t in tests/unit/test_gpu_*.c tests/unit/test_plan_exec.c tests/unit/test_plan_options.c; do
    gcc "${CF[@]}" -fopenmp -o "$dev/tests/$(basename "$t" .c)" "$t" $unit_lib "${L[@]}" >> "$out/link.log" 2>&1 &
done
wait
[ -x "$dev/xdnn" ] || { echo "link failed"; tail -20 "$out/link.log"; exit 1; }

step checks
sweep=--quick; [ -z "${FULL:-}" ] || sweep=
SKIP_SAN=1 SWEEP_ARGS=$sweep SWEEP_S=${SWEEP_S:-300} tests/gpu/device_session.sh "$dev" "$out" 2>&1 | tee "$out/checks.log" | tail -40
if [ -z "${SKIP_SUITE:-}" ]; then
    step "peer suite"
    XDNN_CARRY_LIBS="$dev/lib" SUITE_BUDGET_S=${SUITE_BUDGET_S:-240} \
        bench/run_peer_suite.sh "$dev" "$out/suite" ${SUITE_ARGS:-} > "$out/suite.log" 2>&1
    echo "suite rc=$?"
    cp "$out/suite/RESULTS-section.md" "$out/" 2>/dev/null
    tail -60 "$out/suite.log"
fi
step done
