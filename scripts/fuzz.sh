#!/usr/bin/env bash
# Coverage-guided fuzzing (libFuzzer, clang from Debian) of everything convguard reads from
# outside: problem strings, suite files, .npy files, the worker protocol's lines, `db import`
# lines and the driver's command-line flags, under AddressSanitizer and UndefinedBehaviorSanitizer.
# `make test` runs each harness for SECONDS (default 30) from its committed corpus
# (fuzz/corpus/NAME) and first replays every input that once crashed (fuzz/regressions/NAME): a
# crash fails the run and prints the input to commit as a regression. Per harness it prints runs,
# execs/s and the coverage reached (libFuzzer's cov: edges and ft: features); docs/verification.md
# quotes them.
#   bash scripts/fuzz.sh [SECONDS] [NAME...]
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
shift || true
names=("$@")
[ ${#names[@]} -eq 0 ] && names=(problem_string suite_file npy protocol import_line driver_flags)
out=build/fuzz
mkdir -p "$out/obj"
command -v clang++ >/dev/null || { echo "fuzz: FAIL: clang++ not installed (scripts/install-deps.sh test installs clang)" >&2; exit 1; }

flags=(-std=c++20 -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
       -Iinclude -Isrc -Itools/convguard -DCONVGUARD_FUZZ)
# Every src/core source, linked as an archive: the linker takes the objects a harness needs, so a
# new core file needs no entry here (a hand-kept list missed host_buffer.cpp and CI's link failed).
core=(src/core/*.cpp)
declare -A extra=(
  [problem_string]=""
  [suite_file]=""
  [npy]="tools/convguard/npy.cpp"
  [protocol]="src/probe/protocol.cpp"
  [import_line]="src/db/record_json.cpp src/db/fields.cpp"
  [driver_flags]="tools/convguard/flags.cpp tools/convguard/driver_args.cpp"
)
# stale OBJ: whether OBJ is missing or older than its source or any header it included (its -MMD
# file lists them): an object kept across a header change once gave a harness two layouts of one
# struct, and ASan a stack overflow that was not in the code.
stale() {
  local o=$1 dep
  [ -e "$o" ] && [ -e "$o.d" ] || return 0
  for dep in $(sed -e 's/^[^:]*://' -e 's/\\$//' "$o.d"); do
    [ "$dep" -nt "$o" ] && return 0
  done
  return 1
}
for name in "${names[@]}"; do
  [[ -v "extra[$name]" ]] || { echo "fuzz: unknown harness '$name' (one of: ${!extra[*]})" >&2; exit 2; }
done
sources_of() { echo ${extra[$1]} "fuzz/$1.cpp"; }  # a harness's own sources (core is an archive)
object_of() { echo "$out/obj/$(echo "$1" | tr '/' '_').o"; }
jobs_max=${JOBS:-$(nproc)}
throttle() { while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done; }

# Every source is compiled first, JOBS at a time (default: the machine's cores), and every
# harness linked (a compile or link error stops everything); then the harnesses run JOBS at a
# time, each writing its verdict to $out/NAME.verdict, printed in the order the names were given.
declare -A sources=()
for src in "${core[@]}"; do sources[$src]=1; done
for name in "${names[@]}"; do
  for src in $(sources_of "$name"); do sources[$src]=1; done
done
rm -f "$out"/obj/*.failed
for src in "${!sources[@]}"; do
  o=$(object_of "$src")
  stale "$o" || continue
  throttle
  { clang++ "${flags[@]}" -MMD -MF "$o.d" -c "$src" -o "$o" || { rm -f "$o"; touch "$o.failed"; }; } &
done
wait
for src in "${!sources[@]}"; do
  [ -e "$(object_of "$src").failed" ] && { echo "fuzz: FAIL: $src does not compile with clang" >&2; exit 1; }
done
core_objs=()
for src in "${core[@]}"; do core_objs+=("$(object_of "$src")"); done
rm -f "$out/core.a" && ar rcs "$out/core.a" "${core_objs[@]}" || { echo "fuzz: FAIL: archive core" >&2; exit 1; }
for name in "${names[@]}"; do
  objs=()
  for src in $(sources_of "$name"); do objs+=("$(object_of "$src")"); done
  clang++ "${flags[@]}" -fsanitize=fuzzer "${objs[@]}" "$out/core.a" -lfmt -o "$out/$name" || { echo "fuzz: FAIL: link $name" >&2; exit 1; }
done

fuzz_one() {  # fuzz_one NAME: its verdict in $out/NAME.verdict, which alone decides
  local name=$1 verdict="$out/$1.verdict"
  # Every input that once crashed, replayed first.
  if compgen -G "fuzz/regressions/$name/*" >/dev/null; then
    if ! "$out/$name" fuzz/regressions/$name/* >"$out/$name.regressions.log" 2>&1; then
      { echo "fuzz: FAIL: $name: a committed regression input crashes again ($out/$name.regressions.log)"
        tail -20 "$out/$name.regressions.log"; } >"$verdict"
      return 1
    fi
  fi
  mkdir -p "$out/corpus/$name" "$out/crashes/$name"
  cp -n fuzz/corpus/$name/* "$out/corpus/$name/" 2>/dev/null
  "$out/$name" "$out/corpus/$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=4096 -print_final_stats=1 -artifact_prefix="$out/crashes/$name/" \
    >"$out/$name.log" 2>&1
  local rc=$? stats execs rate crash
  stats=$(grep -aE "^#[0-9]+[[:space:]]+DONE" "$out/$name.log" | tail -1)
  execs=$(grep -E "^stat::number_of_executed_units" "$out/$name.log" | awk '{print $2}')
  rate=$(grep -E "^stat::average_exec_per_sec" "$out/$name.log" | awk '{print $2}')
  if [ $rc -ne 0 ]; then
    crash=$(ls -t "$out/crashes/$name/" 2>/dev/null | head -1)
    { echo "fuzz: FAIL: $name crashed (exit $rc); input: $out/crashes/$name/$crash (commit it under fuzz/regressions/$name/ with the fix)"
      grep -E "ERROR|SUMMARY|runtime error|round trip" "$out/$name.log" | head -5; } >"$verdict"
    return 1
  fi
  echo "fuzz: ok: $name: ${execs:-?} runs in ${seconds} s, ${rate:-?} execs/s, $(echo "$stats" | grep -oE "cov: [0-9]+ ft: [0-9]+")" >"$verdict"
}

for name in "${names[@]}"; do
  rm -f "$out/$name.verdict"
  throttle
  fuzz_one "$name" &
done
wait
# The verdict files decide (an exit status reaped by `wait -n` is not kept for a later wait).
failures=0
for name in "${names[@]}"; do
  if [ -s "$out/$name.verdict" ]; then cat "$out/$name.verdict"; else echo "fuzz: FAIL: $name left no verdict"; fi
  grep -q "^fuzz: ok: $name:" "$out/$name.verdict" 2>/dev/null || failures=$((failures + 1))
done
[ "$failures" -eq 0 ]
