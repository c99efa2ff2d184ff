#!/bin/bash
# Session 17, call 1 (H200): the phased walk's tiles of zeros stored by the producer's idle warps
# while the consumers multiply (store_zero_tiles). Tests (default, walk forced off/on, WS=5),
# memcheck and racecheck over the strided test, an interleaved A/B against session 16's binary
# (db_old), the backward-data peer, all gpu_tests.
set -u
S=$(date +%s)
mkdir -p db db_old && tar -C db -xJf devbin/bin.tar.xz && tar -C db_old -xJf devbin/bin_old.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s17a; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
F='Gpu.TensorCoreWgmmaBulkCopyBackwardData*:Gpu.TensorCoreWgmmaBackwardData*:Gpu.TensorCoreWgmmaTwoPerSm*:Gpu.TensorCoreWgmmaWaveCounting'
for v in D P0 P1 W5; do
  case $v in D) E=X=1;; P0) E=CONVGUARD_WGMMA_PHASED=0;; P1) E=CONVGUARD_WGMMA_PHASED=1;; W5) E=CONVGUARD_WGMMA_WS=5;; esac
  env $E timeout 60 db/tests/gpu_tests --gtest_filter="$F" > $O/tests_$v.log 2>&1; echo "tests $v rc $? $(t)"
  grep -E '^\[  (PASSED|FAILED) |FAILED  \]|Failure|rror' $O/tests_$v.log | head -12
done
for tool in memcheck racecheck; do
  timeout 90 compute-sanitizer --tool $tool --print-limit 5 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBulkCopyBackwardDataStrided' > $O/$tool.log 2>&1; echo "$tool rc $? $(t)"; tail -2 $O/$tool.log
done
run() {  # name bindir envs...
  local n=$1 d=$2; shift 2
  env "$@" timeout 60 $d/bench/gpu_bench --suite devbin/s2.txt --batch 32 --dtype bf16 --layout nhwc \
    --direction bwd_data --runs 30 --only gpu:wgmma_implicit_gemm > $O/v_$n.log 2>&1 || echo "rc $? $n"
}
CONVGUARD_WGMMA_PLAN=1 run plan db X=1
grep "plan:" $O/v_plan.log | sort | uniq -c
for r in 1 2 3; do
  run new_r$r db X=1; run old_r$r db_old X=1; run newwalk_r$r db CONVGUARD_WGMMA_PHASED=1
  run oldwalk_r$r db_old CONVGUARD_WGMMA_PHASED=1; run grid_r$r db CONVGUARD_WGMMA_WS=0
done
for f in $O/v_*.log; do printf '%s ' $(basename $f .log); grep -E '^\s+gpu:wgmma_implicit_gemm' $f | awk '{printf "%s ", $2}'; echo; done > $O/table.txt
sort $O/table.txt; echo "ab $(t)"
PY=python3; [ -x /opt/torch/.venv/bin/python3 ] && PY=/opt/torch/.venv/bin/python3
CUDNN_LIB=$("$PY" -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
CONVGUARD_PLUGINS=$PWD/db/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-} timeout 100 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc \
  --direction bwd_data --runs 30 --calls 1 --only 'gpu:wgmma_*,gpu:tc_*,cudnn:*' --json $O/d32_c1.jsonl > $O/bench_d32_c1.log 2>&1
echo "bwd_data calls 1: rc $? $(t)"
"$PY" bench/gpu_peer.py $O/d32_c1.jsonl > $O/peer_d32_c1.log 2>&1; echo "peer c1 $(t)"; grep -A8 "^geomean" $O/peer_d32_c1.log
timeout 100 db/tests/gpu_tests > $O/gpu_tests_all.log 2>&1; echo "all tests rc $? $(t)"; grep -E '^\[  (PASSED|FAILED) |FAILED  \]' $O/gpu_tests_all.log | head
echo "total $(t)"
tar -C /tmp -czf ${OUT:-out}/s17a.tgz s17a
