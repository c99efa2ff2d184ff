#!/bin/bash
# Session 13, call 2 (H200): where gpu:wgmma_bwd_weights' bulk-copy kernel spends its time (ncu on
# three ResNet-50 b32 layers, the main kernel and the split reduction), cluster sizes and splits
# forced, and the fixed bulk-copy test.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s13b; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
B='Gpu.TensorCoreWgmmaBackwardWeights*:Gpu.WgmmaBackwardWeights*'
timeout 90 db/tests/gpu_tests --gtest_filter="$B" > $O/bwdw.log 2>&1
echo "bwdw default: $(grep -E '^\[  (PASSED|FAILED)' $O/bwdw.log | tr '\n' ' ') $(t)"; grep -E 'Failure' -B2 -A8 $O/bwdw.log | head -20
i=0
for layer in 'mb32ic512ih28oc128oh28kh1_n"res3[b-d]_branch2a"' 'mb32ic512ih7oc512oh7kh3ph1_n"res5[b-c]_branch2b"' 'mb32ic256ih14oc1024oh14kh1_n"res4[a-f]_branch2c"'; do
  i=$((i+1)); echo "$layer" > $O/one$i.txt
  CONVGUARD_WGMMA_BWDW_PLAN=1 timeout 100 ncu --kernel-name regex:'wgmma_bwd_weights|reduce_splits' --launch-skip 4 --launch-count 2 --set full \
    db/bench/gpu_bench --suite $O/one$i.txt --batch 32 --dtype bf16 --layout nhwc --direction bwd_weights --runs 3 \
    --only gpu:wgmma_bwd_weights > $O/ncu$i.txt 2>&1
  echo "ncu $i rc $? $(t)"; grep -E "plan:|^  [a-zA-Z_].*\(|Duration|Compute \(SM\) Throughput|Memory Throughput|L2 Cache Throughput|DRAM Throughput|No Eligible|Issue Slots Busy" $O/ncu$i.txt | head -24
done
run() {  # tag batch dir runs variant envs...
  local tag=$1 b=$2 d=$3 n=$4 v=$5; shift 5
  env "$@" timeout 90 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch $b --dtype bf16 --layout nhwc \
    --direction $d --runs $n --only gpu:wgmma_bwd_weights > $O/${tag}_${v}_r$r.log 2>&1 || echo "rc $? $tag $v"
}
for r in 1 2; do
  run w32 32 bwd_weights 30 auto X=1; run w32 32 bwd_weights 30 cl4 CONVGUARD_WGMMA_BWDW_CLUSTER=4
  run w32 32 bwd_weights 30 cl8 CONVGUARD_WGMMA_BWDW_CLUSTER=8; run w32 32 bwd_weights 30 cl1 CONVGUARD_WGMMA_BWDW_CLUSTER=1
done
python3 devbin/cmp.py $O w32 auto cl4 cl8 cl1 | tee $O/cmp.txt
echo "total $(t)"
tar -C /tmp -czf ${OUT:-out}/s13b.tgz s13b
