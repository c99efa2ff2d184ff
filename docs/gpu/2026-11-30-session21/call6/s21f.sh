#!/bin/bash
# Session 21, call 6 (H200): the reduction pass's programmatic launch with the backward-weights
# kernels' trigger moved to after each block's tile is stored (call 4-5 had it at their start), the
# forward kernels back to plain launches. gpu_tests; memcheck over the split tests; the A/B on
# backward-weights b32 (CONVGUARD_REDUCE_PLAIN=1), four rounds.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin21.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s21f; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
timeout 240 db/tests/gpu_tests > $O/tests_all.log 2>&1; echo "gpu_tests rc $? $(t)"; tail -3 $O/tests_all.log
timeout 150 compute-sanitizer --tool memcheck db/tests/gpu_tests --gtest_filter='*WgmmaBackwardWeights*:*WideSplits*' > $O/memcheck.log 2>&1
echo "memcheck rc $? $(t)"; grep -E "ERROR SUMMARY|PASSED|FAILED" $O/memcheck.log | tail -3
ab() {  # name direction
  for r in 1 2 3 4; do
    for v in pdl plain; do
      if [ $v = plain ]; then export CONVGUARD_REDUCE_PLAIN=1; else unset CONVGUARD_REDUCE_PLAIN; fi
      timeout 60 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc \
        --direction $2 --runs 20 --calls 1 --only 'gpu:wgmma_*' > $O/ab_$1_${v}_r$r.log 2>&1
    done
  done
  unset CONVGUARD_REDUCE_PLAIN
  echo "ab $1 $(t)"
}
ab w32 bwd_weights
echo "total $(t)"
xz $O/*.jsonl 2>/dev/null
tar -C /tmp -cJf ${OUT:-out}/s21f.tar.xz s21f
