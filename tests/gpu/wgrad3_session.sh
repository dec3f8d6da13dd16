#!/usr/bin/env bash
# wgrad3_session.sh DEV OUT — a device call of conv_wgrad_wgmma, the Hopper 3x3 (any R x S) weight gradient
# (issue 11: kernels/conv_wgrad_wgmma_sm90a.cu, src/gpu/eng_conv_wgrad_wgmma.c), sized for one 200-second
# call that builds nothing.  DEV is what tests/gpu/pack_dev.sh packs plus dt/difftest_conv.o and
# dt/diffharness.o compiled where the library was built, this script, dev_env.sh and bench/conv_peer.py:
#   tests/gpu/pack_dev.sh build-wgrad3 /work/main/build-wgrad3-dev
#   mkdir -p DEV/dt && for f in difftest_conv diffharness; do gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra \
#     -DXDNN_HAVE_CUDA=1 -Iinclude -Isrc -I/usr/local/cuda/include -c tests/gpu/$f.c -o DEV/dt/$f.o; done
#   cp tests/gpu/wgrad3_session.sh tests/gpu/dev_env.sh bench/conv_peer.py DEV/
# and the call: bash build-wgrad3-dev/wgrad3_session.sh build-wgrad3-dev $OUT (carry: build-wgrad3-dev).
#  1. correctness: difftest_conv conv/wgrad (the new "wgmma" cases forced on conv_wgrad_wgmma: odd N*P*Q,
#     K and C in {8, 24, 64, 136, 200}, strides 1-2, dilation 2, pads 0/1/asymmetric, 1-D, 5x5, 3x2, 1x1,
#     splits forced to 1 and 7, and the refusals; beside every other wgrad case), then the wgmma cases
#     again with dY by cp.async (XDNN_WGRAD_NO_TMA=1: both loaders stay tested);
#  2. compute-sanitizer memcheck on the --quick wgmma cases;
#  3. the 7 distinct 3x3 wgrads of the ResNet-50 step at N = 256, bf16 NHWC (difftest_conv --bench
#     conv_wgrad3x3: forced on conv_wgrad_wgmma, dY by TMA and (NO_TMA) by cp.async, and on conv_wgrad_mma,
#     the 'before'), three 1x1 ones on conv_wgrad_wgmma and on conv_im2col_gemm (the cost model's 1x1 rule);
#  4. cuDNN on the same shapes (bench/conv_peer.py w3x3);
#  5. ncu on ONE launch of the kernel (the 28x28 layer), a few sections, if time is left;
#  6. the ResNet-50 step at N = 256 (xdnn run --iters 5), the conv_wgrad partitions by engine, if time is left.
# DRY=1 runs the testers with --dry on a GPU-less machine (the script's check) and skips 2, 4 and 5.
# A table last (summary.txt); logs in OUT/logs.tgz.
#
# EXPECTED (written before the first run).  The 16 3x3 wgrads of the step are 59.2 GFLOP each (0.95 TFLOP):
# 6.24 ms on conv_wgrad_mma today (107-250 TFLOP/s).  The new kernel's 128 x 128 (64 x 256 for K = 64)
# tiles at ~450-550 TFLOP/s in the mainloop (the forward conv_igemm_wgmma's rates on the same tile), less
# the split partials (3-10 MB a layer) and the waves: ~0.13-0.16 ms a layer, ~2.2-2.6 ms for the 16
# (-3.6 to -4 ms), 2.3-3x conv_wgrad_mma, about cuDNN's 300-400 TFLOP/s.  The 64 x 256 tile pads
# K x 576 to 768 (25% waste) on the 56x56 layers: ~0.17 ms there.  Most likely wrong on a first run: the
# MN-major descriptors of A (tnspA: no house kernel used it before) — every wgmma case would fail alike.
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
dry=()
[ -z "${DRY:-}" ] || dry=(--dry)
if [ -z "${DRY:-}" ]; then dev_link_tester difftest_conv || exit 1; fi
dt=${DT:-$dev/difftest_conv}
left() { echo $(( ${BUDGET_S:-185} - (SECONDS - t0) )); }

step "difftest_conv conv/wgrad"
timeout "${SWEEP_S:-45}" "$dt" "${dry[@]}" conv/wgrad > "$out/sweep.log" 2>&1; echo "rc=$?"
grep -E "^FAIL" "$out/sweep.log" | cut -c1-300 | head -12; grep -E "passed," "$out/sweep.log"
grep -E "^(PASS|FAIL) conv/wgrad/wgmma" "$out/sweep.log" | awk '{print $1}' | sort | uniq -c
step "difftest_conv conv/wgrad/wgmma, dY by cp.async (XDNN_WGRAD_NO_TMA=1)"
XDNN_WGRAD_NO_TMA=1 timeout 30 "$dt" "${dry[@]}" conv/wgrad/wgmma > "$out/sweep_notma.log" 2>&1; echo "rc=$?"
grep -E "^FAIL" "$out/sweep_notma.log" | cut -c1-300 | head -6; grep -E "passed," "$out/sweep_notma.log"

if [ -z "${DRY:-}" ] && [ "$(left)" -gt 130 ]; then
    step "memcheck --quick conv/wgrad/wgmma"
    timeout "${SAN_S:-40}" compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 10 "$dt" --quick \
        conv/wgrad/wgmma > "$out/memcheck.log" 2>&1
    echo "rc=$?"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -8
fi
if [ "$(left)" -gt 90 ]; then
    step "bench: the step's 3x3 wgrads at N=256 (_wgmma, _mma) and three 1x1 on _wgmma"
    timeout "${BENCH_S:-50}" "$dt" "${dry[@]}" --bench conv_wgrad3x3_bf16_nhwc_ > "$out/bench.log" 2>&1; echo "rc=$?"
    XDNN_WGRAD_NO_TMA=1 timeout 30 "$dt" "${dry[@]}" --bench conv_wgrad3x3_bf16_nhwc_wgmma | sed 's/_wgmma /_notma /' \
        >> "$out/bench.log" 2>&1; echo "rc=$?"
    timeout 15 "$dt" "${dry[@]}" --bench conv_wgrad1x1_bf16_nhwc_wgmma >> "$out/bench.log" 2>&1; echo "rc=$?"
    for shp in n256c1024h14k256s1 n256c128h28k512s1 n256c64h56k256s1; do
        timeout 10 "$dt" "${dry[@]}" --bench "conv_wgrad1x1_bf16_nhwc_im2col $shp" >> "$out/bench.log" 2>&1
    done
    echo "rc=$?"; grep -c "^BENCH.* ok " "$out/bench.log"; grep -E "^BENCH.*FAILED" "$out/bench.log" | cut -c1-200 | head -5
fi
if [ -z "${DRY:-}" ] && [ "$(left)" -gt 45 ]; then
    step "peer: cuDNN wgrad (bench/conv_peer.py w3x3)"
    PYTHONUNBUFFERED=1 timeout "${PEER_S:-40}" python3 "$dev/conv_peer.py" w3x3 > "$out/peer.log" 2>&1; echo "rc=$?"
fi
if [ -z "${DRY:-}" ] && [ "$(left)" -gt 30 ] && command -v ncu > /dev/null; then
    step "ncu: one launch of kwx_kernel (128@28x28)"
    timeout $(( $(left) - 8 )) ncu -k regex:kwx_kernel --launch-count 1 --section SpeedOfLight \
        --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy \
        "$dt" --bench "conv_wgrad3x3_bf16_nhwc_wgmma n256c128h28k128s1" > "$out/ncu.log" 2>&1
    echo "rc=$?"; grep -E "Duration|Throughput|Compute \(SM\)|Memory \[%\]|Stall|Achieved Occ" "$out/ncu.log" | head -14
fi
if [ -z "${DRY:-}" ] && [ "$(left)" -gt 75 ] && dev_link_cli; then
    step "ResNet-50 step N=256 (xdnn run --iters 5)"
    timeout $(( $(left) - 10 )) "$dev/xdnn" run --device gpu --format json --iters 5 graphs/resnet50_train_step.dnn \
        --set N=256 --set HW=224 --set WID=64 --set NCLS=1000 > "$out/step.json" 2> "$out/step.err"
    echo "rc=$?"; tail -2 "$out/step.err"
fi
step "table"
python3 - "$out" > "$out/summary.txt" 2>&1 <<'EOF'
import os, re, sys
out = sys.argv[1]
def lines(name):
    p = os.path.join(out, name)
    return open(p).read().splitlines() if os.path.exists(p) else []
COUNT = {"n256c64h56k64s1": 3, "n256c128h56k128s2": 1, "n256c128h28k128s1": 3, "n256c256h28k256s2": 1,
         "n256c256h14k256s1": 5, "n256c512h14k512s2": 1, "n256c512h7k512s1": 2}
ms, eng, peer = {}, {}, {}
for l in lines("bench.log"):
    f = l.split()
    if len(f) > 5 and f[0] == "BENCH" and f[5] == "ok":
        ms[(f[1], f[2])] = float(f[4]); eng[(f[1], f[2])] = f[3]
for l in lines("peer.log"):
    f = l.split()
    if len(f) == 4 and f[0] == "PEER":
        peer[(f[1], f[2])] = float(f[3])
b = "conv_wgrad3x3_bf16_nhwc"
print("%-20s %2s | %8s %8s %8s %8s | %6s %5s %6s %6s" % ("layer (x count)", "n", "_notma", "_wgmma", "_mma",
      "cuDNN", "TFLOP/s", "%peak", "mma/wg", "wg/cud"))
tot = {"w": 0.0, "m": 0.0, "c": 0.0, "n": 0.0}
for shp, n in COUNT.items():
    C, H, s = map(int, re.match(r"n256c(\d+)h(\d+)k\d+s(\d+)", shp).groups())
    P = H // s
    fl = 2.0 * 256 * P * P * C * 9 * C
    pl, w, m, c = ms.get((b + "_notma", shp)), ms.get((b + "_wgmma", shp)), ms.get((b + "_mma", shp)), peer.get((b, shp))
    f = lambda v: "%8.4f" % v if v else "%8s" % "-"
    tf = fl / (w * 1e-3) / 1e12 if w else 0
    print("%-20s %2d | %s %s %s %s | %6.0f %5.1f %6s %6s" % (shp, n, f(pl), f(w), f(m), f(c), tf, tf / 7.59,
          "%.2f" % (m / w) if m and w else "-", "%.2f" % (w / c) if w and c else "-"))
    for k, v in (("w", w), ("m", m), ("c", c), ("n", pl)):
        tot[k] = tot[k] + n * v if (v and tot[k] is not None) else None
print("the 16 3x3 wgrads of one step, ms: conv_wgrad_wgmma %s (dY by cp.async: %s), conv_wgrad_mma %s, cuDNN %s"
      % tuple(("%.3f" % tot[k]) if tot[k] else "-" for k in ("w", "n", "m", "c")))
for (k, s), v in sorted(ms.items()):
    if k.startswith("conv_wgrad1x1"):
        print("1x1 %s %s: %.4f ms" % (k, s, v))
import json
try:
    g = json.load(open(os.path.join(out, "step.json")))["gpu"]
    by = {}
    for q in g["partitions"]:
        if q["name"].endswith("/dw"):
            k = ("3x3" if "/d1/" in q["name"] else "other", q["engine"])
            c, t = by.get(k, (0, 0.0))
            by[k] = (c + 1, t + q["ms_median"])
    print("step: %.3f ms; wgrad partitions timed alone: %s" % (g["total_ms"], ", ".join(
        "%s on %s x%d %.3f ms" % (k[0], k[1], c, t) for k, (c, t) in sorted(by.items()))))
except Exception as e:
    print("step: no result (%s)" % e)
EOF
cat "$out/summary.txt"
step done
(cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v -e '^logs.tgz$' -e '^summary.txt$' -e '^ncu.log$'))
