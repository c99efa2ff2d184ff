# Sourced by the test scripts: check DESCRIPTION COMMAND... runs the command, prints ok/FAIL and
# counts failures; finish prints the count and exits non-zero when any check failed.
failures=0
check() {
  local what=$1
  shift
  if "$@"; then echo "ok:   $what"; else echo "FAIL: $what"; failures=$((failures + 1)); fi
}
# db_rows CONVGUARD DB [--device]: the database's trials as sorted "problem | solver | status"
# lines (each led by its device's fingerprint with --device): what tests compare between runs.
db_rows() {
  "$1" db show --db "$2" --json | python3 -c "
import json, sys
lead = (lambda r: r['device'] + ' | ') if len(sys.argv) > 1 else (lambda r: '')
for line in sorted(lead(r) + f\"{r['problem']} | {r['solver']} | {r['status']}\"
                   for r in map(json.loads, sys.stdin)):
    print(line)" ${3:+device}
}
finish() {
  echo "$failures failure(s)"
  test "$failures" -eq 0
}
