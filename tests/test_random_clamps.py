"""Random programs whose taps clamp a coordinate to the edge (progen.clamped_program: index scalars clamped by ifs,
conditionals in subscripts, one-sided clamps, some in time loops): every C variant prints what the original
prints at 1, 2 and 4 threads, with the parallel code forced on (conftest: POLYTUNE_PARALLEL_WORK=0). They exercise
poly/split.py on sizes below the taps' width and under odd tiles. A fast sample, one C variant each; ``-m slow``
every variant of POLYTUNE_CLAMPED_PROGRAMS programs (default 100) from 1000; CI runs the first 6 (.ci/run)."""
from __future__ import annotations

import os

import pytest
from conftest import representatives
from progen import clamped_program
from test_random_programs import C_VARIANTS, check_program

SLOW = range(1000, 1000 + int(os.environ.get("POLYTUNE_CLAMPED_PROGRAMS", "100")))


@pytest.mark.parametrize("seed", representatives(range(4), {"2"}))
def test_clamped_program_same_output(seed):
    check_program(seed, [list(C_VARIANTS)[seed % len(C_VARIANTS)]], make=clamped_program, threads=(1, 2, 4))


@pytest.mark.slow  # (CI's generator line runs it)
def test_the_clamped_generator_makes_programs_whose_loops_are_split(tmp_path, monkeypatch):
    import polytune.emit.c as emit
    from polytune.pipeline import OptimizeOptions, analyze, generate
    found: list[int] = []
    split = emit.split_choices

    def counted(scop, schedule):
        out = split(scop, schedule)
        found.append(out is not None)
        return out

    monkeypatch.setattr(emit, "split_choices", counted)
    programs = 0
    for seed in range(3):
        path = tmp_path / f"c{seed}.c"
        path.write_text(clamped_program(seed).source)
        before = len(found)
        generate(analyze(str(path)), OptimizeOptions())
        programs += any(found[before:])
    assert programs == 3, programs


@pytest.mark.slow
@pytest.mark.parametrize("seed", SLOW)
def test_clamped_program_same_output_slow(seed):
    check_program(seed, list(C_VARIANTS), make=clamped_program, threads=(1, 2, 4))
