"""`polytune bench`, the report generator and the plots.

The report and the figures are built from recorded measurements (tests/data/replay/, made by its
record.py) and replayed searches: nothing here is timed. Figures are checked for their series (bars,
images, arrows, lines, labels), not for pixels. The end-to-end tests run real (tiny) programs once.
"""
from __future__ import annotations

import json
import os
import shutil

import pytest
from conftest import ROOT
from matplotlib.image import AxesImage
from matplotlib.text import Annotation

from polytune.cli import main
from polytune.errors import UsageError
from polytune.search import Parameter, ReplayEvaluator, SearchOptions, SearchSpace, run_search
from polytune.search.replay import measurement_from_record
from polytune.study import bench, plots, report

REPLAY = os.path.join(ROOT, "tests", "data", "replay")
BENCH_JSON = os.path.join(REPLAY, "bench.json")
TUNE_JSON = os.path.join(REPLAY, "tune_gemm.json")
GPU_JSON = os.path.join(ROOT, "benchmarks", "results", "gpu_h200_cuda_a.json")

TIMED = """#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <time.h>
#ifndef N
#define N 24
#endif
double A[N][N], B[N][N], C[N][N];
int main(void) {
  struct timespec t0, t1;
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) { A[i][j] = (i * j % 7) / 7.0; B[i][j] = (i + j) % 5; }
  clock_gettime(CLOCK_MONOTONIC, &t0);
#pragma scop
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      C[i][j] = A[j][i] + 2.0 * B[i][j];
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double cs = 0;
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) cs += C[i][j] * (1 + (i + j) % 3);
  printf("time: %.9f\\nchecksum: %.10e\\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec), cs);
  return 0;
}
"""


@pytest.fixture(scope="module")
def recorded():
    return report.load_sources([BENCH_JSON, TUNE_JSON, GPU_JSON])


@pytest.fixture(scope="module")
def built(recorded, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    return report.build_report(recorded, str(out)), out


def footer(fig) -> str:
    (text,) = fig.findobj(lambda a: a.get_gid() == "stamp")
    return text.get_text().replace("\n", " ")


def bars(fig) -> list[int]:
    """Bars per series of the figure's first axes."""
    return [len(c) for c in fig.axes[0].containers]


# ---- the report on recorded data ----------------------------------------------------------------------
def test_sources_are_recognized(recorded):
    names = [k["name"] for k in report.all_kernels(recorded.benches)]
    assert names == ["2d_bidirec", "gemm", "gemm#2"]  # the tune report is the second gemm
    assert len(recorded.gpu) == 7
    with pytest.raises(UsageError):
        report.load_sources([os.path.join(REPLAY, "record.py")])


def test_every_research_question_has_a_section(built):
    rep, out = built
    assert [s.key for s in rep.sections] == ["rq3", "rq1", "rq2", "rq4", "rq5", "rq6", "rq7", "surfaces"]
    for path in rep.figure_paths:
        assert os.path.getsize(path) > 1000 and open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    assert sorted(os.path.basename(p) for p in rep.figure_paths) == [
        "rq1_speedup_over_seed.png", "rq3_quality.png", "rq4_search_cost.png", "rq6_next_candidate.png",
        "rq7_gpu_blocks.png", "surface_2d_bidirec.png"]
    md = rep.markdown("t", fig_prefix="figures/")
    assert "![speedup over gcc -O3 per kernel](figures/rq3_quality.png)" in md
    assert md.count("\n## ") == len(rep.sections)


def test_tables_hold_the_recorded_numbers(built, recorded):
    rep, _ = built
    data = json.load(open(BENCH_JSON))
    bid = data["kernels"][0]
    rq1 = rep.section("rq1").tables[0]
    assert [r[0] for r in rq1.rows] == ["2d_bidirec", "gemm", "gemm#2", "geometric mean"]
    seed, hill = bid["variants"]["seed"]["median"], bid["variants"]["hill"]["median"]
    assert rq1.rows[0][5] == f"{seed / hill:.2f}x"
    assert rq1.rows[2][5] == "-"  # a tune report has no session
    rq4 = rep.section("rq4").tables[0]
    assert [r[1] for r in rq4.rows] == ["hill", "exhaustive", "random:n10"]
    assert rq4.rows[1][5] == rq4.rows[1][6] == "1.000" and rq4.rows[1][7] == str(bid["grid_size"])
    assert [r[1] for r in rep.section("rq5").tables[0].rows] == ["pluto", "origin", "model"]
    assert [r[1] for r in rep.section("rq6").tables[0].rows] == ["hill", "hill:first", "hill:d2", "hill:hop"]
    rq7 = rep.section("rq7").tables[0]
    assert len(rq7.rows) == 8 and rq7.rows[0][0] == "matmul_vanilla" and "(32, 8)" in rq7.rows[0][2]
    quality = rep.section("rq3").tables[0]
    assert quality.header[:5] == ("kernel", "gcc -O3", "clang -O3", "Polly", "seed (tile 32)")
    assert quality.rows[-1][0] == "geometric mean" and quality.rows[0][1] == "1.00x"
    assert "**" not in quality.to_text() and "**" in quality.to_markdown()
    overhead = rep.section("rq2").tables[0]
    t = bid["tuning"]["hill"]
    assert overhead.rows[0][1:5] == (f"{t['search_time']:.1f}", report.fs(t["seed_eval_s"]),
                                     f"{t['search_time'] / t['seed_eval_s']:.1f}x", str(t["evals"]))


def test_findings_state_losses(built):
    rep, _ = built
    text = " ".join(f for s in rep.sections for f in s.findings)
    assert "faster than gcc -O3 on" in text
    assert "slower" in text  # the recorded data has losses; they are spelled out


def test_quality_bars(recorded):
    kernels = [k for k in report.all_kernels(recorded.benches) if k["variants"]]
    series = {lb: [k["variants"][lb]["speedup_over_gcc"] for k in kernels] for lb in ("gcc", "polly", "hill")}
    fig = plots.bar_chart([k["name"] for k in kernels], series, title="q", ylabel="x", stamp=None)
    assert bars(fig) == [2, 2, 2]
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["gcc", "polly", "hill"]


def test_every_figure_is_stamped(recorded):
    stamp = report.stamp_of(recorded.benches[0])
    assert stamp.command == "python tests/data/replay/record.py" and "cores" in stamp.machine
    fig = report.surface_figure(report.all_kernels(recorded.benches)[0], stamp)
    assert stamp.command in footer(fig) and stamp.date[:10] in footer(fig)


def test_surface_heatmap_series(recorded):
    kernel = report.all_kernels(recorded.benches)[0]
    fig = report.surface_figure(kernel, None)
    ax = fig.axes[0]
    (image,) = [c for c in ax.get_children() if isinstance(c, AxesImage)]
    xs, ys = (sorted({*p["values"], *(s["config"][i] for t in kernel["tuning"].values() if t["label"]
                                       .startswith("hill") for s in t["trajectory"])})
              for i, p in enumerate(kernel["space"]))
    assert image.get_array().shape == (len(ys), len(xs))
    moves = sum(len(t["trajectory"]) - 1 for lb, t in kernel["tuning"].items() if lb.startswith("hill"))
    assert len([c for c in ax.get_children() if isinstance(c, Annotation)]) == moves
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(lb.startswith("seed (32, 32)") for lb in labels) and any(lb.startswith("best") for lb in labels)
    assert ax.get_xlabel() == "s0b0t0" and ax.get_ylabel() == "s0b0t1"


def test_gpu_bars(recorded):
    _, data = report.rq7(recorded.gpu)
    names = list(data)
    fig = plots.bar_chart(names, {lb: [data[n][lb] for n in names] for _, lb in report.GPU_LABELS},
                          title="g", ylabel="x", stamp=None)
    assert bars(fig) == [7, 7, 7]


def test_trajectory_of_a_three_parameter_tune():
    rec = json.load(open(TUNE_JSON))
    fig = plots.tune_figure(rec)
    ax = fig.axes[0]
    assert not [c for c in ax.get_children() if isinstance(c, AxesImage)]
    assert len(ax.collections[0].get_offsets()) + sum(len(c.get_offsets()) for c in ax.collections[1:]) \
        == len(rec["evaluations"])
    assert [ln.get_label() for ln in ax.get_lines()] == ["incumbent"]
    assert "polytune tune benchmarks/pluto/gemm.c -DN=200" in footer(fig)


def test_replayed_hill_path_on_the_recorded_surface():
    """Hill climbing replayed on the recorded exhaustive grid: its path is what the heatmap draws."""
    kernel = json.load(open(BENCH_JSON))["kernels"][0]
    grid = kernel["tuning"]["exhaustive"]["evaluations"]
    replay = ReplayEvaluator.from_measurements(measurement_from_record(e) for e in grid)
    space = SearchSpace(tuple(Parameter(p["name"], tuple(p["values"])) for p in kernel["space"]))
    res = run_search(space, replay, "hill", (1, 1), SearchOptions(alpha=None))
    measured = {r.config: r.measurement.value for r in res.evaluations}
    assert res.best.value == min(measured.values()) and len(res.trajectory) >= 2
    rep = {"file": "2d_bidirec.c", "space": kernel["space"], "strategy": "hill", "machine": "m|x|cpu|2",
           "evaluations": [{"config": list(r.config), "median": r.measurement.value, "times": list(r.measurement.times),
                            "error": None} for r in res.evaluations],
           "trajectory": [{"config": list(s.config), "median": s.measurement.value, "evals": s.evals}
                          for s in res.trajectory],
           "seed": {"config": [1, 1]}, "best": {"config": list(res.best.config)}}
    fig = plots.tune_figure(rep, plots.Stamp("m", "d", "c"))
    ax = fig.axes[0]
    assert len([c for c in ax.get_children() if isinstance(c, Annotation)]) == len(res.trajectory) - 1
    assert all(replay.calls[c] == 1 for c in replay.calls)


# ---- bench --------------------------------------------------------------------------------------------
def test_strategy_specs():
    s = bench.parse_strategy("hill:origin:d2:first:hop")
    assert (s.strategy, s.seed, s.degree, s.fit, s.shortest_hop, s.label) == ("hill", "origin", 2, "first", True,
                                                                               "hill:origin:d2:first:hop")
    assert bench.parse_strategy("random:n20").samples == 20
    assert bench.parse_strategy("hill:sweep").sweep and not s.sweep
    for bad in ("greedy", "hill:d4", "hill:fast", "random:n0"):
        with pytest.raises(UsageError):
            bench.parse_strategy(bad)
    with pytest.raises(UsageError):
        bench.parse_strategies("hill,hill")


def test_kernel_files(tmp_path):
    (tmp_path / "b.c").write_text("")
    (tmp_path / "a.c").write_text("")
    (tmp_path / "notes.md").write_text("")
    assert [os.path.basename(p) for p in bench.kernel_files([str(tmp_path)])] == ["a.c", "b.c"]
    with pytest.raises(UsageError):
        bench.kernel_files([str(tmp_path / "missing.c")])


@pytest.fixture
def timed_kernel(tmp_path):
    p = tmp_path / "transpose.c"
    p.write_text(TIMED)
    return str(p)


def test_bench_end_to_end_with_a_missing_compiler(timed_kernel, tmp_path, capsys):
    out = tmp_path / "out"
    rc = main(["bench", timed_kernel, "--runs", "1", "--threads", "1", "--max-evals", "3", "--clang",
               "no-such-clang-99", "--report", str(out)])
    assert rc == 0
    cap = capsys.readouterr()
    note = "note: clang not found (tried no-such-clang-99): skipped clang and Polly"
    assert note in cap.out and "Traceback" not in cap.err
    assert "Speedup over gcc -O3" in cap.out and "geometric mean" in cap.out
    res = json.load(open(out / "results.json"))
    k = res["kernels"][0]
    assert set(k["variants"]) == {"gcc", "seed", "hill"} and k["tuning"]["hill"]["evals"] <= 3
    assert k["variants"]["gcc"]["speedup_over_gcc"] == 1.0 and k["variants"]["seed"]["checksum_ok"] is True
    assert len(k["variants"]["seed"]["times"]) == 1
    assert any(note in n for n in res["notes"])
    assert note in (out / "summary.md").read_text()
    rows = (out / "results.csv").read_text().splitlines()
    assert rows[0].startswith("kernel,variant,median_s") and len(rows) == 4
    assert (out / "rq3_quality.png").exists() and (out / "surface_transpose.png").exists()


@pytest.mark.skipif(not any(shutil.which(c) for c in bench.CLANG_NAMES), reason="no clang installed")
def test_bench_with_clang_and_polly(timed_kernel, tmp_path, capsys):
    rc = main(["bench", timed_kernel, "--runs", "1", "--threads", "2", "--strategies", "hill", "--max-evals", "1",
               "--report", str(tmp_path)])
    assert rc == 0
    res = json.load(open(tmp_path / "results.json"))
    v = res["kernels"][0]["variants"]
    assert "clang" in v and v["clang"]["median"] is not None and v["clang"]["checksum_ok"]
    if "polly" in v:
        assert "-mllvm -polly" in v["polly"]["command"] and "-polly-parallel" in v["polly"]["command"]
        assert v["polly"]["median"] is not None
    else:
        assert any("Polly not available" in n for n in res["notes"])


def test_session_interleaves_and_survives_failures(tmp_path):
    ok = tmp_path / "ok.sh"
    ok.write_text("#!/bin/sh\necho time: 0.5\necho checksum: 1.0\n")
    bad = tmp_path / "bad.sh"
    bad.write_text("#!/bin/sh\nexit 3\n")
    for p in (ok, bad):
        p.chmod(0o755)
    builds = [bench.Build("a", "", str(ok)), bench.Build("b", "", str(bad)), bench.Build("c", "", None, "compile: x")]
    bench.run_session(builds, 3, 1, 10)
    assert builds[0].times == [0.5, 0.5, 0.5] and builds[0].checksum == "1.0"
    assert builds[1].error == "run: exit status 3" and builds[1].times == []
    assert bench.checksums_agree("1.0000000000e+00", "1.0000000001e+00") is True
    assert bench.checksums_agree("1.0e+00", "1.1e+00") is False


# ---- tune --plot ----------------------------------------------------------------------------------------
def test_tune_plot(timed_kernel, tmp_path, monkeypatch):
    figures = []
    real = plots.save
    monkeypatch.setattr(plots, "save", lambda fig, path: figures.append(fig) or real(fig, path))
    png, rep = tmp_path / "trajectory.png", tmp_path / "r.json"
    rc = main(["tune", timed_kernel, "--no-cache", "--runs", "2", "--threads", "1", "--max-evals", "4",
               "--domain", "8,16,32", "--seed", "16,16", "--plot", str(png), "--report", str(rep)])
    assert rc == 0
    evals = json.loads(rep.read_text())["evals"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (fig,) = figures
    ax = fig.axes[0]
    (image,) = [c for c in ax.get_children() if isinstance(c, AxesImage)]
    assert image.get_array().shape == (3, 3)
    assert "polytune tune" in footer(fig) and f"; {evals} evaluations" in ax.get_title()
    assert any(t.get_text() == "seed (16, 16)" for t in ax.get_legend().get_texts())


# ---- benchmarks/reproduce.py --from ----------------------------------------------------------------------
def test_reproduce_regenerates_the_document(tmp_path):
    import importlib.util
    spec = importlib.util.spec_from_file_location("reproduce", os.path.join(ROOT, "benchmarks", "reproduce.py"))
    reproduce = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reproduce)
    src = tmp_path / "recorded"
    src.mkdir()
    shutil.copy(BENCH_JSON, src / "results.json")
    doc, figs = tmp_path / "docs" / "REPRODUCTION.md", tmp_path / "docs" / "figures"
    cwd = os.getcwd()
    try:
        assert reproduce.main(["--from", str(src), "--doc", str(doc), "--figures", str(figs)]) == 0
    finally:
        os.chdir(cwd)
    text = doc.read_text()
    assert "| 2d_bidirec | -DN=512 -DTSTEPS=60 |" in text and "Kernel Tuner" in text
    assert "## 7. GPU thread blocks" in text and "![GPU block shapes](figures/rq7_gpu_blocks.png)" in text
    assert sorted(os.listdir(figs)) == ["rq1_speedup_over_seed.png", "rq3_quality.png", "rq4_search_cost.png",
                                        "rq6_next_candidate.png", "rq7_gpu_blocks.png", "surface_2d_bidirec.png"]


# ---- several tunes at once over the workers ----------------------------------------------------------------
def test_tunes_go_one_at_a_time_without_workers_and_asking_for_more_is_an_error():
    opts = bench.BenchOptions(jobs=1, tunes_at_once=None)
    assert bench.plan_tunes(opts, 5).at_once == 1
    with pytest.raises(UsageError, match="--jobs N"):
        bench.plan_tunes(bench.BenchOptions(jobs=1, tunes_at_once=3), 5)
    with pytest.raises(UsageError, match="at least 1"):
        bench.plan_tunes(bench.BenchOptions(jobs=4, tunes_at_once=0), 5)


def test_a_bad_tunes_at_once_is_one_line_and_exit_2_before_anything_else(timed_kernel, capsys):
    assert main(["bench", timed_kernel, "--tunes-at-once", "0", "--jobs", "2"]) == 2
    cap = capsys.readouterr()
    assert cap.err.strip().splitlines() == ["polytune: error: --tunes-at-once: must be at least 1, got 0"] \
        and cap.out == ""


def test_tunes_at_once_default_to_one_per_timer_and_at_least_two():
    assert bench.plan_tunes(bench.BenchOptions(jobs=8, threads=2, tunes_at_once=None), 6, cores=16).at_once == 2
    assert bench.plan_tunes(bench.BenchOptions(jobs=None, threads=2, tunes_at_once=4), 3, cores=16).at_once == 3
    cluster = bench.BenchOptions(ray="127.0.0.1:6379", tunes_at_once=None)
    assert bench.plan_tunes(cluster, 10, timers=4).at_once == 4 and bench.plan_tunes(cluster, 3, timers=4).at_once == 3
    assert bench.plan_tunes(bench.BenchOptions(ray="auto", tunes_at_once=None), 10, timers=1).at_once == 2


def test_local_tunes_whose_timings_take_every_core_run_one_at_a_time_and_say_why():
    plan = bench.plan_tunes(bench.BenchOptions(jobs=4, threads=8, tunes_at_once=3), 6, cores=8)
    assert plan.at_once == 1 and "--threads below the cores" in plan.note
    assert bench.plan_tunes(bench.BenchOptions(jobs=4, threads=8, tunes_at_once=None), 6, cores=8).note is None


def test_bench_tunes_its_kernels_at_once_then_times_each_in_its_session(tmp_path, capsys):
    paths = []
    for name in ("first", "second"):
        p = tmp_path / f"{name}.c"
        p.write_text(TIMED)
        paths.append(str(p))
    out = tmp_path / "out"
    rc = main(["bench", *paths, "--runs", "1", "--threads", "1", "--jobs", "2", "--tunes-at-once", "2",
               "--max-evals", "3", "--compilers", "gcc", "--report", str(out)])
    assert rc == 0
    err = capsys.readouterr().err
    assert "tuning: 2 runs, 2 at once, on 1 timer" in err
    # every tune is started before the first session
    assert err.index("second: tuning with hill") < err.index("first: session of")
    res = json.load(open(out / "results.json"))
    assert res["tunes_at_once"] == 2 and res["tuning_s"] > 0 and "--tunes-at-once 2" in res["command"]
    for k in res["kernels"]:
        assert list(k["tuning"]) == ["hill"] and 1 <= k["tuning"]["hill"]["evals"] <= 3
        assert k["variants"]["hill"]["checksum_ok"] is True and k["variants"]["seed"]["median"] is not None
