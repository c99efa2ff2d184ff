#!/usr/bin/env bash
# What runs on the GPU machine (docs/gpu.md), in parts that each fit one device call:
#   PARTS=tests   the GPU tests, compute-sanitizer over the own kernels' shapes, the chaos_gpu
#                 scenarios, transforms around GPU solvers, -S auto on the GPU
#   PARTS=probe   a GPU probe of the standard suite: own GPU solvers and every cuDNN solver, in
#                 the dtypes of PROBE_DTYPES (default f32,f16,bf16), with its table and HTML report
#   PARTS=conv1d  1D problems (wav2vec 2.0's feature encoder at batch 4, and small odd ones) over
#                 gpu:* and cudnn:*, all directions, f32 and bf16: every row verified or declined
#   PARTS=devices `--device cuda:all` against `--device cuda:0` on the same sweep (the standard
#                 suite over gpu:* and cudnn:*:heur*, forward f32): the rows must be equal
#   PARTS=twogpu  issue 21, on a machine with two GPUs: (1) a sweep with the chaos GPU plugin's
#                 hanging and faulting kernels among good solvers, on cuda:all and on cuda:0;
#                 (2) the standard suite over gpu:* and cudnn:*, three directions, f32 and bf16,
#                 on cuda:all and then on cuda:0, each into a fresh database, timed, rows compared
#                 (TWOGPU_DEVS names the runs of (2), default "cuda:all cuda:0", so that each can
#                 have a call of its own, TWOGPU_TIMEOUTS their limits in seconds, one per run
#                 (default 420 each); TWOGPU_FAULT=0 leaves out (1), TWOGPU_FAULT_DEVS names its runs)
#   PARTS=bench   the GPU benchmark (own solvers vs cuDNN, device events)
#   PARTS=peer    the honest peer: gpu_bench on ResNet-50 b32 (bf16 NHWC in all three directions,
#                 f32 NCHW forward) with the plugin on PyTorch's own cuDNN, then bench/gpu_peer.py
#                 times PyTorch's convolution on the same problems under CUDA-graph replay
#                 (PY: the Python with PyTorch, default /opt/torch/.venv/bin/python3 where it
#                 exists, else python3), and bf16 NHWC forward at b256 (PEER_B256=0 leaves it out).
#                 PEER_CALLS=N times the own and plugin calls N back to back (gpu_bench --calls,
#                 as gpu_peer.py times PyTorch's under graph replay; default 1: each call alone)
#   PARTS=overhead  the host overhead of a selected solver's call through the library API
# Build here first (cmake --build build/release), then run with the build folder carried:
#   run(command="PARTS='tests bench' bash scripts/gpu_check.sh", carry=["build/release"])
# Logs go to $OUT (or ./gpu-logs).
set -u
B=${BUILD:-build/release}
OUT=${OUT:-gpu-logs}
PARTS=${PARTS:-tests probe bench overhead}
mkdir -p "$OUT"
export CONVGUARD_DATA_DIR=$PWD/data
CG=$B/convguard
CUDNN=$PWD/$B/convguard_cudnn.so
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | tee "$OUT/gpu.txt"
step() { echo "=== $*"; }
has() { [[ " $PARTS " == *" $1 "* ]]; }

if has tests; then
step "gpu tests (every GPU solver on the random property set and on its own shapes; large layers)"
timeout 300 "$B/tests/gpu_tests" 2>&1 | grep -vE "^\[ RUN|^$" | tail -30 | tee "$OUT/gpu_tests.log"

# gpu_tests' FILTER once per VALUE of the setting VAR forced, the tail of each into $OUT/LOGV.log.
forced_tests() {
  local var=$1 values=$2 filter=$3 log=$4 v
  for v in $values; do
    env "$var=$v" timeout 200 "$B/tests/gpu_tests" --gtest_filter="$filter" \
      2>&1 | grep -vE "^\[ RUN|^$" | tail -6 | tee "$OUT/$log$v.log"
  done
}
SHAPES='Gpu.TensorCoreWgmmaOnItsShapes:Gpu.TensorCoreWgmmaBulkCopy*:Gpu.TensorCoreWgmmaBackwardData*:Gpu.TensorCoreWgmmaWideSplitsAndPixelTies:Gpu.LargeLayersVerifyBySampling'

step "gpu:wgmma_implicit_gemm's shape tests with each loader forced (CONVGUARD_WGMMA_WS=0: the two-warpgroup kernel, strided backward-data's phased grid too; 4, 5: bulk copies)"
forced_tests CONVGUARD_WGMMA_WS "0 4 5" \
  "$SHAPES:Gpu.TensorCoreWgmmaTf32OnItsShapes:Gpu.TensorCoreWgmmaWaveCounting:Gpu.TensorCoreWgmmaTwoPerSmIsDeterministic" gpu_tests_ws

step "gpu:wgmma_implicit_gemm's shape tests with the bulk-copy kernel's 128 x 128 and 128 x 64 tiles split 2, 3, 4 and 8 (CONVGUARD_WGMMA_WS=4 CONVGUARD_WGMMA_TILE=T CONVGUARD_WGMMA_SPLIT=N): the splits as clusters (of up to 8), then as fp32 planes (CONVGUARD_WGMMA_SPLIT_CLUSTER=0)"
for tile in 128x128 128x64; do
  for cl in 8 0; do
    CONVGUARD_WGMMA_WS=4 CONVGUARD_WGMMA_TILE=$tile CONVGUARD_WGMMA_SPLIT_CLUSTER=$cl forced_tests CONVGUARD_WGMMA_SPLIT "2 3 4 8" \
      "$SHAPES:Gpu.TensorCoreWgmmaSplitClusters" gpu_tests_split_clusters_${tile}_${cl}_
  done
done

step "gpu:wgmma_implicit_gemm's shape tests on the persistent bulk-copy kernel (CONVGUARD_WGMMA_WS=5) with its bulk stores off (CONVGUARD_WGMMA_BULK_STORE=0: store_staged)"
CONVGUARD_WGMMA_WS=5 forced_tests CONVGUARD_WGMMA_BULK_STORE "0" "$SHAPES" gpu_tests_ws5_staged

step "gpu:wgmma_implicit_gemm's shape tests with strided backward-data's phased walk forced off and on (CONVGUARD_WGMMA_PHASED=0, 1)"
forced_tests CONVGUARD_WGMMA_PHASED "0 1" "$SHAPES" gpu_tests_phased

step "gpu:wgmma_implicit_gemm's shape tests with pixel-wide tiles forced (CONVGUARD_WGMMA_PIXELS=96, 192)"
forced_tests CONVGUARD_WGMMA_PIXELS "96 192" "$SHAPES" gpu_tests_pixels

step "gpu:wgmma_implicit_gemm's shape tests with the tiles in M-fastest order (CONVGUARD_WGMMA_ORDER=1)"
CONVGUARD_WGMMA_ORDER=1 timeout 200 "$B/tests/gpu_tests" \
  --gtest_filter='Gpu.TensorCoreWgmma*:Gpu.LargeLayersVerifyBySampling' \
  2>&1 | grep -vE "^\[ RUN|^$" | tail -6 | tee "$OUT/gpu_tests_order_m.log"

step "gpu:wgmma_bwd_weights' tests with each cluster size forced (CONVGUARD_WGMMA_BWDW_CLUSTER=N)"
for cz in 1 2 3 4 8; do
  CONVGUARD_WGMMA_BWDW_CLUSTER=$cz timeout 150 "$B/tests/gpu_tests" \
    --gtest_filter='Gpu.TensorCoreWgmmaBackwardWeights*:Gpu.WgmmaBackwardWeights*' \
    2>&1 | grep -vE "^\[ RUN|^$" | tail -3 | tee "$OUT/gpu_tests_bwdw_cluster$cz.log"
done

step "gpu:wgmma_bwd_weights' tests with each loader forced (CONVGUARD_WGMMA_BWDW_TMA=0: cp.async everywhere; 1: bulk copies on 32-pixel plans too)"
forced_tests CONVGUARD_WGMMA_BWDW_TMA "0 1" \
  'Gpu.TensorCoreWgmmaBackwardWeights*:Gpu.LargeLayersVerifyBySampling' gpu_tests_bwdw_tma
step "gpu:wgmma_bwd_weights' tests with the bulk-copy kernel's tile columns forced (CONVGUARD_WGMMA_BWDW_BN=128, 192, 256)"
forced_tests CONVGUARD_WGMMA_BWDW_BN "128 192 256" \
  'Gpu.TensorCoreWgmmaBackwardWeights*:Gpu.LargeLayersVerifyBySampling' gpu_tests_bwdw_bn

step "compute-sanitizer memcheck: the own kernels on their shapes"
timeout 300 compute-sanitizer --tool memcheck --print-limit 5 "$B/tests/gpu_tests" \
  --gtest_filter='Gpu.TensorCore*:Gpu.Winograd*:Gpu.Direct*' 2>&1 | tail -4 | tee "$OUT/sanitizer.log"

step "chaos_gpu: a hanging kernel and an out-of-bounds write, then good solvers"
rm -f /tmp/chaos.db*
start=$(date +%s.%N)
timeout 120 "$CG" probe --device cuda:0 --db /tmp/chaos.db --plugin "$B/convguard_chaos_gpu.so" \
  --solvers 'gpu:chaos_hang,gpu:chaos_oob,gpu:naive,gpu:implicit_gemm' --problem mb1ic3ih8oc4kh3ph1 \
  --timeout 5 2>&1 | tee "$OUT/chaos_gpu.log"
echo "elapsed $(python3 -c "print(round($(date +%s.%N) - $start, 2))") s" | tee -a "$OUT/chaos_gpu.log"

step "transforms around GPU solvers (host round trip), and -S auto choosing on the GPU"
{
  H='--dt=f16 --stag=axb --wtag=axb --dtag=axb mb4ic32ih40oc32oh40kh3ph1'
  for case in "xform:tile(20x20):gpu:implicit_gemm|mb2ic16ih45oc24oh45kh3ph1" \
              "xform:split_batch(2):gpu:tc_implicit_gemm|$H" \
              "xform:pad_channels(c+1,k+1):gpu:winograd|mb2ic15ih20oc17oh20kh3ph1" \
              "xform:relayout(nhwc):cudnn:fwd:heur0|--dt=f16 mb2ic16ih20oc16oh20kh3ph1" \
              "xform:split_groups(1):gpu:direct|g2mb2ic16ih20oc16oh20kh5ph2"; do
    CONVGUARD_PLUGINS=$CUDNN "$CG" driver --device cuda:0 -S "${case%%|*}" -V 1 \
      --problem "${case#*|}" 2>&1 | tail -1
  done
  rm -f /tmp/auto.db*
  CONVGUARD_PLUGINS=$CUDNN "$CG" probe --device cuda:0 --db /tmp/auto.db --problem mb8ic64ih28oc64oh28kh3ph1 \
    --solvers 'gpu:*,cudnn:fwd:*' 2>&1 | tail -2
  for tf in "" --tf32; do
    CONVGUARD_PLUGINS=$CUDNN "$CG" driver --device cuda:0 --db /tmp/auto.db -S auto $tf \
      --problem mb8ic64ih28oc64oh28kh3ph1 2>&1 | grep -E "chose|Verifies|FAILED"
  done
} 2>&1 | tee "$OUT/gpu_transforms_auto.log"
fi

if has probe; then
D=${PROBE_DTYPES:-f32,f16,bf16}
tag=$(echo "$D" | tr ',' '_')
step "GPU probe of the standard suite: gpu:* and cudnn:*, all directions, dtypes $D"
rm -f /tmp/gstd.db*
start=$(date +%s.%N)
timeout ${PROBE_TIMEOUT:-540} "$CG" probe --device cuda:0 --db /tmp/gstd.db --suite standard \
  --plugin "$B/convguard_cudnn.so" --solvers 'gpu:*,cudnn:*' --workarounds off \
  --directions fwd,bwd_data,bwd_weights --dtypes "$D" >"$OUT/gpu_standard_$tag.txt" 2>&1
echo "rc $? elapsed $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s" | tee -a "$OUT/gpu_standard_$tag.txt"
tail -3 "$OUT/gpu_standard_$tag.txt"
"$CG" report --db /tmp/gstd.db --device all --html "$OUT/gpu_standard_$tag.html" 2>&1 | tail -1
"$CG" db export --db /tmp/gstd.db | gzip > "$OUT/gpu_standard_$tag.jsonl.gz"
fi

if has conv1d; then
step "1D problems on the GPU: gpu:* and cudnn:*, all directions, f32 and bf16"
rm -f /tmp/g1d.db*
printf '%s\n' 'mb3ic5iw37oc7kw5sw2pw3' 'g2mb2ic8iw29oc6kw3dw1pw2' 'g16mb2ic16iw50oc16kw7pw3' \
  '--stag=axb --dtag=axb mb4ic64iw200oc96kw3pw1' >/tmp/odd1d.txt
start=$(date +%s.%N)
timeout ${PROBE_TIMEOUT:-400} "$CG" probe --device cuda:0 --db /tmp/g1d.db --model wav2vec2_features \
  --batch 4 --suite /tmp/odd1d.txt --plugin "$B/convguard_cudnn.so" --solvers 'gpu:*,cudnn:*' \
  --workarounds off --timing 20 --directions fwd,bwd_data,bwd_weights --dtypes f32,bf16 \
  >"$OUT/gpu_conv1d.txt" 2>&1
echo "rc $? elapsed $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s" | tee -a "$OUT/gpu_conv1d.txt"
grep -E "^model|statuses|finished" "$OUT/gpu_conv1d.txt" | tail -5
"$CG" db show --db /tmp/g1d.db | grep -E " (wrong|crash|hang|error) " | tee "$OUT/gpu_conv1d.failures.txt" | head
"$CG" db export --db /tmp/g1d.db | gzip > "$OUT/gpu_conv1d.jsonl.gz"
fi

if has bench; then
step "benchmark: own GPU solvers vs every cuDNN algorithm (device events behind a delay, rotated inputs)"
export CONVGUARD_PLUGINS=$CUDNN
{
  "$B/bench/gpu_bench" --suite data/suites/resnet50.txt --batch 32 --dtype bf16 --layout nhwc
  "$B/bench/gpu_bench" --suite data/suites/resnet50.txt --batch 32 --dtype f16 --layout nhwc
  "$B/bench/gpu_bench" --suite data/suites/resnet50.txt --batch 32 --dtype f32 --layout nchw
  "$B/bench/gpu_bench" --suite data/suites/resnet50.txt --batch 32 --dtype f32 --layout nhwc
  "$B/bench/gpu_bench" --suite data/suites/resnet50.txt --batch 1 --dtype f32 --layout nchw --runs 100
  "$B/bench/gpu_bench" --suite data/suites/resnet50.txt --batch 1 --dtype bf16 --layout nhwc --runs 100
} >"$OUT/gpu_bench.log" 2>&1
grep -A8 "^geomean" "$OUT/gpu_bench.log"

fi

if has devices; then
step "cuda:all vs cuda:0: the same sweep, status per (problem, solver) compared"
for dev in cuda:0 cuda:all; do
  rm -f "/tmp/dev_${dev/:/_}.db"*
  timeout 200 "$CG" probe --device "$dev" --db "/tmp/dev_${dev/:/_}.db" --suite standard \
    --plugin "$B/convguard_cudnn.so" --solvers 'gpu:*,cudnn:fwd:heur*' --workarounds off \
    --timing 0 >"$OUT/devices_${dev/:/_}.txt" 2>&1
  echo "$dev: rc $? $(tail -1 "$OUT/devices_${dev/:/_}.txt")"
  "$CG" db export --db "/tmp/dev_${dev/:/_}.db" >"$OUT/devices_${dev/:/_}.jsonl"
done
python3 scripts/compare_device_rows.py "$OUT/devices_cuda_0.jsonl" "$OUT/devices_cuda_all.jsonl" | tee "$OUT/devices_compare.txt"
fi

if has twogpu; then
# The multicast switches of the machine's notes stay set (convguard uses no NCCL; kept anyway).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
{ nvidia-smi topo -m; nproc; grep -m1 "model name" /proc/cpuinfo; } >"$OUT/topology.txt" 2>&1
step "a fault on one GPU: chaos_hang and chaos_oob among good solvers, cuda:all then cuda:0"
fault_devs=${TWOGPU_FAULT_DEVS:-cuda:all cuda:0}; [[ ${TWOGPU_FAULT:-1} == 1 ]] || fault_devs=""
grep -v -- --dir data/suites/standard.txt | grep -m 8 . >/tmp/chaos2_suite.txt
for dev in $fault_devs; do
  db="/tmp/chaos2_${dev/:/_}.db"; rm -f "$db"*
  start=$(date +%s.%N)
  timeout 150 "$CG" probe --device "$dev" --db "$db" --suite /tmp/chaos2_suite.txt --dtypes f32 \
    --plugin "$B/convguard_chaos_gpu.so" --workarounds off --timeout 3 \
    --solvers 'gpu:chaos_hang,gpu:chaos_oob,gpu:implicit_gemm,gpu:naive,gpu:direct,gpu:winograd' \
    >"$OUT/chaos2_${dev/:/_}.txt" 2>&1
  echo "$dev: rc $? elapsed $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s" | tee -a "$OUT/chaos2_${dev/:/_}.txt"
  tail -2 "$OUT/chaos2_${dev/:/_}.txt"
  "$CG" db export --db "$db" >"$OUT/chaos2_${dev/:/_}.jsonl"
done
if compgen -G "$OUT/chaos2_*" >/dev/null; then
  [[ -f "$OUT/chaos2_cuda_0.jsonl" ]] && python3 scripts/compare_device_rows.py \
    "$OUT/chaos2_cuda_0.jsonl" "$OUT/chaos2_cuda_all.jsonl" | tee "$OUT/chaos2_compare.txt"
  # One file (the device tool brings back few).
  tar -C "$OUT" -czf "$OUT/chaos2.tar.gz" $(cd "$OUT" && ls chaos2_*) && rm -f "$OUT"/chaos2_*
fi

step "the standard suite, gpu:* and cudnn:*, three directions, f32 and bf16: cuda:all, then cuda:0"
devs=(${TWOGPU_DEVS:-cuda:all cuda:0}); limits=(${TWOGPU_TIMEOUTS:-})
for i in "${!devs[@]}"; do
  dev=${devs[$i]}
  db="/tmp/two_${dev/:/_}.db"; rm -f "$db"*
  start=$(date +%s.%N)
  timeout "${limits[$i]:-420}" "$CG" probe --device "$dev" --db "$db" --suite standard \
    --plugin "$B/convguard_cudnn.so" --solvers 'gpu:*,cudnn:*' --workarounds off \
    --directions fwd,bwd_data,bwd_weights --dtypes f32,bf16 >"$OUT/two_${dev/:/_}.txt" 2>&1
  echo "$dev: rc $? elapsed $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s" | tee -a "$OUT/two_${dev/:/_}.txt"
  tail -3 "$OUT/two_${dev/:/_}.txt"
  "$CG" db export --db "$db" | gzip >"$OUT/two_${dev/:/_}.jsonl.gz"
  gzip "$OUT/two_${dev/:/_}.txt"
done
[[ -f "$OUT/two_cuda_0.jsonl.gz" ]] && python3 scripts/compare_device_rows.py "$OUT/two_cuda_0.jsonl.gz" \
  "$OUT/two_cuda_all.jsonl.gz" | tee "$OUT/two_compare.txt"
fi

if has peer; then
# The H100 machines had PyTorch in /opt/torch/.venv, the H200 machines in the system python3.
if [ -z "${PY:-}" ]; then
  PY=python3; [ -x /opt/torch/.venv/bin/python3 ] && PY=/opt/torch/.venv/bin/python3
fi
step "honest peer: the plugin on PyTorch's cuDNN, and PyTorch itself under CUDA-graph replay"
CUDNN_LIB=$("$PY" -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
export CONVGUARD_PLUGINS=$CUDNN CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-}
rm -f "$OUT/peer.jsonl"
calls=$((10#${PEER_CALLS:-1}))
# Back-to-back calls: the tensor-core solvers, gpu:simt_gemm (f32) and cuDNN; the slow SIMT ones
# (seconds a call on some layers) left out, fewer runs, twice the time limits. (The bf16 b32
# directions alone took about 6.5 minutes so, docs/gpu/2026-11-29-session14/call3: with f32 and
# b256 it needs more than one 10-minute device command; PEER_B256=0 shortens it.)
only=(--calls "$calls"); runs=30; limit=150
if ((calls != 1)); then
  only+=(--only 'gpu:wgmma_*,gpu:tc_*,gpu:simt_gemm*,cudnn:*'); runs=12; limit=300
fi
{
  for d in fwd bwd_data bwd_weights; do
    timeout $limit "$B/bench/gpu_bench" --suite data/suites/resnet50.txt --batch 32 --dtype bf16 \
      --layout nhwc --direction $d --runs $runs "${only[@]}" --json "$OUT/peer.jsonl"
  done
  timeout $limit "$B/bench/gpu_bench" --suite data/suites/resnet50.txt --batch 32 --dtype f32 \
    --layout nchw --runs $runs "${only[@]}" --json "$OUT/peer.jsonl"
  [ "${PEER_B256:-1}" = 1 ] && timeout $((limit + 50)) "$B/bench/gpu_bench" \
    --suite data/suites/resnet50.txt --batch 256 --dtype bf16 --layout nhwc --direction fwd \
    --runs 10 "${only[@]}" --json "$OUT/peer.jsonl"
} >"$OUT/peer_gpu_bench.log" 2>&1
"$PY" bench/gpu_peer.py "$OUT/peer.jsonl" >"$OUT/peer.log" 2>&1
head -1 "$OUT/peer.log"; grep -A20 "^geomean" "$OUT/peer.log"
fi

if has overhead; then
step "host overhead of one selected-solver call through the library API"
export CONVGUARD_PLUGINS=$CUDNN
rm -f /tmp/o.db*
P=mb1ic32ih14oc32oh14kh3ph1
P2='--dt=bf16 --stag=axb --wtag=axb --dtag=axb mb32ic256ih14oc256oh14kh3ph1'
{
  for p in "$P" "$P2"; do
    "$CG" probe --device cuda:0 --db /tmp/o.db --problem "$p" --solvers 'gpu:*,cudnn:fwd:*' 2>&1 | tail -1
    # As the evidence chooses (cuDNN's fastest, here), then with cuDNN skipped: an own solver.
    "$B/bench/api_overhead" --device cuda:0 --db /tmp/o.db --problem "$p" --solver gpu:implicit_gemm \
      --solver gpu:tc_implicit_gemm --solver cudnn:fwd:heur0 --solver cudnn:fwd:IMPLICIT_PRECOMP_GEMM
    CONVGUARD_SKIP_SOLVERS='cudnn:*' "$B/bench/api_overhead" --device cuda:0 --db /tmp/o.db --problem "$p"
  done
} 2>&1 | tee "$OUT/api_overhead.log"
fi
