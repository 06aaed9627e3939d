"""Search strategies, their registry, and the driver ``run_search``.

Every strategy has one signature, ``strategy(space, ev, seed, options) -> StopReason``, and measures only
through the :class:`Evaluator` ``ev`` (memoized, budget-enforced). ``seed`` is None when the caller gave
none: local searches then start at the space's origin, sampling strategies measure no seed.

- ``hill``: coordinate-wise hill climbing over the neighbourhood of ``options.degree`` (see
  :mod:`polytune.search.space`); ``fit="best"`` evaluates the whole neighbourhood and moves to the best
  improving neighbour, ``fit="first"`` moves to the first improving one in the neighbourhood's order. With
  ``shortest_hop``, once it stops it continues with moves of +-(the domain's shortest hop), within each
  domain's [min, max]. With ``sweep``, once it stops each parameter in turn is swept through its whole
  domain (the others fixed); a significantly faster value becomes the incumbent and the climb resumes from
  it, until a pass of sweeps moves nothing (``_sweep``). A failed seed is still the starting point; any
  finite neighbour improves on it.
- ``coordesc``: Algorithm 9.2; per parameter try doubling then halving (the domain value nearest to 2x
  among larger values / to x/2 among smaller ones: exactly 2x and x/2 on a full power-of-two domain),
  accepting a candidate beating the incumbent by ``eps``; a categorical parameter tries each other category
  in order instead.
- ``exhaustive``: every grid point in row-major order.
- ``random``: ``options.samples`` distinct grid points, or ceil(ln(1/delta)/q) of them (Prop. 9.3:
  then with probability >= 1 - delta the best lies in the fastest q-quantile); exhaustive if that covers
  the grid.

All use :func:`polytune.search.compare.improves` to decide whether a candidate becomes the incumbent:
hill with ``alpha`` and ``threshold``, coordesc with ``alpha`` and ``eps``, the scans with a lower median
alone. Failed measurements never do. Whatever stops the search (convergence, a budget, the iteration cap,
KeyboardInterrupt, the end of the sample), the driver then applies :meth:`Evaluator.keep_best`: a measured
configuration that beats the final incumbent under that same test becomes the result, so a faster neighbour
measured just before the budget ran out is never lost. The result's best is that incumbent. After a
KeyboardInterrupt the result travels in the :class:`SearchInterrupted` raised again.
"""
from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass

from polytune.errors import UsageError
from polytune.measure.measurement import Config, Measurement
from polytune.search.budget import Budget, BudgetExhausted, StopReason
from polytune.search.compare import ImprovementTest, Verdict
from polytune.search.evaluator import EvalRecord, Evaluator, Step
from polytune.search.pool import Pool
from polytune.search.space import Parameter, SearchSpace


@dataclass(frozen=True)
class SearchOptions:
    """Knobs of the strategies (each strategy reads the ones it needs)."""

    degree: int = 1  # hill: neighbourhood degree, 1..3
    fit: str = "best"  # hill: "best" or "first"
    alpha: float | None = None  # significance level of the improvement test; None: medians only
    threshold: float = 0.0  # relative margin a move must win by when no t-test applies
    shortest_hop: bool = False  # hill: continue with shortest-hop moves after converging
    sweep: bool = False  # hill: after converging, sweep each parameter through its whole domain (_sweep)
    eps: float = 1e-3  # coordesc: relative margin (Algorithm 9.2)
    samples: int | None = None  # random: sample size; None: from quantile and delta
    quantile: float = 0.05  # random: q of Prop. 9.3
    delta: float = 0.05  # random: failure probability of Prop. 9.3
    rng_seed: int = 0  # random: seed of the sampler
    speculate: bool = True  # hill, best fit: measure the likely next neighbourhood on idle timers (see _climb)
    # hill: before stopping where no neighbour beats the incumbent, measure the incumbent once more and judge
    # the neighbourhood against both measurements' times (a lucky first measurement does not end the climb)
    again: bool = True

    def __post_init__(self) -> None:
        if self.degree not in (1, 2, 3):
            raise UsageError(f"degree must be 1, 2 or 3, got {self.degree}")
        if self.fit not in ("best", "first"):
            raise UsageError(f"fit must be 'best' or 'first', got {self.fit!r}")
        if self.alpha is not None and not 0 < self.alpha < 1:
            raise UsageError(f"alpha must lie in (0, 1), got {self.alpha}")
        for name, value in (("threshold", self.threshold), ("eps", self.eps)):
            if not 0 <= value < 1:
                raise UsageError(f"{name} must lie in [0, 1), got {value}")
        if self.samples is not None and self.samples < 1:
            raise UsageError(f"samples must be >= 1, got {self.samples}")
        if not 0 < self.quantile <= 1:
            raise UsageError(f"quantile must lie in (0, 1], got {self.quantile}")
        if not 0 < self.delta < 1:
            raise UsageError(f"delta must lie in (0, 1), got {self.delta}")

    def sample_count(self) -> int:
        """``samples``, or the N >= ln(1/delta)/q of Prop. 9.3."""
        if self.samples is not None:
            return self.samples
        return max(1, math.ceil(math.log(1 / self.delta) / self.quantile - 1e-9))


Strategy = Callable[[SearchSpace, Evaluator, Config | None, SearchOptions], StopReason]


def _stalled(options: SearchOptions, insignificant: bool) -> StopReason:
    if options.alpha is not None and insignificant:
        return StopReason.NO_SIGNIFICANT_IMPROVEMENT
    return StopReason.CONVERGED


def _climb(space: SearchSpace, ev: Evaluator, options: SearchOptions, phase: str, hop: bool) -> StopReason:
    """Move through neighbourhoods until none improves (hill climbing, Sec. 3.3).

    Best fit needs the whole neighbourhood: one batch. While its last candidates are measured, timers left
    idle measure the neighbourhood of the best improving neighbour finished so far (the likely next step):
    speculation, an evaluation only if the next step asks for it (``Evaluator.stream``'s ``guess``). First
    fit reads in order, measuring ahead speculatively as far as there are workers."""
    while True:
        incumbent = ev.incumbent
        assert incumbent is not None
        neighbours = space.neighbours(incumbent.config, options.degree, hop=hop)
        ahead = ev.workers if options.fit == "first" else None
        guess = _next_step(space, ev, options, incumbent, hop) \
            if options.fit == "best" and options.speculate else None
        measured: list[Measurement] = []
        with closing(ev.stream(neighbours, phase, ahead, guess)) as results:
            for measurement in results:
                measured.append(measurement)
                if options.fit == "first" and ev.test(measurement, incumbent) is Verdict.BETTER:
                    break
        chosen, insignificant = _judge(ev, measured, incumbent)
        if chosen is None and options.again and incumbent.config not in ev.measured_again:
            # a lucky measurement of the incumbent would end the climb here: measure it again, judge again
            chosen, insignificant = _judge(ev, measured, ev.measure_again(incumbent, phase))
        if chosen is None:
            return _stalled(options, insignificant)
        ev.accept(chosen, phase)


def _judge(ev: Evaluator, measured: list[Measurement], incumbent: Measurement) -> tuple[Measurement | None, bool]:
    """The fastest of *measured* that beats *incumbent* under the evaluator's test (None: none does), and
    whether one was faster in median but not significantly."""
    chosen: Measurement | None = None
    insignificant = False
    for measurement in measured:
        verdict = ev.test(measurement, incumbent)
        insignificant |= verdict is Verdict.INSIGNIFICANT
        if verdict is Verdict.BETTER and (chosen is None or measurement.value < chosen.value):
            chosen = measurement
    return chosen, insignificant


def _next_step(space: SearchSpace, ev: Evaluator, options: SearchOptions, incumbent: Measurement,
               hop: bool) -> Callable[[list[Measurement]], Iterator[Config]]:
    """Best fit's guess of its next neighbourhoods from the neighbours finished so far: those of the
    improving ones, the fastest first (the fastest is where best fit moves if nothing faster finishes)."""

    def guess(finished: list[Measurement]) -> Iterator[Config]:
        better = [m for m in finished if ev.test(m, incumbent) is Verdict.BETTER]
        for m in sorted(better, key=lambda m: m.value):
            yield from space.neighbours(m.config, options.degree, hop=hop)

    return guess


def _sweep(space: SearchSpace, ev: Evaluator) -> bool:
    """One pass of coordinate sweeps from the incumbent: each parameter in turn through every value of its
    domain, the others fixed (one batch), moving to the fastest that beats the incumbent by the improvement
    test; whether it moved. A line search along each coordinate (Algorithm 9.2 tries one step each way): it
    crosses a plateau of neighbours that no single step tells apart (a row reduction's 64- to 1024-thread
    blocks, all within 3%) to a value several steps away that is measurably faster (32 threads)."""
    moved = False
    for k, param in enumerate(space.params):
        incumbent = ev.incumbent
        assert incumbent is not None
        line = [incumbent.config[:k] + (v,) + incumbent.config[k + 1:] for v in param.values
                if v != incumbent.config[k]]
        chosen: Measurement | None = None
        with closing(ev.stream(line, "sweep")) as results:
            for measurement in results:
                if ev.test(measurement, incumbent) is Verdict.BETTER and \
                        (chosen is None or measurement.value < chosen.value):
                    chosen = measurement
        if chosen is not None:
            ev.accept(chosen, "sweep")
            moved = True
    return moved


def hill(space: SearchSpace, ev: Evaluator, seed: Config | None, options: SearchOptions) -> StopReason:
    ev.test = ImprovementTest(options.alpha, options.threshold)
    start = space.origin if seed is None else seed
    # best fit measures the seed's whole neighbourhood next, whatever the seed measures: it starts beside the seed
    ev.start(start, space.neighbours(start, options.degree) if options.fit == "best" and options.speculate else None)
    reason = _climb(space, ev, options, "hill", hop=False)
    if options.shortest_hop:
        reason = _climb(space, ev, options, "hop", hop=True)
    while options.sweep and _sweep(space, ev):  # a sweep that moved: climb from there, then sweep again
        reason = _climb(space, ev, options, "hill", hop=False)
    return reason


def scaled(param: Parameter, value: int, up: bool) -> int | None:
    """Coordinate descent's 2x (``up``) or x/2 neighbour of ``value`` within ``param``'s domain.

    The domain value nearest to the target among those larger (smaller) than ``value``; ties go to the
    one closer to ``value``. None when there is none.
    """
    if up:
        target, pool = 2 * value, [v for v in param.values if v > value]
    else:
        target, pool = value / 2, [v for v in param.values if v < value]
    if not pool:
        return None
    return min(pool, key=lambda v: (abs(v - target), abs(v - value)))


def _coordesc_value(param: Parameter, value: int, move: int) -> int | None:
    """The ``move``-th candidate value of one coordinate: ordinal, 0 doubles and 1 halves (:func:`scaled`);
    categorical, move j tries category j (None for the current one)."""
    if param.is_categorical:
        return None if move == value else move
    return scaled(param, value, up=move == 0)


def coordesc(space: SearchSpace, ev: Evaluator, seed: Config | None, options: SearchOptions) -> StopReason:
    ev.test = ImprovementTest(options.alpha, options.eps)
    ev.start(space.origin if seed is None else seed)
    # a round tries every (parameter, move) slot in order, each from the incumbent of its time; the slots
    # still to come are measured ahead speculatively (as far as there are workers) and rebuilt after a move
    slots = [(i, move) for i, param in enumerate(space.params)
             for move in range(len(param.values) if param.is_categorical else 2)]
    while True:
        improved = insignificant = False
        start = 0
        while start < len(slots):
            incumbent = ev.incumbent
            assert incumbent is not None
            todo = []
            for k in range(start, len(slots)):
                i, move = slots[k]
                value = _coordesc_value(space.params[i], incumbent.config[i], move)
                if value is not None:
                    todo.append((k, incumbent.config[:i] + (value,) + incumbent.config[i + 1:]))
            start = len(slots)
            with closing(ev.stream([c for _, c in todo], "coordesc", ev.workers)) as results:
                for (k, _), measurement in zip(todo, results):
                    verdict = ev.test(measurement, incumbent)
                    if verdict is Verdict.BETTER:
                        ev.accept(measurement, "coordesc")
                        improved, start = True, k + 1
                        break
                    if verdict is Verdict.INSIGNIFICANT:
                        insignificant = True
        if not improved:
            return _stalled(options, insignificant)


def _scan(ev: Evaluator, configs: Iterable[Config], phase: str, options: SearchOptions) -> StopReason:
    """Measure every config; each with a lower median than the incumbent replaces it (not a counted move).

    No significance test here: a scan does not decide where to go next, it reports the fastest
    configuration it measured (gating on a t-test kept a slower incumbent on gemver)."""
    ev.test = ImprovementTest(None, 0.0)
    with closing(ev.stream(configs, phase)) as results:  # one batch: every configuration is needed
        for measurement in results:
            if ev.test(measurement, ev.incumbent) is Verdict.BETTER:
                ev.accept(measurement, phase, is_move=False)
    return StopReason.EXHAUSTED


def exhaustive(space: SearchSpace, ev: Evaluator, seed: Config | None, options: SearchOptions) -> StopReason:
    if seed is not None:
        ev.start(seed)
    return _scan(ev, space.configs(), "grid", options)


def random_search(
    space: SearchSpace, ev: Evaluator, seed: Config | None, options: SearchOptions
) -> StopReason:
    count = options.sample_count()
    if count >= space.size:
        return exhaustive(space, ev, seed, options)
    if seed is not None:
        ev.start(seed)
    picks = random.Random(options.rng_seed).sample(range(space.size), count)
    return _scan(ev, (space.config_at(i) for i in picks), "random", options)


STRATEGIES: dict[str, Strategy] = {
    "hill": hill,
    "coordesc": coordesc,
    "exhaustive": exhaustive,
    "random": random_search,
}


@dataclass(frozen=True)
class SearchResult:
    """What a search found and how it got there."""

    strategy: str
    best: Measurement | None  # the final incumbent; None if nothing measured finite
    seed: Measurement | None  # None when no seed was measured
    evaluations: tuple[EvalRecord, ...]  # in order
    trajectory: tuple[Step, ...]  # accepted incumbents, seed first
    stop_reason: StopReason
    elapsed: float

    @property
    def best_config(self) -> Config | None:
        return None if self.best is None else self.best.config

    @property
    def evals(self) -> int:
        return len(self.evaluations)

    @property
    def iterations(self) -> int:
        return self.trajectory[-1].iteration if self.trajectory else 0


class SearchInterrupted(KeyboardInterrupt):
    """KeyboardInterrupt during a search, carrying what the search had found (``result``, stop reason
    ``interrupted``, its best kept as for any other stop): a caller that does not catch it is interrupted as
    before; one that does can report or write the best so far."""

    def __init__(self, result: SearchResult):
        super().__init__("search interrupted")
        self.result = result


def run_search(
    space: SearchSpace,
    evaluate: Callable[[Config], Measurement] | None,
    strategy: str = "hill",
    seed: Sequence[int | str] | None = None,
    options: SearchOptions | None = None,
    budget: Budget | None = None,
    on_eval: Callable[[EvalRecord], object] | None = None,
    clock: Callable[[], float] = time.monotonic,
    pool: Pool | None = None,
) -> SearchResult:
    """Run the named strategy on ``space``; ``on_eval(record)`` follows every new evaluation.

    KeyboardInterrupt ends the search like a budget would, and is then raised again as
    :class:`SearchInterrupted` with the result.

    Candidates are measured by ``evaluate``, one at a time, or through ``pool`` (e.g. a
    :class:`~polytune.search.pool.ThreadPool`; ``evaluate`` may then be None): the result is the same
    when the measurements are (see :meth:`Evaluator.stream`). The caller closes the pool.
    """
    try:
        run = STRATEGIES[strategy]
    except KeyError:
        raise UsageError(f"unknown search strategy {strategy!r} (known: {', '.join(STRATEGIES)})") from None
    options = SearchOptions() if options is None else options
    ev = Evaluator(evaluate, Budget() if budget is None else budget, on_eval, clock, pool)
    try:
        reason = run(space, ev, None if seed is None else space.check(seed), options)
    except BudgetExhausted as stop:
        reason = stop.reason
    except KeyboardInterrupt:
        reason = StopReason.INTERRUPTED
    ev.discard_spare()
    ev.keep_best()
    incumbent = ev.incumbent
    result = SearchResult(
        strategy=strategy,
        best=incumbent if incumbent is not None and incumbent.ok else None,
        seed=ev.seed,
        evaluations=tuple(ev.records),
        trajectory=tuple(ev.trajectory),
        stop_reason=reason,
        elapsed=ev.elapsed,
    )
    if reason is StopReason.INTERRUPTED:
        raise SearchInterrupted(result)
    return result
