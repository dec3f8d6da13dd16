"""PyTorch peer for the xdnn SDPA bench (bench/RESULTS-sdpa.md): flash attention fwd/bwd, bf16, bhsd,
the SDPA shapes of anchors/torch_baseline.py (same timing recipe)."""
import torch, json
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
dev = "cuda"
def bench(fn, iters=20, warm=5):
    for _ in range(warm): fn()
    torch.cuda.synchronize(); ts = []
    for _ in range(iters):
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
    ts.sort(); return ts[len(ts) // 2]
print("torch", torch.__version__, torch.cuda.get_device_name(), flush=True)
for causal in (False, True):
    for (B, H, S, D) in ((4, 16, 4096, 128), (16, 16, 1024, 64), (1, 32, 16384, 128)):
        q = torch.randn(B, H, S, D, device=dev, dtype=torch.bfloat16); k = torch.randn_like(q); v = torch.randn_like(q)
        fl = 4 * B * H * S * S * D // (2 if causal else 1)
        tag = f"b{B}h{H}s{S}d{D}"
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            ms = bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
            print(json.dumps({"name": f"sdpa_fwd_bf16_flash{'_causal' if causal else ''}", "shape": tag, "ms": round(ms, 4),
                              "tflops": round(fl / ms / 1e9, 1)}), flush=True)
            qq = q.clone().requires_grad_(); kk = k.clone().requires_grad_(); vv = v.clone().requires_grad_()
            o = F.scaled_dot_product_attention(qq, kk, vv, is_causal=causal); go = torch.randn_like(o)
            ms = bench(lambda: torch.autograd.grad(o, (qq, kk, vv), go, retain_graph=True), iters=10)
            print(json.dumps({"name": f"sdpa_bwd_bf16_flash{'_causal' if causal else ''}", "shape": tag, "ms": round(ms, 4),
                              "tflops": round(2.5 * fl / ms / 1e9, 1)}), flush=True)
        del q, k, v, qq, kk, vv, o, go
        torch.cuda.empty_cache()
