"""The one door between strategies and the user's evaluate: memoizes, records and enforces the budget."""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from polytune.measurement import Config, Measurement
from polytune.search.budget import Budget, BudgetExhausted, StopReason


@dataclass(frozen=True)
class EvalRecord:
    """One evaluation: its 1-based position, what was measured, and which phase/iteration asked for it."""

    index: int
    config: Config
    measurement: Measurement
    phase: str  # "seed", "hill", "hop", "coordesc", "grid", "random"
    iteration: int  # incumbents accepted (after the seed) before this evaluation
    elapsed: float  # seconds since the search began, after this evaluation


@dataclass(frozen=True)
class Step:
    """An accepted incumbent: the seed is iteration 0, each later incumbent adds one."""

    iteration: int
    config: Config
    measurement: Measurement
    phase: str
    evals: int  # evaluations spent when it was accepted


class Evaluator:
    """Memoizing, budget-enforcing wrapper of ``evaluate(config) -> Measurement``.

    Also holds the incumbent and the trajectory, so every strategy reports progress the same way.
    """

    def __init__(
        self,
        evaluate: Callable[[Config], Measurement],
        budget: Budget,
        on_eval: Callable[[EvalRecord], object] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self._evaluate = evaluate
        self.budget = budget
        self._on_eval = on_eval
        self._clock = clock
        self._start = clock()
        self._memo: dict[Config, Measurement] = {}
        self.records: list[EvalRecord] = []
        self.trajectory: list[Step] = []
        self.seed: Measurement | None = None
        self.incumbent: Measurement | None = None
        self.iterations = 0

    @property
    def elapsed(self) -> float:
        return self._clock() - self._start

    @property
    def evals(self) -> int:
        return len(self.records)

    def seen(self, config: Sequence[int]) -> bool:
        return tuple(config) in self._memo

    def __call__(self, config: Sequence[int], phase: str) -> Measurement:
        """Measure ``config`` (free if already measured in this search)."""
        config = tuple(int(v) for v in config)
        known = self._memo.get(config)
        if known is not None:
            return known
        limit = self.budget
        if limit.max_evals is not None and self.evals >= limit.max_evals:
            raise BudgetExhausted(StopReason.MAX_EVALS)
        if limit.time_limit is not None and self.elapsed >= limit.time_limit:
            raise BudgetExhausted(StopReason.TIME_LIMIT)
        measurement = self._evaluate(config)
        if measurement.config != config:  # file it under the configuration that was asked for
            measurement = replace(measurement, config=config)
        self._memo[config] = measurement
        if measurement.same_as is not None:
            # the evaluator recognized the same variant as a configuration it already measured (it differs
            # only in parameters the selected code does not read): a repeat, free like a memoized one
            return measurement
        record = EvalRecord(self.evals + 1, config, measurement, phase, self.iterations, self.elapsed)
        self.records.append(record)
        if self._on_eval is not None:
            self._on_eval(record)
        return measurement

    def start(self, config: Sequence[int]) -> Measurement:
        """Measure the seed and make it the starting incumbent, even if it failed."""
        measurement = self(config, "seed")
        self.seed = self.incumbent = measurement
        self.trajectory.append(Step(0, measurement.config, measurement, "seed", self.evals))
        return measurement

    def accept(self, measurement: Measurement, phase: str, *, is_move: bool = True) -> None:
        """Make ``measurement`` the incumbent; a move of a local search counts toward max_iterations."""
        if not measurement.ok:
            raise ValueError(f"a failed measurement cannot become the incumbent: {measurement.config}")
        self.incumbent = measurement
        self.iterations += 1
        self.trajectory.append(Step(self.iterations, measurement.config, measurement, phase, self.evals))
        if is_move and self.iterations >= self.budget.max_iterations:
            raise BudgetExhausted(StopReason.MAX_ITERATIONS)
