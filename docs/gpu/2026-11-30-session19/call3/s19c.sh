#!/bin/bash
# Session 19, call 3 (H200, f86ad97's binaries): b32's res5 layers (few tiles, long reductions),
# forward and backward-data, 128 x 256 and 128 x 128 tiles forced at each split against the plan,
# interleaved, two rounds, plans printed.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s19c; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
run() {  # name direction envs...
  local n=$1 d=$2; shift 2
  env CONVGUARD_WGMMA_PLAN=1 "$@" timeout 90 db/bench/gpu_bench --suite devbin/l6.txt --batch 32 --dtype bf16 --layout nhwc \
    --direction $d --runs 30 --only gpu:wgmma_implicit_gemm > $O/v_$n.log 2>&1 || echo "rc $? $n"
}
for r in 1 2; do
  for d in fwd bwd_data; do
    for v in def t256s1 t256s2 t256s3 t256s4 t256s5 t128s1 t128s2 t128s3 t128s4; do
      case $v in def) E="X=1";;
        t256s*) E="CONVGUARD_WGMMA_TILE=128x256 CONVGUARD_WGMMA_SPLIT=${v#t256s}";;
        t128s*) E="CONVGUARD_WGMMA_TILE=128x128 CONVGUARD_WGMMA_SPLIT=${v#t128s}";; esac
      run ${d}_${v}_r$r $d $E
    done
  done
  echo "round $r $(t)"
done
for f in $O/v_*.log; do printf '%s ' $(basename $f .log); grep -E '^\s+gpu:wgmma_implicit_gemm' $f | awk '{printf "%s ", $2}'; echo; done | sort > $O/table.txt
for f in $O/v_*_r1.log; do echo "== $(basename $f .log)"; grep -o "plan: .*" $f | awk 'NR%2==1'; done > $O/plans.txt
cat $O/table.txt; echo "total $(t)"
