"""Random search: ``random``, ``samples`` distinct grid points, or ceil(ln(1/delta)/q) of them (Prop. 9.3:
then with probability >= 1 - delta the best lies in the fastest q-quantile); exhaustive if that covers the grid.
A scan: moves by a lower median."""
from __future__ import annotations

import math
import random
from dataclasses import dataclass

from polytune.errors import UsageError
from polytune.measure.measurement import Config
from polytune.search.budget import StopReason
from polytune.search.compare import ImprovementTest
from polytune.search.evaluator import Evaluator
from polytune.search.space import SearchSpace
from polytune.search.strategies.base import SCAN_TEST, Strategy, scan
from polytune.search.strategies.exhaustive_search import ExhaustiveOptions, exhaustive


@dataclass(frozen=True)
class RandomOptions:
    """What ``random`` reads of ``SearchOptions`` (the comments there say what each field does)."""

    samples: int | None = None
    quantile: float = 0.05
    delta: float = 0.05
    rng_seed: int = 0

    def __post_init__(self) -> None:
        if self.samples is not None and self.samples < 1:
            raise UsageError(f"samples must be >= 1, got {self.samples}")
        if not 0 < self.quantile <= 1:
            raise UsageError(f"quantile must lie in (0, 1], got {self.quantile}")
        if not 0 < self.delta < 1:
            raise UsageError(f"delta must lie in (0, 1), got {self.delta}")

    def move_test(self) -> ImprovementTest:
        return SCAN_TEST

    def sample_count(self) -> int:
        """``samples``, or the N >= ln(1/delta)/q of Prop. 9.3."""
        if self.samples is not None:
            return self.samples
        return max(1, math.ceil(math.log(1 / self.delta) / self.quantile - 1e-9))


def random_search(space: SearchSpace, ev: Evaluator, seed: Config | None, options: RandomOptions) -> StopReason:
    """Measure *seed* (where given), then ``sample_count()`` distinct configurations drawn with ``rng_seed``."""
    count = options.sample_count()
    if count >= space.size:
        return exhaustive(space, ev, seed, ExhaustiveOptions())
    if seed is not None:
        ev.start(seed)
    picks = random.Random(options.rng_seed).sample(range(space.size), count)
    return scan(ev, (space.config_at(i) for i in picks), "random")


STRATEGY = Strategy(random_search, RandomOptions, climbs=False)
