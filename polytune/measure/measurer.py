"""The one door from a search to a target's runner: ``Measurer.submit(config) -> Future[Measurement]``.

A ``Measurer`` owns what every measurement of one tune shares, whatever runs it: the persistent cache (read
before a candidate is measured), the duplicate memo (a configuration whose variant runs the same code as one
submitted before gets that measurement, marked ``same_as``) and the pruning ``Bound`` (the best time seen so
far). What it does not have it hands to its ``Slots``: ``InProcess`` (one slot: the runner measures the variant
in this process, inside ``submit``) or ``measure.pooled.PoolSlots`` (a workers pool: compiles in parallel, one
timing per timer). It is a search ``Pool`` (``workers``, ``timers``, ``submit``, ``resubmit``); writing the
cache is the caller's, on the measurements the search keeps (speculation it discards is never written).
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Protocol

from ..poly.islutil import ISL_LOCK
from .mapped import map_future
from .measurement import Config, Measurement
from .runner import Runner, Variant


class Bound:
    """The best time seen so far (the runner's pruning bound), shared by the driver and an in-process timer.
    Pickled (to a timer on another node) it travels as the value of that moment."""

    def __init__(self, value: float | None = None):
        self.value = value
        self._lock = threading.Lock()

    def offer(self, m: Measurement) -> None:
        """Lower the bound to *m*'s time if it is a measured, better one."""
        if m.ok and m.same_as is None:
            with self._lock:
                if self.value is None or m.value < self.value:
                    self.value = m.value

    def __getstate__(self) -> dict:
        return {"value": self.value}

    def __setstate__(self, state: dict) -> None:
        self.value = state["value"]
        self._lock = threading.Lock()


class VariantSource(Protocol):
    """What the measurer asks of a target: the variant of a configuration (``targets.base.Target.variant``)."""

    def variant(self, names: tuple[str, ...], config: Config) -> Variant: ...


class Slots(Protocol):
    """Where a measurer's candidates are built and timed: ``in_flight`` of them submitted at once, ``timers``
    of those timed at once. ``start`` measures a variant, ``again`` measures it once more (both read the pruning
    bound the slots were made with when the timing starts); *label* names it in the workers' progress."""

    in_flight: int

    @property
    def timers(self) -> int: ...

    def start(self, variant: Variant, label: str) -> Future[Measurement]: ...

    def again(self, variant: Variant, label: str) -> Future[Measurement]: ...


def _done(m: Measurement) -> Future[Measurement]:
    future: Future[Measurement] = Future()
    future.set_result(m)
    return future


class InProcess:
    """One slot: the runner builds, verifies and times the variant in this process, inside ``start`` (its
    exceptions, Ctrl-C included, propagate from there, as a one-at-a-time search expects)."""

    in_flight = 1
    timers = 1

    def __init__(self, runner: Runner, bound: Bound):
        self.runner = runner
        self.bound = bound

    def start(self, variant: Variant, label: str) -> Future[Measurement]:
        return _done(self.runner.measure(variant, self.bound.value))

    def again(self, variant: Variant, label: str) -> Future[Measurement]:
        return self.start(variant, label)


class Measurer:
    """Measures the configurations of one search space through *slots* (made with the same *bound*): the
    cache read first, each distinct variant measured once, the bound lowered by every measurement (see the
    module's docstring). *describe* names a configuration in the workers' progress lines."""

    def __init__(self, target: VariantSource, names: tuple[str, ...], slots: Slots, cache=None,
                 bound: Bound | None = None, describe: Callable[[Config], str] = str):
        self.target = target
        self.names = names
        self.slots = slots
        self.cache = cache
        self.bound = bound if bound is not None else Bound()
        self.describe = describe
        self._seen: dict[tuple, tuple[Config, Future[Measurement]]] = {}  # variant key -> first config, future

    # ---- the search's Pool ---------------------------------------------------------------------------------
    @property
    def workers(self) -> int:
        """How many candidates the search keeps submitted (a compile per compile worker and those being timed);
        the search hands results back in its own order whatever finishes first."""
        return max(1, self.slots.in_flight)

    @property
    def timers(self) -> int:
        """How many of them are timed at once (asked each time: a Ray pool's timers come and go)."""
        return max(1, min(self.workers, self.slots.timers))

    def submit(self, config: Config) -> Future[Measurement]:
        config = tuple(int(c) for c in config)
        with ISL_LOCK:  # a variant's options may come from isl (the schedule space's coordinates)
            variant = self.target.variant(self.names, config)
        first = self._seen.get(variant.key)
        if first is not None and not first[1].cancelled():
            return self._repeat(config, *first)
        cached = self.cache.get(config) if self.cache is not None else None
        if cached is not None:
            future = _done(self._offered(cached))
        else:
            future = map_future(self.slots.start(variant, self.describe(config)), self._offered)
        self._seen[variant.key] = (config, future)
        return future

    def resubmit(self, config: Config) -> Future[Measurement]:
        """*config* built and timed again (the search's second measurement of an incumbent): never the cache's
        or an earlier submission's result."""
        config = tuple(int(c) for c in config)
        with ISL_LOCK:
            variant = self.target.variant(self.names, config)
        return map_future(self.slots.again(variant, self.describe(config) + " (again)"), self._offered)

    def _offered(self, m: Measurement) -> Measurement:
        self.bound.offer(m)
        return m

    def _repeat(self, config: Config, first_config: Config, first: Future[Measurement]) -> Future[Measurement]:
        """A configuration that runs the same code as one submitted before (it differs only in parameters its
        code does not read): that one's measurement, marked ``same_as`` (a free repeat for the search)."""
        out: Future[Measurement] = Future()

        def copy(done: Future[Measurement]) -> None:
            if out.done():  # cancelled by the search meanwhile
                return
            if done.cancelled():  # the first was a discarded speculation: measure this one after all
                with ISL_LOCK:
                    key = self.target.variant(self.names, config).key
                self._seen.pop(key, None)
                inner = self.submit(config)
                inner.add_done_callback(lambda f: _relay(f, out))
                return
            error = done.exception()
            if error is not None:
                out.set_exception(error)
                return
            m = done.result()
            out.set_result(Measurement(config, m.times, m.error, m.compile_time, m.detail, same_as=first_config))

        first.add_done_callback(copy)
        return out


def _relay(source: Future, target: Future) -> None:
    if target.done():
        return
    if source.cancelled():
        target.cancel()
    elif source.exception() is not None:
        target.set_exception(source.exception())
    else:
        target.set_result(source.result())


__all__ = ["Bound", "InProcess", "Measurer", "Slots"]
