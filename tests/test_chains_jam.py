"""A band the reuse rule leaves untiled whose innermost loop is a reduction (atax's `tmp[i] += A[i][j] * x[j]`)
gets its outer parallel member unrolled and jammed into that loop (poly/point_order.py's chains_jam): u rows
accumulate side by side, u independent chains of adds where there was one. Each row keeps its own order of
additions, so the program prints exactly what the original prints. A nest that streams an array through
memory (each element used once) is jammed only where the copies share an element they write (bicg's column
sums `s[j] += r[i] * A[i][j]`), not where they would share only loads (poly/point_order.py's jam_reuse)."""
from __future__ import annotations

import re
import shutil

import pytest
from conftest import run_source

from polytune.pipeline import OptimizeOptions, analyze, generate
from polytune.poly.choice import ScheduleChoice

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not found")

ATAX = """#include <stdio.h>
#define M ROWS
#define N 29
double A[M][N], x[N], y[N], tmp[M];
int main(void) {
  int i, j;
  for (i = 0; i < M; i++)
    for (j = 0; j < N; j++) A[i][j] = ((i * 3 + j) % 13) / 13.0;
  for (j = 0; j < N; j++) x[j] = 1.0 + j / 7.0;
#pragma scop
  for (i = 0; i < N; i++)
    y[i] = 0;
  for (i = 0; i < M; i++) {
    tmp[i] = 0.0;
    for (j = 0; j < N; j++)
      tmp[i] = tmp[i] + A[i][j] * x[j];
    for (j = 0; j < N; j++)
      y[j] = y[j] + A[i][j] * tmp[i];
  }
#pragma endscop
  for (i = 0; i < M; i++) printf("%a\\n", tmp[i]);
  for (j = 0; j < N; j++) printf("%a\\n", y[j]);
  return 0;
}
"""

REUSE = ScheduleChoice(scheduler="outer", tiling="reuse")


def _program(tmp_path, rows: int):
    source = ATAX.replace("ROWS", str(rows))
    path = tmp_path / "atax.c"
    path.write_text(source)
    return analyze(str(path)), source


def _row_band(result) -> dict:
    return next(b for b in result.report["scops"][0]["bands"] if "S2" in b["statements"] and b["members"] == 2)


def test_an_untiled_row_reduction_accumulates_several_rows_at_once(tmp_path):
    program, _ = _program(tmp_path, 37)
    result = generate(program, OptimizeOptions(choice=REUSE))
    band = _row_band(result)
    assert not band["tiled"]  # (what the reuse rule decides here; the jam is for untiled bands)
    assert band["unroll_jam"] == {"point_member": 0, "factor": 4}
    # four accumulators, each updated once per iteration of one loop over j
    loops = re.findall(r"for \(long \w+ = [^{]*\{\n((?:(?!\s*(?:for|\})).*\n)+)", result.text)
    assert any(len(re.findall(r"^\s*(\w+) = \1 \+ \(A\[", body, re.M)) == 4 for body in loops), result.text


@pytest.mark.parametrize("rows,unroll", [(37, 4), (36, 4), (5, 8), (3, 4), (37, 3), (1, 2)])
def test_jammed_rows_print_what_the_original_prints(tmp_path, rows, unroll):
    program, source = _program(tmp_path, rows)
    choice = ScheduleChoice(scheduler="outer", tiling="reuse", unroll=unroll)
    code = generate(program, OptimizeOptions(choice=choice)).text
    assert run_source(code, tmp_path, "out") == run_source(source, tmp_path, "orig")


def test_no_jam_where_tiling_is_turned_off_or_unroll_and_jam_is(tmp_path):
    program, _ = _program(tmp_path, 37)
    assert _row_band(generate(program, OptimizeOptions(tile=False)))["unroll_jam"] is None
    off = ScheduleChoice(scheduler="outer", tiling="reuse", unroll=0)
    assert _row_band(generate(program, OptimizeOptions(choice=off)))["unroll_jam"] is None


COLUMNS = """#include <stdio.h>
#define M ROWS
#define N 45
double A[M][N], B[M][N], r[M], s[N], u[M], v[N];
int main(void) {
  int i, j;
  for (i = 0; i < M; i++) {
    r[i] = 1.0 + (i % 5) / 5.0; u[i] = (i % 3) / 3.0;
    for (j = 0; j < N; j++) { A[i][j] = ((i * 7 + j) % 17) / 17.0; B[i][j] = ((i + 2 * j) % 9) / 9.0; }
  }
  for (j = 0; j < N; j++) v[j] = (j % 4) / 4.0;
#pragma scop
  for (j = 0; j < N; j++)
    s[j] = 0;
  for (i = 0; i < M; i++)
    for (j = 0; j < N; j++)
      s[j] = s[j] + r[i] * A[i][j];
  for (i = 0; i < M; i++)
    for (j = 0; j < N; j++)
      B[i][j] = B[i][j] + u[i] * v[j];
#pragma endscop
  for (j = 0; j < N; j++) printf("%a\\n", s[j]);
  for (i = 0; i < M; i++) for (j = 0; j < N; j++) printf("%a\\n", B[i][j]);
  return 0;
}
"""


def _columns(tmp_path, rows: int):
    source = COLUMNS.replace("ROWS", str(rows))
    path = tmp_path / "columns.c"
    path.write_text(source)
    return analyze(str(path)), source


def _band_of(result, statement: str) -> dict:
    return next(b for b in result.report["scops"][0]["bands"] if statement in b["statements"] and b["members"] == 2)


def test_a_streamed_column_sum_jams_the_rows_whose_copies_share_the_sum(tmp_path):
    # bicg's s[j] += r[i] * A[i][j]: A streams (it moves along both loops), s[j] stays along i and is written
    program, _ = _columns(tmp_path, 37)
    result = generate(program, OptimizeOptions(choice=REUSE))
    sums = _band_of(result, "S1")
    assert sums["tiled"] and sums["unroll_jam"] is not None, sums


def test_a_streamed_update_whose_copies_share_only_loads_is_not_jammed(tmp_path):
    # B[i][j] += u[i] * v[j]: every copy writes its own row; they would share only the load of v[j]
    program, _ = _columns(tmp_path, 37)
    result = generate(program, OptimizeOptions(choice=REUSE))
    assert _band_of(result, "S2")["unroll_jam"] is None


@pytest.mark.parametrize("rows", [37, 32, 3])
def test_jammed_column_sums_print_what_the_original_prints(tmp_path, rows):
    program, source = _columns(tmp_path, rows)
    for choice in (REUSE, ScheduleChoice()):
        code = generate(program, OptimizeOptions(choice=choice)).text
        assert run_source(code, tmp_path, "out") == run_source(source, tmp_path, "orig")
