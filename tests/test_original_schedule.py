"""The loops as written as a schedule candidate (poly/original.py): the tree keeps the program's nests and
sequences, a band stops where a dependence would go backwards along a member, and the cost model takes it
only where it ranks strictly first, with the scalar expansion measured against it."""
from __future__ import annotations

import os

import islpy as isl
import pytest
from conftest import ROOT, compile_run

from polytune.pipeline import OptimizeOptions, analyze, generate
from polytune.poly.choice import ScheduleChoice
from polytune.poly.contraction import Blocks, isolate
from polytune.poly.deps import compute_dependences
from polytune.poly.expand import SCRATCH_K, array_webs, expand_webs, pays_for_scratch
from polytune.poly.islutil import sets_of
from polytune.poly.original import original_schedule
from polytune.poly.schedule import check_legal, compute_base_schedule

FLAGS = ["-ffp-contract=off"]

# each row times a small matrix, summed into an accumulator row cleared for every row (benchmarks/unseen/
# small_rows.c's shape): isl fuses the three nests along the columns with the sum innermost, and nothing is
# parallel; as written the row loop is parallel with `acc` private
ROWS = """#include <stdio.h>
#define R 3000
#define K 12
#define N 20
double X[R][K], W[K][N], Y[R][N], acc[N];
int main(void) {
  int i, j, k;
  for (i = 0; i < R; i++) for (k = 0; k < K; k++) X[i][k] = ((i * 7 + k * 5) % 37 - 18) / 16.0;
  for (k = 0; k < K; k++) for (j = 0; j < N; j++) W[k][j] = ((k * 3 + j * 13) % 19 - 9) / 64.0;
#pragma scop
  for (i = 0; i < R; i++) {
    for (j = 0; j < N; j++)
      acc[j] = 0.0;
    for (k = 0; k < K; k++)
      for (j = 0; j < N; j++)
        acc[j] += X[i][k] * W[k][j];
    for (j = 0; j < N; j++)
      Y[i][j] = acc[j] > 0.0 ? acc[j] : 0.125 * acc[j];
  }
#pragma endscop
  double cs = 0;
  for (i = 0; i < R; i++) for (j = 0; j < N; j++) cs += Y[i][j] * ((i + 3 * j) % 7);
  printf("%.17g %.17g\\n", cs, acc[3]);
  return 0;
}
"""

# loops that count down, a dependence that goes backwards along the inner loop (A[i-1][j+1]), and a
# perfectly nested product whose band is permutable
SHAPES = """#include <stdio.h>
#define N 60
double A[N][N], B[N][N], C[N][N];
int main(void) {
  int i, j, k;
  for (i = 0; i < N; i++) for (j = 0; j < N; j++) {
    A[i][j] = (i * 3 + j) % 7 / 8.0; B[i][j] = (i + 2 * j) % 5 / 4.0; C[i][j] = 0;
  }
#pragma scop
  for (i = N - 1; i >= 1; i--)
    for (j = N - 2; j >= 0; j--)
      B[i][j] = 0.5 * B[i][j] + 0.25 * B[i][j + 1];
  for (i = 1; i < N; i++)
    for (j = 0; j < N - 1; j++)
      A[i][j] = 0.5 * A[i][j] + 0.5 * A[i - 1][j + 1];
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      for (k = 0; k < N; k++)
        C[i][j] += A[i][k] * B[k][j];
#pragma endscop
  double cs = 0;
  for (i = 0; i < N; i++) for (j = 0; j < N; j++) cs += C[i][j] * ((i + j) % 5) + A[i][j] + B[i][j];
  printf("%.17g\\n", cs);
  return 0;
}
"""


def _analyzed(tmp_path, source: str, name: str = "k.c"):
    src = tmp_path / name
    src.write_text(source)
    return str(src), analyze(str(src))


def _bands(node, out: list) -> list:
    """(members, statements) of every band of the tree, depth first."""
    if node.get_type() == isl.schedule_node_type.band:
        out.append((node.band_n_member(), sorted(s.get_tuple_name() for s in sets_of(node.get_domain()))))
    for k in range(node.n_children()):
        _bands(node.child(k), out)
    return out


def test_the_tree_keeps_the_programs_nests_and_sequences(tmp_path):
    _src, program = _analyzed(tmp_path, ROWS)
    a = program.scops[0]
    tree = original_schedule(a.scop, a.deps)
    # the row loop around all three nests, then each nest on its own: the product's (k, j) one band
    assert _bands(tree.get_root(), []) == [(1, ["S0", "S1", "S2"]), (1, ["S0"]), (2, ["S1"]), (1, ["S2"])]
    check_legal(tree, a.deps, a.scop)


def test_a_band_stops_where_a_dependence_goes_backwards(tmp_path):
    _src, program = _analyzed(tmp_path, SHAPES)
    a = program.scops[0]
    tree = original_schedule(a.scop, a.deps)
    # the downward sweep and the product are permutable bands; A[i-1][j+1] goes backwards along j
    assert _bands(tree.get_root(), []) == [(2, ["S0"]), (1, ["S1"]), (1, ["S1"]), (3, ["S2"])]
    check_legal(tree, a.deps, a.scop)


@pytest.mark.parametrize("source", [ROWS, SHAPES], ids=["rows", "shapes"])
def test_the_written_loops_give_the_original_results(source, tmp_path):
    src, program = _analyzed(tmp_path, source)
    expected = compile_run(src, str(tmp_path / "ref"), FLAGS, True)
    for k, opts in enumerate((OptimizeOptions(schedule="original"),
                              OptimizeOptions(choice=ScheduleChoice(scheduler="original", unroll=2)),
                              OptimizeOptions(schedule="original", tile_sizes=(5, 7, 3)))):
        out = tmp_path / f"opt{k}.c"
        out.write_text(generate(program, opts).text)
        for threads in (1, 2, 3):
            assert compile_run(str(out), str(tmp_path / "opt"), FLAGS, True, threads=threads) == expected, (k, threads)


@pytest.mark.parametrize("which", ["rows", "hotspot"])
def test_the_model_takes_the_written_loops_where_isls_leave_nothing_parallel(which, tmp_path):
    """ROWS, and benchmarks/realc/hotspot.c (a grid update with separate formulas for corners and edges, its
    `delta` assigned by an if/else-if chain): isl shifts the edge statements by a row and leaves no loop
    parallel; expanding `delta` along the columns only made a band of column tiles down the rows (0.5x of
    the original at 1 thread)."""
    if which == "rows":
        src, program = _analyzed(tmp_path, ROWS)
        args: tuple[str, ...] = ()
    else:
        src = os.path.join(ROOT, "benchmarks", "realc", "hotspot.c")
        program, args = analyze(src), ("11", "13", "2")
    a = program.scops[0]
    assert a.model_scheduler[0][0] == "original"
    assert a.expanded is None  # (an expansion that the model ranks no better than the loops as written)
    text = generate(program, OptimizeOptions()).text
    assert "#pragma omp for" in text or "#pragma omp parallel for" in text
    def results(path: str, exe: str, threads: int = 2) -> list[str]:  # (without the harness's `time:` line)
        out = compile_run(path, str(tmp_path / exe), FLAGS, True, threads=threads, args=args)
        return [line for line in out.splitlines() if not line.startswith("time:")]

    expected = results(src, "ref")
    out = tmp_path / "opt.c"
    out.write_text(text)
    for threads in (1, 2):
        assert results(str(out), "opt", threads) == expected


@pytest.mark.parametrize("name", ["2mm", "syrk", "jacobi-1d", "ludcmp", "adi"])
def test_the_model_keeps_isls_schedule_where_the_written_loops_are_no_better(name):
    a = analyze(os.path.join(ROOT, "tests", "data", "polybench", name + ".c")).scops[0]
    assert a.model_scheduler[0][0] != "original"


def test_a_small_product_does_not_pay_for_a_scratch_beyond_l2(tmp_path):
    """The accumulator row expanded by the rows: a 12-step product into a scratch of the output's size
    streams it three times, where the row stayed in L1; within L2 it pays."""
    _src, program = _analyzed(tmp_path, ROWS)
    a = program.scops[0]
    new = expand_webs(a.scop, array_webs(a.scop, a.deps))
    new_deps = compute_dependences(new)
    found = isolate(compute_base_schedule(new, new_deps), new, new_deps, Blocks(), lambda *args: True)[1]
    assert len(found) == 1 and SCRATCH_K > 12
    scratch_bytes = 3000 * 20 * 8
    assert not pays_for_scratch(new, found[0], l2=scratch_bytes // 2)
    assert pays_for_scratch(new, found[0], l2=scratch_bytes)


def test_past_its_quota_the_written_order_is_one_band_that_tiles_nothing(tmp_path, monkeypatch):
    import polytune.poly.original as original
    monkeypatch.setattr(original, "ORIGINAL_OPERATIONS", 1)
    src, program = _analyzed(tmp_path, SHAPES)
    a = program.scops[0]
    assert _bands(original_schedule(a.scop, a.deps).get_root(), []) == [(7, ["S0", "S1", "S2"])]
    expected = compile_run(src, str(tmp_path / "ref"), FLAGS, True)
    out = tmp_path / "opt.c"
    out.write_text(generate(program, OptimizeOptions(schedule="original")).text)
    assert compile_run(str(out), str(tmp_path / "opt"), FLAGS, True, threads=2) == expected
