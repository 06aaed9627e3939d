"""The executables the search built, kept on the driver for the re-run after the search.

`tune` re-runs the best, the seed and optimize's default in the program (``CTarget.confirm_best``); each of
those the search measured was compiled then, so the re-run takes that executable instead of generating and
compiling the variant again (1.5-2.5 s a variant). Keys are what determines the code within one runner (one
program, one BuildConfig): a variant's build options. Only verified, timed executables are kept; above
``budget`` bytes the slowest go first (a tune of a small program keeps them all: 100 evaluations of a
PolyBench kernel are 3-6 MB), so the best stays and a variant evicted is simply compiled again. A build the
re-run needs and the search never makes (the tile-only space's default) may be started on the search's
pool beside it (``expect``): the first ``get`` waits for it.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any

from .measurement import Measurement

BUDGET = 256 << 20  # bytes


class KeptBuilds:
    """Compiled executables by build key, offered as candidates finish (from any thread), read after the search."""

    def __init__(self, budget: int = BUDGET):
        self.budget = budget
        self._kept: dict[Hashable, tuple[float, Any]] = {}  # key -> (median time, Compiled)
        self._bytes = 0
        self._expected: dict[Hashable, Callable[[], Any | None]] = {}  # key -> waits for a build under way
        self._lock = threading.Lock()

    def offer(self, key: Hashable, measurement: Measurement, compiled: Any) -> None:
        """Keep *compiled* (an object with ``exe`` bytes) under *key* if *measurement* verified and timed it."""
        if not measurement.ok or getattr(compiled, "exe", None) is None:
            return
        with self._lock:
            if key in self._kept:
                return
            self._kept[key] = (measurement.value, compiled)
            self._bytes += len(compiled.exe)
            while self._bytes > self.budget and self._kept:
                slowest = max(self._kept, key=lambda k: self._kept[k][0])
                self._bytes -= len(self._kept.pop(slowest)[1].exe)

    def expect(self, key: Hashable, wait: Callable[[], Any | None]) -> None:
        """A build of *key* under way: the first ``get`` returns *wait()* (None if it failed), once."""
        with self._lock:
            self._expected[key] = wait

    def get(self, key: Hashable) -> Any | None:
        with self._lock:
            kept = self._kept.get(key)
            wait = self._expected.pop(key, None) if kept is None else None
        if wait is not None:
            return wait()
        return kept[1] if kept is not None else None

    def __len__(self) -> int:
        return len(self._kept)

    @property
    def bytes(self) -> int:
        return self._bytes


__all__ = ["BUDGET", "KeptBuilds"]
