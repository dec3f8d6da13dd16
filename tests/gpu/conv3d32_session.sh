#!/usr/bin/env bash
# conv3d32_session.sh DEV OUT — session 12's device calls of the conv3d32 task (issue 11: the 3-D UNet's K = 32
# rows still above 1.5x cuDNN).  DEV: tests/gpu/pack_dev.sh's folder plus dt/ (difftest_conv.o, diffharness.o
# compiled where the library was built), this script and conv_peer.py (bench/).  Run from the root of a tree
# whose tests/gpu/dev_env.sh it sources (the lead's checkout: this script travels in DEV).
# PART=new (the first call):
#  1. correctness: the new cases "wgn" (conv_igemm_wgmma's 32-wide tile, the C % 8 != 0 dgrad store);
#  2. compute-sanitizer memcheck on --quick wgn;
#  3. bench, one call for every side: the 3-D UNet rows as the planner places them (convzoo_{fwd,dgrad}_bf16
#     u3d), the K = 32 rows forced on conv_igemm_wgmma (32-wide tile) and on conv_igemm (before), the forced
#     wgmma rows again with XDNN_CONV_WGMMA_BN32=0 (the 64-wide tile: the A/B), beside bench/conv_peer.py zoo;
#  4. the whole conv/ family with the time left (SWEEP_F's filters in turn; a later call takes the rest).
# PART=rest: SWEEP_F's filters (what the first call did not reach), then the bench rows again (BENCH_AGAIN=1).
# BUDGET_S: the call's seconds (default 225).  A table last (table.txt); every log in OUT/logs.tgz.
#
# EXPECTED (written before the first call; ratios against cuDNN in the same call; before: RESULTS-conv.md,
# session 11, conv_igemm 0.4086 / 0.4175 ms fwd / dgrad against cuDNN 0.1706 / 0.1810, the stem 0.8354 /
# 1.5575 against 0.6599 / 0.6388):
#  - the 64-wide tile (session 9) ran the K = 32 layer at ~0.87 us a 64-deep slice (the 3-D cp.async gather; 1.05x
#    slower than conv_igemm), half of each wgmma idle.  The 32-wide tile halves the wgmma and w's gather (2 rows
#    of 16 bytes a producer thread, not 4), and its 20 KiB stages fit 11 in the ring (8 at BN 64: 9 slices in
#    flight a producer thread, not 6).  If the slice time is the gather's latency-bound issue, ~0.6 us a slice:
#    C32 K32 64^3 fwd 0.41 -> ~0.30-0.34 ms (1.8-2.0x cuDNN), dgrad (one stride-1 phase, same GEMM) 0.42 ->
#    ~0.31-0.35; the 64-wide A/B (=0) reproduces ~0.43-0.44.  Not the lead's 1.2x: the gather, not the MMA,
#    is what a slice waits on (session 11's narrow-tile section), and this leaves it as it was.
#  - the C = 4 stem fwd (packed C 4 -> 8, 216-deep reduction: 3.4 slices) on the 32-wide tile: 0.835 ->
#    ~0.75 ms (was 0.940 on the 64-wide tile); now the planner's pick.
#  - the stem dgrad forced on conv_igemm_wgmma (dx C = 4 stored in pairs, 32-wide tile 1/8 used, 14 slices a
#    128-row tile over 2.1 M rows): ~1.2-1.5 ms against conv_igemm's 1.56; the planner keeps conv_igemm (the
#    idle-column charge, 8x) unless this measures faster.
#  - other 3-D rows unchanged (their tiles did not change).
set -uo pipefail
. tests/gpu/dev_env.sh "$@"
dev_link_tester difftest_conv || exit 1
dt=$dev/difftest_conv
dry=${DRY:+--dry} # DRY=1: the script's own check on a machine without a GPU (CPU reference and plans only)
left() { echo $(( ${BUDGET_S:-225} - (SECONDS - t0) )); }
part=${PART:-new}
# the failures, and the cases that ran (a run cut short by its limit prints no count of its own)
summary() { grep -E "^FAIL" -A6 "$1" | cut -c1-300 | head -24; echo "$(grep -c "^PASS" "$1") passed, $(grep -c "^FAIL" "$1") failed"; }
sweep() { # sweep LOG KEEP_S FILTER...: each filter's cases in turn, leaving KEEP_S seconds of the call
    local log=$1 keep=$2 f; shift 2
    for f in "$@"; do
        [ $(( $(left) - keep )) -gt 5 ] || { echo "out of time before $f"; break; }
        timeout $(( $(left) - keep )) "$dt" $dry "$f" >> "$log" 2>&1
        echo "$f rc=$? $(grep -E 'passed,' "$log" | tail -1)"
    done
}
# join: BENCH rows of $1 with the PEER rows of peer.log (a forced row "NAME_engine TAG" against "NAME TAG")
join_peer() {
    awk '/^PEER/ {peer[$2" "$3] = $4}
         /^BENCH/ {k = $2; sub(/_(wgmma|igemm)$/, "", k); b[++n] = $2" "$3; key[n] = k" "$3; e[n] = $4; ms[n] = $5; st[n] = $6}
         END {for (i = 1; i <= n; i++) { p = peer[key[i]]; printf "%-46s %-26s %8.4f %8.4f %6.2f %s\n", b[i], e[i],
              ms[i], p, (p > 0 ? ms[i] / p : 0), st[i] } }' "$out/peer.log" "$1"
}
bench() { # bench LOG FILTER LIMIT_S [VAR=VALUE...]
    local log=$1 f=$2 lim=$3; shift 3
    env "$@" timeout "$lim" "$dt" $dry --bench "$f" >> "$log" 2>&1; echo "$f $* rc=$? ok=$(grep -c '^BENCH.* ok ' "$log")"
}
bench_all() {
    step "bench: the planner's u3d rows, the K = 32 rows forced, then the forced wgmma rows with XDNN_CONV_WGMMA_BN32=0"
    : > "$out/bench.log"; : > "$out/bench_bn64.log"
    bench "$out/bench.log" "convzoo_fwd_bf16 u3d" 25
    bench "$out/bench.log" "convzoo_dgrad_bf16 u3d" 25
    bench "$out/bench.log" "convzoo_fwd_bf16_" 25
    bench "$out/bench.log" "convzoo_dgrad_bf16_" 25
    bench "$out/bench_bn64.log" "convzoo_fwd_bf16_wgmma" 15 XDNN_CONV_WGMMA_BN32=0
    bench "$out/bench_bn64.log" "convzoo_dgrad_bf16_wgmma" 15 XDNN_CONV_WGMMA_BN32=0
    step "peer: conv_peer.py zoo"
    PYTHONUNBUFFERED=1 timeout "${PEER_S:-45}" python3 "$dev/conv_peer.py" zoo > "$out/peer.log" 2>&1
    echo "rc=$?"; head -1 "$out/peer.log"
    { echo "== u3d as planned, and forced (_wgmma: 32-wide tile; _igemm: conv_igemm) (xdnn ms, cuDNN ms, ratio)"
      join_peer "$out/bench.log"
      echo "== forced conv_igemm_wgmma with XDNN_CONV_WGMMA_BN32=0 (the 64-wide tile)"; join_peer "$out/bench_bn64.log"
    } > "$out/table.txt"
}

if [ "$part" = new ]; then
    step "new cases: wgn"
    timeout 60 "$dt" $dry wgn > "$out/new.log" 2>&1; echo "wgn rc=$?"
    summary "$out/new.log"
    step "memcheck --quick wgn"
    timeout "${SAN_S:-45}" compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 10 "$dt" $dry --quick wgn \
        > "$out/memcheck.log" 2>&1
    echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -8
    bench_all
    step "conv/ sweep with the time left"
    sweep "$out/sweep.log" 4 ${SWEEP_F:-conv/dgrad conv/fwd conv/wgrad}
    summary "$out/sweep.log"
else
    step "conv/ sweep: ${SWEEP_F:-conv/}"
    sweep "$out/sweep.log" "${KEEP_S:-4}" ${SWEEP_F:-conv/}
    summary "$out/sweep.log"
    [ -n "${BENCH_AGAIN:-}" ] && bench_all
fi
step "tables"
[ -f "$out/table.txt" ] && cat "$out/table.txt"
(cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v -e '^logs.tgz$' -e '^table.txt$' -e '^device.txt$'))
step done
