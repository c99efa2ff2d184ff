#!/usr/bin/env bash
# The oneDNN plugin lists the same solvers whatever the thread count: a probe's workers may run
# at fewer threads than the process that lists the solvers (--jobs 2: one each), and oneDNN offers
# some implementations only at some counts (jit_fp32_wino_2x3 not at one thread): a solver the
# parent listed was once missing from every worker, and its trials were recorded `error`.
# Usage: onednn_list_test.sh convguard convguard_onednn.so
set -u
source "$(dirname "$0")/check_lib.sh"
list() { OMP_NUM_THREADS=$1 CONVGUARD_PLUGINS=$(readlink -f "$2") "$3" solvers | grep '^onednn:' | sort; }
one=$(list 1 "$2" "$1")
two=$(list 2 "$2" "$1")
many=$(list 7 "$2" "$1")
check "the plugin lists solvers ($(echo "$one" | grep -c .))" test -n "$one"
check "the same solvers at 1 and 2 threads" test "$one" = "$two"
check "the same solvers at 1 and 7 threads" test "$one" = "$many"
finish
