#!/usr/bin/env python3
"""Write graphs/resnet50_train_step.dnn: one ResNet-50 training step (forward,
backward, SGD update), bf16, NHWC.

The bottleneck block, its backward and the conv+batchnorm pieces are written once
as fragments in graphs/lib/resnet.dnn.  The language has fragments but no loops,
and fragments cannot declare weights, so the 53 conv layers' weights, the 16
block calls forward and backward, and the output list are generated here.
tests/bats/networks.bats checks that the committed graph is this script's output.

usage: graphs/gen/resnet50.py > graphs/resnet50_train_step.dnn
"""
import sys

# (blocks, bottleneck width as a multiple of WID, stride of the first block): ResNet-50.
STAGES = [(3, 1, 1), (4, 2, 2), (6, 4, 2), (3, 8, 2)]
EXPANSION = 4


def ch(mult):
    """A channel count as a .dnn expression in the width param WID."""
    return "WID" if mult == 1 else f"{mult} * WID"


def wrap(head, items, indent, width=100):
    """head + comma-separated items, wrapped at `width` columns."""
    lines, cur = [], head
    for i, it in enumerate(items):
        piece = it + (", " if i + 1 < len(items) else "")
        if len(cur) + len(piece.rstrip()) > width:
            lines.append(cur.rstrip())
            cur = indent
        cur += piece
    lines.append(cur.rstrip())
    return "\n".join(lines)


class Gen:
    def __init__(self):
        self.decls, self.fwd, self.bwd, self.outs = [], [], [], []

    def conv_weights(self, name, k, c, r, gamma="1.0"):
        """Declare conv `name` [k, c, r, r] (channel multiples of WID, c may be 3)
        and its batchnorm's scale (initially `gamma`), shift and running statistics."""
        cexpr = c if isinstance(c, str) else ch(c)
        # Kaiming normal, fan_out mode (torchvision's ResNet init): std = sqrt(2 / (k r r)).
        fan_out = ch(k) if r == 1 else f"{ch(k)} * {r * r}"
        self.decls.append(f"  weight {name}_w: bf16[{ch(k)}, {cexpr}, {r}, {r}] @nhwc"
                          f" = randn(std=sqrt(2.0 / ({fan_out})));")
        self.decls.append(f"  weight {name}_g: f32[{ch(k)}] = fill({gamma});")
        self.decls.append(f"  weight {name}_b: f32[{ch(k)}] = fill(0.0);")
        self.decls.append(f"  weight {name}_rm: f32[{ch(k)}] = fill(0.0);")
        self.decls.append(f"  weight {name}_rv: f32[{ch(k)}] = fill(1.0);")
        self.outs += [f"{name}_wn", f"{name}_gn", f"{name}_bn", f"{name}_rmn", f"{name}_rvn"]

    def block(self, p, cin, width, stride, proj):
        """Forward and backward calls of bottleneck `p` (input channels cin x WID)."""
        cout = width * EXPANSION
        convs = [("c1", width, cin, 1), ("c2", width, width, 3), ("c3", cout, width, 1)]
        if proj:
            convs.append(("cp", cout, cin, 1))
        for n, k, c, r in convs:
            # the residual branch's last batchnorm starts small (GAMMA3, see the header)
            self.conv_weights(f"{p}_{n}", k, c, r, "GAMMA3" if n == "c3" else "1.0")
        wts = [f"{p}_{n}_{s}" for n, *_ in convs for s in ("w", "g", "b", "rm", "rv")]
        saved = ["a1", "a2", "c1", "m1", "v1", "c2", "m2", "v2", "c3", "m3", "v3"]
        if proj:
            saved += ["cp", "mp", "vp"]
        saved = [f"{p}_{s}" for s in saved]
        running = [f"{p}_{n}_{s}" for n, *_ in convs for s in ("rmn", "rvn")]
        frag = "bottleneck_proj" if proj else "bottleneck"
        args = [self.x] + wts + ([f"stride={stride}"] if proj else [])
        self.fwd.append(wrap("  ", [p + "_y"] + saved + running, "    ")
                        + " =\n" + wrap(f"      {frag}(", args, "        ") + ");")
        # backward, emitted in reverse order later
        bwd_in = [f"d{p}_y", f"{p}_y", self.x] + saved + [
            f"{p}_{n}_{s}" for n, *_ in convs for s in ("w", "g", "b")] + ["lr=lr"]
        if proj:
            bwd_in.append(f"stride={stride}")
        bwd_out = [f"d{self.x}"] + [f"{p}_{n}_{s}n" for n, *_ in convs for s in ("w", "g", "b")]
        self.bwd.append(wrap("  ", bwd_out, "    ") + " =\n"
                        + wrap(f"      {frag}_bwd(", bwd_in, "        ") + ");")
        self.x = p + "_y"

    def emit(self, out):
        self.x = "pool"
        self.conv_weights("stem", 1, "3", 7)
        cin = 1
        for si, (nblocks, width, stride) in enumerate(STAGES):
            for bi in range(nblocks):
                self.block(f"s{si + 1}b{bi}", cin, width, stride if bi == 0 else 1, bi == 0)
                cin = width * EXPANSION
        feat = ch(cin)
        w = out.write
        w(__HEADER__)
        w("\n".join(self.decls) + "\n")
        w(f"  weight fc_w: bf16[NCLS, {feat}] = uniform(lo=-1.0 / sqrt({feat}), hi=1.0 / sqrt({feat}));\n")
        w(f"  weight fc_b: bf16[NCLS] = uniform(lo=-1.0 / sqrt({feat}), hi=1.0 / sqrt({feat}));\n")
        w("\n  # ---- forward\n")
        w("  stem_z, stem_c, stem_m, stem_v, stem_rmn, stem_rvn =\n"
          "      conv_bn(x, stem_w, stem_g, stem_b, stem_rm, stem_rv, stride=2, pad=3);\n")
        w("  stem_a: @nhwc = relu(stem_z);\n")
        w("  pool: @nhwc = maxpool(stem_a, window=3, stride=2, pad=1);\n")
        w("\n".join(self.fwd) + "\n")
        last = self.x
        w(f"  gap: @nhwc = avgpool({last}, window=[dim({last}, 2), dim({last}, 3)]);\n")
        w(f"  feat = reshape(gap, dims=[N, {feat}]);\n")
        w("  logits = matmul(feat, fc_w, trans_b=true) + fc_b;\n")
        w(__LOSS__)
        w("\n  # ---- backward and SGD step, last layer first\n")
        w("  fc_wn = fc_w - lr * matmul(dlogits, feat, trans_a=true);\n")
        w("  fc_bn = fc_b - lr * reduce(dlogits, axes=[0], keepdims=false);\n")
        w(f"  dgap = reshape(matmul(dlogits, fc_w), dims=[N, {feat}, 1, 1]);\n")
        w(f"  d{last}: @nhwc = avgpool_bwd(dgap, {last}, window=[dim({last}, 2), dim({last}, 3)]);\n")
        w("\n".join(reversed(self.bwd)) + "\n")
        w("  dstem_a: @nhwc = maxpool_bwd(dpool, stem_a, window=3, stride=2, pad=1);\n")
        w("  dstem_z: @nhwc = relu_bwd(dstem_a, stem_a);\n")
        w("  _, stem_wn, stem_gn, stem_bn = conv_bn_bwd_w(dstem_z, x, stem_c, stem_w, stem_g, stem_b,\n"
          "                                             stem_m, stem_v, lr=lr, stride=2, pad=3);\n")
        w("\n" + wrap("  output ", ["loss"] + self.outs + ["fc_wn", "fc_bn"], "         ") + ";\n}\n")


__HEADER__ = """\
dnn 1;
# GENERATED by graphs/gen/resnet50.py from the fragments of lib/resnet.dnn: edit those, then
#   graphs/gen/resnet50.py > graphs/resnet50_train_step.dnn
#
# One training step of ResNet-50 (v1.5, torchvision layout), bf16 activations and conv
# weights, NHWC, f32 batchnorm parameters and statistics: forward, softmax cross-entropy
# loss, backward, and plain SGD (w - lr * grad) on every weight; the batchnorm running
# statistics are updated as in training.  Outputs: the loss and every updated weight.
#
# The defaults are a small network for the CPU reference; the real one is the sweep:
#   xdnn bench graphs/resnet50_train_step.dnn            (N = 32 and 256, 224x224, 1000 classes)
#   xdnn run graphs/resnet50_train_step.dnn --set N=32 --set HW=224 --set WID=64 --set NCLS=1000
include "lib/resnet.dnn";

param N = 8 sweep [32, 256];    # batch
param HW = 64 sweep [224];      # image height and width (the last stage is HW/32 square)
param WID = 8 sweep [64];       # width of the first stage's bottleneck (64 in ResNet-50)
param NCLS = 10 sweep [1000];   # classes
param lr = 0.1;
# Initial scale of each residual branch's last batchnorm.  Goyal et al. (2017) start it at 0;
# 0.1 keeps every weight's gradient non-zero.  At 1.0 the gradient of the early layers at
# initialization amplifies rounding (BN networks' gradient explosion at init): the CPU
# reference with f32 or with bf16 intermediates gives stem gradients that differ by 100%,
# so no two correct implementations could be compared on it.
param GAMMA3 = 0.1;

graph resnet50_train_step(io=bf16, compute=f32, intermediate=bf16, seed=50) {
  input x: bf16[N, 3, HW, HW] @nhwc = randn();
  input label: f32[N, 1] = uniform(lo=0, hi=NCLS);   # class index = floor(label)
  input cls: f32[1, NCLS] = arange();                 # 0, 1, ..., NCLS-1 to build the one-hot
"""

__LOSS__ = """\
  # mean softmax cross-entropy over the batch
  onehot = cast(eq(floor(label), cls), f32);
  logp: f32 = log_softmax(logits);
  nll: f32 = onehot * logp;
  nll_sum: f32 = reduce(nll, op="sum", keepdims=false);
  loss: f32 = (-1.0 / N) * nll_sum;
  dlogits = log_softmax_bwd((-1.0 / N) * onehot, logp);   # = (softmax - onehot) / N
"""

if __name__ == "__main__":
    Gen().emit(sys.stdout)
