#!/bin/bash
# Session 14, call 6 (H200): a per-block timeline of gpu:wgmma_bwd_weights' bulk-copy kernel
# (an experiment build, not committed: globaltimer and clock64 at entry, after the barriers'
# initialisation, at the first full stage, after the loop, after the epilogue).
set -u
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s14f; mkdir -p $O ${OUT:-out}
grep -E 'res3\[b-d\]_branch2a|res4\[a-f\]_branch2c|res5\[a-c\]_branch2c|res3\[b-d\]_branch2b' data/suites/resnet50.txt > $O/mini.txt
for b in 8 32 128; do
  CONVGUARD_WGMMA_BWDW_TRACE=1 CONVGUARD_WGMMA_BWDW_PLAN=1 timeout 60 db/bench/gpu_bench --suite $O/mini.txt --batch $b --dtype bf16 --layout nhwc --direction bwd_weights --runs 3 --only gpu:wgmma_bwd_weights > $O/trace_b$b.log 2>&1
  echo "== b$b"; grep -E "^(res|conv)|trace:|plan:" $O/trace_b$b.log | awk '/^res/{print; n=0; next} /plan:/{if(!p[$0]++) print; next} {last=$0} END{}' | head -0
  python3 - $O/trace_b$b.log <<'PY'
import sys, re
cur=None; last={}; plan={}
for line in open(sys.argv[1]):
    if re.match(r'^res', line): cur=line.split()[0]
    if 'trace:' in line and cur: last[cur]=line.strip()
    if 'plan:' in line and cur and cur not in plan: plan[cur]=line.strip()[36:]
for k in last: print(k, '|', plan.get(k,''), '\n   ', last[k])
PY
done
tar -C /tmp -czf ${OUT:-out}/s14f.tgz s14f
