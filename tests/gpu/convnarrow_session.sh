#!/usr/bin/env bash
# convnarrow_session.sh DEV OUT — the device calls of issue 11's narrow conv tiles (session 11) on conv_igemm_wgmma.
# DEV: pack_dev.sh's folder plus dt/ (difftest_conv.o, diffharness.o), conv_peer.py, this script and dev_env.sh.
# PART=profile (call 1, the tree before the change): ncu on one launch of the 64@56 N = 256 forward (the row
#   conv_step_fwd_bf16_nhwc n256c64h56): speed of light, memory workload (L2 <-> SM bytes), warp stalls.
# PART=check (calls 2 and 3): the new cases (CASES: wgr- in call 2, wgrt- in call 3) with the change on and off
#   (OFF_ENV, the A/B switch: XDNN_CONV_WGMMA_NO_RESW=1 in call 2, XDNN_CONV_WGMMA_ROWTILE=0 in call 3); memcheck
#   --quick on them; the bench rows (BENCH_F: the step's 3x3 forwards and the masked dgrads it changes, the N =
#   32 f16 rows) on, then off (OFF_F); ncu on the 64@56 forward; bench/conv_peer.py step256 and dgrad in the same
#   call; then the conv/ family with the call's rest.
#
# Call 2 (8ba79ac, resident weights: for K <= 64 the whole w loaded once per CTA, the ring carrying x alone).
# EXPECTED (written before the first call).  The 64@56 forward (BN 64, 9 slices) moves per 128 x 64 tile 144 KiB
# of x's im2col slices and 72 KiB of weights from L2: 1.39 GB in 0.276 ms, ~5 TB/s, near what the L2 gives the
# SMs, so the kernel is L2 -> SM bound, not tensor bound (8 m64n64k16 per slice: ~256 cycles of the ~1280 it
# takes).  With the weights resident (72 KiB loaded once per CTA) a tile moves 144 KiB: ~1.5x fewer bytes, 64@56
# toward ~0.19 ms (1.1x cuDNN's 0.1775), the masked 64@56 dgrad the same way (0.318 -> ~0.22 ms), the 1x1 K = 64
# forwards / dgrads (1 or 4 slices) within noise; the BN = 128 rows do not change (not taken there).
# OUTCOME: the bytes fell as predicted (ncu: 935 MB from L2 to the SMs, was 1.39 GB) and the time did not
# (0.2739 -> 0.2820 ms, 0.97x; masked dgrad 0.97x): not the L2.  Each 64-deep slice takes ~1300 cycles on the
# 64- and the 128-channel layers alike (one im2col box of 128 pixels a slice either way; w's tiled box beside it
# cost nothing): the im2col walk of 128 pixels.  Reverted.
# Call 3 (row tiles: x's slice as whole output rows by one tiled box, kernels/conv_igemm_wgmma_sm90a.cu).
# EXPECTED: if the im2col map's per-pixel walk sets the ~1300 cycles a slice, a tiled box of 2 x 56 / 4 x 28
# contiguous pixel rows (12.5% of the 128-row MMA idle) loads faster: 64@56 fwd 0.274 -> ~0.20 ms (1.15x cuDNN),
# 128@28 0.150 -> ~0.12 (1.0x), the masked dgrads at 56 and 28 alike; 14x14 and 7x7 rows (98 of 128 rows) and
# stride 2 keep the im2col map: unchanged.
# OUTCOME: correct (26/26 each way, conv/ 798/798, memcheck 0) and slower on every row it took (0.89-0.92x:
# 64@56 0.2690 -> 0.3011 ms; 128@28 0.1504 -> 0.1672): per slice 0.616 us against 0.63 (the same), with 14%
# more tiles of 112 rows.  Neither the bytes nor the load mode set the slice's time.  Reverted
# (bench/RESULTS-conv.md, session 11).
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
dev_link_tester difftest_conv || exit 1
dt=$dev/difftest_conv
dry=${DRY:+--dry} # DRY=1: the script's own check without a GPU (CPU reference and plans only)
left() { echo $(( ${BUDGET_S:-170} - (SECONDS - t0) )); }
part=${PART:-check}
summary() { grep -E "^FAIL" -A6 "$1" | cut -c1-300 | head -24; echo "$(grep -c "^PASS" "$1") passed, $(grep -c "^FAIL" "$1") failed (all runs)"; }

if [ "$part" = profile ]; then
    row="conv_step_fwd_bf16_nhwc n256c64h56"
    step "bench $row"
    timeout 30 "$dt" $dry --bench "$row" > "$out/bench.log" 2>&1; echo "rc=$?"; grep -E "^BENCH" "$out/bench.log" | cut -c1-200
    if [ -z "$dry" ]; then
        step "ncu: one kcw_fwd_kernel launch of $row"
        timeout 60 ncu --launch-skip 3 --launch-count 1 -k regex:kcw_fwd --section SpeedOfLight --section WarpStateStats \
            --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section ComputeWorkloadAnalysis \
            --metrics lts__t_bytes.sum.per_second,lts__t_sectors_srcunit_tex.sum,l1tex__m_xbar2l1tex_read_bytes.sum.per_second,smsp__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active \
            "$dt" --bench "$row" > "$out/ncu.log" 2>&1
        echo "rc=$?"
        grep -E "Duration|Throughput|Stall|Issued|Cycles Per|lts__|l1tex__m|gmma|Hit Rate|Busy|Bandwidth" "$out/ncu.log" | head -60
    fi
fi
if [ "$part" = check ]; then
    cs=${CASES:-/wgrt-}; offenv=${OFF_ENV:-XDNN_CONV_WGMMA_ROWTILE=0}
    step "correctness: $cs on, then off ($offenv)"
    timeout 25 "$dt" $dry "$cs" > "$out/sweep_wgr.log" 2>&1; echo "on rc=$?"; summary "$out/sweep_wgr.log"
    env "$offenv" timeout 15 "$dt" $dry "$cs" > "$out/sweep_wgr_off.log" 2>&1; echo "off rc=$?"
    summary "$out/sweep_wgr_off.log"
    step "memcheck --quick $cs"
    timeout "${SAN_S:-20}" compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 10 "$dt" $dry --quick "$cs" \
        > "$out/memcheck.log" 2>&1
    echo "rc=$?"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -6
    step "bench: on, then off ($offenv) on the rows it takes"
    : > "$out/bench_on.log"; : > "$out/bench_off.log"
    IFS='|' read -r -a bf <<< "${BENCH_F:-conv_step_fwd_bf16_nhwc n256|conv_step_dgmask_bf16_nhwc n256c64h56|conv_step_dgmask_bf16_nhwc n256c128h28|conv_fwd_f16_nhwc n32c64h56k64r3|conv_dgrad_f16_nhwc n32c64h56k64r3}"
    for f in "${bf[@]}"; do
        [ "$(left)" -gt "${PEER_S:-70}" ] || { echo "out of time before $f"; break; }
        timeout 40 "$dt" $dry --bench "$f" >> "$out/bench_on.log" 2>&1; echo "$f rc=$?"
    done
    IFS='|' read -r -a bo <<< "${OFF_F:-conv_step_fwd_bf16_nhwc n256c64|conv_step_fwd_bf16_nhwc n256c128h28|conv_step_dgmask_bf16_nhwc n256c64h56|conv_step_dgmask_bf16_nhwc n256c128h28|conv_fwd_f16_nhwc n32c64h56k64r3|conv_dgrad_f16_nhwc n32c64h56k64r3}"
    for f in "${bo[@]}"; do
        [ "$(left)" -gt "${PEER_S:-70}" ] || { echo "out of time before $f (off)"; break; }
        env "$offenv" timeout 40 "$dt" $dry --bench "$f" >> "$out/bench_off.log" 2>&1; echo "$f off rc=$?"
    done
    if [ -z "$dry" ] && [ "${NCU:-1}" = 1 ]; then # one launch of the 64@56 forward, as in call 1
        step "ncu: one kcw_fwd_kernel launch of conv_step_fwd_bf16_nhwc n256c64h56"
        timeout "${NCU_S:-20}" ncu --launch-skip 3 --launch-count 1 -k regex:kcw_fwd --section SpeedOfLight --section WarpStateStats \
            --metrics lts__t_bytes.sum.per_second,l1tex__m_xbar2l1tex_read_bytes.sum.per_second,l1tex__m_xbar2l1tex_read_bytes.sum \
            "$dt" --bench "conv_step_fwd_bf16_nhwc n256c64h56" > "$out/ncu.log" 2>&1
        echo "rc=$?"; grep -E "Duration|Throughput|Issued|Cycles Per|xbar2l1tex|lts__" "$out/ncu.log" | head -14
    fi
    : > "$out/peer.log"
    for ps in ${PEER_SETS:-step256 dgrad}; do # one process a set: step256 first (the script runs its sets in file order)
        step "peer: bench/conv_peer.py $ps"
        [ -n "$dry" ] || PYTHONUNBUFFERED=1 timeout "$(( $(left) - ${SWEEP_S:-60} ))" python3 "$dev/conv_peer.py" \
            "$ps" >> "$out/peer.log" 2>&1
        echo "rc=$?"; grep -c "^PEER" "$out/peer.log"
    done
    step "the conv/ family (on; within the call's rest)"
    timeout "$(( $(left) - 5 ))" "$dt" $dry conv/ > "$out/sweep.log" 2>&1; echo "rc=$? (124: cut short)"; summary "$out/sweep.log"
    step "tables"
    {
        echo "== correctness"
        for l in sweep_wgr sweep_wgr_off sweep; do [ -f "$out/$l.log" ] && echo "$l: $(summary "$out/$l.log" | tail -1)"; done
        grep -E "ERROR SUMMARY" "$out/memcheck.log" | tail -1
        echo "== bench (ms; on = this tree, off = $offenv; cuDNN: conv_peer.py; TF/s of on)"
        dev_ab_table "$out/peer.log" "$out/bench_on.log" "$out/bench_off.log"
        grep -hE "^BENCH.*FAILED" "$out/bench_on.log" "$out/bench_off.log" | cut -c1-200 | head -5
        grep -hE "^BENCH.*n256c64h56" "$out/bench_on.log" "$out/bench_off.log" | cut -c1-400
    } > "$out/summary.txt" 2>&1
    cat "$out/summary.txt"
    (cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v -e '^logs.tgz$' -e '^summary.txt$' -e '^device.txt$'))
fi
step done
