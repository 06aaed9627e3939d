"""The Measurer: one door from the search to a runner, serial (one slot in this process) or on workers, with the
cache read first, each distinct variant measured once (repeats marked ``same_as``) and the pruning bound the
best time seen so far; the two kinds of slots answer a search alike."""
from __future__ import annotations

from concurrent.futures import Future

import pytest
from fakes import FakeRunner, FakeTarget, FakeWorkers

from polytune.measure import Measurement
from polytune.measure.measurer import Bound, InProcess, Measurer
from polytune.measure.pooled import PoolSlots


class _Cache:
    def get(self, config):
        return Measurement(config, (0.5,), cached=True) if config == (1, 7) else None


def _serial(runner, cache=None):
    bound = Bound()
    return Measurer(FakeTarget(), ("a", "b"), InProcess(runner, bound), cache, bound)


def _pooled(runner, workers, cache=None):
    bound = Bound()
    return Measurer(FakeTarget(), ("a", "b"), PoolSlots(runner, workers, bound), cache, bound)


SEQUENCE = [(0, 1), (0, 2), (1, 7), (1, 2), (0, 5), (1, 2)]


def test_the_serial_measurer_reads_the_cache_and_measures_one_variant_once():
    runner = FakeRunner()
    m = _serial(runner, _Cache())
    first, again, cached, other = (m.submit(c).result() for c in [(0, 1), (0, 2), (1, 7), (1, 2)])
    assert runner.measured == [(0, 1), (1, 2)]
    assert first.same_as is None and first.value == 1.0
    assert again.same_as == (0, 1) and again.config == (0, 2) and again.times == first.times
    assert cached.cached and other.value == 3.0
    assert m.bound.value == 0.5  # the best time seen, cached ones included


def test_each_serial_measurement_reads_the_best_time_measured_before_it():
    runner = FakeRunner()
    m = _serial(runner)
    for config in [(0, 3), (1, 4), (1, 1), (1, 9)]:
        m.submit(config)
    assert runner.measured == [(0, 3), (1, 4), (1, 1), (1, 9)]
    assert runner.bounds == [None, 3.0, 3.0, 2.0]


def test_a_serial_measurement_that_raises_raises_from_submit_and_is_not_remembered():
    runner = FakeRunner(fail=KeyboardInterrupt())
    m = _serial(runner)
    with pytest.raises(KeyboardInterrupt):
        m.submit((0, 1))
    runner.fail = None
    assert m.submit((0, 1)).result().same_as is None and runner.measured == [(0, 1)]


def test_resubmit_measures_again_never_from_the_memo_or_the_cache():
    runner, workers = FakeRunner(), FakeWorkers()
    serial, pooled = _serial(runner, _Cache()), _pooled(runner, workers, _Cache())
    for m in (serial, pooled):
        m.submit((1, 7))
        again = m.resubmit((1, 7)).result()
        assert not again.cached and again.same_as is None and again.value == 8.0
    assert runner.measured == [(1, 7)] and workers.submitted == [(1, 7)]


def test_serial_and_pooled_measurers_answer_a_sequence_alike():
    serial = _serial(FakeRunner(), _Cache())
    pooled = _pooled(FakeRunner(), FakeWorkers(), _Cache())

    def answers(m):
        return [(r.config, r.times, r.same_as, r.cached) for r in (m.submit(c).result() for c in SEQUENCE)]
    assert answers(serial) == answers(pooled)
    assert serial.bound.value == pooled.bound.value == 0.5


def test_the_pooled_measurer_hands_each_timed_build_back_to_the_runner_and_says_where_it_ran():
    runner, workers = FakeRunner(), FakeWorkers()
    m = _pooled(runner, workers)
    first = m.submit((0, 1)).result()
    m.resubmit((0, 1)).result()  # a second measurement: nothing more to keep
    assert [(c, v) for c, v, _ in runner.kept] == [((0, 1), 1.0)]
    assert first.extra == {"worker": "box/timer", "compiled_on": "box/c0",
                           "spans": {"submitted": 0.0, "compile": [0.0, 0.0], "time": [0.0, 0.0], "generate": 0.25}}


def test_a_repeat_of_a_cancelled_first_submission_is_measured_after_all():
    class Later(FakeWorkers):
        def submit(self, compile_fn, time_fn, payload, label=""):
            self.submitted.append(payload)
            return Future()  # never started: the search may cancel it
    workers = Later()
    m = _pooled(FakeRunner(), workers)
    first = m.submit((0, 1))
    repeat = m.submit((0, 2))  # the same variant: waits for the first
    assert first.cancel()
    assert workers.submitted == [(0, 1), (0, 2)] and not repeat.done()
