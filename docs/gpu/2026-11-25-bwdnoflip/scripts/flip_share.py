"""The flip's share of gpu:wgmma_implicit_gemm's backward-data time per ResNet-50 layer, from
ncu --csv --metrics gpu__time_duration.sum over base's gpu_bench --only gpu:wgmma_implicit_gemm
--direction bwd_data --runs 2 (3 warm-up runs + 2 timed: 5 runs a layer, each starting with the
flip kernel phase_filters, then wgmma_forward and, split, the reduction).

    python3 flip_share.py ncu_base.csv"""
import csv
import statistics
import sys

LAYERS = [l.split('_n"')[1].split()[0] for l in open("data/suites/resnet50.txt")
          if l.strip() and not l.startswith("#")]


def main(path):
    rows = [r for r in csv.reader(l for l in open(path) if l.startswith('"'))]
    head, rows = rows[0], rows[1:]
    kn, unit, val = head.index("Kernel Name"), head.index("Metric Unit"), head.index("Metric Value")
    scale = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}
    runs = []  # [flip us, gemm us]
    for r in rows:
        t = float(r[val].replace(",", "")) * scale[r[unit]]
        if "phase_filters" in r[kn]:
            runs.append([t, 0.0])
        elif runs:
            runs[-1][1] += t
    per = len(runs) // len(LAYERS) if LAYERS else 0
    print("%d runs over %d layers (%d each)" % (len(runs), len(LAYERS), per))
    print("%-24s %10s %10s %8s" % ("layer", "flip us", "gemm us", "flip %"))
    shares = []
    for i, name in enumerate(LAYERS):
        chunk = runs[i * per:(i + 1) * per]
        if not chunk:
            continue
        f = statistics.median(c[0] for c in chunk)
        g = statistics.median(c[1] for c in chunk)
        shares.append(f / (f + g))
        print("%-24s %10.2f %10.2f %7.1f%%" % (name[:24], f, g, 100 * f / (f + g)))
    if shares:
        print("median share %.1f%%, range %.1f-%.1f%%" % (100 * statistics.median(shares),
                                                           100 * min(shares), 100 * max(shares)))


if __name__ == "__main__":
    main(sys.argv[1])
