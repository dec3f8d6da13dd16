#!/usr/bin/env bash
# attnb_dev.sh — one device call for sdpa_bwd_wgmma (run from the repository root, $OUT set by the caller):
# the sdpa_bwd_wgmma sweep against the CPU reference (both dQ modes), the bench shapes of bench/RESULTS-sdpa.md,
# the PyTorch peer on them, compute-sanitizer memcheck on the --quick sweep and (NCU=1) one ncu report.
# SKIP_RED=1 leaves out the red.global sweep, MODES the dQ modes timed on b4h16s4096d128 (bulk red det),
# SKIP_PEER=1 the peer; DEV the pack_dev-style folder (difftest_seq[.gz] and lib/).
D=${DEV:-build-attnb-dev}; [ -f $D/difftest_seq.gz ] && gunzip -f $D/difftest_seq.gz; chmod +x $D/difftest_seq
export LD_LIBRARY_PATH=$PWD/$D/lib
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
timeout 100 $D/difftest_seq sdpa_bwd_wgmma > $OUT/difftest.log 2>&1; rc=$?; echo "sweep rc=$rc"
grep -E "^FAIL" $OUT/difftest.log | cut -c1-330 | head -30; grep -E "passed," $OUT/difftest.log
[ $rc -eq 124 ] && { tail -5 $OUT/difftest.log; exit 1; }
if [ -z "${SKIP_RED:-}" ]; then
    XDNN_SDPA_BWD_DQ=red timeout 60 $D/difftest_seq --quick sdpa_bwd_wgmma > $OUT/difftest_red.log 2>&1
    echo "sweep red rc=$?"; grep -E "^FAIL" $OUT/difftest_red.log | cut -c1-200 | head; grep -E "passed," $OUT/difftest_red.log
fi
XDNN_SDPA_BWD_DETERMINISTIC=1 timeout 60 $D/difftest_seq sdpa_bwd_wgmma > $OUT/difftest_det.log 2>&1; echo "sweep det rc=$?"
grep -E "^FAIL" $OUT/difftest_det.log | cut -c1-200 | head; grep -E "passed," $OUT/difftest_det.log
: > $OUT/bench.log
for id in ${BENCH_IDS:-sdpa_bwd_bf16/b4h16k16s4096d128 sdpa_bwd_bf16_causal/b4h16k16s4096d128 sdpa_bwd_bf16/b16h16k16s1024d64 sdpa_bwd_bf16_causal/b16h16k16s1024d64 sdpa_bwd_bf16/b1h32k8s4096d128 sdpa_bwd_bf16_causal/b1h32k8s4096d128 sdpa_bwd_bf16_causal/b1h32k32s16384d128}; do
    modes=bulk; case $id in *b4h16k16s4096d128) modes=${MODES:-bulk red det};; esac # the dQ modes compared
    for mode in $modes; do
        echo "== $mode $id" >> $OUT/bench.log
        det=0; [ $mode = det ] && det=1
        XDNN_SDPA_BWD_DETERMINISTIC=$det XDNN_SDPA_BWD_DQ=$mode DIFFTEST_ITERS=10 timeout 40 \
            $D/difftest_seq --bench wgmma/$id >> $OUT/bench.log 2>&1
    done
done
grep -E "^==|TIME dq" $OUT/bench.log | sed 's/sdpa_bwd_wgmma B=.*//' | cut -c1-160
if [ -z "${SKIP_PEER:-}" ]; then
    SDPA_PEER_SHAPES=b4h16k16s4096d128,b16h16k16s1024d64,b1h32k8s4096d128,b1h32k32s16384d128 PYTHONUNBUFFERED=1 \
        timeout 120 python3 bench/sdpa_peer.py > $OUT/peer.log 2>&1; echo "peer rc=$?"; grep bwd $OUT/peer.log
fi
if [ -n "${NCU:-}" ]; then
    ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
    DIFFTEST_ITERS=1 timeout 150 $ncu --set full -k regex:sdpa_bwd_wgmma -c 1 -o $OUT/attnb_ncu \
        $D/difftest_seq --bench wgmma/sdpa_bwd_bf16/b4h16k16s4096d128 > $OUT/ncu_run.log 2>&1; echo "ncu rc=$?"
    $ncu --import $OUT/attnb_ncu.ncu-rep --page details > $OUT/ncu_details.txt 2>&1
    grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Registers Per|Achieved Occupancy|L2 Hit|Tensor|Issue Slots|Warp Cycles Per Issued|No Eligible|Stall|DRAM Throughput|L1/TEX Hit|Shared Memory" $OUT/ncu_details.txt | head -40
fi
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 3 $D/difftest_seq --quick sdpa_bwd_wgmma > $OUT/sanitizer.log 2>&1; echo "sanitizer rc=$?"
grep -E "ERROR SUMMARY|passed,|Invalid" $OUT/sanitizer.log | head
