#!/usr/bin/env python3
"""Summarises convguard_bench logs of interleaved rounds: per problem, the new own kernel
(cpu:bwdw:avx512), the best of the other (older) own solvers and oneDNN exec-only, each ratio
taken within one run, then the median over rounds; geomeans of those medians.
usage: summarize.py round1.log round2.log ..."""
import math
import re
import statistics
import sys

NEW = "cpu:bwdw:avx512"


def parse(path):
    rows, cur = {}, None
    for line in open(path):
        m = re.match(r"^(\S.{35}) (\w+)\s+(\w+)\s+([\d.]+) (\S+)\s+([\d.na]+)\s+([\d.na]+)\s+([\d.na]+)", line)
        if m and m.group(2) in ("bwd_weights", "forward", "bwd_data"):
            cur = m.group(1).strip()
            times = {m.group(5): float(m.group(6))}
            rows[cur] = {"times": times, "exec": float(m.group(7)), "ro": float(m.group(8))}
            continue
        if cur and "others (ms):" in line:
            for sid, ms in re.findall(r"(cpu:\S+) ([\d.]+)", line.split("others (ms):")[1]):
                rows[cur]["times"][sid] = float(ms)
    return rows


def geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


rounds = [parse(p) for p in sys.argv[1:]]
names = list(rounds[0])
print(f"{'problem':36} {'new/exec':>9} {'old/exec':>9} {'new/old':>8} {'new/ro':>7}  (medians of {len(rounds)} rounds; > 1: convguard faster)")
cols = {"new_exec": [], "old_exec": [], "new_old": [], "new_ro": [], "best_exec": []}
for n in names:
    r = {"new_exec": [], "old_exec": [], "new_old": [], "new_ro": [], "best_exec": []}
    for rd in rounds:
        if n not in rd:
            continue
        row = rd[n]
        t = row["times"]
        new = t.get(NEW)
        old = min((v for k, v in t.items() if not k.startswith("cpu:bwdw")), default=None)
        if new is None or old is None:
            continue
        r["new_exec"].append(row["exec"] / new)
        r["old_exec"].append(row["exec"] / old)
        r["new_old"].append(old / new)
        r["new_ro"].append(row["ro"] / new)
        r["best_exec"].append(row["exec"] / min(new, old))
    if not r["new_exec"]:
        continue
    med = {k: statistics.median(v) for k, v in r.items()}
    for k in cols:
        cols[k].append(med[k])
    print(f"{n[:36]:36} {med['new_exec']:9.2f} {med['old_exec']:9.2f} {med['new_old']:8.2f} {med['new_ro']:7.2f}")
print(f"geomean over {len(cols['new_exec'])} problems: new vs oneDNN exec {geomean(cols['new_exec']):.3f}, "
      f"old best vs oneDNN exec {geomean(cols['old_exec']):.3f}, new vs old best {geomean(cols['new_old']):.3f}, "
      f"new vs oneDNN with reorders {geomean(cols['new_ro']):.3f}, best own (new or old) vs exec {geomean(cols['best_exec']):.3f}")
