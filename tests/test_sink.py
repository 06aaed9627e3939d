"""A tiled band whose point loops enclose other bands gets a point loop that carries no dependence, and along
which no access jumps across rows, moved below those bands (poly/sink.py) where their innermost loops walk an
array down its columns: applying Householder reflectors (LAPACK's dlarf pattern), whose i sweeps ran down A's
columns inside the (j, k) tile, then runs the tile's columns innermost."""
from __future__ import annotations

import re
import shutil

import pytest
from conftest import run_source

from polytune.pipeline import OptimizeOptions, analyze, generate

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not found")

HOUSEHOLDER = """#include <stdio.h>
#define M ROWS
#define N COLS
#define K REFL
double A[M][N], V[M][K], w[N + 1], tau[K];
int main(void) {
  int i, j, k;
  for (i = 0; i < M; i++) {
    for (j = 0; j < N; j++) A[i][j] = ((i * 7 + j * 3) % 101) / 101.0;
    for (k = 0; k < K; k++) V[i][k] = ((i + 5 * k) % 17) / 17.0 - 0.5;
  }
  for (k = 0; k < K; k++) tau[k] = 1.0 / (M + k);
#pragma scop
  for (k = 0; k < K; k++)
    for (j = 0; j < N; j++) {
      w[j] = 0.0;
      for (i = 0; i < M; i++)
        w[j] += V[i][k] * A[i][j];
      for (i = 0; i < M; i++)
        A[i][j] -= tau[k] * V[i][k] * UPDATE;
    }
#pragma endscop
  for (i = 0; i < M; i++) for (j = 0; j < N; j++) printf("%a\\n", A[i][j]);
  return 0;
}
"""
MODEL = OptimizeOptions(schedule="model")


def _program(tmp_path, rows: int, cols: int, refl: int, update: str = "w[j]"):
    source = (HOUSEHOLDER.replace("ROWS", str(rows)).replace("COLS", str(cols)).replace("REFL", str(refl))
              .replace("UPDATE", update))
    path = tmp_path / "hh.c"
    path.write_text(source)
    return analyze(str(path)), source


def _sunk(result) -> list:
    return [b["sunk"] for b in result.report["scops"][0]["bands"] if b["sunk"] is not None]


def test_the_column_loop_of_householder_runs_innermost_below_the_row_sweeps(tmp_path):
    """(A matrix larger than the reuse rule's cache budget, so that the model tiles it: 700 x 450 doubles.)"""
    program, _ = _program(tmp_path, 700, 450, 6)
    result = generate(program, MODEL)
    assert _sunk(result), result.report["scops"][0]["bands"]
    # the sums and the update each sit in an innermost loop over the columns: A[i][c] with c that loop's counter
    for statement in (r"w\[\1\] \+=", r"A\[[^\]]+\]\[\1\] -="):
        assert re.search(r"for \(long (c\d+) = [^\n]*\{\n\s*" + statement, result.text), result.text


@pytest.mark.parametrize("rows,cols,refl", [(70, 45, 6), (3, 2, 1), (33, 65, 3),
                                            pytest.param(64, 64, 35, marks=pytest.mark.slow)])
def test_the_sunk_column_loop_prints_what_the_original_prints(tmp_path, rows, cols, refl):
    program, source = _program(tmp_path, rows, cols, refl)
    for opts in (MODEL, OptimizeOptions(), OptimizeOptions(schedule="outer")):
        code = generate(program, opts).text
        assert run_source(code, tmp_path, "out") == run_source(source, tmp_path, "orig")


def test_a_column_loop_that_carries_a_dependence_is_not_sunk_and_prints_the_same(tmp_path):
    # each column's update reads the previous column's sum: j carries a dependence
    program, source = _program(tmp_path, 40, 37, 4, update="w[j > 0 ? j - 1 : 0]")
    result = generate(program, MODEL)
    assert not _sunk(result)
    assert run_source(result.text, tmp_path, "out") == run_source(source, tmp_path, "orig")
