"""PyTorch peer for the whole-network steps of bench/RESULTS-networks.md: the same training step as
graphs/resnet50_train_step.dnn (ResNet-50 v1.5, bf16 convs and fc, f32 batchnorm, channels_last, softmax
cross-entropy, plain SGD on every parameter, running statistics updated) and graphs/llama_block_train.dnn
(one Llama decoder block, forward + backward from a given dy), timed eager (cuDNN convs, flash/cuDNN
attention) and under torch.compile.  One JSON line per (case, mode): median/min/max ms over >= 10 steps
timed with CUDA events after warm-up, and the peak memory.

usage: python3 bench/network_peer.py [--cases resnet32,resnet256,llama] [--modes eager,compile] [--iters N]
       python3 bench/network_peer.py --report DIR   (markdown tables from a tests/gpu/network_session.sh OUT_DIR)
--profile N: after timing, torch.profiler over 3 steps; one JSON line per mode with its N costliest kernels
(ms per step, launches per step), to compare with xdnn's per-partition times.
"""
import argparse, glob, json, os, re, time

if __name__ == "__main__" and "--report" not in os.sys.argv:   # --report needs no torch
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    dev = "cuda"
    bf16 = torch.bfloat16
else:
    class nn:  # only what the class definitions below name
        Module = object



def bench(fn, iters, warm):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(iters):
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
    ts.sort()
    return ts[len(ts) // 2], ts[0], ts[-1]


def top_kernels(fn, n, steps=3):
    """The n costliest GPU kernels of fn per step: [name, ms per step, launches per step]."""
    from torch.profiler import profile, ProfilerActivity
    fn(); torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            fn()
        torch.cuda.synchronize()
    agg = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            a = agg.setdefault(e.name, [0.0, 0])
            a[0] += e.time_range.elapsed_us() / 1e3; a[1] += 1
    top = sorted(agg.items(), key=lambda kv: -kv[1][0])
    return {"total_ms": round(sum(v[0] for v in agg.values()) / steps, 3),
            "top": [[k[:90], round(v[0] / steps, 3), v[1] // steps] for k, v in top[:n]]}


# ---------------------------------------------------------------- ResNet-50 (torchvision's layout, v1.5)
class Bottleneck(nn.Module):
    def __init__(self, cin, width, stride, proj):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, width, 1, bias=False); self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, 1, bias=False); self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, 4 * width, 1, bias=False); self.bn3 = nn.BatchNorm2d(4 * width)
        self.down = nn.Sequential(nn.Conv2d(cin, 4 * width, 1, stride, bias=False),
                                  nn.BatchNorm2d(4 * width)) if proj else None

    def forward(self, x):
        a = F.relu(self.bn1(self.conv1(x)))
        a = F.relu(self.bn2(self.conv2(a)))
        a = self.bn3(self.conv3(a))
        return F.relu(a + (self.down(x) if self.down is not None else x))


class ResNet50(nn.Module):
    def __init__(self, ncls=1000, wid=64):
        super().__init__()
        self.conv1 = nn.Conv2d(3, wid, 7, 2, 3, bias=False); self.bn1 = nn.BatchNorm2d(wid)
        blocks, cin = [], wid
        for n, mult, stride in ((3, 1, 1), (4, 2, 2), (6, 4, 2), (3, 8, 2)):
            for i in range(n):
                blocks.append(Bottleneck(cin, mult * wid, stride if i == 0 else 1, i == 0))
                cin = 4 * mult * wid
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(cin, ncls)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 3, 2, 1)
        x = self.blocks(x)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def resnet_case(n, hw, mode, iters, warm, lr=0.1):
    torch.manual_seed(0)
    model = ResNet50().to(dev).to(memory_format=torch.channels_last)
    # as the .dnn: convs and fc in bf16, batchnorm parameters and statistics in f32
    for m in model.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            m.to(bf16)
    x = torch.randn(n, 3, hw, hw, device=dev, dtype=bf16).to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (n,), device=dev)
    opt = torch.optim.SGD(model.parameters(), lr=lr, foreach=True)
    fwd = torch.compile(model, dynamic=False) if mode == "compile" else model

    def step():
        loss = F.cross_entropy(fwd(x).float(), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return step


# ---------------------------------------------------------------- Llama decoder block
def rope(x, cos, sin):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


def llama_block(x, g1, w_qkv, w_o, g2, w_gate, w_up, w_down, cos, sin, hq, hk, hd, gqa):
    b, s, d = x.shape
    kv = hk * hd
    h = F.rms_norm(x, (d,), g1, 1e-5)
    q, k, v = (h @ w_qkv).split((d, kv, kv), dim=-1)
    q = rope(q.view(b, s, hq, hd), cos, sin).transpose(1, 2)
    k = rope(k.view(b, s, hk, hd), cos, sin).transpose(1, 2)
    v = v.view(b, s, hk, hd).transpose(1, 2)
    if gqa:
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    else:  # Hugging Face's repeat_kv, then plain attention
        o = F.scaled_dot_product_attention(q, k.repeat_interleave(hq // hk, 1), v.repeat_interleave(hq // hk, 1),
                                           is_causal=True)
    r = x + o.transpose(1, 2).reshape(b, s, d) @ w_o
    h2 = F.rms_norm(r, (d,), g2, 1e-5)
    return r + (F.silu(h2 @ w_gate) * (h2 @ w_up)) @ w_down


def llama_case(mode, iters, warm, b=2, s=4096, hq=32, hk=8, hd=128, inter=14336, gqa=True):
    torch.manual_seed(0)
    d, kv = hq * hd, hk * hd
    p = lambda *shape: (torch.randn(*shape, device=dev, dtype=bf16) * 0.02).requires_grad_()
    w = [torch.ones(d, device=dev, dtype=bf16, requires_grad=True), p(d, d + 2 * kv), p(d, d),
         torch.ones(d, device=dev, dtype=bf16, requires_grad=True), p(d, inter), p(d, inter), p(inter, d)]
    x = torch.randn(b, s, d, device=dev, dtype=bf16, requires_grad=True)
    dy = torch.randn(b, s, d, device=dev, dtype=bf16) * 0.01
    ang = torch.arange(s, device=dev, dtype=torch.float32)[:, None] * \
        500000.0 ** (-2 * torch.arange(hd // 2, device=dev, dtype=torch.float32) / hd)
    cos, sin = ang.cos()[:, None, :].to(bf16), ang.sin()[:, None, :].to(bf16)   # [S, 1, HD/2]
    fn = (lambda *a: llama_block(*a, hq, hk, hd, gqa))
    fn = torch.compile(fn, dynamic=False) if mode == "compile" else fn

    def step():
        y = fn(x, *w, cos, sin)
        y.backward(dy)
        for t in [x] + w:
            t.grad = None
    return step


# the measured H100 ceilings (METHOD.md): bf16 dense GEMM and device-to-device copy
PEAK_FLOPS, PEAK_BYTES = 759e12, 2976e9


def report(d):
    """Markdown rows from an OUT_DIR: per case the step times and ratios, then the ten most
    expensive partitions and the time per engine."""
    peer = {}
    for line in open(os.path.join(d, "peer.log")) if os.path.exists(os.path.join(d, "peer.log")) else []:
        if line.startswith("{") and '"case"' in line:
            r = json.loads(line)
            if "ms" in r:
                key = (r["case"].replace("_repeat_kv", ""), r["mode"])
                peer[key] = min(peer.get(key, 1e30), r["ms"])     # eager: the better GQA form
    print("| case | xdnn ms | eager ms | compile ms | xdnn/eager | xdnn/compile | step GFLOP | step GB "
          "| roofline ms | xdnn % of roofline | best peer % |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    details = []
    for f in sorted(glob.glob(os.path.join(d, "run_*.json"))):
        case = re.sub(r"^run_|\.json$", "", os.path.basename(f))
        try:
            g = json.load(open(f))["gpu"]
        except (ValueError, KeyError):
            continue
        parts, ms = g["partitions"], g["total_ms"]
        fl, by = sum(p["flops"] for p in parts), sum(p["bytes"] for p in parts)
        roof = max(fl / PEAK_FLOPS, by / PEAK_BYTES) * 1e3
        e, c = peer.get((case, "eager")), peer.get((case, "compile"))
        best = min(x for x in (e, c, 1e30) if x)
        fmt = lambda x: "%.2f" % x if x else "-"
        print("| %s | %.2f | %s | %s | %s | %s | %.0f | %.1f | %.2f (%s) | %.0f%% | %s |" % (
            case, ms, fmt(e), fmt(c), fmt(e and ms / e), fmt(c and ms / c), fl / 1e9, by / 1e9, roof,
            "flops" if fl / PEAK_FLOPS > by / PEAK_BYTES else "bytes", 100 * roof / ms,
            "%.0f%%" % (100 * roof / best) if best < 1e30 else "-"))
        details.append((case, g, parts))
    for case, g, parts in details:
        tot = sum(p["ms_median"] for p in parts)
        print("\n%s: %d partitions, sum of partitions alone %.2f ms (step %.2f ms), plan %.1f s (compile %.1f s)\n"
              % (case, len(parts), tot, g["total_ms"], g["plan_ms"] / 1e3, g["compile_ms"] / 1e3))
        print("| partition | engine | ms | share | TFLOP/s | GB/s |\n|---|---|---|---|---|---|")
        for p in sorted(parts, key=lambda p: -p["ms_median"])[:10]:
            t = p["ms_median"]
            print("| %s | %s | %.3f | %.1f%% | %.0f | %.0f |" % (p["name"][:40], p["engine"], t, 100 * t / tot,
                                                            p["flops"] / t / 1e9, p["bytes"] / t / 1e6))
        eng = {}
        for p in parts:
            a = eng.setdefault(p["engine"], [0, 0.0, 0.0, 0.0])
            a[0] += 1; a[1] += p["ms_median"]; a[2] += p["flops"]; a[3] += p["bytes"]
        print("\n| engine | partitions | ms | share | TFLOP/s | GB/s |\n|---|---|---|---|---|---|")
        for k, (n, t, fl, by) in sorted(eng.items(), key=lambda kv: -kv[1][1]):
            print("| %s | %d | %.2f | %.1f%% | %.0f | %.0f |" % (k, n, t, 100 * t / tot, fl / t / 1e9, by / t / 1e6))


def main():
    if "--report" in os.sys.argv:
        return report(os.sys.argv[os.sys.argv.index("--report") + 1])
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default="resnet32,resnet256,llama")
    ap.add_argument("--modes", default="eager,compile")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--profile", type=int, default=0)
    a = ap.parse_args()
    torch.backends.cudnn.benchmark = True      # cuDNN picks its fastest conv algorithms (the eager peer's best)
    print(json.dumps({"torch": torch.__version__, "device": torch.cuda.get_device_name(),
                      "cudnn": torch.backends.cudnn.version()}), flush=True)
    for mode in a.modes.split(","):
        for case in a.cases.split(","):
            variants = [("", None)]
            if case == "llama" and mode == "eager":
                variants = [("", True), ("_repeat_kv", False)]    # report both GQA formulations
            for suffix, gqa in variants:
                rec = {"case": case + suffix, "mode": mode}
                try:
                    torch.cuda.reset_peak_memory_stats()
                    t0 = time.time()
                    if case.startswith("resnet"):
                        step = resnet_case(int(case[6:]), 224, mode, a.iters, a.warmup)
                    else:
                        step = llama_case(mode, a.iters, a.warmup, gqa=gqa if gqa is not None else True)
                    step(); torch.cuda.synchronize()          # compile (if any) and first run
                    rec["first_s"] = round(time.time() - t0, 1)
                    med, lo, hi = bench(step, a.iters, a.warmup)
                    rec.update(ms=round(med, 3), min_ms=round(lo, 3), max_ms=round(hi, 3),
                               peak_gib=round(torch.cuda.max_memory_allocated() / 2**30, 2))
                    if a.profile:
                        try:
                            rec["kernels"] = top_kernels(step, a.profile)
                        except Exception as ex:     # the timing above stands without it
                            rec["kernels"] = "profiler failed: %s" % str(ex)[:200]
                except Exception as ex:
                    rec["error"] = str(ex).splitlines()[0][:200] if str(ex) else type(ex).__name__
                print(json.dumps(rec), flush=True)
                step = None
                torch.cuda.empty_cache()
                if mode == "compile":
                    torch._dynamo.reset()


if __name__ == "__main__":
    main()
