#!/usr/bin/env bash
# dwconv_session.sh DEV OUT — conv_dw v2 (issue 11, session 12: prepared on the CPU, not yet run on a GPU), run
# from the tree's root as `bash tests/gpu/dwconv_session.sh DEV OUT` (DEV: tests/gpu/pack_dev.sh's folder plus
# dt/ (difftest_conv.o, diffharness.o compiled where the library was built) and bench/conv_peer.py copied in).
# (Session 13: v2 is now the default; XDNN_CONV_DW_V2=1 is then a no-op, =0 runs v1.) The switch: XDNN_CONV_DW_V2=1 ran the depthwise forward (and the stride-1 dgrad) of f16/bf16 NHWC 2-D 3x3 / 5x5
# stride 1 / 2 convs on kernels/conv_dw_tile.cu (a thread: 2 or 4 output rows x 2 columns x 8 channels, the
# tile's input rows each loaded once, the next row's loads in flight during this row's FMAs); off (default), and
# for every other shape, v1 (kernels/conv_dw.cu) as before.
#  PART=1 (the first call, ~120 s): the new cases (dwv2: each with the switch on AND off, the id's v2/ and v1/),
#    the conv_dw family in full (dw-) with the switch on and off, compute-sanitizer memcheck on `--quick dwv2`,
#    the MobileNet / EfficientNet depthwise bench rows (difftest_conv --bench convdw_fwd / convdw_dgrad: the
#    2026-11-23 rows of bench/RESULTS-conv.md) on, then off, then bench/conv_peer.py dw (cuDNN, same names) in the
#    same call, and the table (on / off / peer ms, GB/s and % of copy 2976 GB/s).
# DRY=1: the script's own check without a GPU (CPU reference and plans; no memcheck, bench rows planned only).
#
# EXPECTED (written before the first call).  v1's rows (2026-11-23, H100): fwd 32@112 47 %, 96@112 s2 52 %,
# 144@56 20 % (599 GB/s), 192@28 651 GB/s, 384@14 459, 576@14 509, 960@7 429, 5x5 240@28 384, 672@14 s2 294.
# v2 reads each input vector ~3x a tile (3x3 s1, TH 4: 6 rows x 4 columns for 8 outputs) instead of 4.5x through
# L1 and has all of a row's loads (4-6 x 16 B a thread) in flight before its FMAs: the large 3x3 rows toward
# 60-70 % of copy (32@112 0.0365 -> ~0.026 ms; 144@56 0.0966 -> ~0.03); the 7x7 / 14x14 rows get 2-row tiles and
# 16-vector channel slices (960@7 N = 32: 512 blocks of 120 threads, v1 had 1 wave of 256-thread blocks): 430-510
# -> ~800-1200 GB/s, ~0.010 ms at 960@7.  Risk: the 5x5 kernels hold 230-241 registers (TH 4) / 178 (TH 2)
# (ptxas, no spills): 8-12 warps an SM may not hide the loads; if the 5x5 rows lose, the next step is TH 2 for
# 5x5 or the weights as packed pairs.  The stride-2 dgrads stay on v1 (gather): unchanged.  Correctness: every
# dwv2 case passes both ways, the dw- family passes with the switch on (its 2-D 3x3 / 5x5 cases with C % 8 == 0
# then take v2), memcheck 0 errors.
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
dev_build_testers difftest_conv || exit 1
dt=$dev/difftest_conv
dry=${DRY:+--dry}
left() { echo $(( ${BUDGET_S:-150} - (SECONDS - t0) )); }
summary() { grep -E "^FAIL" -A6 "$1" | cut -c1-300 | head -16; echo "$(grep -c "^PASS" "$1") passed, $(grep -c "^FAIL" "$1") failed"; }
PART=${PART:-1}
if [ "$PART" = 1 ]; then
    step "new cases: dwv2 (each with XDNN_CONV_DW_V2=1 and =0, the case sets it)"
    timeout 30 "$dt" $dry dwv2 > "$out/t_dwv2.log" 2>&1; echo "rc=$?"; summary "$out/t_dwv2.log"
    step "the conv_dw family (dw-) with the switch on, then off"
    XDNN_CONV_DW_V2=1 timeout 25 "$dt" $dry dw- > "$out/t_dw_on.log" 2>&1; echo "on rc=$?"; summary "$out/t_dw_on.log"
    XDNN_CONV_DW_V2=0 timeout 20 "$dt" $dry dw- > "$out/t_dw_off.log" 2>&1; echo "off rc=$?"; summary "$out/t_dw_off.log"
    if [ -z "$dry" ]; then
        step "memcheck --quick dwv2"
        timeout 35 compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 10 "$dt" --quick dwv2 \
            > "$out/memcheck.log" 2>&1
        echo "rc=$?"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -6
    fi
    step "bench rows: XDNN_CONV_DW_V2=1, then 0"
    : > "$out/bench_on.log"; : > "$out/bench_off.log"
    for f in convdw_fwd_f16_nhwc convdw_dgrad_f16_nhwc; do
        [ "$(left)" -gt 50 ] || { echo "out of time before $f"; break; }
        XDNN_CONV_DW_V2=1 timeout 20 "$dt" $dry --bench "$f" >> "$out/bench_on.log" 2>&1; echo "$f on rc=$?"
        XDNN_CONV_DW_V2=0 timeout 20 "$dt" $dry --bench "$f" >> "$out/bench_off.log" 2>&1; echo "$f off rc=$?"
    done
    if [ -z "$dry" ] && [ "$(left)" -gt 15 ]; then
        step "peer: bench/conv_peer.py dw"
        PYTHONUNBUFFERED=1 timeout "$(( $(left) - 8 ))" python3 "$dev/conv_peer.py" dw > "$out/peer.log" 2>&1
        echo "rc=$?"; head -1 "$out/peer.log"
    fi
    step "table"
    python3 "$(dirname "$0")/dwconv_table.py" "$out" | tee "$out/summary.txt"
fi
step done
