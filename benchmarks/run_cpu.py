#!/usr/bin/env python3
"""Original (gcc -O3 -march=native) vs `polytune optimize` output (tile 32, OpenMP), run side by side.

Each kernel's programs are run alternately, `--reps` times each, and the medians of the region times they
print are compared; speedups are original / optimized. Usage:

    python benchmarks/run_cpu.py [--kernels gemm,lu] [--reps 3] [--threads 1,2] [--markdown]
        [--before CHECKOUT] [--cpus 2,3]

--before CHECKOUT: the output of the polytune of another checkout (a `git worktree` of an older commit) is
built and timed beside this tree's in the same alternation (columns "before"), and the ratio before / this
tree is reported: a change's effect on these kernels, side by side. --pluto DIR: Pluto's output of each kernel,
DIR/KERNEL.pluto.c where it exists (`polycc KERNEL.c --tile --parallel -o KERNEL.pluto.c`), built like
polytune's and timed in the same alternation (columns "pluto", and polytune's speedup over it). --cpus: every
program pinned there (taskset).
"""
from __future__ import annotations

import argparse
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
KERNEL_DIR = os.path.join(HERE, "pluto")
CFLAGS = ["-O3", "-march=native"]


def kernels() -> list[str]:
    return sorted(f[:-2] for f in os.listdir(KERNEL_DIR) if f.endswith(".c"))


def use_dir(path: str) -> None:
    """Take the kernels from another directory (benchmarks/styles: the same loops written other ways)."""
    global KERNEL_DIR
    KERNEL_DIR = os.path.abspath(path)


def compile_c(src: str, exe: str, openmp: bool, defines: list[str]) -> float:
    t0 = time.perf_counter()
    cmd = ["gcc", *CFLAGS, *(["-fopenmp"] if openmp else []), *defines, src, "-o", exe, "-lm"]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return time.perf_counter() - t0


PIN: list[str] = []  # taskset prefix (--cpus)


def run(exe: str, threads: int) -> tuple[float, str]:
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    out = subprocess.run([*PIN, exe], check=True, capture_output=True, text=True, env=env, timeout=600).stdout
    t = float(re.search(r"time:\s*([0-9.eE+-]+)", out).group(1))
    cs = re.search(r"checksum:\s*(\S+)", out).group(1)
    return t, cs


def bench(kernel: str, reps: int, threads: list[int], defines: list[str], tile: str | None,
          extra: tuple[str, ...] = (), before: str | None = None, pluto: str | None = None) -> dict:
    src = os.path.join(KERNEL_DIR, kernel + ".c")
    with tempfile.TemporaryDirectory() as d:
        opt = os.path.join(d, kernel + ".opt.c")
        cmd = [sys.executable, "-m", "polytune", "optimize", src, "-o", opt, *defines, *extra]
        if tile:
            cmd += ["--tile-sizes", tile]
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, text=True)
        t_opt = time.perf_counter() - t0
        orig_exe, opt_exe = os.path.join(d, "orig"), os.path.join(d, "opt")
        compile_c(src, orig_exe, False, defines)
        t_gcc = compile_c(opt, opt_exe, True, defines)
        programs = [("opt", opt_exe)]
        if before:  # the same command with the other checkout's polytune
            old = os.path.join(d, kernel + ".before.c")
            old_cmd = [c if c != opt else old for c in cmd]
            subprocess.run(old_cmd, check=True, capture_output=True, text=True, cwd=before,
                           env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                               [os.path.abspath(before), *filter(None, [os.environ.get("PYTHONPATH")])])))
            compile_c(old, os.path.join(d, "before"), True, defines)
            programs.append(("before", os.path.join(d, "before")))
        theirs = os.path.join(pluto, kernel + ".pluto.c") if pluto else None
        if theirs and os.path.exists(theirs):
            compile_c(theirs, os.path.join(d, "pluto"), True, defines)
            programs.append(("pluto", os.path.join(d, "pluto")))
        row = {"kernel": kernel, "optimize_s": t_opt, "gcc_s": t_gcc,
               "lines": sum(1 for _ in open(opt))}
        times: dict[str, list[float]] = {"orig": []}
        sums = {}
        for th in threads:
            for name, _ in programs:
                times[f"{name}{th}"] = []
        for _ in range(reps):  # alternate: original, then each thread count (this tree's, then before's)
            t, cs = run(orig_exe, 1)
            times["orig"].append(t)
            sums["orig"] = cs
            for th in threads:
                for name, exe in programs:
                    t, cs = run(exe, th)
                    times[f"{name}{th}"].append(t)
                    sums[f"{name}{th}"] = cs
        row["median"] = {k: statistics.median(v) for k, v in times.items()}
        row["checksums_equal"] = len(set(sums.values())) == 1
        row["checksums"] = sums
        return row


def geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernels", help="comma-separated subset (default: all of the directory's)")
    ap.add_argument("--dir", help="kernel directory (default: benchmarks/pluto)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", default="2,1")
    ap.add_argument("--tile-sizes", default=None, help="passed to polytune optimize (default: 32)")
    ap.add_argument("--schedule", default=None, help="passed to polytune optimize (default: its default)")
    ap.add_argument("--no-parallel", action="store_true", help="passed to polytune optimize (and to --before's)")
    ap.add_argument("-D", dest="defines", action="append", default=[])
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--before", metavar="CHECKOUT", help="also time the output of this checkout's polytune")
    ap.add_argument("--cpus", help="pin every program to these CPUs (taskset -c)")
    ap.add_argument("--pluto", metavar="DIR", help="also time Pluto's output, DIR/KERNEL.pluto.c, where it exists")
    args = ap.parse_args(argv)
    if args.cpus:
        PIN[:] = ["taskset", "-c", args.cpus]
    if args.dir:
        use_dir(args.dir)
    threads = [int(t) for t in args.threads.split(",")]
    names = args.kernels.split(",") if args.kernels else kernels()
    defines = [f"-D{d}" for d in args.defines]
    rows = []
    for k in names:
        extra = (("--schedule", args.schedule) if args.schedule else ()) + \
            (("--no-parallel",) if args.no_parallel else ())
        row = bench(k, args.reps, threads, defines, args.tile_sizes, extra, args.before, args.pluto)
        rows.append(row)
        m = row["median"]
        sp = "  ".join(f"{th}T {m['orig'] / m[f'opt{th}']:6.2f}x" for th in threads)
        print(f"{k:16s} orig {m['orig']:8.4f}s  " + "  ".join(f"opt{th}T {m[f'opt{th}']:8.4f}s" for th in threads)
              + f"  {sp}  optimize {row['optimize_s']:.2f}s gcc {row['gcc_s']:.2f}s"
              + "".join(f"  before{th}T {m[f'before{th}']:8.4f}s before/this {m[f'before{th}'] / m[f'opt{th}']:.2f}"
                        for th in threads if f"before{th}" in m)
              + "".join(f"  pluto{th}T {m[f'pluto{th}']:8.4f}s pluto/this {m[f'pluto{th}'] / m[f'opt{th}']:.2f}"
                        for th in threads if f"pluto{th}" in m)
              + ("" if row["checksums_equal"] else f"  CHECKSUMS DIFFER {row['checksums']}"), flush=True)
    if args.markdown:
        hdr = "| kernel | original (s) | " + " | ".join(f"polytune {t}T (s) | speedup {t}T" for t in threads) \
              + " | optimize (s) | gcc -O3 (s) | checksums |"
        print("\n" + hdr)
        print("|" + "---|" * (3 + 2 * len(threads) + 2))
        for r in rows:
            m = r["median"]
            cells = " | ".join(f"{m[f'opt{t}']:.4f} | {m['orig'] / m[f'opt{t}']:.2f}x" for t in threads)
            print(f"| {r['kernel']} | {m['orig']:.4f} | {cells} | {r['optimize_s']:.2f} | {r['gcc_s']:.2f} | "
                  f"{'equal' if r['checksums_equal'] else 'differ'} |")
        gm = " | ".join(f" | **{geomean([r['median']['orig'] / r['median'][f'opt{t}'] for r in rows]):.2f}x**"
                        for t in threads)
        print(f"| geometric mean | {gm} | | | |")
        if args.before:
            print("\n| kernel | " + " | ".join(f"before {t}T (s) | this tree {t}T (s) | before / this tree {t}T"
                                              for t in threads) + " |")
            print("|" + "---|" * (1 + 3 * len(threads)))
            for r in rows:
                m = r["median"]
                print(f"| {r['kernel']} | " + " | ".join(
                    f"{m[f'before{t}']:.4f} | {m[f'opt{t}']:.4f} | {m[f'before{t}'] / m[f'opt{t}']:.2f}x"
                    for t in threads) + " |")
        if any(f"pluto{threads[0]}" in r["median"] for r in rows):
            print("\n| kernel | original (s) | " + " | ".join(
                f"Pluto {t}T (s) | polytune {t}T (s) | polytune / Pluto {t}T" for t in threads) + " |")
            print("|" + "---|" * (2 + 3 * len(threads)))
            ratios: dict[int, list[float]] = {t: [] for t in threads}
            for r in rows:
                m = r["median"]
                if f"pluto{threads[0]}" not in m:
                    continue
                for t in threads:
                    ratios[t].append(m[f"pluto{t}"] / m[f"opt{t}"])
                print(f"| {r['kernel']} | {m['orig']:.4f} | " + " | ".join(
                    f"{m[f'pluto{t}']:.4f} | {m[f'opt{t}']:.4f} | {m[f'pluto{t}'] / m[f'opt{t}']:.2f}x"
                    for t in threads) + " |")
            print("| geometric mean | | " + " | ".join(f" | | **{geomean(ratios[t]):.2f}x**" for t in threads) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
