#!/usr/bin/env bash
# sdpainf16_session.sh DEV OUT — session 16 (sdpainf): attention rows with +inf or NaN scores, written without a
# GPU, for one device call (<= 90 s).  Run from the root of the tree as `bash tests/gpu/sdpainf16_session.sh DEV OUT`;
# DEV: tests/gpu/pack_dev.sh's folder plus dt/{difftest_seq,diffharness}.o compiled where the library was built.
# The change (a correctness fix, no A/B switch): the forward kernels called a row "empty" when m == -inf or
# !(l > 0), so a row whose scores held a +inf or a NaN (l NaN) got stats -inf (the backward then takes it for
# masked) and o 0 (sdpa.cu, sdpa_splitkv.cu) or NaN (mma, wgmma); the split-KV combine's fmaxf passed over NaN
# partials (all-NaN splits: o 0, stats -inf).  Now empty is m == -inf alone (every score -inf, the reference's
# test) and the combine weighs an empty partial 0 and a NaN one NaN (empty: a sum of 0): such a row is NaN in o
# and stats, as the reference (src/ops/sdpa.c) and PyTorch give; fully masked rows are unchanged (o 0, stats -inf).
# Steps:
#  1. correctness: difftest_seq nonfinite (19 new cases: q-plus-inf, k-nan, bias-plus-inf, bias-nan on
#     sdpa_naive, sdpa_flash (16-bit and f32 o), sdpa_flash_tf32, sdpa_flash_wgmma (tiles, f32 o, v10's key
#     splits), sdpa_splitkv (decode over many splits, one split, chunked prefill)); then the forward families'
#     quick subsets, difftest_seq --quick sdpa/ (265 cases, every forward engine incl. fp8);
#  2. memcheck on the new cases (--quick nonfinite).
# EXPECTED (before the call): every case passes.  Before the fix the new cases fail on stats (-inf where the
# reference is NaN) on every engine but fp8 (not in the new cases: e4m3 has no inf, and its kernel already tests
# m == -inf alone), and on o for sdpa_naive and sdpa_splitkv (0 where NaN).  --quick sdpa/ as on main (no
# finite row changes: a row that saw a finite key has l >= 1).  If a new case fails on a finite row: report its
# worst elements (the fix must not touch them).  No bench: the changed lines are the epilogue's select, and
# ptxas's registers / spills of sdpa_wgmma_sm90a.cu are unchanged (checked here, -Xptxas -v before / after).
# DRY=1: the tester's --dry only (TS=difftest_seq built here).
set -uo pipefail
dev=${1:?DEV}; out0=${2:?OUT}
. tests/gpu/dev_env.sh "$dev" "$out0"
out=$out0
dry=${DRY:+--dry}
DEADLINE=${DEADLINE:-90} # tl, counts: dev_env.sh
if [ -n "$dry" ]; then ts=${TS:?DRY=1 needs TS=difftest_seq built here}
else step link; dev_build_testers difftest_seq || exit 1; ts=$dev/difftest_seq; fi

step "1. correctness: nonfinite (new), then --quick sdpa/"
timeout "$(tl 25)" "$ts" $dry nonfinite > "$out/t_nonfinite.log" 2>&1; echo "nonfinite rc=$?"
counts "$out/t_nonfinite.log"
timeout "$(tl 45)" "$ts" $dry --quick sdpa/ > "$out/t_sdpa_quick.log" 2>&1; echo "--quick sdpa/ rc=$? (124: cut short)"
counts "$out/t_sdpa_quick.log"
[ -n "$dry" ] && exit 0
dev_memcheck "$ts" nonfinite "$(tl 40)"
step done
