#!/usr/bin/env bash
# wgradtma_session.sh DEV OUT — a device call of conv_wgrad_wgmma with x's tiles by TMA im2col and its
# 128 x 256 tile (session 10, issue 11: kernels/conv_wgrad_wgmma_sm90a.cu, src/gpu/eng_conv_wgrad_wgmma.c),
# sized for one 200-second call that builds nothing.  DEV as in wgrad3_session.sh (pack_dev.sh, dt/*.o of
# difftest_conv and diffharness, this script, dev_env.sh and bench/conv_peer.py):
#   tests/gpu/pack_dev.sh build-wgradtma /work/main/build-wgradtma-dev
#   mkdir -p DEV/dt && for f in difftest_conv diffharness; do gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra \
#     -DXDNN_HAVE_CUDA=1 -Iinclude -Isrc -I/usr/local/cuda/include -c tests/gpu/$f.c -o DEV/dt/$f.o; done
#   cp tests/gpu/wgradtma_session.sh tests/gpu/dev_env.sh bench/conv_peer.py DEV/
# and the call: bash build-wgradtma-dev/wgradtma_session.sh build-wgradtma-dev $OUT (carry: build-wgradtma-dev).
# MODE=check (call 1): correctness (conv/wgrad/wgmma: the session-9 cases and the new "wgmma-x-" ones, x by
#   TMA; then the "wgmma-x-" ones with XDNN_WGRAD_X_NO_TMA=1), memcheck on the --quick "wgmma-x-" cases, the
#   ResNet-50 3x3 wgrads at N = 256 on each tile forced (XDNN_WGRAD_TILE) with x by TMA and the default plan
#   with x gathered (XDNN_WGRAD_X_NO_TMA=1), cuDNN beside them (conv_peer.py w3x3).
# MODE=final (call 2): the whole conv/wgrad sweep, memcheck as in call 1, the rows as planned at N = 256 and N = 32, beside cuDNN at
#   both (w3x3, w3x3n32), the X_NO_TMA A/B at N = 256, ncu on one launch if time is left.
# DRY=1 runs the testers with --dry on a GPU-less machine (the script's check; bench rows skipped).
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
mode=${MODE:-check} dt=${DT:-$dev/difftest_conv} dry=()
if [ -n "${DRY:-}" ]; then dry=(--dry); else dev_link_tester difftest_conv || exit 1; fi
left() { echo $(( ${BUDGET_S:-185} - (SECONDS - t0) )); } # seconds left of the call's budget
b=conv_wgrad3x3_bf16_nhwc
bench() { # TAG LIMIT FILTER [VAR=VALUE...]: rows of FILTER into bench_TAG.log, "_wgmma" renamed "_TAG"
    local tag=$1 lim=$2 filt=$3; shift 3
    [ -n "${DRY:-}" ] && return
    step "bench $tag: $filt $*"
    env "$@" timeout "$lim" "$dt" --bench "$filt" 2>&1 | sed "s/_wgmma /_$tag /" > "$out/bench_$tag.log"
    echo "rc=${PIPESTATUS[0]} rows $(grep -c '^BENCH.* ok ' "$out/bench_$tag.log")"
    grep -E "^BENCH.*FAILED" "$out/bench_$tag.log" | cut -c1-200 | head -3
}

if [ "$mode" = check ]; then
    step "difftest_conv conv/wgrad/wgmma (x by TMA where the map expresses it)"
    timeout "${SWEEP_S:-35}" "$dt" "${dry[@]}" conv/wgrad/wgmma > "$out/sweep.log" 2>&1; echo "rc=$?"
    grep -E "^FAIL" "$out/sweep.log" | cut -c1-300 | head -12; grep -E "passed," "$out/sweep.log"
    step "difftest_conv conv/wgrad/wgmma-x, x gathered (XDNN_WGRAD_X_NO_TMA=1)"
    XDNN_WGRAD_X_NO_TMA=1 timeout 20 "$dt" "${dry[@]}" conv/wgrad/wgmma-x > "$out/sweep_xnotma.log" 2>&1
    echo "rc=$?"; grep -E "^FAIL" "$out/sweep_xnotma.log" | cut -c1-300 | head -6; grep -E "passed," "$out/sweep_xnotma.log"
    if [ -z "${DRY:-}" ]; then
        step "memcheck --quick conv/wgrad/wgmma-x"
        timeout "${SAN_S:-30}" compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 10 "$dt" --quick \
            conv/wgrad/wgmma-x > "$out/memcheck.log" 2>&1
        echo "rc=$?"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -8
    fi
    [ "$(left)" -gt 110 ] && bench w256 30 "${b}_wgmma n256" XDNN_WGRAD_TILE=128x256
    [ "$(left)" -gt 85 ] && bench b128 25 "${b}_wgmma n256" XDNN_WGRAD_TILE=128x128
    [ "$(left)" -gt 70 ] && bench s64 12 "${b}_wgmma n256c64" XDNN_WGRAD_TILE=64x256
    [ "$(left)" -gt 60 ] && bench xnotma 22 "${b}_wgmma n256" XDNN_WGRAD_X_NO_TMA=1
    if [ -z "${DRY:-}" ] && [ "$(left)" -gt 25 ]; then
        step "peer: cuDNN wgrad (bench/conv_peer.py w3x3)"
        PYTHONUNBUFFERED=1 timeout $(( $(left) - 6 )) python3 "$dev/conv_peer.py" w3x3 > "$out/peer.log" 2>&1
        echo "rc=$?"
    fi
else
    step "difftest_conv conv/wgrad"
    timeout "${SWEEP_S:-50}" "$dt" "${dry[@]}" conv/wgrad > "$out/sweep.log" 2>&1; echo "rc=$?"
    grep -E "^FAIL" "$out/sweep.log" | cut -c1-300 | head -12; grep -E "passed," "$out/sweep.log"
    if [ -z "${DRY:-}" ]; then
        step "memcheck --quick conv/wgrad/wgmma-x"
        timeout 20 compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 10 "$dt" --quick \
            conv/wgrad/wgmma-x > "$out/memcheck.log" 2>&1
        echo "rc=$?"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -8
    fi
    [ "$(left)" -gt 120 ] && bench plan 25 "$b n256"
    [ "$(left)" -gt 100 ] && bench plan32 12 "$b n32"
    [ "$(left)" -gt 85 ] && bench xnotma 22 "${b}_wgmma n256" XDNN_WGRAD_X_NO_TMA=1
    if [ -z "${DRY:-}" ] && [ "$(left)" -gt 45 ]; then
        step "peer: cuDNN wgrad (bench/conv_peer.py w3x3 w3x3n32)"
        PYTHONUNBUFFERED=1 timeout 40 python3 "$dev/conv_peer.py" w3x3 w3x3n32 > "$out/peer.log" 2>&1; echo "rc=$?"
    fi
    if [ -z "${DRY:-}" ] && [ "$(left)" -gt 25 ] && command -v ncu > /dev/null; then
        step "ncu: one launch of kwx_kernel (128@28x28, as planned)"
        timeout $(( $(left) - 6 )) ncu -k regex:kwx_kernel --launch-count 1 --section SpeedOfLight \
            --section MemoryWorkloadAnalysis --section WarpStateStats \
            "$dt" --bench "${b}_wgmma n256c128h28k128s1" > "$out/ncu.log" 2>&1
        echo "rc=$?"; grep -E "Duration|Throughput|Compute \(SM\)|Memory \[%\]|Stall" "$out/ncu.log" | head -12
    fi
fi
step "table"
python3 - "$out" > "$out/summary.txt" 2>&1 <<'EOF'
import glob, os, re, sys
out = sys.argv[1]
ms, eng = {}, {}
for p in glob.glob(os.path.join(out, "bench_*.log")):
    for l in open(p).read().splitlines():
        f = l.split()
        if len(f) > 5 and f[0] == "BENCH" and f[5] == "ok":
            ms[(f[1], f[2])] = float(f[4]); eng[(f[1], f[2])] = f[3]
peer = {}
if os.path.exists(os.path.join(out, "peer.log")):
    for l in open(os.path.join(out, "peer.log")).read().splitlines():
        f = l.split()
        if len(f) == 4 and f[0] == "PEER":
            peer[(f[1], f[2])] = float(f[3])
COUNT = [(64, 56, 1, 3), (128, 56, 2, 1), (128, 28, 1, 3), (256, 28, 2, 1), (256, 14, 1, 5), (512, 14, 2, 1),
         (512, 7, 1, 2)]
b = "conv_wgrad3x3_bf16_nhwc"
tags = sorted({k[len(b) + 1:] for (k, s) in ms if k.startswith(b + "_")}) + ([""] if any(k == b for k, s in ms) else [])
for n in (256, 32):
    rows = [(C, H, s, c) for (C, H, s, c) in COUNT if any(sh == "n%dc%dh%dk%ds%d" % (n, C, H, C, s) for _, sh in ms)]
    if not rows:
        continue
    print("N=%d  (ms; TFLOP/s of the best; x/cuDNN)" % n)
    print("%-22s %s | %8s | %6s %6s" % ("layer x count", " ".join("%8s" % (t or "plan") for t in tags), "cuDNN",
                                           "TF/s", "/cuDNN"))
    tot = {t: 0.0 for t in tags}; tot["peer"] = 0.0
    for (C, H, s, cnt) in rows:
        sh = "n%dc%dh%dk%ds%d" % (n, C, H, C, s)
        vals = [ms.get((b + ("_" + t if t else ""), sh)) for t in tags]
        c = peer.get((b, sh))
        good = [v for v in vals if v]
        best = min(good) if good else None
        P = H // s
        fl = 2.0 * n * P * P * C * 9 * C
        print("%-22s %s | %8s | %6.0f %6s" % (sh + " x%d" % cnt, " ".join("%8.4f" % v if v else "%8s" % "-" for v in vals),
              "%.4f" % c if c else "-", fl / (best * 1e-3) / 1e12 if best else 0,
              "%.2f" % (best / c) if best and c else "-"))
        for t, v in zip(tags, vals):
            tot[t] = tot[t] + cnt * v if (v and tot[t] is not None) else None
        tot["peer"] = tot["peer"] + cnt * c if (c and tot["peer"] is not None) else None
    print("the 16 of one step: " + ", ".join("%s %s" % (t or "plan", "%.3f" % tot[t] if tot[t] else "-")
                                              for t in tags + ["peer"]))
for (k, s), v in sorted(eng.items()):
    if k == b:
        print("planned: %s %s on %s" % (k, s, v))
EOF
cat "$out/summary.txt"
step done
(cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v -e '^logs.tgz$' -e '^summary.txt$' -e '^ncu.log$'))
