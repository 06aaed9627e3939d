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
    "b": [{"kernel": "reduction_vanilla", "size": ["N=2048"], "configurations": 384, "builds": 88,
           "exhaustive": {"best": {"block_x": 8}, "ms": 0.0200, "evaluations": 264, "stop": "exhausted"},
           "hill": {"best": {"block_x": 16}, "ms": 0.0203, "evaluations": 21, "stop": "converged"},
           "best_ratio": 1.012, "evaluations_ratio": 21 / 264, "exhaustive_complete": True}],
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
    assert "| reduction_vanilla | N=2048 | 384 (88) | 0.0200, 264 | 0.0203, 21 | 1.012 | 0.080 |" in out
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
