#!/usr/bin/env bash
# network_session.sh BUILD_DIR OUT_DIR — the whole-network device call (bench/RESULTS-networks.md):
#  1. `xdnn run --check` (GPU vs CPU reference) of graphs/resnet50_train_step.dnn and
#     graphs/llama_block_train.dnn at reduced sizes;
#  2. the step at the real sizes (ResNet-50 N=32 and N=256 at 224x224, the Llama block at
#     B=2 S=4096), whole-execute and per-partition times as JSON;
#  3. the PyTorch peer (bench/network_peer.py), eager then torch.compile.
# Each piece has its own time limit (CHECK_S, RUN_S, PEER_S) so a slow one cannot eat the
# call; MORE_CHECKS adds two more --check sizes; SKIP_CHECK / SKIP_RUN / SKIP_PEER leave a piece out, CASES picks the real-size runs.
# Needs no compiler: the stripped xdnn in BUILD_DIR (libcjson may travel in BUILD_DIR/lib).
set -uo pipefail
build=${1:?BUILD_DIR}; out=${2:?OUT_DIR}
mkdir -p "$out"
export LD_LIBRARY_PATH="$(cd "$build/lib" 2>/dev/null && pwd):${LD_LIBRARY_PATH:-}"
export XDNN_CACHE_DIR=${XDNN_CACHE_DIR:-/tmp/xdnn-cache}
x="$build/xdnn"
R=graphs/resnet50_train_step.dnn; L=graphs/llama_block_train.dnn
RREAL="--set HW=224 --set WID=64 --set NCLS=1000"
LREAL="--set B=2 --set S=4096 --set HQ=32 --set HK=8 --set HD=128 --set I=14336"
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader
  git log -1 --format=%h 2>/dev/null; date -u; } | tee "$out/device.txt"
t0=$SECONDS
step() { echo "== $1 ($((SECONDS - t0)) s)"; }
if [ -z "${SKIP_CHECK:-}" ]; then
    checks=("$R" "$L --set S=256 --set HQ=8 --set HK=2 --set HD=128 --set I=512")
    [ -z "${MORE_CHECKS:-}" ] || checks+=("$R --set N=4 --set WID=32" "$L")
    for c in "${checks[@]}"; do
        step "check $c"
        timeout "${CHECK_S:-60}" $x run --device gpu --check --iters 1 --warmup 0 $c > "$out/check.log.tmp" 2>&1
        rc=$?; cat "$out/check.log.tmp" >> "$out/check.log"
        grep -E "mismatch|FAIL|error|rel norm" "$out/check.log.tmp" | head -12; echo "rc=$rc"
    done
fi
if [ -z "${SKIP_RUN:-}" ]; then
    for c in ${CASES:-resnet32 llama resnet256}; do
        case $c in
            resnet*) args="$R --set N=${c#resnet} $RREAL" ;;
            llama) args="$L $LREAL" ;;
        esac
        step "run $c"
        timeout "${RUN_S:-90}" $x run --device gpu --format json --iters "${ITERS:-10}" --warmup 2 $args \
            > "$out/run_$c.json" 2> "$out/run_$c.err"
        echo "rc=$?"; tail -3 "$out/run_$c.err"
        python3 -c "import json,sys; d=json.load(open(sys.argv[1])); g=d.get('gpu',d); print({k: g[k] for k in g if not isinstance(g[k], (list, dict))})" \
            "$out/run_$c.json" 2>&1 | cut -c1-400
    done
fi
if [ -z "${SKIP_PEER:-}" ]; then
    step peer
    PYTHONUNBUFFERED=1 timeout "${PEER_S:-150}" python3 bench/network_peer.py ${PEER_ARGS:-} > "$out/peer.log" 2>&1
    echo "peer rc=$?"; grep -v "^ *$" "$out/peer.log" | tail -12
fi
step done
