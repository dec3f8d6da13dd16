# dwconv_table.py OUT [AB_LOG AB_LABEL] — the conv_dw bench table of a device call (dwconv_session.sh,
# dw13_session.sh): one row per BENCH line of OUT/bench_on.log (the default), beside OUT/bench_off.log
# (XDNN_CONV_DW_V2=0), OUT/AB_LOG (an A/B switch's run, column AB_LABEL; default bench_th2.log, "TH2": session
# 13's XDNN_CONV_DW_TH=2; 0 where absent) and OUT/peer.log (bench/conv_peer.py dw: cuDNN), with the
# bytes a row moves (x + y, f16; the names carry N, C, H, R, stride) as GB/s and % of copy (2976 GB/s).
import re, sys, os
out = sys.argv[1]
def parse(fn, tag, col):
    """{name shape: (ms, line)} of the TAG lines of OUT/fn (BENCH: ms in field 4, PEER: field 3)"""
    d = {}
    p = os.path.join(out, fn)
    for line in open(p) if os.path.exists(p) else []:
        f = line.split()
        if len(f) > col and f[0] == tag:
            d[f[1] + " " + f[2]] = (float(f[col]), line.strip())
    return d
on, off, th2 = parse("bench_on.log", "BENCH", 4), parse("bench_off.log", "BENCH", 4), parse(
    sys.argv[2] if len(sys.argv) > 2 else "bench_th2.log", "BENCH", 4)
ab = sys.argv[3] if len(sys.argv) > 3 else "TH2"
peer = parse("peer.log", "PEER", 3)
print("| row | v2 ms | v1 ms | v1/v2 | v2 GB/s (%% of 2976) | %s ms | cuDNN ms | v2/cuDNN | v2 detail |" % ab)
print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
for k in on:
    m = re.search(r"n(\d+)c(\d+)h(\d+)r(\d+)s(\d+)", k)
    n, c, h, r, s = map(int, m.groups()) if m else (0, 0, 0, 0, 1)
    p = (h + 2 * (r // 2) - r) // s + 1
    gb = (n * c * (h * h + p * p) * 2) / (on[k][0] * 1e-3) / 1e9 if on[k][0] > 0 else 0
    v1, t2, pe = off.get(k, (0, ""))[0], th2.get(k, (0, ""))[0], peer.get(k, (0, ""))[0]
    det = ("v2 phases" if "stride phases" in on[k][1] else "v2") if "v2 2-D tile" in on[k][1] else "v1"
    print("| %s | %.4f | %.4f | %.2f | %.0f (%.0f%%) | %.4f | %.4f | %.2f | %s |" % (
        k, on[k][0], v1, v1 / on[k][0] if on[k][0] > 0 else 0, gb, gb / 29.76, t2, pe,
        on[k][0] / pe if pe > 0 else 0, det))
