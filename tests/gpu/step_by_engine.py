"""step_by_engine.py RUN.json [PARTITION...] — one line from `xdnn run --format json` on the GPU: the step's
time, its partition count and the partitions' times (each timed alone) summed per engine, costliest first;
then the named partitions' own times.  Used by the device-call scripts in tests/gpu/."""
import collections
import json
import sys

g = json.load(open(sys.argv[1]))["gpu"]
by = collections.defaultdict(float)
for p in g["partitions"]:
    by[p["engine"]] += p["ms_median"]
print("step %.3f ms, %d partitions; by engine: %s" % (g["total_ms"], len(g["partitions"]),
      ", ".join("%s %.2f" % kv for kv in sorted(by.items(), key=lambda kv: -kv[1]))))
for name in sys.argv[2:]:
    print("%s:" % name, [round(p["ms_median"], 4) for p in g["partitions"] if p["name"] == name])
