#!/bin/bash
# Session 19, call 9 (H200, a90046c): 128 x 64 tiles forced (CONVGUARD_WGMMA_TILE=128x64, which
# also keeps pixel-wide tiles off) against the plans over ResNet-50's 23 layers: forward b32 and
# b256, backward-data b32; interleaved, two rounds; plans printed.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s19i; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
run() {  # name batch direction runs envs...
  local n=$1 b=$2 d=$3 r=$4; shift 4
  env CONVGUARD_WGMMA_PLAN=1 "$@" timeout 120 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch $b --dtype bf16 --layout nhwc \
    --direction $d --runs $r --only gpu:wgmma_implicit_gemm > $O/v_$n.log 2>&1 || echo "rc $? $n"
}
for r in 1 2; do
  for v in def t64 p1; do
    case $v in def) E="X=1";; t64) E="CONVGUARD_WGMMA_TILE=128x64";; p1) E="CONVGUARD_WGMMA_PIXELS=1";; esac
    run f32_${v}_r$r 32 fwd 30 $E
    run d32_${v}_r$r 32 bwd_data 30 $E
    run f256_${v}_r$r 256 fwd 5 $E
  done
  echo "round $r $(t)"
done
for f in $O/v_*.log; do printf '%s ' $(basename $f .log); grep -E '^\s+gpu:wgmma_implicit_gemm' $f | awk '{printf "%s ", $2}'; echo; done | sort > $O/table.txt
for f in $O/v_*_r1.log; do echo "== $(basename $f .log)"; grep -o "plan: .*" $f | awk 'NR%2==1'; done > $O/plans.txt
cat $O/table.txt; echo "total $(t)"
