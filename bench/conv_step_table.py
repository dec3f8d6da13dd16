"""conv_step_table.py OUT — the summary of tests/gpu/convepi_session.sh: per conv_igemm_wgmma partition shape of
ResNet-50's N = 256 training step (bf16 NHWC; difftest_conv --bench conv_step_ lines in OUT/bench.log) the time
with the staged store and with the register store ("_regs"), cuDNN's (bench/conv_peer.py step256 in OUT/peer.log:
for the masked dgrads cuDNN's dgrad + eager threshold_backward), the floor max(bytes / 2976 GB/s, FLOPs / 759
TFLOP/s), and the sums weighted by how often the step runs each shape."""
import json
import os
import re
import sys

out = sys.argv[1]


def rows(name, tag, pattern):
    """{(kind, suffix given, shape): ms} of the TAG lines of OUT/NAME whose name matches pattern"""
    p, got = os.path.join(out, name), {}
    for f in (l.split() for l in (open(p).read().splitlines() if os.path.exists(p) else [])):
        m = re.match(pattern, f[1]) if len(f) > 3 and f[0] == tag else None
        if m and (tag == "PEER" or (len(f) > 5 and f[5] == "ok")):
            got[(m.group(1), bool(m.group(2)), f[2])] = float(f[4 if tag == "BENCH" else 3])
    return got


# how many partitions of the step run each (kind, shape): 3, 4, 6, 3 bottlenecks a stage, the first of stages 2-4
# strided (its 3x3 at stride 2, its projection's dgrad)
COUNT = {"c64h56k64r3s1": 3, "c128h28k128r3s1": 3, "c256h14k256r3s1": 5, "c512h7k512r3s1": 2,
         "c128h56k128r3s2": 1, "c256h28k256r3s2": 1, "c512h14k512r3s2": 1, "c64h56k256r1s1": 3,
         "c128h28k512r1s1": 4, "c256h14k1024r1s1": 6, "c512h7k2048r1s1": 3, "c256h56k512r1s2": 1,
         "c512h28k1024r1s2": 1, "c1024h14k2048r1s2": 1}
ms = rows("bench.log", "BENCH", r"conv_step_(fwd|dgmask|dgrad)_bf16_nhwc(_regs)?$")
peer = rows("peer.log", "PEER", r"conv_step_(fwd|dgmask|dgrad)_bf16_nhwc(_dgradonly)?$")
fmt = lambda v: "%7.4f" % v if v else "%7s" % "-"
print("%-6s %-24s %2s %6s | %7s %7s %6s | %7s %7s | %5s %5s %5s" % (
    "kind", "shape", "n", "floor", "regs", "staged", "gain", "cuDNN", "dgrad", "/cuD", "%roof", "TF/s"))
tot = {"regs": 0.0, "staged": 0.0, "cudnn": 0.0}
for kind in ("fwd", "dgmask", "dgrad"):
    for s in sorted({k[2] for k in ms if k[0] == kind} | {k[2] for k in peer if k[0] == kind},
                    key=lambda s: [int(v) for v in re.findall(r"\d+", s)]):
        N, C, H, K, R, st = map(int, re.match(r"n(\d+)c(\d+)h(\d+)k(\d+)r(\d+)s(\d+)", s).groups())
        P = (H + 2 * (R // 2) - R) // st + 1
        flops = 2.0 * N * P * P * K * C * R * R
        by = 2.0 * (N * H * H * C + N * P * P * K + K * C * R * R) + (2.0 * N * H * H * C if kind == "dgmask" else 0)
        floor = max(by / 2.976e12, flops / 759e12) * 1e3
        a, b, c = ms.get((kind, True, s)), ms.get((kind, False, s)), peer.get((kind, False, s))
        n = COUNT.get(s[s.index("c"):], 0)
        if a and b and c:
            tot["regs"] += n * a; tot["staged"] += n * b; tot["cudnn"] += n * c
        print("%-6s %-24s %2d %6.4f | %s %s %6s | %s %s | %5s %5s %5s" % (
            kind, s, n, floor, fmt(a), fmt(b), "%.2fx" % (a / b) if a and b else "-", fmt(c),
            fmt(peer.get((kind, True, s))), "%.2f" % (b / c) if b and c else "-",
            "%.0f" % (100 * floor / b) if b else "-", "%.0f" % (flops / b * 1e-9) if b else "-"))
print("weighted by the step's counts (rows with all three): register store %.3f ms, staged %.3f ms, cuDNN %.3f ms" %
      (tot["regs"], tot["staged"], tot["cudnn"]))

# the training step (PART=step): OUT/step_{staged,regs}.json, its conv_igemm_wgmma partitions timed alone, grouped
# by role (the names of graphs/lib/resnet.dnn: c2 the 3x3 forward, d1 its dgrad, d2 the 1x1 dgrad of c3, dp the
# projection's dgrad; d1 / d2 carry their relu_bwd mask)
step = {}
for ab in ("staged", "regs"):
    try:
        step[ab] = json.load(open(os.path.join(out, "step_%s.json" % ab)))["gpu"]
    except Exception as e:
        print("step (%s store): no result (%s)" % (ab, e))
role = lambda n: "fwd 3x3" if n.endswith("_c2") else "dgrad 3x3+mask" if "/d1+" in n else \
    "dgrad 1x1+mask" if "/d2+" in n else "dgrad 1x1 s2 (dp)" if n.endswith("/dp") else "other"
sums = {}
for ab, g in step.items():
    for q in g["partitions"]:
        if q["engine"] == "conv_igemm_wgmma":
            r = role(q["name"])
            c, t = sums.get((ab, r), (0, 0.0))
            sums[(ab, r)] = (c + 1, t + q["ms_median"])
for ab, g in step.items():
    wg = sum(t for (a, _), (c, t) in sums.items() if a == ab)
    print("step (%s store): %.3f ms, %d partitions; conv_igemm_wgmma partitions timed alone %.3f ms: %s" % (
        ab, g["total_ms"], len(g["partitions"]), wg, ", ".join(
            "%s x%d %.3f" % (r, c, t) for (a, r), (c, t) in sorted(sums.items()) if a == ab)))
