"""Where isl's AST builder fails on a band's unrolled and jammed copies, the region is generated from the same
schedule without unroll-and-jam (poly/schedule.py's TiledSchedule.without_unroll, pipeline.c_regions), the
report says so, and the program still prints what the original prints. The schedule is no longer built
into an AST once only to ask whether it builds: the emitter's own build is the test. The matrix product is
tiled as any band here (blocks off): packed as a contraction (emit/blis.py) it has no unroll-and-jam."""
from __future__ import annotations

import shutil

import islpy as isl
import pytest
from conftest import run_source

import polytune.emit.c as emit_c
from polytune.pipeline import OptimizeOptions, analyze, generate
from polytune.poly.contraction import Blocks

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not found")

MATMUL = """#include <stdio.h>
#define N 37
double A[N][N], B[N][N], C[N][N];
int main(void) {
  int i, j, k;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) { A[i][j] = (i * j % 7) / 7.0; B[i][j] = (i + 2 * j) % 5 / 5.0; C[i][j] = 0; }
#pragma scop
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      for (k = 0; k < N; k++)
        C[i][j] += A[i][k] * B[k][j];
#pragma endscop
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      printf("%.17g\\n", C[i][j]);
  return 0;
}
"""


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "mm.c"
    path.write_text(MATMUL)
    return analyze(str(path))


def test_an_unrolled_schedule_is_not_built_into_an_ast_before_the_emitter_builds_it(program, monkeypatch):
    built = []
    real = isl.AstBuild.node_from_schedule

    def counting(self, sched):
        built.append(1)
        return real(self, sched)

    monkeypatch.setattr(isl.AstBuild, "node_from_schedule", counting)
    result = generate(program, OptimizeOptions(tile_sizes=(8, 8, 8), blocks=Blocks(on=False)))
    band = result.report["scops"][0]["bands"][0]
    assert band["unroll_jam"] is not None  # the schedule this test is about: unrolled and jammed
    assert len(built) == 1


def test_where_the_ast_builder_fails_on_unrolled_copies_the_code_comes_without_them(program, tmp_path, monkeypatch):
    real = emit_c.build_ast

    def failing_on_copies(scop, tiled, prefix, scale_strides=True, **kw):
        if any(b.unroll_jam for b in tiled.bands):
            raise isl.Error("simulated: the AST builder fails on the unrolled copies")
        return real(scop, tiled, prefix, scale_strides, **kw)

    monkeypatch.setattr(emit_c, "build_ast", failing_on_copies)
    result = generate(program, OptimizeOptions(tile_sizes=(8, 8, 8), blocks=Blocks(on=False)))
    bands = result.report["scops"][0]["bands"]
    assert bands and all(b["unroll_jam"] is None for b in bands)
    assert any(b["tiled"] for b in bands)  # the same tiled schedule, only the copies are gone
    assert run_source(result.text, tmp_path, "out") == run_source(MATMUL, tmp_path, "orig")


def test_the_schedule_without_unroll_is_the_same_tiling(program):
    a = program.scops[0]
    ts = a.tiled((8, 8, 8), blocks=None)
    assert ts.without_unroll is not None
    plain = ts.without_unroll()
    assert plain.tile_sizes == ts.tile_sizes
    assert all(b.unroll_jam is None for b in plain.bands)
    assert [(b.members, b.tile_sizes) for b in plain.tunable_bands] == \
        [(b.members, b.tile_sizes) for b in ts.tunable_bands]  # the copies' band is not a tiled one
    assert plain.without_unroll is None
