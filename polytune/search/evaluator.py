"""The one door between strategies and the user's evaluate: memoizes, records and enforces the budget.

Strategies ask for one configuration (``ev(config, phase)``) or for a batch they already know they need
(``ev.stream(configs, phase)``: a best-fit neighbourhood, the grid, a random sample); a batch is measured
through a :class:`~polytune.search.pool.Pool`, several at once when the pool has several workers, and its
results come back in the batch's order, so the search's path does not depend on which finished first.
"""
from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import closing
from dataclasses import dataclass, replace

from polytune.measure.measurement import Config, Measurement
from polytune.search.budget import Budget, BudgetExhausted, StopReason
from polytune.search.compare import ImprovementTest, Verdict
from polytune.search.pool import Pool, SerialPool


@dataclass(frozen=True)
class EvalRecord:
    """One evaluation: its 1-based position, what was measured, and which phase/iteration asked for it."""

    index: int
    config: Config
    measurement: Measurement
    phase: str  # "seed", "hill", "hop", "sweep", "coordesc", "grid", "random"
    iteration: int  # incumbents accepted (after the seed) before this evaluation
    elapsed: float  # seconds since the search began, after this evaluation
    again: bool = False  # a second measurement of a configuration measured before (Evaluator.measure_again)


@dataclass(frozen=True)
class Step:
    """An accepted incumbent: the seed is iteration 0, each later incumbent adds one."""

    iteration: int
    config: Config
    measurement: Measurement
    phase: str  # the strategy's phase, or "best_measured" (adopted when the search stopped: keep_best)
    evals: int  # evaluations spent when it was accepted


class Evaluator:
    """Memoizing, budget-enforcing wrapper of ``evaluate(config) -> Measurement``.

    Also holds the incumbent and the trajectory, so every strategy reports progress the same way, and the
    improvement ``test`` of the running strategy (set by the strategy; default: a lower median), which
    :meth:`keep_best` applies when the search stops. With a ``pool``, measurements go through it
    (``evaluate`` may then be None); without one, ``evaluate`` is called in this thread.
    """

    def __init__(
        self,
        evaluate: Callable[[Config], Measurement] | None,
        budget: Budget,
        on_eval: Callable[[EvalRecord], object] | None = None,
        clock: Callable[[], float] = time.monotonic,
        pool: Pool | None = None,
    ):
        if pool is None:
            if evaluate is None:
                raise TypeError("an Evaluator needs an evaluate callable or a pool")
            pool = SerialPool(evaluate)
        self._pool = pool
        # speculative results a stream measured and did not hand out (first-fit stopped before them):
        # not evaluations; a later stream that needs one takes it instead of measuring again
        self._spare: dict[Config, Future[Measurement]] = {}
        self.budget = budget
        self._on_eval = on_eval
        self._clock = clock
        self._start = clock()
        self._memo: dict[Config, Measurement] = {}
        self.records: list[EvalRecord] = []
        self.trajectory: list[Step] = []
        self.seed: Measurement | None = None
        self.incumbent: Measurement | None = None
        self.iterations = 0
        self.test = ImprovementTest()
        self.measured_again: set[Config] = set()

    @property
    def elapsed(self) -> float:
        return self._clock() - self._start

    @property
    def evals(self) -> int:
        return len(self.records)

    @property
    def workers(self) -> int:
        """How many candidates the pool measures at once."""
        return self._pool.workers

    def seen(self, config: Sequence[int]) -> bool:
        return tuple(config) in self._memo

    def __call__(self, config: Sequence[int], phase: str,
                 guess: Callable[[list[Measurement]], Iterable[Sequence[int]]] | None = None) -> Measurement:
        """Measure ``config`` (free if already measured in this search); ``guess``: as for :meth:`stream`."""
        known = self._memo.get(tuple(int(v) for v in config))
        if known is not None:
            return known
        with closing(self.stream((config,), phase, guess=guess)) as results:
            return next(results)

    def _budget_left(self, reserved: int) -> StopReason | None:
        """Why no further evaluation may start while ``reserved`` started ones are not yet handed out."""
        limit = self.budget
        if limit.max_evals is not None and self.evals + reserved >= limit.max_evals:
            return StopReason.MAX_EVALS
        if limit.time_limit is not None and self.elapsed >= limit.time_limit:
            return StopReason.TIME_LIMIT
        return None

    def stream(
        self, configs: Iterable[Sequence[int]], phase: str, ahead: int | None = None,
        guess: Callable[[list[Measurement]], Iterable[Sequence[int]]] | None = None,
    ) -> Iterator[Measurement]:
        """Measure ``configs`` and yield their measurements in the given order (memoized ones free).

        Up to ``pool.workers`` candidates are measured at once. A measurement becomes an evaluation (memo,
        record, ``on_eval``, budget) when it is handed out, in order, so the records and the search's path are
        the same with one worker or many. ``ahead`` bounds how far past the one handed out next it may
        measure (None: the whole batch): first-fit passes the worker count and stops reading at the first
        improving neighbour; closing the stream then discards what was measured past it, which does not
        count (it is kept aside, and taken instead of a new measurement if a later stream needs it).

        ``guess(finished)``: speculation past the batch, for pools that time several candidates at once
        (``pool.timers`` > 1). Once every candidate of the batch has started, the configurations ``guess``
        returns for the batch's measurements finished so far (any order; e.g. the neighbourhood of the
        best-looking one) are started too, as far as the pool's workers and what the budget could still turn
        into evaluations allow: they compile ahead and take the timers the batch leaves idle (a pool times
        in submission order, so never before the batch). A speculative measurement is kept aside like
        first-fit's: it becomes an evaluation only if a later stream asks for its configuration (then in that
        stream's order); otherwise it is never recorded, cached or counted. A guess that changes cancels what
        it started and no timing has taken yet, and so does a later stream that does not need it.

        The budget stays exact: a candidate starts only while the evaluations so far plus those started and not
        yet handed out are below ``max_evals``, and before ``time_limit``. When the next candidate in order
        cannot start, :class:`BudgetExhausted` is raised there, as a one-at-a-time search would. On
        KeyboardInterrupt, measurements already finished are handed in (recorded) before it propagates.
        """
        order = [tuple(int(v) for v in c) for c in configs]
        self._drop_spare(set(order))
        pending: dict[int, Future[Measurement]] = {}  # position -> started, not yet handed out
        started: dict[Config, int] = {}  # config -> its position in pending
        speculative: dict[Config, Future[Measurement]] = {}  # started by guess, outside the batch
        nxt = 0  # the next position that may start
        try:
            for pos, config in enumerate(order):
                while True:
                    future = pending.get(pos)
                    if future is None and config in self._memo:
                        yield self._memo[config]
                        break
                    if future is not None and future.done():
                        del pending[pos], started[config]
                        measurement = self._claim(config, future.result(), phase)
                        yield measurement
                        break
                    nxt = max(nxt, pos)
                    while nxt < len(order) and (order[nxt] in self._memo or order[nxt] in started):
                        nxt += 1  # free or already started: nothing to start
                    running = sum(not f.done() for f in pending.values())
                    stop = self._budget_left(len(pending))
                    if (nxt < len(order) and stop is None and running < self.workers
                            and (ahead is None or nxt - pos < ahead)):
                        candidate = order[nxt]
                        pending[nxt] = self._spare.pop(candidate, None) or self._pool.submit(candidate)
                        started[candidate] = nxt
                        nxt += 1
                        continue
                    if future is None:  # the next in order cannot start: nothing after it has started either
                        raise BudgetExhausted(stop or StopReason.MAX_EVALS)
                    if guess is not None and nxt == len(order) and stop is None and self.workers > 1:
                        self._speculate(guess, order, pending, speculative)
                    concurrent.futures.wait([f for f in pending.values() if not f.done()],
                                            return_when=concurrent.futures.FIRST_COMPLETED)
        except KeyboardInterrupt:
            for pos in sorted(pending):  # what has finished is a measurement; keep it
                future = pending.pop(pos)
                if future.done() and not future.cancelled() and future.exception() is None:
                    self._claim(order[pos], future.result(), phase)
                elif not future.cancel():
                    self._spare[order[pos]] = future
            raise
        finally:
            for pos, future in pending.items():  # stopped early: set aside, never an evaluation
                if not future.cancel():
                    self._spare[order[pos]] = future
            self._spare.update(speculative)  # kept as they are: the next stream takes or cancels them

    @property
    def timers(self) -> int:
        """How many candidates the pool times at once (``pool.timers``)."""
        return max(1, int(self._pool.timers))

    def _speculate(self, guess, order: list[Config], pending: dict[int, Future[Measurement]],
                   speculative: dict[Config, Future[Measurement]]) -> None:
        """Start (or re-aim) the speculation of a stream whose batch has all started: see :meth:`stream`."""
        if self.timers < 2:  # one timer: never idle while the batch runs, and a wrong guess would hold it
            return
        finished = []
        for pos, config in enumerate(order):
            future = pending.get(pos)
            if future is None and config in self._memo:
                finished.append(self._memo[config])
            elif future is not None and future.done() and not future.cancelled() and future.exception() is None:
                m = future.result()
                finished.append(m if m.config == config else replace(m, config=config))
        batch = set(order)
        running = sum(not f.done() for f in pending.values())
        live = {c: f for c, f in speculative.items() if not f.cancelled()}
        room = self.workers - running - sum(not f.done() for f in live.values())
        if self.budget.max_evals is not None:  # no more than the budget could still use
            room = min(room, self.budget.max_evals - self.evals - len(pending) - len(live))
        want: list[Config] = []
        limit = len(live) + max(0, room)
        if limit:
            for c in guess(finished):
                c = tuple(int(v) for v in c)
                if c in batch or c in self._memo or c in self._spare or c in want:
                    continue
                want.append(c)
                if len(want) >= limit:
                    break
        for c, f in list(speculative.items()):  # the guess moved on: drop what no timer has taken yet
            if c not in want and f.cancel():
                del speculative[c]
        for c in want:
            if room <= 0:
                break
            if c not in speculative:
                speculative[c] = self._pool.submit(c)
                room -= 1

    def _drop_spare(self, keep: set[Config]) -> None:
        """Cancel the set-aside measurements not in ``keep`` that have not started (all: ``discard_spare``)."""
        for config, future in list(self._spare.items()):
            if config not in keep and future.cancel():
                del self._spare[config]

    def discard_spare(self) -> None:
        """The search is over: cancel what was measured ahead and has not started."""
        self._drop_spare(set())

    def _claim(self, config: Config, measurement: Measurement, phase: str) -> Measurement:
        """File a finished measurement: memo, and (unless it repeats a variant) a record and ``on_eval``."""
        if measurement.config != config:  # file it under the configuration that was asked for
            measurement = replace(measurement, config=config)
        self._memo[config] = measurement
        if measurement.same_as is not None:
            # the evaluator recognized the same variant as a configuration it already measured (it differs
            # only in parameters the selected code does not read): a repeat, free like a memoized one
            return measurement
        record = EvalRecord(self.evals + 1, config, measurement, phase, self.iterations, self.elapsed)
        self.records.append(record)
        if self._on_eval is not None:
            self._on_eval(record)
        return measurement

    def measure_again(self, measurement: Measurement, phase: str) -> Measurement:
        """Measure ``measurement``'s configuration once more (never from a memo or a cache: the pool's
        ``resubmit``), as an evaluation, and return it with the times of both measurements (the memo and, for
        the incumbent, ``incumbent`` updated). ``measurement`` unchanged where the pool cannot measure again,
        the budget allows no further evaluation, or the second measurement failed."""
        config = measurement.config
        self.measured_again.add(config)
        if not measurement.ok or self._budget_left(0) is not None:
            return measurement
        future = self._pool.resubmit(config)
        if future is None:
            return measurement
        fresh = future.result()
        if fresh.config != config:
            fresh = replace(fresh, config=config)
        record = EvalRecord(self.evals + 1, config, fresh, phase, self.iterations, self.elapsed, again=True)
        self.records.append(record)
        if self._on_eval is not None:
            self._on_eval(record)
        if not fresh.ok:
            return measurement
        both = replace(measurement, times=measurement.times + fresh.times)
        self._memo[config] = both
        if self.incumbent is not None and self.incumbent.config == config:
            self.incumbent = both
        return both

    def start(self, config: Sequence[int], then: Iterable[Sequence[int]] | None = None) -> Measurement:
        """Measure the seed and make it the starting incumbent, even if it failed. ``then``: what the strategy
        measures next whatever the seed's measurement (best fit: the seed's neighbourhood), started
        speculatively beside the seed where the pool has idle timers (see :meth:`stream`)."""
        after = None if then is None else list(then)
        measurement = self(config, "seed", None if after is None else (lambda finished: after))
        self.seed = self.incumbent = measurement
        self.trajectory.append(Step(0, measurement.config, measurement, "seed", self.evals))
        return measurement

    def accept(self, measurement: Measurement, phase: str, *, is_move: bool = True) -> None:
        """Make ``measurement`` the incumbent; a move of a local search counts toward max_iterations."""
        if not measurement.ok:
            raise ValueError(f"a failed measurement cannot become the incumbent: {measurement.config}")
        self.incumbent = measurement
        self.iterations += 1
        self.trajectory.append(Step(self.iterations, measurement.config, measurement, phase, self.evals))
        if is_move and self.iterations >= self.budget.max_iterations:
            raise BudgetExhausted(StopReason.MAX_ITERATIONS)

    def keep_best(self) -> None:
        """Called once the search has stopped, whatever stopped it: while a measured configuration beats the
        incumbent under ``test`` (the strategy's own move test), the fastest such one (lowest median; the
        earlier evaluated on a tie) becomes the incumbent, as a step of phase ``"best_measured"`` that is not
        a move. A neighbour measured just before the budget ran out is thus never lost."""
        while True:  # (a configuration measured twice is judged by both measurements' times: the memo's)
            measured = [self._memo.get(r.config, r.measurement) for r in self.records]
            beating = [m for m in measured if self.test(m, self.incumbent) is Verdict.BETTER]
            if not beating:
                return
            self.accept(min(beating, key=lambda m: m.value), "best_measured", is_move=False)
