#!/usr/bin/env bash
# conv_session.sh DIR OUT_DIR — one lent-GPU session for the convolution
# engines from a slim prebuilt folder: DIR/difftest_conv and DIR/lib/libcjson,
# or a pack_dev.sh folder (DIR/libxdnn.a.gz: difftest_conv is linked here with
# gcc first).  The difftest_conv sweep, its --bench timings, the
# PyTorch/cuDNN side (bench/conv_peer.py) and compute-sanitizer memcheck on
# the reduced sweep of the tensor-core engines.  Logs go to OUT_DIR; a short
# table is printed last.
# Switches: SKIP_SWEEP, SKIP_BENCH, SKIP_SAN; SWEEP_FILTERS, BENCH_FILTERS and
# SAN_FILTERS narrow each to the cases whose ids hold one of the
# space-separated substrings; PEER_SETS picks bench/conv_peer.py's sets.
set -uo pipefail
dir=${1:?DIR}; out=${2:?OUT_DIR}
mkdir -p "$out"
export LD_LIBRARY_PATH="$(cd "$dir/lib" && pwd):${LD_LIBRARY_PATH:-}" XDNN_CACHE_DIR=/tmp/xdnn-cache PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee "$out/device.txt"
if [ -f "$dir/libxdnn.a.gz" ]; then
    gunzip -f "$dir/libxdnn.a.gz"
    cuda=/usr/local/cuda
    gcc -std=c11 -D_GNU_SOURCE -O2 -DXDNN_HAVE_CUDA=1 -Iinclude -Isrc -I"$cuda/include" -o "$dir/difftest_conv" \
        tests/gpu/difftest_conv.c tests/gpu/diffharness.c "$dir/libxdnn.a" -L"$dir/lib" -lcjson -lm -fopenmp \
        -L"$cuda/lib64" -lcudart_static -lstdc++ -ldl -lpthread -lrt > "$out/link.log" 2>&1 || { tail "$out/link.log"; exit 1; }
fi
# each filter in turn (one run when none), the logs appended
each() {
    local log=$1 limit=$2 filters=$3; shift 3
    : > "$log"
    for f in ${filters:-""}; do timeout "$limit" "$@" $f >> "$log" 2>&1; echo "$f rc=$?"; done
}
if [ -z "${SKIP_SWEEP:-}" ]; then
    each "$out/difftest.log" "${SWEEP_S:-200}" "${SWEEP_FILTERS:-}" "$dir/difftest_conv"
    grep -E "^FAIL" "$out/difftest.log" | cut -c1-200 | head -20; grep -E "passed," "$out/difftest.log"
fi
if [ -z "${SKIP_BENCH:-}" ]; then
    each "$out/bench.log" "${BENCH_S:-120}" "${BENCH_FILTERS:-}" "$dir/difftest_conv" --bench
    timeout ${PEER_S:-120} python3 bench/conv_peer.py ${PEER_SETS:-} > "$out/peer.log" 2>&1; echo "peer rc=$?"
fi
if [ -z "${SKIP_SAN:-}" ]; then
    each "$out/sanitizer.log" "${SAN_S:-90}" "${SAN_FILTERS:-grad}" compute-sanitizer --tool memcheck --error-exitcode 3 \
        "$dir/difftest_conv" --quick
    grep -E "ERROR SUMMARY|passed," "$out/sanitizer.log"
fi
# the table: name shape engine xdnn_ms peer_ms ratio
[ -n "${SKIP_BENCH:-}" ] || awk '/^PEER/ {peer[$2" "$3] = $4} /^BENCH/ {b[++n] = $2" "$3; e[n] = $4; ms[n] = $5}
    END {for (i = 1; i <= n; i++) { p = peer[b[i]]; printf "%-44s %-16s %8.4f %8.4f %6.2f\n", b[i], e[i], ms[i], p,
         (p > 0 ? ms[i] / p : 0) } }' "$out/peer.log" "$out/bench.log" | tee "$out/table.txt"
