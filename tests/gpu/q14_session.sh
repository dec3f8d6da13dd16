#!/usr/bin/env bash
# q14_session.sh DEV OUT — session 14's quantize path for power-of-two scales (issue 12, the quantize 1x32 row at
# 69 % of copy), written without a GPU, for the next device call (~90 s).  Run from the root of the tree as
# `bash DEV/q14_session.sh DEV OUT`; DEV: tests/gpu/pack_dev.sh's folder plus dt/{difftest_quant,diffharness}.o
# compiled where the library was built.
# The change (kernels/quant.cu kq_quant8_fp8; on by default since session 15 measured it, XDNN_QUANT_POW2=0 the A/B): a scale
# that is a normal power of two makes 1/s and x * (1/s) exact, so the fp8 conversion's own round to nearest even
# is the reference's and kq_settle's tie test is skipped (its range test stays).  Every e8m0 scale but 2^-127 is
# one; bf16 over an e8m0 scale lands on an e4m3 tie 1 element in 16.
# Steps:
#  1. correctness, bit-exact against the CPU reference, with XDNN_QUANT_POW2=1: difftest_quant pow2/ (32 new
#     cases: f32 per-tensor 2^-7 and e8m0 [1, 32] blocks, x f32 / bf16 / f16 at std 3 and 1e-3, e4m3 / e5m2;
#     pow2/edges: scales 2^-126, 2^124, -2^-7 and 3 x 2^-7 over -0, saturating, fp8-subnormal, f32-huge and tie
#     values), chain/ (its e8m0 rows take the path; table/ runs the v2 kernel, a control); then pow2/ with the
#     default (kq_settle).  Nothing reports which path ran: the A/B timing of step 3 is the evidence;
#  2. memcheck on pow2/ with the switch;
#  3. bench bench/quantize rows (tensor f32 0.01: not a power of two, the control; 1x32 e8m0; blk128) with the
#     default, then XDNN_QUANT_POW2=1, alternated twice.
# EXPECTED (before the call): every case passes both ways; quantize bf16->e4m3 1x32 e8m0 0.0995 ms (69 %) ->
# ~0.088-0.092 (75-78 %: kq_settle is ~6 of the ~20 instructions an element; the scale loads stay); the f32
# 0.01 per-tensor row unchanged (not a power of two: one compare a chunk more).  If it wins: the default on
# (XDNN_QUANT_POW2=0 the A/B).
# DRY=1: the tester's --dry only.
set -uo pipefail
dev=${1:?DEV}; out0=${2:?OUT}
. tests/gpu/dev_env.sh "$dev" "$out0"
out=$out0
dry=${DRY:+--dry}
DEADLINE=${DEADLINE:-100} # tl, counts: dev_env.sh
if [ -n "$dry" ]; then tq=${TQ:?DRY=1 needs TQ=difftest_quant built here}
else step link; dev_build_testers difftest_quant || exit 1; tq=$dev/difftest_quant; fi

step "1. correctness with XDNN_QUANT_POW2=1 (pow2/ table/ chain/), then pow2/ with the default"
for f in pow2/ table/ chain/; do
    XDNN_QUANT_POW2=1 timeout "$(tl 25)" "$tq" $dry "$f" > "$out/t_on_${f%/}.log" 2>&1; echo "$f on rc=$?"
    counts "$out/t_on_${f%/}.log"
done
XDNN_QUANT_POW2=0 timeout "$(tl 15)" "$tq" $dry pow2/ > "$out/t_off_pow2.log" 2>&1; echo "pow2/ off rc=$?"; counts "$out/t_off_pow2.log"
[ -n "$dry" ] && exit 0
XDNN_QUANT_POW2=1 dev_memcheck "$tq" pow2/ "$(tl 15)"

step "3. bench: quantize rows, default / XDNN_QUANT_POW2=1, twice"
for r in 1 2; do
    for sw in 0 1; do
        XDNN_QUANT_POW2=$sw timeout "$(tl 12)" "$tq" --bench bench/quantize > "$out/bench_pow2_${sw}_$r.log" 2>&1
        echo "XDNN_QUANT_POW2=$sw run $r:"; grep -h "bench/quantize" "$out/bench_pow2_${sw}_$r.log" | cut -c1-160
    done
done
