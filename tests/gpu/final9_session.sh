#!/usr/bin/env bash
# final9_session.sh DEV OUT — session 9's whole-network call on the merged tree (DEV packed by
# tests/gpu/pack_dev.sh, with DEV/dt/difftest_conv.o and diffharness.o): final8_session.sh (ResNet-50 N=256 and
# the Llama block beside PyTorch eager and torch.compile, then the ResNet step under each AB switch), the
# ResNet step replayed as one CUDA graph at each batch in CG_N (default 256; --cuda-graph: what the launches
# cost), then the issue's other conv families (difftest_conv --bench convzoo beside bench/conv_peer.py zoo: 3-D
# UNet, WaveNet 1-D, GoogLeNet-v3 1x7/7x1).  NETS=0 skips the networks and the replay, ZOO=0 the last part.
set -uo pipefail
dev=${1:?DEV}; out=${2:?OUT}
mkdir -p "$out"
t0=$SECONDS
[ "${NETS:-1}" = 0 ] || tests/gpu/final8_session.sh "$dev" "$out" 2>&1 | tail -40
export LD_LIBRARY_PATH="$(cd "$dev/lib" && pwd):${LD_LIBRARY_PATH:-}"
export XDNN_CACHE_DIR=${XDNN_CACHE_DIR:-/tmp/xdnn-cache}
for n in $([ "${NETS:-1}" = 0 ] || echo "${CG_N:-256}"); do
    R="graphs/resnet50_train_step.dnn --set N=$n --set HW=224 --set WID=64 --set NCLS=1000"
    echo "== resnet$n replayed as one CUDA graph ($((SECONDS - t0)) s)"
    timeout "${RUN_S:-150}" "$dev/xdnn" run --device gpu --cuda-graph --format json --iters 10 --warmup 2 $R \
        > "$out/cudagraph$n.json" 2> "$out/cudagraph$n.err"
    echo "rc=$?"; python3 tests/gpu/step_by_engine.py "$out/cudagraph$n.json"
done
[ "${ZOO:-1}" = 0 ] && exit 0
echo "== conv zoo ($((SECONDS - t0)) s)"
zoo=$out/zoo
source tests/gpu/dev_env.sh "$dev" "$zoo" > /dev/null # sets out=$zoo
dev_build_testers difftest_conv || exit 1
timeout "${ZOO_S:-150}" "$dev/difftest_conv" --bench convzoo > "$zoo/bench.log" 2>&1; echo "bench rc=$?"
timeout "${PEER_S:-120}" python3 bench/conv_peer.py zoo > "$zoo/peer.log" 2>&1; echo "peer rc=$?"
awk '/^PEER/ {peer[$2" "$3] = $4} /^BENCH/ {b[++n] = $2" "$3; e[n] = $4; ms[n] = $5; tf[n] = $14}
    END {for (i = 1; i <= n; i++) { p = peer[b[i]]; printf "%-44s %-18s %8.4f %8.4f %6.2f %s TF\n", b[i], e[i], ms[i],
         p, (p > 0 ? ms[i] / p : 0), tf[i] } }' "$zoo/peer.log" "$zoo/bench.log" | tee "$zoo/table.txt"
echo "== done ($((SECONDS - t0)) s)"
