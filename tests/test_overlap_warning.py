"""Array parameters that a caller may pass overlapping (`smooth(A, A)`) are checked at run time instead of
assumed apart: the optimized code runs where the ranges the region touches do not overlap, the original
code otherwise (a note says so). No check where every call of a static function in the translation unit
passes distinct objects (arrays, or pointers assigned only fresh allocations)."""
from __future__ import annotations

import os
import subprocess

import pytest
from conftest import KERNELS

from polytune.cli import main

SMOOTH = ("#include <stdlib.h>\n#define N 40\n"
          "{storage}void smooth(double out[N][N], double in[N][N])\n{{\n  int i, j;\n#pragma scop\n"
          "  for (i = 1; i < N - 1; i++)\n    for (j = 1; j < N - 1; j++)\n"
          "      out[i][j] = 0.25 * (in[i - 1][j] + in[i + 1][j]);\n#pragma endscop\n}}\n{callers}")
NOTE = ("note: the optimized code runs where a run-time check holds, the original code otherwise: "
        "no overlap of in and out")

CASES = {
    # (storage class, the rest of the file, checked)
    "static_distinct_globals": ("static ", "double A[N][N], B[N][N];\n"
                                "int main(void) { smooth(A, B); smooth(B, A); return 0; }\n", False),
    "static_polybench_style": ("static ", "#define ARRAY(x) *x\nint main(void) {\n"
                               "  double (*A)[N][N] = malloc(sizeof *A), (*B)[N][N] = malloc(sizeof *B);\n"
                               "  smooth(ARRAY(A), (double (*)[N]) ARRAY(B));\n  return 0;\n}\n", False),
    "static_local_arrays": ("static ", "int main(void) { double A[N][N], B[N][N]; smooth(A, B); return 0; }\n",
                            False),
    "static_not_called": ("static ", "", False),
    "static_same_array_twice": ("static ", "double A[N][N], B[N][N];\n"
                                "int main(void) { smooth(A, B); smooth(A, A); return 0; }\n", True),
    "static_same_array_through_a_row": ("static ", "double A[2][N][N];\n"
                                        "int main(void) { smooth(A[0], *A); return 0; }\n", True),
    "static_address_taken": ("static ", "double A[N][N], B[N][N];\nvoid (*f)(double (*)[N], double (*)[N]);\n"
                             "int main(void) { f = smooth; f(A, B); return 0; }\n", True),
    "static_callers_parameters": ("static ", "void api(double (*x)[N], double (*y)[N]) { smooth(x, y); }\n",
                                  True),
    "static_one_callers_parameter": ("static ", "double B[N][N];\n"
                                     "void api(double (*x)[N]) { smooth(x, B); }\n", True),
    "static_pointer_copied": ("static ", "double A[N][N];\n"
                              "int main(void) { double (*p)[N] = A; smooth(A, p); return 0; }\n", True),
    "static_pointer_reassigned": ("static ", "int main(void) {\n  double (*A)[N] = malloc(sizeof(double) * N * N);"
                                  "\n  double (*B)[N] = malloc(sizeof(double) * N * N);\n  B = A;\n"
                                  "  smooth(A, B);\n  return 0;\n}\n", True),
    "not_static": ("", "double A[N][N], B[N][N];\nint main(void) { smooth(A, B); return 0; }\n", True),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_overlap_checked_at_run_time_only_where_a_caller_may_pass_one_array_twice(case, tmp_path, capsys):
    storage, callers, checked = CASES[case]
    src = tmp_path / "s.c"
    src.write_text(SMOOTH.format(storage=storage, callers=callers))
    out = tmp_path / "s.opt.c"
    assert main(["optimize", str(src), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert [x for x in err.splitlines() if ": note:" in x or ": warning:" in x] == \
        ([f"{src}:6: {NOTE}"] if checked else [])
    assert ("__UINTPTR_TYPE__" in out.read_text()) == checked


SHARED = """#include <stdio.h>
#include <stdlib.h>
void smooth(int n, double *out, double *in)
{
#pragma scop
  for (int t = 0; t < 3; t++)
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        out[i * n + j] = 0.25 * (in[(i - 1) * n + j] + in[(i + 1) * n + j] + in[i * n + j - 1] + in[i * n + j + 1]);
#pragma endscop
}
int main(int argc, char **argv)
{
  int n = argc > 1 ? atoi(argv[1]) : 50;
  double *A = malloc(sizeof(double) * n * n * 2), *B = malloc(sizeof(double) * n * n);
  for (int i = 0; i < 2 * n * n; i++) A[i] = (i % 13) * 0.125;
  for (int i = 0; i < n * n; i++) B[i] = 0;
  smooth(n, B, A);
  smooth(n, A, A);
  smooth(n, A + n * n / 2, A);
  smooth(n, A, A + n);
  double s = 0;
  for (int i = 0; i < 2 * n * n; i++) s += A[i] * (i % 7);
  for (int i = 0; i < n * n; i++) s += B[i] * (i % 5);
  printf("%.17g\\n", s);
  return 0;
}
"""


def test_one_array_passed_for_two_parameters_gives_the_original_results(tmp_path):
    """`smooth(n, A, A)` and overlapping parts of one array: the run-time check sends them to the original
    code; `smooth(n, B, A)` runs the optimized code (same results, 1 and 2 threads)."""
    src = tmp_path / "shared.c"
    src.write_text(SHARED)
    out = tmp_path / "shared.opt.c"
    assert main(["optimize", str(src), "-o", str(out)]) == 0
    assert "__UINTPTR_TYPE__" in out.read_text()
    subprocess.run(["gcc", "-O2", str(src), "-o", str(tmp_path / "ref")], check=True)
    subprocess.run(["gcc", "-O2", "-fopenmp", str(out), "-o", str(tmp_path / "opt")], check=True)
    for n in ("7", "40"):
        want = subprocess.run([str(tmp_path / "ref"), n], capture_output=True, text=True, check=True).stdout
        for threads in ("1", "2"):
            got = subprocess.run([str(tmp_path / "opt"), n], capture_output=True, text=True, check=True,
                                 env=dict(os.environ, OMP_NUM_THREADS=threads)).stdout
            assert got == want, (n, threads)


def test_the_readme_first_command_prints_no_note(tmp_path, capsys):
    assert main(["optimize", os.path.join(KERNELS, "gemm.c"), "-o", str(tmp_path / "gemm.opt.c")]) == 0
    assert capsys.readouterr().err.splitlines() == [f"polytune: 1 scop region optimized -> {tmp_path}/gemm.opt.c"]


@pytest.mark.skipif(not os.path.isdir("/work/polybench"), reason="needs PolyBench/C 4.2.1 at /work/polybench")
def test_polybench_as_distributed_gets_no_check(tmp_path, capsys):
    root = "/work/polybench"
    for kernel in ("stencils/jacobi-2d/jacobi-2d.c", "linear-algebra/blas/gemm/gemm.c"):
        path = os.path.join(root, kernel)
        assert main(["optimize", path, "-I", os.path.join(root, "utilities"), "-I", os.path.dirname(path),
                     "-o", str(tmp_path / "k.c")]) == 0
        assert ": note:" not in capsys.readouterr().err
