"""llama_tables.py DIR — session 11 (llama): every partition of the Llama step (DIR/run_llama.json, each timed
alone) costliest first with its floor (flops at 759 TFLOP/s or bytes at 2976 GB/s, whichever is larger) and the
distance to it; beside it the same partition with the A/B switches (DIR/run_llama-old.json); then the peer lines."""
import json
import os
import sys

PEAK_FLOPS, PEAK_BYTES = 759e12, 2976e9
d = sys.argv[1]


def load(name):
    try:
        return json.load(open(os.path.join(d, name)))["gpu"]
    except (OSError, ValueError, KeyError) as ex:
        print("%s: %s" % (name, ex))
        return None


import glob
new = load("run_llama.json")
others = sorted(os.path.basename(f)[10:-5] for f in glob.glob(os.path.join(d, "run_llama-*.json")))
for tag, g in [("default", new)] + [(o, load("run_llama-%s.json" % o)) for o in others]:
    if g:
        parts = g["partitions"]
        print("%s: step %.3f ms, %d partitions, sum alone %.3f ms" % (tag, g["total_ms"], len(parts),
                                                                      sum(p["ms_median"] for p in parts)))
if new:
    alt = {o: {p["name"]: p["ms_median"] for p in (load("run_llama-%s.json" % o) or {"partitions": []})["partitions"]}
           for o in others}
    print("\n| partition | engine | ms | %sfloor ms | %% of floor | by |\n|---|---|---|%s---|---|---|"
          % ("".join("%s ms | " % o for o in others), "---|" * len(others)))
    for p in sorted(new["partitions"], key=lambda p: -p["ms_median"]):
        ff, fb = p["flops"] / PEAK_FLOPS * 1e3, p["bytes"] / PEAK_BYTES * 1e3
        fl = max(ff, fb)
        t = p["ms_median"]
        print("| %s | %s | %.3f | %s%.3f | %.0f%% | %s |" % (
            p["name"][:44], p["engine"], t,
            "".join("%s | " % ("%.3f" % alt[o][p["name"]] if p["name"] in alt[o] else "-") for o in others), fl,
            100 * fl / t if t else 0, "flops" if ff > fb else "bytes"))
    by = {}
    for p in new["partitions"]:
        a = by.setdefault(p["engine"], [0, 0.0, 0.0])
        a[0] += 1; a[1] += p["ms_median"]; a[2] += max(p["flops"] / PEAK_FLOPS, p["bytes"] / PEAK_BYTES) * 1e3
    print("\n| engine | partitions | ms | floor ms |\n|---|---|---|---|")
    for k, (n, t, fl) in sorted(by.items(), key=lambda kv: -kv[1][1]):
        print("| %s | %d | %.3f | %.3f |" % (k, n, t, fl))
print()
for line in open(os.path.join(d, "peer.log")) if os.path.exists(os.path.join(d, "peer.log")) else []:
    if line.startswith("{"):
        r = json.loads(line)
        if isinstance(r.get("kernels"), list):
            r["kernels"] = r["kernels"][:25]
        print(json.dumps(r)[:4000])
