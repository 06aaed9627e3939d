#!/usr/bin/env python3
"""The two CPU schedules side by side: the original (gcc -O3 -march=native, 1 thread) against `polytune
optimize --schedule pluto` (the default) and `--schedule outer`, both tile 32 with OpenMP, in interleaved
rounds: each round runs every binary once, starting one binary later than the round before, so drift and
interference hit all alike. Where both schedules give byte-identical code, the outer binary is not built
and the row says so. Checksums of every run are compared with the original's.

    python benchmarks/run_schedules.py [--kernels heat-3d,jacobi-2d] [--reps 5] [--threads 2] [--markdown]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from run_cpu import KERNEL_DIR, compile_c, geomean, kernels, run  # noqa: E402

SCHEDULES = ("pluto", "outer")


def optimize(src: str, out: str, schedule: str, defines: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "polytune", "optimize", src, "-o", out, "--schedule", schedule,
                    *defines], check=True, capture_output=True, text=True)
    return time.perf_counter() - t0


def bench(kernel: str, reps: int, threads: int, defines: list[str]) -> dict:
    src = os.path.join(KERNEL_DIR, kernel + ".c")
    with tempfile.TemporaryDirectory() as d:
        texts, opt_s = {}, {}
        for s in SCHEDULES:
            out = os.path.join(d, f"{kernel}.{s}.c")
            opt_s[s] = optimize(src, out, s, defines)
            texts[s] = out
        same = open(texts["pluto"]).read() == open(texts["outer"]).read()
        exes = {"orig": (os.path.join(d, "orig"), 1)}
        compile_c(src, exes["orig"][0], False, defines)
        for s in SCHEDULES[:1] if same else SCHEDULES:
            exes[s] = (os.path.join(d, s), threads)
            compile_c(texts[s], exes[s][0], True, defines)
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
        if same:
            med["outer"] = med["pluto"]
        return {"kernel": kernel, "median": med, "same_code": same, "optimize_s": opt_s,
                "checksums_equal": len(set().union(*sums.values())) == 1}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernels", help="comma-separated subset (default: all of benchmarks/pluto)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("-D", dest="defines", action="append", default=[])
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    names = args.kernels.split(",") if args.kernels else kernels()
    defines = [f"-D{d}" for d in args.defines]
    rows = []
    for k in names:
        r = bench(k, args.reps, args.threads, defines)
        rows.append(r)
        m = r["median"]
        print(f"{k:16s} orig {m['orig']:.4f}s  pluto {m['pluto']:.4f}s {m['orig'] / m['pluto']:5.2f}x  "
              f"outer {m['outer']:.4f}s {m['orig'] / m['outer']:5.2f}x" + ("  (same code)" if r["same_code"] else "")
              + ("" if r["checksums_equal"] else "  CHECKSUMS DIFFER"), flush=True)
    if args.markdown:
        print(f"\n| kernel | original, 1 thread (s) | pluto, {args.threads} threads (s) | speedup | "
              f"outer, {args.threads} threads (s) | speedup | faster | checksums |")
        print("|" + "---|" * 8)
        for r in rows:
            m = r["median"]
            sp, so = m["orig"] / m["pluto"], m["orig"] / m["outer"]
            if r["same_code"]:
                outer, faster = "same code | - ", "-"
            else:
                outer = f"{m['outer']:.4f} | {so:.2f}x"
                faster = "outer" if so > sp else "pluto"
            print(f"| {r['kernel']} | {m['orig']:.4f} | {m['pluto']:.4f} | {sp:.2f}x | {outer} | {faster} | "
                  f"{'equal' if r['checksums_equal'] else 'DIFFER'} |")
        print()
        for s in SCHEDULES:
            gm = geomean([r["median"]["orig"] / r["median"][s] for r in rows])
            print(f"geometric mean speedup, {s}: {gm:.2f}x")
        best = geomean([r["median"]["orig"] / min(r["median"]["pluto"], r["median"]["outer"]) for r in rows])
        print(f"geometric mean speedup, the faster schedule per kernel: {best:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
