"""What every pool shares: a candidate's two steps, its result, progress events and the lost-worker error.

A candidate is ``compile_fn(payload) -> artifact`` then ``time_fn(artifact) -> value``. Compiles run in
parallel; a timing runs alone on its machine (or GPU). Both callables must be picklable (module-level
functions, or ``functools.partial`` of them) because a compile may run in another process or on another
node. ``compile_fn`` returns ``Done(value)`` (``polytune.steps``) to finish a candidate without timing it (a
compile error, a failed verification): failures are values, and an exception raised by either step is a bug
that reaches the caller through the future. The pools keep no search state: they only run what they are handed.
"""
from __future__ import annotations

import enum
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Protocol


class Stage(str, enum.Enum):
    """What a worker is doing with a candidate, for progress displays."""

    COMPILE = "compile"
    TIME = "time"
    DONE = "done"
    RETRY = "retry"  # the worker died or its node left; the candidate goes back to the queue


@dataclass(frozen=True)
class Progress:
    """One progress event: ``worker`` started ``stage`` of candidate ``ticket`` (labelled ``label``)."""

    ticket: int  # the pool's submission number, from 0
    label: str
    stage: Stage
    worker: str


@dataclass(frozen=True)
class WorkResult:
    """A finished candidate: its value and who produced it.

    ``worker`` is the timer that measured it (the compiling node when ``timed`` is False). Spans are wall-clock
    (``time.time()``) seconds, start and end, measured where the step ran. ``attempts`` counts tries: more
    than one only when a worker died mid-candidate; the value is always that of the one attempt that
    finished, delivered once. ``artifact``: the compile step's output that was timed (None when not timed), for a
    caller that keeps builds (``polytune.measure.kept``).
    """

    ticket: int
    label: str
    value: Any
    worker: str
    compiled_on: str
    timed: bool
    attempts: int
    compile_span: tuple[float, float]
    time_span: tuple[float, float] | None
    submitted: float = 0.0  # when the driver submitted it (``time.time()``)
    artifact: Any = None


@dataclass
class Candidate:
    """A submitted candidate as a pool's dispatcher holds it (mutable: the dispatcher alone updates it)."""

    ticket: int
    label: str
    compile_fn: Callable[[Any], Any]
    time_fn: Callable[[Any], Any]
    payload: Any
    future: Future
    attempts: int = 0
    artifact: Any = None
    compile_span: tuple[float, float] = (0.0, 0.0)
    submitted: float = 0.0


class WorkerPool(Protocol):
    """What every pool offers (``LocalPool``, ``RayPool``): its workers' names, how many candidates it times at
    once, ``submit`` (a ``Future[WorkResult]``), ``warm`` (start the compile workers ahead: ``fn(payload)`` in
    each; a pool whose workers start with it does nothing), ``stats`` (what its compiles cost) and ``close``."""

    @property
    def workers(self) -> list[str]: ...

    @property
    def timers(self) -> int: ...

    def submit(self, compile_fn: Callable[[Any], Any], time_fn: Callable[[Any], Any], payload: Any,
               label: str = "") -> Future: ...

    def warm(self, fn: Callable[[Any], Any], payload: Any, early: bool = False) -> None: ...

    def stats(self) -> dict: ...

    def close(self) -> None: ...


class WorkerLost(RuntimeError):
    """A candidate's workers died ``attempts`` times in a row; the pool gave up on it."""


ProgressFn = Callable[[Progress], object]
