#!/usr/bin/env bash
# memfast_session.sh DEV OUT — one device call for two memory-bound kernel changes of session 8 (issues 12
# and 14), DEV packed by tests/gpu/pack_dev.sh from the tree checked out here (the testers are compiled
# here from this tree's sources, or linked from DEV/dt/*.o when that holds the testers' objects):
#  - kernels/quant.cu: quantize's paired-conversion fast path (kq_quant);
#  - kernels/pool.cu: pool_direct's vector kernels indexing in int32 (kp_ix, kp_fits_i32).
#  1. difftest_quant (full sweep, byte-exact), difftest_conv pool/, difftest_norm vec/ against the CPU
#     reference; compute-sanitizer memcheck on difftest_quant --quick and difftest_norm vec/maxpool;
#  2. bench rows: bench/quantize, bench/dequantize, bench/amax, bench/copy (8192 x 8192) and
#     bench/maxpool_bwd (bf16 NHWC 64x64x112x112, 3x3 s2 p1), each before/after in the same call where a
#     switch exists (XDNN_QUANT_V2=1 is v2, not the pre-change v3: the before of quantize is
#     bench/RESULTS.md's session-8 first-run table, 0.205 ms);
#  3. PyTorch's max_pool2d backward on the same shape (the peer).
# EXPECTED (written before the run): quantize 0.205 -> ~0.09-0.10 ms (dequantize's rate, ~2 TB/s: the
# per-element tie test was the limit); stem maxpool bwd at N=64 0.44 -> ~0.15 ms (winners pass + gather
# at ~2.5 TB/s of ~0.25 GB), the N=256 step's dstem_a 1.73 -> ~0.6 ms, pool fwd 0.43 -> ~0.25.
# Second use, branch wip/alu (DEV/dt from that branch; issues 12 and 14 again): fp8 quantize's tie test on
# the product's bits per chunk with the exact paths out of line (the kernel had ~7,800 instructions and ncu's
# top stall was instruction fetch); pool.cu's index splits by multiply-high magics and the 3x3 stride-2
# gather enumerating its at most 2 x 2 windows.  EXPECTED (written before): quantize 0.205 -> ~0.09-0.11 ms
# (~45 -> ~12 instructions per element); stem maxpool bwd N=64 0.226 -> ~0.12-0.14 ms.
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
step link
dev_build_testers difftest_quant difftest_norm difftest_conv || exit 1
step "difftests"
timeout 60 "$dev/difftest_quant" > "$out/quant.log" 2>&1; echo "difftest_quant rc=$?"
timeout 60 "$dev/difftest_norm" vec/ > "$out/vec.log" 2>&1; echo "difftest_norm vec/ rc=$?"
timeout 60 "$dev/difftest_conv" pool/ > "$out/pool.log" 2>&1; echo "difftest_conv pool/ rc=$?"
grep -hE "^FAIL" -A3 "$out/quant.log" "$out/vec.log" "$out/pool.log" | cut -c1-300 | head -20
grep -h "passed," "$out/quant.log" "$out/vec.log" "$out/pool.log"
step "memcheck"
timeout 60 compute-sanitizer --tool memcheck --print-limit 10 "$dev/difftest_quant" --quick > "$out/mc_quant.log" 2>&1
echo "quant rc=$?"; grep -E "ERROR SUMMARY|passed," "$out/mc_quant.log" | head -3
timeout 60 compute-sanitizer --tool memcheck --print-limit 10 "$dev/difftest_norm" vec/maxpool > "$out/mc_pool.log" 2>&1
echo "pool rc=$?"; grep -E "ERROR SUMMARY|passed," "$out/mc_pool.log" | head -3
step "bench"
for f in bench/quantize bench/dequantize bench/amax bench/copy; do
    timeout 40 "$dev/difftest_quant" --bench "$f" >> "$out/bench_quant.log" 2>&1
done
grep -h "BENCH" "$out/bench_quant.log" | cut -c1-170
timeout 40 "$dev/difftest_norm" --bench bench/maxpool > "$out/bench_pool.log" 2>&1
grep -h "TIME\|BENCH" "$out/bench_pool.log" | cut -c1-200
python3 - <<'PY' 2>&1 | tee "$out/peer.log"
import torch
x = torch.randn(64, 64, 112, 112, device="cuda", dtype=torch.bfloat16).to(memory_format=torch.channels_last).requires_grad_()
y = torch.nn.functional.max_pool2d(x, 3, 2, 1)
dy = torch.randn_like(y)
def t(fn):
    ts = []
    for i in range(60):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); torch.cuda.synchronize()
        ts.append(a.elapsed_time(b))
    ts = sorted(ts[10:]); return ts[len(ts) // 2]
print("PEER maxpool_fwd bf16 nhwc 64x64x112x112 median %.4f ms" % t(lambda: torch.nn.functional.max_pool2d(x, 3, 2, 1)))
print("PEER maxpool_bwd bf16 nhwc 64x64x112x112 median %.4f ms" % t(lambda: torch.autograd.grad(y, x, dy, retain_graph=True)))
PY
step done
