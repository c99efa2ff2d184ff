#!/bin/bash
# Session 19, call 1 (H200, f86ad97's binaries): pixel-wide widths forced against the plans on
# ResNet-50's long-reduction layers, forward bf16 at b256 (3x3 and 1x1 of 8+ stages) and b32's
# res5 3x3 layers (width 64 too), interleaved, two rounds; the plans printed once.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s19a; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
run() {  # name suite batch runs envs...
  local n=$1 s=$2 b=$3 r=$4; shift 4
  env "$@" timeout 90 db/bench/gpu_bench --suite $s --batch $b --dtype bf16 --layout nhwc \
    --direction fwd --runs $r --only gpu:wgmma_implicit_gemm > $O/v_$n.log 2>&1 || echo "rc $? $n"
}
run plan256 devbin/l3.txt 256 2 CONVGUARD_WGMMA_PLAN=1; echo "plan $(t)"
for r in 1 2; do
  for v in def 256 192 128 96; do
    E=X=1; [ $v != def ] && E=CONVGUARD_WGMMA_PIXELS=$v
    run b256_${v}_r$r devbin/l3.txt 256 10 $E
  done
  echo "round $r $(t)"
  for v in def 64 96 128; do
    E=X=1; [ $v != def ] && E=CONVGUARD_WGMMA_PIXELS=$v
    run b32_${v}_r$r devbin/l5.txt 32 30 $E
  done
done
for f in $O/v_b*.log; do printf '%s ' $(basename $f .log); grep -E '^\s+gpu:wgmma_implicit_gemm' $f | awk '{printf "%s ", $2}'; echo; done | sort > $O/table.txt
cat $O/table.txt; echo "total $(t)"
