#!/bin/bash
# Session 18, call 2 (H200): the bulk stores off for store-bound tiles (y_map). Tests, the A/B on
# res2a_branch2c b256, then the peer: forward b32 alone and 8 back to back, forward b256 alone,
# backward-data b32 alone and 8 back to back.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s18b; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
SHAPES='Gpu.TensorCoreWgmmaOnItsShapes:Gpu.TensorCoreWgmmaBulkCopy*:Gpu.TensorCoreWgmmaBackwardData*:Gpu.LargeLayersVerifyBySampling'
timeout 100 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmma*' > $O/tests_wgmma.log 2>&1; echo "wgmma tests rc $? $(t)"
grep -E '^\[  (PASSED|FAILED) |FAILED  \]|Failure' $O/tests_wgmma.log | head -8
CONVGUARD_WGMMA_WS=5 timeout 100 db/tests/gpu_tests --gtest_filter="$SHAPES" > $O/tests_W5.log 2>&1; echo "W5 rc $? $(t)"
grep -E '^\[  (PASSED|FAILED) |FAILED  \]|Failure' $O/tests_W5.log | head -8
run() {  # name batch envs...
  local n=$1 b=$2; shift 2
  env "$@" timeout 60 db/bench/gpu_bench --suite devbin/r2c.txt --batch $b --dtype bf16 --layout nhwc \
    --direction fwd --runs 30 --only gpu:wgmma_implicit_gemm > $O/v_$n.log 2>&1 || echo "rc $? $n"
}
for r in 1 2 3; do
  for b in 32 256; do run b${b}_def_r$r $b X=1; run b${b}_on_r$r $b CONVGUARD_WGMMA_BULK_STORE=1; run b${b}_off_r$r $b CONVGUARD_WGMMA_BULK_STORE=0; done
done
for f in $O/v_*.log; do printf '%s ' $(basename $f .log); grep -E '^\s+gpu:wgmma_implicit_gemm' $f | awk '{printf "%s ", $2}'; echo; done | sort > $O/table.txt
cat $O/table.txt; echo "ab $(t)"
PY=python3; [ -x /opt/torch/.venv/bin/python3 ] && PY=/opt/torch/.venv/bin/python3
CUDNN_LIB=$("$PY" -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
export CONVGUARD_PLUGINS=$PWD/db/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-}
peer() {  # name direction batch runs calls limit
  timeout $6 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch $3 --dtype bf16 --layout nhwc \
    --direction $2 --runs $4 --calls $5 --only 'gpu:wgmma_*,cudnn:*' --json $O/$1.jsonl > $O/bench_$1.log 2>&1
  echo "$1: rc $? $(t)"
  "$PY" bench/gpu_peer.py $O/$1.jsonl > $O/peer_$1.log 2>&1; grep -A3 "^geomean" $O/peer_$1.log | tail -2
}
peer f32_c1 fwd 32 30 1 100
peer f32_c8 fwd 32 8 8 150
peer d32_c1 bwd_data 32 30 1 100
peer f256_c1 fwd 256 10 1 150
peer d32_c8 bwd_data 32 8 8 150
echo "total $(t)"
xz $O/*.jsonl 2>/dev/null
tar -C /tmp -cJf ${OUT:-out}/s18b.tar.xz s18b
