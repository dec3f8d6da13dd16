#!/usr/bin/env bash
# run.sh BUILD_DIR [difftest args...] — build the GPU differential tester with
# plain gcc against BUILD_DIR/libxdnn.a (no flex/bison/bats needed) and run it.
# Exit: the tester's status (77 = no GPU: nothing was run).
set -euo pipefail
build=${1:?usage: tests/gpu/run.sh BUILD_DIR [difftest args]}
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
cc=${CC:-gcc}
# libcjson may be missing on a GPU machine: a copy can travel in BUILD_DIR/lib.
extra_l=()
if [ -d "$build/lib" ]; then extra_l=(-L"$build/lib" -Wl,-rpath,"$(cd "$build/lib" && pwd)"); fi
"$cc" -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -DXDNN_HAVE_CUDA=1 \
    -I"$root/include" -I"$root/src" -I"$cuda/include" \
    -o "$build/difftest" "$root/tests/gpu/difftest.c" "$build/libxdnn.a" \
    "${extra_l[@]}" -lcjson -lm -fopenmp -L"$cuda/lib64" -Wl,-rpath,"$cuda/lib64" \
    -lcudart_static -lstdc++ -ldl -lpthread -lrt  # cuBLASLt, NVRTC: dlopen'ed (src/gpu/dl.h)
exec "$build/difftest" "$@"
