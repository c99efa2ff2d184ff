"""Every convolution of a converted model, checked layer by layer against fp64 on the tensors the
model actually produced: for each conv layer the input x, weight w and incoming gradient dy are
captured in one forward+backward pass, then y, dx and dw from convguard's primitives (on the
model's device) are compared with torch.nn.functional in fp64 on the CPU. Prints one line per
(layer, direction) with the norm-relative error and the largest element error over its bound,
and exits 1 if any is outside. A diagnosis tool (and what the GPU run uses to find which layer a
model-level difference comes from).

    python3 check_model_layers.py mobilenet_v2 --device cuda --channels-last --size 48
"""

import argparse
import copy
import sys

import torch
import torch.nn.functional as F
import torchvision

import convguard.torch as cgt
from cg_testing import tolerance


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--channels-last", action="store_true")
    ap.add_argument("--size", type=int, default=48)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--policy", default="first-verified")
    ap.add_argument("--db", default="")
    a = ap.parse_args()
    torch.backends.cudnn.allow_tf32 = False
    cgt.set_options(cgt.Options(policy=a.policy, db=a.db))
    torch.manual_seed(0)
    model = getattr(torchvision.models, a.model)(num_classes=10).eval().to(a.device)
    x = torch.randn(a.batch, 3, a.size, a.size, device=a.device)
    if a.channels_last:
        model = model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    cgt.convert(model)
    seen = {}

    def fwd_hook(m, inputs, _out):
        seen.setdefault(m._convguard_layer, {})["x"] = inputs[0].detach()

    def bwd_hook(m, _gin, gout):
        seen[m._convguard_layer]["dy"] = gout[0].detach()

    for m in model.modules():
        if isinstance(m, cgt.Conv2d):
            m.register_forward_hook(fwd_hook)
            m.register_full_backward_hook(bwd_hook)
    model(x.requires_grad_(True)).sum().backward()
    bad = 0
    for name, m in model.named_modules():
        if not isinstance(m, cgt.Conv2d) or name not in seen:
            continue
        t = seen[name]
        xx, dy, w = t["x"], t["dy"], m.weight.detach()
        geo = m._convguard_geometry()
        stride, begin, end, dil = geo
        got = {
            "fwd": cgt.ops.conv_forward(xx, w, stride, begin, end, dil, m.groups, name + "#f"),
            "bwd_data": cgt.ops.conv_backward_data(dy, w, list(xx.shape),
                                                   not xx.is_contiguous(), stride, begin, end,
                                                   dil, m.groups, name + "#d"),
            "bwd_weights": cgt.ops.conv_backward_weights(xx, dy, list(w.shape),
                                                         not w.is_contiguous(), stride, begin,
                                                         end, dil, m.groups, name + "#w"),
        }
        x64 = xx.cpu().double().requires_grad_(True)
        w64 = w.cpu().double().requires_grad_(True)
        y64 = F.conv2d(x64, w64, None, stride, begin, dil, m.groups)
        dx64, dw64 = torch.autograd.grad(y64, (x64, w64), dy.cpu().double())
        xa, wa = x64.detach().abs().requires_grad_(True), w64.detach().abs().requires_grad_(True)
        ya = F.conv2d(xa, wa, None, stride, begin, dil, m.groups)
        dxa, dwa = torch.autograd.grad(ya, (xa, wa), dy.cpu().double().abs())
        exact = {"fwd": (y64.detach(), ya.detach()), "bwd_data": (dx64, dxa),
                 "bwd_weights": (dw64, dwa)}
        for d, g in got.items():
            e, mag = exact[d]
            g = g.cpu().double()
            rel = float((g - e).norm() / (e.norm() + 1e-30))
            over = float(((g - e).abs() / tolerance(torch.float32, mag, 1 << 20)).max())
            rows = cgt.ops.report(name + {"fwd": "#f", "bwd_data": "#d", "bwd_weights": "#w"}[d])
            solver = rows[0].split("\t")[2] if rows else "?"
            flag = "BAD" if over > 1 else "ok"
            bad += flag == "BAD"
            print("%-4s %-24s %-11s rel %.2e  max err/bound %.2e  %s  %s"
                  % (flag, name, d, rel, over, solver, rows[0].split("\t")[1] if rows else ""))
    print("%d (layer, direction) outside the bound" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
