"""decode10_tables.py OUT — session 10's decode table (tests/gpu/decode10_session.sh): for every
bench/decode/table case of OUT/bench.log (its ### sections), xdnn's CUDA-graph replay time, splits / stages / prefetch, K+V GB/s and
% of the 2976 GB/s copy ceiling (METHOD.md), beside the best of flash and cuDNN from OUT/peer.log (same method,
one graph replay per event pair) and the ratio."""
import json, os, re, sys

out = sys.argv[1]
peer = {}
for line in open(os.path.join(out, "peer.log")) if os.path.exists(os.path.join(out, "peer.log")) else []:
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    if "ms_graph1" in r:
        k = r["shape"]
        if k not in peer or r["ms_graph1"] < peer[k][0]:
            peer[k] = (r["ms_graph1"], r["peer"], r["ms_graph20"])

def kv_bytes(tag):
    m = re.match(r"b(\d+)h(\d+)k(\d+)q(\d+)kv(\d+)d(\d+)", tag)
    B, Hq, Hk, Sq, Skv, D = map(int, m.groups())
    return 2 * B * Hk * Skv * D * 2

HEAD = "| case | engine | xdnn us | detail | peer us (which) | ratio | xdnn GB/s (% of 2976) | peer GB/s |"
path = os.path.join(out, "bench.log")
if os.path.exists(path):
    cur = None
    for line in open(path):
        if line.startswith("### "):
            print(f"## {line[4:].strip()}")
            print(HEAD)
            cur = None
            continue
        m = re.match(r"^(PASS|FAIL) (bench/decode/table/\S+)", line)
        if m:
            cur = {"ok": m.group(1), "id": m.group(2), "detail": ""}
            continue
        if cur is None:
            continue
        t = re.search(r"TIME .*?median ([\d.]+) ms.*TFLOP/s\s+(.*)$", line)
        if t:
            d = re.findall(r"(splits=\d+|stages=\d+|prefetch=\d+|tile=\S+)", t.group(2))
            cur["detail"] = " ".join(d)
            cur["engine"] = line.split()[2] if len(line.split()) > 2 else "?"
        g = re.search(r"GRAPH replay median ([\d.]+) ms", line)
        if g:
            parts = cur["id"].split("/")
            grp, eng, tag = parts[3], parts[4], parts[-1]
            us = float(g.group(1)) * 1e3
            by = kv_bytes(tag)
            p = peer.get(tag)
            ps = f"{p[0] * 1e3:.1f} ({p[1]})" if p else "-"
            ratio = f"{us / (p[0] * 1e3):.2f}" if p else "-"
            pg = f"{by / (p[0] * 1e-3) / 1e9:.0f}" if p else "-"
            gbs = by / (us * 1e-6) / 1e9
            print(f"| {grp} {tag} {cur['ok']} | {eng} | {us:.1f} | {cur['detail']} | {ps} | {ratio} | "
                  f"{gbs:.0f} ({100 * gbs / 2976:.0f}%) | {pg} |")
            cur = None
