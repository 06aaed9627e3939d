"""What the program around a region sees: a loop iterator read after the region (it holds the exit value
of the last loop that ran, which the optimized code, counting in its own variables, does not leave there)
and a floating-point variable in a bound, subscript or condition (the model's parameters are integers;
`c0 < x` with a double x is not even an OpenMP loop) are refused in one line."""
from __future__ import annotations

from pathlib import Path

import pytest
from test_int_types import check_program
from test_reliability_options import EACH

from polytune.cli import main

LOOPS = "  for (i = 0; i < n; i++)\n    for (j = 0; j < n; j++)\n      A[i][j] += 1;\n"


def _optimize(tmp_path: Path, text: str) -> tuple[int, Path, Path]:
    src, out = tmp_path / "p.c", tmp_path / "p.opt.c"
    src.write_text(text)
    return main(["optimize", str(src), "-o", str(out)]), src, out


@pytest.mark.parametrize("after, name, line", [('  printf("%d\\n", i);\n', "i", 6), ("  return j;\n", "j", 7),
                                               ("  if (i > 3) n = 2;\n  return n;\n", "i", 6)])
def test_iterator_read_after_the_region_is_refused(after: str, name: str, line: int, tmp_path: Path, capsys):
    rc, src, out = _optimize(tmp_path, "#include <stdio.h>\ndouble A[64][64];\nint f(int n) {\n  int i, j;\n"
                             f"#pragma scop\n{LOOPS}#pragma endscop\n{after}}}\n")
    assert rc == 2 and not out.exists()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"{src}:{line}: loop iterator '{name}' is read after the region"), err


def test_global_iterator_used_elsewhere_is_refused(tmp_path: Path, capsys):
    rc, src, out = _optimize(tmp_path, "double A[64][64];\nint i, j;\nvoid f(int n) {\n#pragma scop\n"
                             f"{LOOPS}#pragma endscop\n}}\nint g(void) {{ return i; }}\n")
    assert rc == 2 and "loop iterator 'i' is read after the region" in capsys.readouterr().err


@pytest.mark.parametrize("after", ["  i = 0;\n  return i + n;\n", "  for (i = 0; i < 3; i++) n++;\n  return n;\n",
                                   "  return n;\n"])
def test_iterator_assigned_before_any_read_after_the_region_is_accepted(after: str, tmp_path: Path, capsys):
    rc, _, out = _optimize(tmp_path, "double A[64][64];\nint f(int n) {\n  int i, j;\n"
                           f"#pragma scop\n{LOOPS}#pragma endscop\n{after}}}\n")
    assert rc == 0 and out.exists()


def test_iterators_declared_in_their_loops_are_accepted(tmp_path: Path, capsys):
    rc, _, out = _optimize(tmp_path, "double A[64][64];\nint i = 7;\nint f(int n) {\n#pragma scop\n"
                           "  for (int i = 0; i < n; i++)\n    A[i][0] += 1;\n#pragma endscop\n  return i;\n}\n")
    assert rc == 0 and out.exists()


@pytest.mark.parametrize("body, where", [("for (i = 0; i < x; i++) A[i][0] = 1;", "non-affine loop bound"),
                                         ("for (i = 0; i < 9; i++) A[i][(int)x] = 1;", "non-affine subscript")])
def test_floating_point_value_in_bounds_conditions_subscripts_is_refused(body: str, where: str, tmp_path: Path,
                                                                        capsys):
    rc, src, out = _optimize(tmp_path, f"double A[64][64];\nvoid f(double x) {{\n  int i;\n#pragma scop\n  {body}\n"
                             "#pragma endscop\n}\n")
    assert rc == 2 and not out.exists()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"{src}:5: {where} ('x' is a floating-point value)"), err


FLOATING_CONDITION = r"""#include <stdio.h>
double A[64][64];
static void f(double x) {
  int i;
#pragma scop
  for (i = 0; i < 9; i++) if (i < x) A[i][0] = 1;
#pragma endscop
}
int main(void) {
  f(4.5);
  for (int q = 0; q < 9; q++) printf("%g\n", A[q][0]);
  return 0;
}
"""


def test_floating_point_value_in_a_condition_is_a_data_dependent_condition(tmp_path, monkeypatch):
    """`if (i < x)` with a double x is evaluated as written, its statement a may-write (not a model constraint)."""
    out = check_program(tmp_path, "float_if", FLOATING_CONDITION, [], "1\n1\n1\n1\n1\n0\n0\n0\n0\n", monkeypatch)
    assert "< x" in out.read_text()


# issue 33: a `j` of main() is another variable than the region's; a memory-benchmark shape (STREAM's ssize_t)
OTHER_FUNCTION = r"""#include <stdio.h>
#include <sys/types.h>
#define N 50
static double a[N], b[N], c[N];
static void copy_scale(double s) {
  ssize_t j;
#pragma scop
  for (j = 0; j < N; j++)
    c[j] = a[j];
  for (j = 0; j < N; j++)
    b[j] = s * c[j];
#pragma endscop
}
int main(void) {
  ssize_t j;
  for (j = 0; j < N; j++) a[j] = j * 0.5;
  for (j = 0; j < 3; j++) copy_scale(1.5 + j);
  printf("%ld %.17g %.17g\n", (long)j, b[N - 1], c[7]);
  return 0;
}
"""

DATA_DEPENDENT_IF = r"""#include <stdio.h>
double A[100];
static void f(int n) {
  int z;
#pragma scop
  for (int i = 0; i < n; i++) {
    z = (int)A[i];
    if (z < 0)
      A[i] = 0;
  }
#pragma endscop
}
int main(void) {
  for (int q = 0; q < 100; q++) A[q] = (q % 7) - 3.5;
  f(100);
  for (int q = 0; q < 100; q += 9) printf("%g\n", A[q]);
  return 0;
}
"""


@pytest.mark.parametrize("options", EACH)
def test_data_dependent_condition_is_a_may_write_and_the_program_prints_what_the_original_prints(
        tmp_path: Path, monkeypatch, options):
    """An `if` on a value read from the data (issue 33 refused it in one line; the real-code work since models
    its writes as may-writes): the optimized program, parallel code forced on, prints what the original does."""
    check_program(tmp_path, "data_if", DATA_DEPENDENT_IF, options, None, monkeypatch)
