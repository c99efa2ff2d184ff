#!/bin/bash
# Session 34 call 2 (call 1's forward rows had failed: AB_BWDD set empty was read as set) (H200 host CPU, Emerald Rapids): an experiment's harness (env_ab: one solver,
# one problem, calls interleaved between settings of an environment variable; second of two runs
# timed) on the rows kernels' AVX-512 copies: CG_ITEMS (work items a thread before channel blocks
# are sliced; 1 = main's items) and CG_STREAM (1 streams the output, 0 stores plainly).
set -u
L=$OUT/logs; mkdir -p $L
S0=$(date +%s); t() { echo "$1 at $(( $(date +%s) - S0 ))s" >> $L/times.log; }
lscpu > $L/lscpu.txt
mkdir -p /tmp/e && tar -C /tmp/e -xJf devbin/e34.tar.xz || exit 1
export LD_LIBRARY_PATH=/tmp/e/lib CUDA_VISIBLE_DEVICES=
E=/tmp/e/env_ab
ab() { # cores threads dir solver var iters problem values...
  local cores=$1 th=$2 dir=$3 s=$4 var=$5 it=$6 p=$7; shift 7
  local bw=; [ $dir = bwdd ] && bw=1
  AB_BWDD=$bw OMP_NUM_THREADS=$th timeout -k 5 120 taskset -c $cores $E $p $s $var $it "$@" 2>&1
  echo "  (cores $cores, $th threads, $dir, rc $?)"
}
{
for r in 1 2; do
  for p in mb1ic3ih32oc64oh32kh3ph1 mb1ic3ih40oc64oh40kh3ph1 mb1ic3ih56oc64oh56kh3ph1 mb1ic3ih64oc64oh64kh3ph1 mb1ic16ih32oc32oh32kh3ph1 mb1ic3ih128oc64oh128kh3ph1; do
    ab 0,1 2 fwd cpu:fwd_rows:avx512 CG_ITEMS 3000 $p 1 4
  done
  for p in mb1ic3ih224oc64oh224kh3ph1 mb1ic3ih128oc64oh128kh3ph1 mb1ic3ih224oc64oh112kh7sh2ph3 mb1ic3ih64oc64oh64kh3ph1 mb1ic64ih56oc64oh56kh3ph1 mb1ic3ih512oc64oh512kh3ph1; do
    ab 0-15 16 fwd cpu:fwd_rows:avx512 CG_ITEMS 1000 $p 1 4 8
  done
done
} > $L/items.log; t items
{
for r in 1 2; do
  for p in mb1ic3ih224oc64oh224kh3ph1 mb8ic3ih64oc64oh64kh3ph1 mb16ic3ih64oc64oh64kh3ph1 mb32ic3ih64oc16oh64kh5ph2 mb8ic3ih224oc64oh112kh7sh2ph3; do
    ab 0,1 2 fwd cpu:fwd_rows:avx512 CG_STREAM 60 $p 1 0
  done
  ab 0,1 2 fwd cpu:fwd_rows:avx512 CG_STREAM 20 mb1ic3ih512oc64oh512kh3ph1 1 0
  ab 0-15 16 fwd cpu:fwd_rows:avx512 CG_STREAM 60 mb8ic3ih224oc64oh112kh7sh2ph3 1 0
  ab 0-15 16 fwd cpu:fwd_rows:avx512 CG_STREAM 60 mb16ic3ih64oc64oh64kh3ph1 1 0
done
} > $L/stream.log; t stream
cat $L/times.log
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
