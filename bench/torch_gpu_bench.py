"""convguard.torch against plain PyTorch on a GPU, side by side in one process (docs/pytorch.md,
"On the GPU"): host overhead per convolution call, a ResNet-50 training step (forward+backward,
bf16, channels_last) converted vs not, and the first call of an unknown problem (the probe)
against PyTorch's benchmark-mode first call. PyTorch runs with cudnn.benchmark=True.

    PYTHONPATH=devtorch/python python3 bench/torch_gpu_bench.py --parts overhead,first,resnet50
"""

import argparse
import copy
import os
import statistics
import tempfile
import time

import torch
import torch.nn.functional as F

import convguard.torch as cgt

DEV = "cuda"


def per_call_us(fn, calls):
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / calls * 1e6


def overhead(rounds=7, calls=3000):
    """A small convolution whose kernel takes a few microseconds, so a loop of calls is bound by
    host time: the difference per call is what convguard adds."""
    print("== host time per call (1x16x8x8 -> 16, 3x3, bf16, channels_last; %d calls, best of %d "
          "rounds, interleaved)" % (calls, rounds))
    x = torch.randn(1, 16, 8, 8, device=DEV, dtype=torch.bfloat16).contiguous(
        memory_format=torch.channels_last)
    ref = torch.nn.Conv2d(16, 16, 3, padding=1).to(DEV, torch.bfloat16).to(
        memory_format=torch.channels_last)
    mod = copy.deepcopy(ref)
    cgt.convert(mod)
    mod._convguard_layer = "overhead"
    w, b = ref.weight.detach(), ref.bias.detach()
    cases = {
        "F.conv2d": lambda: F.conv2d(x, w, b, 1, 1),
        "torch.nn.Conv2d": lambda: ref(x),
        "convguard module": lambda: mod(x),
        "torch.ops.convguard.conv": lambda: cgt.ops.conv(x, w, b, [1, 1], [1, 1], [1, 1],
                                                         [1, 1], 1, "op"),
        "torch.ops.convguard.conv_forward": lambda: cgt.ops.conv_forward(
            x, w, [1, 1], [1, 1], [1, 1], [1, 1], 1, "op"),
    }
    best = {k: float("inf") for k in cases}
    with torch.no_grad():
        for _ in range(rounds):
            for k, fn in cases.items():
                best[k] = min(best[k], per_call_us(fn, calls))
    for k, v in best.items():
        print("  %-34s %7.2f us/call  (%+.2f us vs F.conv2d)" % (k, v, v - best["F.conv2d"]))
    # Training's forward: the weights require gradients, so both sides build an autograd node.
    wg, bg = w.clone().requires_grad_(True), b.clone().requires_grad_(True)
    ref.weight.requires_grad_(True)
    graph = {"F.conv2d (grad)": lambda: F.conv2d(x, wg, bg, 1, 1),
             "torch.nn.Conv2d (grad)": lambda: ref(x),
             "convguard module (grad)": lambda: mod(x)}
    best = {k: float("inf") for k in graph}
    for _ in range(rounds):
        for k, fn in graph.items():
            best[k] = min(best[k], per_call_us(fn, calls))
    for k, v in best.items():
        print("  %-34s %7.2f us/call  (%+.2f us vs F.conv2d)" % (k, v,
                                                                  v - best["F.conv2d (grad)"]))
    print("  solver: %s" % cgt.report(mod).rows[0].solver)


def first_call():
    print("== first call of a problem never seen (ResNet-50-like layers, batch 32, bf16, "
          "channels_last): convguard probes it in the sandbox (policy known); PyTorch "
          "benchmark mode tries cuDNN's algorithms in-process")
    shapes = [(64, 56, 64, 3, 1), (256, 56, 64, 1, 1), (128, 28, 128, 3, 1)]
    for i, (c, h, k, r, s) in enumerate(shapes):
        # Each side sees its own fresh shape (batch 32 + i differs from any other run's).
        n = 32 + i
        x = torch.randn(n, c, h, h, device=DEV, dtype=torch.bfloat16).contiguous(
            memory_format=torch.channels_last)
        conv = torch.nn.Conv2d(c, k, r, s, r // 2, bias=False).to(DEV, torch.bfloat16).to(
            memory_format=torch.channels_last)
        mod = copy.deepcopy(conv)
        cgt.convert(mod)
        mod._convguard_layer = "first%d" % i
        with torch.no_grad():
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            conv(x)
            torch.cuda.synchronize()
            t_torch = time.perf_counter() - t0
            t0 = time.perf_counter()
            mod(x)
            torch.cuda.synchronize()
            t_cg = time.perf_counter() - t0
        row = cgt.report(mod).rows[0]
        print("  n%d c%d %dx%d k%d %dx%d: PyTorch first call %.3f s, convguard %.3f s -> %s (%s)"
              % (n, c, h, h, k, r, r, t_torch, t_cg, row.solver, row.why[:120]))


def resnet50(batch, steps, rounds):
    import torchvision
    print("== ResNet-50 training step (forward+backward), batch %d, bf16, channels_last" % batch)
    torch.manual_seed(0)
    ref = torchvision.models.resnet50().to(DEV, torch.bfloat16).to(
        memory_format=torch.channels_last)
    mod = copy.deepcopy(ref)
    x = torch.randn(batch, 3, 224, 224, device=DEV, dtype=torch.bfloat16).contiguous(
        memory_format=torch.channels_last)
    labels = torch.randint(0, 1000, (batch,), device=DEV)
    t0 = time.perf_counter()
    report = cgt.convert(mod, example_inputs=(x,), training=True)
    torch.cuda.synchronize()
    print("  planning every layer (probes included): %.1f s; %d (layer, direction) rows, "
          "%d without a verified solver" % (time.perf_counter() - t0, len(report.rows),
                                             len(report.failures)))
    chosen = {}
    for r in report.rows:
        family = r.solver.split(":")[0] + ":" + (r.solver.split(":")[2] if r.solver.startswith(
            "cudnn") else r.solver.split(":")[1])
        chosen[family] = chosen.get(family, 0) + 1
    print("  solvers chosen: %s" % sorted(chosen.items(), key=lambda kv: -kv[1]))

    def step(m):
        m.zero_grad(set_to_none=True)
        F.cross_entropy(m(x), labels).backward()

    def timed(m):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(steps):
            step(m)
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) / steps

    for m in (ref, mod, ref, mod):
        step(m)
    times = {"pytorch": [], "convguard": []}
    for _ in range(rounds):
        times["pytorch"].append(timed(ref))
        times["convguard"].append(timed(mod))
    for k, v in times.items():
        print("  %-10s %.2f ms/step (best of %d rounds of %d steps; median %.2f)"
              % (k, min(v), rounds, steps, statistics.median(v)))
    print("  convguard speed relative to PyTorch: %.3fx (best), %.3fx (median)"
          % (min(times["pytorch"]) / min(times["convguard"]),
             statistics.median(times["pytorch"]) / statistics.median(times["convguard"])))
    print(report)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parts", default="overhead,first,resnet50")
    ap.add_argument("--policy", default="known")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    db = os.environ.get("CONVGUARD_DB") or tempfile.mktemp(suffix=".db")
    cgt.set_options(cgt.Options(policy=a.policy, db=db))
    print("torch %s, cuDNN %s, %s; convguard policy %s, database %s; CONVGUARD_PLUGINS=%s "
          "CONVGUARD_SKIP_SOLVERS=%s" % (torch.__version__, torch.backends.cudnn.version(),
                                        torch.cuda.get_device_name(), a.policy, db,
                                        os.environ.get("CONVGUARD_PLUGINS", ""),
                                        os.environ.get("CONVGUARD_SKIP_SOLVERS", "")))
    parts = a.parts.split(",")
    if "overhead" in parts:
        overhead()
    if "first" in parts:
        first_call()
    if "resnet50" in parts:
        resnet50(a.batch, a.steps, a.rounds)


if __name__ == "__main__":
    main()
