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
#  4. the tester's whole sweep (every conv/ case) with the time left (SWEEP_S; BUDGET_S the call's, 225).
# PART=l1 (the second call): the L1 gather's A/B (XDNN_CONV_WGMMA_GATHER_L1): the whole sweep (L1 on, the
# default), wgn with it off, memcheck --quick wgn and wg3, the bench rows with it on and off, the peer again.
# A table last (table.txt); every log in OUT/logs.tgz.
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
# OUTCOME of call 1 (88253f2, 11 stages): every case passed (1234 / 1234, wgn 29 / 29, memcheck 0 errors); the
#  32-wide tile is 1.12x faster than the 64-wide one but only level with conv_igemm (C32 fwd 0.398 / dgrad 0.406
#  ms, conv_igemm 0.405 / 0.414, cuDNN 0.166 / 0.173): ~0.9 us a slice as before, 20 KiB a slice at ~2.9 TB/s
#  from L2 to the SMs; the stem fwd on it 0.929 against conv_igemm's 0.837; the stem dgrad 1.495 against 1.549.
# EXPECTED of call 2 (PART=l1, written before it): x gathered through L1 (cp.async.ca; 9 stages so L1 keeps
#  ~60 KiB): a tile's 27 taps read 9 pixel runs 3 times each, so if L2 -> SM bytes set the pace and the run
#  shifted by one pixel still sits in L1, A's L2 traffic falls toward 1/3: C32 K32 64^3 fwd / dgrad 0.40 ->
#  ~0.25-0.30 ms (1.5-1.8x cuDNN), C64 K64 32^3 0.098 / 0.105 -> ~0.07-0.08, the stem dgrad on wgmma 1.50 ->
#  ~1.0; with the switch off (=0) as call 1 within noise (9 stages, not 11, for the 32-wide tile).  If L1 is too
#  small or a hit costs the request what a miss does: no change, and the default goes back to L2 only.
# OUTCOME of call 2 (4b62aa2): values right everywhere (1232 / 1234: the two wgn-2d cases' detail said "9
#  stages" where the case asked for 11; wgn 27 / 29 likewise with L1 off; memcheck --quick wgn / wg3 0 errors).
#  L1 won 1-7% on the 32-wide tile (the packed stem fwd 0.870 -> 0.81 ms, C32 fwd 0.421 -> 0.414), lost up to 6%
#  on the 64-wide 3-D tiles (C64 dgrad 0.110 -> 0.117), and 9 stages cost the K = 32 rows ~5% (C32 fwd 0.398 ->
#  0.420 with L2 only): both reverted (XDNN_CONV_WGMMA_GATHER_L1 is gone; PART=l1 stays as the record of the
#  call); the kernel is call 1's again.
set -uo pipefail
. tests/gpu/dev_env.sh "$@"
dev_link_tester difftest_conv || exit 1
dt=$dev/difftest_conv
if [ -n "${DRY:-}" ]; then # DRY=1: the script's own check on a machine without a GPU (CPU reference and plans)
    printf '#!/bin/sh\nexec "%s" --dry "$@"\n' "$dt" > "$dev/difftest_dry"; chmod +x "$dev/difftest_dry"; dt=$dev/difftest_dry
fi
# the bench rows (dev_bench_runs' "ENV|FILTER|TAG|SECONDS") and their table: each BENCH row of a tag with the
# PEER row of its name (a forced row "NAME_engine TAG" against cuDNN's "NAME TAG")
runs="-|convzoo_fwd_bf16 u3d|planned|25;-|convzoo_dgrad_bf16 u3d|planned|25;-|convzoo_fwd_bf16_|forced|25"
runs+=";-|convzoo_dgrad_bf16_|forced|25;XDNN_CONV_WGMMA_BN32=0|convzoo_fwd_bf16_wgmma|bn64|15"
runs+=";XDNN_CONV_WGMMA_BN32=0|convzoo_dgrad_bf16_wgmma|bn64|15"
bench_all() {
    step "bench: the planner's u3d rows, the K = 32 rows forced, the forced wgmma rows with XDNN_CONV_WGMMA_BN32=0"
    dev_bench_runs "$dt" "$runs"
    step "peer: conv_peer.py zoo"
    PYTHONUNBUFFERED=1 timeout "${PEER_S:-45}" python3 "$dev/conv_peer.py" zoo > "$out/peer.log" 2>&1
    echo "rc=$?"; head -1 "$out/peer.log"
    awk '/^PEER/ {peer[$2" "$3] = $4; next} /^### / {tag = $2}
         /^BENCH/ {k = $2; sub(/_(wgmma|igemm)$/, "", k); b[++n] = $2" "$3; key[n] = k" "$3; e[n] = $4; ms[n] = $5;
                   st[n] = $6; tg[n] = tag}
         END {print "tag (bn64: XDNN_CONV_WGMMA_BN32=0; -l2: XDNN_CONV_WGMMA_GATHER_L1=0) / row / engine / xdnn ms / cuDNN ms / ratio";
              for (i = 1; i <= n; i++) { p = peer[key[i]]; printf "%-10s %-46s %-26s %8.4f %8.4f %6.2f %s\n", tg[i],
              b[i], e[i], ms[i], p, (p > 0 ? ms[i] / p : 0), st[i] } }' "$out/peer.log" "$out/bench.log" \
        > "$out/table.txt"
}

l1runs="-|convzoo_fwd_bf16 u3d|planned|20;-|convzoo_dgrad_bf16 u3d|planned|20"
l1runs+=";XDNN_CONV_WGMMA_GATHER_L1=0|convzoo_fwd_bf16 u3d|planned-l2|20"
l1runs+=";XDNN_CONV_WGMMA_GATHER_L1=0|convzoo_dgrad_bf16 u3d|planned-l2|20"
l1runs+=";-|convzoo_fwd_bf16_|forced|20;-|convzoo_dgrad_bf16_|forced|20"
l1runs+=";XDNN_CONV_WGMMA_GATHER_L1=0|convzoo_fwd_bf16_wgmma|forced-l2|15"
l1runs+=";XDNN_CONV_WGMMA_GATHER_L1=0|convzoo_dgrad_bf16_wgmma|forced-l2|15"
l1runs+=";XDNN_CONV_WGMMA_BN32=0|convzoo_fwd_bf16_wgmma|bn64|15;XDNN_CONV_WGMMA_BN32=0|convzoo_dgrad_bf16_wgmma|bn64|15"
if [ "${PART:-new}" = l1 ]; then
    step "the whole sweep (the L1 gather on: the default)"
    dev_sweep "$dt" "${SWEEP_S:-45}"
    step "wgn with XDNN_CONV_WGMMA_GATHER_L1=0"
    XDNN_CONV_WGMMA_GATHER_L1=0 timeout 30 "$dt" wgn > "$out/new_l2.log" 2>&1; echo "rc=$?"
    grep -E "^FAIL" -A6 "$out/new_l2.log" | cut -c1-300 | head -12; grep -E "passed," "$out/new_l2.log"
    dev_memcheck "$dt" wgn "${SAN_S:-30}"
    dev_memcheck "$dt" wg3 "${SAN_S:-30}"
    runs=$l1runs
    bench_all
elif [ "${PART:-new}" = new ]; then
    step "new cases: wgn"
    timeout 60 "$dt" wgn > "$out/new.log" 2>&1; echo "wgn rc=$?"
    grep -E "^FAIL" -A6 "$out/new.log" | cut -c1-300 | head -24; grep -E "passed," "$out/new.log"
    dev_memcheck "$dt" wgn "${SAN_S:-45}"
    bench_all
    step "the whole sweep with the time left"
    dev_sweep "$dt" "${SWEEP_S:-$(( ${BUDGET_S:-225} - (SECONDS - t0) - 8 ))}"
fi
step "tables"
[ -f "$out/table.txt" ] && cat "$out/table.txt"
(cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v -e '^logs.tgz$' -e '^table.txt$' -e '^device.txt$'))
step done
