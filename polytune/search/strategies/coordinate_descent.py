"""Coordinate descent (Algorithm 9.2): ``coordesc``.

Per parameter try doubling then halving (the domain value nearest to 2x among larger values / to x/2 among
smaller ones: exactly 2x and x/2 on a full power-of-two domain), accepting a candidate beating the incumbent
by ``eps``; a categorical parameter tries each other category in order instead. Moves by ``alpha`` and ``eps``.
"""
from __future__ import annotations

from contextlib import closing
from dataclasses import dataclass

from polytune.measure.measurement import Config
from polytune.search.budget import StopReason
from polytune.search.compare import ImprovementTest, Verdict
from polytune.search.evaluator import Evaluator
from polytune.search.space import Parameter, SearchSpace
from polytune.search.strategies.base import Strategy, check_alpha, check_margin, stalled


@dataclass(frozen=True)
class CoordescOptions:
    """What ``coordesc`` reads of ``SearchOptions`` (the comments there say what each field does)."""

    alpha: float | None = None
    eps: float = 1e-3

    def __post_init__(self) -> None:
        check_alpha(self.alpha)
        check_margin("eps", self.eps)

    def move_test(self) -> ImprovementTest:
        return ImprovementTest(self.alpha, self.eps)


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


def coordesc(space: SearchSpace, ev: Evaluator, seed: Config | None, options: CoordescOptions) -> StopReason:
    """Descend from *seed* (the origin if None) until a round of every coordinate's moves improves nothing."""
    ev.test = options.move_test()
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
            return stalled(options.alpha, insignificant)


STRATEGY = Strategy(coordesc, CoordescOptions, climbs=True)
