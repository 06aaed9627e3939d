"""The result of evaluating one configuration: a value, never an exception."""
from __future__ import annotations

import enum
import math
import statistics
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

    @property
    def ok(self) -> bool:
        return self.error is None and len(self.times) > 0

    @property
    def value(self) -> float:
        """Median time; infinity for a failed candidate (so searches can compare blindly)."""
        if not self.ok:
            return math.inf
        return statistics.median(self.times)
