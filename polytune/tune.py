"""`polytune tune`: hill climbing (and the baselines) over the parameters a target exposes for a program.

The tuner knows no target by name: it asks a ``Target`` (``polytune.targets``) for the search space, the
seed, the variant of a configuration and the runner that measures variants.
"""
from __future__ import annotations

import dataclasses
import importlib
import json
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol

from .errors import UnsupportedError, UsageError
from .measure.c import BuildConfig
from .measure.cache import MeasurementCache, default_cache_path, machine_id, workload_key
from .measure.measurement import Config, Measurement, to_record
from .measure.measurer import Bound, InProcess, Measurer, Slots
from .measure.pooled import PoolSlots
from .measure.runner import Runner
from .pipeline import OptimizeOptions, Program, analyze, slow_regions
from .poly.choice import coordinates
from .poly.contraction import Blocks
from .poly.islutil import ISL_LOCK
from .search import (
    Budget,
    EvalRecord,
    SearchInterrupted,
    SearchOptions,
    SearchResult,
    SearchSpace,
    Step,
    run_search,
)
from .search.budget import StopReason
from .search.phases import LOCAL, PhasedResult, move_test, phased_search
from .targets import get_target
from .targets.base import Target
from .timelimit import DEFAULT_TIME_LIMIT
from .units import fmt_ratio, fmt_time
from .workers.base import WorkerPool

SEEDS = ("pluto", "origin", "model")


@dataclass(frozen=True)
class WorkerOptions:
    """Where candidates are compiled and timed: ``jobs`` candidates compiled at once (None: the cores, for a
    target whose pool is its default; 1: all in the tuning process), one timing at a time per timer; ``ray``: a
    Ray cluster's address ("auto": the local one, or a private instance)."""

    jobs: int | None = None
    ray: str | None = None


@dataclass(frozen=True)
class ConfirmOptions:
    """The re-run after the search: the best, the seed and optimize's default run in turn at most ``runs`` times,
    fewer where the verdict is clear after 3 (Target.confirm_best; 0: not re-measured, the best is kept), with
    the -D set ``defines`` (None: the tuning's; e.g. the user's problem size)."""

    runs: int = 5
    defines: tuple[str, ...] | None = None


class _Keep:
    """A flat keyword not given: the group's value stays."""

    def __repr__(self) -> str:
        return "KEEP"


KEEP = _Keep()


@dataclass(frozen=True, init=False)
class TuneOptions:
    """What a tune does: the target and how its variants are made, where the search starts and in what space,
    and four groups: ``search`` (the strategy's knobs: ``search.SearchOptions``, alpha 0.05 by default),
    ``budget`` (``search.Budget``), ``workers`` (``WorkerOptions``) and ``confirm`` (``ConfirmOptions``).

    Built with flat keywords, as Kernel Tuner's ``tune_kernel(strategy=..., ...)`` and TVM's ``tune_tir(...,
    max_trials_global=...)`` are called: ``TuneOptions(strategy="hill", max_evals=30, jobs=2)``; each group's
    keyword (``fit``, ``degree``, ``shortest_hop``, ``sweep``, ``again``, ``alpha``, ``samples``, ``eps``,
    ``rng_seed``; ``max_iterations``, ``max_evals``, ``time_limit``; ``jobs``, ``ray``; ``confirm_runs``,
    ``confirm_defines``) goes to its group and reads back as an attribute of the same name. A group may also be
    given whole (``workers=WorkerOptions(jobs=2)``, one object shared by several tunes); a flat keyword given
    beside it changes that field of it (as ``dataclasses.replace(opts, jobs=2)`` does)."""

    strategy: str = "hill"
    seed: str | tuple[int, ...] = "pluto"
    domains: tuple[str, ...] = ()  # one spec for all parameters, one per parameter, or NAME=SPEC
    space: str | None = None  # the target's search space (None: its default; c: "tiles" or "schedule")
    cache: str | None = None  # the persistent measurement cache (default: default_cache_path(); None: none)
    parallel: bool = True
    domain_cap: int = 512
    target: str = "c"  # a name of polytune.targets: what is tuned (tile sizes, block shape, launch configuration)
    schedule: str = "pluto"  # the C target's schedule: "pluto", "outer", or "auto" (the faster seed's)
    unroll_jam: int = OptimizeOptions.unroll_jam  # the C target's unroll-and-jam factor (0: none)
    pure: tuple[str, ...] = ()  # functions without side effects (--pure)
    auto: bool | None = None  # region detection: True (--auto), None where the file has no '#pragma scop'
    # a region whose analysis (optimize's default, in a worker) does not end within this many seconds is left
    # out of the tuning, with a note (0: no limit); pipeline.slow_regions
    analysis_time_limit: float = DEFAULT_TIME_LIMIT
    allow_tf32: bool = False  # float32 contractions on TF32 tensor cores, where the target has them (OptimizeOptions)
    reassociate: bool = False  # the C target's contractions add a sum's products one at a time (Blocks.reassociate)
    search: SearchOptions = SearchOptions(alpha=0.05)
    budget: Budget = Budget()
    workers: WorkerOptions = WorkerOptions()
    confirm: ConfirmOptions = ConfirmOptions()

    def __init__(self, strategy: str = "hill", *, seed: str | tuple[int, ...] = "pluto", domains: tuple[str, ...] = (),
                 space: str | None = None, cache: str | None | _Keep = KEEP, parallel: bool = True,
                 domain_cap: int = 512, target: str = "c", schedule: str = "pluto",
                 unroll_jam: int = OptimizeOptions.unroll_jam, pure: tuple[str, ...] = (), auto: bool | None = None,
                 analysis_time_limit: float = DEFAULT_TIME_LIMIT, allow_tf32: bool = False, reassociate: bool = False,
                 search: SearchOptions = SearchOptions(alpha=0.05), budget: Budget = Budget(),
                 workers: WorkerOptions = WorkerOptions(), confirm: ConfirmOptions = ConfirmOptions(),
                 fit: str | _Keep = KEEP, degree: int | _Keep = KEEP, shortest_hop: bool | _Keep = KEEP,
                 sweep: bool | _Keep = KEEP, again: bool | _Keep = KEEP, alpha: float | None | _Keep = KEEP,
                 samples: int | None | _Keep = KEEP, eps: float | _Keep = KEEP, rng_seed: int | _Keep = KEEP,
                 max_iterations: int | _Keep = KEEP, max_evals: int | None | _Keep = KEEP,
                 time_limit: float | None | _Keep = KEEP, jobs: int | None | _Keep = KEEP,
                 ray: str | None | _Keep = KEEP, confirm_runs: int | _Keep = KEEP,
                 confirm_defines: tuple[str, ...] | None | _Keep = KEEP):
        own = {"strategy": strategy, "seed": seed, "domains": domains, "space": space,
               "cache": default_cache_path() if isinstance(cache, _Keep) else cache, "parallel": parallel,
               "domain_cap": domain_cap, "target": target, "schedule": schedule, "unroll_jam": unroll_jam,
               "pure": pure, "auto": auto, "analysis_time_limit": analysis_time_limit, "allow_tf32": allow_tf32,
               "reassociate": reassociate,
               "search": _routed(search, fit=fit, degree=degree, shortest_hop=shortest_hop, sweep=sweep,
                                 again=again, alpha=alpha, samples=samples, eps=eps, rng_seed=rng_seed),
               "budget": _routed(budget, max_iterations=max_iterations, max_evals=max_evals, time_limit=time_limit),
               "workers": _routed(workers, jobs=jobs, ray=ray),
               "confirm": _routed(confirm, runs=confirm_runs, defines=confirm_defines)}
        for name, value in own.items():
            object.__setattr__(self, name, value)

    # the groups' fields under their flat names (the keywords above), read-only
    fit = property(lambda self: self.search.fit)
    degree = property(lambda self: self.search.degree)
    shortest_hop = property(lambda self: self.search.shortest_hop)
    sweep = property(lambda self: self.search.sweep)
    again = property(lambda self: self.search.again)
    alpha = property(lambda self: self.search.alpha)
    samples = property(lambda self: self.search.samples)
    eps = property(lambda self: self.search.eps)
    rng_seed = property(lambda self: self.search.rng_seed)
    max_iterations = property(lambda self: self.budget.max_iterations)
    max_evals = property(lambda self: self.budget.max_evals)
    time_limit = property(lambda self: self.budget.time_limit)
    jobs = property(lambda self: self.workers.jobs)
    ray = property(lambda self: self.workers.ray)
    confirm_runs = property(lambda self: self.confirm.runs)
    confirm_defines = property(lambda self: self.confirm.defines)


def _routed(group, **flat):
    """*group* with the flat keywords that were given (not KEEP) as its fields."""
    given = {name: value for name, value in flat.items() if not isinstance(value, _Keep)}
    return dataclasses.replace(group, **given) if given else group


def _ratio(a: Measurement | None, b: Measurement | None) -> float | None:
    """a's time over b's; none where either failed or b measured no time at all (below the clock's resolution)."""
    return a.value / b.value if a is not None and b is not None and a.ok and b.ok and b.value > 0 else None


@dataclass(frozen=True, eq=False)
class TuneReport:
    """What a tuning run did, typed; ``to_json`` is its JSON form (``--report``, ``python -m polytune.study.report``).
    """

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
    workers: dict | None = None  # --jobs / --ray: the pool, its workers (each evaluation names its own)
    best_build: dict | None = None  # what optimize needs for the best variant (tile sizes, --choice)
    program_gain: dict | None = None  # the best's gain re-measured in the user's program (Target.confirm)
    starts: dict | None = None  # the schedule space: each start's measurement (seed, default, ...), by label
    climbed_from: str | None = None  # the start the last phase of the search climbed from (search/phases.py)
    search_best: Measurement | None = None  # the search's best, where the re-measure kept another (program_gain)
    spans: dict | None = None  # seconds of search_time's parts: original, workers (overlapped with it where both
    # are), search, confirm, close
    sweep: bool = False  # hill: coordinate sweeps after converging
    threshold: float = 0.0  # the relative margin of the search's improvement test (coordesc: --eps)
    omp_env: dict = field(default_factory=dict)  # the OpenMP variables the runs saw (omp_environment)

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
            "shortest_hop": self.shortest_hop, "sweep": self.sweep, "alpha": self.alpha,
            "space": [{"name": p.name, "values": list(p.values)} | ({"loop": lp} if lp != p.name else {})
                      | ({"categories": list(p.categories)} if p.is_categorical else {})
                      for p, lp in zip(self.space.params, self.loops or self.space.names)],
            "original": _record(self.original),
            "seed": _record(self.seed),
            "best": _record(self.best),
            "speedup_over_seed": self.speedup_over_seed,
            "speedup_over_original": self.speedup_over_original,
            "evaluations": [dict(to_record(r.measurement), phase=r.phase, iteration=r.iteration, elapsed=r.elapsed)
                            | ({"again": True} if r.again else {}) | self._named(r.measurement.config)
                            for r in self.evaluations],
            "trajectory": [{"iteration": s.iteration, "config": list(s.config), "median": s.measurement.value,
                            "phase": s.phase, "evals": s.evals} | self._named(s.config) for s in self.trajectory],
            "stop_reason": self.stop_reason,
            "evals": self.evals,
            "search_time": self.search_time,
        }
        if self.warnings:
            out["warnings"] = list(self.warnings)
        if self.omp_env:
            out["omp_env"] = dict(self.omp_env)
        if self.spans:
            out["spans"] = {k: round(v, 3) if isinstance(v, float) else v for k, v in self.spans.items()}
        out.update(self.target_info)
        if self.schedule_choice is not None:
            out["schedule_choice"] = self.schedule_choice
        if self.workers is not None:
            out["workers"] = self.workers
        if self.best_build is not None:
            out["best_build"] = self.best_build
        if self.program_gain is not None:
            out["program_gain"] = self.program_gain
        if self.starts is not None:
            out["starts"] = {k: _record(m) | self._named(m.config) for k, m in self.starts.items()}
            out["climbed_from"] = self.climbed_from
            default = self.starts.get("default")
            out["speedup_over_default"] = _ratio(default, self.best)
        if self.search_best is not None:
            out["search_best"] = _record(self.search_best) | self._named(self.search_best.config)
        return out

    def _named(self, config) -> dict:
        """A configuration with its categories by name, where the space has categorical parameters."""
        if not any(p.is_categorical for p in self.space.params) or len(config) != len(self.space.params):
            return {}
        return {"named": self.space.decode(config)}


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
                           unroll_jam=tune_opts.unroll_jam, allow_tf32=tune_opts.allow_tf32,
                           blocks=Blocks(reassociate=tune_opts.reassociate))
    return get_target(tune_opts.target)(program, base, build, tune_opts.domain_cap)


@dataclass(frozen=True)
class SharedWorkers:
    """Workers opened once for several tunes (``polytune bench --tunes-at-once``, each tune a thread of one
    process): ``open_workers``' pool, whether its timers are other processes, the candidates each tune keeps in
    flight, and what the reports say of it. The tunes neither open nor close it."""

    pool: WorkerPool
    remote: bool
    in_flight: int
    info: dict


def open_shared_workers(tune_opts: TuneOptions, build: BuildConfig) -> tuple[SharedWorkers, Callable[[], None]]:
    """The workers of ``--jobs`` / ``--ray`` for several tunes at once, and how to close them."""
    pool, remote, in_flight, close, info = open_workers(tune_opts, build)
    return SharedWorkers(pool, remote, in_flight, dict(info, shared=True)), close


def tune(path: str, tune_opts: TuneOptions = TuneOptions(), build: BuildConfig = BuildConfig(),
         progress=None, shared: SharedWorkers | None = None) -> TuneResult:
    """Tune the parameters of *path*'s target; every candidate is verified against the original program.

    With ``jobs`` above 1 or ``ray``, candidates are compiled in parallel on workers (``polytune.workers``)
    while one timing runs at a time per timer; the search's path is the same as with one job when the
    measurements are (``polytune.search.pool``). *shared*: workers that other tunes in this process use at
    the same time (their candidates meet the same timers); this tune's isl work then holds ``ISL_LOCK``.

    The stages: ``_prepare`` (analysis, target, space, seed) -> ``open_measurement`` (the runner, the cache,
    the original's measurement, the workers, the ``Measurer``; all closed on every exit) -> ``_search`` ->
    ``_confirm`` (the best re-measured in the program) -> ``_report``."""
    if not tune_opts.analysis_time_limit >= 0:
        raise UsageError("the analysis time limit must be 0 (none) or a positive number of seconds")
    progress = as_progress(progress)
    prep = _prepare(path, tune_opts, build, progress)
    with open_measurement(prep, build, progress, shared) as session:
        found = _search(prep, session, progress)
        if not found.interrupted:
            found = _confirm(prep, session, found, progress)
    return _report(prep, session, found, build, time.perf_counter() - session.started)


@dataclass(frozen=True)
class _Prepared:
    """What tune's first stage gives: the program analyzed, the options (``--schedule auto`` resolved), the
    target, its space, seed and loop names; from ``--schedule auto`` also the runner with the original measured,
    the choice for the report and the first pruning bound."""

    path: str
    opts: TuneOptions
    program: Program
    target: Target
    space: SearchSpace
    seed: Config
    labels: tuple[str, ...]
    notes: tuple[str, ...]  # the regions left out (their analysis ran past the time limit)
    load: float | None  # the load average when the tune began
    schedule_choice: dict | None = None
    runner: Runner | None = None
    original: Measurement | None = None
    bound: float | None = None


def _prepare(path: str, opts: TuneOptions, build: BuildConfig, progress: TuneProgress) -> _Prepared:
    """Stage 1: the file analyzed (regions whose analysis does not end in time left out, with a note),
    ``--schedule auto``'s choice measured, the target asked for its space, seed and loop names."""
    skip, notes = slow_regions(path, build.includes, build.defines, opts.pure, opts.analysis_time_limit, opts.auto)
    for line in notes:
        progress.note(line)
    with ISL_LOCK:
        program = analyze(path, build.includes, build.defines, opts.pure, opts.auto, skip=skip)
        if skip and not program.scops:
            raise UnsupportedError(f"no region left to tune: the analysis did not end within the time limit "
                                   f"({opts.analysis_time_limit:g} s; --analysis-time-limit)", path, skip[0])
        load = _load1()
        auto: dict = {}
        if opts.schedule == "auto":
            chosen, choice, runner, original, first = get_target(opts.target).choose_schedule(
                program, build, opts.parallel, opts.unroll_jam)
            auto = {"schedule_choice": choice, "runner": runner, "original": original, "bound": first}
            opts = dataclasses.replace(opts, schedule=chosen)
        try:
            target = make_target(program, opts, build)
            space = target.space(opts.domains, opts.space)
            seed = target.seed(space, opts.seed)
            labels = target.labels(space)
        except BaseException:
            if auto:
                auto["runner"].close()
            raise
    return _Prepared(path, opts, program, target, space, seed, labels, notes, load, **auto)


@dataclass
class MeasureSession:
    """What the stages after ``open_measurement`` share: the runner (its original measured), the cache, the
    workers (None: candidates measured in this process), the ``Measurer`` the search measures through, and the
    seconds each part took (``spans``, the report's)."""

    runner: Runner
    original: Measurement | None = None
    cache: MeasurementCache | None = None
    workers: WorkerPool | None = None
    remote: bool = False  # the workers' timers are other processes (Ray)
    in_flight: int = 1  # candidates kept submitted to the workers
    workers_info: dict | None = None  # what the report says of the workers
    close_workers: Callable[[], None] | None = None  # None: no workers, or another's (SharedWorkers)
    measurer: Measurer | None = None
    noisy: str | None = None  # the warning that the timings are noisy
    spans: dict = field(default_factory=dict)
    started: float = 0.0  # (perf_counter) once the runner and the cache were open: the report's search_time from

    def timed(self, key: str, fn, *args):
        start = time.perf_counter()
        try:
            return fn(*args)
        finally:
            self.spans[key] = time.perf_counter() - start

    def open_workers(self, opts: TuneOptions, build: BuildConfig, progress: TuneProgress) -> None:
        self.workers, self.remote, self.in_flight, self.close_workers, self.workers_info = self.timed(
            "workers", open_workers, opts, build, progress.worker)

    def close(self) -> None:
        """The workers closed (their compile counts kept for the report), then the runner, then the cache."""
        try:
            if self.close_workers is not None:
                if self.workers_info is not None:
                    self.workers_info["compiles"] = self.workers.stats()  # how many compiled, and for nothing
                self.timed("close", self.close_workers)
        finally:
            try:
                self.runner.close()
            finally:
                if self.cache is not None:
                    self.cache.close()


@contextmanager
def open_measurement(prep: _Prepared, build: BuildConfig, progress: TuneProgress,
                     shared: SharedWorkers | None = None) -> Iterator[MeasureSession]:
    """Stage 2: the runner, the measurement cache, the original measured, the workers where the options ask for
    them, and the ``Measurer`` over them (one slot in this process, or the workers' slots). Everything it opened
    (workers, serving processes, temporary files, the cache) is closed on every exit, Ctrl-C included."""
    opts = prep.opts
    with ISL_LOCK:  # (a GPU target's runner and the cache's key read the program's kernels: isl work, first time)
        session = MeasureSession(prep.runner if prep.runner is not None else prep.target.runner(), prep.original)
    try:
        if opts.cache:
            with ISL_LOCK:
                key = workload_key(prep.program, build, prep.target.opts, prep.space)
            session.cache = MeasurementCache(opts.cache, key)
        session.started = time.perf_counter()
        use_pool = _use_pool(opts, session.runner, shared)
        _measure_original(prep, session, build, progress, shared, use_pool)
        bound = Bound(prep.bound)
        slots: Slots = InProcess(session.runner, bound)
        if session.workers is not None:
            slots = PoolSlots(session.runner, session.workers, bound, session.remote, session.in_flight)
            # a Ray pool starts its compile workers now, importing the compile step, while the seed is measured
            session.workers.warm(importlib.import_module, session.runner.compile_step.__module__)
        session.measurer = Measurer(prep.target, prep.space.names, slots, session.cache, bound,
                                    describe=lambda c: describe(c, prep.labels, prep.space, compact=True))
        yield session
    finally:
        session.close()


def _use_pool(opts: TuneOptions, runner: Runner, shared: SharedWorkers | None) -> bool:
    """Whether candidates go to workers: --ray, --jobs above 1 (or its default, the cores, for a runner whose
    pool is the default: ``pooled_by_default``), or workers shared with other tunes."""
    if opts.ray is not None and runner.local_only:
        raise UsageError(f"--ray needs a target that compiles and times apart (the {opts.target} "
                         "target times its candidates in the tuning process)")
    jobs_asked = opts.jobs != 1 and (opts.jobs is not None or runner.pooled_by_default)
    return opts.ray is not None or jobs_asked or shared is not None


def _measure_original(prep: _Prepared, session: MeasureSession, build: BuildConfig, progress: TuneProgress,
                      shared: SharedWorkers | None, use_pool: bool) -> None:
    """The original measured (unless --schedule auto did), the workers opened (or the shared ones taken), the
    noise warning and the loop names told to *progress*."""
    opts = prep.opts
    if shared is not None:
        session.workers, session.remote, session.in_flight = shared.pool, shared.remote, shared.in_flight
        session.workers_info = dict(shared.info)
    if session.original is None and use_pool and shared is None and opts.ray not in (None, "auto"):
        # joining the cluster and probing its nodes (seconds) while the original is measured here: the
        # probes run on the nodes; "auto" may start a private instance on this machine's cores instead
        with ThreadPoolExecutor(1, thread_name_prefix="polytune-original") as ex:
            measuring = ex.submit(session.timed, "original", _exclusive, session.runner.reference)
            session.open_workers(opts, build, progress)
            session.original = measuring.result()
        session.spans["overlapped"] = True
    if session.original is None:
        session.original = session.timed("original", _exclusive, session.runner.reference,
                                         _local_timing_cpus(build) if use_pool and opts.ray is None else None)
    from .workers.identity import usable_cores
    session.noisy = noise_warning(session.original, prep.load, usable_cores(), threads=build.threads)
    if session.noisy:
        progress.note(session.noisy)
    progress.label(prep.labels, prep.space)
    if use_pool and session.workers is None:
        session.open_workers(opts, build, progress)


class MeasureCallback(Protocol):
    """Told of each evaluation the search keeps (``EvalRecord``), in the search's order, on its thread: the
    progress lines (``TuneProgress``) and the cache writes (``CacheWriter``)."""

    def on_measured(self, rec: EvalRecord) -> None: ...


class CacheWriter:
    """Writes each evaluation measured in this tune to the measurement cache: not one read from it, not a
    repeat of a variant (``same_as``), not a second measurement (``again``), never a discarded speculation."""

    def __init__(self, cache: MeasurementCache):
        self.cache = cache

    def on_measured(self, rec: EvalRecord) -> None:
        m = rec.measurement
        if not m.cached and m.same_as is None and not rec.again:
            self.cache.put(m)


class _Callbacks:
    """The search's ``on_eval``: each evaluation to every callback, in order."""

    def __init__(self, callbacks: list[MeasureCallback]):
        self.callbacks = callbacks

    def __call__(self, rec: EvalRecord) -> None:
        for callback in self.callbacks:
            callback.on_measured(rec)


@dataclass(frozen=True)
class _Found:
    """What the search and the re-run after it found: the result (its best the one kept), the phases' starts,
    the launch seed's choice, the re-run's report entry and warnings, and whether Ctrl-C stopped either."""

    result: SearchResult
    phased: PhasedResult | None
    launch_choice: dict | None
    interrupted: bool
    program_gain: dict | None = None
    warnings: tuple[str, ...] = ()
    search_best: Measurement | None = None  # the search's best, where the re-run kept another


def _search(prep: _Prepared, session: MeasureSession, progress: TuneProgress) -> _Found:
    """Stage 3: the launch seed (where the target measures one), the starts, what the re-run needs built beside
    the search, then the strategy (in phases over a schedule space) through the session's measurer."""
    opts, target, space = prep.opts, prep.target, prep.space
    options, budget = opts.search, opts.budget
    seed, launch_choice = prep.seed, None
    if opts.seed == "pluto" and opts.strategy in LOCAL:
        seed, launch_choice = target.launch_seed(session.runner, space, session.measurer, seed)
    starts = target.starts(space, seed)
    if session.workers is not None and opts.confirm_runs > 0 and opts.confirm_defines is None:
        target.prebuild(session.runner, space.names, session.workers)  # compiled beside the search
    on_eval = _Callbacks(([CacheWriter(session.cache)] if session.cache is not None else []) + [progress])
    phased, interrupted = None, False
    search_start = time.perf_counter()
    try:
        if opts.strategy in LOCAL and any(p.is_categorical for p in space.params) and len(starts) > 1:
            # the schedule space: the starts, the tile-only path, then the whole space (search/phases.py)
            phased = phased_search(space, None, opts.strategy, starts, options, budget, on_eval,
                                   pool=session.measurer)
            result = phased.search
        else:
            result = run_search(space, None, opts.strategy, seed, options, budget, on_eval, pool=session.measurer)
    except SearchInterrupted as stop:  # Ctrl-C: what was measured so far is reported (TuneInterrupted)
        result, interrupted = stop.result, True
    session.spans["search"] = time.perf_counter() - search_start
    return _Found(result, phased, launch_choice, interrupted)


def _confirm(prep: _Prepared, session: MeasureSession, found: _Found, progress: TuneProgress) -> _Found:
    """Stage 4: the best re-measured against the seed as the user's program runs it (``Target.confirm_best``),
    and the one that target keeps adopted; Ctrl-C there keeps the search's best."""
    result, interrupted = found.result, False
    confirm_start = time.perf_counter()
    try:
        program_gain, warnings, kept = prep.target.confirm_best(
            session.runner, result.seed, result.best, prep.space.names, found.phased.starts if found.phased else {},
            prep.opts.confirm_runs, prep.opts.confirm_defines, workers=session.workers)
    except KeyboardInterrupt:
        program_gain, warnings, kept, interrupted = None, [], result.best, True
        result = dataclasses.replace(result, stop_reason=StopReason.INTERRUPTED)
    session.spans["confirm"] = time.perf_counter() - confirm_start
    search_best = None
    if kept is not result.best:
        search_best, result = result.best, dataclasses.replace(result, best=kept)
    for line in warnings:
        progress.note(line)
    return dataclasses.replace(found, result=result, interrupted=interrupted, program_gain=program_gain,
                               warnings=tuple(warnings), search_best=search_best)


def _report(prep: _Prepared, session: MeasureSession, found: _Found, build: BuildConfig,
            search_time: float) -> TuneResult:
    """Stage 5: the best's text and what optimize needs for it, the report; raises ``TuneInterrupted`` (with
    the result) where Ctrl-C stopped the search or the re-run."""
    opts, target, space, result, original = prep.opts, prep.target, prep.space, found.result, session.original
    best_text = best_build = None
    with ISL_LOCK:
        if result.best is not None:
            best_text = target.variant(space.names, result.best.config).text
            best_build = target.describe_best(space.names, result.best.config)
        target.finish(session.runner, result.best, space.names)
    warnings = prep.notes + ((session.noisy,) if session.noisy else ()) + found.warnings
    phased = found.phased
    report = TuneReport(
        file=prep.path, machine=machine_id(), target=opts.target, compiler=target.compiler(),
        threads=build.threads if build.threads is not None else os.environ.get("OMP_NUM_THREADS"),
        strategy=opts.strategy, fit=opts.fit, degree=opts.degree, shortest_hop=opts.shortest_hop, alpha=opts.alpha,
        space=space, original=original, seed=result.seed, best=result.best, evaluations=tuple(result.evaluations),
        trajectory=tuple(result.trajectory), stop_reason=result.stop_reason.value, evals=result.evals,
        search_time=search_time, target_info=target.report(session.runner, found.launch_choice), loops=prep.labels,
        warnings=warnings, program_gain=found.program_gain, schedule_choice=prep.schedule_choice,
        workers=session.workers_info, best_build=best_build, starts=phased.starts if phased else None,
        climbed_from=phased.climbed_from if phased else None, search_best=found.search_best, spans=session.spans,
        sweep=opts.sweep, threshold=move_test(opts.strategy, opts.search).threshold, omp_env=omp_environment())
    # (never hand a user a slower program without saying so, once, with the advice that fits: in the report too)
    report = dataclasses.replace(report, warnings=report.warnings + tuple(slower_warnings(report)))
    out = TuneResult(prep.program, space, result, original, best_text, report)
    if found.interrupted:
        raise TuneInterrupted(out)
    return out


class TuneInterrupted(KeyboardInterrupt):
    """Ctrl-C during a tune's search or its re-run: ``result`` is what was measured until then (its report's
    stop reason ``interrupted``), the workers closed."""

    def __init__(self, result: TuneResult):
        super().__init__("tune interrupted")
        self.result = result


def _exclusive(measure, cpus: tuple[int, ...] | None = None):
    """*measure*() (the original's measurement, made by this process itself, outside the pool) under the
    machine-wide lock that every pool's timings take: no other tune on this machine times a candidate then.
    *cpus*: on those cores (a thread pinned there: the runs it starts inherit it), the local pool's timing cores,
    so that the original is timed where the candidates are, off the cores any tune's compiles use."""
    from .steps import TimerLock, default_lock_path
    from .workers.local import pin_cpus
    with TimerLock(default_lock_path()):
        if not cpus:
            return measure()
        with ThreadPoolExecutor(1, thread_name_prefix="polytune-original", initializer=pin_cpus,
                                initargs=(cpus,)) as ex:
            return ex.submit(measure).result()


def _local_timing_cpus(build: BuildConfig) -> tuple[int, ...] | None:
    """The cores the local pool times on (``open_workers``, ``split_cores``): the first ``build.threads`` of
    this process's, where they leave cores for the compiles; None where a timing takes them all (a quiet pool)."""
    from .workers.local import split_cores
    split = split_cores(build.threads or 0)
    return split[0] if split else None


def open_workers(tune_opts: TuneOptions, build: BuildConfig, on_progress=None):
    """The workers of --jobs / --ray: (pool, whether its timers are other processes, how many candidates to
    keep in flight, how to close it, what the report says of it)."""
    from .targets import get_target
    from .workers import open_pool
    from .workers.identity import usable_cores
    gpu = get_target(tune_opts.target).gpu
    if tune_opts.ray is None:
        # a timing whose threads take every core it may use (its affinity: taskset) gets a quiet machine: no
        # compile runs while it is timed; otherwise the compiles keep off the first build.threads cores, which
        # the timings then have to themselves. A GPU timing runs its kernels under the machine-wide lock while
        # the compiles go on, on the other cores: its first core is the host thread's that launches the
        # kernels (and a serving process's, which it starts), as a CPU timing's cores are its own
        cores = usable_cores()
        quiet = not gpu and (build.threads or cores) >= cores
        jobs = tune_opts.jobs if tune_opts.jobs is not None or not gpu else max(1, cores - 1)
        pool = open_pool(jobs, None, gpu=gpu, quiet=quiet, on_progress=on_progress,
                         timing_cpus=0 if quiet else 1 if gpu else (build.threads or 0))
        info = {"jobs": pool.jobs, "workers": pool.workers, "quiet": quiet}
        if pool.compile_cpus:
            info["compile_cpus"], info["timing_cpus"] = list(pool.compile_cpus), list(pool.timing_cpus or ())
        return pool, False, pool.jobs + 1, pool.close, info
    try:
        import ray

        from .workers import ray_pool
    except ImportError as exc:
        raise UsageError(f"--ray needs Ray ({exc}): pip install 'polytune[ray]'") from None
    t0 = time.perf_counter()
    started = ray_pool.connect(tune_opts.ray)
    connect_s = time.perf_counter() - t0
    try:
        # a node compiles only on the cores its timings leave free (a timing of build.threads threads; none
        # given: every core of the node), so that no timing shares its cores with a compile
        pool = open_pool(tune_opts.jobs, tune_opts.ray, gpu=gpu, cc=build.cc, on_progress=on_progress,
                         on_refused=lambda line: print(line, file=sys.stderr),
                         timing_cpus=build.threads or ray_pool.ALL_CORES)
    except BaseException:
        if started:
            ray_pool.disconnect()
        raise
    # the compile workers start and import the compile step while the driver measures the original
    pool.warm(importlib.import_module, "polytune.measure.c", early=True)
    compiles = tune_opts.jobs or int(ray.cluster_resources().get("CPU", 1))
    timers = list(pool.workers)

    def close() -> None:
        pool.close()
        if started:
            ray_pool.disconnect()

    info = {"ray": tune_opts.ray, "private_instance": started, "jobs": compiles, "timers": timers,
            "refused": list(pool.refused.values()), "connect_s": round(connect_s, 2),
            "probe_s": round(pool.startup_s, 2)}
    return pool, True, compiles + max(1, len(timers)), close, info


# The legend printed above the progress lines (the last line only where the space has schedule coordinates).
LEGEND = ("[eval] phase  configuration (each tile size named by its loop; schedule coordinates where not Pluto's "
          "default)  time or why it has none  fastest so far (the summary says which one was adopted, and why)\n"
          "  pruned: its first run was over 2x slower than the fastest so far, so it was not run again; "
          "wrong_answer: its results differ from the original's\n")
SCHEDULE_COORDINATES = frozenset(coordinates())  # the --space schedule parameters
LEGEND_SCHEDULE = ("  --space schedule: phase start measures optimize's default and the other scheduler, tiles the "
                   "tile-only search's path from the seed, then the whole space from the fastest\n")


def _load1() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:  # pragma: no cover
        return None


def loaded(load: float | None, cores: int, threads: int | None = None) -> bool:
    """Whether other processes compete for the cores a run of *threads* threads (None: every core) needs: the
    load average is above the cores it leaves free, plus 0.75. One busy process beside a run that takes every
    core is enough: an OpenMP thread that is not running holds up every barrier."""
    threads = min(threads or cores, cores)
    return load is not None and load > cores - threads + 0.75


def noise_warning(original: Measurement, load: float | None, cores: int, spread: float = 0.25,
                  threads: int | None = None) -> str | None:
    """One line when timings are too noisy to trust, with the advice that fits: the original's repeated runs
    spread more than *spread* of their median (max - min): more runs; or the machine was loaded at the start
    (``loaded``): one thread, or a quiet machine."""
    why, advice = [], []
    times = [t for t in original.times if t > 0]
    if len(times) >= 2:
        med = sorted(times)[len(times) // 2]
        rel = (max(times) - min(times)) / med if med > 0 else 0.0
        if rel > spread:
            why.append(f"the original's {len(times)} runs spread {100 * rel:.0f}% of their median")
            advice.append("use --runs 5 or more")
    if loaded(load, cores, threads):
        why.append(f"load average {load:.1f} on {cores} cores")
        advice.append("tune with --threads 1, or on a quiet machine" if (threads or cores) > 1
                      else "tune on a quiet machine")
    if not why:
        return None
    return f"polytune: warning: timings are noisy ({'; '.join(why)}): speedups may be wrong; {', or '.join(advice)}"


# What OpenMP programs do at a barrier by default (libgomp: spin ~300000 times, milliseconds, before sleeping)
# costs a time slice per barrier when a thread of the team is not running: on a 2-core machine with one
# busy process, PolyBench's SMALL 2mm at 2 threads took 53 ms instead of 2.8 ms with OMP_WAIT_POLICY=passive
# (docs/DESIGN.md, "A loaded machine"). The variables a user sets to choose the waiting themselves:
WAIT_VARIABLES = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME")


def wait_passively_when_loaded(threads: int | None, load: float | None = None, cores: int | None = None,
                               environ=os.environ) -> str | None:
    """On a loaded machine (``loaded``), the programs that tune and bench run (the original, the variants, the
    baselines alike) get OMP_WAIT_POLICY=passive in *environ* (this process's: every run and local worker
    inherits it), unless the user set one of ``WAIT_VARIABLES``: threads then sleep at a barrier instead of
    spinning while a thread of theirs waits for a core. Returns the note saying so (None: nothing set)."""
    from .workers.identity import usable_cores
    load = _load1() if load is None else load
    cores = cores or usable_cores()
    if (threads or cores) < 2 or not loaded(load, cores, threads) or any(v in environ for v in WAIT_VARIABLES):
        return None
    environ["OMP_WAIT_POLICY"] = "passive"
    return (f"polytune: note: load average {load:.1f} on {cores} cores: the programs run with "
            "OMP_WAIT_POLICY=passive (OpenMP threads sleep at a barrier instead of spinning while another waits "
            "for a core); run yours the same way on a loaded machine, or set OMP_WAIT_POLICY to choose")


def omp_environment(environ=os.environ) -> dict:
    """The OpenMP variables the runs saw (the report keeps them)."""
    return {k: environ[k] for k in (*WAIT_VARIABLES, "OMP_PROC_BIND", "OMP_PLACES") if k in environ}


def describe(config, labels: tuple[str, ...] | None, space: SearchSpace | None = None,
             compact: bool = False) -> str:
    """A configuration with each value named by its loop, a category by its name: i=32 j=64 k=16
    fusion=max (the plain tuple without labels). *compact*: categories at their default (the first) left out."""
    if not labels or len(labels) != len(config):
        return str(tuple(config))
    params = space.params if space is not None and len(space.params) == len(config) else (None,) * len(config)
    return " ".join(f"{lp}={p.label(v) if p is not None and p.is_categorical else v}"
                    for lp, v, p in zip(labels, config, params)
                    if not (compact and p is not None and p.is_categorical and v == 0))


class TuneProgress:
    """What a tune tells while it runs; the defaults say nothing (``tune(progress=None)``): each evaluation
    (``__call__``, an ``EvalRecord``; as a ``MeasureCallback``, ``on_measured``), a note line, the loop names of
    the space once the original is measured (``label``), and the workers' events (``worker``: a callable, None
    where they are not wanted)."""

    worker: Callable | None = None

    def __call__(self, rec: EvalRecord) -> None:
        pass

    def on_measured(self, rec: EvalRecord) -> None:
        self(rec)

    def note(self, line: str) -> None:
        pass

    def label(self, labels: tuple[str, ...], space: SearchSpace | None = None) -> None:
        pass


class _EachEvaluation(TuneProgress):
    """A plain callable given as a tune's progress: called with each evaluation, nothing else."""

    def __init__(self, fn: Callable[[EvalRecord], object]):
        self.fn = fn

    def __call__(self, rec: EvalRecord) -> None:
        self.fn(rec)


def as_progress(progress) -> TuneProgress:
    """*progress* as a TuneProgress: None says nothing, a plain callable hears of each evaluation."""
    if progress is None:
        return TuneProgress()
    return progress if isinstance(progress, TuneProgress) else _EachEvaluation(progress)


class ProgressPrinter(TuneProgress):
    """A live progress line per evaluation: candidate (values named by their loops, categories by name),
    its time, best so far, evaluations, elapsed; with workers, which one timed it and, below, what each
    worker holds now. tune() gives it the loop names (label), warnings (note) and worker events (worker)."""

    def __init__(self, stream=sys.stderr):
        self.stream = stream
        self.labels: tuple[str, ...] | None = None
        self.space: SearchSpace | None = None
        self.best: tuple[float, tuple | None] = (math.inf, None)
        self.started = False
        self.holding: dict[int, tuple[str, str]] = {}  # candidate (ticket) -> (worker, "compile LABEL")
        self._lock = threading.Lock()
        self.level = 1  # 0 (-q): warnings only, no progress lines; 2 (-v): also why each failed candidate failed
        self.pending: list[str] = []  # notes said once the search starts (label), after the original's measurement

    def label(self, labels: tuple[str, ...], space: SearchSpace | None = None) -> None:
        self.labels = tuple(labels)
        self.space = space
        for line in self.pending:
            self.note(line)
        self.pending.clear()

    def note(self, line: str) -> None:
        self.stream.write(line + "\n")
        self.stream.flush()

    def worker(self, event) -> None:
        """A polytune.workers Progress event (from the pool's thread): what the worker holds now."""
        with self._lock:
            if event.stage.value in ("done", "retry"):
                self.holding.pop(event.ticket, None)
            else:
                self.holding[event.ticket] = (event.worker, f"{event.stage.value} {event.label}")

    def _show(self, config) -> str:
        return describe(config, self.labels, self.space, compact=True)

    def __call__(self, rec) -> None:
        m = rec.measurement
        if not self.started and self.level >= 1:  # (-q: no progress lines, no legend above them)
            self.stream.write(LEGEND)
            if self.space is not None and any(p.name in SCHEDULE_COORDINATES for p in self.space.params):
                self.stream.write(LEGEND_SCHEDULE)  # (not for a contraction's categorical block coordinates)
        self.started = True
        if m.ok and m.value < self.best[0]:
            self.best = (m.value, m.config)
        if self.level < 1:
            return
        what = fmt_time(m.value) if m.ok else f"{m.error.value}"
        if m.cached:
            what += " (cached)"
        if rec.again:
            what += " (again)"
        b = f"{fmt_time(self.best[0])} {self._show(self.best[1])}" if self.best[1] is not None else "-"
        width = max(24, len(self._show(m.config)))
        on = f"  on {m.extra['worker']}" if m.extra.get("worker") else ""
        self.stream.write(f"[{rec.index:3d}] {rec.phase:6s} {self._show(m.config):{width}s} {what:18s} "
                          f"fastest {b}  evals {rec.index}  {rec.elapsed:.1f} s{on}\n")
        if self.level > 1 and not m.ok and m.detail:
            self.stream.write(f"      {m.error.value if m.error else 'failed'}: {m.detail.strip()[:300]}\n")
        with self._lock:
            holding = sorted(self.holding.values())
        if on and holding:
            self.stream.write("      now: " + "; ".join(f"{w.rsplit('/', 1)[-1]} {what}" for w, what in holding)
                              + "\n")
        self.stream.flush()


def progress_printer(stream=sys.stderr) -> ProgressPrinter:
    return ProgressPrinter(stream)


def _median(m: Measurement | None) -> float | None:
    return m.value if m is not None and math.isfinite(m.value) else None


def _timed(m: Measurement | None) -> str:
    """A measurement's median and how many runs it is the median of, or why it has none."""
    if m is None:
        return "-"
    if not m.ok:
        return m.error.value if m.error else "-"
    n = len(m.times)
    return f"{fmt_time(m.value)} ({'1 run' if n == 1 else f'median of {n} runs'})"


def fastest_measured(report: TuneReport) -> Measurement | None:
    """The configuration with the lowest median among every evaluation that has a time, a configuration
    measured twice judged by both measurements' times (as the search judges it)."""
    times: dict[tuple, tuple[float, ...]] = {}
    first: dict[tuple, Measurement] = {}
    for r in report.evaluations:
        m = r.measurement
        if m.ok:
            times[m.config] = times.get(m.config, ()) + m.times
            first.setdefault(m.config, m)
    if not times:
        return None
    both = [dataclasses.replace(first[c], times=t) for c, t in times.items()]
    return min(both, key=lambda m: m.value)


def _test(report: TuneReport):
    from .search.compare import ImprovementTest
    return ImprovementTest(report.alpha, report.threshold)


def _decision(report: TuneReport, labels) -> list[str]:
    """The seed, the adopted best and the fastest configuration measured, each with the test that decided
    between them in words; where the re-run after the search kept another program than the search's best, that
    too."""
    test, seed, best, replaced = _test(report), report.seed, report.best, report.search_best
    adopted = replaced or best  # what the search adopted
    name = lambda m: describe(m.config, labels, report.space)  # noqa: E731
    what = "the search's best" if replaced is not None else "the best"
    lines = []
    if adopted is not None and seed is not None and adopted.config == seed.config:
        again = len(adopted.times) > len(seed.times)
        lines.append(f"best = the seed {name(adopted)}: {_timed(adopted)}"
                     + (f" (measured again before the search stopped; its first {len(seed.times)}: "
                        f"{fmt_time(seed.value)})" if again else "") + "; no configuration was adopted over it")
    else:
        if seed is not None:
            lines.append(f"seed {name(seed)}: {_timed(seed)}")
        if adopted is not None:
            why = ""
            if seed is not None and seed.ok:
                why = f", adopted: {test.explain(adopted, seed, 'the seed')}" if adopted.value < seed.value \
                    else ", adopted although its median is not lower than the seed's"
            label = "search's best" if replaced is not None else "best"
            lines.append(f"{label} {name(adopted)}: {_timed(adopted)}{why}")
    if replaced is not None and best is not None:
        pg = report.program_gain or {}
        medians = ", ".join(f"{k} {fmt_time(v / 1e3)}" for k, v in (pg.get("median_ms") or {}).items())
        lines.append(f"best = the {pg.get('kept', 'seed')} {name(best)}: kept, the search's best was slower when "
                     f"the programs were run again ({pg.get('runs', '?')} interleaved runs each: {medians})")
    fastest = fastest_measured(report)
    if fastest is not None and adopted is not None and fastest.config != adopted.config \
            and fastest.value < adopted.value:
        lines.append(f"fastest measured {name(fastest)}: {_timed(fastest)}, not adopted: "
                     f"{test.explain(fastest, adopted, what)}")
    return lines


def summary(res: TuneResult) -> str:
    """What the tune found, honestly: the original, the seed, the adopted best and the fastest configuration
    measured (with the test that decided between them), the speedups, and warnings where the best is slower
    than the original or the seed, or the timings are not to be trusted."""
    r = res.report
    orig = _median(r.original)
    lines = [f"original: {_timed(r.original)}" if orig else "original: not timed (the reference ran on the CPU)"]
    if r.schedule_choice:
        seeds = ", ".join(f"{k} {fmt_time(v['median'])}" if v and v["median"] else f"{k} failed"
                          for k, v in r.schedule_choice["seeds"].items())
        lines.append(f"schedule: {r.schedule_choice['chosen']} (tile-32 seeds: {seeds})")
    for label, m in (r.starts or {}).items():
        if label != "seed":
            what = "optimize's default" if label.startswith("default") else f"--schedule {label}"
            lines.append(f"start {label} ({what}): {_timed(m)}")
    lines += _decision(r, r.loops)
    if r.best:
        if r.best_build and r.best_build.get("optimize_args"):
            lines.append(f"optimize it with: polytune optimize {r.file} " + " ".join(r.best_build["optimize_args"]))
        if r.speedup_over_seed and r.seed is not None and r.seed.config != r.best.config:
            lines.append(f"speedup over seed: {fmt_ratio(r.speedup_over_seed)}")
        default = (r.starts or {}).get("default")
        if default is not None and _ratio(default, r.best):
            lines.append(f"speedup over optimize's default: {fmt_ratio(_ratio(default, r.best))}")
        if r.speedup_over_original:
            lines.append(f"speedup over original: {fmt_ratio(r.speedup_over_original)}")
    else:
        lines.append("no configuration produced a verified result")
    pg = r.program_gain or {}
    if pg.get("median_ms"):
        runs = f"{pg['runs']} runs each, in turn" if pg.get("max_runs", pg["runs"]) == pg["runs"] else \
            f"{pg['runs']} of at most {pg['max_runs']} runs each, in turn: the verdict was clear"
        lines.append(f"re-measured in the program ({runs}): "
                     + ", ".join(f"{k} {fmt_time(v / 1e3)}" for k, v in pg["median_ms"].items())
                     + f"; kept: {pg['kept']}")
    lines += region_share_lines(pg)
    lines.append(f"evaluations: {r.evals}, search time: {r.search_time:.1f} s, stopped: {r.stop_reason}")
    if r.workers:
        where = f"Ray {r.workers['ray']}, {len(r.workers['timers'])} timer(s)" if "ray" in r.workers else "locally"
        lines.append(f"workers: {r.workers['jobs']} compiling at once, {where}")
    lines += list(r.warnings) + [w for w in slower_warnings(r) if w not in r.warnings]  # (_report adds them)
    return "\n".join(lines)


def region_share_lines(pg: dict) -> list[str]:
    """Where a GPU region's time goes as the program runs it (the report's program_gain.region_shares, where the
    target measures them), the seed's and the best's: the copies' share is what a faster kernel cannot gain."""
    out = []
    for label, sh in (pg.get("region_shares") or {}).items():
        out.append(f"{label}'s region in the program: {sh['region_ms']:.3f} ms, copies {100 * sh['copies']:.1f}% "
                   f"(in, with allocation, {100 * sh['copies_in']:.1f}%, out {100 * sh['copies_out']:.1f}%), "
                   f"kernels {100 * sh['kernels']:.1f}%, frees {100 * sh['free']:.1f}%")
    return out


def slower_warnings(r: TuneReport) -> list[str]:
    """A warning where the adopted best is slower than the original program or than the seed, with the
    advice that fits: a loaded machine, threads on a region too short for them, or noise."""
    out = []
    best = _median(r.best)
    if best is None:
        return out
    threads = r.threads if isinstance(r.threads, int) else None
    loaded = any("load average" in w for w in r.warnings)
    orig = _median(r.original)
    if orig and best > orig:
        if loaded:
            advice = "the machine is loaded: tune " + ("on a quiet machine" if threads == 1 else
                                                       "with --threads 1, or on a quiet machine")
        elif threads != 1 and orig < 1e-3:
            advice = (f"the region runs for {fmt_time(orig)}: starting threads costs more than they save at this "
                      "size; tune with --threads 1 or --no-parallel, or at the size the program runs (-D)")
        else:
            advice = "keep the original"
        out.append(f"polytune: warning: the best variant is {fmt_ratio(best / orig)} slower than the original "
                   f"program ({fmt_time(best)} against {fmt_time(orig)}): {advice}")
    seed = _median(r.seed)
    if seed and best > seed and r.seed is not None and r.seed.config != r.best.config:
        out.append(f"polytune: warning: the adopted best is slower than the seed in the search's measurements "
                   f"({fmt_time(best)} against {fmt_time(seed)}): the difference is noise; use --runs 5 or more")
    return out


def untimed_reason(r: TuneReport) -> str:
    """One line saying why no variant was timed: what became of the evaluations."""
    kinds: dict[str, int] = {}
    detail = ""
    for e in r.evaluations:
        m = e.measurement
        if not m.ok:
            kinds[m.error.value if m.error else "no runs"] = kinds.get(m.error.value if m.error else "no runs", 0) + 1
            detail = detail or m.detail.strip().splitlines()[0][:160] if m.detail.strip() else detail
    what = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1])) or "none measured"
    return f"no variant was timed ({r.evals} evaluations: {what}" + (f"; first: {detail}" if detail else "") + ")"


def write_report(path: str, report: TuneReport) -> None:
    """The report as JSON, written whole or not at all (the one moment it stops being typed)."""
    from .pipeline import write_atomically
    write_atomically(path, json.dumps(report.to_json(), indent=2) + "\n")
