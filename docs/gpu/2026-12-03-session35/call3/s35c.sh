#!/bin/bash
# Session 35 call 3 (H200): bench/gpu_peer.py's PyTorch peer as before (one benchmark search of
# at most 10 algorithms, PyTorch's default) and as now (3 searches over every algorithm), twice
# each, alternating, on call 2's ResNet-50 b32 bf16 rows (own and plugin times from call 2).
set -u
L=$OUT/logs; mkdir -p $L
S0=$(date +%s); t() { echo "$1 at $(( $(date +%s) - S0 ))s" >> $L/times.log; }
PY=/opt/torch/.venv/bin/python3
for r in 1 2; do
  timeout -k 5 100 $PY bench/gpu_peer.py devbin/bf16_35.jsonl --searches 1 --limit 10 > $L/old_r$r.log 2>&1; t "old r$r rc $?"
  timeout -k 5 200 $PY bench/gpu_peer.py devbin/bf16_35.jsonl > $L/new_r$r.log 2>&1; t "new r$r rc $?"
done
cat $L/times.log; grep -h "over 23" $L/*.log | cut -c1-100
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
