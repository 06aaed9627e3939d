"""A Ray cluster of two nodes on loopback: a node of another machine is refused, a node that dies costs a retry."""
from __future__ import annotations

import os

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # keeps Ray's addresses on 127.0.0.1
os.environ.setdefault("RAY_AUTH_MODE", "token")  # set before Ray is imported: the driver then sends the token

import pytest

ray = pytest.importorskip("ray")

import shutil  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from concurrent.futures import wait  # noqa: E402
from dataclasses import replace  # noqa: E402
from functools import partial  # noqa: E402

from polytune.workers import local_identity  # noqa: E402
from polytune.workers.ray_pool import RayPool, connect, disconnect  # noqa: E402

ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
pytestmark = pytest.mark.slow  # two Ray nodes start and stop: about a minute on 2 cores

ODD = "polytune_test_odd"  # a resource only the second node has, so a task can tell where it runs


@pytest.fixture
def two_nodes():
    """A head and a second node, each a raylet of its own on 127.0.0.1 (Ray's ``cluster_utils``; ``ray start
    --address`` refuses a second node while Ray is kept on loopback)."""
    from ray.cluster_utils import Cluster

    ray_exe = shutil.which("ray") or os.path.join(os.path.dirname(sys.executable), "ray")
    subprocess.run([ray_exe, "get-auth-token", "--generate"], capture_output=True)  # Ray < 2.5x has no tokens
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 1, "resources": {"polytune_timer": 1}, "include_dashboard": False})
    try:
        cluster.add_node(num_cpus=1, resources={"polytune_timer": 1, ODD: 1})
        connect(cluster.address)
        odd = next(n["NodeID"] for n in ray.nodes() if n["Alive"] and ODD in n["Resources"])
        yield odd
    finally:
        disconnect()
        cluster.shutdown()


def other_machine_on(node_id: str):
    ident = local_identity()
    if ray.get_runtime_context().get_node_id() == node_id:
        return replace(ident, cpu="Imaginary CPU 9000")
    return ident


def quick_compile(payload):
    return {"payload": payload}


def where_timed(artifact):
    return artifact["payload"], ray.get_runtime_context().get_node_id()


def kill_node_once(node_id: str, marker: str, log: str, artifact):
    """On node ``node_id``, the first timing kills its node's raylet (the whole node dies mid-timing)."""
    here = ray.get_runtime_context().get_node_id()
    if here == node_id and not os.path.exists(marker):
        with open(marker, "w") as f:
            f.write("killed\n")
        os.kill(os.getppid(), signal.SIGKILL)  # a worker's parent is its node's raylet
        os.kill(os.getpid(), signal.SIGKILL)  # and the worker goes with its node
    time.sleep(0.3)  # long enough for both timers to be busy
    with open(log, "a") as f:
        f.write(f"{artifact['payload']}\n")
    return artifact["payload"], here


def results(pool, compile_fn, time_fn, payloads):
    futures = [pool.submit(compile_fn, time_fn, p) for p in payloads]
    _, not_done = wait(futures, timeout=180)
    assert not not_done
    return [f.result() for f in futures]


def test_second_node_with_another_cpu_is_refused_and_never_used(two_nodes):
    odd = two_nodes
    lines = []
    with RayPool(identity=partial(other_machine_on, odd), on_refused=lines.append) as pool:
        out = results(pool, quick_compile, where_timed, range(4))
        workers = pool.workers
    assert len(lines) == 1 and odd[:8] in lines[0] and "Imaginary CPU 9000" in lines[0]
    assert list(pool.refused) == [odd]
    assert len(workers) == 1 and odd[:8] not in workers[0]
    assert [r.value[0] for r in out] == [0, 1, 2, 3] and all(r.value[1] != odd for r in out)
    assert all(odd[:8] not in r.compiled_on for r in out)


def test_node_that_dies_mid_timing_costs_a_retry_on_the_other(two_nodes, tmp_path):
    odd = two_nodes
    log = str(tmp_path / "timed.log")
    with RayPool() as pool:
        assert len(pool.workers) == 2
        out = results(pool, quick_compile, partial(kill_node_once, odd, str(tmp_path / "marker"), log), range(6))
    assert (tmp_path / "marker").exists()
    assert [r.value[0] for r in out] == list(range(6))
    # the candidates that were on the dead node (its timing, maybe a compile) were tried again, on the head
    retried = [r for r in out if r.attempts > 1]
    assert retried and all(r.attempts == 2 and r.value[1] != odd for r in retried)
    with open(log) as f:
        assert sorted(int(x) for x in f) == list(range(6))  # each measured once


def where_compiled(payload):
    return {"payload": payload, "compiled": ray.get_runtime_context().get_node_id()}


def where_timed_compiled(artifact):
    return artifact["payload"], artifact["compiled"], ray.get_runtime_context().get_node_id()


def test_a_node_without_timer_slots_does_every_compile_and_no_timing():
    """A timing head of 1 CPU and a compile node of 2: another core count, accepted (it only compiles)."""
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 1, "resources": {"polytune_timer": 1}, "include_dashboard": False})
    try:
        cluster.add_node(num_cpus=2, resources={ODD: 1})
        connect(cluster.address)
        compiler = next(n["NodeID"] for n in ray.nodes() if n["Alive"] and ODD in n["Resources"])
        cores = partial(lambda node, ident: replace(ident, cores=2)
                        if ray.get_runtime_context().get_node_id() == node else ident, compiler)
        with RayPool(identity=lambda: cores(local_identity()), timing_cpus=1) as pool:
            assert not pool.refused and len(pool.workers) == 1
            out = results(pool, where_compiled, where_timed_compiled, range(5))
    finally:
        disconnect()
        cluster.shutdown()
    assert [r.value[0] for r in out] == list(range(5))
    assert all(r.value[1] == compiler and r.value[2] != compiler for r in out)


def gpu_timed(artifact):
    start = time.time()
    time.sleep(0.3)
    return artifact["payload"], ray.get_gpu_ids(), (start, time.time())


def test_gpu_pool_puts_one_timer_on_each_gpu_and_times_on_both():
    """Two GPUs declared on a CPU-only head (Ray only counts them): one timer each, timing at the same time."""
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 2, "num_gpus": 2, "include_dashboard": False})
    try:
        connect(cluster.address)
        with RayPool(gpu=True) as pool:
            workers = pool.workers
            out = results(pool, quick_compile, gpu_timed, range(6))
    finally:
        disconnect()
        cluster.shutdown()
    assert len(workers) == 2 and {w.rsplit("/", 1)[1] for w in workers} == {"gpu0", "gpu1"}
    assert {r.worker for r in out} == set(workers)
    assert all(len(r.value[1]) == 1 and r.worker.endswith(f"gpu{r.value[1][0]}") for r in out)
    spans = [r.value[2] for r in out]
    assert any(a[0] < b[1] and b[0] < a[1] for i, a in enumerate(spans) for b in spans[i + 1:])


def note_pid_at_once(log: str):
    with open(log, "a") as f:
        f.write(f"{os.getpid()}\n")


def test_warm_ups_that_end_at_once_still_start_a_worker_for_each_cpu(tmp_path):
    """An import already done takes no time: each warm-up waits for its node's others, so that none of them runs
    in a worker another one left (6 CPUs: 6 workers)."""
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 6, "resources": {"polytune_timer": 1}, "include_dashboard": False})
    log = tmp_path / "warm.log"
    try:
        connect(cluster.address)
        with RayPool() as pool:
            pool.warm(note_pid_at_once, str(log), early=True)
            deadline = time.time() + 120
            while time.time() < deadline and not (log.exists() and len(log.read_text().split()) == 6):
                time.sleep(0.2)
    finally:
        disconnect()
        cluster.shutdown()
    assert len(set(log.read_text().split())) == 6
