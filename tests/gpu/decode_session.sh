#!/usr/bin/env bash
# decode_session.sh DEV OUT — the split-KV attention's device call
# (sdpa_splitkv, bench/RESULTS-sdpa.md 2026-11-24).  DEV is what
# tests/gpu/pack_dev.sh packs (libxdnn.a.gz, the CLI's objects, lib/libcjson):
# xdnn and difftest_seq are linked there with gcc, as final_session.sh does.
#  1. difftest_seq's sdpa_splitkv and sdpa_flash_tf32 cases against the CPU
#     reference (FILTER: words, one tester run each);
#  2. the decode / chunked-prefill bench on sdpa_splitkv and sdpa_flash_wgmma
#     (difftest_seq --bench bench/decode) and the PyTorch peer on the same GPU
#     (bench/sdpa_decode_peer.py);
#  3. the shipped transformer block, f32 attention, as shipped and with tf32
#     allowed (TF32_GRAPH, a copy with tf32=true; its engine as chosen and
#     sdpa_flash_tf32 forced): `xdnn run --check -v`.
# Every step under its own timeout; SKIP_SWEEP, SKIP_BENCH, SKIP_PEER,
# SKIP_GRAPH leave one out.  Run from the root of the tree whose library DEV
# holds.  Logs under OUT.
set -uo pipefail
. "$(dirname "$0")/dev_env.sh" # dev, out, step, the device's name
step link
cuda=/usr/local/cuda
[ -f "$dev/libxdnn.a.gz" ] && gunzip -f "$dev/libxdnn.a.gz"
L=("$dev/libxdnn.a" -L"$dev/lib" -lcjson -lm -fopenmp -L"$cuda/lib64" -lcudart_static -lstdc++ -ldl -lpthread -lrt)
gcc -o "$dev/xdnn" "$dev"/cli/*.o "${L[@]}" > "$out/link.log" 2>&1 &
gcc -std=c11 -D_GNU_SOURCE -O2 -DXDNN_HAVE_CUDA=1 -Iinclude -Isrc -I"$cuda/include" -o "$dev/difftest_seq" \
    tests/gpu/difftest_seq.c tests/gpu/diffharness.c "${L[@]}" >> "$out/link.log" 2>&1 &
wait
[ -x "$dev/difftest_seq" ] && [ -x "$dev/xdnn" ] || { echo "link failed"; tail -20 "$out/link.log"; exit 1; }
if [ -z "${SKIP_SWEEP:-}" ]; then
    step sweep
    for f in ${FILTER:-sdpa_splitkv sdpa_flash_tf32}; do # several words: one tester run each
        timeout "${SWEEP_S:-90}" "$dev/difftest_seq" "$f" >> "$out/difftest.log" 2>&1
        echo "difftest $f rc=$?"
    done
    grep -E "tf32/causal/f32/@bshd/b2h4k4q64kv64" "$out/difftest.log" | cut -c1-400
    grep -E "^FAIL" "$out/difftest.log" | cut -c1-600 | head -20
    grep -E "passed," "$out/difftest.log"
fi
if [ -z "${SKIP_BENCH:-}" ]; then
    step bench
    DIFFTEST_ITERS=${ITERS:-20} timeout "${BENCH_S:-100}" "$dev/difftest_seq" --bench "${BENCH_FILTER:-bench/decode}" \
        > "$out/bench.log" 2>&1
    echo "bench rc=$?"
    grep -E "^(PASS|FAIL)|TIME|GRAPH" "$out/bench.log" | sed 's/engines=.*//' | cut -c1-220
fi
if [ -z "${SKIP_PEER:-}" ]; then
    step peer
    PYTHONUNBUFFERED=1 timeout "${PEER_S:-90}" python3 bench/sdpa_decode_peer.py > "$out/peer.log" 2>&1
    echo "peer rc=$?"
    cat "$out/peer.log"
fi
if [ -z "${SKIP_GRAPH:-}" ]; then
    step graph
    # as shipped (f32 attention, tf32 not allowed), and the tf32 copy with the
    # engine the planner picks and with sdpa_flash_tf32 forced
    i=0
    for run in "graphs/transformer_block.dnn" "$TF32_GRAPH" "$TF32_GRAPH --engine sdpa=sdpa_flash_tf32"; do
        [ -n "${run%% *}" ] || continue
        i=$((i + 1)); echo "-- $run"
        timeout 40 "$dev/xdnn" run --check -v $run > "$out/graph-$i.log" 2>&1
        echo "check rc=$?"
        grep -E "chosen|^ *o |stats|reference|check" "$out/graph-$i.log" | cut -c1-200 | head -30
    done
fi
step done
