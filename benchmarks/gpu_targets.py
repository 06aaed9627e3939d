#!/usr/bin/env python3
"""The GPU targets in one device call (issue 19), three parts, each kernel verified against the original
program before its time counts:

  a. row reductions (benchmarks/gpu reduction_*): our CUDA (the default mapping, and hill climbing over the
     joint mapping space from it), our Triton (the default launch configuration, and Algorithm 9.1's
     candidates then hill climbing) and torch.sum(A, dim=1) on the same float32 data;
  b. hill climbing vs exhaustive search over the joint CUDA mapping space (targets/cuda.py: block, points
     per thread, registers, shared memory per array, a warp per row, tiling) of small kernels: the best
     configuration each finds, the hill's best looked up in the exhaustive table (one measurement method),
     and the evaluations (distinct code measured) each needed;
  c. Triton stencils vs CUDA stencils (benchmarks/gpu stencil*): Triton default and tuned, CUDA default
     mapping and hill-tuned.

Times: CUDA events around the region's launches (the runners the tuner uses), the median of --runs after
a warm-up; torch.sum likewise. Each part stops starting kernels when its share of --budget-s is spent.
The nvcc builds of part b's exhaustive search are compiled in parallel first (--jobs).

    python benchmarks/gpu_targets.py --json out.json --markdown out.md          # on the GPU (about 4 min)
    python benchmarks/gpu_targets.py --quick                                      # no GPU: the plumbing only
    python benchmarks/gpu_targets.py --from-json out.json                         # the tables again

--quick runs small sizes on the CPU: CUDA through tests/data/fake_nvcc.py (tests/data/cuda_emu.h), Triton
under its interpreter (TRITON_INTERPRET=1), torch.sum on the CPU timed with the host clock. Its times
say nothing about a GPU.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
FAKE_NVCC = os.path.join(ROOT, "tests", "data", "fake_nvcc.py")

REDUCTIONS = ("reduction_vanilla", "reduction_unroll", "reduction_interchange")
# stencil2d_unroll and stencil2d_interchange give stencil2d_vanilla's Triton kernel (a re-rolled body, the
# same taps): --stencils adds them
STENCILS = ("stencil2d_vanilla", "stencil3d_ns")
SIZES = {"reduction": ("N=8192",), "stencil2d": ("N=2048",), "stencil3d_ns": ("N=128",)}
QUICK_SIZES = {"reduction": ("N=24", "M=40"), "stencil2d": ("N=21",), "stencil3d_ns": ("N=13",)}
# part b: kernels whose joint space (or the part of it given here) can be enumerated in about a minute each
EXHAUSTIVE = {  # name -> (sizes, domains); the first two run by default
    "reduction_vanilla": (("N=2048",), ()),  # the whole joint space: 384 configurations, 88 nvcc builds
    "reduction_interchange": (("N=2048",), ()),  # the same dimensions, another access pattern
    "stencil2d_vanilla": (("N=1024",), ("block_x=32,64", "block_y=4,8", "points_x=1,2", "points_y=1,2",
                                        "reduction_tile=32")),  # 384 configurations
}
QUICK_EXHAUSTIVE = {"reduction_vanilla": (("N=24", "M=40"), ("block_x=32,64,128", "points_x=1,2"))}
SHARES = {"a": 0.35, "b": 0.40, "c": 0.25}  # of --budget-s


def sizes(name: str, quick: bool) -> tuple[str, ...]:
    table = QUICK_SIZES if quick else SIZES
    return next(v for k, v in table.items() if name.startswith(k))


def median(xs: list[float]) -> float:
    s = sorted(xs)
    return s[len(s) // 2]


def ms(m) -> float | None:
    """A measurement's median in ms, or None where it failed."""
    return m.value * 1e3 if m is not None and m.ok else None


def failure(m) -> str | None:
    return None if m is None or m.ok else f"{m.error.value}: {(m.detail or '')[:200]}"


class Setup:
    """Where the kernels run: the GPU, or (--quick) the CPU emulation and Triton's interpreter."""

    def __init__(self, quick: bool, runs: int, jobs: int):
        self.quick, self.runs, self.jobs = quick, runs, jobs
        if quick:
            os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported
            import polytune.measure.cuda as measure_cuda
            measure_cuda.gpu_id = lambda: "emulated (tests/data/cuda_emu.h)"

    def cuda_build(self, defines):
        from polytune.measure.cuda import CudaBuildConfig
        if self.quick:
            return CudaBuildConfig(cc=FAKE_NVCC, cflags=("-O1",), defines=tuple(defines), runs=self.runs)
        return CudaBuildConfig(defines=tuple(defines), runs=self.runs)

    def device(self) -> str:
        if self.quick:
            return "cpu (quick: CUDA emulated, Triton interpreted)"
        import torch
        return torch.cuda.get_device_name(0)

    def time_ms(self, f) -> float:
        """The median of --runs calls of f after a warm-up: CUDA events on the GPU, the host clock on the CPU."""
        import torch
        f()
        times = []
        for _ in range(self.runs):
            if self.quick:
                t0 = time.perf_counter()
                f()
                times.append((time.perf_counter() - t0) * 1e3)
                continue
            torch.cuda.synchronize()
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            f()
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e))
        return median(times)


def program(name: str, defines):
    from polytune.pipeline import analyze
    return analyze(os.path.join(HERE, "gpu", name + ".c"), defines=tuple(defines))


# ---- Triton ----------------------------------------------------------------------------------------------
def triton_times(setup: Setup, prog, defines, evals: int, time_limit: float, keep=None) -> dict:
    """Triton's default configuration, then Algorithm 9.1's candidates and hill climbing (at most *evals*
    measured configurations after the candidates). keep(runner) sees the runner before it is closed."""
    from polytune.emit.triton import DEFAULT_CONFIG
    from polytune.measure import Memo
    from polytune.measure.c import BuildConfig
    from polytune.pipeline import OptimizeOptions
    from polytune.search import Budget, SearchOptions, run_search
    from polytune.targets.triton import TritonTarget, triton_seed
    out: dict = {}
    target = TritonTarget(prog, OptimizeOptions(target="triton"), BuildConfig(defines=tuple(defines), runs=setup.runs))
    runner = target.runner()
    memo = Memo(runner)
    try:
        runner.reference()
        space = target.space()
        names = space.names
        default = tuple(DEFAULT_CONFIG[n] for n in names)
        m = memo.measure(target.variant(names, default))
        out["default"] = {"config": dict(zip(names, default)), "ms": ms(m), "error": failure(m)}
        t0 = time.perf_counter()
        count = [0]

        def evaluate(config):
            count[0] += 1
            return memo.measure(target.variant(names, tuple(config)))
        seed, _choice = triton_seed(runner.key, space, evaluate, default)
        res = run_search(space, evaluate, "hill", seed, SearchOptions(alpha=0.05),
                         Budget(max_evals=max(evals, 1), time_limit=max(time_limit, 1.0)))
        best = res.best
        out["tuned"] = {"config": dict(zip(names, best.config)) if best else None, "ms": ms(best),
                        "measured": count[0], "search_s": round(time.perf_counter() - t0, 1)}
        if keep is not None:
            keep(runner)
    except Exception as e:  # noqa: BLE001 - a row records what broke; the run goes on
        out["error"] = f"{type(e).__name__}: {str(e)[:300]}"
    finally:
        runner.close()
    return out


# ---- CUDA ------------------------------------------------------------------------------------------------
def cuda_target(setup: Setup, prog, defines):
    from polytune.pipeline import OptimizeOptions
    from polytune.targets.cuda import CudaTarget
    return CudaTarget(prog, OptimizeOptions(target="cuda"), setup.cuda_build(defines))


def cuda_times(setup: Setup, prog, defines, evals: int, time_limit: float) -> dict:
    """The default CUDA mapping, and hill climbing over the joint mapping space from it (at most *evals*
    measured configurations)."""
    from polytune.measure import Memo
    from polytune.search import Budget, SearchOptions, run_search
    out: dict = {}
    target = cuda_target(setup, prog, defines)
    runner = target.runner()
    memo = Memo(runner)
    try:
        runner.reference()
        space = target.space()
        names = space.names
        seed = target.seed(space)

        def evaluate(config):
            return memo.measure(target.variant(names, tuple(config)))
        t0 = time.perf_counter()
        precompile(setup, target, runner, names, (seed, *space.neighbours(seed)))
        res = run_search(space, evaluate, "hill", seed, SearchOptions(alpha=0.05),
                         Budget(max_evals=max(evals, 1), time_limit=max(time_limit, 1.0)))
        out["default"] = {"config": dict(zip(names, seed)), "ms": ms(res.seed), "error": failure(res.seed)}
        out["tuned"] = {"config": dict(zip(names, res.best.config)) if res.best else None, "ms": ms(res.best),
                        "measured": res.evals, "search_s": round(time.perf_counter() - t0, 1)}
    except Exception as e:  # noqa: BLE001
        out["error"] = f"{type(e).__name__}: {str(e)[:300]}"
    finally:
        runner.close()
    return out


def precompile(setup: Setup, target, runner, names, configs) -> int:
    """The distinct nvcc builds of *configs*, compiled --jobs at a time into the runner's build table, so a
    search measures instead of waiting for nvcc (the whole space for the exhaustive search, the seed's
    neighbourhood for hill climbing). The runner compiles what is missing itself."""
    from polytune.errors import PolytuneError
    from polytune.measure.cuda import mapping_build
    texts = {}
    tag = f"pre{len(runner.builds)}_"  # (file names unique per call)
    seen = set()
    for config in configs:
        variant = target.variant(names, config)
        mapping = variant.build
        if mapping.flat or variant.key in seen:  # (the flat mapping is one build; one key, one code)
            continue
        seen.add(variant.key)
        try:
            text, why = mapping_build(target.program, mapping)
        except PolytuneError:
            continue
        if not why and text not in runner.builds:
            texts.setdefault(text, len(texts))
    runner.cpu.objects()  # the program's other sources, compiled once before the threads share them

    def build(item):
        text, k = item
        return text, runner.compile_text(text, f"{tag}{k}")
    with ThreadPoolExecutor(max(setup.jobs, 1)) as pool:
        for text, entry in pool.map(build, texts.items()):
            runner.builds[text] = entry
    return len(texts)


def hill_vs_exhaustive(setup: Setup, name: str, defines, domains, time_limit: float) -> dict:
    from polytune.measure import Memo
    from polytune.search import Budget, SearchOptions, run_search
    prog = program(name, defines)
    target = cuda_target(setup, prog, defines)
    runner = target.runner()
    row: dict = {"kernel": name, "size": list(defines), "domains": list(domains)}
    try:
        runner.reference()
        space = target.space(tuple(domains))
        names = space.names
        seed = target.seed(space)
        row["space"] = {p.name: list(p.values) for p in space.params}
        row["configurations"] = space.size
        t0 = time.perf_counter()
        row["builds"] = precompile(setup, target, runner, names,
                                   itertools.product(*(p.values for p in space.params)))
        row["compile_s"] = round(time.perf_counter() - t0, 1)
        searches = {}
        for strategy, options in (("exhaustive", SearchOptions()), ("hill", SearchOptions(alpha=0.05))):
            memo = Memo(runner)  # each search measures for itself: the hill reuses nothing of the exhaustive

            def evaluate(config, memo=memo):
                return memo.measure(target.variant(names, tuple(config)))
            t0 = time.perf_counter()
            res = run_search(space, evaluate, strategy, seed, options,
                             Budget(time_limit=max(time_limit, 1.0), max_iterations=100))
            searches[strategy] = res
            row[strategy] = {"best": dict(zip(names, res.best.config)) if res.best else None, "ms": ms(res.best),
                             "evaluations": res.evals, "stop": res.stop_reason.value,
                             "search_s": round(time.perf_counter() - t0, 1)}
        ex, hill = searches["exhaustive"], searches["hill"]
        # every measurement of both searches, in polytune.search.replay's record format (configurations in
        # the order of row["space"], the seed's first): strategies can be replayed on this table offline
        from polytune.search.replay import measurement_to_record
        row["seed"] = list(seed) if seed is not None else None
        row["records"] = {k: [measurement_to_record(r.measurement) for r in res.evaluations]
                          for k, res in searches.items()}
        if ex.best is not None and hill.best is not None:
            table = {tuple(r.config): r.measurement for r in ex.evaluations}
            looked_up = table.get(tuple(hill.best.config))
            row["hill_best_in_exhaustive_table_ms"] = ms(looked_up)
            if looked_up is not None and looked_up.ok:
                row["best_ratio"] = looked_up.value / ex.best.value
            row["measured_ratio"] = hill.best.value / ex.best.value
            row["evaluations_ratio"] = hill.evals / max(ex.evals, 1)
            row["exhaustive_complete"] = ex.stop_reason.value not in ("time_limit", "max_evals")
    except Exception as e:  # noqa: BLE001
        row["error"] = f"{type(e).__name__}: {str(e)[:300]}"
    finally:
        runner.close()
    return row


# ---- the parts -------------------------------------------------------------------------------------------
def part_a(setup: Setup, args, deadline: float) -> list[dict]:
    import numpy as np
    rows = []
    for name in args.reductions.split(","):
        if time.perf_counter() > deadline:
            rows.append({"kernel": name, "skipped": "budget"})
            continue
        defines = sizes(name, setup.quick)
        prog = program(name, defines)
        row: dict = {"kernel": name, "size": list(defines)}
        data = {}
        left = deadline - time.perf_counter()
        row["triton"] = triton_times(setup, prog, defines, args.triton_evals, left / 3,
                                     keep=lambda r, data=data: data.update(A=r.data.arrays["A"], s=r.data.outputs["s"]))
        row["cuda"] = cuda_times(setup, prog, defines, args.cuda_evals, (deadline - time.perf_counter()) / 2)
        if "A" in data:
            import torch
            a = torch.from_numpy(np.ascontiguousarray(data["A"], dtype=np.float32))
            a = a if setup.quick else a.cuda()
            got = torch.sum(a, dim=1).cpu().numpy()
            ref = np.asarray(data["s"], dtype=np.float64).ravel()
            row["torch_sum_ok"] = bool(np.allclose(got.astype(np.float64).ravel(), ref, rtol=1e-4, atol=1e-6))
            row["torch_sum_ms"] = setup.time_ms(lambda a=a: torch.sum(a, dim=1))
        best = [x for x in ((row["cuda"].get("tuned") or {}).get("ms"), (row["triton"].get("tuned") or {}).get("ms"))
                if x]
        if best and row.get("torch_sum_ms"):
            row["best_over_torch"] = min(best) / row["torch_sum_ms"]
        print(json.dumps(row), file=sys.stderr, flush=True)
        rows.append(row)
    return rows


def part_b(setup: Setup, args, deadline: float) -> list[dict]:
    rows = []
    plan = QUICK_EXHAUSTIVE if setup.quick else EXHAUSTIVE
    names = [n for n in args.exhaustive.split(",") if n] if args.exhaustive else list(plan)[:2]
    for k, name in enumerate(names):
        if time.perf_counter() > deadline:
            rows.append({"kernel": name, "skipped": "budget"})
            continue
        defines, domains = plan.get(name, (sizes(name, setup.quick), ()))
        share = (deadline - time.perf_counter()) / (len(names) - k)
        row = hill_vs_exhaustive(setup, name, defines, domains, share)
        print(json.dumps(row), file=sys.stderr, flush=True)
        rows.append(row)
    return rows


def part_c(setup: Setup, args, deadline: float) -> list[dict]:
    rows = []
    names = args.stencils.split(",")
    for k, name in enumerate(names):
        if time.perf_counter() > deadline:
            rows.append({"kernel": name, "skipped": "budget"})
            continue
        defines = sizes(name, setup.quick)
        prog = program(name, defines)
        share = (deadline - time.perf_counter()) / (len(names) - k)
        row = {"kernel": name, "size": list(defines),
               "triton": triton_times(setup, prog, defines, args.triton_evals, share / 2),
               "cuda": cuda_times(setup, prog, defines, args.cuda_evals, share / 2)}
        t = (row["triton"].get("tuned") or {}).get("ms")
        c = (row["cuda"].get("tuned") or {}).get("ms")
        if t and c:
            row["cuda_over_triton"] = c / t  # above 1: Triton is faster
        print(json.dumps(row), file=sys.stderr, flush=True)
        rows.append(row)
    return rows


# ---- tables ----------------------------------------------------------------------------------------------
def _f(x, digits=4) -> str:
    return f"{x:.{digits}f}" if isinstance(x, (int, float)) else "-"


def _cfg(c) -> str:
    return ", ".join(f"{k}={v}" for k, v in (c or {}).items()) or "-"


def tables(result: dict) -> str:
    quick = " (QUICK: CPU emulation, times meaningless)" if result.get("quick") else ""
    out = [f"Device: {result.get('device')}; runs per time: {result.get('runs')}; "
           f"wall: {result.get('wall_s')} s{quick}", ""]
    if result.get("a"):
        out += ["### a. Row reductions vs torch.sum(A, dim=1) (float32, ms)", "",
                "| kernel | size | CUDA default | CUDA tuned (evals) | Triton default | Triton tuned (evals) "
                "| torch.sum | best ours / torch.sum |", "|---|---|---|---|---|---|---|---|"]
        for r in result["a"]:
            if "skipped" in r:
                out.append(f"| {r['kernel']} | skipped ({r['skipped']}) |" + " |" * 6)
                continue
            c, t = r.get("cuda", {}), r.get("triton", {})
            out.append(
                f"| {r['kernel']} | {' '.join(r['size'])} | {_f((c.get('default') or {}).get('ms'))} "
                f"| {_f((c.get('tuned') or {}).get('ms'))} ({(c.get('tuned') or {}).get('measured', '-')}) "
                f"| {_f((t.get('default') or {}).get('ms'))} "
                f"| {_f((t.get('tuned') or {}).get('ms'))} ({(t.get('tuned') or {}).get('measured', '-')}) "
                f"| {_f(r.get('torch_sum_ms'))} | {_f(r.get('best_over_torch'), 2)} |")
            for side in ("cuda", "triton"):
                if r.get(side, {}).get("error"):
                    out.append(f"| {r['kernel']} | {side} error: {r[side]['error'][:150]} |" + " |" * 6)
        out.append("")
    if result.get("b"):
        out += ["### b. Hill climbing vs exhaustive search, joint CUDA mapping space", "",
                "| kernel | size | configurations (builds) | exhaustive best (ms), evaluations | hill best (ms), "
                "evaluations | hill's best in the exhaustive table / optimum | evaluations hill / exhaustive |",
                "|---|---|---|---|---|---|---|"]
        for r in result["b"]:
            if "skipped" in r or "error" in r:
                out.append(f"| {r['kernel']} | {r.get('skipped') or r.get('error', '')[:150]} |" + " |" * 5)
                continue
            ex, hill = r["exhaustive"], r["hill"]
            stopped = "" if r.get("exhaustive_complete") else f" (stopped: {ex['stop']})"
            out.append(f"| {r['kernel']} | {' '.join(r['size'])} | {r['configurations']} ({r['builds']}) "
                       f"| {_f(ex['ms'])}, {ex['evaluations']}{stopped} "
                       f"| {_f(hill['ms'])}, {hill['evaluations']} | {_f(r.get('best_ratio'), 3)} "
                       f"| {_f(r.get('evaluations_ratio'), 3)} |")
        out.append("")
        for r in result["b"]:
            if "exhaustive" in r:
                out.append(f"- {r['kernel']}: exhaustive best {_cfg(r['exhaustive']['best'])}; "
                           f"hill best {_cfg(r['hill']['best'])}; the hill's own measurement of it / the "
                           f"optimum: {_f(r.get('measured_ratio'), 3)}")
        out.append("")
    if result.get("c"):
        out += ["### c. Triton stencils vs CUDA stencils (kernel time, ms)", "",
                "| kernel | size | Triton default | Triton tuned (config) | CUDA default | CUDA tuned (evals) "
                "| CUDA tuned / Triton tuned |", "|---|---|---|---|---|---|---|"]
        for r in result["c"]:
            if "skipped" in r:
                out.append(f"| {r['kernel']} | skipped ({r['skipped']}) |" + " |" * 5)
                continue
            c, t = r.get("cuda", {}), r.get("triton", {})
            out.append(f"| {r['kernel']} | {' '.join(r['size'])} | {_f((t.get('default') or {}).get('ms'))} "
                       f"| {_f((t.get('tuned') or {}).get('ms'))} ({_cfg((t.get('tuned') or {}).get('config'))}) "
                       f"| {_f((c.get('default') or {}).get('ms'))} "
                       f"| {_f((c.get('tuned') or {}).get('ms'))} ({(c.get('tuned') or {}).get('measured', '-')}) "
                       f"| {_f(r.get('cuda_over_triton'), 2)} |")
            for side in ("cuda", "triton"):
                if r.get(side, {}).get("error"):
                    out.append(f"| {r['kernel']} | {side} error: {r[side]['error'][:150]} |" + " |" * 5)
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes on the CPU (CUDA emulated, Triton "
                    "interpreted): tests the script, not the GPU")
    ap.add_argument("--parts", default="a,b,c")
    ap.add_argument("--reductions", default=",".join(REDUCTIONS))
    ap.add_argument("--stencils", default=",".join(STENCILS))
    ap.add_argument("--exhaustive", default="", help="part b's kernels (default: "
                    f"{', '.join(list(EXHAUSTIVE)[:2])}; sizes and domains of {', '.join(EXHAUSTIVE)} are in "
                    "this file; others: their whole space at part a/c's size)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--triton-evals", type=int, default=1, help="hill-climbing evaluations after Algorithm "
                    "9.1's candidates (12 configurations)")
    ap.add_argument("--cuda-evals", type=int, default=8, help="hill-climbing evaluations (parts a and c)")
    ap.add_argument("--budget-s", type=float, default=225.0, help="seconds for the whole run (shared by the parts)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="nvcc builds at once (part b)")
    ap.add_argument("--json")
    ap.add_argument("--markdown")
    ap.add_argument("--from-json")
    args = ap.parse_args(argv)
    if args.from_json:
        with open(args.from_json) as f:
            print(tables(json.load(f)))
        return 0
    setup = Setup(args.quick, args.runs, args.jobs)
    start = time.perf_counter()
    parts = [p for p in args.parts.split(",") if p]
    result: dict = {"device": setup.device(), "quick": args.quick, "runs": args.runs, "budget_s": args.budget_s}
    used = 0.0
    total = sum(SHARES[p] for p in parts)
    for p in parts:
        used += SHARES[p] / total
        deadline = start + args.budget_s * used
        result[p] = {"a": part_a, "b": part_b, "c": part_c}[p](setup, args, deadline)
        result["wall_s"] = round(time.perf_counter() - start, 1)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(result, f, indent=2)
    text = tables(result)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
