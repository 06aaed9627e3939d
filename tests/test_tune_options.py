"""TuneOptions: four groups (search, budget, workers, confirm) beside what is tuned, built with flat keywords as
Kernel Tuner's and TVM's tuners are called, or group by group."""
from __future__ import annotations

import dataclasses

import pytest

from polytune.errors import UsageError
from polytune.search import Budget, SearchOptions
from polytune.tune import ConfirmOptions, TuneOptions, WorkerOptions


def test_flat_keywords_fill_the_groups_and_read_back_flat():
    opts = TuneOptions(strategy="hill", degree=2, max_evals=30, jobs=2, ray="auto", confirm_runs=0,
                       confirm_defines=("N=4000",), cache=None)
    assert opts.search == SearchOptions(degree=2, alpha=0.05)
    assert opts.budget == Budget(max_evals=30)
    assert opts.workers == WorkerOptions(jobs=2, ray="auto")
    assert opts.confirm == ConfirmOptions(runs=0, defines=("N=4000",))
    assert (opts.degree, opts.max_evals, opts.jobs, opts.ray, opts.confirm_runs) == (2, 30, 2, "auto", 0)


def test_groups_given_whole_equal_the_same_flat_keywords():
    flat = TuneOptions(fit="first", alpha=None, max_evals=5, time_limit=60.0, jobs=1, confirm_runs=3, cache=None)
    grouped = TuneOptions(search=SearchOptions(fit="first"), budget=Budget(max_evals=5, time_limit=60.0),
                          workers=WorkerOptions(jobs=1), confirm=ConfirmOptions(runs=3), cache=None)
    assert flat == grouped and hash(flat) == hash(grouped)


def test_a_flat_keyword_beside_its_group_changes_that_field_only():
    shared = WorkerOptions(jobs=4, ray="auto")
    opts = TuneOptions(workers=shared, jobs=2)
    assert opts.workers == WorkerOptions(jobs=2, ray="auto") and shared.jobs == 4
    again = dataclasses.replace(opts, again=False, max_evals=7)
    assert again.workers == opts.workers and not again.again and again.max_evals == 7 and opts.again


def test_the_default_tests_moves_at_alpha_005_and_caches():
    opts = TuneOptions()
    assert opts.alpha == 0.05 and opts.strategy == "hill" and opts.confirm_runs == 5 and opts.jobs is None
    assert opts.cache is not None and TuneOptions(cache=None).cache is None


def test_a_bad_option_is_a_usage_error_when_the_options_are_made():
    with pytest.raises(UsageError, match="max_evals"):
        TuneOptions(max_evals=0)
    with pytest.raises(UsageError, match="degree"):
        TuneOptions(degree=4)
    with pytest.raises(TypeError):
        TuneOptions(max_eval=3)  # type: ignore[call-arg]
