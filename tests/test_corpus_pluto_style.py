"""Pluto-style integer division calls in bounds and subscripts: `floord(e, d)` and `ceild(e, d)` with a
positive constant d (functions or macros of that name, as Pluto and CLooG write them) are floor and ceiling
divisions in the model; the output computes what the original does."""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import checksums_before_and_after

from polytune.cli import main

PROGRAM = r"""
#include <stdio.h>
static inline long floord(long n, long d) { return n >= 0 ? n / d : -((-n + d - 1) / d); }
static inline long ceild(long n, long d) { return n >= 0 ? (n + d - 1) / d : -((-n) / d); }
double A[48][48];
static void kernel(int n) {
  int i, j;
#pragma scop
  for (i = 0; i < n; i++)
    for (j = floord(i - 5, 2) + 3; j <= ceild(i + n, 3); j++)
      A[i][j] = A[i][j - 1] * 0.5 + A[floord(i, 2)][ceild(j, 4)] + floord(i - j, 3);
#pragma endscop
}
int main(void) {
  for (int x = 0; x < 48; x++)
    for (int y = 0; y < 48; y++) A[x][y] = (x * 7 + y) % 5;
  kernel(31);
  double s = 0;
  for (int x = 0; x < 48; x++)
    for (int y = 0; y < 48; y++) s += A[x][y] * (x + 2 * y + 1);
  printf("checksum: %.12e\n", s);
  return 0;
}
"""


@pytest.mark.parametrize("options", [[], ["--schedule", "pluto"], ["--schedule", "outer"]])
def test_floord_ceild_calls_compute_what_the_original_does(options: list[str], tmp_path: Path, capsys):
    want, got = checksums_before_and_after(PROGRAM, tmp_path, ["--tile-sizes", "4,5,3", *options])
    assert got == want


def test_floord_by_a_non_constant_is_refused(tmp_path: Path, capsys):
    src = tmp_path / "fv.c"
    src.write_text("double A[9];\nlong floord(long, long);\nvoid f(int n, int k) {\n  int i;\n#pragma scop\n"
                   "  for (i = 0; i < floord(n, k); i++) A[i] = 1;\n#pragma endscop\n}\n")
    assert main(["optimize", str(src), "-o", str(tmp_path / "o.c")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"{src}:6: non-affine loop bound"), err
