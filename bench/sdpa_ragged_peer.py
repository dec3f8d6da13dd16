"""PyTorch peer for xdnn's ragged training-step bench (bench/RESULTS-sdpa.md, tests/gpu/difftest_seq.c --bench
bench/ragged): 8 sequences of 2048, 1536, 1024, 1024, 768, 512, 1024, 256 tokens packed into [8192, 16, 128] bf16,
causal, forward and backward.  Three ways PyTorch runs it: FlashAttention-2's varlen kernels through the aten ops
(cumulative offsets, as xdnn's seq_offsets), SDPA on jagged nested tensors (whatever backend it picks), and the
dense b8h16s2048 causal step under cuDNN (no padding skipped: an upper bound of the padded step).  One JSON line per
(peer, case); a peer that refuses says so.  Timing: bench/peer.py's (median of CUDA events)."""
import json, torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
from peer import bench as peer_bench  # bench/peer.py: the suite's CUDA-event timer
dev, dt = "cuda", torch.bfloat16
LENS = (2048, 1536, 1024, 1024, 768, 512, 1024, 256)
T, H, D = sum(LENS), 16, 128
def bench(fn, iters=20, warm=5):
    return peer_bench(torch, fn, warm, iters)["median"]
def emit(peer, name, **kw):
    print(json.dumps({"peer": peer, "name": name, "shape": "t8192b8h16d128", **kw}), flush=True)
print("torch", torch.__version__, torch.cuda.get_device_name(), "cudnn", torch.backends.cudnn.version(), flush=True)
q, k, v, do = (torch.randn(T, H, D, device=dev, dtype=dt) for _ in range(4))
cu = torch.tensor([0] + [sum(LENS[: i + 1]) for i in range(len(LENS))], device=dev, dtype=torch.int32)
M, scale = max(LENS), D ** -0.5

try:  # FlashAttention-2 varlen (the aten ops behind SDPA's flash backend)
    fwd = lambda: torch.ops.aten._flash_attention_forward(q, k, v, cu, cu, M, M, 0.0, True, False, scale=scale)
    out = fwd()
    emit("flash-varlen", "sdpa_fwd_bf16_causal_ragged", ms=round(bench(fwd), 4))
    o, lse, seed, off = out[0], out[1], out[2], out[3]
    bwd = lambda: torch.ops.aten._flash_attention_backward(do, q, k, v, o, lse, cu, cu, M, M, 0.0, True, seed, off,
                                                           scale=scale)
    bwd()
    emit("flash-varlen", "sdpa_bwd_bf16_causal_ragged", ms=round(bench(bwd, iters=10), 4))
except Exception as ex:
    emit("flash-varlen", "sdpa_bf16_causal_ragged", error=str(ex).splitlines()[0][:160])

try:  # jagged nested tensors: [B, j, H, D] -> [B, H, j, D]
    nt = lambda x: torch.nested.nested_tensor([x[a:b] for a, b in zip(cu[:-1].tolist(), cu[1:].tolist())],
                                              layout=torch.jagged, requires_grad=True).transpose(1, 2)
    qn, kn, vn = nt(q), nt(k), nt(v)
    fwd = lambda: F.scaled_dot_product_attention(qn, kn, vn, is_causal=True)
    on = fwd()
    emit("sdpa-jagged", "sdpa_fwd_bf16_causal_ragged", ms=round(bench(fwd), 4))
    gn = torch.ones_like(on)
    bwd = lambda: torch.autograd.grad(on, (qn, kn, vn), gn, retain_graph=True)
    bwd()
    emit("sdpa-jagged", "sdpa_bwd_bf16_causal_ragged", ms=round(bench(bwd, iters=10), 4))
except Exception as ex:
    emit("sdpa-jagged", "sdpa_bf16_causal_ragged", error=str(ex).splitlines()[0][:160])

for bname, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION)):
    try:  # the dense padded step, every row of 2048 computed
        qd, kd, vd = (torch.randn(8, H, 2048, D, device=dev, dtype=dt, requires_grad=True) for _ in range(3))
        with sdpa_kernel(backend):
            fwd = lambda: F.scaled_dot_product_attention(qd, kd, vd, is_causal=True)
            od = fwd()
            emit(bname, "sdpa_fwd_bf16_causal_dense_b8s2048", ms=round(bench(fwd), 4))
            gd = torch.randn_like(od)
            bwd = lambda: torch.autograd.grad(od, (qd, kd, vd), gd, retain_graph=True)
            emit(bname, "sdpa_bwd_bf16_causal_dense_b8s2048", ms=round(bench(bwd, iters=10), 4))
        del qd, kd, vd, od
    except Exception as ex:
        emit(bname, "sdpa_bf16_causal_dense_b8s2048", error=str(ex).splitlines()[0][:160])
    torch.cuda.empty_cache()
