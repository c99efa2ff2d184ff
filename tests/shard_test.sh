#!/usr/bin/env bash
# Shards (issue 20): `convguard probe --shard I/N` runs a deterministic share of the sweep, as a
# job array's tasks would, each into a database of its own (separate nodes). The union of the N
# shards' rows must equal the unsharded run's, with no trial in two shards and none lost; Slurm's
# SLURM_ARRAY_TASK_* variables pick the same share as the --shard they stand for; bad values are
# refused naming the flag or the variable.
# Usage: shard_test.sh path/to/convguard path/to/convguard_chaos.so
set -u
CG=$(readlink -f "$1")
CHAOS=$(readlink -f "$2")
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
source "$(dirname "$0")/check_lib.sh"
unset SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT SLURM_ARRAY_TASK_MIN SLURM_ARRAY_TASK_MAX \
  SLURM_ARRAY_TASK_STEP

# Problems of very different costs, one of them twice under two names (one problem: one shard),
# one above 42x42 (chaos:hang_above_42 hangs there) and the backward-weights pass (chaos:
# fault_bwd_weights faults there).
cat >"$TMP/suite.txt" <<'EOF'
mb1ic3ih8oc4kh3ph1_n"tiny"
mb1ic3ih8oc4kh3ph1_n"tiny-again"
mb1ic3ih16oc8kh3ph1_n"small"
mb1ic8ih24oc8kh3ph1_n"medium"
mb1ic3ih44oc8oh44kh3ph1_n"size-44"
mb1ic16ih32oc32kh3ph1_n"wide"
mb2ic4ih12oc4kh1_n"pointwise"
EOF
# --timeout 2: a deadline that a loaded machine (a build beside the test) does not miss on
# these small problems, so every run records the same statuses.
FLAGS=(--plugin "$CHAOS" --suite "$TMP/suite.txt" --directions fwd,bwd_weights --timing 0
       --timeout 2 --workarounds off
       --solvers 'cpu:direct,cpu:im2col_gemm,chaos:good,chaos:wrong,chaos:segfault,chaos:error,chaos:hang_above_42,chaos:fault_bwd_weights')
probe() {  # probe NAME [flags...]
  local name=$1
  shift
  timeout 300 "$CG" probe "${FLAGS[@]}" --db "$TMP/$name.db" --json "$@" \
    >"$TMP/$name.jsonl" 2>"$TMP/$name.err"
  echo $? >"$TMP/$name.rc"
}
# "problem | solver | status" of a database, sorted; keys: "problem | solver" only.
rows() { db_rows "$CG" "$TMP/$1.db"; }
keys() { rows "$1" | cut -d'|' -f1,2; }

probe all
check "unsharded: exit 0" test "$(cat "$TMP/all.rc")" -eq 0
rows all >"$TMP/all.rows"
check "unsharded: the planted statuses are there" \
  bash -c "grep -q '| crash' '$TMP/all.rows' && grep -q '| hang' '$TMP/all.rows' && grep -q '| wrong' '$TMP/all.rows'"
for i in 1 2 3; do
  probe "s$i" --shard "$i/3"
  check "shard $i/3: exit 0, says its share" \
    bash -c "test $(cat "$TMP/s$i.rc") -eq 0 && grep -q 'shard $i/3 (--shard): [0-9]* of 14 problems' '$TMP/s$i.err'"
  rows "s$i" >"$TMP/s$i.rows"
  check "shard $i/3: not empty" test -s "$TMP/s$i.rows"
done
check "the three shards' rows together equal the unsharded run's" \
  diff <(sort "$TMP/s1.rows" "$TMP/s2.rows" "$TMP/s3.rows") "$TMP/all.rows"
check "no trial in two shards" \
  test -z "$(cut -d'|' -f1,2 "$TMP/s1.rows" "$TMP/s2.rows" "$TMP/s3.rows" | sort | uniq -d)"
check "no problem in two shards (a problem's solvers stay together)" \
  test -z "$(for i in 1 2 3; do cut -d'|' -f1 "$TMP/s$i.rows" | sort -u; done | sort | uniq -d)"
# The same split again: deterministic.
probe s2again --shard 2/3
check "a shard run twice takes the same share" diff <(keys s2again) <(cut -d'|' -f1,2 "$TMP/s2.rows")

# Slurm: --array=4-6, task 5 is shard 2/3.
SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_TASK_MIN=4 SLURM_ARRAY_TASK_MAX=6 \
  probe slurm
check "SLURM_ARRAY_TASK_ID=5 of 4..6 says shard 2/3" \
  grep -q 'shard 2/3 (SLURM_ARRAY_TASK_ID)' "$TMP/slurm.err"
check "SLURM_ARRAY_TASK_ID=5 of 4..6 runs what --shard 2/3 runs" \
  diff <(keys slurm) <(cut -d'|' -f1,2 "$TMP/s2.rows")
# --shard wins over the variables.
SLURM_ARRAY_TASK_ID=x SLURM_ARRAY_TASK_COUNT=3 probe flagwins --shard 1/3
check "--shard is used, the variables ignored, when both are there" \
  bash -c "test $(cat "$TMP/flagwins.rc") -eq 0 && grep -q 'shard 1/3 (--shard)' '$TMP/flagwins.err'"

# Bad values: exit 2, naming the flag or the variable, nothing run.
refused() {  # refused NAMED [env...] -- [flags...]
  local named=$1 out rc
  shift
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  out=$(env "${envs[@]}" "$CG" probe --plugin "$CHAOS" --problem mb1ic3ih8oc4kh3 \
    --db "$TMP/bad.db" "$@" 2>&1)
  rc=$?
  echo "  ${envs[*]} $*: $out" | head -1
  test $rc -eq 2 && [[ $out == *"$named"* ]]
}
for bad in 0/3 4/3 1/0 x 2 1/3/1 -1/3 " 1/3"; do
  check "--shard '$bad' is refused naming --shard" refused "--shard: " -- --shard "$bad"
done
check "SLURM_ARRAY_TASK_ID=x is refused naming it" \
  refused "SLURM_ARRAY_TASK_ID='x'" SLURM_ARRAY_TASK_ID=x SLURM_ARRAY_TASK_COUNT=3 --
check "SLURM_ARRAY_TASK_COUNT missing is refused naming it" \
  refused "SLURM_ARRAY_TASK_COUNT is not set" SLURM_ARRAY_TASK_ID=1 --
check "SLURM_ARRAY_TASK_ID outside the array is refused naming it" \
  refused "SLURM_ARRAY_TASK_ID=9" SLURM_ARRAY_TASK_ID=9 SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_TASK_MIN=1 --
check "an irregular array (--array=1,2,7) is refused" \
  refused "not a regular range" SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_COUNT=3 \
  SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=7 --
check "no refused run wrote a trial" \
  bash -c "! test -e '$TMP/bad.db' || test -z \"\$('$CG' db show --db '$TMP/bad.db' --json)\""
finish
