#!/bin/bash
# Session 14, call 5 (H200): the split reduction's kernels asking for the shared-memory carveout of
# the kernels around them, and the bulk-copy producers prefetching their tensor maps: A/B against
# call 4's binary in all three directions, gpu_tests.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s14e; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
(time timeout 150 db/tests/gpu_tests) > $O/gpu_tests.log 2>&1
echo "gpu_tests: $(grep -E '^\[  (PASSED|FAILED)' $O/gpu_tests.log | tr '\n' ' ') $(t)"; grep -E 'Failure' -B2 -A8 $O/gpu_tests.log | head -30
run() {  # tag dir runs variant solver
  local tag=$1 d=$2 n=$3 v=$4 s=$5 G=db/bench/gpu_bench
  [ $v = old ] && G=db/old/bench/gpu_bench
  timeout 90 $G --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc \
    --direction $d --runs $n --only $s > $O/${tag}_${v}_r$r.log 2>&1 || echo "rc $? $tag $v"
}
for r in 1 2; do
  run w32 bwd_weights 20 old gpu:wgmma_bwd_weights; run w32 bwd_weights 20 new gpu:wgmma_bwd_weights
  run f32 fwd 20 old gpu:wgmma_implicit_gemm; run f32 fwd 20 new gpu:wgmma_implicit_gemm
  run d32 bwd_data 20 old gpu:wgmma_implicit_gemm; run d32 bwd_data 20 new gpu:wgmma_implicit_gemm
done
for tag in w32 f32 d32; do python3 devbin/cmp.py $O $tag old new | tee $O/cmp_$tag.txt | tail -1; done
echo "total $(t)"
tar -C /tmp -czf ${OUT:-out}/s14e.tgz s14e
