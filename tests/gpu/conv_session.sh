#!/usr/bin/env bash
# conv_session.sh DIR OUT_DIR — one lent-GPU session for the convolution
# engines from a slim prebuilt folder (DIR/difftest_conv, DIR/lib/libcjson):
# the full difftest_conv sweep, its --bench timings, the PyTorch/cuDNN side
# (bench/conv_peer.py) and compute-sanitizer memcheck on the reduced sweep of
# the tensor-core engines.  Logs go to OUT_DIR; a short table is printed last.
# Switches: SKIP_SWEEP, SKIP_BENCH, SKIP_SAN; SWEEP_FILTER narrows the sweep.
set -uo pipefail
dir=${1:?DIR}; out=${2:?OUT_DIR}
mkdir -p "$out"
export LD_LIBRARY_PATH="$(cd "$dir/lib" && pwd):${LD_LIBRARY_PATH:-}" XDNN_CACHE_DIR=/tmp/xdnn-cache PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee "$out/device.txt"
if [ -z "${SKIP_SWEEP:-}" ]; then
    timeout ${SWEEP_S:-200} "$dir/difftest_conv" ${SWEEP_FILTER:-} > "$out/difftest.log" 2>&1; echo "difftest rc=$?"
    grep -E "^FAIL" "$out/difftest.log" | cut -c1-160 | head -20; grep -E "passed," "$out/difftest.log"
fi
if [ -z "${SKIP_BENCH:-}" ]; then
    timeout ${BENCH_S:-120} "$dir/difftest_conv" --bench > "$out/bench.log" 2>&1; echo "bench rc=$?"
    timeout ${PEER_S:-120} python3 bench/conv_peer.py > "$out/peer.log" 2>&1; echo "peer rc=$?"
fi
if [ -z "${SKIP_SAN:-}" ]; then
    timeout ${SAN_S:-90} compute-sanitizer --tool memcheck --error-exitcode 3 "$dir/difftest_conv" --quick \
        ${SAN_FILTER:-grad} > "$out/sanitizer.log" 2>&1; echo "sanitizer rc=$?"
    grep -E "ERROR SUMMARY|passed," "$out/sanitizer.log"
fi
# the table: name shape engine xdnn_ms peer_ms ratio
[ -n "${SKIP_BENCH:-}" ] || awk '/^PEER/ {peer[$2" "$3] = $4} /^BENCH/ {b[++n] = $2" "$3; e[n] = $4; ms[n] = $5}
    END {for (i = 1; i <= n; i++) { p = peer[b[i]]; printf "%-44s %-16s %8.4f %8.4f %6.2f\n", b[i], e[i], ms[i], p,
         (p > 0 ? ms[i] / p : 0) } }' "$out/peer.log" "$out/bench.log" | grep -E "grad|fwd_f16|convepi" | tee "$out/table.txt"
