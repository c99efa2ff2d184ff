#!/bin/bash
# Session 21, call 9 (H200): the review's fixes (the first kernel's launch checked before the pass;
# the dependent launch tried only with no error pending). gpu_tests; memcheck over the split tests;
# the A/B on backward-weights b32, two rounds.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin21.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s21i; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
timeout 240 db/tests/gpu_tests > $O/tests_all.log 2>&1; echo "gpu_tests rc $? $(t)"; tail -3 $O/tests_all.log
timeout 150 compute-sanitizer --tool memcheck db/tests/gpu_tests --gtest_filter='*WgmmaBackwardWeights*:*WideSplits*' > $O/memcheck.log 2>&1
echo "memcheck rc $? $(t)"; grep -E "ERROR SUMMARY|PASSED|FAILED" $O/memcheck.log | tail -3
ab() {  # name direction
  for r in 1 2; do
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
tar -C /tmp -cJf ${OUT:-out}/s21i.tar.xz s21i
