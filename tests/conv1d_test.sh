#!/usr/bin/env bash
# 1D convolutions end to end through the command line: problem strings read and printed 1D,
# every CPU solver in all three directions and dtypes verified through the driver, the probe's
# records and selection (-S auto), .npy files in N,C,W shape, bisect over W, a tile workaround
# around a solver that hangs above a width, a 1D model, and oneDNN's solvers when its plugin is
# built. Usage: conv1d_test.sh convguard convguard_chaos.so [convguard_onednn.so]
set -u
CG=$(readlink -f "$1")
CHAOS=$(readlink -f "$2")
ONEDNN=${3:-}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export TMPDIR=$TMP CONVGUARD_DB=$TMP/default.db
source "$(dirname "$0")/check_lib.sh"
P=mb2ic24iw37oc40kw5sw2pw3_n"one-d"
CANON=g1mb2ic24iw37oc40ow20kw5sw2pw3

# Every CPU solver that takes the problem verifies, in each direction and dtype.
for dt in f32 f16 bf16; do
  for dir in 1 2 4; do
    "$CG" driver --problem "--dt=$dt $P" -F $dir -S all -i 1 -t 1 >"$TMP/d.txt" 2>&1
    rc=$?
    check "driver $dt -F $dir: exit 0" test "$rc" -eq 0
    check "driver $dt -F $dir: rows name the 1D problem" grep -q "g1mb2ic24iw37oc40ow20kw5sw2pw3" "$TMP/d.txt"
    check "driver $dt -F $dir: no solver wrong, crashed or failed" \
      bash -c "! grep -E ' (wrong|crash|error|hang) ' '$TMP/d.txt'"
    check "driver $dt -F $dir: at least three own solvers verify" \
      test "$(grep -cE '^(fwd|bwd_data|bwd_weights) +cpu:[a-z0-9_:]+ +ok ' "$TMP/d.txt")" -ge 3
  done
done

# The probe records the problem under its 1D string; selection reads it back.
"$CG" probe --db "$TMP/p.db" --problem "$P" --directions fwd,bwd_data,bwd_weights --timing 20 >"$TMP/probe.txt" 2>&1
check "probe: exit 0" test $? -eq 0
"$CG" db show --db "$TMP/p.db" >"$TMP/show.txt" 2>&1
check "db show: the canonical 1D string" grep -qF "$CANON" "$TMP/show.txt"
check "db show: no 2D lift recorded (no ih/kh field)" bash -c "! grep -E 'ih[0-9]|kh[0-9]' '$TMP/show.txt'"
"$CG" driver --db "$TMP/p.db" --problem "$P" -S auto -F 1 -i 1 -t 1 >"$TMP/auto.txt" 2>&1
check "driver -S auto: chooses from the 1D evidence and verifies" \
  bash -c "grep -q 'chose cpu:' '$TMP/auto.txt' && grep -q 'Verifies OK' '$TMP/auto.txt'"
"$CG" report --db "$TMP/p.db" --html "$TMP/r.html" >/dev/null 2>&1
check "report: names the 1D problem" grep -q "g1mb2ic24iw37oc40ow20kw5sw2pw3" "$TMP/r.html"

# .npy files hold N,C,W arrays (no unit H), and read back.
"$CG" driver --problem "$P" -F 1 --seed 3 --save-dir "$TMP/a" -i 1 -t 1 >/dev/null 2>&1
check "npy: x.npy has shape (2, 24, 37)" grep -aq "'shape': (2, 24, 37)" "$TMP/a/x.npy"
check "npy: w.npy has shape (40, 24, 5)" grep -aq "'shape': (40, 24, 5)" "$TMP/a/w.npy"
check "npy: y.npy has shape (2, 40, 20)" grep -aq "'shape': (2, 40, 20)" "$TMP/a/y.npy"
"$CG" driver --problem "$P" -F 1 --load-dir "$TMP/a" -i 1 -t 1 >"$TMP/load.txt" 2>&1
check "npy: loads back and verifies" grep -q "Verifies OK" "$TMP/load.txt"

# Layout names and explicit strides in N,C,W order.
"$CG" driver --problem "--stag=axb --dtag=axb $P" -F 1 -i 1 -t 1 >"$TMP/nwc.txt" 2>&1
check "NWC tensors verify" grep -q "Verifies OK" "$TMP/nwc.txt"
"$CG" driver --problem "--strides=1300x50x1:: $P" -F 1 -i 1 -t 1 -S all >"$TMP/strided.txt" 2>&1
check "explicit N,C,W strides verify" grep -q "Verifies OK" "$TMP/strided.txt"
"$CG" driver --problem "--strides=1000x200x40x1:: $P" -F 1 >"$TMP/bad.txt" 2>&1
check "four strides for a 1D tensor: exit 2" test $? -eq 2
check "... naming the field" grep -q "x_strides: needs 3 strides" "$TMP/bad.txt"

# A solver that hangs above 42 wide: bisect finds the width, a tile works around it.
timeout 120 "$CG" bisect --db "$TMP/b.db" --plugin "$CHAOS" --solver chaos:hang_above_42 \
  --problem mb1ic16iw64oc32kw3pw1 --timeout 1 >"$TMP/bisect.txt" 2>&1
check "bisect: over W by default, boundary 42/43" grep -q "^ok up to 42, hang from 43" "$TMP/bisect.txt"
"$CG" bisect --db "$TMP/b.db" --plugin "$CHAOS" --solver chaos:hang_above_42 \
  --problem mb1ic16iw64oc32kw3pw1 --vary H >"$TMP/vary.txt" 2>&1
check "bisect --vary H on 1D: exit 2 naming the flag" \
  bash -c "test $? -eq 2 && grep -q -- '--vary: H is not a dimension of this 1D problem' '$TMP/vary.txt'"
timeout 120 "$CG" probe --db "$TMP/b.db" --plugin "$CHAOS" --solvers chaos:hang_above_42 \
  --problem mb1ic16iw100oc32kw3pw1 --timeout 1 --timing 0 >"$TMP/tile.txt" 2>&1
check "workaround: a 1D tile below the boundary verifies" \
  grep -qE "xform:tile\(([0-9]+)x\1\):chaos:hang_above_42 +ok" "$TMP/tile.txt"

# A 1D model: wav2vec 2.0's feature encoder (two solvers, statuses only, to keep it short).
timeout 300 "$CG" probe --db "$TMP/m.db" --model wav2vec2_features --solvers 'cpu:im2col_gemm,cpu:direct' \
  --timing 0 >"$TMP/model.txt" 2>&1
check "model wav2vec2_features: works" grep -q "^model wav2vec2_features WORKS: every layer verified" "$TMP/model.txt"

# oneDNN's implementations take 1D problems too (as the 2D lift).
if [ -n "$ONEDNN" ] && [ -f "$ONEDNN" ]; then
  "$CG" probe --db "$TMP/o.db" --plugin "$(readlink -f "$ONEDNN")" --solvers 'onednn:*' \
    --skip-solvers 'onednn:*_avx2*,onednn:*_sse41*' --problem "$P" \
    --directions fwd,bwd_data,bwd_weights --timing 0 >"$TMP/onednn.txt" 2>&1
  "$CG" db show --db "$TMP/o.db" >"$TMP/onednn_rows.txt" 2>&1
  check "oneDNN: its solvers verify on a 1D problem in every direction" \
    test "$(grep -E '^onednn:[^ ]+ +ok ' "$TMP/onednn_rows.txt" | grep -oE '^onednn:[a-z_]+' | sort -u | wc -l)" -eq 3
  check "oneDNN: none wrong or crashed" bash -c "! grep -E ' (wrong|crash|hang) ' '$TMP/onednn_rows.txt'"
else
  echo "skip: oneDNN plugin not built"
fi
finish
