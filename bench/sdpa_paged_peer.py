"""PyTorch peer for xdnn's paged decode bench (bench/RESULTS-sdpa.md, issue 14): the shapes of
tests/gpu/difftest_seq.c --bench bench/decode/paged (Llama-3-8B GQA 32/8, D = 128, bf16, one query row per
sequence, every sequence Skv keys, pages of 64 or 256 keys).

PyTorch has no paged-KV kernel outside flex_attention (which needs torch.compile), so the reference peer is
F.scaled_dot_product_attention (enable_gqa=True; flash, cuDNN, efficient and default dispatch) on the dense K/V
that gathering the pages gives: the time of the attention alone (what a paged kernel must match), and the
gather + attention (what a framework without a paged kernel pays).  Also reports whether this torch has
flex_attention's paged-attention helper and torch.nn.attention.varlen.  Each call is captured in a CUDA graph,
one replay per event pair (as xdnn's "GRAPH replay" figure).  One JSON line per (peer, case)."""
import json, torch
import torch.nn.functional as F
from cuda_graph_timing import graph_of, time_graph
from torch.nn.attention import sdpa_kernel, SDPBackend
dev = "cuda"

print("torch", torch.__version__, torch.cuda.get_device_name(), "cudnn", torch.backends.cudnn.version(), flush=True)
avail = {}
try:
    import torch.nn.attention.experimental._paged_attention as pa  # noqa: F401
    avail["flex_paged_attention"] = True
except Exception as ex:
    avail["flex_paged_attention"] = f"absent ({type(ex).__name__})"
try:
    import torch.nn.attention.varlen as vl
    avail["varlen"] = [n for n in dir(vl) if not n.startswith("_")][:8]
except Exception as ex:
    avail["varlen"] = f"absent ({type(ex).__name__})"
try:
    import flash_attn  # noqa: F401
    avail["flash_attn"] = flash_attn.__version__
except Exception:
    avail["flash_attn"] = "absent"
print(json.dumps({"available": avail}), flush=True)

Hq, Hk, D = 32, 8, 128
BACKENDS = (("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION),
            ("efficient", SDPBackend.EFFICIENT_ATTENTION), ("default", None))
for (B, S) in ((16, 4096), (64, 4096), (16, 32768)):
    kv_bytes = 2 * B * Hk * S * D * 2
    q = torch.randn(B, Hq, 1, D, device=dev, dtype=torch.bfloat16)
    for ps in (64, 256):
        mp = S // ps; P = B * mp
        kpool = torch.randn(P, ps, Hk, D, device=dev, dtype=torch.bfloat16); vpool = torch.randn_like(kpool)
        pt = torch.arange(P - 1, -1, -1, device=dev, dtype=torch.int64).view(B, mp)  # as the xdnn bench
        def gather(pool):  # [P, ps, Hk, D] -> [B, Hk, S, D]
            return pool[pt].view(B, S, Hk, D).transpose(1, 2)
        kd, vd = gather(kpool).contiguous(), gather(vpool).contiguous()
        tag = f"b{B}h{Hq}k{Hk}q1kv{S}d{D}"
        for bname, backend in BACKENDS:
            for how in ("", "+gather") if ps == 64 else ("+gather",):  # dense attention: once per shape
                if how:
                    fn = lambda: F.scaled_dot_product_attention(q, gather(kpool), gather(vpool), enable_gqa=True)
                else:
                    fn = lambda: F.scaled_dot_product_attention(q, kd, vd, enable_gqa=True)
                try:
                    if backend is None:
                        g = graph_of(fn)
                    else:
                        with sdpa_kernel(backend):
                            g = graph_of(fn)
                    ms = time_graph(g)
                    print(json.dumps({"peer": bname + how, "page": ps, "shape": tag, "ms_graph1": round(ms, 4),
                                      "kv_GBps": round(kv_bytes / ms / 1e6, 1)}), flush=True)
                    del g
                except Exception as ex:
                    print(json.dumps({"peer": bname + how, "page": ps, "shape": tag,
                                      "error": str(ex).splitlines()[0][:160] if str(ex) else type(ex).__name__}),
                          flush=True)
                torch.cuda.synchronize()
        del kpool, vpool, kd, vd
        torch.cuda.empty_cache()
