#!/usr/bin/env bash
# bnfuse11_session.sh DEV OUT — session 11's one device call for the residual join fused into the batchnorm
# backward (partition.c fuse_norm_joins; norm_cl.cu's reduce makes dy = relu_bwd(d0 + dn, y), stores and sums it).
# DEV: tests/gpu/pack_dev.sh build-bnfuse build-bnfuse-dev, + dt/difftest_norm.o, dt/diffharness.o and
# bn_peer.py / norm_torch.py.  In order (each with its own limit, the call's 300 s in view):
#   1. difftest_norm join/ (the new cases, every one), memcheck on --quick join/;
#   2. `xdnn run --device gpu --check` on graphs/conv_bn_relu_train.dnn and graphs/resnet50_train_step.dnn (default,
#      N=8 64x64), join on and off (XDNN_NO_NORM_JOIN=1);
#   3. the ResNet-50 N=256 step (dev_step), join on, then off; per engine and the fused partitions;
#   4. difftest_norm --bench bench/rn50join on and off, bn_peer.py --join (PyTorch eager) beside;
#   5. the full difftest_norm sweep in what time is left.
# PART=final (call 3, after call 2 measured the reduce with the join 2x slower than the two partitions: it
# spilled ~150 bytes, two rows of four streams in flight): join/ again, memcheck, the step with the join on.
# EXPECTED (written before the call): the 16 join partitions (15 add+relu_bwd, 1 relu_bwd) stop being pointwise
# partitions: each saves one pass over ds (read by the batchnorm's reduce) and a launch: ~2.8 GB of traffic at
# ~2900 GB/s, ~-0.9 ms, + ~16 launches: step -0.7 to -1.0 ms (46.4 -> ~45.5 ms); the joined reduce (4 streams in,
# 1 out) runs at >= 80% of copy for the 103-411 MB tensors.
set -uo pipefail
source "$(dirname "$0")/dev_env.sh" "$@" > /dev/null
sum=$out/summary.txt
say() { echo "$*" | tee -a "$sum"; }
left() { echo $((${BUDGET_S:-285} - (SECONDS - t0))); }
dev_build_testers difftest_norm || exit 1
dev_link_cli || exit 1
dt=$dev/difftest_norm
if [ "${PART:-all}" = final ]; then # call 3 (60 s): the join's reduce without spills (one row in flight with the add)
    timeout 15 "$dt" join/ > "$out/join.log" 2>&1; say "join/ rc=$? $(grep -E 'passed,' "$out/join.log")"
    grep -E "^FAIL" "$out/join.log" | cut -c1-200 | head -5 | tee -a "$sum"
    dev_memcheck "$dt" join/ 12 | tail -2 | tee -a "$sum"
    dev_step join 40 XDNN_NO_NORM_JOIN=0 > /dev/null
    python3 tests/gpu/step_by_engine.py "$out/step_join.json" 2>&1 | head -3 | tee -a "$sum"
    python3 - "$out/step_join.json" <<'PY' 2>&1 | tee -a "$sum"
import json, sys
g = json.load(open(sys.argv[1]))["gpu"]["partitions"]
j = [p for p in g if "relu_bwd+batchnorm_bwd" in p["name"] or "+ds+" in p["name"] or p["name"].endswith("ds+ds4b1_y/d2/dc")]
print("join partitions (%d): %.3f ms; " % (len(j), sum(p["ms_median"] for p in j)) +
      ", ".join("%s %.4f" % (p["name"][:40], p["ms_median"]) for p in j[:20]))
PY
    say "== done ($((SECONDS - t0)) s)"
    (cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v -e '^logs.tgz$' -e '^summary.txt$'))
    exit 0
fi
say "== join/ ($((SECONDS - t0)) s)"
timeout 40 "$dt" join/ > "$out/join.log" 2>&1; say "rc=$?"
grep -E "^FAIL" -A12 "$out/join.log" | cut -c1-240 | head -30 | tee -a "$sum"; say "$(grep -E 'passed,' "$out/join.log")"
dev_memcheck "$dt" join/ 40 | tee -a "$sum"
say "== graphs --check ($((SECONDS - t0)) s)"
for j in 0 1; do
    for g in "graphs/conv_bn_relu_train.dnn" "graphs/resnet50_train_step.dnn"; do
        say "XDNN_NO_NORM_JOIN=$j $g: $(XDNN_NO_NORM_JOIN=$j timeout 40 "$dev/xdnn" run --device gpu --check $g 2>&1 |
            grep -E '^total|error|FAILED|rel' | head -3 | tr '\n' ' ')"
    done
done
dev_step join 60 XDNN_NO_NORM_JOIN=0 > /dev/null
python3 tests/gpu/step_by_engine.py "$out/step_join.json" 2>&1 | head -3 | tee -a "$sum"
python3 - "$out/step_join.json" <<'PY' 2>&1 | tee -a "$sum"
import json, sys
g = json.load(open(sys.argv[1]))["gpu"]["partitions"]
j = [p for p in g if "relu_bwd+batchnorm_bwd" in p["name"] or p["name"].endswith("/d2/dc") or "+ds+" in p["name"]]
print("join partitions (%d): %.3f ms; " % (len(j), sum(p["ms_median"] for p in j)) +
      ", ".join("%s %.4f" % (p["name"][:40], p["ms_median"]) for p in j[:20]))
PY
dev_step apart 60 XDNN_NO_NORM_JOIN=1 > /dev/null
python3 tests/gpu/step_by_engine.py "$out/step_apart.json" 2>&1 | head -3 | tee -a "$sum"
python3 - "$out/step_apart.json" <<'PY' 2>&1 | tee -a "$sum"
import json, sys
g = json.load(open(sys.argv[1]))["gpu"]["partitions"]
a = [p for p in g if p["name"].endswith("/ds") or "/ds+" in p["name"]]
b = [p for p in g if p["name"].endswith("/d2/dc")]
print("apart: the join pointwise partitions (%d) %.3f ms, the blocks' last batchnorm backwards (%d) %.3f ms; " %
      (len(a), sum(p["ms_median"] for p in a), len(b), sum(p["ms_median"] for p in b)) +
      ", ".join("%s %.4f" % (p["name"][:40], p["ms_median"]) for p in (a + b)[:12]))
PY
for j in 0 1; do
    say "== bench rn50join XDNN_NO_NORM_JOIN=$j ($((SECONDS - t0)) s)"
    XDNN_NO_NORM_JOIN=$j timeout 45 "$dt" --bench bench/rn50join > "$out/bench_$j.log" 2>&1; say "rc=$?"
    grep -E "BENCH" "$out/bench_$j.log" | sed 's/^ *//' | cut -c1-230 | tee -a "$sum"
done
say "== peer bn_peer.py --join ($((SECONDS - t0)) s)"
(cd "$dev" && PYTHONUNBUFFERED=1 timeout 45 python3 bn_peer.py --join) > "$out/peer.log" 2>&1; say "rc=$?"
cat "$out/peer.log" | tee -a "$sum"
lim=$(left)
if [ "$lim" -gt 20 ]; then
    say "== full difftest_norm sweep, ${lim} s ($((SECONDS - t0)) s)"
    dev_sweep "$dt" "$lim" | tee -a "$sum"
fi
say "== done ($((SECONDS - t0)) s)"
(cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v -e '^logs.tgz$' -e '^summary.txt$'))
