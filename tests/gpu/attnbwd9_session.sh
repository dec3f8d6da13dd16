#!/usr/bin/env bash
# attnbwd9_session.sh DEV OUT — one device call on sdpa_bwd_wgmma's speed (issue 10, session 9: the causal block
# order XDNN_SDPA_BWD_LPT, the Llama-3-8B step's GQA 32/8 causal shape), sized for a 195-second call.  DEV as in
# ragged_session.sh (tests/gpu/pack_dev.sh, dt/difftest_seq.o and dt/diffharness.o compiled where the library was
# built, py/sdpa_peer.py).  Steps, in order of need (each skipped when the budget BUDGET_S runs short):
#  1. correctness against the CPU reference: the sdpa_bwd_wgmma cases (FULL=1: the whole sdpa sweep; DET=1: again
#     deterministic under the default order), then again
#     with XDNN_SDPA_BWD_LPT=2 (sections of 2 heads: several sections and a short last one) in the deterministic
#     mode (the dQ turn order under the new block order; QUICK2=1: the --quick subset);
#  2. bench rows (bench/wgmma, the backward partition): b4h16 plain, then causal b4h16, b2h32k8 (Llama step),
#     b1h32k8 under each LPT value of LPTS ("def" = the default); SIDE=1: the side passes alone at b2h32k8;
#  3. SAN=1: compute-sanitizer memcheck on the --quick sdpa_bwd_wgmma cases;
#  4. NCU=1: ncu on one launch of the main kernel (a few sections and the SASS stall samples) at b4h16 plain and
#     b2h32k8 causal;
#  5. PyTorch's cuDNN and flash on those shapes (bench/sdpa_peer.py).
# Logs in OUT/logs.tgz, ncu reports beside it; a summary on stdout.  DRY=1 (no GPU: a check of the script here)
# runs the tester with --dry and skips the sanitizer, ncu and the peer.
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
dev_link_tester difftest_seq || exit 1
dt=$dev/difftest_seq dry=${DRY:+--dry} blist=${DRY:+--list} # dry: the bench rows only listed
left() { echo $(( ${BUDGET_S:-190} - (SECONDS - t0) )); }
knob() { [ "$1" = def ] && echo "" || echo "$1"; } # "def": XDNN_SDPA_BWD_LPT unset (empty = the default)
cases() { # cases LOG LIMIT [ENV...]: the sdpa_bwd_wgmma cases (FULL: every sdpa case) with ENV set
    local log=$1 lim=$2; shift 2
    env "$@" timeout "$lim" "$dt" $dry ${FILTER:-sdpa_bwd_wgmma} > "$out/$log" 2>&1
    echo "$* rc=$?"; grep -E "^FAIL" -A2 "$out/$log" | cut -c1-300 | head -8; grep -E "passed," "$out/$log"
}
step "correctness"
FILTER=$([ -n "${FULL:-}" ] && echo sdpa || echo sdpa_bwd_wgmma) cases cases.log ${CASES_S:-60} XDNN_SDPA_BWD_LPT=
[ "$(left)" -gt 120 ] && dry="$dry ${QUICK2:+--quick}" cases lpt2det.log ${CASES_S:-45} XDNN_SDPA_BWD_LPT=2 \
    XDNN_SDPA_BWD_DETERMINISTIC=1
[ -n "${DET:-}" ] && [ "$(left)" -gt 120 ] && cases det.log 30 XDNN_SDPA_BWD_DETERMINISTIC=1
step "bench rows"
row() { # row LPT CASE
    [ "$(left)" -gt 60 ] || { echo "out of time at $1 $2"; return 1; }
    echo "lpt=$1 $2" >> "$out/bench.log"
    XDNN_SDPA_BWD_LPT=$(knob "$1") DIFFTEST_ITERS=${ITERS:-20} timeout 25 "$dt" $blist --bench "bench/wgmma/$2" >> "$out/bench.log" 2>&1
}
row def sdpa_bwd_bf16/b4h16k16s4096d128
for c in b4h16k16s4096d128 b2h32k8s4096d128 b1h32k8s4096d128; do
    for l in ${LPTS:-0 def}; do row "$l" "sdpa_bwd_bf16_causal/$c" || break 2; done
done
if [ -n "${SIDE:-}" ] && [ "$(left)" -gt 60 ]; then # the side passes alone: prep, memset, dq conversion
    echo "side passes alone (XDNN_SDPA_BWD_MAIN=0) b2h32k8 causal" >> "$out/bench.log"
    XDNN_SDPA_BWD_MAIN=0 DIFFTEST_ITERS=${ITERS:-20} timeout 25 "$dt" $blist --bench \
        bench/wgmma/sdpa_bwd_bf16_causal/b2h32k8s4096d128 >> "$out/bench.log" 2>&1
fi
grep -E "^lpt|^side|TIME|^FAIL" "$out/bench.log" | sed 's/engines=.*//' | cut -c1-200
[ -n "$dry" ] && { step "dry: done"; exit 0; }
if [ -n "${SAN:-}" ] && [ "$(left)" -gt 70 ]; then
    step "memcheck --quick sdpa_bwd_wgmma"
    timeout ${SAN_S:-35} compute-sanitizer --tool memcheck --print-limit 10 "$dt" --quick sdpa_bwd_wgmma > "$out/memcheck.log" 2>&1
    echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -8
fi
if [ -n "${NCU:-}" ]; then
    for c in ${NCU_CASES:-sdpa_bwd_bf16/b4h16k16s4096d128 sdpa_bwd_bf16_causal/b2h32k8s4096d128}; do
        [ "$(left)" -gt ${NCU_LEFT:-55} ] || { echo "no time for ncu $c"; break; }
        tag=$(echo "$c" | tr '/' '_')
        step "ncu, one launch of the main kernel: $c"
        DIFFTEST_ITERS=1 timeout $(( $(left) - 40 )) ncu --launch-count 1 --kernel-name regex:sdpa_bwd_wgmma \
            --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
            --section WarpStateStats --section SchedulerStats --section SourceCounters --section LaunchStats \
            -f -o "$out/$tag" "$dt" --bench "bench/wgmma/$c" > "$out/ncu_$tag.log" 2>&1
        echo "ncu rc=$?"; tail -2 "$out/ncu_$tag.log"
        ncu --import "$out/$tag.ncu-rep" --page details > "$out/ncu_$tag.txt" 2>&1
        grep -E "^  [a-z_]|Duration|Compute \(SM\) Throughput|Memory Throughput|Issue Slots Busy|No Eligible|L2 Hit|L1/TEX Hit|Tensor|Executed Ipc A|Shared Memory|Stall" "$out/ncu_$tag.txt" | head -24
        ncu --import "$out/$tag.ncu-rep" --page source --csv --print-source sass > "$out/sass_$tag.csv" 2>&1
    done
fi
if [ "$(left)" -gt 15 ]; then
    step "PyTorch peer (cuDNN, flash)"
    (cd "$dev/py" && SDPA_PEER_SHAPES=${PEER_SHAPES:-b4h16k16s4096d128,b2h32k8s4096d128,b1h32k8s4096d128} \
        timeout $(( $(left) - 3 )) python3 sdpa_peer.py) > "$out/peer.log" 2>&1
    echo "peer rc=$?"; grep bwd "$out/peer.log" | cut -c1-160
fi
step done
# at most 8 files come back: the logs in one archive, the ncu reports beside it
(cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v -e '\.ncu-rep$' -e '^logs.tgz$'))
