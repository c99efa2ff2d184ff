#!/bin/bash
# Session 9, call 3 (H200): 128 x 256 tiles on the bulk-copy loaders (ws 4, 5) verified and timed
# forced; the b256 rule change (N-fastest order, persistent 128 x 128 for short reductions) against
# the old (ORDER=1); the b256 forward peer.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s9c; mkdir -p $O ${OUT:-out}
nvidia-smi --query-gpu=name,driver_version --format=csv > $O/gpu.txt 2>&1
echo "=== gpu_tests"; (time timeout 150 db/tests/gpu_tests) > $O/gpu_tests.log 2>&1
grep -E 'PASSED|FAILED|real' $O/gpu_tests.log | head; grep -E 'Failure' -A6 $O/gpu_tests.log | head -20
for v in "4 128x256" "5 128x256" "4 128x128"; do set -- $v
  CONVGUARD_WGMMA_WS=$1 CONVGUARD_WGMMA_TILE=$2 timeout 150 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmma*:Gpu.LargeLayersVerifyBySampling' > $O/forced_$1_$2.log 2>&1
  echo "ws $1 tile $2: $(grep -E 'PASSED|FAILED' $O/forced_$1_$2.log | tr '\n' ' ')"; grep -E 'Failure' -A6 $O/forced_$1_$2.log | head -12
done
echo "=== timing; $(( $(date +%s) - S )) s so far"
run() {  # tag batch dir runs variant envs...
  local tag=$1 b=$2 d=$3 n=$4 v=$5; shift 5
  env "$@" timeout 120 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch $b --dtype bf16 --layout nhwc \
    --direction $d --runs $n --only gpu:wgmma_implicit_gemm > $O/${tag}_${v}_r$r.log 2>&1 || echo "rc $? $tag $v"
}
for r in 1 2; do
  for t in "b32 32 fwd 30" "b256 256 fwd 10" "d32 32 bwd_data 30" "d256 256 bwd_data 10"; do set -- $t
    run $1 $2 $3 $4 base CONVGUARD_WGMMA_PLAN=$((r == 1))
    run $1 $2 $3 $4 old CONVGUARD_WGMMA_ORDER=1
    run $1 $2 $3 $4 t4 CONVGUARD_WGMMA_WS=4 CONVGUARD_WGMMA_TILE=128x256
    run $1 $2 $3 $4 t5 CONVGUARD_WGMMA_WS=5 CONVGUARD_WGMMA_TILE=128x256
  done
  echo "round $r $(( $(date +%s) - S )) s"
done
for t in b32 b256 d32 d256; do python3 devbin/cmp.py $O $t base old t4 t5 | tee -a $O/cmp.txt | tail -1; done
echo "=== peer b256 fwd; $(( $(date +%s) - S )) s so far"
CUDNN_LIB=$(python3 -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
export CONVGUARD_PLUGINS=$PWD/db/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-}
timeout 200 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 256 --dtype bf16 --layout nhwc \
  --direction fwd --runs 10 --json $O/peer.jsonl > $O/peer_gpu_bench.log 2>&1
timeout 200 python3 bench/gpu_peer.py $O/peer.jsonl > $O/peer.log 2>&1
grep -A30 '^geomean' $O/peer.log | grep wgmma
echo "total $(( $(date +%s) - S )) s"
tar -C /tmp -czf ${OUT:-out}/s9c.tgz s9c
