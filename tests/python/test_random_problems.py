"""convguard.torch.conv / conv_transpose against torch.nn.functional on random problems: the
output and the x, w and bias gradients, element by element against the fp64 result with a
per-element bound (cg_testing.tolerance). Groups and depthwise, stride, dilation, padding as an
int, a tuple, 'same', 'valid' and (start, end) pairs, channels_last, f32/f16/bf16, 1D/2D/3D,
transposed with output_padding, odd sizes (17, 33). The seed is printed with every failure."""

import os
import random
import unittest

import torch
import torch.nn.functional as F

import convguard.torch as cgt
from cg_testing import DEVICE, FreshDatabase, assert_close

COUNT = int(os.environ.get("CONVGUARD_TORCH_RANDOM_COUNT", "320"))
SEED = int(os.environ.get("CONVGUARD_TORCH_SEED", "20261124"))


def draw(rng):
    """One random problem as keyword arguments (sizes kept small: the test is about coverage)."""
    n = rng.choices([1, 2, 3], weights=[2, 6, 2])[0]
    transposed = rng.random() < 0.2
    g = rng.choice([1, 1, 1, 2, 3])
    depthwise = not transposed and rng.random() < 0.15
    cpg = 1 if depthwise else rng.randint(1, 5)
    kpg = 1 if depthwise else rng.randint(1, 5)
    if depthwise:
        g = rng.randint(2, 8)
    sizes = [1, 2, 3, 5, 7, 8, 9, 17, 33] if n < 3 else [1, 2, 3, 5, 7]
    spatial = [rng.choice(sizes) for _ in range(n)]
    kernel = [rng.randint(1, 5 if n < 3 else 3) for _ in range(n)]
    stride = [rng.randint(1, 3) for _ in range(n)]
    dilation = [rng.choice([1, 1, 2]) for _ in range(n)]
    kind = rng.choice(["int", "tuple", "pairs", "same", "valid"]) if not transposed else "tuple"
    if kind == "same":
        stride = [1] * n
        padding = "same"
    elif kind == "valid":
        padding = "valid"
    elif kind == "int":
        padding = rng.randint(0, 2)
    elif kind == "tuple":
        padding = tuple(rng.randint(0, 2) for _ in range(n))
    else:
        padding = tuple((rng.randint(0, 2), rng.randint(0, 2)) for _ in range(n))
    output_padding = [rng.randint(0, max(s, d) - 1) for s, d in zip(stride, dilation)]
    return dict(n=n, transposed=transposed, batch=rng.randint(1, 3), g=g, cpg=cpg, kpg=kpg,
                spatial=spatial, kernel=kernel, stride=stride, dilation=dilation,
                padding=padding, output_padding=output_padding,
                dtype=rng.choices([torch.float32, torch.bfloat16, torch.float16],
                                  weights=[6, 2, 2])[0],
                channels_last=n > 1 and rng.random() < 0.35, bias=rng.random() < 0.6)


def pads(padding, kernel, dilation, stride, n):
    from convguard.torch.functional import padding_of
    return padding_of(padding, kernel, dilation, stride, n)


def reference_conv(x, w, b, q):
    """torch's convolution in fp64 (asymmetric padding as an explicit F.pad)."""
    n = q["n"]
    if q["transposed"]:
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[n - 1]
        return fn(x, w, b, q["stride"], list(q["padding"]), q["output_padding"], q["g"],
                  q["dilation"])
    begin, end = pads(q["padding"], w.shape[2:], q["dilation"], q["stride"], n)
    flat = []
    for bb, ee in zip(reversed(begin), reversed(end)):
        flat += [bb, ee]
    fn = (F.conv1d, F.conv2d, F.conv3d)[n - 1]
    return fn(F.pad(x, flat), w, b, q["stride"], 0, q["dilation"], q["g"])


def make(q, gen):
    """Random tensors for q, or None when the output would be empty."""
    n, g = q["n"], q["g"]
    c, k = g * q["cpg"], g * q["kpg"]
    if q["transposed"]:
        w_shape = [c, q["kpg"]] + q["kernel"]
    else:
        w_shape = [k, q["cpg"]] + q["kernel"]
    x = torch.randn([q["batch"], c] + q["spatial"], generator=gen, dtype=torch.float64)
    w = torch.randn(w_shape, generator=gen, dtype=torch.float64)
    b = torch.randn([k], generator=gen, dtype=torch.float64) if q["bias"] else None
    try:
        y = reference_conv(x, w, b, q)
    except RuntimeError:
        return None  # PyTorch refuses it too (output empty, padding larger than the input, ...)
    if y.numel() == 0:
        return None
    return x, w, b


def run_one(test, q, made, gen, tag):
    x64, w64, b64 = made
    dt = q["dtype"]
    mf = [None, None, torch.channels_last, torch.channels_last_3d][q["n"]]
    x = x64.to(dt).to(DEVICE)
    if q["channels_last"]:
        x = x.contiguous(memory_format=mf)
    x.requires_grad_(True)
    w = w64.to(dt).to(DEVICE).requires_grad_(True)
    b = b64.to(dt).to(DEVICE).requires_grad_(True) if b64 is not None else None
    if q["transposed"]:
        y = cgt.conv_transpose(x, w, b, q["stride"], q["padding"], q["output_padding"], q["g"],
                               q["dilation"], layer=tag)
    else:
        y = cgt.conv(x, w, b, q["stride"], q["padding"], q["dilation"], q["g"], layer=tag)
    if q["channels_last"] and not x.is_contiguous():  # (C = 1 or 1x1 images: both formats)
        test.assertTrue(y.is_contiguous(memory_format=mf), tag + ": output not channels_last")
    dy = torch.randn(y.shape, generator=gen, dtype=torch.float64).to(dt)
    grads = torch.autograd.grad(y, [t for t in (x, w, b) if t is not None], dy.to(DEVICE))
    grads = [t.cpu() for t in grads]
    y = y.cpu()
    # fp64 results and magnitudes (the same convolution of |x|, |w|, |b| and |dy|).
    xe = x.detach().cpu().double().requires_grad_(True)
    we = w.detach().cpu().double().requires_grad_(True)
    be = b.detach().cpu().double().requires_grad_(True) if b is not None else None
    ye = reference_conv(xe, we, be, q)
    exact = torch.autograd.grad(ye, [t for t in (xe, we, be) if t is not None], dy.double())
    xa, wa = xe.detach().abs().requires_grad_(True), we.detach().abs().requires_grad_(True)
    ba = be.detach().abs().requires_grad_(True) if be is not None else None
    ya = reference_conv(xa, wa, ba, q)
    mags = torch.autograd.grad(ya, [t for t in (xa, wa, ba) if t is not None], dy.double().abs())
    taps = 1
    for kk in q["kernel"]:
        taps *= kk
    spatial_out = ye[0, 0].numel()
    lengths = [q["cpg"] * taps, q["kpg"] * taps * 4, q["batch"] * spatial_out * 4,
               q["batch"] * spatial_out]
    if q["transposed"]:
        lengths = [lengths[1], lengths[0], lengths[2], lengths[3]]
    assert_close(test, y.detach(), ye.detach(), ya.detach(), lengths[0], tag + " y")
    for got, ex, mag, length, name in zip(grads, exact, mags, lengths[1:], ("dx", "dw", "db")):
        assert_close(test, got, ex, mag, length, tag + " " + name)


class RandomProblems(FreshDatabase):
    def test_random_problems_match_pytorch(self):
        rng = random.Random(SEED)
        gen = torch.Generator().manual_seed(SEED)
        ran, kinds = 0, {}
        i = 0
        while ran < COUNT:
            q = draw(rng)
            tag = "problem %d (CONVGUARD_TORCH_SEED=%d): %r" % (i, SEED, q)
            i += 1
            made = make(q, gen)
            if made is None:
                continue
            ran += 1
            padding = q["padding"] if isinstance(q["padding"], str) else type(q["padding"]).__name__
            for key, value in [(k, str(q[k])) for k in ("n", "transposed", "dtype",
                                                        "channels_last")] + [("padding", padding)]:
                kinds[(key, value)] = kinds.get((key, value), 0) + 1
            with self.subTest(i=i):
                run_one(self, q, made, gen, tag)
        print("\n%d problems run (%d drawn); by kind: %s" % (ran, i, sorted(kinds.items())))
        # Every kind the docstring promises was drawn.
        for need in [("n", "1"), ("n", "3"), ("transposed", "True"), ("dtype", "torch.float16"),
                     ("dtype", "torch.bfloat16"), ("channels_last", "True"),
                     ("padding", "same"), ("padding", "tuple")]:
            self.assertGreater(kinds.get(need, 0), 3, need)


if __name__ == "__main__":
    unittest.main()
