from __future__ import annotations

import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The tests' sizes are small: without this, the branch to a serial copy (poly/parallel.py: PARALLEL_WORK)
# would run their parallel loops serially, and the parallel code would go untested. Subprocesses inherit it.
os.environ.setdefault("POLYTUNE_PARALLEL_WORK", "0")
KERNELS = os.path.join(ROOT, "benchmarks", "pluto")
# Small sizes: every kernel runs in milliseconds; not powers of two on purpose.
SMALL = ["-DN=13", "-DTSTEPS=3", "-DNC=3", "-DD=7"]


def compile_run(src: str, exe: str, flags: list[str], openmp: bool, threads: int = 2) -> str:
    cmd = ["gcc", "-O2", *(["-fopenmp"] if openmp else []), *flags, src, "-o", exe, "-lm"]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    return subprocess.run([exe], check=True, capture_output=True, text=True, env=env, timeout=60).stdout


def checksum_line(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith("checksum"))


@pytest.fixture(autouse=True, scope="session")
def _need_gcc():
    if shutil.which("gcc") is None:
        pytest.skip("gcc is required")


class TritonHarness:
    """The Triton target's runner driven as the tuner drives it: each configuration's variant from the
    target, a configuration that runs the same code as one measured before answered by Memo (same_as)."""

    def __init__(self, program, build, runs: int = 5):
        import dataclasses

        from polytune.measure import Memo
        from polytune.pipeline import OptimizeOptions
        from polytune.targets.triton import TritonTarget
        self.target = TritonTarget(program, OptimizeOptions(target="triton"), dataclasses.replace(build, runs=runs))
        self.runner = self.target.runner()
        self.memo = Memo(self.runner)

    def __getattr__(self, name):  # the runner's state (mods, text, resources, ...)
        if name in ("runner", "target", "memo"):
            raise AttributeError(name)
        return getattr(self.runner, name)

    def measure_reference(self):
        return self.runner.reference()

    def measure(self, config, names):
        return self.memo.measure(self.target.variant(tuple(names), tuple(config)))

    def close(self) -> None:
        self.runner.close()
