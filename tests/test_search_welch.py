"""The improvement test's Welch t-test, in the standard library, against scipy's."""
from __future__ import annotations

import math
import random

import pytest

from polytune.measure.measurement import Measurement
from polytune.search import SearchOptions, SearchSpace, ThreadPool, run_search
from polytune.search.compare import Verdict, improves, rank_p_less, welch_p_less


def test_welch_p_less_matches_scipy_on_random_samples():
    stats = pytest.importorskip("scipy.stats")
    rng = random.Random(7)
    for _ in range(500):
        a = [rng.gauss(1.0, rng.uniform(0.001, 0.3)) for _ in range(rng.randint(2, 8))]
        b = [rng.gauss(1.0 + rng.uniform(-0.3, 0.3), rng.uniform(0.001, 0.3)) for _ in range(rng.randint(2, 8))]
        if rng.random() < 0.1:
            a = [a[0]] * len(a)  # one side without variance
        want = float(stats.ttest_ind(a, b, equal_var=False, alternative="less").pvalue)
        assert welch_p_less(a, b) == pytest.approx(want, abs=1e-9)


def test_welch_p_less_of_a_clearly_faster_sample_is_small_and_of_a_slower_one_large():
    fast, slow = [1.0, 1.01, 0.99], [2.0, 2.02, 1.98]
    assert welch_p_less(fast, slow) < 1e-3
    assert welch_p_less(slow, fast) > 1 - 1e-3


def test_welch_p_less_without_any_variance_is_nan():
    assert math.isnan(welch_p_less([1.0, 1.0], [2.0, 2.0]))


def test_search_does_not_import_scipy():
    import subprocess
    import sys

    code = ("import sys; from polytune.search.compare import improves; "
            "from polytune.measure.measurement import Measurement;"
            "m = lambda ts: Measurement((1,), tuple(ts));"
            "improves(m([1.0, 1.1, 0.9]), m([2.0, 2.1, 1.9]), 0.05, 0.0); print('scipy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# --- the rank test that one outlier cannot defeat ------------------------------------------------


def test_rank_p_less_matches_scipys_exact_mann_whitney_without_ties():
    stats = pytest.importorskip("scipy.stats")
    rng = random.Random(11)
    for _ in range(300):
        a = [rng.gauss(1.0, 0.2) for _ in range(rng.randint(2, 7))]
        b = [rng.gauss(1.0 + rng.uniform(-0.4, 0.4), 0.2) for _ in range(rng.randint(2, 7))]
        want = float(stats.mannwhitneyu(a, b, alternative="less", method="exact").pvalue)
        assert rank_p_less(a, b) == pytest.approx(want, abs=1e-12)


def test_rank_p_less_counts_ties_against_the_candidate():
    assert rank_p_less([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]) == pytest.approx(1 / 20)
    assert rank_p_less([1.0, 2.0, 4.0], [4.0, 5.0, 6.0]) == pytest.approx(2 / 20)  # 4 >= 4: out of order


def test_one_outlier_in_the_incumbents_runs_does_not_hide_a_large_gain():
    # jacobi-2d on a Ray timer node: the seed's third run took 2.3x its others; Welch's p was 0.094
    seed = Measurement((1,), (0.181, 0.178, 0.420))
    tile = Measurement((2,), (0.094, 0.104, 0.108))
    assert welch_p_less(tile.times, seed.times) > 0.05
    assert improves(tile, seed, 0.05, 0.0) is Verdict.BETTER
    assert improves(tile, seed, 0.05, 0.5) is Verdict.INSIGNIFICANT  # the rank test still needs the threshold


def test_overlapping_runs_stay_insignificant_under_both_tests():
    old = Measurement((1,), (1.00, 1.10, 0.90, 1.05, 0.95))
    new = Measurement((2,), (0.99, 1.09, 0.89, 1.04, 0.94))
    assert improves(new, old, 0.05, 0.0) is Verdict.INSIGNIFICANT
    assert improves(Measurement((2,), (0.5, 0.6, 1.2)), Measurement((1,), (1.0, 1.0, 1.1)), 0.05, 0.0) \
        is Verdict.INSIGNIFICANT  # one of the candidate's runs is slower than all the incumbent's


@pytest.mark.parametrize("workers", [1, 4])
def test_a_search_over_replayed_noisy_runs_moves_past_an_outlier_with_any_worker_count(workers):
    space = SearchSpace.from_domains({"a": (16, 32, 64), "b": (16, 32, 64)})
    rng = random.Random(3)
    table = {}
    for config in space.configs():
        base = 0.03 * (1 + abs(config[0] - 64) / 16 + abs(config[1] - 32) / 16)  # the seed's neighbours: 0.12
        runs = [base * rng.uniform(0.97, 1.03) for _ in range(3)]
        table[config] = Measurement(config, tuple(runs))
    table[16, 16] = Measurement((16, 16), (0.181, 0.178, 0.420))  # the seed, one run 2.3x
    options = SearchOptions(alpha=0.05)
    if workers == 1:
        result = run_search(space, table.__getitem__, "hill", (16, 16), options)
    else:
        with ThreadPool(table.__getitem__, workers) as pool:
            result = run_search(space, None, "hill", (16, 16), options, pool=pool)
    assert result.best_config == (64, 32)
    assert [s.config for s in result.trajectory][0] == (16, 16) and len(result.trajectory) > 1
