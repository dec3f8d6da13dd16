#!/usr/bin/env bash
# quantv3_session.sh DEV OUT — the device call of quant_direct v3 (issue 14
# item 2: quantize / dequantize / amax at the bandwidth roofline;
# kernels/quant.cu kq_kernel_v3), sized for one call of ~4 minutes.
# DEV is what tests/gpu/pack_dev.sh packs plus dt/difftest_quant.o and
# dt/diffharness.o compiled where the library was built, and py/ the peer
# (bench/lowp_peer.py); the tester is linked here from objects only.
#  1. difftest_quant, the full sweep, byte-exact against the CPU reference
#     (v3 takes cols % 8 == 0, 16-byte aligned buffers and one scale element
#     per 8-element chunk: per-tensor, axis 0, blocks of 8k columns; v2 the
#     rest: odd shapes, axis -1, blocks [1,7] and [2,3,5]), then its table/
#     and chain/ cases (quantize, dequantize, amax, quant_scale) again under XDNN_QUANT_V2=1 (the old kernel, for A/B);
#  2. compute-sanitizer memcheck on the --quick sweep (v3's loads of the
#     last iteration's chunks past nchunks are predicated off);
#  3. the memory-bound bench rows (bench/quantize, bench/dequantize,
#     bench/amax, bench/copy: 8192 x 8192) with v3, then with XDNN_QUANT_V2=1,
#     in the same call; then the PyTorch peer's mem section (eager quantize /
#     dequantize / amax and the device copy) on the same GPU.
# Logs under OUT; a summary on stdout.  SKIP_SWEEP, SKIP_SAN, SKIP_BENCH,
# SKIP_PEER leave one out; SWEEP_S, SAN_S, BENCH_S, PEER_S are time limits.
#
# EXPECTED (H100, bench/RESULTS-lowp.md "quant_direct v2": copy 2719 GB/s;
# quantize bf16->e4m3 0.199 ms = 37% of copy, dequantize e4m3->bf16 1x32
# 0.361 ms = 21%, amax 45-48%).  v2 kept one 16-byte load in flight per
# thread behind ~40 instructions per element and 4-5 integer divisions per
# chunk; with 8192 blocks x 256 threads that is ~32 MB/us of requests short
# of what Little's law needs on HBM3 (~3.3 TB/s x ~0.8 us ~ 2.6 MB in
# flight over 132 SMs: ~20 KB per SM, i.e. >= 64 bytes per thread at 2048
# threads per SM with 256-thread blocks at full occupancy).  v3 issues 4 x
# 16 B (quantize/amax, bf16 x) or 8 x 8 B (dequantize, fp8 q) per thread
# before any arithmetic, divides by multiply-high, and stores 16 B per chunk
# in dequantize.  Expected: quantize and amax >= 2.4 TB/s of traffic
# (bytes read + written, as the bench counts) = ~90% of copy, i.e. bf16->e4m3
# per-tensor ~0.085 ms (from 0.199); dequantize 1x32 ~0.09 ms (from 0.361:
# 4x, mostly from the 16-byte stores); amax tensor / 1x32 ~0.06 ms.  The
# risk to that figure is the per-element arithmetic (kq_quotient's tie test,
# ~25 instructions): at 64M elements and ~1000 TIPS that is ~0.04 ms, hidden
# only if enough warps are resident (ptxas sm_90: no spills; registers
# decide the occupancy, check them if v3 falls short).  If v3 lands at ~70% of copy, the next step is fewer
# instructions per element (a branch-free tie test), not more bytes in flight.
#
# Packing DEV (on the build machine, tree at the commit to test):
#   tests/gpu/pack_dev.sh build-quantv3 /work/main/build-quantv3-dev
#   mkdir -p DEV/dt DEV/py && for f in difftest_quant diffharness; do
#     gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -DXDNN_HAVE_CUDA=1 -Iinclude -Isrc \
#       -I/usr/local/cuda/include -c tests/gpu/$f.c -o DEV/dt/$f.o; done
#   cp tests/gpu/dev_env.sh tests/gpu/quantv3_session.sh DEV/ && cp bench/lowp_peer.py DEV/py/
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
dev_link_tester difftest_quant || exit 1
dt=$dev/difftest_quant
if [ -z "${SKIP_SWEEP:-}" ]; then
    step "difftest_quant full sweep (v3)"
    timeout "${SWEEP_S:-80}" "$dt" > "$out/sweep.log" 2>&1
    echo "sweep rc=$? (124: cut short by SWEEP_S)"
    grep -E "^FAIL" -A6 "$out/sweep.log" | cut -c1-400 | head -40
    grep -E "passed," "$out/sweep.log"
    step "table/ and chain/ (quantize, dequantize, amax, quant_scale) with XDNN_QUANT_V2=1"
    for f in table/ chain/; do
        XDNN_QUANT_V2=1 timeout "${SWEEP_S:-80}" "$dt" "$f" >> "$out/sweep_v2.log" 2>&1
        echo "v2 $f rc=$?"
    done
    grep -E "^FAIL|passed," "$out/sweep_v2.log" | cut -c1-300 | head -20
fi
if [ -z "${SKIP_SAN:-}" ]; then
    step "compute-sanitizer memcheck (--quick)"
    timeout "${SAN_S:-60}" compute-sanitizer --tool memcheck --print-limit 10 --error-exitcode 3 "$dt" --quick \
        > "$out/memcheck.log" 2>&1
    echo "memcheck rc=$? (124: cut short by SAN_S)"
    grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -12
fi
if [ -z "${SKIP_BENCH:-}" ]; then
    for v in v3 v2; do
        step "bench quantize / dequantize / amax / copy ($v)"
        for f in bench/quantize bench/dequantize bench/amax bench/copy; do
            if [ $v = v2 ]; then
                XDNN_QUANT_V2=1 timeout "${BENCH_S:-40}" "$dt" --bench "$f" >> "$out/bench_$v.log" 2>&1
            else
                timeout "${BENCH_S:-40}" "$dt" --bench "$f" >> "$out/bench_$v.log" 2>&1
            fi
            echo "$v $f rc=$?"
        done
        grep -E "BENCH|^FAIL" "$out/bench_$v.log" | cut -c1-260
    done
fi
if [ -z "${SKIP_PEER:-}" ]; then
    step "PyTorch peer (mem section)"
    (cd "$dev/py" && LOWP_PEER_SECTIONS=mem timeout "${PEER_S:-60}" python3 lowp_peer.py) > "$out/peer.log" 2>&1
    echo "peer rc=$?"; cut -c1-200 "$out/peer.log" | tail -12
fi
step done
