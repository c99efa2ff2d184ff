#!/usr/bin/env bash
# Applicability as MIOpen decides it (docs/miopen.md, "What MIOpen checks"), end to end through
# the probe against the simulated MIOpen: a solver runs only when miopenConvolution*GetSolution
# lists it; an inapplicable one is recorded unsupported with the reason, never wrong or crash
# (the simulated workspace query answers 0 for it and Immediate computes garbage, as the real
# ones do); every ran trial records how applicability was decided; the per-solver switches act
# in IsApplicable() and the family switches in GetSolution's filter.
# Usage: miopen_applicability_test.sh path/to/convguard path/to/convguard_miopen.so path/to/libfake_miopen.so
set -u
CG=$(readlink -f "$1") PLUGIN=$(readlink -f "$2") FAKE=$(readlink -f "$3") TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export TMPDIR=$TMP CONVGUARD_MIOPEN_PATH=$FAKE
source "$(dirname "$0")/check_lib.sh"

# probe NAME PROBLEM DIRECTION SOLVERS [VAR=VALUE...]: one small sweep into $TMP/NAME.jsonl
# (with $FLAGS added to the probe's command line).
FLAGS=
probe() {
  local name=$1 problem=$2 dir=$3 solvers=$4
  shift 4
  env "$@" "$CG" probe --plugin "$PLUGIN" --device hip:0 --problem "$problem" --directions "$dir" \
    --solvers "$solvers" --db "$TMP/$name.db" --timing 0 --timeout 20 $FLAGS >"$TMP/$name.log" 2>&1
  "$CG" db show --db "$TMP/$name.db" --json >"$TMP/$name.jsonl"
}
# row NAME SOLVER STATUS REASON-REGEX: the trial of SOLVER has STATUS and a reason matching.
row() {
  python3 - "$TMP/$1.jsonl" "miopen:$2" "$3" "$4" <<'PY'
import json, re, sys
path, solver, status, reason = sys.argv[1:]
rows = [json.loads(l) for l in open(path) if json.loads(l)["solver"] == solver]
if len(rows) != 1:
    sys.exit(f"{solver}: {len(rows)} trials")
r = rows[0]
if r["status"] != status or not re.search(reason, r.get("reason", "")):
    sys.exit(f"{solver}: {r['status']} ({r.get('reason', '')[:300]}); want {status} /{reason}/")
PY
}

# 1x1 filters: ConvAsm3x3U needs no workspace, so the workspace query says 0 for it although it
# does not apply; MIOpen's list does not name it, and it is not run.
probe one mb1ic8ih8oc4kh1ph0 fwd 'miopen:ConvAsm3x3U,miopen:ConvDirectNaiveConvFwd,miopen:GemmFwd1x1_0_1'
check "inapplicable zero-workspace solver: unsupported, with how it was decided" \
  row one ConvAsm3x3U unsupported "does not list solution 1 \(ConvAsm3x3U\).*GetSolution"
check "applicable solver: ok, and the trial says GetSolution listed it" \
  row one ConvDirectNaiveConvFwd ok "^applicability: miopenConvolutionForwardGetSolution listed solution 85"
check "GEMM 1x1 ok with its listing recorded" \
  row one GemmFwd1x1_0_1 ok "listed solution 88"

# No find-db record (the simulated system find-db off): the fallback lists only dynamic solvers
# with a WTI estimate, so ConvOclBwdWrW53 (not dynamic) is not run, and says why.
probe nofdb mb1ic4ih8oc4kh3ph1 bwd_weights \
  'miopen:ConvOclBwdWrW53,miopen:ConvDirectNaiveConvWrw' FAKE_MIOPEN_SYSTEM_FIND_DB=0
check "no find-db record: a non-dynamic solver is unsupported with the fallback's rule" \
  row nofdb ConvOclBwdWrW53 unsupported "dynamic solvers with a WTI estimate, and listed .*ConvDirectNaiveConvWrw"
check "no find-db record: the naive solver is listed by the fallback" \
  row nofdb ConvDirectNaiveConvWrw ok "listed solution 87"

# Switches (the user's, inherited with --inherit-miopen-env): the solver's own switch acts in
# IsApplicable(); the family's in GetSolution's filter. The set is recorded with every trial.
FLAGS=--inherit-miopen-env
probe sw mb1ic4ih8oc4kh3ph1 bwd_weights 'miopen:ConvOclBwdWrW53,miopen:GemmWrwUniversal' \
  MIOPEN_DEBUG_CONV_DIRECT_OCL_WRW53=0 MIOPEN_DEBUG_CONV_GEMM=0
FLAGS=
check "MIOPEN_DEBUG_CONV_DIRECT_OCL_WRW53=0: WrW53 not listed" \
  row sw ConvOclBwdWrW53 unsupported "does not list solution 24"
check "MIOPEN_DEBUG_CONV_GEMM=0: GemmWrwUniversal not listed" \
  row sw GemmWrwUniversal unsupported "does not list solution 102"
check "inherited: the trial records the MIOPEN_* set it ran under" sh -c \
  "test \"\$(grep -c '\"device\":\"[^\"]*|MIOPEN_\\*: MIOPEN_DEBUG_CONV_DIRECT_OCL_WRW53=0 MIOPEN_DEBUG_CONV_GEMM=0|' '$TMP/sw.jsonl')\" = \"\$(wc -l <'$TMP/sw.jsonl')\""
# Not inherited (the default): the user's switches never reach MIOpen, the result is the clean
# one, and the trial records an empty set. A variable that is not a switch is withheld too.
probe clean mb1ic4ih8oc4kh3ph1 bwd_weights 'miopen:ConvOclBwdWrW53,miopen:GemmWrwUniversal' \
  MIOPEN_DEBUG_CONV_DIRECT_OCL_WRW53=0 MIOPEN_DEBUG_CONV_GEMM=0 MIOPEN_FIND_MODE=1
check "not inherited: WrW53 runs (wrong, as planted) despite the user's =0" \
  row clean ConvOclBwdWrW53 wrong "listed solution 24"
check "not inherited: GemmWrwUniversal runs despite MIOPEN_DEBUG_CONV_GEMM=0" \
  row clean GemmWrwUniversal ok "listed solution 102"
check "not inherited: every trial records an empty MIOPEN_* set" sh -c \
  "test \"\$(grep -c '|MIOPEN_\\*: none|' '$TMP/clean.jsonl')\" = \"\$(wc -l <'$TMP/clean.jsonl')\""
"$CG" db show --db "$TMP/sw.db" >"$TMP/sw.show" 2>&1
check "db show names the inherited set" grep -q "MIOPEN_DEBUG_CONV_GEMM=0" "$TMP/sw.show"
probe plain mb1ic4ih8oc4kh3ph1 bwd_weights 'miopen:ConvOclBwdWrW53'
check "without the switch WrW53 runs (and is wrong, as planted), naming its listing" \
  row plain ConvOclBwdWrW53 wrong "\[applicability: miopenConvolutionBackwardWeightsGetSolution listed"

# A solver off by default (ConvHipImplicitGemmBwdDataV4R1: a WORKAROUND guard requires its switch
# at 1) is not listed, and evidence against it never makes env recommend "=0", which does nothing.
probe off mb1ic4ih8oc4kh3ph1 bwd_data 'miopen:ConvHipImplicitGemmBwdDataV4R1,miopen:ConvDirectNaiveConvBwd'
check "default-off solver: unsupported" row off ConvHipImplicitGemmBwdDataV4R1 unsupported "does not list solution 56"
"$CG" db export --db "$TMP/off.db" | grep '"solver":"miopen:ConvDirectNaiveConvBwd"' |
  sed 's/ConvDirectNaiveConvBwd/ConvHipImplicitGemmBwdDataV4R1/g; s/"status":"ok"/"status":"crash"/' >"$TMP/v4r1.jsonl"
"$CG" db import "$TMP/v4r1.jsonl" --db "$TMP/v4r1.db" >/dev/null
"$CG" env --db "$TMP/v4r1.db" --device gfx1010 >"$TMP/v4r1.env" 2>&1
check "env: no =0 for a switch that is off by default, and says why" sh -c \
  "! grep -q '^export' '$TMP/v4r1.env' && grep -q 'only when MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_HIP_BWD_V4R1=1' '$TMP/v4r1.env'"

# The table per version: the plugin offers the solvers of the MIOpen it loaded (the CK XDLops
# solvers from 2.20, ROCm 5.7), refuses one older than any version checked, and env writes a
# switch only where it acts in the evidence's MIOpen: ConvCkIgemmFwdV6r1DlopsNchw is on by default
# in 2.17 (ROCm 5.2), off (needs =1) from 2.20.
for v in 2.20.0 2.17.0; do
  FAKE_MIOPEN_VERSION=$v CONVGUARD_PLUGINS="$PLUGIN" "$CG" solvers >"$TMP/solvers-$v.txt" 2>&1
done
check "MIOpen 2.20: the CK XDLops solvers are offered" \
  grep -q "miopen:ConvHipImplicitGemmFwdXdlops" "$TMP/solvers-2.20.0.txt"
check "MIOpen 2.17: they are not (registered from 2.20), the others are" sh -c \
  "! grep -q Xdlops '$TMP/solvers-2.17.0.txt' && grep -q miopen:ConvOclBwdWrW53 '$TMP/solvers-2.17.0.txt'"
FAKE_MIOPEN_VERSION=2.16.0 "$CG" probe --plugin "$PLUGIN" --device hip:0 --problem mb1ic3ih8oc4kh3 \
  --db "$TMP/old.db" >"$TMP/old.log" 2>&1
check "MIOpen 2.16: refused, older than every version checked" \
  grep -q "MIOpen 2.16.0 .*outside every version" "$TMP/old.log"
"$CG" db export --db "$TMP/off.db" | grep '"solver":"miopen:ConvDirectNaiveConvBwd"' |
  sed 's/ConvDirectNaiveConvBwd/ConvCkIgemmFwdV6r1DlopsNchw/g; s/"status":"ok"/"status":"crash"/' >"$TMP/ck20.jsonl"
sed 's/MIOpen 2\.20\.0/MIOpen 2.17.0/g' "$TMP/ck20.jsonl" >"$TMP/ck17.jsonl"
"$CG" db import "$TMP/ck20.jsonl" --db "$TMP/ck20.db" >/dev/null
"$CG" db import "$TMP/ck17.jsonl" --db "$TMP/ck17.db" >/dev/null
"$CG" env --db "$TMP/ck17.db" --device gfx1010 >"$TMP/ck17.env" 2>&1
"$CG" env --db "$TMP/ck20.db" --device gfx1010 >"$TMP/ck20.env" 2>&1
check "env, MIOpen 2.17 evidence: the CK dlops switch =0 (on by default there)" \
  grep -qx "export MIOPEN_DEBUG_CONV_CK_IGEMM_FWD_V6R1_DLOPS_NCHW='0'" "$TMP/ck17.env"
check "env, MIOpen 2.20 evidence: no switch (off by default there), and why" sh -c \
  "! grep -q '^export' '$TMP/ck20.env' && grep -q 'MIOpen 2.20 runs it only when' '$TMP/ck20.env'"

finish
