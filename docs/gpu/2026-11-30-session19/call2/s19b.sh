#!/bin/bash
# Session 19, call 2 (H200, f86ad97's binaries): forced splits and tiles against the plan on b32's
# res5 3x3 layers (52 tiles of 72 stages, split 2 today) and loaders/tiles on b256's res2a_branch2b
# (128 x 64, a tile per block, 9 stages); interleaved, two rounds, plans printed.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s19b; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
run() {  # name suite batch runs envs...
  local n=$1 s=$2 b=$3 r=$4; shift 4
  env CONVGUARD_WGMMA_PLAN=1 "$@" timeout 90 db/bench/gpu_bench --suite $s --batch $b --dtype bf16 --layout nhwc \
    --direction fwd --runs $r --only gpu:wgmma_implicit_gemm > $O/v_$n.log 2>&1 || echo "rc $? $n"
}
for r in 1 2; do
  for v in def s1 s3 s4 s5 s6 t64s2 t64s3 t64s4 t256s1 t256s2 t256s3 t256s4 t256s5 w0p2s5 w0p2s4 w0s2; do
    case $v in def) E="X=1";; s*) E="CONVGUARD_WGMMA_SPLIT=${v#s}";;
      t64s*) E="CONVGUARD_WGMMA_TILE=128x64 CONVGUARD_WGMMA_SPLIT=${v#t64s}";;
      t256s*) E="CONVGUARD_WGMMA_TILE=128x256 CONVGUARD_WGMMA_SPLIT=${v#t256s}";;
      w0p2s*) E="CONVGUARD_WGMMA_WS=0 CONVGUARD_WGMMA_PER_SM=2 CONVGUARD_WGMMA_SPLIT=${v#w0p2s}";;
      w0s2) E="CONVGUARD_WGMMA_WS=0 CONVGUARD_WGMMA_SPLIT=2";; esac
    run b32_${v}_r$r devbin/l5.txt 32 30 $E
  done
  echo "b32 round $r $(t)"
  for v in def w5 w0 t128 t128w5; do
    case $v in def) E="X=1";; w5) E="CONVGUARD_WGMMA_WS=5";; w0) E="CONVGUARD_WGMMA_WS=0";;
      t128) E="CONVGUARD_WGMMA_TILE=128x128";; t128w5) E="CONVGUARD_WGMMA_TILE=128x128 CONVGUARD_WGMMA_WS=5";; esac
    run b256_${v}_r$r devbin/l2.txt 256 10 $E
  done
  echo "b256 round $r $(t)"
done
for f in $O/v_b*.log; do printf '%s ' $(basename $f .log); grep -E '^\s+gpu:wgmma_implicit_gemm' $f | awk '{printf "%s ", $2}'; grep -o "plan: .*" $f | head -1; done | sort > $O/table.txt
cat $O/table.txt; echo "total $(t)"
