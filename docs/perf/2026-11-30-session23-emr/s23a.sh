#!/bin/bash
# Session 23 call 1: the CPU benchmark (issue 16) on the device host's AVX-512 Xeon, 2 threads a
# job, each job on its own pair of physical cores; jobs = suite x direction, dtypes f32,bf16.
exec > >(tee $OUT/run.log) 2>&1
lscpu > $OUT/lscpu.txt; lscpu -e > $OUT/lscpu_e.txt; free -g > $OUT/free.txt; uname -a >> $OUT/free.txt
grep -m1 -o 'avx512[a-z_0-9]*\|amx[a-z_0-9]*' /proc/cpuinfo | head -1
grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E 'avx512|amx' | tr '\n' ' '; echo
mkdir -p /tmp/c && tar -C /tmp/c -xJf devbin/cpu23.tar.xz || exit 1
export LD_LIBRARY_PATH=/tmp/c/lib
B=/tmp/c/convguard_bench
ldd $B | grep "not found"
# one CPU per physical core, then pairs
mapfile -t cpus < <(lscpu -p=CPU,CORE,SOCKET | grep -v '^#' | sort -t, -k3,3n -k2,2n -u | awk -F, '!seen[$3","$2]++{print $1}')
echo "physical cores (first CPU of each): ${cpus[*]}"
slots=()
for ((i=0; i+1<${#cpus[@]}; i+=2)); do slots+=("${cpus[i]},${cpus[i+1]}"); done
echo "slots: ${slots[*]}"
waves=$(( (6 + ${#slots[@]} - 1) / ${#slots[@]} )); JOB_S=$(( 540 / waves )); echo "waves $waves, $JOB_S s a job"
jobs_list=()
for s in resnet50 standard; do for d in bwd_weights fwd bwd_data; do jobs_list+=("$s:$d"); done; done
run_job() {  # run_job SLOT SUITE DIR
  local log=$OUT/${2}_${3}.log
  timeout $JOB_S taskset -c $1 $B --suite data/suites/$2.txt --reps 3 --threads 2 --dtypes f32,bf16 --directions $3 > $log 2>&1
  echo "job $2 $3 on CPUs $1: rc $? in $SECONDS s" >> $log
}
n=0
for j in "${jobs_list[@]}"; do
  slot=${slots[$((n % ${#slots[@]}))]}
  if (( n > 0 && n % ${#slots[@]} == 0 )); then wait; fi
  run_job $slot ${j%%:*} ${j##*:} &
  n=$((n+1))
done
wait
tail -n 12 $OUT/*.log
