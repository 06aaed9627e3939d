"""The warning that array parameters are assumed not to overlap: said where some caller may pass one array
for two parameters (a call in the file, a function that is not static, a function whose address is taken),
and not where every call of a static function in the translation unit passes distinct arrays."""
from __future__ import annotations

import os

import pytest
from conftest import KERNELS

from polytune.cli import main

SMOOTH = ("#include <stdlib.h>\n#define N 40\n"
          "{storage}void smooth(double out[N][N], double in[N][N])\n{{\n  int i, j;\n#pragma scop\n"
          "  for (i = 1; i < N - 1; i++)\n    for (j = 1; j < N - 1; j++)\n"
          "      out[i][j] = 0.25 * (in[i - 1][j] + in[i + 1][j]);\n#pragma endscop\n}}\n{callers}")
WARNING = "warning: the array parameters in, out are assumed not to overlap"

CASES = {
    # (storage class, the rest of the file, warned)
    "static_distinct_globals": ("static ", "double A[N][N], B[N][N];\n"
                                "int main(void) { smooth(A, B); smooth(B, A); return 0; }\n", False),
    "static_polybench_style": ("static ", "#define ARRAY(x) *x\nint main(void) {\n"
                               "  double (*A)[N][N] = malloc(sizeof *A), (*B)[N][N] = malloc(sizeof *B);\n"
                               "  smooth(ARRAY(A), (double (*)[N]) ARRAY(B));\n  return 0;\n}\n", False),
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
                                     "void api(double (*x)[N]) { smooth(x, B); }\n", False),
    "not_static": ("", "double A[N][N], B[N][N];\nint main(void) { smooth(A, B); return 0; }\n", True),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_overlap_warning_only_where_a_caller_may_pass_one_array_twice(case, tmp_path, capsys):
    storage, callers, warned = CASES[case]
    src = tmp_path / "s.c"
    src.write_text(SMOOTH.format(storage=storage, callers=callers))
    assert main(["optimize", str(src), "-o", str(tmp_path / "s.opt.c")]) == 0
    lines = [x for x in capsys.readouterr().err.splitlines() if ": warning:" in x]
    assert lines == ([f"{src}:6: {WARNING} (as Pluto assumes): declare them restrict, and do not pass one "
                      "array for two of them"] if warned else [])


def test_the_readme_first_command_prints_no_warning(tmp_path, capsys):
    assert main(["optimize", os.path.join(KERNELS, "gemm.c"), "-o", str(tmp_path / "gemm.opt.c")]) == 0
    assert capsys.readouterr().err.splitlines() == [f"polytune: 1 scop region optimized -> {tmp_path}/gemm.opt.c"]


@pytest.mark.skipif(not os.path.isdir("/work/polybench"), reason="needs PolyBench/C 4.2.1 at /work/polybench")
def test_polybench_as_distributed_gets_no_warning(tmp_path, capsys):
    root = "/work/polybench"
    for kernel in ("stencils/jacobi-2d/jacobi-2d.c", "linear-algebra/blas/gemm/gemm.c"):
        path = os.path.join(root, kernel)
        assert main(["optimize", path, "-I", os.path.join(root, "utilities"), "-I", os.path.dirname(path),
                     "-o", str(tmp_path / "k.c")]) == 0
        assert ": warning:" not in capsys.readouterr().err
