"""Issue 14's two miscompiles under every option set of ``optimize``: a scalar written in a loop that runs no
iteration (lastprivate), and a loop iterator read after its loop (refused with one line, never taken for a
parameter). Each option set gives the original's results at 1 and 2 threads, or, for the iterator, the
one-line refusal with exit 2 and no output file.

The default suite refuses the iterator under each option value once (``ONE_EACH``) and runs the zero-trip
programs under ``FAST`` (tests/test_privatize.py runs four more); ``-m slow`` runs every program under
``ONE_EACH`` and under the product of the schedulers, the tilings and unroll-and-jam, plus every
``--choice`` alternative (``MATRIX``): 432 cases.
"""
from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import pytest
from conftest import compile_run
from test_privatize import ZERO_TRIP, ZERO_TRIP_MAIN
from test_random_nests import run_main

HERE = Path(__file__).parent
ITERATOR_AFTER_LOOP = (HERE / "bad_inputs" / "iterator_after_loop.c").read_text()
PROGRAMS = {name: "#include <stdio.h>\nstatic double A[20], B[20], C[20];\n" + text + ZERO_TRIP_MAIN
            for name, text in ZERO_TRIP.items()}
PROGRAMS["iterator_after_loop"] = ITERATOR_AFTER_LOOP

SCHEDULES = [[], ["--schedule", "pluto"], ["--schedule", "outer"], ["--schedule", "model"]]
TILINGS = [[], ["--no-tile"], ["--tile-sizes", "2,7,3,5"], ["--tile-sizes", "3,5,7"], ["--tile-sizes", "1"]]
UNROLLS = [[], ["--unroll-jam", "0"], ["--unroll-jam", "3"]]
CHOICES = [["--choice", c] for c in (
    "scheduler=pluto", "scheduler=outer", "fusion=max", "fusion=none", "omp_schedule=static",
    "omp_schedule=dynamic", "omp_schedule=auto", "privatize_arrays=0", "privatize_arrays=1",
    "point_order=vector", "point_order=stride", "unroll=2",
    "scheduler=outer,fusion=max,omp_schedule=dynamic,privatize_arrays=0,point_order=vector,unroll=3")]
OTHERS = [["--no-parallel"], ["--no-parallel", "--no-tile"], ["--schedule", "outer", "--no-parallel"]]
ONE_EACH = SCHEDULES + TILINGS[1:] + UNROLLS[1:] + CHOICES + OTHERS[:1]
FAST = [["--schedule", "pluto"], ["--no-parallel"], ["--unroll-jam", "3"], ["--tile-sizes", "2,7,3,5"],
        CHOICES[3], CHOICES[-1]]
MATRIX = [s + t + u for s, t, u in itertools.product(SCHEDULES, TILINGS, UNROLLS)] + CHOICES + OTHERS + \
    [c + t for c, t in itertools.product(CHOICES[:2], TILINGS[1:])]


def _name(options: list[str]) -> str:
    return " ".join(options) or "default"


# ONE_EACH for the tests that compile and run a program under each option set: the default and FAST in the
# default suite, the rest of ONE_EACH under -m slow (the default suite stays within its time)
EACH = [pytest.param(o, id=_name(o), marks=() if (not o or o in FAST) else pytest.mark.slow) for o in ONE_EACH]


def check(tmp_path: Path, name: str, options: list[str]) -> None:
    src, out = tmp_path / f"{name}.c", tmp_path / f"{name}.opt.c"
    src.write_text(PROGRAMS[name])
    rc, err = run_main(["optimize", str(src), "-o", str(out), *options])
    if name == "iterator_after_loop":
        lines = err.splitlines()
        assert rc == 2 and len(lines) == 1 and lines[0].startswith(f"{src}:14: ") \
            and "read outside its loop" in lines[0], (rc, err)
        assert not out.exists()
        return
    assert rc == 0, err
    ref = compile_run(str(src), str(tmp_path / "ref"), [], openmp=False)
    assert "0 42\n" in ref
    for threads in (1, 2):
        got = compile_run(str(out), str(tmp_path / "opt"), [], openmp=True, threads=threads)
        assert got == ref, f"{_name(options)} at {threads} thread(s):\n{out.read_text()}"


@pytest.mark.parametrize("options", ONE_EACH, ids=_name)
def test_iterator_read_after_its_loop_is_refused_under_each_option(tmp_path, options):
    check(tmp_path, "iterator_after_loop", options)


@pytest.mark.parametrize("options", FAST, ids=_name)
@pytest.mark.parametrize("name", sorted(ZERO_TRIP))
def test_zero_trip_scalar_keeps_its_value_under_more_options(tmp_path, name, options):
    check(tmp_path, name, options)


@pytest.mark.slow
@pytest.mark.parametrize("options", ONE_EACH + MATRIX, ids=_name)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_issue_14_miscompiles_give_the_original_results_under_the_option_matrix(tmp_path, name, options):
    check(tmp_path, name, options)


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
@pytest.mark.parametrize("name", sorted(ZERO_TRIP))
def test_zero_trip_scalar_keeps_its_value_on_the_emulated_cuda_target(name):
    """The CUDA target, run through tests/data/cuda_emu.h: the scalar after a loop of no iteration."""
    from test_gpu_random_nests import check_cuda
    check_cuda(PROGRAMS[name], None, name)
