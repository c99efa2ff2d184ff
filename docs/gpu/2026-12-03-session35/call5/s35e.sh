#!/bin/bash
# Session 35 call 5 (H200): gpu:wgmma_bwd_weights' plan space on the eight 1x1 layers furthest
# behind the peer (devbin/bwdw35.txt, ResNet-50 b32 bf16 NHWC backward-weights): the default plan
# and forced splits, clusters, tile widths and stage pixels, two rounds, the plan printed.
set -u
L=$OUT/logs; mkdir -p $L
S0=$(date +%s); t() { echo "$1 at $(( $(date +%s) - S0 ))s" >> $L/times.log; }
mkdir -p /tmp/g && tar -C /tmp/g -xJf devbin/gp30.tar.xz || exit 1
export LD_LIBRARY_PATH=/tmp/g/lib CONVGUARD_DATA_DIR=$PWD/data CONVGUARD_WGMMA_BWDW_PLAN=1
B='--dtype bf16 --layout nhwc --batch 32 --direction bwd_weights --runs 40 --only gpu:wgmma_bwd_weights'
run() {  # NAME ENV...
  local n=$1; shift
  env "$@" timeout -k 5 60 /tmp/g/gpu_bench --suite devbin/bwdw35.txt $B > $L/${n}_r$R.log 2>&1; t "$n r$R rc $?"
}
for R in 1 2; do
  run default X=1
  run split1 CONVGUARD_WGMMA_BWDW_SPLIT=1
  run split2 CONVGUARD_WGMMA_BWDW_SPLIT=2
  run split4 CONVGUARD_WGMMA_BWDW_SPLIT=4
  run cl1 CONVGUARD_WGMMA_BWDW_CLUSTER=1
  run cl2 CONVGUARD_WGMMA_BWDW_CLUSTER=2
  run cl3 CONVGUARD_WGMMA_BWDW_CLUSTER=3
  run cl4 CONVGUARD_WGMMA_BWDW_CLUSTER=4
  run bn128 CONVGUARD_WGMMA_BWDW_BN=128
  run bn192 CONVGUARD_WGMMA_BWDW_BN=192
  run bn256 CONVGUARD_WGMMA_BWDW_BN=256
  run tma0 CONVGUARD_WGMMA_BWDW_TMA=0
  run bk32 CONVGUARD_WGMMA_BWDW_TMA=0 CONVGUARD_WGMMA_BWDW_BK=32
  run cl1split1 CONVGUARD_WGMMA_BWDW_CLUSTER=1 CONVGUARD_WGMMA_BWDW_SPLIT=1
  run cl2split2 CONVGUARD_WGMMA_BWDW_CLUSTER=2 CONVGUARD_WGMMA_BWDW_SPLIT=2
done
cat $L/times.log
cd $L && for f in *_r1.log; do n=${f%_r1.log}; printf "%-10s" $n; for r in 1 2; do grep -E "^\s+gpu:wgmma_bwd_weights" ${n}_r$r.log | awk '{printf " %s", $2}'; printf " |"; done; echo; done
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
