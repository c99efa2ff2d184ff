#!/usr/bin/env bash
# Device call 2 (branch gpubf16): before/after on ResNet-50 b32 bf16 NHWC backward-data, binaries
# interleaved (base/: main 0985193's gpu_bench; .: the branch's), gpu_bench --only
# gpu:wgmma_implicit_gemm --runs 30, in the order base, new, base, new, new with the flip forced
# (CONVGUARD_WGMMA_BWD_FLIP=1), base, new; forward base / new once (the forward kernels' source
# changed only by a template parameter); Nsight Compute's duration of base's flip kernel and of its
# GEMM kernel per layer (the flip's share); then the honest peer (scripts/gpu_wgmma.sh PARTS=peer
# DIRECTION=bwd_data) with the branch's binaries.
set -u
D=devbin-bf16
export LD_LIBRARY_PATH=$PWD/$D/lib:${LD_LIBRARY_PATH:-}
export CONVGUARD_DATA_DIR=$PWD/data
for f in $D/*.gz $D/base/*.gz; do [[ -e $f ]] && gunzip -kf "$f"; done; chmod +x $D/gpu_* $D/base/gpu_* 2>/dev/null
L=$OUT/l; mkdir -p "$L"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv | tee "$L/gpu.txt"
G="--suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc --runs 30 --only gpu:wgmma_implicit_gemm"
i=0
for v in base new base new flip base new; do
  i=$((i + 1))
  b=$D; [[ $v == base ]] && b=$D/base
  env $([[ $v == flip ]] && echo CONVGUARD_WGMMA_BWD_FLIP=1) timeout 100 $b/gpu_bench $G --direction bwd_data \
    --json "$L/var_${i}_$v.jsonl" > /dev/null 2>&1
  echo "bwd_data $i $v rc $?"
done
for v in base new; do
  b=$D; [[ $v == base ]] && b=$D/base
  timeout 100 $b/gpu_bench $G --direction fwd --json "$L/fwd_$v.jsonl" > /dev/null 2>&1
  echo "fwd $v rc $?"
done
VSOLVERS="gpu:wgmma_implicit_gemm gpu:wgmma_implicit_gemm" python3 scripts/variant_summary.py "$L"/var_*.jsonl | tee "$L/variants_bwd_data.txt"
VSOLVERS="gpu:wgmma_implicit_gemm gpu:wgmma_implicit_gemm" python3 scripts/variant_summary.py "$L"/fwd_*.jsonl | tee "$L/variants_fwd.txt"
# The flip's share: base's kernels timed one by one by ncu (no clock control: the clocks as found).
timeout 150 ncu --clock-control none --kernel-name regex:'phase_filters|wgmma_forward|reduce_splits' \
  --metrics gpu__time_duration.sum --csv $D/base/gpu_bench $G --direction bwd_data --runs 2 \
  > "$L/ncu_base.csv" 2> "$L/ncu_base.err"
echo "ncu rc $?"
python3 $D/flip_share.py "$L/ncu_base.csv" | tee "$L/flip_share.txt"
BUILD=$D PARTS=peer DIRECTION=bwd_data bash scripts/gpu_wgmma.sh > "$L/peer_part.txt" 2>&1
cat "$L/summary.txt"
tar czf "$OUT/logs.tgz" -C "$OUT" l
