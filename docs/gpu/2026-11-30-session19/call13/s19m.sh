#!/bin/bash
# Session 19, call 13 (H200): the review's fixes (wide_fill_split only from long_reduction stages;
# split_count's fill only where tile_for could take it, no tile forced; the test's plan checks on
# 132 SMs only). gpu_tests; the wgmma shape tests under WS=4 and with 128 x 256 tiles forced; the
# plans of both directions at b16, b32 and b256 printed (b16: the range the fix took back).
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s19m; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
res() { grep -E '^\[  (PASSED|FAILED) |FAILED  \]|Failure|ERROR SUMMARY' $1 | head -8; }
NEW='Gpu.TensorCoreWgmmaWideSplitsAndPixelTies'
timeout 150 db/tests/gpu_tests > $O/tests_all.log 2>&1; echo "gpu_tests rc $? $(t)"; res $O/tests_all.log
SHAPES="Gpu.TensorCoreWgmmaOnItsShapes:Gpu.TensorCoreWgmmaBackwardData*:$NEW"
for v in W4 T256; do
  case $v in W4) E="CONVGUARD_WGMMA_WS=4";; T256) E="CONVGUARD_WGMMA_TILE=128x256";; esac
  env $E timeout 100 db/tests/gpu_tests --gtest_filter="$SHAPES" > $O/tests_$v.log 2>&1; echo "tests $v rc $? $(t)"; res $O/tests_$v.log
done
for d in fwd bwd_data; do for b in 16 32 256; do
  CONVGUARD_WGMMA_PLAN=1 timeout 60 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch $b --dtype bf16 --layout nhwc \
    --direction $d --runs 2 --only gpu:wgmma_implicit_gemm > $O/plan_${d}_b$b.log 2>&1; echo "plan $d $b rc $? $(t)"
done; done
# Splits of 12-14 stages (b8 and b16's res5 3x3 layers: 6 splits of 12) were not measured: the plan
# against the old plan (128 x 128 split in 2) and 128 x 256 at 4 and 5 splits, two rounds.
run() {  # name batch envs...
  local n=$1 b=$2; shift 2
  env CONVGUARD_WGMMA_PLAN=1 "$@" timeout 60 db/bench/gpu_bench --suite devbin/l5.txt --batch $b --dtype bf16 --layout nhwc \
    --direction fwd --runs 30 --only gpu:wgmma_implicit_gemm > $O/v_$n.log 2>&1 || echo "rc $? $n"
}
for r in 1 2; do for b in 8 16; do
  for v in def t128s2 t256s4 t256s5; do
    case $v in def) E="X=1";; t128s2) E="CONVGUARD_WGMMA_TILE=128x128 CONVGUARD_WGMMA_SPLIT=2";;
      t256s*) E="CONVGUARD_WGMMA_TILE=128x256 CONVGUARD_WGMMA_SPLIT=${v#t256s}";; esac
    run b${b}_${v}_r$r $b $E
  done
done; done
for f in $O/v_*.log; do printf '%s ' $(basename $f .log); grep -E '^\s+gpu:wgmma_implicit_gemm' $f | awk '{printf "%s ", $2}'; grep -o "plan: .*" $f | head -1; done | sort > $O/table.txt
cat $O/table.txt
echo "total $(t)"
