#!/bin/bash
# Session 27 call 2 (CPU only, the device host's Xeon), commit 58e2de2: plprof alone, 2 threads,
# cpu:bf16_planar:amx_bf16's scratch three ways (malloc'd 4 KiB pages, 2 MiB-aligned 4 KiB pages,
# allocate_host_buffer's huge pages), to separate page size from alignment in call 1's A/B.
set -u
L=$OUT/logs; mkdir -p $L
mkdir -p /tmp/p && tar -C /tmp/p -xJf devbin/pl27c.tar.xz || exit 1
export LD_LIBRARY_PATH=/tmp/p/lib CUDA_VISIBLE_DEVICES=
cat /sys/kernel/mm/transparent_hugepage/enabled > $L/thp.txt
args=(); for p in mb8ic64ih56iw56oc64oh56ow56kh3kw3ph1pw1 mb8ic256ih56iw56oc64oh56ow56kh1kw1 mb8ic64ih56iw56oc256oh56ow56kh1kw1 \
  mb8ic128ih28iw28oc128oh28ow28kh3kw3ph1pw1 mb8ic512ih28iw28oc128oh28ow28kh1kw1 mb8ic256ih14iw14oc256oh14ow14kh3kw3ph1pw1 \
  mb8ic1024ih14iw14oc256oh14ow14kh1kw1 mb8ic512ih7iw7oc512oh7ow7kh3kw3ph1pw1 mb8ic512ih7iw7oc2048oh7ow7kh1kw1 mb8ic1024ih14iw14oc2048oh7ow7kh1kw1sh2sw2; do
  args+=("--dt=bf16 $p"); done
OMP_NUM_THREADS=2 timeout 100 taskset -c 0,1 /tmp/p/plprof "${args[@]}" > $L/prof.log 2>&1; echo "prof rc $?" >> $L/prof.log
cut -c1-400 $L/prof.log
cd $OUT && tar cJf logs.tar.xz logs && rm -rf logs
