"""The CUDA target on a Ray instance with one (declared) GPU: candidates compiled by Ray workers, timed by the
timer that holds the GPU, on the CPU emulator (tests/data/fake_nvcc.py): the plumbing, not a GPU's times."""
from __future__ import annotations

import os

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # keeps Ray's addresses on 127.0.0.1
os.environ.setdefault("RAY_AUTH_MODE", "token")

import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import pytest  # noqa: E402

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.slow  # (a Ray instance takes seconds to start)

from conftest import ROOT, emu_header  # noqa: E402

import polytune.measure.cuda as measure_cuda  # noqa: E402
from polytune.measure.cuda import CudaBuildConfig  # noqa: E402
from polytune.tune import TuneOptions, tune  # noqa: E402
from polytune.workers.ray_pool import connect, disconnect  # noqa: E402

FAKE_NVCC = os.path.join(ROOT, "tests", "data", "fake_nvcc.py")


@pytest.fixture(scope="module")
def ray_with_a_gpu():
    emu_header()
    ray_exe = shutil.which("ray") or os.path.join(os.path.dirname(sys.executable), "ray")
    subprocess.run([ray_exe, "get-auth-token", "--generate"], capture_output=True)
    if not connect("auto", num_cpus=2, num_gpus=1):
        disconnect()
        pytest.skip("a Ray cluster runs on this machine already: these tests need a private instance")
    yield
    disconnect()


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_cuda_tune_on_ray_times_every_candidate_on_the_gpu_timer(ray_with_a_gpu, monkeypatch):
    monkeypatch.setattr(measure_cuda, "gpu_id", lambda: "emulated")
    build = CudaBuildConfig(cc=FAKE_NVCC, cflags=("-O1",), defines=("N=20", "M=30"), runs=1)
    r = tune(os.path.join(ROOT, "benchmarks", "gpu", "reduction_vanilla.c"),
             TuneOptions(target="cuda", cache=None, max_evals=5, ray="auto", confirm_runs=0), build)
    rep = r.report.to_json()
    assert rep["workers"]["ray"] == "auto" and len(rep["workers"]["timers"]) == 1
    assert rep["workers"]["timers"][0].endswith("/gpu0")
    measured = [e for e in rep["evaluations"] if e["error"] is None and e.get("same_as") is None]
    assert measured and {e["extra"]["worker"] for e in measured} == set(rep["workers"]["timers"])
    assert not {e["error"] for e in rep["evaluations"]} & {"wrong_answer", "runtime", "compile"}
    assert r.best_config is not None and "__global__" in r.best_text
