"""A local search over a mixed space (ordinal tile sizes and categorical schedule coordinates) in three phases,
so that it ends no slower than the tile-only search on the same budget, nor than any of its starting points.

1. ``starts``: the seed (Pluto's default, whose time "speedup over the seed" divides), then the other starting
   points the caller names (``optimize``'s own choice, the other scheduler), each measured once. Only the seed
   is charged to the budget: the others are extra evaluations, at most a few, reported as phase ``start``.
2. ``tiles``: the strategy over the ordinal coordinates alone, from the seed, the categorical ones held at the
   seed's: the tile-only search's own path (the same neighbourhoods in the same order, the same test), with
   the budget the tile-only search has after its seed.
3. the strategy over the whole space from the fastest configuration measured so far (the lowest median, not
   the strategy's test: the starts are not moves), with what is left.

So on a deterministic cost surface the result is at most the tile-only search's and at most every start's
(tested with replayed surfaces in ``tests/test_tune_phases.py``). A configuration measured in an earlier phase
is not measured again: a later phase gets it as a free repeat (``same_as``), as it gets a repeated variant.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from contextlib import closing
from dataclasses import dataclass, replace

from polytune.measure.measurement import Config, Measurement
from polytune.search.budget import Budget, StopReason
from polytune.search.compare import ImprovementTest, Verdict
from polytune.search.evaluator import EvalRecord, Evaluator, Step
from polytune.search.pool import Pool
from polytune.search.space import SearchSpace
from polytune.search.strategies import STRATEGIES, SearchInterrupted, SearchOptions, SearchResult, run_search

# the strategies that climb from a start (the scans measure what they measure): hill, coordesc
LOCAL = tuple(name for name, strategy in STRATEGIES.items() if strategy.climbs)


@dataclass(frozen=True)
class PhasedResult:
    """The whole search as one SearchResult (seed: the first start), and each start's measurement by label."""

    search: SearchResult
    starts: dict[str, Measurement]
    climbed_from: str  # the label of the configuration the last phase started from ("tiles": phase 2's end)


def move_test(strategy: str, options: SearchOptions) -> ImprovementTest:
    """The strategy's own move test (its options' ``move_test``: hill, alpha and threshold; coordesc, alpha and
    eps)."""
    return options.of(STRATEGIES[strategy]).move_test()


class _Phase:
    """What one phase's run_search sees: a (sub)space's configurations embedded into the whole space's,
    and the configurations measured in earlier phases answered as free repeats."""

    def __init__(self, known: dict[Config, Measurement], embed: Callable[[Config], Config],
                 evaluate: Callable[[Config], Measurement] | None, pool: Pool | None):
        self.known, self.embed, self._evaluate, self._pool = known, embed, evaluate, pool
        self.workers = pool.workers if pool is not None else 1

    @property
    def timers(self) -> int:
        """(As many as ``workers``: the phase's evaluator speculates as it did before pools said how many they
        time.)"""
        return self.workers

    def _repeat(self, config: Config) -> Measurement | None:
        m = self.known.get(self.embed(config))
        return None if m is None else replace(m, config=tuple(config), same_as=m.config, extra=dict(m.extra))

    def submit(self, config: Config) -> Future[Measurement]:
        config = tuple(int(v) for v in config)
        m = self._repeat(config)
        if m is not None or self._pool is None:
            future: Future[Measurement] = Future()
            future.set_result(m if m is not None else self._evaluate(self.embed(config)))  # type: ignore[misc]
            return future
        return self._pool.submit(self.embed(config))

    def resubmit(self, config: Config) -> Future[Measurement] | None:
        if self._pool is None:
            return None
        return self._pool.resubmit(self.embed(tuple(int(v) for v in config)))


def phased_search(space: SearchSpace, evaluate: Callable[[Config], Measurement] | None, strategy: str,
                  starts: Sequence[tuple[str, Config]], options: SearchOptions | None = None,
                  budget: Budget | None = None, on_eval: Callable[[EvalRecord], object] | None = None,
                  clock: Callable[[], float] = time.monotonic, pool: Pool | None = None) -> PhasedResult:
    """The three phases (module docstring) of the local *strategy*; ``starts[0]`` is the seed. Measures through
    *evaluate* or *pool*, as ``run_search`` does; ``on_eval`` sees every evaluation with its whole-space
    configuration, numbered over all phases (phases ``seed``, ``start``, ``tiles``, then the strategy's)."""
    options = SearchOptions() if options is None else options
    budget = Budget() if budget is None else budget
    test = move_test(strategy, options)
    seed = space.check(starts[0][1])
    known: dict[Config, Measurement] = {}  # every recorded measurement, by its whole-space configuration
    records: list[EvalRecord] = []
    trajectory: list[Step] = []
    t0 = clock()
    state = {"moves": 0, "charged": 0.0}  # accepted incumbents (the seed is 0); seconds charged to the budget

    def forward(embed: Callable[[Config], Config], phase: Callable[[EvalRecord], str]):
        def file(rec: EvalRecord) -> None:
            full = embed(rec.config)
            m = replace(rec.measurement, config=full)
            if rec.again and full in known:  # a second measurement: judged with both's times from now on
                known[full] = replace(known[full], times=known[full].times + m.times)
            else:
                known[full] = m
            out = EvalRecord(len(records) + 1, full, m, phase(rec), state["moves"] + rec.iteration, clock() - t0,
                             again=rec.again)
            records.append(out)
            if on_eval is not None:
                on_eval(out)
        return file

    def whole(config: Config) -> Config:
        return tuple(config)

    # ---- 1. the starts, the seed first (the one the budget is charged for)
    distinct: dict[Config, str] = {}
    for label, config in starts:
        distinct.setdefault(space.check(config), label)
    ev = Evaluator(evaluate, Budget(), forward(whole, lambda r: "seed" if r.config == seed else "start"), clock,
                   pool)
    measured: dict[Config, Measurement] = {}
    with closing(ev.stream(list(distinct), "start")) as results:
        for config, m in zip(distinct, results):
            measured[config] = known.get(config, replace(m, config=config))  # (a repeat of a variant: free)
    by_label = {label: measured[space.check(config)] for label, config in starts}
    seed_m = measured[seed]
    trajectory.append(Step(0, seed, seed_m, "seed", 1))
    state["charged"] = records[0].elapsed if records else 0.0  # the tile-only search spends the seed's time too
    extra = len(records) - 1  # the other starts' evaluations: not charged

    def left() -> tuple[Budget | None, StopReason | None]:
        """The budget a phase has now, or why there is none left."""
        evals = None if budget.max_evals is None else budget.max_evals - (len(records) - extra)
        limit = None if budget.time_limit is None else budget.time_limit - state["charged"]
        iters = budget.max_iterations - state["moves"]
        if evals is not None and evals <= 0:
            return None, StopReason.MAX_EVALS
        if limit is not None and limit <= 0:
            return None, StopReason.TIME_LIMIT
        if iters <= 0:
            return None, StopReason.MAX_ITERATIONS
        return Budget(max_evals=evals, time_limit=limit, max_iterations=iters), None

    def adopt(res: SearchResult, embed, base_evals: int, phase: str | None) -> None:
        """A phase's moves into the whole trajectory (its seed step is the incumbent already there)."""
        base = state["moves"]
        for s in res.trajectory[1:]:
            full = embed(s.config)
            trajectory.append(Step(base + s.iteration, full, known.get(full, replace(s.measurement, config=full)),
                                   phase if phase and s.phase != "best_measured" else s.phase,
                                   base_evals + s.evals))
            state["moves"] = base + s.iteration

    def combine(reason: StopReason) -> SearchResult:
        """The result: the incumbent, or the fastest measured configuration that beats it under the move test."""
        best = trajectory[-1].measurement
        while True:
            measured = [known.get(r.config, r.measurement) for r in records]  # (pooled where measured again)
            beating = [m for m in measured if test(m, best) is Verdict.BETTER]
            if not beating:
                break
            best = min(beating, key=lambda m: m.value)
            state["moves"] += 1
            trajectory.append(Step(state["moves"], best.config, best, "best_measured", len(records)))
        return SearchResult(strategy, best if best.ok else None, seed_m, tuple(records), tuple(trajectory), reason,
                            clock() - t0)

    def run(sub: SearchSpace, embed, start: Config, name: Callable[[EvalRecord], str], b: Budget,
            phase: str | None) -> StopReason:
        through = _Phase(known, embed, evaluate, pool)
        began, base_evals = clock(), len(records)
        try:
            res = run_search(sub, (lambda c: through.submit(c).result()) if pool is None else None, strategy, start,
                             options, b, forward(embed, name), clock, pool=through if pool is not None else None)
        except SearchInterrupted as stop:
            adopt(stop.result, embed, base_evals, phase)
            raise SearchInterrupted(combine(StopReason.INTERRUPTED)) from None
        finally:
            state["charged"] += clock() - began
        adopt(res, embed, base_evals, phase)
        return res.stop_reason

    ordinal = [i for i, p in enumerate(space.params) if not p.is_categorical]
    reason = StopReason.CONVERGED
    # ---- 2. the tile-only search's path: the ordinal coordinates from the seed, the others held
    b, why = left()
    if ordinal and len(ordinal) < len(space.params) and b is not None:
        def embed(config: Config) -> Config:
            full = list(seed)
            for i, v in zip(ordinal, config):
                full[i] = v
            return tuple(full)

        reason = run(SearchSpace(tuple(space.params[i] for i in ordinal)), embed, tuple(seed[i] for i in ordinal),
                     lambda r: "tiles", b, "tiles")
    elif b is None:
        reason = why  # type: ignore[assignment]
    # ---- 3. the whole space from the fastest configuration measured so far
    here = trajectory[-1].measurement
    climbed_from = "tiles" if len(trajectory) > 1 else distinct[seed]
    fastest = min((m for m in known.values() if m.ok), key=lambda m: m.value, default=None)
    if fastest is not None and fastest.value < here.value:  # by median: the starts are not moves of a climb
        here, climbed_from = fastest, distinct.get(fastest.config, "tiles")
        state["moves"] += 1
        trajectory.append(Step(state["moves"], fastest.config, fastest, "start", len(records)))
    b, why = left()
    if b is not None:
        reason = run(space, whole, here.config, lambda r: r.phase, b, None)
    elif reason is StopReason.CONVERGED or reason is StopReason.NO_SIGNIFICANT_IMPROVEMENT:
        reason = why  # type: ignore[assignment]
    return PhasedResult(combine(reason), by_label, climbed_from)
