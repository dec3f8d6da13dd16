#!/usr/bin/env bash
# pool15_session.sh DEV OUT — session 15 (pool15, issue 12): the max-pooling backward of 3x3 stride-2 windows in one
# pass, written without a GPU, for one device call (~120 s).  Run from the root of the tree as
# `bash DEV/pool15_session.sh DEV OUT` (or `bash tests/gpu/pool15_session.sh DEV OUT`); DEV: tests/gpu/pack_dev.sh's
# folder plus dt/{difftest_norm,difftest_conv,diffharness}.o compiled where the library was built.
# The change (kernels/pool.cu v4 kpool_bwd_walk, on by default, XDNN_POOL_BWD_WALK=0 the A/B): v3 ran a winners pass
# (x read, a byte per window and channel written: 65 us, DRAM 52 %) and a gather (86 us) for 0.1368 ms at
# 64x256x56x56 (57 % of copy, bytes x + dy + dx) and 0.1485 ms for the stem's 64x64x112x112 (52 %).  v4: one
# kernel, a thread per 2 x 2 block of input pixels and 8 bytes of channels walking down 4 blocks (the windows over
# a block are 2 x 2; each step finds the next window row's winners, carrying the previous row's and the shared
# input row's running maxima), x and dy read once from DRAM, dx written once, no workspace; 64 registers, 4 blocks
# of 256 per SM (16 bytes a thread held 141 registers).  XDNN_POOL_BWD_WALK=2 / 8: 2 or 8 blocks a thread (rows
# read twice: 3 + 2S input rows for 2S; threads: 0.8 M at S = 4 for both rows).  The engine's detail reads
# "max bwd walk, 2-D" on the new path, "max bwd gather, 2-D" on the old.
# Steps:
#  1. correctness: difftest_norm pbw15/ (27 new cases compared exactly: ties, -inf windows, NaN, odd extents
#     7x9 / 113x57 / 1x1 / 2x2, pads 0 / 1 / 2 / asymmetric, ceil_mode, f32 / f16 / bf16, C = 12 left to the
#     element kernel) with the default (S = 4), then XDNN_POOL_BWD_WALK=0 (v3), =2, =8; the pooling families with
#     the default: difftest_norm vec/ and s12-pool, difftest_conv pool/;
#  2. memcheck on pbw15/ (default);
#  3. bench: the two maxpool_bwd rows (bench/s12/maxpool_bwd/bf16/nhwc/64x256x56x56 and
#     bench/maxpool_bwd/bf16/nhwc/64x64x112x112), XDNN_POOL_BWD_WALK=4 (default) / 0 alternated twice, then 2 and 8.
# EXPECTED (before the call): every case passes all four ways; 64x256x56x56 0.137 -> ~0.095 ms (57 -> ~80 % of
# copy), the stem 0.149 -> ~0.10 ms (52 -> ~75 %); S = 8 within a few % of S = 4 (fewer rows re-read, fewer waves),
# S = 2 slower.  If it wins: keep the default on, take the best S as the default (kp_walk_blocks), rows into
# bench/RESULTS-norm.md's pool table.  If it loses: set kp_walk_blocks' default to 0 (XDNN_POOL_BWD_WALK=4 then the
# opt-in) and report the times; an ncu of kpool_bwd_walk (NCU=1 below) says whether it is DRAM-, L1- or
# issue-bound.
# DRY=1: the testers' --dry only (TN=difftest_norm and TC=difftest_conv built here).
set -uo pipefail
dev=${1:?DEV}; out0=${2:?OUT}
. tests/gpu/dev_env.sh "$dev" "$out0"
out=$out0
dry=${DRY:+--dry}
DEADLINE=${DEADLINE:-150} # tl, counts: dev_env.sh
if [ -n "$dry" ]; then tn=${TN:?DRY=1 needs TN=difftest_norm built here}; tc=${TC:?and TC=difftest_conv}
else step link; dev_build_testers difftest_norm difftest_conv || exit 1; tn=$dev/difftest_norm; tc=$dev/difftest_conv; fi

step "1. correctness: pbw15/ default, then XDNN_POOL_BWD_WALK=0 / 2 / 8; the pooling families"
for w in default 0 2 8; do
    if [ $w = default ]; then env=(); else env=(XDNN_POOL_BWD_WALK=$w); fi
    env "${env[@]}" timeout "$(tl 25)" "$tn" $dry pbw15/ > "$out/t_pbw15_$w.log" 2>&1; echo "pbw15/ walk=$w rc=$?"
    counts "$out/t_pbw15_$w.log"
done
for f in vec/ s12-pool; do
    timeout "$(tl 25)" "$tn" $dry "$f" > "$out/t_norm_${f%/}.log" 2>&1; echo "difftest_norm $f rc=$?"; counts "$out/t_norm_${f%/}.log"
done
timeout "$(tl 30)" "$tc" $dry pool/ > "$out/t_conv_pool.log" 2>&1; echo "difftest_conv pool/ rc=$?"; counts "$out/t_conv_pool.log"
[ -n "$dry" ] && exit 0
dev_memcheck "$tn" pbw15/ "$(tl 25)"

step "3. bench: maxpool_bwd rows, XDNN_POOL_BWD_WALK=4 (default) / 0 twice, then 2 and 8"
for run in 4:1 0:1 4:2 0:2 2:1 8:1; do
    w=${run%:*}; r=${run#*:}
    XDNN_POOL_BWD_WALK=$w timeout "$(tl 15)" "$tn" --bench maxpool_bwd/ > "$out/bench_walk${w}_$r.log" 2>&1
    echo "XDNN_POOL_BWD_WALK=$w run $r rc=$?"; grep -h "BENCH" "$out/bench_walk${w}_$r.log" | cut -c1-230
done
if [ -n "${NCU:-}" ]; then
    step "ncu: kpool_bwd_walk on the 64x256x56x56 row"
    timeout "$(tl 40)" ncu --kernel-name regex:kpool_bwd_walk --launch-count 1 --section SpeedOfLight \
        --section Occupancy "$tn" --bench s12/maxpool_bwd > "$out/ncu.log" 2>&1
    echo "ncu rc=$?"; grep -E "Duration|DRAM Throughput|L1/TEX Cache|L2 Cache Thr|Achieved Occupancy|Registers" "$out/ncu.log"
fi
step done
