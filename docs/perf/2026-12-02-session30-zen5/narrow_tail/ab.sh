#!/bin/bash
# ab.sh: interleaved driver runs of /tmp/convguard_before and build/release/convguard; min ms each
probs=(
"--dir=BWD_D --dt=bf16 g1mb8ic512ih7iw7oc2048oh7ow7kh1kw1sh1sw1ph0pw0|cpu:nchw_gemm:avx512_bf16"
"--dt=bf16 g1mb8ic2048ih7iw7oc512oh7ow7kh1kw1sh1sw1ph0pw0|cpu:nchw_gemm:avx512_bf16"
"--dt=bf16 g1mb8ic512ih7iw7oc2048oh7ow7kh1kw1sh1sw1ph0pw0|cpu:nchw_gemm:avx512_bf16"
"g1mb8ic2048ih7iw7oc512oh7ow7kh1kw1sh1sw1ph0pw0|cpu:nchw_gemm:avx512"
"--dir=BWD_D g1mb8ic512ih7iw7oc2048oh7ow7kh1kw1sh1sw1ph0pw0|cpu:nchw_gemm:avx512"
"--dt=bf16 g1mb8ic512ih7iw7oc512oh7ow7kh3kw3sh1sw1ph1pw1|cpu:nchw_gemm:avx512_bf16"
"--dir=BWD_D --dt=bf16 g1mb8ic256ih14iw14oc1024oh14ow14kh1kw1sh1sw1ph0pw0|cpu:nchw_gemm:avx512_bf16"
)
for round in 1 2 3; do
  for pr in "${probs[@]}"; do
    P=${pr%%|*}; S=${pr##*|}
    for b in /tmp/convguard_before build/release/convguard; do
      m=$($b driver --problem "$P" -S $S -t 1 --threads 2 -i 150 2>&1 | grep -oE 'min [0-9.]+' | awk '{print $2}')
      echo "$round|$P|$(basename $(dirname $b))|$m"
    done
  done
done
