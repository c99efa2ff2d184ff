#!/bin/bash
set -u
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=${OUT:-out}; mkdir -p $O
for round in 1 2; do
  for v in 0 1; do
    for d in fwd bwd_data; do
      CONVGUARD_WGMMA_A_L1=$v timeout 100 db/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc \
        --direction $d --runs 30 --only gpu:wgmma_implicit_gemm > $O/a_l1_${v}_${d}_r$round.log 2>&1
    done
  done
done
for d in fwd bwd_data; do
  echo "== $d: ms per layer, A via L2 (.cg) r1 r2 | via L1 (.ca) r1 r2"
  paste <(grep -E 'gpu:wgmma_implicit_gemm ' $O/a_l1_0_${d}_r1.log | awk '{print $2}') \
        <(grep -E 'gpu:wgmma_implicit_gemm ' $O/a_l1_0_${d}_r2.log | awk '{print $2}') \
        <(grep -E 'gpu:wgmma_implicit_gemm ' $O/a_l1_1_${d}_r1.log | awk '{print $2}') \
        <(grep -E 'gpu:wgmma_implicit_gemm ' $O/a_l1_1_${d}_r2.log | awk '{print $2}') \
   | awk '{a=($1<$2?$1:$2); b=($3<$4?$3:$4); r=a/b; s+=log(r); n++; printf "%s %s %s %s  %.3f\n",$1,$2,$3,$4,r} END {printf "geomean speedup of .ca: %.4f over %d\n", exp(s/n), n}'
done
