while read -r l; do OMP_NUM_THREADS=2 ./plprof "${l/_/ }"; done < r50_bf16.txt
