#!/usr/bin/env bash
# Workarounds, models and bisect end to end with the chaos plugin (and the simulated MIOpen for
# transforms around a device solver): bisect finds the seeds' planted boundaries exactly; a model
# whose layers hang above 42x42 with every plain solver is "works with workarounds" and the
# chosen plans verify; a transform around a crashing solver is classified crash; bad input exits
# 2 naming the flag.
# Usage: workarounds_test.sh convguard convguard_chaos.so convguard_miopen.so libfake_miopen.so
set -u
CG=$(readlink -f "$1")
CHAOS=$(readlink -f "$2")
MIOPEN=$(readlink -f "$3")
FAKE=$(readlink -f "$4")
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export TMPDIR=$TMP
DB=$TMP/w.db
source "$(dirname "$0")/check_lib.sh"
P64=mb1ic16ih64oc32kh3ph1

# bisect: the seeds' boundaries (seed 002: 42x42; seed 004: 16->32 above 32x32).
timeout 120 "$CG" bisect --db "$DB" --plugin "$CHAOS" --solver chaos:hang_above_42 --problem "$P64" \
  --timeout 1 >"$TMP/b1.txt" 2>&1
check "bisect: ok up to 42x42, hang from 43x43" grep -q "^ok up to 42x42, hang from 43x43" "$TMP/b1.txt"
timeout 120 "$CG" bisect --db "$DB" --plugin "$CHAOS" --solver chaos:hang_16_32_above_32 \
  --problem "$P64" --timeout 1 >"$TMP/b2.txt" 2>&1
check "bisect: ok up to 32x32, hang from 33x33" grep -q "^ok up to 32x32, hang from 33x33" "$TMP/b2.txt"
check "bisect: every step is recorded" test "$("$CG" db show --db "$DB" 2>/dev/null | grep -c 'chaos:hang_above_42')" -ge 8
timeout 60 "$CG" bisect --db "$DB" --plugin "$CHAOS" --solver chaos:hang_above_42 \
  --problem mb1ic16ih64iw40oc32kh3kw3ph1pw1 --vary H --range 30:50 --timeout 1 >"$TMP/b3.txt" 2>&1
check "bisect: H alone" grep -q "^ok up to 42x40, hang from 43x40" "$TMP/b3.txt"
timeout 60 "$CG" bisect --db "$DB" --plugin "$CHAOS" --solver chaos:hang_above_42 --problem "$P64" \
  --vary H --range 40:44 --timeout 1 >"$TMP/b4.txt" 2>&1
check "bisect: no boundary when W alone already hangs (both ends said)" \
  grep -q "^no boundary: hang at both ends (40x64 and 44x64)" "$TMP/b4.txt"

# A workaround below the bisected boundary: tile(42x42) first.
timeout 120 "$CG" probe --db "$DB" --plugin "$CHAOS" --solvers chaos:hang_above_42 \
  --problem mb1ic16ih100oc32kh3ph1 --timeout 1 --timing 0 >"$TMP/p1.txt" 2>&1
check "workaround: tiles below the bisected boundary" \
  grep -q "xform:tile(42x42):chaos:hang_above_42 ok" "$TMP/p1.txt"

# A model whose layers hang above 42x42 with every plain solver: works with workarounds.
timeout 120 "$CG" probe --db "$TMP/m.db" --plugin "$CHAOS" --solvers chaos:hang_above_42 \
  --model seed003_cnn --model cifar_cnn --batch 2 --timeout 2 --timing 0 >"$TMP/model.txt" 2>&1
rc=$?
check "model: exit 0 (works with workarounds is not a failure)" test "$rc" -eq 0
check "model: seed003_cnn works with workarounds" \
  grep -q "model seed003_cnn WORKS WITH WORKAROUNDS: 1 layer" "$TMP/model.txt"
check "model: conv1 (64x64) runs tiled" grep -q "conv1 (x1): xform:tile([0-9x]*):chaos:hang_above_42" "$TMP/model.txt"
check "models table: cifar_cnn (32x32) works" grep -q "^cifar_cnn *works$" "$TMP/model.txt"
check "models table: seed003_cnn works with workarounds" \
  grep -q "^seed003_cnn *works with workarounds$" "$TMP/model.txt"
# The chosen plan verifies again through the library's selection (driver -S auto).
CONVGUARD_PLUGINS=$CHAOS "$CG" driver conv --db "$TMP/m.db" -S auto -n 2 -c 3 -H 64 -W 64 -k 32 -y 3 -x 3 \
  -p 1 -q 1 -F 1 -V 1 >"$TMP/auto.txt" 2>&1
check "model: selection returns the workaround, and it verifies" \
  grep -q "chose xform:tile([0-9x]*):chaos:hang_above_42: .*the workaround" "$TMP/auto.txt"
check "model: ... Verifies OK" grep -q "Verifies OK" "$TMP/auto.txt"

# A model that fails: every plain solver crashes, and so does every transform around it.
timeout 120 "$CG" probe --db "$TMP/f.db" --plugin "$CHAOS" --solvers chaos:segfault \
  --model seed003_cnn --timeout 2 --timing 0 >"$TMP/fail.txt" 2>&1
rc=$?
check "failing model: exit 4" test "$rc" -eq 4
check "failing model: FAILS with the layers and why" \
  grep -q "model seed003_cnn FAILS on this device: 3 layer" "$TMP/fail.txt"
check "failing model: the reason names the crash" grep -q "conv1 (x1): crash chaos:segfault" "$TMP/fail.txt"
check "a transform around a crashing solver is a crash (signal recorded)" \
  grep -q "xform:relayout(nhwc):chaos:segfault crash .*signal 11" "$TMP/fail.txt"

# A transform named in --solvers, around a device solver (the simulated MIOpen's GEMM hangs
# above 42x42 in every direction): the tensors go through the device's memory calls. The batch-2
# problem is the one split_batch(1) applies to (on P64's single image it declines: one part).
CONVGUARD_MIOPEN_PATH=$FAKE timeout 120 "$CG" probe --db "$TMP/h.db" \
  --plugin "$MIOPEN" --device hip:0 --problem "$P64" --problem mb2ic16ih64oc32kh3ph1 \
  --directions fwd,bwd_weights \
  --solvers 'miopen:GemmFwdRest,miopen:GemmWrwUniversal,xform:split_batch(1):xform:tile(32x32):miopen:GemmFwdRest' \
  --workarounds off --timeout 2 --timing 0 >"$TMP/hip.txt" 2>&1
check "device: the named nested transform verifies on hip:0 (fwd)" \
  grep -qE "xform:split_batch\(1\):xform:tile\(32x32\):miopen:GemmFwdRest +ok" "$TMP/hip.txt"
check "device: --workarounds off tries none" bash -c "! grep -q '^workarounds' '$TMP/hip.txt'"
CONVGUARD_MIOPEN_PATH=$FAKE timeout 120 "$CG" probe --db "$TMP/h.db" \
  --plugin "$MIOPEN" --device hip:0 --problem "$P64" --directions fwd,bwd_weights \
  --solvers 'miopen:GemmFwdRest,miopen:GemmWrwUniversal' --timeout 2 --timing 0 >"$TMP/hip2.txt" 2>&1
check "device: backward-weights tiles add their dw on the host (verified)" \
  grep -q "xform:tile([0-9x]*):miopen:GemmWrwUniversal ok" "$TMP/hip2.txt"

# Bad input: exit 2, the flag named.
"$CG" probe --db "$TMP/x.db" --workarounds sometimes --problem "$P64" >"$TMP/e1.txt" 2>&1
check "bad --workarounds: exit 2 naming the flag" bash -c "test $? -eq 2 && grep -q -- '--workarounds' '$TMP/e1.txt'"
"$CG" probe --db "$TMP/x.db" --model resnet51 >"$TMP/e2.txt" 2>&1
check "unknown --model: exit 2, the models listed" bash -c "test $? -eq 2 && grep -q 'resnet50' '$TMP/e2.txt'"
"$CG" probe --db "$TMP/x.db" --solvers 'xform:tile(32x32):cpu:nothing' --problem "$P64" >"$TMP/e3.txt" 2>&1
check "bad transform id in --solvers: exit 2, the inner named" bash -c "test $? -eq 2 && grep -q \"unknown solver 'cpu:nothing'\" '$TMP/e3.txt'"
"$CG" bisect --db "$TMP/x.db" --problem "$P64" >"$TMP/e4.txt" 2>&1
check "bisect without --solver: exit 2" bash -c "test $? -eq 2 && grep -q -- '--solver' '$TMP/e4.txt'"
"$CG" bisect --db "$TMP/x.db" --solver cpu:direct --problem "$P64" --range 9:x >"$TMP/e5.txt" 2>&1
check "bisect bad --range: exit 2" bash -c "test $? -eq 2 && grep -q -- '--range' '$TMP/e5.txt'"
"$CG" models >"$TMP/models.txt"
check "models lists the nine models" test "$(grep -c -E '^(cifar_cnn|efficientnet_b0|mobilenet_v2|resnet18|resnet50|seed003_cnn|unet3d|wav2vec2_features|yolo_darknet53) ' "$TMP/models.txt")" -eq 9
finish
