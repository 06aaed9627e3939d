"""polytune: polyhedral tiling and parallelization (islpy) with an empirical hill-climbing tuner."""
from __future__ import annotations

from .errors import ParseError, PolytuneError, UnsupportedError, UsageError
from .pipeline import OptimizeOptions, OptimizeResult, optimize

__all__ = [
           "OptimizeOptions",
           "OptimizeResult",
           "ParseError",
           "PolytuneError",
           "UnsupportedError",
           "UsageError",
           "optimize",
]
__version__ = "0.1.0"
