#!/bin/bash
# Session 9, call 1 (H200): the final bwd-weights cluster rule verified and timed; the peer table
# retaken on the H200 (bf16 b32 three directions, f32 fwd, bf16 fwd b256).
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s9a; mkdir -p $O ${OUT:-out}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv > $O/gpu.txt 2>&1; cat $O/gpu.txt
for p in /opt/torch/.venv/bin/python3 python3; do $p -c 'import torch;print(torch.__version__, torch.cuda.is_available())' 2>&1 | sed "s|^|$p: |"; done
echo "=== gpu_tests"; (time timeout 150 db/tests/gpu_tests) > $O/gpu_tests.log 2>&1
grep -E 'PASSED|FAILED|real' $O/gpu_tests.log | head; grep -E 'Failure' -A6 $O/gpu_tests.log | head -30
for cz in 1 2 3; do
  CONVGUARD_WGMMA_BWDW_CLUSTER=$cz timeout 100 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeights*:Gpu.WgmmaBackwardWeights*' > $O/cz$cz.log 2>&1
  echo "cluster $cz: $(grep -E 'PASSED|FAILED' $O/cz$cz.log | tr '\n' ' ')"
done
echo "=== plan printed; $(( $(date +%s) - S )) s so far"
CONVGUARD_WGMMA_BWDW_PLAN=1 timeout 60 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 \
    --layout nhwc --direction bwd_weights --runs 5 --only gpu:wgmma_bwd_weights > $O/plan.log 2>&1
echo "=== peer; $(( $(date +%s) - S )) s so far"
OUT=$O BUILD=db PARTS=peer bash scripts/gpu_check.sh 2>&1 | tail -25
echo "total $(( $(date +%s) - S )) s"
tar -C /tmp -czf ${OUT:-out}/s9a.tgz s9a
