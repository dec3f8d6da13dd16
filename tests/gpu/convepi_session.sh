#!/usr/bin/env bash
# convepi_session.sh DEV OUT — the device calls of conv_igemm_wgmma's staged store (issue 11: y through
# shared-memory staging rows and one bulk copy per row, so the consumers start the next tile's wgmmas at once;
# XDNN_CONV_WGMMA_NO_STAGE=1 is the register store as before), sized for a 200-second call that builds nothing.
# DEV: tests/gpu/pack_dev.sh's folder plus dt/ (difftest_conv.o, difftest_norm.o, diffharness.o compiled where
# the library was built), conv_peer.py and conv_step_table.py (bench/).
#  1. correctness: difftest_conv's conv_igemm_wgmma cases (wgs-: the staged store's odd shapes and its register
#     twin; wg-, wgp-, wgd-, dge-, the wgmma epilogue cases), difftest_norm genstats/ (the statistics in the store);
#  2. compute-sanitizer memcheck on the --quick wgs- cases and two dgrad ones;
#  3. PART=layers (first call): the step's wgmma partition shapes at N = 256 (difftest_conv --bench conv_step_,
#     staged and _regs) beside cuDNN (bench/conv_peer.py step256); PART=step (second call): the ResNet-50
#     training step at N = 256, staged (and with the register store if time is left).
# A table last (summary.txt); logs in OUT/logs.tgz.  BUDGET_S: the whole call's seconds (default 190).
#
# EXPECTED (written before the first call).  The step's 51 wgmma partitions write ~1.55 G output elements (dp's
# zeros included); at the fitted ~2.1 ps per element of the register store that is ~3.3 ms of the 13.4 ms in which
# no wgmma runs.  With the store overlapped, the 1x1 masked dgrads and the projection dgrads (reduction 4-16
# slices, store-bound) should drop 25-40%, the 3x3 forward/dgrads (9-72 slices) 5-15%; the BN = 128 shapes lose a
# stage (6 -> 5).  The 51 partitions: 13.4 -> ~11.0 ms (-1.5 to -3 ms), the step 54.4 -> ~52 ms.
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
dev_build_testers difftest_conv difftest_norm || exit 1
left() { echo $(( ${BUDGET_S:-190} - (SECONDS - t0) )); }
part=${PART:-layers}
summary() { grep -E "^FAIL" -A6 "$1" | cut -c1-300 | head -16; grep -E "passed," "$1" | tail -1; }

step "difftest_conv wgmma cases"
: > "$out/sweep.log"
for f in wgs- dge- conv/fwd/wg- conv/fwd/wgp-c wgp-stem-n2 wgp-1d wgp-sk3 conv/dgrad/wgd- wgmma- wgp-epi; do
    [ "$part" = step ] && [ "$f" != wgs- ] && continue # the second call: the staged store's own cases
    timeout "${SWEEP_S:-30}" "$dev/difftest_conv" "$f" >> "$out/sweep.log" 2>&1; echo "$f rc=$? $(tail -1 "$out/sweep.log")"
done
summary "$out/sweep.log"
if [ "$part" = layers ]; then # the second call runs the same binary: these once
    step "difftest_norm genstats/"
    timeout 40 "$dev/difftest_norm" genstats/ > "$out/genstats.log" 2>&1; echo "rc=$?"; summary "$out/genstats.log"
    step "memcheck --quick wgs- and a folded-zero dgrad case"
    timeout "${SAN_S:-35}" compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 10 "$dev/difftest_conv" \
        --quick wgs- > "$out/memcheck.log" 2>&1
    echo "rc=$?"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -8
    timeout 20 compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 10 "$dev/difftest_conv" \
        --quick "wgd-c24-k40-1x1-s2-fold" > "$out/memcheck2.log" 2>&1
    echo "rc=$?"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck2.log" | head -4
fi

if [ "$part" = layers ]; then
    dev_bench_peer "$dev/difftest_conv" conv_step_ step256 "$(( $(left) - 75 ))" 55 # staged and _regs; cuDNN
    if [ "$(left)" -gt 25 ] && command -v ncu > /dev/null; then # one staged launch of a store-bound shape
        step "ncu: one kcw_fwd_kernel launch, 1x1 dgrad + mask at 14x14"
        timeout "$(( $(left) - 5 ))" ncu --launch-count 1 -k regex:kcw_fwd --section SpeedOfLight \
            --section WarpStateStats --section MemoryWorkloadAnalysis "$dev/difftest_conv" --bench \
            "conv_step_dgmask_bf16_nhwc n256c256h14k1024r1s1" > "$out/ncu.log" 2>&1
        echo "rc=$?"; grep -E "Duration|Throughput|Stall|Issued Warp" "$out/ncu.log" | head -14
    fi
else
    dev_link_cli || exit 1
    for ab in staged regs; do # each partition also timed alone: the per-layer table of the step's 51
        lim=$(( $(left) - ${TAIL_S:-45} )); [ "$lim" -gt 85 ] && [ "$ab" = staged ] && lim=85
        [ "$lim" -gt 30 ] || { echo "no time for the $ab step"; break; }
        off=0; [ "$ab" = staged ] || off=1
        dev_step "$ab" "$lim" XDNN_CONV_WGMMA_NO_STAGE=$off -- --iters "${ITERS:-5}" --warmup 2
        python3 tests/gpu/step_by_engine.py "$out/step_$ab.json" 2>&1 | head -1
    done
    step "bench: the register store on the dgrad shapes (the first call ran out of time for them)"
    timeout "$(( $(left) - 5 ))" "$dev/difftest_conv" --bench "${BENCH_F:-dgmask_bf16_nhwc_regs}" \
        > "$out/bench.log" 2>&1; echo "rc=$? $(grep -c '^BENCH.* ok ' "$out/bench.log") rows"
fi
dev_tables "$dev/conv_step_table.py"
