"""polytune's version, in a module of its own so that any layer may read it (the package's ``__init__``
imports the pipeline)."""
from __future__ import annotations


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
