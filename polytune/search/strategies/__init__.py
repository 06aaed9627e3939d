"""Search strategies, one module each with its own options, their registry, and the driver ``run_search``.

- ``hill`` (``hill_climbing.py``, ``HillOptions``): coordinate-wise hill climbing, with shortest hops and sweeps.
- ``coordesc`` (``coordinate_descent.py``, ``CoordescOptions``): doubling and halving one coordinate at a time.
- ``exhaustive`` (``exhaustive_search.py``, ``ExhaustiveOptions``): every grid point.
- ``random`` (``random_sampling.py``, ``RandomOptions``): distinct grid points drawn at random (Prop. 9.3).

``base.py`` says what a strategy is (``Strategy``: its function, its options, whether it climbs) and holds what
strategies share; ``registry.py`` names them (``STRATEGIES``); ``options.py`` holds ``SearchOptions``, the flat
union that ``TuneOptions`` and the command line fill and from which each strategy gets its own options;
``driver.py`` runs one (``run_search``).
"""
from __future__ import annotations

from polytune.search.strategies.base import Strategy, StrategyOptions
from polytune.search.strategies.coordinate_descent import CoordescOptions, coordesc, scaled
from polytune.search.strategies.driver import SearchInterrupted, SearchResult, run_search
from polytune.search.strategies.exhaustive_search import ExhaustiveOptions, exhaustive
from polytune.search.strategies.hill_climbing import HillOptions, hill
from polytune.search.strategies.options import SearchOptions
from polytune.search.strategies.random_sampling import RandomOptions, random_search
from polytune.search.strategies.registry import STRATEGIES

__all__ = [
    "STRATEGIES",
    "CoordescOptions",
    "ExhaustiveOptions",
    "HillOptions",
    "RandomOptions",
    "SearchInterrupted",
    "SearchOptions",
    "SearchResult",
    "Strategy",
    "StrategyOptions",
    "coordesc",
    "exhaustive",
    "hill",
    "random_search",
    "run_search",
    "scaled",
]
