#!/usr/bin/env bash
# bwdfold_session.sh DEV OUT — the device call of sdpa_bwd_wgmma's folded side passes (issue 10, session 10:
# XDNN_SDPA_BWD_FOLD), sized for one call of under 200 s.  DEV as ragged_session.sh's (pack_dev.sh, dt/*.o
# compiled where the library was built, py/ the peer).
#  1. correctness, in parallel (the CPU references on the device's cores): every sdpa_bwd_wgmma case with the
#     fold at the end of each block (default) and in the loop (XDNN_SDPA_BWD_FOLD=2), the --quick ones with
#     XDNN_SDPA_BWD_FOLD=0 and in the deterministic mode, compute-sanitizer memcheck on the --quick fold- cases;
#  2. bench/sdpa_peer.py's cuDNN and flash on b4h16s4096d128 and b2h32k8s4096d128;
#  3. the bench rows b4h16s4096d128 plain / causal and b2h32k8s4096d128 causal (Llama), fold 1, 0 and 2.
# (Call 1 also timed XDNN_SDPA_BWD_MAIN=0, the side passes alone: dropped for time.)
# Logs under OUT (summary.txt and logs.tgz); a summary on stdout.  SWEEP_S, PEER_S: limits.
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
exec > >(tee "$out/summary.txt") 2>&1
dev_link_tester difftest_seq || exit 1
dt=$dev/difftest_seq
step "correctness: fold at block end (1), in the loop (2), off (0, --quick), deterministic (--quick), memcheck (in parallel)"
run_sweep() { # TAG FOLD [tester args...]
    local tag=$1 fold=$2; shift 2
    XDNN_SDPA_BWD_FOLD=$fold OMP_NUM_THREADS=3 timeout "${SWEEP_S:-60}" "$dt" "$@" > "$out/$tag.log" 2>&1
}
run_sweep fold1 1 sdpa_bwd_wgmma & p1=$!
run_sweep fold2 2 sdpa_bwd_wgmma & p2=$!
run_sweep fold0 0 --quick sdpa_bwd_wgmma & p3=$!
XDNN_SDPA_BWD_DETERMINISTIC=1 run_sweep det 1 --quick sdpa_bwd_wgmma & p4=$!
OMP_NUM_THREADS=3 timeout "${SWEEP_S:-60}" compute-sanitizer --tool memcheck --print-limit 10 "$dt" --quick fold- \
    > "$out/memcheck.log" 2>&1 & p5=$!
wait $p1 $p2 $p3 $p4 $p5 # (not a bare wait: the tee of stdout is a child too)
for f in fold1 fold2 fold0 det; do
    echo "$f: ran $(grep -cE '^(PASS|FAIL)' "$out/$f.log"), fold- $(grep -E '^PASS' "$out/$f.log" | grep -c fold-) passed;" \
        "$(grep -E 'passed,' "$out/$f.log")"
    grep -E "^FAIL" "$out/$f.log" | cut -c1-400 | head -8
done
echo "memcheck:"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -12
step "peer (cuDNN, flash)"
(cd "$dev/py" && SDPA_PEER_SHAPES=b4h16k16s4096d128,b2h32k8s4096d128 PYTHONUNBUFFERED=1 timeout "${PEER_S:-45}" \
    python3 sdpa_peer.py) > "$out/peer.log" 2>&1
echo "peer rc=$?"; grep '_bwd' "$out/peer.log" | cut -c1-160
step "bench (fold 1, 0, 2)"
rows="wgmma/sdpa_bwd_bf16/b4h16k16s4096d128 wgmma/sdpa_bwd_bf16_causal/b2h32k8s4096d128 wgmma/sdpa_bwd_bf16_causal/b4h16k16s4096d128"
for cfg in "FOLD=1" "FOLD=0" "FOLD=2"; do
    env=(); for kv in $cfg; do env+=("XDNN_SDPA_BWD_$kv"); done
    for r in $rows; do
        [ "$cfg" = FOLD=2 ] && [ "${r#*causal/b4h16}" != "$r" ] && continue # time: mode 2 on two rows
        echo "## $cfg $r" >> "$out/bench.log"
        env "${env[@]}" timeout 25 "$dt" --bench "bench/$r" >> "$out/bench.log" 2>&1
    done
done
awk '/^## /{row=$NF; cfg=$0; sub(/^## /, "", cfg); sub(/ [^ ]*$/, "", cfg)}
     /TIME .*sdpa_bwd_wgmma/{d=$0; sub(/.*Dv=/, "Dv=", d); printf "%-8s %-48s %-16s %s ms %s TFLOP/s\n", cfg, row, d, $5, $11}' \
    "$out/bench.log"
step done
(cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v -e '^logs.tgz$' -e '^summary.txt$' -e '^bench.log$' -e '^peer.log$'))
