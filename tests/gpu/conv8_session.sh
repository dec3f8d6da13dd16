#!/usr/bin/env bash
# conv8_session.sh DEV [OUT_DIR] — the device call that checks scaled_conv_im2col (src/gpu/eng_scaled_conv.c,
# kernels/scaled_conv_im2col.cu, kq_epilogue in kernels/quant.cu) for the first time:
#  1. difftest_quant sconv: the int8 conv cases bit-exact against the CPU reference, fp8 within CK_QGEMM's
#     tolerances, the refusals naming their reason;
#  2. difftest_quant smm: scaled_matmul (its i8 epilogue now goes through kq_epilogue, and its cuBLASLt set-up
#     through gpu_lt_lowp_gemm) — smm-q and smm, so the refactor is checked too;
#  3. compute-sanitizer memcheck on a few sconv cases (im2col and repack indexing, padded tails);
#  4. the sconv bench (ResNet-50-like layers at N = 32, int8 and fp8) and the PyTorch peer (bench/lowp_peer.py conv:
#     cuDNN bf16 conv and torch._int_mm on the im2col GEMM; SKIP_PEER=1 skips it).
# DEV is tests/gpu/pack_dev.sh's folder (a stripped, gzipped libxdnn.a and libcjson: the static binaries are too
# large to carry); difftest_quant is linked from it here with gcc, as final_session.sh does (a DEV that already
# holds a difftest_quant is used as it is).  Logs go to OUT_DIR (default $OUT).
# The call:  tests/gpu/pack_dev.sh build-conv8 build-dev   (here), then, carrying build-dev:
#            tests/gpu/conv8_session.sh build-dev "$OUT"
set -uo pipefail
dev=${1:?DEV}; out=${2:-${OUT:?OUT_DIR or \$OUT}}
mkdir -p "$out"
cuda=${CUDA_HOME:-/usr/local/cuda}
export LD_LIBRARY_PATH="$(cd "$dev/lib" 2>/dev/null && pwd):${LD_LIBRARY_PATH:-}"
bin="$dev/difftest_quant"
if [ ! -x "$bin" ]; then
    [ -f "$dev/libxdnn.a.gz" ] && gunzip -f "$dev/libxdnn.a.gz"
    gcc -std=c11 -D_GNU_SOURCE -O2 -DXDNN_HAVE_CUDA=1 -Iinclude -Isrc -I"$cuda/include" -o "$bin" \
        tests/gpu/difftest_quant.c tests/gpu/diffharness.c "$dev/libxdnn.a" -L"$dev/lib" -lcjson -lm -fopenmp \
        -L"$cuda/lib64" -lcudart_static -lstdc++ -ldl -lpthread -lrt > "$out/link.log" 2>&1
    echo "link rc=$?"; tail -5 "$out/link.log"
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee "$out/device.txt"
summary() { # LOG: failures with their messages, then the count line
    grep -E "^FAIL" "$1" | cut -c1-400 | head -30
    grep -A3 -E "^FAIL" "$1" | grep -vE "^(FAIL|--)" | cut -c1-300 | head -20
    grep -E "passed," "$1"
}
for f in sconv smm; do
    timeout "${SWEEP_S:-120}" "$bin" "$f" > "$out/difftest_$f.log" 2>&1
    echo "difftest $f rc=$?"; summary "$out/difftest_$f.log"
done
timeout "${SAN_S:-90}" compute-sanitizer --tool memcheck --error-exitcode 3 "$bin" "sconv/i8_x_i8->i8/" \
    > "$out/sanitizer.log" 2>&1
echo "sanitizer rc=$?"; grep -E "ERROR SUMMARY|passed," "$out/sanitizer.log"; grep -m5 -B2 -A8 "Invalid" "$out/sanitizer.log"
timeout "${BENCH_S:-120}" "$bin" --bench "${BENCH_FILTER:-sconv}" > "$out/bench.log" 2>&1
echo "bench rc=$?"; grep -E "BENCH|^FAIL" "$out/bench.log" | cut -c1-300
[ -n "${SKIP_PEER:-}" ] && exit 0
LOWP_PEER_SECTIONS=conv PYTHONUNBUFFERED=1 timeout "${PEER_S:-90}" python3 bench/lowp_peer.py > "$out/peer.log" 2>&1
echo "peer rc=$?"; cat "$out/peer.log"
