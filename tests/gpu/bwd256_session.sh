#!/usr/bin/env bash
# bwd256_session.sh DEV OUT — one device call on sdpa_bwd_wgmma past 128 columns and D != Dv (issue 10,
# session 9: the wide kernel of kernels/sdpa_bwd_wide_sm90a.cuh), sized for a 200-second call.  DEV: what
# tests/gpu/pack_dev.sh packs, plus dt/difftest_seq.o, dt/diffharness.o compiled where the library was built,
# py/sdpa_peer.py, dev_env.sh and this script.
#  1. correctness: every sdpa_bwd_wgmma case of difftest_seq (the old D <= 128 ones, the wide and D != Dv ones,
#     the ragged Hopper pairs) against the CPU reference; SWEEP=1: then difftest_seq --quick sdpa (every engine);
#  2. compute-sanitizer memcheck on the --quick wide cases (ids "wide-...": one mask per shape);
#  3. bench rows (sdpa_flash_wgmma forward, then the backward on sdpa_bwd_wgmma and on sdpa_bwd_flash, the
#     "before"): the difftest_seq --bench filters in BENCH (default: b2h8s4096 D = 256, b2h16s4096 192/128,
#     b4h16s4096 128/64, b2h16s4096 160, plain and causal, and b4h16s4096d256, bench/RESULTS-sdpa.md's row);
#     AB="ENV=VALUE:FILTER ...": those filters timed again with the variable set (a kernel's A/B switch);
#  4. NCU=1: ncu on one launch of the wide kernel (b2h8s4096d256, a few sections);
#  5. PyTorch's cuDNN (and flash / efficient) on the same shapes (bench/sdpa_peer.py).
# Logs in OUT/logs.tgz, a summary on stdout.
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
dev_link_tester difftest_seq || exit 1
dt=$dev/difftest_seq
left() { echo $(( ${BUDGET_S:-190} - (SECONDS - t0) )); }
step "sdpa_bwd_wgmma cases"
timeout ${CASES_S:-75} "$dt" sdpa_bwd_wgmma > "$out/cases.log" 2>&1
echo "rc=$?"; grep -E "^FAIL" "$out/cases.log" | cut -c1-220 | head -12; grep -E "passed," "$out/cases.log"
if [ -n "${SWEEP:-}" ]; then
    step "difftest_seq --quick sdpa"
    timeout ${SWEEP_S:-60} "$dt" --quick sdpa > "$out/sweep.log" 2>&1
    echo "rc=$?"; grep -E "^FAIL" "$out/sweep.log" | cut -c1-220 | head -12; grep -E "passed," "$out/sweep.log"
fi
step "memcheck --quick wide cases"
for f in wide-; do
    timeout ${SAN_S:-35} compute-sanitizer --tool memcheck --print-limit 5 "$dt" --quick "$f" > "$out/memcheck_$f.log" 2>&1
    echo "memcheck $f rc=$?"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck_$f.log" | head -5
done
step "bench rows"
for f in ${BENCH:-s4096d256v256 s4096d192v128 s4096d128v64 wgmma/sdpa_bwd_bf16/b4h16k16s4096d256 s4096d160v160}; do
    [ "$(left)" -gt 50 ] || { echo "out of time at $f"; break; }
    DIFFTEST_ITERS=${ITERS:-10} timeout 40 "$dt" --bench "$f" >> "$out/bench.log" 2>&1
done
for f in ${AB:-}; do # ENV=VALUE:FILTER, timed again with that variable set (a kernel's A/B switch)
    [ "$(left)" -gt 50 ] || { echo "out of time at $f"; break; }
    echo "${f%%:*} ${f#*:}" >> "$out/bench.log"
    env "${f%%:*}" DIFFTEST_ITERS=${ITERS:-10} timeout 40 "$dt" --bench "${f#*:}" >> "$out/bench.log" 2>&1
done
grep -E "TIME|^(PASS|FAIL)|^[A-Z_]+=" "$out/bench.log" | grep -v sdpa_flash_wgmma | sed 's/engines=.*//' | cut -c1-200
if [ -n "${NCU:-}" ] && [ "$(left)" -gt 55 ]; then
    step "ncu, one launch of sdpa_bwd_wide (b2h8s4096d256)"
    DIFFTEST_ITERS=1 timeout 30 ncu --launch-count 1 --kernel-name regex:sdpa_bwd_wide --section SpeedOfLight \
        --section WarpStateStats --section ComputeWorkloadAnalysis --section Occupancy -f -o "$out/wide" \
        "$dt" --bench wgmma/sdpa_bwd_bf16/b2h8k8s4096d256v256 > "$out/ncu_run.log" 2>&1
    echo "ncu rc=$?"
    ncu --import "$out/wide.ncu-rep" --page details > "$out/ncu.txt" 2>&1
    grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Registers Per|Issue Slots Busy|No Eligible|Stall|Tensor|Executed Ipc A|Warp Cycles Per Issued" "$out/ncu.txt" | head -24
fi
if [ "$(left)" -gt 20 ]; then
    step "PyTorch peer"
    (cd "$dev/py" && SDPA_PEER_FWD_ONLY= SDPA_PEER_SHAPES=${PEER_SHAPES:-b2h8k8s4096d256,b2h16k16s4096d192v128,b4h16k16s4096d128v64,b2h16k16s4096d160} \
        timeout $(( $(left) - 5 )) python3 sdpa_peer.py) > "$out/peer.log" 2>&1
    echo "peer rc=$?"; grep -E "bwd" "$out/peer.log" | cut -c1-170
fi
step done
(cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v -e '\.ncu-rep$' -e '^logs.tgz$'))
