"""bnfwd_tables.py ON.json OFF.json KINDS — ResNet-50 N=256's norm_welford partitions (each timed alone, `xdnn run
--format json`) summed apart: forwards (batchnorm, + relu, + add + relu) and backwards (batchnorm_bwd, with the join),
by KINDS ("name (ops)" lines from `xdnn plan --explain`); for both runs, then the forwards whose medians moved most."""
import json, sys

kinds = {}
for line in open(sys.argv[3]):
    name, ops = line.split(None, 1)
    kinds[name] = ops.strip().strip("()")
runs = []
for f in sys.argv[1:3]:
    try:
        g = json.load(open(f))["gpu"]
    except Exception as e:  # a step cut short
        print("%s: no result (%s)" % (f, e)); runs.append(None); continue
    runs.append(g)
    parts = [p for p in g["partitions"] if p["engine"] == "norm_welford"]
    by = {}
    for p in parts:
        k = kinds.get(p["name"], "other")
        cls = "bwd" if "batchnorm_bwd" in k else "fwd" if "batchnorm" in k else "other"
        by.setdefault(cls, []).append(p["ms_median"])
    fk = {}
    for p in parts:
        k = kinds.get(p["name"], "other")
        if "batchnorm_bwd" not in k and "batchnorm" in k:
            fk.setdefault(k, []).append(p["ms_median"])
    print("%s: step %.3f ms; norm_welford %d partitions %.3f ms: " % (f.split("/")[-1], g["total_ms"], len(parts),
          sum(p["ms_median"] for p in parts)) +
          ", ".join("%s %d = %.3f ms" % (c, len(v), sum(v)) for c, v in sorted(by.items())) +
          "; forwards by ops: " + ", ".join("%s %d = %.3f" % (k, len(v), sum(v)) for k, v in sorted(fk.items())))
if all(runs):
    off = {p["name"]: p["ms_median"] for p in runs[1]["partitions"]}
    d = [(p["ms_median"] - off.get(p["name"], 0), p["name"], p["ms_median"]) for p in runs[0]["partitions"]
         if "batchnorm" in kinds.get(p["name"], "") and "batchnorm_bwd" not in kinds[p["name"]]]
    d.sort()
    print("forwards on - off (us): sum %.1f; most: %s" % (1e3 * sum(x[0] for x in d),
          ", ".join("%s %+.1f (%.4f)" % (n[:28], 1e3 * x, m) for x, n, m in d[:8] + d[-4:])))
