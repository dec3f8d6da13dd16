#!/usr/bin/env bash
# bnfuse_session.sh DEV OUT — the device call of the batchnorm + residual add (+ activation)
# fusion (issue 12 item 4: a ResNet block's relu(z3 + x) in the batchnorm's apply, z3 never
# stored).  DEV is what tests/gpu/pack_dev.sh packs plus dt/difftest_norm.o and
# dt/diffharness.o compiled where the library was built; the CLI is linked here from DEV/cli.
#  1. (unless SKIP_SWEEP) difftest_norm: every case (the new fuse/…residual… and
#     net/batchnorm+residual cases among them) against the CPU reference;
#  2. (unless SKIP_SAN) compute-sanitizer memcheck on the cases named *residual* (small shapes);
#  3. the ResNet-50 training step at N=256 (224x224, bf16 NHWC), `xdnn run --format json`,
#     for each setting of AB ("fused" and/or "apart": XDNN_NO_NORM_RESIDUAL=1), with the step
#     time and the partitions the fusion touches (the batchnorms that end a block, the
#     add+relu ones) summed; with CHECK=1 first the step at the default size against the CPU
#     reference (`xdnn run --check`, lr=30), the relative norms summarized.
# SWEEP_S, SAN_S, CHECK_S, RUN_S are the time limits; logs under OUT, a summary on stdout.
# Packing DEV (on the build machine, tree at the commit to test):
#   tests/gpu/pack_dev.sh build-bnfuse /work/main/build-bnfuse-dev
#   mkdir -p DEV/dt && for f in difftest_norm diffharness; do gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra \
#     -DXDNN_HAVE_CUDA=1 -Iinclude -Isrc -I/usr/local/cuda/include -c tests/gpu/$f.c -o DEV/dt/$f.o; done
#   cp tests/gpu/dev_env.sh tests/gpu/bnfuse_session.sh DEV/
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
dev_link_tester difftest_norm || exit 1
gcc -o "$dev/xdnn" "$dev"/cli/*.o "$dev/libxdnn.a" -L"$dev/lib" -lcjson -lm -fopenmp -L/usr/local/cuda/lib64 \
    -lcudart_static -lstdc++ -ldl -lpthread -lrt >> "$out/link.log" 2>&1 || { echo "CLI link failed"; exit 1; }
dt=$dev/difftest_norm
if [ -z "${SKIP_SWEEP:-}" ]; then
    step "difftest_norm sweep"
    timeout "${SWEEP_S:-45}" "$dt" > "$out/sweep.log" 2>&1
    echo "sweep rc=$?"
    grep -E "^FAIL" -A10 "$out/sweep.log" | cut -c1-300 | head -40
    echo "residual: $(grep -E '^PASS' "$out/sweep.log" | grep -c residual) passed," \
        "$(grep -E '^FAIL' "$out/sweep.log" | grep -c residual) failed"
    grep -E "passed," "$out/sweep.log"
fi
if [ -z "${SKIP_SAN:-}" ]; then
    step "compute-sanitizer memcheck (batchnorm residual cases)"
    timeout "${SAN_S:-40}" compute-sanitizer --tool memcheck --print-limit 10 "$dt" residual \
        > "$out/memcheck.log" 2>&1
    echo "memcheck rc=$?"
    grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -12
fi
for ab in ${AB:-fused}; do
    env=(); [ "$ab" = apart ] && env=(XDNN_NO_NORM_RESIDUAL=1)
    if [ -n "${CHECK:-}" ]; then # the whole step at the default size against the CPU reference
        step "resnet check (lr=30), $ab"
        env "${env[@]}" timeout "${CHECK_S:-40}" "$dev/xdnn" run --device gpu --check --iters 1 --warmup 0 --set lr=30 \
            graphs/resnet50_train_step.dnn > "$out/check_$ab.log" 2>&1
        echo "rc=$?"
        python3 -c '
import re, sys
r = sorted((float(m.group(2)), m.group(1)) for m in re.finditer(r"^(?:reference|expect) (\S+): .*rel norm (\S+)$", open(sys.argv[1]).read(), re.M))
print("%d outputs, median rel norm %.3g, worst: %s" % (len(r), r[len(r) // 2][0] if r else -1, ", ".join("%s %.3g" % (n, v) for v, n in r[-4:])))' "$out/check_$ab.log"
    fi
    step "resnet256 step, $ab"
    env "${env[@]}" timeout "${RUN_S:-100}" "$dev/xdnn" run --device gpu --format json --iters 10 \
        graphs/resnet50_train_step.dnn --set N=256 --set HW=224 --set WID=64 --set NCLS=1000 \
        > "$out/run_$ab.json" 2> "$out/run_$ab.err"
    echo "rc=$?"; tail -3 "$out/run_$ab.err"
    python3 - "$out/run_$ab.json" <<'PY' 2>&1 | tail -8
import json, re, sys
g = json.load(open(sys.argv[1]))["gpu"]
ps = g["partitions"]
print("step %.3f ms (plan %.0f ms), %d partitions, sum of partitions %.2f ms" %
      (g["total_ms"], g["plan_ms"], len(ps), sum(p["ms_median"] for p in ps)))
def agg(sel):
    s = [p for p in ps if sel(p)]
    t = sum(p["ms_median"] for p in s)
    by = sum(p["bytes"] for p in s)
    return "%d partitions %.3f ms %.0f GB/s" % (len(s), t, by / t / 1e6 if t else 0)
print("block-end batchnorms (z3, fused or not):", agg(lambda p: re.search(r"^s\db\d+_y/z3", p["name"])))
print("add+relu apart:", agg(lambda p: re.search(r"^s\db\d+_y/y\.0\+", p["name"])))
print("block-end batchnorm + add + relu:", agg(lambda p: re.search(r"^s\db\d+_y/z3\+", p["name"])))
print("norm_welford:", agg(lambda p: p["engine"] == "norm_welford"))
PY
done
step done
