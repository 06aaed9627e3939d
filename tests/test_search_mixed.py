"""Mixed search spaces (issue 17): categorical coordinates beside the tile sizes, on synthetic surfaces."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polytune.errors import UsageError
from polytune.measure.measurement import Config, Measurement
from polytune.search import (
    STRATEGIES,
    Parameter,
    ReplayEvaluator,
    SearchOptions,
    SearchSpace,
    StopReason,
    run_search,
)

SCHEDULES = ("pluto", "outer", "wavefront", "none")
TILES = (8, 16, 32, 64)


def mixed_space() -> SearchSpace:
    return SearchSpace((Parameter.categorical("schedule", SCHEDULES), Parameter("T", TILES)))


def cost_surface(cost):
    """evaluate(config) of a cost over decoded values, e.g. cost("outer", 16)."""
    space = mixed_space()

    def evaluate(config: Config) -> Measurement:
        return Measurement(config, (float(cost(*space.decode(config).values())),))

    return evaluate


# --- the space -------------------------------------------------------------------------------------


def test_a_categorical_parameter_holds_indices_and_names_them():
    p = Parameter.categorical("fusion", ("max", "smart", "none"))
    assert p.values == (0, 1, 2) and p.is_categorical and p.shortest_hop is None
    assert p.label(1) == "smart" and p.encode("none") == 2 and p.encode(0) == 0
    assert not Parameter("T", TILES).is_categorical and Parameter("T", TILES).label(16) == 16


def test_every_other_category_is_one_step_away():
    p = Parameter.categorical("omp", ("outermost", "inner", "collapse", "wavefront", "none"))
    assert p.moves(2) == (0, 1, 3, 4)
    assert p.moves(2, hop=True) == ()  # shortest hop leaves it alone
    assert Parameter("T", TILES).moves(16) == (8, 32)


def test_mixed_neighbourhoods_of_degree_1_and_2():
    space = SearchSpace.from_domains({"fusion": ("max", "smart", "none"), "T": (8, 16, 32)})
    assert space.params[0].is_categorical and not space.params[1].is_categorical
    one = space.neighbours((1, 16))
    assert one == ((0, 16), (2, 16), (1, 8), (1, 32))
    two = space.neighbours((1, 16), degree=2)
    assert two[:4] == one
    assert two[4:] == ((0, 8), (0, 32), (2, 8), (2, 32))  # each other category with each tile move
    assert len(set(two)) == len(two) == (3 - 1) + 2 + (3 - 1) * 2


def test_degree_3_combines_two_categorical_coordinates_and_a_tile():
    space = SearchSpace.from_domains({"a": ("x", "y", "z"), "b": ("p", "q"), "T": (8, 16, 32)})
    hood = space.neighbours((0, 0, 16), degree=3)
    assert len(hood) == len(set(hood)) == (2 + 1 + 2) + (2 * 1 + 2 * 2 + 1 * 2) + 2 * 1 * 2
    assert (0, 0, 16) not in hood


def test_shortest_hop_moves_leave_categorical_coordinates_alone():
    space = SearchSpace.from_domains({"fusion": ("max", "smart", "none"), "T": (8, 16, 32)})
    assert space.neighbours((1, 16), hop=True) == ((1, 8), (1, 24))
    assert space.neighbours((1, 16), degree=2, hop=True) == ((1, 8), (1, 24))


def test_decode_encode_and_names_in_a_seed():
    space = mixed_space()
    assert space.decode((2, 32)) == {"schedule": "wavefront", "T": 32}
    assert space.encode({"T": 32, "schedule": "wavefront"}) == (2, 32)
    assert space.check(("outer", 18)) == (1, 18)  # a tile outside its domain is allowed, as before
    assert space.origin == (0, 8) and space.size == 16
    assert space.nearest(("none", 20)) == (3, 16)
    assert [space.decode(c)["schedule"] for c in space.configs()][::4] == list(SCHEDULES)


@pytest.mark.parametrize("bad", [("fifo", 8), (4, 8), (-1, 8), (1.0, 8)])
def test_a_categorical_coordinate_holds_only_its_categories(bad):
    with pytest.raises(UsageError):
        mixed_space().check(bad)


def test_bad_categorical_parameters():
    for categories in [(), ("a", "a"), ("a", ""), ("a", 1), "abc"]:
        with pytest.raises(UsageError):
            Parameter.categorical("p", categories)
    with pytest.raises(UsageError):
        Parameter("p", (1, 2), categories=("a", "b"))
    with pytest.raises(UsageError):
        Parameter("p", categories=("a", "b"), hop=1)
    with pytest.raises(UsageError, match="expected exactly"):
        mixed_space().encode({"schedule": "pluto"})


def test_an_unroll_factor_with_zero_is_an_ordinal_parameter():
    space = SearchSpace.from_domains({"unroll": (0, 2, 4, 8)})
    assert space.neighbours((0,)) == ((2,),) and space.neighbours((4,)) == ((2,), (8,))


# --- strategies on synthetic surfaces --------------------------------------------------------------

SCHEDULE_COST = {"pluto": 5, "outer": 3, "wavefront": 1, "none": 8}


def separable(schedule: str, tile: int) -> float:
    """Categorical optimum 'wavefront', tile optimum 16."""
    return SCHEDULE_COST[schedule] + abs(math.log2(tile) - 4)


LOCAL = [("hill", SearchOptions(fit=f, degree=d)) for f in ("best", "first") for d in (1, 2, 3)]


@pytest.mark.parametrize(("strategy", "options"), LOCAL + [("coordesc", SearchOptions())])
def test_hill_climbing_finds_the_categorical_optimum(strategy, options):
    space = mixed_space()
    result = run_search(space, cost_surface(separable), strategy, seed=("pluto", 32), options=options)
    assert space.decode(result.best_config) == {"schedule": "wavefront", "T": 16}
    assert result.stop_reason is StopReason.CONVERGED


def test_scans_cover_the_mixed_grid():
    space = mixed_space()
    grid = run_search(space, cost_surface(separable), "exhaustive")
    assert grid.evals == 16 and space.decode(grid.best_config) == {"schedule": "wavefront", "T": 16}
    sample = run_search(space, cost_surface(separable), "random", options=SearchOptions(samples=8))
    assert sample.evals == 8 and all(space.contains(r.config) for r in sample.evaluations)


# Pluto's schedule has a local minimum at tile 32 (16 is a ridge); the outer schedule is better at 32 and
# descends to 8, below anything Pluto's schedule reaches.
RIDGE = {("pluto", 8): 4, ("pluto", 16): 9, ("pluto", 32): 6, ("pluto", 64): 9,
         ("outer", 8): 2, ("outer", 16): 3, ("outer", 32): 5, ("outer", 64): 7}


def test_tile_only_climbing_is_stuck_where_the_mixed_space_escapes():
    tiles = SearchSpace((Parameter("T", TILES),))
    tile_only = run_search(tiles, lambda c: Measurement(c, (float(RIDGE["pluto", c[0]]),)), seed=(32,))
    assert tile_only.best_config == (32,) and tile_only.stop_reason is StopReason.CONVERGED

    space = SearchSpace((Parameter.categorical("schedule", ("pluto", "outer")), Parameter("T", TILES)))
    replay = ReplayEvaluator({space.encode({"schedule": s, "T": t}): (float(v),) for (s, t), v in RIDGE.items()})
    mixed = run_search(space, replay, seed=("pluto", 32))
    assert space.decode(mixed.best_config) == {"schedule": "outer", "T": 8}
    assert [space.decode(s.config)["schedule"] for s in mixed.trajectory] == ["pluto", "outer", "outer", "outer"]
    assert mixed.best.value < tile_only.best.value


def test_degree_2_changes_a_category_and_a_tile_together():
    # each change alone is worse, both together better: degree 1 stops, degree 2 moves
    space = SearchSpace((Parameter.categorical("schedule", ("pluto", "outer")), Parameter("T", TILES)))
    costs = {(0, 32): 5.0, (1, 32): 6.0, (0, 16): 6.0, (1, 16): 2.0}
    replay = {c: (costs.get(c, 9.0),) for c in space.configs()}
    one = run_search(space, ReplayEvaluator(replay), seed=(0, 32))
    two = run_search(space, ReplayEvaluator(replay), seed=(0, 32), options=SearchOptions(degree=2))
    assert one.best_config == (0, 32)
    assert two.best_config == (1, 16)


def test_shortest_hop_on_a_mixed_space_keeps_the_category():
    space = mixed_space()
    result = run_search(space, cost_surface(lambda s, t: SCHEDULE_COST[s] + abs(t - 24)), seed=("pluto", 32),
                        options=SearchOptions(shortest_hop=True))
    hops = [r.config for r in result.evaluations if r.phase == "hop"]
    assert hops and {space.decode(c)["schedule"] for c in hops} == {"wavefront"}
    assert space.decode(result.best_config) == {"schedule": "wavefront", "T": 24}


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 40), min_size=24, max_size=24), st.integers(0, 23), st.sampled_from([1, 2]))
def test_hill_on_a_mixed_space_ends_in_a_local_minimum(costs, start, degree):
    space = SearchSpace.from_domains({"f": ("max", "smart", "none"), "T": (8, 16, 32, 64), "u": (0, 4)})
    grid = list(space.configs())
    records = {c: (float(t),) for c, t in zip(grid, costs)}
    result = run_search(space, ReplayEvaluator(records), seed=grid[start], options=SearchOptions(degree=degree))
    best = result.best.value
    assert all(records[n][0] >= best for n in space.neighbours(result.best_config, degree))
    for name in STRATEGIES:  # every strategy runs on a mixed space and stays on the grid
        other = run_search(space, ReplayEvaluator(records), name, seed=grid[start],
                           options=SearchOptions(samples=10))
        assert all(space.contains(r.config) for r in other.evaluations)
