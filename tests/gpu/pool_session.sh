#!/usr/bin/env bash
# pool_session.sh DEV OUT — the device call of maxpool backward v3 (kernels/pool.cu: the winners of every
# window found once by kpool_winners_vec into the workspace, then the per-pixel gather reads one byte
# per window instead of finding the winners again):
#  1. difftest_norm vec/ (every 16-byte-chunk pooling and pointwise case, NaN taps and a 256-tap window
#     that keeps v2 included) and difftest_conv pool/ (the pooling sweep), against the CPU reference;
#  2. compute-sanitizer memcheck on the maxpool_bwd cases;
#  3. the stem pooling bench (bf16 NHWC 64x64x112x112, 3x3 s2 p1): v3, v2 (XDNN_POOL_BWD_V2=1) and
#     PyTorch's max_pool2d backward (channels_last) in the same call;
#  4. ResNet-50 N=256's training step (`xdnn run`, per partition), where v2 cost 7.6 ms.
# DEV: tests/gpu/pack_dev.sh's folder plus dt/{difftest_norm,difftest_conv,diffharness}.o compiled where
# the library was built.
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
cuda=/usr/local/cuda
L=("$dev/libxdnn.a" -L"$dev/lib" -lcjson -lm -fopenmp -L"$cuda/lib64" -lcudart_static -lstdc++ -ldl -lpthread -lrt)
step link
gunzip -f "$dev/libxdnn.a.gz" 2>/dev/null
for t in difftest_norm difftest_conv; do
    gcc -o "$dev/$t" "$dev/dt/$t.o" "$dev/dt/diffharness.o" "${L[@]}" >> "$out/link.log" 2>&1 || { tail "$out/link.log"; exit 1; }
done
gcc -o "$dev/xdnn" "$dev"/cli/*.o "${L[@]}" >> "$out/link.log" 2>&1 || { tail "$out/link.log"; exit 1; }
step "difftests"
timeout 120 "$dev/difftest_norm" vec/ > "$out/vec.log" 2>&1; echo "difftest_norm vec/ rc=$?"
timeout 120 "$dev/difftest_conv" pool/ > "$out/pool.log" 2>&1; echo "difftest_conv pool/ rc=$?"
grep -hE "^FAIL" "$out/vec.log" "$out/pool.log" | cut -c1-300; grep -h "passed," "$out/vec.log" "$out/pool.log"
step "memcheck"
timeout 90 compute-sanitizer --tool memcheck --print-limit 10 "$dev/difftest_norm" vec/maxpool_bwd > "$out/memcheck.log" 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|passed,|Invalid" "$out/memcheck.log" | head -5
step "bench"
"$dev/difftest_norm" --bench bench/maxpool_bwd > "$out/bench_v3.log" 2>&1
XDNN_POOL_BWD_V2=1 "$dev/difftest_norm" --bench bench/maxpool_bwd > "$out/bench_v2.log" 2>&1
grep -h "TIME\|median" "$out/bench_v3.log" "$out/bench_v2.log" | cut -c1-200
python3 - <<'PY' 2>&1 | tee "$out/peer.log"
import torch
x = torch.randn(64, 64, 112, 112, device="cuda", dtype=torch.bfloat16).to(memory_format=torch.channels_last).requires_grad_()
y = torch.nn.functional.max_pool2d(x, 3, 2, 1)
dy = torch.randn_like(y)
ts = []
for i in range(60):
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record(); torch.autograd.grad(y, x, dy, retain_graph=True); b.record(); torch.cuda.synchronize()
    ts.append(a.elapsed_time(b))
ts = sorted(ts[10:])
print("PEER maxpool_bwd bf16 nhwc 64x64x112x112 (max_pool2d_with_indices_backward) median %.4f ms" % ts[len(ts) // 2])
PY
step "resnet50 N=256 step"
timeout 200 "$dev/xdnn" run --device gpu --format json --iters 10 --warmup 2 graphs/resnet50_train_step.dnn \
    --set N=256 --set HW=224 --set WID=64 --set NCLS=1000 > "$out/run_resnet256.json" 2> "$out/run_resnet256.err"
echo "rc=$?"; tail -3 "$out/run_resnet256.err"
python3 tests/gpu/step_by_engine.py "$out/run_resnet256.json" dstem_a
step done
