"""The improvement test's Welch t-test, in the standard library, against scipy's."""
from __future__ import annotations

import math
import random

import pytest

from polytune.search.compare import welch_p_less


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

    code = ("import sys; from polytune.search.compare import improves; from polytune.measurement import Measurement;"
            "m = lambda ts: Measurement((1,), tuple(ts));"
            "improves(m([1.0, 1.1, 0.9]), m([2.0, 2.1, 1.9]), 0.05, 0.0); print('scipy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
