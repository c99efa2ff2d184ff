"""Before/after table from bench.sh's interleaved runs: per layer the median of the base runs and
of the new runs (gpu:wgmma_implicit_gemm, ms), the new binary with the flip forced (or a third
binary, prev), new over
base, and geomeans; with PEER=peer.log (bench/gpu_peer.py's log of the same call), both medians
against that log's better peer (the lesser of the plugin's best cuDNN and PyTorch's time).

    PEER=l/peer.log python3 before_after.py l/var_*.jsonl"""
import json
import math
import os
import re
import statistics
import sys


def better_peer(path):
    peer = {}
    for line in open(path):
        m = re.match(r"^(\S+).*\(bwd_data, \S+\): plugin best \S+ ([\d.]+) ms.*PyTorch ([\d.]+) ms",
                     line)
        if m:
            peer[m.group(1)] = min(float(m.group(2)), float(m.group(3)))
    return peer


def main(files):
    peer = better_peer(os.environ["PEER"]) if os.environ.get("PEER") else {}
    cols, names = {}, []
    for f in files:
        v = os.path.basename(f)[len("var_"):-len(".jsonl")].split("_", 1)[1]
        for line in open(f):
            d = json.loads(line)
            key = d["name"].split()[0]
            if key not in names:
                names.append(key)
            cols.setdefault(v, {}).setdefault(key, []).append(d["ms"]["gpu:wgmma_implicit_gemm"])
    print("%-22s %9s %9s %9s %8s %8s %7s %7s" % ("layer", "base ms", "new ms", "flip ms",
                                                 "base/new", "saved us", "base xp", "new xp"))
    if "prev" in cols:
        print("(flip ms: the previous state, prev, in this table)")
    ratios, xb, xn = [], [], []
    for k in names:
        b = statistics.median(cols["base"][k])
        n = statistics.median(cols["new"][k])
        # The third column: the flip forced (bench/), or the previous branch state (final/).
        third = "flip" if "flip" in cols else "prev"
        f = statistics.median(cols[third][k]) if third in cols else float("nan")
        ratios.append(b / n)
        p = peer.get(k)
        if p:
            xb.append(p / b), xn.append(p / n)
        print("%-22s %9.4f %9.4f %9.4f %8.3f %8.1f %7s %7s" % (
            k[:22], b, n, f, b / n, 1e3 * (b - n), "%.3f" % (p / b) if p else "-",
            "%.3f" % (p / n) if p else "-"))

    def geo(v):
        return math.exp(sum(math.log(r) for r in v) / len(v))
    print("geomean base/new over %d layers: %.3f (new %.1f%% less time)" % (
        len(ratios), geo(ratios), 100 * (1 - 1 / geo(ratios))))
    if xn:
        print("geomean against the better peer over %d layers: base %.3fx, new %.3fx" % (
            len(xn), geo(xb), geo(xn)))


if __name__ == "__main__":
    main(sys.argv[1:])
