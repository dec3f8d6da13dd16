#!/usr/bin/env bash
# index_session.sh DEV OUT_DIR — the index engines' device call: links
# difftest_index and xdnn from a pack_dev.sh folder DEV (as final_session.sh
# does), runs the difftest_index sweep (--quick unless FULL=1; FILTER narrows
# it) with compute-sanitizer memcheck on the oob and gather_bwd cases when
# SAN=1, then `xdnn run --device gpu --check` on graphs/embedding_loss.dnn and
# tests/identities/index_ops_explicit.dnn.
# Logs go to OUT_DIR.
set -uo pipefail
dev=${1:?DEV}; out=${2:?OUT_DIR}
mkdir -p "$out"
cuda=/usr/local/cuda
export LD_LIBRARY_PATH="$(cd "$dev/lib" && pwd):${LD_LIBRARY_PATH:-}"
export XDNN_CACHE_DIR=${XDNN_CACHE_DIR:-/tmp/xdnn-cache}
[ -f "$dev/libxdnn.a.gz" ] && gunzip -f "$dev/libxdnn.a.gz"
L=("$dev/libxdnn.a" -L"$dev/lib" -lcjson -lm -fopenmp -L"$cuda/lib64" -lcudart_static -lstdc++ -ldl -lpthread -lrt)
gcc -std=c11 -D_GNU_SOURCE -O2 -DXDNN_HAVE_CUDA=1 -Iinclude -Isrc -I"$dev/gen" -I"$cuda/include" \
    -o "$dev/difftest_index" tests/gpu/difftest_index.c tests/gpu/diffharness.c "${L[@]}" > "$out/link.log" 2>&1 &
gcc -o "$dev/xdnn" "$dev"/cli/*.o "${L[@]}" >> "$out/link.log" 2>&1 &
wait
[ -x "$dev/difftest_index" ] && [ -x "$dev/xdnn" ] || { echo "link failed"; tail -20 "$out/link.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
sweep=--quick; [ -z "${FULL:-}" ] || sweep=
timeout "${SWEEP_S:-90}" "$dev/difftest_index" $sweep ${FILTER:-} > "$out/difftest_index.log" 2>&1
echo "difftest_index rc=$?"
grep -E "^FAIL" -A3 "$out/difftest_index.log" | cut -c1-400 | head -60
grep -E "passed," "$out/difftest_index.log"
if [ -n "${SAN:-}" ]; then
    timeout "${SAN_S:-60}" compute-sanitizer --tool memcheck --error-exitcode 3 "$dev/difftest_index" --quick oob \
        > "$out/sanitizer.log" 2>&1
    echo "sanitizer rc=$?"
    grep -E "ERROR SUMMARY|passed," "$out/sanitizer.log"
fi
for g in graphs/embedding_loss.dnn tests/identities/index_ops_explicit.dnn; do
    b=$(basename "$g" .dnn)
    timeout "${GRAPH_S:-40}" "$dev/xdnn" run "$g" --device gpu --check -v > "$out/$b.log" 2>&1
    echo "$b --check rc=$?"
    grep -E "chosen|^check|FAIL|error" "$out/$b.log" | head -30
done
