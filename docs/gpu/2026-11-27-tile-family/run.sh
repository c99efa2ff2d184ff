#!/bin/bash
# Device run: TF32 and 3D on the wgmma kernel's full 2D tile family (issue 17).
set -u
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=${OUT:-out}; mkdir -p $O
PY=/opt/torch/.venv/bin/python3
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $O/gpu.txt 2>&1
echo "=== gpu_tests"; (time timeout 200 db/tests/gpu_tests) > $O/gpu_tests.log 2>&1; tail -4 $O/gpu_tests.log
grep -E 'FAILED|Failure' $O/gpu_tests.log | head -10
echo "=== every tile shape forced on the TF32 and 3D tests"
for t in 128x64 128x128 128x256 256x64 256x128; do
  CONVGUARD_WGMMA_TILE=$t timeout 120 db/tests/gpu_tests \
    --gtest_filter='Gpu.TensorCoreWgmmaTf32OnItsShapes:Gpu.TensorCore3DOnItsShapes:Gpu.TensorCore3DLayers:Gpu.Tf32*' \
    > $O/forced_$t.log 2>&1; echo "$t: $(grep -E 'PASSED|FAILED' $O/forced_$t.log | tr '\n' ' ')"
done
echo "=== memcheck TF32 and 3D with 256 x 128 forced"
CONVGUARD_WGMMA_TILE=256x128 timeout 150 compute-sanitizer --tool memcheck --print-limit 5 db/tests/gpu_tests \
  --gtest_filter='Gpu.TensorCoreWgmmaTf32OnItsShapes:Gpu.TensorCore3DOnItsShapes' > $O/memcheck_256x128.log 2>&1; tail -2 $O/memcheck_256x128.log
echo "=== A/B: old (HEAD) and new gpu_bench interleaved, own wgmma solvers only"
ab() {  # suite batch dtype dir tag
  for r in 1 2; do for v in old new; do
    B=db/bench/gpu_bench; [ $v = old ] && B=db/old/bench/gpu_bench
    timeout 100 $B --suite $1 $2 --dtype $3 --layout nhwc --direction $4 --runs 30 \
      --only gpu:wgmma_implicit_gemm,gpu:wgmma_implicit_gemm:tf32 > $O/ab_${5}_${v}_r$r.log 2>&1
  done; done
  paste <(grep -E 'gpu:wgmma' $O/ab_${5}_old_r1.log | awk '{print $2}') <(grep -E 'gpu:wgmma' $O/ab_${5}_old_r2.log | awk '{print $2}') \
        <(grep -E 'gpu:wgmma' $O/ab_${5}_new_r1.log | awk '{print $2}') <(grep -E 'gpu:wgmma' $O/ab_${5}_new_r2.log | awk '{print $2}') \
   | awk -v tag=$5 '{a=($1<$2?$1:$2); b=($3<$4?$3:$4); r=a/b; s+=log(r); n++; printf "%s %s %s %s  %.3f\n",$1,$2,$3,$4,r} END {printf "%s: geomean speedup new/old %.4f over %d\n", tag, exp(s/n), n}' > $O/ab_${5}.txt
  tail -1 $O/ab_${5}.txt
}
ab data/suites/r3d18.txt "" bf16 fwd r3d18_fwd
ab data/suites/r3d18.txt "" bf16 bwd_data r3d18_bwdd
ab data/suites/resnet50.txt "--batch 32" f32 fwd tf32_fwd
ab data/suites/resnet50.txt "--batch 32" f32 bwd_data tf32_bwdd
if [ "${PEER:-1}" = 1 ]; then
  CUDNN_LIB=$("$PY" -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
  export CONVGUARD_PLUGINS=$PWD/db/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-}
  echo "=== peer: ResNet-50 b32 f32 NHWC forward, TF32"
  timeout 150 db/bench/gpu_bench --suite data/suites/resnet50.txt --batch 32 --dtype f32 --layout nhwc \
    --direction fwd --runs 20 --json $O/peer_tf32_fwd.jsonl > $O/bench_tf32_fwd.log 2>&1
  "$PY" bench/gpu_peer.py $O/peer_tf32_fwd.jsonl > $O/peer_tf32_fwd.log 2>&1
  grep -A30 '^geomean' $O/peer_tf32_fwd.log | grep TF32
fi
