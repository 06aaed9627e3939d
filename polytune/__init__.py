"""polytune: polyhedral tiling and parallelization (islpy) with an empirical hill-climbing tuner."""
from __future__ import annotations

from .errors import ParseError, PolytuneError, UnsupportedError, UsageError
from .pipeline import OptimizeOptions, OptimizeResult, optimize
from .version import __version__ as __version__  # (read by any layer from polytune.version)

__all__ = [
           "OptimizeOptions",
           "OptimizeResult",
           "ParseError",
           "PolytuneError",
           "UnsupportedError",
           "UsageError",
           "optimize",
]
