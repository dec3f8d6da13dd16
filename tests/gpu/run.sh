#!/usr/bin/env bash
# run.sh BUILD_DIR [--only NAME] [tester args...] — `make test-gpu`.
#
# Builds every GPU differential tester (tests/gpu/difftest.c and
# difftest_<family>.c: core, conv, norm, seq) with plain gcc against
# BUILD_DIR/libxdnn.a — the GPU machine needs no flex, bison or bats — runs
# each with the given arguments (--quick, --bench, --dry, a case filter), and
# ends with the total "N passed, N failed".  --only core|conv|norm|seq runs one.
# Exit: 0 all passed, 1 a case failed, 77 no GPU (nothing was run).
set -euo pipefail
build=${1:?usage: tests/gpu/run.sh BUILD_DIR [--only NAME] [tester args]}
shift
only=
if [ "${1:-}" = --only ]; then only=${2:?--only needs core, conv, norm or seq}; shift 2; fi
root=$(cd "$(dirname "$0")/../.." && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
cc=${CC:-gcc}
# libcjson may be missing on a GPU machine: a copy can travel in BUILD_DIR/lib.
extra_l=()
if [ -d "$build/lib" ]; then extra_l=(-L"$build/lib" -Wl,-rpath,"$(cd "$build/lib" && pwd)"); fi

total_pass=0 total_fail=0 status=0 ran=0
for src in "$root"/tests/gpu/difftest*.c; do
    name=$(basename "$src" .c)
    family=${name#difftest}; family=${family#_}; family=${family:-core}
    [ -z "$only" ] || [ "$only" = "$family" ] || continue
    bin="$build/$name"
    harness="$root/tests/gpu/diffharness.c"  # the testers' shared case loop and compare
    if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ] || [ "$build/libxdnn.a" -nt "$bin" ] ||
        [ "$harness" -nt "$bin" ] || [ "${harness%.c}.h" -nt "$bin" ]; then
        "$cc" -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -DXDNN_HAVE_CUDA=1 \
            -I"$root/include" -I"$root/src" -I"$cuda/include" \
            -o "$bin" "$src" "$harness" "$build/libxdnn.a" \
            "${extra_l[@]}" -lcjson -lm -fopenmp -L"$cuda/lib64" -Wl,-rpath,"$cuda/lib64" \
            -lcudart_static -lstdc++ -ldl -lpthread -lrt  # cuBLASLt, NVRTC: dlopen'ed (src/gpu/dl.h)
    fi
    echo "== $family ($name)"
    set +e
    "$bin" "$@" | tee "$build/$name.log"
    rc=${PIPESTATUS[0]}
    set -e
    ran=$((ran + 1))
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$build/$name.log" | tail -1)
    total_pass=$((total_pass + ${line%% passed*}))
    failed=${line#* passed, }; total_fail=$((total_fail + ${failed%% failed*}))
    if [ "$rc" -eq 77 ]; then status=77; elif [ "$rc" -ne 0 ] && [ "$status" -ne 77 ]; then status=1; fi
done
[ "$ran" -gt 0 ] || { echo "run.sh: no tester named '$only' (core, conv, norm, seq)" >&2; exit 1; }
echo "== all: $total_pass passed, $total_fail failed"
exit "$status"
