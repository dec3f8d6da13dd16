"""PyTorch peer for the xdnn SDPA bench (bench/RESULTS-sdpa.md): F.scaled_dot_product_attention fwd/bwd under the
flash and the cuDNN backends, bf16, bhsd, the shapes of tests/gpu/difftest_seq.c --bench (same timing recipe as
anchors/torch_baseline.py).  One JSON line per (backend, case); a backend that refuses a shape says so.
Environment: SDPA_PEER_SHAPES=b4h16k16s4096d128,... runs only those shapes; SDPA_PEER_FWD_ONLY=1 skips the backward."""
import os, torch, json
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
print("torch", torch.__version__, torch.cuda.get_device_name(), "cudnn", torch.backends.cudnn.version(), flush=True)
# (B, Hq, Hk, S, D, backward too)
SHAPES = ((4, 16, 16, 4096, 128, True), (4, 16, 16, 4096, 64, True), (16, 16, 16, 1024, 64, True),
          (1, 32, 32, 16384, 128, True), (2, 8, 8, 4096, 40, True), (4, 16, 16, 4096, 80, True),
          (4, 16, 16, 4096, 256, True), (1, 32, 8, 4096, 128, True),
          (2, 32, 8, 4096, 128, False))  # the Llama-3-8B block's attention at B = 2 (forward only)
BACKENDS = (("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION))
for (B, Hq, Hk, S, D, with_bwd) in SHAPES:
    if os.environ.get("SDPA_PEER_SHAPES") and f"b{B}h{Hq}k{Hk}s{S}d{D}" not in os.environ["SDPA_PEER_SHAPES"].split(","):
        continue
    with_bwd = with_bwd and not os.environ.get("SDPA_PEER_FWD_ONLY")
    for causal in (False, True):
        q = torch.randn(B, Hq, S, D, device=dev, dtype=torch.bfloat16)
        k = torch.randn(B, Hk, S, D, device=dev, dtype=torch.bfloat16); v = torch.randn_like(k)
        fl = 4 * B * Hq * S * S * D // (2 if causal else 1)
        tag = f"b{B}h{Hq}k{Hk}s{S}d{D}"
        gqa = Hq != Hk
        for bname, backend in BACKENDS:
            name = f"sdpa_{{}}_bf16{'_causal' if causal else ''}"
            try:
                with sdpa_kernel(backend):
                    ms = bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa))
                    print(json.dumps({"peer": bname, "name": name.format("fwd"), "shape": tag, "ms": round(ms, 4),
                                      "tflops": round(fl / ms / 1e9, 1)}), flush=True)
                    if not with_bwd:
                        continue
                    qq = q.clone().requires_grad_(); kk = k.clone().requires_grad_(); vv = v.clone().requires_grad_()
                    o = F.scaled_dot_product_attention(qq, kk, vv, is_causal=causal, enable_gqa=gqa)
                    go = torch.randn_like(o)
                    ms = bench(lambda: torch.autograd.grad(o, (qq, kk, vv), go, retain_graph=True), iters=10)
                    print(json.dumps({"peer": bname, "name": name.format("bwd"), "shape": tag, "ms": round(ms, 4),
                                      "tflops": round(2.5 * fl / ms / 1e9, 1)}), flush=True)
                    del qq, kk, vv, o, go
            except Exception as ex:  # the backend refuses this shape
                print(json.dumps({"peer": bname, "name": name.format("fwd"), "shape": tag,
                                  "error": str(ex).splitlines()[0][:160]}), flush=True)
        del q, k, v
        torch.cuda.empty_cache()
