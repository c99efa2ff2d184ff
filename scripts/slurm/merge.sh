#!/usr/bin/env bash
# Combines the databases of a probe-array.sbatch run into one: merge.sh RESULTS_DIR OUT.db.
# Each task's database is exported (JSON lines) and merged; a trial recorded by two tasks (a
# resubmitted task that reran it) keeps the newer row (convguard db merge).
set -euo pipefail
dir=${1:?usage: merge.sh RESULTS_DIR OUT.db}
out=${2:?usage: merge.sh RESULTS_DIR OUT.db}
CONVGUARD=${CONVGUARD:-convguard}
shopt -s nullglob
dbs=("$dir"/task-*.db)
[ ${#dbs[@]} -gt 0 ] || { echo "merge.sh: no task-*.db in $dir" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for db in "${dbs[@]}"; do
  "$CONVGUARD" db export --db "$db" >"$tmp/$(basename "$db" .db).jsonl"
done
"$CONVGUARD" db merge --db "$out" "$tmp"/*.jsonl
