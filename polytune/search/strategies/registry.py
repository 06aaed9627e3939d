"""The strategies by name (``tune --strategy``'s choices): adding a strategy is one module beside these, whose
``STRATEGY`` names its function, its own options and whether it climbs, and one line here."""
from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from polytune.search.strategies import coordinate_descent, exhaustive_search, hill_climbing, random_sampling
from polytune.search.strategies.base import Strategy

STRATEGIES: Mapping[str, Strategy[Any]] = MappingProxyType({
    "hill": hill_climbing.STRATEGY,
    "coordesc": coordinate_descent.STRATEGY,
    "exhaustive": exhaustive_search.STRATEGY,
    "random": random_sampling.STRATEGY,
})
