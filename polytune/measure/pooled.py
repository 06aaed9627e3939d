"""Measuring candidates on workers (``polytune.workers``): compiles in parallel, one timing at a time.

The search sees a :class:`polytune.search.MappedPool`; behind it, each configuration becomes a variant of
its target, answered from the measurement cache when it is there, else submitted to the workers as two
steps: the runner's compile step (``compile_variant``: generate and compile, in a worker process or on any
node) and its time step (``time_variant``: verify against the original, then time, alone on a timer). The
pruning bound is the best time seen so far (:class:`Bound`), read when the timing starts.
"""
from __future__ import annotations

import dataclasses
import importlib
import threading
from collections.abc import Callable
from concurrent.futures import Future
from functools import partial
from typing import Any

from ..poly.islutil import ISL_LOCK
from .mapped import MappedPool
from .measurement import Config, Measurement


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


class _Shared:
    """The time step's reference on a Ray cluster: put in the object store once, fetched once per worker."""

    def __init__(self, data: Any):
        import ray
        self.ref = ray.put(data)


_FETCHED: dict[str, Any] = {}


def _time_shared(time_fn: Callable, shared: _Shared, bound: Bound, compiled: Any) -> Measurement:
    import ray
    key = shared.ref.hex()
    if key not in _FETCHED:
        while len(_FETCHED) >= 4:  # the latest searches' references (several tunes may share the timers)
            del _FETCHED[next(iter(_FETCHED))]
        _FETCHED[key] = ray.get(shared.ref)
    return time_fn(_FETCHED[key], bound, compiled)


class PooledMeasure:
    """The search's pool over a workers pool (``LocalPool`` or ``RayPool``) for one target and runner.

    *target* gives each configuration's variant; *runner* (its reference measured) gives the two steps:
    ``job(variant)``, ``compile_step`` and ``time_step``, with ``reference_data()``. *cache*: the measurement
    cache, read here before a candidate is submitted (writes stay with the caller, on the driver's thread).
    Each measurement's ``extra`` says which worker timed it (``worker``) and compiled it (``compiled_on``),
    and when (``spans``: wall-clock seconds of its submission, compile and timing, where each step ran, and
    ``generate``: the seconds of the compile that generated its code before the compiler ran).
    """

    def __init__(self, target, runner, names: tuple[str, ...], workers, cache=None, bound: Bound | None = None,
                 describe: Callable[[Config], str] = str, remote: bool = False, in_flight: int = 2):
        self.target = target
        self.runner = runner
        self.names = names
        self.workers = workers
        self.cache = cache
        self.bound = bound if bound is not None else Bound()
        self.describe = describe
        reference = runner.reference_data()
        if remote:  # a timer on another node: the reference travels once, through Ray's object store
            self.time_fn = partial(_time_shared, runner.time_step, _Shared(reference), self.bound)
        else:
            self.time_fn = partial(runner.time_step, reference, self.bound)
        self.compile_fn = runner.compile_step
        # in_flight: how many candidates the search keeps submitted (a compile per compile worker, and those
        # being timed); the search hands results back in its own order whatever finishes first. timers: how
        # many of them are timed at once (the search speculates only on timers its batch leaves idle)
        self.pool = MappedPool(self.submit, max(1, in_flight), self.convert,
                               timers=lambda: getattr(self.workers, "timers", 1), again=self.resubmit)
        self._seen: dict[tuple, tuple[Config, Future]] = {}  # variant key -> the first configuration and future
        warm = getattr(workers, "warm", None)  # a Ray pool: start its compile workers while the seed is measured
        if warm is not None:
            warm(importlib.import_module, getattr(runner.compile_step, "__module__", None) or "polytune")

    def submit(self, config: Config) -> Future:
        config = tuple(int(c) for c in config)
        with ISL_LOCK:  # a variant's options may come from isl (the schedule space's coordinates)
            variant = self.target.variant(self.names, config)
        first = self._seen.get(variant.key)
        if first is not None and not first[1].cancelled():
            return self._repeat(config, *first)
        cached = self.cache.get(config) if self.cache is not None else None
        if cached is not None:
            future: Future = Future()
            future.set_result(cached)
        else:
            with ISL_LOCK:
                job = self.runner.job(variant)
            future = self.workers.submit(self.compile_fn, self.time_fn, job, label=self.describe(config))
        self._seen[variant.key] = (config, future)
        if cached is None:
            future.add_done_callback(partial(self._keep, variant, config))
        return future

    def resubmit(self, config: Config) -> Future:
        """*config* compiled and timed again (the search's second measurement of an incumbent): never the
        cache's or an earlier submission's result."""
        config = tuple(int(c) for c in config)
        with ISL_LOCK:
            job = self.runner.job(self.target.variant(self.names, config))
        return self.workers.submit(self.compile_fn, self.time_fn, job, label=self.describe(config) + " (again)")

    def _keep(self, variant, config: Config, done: Future) -> None:
        """Hand a timed candidate's executable to the runner's kept builds (the re-run after the search takes
        it from there), and hold on to its result without it: the executables stay in one bounded place."""
        if done.cancelled() or done.exception() is not None:
            return
        result = done.result()
        if getattr(result, "artifact", None) is None:
            return
        kept = getattr(self.runner, "kept", None)
        if kept is not None:
            kept.offer(variant.build, result.value, result.artifact)
        light: Future = Future()
        light.set_result(dataclasses.replace(result, artifact=None))
        if self._seen.get(variant.key, (None, None))[1] is done:
            self._seen[variant.key] = (config, light)

    def _repeat(self, config: Config, first_config: Config, first: Future) -> Future:
        """A configuration that runs the same code as one submitted before (it differs only in parameters its
        code does not read): that one's measurement, marked ``same_as`` (a free repeat for the search)."""
        out: Future = Future()

        def copy(done: Future) -> None:
            if out.done():  # cancelled by the search meanwhile
                return
            if done.cancelled():  # the first was a discarded speculation: measure this one after all
                with ISL_LOCK:
                    key = self.target.variant(self.names, config).key
                self._seen.pop(key, None)
                inner = self.submit(config)
                inner.add_done_callback(lambda f: _relay(f, out))
                return
            if done.exception() is not None:
                out.set_exception(done.exception())
                return
            m = self.convert(done.result())
            out.set_result(Measurement(config, m.times, m.error, m.compile_time, m.detail, same_as=first_config))

        first.add_done_callback(copy)
        return out

    def convert(self, result) -> Measurement:
        if isinstance(result, Measurement):  # from the cache
            m = result
        else:
            m = result.value
            spans = {"submitted": round(result.submitted, 3), "compile": [round(t, 3) for t in result.compile_span]}
            if result.time_span is not None:
                spans["time"] = [round(t, 3) for t in result.time_span]
            generated = getattr(result.artifact, "generate_time", None)
            if generated:  # the compile span's first part: code generation, then the compiler (compile_time)
                spans["generate"] = round(generated, 3)
            extra = dict(m.extra, worker=result.worker, compiled_on=result.compiled_on, spans=spans)
            if result.attempts > 1:
                extra["attempts"] = result.attempts
            m = dataclasses.replace(m, extra=extra)
        self.bound.offer(m)
        return m


def _relay(source: Future, target: Future) -> None:
    if target.done():
        return
    if source.cancelled():
        target.cancel()
    elif source.exception() is not None:
        target.set_exception(source.exception())
    else:
        target.set_result(source.result())


__all__ = ["Bound", "PooledMeasure"]
