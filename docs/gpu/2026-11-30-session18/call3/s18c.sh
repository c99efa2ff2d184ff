#!/bin/bash
# Session 18, call 3 (H200): the final tree (y_map's rule by tiles an SM; write_fragments shared by
# both epilogues). gpu_tests, the shape tests under each loader forced and with the bulk stores
# off, memcheck over the wgmma tests, racecheck over the new one, res2a_branch2c's default at b32
# and b256 against the stores forced on and off.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s18c; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
res() { grep -E '^\[  (PASSED|FAILED) |FAILED  \]|Failure|ERROR SUMMARY|RACECHECK SUMMARY' $1 | head -8; }
SHAPES='Gpu.TensorCoreWgmmaOnItsShapes:Gpu.TensorCoreWgmmaBulkCopy*:Gpu.TensorCoreWgmmaBackwardData*:Gpu.LargeLayersVerifyBySampling'
timeout 150 db/tests/gpu_tests > $O/tests_all.log 2>&1; echo "gpu_tests rc $? $(t)"; res $O/tests_all.log
for v in W0 W4 W5 W5S0 P1; do
  case $v in W0) E="CONVGUARD_WGMMA_WS=0";; W4) E="CONVGUARD_WGMMA_WS=4";; W5) E="CONVGUARD_WGMMA_WS=5";; W5S0) E="CONVGUARD_WGMMA_WS=5 CONVGUARD_WGMMA_BULK_STORE=0";; P1) E="CONVGUARD_WGMMA_PHASED=1";; esac
  env $E timeout 100 db/tests/gpu_tests --gtest_filter="$SHAPES" > $O/tests_$v.log 2>&1; echo "tests $v rc $? $(t)"; res $O/tests_$v.log
done
timeout 150 compute-sanitizer --tool memcheck --print-limit 5 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmma*' > $O/memcheck.log 2>&1; echo "memcheck rc $? $(t)"; res $O/memcheck.log
timeout 60 compute-sanitizer --tool racecheck --print-limit 5 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBulkCopyStores' > $O/racecheck.log 2>&1; echo "racecheck rc $? $(t)"; res $O/racecheck.log
run() {  # name batch envs...
  local n=$1 b=$2; shift 2
  env "$@" timeout 60 db/bench/gpu_bench --suite devbin/r2c.txt --batch $b --dtype bf16 --layout nhwc \
    --direction fwd --runs 30 --only gpu:wgmma_implicit_gemm > $O/v_$n.log 2>&1 || echo "rc $? $n"
}
for r in 1 2; do
  for b in 32 256; do run b${b}_def_r$r $b X=1; run b${b}_on_r$r $b CONVGUARD_WGMMA_BULK_STORE=1; run b${b}_off_r$r $b CONVGUARD_WGMMA_BULK_STORE=0; done
done
for f in $O/v_*.log; do printf '%s ' $(basename $f .log); grep -E '^\s+gpu:wgmma_implicit_gemm' $f | awk '{printf "%s ", $2}'; echo; done | sort > $O/table.txt
cat $O/table.txt; echo "total $(t)"
