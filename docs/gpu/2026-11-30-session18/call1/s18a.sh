#!/bin/bash
# Session 18, call 1 (H200): the persistent bulk-copy kernel's epilogue by bulk tensor stores
# (store_bulk, CONVGUARD_WGMMA_BULK_STORE=0 turns it off). Tests, sanitizers, an interleaved A/B of
# the stores on and off (forward and backward-data b32, forward b256), the forward peer alone.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s18a; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
SHAPES='Gpu.TensorCoreWgmmaOnItsShapes:Gpu.TensorCoreWgmmaBulkCopy*:Gpu.TensorCoreWgmmaBackwardData*:Gpu.LargeLayersVerifyBySampling'
timeout 240 db/tests/gpu_tests > $O/tests_all.log 2>&1; echo "gpu_tests rc $? $(t)"
grep -E '^\[  (PASSED|FAILED) |FAILED  \]|Failure' $O/tests_all.log | head -12
for v in W5 W5S0 S0; do
  case $v in W5) E="CONVGUARD_WGMMA_WS=5";; W5S0) E="CONVGUARD_WGMMA_WS=5 CONVGUARD_WGMMA_BULK_STORE=0";; S0) E="CONVGUARD_WGMMA_BULK_STORE=0";; esac
  env $E timeout 150 db/tests/gpu_tests --gtest_filter="$SHAPES" > $O/tests_$v.log 2>&1; echo "tests $v rc $? $(t)"
  grep -E '^\[  (PASSED|FAILED) |FAILED  \]|Failure' $O/tests_$v.log | head -8
done
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --print-limit 5 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBulkCopyStores' > $O/$tool.log 2>&1; echo "$tool rc $? $(t)"; tail -2 $O/$tool.log
done
run() {  # name dir batch envs...
  local n=$1 d=$2 b=$3; shift 3
  env "$@" timeout 100 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch $b --dtype bf16 --layout nhwc \
    --direction $d --runs 30 --only gpu:wgmma_implicit_gemm > $O/v_$n.log 2>&1 || echo "rc $? $n"
}
CONVGUARD_WGMMA_PLAN=1 run plan_fwd fwd 32 X=1
CONVGUARD_WGMMA_PLAN=1 run plan_bwd bwd_data 32 X=1
for r in 1 2 3; do
  run f32_on_r$r fwd 32 X=1; run f32_off_r$r fwd 32 CONVGUARD_WGMMA_BULK_STORE=0
  run d32_on_r$r bwd_data 32 X=1; run d32_off_r$r bwd_data 32 CONVGUARD_WGMMA_BULK_STORE=0
done
echo "ab32 $(t)"
for r in 1 2; do run f256_on_r$r fwd 256 X=1; run f256_off_r$r fwd 256 CONVGUARD_WGMMA_BULK_STORE=0; done
echo "ab256 $(t)"
for f in $O/v_[fd]*.log; do printf '%s ' $(basename $f .log); grep -E '^\s+gpu:wgmma_implicit_gemm' $f | awk '{printf "%s ", $2}'; echo; done > $O/table.txt
sort $O/table.txt
PY=python3; [ -x /opt/torch/.venv/bin/python3 ] && PY=/opt/torch/.venv/bin/python3
CUDNN_LIB=$("$PY" -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
export CONVGUARD_PLUGINS=$PWD/db/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-}
timeout 130 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc \
  --direction fwd --runs 30 --calls 1 --only 'gpu:wgmma_*,cudnn:*' --json $O/f32_c1.jsonl > $O/bench_f32_c1.log 2>&1
echo "fwd calls 1: rc $? $(t)"
"$PY" bench/gpu_peer.py $O/f32_c1.jsonl > $O/peer_f32_c1.log 2>&1; echo "peer c1 $(t)"; grep -A8 "^geomean" $O/peer_f32_c1.log
echo "total $(t)"
xz $O/*.jsonl 2>/dev/null
tar -C /tmp -cJf ${OUT:-out}/s18a.tar.xz s18a
