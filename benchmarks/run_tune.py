#!/usr/bin/env python3
"""Tuning benchmark: original vs Pluto-default seed (tile 32) vs hill climbing vs exhaustive search.

For each kernel, `polytune.tune` runs hill climbing (degree 1, best-fit, seed 32) and, for the kernels named
in --exhaustive, an exhaustive search over the same domain; all timings of one kernel come from the same
session. Usage:

    python benchmarks/run_tune.py [--kernels gemm,lu] [--threads 2] [--exhaustive gemver,2d_bidirec]
                                  [--domain 1:512:pow2] [-D N=800] [--markdown]
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from polytune.errors import PolytuneError
from polytune.measure.c import BuildConfig
from polytune.tune import TuneOptions, tune

HERE = os.path.dirname(os.path.abspath(__file__))


def run_kernel(name: str, args) -> dict:
    src = os.path.join(HERE, "pluto", name + ".c")
    build = BuildConfig(threads=args.threads, runs=args.runs, defines=tuple(args.defines))
    domains = (args.domain,) if args.domain else ()
    row = {"kernel": name}
    t0 = time.perf_counter()
    try:
        hill = tune(src, TuneOptions(strategy="hill", domains=domains, cache=None, jobs=1,
                                     max_evals=args.max_evals), build)
    except PolytuneError as e:
        row["error"] = str(e)
        return row
    row["hill_wall"] = time.perf_counter() - t0
    r = hill.report.to_json()
    row["original"] = r["original"]["median"]
    row["seed"] = r["seed"]["median"] if r["seed"] else None
    row["seed_config"] = r["seed"]["config"] if r["seed"] else None
    row["hill"] = r["best"]["median"] if r["best"] else None
    row["hill_config"] = r["best"]["config"] if r["best"] else None
    row["hill_evals"] = r["evals"]
    row["hill_time"] = r["search_time"]
    seed_rec = next((e for e in r["evaluations"] if e["phase"] == "seed"), None)
    # One seed evaluation: compile + warm-up/verification run + timed runs, approximated from its record.
    if seed_rec and seed_rec["median"]:
        row["seed_eval_s"] = seed_rec["compile_time"] + (args.runs + 1) * seed_rec["median"]
    if name in args.exhaustive:
        ex = tune(src, TuneOptions(strategy="exhaustive", domains=domains, cache=None, jobs=1), build)
        er = ex.report.to_json()
        row["exhaustive"] = er["best"]["median"] if er["best"] else None
        row["exhaustive_config"] = er["best"]["config"] if er["best"] else None
        row["exhaustive_evals"] = er["evals"]
        row["exhaustive_time"] = er["search_time"]
    return row


def geomean(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernels", default="gemm,gemm_bias_relu,lu,mvt,gemver,jacobi-2d,seidel-2d,2d_bidirec")
    ap.add_argument("--exhaustive", default="", help="kernels to also search exhaustively")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--max-evals", type=int, default=None)
    ap.add_argument("--domain", default=None, help="tile size domain for every parameter")
    ap.add_argument("-D", dest="defines", action="append", default=[])
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    args.exhaustive = [k for k in args.exhaustive.split(",") if k]
    rows = []
    for name in args.kernels.split(","):
        row = run_kernel(name, args)
        rows.append(row)
        if "error" not in row and (row["seed"] is None or row["hill"] is None):
            row["error"] = "the seed or every candidate failed (see polytune tune --report)"
        if "error" in row:
            print(f"{name:16s} {row['error']}", flush=True)
            continue
        line = (f"{name:16s} orig {row['original']:.4f}s seed {row['seed']:.4f}s hill {row['hill']:.4f}s "
                f"{tuple(row['hill_config'])} x{row['seed'] / row['hill']:.2f} over seed, "
                f"{row['hill_evals']} evals, {row['hill_time']:.1f}s search")
        if "exhaustive" in row:
            line += (f" | exhaustive {row['exhaustive']:.4f}s {tuple(row['exhaustive_config'])} "
                     f"{row['exhaustive_evals']} evals {row['exhaustive_time']:.1f}s")
        print(line, flush=True)
    if args.markdown:
        print("\n| kernel | original (s) | seed 32 (s) | hill (s) | hill config | hill / seed | hill / original "
              "| evals | search (s) | overhead (x seed eval) | exhaustive (s) | exh. evals | hill vs exh. |")
        print("|" + "---|" * 13)
        for r in rows:
            if "error" in r:
                print(f"| {r['kernel']} | {r['error'].split(': ', 1)[-1]} |" + " |" * 11)
                continue
            ov = r["hill_time"] / r["seed_eval_s"] if r.get("seed_eval_s") else float("nan")
            ex = (f"{r['exhaustive']:.4f} | {r['exhaustive_evals']} | {r['exhaustive'] / r['hill']:.3f}"
                  if "exhaustive" in r else "- | - | -")
            print(f"| {r['kernel']} | {r['original']:.4f} | {r['seed']:.4f} | {r['hill']:.4f} | "
                  f"{tuple(r['hill_config'])} | {r['seed'] / r['hill']:.2f}x | {r['original'] / r['hill']:.2f}x | "
                  f"{r['hill_evals']} | {r['hill_time']:.1f} | {ov:.1f} | {ex} |")
        ok = [r for r in rows if "error" not in r]
        print(f"| geometric mean | | | | | {geomean([r['seed'] / r['hill'] for r in ok]):.2f}x | "
              f"{geomean([r['original'] / r['hill'] for r in ok]):.2f}x | | | | | | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
