"""Per-layer table from bench/gpu_peer.py's log: a wgmma solver and its mma.sync sibling
(gpu:wgmma_implicit_gemm and gpu:tc_implicit_gemm by default; backward-weights:
gpu:wgmma_bwd_weights and gpu:tc_bwd_weights), their times and ratios to the better peer, the
geomeans over the distinct problems, and then gpu_peer.py's own geomean lines for the two (the same
figures, with flagged problems named).

    python3 scripts/peer_summary.py peer.log [WGMMA_ID TC_ID]"""
import math
import re
import sys

WGMMA, TC = "gpu:wgmma_implicit_gemm", "gpu:tc_implicit_gemm"


def geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def main(path, wgmma=WGMMA, tc=TC):
    lines = open(path).read().splitlines()
    rows, cur = [], None
    for line in lines:
        m = re.match(r"^(\S.*?) \(x(\d+)\) \((fwd|bwd_data|bwd_weights)", line)
        if m:
            cur = {"name": m.group(1).split()[0]}
            rows.append(cur)
            continue
        m = re.match(r"^\s+(gpu:\S+)\s+([\d.]+) ms\s+([\d.]+)x vs the better peer", line)
        if m and cur is not None:
            cur[m.group(1)] = (float(m.group(2)), float(m.group(3)))
    print("%-28s %9s %7s %9s %7s %6s" % ("layer", "wgmma ms", "x peer", "tc ms", "x peer", "wg/tc"))
    w_ratios, t_ratios, speedups = [], [], []
    for r in rows:
        w, t = r.get(wgmma), r.get(tc)
        if not w or not t:
            print("%-28s missing" % r["name"])
            continue
        w_ratios.append(w[1]), t_ratios.append(t[1]), speedups.append(t[0] / w[0])
        print("%-28s %9.4f %7.3f %9.4f %7.3f %6.2f" % (r["name"], w[0], w[1], t[0], t[1], t[0] / w[0]))
    print("geomean over %d problems: wgmma %.3fx of the better peer, tc %.3fx, wgmma/tc speedup %.3fx"
          % (len(w_ratios), geomean(w_ratios), geomean(t_ratios), geomean(speedups)))
    for line in lines:
        if (wgmma + " " in line or tc + " " in line) and " over " in line:
            print(line)


if __name__ == "__main__":
    main(*sys.argv[1:4])
