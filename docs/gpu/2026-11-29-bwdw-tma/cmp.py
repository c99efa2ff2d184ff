# cmp.py DIR TAG VARIANT... : per layer, min over rounds of gpu:wgmma_implicit_gemm per variant; ratios to the first
import sys, math, re, glob
O, tag, vs = sys.argv[1], sys.argv[2], sys.argv[3:]
def times(path):
    out, name = {}, None
    for line in open(path):
        m = re.match(r'^((conv|res)\S+)', line)
        if m: name = m.group(1)
        m = re.match(r'^\s+(gpu:wgmma_implicit_gemm|gpu:wgmma_bwd_weights)\s+([0-9.]+) ms', line)
        if m and name: out[name] = float(m.group(2))
    return out
best = {}
for v in vs:
    ds = [times(f) for f in sorted(glob.glob(f"{O}/{tag}_{v}_r*.log"))]
    best[v] = {k: min(d[k] for d in ds if k in d) for k in ds[0]} if ds else {}
base = vs[0]
print(f"{tag}: " + "  ".join(vs))
lg = {v: 0.0 for v in vs}; n = 0
for k in best[base]:
    if not all(k in best[v] for v in vs): continue
    n += 1
    print(f"  {k:24s} " + "  ".join(f"{best[v][k]:.4f} ({best[base][k]/best[v][k]:.3f})" for v in vs))
    for v in vs: lg[v] += math.log(best[base][k] / best[v][k])
print(f"  geomean speedup vs {base}: " + "  ".join(f"{v} {math.exp(lg[v]/max(n,1)):.4f}" for v in vs) + f" over {n}")
