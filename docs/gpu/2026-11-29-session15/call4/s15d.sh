#!/bin/bash
# Session 15, call 4 (H200): 236119f's probe on a GPU: the standard suite over the own GPU solvers
# (f32 forward), by default (no stop on GPUs) and with --slow-factor 10 given (the staged trial's
# 'planning' line starts the clock there too); then a rerun of the latter (stopped rows reused).
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=/tmp/s15d; mkdir -p $O ${OUT:-out}
t() { echo "$(( $(date +%s) - S )) s"; }
for v in default factor10 factor10_rerun; do
  f=(); [ $v != default ] && f=(--slow-factor 10)
  db=$O/$v.db; [ $v = factor10_rerun ] && db=$O/factor10.db
  timeout 280 db/convguard probe --device cuda:0 --suite standard --solvers 'gpu:*' --db $db "${f[@]}" > $O/$v.log 2>&1
  echo "$v: rc $? $(tail -1 $O/$v.log) $(t)"
  grep -c "too slow to be chosen" $O/$v.log
done
grep "too slow" $O/factor10.log | cut -c1-260 | head -12
echo "total $(t)"
tar -C /tmp -czf ${OUT:-out}/s15d.tgz s15d
