#!/bin/bash
# Session 16, call 5 (H200): the phased walk dealt as a snake, taken except where phases without
# taps leave the longest phase's tiles fewer than the SMs (phased_bulk_pays); the final binaries.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s16e; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
F='Gpu.TensorCoreWgmmaBulkCopyBackwardData*:Gpu.TensorCoreWgmmaBackwardData*:Gpu.TensorCoreWgmmaTwoPerSm*:Gpu.TensorCoreWgmmaWaveCounting'
for ws in 0 P0; do
  if [ $ws = P0 ]; then E=CONVGUARD_WGMMA_PHASED=0; else E=CONVGUARD_WGMMA_WS=$ws; fi
  env $E timeout 60 db/tests/gpu_tests --gtest_filter="$F" > $O/tests_$ws.log 2>&1; echo "tests $ws rc $? $(t)"
  grep -E '^\[  (PASSED|FAILED) |FAILED  \]|Failure|rror' $O/tests_$ws.log | head -12
done
run() {  # name envs...
  local n=$1; shift
  env "$@" timeout 60 db/bench/gpu_bench --suite devbin/s2.txt --batch 32 --dtype bf16 --layout nhwc \
    --direction bwd_data --runs 30 --only gpu:wgmma_implicit_gemm > $O/v_$n.log 2>&1 || echo "rc $? $n"
}
CONVGUARD_WGMMA_PLAN=1 run plan X=1
grep "plan:" $O/v_plan.log | sort | uniq -c
for r in 1 2 3; do run new_r$r X=1; run old_r$r CONVGUARD_WGMMA_WS=0; run walk_r$r CONVGUARD_WGMMA_PHASED=1; done
for f in $O/v_*.log; do printf '%s ' $(basename $f .log); grep -E '^\s+gpu:wgmma_implicit_gemm' $f | awk '{printf "%s ", $2}'; echo; done > $O/table.txt
sort $O/table.txt; echo "ab $(t)"
PY=python3; [ -x /opt/torch/.venv/bin/python3 ] && PY=/opt/torch/.venv/bin/python3
CUDNN_LIB=$("$PY" -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
CONVGUARD_PLUGINS=$PWD/db/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-} timeout 100 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc \
  --direction bwd_data --runs 30 --calls 1 --only 'gpu:wgmma_*,gpu:tc_*,cudnn:*' --json $O/d32_c1.jsonl > $O/bench_d32_c1.log 2>&1
echo "bwd_data calls 1: rc $? $(t)"
"$PY" bench/gpu_peer.py $O/d32_c1.jsonl > $O/peer_d32_c1.log 2>&1; echo "peer c1 $(t)"; grep -A8 "^geomean" $O/peer_d32_c1.log
timeout 100 db/tests/gpu_tests > $O/gpu_tests_all.log 2>&1; echo "all tests rc $? $(t)"; grep -E '^\[  (PASSED|FAILED) |FAILED  \]' $O/gpu_tests_all.log | head
timeout 40 compute-sanitizer --tool memcheck --print-limit 5 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBulkCopyBackwardDataStrided' > $O/memcheck.log 2>&1; echo "memcheck rc $? $(t)"; tail -2 $O/memcheck.log
echo "total $(t)"
tar -C /tmp -czf ${OUT:-out}/s16e.tgz s16e
