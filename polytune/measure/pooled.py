"""A measurer's slots on a workers pool (``polytune.workers``): compiles in parallel, one timing per timer.

Behind ``measure.measurer.Measurer`` (which reads the cache and answers repeats), each variant becomes a job
submitted to the workers as two steps: the runner's compile step (e.g. ``compile_variant``: generate and
compile, in a worker process or on any node) and its time step (``time_variant``: verify against the original,
then time, alone on a timer). The pruning bound (``measurer.Bound``) is read when the timing starts.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from concurrent.futures import Future
from functools import partial
from typing import Any

from ..poly.islutil import ISL_LOCK
from ..steps import Latest, WorkerState, this_process
from ..workers.base import WorkerPool, WorkResult
from .mapped import map_future
from .measurement import Measurement
from .measurer import Bound
from .runner import Built, Runner, Variant


class _Shared:
    """The time step's reference on a Ray cluster: put in the object store once, fetched once per worker."""

    def __init__(self, data: Any):
        import ray
        self.ref = ray.put(data)


class Fetched(Latest[str, Any]):
    """A worker's part of its ``WorkerState``: the references it fetched, the latest searches' (several tunes
    may share the timers)."""

    def __init__(self) -> None:
        super().__init__(4)


def _time_shared(time_fn: Callable, shared: _Shared, bound: Bound, compiled: Any,
                 state: WorkerState | None = None) -> Measurement:
    """The time step with its reference fetched from the object store, once per worker process (*state*)."""
    import ray
    fetched = (state or this_process()).part(Fetched)
    key = shared.ref.hex()
    data = fetched.get(key)
    if data is None:
        data = fetched.put(key, ray.get(shared.ref))
    return time_fn(data, bound, compiled)


class PoolSlots:
    """The slots of a workers pool (``LocalPool`` or ``RayPool``) for one runner (its reference measured): the
    runner's ``job(variant)``, ``compile_step`` and ``time_step`` with its ``reference_data()``. Each
    measurement's ``extra`` says which worker timed it (``worker``) and compiled it (``compiled_on``), and when
    (``spans``: wall-clock seconds of its submission, compile and timing, where each step ran, and ``generate``:
    the seconds of the compile that generated its code before the compiler ran). A timed build comes back to the
    runner (``Runner.keep``); the measurement holds none of it."""

    def __init__(self, runner: Runner, workers: WorkerPool, bound: Bound, remote: bool = False,
                 in_flight: int = 2):
        self.runner = runner
        self.workers = workers
        self.in_flight = in_flight  # a compile per compile worker, and those being timed
        reference = runner.reference_data()
        if remote:  # a timer on another node: the reference travels once, through Ray's object store
            self.time_fn = partial(_time_shared, runner.time_step, _Shared(reference), bound)
        else:
            self.time_fn = partial(runner.time_step, reference, bound)
        self.compile_fn = runner.compile_step

    @property
    def timers(self) -> int:
        return self.workers.timers

    def start(self, variant: Variant, label: str) -> Future[Measurement]:
        return self._submit(variant, label, keep=True)

    def again(self, variant: Variant, label: str) -> Future[Measurement]:
        return self._submit(variant, label, keep=False)

    def _submit(self, variant: Variant, label: str, keep: bool) -> Future[Measurement]:
        with ISL_LOCK:
            job = self.runner.job(variant)
        future = self.workers.submit(self.compile_fn, self.time_fn, job, label=label)
        if keep:
            future.add_done_callback(partial(self._keep, variant))
        return map_future(future, convert)

    def _keep(self, variant: Variant, done: Future) -> None:
        """Hand a timed candidate's build to the runner (the re-run after the search takes it from there)."""
        if done.cancelled() or done.exception() is not None:
            return
        result: WorkResult = done.result()
        if result.artifact is not None:
            self.runner.keep(variant, result.value, result.artifact)


def convert(result: WorkResult) -> Measurement:
    """A pool's result as the measurement, with where and when its steps ran (``PoolSlots``)."""
    m = result.value
    spans = {"submitted": round(result.submitted, 3), "compile": [round(t, 3) for t in result.compile_span]}
    if result.time_span is not None:
        spans["time"] = [round(t, 3) for t in result.time_span]
    built: Built | None = result.artifact
    if built is not None and built.generate_time:  # the compile span's first part: code generation, then the
        spans["generate"] = round(built.generate_time, 3)  # compiler (compile_time)
    extra = dict(m.extra, worker=result.worker, compiled_on=result.compiled_on, spans=spans)
    if result.attempts > 1:
        extra["attempts"] = result.attempts
    return dataclasses.replace(m, extra=extra)


__all__ = ["PoolSlots"]
