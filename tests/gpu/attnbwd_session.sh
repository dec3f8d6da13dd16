#!/usr/bin/env bash
# attnbwd_session.sh DEV OUT — one device call on sdpa_bwd_wgmma's speed (issue 10: backward
# b4h16s4096d128), sized for a 180-second call.  DEV as in ragged_session.sh (tests/gpu/pack_dev.sh plus
# dt/difftest_seq.o, dt/diffharness.o compiled where the library was built, py/ the peer scripts).
#  1. correctness: the sdpa_bwd_wgmma cases (dense, masks, GQA, ragged) under each dS schedule in SCHEDS
#     (XDNN_SDPA_BWD_SCHED bits), against the CPU reference; FULL=1: the whole difftest_seq sdpa sweep
#     (default schedule) and the deterministic mode on the wgmma backward cases;
#  2. memcheck on the --quick sdpa_bwd_wgmma cases (SAN=1);
#  3. the dense bench rows b4h16s4096d128 plain and causal (bench/wgmma, the partition prep + memset + main
#     kernel + dq) under each schedule in BENCH_SCHEDS ("red": XDNN_SDPA_BWD_DQ=red), and (SIDE=1) the side passes alone (XDNN_SDPA_BWD_MAIN=0);
#  4. NCU=1: ncu --set full on one launch of the main kernel (the plain row, schedule NCU_SCHED);
#  5. PyTorch's cuDNN and flash on the same shape (bench/sdpa_peer.py).
# Logs in OUT/logs.tgz (and OUT/bwd.ncu-rep); a summary on stdout.
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
dev_link_tester difftest_seq || exit 1
dt=$dev/difftest_seq
left() { echo $(( ${BUDGET_S:-170} - (SECONDS - t0) )); }
for sc in ${SCHEDS:-}; do
    step "sdpa_bwd_wgmma cases, XDNN_SDPA_BWD_SCHED=$sc"
    XDNN_SDPA_BWD_SCHED=$sc timeout 30 "$dt" sdpa_bwd_wgmma > "$out/cases$sc.log" 2>&1
    echo "rc=$?"; grep -E "^FAIL" "$out/cases$sc.log" | cut -c1-300 | head -8; grep -E "passed," "$out/cases$sc.log"
done
if [ -n "${FULL:-}" ]; then
    step "difftest_seq sdpa (default schedule)"
    timeout 70 "$dt" sdpa > "$out/sdpa.log" 2>&1
    echo "rc=$?"; grep -E "^FAIL" -A3 "$out/sdpa.log" | cut -c1-300 | head -20; grep -E "passed," "$out/sdpa.log"
    XDNN_SDPA_BWD_DETERMINISTIC=1 timeout 25 "$dt" sdpa_bwd_wgmma > "$out/det.log" 2>&1
    echo "deterministic rc=$?"; grep -E "^FAIL|passed," "$out/det.log" | cut -c1-300 | head -8
fi
if [ -n "${SAN:-}" ]; then
    step "memcheck --quick sdpa_bwd_wgmma"
    timeout ${SAN_S:-30} compute-sanitizer --tool memcheck --print-limit 10 "$dt" --quick sdpa_bwd_wgmma > "$out/memcheck.log" 2>&1
    echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -8
fi
step "bench rows"
for sc in ${BENCH_SCHEDS:-0}; do
    for f in sdpa_bwd_bf16/b4h16k16s4096d128 sdpa_bwd_bf16_causal/b4h16k16s4096d128; do
        [ "$(left)" -gt 40 ] || { echo "out of time at sched $sc $f"; break 2; }
        echo "sched=$sc $f" >> "$out/bench.log"
        if [ "$sc" = red ]; then # the default schedule, dQ tiles added by red.global.add.v4 from registers
            XDNN_SDPA_BWD_DQ=red DIFFTEST_ITERS=${ITERS:-20} timeout 25 "$dt" --bench "bench/wgmma/$f" >> "$out/bench.log" 2>&1
        else
            XDNN_SDPA_BWD_SCHED=$sc DIFFTEST_ITERS=${ITERS:-20} timeout 25 "$dt" --bench "bench/wgmma/$f" >> "$out/bench.log" 2>&1
        fi
    done
done
if [ -n "${SIDE:-}" ]; then
    echo "side passes alone (XDNN_SDPA_BWD_MAIN=0)" >> "$out/bench.log"
    XDNN_SDPA_BWD_MAIN=0 DIFFTEST_ITERS=${ITERS:-20} timeout 25 "$dt" --bench bench/wgmma/sdpa_bwd_bf16/b4h16k16s4096d128 >> "$out/bench.log" 2>&1
fi
grep -E "^sched|^side|TIME|^(PASS|FAIL)" "$out/bench.log" | sed 's/engines=.*//' | cut -c1-200
if [ -n "${NCU:-}" ] && [ "$(left)" -gt 60 ]; then
    step "ncu, one launch of the main kernel (sched ${NCU_SCHED:-0})"
    XDNN_SDPA_BWD_SCHED=${NCU_SCHED:-0} DIFFTEST_ITERS=1 timeout $(( $(left) - 25 )) ncu --launch-count 1 \
        --kernel-name regex:sdpa_bwd_wgmma --set full -f -o "$out/bwd" "$dt" --bench bench/wgmma/sdpa_bwd_bf16/b4h16k16s4096d128 \
        > "$out/ncu_run.log" 2>&1
    echo "ncu rc=$?"; tail -3 "$out/ncu_run.log"
    ncu --import "$out/bwd.ncu-rep" --page details > "$out/ncu.txt" 2>&1
    grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Registers Per|Achieved Occ|Issue Slots Busy|No Eligible|L2 Hit|One or More|Tensor|Executed Ipc A" "$out/ncu.txt" | head -20
    ncu --import "$out/bwd.ncu-rep" --page raw --csv > "$out/ncu_raw.csv" 2>&1
    ncu --import "$out/bwd.ncu-rep" --page source --csv --print-source sass > "$out/ncu_sass.csv" 2>&1
fi
if [ "$(left)" -gt 20 ]; then
    step "PyTorch peer (cuDNN, flash)"
    (cd "$dev/py" && SDPA_PEER_SHAPES=b4h16k16s4096d128 timeout $(( $(left) - 5 )) python3 sdpa_peer.py) > "$out/peer.log" 2>&1
    echo "peer rc=$?"; grep bwd "$out/peer.log" | cut -c1-160
fi
step done
# at most 8 files come back: the logs in one archive, the ncu report beside it
(cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v -e '\.ncu-rep$' -e '^logs.tgz$'))
