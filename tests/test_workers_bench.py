"""benchmarks/workers.py's summary: wall-time ratios, same best configuration, search overhead in seed evaluations."""
from __future__ import annotations

import importlib.util
import os
import sys

import pytest

WORKERS_PY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks", "workers.py")


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("workers_bench", WORKERS_PY)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def rec(mode, wall, search, best, best_s, seed_eval=None):
    return {"mode": mode, "wall_s": wall, "search_s": search, "evals": 12, "stop_reason": "converged",
            "best": best, "best_s": best_s, "seed_s": 0.2, "seed_eval_s": seed_eval, "timed_on": ["h/timer"]}


def test_summary_gives_ratios_of_one_over_each_mode_and_overheads_in_seed_evaluations(bench):
    recs = {"one": rec("one", 40.0, 36.0, [32, 64], 0.100, seed_eval=3.0),
            "jobs": rec("jobs", 20.0, 18.0, [32, 64], 0.102), "ray": rec("ray", 10.0, 9.0, [32, 64], 0.098)}
    s = bench.summarize("gemm", recs)
    assert s["one/jobs"] == 2.0 and s["one/ray"] == 4.0
    assert s["overhead_one"] == 12.0 and s["overhead_jobs"] == 6.0 and s["overhead_ray"] == 3.0
    assert s["same_best"] is True and s["best_spread"] == pytest.approx(0.041, abs=1e-3)


def test_summary_leaves_a_failed_mode_out_and_says_when_the_bests_differ(bench):
    recs = {"one": rec("one", 40.0, 36.0, [32, 64], 0.1, seed_eval=3.0), "jobs": rec("jobs", 20.0, 18.0, [16, 64], 0.1),
            "ray": {"mode": "ray", "error": "no Ray cluster"}}
    s = bench.summarize("gemm", recs)
    assert "one/ray" not in s and "overhead_ray" not in s and s["same_best"] is False
    text = bench.markdown({"kernels": {"gemm": dict(recs, summary=s)}, "modes": ["one", "jobs", "ray"],
                           "max_evals": 20, "time_limit": 30, "threads": 2, "groups": ["0,1", "2,3"],
                           "cpus": "0,1,2,3", "jobs": 4, "cpu": "x", "started": "now"})
    assert "| gemm | 40.0 | 20.0 | err | 2.00 | - | 12.0 | 6.0 | - | no | 0.0% |" in text
    assert "- gemm ray: error: no Ray cluster" in text


def test_cpu_groups_are_disjoint_pairs(bench):
    assert bench.groups_of(bench.cpu_list("0-7"), 2) == [[0, 1], [2, 3], [4, 5], [6, 7]]
