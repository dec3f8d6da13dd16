"""PyTorch peer for scaled_conv_im2col (src/gpu/eng_scaled_conv.c) on the int8 conv shapes of
tests/gpu/difftest_quant.c --bench (sconv/...): PyTorch has no int8 convolution on the GPU, so the peers are
(1) cuDNN's bf16 conv of the same shape, channels-last (F.conv2d), the float path int8 is meant to beat, and
(2) torch._int_mm on the im2col GEMM alone ([N*P*Q, R*S*C] x [R*S*C, K], cuBLASLt IMMA, int32 out): the floor
of an im2col engine, whose gap to xdnn's time is the im2col pass plus the epilogue.  Timing as
bench/lowp_peer.py: CUDA events, median of 50 after 10 warm-ups.  One JSON line per case."""
import json, torch
import torch.nn.functional as F
dev = "cuda"
def bench(fn, iters=50, warm=10):
    for _ in range(warm): fn()
    torch.cuda.synchronize(); ts = []
    for _ in range(iters):
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
    ts.sort(); return ts[len(ts) // 2]
def out(**kw): print(json.dumps(kw), flush=True)
print("torch", torch.__version__, torch.cuda.get_device_name(), "cudnn", torch.backends.cudnn.version(), flush=True)
# (N, C, H, W, K, R, stride, pad): the sconv bench rows
for (N, C, H, W, K, R, st, pd) in ((32, 256, 56, 56, 256, 3, 1, 1), (32, 64, 56, 56, 64, 3, 1, 1),
                                   (32, 256, 56, 56, 64, 1, 1, 0), (32, 256, 14, 14, 256, 3, 1, 1),
                                   (32, 3, 224, 224, 64, 7, 2, 3)):
    P = (H + 2 * pd - R) // st + 1; Q = (W + 2 * pd - R) // st + 1
    fl = 2 * N * P * Q * K * C * R * R
    shape = f"n{N}c{C}k{K}/{H}x{W}/w{R}x{R}s{st}p{pd}"
    x = torch.randn(N, C, H, W, device=dev, dtype=torch.bfloat16).to(memory_format=torch.channels_last)
    w = torch.randn(K, C, R, R, device=dev, dtype=torch.bfloat16).to(memory_format=torch.channels_last)
    ms = bench(lambda: F.conv2d(x, w, stride=st, padding=pd))
    out(peer="cudnn bf16 conv2d (channels_last)", shape=shape, ms=round(ms, 4), tflops=round(fl / ms / 1e9, 1))
    del x, w
    M, Kc = N * P * Q, C * R * R
    Kc16 = (Kc + 15) // 16 * 16
    a = torch.randint(-128, 128, (M, Kc16), device=dev, dtype=torch.int8)
    b = torch.randint(-128, 128, (K, Kc16), device=dev, dtype=torch.int8).t()  # [Kc, K] column-major: TN
    ms = bench(lambda: torch._int_mm(a, b))
    out(peer="torch._int_mm (im2col GEMM only)", shape=shape, gemm=f"m{M}n{K}k{Kc16}", ms=round(ms, 4),
        tops=round(fl / ms / 1e9, 1))
    del a, b
