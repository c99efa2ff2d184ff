#!/bin/bash
# Session 19, call 6 (H200, a90046c): explorations, interleaved, two rounds. b256 forward's long
# 128 x 256 tile-per-block plans against the persistent kernel forced; b256 res2a_branch2b (128 x 64,
# a tile per block) against other loaders and tiles; b32 backward-data's res5 layers against 128 x 64
# tiles and other splits.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s19f; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
run() {  # name suite batch direction runs envs...
  local n=$1 s=$2 b=$3 d=$4 r=$5; shift 5
  env CONVGUARD_WGMMA_PLAN=1 "$@" timeout 90 db/bench/gpu_bench --suite $s --batch $b --dtype bf16 --layout nhwc \
    --direction $d --runs $r --only gpu:wgmma_implicit_gemm > $O/v_$n.log 2>&1 || echo "rc $? $n"
}
for r in 1 2; do
  for v in def t256w5 t256w4; do
    case $v in def) E="X=1";; t256w5) E="CONVGUARD_WGMMA_TILE=128x256 CONVGUARD_WGMMA_WS=5";; t256w4) E="CONVGUARD_WGMMA_TILE=128x256 CONVGUARD_WGMMA_WS=4";; esac
    run f256_${v}_r$r devbin/l3.txt 256 fwd 10 $E
  done
  for v in def w1 w2 w3 t256x64 t256x64w0 t64w0p2; do
    case $v in def) E="X=1";; w[123]) E="CONVGUARD_WGMMA_WS=${v#w}";; t256x64) E="CONVGUARD_WGMMA_TILE=256x64";;
      t256x64w0) E="CONVGUARD_WGMMA_TILE=256x64 CONVGUARD_WGMMA_WS=0";; t64w0p2) E="CONVGUARD_WGMMA_WS=0 CONVGUARD_WGMMA_PER_SM=2";; esac
    run r2b_${v}_r$r devbin/l2.txt 256 fwd 10 $E
  done
  for v in def t64s1 t64s2 t64s3 t64s4 w0p2s2 w0p2s4 t256s2 t256s3; do
    case $v in def) E="X=1";; t64s*) E="CONVGUARD_WGMMA_TILE=128x64 CONVGUARD_WGMMA_SPLIT=${v#t64s}";;
      w0p2s*) E="CONVGUARD_WGMMA_WS=0 CONVGUARD_WGMMA_PER_SM=2 CONVGUARD_WGMMA_TILE=128x128 CONVGUARD_WGMMA_SPLIT=${v#w0p2s}";;
      t256s*) E="CONVGUARD_WGMMA_TILE=128x256 CONVGUARD_WGMMA_SPLIT=${v#t256s}";; esac
    run d32_${v}_r$r devbin/l6.txt 32 bwd_data 30 $E
  done
  echo "round $r $(t)"
done
for f in $O/v_*.log; do printf '%s ' $(basename $f .log); grep -E '^\s+gpu:wgmma_implicit_gemm' $f | awk '{printf "%s ", $2}'; echo; done | sort > $O/table.txt
for f in $O/v_*_r1.log; do echo "== $(basename $f .log)"; grep -o "plan: .*" $f | awk 'NR%2==1'; done > $O/plans.txt
cat $O/table.txt; echo "total $(t)"
