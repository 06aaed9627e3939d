"""Calls to the user's own functions: accepted as reads of their arguments where the user says the function
is pure (`__attribute__((pure))`/`const` in the file, or `--pure NAME`) or its definition shows it
(tests/test_purity.py), refused with one line otherwise."""
from __future__ import annotations

import islpy as isl
import pytest
from conftest import checksum_line, compile_run

from polytune.cli import main
from polytune.frontend import declared_pure
from polytune.pipeline import analyze

PURE = r"""
#include <stdio.h>
#include <math.h>
#define N 37
static double A[N][N], B[N][N], C[N];
double diff(double a, double b) __attribute__((pure));
double diff(double a, double b) { return a > b ? a - b : b - a; }
__attribute__((const)) static double twice(double x) { return 2 * x; }
static double rowsum(const double *r, int n) __attribute__ ((__pure__, __nothrow__));
static double rowsum(const double *r, int n) { double s = 0; for (int k = 0; k < n; k++) s += r[k]; return s; }
double bias = 0;  /* read by total(): its body does not show that it is pure (purity.py reads no global) */
double total(double a[N][N]);
double total(double a[N][N]) {
  double s = bias;
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) s += a[i][j];
  return s;
}
static void kernel(void) {
  int t, i, j;
#pragma scop
  for (t = 0; t < 3; t++) {
    for (i = 1; i < N - 1; i++)
      for (j = 1; j < N - 1; j++)
        B[i][j] = 0.25 * diff(A[i - 1][j], twice(A[i + 1][j])) + 0.1 * A[i][j - 1];
    for (i = 0; i < N; i++)
      C[i] = rowsum(B[i], N) * 1e-3 + total(A) * 1e-6;
    for (i = 1; i < N - 1; i++)
      for (j = 1; j < N - 1; j++)
        A[i][j] = B[i][j] * 0.5 + C[j] * 0.01;
  }
#pragma endscop
}
int main(void) {
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) { A[i][j] = (i * 3 + j) % 7; B[i][j] = 0; }
  kernel();
  double s = 0;
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) s += A[i][j] * (i + j + 1) + B[i][j];
  printf("checksum: %.12e\n", s);
  return 0;
}
"""


@pytest.fixture
def src(tmp_path):
    p = tmp_path / "pure.c"
    p.write_text(PURE)
    return str(p)


@pytest.mark.parametrize("shape", [[], ["--schedule", "outer"], ["--tile-sizes", "3,5,7,2,3"], ["--no-tile"]],
                         ids=["default", "outer", "odd_tiles", "no_tile"])
def test_pure_calls_optimized_compute_what_the_original_does(src, shape, tmp_path):
    expected = checksum_line(compile_run(src, str(tmp_path / "ref"), [], False))
    out = tmp_path / "opt.c"
    assert main(["optimize", src, "--pure", "total", *shape, "-o", str(out)]) == 0
    text = out.read_text()
    assert "diff(" in text and "twice(" in text and "rowsum(" in text and "total(" in text
    assert checksum_line(compile_run(str(out), str(tmp_path / "opt"), [], True)) == expected


def test_an_undeclared_call_is_refused_in_one_line_that_says_how_to_declare_it(src, capsys):
    assert main(["optimize", src, "-o", "-"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"{src}:26: call to 'total'")
    assert "__attribute__((pure))" in err and "--pure total" in err


def test_an_impure_call_is_refused(tmp_path, capsys):
    p = tmp_path / "impure.c"
    p.write_text("#include <stdio.h>\ndouble A[10];\nint noisy(int k) { printf(\"%d\", k); return k; }\n"
                 "void f(void) {\n#pragma scop\n  for (int i = 0; i < 10; i++)\n    A[i] = noisy(i);\n"
                 "#pragma endscop\n}\n")
    assert main(["optimize", str(p), "-o", "-"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"{p}:7: call to 'noisy' inside the scop: its side effects")


def test_arguments_are_reads_element_row_or_whole_array(src):
    """An element passed reads the element, a row `B[i]` reads the row, an array by name reads all of it;
    the left side is the only write."""
    scop = analyze(src, pure=("total",)).scops[0].scop
    s1 = scop.statements[1]
    assert [a.array for a in s1.writes] == ["C"]
    reads = {a.array: a.relation.intersect_domain(s1.domain) for a in s1.reads}
    ctx = "[_pt_K37] -> { S1[t, i] -> "
    assert reads["B"].is_equal(isl.Map(ctx + "B[i, o] }").intersect_domain(s1.domain))
    assert reads["A"].is_equal(isl.Map(ctx + "A[o, p] }").intersect_domain(s1.domain))
    s0 = scop.statements[0]
    assert sorted(a.array for a in s0.reads) == ["A", "A", "A"]


def test_attributes_found_on_declarations():
    text = ("double diff(double a, double b) __attribute__((pure));\n"
            "__attribute__ ((__const__)) static inline int sq(int);\n"
            "extern double foo(int) __attribute__ ((__nothrow__ , __leaf__));\n"
            "int bar(int) __attribute__((noinline));\n"
            "static int baz(int x) __attribute__((const)) ;\n"
            "__attribute__((format(printf, 1, 2))) void say(const char *fmt, ...);\n"
            "extern int fprintf(FILE *s, const char *f, ...) __attribute__ ((__nonnull__ (1)));\n")
    assert declared_pure(text) == {"diff", "sq", "baz"}


@pytest.mark.parametrize("target", ["cuda", "triton"])
def test_gpu_targets_refuse_a_c_function_in_one_line(src, target, tmp_path, capsys):
    assert main(["optimize", src, "--pure", "total", "--target", target, "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"{src}:") and "diff" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow  # (9 s, most of it the tune; CI's slow line)
def test_pure_option_for_inspect_and_tune(src, tmp_path, capsys):
    assert main(["inspect", src]) == 2
    capsys.readouterr()
    assert main(["inspect", src, "--pure", "total"]) == 0
    assert "S1 (line 26)" in capsys.readouterr().out
    best = tmp_path / "best.c"
    assert main(["tune", src, "--pure", "total", "--max-evals", "2", "--runs", "1", "--no-cache", "-o",
                 str(best)]) == 0
    assert "total(" in best.read_text()
