"""benchmarks/polybench/run.py's tune phase and tables, without PolyBench: its pure parts and `run` on fake binaries."""
from __future__ import annotations

import importlib.util
import json
import os
import stat
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
RUN_PY = os.path.join(os.path.dirname(HERE), "benchmarks", "polybench", "run.py")


@pytest.fixture(scope="module")
def run():
    spec = importlib.util.spec_from_file_location("polybench_run", RUN_PY)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_core_groups_cut_the_cpus_into_pairs_and_drop_a_rest(run):
    assert run.core_groups("0-4", 2) == ["0,1", "2,3"]
    assert run.core_groups("8-15", 2) == ["8,9", "10,11", "12,13", "14,15"]
    assert run.core_groups("0", 2) == []


def test_tune_dataset_takes_a_default_and_per_kernel_exceptions(run):
    assert run.tune_datasets([]) == ("MEDIUM", {})
    assert run.tune_datasets(["SMALL", "atax=LARGE"]) == ("SMALL", {"atax": "LARGE"})
    with pytest.raises(SystemExit):
        run.tune_datasets(["atax=HUGE"])


def test_variant_flags_of_the_schedule_space_are_its_optimize_args(run):
    report = {"best_build": {"tile_sizes": [16, 32], "optimize_args": ["--tile-sizes", "16,32", "--choice", "x=y"]}}
    assert run.variant_flags("tuned", report) == ["--tile-sizes", "16,32", "--choice", "x=y"]


def test_variant_flags_of_tile_only_tuning_keep_the_pluto_schedule_it_tuned(run):
    assert run.variant_flags("tuned-tiles", {"best_build": {"tile_sizes": [64, 8]}}) == \
        ["--schedule", "pluto", "--tile-sizes", "64,8"]
    assert run.variant_flags("tuned-tiles", {"best_build": {"tile_sizes": []}}) == ["--schedule", "pluto"]


def fake_binary(path: str, seconds: float) -> str:
    with open(path, "w") as f:
        f.write(f"#!/bin/sh\necho {seconds}\n")
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
    return os.path.basename(path)


def test_run_in_two_streams_then_table_gives_the_tuning_ratios(run, tmp_path, capsys):
    kernels = []
    times = {"k1": {"gcc": 1.0, "seed": 0.5, "tuned": 0.25, "tuned-tiles": 0.4},
             "k2": {"gcc": 2.0, "seed": 1.0, "tuned": 1.0, "tuned-tiles": 0.8}}
    for k, ts in times.items():
        kernels.append({"kernel": k, "binaries": {v: fake_binary(str(tmp_path / f"{k}.{v}"), t) for v, t in ts.items()},
                        "errors": {}, "check": {v: "identical" for v in ts if v != "gcc"},
                        "tune": {"tuned": {"flags": ["--choice", "a=b"], "dataset": "MEDIUM",
                                           "speedup_over_seed": 1.5, "evals": 9, "stop_reason": "max_evals",
                                           "search_time": 30.0, "wall_s": 35.0}}})
    manifest = {"dataset": "LARGE", "march": "x86-64-v4", "variants": ["gcc", "seed", "tuned", "tuned-tiles"],
                "polytune_variants": {"seed": "--schedule pluto", "tuned": "t", "tuned-tiles": "tt"},
                "kernels": kernels}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    out = str(tmp_path / "results.json")
    assert run.main(["run", "--dir", str(tmp_path), "--rounds", "2", "--cpus", "0:0", "--out", out]) == 0
    res = json.loads(open(out).read())
    assert res["streams"] == 2
    assert res["kernels"]["k1"]["times"]["tuned"] == [0.25, 0.25]
    capsys.readouterr()
    assert run.main(["table", out]) == 0
    text = capsys.readouterr().out
    assert "| tuned/seed | tuned/tuned-tiles |" in text
    assert "| k1 | 1.0000 | 2.00 | 4.00 | 2.50 | 2.00 | 1.60 |" in text
    assert "| k2 | 2.0000 | 2.00 | 2.00 | 2.50 | 1.00 | 0.80 |" in text
    assert "tuned over the seed: geometric mean 1.41x over 2 kernels (issue 17's target: at least 1.3x): met." in text
    assert "slower on 1 of 2: k2 0.80x" in text
    assert "- k1 tuned: `--choice a=b`; at MEDIUM the tuner measured 1.50x" in text
