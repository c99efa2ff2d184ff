#!/bin/bash
# Session 20, call 1 (H200): the ws-0 pixel-wide tie (wgmma_tiles.cuh). gpu_tests; the plans of
# forward and backward-data at b16, b32, b256 against session 19's (call13, 831355b: the same
# plans as 429c265) ; backward-data b256 timed with the plan and with pixel-wide tiles never taken
# (CONVGUARD_WGMMA_PIXELS=1), two interleaved rounds.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s20a; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
res() { grep -E '^\[  (PASSED|FAILED) |FAILED  \]|Failure' $1 | head -8; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $O/gpu.txt 2>&1
timeout 170 db/tests/gpu_tests > $O/tests_all.log 2>&1; echo "gpu_tests rc $? $(t)"; res $O/tests_all.log
for d in fwd bwd_data; do for b in 16 32 256; do
  CONVGUARD_WGMMA_PLAN=1 timeout 60 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch $b --dtype bf16 --layout nhwc \
    --direction $d --runs 2 --only gpu:wgmma_implicit_gemm > $O/plan_${d}_b$b.log 2>&1; echo "plan $d $b rc $? $(t)"
  diff <(grep -o 'plan: .*' docs/gpu/2026-11-30-session19/call13/plan_${d}_b$b.log) <(grep -o 'plan: .*' $O/plan_${d}_b$b.log) > $O/plan_diff_${d}_b$b.txt
  echo "  changed plan lines: $(grep -c '^>' $O/plan_diff_${d}_b$b.txt)"
done; done
run() {  # name batch direction runs envs...
  local n=$1 b=$2 d=$3 r=$4; shift 4
  env CONVGUARD_WGMMA_PLAN=1 "$@" timeout 120 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch $b --dtype bf16 --layout nhwc \
    --direction $d --runs $r --only gpu:wgmma_implicit_gemm > $O/v_$n.log 2>&1 || echo "rc $? $n"
}
for r in 1 2; do
  run d256_def_r$r 256 bwd_data 5 X=1
  run d256_p1_r$r 256 bwd_data 5 CONVGUARD_WGMMA_PIXELS=1
  echo "round $r $(t)"
done
for f in $O/v_*.log; do printf '%s ' $(basename $f .log); grep -E '^\s+gpu:wgmma_implicit_gemm' $f | awk '{printf "%s ", $2}'; echo; done | sort > $O/table.txt
cat $O/table.txt; echo "total $(t)"
tar -C /tmp -cJf ${OUT:-out}/s20a.tar.xz s20a
