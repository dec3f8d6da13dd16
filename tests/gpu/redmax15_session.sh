#!/usr/bin/env bash
# redmax15_session.sh DEV OUT — session 15's packed 16-bit max/min of reduce v2 (issue 12: reduce max bf16 8192^2 at
# 88 % of copy over the last axis, 79 % over the first), written without a GPU, for one device call (~140 s).
# Run from the root of the tree as `bash tests/gpu/redmax15_session.sh DEV OUT`; DEV: tests/gpu/pack_dev.sh's
# folder plus dt/{difftest,difftest_norm,diffharness}.o compiled where the library was built.
# The change (src/gpu/codegen_redcol.c emit_col_packed / emit_row_packed; default on, XDNN_REDUCE_PACKED=0 the
# A/B): max, min and amax of f16/bf16 keep their accumulators as two values of the input's dtype per 32-bit word,
# combined by max.NaN/min.NaN .bf16x2/.f16x2 (a 16-byte load: 4 ops, not 8 converts + 8 fmaxf); the column form's
# pairs are adjacent columns (its shared-memory tree and split partials half as many words, the partials 16-bit),
# the row form folds the pair's halves once per row.
# And the NaN fix (commit 2): every f32 accumulation of max/min/amax (reduce v2 with XDNN_REDUCE_PACKED=0, f32
# inputs, cg_reduce's forms: prologues, reduced length 1, sizes as arguments) combined with fmaxf/fminf, which drop
# NaN (a lone NaN gave -inf); now xd_max_nan / xd_min_nan (codegen.c prelude: one max.NaN/min.NaN.f32, sm_80) in
# the update, the combines and xd_block_max/min.  The reference's reduce ranks +0 above -0 (IEEE maximum, as the
# .NaN forms), so redpk/ checks zeros' signs on every slice.  The generated softmax zeroed the sum of a thread that
# met only NaN (a row's lone NaN left finite neighbours; the reference's row is all NaN): fixed.  Pointwise
# max/min now propagate NaN as torch.maximum (pointwise_modes.def: reference and GPU alike).  Generated sources:
# difftest --dry reduce/ + redcol/ + redpk/ (579 kernels): all identical but for the prelude's 4 lines (the two
# helpers, xd_block_max/min), the 80 (and the 220 with XDNN_REDUCE_PACKED=0) f32 max/min/amax bodies differ only by
# fmaxf/fminf -> xd_max_nan/xd_min_nan.
# Steps (each under the DEADLINE, default 145 s):
#  1. correctness, exact (values, NaN for NaN, zeros' signs), default: difftest redpk/ (360 cases: bf16/f16/f32
#     max/min, amax; last axis lengths 1 3 7 9 8191 8193 8 520 1000 4100 8194 8192, first axis with odd and even
#     column counts and splits, a middle axis with f32 output, a prologue (neg: cg_reduce's form); ties, -0/+0,
#     all-negative slices, subnormals, +-Inf, and NaN in redpk/nan/); difftest pwnan/ (pointwise max/min with NaN,
#     +-Inf); difftest_norm warp-rows/softmax (the family, --quick, and its nan cases: warp rows and the generated
#     form);
#  2. bench: difftest_norm --bench bench/s12/reduce/max- (max-last and max-first bf16 8192x8192), default /
#     XDNN_REDUCE_PACKED=0, alternated twice;
#  3. --quick redpk/nan/ with XDNN_REDUCE_PACKED=0 (the f32 accumulation of 16-bit inputs: must pass now); the
#     families reduce/ and --quick redcol/;
#  4. memcheck on difftest --quick redpk/nan/min/ (default).
# EXPECTED (before the call; session 13's H100 figures as the "before", % of copy against 2976 GB/s):
#   correctness: redpk/ 360/360; pwnan/ 3/3; warp-rows/softmax all pass (12 nan cases); redpk/nan/ off (--quick)
#   all pass; reduce/ 92/92, --quick redcol/ 123/123; memcheck 0 errors.  A failure in redpk/ on the f32 dtype
#   with "zeros of the wrong sign" would mean max.NaN.f32 does not rank +0 above -0: report it.
#   max-last  bf16: 0.0511 ms (88 %) -> ~0.048-0.050 ms (90-93 %); the f32 sum-last is 97 %: the rest may be the
#                   block-per-row barrier of an 8192-element bf16 row (4 vectors a thread before the block's reduce),
#                   which this change does not touch.
#   max-first bf16: 0.0572 ms (79 %) -> ~0.051-0.054 ms (83-88 %): half the shared-memory tree, half the partials.
#   With XDNN_REDUCE_PACKED=0 about the session 13 figures (0.051 / 0.057; max.NaN.f32 is one instruction as fmaxf).
# IF IT WINS (or ties): keep the default on; record in bench/RESULTS-norm.md.  IF IT LOSES on a row (> 2 % slower,
#   both repetitions): report the row; the switch stays as the A/B, and flip the default in
#   cg_reduce_packed_enabled only if the loss is large (both paths are correct on NaN now).
#   The NaN fix is a correctness fix: merge it whatever the bench says.
# DRY=1 TESTER=path/to/difftest TESTER_NORM=path/to/difftest_norm (built here): steps 1 and 3 with --dry (no GPU).
# Run 1 (session 15, b534b9b, default then on): redpk/ 360/360, reduce/ 92/92, redcol 123/123, redpk/nan/ with
# the f32 path 96/96, memcheck 0 errors; pwnan/ 1 of 3 failed (logf near 1 against the double reference at the
# pointwise default tolerance: the case's tolerance widened) and 6 NaN softmax cases were vacuous (rows of 1000
# all NaN: NaN now in ~1/3 of the rows); packed max-last 0.0507 / 0.0508 ms against 0.0499 / 0.0507, max-first
# 0.0547 / 0.0548 against 0.0562 / 0.0566: level, so XDNN_REDUCE_PACKED is off by default since (=1 takes it;
# step 1's redpk/ runs with it, the other steps' default is the f32 path).
set -uo pipefail
dev=${1:?DEV}; out0=${2:?OUT}
. tests/gpu/dev_env.sh "$dev" "$out0"
out=$out0
dry=${DRY:+--dry}
DEADLINE=${DEADLINE:-145} # tl, counts: dev_env.sh
if [ -n "$dry" ]; then t=${TESTER:?DRY=1 needs TESTER=difftest built here}; tn=${TESTER_NORM:?and TESTER_NORM=difftest_norm}
else step link; dev_build_testers difftest difftest_norm || exit 1; t=$dev/difftest; tn=$dev/difftest_norm; fi

step "1. correctness: redpk/, pwnan/, warp-rows/softmax (default)"
XDNN_REDUCE_PACKED=1 timeout "$(tl 45)" "$t" $dry redpk/ > "$out/t_on_redpk.log" 2>&1; echo "redpk/ on rc=$?"; counts "$out/t_on_redpk.log"
[ -n "$dry" ] && { grep -o "engines=[^ ]*" "$out/t_on_redpk.log" | sort | uniq -c; }
timeout "$(tl 10)" "$t" $dry pwnan/ > "$out/t_pwnan.log" 2>&1; echo "pwnan/ rc=$?"; counts "$out/t_pwnan.log"
timeout "$(tl 20)" "$tn" $dry --quick warp-rows/softmax > "$out/t_softmax.log" 2>&1; echo "--quick warp-rows/softmax rc=$?"
counts "$out/t_softmax.log"; echo "  of which nan: $(grep -c "^PASS.*/nan" "$out/t_softmax.log") passed"
if [ -z "$dry" ]; then
    step "2. bench: bench/s12/reduce/max- (max-last, max-first bf16 8192x8192), default / XDNN_REDUCE_PACKED=0, twice"
    for r in 1 2; do
        for sw in 1 0; do
            XDNN_REDUCE_PACKED=$sw timeout "$(tl 12)" "$tn" --bench bench/s12/reduce/max- > "$out/bench_pk${sw}_$r.log" 2>&1
            echo "XDNN_REDUCE_PACKED=$sw run $r rc=$?:"; grep -h "BENCH" "$out/bench_pk${sw}_$r.log" | cut -c1-220
        done
    done
fi
step "3. --quick redpk/nan/ with XDNN_REDUCE_PACKED=0; the families reduce/ and --quick redcol/ (default)"
XDNN_REDUCE_PACKED=0 timeout "$(tl 15)" "$t" $dry --quick redpk/nan/ > "$out/t_off_nan.log" 2>&1
echo "--quick redpk/nan/ off rc=$?"; counts "$out/t_off_nan.log"
timeout "$(tl 15)" "$t" $dry reduce/ > "$out/t_fam_reduce.log" 2>&1; echo "reduce/ rc=$?"; counts "$out/t_fam_reduce.log"
timeout "$(tl 15)" "$t" $dry --quick redcol/ > "$out/t_fam_redcol.log" 2>&1; echo "--quick redcol/ rc=$?"
counts "$out/t_fam_redcol.log"
[ -n "$dry" ] && exit 0
dev_memcheck "$t" redpk/nan/min/ "$(tl 25)"
step done
