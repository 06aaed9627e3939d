"""`polytune tune`: hill climbing (and the baselines) over the parameters a target exposes for a program.

The tuner knows no target by name: it asks a ``Target`` (``polytune.targets``) for the search space, the
seed, the variant of a configuration and the runner that measures variants.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import sys
import time
from dataclasses import dataclass, field

from .measure.c import BuildConfig
from .measure.cache import MeasurementCache, default_cache_path, machine_id, workload_key
from .measure.measurement import Measurement, to_record
from .measure.runner import Memo
from .pipeline import OptimizeOptions, Program, analyze
from .search import Budget, EvalRecord, SearchOptions, SearchResult, SearchSpace, Step, run_search
from .targets import get_target

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
    target: str = "c"  # a name of polytune.targets: what is tuned (tile sizes, block shape, launch configuration)
    schedule: str = "pluto"  # the C target's schedule: "pluto", "outer", or "auto" (the faster seed's)
    unroll_jam: int = OptimizeOptions.unroll_jam  # the C target's unroll-and-jam factor (0: none)


def _ratio(a: Measurement | None, b: Measurement | None) -> float | None:
    """a's time over b's; none where either failed or b measured no time at all (below the clock's resolution)."""
    return a.value / b.value if a is not None and b is not None and a.ok and b.ok and b.value > 0 else None


@dataclass(frozen=True, eq=False)
class TuneReport:
    """What a tuning run did, typed; ``to_json`` is its JSON form (``--report``, ``python -m polytune.report``)."""

    file: str
    machine: str
    target: str
    compiler: str
    threads: int | str | None
    strategy: str
    fit: str
    degree: int
    shortest_hop: bool
    alpha: float | None
    space: SearchSpace
    original: Measurement
    seed: Measurement | None
    best: Measurement | None
    evaluations: tuple[EvalRecord, ...]
    trajectory: tuple[Step, ...]
    stop_reason: str
    evals: int
    search_time: float
    target_info: dict = field(default_factory=dict)  # the entries its target adds (Target.report)
    loops: tuple[str, ...] = ()  # per parameter, the loop it belongs to (i, j, 2t+i) or its name
    warnings: tuple[str, ...] = ()  # one line each (noisy timings)
    schedule_choice: dict | None = None  # --schedule auto: the seeds measured and the one chosen

    @property
    def speedup_over_seed(self) -> float | None:
        return _ratio(self.seed, self.best)

    @property
    def speedup_over_original(self) -> float | None:
        return _ratio(self.original, self.best)

    def to_json(self) -> dict:
        out = {
            "file": self.file, "machine": self.machine, "target": self.target, "compiler": self.compiler,
            "threads": self.threads, "strategy": self.strategy, "fit": self.fit, "degree": self.degree,
            "shortest_hop": self.shortest_hop, "alpha": self.alpha,
            "space": [{"name": p.name, "values": list(p.values)} | ({"loop": lp} if lp != p.name else {})
                      for p, lp in zip(self.space.params, self.loops or self.space.names)],
            "original": _record(self.original),
            "seed": _record(self.seed),
            "best": _record(self.best),
            "speedup_over_seed": self.speedup_over_seed,
            "speedup_over_original": self.speedup_over_original,
            "evaluations": [dict(to_record(r.measurement), phase=r.phase, iteration=r.iteration, elapsed=r.elapsed)
                            for r in self.evaluations],
            "trajectory": [{"iteration": s.iteration, "config": list(s.config), "median": s.measurement.value,
                            "phase": s.phase, "evals": s.evals} for s in self.trajectory],
            "stop_reason": self.stop_reason,
            "evals": self.evals,
            "search_time": self.search_time,
        }
        if self.warnings:
            out["warnings"] = list(self.warnings)
        out.update(self.target_info)
        if self.schedule_choice is not None:
            out["schedule_choice"] = self.schedule_choice
        return out


def _record(m: Measurement | None) -> dict | None:
    return None if m is None else to_record(m)


@dataclass(frozen=True, eq=False)
class TuneResult:
    program: Program
    space: SearchSpace
    search: SearchResult
    original: Measurement
    best_text: str | None
    report: TuneReport

    @property
    def best_config(self) -> tuple[int, ...] | None:
        return self.search.best_config


def make_target(program: Program, tune_opts: TuneOptions, build: BuildConfig | None = None):
    """The target of *tune_opts* for *program*, with the options every variant starts from."""
    base = OptimizeOptions(parallel=tune_opts.parallel, target=tune_opts.target, schedule=tune_opts.schedule,
                           unroll_jam=tune_opts.unroll_jam)
    return get_target(tune_opts.target)(program, base, build, tune_opts.domain_cap)


def tune(path: str, tune_opts: TuneOptions = TuneOptions(), build: BuildConfig = BuildConfig(),
         progress=None) -> TuneResult:
    """Tune the parameters of *path*'s target; every candidate is verified against the original program."""
    program = analyze(path, build.includes, build.defines)
    load = _load1()
    schedule_choice = runner = original = bound = None
    if tune_opts.schedule == "auto":
        chosen, schedule_choice, runner, original, bound = get_target(tune_opts.target).choose_schedule(
            program, build, tune_opts.parallel, tune_opts.unroll_jam)
        tune_opts = dataclasses.replace(tune_opts, schedule=chosen)
    target = make_target(program, tune_opts, build)
    space = target.space(tune_opts.domains)
    seed = target.seed(space, tune_opts.seed)
    if runner is None:
        runner = target.runner()
    memo = Memo(runner)
    cache = MeasurementCache(tune_opts.cache, workload_key(program, build, target.opts)) if tune_opts.cache else None
    launch_choice = None
    t0 = time.perf_counter()
    try:
        if original is None:
            original = runner.reference()
        noisy = noise_warning(original, load, os.cpu_count() or 1)
        if noisy and hasattr(progress, "note"):
            progress.note(noisy)
        if hasattr(progress, "label"):
            progress.label(target.labels(space))

        def evaluate(config) -> Measurement:
            nonlocal bound
            config = tuple(int(c) for c in config)
            m = cache.get(config) if cache is not None else None
            if m is None:
                m = memo.measure(target.variant(space.names, config), bound)
                if cache is not None:
                    cache.put(m)
            if m.ok and m.same_as is None and (bound is None or m.value < bound):
                bound = m.value  # the best time so far: the runner's pruning bound
            return m

        options = SearchOptions(degree=tune_opts.degree, fit=tune_opts.fit, alpha=tune_opts.alpha,
                                shortest_hop=tune_opts.shortest_hop, eps=tune_opts.eps,
                                samples=tune_opts.samples, rng_seed=tune_opts.rng_seed)
        budget = Budget(max_evals=tune_opts.max_evals, time_limit=tune_opts.time_limit,
                        max_iterations=tune_opts.max_iterations)
        if tune_opts.seed == "pluto" and tune_opts.strategy in ("hill", "coordesc"):
            seed, launch_choice = target.launch_seed(runner, space, evaluate, seed)
        result = run_search(space, evaluate, tune_opts.strategy, seed, options, budget, progress)
    finally:
        runner.close()
        if cache is not None:
            cache.close()
    search_time = time.perf_counter() - t0
    best_text = None
    if result.best is not None:
        best_text = target.variant(space.names, result.best.config).text
    target.finish(runner, result.best, space.names)
    report = TuneReport(
        file=path, machine=machine_id(), target=tune_opts.target, compiler=target.compiler(),
        threads=build.threads if build.threads is not None else os.environ.get("OMP_NUM_THREADS"),
        strategy=tune_opts.strategy, fit=tune_opts.fit, degree=tune_opts.degree,
        shortest_hop=tune_opts.shortest_hop, alpha=tune_opts.alpha, space=space, original=original,
        seed=result.seed, best=result.best, evaluations=tuple(result.evaluations),
        trajectory=tuple(result.trajectory), stop_reason=result.stop_reason.value, evals=result.evals,
        search_time=search_time, target_info=target.report(runner, launch_choice), loops=target.labels(space),
        warnings=(noisy,) if noisy else (),
        schedule_choice=schedule_choice)
    return TuneResult(program, space, result, original, best_text, report)


# The legend printed above the progress lines.
LEGEND = ("[eval] phase  configuration (each tile size named by its loop)  time or why it has none  best so far\n"
          "  pruned: its first run was over 2x slower than the best so far, so it was not run again; "
          "wrong_answer: its results differ from the original's\n")


def _load1() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:  # pragma: no cover
        return None


def noise_warning(original: Measurement, load: float | None, cores: int, spread: float = 0.25) -> str | None:
    """One line when timings are too noisy to trust: the original's repeated runs spread more than *spread*
    of their median (max - min), or the load average at the start was above the number of cores."""
    why = []
    times = [t for t in original.times if t > 0]
    if len(times) >= 2:
        med = sorted(times)[len(times) // 2]
        rel = (max(times) - min(times)) / med if med > 0 else 0.0
        if rel > spread:
            why.append(f"the original's {len(times)} runs spread {100 * rel:.0f}% of their median")
    if load is not None and load > cores:
        why.append(f"load average {load:.1f} on {cores} cores")
    if not why:
        return None
    return (f"polytune: warning: timings are noisy ({'; '.join(why)}): speedups may be wrong; use --runs 5 or "
            "more, or a quieter machine")


def describe(config, labels: tuple[str, ...] | None) -> str:
    """A configuration with each value named by its loop: i=32 j=64 k=16 (the plain tuple without labels)."""
    if not labels or len(labels) != len(config):
        return str(tuple(config))
    return " ".join(f"{lp}={v}" for lp, v in zip(labels, config))


class ProgressPrinter:
    """A live progress line per evaluation: candidate (values named by their loops), its time, best so far,
    evaluations, elapsed. tune() gives it the loop names (label) and warnings (note)."""

    def __init__(self, stream=sys.stderr):
        self.stream = stream
        self.labels: tuple[str, ...] | None = None
        self.best: tuple[float, tuple | None] = (math.inf, None)
        self.started = False

    def label(self, labels: tuple[str, ...]) -> None:
        self.labels = tuple(labels)

    def note(self, line: str) -> None:
        self.stream.write(line + "\n")
        self.stream.flush()

    def __call__(self, rec) -> None:
        m = rec.measurement
        if not self.started:
            self.stream.write(LEGEND)
            self.started = True
        if m.ok and m.value < self.best[0]:
            self.best = (m.value, m.config)
        what = f"{m.value:.4f} s" if m.ok else f"{m.error.value}"
        if m.cached:
            what += " (cached)"
        b = f"{self.best[0]:.4f} s {describe(self.best[1], self.labels)}" if self.best[1] is not None else "-"
        width = max(24, len(describe(m.config, self.labels)))
        self.stream.write(f"[{rec.index:3d}] {rec.phase:6s} {describe(m.config, self.labels):{width}s} {what:18s} "
                          f"best {b}  evals {rec.index}  {rec.elapsed:.1f} s\n")
        self.stream.flush()


def progress_printer(stream=sys.stderr) -> ProgressPrinter:
    return ProgressPrinter(stream)


def _median(m: Measurement | None) -> float | None:
    return m.value if m is not None and math.isfinite(m.value) else None


def summary(res: TuneResult) -> str:
    r = res.report
    orig = _median(r.original)
    lines = [f"original: {orig:.4f} s" if orig else "original: not timed (the reference ran on the CPU)"]
    if r.schedule_choice:
        seeds = ", ".join(f"{k} {v['median']:.4f} s" if v and v["median"] else f"{k} failed"
                          for k, v in r.schedule_choice["seeds"].items())
        lines.append(f"schedule: {r.schedule_choice['chosen']} (tile-32 seeds: {seeds})")
    if r.seed:
        s, med = r.seed, _median(r.seed)
        lines.append(f"seed {describe(s.config, r.loops)}: "
                     + (f"{med:.4f} s" if med else s.error.value if s.error else "-"))
    if r.best:
        lines.append(f"best {describe(r.best.config, r.loops)}: {_median(r.best):.4f} s")
        if r.speedup_over_seed:
            lines.append(f"speedup over seed: {r.speedup_over_seed:.2f}x")
        if r.speedup_over_original:
            lines.append(f"speedup over original: {r.speedup_over_original:.2f}x")
    else:
        lines.append("no configuration produced a verified result")
    lines.append(f"evaluations: {r.evals}, search time: {r.search_time:.1f} s, stopped: {r.stop_reason}")
    lines += list(r.warnings)
    return "\n".join(lines)


def write_report(path: str, report: TuneReport) -> None:
    """The report as JSON, written whole or not at all (the one moment it stops being typed)."""
    from .pipeline import write_atomically
    write_atomically(path, json.dumps(report.to_json(), indent=2) + "\n")
