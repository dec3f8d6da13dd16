"""PyTorch peers for batchnorm training over channels-last x (bench/RESULTS-norm.md,
2026-11-24): the ResNet-50 stage-1 tensor [32, 256, 56, 56] NHWC, forward (affine,
running statistics updated) in f32 / f16 and bf16 + relu, and the backward
(dx, dgamma, dbeta) in bf16 / f16: eager (cuDNN / PyTorch's NHWC kernels) and, with
--compile, torch.compile of the same function (Inductor's generated kernels) for the
bf16 cases (each compile costs device seconds).  --resnet: instead, ResNet-50 N = 256's
batchnorm shapes in bf16 (C 64@112, 64/256@56, 128/512@28, 256/1024@14, 512/2048@7),
batchnorm + relu forward and the backward, eager (difftest_norm --bench bench/rn50 is
xdnn's side, 2026-11-24 session 9).
Median of 50 after 10 warm-up runs, CUDA events.  One JSON line per case; bytes =
2 x numel x element size forward, 3 x backward (x, dy, dx)."""
import sys, time, torch
import torch.nn.functional as F

from norm_torch import bench, rep  # same timing scheme as the other norm peers

dev = "cuda"
compile_too = "--compile" in sys.argv

print("torch", torch.__version__, torch.cuda.get_device_name(), flush=True)
x = torch.empty(1 << 30, dtype=torch.uint8, device=dev); y = torch.empty_like(x)
rep("copy 1GiB", bench(lambda: y.copy_(x)), 2 * x.numel())
del x, y
C = 256
w = torch.rand(C, device=dev) + 0.5; b = torch.rand(C, device=dev) - 0.5

def fwd(xi, rm, rv, relu):
    yy = F.batch_norm(xi, rm, rv, w, b, True, 0.1, 1e-5)
    return F.relu(yy) if relu else yy

def bwd(dy, xi, mean, rstd):
    return torch.ops.aten.native_batch_norm_backward(dy, xi, w, None, None, mean, rstd, True, 1e-5,
                                                     [True, True, True])

if "--join" in sys.argv:  # session 11: the residual join + the batchnorm backward (difftest_norm bench/rn50join)
    for C, HW in ((256, 56), (512, 28), (1024, 14), (2048, 7)):
        w = torch.rand(C, device=dev) + 0.5; b = torch.rand(C, device=dev) - 0.5
        xi = torch.randn(256, C, HW, HW, device=dev, dtype=torch.bfloat16).to(memory_format=torch.channels_last)
        d0, dn, yr = torch.randn_like(xi), torch.randn_like(xi), torch.randn_like(xi).relu()
        rm = torch.zeros(C, device=dev); rv = torch.ones(C, device=dev)
        _, mean, rstd = torch.ops.aten.native_batch_norm(xi, w, b, rm, rv, True, 0.1, 1e-5)
        def join():
            ds = torch.ops.aten.threshold_backward(d0 + dn, yr, 0)
            return ds, bwd(ds, xi, mean, rstd)
        # the fewest bytes: d0, dn, y, x read, ds and dx written (6 x numel x 2 bytes)
        rep(f"rn50join bf16 256x{C}x{HW}x{HW}", bench(join), 12 * xi.numel(), mode="eager")
        del xi, d0, dn, yr
    sys.exit(0)

if "--resnet" in sys.argv:
    for C, HW in ((64, 112), (64, 56), (256, 56), (128, 28), (512, 28), (256, 14), (1024, 14), (512, 7), (2048, 7)):
        w = torch.rand(C, device=dev) + 0.5; b = torch.rand(C, device=dev) - 0.5
        xi = torch.randn(256, C, HW, HW, device=dev, dtype=torch.bfloat16).to(memory_format=torch.channels_last)
        dy = torch.randn_like(xi)
        rm = torch.zeros(C, device=dev); rv = torch.ones(C, device=dev)
        _, mean, rstd = torch.ops.aten.native_batch_norm(xi, w, b, rm, rv, True, 0.1, 1e-5)
        tag = f"rn50 bf16 256x{C}x{HW}x{HW}"
        rep(tag + " fwd+relu", bench(lambda: fwd(xi, rm, rv, True)), 4 * xi.numel(), mode="eager")
        rep(tag + " bwd", bench(lambda: bwd(dy, xi, mean, rstd)), 6 * xi.numel(), mode="eager")
        del xi, dy
    sys.exit(0)

cases = [("fwd", torch.float32, False), ("fwd", torch.float16, False), ("fwd", torch.bfloat16, True),
         ("bwd", torch.bfloat16, False), ("bwd", torch.float16, False)]
for kind, dt, relu in cases:
    n = str(dt)[6:]
    xi = torch.randn(32, C, 56, 56, device=dev, dtype=dt).to(memory_format=torch.channels_last)
    es = xi.element_size()
    rm = torch.zeros(C, device=dev); rv = torch.ones(C, device=dev)
    tag = f"batchnorm_{kind}_{n}{'_relu' if relu else ''}_nhwc 32x256x56x56"
    if kind == "fwd":
        fns = {"eager": lambda: fwd(xi, rm, rv, relu)}
        if compile_too and dt == torch.bfloat16:
            cf = torch.compile(fwd)
            fns["compile"] = lambda: cf(xi, rm, rv, relu)
        nbytes = 2 * xi.numel() * es
    else:
        dy = torch.randn_like(xi)
        _, mean, rstd = torch.ops.aten.native_batch_norm(xi, w, b, rm, rv, True, 0.1, 1e-5)
        fns = {"eager": lambda: bwd(dy, xi, mean, rstd)}
        if compile_too and dt == torch.bfloat16:
            cf = torch.compile(bwd)
            fns["compile"] = lambda: cf(dy, xi, mean, rstd)
        nbytes = 3 * xi.numel() * es
    for mode, fn in fns.items():
        t0 = time.time()
        fn(); torch.cuda.synchronize()
        rep(tag, bench(fn), nbytes, mode=mode, first_call_s=round(time.time() - t0, 1))
    del xi
