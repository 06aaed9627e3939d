#!/usr/bin/env python3
"""GPU thread-block benchmark (the paper's section 4.7 experiment, on the CUDA target).

For each kernel of benchmarks/gpu: the default block shape (1024 threads for 1-D kernels, 32x32 for 2-D,
32x8x4 for 3-D), hill climbing with neighbourhoods of degree 1 and 2 seeded from the default, and
exhaustive search. Space: block_x in 8..1024 in steps of 8 (the paper's step), block_y and block_z powers
of two. Exhaustive search walks that grid; hill climbing moves x over its powers of two, then refines with
shortest-hop moves of 8 threads (the paper's two phases), so it reaches the same grid. Shapes over 1024
threads (or z over 64, or more registers than a block has) are rejected without running and are counted
separately. Every configuration is verified against the original program's
results (run on the CPU) before its time counts. Times are CUDA-event kernel times of the whole region
(all launches), median of --runs rounds after a warm-up round. One compilation and one process per kernel
serve all three searches; each search measures afresh (no cache), so the search times are real.

    python benchmarks/run_gpu.py [--kernels matmul_vanilla,...] [--runs 5] [--markdown] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from polytune.emit.cuda import default_block
from polytune.measure.cuda import CudaBuildConfig, CudaRunner
from polytune.pipeline import analyze
from polytune.search import Budget, Parameter, SearchOptions, SearchSpace, parse_domain, run_search

HERE = os.path.dirname(os.path.abspath(__file__))
# Problem sizes of this benchmark (smaller than the files' defaults where every configuration's verification
# dump would otherwise be hundreds of MB).
SIZES = {
    "matmul_vanilla": ["N=2048"], "matmul_unroll": ["N=2048"], "matmul_interchange": ["N=2048"],
    "stencil2d_vanilla": ["N=2048"], "stencil2d_unroll": ["N=2048"], "stencil2d_interchange": ["N=2048"],
    "reduction_vanilla": ["N=8192"], "reduction_unroll": ["N=8192"], "reduction_interchange": ["N=8192"],
    "stencil3d_ns": ["N=128"],
}
STRATEGIES = [("hill-d1", "hill", 1), ("hill-d2", "hill", 2), ("exhaustive", "exhaustive", 1)]


def space_for(dims: int, grid: bool) -> SearchSpace:
    """The exhaustive grid (x in steps of 8), or hill climbing's view of the same space: x over the powers
    of two from 8, refined by shortest-hop moves of 8 threads; y and z over the powers of two."""
    x = Parameter("block_x", parse_domain("8:1024:8")) if grid else \
        Parameter("block_x", parse_domain("8:1024:pow2"), hop=8)
    params = [x]
    if dims >= 2:
        params.append(Parameter("block_y", parse_domain("1:128:pow2"), hop=0))
    if dims >= 3:
        params.append(Parameter("block_z", parse_domain("1:64:pow2"), hop=0))
    return SearchSpace(tuple(params))


def run_kernel(name: str, args) -> dict:
    src = os.path.join(HERE, "gpu", name + ".c")
    program = analyze(src, defines=tuple(SIZES[name]))
    dims = max(a.gpu.max_mapped for a in program.scops)
    harness = CudaRunner(program, CudaBuildConfig(defines=tuple(SIZES[name]), runs=args.runs))
    row: dict = {"kernel": name, "size": SIZES[name], "dims": dims}
    try:
        t0 = time.perf_counter()
        harness.reference()
        row["reference_s"] = time.perf_counter() - t0
        seed = default_block(dims)
        row["default"] = list(seed)
        for label, strategy, degree in STRATEGIES:
            measured = [0]

            def evaluate(config, measured=measured):
                m = harness.measure_block(tuple(config))
                if m.error is None or m.error.value != "resources":
                    measured[0] += 1
                return m

            opts = SearchOptions(degree=degree, alpha=0.05, shortest_hop=strategy == "hill")
            space = space_for(dims, grid=strategy == "exhaustive")
            t0 = time.perf_counter()
            res = run_search(space, evaluate, strategy, seed, opts, Budget(max_iterations=100))
            wall = time.perf_counter() - t0
            errors: dict[str, int] = {}
            for r in res.evaluations:
                if r.measurement.error is not None:
                    errors[r.measurement.error.value] = errors.get(r.measurement.error.value, 0) + 1
            row[label] = {
                "best": list(res.best.config) if res.best else None,
                "best_ms": res.best.value * 1e3 if res.best else None,
                "seed_ms": res.seed.value * 1e3 if res.seed and res.seed.ok else None,
                "evals": res.evals, "measured": measured[0], "errors": errors, "search_s": wall,
            }
            print(f"{name:24s} {label:10s} best {row[label]['best']} {row[label]['best_ms']} ms "
                  f"(seed {row[label]['seed_ms']} ms) evals {res.evals} measured {measured[0]} "
                  f"{wall:.1f} s {errors}", file=sys.stderr, flush=True)
            if res.best is None:
                detail = next((r.measurement.detail for r in res.evaluations if r.measurement.error), "")
                raise RuntimeError(f"{label}: no verified configuration ({detail})")
        row["registers"] = harness.registers
        row["spill_bytes"] = harness.spills
        # The default's time: the seed measurement of each search (median of the three).
        seeds = sorted(row[label]["seed_ms"] for label, _, _ in STRATEGIES if row[label]["seed_ms"])
        row["default_ms"] = seeds[len(seeds) // 2] if seeds else None
    except Exception as e:  # noqa: BLE001 - a benchmark row records what broke and the run goes on
        row["error"] = f"{type(e).__name__}: {e}"
    finally:
        harness.close()
    return row


def read_rows(files: list[str]) -> list[dict]:
    """The rows of earlier runs' --json files, in order."""
    rows = []
    for name in files:
        with open(name) as f:
            rows += json.load(f)
    return rows


def run_rows(kernels: list[str], run_kernel, args) -> list[dict]:
    """run_kernel(k, args) for each kernel; with --json, the rows so far are written after every kernel, so
    a run stopped at a time limit keeps what it finished."""
    rows = []
    for k in kernels:
        rows.append(run_kernel(k, args))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(rows, f, indent=2)
    return rows


def geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def table(rows: list[dict]) -> str:
    head = ("| kernel | default (ms) | hill d1: best, ms, gain, evals, s | hill d2: best, ms, gain, evals, s | "
            "exhaustive: best, ms, gain, evals, s | d1 / exh. | d2 / exh. |")
    out = [head, "|" + "---|" * 7]
    gains = {label: [] for label, _, _ in STRATEGIES}
    for r in rows:
        if "error" in r:
            out.append(f"| {r['kernel']} | error: {r['error']} |" + " |" * 6)
            continue
        cells = [r["kernel"], f"{r['default_ms']:.3f} {tuple(r['default'])}"]
        for label, _, _ in STRATEGIES:
            s = r[label]
            g = r["default_ms"] / s["best_ms"]
            gains[label].append(g)
            cells.append(f"{tuple(s['best'])}, {s['best_ms']:.3f}, {100 * (g - 1):+.1f}%, "
                         f"{s['measured']} ({s['evals']}), {s['search_s']:.1f}")
        ex = r["exhaustive"]["best_ms"]
        cells += [f"{r['hill-d1']['best_ms'] / ex:.3f}", f"{r['hill-d2']['best_ms'] / ex:.3f}"]
        out.append("| " + " | ".join(cells) + " |")
    out.append("| geometric mean gain | | " + " | ".join(f"{100 * (geomean(gains[label]) - 1):+.1f}%"
                                                       for label, _, _ in STRATEGIES) + " | | |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernels", default=",".join(SIZES))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--from-json", nargs="+", metavar="FILE", help="print the table of earlier runs' --json files")
    args = ap.parse_args()
    if args.from_json:
        print(table(read_rows(args.from_json)))
        return 0
    print(table(run_rows(args.kernels.split(","), run_kernel, args)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
