#!/bin/bash
# Session 20, call 2 (H200): plan settings forced over ResNet-50's 23 layers, each against the
# plan, two interleaved rounds: forward b256 and b32 (tiles, loaders, splits, blocks a SM,
# pixel-wide widths) and backward-weights b32 (splits, clusters, stage pixels, bulk copies and
# their tile columns). Kernel time (gpu_bench), ms, one row a run in the suite's order.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s20b; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
run() {  # name batch direction runs solver envs...
  local n=$1 b=$2 d=$3 r=$4 s=$5; shift 5
  env CONVGUARD_WGMMA_PLAN=1 CONVGUARD_WGMMA_BWDW_PLAN=1 "$@" timeout 100 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch $b --dtype bf16 --layout nhwc \
    --direction $d --runs $r --only $s > $O/v_$n.log 2>&1 || echo "rc $? $n"
}
FWD="def:X=1 p96:CONVGUARD_WGMMA_PIXELS=96 p128:CONVGUARD_WGMMA_PIXELS=128 p192:CONVGUARD_WGMMA_PIXELS=192 p256:CONVGUARD_WGMMA_PIXELS=256
 t64:CONVGUARD_WGMMA_TILE=128x64 t128:CONVGUARD_WGMMA_TILE=128x128 t256:CONVGUARD_WGMMA_TILE=128x256 u256:CONVGUARD_WGMMA_TILE=256x128
 w0:CONVGUARD_WGMMA_WS=0 w4:CONVGUARD_WGMMA_WS=4 w5:CONVGUARD_WGMMA_WS=5 s2:CONVGUARD_WGMMA_SPLIT=2 s3:CONVGUARD_WGMMA_SPLIT=3 m2:CONVGUARD_WGMMA_PER_SM=2"
BWDW="def:X=1 s1:CONVGUARD_WGMMA_BWDW_SPLIT=1 s2:CONVGUARD_WGMMA_BWDW_SPLIT=2 s3:CONVGUARD_WGMMA_BWDW_SPLIT=3 s4:CONVGUARD_WGMMA_BWDW_SPLIT=4 s6:CONVGUARD_WGMMA_BWDW_SPLIT=6 s8:CONVGUARD_WGMMA_BWDW_SPLIT=8
 c1:CONVGUARD_WGMMA_BWDW_CLUSTER=1 c2:CONVGUARD_WGMMA_BWDW_CLUSTER=2 c3:CONVGUARD_WGMMA_BWDW_CLUSTER=3 c4:CONVGUARD_WGMMA_BWDW_CLUSTER=4
 k32:CONVGUARD_WGMMA_BWDW_BK=32 k64:CONVGUARD_WGMMA_BWDW_BK=64 tma0:CONVGUARD_WGMMA_BWDW_TMA=0 tma1:CONVGUARD_WGMMA_BWDW_TMA=1
 n128:CONVGUARD_WGMMA_BWDW_BN=128 n192:CONVGUARD_WGMMA_BWDW_BN=192 n256:CONVGUARD_WGMMA_BWDW_BN=256"
for r in 1 2; do
  for v in $FWD; do
    run f256_${v%%:*}_r$r 256 fwd 5 gpu:wgmma_implicit_gemm ${v#*:}
    run f32_${v%%:*}_r$r 32 fwd 20 gpu:wgmma_implicit_gemm ${v#*:}
  done
  echo "fwd round $r $(t)"
  for v in $BWDW; do run w32_${v%%:*}_r$r 32 bwd_weights 20 gpu:wgmma_bwd_weights ${v#*:}; done
  echo "bwdw round $r $(t)"
done
for f in $O/v_*.log; do printf '%s ' $(basename $f .log); grep -E '^\s+gpu:wgmma_' $f | awk '{printf "%s ", $2}'; echo; done | sort > $O/table.txt
for f in $O/v_*_r1.log; do echo "== $(basename $f .log)"; grep -o "plan: .*" $f | awk 'NR%2==1'; done > $O/plans.txt
wc -l $O/table.txt; echo "total $(t)"
tar -C /tmp -cJf ${OUT:-out}/s20b.tar.xz s20b
