#!/usr/bin/env bash
# bwdfold_session.sh DEV OUT — the device call of sdpa_bwd_wgmma's folded side passes (issue 10, session 10:
# XDNN_SDPA_BWD_FOLD), sized for one call of under 200 s.  DEV as ragged_session.sh's (pack_dev.sh, dt/*.o
# compiled where the library was built, py/ the peer).
#  1. correctness, in parallel (the CPU references on the device's cores): every sdpa_bwd_wgmma case with the
#     fold (default), the same with XDNN_SDPA_BWD_FOLD=0, and the --quick ones in the deterministic mode;
#  2. the bench rows b4h16s4096d128 plain / causal and b2h32k8s4096d128 causal (Llama), fold on and off, and
#     with XDNN_SDPA_BWD_MAIN=0 (the side passes alone: prep, memset, dq conversion), then bench/sdpa_peer.py's
#     cuDNN and flash on those shapes in the same call;
#  3. compute-sanitizer memcheck on the --quick fold- cases (small shapes).
# Logs under OUT (summary.txt and logs.tgz); a summary on stdout.  SWEEP_S, BENCH_S, PEER_S, SAN_S: limits.
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
exec > >(tee "$out/summary.txt") 2>&1
dev_link_tester difftest_seq || exit 1
dt=$dev/difftest_seq
step "correctness: fold on, fold off, deterministic (in parallel)"
OMP_NUM_THREADS=5 timeout "${SWEEP_S:-80}" "$dt" sdpa_bwd_wgmma > "$out/fold1.log" 2>&1 & p1=$!
XDNN_SDPA_BWD_FOLD=0 OMP_NUM_THREADS=5 timeout "${SWEEP_S:-80}" "$dt" sdpa_bwd_wgmma > "$out/fold0.log" 2>&1 & p2=$!
XDNN_SDPA_BWD_DETERMINISTIC=1 OMP_NUM_THREADS=5 timeout "${SWEEP_S:-80}" "$dt" --quick sdpa_bwd_wgmma > "$out/det.log" 2>&1 & p3=$!
wait $p1 $p2 $p3 # (not a bare wait: the tee of stdout is a child too)
for f in fold1 fold0 det; do
    echo "$f: ran $(grep -cE '^(PASS|FAIL)' "$out/$f.log"), fold- $(grep -E '^PASS' "$out/$f.log" | grep -c fold-) passed;" \
        "$(grep -E 'passed,' "$out/$f.log")"
    grep -E "^FAIL" "$out/$f.log" | cut -c1-400 | head -8
done
step "bench (fold on / off, main kernel skipped)"
rows="wgmma/sdpa_bwd_bf16/b4h16k16s4096d128 wgmma/sdpa_bwd_bf16_causal/b4h16k16s4096d128 wgmma/sdpa_bwd_bf16_causal/b2h32k8s4096d128"
for cfg in "FOLD=1" "FOLD=0" "FOLD=1 MAIN=0" "FOLD=0 MAIN=0"; do
    env=(); for kv in $cfg; do env+=("XDNN_SDPA_BWD_$kv"); done
    for r in $rows; do
        echo "## $cfg $r" >> "$out/bench.log"
        env "${env[@]}" timeout 25 "$dt" --bench "bench/$r" >> "$out/bench.log" 2>&1
    done
done
awk '/^## /{row=$NF; cfg=$0; sub(/^## /, "", cfg); sub(/ [^ ]*$/, "", cfg)}
     /TIME .*sdpa_bwd_wgmma/{printf "%-14s %-48s %s ms %s TFLOP/s\n", cfg, row, $5, $11}' "$out/bench.log"
step "peer (cuDNN, flash)"
(cd "$dev/py" && SDPA_PEER_SHAPES=b4h16k16s4096d128,b2h32k8s4096d128 PYTHONUNBUFFERED=1 timeout "${PEER_S:-45}" \
    python3 sdpa_peer.py) > "$out/peer.log" 2>&1
echo "peer rc=$?"; grep '_bwd' "$out/peer.log" | cut -c1-160
step "compute-sanitizer memcheck (--quick fold-)"
timeout "${SAN_S:-40}" compute-sanitizer --tool memcheck --print-limit 10 "$dt" --quick fold- > "$out/memcheck.log" 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -12
step done
(cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v -e '^logs.tgz$' -e '^summary.txt$' -e '^bench.log$'))
