#!/usr/bin/env bash
# bwd560_session.sh DEV OUT — session 12's device calls for sdpa_bwd_wgmma toward issue 10's 560 TFLOP/s
# (b4h16s4096d128 bf16 backward in 2.45 ms).  DEV: what tests/gpu/pack_dev.sh packs, plus
# DEV/dt/{difftest_seq,diffharness}.o and DEV/{peer,sdpa_drop_peer}.py.  Run from the root of a checkout whose
# tests/gpu/dev_env.sh is sourced (the lead's tree): `bash DEV/bwd560_session.sh DEV $OUT`.
#
# EXPECTED (written before the first call).  Two changes, each behind a switch for the A/B in the same call:
#  (1) the dQ writer warps (XDNN_SDPA_BWD_DQ unset; =cta is the kernel before): producer warps 1 and 2 issue
#      each consumer's 16 KiB bulk reduce-add, the consumers stage dQ, fence and arrive on a named barrier after
#      the next tile's exp2s instead of a 128-thread bar.sync + thread 0's issue, and lose thread 0's wait for
#      the previous reduce's reads in front of the dS join (session 9's profile: that barrier 3% of the stall
#      samples, the fences 6%, the dS join 3.6%).  Expected: main kernel -1.5 to -3%, i.e. b4h16 plain 2.67 ->
#      ~2.60 ms; causal and Llama rows alike; dropout rows -1 to -2% (their time is the consumers' ALU).
#  (2) sdpa_bwd_prep at 8 lanes per row (XDNN_SDPA_BWD_PREP=32 is the pass before): session 10's side-pass
#      timings put prep at ~0.09-0.10 ms for 134 MB read (~1.4 TB/s, half a warp idle at Dv 128, one 512-byte
#      round per warp); expected ~0.05-0.06 ms, -0.04 ms on every row (-1.5% plain, -2.5% causal).
#  Together b4h16 plain ~2.55 ms = 539 TFLOP/s (0.97x cuDNN): 560 not expected from these alone.
#
# PART=1 (call 1): link; correctness in parallel (every sdpa_bwd_wgmma case, default; --quick with the old paths
# (DQ=cta, PREP=32); deterministic --quick; bwddrop; memcheck --quick on a subset); ncu on one launch of the main
# kernel (b4h16 plain, default); the peer (cuDNN, flash: bench/sdpa_drop_peer.py); the bench rows
# bench/drop/sdpa_bwd_wgmma (plain / causal / Llama causal, with and without dropout 0.1) for the configurations
# in CFGS; the side passes alone (XDNN_SDPA_BWD_MAIN=0) with PREP=32 and 8.  DRY=1: the CPU references and plans
# here (no GPU).  Logs in OUT/logs.tgz, the tables in OUT/summary.txt.
set -uo pipefail
. tests/gpu/dev_env.sh "$@" > /dev/null
exec > >(tee "$out/summary.txt") 2>&1
cat "$out/device.txt" "$dev/COMMIT" 2>/dev/null
dry=${DRY:+--dry}
if [ -z "$dry" ]; then
    dev_build_testers difftest_seq || exit 1
fi
dt=$dev/difftest_seq
PART=${PART:-1}
SWEEP_S=${SWEEP_S:-70}

step "correctness (in parallel)"
sweep() { # TAG LIMIT [VAR=VALUE...] -- TESTER ARGS
    local tag=$1 lim=$2 env=(); shift 2
    while [ "$1" != -- ]; do env+=("$1"); shift; done; shift
    env "${env[@]}" OMP_NUM_THREADS=3 timeout "$lim" "$dt" $dry "$@" > "$out/$tag.log" 2>&1
}
sweep all "$SWEEP_S" -- sdpa_bwd_wgmma & p1=$!
sweep old_quick "$SWEEP_S" XDNN_SDPA_BWD_DQ=cta XDNN_SDPA_BWD_PREP=32 -- --quick sdpa_bwd_wgmma & p2=$!
sweep det_quick "$SWEEP_S" XDNN_SDPA_BWD_DETERMINISTIC=1 -- --quick sdpa_bwd_wgmma & p3=$!
sweep drop "$SWEEP_S" -- bwddrop & p4=$!
if [ -z "$dry" ]; then
    OMP_NUM_THREADS=2 timeout "$SWEEP_S" compute-sanitizer --tool memcheck --print-limit 10 --error-exitcode 3 \
        "$dt" --quick "${MEMCHECK_FILTER:-fold-}" > "$out/memcheck.log" 2>&1 & p5=$!
    wait $p5
fi
wait $p1 $p2 $p3 $p4
for f in all old_quick det_quick drop; do
    echo "$f: ran $(grep -cE '^(PASS|FAIL)' "$out/$f.log") (FAIL $(grep -cE '^FAIL' "$out/$f.log")); $(grep -E 'passed,' "$out/$f.log" | tail -1)"
    grep -E "^FAIL" -A2 "$out/$f.log" | cut -c1-300 | head -8
done
[ -z "$dry" ] && { echo "memcheck:"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -6; }
[ -n "$dry" ] && exit 0

row=bench/drop/sdpa_bwd_wgmma/sdpa_bwd_bf16/b4h16k16s4096d128
if [ "$PART" = 1 ]; then
    step "ncu: one launch of the main kernel ($row, default)"
    DIFFTEST_ITERS=1 timeout "${NCU_S:-45}" ncu --kernel-name regex:'sdpa_bwd_wgmma' --launch-count 1 \
        --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section SourceCounters \
        --import-source no -o "$out/ncu_main" "$dt" --bench "$row" > "$out/ncu.log" 2>&1
    echo "ncu rc=$?"
    ncu --import "$out/ncu_main.ncu-rep" --page details > "$out/ncu_details.txt" 2>&1
    grep -E "Duration|Elapsed Cycles|SM Frequency|Compute \(SM\) Throughput|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Registers" \
        "$out/ncu_details.txt" | head -12
    ncu --import "$out/ncu_main.ncu-rep" --page source --csv --print-source sass > "$out/ncu_sass.csv" 2>/dev/null
    echo "sass rows: $(wc -l < "$out/ncu_sass.csv")"
fi

step "peer (cuDNN, flash)"
(cd "$dev" && PYTHONUNBUFFERED=1 timeout "${PEER_S:-50}" python3 sdpa_drop_peer.py) > "$out/peer.log" 2>&1
echo "peer rc=$?"; grep -E '"cudnn"' "$out/peer.log" | grep _bwd | cut -c1-160

step "bench"
# "TAG|VAR=VALUE,..." ("-": none); each runs every bench/drop/sdpa_bwd_wgmma row in one process
CFGS=${CFGS:-"new|-;old|XDNN_SDPA_BWD_DQ=cta,XDNN_SDPA_BWD_PREP=32;dqw_only|XDNN_SDPA_BWD_PREP=32"}
IFS=';' read -ra cfgs <<< "$CFGS"
for c in "${cfgs[@]}"; do
    IFS='|' read -r tag envs <<< "$c"
    x=${envs/#-/}
    echo "### $tag [$envs]" >> "$out/bench.log"
    env ${x//,/ } DIFFTEST_ITERS=${ITERS:-20} timeout "${BENCH_S:-40}" "$dt" --bench bench/drop/sdpa_bwd_wgmma \
        >> "$out/bench.log" 2>&1
    echo "$tag rc=$?"
done
for lpr in 32 8; do
    echo "### side$lpr [XDNN_SDPA_BWD_MAIN=0,XDNN_SDPA_BWD_PREP=$lpr]" >> "$out/bench.log"
    XDNN_SDPA_BWD_MAIN=0 XDNN_SDPA_BWD_PREP=$lpr DIFFTEST_ITERS=${ITERS:-20} timeout 25 "$dt" --bench "$row" \
        >> "$out/bench.log" 2>&1
done
awk '/^### /{cfg=$2} /^(PASS|FAIL)/{r=$2} /TIME .*sdpa_bwd/{n=r; sub(/.*sdpa_bwd_bf16/, "", n); printf "%-10s %-40s %s ms %s TFLOP/s\n", cfg, n, $5, $11}' \
    "$out/bench.log"
step done
(cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v -e '^logs.tgz$' -e '^summary.txt$' -e '^bench.log$' -e '^peer.log$'))
exit 0
