#!/usr/bin/env bash
# serve_session.sh DEV OUT — the serving-attention device call (issue 14:
# paged K/V and ragged THD sequences on sdpa_splitkv; bench/RESULTS-sdpa.md).
# DEV is what tests/gpu/pack_dev.sh packs plus dt/difftest_seq.o and
# dt/diffharness.o compiled where the library was built: both programs are
# linked here from objects only, so the call does not depend on the headers
# of the tree it runs in (other engineers' unfinished edits).
#  1. difftest_seq's serving cases and the sdpa_splitkv cases (regressions)
#     against the CPU reference;
#  2. compute-sanitizer memcheck on the --quick serving cases;
#  3. graphs/paged_decode.dnn with `xdnn run --check -v`;
#  4. the paged decode bench (difftest_seq --bench bench/decode/paged) and
#     the PyTorch peer on the same GPU (bench/sdpa_paged_peer.py).
# SKIP_SWEEP, SKIP_SAN, SKIP_GRAPH, SKIP_BENCH, SKIP_PEER leave one out.
set -uo pipefail
. "$(dirname "$0")/dev_env.sh" # dev, out, step, the device's name
cuda=/usr/local/cuda
[ -f "$dev/libxdnn.a.gz" ] && gunzip -f "$dev/libxdnn.a.gz"
L=("$dev/libxdnn.a" -L"$dev/lib" -lcjson -lm -fopenmp -L"$cuda/lib64" -lcudart_static -lstdc++ -ldl -lpthread -lrt)
gcc -o "$dev/xdnn" "$dev"/cli/*.o "${L[@]}" > "$out/link.log" 2>&1 &
gcc -o "$dev/difftest_seq" "$dev"/dt/*.o "${L[@]}" >> "$out/link.log" 2>&1 &
wait
[ -x "$dev/difftest_seq" ] && [ -x "$dev/xdnn" ] || { echo "link failed"; tail -20 "$out/link.log"; exit 1; }
if [ -z "${SKIP_SWEEP:-}" ]; then
    step sweep
    for f in ${FILTER:-serve sdpa_splitkv}; do
        timeout "${SWEEP_S:-90}" "$dev/difftest_seq" "$f" >> "$out/difftest.log" 2>&1
        echo "difftest $f rc=$?"
    done
    grep -E "^FAIL" "$out/difftest.log" | cut -c1-700 | head -20
    grep -E "serve" "$out/difftest.log" | cut -c1-200 | head -20
    grep -E "passed," "$out/difftest.log"
fi
if [ -z "${SKIP_SAN:-}" ]; then
    step sanitizer
    timeout "${SAN_S:-80}" compute-sanitizer --tool memcheck --print-limit 10 "$dev/difftest_seq" --quick serve \
        > "$out/memcheck.log" 2>&1
    echo "memcheck rc=$?"
    grep -E "ERROR SUMMARY|passed,|^FAIL" "$out/memcheck.log" | head -10
fi
if [ -z "${SKIP_GRAPH:-}" ]; then
    step graph
    timeout 60 "$dev/xdnn" run graphs/paged_decode.dnn --check -v > "$out/graph.log" 2>&1
    echo "paged_decode.dnn --check rc=$?"
    grep -iE "sdpa|check|mismatch|error" "$out/graph.log" | head -12
fi
if [ -z "${SKIP_BENCH:-}" ]; then
    step bench
    DIFFTEST_ITERS=${ITERS:-20} timeout "${BENCH_S:-90}" "$dev/difftest_seq" --bench "${BENCH_FILTER:-bench/decode/paged}" \
        > "$out/bench.log" 2>&1
    echo "bench rc=$?"
    grep -E "^(PASS|FAIL)|TIME|GRAPH" "$out/bench.log" | sed 's/engines=.*//' | cut -c1-240
fi
if [ -z "${SKIP_PEER:-}" ]; then
    step peer
    PYTHONUNBUFFERED=1 timeout "${PEER_S:-90}" python3 bench/sdpa_paged_peer.py > "$out/peer.log" 2>&1
    echo "peer rc=$?"
    cat "$out/peer.log"
fi
step done
