#!/bin/bash
# Session 23 call 5 (H200): the b32 res5 layers with 128 x 64 tiles unsplit (cuDNN's choice under
# ncu, call 4: 104-112 blocks of 72 stages, no reduction) forced, against the plans (128 x 256 in
# 5 splits + a 7 us reduction), three rounds interleaved; forward and backward-data.
set -u
S=$(date +%s); t() { echo "$(( $(date +%s) - S )) s"; }
mkdir -p /tmp/g && tar -C /tmp/g -xJf devbin/g23.tar.xz || exit 1
export LD_LIBRARY_PATH=/tmp/g/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
O=/tmp/s23e; mkdir -p $O
B="/tmp/g/gpu_bench --suite devbin/res5.txt --batch 32 --dtype bf16 --layout nhwc --calls 1 --runs 20 --only gpu:wgmma_*"
for r in 1 2 3; do
  for d in fwd bwd_data; do
    timeout 30 $B --direction $d > $O/${d}_plan_r$r.log 2>&1
    CONVGUARD_WGMMA_TILE=128x64 CONVGUARD_WGMMA_SPLIT=1 timeout 30 $B --direction $d > $O/${d}_t64s1_r$r.log 2>&1
    CONVGUARD_WGMMA_TILE=128x128 CONVGUARD_WGMMA_SPLIT=1 timeout 30 $B --direction $d > $O/${d}_t128s1_r$r.log 2>&1
    CONVGUARD_WGMMA_TILE=128x64 CONVGUARD_WGMMA_SPLIT=1 CONVGUARD_WGMMA_WS=5 timeout 30 $B --direction $d > $O/${d}_t64s1p_r$r.log 2>&1
  done
  echo "round $r $(t)"
done
for d in fwd bwd_data; do for v in plan t64s1 t128s1 t64s1p; do
  CONVGUARD_WGMMA_PLAN=1 $( [ $v = plan ] || echo "" ) true
  printf "%-9s %-7s" $d $v; for r in 1 2 3; do grep "gpu:wgmma" $O/${d}_${v}_r$r.log | awk '{printf " %s", $2}'; printf " |"; done; echo
done; done
for v in t64s1 t128s1 t64s1p; do
  case $v in t64s1) E="CONVGUARD_WGMMA_TILE=128x64 CONVGUARD_WGMMA_SPLIT=1";; t128s1) E="CONVGUARD_WGMMA_TILE=128x128 CONVGUARD_WGMMA_SPLIT=1";; t64s1p) E="CONVGUARD_WGMMA_TILE=128x64 CONVGUARD_WGMMA_SPLIT=1 CONVGUARD_WGMMA_WS=5";; esac
  env $E CONVGUARD_WGMMA_PLAN=1 timeout 30 $B --runs 1 --direction fwd 2>&1 | grep "plan:" | sort -u | sed "s/^/$v fwd: /"
done
tar -C /tmp -cJf $OUT/s23e.tar.xz s23e; echo "total $(t)"
