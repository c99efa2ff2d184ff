#!/usr/bin/env python3
"""Checks a results database after a fault (kill -9, Ctrl-C, a full disk): used by faults_test.sh
and disk_full_test.sh, so that both judge "nothing lost" the same way.

  db_state.py CONVGUARD DB [--before SNAP] [--reported JSONL] [--running-max N]
                           [--final SOLVER=STATUS,...] [--save SNAP] [--running-to FILE]

Always: SQLite's integrity_check says ok. --before: every finished row of an earlier snapshot is
still there with the same status (and, for results later probes reuse or skip, the same
finished_at: never rewritten). --reported: every trial the probe printed (--json) is in the
database with that status. --running-max: at most N rows left running. --final: every row has its
planted status (no healthy solver recorded bad, nothing running or interrupted). --save: writes
this state for a later --before. --running-to: writes the rows left running, one a line, as the
probe's --json output names a trial. Prints what is wrong and exits 1, or prints a summary line.
"""
import argparse
import json
import sqlite3
import subprocess
import sys

UNFINISHED = ("running", "interrupted")
KEPT = ("ok", "unsupported", "hang", "crash", "wrong")


def rows(cg, db):
    out = subprocess.run([cg, "db", "show", "--db", db, "--json"], capture_output=True,
                         text=True, check=True).stdout
    return {(r["problem"], r["solver"]): r for r in map(json.loads, out.splitlines())}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cg")
    ap.add_argument("db")
    ap.add_argument("--before")
    ap.add_argument("--reported")
    ap.add_argument("--running-max", type=int)
    ap.add_argument("--final")
    ap.add_argument("--save")
    ap.add_argument("--running-to")
    a = ap.parse_args()
    bad = []
    con = sqlite3.connect(a.db)
    integrity = con.execute("PRAGMA integrity_check").fetchone()[0]
    con.close()
    if integrity != "ok":
        bad.append("integrity_check: " + integrity)
    now = rows(a.cg, a.db)
    if a.before:
        with open(a.before) as f:
            for r in json.load(f):
                mine = now.get((r["problem"], r["solver"]))
                if r["status"] in UNFINISHED:
                    continue
                # Results a later probe reuses or skips are never written again; error and oom
                # (perhaps transient) are run again, and must end the same.
                kept = r["status"] in KEPT
                if not mine or mine["status"] != r["status"] or (
                        kept and mine["finished_at"] != r["finished_at"]):
                    bad.append("lost or rewritten: %s %s was %s, now %s" % (
                        r["solver"], r["problem"], r["status"], mine and mine["status"]))
    if a.reported:
        with open(a.reported) as f:
            for r in (json.loads(l) for l in f if l.strip()):
                mine = now.get((r["problem"], r["solver"]))
                if not mine or mine["status"] != r["status"]:
                    bad.append("reported %s for %s %s, recorded %s" % (
                        r["status"], r["solver"], r["problem"], mine and mine["status"]))
    running = sum(r["status"] == "running" for r in now.values())
    if a.running_max is not None and running > a.running_max:
        bad.append("%d rows left running (at most %d)" % (running, a.running_max))
    if a.final:
        planted = dict(kv.split("=") for kv in a.final.split(","))
        for r in now.values():
            if planted.get(r["solver"]) != r["status"]:
                bad.append("%s %s is %s (%s), planted %s" % (r["solver"], r["problem"],
                                                             r["status"], r["reason"],
                                                             planted.get(r["solver"])))
    if a.save:
        with open(a.save, "w") as f:
            json.dump(list(now.values()), f)
    if a.running_to:
        # The reproduce command's words that name the trial, as the probe's --json lines hold them.
        with open(a.running_to, "w") as f:
            for r in now.values():
                if r["status"] == "running":
                    f.write("--problem '%s' -S '%s'\n" % (r["problem"], r["solver"]))
    for b in bad[:10]:
        print("   ", b)
    print("    %d rows, %d running, %d interrupted%s" % (
        len(now), running, sum(r["status"] == "interrupted" for r in now.values()),
        "" if not bad else ", %d problem(s)" % len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
