"""conv1x1_table.py OUT — the summary of tests/gpu/conv1x1_session.sh: per ResNet-50 1x1 fwd / dgrad shape at
N = 256 (bf16 NHWC) the time as planned and forced on each engine (difftest_conv --bench conv1x1_ lines in
OUT/bench.log), cuDNN's and torch.mm's (bench/conv_peer.py fd1x1 in OUT/peer.log), the floor at 2976 GB/s and
759 TFLOP/s; then the training step's total and its 1x1 fwd/dgrad partitions by engine (OUT/step_{on,off}.json)."""
import json
import os
import re
import sys

out = sys.argv[1]


def lines(name):
    p = os.path.join(out, name)
    return open(p).read().splitlines() if os.path.exists(p) else []


ms, eng, peer = {}, {}, {}
for l in lines("bench.log"):
    f = l.split()
    if len(f) > 5 and f[0] == "BENCH" and f[5] == "ok":
        m = re.match(r"conv1x1_(fwd|dgrad)_bf16_nhwc(_\w+)?$", f[1])
        if m:
            ms[(m.group(1), m.group(2) or "plan", f[2])] = float(f[4])
            eng[(m.group(1), m.group(2) or "plan", f[2])] = f[3]
for l in lines("peer.log"):
    f = l.split()
    if len(f) == 4 and f[0] == "PEER":
        m = re.match(r"(conv|gemm)1x1_(fwd|dgrad)_bf16", f[1])
        if m:
            peer[(m.group(2), m.group(1), f[2])] = float(f[3])
shapes = sorted({k[2] for k in ms} | {k[2] for k in peer}, key=lambda s: [int(v) for v in re.findall(r"\d+", s)])
fmt = lambda v: "%7.4f" % v if v else "%7s" % "-"
print("%-5s %-20s %6s | %7s %-16s | %7s %7s %7s | %7s %7s | %5s %5s" % (
    "dir", "shape", "floor", "plan", "engine", "_im2col", "_igemm", "_wgmma", "cuDNN", "mm", "/cuD", "%roof"))
for d in ("fwd", "dgrad"):
    for s in shapes:
        C, H, K, st = map(int, re.match(r"n256c(\d+)h(\d+)k(\d+)s(\d+)", s).groups())
        if d == "dgrad" and st != 1:
            continue
        M = 256 * (H // st) ** 2
        by = 2.0 * (M * C + M * K)
        floor = max(by / 2.976e12, 2.0 * M * C * K / 759e12) * 1e3
        pl = ms.get((d, "plan", s))
        cud = peer.get((d, "conv", s))
        print("%-5s %-20s %6.4f | %s %-16s | %s %s %s | %s %s | %5s %5s" % (
            d, s, floor, fmt(pl), eng.get((d, "plan", s), "-")[:16], fmt(ms.get((d, "_im2col", s))),
            fmt(ms.get((d, "_igemm", s))), fmt(ms.get((d, "_wgmma", s))), fmt(cud), fmt(peer.get((d, "gemm", s))),
            "%.2f" % (pl / cud) if pl and cud else "-", "%.0f" % (100 * floor / pl) if pl else "-"))
for ab in ("on", "off"):
    try:
        g = json.load(open(os.path.join(out, "step_%s.json" % ab)))["gpu"]
    except Exception as e:
        print("step (1x1 fwd/dgrad path %s): no result (%s)" % (ab, e))
        continue
    by = {}
    for q in g["partitions"]:
        if q["engine"] in ("conv_im2col_gemm", "conv_igemm", "conv_igemm_wgmma") and not q["name"].endswith("/dw"):
            c, t = by.get(q["engine"], (0, 0.0))
            by[q["engine"]] = (c + 1, t + q["ms_median"])
    print("step (1x1 fwd/dgrad path %s): %.3f ms; fwd/dgrad conv partitions timed alone: %s" % (ab, g["total_ms"], ", ".join(
        "%s x%d %.3f ms" % (e, c, t) for e, (c, t) in sorted(by.items()))))
