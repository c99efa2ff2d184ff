#!/bin/bash
# Session 10, call 5 (H200): exploration at 9608bac, each form forced against the plans,
# interleaved, 2 rounds: the bulk-copy forms everywhere (CONVGUARD_WGMMA_WS=4, 5; with tiled 1x1
# loads now), and pixel-wide widths on backward-data.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s10e; mkdir -p $O ${OUT:-out}
run() {  # tag batch dir runs variant env...
  local tag=$1 b=$2 d=$3 n=$4 v=$5; shift 5
  env "$@" timeout 60 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch $b --dtype bf16 --layout nhwc \
    --direction $d --runs $n --only gpu:wgmma_implicit_gemm > $O/${tag}_${v}_r$r.log 2>&1 || echo "rc $? $tag $v"
}
for r in 1 2; do
  for t in "b32 32 fwd 30" "d32 32 bwd_data 30" "b256 256 fwd 10"; do set -- $t
    run $1 $2 $3 $4 plan X=1; run $1 $2 $3 $4 ws4 CONVGUARD_WGMMA_WS=4; run $1 $2 $3 $4 ws5 CONVGUARD_WGMMA_WS=5
  done
  for w in 96 192 256; do run d32 32 bwd_data 30 p$w CONVGUARD_WGMMA_PIXELS=$w; done
done
for t in b32 b256; do python3 devbin/cmp.py $O $t plan ws4 ws5 | tee -a $O/cmp.txt | tail -1; done
python3 devbin/cmp.py $O d32 plan ws4 ws5 p96 p192 p256 | tee -a $O/cmp.txt | tail -1
echo "total $(( $(date +%s) - S )) s"
tar -C /tmp -czf ${OUT:-out}/s10e.tgz s10e
