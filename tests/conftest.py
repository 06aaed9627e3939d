from __future__ import annotations

import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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
