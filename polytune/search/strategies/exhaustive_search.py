"""Exhaustive search: ``exhaustive``, every grid point in row-major order (a scan: moves by a lower median)."""
from __future__ import annotations

from dataclasses import dataclass

from polytune.measure.measurement import Config
from polytune.search.budget import StopReason
from polytune.search.compare import ImprovementTest
from polytune.search.evaluator import Evaluator
from polytune.search.space import SearchSpace
from polytune.search.strategies.base import SCAN_TEST, Strategy, scan


@dataclass(frozen=True)
class ExhaustiveOptions:
    """``exhaustive`` reads no options."""

    def move_test(self) -> ImprovementTest:
        return SCAN_TEST


def exhaustive(space: SearchSpace, ev: Evaluator, seed: Config | None, options: ExhaustiveOptions) -> StopReason:
    """Measure *seed* (where given), then every configuration of the grid."""
    if seed is not None:
        ev.start(seed)
    return scan(ev, space.configs(), "grid")


STRATEGY = Strategy(exhaustive, ExhaustiveOptions, climbs=False)
