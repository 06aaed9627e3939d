"""The tuner end to end: real builds and runs, injected faults, the persistent cache."""
from __future__ import annotations

import dataclasses
import json

import pytest
from conftest import write_matmul

from polytune.cli import main
from polytune.measure import ErrorKind
from polytune.measure import c as measure
from polytune.measure.c import BuildConfig
from polytune.tune import TuneOptions, tune

FAST = BuildConfig(cflags=("-O1",), runs=2, threads=1)


pytestmark = pytest.mark.usefixtures("tiled_as_any_band")  # (conftest)


@pytest.fixture
def kernel(tmp_path):
    return write_matmul(tmp_path)


def test_cli_tune_end_to_end(kernel, tmp_path):
    out, rep, ts = tmp_path / "best.c", tmp_path / "r.json", tmp_path / "tile.sizes"
    rc = main(["tune", kernel, "-o", str(out), "--report", str(rep), "--tile-sizes-out", str(ts),
               "--no-cache", "--runs", "2", "--cflags=-O1", "--max-evals", "8", "--threads", "1"])
    assert rc == 0
    r = json.loads(rep.read_text())
    assert r["evals"] <= 8 and r["evaluations"][0]["config"] == [32, 32, 32]
    assert r["best"]["median"] > 0 and r["original"]["median"] > 0
    assert all(e["error"] is None or e["error"] in {k.value for k in ErrorKind} for e in r["evaluations"])
    sizes = [int(x) for x in ts.read_text().split()]
    assert sizes == r["best"]["config"]
    assert "#pragma omp parallel for" in out.read_text() or "for (int" in out.read_text()


def _faulty(monkeypatch):
    """Inject broken code for some tile sizes: compile error, crash, hang, wrong answer."""
    real = measure.generate_regions

    def fake(program, opts, tiled=None):
        codes = real(program, opts, tiled)
        first = opts.tile_sizes[0] if opts.tile_sizes else 32
        if first == 16:
            return ["  this is not C;\n"]
        if first == 64:
            return ["  { __builtin_trap(); }\n"]
        if first == 8:
            return ["  { volatile int spin = 1; while (spin) {} }\n"]
        if first == 4:
            return [codes[0] + "  C[0][0] += 1.0;\n"]
        return codes

    monkeypatch.setattr(measure, "generate_regions", fake)


def test_faults_are_recorded_and_search_finishes(kernel, monkeypatch):
    _faulty(monkeypatch)
    build = BuildConfig(cflags=("-O1",), runs=2, threads=1, timeout_factor=2.0, timeout_slack=1.0)
    res = tune(kernel, TuneOptions(strategy="exhaustive", domains=("4,8,16,32,64", "32", "32"), cache=None,
                                   alpha=None, jobs=1), build)
    errors = {m.config[0]: m.measurement.error for m in res.search.evaluations for m in [m]}
    assert errors[16] == ErrorKind.COMPILE
    assert errors[64] == ErrorKind.RUNTIME
    assert errors[8] == ErrorKind.TIMEOUT
    assert errors[4] == ErrorKind.WRONG_ANSWER
    assert errors[32] is None
    assert res.best_config == (32, 32, 32)


def test_killed_tune_resumes_from_cache(kernel, tmp_path, monkeypatch):
    cache = str(tmp_path / "cache.sqlite")
    # (confirm_runs=0: the best re-run against the seed would be a fresh, noisy measurement, not a replay)
    opts = TuneOptions(strategy="exhaustive", domains=("8,16,32", "16,32", "32"), cache=cache, alpha=None,
                       confirm_runs=0, jobs=1)
    calls = []
    real = measure.CRunner.measure

    def counting(self, variant, bound=None):
        calls.append(variant.config)
        if len(calls) == 4 and crash[0]:
            raise KeyboardInterrupt  # the user kills the run after three finished measurements
        return real(self, variant, bound)

    monkeypatch.setattr(measure.CRunner, "measure", counting)
    crash = [True]
    # no pruning: a pruned result is not cached, and on a loaded machine one of the three could be pruned
    build = dataclasses.replace(FAST, prune_factor=1e9)
    with pytest.raises(KeyboardInterrupt):
        tune(kernel, opts, build)
    assert len(calls) == 4
    crash[0] = False
    calls.clear()
    res = tune(kernel, opts, build)
    assert res.search.evals == 6
    assert len(calls) == 3  # the three finished ones came from the cache, none was repeated
    assert sum(1 for r in res.search.evaluations if r.measurement.cached) == 3
    calls.clear()
    again = tune(kernel, opts, build)  # a repeated tune replays at once
    assert calls == [] and again.best_config == res.best_config


def test_editing_the_kernel_invalidates_the_cache(kernel, tmp_path):
    cache = str(tmp_path / "cache.sqlite")
    opts = TuneOptions(strategy="exhaustive", domains=("16,32", "32", "32"), cache=cache, alpha=None, jobs=1)
    tune(kernel, opts, FAST)
    with open(kernel) as f:
        text = f.read()
    with open(kernel, "w") as f:
        f.write(text.replace("A[i][k] * B[k][j]", "A[i][k] * B[k][j] * 0.5"))
    res = tune(kernel, opts, FAST)
    assert not any(r.measurement.cached for r in res.search.evaluations)


def test_seeds(kernel):
    from polytune.pipeline import OptimizeOptions, analyze
    from polytune.targets.c import model_seed
    from polytune.tune import make_target
    program = analyze(kernel)
    target = make_target(program, TuneOptions())
    space = target.space()
    assert len(space.params) == 3 and space.params[0].values[-1] == 16  # extent 24 -> pow2 up to 16
    assert target.seed(space, "origin") == (1, 1, 1)
    assert target.seed(space, "pluto") == (32, 32, 32)
    m = model_seed(program, OptimizeOptions(schedule="pluto"))  # (the bands of the space: the tune's schedule)
    assert len(m) == 3 and all(v >= 1 for v in m)


def test_result_comparison():
    import numpy as np

    from polytune.measure.c import compare_dumps
    ref = np.array([1.0, 2.0, 3.0e-3, np.nan])
    assert compare_dumps(ref, ref.copy(), 0.0) == ""
    ulp = ref.copy()
    ulp[2] = np.nextafter(ulp[2], 1.0)
    assert compare_dumps(ref, ulp, 0.0) != ""  # bit-identical demanded
    assert compare_dumps(ref, ulp, 1e-9) == ""  # one ulp (FMA contraction) tolerated
    wrong = ref.copy()
    wrong[1] += 1e-6
    assert "1 of 4 values differ" in compare_dumps(ref, wrong, 1e-9)
    assert compare_dumps(ref, ref[:3], 1e-9).startswith("wrote 3 values")


def test_cli_tune_outer_schedule(tmp_path):
    """--schedule outer tunes the tile sizes of the outer-parallel schedule (jacobi-2d: two space bands
    under the sequential time loop) and writes that schedule's code."""
    import os

    from conftest import KERNELS
    out, rep = tmp_path / "best.c", tmp_path / "r.json"
    assert main(["tune", os.path.join(KERNELS, "jacobi-2d.c"), "-D", "N=30", "-D", "TSTEPS=4", "--schedule",
                 "outer", "-o", str(out), "--report", str(rep), "--no-cache", "--runs", "1", "--cflags=-O1",
                 "--max-evals", "3", "--threads", "1"]) == 0
    r = json.loads(rep.read_text())
    assert len(r["evaluations"][0]["config"]) == 4 and r["best"]["median"] > 0  # 2 bands x 2 members
    assert "#pragma omp parallel for" in out.read_text()


def test_cli_tune_auto_schedule(tmp_path):
    """--schedule auto measures both schedules' tile-32 seeds and tunes the faster one."""
    import os

    from conftest import KERNELS
    rep = tmp_path / "r.json"
    assert main(["tune", os.path.join(KERNELS, "seidel-2d.c"), "-D", "N=40", "-D", "TSTEPS=4", "--schedule",
                 "auto", "--report", str(rep), "--no-cache", "--runs", "1", "--cflags=-O1", "--max-evals", "2",
                 "--threads", "1", "-o", str(tmp_path / "best.c")]) == 0
    r = json.loads(rep.read_text())
    choice = r["schedule_choice"]
    assert set(choice["seeds"]) == {"pluto", "outer"} and r["schedule"] == choice["chosen"]
    medians = {k: v["median"] for k, v in choice["seeds"].items()}
    assert medians[choice["chosen"]] == min(medians.values())


def test_cli_tune_unroll_jam(kernel, tmp_path):
    """--unroll-jam reaches the variants the tuner measures and the program it writes: with the default
    the best matmul has its k loop jammed by 4 into j, with 0 it has one statement per point."""
    for flags, copies in (([], 4), (["--unroll-jam", "0"], 1)):
        out = tmp_path / "best.c"
        assert main(["tune", kernel, "-o", str(out), "--no-cache", "--runs", "1", "--cflags=-O1",
                     "--max-evals", "1", "--threads", "1", *flags]) == 0
        text = out.read_text()
        assert text.count("C[c3][c5] += ") == copies, text


def test_region_clock_resolves_nanoseconds(tmp_path):
    """A region of a few instructions measures above zero and below 200 ns: the clock counts from the
    first region, not from the epoch (whose seconds in a double resolve only 2.4e-7 s, so tiny regions
    measured 0 and the speedup over them divided by zero)."""
    from polytune.pipeline import analyze
    src = tmp_path / "tiny.c"
    src.write_text("#include <stdio.h>\nint main(void) {\n  int i;\n  double a[4];\n#pragma scop\n"
                   "  for (i = 0; i < 4; i++)\n    a[i] = i;\n#pragma endscop\n"
                   "  printf(\"%g\\n\", a[3]);\n  return 0;\n}\n")
    h = measure.CRunner(analyze(str(src)), BuildConfig(cflags=("-O2",), runs=9))
    try:
        times = h.reference().times
    finally:
        h.close()
    assert 0 < min(times) < 2e-7, times


def test_a_tunes_progress_may_be_none_a_plain_callable_or_a_printer():
    import io

    from polytune.tune import ProgressPrinter, as_progress
    seen: list = []
    plain = as_progress(seen.append)  # hears of each evaluation, nothing else
    plain("rec")
    plain.note("a note")
    plain.label(("i",))
    assert seen == ["rec"] and plain.worker is None
    quiet = as_progress(None)
    quiet("rec")
    quiet.note("a note")
    assert quiet.worker is None  # the pools then send no worker events
    printer = ProgressPrinter(io.StringIO())
    assert as_progress(printer) is printer and printer.worker is not None


def _printed_for(space, level: int) -> str:
    import io

    from polytune.measure import Measurement
    from polytune.search.evaluator import EvalRecord
    from polytune.tune import ProgressPrinter
    printer = ProgressPrinter(io.StringIO())
    printer.level = level
    printer.label(tuple(p.name for p in space.params), space)
    config = tuple(p.values[0] for p in space.params)
    printer(EvalRecord(1, config, Measurement(config, (0.5,)), "seed", 0, 0.1))
    return printer.stream.getvalue()


def test_the_schedule_legend_is_printed_for_schedule_coordinates_not_for_a_contractions_block_choices():
    from polytune.search.space import Parameter, SearchSpace
    from polytune.tune import LEGEND, LEGEND_SCHEDULE
    tiles = Parameter("s0b0t0", (16, 32))
    blocks = SearchSpace((tiles, Parameter.categorical("blocked", ("on", "off"))))
    schedule = SearchSpace((tiles, Parameter.categorical("scheduler", ("pluto", "outer"))))
    assert _printed_for(blocks, 1).startswith(LEGEND) and LEGEND_SCHEDULE not in _printed_for(blocks, 1)
    assert LEGEND_SCHEDULE in _printed_for(schedule, 1)


def test_a_quiet_progress_printer_prints_neither_progress_lines_nor_the_legend():
    from polytune.search.space import Parameter, SearchSpace
    assert _printed_for(SearchSpace((Parameter.categorical("scheduler", ("pluto", "outer")),)), 0) == ""


@pytest.mark.parametrize("strategy, search, threshold", [
    ("hill", {"threshold": 0.1}, 0.1), ("coordesc", {"eps": 0.2}, 0.2), ("exhaustive", {"eps": 0.2}, 0.0)])
def test_the_report_records_the_margin_of_the_move_test_the_search_ran(kernel, strategy, search, threshold):
    """(The summary re-judges the candidates with the report's alpha and threshold: a hill climb with a margin
    was recorded with none, as only coordesc's eps was looked for by name.)"""
    from polytune.search import SearchOptions
    opts = TuneOptions(strategy=strategy, domains=("8,16", "16", "16"), cache=None, max_evals=2,
                       search=SearchOptions(alpha=0.05, **search))
    assert tune(kernel, opts, FAST).report.threshold == threshold
