#!/bin/bash
# Device run: stream-K in gpu:wgmma_implicit_gemm (issue 17). PART=check: the tests, stream-K
# forced over the shape tests, memcheck, then old (HEAD before), new with stream-K off
# (CONVGUARD_WGMMA_SK=0) and new interleaved on ResNet-50 b32; PART=peer: the better peer.
set -u
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=${OUT:-out}; mkdir -p $O
PY=/opt/torch/.venv/bin/python3
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $O/gpu.txt 2>&1
if [ "${PART:-check}" = check ]; then
echo "=== stream-K tests"
timeout 120 db/tests/gpu_tests --gtest_filter='Gpu.TensorCoreWgmmaStreamK*:Gpu.TensorCoreWgmmaBackwardDataWorkspace' \
  > $O/sk_tests.log 2>&1; grep -E 'PASSED|FAILED|Failure|differ|error' $O/sk_tests.log | head -12
echo "=== A/B: old, new with stream-K off, new; own wgmma solvers only"
ab() {  # suite batch dtype dir tag
  for r in 1 2; do for v in old nosk new; do
    B=db/bench/gpu_bench; [ $v = old ] && B=db/old/bench/gpu_bench
    SK=; [ $v = nosk ] && SK=0
    CONVGUARD_WGMMA_SK=$SK timeout 100 $B --suite $1 $2 --dtype $3 --layout nhwc --direction $4 --runs 30 \
      --only gpu:wgmma_implicit_gemm,gpu:wgmma_implicit_gemm:tf32 > $O/ab_${5}_${v}_r$r.log 2>&1
  done; done
  col() { grep -E 'gpu:wgmma' $O/ab_${5}_${1}_r$2.log | awk '{print $2}'; }
  paste <(awk '/GFLOP/ {name=$1} /gpu:wgmma/ {print name}' $O/ab_${5}_new_r1.log) <(col old 1) <(col old 2) <(col nosk 1) <(col nosk 2) <(col new 1) <(col new 2) \
   | awk -v tag=$5 '{o=($2<$3?$2:$3); n0=($4<$5?$4:$5); n=($6<$7?$6:$7); r=o/n; q=o/n0; s+=log(r); t+=log(q); c++;
       printf "%-28s old %s %s  sk0 %s %s  new %s %s  old/new %.3f old/sk0 %.3f\n",$1,$2,$3,$4,$5,$6,$7,r,q}
       END {printf "%s: geomean speedup new/old %.4f, sk0/old %.4f over %d\n", tag, exp(s/c), exp(t/c), c}' > $O/ab_${5}.txt
  tail -1 $O/ab_${5}.txt
}
ab data/suites/resnet50.txt "--batch 32" bf16 fwd bf16_fwd
ab data/suites/resnet50.txt "--batch 32" bf16 bwd_data bf16_bwdd
ab data/suites/resnet50.txt "--batch 32" f32 fwd tf32_fwd
echo "=== gpu_tests"; (time timeout 250 db/tests/gpu_tests) > $O/gpu_tests.log 2>&1; tail -4 $O/gpu_tests.log
grep -E 'FAILED|Failure' $O/gpu_tests.log | head -10
echo "=== the wgmma shape tests with stream-K forced"
CONVGUARD_WGMMA_SK=1 timeout 200 db/tests/gpu_tests \
  --gtest_filter='Gpu.TensorCoreWgmma*:Gpu.TensorCore3D*:Gpu.WgmmaTf32*:Gpu.LargeLayersVerifyBySampling:-Gpu.TensorCoreWgmmaBackwardDataWorkspace' \
  > $O/forced_sk.log 2>&1; grep -E 'PASSED|FAILED|Failure' $O/forced_sk.log | head -10
echo "=== memcheck: stream-K tests"
timeout 150 compute-sanitizer --tool memcheck --print-limit 5 db/tests/gpu_tests \
  --gtest_filter='Gpu.TensorCoreWgmmaStreamK*' > $O/memcheck_sk.log 2>&1; tail -2 $O/memcheck_sk.log
fi
if [ "${PART:-check}" = peer ]; then
  CUDNN_LIB=$("$PY" -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
  export CONVGUARD_PLUGINS=$PWD/db/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-}
  for d in fwd bwd_data; do
    echo "=== peer: ResNet-50 b32 bf16 NHWC $d"
    timeout 200 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc \
      --direction $d --runs 30 --json $O/peer_$d.jsonl > $O/bench_$d.log 2>&1
    "$PY" bench/gpu_peer.py $O/peer_$d.jsonl > $O/peer_$d.log 2>&1
    grep -A12 '^geomean' $O/peer_$d.log | head -14
  done
fi
tar -C $O -czf $O/../logs.tgz . 2>/dev/null; mv $O/../logs.tgz $O/logs.tgz
