"""prefill_tables.py OUT — session 11's summary (tests/gpu/prefill_session.sh): the correctness counts of
OUT/sweep.log and OUT/memcheck.log, then, for every bench/decode/table case of OUT/bench.log (its ### sections),
xdnn's CUDA-graph replay time beside the best of flash and cuDNN from OUT/peer.log (one graph replay per event
pair, both sides), K+V GB/s (% of the 2976 GB/s copy ceiling) and TFLOP/s (4 B Hq Sq Skv D, the causal
bottom-right triangle's few masked pairs counted), and the large prefill row beside OUT/peer_large.log."""
import json, os, re, sys

out = sys.argv[1]
def lines(name):
    p = os.path.join(out, name)
    return open(p, errors="replace").read().splitlines() if os.path.exists(p) else []

print("## correctness")
for l in lines("sweep.log"):
    if l.startswith("===") or "passed," in l or l.startswith("FAIL"):
        print(l[:300])
for l in lines("memcheck.log"):
    if "ERROR SUMMARY" in l or "passed," in l:
        print("memcheck:", l)

peer = {}
for l in lines("peer.log"):
    if l.startswith("{"):
        r = json.loads(l)
        if "ms_graph1" in r and (r["shape"] not in peer or r["ms_graph1"] < peer[r["shape"]][0]):
            peer[r["shape"]] = (r["ms_graph1"], r["peer"])

def dims(tag):
    m = re.match(r"b(\d+)h(\d+)k(\d+)q(\d+)kv(\d+)d(\d+)", tag)
    return map(int, m.groups())

print("\n| case | engine | xdnn us | detail | peer us (which) | xdnn / peer | xdnn GB/s (% of 2976) | TFLOP/s (% of 759) |")
print("|---|---|---:|---|---:|---:|---:|---:|")
cur, sect = None, ""
for l in lines("bench.log"):
    if l.startswith("### "):
        sect = l[4:].strip()
        continue
    m = re.match(r"^(PASS|FAIL) (bench/decode/table/\S+)", l)
    if m:
        cur = {"ok": m.group(1), "id": m.group(2), "detail": "", "engine": "?"}
        continue
    if cur is None:
        continue
    t = re.search(r"TIME\s+\S+\s+(\S+).*?TFLOP/s\s+(.*)$", l)
    if t:
        cur["engine"] = t.group(1)
        cur["detail"] = " ".join(re.findall(r"(splits=\d+|pack=\d+|causal)", t.group(2)))
    g = re.search(r"GRAPH replay median ([\d.]+) ms", l)
    if g:
        tag = cur["id"].split("/")[-1]
        B, Hq, Hk, Sq, Skv, D = dims(tag)
        us = float(g.group(1)) * 1e3
        by = 2 * B * Hk * Skv * D * 2
        fl = 4 * B * Hq * Sq * Skv * D
        p = peer.get(tag)
        ps = f"{p[0] * 1e3:.1f} ({p[1]})" if p else "-"
        ratio = f"{us / (p[0] * 1e3):.2f}" if p else "-"
        gbs = by / (us * 1e-6) / 1e9
        tf = fl / (us * 1e-6) / 1e12
        print(f"| {sect}: {tag} {cur['ok']} | {cur['engine']} | {us:.1f} | {cur['detail']} | {ps} | {ratio} | "
              f"{gbs:.0f} ({100 * gbs / 2976:.0f}%) | {tf:.0f} ({100 * tf / 759:.0f}%) |")
        cur = None

print("\n## large prefill (ms, median of the tester's iterations; peer: sdpa_peer.py)")
for l in lines("bench.log"):
    if l.startswith("### large") or re.match(r"^(PASS|FAIL) bench/wgmma/", l) or "TIME" in l and "wgmma" in l and "B=4 Hq=16" in l:
        print(l.strip()[:200])
for l in lines("peer_large.log"):
    if l.startswith("{"):
        print(l.strip())
