"""Timing helpers of the decode peers (sdpa_paged_peer.py): a call captured in a CUDA graph, one replay per
event pair (as xdnn's "GRAPH replay" figure), so Python's launch cost stays out of microsecond kernels."""
import torch


def graph_of(fn, n=1):
    """fn captured n times in one CUDA graph, after 3 warm-up calls outside the capture (workspace, autotuning)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(n):
            fn()
    return g


def time_graph(g, iters=20, warm=3):
    """Median ms of one replay, each between its own pair of events."""
    for _ in range(warm):
        g.replay()
    torch.cuda.synchronize()
    ts = []
    for _ in range(iters):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b))
    ts.sort()
    return ts[len(ts) // 2]
