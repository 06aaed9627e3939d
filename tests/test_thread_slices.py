"""Thread slices (poly/slices.py): a scratch array indexed first by the region's outermost loop, each of whose
slices is used within one iteration of it, is stored as one slice per thread (and one for the iteration whose
values are copied back), not one per iteration; the output prints what the original prints."""
from __future__ import annotations

import pytest
from conftest import compile_run
from test_expand_arrays import DOITGEN, HEAD, TAIL

import polytune.emit.c as emit_c
from polytune.cli import main
from polytune.pipeline import OptimizeOptions, analyze, schedules
from polytune.poly.slices import thread_slices

MATMUL = """#include <stdio.h>
#define N 37
static double a[N][N], b[N][N], c[N][N];
int main(void)
{
  int i, j, k;
  double s;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) { a[i][j] = (i * 3 + j) % 7 - 2.5; b[i][j] = (i + j * 5) % 9 * 0.25; }
#pragma scop
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) {
      s = 0;
      for (k = 0; k < N; k++)
        s += a[i][k] * b[k][j];
      c[i][j] = s;
    }
#pragma endscop
  double cs = 0;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) cs += c[i][j] * (i + 2 * j + 1);
  printf("checksum: %.17g %.17g\\n", cs, s);
  return 0;
}
"""


def _slices(tmp_path, source: str, *flags: str):
    src = tmp_path / "k.c"
    src.write_text(source)
    program = analyze(str(src), defines=tuple(flags))
    a, ts = program.scops[0], schedules(program, OptimizeOptions())[0]
    return a.cpu.scop, thread_slices(a.cpu.scop, ts.schedule)


def _optimized(tmp_path, source: str, *flags: str) -> tuple[str, str]:
    src = tmp_path / "k.c"
    src.write_text(source)
    out = tmp_path / "k.opt.c"
    assert main(["optimize", str(src), "-o", str(out), "-q", *flags]) == 0
    return str(src), str(out)


def test_doitgens_expanded_sum_is_sliced_by_the_batch_loop_and_keeps_the_last_iteration_apart(tmp_path):
    scop, found = _slices(tmp_path, HEAD + DOITGEN + TAIL)
    assert [x.name for x in found] == ["sum_x0"]
    assert found[0].last is not None  # (`sum` is read after the region: r = nr - 1 holds its final values)
    _, out = _optimized(tmp_path, HEAD + DOITGEN + TAIL)
    text = open(out).read()
    assert "const long sum_x0_slots = omp_get_max_threads() + 1;" in text
    assert "sum_x0 + (c0 == (nr - 1) ? sum_x0_slots - 1 : c_slot)" in text
    assert "sum[c2] = sum_x0[sum_x0_slots - 1][" in text  # the copy back reads the last iteration's slot


@pytest.mark.parametrize("sizes", [["-DNR=5", "-DNQ=13", "-DNP=21"], ["-DNR=1", "-DNQ=7", "-DNP=67"],
                                   ["-DNR=9", "-DNQ=40", "-DNP=3"]])
def test_sliced_storage_prints_what_the_original_prints_at_any_thread_count(tmp_path, sizes):
    src, out = _optimized(tmp_path, HEAD + DOITGEN + TAIL, *sizes)
    assert "_slice" in open(out).read()
    expected = compile_run(src, str(tmp_path / "orig"), ["-ffp-contract=off", *sizes], True)
    for n in (1, 2, 3, 4):
        assert compile_run(out, str(tmp_path / f"opt{n}"), ["-ffp-contract=off", *sizes], True, threads=n) == expected


def test_compiled_without_openmp_the_sliced_code_uses_one_slice_and_the_last_slot(tmp_path):
    src, out = _optimized(tmp_path, HEAD + DOITGEN + TAIL)
    expected = compile_run(src, str(tmp_path / "orig"), ["-ffp-contract=off"], True)
    assert compile_run(out, str(tmp_path / "serial"), ["-ffp-contract=off"], False) == expected


def test_a_scratch_array_whose_clear_product_and_copy_run_in_separate_nests_is_not_sliced(tmp_path):
    # s_x[i][j]: cleared, summed into (packed blocks) and copied out in three nests; an element lives from the
    # first to the third, across the iterations of each nest's outer loop
    scop, found = _slices(tmp_path, MATMUL)
    assert [a.name for a in scop.scratch] == ["s_x0"] and found == ()


def test_where_an_access_falls_outside_the_picking_loop_the_region_keeps_the_whole_array(tmp_path, monkeypatch):
    monkeypatch.setattr(emit_c._OpenMPPrinter, "slice_pointers", lambda self, n, it, par, indent: {})
    src, out = _optimized(tmp_path, HEAD + DOITGEN + TAIL)
    text = open(out).read()
    assert "_slice" not in text and "sum_x0[c0][c1][c2] = 0.0;" in text
    expected = compile_run(src, str(tmp_path / "orig"), ["-ffp-contract=off"], True)
    assert compile_run(out, str(tmp_path / "opt"), ["-ffp-contract=off"], True, threads=2) == expected
