#!/usr/bin/env bash
# bn_session.sh DEV OUT — one device call for batchnorm over channels-last x
# (kernels/norm_cl.cu, bench/RESULTS-norm.md 2026-11-24).  DEV as pack_dev.sh
# fills it; difftest_norm is linked here with gcc.  Steps, each under its own limit:
#  1. correctness: difftest_norm's full sweep (the batchnorm-cl/ cases included),
#     then compute-sanitizer memcheck on the quick sweep of SAN_FILTERS (batchnorm-cl);
#  2. timings: difftest_norm --bench on the batchnorm cases with the channels-last
#     kernels and with them off (XDNN_NORM_NO_CL=1: the split path before them),
#     then bench/bn_peer.py (PyTorch eager, then torch.compile; PEER_ARGS= for eager
#     only) in the same call.
set -uo pipefail
dev=${1:?DEV}; out=${2:?OUT}
mkdir -p "$out"
cuda=/usr/local/cuda
export LD_LIBRARY_PATH="$(cd "$dev/lib" && pwd):${LD_LIBRARY_PATH:-}"
export XDNN_CACHE_DIR=${XDNN_CACHE_DIR:-/tmp/xdnn-cache}
L=("$dev/libxdnn.a" -L"$dev/lib" -lcjson -lm -fopenmp -L"$cuda/lib64" -lcudart_static -lstdc++ -ldl -lpthread -lrt)
CF=(-std=c11 -D_GNU_SOURCE -O2 -DXDNN_HAVE_CUDA=1 -Iinclude -Isrc -I"$dev/gen" -I"$cuda/include")
t0=$SECONDS
step() { echo "== $1 ($((SECONDS - t0)) s)"; }

step link
[ -f "$dev/libxdnn.a.gz" ] && gunzip -f "$dev/libxdnn.a.gz"
gcc "${CF[@]}" -o "$dev/difftest_norm" tests/gpu/difftest_norm.c tests/gpu/diffharness.c "${L[@]}" \
    > "$out/link.log" 2>&1 || { tail -20 "$out/link.log"; exit 1; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; date -u; } | tee "$out/device.txt"
t="$dev/difftest_norm"

step "difftest_norm (full sweep: norm.cu's shared helpers moved to norm_common.cuh)"
timeout "${NORM_S:-70}" "$t" > "$out/difftest.log" 2>&1; echo "rc=$?"
grep -E "^FAIL|passed, " "$out/difftest.log" | head -20

for f in ${SAN_FILTERS:-batchnorm-cl}; do
    step "compute-sanitizer memcheck --quick $f"
    timeout "${SAN_S:-45}" $cuda/bin/compute-sanitizer --tool memcheck "$t" --quick "$f" > "$out/san.log" 2>&1
    echo "rc=$?"; grep -E "ERROR SUMMARY|passed, |^FAIL" "$out/san.log" | head -5
done

step "bench: channels-last kernels, then XDNN_NORM_NO_CL=1"
for v in 0 1; do
    XDNN_NORM_NO_CL=$v timeout "${BENCH_S:-30}" "$t" --bench bench/batchnorm > "$out/bench$v.log" 2>&1
    echo "XDNN_NORM_NO_CL=$v"; grep -E "BENCH" "$out/bench$v.log" | sed 's/^ *//' | cut -c1-220
done

step "PyTorch eager + torch.compile"
timeout "${TORCH_S:-100}" python3 bench/bn_peer.py ${PEER_ARGS---compile} > "$out/bn_peer.log" 2>&1
echo "rc=$?"; cat "$out/bn_peer.log" | grep -v Warning | head -20
step done
