"""Per-layer table from bench/gpu_peer.py's log: gpu:wgmma_implicit_gemm and gpu:tc_implicit_gemm,
their times and ratios to the better peer, the geomeans over the distinct problems, and then
gpu_peer.py's own geomean lines for the two (the same figures, with flagged problems named).

    python3 scripts/peer_summary.py peer.log"""
import math, re, sys
rows = []
cur = None
for line in open(sys.argv[1]):
    m = re.match(r"^(\S.*?) \(x(\d+)\) \(fwd", line)
    if m:
        cur = {"name": m.group(1).split()[0], "count": int(m.group(2))}
        rows.append(cur)
        continue
    m = re.match(r"^\s+(gpu:\S+)\s+([\d.]+) ms\s+([\d.]+)x vs the better peer", line)
    if m and cur is not None:
        cur[m.group(1)] = (float(m.group(2)), float(m.group(3)))
def gm(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")
print(f"{'layer':28s} {'wgmma ms':>9s} {'x peer':>7s} {'tc ms':>9s} {'x peer':>7s} {'wg/tc':>6s}")
W, T, S = [], [], []
for r in rows:
    w, t = r.get("gpu:wgmma_implicit_gemm"), r.get("gpu:tc_implicit_gemm")
    if not w or not t:
        print(f"{r['name']:28s} missing"); continue
    W.append(w[1]); T.append(t[1]); S.append(t[0] / w[0])
    print(f"{r['name']:28s} {w[0]:9.4f} {w[1]:7.3f} {t[0]:9.4f} {t[1]:7.3f} {t[0]/w[0]:6.2f}")
print(f"geomean over {len(W)} problems: wgmma {gm(W):.3f}x of the better peer, tc {gm(T):.3f}x, wgmma/tc speedup {gm(S):.3f}x")
for l in open(sys.argv[1]):
    if re.search(r"gpu:(tc|wgmma)_implicit_gemm ", l) and " over " in l:
        print(l.rstrip())
