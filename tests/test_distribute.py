"""Statements that the program wrote in separate innermost loops, some under a data-dependent condition, get
separate innermost loops again where isl fused them, under the loops outside that stay fused
(poly/distribute.py): gcc vectorizes the plain loop on its own, and the fused one not at all."""
from __future__ import annotations

import pathlib
import re
import shutil

import pytest
from conftest import representatives, run_source

from polytune.pipeline import OptimizeOptions, analyze, generate

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not found")

# unsharp masking: a 3x3 blur, then a threshold on the difference (benchmarks/realc/unsharp.c's shape)
BLUR_THEN_THRESHOLD = """#include <stdio.h>
#include <math.h>
#define H ROWS
#define W COLS
float src[H][W], blur[H][W], dst[H][W];
int main(void) {
  float threshold = 0.05f, amount = 0.7f;
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) src[y][x] = (float)((y * 7 + x * 13) % 17) / 17.0f;
#pragma scop
  for (int y = 1; y < H - 1; y++)
    for (int x = 1; x < W - 1; x++) {
      float s = 0.0f;
      for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
          s += src[y + dy][x + dx];
      blur[y][x] = s / 9.0f;
    }
  for (int y = 1; y < H - 1; y++)
    for (int x = 1; x < W - 1; x++) {
      float diff = src[y][x] - blur[y][x];
      if (fabsf(diff) > threshold)
        dst[y][x] = src[y][x] + amount * diff;
      else
        dst[y][x] = src[y][x];
    }
#pragma endscop
  for (int y = 0; y < H; y++) for (int x = 0; x < W; x++) printf("%a %a\\n", blur[y][x], dst[y][x]);
  return 0;
}
"""

# the same work written as one loop nest by its author
ONE_LOOP = BLUR_THEN_THRESHOLD.replace("""      blur[y][x] = s / 9.0f;
    }
  for (int y = 1; y < H - 1; y++)
    for (int x = 1; x < W - 1; x++) {
      float diff""", """      blur[y][x] = s / 9.0f;
      float diff""")

# no condition: the fused loop vectorizes, it stays fused
NO_CONDITION = BLUR_THEN_THRESHOLD.replace("""      if (fabsf(diff) > threshold)
        dst[y][x] = src[y][x] + amount * diff;
      else
        dst[y][x] = src[y][x];""", "      dst[y][x] = src[y][x] + amount * diff;")

MODEL = OptimizeOptions(schedule="model")  # optimize's default on the command line


def _program(tmp_path, source: str, rows: int = 40, cols: int = 50):
    source = source.replace("ROWS", str(rows)).replace("COLS", str(cols))
    path = tmp_path / "prog.c"
    path.write_text(source)
    return analyze(str(path)), source


def _between(text: str, first: str, last: str) -> str:
    """The optimized region's code from the line holding *first* to the one holding *last*."""
    region = text[text.index("#pragma omp parallel for"):]
    return region[region.index(first):region.index(last)]


def test_a_conditional_loop_fused_with_a_plain_one_runs_after_it_under_the_shared_outer_loop(tmp_path):
    program, _ = _program(tmp_path, BLUR_THEN_THRESHOLD)
    text = generate(program, MODEL).text
    assert text.count("#pragma omp parallel for") == 1, text  # one parallel loop over the rows: fused there
    assert re.search(r"for \(", _between(text, "blur[", "diff =")), text  # a loop of its own for the threshold


def test_statements_their_author_wrote_in_one_loop_stay_in_one_loop(tmp_path):
    program, _ = _program(tmp_path, ONE_LOOP)
    text = generate(program, MODEL).text
    assert not re.search(r"for \(", _between(text, "blur[", "diff =")), text


def test_plain_loops_fused_by_the_scheduler_stay_fused(tmp_path):
    program, _ = _program(tmp_path, NO_CONDITION)
    text = generate(program, MODEL).text
    assert not re.search(r"for \(", _between(text, "blur[", "diff =")), text


SHAPES = ((40, 50), (3, 3), (5, 70))
SIZES = [(source, rows, cols) for source in (BLUR_THEN_THRESHOLD, ONE_LOOP) for rows, cols in SHAPES]
SIZE_IDS = [f"{name}-{rows}x{cols}" for name in ("two_loops", "one_loop") for rows, cols in SHAPES]


@pytest.mark.parametrize("source,rows,cols", representatives(SIZES, {"two_loops-40x50", "one_loop-3x3"}, SIZE_IDS),
                         ids=SIZE_IDS)
def test_the_distributed_code_prints_what_the_original_prints(tmp_path, source, rows, cols):
    program, original = _program(tmp_path, source, rows, cols)
    want = run_source(original, tmp_path, "orig")
    for opts in (MODEL, OptimizeOptions(), OptimizeOptions(tile_sizes=(2, 3, 5, 7), tile=True)):
        assert run_source(generate(program, opts).text, tmp_path, "out") == want



def test_a_statement_of_fewer_loops_fused_into_the_loop_is_no_loop_of_its_own(tmp_path, monkeypatch):
    """k-means' assignment (benchmarks/realc/kmeans_assign.c): `index = 0` before the cluster loop, fused by
    isl into it, and the loop's statements under the data-dependent `dist < min_dist`: not distributed
    (the `index = 0` piece would be no loop of the author's)."""
    root = pathlib.Path(__file__).resolve().parent.parent
    source = (root / "benchmarks/realc/kmeans_assign.c").read_text()
    path = tmp_path / "kmeans.c"
    path.write_text(source.replace("/* hot */", "#pragma scop").replace("/* end hot */", "#pragma endscop"))
    with_rule = generate(analyze(str(path)), MODEL).text
    import polytune.poly.schedule as schedule
    monkeypatch.setattr(schedule, "distribute", lambda s, *args: s)
    assert generate(analyze(str(path)), MODEL).text == with_rule
