#!/usr/bin/env bash
# dropout_session2.sh DEV OUT — the second device call of session 10's dropout
# mask (packed as dropout_session.sh says): an Nsight Compute profile of the
# Hopper forward with dropout 0.1 and without (b4h16s4096d128 bf16, one launch
# each: what limits the dropout variant), then the regression of every engine
# whose code changed, beyond the first call's --quick: sdpa_flash_wgmma's GEN
# variant with a bias alone (its exponential loop was regrouped in pairs of
# key groups), sdpa_bwd_flash and sdpa_flash in full, sdpa_flash_tf32, and
# sdpa_naive --quick.  Logs under OUT, a summary on stdout.
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
dev_link_tester difftest_seq || exit 1
dt=$dev/difftest_seq
for tag in dropout plain; do
    step "ncu: sdpa_fwd_wgmma, $tag"
    DIFFTEST_ITERS=2 timeout 40 ncu --kernel-name regex:sdpa_fwd_wgmma --launch-skip 1 --launch-count 1 \
        --section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats \
        --section WarpStateStats --section SchedulerStats --section LaunchStats \
        "$dt" --bench "bench/masks/sdpa_flash_wgmma/sdpa_fwd_bf16_$tag/" > "$out/ncu_$tag.log" 2>&1
    echo "ncu rc=$?"
    grep -E "Duration|Executed Ipc A|Issue Slots Busy|Compute \(SM\) Throughput|Tensor|Executed Instructions  |No Eligible|Registers Per|Warp Cycles Per Issued|Local Memory Spilling|Stall" \
        "$out/ncu_$tag.log" | head -14
done
step "regression"
for f in sdpa_flash_wgmma/bias sdpa_bwd_flash sdpa_flash/ sdpa_flash_tf32; do
    timeout 28 "$dt" "$f" >> "$out/reg.log" 2>&1
    echo "$f rc=$? $(grep -E 'passed,' "$out/reg.log" | tail -1)"
done
timeout 15 "$dt" --quick sdpa_naive >> "$out/reg.log" 2>&1
echo "sdpa_naive --quick rc=$? $(grep -E 'passed,' "$out/reg.log" | tail -1)"
grep -E "^FAIL" -A6 "$out/reg.log" | cut -c1-300 | head -20
echo "regression: $(grep -cE '^PASS' "$out/reg.log") passed, $(grep -cE '^FAIL' "$out/reg.log") failed"
step done
