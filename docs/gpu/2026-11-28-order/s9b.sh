#!/bin/bash
# Session 9, call 2 (H200): the tile order (N tiles fastest) against the old M-fastest order, interleaved.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s9b; mkdir -p $O ${OUT:-out}
nvidia-smi --query-gpu=name,driver_version --format=csv > $O/gpu.txt 2>&1
echo "=== gpu_tests (N fastest by default)"; (time timeout 150 db/tests/gpu_tests) > $O/gpu_tests.log 2>&1
grep -E 'PASSED|FAILED|real' $O/gpu_tests.log | head; grep -E 'Failure' -A6 $O/gpu_tests.log | head -20
run() {  # tag batch dir runs variant envs...
  local tag=$1 b=$2 d=$3 n=$4 v=$5; shift 5
  env "$@" timeout 120 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch $b --dtype bf16 --layout nhwc \
    --direction $d --runs $n --only gpu:wgmma_implicit_gemm > $O/${tag}_${v}_r$r.log 2>&1 || echo "rc $? $tag $v"
}
for r in 1 2; do
  run b256 256 fwd 10 m CONVGUARD_WGMMA_ORDER=1; run b256 256 fwd 10 n CONVGUARD_WGMMA_ORDER=2
  run b256 256 fwd 10 n128 CONVGUARD_WGMMA_ORDER=2 CONVGUARD_WGMMA_TILE=128x128
  echo "b256 round $r done $(( $(date +%s) - S )) s"
  run b32 32 fwd 30 m CONVGUARD_WGMMA_ORDER=1; run b32 32 fwd 30 n CONVGUARD_WGMMA_ORDER=2
  run d32 32 bwd_data 30 m CONVGUARD_WGMMA_ORDER=1; run d32 32 bwd_data 30 n CONVGUARD_WGMMA_ORDER=2
  run d256 256 bwd_data 10 m CONVGUARD_WGMMA_ORDER=1; run d256 256 bwd_data 10 n CONVGUARD_WGMMA_ORDER=2
done
python3 devbin/cmp.py $O b256 m n n128 | tee $O/cmp.txt | tail -1
python3 devbin/cmp.py $O b32 m n | tee -a $O/cmp.txt | tail -1
python3 devbin/cmp.py $O d32 m n | tee -a $O/cmp.txt | tail -1
python3 devbin/cmp.py $O d256 m n | tee -a $O/cmp.txt | tail -1
echo "total $(( $(date +%s) - S )) s"
tar -C /tmp -czf ${OUT:-out}/s9b.tgz s9b
