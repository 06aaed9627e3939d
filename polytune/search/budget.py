"""The search budget and why a search stopped.

The budget is enforced in one place, :class:`polytune.search.evaluator.Evaluator`, which raises
:class:`BudgetExhausted`; the driver catches it. Strategies never check budgets themselves.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass

from polytune.errors import UsageError


class StopReason(str, enum.Enum):
    """Why a search ended."""

    CONVERGED = "converged"  # no neighbour improves on the incumbent
    NO_SIGNIFICANT_IMPROVEMENT = "no_significant_improvement"  # some were faster, none significantly
    MAX_ITERATIONS = "max_iterations"  # the cap on accepted moves was reached
    MAX_EVALS = "max_evals"
    TIME_LIMIT = "time_limit"
    EXHAUSTED = "exhausted"  # every planned candidate was evaluated (exhaustive, random)
    INTERRUPTED = "interrupted"  # KeyboardInterrupt during the search; the evaluation in progress is lost


@dataclass(frozen=True)
class Budget:
    """Limits of one search.

    ``max_evals`` counts evaluations: calls of the user's evaluate on a configuration not seen before in
    this search. Memoized repeats are free, and so is a measurement the user's evaluate marks as the same
    variant as one it already measured (``extra["same_as"]``: the Triton harness, for a configuration that
    differs only in parameters the selected module does not read); measurements replayed from a
    persistent cache still count,
    since they are part of the search's trajectory and a resumed search must follow the same path.
    ``time_limit`` (seconds of wall clock since the search began) is checked before each new evaluation;
    one in progress is not interrupted. ``max_iterations`` caps accepted moves of local searches (hill,
    coordesc); sampling strategies are bounded by their sample instead.
    """

    max_evals: int | None = None
    time_limit: float | None = None
    max_iterations: int = 100

    def __post_init__(self) -> None:
        if self.max_evals is not None and self.max_evals < 1:
            raise UsageError(f"max_evals must be >= 1, got {self.max_evals}")
        if self.time_limit is not None and not self.time_limit > 0:
            raise UsageError(f"time_limit must be > 0 seconds, got {self.time_limit}")
        if self.max_iterations < 1:
            raise UsageError(f"max_iterations must be >= 1, got {self.max_iterations}")


class BudgetExhausted(Exception):
    """Internal: raised by the evaluator when a limit is hit; caught by the driver."""

    def __init__(self, reason: StopReason):
        super().__init__(reason.value)
        self.reason = reason
