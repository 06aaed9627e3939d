"""Live-range reordering (poly/deps.LiveRanges): a scalar declared in the region, whose values live within one
iteration of its loops, does not tie those iterations together. isl's scheduler may reorder its live ranges
where each stays inside one band iteration, and the legality check refuses any schedule that runs a write
of the scalar inside another write's live range."""
from __future__ import annotations

import shutil

import islpy as isl
import pytest
from conftest import run_source

from polytune.pipeline import OptimizeOptions, analyze, generate
from polytune.poly.islutil import CTX
from polytune.poly.legality import IllegalSchedule, check_legal

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not found")

# gaussian_clamp's column pass (benchmarks/realc/gaussian_clamp.c): five taps down the column, clamped at the
# edges, summed in a scalar declared in the loop body
COLUMN_FILTER = """#include <stdio.h>
#define H ROWS
#define W COLS
static const float g5[5] = {0.0625f, 0.25f, 0.375f, 0.25f, 0.0625f};
float src[H][W], dst[H][W];
int main(void) {
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) src[y][x] = (float)((y * 7 + x * 13) % 17) / 17.0f;
#pragma scop
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      DECLARE acc = 0.0f;
      for (int k = -2; k <= 2; k++) {
        int yy = y + k < 0 ? 0 : (y + k > H - 1 ? H - 1 : y + k);
        acc += g5[k + 2] * src[yy][x];
      }
      dst[y][x] = acc;
    }
#pragma endscop
  for (int y = 0; y < H; y++) for (int x = 0; x < W; x++) printf("%a\\n", dst[y][x]);
  READ_AFTER
  return 0;
}
"""

LOCAL = COLUMN_FILTER.replace("DECLARE", "float").replace("READ_AFTER", "")
# the same scalar declared before the region and printed after it: its last value is live after the region
LIVE_OUT = COLUMN_FILTER.replace("int main(void) {", "int main(void) {\n  float acc;") \
    .replace("DECLARE acc", "acc").replace("READ_AFTER", 'printf("%a\\n", acc);')

# a row pass before the column pass, each declaring its own `acc`: one scalar of the model, a web in each nest
TWO_PASSES = LOCAL.replace("""#pragma scop
""", """#pragma scop
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      float acc = 0.0f;
      for (int k = -2; k <= 2; k++) {
        int xx = x + k < 0 ? 0 : (x + k > W - 1 ? W - 1 : x + k);
        acc += g5[k + 2] * src[y][xx];
      }
      tmp[y][x] = acc;
    }
""").replace("src[yy][x]", "tmp[yy][x]").replace("float src[H][W],", "float src[H][W], tmp[H][W],")

MODEL = OptimizeOptions(schedule="model")


def _analyzed(tmp_path, source: str, rows: int = 40, cols: int = 50):
    source = source.replace("ROWS", str(rows)).replace("COLS", str(cols))
    path = tmp_path / "prog.c"
    path.write_text(source)
    return analyze(str(path)), source


def _region(text: str) -> str:
    return text[text.index("#pragma omp parallel for"):]


def test_a_scalar_declared_in_the_loop_body_has_live_ranges_that_may_be_reordered(tmp_path):
    program, _ = _analyzed(tmp_path, LOCAL)
    live = program.scops[0].deps.live
    assert live is not None and live.names == frozenset({"acc"})


def test_a_scalar_declared_in_two_nests_has_live_ranges_within_each_nest(tmp_path):
    program, original = _analyzed(tmp_path, TWO_PASSES)
    assert program.scops[0].deps.live is not None
    text = generate(program, MODEL).text
    assert "acc_x" not in text, text
    assert run_source(text, tmp_path, "out") == run_source(original, tmp_path, "orig")


def test_a_scalar_whose_last_value_is_read_after_the_region_keeps_its_order(tmp_path):
    program, _ = _analyzed(tmp_path, LIVE_OUT)
    assert program.scops[0].deps.live is None


def test_the_filter_keeps_its_taps_innermost_with_the_rows_parallel_and_no_scratch_array(tmp_path):
    """Bound by acc's anti and output dependences, isl merged x and k into one loop (`4x + k`), or the
    scalar was expanded into a row buffer with the taps outside the columns: 0.6x of the original."""
    program, _ = _analyzed(tmp_path, LOCAL)
    text = _region(generate(program, MODEL).text)
    assert "acc_x" not in text, text  # not expanded
    assert "4 *" not in text, text  # no skewed loop
    assert text.index("acc = 0") < text.index("for (long c2 = 0; c2 <= 4; c2++)") < text.index("dst["), text


@pytest.mark.parametrize("source", [LOCAL, LIVE_OUT], ids=["local", "live_out"])
def test_the_reordered_code_prints_what_the_original_prints(tmp_path, source):
    for rows, cols in ((40, 50), (3, 2), (70, 9)):
        program, original = _analyzed(tmp_path, source, rows, cols)
        want = run_source(original, tmp_path, "orig")
        for opts in (MODEL, OptimizeOptions(), OptimizeOptions(tile_sizes=(2, 3, 5), tile=True),
                     OptimizeOptions(unroll_jam=8)):
            assert run_source(generate(program, opts).text, tmp_path, "out") == want


def _schedule(a, text: str) -> isl.Schedule:
    """A schedule of the region's domain from a union map (its statements named as in the model)."""
    umap = isl.UnionMap(text, context=CTX).intersect_domain(a.scop.domain)
    return isl.Schedule.from_domain(a.scop.domain).insert_partial_schedule(
        isl.MultiUnionPwAff.from_union_map(umap))


def test_the_legality_check_refuses_a_schedule_that_interleaves_live_ranges_and_accepts_one_that_reorders_them(
        tmp_path):
    program, _ = _analyzed(tmp_path, LOCAL, 6, 7)
    a = program.scops[0]
    names = {st.name: len(st.iterators) for st in a.scop.statements}
    init, tap, store = (n for n in names)  # acc = 0, acc += ..., dst = acc (the order of the program)
    assert names[tap] == 3

    def sched(outer: str) -> str:
        return "; ".join([f"{init}[y, x] -> [{outer}, 0, 0]", f"{tap}[y, x, k] -> [{outer}, 1, k]",
                          f"{store}[y, x] -> [{outer}, 2, 0]"])
    # the columns right to left: each (y, x) still runs its live range whole, in another order
    reordered = _schedule(a, "{ " + sched("y, -x") + " }")
    check_legal(reordered, a.deps, a.scop)
    # the taps outside the columns: each write of acc runs inside the live ranges of the other columns
    interleaved = _schedule(a, "{ " + "; ".join([f"{init}[y, x] -> [y, 0, 0, x]", f"{tap}[y, x, k] -> [y, 1, k, x]",
                                                  f"{store}[y, x] -> [y, 2, 0, x]"]) + " }")
    with pytest.raises(IllegalSchedule, match="live ranges of 'acc'"):
        check_legal(interleaved, a.deps, a.scop)
    # with the scalar's order kept (the GPU targets' dependences), the reordered one is refused too
    with pytest.raises(IllegalSchedule):
        check_legal(reordered, a.deps.in_order(), a.scop)


def test_statements_of_two_live_ranges_are_printed_in_the_order_the_check_saw():
    """progen.local_scalar_program(1071): nest 1 ends `C[i + 1][j] = acc;`, nest 3 starts `double acc = 0.0;`;
    fused, without acc's anti dependence between them, isl's scheduler put the two in a `set` (any order),
    which its AST builder printed init first: the store wrote 0. Set nodes are now sequences in the order
    the legality check saw (legality.in_listed_order)."""
    from progen import local_scalar_program
    from test_random_programs import check_program
    check_program(1071, ["default"], make=local_scalar_program, threads=(1,))

