"""Pools: how the evaluator measures candidates, one at a time or several at once.

A pool knows nothing of compiling or timing: it calls something that turns a configuration into a
:class:`Measurement` and hands the result back as a :class:`concurrent.futures.Future`. The evaluator
(:meth:`polytune.search.evaluator.Evaluator.stream`) submits every candidate a strategy already knows it will
need, at most ``workers`` of them unfinished at a time, keeps the budget, and hands results back to the
strategy in the strategy's order, so a search ends in the same place with one worker or many.

- :class:`SerialPool` (the default): ``evaluate`` runs inside ``submit``, in the caller's thread.
- :class:`ThreadPool`: ``workers`` threads call a thread-safe ``evaluate``; for evaluations that wait on
  something else (a compiler, a remote machine) rather than on Python.
- :class:`MappedPool` (``polytune.measure.mapped``, re-exported here): any other ``submit(config) -> Future[R]``
  (a compile-in-parallel or Ray pool with its steps bound), its results turned into Measurements by ``convert``;
  ``timers``: how many it times at once.

A pool of one's own implements the whole protocol (``workers``, ``timers``, ``submit``, ``resubmit``): the
evaluator calls what it declares and looks nothing up by name.
"""
from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Protocol, runtime_checkable

from polytune.errors import UsageError
from polytune.measure.mapped import MappedPool
from polytune.measure.measurement import Config, Measurement


@runtime_checkable
class Pool(Protocol):
    """Measures configurations in the background; ``workers`` is how many it measures at once.

    A pool whose candidates queue for fewer timers than it keeps in flight (compiles ahead) says so with
    ``timers`` (the library's pools: ``workers`` unless they time fewer at once): the evaluator speculates only
    where there are several, since a single timer is never idle while a batch runs. Candidates are timed in
    submission order."""

    workers: int

    @property
    def timers(self) -> int:
        """How many of the candidates in flight are timed at once."""
        ...

    def submit(self, config: Config) -> Future[Measurement]:
        """Start measuring ``config``; the future's result is its Measurement (or the exception evaluate
        raised). A future the evaluator cancels before it started is never measured."""
        ...

    def resubmit(self, config: Config) -> Future[Measurement] | None:
        """Measure ``config`` again, never from a memo or cache (``Evaluator.measure_again``); None: this pool
        cannot."""
        ...


class SerialPool:
    """One candidate at a time, measured inside :meth:`submit` (exceptions propagate from there)."""

    workers = 1
    timers = 1

    def __init__(self, evaluate: Callable[[Config], Measurement],
                 again: Callable[[Config], Measurement] | None = None):
        self._evaluate = evaluate
        self._again = again  # measures a configuration again (the pool's resubmit)

    def submit(self, config: Config) -> Future[Measurement]:
        future: Future[Measurement] = Future()
        future.set_result(self._evaluate(config))
        return future

    def resubmit(self, config: Config) -> Future[Measurement] | None:
        if self._again is None:
            return None
        future: Future[Measurement] = Future()
        future.set_result(self._again(config))
        return future


class ThreadPool:
    """``evaluate`` on ``workers`` threads (it must be thread-safe); close it, or use it as a context manager.

    Closing cancels the candidates not yet started and waits for those running (a thread cannot be stopped).
    """

    def __init__(self, evaluate: Callable[[Config], Measurement], workers: int,
                 again: Callable[[Config], Measurement] | None = None):
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise UsageError(f"workers must be a positive integer, got {workers!r}")
        self._evaluate = evaluate
        self._again = again  # measures a configuration again (resubmit)
        self.workers = workers
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="polytune-eval")

    @property
    def timers(self) -> int:
        """(Each thread measures its candidate whole: as many at once as workers.)"""
        return self.workers

    def submit(self, config: Config) -> Future[Measurement]:
        return self._executor.submit(self._evaluate, config)

    def resubmit(self, config: Config) -> Future[Measurement] | None:
        return None if self._again is None else self._executor.submit(self._again, config)

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> ThreadPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["MappedPool", "Pool", "SerialPool", "ThreadPool"]
