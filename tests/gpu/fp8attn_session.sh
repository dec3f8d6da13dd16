#!/usr/bin/env bash
# fp8attn_session.sh DEV OUT — the device call of sdpa_fp8_wgmma (issue 14
# item 3, the fp8 attention forward on Hopper).  DEV is what
# tests/gpu/pack_dev.sh packs plus dt/difftest_seq.o and dt/diffharness.o
# compiled where the library was built, and sdpa_peer.py (the commands are at
# the end of this header).
#  1. difftest_seq "sdpa_fp8_wgmma": the fp8 cases against the CPU reference
#     (odd Sq/Skv, GQA, causal both alignments, o bf16/e4m3/e5m2, amax);
#  2. compute-sanitizer memcheck on the --quick fp8 cases;
#  3. the bench: b4h16s4096d128 fp8 (no mask, causal, o fp8; no mask again with
#     XDNN_SDPA_WGMMA_PINGPONG=0, and with XDNN_SDPA_FP8_EX2_POLY=1; nsys
#     apart the pre-pass and the kernel) beside our bf16
#     sdpa_flash_wgmma and PyTorch's bf16 SDPA (flash and cuDNN backends,
#     bench/sdpa_peer.py), and a probe of PyTorch's fp8 SDPA.
# Logs under OUT; a summary on stdout.  SKIP_NEW, SKIP_SAN, SKIP_BENCH leave
# one out.
# Packing DEV (on the build machine, tree at the commit to test):
#   tests/gpu/pack_dev.sh build-fp8attn /work/main/build-fp8attn-dev
#   mkdir -p DEV/dt && for f in difftest_seq diffharness; do gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra \
#     -DXDNN_HAVE_CUDA=1 -Iinclude -Isrc -I/usr/local/cuda/include -c tests/gpu/$f.c -o DEV/dt/$f.o; done
#   cp tests/gpu/fp8attn_session.sh tests/gpu/dev_env.sh bench/sdpa_peer.py DEV/
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
dev_link_tester difftest_seq || exit 1
dt=$dev/difftest_seq
if [ -z "${SKIP_NEW:-}" ]; then
    step "fp8 attention difftests"
    timeout "${NEW_S:-100}" "$dt" sdpa_fp8_wgmma > "$out/fp8.log" 2>&1
    echo "difftest fp8 rc=$?"
    grep -E "^FAIL" -A14 "$out/fp8.log" | cut -c1-400 | head -70
    grep -E "rel_norm|norm" "$out/fp8.log" | head -3
    grep -E "passed," "$out/fp8.log"
    XDNN_SDPA_FP8_EX2_POLY=1 timeout 60 "$dt" --quick sdpa_fp8_wgmma > "$out/fp8_poly.log" 2>&1
    echo "difftest fp8 --quick, 3 of 8 exps on the FMA pipe: rc=$? $(grep -E 'passed,' "$out/fp8_poly.log")"
fi
if [ -z "${SKIP_SAN:-}" ]; then
    step "compute-sanitizer memcheck (--quick fp8)"
    timeout "${SAN_S:-70}" compute-sanitizer --tool memcheck --print-limit 10 "$dt" --quick sdpa_fp8_wgmma \
        > "$out/memcheck.log" 2>&1
    echo "memcheck rc=$?"
    grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -12
fi
if [ -z "${SKIP_BENCH:-}" ]; then
    step "bench: fp8 and bf16 at b4h16s4096d128"
    for f in bench/fp8/ bench/wgmma/sdpa_fwd_bf16/b4h16k16s4096d128 bench/wgmma/sdpa_fwd_bf16_causal/b4h16k16s4096d128; do
        DIFFTEST_ITERS=${ITERS:-20} timeout 60 "$dt" --bench "$f" >> "$out/bench.log" 2>&1
        echo "bench $f rc=$?"
    done
    XDNN_SDPA_WGMMA_PINGPONG=0 DIFFTEST_ITERS=${ITERS:-20} timeout 60 "$dt" --bench bench/fp8/sdpa_fp8_wgmma/sdpa_fwd_e4m3-obf16 \
        > "$out/bench_nopp.log" 2>&1
    echo "bench without ping-pong rc=$?"
    for f in sdpa_fwd_e4m3-obf16 sdpa_fwd_e4m3_causal-obf16; do
        XDNN_SDPA_FP8_EX2_POLY=1 DIFFTEST_ITERS=${ITERS:-20} timeout 60 "$dt" --bench bench/fp8/sdpa_fp8_wgmma/$f \
            >> "$out/bench_poly.log" 2>&1
    done
    echo "bench 3 of 8 exps on the FMA pipe rc=$?"
    if command -v nsys > /dev/null; then # the V^T pre-pass and the attention kernel apart
        DIFFTEST_ITERS=5 timeout 90 nsys profile --stats=true -o /tmp/fp8prof -f true "$dt" --bench \
            bench/fp8/sdpa_fp8_wgmma/sdpa_fwd_e4m3-obf16 > "$out/nsys.log" 2>&1
        echo "nsys rc=$?"
        grep -E "sdpa_fp8" "$out/nsys.log" | cut -c1-220 | head -6
    fi
    grep -E "^(PASS|FAIL)|TIME" "$out/bench.log" | sed 's/engines=.*//' | cut -c1-260
    grep -E "TIME" "$out/bench_nopp.log" | sed 's/^/    (ping-pong off) /' | cut -c1-200
    grep -E "TIME" "$out/bench_poly.log" | sed 's/^/    (ex2 poly on) /' | cut -c1-200
    step "peer: PyTorch bf16 SDPA (flash, cuDNN)"
    SDPA_PEER_SHAPES=b4h16k16s4096d128 SDPA_PEER_FWD_ONLY=1 timeout 60 python3 "$dev/sdpa_peer.py" \
        > "$out/peer.log" 2>&1
    echo "peer rc=$?"
    cat "$out/peer.log"
    timeout 30 python3 -c '
import torch, torch.nn.functional as F
q = torch.randn(1, 2, 128, 128, device="cuda").to(torch.float8_e4m3fn)
try:
    F.scaled_dot_product_attention(q, q, q); print("fp8 SDPA probe: ran")
except Exception as e:
    print("fp8 SDPA probe:", type(e).__name__, str(e).splitlines()[0][:200])
' 2>&1 | tee "$out/fp8probe.log"
fi
step done
