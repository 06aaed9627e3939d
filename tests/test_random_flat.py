"""Differential test over tests/progen.py's programs written with flat arrays (`progen.flattened`): `A[x][y]`
as `A[(x) * w + (y)]` with the row length w a run-time argument. Delinearization recovers the rows under the
assumption that every column subscript stays in [0, w); the output checks it at run time.

- w = SIZE (the assumption holds): the optimized flat program prints what the 2-D original prints;
- w = 5 (columns up to 2 * NMAX + 4 overlap the next rows): the original code runs, and the optimized
  program prints what the flat original prints;
each at 1 and 2 threads. Odd seeds pass the arrays as pointer parameters of functions that are not static
(their overlap checked at run time too). The default run tries FAST seeds; ``-m slow`` tries
``POLYTUNE_FLAT_PROGRAMS`` programs (default 300) from ``POLYTUNE_FLAT_START`` (default 5000).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from progen import SIZE, flattened, program
from test_random_nests import run_main

GCC = shutil.which("gcc")
pytestmark = pytest.mark.skipif(GCC is None, reason="gcc not found")
FAST = range(6)
SLOW_START = int(os.environ.get("POLYTUNE_FLAT_START", "5000"))
SLOW = range(SLOW_START, SLOW_START + int(os.environ.get("POLYTUNE_FLAT_PROGRAMS", "300")))
TIMEOUT = float(os.environ.get("POLYTUNE_TIMEOUT", "60"))
OVERLAPPING = "5"  # a row length that breaks the assumption


def _run(exe: Path, args: list[str], threads: int = 1) -> bytes:
    run = subprocess.run([str(exe), *args], capture_output=True, timeout=60,
                         env=dict(os.environ, OMP_NUM_THREADS=str(threads)))
    assert run.returncode == 0, f"{exe.name} {args} exited with {run.returncode}"
    return run.stdout


def check_flat(seed: int, options: tuple[str, ...] = ()) -> str:
    """Program *seed* flattened: the checks above; returns "versioned" when the output has run-time checks."""
    plain = program(seed)
    flat = flattened(plain, pointers=seed % 2 == 1)
    with tempfile.TemporaryDirectory(prefix="polytune-flat-") as d:
        tmp = Path(d)
        (tmp / "plain.c").write_text(plain.source)
        (tmp / "flat.c").write_text(flat.source)
        for name in ("plain", "flat"):
            subprocess.run([GCC, "-O1", str(tmp / f"{name}.c"), "-o", str(tmp / name), "-lm"], check=True,
                           capture_output=True)
        rc, err = run_main(["optimize", str(tmp / "flat.c"), "-o", str(tmp / "opt.c"), *options], TIMEOUT)
        assert rc == 0, f"polytune exit {rc}: {err}\n{flat!r}"
        cc = subprocess.run([GCC, "-O1", "-fopenmp", str(tmp / "opt.c"), "-o", str(tmp / "opt"), "-lm"],
                            capture_output=True, text=True)
        assert cc.returncode == 0, cc.stderr[:2000]
        want = _run(tmp / "plain", [])
        assert _run(tmp / "flat", []) == want
        overlapped = _run(tmp / "flat", [OVERLAPPING])
        for threads in (1, 2):
            assert _run(tmp / "opt", [], threads) == want, f"w = {SIZE}, {threads} thread(s)\n{flat!r}"
            assert _run(tmp / "opt", [OVERLAPPING], threads) == overlapped, \
                f"w = {OVERLAPPING}, {threads} thread(s)\n{flat!r}"
        return "versioned" if "if (" in (tmp / "opt.c").read_text() and "w >= " in \
            (tmp / "opt.c").read_text().replace("(", "") else "plain"


@pytest.mark.parametrize("seed", FAST)
def test_flattened_random_program_same_output(seed):
    check_flat(seed, ("--tile-sizes", "3,5,7,2") if seed % 3 == 2 else ())


def test_flattened_program_is_versioned_on_its_row_length():
    """Program 0 flattened reads rows of w elements: its output checks w against the column subscripts."""
    assert check_flat(0) == "versioned"


@pytest.mark.slow
@pytest.mark.parametrize("seed", SLOW)
def test_flattened_random_program_same_output_slow(seed):
    check_flat(seed, ("--tile-sizes", "3,5,7,2") if seed % 3 == 2 else ())
