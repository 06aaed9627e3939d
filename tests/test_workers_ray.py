"""The Ray pool on a local Ray instance (loopback only, no dashboard): end to end, retries, identity refusal."""
from __future__ import annotations

import os

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # keeps Ray's addresses on 127.0.0.1
os.environ.setdefault("RAY_AUTH_MODE", "token")  # set before Ray is imported: the driver then sends the token

import pytest

ray = pytest.importorskip("ray")
# A local Ray instance takes 14 s to start: the module runs under -m slow, on CI's slow line.
pytestmark = pytest.mark.slow

import shutil  # noqa: E402
import signal  # noqa: E402
import stat  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from concurrent.futures import wait  # noqa: E402
from dataclasses import replace  # noqa: E402
from functools import partial  # noqa: E402

from polytune.errors import UsageError  # noqa: E402
from polytune.workers import Done, local_identity  # noqa: E402
from polytune.workers.ray_pool import RayPool, connect, disconnect  # noqa: E402

# Ray workers cannot import this test module: send its functions by value
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

PROGRAM = r"""
#include <stdio.h>
int main(void) { long s = 0; for (long i = 0; i < N; i++) s += i; printf("%ld\n", s); return 0; }
"""


def gcc_compile(n: int):
    """Compile a tiny program for size n; the artifact is the executable's bytes (it may run on another node)."""
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "p.c"), os.path.join(tmp, "p")
        with open(src, "w") as f:
            f.write(PROGRAM)
        proc = subprocess.run(["gcc", "-O1", f"-DN={n}", src, "-o", exe], capture_output=True, text=True)
        if proc.returncode != 0:
            return Done(("compile", proc.stderr))
        with open(exe, "rb") as f:
            return {"n": n, "exe": f.read()}


def run_exe(artifact):
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "p")
        with open(exe, "wb") as f:
            f.write(artifact["exe"])
        os.chmod(exe, stat.S_IRWXU)
        start = time.time()
        out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
        return {"n": artifact["n"], "sum": int(out), "span": (start, time.time()), "pid": os.getpid()}


def quick_compile(payload):
    return {"payload": payload}


def time_or_die(marker: str, log: str, artifact):
    """Kill this worker (the timer actor's process) the first time payload 1 is timed."""
    if artifact["payload"] == 1 and not os.path.exists(marker):
        with open(marker, "w") as f:
            f.write("died once\n")
        os.kill(os.getpid(), signal.SIGKILL)
    with open(log, "a") as f:
        f.write(f"{artifact['payload']}\n")
    return artifact["payload"]


def compile_or_die(marker: str, payload):
    if payload == 1 and not os.path.exists(marker):
        with open(marker, "w") as f:
            f.write("died once\n")
        os.kill(os.getpid(), signal.SIGKILL)
    return {"payload": payload}


def other_machine():
    return replace(local_identity(), cpu="Imaginary CPU 9000")


def other_machine_on(node_id: str):
    """The identity of this node, faked to another CPU on node ``node_id`` only."""
    ident = local_identity()
    if ray.get_runtime_context().get_node_id() == node_id:
        return replace(ident, cpu="Imaginary CPU 9000")
    return ident


def results(pool, compile_fn, time_fn, payloads):
    futures = [pool.submit(compile_fn, time_fn, p, label=f"c{p}") for p in payloads]
    _, not_done = wait(futures, timeout=120)
    assert not not_done
    return [f.result() for f in futures]


@pytest.fixture(scope="module")
def local_ray():
    ray_exe = shutil.which("ray") or os.path.join(os.path.dirname(sys.executable), "ray")
    subprocess.run([ray_exe, "get-auth-token", "--generate"], capture_output=True)  # Ray < 2.5x has no tokens
    if not connect("auto", num_cpus=2):
        disconnect()
        pytest.skip("a Ray cluster runs on this machine already: these tests need a private instance")
    yield
    disconnect()


def overlaps(a, b):
    return a[0] < b[1] and b[0] < a[1]


def test_ray_local_instance_listens_on_loopback_only(local_ray):
    assert {n["NodeManagerAddress"] for n in ray.nodes() if n["Alive"]} == {"127.0.0.1"}


def test_ray_pool_compiles_and_times_real_programs_and_names_the_worker(local_ray):
    with RayPool() as pool:
        out = results(pool, gcc_compile, run_exe, [10, 100, 1000, 10000])
        workers = pool.workers
    assert [r.value["sum"] for r in out] == [n * (n - 1) // 2 for n in (10, 100, 1000, 10000)]
    assert len(workers) == 1 and all(r.worker == workers[0] and r.timed and r.attempts == 1 for r in out)
    spans = [r.value["span"] for r in out]
    assert not any(overlaps(a, b) for i, a in enumerate(spans) for b in spans[i + 1:])


def slow_compile(payload):
    """A compile that takes 0.3 s and says when it ran."""
    start = time.time()
    time.sleep(0.3)
    return {"payload": payload, "compiled": (start, time.time())}


def slow_time(artifact):
    start = time.time()
    time.sleep(0.2)
    return {"compiled": artifact["compiled"], "span": (start, time.time())}


def test_ray_timing_that_takes_the_nodes_cores_never_overlaps_a_compile_there(local_ray):
    """timing_cpus = the node's 2 CPUs: the node compiles between timings, never during one."""
    with RayPool(timing_cpus=2) as pool:
        out = results(pool, slow_compile, slow_time, list(range(6)))
    compiles = [r.value["compiled"] for r in out]
    timings = [r.value["span"] for r in out]
    assert not any(overlaps(c, t) for c in compiles for t in timings)
    with RayPool() as pool:  # without: compiles run beside the timings (the pool's throughput)
        out = results(pool, slow_compile, slow_time, list(range(6)))
    assert any(overlaps(r.value["compiled"], q.value["span"]) for r in out for q in out)


def compile_forever_once(marker: str, payload):
    """Payload 0 compiles for ten minutes (it would hold its compile slot that long), in Python steps of 50 ms
    (Ray stops a task between two Python steps); the others at once."""
    if payload == 0:
        with open(marker, "w") as f:
            f.write(f"{os.getpid()}\n")
        for _ in range(12000):
            time.sleep(0.05)
    return {"payload": payload, "pid": os.getpid()}


def test_ray_compile_of_a_dropped_candidate_is_stopped_and_its_slot_goes_to_the_next(local_ray, tmp_path):
    marker = tmp_path / "compiling"
    with RayPool(jobs=1) as pool:  # one compile at a time: the next waits for the slot the dropped one holds
        dropped = pool.submit(partial(compile_forever_once, str(marker)), run_payload, 0)
        deadline = time.time() + 60
        while time.time() < deadline and not marker.exists():
            time.sleep(0.05)
        assert marker.exists() and dropped.cancel()
        (r,) = results(pool, partial(compile_forever_once, str(marker)), run_payload, [1])
        stats = pool.stats()
    assert r.value == 1
    assert stats["stopped"] == 1 and stats["compiles"] == 2


def test_ray_compile_error_is_a_value_not_a_timing(local_ray):
    with RayPool() as pool:
        (r,) = results(pool, gcc_compile, run_exe, ["x+"])
    assert not r.timed and r.value[0] == "compile"


def test_ray_timer_killed_mid_timing_costs_a_retry_and_measures_once(local_ray, tmp_path):
    log = str(tmp_path / "timed.log")
    with RayPool() as pool:
        out = results(pool, quick_compile, partial(time_or_die, str(tmp_path / "marker"), log), range(3))
    assert (tmp_path / "marker").exists()
    assert [r.value for r in out] == [0, 1, 2]
    assert [r.attempts for r in out] == [1, 2, 1]
    with open(log) as f:
        assert sorted(int(x) for x in f) == [0, 1, 2]


@pytest.mark.slow
def test_ray_compile_worker_killed_mid_compile_costs_a_retry(local_ray, tmp_path):
    with RayPool() as pool:
        out = results(pool, partial(compile_or_die, str(tmp_path / "marker")), run_payload, range(3))
    assert (tmp_path / "marker").exists()
    assert [r.value for r in out] == [0, 1, 2] and [r.attempts for r in out] == [1, 2, 1]


def run_payload(artifact):
    return artifact["payload"]


def note_pid(log: str):
    time.sleep(0.5)  # long enough for the tasks to need workers of their own
    with open(log, "a") as f:
        f.write(f"{os.getpid()}\n")


def test_ray_warm_up_runs_once_per_cpu_and_holds_no_cpu(local_ray, tmp_path):
    log = str(tmp_path / "warm.log")
    with RayPool() as pool:
        pool.warm(note_pid, log)
        (r,) = results(pool, quick_compile, run_payload, [7])  # not kept waiting by the warm-up: it holds no CPU
        assert r.value == 7
        deadline = time.time() + 60
        while time.time() < deadline and not (os.path.exists(log) and len(open(log).read().split()) == 2):
            time.sleep(0.2)
    with open(log) as f:
        assert len(f.read().split()) == 2  # the instance has 2 CPUs


def test_ray_early_warm_up_starts_before_any_candidate_and_a_repeated_request_is_ignored(local_ray, tmp_path):
    log = str(tmp_path / "warm.log")
    with RayPool() as pool:
        pool.warm(note_pid, log, early=True)
        deadline = time.time() + 60
        while time.time() < deadline and not (os.path.exists(log) and len(open(log).read().split()) == 2):
            time.sleep(0.2)
        assert len(open(log).read().split()) == 2  # no candidate submitted: early warm-ups do not wait for one
        pool.warm(note_pid, log)
        (r,) = results(pool, quick_compile, run_payload, [7])
        assert r.value == 7
        time.sleep(1.0)
    with open(log) as f:
        assert len(f.read().split()) == 2


def test_a_timing_worker_pins_itself_to_its_nodes_timer_cpus(monkeypatch):
    from polytune.workers import ray_pool

    mine = os.sched_getaffinity(0)
    first = min(mine)
    try:
        monkeypatch.setenv(ray_pool.TIMER_CPUS_ENV, str(first))
        ray_pool._pin_to_timer_cpus()
        assert os.sched_getaffinity(0) == {first}
        os.sched_setaffinity(0, mine)
        monkeypatch.delenv(ray_pool.TIMER_CPUS_ENV)
        ray_pool._pin_to_timer_cpus()  # not set: left alone
        assert os.sched_getaffinity(0) == mine
    finally:
        os.sched_setaffinity(0, mine)


def test_ray_node_with_another_identity_is_refused_in_one_line(local_ray):
    lines = []
    with pytest.raises(UsageError, match="refused") as err:
        RayPool(identity=other_machine, expect=local_identity(), on_refused=lines.append)
    assert len(lines) == 1 and "\n" not in lines[0]
    assert "cpu: 'Imaginary CPU 9000' != " in lines[0] and "\n" not in str(err.value)
