#!/usr/bin/env bash
# redmax15_session.sh DEV OUT — session 15's packed 16-bit max/min of reduce v2 (issue 12: reduce max bf16 8192^2 at
# 88 % of copy over the last axis, 79 % over the first), written without a GPU, for one device call (~140 s).
# Run from the root of the tree as `bash tests/gpu/redmax15_session.sh DEV OUT`; DEV: tests/gpu/pack_dev.sh's
# folder plus dt/{difftest,difftest_norm,diffharness}.o compiled where the library was built.
# The change (src/gpu/codegen_redcol.c emit_col_packed / emit_row_packed; default on, XDNN_REDUCE_PACKED=0 the
# A/B): max, min and amax of f16/bf16 keep their accumulators as two values of the input's dtype per 32-bit word,
# combined by max.NaN/min.NaN .bf16x2/.f16x2 (a 16-byte load: 4 ops, not 8 converts + 8 fmaxf); the column form's
# pairs are adjacent columns (its shared-memory tree and split partials half as many words, the partials 16-bit),
# the row form folds the pair's halves once per row.  The .NaN forms propagate NaN as the CPU reference does; the
# f32 path's fmaxf/fminf drop it (a bug of the old path, every dtype: see below).  Every other generated reduce
# source is byte-identical (difftest --dry reduce/ + redcol/, XDNN_DUMP_SRC: 267 of 359 identical, the 92 that
# differ all 16-bit max/min/amax; with XDNN_REDUCE_PACKED=0 all 359 identical).
# Steps (each under the DEADLINE, default 145 s):
#  1. correctness, exact (values, NaN for NaN, zeros' signs where the reference's is not order-dependent), with the
#     default: difftest redpk/ (220 cases: bf16/f16 max/min, amax; last axis lengths 1 3 7 9 8191 8193 8 520 1000
#     4100 8194 8192, first axis with odd and even column counts and splits, a middle axis with f32 output; ties,
#     -0/+0, all-negative slices, subnormals, +-Inf, and NaN in redpk/nan/);
#  2. bench: difftest_norm --bench bench/s12/reduce/max- (max-last and max-first bf16 8192x8192), default /
#     XDNN_REDUCE_PACKED=0, alternated twice;
#  3. redpk/fin/ with XDNN_REDUCE_PACKED=0 (must pass); redpk/nan/ with XDNN_REDUCE_PACKED=0 (EXPECTED TO FAIL:
#     the f32 path drops NaN; the count shows the cases see it); the families reduce/ and --quick redcol/;
#  4. memcheck on difftest --quick redpk/fin/ (default).
# EXPECTED (before the call; session 13's H100 figures as the "before", % of copy against 2976 GB/s):
#   correctness: redpk/ 220/220; redpk/fin/ off 112/112; redpk/nan/ off: most of its 108 fail (every one with a
#   NaN class output; redpk/nan/ cases whose reduced length is 1 are not registered); reduce/ 92/92, --quick redcol/
#   123/123; memcheck 0 errors.
#   max-last  bf16: 0.0511 ms (88 %) -> ~0.048-0.050 ms (90-93 %); the f32 sum-last is 97 %: the rest may be the
#                   block-per-row barrier of an 8192-element bf16 row (4 vectors a thread before the block's reduce),
#                   which this change does not touch.
#   max-first bf16: 0.0572 ms (79 %) -> ~0.051-0.054 ms (83-88 %): half the shared-memory tree, half the partials.
#   With XDNN_REDUCE_PACKED=0 the session 13 figures (0.051 / 0.057).
# IF IT WINS (or ties): keep the default on — the NaN propagation alone is a correctness fix (reference: NaN
#   propagates; the f32 path returns the other operand); record in bench/RESULTS-norm.md.  IF IT LOSES on a row
#   (> 2 % slower, both repetitions): report the row; the switch stays as the A/B, and the NaN rule argues for
#   keeping packed on anyway unless the loss is large — then flip the default in cg_reduce_packed_enabled.
# DRY=1 TESTER=path/to/difftest (built here): steps 1 and 3 with --dry (no GPU).
set -uo pipefail
dev=${1:?DEV}; out0=${2:?OUT}
. tests/gpu/dev_env.sh "$dev" "$out0"
out=$out0
dry=${DRY:+--dry}
tl() { local l=$((${DEADLINE:-145} - (SECONDS - t0))); if [ "$l" -lt "$1" ]; then echo $((l > 1 ? l : 1)); else echo "$1"; fi; }
counts() { grep -E "^FAIL" -A8 "$1" | cut -c1-300 | head -${2:-20}; echo "$(grep -c "^PASS" "$1") passed, $(grep -c "^FAIL" "$1") failed"; }
if [ -n "$dry" ]; then t=${TESTER:?DRY=1 needs TESTER=difftest built here}
else step link; dev_build_testers difftest difftest_norm || exit 1; t=$dev/difftest; tn=$dev/difftest_norm; fi

step "1. correctness: redpk/ (default)"
timeout "$(tl 35)" "$t" $dry redpk/ > "$out/t_on_redpk.log" 2>&1; echo "redpk/ on rc=$?"; counts "$out/t_on_redpk.log"
[ -n "$dry" ] && { grep -o "engines=[^ ]*" "$out/t_on_redpk.log" | sort | uniq -c; }
if [ -z "$dry" ]; then
    step "2. bench: bench/s12/reduce/max- (max-last, max-first bf16 8192x8192), default / XDNN_REDUCE_PACKED=0, twice"
    for r in 1 2; do
        for sw in 1 0; do
            XDNN_REDUCE_PACKED=$sw timeout "$(tl 12)" "$tn" --bench bench/s12/reduce/max- > "$out/bench_pk${sw}_$r.log" 2>&1
            echo "XDNN_REDUCE_PACKED=$sw run $r rc=$?:"; grep -h "BENCH" "$out/bench_pk${sw}_$r.log" | cut -c1-220
        done
    done
fi
step "3. redpk/fin/ and redpk/nan/ with XDNN_REDUCE_PACKED=0; the families reduce/ and --quick redcol/ (default)"
XDNN_REDUCE_PACKED=0 timeout "$(tl 15)" "$t" $dry redpk/fin/ > "$out/t_off_fin.log" 2>&1; echo "redpk/fin/ off rc=$?"
counts "$out/t_off_fin.log"
XDNN_REDUCE_PACKED=0 timeout "$(tl 12)" "$t" $dry redpk/nan/ > "$out/t_off_nan.log" 2>&1
echo "redpk/nan/ off rc=$? (expected to fail: the f32 path drops NaN)"; counts "$out/t_off_nan.log" 6
timeout "$(tl 15)" "$t" $dry reduce/ > "$out/t_fam_reduce.log" 2>&1; echo "reduce/ rc=$?"; counts "$out/t_fam_reduce.log"
timeout "$(tl 15)" "$t" $dry --quick redcol/ > "$out/t_fam_redcol.log" 2>&1; echo "--quick redcol/ rc=$?"
counts "$out/t_fam_redcol.log"
[ -n "$dry" ] && exit 0
dev_memcheck "$t" redpk/fin/ "$(tl 25)"
step done
