#!/usr/bin/env python3
"""polytune's search against Kernel Tuner's (issue 6): the same CUDA kernel, the same block-shape space, the
same GPU.

For each kernel of benchmarks/gpu whose region is one kernel launched once (others are skipped, with the
reason), at the sizes of benchmarks/run_gpu.py:

- **polytune**: hill climbing, degree 1, best fit, seeded from the default block (1024 / 32x32 / 32x8x4),
  Welch t-test (alpha 0.05), shortest-hop refinement of x in steps of 8: run_gpu.py's "hill d1", measured
  by polytune's own CudaRunner (one nvcc build, one serving process, CUDA events around the whole region).
- **Kernel Tuner** (`tune_kernel`, lang="cupy") on the kernel polytune emits for that region, with its
  template parameters fixed by typedefs (the types the host code would deduce) and made `extern "C"`:
  `brute_force`, `random_sample` (fraction 0.1) and `greedy_ils` (default options; max_fevals = the number
  of shapes polytune's hill climbing measured on that kernel; Kernel Tuner 1.5 counts a revisit, served
  from its cache, against max_fevals, so greedy_ils measures fewer distinct shapes than that). Random
  and numpy generators are seeded (--seed) before each run. Tunable parameters: block_size_x in
  8..1024 in steps of 8, block_size_y (and block_size_z) over the powers of two up to 128 (64), with
  x*y*z <= 1024: run_gpu.py's exhaustive grid, every shape polytune's hill climbing can reach. The grid is
  polytune's: ceil(extent / block) blocks per axis, capped as its host code caps them (the kernels are
  grid-stride loops). Inputs and the expected outputs come from one run of the original program on the CPU
  (polytune's probe, as the Triton harness uses); every configuration is verified with polytune's rule
  (relative 1e-4, absolute floor 1e-7 * max|reference|) before its time counts. A configuration that fails
  verification stops Kernel Tuner's run (its rule). Kernel Tuner's time is the mean of --iterations
  CUDA-event timed launches (polytune's: the median of --iterations rounds); every configuration is
  compiled afresh by NVRTC (cupy adds -ftz=true; CUPY_CACHE_IN_MEMORY=1, so the on-disk cache of an
  earlier strategy or run does not shorten a later one's wall time).

The brute-force run measures the whole space with one method: each strategy's best shape is also looked up
in that table, which makes the quality comparison like for like (polytune times the region with its own
harness, Kernel Tuner the kernel launch). Wall times: the search itself, compilations included (polytune:
its one nvcc build; Kernel Tuner: one NVRTC compilation per configuration); the one CPU run of the
original program that gives the reference is not counted for either.

    python benchmarks/run_kerneltuner.py [--kernels matmul_vanilla,...] [--iterations 7] [--json out.json]
    python benchmarks/run_kerneltuner.py --from-json out.json     # the table of an earlier run
    python benchmarks/run_kerneltuner.py --dry-run                # no GPU needed: builds, compiles, checks

Needs kernel_tuner (1.5) and cupy on the GPU machine.
"""
from __future__ import annotations

import argparse
import datetime
import itertools
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import islpy as isl  # noqa: E402
import numpy as np  # noqa: E402
from run_gpu import SIZES, geomean, read_rows, run_rows, space_for  # noqa: E402

from polytune.emit.cuda import MAX_GRID, MAX_THREADS, default_block, generate_cuda_region  # noqa: E402
from polytune.measure.c import BuildConfig, compare_dumps  # noqa: E402
from polytune.measure.cache import compiler_id, gpu_id  # noqa: E402
from polytune.measure.cuda import CudaBuildConfig, CudaRunner  # noqa: E402
from polytune.measure.triton import DTYPES, run_probe  # noqa: E402
from polytune.pipeline import Program, analyze, gpu_prefix  # noqa: E402
from polytune.search import Budget, SearchOptions, run_search  # noqa: E402

KERNELS = "matmul_vanilla,stencil2d_vanilla,reduction_vanilla"
CTYPES = {"f4": "float", "f8": "double", "i4": "int", "u4": "unsigned int", "i8": "long", "u8": "unsigned long",
          "i2": "short", "u2": "unsigned short", "i1": "signed char", "u1": "unsigned char"}
BLOCK_NAMES = ("block_size_x", "block_size_y", "block_size_z")
KT_STRATEGIES = ("brute_force", "random_sample", "greedy_ils")
RTOL = CudaBuildConfig().rtol  # polytune's CUDA tolerance (README, "Tolerances")


# ---- the kernel as Kernel Tuner sees it ---------------------------------------------------------------------
@dataclass
class KtKernel:
    name: str  # the kernel's function name (extern "C")
    source: str  # what tune_kernel compiles: the kernel, template parameters fixed by typedefs
    params: list[str]  # the kernel's parameter names, in order
    arguments: list  # numpy arrays and numpy scalars, in that order
    answer: list  # the original program's results for the arrays the kernel writes, None elsewhere
    extents: tuple[int, ...]  # iterations per block axis (x, y, z) of the mapped loops
    dims: int
    probe_s: float = 0.0

    def problem_size(self, params: dict) -> tuple[int, ...]:
        """What Kernel Tuner divides by the block to get the grid: polytune's pt_blocks(n, b, most) =
        min(ceil(n / b), most) blocks on each axis, as ceil(min(n, most * b) / b)."""
        return tuple(min(n, MAX_GRID[ax] * int(params.get(BLOCK_NAMES[ax], 1)))
                     for ax, n in enumerate(self.extents))

    def grid(self, block: tuple[int, ...]) -> tuple[int, ...]:
        """polytune's grid for *block* (what its host code launches)."""
        return tuple(min(-(-n // b), MAX_GRID[ax]) for ax, (n, b) in enumerate(zip(self.extents, block)))


def scalar_codes(workdir: str) -> dict[str, str]:
    """C type codes of the parameters and scalars the probe recorded (run_probe keeps only their values)."""
    codes = {}
    with open(os.path.join(workdir, "in.meta")) as f:
        for line in f:
            kind, name, code, *_ = line.split()
            if kind in ("param", "scalar"):
                codes[name] = code
    return codes


def fixed_value(pa: isl.PwAff, values: dict[str, int]) -> int:
    """The value of a bound (a function of the parameters only) at the given parameter values."""
    space = pa.get_space().params()
    s = isl.Set.universe(space)
    for i in range(space.dim(isl.dim_type.param)):
        name = space.get_dim_name(isl.dim_type.param, i)
        key = name if name in values else name[:-1]  # polytune's name for a C name it had to rename
        s = s.fix_val(isl.dim_type.param, i, isl.Val.int_from_si(s.get_ctx(), int(values[key])))
    pa = pa.intersect_params(s)
    lo, hi = pa.min_val(), pa.max_val()
    if not (lo.is_int() and hi.is_int() and lo.to_python() == hi.to_python()):
        raise ValueError(f"bound {pa} has no single value at {values}")
    return lo.to_python()


SIGNATURE = re.compile(r"\s*(?:template <([^>]*)>\s*)?__global__ void (?:__launch_bounds__\(\d+\) )?(\w+)\(([^)]*)\)")


def kt_source(kernels: str, typedefs: dict[str, str]) -> tuple[str, str]:
    """(name, source) of the single kernel in *kernels* (generate_cuda_region's text) with its template
    parameters fixed: ``template <typename pt_T0, ...> __global__ void k(...)`` becomes
    ``typedef float (*pt_T0)[2048]; ... extern "C" __global__ void k(...)``: the code the template
    instantiation gives, under a plain C name (what Kernel Tuner's cupy backend looks up)."""
    m = SIGNATURE.match(kernels)
    tparams = re.findall(r"typename (\w+)", m.group(1) or "")
    missing = [t for t in tparams if t not in typedefs]
    if missing:
        raise ValueError(f"no type for template parameter(s) {', '.join(missing)}")
    source = "\n".join(typedefs[t] for t in tparams) + \
        f'\nextern "C" __global__ void {m.group(2)}({m.group(3)})' + kernels[m.end():]
    return m.group(2), source.rstrip() + "\n"


def typedef(name: str, code: str, shape: tuple[int, ...] | None) -> str:
    """The typedef of a deduced kernel parameter type: decltype(&A[0]) for an array, the scalar's type."""
    c = CTYPES[code]
    if shape is None:
        return f"typedef {c} {name};"
    if len(shape) == 1:
        return f"typedef {c} *{name};"
    return f"typedef {c} (*{name}){''.join(f'[{d}]' for d in shape[1:])};"


def kt_kernel(program: Program, defines: tuple[str, ...], workdir: str) -> KtKernel | str:
    """polytune's kernel for *program*'s region with its arguments and the expected results, or why it
    cannot be handed to Kernel Tuner."""
    if len(program.scops) != 1:
        return f"{len(program.scops)} scop regions (one region with one kernel is supported)"
    a = program.scops[0]
    gs = a.gpu
    if len(gs.kernels) != 1:
        return f"{len(gs.kernels)} kernels in the region (one launch is supported)"
    info = gs.kernels[0]
    if info.depth:
        return f"the kernel is launched inside {info.depth} host loop(s) (one launch is supported)"
    if not info.mapped:
        return "the kernel runs in one thread: no block shape to tune"
    if sorted(info.axes) != list(range(info.mapped)):
        return f"unexpected block axes {info.axes}"
    p = gpu_prefix(program)
    region = generate_cuda_region(a.scop, gs, serve=True, prefix=p, avoid=program.identifiers)
    t0 = time.perf_counter()
    data = run_probe(program, BuildConfig(cc="gcc", cflags=("-O3", "-march=native"), defines=defines), workdir)
    probe_s = time.perf_counter() - t0
    codes = scalar_codes(workdir)
    values = {**a.scop.constants, **data.numbers}
    extents = [0] * info.mapped
    host = {}
    for j in range(info.mapped):
        lo_pa, hi_pa = info.bounds(j, [])
        lo, hi = fixed_value(lo_pa, values), fixed_value(hi_pa, values)
        host[f"{p}_lo{j}"] = lo
        host[f"{p}_n{info.axes[j]}"] = extents[info.axes[j]] = hi - lo + 1
    if min(extents) <= 0:
        return f"the mapped loops are empty at this size ({extents} iterations): the host code launches nothing"
    # Template parameter k is the type of the k-th kernel parameter (arrays, then scalars; then the longs).
    m = SIGNATURE.match(region.kernels)
    if not m:
        return "no kernel definition found in polytune's output"
    decls = [d.split() for d in m.group(3).split(",")]
    typedefs, arguments, answer = {}, [], []
    for d in decls:
        tname, pname = d[0], d[-1]
        if pname in host:
            arguments.append(np.int64(host[pname]))
            answer.append(None)
        elif pname in data.arrays:
            arr = np.ascontiguousarray(data.arrays[pname])
            typedefs[tname] = typedef(tname, data.codes[pname], arr.shape)
            arguments.append(arr)
            answer.append(data.outputs.get(pname))
        elif pname in data.numbers and pname in codes:
            typedefs[tname] = typedef(tname, codes[pname], None)
            arguments.append(np.dtype(DTYPES[codes[pname]]).type(data.numbers[pname]))
            answer.append(None)
        else:
            return f"kernel parameter '{pname}' has no recorded value"
    if not any(x is not None for x in answer):
        return "the kernel writes nothing the probe recorded"
    name, source = kt_source(region.kernels, typedefs)
    return KtKernel(name, source, [d[-1] for d in decls], arguments, answer, tuple(extents), info.mapped, probe_s)


def tune_params(dims: int) -> tuple[dict[str, list[int]], list[str]]:
    """run_gpu.py's exhaustive grid as Kernel Tuner parameters, and the thread limit as its restriction."""
    space = space_for(dims, grid=True)
    params = {BLOCK_NAMES[k]: list(p.values) for k, p in enumerate(space.params)}
    return params, ["*".join(params) + f"<={MAX_THREADS}"]


def make_verify(rtol: float, failures: list[str]):
    """Kernel Tuner's verify callback with polytune's comparison (polytune.measure.compare_dumps)."""
    def verify(answer, result_host, atol=None):  # noqa: ARG001 - the tolerance is polytune's, not atol
        for i, (ref, got) in enumerate(zip(answer, result_host)):
            if ref is None:
                continue
            verdict = compare_dumps(np.asarray(ref, dtype=np.float64).ravel(),
                                    np.asarray(got, dtype=np.float64).ravel(), rtol)
            if verdict:
                failures.append(f"argument {i}: {verdict}")
                return False
        return True
    return verify


# ---- the searches ------------------------------------------------------------------------------------------
def config_key(config) -> str:
    return ",".join(str(int(v)) for v in config)


def run_kt(kk: KtKernel, strategy: str, options: dict, iterations: int, seed: int, **extra) -> dict:
    """One tune_kernel run: the best configuration, its time, the configurations measured, the wall time.
    *extra* goes to tune_kernel (the tests use simulation_mode and cache)."""
    from kernel_tuner import tune_kernel
    params, restrictions = tune_params(kk.dims)
    names = list(params)
    failures: list[str] = []
    random.seed(seed)  # tune_kernel's own 'seed' argument is not used by 1.5's strategies
    np.random.seed(seed)
    cwd = os.getcwd()
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings(), tempfile.TemporaryDirectory(prefix="polytune-kt-") as tmp:
            # typedef'd parameter types (pt_T0 A) are not what its argument check looks for; the types are right
            warnings.filterwarnings("ignore", message="Argument at position")
            os.chdir(tmp)  # where Kernel Tuner writes the source of a configuration that failed
            results, env = tune_kernel(
                kk.name, kk.source, kk.problem_size, kk.arguments, params, restrictions=restrictions,
                answer=kk.answer, verify=make_verify(RTOL, failures), lang="cupy", iterations=iterations,
                strategy=strategy, strategy_options=dict(options), quiet=True, **extra)
    except Exception as e:  # noqa: BLE001 - a failed search is a result of the benchmark
        why = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        return {"error": why + (f" ({failures[-1]})" if failures else ""), "wall_s": time.perf_counter() - t0}
    finally:
        os.chdir(cwd)
    wall = time.perf_counter() - t0
    table: dict[str, float] = {}  # configuration -> mean time (ms), Kernel Tuner's objective
    times: dict[str, list[float]] = {}
    errors: dict[str, int] = {}
    seen = set()
    for r in results:
        key = config_key(r[n] for n in names)
        err = r.get("__error__")
        if err is not None:
            if key not in seen:
                errors[type(err).__name__] = errors.get(type(err).__name__, 0) + 1
        elif isinstance(r.get("time"), (int, float)) and math.isfinite(r["time"]):
            table.setdefault(key, float(r["time"]))
            if r.get("times"):
                times.setdefault(key, [float(t) for t in r["times"]])
        seen.add(key)
    best = min(table, key=table.get) if table else None
    compile_ms = sum(r.get("compile_time", 0) or 0 for r in results if "__error__" not in r)
    return {
        "best": [int(v) for v in best.split(",")] if best else None,
        "best_ms": table[best] if best else None,
        "measured": len(table), "visited": len(results), "errors": errors, "wall_s": wall,
        "compile_s": compile_ms / 1e3, "options": dict(options), "seed": seed,
        "table": table, "times": times, "device": env.get("device_name"),
    }


def run_polytune(program: Program, defines: tuple[str, ...], dims: int, runs: int) -> dict:
    """run_gpu.py's hill d1: hill climbing from the default block with polytune's CudaRunner."""
    harness = CudaRunner(program, CudaBuildConfig(defines=defines, runs=runs))
    try:
        t0 = time.perf_counter()
        harness.reference()
        reference_s = time.perf_counter() - t0
        measured = [0]

        def evaluate(config):
            m = harness.measure_block(tuple(config))
            if m.error is None or m.error.value != "resources":
                measured[0] += 1
            return m

        t0 = time.perf_counter()
        res = run_search(space_for(dims, grid=False), evaluate, "hill", default_block(dims),
                         SearchOptions(degree=1, alpha=0.05, shortest_hop=True), Budget(max_iterations=100))
        wall = time.perf_counter() - t0
        errors: dict[str, int] = {}
        for r in res.evaluations:
            if r.measurement.error is not None:
                errors[r.measurement.error.value] = errors.get(r.measurement.error.value, 0) + 1
        out = {
            "best": list(res.best.config) if res.best else None,
            "best_ms": res.best.value * 1e3 if res.best else None,
            "seed": list(default_block(dims)),
            "seed_ms": res.seed.value * 1e3 if res.seed and res.seed.ok else None,
            "measured": measured[0], "visited": res.evals, "errors": errors, "wall_s": wall,
            "compile_s": harness.compile_time, "reference_s": reference_s, "stop": res.stop_reason.value,
            "registers": harness.registers, "spill_bytes": harness.spills,
        }
        if res.best is None:
            detail = next((r.measurement.detail for r in res.evaluations if r.measurement.error), "")
            out["error"] = f"no verified configuration ({detail})"
        return out
    except Exception as e:  # noqa: BLE001
        return {"error": f"{type(e).__name__}: {e}"}
    finally:
        harness.close()


def versions() -> dict:
    out = {"date": datetime.datetime.now().isoformat(timespec="seconds"), "gpu": gpu_id(),
           "nvcc": compiler_id("nvcc")}
    for mod in ("kernel_tuner", "cupy"):
        try:
            out[mod] = __import__(mod).__version__
        except ImportError:
            out[mod] = None
    return out


def run_kernel(name: str, args) -> dict:
    src = os.path.join(HERE, "gpu", name + ".c")
    defines = tuple(SIZES[name])
    row: dict = {"kernel": name, "size": list(defines), "env": versions()}
    try:
        program = analyze(src, defines=defines)
        with tempfile.TemporaryDirectory(prefix="polytune-kt-") as tmp:
            kk = kt_kernel(program, defines, tmp)
        if isinstance(kk, str):
            row["skipped"] = kk
            print(f"{name}: skipped: {kk}", file=sys.stderr, flush=True)
            return row
        params, _ = tune_params(kk.dims)
        row.update(dims=kk.dims, extents=list(kk.extents), default=list(default_block(kk.dims)),
                   space=_space_size(params), probe_s=kk.probe_s, kernel_source=kk.source,
                   rtol=RTOL, iterations=args.iterations)
        row["polytune"] = run_polytune(program, defines, kk.dims, args.iterations)
        _progress(name, "polytune hill", row["polytune"])
        hill_evals = row["polytune"].get("measured") or 20
        plan = {"brute_force": {},
                "random_sample": {"fraction": args.random_fraction},
                "greedy_ils": {"max_fevals": args.ils_fevals or hill_evals}}
        row["kt"] = {}
        for strategy in KT_STRATEGIES:
            r = run_kt(kk, strategy, plan[strategy], args.iterations, args.seed)
            if strategy != "brute_force":
                r.pop("times", None)  # the brute-force run keeps every configuration's times
            row["kt"][strategy] = r
            _progress(name, "KT " + strategy, r)
    except Exception as e:  # noqa: BLE001 - a benchmark row records what broke and the run goes on
        row["error"] = f"{type(e).__name__}: {e}"
        print(f"{name}: error: {row['error']}", file=sys.stderr, flush=True)
    return row


def _space_size(params: dict[str, list[int]]) -> int:
    return sum(1 for c in itertools.product(*params.values()) if math.prod(c) <= MAX_THREADS)


def _progress(kernel: str, label: str, r: dict) -> None:
    if "error" in r:
        print(f"{kernel:20s} {label:16s} error: {r['error']}", file=sys.stderr, flush=True)
    else:
        print(f"{kernel:20s} {label:16s} best {r['best']} {r['best_ms']:.4f} ms, {r['measured']} measured "
              f"({r['visited']} visited), {r['wall_s']:.1f} s, errors {r['errors']}", file=sys.stderr, flush=True)


# ---- the report --------------------------------------------------------------------------------------------
LABELS = {"polytune": "polytune hill (d1)", "brute_force": "KT brute_force", "random_sample": "KT random_sample",
          "greedy_ils": "KT greedy_ils"}


def _searches(row: dict) -> list[tuple[str, dict]]:
    out = [("polytune", row.get("polytune") or {"error": "not run"})]
    for s in KT_STRATEGIES:
        out.append((s, (row.get("kt") or {}).get(s) or {"error": "not run"}))
    return out


def _label(key: str, r: dict) -> str:
    opts = r.get("options") or {}
    if key == "random_sample" and "fraction" in opts:
        return f"{LABELS[key]} ({opts['fraction']:g})"
    if key == "greedy_ils" and "max_fevals" in opts:
        return f"{LABELS[key]} (max_fevals {opts['max_fevals']})"
    return LABELS[key]


def table(rows: list[dict]) -> str:
    head = ("| kernel | search | best shape | its time (ms) | in the brute-force table (ms) | / optimum | "
            "measured (visited) | wall (s) | compiling (s) |")
    out = [head, "|" + "---|" * 9]
    ratios: dict[str, list[float]] = {}
    notes = []
    for row in rows:
        title = f"{row['kernel']} ({', '.join(row.get('size', []))})"
        if "skipped" in row or "error" in row and "polytune" not in row:
            out.append(f"| {title} | {'skipped: ' + row['skipped'] if 'skipped' in row else 'error: ' + row['error']}"
                       " |" + " |" * 7)
            continue
        bf = (row.get("kt") or {}).get("brute_force") or {}
        bft = bf.get("table") or {}
        opt = min(bft.values()) if bft else None
        title += f", {row.get('space', '?')} shapes"
        for key, r in _searches(row):
            if "error" in r:
                out.append(f"| {title} | {_label(key, r)} | error: {r['error']} |" + " |" * 6)
                title = ""
                continue
            looked = bft.get(config_key(r["best"])) if r.get("best") else None
            ratio = looked / opt if looked is not None and opt else None
            if ratio is not None:
                ratios.setdefault(key, []).append(ratio)
            cells = [title, _label(key, r), str(tuple(r["best"])), f"{r['best_ms']:.4f}",
                     f"{looked:.4f}" if looked is not None else "-", f"{ratio:.3f}" if ratio is not None else "-",
                     f"{r['measured']} ({r['visited']})", f"{r['wall_s']:.1f}", f"{r.get('compile_s', 0):.1f}"]
            out.append("| " + " | ".join(cells) + " |")
            title = ""
        if "error" in row:
            notes.append(f"{row['kernel']}: {row['error']}")
        d = row.get("default")
        if d and bft.get(config_key(d)) is not None and opt:
            notes.append(f"{row['kernel']}: the default {tuple(d)} takes {bft[config_key(d)]:.4f} ms in the "
                         f"brute-force table ({bft[config_key(d)] / opt:.3f} x the optimum)")
    if ratios:
        notes.append("geometric mean of the best shape's time over the brute-force optimum: " + ", ".join(
            f"{LABELS[k]} {geomean(v):.3f} ({len(v)} kernels)" for k, v in ratios.items()))
    return "\n".join(out + ([""] + ["- " + n for n in notes] if notes else []))


# ---- checks without a GPU ----------------------------------------------------------------------------------
def dry_run(names: list[str], nvcc: str) -> int:
    """Everything short of the GPU: the kernel as Kernel Tuner gets it (compiled with nvcc -c, with Kernel
    Tuner's #defines when it is installed), its arguments, the grid against polytune's for every shape of
    the space, and the verify callback on the reference itself."""
    bad = 0
    for name in names:
        defines = tuple(SIZES[name])
        program = analyze(os.path.join(HERE, "gpu", name + ".c"), defines=defines)
        with tempfile.TemporaryDirectory(prefix="polytune-kt-") as tmp:
            kk = kt_kernel(program, defines, tmp)
            if isinstance(kk, str):
                print(f"{name}: skipped: {kk}")
                continue
            params, restrictions = tune_params(kk.dims)
            print(f"== {name} {defines}: kernel {kk.name}, {kk.dims}-D, extents {kk.extents}, "
                  f"{_space_size(params)} shapes, probe {kk.probe_s:.1f} s")
            for p, a, ans in zip(kk.params, kk.arguments, kk.answer):
                what = f"array {a.dtype} {a.shape}" if isinstance(a, np.ndarray) else f"{type(a).__name__} {a}"
                print(f"   {p:10s} {what}{'  (checked)' if ans is not None else ''}")
            print(kk.source)
            text = kk.source
            try:
                from kernel_tuner import util
                from kernel_tuner.searchspace import Searchspace
                cfg = dict(zip(params, default_block(kk.dims)))
                threads, grid = util.setup_block_and_grid(kk.problem_size, (None, None, None), cfg,
                                                          util.default_block_size_names)
                _, text = util.prepare_kernel_string(kk.name, kk.source, cfg, grid, threads,
                                                     util.default_block_size_names, "CUPY", None)
                mismatches = 0
                ss = Searchspace(params, restrictions, MAX_THREADS)
                for c in ss.list:
                    cfg = dict(zip(params, c))
                    threads, grid = util.setup_block_and_grid(kk.problem_size, (None, None, None), cfg,
                                                              util.default_block_size_names)
                    block = tuple(c) + (1,) * (3 - len(c))
                    want = kk.grid(tuple(c)) + (1,) * (3 - kk.dims)
                    if tuple(threads) != block or tuple(grid) != want:
                        mismatches += 1
                print(f"   Kernel Tuner: {ss.size} shapes in its search space; grid = polytune's for "
                      f"{ss.size - mismatches} of them")
                bad += mismatches + (ss.size != _space_size(params))
            except ImportError:
                print("   (kernel_tuner not installed: its #defines and grids not checked)")
            fails: list[str] = []
            verify = make_verify(RTOL, fails)
            same = verify(kk.answer, [None if x is None else x.copy() for x in kk.answer])
            wrong = [None if x is None else x.copy() for x in kk.answer]
            k = next(i for i, x in enumerate(wrong) if x is not None)
            wrong[k].reshape(-1)[-1] += 1.0 + abs(float(wrong[k].reshape(-1)[-1]))
            print(f"   verify: reference against itself {same}, with one element changed {verify(kk.answer, wrong)}"
                  f" ({fails[-1] if fails else ''})")
            bad += (not same) + verify(kk.answer, wrong)
            src = os.path.join(tmp, "kt.cu")
            with open(src, "w") as f:
                f.write(text)
            cmd = [nvcc, "-c", "-x", "cu", "-std=c++11", "-arch=sm_90", "-Xptxas", "-v", src, "-o", src + ".o"]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            regs = re.findall(r"Used (\d+) registers", proc.stderr)
            print(f"   nvcc -c: {'ok' if proc.returncode == 0 else 'FAILED'}"
                  f"{', ' + regs[0] + ' registers' if regs else ''}")
            if proc.returncode:
                print(proc.stderr[-2000:])
                bad += 1
    print("dry run: " + ("ok" if not bad else f"{bad} problem(s)"))
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernels", default=KERNELS, help=f"names in benchmarks/gpu (default {KERNELS})")
    ap.add_argument("--iterations", type=int, default=7,
                    help="Kernel Tuner's timed launches per configuration, and polytune's timed rounds")
    ap.add_argument("--random-fraction", type=float, default=0.1, help="random_sample's fraction of the space")
    ap.add_argument("--ils-fevals", type=int, default=0,
                    help="greedy_ils's max_fevals (default: the shapes polytune's hill climbing measured)")
    ap.add_argument("--seed", type=int, default=1, help="random and numpy seed before each Kernel Tuner search")
    ap.add_argument("--json", help="write the results here (after every kernel)")
    ap.add_argument("--from-json", nargs="+", metavar="FILE", help="print the table of earlier runs' --json files")
    ap.add_argument("--dry-run", action="store_true", help="no GPU: build and check what Kernel Tuner would get")
    ap.add_argument("--nvcc", default="nvcc", help="compiler of --dry-run's check")
    args = ap.parse_args()
    if args.from_json:
        rows = read_rows(args.from_json)
        print(table(rows))
        return 0
    names = [k for k in args.kernels.split(",") if k]
    unknown = [k for k in names if k not in SIZES]
    if unknown:
        ap.error(f"unknown kernel(s) {', '.join(unknown)} (choose from {', '.join(SIZES)})")
    if args.dry_run:
        return dry_run(names, args.nvcc)
    # Every configuration compiled afresh: cupy's on-disk cache would serve later searches (and runs) instead.
    os.environ["CUPY_CACHE_IN_MEMORY"] = "1"
    print(table(run_rows(names, run_kernel, args)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
