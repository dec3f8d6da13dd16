#!/usr/bin/env bash
# mem_session.sh DEV OUT — one device call for the memory-bound engines and views
# (bench/RESULTS-norm.md).  DEV holds a stripped libxdnn.a, the CLI's objects (cli/*.o)
# and lib/libcjson.so*: the GPU machine has no flex, bison or libcjson, so xdnn and the
# testers are linked here with plain gcc.  Each step has its own time limit:
#  1. correctness: difftest_norm (full sweep: norms, copies, views as operands, the
#     vectorized pointwise and pooling paths), difftest --quick (pointwise, reduce,
#     softmax, matmul), difftest_conv's pool cases, and `xdnn run --device gpu --check`
#     on the graphs whose reshapes / permutes / splits are now views;
#  2. timings: transformer_block with and without views (XDNN_NO_VIEWS=1), the peer
#     suite's memory-bound cases beside PyTorch (bench/peer.py), then difftest_norm
#     --bench beside bench/norm_torch.py (same call).
# SKIP_SUITE / SKIP_BENCH leave those out; SUITE_FILTER, BENCH_FILTERS pick cases.
set -uo pipefail
dev=${1:?DEV}; out=${2:?OUT}
mkdir -p "$out"
cuda=/usr/local/cuda
export LD_LIBRARY_PATH="$(cd "$dev/lib" && pwd):${LD_LIBRARY_PATH:-}"
export XDNN_CACHE_DIR=${XDNN_CACHE_DIR:-/tmp/xdnn-cache}
L=("$dev/libxdnn.a" -L"$dev/lib" -lcjson -lm -fopenmp -L"$cuda/lib64" -lcudart_static -lstdc++ -ldl -lpthread -lrt)
CF=(-std=c11 -D_GNU_SOURCE -O2 -DXDNN_HAVE_CUDA=1 -Iinclude -Isrc -I"$cuda/include")
t0=$SECONDS
step() { echo "== $1 ($((SECONDS - t0)) s)"; }

step build
gcc -o "$dev/xdnn" "$dev"/cli/*.o "${L[@]}" > "$out/build_xdnn.log" 2>&1 &
for t in difftest difftest_norm difftest_conv; do
    gcc "${CF[@]}" -o "$dev/$t" "tests/gpu/$t.c" tests/gpu/diffharness.c "${L[@]}" > "$out/build_$t.log" 2>&1 &
done
wait
cat "$out"/build_*.log | grep -E "error" | head -5
x="$dev/xdnn"
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; date -u; } | tee "$out/device.txt"

tester() { # NAME LIMIT ARGS...
    local name=$1 limit=$2; shift 2
    step "$name $*"
    timeout "$limit" "$dev/$name" "$@" > "$out/$name.log" 2>&1
    echo "rc=$?"; grep -E "^FAIL|passed, " "$out/$name.log" | head -15
}
tester difftest_norm "${NORM_S:-70}"
tester difftest "${CORE_S:-40}" --quick
tester difftest_conv 30 pool/

step "graphs --check"
while read -r c; do
    [ -n "$c" ] || continue
    timeout "${CHECK_S:-45}" $x run --device gpu --check --iters 3 --warmup 1 $c > "$out/check.tmp" 2>&1
    rc=$?; { echo "### $c (rc=$rc)"; cat "$out/check.tmp"; } >> "$out/check.log"
    echo "rc=$rc $c: $(grep -cE 'ok|pass' "$out/check.tmp") ok-lines; $(grep -E 'mismatch|FAIL|error' "$out/check.tmp" | head -3)"
done <<'EOF'
graphs/transformer_block.dnn
graphs/transformer_block.dnn --set B=4 --set S=100
tests/gpu/views.dnn
tests/gpu/views.dnn --set S=64 --set H=8
tests/unit/data/attention_block.dnn --set B=1 --set S=256
graphs/mlp_gelu.dnn
graphs/classifier_head.dnn
graphs/resnet_bottleneck.dnn
graphs/llama_block_train.dnn --set S=256 --set HQ=8 --set HK=2 --set HD=128 --set I=512
graphs/resnet_basic_block.dnn
graphs/resnet50_train_step.dnn --set N=2 --set WID=8
EOF

step "transformer_block: views vs copies"
for v in ${TB_VIEWS:-0 1}; do
    for g in "" "--cuda-graph"; do
        XDNN_NO_VIEWS=$v timeout 30 $x run graphs/transformer_block.dnn --device gpu --iters 50 --warmup 5 \
            --format json $g > "$out/tb_noviews$v${g:+_graph}.json" 2> "$out/tb.err"
        python3 - "$out/tb_noviews$v${g:+_graph}.json" "$v" "$g" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); gp = j.get("gpu", {})
parts = gp.get("partitions", [])
print(f"XDNN_NO_VIEWS={sys.argv[2]} {sys.argv[3] or 'streams'}: {len(parts)} partitions, total {gp.get('total_ms')} ms")
PY
    done
done

if [ -z "${SKIP_SUITE:-}" ]; then
    step "peer suite (memory-bound cases)"
    timeout "${SUITE_S:-110}" python3 bench/peer.py suite --xdnn "$x" --out "$out/suite" \
        --filter "${SUITE_FILTER:-layernorm|softmax|gelu|batchnorm|maxpool}" --budget-s "${SUITE_BUDGET_S:-90}" \
        > "$out/suite.log" 2>&1
    echo "rc=$?"; grep -E "^\[|\| " "$out/suite.log" | head -30
fi
if [ -z "${SKIP_BENCH:-}" ]; then
    step "difftest_norm --bench ${BENCH_FILTERS:-bench/}, then bench/norm_torch.py"
    for f in ${BENCH_FILTERS:-bench/}; do
        timeout "${BENCH_S:-60}" "$dev/difftest_norm" --bench "$f" >> "$out/bench.log" 2>&1
    done
    grep -E "BENCH" "$out/bench.log" | sed 's/^ *//' | cut -c1-200
    timeout "${TORCH_S:-45}" python3 bench/norm_torch.py > "$out/norm_torch.log" 2>&1
    echo "rc=$?"; cat "$out/norm_torch.log"
fi
step done
