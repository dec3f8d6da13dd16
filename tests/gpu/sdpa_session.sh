#!/usr/bin/env bash
# sdpa_session.sh BUILD_DIR OUT_DIR — the attention engines' device call:
# the sdpa cases of difftest_seq against the CPU reference (FILTER, default
# "sdpa"), the --bench timings of sdpa_flash_wgmma / sdpa_flash /
# sdpa_bwd_flash (BENCH_FILTER: words, one tester run each, e.g. "bench/wgmma"),
# and the PyTorch peer (bench/sdpa_peer.py; SDPA_PEER_SHAPES and
# SDPA_PEER_FWD_ONLY narrow it) on the same GPU; SAN=1 adds
# compute-sanitizer memcheck on the --quick sdpa sweep (SAN_FILTER narrows it).  Runs the prebuilt
# BUILD_DIR/difftest_seq (tests/gpu/run.sh builds it; libcjson may travel in
# BUILD_DIR/lib), so the GPU machine needs no compiler.  Logs go to OUT_DIR.
set -uo pipefail
build=${1:?BUILD_DIR}; out=${2:?OUT_DIR}
mkdir -p "$out"
export LD_LIBRARY_PATH="$(cd "$build/lib" 2>/dev/null && pwd):${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee "$out/device.txt"
if [ -z "${SKIP_SWEEP:-}" ]; then
    timeout "${SWEEP_S:-240}" "$build/difftest_seq" ${QUICK:+--quick} "${FILTER:-sdpa}" > "$out/difftest.log" 2>&1
    echo "difftest rc=$?"
    grep -E "^FAIL" "$out/difftest.log" | cut -c1-400 | head -40
    grep -E "passed," "$out/difftest.log"
fi
if [ -n "${SAN:-}" ]; then # compute-sanitizer memcheck on the reduced sdpa sweep
    timeout "${SAN_S:-120}" compute-sanitizer --tool memcheck --error-exitcode 3 "$build/difftest_seq" --quick "${SAN_FILTER:-sdpa}" \
        > "$out/sanitizer.log" 2>&1
    echo "sanitizer rc=$?"
    grep -E "ERROR SUMMARY|passed," "$out/sanitizer.log"
fi
if [ -z "${SKIP_BENCH:-}" ]; then
    : > "$out/bench.log"
    for f in ${BENCH_FILTER:-bench}; do # several words: one tester run each
        DIFFTEST_ITERS=${ITERS:-10} timeout "${BENCH_S:-200}" "$build/difftest_seq" --bench "$f" >> "$out/bench.log" 2>&1
        echo "bench $f rc=$?"
    done
    grep -E "^(PASS|FAIL)|TIME" "$out/bench.log" | sed 's/engines=.*//' | cut -c1-160
fi
if [ -z "${SKIP_PEER:-}" ]; then
    PYTHONUNBUFFERED=1 timeout "${PEER_S:-150}" python3 bench/sdpa_peer.py > "$out/peer.log" 2>&1
    echo "peer rc=$?"
    cat "$out/peer.log"
fi
