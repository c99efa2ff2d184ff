"""Per-layer ms of gpu:wgmma_implicit_gemm per gpu_bench --json file (column = file name less
its directory prefix), and each column's geomean of base / column (base: the first file)."""
import json, math, os, sys

files = list(dict.fromkeys(sys.argv[1:]))
cols = [os.path.basename(f).rsplit(".", 1)[0].split("_", 1)[1] if "_" in os.path.basename(f) else f for f in files]
names, t = [], {}
for f, c in zip(files, cols):
    for line in open(f):
        d = json.loads(line)
        k = d["name"].split()[0]
        if k not in names:
            names.append(k)
        t.setdefault(k, {})[c] = d["ms"].get("gpu:wgmma_implicit_gemm")
w = max(len(c) for c in cols) + 1
print("%-22s" % "layer" + "".join(("%" + str(w) + "s") % c for c in cols))
for k in names:
    print("%-22s" % k[:22] + "".join(("%" + str(w) + ".4f") % t[k][c] if t[k].get(c) else ("%" + str(w) + "s") % "-" for c in cols))
g = []
for c in cols:
    r = [math.log(t[k][cols[0]] / t[k][c]) for k in names if t[k].get(c) and t[k].get(cols[0])]
    g.append(math.exp(sum(r) / len(r)) if r else float("nan"))
print("%-22s" % "geomean base/col" + "".join(("%" + str(w) + ".3f") % x for x in g))
# best per layer
print("best per layer:")
for k in names:
    best = min((t[k][c], c) for c in cols if t[k].get(c))
    print("  %-22s %-16s %.4f (base %.4f, %.3fx)" % (k[:22], best[1], best[0], t[k][cols[0]], t[k][cols[0]] / best[0]))
