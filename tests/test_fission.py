"""A tiled band whose statements run one after another along a member (gramschmidt's sums at i and updates at
m + i under one j) becomes, from that member inward, a sequence of one band per statement, so that the
statement whose copies share a written element is jammed on its own (poly/fission.py): only where no
dependence would go backward, and only where some piece is then jammed."""
from __future__ import annotations

import re
import shutil

import islpy as isl
import pytest
from conftest import run_source

from polytune.pipeline import OptimizeOptions, analyze, generate
from polytune.poly.choice import ScheduleChoice
from polytune.poly.fission import ordered_pieces
from polytune.poly.islutil import CTX

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not found")

# gramschmidt's k loop body: the column sums R[k][j] over the rows, then the rows updated with R[k][j]
GRAMSCHMIDT = """#include <stdio.h>
#include <math.h>
#define M ROWS
#define N COLS
double A[M][N], R[N][N], Q[M][N];
int main(void) {
  int i, j, k;
  double nrm;
  for (i = 0; i < M; i++)
    for (j = 0; j < N; j++) A[i][j] = (((i * j) % M) / (double)M) * 100 + 10;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) R[i][j] = 0.0;
#pragma scop
  for (k = 0; k < N; k++) {
    nrm = 0.0;
    for (i = 0; i < M; i++)
      nrm += A[i][k] * A[i][k];
    R[k][k] = sqrt(nrm);
    for (i = 0; i < M; i++)
      Q[i][k] = A[i][k] / R[k][k];
    for (j = k + 1; j < N; j++) {
      R[k][j] = 0.0;
      for (i = 0; i < M; i++)
        R[k][j] += Q[i][k] * A[i][j];
      for (i = 0; i < M; i++)
        A[i][j] = A[i][j] - Q[i][k] * R[k][j];
    }
  }
#pragma endscop
  for (i = 0; i < M; i++) for (j = 0; j < N; j++) printf("%a %a\\n", A[i][j], Q[i][j]);
  for (i = 0; i < N; i++) for (j = 0; j < N; j++) printf("%a\\n", R[i][j]);
  return 0;
}
"""


MODEL = OptimizeOptions(schedule="model")  # optimize's default on the command line


def _program(tmp_path, rows: int, cols: int, source: str = GRAMSCHMIDT):
    source = source.replace("ROWS", str(rows)).replace("COLS", str(cols))
    path = tmp_path / "prog.c"
    path.write_text(source)
    return analyze(str(path)), source


def _split_bands(result) -> list[dict]:
    return [b for b in result.report["scops"][0]["bands"] if b["sequence_at"] is not None]


def test_sums_and_updates_in_one_band_become_one_band_each_and_the_sums_are_jammed(tmp_path):
    program, _ = _program(tmp_path, 70, 45)
    result = generate(program, MODEL)
    (band,) = _split_bands(result)
    assert band["tiled"] and band["parallel_loop"] == "tile 0" and band["sequence_at"] == 1
    assert band["unroll_jam"] == {"point_member": 0, "factor": 4}
    # four rows' products added into one R[k][j] in each iteration of the innermost loop
    assert re.search(r"(R\[\w+\]\[\w+\] \+= [^\n]*\n\s*){4}", result.text), result.text


@pytest.mark.parametrize("rows,cols", [(70, 45), pytest.param(64, 33, marks=pytest.mark.slow), (3, 5), (33, 2),
                                       pytest.param(1, 40, marks=pytest.mark.slow)])
def test_the_split_band_prints_what_the_original_prints(tmp_path, rows, cols):
    program, source = _program(tmp_path, rows, cols)
    for opts in (MODEL, OptimizeOptions(schedule="model", unroll_jam=3), OptimizeOptions(),
                 OptimizeOptions(choice=ScheduleChoice(tiling="reuse"))):
        code = generate(program, opts).text
        assert run_source(code, tmp_path, "out") == run_source(source, tmp_path, "orig")


def test_no_split_without_unroll_and_jam(tmp_path):
    program, _ = _program(tmp_path, 70, 45)
    assert _split_bands(generate(program, MODEL))
    result = generate(program, OptimizeOptions(schedule="model", unroll_jam=0))
    assert not _split_bands(result)


def _tiled_band(deps: str):
    """A band (j, i') over S[j, i] at i' = i and T[j, i] at i' = 10 + i, tiled 4 x 4: the tile band node."""
    dom = isl.UnionSet("{ S[j, i] : 0 <= j, i < 10; T[j, i] : 0 <= j, i < 10 }", context=CTX)
    node = isl.Schedule.from_domain(dom).get_root().child(0)
    node = node.insert_partial_schedule(isl.MultiUnionPwAff(
        "[{ S[j, i] -> [(j)]; T[j, i] -> [(j)] }, { S[j, i] -> [(i)]; T[j, i] -> [(10 + i)] }]", context=CTX))
    node = node.band_set_permutable(1)
    sizes = isl.MultiVal.zero(node.band_get_space()).set_val(0, isl.Val(4, context=CTX)).set_val(
        1, isl.Val(4, context=CTX))
    return node.band_tile(sizes), isl.UnionMap(deps, context=CTX)


def test_statements_ordered_along_a_member_split_there_in_their_order():
    tile, deps = _tiled_band("{ S[j, i] -> T[j, i2] : 0 <= j, i, i2 < 10 }")
    p, order = ordered_pieces(tile, 1, deps)
    assert p == 1 and [s.get_tuple_name() for s in order] == ["S", "T"]


def test_no_split_where_a_dependence_would_run_from_a_later_piece_back_to_an_earlier_one():
    # T at column j feeds S at column j + 1: in one tile of columns, S's piece would run before it
    tile, deps = _tiled_band("{ T[j, i] -> S[j + 1, i2] : 0 <= j < 9 and 0 <= i, i2 < 10 }")
    assert ordered_pieces(tile, 1, deps) is None


def test_no_split_of_statements_that_share_iterations_of_the_member():
    dom = isl.UnionSet("{ S[j, i] : 0 <= j, i < 10; T[j, i] : 0 <= j, i < 10 }", context=CTX)
    node = isl.Schedule.from_domain(dom).get_root().child(0)
    node = node.insert_partial_schedule(isl.MultiUnionPwAff(
        "[{ S[j, i] -> [(j)]; T[j, i] -> [(j)] }, { S[j, i] -> [(i)]; T[j, i] -> [(5 + i)] }]", context=CTX))
    sizes = isl.MultiVal.zero(node.band_get_space()).set_val(0, isl.Val(4, context=CTX)).set_val(
        1, isl.Val(4, context=CTX))
    assert ordered_pieces(node.band_set_permutable(1).band_tile(sizes), 1, isl.UnionMap("{}", context=CTX)) is None
