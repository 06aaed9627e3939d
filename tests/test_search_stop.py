"""The best verified measurement survives whatever stops a search (issue 14, item 2), for every strategy."""
from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from polytune.measure.measurement import Config, ErrorKind, Measurement
from polytune.search import (
    STRATEGIES,
    Budget,
    ReplayEvaluator,
    SearchInterrupted,
    SearchOptions,
    SearchSpace,
    StopReason,
    run_search,
)
from polytune.search.compare import ImprovementTest, Verdict

SIDES = (8, 16, 32, 64)
SPACE = SearchSpace.from_domains({"a": SIDES, "b": SIDES})

# (strategy, options): every strategy and every variant of hill climbing
VARIANTS = [
    ("hill", SearchOptions(fit="best", degree=1)),
    ("hill", SearchOptions(fit="best", degree=2)),
    ("hill", SearchOptions(fit="best", degree=3)),
    ("hill", SearchOptions(fit="first", degree=1)),
    ("hill", SearchOptions(fit="first", degree=2)),
    ("hill", SearchOptions(fit="first", degree=3)),
    ("hill", SearchOptions(fit="best", shortest_hop=True)),
    ("hill", SearchOptions(fit="first", degree=2, shortest_hop=True)),
    ("coordesc", SearchOptions()),
    ("exhaustive", SearchOptions()),
    ("random", SearchOptions(samples=10, rng_seed=3)),
]
IDS = [f"{name}-{o.fit}-d{o.degree}{'-hop' if o.shortest_hop else ''}" if name == "hill" else name
       for name, o in VARIANTS]


def move_test(strategy: str, options: SearchOptions) -> ImprovementTest:
    """The test the strategy moves by (what decides "significantly faster" when it stops)."""
    if strategy == "hill":
        return ImprovementTest(options.alpha, options.threshold)
    if strategy == "coordesc":
        return ImprovementTest(options.alpha, options.eps)
    return ImprovementTest(None, 0.0)


def assert_best_kept(result, strategy: str, options: SearchOptions) -> None:
    """No measured configuration beats the result under the strategy's own test, and the result was measured."""
    test = move_test(strategy, options)
    for record in result.evaluations:
        assert test(record.measurement, result.best) is not Verdict.BETTER, (record.config, result.best)
    if any(r.measurement.ok for r in result.evaluations):
        assert result.best is not None and result.best in [r.measurement for r in result.evaluations]
    else:
        assert result.best is None


def random_surface(k: int, runs: int = 1) -> dict[Config, Measurement]:
    """A rugged replay table over SPACE (some failures); ``runs`` noisy times per configuration."""
    rng = random.Random(k)
    table = {}
    for config in SPACE.configs():
        if rng.random() < 0.1:
            table[config] = Measurement(config, error=ErrorKind.WRONG_ANSWER)
        else:
            base = rng.uniform(1.0, 20.0)
            table[config] = Measurement(config, tuple(base * (1 + rng.uniform(-0.05, 0.05)) for _ in range(runs)))
    return table


SURFACES = [random_surface(k) for k in range(4)] + [random_surface(k, runs=3) for k in range(4, 6)]


def issue_surface() -> dict[Config, tuple[float, ...]]:
    """Issue 14's reproduction: seed (32, 32) at 10 ms, its neighbour (16, 32) at 5 ms, the rest 20 ms."""
    records = {c: (20e-3,) for c in SPACE.configs()}
    records[(32, 32)] = (10e-3,)
    records[(16, 32)] = (5e-3,)
    return records


# --- the reproduction ----------------------------------------------------------------------------


@pytest.mark.parametrize("fit", ["best", "first"])
@pytest.mark.parametrize("degree", [1, 2, 3])
def test_issue_14_max_evals_7_keeps_the_faster_neighbour(fit, degree):
    result = run_search(SPACE, ReplayEvaluator(issue_surface()), "hill", seed=(32, 32),
                        options=SearchOptions(fit=fit, degree=degree), budget=Budget(max_evals=7))
    assert result.best_config == (16, 32)
    assert result.best.value == 5e-3
    assert result.evals <= 7


def test_issue_14_best_fit_degree_2_adopts_the_neighbour_after_the_budget_ran_out():
    result = run_search(SPACE, ReplayEvaluator(issue_surface()), "hill", seed=(32, 32),
                        options=SearchOptions(degree=2), budget=Budget(max_evals=7))
    assert result.stop_reason is StopReason.MAX_EVALS  # the first neighbourhood (8 neighbours) was cut short
    assert [s.config for s in result.trajectory] == [(32, 32), (16, 32)]
    assert result.trajectory[-1].phase == "best_measured"
    assert result.iterations == 1


def test_an_insignificantly_faster_neighbour_does_not_replace_the_incumbent():
    # the same test as the moves: with alpha, a lower median that the t-test does not confirm is not taken
    records = {c: (20.0, 20.5, 19.5) for c in SPACE.configs()}
    records[(32, 32)] = (10.0, 11.0, 9.0)
    records[(16, 32)] = (9.9, 10.9, 8.9)  # lower median, overlapping runs
    result = run_search(SPACE, ReplayEvaluator(records), "hill", seed=(32, 32),
                        options=SearchOptions(degree=2, alpha=0.05), budget=Budget(max_evals=3))
    assert result.stop_reason is StopReason.MAX_EVALS and result.best_config == (32, 32)
    records[(16, 32)] = (5.0, 5.1, 4.9)  # significantly faster
    result = run_search(SPACE, ReplayEvaluator(records), "hill", seed=(32, 32),
                        options=SearchOptions(degree=2, alpha=0.05), budget=Budget(max_evals=3))
    assert result.best_config == (16, 32)


# --- every stopping reason, every strategy -------------------------------------------------------


def run_variant(strategy: str, options: SearchOptions, evaluate: Callable, **kwargs):
    """The search's result, also when it was interrupted (then it comes with the SearchInterrupted raised)."""
    seed = None if strategy == "random" else (32, 32)  # random without a seed, exhaustive with one
    try:
        return run_search(SPACE, evaluate, strategy, seed=seed, options=options, **kwargs)
    except SearchInterrupted as interrupt:
        assert isinstance(interrupt, KeyboardInterrupt)  # a caller that does not know it is interrupted
        return interrupt.result


@pytest.mark.parametrize(("strategy", "options"), VARIANTS, ids=IDS)
def test_max_evals_keeps_the_best(strategy, options):
    stopped = 0
    for records in SURFACES + [{c: Measurement(c, t) for c, t in issue_surface().items()}]:
        for max_evals in range(1, SPACE.size + 1):
            result = run_variant(strategy, options, ReplayEvaluator(records), budget=Budget(max_evals=max_evals))
            assert result.evals <= max_evals
            assert_best_kept(result, strategy, options)
            stopped += result.stop_reason is StopReason.MAX_EVALS
    assert stopped > 0


@pytest.mark.parametrize(("strategy", "options"), VARIANTS, ids=IDS)
def test_time_limit_keeps_the_best(strategy, options):
    stopped = 0
    for records in SURFACES:
        for limit in range(1, SPACE.size + 1):
            now = [0.0]
            replay = ReplayEvaluator(records)

            def timed(config: Config, replay=replay, now=now) -> Measurement:
                now[0] += 1.0  # each evaluation takes one (fake) second
                return replay(config)

            result = run_variant(strategy, options, timed, budget=Budget(time_limit=limit - 0.5),
                                 clock=lambda now=now: now[0])
            assert_best_kept(result, strategy, options)
            stopped += result.stop_reason is StopReason.TIME_LIMIT
    assert stopped > 0


@pytest.mark.parametrize(("strategy", "options"), VARIANTS, ids=IDS)
def test_keyboard_interrupt_keeps_the_best(strategy, options):
    for records in SURFACES:
        for at in range(1, SPACE.size + 1):
            replay = ReplayEvaluator(records)
            calls = [0]

            def interrupted(config: Config, replay=replay, calls=calls, at=at) -> Measurement:
                calls[0] += 1
                if calls[0] == at:
                    raise KeyboardInterrupt
                return replay(config)

            result = run_variant(strategy, options, interrupted)
            if calls[0] < at:  # the search ended before the interrupt
                assert result.stop_reason is not StopReason.INTERRUPTED
            else:
                assert result.stop_reason is StopReason.INTERRUPTED
                assert result.evals == at - 1  # the evaluation in progress is lost, nothing else
            assert_best_kept(result, strategy, options)


@pytest.mark.parametrize(("strategy", "options"), VARIANTS[:9], ids=IDS[:9])
def test_max_iterations_keeps_the_best(strategy, options):
    stopped = 0
    for records in SURFACES:
        for cap in (1, 2, 3):
            result = run_variant(strategy, options, ReplayEvaluator(records), budget=Budget(max_iterations=cap))
            assert_best_kept(result, strategy, options)
            stopped += result.stop_reason is StopReason.MAX_ITERATIONS
    assert stopped > 0


@pytest.mark.parametrize(("strategy", "options"), VARIANTS, ids=IDS)
def test_a_search_that_ends_by_itself_keeps_the_best(strategy, options):
    # converged (local searches), or exhausted (the scans; a local search that measured the whole space)
    for records in SURFACES:
        result = run_variant(strategy, options, ReplayEvaluator(records))
        assert result.stop_reason in (StopReason.CONVERGED, StopReason.NO_SIGNIFICANT_IMPROVEMENT,
                                      StopReason.EXHAUSTED)
        assert_best_kept(result, strategy, options)
    tiny = SearchSpace.from_domains({"a": (8, 16)})
    for name in STRATEGIES:
        result = run_search(tiny, ReplayEvaluator({(8,): (2.0,), (16,): (1.0,)}), name, seed=(8,),
                            options=options if name == strategy else SearchOptions())
        assert result.best_config == (16,) and result.evals == 2


def test_interrupt_during_the_seed_leaves_no_best():
    def interrupted(config: Config) -> Measurement:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as interrupt:
        run_search(SPACE, interrupted, "hill", seed=(32, 32))
    result = interrupt.value.result
    assert result.stop_reason is StopReason.INTERRUPTED
    assert result.best is None and result.evals == 0
