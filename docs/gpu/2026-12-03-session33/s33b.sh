#!/bin/bash
# Session 33 call 2 (H200): bench/gpu_peer.py --kernels after the review (second pass after every
# timing, rotated copies) on call 1's own rows (ResNet-50 b32 bf16 NHWC, three directions).
set -u
L=$OUT/logs; mkdir -p $L
PY=/opt/torch/.venv/bin/python3
timeout -k 5 240 $PY bench/gpu_peer.py --kernels docs/gpu/2026-12-03-session33/call1/own.jsonl > $L/peer_kernels.log 2> $L/peer_kernels.err; echo "peer rc $?"
tail -3 $L/peer_kernels.err; grep -c "us  " $L/peer_kernels.log
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
