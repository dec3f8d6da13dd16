#!/usr/bin/env bash
# conv3dtma_session.sh DEV OUT — session 13's device call of the conv3d task (issue 11: the 3-D UNet's layers
# within 1.5x of cuDNN).  conv_igemm_wgmma's 3-D code (the D3 instances: 3-D convs, the 32-wide tile) gets the
# TMA producer the 1-/2-D code has had since session 10: x through a 5-d im2col map (one thread, one bulk copy a
# tap and slice; C = 32: two taps' 32-channel boxes a slice, 64-byte swizzled halves), w through a tiled map;
# XDNN_CONV_WGMMA_TMA3D=0 is the 128-thread cp.async gather as before.  DEV: tests/gpu/pack_dev.sh's folder plus
# dt/ (difftest_conv.o, diffharness.o compiled where the library was built), this script and conv_peer.py.  Run
# from the root of a tree whose tests/gpu/dev_env.sh it sources (the lead's checkout).
#  1. correctness: the new cases "tm3" (on and off inside), every 3-D case ("/3d": wg3, wgn's, the one-launch
#     dgrads', the other engines') with the switch on (the default) and off, wgn (its 2-D cases too) and the 1-/2-D
#     TMA cases (wgt: the 4-d producer's code was reshaped);
#  2. compute-sanitizer memcheck on --quick tm3;
#  3. bench: the 3-D UNet rows as the planner places them (convzoo_{fwd,dgrad}_bf16 u3d), on and off, the K = 32
#     rows forced on conv_igemm, beside bench/conv_peer.py zoo (cuDNN) in the same call;
#  4. the tester's whole sweep with the time left (BUDGET_S, the call's: 280).
# PART=ncu (the second call): Nsight Compute's speed-of-light, memory, compute and warp-state sections of one
# launch each: the C32 forward with the switch on and off, the C64 forward on.
# A table last (table.txt); every log in OUT/logs.tgz.
#
# EXPECTED (written before the call; before = session 12's call 1, 3977763: C32 K32 64^3 fwd / dgrad 0.398 /
# 0.406 ms on the 32-wide tile, cuDNN 0.166 / 0.173; C64 K64 32^3 0.0975 / 0.1050, cuDNN 0.064 / 0.101):
#  - the 3-D gather runs ~0.92 us a 64-deep slice whatever the tile (the per-pixel cp.async address work and
#    its L1TEX waits, 128 threads x 8 rows); in 2-D the same change took the slice to 0.43-0.64 us (1.35-1.63x,
#    session 10).  The bytes from L2 do not change (each x pixel still read 27 times, 20 KiB a slice on the
#    32-wide tile), and the C = 32 boxes have 64-byte rows (half the 2-D ones'), so less than 2-D's gain:
#    C32 K32 64^3 fwd / dgrad 0.40 -> ~0.26-0.31 ms (1.6-1.9x cuDNN; 1.5x needs 0.25), C64 K64 32^3 fwd / dgrad
#    ~1.3x faster (0.098 / 0.105 -> ~0.075 / 0.08), C128 16^3 / C256 8^3 (split-K, few tiles) 1.1-1.3x, the
#    stride-2 forward ~1.2x.  Unchanged (gather): the C = 4 stem (packed to C = 8) and the stride-2 dgrad (its
#    eight phases in one launch).  Off (=0): session 12's times within noise.
#  - correctness: every case passes on and off; memcheck clean.
# OUTCOME (call 1, 89 s, c2888f2): every case passed (tm3 30/30, "/3d" 194/194 on and 194/194 off, wgn 29/29, wgt
#  27/27, the whole sweep 1370/1370, memcheck --quick tm3 16 cases 0 errors).  On/off 1.14-1.51x on every row the
#  map serves: C32 fwd 0.376 -> 0.269 ms (1.59x cuDNN's 0.169), dgrad 0.380 -> 0.276 (1.54x of 0.179), C64 fwd
#  0.100 -> 0.066 (0.98x), dgrad 0.107 -> 0.072 (0.72x), C128 / C256 / stride-2 fwd 1.14-1.27x (0.45-0.62x cuDNN),
#  and the C = 4 stem's dgrad (dy's 32 channels: two taps a slice; not expected) 1.394 -> 0.995 (1.58x).  The
#  stem forward and the stride-2 dgrad: unchanged (gather), as expected.  The default stays on.
# OUTCOME (call 2, PART=ncu, 17 s): C32 on 317 us at ncu's 1.5 GHz (off 463): L2 40% of peak (hit 96%), DRAM 5%,
#  SM issue 32% (the ALU pipe's 35%: mbarrier polling), ~1100 cycles a 20 KiB slice (~19 B/clk an SM; C64 ~21):
#  no unit saturated; the copy engine's im2col rate an SM sets the slice time.
set -uo pipefail
. tests/gpu/dev_env.sh "$@"
dev_link_tester difftest_conv || exit 1
dt=$dev/difftest_conv
if [ -n "${DRY:-}" ]; then # DRY=1: checked where there is no GPU, the tester's --dry (CPU reference, plans)
    dt=$dev/difftest_dry
    printf '#!/bin/sh\nexec "%s" --dry "$@"\n' "$dev/difftest_conv" > "$dt" && chmod +x "$dt"
fi
# run TAG LIMIT FILTER [VAR=VALUE...]: the tester on FILTER into OUT/TAG.log, its rc, failures and count
run() {
    local tag=$1 lim=$2 filt=$3; shift 3
    step "correctness $tag: $filt ${*:-}"
    env "$@" timeout "$lim" "$dt" "$filt" > "$out/$tag.log" 2>&1; echo "rc=$?"
    grep -E "^FAIL" -A4 "$out/$tag.log" | cut -c1-300 | head -16; grep -E "passed," "$out/$tag.log"
}
if [ "${PART:-ab}" = ncu ]; then # the second call: where the on path's time goes (Nsight Compute, one launch each)
    for r in "-|u3d_c32k32d64|c32-on" "XDNN_CONV_WGMMA_TMA3D=0|u3d_c32k32d64|c32-off" "-|u3d_c64k64d32|c64-on"; do
        IFS='|' read -r e row tag <<< "$r"; x=${e/#-/}
        step "ncu $tag: convzoo_fwd_bf16 $row $x"
        env $x DIFFTEST_ITERS=1 timeout 40 ncu -k regex:kcw_fwd --launch-skip 2 --launch-count 1 --section SpeedOfLight \
            --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section WarpStateStats \
            "$dt" --bench "convzoo_fwd_bf16 $row" > "$out/ncu_$tag.txt" 2>&1; echo "rc=$?"
        grep -E "Duration|Memory Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|DRAM Throughput|Compute \(SM\) Th|Issue Slots Busy|L2 Hit Rate|Mem Busy|Max Bandwidth" \
            "$out/ncu_$tag.txt" | head -14
    done
    (cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v -e '^logs.tgz$' -e '^device.txt$'))
    step done; exit 0
fi
run new 30 tm3
run 3d-on 45 /3d
run 3d-off 45 /3d XDNN_CONV_WGMMA_TMA3D=0
run wgn-on 25 wgn
run wgt 25 wgt
dev_memcheck "$dt" tm3 "${SAN_S:-40}"

step "bench: the planner's u3d rows with the 5-d TMA producer on, then off (XDNN_CONV_WGMMA_TMA3D=0), conv_igemm"
dev_bench_runs "$dt" "-|convzoo_fwd_bf16 u3d|on|20;-|convzoo_dgrad_bf16 u3d|on|20"
mv "$out/bench.log" "$out/bench_on.log"
dev_bench_runs "$dt" "XDNN_CONV_WGMMA_TMA3D=0|convzoo_fwd_bf16 u3d|off|20;XDNN_CONV_WGMMA_TMA3D=0|convzoo_dgrad_bf16 u3d|off|20"
mv "$out/bench.log" "$out/bench_off.log"
dev_bench_runs "$dt" "-|convzoo_fwd_bf16_igemm u3d_c32|igemm|10;-|convzoo_dgrad_bf16_igemm u3d_c32|igemm|10"
mv "$out/bench.log" "$out/bench_igemm.log"
step "peer: conv_peer.py zoo"
PYTHONUNBUFFERED=1 timeout "${PEER_S:-45}" python3 "$dev/conv_peer.py" zoo > "$out/peer.log" 2>&1
echo "rc=$?"; head -1 "$out/peer.log"
{ echo "on: the 5-d TMA producer (default); off: XDNN_CONV_WGMMA_TMA3D=0 (the gather); ms, median of ${ITERS:-10}"
  dev_ab_table "$out/peer.log" "$out/bench_on.log" "$out/bench_off.log"
  echo "conv_igemm forced (the engine before session 12):"; grep "^BENCH" "$out/bench_igemm.log" | cut -c1-120
} > "$out/table.txt"
step "the whole sweep with the time left"
left=$(( ${BUDGET_S:-280} - (SECONDS - t0) - 10 ))
[ "$left" -gt 15 ] && dev_sweep "$dt" "$left"
step "tables"
cat "$out/table.txt"
(cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v -e '^logs.tgz$' -e '^table.txt$' -e '^device.txt$'))
step done
