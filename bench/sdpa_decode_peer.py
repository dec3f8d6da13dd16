"""PyTorch peer for the xdnn decode / chunked-prefill bench (bench/RESULTS-sdpa.md, 2026-11-24): the shapes of
tests/gpu/difftest_seq.c --bench bench/decode (Llama-3-8B GQA 32/8, D = 128, bf16, bhsd) through
F.scaled_dot_product_attention under the flash, cuDNN and efficient backends (enable_gqa=True), and the default
dispatch (no backend forced).  Decode takes microseconds, so Python's launch cost would dominate a plain timing:
each call is captured in a CUDA graph and timed two ways, one replay per event pair (the way xdnn's
"GRAPH replay" figure is taken) and 20 calls in one graph (device time per call, no launch gap).
One JSON line per (backend, case); a backend that refuses a shape says so.
`table` (session 10): difftest_seq's bench/decode/table shapes (B 1-64, Hk 8 and 32, Sq 1/4/64/256, Skv 1k-128k),
under flash and cuDNN only (the efficient backend refuses GQA, the default dispatch picks one of the two)."""
import json, sys, torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
dev = "cuda"

def graph_of(fn, n):
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3): fn()  # warm-up outside the capture (workspace, autotuning)
    torch.cuda.current_stream().wait_stream(s); torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(n): fn()
    return g

def time_graph(g, iters=30, warm=5):
    for _ in range(warm): g.replay()
    torch.cuda.synchronize(); ts = []
    for _ in range(iters):
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record(); g.replay(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
    ts.sort(); return ts[len(ts) // 2]

print("torch", torch.__version__, torch.cuda.get_device_name(), "cudnn", torch.backends.cudnn.version(), flush=True)
SHAPES = ((1, 1, 4096), (1, 1, 32768), (1, 1, 131072), (16, 1, 4096), (1, 128, 8192), (1, 256, 8192))
BACKENDS = (("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION),
            ("efficient", SDPBackend.EFFICIENT_ATTENTION), ("default", None))
Hq, Hk, D = 32, 8, 128
SHAPES = tuple((B, Hk, Sq, Skv) for (B, Sq, Skv) in SHAPES)
if sys.argv[1:2] == ["table"]:
    SHAPES = tuple((B, hk, 1, kv) for hk, B, kvs in (
        (8, 1, (1024, 4096, 32768, 131072)), (8, 4, (1024, 4096, 32768, 131072)), (8, 16, (1024, 4096, 32768)),
        (8, 64, (1024, 4096)), (32, 1, (1024, 4096, 32768, 131072)), (32, 4, (1024, 4096, 32768)),
        (32, 16, (1024, 4096)), (32, 64, (1024,))) for kv in kvs)
    SHAPES += ((1, 8, 4, 4096), (1, 8, 4, 32768), (16, 8, 4, 4096), (1, 32, 4, 4096), (16, 32, 4, 4096))
    SHAPES += tuple((1, hk, sq, kv) for hk in (8, 32) for sq in (64, 256) for kv in (4096, 32768))
    BACKENDS = BACKENDS[:2]
for (B, Hk, Sq, Skv) in SHAPES:
    causal = Sq > 1
    q = torch.randn(B, Hq, Sq, D, device=dev, dtype=torch.bfloat16)
    k = torch.randn(B, Hk, Skv, D, device=dev, dtype=torch.bfloat16); v = torch.randn_like(k)
    # causal bottom-right: the last query row sees every key (torch's is_causal is top-left)
    mask = None
    if causal:
        from torch.nn.attention.bias import causal_lower_right
        mask = causal_lower_right(Sq, Skv)
    kv_bytes = 2 * B * Hk * Skv * D * 2
    tag = f"b{B}h{Hq}k{Hk}q{Sq}kv{Skv}d{D}"
    name = f"sdpa_fwd_bf16{'_causal_br' if causal else ''}"
    # (2026-11-24, first call: the same mask as a boolean [Sq, Skv] tensor ran only on cuDNN and the default
    # dispatch, 3x slower than flash with the CausalBias object: not timed any more)
    variants = [(b, be, mask, "") for b, be in BACKENDS]
    for bname, backend, m, how in variants:
        bname += how
        fn = lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=m, enable_gqa=True)
        try:
            if backend is None:
                one, many = graph_of(fn, 1), graph_of(fn, 20)
            else:
                with sdpa_kernel(backend):
                    one, many = graph_of(fn, 1), graph_of(fn, 20)
            ms1 = time_graph(one); ms20 = time_graph(many) / 20
            print(json.dumps({"peer": bname, "name": name, "shape": tag, "ms_graph1": round(ms1, 4),
                              "ms_graph20": round(ms20, 4), "kv_GBps_graph1": round(kv_bytes / ms1 / 1e6, 1),
                              "kv_GBps_graph20": round(kv_bytes / ms20 / 1e6, 1)}), flush=True)
        except Exception as ex:  # the backend refuses this shape
            print(json.dumps({"peer": bname, "name": name, "shape": tag,
                              "error": str(ex).splitlines()[0][:160] if str(ex) else type(ex).__name__}), flush=True)
        torch.cuda.synchronize()
    del q, k, v
    torch.cuda.empty_cache()
