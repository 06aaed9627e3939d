"""Random programs with data-dependent conditions (progen.sibling_program: sibling nests that isl fuses, some
statements under `if (X > 0.25)` with and without `else`, some adding taps in a scalar; progen.conditioned_program:
the ordinary generator's programs with conditions on values they read): every C variant prints what the original
prints at 1, 2 and 4 threads, with the parallel code forced on (conftest: POLYTUNE_PARALLEL_WORK=0). They exercise
poly/distribute.py, which the other generators never reach (no data-dependent condition). A fast sample, one C
variant each; ``-m slow`` every variant of POLYTUNE_SIBLING_PROGRAMS programs (default 300) from
POLYTUNE_SIBLING_PROGRAMS_START (default 1000), of POLYTUNE_CONDITIONED_PROGRAMS (default 60) and of
POLYTUNE_LOCAL_SCALAR_PROGRAMS (default 100; progen.local_scalar_program: scalars declared in loop bodies, whose
live ranges poly/deps.LiveRanges reorders); CI runs the first 12, 3 and 6 (.ci/run)."""
from __future__ import annotations

import os

import pytest
from conftest import representatives
from progen import conditioned_program, local_scalar_program, sibling_program
from test_random_programs import C_VARIANTS, check_program

SLOW_START = int(os.environ.get("POLYTUNE_SIBLING_PROGRAMS_START", "1000"))
SLOW = range(SLOW_START, SLOW_START + int(os.environ.get("POLYTUNE_SIBLING_PROGRAMS", "300")))
CONDITIONED = range(SLOW_START, SLOW_START + int(os.environ.get("POLYTUNE_CONDITIONED_PROGRAMS", "60")))
LOCAL = range(SLOW_START, SLOW_START + int(os.environ.get("POLYTUNE_LOCAL_SCALAR_PROGRAMS", "100")))


@pytest.mark.parametrize("seed", representatives(range(4), {"0", "1"}))
def test_sibling_program_same_output(seed):
    check_program(seed, [list(C_VARIANTS)[seed % len(C_VARIANTS)]], make=sibling_program, threads=(1, 2, 4))


def test_the_sibling_generator_makes_programs_whose_loops_are_distributed(tmp_path, monkeypatch):
    import polytune.poly.distribute as distribute
    from polytune.pipeline import OptimizeOptions, analyze, generate
    found: list[int] = []
    pieces = distribute.pieces

    def counted(node, scop, deps):
        out = pieces(node, scop, deps)
        found.extend([1] if out is not None else [])
        return out

    monkeypatch.setattr(distribute, "pieces", counted)
    programs = 0
    for seed in range(6):
        prog = sibling_program(seed)
        if "condition" in prog.summary:
            path = tmp_path / f"s{seed}.c"
            path.write_text(prog.source)
            before = len(found)
            generate(analyze(str(path)), OptimizeOptions(schedule="model"))
            programs += len(found) > before
    assert programs >= 2, programs


@pytest.mark.slow
@pytest.mark.parametrize("seed", SLOW)
def test_sibling_program_same_output_slow(seed):
    check_program(seed, list(C_VARIANTS), make=sibling_program, threads=(1, 2, 4))


@pytest.mark.slow
@pytest.mark.parametrize("seed", CONDITIONED)
def test_conditioned_program_same_output_slow(seed):
    check_program(seed, list(C_VARIANTS), make=conditioned_program, threads=(1, 2, 4))


@pytest.mark.parametrize("seed", representatives(range(4), {"0"}))
def test_local_scalar_program_same_output(seed):
    check_program(seed, [list(C_VARIANTS)[seed % len(C_VARIANTS)]], make=local_scalar_program, threads=(1, 2, 4))


@pytest.mark.slow  # (10 s; CI's generator line runs it)
def test_the_local_scalar_generator_makes_programs_whose_live_ranges_are_reordered(tmp_path):
    from polytune.pipeline import analyze
    relaxed = 0
    for seed in range(2):
        path = tmp_path / f"l{seed}.c"
        path.write_text(local_scalar_program(seed).source)
        relaxed += all(a.deps.live is not None for a in analyze(str(path)).scops)
    assert relaxed == 2, relaxed


@pytest.mark.slow
@pytest.mark.parametrize("seed", LOCAL)
def test_local_scalar_program_same_output_slow(seed):
    check_program(seed, list(C_VARIANTS), make=local_scalar_program, threads=(1, 2, 4))



@pytest.mark.slow  # (CI's generator line runs it)
def test_a_program_whose_live_ranges_interleave_after_scheduling_falls_back_to_the_scalars_order(
        tmp_path, monkeypatch):
    """progen.local_scalar_program(1017): two taps sums of one body and the scalar of a second nest; isl, given
    only the direct anti and output dependences, lets them interleave, the legality check refuses it and
    make_schedule takes the scalars' order (an internal error before the fallback). Same output."""
    from conftest import run_source

    import polytune.poly.schedule as schedule
    from polytune.pipeline import OptimizeOptions, analyze, generate
    fell_back: list[bool] = []
    in_order = schedule.Dependences.in_order

    def counted(self):
        fell_back.append(True)
        return in_order(self)

    monkeypatch.setattr(schedule.Dependences, "in_order", counted)
    path = tmp_path / "p.c"
    path.write_text(local_scalar_program(1017).source)
    text = generate(analyze(str(path)), OptimizeOptions(schedule="model")).text
    assert fell_back
    assert run_source(text, tmp_path, "out") == run_source(path.read_text(), tmp_path, "orig")
