#!/usr/bin/env bash
# Session 13: run on the H100 and made the default; "off" below is now the switch set to 0 (the runs pass =1 / =0
# explicitly, so the script measures the same A/B as in its first call).
# gnorm_session.sh DEV OUT — session 12's "gnorm" (issue 12), prepared without a GPU: group / instance norm over
# packed NCHW on kernels/norm_group.cu behind XDNN_GROUPNORM_V2=1 (eng_norm.c plan_gn; off by default).  Forward:
# a 512-thread block per group holding it in shared memory when it fits (<= 96 KB with its channels' parameters)
# and there are >= 2 groups a SM (x read once, y written once), else blocks splitting each group (shifted sums +
# Chan -> partials, then the apply); the fused silu / relu / gelu.  Backward: a block per group holding x and dy
# (when they fit and fill the GPU), else a warp per (n, c) sums dy and dy * xhat, then dx by chunks; then
# dscale / dbias over n in order (deterministic).  Packed NHWC: the split paths, element by element.  DEV: tests/gpu/pack_dev.sh's folder plus dt/difftest_norm.o and dt/diffharness.o compiled where
# the library was built; bench/mem_peer.py and bench/norm_torch.py copied into DEV.  Run from the root of the
# lead's tree: bash DEV/gnorm_session.sh DEV OUT (PART=1, the first call; <= ~150 s, BUDGET_S).
#  1. difftest_norm gnv2- : the new cases, gnv2-on/ (the switch on), gnv2-split/ (on, the row paths off:
#     XDNN_GROUPNORM_V2_SPLIT=1) and gnv2-off/ (the same cases on the default path): groups 1 / 2 / 32 / C, spatial 1x1 / 7x5 / 57x57 / rank 3 / rank 2, N 1 and 3, f32 / f16 / bf16,
#     affine and one-element scale / bias, fused silu, NHWC, forward + backward in one graph;
#  2. the family in full both ways: difftest_norm groupnorm and instancenorm (group_cases, fuse/groupnorm+silu)
#     with XDNN_GROUPNORM_V2=1 in the environment (their NCHW cases then run on norm_group.cu) and without;
#  3. compute-sanitizer memcheck on --quick gnv2-on/;
#  4. bench: difftest_norm --bench bench/s12/groupnorm (64x256x56x56 forward and backward, SD's groupnorm + silu
#     2x320x64x64 .. 2x1280x8x8, NHWC 2x320x64x64) on / off / split / on (the drift shows), then bench/mem_peer.py
#     --filter groupnorm (PyTorch eager, a copy_ of the same bytes, torch.compile while COMPILE_S lasts);
#  5. the table (summary.txt): on, on2, split, off, off/on, eager, compile, % of copy, the path chosen (the detail).
# DRY=1 TESTER=path-of-a-difftest_norm-built-here: steps 1-2 with --dry (CPU reference and plans), no GPU.
#
# EXPECTED (written before the first call; bench/RESULTS-norm.md session 12 "gnorm").  Default path today:
# groupnorm bf16 64x256x56x56 / 32 groups forward 0.590 ms (12 % of copy), backward 1.285 ms (8 %).
#  - forward (row path, 2048 groups of 50 KB, 4 blocks an SM): x read once + y written once = 2 x 102.8 MB =
#    0.069 ms at 2976 GB/s; a block's two reductions over shared memory and the single wave of 4 x 132 blocks
#    of 16 waves -> ~0.085-0.10 ms (70-80 % of copy): ~6x the default, ~0.3x eager's 0.28 ms.
#  - backward (row path: a block a group holds x and dy, 2 x 50 KB, 2 blocks an SM; x and dy read once, dx
#    written once = 3 x 102.8 MB = 0.104 ms at copy speed; + the dscale / dbias launch, ~5 us) -> ~0.13-0.16 ms
#    (65-80 % of copy): ~8-10x the default.  XDNN_GROUPNORM_V2_SPLIT=1 (three launches: x and dy read twice,
#    5 x 102.8 MB = 0.173 ms at copy speed) -> ~0.22-0.26 ms.
#  - SD groupnorm + silu bf16 (2x320x64x64 = 5.2 MB .. 2x1280x8x8 = 0.33 MB, in L2): the split path (64 groups:
#    few a SM), launch-bound at 2 launches: ~8-15 us each, against the generic path's 3 launches + the finalize.
#  - NHWC 2x320x64x64 + silu: the split path element by element (20-byte runs of a group's 10 channels, 640
#    bytes apart): about the generic path's time or somewhat better (it was 3 launches); the row above says.
# Failures to look for first: a wrong channel at a group's edge when S is not a multiple of the vector (7x5,
# 57x57, 1x1: the scalar loops), the one-element scale's dscale (pg_one), the f32 rows (4 a vector).
set -uo pipefail
[ "${PART:-1}" = 1 ] || { echo "PART=${PART}: none yet (the next session writes it from call 1's outcome)"; exit 2; }
. tests/gpu/dev_env.sh "${1:?DEV}" "${2:?OUT}" # dev, out, t0, step
dry=${DRY:+--dry} budget=${BUDGET_S:-150}
left() { echo $(( budget - (SECONDS - t0) )); }
t=${TESTER:-$dev/difftest_norm} # DRY=1: TESTER, a difftest_norm built here; else linked on the device from DEV/dt
[ -n "$dry" ] || dev_build_testers difftest_norm || exit 1
counts() { grep -E "^FAIL" -A6 "$1" | cut -c1-300 | head -24; echo "$(grep -c "^PASS" "$1") passed, $(grep -c "^FAIL" "$1") failed"; }
run_family() { # run_family TAG FILTER LIMIT_S [ENV=V] [--quick]
    step "difftest_norm $2 ${4:-} ${5:-}"
    env ${4:-} timeout "$3" "$t" $dry ${5:-} "$2" > "$out/$1.log" 2>&1
    echo "rc=$? (124: cut short)"; counts "$out/$1.log"
}

run_family new gnv2- "${NEW_S:-40}"
run_family grp_on groupnorm 15 XDNN_GROUPNORM_V2=1
run_family inst_on instancenorm 10 XDNN_GROUPNORM_V2=1
run_family grp_off groupnorm 15 XDNN_GROUPNORM_V2=0
run_family inst_off instancenorm 10 XDNN_GROUPNORM_V2=0
if [ -z "$dry" ]; then
    step "memcheck --quick gnv2-on/"
    timeout "${SAN_S:-30}" compute-sanitizer --tool memcheck --print-limit 10 --error-exitcode 3 "$t" --quick gnv2-on/ \
        > "$out/memcheck.log" 2>&1
    echo "rc=$?"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -6
    step "bench: on / off / on"
    : > "$out/bench.log"
    # on: every groupnorm row; off, split, on2: the two large ones only (the SD rows: on and off)
    for r in "XDNN_GROUPNORM_V2=1|on|bench/s12/groupnorm" "XDNN_GROUPNORM_V2=0|off|bench/s12/groupnorm" \
             "XDNN_GROUPNORM_V2=1 XDNN_GROUPNORM_V2_SPLIT=1|split|64x256x56x56" "XDNN_GROUPNORM_V2=1|on2|64x256x56x56"; do
        IFS='|' read -r e tag filt <<< "$r"
        [ "$(left)" -gt $(( 20 + ${PEER_S:-50} )) ] || { echo "out of time before $tag"; break; }
        env $e timeout 20 "$t" --bench "$filt" > "$out/bench.tmp" 2>&1
        echo "$tag [$e] $filt rc=$? ok=$(grep -c '^PASS' "$out/bench.tmp") fail=$(grep -c '^FAIL' "$out/bench.tmp")"
        sed "s/^ *BENCH /BENCH $tag /" "$out/bench.tmp" >> "$out/bench.log"
    done
    rm -f "$out/bench.tmp"
    step "PyTorch: mem_peer.py --filter groupnorm (eager, copy_, torch.compile)"
    (cd "$dev" && PYTHONUNBUFFERED=1 timeout "$(( $(left) > ${PEER_S:-50} ? ${PEER_S:-50} : $(left) - 5 ))" \
        python3 mem_peer.py --filter groupnorm --compile-budget-s "${COMPILE_S:-35}") > "$out/peer.log" 2> "$out/peer.err"
    echo "rc=$?"; tail -2 "$out/peer.err" | cut -c1-200
fi

step "tables"
python3 - "$out" > "$out/summary.txt" 2>&1 <<'PY'
import json, os, re, sys
out = sys.argv[1]
logs = {}
for n in os.listdir(out):
    if n.endswith(".log"):
        with open(os.path.join(out, n), errors="replace") as fh:
            logs[n[:-4]] = fh.read()
print("== correctness (the new cases; the family with the switch on / off; memcheck)")
for tag in ("new", "grp_on", "inst_on", "grp_off", "inst_off", "memcheck"):
    txt = logs.get(tag, "")
    if txt:
        npass, nfail = (len(re.findall(pat, txt, re.M)) for pat in (r"^PASS", r"^FAIL"))
        errs = re.findall(r"ERROR SUMMARY: (\d+)", txt)
        print(f"{tag:<9} {npass:4d} passed, {nfail} failed" + (f", memcheck errors {errs[-1]}" if errs else ""))
bench = {}  # row -> run tag -> (median ms, GB/s, detail) of the row's first partition (each graph has one)
for line in logs.get("bench", "").splitlines():
    f = [x.strip() for x in line.split(" | ")]
    if len(f) < 6 or not f[0].startswith("BENCH "):
        continue
    _, tag, row = f[0].split()[:3]
    med, gbs = re.search(r"median ([\d.]+)", f[3]), re.search(r"([\d.]+) GB/s", f[4])
    if med and gbs:
        bench.setdefault(row, {}).setdefault(tag, (float(med.group(1)), float(gbs.group(1)), f[5]))
peer, cgbs = {}, 2976.0
for line in logs.get("peer", "").splitlines():
    try:
        j = json.loads(line)
    except Exception:
        continue
    if j.get("id") == "copy 1GiB":
        cgbs = j.get("gbs", cgbs)
    elif "id" in j:
        peer.setdefault(j["id"], {}).update({k: v for k, v in j.items() if k.endswith("_ms")})
print("== bench (ms, median of 50; %%copy: xdnn's bytes / %.0f GB/s, the copy_ of 1 GiB in this call)" % cgbs)
print("%-46s %8s %8s %8s %8s %6s %8s %8s %6s %6s %6s  %s" % ("row", "on", "on2", "split", "off", "off/on", "eager",
      "compile", "/eag", "/comp", "%copy", "path (on)"))
for row, runs in bench.items():
    on, on2, off, sp = runs.get("on"), runs.get("on2"), runs.get("off"), runs.get("split")
    p = peer.get(row, {})
    eg, cp = p.get("eager_ms"), p.get("compile_ms")
    f = lambda v: "%8.4f" % v[0] if v else "%8s" % "-"
    r = lambda a, b: "%6.2f" % (a / b) if a and b else "%6s" % "-"
    print("%-46s %s %s %s %s %s %8s %8s %s %s %5.0f%%  %s" % (row, f(on), f(on2), f(sp), f(off), r(off and off[0], on and on[0]),
          eg or "-", cp or "-", r(on and on[0], eg), r(on and on[0], cp), (on[1] / cgbs * 100) if on else 0,
          (on[2] if on else "")[:70]))
    if off:
        print("%-46s %s" % ("", "off: " + off[2][:90]))
PY
cat "$out/summary.txt"
(cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v -e '^logs.tgz$' -e '^summary.txt$' -e '^device.txt$'))
step done
