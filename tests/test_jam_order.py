"""Unroll-and-jam takes the point member whose copies share most, moving it just outside the innermost loop
where the loops inside it would otherwise depend on it (poly/point_order.py's jam_order): trmm's k, whose
copies all add into one B[i][j], not its i, whose copies only share a load of B[k][j]. The output keeps every
element's floating-point order, so the program prints exactly what the original prints."""
from __future__ import annotations

import shutil

import pytest
from conftest import run_source

from polytune.pipeline import OptimizeOptions, analyze, generate
from polytune.poly.contraction import Blocks

OFF = Blocks(on=False)  # (trmm is a contraction, printed as packed blocks by default: here the tiler's code)
pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not found")

TRMM = """#include <stdio.h>
#define M 45
#define N 38
double A[M][M], B[M][N];
int main(void) {
  int i, j, k;
  for (i = 0; i < M; i++)
    for (j = 0; j < M; j++) A[i][j] = ((i + j) % 11) / 11.0;
  for (i = 0; i < M; i++)
    for (j = 0; j < N; j++) B[i][j] = ((2 * i + j) % 7) / 7.0;
#pragma scop
  for (i = 0; i < M; i++)
    for (j = 0; j < N; j++) {
      for (k = i + 1; k < M; k++)
        B[i][j] += A[k][i] * B[k][j];
      B[i][j] = 1.5 * B[i][j];
    }
#pragma endscop
  for (i = 0; i < M; i++)
    for (j = 0; j < N; j++)
      printf("%.17g\\n", B[i][j]);
  return 0;
}
"""


@pytest.fixture
def trmm(tmp_path):
    path = tmp_path / "trmm.c"
    path.write_text(TRMM)
    return analyze(str(path))


def _update_band(result) -> dict:
    return next(b for b in result.report["scops"][0]["bands"] if b["tiled"] and b["members"] == 3)


def test_the_reduction_member_is_jammed_with_only_the_innermost_loop_inside_it(trmm):
    band = _update_band(generate(trmm, OptimizeOptions(tile_sizes=(8, 8, 8), blocks=OFF)))
    order, jam = band["point_loop_order"], band["unroll_jam"]
    assert jam is not None and jam["point_member"] == len(order) - 2  # just outside the innermost loop
    code = generate(trmm, OptimizeOptions(tile_sizes=(8, 8, 8), blocks=OFF)).text
    innermost = [line.strip() for line in code.split("\n") if line.strip().startswith("B[c")]
    targets = {line.split("+=")[0].strip() for line in innermost if "+=" in line}
    # the copies of one iteration add into one element: one store per four multiply-adds
    assert any(sum(1 for line in innermost if line.startswith(t + " +=")) >= 4 for t in targets)


@pytest.mark.parametrize("sizes", [(8, 8, 8), (4, 16, 8), (32, 32, 32), (3, 5, 7)])
def test_the_jammed_order_prints_what_the_original_prints(trmm, tmp_path, sizes):
    code = generate(trmm, OptimizeOptions(tile_sizes=sizes, blocks=OFF)).text
    assert run_source(code, tmp_path, "out") == run_source(TRMM, tmp_path, "orig")


def test_without_unroll_and_jam_the_point_order_is_not_moved(trmm):
    plain = _update_band(generate(trmm, OptimizeOptions(tile_sizes=(8, 8, 8), unroll_jam=0, blocks=OFF)))
    jammed = _update_band(generate(trmm, OptimizeOptions(tile_sizes=(8, 8, 8), blocks=OFF)))
    assert plain["unroll_jam"] is None
    assert plain["point_loop_order"] != jammed["point_loop_order"]


RANK2 = """#include <stdio.h>
#define N 70
double A[N][N], P[N][N], u1[N], v1[N], u2[N], v2[N];
int main(void) {
  int i, j, k;
  for (i = 0; i < N; i++) {
    u1[i] = (i % 5) / 5.0; v1[i] = (i % 7) / 7.0; u2[i] = (i % 3) / 3.0; v2[i] = (i % 11) / 11.0;
    for (j = 0; j < N; j++) { A[i][j] = ((i + 2 * j) % 13) / 13.0; P[i][j] = (i * 7 + j * 3) % 17; }
  }
#pragma scop
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      A[i][j] = A[i][j] + u1[i] * v1[j] + u2[i] * v2[j];
  for (k = 0; k < N; k++)
    for (i = 0; i < N; i++)
      for (j = 0; j < N; j++)
        P[i][j] = P[i][j] < P[i][k] + P[k][j] ? P[i][j] : P[i][k] + P[k][j];
#pragma endscop
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      printf("%.17g %.17g\\n", A[i][j], P[i][j]);
  return 0;
}
"""


def test_rows_that_share_only_loads_of_an_array_nothing_writes_are_jammed(tmp_path):
    # gemver's rank-2 update streams A, and its copies along i share only v1[j] and v2[j]: no statement of
    # the band writes them, so they stay in registers across the copies. floyd-warshall's copies along i
    # share P[k][j], which the band writes: not jammed.
    path = tmp_path / "rank2.c"
    path.write_text(RANK2)
    result = generate(analyze(str(path)), OptimizeOptions(tile_sizes=(8, 8, 8), schedule="pluto"))
    bands = [b for b in result.report["scops"][0]["bands"] if b["tiled"]]
    rank2 = next(b for b in bands if b["statements"] == ["S0"])
    floyd = next(b for b in bands if b["statements"] == ["S1"])
    assert rank2["unroll_jam"] is not None and rank2["point_loop_order"][rank2["unroll_jam"]["point_member"]] == 0
    assert floyd["unroll_jam"] is None
    assert run_source(result.text, tmp_path, "opt") == run_source(RANK2, tmp_path, "orig")
