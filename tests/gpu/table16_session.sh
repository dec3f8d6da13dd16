#!/usr/bin/env bash
# table16_session.sh DEV OUT — session 16's closing device call for issue 12 (<= 420 s): the merged tree's new
# families once more on the GPU, then the whole memory-bound table in one call — every row of bench/mem_peer.py
# timed by xdnn (`difftest_norm --bench`, `difftest_quant --bench`) and by PyTorch 2.11 (eager, torch.compile,
# a copy_ of the same bytes) — joined by pool12_tables.py into OUT/summary.txt.  DEV: pack_dev.sh's folder plus
# dt/{difftest_norm,difftest_quant,difftest_index,difftest,diffharness}.o, mem_peer.py and norm_torch.py.
# EXPECTED (session 16's rows, measured in their own calls before): max-pool bwd 0.106-0.110 ms (~71-73 % of
# copy), avg-pool fwd ~0.052 (83 %), avg-pool bwd ~0.052 (by the table's bytes, x counted though not read, >100 %),
# permutes 0.086 (80 %); the other rows as session 12-15 left them (+-3 %).
set -uo pipefail
dev=${1:?DEV}; out=${2:?OUT}
. tests/gpu/dev_env.sh "$dev" "$out"
DEADLINE=${DEADLINE:-400}
step link; dev_build_testers difftest_norm difftest_quant difftest_index difftest || exit 1
tn=$dev/difftest_norm
step "1. correctness: this session's families"
for f in pbw15/ pbw16/ avg16/ s12-pool vec/ tp16/ plus-inf warp-rows/softmax; do
    timeout "$(tl 40)" "$tn" $f > "$out/t_${f//\//_}.log" 2>&1; echo "$f rc=$? $(counts "$out/t_${f//\//_}.log" | tail -1)"
done
grep -h "^FAIL" "$out"/t_*.log | cut -c1-200 | head -6
timeout "$(tl 30)" "$dev/difftest_index" xent/ > "$out/t_xent.log" 2>&1; echo "xent/ rc=$? $(counts "$out/t_xent.log" | tail -1)"
timeout "$(tl 40)" "$dev/difftest_quant" > "$out/t_quant.log" 2>&1; echo "difftest_quant rc=$? $(counts "$out/t_quant.log" | tail -1)"
timeout "$(tl 40)" "$dev/difftest" pw/ > "$out/t_pw.log" 2>&1; echo "difftest pw/ rc=$? $(counts "$out/t_pw.log" | tail -1)"
step "2. xdnn bench: every row of the table"
for f in bench/s12/ bench/s10/layernorm/bf16/8192x8192 bench/s10/layernorm_bwd/bf16/8192x8192 \
         bench/s10/rmsnorm/bf16/8192x8192 bench/s10/rmsnorm_bwd/bf16/8192x8192 bench/rn50/bf16/256x256x56x56 \
         bench/maxpool_bwd/ bench/avg16/ bench/s13/pw/sigmoid bench/s13/pw/silu_bwd bench/rmsnorm_bwd; do
    timeout "$(tl 90)" "$tn" --bench "$f" >> "$out/bench_norm.log" 2>&1
done
for f in bench/quantize bench/dequantize; do timeout "$(tl 30)" "$dev/difftest_quant" --bench "$f" >> "$out/bench_quant.log" 2>&1; done
echo "$(grep -hc "BENCH" "$out"/bench_*.log | tr '\n' ' ') BENCH lines"; grep -h "FAIL" "$out"/bench_*.log | cut -c1-200 | head -5
step "3. peer: bench/mem_peer.py (eager, torch.compile, copy_)"
PYTHONUNBUFFERED=1 timeout "$(tl 240)" python3 "$dev/mem_peer.py" --compile-budget-s "${COMPILE_S:-110}" \
    > "$out/peer1.log" 2> "$out/peer1.err"
echo "rc=$?"; tail -2 "$out/peer1.err"
dev_tables tests/gpu/pool12_tables.py
