#!/usr/bin/env python3
"""Variants of `polytune optimize` side by side: the original (gcc -O3 -march=native, 1 thread) against,
by default, `--schedule pluto` (the default) and `--schedule outer`, both tile 32 with OpenMP, in
interleaved rounds: each round runs every binary once, starting one binary later than the round before,
so drift and interference hit all alike. Where a variant gives byte-identical code to the first one, its
binary is not built and the row says so. Checksums of every run are compared with the original's.

    python benchmarks/run_schedules.py [--kernels heat-3d,jacobi-2d] [--reps 5] [--threads 2] [--markdown]
    python benchmarks/run_schedules.py --variant "jam=" --variant "nojam=--unroll-jam 0"
"""
from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from run_cpu import KERNEL_DIR, compile_c, geomean, kernels, run  # noqa: E402

DEFAULT_VARIANTS = {"pluto": ["--schedule", "pluto"], "outer": ["--schedule", "outer"]}


def optimize(src: str, out: str, flags: list[str], defines: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "polytune", "optimize", src, "-o", out, *flags, *defines],
                   check=True, capture_output=True, text=True)
    return time.perf_counter() - t0


def bench(kernel: str, reps: int, threads: int, defines: list[str], variants: dict[str, list[str]]) -> dict:
    src = os.path.join(KERNEL_DIR, kernel + ".c")
    first = next(iter(variants))
    with tempfile.TemporaryDirectory() as d:
        texts, opt_s = {}, {}
        for s, flags in variants.items():
            out = os.path.join(d, f"{kernel}.{s}.c")
            opt_s[s] = optimize(src, out, flags, defines)
            with open(out) as f:
                texts[s] = f.read()
        same = {s: s != first and texts[s] == texts[first] for s in variants}
        exes = {"orig": (os.path.join(d, "orig"), 1)}
        compile_c(src, exes["orig"][0], False, defines)
        for s in variants:
            if not same[s]:
                exes[s] = (os.path.join(d, s), threads)
                compile_c(os.path.join(d, f"{kernel}.{s}.c"), exes[s][0], True, defines)
        names = list(exes)
        times: dict[str, list[float]] = {n: [] for n in names}
        sums: dict[str, set[str]] = {n: set() for n in names}
        for r in range(reps):
            for k in range(len(names)):
                n = names[(r + k) % len(names)]
                t, cs = run(*exes[n])
                times[n].append(t)
                sums[n].add(cs)
        med = {n: statistics.median(v) for n, v in times.items()}
        for s in variants:
            if same[s]:
                med[s] = med[first]
        return {"kernel": kernel, "median": med, "same_code": same, "optimize_s": opt_s,
                "checksums_equal": len(set().union(*sums.values())) == 1}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernels", help="comma-separated subset (default: all of benchmarks/pluto)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("-D", dest="defines", action="append", default=[])
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=FLAGS",
                    help="a variant: its name and its `polytune optimize` flags (repeat; default: the two "
                         "schedules, pluto=--schedule pluto and outer=--schedule outer)")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    names = args.kernels.split(",") if args.kernels else kernels()
    defines = [f"-D{d}" for d in args.defines]
    variants = {v.partition("=")[0]: shlex.split(v.partition("=")[2]) for v in args.variant} or DEFAULT_VARIANTS
    rows = []
    for k in names:
        r = bench(k, args.reps, args.threads, defines, variants)
        rows.append(r)
        m = r["median"]
        print(f"{k:16s} orig {m['orig']:.4f}s" + "".join(
            f"  {s} {m[s]:.4f}s {m['orig'] / m[s]:5.2f}x" + (" (same code)" if r["same_code"][s] else "")
            for s in variants) + ("" if r["checksums_equal"] else "  CHECKSUMS DIFFER"), flush=True)
    if args.markdown:
        print("\n| kernel | original, 1 thread (s) | " + " | ".join(
            f"{s}, {args.threads} threads (s) | speedup" for s in variants) + " | faster | checksums |")
        print("|" + "---|" * (4 + 2 * len(variants)))
        for r in rows:
            m = r["median"]
            cells = []
            for s in variants:
                cells.append("same code | -" if r["same_code"][s] else f"{m[s]:.4f} | {m['orig'] / m[s]:.2f}x")
            distinct = [s for s in variants if not r["same_code"][s]]
            faster = min(distinct, key=lambda s: m[s]) if len(distinct) > 1 else "-"
            print(f"| {r['kernel']} | {m['orig']:.4f} | " + " | ".join(cells) + f" | {faster} | "
                  f"{'equal' if r['checksums_equal'] else 'DIFFER'} |")
        print()
        for s in variants:
            gm = geomean([r["median"]["orig"] / r["median"][s] for r in rows])
            print(f"geometric mean speedup, {s}: {gm:.2f}x")
        best = geomean([r["median"]["orig"] / min(r["median"][s] for s in variants) for r in rows])
        print(f"geometric mean speedup, the faster variant per kernel: {best:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
