#!/bin/bash
# Session 19, call 8 (H200, a90046c): pixel-wide widths (64 too) forced against the plans on b32's
# weakest 1x1 layers: res5 (l6.txt) and res3[b-d]_branch2a / res4a_branch2a (l7.txt); interleaved,
# two rounds, plans printed.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s19h; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
run() {  # name suite envs...
  local n=$1 s=$2; shift 2
  env CONVGUARD_WGMMA_PLAN=1 "$@" timeout 90 db/bench/gpu_bench --suite $s --batch 32 --dtype bf16 --layout nhwc \
    --direction fwd --runs 30 --only gpu:wgmma_implicit_gemm > $O/v_$n.log 2>&1 || echo "rc $? $n"
}
for r in 1 2; do
  for v in def 64 96 128 192 256; do
    E=X=1; [ $v != def ] && E=CONVGUARD_WGMMA_PIXELS=$v
    run l6_${v}_r$r devbin/l6.txt $E
    run l7_${v}_r$r devbin/l7.txt $E
  done
  for v in w4 t256 t64; do
    case $v in w4) E="CONVGUARD_WGMMA_WS=4";; t256) E="CONVGUARD_WGMMA_TILE=128x256";; t64) E="CONVGUARD_WGMMA_TILE=128x64";; esac
    run l7_${v}_r$r devbin/l7.txt $E
  done
  echo "round $r $(t)"
done
for f in $O/v_*.log; do printf '%s ' $(basename $f .log); grep -E '^\s+gpu:wgmma_implicit_gemm' $f | awk '{printf "%s ", $2}'; echo; done | sort > $O/table.txt
for f in $O/v_*_r1.log; do echo "== $(basename $f .log)"; grep -o "plan: .*" $f | awk 'NR%2==1'; done > $O/plans.txt
cat $O/table.txt; echo "total $(t)"
