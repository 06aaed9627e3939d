#!/usr/bin/env python3
"""Reproduce the paper's experiments (its section 4) on this machine's CPU, and regenerate docs/REPRODUCTION.md.

One `polytune bench` session per kernel (see polytune/study/bench.py): the original under gcc -O3, clang -O3
and Polly, polytune's Pluto-default seed, and the kernel tuned by each strategy the kernel's row of PLAN
names; all variants of a kernel run in interleaved rounds. The research questions' tables and figures are
then built from the recorded JSON by polytune/study/report.py, together with the GPU thread-block results
recorded on an H200 by benchmarks/run_gpu.py (benchmarks/results/gpu_h200_cuda_*.json).

    python benchmarks/reproduce.py                 # measure (about 10 minutes on 2 cores), then regenerate
    python benchmarks/reproduce.py --from benchmarks/results/reproduce   # regenerate only, from recorded data
    python benchmarks/reproduce.py --quick --out /tmp/r --doc /tmp/r/REPRODUCTION.md --figures /tmp/r/fig

Problem sizes are smaller than the files' defaults (the -D of each PLAN row), so that the whole run fits
well under 20 minutes on a 2-core machine (9 minutes here); every program's data exceeds the 1 MiB L2.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from polytune.study.bench import BenchOptions, KernelSpec, parse_strategies, run_bench, write_outputs  # noqa: E402
from polytune.study.plots import Stamp  # noqa: E402
from polytune.study.report import Sources, build_report, load_sources  # noqa: E402

PLUTO = os.path.join("benchmarks", "pluto")
SEARCH = "hill,exhaustive,random:n20,hill:origin,hill:model,hill:first,hill:d2,hill:hop"
NEXT = "hill,hill:origin,hill:model,hill:first,hill:d2,hill:d3,hill:hop"
# kernel, -D sizes, strategies. 2d_bidirec and gemver have two parameters (exhaustive grids of 90 and 100
# points: the heatmaps); gemm has three (degree 3 differs from 2 there).
PLAN = [
    ("2d_bidirec", ("N=1024", "TSTEPS=300"), SEARCH),
    ("gemver", ("N=3000",), SEARCH),
    ("gemm", ("N=800",), NEXT),
    ("gemm_bias_relu", ("N=800",), "hill"),
    ("cholesky", ("N=1000",), "hill"),
    ("lu", ("N=800",), "hill"),
    ("seidel-2d", ("N=1000", "TSTEPS=20"), "hill"),
    ("jacobi-2d", ("N=1000", "TSTEPS=50"), "hill"),
    ("mvt", ("N=4000",), "hill"),
    ("heat-3d", ("N=100", "TSTEPS=40"), "hill"),
]
QUICK = [
    ("2d_bidirec", ("N=256", "TSTEPS=40"), "hill,exhaustive,random:n6,hill:origin,hill:model,hill:first,hill:d2"),
    ("gemm", ("N=160",), "hill"),
]
MAX_EVALS = 40  # per hill climbing / coordinate descent run
TIME_LIMIT = 100.0  # seconds per tuning run (a safety net for slow starts such as hill:origin)
GPU_JSON = sorted(glob.glob(os.path.join(ROOT, "benchmarks", "results", "gpu_h200_cuda_*.json")))
GPU_STAMP = Stamp("1x NVIDIA H200 (driver 580.159.04), nvcc 13.0 -O3 -arch=native", "2026-11-30",
                  "python benchmarks/run_gpu.py --kernels ... --json benchmarks/results/gpu_h200_cuda_{a,b}.json")

NOT_DONE = """\
Not in this document:

- **Kernel Tuner** (brute_force, random_sample, greedy_ils on a CUDA kernel polytune emits, block shape as its
  parameters, on an H200) and **TVM's tuner** (gemm and conv2d on the CPU, the paper's AutoTVM column; AutoTVM
  is in no TVM that installs here, so MetaSchedule with an AutoTVM-style template): measured by
  `benchmarks/run_kerneltuner.py` and `benchmarks/run_tvm.py`, reported in docs/benchmarks-history/tuning.md ("polytune's search
  vs Kernel Tuner" and "TVM's tuner"). In short: on the GPU, hill climbing matched brute_force's optimum on
  2 of 3 kernels with 11 of 255 evaluations and beat random_sample and greedy_ils per evaluation; all local
  searches miss the reduction's optimum. On the CPU, TVM's schedules are about 3x faster than polytune's
  tuned gemm and conv2d. Research question 4 below compares polytune's own strategies.
- **IOOpt** and **Pluto itself** (the paper's other columns): not installed here; "seed" is polytune's
  Pluto-style schedule with Pluto's default tile size 32, not Pluto's output.
- **clang as polytune's back end** (the paper's Figure 7 also compiles Pluto/PlutoCD output with clang):
  polytune's variants are compiled with gcc only.
- The GPU section is not re-measured by this script: it renders the H200 results recorded by
  `benchmarks/run_gpu.py` (see BENCHMARKS.md).
- Problem sizes are smaller than the files' defaults (see the table): the regions run for 0.02-0.2 s and,
  except gemver's and mvt's matrices, the data fits the 32 MiB L3 cache. BENCHMARKS.md has the default
  sizes, where tiling pays off more.
"""


def plan_rows(quick: bool, only: set[str] | None) -> list[tuple[str, tuple[str, ...], str]]:
    rows = QUICK if quick else PLAN
    return [r for r in rows if only is None or r[0] in only]


def measure(args) -> dict:
    rows = plan_rows(args.quick, set(args.kernels.split(",")) if args.kernels else None)
    kernels = [KernelSpec(os.path.join(PLUTO, name + ".c"), defines, parse_strategies(strategies))
               for name, defines, strategies in rows]
    command = "python benchmarks/reproduce.py" + (" --quick" if args.quick else "") + (
        f" --kernels {args.kernels}" if args.kernels else "") + f" --threads {args.threads} --runs {args.runs}"
    opts = BenchOptions(threads=args.threads, runs=args.runs, max_evals=MAX_EVALS, time_limit=TIME_LIMIT,
                        command=command)
    os.makedirs(args.out, exist_ok=True)
    partial = os.path.join(args.out, "results.json")

    def checkpoint(results: dict) -> None:  # a run stopped half-way keeps the kernels it finished
        with open(partial, "w") as f:
            json.dump(results, f, indent=1)

    previous = None
    if args.update:
        with open(partial) as f:
            previous = json.load(f)
    t0 = time.perf_counter()
    results = run_bench(kernels, opts, checkpoint=None if previous else checkpoint)
    results["wall_s"] = time.perf_counter() - t0
    if args.remark:
        results["remark"] = args.remark
    if previous:
        results = merge(previous, results)
    write_outputs(results, args.out, figures=False)  # the figures go to docs/figures (regenerate)
    return results


def merge(old: dict, new: dict) -> dict:
    """The old results with the kernels measured again replaced (plan order kept), and the new command noted."""
    fresh = {k["name"]: k for k in new["kernels"]}
    kernels = [fresh.pop(k["name"], k) for k in old["kernels"]] + list(fresh.values())
    note = (f"re-measured {', '.join(k['name'] for k in new['kernels'])} from {new['started']} to "
            f"{new['finished']} with `{new['command']}`")
    return dict(old, kernels=kernels, finished=max(old["finished"], new["finished"]),
                command=f"{old['command']}, then {new['command']}", notes=[*old["notes"], note, *new["notes"]],
                wall_s=old.get("wall_s", 0) + new["wall_s"])


def preamble(bench: dict, rows: list[tuple]) -> str:
    from polytune.study.plots import short_machine
    comp = bench.get("compilers", {})
    lines = [
        "Generated by `benchmarks/reproduce.py` from the recorded data in `benchmarks/results/reproduce/` "
        "(`results.json`, `results.csv`); regenerate without measuring with "
        "`python benchmarks/reproduce.py --from benchmarks/results/reproduce`.",
        "",
        f"- Machine: {short_machine(bench['machine'])}; measured {bench['started']} to {bench['finished']}"
        + (f" ({bench['wall_s'] / 60:.1f} min)" if bench.get("wall_s") else "") + ".",
        f"- Load average (1, 5, 15 min) at the start: {bench.get('load_start')}, at the end: {bench.get('load_end')}"
        f" (per kernel in the table below; the benchmark itself keeps about {bench['threads']} core"
        f"{'s' if bench['threads'] != 1 else ''} busy, so a load clearly above {bench['threads']} means something "
        "else was running: those timings are distorted, OpenMP programs the most).",
        *([f"- Conditions: {bench['remark']}"] if bench.get("remark") else []),
        f"- Command: `{bench['command']}`; {bench['threads']} OpenMP thread{'s' if bench['threads'] != 1 else ''} "
        "for every program, "
        f"{bench['runs']} interleaved rounds per kernel (median), {bench['runs']} timed runs per tuning candidate "
        f"after a verification run; hill climbing and coordinate descent stop after {bench.get('max_evals')} "
        "evaluations.",
        "- Compilers: " + "; ".join(f"{name}: `{c['command']}` ({c['version']})" for name, c in comp.items()) + ".",
        "- Times are the programs' own region times (`time:` they print). Tuning measures afresh (no cache), "
        "so search times are real. Every tuned configuration was verified against the original program's "
        "results; the session also compares the printed checksums with gcc -O3's.",
        "",
        "| kernel | sizes | strategies | measured | load average at start, end (1 min) |",
        "|---|---|---|---|---|",
        *[f"| {n} | {' '.join('-D' + d for d in defines)} | {strategies} | {when} | {load} |"
          for n, defines, strategies, when, load in rows],
        "",
        NOT_DONE,
    ]
    return "\n".join(lines)


def regenerate(source_dir: str, doc: str, fig_dir: str) -> None:
    path = os.path.join(source_dir, "results.json")
    sources = load_sources([path])
    gpu = load_sources(GPU_JSON).gpu if GPU_JSON else []
    sources = Sources(benches=sources.benches, gpu=gpu, gpu_stamp=GPU_STAMP)
    bench = sources.benches[0]
    rows = [(k["name"], tuple(k["defines"]), ",".join(k["tuning"]) or "-",
             f"{k.get('started', '')[11:16]}-{k.get('finished', '')[11:16]}",
             f"{(k.get('load_start') or ['?'])[0]}, {(k.get('load_end') or ['?'])[0]}") for k in bench["kernels"]]
    for old in glob.glob(os.path.join(fig_dir, "*.png")):
        os.unlink(old)
    rep = build_report(sources, fig_dir, fig_dir=fig_dir)
    rel = os.path.relpath(fig_dir, os.path.dirname(os.path.abspath(doc)))
    os.makedirs(os.path.dirname(os.path.abspath(doc)), exist_ok=True)
    with open(doc, "w") as f:
        f.write(rep.markdown("Reproducing the paper's experiments", fig_prefix=rel.rstrip("/") + "/",
                             preamble=preamble(bench, rows)))
    print(f"wrote {doc} and {len(rep.figure_paths)} figures in {fig_dir}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--from", dest="source", metavar="DIR", help="only regenerate the document from DIR/results.json")
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results", "reproduce"),
                    help="where the measurements go (results.json, results.csv, summary.md, figures)")
    ap.add_argument("--doc", default=os.path.join(ROOT, "docs", "REPRODUCTION.md"))
    ap.add_argument("--figures", default=os.path.join(ROOT, "docs", "figures"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--kernels", help="a subset of the plan's kernels (comma-separated)")
    ap.add_argument("--quick", action="store_true", help="two small kernels (about a minute): checks the pipeline")
    ap.add_argument("--remark", help="what the numbers cannot show (e.g. other work on the machine), kept in the "
                                     "results and printed in the document")
    ap.add_argument("--update", action="store_true",
                    help="measure only --kernels again and replace them in OUT/results.json (e.g. after interference)")
    args = ap.parse_args(argv)
    for name in ("source", "out", "doc", "figures"):
        if getattr(args, name):
            setattr(args, name, os.path.abspath(getattr(args, name)))
    os.chdir(ROOT)  # kernels are named relative to the repository root in the recorded data
    if args.source:
        regenerate(args.source, args.doc, args.figures)
        return 0
    if args.update and not args.kernels:
        ap.error("--update needs --kernels")
    measure(args)
    regenerate(args.out, args.doc, args.figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
