"""polytune: polyhedral tiling and parallelization (islpy) with an empirical hill-climbing tuner."""
from __future__ import annotations

from .errors import ParseError, PolytuneError, UnsupportedError, UsageError
from .pipeline import OptimizeOptions, OptimizeResult, optimize

__all__ = ["optimize", "OptimizeOptions", "OptimizeResult", "PolytuneError", "ParseError",
           "UnsupportedError", "UsageError"]
__version__ = "0.1.0"
