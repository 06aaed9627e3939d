"""optimize ends within a wall-clock limit on any input (issue 33, item 5): `--time-limit SECONDS` (default
30, 0: none). Each region's isl work runs in a worker process killed at its deadline; a region not done by
then keeps its original code, with one note naming it (file:line) and the stage that ran out."""
from __future__ import annotations

import multiprocessing
import os
import re
import tempfile
import time
from pathlib import Path

import pytest
from conftest import compile_run
from progen import large_program, large_region

import polytune.pipeline as pipeline
from polytune import timelimit
from polytune.cli import main
from polytune.pipeline import OptimizeOptions, analyze, slow_regions

# Issue 33's region exactly as written, called as the issue says (kernel0(2, 1, 6, 14, A, 4, 7, 7, B) on
# static int A[6][14], B[4][7][7]); its main fills the arrays and prints every element.
EIGHT = os.path.join(os.path.dirname(__file__), "data", "issue33_eight.c")

STENCIL = """  for (t = 0; t < 3; t++)
    for (i = 1; i < N - 1; i++)
      X[i] = (X[i - 1] + X[i] + X[i + 1]) / 3.0;"""


def regions_program(count: int) -> str:
    """*count* regions, each a small 1-D stencil on its own array in its own function; main prints all."""
    arrays = [f"X{k}" for k in range(count)]
    src = ["#include <stdio.h>", "#define N 40", f"double {', '.join(f'{a}[N]' for a in arrays)};", ""]
    for k, a in enumerate(arrays):
        src += [f"void kernel{k}(void)", "{", "  int t, i;", "#pragma scop", STENCIL.replace("X", a),
                "#pragma endscop", "}", ""]
    src += ["int main(void)", "{", "  int i;", "  for (i = 0; i < N; i++) {"]
    src += [f"    {a}[i] = (i * {k + 3}) % 7;" for k, a in enumerate(arrays)]
    src += ["  }"] + [f"  kernel{k}();" for k in range(count)]
    src += ["  for (i = 0; i < N; i++)"] + [f'    printf("%.17g\\n", {a}[i]);' for a in arrays]
    return "\n".join(src + ["  return 0;", "}", ""])


def pragma_lines(text: str) -> list[int]:
    return [n for n, line in enumerate(text.splitlines(), 1) if line.strip() == "#pragma scop"]


def optimize_timed(src, out, capsys, *args: str) -> tuple[int, list[str], float]:
    """`polytune optimize SRC -o OUT ARGS`: exit code, its stderr lines, wall seconds."""
    start = time.monotonic()
    rc = main(["optimize", str(src), "-o", str(out), *args])
    return rc, capsys.readouterr().err.splitlines(), time.monotonic() - start


def same_output(src, out, tmp_path) -> bool:
    if out.read_text() == src.read_text():  # kept as it was (10,000 statements take gcc minutes)
        return True
    want = compile_run(str(src), str(tmp_path / "ref"), [], openmp=False)
    return all(compile_run(str(out), str(tmp_path / "opt"), [], openmp=True, threads=t) == want for t in (1, 2))


@pytest.fixture
def forked(monkeypatch):
    """Workers forked from this process, so that they see the test's monkeypatches."""
    monkeypatch.setattr(timelimit, "_context", lambda: multiprocessing.get_context("fork"))


def stall_in_dependences(monkeypatch, lines: set[int], seconds: float = 600, touch: bool = False) -> None:
    """The dependence analysis of the regions starting at *lines* takes *seconds* (*touch*: after it has made
    a temporary file, as a killed worker could)."""
    real = pipeline.compute_dependences

    def slow(scop):
        if scop.begin_line in lines:
            if touch:
                tempfile.mkstemp(prefix="stalled-")
            time.sleep(seconds)
        return real(scop)
    monkeypatch.setattr(pipeline, "compute_dependences", slow)


@pytest.mark.slow
def test_issue_33_eight_statement_region_ends_within_the_default_limit_with_a_note(tmp_path, capsys):
    src, out = tmp_path / "eight.c", tmp_path / "out.c"
    src.write_text(Path(EIGHT).read_text())
    rc, err, seconds = optimize_timed(src, out, capsys)
    assert rc == 0 and seconds < timelimit.DEFAULT_TIME_LIMIT + 5, (seconds, err)
    assert any(line.startswith(f"{src}:4: note: ") for line in err), err
    assert same_output(src, out, tmp_path)


def test_a_straight_line_region_of_10000_statements_is_kept_at_once_with_a_note(tmp_path, capsys):
    src, out = tmp_path / "straight.c", tmp_path / "out.c"
    src.write_text(large_region(10_000, in_loop=False))
    rc, err, seconds = optimize_timed(src, out, capsys)
    assert rc == 0 and seconds < 15, (seconds, err)
    assert err[0] == f"{src}:8: note: the region has no loop: nothing to schedule, its original code is kept", err
    assert out.read_text() == src.read_text()


@pytest.mark.slow
def test_a_region_of_10000_statements_in_one_loop_ends_within_the_default_limit_with_a_note(tmp_path, capsys):
    src, out = tmp_path / "loop.c", tmp_path / "out.c"
    src.write_text(large_region(10_000, in_loop=True))
    rc, err, seconds = optimize_timed(src, out, capsys)
    assert rc == 0 and seconds < timelimit.DEFAULT_TIME_LIMIT + 5, (seconds, err)
    assert any(line.startswith(f"{src}:8: note: ") for line in err), err
    assert same_output(src, out, tmp_path)


def test_a_tiny_time_limit_keeps_the_original_code_with_a_note(tmp_path, capsys):
    src, out = tmp_path / "stencil.c", tmp_path / "out.c"
    src.write_text(regions_program(1))
    rc, err, _seconds = optimize_timed(src, out, capsys, "--time-limit", "0.001")
    assert rc == 0
    notes = [line for line in err if ": note: " in line]
    assert len(notes) == 1 and notes[0].startswith(f"{src}:8: note: the region was not optimized within the "
                                                   "time limit (0.001 s; "), err
    assert out.read_text() == src.read_text()
    assert same_output(src, out, tmp_path)


def test_the_region_past_its_deadline_keeps_its_code_and_the_others_are_optimized(tmp_path, capsys, monkeypatch,
                                                                                  forked):
    """Three regions, the second stalls in its dependence analysis: it is killed at its deadline (the time
    left less a reserve for the third), keeps its code, and a second worker does the third."""
    text = regions_program(3)
    first, second, third = pragma_lines(text)
    stall_in_dependences(monkeypatch, {second})
    monkeypatch.setattr(pipeline, "RESERVE_PER_REGION", 3.0)
    src, out = tmp_path / "three.c", tmp_path / "out.c"
    src.write_text(text)
    rc, err, seconds = optimize_timed(src, out, capsys, "--time-limit", "8")
    assert rc == 0 and seconds < 10, (seconds, err)
    assert [line for line in err if ": note: " in line] == [
        f"{src}:{second}: note: the region was not optimized within the time limit (8 s; dependence analysis ran "
        "out): its original code is kept (--time-limit)"], err
    code = out.read_text()
    assert "X1[i] = (X1[i - 1] + X1[i] + X1[i + 1]) / 3.0;" in code  # the second region as written
    assert code.count("#pragma scop") == 1 and "X0[" in code and "X2[" in code
    assert len(re.findall(r"for \(long ", code)) >= 4  # the first and the third transformed
    assert same_output(src, out, tmp_path)


def test_a_killed_worker_leaves_no_temporary_file(tmp_path, capsys, monkeypatch, forked):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    text = regions_program(1)
    stall_in_dependences(monkeypatch, set(pragma_lines(text)), touch=True)
    src, out = tmp_path / "one.c", tmp_path / "out.c"
    src.write_text(text)
    rc, err, _seconds = optimize_timed(src, out, capsys, "--time-limit", "2")
    assert rc == 0 and "dependence analysis ran out" in err[0], err
    assert os.listdir(scratch) == [] and sorted(os.listdir(tmp_path)) == ["one.c", "out.c", "tmp"]


@pytest.mark.parametrize("value", ["-1", "-0.5", "nan", "abc"])
def test_a_bad_time_limit_is_one_line_and_exit_code_2(value, tmp_path, capsys):
    src = tmp_path / "stencil.c"
    src.write_text(regions_program(1))
    assert main(["optimize", str(src), "-o", str(tmp_path / "out.c"), f"--time-limit={value}"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and ("time limit" in err[0] or "time-limit" in err[0]), err
    assert not (tmp_path / "out.c").exists()


def test_the_python_api_has_the_same_default_limit():
    assert OptimizeOptions().time_limit == timelimit.DEFAULT_TIME_LIMIT == 30


def test_time_limit_0_optimizes_in_this_process_as_before(tmp_path, capsys):
    src = tmp_path / "stencil.c"
    src.write_text(regions_program(2))
    outs = []
    for limit in ("0", "30"):
        out = tmp_path / f"out{limit}.c"
        rc, err, _seconds = optimize_timed(src, out, capsys, "--time-limit", limit)
        assert rc == 0 and not [line for line in err if ": note: " in line], err
        outs.append(out.read_text())
    assert outs[0] == outs[1]


def test_tune_and_bench_leave_out_a_region_whose_analysis_does_not_end(tmp_path, monkeypatch, forked):
    """The probe tune and bench run first (pipeline.slow_regions) names the stalled region; analyze leaves it
    out, so that its code stays as written in every variant."""
    text = regions_program(2)
    first, second = pragma_lines(text)
    stall_in_dependences(monkeypatch, {first})
    src = tmp_path / "two.c"
    src.write_text(text)
    skip, notes = slow_regions(str(src), time_limit=3)
    assert skip == (first,) and len(notes) == 1 and notes[0].startswith(f"{src}:{first}: note: "), notes
    monkeypatch.undo()
    program = analyze(str(src), skip=skip)
    assert [a.scop.begin_line for a in program.scops] == [second] and program.left_out == (first,)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_random_large_and_straight_line_regions_end_within_the_limit(seed, tmp_path, capsys):
    """tests/progen.py's large_program: 50 to 2,000 statements, straight-line or in one loop; optimize ends
    within its default limit (and 5 s for the process around it) and the output prints what the original
    prints."""
    p = large_program(seed)
    src, out = tmp_path / "large.c", tmp_path / "out.c"
    src.write_text(p.source)
    rc, err, seconds = optimize_timed(src, out, capsys)
    assert rc == 0 and seconds < timelimit.DEFAULT_TIME_LIMIT + 5, (p.summary, seconds, err)
    assert same_output(src, out, tmp_path), p.summary
