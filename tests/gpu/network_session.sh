#!/usr/bin/env bash
# network_session.sh BUILD_DIR OUT_DIR — the whole-network device call (bench/RESULTS-networks.md).
# Phase A, the GPU used for correctness only (torch.compile's first compiles run meanwhile in
# the background, so phase B finds them in the inductor cache):
#   - ResNet-50 step at the default (small) size, lr=30 so that the updated weights show the
#     gradients: `xdnn run --check` (GPU vs the CPU reference at bf16), and the GPU against a
#     CPU reference run with f32 intermediates (BUILD_DIR/ref32, made by the same graph with
#     intermediate=f32: how far bf16 rounding alone moves the result is the yardstick);
#   - the Llama block at S=256, 8/2 heads of 128, I=512: `xdnn run --check`;
#   - `xdnn plan` at the real sizes, which fills the kernel cache.
# Phase B, one timing at a time: for each case the xdnn step (whole execute and every partition,
# JSON), then the PyTorch peer (bench/network_peer.py) eager and compiled.
# Every piece has a time limit; CASES picks the cases, CHECKS the checks ("resnet llama"),
# SKIP_CHECK/SKIP_PEER leave parts out, PHASE_A_CMD runs in phase A (log: OUT/phase_a.log),
# PEER_ARGS go to the timed peer (e.g. "--modes compile --profile 25").
set -uo pipefail
build=${1:?BUILD_DIR}; out=${2:?OUT_DIR}
# The device call brings back only a few files from OUT_DIR (2026-11-23: 8; the per-case JSON
# was left out), so the pieces are written to a work folder, OUT_DIR gets report.md (rewritten
# after each case, so a call cut short still has the cases done) and raw.tgz at the end.
w=${WORK_DIR:-/tmp/network_session}
rm -rf "$w"; mkdir -p "$out" "$w"
export LD_LIBRARY_PATH="$(cd "$build/lib" 2>/dev/null && pwd):${LD_LIBRARY_PATH:-}"
export XDNN_CACHE_DIR=${XDNN_CACHE_DIR:-/tmp/xdnn-cache}
x="$build/xdnn"
R=graphs/resnet50_train_step.dnn; L=graphs/llama_block_train.dnn
CASES=${CASES:-resnet32 llama resnet256}
args_of() {
    case $1 in
        resnet*) echo "$R --set N=${1#resnet} --set HW=224 --set WID=64 --set NCLS=1000" ;;
        llama) echo "$L --set B=2 --set S=4096 --set HQ=32 --set HK=8 --set HD=128 --set I=14336" ;;
    esac
}
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader
  date -u; } | tee "$out/device.txt"
t0=$SECONDS
step() { echo "== $1 ($((SECONDS - t0)) s)"; }
# "reference NAME: ... rel norm X" lines -> the worst five and the median
relnorms() { python3 -c '
import re, sys
r = [(float(m.group(2)), m.group(1)) for m in re.finditer(r"^(?:reference|expect) (\S+): .*rel norm (\S+)$", open(sys.argv[1]).read(), re.M)]
r.sort(); print("%d outputs, median rel norm %.3g, worst: %s" % (len(r), r[len(r) // 2][0] if r else -1, ", ".join("%s %.3g" % (n, v) for v, n in r[-5:])))' "$1"; }

pids=()
if [ -z "${SKIP_PEER:-}" ]; then
    for c in $CASES; do
        PYTHONUNBUFFERED=1 timeout "${WARM_S:-150}" python3 bench/network_peer.py --modes compile --cases "$c" \
            --iters 1 --warmup 0 > "$w/peer_warm_$c.log" 2>&1 &
        pids+=($!)
    done
fi
CHECKS=${CHECKS:-resnet llama}
if [ -z "${SKIP_CHECK:-}" ] && [[ " $CHECKS " == *" resnet "* ]]; then
    step "check resnet (lr=30)"
    timeout 60 $x run --device gpu --check --iters 1 --warmup 0 --set lr=30 $R > "$w/check_resnet.log" 2>&1
    echo "rc=$?"; relnorms "$w/check_resnet.log"
    step "resnet GPU vs the f32-intermediate CPU reference"
    timeout 60 $x run --device gpu --iters 1 --warmup 0 --set lr=30 --expect "$build/ref32" $R > "$w/expect32_resnet.log" 2>&1
    echo "rc=$?"; relnorms "$w/expect32_resnet.log"
fi
if [ -z "${SKIP_CHECK:-}" ] && [[ " $CHECKS " == *" llama "* ]]; then
    step "check llama"
    timeout 60 $x run --device gpu --check --iters 1 --warmup 0 $L --set S=256 --set HQ=8 --set HK=2 --set HD=128 --set I=512 \
        > "$w/check_llama.log" 2>&1
    echo "rc=$?"; relnorms "$w/check_llama.log"; grep -c "FAILED" "$w/check_llama.log"
fi
for c in $CASES; do
    step "plan $c"
    timeout 90 $x plan --device gpu $(args_of "$c") -o "/tmp/$c.xplan" > "$w/plan_$c.log" 2>&1; echo "rc=$?"
done
if [ -n "${PHASE_A_CMD:-}" ]; then # more untimed work beside the warm-ups (e.g. differential testers)
    step "PHASE_A_CMD"
    timeout "${PHASE_A_S:-200}" bash -c "$PHASE_A_CMD" > "$out/phase_a.log" 2>&1
    echo "rc=$?"; tail -5 "$out/phase_a.log"
fi
step "waiting for the compile warm-ups"
for p in "${pids[@]}"; do wait "$p"; done
for c in $CASES; do
    step "xdnn $c"
    timeout "${RUN_S:-100}" $x run --device gpu --format json --iters "${ITERS:-10}" --warmup 2 $(args_of "$c") \
        > "$w/run_$c.json" 2> "$w/run_$c.err"
    echo "rc=$?"; tail -3 "$w/run_$c.err"
    python3 -c "import json,sys; g=json.load(open(sys.argv[1]))['gpu']; print('step %.3f ms, plan %.0f ms, compile %.0f ms, %d partitions' % (g['total_ms'], g['plan_ms'], g['compile_ms'], len(g['partitions'])))" \
        "$w/run_$c.json" 2>&1 | tail -1
    if [ -z "${SKIP_PEER:-}" ]; then
        step "peer $c"
        PYTHONUNBUFFERED=1 timeout "${PEER_S:-100}" python3 bench/network_peer.py --cases "$c" ${PEER_ARGS:-} >> "$w/peer.log" 2>&1
        echo "rc=$?"; grep "\"case\": \"$c" "$w/peer.log"
    fi
    python3 bench/network_peer.py --report "$w" > "$out/report.md" 2>&1
done
step done
tar -C "$w" -czf "$out/raw.tgz" .
