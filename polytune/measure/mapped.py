"""A search pool (``polytune.search.Pool``) over any ``submit(config) -> Future[R]``, and ``map_future``, the
conversion of one future's result that it and the measurer's workers slots (``measure.pooled``) share. It
lives here, below ``search/``; the search re-exports ``MappedPool``."""
from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from ..errors import UsageError
from .measurement import Config, Measurement


class _Mapped(Future):
    """The evaluator's side of an inner future: cancelling it cancels the inner one (if not yet started). Once
    finished it lets the inner one go (with whatever its result holds that the mapped one does not)."""

    def __init__(self, inner: Future):
        super().__init__()
        self._inner: Future | None = inner

    def cancel(self) -> bool:
        inner = self._inner
        return inner is not None and inner.cancel() and super().cancel()


def map_future(inner: Future, convert: Callable[[Any], Any]) -> Future:
    """A future of ``convert(inner's result)``: the inner one's exception or cancellation passed on, an exception
    of ``convert`` as the result's; cancelling it cancels the inner one where that has not started."""
    outer = _Mapped(inner)

    def finished(done: Future) -> None:
        if done.cancelled():
            Future.cancel(outer)
            return
        error = done.exception()
        if error is None:
            try:
                result = convert(done.result())
            except BaseException as exc:  # convert failed: the search sees it as evaluate raising
                error = exc
        outer._inner = None
        if error is not None:
            outer.set_exception(error)
        else:
            outer.set_result(result)

    inner.add_done_callback(finished)
    return outer


class MappedPool:
    """A :class:`Pool` over ``submit(config) -> Future[R]`` and ``convert(R) -> Measurement``.

    For a pool that knows nothing of configurations (e.g. one running a compile step and a timing step on
    a payload): bind its steps in ``submit``, unwrap its result in ``convert``. An exception of the inner
    future or of ``convert`` reaches the search through the future, as one of ``evaluate`` would.
    """

    def __init__(self, submit: Callable[[Config], Future], workers: int,
                 convert: Callable[[Any], Measurement] = lambda result: result,
                 timers: int | Callable[[], int] | None = None,
                 again: Callable[[Config], Future] | None = None):
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise UsageError(f"workers must be a positive integer, got {workers!r}")
        self._submit = submit
        self._again = again  # submits a configuration to be measured again (resubmit)
        self._convert = convert
        self.workers = workers
        self._timers = timers

    @property
    def timers(self) -> int:
        """How many of the ``workers`` candidates in flight are timed at once (a callable: asked each time,
        for pools whose timers come and go); default: all of them."""
        timers = self._timers() if callable(self._timers) else self._timers
        return self.workers if timers is None else max(1, min(self.workers, timers))

    def submit(self, config: Config) -> Future[Measurement]:
        return self._mapped(self._submit(config))

    def resubmit(self, config: Config) -> Future[Measurement] | None:
        return None if self._again is None else self._mapped(self._again(config))

    def _mapped(self, inner: Future) -> Future[Measurement]:
        return map_future(inner, self._convert)
