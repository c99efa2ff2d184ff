#!/usr/bin/env bash
# Evidence must never become code (docs/verification.md, "attack | before | now | test"): hostile
# rows cannot be imported, a sourced `convguard env` runs nothing even from a hand-made database,
# imports are all-or-nothing and refuse forged timestamps, stored reproduce commands quote their
# plugin path, doctor's python ignores the current directory, and bytes that are not UTF-8 never
# break JSON output. Each payload would create a file under $TMP/marks; none may exist.
# Usage: trust_test.sh path/to/convguard path/to/convguard_chaos.so
set -u
CG=$(realpath "$1")  # absolute: some checks run in other directories
CHAOS=$(realpath "$2")
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
source "$(dirname "$0")/check_lib.sh"
MARKS=$TMP/marks
mkdir -p "$MARKS"
no_payload_ran() { test -z "$(ls -A "$MARKS")"; }
P=mb1ic1ih4oc1kh1
KEY=g1mb1ic1ih4iw4oc1oh4ow4kh1kw1sh1sw1ph0pw0

# --- 1, 2: hostile solver ids and problem strings --------------------------------------------
# hostile.py FILE: JSON lines whose solver ids and problems carry every way out of a quoted
# word or a comment line.
python3 - "$TMP/hostile.jsonl" "$MARKS" <<'PY'
import json, sys
m = sys.argv[2]
payloads = ["x';touch %s/q1;'" % m, "x$(touch %s/q2)" % m, "x`touch %s/q3`" % m,
            "x\ntouch %s/q4" % m, "x\rtouch %s/q5" % m, "x\u2028touch %s/q6" % m,
            "x;touch %s/q7" % m]
with open(sys.argv[1], "w") as f:
    for i, p in enumerate(payloads):
        f.write(json.dumps({"device": "dev1", "problem": "mb1ic1ih4oc1kh1", "solver": "chaos:" + p,
                            "status": "crash", "finished_at": "2024-01-01T00:00:00Z"}) + "\n")
        f.write(json.dumps({"device": "dev1", "problem": "mb1ic1ih4oc1kh1" + p,
                            "solver": "chaos:p%d" % i, "status": "hang",
                            "finished_at": "2024-01-01T00:00:00Z"}) + "\n")
PY
DB=$TMP/import.db
"$CG" db import --db "$DB" "$TMP/hostile.jsonl" >"$TMP/import.log" 2>&1; rc=$?
check "a hostile import fails (rc $rc)" test "$rc" -ne 0
check "it names the line and the field" grep -q "hostile.jsonl:1: solver: " "$TMP/import.log"
check "nothing was imported" test -z "$("$CG" db show --db "$DB" 2>&1)"
# Each hostile line alone is refused too (the first bad line is not the only one checked).
n=0
while IFS= read -r line; do
  n=$((n + 1))
  printf '%s\n' "$line" >"$TMP/one.jsonl"
  "$CG" db import --db "$DB" "$TMP/one.jsonl" >"$TMP/one.log" 2>&1 && {
    echo "FAIL: hostile line $n was imported"; failures=$((failures + 1)); }
done <"$TMP/hostile.jsonl"
check "each of the $n hostile lines is refused alone" test -z "$("$CG" db show --db "$DB" 2>&1)"

# The same rows written into the database by hand (an old database, another tool): env must
# still write nothing that runs. Valid evidence beside them must come through exactly.
"$CG" db import --db "$DB" /dev/null >/dev/null 2>&1  # creates the schema
python3 - "$DB" "$TMP/hostile.jsonl" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("INSERT INTO devices (fingerprint, description, first_seen) VALUES ('dev1','d','x')")
rows = [json.loads(l) for l in open(sys.argv[2])]
rows.append({"problem": "g1mb1ic1ih4iw4oc1oh4ow4kh1kw1sh1sw1ph0pw0", "solver": "chaos:good_bad",
             "status": "wrong"})
rows.append({"problem": "g1mb1ic1ih4iw4oc1oh4ow4kh1kw1sh1sw1ph0pw0", "solver": "chaos:t<16>",
             "status": "hang"})
for r in rows:
    db.execute("INSERT OR IGNORE INTO problems (canonical) VALUES (?)", (r["problem"],))
    db.execute("INSERT OR IGNORE INTO solvers (id, backend, family) VALUES (?, 'chaos', 'x')",
               (r["solver"],))
    db.execute("INSERT INTO trials (device_id, problem_id, solver_id, status, started_at, "
               "finished_at, command) VALUES (1, (SELECT id FROM problems WHERE canonical = ?), "
               "?, ?, 'x', 'x', '')", (r["problem"], r["solver"], r["status"]))
db.commit()
PY
"$CG" env --db "$DB" --device all >"$TMP/env.sh" 2>&1
check "env output: comments and assignments only, printable ASCII" python3 - "$TMP/env.sh" <<'PY'
import re, sys
data = open(sys.argv[1], "rb").read()
ok = all(0x20 <= b < 0x7f or b == 0x0a for b in data)
lines = data.decode().split("\n")[:-1]
ok = ok and all(l.startswith("#") or re.fullmatch(r"export [A-Z_][A-Z0-9_]*='[^']*'", l)
                for l in lines)
sys.exit(0 if ok else 1)
PY
out=$(cd "$TMP" && unset CONVGUARD_SKIP_SOLVERS && source "$TMP/env.sh" 2>&1 &&
  printf '%s' "$CONVGUARD_SKIP_SOLVERS")
check "bash: sourcing env ran no payload" no_payload_ran
check "bash: the variable holds exactly the valid evidence ($out)" \
  test "$out" = "chaos:good_bad,chaos:t<16>"
check "env names the rows it ignored" grep -q "^# ignored a row whose solver id is not valid" "$TMP/env.sh"
for sh in fish pwsh; do
  command -v "$sh" >/dev/null || { echo "skip: $sh not installed (quoting unit-tested: Trust.*)"; continue; }
  if [ "$sh" = fish ]; then
    "$CG" env --db "$DB" --device all --shell fish >"$TMP/env.fish"
    out=$(cd "$TMP" && fish -c "source $TMP/env.fish; printf '%s' \$CONVGUARD_SKIP_SOLVERS" 2>&1)
  else
    "$CG" env --db "$DB" --device all --shell powershell >"$TMP/env.ps1"
    out=$(cd "$TMP" && pwsh -NoProfile -Command ". '$TMP/env.ps1'; Write-Host -NoNewline \$env:CONVGUARD_SKIP_SOLVERS" 2>&1)
  fi
  check "$sh: sourcing env ran no payload" no_payload_ran
  check "$sh: the variable holds exactly the valid evidence ($out)" test "$out" = "chaos:good_bad,chaos:t<16>"
done

# --- 3: import is one transaction, refuses NUL, forged times, directories, endless lines ----
DB=$TMP/merge.db
row() {  # row SOLVER STATUS FINISHED_AT [EXTRA-JSON]
  printf '{"device":"dev1","problem":"%s","solver":"%s","status":"%s","finished_at":"%s"%s}\n' \
    "$P" "$1" "$2" "$3" "${4:-}"
}
{ row cpu:direct ok 2024-01-02T00:00:00Z; row cpu:fft ok 2024-01-02T00:00:00Z; } >"$TMP/local.jsonl"
"$CG" db import --db "$DB" "$TMP/local.jsonl" >/dev/null 2>&1
expect_refused() {  # expect_refused WHAT PATTERN FILE
  "$CG" db import --db "$DB" "$3" >"$TMP/refused.log" 2>&1; local rc=$?
  check "$1: refused (rc $rc)" sh -c "test $rc -ne 0 && grep -qE -- \"$2\" '$TMP/refused.log'"
  check "$1: nothing changed" sh -c "\"$CG\" db show --db '$DB' | grep -c ' ok ' | grep -qx 2"
}
# (printf's %s keeps the JSON escape \u0000 as text: the NUL exists only once parsed.)
{ row cpu:direct crash 2024-01-03T00:00:00Z
  row cpu:fft crash 2024-01-03T00:00:00Z ',"reason":"a\u0000b"'; } >"$TMP/nul.jsonl"
expect_refused "a NUL in line 2 (line 1 good)" "nul.jsonl:2: reason: contains a NUL" "$TMP/nul.jsonl"
row cpu:direct crash 9999-12-31T23:59:59Z >"$TMP/future.jsonl"
expect_refused "a finished_at in the future" "future.jsonl:1: finished_at: .*in the future" "$TMP/future.jsonl"
row cpu:direct crash '2024-01-03 00:00:00' >"$TMP/fmt.jsonl"
expect_refused "a finished_at in another format" "fmt.jsonl:1: finished_at: .*not a timestamp" "$TMP/fmt.jsonl"
row cpu:direct crash '~' >"$TMP/tilde.jsonl"
expect_refused "a finished_at that sorts after every date" "finished_at" "$TMP/tilde.jsonl"
mkdir "$TMP/adir"
expect_refused "a directory" "adir: is a directory" "$TMP/adir"
head -c 2000000 /dev/zero | tr '\0' ' ' >"$TMP/long.jsonl"
expect_refused "a 2 MB line" "long.jsonl:1: line longer than" "$TMP/long.jsonl"
{ row cpu:direct crash 2024-01-03T00:00:00Z; row cpu:fft crash 2024-01-01T00:00:00Z; } >"$TMP/newer.jsonl"
"$CG" db import --db "$DB" "$TMP/newer.jsonl" >"$TMP/newer.log" 2>&1
check "a newer row replaces ours and says so" grep -q "^replaced: dev1 | $KEY | cpu:direct: ok -> crash" "$TMP/newer.log"
check "an older row is kept out" grep -q "imported 1 trial(s); kept 1 .*; 1 imported row(s) replaced older ones" "$TMP/newer.log"

# --- 4: the stored reproduce command quotes its plugin path ------------------------------------
PDIR="$TMP/p l'\$(touch q8)\`touch q9\`"
mkdir -p "$PDIR" && cp "$CHAOS" "$PDIR/chaos.so"
timeout 120 "$CG" probe --db "$TMP/probe.db" --plugin "$PDIR/chaos.so" --solvers chaos:good \
  --problem "$P" >/dev/null 2>&1
cmd=$("$CG" db export --db "$TMP/probe.db" | python3 -c "import json,sys; print(json.loads(sys.stdin.readline())['command'])")
first=$(cd "$MARKS" && eval "set -- $cmd" && printf '%s' "$1")
check "the reproduce command's words parse back without running anything" no_payload_ran
check "its first word is CONVGUARD_PLUGINS=<the plugin's path>" test "$first" = "CONVGUARD_PLUGINS=$PDIR/chaos.so"

# --- 5: doctor's python ignores a json.py in the current directory --------------------------
mkdir "$TMP/cwd" && printf 'open("%s/q10", "w")\n' "$MARKS" >"$TMP/cwd/json.py"
(cd "$TMP/cwd" && "$CG" doctor --db "$TMP/empty.db" --save-snapshot "$TMP/snap.json" >/dev/null 2>&1)
check "doctor did not import ./json.py" no_payload_ran
check "doctor still read python's version" python3 -I -c "import json; assert json.load(open('$TMP/snap.json'))['python']['version']"

# --- 6: bytes that are not UTF-8 ----------------------------------------------------------------
"$CG" driver --problem "${P}_n\"$(printf '\xff')\"" -t 1 --json >"$TMP/driver.json" 2>"$TMP/driver.err"; rc=$?
check "driver --json with a 0xFF problem name exits 0 (rc $rc)" test "$rc" -eq 0
check "its output is JSON" python3 -I -c "import json; json.load(open('$TMP/driver.json'))"
python3 - "$TMP/merge.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE trials SET reason = CAST(X'6261642062797465FF21' AS TEXT)")
db.commit()
PY
"$CG" db export --db "$TMP/merge.db" >"$TMP/export.jsonl" 2>"$TMP/export.err"; rc=$?
check "db export of a row with 0xFF exits 0 (rc $rc)" test "$rc" -eq 0
check "and writes every row as JSON" python3 -I -c "
import json; rows = [json.loads(l) for l in open('$TMP/export.jsonl')]; assert len(rows) == 2, rows"
finish
