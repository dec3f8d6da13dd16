#!/usr/bin/env bash
# wgrad1x1_session.sh DEV OUT — the first device call of conv_im2col_gemm's 1x1 weight gradient (issues 11
# and 12): dW [K, C] = dy^T [K, N*P*Q] . X [N*P*Q, C] as one cuBLASLt GEMM, x read in place at stride 1 and
# subsampled into A at stride 2 (src/gpu/eng_conv_im2col.c, kernels/conv_im2col_gemm.cu), sized for one
# 600-second call that builds nothing.  DEV is what tests/gpu/pack_dev.sh packs plus dt/difftest_conv.o and
# dt/diffharness.o compiled where the library was built (both linked here from objects):
#   tests/gpu/pack_dev.sh build-wgrad1x1 build-wgrad1x1-dev
#   mkdir -p build-wgrad1x1-dev/dt && for f in difftest_conv diffharness; do
#     gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -DXDNN_HAVE_CUDA=1 -Iinclude -Isrc \
#       -I/usr/local/cuda/include -c tests/gpu/$f.c -o build-wgrad1x1-dev/dt/$f.o; done
# and the call: tests/gpu/wgrad1x1_session.sh build-wgrad1x1-dev $OUT (carry: build-wgrad1x1-dev).
#  0. the planner's choice on the h100 model (xdnn plan --explain: the step's conv_wgrad partitions by engine);
#  1. correctness: difftest_conv conv/wgrad (the 25 new w1x1 cases — in place, strides 2 and 3, 1-D, odd
#     maps, C/K 8/24/136/256, f16/bf16, dw f32 written by the GEMM and bf16/f16 through the f32 partial, a
#     forced batch split with remainder rows, forced chunks, and the refusals that must name their reason —
#     beside every other wgrad case) and conv/fwd/im2c (the stem's forward: the engine is shared);
#  2. compute-sanitizer memcheck on the --quick w1x1 cases;
#  3. the 15 distinct ResNet-50 1x1 wgrads at N = 256, bf16 NHWC (difftest_conv --bench): forced on
#     conv_im2col_gemm, on conv_wgrad_mma, and (56x56) with 8 batch items instead of cuBLASLt's split-K
#     alone; cuDNN's wgrad and torch.mm's dW = dy^T X on the same shapes (bench/conv_peer.py w1x1);
#  4. the ResNet-50 training step at N = 256 (xdnn run --format json --iters 10), with the 1x1 path, then
#     (after the peer) without it (XDNN_IM2COL_NO_1X1=1: the A/B in one call), wgrad partitions by engine.
# A table last; logs in OUT/logs.tgz.  SKIP_SWEEP, SKIP_SAN, SKIP_BENCH, SKIP_PEER, SKIP_STEP leave a part
# out; SWEEP_S, SAN_S, BENCH_S, PEER_S, RUN_S are their limits, BUDGET_S the whole call's.
#
# EXPECTED (written before the first run).  Per layer (model: max(bytes / 2.6 TB/s, FLOPs / 550 TFLOP/s) +
# 6-10 us; floor: 2976 GB/s and 759 TFLOP/s).  The 1x1 wgrads are DRAM-bound wherever K*C/(K+C) (51-102
# FLOP/byte at 56x56 and 28x28) is below the H100's ~255 FLOP/byte ridge, so the brief's "~0.05 ms each"
# holds for the 14x14 and 7x7 layers only:
#   14x14 / 7x7, 26.3 GFLOP (16 layers, 64-128 MB): 0.14 -> ~0.055 ms (~480 TFLOP/s, floor 35-43 us);
#   52.6 GFLOP ones (s3b0c1, s4b0c1, the 28x28 and 14x14 projections): ~0.10-0.11 ms;
#   28x28 stride 1 (7 layers, 257 MB, floor 86 us): ~0.105 ms;
#   56x56 64->256 (4 layers, 514 MB, floor 173 us): ~0.20 ms, no gain on conv_wgrad_mma (which the cost
#   model keeps for 64->64, 256->64 and 256->128 at 56x56: 4 layers);
#   56x56 stride-2 projection (the copy of 103 MB read + written): ~0.21 ms.
# The 36 1x1 wgrads: ~6-7 ms in the step today (0.14-0.21 ms each) -> ~4.0-4.5 ms (3.15 ms modelled for
# the 32 on conv_im2col_gemm + ~0.8 for the 4 left on conv_wgrad_mma); the step 69.5 -> ~67.5 ms (-2 ms;
# -1.5 to -3), not the -3 to -4 of the brief.  torch.mm on the same matrices is the GEMM's own floor: the
# _im2col rows should be within ~10% of it at stride 1.
# Most likely wrong on a first run: cuBLASLt's heuristic split-K on the smallest outputs (64 x 64 .. 256 x
# 128 with a reduction of 802816): few splits would leave SMs idle (the _split8 rows show it); an alignment
# the heuristic assumed (256 bytes) that an operand lacks (all offsets are 128-row multiples by design).
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
dev_link_tester difftest_conv || exit 1
dt=$dev/difftest_conv
gcc -o "$dev/xdnn" "$dev"/cli/*.o "$dev/libxdnn.a" -L"$dev/lib" -lcjson -lm -fopenmp -L/usr/local/cuda/lib64 \
    -lcudart_static -lstdc++ -ldl -lpthread -lrt > "$out/link_cli.log" 2>&1 || { echo "CLI link failed"; tail -5 "$out/link_cli.log"; }
x=$dev/xdnn
left() { echo $(( ${BUDGET_S:-570} - (SECONDS - t0) )); }
R="graphs/resnet50_train_step.dnn --set N=256 --set HW=224 --set WID=64 --set NCLS=1000"

step "the planner on the h100 model: the step's conv_wgrad partitions by engine"
$x plan --explain --device-model h100 $R > "$out/explain.txt" 2>&1; echo "rc=$?"
awk '/^partition/ {wg = $4 == "(conv_wgrad)"} wg && /chosen/ {n[$2]++} END {for (e in n) print "  " e, n[e]}' "$out/explain.txt"
# the planner's choice per bench layer (CPU only: input fills, no GPU), beside the GPU work
timeout 200 "$dt" --bench --dry "conv_wgrad1x1_bf16_nhwc n" > "$out/planner.log" 2>&1 &
dry_pid=$!

if [ -z "${SKIP_SWEEP:-}" ]; then
    step "difftest_conv conv/wgrad (w1x1 among them) and conv/fwd/im2c"
    : > "$out/sweep.log"
    for f in conv/wgrad conv/fwd/im2c; do
        timeout "${SWEEP_S:-120}" "$dt" "$f" >> "$out/sweep.log" 2>&1; echo "$f rc=$?"
    done
    grep -E "^FAIL" "$out/sweep.log" | cut -c1-300 | head -20; grep -E "passed," "$out/sweep.log"
    grep -E "^(PASS|FAIL) conv/wgrad/w1x1" "$out/sweep.log" | awk '{print $1}' | sort | uniq -c
fi
if [ -z "${SKIP_SAN:-}" ] && [ "$(left)" -gt 330 ]; then
    step "memcheck --quick w1x1"
    timeout "${SAN_S:-60}" compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 10 "$dt" --quick w1x1 \
        > "$out/memcheck.log" 2>&1
    echo "rc=$?"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -8
fi
if [ -z "${SKIP_BENCH:-}" ] && [ "$(left)" -gt 200 ]; then
    step "bench: the 1x1 wgrads at N=256 forced on each engine"
    timeout "${BENCH_S:-150}" "$dt" --bench conv_wgrad1x1_bf16_nhwc_ > "$out/bench.log" 2>&1; echo "rc=$?"
    grep -c "^BENCH.* ok " "$out/bench.log"; grep -E "^BENCH.*FAILED" "$out/bench.log" | cut -c1-200 | head -5
fi
# the step with the 1x1 path (on) or without it (off: XDNN_IM2COL_NO_1X1=1), within what is left
step_run() {
    [ -z "${SKIP_STEP:-}" ] || return 0
    [ "$(left)" -gt 60 ] || { echo "out of time before the step ($1)"; return 0; }
    step "ResNet-50 step N=256, the 1x1 path $1"
    local lim=$(( $(left) - 15 )) off=0
    [ "$lim" -lt "${RUN_S:-130}" ] || lim=${RUN_S:-130}
    [ "$1" = on ] || off=1
    XDNN_IM2COL_NO_1X1=$off timeout "$lim" $x run --device gpu --format json --iters 10 $R > "$out/step_$1.json" \
        2> "$out/step_$1.err"
    echo "rc=$?"; tail -2 "$out/step_$1.err"
}
step_run on
if [ -z "${SKIP_PEER:-}" ] && [ "$(left)" -gt 120 ]; then
    step "peer: cuDNN wgrad and torch.mm (bench/conv_peer.py w1x1)"
    PYTHONUNBUFFERED=1 timeout "${PEER_S:-90}" python3 bench/conv_peer.py w1x1 > "$out/peer.log" 2>&1; echo "rc=$?"
fi
step_run off
wait "$dry_pid"
step "tables"
python3 - "$out" > "$out/summary.txt" 2>&1 <<'EOF'
import json, os, re, sys
out = sys.argv[1]
def lines(name):
    p = os.path.join(out, name)
    return open(p).read().splitlines() if os.path.exists(p) else []
# ResNet-50's 15 distinct 1x1 wgrads and how often each occurs (36 in all)
COUNT = {"n256c64h56k64s1": 1, "n256c64h56k256s1": 4, "n256c256h56k64s1": 2, "n256c256h56k128s1": 1,
         "n256c128h28k512s1": 4, "n256c256h56k512s2": 1, "n256c512h28k128s1": 3, "n256c512h28k256s1": 1,
         "n256c256h14k1024s1": 6, "n256c512h28k1024s2": 1, "n256c1024h14k256s1": 5, "n256c1024h14k512s1": 1,
         "n256c512h7k2048s1": 3, "n256c1024h14k2048s2": 1, "n256c2048h7k512s1": 2}
ms, split, plan, peer = {}, {}, {}, {}
for l in lines("bench.log"):
    f = l.split()
    if len(f) > 5 and f[0] == "BENCH" and f[5] == "ok":
        kind = f[1].replace("conv_wgrad1x1_bf16_nhwc", "") or "planner"
        ms[(kind, f[2])] = float(f[4])
        m = re.search(r"splitk=(-?\d+)", l)
        if m: split[(kind, f[2])] = m.group(1)
for l in lines("planner.log"):
    f = l.split()
    if len(f) > 3 and f[0] == "BENCH" and f[1] == "conv_wgrad1x1_bf16_nhwc":
        plan[f[2]] = "im2col" if f[3] == "conv_im2col_gemm" else "mma" if f[3] == "conv_wgrad_mma" else f[3]
for l in lines("peer.log"):
    f = l.split()
    if len(f) == 4 and f[0] == "PEER":
        peer[(f[1], f[2])] = float(f[3])
print("%-22s %3s %6s %6s | %8s %6s %8s %8s | %8s %8s | %6s %7s %6s" % (
    "layer (x count)", "n", "GFLOP", "floor", "_im2col", "splitk", "_split8", "_mma", "cuDNN", "torch.mm",
    "plan", "TFLOP/s", "pl/cud"))
tot = {"mma": 0.0, "plan": 0.0, "best": 0.0, "cudnn": 0.0, "mm": 0.0}
for shp, n in COUNT.items():
    C, H, K, s = map(int, re.match(r"n256c(\d+)h(\d+)k(\d+)s(\d+)", shp).groups())
    M = 256 * (H // s) ** 2
    fl, by = 2.0 * M * C * K, 2.0 * M * (C + K)
    floor = max(by / 2.976e12, fl / 759e12) * 1e3
    im, sp, mm_ = ms.get(("_im2col", shp)), ms.get(("_split8", shp)), ms.get(("_mma", shp))
    cud, gm = peer.get(("conv_wgrad1x1_bf16_nhwc", shp)), peer.get(("gemm_wgrad1x1_bf16", shp))
    pk = plan.get(shp, "?")
    chosen = im if pk == "im2col" else mm_ if pk == "mma" else None
    fmt = lambda v: "%8.4f" % v if v else "%8s" % "-"
    print("%-22s %3d %6.1f %6.4f | %s %6s %s %s | %s %s | %6s %7.0f %6s" % (
        shp, n, fl / 1e9, floor, fmt(im), split.get(("_im2col", shp), "-"), fmt(sp), fmt(mm_), fmt(cud), fmt(gm),
        pk, fl / (im * 1e-3) / 1e12 if im else 0, "%.2f" % (chosen / cud) if chosen and cud else "-"))
    for k, v in (("mma", mm_), ("plan", chosen), ("best", min(x for x in (im, mm_, sp) if x) if (im or mm_ or sp) else None),
                 ("cudnn", cud), ("mm", gm)):
        tot[k] = tot[k] + n * v if (v is not None and tot[k] is not None) else None
print("the 36 1x1 wgrads of one step, ms: all on conv_wgrad_mma %s, as planned %s, best engine per layer %s, "
      "cuDNN %s, torch.mm %s" % tuple(("%.3f" % tot[k]) if tot[k] else "-" for k in ("mma", "plan", "best", "cudnn", "mm")))
for ab in ("on", "off"):
    p = os.path.join(out, "step_%s.json" % ab)
    try:
        g = json.load(open(p))["gpu"]
    except Exception as e:
        print("step (1x1 path %s): no result (%s)" % (ab, e)); continue
    by = {}
    for q in g["partitions"]:
        if q["name"].endswith("/dw"):
            kind = "stem" if q["name"].startswith("stem") else "3x3" if "/d1/" in q["name"] else "1x1"
            k = (kind, q["engine"])
            c, t = by.get(k, (0, 0.0))
            by[k] = (c + 1, t + q["ms_median"])
    print("step (1x1 path %s): %.3f ms; wgrad partitions timed alone: %s" % (ab, g["total_ms"], ", ".join(
        "%s on %s x%d %.3f ms" % (k[0], k[1], c, t) for k, (c, t) in sorted(by.items()))))
EOF
cat "$out/summary.txt"
step done
(cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v -e '^logs.tgz$' -e '^summary.txt$'))
