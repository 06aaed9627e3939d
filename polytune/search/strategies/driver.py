"""The driver ``run_search``: one strategy of the registry over a space, and its ``SearchResult``.

Whatever stops the search (convergence, a budget, the iteration cap, KeyboardInterrupt, the end of the sample),
the driver then applies :meth:`Evaluator.keep_best`: a measured configuration that beats the final incumbent
under the strategy's own move test becomes the result, so a faster neighbour measured just before the budget
ran out is never lost. The result's best is that incumbent. After a KeyboardInterrupt the result travels in the
:class:`SearchInterrupted` raised again.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from polytune.errors import UsageError
from polytune.measure.measurement import Config, Measurement
from polytune.search.budget import Budget, BudgetExhausted, StopReason
from polytune.search.evaluator import EvalRecord, Evaluator, Step
from polytune.search.pool import Pool
from polytune.search.space import SearchSpace
from polytune.search.strategies.options import SearchOptions
from polytune.search.strategies.registry import STRATEGIES


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
        chosen = STRATEGIES[strategy]
    except KeyError:
        raise UsageError(f"unknown search strategy {strategy!r} (known: {', '.join(STRATEGIES)})") from None
    options = SearchOptions() if options is None else options
    ev = Evaluator(evaluate, Budget() if budget is None else budget, on_eval, clock, pool)
    try:
        reason = chosen.run(space, ev, None if seed is None else space.check(seed), options.of(chosen))
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
