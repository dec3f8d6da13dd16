#!/usr/bin/env bash
# lowp_session.sh BUILD_DIR OUT_DIR — the low-precision engines' device call:
# difftest_quant's full sweep against the CPU reference (quant_direct and
# matmul_fp8_cublaslt), compute-sanitizer memcheck on its --quick sweep, its
# --bench timings (BENCH_FILTER narrows them), and the PyTorch peer (SKIP_PEER=1 skips it) (bench/lowp_peer.py) on the same GPU.
# Runs the prebuilt BUILD_DIR/difftest_quant (libcjson may travel in
# BUILD_DIR/lib), so the GPU machine needs no compiler.  Logs go to OUT_DIR.
set -uo pipefail
build=${1:?BUILD_DIR}; out=${2:?OUT_DIR}
mkdir -p "$out"
export LD_LIBRARY_PATH="$(cd "$build/lib" 2>/dev/null && pwd):${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee "$out/device.txt"
timeout "${SWEEP_S:-70}" "$build/difftest_quant" > "$out/difftest.log" 2>&1
echo "difftest rc=$?"
grep -E "^FAIL" "$out/difftest.log" | cut -c1-400 | head -30
grep -A3 -E "^FAIL" "$out/difftest.log" | grep -vE "^(FAIL|--)" | cut -c1-300 | head -20
grep -E "passed," "$out/difftest.log"
timeout "${SAN_S:-45}" compute-sanitizer --tool memcheck --error-exitcode 3 "$build/difftest_quant" --quick chain/blk \
    > "$out/sanitizer.log" 2>&1
echo "sanitizer rc=$?"; grep -E "ERROR SUMMARY|passed," "$out/sanitizer.log"
timeout "${BENCH_S:-70}" "$build/difftest_quant" --bench ${BENCH_FILTER:-} > "$out/bench.log" 2>&1
echo "bench rc=$?"; grep -E "BENCH|^FAIL" "$out/bench.log" | cut -c1-260
[ -n "${SKIP_PEER:-}" ] && exit 0
PYTHONUNBUFFERED=1 timeout "${PEER_S:-60}" python3 bench/lowp_peer.py > "$out/peer.log" 2>&1
echo "peer rc=$?"; cat "$out/peer.log"
