#!/bin/bash
# Session 16, call 4 (H200): strided backward-data's persistent bulk-copy walk over the stride
# phases (WgPlan::plan_phased_bulk), taken where the longest phase fills a wave (phased_bulk_pays); the final binaries. Tests (default, WS=0, WS=5), A/B timing against the
# two-warpgroup phased grid (CONVGUARD_WGMMA_WS=0) on the six stride-2 layers, the peer on
# ResNet-50 b32 bf16 backward-data, the whole gpu_tests, memcheck over the new test.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s16d; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
F='Gpu.TensorCoreWgmmaBulkCopyBackwardData*:Gpu.TensorCoreWgmmaBackwardData*:Gpu.TensorCoreWgmmaTwoPerSm*:Gpu.TensorCoreWgmmaWaveCounting'
for ws in def 0 5 P0; do
  if [ $ws = def ]; then E=X=1; elif [ $ws = P0 ]; then E=CONVGUARD_WGMMA_PHASED=0; else E=CONVGUARD_WGMMA_WS=$ws; fi
  env $E timeout 120 db/tests/gpu_tests --gtest_filter="$F" > $O/tests_$ws.log 2>&1; echo "tests $ws rc $? $(t)"
  grep -E '^\[  (PASSED|FAILED) |FAILED  \]|Failure|rror' $O/tests_$ws.log | head -12
done
run() {  # name envs...
  local n=$1; shift
  env "$@" timeout 60 db/bench/gpu_bench --suite devbin/s2.txt --batch 32 --dtype bf16 --layout nhwc \
    --direction bwd_data --runs 30 --only gpu:wgmma_implicit_gemm > $O/v_$n.log 2>&1 || echo "rc $? $n"
}
CONVGUARD_WGMMA_PLAN=1 run plan X=1
grep "plan:" $O/v_plan.log | sort | uniq -c
for r in 1 2 3; do run new_r$r X=1; run old_r$r CONVGUARD_WGMMA_WS=0; done
for f in $O/v_*.log; do printf '%s ' $(basename $f .log); grep -E '^\s+gpu:wgmma_implicit_gemm' $f | awk '{printf "%s ", $2}'; echo; done > $O/table.txt
sort $O/table.txt; echo "ab $(t)"
PY=python3; [ -x /opt/torch/.venv/bin/python3 ] && PY=/opt/torch/.venv/bin/python3
CUDNN_LIB=$("$PY" -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
for c in 1 8; do
  r=$([ $c = 1 ] && echo 30 || echo 8)
  CONVGUARD_PLUGINS=$PWD/db/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-} timeout 240 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc \
    --direction bwd_data --runs $r --calls $c --only 'gpu:wgmma_*,gpu:tc_*,cudnn:*' --json $O/d32_c$c.jsonl > $O/bench_d32_c$c.log 2>&1
  echo "bwd_data calls $c: rc $? $(t)"
  "$PY" bench/gpu_peer.py $O/d32_c$c.jsonl > $O/peer_d32_c$c.log 2>&1; echo "peer c$c $(t)"; grep -A8 "^geomean" $O/peer_d32_c$c.log
done
timeout 200 db/tests/gpu_tests > $O/gpu_tests_all.log 2>&1; echo "all tests rc $? $(t)"; grep -E '^\[  (PASSED|FAILED) |FAILED  \]|tests ran' $O/gpu_tests_all.log | head
timeout 150 compute-sanitizer --tool memcheck --print-limit 5 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBulkCopyBackwardDataStrided' > $O/memcheck.log 2>&1; echo "memcheck rc $? $(t)"; tail -4 $O/memcheck.log
timeout 120 compute-sanitizer --tool racecheck --print-limit 5 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBulkCopyBackwardDataStrided' > $O/racecheck.log 2>&1; echo "racecheck rc $? $(t)"; tail -4 $O/racecheck.log
echo "total $(t)"
tar -C /tmp -czf ${OUT:-out}/s16d.tgz s16d
