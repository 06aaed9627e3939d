"""A two-member band whose dependences reach only near cells (a dynamic program's west, north and north-west
neighbours) and which runs as a tile wavefront is tiled, where no size is given, in tiles of 32 rows by 512
(tiling.WAVEFRONT_TILES, the width along the innermost point loop), and its one-thread version in tiles of 8 by
256 (ROW_TILES): rows of 32 elements left the hardware prefetcher nothing to follow (docs/DESIGN.md, "Wavefront
tiles"); where an anti-diagonal would hold fewer than two wide tiles a thread, the parallel code runs tiles of
32 instead (a run-time choice). Sizes the user gives are kept for both versions; bands with loops inside keep 32;
bands with far dependences (Floyd-Warshall's row k) keep 32 as a wavefront, and run in order in 8 x 64
(tiling.FAR_ROW_TILES)."""
from __future__ import annotations

import json
import os

import pytest
from conftest import ROOT, compile_run

from polytune.cli import main
from polytune.pipeline import OptimizeOptions, analyze, generate
from polytune.poly.tiling import FAR_ROW_TILES, ROW_TILES, WAVEFRONT_TILES
from polytune.tune import TuneOptions, make_target

REALC = os.path.join(ROOT, "benchmarks", "realc")
UNSEEN = os.path.join(ROOT, "benchmarks", "unseen")
NW = os.path.join(REALC, "nw.c")


def _hash(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith("hash"))


def test_a_dynamic_programs_wavefront_is_tiled_wide_and_its_one_thread_version_in_few_rows():
    a = analyze(NW).scops[0].cpu
    wave, serial = a.tiled(()), a.tiled((), wavefront=False)
    (band,) = wave.tunable_bands
    assert band.wavefront and band.tile_sizes == WAVEFRONT_TILES == (32, 512)
    assert band.one_thread_sizes == ROW_TILES == (8, 256)
    assert serial.tile_sizes == ROW_TILES and not serial.tunable_bands[0].one_thread_sizes


def test_the_width_goes_to_the_member_of_the_innermost_point_loop():
    a = analyze(os.path.join(UNSEEN, "edit_distance.c")).scops[0].cpu
    (band,) = a.tiled(()).tunable_bands
    assert band.tile_sizes[band.point_order[-1]] == 512 and sorted(band.tile_sizes) == [32, 512]


def test_given_sizes_are_kept_for_both_versions():
    a = analyze(NW).scops[0].cpu
    wave, serial = a.tiled((16, 64)), a.tiled((16, 64), wavefront=False)
    assert wave.tile_sizes == serial.tile_sizes == (16, 64) and wave.given_sizes == 2
    assert not wave.tunable_bands[0].one_thread_sizes


def test_bands_with_loops_inside_keep_the_default_tiles():
    for a in analyze(os.path.join(ROOT, "benchmarks", "pluto", "2d_bidirec.c")).scops:
        for b in a.cpu.tiled(()).tunable_bands:
            assert set(b.tile_sizes) == {32} and not b.one_thread_sizes


@pytest.mark.parametrize("path", [os.path.join(REALC, "floyd.c"), os.path.join(UNSEEN, "widest_path.c")])
def test_a_band_with_far_dependences_keeps_the_default_wavefront_and_runs_in_order_in_few_rows(path):
    """(row k and column k, read by every row: the wavefront in 32 x 32, its one-thread version in 8 x 64)"""
    a = analyze(path).scops[0].cpu
    (band,) = [b for b in a.tiled(()).tunable_bands if b.tiled]
    assert band.wavefront and band.tile_sizes == (32, 32) and not band.wide_tiles
    assert band.one_thread_sizes == FAR_ROW_TILES == (8, 64)
    assert a.tiled((), wavefront=False).tile_sizes == FAR_ROW_TILES


def test_far_one_thread_tiles_give_the_originals_paths_on_one_and_two_threads(tmp_path):
    """(300 nodes: 5 rows of tiles of 64 columns, the last one partial)"""
    path = os.path.join(UNSEEN, "widest_path.c")
    out, report = tmp_path / "wp.opt.c", tmp_path / "wp.json"
    assert main(["optimize", path, "-q", "-o", str(out), "--report", str(report), "-DN=300"]) == 0
    bands = json.loads(report.read_text())["scops"][0]["bands"]
    assert [b.get("one_thread_tile_sizes") for b in bands if b["tiled"]] == [[8, 64]]
    want = compile_run(path, str(tmp_path / "ref"), ["-DN=300"], openmp=False).split("checksum:")[1]
    for threads in (1, 2):
        got = compile_run(str(out), str(tmp_path / "opt"), ["-DN=300"], True, threads).split("checksum:")[1]
        assert got == want


def test_a_known_extent_too_short_for_four_wide_tiles_keeps_the_default_tiles():
    a = analyze(os.path.join(UNSEEN, "lcs.c"), defines=("N=700",)).scops[0].cpu
    assert a.tiled(()).tile_sizes == (32, 32)
    a = analyze(os.path.join(UNSEEN, "lcs.c")).scops[0].cpu  # (6,000 symbols)
    assert a.tiled(()).tunable_bands[0].tile_sizes == WAVEFRONT_TILES


@pytest.mark.parametrize("args", [("300", "1500", "10", "2"), ("1100", "700", "3", "1"), ("130", "1100", "4", "1")])
def test_the_wide_tiles_give_the_originals_table_on_one_to_three_threads(args, tmp_path):
    """(1099 columns: wide tiles on 2 and 3 threads, 1099 > 512 x 2 columns; 699: on 2 threads only, tiles of
    32 on 3)"""
    out, report = tmp_path / "nw.opt.c", tmp_path / "nw.json"
    assert main(["optimize", NW, "-q", "-o", str(out), "--report", str(report)]) == 0
    bands = json.loads(report.read_text())["scops"][0]["bands"]
    assert bands[0]["tile_sizes"] == [32, 512] and bands[0]["one_thread_tile_sizes"] == [8, 256]
    text = out.read_text()
    assert "if ((max_rows - 1) > 32L * (omp_get_max_threads() - 1) && (max_cols - 1) > 512L * " \
        "(omp_get_max_threads() - 1))" in text
    want = _hash(compile_run(NW, str(tmp_path / "ref"), [], openmp=False, args=args))
    for threads in (1, 2, 3):
        assert _hash(compile_run(str(out), str(tmp_path / "opt"), [], True, threads, args=args)) == want


def test_tunes_default_start_holds_the_wavefronts_sizes_and_optimizes_output_is_run_beside():
    t = make_target(analyze(NW), TuneOptions())
    space = t.space(kind="schedule")
    starts = dict(t.starts(space, t.seed(space)))
    tiles = dict(zip(space.names, starts["default"]))
    assert [tiles[p.name] for p in t.parameters()][:2] == [32, 512]
    assert set(starts["seed"][:2]) == {32}  # (Pluto's default)
    # (the one-thread version's tiles are no configuration: confirm_best runs optimize's own output beside)
    assert t.default_has_own_one_thread_tiles()
    assert t.variant(space.names, starts["default"]).text != generate(t.program, OptimizeOptions()).text
    bidirec = os.path.join(ROOT, "benchmarks", "pluto", "2d_bidirec.c")
    assert not make_target(analyze(bidirec), TuneOptions()).default_has_own_one_thread_tiles()


def _confirm_nw(monkeypatch, program_ms: dict[str, float]):
    """CTarget.confirm_best on nw (tile space) with the programs' region times replaced by *program_ms* (by
    label: best, seed, default, and optimize, its own output, run beside because its one-thread tiles are no
    configuration of the space)."""
    from polytune.measure import Measurement
    from polytune.measure.build import Build
    from polytune.measure.c import BuildConfig, CRunner
    from polytune.targets import c as ctarget
    t = make_target(analyze(NW), TuneOptions(), BuildConfig(cflags=("-O1",), runs=1, threads=2,
                                                            program=Build(args=("23", "19", "10", "2"))))
    assert t.default_has_own_one_thread_tiles()
    space = t.space(kind="schedule")
    starts = dict(t.starts(space, t.seed(space)))
    sizes = len(t.parameters())
    best_config = (16,) * sizes + starts["seed"][sizes:]
    labels = {}
    real = ctarget.compile_variant

    def compile_variant(job, program, source=None):
        c = real(job, program, source=source)
        labels[c.exe] = {best_config: "best", starts["seed"]: "seed", starts["default"]: "default"}.get(
            job.config, "optimize")
        return c
    monkeypatch.setattr(ctarget, "compile_variant", compile_variant)
    monkeypatch.setattr(ctarget, "time_variant", lambda ref, bound, compiled: Measurement(
        compiled.config, (program_ms[labels[compiled.exe]] / 1e3,)))
    runner = CRunner(t.program, t.build)
    try:
        runner.reference()
        seed, best = Measurement(starts["seed"], (3e-3,)), Measurement(best_config, (1e-3,))
        default = Measurement(starts["default"], (2e-3,))
        return best, t.confirm_best(runner, seed, best, space.names, {"seed": seed, "default": default}, 3)
    finally:
        runner.close()


def test_tune_runs_optimizes_own_output_beside_and_says_where_it_is_faster(monkeypatch):
    best, (info, warnings, kept) = _confirm_nw(monkeypatch, {"best": 2.0, "seed": 3.0, "default": 2.5,
                                                             "optimize": 1.0})
    assert "optimize" in info["median_ms"] and info["default_faster"] and kept is best
    assert any("optimize's default is faster than the tuned configuration" in w for w in warnings)


def test_no_warning_where_optimizes_own_output_is_slower_than_the_tuned_best(monkeypatch):
    best, (info, warnings, kept) = _confirm_nw(monkeypatch, {"best": 1.0, "seed": 3.0, "default": 2.5,
                                                             "optimize": 2.0})
    assert info["median_ms"]["optimize"] == 2.0 and not info.get("default_faster") and kept is best
    assert not warnings
