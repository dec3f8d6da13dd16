#!/usr/bin/env bash
# conv3d11_session.sh DEV OUT — session 11's device calls of the conv3d task (issue 11: the 3-D rows still above
# 1.5x cuDNN).  DEV: tests/gpu/pack_dev.sh's folder plus dt/ (difftest_conv.o, diffharness.o compiled where the
# library was built), dev_env.sh, this script and conv_peer.py (bench/).  (tests/gpu/conv3d_session.sh is
# session 9's.)
# PART=new (the first call):
#  1. correctness: the new cases, "wgmma-w3" (conv_wgrad_wgmma's depth, C % 8 == 4) with dY by TMA and again
#     gathered (XDNN_WGRAD_NO_TMA=1), "olp" (a dgrad's GEMM phases in one launch);
#  2. compute-sanitizer memcheck on --quick wgmma-w3 and --quick olp;
#  3. the zoo (difftest_conv --bench convzoo: the planner's engines, plus the 3-D wgrads forced on
#     conv_wgrad_wgmma and on conv_wgrad_mma), its dgrads again with XDNN_DGRAD_ONE_LAUNCH=0 (the phases one
#     launch each, as before), beside bench/conv_peer.py zoo;
#  4. the whole conv/ family with the time left (SWEEP_F's filters in turn; a later call takes the rest).
# PART=rest: SWEEP_F's filters (the conv/ groups the first call did not reach), then the N = 256 step's masked
# dgrads (conv_step_dgmask_bf16_nhwc) as placed and with XDNN_DGRAD_ONE_LAUNCH=1, beside conv_peer.py step256.
# BUDGET_S: the call's seconds (default 170).  A table last (summary.txt); every log in OUT/logs.tgz.
#
# EXPECTED (written before the first call; ratios against cuDNN in the same call; before: RESULTS-conv.md,
# session 9, "After wip/conv3d"):
#  - 3-D wgrads on conv_wgrad_wgmma (x gathered by cp.async, dY by TMA; was conv_wgrad_mma): gather-bound like
#    the 2-D gather path (~32 KB a microsecond an SM, 64 x 256 tile 1.7 us a slice): C64 K64 32^3 0.110 ->
#    ~0.075 ms (1.67x -> ~1.15x), C256 K256 8^3 0.057 -> ~0.038 (1.52x -> ~1.0x), C128 16^3 0.052 -> ~0.037,
#    the stride-2 one 0.037 -> ~0.03; C32 K32 64^3 (K = 32: half the 64-row tile idle) ~0.30 against mma's 0.37.
#  - the C = 4 stem's wgrad on conv_wgrad_wgmma (C padded to 8 in the gather by 8-byte cp.async halves): 1.254
#    -> ~0.45 ms (2.47x -> ~0.9x): 14.5 GFLOP on a 64 x 256 tile a quarter useful (K 32 of 64, C 4 of 8).
#  - the stride-2 3-D dgrad (N2 C64 K128 32^3 s2) with its eight GEMM phases in one launch and their eight
#    weight packs in one: 0.129 -> ~0.05-0.06 ms (2.03x -> ~1.1x): 64 tiles x 54 slices over 132 SMs in one
#    wave-and-a-half instead of eight launches each filling half the SMs; the A/B (=0) reproduces ~0.13.
#  - other 3-D rows unchanged within noise (their D3 kernel now reads its geometry from a one-phase table).
#  - the N = 256 step's stride-2 masked dgrads forced into one launch (=1): slower (cp.async gather and the
#    register store instead of TMA and the staged store) -- why the default leaves them.
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
dev_link_tester difftest_conv || exit 1
dt=$dev/difftest_conv
dry=${DRY:+--dry} # DRY=1: the script's own check on a machine without a GPU (CPU reference and plans only)
left() { echo $(( ${BUDGET_S:-170} - (SECONDS - t0) )); }
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
memcheck() { # memcheck FILTER LIMIT_S
    timeout "$2" compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 10 "$dt" $dry --quick "$1" \
        >> "$out/memcheck.log" 2>&1
    echo "memcheck --quick $1 rc=$?"
}
# join: BENCH rows of $1 with the PEER rows of peer.log (a forced row "NAME_engine TAG" against "NAME TAG")
join_peer() {
    awk '/^PEER/ {peer[$2" "$3] = $4}
         /^BENCH/ {k = $2; sub(/_(wgmma|mma)$/, "", k); b[++n] = $2" "$3; key[n] = k" "$3; e[n] = $4; ms[n] = $5; st[n] = $6}
         END {for (i = 1; i <= n; i++) { p = peer[key[i]]; printf "%-46s %-17s %8.4f %8.4f %6.2f %s\n", b[i], e[i],
              ms[i], p, (p > 0 ? ms[i] / p : 0), st[i] } }' "$out/peer.log" "$1"
}

if [ "$part" = new ]; then
    step "new cases: wgmma-w3 (dY by TMA, then gathered), olp"
    timeout 40 "$dt" $dry wgmma-w3 > "$out/new.log" 2>&1; echo "wgmma-w3 rc=$?"
    XDNN_WGRAD_NO_TMA=1 timeout 25 "$dt" $dry wgmma-w3 >> "$out/new.log" 2>&1; echo "wgmma-w3 NO_TMA rc=$?"
    timeout 40 "$dt" $dry olp >> "$out/new.log" 2>&1; echo "olp rc=$?"
    summary "$out/new.log"
    step "memcheck"
    memcheck wgmma-w3 "${SAN_S:-25}"; memcheck olp "${SAN_S:-25}"
    grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -8
    step "bench: convzoo, then its dgrads with XDNN_DGRAD_ONE_LAUNCH=0"
    timeout "${BENCH_S:-45}" "$dt" $dry --bench convzoo > "$out/bench.log" 2>&1; echo "rc=$?"
    XDNN_DGRAD_ONE_LAUNCH=0 timeout 20 "$dt" $dry --bench "convzoo_dgrad_bf16 u3d" > "$out/bench_phases.log" 2>&1
    echo "rc=$?"
    step "peer: conv_peer.py zoo"
    PYTHONUNBUFFERED=1 timeout "${PEER_S:-40}" python3 "$dev/conv_peer.py" zoo > "$out/peer.log" 2>&1
    echo "rc=$?"; head -1 "$out/peer.log"
    step "conv/ sweep with the time left"
    sweep "$out/sweep.log" 4 ${SWEEP_F:-conv/dgrad conv/wgrad conv/fwd}
    summary "$out/sweep.log"
    { echo "== zoo (xdnn ms, cuDNN ms, ratio)"; join_peer "$out/bench.log"
      echo "== dgrads, XDNN_DGRAD_ONE_LAUNCH=0"; join_peer "$out/bench_phases.log"; } > "$out/table.txt"
else
    step "conv/ sweep: ${SWEEP_F:-conv/}"
    sweep "$out/sweep.log" "${STEP_KEEP_S:-60}" ${SWEEP_F:-conv/}
    summary "$out/sweep.log"
    step "bench: the step's stride-2 masked dgrads as placed, then XDNN_DGRAD_ONE_LAUNCH=1"
    : > "$out/bench.log"; : > "$out/bench_one.log"
    for f in c128h56k128r3s2 c256h28k256r3s2 c512h14k512r3s2; do
        timeout 15 "$dt" $dry --bench "conv_step_dgmask_bf16_nhwc n256$f" >> "$out/bench.log" 2>&1
        XDNN_DGRAD_ONE_LAUNCH=1 timeout 15 "$dt" $dry --bench "conv_step_dgmask_bf16_nhwc n256$f" \
            >> "$out/bench_one.log" 2>&1; echo "$f rc=$?"
    done
    step "peer: conv_peer.py step256"
    PYTHONUNBUFFERED=1 timeout $(( $(left) - 3 )) python3 "$dev/conv_peer.py" step256 > "$out/peer.log" 2>&1
    echo "rc=$?"; head -1 "$out/peer.log"
    { echo "== step masked dgrads (xdnn ms, cuDNN ms, ratio)"; join_peer "$out/bench.log"
      echo "== XDNN_DGRAD_ONE_LAUNCH=1"; join_peer "$out/bench_one.log"; } > "$out/table.txt"
fi
step "tables"
cat "$out/table.txt"
(cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v -e '^logs.tgz$' -e '^table.txt$' -e '^device.txt$'))
step done
