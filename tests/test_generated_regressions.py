"""Programs of the random-program generator (tests/progen.py, as it was at the time) on which polytune once
gave wrong code or an internal error: kept verbatim in tests/data/generated/, so that they stay tested when
the generator changes. Each prints its results; the optimized program must print exactly the same."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from test_random_nests import run_main

DATA = Path(__file__).parent / "data" / "generated"
GCC, GXX = shutil.which("gcc"), shutil.which("g++")


def _run(cmd: list[str], exe: Path, threads: int = 1) -> bytes:
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    return subprocess.run([str(exe)], check=True, capture_output=True, timeout=60, env=env).stdout


@pytest.mark.skipif(GCC is None, reason="needs gcc")
def test_lastprivate_scalar_written_under_a_guard_keeps_the_last_writers_value(tmp_path):
    """seed 11023: `s` written under a guard that isl left inside a loop wider than the statement's
    iterations (its last iteration writes nothing): `lastprivate(s)` returned a thread's uninitialized copy
    at 2 threads. The loop must stay sequential there."""
    src, out = DATA / "seed11023.c", tmp_path / "opt.c"
    expected = _run([GCC, "-O1", str(src), "-o", str(tmp_path / "orig"), "-lm"], tmp_path / "orig")
    rc, err = run_main(["optimize", str(src), "-o", str(out)], 120)
    assert rc == 0, err
    subprocess.run([GCC, "-O1", "-fopenmp", str(out), "-o", str(tmp_path / "opt"), "-lm"], check=True,
                   capture_output=True, timeout=120)
    for threads in (1, 2, 2, 2):
        env = dict(os.environ, OMP_NUM_THREADS=str(threads))
        got = subprocess.run([str(tmp_path / "opt")], check=True, capture_output=True, timeout=60, env=env).stdout
        assert got == expected, f"{threads} thread(s)"


@pytest.mark.skipif(GXX is None or GCC is None, reason="needs gcc and g++")
@pytest.mark.parametrize("seed", [11079, 10019, 10286, 1007, 1032])
def test_generated_program_cuda_output_emulated_matches(seed):
    """11079: isl's stride scaling put two statements of one band on different threads (a race: wrong
    values); 1007: a statement at a fixed value of the mapped loop ran on the first thread instead of the
    thread of that value, beside the instances it depends on (a race; 1032: such a value that depends on
    a parameter); 10019, 10286: a band empty under the
    context, and an array extent defined for some sizes only, were internal errors."""
    from test_gpu_random_nests import check_cuda
    check_cuda((DATA / f"seed{seed}.c").read_text(), None, f"seed {seed}")
