"""Scalars written inside a scop: privatized (OpenMP lastprivate) exactly when that is what the sequential
program computes, kept shared (and the loop sequential) otherwise."""
from __future__ import annotations

import re

import pytest
from conftest import compile_run

from polytune.cli import main

HEAD = """#include <stdio.h>
#include <math.h>
#define N 37
static double A[N], B[N], s, t;
static void kernel(void)
{
  int i, j;
#pragma scop
"""
TAIL = """#pragma endscop
}
int main(void)
{
  int i;
  for (i = 0; i < N; i++) { A[i] = (i * 7 % 11) - 3.5; B[i] = 0.5 * i; }
  s = 1.25; t = -2.0;
  kernel();
  double cs = s + 3 * t;
  for (i = 0; i < N; i++) cs += (i + 1) * B[i];
  printf("checksum: %.17g\\n", cs);
  return 0;
}
"""

CASES = {
    # a temporary written first in every iteration: private, and the last iteration's value is s's final value
    "temporary": ("for (i = 0; i < N; i++) {\n  s = A[i] * 2.0;\n  for (j = 0; j < N; j++)\n"
                  "    s = fmax(s, A[j] - i);\n  B[i] = s + 1.0;\n}\n", ["s"]),
    # two temporaries, as in a row softmax
    "two": ("for (i = 0; i < N; i++) {\n  s = 0.0;\n  t = A[i];\n  for (j = 0; j < N; j++)\n"
            "    s += A[j] * t;\n  B[i] = s / t;\n}\n", ["s", "t"]),
    # a running sum: the value flows between iterations, the loop stays sequential
    "carried": ("for (i = 0; i < N; i++) {\n  s += A[i];\n  B[i] = s;\n}\n", None),
    # read before written in each iteration: the previous iteration's value
    "read_first": ("for (i = 0; i < N; i++) {\n  B[i] = s;\n  s = A[i];\n}\n", None),
    # written only where i < 5: the loop may be privatized only over the iterations that write s (isl
    # gives those statements their own loop), so the last iteration's value is still the final one
    "partial": ("for (i = 0; i < N; i++) {\n  if (i < 5) {\n    s = A[i];\n    B[i] = s * s;\n  }\n"
                "  A[i] = A[i] + 1.0;\n}\n", "any"),
    # only read inside the loop: no privatization needed, the loop is parallel anyway
    "read_only": ("for (i = 0; i < N; i++)\n  B[i] = A[i] * s;\n", []),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_scalar_privatization(tmp_path, name, monkeypatch):
    monkeypatch.setenv("POLYTUNE_EXPANSION_LIMIT", "0")  # privatization itself (expansion would replace it)
    body, private = CASES[name]
    src = tmp_path / f"{name}.c"
    src.write_text(HEAD + body + TAIL)
    out = tmp_path / f"{name}.opt.c"
    assert main(["optimize", str(src), "-o", str(out)]) == 0
    code = out.read_text()
    pragmas = re.findall(r"#pragma omp parallel for(.*)", code)
    if private is None:
        assert not pragmas, pragmas
    elif private != "any":
        assert len(pragmas) == 1
        got = re.findall(r"lastprivate\((.*)\)", pragmas[0])
        assert (got[0].split(", ") if got else []) == private
    ref = compile_run(str(src), str(tmp_path / "ref"), [], openmp=False)
    for threads in (1, 2, 3):
        assert compile_run(str(out), str(tmp_path / "opt"), [], openmp=True, threads=threads) == ref


ACCUMULATOR = """#include <stdio.h>
#define N 37
static double A[N][N], B[N][N], C[N][N], D[N][N], g;
int main(void)
{
  int i, j, k;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) { A[i][j] = (i * 7 + j) % 11 - 3.5; B[i][j] = 0.25 * ((i + 3 * j) % 5); }
#pragma scop
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) {
      double s = 0.0;
      for (k = 0; k < N; k++)
        s += A[i][k] * B[k][j];
      C[i][j] = s;
    }
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) {
      g = 0.0;
      for (k = 0; k < N; k++)
        g += B[k][j] * A[k][i];
      D[i][j] = g;
    }
#pragma endscop
  double cs = g;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) cs += (1 + (i + 2 * j) % 7) * (C[i][j] + D[i][j]);
  printf("checksum: %.17g\\n", cs);
  return 0;
}
"""


def test_scalar_accumulators_get_an_outer_simd_loop(tmp_path, monkeypatch):
    """A j loop that is parallel once its accumulator is private, with unit-stride accesses along j, is
    `omp simd` (gcc does not vectorize it inside an OpenMP loop otherwise). A variable declared inside the
    region is `private` (dead after it); one declared outside stays `lastprivate` (its final value is
    read after the region, here by the checksum)."""
    monkeypatch.setenv("POLYTUNE_EXPANSION_LIMIT", "0")  # without scalar expansion (which tiles these nests)
    src = tmp_path / "acc.c"
    src.write_text(ACCUMULATOR)
    out = tmp_path / "acc.opt.c"
    assert main(["optimize", str(src), "-o", str(out)]) == 0
    code = out.read_text()
    assert "#pragma omp parallel for private(s)" in code and "#pragma omp simd private(s)" in code
    assert "#pragma omp simd lastprivate(g)" in code
    ref = compile_run(str(src), str(tmp_path / "ref"), ["-ffp-contract=off"], openmp=False)
    for threads in (1, 2, 3):
        assert compile_run(str(out), str(tmp_path / "opt"), ["-ffp-contract=off"], openmp=True,
                           threads=threads) == ref


# A 5-tap filter along j whose taps are clamped to the row (`jj` stays in [0, N - 1]): the accumulator makes the j
# loop parallel once private, but the clamped read moves by 0 at the edges and 1 inside
CLAMPED = ACCUMULATOR.replace("""      double s = 0.0;
      for (k = 0; k < N; k++)
        s += A[i][k] * B[k][j];
      C[i][j] = s;""", """      double s = 0.0;
      for (k = 0; k < 5; k++) {
        int jj = j + k - 2;
        if (jj < 0) jj = 0;
        if (jj > N - 1) jj = N - 1;
        s += B[0][k] * A[i][jj];
      }
      C[i][j] = s;""")


def test_a_loop_whose_access_moves_by_different_steps_gets_no_simd_pragma(tmp_path, monkeypatch):
    """`omp simd` forces a vector loop; over a clamped subscript gcc can only gather (realc gaussian_clamp ran 12%
    slower than gcc's own choice), so the loop is left to gcc; the unclamped nest keeps its pragma."""
    monkeypatch.setenv("POLYTUNE_EXPANSION_LIMIT", "0")
    assert CLAMPED != ACCUMULATOR
    src = tmp_path / "clamp.c"
    src.write_text(CLAMPED)
    out = tmp_path / "clamp.opt.c"
    assert main(["optimize", str(src), "-o", str(out)]) == 0
    code = out.read_text()
    assert "#pragma omp simd private(s)" not in code and "#pragma omp simd lastprivate(g)" in code
    ref = compile_run(str(src), str(tmp_path / "ref"), ["-ffp-contract=off"], openmp=False)
    for threads in (1, 2):
        assert compile_run(str(out), str(tmp_path / "opt"), ["-ffp-contract=off"], openmp=True,
                           threads=threads) == ref


# Loops that run no iteration for some parameter values, or at the edge of an outer loop: OpenMP leaves a
# lastprivate scalar unspecified after a loop of no iteration (gcc copied back an uninitialized private
# copy: issue 14), and a scalar declared in the region but read after the loop is not dead there.
ZERO_TRIP = {
    "parametric": ("static double kernel(int n, double s)\n{\n  int i;\n#pragma scop\n"
                   "  for (i = 0; i < n; i++) { s = A[i] * 2.0; B[i] = s + 1.0; }\n#pragma endscop\n"
                   "  return s;\n}\n"),
    "inner_edge": ("static double kernel(int n, double s)\n{\n  int k, l;\n#pragma scop\n"
                   "  for (k = 0; k < n; k++) {\n    for (l = k + 1; l < n; l++) { s = A[l] * 2.0 + k; B[l] += s; }\n"
                   "    C[k] = s;\n  }\n#pragma endscop\n  return s;\n}\n"),
    "local_live": ("static double kernel(int n, double s0)\n{\n  int i;\n#pragma scop\n  double s = s0;\n"
                   "  for (i = 0; i < n; i++) { s = A[i] * 2.0; B[i] = s + 1.0; }\n  C[0] = s;\n"
                   "#pragma endscop\n  return C[0];\n}\n"),
}
ZERO_TRIP_MAIN = """
int main(void)
{
  int i, n;
  for (i = 0; i < 20; i++) A[i] = i;
  for (n = 0; n < 4; n++)
    printf("%d %.17g\\n", n, kernel(n, 42.0));
  printf("%.17g\\n", kernel(20, 42.0));
  for (i = 0; i < 20; i++) printf("%.17g %.17g\\n", B[i], C[i]);
  return 0;
}
"""


@pytest.mark.parametrize("options", [[], ["--schedule", "outer"], ["--no-tile"], ["--tile-sizes", "3,5,7"]],
                         ids=["default", "outer", "no-tile", "odd-tiles"])
@pytest.mark.parametrize("name", sorted(ZERO_TRIP))
def test_scalar_after_a_loop_of_no_iteration_keeps_its_value(tmp_path, name, options):
    """A scalar written in a parallel loop keeps its value when the loop runs no iteration (n = 0, or an
    inner loop `l = k + 1 .. n - 1` at k = n - 1), at 1 and 2 threads, under every option set."""
    src = tmp_path / f"{name}.c"
    src.write_text("#include <stdio.h>\nstatic double A[20], B[20], C[20];\n" + ZERO_TRIP[name] + ZERO_TRIP_MAIN)
    out = tmp_path / f"{name}.opt.c"
    assert main(["optimize", str(src), "-o", str(out), *options]) == 0
    ref = compile_run(str(src), str(tmp_path / "ref"), [], openmp=False)
    assert "0 42\n" in ref
    for threads in (1, 2):
        assert compile_run(str(out), str(tmp_path / "opt"), [], openmp=True, threads=threads) == ref
