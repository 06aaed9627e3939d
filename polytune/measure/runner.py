"""What a target hands its runner, and the interfaces every runner implements.

A runner builds, verifies and times variants of one program; it keeps no search state (the incumbent's
time arrives as an explicit pruning bound). Measuring is two protocols (as TVM's meta_schedule splits
``Builder.build`` from ``Runner.run``): a ``Builder`` turns a variant's job into what is timed
(``build(job) -> Built``, or ``Done(Measurement)`` where the build failed; may run anywhere, several at once)
and a ``Timer`` verifies and times it (``time(built, bound) -> Measurement``, one at a time per machine or
GPU). A workers pool runs the same two steps apart: ``compile_step`` and ``time_step``, module-level
(picklable) functions that ``build`` and ``time`` call here.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar, Protocol

from .measurement import Config, Measurement


@dataclass(frozen=True, eq=False)
class Variant:
    """A configuration of a program for one target: what its runner builds (``build``: target-specific,
    e.g. the C target's OptimizeOptions), the parameters the generated code reads, and the text written
    for the user (rendered on first use: a runner may not need it)."""

    config: Config
    names: tuple[str, ...]  # the search parameters, in config's order
    build: object
    reads: frozenset[str]
    render: Callable[[], str]

    @cached_property
    def text(self) -> str:
        return self.render()

    @property
    def key(self) -> tuple:
        """What the generated code sees of the configuration: variants with one key run the same code."""
        return tuple(sorted((n, v) for n, v in zip(self.names, self.config) if n in self.reads))


class Built(Protocol):
    """What a build step gives the time step (the C target's ``Compiled``, CUDA's ``CudaCompiled``, Triton's
    ``Warmed``): ``generate_time``, the seconds it spent generating code before its compiler ran (0 where it
    generated none), reported per candidate."""

    generate_time: float


class Builder(Protocol):
    """Turns variants into builds: ``job`` (on the driver) gives what the build step needs, self-contained and
    picklable; ``build`` builds it (in any process, on any node, several at once)."""

    def job(self, variant: Variant) -> Any:
        """What *variant*'s build step needs (generated code or the options to generate it, the compiler)."""

    def build(self, job: Any) -> Any:
        """The built variant (the Built value the Timer takes), or ``Done(Measurement)`` where it failed."""


class Timer(Protocol):
    """Verifies a build against the original's results and times it, one timing at a time per machine or GPU."""

    def reference_data(self) -> Any:
        """What the time step needs of the original (its results), once the runner measured it."""

    def time(self, built: Any, bound: float | None = None) -> Measurement:
        """Verify and time *built*; *bound* as in ``Runner.measure``."""


class Runner(Builder, Timer, Protocol):
    """Builds, verifies and times the variants of one program: a Builder and a Timer, the original's
    measurement, one variant measured here (``measure``: build and time in this process), and the two steps as
    picklable functions for a workers pool, and ``keep`` (a timed build handed back by a pool: the runner keeps
    what it re-runs after the search). ``pooled_by_default``: tune --jobs's default (the cores) uses the pool
    (False: only where --jobs asks for it); ``local_only``: the time step needs this process (no Ray)."""

    pooled_by_default: ClassVar[bool]
    local_only: ClassVar[bool]
    compile_step: Callable[[Any], Any]  # a module-level function (or staticmethod): build(job)
    time_step: Callable[[Any, Any, Any], Measurement]  # (reference_data, bound, built) -> Measurement

    def reference(self) -> Measurement:
        """Run the original program: the results every variant must reproduce, and its time."""

    def measure(self, variant: Variant, bound: float | None = None) -> Measurement:
        """Verify and time a variant. *bound*: the best time so far, if any; a runner may stop timing a
        variant that is clearly slower than that (ErrorKind.PRUNED) instead of repeating it."""

    def keep(self, variant: Variant, measurement: Measurement, built: Built) -> None:
        """*variant*'s build, timed on a workers pool (*measurement*), handed back for the re-run after the search."""

    def close(self) -> None:
        """Release what the runner holds (temporary files, processes)."""


class TwoSteps:
    """``build`` and ``time`` from a runner's ``compile_step`` and ``time_step``, and the defaults of
    ``Runner``'s flags and ``keep`` (nothing kept): the base class of every runner."""

    pooled_by_default: ClassVar[bool] = True
    local_only: ClassVar[bool] = False
    compile_step: Callable[[Any], Any]
    time_step: Callable[[Any, Any, Any], Measurement]

    def reference_data(self) -> Any:  # pragma: no cover - every runner defines it
        raise NotImplementedError

    def build(self, job: Any) -> Any:
        return self.compile_step(job)

    def time(self, built: Any, bound: float | None = None) -> Measurement:
        return self.time_step(self.reference_data(), bound, built)

    def keep(self, variant: Variant, measurement: Measurement, built: Built) -> None:
        pass


class Memo:
    """Measures each distinct variant once: a variant with the key of one measured before (it differs
    only in parameters its code does not read) gets that measurement, marked ``same_as``."""

    def __init__(self, runner: Runner):
        self.runner = runner
        self._seen: dict[tuple, Measurement] = {}

    def measure(self, variant: Variant, bound: float | None = None) -> Measurement:
        same = self._seen.get(variant.key)
        if same is not None:  # the same code and launch: its measurement, not a second one
            return Measurement(variant.config, same.times, same.error, same.compile_time, same.detail,
                               same_as=same.config)
        m = self.runner.measure(variant, bound)
        self._seen[variant.key] = m
        return m
