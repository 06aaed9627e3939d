"""Parallel work per synchronization: a branch keeps small runs of a parallel loop serial (poly/parallel.py's
PARALLEL_WORK against the loop's trip count times the work of one iteration: `if (UB - LB >= K)` the
parallel loop, else the same loop without the pragma), and a
band that streams rows stays untiled (poly/reuse.py). The results stay the original program's, bit for bit."""
from __future__ import annotations

import os
import re

import pytest
from conftest import ROOT, compile_run

from polytune.emit.c import ONE_THREAD_REGION
from polytune.pipeline import OptimizeOptions, analyze, generate
from polytune.poly.choice import ScheduleChoice
from polytune.poly.parallel import PARALLEL_WORK

CORPUS = os.path.join(ROOT, "tests", "data", "polybench")
FLAGS = ["-ffp-contract=off"]

STREAM = """\
#define N {n}
static double A[N], B[N];
void f(void)
{{
  int i;
#pragma scop
  for (i = 1; i < N - 1; i++)
    B[i] = A[i - 1] + A[i] + A[i + 1];
#pragma endscop
}}
"""


def _optimize(path: str, choice: ScheduleChoice | None = None) -> str:
    return generate(analyze(path), OptimizeOptions(schedule="model", choice=choice)).text  # (the CLI default)


def _loop_pragma(line: str) -> bool:
    """A parallel loop's pragma (not the one-thread version's region of one thread); *line* stripped."""
    return "#pragma omp parallel" in line and line != ONE_THREAD_REGION


def _pragmas(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if _loop_pragma(line.strip())]


def _guards(text: str) -> list[str | None]:
    """For each parallel pragma, the condition of the branch right above it (None: no branch)."""
    lines = [line.strip() for line in text.splitlines()]
    out = []
    for k, line in enumerate(lines):
        if _loop_pragma(line):
            m = re.fullmatch(r"if \((.*)\) \{", lines[k - 1])
            out.append(m.group(1) if m else None)
    return out


@pytest.fixture
def real_threshold(monkeypatch):
    monkeypatch.delenv("POLYTUNE_PARALLEL_WORK", raising=False)


def test_parametric_trip_count_gets_a_branch(real_threshold):
    """jacobi-1d's space loops run n - 2 iterations of one statement each: parallel from PARALLEL_WORK on,
    the same loop without the pragma below (OpenMP's `if` clause would still enter a serialized region)."""
    text = _optimize(os.path.join(CORPUS, "jacobi-1d.c"))
    assert _guards(text) == [f"(n - 1) - 1 >= {PARALLEL_WORK}"] * 2
    assert _pragmas(text) == ["#pragma omp parallel for"] * 2
    assert text.count("} else {") >= 2


def test_tile_wavefront_gets_a_branch_on_its_tile_count(real_threshold):
    """Diamond tiles of jacobi-1d: the wavefront loop is parallel only when enough tiles run at once."""
    text = _optimize(os.path.join(CORPUS, "jacobi-1d.c"), ScheduleChoice(scheduler="pluto"))
    (guard,) = _guards(text)
    least = int(re.search(r">= (\d+)$", guard).group(1)) + 1
    assert 1 < least < PARALLEL_WORK


def test_constant_small_trip_count_drops_the_pragma(real_threshold, tmp_path):
    src = tmp_path / "small.c"
    src.write_text(STREAM.format(n=1000))
    assert _pragmas(_optimize(str(src))) == []


def test_constant_large_trip_count_keeps_the_pragma_without_a_clause(real_threshold, tmp_path):
    src = tmp_path / "large.c"
    src.write_text(STREAM.format(n=10 * PARALLEL_WORK))
    assert _pragmas(_optimize(str(src))) == ["#pragma omp parallel for"]


def test_threshold_zero_prints_no_branch():
    """(What the other tests run with: conftest sets POLYTUNE_PARALLEL_WORK=0.)"""
    assert _guards(_optimize(os.path.join(CORPUS, "jacobi-1d.c"))) == [None, None]


@pytest.mark.parametrize("name,choice", [("jacobi-1d", None), ("jacobi-1d", ScheduleChoice(scheduler="pluto")),
                                         ("doitgen", None), ("gesummv", None), ("trisolv", None)])
@pytest.mark.parametrize("work", ["16384", "40"])
def test_branch_keeps_the_original_results(name, choice, work, monkeypatch, tmp_path):
    """With the real threshold (every run serial at these sizes) and with a small one (some runs parallel,
    some serial: diamond wavefronts of few and of many tiles), at 2 and 3 threads."""
    monkeypatch.setenv("POLYTUNE_PARALLEL_WORK", work)
    src = os.path.join(CORPUS, name + ".c")
    expected = compile_run(src, str(tmp_path / "ref"), FLAGS, True)
    out = tmp_path / f"{name}.opt.c"
    out.write_text(_optimize(src, choice))
    for threads in (2, 3):
        assert compile_run(str(out), str(tmp_path / "opt"), FLAGS, True, threads=threads) == expected


def _bands(name: str) -> list:
    a = analyze(os.path.join(CORPUS, name + ".c")).scops[0]
    return list(a.tiled((), schedule="model").bands)


def test_streaming_matrix_vector_product_stays_untiled_and_row_parallel():
    """gesummv: each matrix element is read once; the row loop is parallel and j, unit stride, innermost.
    Tiles would only walk each 32 x 32 block 32 rows at a time."""
    (band,) = _bands("gesummv")
    assert not band.tiled and band.parallel_loop == "loop 0"


@pytest.mark.parametrize("name", ["2mm", "syrk"])
def test_nests_with_reuse_across_rows_stay_tiled(name):
    """A matrix product reuses a whole matrix across its outer loop: its bands are tiled as before (where it
    is not packed as a contraction: blocks off)."""
    a = analyze(os.path.join(CORPUS, name + ".c")).scops[0]
    assert any(b.tiled for b in a.tiled((), schedule="model", blocks=None).bands)


def test_transposed_stream_stays_tiled():
    """mvt's second product walks A by columns: only tiles give it a parallel outer loop and a unit-stride
    inner one, so that band is tiled while the first (rows) is not."""
    a = analyze(os.path.join(ROOT, "benchmarks", "pluto", "mvt.c")).scops[0]
    bands = a.tiled((), schedule="model").bands
    assert sorted(b.tiled for b in bands) == [False, True]


def test_a_transpose_is_tiled_where_every_order_walks_some_array_down_its_columns():
    """transpose_scale (benchmarks/unseen): `B[i][j] = 0.5 * B[i][j] + 0.25 * A[j][i]` walks A down its columns
    whatever the order, so the cache lines of A's column serve the next rows only from a tile (untiled,
    0.61x of Pluto's tiled code); correlation's symmetric copy `corr[j][i] = corr[i][j]` likewise."""
    a = analyze(os.path.join(ROOT, "benchmarks", "unseen", "transpose_scale.c")).scops[0]
    assert all(b.tiled for b in a.tiled((), schedule="model").bands if b.members > 1)
    (copy,) = [b for b in _bands("correlation") if b.statements == ("S13",)]  # corr[j][i] = corr[i][j]
    assert copy.tiled


def test_model_prefers_unskewed_loops_to_diamond_lattices_jacobi_1d():
    """Diamond tiles of a 1-D stencil step their inner loop by 4 with divided subscripts (gcc leaves it
    scalar): the model counts every access there as bad and takes the outer schedule."""
    a = analyze(os.path.join(CORPUS, "jacobi-1d.c")).scops[0]
    (name, _), costs = a.model_scheduler
    assert name == "outer"
    assert costs["pluto/stride"]["bad_accesses"] > costs["outer/stride"]["bad_accesses"] == 0


def test_tiling_reuse_is_a_choice_pluto_and_the_seed_tile_every_band():
    """--schedule pluto (the tuner's seed) tiles gesummv as before; tiling=reuse is the model's rule."""
    a = analyze(os.path.join(CORPUS, "gesummv.c")).scops[0]
    assert all(b.tiled for b in a.tiled((), schedule="pluto").bands)
    assert not any(b.tiled for b in a.tiled((), choice=ScheduleChoice(tiling="reuse")).bands)


def test_model_keeps_a_streamed_reduction_innermost_gesummv():
    a = analyze(os.path.join(CORPUS, "gesummv.c")).scops[0]
    assert a.model_scheduler[0] == ("pluto", "stride")


def test_reuse_rule_on_a_band_whose_statement_never_runs(tmp_path):
    """(Found by the random nests: `for k = i - 1 .. j - 1` with j < i is empty, and the stride scores of
    the untiled band had no instance to look at.)"""
    src = tmp_path / "empty.c"
    src.write_text("double s;\nvoid f(void)\n{\n#pragma scop\n  for (int i = 0; i <= 4; i++)\n"
                   "    for (int j = 0; j <= i - 1; j++)\n      for (int k = i - 1; k <= j - 1; k++)\n"
                   "        s = s * 0.5 + (i - k) * 0.125 + 1.0;\n#pragma endscop\n}\n")
    assert "#pragma scop" not in _optimize(str(src))  # (the statement never runs: nothing is printed)
