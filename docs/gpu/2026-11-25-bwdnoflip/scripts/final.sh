#!/usr/bin/env bash
# Device call 4 (branch gpubf16): the in-place plans' tile rules (tile_for/split_count with
# in_place, from secondary/'s forced shapes). GPU tests and memcheck over the in-place tests with
# the branch's last binaries (.); backward-data interleaved over three binaries, base (main
# 0985193), prev (the in-place path with forward's tile rules, 5b7d471) and . (the rules), three
# rounds; forward with shapes forced on . (auto, 128 x 256, 128 x 128 split in 2: would forward
# gain from the same rules?); then the honest peer for backward-data with . (scripts/gpu_wgmma.sh
# PARTS=peer DIRECTION=bwd_data).
set -u
D=devbin-bf16
export LD_LIBRARY_PATH=$PWD/$D/lib:${LD_LIBRARY_PATH:-}
export CONVGUARD_DATA_DIR=$PWD/data
for f in $D/*.gz $D/base/*.gz $D/prev/*.gz; do [[ -e $f ]] && gunzip -kf "$f"; done
chmod +x $D/gpu_* $D/base/gpu_* $D/prev/gpu_* 2>/dev/null
L=$OUT/l; mkdir -p "$L"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv | tee "$L/gpu.txt"
( time timeout 120 $D/gpu_tests ) 2>&1 | grep -vE "^\[ RUN|^$" > "$L/gpu_tests.log"
grep -E "PASSED|FAILED|real|FilterInPlace" "$L/gpu_tests.log"
timeout 120 compute-sanitizer --tool memcheck --print-limit 5 $D/gpu_tests \
  --gtest_filter='Gpu.TensorCoreWgmmaBackwardDataFilterInPlace*' > "$L/memcheck.log" 2>&1
echo "memcheck rc $?: $(tail -2 "$L/memcheck.log" | tr '\n' ' ')"
G="--suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc --runs 30 --only gpu:wgmma_implicit_gemm"
i=0
for round in 1 2 3; do
  for v in base prev new; do
    i=$((i + 1))
    b=$D; [[ $v != new ]] && b=$D/$v
    timeout 100 $b/gpu_bench $G --direction bwd_data --json "$L/var_${i}_$v.jsonl" > /dev/null 2>&1
    echo "bwd_data $i $v rc $?"
  done
done
for t in auto 128x256 128x128/2; do
  tile=${t%%/*} split=; [[ $t == */* ]] && split=${t#*/}
  n=fwd_${t/\//s}
  if [[ $tile == auto ]]; then
    timeout 100 $D/gpu_bench $G --direction fwd --json "$L/$n.jsonl" > /dev/null 2>&1
  else
    CONVGUARD_WGMMA_TILE=$tile CONVGUARD_WGMMA_SPLIT=$split timeout 100 $D/gpu_bench $G \
      --direction fwd --json "$L/$n.jsonl" > /dev/null 2>&1
  fi
  echo "fwd $t rc $?"
done
VSOLVERS="gpu:wgmma_implicit_gemm gpu:wgmma_implicit_gemm" python3 scripts/variant_summary.py "$L"/var_*.jsonl > "$L/variants_bwd_data.txt"
VSOLVERS="gpu:wgmma_implicit_gemm gpu:wgmma_implicit_gemm" python3 scripts/variant_summary.py "$L"/fwd_*.jsonl | tee "$L/variants_fwd.txt"
BUILD=$D PARTS=peer DIRECTION=bwd_data bash scripts/gpu_wgmma.sh > "$L/peer_part.txt" 2>&1
cat "$L/summary.txt"
tar czf "$OUT/logs.tgz" -C "$OUT" l
