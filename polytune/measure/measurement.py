"""The result of evaluating one configuration: a value, never an exception; and its one JSON record."""
from __future__ import annotations

import enum
import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field


class ErrorKind(str, enum.Enum):
    """Why a candidate has no valid time."""

    COMPILE = "compile"  # code generation or the compiler failed
    RUNTIME = "runtime"  # the program crashed or exited non-zero
    TIMEOUT = "timeout"  # it ran past the time-out derived from the incumbent
    WRONG_ANSWER = "wrong_answer"  # its results differ from the original program's
    RESOURCES = "resources"  # rejected before timing (e.g. GPU register spills, too many threads)
    PRUNED = "pruned"  # first run so much slower than the incumbent that it was not repeated


Config = tuple  # a tuple of ints, one per search parameter, in the search space's order


@dataclass(frozen=True)
class Measurement:
    """Times (seconds) of the repeated runs of one configuration, or the error that prevented them."""

    config: Config
    times: tuple[float, ...] = ()
    error: ErrorKind | None = None
    compile_time: float = 0.0
    detail: str = ""  # compiler message, exit status, mismatch description
    cached: bool = False  # replayed from the measurement cache
    extra: dict = field(default_factory=dict, compare=False, hash=False)
    # the configuration whose measurement this is: the same code and launch (this one differs only in
    # parameters the generated code does not read), so it was not measured again
    same_as: Config | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and len(self.times) > 0

    @property
    def value(self) -> float:
        """Median time; infinity for a failed candidate (so searches can compare blindly)."""
        if not self.ok:
            return math.inf
        return statistics.median(self.times)


def to_record(m: Measurement) -> dict:
    """The JSON record of a measurement (reports, the cache, recorded measurements for replay)."""
    rec = {"config": list(m.config), "times": list(m.times), "median": m.value if math.isfinite(m.value) else None,
           "error": m.error.value if m.error else None, "compile_time": m.compile_time, "detail": m.detail,
           "cached": m.cached}
    if m.same_as is not None:
        rec["same_as"] = list(m.same_as)
    if m.extra:
        rec["extra"] = m.extra
    return rec


def from_record(rec: Mapping) -> Measurement:
    """A measurement from its record; only ``config`` is required. ``median`` is derived, and ``cached``
    says how a record was obtained, not what was measured: neither is read back."""
    error = rec.get("error")
    same = rec.get("same_as")
    return Measurement(
        config=tuple(int(v) for v in rec["config"]),
        times=tuple(float(t) for t in rec.get("times", ())),
        error=None if error is None else ErrorKind(error),
        compile_time=float(rec.get("compile_time", 0.0)),
        detail=str(rec.get("detail", "")),
        extra=dict(rec.get("extra") or {}),
        same_as=None if same is None else tuple(int(v) for v in same),
    )
