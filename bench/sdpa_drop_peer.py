"""PyTorch peer for xdnn's dropout attention backward (bench/RESULTS-sdpa.md, session 11; tests/gpu/difftest_seq.c
--bench bench/drop): bf16 bhsd D = 128, dropout 0.1 (and 0, the rows without), b4h16s4096 with and without causal, and the Llama
block's GQA 32/8 causal at B = 2, forward and backward under the cuDNN and flash backends (bench/sdpa_mask_peer.py has the
plain dropout row alone).  The backends draw their own random numbers, not xdnn's Philox words (src/ops/sdpa.h),
but the work per element is of the same kind.  GQA goes through enable_gqa; a backend that refuses it is timed
with k, v expanded to the 32 query heads (tag "expanded": the same FLOPs, 4x the K/V bytes).  One JSON line per
(backend, case); timing: bench/peer.py's (median of CUDA events)."""
import json, torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
from peer import bench as peer_bench  # bench/peer.py: the suite's CUDA-event timer
dev = "cuda"
def bench(fn, iters=20, warm=5):
    return peer_bench(torch, fn, warm, iters)["median"]
print("torch", torch.__version__, torch.cuda.get_device_name(), "cudnn", torch.backends.cudnn.version(), flush=True)
# (B, Hq, Hk, causal, dropout), S 4096, D 128; the same shapes without dropout (the rows xdnn's must not move)
CASES = tuple((B, Hq, Hk, c, p) for p in (0.1, 0.0) for B, Hq, Hk, c in ((4, 16, 16, False), (4, 16, 16, True),
                                                                       (2, 32, 8, True)))
BACKENDS = (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION))
S, D = 4096, 128
for B, Hq, Hk, causal, p in CASES:
    shape = f"b{B}h{Hq}k{Hk}s{S}d{D}"
    name = "sdpa_{}_bf16" + ("_causal" if causal else "") + ("_dropout" if p else "")
    q = torch.randn(B, Hq, S, D, device=dev, dtype=torch.bfloat16)
    k = torch.randn(B, Hk, S, D, device=dev, dtype=torch.bfloat16); v = torch.randn_like(k)
    for bname, backend in BACKENDS:
        for expand in ((False, True) if Hq != Hk else (False,)):
            kk0 = k.repeat_interleave(Hq // Hk, dim=1) if expand else k
            vv0 = v.repeat_interleave(Hq // Hk, dim=1) if expand else v
            gqa = dict(enable_gqa=True) if Hq != Hk and not expand else {}
            tag = shape + ("-expanded" if expand else "")
            try:
                with sdpa_kernel(backend):
                    f = lambda: F.scaled_dot_product_attention(q, kk0, vv0, dropout_p=p, is_causal=causal, **gqa)
                    ms = bench(f)
                    print(json.dumps({"peer": bname, "name": name.format("fwd"), "shape": tag, "ms": round(ms, 4)}),
                          flush=True)
                    qq = q.clone().requires_grad_(); kk = kk0.clone().requires_grad_(); vv = vv0.clone().requires_grad_()
                    o = F.scaled_dot_product_attention(qq, kk, vv, dropout_p=p, is_causal=causal, **gqa)
                    go = torch.randn_like(o)
                    ms = bench(lambda: torch.autograd.grad(o, (qq, kk, vv), go, retain_graph=True), iters=10)
                    print(json.dumps({"peer": bname, "name": name.format("bwd"), "shape": tag, "ms": round(ms, 4)}),
                          flush=True)
                    del qq, kk, vv, o, go
                break  # GQA taken as such: no expanded row
            except Exception as ex:  # the backend refuses this case
                print(json.dumps({"peer": bname, "name": name.format("fwd"), "shape": tag,
                                  "error": str(ex).splitlines()[0][:160]}), flush=True)
            torch.cuda.empty_cache()
