#!/bin/bash
# Session 19, call 11 (H200, a90046c): pixel-wide widths forced (CONVGUARD_WGMMA_PIXELS) against
# the plans over ResNet-50's 23 layers, backward-data b32 and b256 and forward b256; interleaved,
# two rounds; plans printed.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s19k; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
run() {  # name batch direction runs envs...
  local n=$1 b=$2 d=$3 r=$4; shift 4
  env CONVGUARD_WGMMA_PLAN=1 "$@" timeout 120 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch $b --dtype bf16 --layout nhwc \
    --direction $d --runs $r --only gpu:wgmma_implicit_gemm > $O/v_$n.log 2>&1 || echo "rc $? $n"
}
for r in 1 2; do
  for v in def 64 96 128 192 256; do
    E=X=1; [ $v != def ] && E=CONVGUARD_WGMMA_PIXELS=$v
    run d32_${v}_r$r 32 bwd_data 30 $E
    run d256_${v}_r$r 256 bwd_data 5 $E
  done
  echo "round $r $(t)"
done
for f in $O/v_*.log; do printf '%s ' $(basename $f .log); grep -E '^\s+gpu:wgmma_implicit_gemm' $f | awk '{printf "%s ", $2}'; echo; done | sort > $O/table.txt
for f in $O/v_*_r1.log; do echo "== $(basename $f .log)"; grep -o "plan: .*" $f | awk 'NR%2==1'; done > $O/plans.txt
cat $O/table.txt; echo "total $(t)"
