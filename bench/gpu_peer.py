"""An honest GPU peer: PyTorch's own convolution, timed under CUDA-graph replay, beside what
gpu_bench measured (its --json lines: every own solver and every cuDNN algorithm of the plugin on
the same problems). PyTorch runs with cudnn.benchmark=True (its algorithm search, warmed up before
capture), TF32 off except for the TF32 comparison, channels_last where the problem is NHWC.

Per problem it prints the fastest own solver, the plugin's best cuDNN engine (and how many did not
run), PyTorch's time, and the own solver's ratio to the *better* of the two peers. A problem where
the plugin's best is more than --slack times slower than PyTorch is flagged: the plugin ran no
competitive engine there, and a geomean against the plugin alone would flatter the own solvers.
The geomean printed plain is against the better peer; the plugin-only geomean is printed only with
the flagged problems named.

PyTorch's benchmark search times each algorithm once or a few times, so on a 10 us kernel which one
it keeps varies from process to process (H200: backward-data res4[b-f]_branch2a 0.0145 ms in
session 32's call, 0.0095 in session 35's; 0.0139 and 0.0096 in two runs of one call). So the search runs in --searches processes (this one and
fresh ones, one after another) and the peer is the fastest of them, the range printed beside it;
and it tries every algorithm cuDNN offers (torch.backends.cudnn.benchmark_limit = --limit, 0:
all; PyTorch's own default is 10).

--kernels adds, after every timing (so that the profiler cannot touch them), the CUDA kernels
PyTorch's call launched per problem (names and mean device time, from torch.profiler over eager
calls on rotated input copies): cuDNN's and cuBLASLt's kernel names carry their tile, cluster and
split-K choices, which is what an own plan is compared against. They are this process's search's
choice, which need not be the search whose time is printed (the fastest of --searches).

    gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc --json b.jsonl
    python3 bench/gpu_peer.py b.jsonl [--replays 20] [--slack 1.25] [--searches 3] [--limit 0]
                              [--kernels]
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

import torch


def tensors(p, copies):
    """`copies` sets of (x, w, dy) for problem p, in its dtype and memory format."""
    dt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[p["dtype"]]
    x_shape = [p["n"], p["c"]] + p["input"]
    w_shape = [p["k"], p["c"] // p["g"]] + p["filter"]
    y_shape = [p["n"], p["k"]] + p["output"]
    fmt = torch.contiguous_format
    if p["channels_last"] and p["spatial_dims"] in (2, 3):
        fmt = torch.channels_last if p["spatial_dims"] == 2 else torch.channels_last_3d
    sets = []
    for _ in range(copies):
        sets.append([torch.randn(s, device="cuda", dtype=dt).contiguous(memory_format=fmt)
                     for s in (x_shape, w_shape, y_shape)])
    return sets


def symmetric_padding(p):
    """PyTorch's convolution pads both ends alike: the start padding, where that gives the same
    output (a derived end padding of 0 or -1 at stride 2 does); None where no symmetric padding
    does."""
    for i, b, e, k, s, d, o in zip(p["input"], p["pad_begin"], p["pad_end"], p["filter"],
                                   p["stride"], p["dilation"], p["output"]):
        if (i + 2 * b - (k - 1) * d - 1) // s + 1 != o:
            return None
    return list(p["pad_begin"])


def call(p, pad):
    """The PyTorch call of p's direction, on one (x, w, dy) set."""
    n = p["spatial_dims"]
    conv = (torch.nn.functional.conv1d, torch.nn.functional.conv2d,
            torch.nn.functional.conv3d)[n - 1]
    stride, dil, g = p["stride"], p["dilation"], p["g"]
    if p["direction"] == "fwd":
        return lambda x, w, dy: conv(x, w, None, stride, pad, dil, g)
    mask = [True, False, False] if p["direction"] == "bwd_data" else [False, True, False]
    return lambda x, w, dy: torch.ops.aten.convolution_backward(
        dy, x, w, None, stride, pad, dil, False, [0] * n, g, mask)


def rotated_copies(p):
    """How many (x, w, dy) sets p's calls rotate over: enough to pass 200 MiB of operands, so that
    the L2 cache does not hold them (as gpu_bench rotates its copies), at most 8."""
    itemsize = {"f32": 4, "f16": 2, "bf16": 2}[p["dtype"]]
    elems = sum(math.prod(s) for s in (
        [p["n"], p["c"]] + p["input"], [p["k"], p["c"] // p["g"]] + p["filter"],
        [p["n"], p["k"]] + p["output"]))
    return max(1, min(8, (200 << 20) // max(1, elems * itemsize) + 1))


def time_torch(p, replays, tf32):
    """Median kernel time (ms) of one call, from CUDA-graph replays of calls over rotated input
    copies (as gpu_bench rotates them, so the L2 cache does not hold the inputs)."""
    pad = symmetric_padding(p)
    if pad is None:
        return None, "no symmetric padding gives this output"
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    copies = rotated_copies(p)
    sets = tensors(p, copies)
    fn = call(p, pad)
    try:
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):  # benchmark mode's search, and warm-up, outside the capture
                for s in sets:
                    fn(*s)
        torch.cuda.current_stream().wait_stream(stream)
        torch.cuda.synchronize()
        calls = max(copies, 8)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for i in range(calls):
                fn(*sets[i % copies])
        graph.replay()
        torch.cuda.synchronize()
        times = []
        for _ in range(replays):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            graph.replay()
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b) / calls)
        return statistics.median(times), ""
    except RuntimeError as e:
        return None, str(e).splitlines()[0][:100]


def torch_kernels(p, tf32, calls=16):
    """[(kernel name, launches a call, mean device us a launch)] of eager calls of p over rotated
    input copies (as time_torch rotates them, so the L2 cache does not hold the operands), its
    algorithm already chosen by time_torch's benchmark search (same shapes, same flags); [] where
    PyTorch cannot express p, and then, or where nothing was recorded, the reason on stderr."""
    pad = symmetric_padding(p)
    if pad is None:
        return []
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    copies = rotated_copies(p)
    step = "allocating its tensors"
    try:
        sets = tensors(p, copies)
        fn = call(p, pad)
        step = "its warm-up calls"
        for s in sets:
            fn(*s)
        torch.cuda.synchronize()
        step = "profiling"
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for i in range(calls):
                fn(*sets[i % copies])
            torch.cuda.synchronize()
    except (RuntimeError, ImportError) as e:
        print("kernels of %s: %s failed: %s" % (p["name"] or p["problem"], step,
                                                 str(e).splitlines()[0][:100]), file=sys.stderr)
        return []
    rows = []
    for e in prof.key_averages():
        total = getattr(e, "self_device_time_total", None)
        if total is None:
            total = getattr(e, "self_cuda_time_total", 0)
        if total > 0 and e.count > 0:
            rows.append((e.key, e.count / calls, total / e.count))
    if not rows:
        print("kernels of %s: no CUDA kernels recorded (is CUPTI available?)" % (
            p["name"] or p["problem"]), file=sys.stderr)
    return sorted(rows, key=lambda r: -r[1] * r[2])


def torch_times(problems, replays):
    """{"i:tf32": [ms or None, why]} for every problem and TF32 setting this script compares,
    timed in this process (its own benchmark search)."""
    out = {}
    for i, p in enumerate(problems):
        for tf32 in ([False, True] if p["dtype"] == "f32" else [False]):
            out["%d:%d" % (i, tf32)] = list(time_torch(p, replays, tf32))
    return out


def searches_elsewhere(argv_rows, count, replays, limit, timeout):
    """torch_times from `count` fresh processes of this script, one after another (each its own
    benchmark search); a process that fails or outlives `timeout` seconds adds nothing and is
    said on stderr."""
    found = []
    for n in range(count):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "times.json")
            cmd = [sys.executable, os.path.abspath(__file__), *argv_rows, "--times-only", out,
                   "--replays", str(replays), "--limit", str(limit)]
            try:
                r = subprocess.run(cmd, timeout=timeout, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)
                if r.returncode == 0:
                    with open(out) as f:
                        found.append(json.load(f))
                    continue
                why = "exit %d: %s" % (r.returncode, (r.stderr or "").strip()[-200:])
            except subprocess.TimeoutExpired:
                why = "no answer in %d s" % timeout
            except (OSError, ValueError) as e:
                why = str(e)[:200]
            print("search %d of PyTorch's benchmark in a fresh process: %s" % (n + 2, why),
                  file=sys.stderr)
    return found


def geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def read_rows(paths):
    """gpu_bench's rows, one JSON object a line; a line that is not one (a run cut by its time
    limit in the middle of a row) is reported and skipped, not fatal to the rows around it."""
    rows = []
    for path in paths:
        for number, line in enumerate(open(path), 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                print("%s:%d: skipped, not one JSON row (%s)" % (path, number, e.msg),
                      file=sys.stderr)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("jsonl", nargs="+", help="gpu_bench --json output")
    ap.add_argument("--replays", type=int, default=20)
    ap.add_argument("--slack", type=float, default=1.25,
                    help="flag a problem where the plugin's best is this much slower than PyTorch")
    ap.add_argument("--kernels", action="store_true",
                    help="print the CUDA kernels PyTorch's call launched, per problem")
    ap.add_argument("--searches", type=int, default=3,
                    help="PyTorch's benchmark search in this many processes; the fastest counts")
    ap.add_argument("--limit", type=int, default=0,
                    help="torch.backends.cudnn.benchmark_limit (algorithms a search tries; 0: all)")
    ap.add_argument("--search-timeout", type=int, default=300,
                    help="seconds a fresh process's search may take")
    ap.add_argument("--times-only", metavar="FILE", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.searches < 1 or a.limit < 0 or a.search_timeout < 1:
        ap.error("--searches and --search-timeout must be at least 1, --limit at least 0")
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.benchmark_limit = a.limit
    problems = read_rows(a.jsonl)
    if a.times_only:  # one fresh process's search (searches_elsewhere)
        with open(a.times_only, "w") as f:
            json.dump(torch_times(problems, a.replays), f)
        return 0
    searches = [torch_times(problems, a.replays)]
    searches += searches_elsewhere(a.jsonl, a.searches - 1, a.replays, a.limit,
                                   a.search_timeout)
    print("PyTorch %s, cuDNN %s (torch.backends.cudnn.version()), device %s; benchmark search "
          "over %s algorithms, fastest of %d searches (%d asked)" % (
              torch.__version__, torch.backends.cudnn.version(), torch.cuda.get_device_name(),
              "all" if a.limit == 0 else "at most %d" % a.limit, len(searches), a.searches))
    # (direction, dtype, batch, own id) -> [(ratio to the better peer, ratio to the plugin, flagged, name)]
    ratios = {}
    listings = []  # (name, p, tf32): --kernels' second pass, after every timing
    for i, p in enumerate(problems):
        name = p["name"] or p["problem"]
        for tf32 in ([False, True] if p["dtype"] == "f32" else [False]):
            own = {k: v for k, v in p["ms"].items()
                   if k.startswith("gpu:") and k.endswith(":tf32") == tf32}
            plugin = {k: v for k, v in p["ms"].items()
                      if k.startswith("cudnn:") and k.endswith(":tf32") == tf32}
            declined = sum(1 for k in p["declined"] if k.startswith("cudnn:" + p["direction"] + ":")
                           and k.endswith(":tf32") == tf32)
            found = [s.get("%d:%d" % (i, tf32)) for s in searches]
            times = [t[0] for t in found if t and t[0]]
            t_torch = min(times) if times else None
            why = next((t[1] for t in found if t and t[1]), "") if not times else (
                "searches %.4f-%.4f" % (min(times), max(times)) if len(times) > 1 else "")
            pbest = min(plugin.items(), key=lambda kv: kv[1]) if plugin else (None, None)
            peers = [t for t in (pbest[1], t_torch) if t]
            peer = min(peers) if peers else None
            flagged = bool(pbest[1] and t_torch and pbest[1] > a.slack * t_torch) or not pbest[1]
            print("\n%s%s (%s, %s): plugin best %s %s ms (%d of its algorithms did not run); "
                  "PyTorch %s ms%s%s" % (
                      name, " TF32" if tf32 else "", p["direction"], p["dtype"], pbest[0],
                      "%.4f" % pbest[1] if pbest[1] else "-", declined,
                      "%.4f" % t_torch if t_torch else "-", " (" + why + ")" if why else "",
                      "  FLAGGED: the plugin ran no competitive engine" if flagged else ""))
            if a.kernels and t_torch:
                listings.append((name, p, tf32))
            for k, t in sorted(own.items(), key=lambda kv: kv[1]):
                r = peer / t if peer else None
                rp = pbest[1] / t if pbest[1] else None
                print("  %-28s %9.4f ms  %s vs the better peer  %s vs the plugin" % (
                    k, t, "%.3fx" % r if r else "-", "%.3fx" % rp if rp else "-"))
                if r:
                    group = (p["direction"], p["dtype"] + (" TF32" if tf32 else ""),
                             "b%d" % p["n"], k)
                    ratios.setdefault(group, []).append((r, rp, flagged, name))
    print("\ngeomean ratio, own solver / the better of (plugin's best cuDNN, PyTorch under "
          "CUDA-graph replay); higher is better")
    for (direction, dtype, batch, k), v in sorted(ratios.items()):
        flagged = [n for _, _, f, n in v if f]
        line = "  %-11s %-8s %-5s %-28s %.3fx over %d problems" % (
            direction, dtype, batch, k, geomean([r for r, _, _, _ in v]), len(v))
        if flagged:
            vs_plugin = [rp for _, rp, _, _ in v if rp]
            line += ("; vs the plugin alone %.3fx, NOT a fair figure: the plugin ran no competitive "
                     "engine on %d problem(s): %s" % (geomean(vs_plugin), len(flagged),
                                                        ", ".join(flagged)))
        print(line)
    if listings:
        print("\nkernels PyTorch's call launched (torch.profiler over eager calls on rotated "
              "copies, after every timing above, this process's search's algorithm, which need "
              "not be the fastest search's): launches a call, mean device time a launch")
    for name, p, tf32 in listings:
        print("\n%s%s (%s, %s)" % (name, " TF32" if tf32 else "", p["direction"], p["dtype"]))
        for kname, per_call, us in torch_kernels(p, tf32):
            print("  %.1fx %8.2f us  %s" % (per_call, us, kname[:220]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
