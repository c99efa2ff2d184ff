"""Before/after from call2's interleaved rounds: per layer the median of base1..3 and new1..3
(gpu:wgmma_implicit_gemm ms), base/new, and with the peer's summary.txt (new's x peer) base's
x peer = new's x peer * new / base; geomeans over the layers.

    python3 med.py DIR PREFIX [summary.txt]     (PREFIX: fwd or bwd)"""
import json, math, os, re, statistics, sys

d, pre = sys.argv[1], sys.argv[2]
peer = {}
if len(sys.argv) > 3:
    for line in open(sys.argv[3]):
        m = re.match(r"^(\S+)\s+([\d.]+)\s+([\d.]+)\s", line)
        if m:
            peer[m.group(1)] = float(m.group(3))
t, names = {}, []
for v in ("base", "new"):
    for r in (1, 2, 3):
        for line in open(os.path.join(d, "%s_%s%d.jsonl" % (pre, v, r))):
            j = json.loads(line)
            k = j["name"].split()[0]
            if k not in names:
                names.append(k)
            t.setdefault(k, {}).setdefault(v, []).append(j["ms"]["gpu:wgmma_implicit_gemm"])
print("| layer | base ms | new ms | base/new | x peer base -> new |")
print("|---|---|---|---|---|")
lr, pb, pn = [], [], []
for k in names:
    b, n = statistics.median(t[k]["base"]), statistics.median(t[k]["new"])
    lr.append(math.log(b / n))
    p = peer.get(k)
    cell = "-"
    if p:
        cell = "%.3f -> %.3f" % (p * n / b, p)
        pb.append(math.log(p * n / b)), pn.append(math.log(p))
    print("| %s | %.4f | %.4f | %.3f | %s |" % (k, b, n, b / n, cell))
g = lambda v: math.exp(sum(v) / len(v)) if v else float("nan")
print("geomean base/new %.3fx over %d layers; x peer base %.3f -> new %.3f" % (g(lr), len(lr), g(pb), g(pn)))
