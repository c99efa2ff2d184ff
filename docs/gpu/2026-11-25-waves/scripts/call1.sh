#!/usr/bin/env bash
# Device call 1 (branch waves): the two-blocks-per-SM 128 x 128 kernel (3 stages) checked with it
# forced on every wgmma test shape, then tile shapes / splits / blocks per SM forced on ResNet-50
# b32 bf16 NHWC, forward and backward-data (gpu_bench --only gpu:wgmma_implicit_gemm, 30 runs).
set -u
D=devbin-waves
export LD_LIBRARY_PATH=$PWD/$D/lib:${LD_LIBRARY_PATH:-}
export CONVGUARD_DATA_DIR=$PWD/data
for f in $D/*.gz $D/base/*.gz; do [[ -e $f ]] && gunzip -kf "$f"; done
chmod +x $D/gpu_* $D/base/gpu_* 2>/dev/null
L=$OUT/l; mkdir -p "$L"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv | tee "$L/gpu.txt"
cuobjdump --dump-resource-usage $D/gpu_tests 2>&1 | grep -A1 "Function.*wgmma_forward" > "$L/resource_raw.txt"
( time timeout 150 $D/gpu_tests ) 2>&1 | grep -vE "^\[ RUN|^$" > "$L/gpu_tests.log"
grep -E "PASSED|FAILED|real" "$L/gpu_tests.log"
( time CONVGUARD_WGMMA_TILE=128x128 CONVGUARD_WGMMA_PER_SM=2 timeout 150 $D/gpu_tests \
  --gtest_filter='Gpu.TensorCoreWgmma*:Gpu.LargeLayers*' ) 2>&1 | grep -vE "^\[ RUN|^$" > "$L/gpu_tests_persm2.log"
echo "forced 128x128 per_sm 2:"; grep -E "PASSED|FAILED|real" "$L/gpu_tests_persm2.log"
G="--suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc --runs 30 --only gpu:wgmma_implicit_gemm"
for dir in fwd bwd_data; do
  timeout 60 $D/base/gpu_bench $G --direction $dir --json "$L/${dir%%_*}_0base.jsonl" > /dev/null 2>&1
  echo "$dir base rc $?"
  for v in auto/-/1 auto/-/2 128x128/-/1 128x128/-/2 128x128/2/1 128x128/2/2 128x64/-/- 128x64/2/- 128x256/-/- 256x128/-/- 128x128/3/2 128x128/4/2; do
    IFS=/ read -r tile split per <<< "$v"
    [[ $tile == auto ]] && tile=; [[ $split == - ]] && split=; [[ $per == - ]] && per=
    env ${tile:+CONVGUARD_WGMMA_TILE=$tile} ${split:+CONVGUARD_WGMMA_SPLIT=$split} \
      ${per:+CONVGUARD_WGMMA_PER_SM=$per} timeout 60 $D/gpu_bench $G --direction $dir --json "$L/${dir%%_*}_${v//\//_}.jsonl" > /dev/null 2>&1
    echo "$dir $v rc $?"
  done
  python3 $D/summ.py "$L"/${dir%%_*}_*.jsonl > "$L/variants_$dir.txt"
done
cat "$L/variants_fwd.txt" "$L/variants_bwd_data.txt"
tar czf "$OUT/logs.tgz" -C "$OUT" l
