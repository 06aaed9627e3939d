"""The benchmark scripts without their machines: benchmarks/polybench/run.py's tune phase, streamed run and tuning
ratios (fake binaries, no PolyBench), and benchmarks/workers.py's summary of issue 18's benchmark."""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import stat
import sys

import pytest

BENCHMARKS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")


def load(name: str, path: str):
    spec = importlib.util.spec_from_file_location(name, os.path.join(BENCHMARKS, path))
    module = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def run():
    return load("polybench_run", os.path.join("polybench", "run.py"))


@pytest.fixture(scope="module")
def bench():
    return load("workers_bench", "workers.py")


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


def rec(mode, wall, search, best, best_s, seed_eval=None):
    return {"mode": mode, "wall_s": wall, "search_s": search, "evals": 12, "stop_reason": "converged",
            "best": best, "best_s": best_s, "seed_s": 0.2, "seed_eval_s": seed_eval, "timed_on": ["h/timer"],
            "strategy_s": search - 4.0, "fixed_s": 4.0, "original_s": 0.5}


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
                           "cpus": "0,1,2,3", "jobs": 4, "cpu": "x", "started": "now", "runs": 3,
                           "compile_cpus": "", "driver_cpus": ""})
    assert ("| gemm | 40.0 | 20.0 | err | 12 | 12 | - | 2.00 | - | 2.29 | - | 2.29 | - | never | - | 12.0 | 6.0 | - "
            "| no | 0.0% |") in text  # strategy 32 s / 14 s; 3x is never reached at a per-evaluation ratio of 2.29
    assert "- gemm ray: error: no Ray cluster" in text


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not found")
def test_the_modes_different_bests_are_built_and_timed_side_by_side_against_the_fastest(bench, tmp_path):
    import argparse
    args = argparse.Namespace(sizes={}, quick=True, threads=1, cflags="-O2", side_rounds=3, same_tolerance=0.03)
    recs = {"one": {"best_tiles": [32, 32, 32]}, "jobs": {"best_tiles": [16, 32, 32]},
            "ray": {"best_tiles": [32, 32, 32]}, "lost": {"error": "x", "best_tiles": [8, 8, 8]}}
    side = bench.side_by_side(args, "gemm", recs, "", str(tmp_path))
    assert sorted((tuple(x["tiles"]), tuple(x["modes"])) for x in side["configs"]) == \
        [((16, 32, 32), ("jobs",)), ((32, 32, 32), ("one", "ray"))]
    fastest = [x for x in side["configs"] if x["ratio"] == 1.0]
    assert len(fastest) == 1 and fastest[0]["verdict"] == "holds"
    assert all(x["rounds"] == 3 and x["median_s"] > 0 for x in side["configs"])
    assert bench.side_by_side(args, "gemm", {"one": {"best_tiles": [32, 32, 32]},
                                             "jobs": {"best_tiles": [32, 32, 32]}}, "", str(tmp_path)) is None


def test_cpu_groups_are_disjoint_pairs(bench):
    assert bench.groups_of(bench.cpu_list("0-7"), 2) == [[0, 1], [2, 3], [4, 5], [6, 7]]


@pytest.mark.skipif(not os.path.exists("/usr/bin/gcc") and not os.path.exists("/usr/local/bin/gcc"),
                    reason="gcc not found")
def test_run_cpu_times_another_checkouts_output_beside_this_trees_and_compares_checksums(tmp_path, capsys):
    cpu = load("run_cpu_bench", "run_cpu.py")
    root = os.path.dirname(BENCHMARKS)
    # this tree as the "before" checkout: the two outputs are the same program, so their checksums agree
    assert cpu.main(["--kernels", "mvt", "--reps", "1", "--threads", "1", "--before", root, "-DN=64",
                     "--markdown"]) == 0
    out = capsys.readouterr().out
    assert "before/this" in out and "CHECKSUMS DIFFER" not in out
    assert "| mvt | " in out.split("before / this tree 1T |")[1]


@pytest.mark.skipif(not os.path.exists("/usr/bin/gcc") and not os.path.exists("/usr/local/bin/gcc"),
                    reason="gcc not found")
def test_run_cpu_times_plutos_output_where_the_directory_has_it(tmp_path, capsys):
    cpu = load("run_cpu_bench2", "run_cpu.py")
    root = os.path.dirname(BENCHMARKS)
    # a stand-in for Pluto's output of mvt: the original itself (same checksum); gemver has none
    shutil.copy(os.path.join(root, "benchmarks", "pluto", "mvt.c"), tmp_path / "mvt.pluto.c")
    assert cpu.main(["--kernels", "mvt,gemver", "--reps", "1", "--threads", "1", "--pluto", str(tmp_path),
                     "-DN=64", "--markdown"]) == 0
    out = capsys.readouterr().out
    assert "pluto/this" in out and "CHECKSUMS DIFFER" not in out
    table = out.split("polytune / Pluto 1T |")[1]
    assert "| mvt | " in table and "| gemver | " not in table


def benchmark_scripts() -> list[str]:
    out = []
    for root, dirs, files in os.walk(BENCHMARKS):
        dirs[:] = sorted(d for d in dirs if d not in ("results", "__pycache__"))
        out += [os.path.relpath(os.path.join(root, f), BENCHMARKS) for f in sorted(files)
                if f.endswith(".py") and "argparse" in open(os.path.join(root, f)).read()]
    return out


@pytest.mark.parametrize("script", benchmark_scripts())
def test_every_benchmark_script_prints_its_help(script):
    import subprocess
    done = subprocess.run([sys.executable, os.path.join(BENCHMARKS, script), "--help"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout


def test_bench_workers_table_compares_the_tuning_phase_one_after_another_and_at_once():
    bw = load("bench_workers", "bench_workers.py")

    def run(mode: str, at_once: int, tuning: float, wall: float) -> dict:
        k = {"evals": 13, "search_s": 4.0, "best": [32, 64, 32], "best_s": 0.01, "seed_speedup": 1.1,
             "tuned_speedup": 1.3, "notes": []}
        return {"mode": mode, "wall_s": wall, "tuning_s": tuning, "tunes_at_once": at_once,
                "kernels": {"gemm": k, "lu": k}}

    res = {"kernel_list": ["gemm", "lu"], "defines": "N=1000", "strategies": "hill", "max_evals": 13, "threads": 2,
           "runs": 3, "cpu": "x", "modes": list(bw.MODES),
           "results": {"jobs-1": run("jobs-1", 1, 40.0, 50.0), "jobs": run("jobs", 2, 25.0, 35.0),
                       "ray-1": run("ray-1", 1, 44.0, 54.0), "ray": {"mode": "ray", "error": "no Ray cluster"}}}
    text = bw.markdown(res)
    assert "| jobs | 2 | 35.0 | 25.0 | 13, 4.0, [32, 64, 32], 1.30x |" in text
    assert "| ray | - | - | - | no Ray cluster |" in text
    assert "- jobs: tuning one after another / at once: 1.60; bench wall 1.43" in text
    assert "- ray: tuning one after another / at once: -" in text


def test_workers_says_whether_a_timings_cpus_share_a_core(bench, tmp_path):
    for cpu, (package, core) in enumerate([(0, 0), (0, 0), (0, 1), (1, 1)]):
        d = tmp_path / f"cpu{cpu}" / "topology"
        d.mkdir(parents=True)
        (d / "physical_package_id").write_text(f"{package}\n")
        (d / "core_id").write_text(f"{core}\n")
    assert bench.core_sharing([0, 1], str(tmp_path)) == "one core"  # SMT siblings
    assert bench.core_sharing([1, 2], str(tmp_path)) == "own cores"
    assert bench.core_sharing([2, 3], str(tmp_path)) == "own cores"  # core 1 of two packages
    assert bench.core_sharing([0, 1, 2], str(tmp_path)) == "mixed"
    assert bench.core_sharing([0, 9], str(tmp_path)) == "unknown"
