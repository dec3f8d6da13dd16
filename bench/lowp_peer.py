"""PyTorch peer for the xdnn low-precision bench (bench/RESULTS-lowp.md): torch._scaled_mm (cuBLASLt fp8,
e4m3 x e4m3 -> bf16, per-tensor f32 scales, b column-major as cuBLASLt's TN wants) and a bf16 GEMM beside it, on
the shapes of tests/gpu/difftest_quant.c --bench; eager-PyTorch quantize / dequantize / amax (what a user without
a fused kernel runs) and the device-to-device copy that bounds every memory-bound kernel.  Same timing recipe as
bench/sdpa_peer.py: CUDA events, median of 50 after 10 warm-ups.  One JSON line per case.
The conv section is the peer of scaled_conv_im2col (difftest_quant --bench sconv/...): PyTorch has no int8
convolution on the GPU, so it times cuDNN's bf16 conv of the same shapes, channels-last (the float path int8 is
meant to beat), and torch._int_mm on the im2col GEMM alone ([N*P*Q, R*S*C] x [R*S*C, K], int32 out: the floor of
an im2col engine; xdnn's gap to it is the im2col pass plus the epilogue).
LOWP_PEER_SECTIONS (comma-separated: fp8, i8, conv, mem; fp8,i8,mem by default) picks what runs."""
import json, os, torch
import torch.nn.functional as F
SECTIONS = set(os.environ.get("LOWP_PEER_SECTIONS", "fp8,i8,mem").split(","))
dev = "cuda"
def bench(fn, iters=50, warm=10):
    for _ in range(warm): fn()
    torch.cuda.synchronize(); ts = []
    for _ in range(iters):
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
    ts.sort(); return ts[len(ts) // 2]
def out(**kw): print(json.dumps(kw), flush=True)
print("torch", torch.__version__, torch.cuda.get_device_name(), flush=True)
E4M3 = torch.float8_e4m3fn
for (M, N, K) in ((8192, 8192, 8192), (4096, 4096, 4096), (16, 8192, 8192), (4096, 14336, 4096),
                  (4096, 4096, 14336)) if "fp8" in SECTIONS else ():
    a = torch.randn(M, K, device=dev).to(E4M3)
    b = torch.randn(N, K, device=dev).to(E4M3).t()  # [K, N] column-major: the TN layout
    sa = torch.tensor(0.7, device=dev); sb = torch.tensor(1.3, device=dev)
    fl = 2 * M * N * K
    ms = bench(lambda: torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16))
    out(peer="torch._scaled_mm", name="fp8_gemm_e4m3_bf16", shape=f"m{M}n{N}k{K}", ms=round(ms, 4),
        tflops=round(fl / ms / 1e9, 1))
    ms = bench(lambda: torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16, use_fast_accum=True))
    out(peer="torch._scaled_mm fast_accum", name="fp8_gemm_e4m3_bf16", shape=f"m{M}n{N}k{K}", ms=round(ms, 4),
        tflops=round(fl / ms / 1e9, 1))
    ah = a.to(torch.bfloat16); bh = b.to(torch.bfloat16)
    ms = bench(lambda: ah @ bh)
    out(peer="torch bf16 matmul", name="bf16_gemm", shape=f"m{M}n{N}k{K}", ms=round(ms, 4),
        tflops=round(fl / ms / 1e9, 1))
    del a, b, ah, bh
# int8: torch._int_mm (cuBLASLt IMMA, int32 out, no scales) and the same plus the dequantizing epilogue a user
# writes in eager PyTorch (c = (acc * (sa * sb)).to(bf16)), beside xdnn's matmul_i8_cublaslt rows
for (M, N, K) in ((8192, 8192, 8192), (4096, 14336, 4096)) if "i8" in SECTIONS else ():
    a = torch.randint(-128, 128, (M, K), device=dev, dtype=torch.int8)
    b = torch.randint(-128, 128, (N, K), device=dev, dtype=torch.int8).t()  # [K, N] column-major
    fl = 2 * M * N * K
    ms = bench(lambda: torch._int_mm(a, b))
    out(peer="torch._int_mm", name="i8_gemm_i32", shape=f"m{M}n{N}k{K}", ms=round(ms, 4),
        tflops=round(fl / ms / 1e9, 1))
    sab = torch.tensor(0.7 * 1.3, device=dev)
    ms = bench(lambda: (torch._int_mm(a, b) * sab).to(torch.bfloat16))
    out(peer="torch._int_mm + eager rescale", name="i8_gemm_bf16", shape=f"m{M}n{N}k{K}", ms=round(ms, 4),
        tflops=round(fl / ms / 1e9, 1))
    del a, b
# (N, C, H, W, K, R, stride, pad): the sconv bench rows
for (N, C, H, W, K, R, st, pd) in ((32, 256, 56, 56, 256, 3, 1, 1), (32, 64, 56, 56, 64, 3, 1, 1),
                                   (32, 256, 56, 56, 64, 1, 1, 0), (32, 256, 14, 14, 256, 3, 1, 1),
                                   (32, 3, 224, 224, 64, 7, 2, 3)) if "conv" in SECTIONS else ():
    P = (H + 2 * pd - R) // st + 1; Q = (W + 2 * pd - R) // st + 1
    fl = 2 * N * P * Q * K * C * R * R
    shape = f"n{N}c{C}k{K}/{H}x{W}/w{R}x{R}s{st}p{pd}"
    x = torch.randn(N, C, H, W, device=dev, dtype=torch.bfloat16).to(memory_format=torch.channels_last)
    w = torch.randn(K, C, R, R, device=dev, dtype=torch.bfloat16).to(memory_format=torch.channels_last)
    ms = bench(lambda: F.conv2d(x, w, stride=st, padding=pd))
    out(peer="cudnn bf16 conv2d (channels_last)", name="conv_bf16", shape=shape, ms=round(ms, 4),
        tflops=round(fl / ms / 1e9, 1))
    Kc16 = (C * R * R + 15) // 16 * 16
    a = torch.randint(-128, 128, (N * P * Q, Kc16), device=dev, dtype=torch.int8)
    b = torch.randint(-128, 128, (K, Kc16), device=dev, dtype=torch.int8).t()  # [Kc, K] column-major: TN
    ms = bench(lambda: torch._int_mm(a, b))
    out(peer="torch._int_mm (im2col GEMM only)", name="conv_i8_gemm_floor", shape=shape, ms=round(ms, 4),
        tflops=round(fl / ms / 1e9, 1))
    del x, w, a, b
torch.cuda.empty_cache()
if "mem" not in SECTIONS:
    raise SystemExit(0)
R = C = 8192
x = torch.randn(R, C, device=dev, dtype=torch.bfloat16)
n = R * C
def mem(name, fn, nbytes):
    ms = bench(fn)
    out(peer="torch eager", name=name, shape=f"{R}x{C}", ms=round(ms, 4), gbs=round(nbytes / ms / 1e6, 1))
mem("copy_bf16", lambda: x.clone(), 4 * n)
mem("cast_bf16_to_f32", lambda: x.float(), 6 * n)
s = torch.tensor(0.01, device=dev)
mem("quantize_tensor_bf16_e4m3", lambda: (x.float() / s).clamp(-448, 448).to(E4M3), 3 * n)
sb = torch.full((R, C // 32, 1), 0.0078125, device=dev)
mem("quantize_blk1x32_bf16_e4m3", lambda: (x.float().view(R, C // 32, 32) / sb).clamp(-448, 448).to(E4M3), 3 * n + 4 * n // 32)
q = x.to(E4M3)
mem("dequantize_blk1x32_e4m3_bf16", lambda: (q.float().view(R, C // 32, 32) * sb).to(torch.bfloat16), 3 * n + 4 * n // 32)
mem("amax_tensor_bf16", lambda: x.abs().amax(), 2 * n)
mem("amax_blk1x32_bf16", lambda: x.view(R, C // 32, 32).abs().amax(-1), 2 * n + 4 * n // 32)
