"""The strategies' own options and the registry: SearchOptions is the union of what the strategies read, each
strategy gets its part, and run_search and the phases find a strategy, its options and its move test by name."""
from __future__ import annotations

from dataclasses import MISSING, dataclass, fields

import pytest

from polytune.errors import UsageError
from polytune.measure import Measurement
from polytune.search import Parameter, SearchSpace, StopReason, run_search
from polytune.search.compare import ImprovementTest
from polytune.search.phases import LOCAL, move_test
from polytune.search.strategies import (
    STRATEGIES,
    CoordescOptions,
    ExhaustiveOptions,
    HillOptions,
    RandomOptions,
    SearchOptions,
    Strategy,
    driver,
)


def test_search_options_is_the_union_of_the_strategies_own_options():
    union = {f.name: f.default for f in fields(SearchOptions)}
    read = set()
    for name, strategy in STRATEGIES.items():
        for f in fields(strategy.options):
            assert f.name in union, f"{name} reads {f.name}, which SearchOptions lacks"
            assert f.default is not MISSING and f.default == union[f.name], f"{name}: {f.name}'s default differs"
            read.add(f.name)
    assert read == set(union), f"no strategy reads {set(union) - read}"


def test_each_strategy_gets_its_own_part_of_search_options():
    options = SearchOptions(degree=2, fit="first", alpha=0.05, eps=0.01, samples=7, rng_seed=3, sweep=True)
    assert options.of(STRATEGIES["hill"]) == HillOptions(degree=2, fit="first", alpha=0.05, sweep=True)
    assert options.of(STRATEGIES["coordesc"]) == CoordescOptions(alpha=0.05, eps=0.01)
    assert options.of(STRATEGIES["exhaustive"]) == ExhaustiveOptions()
    assert options.of(STRATEGIES["random"]) == RandomOptions(samples=7, rng_seed=3)
    assert options.sample_count() == 7 and SearchOptions(quantile=0.1, delta=0.01).sample_count() == 47


@pytest.mark.parametrize(("own", "bad", "message"), [
    (HillOptions, {"degree": 4}, "degree must be 1, 2 or 3, got 4"),
    (HillOptions, {"threshold": 1.0}, "threshold must lie in [0, 1), got 1.0"),
    (CoordescOptions, {"eps": -1}, "eps must lie in [0, 1), got -1"),
    (CoordescOptions, {"alpha": 1.5}, "alpha must lie in (0, 1), got 1.5"),
    (RandomOptions, {"samples": 0}, "samples must be >= 1, got 0"),
    (RandomOptions, {"delta": 1}, "delta must lie in (0, 1), got 1"),
])
def test_a_bad_value_is_refused_by_the_strategy_that_reads_it_and_by_search_options(own, bad, message):
    for options in (own, SearchOptions):
        with pytest.raises(UsageError) as err:
            options(**bad)
        assert str(err.value) == message


def test_each_strategy_moves_by_its_own_test():
    options = SearchOptions(alpha=0.05, threshold=0.02, eps=0.01)
    assert move_test("hill", options) == ImprovementTest(0.05, 0.02)
    assert move_test("coordesc", options) == ImprovementTest(0.05, 0.01)
    assert move_test("exhaustive", options) == move_test("random", options) == ImprovementTest(None, 0.0)


def test_the_strategies_run_in_phases_are_those_that_climb():
    assert LOCAL == ("hill", "coordesc")


@dataclass(frozen=True)
class _OriginOptions:
    alpha: float | None = None

    def move_test(self) -> ImprovementTest:
        return ImprovementTest(self.alpha)


def test_a_registered_strategy_runs_by_name_with_its_own_options(monkeypatch):
    seen = []

    def origin(space, ev, seed, options: _OriginOptions) -> StopReason:
        seen.append(options)
        ev.test = options.move_test()
        ev.start(space.origin)
        return StopReason.CONVERGED

    monkeypatch.setattr(driver, "STRATEGIES", {**STRATEGIES, "origin": Strategy(origin, _OriginOptions, False)})
    space = SearchSpace((Parameter("x", (1, 2, 4)),))
    result = run_search(space, lambda c: Measurement(tuple(c), (float(c[0]),)), "origin",
                        options=SearchOptions(alpha=0.1))
    assert result.strategy == "origin" and result.best_config == (1,) and result.evals == 1
    assert seen == [_OriginOptions(alpha=0.1)]
