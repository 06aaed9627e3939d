"""Search strategies on synthetic cost surfaces and replayed measurements (deterministic, no hardware)."""
from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polytune.errors import UsageError
from polytune.measure import Config, ErrorKind, Measurement
from polytune.search import (
    STRATEGIES,
    Budget,
    BudgetExhausted,
    Evaluator,
    Parameter,
    ReplayEvaluator,
    SearchOptions,
    SearchSpace,
    StopReason,
    Verdict,
    improves,
    parse_domain,
    pow2_domain,
    run_search,
)
from polytune.search.replay import save_records
from polytune.search.strategies import scaled

POW2_64 = (1, 2, 4, 8, 16, 32, 64)


def surface(cost: Callable[..., float], fails: Callable[..., bool] = lambda *c: False):
    """An evaluate function of a deterministic cost, counting calls per configuration."""
    calls: Counter[Config] = Counter()

    def evaluate(config: Config) -> Measurement:
        calls[config] += 1
        if fails(*config):
            return Measurement(config, error=ErrorKind.COMPILE, detail="synthetic failure")
        return Measurement(config, (float(cost(*config)),))

    evaluate.calls = calls  # type: ignore[attr-defined]
    return evaluate


def table(costs: dict[Config, float], default: float) -> Callable[[Config], Measurement]:
    return surface(lambda *c: costs.get(tuple(c), default))


def space2(values: tuple[int, ...] = (1, 2, 4, 8, 16)) -> SearchSpace:
    return SearchSpace.from_domains({"u": values, "v": values})


def configs_of(result) -> list[Config]:
    return [step.config for step in result.trajectory]


# --- hill climbing ---------------------------------------------------------------------------------


def test_hill_abs_b_minus_15_ends_at_16():
    space = SearchSpace((Parameter("B", POW2_64),))
    result = run_search(space, surface(lambda b: abs(b - 15)), "hill", seed=(32,))
    assert result.best_config == (16,)
    assert result.stop_reason is StopReason.CONVERGED
    assert configs_of(result) == [(32,), (16,)]
    assert result.seed.config == (32,) and result.iterations == 1


# Fig. 5: from (4, 4), neighbour (8, 4) improves a little and comes first in first-fit order;
# (4, 2) improves more and leads on to a better local minimum (4, 1).
FIG5 = {(4, 4): 10, (2, 4): 11, (8, 4): 9, (4, 2): 5, (4, 8): 12, (4, 1): 3}


def test_best_fit_and_first_fit_end_in_different_minima():
    space = space2()
    first = run_search(space, table(FIG5, 100), seed=(4, 4), options=SearchOptions(fit="first"))
    best = run_search(space, table(FIG5, 100), seed=(4, 4), options=SearchOptions(fit="best"))
    assert configs_of(first) == [(4, 4), (8, 4)]
    assert configs_of(best) == [(4, 4), (4, 2), (4, 1)]
    # first-fit stopped evaluating the first neighbourhood at the improving (8, 4)
    assert [r.config for r in first.evaluations[:3]] == [(4, 4), (2, 4), (8, 4)]


def test_degree_2_escapes_where_degree_1_stops():
    costs = {(4, 4): 10, (8, 8): 5, (16, 16): 1}  # only diagonal moves improve
    space = space2()
    one = run_search(space, table(costs, 20), seed=(4, 4), options=SearchOptions(degree=1))
    two = run_search(space, table(costs, 20), seed=(4, 4), options=SearchOptions(degree=2))
    assert one.best_config == (4, 4) and one.stop_reason is StopReason.CONVERGED
    assert two.best_config == (16, 16)


def test_neighbourhood_sizes_and_order():
    assert len(space2().neighbours((4, 4), degree=2)) == 8
    cube = SearchSpace.from_domains({n: (1, 2, 4) for n in "abc"})
    assert len(cube.neighbours((2, 2, 2), degree=3)) == 26
    assert len(set(cube.neighbours((2, 2, 2), degree=3))) == 26
    assert space2().neighbours((1, 1)) == ((2, 1), (1, 2))  # corner: only larger values
    assert space2().neighbours((4, 4)) == ((2, 4), (8, 4), (4, 2), (4, 8))
    assert space2().neighbours((4, 4), degree=2)[4:] == ((2, 2), (2, 8), (8, 2), (8, 8))
    assert space2().neighbours((4, 4), degree=3) == space2().neighbours((4, 4), degree=2)


def test_neighbours_of_a_value_outside_the_domain():
    space = SearchSpace((Parameter("T", (2, 4, 8, 16, 32)),))
    assert space.neighbours((18,)) == ((16,), (32,))
    assert space.neighbours((18,), hop=True) == ((16,), (20,))
    assert space.neighbours((2,), hop=True) == ((4,),)  # 0 lies below the domain
    assert space.neighbours((32,), hop=True) == ((30,),)  # 34 lies above it


@pytest.mark.parametrize("seed", [(32,), (16,)])
def test_shortest_hop_finds_18(seed):
    space = SearchSpace((Parameter("T", (2, 4, 8, 16, 32)),))
    evaluate = surface(lambda t: abs(t - 18) + 1)
    plain = run_search(space, evaluate, seed=seed)
    assert plain.best_config == (16,)
    hop = run_search(space, surface(lambda t: abs(t - 18) + 1), seed=seed,
                     options=SearchOptions(shortest_hop=True))
    assert hop.best_config == (18,)
    assert hop.trajectory[-1].phase == "hop"
    assert {r.config for r in hop.evaluations if r.phase == "hop"} == {(14,), (18,), (20,)}


def test_shortest_hop_keeps_going_while_it_improves():
    space = SearchSpace((Parameter("T", (2, 4, 8, 16, 32)),))
    result = run_search(space, surface(lambda t: abs(t - 22)), seed=(16,),
                        options=SearchOptions(shortest_hop=True))
    assert configs_of(result) == [(16,), (18,), (20,), (22,)]


# A plateau (a row reduction's blocks of 64-256 threads with a warp per row): neighbours 2-3% apart, runs
# overlapping, so no single step is significant; 32 threads is 3% faster than 256 with runs that do not overlap.
PLATEAU_RUNS = {32: (1.00, 1.01, 0.99, 1.005, 0.995), 64: (1.02, 1.04, 1.00, 1.03, 1.01),
                128: (1.015, 1.035, 0.995, 1.025, 1.005), 256: (1.03, 1.05, 1.01, 1.04, 1.02),
                512: (1.03, 1.05, 1.01, 1.04, 1.02), 1024: (1.04, 1.06, 1.02, 1.05, 1.03)}
PLATEAU = {(b, w): tuple(t * (1.0 if w else 3.0) for t in runs) for b, runs in PLATEAU_RUNS.items() for w in (0, 1)}


def test_a_sweep_after_converging_crosses_a_plateau_no_single_step_can():
    space = SearchSpace((Parameter("block", (32, 64, 128, 256, 512, 1024)), Parameter("warp", (0, 1))))
    plain = run_search(space, ReplayEvaluator(PLATEAU), seed=(256, 0), options=SearchOptions(alpha=0.05))
    assert plain.best_config == (256, 1)  # the warp per row, then no neighbour significantly faster
    swept = run_search(space, ReplayEvaluator(PLATEAU), seed=(256, 0), options=SearchOptions(alpha=0.05, sweep=True))
    assert swept.best_config == (32, 1)
    # the block's other values but those the climb measured (128, 512), then the warp's other value there
    assert [r.config for r in swept.evaluations if r.phase == "sweep"] == [(32, 1), (64, 1), (1024, 1), (32, 0)]
    assert swept.evals == plain.evals + 4


def test_a_sweep_that_finds_nothing_faster_ends_the_search_where_the_climb_did():
    space = SearchSpace((Parameter("T", (2, 4, 8, 16, 32)),))
    plain = run_search(space, surface(lambda t: abs(t - 8) + 1), seed=(32,))
    swept = run_search(space, surface(lambda t: abs(t - 8) + 1), seed=(32,), options=SearchOptions(sweep=True))
    assert swept.best_config == plain.best_config == (8,)
    assert [r.config for r in swept.evaluations if r.phase == "sweep"] == [(2,)]  # the only value not measured


# --- statistics and stopping ---------------------------------------------------------------------

NOISY = {
    (1,): (2.0, 2.1, 1.9, 2.05, 1.95),
    (2,): (1.00, 1.10, 0.90, 1.05, 0.95),
    (4,): (0.99, 1.09, 0.89, 1.04, 0.94),  # median a bit lower, runs overlap
}


def test_insignificant_improvement_stops_the_search():
    space = SearchSpace((Parameter("B", (1, 2, 4)),))
    result = run_search(space, ReplayEvaluator(NOISY), seed=(2,), options=SearchOptions(alpha=0.05))
    assert result.best_config == (2,)
    assert result.stop_reason is StopReason.NO_SIGNIFICANT_IMPROVEMENT
    # without the test the lower median wins
    plain = run_search(space, ReplayEvaluator(NOISY), seed=(2,))
    assert plain.best_config == (4,) and plain.stop_reason is StopReason.CONVERGED


def test_significant_improvement_is_taken():
    records = dict(NOISY)
    records[(4,)] = (0.50, 0.51, 0.49, 0.52, 0.48)
    space = SearchSpace((Parameter("B", (1, 2, 4)),))
    result = run_search(space, ReplayEvaluator(records), seed=(2,), options=SearchOptions(alpha=0.05))
    assert result.best_config == (4,) and result.stop_reason is StopReason.CONVERGED


def test_improvement_test_falls_back_to_threshold():
    old = Measurement((1,), (1.0, 1.0))
    new = Measurement((2,), (0.9, 0.9))  # zero variance: no t-test possible
    assert improves(new, old, alpha=0.05, threshold=0.0) is Verdict.BETTER
    assert improves(new, old, alpha=0.05, threshold=0.2) is Verdict.INSIGNIFICANT
    assert improves(Measurement((2,), (0.9,)), Measurement((1,), (1.0,)), None, 0.0) is Verdict.BETTER
    assert improves(old, new, None, 0.0) is Verdict.WORSE
    failed = Measurement((3,), error=ErrorKind.TIMEOUT)
    assert improves(failed, old, None, 0.0) is Verdict.WORSE
    assert improves(old, failed, None, 0.0) is Verdict.BETTER
    assert improves(old, None, None, 0.0) is Verdict.BETTER


def test_iteration_cap_ends_a_long_descent():
    space = SearchSpace((Parameter("B", POW2_64),))
    result = run_search(space, surface(lambda b: b), seed=(64,), budget=Budget(max_iterations=2))
    assert result.stop_reason is StopReason.MAX_ITERATIONS
    assert configs_of(result) == [(64,), (32,), (16,)]


def test_max_evals_holds_and_repeats_are_free():
    space = space2(POW2_64)
    evaluate = surface(lambda u, v: abs(u - 15) + abs(v - 3))
    result = run_search(space, evaluate, seed=(64, 64), budget=Budget(max_evals=7))
    assert result.stop_reason is StopReason.MAX_EVALS
    assert result.evals == 7 == sum(evaluate.calls.values())
    assert max(evaluate.calls.values()) == 1


def test_evaluator_memoizes_and_raises_when_exhausted():
    evaluate = surface(lambda b: b)
    ev = Evaluator(evaluate, Budget(max_evals=2))
    ev((1,), "x"), ev((2,), "x"), ev((1,), "x")
    assert ev.evals == 2 and evaluate.calls[(1,)] == 1
    with pytest.raises(BudgetExhausted) as stop:
        ev((4,), "x")
    assert stop.value.reason is StopReason.MAX_EVALS


def test_time_limit_holds():
    now = [0.0]

    def slow(config: Config) -> Measurement:
        now[0] += 1.0  # each evaluation takes one (fake) second
        return Measurement(config, (float(sum(config)),))

    result = run_search(space2(POW2_64), slow, seed=(64, 64), budget=Budget(time_limit=3.5),
                        clock=lambda: now[0])
    assert result.stop_reason is StopReason.TIME_LIMIT
    assert result.evals == 4 and result.elapsed == 4.0


def test_on_eval_sees_every_evaluation():
    seen = []
    result = run_search(space2(), table(FIG5, 100), seed=(4, 4), on_eval=seen.append)
    assert seen == list(result.evaluations)
    assert [r.index for r in seen] == list(range(1, len(seen) + 1))
    assert seen[0].phase == "seed" and seen[0].iteration == 0


# --- failures -------------------------------------------------------------------------------------


def test_failed_candidates_are_skipped():
    space = SearchSpace((Parameter("B", POW2_64),))
    result = run_search(space, surface(lambda b: abs(b - 15), fails=lambda b: b in (64, 8)), seed=(32,))
    assert result.best_config == (16,) and result.stop_reason is StopReason.CONVERGED
    assert any(not r.measurement.ok for r in result.evaluations)
    assert all(step.measurement.ok for step in result.trajectory)


@pytest.mark.parametrize("fit", ["best", "first"])
def test_failing_seed_moves_to_a_finite_neighbour(fit):
    space = SearchSpace((Parameter("B", POW2_64),))
    result = run_search(space, surface(lambda b: abs(b - 15), fails=lambda b: b == 32), seed=(32,),
                        options=SearchOptions(fit=fit))
    assert not result.seed.ok
    assert result.best_config == (16,)


def test_everything_failing_leaves_no_best():
    space = SearchSpace((Parameter("B", POW2_64),))
    result = run_search(space, surface(lambda b: b, fails=lambda b: True), seed=(32,))
    assert result.best is None and result.stop_reason is StopReason.CONVERGED
    assert result.evals == 3


# --- exhaustive, random, coordinate descent -------------------------------------------------------


def grid_costs(space: SearchSpace) -> dict[Config, tuple[float, ...]]:
    return {c: (float((7 * i) % 13 + 1),) for i, c in enumerate(space.configs())}


def test_exhaustive_finds_the_global_minimum_once_each():
    space = SearchSpace.from_domains({"a": (1, 2, 4, 8), "b": (8, 16, 24)})
    replay = ReplayEvaluator(grid_costs(space))
    result = run_search(space, replay, "exhaustive")
    costs = grid_costs(space)
    assert result.best_config == min(costs, key=costs.get)
    assert [r.config for r in result.evaluations] == list(space.configs())
    assert set(replay.calls.values()) == {1} and len(replay.calls) == space.size == 12
    assert result.stop_reason is StopReason.EXHAUSTED and result.seed is None


def test_random_search_takes_n_from_the_quantile_guarantee():
    assert SearchOptions().sample_count() == 60
    assert SearchOptions(quantile=0.1, delta=0.01).sample_count() == 47
    space = SearchSpace.from_domains({"a": tuple(range(1, 11)), "b": tuple(range(1, 11))})
    replay = ReplayEvaluator(grid_costs(space))
    result = run_search(space, replay, "random", options=SearchOptions(rng_seed=7))
    configs = [r.config for r in result.evaluations]
    assert len(configs) == 60 == len(set(configs))
    assert set(replay.calls.values()) == {1}
    again = run_search(space, ReplayEvaluator(grid_costs(space)), "random", options=SearchOptions(rng_seed=7))
    assert [r.config for r in again.evaluations] == configs
    other = run_search(space, ReplayEvaluator(grid_costs(space)), "random", options=SearchOptions(rng_seed=8))
    assert [r.config for r in other.evaluations] != configs
    costs = grid_costs(space)
    assert result.best.value == min(costs[c][0] for c in configs)


def test_random_search_covering_the_grid_is_exhaustive():
    space = SearchSpace.from_domains({"a": (1, 2, 4), "b": (1, 2)})
    result = run_search(space, ReplayEvaluator(grid_costs(space)), "random", options=SearchOptions(samples=6))
    assert [r.config for r in result.evaluations] == list(space.configs())


def test_coordesc_doubles_and_halves():
    space = space2(POW2_64)
    result = run_search(space, surface(lambda u, v: abs(u - 8) + abs(v - 4)), "coordesc", seed=(1, 1))
    assert configs_of(result) == [(1, 1), (2, 1), (2, 2), (4, 2), (4, 4), (8, 4)]
    assert result.stop_reason is StopReason.CONVERGED
    assert all(r.phase == "coordesc" for r in result.evaluations[1:])


def test_coordesc_respects_eps():
    space = SearchSpace((Parameter("B", POW2_64),))
    evaluate = table({(8,): 1.0, (16,): 0.9995}, 2.0)  # 0.05 % faster: below the default eps of 0.1 %
    assert run_search(space, evaluate, "coordesc", seed=(8,)).best_config == (8,)
    taken = run_search(space, evaluate, "coordesc", seed=(8,), options=SearchOptions(eps=1e-4))
    assert taken.best_config == (16,)


def test_coordesc_neighbours_in_a_non_power_of_two_domain():
    param = Parameter("T", (1, 3, 5, 6, 10))
    assert scaled(param, 3, up=True) == 6 and scaled(param, 5, up=True) == 10
    assert scaled(param, 5, up=False) == 3 and scaled(param, 6, up=False) == 3
    assert scaled(param, 10, up=True) is None and scaled(param, 1, up=False) is None
    assert scaled(Parameter("B", POW2_64), 8, up=True) == 16


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 50), min_size=16, max_size=16), st.integers(0, 15))
def test_hill_ends_in_a_local_minimum_and_exhaustive_in_the_global(costs, start):
    space = space2((1, 2, 4, 8))
    grid = list(space.configs())
    records = {c: (float(t),) for c, t in zip(grid, costs)}
    result = run_search(space, ReplayEvaluator(records), seed=grid[start])
    best = result.best.value
    assert all(records[n][0] >= best for n in space.neighbours(result.best_config))
    assert run_search(space, ReplayEvaluator(records), "exhaustive").best.value == min(costs)


# --- spaces, domains, options, replay ------------------------------------------------------------


def test_parse_domain_forms():
    assert parse_domain("1:512:pow2") == tuple(2**k for k in range(10))
    assert parse_domain("3:100:pow2") == (4, 8, 16, 32, 64)
    assert parse_domain("8:1024:8") == tuple(range(8, 1025, 8))
    assert parse_domain("2:5") == (2, 3, 4, 5)
    assert parse_domain("8,16,24,32") == (8, 16, 24, 32)
    assert parse_domain(" 32, 8 ,16,8") == (8, 16, 32)
    assert parse_domain("1:512:pow2", extent=100) == (1, 2, 4, 8, 16, 32, 64)
    assert parse_domain("16:64:16", extent=10) == (16,)


@pytest.mark.parametrize("spec", ["", "a:b", "8:4:2", "1:8:0", "1:8:pow3", "0:8:pow2", "8,,16",
                                  "-1,2", "1:2:3:4", "5:7:pow2", "1.5,2"])
def test_bad_domain_specs_raise_usage_error(spec):
    with pytest.raises(UsageError, match="bad domain"):
        parse_domain(spec)


def test_pow2_domain():
    assert pow2_domain(100) == (1, 2, 4, 8, 16, 32, 64)
    assert pow2_domain(4096) == pow2_domain(None) == tuple(2**k for k in range(10))
    assert pow2_domain(0) == (1,)
    assert pow2_domain(64, cap=16) == (1, 2, 4, 8, 16)


def test_space_indexing():
    space = SearchSpace.from_domains({"a": (1, 2, 4), "b": (8, 16)})
    assert space.size == 6 and space.origin == (1, 8)
    for i, config in enumerate(space.configs()):
        assert space.index_of(config) == i and space.config_at(i) == config
    assert space.contains((2, 16)) and not space.contains((3, 16)) and not space.contains((2,))
    assert space.nearest((3, 100)) == (2, 16) and space.nearest((0, 12)) == (1, 8)
    with pytest.raises(UsageError):
        space.index_of((3, 8))


@pytest.mark.parametrize("values", [(), (2, 1), (1, 1), (1.5,), (True,)])
def test_bad_parameters(values):
    with pytest.raises(UsageError):
        Parameter("p", values)


def test_bad_usage():
    with pytest.raises(UsageError, match="duplicate"):
        SearchSpace((Parameter("a", (1,)), Parameter("a", (2,))))
    with pytest.raises(UsageError, match="unknown search strategy"):
        run_search(space2(), table({}, 1.0), "annealing")
    with pytest.raises(UsageError):
        run_search(space2(), table({}, 1.0), seed=(1,))
    for bad in [{"degree": 4}, {"fit": "worst"}, {"alpha": 1.5}, {"eps": -1}, {"samples": 0}]:
        with pytest.raises(UsageError):
            SearchOptions(**bad)
    with pytest.raises(UsageError):
        Budget(max_evals=0)
    assert set(STRATEGIES) == {"hill", "coordesc", "exhaustive", "random"}


def test_replay_from_json(tmp_path):
    path = tmp_path / "records.json"
    measurements = [Measurement((1, 8), (0.2, 0.3, 0.25)), Measurement((2, 8), error=ErrorKind.WRONG_ANSWER)]
    save_records(path, measurements)
    replay = ReplayEvaluator.from_json(path)
    assert replay((1, 8)).value == 0.25
    assert replay((2, 8)).error is ErrorKind.WRONG_ANSWER
    missing = replay((4, 8))
    assert missing.error is ErrorKind.RUNTIME and missing.detail == "not recorded"
    assert replay.calls == Counter({(1, 8): 1, (2, 8): 1, (4, 8): 1})
    path.write_text(json.dumps({"records": [{"config": [4, 8], "times": [1.0]}]}))
    assert ReplayEvaluator.from_json(path)((4, 8)).value == 1.0
    path.write_text("not json")
    with pytest.raises(UsageError, match="records.json"):
        ReplayEvaluator.from_json(path)


def test_every_strategy_returns_a_consistent_result():
    space = space2((1, 2, 4, 8))
    for name in STRATEGIES:
        result = run_search(space, surface(lambda u, v: abs(u - 4) + abs(v - 2) + 1), name, seed=(1, 1),
                            options=SearchOptions(samples=16))
        assert result.best_config == (4, 2), name
        assert result.trajectory[0].config == (1, 1) and result.trajectory[0].iteration == 0
        values = [step.measurement.value for step in result.trajectory]
        assert values == sorted(values, reverse=True) and len(set(values)) == len(values)
        assert len({r.config for r in result.evaluations}) == result.evals
        assert list(itertools.accumulate([1] * result.evals)) == [r.index for r in result.evaluations]


def test_parameter_hop_overrides_the_domain_gap():
    from polytune.search import Parameter
    p = Parameter("x", (8, 16, 32, 64), hop=8)
    assert p.shortest_hop == 8 and p.hop_adjacent(32) == (24, 40)
    q = Parameter("y", (1, 2, 4), hop=0)
    assert q.shortest_hop is None and q.hop_adjacent(2) == (None, None)
    assert Parameter("z", (1, 2, 4)).shortest_hop == 1


def test_scans_report_the_lowest_median_even_when_not_significant():
    from polytune.measure import Measurement
    from polytune.search import Parameter, SearchOptions, SearchSpace, run_search
    space = SearchSpace((Parameter("x", (1, 2, 3)),))
    noisy = {1: (1.0, 1.3, 0.7), 2: (0.95, 1.25, 0.65), 3: (1.1, 1.4, 0.8)}  # 2: lower median, not significant

    def evaluate(c):
        return Measurement(tuple(c), noisy[c[0]])
    res = run_search(space, evaluate, "exhaustive", (1,), SearchOptions(alpha=0.05))
    assert res.best.config == (2,)


def test_a_variant_the_evaluator_already_measured_is_not_an_evaluation():
    # v is a dead parameter for u >= 8 (as BLOCK_X is under FUSE=1): the evaluate callable says so with
    # Measurement.same_as, and such configurations do not use up max_evals
    measured: dict[Config, Measurement] = {}

    def evaluate(config: Config) -> Measurement:
        u, v = config
        key = (u, 0) if u >= 8 else (u, v)
        if key in measured:
            return Measurement(config, measured[key].times, same_as=measured[key].config)
        measured[key] = Measurement(config, (float(abs(u - 16) + (0 if u >= 8 else abs(v - 4))),))
        return measured[key]

    calls = []

    def counted(config: Config) -> Measurement:
        calls.append(config)
        return evaluate(config)

    res = run_search(space2(), counted, "hill", (1, 1), SearchOptions(), Budget(max_evals=12))
    assert res.best.config[0] == 16
    assert len(calls) > len(measured)  # some moves only changed the dead parameter
    assert res.evals == len(measured) <= 12
    assert all(r.measurement.same_as is None for r in res.evaluations)
