#!/usr/bin/env bash
# attn_masks_session.sh DEV OUT — the device call of issue 10 (every mask on the Hopper attention engines):
# links difftest_seq against DEV (tests/gpu/pack_dev.sh's folder), runs the wgmma sweep against the CPU
# reference (FILTER, default "wgmma"), the PyTorch peer of the masks (bench/sdpa_mask_peer.py), the masked bench (bench/masks: window, padding, bias on sdpa_flash_wgmma /
# sdpa_bwd_wgmma and on the sdpa_flash / sdpa_bwd_flash fallback) with the unmasked causal reference (BENCH_FILTER:
# words, one tester run each), then compute-sanitizer memcheck on the --quick
# subset.  Each step has its own time limit (SWEEP_S, BENCH_S, PEER_S, SAN_S); logs go to OUT.
set -uo pipefail
dev=${1:?DEV}; out=${2:?OUT}
mkdir -p "$out"
[ -f "$dev/libxdnn.a.gz" ] && gunzip -f "$dev/libxdnn.a.gz"
gcc -std=c11 -D_GNU_SOURCE -O2 -DXDNN_HAVE_CUDA=1 -Iinclude -Isrc -I/usr/local/cuda/include -o "$dev/difftest_seq" \
    tests/gpu/difftest_seq.c tests/gpu/diffharness.c "$dev/libxdnn.a" -L"$dev/lib" -lcjson -lm -fopenmp \
    -L/usr/local/cuda/lib64 -lcudart_static -lstdc++ -ldl -lpthread -lrt || exit 9
export LD_LIBRARY_PATH="$(cd "$dev/lib" && pwd):${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee "$out/device.txt"
cat "$dev/COMMIT" 2>/dev/null
timeout "${SWEEP_S:-150}" "$dev/difftest_seq" "${FILTER:-wgmma}" > "$out/difftest.log" 2>&1
echo "difftest rc=$?"
grep -E "^FAIL" "$out/difftest.log" | cut -c1-300 | head -30
grep -E "passed," "$out/difftest.log"
PYTHONUNBUFFERED=1 timeout "${PEER_S:-100}" python3 bench/sdpa_mask_peer.py > "$out/peer.log" 2>&1
echo "peer rc=$?"
grep -v Warning "$out/peer.log" | grep -v "ms = bench"
: > "$out/bench.log"
for f in ${BENCH_FILTER:-bench/masks bench/wgmma/sdpa_fwd_bf16_causal/b4h16k16s4096d128}; do
    DIFFTEST_ITERS=${ITERS:-10} timeout "${BENCH_S:-100}" "$dev/difftest_seq" --bench "$f" >> "$out/bench.log" 2>&1
    echo "bench $f rc=$?"
done
grep -E "^(PASS|FAIL)|TIME" "$out/bench.log" | sed 's/engines=.*//' | cut -c1-200
if [ -n "${SAN_S:-}" ]; then
    timeout "$SAN_S" compute-sanitizer --tool memcheck --error-exitcode 3 "$dev/difftest_seq" --quick "${SAN_FILTER:-wgmma}" \
        > "$out/sanitizer.log" 2>&1
    echo "sanitizer rc=$?"
    grep -E "ERROR SUMMARY|passed,|^FAIL" "$out/sanitizer.log" | head
fi
