#!/usr/bin/env bash
# fwdf32_session.sh DEV OUT — the device call of the Hopper attention forward with an f32 o (issue 10:
# sdpa_flash_wgmma's SPLIT kernel, P as hi + lo 16-bit halves, two P V wgmmas per k-step).  DEV is what
# tests/gpu/pack_dev.sh packs; difftest_seq is linked there from this tree's sources (as attn_masks_session.sh).
#  1. the new cases against the CPU reference at the f32 tolerance (ids with "-o32": sdpa_flash_wgmma's and the
#     older sdpa_flash ones), and the forward on sdpa_flash_wgmma feeding sdpa_bwd_wgmma through an f32 o;
#  2. regression: every 16-bit-o case forced on sdpa_flash_wgmma (the SPLIT=false instances changed shape);
#  3. bench: b4h16s4096 d128 and d256, bf16, causal and not: f32 o on sdpa_flash_wgmma and on sdpa_flash (bench/o32), the
#     bf16 o on sdpa_flash_wgmma (bench/wgmma), and the PyTorch peer (bench/sdpa_peer.py, flash and cuDNN,
#     bf16 o: PyTorch has no f32-o attention);
#  4. with SAN_S set: compute-sanitizer memcheck on the --quick "-o32" cases.
# Each step has its own time limit (NEW_S, SWEEP_S, BENCH_S, PEER_S, SAN_S); SKIP_SWEEP, SKIP_BENCH, SKIP_PEER
# leave one out.  Logs under OUT, a summary on stdout.  Packing DEV here (tree at the commit to test):
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

step "f32-o difftests"
: > "$out/new.log"
for f in -o32 sdpa_flash_wgmma+sdpa_bwd_wgmma; do
    timeout "${NEW_S:-150}" "$dt" "$f" >> "$out/new.log" 2>&1
    echo "difftest $f rc=$? ($("$dt" --list "$f" | wc -l) cases)"
done
grep -E "^FAIL" -A6 "$out/new.log" | cut -c1-400 | head -60
grep -E "passed," "$out/new.log"

if [ -z "${SKIP_SWEEP:-}" ]; then
    step "16-bit o regression on sdpa_flash_wgmma"
    timeout "${SWEEP_S:-150}" "$dt" sdpa/sdpa_flash_wgmma/ > "$out/sweep.log" 2>&1
    echo "difftest sdpa/sdpa_flash_wgmma/ rc=$? (124: cut short by SWEEP_S)"
    grep -E "^FAIL" "$out/sweep.log" | grep -v -- "-o32/" | cut -c1-300 | head -30
    echo "ran $(grep -cE '^(PASS|FAIL)' "$out/sweep.log") of $("$dt" --list sdpa/sdpa_flash_wgmma/ | wc -l)"
    grep -E "passed," "$out/sweep.log"
fi

if [ -z "${SKIP_BENCH:-}" ]; then
    step bench
    : > "$out/bench.log"
    for f in bench/o32/ bench/wgmma/sdpa_fwd_bf16/b4h16k16s4096d128 bench/wgmma/sdpa_fwd_bf16_causal/b4h16k16s4096d128 \
        bench/wgmma/sdpa_fwd_bf16/b4h16k16s4096d256 bench/wgmma/sdpa_fwd_bf16_causal/b4h16k16s4096d256; do
        DIFFTEST_ITERS=${ITERS:-10} timeout "${BENCH_S:-60}" "$dt" --bench "$f" >> "$out/bench.log" 2>&1
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
