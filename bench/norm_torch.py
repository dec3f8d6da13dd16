"""PyTorch peer timings for bench/RESULTS-norm.md: the memory-bound shapes of
shared/anchors/torch_baseline.py (layernorm, softmax, batchnorm NHWC) plus the
extra gpunorm bench cases (layernorm backward, dropout, permute, concat), timed
the same way (median of 50 after 10 warm-up runs, CUDA events).
Prints one JSON line per case: name, ms, GB/s (bytes = inputs + outputs)."""
import json, torch
import torch.nn.functional as F

dev = "cuda"

def bench(fn, iters=50, warm=10):
    for _ in range(warm): fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(iters):
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
    ts.sort(); return ts[len(ts) // 2]

def rep(name, ms, bytes_, **extra):
    print(json.dumps({"name": name, "ms": round(ms, 4), "gbs": round(bytes_ / ms / 1e6, 1), **extra}), flush=True)

def main():
    print("torch", torch.__version__, torch.cuda.get_device_name(), flush=True)
    x = torch.empty(1 << 30, dtype=torch.uint8, device=dev); y = torch.empty_like(x)
    rep("copy 1GiB", bench(lambda: y.copy_(x)), 2 * x.numel())
    del x, y
    for dt, es in ((torch.float16, 2), (torch.float32, 4)):
        n = str(dt)[6:]
        x = torch.randn(8192, 8192, device=dev, dtype=dt); g = torch.randn(8192, device=dev, dtype=dt); bb = torch.randn(8192, device=dev, dtype=dt)
        rep(f"layernorm_{n} 8192x8192", bench(lambda: F.layer_norm(x, (8192,), g, bb)), 2 * x.numel() * es)
        rep(f"softmax_{n} 8192x8192", bench(lambda: torch.softmax(x, -1)), 2 * x.numel() * es)
        xi = torch.randn(32, 256, 56, 56, device=dev, dtype=dt).to(memory_format=torch.channels_last)
        rm = torch.zeros(256, device=dev); rv = torch.ones(256, device=dev)
        w = torch.ones(256, device=dev); b = torch.zeros(256, device=dev)
        if dt == torch.float32:
            rep(f"batchnorm_train_{n}_nhwc 32x256x56x56 (no affine, as torch_baseline)",
                bench(lambda: F.batch_norm(xi, rm, rv, None, None, True)), 2 * xi.numel() * es)
        rep(f"batchnorm_train_{n}_nhwc 32x256x56x56 (affine)",
            bench(lambda: F.batch_norm(xi, rm, rv, w, b, True)), 2 * xi.numel() * es)
        del xi
    # the warp-row cases (kernels/norm_warp.cu): the Llama block's rmsnorm rows and a log_softmax
    xr = torch.randn(8192, 4096, device=dev, dtype=torch.bfloat16); wr = torch.randn(4096, device=dev, dtype=torch.bfloat16)
    rep("rmsnorm_bfloat16 8192x4096", bench(lambda: F.rms_norm(xr, (4096,), wr)), 2 * xr.numel() * 2)
    del xr
    xl = torch.randn(8192, 8192, device=dev, dtype=torch.float16)
    rep("log_softmax_float16 8192x8192", bench(lambda: torch.log_softmax(xl, -1)), 2 * xl.numel() * 2)
    del xl
    x = torch.randn(8192, 8192, device=dev, dtype=torch.float16); dy = torch.randn_like(x)
    g = torch.randn(8192, device=dev, dtype=torch.float16); bb = torch.randn(8192, device=dev, dtype=torch.float16)
    _, mean, rstd = torch.ops.aten.native_layer_norm(x, [8192], g, bb, 1e-5)
    rep("layernorm_bwd_float16 8192x8192 (dx, dgamma, dbeta)",
        bench(lambda: torch.ops.aten.native_layer_norm_backward(dy, x, [8192], mean, rstd, g, bb, [True, True, True])),
        3 * x.numel() * 2)
    rep("dropout_float16 8192x8192 p=0.1 (y + mask)", bench(lambda: torch.ops.aten.native_dropout(x, 0.1, True)),
        x.numel() * (2 + 2 + 1))
    xp = torch.randn(32, 256, 56, 56, device=dev, dtype=torch.float16)
    rep("permute_float16 32x256x56x56 -> NHWC", bench(lambda: xp.permute(0, 2, 3, 1).contiguous()), 2 * xp.numel() * 2)
    a = torch.randn(8192, 4096, device=dev, dtype=torch.float16); b2 = torch.randn_like(a)
    rep("concat_float16 2x[8192,4096] axis 1", bench(lambda: torch.cat((a, b2), 1)), 4 * a.numel() * 2)


def rows_session9(alone=False):
    """session 9: GPT / BERT widths and the Llama block's rmsnorm backward (difftest_norm's bench rows);
    alone: also the copy ceiling and the two forward rows of main() they are compared with."""
    if alone:
        x = torch.empty(1 << 30, dtype=torch.uint8, device=dev); y = torch.empty_like(x)
        rep("copy 1GiB", bench(lambda: y.copy_(x)), 2 * x.numel())
        x = torch.randn(8192, 8192, device=dev, dtype=torch.float16); g = torch.randn(8192, device=dev, dtype=torch.float16)
        rep("layernorm_float16 8192x8192", bench(lambda: F.layer_norm(x, (8192,), g, g)), 2 * x.numel() * 2)
        x = torch.randn(8192, 4096, device=dev, dtype=torch.bfloat16); g = torch.randn(4096, device=dev, dtype=torch.bfloat16)
        rep("rmsnorm_bfloat16 8192x4096", bench(lambda: F.rms_norm(x, (4096,), g)), 2 * x.numel() * 2)
    x = torch.randn(8192, 768, device=dev, dtype=torch.float16); g = torch.randn(768, device=dev, dtype=torch.float16)
    bb = torch.randn(768, device=dev, dtype=torch.float16); dy = torch.randn_like(x)
    rep("layernorm_float16 8192x768", bench(lambda: F.layer_norm(x, (768,), g, bb)), 2 * x.numel() * 2)
    _, mean, rstd = torch.ops.aten.native_layer_norm(x, [768], g, bb, 1e-5)
    rep("layernorm_bwd_float16 8192x768 (dx, dgamma, dbeta)",
        bench(lambda: torch.ops.aten.native_layer_norm_backward(dy, x, [768], mean, rstd, g, bb, [True, True, True])),
        3 * x.numel() * 2)
    x = torch.randn(16384, 1024, device=dev, dtype=torch.bfloat16); g = torch.randn(1024, device=dev, dtype=torch.bfloat16)
    bb = torch.randn(1024, device=dev, dtype=torch.bfloat16)
    rep("layernorm_bfloat16 16384x1024", bench(lambda: F.layer_norm(x, (1024,), g, bb)), 2 * x.numel() * 2)
    x = torch.randn(8192, 4096, device=dev, dtype=torch.bfloat16, requires_grad=True)
    w = torch.randn(4096, device=dev, dtype=torch.bfloat16, requires_grad=True)
    dy = torch.randn(8192, 4096, device=dev, dtype=torch.bfloat16)
    y = F.rms_norm(x, (4096,), w)
    rep("rmsnorm_bwd_bfloat16 8192x4096 (dx, dscale; autograd of F.rms_norm)",
        bench(lambda: torch.autograd.grad(y, (x, w), dy, retain_graph=True)), 3 * x.numel() * 2)
    fused = getattr(torch.ops.aten, "_fused_rms_norm_backward", None)
    if fused is not None:
        try:
            with torch.no_grad():
                _, rs = torch.ops.aten._fused_rms_norm(x, [4096], w, None)
            rep("rmsnorm_bwd_bfloat16 8192x4096 (aten._fused_rms_norm_backward)",
                bench(lambda: fused(dy, x, [4096], rs, w, [True, True])), 3 * x.numel() * 2)
        except Exception as e:  # the op's signature differs between releases
            print(json.dumps({"name": "aten._fused_rms_norm_backward", "error": str(e)[:200]}), flush=True)


def rows_session10(compile_too=True):
    """session 10: layernorm / rmsnorm forward and backward, bf16, 8192 x 4096 and 8192 x 8192, eager and
    torch.compile (difftest_norm --bench bench/s10/), and a copy of the same bytes (the ceiling at that size)."""
    x = torch.empty(1 << 30, dtype=torch.uint8, device=dev); y = torch.empty_like(x)
    rep("copy 1GiB", bench(lambda: y.copy_(x)), 2 * x.numel())
    del x, y
    bf = torch.bfloat16
    for D in (4096, 8192):
        x = torch.randn(8192, D, device=dev, dtype=bf); w = torch.randn(D, device=dev, dtype=bf)
        b = torch.randn(D, device=dev, dtype=bf); dy = torch.randn_like(x); yc = torch.empty_like(x)
        n = x.numel()
        rep(f"copy_bfloat16 8192x{D}", bench(lambda: yc.copy_(x)), 2 * n * 2)
        _, mean, rstd = torch.ops.aten.native_layer_norm(x, [D], w, b, 1e-5)
        rrstd = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6)

        def rms_f(x, w): return F.rms_norm(x, (D,), w, 1e-6)
        def ln_f(x, w, b): return F.layer_norm(x, (D,), w, b)
        def ln_b(dy, x, mean, rstd, w, b):
            return torch.ops.aten.native_layer_norm_backward(dy, x, [D], mean, rstd, w, b, [True, True, True])
        def rms_b(dy, x, rstd, w):  # dx and dscale, f32 math as aten's
            xh = x.float() * rstd; g = dy.float() * w.float()
            dx = rstd * (g - xh * (g * xh).mean(-1, keepdim=True))
            return dx.to(x.dtype), (dy.float() * xh).sum(0).to(w.dtype)
        cases = [("rmsnorm", rms_f, (x, w), 2), ("layernorm", ln_f, (x, w, b), 2),
                 ("rmsnorm_bwd (dx, dscale)", rms_b, (dy, x, rrstd, w), 3),
                 ("layernorm_bwd (dx, dscale, dbias)", ln_b, (dy, x, mean, rstd, w, b), 3)]
        for name, f, args, k in cases:
            rep(f"{name}_bfloat16 8192x{D} eager", bench(lambda: f(*args)), k * n * 2)
            if compile_too:
                try:
                    cf = torch.compile(f)
                    rep(f"{name}_bfloat16 8192x{D} compile", bench(lambda: cf(*args)), k * n * 2)
                except Exception as e:
                    print(json.dumps({"name": f"{name} 8192x{D} compile", "error": str(e)[:200]}), flush=True)
        del x, dy, yc


if __name__ == "__main__":
    import sys
    if sys.argv[1:2] == ["session10"]:
        print("torch", torch.__version__, torch.cuda.get_device_name(), flush=True)
        rows_session10(compile_too=sys.argv[2:] != ["eager"])
        sys.exit(0)
    if sys.argv[1:] == ["session9"]:
        print("torch", torch.__version__, torch.cuda.get_device_name(), flush=True)
        rows_session9(alone=True)
    else:
        main()
        rows_session9()
