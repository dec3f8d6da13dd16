#!/usr/bin/env bash
# run_norm.sh BUILD_DIR [difftest_norm args...] — build the gpunorm
# differential tester (tests/gpu/difftest_norm.c) with plain gcc against
# BUILD_DIR/libxdnn.a, as run.sh does for difftest.c, and run it.
# Exit: the tester's status (77 = no GPU: nothing was run).
set -euo pipefail
build=${1:?usage: tests/gpu/run_norm.sh BUILD_DIR [difftest_norm args]}
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
cc=${CC:-gcc}
extra_l=()
if [ -d "$build/lib" ]; then extra_l=(-L"$build/lib" -Wl,-rpath,"$(cd "$build/lib" && pwd)"); fi
"$cc" -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -DXDNN_HAVE_CUDA=1 \
    -I"$root/include" -I"$root/src" -I"$cuda/include" \
    -o "$build/difftest_norm" "$root/tests/gpu/difftest_norm.c" "$build/libxdnn.a" \
    "${extra_l[@]}" -lcjson -lm -fopenmp -L"$cuda/lib64" -Wl,-rpath,"$cuda/lib64" \
    -lcublasLt -lcublas -lnvrtc -lcudart_static -lstdc++ -ldl -lpthread -lrt
exec "$build/difftest_norm" "$@"
