"""tune --space schedule: the tile sizes and one categorical coordinate per schedule choice, searched together
from Pluto's default; every coordinate value gives a legal variant whose results match the original's."""
from __future__ import annotations

import dataclasses
import json
import os

import pytest
from conftest import ROOT

from polytune.cli import main
from polytune.measure import ErrorKind, Measurement
from polytune.measure.c import BuildConfig
from polytune.measure.cache import workload_key
from polytune.pipeline import OptimizeOptions, analyze, generate
from polytune.poly.choice import ScheduleChoice, coordinates
from polytune.poly.contraction import BLOCK_COORDINATES
from polytune.search import Budget, SearchOptions, run_search
from polytune.targets.c import CTarget, choice_of
from polytune.tune import TuneOptions, make_target, summary, tune

CORPUS = os.path.join(ROOT, "tests", "data", "polybench")
FAST = BuildConfig(cflags=("-O1",), runs=1, threads=2)


def target_of(name: str, **opts) -> CTarget:
    return make_target(analyze(os.path.join(CORPUS, name + ".c")), TuneOptions(**opts), FAST)


def test_schedule_space_is_the_tile_sizes_then_one_categorical_coordinate_per_choice_field():
    t = target_of("syrk")
    tiles, space = t.space(), t.space(kind="schedule")
    sizes = tuple(p.name for p in t.parameters())
    blocks = tuple(BLOCK_COORDINATES)  # (syrk's product is printed as packed blocks: their coordinates last)
    assert tiles.names == sizes + blocks
    assert space.names == sizes + tuple(coordinates()) + blocks
    for p, values in zip(space.params[len(sizes):], coordinates().values()):
        assert p.is_categorical and len(p.categories) == len(values)
        assert choice_of({p.name: 0}) == ScheduleChoice()  # the first category is Pluto's default
    assert space.decode(t.seed(space))["fusion"] == "smart"
    assert t.labels(space)[len(sizes):len(sizes) + len(coordinates())] == tuple(coordinates())


def test_schedule_space_starts_from_the_tile_only_seed():
    """The seed is Pluto's default in both spaces: the same code, so "speedup over the seed" means the same."""
    t = target_of("gramschmidt")
    tiles, space = t.space(), t.space(kind="schedule")
    seed_tiles, seed = t.seed(tiles), t.seed(space)
    assert seed[:len(seed_tiles)] == seed_tiles and all(v == 0 for v in seed[len(seed_tiles):])
    assert t.variant(space.names, seed).text == t.variant(tiles.names, seed_tiles).text
    assert t.seed(space, (16,) * len(seed_tiles)) == (16,) * len(seed_tiles) + seed[len(seed_tiles):]


def test_a_choice_reads_only_the_tile_sizes_of_the_bands_it_tiles():
    """atax: Pluto's schedule tiles 2 loops, the outer scheduler 4 (the rest take 32), fusion=none 2 or 4: a
    configuration that differs only in sizes the choice does not read is the same variant (measured once)."""
    t = target_of("atax")
    space = t.space(kind="schedule")
    names, seed = space.names, t.seed(space)
    n = len(t.space().params)
    for k, p in enumerate(space.params[n:], start=n):
        for v in p.values:
            config = seed[:k] + (v,) + seed[k + 1:]
            opts = t.variant(names, config).build
            assert len(opts.tile_sizes) == sum(t.tile_counts(opts.choice))
            assert t.variant(names, config).reads >= set(coordinates())


def test_the_cache_key_holds_the_category_lists():
    t = target_of("syrk")
    keys = {workload_key(t.program, t.build, t.opts, t.space(kind=k)) for k in ("tiles", "schedule")}
    assert len(keys) == 2


@pytest.mark.parametrize("name", ["atax", pytest.param("gramschmidt", marks=pytest.mark.slow)])
def test_every_coordinate_value_gives_a_verified_variant(name):
    """Each schedule coordinate moved alone from the seed, to each of its values: built, run and compared with
    the original's results (the dump of every written element and the printed hash of the arrays)."""
    t = target_of(name)
    space = t.space(kind="schedule")
    seed = t.seed(space)
    runner = t.runner()
    try:
        runner.reference()
        n = len(t.space().params)
        for k, p in enumerate(space.params[n:], start=n):
            for v in p.values:
                if v == seed[k]:
                    continue
                config = seed[:k] + (v,) + seed[k + 1:]
                m = runner.measure(t.variant(space.names, config))
                assert m.ok, (name, space.decode(config), m.error, m.detail)
    finally:
        runner.close()


def test_mixed_search_moves_tiles_first_and_never_ends_slower_than_its_seed():
    """On a surface where every other schedule is slower, the mixed search measures the tile-only
    neighbourhood first and, with the budget of a tile-only search, ends no slower than the seed."""
    t = target_of("gramschmidt")  # (no contraction: its tile space is tile sizes only)
    tiles, space = t.space(), t.space(kind="schedule")
    n = len(tiles.params)

    def cost(config):
        tile_cost = sum(abs(v.bit_length() - 5) for v in config[:n]) - (config[0] == 64) * 0.5
        return Measurement(tuple(config), ((1 + tile_cost + 3 * sum(1 for c in config[n:] if c)) * 1e-3,))

    budget = Budget(max_evals=2 * n + 1)
    only = run_search(tiles, cost, "hill", t.seed(tiles), SearchOptions(), budget)
    mixed = run_search(space, cost, "hill", t.seed(space), SearchOptions(), budget)
    assert [r.config[:n] for r in mixed.evaluations] == [r.config for r in only.evaluations]
    assert mixed.best.value <= only.best.value <= mixed.seed.value


def test_tune_over_the_schedule_space_end_to_end(tmp_path):
    src = os.path.join(CORPUS, "atax.c")
    rep, out = tmp_path / "r.json", tmp_path / "best.c"
    ts = tmp_path / "tile.sizes"
    rc = main(["tune", src, "--space", "schedule", "--jobs", "1", "--no-cache", "--runs", "1", "--cflags=-O1",
               "--threads", "2", "--max-evals", "6", "--report", str(rep), "-o", str(out), "--tile-sizes-out",
               str(ts)])
    assert rc == 0
    r = json.loads(rep.read_text())
    assert [s.get("categories", [None])[0] for s in r["space"][-7:]] == ["pluto", "smart", "auto", "on", "stride",
                                                                          "4", "all"]
    # the budget, plus the starts besides the seed (optimize's default, the other scheduler): search/phases.py
    assert 6 <= r["evals"] <= 6 + len(r["starts"]) - 1 and r["evaluations"][0]["named"]["scheduler"] == "pluto"
    assert r["evaluations"][0]["phase"] == "seed" and r["starts"]["seed"]["config"] == r["seed"]["config"]
    assert {e["named"]["fusion"] for e in r["evaluations"]} >= {"smart"}
    assert r["best_build"]["choice"]["scheduler"] in ("pluto", "outer")
    assert [int(x) for x in ts.read_text().split()] == r["best_build"]["tile_sizes"]  # sizes, no categories
    # the printed --choice reproduces the best variant
    best = ScheduleChoice(**r["best_build"]["choice"])
    text = generate(analyze(src), OptimizeOptions(tile_sizes=tuple(r["best_build"]["tile_sizes"]), choice=best)).text
    assert text == out.read_text()


@pytest.mark.slow  # (5 s; CI's slow line: the schedule space's end-to-end tune runs by default above)
def test_tune_api_schedule_space_with_jobs_names_categories_in_the_summary(tmp_path):
    res = tune(os.path.join(CORPUS, "atax.c"), TuneOptions(space="schedule", jobs=2, cache=None, max_evals=4,
                                                            alpha=None), dataclasses.replace(FAST, runs=2))
    text = summary(res)
    assert "scheduler=" in text and "fusion=" in text and "optimize it with:" in text
    assert all(r.measurement.error in (None, ErrorKind.PRUNED) for r in res.search.evaluations)


def test_schedule_space_is_for_the_c_target_only(tmp_path):
    from polytune.errors import UsageError
    from polytune.targets.triton import TritonTarget
    assert TritonTarget.spaces == ("tiles",)
    t = target_of("syrk")
    with pytest.raises(UsageError):
        t.space(kind="launch")


def test_a_kernel_without_tiles_still_has_a_schedule_space():
    """durbin: no band is tiled under any schedule; its schedule coordinates are still tuned."""
    from polytune.errors import UsageError
    t = target_of("durbin")
    with pytest.raises(UsageError, match="nothing to tune"):
        t.space()
    space = t.space(kind="schedule")
    assert space.names == tuple(coordinates()) and t.seed(space) == (0,) * len(coordinates())
    assert t.variant(space.names, t.seed(space)).build.tile_sizes == ()


def test_a_compile_worker_builds_the_program_the_driver_would():
    """The compile step in another process (which analyzes the file itself) gives the same executable as
    in the tuning process, for the seed and for another schedule: what is measured is what is written."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from polytune.measure.c import compile_variant
    t = target_of("atax")
    space = t.space(kind="schedule")
    seed = t.seed(space)
    other = seed[:-6] + (1, 2) + seed[-4:]  # scheduler=outer, fusion=none
    runner = t.runner()
    try:
        jobs = [runner.job(t.variant(space.names, c)) for c in (seed, other)]
        here = [compile_variant(j, t.program).exe for j in jobs]
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("forkserver")) as ex:
            there = [c.exe for c in ex.map(compile_variant, jobs)]
    finally:
        runner.close()
    assert here == there and here[0] != here[1]


@pytest.mark.parametrize("name", ["gramschmidt", "atax"])
def test_the_default_start_is_the_program_optimize_emits(name):
    """The schedule space starts from the seed, optimize's own output (the model's choice, tile 32) and the
    other scheduler: a tuned result is then never slower than what optimize emits without measuring."""
    t = target_of(name)
    space = t.space(kind="schedule")
    starts = dict(t.starts(space, t.seed(space)))
    assert list(starts) == ["seed", "default", "outer"] and starts["seed"] == t.seed(space)
    assert t.variant(space.names, starts["default"]).text == generate(t.program, OptimizeOptions(schedule="model")).text
    assert t.variant(space.names, starts["outer"]).text == generate(t.program, OptimizeOptions(schedule="outer")).text
    assert t.starts(t.space(), t.seed(t.space())) == [("seed", t.seed(t.space()))]  # tile-only: the seed alone


def _confirm(monkeypatch, program_ms: dict[str, float]):
    """CTarget.confirm_best on atax with the programs' region times replaced by *program_ms* (by label)."""
    from polytune.measure.c import CRunner
    from polytune.targets import c as ctarget
    t = target_of("atax")
    space = t.space(kind="schedule")
    starts = dict(t.starts(space, t.seed(space)))
    best_config = (16, 64) + starts["seed"][2:]
    labels = {}  # the re-run's programs, by their bytes
    real = ctarget.compile_variant

    def compile_variant(job, program, source=None):
        c = real(job, program, source=source)
        labels[c.exe] = {best_config: "best", starts["seed"]: "seed", starts["default"]: "default"}[job.config]
        return c
    monkeypatch.setattr(ctarget, "compile_variant", compile_variant)
    monkeypatch.setattr(ctarget, "time_variant", lambda ref, bound, compiled: Measurement(
        compiled.config, (program_ms[labels[compiled.exe]] / 1e3,)))
    runner = CRunner(t.program, FAST)
    try:
        runner.reference()
        seed = Measurement(starts["seed"], (3e-3,))
        best = Measurement(best_config, (1e-3,))
        default = Measurement(starts["default"], (2e-3,))
        return best, default, t.confirm_best(runner, seed, best, space.names, {"seed": seed, "default": default}, 3)
    finally:
        runner.close()


def test_a_tuned_gain_that_does_not_hold_in_the_program_falls_back_to_the_fastest_of_seed_and_default(monkeypatch):
    best, default, (info, warnings, kept) = _confirm(monkeypatch, {"best": 2.5, "seed": 3.0, "default": 2.0})
    assert kept is default and info["kept"] == "default" and not info["holds"]
    assert info["search_gain"] == pytest.approx(3.0) and info["program_gain"] == pytest.approx(1.2)
    assert info["median_ms"] == {"best": 2.5, "seed": 3.0, "default": 2.0} and len(info["program_ms"]["best"]) == 3
    assert len(warnings) == 1 and "the default is kept" in warnings[0]


def test_a_tuned_gain_that_holds_in_the_program_keeps_the_best(monkeypatch):
    best, _, (info, warnings, kept) = _confirm(monkeypatch, {"best": 1.0, "seed": 3.0, "default": 2.0})
    assert kept is best and info["holds"] and not warnings


def test_the_re_run_can_build_the_programs_at_the_size_the_user_runs(tmp_path, monkeypatch):
    """tune --confirm-define: tuned at a small size, the best and the seed are re-run at the user's size."""
    from polytune.measure.c import CRunner
    from polytune.targets import c as ctarget
    src = tmp_path / "k.c"
    src.write_text("#ifndef N\n#define N 16\n#endif\ndouble A[N][N], B[N][N];\nint main(void) {\n"
                   "  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) B[i][j] = i - j;\n#pragma scop\n"
                   "  for (int i = 1; i < N; i++)\n    for (int j = 1; j < N; j++)\n"
                   "      A[i][j] = B[i][j] + B[j][i] * 0.5;\n#pragma endscop\n  return A[3][2] > 1e9;\n}\n")
    t = make_target(analyze(str(src)), TuneOptions(), FAST)
    space = t.space()
    built = []
    real = ctarget.compile_variant
    monkeypatch.setattr(ctarget, "compile_variant", lambda job, program, source=None: built.append(
        (job.build.defines, program.defines)) or real(job, program, source=source))
    runner = CRunner(t.program, FAST)
    try:
        runner.reference()
        seed, best = Measurement(t.seed(space), (2e-3,)), Measurement((8, 16), (1e-3,))
        info, warnings, kept = t.confirm_best(runner, seed, best, space.names, {}, 2, ("N=40",))
    finally:
        runner.close()
    assert len(built) >= 2 and set(built) == {(("N=40",), ("N=40",))}  # (optimize's default too, if it differs)
    assert info["defines"] == ["N=40"] and set(info["median_ms"]) >= {"best", "seed"}
    assert kept in (best, seed) and info["kept"] in ("best", "seed")


def test_tile_only_tuning_says_when_optimize_s_default_is_faster(monkeypatch):
    """gramschmidt's case in the tile-only space: Pluto's tiles tuned, the model's schedule 10x faster. The
    default is no configuration of that space, so it cannot be kept; the re-run runs it and says so."""
    from polytune.measure.c import CRunner
    from polytune.targets import c as ctarget
    t = target_of("atax")
    space = t.space()
    seed_config, best_config = t.seed(space), (16, 64)
    ms = {seed_config: 3.0, best_config: 2.0, (): 0.5}
    monkeypatch.setattr(ctarget, "time_variant", lambda ref, bound, compiled: Measurement(
        compiled.config, (ms[tuple(compiled.config)] / 1e3,)))
    runner = CRunner(t.program, FAST)
    try:
        runner.reference()
        seed, best = Measurement(seed_config, (3e-3,)), Measurement(best_config, (2e-3,))
        info, warnings, kept = t.confirm_best(runner, seed, best, space.names, {}, 2)
    finally:
        runner.close()
    assert kept is best and info["kept"] == "best" and info["default_faster"]
    assert info["median_ms"] == {"best": 2.0, "seed": 3.0, "default": 0.5}
    assert len(warnings) == 1 and "optimize's default is faster" in warnings[0]
