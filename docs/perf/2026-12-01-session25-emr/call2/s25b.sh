#!/bin/bash
# Session 25 call 2: where cpu:bf16_direct:amx_bf16's time goes (pack x, pack filter, the AMX pass
# with its stores) on ResNet-50 b8 layers, NCHW and NHWC callers; and oneDNN on the NHWC ones.
set -u
xz -dkf devbin/amxprof.xz; chmod +x devbin/amxprof
L=$OUT/logs; mkdir -p $L
mkdir -p /tmp/c && tar -C /tmp/c -xJf devbin/cpu25.tar.xz || exit 1
export LD_LIBRARY_PATH=/tmp/c/lib:/usr/local/cuda/lib64 CUDA_VISIBLE_DEVICES= CONVGUARD_BLAS=/tmp/c/lib/libopenblas.so.0 OMP_NUM_THREADS=2
P=(
 "mb8ic3ih224iw224oc64oh112ow112kh7kw7sh2sw2ph3pw3"
 "mb8ic64ih56iw56oc64oh56ow56kh1kw1"
 "mb8ic64ih56iw56oc64oh56ow56kh3kw3ph1pw1"
 "mb8ic128ih28iw28oc128oh28ow28kh3kw3ph1pw1"
 "mb8ic256ih14iw14oc256oh14ow14kh3kw3ph1pw1"
 "mb8ic512ih7iw7oc512oh7ow7kh3kw3ph1pw1"
 "mb8ic512ih28iw28oc128oh28ow28kh1kw1"
 "mb8ic512ih28iw28oc1024oh14ow14kh1kw1sh2sw2"
)
args=(); for p in "${P[@]}"; do args+=("--dt=bf16 $p" "--dt=bf16 --stag=axb --dtag=axb $p"); done
(timeout 200 taskset -c 0,1 devbin/amxprof "${args[@]}" > $L/prof.log 2>&1; echo "prof rc $?" >> $L/prof.log) &
(for p in "${P[@]}"; do timeout 60 taskset -c 2,3 /tmp/c/convguard_bench --problem "--dt=bf16 --stag=axb --dtag=axb $p" --reps 3 --threads 2 --dtypes bf16 --directions fwd; done > $L/nhwc_bench.log 2>&1; echo "bench rc $?" >> $L/nhwc_bench.log) &
wait
cat $L/prof.log; grep -E "^mb|^  |convguard|oneDNN" $L/nhwc_bench.log | grep -v "driver" | head -60
