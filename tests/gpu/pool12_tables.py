"""pool12_tables.py OUT [OUT2...] — issue 12 item 1's consolidated memory-bound table from a pool12_session.sh call:
the xdnn rows (OUT/bench_*.log: `difftest_* --bench` BENCH lines; a graph of two partitions gives id#0, id#1)
beside bench/mem_peer.py's (OUT/peer*.log: eager, torch.compile, a copy of the same bytes), and the A/B rows
(OUT/ab_*.log: the same BENCH lines under a switch that keeps the old path).  With several OUTs (unpacked
calls, the first first) the A/B rows come from the last, the xdnn and peer rows from all (a later call's
replacing an earlier one's).  Prints markdown."""
import glob, json, os, re, sys

outs = sys.argv[1:]
out = outs[-1]
COPY = 2976.0  # METHOD.md's device-to-device copy on the H100 (read + written)
bench_re = re.compile(r"BENCH (\S+) \| (\S+) \| (\S+) \| median ([\d.]+) ms .*?\| ([\d.]+) GB/s \|?(.*)")


def read_bench(path):
    rows, seen = {}, {}
    for line in open(path, errors="replace"):
        m = bench_re.search(line)
        if not m:
            continue
        rid, part, eng, ms, gbs, detail = m.groups()
        k = seen.get(rid, 0)
        seen[rid] = k + 1
        rows[f"{rid}#{k}"] = dict(part=part, engine=eng, ms=float(ms), gbs=float(gbs), detail=detail.strip()[:60])
    # single-partition rows keep the bare id
    return {(k[:-2] if k.endswith("#0") and seen[k[:-2]] == 1 else k): v for k, v in rows.items()}


xd = {}  # a later call's row replaces an earlier one's
for f in [g for o in outs for g in sorted(glob.glob(os.path.join(o, "bench_*.log")))]:
    xd.update(read_bench(f))
peer, copy1g = {}, None
for f in [g for o in outs for g in sorted(glob.glob(os.path.join(o, "peer*.log")))]:
    for line in open(f, errors="replace"):
        try:
            j = json.loads(line)
        except ValueError:
            continue
        if j.get("id") == "copy 1GiB":
            copy1g = j.get("gbs")
        elif "id" in j:
            peer.setdefault(j["id"], {}).update({k: v for k, v in j.items() if k != "id"})

print(f"copy 1 GiB (torch copy_, this call): {copy1g} GB/s; % of copy below is xdnn GB/s / {COPY:.0f}\n")
print("| row | xdnn engine (path) | xdnn ms | GB/s | % of copy | eager ms | compile ms | copy_ same bytes ms |"
      " xdnn / eager | xdnn / compile | copy / xdnn |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for rid, x in xd.items():
    p = peer.get(rid, {})
    e, c, cp = p.get("eager_ms"), p.get("compile_ms"), p.get("copy_ms")
    f = lambda v: f"{v:.4f}" if isinstance(v, (int, float)) else "-"
    r = lambda a, b: f"{a / b:.2f}" if a and b else "-"
    eng = x["engine"] + (f" ({x['detail']})" if x["detail"] else "")
    print(f"| {rid} | {eng} | {x['ms']:.4f} | {x['gbs']:.0f} | {100 * x['gbs'] / COPY:.0f} % | {f(e)} | {f(c)} | {f(cp)} |"
          f" {r(x['ms'], e)} | {r(x['ms'], c)} | {r(cp, x['ms'])} |")
missing = [k for k in peer if k not in xd]
if missing:
    print("\npeer rows without an xdnn row:", ", ".join(missing))
errs = {k: v.get("error") or v.get("compile_error") for k, v in peer.items() if v.get("error") or v.get("compile_error")}
for k, v in errs.items():
    print(f"peer error {k}: {v}")

# A/B: ab_<tag>.log holds the rows under the switch (old path), beside the default rows above
for f in sorted(glob.glob(os.path.join(out, "ab_*.log"))):
    tag = os.path.basename(f)[3:-4]
    old = read_bench(f)
    print(f"\nA/B {tag}: old = the switch set, new = default\n")
    print("| row | old ms | new ms | old / new | new GB/s | new % of copy |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for rid, o in old.items():
        n = xd.get(rid)
        if n:
            print(f"| {rid} | {o['ms']:.4f} | {n['ms']:.4f} | {o['ms'] / n['ms']:.2f} | {n['gbs']:.0f} |"
                  f" {100 * n['gbs'] / COPY:.0f} % |")
