"""Batches of candidates measured at once (issue 18): same results with 1 and 8 workers, exact budgets."""
from __future__ import annotations

import random
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polytune.errors import UsageError
from polytune.measure.measurement import Config, ErrorKind, Measurement
from polytune.search import (
    Budget,
    BudgetExhausted,
    Evaluator,
    MappedPool,
    Pool,
    SearchInterrupted,
    SearchOptions,
    SearchSpace,
    SerialPool,
    StopReason,
    ThreadPool,
    run_search,
)

SIDES = (8, 16, 32, 64)
SPACE2 = SearchSpace.from_domains({"a": SIDES, "b": SIDES})
SPACE3 = SearchSpace.from_domains({"s": ("pluto", "outer", "none"), "a": SIDES, "b": SIDES})

VARIANTS = [
    ("hill", SearchOptions(fit="best", degree=1)),
    ("hill", SearchOptions(fit="best", degree=2)),
    ("hill", SearchOptions(fit="best", degree=3)),
    ("hill", SearchOptions(fit="first", degree=1)),
    ("hill", SearchOptions(fit="first", degree=2)),
    ("hill", SearchOptions(fit="first", degree=3)),
    ("hill", SearchOptions(fit="best", degree=2, shortest_hop=True)),
    ("hill", SearchOptions(fit="first", shortest_hop=True)),
    ("coordesc", SearchOptions()),
    ("exhaustive", SearchOptions()),
    ("random", SearchOptions(samples=12, rng_seed=5)),
]
IDS = [f"{name}-{o.fit}-d{o.degree}{'-hop' if o.shortest_hop else ''}" if name == "hill" else name
       for name, o in VARIANTS]


class Jittered:
    """A thread-safe replay whose evaluations take a few pseudo-random milliseconds, so a pool of threads
    finishes them out of order; records the order of calls and of completions, and the peak concurrency."""

    def __init__(self, table: dict[Config, Measurement], scale: float = 0.002):
        self.table = table
        self.scale = scale
        self.lock = threading.Lock()
        self.calls: Counter[Config] = Counter()
        self.started: list[Config] = []
        self.finished: list[Config] = []
        self.running = self.peak = 0

    def __call__(self, config: Config) -> Measurement:
        with self.lock:
            self.calls[config] += 1
            self.started.append(config)
            self.running += 1
            self.peak = max(self.peak, self.running)
        time.sleep(self.scale * (hash(config) % 5))
        with self.lock:
            self.running -= 1
            self.finished.append(config)
        return self.table.get(config, Measurement(config, error=ErrorKind.RUNTIME, detail="not recorded"))


def surface(space: SearchSpace, k: int) -> dict[Config, Measurement]:
    rng = random.Random(k)
    table = {}
    for config in space.configs():
        if rng.random() < 0.1:
            table[config] = Measurement(config, error=ErrorKind.COMPILE)
        else:
            table[config] = Measurement(config, (rng.uniform(1.0, 20.0),))
    return table


def summary(result) -> tuple:
    return (result.best_config, result.stop_reason, [s.config for s in result.trajectory],
            [(r.config, r.phase, r.iteration) for r in result.evaluations])


def seed_for(strategy: str, space: SearchSpace) -> Config | None:
    return None if strategy == "random" else space.config_at(space.size // 2 + 1)


def run_both(space, table, strategy, options, budget, workers=8):
    seed = seed_for(strategy, space)
    serial = run_search(space, Jittered(table, 0.0), strategy, seed, options, budget)
    replay = Jittered(table)
    with ThreadPool(replay, workers) as pool:
        parallel = run_search(space, None, strategy, seed, options, budget, pool=pool)
    return serial, parallel, replay


# --- determinism ---------------------------------------------------------------------------------


@pytest.mark.parametrize("workers", [4, 8])
@pytest.mark.parametrize(("strategy", "options"), VARIANTS, ids=IDS)
def test_one_worker_and_four_or_eight_end_in_the_same_place(strategy, options, workers):
    # best fit speculates on idle workers (the likely next neighbourhood): same path all the same
    for space in (SPACE2, SPACE3):
        for k in range(2):
            table = surface(space, k)
            for budget in (Budget(), Budget(max_evals=5), Budget(max_evals=13), Budget(max_iterations=2)):
                serial, parallel, replay = run_both(space, table, strategy, options, budget, workers)
                assert summary(parallel) == summary(serial), (space.names, k, budget)
                if budget.max_evals is not None:
                    assert parallel.evals <= budget.max_evals
                assert all(n == 1 for n in replay.calls.values())  # nothing measured twice


def test_the_pool_really_finishes_out_of_order_and_in_parallel():
    table = surface(SPACE3, 0)
    serial, parallel, replay = run_both(SPACE3, table, "hill", SearchOptions(degree=3), Budget())
    assert summary(parallel) == summary(serial)
    assert replay.finished != replay.started  # completions came back in another order than submissions
    assert replay.peak > 1


# --- the budget ----------------------------------------------------------------------------------


NO_SPECULATION = [(name, replace(o, speculate=False)) for name, o in VARIANTS if o.fit == "best" or name != "hill"]


@pytest.mark.parametrize(("strategy", "options"), NO_SPECULATION)
def test_batches_never_start_more_than_max_evals(strategy, options):
    # without speculation (coordesc still measures ahead) every measurement started is an evaluation
    table = surface(SPACE3, 3)
    for max_evals in range(1, 30, 4):
        serial, parallel, replay = run_both(SPACE3, table, strategy, options, Budget(max_evals=max_evals))
        assert parallel.evals <= max_evals
        if strategy != "coordesc":
            assert sum(replay.calls.values()) == parallel.evals
        assert summary(parallel) == summary(serial)


class Downhill:
    """Cost |a - 8| + |b - 8| + |c - 8| on 1..16: each best-fit step moves one down. Configurations nearer the
    optimum take 5 ms, the others 60 ms, so a 4-thread pool has idle threads while a batch's slow ones run.
    Records what had been measured (started) when each evaluation was handed out."""

    SPACE = SearchSpace.from_domains({"a": range(1, 17), "b": range(1, 17), "c": range(1, 17)})

    def __init__(self):
        self.lock = threading.Lock()
        self.calls: Counter[Config] = Counter()
        self.called_at_hand_out: list[set[Config]] = []

    def cost(self, config: Config) -> int:
        return sum(abs(v - 8) for v in config)

    def __call__(self, config: Config) -> Measurement:
        with self.lock:
            self.calls[config] += 1
        time.sleep(0.005 if self.cost(config) < 12 else 0.06)
        return Measurement(config, (float(self.cost(config)),))

    def on_eval(self, record) -> None:
        with self.lock:
            self.called_at_hand_out.append(set(self.calls))


def test_best_fit_measures_the_next_neighbourhood_on_idle_workers_and_counts_only_what_it_uses():
    seed = (14, 14, 14)  # cost 18: six steps down to cost 12 and below
    serial = run_search(Downhill.SPACE, Downhill(), "hill", seed, SearchOptions(), Budget(max_evals=40))
    replay = Downhill()
    with ThreadPool(replay, 4) as pool:
        parallel = run_search(Downhill.SPACE, None, "hill", seed, SearchOptions(), Budget(max_evals=40),
                              on_eval=replay.on_eval, pool=pool)
    assert summary(parallel) == summary(serial)
    assert max(replay.calls.values()) == 1
    evals = parallel.evaluations
    # some evaluation of a later step had been measured before the step before it was complete: speculation
    # that was used (it is an evaluation where the next step asked for it, not when it was measured)
    used = [r for r in evals if r.iteration > 0 and any(
        r.config in replay.called_at_hand_out[q.index - 1] for q in evals if q.iteration == r.iteration - 1)]
    assert used
    assert len(replay.called_at_hand_out[0]) > 1  # the seed's neighbourhood started beside the seed
    assert set(replay.calls) >= {r.config for r in evals}  # and what was not used was never recorded


def test_no_speculation_without_idle_timers():
    # a pool that keeps 4 candidates in flight but times one at a time: best fit never guesses ahead
    replay = Downhill()
    with ThreadPoolExecutor(max_workers=4) as threads:
        pool = MappedPool(lambda config: threads.submit(replay, config), 4, timers=1)
        result = run_search(Downhill.SPACE, None, "hill", (14, 14, 14), SearchOptions(), Budget(max_evals=40),
                            pool=pool)
    assert sum(replay.calls.values()) == result.evals


def test_speculation_stays_within_what_the_budget_could_use():
    for max_evals in (7, 12, 19):
        replay = Downhill()
        with ThreadPool(replay, 4) as pool:
            result = run_search(Downhill.SPACE, None, "hill", (14, 14, 14), SearchOptions(),
                                Budget(max_evals=max_evals), pool=pool)
        assert result.evals == max_evals
        assert sum(replay.calls.values()) <= max_evals + 4  # a wrong guess costs at most the idle workers


def test_first_fit_speculation_is_discarded_and_does_not_count():
    table = surface(SPACE3, 4)
    options = SearchOptions(fit="first", degree=2)
    seen = []
    serial = run_search(SPACE3, Jittered(table, 0.0), "hill", (1, 32, 32), options)
    replay = Jittered(table)
    with ThreadPool(replay, 6) as pool:
        parallel = run_search(SPACE3, None, "hill", (1, 32, 32), options, on_eval=seen.append, pool=pool)
    assert summary(parallel) == summary(serial)
    assert seen == list(parallel.evaluations)  # on_eval never sees a discarded measurement
    assert sum(replay.calls.values()) > parallel.evals  # it did measure ahead
    assert max(replay.calls.values()) == 1  # and never measured anything twice


def test_results_marked_as_repeats_free_a_slot_in_a_batch():
    # configurations with a = 8 repeat the variant of (8, 8): free, as in a one-at-a-time search
    def evaluate(config: Config) -> Measurement:
        a, b = config
        if a == 8 and b != 8:
            return Measurement(config, (30.0,), extra={"same_as": [8, 8]})
        return Measurement(config, (float(abs(a - 16) + abs(b - 32) + 1),))

    for max_evals in (3, 6, 9):
        serial = run_search(SPACE2, evaluate, "exhaustive", budget=Budget(max_evals=max_evals))
        with ThreadPool(evaluate, 8) as pool:
            parallel = run_search(SPACE2, None, "exhaustive", budget=Budget(max_evals=max_evals), pool=pool)
        assert summary(parallel) == summary(serial)
        assert parallel.evals == max_evals


def test_time_limit_with_a_pool_keeps_the_best():
    table = surface(SPACE3, 5)
    replay = Jittered(table, 0.01)
    with ThreadPool(replay, 4) as pool:
        result = run_search(SPACE3, None, "exhaustive", budget=Budget(time_limit=0.05), pool=pool)
    assert result.stop_reason is StopReason.TIME_LIMIT
    assert 0 < result.evals < SPACE3.size
    assert all(r.measurement.value >= result.best.value for r in result.evaluations)


def test_keyboard_interrupt_in_a_worker_keeps_what_finished():
    table = surface(SPACE3, 6)
    calls = [0]
    lock = threading.Lock()

    interrupted = []

    def evaluate(config: Config) -> Measurement:
        with lock:
            calls[0] += 1
            n = calls[0]
        if n == 20:
            interrupted.append(config)
            raise KeyboardInterrupt
        return table[config]

    with ThreadPool(evaluate, 4) as pool, pytest.raises(SearchInterrupted) as interrupt:
        run_search(SPACE3, None, "hill", (1, 32, 32), SearchOptions(degree=3), pool=pool)
    result = interrupt.value.result
    assert result.stop_reason is StopReason.INTERRUPTED
    assert 0 < result.evals < 20 + 4  # the other workers' candidates finished; the interrupted one is lost
    assert interrupted[0] not in [r.config for r in result.evaluations]
    for record in result.evaluations:
        assert result.best.value <= record.measurement.value


# --- the evaluator's stream ----------------------------------------------------------------------


def test_stream_hands_out_in_order_memoized_and_duplicates_free():
    replay = Jittered({(c,): Measurement((c,), (float(c),)) for c in range(10)})
    with ThreadPool(replay, 4) as pool:
        ev = Evaluator(None, Budget(), pool=pool)
        ev((3,), "x")
        got = [m.config for m in ev.stream([(5,), (3,), (1,), (5,), (7,)], "y")]
    assert got == [(5,), (3,), (1,), (5,), (7,)]
    assert [r.config for r in ev.records] == [(3,), (5,), (1,), (7,)]
    assert replay.calls == Counter({(3,): 1, (5,): 1, (1,): 1, (7,): 1})


def test_stream_raises_where_a_serial_search_would():
    ev = Evaluator(lambda c: Measurement(c, (1.0,)), Budget(max_evals=3))
    got = []
    with pytest.raises(BudgetExhausted) as stop:
        for m in ev.stream([(1,), (2,), (3,), (4,), (5,)], "x"):
            got.append(m.config)
    assert stop.value.reason is StopReason.MAX_EVALS
    assert got == [(1,), (2,), (3,)] and ev.evals == 3


def test_a_closed_stream_keeps_its_speculation_aside_for_later():
    replay = Jittered({(c,): Measurement((c,), (float(c),)) for c in range(10)}, 0.0)
    with ThreadPool(replay, 4) as pool:
        ev = Evaluator(None, Budget(), pool=pool)
        stream = ev.stream([(1,), (2,), (3,), (4,)], "x", ahead=4)
        assert next(stream).config == (1,)
        stream.close()
        assert ev.evals == 1  # (2,), (3,), (4,) were measured ahead, not handed out
        assert [m.config for m in ev.stream([(3,), (2,)], "y")] == [(3,), (2,)]
    assert ev.evals == 3 and max(replay.calls.values()) == 1


# --- pools ---------------------------------------------------------------------------------------


def test_pools_follow_the_protocol():
    assert isinstance(SerialPool(lambda c: Measurement(c, (1.0,))), Pool)
    with ThreadPool(lambda c: Measurement(c, (1.0,)), 2) as pool:
        assert isinstance(pool, Pool) and pool.workers == 2
        assert pool.submit((4,)).result().value == 1.0


@pytest.mark.parametrize("workers", [0, -1, 1.5, True])
def test_thread_pool_needs_a_positive_worker_count(workers):
    with pytest.raises(UsageError):
        ThreadPool(lambda c: Measurement(c, (1.0,)), workers)


def test_an_exception_in_evaluate_propagates_through_the_pool():
    def evaluate(config: Config) -> Measurement:
        if config == (16, 16):
            raise ValueError("broken harness")
        return Measurement(config, (1.0,))

    with ThreadPool(evaluate, 4) as pool, pytest.raises(ValueError, match="broken harness"):
        run_search(SPACE2, None, "exhaustive", pool=pool)


def test_an_evaluator_needs_evaluate_or_a_pool():
    with pytest.raises(TypeError):
        Evaluator(None, Budget())


def test_closing_a_thread_pool_cancels_what_has_not_started():
    entered, gate = threading.Event(), threading.Event()

    def evaluate(config: Config) -> Measurement:
        entered.set()
        gate.wait(5)
        return Measurement(config, (1.0,))

    pool = ThreadPool(evaluate, 1)
    futures = [pool.submit((i,)) for i in range(4)]
    assert entered.wait(5)
    threading.Timer(0.05, gate.set).start()
    pool.close()  # waits for the one running
    assert futures[0].result().value == 1.0
    assert all(f.cancelled() for f in futures[1:])


def test_a_thread_pool_search_on_a_mixed_space_with_a_plain_evaluate():
    # the helper takes a plain evaluate(config) and a worker count; nothing else changes for the caller
    space = SearchSpace.from_domains({"fusion": ("max", "smart", "none"), "T": SIDES})

    def evaluate(config: Config) -> Measurement:
        fusion, tile = space.decode(config).values()
        return Measurement(config, ({"max": 3, "smart": 1, "none": 2}[fusion] + abs(tile - 16) / 8,))

    with ThreadPool(evaluate, 3) as pool:
        result = run_search(space, None, "hill", ("max", 64), SearchOptions(degree=2), pool=pool)
    assert space.decode(result.best_config) == {"fusion": "smart", "T": 16}
    assert summary(result) == summary(run_search(space, evaluate, "hill", ("max", 64), SearchOptions(degree=2)))


def test_a_mapped_pool_adapts_a_pool_of_other_results():
    # an inner pool that knows nothing of Measurements (as polytune.workers' pools return WorkResults)
    table = surface(SPACE3, 7)
    replay = Jittered(table)
    with ThreadPoolExecutor(max_workers=5) as inner:
        pool = MappedPool(lambda config: inner.submit(lambda: ("work", replay(config))), 5,
                          convert=lambda result: result[1])
        assert isinstance(pool, Pool)
        parallel = run_search(SPACE3, None, "hill", (1, 32, 32), SearchOptions(fit="first", degree=2), pool=pool)
    serial = run_search(SPACE3, Jittered(table, 0.0), "hill", (1, 32, 32), SearchOptions(fit="first", degree=2))
    assert summary(parallel) == summary(serial)


def test_cancelling_a_mapped_future_cancels_the_inner_one():
    entered, gate = threading.Event(), threading.Event()

    def slow(config: Config) -> Measurement:
        entered.set()
        gate.wait(5)
        return Measurement(config, (1.0,))

    with ThreadPoolExecutor(max_workers=1) as inner:
        inners = []

        def submit(config: Config):
            inners.append(inner.submit(slow, config))
            return inners[-1]

        pool = MappedPool(submit, 1)
        first, second = pool.submit((1,)), pool.submit((2,))
        assert entered.wait(5)
        assert not first.cancel()  # running: cannot be cancelled
        assert second.cancel() and inners[1].cancelled()
        gate.set()
        assert first.result().value == 1.0


def test_a_failing_convert_reaches_the_search():
    with ThreadPoolExecutor(max_workers=2) as inner:
        pool = MappedPool(lambda config: inner.submit(lambda: config), 2, convert=lambda result: 1 / 0)
        with pytest.raises(ZeroDivisionError):
            run_search(SPACE2, None, "exhaustive", pool=pool)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(1, 30)), min_size=48, max_size=48),
       st.sampled_from(range(len(VARIANTS))), st.one_of(st.none(), st.integers(1, 30)), st.sampled_from([2, 4, 8]))
def test_any_surface_any_budget_any_worker_count_gives_the_serial_result(costs, variant, max_evals, workers):
    # equal costs included: ties must be broken the same way whatever finished first
    table = {c: Measurement(c, error=ErrorKind.TIMEOUT) if t is None else Measurement(c, (float(t),))
             for c, t in zip(SPACE3.configs(), costs)}
    strategy, options = VARIANTS[variant]
    serial, parallel, _ = run_both(SPACE3, table, strategy, options, Budget(max_evals=max_evals), workers)
    assert summary(parallel) == summary(serial)


# --- the incumbent measured again before the climb stops (SearchOptions.again) ----------------------------


def _lucky_seed_table() -> tuple[SearchSpace, dict]:
    """A 1-D space whose seed (8) measures lucky once (0.85 s; 1.0 s whenever measured again): its neighbour
    16 (0.9 s) only beats it once the seed is measured again; 32 is the optimum."""
    space = SearchSpace.from_domains({"a": (8, 16, 32, 64)})
    true = {8: 1.0, 16: 0.9, 32: 0.8, 64: 0.85}
    return space, {(a,): Measurement((a,), (t, t, t)) for a, t in true.items()}


def test_a_lucky_first_measurement_of_the_incumbent_does_not_end_the_climb():
    space, table = _lucky_seed_table()
    first = dict(table)
    first[8,] = Measurement((8,), (0.85, 0.85, 0.85))
    stopped = run_search(space, first.__getitem__, "hill", (8,), SearchOptions(), pool=SerialPool(first.__getitem__))
    assert stopped.best_config == (8,)  # without a second measurement: stuck at the lucky seed
    result = run_search(space, None, "hill", (8,), SearchOptions(),
                        pool=SerialPool(first.__getitem__, table.__getitem__))
    assert result.best_config == (32,)
    again = [r for r in result.evaluations if r.again]
    assert [r.config for r in again] == [(8,), (32,)]  # once per incumbent where it stalled
    assert result.seed.config == (8,) and len(result.evaluations) == len({r.config for r in result.evaluations}) + 2


def test_measuring_again_is_skipped_without_budget_and_with_no_again():
    space, table = _lucky_seed_table()
    pool = SerialPool(table.__getitem__, table.__getitem__)
    assert not any(r.again for r in run_search(space, None, "hill", (8,), SearchOptions(again=False),
                                                pool=pool).evaluations)
    result = run_search(space, None, "hill", (8,), SearchOptions(), Budget(max_evals=2), pool=pool)
    assert result.evals == 2 and not any(r.again for r in result.evaluations)


@pytest.mark.parametrize("workers", [1, 4])
def test_replayed_measurements_measured_again_end_in_the_same_place_with_any_worker_count(workers):
    space = SearchSpace.from_domains({"a": (8, 16, 32, 64, 128), "b": (8, 16, 32, 64, 128)})
    rng = random.Random(5)
    table = {c: Measurement(c, tuple(rng.uniform(0.5, 1.5) for _ in range(3))) for c in space.configs()}
    if workers == 1:
        result = run_search(space, None, "hill", (32, 32), SearchOptions(),
                            pool=SerialPool(table.__getitem__, table.__getitem__))
    else:
        with ThreadPool(table.__getitem__, workers, table.__getitem__) as pool:
            result = run_search(space, None, "hill", (32, 32), SearchOptions(), pool=pool)
    serial = run_search(space, None, "hill", (32, 32), SearchOptions(),
                        pool=SerialPool(table.__getitem__, table.__getitem__))
    assert result.best_config == serial.best_config and [r.config for r in result.evaluations] == \
        [r.config for r in serial.evaluations] and any(r.again for r in result.evaluations)
