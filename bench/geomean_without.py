#!/usr/bin/env python3
"""Geomeans of a convguard_bench log as they would be without some solvers.

For each problem row the best time stays when its solver does not match; otherwise it becomes
the fastest time of the row's other solvers (the "others (ms)" line under it). Prints, per
direction, the geomean speed ratio vs oneDNN's execution with and without the solvers. Use it to
say how much a solver family contributed, from one run (timings drift between runs).

    python3 bench/geomean_without.py --solver cpu:nchw_gemm docs/perf/<dir>/cpu_bench_*.log
"""
import argparse
import math
import re

ROW = re.compile(r"^(\S.*?)\s+(fwd|bwd_data|bwd_weights)\s+(f32|bf16|f16)\s+[\d.]+\s+(\S+)"
                 r"\s+([\d.]+)\s+([\d.]+)\s+[\d.]+\s+[\d.]+\s+[\d.]+\s*$")
TIME = re.compile(r"(cpu:[a-z0-9_:]+|onednn:[a-z0-9_:]+) ([\d.]+)")


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--solver", required=True, help="id prefix to leave out, e.g. cpu:nchw_gemm")
    ap.add_argument("logs", nargs="+")
    args = ap.parse_args()
    for path in args.logs:
        lines = open(path, encoding="utf-8").read().split("\n")
        ratios = {}
        for i, line in enumerate(lines):
            m = ROW.match(line)
            if not m:
                continue
            direction, best, ours, theirs = m.group(2), m.group(4), float(m.group(5)), float(m.group(6))
            alt = ours
            if best.startswith(args.solver):
                others = lines[i + 2] if i + 2 < len(lines) else ""
                times = [float(t) for s, t in TIME.findall(others) if not s.startswith(args.solver)]
                alt = min(times) if times else float("inf")
            ratios.setdefault(direction, []).append((theirs / ours, theirs / alt))
        for direction, pairs in ratios.items():
            print(f"{path}: {direction:<11} over {len(pairs):3} problems: vs exec "
                  f"{geomean([a for a, _ in pairs]):.3f} with, {geomean([b for _, b in pairs]):.3f} "
                  f"without {args.solver}")


if __name__ == "__main__":
    main()
