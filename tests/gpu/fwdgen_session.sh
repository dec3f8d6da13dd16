#!/usr/bin/env bash
# fwdgen_session.sh DEV OUT — one device call on sdpa_flash_wgmma's GEN variant (issue 10: bias and dropout on
# the Hopper forward; kernel header v6), sized for a 240-second call.  DEV as in ragged_session.sh
# (tests/gpu/pack_dev.sh plus dt/difftest_seq.o, dt/diffharness.o compiled where the library was built, py/
# with bench/sdpa_mask_peer.py and bench/peer.py).
#  1. the full difftest_seq "sdpa" sweep (~900 cases, ~40 s) against the CPU reference: every bias, dropout,
#     window and seq-len case of the wgmma forward (16-bit and f32 o) among them, and the regression of the
#     plain variants (their PTX is unchanged);
#  2. compute-sanitizer memcheck on the --quick wgmma forward cases (the bias loads: clamped rows and keys);
#  3. the mask bench (difftest_seq --bench bench/masks/sdpa_flash_wgmma, b4h16k16s4096d128 bf16: plain,
#     window 256 / 1024, padding, bias [1, H, S, S] and [B, 1, S, S], dropout 0.1) and the same on sdpa_flash,
#     then PyTorch's cuDNN / flash / efficient on the same masks (bench/sdpa_mask_peer.py).
# Logs in OUT/logs.tgz; a summary on stdout.  SKIP_SWEEP, SKIP_SAN, SKIP_PEER leave one out; SWEEP_S, SAN_S,
# BENCH_S, PEER_S are their time limits.
# Packing DEV (on the build machine, tree at the commit to test), then the device call
# `tests/gpu/fwdgen_session.sh build-fwdgen-dev $OUT` carrying build-fwdgen-dev:
#   tests/gpu/pack_dev.sh build-fwdgen build-fwdgen-dev
#   mkdir -p build-fwdgen-dev/dt build-fwdgen-dev/py && for f in difftest_seq diffharness; do
#     gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -DXDNN_HAVE_CUDA=1 -Iinclude -Isrc \
#       -I/usr/local/cuda/include -c tests/gpu/$f.c -o build-fwdgen-dev/dt/$f.o; done
#   cp bench/sdpa_mask_peer.py bench/peer.py build-fwdgen-dev/py/
#
# Expected (written before any run; bench/RESULTS-sdpa.md 2026-11-24 has the before): ptxas no longer
# serializes GEN's wgmmas (C7520 gone on all 12 GEN instantiations), and the bias loads are straight-line code.
#  - bias [1, H, S, S] and [B, 1, S, S]: 13.6 / 13.1 ms before, against cuDNN 1.96 / 1.71.  The time went mostly
#    into the 64 bias loads per tile per thread, each waiting for the one before (a dtype switch per element:
#    ~64 x 0.5-1 us of latency per tile, not hidden); the serialized wgmmas were the smaller part (the backward
#    lost 18% to them).  Now each tile's loads issue together (one latency per tile, ~1 us, half hidden by the
#    other consumer's GEMMs under ping-pong) and the bias's 2 GB (4 x 512 MB: re-read per batch) stream from
#    HBM (~0.7 ms at 3 TB/s).  Expected 1.6-3 ms (5-8x faster; 0.8-1.5x cuDNN).  If it lands under sdpa_flash's
#    11.7-12.1 ms, wgmma_cost in src/gpu/eng_sdpa.c must drop its rate-40 penalty for a bias (planner still
#    sends a bias to sdpa_flash unless forced).
#  - dropout 0.1 (new bench row, no before): Philox-4x32-10 per element (~60 integer instructions, one word per
#    element by sdpa.h's rule) is ~3.5x the tile's tensor-core time, so compute-bound on the SM's ALUs: expected
#    2.5-4 ms (3-4.5x the plain 0.88 ms); the un-serialized wgmmas win only 5-15% here.
#  - plain, window, padding rows: unchanged (plain variant's PTX is byte-identical): 0.88 / 0.14 / 0.27 / 0.26 ms.
# Places most likely wrong on a first run: the bias row pointers (byte offsets from the strides, esz by
# dtype) in bias_add; the V wait moved before the fence (a hang would show as the sweep's timeout).
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
dev_link_tester difftest_seq || exit 1
dt=$dev/difftest_seq
left() { echo $(( ${BUDGET_S:-230} - (SECONDS - t0) )); }
if [ -z "${SKIP_SWEEP:-}" ]; then
    step "difftest_seq sdpa (full sweep)"
    timeout "${SWEEP_S:-80}" "$dt" sdpa > "$out/sdpa.log" 2>&1
    echo "difftest sdpa rc=$? (124: cut short by SWEEP_S; the cases listed ran)"
    grep -E "^FAIL" -A6 "$out/sdpa.log" | cut -c1-300 | head -40
    echo "wgmma forward GEN cases (bias, dropout, all): $(grep -E '^PASS' "$out/sdpa.log" | grep wgmma |
        grep -cE 'bias|dropout|/all') passed, $(grep -E '^FAIL' "$out/sdpa.log" | grep -cE 'bias|dropout|/all') failed"
    grep -E "passed," "$out/sdpa.log"
fi
if [ -z "${SKIP_SAN:-}" ]; then
    step "memcheck --quick sdpa_flash_wgmma"
    timeout "${SAN_S:-60}" compute-sanitizer --tool memcheck --print-limit 10 --error-exitcode 3 "$dt" --quick \
        sdpa_flash_wgmma > "$out/memcheck.log" 2>&1
    echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -8
fi
step "mask bench (xdnn)"
: > "$out/bench.log"
for f in bench/masks/sdpa_flash_wgmma/sdpa_fwd bench/masks/sdpa_flash/sdpa_fwd_bf16_bias \
    bench/masks/sdpa_flash/sdpa_fwd_bf16_dropout; do
    [ "$(left)" -gt 40 ] || { echo "out of time before $f"; break; }
    DIFFTEST_ITERS=${ITERS:-10} timeout "${BENCH_S:-60}" "$dt" --bench "$f" >> "$out/bench.log" 2>&1
    echo "bench $f rc=$?"
done
grep -E "^(PASS|FAIL)|TIME" "$out/bench.log" | sed 's/engines=.*//' | cut -c1-200
if [ -z "${SKIP_PEER:-}" ] && [ "$(left)" -gt 30 ]; then
    step "PyTorch peer (cuDNN, flash, efficient) on the masks"
    (cd "$dev/py" && PYTHONUNBUFFERED=1 timeout $(( $(left) - 5 )) python3 sdpa_mask_peer.py) > "$out/peer.log" 2>&1
    echo "peer rc=$?"; grep -v Warning "$out/peer.log" | grep -E '"sdpa_fwd|torch' | cut -c1-160
fi
step done
(cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v '^logs.tgz$'))
