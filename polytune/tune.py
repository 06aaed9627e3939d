"""`polytune tune`: hill climbing (and the baselines) over the tile sizes of the chosen schedule."""
from __future__ import annotations

import dataclasses
import glob
import json
import math
import os
import sys
import time
from dataclasses import dataclass, field

from .errors import UsageError
from .measure import BuildConfig, Harness, MeasurementCache, default_cache_path, machine_id, workload_key
from .measurement import Measurement
from .pipeline import OptimizeOptions, Program, analyze, generate
from .poly.schedule import DEFAULT_TILE, access_dims
from .search import (
    Budget,
    Parameter,
    SearchOptions,
    SearchResult,
    SearchSpace,
    parse_domain,
    pow2_domain,
    run_search,
)

SEEDS = ("pluto", "origin", "model")


@dataclass(frozen=True)
class TuneOptions:
    strategy: str = "hill"
    fit: str = "best"
    degree: int = 1
    shortest_hop: bool = False
    seed: str | tuple[int, ...] = "pluto"
    alpha: float | None = 0.05
    max_iterations: int = 100
    max_evals: int | None = None
    time_limit: float | None = None
    domains: tuple[str, ...] = ()  # one spec for all parameters, one per parameter, or NAME=SPEC
    samples: int | None = None
    eps: float = 1e-3
    rng_seed: int = 0
    cache: str | None = field(default_factory=default_cache_path)  # None: no persistent cache
    parallel: bool = True
    domain_cap: int = 512
    target: str = "c"  # "c": tile sizes of the C/OpenMP code; "cuda": the thread-block shape
    schedule: str = "pluto"  # the C target's schedule: "pluto", "outer", or "auto" (the faster seed's)
    unroll_jam: int = OptimizeOptions.unroll_jam  # the C target's unroll-and-jam factor (0: none)
    pure: tuple[str, ...] = ()  # functions without side effects (--pure)


@dataclass(frozen=True, eq=False)
class TuneResult:
    program: Program
    space: SearchSpace
    search: SearchResult
    original: Measurement
    best_text: str | None
    report: dict

    @property
    def best_config(self) -> tuple[int, ...] | None:
        return self.search.best_config


BLOCK_PARAMS = ("block_x", "block_y", "block_z")
TRITON_DOMAINS = {"BLOCK_X": (1, 1024), "BLOCK_Y": (1, 256), "BLOCK_Z": (1, 64), "BLOCK_M": (1, 256),
                  "BLOCK_R": (16, 4096), "BLOCK_K": (16, 256), "num_warps": (1, 16), "num_stages": (1, 4),
                  "FUSE": (0, 1)}
TRITON_LINEAR = ("num_stages", "FUSE")  # domains of consecutive integers (the others are powers of two)


def triton_params(texts) -> list[str]:
    """The launch parameters of Triton modules (one text, or the variants by FUSE value): the block sizes
    their launchers read (BLOCK_X/Y/Z of mapped dims, BLOCK_M rows of vector-reducing kernels), BLOCK_R
    where a reduction was vectorized, BLOCK_K where a contraction became tl.dot, num_warps, num_stages,
    and FUSE where the fused schedule gives other kernels."""
    texts = [texts] if isinstance(texts, str) else list(texts)
    text = "\n".join(texts)
    names = [n for n in ("BLOCK_X", "BLOCK_Y", "BLOCK_Z", "BLOCK_M") if f"cfg['{n}']" in text]
    names += [n for n in ("BLOCK_R", "BLOCK_K") if f"tl.arange(0, {n})" in text]
    return names + ["num_warps", "num_stages"] + (["FUSE"] if len(texts) > 1 else [])


def build_space(program: Program, tune: TuneOptions, opts: OptimizeOptions) -> SearchSpace:
    params: list[Parameter] = []
    if tune.target == "triton":
        from .pipeline import triton_variants
        for name in triton_params(triton_variants(program, opts).values()):
            lo, hi = TRITON_DOMAINS[name]
            values = tuple(range(lo, hi + 1)) if name in TRITON_LINEAR else parse_domain(f"{lo}:{hi}:pow2")
            params.append(Parameter(name, values))
    elif tune.target == "cuda":
        n = max((a.gpu.max_mapped for a in program.scops), default=0)
        if n == 0:
            raise UsageError("nothing to tune: no scop has a parallel loop to map to GPU threads", program.path)
        params = [Parameter(BLOCK_PARAMS[d], tuple(2 ** k for k in range(11 if d < 2 else 7))) for d in range(n)]
    else:
        for k, band in program.tunable_bands(opts.tile, opts.schedule):
            for m in range(band.members):
                name = f"s{k}b{band.index}t{m}"
                extent = band.extents[m] if m < len(band.extents) else None
                params.append(Parameter(name, pow2_domain(extent, tune.domain_cap)))
    if not params:
        raise UsageError("nothing to tune: no scop has a tilable band of two or more loops", program.path)
    specs = list(tune.domains)
    named = dict(s.split("=", 1) for s in specs if "=" in s)
    plain = [s for s in specs if "=" not in s]
    unknown = set(named) - {p.name for p in params}
    if unknown:
        raise UsageError(f"--domain names unknown parameter(s) {', '.join(sorted(unknown))} "
                         f"(parameters: {', '.join(p.name for p in params)})")
    if len(plain) not in (0, 1, len(params)):
        raise UsageError(f"give one --domain for all parameters or one per parameter ({len(params)})")
    out = []
    for i, p in enumerate(params):
        spec = named.get(p.name) or (plain[0] if len(plain) == 1 else plain[i] if plain else None)
        out.append(Parameter(p.name, parse_domain(spec)) if spec else p)
    return SearchSpace(tuple(out))


def cache_sizes() -> dict[int, int]:
    """Data/unified cache size per level (bytes) from sysfs; conservative defaults where unknown."""
    sizes: dict[int, int] = {}
    for d in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*"):
        try:
            level = int(open(os.path.join(d, "level")).read())
            kind = open(os.path.join(d, "type")).read().strip()
            text = open(os.path.join(d, "size")).read().strip()
        except (OSError, ValueError):
            continue
        if kind == "Instruction":
            continue
        mult = {"K": 1024, "M": 1024 * 1024}.get(text[-1], 1)
        sizes[level] = int(text.rstrip("KM")) * mult
    sizes.setdefault(1, 32 * 1024)
    sizes.setdefault(2, 512 * 1024)
    return sizes


def model_seed(program: Program, space: SearchSpace, opts: OptimizeOptions) -> tuple[int, ...]:
    """The largest power-of-two cube tile whose data footprint (8-byte elements) fits half the L2 cache."""
    budget = cache_sizes()[2] // 2
    seed: list[int] = []
    for k, band in program.tunable_bands(opts.tile, opts.schedule):
        dims = access_dims(program.scops[k].scop, band.statements)
        t = 1
        while t < 1024 and sum(8 * (2 * t) ** min(d, band.members) for d in dims.values()) <= budget:
            t *= 2
        for m in range(band.members):
            ext = band.extents[m] if m < len(band.extents) else None
            seed.append(min(t, 2 ** max(0, math.ceil(math.log2(ext)))) if ext else t)
    return tuple(seed)


def seed_config(program: Program, space: SearchSpace, tune: TuneOptions, opts: OptimizeOptions):
    n = len(space.params)
    if isinstance(tune.seed, tuple):
        if len(tune.seed) != n:
            raise UsageError(f"the seed needs {n} sizes, got {len(tune.seed)}")
        return tune.seed
    if tune.seed == "pluto" and tune.target == "triton":
        from .emit.triton import DEFAULT_CONFIG
        return tuple(DEFAULT_CONFIG[p.name] for p in space.params)
    if tune.seed == "pluto" and tune.target == "cuda":
        from .emit.cuda import default_block
        return default_block(n)
    if tune.seed == "pluto":
        return (DEFAULT_TILE,) * n
    if tune.seed == "origin":
        return (1,) * n
    if tune.seed == "model" and tune.target == "c":
        return model_seed(program, space, opts)
    raise UsageError(f"unknown seed '{tune.seed}' (pluto, origin, model, or sizes like 32,16,8)")


def _mjson(m: Measurement | None) -> dict | None:
    if m is None:
        return None
    return {"config": list(m.config), "times": list(m.times),
            "median": m.value if math.isfinite(m.value) else None,
            "error": m.error.value if m.error else None, "compile_time": m.compile_time,
            "detail": m.detail, "cached": m.cached, **({"extra": m.extra} if m.extra else {})}


def choose_schedule(program: Program, tune_opts: TuneOptions, build: BuildConfig):
    """`--schedule auto`: measure the Pluto-default seed (tile 32) of both C schedules, each verified against
    the original, and tune the faster one's tile sizes (its median; pluto when neither runs). Returns the
    options with that schedule, the choice for the report, and the harness with the original measured
    (the search goes on with both)."""
    if tune_opts.target != "c":
        raise UsageError("--schedule auto applies to the c target only")
    harness = Harness(program, build)
    seeds: dict[str, dict | None] = {}
    try:
        original = harness.measure_reference()
        for sched in ("pluto", "outer"):
            n = sum(b.members for _, b in program.tunable_bands(True, sched))
            opts = OptimizeOptions(tile_sizes=(DEFAULT_TILE,) * n, parallel=tune_opts.parallel, schedule=sched,
                                   unroll_jam=tune_opts.unroll_jam)
            seeds[sched] = _mjson(harness.measure((DEFAULT_TILE,) * n, opts))
    except BaseException:
        harness.close()
        raise
    ok = {s: m["median"] for s, m in seeds.items() if m and m["median"] is not None and m["error"] is None}
    chosen = min(ok, key=ok.get) if ok else "pluto"
    return (dataclasses.replace(tune_opts, schedule=chosen), {"chosen": chosen, "seeds": seeds}, harness,
            original)


def tune(path: str, tune_opts: TuneOptions = TuneOptions(), build: BuildConfig = BuildConfig(),
         progress=None) -> TuneResult:
    """Tune the tile sizes of *path*; every candidate is verified against the original program."""
    program = analyze(path, build.includes, build.defines, tune_opts.pure)
    schedule_choice = harness = original = None
    if tune_opts.schedule == "auto":
        tune_opts, schedule_choice, harness, original = choose_schedule(program, tune_opts, build)
    cuda = tune_opts.target == "cuda"
    triton = tune_opts.target == "triton"
    base = OptimizeOptions(parallel=tune_opts.parallel, target=tune_opts.target, schedule=tune_opts.schedule,
                           unroll_jam=tune_opts.unroll_jam)
    space = build_space(program, tune_opts, base)
    seed = seed_config(program, space, tune_opts, base)
    if triton:
        from .measure_triton import TritonHarness
        harness = TritonHarness(program, build, runs=build.runs)
    elif cuda:
        from .measure_cuda import CudaBuildConfig, CudaHarness
        if not isinstance(build, CudaBuildConfig):
            raise UsageError("the cuda target needs a CudaBuildConfig")  # pragma: no cover
        harness = CudaHarness(program, build)
    elif harness is None:
        harness = Harness(program, build)

    def options_for(config) -> OptimizeOptions:
        if triton:
            return OptimizeOptions(target="triton")
        if cuda:
            return OptimizeOptions(target="cuda", block=tuple(config))
        return OptimizeOptions(tile_sizes=tuple(config), parallel=tune_opts.parallel, schedule=tune_opts.schedule,
                               unroll_jam=tune_opts.unroll_jam)

    cache = MeasurementCache(tune_opts.cache, workload_key(program, build, base)) if tune_opts.cache else None
    launch_choice = None
    t0 = time.perf_counter()
    try:
        if original is None:
            original = harness.measure_reference()

        def evaluate(config) -> Measurement:
            config = tuple(int(c) for c in config)
            if cache is not None:
                hit = cache.get(config)
                if hit is not None:
                    if hit.ok and (harness.best_time is None or hit.value < harness.best_time):
                        harness.best_time = hit.value
                    return hit
            if triton:
                m = harness.measure(config, space.names)
            else:
                m = harness.measure(config) if cuda else harness.measure(config, options_for(config))
            if cache is not None:
                cache.put(m)
            return m

        options = SearchOptions(degree=tune_opts.degree, fit=tune_opts.fit, alpha=tune_opts.alpha,
                                shortest_hop=tune_opts.shortest_hop, eps=tune_opts.eps,
                                samples=tune_opts.samples, rng_seed=tune_opts.rng_seed)
        budget = Budget(max_evals=tune_opts.max_evals, time_limit=tune_opts.time_limit,
                        max_iterations=tune_opts.max_iterations)
        if triton and tune_opts.seed == "pluto" and tune_opts.strategy in ("hill", "coordesc"):
            seed, launch_choice = triton_seed(harness, space, evaluate, seed)
        result = run_search(space, evaluate, tune_opts.strategy, seed, options, budget, progress)
    finally:
        harness.close()
        if cache is not None:
            cache.close()
    search_time = time.perf_counter() - t0
    best_text = None
    if result.best is not None and triton:
        from .measure_triton import remember_choice
        from .pipeline import generate_triton
        best_text = generate_triton(program, base, dict(zip(space.names, result.best.config)))
        remember_choice(harness.key, dict(zip(space.names, result.best.config)))
    elif result.best is not None:
        best_text = generate(program, options_for(result.best.config)).text
    seed_m = result.seed

    def _ratio(a: Measurement | None, b: Measurement | None) -> float | None:
        """a's time over b's; none where either failed or b measured no time at all (below the clock's
        resolution)."""
        return a.value / b.value if a is not None and b is not None and a.ok and b.ok and b.value > 0 else None

    report = {
        "file": path,
        "machine": machine_id(),
        "target": tune_opts.target,
        "compiler": " ".join(build.compile_cmd("FILE.c", "EXE")),
        "threads": build.threads if build.threads is not None else os.environ.get("OMP_NUM_THREADS"),
        "strategy": tune_opts.strategy, "fit": tune_opts.fit, "degree": tune_opts.degree,
        "shortest_hop": tune_opts.shortest_hop, "alpha": tune_opts.alpha,
        "space": [{"name": p.name, "values": list(p.values)} for p in space.params],
        "original": _mjson(original),
        "seed": _mjson(seed_m),
        "best": _mjson(result.best),
        "speedup_over_seed": _ratio(seed_m, result.best),
        "speedup_over_original": _ratio(original, result.best),
        "evaluations": [dict(_mjson(r.measurement), phase=r.phase, iteration=r.iteration,
                             elapsed=r.elapsed) for r in result.evaluations],
        "trajectory": [{"iteration": s.iteration, "config": list(s.config), "median": s.measurement.value,
                        "phase": s.phase, "evals": s.evals} for s in result.trajectory],
        "stop_reason": result.stop_reason.value,
        "evals": result.evals,
        "search_time": search_time,
    }
    if tune_opts.target == "c":
        report["schedule"] = tune_opts.schedule
        if schedule_choice is not None:
            report["schedule_choice"] = schedule_choice
    if triton:
        report["triton"] = {"launch_choice": launch_choice,
                            "kernels": harness.resources, "device": harness.device}
    if cuda:
        report["gpu"] = {"registers": harness.registers, "spill_bytes": harness.spills,
                         "compile_time": harness.compile_time, "compile_error": harness.compile_error or None,
                         "kernels": {k: v for k, v in harness.resources.items()}}
    return TuneResult(program, space, result, original, best_text, report)


def triton_seed(harness, space: SearchSpace, evaluate, default):
    """Algorithm 9.1: the remembered choice for this kernel source, else the best of a small candidate
    set derived from the kernel's shape (measured: compiled, spills rejected, warmed up, repeated)."""
    from .measure_triton import cached_choice, candidates, remember_choice
    names = space.names
    hit = cached_choice(harness.key)
    if hit and set(hit) == set(names):
        return tuple(hit[n] for n in names), {"source": "cache", "config": hit}
    best, best_m, tried = default, None, []
    for cand in candidates(names):
        config = tuple(cand.get(n, default[i]) for i, n in enumerate(names))
        m = evaluate(config)
        tried.append(_mjson(m))
        if m.ok and (best_m is None or m.value < best_m.value):
            best, best_m = config, m
    if best_m is not None:
        remember_choice(harness.key, dict(zip(names, best)))
    return best, {"source": "candidates", "config": dict(zip(names, best)), "candidates": tried}


def progress_printer(stream=sys.stderr):
    """A live progress line per evaluation: candidate, its time, best so far, evaluations, elapsed."""
    best = [math.inf, None]

    def on_eval(rec) -> None:
        m = rec.measurement
        if m.ok and m.value < best[0]:
            best[0], best[1] = m.value, m.config
        what = f"{m.value:.4f} s" if m.ok else f"{m.error.value}" + (" (cached)" if m.cached else "")
        if m.ok and m.cached:
            what += " (cached)"
        b = f"{best[0]:.4f} s {tuple(best[1])}" if best[1] is not None else "-"
        stream.write(f"[{rec.index:3d}] {rec.phase:6s} {tuple(m.config)!s:24s} {what:18s} "
                     f"best {b}  evals {rec.index}  {rec.elapsed:.1f} s\n")
        stream.flush()

    return on_eval


def summary(res: TuneResult) -> str:
    r = res.report
    orig = r["original"]["median"]
    lines = [f"original: {orig:.4f} s" if orig else "original: not timed (the reference ran on the CPU)"]
    if r.get("schedule_choice"):
        seeds = ", ".join(f"{k} {v['median']:.4f} s" if v and v["median"] else f"{k} failed"
                          for k, v in r["schedule_choice"]["seeds"].items())
        lines.append(f"schedule: {r['schedule_choice']['chosen']} (tile-32 seeds: {seeds})")
    if r["seed"]:
        s = r["seed"]
        lines.append(f"seed {tuple(s['config'])}: " + (f"{s['median']:.4f} s" if s["median"] else s["error"]))
    if r["best"]:
        b = r["best"]
        lines.append(f"best {tuple(b['config'])}: {b['median']:.4f} s")
        if r["speedup_over_seed"]:
            lines.append(f"speedup over seed: {r['speedup_over_seed']:.2f}x")
        if r["speedup_over_original"]:
            lines.append(f"speedup over original: {r['speedup_over_original']:.2f}x")
    else:
        lines.append("no configuration produced a verified result")
    lines.append(f"evaluations: {r['evals']}, search time: {r['search_time']:.1f} s, "
                 f"stopped: {r['stop_reason']}")
    return "\n".join(lines)


def write_report(path: str, report: dict) -> None:
    from .pipeline import write_atomically
    write_atomically(path, json.dumps(report, indent=2) + "\n")
