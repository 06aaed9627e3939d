"""Unsigned iterators and parameters (found by benchmarks/corpus_sweep.py's style of code: `unsigned i`,
`size_t n`). C computes unsigned arithmetic modulo 2^N; polytune's model is over the integers. The model is
exact where no unsigned value is negative, which extract checks with isl where each expression runs; the
output prints unsigned parameters as long in generated bounds and casts unsigned iterators back to their
type where a statement uses them as values."""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import checksums_before_and_after

from polytune.cli import main

PROGRAM = r"""
#include <stdio.h>
#include <stddef.h>
double A[40][40];
double B[40][40];
static void kernel(unsigned n, size_t m, int k) {
  unsigned i, j;
  size_t p, q;
#pragma scop
  for (i = 1; i < n; i++)
    for (j = 1; j < n; j++)
      A[i][j] = A[i - 1][j - 1] + 0.5 * i + (i > k ? 1.0 : 3.0);
  for (p = 0; p < m; p++)
    for (q = p + 1; q < m; q++)
      B[p][q] = B[q][p] + (double)(p - q) * 1e-12 + A[m - 1 - q][p];
  for (i = n; i > 0; i--)
    B[i - 1][0] = B[i - 1][0] * 0.5 + i;
#pragma endscop
}
int main(void) {
  for (int x = 0; x < 40; x++)
    for (int y = 0; y < 40; y++) { A[x][y] = (x * 7 + y) % 5; B[x][y] = (x + 3 * y) % 7; }
  kernel(29, 31, -1);
  double s = 0;
  for (int x = 0; x < 40; x++)
    for (int y = 0; y < 40; y++) s += (A[x][y] + B[x][y]) * (x + 2 * y + 1);
  printf("checksum: %.12e\n", s);
  return 0;
}
"""


@pytest.mark.parametrize("options", [[], ["--schedule", "pluto"], ["--schedule", "outer"], ["--no-tile"]])
def test_unsigned_program_computes_what_the_original_does(options: list[str], tmp_path: Path, capsys):
    want, got = checksums_before_and_after(PROGRAM, tmp_path, ["--tile-sizes", "4,5,3", *options])
    assert got == want


def test_unsigned_parameters_count_as_long_in_generated_bounds(tmp_path: Path, capsys):
    src, out = tmp_path / "u.c", tmp_path / "u.opt.c"
    src.write_text(PROGRAM)
    assert main(["optimize", str(src), "-o", str(out), "--tile-sizes", "4,5,3", "--schedule", "pluto"]) == 0
    text = out.read_text()
    assert "((long)n)" in text and "(unsigned int) c" in text


BAD = {
    "subscript_wraps": ("unsigned n, i, j;", "for (i = 0; i < n; i++) for (j = 0; j < n; j++) A[i][(j - 1) % 8] = 1;",
                        "'j - 1' may be negative, in unsigned arithmetic (j unsigned)"),
    "bound_wraps_at_zero": ("unsigned n, i;", "for (i = 0; i <= n - 1; i++) A[i][0] = 1;",
                            "'n - 1' may be negative, in unsigned arithmetic (n unsigned)"),
    "signed_compared_as_unsigned": ("unsigned n, i; int j;",
                                    "for (i = 0; i < n; i++) for (j = -2; j < i; j++) A[i][j + 2] = 1;",
                                    "'j' may be negative and is converted to unsigned in 'j < i'"),
    "counts_down_past_zero": ("unsigned n, i;", "for (i = n; i >= 0; i--) A[i][0] = 1;",
                              "the unsigned loop iterator 'i' counts down past 0"),
    "starts_negative": ("unsigned i; int n, m;", "for (i = m; i < n; i++) A[0][0] += 1;",
                        "the unsigned loop iterator 'i' starts at 'm', which may be negative"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_unsigned_arithmetic_that_may_wrap_is_refused_in_one_line(case: str, tmp_path: Path, capsys):
    decl, body, message = BAD[case]
    src, out = tmp_path / "w.c", tmp_path / "w.opt.c"
    src.write_text(f"double A[64][64];\nvoid f(void) {{\n  {decl}\n#pragma scop\n  {body}\n#pragma endscop\n}}\n")
    assert main(["optimize", str(src), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"{src}:5: ") and message in err[0], err
    assert not out.exists()


def test_signed_arithmetic_beside_unsigned_is_not_checked(tmp_path: Path, capsys):
    """`j - i` with long j and unsigned int i is long in C (a wider signed type holds every unsigned int)."""
    src, out = tmp_path / "s.c", tmp_path / "s.opt.c"
    src.write_text("double A[64][64];\nvoid f(long n) {\n  unsigned i; long j;\n#pragma scop\n"
                   "  for (i = 0; i < n; i++) for (j = 0; j < n; j++) A[i][j] = A[i][j - i + 20];\n"
                   "#pragma endscop\n}\n")
    assert main(["optimize", str(src), "-o", str(out)]) == 0
