#!/usr/bin/env bash
# replan_session.sh DEV OUT — plan options on the GPU in one short call
# (issue 12.3 plan-time constants, issue 14.5 dynamic params).  DEV is a pack
# of tests/gpu/pack_dev.sh; logs go under OUT.
#  1. unit tests on CUDA: test_plan_options (const_weights: 2 weight casts run
#     once, results unchanged, a weight changed after the first execute NOT
#     seen; resized plans equal plans built for each size), test_plan_exec
#     (the plan API, threads, CUDA graphs), test_gpu_constfold;
#  2. replan_time: host ms of a new sequence length (resize, the same resize
#     again, a plan from scratch) on the transformer block and the SDPA
#     forward+backward graph, of a new batch size on the classifier head,
#     with an empty kernel cache, outputs compared; test_gpu_shapeclass;
#  3. the CLI: the transformer block with and without --const-weights
#     (per-partition times: the casts' vanish), a resized plan, both --check'ed.
# Exit 0 when every step passed.
set -uo pipefail
dev=${1:?DEV}; out=${2:?OUT}
mkdir -p "$out" "$dev/tests"
cuda=/usr/local/cuda
export LD_LIBRARY_PATH="$(cd "$dev/lib" && pwd):${LD_LIBRARY_PATH:-}"
L=("$dev/libxdnn.a" -L"$dev/lib" -lcjson -lm -fopenmp -L"$cuda/lib64" -lcudart_static -lstdc++ -ldl -lpthread -lrt)
CF=(-std=c11 -D_GNU_SOURCE -O2 -DXDNN_HAVE_CUDA=1 -Iinclude -Isrc -I"$dev/gen" -I"$cuda/include")
t0=$SECONDS
step() { echo "== $1 ($((SECONDS - t0)) s)"; }
rc=0
check() { if [ "$1" -ne 0 ]; then echo "FAILED: $2 (exit $1)"; rc=1; fi; }

step link
[ -f "$dev/libxdnn.a.gz" ] && gunzip -f "$dev/libxdnn.a.gz"
gcc -o "$dev/xdnn" "$dev"/cli/*.o "${L[@]}" > "$out/link.log" 2>&1 &
unit_lib=$(ls tests/unit/*.c | grep -v '/test_')
for t in tests/unit/test_plan_options.c tests/unit/test_plan_exec.c tests/unit/test_gpu_constfold.c tests/unit/test_gpu_shapeclass.c; do
    gcc "${CF[@]}" -o "$dev/tests/$(basename "$t" .c)" "$t" $unit_lib "${L[@]}" >> "$out/link.log" 2>&1 &
done
gcc "${CF[@]}" -o "$dev/tests/replan_time" tests/gpu/replan_time.c "${L[@]}" >> "$out/link.log" 2>&1 &
wait
[ -x "$dev/xdnn" ] && [ -x "$dev/tests/replan_time" ] || { echo "link failed"; tail -20 "$out/link.log"; exit 1; }

# an empty kernel cache: the first resize to a size compiles, as in a new process on a new machine
export XDNN_CACHE_DIR=$(mktemp -d)

step "unit tests on CUDA"
for t in test_plan_options test_plan_exec test_gpu_constfold test_gpu_shapeclass; do
    XDNN_TEST_BACKEND=cuda "$dev/tests/$t" > "$out/$t.log" 2>&1
    check $? "$t"
    grep -E "T=|checks" "$out/$t.log" | tail -6
done

step "replan timing"
"$dev/tests/replan_time" graphs/transformer_block.dnn S 1:8192 64 128 512 2048 8192 -- B=1 2>&1 | tee "$out/replan_tb.log"
check "${PIPESTATUS[0]}" "replan_time transformer_block"
"$dev/tests/replan_time" graphs/sdpa_fwd_bwd.dnn S 1:8192 64 256 1024 4096 -- B=1 2>&1 | tee "$out/replan_sdpa.log"
check "${PIPESTATUS[0]}" "replan_time sdpa_fwd_bwd"
# a new batch size: pooling, a linear layer and a generated softmax
"$dev/tests/replan_time" graphs/classifier_head.dnn N 1:4096 4 32 256 1024 2>&1 | tee "$out/replan_head.log"
check "${PIPESTATUS[0]}" "replan_time classifier_head"

step "CLI: const weights and a resized plan"
X="$dev/xdnn"
G=graphs/transformer_block.dnn
"$X" plan "$G" --set B=4 --set S=1024 --const-weights --dynamic S=1:8192 -o "$out/tb.xplan" > "$out/cli.log" 2>&1
check $? "xdnn plan --const-weights --dynamic"
"$X" run "$G" --device gpu --set B=4 --set S=1024 --iters 20 > "$out/run_default.log" 2>&1
check $? "xdnn run (default)"
"$X" run "$out/tb.xplan" --device gpu --iters 20 --check > "$out/run_const.log" 2>&1
check $? "xdnn run PLAN (const weights) --check"
"$X" run "$out/tb.xplan" --device gpu --set S=2048 --iters 20 --check > "$out/run_resized.log" 2>&1
check $? "xdnn run PLAN --set S=2048 --check"
for f in run_default run_const run_resized; do
    echo "-- $f"
    grep -E "cast|^total|plan resize|check" "$out/$f.log" | head -12
done
tar czf "$out/logs.tgz" -C "$out" . 2>/dev/null
step done
echo "replan_session: $([ $rc -eq 0 ] && echo ok || echo FAILED)"
exit $rc
