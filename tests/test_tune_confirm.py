"""The re-run after the search (CTarget.confirm_best): it runs the executables the search built instead of
compiling them again, compiles the others on the search's pool, and stops its rounds once the verdict is
clear; a program's other sources are compiled once per tune."""
from __future__ import annotations

import dataclasses
import itertools

import pytest
from conftest import synthetic_times, write_matmul

from polytune.measure import build as build_mod
from polytune.measure.build import Build
from polytune.measure.c import BuildConfig, Compiled, CRunner
from polytune.measure.kept import KeptBuilds
from polytune.measure.measurement import ErrorKind, Measurement
from polytune.pipeline import analyze
from polytune.targets import c as ctarget
from polytune.targets.c import clear_verdict
from polytune.tune import TuneOptions, make_target, summary, tune

pytestmark = pytest.mark.usefixtures("tiled_as_any_band")  # (conftest)

FAST = BuildConfig(cflags=("-O1",), runs=2, threads=1, prune_factor=1e9)


@pytest.fixture
def kernel(tmp_path):
    return write_matmul(tmp_path)


def built_in_driver(monkeypatch) -> list[tuple]:
    """The configurations the re-run compiles in this process (the search's own compiles are not counted)."""
    calls: list[tuple] = []
    real = ctarget.compile_variant
    monkeypatch.setattr(ctarget, "compile_variant",
                        lambda job, program, source=None: calls.append(job.config) or real(job, program, source=source))
    return calls


def test_the_re_run_runs_the_search_s_executables_and_compiles_only_optimize_s_default(kernel, monkeypatch):
    synthetic_times(monkeypatch)
    calls = built_in_driver(monkeypatch)
    res = tune(kernel, TuneOptions(cache=None, alpha=None, max_evals=4, jobs=1, confirm_runs=5), FAST)
    pg = res.report.program_gain
    assert res.search.best.config != res.search.seed.config and {"best", "seed"} <= set(pg["median_ms"])
    assert calls in ([], [()])  # the default variant (no configuration of the tile-only space) at most
    assert set(pg["compiled"]) <= {"default"}
    # every run of the best beats every run of the seed, and the default is faster throughout: 3 rounds
    assert pg["runs"] == 3 and pg["max_runs"] == 5 and len(pg["program_ms"]["best"]) == 3
    assert "(3 of at most 5 runs each, in turn: the verdict was clear)" in summary(res)


def test_the_re_run_after_a_pooled_schedule_space_search_compiles_nothing(kernel, monkeypatch):
    """--space schedule: the best, the seed and optimize's default are all configurations the workers built;
    their executables come back with the timings and are run again as they are."""
    synthetic_times(monkeypatch)
    calls = built_in_driver(monkeypatch)
    res = tune(kernel, TuneOptions(cache=None, alpha=None, max_evals=5, jobs=2, space="schedule",
                                   confirm_runs=3), FAST)
    pg = res.report.program_gain
    assert pg is not None and "best" in pg["median_ms"] and len(pg["median_ms"]) >= 2
    assert calls == [] and pg["compiled"] == []


def test_a_pooled_tile_only_tune_builds_optimize_s_default_beside_the_search(kernel, monkeypatch):
    """The tile-only default is no configuration: the workers compile it while the search runs."""
    synthetic_times(monkeypatch)
    calls = built_in_driver(monkeypatch)
    res = tune(kernel, TuneOptions(cache=None, alpha=None, max_evals=4, jobs=2, confirm_runs=3), FAST)
    pg = res.report.program_gain
    assert {"best", "seed"} <= set(pg["median_ms"]) and calls == [] and pg["compiled"] == []


def test_the_re_run_at_the_user_s_size_compiles_every_program_on_the_pool(kernel, monkeypatch):
    """--confirm-define: nothing the search built is of that size; the programs are compiled on the workers
    at once (none in this process)."""
    synthetic_times(monkeypatch)
    calls = built_in_driver(monkeypatch)
    res = tune(kernel, TuneOptions(cache=None, alpha=None, max_evals=4, jobs=2, confirm_runs=2,
                                   confirm_defines=("N=30",)), FAST)
    pg = res.report.program_gain
    assert pg["defines"] == ["N=30"] and "error" not in pg
    assert calls == [] and set(pg["compiled"]) == set(pg["median_ms"]) >= {"best", "seed"}


def test_a_re_run_program_with_the_text_of_another_is_not_compiled_again(kernel, monkeypatch):
    """optimize's default is often the seed's program (the model keeps Pluto's schedule, tile 32): its text is
    generated and compared before gcc runs."""
    calls = built_in_driver(monkeypatch)
    t = make_target(analyze(kernel), TuneOptions(), FAST)
    space = t.space()
    seed_config = t.seed(space)
    same = t.default_variant().text == t.variant(space.names, seed_config).text
    runner = CRunner(t.program, FAST)
    try:
        runner.reference()
        seed, best = Measurement(seed_config, (3e-3,)), Measurement((8, 16, 4), (2e-3,))
        info, _, _ = t.confirm_best(runner, seed, best, space.names, {}, 1)
    finally:
        runner.close()
    assert sorted(calls) == sorted([(8, 16, 4), seed_config] + ([] if same else [()]))
    assert ("default" in info["median_ms"]) == (not same)


def _confirm_with(kernel: str, monkeypatch, ms: dict[tuple, list[float]], runs: int):
    """confirm_best on the tile-only space with each program's successive times (ms) given by its config."""
    t = make_target(analyze(kernel), TuneOptions(), FAST)
    space = t.space()
    seed_config, best_config = (16, 32, 32), (8, 16, 4)  # optimize's default: the tile-32 program
    rounds = {c: itertools.cycle(v) for c, v in ms.items()}
    monkeypatch.setattr(ctarget, "time_variant", lambda ref, bound, compiled: Measurement(
        compiled.config, (next(rounds[tuple(compiled.config)]) / 1e3,)))
    runner = CRunner(t.program, FAST)
    try:
        runner.reference()
        seed, best = Measurement(seed_config, (3e-3,)), Measurement(best_config, (2e-3,))
        return t.confirm_best(runner, seed, best, space.names, {}, runs)
    finally:
        runner.close()


def test_the_rounds_stop_at_3_when_every_run_of_the_kept_one_beats_the_others(kernel, monkeypatch):
    times = {(8, 16, 4): [1.0, 1.1, 0.9], (16, 32, 32): [2.0, 2.2, 1.9], (): [3.0]}
    info, warnings, kept = _confirm_with(kernel, monkeypatch, times, runs=7)
    assert info["runs"] == 3 and info["max_runs"] == 7 and info["kept"] == "best" and not warnings
    assert set(info["median_ms"]) == {"best", "seed", "default"}


def test_the_rounds_go_to_the_cap_while_the_runs_overlap(kernel, monkeypatch):
    times = {(8, 16, 4): [1.0, 2.5], (16, 32, 32): [2.0, 2.2], (): [3.0]}
    info, _, _ = _confirm_with(kernel, monkeypatch, times, runs=6)
    assert info["runs"] == 6 and len(info["program_ms"]["seed"]) == 6


def test_the_rounds_go_on_while_optimize_s_default_overlaps_the_kept_one(kernel, monkeypatch):
    """The tile-only default is only compared (a warning where faster): its side must be clear too."""
    info, _, _ = _confirm_with(kernel, monkeypatch, {(8, 16, 4): [1.0], (16, 32, 32): [2.0], (): [0.9, 1.2]}, runs=5)
    assert info["runs"] == 5 and set(info["median_ms"]) == {"best", "seed", "default"}


def test_clear_verdict_is_complete_separation_of_the_kept_one():
    assert clear_verdict({"best": [1, 2, 3], "seed": [4, 5, 6]})
    assert not clear_verdict({"best": [1, 2, 5], "seed": [4, 5, 6]})  # 5 is not below 4
    assert clear_verdict({"best": [4, 5, 6], "seed": [1, 2, 3]})  # the seed kept, clearly
    assert not clear_verdict({"best": [1, 2, 3], "seed": [3, 5, 6]})  # ties are no separation
    assert clear_verdict({"best": [2, 2, 2], "seed": [3, 3, 3]}, {"default": [1, 1, 1]})  # default wholly faster
    assert clear_verdict({"best": [2, 2, 2], "seed": [3, 3, 3]}, {"default": [9, 9, 9]})  # or wholly slower
    assert not clear_verdict({"best": [2, 2, 2], "seed": [3, 3, 3]}, {"default": [1, 2.5, 1]})
    assert not clear_verdict({"best": [], "seed": [3]})


def test_kept_builds_keep_verified_ones_and_drop_the_slowest_over_the_budget():
    kept = KeptBuilds(budget=25)
    exe = Compiled((), b"x" * 10, 0.1)
    kept.offer("a", Measurement((1,), (3.0,)), exe)
    kept.offer("b", Measurement((2,), (1.0,)), exe)
    kept.offer("bad", Measurement((3,), error=ErrorKind.WRONG_ANSWER), exe)
    kept.offer("pruned", Measurement((4,), (9.0,), ErrorKind.PRUNED), exe)
    assert kept.get("a") is exe and kept.get("b") is exe and kept.get("bad") is None and kept.get("pruned") is None
    kept.offer("c", Measurement((5,), (2.0,)), exe)  # 30 bytes: the slowest (a) goes
    assert kept.get("a") is None and kept.get("b") is exe and kept.get("c") is exe and kept.bytes == 20


OTHER = "double weight(int i) { return (i % 3) * 0.5; }\n"
MAIN = """#include <stdio.h>
#define N 20
double weight(int i);
double A[N][N];
int main(void) {
  int i, j;
  double w[N];
  for (i = 0; i < N; i++) w[i] = weight(i);
#pragma scop
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      A[i][j] = w[i] * j + w[j];
#pragma endscop
  printf("%f\\n", A[3][4]);
  return 0;
}
"""


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_second_source_is_compiled_once_per_tune(tmp_path, monkeypatch, jobs):
    """The other source's object is built once (by the driver; compile workers get its bytes) and linked into
    the original, every candidate and the re-run's programs."""
    (tmp_path / "k.c").write_text(MAIN)
    (tmp_path / "w.c").write_text(OTHER)
    calls = []
    real = build_mod.subprocess.run
    monkeypatch.setattr(build_mod.subprocess, "run", lambda argv, *a, **kw: calls.append(argv) or real(argv, *a, **kw))
    build = dataclasses.replace(FAST, program=Build.from_files([str(tmp_path / "w.c")]))
    res = tune(str(tmp_path / "k.c"), TuneOptions(cache=None, alpha=None, max_evals=3, jobs=jobs), build)
    assert res.search.best is not None and res.search.best.ok
    assert len([c for c in calls if "-c" in c and str(tmp_path / "w.c") in c]) == 1
