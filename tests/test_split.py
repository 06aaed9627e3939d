"""Index-set splitting (poly/split.py): where a loop makes a statement's clamps (an index clamped to the edge,
a conditional subscript, min/max) the same over every instance below it, the loop is split, and the copy in the
middle reads its taps without them; the edges keep the statement as written."""
from __future__ import annotations

import os

import islpy as isl
import pytest
from conftest import ROOT, compile_run, representatives
from pycparser import c_generator

from polytune.cli import main
from polytune.pipeline import OptimizeOptions, analyze, schedules
from polytune.poly.split import split_choices

CLAMPED = os.path.join(ROOT, "tests", "data", "clamped_taps.c")


def _optimized(tmp_path, *extra: str) -> str:
    out = tmp_path / "clamped.opt.c"
    assert main(["optimize", "-q", CLAMPED, "-o", str(out), *extra]) == 0
    return str(out)


@pytest.fixture(scope="module")
def default_output(tmp_path_factory) -> str:
    """clamped_taps.c optimized with the defaults (once for the tests that read it)."""
    return _optimized(tmp_path_factory.mktemp("clamped"))


def _statement_lines(code: str, array: str) -> list[str]:
    """The optimized region's lines reading *array* (before the original's copy, after `} else {`)."""
    region = code[:code.index("#undef")]
    return [line for line in region.splitlines() if f"{array}[" in line and "+=" in line]


def test_the_middle_of_a_clamped_row_reads_its_taps_without_the_clamps(default_output):
    code = open(default_output).read()
    rows, columns = _statement_lines(code, "src"), _statement_lines(code, "tmp")
    assert any("?" not in line for line in rows), rows
    assert any("?" in line for line in rows), rows  # (the edges keep them)
    assert any("?" not in line for line in columns), columns


@pytest.mark.parametrize("extra", representatives(
    [pytest.param((), id="default"), pytest.param(("--tile-sizes", "3,5,2"), id="small-tiles"),
     pytest.param(("--schedule", "pluto"), id="pluto"), pytest.param(("--schedule", "original"), id="original")],
    {"default"}))
def test_a_split_program_prints_what_the_original_prints_at_every_size(tmp_path, default_output, extra):
    out = _optimized(tmp_path, *extra) if extra else default_output
    for args in (("300", "200", "20"), ("1", "1", "3"), ("2", "3", "2"), ("5", "4", "7"), ("40", "3", "9")):
        want = compile_run(CLAMPED, str(tmp_path / "orig"), ["-ffp-contract=off"], False, args=args)
        for threads in (1, 2, 3):
            got = compile_run(out, str(tmp_path / "opt"), ["-ffp-contract=off"], True, threads, args=args)
            assert got == want, (args, threads)


def _split_of(tmp_path, body: str):
    src = tmp_path / "one.c"
    src.write_text("void f(int n, double A[restrict 40][40], const double B[restrict 40][40])\n{\n"
                   "#pragma scop\n" + body + "\n#pragma endscop\n}\n")
    program = analyze(str(src))
    (a,), (ts,) = program.scops, schedules(program, OptimizeOptions())
    return split_choices(a.cpu.scop, ts.schedule)


def test_a_choice_the_same_for_some_parameters_only_splits_the_loop_it_depends_on(tmp_path):
    # `j < 4 ? j : 4` is the same over all of i's instances only where n <= 4: the j loop is split, at 4
    split = _split_of(tmp_path, "for (int i = 0; i < n; i++)\n  for (int j = 0; j < n; j++)\n"
                                "    A[i][j] = B[i][j < 4 ? j : 4];")
    assert split is not None
    assert [st.name for st in split.scop.statements] == ["S0_0", "S0_1"]
    first = split.scop.statement("S0_0").domain
    assert first.is_equal(isl.Set("[n] -> { S0_0[i, j] : 0 <= i < n and 0 <= j < n and j <= 3 }"))
    assert c_generator.CGenerator().visit(split.scop.statement("S0_0").body) == "A[i][j] = B[i][j]"
    assert c_generator.CGenerator().visit(split.scop.statement("S0_1").body) == "A[i][j] = B[i][4]"


def test_a_choice_along_a_diagonal_splits_the_row_loop_inside_the_tiles_not_the_tiles(tmp_path):
    # cells over tile loops (or skewed ones) cost isl more than the split gains: clamped_taps.c's time loop,
    # tiled and skewed, took 67 s to generate; the row's loop j is split at the diagonal instead
    split = _split_of(tmp_path, "for (int i = 0; i < n; i++)\n  for (int j = 0; j < n; j++)\n"
                                "    A[i][j] = B[i][i + j < n ? j : 0];")
    assert split is not None
    assert [st.name for st in split.scop.statements] == ["S0_0", "S0_1"]
    assert split.scop.statement("S0_0").domain.is_equal(
        isl.Set("[n] -> { S0_0[i, j] : 0 <= i < n and 0 <= j < n - i }"))


def test_a_choice_that_alternates_along_its_loop_is_left_as_it_is(tmp_path):
    # even and odd columns would be two loops of stride 2
    assert _split_of(tmp_path, "for (int i = 0; i < n; i++)\n  for (int j = 0; j < n; j++)\n"
                               "    A[i][j] = B[i][j % 2 == 0 ? j : 0];") is None


def test_the_copies_hold_every_instance_once_in_the_same_schedule(tmp_path):
    src = "for (int i = 0; i < n; i++)\n  for (int j = 0; j < n; j++)\n" \
          "    A[i][j] = B[i > 0 ? i - 1 : 0][j < n - 1 ? j + 1 : n - 1];"
    split = _split_of(tmp_path, src)
    assert split is not None
    # the first row, the last column, their corner and the rest
    assert sorted(st.name for st in split.scop.statements) == ["S0_0", "S0_1", "S0_2", "S0_3"]
    whole = isl.Set("[n] -> { S0[i, j] : 0 <= i < n and 0 <= j < n }")
    assert split.renaming.is_injective() and split.renaming.domain().is_equal(isl.UnionSet(whole))
    assert split.renaming.range().is_equal(split.schedule.get_domain())
    old = _schedule_of(tmp_path, src)
    assert split.renaming.reverse().apply_range(old).is_equal(split.schedule.get_map())


def _schedule_of(tmp_path, body: str):
    program = analyze(str(tmp_path / "one.c"))
    (ts,) = schedules(program, OptimizeOptions())
    return ts.schedule.get_map()


BORDER = os.path.join(ROOT, "tests", "data", "border_ternary.c")


def test_an_element_read_in_one_branch_of_a_ternary_is_read_only_where_that_branch_is_taken(tmp_path, capsys):
    # in[(i - 1) * m + j] at i = 0 would be the row before the array: read as it is everywhere, the flattened
    # subscripts held only where the loops are empty (the optimized code ran only for n <= 0 or m <= 0)
    out = tmp_path / "border.opt.c"
    assert main(["optimize", BORDER, "-o", str(out)]) == 0
    assert "assumptions" not in capsys.readouterr().err
    code = out.read_text()
    interior = [line for line in code[:code.index("int main")].splitlines() if "0.25f" in line]
    assert interior and any("?" not in line for line in interior), interior
    for args in (("300", "200", "2"), ("1", "1", "1"), ("2", "2", "1"), ("3", "5", "2"), ("5", "3", "1"),
                 ("7", "1", "1"), ("1", "9", "1")):
        want = compile_run(BORDER, str(tmp_path / "orig"), ["-ffp-contract=off"], False, args=args)
        for threads in (1, 2):
            got = compile_run(str(out), str(tmp_path / "opt"), ["-ffp-contract=off"], True, threads, args=args)
            assert got == want, (args, threads)


CARRIED = """
static void f(int n, float *restrict A, float *restrict B, const float *restrict C)
{
#pragma scop
    for (int i = 1; i < n; i++) {
        A[i] = B[i - 1] + C[i < n - 1 ? i + 1 : n - 1];
        B[i] = A[i] * 0.5f;
    }
#pragma endscop
}
"""


def test_a_copy_keeps_the_order_its_loops_carried_dependences_ask_of_the_vector_loop(tmp_path):
    # B[i] (the second statement) flows to B[i - 1] (the first) one iteration later: printed first, the first
    # statement's copy must keep the loop from `#pragma GCC ivdep`, as the statement itself does
    src, out = tmp_path / "carried.c", tmp_path / "carried.opt.c"
    src.write_text(CARRIED)
    assert main(["optimize", "-q", str(src), "-o", str(out)]) == 0
    code = out.read_text()
    assert "C[c0 + 1]" in code  # (the clamp made in the middle's copy)
    assert "ivdep" not in code


TWO_NESTS = """
void f(int n, double A[restrict 30][30], double B[restrict 30][30])
{
#pragma scop
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double acc = 0.0;
            for (int k = 0; k < 3; k++) {
                int ii = i + k - 1;
                if (ii < 0)
                    ii = 0;
                acc += A[ii][j];
            }
            B[i][j] = acc;
        }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int ii = i + 1;
            if (ii > n - 1)
                ii = n - 1;
            A[i][j] = B[ii][j] * 0.5;
        }
#pragma endscop
}
"""


def test_each_nests_own_clamped_index_of_one_name_is_substituted_in_its_scope(tmp_path, capsys):
    # (progen.clamped_program(1029): the second `int ii` kept both as variables, and the subscripts read a value
    # the region writes)
    src, out = tmp_path / "two.c", tmp_path / "two.opt.c"
    src.write_text(TWO_NESTS)
    assert main(["optimize", str(src), "-o", str(out)]) == 0
    assert "not affine" not in capsys.readouterr().err
    code = out.read_text()
    assert "ii" not in code[:code.index("} else {")]
