"""The Measurer: one door from the search to a runner, serial (one slot in this process) or on workers, with the
cache read first, each distinct variant measured once (repeats marked ``same_as``) and the pruning bound the
best time seen so far; the two kinds of slots answer a search alike."""
from __future__ import annotations

from concurrent.futures import Future

import pytest

from polytune.measure import Measurement, Variant
from polytune.measure.measurer import Bound, InProcess, Measurer
from polytune.measure.pooled import PoolSlots
from polytune.workers import WorkResult


class _Target:
    """The second parameter is read only when the first is 1 (as a schedule choice reads some tile sizes)."""

    def variant(self, names, config):
        reads = frozenset(names) if config[0] == 1 else frozenset(names[:1])
        return Variant(tuple(config), tuple(names), None, reads, lambda: "")


class _Runner:
    """Measures a configuration as the sum of its values, in this process or as a pool's two steps; remembers
    what it measured and the bound each measurement read, and what came back to keep."""

    def __init__(self, fail: BaseException | None = None):
        self.measured: list[tuple] = []
        self.bounds: list[float | None] = []
        self.kept: list[tuple] = []
        self.fail = fail

    def measure(self, variant, bound=None):
        if self.fail is not None:
            raise self.fail
        self.measured.append(variant.config)
        self.bounds.append(bound)
        return Measurement(variant.config, (float(sum(variant.config)),))

    def job(self, variant):
        return variant.config

    def reference_data(self):
        return "reference"

    @staticmethod
    def compile_step(config):
        return config

    @staticmethod
    def time_step(reference, bound, config):
        return Measurement(config, (float(sum(config)),))

    def keep(self, variant, measurement, built):
        self.kept.append((variant.config, measurement.value, built))


class _Workers:
    """A stand-in for polytune.workers' pools: runs both steps at once, names a worker, hands the build back."""

    timers = 1

    def __init__(self):
        self.submitted = []

    def submit(self, compile_fn, time_fn, payload, label=""):
        self.submitted.append(payload)
        built = compile_fn(payload)
        f = Future()
        f.set_result(WorkResult(len(self.submitted), label, time_fn(built), "box/timer", "box/c0", True, 1,
                                (0.0, 0.0), (0.0, 0.0), artifact=_Built(built)))
        return f


class _Built:
    def __init__(self, config):
        self.config = config
        self.generate_time = 0.25


class _Cache:
    def get(self, config):
        return Measurement(config, (0.5,), cached=True) if config == (1, 7) else None


def _serial(runner, cache=None):
    bound = Bound()
    return Measurer(_Target(), ("a", "b"), InProcess(runner, bound), cache, bound)


def _pooled(runner, workers, cache=None):
    bound = Bound()
    return Measurer(_Target(), ("a", "b"), PoolSlots(runner, workers, bound), cache, bound)


SEQUENCE = [(0, 1), (0, 2), (1, 7), (1, 2), (0, 5), (1, 2)]


def test_the_serial_measurer_reads_the_cache_and_measures_one_variant_once():
    runner = _Runner()
    m = _serial(runner, _Cache())
    first, again, cached, other = (m.submit(c).result() for c in [(0, 1), (0, 2), (1, 7), (1, 2)])
    assert runner.measured == [(0, 1), (1, 2)]
    assert first.same_as is None and first.value == 1.0
    assert again.same_as == (0, 1) and again.config == (0, 2) and again.times == first.times
    assert cached.cached and other.value == 3.0
    assert m.bound.value == 0.5  # the best time seen, cached ones included


def test_each_serial_measurement_reads_the_best_time_measured_before_it():
    runner = _Runner()
    m = _serial(runner)
    for config in [(0, 3), (1, 4), (1, 1), (1, 9)]:
        m.submit(config)
    assert runner.measured == [(0, 3), (1, 4), (1, 1), (1, 9)]
    assert runner.bounds == [None, 3.0, 3.0, 2.0]


def test_a_serial_measurement_that_raises_raises_from_submit_and_is_not_remembered():
    runner = _Runner(fail=KeyboardInterrupt())
    m = _serial(runner)
    with pytest.raises(KeyboardInterrupt):
        m.submit((0, 1))
    runner.fail = None
    assert m.submit((0, 1)).result().same_as is None and runner.measured == [(0, 1)]


def test_resubmit_measures_again_never_from_the_memo_or_the_cache():
    runner, workers = _Runner(), _Workers()
    serial, pooled = _serial(runner, _Cache()), _pooled(runner, workers, _Cache())
    for m in (serial, pooled):
        m.submit((1, 7))
        again = m.resubmit((1, 7)).result()
        assert not again.cached and again.same_as is None and again.value == 8.0
    assert runner.measured == [(1, 7)] and workers.submitted == [(1, 7)]


def test_serial_and_pooled_measurers_answer_a_sequence_alike():
    serial = _serial(_Runner(), _Cache())
    pooled = _pooled(_Runner(), _Workers(), _Cache())

    def answers(m):
        return [(r.config, r.times, r.same_as, r.cached) for r in (m.submit(c).result() for c in SEQUENCE)]
    assert answers(serial) == answers(pooled)
    assert serial.bound.value == pooled.bound.value == 0.5


def test_the_pooled_measurer_hands_each_timed_build_back_to_the_runner_and_says_where_it_ran():
    runner, workers = _Runner(), _Workers()
    m = _pooled(runner, workers)
    first = m.submit((0, 1)).result()
    m.resubmit((0, 1)).result()  # a second measurement: nothing more to keep
    assert [(c, v) for c, v, _ in runner.kept] == [((0, 1), 1.0)]
    assert first.extra == {"worker": "box/timer", "compiled_on": "box/c0",
                           "spans": {"submitted": 0.0, "compile": [0.0, 0.0], "time": [0.0, 0.0], "generate": 0.25}}


def test_a_repeat_of_a_cancelled_first_submission_is_measured_after_all():
    class Later(_Workers):
        def submit(self, compile_fn, time_fn, payload, label=""):
            self.submitted.append(payload)
            return Future()  # never started: the search may cancel it
    workers = Later()
    m = _pooled(_Runner(), workers)
    first = m.submit((0, 1))
    repeat = m.submit((0, 2))  # the same variant: waits for the first
    assert first.cancel()
    assert workers.submitted == [(0, 1), (0, 2)] and not repeat.done()
