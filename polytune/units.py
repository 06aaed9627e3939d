"""Times and ratios as a reader sees them: three significant figures, in the unit that fits (s, ms, us, ns), so
that a 60-microsecond region is never ``0.0000 s`` and a 190x slowdown never a speedup of ``0.00x``."""
from __future__ import annotations

import math

_UNITS = (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9))


def sig3(x: float) -> str:
    """*x* (finite, >= 0) with three significant figures, without an exponent: 123, 12.3, 1.23, 0.00123."""
    if x == 0:
        return "0"
    x = float(f"{x:.3g}")  # rounded first: 9.996 becomes 10.0, not 10.00
    digits = 2 - math.floor(math.log10(x))
    return f"{x:.{max(0, digits)}f}"


def fmt_time(seconds: float | None) -> str:
    """``1.23 s``, ``45.6 ms``, ``789 us``, ``12.0 ns``; ``-`` for no time."""
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        return "-"
    if seconds == 0:
        return "0 s"
    rounded = float(f"{seconds:.3g}")
    for unit, scale in _UNITS:
        if rounded >= scale or unit == "ns":
            return f"{sig3(rounded / scale)} {unit}"
    raise AssertionError("unreachable")


def fmt_ratio(r: float | None) -> str:
    """A speedup: ``2.56x``, ``190x``, ``0.00526x``; ``-`` for none."""
    if r is None or not math.isfinite(r) or r < 0:
        return "-"
    return f"{sig3(r)}x"
