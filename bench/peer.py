#!/usr/bin/env python3
"""peer.py — the PyTorch peer of xdnn's H100 suite (METHOD.md: peers in the same device call).

One case:   peer.py case GRAPH.json IN_DIR OUT_DIR [--time NODE]
    GRAPH.json is xdnn's JSON form of the graph (`xdnn convert G -o G.json --specialize P=V...`),
    IN_DIR the inputs and weights xdnn used (`xdnn run --save-inputs IN_DIR`), OUT_DIR xdnn's
    outputs (`xdnn run --save OUT_DIR`).  The graph's nodes are rebuilt as torch calls (cuDNN
    convolutions, cuBLAS GEMMs, flash attention through F.scaled_dot_product_attention, torch's
    own norm / softmax / pointwise kernels), run on the same data, every graph output is
    compared with xdnn's (relative norm, METHOD.md tolerances), then the peer is timed with
    CUDA events (warm-up, median).  Prints one JSON object.

The suite:  peer.py suite --xdnn BUILD/xdnn --out OUTDIR [--suite bench/suite.txt]
                  [--filter REGEX] [--budget-s S] [--results bench/RESULTS.md] [--keep-data]
    For each line of suite.txt: convert the graph, `xdnn run --device gpu --format json --iters
    --save --save-inputs`, then the peer on the same files; prints a row as each case finishes,
    then the table (case, xdnn ms, peer ms, ratio, % of roofline), writes OUTDIR/suite.json and
    OUTDIR/RESULTS-section.md and appends the section to --results.  Cases not started
    within --budget-s are listed as not run.  bench/run_peer_suite.sh is the one command.
"""
import argparse
import datetime
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time

# METHOD.md: ceilings measured on one H100 (PyTorch 2.11, cuDNN 9.19)
PEAK_TFLOPS = {"bf16": 759.0, "f16": 713.0, "tf32": 391.0, "f32": 51.0}
COPY_GBS = 2976.0
ELEM_BYTES = {"bf16": 2, "f16": 2, "tf32": 4, "f32": 4}

# Agreement of the peer with xdnn, relative norm |got - ref| / |ref| (METHOD.md guides):
TOL = {
    "f32": 1e-4,   # fp32 matmul/conv with long K: both sides sum in different orders
    "tf32": 2e-3,  # tf32 ~1e-3 per side; the two sides round their inputs independently
    "f16": 5e-3,   # fp16 inputs, fp32 accumulation, fp16 output rounding on both sides
    "bf16": 1e-2,  # bf16 inputs, fp32 accumulation, bf16 output rounding on both sides
}
# sdpa_bwd: dq/dk/dv pass through bf16 roundings of P and dS inside both flash kernels
# (and flash's dq is accumulated atomically in another order), so twice the bf16 guide.
TOL_SDPA_BWD_BF16 = 2e-2


# ---------------------------------------------------------------- the graph as torch calls

def evaluate(v, params):
    """An attribute or dim: a number, a list, or {"expr": "..."} over the params."""
    if isinstance(v, dict) and "expr" in v:
        env = {k: p["value"] for k, p in params.items()}
        text = v["expr"].replace("&&", " and ").replace("||", " or ")
        return eval(text, {"__builtins__": {}, "min": min, "max": max}, env)  # graph params only
    if isinstance(v, list):
        return [evaluate(x, params) for x in v]
    return v


def spatial(v, n):
    """An int or one int per spatial dim -> a list of n ints."""
    if isinstance(v, int):
        return [v] * n
    if len(v) != n or any(isinstance(x, list) for x in v):
        raise ValueError(f"peer supports symmetric per-dim values only, got {v}")
    return list(v)


class Graph:
    """The torch form of one xdnn graph: closures per node, run in order."""

    def __init__(self, gj, params, tensors, torch, F):
        self.gj, self.params, self.torch, self.F = gj, params, torch, F
        self.env = dict(tensors)          # tensor name -> torch tensor
        self.leaf = {}                    # sdpa output name -> (q, k, v) leaves with grad
        self.steps = []                   # (node name, callable)
        for node in gj["nodes"]:
            self.steps.append((node["name"], self.compile(node)))

    def arg(self, node, key):
        v = node["inputs"].get(key)
        if v is None:
            return None
        if isinstance(v, dict) and "scalar" in v:
            return v["scalar"]
        return self.env[v]

    def compile(self, node):
        torch, F = self.torch, self.F
        op = node["op"]
        attrs = {k: evaluate(v, self.params) for k, v in node.get("attrs", {}).items()}
        outs = node["outputs"]
        out1 = list(outs.values())[0]
        A = lambda k: self.arg(node, k)  # noqa: E731  (read at run time: env fills in order)

        def put(name, value):
            self.env[name] = value

        binary = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div}
        unary = {"relu": torch.relu, "gelu": F.gelu, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
                 "sigmoid": torch.sigmoid, "tanh": torch.tanh, "exp": torch.exp}
        if op in binary:
            f = binary[op]
            return lambda: put(out1, f(A("a"), A("b")))
        if op in unary:
            f = unary[op]
            return lambda: put(out1, f(A("x")))
        if op == "matmul":
            if attrs.get("trans_a") or attrs.get("trans_b"):
                ta, tb = attrs.get("trans_a", False), attrs.get("trans_b", False)
                return lambda: put(out1, torch.matmul(A("a").mT if ta else A("a"), A("b").mT if tb else A("b")))
            return lambda: put(out1, torch.matmul(A("a"), A("b")))
        if op in ("conv", "conv_dgrad", "conv_wgrad"):
            nsp = 2
            stride = spatial(attrs.get("stride", 1), nsp)
            pad = spatial(attrs.get("pad", 0), nsp)
            dil = spatial(attrs.get("dilation", 1), nsp)
            groups = attrs.get("groups", 1)
            cb = torch.ops.aten.convolution_backward
            if op == "conv":
                return lambda: put(out1, F.conv2d(A("x"), A("w"), None, stride, pad, dil, groups))
            if op == "conv_dgrad":
                w = self.env[node["inputs"]["w"]]
                x_like = torch.empty(attrs["x_dims"], dtype=w.dtype, device=w.device)
                if w.is_contiguous(memory_format=torch.channels_last):
                    x_like = x_like.contiguous(memory_format=torch.channels_last)
                return lambda: put(out1, cb(A("dy"), x_like, A("w"), None, stride, pad, dil, False, [0, 0],
                                            groups, [True, False, False])[0])
            x = self.env[node["inputs"]["x"]]
            w_like = torch.empty(attrs["w_dims"], dtype=x.dtype, device=x.device)
            if x.is_contiguous(memory_format=torch.channels_last):
                w_like = w_like.contiguous(memory_format=torch.channels_last)
            return lambda: put(out1, cb(A("dy"), A("x"), w_like, None, stride, pad, dil, False, [0, 0],
                                        groups, [False, True, False])[1])
        if op == "maxpool":
            win = spatial(attrs["window"], 2)
            stride = spatial(attrs.get("stride", win), 2)
            pad = spatial(attrs.get("pad", 0), 2)
            dil = spatial(attrs.get("dilation", 1), 2)
            ceil = bool(attrs.get("ceil_mode", False))
            return lambda: put(out1, F.max_pool2d(A("x"), win, stride, pad, dil, ceil))
        if op == "softmax":
            axis = attrs.get("axis", -1)
            return lambda: put(out1, torch.softmax(A("x"), axis))
        if op == "layernorm":
            axes = attrs.get("axes", [-1])
            eps = attrs.get("eps", 1e-5)
            names = list(outs.values())

            def ln():
                x = A("x")
                shape = list(x.shape[len(x.shape) - len(axes):])
                y, mean, rstd = torch.native_layer_norm(x, shape, A("scale").reshape(shape),
                                                        A("bias").reshape(shape), eps)
                for name, val in zip(names, (y, mean, rstd)):
                    put(name, val)
            return ln
        if op == "batchnorm":
            eps, mom = attrs.get("eps", 1e-5), attrs.get("momentum", 0.1)
            names = list(outs.values())
            # the running statistics torch updates in place: copies, made once
            rm = self.arg(node, "running_mean")
            rv = self.arg(node, "running_var")
            rm = rm.flatten().clone() if rm is not None else None
            rv = rv.flatten().clone() if rv is not None else None

            def bn():
                y, mean, invstd = torch.ops.aten.native_batch_norm(A("x"), A("scale").flatten(),
                                                                   A("bias").flatten(), rm, rv, True, mom, eps)
                for name, val in zip(names, (y, mean, invstd, rm, rv)):
                    put(name, val)
            return bn
        if op == "sdpa":
            causal = bool(attrs.get("causal", False))
            scale = attrs.get("scale")
            names = list(outs.values())
            if len(names) > 1:
                # o and stats feed a backward: keep the autograd graph (stats stay inside it)
                def fwd_grad():
                    q, k, v = (A(n).detach().requires_grad_() for n in ("q", "k", "v"))
                    o = F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
                    self.leaf[names[0]] = (q, k, v)
                    put(names[0], o)
                    put(names[1], None)
                return fwd_grad
            return lambda: put(out1, F.scaled_dot_product_attention(A("q"), A("k"), A("v"), is_causal=causal,
                                                                    scale=scale))
        if op == "sdpa_bwd":
            names = list(outs.values())
            o_name = node["inputs"]["o"]

            def bwd():
                o = self.env[o_name]
                grads = torch.autograd.grad(o, self.leaf[o_name], A("do"), retain_graph=True)
                for name, val in zip(names, grads):
                    put(name, val)
            return bwd
        raise NotImplementedError(f"peer.py has no torch form for op '{op}' (node {node['name']})")

    def run(self, only=None):
        for name, step in self.steps:
            if only is None or name in only:
                step()


def load_graph(path):
    j = json.load(open(path))
    name = j.get("default_graph")
    graphs = j["graphs"]
    gj = next((g for g in graphs if g["name"] == name), graphs[0])
    return j.get("params", {}), gj


def read_npy(torch, path):
    """A .npy file as a CPU tensor, without numpy (the GPU machine's torch may come without it).
    Reads what xdnn writes: version 1.x/2.x, C order, little-endian f2/f4/f8/i4/i8/b1."""
    import ast
    import struct
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise ValueError(f"{path}: not a .npy file")
    major = data[6]
    if major == 1:
        hlen, start = struct.unpack("<H", data[8:10])[0], 10
    else:
        hlen, start = struct.unpack("<I", data[8:12])[0], 12
    header = ast.literal_eval(data[start:start + hlen].decode("latin1"))
    if header.get("fortran_order"):
        raise ValueError(f"{path}: Fortran order is not supported")
    kinds = {"<f2": torch.float16, "<f4": torch.float32, "<f8": torch.float64, "<i4": torch.int32,
             "<i8": torch.int64, "|b1": torch.bool, "|u1": torch.uint8, "|i1": torch.int8}
    dt = kinds.get(header["descr"])
    if dt is None:
        raise ValueError(f"{path}: dtype {header['descr']} is not supported")
    body = bytearray(data[start + hlen:])
    shape = tuple(header["shape"])
    if not body:
        return torch.empty(shape, dtype=dt)
    return torch.frombuffer(body, dtype=dt).reshape(shape)


def torch_dtype(torch, name):
    return {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64,
            "i32": torch.int32, "i64": torch.int64}[name]


def bench(torch, fn, warm, iters, dev="cuda"):
    for _ in range(warm):
        fn()
    ts = []
    if dev == "cuda":
        torch.cuda.synchronize()
        for _ in range(iters):
            s = torch.cuda.Event(enable_timing=True)
            e = torch.cuda.Event(enable_timing=True)
            s.record(); fn(); e.record(); torch.cuda.synchronize()
            ts.append(s.elapsed_time(e))
    else:  # --device cpu: only to try the peer without a GPU
        for _ in range(iters):
            t = time.perf_counter(); fn(); ts.append(1e3 * (time.perf_counter() - t))
    ts.sort()
    return {"median": ts[len(ts) // 2], "min": ts[0], "max": ts[-1], "p90": ts[(9 * len(ts) + 9) // 10 - 1]}


def run_case(graph_json, in_dir, out_dir, time_node=None, warm=10, iters=30, dev="cuda"):
    import contextlib
    import torch
    import torch.nn.functional as F

    params, gj = load_graph(graph_json)
    ctx = gj.get("context", {})
    tf32 = bool(evaluate(ctx.get("tf32", False), params))
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = True
    flash = contextlib.nullcontext()
    if dev == "cuda":  # the peer of xdnn's sdpa is flash attention, whatever torch would pick
        from torch.nn.attention import SDPBackend, sdpa_kernel
        flash = sdpa_kernel(SDPBackend.FLASH_ATTENTION)
    tensors = {}
    for name, t in gj["tensors"].items():
        if t["kind"] not in ("input", "weight"):
            continue
        arr = read_npy(torch, os.path.join(in_dir, name + ".npy"))
        x = arr.to(dev).to(torch_dtype(torch, t.get("dtype", ctx.get("io", "f32"))))
        if t.get("layout") == "nhwc" and x.dim() == 4:
            x = x.contiguous(memory_format=torch.channels_last)
        tensors[name] = x
    res = {"graph": gj["name"]}
    io = ctx.get("io", "f32")
    prec = "tf32" if tf32 and io == "f32" else io
    ops = {n["op"] for n in gj["nodes"]}
    tol = TOL_SDPA_BWD_BF16 if "sdpa_bwd" in ops and prec == "bf16" else TOL.get(prec, 1e-4)
    with flash:
        g = Graph(gj, params, tensors, torch, F)
        g.run()
        if dev == "cuda":
            torch.cuda.synchronize()
        # agreement with xdnn's outputs
        checks, ok = [], True
        for name in gj["outputs"]:
            ref_path = os.path.join(out_dir, name + ".npy")
            if not os.path.exists(ref_path):
                checks.append({"output": name, "ok": False, "why": "xdnn saved no output"})
                ok = False
                continue
            ref = read_npy(torch, ref_path).to(dev).float()
            got = g.env[name].float().reshape(ref.shape)
            nan_ref, nan_got = torch.isnan(ref), torch.isnan(got)
            diff = torch.where(nan_ref & nan_got, torch.zeros_like(ref), got - ref)
            rel = (diff.norm() / ref.norm().clamp_min(1e-30)).item()
            c = {"output": name, "rel_norm": rel, "max_abs": diff.abs().max().item(),
                 "nan_mismatch": int((nan_ref != nan_got).sum().item()), "tol": tol,
                 "ref_norm": ref.norm().item()}
            c["ok"] = bool(rel <= tol and c["nan_mismatch"] == 0 and c["ref_norm"] > 0)
            ok = ok and c["ok"]
            checks.append(c)
        res["check"] = "ok" if ok else "MISMATCH"
        res["checks"] = checks
        # timing: the whole graph, or just the node the suite names (after one full run)
        only = None if time_node in (None, "all") else {time_node}
        res["peer"] = bench(torch, lambda: g.run(only), warm, iters, dev)
    res["torch"] = torch.__version__
    res["cudnn"] = torch.backends.cudnn.version()
    res["device"] = torch.cuda.get_device_name() if dev == "cuda" else "cpu"
    del g, tensors
    if dev == "cuda":
        torch.cuda.empty_cache()
    return res


# ---------------------------------------------------------------- the suite

def read_suite(path):
    cases = []
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        f = line.split()
        if len(f) not in (7, 8):
            raise ValueError(f"{path}: expected 7 or 8 columns, got {len(f)}: {line}")
        name, shape, graph, sets, timed, work, prec = f[:7]
        params = dict(kv.split("=", 1) for kv in sets.split(",") if kv)
        opts = dict(kv.split("=", 1) for kv in f[7].split(",")) if len(f) == 8 else {}
        unknown = set(opts) - {"iters", "warmup", "timeout", "skip"}
        if unknown:
            raise ValueError(f"{path}: unknown case options {sorted(unknown)}: {line}")
        cases.append({"name": name, "shape": shape, "graph": graph, "sets": params, "time": timed,
                      "work": work, "prec": prec, "opts": opts})
    return cases


def work_of(case):
    """(flops, fewest bytes) of a case from its params."""
    p = {k: int(v) for k, v in case["sets"].items()}
    kind = case["work"]
    if ":" in kind:
        kind, extra = kind.split(":", 1)
        p.update({k: int(v) for k, v in (kv.split("=", 1) for kv in extra.split(","))})
    es = ELEM_BYTES[case["prec"]]
    if kind == "gemm":
        M, N, K = p["M"], p["N"], p["K"]
        return 2.0 * M * N * K, es * (M * K + K * N + M * N)
    if kind == "conv":
        N, C, H, W, K, R = p["N"], p["C"], p["H"], p["W"], p["K"], p["R"]
        S, P = p.get("S", 1), p.get("P", 0)
        Ho, Wo = (H + 2 * P - R) // S + 1, (W + 2 * P - R) // S + 1
        return 2.0 * N * K * Ho * Wo * C * R * R, es * (N * C * H * W + K * C * R * R + N * K * Ho * Wo)
    if kind.startswith("sdpa"):
        B, H, S, D = p["B"], p["H"], p["S"], p["D"]
        fl = 4.0 * B * H * S * S * D / (2 if kind.endswith("causal") else 1)
        if "bwd" in kind:
            return 2.5 * fl, es * 8 * B * H * S * D   # q k v o do in, dq dk dv out
        return fl, es * 4 * B * H * S * D             # q k v in, o out
    numel = 1
    for k in ("N", "C", "H", "W") if "N" in p else ("R", "C"):
        numel *= p[k]
    if kind == "rw":
        return 0.0, 2.0 * numel * es
    if kind == "pool":
        return 0.0, 1.25 * numel * es
    raise ValueError(f"unknown work kind {case['work']}")


def roofline_ms(case):
    flops, nbytes = work_of(case)
    t_math = flops / (PEAK_TFLOPS[case["prec"]] * 1e12) if flops else 0.0
    t_mem = nbytes / (COPY_GBS * 1e9)
    return 1e3 * max(t_math, t_mem), flops, nbytes


def xdnn_time(xj, timed):
    """The xdnn figure: whole-plan median, or the partitions holding node `timed`."""
    gpu = xj.get("gpu", {})
    parts = gpu.get("partitions", [])
    engines = ",".join(sorted({p["engine"] for p in parts}))
    if timed == "all":
        return xj.get("total_ms"), sum(p.get("ms_p90", 0) for p in parts), engines
    sel = [p for p in parts if timed in p["name"].split("+")]
    if not sel:
        return None, None, engines
    return (sum(p["ms_median"] for p in sel), sum(p.get("ms_p90", 0) for p in sel),
            ",".join(sorted({p["engine"] for p in sel})))


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def suite(args):
    cases = read_suite(args.suite)
    if args.filter:
        cases = [c for c in cases if re.search(args.filter, c["name"] + " " + c["shape"])]
    for kv in args.set:
        k, v = kv.split("=", 1)
        for c in cases:
            if k in c["sets"]:
                c["sets"][k] = v
    os.makedirs(args.out, exist_ok=True)
    env = dict(os.environ)
    t0 = time.time()
    rows, device, xdevice = [], None, None
    for i, c in enumerate(cases):
        key = f"{c['name']} {c['shape']}"
        row = {"case": c["name"], "shape": c["shape"]}
        rows.append(row)
        if time.time() - t0 > args.budget_s:
            row["status"] = "not run (time budget)"
            continue
        if "skip" in c["opts"]:
            row["status"] = "skipped: " + c["opts"]["skip"].replace("_", " ")
            print(f"{key}: {row['status']}", flush=True)
            continue
        d = os.path.join(args.out, f"{i:02d}_{c['name']}_{c['shape']}")
        os.makedirs(d, exist_ok=True)
        sets = []
        for k, v in c["sets"].items():
            sets += ["--set", f"{k}={v}"]
        spec = []
        for k, v in c["sets"].items():
            spec += ["--specialize", f"{k}={v}"]
        gjson = os.path.join(d, "graph.json")
        conv = subprocess.run([args.xdnn, "convert", c["graph"], "-o", gjson] + spec, capture_output=True,
                              text=True, env=env)
        if conv.returncode != 0:
            row["status"] = f"convert failed: {conv.stderr.strip().splitlines()[:1]}"
            print(f"{key}: {row['status']}", flush=True)
            continue
        in_dir, out_dir = os.path.join(d, "in"), os.path.join(d, "out")
        iters, warmup = int(c["opts"].get("iters", args.iters)), int(c["opts"].get("warmup", args.warmup))
        case_timeout = float(c["opts"].get("timeout", args.case_timeout_s))
        row["xdnn_iters"] = iters
        cmd = [args.xdnn, "run", c["graph"], "--device", "gpu" if args.device == "cuda" else "cpu",
               "--iters", str(iters), "--warmup", str(warmup), "--format", "json", "--save", out_dir,
               "--save-inputs", in_dir] + sets
        row["repro"] = " ".join(cmd)
        tx = time.time()
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=case_timeout)
            rc, out, err = r.returncode, r.stdout, r.stderr
        except subprocess.TimeoutExpired:
            rc, out, err = 124, "", f"timed out after {case_timeout:.0f} s"
        row["xdnn_wall_s"] = round(time.time() - tx, 2)
        open(os.path.join(d, "xdnn.json"), "w").write(out)
        open(os.path.join(d, "xdnn.err"), "w").write(err)
        row["xdnn_rc"] = rc
        if rc == 0:
            try:
                xj = json.loads(out)
                row["xdnn_ms"], row["xdnn_p90"], row["engines"] = xdnn_time(xj, c["time"])
                xdevice = xj.get("gpu", {}).get("device", xdevice)
                row["xdnn_device"] = xdevice
            except ValueError as ex:
                row["xdnn_error"] = f"bad JSON from xdnn: {ex}"
        else:
            lines = [l for l in err.strip().splitlines() if "error" in l] or err.strip().splitlines() or [""]
            row["xdnn_error"] = f"rc={rc}: {lines[0][:200]}"
        # the peer, on xdnn's saved inputs (saved before the GPU run, so present even if it failed)
        if os.path.isdir(in_dir):
            try:
                pr = run_case(gjson, in_dir, out_dir, c["time"], args.peer_warmup, args.peer_iters, args.device)
                row["peer_ms"] = pr["peer"]["median"]
                row["peer_p90"] = pr["peer"]["p90"]
                row["check"] = pr["check"] if rc == 0 else "no xdnn output"
                row["checks"] = pr["checks"]
                device = device or f"{pr['device']} (torch {pr['torch']}, cuDNN {pr['cudnn']})"
                row["peer_device"] = device
            except Exception as ex:  # a peer failure is a row, not the end of the suite
                row["peer_error"] = f"{type(ex).__name__}: {str(ex)[:200]}"
        else:
            row["peer_error"] = "no inputs saved"
        roof, flops, nbytes = roofline_ms(c)
        row["roofline_ms"] = roof
        if row.get("xdnn_ms"):
            row["xdnn_roof_pct"] = 100.0 * roof / row["xdnn_ms"]
        if row.get("peer_ms"):
            row["peer_roof_pct"] = 100.0 * roof / row["peer_ms"]
        if row.get("xdnn_ms") and row.get("peer_ms"):
            row["ratio"] = row["xdnn_ms"] / row["peer_ms"]
        if flops and row.get("xdnn_ms"):
            row["xdnn_tflops"] = flops / row["xdnn_ms"] / 1e9
        row["status"] = "ran"
        if not args.keep_data:
            shutil.rmtree(in_dir, ignore_errors=True)
            shutil.rmtree(out_dir, ignore_errors=True)
        print(f"[{time.time() - t0:6.1f}s] {key}: xdnn {fmt(row.get('xdnn_ms'), '.4f')} ms, peer "
              f"{fmt(row.get('peer_ms'), '.4f')} ms, ratio {fmt(row.get('ratio'), '.2f')}, check "
              f"{row.get('check', '-')} {row.get('xdnn_error', '')} {row.get('peer_error', '')}", flush=True)
        json.dump(rows, open(os.path.join(args.out, "suite.json"), "w"), indent=1)
    json.dump(rows, open(os.path.join(args.out, "suite.json"), "w"), indent=1)
    section = table(rows, device, xdevice, args, time.time() - t0)
    print(section)
    open(os.path.join(args.out, "RESULTS-section.md"), "w").write(section)
    if args.results:
        with open(args.results, "a") as f:
            f.write("\n" + section)
    bad = [r for r in rows if r.get("check") not in ("ok",) and r.get("status") == "ran"]
    return 1 if bad else 0


def table(rows, device, xdevice, args, wall):
    commit = os.environ.get("XDNN_COMMIT")
    if not commit:
        try:
            commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                    check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            commit = "unknown (no .git and no XDNN_COMMIT)"
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    ran = [r for r in rows if r.get("ratio")]
    geo = math.exp(sum(math.log(r["ratio"]) for r in ran) / len(ran)) if ran else None
    ok = sum(1 for r in rows if r.get("check") == "ok")
    out = [f"## Peer suite — {date}, commit {commit}", "",
           f"Device: {xdevice or '?'}; peer: {device or '?'}.  `bench/run_peer_suite.sh` "
           f"(xdnn `run --device gpu --iters {args.iters} --warmup {args.warmup}`, whole-plan median; peer "
           f"warm-up {args.peer_warmup}, median of {args.peer_iters} CUDA-event timings; both on the same "
           f"inputs, outputs compared by relative norm).  Ratio = xdnn ms / peer ms (< 1: xdnn faster).  "
           f"% roofline from METHOD.md ceilings.  Suite wall time {wall:.0f} s.", "",
           "| case | shape | xdnn ms | peer ms | ratio | xdnn % roof | peer % roof | check (rel norm) | xdnn engines |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r.get("status") != "ran":
            out.append(f"| {r['case']} | {r['shape']} | - | - | - | - | - | {r.get('status', '?')} | |")
            continue
        worst = max((c.get("rel_norm", float("nan")) for c in r.get("checks", [])), default=None)
        chk = r.get("check", "-") + (f" ({worst:.1e})" if worst is not None else "")
        if r.get("xdnn_error"):
            chk = "xdnn: " + r["xdnn_error"].replace("|", "/")
        if r.get("peer_error"):
            chk += "; peer: " + r["peer_error"].replace("|", "/")
        if r.get("xdnn_iters") not in (None, args.iters):
            chk += f"; xdnn --iters {r['xdnn_iters']}"
        out.append(f"| {r['case']} | {r['shape']} | {fmt(r.get('xdnn_ms'), '.4f')} | {fmt(r.get('peer_ms'), '.4f')} "
                   f"| {fmt(r.get('ratio'), '.2f')} | {fmt(r.get('xdnn_roof_pct'), '.0f')} "
                   f"| {fmt(r.get('peer_roof_pct'), '.0f')} | {chk} | {r.get('engines', '')} |")
    out += ["", f"{len(ran)} cases timed on both sides, geomean ratio {fmt(geo, '.2f')}; {ok} of "
                f"{len(rows)} agree with the peer; "
                f"{sum(1 for r in rows if r.get('status') != 'ran')} not run.", ""]
    return "\n".join(out)


def report(args):
    """One table from the suite.json of one or more runs (a later run's row replaces an earlier
    one of the same case), in suite order; for a suite finished over several device calls."""
    cases = read_suite(args.suite)
    by_key = {}
    for path in args.runs:
        for r in json.load(open(path)):
            k, old = (r["case"], r["shape"]), by_key.get((r["case"], r["shape"]))
            if old is None or old.get("status") != "ran" or r.get("status") == "ran":
                by_key[k] = r
    rows = [by_key.get((c["name"], c["shape"]), {"case": c["name"], "shape": c["shape"], "status": "not run"})
            for c in cases]
    device = next((r["peer_device"] for r in rows if r.get("peer_device")), args.peer_device)
    xdevice = next((r["xdnn_device"] for r in rows if r.get("xdnn_device")), args.xdnn_device)
    section = table(rows, device, xdevice, args, args.wall_s)
    if args.note:
        section = section.rstrip("\n") + "\n\n" + args.note + "\n"
    print(section)
    if args.results:
        with open(args.results, "a") as f:
            f.write("\n" + section)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="mode", required=True)
    c = sub.add_parser("case")
    c.add_argument("graph_json")
    c.add_argument("in_dir")
    c.add_argument("out_dir")
    c.add_argument("--time", default="all")
    c.add_argument("--warmup", type=int, default=10)
    c.add_argument("--iters", type=int, default=30)
    c.add_argument("--device", choices=("cuda", "cpu"), default="cuda", help="cpu: try the peer without a GPU")
    s = sub.add_parser("suite")
    s.add_argument("--xdnn", required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--suite", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "suite.txt"))
    s.add_argument("--filter")
    s.add_argument("--budget-s", type=float, default=1e9, help="start no case after this many seconds")
    s.add_argument("--case-timeout-s", type=float, default=120)
    s.add_argument("--iters", type=int, default=20)
    s.add_argument("--warmup", type=int, default=3)
    s.add_argument("--peer-iters", type=int, default=30)
    s.add_argument("--peer-warmup", type=int, default=10)
    s.add_argument("--results", help="append the table to this file (bench/RESULTS.md)")
    s.add_argument("--keep-data", action="store_true")
    s.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                   help="cpu: xdnn's CPU reference and torch on the CPU, to try the suite without a GPU (tiny shapes)")
    s.add_argument("--set", action="append", default=[], metavar="P=V",
                   help="override a param of every case (with --device cpu: make the shapes tiny)")
    r = sub.add_parser("report", help="one table from several runs' suite.json")
    r.add_argument("runs", nargs="+")
    r.add_argument("--suite", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "suite.txt"))
    r.add_argument("--results")
    r.add_argument("--note", help="a paragraph added under the table")
    r.add_argument("--peer-device")
    r.add_argument("--xdnn-device")
    r.add_argument("--wall-s", type=float, default=0.0)
    for k, v in (("--iters", 20), ("--warmup", 3), ("--peer-iters", 30), ("--peer-warmup", 10)):
        r.add_argument(k, type=int, default=v)
    a = ap.parse_args()
    if a.mode == "report":
        return report(a)
    if a.mode == "case":
        print(json.dumps(run_case(a.graph_json, a.in_dir, a.out_dir, a.time, a.warmup, a.iters, a.device), indent=1))
        return 0
    return suite(a)


if __name__ == "__main__":
    sys.exit(main())
