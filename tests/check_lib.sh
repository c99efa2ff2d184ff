# Sourced by the test scripts: check DESCRIPTION COMMAND... runs the command, prints ok/FAIL and
# counts failures; finish prints the count and exits non-zero when any check failed.
failures=0
check() {
  local what=$1
  shift
  if "$@"; then echo "ok:   $what"; else echo "FAIL: $what"; failures=$((failures + 1)); fi
}
finish() {
  echo "$failures failure(s)"
  test "$failures" -eq 0
}
