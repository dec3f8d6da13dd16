"""mem_peer.py — the PyTorch peer of issue 12 item 1's consolidated memory-bound table (session 12):
the rows of `difftest_norm --bench bench/s12/` (and the s10 / rn50 / maxpool_bwd / quantize rows it quotes),
each timed in PyTorch eager, in torch.compile (dynamic=False) and as a copy_ of the same bytes (a uint8
copy of half the row's bytes, read + written), in one process after the xdnn side of the same device call.

    python3 mem_peer.py [--compile-budget-s S] [--filter SUBSTR[,SUBSTR...]]

Prints one JSON line per row: id (the difftest id; "#k" for the k-th partition of a two-partition graph),
bytes (inputs + outputs, as xdnn's partition counts them), eager_ms, compile_ms (absent past the budget or on
an error), copy_ms.  Timing: CUDA events, 10 warm-up runs, median of 50 (norm_torch.bench)."""
import argparse, json, time
import torch
import torch.nn.functional as F
from norm_torch import bench  # CUDA events, warm-up, median (copied beside this file for a device call)

dev = "cuda"
bf, f32 = torch.bfloat16, torch.float32


def nb(*ts):
    return sum(t.numel() * t.element_size() for t in ts)


def rnd(*shape, dtype=bf, cl=False):
    t = torch.randn(*shape, device=dev, dtype=f32).to(dtype)
    return t.to(memory_format=torch.channels_last) if cl else t


# ---- the rows: id -> builder returning (fn, args, bytes); fn(*args) is what eager and compile time
def pw(op):
    def b():
        x = rnd(8192, 8192)
        return op, (x,), 2 * nb(x)
    return b


def add_bcast():
    x, v = rnd(8192, 8192), rnd(8192)
    return (lambda x, v: x + v), (x, v), 2 * nb(x) + nb(v)


def add2():
    x, z = rnd(8192, 8192), rnd(8192, 8192)
    return (lambda x, z: x + z), (x, z), 3 * nb(x)


def cast():
    x = rnd(8192, 8192)
    return (lambda x: x.float()), (x,), 3 * nb(x)


def red(op, dt, axis):
    def b():
        x = rnd(8192, 8192, dtype=dt)
        f = (lambda x: x.sum(axis)) if op == "sum" else (lambda x: x.amax(axis))
        return f, (x,), nb(x) + 8192 * x.element_size()
    return b


def softmax_rows(log, bwd, R=8192, D=8192, dt=bf):
    def b():
        x = rnd(R, D, dtype=dt)
        if not bwd:
            return ((lambda x: torch.log_softmax(x, -1)) if log else (lambda x: torch.softmax(x, -1))), (x,), 2 * nb(x)
        y = (torch.log_softmax if log else torch.softmax)(x.float(), -1).to(dt)
        dy = rnd(R, D, dtype=dt)
        if log:
            f = lambda dy, y: torch.ops.aten._log_softmax_backward_data(dy, y, -1, dt)
        else:
            f = lambda dy, y: torch.ops.aten._softmax_backward_data(dy, y, -1, dt)
        return f, (dy, y), 3 * nb(x)
    return b


def lnrms(kind, bwd, D=8192, res=False):  # res: the rmsnorm backward's dx + a residual (the Llama block)
    def b():
        x, w, bb, dy = rnd(8192, D), rnd(D), rnd(D), rnd(8192, D)
        if kind == "layernorm":
            if not bwd:
                return (lambda x, w, bb: F.layer_norm(x, (D,), w, bb)), (x, w, bb), 2 * nb(x)
            _, mean, rstd = torch.ops.aten.native_layer_norm(x, [D], w, bb, 1e-5)
            f = lambda dy, x, mean, rstd, w, bb: torch.ops.aten.native_layer_norm_backward(
                dy, x, [D], mean, rstd, w, bb, [True, True, True])
            return f, (dy, x, mean, rstd, w, bb), 3 * nb(x)
        if not bwd:
            return (lambda x, w: F.rms_norm(x, (D,), w, 1e-6)), (x, w), 2 * nb(x)
        rstd = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6)

        def rms_b(dy, x, rstd, w):  # dx and dscale, f32 math as aten's
            xh = x.float() * rstd; g = dy.float() * w.float()
            dx = rstd * (g - xh * (g * xh).mean(-1, keepdim=True))
            return dx.to(x.dtype), (dy.float() * xh).sum(0).to(w.dtype)
        if res:
            def rms_b_res(dy, x, rstd, w, r):
                dx, ds = rms_b(dy, x, rstd, w)
                return dx + r, ds
            return rms_b_res, (dy, x, rstd, w, rnd(8192, D)), 4 * nb(x)
        return rms_b, (dy, x, rstd, w), 3 * nb(x)
    return b


def bn(bwd):
    def b():
        x = rnd(256, 256, 56, 56, cl=True)
        w = torch.rand(256, device=dev) + 0.5; bb = torch.zeros(256, device=dev)
        rm = torch.zeros(256, device=dev); rv = torch.ones(256, device=dev)
        if not bwd:
            return (lambda x, w, bb, rm, rv: F.relu(F.batch_norm(x, rm, rv, w, bb, True))), (x, w, bb, rm, rv), 2 * nb(x)
        dy = rnd(256, 256, 56, 56, cl=True)
        _, sm, si = torch.ops.aten.native_batch_norm(x, w, bb, rm, rv, True, 0.1, 1e-5)
        f = lambda dy, x, w, rm, rv, sm, si: torch.ops.aten.native_batch_norm_backward(
            dy, x, w, rm, rv, sm, si, True, 1e-5, [True, True, True])
        return f, (dy, x, w, rm, rv, sm, si), 3 * nb(x)
    return b


def gn(bwd):
    def b():
        x = rnd(64, 256, 56, 56); w = torch.rand(256, device=dev) + 0.5; bb = torch.zeros(256, device=dev)
        if not bwd:  # the weights cast once here: a cast inside the timed call would time two more kernels
            return (lambda x, w, bb: F.group_norm(x, 32, w, bb)), (x, w.to(bf), bb.to(bf)), 2 * nb(x)
        dy = rnd(64, 256, 56, 56)
        _, mean, rstd = torch.ops.aten.native_group_norm(x, w.to(bf), bb.to(bf), 64, 256, 56 * 56, 32, 1e-5)
        wb = w.to(bf)
        f = lambda dy, x, mean, rstd, wb: torch.ops.aten.native_group_norm_backward(
            dy, x, mean, rstd, wb, 64, 256, 56 * 56, 32, [True, True, True])
        return f, (dy, x, mean, rstd, wb), 3 * nb(x)
    return b


def gn_silu(N, C, HW, cl=False):
    """Stable Diffusion's groupnorm + silu (session 12, gnorm): 32 groups, bf16 parameters as the model keeps them"""
    def b():
        x = rnd(N, C, HW, HW, cl=cl); w = (torch.rand(C, device=dev) + 0.5).to(bf); bb = torch.zeros(C, device=dev, dtype=bf)
        return (lambda x, w, bb: F.silu(F.group_norm(x, 32, w, bb))), (x, w, bb), 2 * nb(x)
    return b


def pool(kind, bwd, C=256, HW=56):
    def b():
        x = rnd(64, C, HW, HW, cl=True)
        if kind == "max":
            if not bwd:
                return (lambda x: F.max_pool2d(x, 3, 2, 1)), (x,), nb(x) * 5 // 4
            y, idx = torch.ops.aten.max_pool2d_with_indices(x, [3, 3], [2, 2], [1, 1])
            dy = torch.randn_like(y)
            f = lambda dy, x, idx: torch.ops.aten.max_pool2d_with_indices_backward(
                dy, x, [3, 3], [2, 2], [1, 1], [1, 1], False, idx)
            return f, (dy, x, idx), nb(x) * 9 // 4  # x, dy, dx (xdnn reads x, not indices)
        if not bwd:
            return (lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False)), (x,), nb(x) * 5 // 4
        dy = torch.randn_like(F.avg_pool2d(x, 3, 2, 1))
        f = lambda dy, x: torch.ops.aten.avg_pool2d_backward(dy, x, [3, 3], [2, 2], [1, 1], False, False, None)
        return f, (dy, x), nb(x) * 9 // 4
    return b


def perm(shape, p, dt=bf):
    def b():
        x = rnd(*shape, dtype=dt)
        return (lambda x: x.permute(*p).contiguous()), (x,), 2 * nb(x)
    return b


def two(op, dt=bf):  # session 13: a backward of two full inputs (dy, x)
    def b():
        dy, x = rnd(8192, 8192, dtype=dt), rnd(8192, 8192, dtype=dt)
        return op, (dy, x), 3 * nb(x)
    return b


def convert(src, dst, then=None):  # session 13: a dtype conversion, optionally after an activation
    def b():
        x = rnd(8192, 8192, dtype=src)
        f = (lambda x: then(x).to(dst)) if then else (lambda x: x.to(dst))
        return f, (x,), nb(x) + x.numel() * torch.empty((), dtype=dst).element_size()
    return b


def split():
    x = rnd(8192, 8192)
    return (lambda x: [t.contiguous() for t in x.split(4096, 1)]), (x,), 2 * nb(x)


def concat():
    a, c = rnd(8192, 4096), rnd(8192, 4096)
    return (lambda a, c: torch.cat((a, c), 1)), (a, c), 4 * nb(a)


E4 = torch.float8_e4m3fn


def quant(kind):
    def b():
        x = rnd(8192, 8192)
        if kind == "tensor":
            s = torch.full((1,), 0.01, device=dev)
            return (lambda x, s: (x.float() / s).clamp(-448, 448).to(E4)), (x, s), nb(x) * 3 // 2
        if kind == "blk128":
            s = torch.full((64, 1, 64, 1), 0.01, device=dev)
            return (lambda x, s: (x.float().view(64, 128, 64, 128) / s).clamp(-448, 448).to(E4)), (x, s), nb(x) * 3 // 2
        s = torch.full((8192, 256, 1), 0.0078125, device=dev)  # e8m0 scales: powers of two (f32 here)
        if kind == "blk1x32":
            return (lambda x, s: (x.float().view(8192, 256, 32) / s).clamp(-448, 448).to(E4)), (x, s), nb(x) * 3 // 2
        q = x.to(E4)
        return (lambda q, s: (q.float().view(8192, 256, 32) * s).to(bf)), (q, s), nb(x) * 3 // 2
    return b


# in the order torch.compile takes them (the rows furthest from copy first)
ROWS = [
    ("bench/s12/maxpool/bf16/nhwc/64x256x56x56", pool("max", False)),
    ("bench/s12/maxpool/bf16/nhwc/64x64x112x112", pool("max", False, 64, 112)),
    ("bench/s12/maxpool_bwd/bf16/nhwc/64x256x56x56", pool("max", True)),
    ("bench/maxpool_bwd/bf16/nhwc/64x64x112x112", pool("max", True, 64, 112)),
    ("bench/s12/avgpool/bf16/nhwc/64x256x56x56", pool("avg", False)),
    ("bench/s12/avgpool_bwd/bf16/nhwc/64x256x56x56", pool("avg", True)),
    ("bench/avg16/avgpool/bf16/nhwc/64x64x112x112", pool("avg", False, 64, 112)),  # session 16: the stem shape
    ("bench/avg16/avgpool_bwd/bf16/nhwc/64x64x112x112", pool("avg", True, 64, 112)),
    ("bench/s12/permute/bf16/64x256x56x56->nhwc", perm((64, 256, 56, 56), (0, 2, 3, 1))),
    ("bench/s12/permute/bf16/64x56x56x256->nchw", perm((64, 56, 56, 256), (0, 3, 1, 2))),
    ("bench/s12/permute/f32/8192x8192->T", perm((8192, 8192), (1, 0), f32)),
    ("bench/s12/concat/bf16/2x[8192,4096]", concat),
    ("bench/quantize/bf16->e4m3/tensor/8192x8192", quant("tensor")),
    ("bench/quantize/bf16->e4m3/blk1x32-e8m0/8192x8192", quant("blk1x32")),
    ("bench/quantize/bf16->e4m3/blk128/8192x8192", quant("blk128")),
    ("bench/dequantize/e4m3->bf16/blk1x32-e8m0/8192x8192", quant("deq")),
    ("bench/s12/softmax/bf16/8192x8192", softmax_rows(False, False)),
    ("bench/s12/log_softmax/bf16/8192x8192", softmax_rows(True, False)),
    ("bench/s12/softmax_bwd/bf16/8192x8192", softmax_rows(False, True)),
    ("bench/s12/log_softmax_bwd/bf16/8192x8192", softmax_rows(True, True)),
    ("bench/s12/reduce/sum-last/f32/8192x8192", red("sum", f32, -1)),
    ("bench/s12/reduce/sum-first/f32/8192x8192", red("sum", f32, 0)),
    ("bench/s12/reduce/max-last/bf16/8192x8192", red("max", bf, -1)),
    ("bench/s12/reduce/max-first/bf16/8192x8192", red("max", bf, 0)),
    ("bench/rn50/bf16/256x256x56x56#0", bn(False)),
    ("bench/rn50/bf16/256x256x56x56#1", bn(True)),
    ("bench/s12/groupnorm/bf16/64x256x56x56", gn(False)),
    ("bench/s12/groupnorm_bwd/bf16/64x256x56x56", gn(True)),
    ("bench/s10/layernorm/bf16/8192x8192", lnrms("layernorm", False)),
    ("bench/s10/layernorm_bwd/bf16/8192x8192", lnrms("layernorm", True)),
    ("bench/s10/rmsnorm/bf16/8192x8192", lnrms("rmsnorm", False)),
    ("bench/s10/rmsnorm_bwd/bf16/8192x8192", lnrms("rmsnorm", True)),
    ("bench/s12/pw/relu/bf16/8192x8192", pw(F.relu)),
    ("bench/s12/pw/gelu/bf16/8192x8192", pw(F.gelu)),
    ("bench/s12/pw/silu/bf16/8192x8192", pw(F.silu)),
    ("bench/s12/pw/add-bcast/bf16/8192x8192", add_bcast),
    ("bench/s12/pw/add/bf16/8192x8192", add2),
    ("bench/s12/pw/cast/bf16->f32/8192x8192", cast),
    # session 12 (smbwd): a narrower softmax_bwd row, the widest f32 row of the warp rows
    ("bench/s12/softmax_bwd/bf16/32768x1024", softmax_rows(False, True, 32768, 1024)),
    ("bench/s12/log_softmax_bwd/f32/8192x4096", softmax_rows(True, True, 8192, 4096, f32)),
    ("bench/s12/groupnorm+silu/bf16/2x320x64x64", gn_silu(2, 320, 64)),
    ("bench/s12/groupnorm+silu/bf16/2x640x32x32", gn_silu(2, 640, 32)),
    ("bench/s12/groupnorm+silu/bf16/2x1280x16x16", gn_silu(2, 1280, 16)),
    ("bench/s12/groupnorm+silu/bf16/2x1280x8x8", gn_silu(2, 1280, 8)),
    ("bench/s12/groupnorm+silu/bf16/nhwc/2x320x64x64", gn_silu(2, 320, 64, cl=True)),
    # session 13 (pw): the siblings of silu, cast bf16->f32 and concat
    ("bench/s13/pw/sigmoid/bf16/8192x8192", pw(torch.sigmoid)),
    ("bench/s13/pw/silu_bwd/bf16/8192x8192", two(torch.ops.aten.silu_backward)),
    ("bench/s13/pw/silu->f32/bf16/8192x8192", convert(bf, f32, F.silu)),
    ("bench/s13/pw/cast/f16->f32/8192x8192", convert(torch.float16, f32)),
    ("bench/s13/pw/cast/f32->bf16/8192x8192", convert(f32, bf)),
    ("bench/s13/split/bf16/[8192,8192]->2x[8192,4096]", split),
    # session 15 (rmsb): the Llama block's rmsnorm backward width, with and without the residual add
    ("bench/rmsnorm_bwd/bf16/8192x4096", lnrms("rmsnorm", True, 4096)),
    ("bench/rmsnorm_bwd+residual/bf16/8192x4096", lnrms("rmsnorm", True, 4096, res=True)),
    ("bench/s10/layernorm_bwd/bf16/8192x4096", lnrms("layernorm", True, 4096)),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compile-budget-s", type=float, default=120.0, help="stop compiling rows past this")
    ap.add_argument("--compile-start", type=int, default=0, help="compile from this row on (a later call's rest)")
    ap.add_argument("--no-eager", action="store_true", help="compile pass only")
    ap.add_argument("--filter", default="", help="rows whose id holds this substring (or one of a,b,c)")
    a = ap.parse_args()
    print(json.dumps({"torch": torch.__version__, "device": torch.cuda.get_device_name()}), flush=True)
    big = torch.empty(1 << 30, dtype=torch.uint8, device=dev); big2 = torch.empty_like(big)
    ms = bench(lambda: big2.copy_(big))
    print(json.dumps({"id": "copy 1GiB", "bytes": 2 << 30, "eager_ms": round(ms, 4),
                      "gbs": round((2 << 30) / ms / 1e6, 1)}), flush=True)
    rows = [(k, rid, b) for k, (rid, b) in enumerate(ROWS) if any(f in rid for f in a.filter.split(","))]
    # pass 1: eager and a copy of the same bytes, every row; pass 2: torch.compile while the budget lasts
    for k, rid, build in ([] if a.no_eager else rows):
        row = {"id": rid, "row": k}
        try:
            fn, args, nbytes = build()
            row["bytes"] = nbytes
            row["eager_ms"] = round(bench(lambda: fn(*args)), 4)
            half = nbytes // 2
            row["copy_ms"] = round(bench(lambda: big2[:half].copy_(big[:half])), 4)
        except Exception as e:  # one row's failure is reported, the others still run
            row["error"] = str(e)[:200]
        print(json.dumps(row), flush=True)
        del build
        torch.cuda.empty_cache()
    t0 = time.time()
    for k, rid, build in rows:
        if k < a.compile_start:
            continue
        if time.time() - t0 > a.compile_budget_s:
            print(json.dumps({"compile_stopped_at_row": k}), flush=True)
            break
        row = {"id": rid, "row": k}
        try:
            fn, args, nbytes = build()
            cf = torch.compile(fn, dynamic=False)
            row["compile_ms"] = round(bench(lambda: cf(*args)), 4)
        except Exception as e:
            row["compile_error"] = str(e)[:200]
        print(json.dumps(row), flush=True)
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
