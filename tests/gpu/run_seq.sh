#!/usr/bin/env bash
# run_seq.sh BUILD_DIR [difftest_seq args...] — build the attention/RNN
# differential tester (tests/gpu/difftest_seq.c) with plain gcc against
# BUILD_DIR/libxdnn.a and run it (as tests/gpu/run.sh does for difftest.c).
# Exit: the tester's status (77 = no GPU: nothing was run).
set -euo pipefail
build=${1:?usage: tests/gpu/run_seq.sh BUILD_DIR [difftest_seq args]}
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
cc=${CC:-gcc}
extra_l=()
if [ -d "$build/lib" ]; then extra_l=(-L"$build/lib" -Wl,-rpath,"$(cd "$build/lib" && pwd)"); fi
"$cc" -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -DXDNN_HAVE_CUDA=1 \
    -I"$root/include" -I"$root/src" -I"$cuda/include" \
    -o "$build/difftest_seq" "$root/tests/gpu/difftest_seq.c" "$build/libxdnn.a" \
    "${extra_l[@]}" -lcjson -lm -fopenmp -L"$cuda/lib64" -Wl,-rpath,"$cuda/lib64" \
    -lcublasLt -lcublas -lnvrtc -lcudart_static -lstdc++ -ldl -lpthread -lrt
exec "$build/difftest_seq" "$@"
