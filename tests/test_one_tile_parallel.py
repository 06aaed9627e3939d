"""Issue 34 item 6: no parallel loop that runs as one tile. A tile loop over a parametric extent may fit one
tile at run time (a batch of 16 rows in tiles of 32): where a later tile loop of the band is parallel, the
loop is parallel only where it has two tiles or more, and its copy for one tile runs that later loop in
parallel (ParallelMark.alternative; the report's `parallel_loop_alternative`). benchmarks/unseen/
dense_batch.c is the case seen in a real project (a local accumulator expanded into a scratch array of
batch x outputs, its batch tile loop the only one marked). Where no later tile loop is parallel, the copy
runs the point loop of the same member in parallel: benchmarks/unseen/iir_rows.c, 16 channels."""
from __future__ import annotations

import json
import os

from conftest import ROOT, checksum_line, compile_run

from polytune.cli import main

DENSE = os.path.join(ROOT, "benchmarks", "unseen", "dense_batch.c")
IIR = os.path.join(ROOT, "benchmarks", "unseen", "iir_rows.c")


def _optimize(tmp_path, src: str, *args: str) -> tuple[str, dict]:
    out, report = tmp_path / "opt.c", tmp_path / "r.json"
    assert main(["optimize", src, "-o", str(out), "--report", str(report), *args]) == 0
    return str(out), json.loads(report.read_text())


def test_a_batch_tile_loop_gets_the_output_tile_loop_as_its_alternative(tmp_path):
    # (the tiler's code: the expanded sum is a contraction, printed as packed blocks by default, whose
    # threads take column groups where the rows are one block: tests/test_contraction.py)
    out, report = _optimize(tmp_path, DENSE, "--blocks", "off")
    (scop,) = report["scops"]
    band = scop["bands"][0]
    assert scop["expanded"] == ["s"] and band["tiled"] and band["tile_sizes"] == [32, 32, 32]
    assert band["parallel_loop"] == "tile 0" and band["parallel_loop_alternative"] == "tile 1"
    text = open(out).read()
    assert text.count("#pragma omp parallel for") >= 2
    assert "if ((c_floord((batch - 1), 32)) >= 1) {" in text


def test_the_one_tile_copy_and_the_parallel_copy_give_the_original_results(tmp_path):
    out, _ = _optimize(tmp_path, DENSE)
    for args in (("16", "70", "37"), ("40", "33", "9"), ("1", "5", "3")):
        want = checksum_line(compile_run(DENSE, str(tmp_path / "ref"), [], openmp=False, args=args))
        for threads in (1, 2, 4):
            assert checksum_line(compile_run(out, str(tmp_path / "opt"), [], True, threads, args=args)) == want


def test_the_iir_scalar_is_private_to_its_channel_loop_not_expanded(tmp_path):
    """The running value lives within one (pass, channel) iteration (poly/deps.LiveRanges): the channel loop
    runs outside the passes, in parallel, the scalar private there. Untiled: each pass reuses the channel's row
    after one row (poly/reuse.py), and 16 channels in tiles of 32 would be one tile."""
    out, report = _optimize(tmp_path, IIR)
    (scop,) = report["scops"]
    assert "expanded" not in scop
    assert [(b["parallel_loop"], b["tiled"]) for b in scop["bands"]][0] == ("loop 0", False)
    text = open(out).read()
    assert text.count("#pragma omp parallel for private(acc)") == 1
    assert text.index("#pragma omp parallel for private(acc)") < text.index("c1 < passes")


def test_the_iir_copies_give_the_original_results(tmp_path):
    out, _ = _optimize(tmp_path, IIR)
    for args in (("16", "301"), ("40", "77"), ("1", "5")):
        want = checksum_line(compile_run(IIR, str(tmp_path / "ref"), [], openmp=False, args=args))
        for threads in (1, 2, 4):
            assert checksum_line(compile_run(out, str(tmp_path / "opt"), [], True, threads, args=args)) == want


CONV = os.path.join(ROOT, "benchmarks", "realc", "conv2d_nchw.c")


def test_a_later_tile_loop_parallel_with_the_scalar_private_is_the_alternative(tmp_path):
    """conv2d_nchw (a batch of 2 in tiles of 32): the output channels' tile loop is parallel once `acc` is
    private, as the batch loop is: the single-tile copy runs it, `private(acc)` on both pragmas (a copy
    without the clause would share the accumulator between threads)."""
    out, report = _optimize(tmp_path, CONV)
    band = next(b for s in report["scops"] for b in s["bands"] if b["parallel_loop"] == "tile 0")
    assert band["parallel_loop_alternative"] == "tile 1"
    text = open(out).read()
    # each loop twice: collapsed with the tile loop inside it where it has few tiles (tests/test_collapse.py)
    assert text.count("#pragma omp parallel for private(acc)") == 4
    assert text.count("#pragma omp parallel for private(acc) collapse(2)") == 2
    for args in (("2", "3", "40", "9", "3"),):  # (2 tiles of output channels: the copy's loop runs 2 of them)
        want = checksum_line(compile_run(CONV, str(tmp_path / "ref"), [], openmp=False, args=args))
        for threads in (1, 2, 4):
            assert checksum_line(compile_run(out, str(tmp_path / "opt"), [], True, threads, args=args)) == want
