"""tune --jobs N and --ray: candidates generated and compiled on workers, one timing at a time; the search ends
where it ends with one job when the measurements are the same (times replaced by a function of the
configuration after the real build and verification)."""
from __future__ import annotations

import dataclasses
import io
import json
import os

import pytest
from conftest import synthetic_times, write_matmul
from fakes import FakeRunner, FakeTarget, FakeWorkers

from polytune.cli import main
from polytune.measure.c import BuildConfig
from polytune.tune import ProgressPrinter, TuneOptions, tune
from polytune.workers import Progress, Stage

pytestmark = pytest.mark.usefixtures("tiled_as_any_band")  # (conftest)

FAST = BuildConfig(cflags=("-O1",), runs=2, threads=1, prune_factor=1e9)


@pytest.fixture
def kernel(tmp_path):
    return write_matmul(tmp_path)


def test_jobs_2_takes_the_path_of_jobs_1_on_replayed_times(kernel, monkeypatch):
    synthetic_times(monkeypatch)
    opts = TuneOptions(cache=None, alpha=None, max_evals=12)
    one = tune(kernel, dataclasses.replace(opts, jobs=1), FAST)
    two = tune(kernel, dataclasses.replace(opts, jobs=2), FAST)
    assert one.best_config == two.best_config != (32, 32, 32)
    assert [r.config for r in one.search.evaluations] == [r.config for r in two.search.evaluations]
    assert [r.measurement.value for r in one.search.evaluations] == [r.measurement.value
                                                                     for r in two.search.evaluations]
    assert one.report.workers is None
    assert two.report.workers["jobs"] == 2
    timers = {r.measurement.extra["worker"] for r in two.search.evaluations}
    assert len(timers) == 1 and timers.pop().endswith("/timer")  # one timing at a time, on one timer
    assert {r.measurement.extra["compiled_on"].rsplit("/", 1)[-1] for r in two.search.evaluations} <= {"c0", "c1"}


def test_tune_measures_its_incumbent_again_before_stopping_with_and_without_the_pool(kernel, monkeypatch):
    synthetic_times(monkeypatch)
    opts = TuneOptions(cache=None, alpha=None, confirm_runs=0)
    one = tune(kernel, dataclasses.replace(opts, jobs=1), FAST)
    two = tune(kernel, dataclasses.replace(opts, jobs=2), FAST)
    again = [r for r in one.search.evaluations if r.again]
    assert one.search.stop_reason.value == "converged" and again and again[-1].config == one.best_config
    assert [(r.config, r.again) for r in one.search.evaluations] == \
        [(r.config, r.again) for r in two.search.evaluations]
    off = tune(kernel, dataclasses.replace(opts, jobs=2, again=False), FAST)
    assert not any(r.again for r in off.search.evaluations) and off.best_config == one.best_config


def test_cli_tune_jobs_end_to_end_reports_the_workers(kernel, tmp_path):
    rep, out = tmp_path / "r.json", tmp_path / "best.c"
    rc = main(["tune", kernel, "--jobs", "2", "--no-cache", "--runs", "2", "--cflags=-O1", "--threads", "1",
               "--max-evals", "5", "--report", str(rep), "-o", str(out)])
    assert rc == 0
    r = json.loads(rep.read_text())
    assert r["workers"]["jobs"] == 2 and len(r["workers"]["workers"]) == 3  # two compile slots and the timer
    assert r["workers"]["quiet"] == ((os.cpu_count() or 1) <= 1)  # one timed thread leaves cores to compile on
    assert r["evals"] <= 5 and all(e["extra"]["worker"].endswith("/timer") for e in r["evaluations"])
    assert out.read_text().count("#pragma omp") >= 1
    # where the search time went: its parts, one after another without --ray
    spans = r["spans"]
    assert set(spans) == {"original", "workers", "search", "confirm", "close"}
    assert 0 < spans["original"] + spans["workers"] + spans["search"] + spans["confirm"] + spans["close"] \
        <= r["search_time"] + 0.01


def test_cli_tune_rejects_zero_jobs(kernel, capsys):
    assert main(["tune", kernel, "--jobs", "0"]) == 2
    assert "--jobs/-j: must be at least 1, got 0" in capsys.readouterr().err


def test_progress_shows_what_each_worker_holds():
    stream = io.StringIO()
    p = ProgressPrinter(stream)
    p.label(("i", "j"))
    p.worker(Progress(0, "i=32 j=32", Stage.COMPILE, "box/c0"))
    p.worker(Progress(1, "i=16 j=32", Stage.COMPILE, "box/c1"))
    p.worker(Progress(0, "i=32 j=32", Stage.TIME, "box/timer"))

    from polytune.measure import Measurement
    from polytune.search import EvalRecord
    m = Measurement((32, 32), (0.5, 0.5), extra={"worker": "box/timer"})
    p.worker(Progress(0, "i=32 j=32", Stage.DONE, "box/timer"))
    p(EvalRecord(1, (32, 32), m, "seed", 0, 1.0))
    text = stream.getvalue()
    assert "i=32 j=32" in text and "on box/timer" in text
    assert "now: c1 compile i=16 j=32" in text and "timer" not in text.split("now:")[1]


ray_needed = pytest.mark.skipif(__import__("importlib").util.find_spec("ray") is None, reason="ray is not installed")


@pytest.fixture
def private_ray():
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    os.environ.setdefault("RAY_AUTH_MODE", "token")  # Ray 2.5x+: the driver sends the token it finds
    import shutil
    import subprocess
    import sys
    ray_exe = shutil.which("ray") or os.path.join(os.path.dirname(sys.executable), "ray")
    subprocess.run([ray_exe, "get-auth-token", "--generate"], capture_output=True)  # Ray < 2.5x has no tokens
    from polytune.workers import ray_pool
    if not ray_pool.connect("auto", num_cpus=2):
        ray_pool.disconnect()
        pytest.skip("a Ray cluster runs on this machine already: this test needs a private instance")
    yield
    ray_pool.disconnect()


@pytest.mark.slow  # a Ray instance takes ~25 s to start on 2 cores: CI runs this on its slow line
@ray_needed
@pytest.mark.parametrize("where", ["auto", "address"])
def test_tune_on_ray_end_to_end(kernel, private_ray, tmp_path, where, monkeypatch):
    # at an address, the original is measured on a thread of its own while the driver joins and probes
    import threading

    import ray

    from polytune.measure.c import CRunner
    threads = []
    reference = CRunner.reference
    monkeypatch.setattr(CRunner, "reference", lambda self: threads.append(threading.current_thread().name)
                        or reference(self))
    address = "auto" if where == "auto" else ray.get_runtime_context().gcs_address
    rep = tmp_path / "r.json"
    rc = main(["tune", kernel, "--ray", address, "--no-cache", "--runs", "2", "--cflags=-O1", "--threads", "1",
               "--max-evals", "4", "--report", str(rep)])
    assert rc == 0
    r = json.loads(rep.read_text())
    assert r["workers"]["ray"] == address and len(r["workers"]["timers"]) == 1 and not r["workers"]["refused"]
    assert r["evals"] == 4 and r["best"]["median"] > 0 and r["original"]["median"] > 0
    assert len(threads) == 1 and threads[0].startswith("polytune-original") == (where == "address")
    assert r["spans"].get("overlapped", False) == (where == "address")
    assert all(e["extra"]["worker"] == r["workers"]["timers"][0] for e in r["evaluations"])
    # the re-run after the search: the nodes' executables came back with their timings, optimize's default was
    # compiled on the cluster beside the search; nothing is compiled after it
    assert r.get("program_gain") is None or r["program_gain"].get("compiled") == []


@pytest.mark.slow  # (5 s; CI's slow line: tune with jobs is covered by default above)
def test_bench_tunes_with_jobs(tmp_path, capsys):
    """bench --jobs N compiles each tuning run's candidates on N workers (one kernel: one tune at a time)."""
    out = tmp_path / "out"
    rc = main(["bench", write_matmul(tmp_path, timed=True), "--runs", "1", "--threads", "1", "--max-evals", "3",
               "--compilers", "gcc",
               "--jobs", "2", "--report", str(out)])
    assert rc == 0, capsys.readouterr().err
    res = json.load(open(out / "results.json"))
    assert res["jobs"] == 2 and "--jobs 2" in res["command"]
    assert res["kernels"][0]["tuning"]["hill"]["evals"] <= 3


@pytest.mark.slow  # (a Ray instance: CI's slow line)
@ray_needed
def test_bench_tunes_its_kernels_at_once_on_one_ray_instance(tmp_path, private_ray, capsys):
    """bench --ray auto: the instance this process runs, joined by every tune at its address (none starts its
    own), two tunes at once; the sessions after them."""
    import shutil

    import ray
    paths = [shutil.copy(write_matmul(tmp_path, timed=True), tmp_path / f"{name}.c") for name in ("one", "two")]
    out = tmp_path / "out"
    rc = main(["bench", *map(str, paths), "--runs", "1", "--threads", "1", "--max-evals", "3", "--compilers", "gcc",
               "--ray", "auto", "--tunes-at-once", "2", "--report", str(out)])
    assert rc == 0, capsys.readouterr().err
    assert "at once" in capsys.readouterr().err
    res = json.load(open(out / "results.json"))
    assert res["tunes_at_once"] == 2 and res["ray"] == "auto"
    for k in res["kernels"]:
        assert k["tuning"]["hill"]["evals"] <= 3 and k["variants"]["hill"]["checksum_ok"] is True
    assert ray.is_initialized()  # the bench left this process's instance as it found it


def test_pooled_measure_reads_the_cache_and_measures_one_variant_once():
    from polytune.measure import Measurement
    from polytune.measure.measurer import Bound, Measurer
    from polytune.measure.pooled import PoolSlots

    class Cache:
        def get(self, config):
            return Measurement(config, (0.5,), cached=True) if config == (1, 7) else None

    workers = FakeWorkers(hand_back=False)
    bound = Bound()
    pm = Measurer(FakeTarget(), ("a", "b"), PoolSlots(FakeRunner(), workers, bound), Cache(), bound)
    first = pm.submit((0, 1)).result()
    again = pm.submit((0, 2)).result()  # b is not read when a is 0: the same variant
    cached = pm.submit((1, 7)).result()
    other = pm.submit((1, 2)).result()
    assert workers.submitted == [(0, 1), (1, 2)]
    assert first.extra == {"worker": "box/timer", "compiled_on": "box/c0",
                           "spans": {"submitted": 0.0, "compile": [0.0, 0.0], "time": [0.0, 0.0]}}
    assert first.same_as is None
    assert again.same_as == (0, 1) and again.config == (0, 2) and again.times == first.times
    assert cached.cached and other.value == 3.0
    assert bound.value == 0.5  # the best time seen, cached ones included


def test_ctrl_c_in_the_search_closes_the_workers_the_runner_and_the_cache(kernel, tmp_path, monkeypatch):
    """The measurement a tune opens is closed on every exit: a KeyboardInterrupt no stage catches (here where the
    search starts, the original measured and the workers open) closes the workers, the runner and the cache."""
    import polytune.tune as tuner
    from polytune.measure.c import CRunner
    from polytune.measure.cache import MeasurementCache
    from polytune.workers import LocalPool
    closed = []
    for cls, name in ((LocalPool, "workers"), (CRunner, "runner"), (MeasurementCache, "cache")):
        monkeypatch.setattr(cls, "close", lambda self, real=cls.close, name=name: closed.append(name) or real(self))

    def ctrl_c(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(tuner, "run_search", ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        tune(kernel, TuneOptions(cache=str(tmp_path / "c.sqlite"), max_evals=2, jobs=2, analysis_time_limit=0), FAST)
    assert closed == ["workers", "runner", "cache"]


def test_tune_with_jobs_writes_the_cache_and_a_repeat_replays_it(kernel, tmp_path):
    opts = TuneOptions(cache=str(tmp_path / "cache.sqlite"), alpha=None, max_evals=4, jobs=2)
    first = tune(kernel, opts, FAST)
    again = tune(kernel, opts, FAST)
    assert [r.config for r in again.search.evaluations] == [r.config for r in first.search.evaluations]
    assert all(r.measurement.cached for r in again.search.evaluations)
    # the search replays; the re-run in the program after it (confirm_best) is measured afresh, so the kept
    # configuration may differ where the candidates are within noise: the search's own best is compared
    def search_best(result):
        return (result.report.search_best or result.search.best).config
    assert search_best(again) == search_best(first)


def test_the_original_is_measured_while_no_other_tune_on_the_machine_times(kernel):
    """tune's own measurement of the original takes the machine-wide lock the pools' timings take: while
    another process's timing holds it, the measurement waits (here a hold of 1.5 s)."""
    import fcntl
    import threading
    import time

    from polytune.steps import default_lock_path
    held = threading.Event()

    def hold():
        fd = os.open(default_lock_path(), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            held.set()
            time.sleep(1.5)
        finally:
            os.close(fd)
    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(10)
    # (no analysis probe: its worker, started while this test's thread runs, would outlast the hold)
    result = tune(kernel, TuneOptions(cache=None, max_evals=1, jobs=1, analysis_time_limit=0), FAST)
    holder.join()
    assert result.report.spans["original"] >= 1.0


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs 2 cores: one to time on, one to compile on")
def test_with_the_local_pool_the_original_is_timed_on_the_cores_the_candidates_are(kernel, monkeypatch):
    """--threads below the cores: the pool times on the first --threads cores and compiles on the others; the
    original's measurement runs there too (not beside another tune's compiles, and where its candidates run)."""
    from polytune.measure.c import CRunner
    cores = sorted(os.sched_getaffinity(0))
    seen = []
    reference = CRunner.reference
    monkeypatch.setattr(CRunner, "reference", lambda self: seen.append(sorted(os.sched_getaffinity(0)))
                        or reference(self))
    tune(kernel, TuneOptions(cache=None, max_evals=1, jobs=2), FAST)  # FAST: 1 thread
    assert seen == [cores[:1]]
    tune(kernel, TuneOptions(cache=None, max_evals=1, jobs=1), FAST)  # no pool: where the process runs
    assert seen[-1] == cores


def test_the_runs_that_confirm_the_best_take_the_machine_lock_one_run_at_a_time(kernel, monkeypatch):
    import threading

    synthetic_times(monkeypatch)  # (a best other than the seed: the confirmation runs both)

    from polytune import steps
    entered = []

    class Recording(steps.TimerLock):
        def __enter__(self):
            entered.append(threading.current_thread().name)
            return super().__enter__()
    monkeypatch.setattr(steps, "TimerLock", Recording)
    result = tune(kernel, TuneOptions(cache=None, alpha=None, max_evals=6, jobs=1), FAST)
    confirm = result.report.program_gain
    assert confirm and confirm.get("runs"), confirm
    # the original's measurement, then every run of every program of the confirmation
    assert len(entered) == 1 + confirm["runs"] * len(confirm["program_ms"])


def test_a_script_that_tunes_unguarded_gets_one_line_saying_why_instead_of_a_hang(kernel, tmp_path):
    """Worker processes start by importing the main script: one that calls tune() at its top level would start
    pools in its workers, forever. Each such worker says why in one line and ends; the tune fails."""
    import subprocess
    import sys
    script = tmp_path / "unguarded.py"
    script.write_text("from polytune.measure.c import BuildConfig\nfrom polytune.tune import TuneOptions, tune\n"
                      f"tune({kernel!r}, TuneOptions(jobs=2, max_evals=2, cache=None), "
                      "BuildConfig(cflags=('-O1',), threads=1))\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=root), cwd=tmp_path)
    assert r.returncode != 0
    assert 'under `if __name__ == "__main__":`' in r.stderr and "WorkerLost" in r.stderr
