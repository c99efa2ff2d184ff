#!/bin/bash
# Session 15, call 3 (H200): backward-weights' 1x1 layers furthest behind (0.57-0.71x), bf16 b32:
# every (tile width, cluster size, split count) forced, to see whether the plan's choice leaves
# time on them. Each variant: gpu_bench, own solver alone, 20 runs, calls timed alone.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s15c; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
run() {  # name envs...
  local n=$1; shift
  env "$@" timeout 60 db/bench/gpu_bench --suite devbin/w1x1.txt --batch 32 --dtype bf16 --layout nhwc \
    --direction bwd_weights --runs 20 --only gpu:wgmma_bwd_weights > $O/v_$n.log 2>&1 || echo "rc $? $n"
}
CONVGUARD_WGMMA_BWDW_PLAN=1 run default X=1
grep "plan:" $O/v_default.log | sort -u
for r in 1 2; do
  run default_r$r X=1
  for bn in 128 256; do for cl in 1 2 4; do for sp in 0 2 4 8; do
    e=(CONVGUARD_WGMMA_BWDW_BN=$bn CONVGUARD_WGMMA_BWDW_CLUSTER=$cl)
    [ $sp != 0 ] && e+=(CONVGUARD_WGMMA_BWDW_SPLIT=$sp)
    run bn${bn}_cl${cl}_sp${sp}_r$r "${e[@]}"
  done; done; done
  echo "round $r $(t)"
done
for f in $O/v_*.log; do printf '%s ' $(basename $f .log); grep -E '^\s+gpu:wgmma_bwd_weights' $f | awk '{printf "%s ", $2}'; echo; done > $O/table.txt
cat $O/table.txt | head -5
echo "total $(t)"
tar -C /tmp -czf ${OUT:-out}/s15c.tgz s15c
