#!/usr/bin/env bash
# The HTML report: self-contained (no scripts, no external resources), one heatmap cell per
# (problem, solver), every failure with reason, stderr tail and reproduce command; rendered in
# headless Chromium, the screenshot is non-empty and the page logs no errors.
# Usage: report_test.sh path/to/convguard path/to/convguard_chaos.so
set -u
CG=$1
CHAOS=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
source "$(dirname "$0")/check_lib.sh"
"$CG" probe --db "$TMP/t.db" --plugin "$CHAOS" --solvers 'chaos:good,chaos:segfault,chaos:wrong,chaos:hang_busy,cpu:direct,cpu:depthwise' \
  --problem 'mb1ic3ih8oc4kh3ph1' --problem 'mb1ic4ih6oc4kh3' --timeout 2 >/dev/null 2>&1
"$CG" report --html "$TMP/r.html" --db "$TMP/t.db" >"$TMP/out.txt"
check "report written" grep -q "wrote .*r.html: 12 trials, 2 problems, 6 solvers" "$TMP/out.txt"
check "report structure (python html.parser)" python3 - "$TMP/r.html" <<'PY'
import sys
from html.parser import HTMLParser
class P(HTMLParser):
    def __init__(self):
        super().__init__(); self.cells=0; self.scripts=0; self.external=0; self.svg=0; self.failures=0; self.stack=[]
    def handle_starttag(self, tag, attrs):
        a=dict(attrs)
        if tag=='td' and a.get('class')=='c': self.cells+=1
        if tag=='script': self.scripts+=1
        if tag in ('link','img','iframe') or (tag=='script' and 'src' in a): self.external+=1
        if tag=='svg': self.svg+=1
        if tag=='div' and a.get('class')=='failure': self.failures+=1
p=P(); p.feed(open(sys.argv[1]).read())
ok = p.cells==12 and p.scripts==0 and p.external==0 and p.svg>=1 and p.failures==6
print(f"cells {p.cells} scripts {p.scripts} external {p.external} charts {p.svg} failures {p.failures}")
sys.exit(0 if ok else 1)
PY
check "a crash shows its signal, stderr tail and reproduce command" sh -c "grep -q 'signal 11' '$TMP/r.html' && grep -q 'chaos: writing to address' '$TMP/r.html' && grep -q 'reproduce: <code>CONVGUARD_PLUGINS=' '$TMP/r.html'"
"$CG" report --db "$TMP/t.db" >/dev/null 2>&1; rc=$?
check "report without --html: exit 2" test "$rc" -eq 2

# Rendering: Debian's chromium, headless, no network (flags from the machine notes).
CHROME=$(command -v chromium || true)
if [ -n "$CHROME" ]; then
  "$CHROME" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --user-data-dir="$TMP/profile" --enable-logging=stderr --v=0 \
    --window-size=1200,900 --screenshot="$TMP/shot.png" "file://$TMP/r.html" >"$TMP/chrome.log" 2>&1
  check "screenshot is a non-empty PNG" python3 -c "
import sys
d=open('$TMP/shot.png','rb').read()
sys.exit(0 if d[:8]==b'\\x89PNG\\r\\n\\x1a\\n' and len(d)>5000 else 1)"
  check "page logged no console errors" sh -c "! grep -E 'CONSOLE.*(Error|error)|Uncaught' '$TMP/chrome.log'"
else
  # `make test` installs chromium (scripts/install-deps.sh test): missing is a failure, not a skip.
  echo "FAIL: chromium not installed (scripts/install-deps.sh test installs it)"
  failures=$((failures + 1))
fi
echo "report tests: $failures failure(s)"
[ "$failures" -eq 0 ]
