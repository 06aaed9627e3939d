"""Where the Ray pool sends a compile and when a timer may start, on made-up nodes (no Ray instance runs)."""
from __future__ import annotations

import heapq
from concurrent.futures import Future

import pytest

pytest.importorskip("ray")

from polytune.workers.ray_pool import RayPool, _Candidate, _Node, _TimerRef  # noqa: E402


def pool_of(*nodes: tuple[str, int, int], timing_cpus: int = 2) -> RayPool:
    """A pool's dispatcher state over nodes (name, cpus, timer slots), every node accepted and alive."""
    pool = RayPool.__new__(RayPool)  # the dispatcher's state alone: no connection, no probe, no thread
    pool.gpu, pool.jobs, pool.timing_cpus = False, None, timing_cpus
    pool._nodes, pool._timers, pool._ready = {}, {}, []
    pool._durations = {"compile": (0.0, 0), "time": (0.0, 0)}
    for name, cpus, slots in nodes:
        node = _Node(name, "127.0.0.1", cpus, slots, False, name, accepted=True)
        pool._nodes[name] = node
        for slot in range(slots):
            pool._timers[name, slot] = _TimerRef(name, slot, f"{name}/t{slot}")
        node.timers = slots
    return pool


def place(pool: RayPool, n: int) -> list[str]:
    """Start up to n compiles where the pool puts them; the nodes chosen, in order."""
    out = []
    for _ in range(n):
        node = pool._compile_node()
        if node is None:
            break
        node.compiling += 1
        out.append(node.node_id)
    return out


DEVICE = (("compile", 6, 0), ("t0", 2, 1), ("t1", 2, 1), ("t2", 2, 1), ("t3", 2, 1))  # the benchmark's layout


def test_compiles_fill_the_compile_node_before_any_timer_node():
    assert place(pool_of(*DEVICE), 6) == ["compile"] * 6


def test_timer_nodes_then_compile_one_after_another_keeping_timers_for_what_compiles_elsewhere():
    """6 compiles on the compile node, a timing a quarter of a compile (before any was measured): 2 timers kept."""
    pool = pool_of(*DEVICE)
    assert place(pool, 20) == ["compile"] * 6 + ["t0", "t0", "t1", "t1"]
    assert pool._nodes["t2"].compiling == pool._nodes["t3"].compiling == 0


def measured(pool: RayPool, compile_s: float, time_s: float) -> RayPool:
    pool._measured("compile", (0.0, compile_s))
    pool._measured("time", (0.0, time_s))
    return pool


def test_compiles_ten_times_a_timing_leave_one_timer_node_free():
    pool = measured(pool_of(*DEVICE), 3.0, 0.3)
    assert place(pool, 20) == ["compile"] * 6 + ["t0", "t0", "t1", "t1", "t2", "t2"]


def test_timings_as_long_as_compiles_keep_every_timer_node_free_of_compiles():
    assert place(measured(pool_of(*DEVICE), 1.0, 1.0), 20) == ["compile"] * 6


def test_a_timing_node_compiles_only_on_the_cores_its_timing_leaves():
    pool = pool_of(("compile", 1, 0), ("t0", 4, 1), ("t1", 4, 1))
    pool._timers["t0", 0].busy = True  # timing 2 threads on 4 cores
    assert place(pool, 10) == ["compile", "t0", "t0"]


def test_without_reserved_timing_cores_timer_nodes_leave_compiles_to_the_compile_node():
    assert place(pool_of(*DEVICE, timing_cpus=0), 20) == ["compile"] * 6


def test_a_lone_timer_node_beside_a_compile_node_never_compiles():
    assert place(pool_of(("compile", 2, 0), ("t0", 2, 1)), 5) == ["compile", "compile"]


def test_a_lone_timer_node_compiles_where_nothing_else_can():
    assert place(pool_of(("t0", 2, 1)), 5) == ["t0", "t0"]


def test_timer_nodes_without_a_compile_node_keep_one_of_them_free_of_compiles():
    assert sorted(place(pool_of(("t0", 2, 1), ("t1", 2, 1), ("t2", 2, 1)), 10)) == ["t0", "t0", "t1", "t1"]


def test_a_compiled_candidate_waiting_for_a_timer_stops_new_compiles_on_idle_timer_nodes():
    pool = pool_of(*DEVICE)
    place(pool, 8)  # the compile node full, t0 compiling two
    for key in (("t1", 0), ("t2", 0), ("t3", 0)):
        pool._timers[key].busy = True
    cand = _Candidate(0, "", None, None, None, Future())
    heapq.heappush(pool._ready, (1, 0, cand))
    pool._nodes["t0"].compiling = 1  # one of t0's compiles ended: its timer waits for the other
    assert not pool._may_time(pool._timers["t0", 0])  # no timing beside a compile
    assert pool._compile_node() is None  # and no new compile keeps it waiting


def test_a_timing_holds_its_cores_in_rays_accounting_so_other_drivers_compiles_keep_off_them():
    """Several tunes at once are several drivers: each knows only its own compiles, Ray all of them."""
    def claim(*node: tuple[str, int, int], timing_cpus: int = 2) -> int:
        pool = pool_of(node, timing_cpus=timing_cpus)
        return pool._timing_claim(pool._nodes[node[0]])

    assert claim("t0", 2, 1) == 2 and claim("big", 16, 4) == 2
    assert claim("two", 2, 2) == 1  # the node's share per slot: never more than the node in all
    assert claim("n", 8, 1, timing_cpus=1 << 20) == 8  # ALL_CORES: the node's cores
    assert claim("n", 8, 1, timing_cpus=0) == 0  # nothing reserved
    pool = pool_of(*DEVICE)
    assert pool._timing_claim(None) == 0


def test_this_pools_own_compiles_and_timings_never_claim_more_than_the_node_has():
    """What _may_time lets start never waits in Ray for cores this pool's compiles hold."""
    for cpus, slots, timing in ((2, 1, 2), (4, 1, 2), (8, 2, 2), (2, 2, 2), (16, 4, 4)):
        pool = pool_of(("n", cpus, slots), timing_cpus=timing)
        node = pool._nodes["n"]
        for compiling in range(cpus + 1):
            node.compiling = compiling
            for t in pool._timers.values():
                t.busy = False
            for t in pool._timers.values():
                if not pool._may_time(t):
                    break
                t.busy = True
                busy = sum(x.busy for x in pool._timers.values())
                assert compiling == 0 or compiling + busy * pool._timing_claim(node) <= cpus
