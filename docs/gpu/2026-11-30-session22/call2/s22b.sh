#!/bin/bash
# Session 22, call 2 (H200): narrow_pointwise (forward 1x1 layers of 128 channels as persistent
# 128 x 64 tiles). gpu_tests on the new build; A/B old build (bin22, db/) against new (bin22b,
# dn/; the old gpu_bench alone, bin22old) on forward b32 and b256, own solvers only, three rounds interleaved; the peer on forward
# b256 and b32 with the new build, alone.
set -u
S=$(date +%s)
mkdir -p db dn && tar -C db -xJf devbin/bin22old.tar.xz && tar -C dn -xJf devbin/bin22b.tar.xz
export LD_LIBRARY_PATH=$PWD/dn/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s22b; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
timeout 200 dn/tests/gpu_tests > $O/tests_all.log 2>&1; echo "gpu_tests rc $? $(t)"; tail -3 $O/tests_all.log
CONVGUARD_WGMMA_PLAN=1 timeout 60 dn/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc \
  --direction fwd --runs 3 --calls 1 --only 'gpu:wgmma_*' > $O/plans_new_f32.log 2>&1
for r in 1 2 3; do
  for v in old new; do
    d=db; [ $v = new ] && d=dn
    for b in 32 256; do
      timeout 90 $d/bench/gpu_bench --suite data/suites/resnet50.txt --batch $b --dtype bf16 --layout nhwc \
        --direction fwd --runs 20 --calls 1 --only 'gpu:wgmma_*' > $O/ab_f${b}_${v}_r$r.log 2>&1
    done
  done
done
echo "ab $(t)"
PY=python3; [ -x /opt/torch/.venv/bin/python3 ] && PY=/opt/torch/.venv/bin/python3
CUDNN_LIB=$("$PY" -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
export CONVGUARD_PLUGINS=$PWD/dn/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-}
peer() {  # name direction batch runs calls limit
  timeout $6 dn/bench/gpu_bench --suite data/suites/resnet50.txt --batch $3 --dtype bf16 --layout nhwc \
    --direction $2 --runs $4 --calls $5 --only 'gpu:wgmma_*,cudnn:*' --json $O/$1.jsonl > $O/bench_$1.log 2>&1
  echo "$1: rc $? $(t)"
  "$PY" bench/gpu_peer.py $O/$1.jsonl > $O/peer_$1.log 2>&1; grep -A3 "^geomean" $O/peer_$1.log | tail -2
}
peer f256_c1 fwd 256 20 1 200
peer f32_c1 fwd 32 30 1 120
echo "total $(t)"
xz $O/*.jsonl 2>/dev/null
tar -C /tmp -cJf ${OUT:-out}/s22b.tar.xz s22b
