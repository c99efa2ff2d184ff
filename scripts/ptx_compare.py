#!/usr/bin/env python3
"""Whether the kernels of one PTX file are in another unchanged.

    ptx_compare.py OLD.ptx NEW.ptx

For each kernel (.entry) of OLD, whether NEW holds a kernel with the same PTX once the names that
a build changes are set aside: the kernel's own (mangled) name, which a new template parameter
changes, the anonymous namespace's per-build hash, branch labels (numbered by the kernel's place
in the file), the size of the parameter block and the numbering of PTX's virtual registers, renamed in order
of first use (ptxas allocates the machine's own; a larger by-value parameter struct shifts the
numbers). Used to show that a change which adds a kernel
variant (a template parameter) leaves the existing kernels' code as it was (docs/gpu.md: the
k3D kernels). The PTX comes from `nvcc -ptx` with the build's flags, e.g.
    nvcc -I src -I include -O3 -DNDEBUG -arch=compute_90a -std=c++20 -ptx -x cu FILE.cu -o OUT.ptx
Exit status 1 when a kernel of OLD has no unchanged counterpart.
"""
import collections
import re
import sys


def renumbered(body):
    """The body with its virtual registers renamed in order of first use: a consistent renaming,
    so two bodies compare equal only where they compute the same thing from the same operands."""
    names = {}

    def rename(m):
        return names.setdefault(m.group(0), f"%{m.group(1)}_{len(names)}")

    return re.sub(r"%(r|rd|rs|p|f|fd)\d+\b", rename, body)


def kernels(path):
    text = open(path).read()
    text = re.sub(r"_GLOBAL__N__[0-9a-f]+_\d+_\w+?_cu_[0-9a-f]+", "ANON", text)
    text = re.sub(r"\$L__BB\d+_", "$L__BB_", text)
    entries = list(re.finditer(r"\.entry\s+(\S+)\(", text))
    out = {}
    for i, m in enumerate(entries):
        end = entries[i + 1].start() if i + 1 < len(entries) else len(text)
        # The kernel ends at its closing brace, the last line "}" before the next kernel: what
        # follows it (a declaration the file holds for a later kernel) is not its code. (Not the
        # first: inline asm blocks, "{ ... }", put lines "}" inside the kernel.)
        close = text.rfind("\n}\n", m.start(), end)
        end = close + 2 if close >= 0 else end
        body = re.sub(r"//.*", "", text[m.start():end]).replace(m.group(1), "F")
        body = re.sub(r"<\d+>", "<N>", body)  # the register declarations' counts
        body = renumbered(body)
        out[m.group(1)] = re.sub(r"_param_0\[\d+\]", "_param_0[P]", body)
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    old, new = kernels(sys.argv[1]), kernels(sys.argv[2])
    bodies = collections.Counter(new.values())
    changed = [name for name, body in old.items() if not bodies[body]]
    print(f"{len(old) - len(changed)} of {len(old)} kernels unchanged ({len(new)} in the new file)")
    for name in changed:
        print(f"  changed or gone: {name}")
    sys.exit(1 if changed else 0)


main()
