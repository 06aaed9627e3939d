#!/usr/bin/env python3
"""Issue 18's GPU row: the wall time of `polytune tune --target cuda` (or `--target triton`) measuring one
candidate at a time (`--jobs 1`) and with the local pool (`--jobs J`: J compiles at once, nvcc's or Triton's
ahead of the launch, one candidate timed at a time on the GPU), and whether both end at configurations
equally fast.

For each kernel (benchmarks/gpu, or PolyBench's as cuda_mappings.py names them), the two modes run one after
the other, each `polytune tune` a process of its own, with the same strategy and budget (--strategy random
with --max-evals: the same candidates in both modes; hill: the climb's own path), no measurement cache.
Reported per kernel and mode: the process's wall time, the tune's search time (original, pool, search,
confirmation: its `search_time`), the strategy's time (its `spans.search`), evaluations, the best
configuration and its kernel time; per kernel the one/jobs ratios. Where the two bests differ, both are
measured again side by side (--side-rounds interleaved rounds in one runner, median kernel times): "same
best" when they are within --same-tolerance.

    python3 benchmarks/gpu_workers.py --kernels matmul_vanilla,stencil2d_vanilla,gemm --polybench DIR \\
        --jobs 14 --strategy random --max-evals 16 --out gpu_workers.json --markdown-out gpu_workers.md
    python3 benchmarks/gpu_workers.py --quick ...   # small sizes on the CPU: the emulator (tests/data/fake_nvcc.py)
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

from cuda_mappings import Kernel, median  # noqa: E402

from polytune.measure.build import Build  # noqa: E402
from polytune.measure.c import BuildConfig  # noqa: E402
from polytune.measure.cuda import CudaBuildConfig  # noqa: E402
from polytune.measure.runner import Variant  # noqa: E402
from polytune.pipeline import OptimizeOptions, analyze  # noqa: E402
from polytune.targets import get_target  # noqa: E402

FAKE_NVCC = os.path.join(ROOT, "tests", "data", "fake_nvcc.py")
QUICK_SIZES = {"matmul_vanilla": ["N=24"], "stencil2d_vanilla": ["N=24"], "reduction_vanilla": ["N=24"]}


def tune_command(kernel: Kernel, args, jobs: int, report: str, out: str) -> list[str]:
    defines = [d for d in kernel.defines if d != "POLYBENCH_DUMP_ARRAYS"]  # (the tuner checks its own dump)
    cmd = [sys.executable, "-m", "polytune", "tune", kernel.src, *kernel.extra_sources,
           *(f"-I{d}" for d in kernel.includes), *(f"-D{d}" for d in defines), "--target", args.target,
           "--jobs", str(jobs), "--strategy", args.strategy, "--max-evals", str(args.max_evals),
           "--runs", str(args.runs), "--no-cache", "--report", report, "-o", out]
    if args.strategy == "random":
        cmd += ["--rng-seed", "1"]
    if args.quick and args.target == "cuda":
        cmd += ["--cc", FAKE_NVCC, "--cflags=-O1"]
    return cmd


def run_mode(kernel: Kernel, args, mode: str, work: str) -> dict:
    jobs = 1 if mode == "one" else args.jobs
    report = os.path.join(work, f"{kernel.name}_{mode}.json")
    cmd = tune_command(kernel, args, jobs, report, os.path.join(work, f"{kernel.name}_{mode}.cu"))
    # a Triton cache of its own: the second mode would otherwise find the kernels the first one compiled
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               TRITON_CACHE_DIR=os.path.join(work, f"{kernel.name}_{mode}_triton_cache"))
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=args.timeout)
    out: dict = {"mode": mode, "jobs": jobs, "command": " ".join(cmd), "wall_s": time.perf_counter() - t0,
                 "exit": proc.returncode}
    if proc.returncode != 0 or not os.path.exists(report):
        out["error"] = proc.stderr[-2000:]
        return out
    with open(report) as f:
        r = json.load(f)
    measured = [e for e in r["evaluations"] if e.get("error") is None and e.get("same_as") is None]
    out.update(search_s=r["search_time"], strategy_s=(r.get("spans") or {}).get("search"), evals=r["evals"],
               measured=len(measured), names=[p["name"] for p in r["space"]],
               best=r["best"]["config"] if r.get("best") else None,
               best_ms=1e3 * r["best"]["median"] if r.get("best") and r["best"].get("median") else None,
               seed_ms=1e3 * r["seed"]["median"] if r.get("seed") and r["seed"].get("median") else None,
               errors={k: sum(1 for e in r["evaluations"] if e.get("error") == k)
                       for k in {e.get("error") for e in r["evaluations"]} if k},
               workers=r.get("workers"), compile_s=median([e.get("compile_time") for e in measured]))
    # where a pooled candidate's time went (medians; one candidate at a time records no spans)
    spans = [(e.get("extra") or {}).get("spans") or {} for e in measured]
    out["time_step_s"] = median([sp["time"][1] - sp["time"][0] for sp in spans if "time" in sp])
    out["wait_for_timer_s"] = median([sp["time"][0] - sp["compile"][1] for sp in spans
                                      if "time" in sp and "compile" in sp])
    out["compile_step_s"] = median([sp["compile"][1] - sp["compile"][0] for sp in spans if "compile" in sp])
    return out


def side_by_side(kernel: Kernel, args, names: list[str], configs: list[list[int]]) -> list[float | None]:
    """The kernel times (ms, medians of --side-rounds interleaved rounds) of *configs*, measured in one runner."""
    defines = tuple(d for d in kernel.defines if d != "POLYBENCH_DUMP_ARRAYS")
    quick = {"cc": FAKE_NVCC, "cflags": ("-O1",)} if args.quick and args.target == "cuda" else {}
    build = (CudaBuildConfig if args.target == "cuda" else BuildConfig)(
        includes=tuple(kernel.includes), defines=defines, runs=args.runs,
        program=Build.from_files(kernel.extra_sources), **quick)
    program = analyze(kernel.src, build.includes, build.defines)
    target = get_target(args.target)(program, OptimizeOptions(target=args.target), build)
    runner = target.runner()
    times: list[list[float]] = [[] for _ in configs]
    try:
        runner.reference()
        variants: list[Variant] = [target.variant(tuple(names), tuple(c)) for c in configs]
        for _ in range(args.side_rounds):
            for k, v in enumerate(variants):
                m = runner.measure(v)
                if m.ok:
                    times[k].append(1e3 * m.value)
    finally:
        runner.close()
    return [median(t) for t in times]


def summarize(kernel: str, modes: dict[str, dict], side: list | None, tolerance: float) -> dict:
    one, jobs = modes.get("one", {}), modes.get("jobs", {})
    out: dict = {"kernel": kernel}
    if "error" in one or "error" in jobs:
        one = jobs = {}
    for key in ("wall_s", "search_s", "strategy_s"):
        a, b = one.get(key), jobs.get(key)
        out[f"{key}_ratio"] = a / b if a and b else None
    if one.get("best") is not None and one.get("best") == jobs.get("best"):
        out["same_best"] = "same configuration"
    elif side and all(side):
        ratio = side[1] / side[0]  # jobs' best over one's, measured side by side
        out["side_ms"] = side
        out["same_best"] = f"{'yes' if abs(ratio - 1) <= tolerance else 'no'} ({ratio:.3f}x)"
    else:
        out["same_best"] = "not measured"
    return out


def _f(x, places: int = 2) -> str:
    return "" if x is None else f"{x:.{places}f}"


def _r(x) -> str:
    return "" if x is None else f"{x:.2f}x"


def markdown(result: dict) -> str:
    lines = ["| kernel | mode | wall s | search s | strategy s | evals (measured) | compile s (median) | "
             "compile step s (median) | time step s (median) | wait for the timer s (median) | best ms | seed ms | "
             "errors |", "|" + "---|" * 13]
    for k in result["kernels"]:
        for mode in k["modes"].values():
            if "error" in mode:
                lines.append(f"| {k['kernel']} | {mode['mode']} | failed: {mode['error'][-80:]!r} |" + " |" * 10)
                continue
            lines.append(f"| {k['kernel']} | {mode['mode']} (--jobs {mode['jobs']}) | {_f(mode['wall_s'], 1)} | "
                         f"{_f(mode['search_s'], 1)} | {_f(mode['strategy_s'], 1)} | {mode['evals']} "
                         f"({mode['measured']}) | {_f(mode['compile_s'])} | {_f(mode.get('compile_step_s'))} | "
                         f"{_f(mode.get('time_step_s'))} | "
                         f"{_f(mode.get('wait_for_timer_s'))} | {_f(mode['best_ms'], 4)} | "
                         f"{_f(mode['seed_ms'], 4)} | {mode['errors'] or ''} |")
    lines += ["", "| kernel | one/jobs wall | one/jobs search | one/jobs strategy | same best |", "|" + "---|" * 5]
    for k in result["kernels"]:
        s = k["summary"]
        lines.append(f"| {k['kernel']} | {_r(s['wall_s_ratio'])} | {_r(s['search_s_ratio'])} | "
                     f"{_r(s['strategy_s_ratio'])} | {s['same_best']} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernels", default="matmul_vanilla,stencil2d_vanilla,gemm")
    ap.add_argument("--target", choices=("cuda", "triton"), default="cuda")
    ap.add_argument("--polybench", default=os.environ.get("POLYBENCH", "/work/polybench"))
    ap.add_argument("--dataset", default="LARGE")
    ap.add_argument("--gpu-size", type=int, help="N of the benchmarks/gpu programs (default: cuda_mappings.py's)")
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) - 2), help="the pool's compiles")
    ap.add_argument("--strategy", choices=("random", "hill"), default="random")
    ap.add_argument("--max-evals", type=int, default=16)
    ap.add_argument("--runs", type=int, default=3, help="timed rounds of kernels per candidate")
    ap.add_argument("--side-rounds", type=int, default=7)
    ap.add_argument("--same-tolerance", type=float, default=0.03)
    ap.add_argument("--timeout", type=float, default=600, help="seconds one tune may take")
    ap.add_argument("--quick", action="store_true", help="the emulator, small sizes: tests the script")
    ap.add_argument("--out", required=True)
    ap.add_argument("--markdown-out")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="polytune-gpu-workers-")
    if args.quick:  # an nvidia-smi that names a GPU, for the tuner's check (the emulator runs on the CPU)
        os.makedirs(os.path.join(work, "bin"))
        fake = os.path.join(work, "bin", "nvidia-smi")
        with open(fake, "w") as f:
            f.write("#!/bin/sh\necho 'Emulated GPU, 0.0'\n")
        os.chmod(fake, 0o755)
        os.environ["PATH"] = os.path.join(work, "bin") + os.pathsep + os.environ["PATH"]
        if args.target == "triton":
            os.environ["TRITON_INTERPRET"] = "1"  # (before Triton is imported, here and in the tunes)
    result: dict = {"args": vars(args), "kernels": [], "started": time.strftime("%Y-%m-%d %H:%M:%S")}
    for name in args.kernels.split(","):
        kernel = Kernel(name, args)
        if args.quick:
            kernel.defines = QUICK_SIZES.get(name, ["N=24"])
            kernel.program = analyze(kernel.src, defines=tuple(kernel.defines))
        modes = {}
        for mode in ("one", "jobs"):
            modes[mode] = run_mode(kernel, args, mode, work)
            m = modes[mode]
            print(f"{name} {mode}: {m['wall_s']:.1f} s, best {m.get('best_ms')} ms "
                  f"{m.get('error', '')[-300:]}", file=sys.stderr, flush=True)
        side = None
        bests = [modes[m].get("best") for m in ("one", "jobs")]
        if all(bests) and bests[0] != bests[1] and args.side_rounds > 0:
            side = side_by_side(kernel, args, modes["one"]["names"], bests)
        result["kernels"].append({"kernel": name, "modes": modes,
                                  "summary": summarize(name, modes, side, args.same_tolerance)})
        with open(args.out, "w") as f:  # after each kernel: a run cut short keeps what it measured
            json.dump(result, f, indent=2)
    text = markdown(result)
    print(text)
    if args.markdown_out:
        with open(args.markdown_out, "w") as f:
            f.write(text + "\n")
    return 0 if all("error" not in m for k in result["kernels"] for m in k["modes"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
