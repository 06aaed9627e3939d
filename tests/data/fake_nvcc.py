#!/usr/bin/env python3
"""An `nvcc` for tests on machines without a GPU: rewrites the CUDA source's launches for
tests/data/cuda_emu.h (see tests/test_cuda.py's emulate) and compiles it with g++. Takes the options
polytune's CUDA build passes (nvcc-only ones are dropped) and prints a ptxas-like resource line."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile

# The tests' copy of the header with a precompiled header beside it (tests/conftest.py: emu_header), where set.
EMU = os.environ.get("POLYTUNE_TEST_EMU_HEADER") or os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                   "cuda_emu.h")
DROP_WITH_VALUE = {"-Xptxas", "-Xcompiler", "-x", "-arch"}


def main(argv: list[str]) -> int:
    out, src, rest = None, None, []
    it = iter(argv)
    for a in it:
        if a in DROP_WITH_VALUE:
            next(it, None)
        elif a == "-o":
            out = next(it)
        elif a.startswith(("-arch=", "-O", "-fmad")):
            continue
        elif a.endswith((".cu", ".c", ".cpp")) and not a.startswith("-") and src is None:
            src = a
        else:
            rest.append(a)
    if src is None or out is None:
        print("fake_nvcc: need a source and -o", file=sys.stderr)
        return 2
    text = open(src, encoding="utf-8", errors="surrogateescape").read()
    text = re.sub(r"(\w+(?:<\w+>)?)<<<([^;]*?), ([\w.]+)>>>\((.*?)\);", r"PT_EMU_LAUNCH(\2, \3, \1, \4);", text)
    with tempfile.NamedTemporaryFile("w", suffix=".cpp", delete=False) as f:
        f.write(f'#include "{EMU}"\n' + text)
    try:
        proc = subprocess.run(["g++", "-O1", "-fno-ivopts", "-w", "-x", "c++", f.name, "-x", "none", *rest, "-o", out],
                              capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    sys.stderr.write(proc.stderr)
    if proc.returncode == 0:
        for name in sorted(set(re.findall(r"__global__ void (?:__launch_bounds__\(\d+\) )?(\w+)\(", text))):
            sys.stderr.write(f"ptxas info    : Compiling entry function '{name}' for 'sm_90'\n"
                             "ptxas info    : Used 32 registers, 0 bytes smem\n")
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
