"""gpu:wgmma_implicit_gemm's time per forced variant, from scripts/gpu_wgmma.sh PARTS=variants:
one var_<variant>.jsonl per variant (gpu_bench --json of ResNet-50's layers, own solvers only),
a column per variant and gpu:tc_implicit_gemm's time (from the last file) beside them. With
VSOLVERS="gpu:wgmma_bwd_weights gpu:tc_bwd_weights" in the environment, those two instead.

    python3 scripts/variant_summary.py l/var_*.jsonl"""
import json
import os
import sys


def main(files):
    wgmma, tc = os.environ.get("VSOLVERS", "gpu:wgmma_implicit_gemm gpu:tc_implicit_gemm").split()
    names, table = [], {}
    variants = [os.path.basename(f)[len("var_"):-len(".jsonl")] for f in files]
    for f, v in zip(files, variants):
        for line in open(f):
            d = json.loads(line)
            key = d["name"].split()[0]
            if key not in names:
                names.append(key)
            table.setdefault(key, {})[v] = d["ms"].get(wgmma)
            table[key]["tc"] = d["ms"].get(tc)
    print("%-24s" % "layer" + "".join("%10s" % v[:10] for v in variants) + "%10s" % "tc")
    for k in names:
        row = table[k]
        cells = ["%10.4f" % row[v] if row.get(v) else "%10s" % "-" for v in variants + ["tc"]]
        print("%-24s" % k[:24] + "".join(cells))


if __name__ == "__main__":
    main(sys.argv[1:])
