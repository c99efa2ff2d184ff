#!/bin/bash
# Session 15, call 5 (H200): backward-data's stride-2 layers (0.66-0.76x of the peer), bf16 b32:
# the plan printed, every tile shape and loader mode forced (does the plan leave time?), and
# ncu's kernel metrics for ours and the plugin's cuDNN (which kernels cuDNN runs there).
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s15e; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
run() {  # name envs...
  local n=$1; shift
  env "$@" timeout 60 db/bench/gpu_bench --suite devbin/s2.txt --batch 32 --dtype bf16 --layout nhwc \
    --direction bwd_data --runs 20 --only gpu:wgmma_implicit_gemm > $O/v_$n.log 2>&1 || echo "rc $? $n"
}
CONVGUARD_WGMMA_PLAN=1 run default X=1
grep "plan:" $O/v_default.log | sort | uniq -c
for r in 1 2; do
  run default_r$r X=1
  for tile in 128x64 128x128 128x256 256x64 256x128; do for ws in 0 1 2 3; do
    run t${tile}_ws${ws}_r$r CONVGUARD_WGMMA_TILE=$tile CONVGUARD_WGMMA_WS=$ws
  done; done
  for sp in 2 4; do run sp${sp}_r$r CONVGUARD_WGMMA_SPLIT=$sp; done
  echo "round $r $(t)"
done
for f in $O/v_*.log; do printf '%s ' $(basename $f .log); grep -E '^\s+gpu:wgmma_implicit_gemm' $f | awk '{printf "%s ", $2}'; echo; done > $O/table.txt
sort $O/table.txt | head -60
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | head -1)
M=gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__cluster_dim_z,launch__shared_mem_per_block_dynamic,launch__registers_per_thread,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
PY=python3; [ -x /opt/torch/.venv/bin/python3 ] && PY=/opt/torch/.venv/bin/python3
CUDNN_LIB=$("$PY" -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
timeout 150 $NCU --clock-control none --metrics $M --csv db/bench/gpu_bench --suite devbin/s2.txt --batch 32 --dtype bf16 --layout nhwc --direction bwd_data --runs 2 --only gpu:wgmma_implicit_gemm > $O/ncu_own.csv 2> $O/ncu_own.err; echo "ncu own rc $? $(t)"
CONVGUARD_PLUGINS=$PWD/db/convguard_cudnn.so CONVGUARD_CUDNN_PATH=${CUDNN_LIB:-} timeout 200 $NCU --clock-control none --metrics $M --csv db/bench/gpu_bench --suite devbin/s2.txt --batch 32 --dtype bf16 --layout nhwc --direction bwd_data --runs 2 --only 'cudnn:bwd_data:heur0,cudnn:bwd_data:heur1,cudnn:bwd_data:heur2,cudnn:bwd_data:heur3,cudnn:bwd_data:fallback2' > $O/ncu_cudnn.csv 2> $O/ncu_cudnn.err; echo "ncu cudnn rc $? $(t)"
echo "total $(t)"
tar -C /tmp -czf ${OUT:-out}/s15e.tgz s15e
