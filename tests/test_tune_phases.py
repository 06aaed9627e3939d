"""The schedule space's search (search/phases.py) on synthetic surfaces: it starts from the seed and the other
starts, follows the tile-only search's path on its budget, then climbs the whole space from the fastest, so it
ends no slower than tile-only tuning nor than any start; and the seed stays the seed."""
from __future__ import annotations

import random

import pytest

from polytune.measure.measurement import ErrorKind, Measurement
from polytune.search import Budget, Parameter, SearchOptions, SearchSpace, ThreadPool, run_search
from polytune.search.phases import phased_search

TILES = tuple(Parameter(f"t{i}", (1, 2, 4, 8, 16, 32, 64, 128, 256)) for i in range(3))
CATS = (Parameter.categorical("scheduler", ("pluto", "outer")),
        Parameter.categorical("fusion", ("smart", "max", "none")))
SPACE = SearchSpace(TILES + CATS)
SEED = (32, 32, 32, 0, 0)
DEFAULT = (32, 32, 32, 1, 2)


def surface(k: int, noise: bool = False):
    """A cost per schedule choice: a bowl in log2 of the tile sizes around its own optimum, its own scale;
    *noise*: two runs per measurement, a deterministic jitter of a few percent (the t-test has variance)."""
    r = random.Random(k)
    choices = [(a, b) for a in range(2) for b in range(3)]
    opt = {c: tuple(r.randrange(9) for _ in range(3)) for c in choices}
    scale = {c: r.uniform(0.3, 3) for c in choices}

    def cost(config) -> Measurement:
        config = tuple(config)
        c = config[3:]
        v = scale[c] * (1 + sum(abs(x.bit_length() - 1 - o) for x, o in zip(config[:3], opt[c])))
        if noise:
            j = random.Random(hash(config)).uniform(0, 0.04)
            return Measurement(config, (v * (1 - j), v * (1 + j)))
        return Measurement(config, (v,))
    return cost


def tile_only(cost, budget: Budget, options: SearchOptions = SearchOptions()):
    return run_search(SearchSpace(TILES), lambda c: cost(tuple(c) + SEED[3:]), "hill", SEED[:3], options, budget)


@pytest.mark.parametrize("max_evals", [3, 9, 24, 60])
@pytest.mark.parametrize("alpha", [None, 0.05])
def test_schedule_search_ends_no_slower_than_tile_only_on_the_same_budget(max_evals, alpha):
    options = SearchOptions(alpha=alpha)
    for k in range(60):
        cost = surface(k, noise=alpha is not None)
        only = tile_only(cost, Budget(max_evals=max_evals), options)
        res = phased_search(SPACE, cost, "hill", [("seed", SEED), ("default", DEFAULT)], options,
                            Budget(max_evals=max_evals))
        r = res.search
        # the tile-only search's own path, neighbour for neighbour, after the two starts
        assert [e.config[:3] for e in r.evaluations if e.phase == "tiles"] == [e.config for e in only.evaluations[1:]]
        assert r.best.value <= only.best.value
        assert r.best.value <= min(m.value for m in res.starts.values())
        assert len(r.evaluations) <= max_evals + 1  # the budget, plus the one start besides the seed


def test_the_search_climbs_from_the_fastest_start_and_the_seed_stays_the_seed():
    """gramschmidt's case: optimize's default is 10x faster than Pluto's; the search must not end near the seed."""
    def cost(config):
        base = 0.35 if tuple(config[3:]) == DEFAULT[3:] else 4.0
        return Measurement(tuple(config), (base * (1 + 0.1 * abs(config[0].bit_length() - 6)),))

    res = phased_search(SPACE, cost, "hill", [("seed", SEED), ("default", DEFAULT)], SearchOptions(),
                        Budget(max_evals=12))
    r = res.search
    assert r.seed.config == SEED and r.seed.value == 4.0  # "speedup over the seed" keeps its meaning
    assert res.starts["default"].value == pytest.approx(0.35)
    assert r.best.value <= 0.35 and r.best.config[3:] == DEFAULT[3:]
    assert [e.phase for e in r.evaluations[:2]] == ["seed", "start"]
    assert any(s.phase == "start" and s.config == DEFAULT for s in r.trajectory)


def test_only_the_seed_is_charged_and_nothing_is_measured_twice():
    cost, calls = surface(3), []

    def counted(config):
        calls.append(tuple(config))
        return cost(config)

    starts = [("seed", SEED), ("default", DEFAULT), ("outer", (32, 32, 32, 1, 0))]
    r = phased_search(SPACE, counted, "hill", starts, SearchOptions(), Budget(max_evals=10)).search
    assert len(r.evaluations) == 10 + 2 and r.stop_reason.value == "max_evals"
    assert len(calls) == len(set(calls)) == len(r.evaluations)
    assert [e.index for e in r.evaluations] == list(range(1, 13))


def test_heat_3d_case_every_other_schedule_slower_gives_the_tile_only_result():
    """Where no schedule coordinate helps, the schedule search ends where tile-only tuning does."""
    def cost(config):
        v = 1 + sum(abs(x.bit_length() - 7) for x in config[:3]) + 5 * sum(1 for c in config[3:] if c)
        return Measurement(tuple(config), (v,))

    only = tile_only(cost, Budget(max_evals=24))
    r = phased_search(SPACE, cost, "hill", [("seed", SEED), ("default", DEFAULT)], SearchOptions(),
                      Budget(max_evals=24)).search
    assert r.best.config[:3] == only.best.config and r.best.value == only.best.value


def test_the_phases_take_the_same_path_with_a_pool_of_workers():
    cost = surface(7)
    starts = [("seed", SEED), ("default", DEFAULT)]
    serial = phased_search(SPACE, cost, "hill", starts, SearchOptions(), Budget(max_evals=20)).search
    with ThreadPool(cost, 3) as pool:
        pooled = phased_search(SPACE, None, "hill", starts, SearchOptions(), Budget(max_evals=20), pool=pool).search
    assert [e.config for e in pooled.evaluations] == [e.config for e in serial.evaluations]
    assert pooled.best.config == serial.best.config


def test_coordinate_descent_runs_the_same_phases():
    cost = surface(11)
    only = run_search(SearchSpace(TILES), lambda c: cost(tuple(c) + SEED[3:]), "coordesc", SEED[:3],
                      SearchOptions(), Budget(max_evals=15))
    r = phased_search(SPACE, cost, "coordesc", [("seed", SEED), ("default", DEFAULT)], SearchOptions(),
                      Budget(max_evals=15)).search
    assert r.best.value <= min(only.best.value, cost(DEFAULT).value)


def test_a_failed_start_is_never_the_result():
    def cost(config):
        if tuple(config[3:]) == DEFAULT[3:]:
            return Measurement(tuple(config), error=ErrorKind.WRONG_ANSWER)
        return surface(1)(config)

    res = phased_search(SPACE, cost, "hill", [("seed", SEED), ("default", DEFAULT)], SearchOptions(),
                        Budget(max_evals=8))
    assert not res.starts["default"].ok and res.search.best.ok


@pytest.mark.parametrize("budget", [Budget(max_evals=1), Budget(time_limit=1e-9)])
def test_with_no_budget_left_after_the_starts_the_fastest_start_is_the_result(budget):
    """(A time limit spent by the seed, on a loaded machine: the default start must still win, by median.)"""
    def cost(config):
        return Measurement(tuple(config), (1.0 if tuple(config) == DEFAULT else 2.0, 1.1 if tuple(config) == DEFAULT
                                           else 2.05))

    res = phased_search(SPACE, cost, "hill", [("seed", SEED), ("default", DEFAULT)], SearchOptions(alpha=0.05), budget)
    assert res.search.best.config == DEFAULT and res.climbed_from == "default"
    assert res.search.seed.config == SEED and len(res.search.evaluations) == 2
