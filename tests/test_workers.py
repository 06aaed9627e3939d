"""The local pool: compiles overlap, timings never do, a killed compile worker costs a retry and nothing else.

Every step records its own wall-clock span, so the checks are about overlap, not about speed.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import wait
from functools import partial

import pytest

from polytune.workers import Done, LocalPool, MachineIdentity, Stage, TimerLock, WorkerLost, local_identity, open_pool
from polytune.workers.identity import choose_reference, refusal


def slow_compile(seconds: float, payload):
    start = time.time()
    time.sleep(seconds)
    return {"payload": payload, "compile": (start, time.time()), "pid": os.getpid()}


def slow_time(seconds: float, artifact):
    start = time.time()
    time.sleep(seconds)
    return {**artifact, "time": (start, time.time())}


def logged_time(log: str, artifact):
    with open(log, "a") as f:
        f.write(f"{artifact['payload']}\n")
    return artifact["payload"]


def compile_or_die(marker: str, payload):
    """Kill this worker process the first time payload 2 is compiled (the marker file remembers)."""
    if payload == 2 and not os.path.exists(marker):
        with open(marker, "w") as f:
            f.write("died once\n")
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.05)
    return {"payload": payload}


def affinity_compile(payload):
    """A compile step that reports the cores it may run on, and those of a compiler it would start."""
    child = subprocess.run([sys.executable, "-c", "import os; print(sorted(os.sched_getaffinity(0)))"],
                           capture_output=True, text=True, check=True).stdout.strip()
    return {"payload": payload, "cores": sorted(os.sched_getaffinity(0)), "child": child}


def no_time(artifact):
    child = subprocess.run([sys.executable, "-c", "import os; print(sorted(os.sched_getaffinity(0)))"],
                           capture_output=True, text=True, check=True).stdout.strip()
    return {**artifact, "timed_child": child}


def failing_compile(payload):
    return Done(f"compile error in {payload}")


def buggy_compile(payload):
    raise ValueError(f"bug on {payload}")


def overlaps(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def any_pair_overlaps(spans) -> bool:
    return any(overlaps(a, b) for i, a in enumerate(spans) for b in spans[i + 1:])


def run_all(pool, compile_fn, time_fn, payloads):
    futures = [pool.submit(compile_fn, time_fn, p, label=f"c{p}") for p in payloads]
    done, not_done = wait(futures, timeout=120)
    assert not not_done
    return [f.result() for f in futures]


@pytest.fixture
def lock_path(tmp_path):
    return str(tmp_path / "timer.lock")


@pytest.mark.parametrize("processes", [True, False])
def test_local_pool_compiles_in_parallel_and_times_one_at_a_time(processes, lock_path):
    with LocalPool(3, processes=processes, lock_path=lock_path) as pool:
        results = run_all(pool, partial(slow_compile, 0.4), partial(slow_time, 0.05), range(6))
    assert [r.value["payload"] for r in results] == list(range(6))
    compiles = [r.value["compile"] for r in results]
    timings = [r.value["time"] for r in results]
    assert any_pair_overlaps(compiles)
    assert not any_pair_overlaps(timings)
    assert all(c[1] <= t[0] for c, t in zip(compiles, timings))  # each candidate timed after its compile
    assert all(r.timed and r.attempts == 1 and r.worker == pool.timer_name for r in results)
    if processes:
        assert len({r.value["pid"] for r in results}) > 1


def test_timings_overlap_compiles_unless_the_pool_is_quiet(lock_path):
    spans = {}
    for quiet in (False, True):
        with LocalPool(2, processes=False, quiet=quiet, lock_path=lock_path) as pool:
            results = run_all(pool, partial(slow_compile, 0.3), partial(slow_time, 0.2), range(6))
        compiles = [r.value["compile"] for r in results]
        timings = [r.value["time"] for r in results]
        assert not any_pair_overlaps(timings)
        spans[quiet] = any(overlaps(c, t) for c in compiles for t in timings)
    assert spans == {False: True, True: False}


def test_timing_waits_for_another_process_that_holds_the_machine_lock(lock_path):
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import fcntl, os, sys, time\n"
         "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)\n"
         "fcntl.flock(fd, fcntl.LOCK_EX)\n"
         "print(time.time(), flush=True)\n"
         "time.sleep(1.0)\n"
         "print(time.time(), flush=True)\n", lock_path],
        stdout=subprocess.PIPE, text=True)
    float(holder.stdout.readline())  # the other process holds the lock now
    with LocalPool(1, processes=False, lock_path=lock_path) as pool:
        result = run_all(pool, partial(slow_compile, 0.0), partial(slow_time, 0.0), [0])[0]
    released = float(holder.stdout.readline())
    holder.wait()
    assert result.value["time"][0] >= released


def test_timer_lock_excludes_threads_of_one_process(lock_path):
    spans = []

    def hold():
        with TimerLock(lock_path):
            start = time.time()
            time.sleep(0.1)
            spans.append((start, time.time()))

    threads = [threading.Thread(target=hold) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(spans) == 3 and not any_pair_overlaps(spans)


def test_killed_compile_worker_costs_a_retry_and_loses_nothing(tmp_path, lock_path):
    log = str(tmp_path / "timed.log")
    with LocalPool(2, lock_path=lock_path) as pool:
        results = run_all(pool, partial(compile_or_die, str(tmp_path / "marker")), partial(logged_time, log),
                          range(5))
    assert (tmp_path / "marker").exists()  # the worker did die
    assert [r.value for r in results] == list(range(5))
    assert results[2].attempts == 2
    with open(log) as f:
        assert sorted(int(line) for line in f) == list(range(5))  # each timed exactly once


def test_done_from_compile_finishes_a_candidate_without_timing(tmp_path, lock_path):
    log = str(tmp_path / "timed.log")
    with LocalPool(2, processes=False, lock_path=lock_path) as pool:
        (result,) = run_all(pool, failing_compile, partial(logged_time, log), [7])
    assert result.value == "compile error in 7" and not result.timed and result.time_span is None
    assert not os.path.exists(log)


def test_exception_in_a_step_reaches_the_future(lock_path):
    with LocalPool(2, lock_path=lock_path) as pool:
        future = pool.submit(buggy_compile, partial(slow_time, 0), 3)
        with pytest.raises(ValueError, match="bug on 3"):
            future.result(timeout=60)


def test_a_compiled_candidate_cancelled_before_its_timing_is_never_timed(tmp_path, lock_path):
    log = str(tmp_path / "timed.log")
    timing_started = threading.Event()
    timed_first = []

    def progress(event):
        # the compiles race: whichever candidate reaches the timer first is timed, the other waits
        if event.stage is Stage.TIME and not timed_first:
            timed_first.append(event.ticket)
            timing_started.set()

    def slow_logged(artifact):
        time.sleep(0.5)
        return logged_time(log, artifact)

    with LocalPool(2, processes=False, lock_path=lock_path, on_progress=progress) as pool:
        futures = [pool.submit(partial(slow_compile, 0.0), slow_logged, ticket) for ticket in (0, 1)]
        assert timing_started.wait(30)
        timed, waiting = futures[timed_first[0]], futures[1 - timed_first[0]]
        assert waiting.cancel()
        assert timed.result(timeout=60).value == timed_first[0]
    with open(log) as f:
        assert f.read().split() == [str(timed_first[0])]


def test_progress_reports_each_candidate_compile_time_done_with_its_worker(lock_path):
    events = []
    with LocalPool(2, processes=False, lock_path=lock_path, on_progress=events.append) as pool:
        run_all(pool, partial(slow_compile, 0.05), partial(slow_time, 0.01), range(3))
    for ticket in range(3):
        mine = [e for e in events if e.ticket == ticket]
        assert [e.stage for e in mine] == [Stage.COMPILE, Stage.TIME, Stage.DONE]
        assert mine[0].worker in pool.workers and mine[1].worker == pool.timer_name
        assert mine[0].label == f"c{ticket}"


def test_worker_lost_after_max_attempts(tmp_path, lock_path):
    with LocalPool(1, lock_path=lock_path) as pool:
        future = pool.submit(always_die, partial(slow_time, 0), 0)
        with pytest.raises(WorkerLost, match="died 3 times"):
            future.result(timeout=120)


def always_die(payload):
    os.kill(os.getpid(), signal.SIGKILL)


# ---- machine identity (no Ray needed) ---------------------------------------------------------------------
def test_local_identity_names_this_machine_without_its_host_name():
    ident = local_identity("gcc")
    assert ident.cores >= 1 and ident.cpu and ident.compiler.startswith("gcc")
    assert socket.gethostname() not in repr(ident.to_record())


def _ident(cpu: str = "Xeon 1", cores: int = 16) -> MachineIdentity:
    return MachineIdentity("x86_64", cpu, cores, 64, "gcc (Debian 12.2.0-14) 12.2.0", "")


def test_reference_is_expect_then_the_driver_node_when_it_times_then_the_head():
    a, b, c = _ident("A"), _ident("B"), _ident("C")
    nodes = [("n1", False, True, a), ("n2", True, True, b), ("n3", False, False, c)]
    assert choose_reference(nodes, "n1", expect=c) == c
    assert choose_reference(nodes, "n1", expect=None) == a  # the driver's node times: its machine
    assert choose_reference(nodes, "n3", expect=None) == b  # the driver's node does not time: the head
    assert choose_reference([("n1", False, True, a), ("n3", False, True, c)], "x", None) == a  # Ray's order
    assert choose_reference([("n3", True, False, c)], "n3", None) is None  # nobody times


def test_refusal_is_one_line_naming_the_node_and_each_difference():
    line = refusal("box/1a2b3c4d", "10.0.0.7", _ident("Epyc", 8), _ident("Xeon 1", 16))
    assert "\n" not in line and line.startswith("polytune: Ray node box/1a2b3c4d (10.0.0.7) refused")
    assert "cpu: 'Epyc' != 'Xeon 1'" in line and "cores: 8 != 16" in line and "memory" not in line


def test_a_node_that_only_compiles_needs_the_same_code_not_the_same_cores():
    reference = _ident("Xeon 1", 2)
    assert not reference.code_differences(_ident("Xeon 1", 6))  # 6 cores, 2 per timer: it may compile
    assert reference.code_differences(_ident("Epyc", 6)) == ["cpu: 'Epyc' != 'Xeon 1'"]  # -march=native differs
    line = refusal("box/1a2b3c4d", "10.0.0.7", _ident("Epyc", 6), reference, compiles_only=True)
    assert "\n" not in line and "refused for compiling" in line and "cores" not in line


def test_open_pool_without_ray_is_a_local_pool_with_the_jobs_asked_for():
    with open_pool(jobs=2) as pool:
        assert isinstance(pool, LocalPool) and pool.jobs == 2
        (r,) = run_all(pool, partial(slow_compile, 0.0), partial(slow_time, 0.0), [5])
    assert r.value["payload"] == 5


# --- a search on the pool ------------------------------------------------------------------------


def bowl_time(artifact):
    """A replayed measurement: cost |a - 8| + |b - 4| + 1, a function of the configuration only."""
    from polytune.measure.measurement import Measurement
    a, b = artifact["payload"]
    return Measurement((a, b), (float(abs(a - 8) + abs(b - 4) + 1),))


def compile_or_die_on(victim, marker: str, payload):
    """Kill this compile worker the first time ``victim`` is compiled (the marker file remembers)."""
    if tuple(payload) == victim and not os.path.exists(marker):
        with open(marker, "w") as f:
            f.write("died once\n")
        os.kill(os.getpid(), signal.SIGKILL)
    return {"payload": tuple(payload)}


def test_a_search_whose_compile_worker_is_killed_ends_where_one_worker_does(tmp_path, lock_path):
    """Speculation on (the pool claims two timers), a compile worker killed mid-search: its candidate is
    compiled again, nothing is lost or measured twice, and the search takes the one-worker path."""
    from polytune.search import Budget, MappedPool, SearchOptions, SearchSpace, run_search

    space = SearchSpace.from_domains({"a": (1, 2, 4, 8, 16), "b": (1, 2, 4, 8, 16)})
    seed, victim = (1, 1), (2, 2)  # (2, 2) is a neighbour of the second step: compiled ahead, speculatively
    serial = run_search(space, lambda c: bowl_time({"payload": c}), "hill", seed, SearchOptions(), Budget())
    with LocalPool(2, lock_path=lock_path) as workers:
        compile_fn = partial(compile_or_die_on, victim, str(tmp_path / "marker"))
        pool = MappedPool(lambda c: workers.submit(compile_fn, bowl_time, c, label=str(c)), 3,
                          convert=lambda r: r.value, timers=2)
        parallel = run_search(space, None, "hill", seed, SearchOptions(), Budget(), pool=pool)
    assert (tmp_path / "marker").exists()
    assert parallel.best_config == serial.best_config == (8, 4)
    assert [r.config for r in parallel.evaluations] == [r.config for r in serial.evaluations]
    assert [s.config for s in parallel.trajectory] == [s.config for s in serial.trajectory]


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs two cores and sched_getaffinity")
@pytest.mark.parametrize("target", ["cuda", "triton"])
def test_a_gpu_tunes_compiles_keep_off_the_core_that_launches_its_kernels(target):
    """tune --target cuda/triton --jobs N: the timer thread (Triton's launches; the CUDA serving process it
    starts) has the first core to itself, the compile workers the others."""
    from polytune.measure.c import BuildConfig
    from polytune.tune import TuneOptions, open_workers
    cores = sorted(os.sched_getaffinity(0))
    pool, _remote, _in_flight, close, info = open_workers(TuneOptions(target=target, jobs=2), BuildConfig())
    try:
        assert pool.timing_cpus == (cores[0],) and pool.compile_cpus == tuple(cores[1:])
        assert info["timing_cpus"] == [cores[0]]
    finally:
        close()


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs two cores and sched_getaffinity")
def test_compiles_keep_off_the_cores_a_timing_takes(lock_path):
    """open_pool's timing_cpus (tune: --threads where they leave cores over): the compile processes, and the
    compilers they start, run on the other cores only, and the timed runs on the first ones."""
    cores = sorted(os.sched_getaffinity(0))
    with open_pool(2, None, timing_cpus=1) as pool:
        assert pool.compile_cpus == tuple(cores[1:]) and pool.timing_cpus == (cores[0],)
        results = run_all(pool, affinity_compile, no_time, [1, 2, 3])
    assert all(r.value["cores"] == cores[1:] and r.value["child"] == str(cores[1:]) for r in results)
    assert all(r.value["timed_child"] == str(cores[:1]) for r in results)  # the timed runs on the first core
    with open_pool(2, None, timing_cpus=len(cores), quiet=True) as pool:  # a timing takes every core: no pinning
        assert pool.compile_cpus is None and pool.timing_cpus is None
