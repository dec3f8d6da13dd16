#!/usr/bin/env bash
# bnfwd_session.sh DEV OUT — session 11 "bnfwd": the batchnorm forward's share of ResNet-50 N=256's norm_welford time
# and the forward's finalize with a block of 8 warps per channel past 128 splits (kernels/norm_cl.cu; switch
# XDNN_NORM_CL_FIN_WIDE=n, 1024 = the tree before).  DEV: tests/gpu/pack_dev.sh build-bnfwd build-bnfwd-dev, + dt/
# (difftest_norm.o, diffharness.o), bn_peer.py, norm_torch.py, this script, bnfwd_tables.py and normkinds.txt (the
# step's batchnorm partitions by name and ops, from `xdnn plan --explain --device-model h100`).  One call, in order
# of need within BUDGET_S: fin-wide/ (the new cases, every one), memcheck --quick fin-wide/, the step on / off with
# the forwards and backwards summed apart, the bench rows on / off beside bn_peer.py --resnet, `xdnn run --check`
# (reduced resnet50_train_step, every forward on the wide finalize), then the full difftest_norm sweep in what is left.
# EXPECTED (written before the call): the finalize's tail between reduce and apply shrinks from 2-4 dependent L2
# round trips to one + a shared-memory merge: -1 to -2 us on each three-launch forward with > 128 splits (256@14,
# 512@7 held whole; 256@56 / 512@28 residual: ~20-25 of the 53 forwards): the step -0.02 to -0.05 ms (inside the
# step's +-1 %); the rows 256x256x14x14 / 256x512x7x7 fwd -1 to -2 us each (48 / 29 us).  The forwards' share of
# norm_welford's ~23 ms: ~7-8 ms (sum of session 9's per-shape medians), the backwards ~15.
set -uo pipefail
source tests/gpu/dev_env.sh "$@" > /dev/null
sum=$out/summary.txt
say() { echo "$*" | tee -a "$sum"; }
left() { echo $((${BUDGET_S:-150} - (SECONDS - t0))); }
dev_build_testers difftest_norm || exit 1
dev_link_cli || exit 1
dt=$dev/difftest_norm
say "== fin-wide/ ($((SECONDS - t0)) s)"
timeout 20 "$dt" fin-wide/ > "$out/finwide.log" 2>&1; say "rc=$?"
grep -E "^FAIL" -A6 "$out/finwide.log" | cut -c1-240 | head -20 | tee -a "$sum"; say "$(grep -E 'passed,' "$out/finwide.log")"
dev_memcheck "$dt" fin-wide/ 15 | tee -a "$sum"
for ab in on:XDNN_NORM_CL_FIN_WIDE=128 off:XDNN_NORM_CL_FIN_WIDE=1024; do
    dev_step "${ab%%:*}" "${STEP_S:-35}" "${ab#*:}" | tee -a "$sum"
done
python3 "$dev/bnfwd_tables.py" "$out/step_on.json" "$out/step_off.json" "$dev/normkinds.txt" 2>&1 | tee -a "$sum"
say "== bench on / off ($((SECONDS - t0)) s)"
R=""
for f in "-|bench/rn50/bf16/256x256x14x14" "-|bench/rn50/bf16/256x512x7x7" "XDNN_NORM_CL1=0|bench/batchnorm_train"; do
    e=${f%%|*}; flt=${f#*|}; ex=${e/#-/}
    R+="${e}|${flt}|on|15;${ex:+$ex,}XDNN_NORM_CL_FIN_WIDE=1024|${flt}|off|15;"
done
ITERS=10 dev_bench_runs "$dt" "${R%;}" | tee -a "$sum"
grep -E "BENCH|^### " "$out/bench.log" | sed 's/^ *//' | cut -c1-200 | tee -a "$sum"
say "== peer bn_peer.py --resnet ($((SECONDS - t0)) s)"
(cd "$dev" && PYTHONUNBUFFERED=1 timeout 25 python3 bn_peer.py --resnet) > "$out/peer.log" 2>&1; say "rc=$?"
cut -c1-200 "$out/peer.log" | tee -a "$sum"
say "== check resnet50_train_step (reduced), every forward on the wide finalize ($((SECONDS - t0)) s)"
say "$(XDNN_NORM_CL1=0 XDNN_NORM_CL_FIN_WIDE=0 timeout 20 "$dev/xdnn" run --device gpu --check graphs/resnet50_train_step.dnn 2>&1 |
    grep -E '^total|error|FAILED|rel|loss' | head -4 | tr '\n' ' ')"
lim=$(left)
if [ "$lim" -gt 8 ]; then
    say "== full difftest_norm sweep, ${lim} s ($((SECONDS - t0)) s)"
    dev_sweep "$dt" "$lim" | tee -a "$sum"
fi
say "== done ($((SECONDS - t0)) s)"
(cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v -e '^logs.tgz$' -e '^summary.txt$'))
