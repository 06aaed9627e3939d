"""A band the reuse rule leaves untiled whose innermost loop is a reduction (atax's `tmp[i] += A[i][j] * x[j]`)
gets its outer parallel member unrolled and jammed into that loop (poly/point_order.py's chains_jam): u rows
accumulate side by side, u independent chains of adds where there was one. Each row keeps its own order of
additions, so the program prints exactly what the original prints."""
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
