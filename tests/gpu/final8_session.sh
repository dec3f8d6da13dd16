#!/usr/bin/env bash
# final8_session.sh DEV OUT — session 8's whole-network call on the merged tree (DEV packed by
# tests/gpu/pack_dev.sh): network_dev.sh (ResNet-50 N=256 and the Llama block, each beside PyTorch eager and
# torch.compile, PEER_ARGS "--profile 25": torch.profiler's costliest kernels of each mode), then the ResNet
# step again with each A/B switch of the fusions whose gain was measured only on its own branch (AB, default
# "XDNN_NO_NORM_RESIDUAL=1"), the step time and the engines' sums for each.
set -uo pipefail
dev=${1:?DEV}; out=${2:?OUT}
mkdir -p "$out"
t0=$SECONDS
PEER_ARGS=${PEER_ARGS:---profile 25} CASES=${CASES:-resnet256 llama} tests/gpu/network_dev.sh "$dev" "$out" 2>&1 | tail -30
export LD_LIBRARY_PATH="$(cd "$dev/lib" && pwd):${LD_LIBRARY_PATH:-}"
export XDNN_CACHE_DIR=${XDNN_CACHE_DIR:-/tmp/xdnn-cache}
R="graphs/resnet50_train_step.dnn --set N=256 --set HW=224 --set WID=64 --set NCLS=1000"
for ab in ${AB:-XDNN_NO_NORM_RESIDUAL=1}; do
    echo "== resnet256 with $ab ($((SECONDS - t0)) s)"
    env "$ab" timeout "${RUN_S:-150}" "$dev/xdnn" run --device gpu --format json --iters 10 --warmup 2 $R \
        > "$out/ab_${ab%%=*}.json" 2> "$out/ab_${ab%%=*}.err"
    echo "rc=$?"; python3 tests/gpu/step_by_engine.py "$out/ab_${ab%%=*}.json"
done
echo "== done ($((SECONDS - t0)) s)"
