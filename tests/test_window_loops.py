"""A reduction over a window (a filter's taps: `sum += in[y + d][x]` for d in [-r, r]) under a loop that `omp simd`
vectorizes is costed along that loop (poly/cost.py, `_window`): the taps add up in a vector register and their
walk is as short as the filter. box_blur's column pass had been expanded (`sum` into a 32 x 32 x 32 scratch) and
its taps tiled, which the model ranked equal to the loops as written: 0.85x of gcc's build of the original at 1
thread, the loops as written 1.05x. A contraction's k (`a[i][k]`, `b[k][j]`) is no window: its scalar is still
expanded and the product tiled.

A parallel loop over a parametric extent whose body is a sequence of loop nests (an image's channels, each a row
pass then a column pass) runs those nests' outer loops in parallel instead where it has fewer than
ALTERNATIVE_LEAST iterations per thread at run time (ParallelMark.alternative; the report's
`parallel_loop_alternative` "loops inside"): 3 channels on 2 threads had given one thread two of them."""
from __future__ import annotations

import json
import os

import pytest
from conftest import ROOT, compile_run

from polytune.cli import main
from polytune.emit.c import ALTERNATIVE_LEAST, THREADS

BLUR = os.path.join(ROOT, "benchmarks", "realc", "box_blur.c")
LLMC = os.path.join(ROOT, "benchmarks", "realc", "matmul_llmc.c")

FIR = """#include <stdio.h>
#include <stdlib.h>
void fir(int channels, int n, int taps, int stride, const double *x, const double *h, double *y)
{
    for (int c = 0; c < channels; c++)
        for (int i = 0; i < n; i++) {
            double s = 0.0;
            for (int k = 0; k < taps; k++)
                s += h[k] * x[c * stride + i + k];
            y[c * n + i] = s;
        }
}
int main(int argc, char **argv)
{
    int ch = argc > 1 ? atoi(argv[1]) : 4, n = argc > 2 ? atoi(argv[2]) : 1000, taps = argc > 3 ? atoi(argv[3]) : 7;
    int stride = n + taps;
    double *x = malloc(sizeof(double) * ch * stride), *h = malloc(sizeof(double) * taps);
    double *y = malloc(sizeof(double) * ch * n);
    for (int i = 0; i < ch * stride; i++) x[i] = (i * 37 % 101) / 101.0;
    for (int k = 0; k < taps; k++) h[k] = 1.0 / (k + 2);
    fir(ch, n, taps, stride, x, h, y);
    double cs = 0;
    for (int i = 0; i < ch * n; i++) cs += y[i] * (1 + i % 5);
    printf("checksum: %.17e\\n", cs);
    return 0;
}
"""


def _optimize(tmp_path, src: str, *args: str) -> tuple[str, dict]:
    out, report = tmp_path / "opt.c", tmp_path / "r.json"
    assert main(["optimize", src, "-o", str(out), "--report", str(report), *args]) == 0
    return str(out), json.loads(report.read_text())


def _result(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith(("checksum", "hash"))]


def test_a_blurs_taps_add_up_under_its_vector_loop_as_written_not_expanded_and_tiled(tmp_path):
    out, report = _optimize(tmp_path, BLUR)
    scop = report["scops"][0]
    assert scop["scheduler"] == "original" and not scop.get("expanded")
    assert scop["scheduler_costs"]["original/stride"]["bad_accesses"] == 0
    assert scop["scheduler_costs"]["pluto/stride"]["bad_accesses"] > 0
    text = open(out).read()
    assert text.count("#pragma omp simd private(sum)") >= 2 and "sum_x" not in text


def test_a_window_reduction_under_a_vector_loop_costs_nothing_and_keeps_its_scalar(tmp_path):
    src = tmp_path / "fir.c"
    src.write_text(FIR)
    out, report = _optimize(tmp_path, str(src))
    scop = report["scops"][0]
    assert scop["scheduler_costs"]["pluto/stride"]["bad_accesses"] == 0 and not scop.get("expanded")
    assert "#pragma omp simd private(s)" in open(out).read()
    for args in (("4", "1000", "7"), ("3", "37", "1"), ("1", "5", "40")):
        want = _result(compile_run(str(src), str(tmp_path / "ref"), [], openmp=False, args=args))
        for threads in (1, 2):
            assert _result(compile_run(out, str(tmp_path / "opt"), [], True, threads, args=args)) == want


@pytest.fixture(scope="module")
def helper_blur(tmp_path_factory) -> dict:
    """unseen helper_blur's report, optimized with the defaults (once for the tests that read it)."""
    return _optimize(tmp_path_factory.mktemp("helper_blur"),
                     os.path.join(ROOT, "benchmarks", "unseen", "helper_blur.c"))[1]["scops"][0]


def test_a_short_loop_of_taps_innermost_is_unrolled_not_moved_outside_the_image(helper_blur):
    # unseen helper_blur: 7 taps summed into dst[at(y, x)] (no vector loop marked: the taps' clamps are no steps
    # of one); the model had taken the schedule with the taps' loop outside the image (0.24 s against 0.022 s)
    scop = helper_blur
    assert scop["scheduler"] != "outer" and scop["scheduler_costs"][f"{scop['scheduler']}/stride"] == {
        "serial": 0, "bad_accesses": 0, "region_depth": 0}


def test_a_short_time_loop_sunk_under_the_image_pays_for_the_dependence_it_carries(helper_blur):
    # helper_blur under Pluto's schedule: the T = 5 time loop inside the skewed image loops, the 7 taps inside it;
    # gcc unrolls both, and the loop left innermost, t, rewrites the same element (nothing to vectorize along it).
    # The model had ranked that schedule equal with the written loops (0.085 s against 0.026 s) and kept it
    scop = helper_blur
    assert scop["scheduler_costs"]["pluto/stride"]["bad_accesses"] > 0, scop["scheduler_costs"]
    assert scop["scheduler"] == "original", scop["scheduler"]


def test_a_contractions_k_is_no_window_its_scalar_is_still_expanded(tmp_path):
    _out, report = _optimize(tmp_path, LLMC)
    assert report["scops"][0]["expanded"] == ["val"]


def test_a_loop_over_few_channels_hands_its_threads_to_the_passes_inside(tmp_path):
    out, report = _optimize(tmp_path, BLUR)
    band = report["scops"][0]["bands"][0]
    assert band["parallel_loop"] == "loop 0" and band["parallel_loop_alternative"] == "loops inside"
    text = open(out).read()
    assert f">= {ALTERNATIVE_LEAST} * {THREADS}()" in text and text.count("#pragma omp parallel for") >= 3


@pytest.mark.parametrize("channels", ["1", "3", "8"])
def test_both_copies_of_the_channel_loop_give_the_original_results(tmp_path, channels):
    out, _ = _optimize(tmp_path, BLUR)
    args = ("23", "19", channels, "2", "2")
    want = _result(compile_run(BLUR, str(tmp_path / "ref"), [], openmp=False, args=args))
    for threads in (1, 2, 4):
        assert _result(compile_run(out, str(tmp_path / "opt"), [], True, threads, args=args)) == want


def test_the_channel_loop_builds_without_openmp(tmp_path):
    out, _ = _optimize(tmp_path, BLUR)
    args = ("23", "19", "3", "2", "2")
    want = _result(compile_run(BLUR, str(tmp_path / "ref"), [], openmp=False, args=args))
    assert _result(compile_run(out, str(tmp_path / "plain"), [], openmp=False, args=args)) == want


def test_alternatives_are_dropped_from_a_schedule_and_none_is_told_where_there_are_none():
    from polytune.pipeline import analyze
    from polytune.poly.marks import ParallelMark, marks_of
    from polytune.poly.parallel import without_alternatives
    ts = analyze(BLUR).scops[0].cpu.tiled(())
    assert any(isinstance(m, ParallelMark) and m.alternative is not None for m in marks_of(ts.schedule))
    plain = without_alternatives(ts.schedule)
    marks = [m for m in marks_of(plain) if isinstance(m, ParallelMark)]
    assert marks and all(m.alternative is None and not m.alternative_per_thread for m in marks)
    assert without_alternatives(plain) is None


def test_hotspots_corner_keeps_its_rows_parallel_without_the_alternative(tmp_path):
    """hotspot's row loop would hand its threads to the column loops, beside which isl prints the corner's first
    instance: the AST check refuses those loops as parallel, and the region keeps its row loop (not the
    original order's serial fallback)."""
    out, report = _optimize(tmp_path, os.path.join(ROOT, "benchmarks", "realc", "hotspot.c"))
    scop = report["scops"][0]
    assert not scop.get("fallback") and scop["bands"][0]["parallel_loop"] == "loop 0"
    assert scop["bands"][0]["parallel_loop_alternative"] is None
    assert "#pragma omp parallel for firstprivate(delta)" in open(out).read()
