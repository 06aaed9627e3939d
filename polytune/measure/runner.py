"""What a target hands its runner, and the one interface every runner implements.

A runner builds, verifies and times variants of one program; it keeps no search state (the incumbent's
time arrives as an explicit pruning bound), so a runner that measures on several workers, or replays
recorded times, implements the same three methods.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Protocol

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


class Runner(Protocol):
    """Builds, verifies and times the variants of one program."""

    def reference(self) -> Measurement:
        """Run the original program: the results every variant must reproduce, and its time."""

    def measure(self, variant: Variant, bound: float | None = None) -> Measurement:
        """Verify and time a variant. *bound*: the best time so far, if any; a runner may stop timing a
        variant that is clearly slower than that (ErrorKind.PRUNED) instead of repeating it."""

    def close(self) -> None:
        """Release what the runner holds (temporary files, processes)."""


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
