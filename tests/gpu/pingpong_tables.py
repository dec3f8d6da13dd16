#!/usr/bin/env python3
"""pingpong_tables.py OUT — pingpong_session.sh's summary: the correctness counts, then one row per bench row
of OUT/bench.log (dev_bench_runs: "### TAG [ENV]" sections of "BENCH name shape engine ms ok ... TFLOP/s"
lines) with the time of each tag beside cuDNN's (OUT/peer.log: "PEER name shape ms", bench/conv_peer.py)."""
import os, re, sys

out = sys.argv[1]


def read(name):
    p = os.path.join(out, name)
    return open(p, errors="replace").read() if os.path.exists(p) else ""


print("== correctness")
for log in sorted(f for f in os.listdir(out) if f.startswith(("sweep", "memcheck")) and f.endswith(".log")):
    t = read(log)
    npass, nfail = len(re.findall(r"^PASS", t, re.M)), len(re.findall(r"^FAIL", t, re.M))
    err = re.findall(r"ERROR SUMMARY: (\d+)", t)
    print(f"{log}: {npass} passed, {nfail} failed" + (f", memcheck errors {err[-1]}" if err else ""))
    for m in re.findall(r"^FAIL.*$", t, re.M)[:6]:
        print("  " + m[:220])

peer = {}
for m in re.finditer(r"^PEER (\S+) (\S+) ([\d.]+)", read("peer.log"), re.M):
    peer[m.group(1) + " " + m.group(2)] = float(m.group(3))
times, tags, order, eng, tfs = {}, [], [], {}, {}
tag = None
for line in read("bench.log").splitlines():
    if line.startswith("### "):
        tag = line.split()[1]
        if tag not in tags:
            tags.append(tag)
        continue
    f = line.split()
    if len(f) < 6 or f[0] != "BENCH" or f[5] != "ok" or tag is None:
        continue
    row = f[1] + " " + f[2]
    if row not in order:
        order.append(row)
    times.setdefault(row, {}).setdefault(tag, []).append(float(f[4]))
    tf = re.search(r"([\d.]+) TFLOP/s", line)
    eng[row] = f[3]
    if tf:
        tfs.setdefault(row, {})[tag] = tf.group(1)
    pp = "pp" if "ping-pong" in line else "coop"
    eng[row + " " + tag] = pp
print("== bench (ms, median of 10; the tag's schedule in brackets: pp = ping-pong, coop = both consumers a tile)")
print(f"{'row':<48} " + " ".join(f"{t:>16}" for t in tags) + f" {'cuDNN':>8} {'best/cuDNN':>10} {'off/on':>7} {'TF/s pp1':>8}")
for row in order:
    cells, best = [], None
    for t in tags:
        v = times.get(row, {}).get(t)
        if v:
            ms = min(v)
            best = ms if best is None or ms < best else best
            cells.append(f"{ms:9.4f} [{eng.get(row + ' ' + t, '?'):>4}]")
        else:
            cells.append(f"{'-':>16}")
    q = peer.get(row)
    on = min(times.get(row, {}).get("pp1", [0]) or [0])
    off = min(times.get(row, {}).get("pp0", [0]) or [0])
    print(f"{row:<48} " + " ".join(f"{c:>16}" for c in cells) + f" {q if q else 0:8.4f} "
          f"{(best / q if q and best else 0):10.2f} {(off / on if on and off else 0):7.2f} "
          f"{tfs.get(row, {}).get('pp1', '-'):>8}")
