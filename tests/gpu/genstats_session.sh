#!/usr/bin/env bash
# genstats_session.sh DEV OUT — the device call of genstats (src/gpu/genstats.h: the forward conv's
# store writes the training batchnorm's statistics partials, the batchnorm runs finalize + apply
# only), sized for a call of <= 240 s.  DEV: tests/gpu/pack_dev.sh's folder plus dt/ (difftest_norm.o,
# diffharness.o) and dtc/ (difftest_conv.o, diffharness.o) compiled where the library was built.
#  1. difftest_norm "genstats/": conv -> batchnorm (training, running statistics) [+ residual] + relu
#     against the CPU reference (K 24/136/64, M tails, 1272 M tiles; the cases turn genstats on
#     themselves), verbose: the pairs it planned;
#  2. compute-sanitizer memcheck on the --quick genstats cases (the small shapes);
#  3. the ResNet-50 N=256 training step with XDNN_GENSTATS=1 ("on") and XDNN_NO_GENSTATS=1 ("off"),
#     twice each, interleaved, the forward batchnorm and forward conv partitions summed;
#  4. as time allows: the channels-last batchnorm cases (its finalize changed) and the conv
#     forward + epilogue cases (its store changed) as regressions.
# GS_S, SAN_S, RUN_S, REG_S: time limits; logs under OUT, a summary on stdout.
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
dev_link_tester difftest_norm || exit 1
cuda=/usr/local/cuda
gcc -o "$dev/difftest_conv" "$dev"/dtc/*.o "$dev/libxdnn.a" -L"$dev/lib" -lcjson -lm -fopenmp -L$cuda/lib64 \
    -lcudart_static -lstdc++ -ldl -lpthread -lrt >> "$out/link.log" 2>&1 || echo "difftest_conv link failed"
gcc -o "$dev/xdnn" "$dev"/cli/*.o "$dev/libxdnn.a" -L"$dev/lib" -lcjson -lm -fopenmp -L$cuda/lib64 \
    -lcudart_static -lstdc++ -ldl -lpthread -lrt >> "$out/link.log" 2>&1 || { echo "CLI link failed"; exit 1; }
summary() { # LOG: failures, then the pass line
    grep -E "^FAIL" -A8 "$1" | cut -c1-300 | head -30
    grep -E "passed," "$1" | tail -1
}
step "difftest_norm genstats/"
DIFFTEST_VERBOSE=1 timeout "${GS_S:-50}" "$dev/difftest_norm" genstats/ > "$out/genstats.log" 2>&1
echo "rc=$?; conv partitions planned with genstats: $(grep -c 'genstats: partition' "$out/genstats.log")"
summary "$out/genstats.log"
step "memcheck --quick genstats/"
timeout "${SAN_S:-30}" compute-sanitizer --tool memcheck --print-limit 10 "$dev/difftest_norm" --quick genstats/ \
    > "$out/memcheck.log" 2>&1
echo "rc=$?"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -8
for ab in on off on2 off2; do # twice each, interleaved: the drift between runs shows
    env=(XDNN_GENSTATS=1); [ "${ab#off}" != "$ab" ] && env=(XDNN_NO_GENSTATS=1)
    step "resnet256 step, genstats $ab"
    env "${env[@]}" timeout "${RUN_S:-50}" "$dev/xdnn" run --device gpu --format json --iters 5 \
        graphs/resnet50_train_step.dnn --set N=256 --set HW=224 --set WID=64 --set NCLS=1000 \
        > "$out/run_$ab.json" 2> "$out/run_$ab.err"
    echo "rc=$?"; tail -2 "$out/run_$ab.err" | cut -c1-300
    python3 - "$out/run_$ab.json" <<'PY' 2>&1 | tail -5
import json, re, sys
g = json.load(open(sys.argv[1]))["gpu"]
ps = g["partitions"]
print("step %.3f ms (plan %.0f ms), %d partitions" % (g["total_ms"], g["plan_ms"], len(ps)))
fwd_bn, fwd_conv = r"^(stem_z|s\db\d+_y/z)", r"^(stem_c|s\db\d+_c[123p])$"
groups = {"forward batchnorms": lambda p: re.search(fwd_bn, p["name"]),
          "forward convs on wgmma": lambda p: re.search(fwd_conv, p["name"]) and p["engine"] == "conv_igemm_wgmma",
          "forward convs, others": lambda p: re.search(fwd_conv, p["name"]) and p["engine"] != "conv_igemm_wgmma"}
for label, sel in groups.items():
    ms = [(p["ms_median"], p["bytes"]) for p in ps if sel(p)]
    t = sum(m for m, _ in ms)
    print("%s: %d partitions %.3f ms %.0f GB/s" % (label, len(ms), t, sum(b for _, b in ms) / t / 1e6 if t else 0))
PY
done
step "per partition, on2 - off2: the largest changes"
python3 - "$out/run_on2.json" "$out/run_off2.json" <<'PY' 2>&1 | tail -12
import json, sys
on, off = ({p["name"]: p for p in json.load(open(f))["gpu"]["partitions"]} for f in sys.argv[1:3])
d = sorted(((on[n]["ms_median"] - off[n]["ms_median"], n) for n in on if n in off), key=lambda t: -abs(t[0]))
for delta, n in d[:10]:
    print("%+.3f ms  %-28s %s  off %.3f" % (delta, n, on[n]["engine"], off[n]["ms_median"]))
PY
step "regression: batchnorm-cl/ (finalize)"
timeout "${REG_S:-20}" "$dev/difftest_norm" batchnorm-cl/ > "$out/cl.log" 2>&1
echo "rc=$?"; summary "$out/cl.log"
step "regression: difftest_conv wgmma (its store)"
timeout "${REG_S:-20}" "$dev/difftest_conv" wgmma > "$out/conv.log" 2>&1
echo "rc=$?"; summary "$out/conv.log"
step done
