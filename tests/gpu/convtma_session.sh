#!/usr/bin/env bash
# convtma_session.sh DEV OUT — the device calls of conv_igemm_wgmma's TMA producer (issue 11, session 10: x's
# im2col slices by one cp.async.bulk.tensor im2col load per k slice, w's rows by a tiled one, issued by one
# thread; XDNN_CONV_WGMMA_NO_TMA=1 is the 128-thread cp.async gather as before), sized for a 200-second call that
# builds nothing.  DEV: tests/gpu/pack_dev.sh's folder plus dt/ (difftest_conv.o, diffharness.o compiled where the
# library was built), dev_env.sh, this script and conv_peer.py (bench/).
# PART=layers (the first call):
#  1. correctness, TMA on: the new wgt- cases (M tails, tiles across images, P*Q < 128, pads 0 / 2 / asymmetric,
#     strides 2 and 3 on odd maps, dilation, 1-D, K = 8, C = 72 on cp.async, split-K, dgrad phases), then every
#     other conv_igemm_wgmma case (wg-, wgp-, wgd-, wgs-, dge-, wg3, the fused-epilogue wgmma- ones);
#  2. compute-sanitizer memcheck on the --quick wgt- cases;
#  3. the ResNet-50 3x3 rows as the planner places them, TMA on and off in the same call (difftest_conv --bench:
#     the N = 256 step's forwards and masked dgrads, conv_step_{fwd,dgmask}_bf16_nhwc; the N = 32 f16 forwards
#     and dgrads, conv_{fwd,dgrad}_f16_nhwc n32), then cuDNN on the same shapes (bench/conv_peer.py dgrad step256);
#  4. the same conv_igemm_wgmma cases with XDNN_CONV_WGMMA_NO_TMA=1 (the cp.async path, whose code moved).
#  BENCH_F ('|'-separated tester filters) and PEER_SETS (conv_peer.py's sets) narrow step 3 to what a call has
#  time for; PEER_S: the seconds kept for the peer, OFF_S for step 4.  NCU_F: a bench row to profile one TMA
#  launch of with ncu (before step 4; NCU_S seconds).
# PART=sweep (a later call): the whole conv/ family with TMA on, then with it off; then step 3 if BENCH_F is set.
# A table last (summary.txt); logs in OUT/logs.tgz.  BUDGET_S: the whole call's seconds (default 190).
#
# EXPECTED (written before the first call).  Session 9's ncu put the 3x3 mainloop's limit on the producer's
# gather (SM 28-31%, 42% of stalls on L1TEX scoreboards; 130-348 TFLOP/s, 17-46% of the roofline, cuDNN 1.6-2.75x
# faster).  One TMA issue per operand per slice frees the 128 producer threads of 8 address computations and 16
# cp.asyncs per slice and lets the copy engine run ST (5-8) slices ahead with no per-thread LAG: the 3x3
# forwards at 128 channels and up 1.3-1.6x faster (toward ~0.12-0.14 ms at N = 256, cuDNN 0.095-0.116), the
# 64-channel 56x56 layer (BN 64, one k slice per tap) ~1.5x (0.45 -> ~0.30 ms, still ~1.8x cuDNN: its tile is
# narrow), the masked 3x3 dgrads (stride-1: one phase) similarly 1.2-1.5x, the stride-2 dgrads (4 phases, each
# a small GEMM) 1.1-1.3x.  The 1x1 masked dgrads: C = 256..2048 dy channels, TMA too, store-bound: ~1.0-1.1x.
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
dev_link_tester difftest_conv || exit 1
dt=$dev/difftest_conv
dry=${DRY:+--dry} # DRY=1: the script's own check on a machine without a GPU (CPU reference and plans only)
left() { echo $(( ${BUDGET_S:-190} - (SECONDS - t0) )); }
part=${PART:-layers}
# the failures, and the cases that ran (a run cut short by its limit prints no count of its own)
summary() { grep -E "^FAIL" -A6 "$1" | cut -c1-300 | head -24; echo "$(grep -c "^PASS" "$1") passed, $(grep -c "^FAIL" "$1") failed (all runs)"; }
# the conv_igemm_wgmma cases (ids: conv/DIR/NAME/...): the new TMA ones first
WG="/wgt /wg- /wgp- /wgd- /wgs- dge- /wg3 /wgmma-"

sweep() { # sweep LOG TMA_OFF LIMIT_S FILTER...: each filter's cases, one process each, within LIMIT_S in all
    local log=$1 off=$2 lim=$3 end f; shift 3; end=$(( SECONDS + lim ))
    for f in "$@"; do
        [ $(( end - SECONDS )) -gt 3 ] || { echo "out of time before $f"; break; }
        XDNN_CONV_WGMMA_NO_TMA=$off timeout $(( end - SECONDS )) "$dt" $dry "$f" >> "$log" 2>&1
        echo "$f rc=$? $(grep -E 'passed,' "$log" | tail -1)"
    done
}

bench_peer() { # the ResNet-50 rows of BENCH_F, TMA on then off, each in its own process; then the peer
    step "bench: ResNet-50 3x3 rows, TMA on and off"
    : > "$out/bench_tma.log"; : > "$out/bench_notma.log"
    IFS='|' read -r -a bf <<< "${BENCH_F:-conv_step_fwd_bf16_nhwc n|conv_step_dgmask_bf16_nhwc n|conv_fwd_f16_nhwc n32|conv_dgrad_f16_nhwc n32}"
    for f in "${bf[@]}"; do
        for off in 0 1; do
            [ "$(left)" -gt "${PEER_S:-60}" ] || { echo "out of time before $f ($off)"; break 2; }
            lg=$out/bench_tma.log; [ "$off" = 0 ] || lg=$out/bench_notma.log
            XDNN_CONV_WGMMA_NO_TMA=$off timeout 40 "$dt" $dry --bench "$f" >> "$lg" 2>&1; echo "$f off=$off rc=$?"
        done
    done
    step "peer: bench/conv_peer.py ${PEER_SETS:-dgrad step256}"
    PYTHONUNBUFFERED=1 timeout "$(( $(left) - ${OFF_S:-22} ))" python3 "$dev/conv_peer.py" ${PEER_SETS:-dgrad step256} \
        > "$out/peer.log" 2>&1
    echo "rc=$?"; head -1 "$out/peer.log"
}

if [ "$part" = layers ]; then
    step "correctness, TMA on: $WG"
    sweep "$out/sweep_tma.log" 0 "${SWEEP_S:-45}" $WG; summary "$out/sweep_tma.log"
    step "memcheck --quick /wgt"
    timeout "${SAN_S:-22}" compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 10 "$dt" $dry --quick /wgt \
        > "$out/memcheck.log" 2>&1
    echo "rc=$?"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -8
    bench_peer
    if [ -n "${NCU_F:-}" ] && command -v ncu > /dev/null; then # one TMA launch of the bench row NCU_F
        step "ncu: one kcw_fwd_kernel launch of $NCU_F"
        timeout "${NCU_S:-30}" ncu --launch-skip 3 --launch-count 1 -k regex:kcw_fwd --section SpeedOfLight \
            --section WarpStateStats --section MemoryWorkloadAnalysis "$dt" --bench "$NCU_F" > "$out/ncu.log" 2>&1
        echo "rc=$?"; grep -E "Duration|Throughput|Stall|Issued Warp|Cycles Per" "$out/ncu.log" | head -16
    fi
    step "correctness, TMA off (cp.async): $WG"
    sweep "$out/sweep_notma.log" 1 "$(( $(left) - 6 ))" $WG; summary "$out/sweep_notma.log"
else # the whole family each way (SWEEP_S each), then BENCH_F's rows beside the peer if BENCH_F is set
    step "the conv/ family, TMA on"
    sweep "$out/sweep_tma.log" 0 "${SWEEP_S:-80}" /wgt conv/; summary "$out/sweep_tma.log" # wgt: the table's end
    step "the conv/ family, TMA off"
    sweep "$out/sweep_notma.log" 1 "${SWEEP_S:-80}" conv/; summary "$out/sweep_notma.log"
    [ -n "${BENCH_F:-}" ] && OFF_S=${OFF_S:-6} bench_peer
fi

step "tables"
{
    echo "== correctness"
    for l in sweep_tma sweep_notma; do [ -f "$out/$l.log" ] && echo "$l: $(summary "$out/$l.log" | tail -1)"; done
    [ -f "$out/memcheck.log" ] && grep -E "ERROR SUMMARY" "$out/memcheck.log" | tail -1
    if [ -f "$out/bench_tma.log" ]; then
        echo "== bench (ms; on = TMA producer, off = XDNN_CONV_WGMMA_NO_TMA=1; cuDNN: conv_peer.py; TF/s of on)"
        dev_ab_table "$out/peer.log" "$out/bench_tma.log" "$out/bench_notma.log"
        grep -hE "^BENCH.*FAILED" "$out/bench_tma.log" "$out/bench_notma.log" | cut -c1-200 | head -5
        grep -hE "^BENCH" "$out/bench_tma.log" | head -2 | cut -c1-400
    fi
} > "$out/summary.txt" 2>&1
cat "$out/summary.txt"
(cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v -e '^logs.tgz$' -e '^summary.txt$' -e '^device.txt$'))
step done
