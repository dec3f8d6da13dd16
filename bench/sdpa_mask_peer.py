"""PyTorch peer for xdnn's masked attention bench (bench/RESULTS-sdpa.md, tests/gpu/difftest_seq.c --bench
bench/masks): b4h16s4096d128 bf16 bhsd, forward (and backward where the mask is a band or padding) under the
cuDNN, flash and memory-efficient backends.  PyTorch's SDPA has no window or seq-len argument: the band and the
padding reach the backends as a boolean attn_mask (dense: no backend skips the masked blocks, which is the point
of comparison), the bias as an additive bf16 attn_mask of [1, H, S, S], [B, 1, S, S], [S, S] or [B, H, S, S].
One JSON line per (backend, case); a backend that refuses a case says so.  Timing: bench/peer.py's (median of
CUDA events).  MASK_PEER_CASES / MASK_PEER_BACKENDS (comma lists of tags / backend names, "dropout" a case too)
run a part."""
import json, os, torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
from peer import bench as peer_bench  # bench/peer.py: the suite's CUDA-event timer
dev = "cuda"
def bench(fn, iters=20, warm=5):
    return peer_bench(torch, fn, warm, iters)["median"]
print("torch", torch.__version__, torch.cuda.get_device_name(), "cudnn", torch.backends.cudnn.version(), flush=True)
B, H, S, D = 4, 16, 4096, 128
q = torch.randn(B, H, S, D, device=dev, dtype=torch.bfloat16)
k = torch.randn_like(q); v = torch.randn_like(q)
i = torch.arange(S, device=dev)
def band(left):  # sliding causal window: row i sees keys [i - left, i]
    return ((i[None, :] <= i[:, None]) & (i[None, :] >= i[:, None] - left))[None, None]
pad = torch.zeros(B, 1, S, S, dtype=torch.bool, device=dev)
pad[:, :, : S // 2, : S // 2] = True  # seq_len_q = seq_len_kv = S/2 in every batch
CASES = (("plain", None, True), ("window256", band(256), True), ("window1024", band(1024), True),
         ("pad-half", pad, True),
         ("bias-1hss", torch.randn(1, H, S, S, device=dev, dtype=torch.bfloat16), False),
         ("bias-b1ss", torch.randn(B, 1, S, S, device=dev, dtype=torch.bfloat16), False),
         ("bias-ss", torch.randn(S, S, device=dev, dtype=torch.bfloat16), False),
         ("bias-bhss", lambda: torch.randn(B, H, S, S, device=dev, dtype=torch.bfloat16), False))
BACKENDS = (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION),
            ("efficient", SDPBackend.EFFICIENT_ATTENTION))
def chosen(var, names):
    v = os.environ.get(var)
    return [n for n in names if not v or n in v.split(",")]
CASES = [c for c in CASES if c[0] in chosen("MASK_PEER_CASES", [c[0] for c in CASES])]
BACKENDS = [b for b in BACKENDS if b[0] in chosen("MASK_PEER_BACKENDS", [b[0] for b in BACKENDS])]
for tag, mask, with_bwd in CASES:
    if callable(mask):  # made only when its case runs (2 GB)
        mask = mask()
    for bname, backend in BACKENDS:
        try:
            with sdpa_kernel(backend):
                ms = bench(lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask))
                print(json.dumps({"peer": bname, "name": f"sdpa_fwd_bf16_{tag}", "shape": "b4h16k16s4096d128",
                                  "ms": round(ms, 4)}), flush=True)
                if not with_bwd:
                    continue
                qq = q.clone().requires_grad_(); kk = k.clone().requires_grad_(); vv = v.clone().requires_grad_()
                o = F.scaled_dot_product_attention(qq, kk, vv, attn_mask=mask)
                go = torch.randn_like(o)
                ms = bench(lambda: torch.autograd.grad(o, (qq, kk, vv), go, retain_graph=True), iters=10)
                print(json.dumps({"peer": bname, "name": f"sdpa_bwd_bf16_{tag}", "shape": "b4h16k16s4096d128",
                                  "ms": round(ms, 4)}), flush=True)
                del qq, kk, vv, o, go
        except Exception as ex:  # the backend refuses this case
            print(json.dumps({"peer": bname, "name": f"sdpa_fwd_bf16_{tag}", "error": str(ex).splitlines()[0][:160]}),
                  flush=True)
        torch.cuda.empty_cache()
# dropout 0.1, forward (difftest_seq's bench/masks/.../sdpa_fwd_bf16_dropout): the backends draw their own random
# numbers, not xdnn's Philox words (src/ops/sdpa.h), but the work per element is of the same kind
for bname, backend in BACKENDS if chosen("MASK_PEER_CASES", ["dropout"]) else ():
    try:
        with sdpa_kernel(backend):
            ms = bench(lambda: F.scaled_dot_product_attention(q, k, v, dropout_p=0.1))
            print(json.dumps({"peer": bname, "name": "sdpa_fwd_bf16_dropout", "shape": "b4h16k16s4096d128",
                              "ms": round(ms, 4)}), flush=True)
            # the backward too (session 10: difftest_seq's bench/masks/sdpa_bwd_flash/sdpa_bwd_bf16_dropout)
            qq = q.clone().requires_grad_(); kk = k.clone().requires_grad_(); vv = v.clone().requires_grad_()
            o = F.scaled_dot_product_attention(qq, kk, vv, dropout_p=0.1)
            go = torch.randn_like(o)
            ms = bench(lambda: torch.autograd.grad(o, (qq, kk, vv), go, retain_graph=True), iters=10)
            print(json.dumps({"peer": bname, "name": "sdpa_bwd_bf16_dropout", "shape": "b4h16k16s4096d128",
                              "ms": round(ms, 4)}), flush=True)
            del qq, kk, vv, o, go
    except Exception as ex:  # the backend refuses this case
        print(json.dumps({"peer": bname, "name": "sdpa_fwd_bf16_dropout", "error": str(ex).splitlines()[0][:160]}),
              flush=True)
    torch.cuda.empty_cache()
