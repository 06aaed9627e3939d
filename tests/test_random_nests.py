"""Differential test: random affine loop nests (tests/nestgen.py) print exactly the same after polytune.

The original is compiled with ``gcc -O2 -lm``, the optimized program with ``gcc -O2 -fopenmp -lm`` and run on
2 threads. Tiling keeps the order of the updates of each element, so the results must be bit-identical.
The default run tries 25 fixed examples; ``-m slow`` tries 300 random ones (``POLYTUNE_SLOW_EXAMPLES``
overrides the count).
"""
from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from nestgen import programs
from polytune.cli import main

GCC = shutil.which("gcc")
pytestmark = pytest.mark.skipif(GCC is None, reason="gcc not found")

tile_sizes = st.lists(st.sampled_from([1, 2, 3, 5, 32]), min_size=1, max_size=3).map(
    lambda xs: ",".join(map(str, xs)))


def _build_and_run(src: Path, exe: Path, openmp: bool) -> bytes:
    cmd = [GCC, "-O2", *(["-fopenmp"] if openmp else []), str(src), "-o", str(exe), "-lm"]
    cc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert cc.returncode == 0, f"{' '.join(cmd)} failed:\n{cc.stderr}\n--- {src.name}:\n{src.read_text()}"
    env = dict(os.environ, OMP_NUM_THREADS="2")
    try:
        run = subprocess.run([str(exe)], capture_output=True, timeout=30, env=env)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{exe.name} did not finish in 30 s\n--- {src.name}:\n{src.read_text()}") from None
    assert run.returncode == 0, f"{exe.name} exited with {run.returncode}\n--- {src.name}:\n{src.read_text()}"
    return run.stdout


def check_same_output(source: str, sizes: str, no_parallel: bool) -> None:
    options = ["--tile-sizes", sizes] + (["--no-parallel"] if no_parallel else [])
    note(f"options: {' '.join(options)}")
    with tempfile.TemporaryDirectory(prefix="polytune-nest-") as d:
        tmp = Path(d)
        src, opt = tmp / "nest.c", tmp / "nest_opt.c"
        src.write_text(source)
        expected = _build_and_run(src, tmp / "orig", openmp=False)
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            rc = main(["optimize", str(src), "-o", str(opt), *options])
        assert rc == 0, f"polytune {' '.join(options)} failed (exit {rc}): {err.getvalue()}"
        got = _build_and_run(opt, tmp / "opt", openmp=True)
        if got != expected:
            exp_lines, got_lines = expected.splitlines(), got.splitlines()
            bad = [k for k, (a, b) in enumerate(zip(exp_lines, got_lines)) if a != b]
            raise AssertionError(
                f"output differs ({len(bad)} of {len(exp_lines)} printed values"
                f"{', line count differs' if len(exp_lines) != len(got_lines) else ''}; first at line "
                f"{bad[0] + 1 if bad else '?'}) with {' '.join(options)}\n--- optimized:\n{opt.read_text()}")


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(prog=programs(), sizes=tile_sizes, no_parallel=st.sampled_from([False, False, False, True]))
def test_random_nest_same_output(prog, sizes, no_parallel):
    check_same_output(prog.source, sizes, no_parallel)


@pytest.mark.slow
@settings(max_examples=int(os.environ.get("POLYTUNE_SLOW_EXAMPLES", "300")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(prog=programs(), sizes=tile_sizes, no_parallel=st.sampled_from([False, False, False, True]))
def test_random_nest_same_output_slow(prog, sizes, no_parallel):
    check_same_output(prog.source, sizes, no_parallel)
