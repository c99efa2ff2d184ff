#!/bin/bash
# Session 10, call 6 (H200): 128 x 64 short reductions on the persistent bulk-copy kernel; tests;
# timed against call 5's binary (old), interleaved; then the whole honest peer (PARTS=peer).
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s10f; mkdir -p $O ${OUT:-out}
echo "=== gpu_tests"; (time timeout 120 db/tests/gpu_tests) > $O/gpu_tests.log 2>&1
grep -E 'PASSED|FAILED|real' $O/gpu_tests.log | head; grep -E 'Failure' -B2 -A8 $O/gpu_tests.log | head -30
run() {  # tag batch dir runs variant
  local tag=$1 b=$2 d=$3 n=$4 v=$5 G=db/bench/gpu_bench
  [ $v = old ] && G=db/old/bench/gpu_bench
  timeout 60 $G --suite data/suites/resnet50.txt --batch $b --dtype bf16 --layout nhwc \
    --direction $d --runs $n --only gpu:wgmma_implicit_gemm > $O/${tag}_${v}_r$r.log 2>&1 || echo "rc $? $tag $v"
}
for r in 1 2; do
  for t in "b32 32 fwd 30" "d32 32 bwd_data 30" "b256 256 fwd 10" "d256 256 bwd_data 10"; do set -- $t
    run $1 $2 $3 $4 old; run $1 $2 $3 $4 new
  done
done
for t in b32 d32 b256 d256; do python3 devbin/cmp.py $O $t old new | tee -a $O/cmp.txt | tail -1; done
echo "=== peer; $(( $(date +%s) - S )) s"
( time OUT=$O/peer BUILD=db PARTS=peer bash scripts/gpu_check.sh ) > $O/peer_step.log 2>&1
tail -12 $O/peer_step.log
echo "total $(( $(date +%s) - S )) s"
tar -C /tmp -czf ${OUT:-out}/s10f.tgz s10f
