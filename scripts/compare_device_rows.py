#!/usr/bin/env python3
"""Compare the rows of two probes of one sweep (`convguard db export` JSONL files,
plain or gzipped), e.g. a
`--device cuda:0` run against a `--device cuda:all` run: the same (problem, solver) keys with the
same status each, none recorded twice, none left `running`; and how many trials each device ran.
Exit 1 when the rows differ (the differences are listed)."""
import collections
import datetime
import gzip
import json
import re
import sys


def seconds(stamp):
    return datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").timestamp()


def load(path):
    rows = collections.defaultdict(list)
    devices = collections.Counter()
    finished = {}
    for line in (gzip.open(path, "rt") if path.endswith(".gz") else open(path)):
        r = json.loads(line)
        rows[(r["problem"], r["solver"])].append(r["status"])
        finished[(r["problem"], r["solver"])] = seconds(r["finished_at"])
        if r["status"] != "unsupported":  # the device that ran it: its reproduce command names it
            m = re.search(r"--device '([^']+)'", r.get("command", ""))
            devices[m.group(1) if m else "?"] += 1
    start = min(finished.values(), default=0)
    return rows, devices, {k: v - start for k, v in finished.items()}


def main(argv):
    if len(argv) != 3:
        sys.exit("usage: compare_device_rows.py ONE.jsonl OTHER.jsonl")
    (a, da, fa), (b, db, fb) = load(argv[1]), load(argv[2])
    twice = sorted(k for d in (a, b) for k, v in d.items() if len(v) > 1)
    running = sorted(k for d in (a, b) for k, v in d.items() if "running" in v)
    diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    print("%s: %d rows; %s: %d rows; recorded twice %d; left running %d; different %d" % (
        argv[1], sum(map(len, a.values())), argv[2], sum(map(len, b.values())), len(twice),
        len(running), len(diff)))
    for name, d in (("first", a), ("second", b)):
        print("  %s statuses: %s" % (name, dict(collections.Counter(s for v in d.values() for s in v))))
    for name, d in (("first", da), ("second", db)):
        print("  %s trials run (not unsupported) per device: %s" % (name, dict(d)))
    # A run cut short still compares: the rows both recorded, and when each had finished them
    # (from the rows' finished_at, whole seconds, counted from each run's first row).
    both = set(fa) & set(fb)
    if both:
        print("  rows both recorded: %d; finished by %.0f s in the first run, %.0f s in the second" % (
            len(both), max(fa[k] for k in both), max(fb[k] for k in both)))
    for k in diff[:40]:
        print("  differs:", k, a.get(k), b.get(k))
    for k in twice[:10]:
        print("  twice:", k)
    return 1 if diff or twice or running else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
