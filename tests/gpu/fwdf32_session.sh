#!/usr/bin/env bash
# fwdf32_session.sh DEV OUT — the device call of the Hopper attention forward with an f32 o (issue 10:
# sdpa_flash_wgmma's SPLIT kernel, P as hi + lo 16-bit halves, two P V wgmmas per k-step).  DEV is what
# tests/gpu/pack_dev.sh packs; difftest_seq is linked there from this tree's sources (as attn_masks_session.sh).
#  1. every case forced on sdpa_flash_wgmma's forward against the CPU reference: the new f32-o ones (ids with
#     "-o32", held to the f32 tolerance) and, as regression, the 16-bit-o ones; then the forward on
#     sdpa_flash_wgmma feeding sdpa_bwd_wgmma through an f32 o (the default intermediate);
#  2. bench: b4h16s4096 d128 and d256, bf16, causal and not: f32 o on sdpa_flash_wgmma and on sdpa_flash (bench/o32), the
#     bf16 o on sdpa_flash_wgmma (bench/wgmma), and the PyTorch peer (bench/sdpa_peer.py, flash and cuDNN,
#     bf16 o: PyTorch has no f32-o attention);
#  3. with SAN_S set: compute-sanitizer memcheck on the --quick "-o32" cases.
# Each step has its own time limit (SWEEP_S, NEW_S, BENCH_S per filter, PEER_S, SAN_S); SKIP_BENCH, SKIP_PEER
# leave one out (the defaults, 200 + 60 + 5 x 45 + 90 s at most, fit one 600-second call).  Logs under OUT.
# Packing DEV here (tree at the commit to test):
#   tests/gpu/pack_dev.sh build-fwdf32 build-fwdf32-dev
# and the call: tests/gpu/fwdf32_session.sh build-fwdf32-dev $OUT   (carry build-fwdf32-dev)
set -uo pipefail
dev=${1:?DEV}; out=${2:?OUT}
mkdir -p "$out"
t0=$SECONDS
step() { echo "== $1 ($((SECONDS - t0)) s)"; }
[ -f "$dev/libxdnn.a.gz" ] && gunzip -f "$dev/libxdnn.a.gz"
export LD_LIBRARY_PATH="$(cd "$dev/lib" && pwd):${LD_LIBRARY_PATH:-}"
export XDNN_CACHE_DIR=${XDNN_CACHE_DIR:-/tmp/xdnn-cache}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee "$out/device.txt"
cat "$dev/COMMIT" 2>/dev/null
step link
dt=$dev/difftest_seq
gcc -std=c11 -D_GNU_SOURCE -O2 -DXDNN_HAVE_CUDA=1 -Iinclude -Isrc -I/usr/local/cuda/include -o "$dt" \
    tests/gpu/difftest_seq.c tests/gpu/diffharness.c "$dev/libxdnn.a" -L"$dev/lib" -lcjson -lm -fopenmp \
    -L/usr/local/cuda/lib64 -lcudart_static -lstdc++ -ldl -lpthread -lrt > "$out/link.log" 2>&1 ||
    { echo "link failed"; tail -20 "$out/link.log"; exit 9; }

step "difftests: sdpa_flash_wgmma's forward, f32 o (new) and 16-bit o (regression)"
timeout "${SWEEP_S:-200}" "$dt" sdpa/sdpa_flash_wgmma/ > "$out/fwd.log" 2>&1
echo "difftest sdpa/sdpa_flash_wgmma/ rc=$? (124: cut short by SWEEP_S; the cases listed ran)"
timeout "${NEW_S:-60}" "$dt" sdpa_flash_wgmma+sdpa_bwd_wgmma > "$out/fwdbwd.log" 2>&1
echo "difftest sdpa_flash_wgmma+sdpa_bwd_wgmma rc=$?"
grep -hE "^FAIL" -A6 "$out/fwd.log" "$out/fwdbwd.log" | cut -c1-400 | head -60
for kind in -o32/ /f16/ /bf16/; do
    echo "o ${kind//\//}: $(grep -E '^PASS' "$out/fwd.log" | grep -c -- "$kind") passed," \
        "$(grep -E '^FAIL' "$out/fwd.log" | grep -c -- "$kind") failed of $("$dt" --list sdpa/sdpa_flash_wgmma/ | grep -c -- "$kind")"
done
grep -hE "passed," "$out/fwd.log" "$out/fwdbwd.log"

if [ -z "${SKIP_BENCH:-}" ]; then
    step bench
    : > "$out/bench.log"
    for f in bench/o32/ bench/wgmma/sdpa_fwd_bf16/b4h16k16s4096d128 bench/wgmma/sdpa_fwd_bf16_causal/b4h16k16s4096d128 \
        bench/wgmma/sdpa_fwd_bf16/b4h16k16s4096d256 bench/wgmma/sdpa_fwd_bf16_causal/b4h16k16s4096d256; do
        DIFFTEST_ITERS=${ITERS:-10} timeout "${BENCH_S:-45}" "$dt" --bench "$f" >> "$out/bench.log" 2>&1
        echo "bench $f rc=$?"
    done
    grep -E "^(PASS|FAIL)|TIME" "$out/bench.log" | sed 's/engines=.*//' | cut -c1-220
fi
if [ -z "${SKIP_PEER:-}" ]; then
    step "peer (PyTorch, bf16 o)"
    SDPA_PEER_SHAPES=b4h16k16s4096d128,b4h16k16s4096d256 SDPA_PEER_FWD_ONLY=1 PYTHONUNBUFFERED=1 timeout "${PEER_S:-90}" \
        python3 bench/sdpa_peer.py > "$out/peer.log" 2>&1
    echo "peer rc=$?"
    grep -v Warning "$out/peer.log" | head -12
fi
if [ -n "${SAN_S:-}" ]; then
    step "compute-sanitizer memcheck (--quick -o32)"
    timeout "$SAN_S" compute-sanitizer --tool memcheck --print-limit 10 --error-exitcode 3 "$dt" --quick -o32 \
        > "$out/sanitizer.log" 2>&1
    echo "sanitizer rc=$?"
    grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/sanitizer.log" | head -12
fi
step done
