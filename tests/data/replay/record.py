#!/usr/bin/env python3
"""How the recorded data of this directory was made (real, small measurements; run from the repo root):

    python tests/data/replay/record.py

- bench.json: `polytune bench` on 2d_bidirec (N=512, TSTEPS=60) with every strategy of the research
  questions, and on gemm (N=200) with hill climbing only; 2 threads, 3 interleaved rounds.
- tune_gemm.json: `polytune tune benchmarks/pluto/gemm.c -DN=200 --report ...` (three parameters).

tests/test_bench.py replays them: the report and the figures are built from these files, nothing is timed.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, ROOT)

from polytune.study.bench import BenchOptions, KernelSpec, parse_strategies, run_bench  # noqa: E402

ALL = "hill,exhaustive,random:n10,hill:origin,hill:model,hill:first,hill:d2,hill:hop"


def main() -> int:
    pluto = os.path.join("benchmarks", "pluto")
    kernels = [KernelSpec(os.path.join(pluto, "2d_bidirec.c"), ("N=512", "TSTEPS=60"), parse_strategies(ALL)),
               KernelSpec(os.path.join(pluto, "gemm.c"), ("N=200",), parse_strategies("hill"))]
    opts = BenchOptions(threads=2, runs=3, max_evals=40, command="python tests/data/replay/record.py")
    results = run_bench(kernels, opts)
    with open(os.path.join(HERE, "bench.json"), "w") as f:
        json.dump(results, f, indent=1)
        f.write("\n")
    subprocess.run([sys.executable, "-m", "polytune", "tune", os.path.join(pluto, "gemm.c"), "-DN=200", "--no-cache",
                    "--threads", "2", "--max-evals", "20", "--report", os.path.join(HERE, "tune_gemm.json")],
                   check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
