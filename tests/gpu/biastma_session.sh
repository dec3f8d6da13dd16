#!/usr/bin/env bash
# biastma_session.sh DEV OUT — one device call on sdpa_flash_wgmma's v7 (issue 10: the bias tile by TMA into
# shared memory, read with ldmatrix from the 128-byte swizzle), sized for a 240-second call.  DEV as in
# fwdgen_session.sh (tests/gpu/pack_dev.sh plus dt/difftest_seq.o, dt/diffharness.o compiled where the library
# was built, py/ with bench/sdpa_mask_peer.py and bench/peer.py).
#  1. the full difftest_seq "sdpa" sweep against the CPU reference: v8's bias-by-TMA cases (every broadcast,
#     odd Sq, Skv % 128 != 0, Sq != Skv, D 64/128/256, 16-bit and f32 o, more items than SMs) and v6's bias
#     cases (f32 bias, Skv % 8 != 0: still v6's loads), and the regression of everything else;
#  2. the same bias cases with XDNN_SDPA_WGMMA_BIAS_TMA=0 (v6 for every bias: the switch itself works);
#  3. compute-sanitizer memcheck on the --quick wgmma forward cases (small shapes only);
#  4. the mask bench on sdpa_flash_wgmma (b4h16k16s4096d128 bf16: plain, windows, padding, dropout and the bias
#     [1, H, S, S], [B, 1, S, S], [S, S], [B, H, S, S]) with v7, then its bias rows with v6 (A/B);
#  5. PyTorch's cuDNN on the four bias shapes and dropout (bench/sdpa_mask_peer.py, MASK_PEER_* filters).
# Logs in OUT/logs.tgz; a summary on stdout.  SKIP_SWEEP, SKIP_SAN, SKIP_PEER leave one out.
# Packing DEV (tree at the commit to test), then the call `tests/gpu/biastma_session.sh build-biastma-dev $OUT`
# carrying build-biastma-dev:
#   tests/gpu/pack_dev.sh build-biastma /work/main/build-biastma-dev
#   mkdir -p DEV/dt DEV/py && for f in difftest_seq diffharness; do gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra \
#     -DXDNN_HAVE_CUDA=1 -Iinclude -Isrc -I/usr/local/cuda/include -c tests/gpu/$f.c -o DEV/dt/$f.o; done
#   cp bench/sdpa_mask_peer.py bench/peer.py DEV/py/; cp tests/gpu/biastma_session.sh tests/gpu/dev_env.sh DEV/
# (the device's tree is main's: run DEV's own copy, `bash build-biastma-dev/biastma_session.sh ...`).
#
# Expected (written before the run; bench/RESULTS-sdpa.md 2026-11-24 session 8 has it too): bias [1, H, S, S]
# 4.46 -> 1.3-1.8 ms, [B, 1, S, S] 4.49 -> 1.3-1.8 (cuDNN 1.95 / 1.65): the bias bytes move by TMA beside K/V
# (537 MB per batch item, ~0.7 ms of HBM at 3 TB/s, overlapped with ~0.9 ms of tensor-core time), the consumers
# add 8 ldmatrix.x4 per tile instead of 64 dependent global loads.  [S, S] ~1.0-1.2 ms (L2-resident); [B, H, S, S]
# 1.4-2.0 (2 GB once, ~0.75 ms of HBM).  Plain, windows, padding, dropout unchanged (0.87 / 0.14 / 0.27 / 0.26 /
# 6.83).
# Run 1 (commit 1272f88, H100): 980/980, memcheck clean; bias 3.43-3.51 ms for all four shapes (v6 4.56-4.62, cuDNN
# 1.65-1.92): the same time with a 32 MB L2-resident [S, S] as with 2 GB [B, H, S, S], so not the bias bytes.  SASS
# of GEN showed why: the per-element dropout test split the exp2 loop into 64 branches (MUFU.EX2 / BRA in turn).
# Run 2 expected, with the straight exp2 loop: bias 1.2-1.8 ms on v7, v6 (BIAS_TMA=0) 1.5-2.5 (its loads now
# the main cost), dropout 6.9 -> 5-6.5 (the Philox words stay per element).
# Run 2 (6407e52): 980/980, v6 switch 107/107, memcheck 0 errors; bias 1.075-1.122 ms (BIAS_TMA=0 2.07-2.13),
# cuDNN 1.72-1.97 in the same call; dropout 5.88 (cuDNN 1.96); plain 0.905 (bench/RESULTS-sdpa.md).
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
dev_link_tester difftest_seq || exit 1
dt=$dev/difftest_seq
budget() { echo $(( ${BUDGET_S:-230} - (SECONDS - t0) )); }
# sweep LOG SECONDS FILTER: difftest_seq on FILTER against the CPU reference, its failures and bias counts
sweep() {
    timeout "$2" "$dt" "$3" > "$out/$1" 2>&1
    echo "$1: rc=$? (124: cut short; the cases listed ran)"
    grep -E "^FAIL" -A6 "$out/$1" | cut -c1-300 | head -30
    echo "$1: wgmma forward bias cases $(grep -E '^PASS' "$out/$1" | grep wgmma | grep -cE 'bias|/all') passed," \
        "$(grep -E '^FAIL' "$out/$1" | grep -cE 'bias|/all') failed; $(grep -E 'passed,' "$out/$1")"
}
if [ -z "${SKIP_SWEEP:-}" ]; then
    step "difftest_seq sdpa (full sweep)"
    sweep sdpa.log "${SWEEP_S:-90}" sdpa
    step "the wgmma bias cases with v6's loads (XDNN_SDPA_WGMMA_BIAS_TMA=0)"
    XDNN_SDPA_WGMMA_BIAS_TMA=0 sweep sdpa_v6.log 40 sdpa/sdpa_flash_wgmma/bias
fi
if [ -z "${SKIP_SAN:-}" ]; then
    step "memcheck --quick sdpa_flash_wgmma"
    timeout "${SAN_S:-50}" compute-sanitizer --tool memcheck --print-limit 10 --error-exitcode 3 "$dt" --quick \
        sdpa/sdpa_flash_wgmma > "$out/memcheck.log" 2>&1
    echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -8
fi
step "mask bench (xdnn), v7 then v6's bias"
: > "$out/bench.log"
DIFFTEST_ITERS=${ITERS:-10} timeout "${BENCH_S:-60}" "$dt" --bench bench/masks/sdpa_flash_wgmma/sdpa_fwd >> "$out/bench.log" 2>&1
echo "bench v7 rc=$?"
if [ "$(budget)" -gt 50 ]; then
    echo "== v6 (XDNN_SDPA_WGMMA_BIAS_TMA=0)" >> "$out/bench.log"
    XDNN_SDPA_WGMMA_BIAS_TMA=0 DIFFTEST_ITERS=${ITERS:-10} timeout 40 "$dt" --bench \
        bench/masks/sdpa_flash_wgmma/sdpa_fwd_bf16_bias >> "$out/bench.log" 2>&1
    echo "bench v6 rc=$?"
fi
grep -E "^(PASS|FAIL)|TIME|^==" "$out/bench.log" | sed 's/engines=.*//' | cut -c1-200
if [ -z "${SKIP_PEER:-}" ] && [ "$(budget)" -gt 30 ]; then
    step "PyTorch cuDNN on the bias shapes"
    (cd "$dev/py" && PYTHONUNBUFFERED=1 MASK_PEER_CASES=bias-1hss,bias-b1ss,bias-ss,bias-bhss,dropout \
        MASK_PEER_BACKENDS=cudnn timeout $(( $(budget) - 5 )) python3 sdpa_mask_peer.py) > "$out/peer.log" 2>&1
    echo "peer rc=$?"; grep -v Warning "$out/peer.log" | grep -E '"sdpa_fwd|torch' | cut -c1-160
fi
step done
(cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v '^logs.tgz$'))
