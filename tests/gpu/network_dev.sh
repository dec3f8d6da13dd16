#!/usr/bin/env bash
# network_dev.sh DEV OUT — network_session.sh on a DEV folder packed by tests/gpu/pack_dev.sh (the call
# carries no xdnn binary: the CLI is linked here from DEV/cli/*.o first).  CASES as network_session.sh
# (default "resnet256 llama"); the correctness checks are left to merged_session.sh (SKIP_CHECK=1) unless the
# caller sets SKIP_CHECK= (empty: network_session.sh's phase A checks, DEV/ref32 made by the caller).
set -uo pipefail
dev=${1:?DEV}; out=${2:?OUT}
mkdir -p "$out"
[ -f "$dev/libxdnn.a.gz" ] && gunzip -f "$dev/libxdnn.a.gz"
gcc -o "$dev/xdnn" "$dev"/cli/*.o "$dev/libxdnn.a" -L"$dev/lib" -lcjson -lm -fopenmp -L/usr/local/cuda/lib64 \
    -lcudart_static -lstdc++ -ldl -lpthread -lrt > "$out/link.log" 2>&1 || { tail "$out/link.log"; exit 1; }
CASES=${CASES:-"resnet256 llama"} SKIP_CHECK=${SKIP_CHECK-1} RUN_S=${RUN_S:-200} tests/gpu/network_session.sh "$dev" "$out"
