#!/usr/bin/env bash
# maxbwd16_session.sh DEV OUT — session 16 (maxbwd, issue 12): the one-pass max-pooling backward of 3x3 stride-2
# windows with 16 bytes of channels a thread, written without a GPU, for one device call (<= 120 s).  Run from the
# root of the tree as `bash tests/gpu/maxbwd16_session.sh DEV OUT`; DEV: tests/gpu/pack_dev.sh's folder plus
# dt/{difftest_norm,diffharness}.o compiled where the library was built.
# The change (kernels/pool.cu v5 kpool_bwd_wide, on by default, XDNN_POOL_BWD_WIDE=0 the A/B: v4 kpool_bwd_walk):
# v4 (session 15) gave a thread 8 bytes of channels (16 held 141 registers and spilled): 0.1296 ms at
# 64x256x56x56 (60 % of copy, bytes x + dy + dx) and 0.1325 ms for the stem's 64x64x112x112 (59 %).  v5 keeps the
# walk (a 2 x 2 block of pixels, 4 blocks down, x and dy read once, dx written once) at 16 bytes a thread in 79
# registers, no spill (sm_90; 3 blocks of 256 per SM): each input row's 3 taps under each window are reduced once
# and merged into the window as its tap row (12 compare steps a lane and step against v4's 18); the winners are
# tap numbers as packed f16 (one HSET2 a lane gives a tap's mask over dy); a pixel's dx sums masked dy, one or two
# windows in the dtype ((a + b) + 0: one rounding, the reference's), four in f32; the lower pixels' shares of the
# window row above are carried as masked dy.  About half v4's instructions a byte and twice its bytes a load.
# The engine's detail reads "max bwd walk16, 2-D" on the new path, "max bwd walk, 2-D" with XDNN_POOL_BWD_WIDE=0.
# XDNN_POOL_BWD_WALK now takes any walk length 1..16 (0: v3's two passes, as before).
# Steps:
#  1. correctness: difftest_norm pbw15/ + pbw16/ ("pbw1": 27 + 18 cases compared exactly: ties, -inf windows, NaN,
#     -0 dy over integer ties, odd extents, pads 0 / 1 / 2 / asymmetric, ceil_mode, f32 / f16 / bf16, one chunk a
#     pixel on wide maps, 5 chunks, C = 12 left to the element kernel) with the default (v5, S = 4), with
#     XDNN_POOL_BWD_WIDE=0 (v4), and v5 at XDNN_POOL_BWD_WALK=1 and =8; the pooling families with the default:
#     vec/ and s12-pool;
#  2. bench: the two maxpool_bwd rows (bench/s12/maxpool_bwd/bf16/nhwc/64x256x56x56 and
#     bench/maxpool_bwd/bf16/nhwc/64x64x112x112), v5 / v4 alternated twice, then v5 at S = 8 and S = 2;
#  3. memcheck on pbw16/ (default), last.
# EXPECTED (before the call): every case passes every way; 64x256x56x56 0.1296 -> ~0.097 ms (60 -> ~80 % of copy),
# the stem 0.1325 -> ~0.10 ms (59 -> ~78 %); S = 8 within a few % of S = 4 (3 of 2S + 3 rows read twice at S = 4:
# L2 traffic, not DRAM), S = 2 slower.  A model of the walk (scalar, every shape 1..14 x 1..14, pads 0-2 each side,
# ceil, S = 1..8, ties / -inf / NaN) matched the reference on 3000 draws before the call; the packed arithmetic is
# what this call checks first.
# If it wins: keep XDNN_POOL_BWD_WIDE on (the default), the best S as kp_walk_blocks' default, rows into
# bench/RESULTS-norm.md's pool table.  If it loses or a case fails: set kp_wide_on's default off (v4 stays the
# path; =1 the opt-in), report the times; NCU=1 runs ncu on one launch of each (SpeedOfLight, Occupancy) to say
# whether v5 is DRAM-, L2- or issue-bound.
# DRY=1: the tester's --dry only (TN=difftest_norm built here).
set -uo pipefail
dev=${1:?DEV}; out0=${2:?OUT}
. tests/gpu/dev_env.sh "$dev" "$out0"
out=$out0
dry=${DRY:+--dry}
DEADLINE=${DEADLINE:-120} # tl, counts: dev_env.sh
if [ -n "$dry" ]; then tn=${TN:?DRY=1 needs TN=difftest_norm built here}
else step link; dev_build_testers difftest_norm || exit 1; tn=$dev/difftest_norm; fi

step "1. correctness: pbw15/ + pbw16/: v5 (default), v4 (XDNN_POOL_BWD_WIDE=0), v5 at walks of 1 and 8; families"
for run in default XDNN_POOL_BWD_WIDE=0 XDNN_POOL_BWD_WALK=1 XDNN_POOL_BWD_WALK=8; do
    if [ $run = default ]; then env=(); else env=("$run"); fi
    env "${env[@]}" timeout "$(tl 20)" "$tn" $dry pbw1 > "$out/t_pbw_${run##*_}.log" 2>&1; echo "pbw1 $run rc=$?"
    counts "$out/t_pbw_${run##*_}.log"
done
for f in vec/ s12-pool; do
    timeout "$(tl 20)" "$tn" $dry "$f" > "$out/t_norm_${f%/}.log" 2>&1; echo "difftest_norm $f rc=$?"; counts "$out/t_norm_${f%/}.log"
done
[ -n "$dry" ] && exit 0

step "2. bench: maxpool_bwd rows, v5 / v4 (XDNN_POOL_BWD_WIDE=0) twice, then v5 at XDNN_POOL_BWD_WALK=8 and =2"
for run in 1:4:1 0:4:1 1:4:2 0:4:2 1:8:1 1:2:1; do
    IFS=: read -r wide walk r <<< "$run"
    XDNN_POOL_BWD_WIDE=$wide XDNN_POOL_BWD_WALK=$walk timeout "$(tl 12)" "$tn" --bench maxpool_bwd/ \
        > "$out/bench_wide${wide}_walk${walk}_$r.log" 2>&1
    echo "XDNN_POOL_BWD_WIDE=$wide XDNN_POOL_BWD_WALK=$walk run $r rc=$?"
    grep -h "BENCH" "$out/bench_wide${wide}_walk${walk}_$r.log" | cut -c1-230
done
if [ -n "${NCU:-}" ]; then
    for k in wide walk; do
        step "ncu: kpool_bwd_$k on the 64x256x56x56 row"
        [ $k = wide ] && w=1 || w=0
        XDNN_POOL_BWD_WIDE=$w timeout "$(tl 30)" ncu --kernel-name regex:kpool_bwd_$k --launch-count 1 \
            --section SpeedOfLight --section Occupancy "$tn" --bench s12/maxpool_bwd > "$out/ncu_$k.log" 2>&1
        echo "ncu rc=$?"
        grep -E "Duration|DRAM Throughput|L1/TEX Cache|L2 Cache Thr|Achieved Occupancy|Registers" "$out/ncu_$k.log"
    done
fi
dev_memcheck "$tn" pbw16/ "$(tl 25)" # last: the bench rows first if time runs short
step done
