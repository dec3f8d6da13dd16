"""conv_peer.py — the PyTorch (cuDNN) side of tests/gpu/difftest_conv.c --bench:
the same ResNet-50 conv shapes as /work/shared/anchors/torch_baseline.py (fwd in
f16/bf16 NHWC and f32 NCHW, dgrad/wgrad f16 NHWC on three 3x3 layers, the 1x1 256->64 layer and
the 1x1 stride-2 projection, a tf32
NHWC 3x3 layer) and its maxpool (set r50); conv + bias + relu (+ residual) in
PyTorch eager (set epi); depthwise MobileNet / EfficientNet layers (set dw) and the depthwise weight gradient
on MobileNet / ConvNeXt layers (set dww, run with dw); the 1x1 layers at 7x7 (f16).  Timing as torch_baseline.py: cudnn.benchmark,
warm-up 10, median of 50 CUDA-event timings.  One "PEER name shape ms" line each,
the names matching the "BENCH name shape ..." lines of difftest_conv."""
import sys

import torch
import torch.nn.functional as F

torch.backends.cudnn.benchmark = True
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
dev = "cuda"
# which sets to time (arguments; default all but sk): r50 (fwd/dgrad/wgrad, tf32, maxpool), epi, dw (fwd, dgrad
# and the depthwise wgrad set dww), sk (split-K's layers alone), stem (the C = 3 stem at N = 32 and 256, fwd and wgrad),
# dgrad (the dgrad and f16 forward of every layer but the stem), w1x1 (the 15 distinct 1x1 weight gradients of
# ResNet-50 at N = 256, bf16 channels-last: cuDNN's, and torch.mm's dW = dy^T X on the same matrices), fd1x1 (the
# same 15 shapes' forward conv and stride-1 dgrad: cuDNN's, and torch.mm's y = X W^T and dx = dy W), w3x3 (the
# 7 distinct 3x3 weight gradients of the ResNet-50 step at N = 256, bf16 channels-last: cuDNN's), step256 (the
# conv_igemm_wgmma partitions of ResNet-50's N = 256 training step, bf16 channels-last: the 3x3 forward convs, the
# 3x3 and 1x1 dgrads with their relu_bwd mask (cuDNN's dgrad + eager threshold_backward, and "_dgradonly"), the
# stride-2 1x1 projection dgrads; names as difftest_conv's conv_step_ rows), zoo (3-D UNet, WaveNet 1-D and
# GoogLeNet-v3 1x7 / 7x1 layers, bf16 channels-last, fwd / dgrad / wgrad: difftest_conv's "convzoo" rows), f32
# (R50's layers in f32 NCHW: true-f32 fwd / dgrad / wgrad, and the forward with tf32 allowed), f32epi (conv +
# bias + relu in f32 NCHW beside the conv alone: conv_f32_gemm's fused epilogue)
SETS = sys.argv[1:] or ["r50", "epi", "dw"]


def bench(fn, iters=50, warm=10):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(iters):
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); torch.cuda.synchronize()
        ts.append(s.elapsed_time(e))
    ts.sort()
    return ts[len(ts) // 2]


def rep(name, shape, ms):
    print(f"PEER {name} {shape} {ms:.4f}", flush=True)


print("torch", torch.__version__, "cudnn", torch.backends.cudnn.version(), torch.cuda.get_device_name(), flush=True)
R50 = [(32, 64, 56, 56, 64, 1, 1, 0), (32, 64, 56, 56, 64, 3, 1, 1), (32, 64, 56, 56, 256, 1, 1, 0),
       (32, 256, 56, 56, 64, 1, 1, 0), (32, 128, 28, 28, 128, 3, 1, 1), (32, 256, 14, 14, 256, 3, 1, 1),
       (32, 512, 7, 7, 512, 3, 1, 1), (32, 3, 224, 224, 64, 7, 2, 3), (32, 256, 56, 56, 512, 1, 2, 0),
       (32, 1024, 14, 14, 256, 1, 1, 0)]
if "sk" in SETS:
    # split-K's cases only: the f16 3x3 layers at 14x14 and 7x7 and the 1x1 ones at 7x7 (fwd), dgrad and wgrad of
    # the 3x3 ones (the same names as set r50)
    for (N, C, H, W, K, Rk, s, p) in (R50[5], R50[6], (32, 2048, 7, 7, 512, 1, 1, 0), (32, 512, 7, 7, 2048, 1, 1, 0),
                                      R50[9]):
        x = torch.randn(N, C, H, W, device=dev, dtype=torch.float16).to(memory_format=torch.channels_last)
        w = torch.randn(K, C, Rk, Rk, device=dev, dtype=torch.float16).to(memory_format=torch.channels_last)
        rep("conv_fwd_f16_nhwc", f"n{N}c{C}h{H}k{K}r{Rk}s{s}p{p}", bench(lambda: F.conv2d(x, w, stride=s, padding=p)))
        if Rk == 3:
            g = torch.randn_like(F.conv2d(x, w, stride=s, padding=p))
            cb = torch.ops.aten.convolution_backward
            rep("conv_dgrad_f16_nhwc", f"n{N}c{C}h{H}k{K}r{Rk}",
                bench(lambda: cb(g, x, w, None, [s, s], [p, p], [1, 1], False, [0, 0], 1, [True, False, False])))
            rep("conv_wgrad_f16_nhwc", f"n{N}c{C}h{H}k{K}r{Rk}",
                bench(lambda: cb(g, x, w, None, [s, s], [p, p], [1, 1], False, [0, 0], 1, [False, True, False])))

if "dgrad" in SETS:
    # conv_igemm_wgmma's dgrad set: the data gradient of every ResNet-50 layer but the stem (and the 1x1 layers at
    # 7x7), f16 channels-last, and the f16 forward of the same layers (its regression); names as set r50
    LAYERS = [l for l in R50 if l[1] != 3] + [(32, 2048, 7, 7, 512, 1, 1, 0), (32, 512, 7, 7, 2048, 1, 1, 0)]
    for (N, C, H, W, K, Rk, s, p) in LAYERS:
        x = torch.randn(N, C, H, W, device=dev, dtype=torch.float16).to(memory_format=torch.channels_last)
        w = torch.randn(K, C, Rk, Rk, device=dev, dtype=torch.float16).to(memory_format=torch.channels_last)
        rep("conv_fwd_f16_nhwc", f"n{N}c{C}h{H}k{K}r{Rk}s{s}p{p}", bench(lambda: F.conv2d(x, w, stride=s, padding=p)))
        g = torch.randn_like(F.conv2d(x, w, stride=s, padding=p))
        cb = torch.ops.aten.convolution_backward
        rep("conv_dgrad_f16_nhwc", f"n{N}c{C}h{H}k{K}r{Rk}",
            bench(lambda: cb(g, x, w, None, [s, s], [p, p], [1, 1], False, [0, 0], 1, [True, False, False])))

if "stem" in SETS:
    # the ResNet stem (C = 3, 7x7 stride 2) at N = 32 and 256, f16 / bf16 channels-last (the N = 32 rows as set r50)
    for dt, tag in ((torch.float16, "f16_nhwc"), (torch.bfloat16, "bf16_nhwc")):
        for N in (32, 256):
            x = torch.randn(N, 3, 224, 224, device=dev, dtype=dt).to(memory_format=torch.channels_last)
            w = torch.randn(64, 3, 7, 7, device=dev, dtype=dt).to(memory_format=torch.channels_last)
            rep(f"conv_fwd_{tag}", f"n{N}c3h224k64r7s2p3", bench(lambda: F.conv2d(x, w, stride=2, padding=3)))
            # the weight gradient alone (the stem's x needs no dx): conv_im2col_gemm's wgrad beside cuDNN's
            g = torch.randn(N, 64, 112, 112, device=dev, dtype=dt).to(memory_format=torch.channels_last)
            cb = torch.ops.aten.convolution_backward
            rep(f"conv_wgrad_{tag}", f"n{N}c3h224k64r7",
                bench(lambda: cb(g, x, w, None, [2, 2], [3, 3], [1, 1], False, [0, 0], 1, [False, True, False])))

# ResNet-50's 15 distinct 1x1 convs (C, H, K, stride): difftest_conv.c's r50_1x1
R50_1X1 = [(64, 56, 64, 1), (64, 56, 256, 1), (256, 56, 64, 1), (256, 56, 128, 1), (128, 28, 512, 1),
           (256, 56, 512, 2), (512, 28, 128, 1), (512, 28, 256, 1), (256, 14, 1024, 1), (512, 28, 1024, 2),
           (1024, 14, 256, 1), (1024, 14, 512, 1), (512, 7, 2048, 1), (1024, 14, 2048, 2), (2048, 7, 512, 1)]
# w1x1: names "conv_wgrad1x1_bf16_nhwc nNcChHkKsS" (cuDNN) and "gemm_wgrad1x1_bf16 ..." (torch.mm on dy as
# [N*P*Q, K] and x as [N*P*Q, C]).  fd1x1: "conv1x1_{fwd,dgrad}_bf16_nhwc ..." (cuDNN; dgrad at stride 1) and
# "gemm1x1_{fwd,dgrad}_bf16 ..." (torch.mm: y = X W^T, dx = dy W).  The strided x is subsampled first, outside
# the timing: torch.mm is the GEMM alone, the floor conv_im2col_gemm's one cuBLASLt call is held to.
if "w1x1" in SETS or "fd1x1" in SETS:
    N = 256
    cb = torch.ops.aten.convolution_backward
    for (C, H, K, s) in R50_1X1:
        P = H // s
        x = torch.randn(N, C, H, H, device=dev, dtype=torch.bfloat16).to(memory_format=torch.channels_last)
        w = torch.randn(K, C, 1, 1, device=dev, dtype=torch.bfloat16).to(memory_format=torch.channels_last)
        g = torch.randn(N, K, P, P, device=dev, dtype=torch.bfloat16).to(memory_format=torch.channels_last)
        shp = f"n{N}c{C}h{H}k{K}s{s}"
        xm = x[:, :, ::s, ::s].permute(0, 2, 3, 1).contiguous().view(-1, C)
        gm = g.permute(0, 2, 3, 1).reshape(-1, K)
        wm = w.view(K, C)
        if "w1x1" in SETS:
            rep("conv_wgrad1x1_bf16_nhwc", shp,
                bench(lambda: cb(g, x, w, None, [s, s], [0, 0], [1, 1], False, [0, 0], 1, [False, True, False])))
            rep("gemm_wgrad1x1_bf16", shp, bench(lambda: torch.mm(gm.t(), xm)))
        if "fd1x1" in SETS:
            rep("conv1x1_fwd_bf16_nhwc", shp, bench(lambda: F.conv2d(x, w, stride=s)))
            rep("gemm1x1_fwd_bf16", shp, bench(lambda: torch.mm(xm, wm.t())))
        if "fd1x1" in SETS and s == 1:
            rep("conv1x1_dgrad_bf16_nhwc", shp,
                bench(lambda: cb(g, x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [True, False, False])))
            rep("gemm1x1_dgrad_bf16", shp, bench(lambda: torch.mm(gm, wm)))
        del x, w, g, xm, gm, wm
        torch.cuda.empty_cache()

# w3x3: "conv_wgrad3x3_bf16_nhwc nNcChHkKsS" (difftest_conv.c's r50_3x3: C = K, 3x3, pad 1); w3x3n32 at N = 32
for N in [n for (n, k) in ((256, "w3x3"), (32, "w3x3n32")) if k in SETS]:
    cb = torch.ops.aten.convolution_backward
    for (C, H, s) in ((64, 56, 1), (128, 56, 2), (128, 28, 1), (256, 28, 2), (256, 14, 1), (512, 14, 2), (512, 7, 1)):
        P = H // s
        x = torch.randn(N, C, H, H, device=dev, dtype=torch.bfloat16).to(memory_format=torch.channels_last)
        w = torch.randn(C, C, 3, 3, device=dev, dtype=torch.bfloat16).to(memory_format=torch.channels_last)
        g = torch.randn(N, C, P, P, device=dev, dtype=torch.bfloat16).to(memory_format=torch.channels_last)
        rep("conv_wgrad3x3_bf16_nhwc", f"n{N}c{C}h{H}k{C}s{s}",
            bench(lambda: cb(g, x, w, None, [s, s], [1, 1], [1, 1], False, [0, 0], 1, [False, True, False])))
        del x, w, g

if "step256" in SETS:
    cb = torch.ops.aten.convolution_backward
    STEP = [(0, 64, 56, 64, 3, 1), (0, 128, 28, 128, 3, 1), (0, 256, 14, 256, 3, 1), (0, 512, 7, 512, 3, 1),
            (0, 128, 56, 128, 3, 2), (0, 256, 28, 256, 3, 2), (0, 512, 14, 512, 3, 2)]
    STEP += [(1,) + r[1:] for r in STEP] + [(1, 64, 56, 256, 1, 1), (1, 128, 28, 512, 1, 1), (1, 256, 14, 1024, 1, 1),
                                           (1, 512, 7, 2048, 1, 1), (2, 256, 56, 512, 1, 2), (2, 512, 28, 1024, 1, 2),
                                           (2, 1024, 14, 2048, 1, 2)]
    for (kd, C, H, K, Rk, s) in STEP:
        p = Rk // 2
        cl = torch.channels_last
        x = torch.randn(256, C, H, H, device=dev, dtype=torch.bfloat16).to(memory_format=cl)
        w = torch.randn(K, C, Rk, Rk, device=dev, dtype=torch.bfloat16).to(memory_format=cl)
        shp = f"n256c{C}h{H}k{K}r{Rk}s{s}"
        if kd == 0:
            rep("conv_step_fwd_bf16_nhwc", shp, bench(lambda: F.conv2d(x, w, stride=s, padding=p)))
        else:
            g = torch.randn_like(F.conv2d(x, w, stride=s, padding=p))
            dx = lambda: cb(g, x, w, None, [s, s], [p, p], [1, 1], False, [0, 0], 1, [True, False, False])[0]
            if kd == 1:
                a = torch.relu(torch.randn_like(x))
                rep("conv_step_dgmask_bf16_nhwc", shp,
                    bench(lambda: torch.ops.aten.threshold_backward(dx(), a, 0)))
            rep(f"conv_step_{'dgrad' if kd == 2 else 'dgmask'}_bf16_nhwc{'_dgradonly' if kd == 1 else ''}", shp,
                bench(dx))
        x = w = g = a = None
        torch.cuda.empty_cache()

if "f32" in SETS:
    # difftest_conv's f32 rows: true f32 (tf32 off) NCHW forward, dgrad (not the stem) and wgrad of R50, then the
    # forward with tf32 allowed (conv_fwd_f32tf32_nchw)
    cb = torch.ops.aten.convolution_backward
    for (N, C, H, W, K, Rk, s, p) in R50:
        x = torch.randn(N, C, H, W, device=dev)
        w = torch.randn(K, C, Rk, Rk, device=dev)
        rep("conv_fwd_f32_nchw", f"n{N}c{C}h{H}k{K}r{Rk}s{s}p{p}", bench(lambda: F.conv2d(x, w, stride=s, padding=p)))
        g = torch.randn_like(F.conv2d(x, w, stride=s, padding=p))
        if C != 3:
            rep("conv_dgrad_f32_nchw", f"n{N}c{C}h{H}k{K}r{Rk}",
                bench(lambda: cb(g, x, w, None, [s, s], [p, p], [1, 1], False, [0, 0], 1, [True, False, False])))
        rep("conv_wgrad_f32_nchw", f"n{N}c{C}h{H}k{K}r{Rk}",
            bench(lambda: cb(g, x, w, None, [s, s], [p, p], [1, 1], False, [0, 0], 1, [False, True, False])))
        torch.backends.cudnn.allow_tf32 = True
        rep("conv_fwd_f32tf32_nchw", f"n{N}c{C}h{H}k{K}r{Rk}s{s}p{p}",
            bench(lambda: F.conv2d(x, w, stride=s, padding=p)))
        torch.backends.cudnn.allow_tf32 = False

if "f32epi" in SETS:
    # conv_f32_gemm's fused epilogue (difftest_conv's convepi_f32_nchw rows): r50's f32 NCHW layers, tf32 off, the
    # conv alone and conv + bias + relu in PyTorch eager (cuDNN's conv with its bias, then relu)
    for i in (1, 0, 3, 4, 5, 6):
        (N, C, H, W, K, Rk, s, p) = R50[i]
        x = torch.randn(N, C, H, W, device=dev)
        w = torch.randn(K, C, Rk, Rk, device=dev)
        b = torch.randn(K, device=dev)
        shp = f"n{N}c{C}h{H}k{K}r{Rk}s{s}p{p}"
        rep("convepi_f32_nchw", shp + "_none", bench(lambda: F.conv2d(x, w, stride=s, padding=p)))
        rep("convepi_f32_nchw", shp + "_bias_relu", bench(lambda: F.relu(F.conv2d(x, w, b, stride=s, padding=p))))

if "r50" in SETS:
    for dt, cl, tag in ((torch.float16, True, "f16_nhwc"), (torch.float32, False, "f32_nchw"),
                        (torch.bfloat16, True, "bf16_nhwc")):
        for (N, C, H, W, K, Rk, s, p) in R50:
            x = torch.randn(N, C, H, W, device=dev, dtype=dt)
            w = torch.randn(K, C, Rk, Rk, device=dev, dtype=dt)
            if cl:
                x = x.to(memory_format=torch.channels_last); w = w.to(memory_format=torch.channels_last)
            rep(f"conv_fwd_{tag}", f"n{N}c{C}h{H}k{K}r{Rk}s{s}p{p}", bench(lambda: F.conv2d(x, w, stride=s, padding=p)))
    for (N, C, H, W, K, Rk, s, p) in ((32, 2048, 7, 7, 512, 1, 1, 0), (32, 512, 7, 7, 2048, 1, 1, 0)):
        x = torch.randn(N, C, H, W, device=dev, dtype=torch.float16).to(memory_format=torch.channels_last)
        w = torch.randn(K, C, Rk, Rk, device=dev, dtype=torch.float16).to(memory_format=torch.channels_last)
        rep("conv_fwd_f16_nhwc", f"n{N}c{C}h{H}k{K}r{Rk}s{s}p{p}", bench(lambda: F.conv2d(x, w, stride=s, padding=p)))
    for (N, C, H, W, K, Rk, s, p) in (R50[1], R50[4], R50[5], R50[6], R50[3], R50[8]):
        x = torch.randn(N, C, H, W, device=dev, dtype=torch.float16).to(memory_format=torch.channels_last)
        w = torch.randn(K, C, Rk, Rk, device=dev, dtype=torch.float16).to(memory_format=torch.channels_last)
        g = torch.randn_like(F.conv2d(x, w, stride=s, padding=p))
        cb = torch.ops.aten.convolution_backward
        rep("conv_dgrad_f16_nhwc", f"n{N}c{C}h{H}k{K}r{Rk}",
            bench(lambda: cb(g, x, w, None, [s, s], [p, p], [1, 1], False, [0, 0], 1, [True, False, False])))
        rep("conv_wgrad_f16_nhwc", f"n{N}c{C}h{H}k{K}r{Rk}",
            bench(lambda: cb(g, x, w, None, [s, s], [p, p], [1, 1], False, [0, 0], 1, [False, True, False])))
    torch.backends.cudnn.allow_tf32 = True
    x = torch.randn(32, 64, 56, 56, device=dev).to(memory_format=torch.channels_last)
    w = torch.randn(64, 64, 3, 3, device=dev).to(memory_format=torch.channels_last)
    rep("conv_fwd_f32tf32_nhwc", "n32c64h56k64r3s1p1", bench(lambda: F.conv2d(x, w, padding=1)))
    torch.backends.cudnn.allow_tf32 = False
    for dt in (torch.float16, torch.float32):
        xi = torch.randn(32, 256, 56, 56, device=dev, dtype=dt).to(memory_format=torch.channels_last)
        rep(f"maxpool3s2_{str(dt)[6:]}_nhwc", "32x256x56x56", bench(lambda: F.max_pool2d(xi, 3, 2, 1)))

if "epi" in SETS:
    # conv + bias + activation (+ residual), the xdnn fused epilogue's peer: PyTorch eager (cuDNN conv with its
    # bias, then the pointwise ops), shapes of difftest_conv.c's convepi cases
    for (C, H, K) in ((64, 28, 64), (64, 56, 64), (256, 14, 256)):
        torch.backends.cudnn.allow_tf32 = False
        x = torch.randn(32, C, H, H, device=dev, dtype=torch.float16).to(memory_format=torch.channels_last)
        w = torch.randn(K, C, 3, 3, device=dev, dtype=torch.float16).to(memory_format=torch.channels_last)
        b = torch.randn(K, device=dev, dtype=torch.float16)
        r = torch.randn(32, K, H, H, device=dev, dtype=torch.float16).to(memory_format=torch.channels_last)
        shp = f"n32c{C}h{H}k{K}r3"
        rep("convepi_f16_nhwc", shp + "_none", bench(lambda: F.conv2d(x, w, padding=1)))
        rep("convepi_f16_nhwc", shp + "_bias_relu", bench(lambda: F.relu(F.conv2d(x, w, b, padding=1))))
        rep("convepi_f16_nhwc", shp + "_bias_res_relu", bench(lambda: F.relu(F.conv2d(x, w, b, padding=1) + r)))

if "dw" in SETS:
    # depthwise (groups = C), f16 channels-last; dgrad through convolution_backward
    DW = [(32, 112, 3, 1), (96, 112, 3, 2), (144, 56, 3, 1), (144, 56, 3, 2), (192, 28, 3, 1), (384, 14, 3, 1),
          (576, 14, 3, 1), (960, 7, 3, 1), (240, 28, 5, 1), (672, 14, 5, 2)]
    for i, (C, H, R, s) in enumerate(DW):
        p = R // 2
        x = torch.randn(32, C, H, H, device=dev, dtype=torch.float16).to(memory_format=torch.channels_last)
        w = torch.randn(C, 1, R, R, device=dev, dtype=torch.float16).to(memory_format=torch.channels_last)
        rep("convdw_fwd_f16_nhwc", f"n32c{C}h{H}r{R}s{s}", bench(lambda: F.conv2d(x, w, stride=s, padding=p, groups=C)))
        if i % 3 == 0 or i == 3:
            g = torch.randn_like(F.conv2d(x, w, stride=s, padding=p, groups=C))
            cb = torch.ops.aten.convolution_backward
            rep("convdw_dgrad_f16_nhwc", f"n32c{C}h{H}r{R}s{s}",
                bench(lambda: cb(g, x, w, None, [s, s], [p, p], [1, 1], False, [0, 0], C, [True, False, False])))

if "dww" in SETS or "dw" in SETS:
    # depthwise weight gradient (MobileNet-v2 3x3, ConvNeXt 7x7), channels-last, through convolution_backward
    DWW = [(32, 112, 3, 1, 0), (96, 112, 3, 2, 0), (144, 56, 3, 1, 0), (144, 56, 3, 2, 0), (384, 14, 3, 1, 0),
           (960, 7, 3, 1, 0), (96, 56, 7, 1, 0), (192, 28, 7, 1, 0), (384, 14, 7, 1, 0), (768, 7, 7, 1, 0),
           (144, 56, 3, 1, 1), (96, 56, 7, 1, 1)]
    for (C, H, R, s, b) in DWW:
        p = R // 2
        dt, tag = (torch.bfloat16, "bf16") if b else (torch.float16, "f16")
        x = torch.randn(32, C, H, H, device=dev, dtype=dt).to(memory_format=torch.channels_last)
        w = torch.randn(C, 1, R, R, device=dev, dtype=dt).to(memory_format=torch.channels_last)
        g = torch.randn_like(F.conv2d(x, w, stride=s, padding=p, groups=C))
        cb = torch.ops.aten.convolution_backward
        rep(f"convdw_wgrad_{tag}_nhwc", f"n32c{C}h{H}r{R}s{s}",
            bench(lambda: cb(g, x, w, None, [s, s], [p, p], [1, 1], False, [0, 0], C, [False, True, False])))

if "zoo" in SETS:
    # (tag, N, C, K, spatial, window, stride, pad per dim, dilation), as zoo_bench_cases in difftest_conv.c
    ZOO = [("u3d_c4k32d128", 1, 4, 32, (128,) * 3, (3,) * 3, 1, (1,) * 3, 1),
           ("u3d_c32k32d64", 2, 32, 32, (64,) * 3, (3,) * 3, 1, (1,) * 3, 1),
           ("u3d_c64k64d32", 2, 64, 64, (32,) * 3, (3,) * 3, 1, (1,) * 3, 1),
           ("u3d_c128k128d16", 2, 128, 128, (16,) * 3, (3,) * 3, 1, (1,) * 3, 1),
           ("u3d_c256k256d8", 2, 256, 256, (8,) * 3, (3,) * 3, 1, (1,) * 3, 1),
           ("u3d_c64k128d32s2", 2, 64, 128, (32,) * 3, (3,) * 3, 2, (1,) * 3, 1),
           ("wn_c64k128l16384d1", 8, 64, 128, (16384,), (2,), 1, (0,), 1),
           ("wn_c64k128l16384d16", 8, 64, 128, (16384,), (2,), 1, (0,), 16),
           ("wn_c64k128l16384d256", 8, 64, 128, (16384,), (2,), 1, (0,), 256),
           ("wn_c64k64l16384k1", 8, 64, 64, (16384,), (1,), 1, (0,), 1),
           ("g3_c128k128h17r1x7", 32, 128, 128, (17, 17), (1, 7), 1, (0, 3), 1),
           ("g3_c128k192h17r7x1", 32, 128, 192, (17, 17), (7, 1), 1, (3, 0), 1)]
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
    for (tag, n, c, k, sp, win, s, pad, dil) in ZOO:
        nd = len(sp)
        # channels-last storage: allocate N, spatial..., C and view it as N, C, spatial...
        perm = (0, nd + 1) + tuple(range(1, nd + 1))
        x = torch.randn(n, *sp, c, device=dev, dtype=torch.bfloat16).permute(*perm)
        w = torch.randn(k, *win, c, device=dev, dtype=torch.bfloat16).permute(*perm)
        f = conv[nd]
        y = f(x, w, stride=s, padding=pad, dilation=dil)
        g = torch.randn(y.shape[0], *y.shape[2:], y.shape[1], device=dev, dtype=torch.bfloat16).permute(*perm)
        cb = torch.ops.aten.convolution_backward
        st, pd, dl = [s] * nd, list(pad), [dil] * nd
        rep("convzoo_fwd_bf16", tag, bench(lambda: f(x, w, stride=s, padding=pad, dilation=dil)))
        rep("convzoo_dgrad_bf16", tag,
            bench(lambda: cb(g, x, w, None, st, pd, dl, False, [0] * nd, 1, [True, False, False])))
        rep("convzoo_wgrad_bf16", tag,
            bench(lambda: cb(g, x, w, None, st, pd, dl, False, [0] * nd, 1, [False, True, False])))
