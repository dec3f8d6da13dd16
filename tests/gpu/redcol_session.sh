#!/usr/bin/env bash
# Session 13: run on the H100 and made the default; "off" below is now the switch set to 0 (the runs pass =1 / =0
# explicitly, so the script measures the same A/B as in its first call).
# redcol_session.sh DEV OUT — the first device call of reduce v2 (session 12's "redcol", issue 12): the reductions
# of reduce_nvrtc in two new generated forms, src/gpu/codegen_redcol.c, behind XDNN_REDUCE_V2=1 (off by default;
# written in session 12 without a GPU: this call is their first run).
#  column form: reduced axes outer to a kept contiguous run of columns ([outer, rlen, cols]); a 256-thread block
#    owns lanes_c x vec columns (16-byte loads where cols % vec == 0) and a slice of the rows (blockIdx.y), the
#    row lanes meet by a fixed tree in shared memory, f32 partials of the splits in the workspace folded in split
#    order by <kernel>_fin (deterministic);
#  row form: last-axis reductions with 16-byte loads, a warp per row up to 64 vectors, else a block per row.
# Run from the root of the tree whose library DEV holds: bash tests/gpu/redcol_session.sh DEV OUT (DEV:
# tests/gpu/pack_dev.sh's folder; dt/{difftest,difftest_norm,diffharness}.o where the library was built, or this
# tree's sources are compiled; bench/mem_peer.py, bench/norm_torch.py and tests/gpu/pool12_tables.py are taken
# from DEV when copied there, else from this tree).
# PART=1 (this call, ~150 s):
#  1. difftest redcol/ (the new cases: first / middle / several outer axes / last axis; rows 1, 7, 300, 1031, 8191;
#     columns 1, 3, 8, 40, 4097, 4096; f32 / f16 / bf16; sum / mean / max / min, amax / norm1 / norm2; keepdims)
#     with XDNN_REDUCE_V2=1, then the same with it unset (the old form on the new cases);
#  2. the family in full with the switch on: difftest reduce/ softmax/ log_softmax/ graph/ (every older reduce
#     case; softmax must stay on the old form), then difftest --quick with it on;
#  3. compute-sanitizer memcheck, XDNN_REDUCE_V2=1 difftest --quick redcol/;
#  4. bench: difftest_norm --bench bench/s12/reduce/ with the switch on (bench_on.log), off (ab_off.log: the old
#     form), on again (drift_on2.log); PyTorch: mem_peer.py --filter reduce/ (eager, torch.compile, copy_ of the same
#     bytes) in the same call; the table (pool12_tables.py: "old" = switch unset, "new" = XDNN_REDUCE_V2=1);
#  5. ncu on the column kernel (sum-first f32) when time is left.
# A table last (summary.txt); every log in OUT/logs.tgz.  BUDGET_S: the call's seconds (default 150).
# DRY=1 TESTER=path/to/difftest (built here): the script's own check without a GPU (--dry: CPU reference, plans
# with and without the switch, NVRTC compile of every kernel; no bench, memcheck, ncu or torch).
#
# EXPECTED (written before the first call; session 12's consolidated table, top of bench/RESULTS-norm.md):
#  sum-first f32 8192 x 8192: 0.449 ms (20 % of copy) -> ~0.10-0.12 ms (75-90 % of copy: 268 MB read once in
#    128-byte rows per warp, 1024 blocks = 256 tiles x 4 splits, + a ~3 us fold of 4 x 32 KB): 3.7-4.5x, ~1x eager;
#  max-first bf16 8192 x 8192: 11 % of copy -> 75-85 % (128 tiles x 8 splits): ~6-7x, below eager's time;
#  sum-last f32: 72 % -> 80-88 % (16-byte loads, 8 a thread): 1.1-1.2x;
#  max-last bf16: 40 % -> 75-85 % (16-byte loads of 8 bf16: an eighth of the load instructions): ~2x.
#  Every redcol/ case passes both ways; memcheck clean; the older reduce cases pass with the switch on.
set -uo pipefail
. tests/gpu/dev_env.sh "${1:?DEV}" "${2:?OUT}" # sets dev, out, t0, step
dry=${DRY:+--dry}
budget=${BUDGET_S:-150}
left() { echo $(( budget - (SECONDS - t0) )); }
if [ -n "$dry" ]; then
    t=${TESTER:?DRY=1 needs TESTER=path of a difftest built here}; tn=${TESTER_NORM:-}
else
    dev_build_testers difftest difftest_norm || exit 1; t=$dev/difftest; tn=$dev/difftest_norm
fi
pick() { [ -f "$dev/$1" ] && echo "$dev/$1" || echo "$2/$1"; }
counts() { grep -E "^FAIL" -A6 "$1" | cut -c1-300 | head -24; echo "$(grep -c "^PASS" "$1") passed, $(grep -c "^FAIL" "$1") failed"; }
run() { # run TAG LIMIT_S SWITCH(on|off) ARGS... — the tester $t with XDNN_REDUCE_V2=1 or 0 (session 13: on is the default)
    local tag=$1 lim=$2 sw=$3; shift 3
    step "difftest $* (XDNN_REDUCE_V2 $sw)"
    if [ "$sw" = on ]; then XDNN_REDUCE_V2=1 timeout "$lim" "$t" $dry "$@" > "$out/$tag.log" 2>&1
    else XDNN_REDUCE_V2=0 timeout "$lim" "$t" $dry "$@" > "$out/$tag.log" 2>&1; fi
    echo "rc=$? (124: cut short)"; counts "$out/$tag.log"
}

run new_on 45 on redcol/
[ -n "$dry" ] && { echo "forms (dry, switch on):"; grep -o "engines=[^ ]*" "$out/new_on.log" | sort | uniq -c; }
run new_off 35 off redcol/
for f in reduce/ softmax/ log_softmax/ graph/; do run "fam_${f%/}" 20 on "$f"; done
[ "$(left)" -gt 60 ] && run quick_on 25 on --quick
if [ -z "$dry" ]; then
    step "memcheck: XDNN_REDUCE_V2=1 difftest --quick redcol/"
    XDNN_REDUCE_V2=1 timeout "$(( $(left) > 90 ? 35 : 20 ))" compute-sanitizer --tool memcheck --print-limit 10 \
        --error-exitcode 3 "$t" --quick redcol/ > "$out/memcheck.log" 2>&1
    echo "rc=$?"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -6
    step "bench: difftest_norm --bench bench/s12/reduce/ (on, off, on)"
    XDNN_REDUCE_V2=1 timeout 20 "$tn" --bench bench/s12/reduce/ > "$out/bench_on.log" 2>&1; echo "on rc=$?"
    XDNN_REDUCE_V2=0 timeout 20 "$tn" --bench bench/s12/reduce/ > "$out/ab_off.log" 2>&1; echo "off rc=$?"
    XDNN_REDUCE_V2=1 timeout 20 "$tn" --bench bench/s12/reduce/ > "$out/drift_on2.log" 2>&1; echo "on2 rc=$?"
    grep -h "BENCH" "$out/bench_on.log" "$out/ab_off.log" "$out/drift_on2.log" | cut -c1-200
    step "PyTorch: mem_peer.py --filter reduce/"
    peer=$(pick mem_peer.py bench)
    [ -f "$(dirname "$peer")/norm_torch.py" ] || cp bench/norm_torch.py "$(dirname "$peer")/"
    PYTHONUNBUFFERED=1 timeout "$(( $(left) > 60 ? 45 : 30 ))" python3 "$peer" --filter reduce/ --compile-budget-s 25 \
        > "$out/peer.log" 2>&1
    echo "rc=$?"; grep -c '"eager_ms"' "$out/peer.log"
    if [ "$(left)" -gt 25 ] && command -v ncu > /dev/null; then
        step "ncu: the column kernel, sum-first f32 8192 x 8192"
        XDNN_REDUCE_V2=1 timeout 20 ncu --clock-control none -k "regex:xdnn_reduce" -c 2 --section SpeedOfLight \
            --section Occupancy --section LaunchStats "$tn" --bench bench/s12/reduce/sum-first > "$out/ncu_col.txt" 2>&1
        echo "rc=$?"; grep -E "^\s*(Duration|DRAM Throughput|Registers Per Thread|Achieved Occupancy|Grid Size)\s" \
            "$out/ncu_col.txt" | head -10
    fi
    dev_tables "$(pick pool12_tables.py tests/gpu)"
fi
step "end ($(left) s of $budget left)"
