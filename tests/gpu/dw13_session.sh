#!/usr/bin/env bash
# dw13_session.sh DEV OUT — conv_dw v2 the default, its stride-2 dgrad by stride phases, the weight prologue's loads
# in flight (issue 11, session 13), run from the tree's root as `bash DEV/dw13_session.sh DEV OUT` (DEV:
# tests/gpu/pack_dev.sh's folder plus dt/ (difftest_conv.o, diffharness.o compiled where the library was built)
# and bench/conv_peer.py copied in; this tree's tests/gpu/dev_env.sh is sourced by its relative path).
# What changed since session 13's first call (tests/gpu/dwconv_session.sh, /tmp/p13/data/dwconv_call1):
#  - v2 is the default (XDNN_CONV_DW_V2=0: v1);
#  - the stride-2 dgrad runs on v2 by stride phases (TR: a tile of 2 dx rows x 2 columns from an even p + pad, one
#    row of each phase; 2x2 dy vectors for 4 dx outputs at 3x3, 3x3 at 5x5) instead of v1's gather (one dy load
#    a tap, 11 % / 4 % of copy, 1.27-1.33x cuDNN's time);
#  - the block's weights load with 8 loads a thread in flight, channel-major (w's [C][R][S] order: contiguous),
#    where the loop issued one dependent-on-the-store load at a time: 9 (3x3) / 25 (5x5) L2 round trips per block
#    before any FMA, ~5-15 us of the 5x5 row's 52 us at 2 resident blocks an SM (240 registers);
#  - XDNN_CONV_DW_TH=2 (temporary, this call's A/B, removed after): TH 2 at every size at stride 1 (the 5x5 28x28
#    row: 178 against 240 registers).
# EXPECTED (written before the call): correctness: dwv2 74/74, dwph + dw5 (new, 28 + 4 cases: 7 stride-2 dgrads with odd /
# even / asymmetric / 0 / 3 pads and odd sizes, one 5x5 fwd at 29x30, each dtype with v2 and v1) 32/32 with the
# v2 cases saying "stride phases", dw- 125/125 default and =0, memcheck 0 errors.  Bench (v1's dgrads move 36 MB
# (144@56 s2) and 11 MB (672@14 5x5 s2)): dgrad 144@56 s2 0.110 -> ~0.020 ms (60 % of copy; 0.25x cuDNN's
# 0.083), 672@14 5x5 s2 0.095 -> ~0.010 ms (0.15x cuDNN); the forward rows 5-30 % faster from the prologue
# (most on the small 7x7 / 14x14 rows and the 5x5, whose blocks did less work per weight loaded): 5x5 240@28
# 0.052 -> ~0.040 ms (0.85x cuDNN), TH 2 there another ~10 % if registers (occupancy) were the limit.
# Then ncu (SpeedOfLight / memory / occupancy / warp states) on the fwd 144@56 and 32@112 rows: why 37-54 % of copy.
# OUTCOME of PART=1 (88.7 s, 2026-11-25 ~04:00): all passed (dwv2 74, dwph 28, dw5 4, dw- 125 + 125, memcheck 0
# errors); the stride-2 dgrads 3.0-3.3x v1, 0.41x cuDNN; the weight prologue no gain (0-13 % slower than call 1's
# v2 rows, run-to-run noise ~5 %: reverted); TH 2 slower at every size >= 28 (removed); ncu (fwd 144@56, 32@112):
# 12 warps an SM (168 registers: 3 blocks), 41 % of the stall cycles on L1TEX scoreboards, DRAM 33-34 %.
# PART=2 (<= 150 s): XDNN_CONV_DW_OCC=1 (temporary; f16): __launch_bounds__(128, 4) for the 3x3 TH 4 / stride-2
# kernels (128 registers, 52 B spilled at TH 4: 4 blocks = 16 warps an SM) and (128, 3) for 5x5 (168: 3 blocks;
# TH 4 spills 88 B). EXPECTED: the latency-bound rows follow the warps, 12 -> 16 (+33 %): 144@56 s1 0.053 ->
# ~0.042, 32@112 0.032 -> ~0.027; the 5x5 240@28 (8 -> 12 warps) 0.054 -> ~0.045 (0.9x cuDNN) unless the spills
# eat it.  Correctness: dwv2 / dwph / dw5 with the switch (f16 cases take the new instances) and without.
# OUTCOME of PART=2 (81.8 s): all passed both ways (dwv2 74, dwph 28, dw5 4, dw- 125; memcheck --quick dw with
# the switch 101 passed, 0 errors); the bound paid at 5x5 (240@28 s1 0.0518 -> 0.0476 ms, 672@14 s2 0.0288 ->
# 0.0215) and not at 3x3 (32@112 -5 %, 144@56 +8 %, 192@28 +16 %): kept for the 5x5 kernels (all dtypes, no
# switch), the 3x3 ones stay unbounded; XDNN_CONV_DW_OCC removed.
# DRY=1: the script's own check without a GPU (CPU reference and plans; no memcheck, no ncu, bench rows planned).
set -uo pipefail
. tests/gpu/dev_env.sh
dev_build_testers difftest_conv || exit 1
dt=$dev/difftest_conv
dry=${DRY:+--dry}
left() { echo $(( ${BUDGET_S:-285} - (SECONDS - t0) )); }
summary() { grep -E "^FAIL" -A6 "$1" | cut -c1-300 | head -16; echo "$(grep -c "^PASS" "$1") passed, $(grep -c "^FAIL" "$1") failed"; }
PART=${PART:-1}
if [ "$PART" = 1 ]; then
    step "dwv2 (each case sets XDNN_CONV_DW_V2: unset = v2, 0 = v1) and the new dwph"
    timeout 30 "$dt" $dry dwv2 > "$out/t_dwv2.log" 2>&1; echo "rc=$?"; summary "$out/t_dwv2.log"
    timeout 30 "$dt" $dry dwph > "$out/t_dwph.log" 2>&1; echo "rc=$?"; summary "$out/t_dwph.log"
    timeout 20 "$dt" $dry dw5- > "$out/t_dw5.log" 2>&1; echo "rc=$?"; summary "$out/t_dw5.log"
    step "the conv_dw family (dw-): default, then XDNN_CONV_DW_V2=0"
    timeout 25 "$dt" $dry dw- > "$out/t_dw_on.log" 2>&1; echo "on rc=$?"; summary "$out/t_dw_on.log"
    XDNN_CONV_DW_V2=0 timeout 20 "$dt" $dry dw- > "$out/t_dw_off.log" 2>&1; echo "off rc=$?"; summary "$out/t_dw_off.log"
    if [ -z "$dry" ]; then
        step "memcheck --quick dwph, dw5-, dwv2 (filter and seconds)"
        for fs in "dwph 30" "dw5- 15" "dwv2 35"; do
            set -- $fs
            timeout "$2" compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 10 "$dt" --quick "$1" \
                > "$out/memcheck_$1.log" 2>&1
            echo "$1 rc=$?"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck_$1.log" | head -6
        done
    fi
    step "bench rows: default (v2), XDNN_CONV_DW_V2=0 (v1), XDNN_CONV_DW_TH=2 (fwd)"
    : > "$out/bench_on.log"; : > "$out/bench_off.log"; : > "$out/bench_th2.log"
    for f in convdw_fwd_f16_nhwc convdw_dgrad_f16_nhwc; do
        [ "$(left)" -gt 90 ] || { echo "out of time before $f"; break; }
        timeout 20 "$dt" $dry --bench "$f" >> "$out/bench_on.log" 2>&1; echo "$f on rc=$?"
        XDNN_CONV_DW_V2=0 timeout 20 "$dt" $dry --bench "$f" >> "$out/bench_off.log" 2>&1; echo "$f off rc=$?"
    done
    [ "$(left)" -gt 80 ] && { XDNN_CONV_DW_TH=2 timeout 20 "$dt" $dry --bench convdw_fwd_f16_nhwc >> "$out/bench_th2.log" 2>&1; echo "th2 rc=$?"; }
    if [ -z "$dry" ] && [ "$(left)" -gt 40 ]; then
        step "peer: bench/conv_peer.py dw"
        PYTHONUNBUFFERED=1 timeout "$(( $(left) - 30 ))" python3 "$dev/conv_peer.py" dw > "$out/peer.log" 2>&1
        echo "rc=$?"; head -1 "$out/peer.log"
    fi
    if [ -z "$dry" ]; then
        for row in n32c144h56r3s1 n32c32h112r3s1; do
            [ "$(left)" -gt 25 ] || { echo "no time for ncu $row"; break; }
            step "ncu: convdw_fwd $row"
            timeout "$(( $(left) - 12 ))" ncu --kernel-name regex:kdwt --launch-count 1 \
                --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
                --section WarpStateStats "$dt" --bench "convdw_fwd_f16_nhwc $row" > "$out/ncu_$row.log" 2>&1
            echo "rc=$?"; grep -E "Memory Throughput|DRAM Throughput|Duration|Achieved Occupancy|Registers Per|Theoretical Occ|L1/TEX Hit|L2 Hit|Stall Long|Warp Cycles Per Issued" "$out/ncu_$row.log" | head -14
        done
    fi
    step "table"
    python3 "$dev/dwconv_table.py" "$out" | tee "$out/summary.txt"
else
    step "PART 2: dwv2, dwph, dw5- with XDNN_CONV_DW_OCC=1, then without; dw- (default)"
    for f in dwv2 dwph dw5-; do
        XDNN_CONV_DW_OCC=1 timeout 30 "$dt" $dry "$f" > "$out/t_occ_$f.log" 2>&1; echo "$f occ rc=$?"
        summary "$out/t_occ_$f.log"
        timeout 30 "$dt" $dry "$f" > "$out/t_$f.log" 2>&1; echo "$f default rc=$?"; summary "$out/t_$f.log"
    done
    timeout 25 "$dt" $dry dw- > "$out/t_dw.log" 2>&1; echo "dw- rc=$?"; summary "$out/t_dw.log"
    if [ -z "$dry" ]; then
        step "memcheck --quick dw (XDNN_CONV_DW_OCC=1: the spilling instances)"
        XDNN_CONV_DW_OCC=1 timeout 25 compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 10 "$dt" \
            --quick dw > "$out/memcheck_occ.log" 2>&1
        echo "rc=$?"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck_occ.log" | head -6
    fi
    step "bench rows: default, XDNN_CONV_DW_OCC=1, XDNN_CONV_DW_V2=0"
    : > "$out/bench_on.log"; : > "$out/bench_off.log"; : > "$out/bench_occ.log"
    for f in convdw_fwd_f16_nhwc convdw_dgrad_f16_nhwc; do
        timeout 20 "$dt" $dry --bench "$f" >> "$out/bench_on.log" 2>&1; echo "$f on rc=$?"
        XDNN_CONV_DW_OCC=1 timeout 20 "$dt" $dry --bench "$f" >> "$out/bench_occ.log" 2>&1; echo "$f occ rc=$?"
        XDNN_CONV_DW_V2=0 timeout 20 "$dt" $dry --bench "$f" >> "$out/bench_off.log" 2>&1; echo "$f off rc=$?"
    done
    if [ -z "$dry" ] && [ "$(left)" -gt 20 ]; then
        step "peer: bench/conv_peer.py dw"
        PYTHONUNBUFFERED=1 timeout "$(( $(left) - 8 ))" python3 "$dev/conv_peer.py" dw > "$out/peer.log" 2>&1
        echo "rc=$?"; head -1 "$out/peer.log"
    fi
    step "table"
    python3 "$dev/dwconv_table.py" "$out" bench_occ.log OCC | tee "$out/summary.txt"
fi
step done
# a call brings back at most 8 files: the table, and the rest tarred
(cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v -e '^logs.tgz$' -e '^summary.txt$'))
