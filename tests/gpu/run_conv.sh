#!/usr/bin/env bash
# run_conv.sh BUILD_DIR [difftest_conv args...] — build the differential
# tester of the conv_direct / conv_igemm / pool_direct engines
# (tests/gpu/difftest_conv.c) with plain gcc against BUILD_DIR/libxdnn.a and
# run it, as tests/gpu/run.sh does for difftest.c.
# Exit: the tester's status (77 = no GPU: nothing was run).
set -euo pipefail
build=${1:?usage: tests/gpu/run_conv.sh BUILD_DIR [difftest_conv args]}
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
cc=${CC:-gcc}
extra_l=()
if [ -d "$build/lib" ]; then extra_l=(-L"$build/lib" -Wl,-rpath,"$(cd "$build/lib" && pwd)"); fi
if [ ! -x "$build/difftest_conv" ] || [ "$root/tests/gpu/difftest_conv.c" -nt "$build/difftest_conv" ] ||
   [ "$build/libxdnn.a" -nt "$build/difftest_conv" ]; then
    "$cc" -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -DXDNN_HAVE_CUDA=1 \
        -I"$root/include" -I"$root/src" -I"$cuda/include" \
        -o "$build/difftest_conv" "$root/tests/gpu/difftest_conv.c" "$build/libxdnn.a" \
        "${extra_l[@]}" -lcjson -lm -fopenmp -L"$cuda/lib64" -Wl,-rpath,"$cuda/lib64" \
        -lcudart_static -lstdc++ -ldl -lpthread -lrt  # cuBLASLt, NVRTC: dlopen'ed (src/gpu/dl.h)
fi
exec "$build/difftest_conv" "$@"
