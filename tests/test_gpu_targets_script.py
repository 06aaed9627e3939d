"""benchmarks/gpu_targets.py, the GPU targets' one-call benchmark: its tables from a record, and (slow) its
--quick run on the CPU (CUDA through tests/data/fake_nvcc.py, Triton interpreted), which must not need a GPU."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT

_spec = importlib.util.spec_from_file_location("gpu_targets", os.path.join(ROOT, "benchmarks", "gpu_targets.py"))
gpu_targets = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gpu_targets)

RECORD = {
    "device": "NVIDIA H200", "quick": False, "runs": 5, "wall_s": 201.5,
    "a": [{"kernel": "reduction_vanilla", "size": ["N=8192"],
           "cuda": {"default": {"ms": 0.68}, "tuned": {"ms": 0.35, "measured": 8}},
           "triton": {"default": {"ms": 0.102}, "tuned": {"ms": 0.096, "measured": 14}},
           "torch_sum_ms": 0.0875, "best_over_torch": 0.096 / 0.0875},
          {"kernel": "reduction_unroll", "skipped": "budget"}],
    "b": [{"kernel": "reduction_vanilla", "size": ["N=8192"], "configurations": 384, "builds": 88,
           "exhaustive": {"best": {"block_x": 8}, "ms": 0.0700, "evaluations": 264, "stop": "exhausted"},
           "hill": {"best": {"block_x": 16}, "ms": 0.0703, "evaluations": 21, "stop": "converged"},
           "best_ratio": 1.012, "evaluations_ratio": 21 / 264, "exhaustive_complete": True,
           "side_by_side": {"ratio": 1.004, "low": 0.998, "high": 1.010, "rounds": 15, "verdict": "holds"}},
          {"kernel": "reduction_interchange", "skipped": "budget"}],
    "c": [{"kernel": "stencil2d_vanilla", "size": ["N=2048"],
           "triton": {"default": {"ms": 0.2}, "tuned": {"ms": 0.07, "config": {"BLOCK_X": 64}}},
           "cuda": {"default": {"ms": 0.08}, "tuned": {"ms": 0.077, "measured": 8}}, "cuda_over_triton": 1.1}],
}


def test_tables_show_each_part_from_a_record(tmp_path, capsys):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(RECORD))
    assert gpu_targets.main(["--from-json", str(path)]) == 0
    out = capsys.readouterr().out
    assert "| reduction_vanilla | N=8192 | 0.6800 | 0.3500 (8) | 0.1020 | 0.0960 (14) | 0.0875 | 1.10 |" in out
    assert "| reduction_unroll | skipped (budget) |" in out
    assert ("| reduction_vanilla | N=8192 | 384 (88) | 0.0700, 264 | 0.0703, 21 | 1.012 | 1.004 (0.998-1.010), 15 "
            "| holds | 0.080 |") in out
    assert "| reduction_interchange | budget |" in out
    assert "| stencil2d_vanilla | N=2048 | 0.2000 | 0.0700 (BLOCK_X=64) | 0.0800 | 0.0770 (8) | 1.10 |" in out
    assert "QUICK" not in out


@pytest.mark.slow
def test_quick_run_on_the_cpu_writes_every_part(tmp_path):
    """One kernel per part at small sizes, in a subprocess (--quick sets TRITON_INTERPRET and emulates the
    GPU for the whole process); no CUDA device is needed."""
    out, md = tmp_path / "q.json", tmp_path / "q.md"
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    r = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "gpu_targets.py"), "--quick", "--runs", "1",
                        "--reductions", "reduction_vanilla", "--stencils", "stencil2d_vanilla", "--triton-evals", "1",
                        "--cuda-evals", "2", "--budget-s", "3000", "--json", str(out), "--markdown", str(md)],
                       capture_output=True, text=True, timeout=1800, env=env, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    rec = json.loads(out.read_text())
    assert rec["quick"] and "QUICK" in md.read_text()
    a, = rec["a"]
    assert a["torch_sum_ok"] and a["cuda"]["default"]["ms"] and a["triton"]["tuned"]["ms"], a
    b, = rec["b"]
    assert b["exhaustive"]["stop"] == "exhausted" and b["exhaustive_complete"], b
    # the exhaustive search measured every distinct variant, so the hill's best, looked up in its table, is
    # no better than its optimum, with fewer evaluations
    assert b["best_ratio"] >= 1.0 and b["hill"]["evaluations"] < b["exhaustive"]["evaluations"], b
    c, = rec["c"]
    assert c["triton"]["tuned"]["ms"] and c["cuda"]["tuned"]["ms"] and c["cuda_over_triton"] > 0, c


RECORDED_B = os.path.join(ROOT, "tests", "data", "gpu_targets_b_h200_n2048.json")  # the H200's part b at N=2048


def test_replay_of_the_recorded_n2048_table_ends_the_hill_at_the_optimum_among_16_in_its_noise():
    """The live hill ended 1.24x off (its own measurements); on the exhaustive table it ends at the optimum,
    and 16 configurations' run ranges overlap the optimum's: 2% is below what N=2048 resolves."""
    with open(RECORDED_B) as f:
        row, = json.load(f)["b"]
    r = gpu_targets.replay_hill(row)
    assert r["table_complete"] and r["recorded"] == 264
    assert r["hill_end"] == r["optimum"] == [256, 1, 1, 1, 0] and r["end_over_optimum"] == 1.0
    assert r["evaluations"] <= 26 and r["within_noise"] == 16 and r["hill_end_within_noise"]
    lo, hi, n = r["same_config_hill_over_exhaustive"]  # one configuration, two searches: up to 1.46x apart
    assert lo < 0.8 and hi > 1.4 and n == 16


def test_replay_takes_a_configuration_with_another_ones_code_as_a_free_repeat():
    row = {"kernel": "k", "size": ["N=1"], "space": {"x": [1, 2, 3]}, "seed": [1], "exhaustive_complete": True,
           "records": {"exhaustive": [{"config": [1], "times": [3.0, 3.1]}, {"config": [2], "times": [1.0, 1.2]}],
                       "exhaustive_repeats": [{"config": [3], "times": [1.0, 1.2], "same_as": [2]}]}}
    r = gpu_targets.replay_hill(row)
    assert r["hill_end"] == [2] and r["not_recorded"] == 0 and r["evaluations"] == 2
    assert r["within_noise"] == 1 and r["repeats"] == 1


def test_replay_cli_prints_a_row_per_recorded_exhaustive_table(capsys, tmp_path):
    out = tmp_path / "replay.json"
    assert gpu_targets.main(["--replay", RECORDED_B, "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "| reduction_vanilla | N=2048 | 264 (0), complete | 0.0082 (0.0073-0.0097) | 0.0082 | 1.000 |" in text
    assert json.loads(out.read_text())[0]["within_noise"] == 16


def test_part_b_runs_the_reductions_at_part_a_size_and_stencil3d_is_left_out_by_default():
    assert [gpu_targets.EXHAUSTIVE[k][0] for k in ("reduction_vanilla", "reduction_interchange")] == [("N=8192",)] * 2
    assert gpu_targets.STENCILS == ("stencil2d_vanilla",)
    assert abs(sum(gpu_targets.SHARES.values()) - 1) < 1e-9


def test_verdict_where_the_interval_straddles_the_band_edge_needs_it_narrower_than_the_tolerance():
    from verdicts import decide, paired_ratio
    assert decide(1.01, 1.0, 1.02, 0.02, 15)["verdict"] == "holds"
    assert decide(1.03, 1.02, 1.04, 0.02, 15)["verdict"] == "does not hold"
    assert decide(0.90, 0.89, 0.91, 0.02, 15, upper_only=True)["verdict"] == "holds"  # the hill ends faster
    assert decide(0.90, 0.89, 0.91, 0.02, 15)["verdict"] == "does not hold"
    wide = decide(1.0, 0.95, 1.05, 0.02, 15)
    assert wide["verdict"] == "undecided" and wide["rounds_needed"] > 15 * 6
    # an interval wholly on one side of the band's edge decides whatever its width
    assert decide(0.5, 0.3, 0.9, 0.02, 4, upper_only=True)["verdict"] == "holds"
    assert decide(1.5, 1.1, 2.0, 0.02, 4)["verdict"] == "does not hold"
    r = paired_ratio([1.1, 1.21, 1.0], [1.0, 1.1, 1.0])  # per-round ratios 1.1, 1.1, 1.0
    assert abs(r["ratio"] - (1.1 * 1.1) ** (1 / 3)) < 1e-12 and r["low"] < r["ratio"] < r["high"] and r["rounds"] == 3
