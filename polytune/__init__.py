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


def _version() -> str:
    """The version of one source, pyproject.toml: the installed package's metadata, or (not installed: run
    from a clone) the file itself."""
    import os
    import re
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("polytune")
    except PackageNotFoundError:
        pass
    try:
        with open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "pyproject.toml"),
                  encoding="utf-8") as f:
            m = re.search(r'^version\s*=\s*"([^"]+)"', f.read(), re.M)
        return m.group(1) if m else "unknown"
    except OSError:
        return "unknown"


__version__ = _version()
