"""The pool on a Ray cluster: compiles on any accepted node, each node (or GPU) times one candidate at a time.

Exclusive timing comes from a custom resource declared when a node starts (``--resources
'{"polytune_timer": 1}'``): each unit of it on a node is a timer slot (each GPU with ``gpu=True``), and a
timing is a Ray task pinned to its node that holds one unit, so a slot times one candidate at a time. Timings
are tasks, not actors: they run in the node's pooled worker processes, already started and importing
polytune since the probe, where an actor per slot would start (and import into) a process of its own for
every tune (seconds, at each tune's start). Compiles are Ray tasks pinned to accepted nodes, at most one per
CPU, on the nodes without timer slots first; with ``timing_cpus`` also on the timer nodes' cores that no timing
holds, enough timer nodes kept free of compiles to time what compiles elsewhere (``RayPool._compile_node``). A
compile whose candidate the caller cancels (a dropped speculation) is stopped, so that its slot goes to one that
is needed.
Every node is probed for its ``MachineIdentity`` first; a timing node that differs from the reference
identity is refused (a one-line message, and the node is never used), because its times would be compared
with the others'; a node without timer slots only compiles, so it must match in what changes the compiled
code (architecture, CPU model, compiler), not in cores or memory. The reference is ``expect`` when given,
else the driver's machine if its node times candidates, else the first timing node Ray lists (the head
first). It is fixed for the pool's life.

A worker or node that dies mid-candidate costs that step a retry (up to ``MAX_ATTEMPTS`` tries in all), on
another node, or on the same one once a new probe answers from it. Results are set on the driver, once per
candidate, by one dispatcher thread: a timing whose result was lost with its node is measured again, never
recorded twice.
"""
from __future__ import annotations

import heapq
import itertools
import logging
import math
import os
import queue
import socket
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from functools import partial
from typing import Any

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from polytune.errors import UsageError
from polytune.steps import Done, TimerLock
from polytune.workers.base import Candidate, Progress, ProgressFn, Stage, WorkerLost, WorkResult
from polytune.workers.identity import MachineIdentity, choose_reference, cpu_list, local_identity, refusal
from polytune.workers.local import compile_step, pin_cpus, time_step

TIMER_RESOURCE = "polytune_timer"
# a node started with this in its environment (a taskset CPU list) times on those CPUs only, while its own Ray
# processes (raylet, agents) may run elsewhere: the timing task's worker pins itself there before it times
TIMER_CPUS_ENV = "POLYTUNE_TIMER_CPUS"
MAX_ATTEMPTS = 3
LOOPBACK = "127.0.0.1"
_log = logging.getLogger(__name__)


def connect(address: str = "auto", *, num_cpus: int | None = None, timers: int = 1,
            num_gpus: int | None = None) -> bool:
    """Join the Ray cluster at ``address`` (``HOST:PORT``, or ``ray://HOST:PORT`` for Ray Client).

    ``auto``: the cluster ``ray start`` runs on this machine if there is one, else a new private instance
    that listens on loopback only, with ``num_cpus`` CPUs (default: all), ``num_gpus`` GPUs (default: those
    Ray finds) and ``timers`` units of the timer resource. Returns True when it started that private
    instance (``disconnect()`` stops it).
    """
    if ray.is_initialized():
        return False
    if address != "auto":
        ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
        return False
    try:
        ray.init(address="auto", include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
        return False
    except ConnectionError:
        pass
    # Ray replaces 127.0.0.1 by the machine's network address unless clusters are turned off
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    from ray._private import ray_constants

    ray_constants.ENABLE_RAY_CLUSTER = False
    ray.init(num_cpus=num_cpus, num_gpus=num_gpus, resources={TIMER_RESOURCE: timers}, include_dashboard=False,
             _node_ip_address=LOOPBACK, log_to_driver=False)
    return True


def disconnect() -> None:
    ray.shutdown()


def _node_name(node_id: str) -> str:
    return f"{socket.gethostname()}/{node_id[:8]}"


def _pin_to_timer_cpus() -> None:
    """Move this worker (and what it starts: the timed runs) onto the node's ``TIMER_CPUS_ENV`` CPUs, if set."""
    spec = os.environ.get(TIMER_CPUS_ENV)
    if spec:
        pin_cpus(tuple(cpu_list(spec)))


@ray.remote(num_cpus=0, max_retries=0)
def _probe(identity: Callable[[], MachineIdentity]) -> tuple[str, MachineIdentity]:
    _pin_to_timer_cpus()  # the identity counts the cores a timing will have
    return _node_name(ray.get_runtime_context().get_node_id()), identity()


@ray.remote(num_cpus=1, max_retries=0)
def _compile(compile_fn: Callable[[Any], Any], payload: Any, pin: bool = True) -> tuple[Any, tuple[float, float], str]:
    if pin:  # on a timer node: its cores, free of timings while it compiles (RayPool._may_time)
        _pin_to_timer_cpus()
    artifact, span = compile_step(compile_fn, payload)
    return artifact, span, _node_name(ray.get_runtime_context().get_node_id())


def _warm(fn: Callable[[Any], Any], barrier: str, count: int, payload: Any, wait_s: float = 4.0) -> None:
    """A warm-up, run as a compile task that holds no CPU (so that its worker has loaded the compile task's
    definition too: on the dev box, one run each, the first compiles after warm-ups of their own task waited
    1.1-1.3 s for a worker, after these 0.01-0.3 s):
    ``fn(payload)``, then wait until the ``count`` warm-ups sharing the file ``barrier`` (on the node's machine)
    have run it, or ``wait_s``. One that ended at once would leave its worker to the next: the node's warm-ups
    would run one after another in one or two workers (a repeated import takes no time) instead of starting one
    worker each. The first to leave removes the file."""
    fn(payload)
    with open(barrier, "ab") as f:
        f.write(b".")
    deadline = time.monotonic() + wait_s
    try:
        while time.monotonic() < deadline and os.path.getsize(barrier) < count:
            time.sleep(0.02)
        os.unlink(barrier)
    except OSError:  # another warm-up left first and removed it
        pass


@ray.remote(num_cpus=0, max_retries=0)
def _time(time_fn: Callable[[Any], Any], artifact: Any, lock_path: str | None) -> tuple[Any, tuple[float, float], list]:
    """A timing, in one slot of its node (the caller pins it and asks for one unit of the slot's resource)."""
    _pin_to_timer_cpus()
    value, span = time_step(time_fn, artifact, TimerLock(lock_path) if lock_path else None)
    return value, span, [str(g) for g in ray.get_gpu_ids()]


ALL_CORES = 1 << 20  # timing_cpus: a timing takes every core of its node
# a timing's seconds per compile's before the pool has measured both (the fourth device run: 0.3-0.5 s timings,
# 1.2-3.5 s compiles): how many timers to keep free of compiles (RayPool._quiet_timers_needed)
TIME_PER_COMPILE = 0.25


@dataclass
class _Node:
    node_id: str
    address: str
    cpus: int
    timer_slots: int
    head: bool
    name: str = ""
    identity: MachineIdentity | None = None
    accepted: bool = False
    alive: bool = True
    compiling: int = 0
    timers: int = 0  # its timer slots in use by the pool (timer_slots once accepted and alive)


@dataclass
class _TimerRef:
    """One timer slot: a unit of the timer resource (or a GPU) on a node, running one timing at a time."""

    node_id: str
    slot: int
    name: str
    busy: bool = False


@dataclass
class _Candidate(Candidate):
    compiled_on: str = ""
    started: bool = False  # its future is running: its timing started once (and may be retried)
    stopping: bool = False  # cancelled while compiling: its compile task was asked to stop


class RayPool:
    """Same interface as ``LocalPool`` on the connected Ray cluster (call ``connect`` first).

    ``gpu``: one timer per GPU (``num_gpus=1``) instead of one per unit of ``resource``. ``jobs``: most compiles
    in flight over the cluster (default: one per CPU of the accepted nodes). ``identity``: a picklable
    callable run on each node to fingerprint it. ``on_refused``: gets each refusal's line (default: stderr).
    ``lock_path``: a file whose ``flock`` the CPU timers hold while timing (``local.default_lock_path()``: one
    timing per machine even with several nodes on it). None by default: several nodes on one machine are then
    on purpose (e.g. pinned to disjoint cores with ``taskset``) and time at once. GPU timers never use it.
    ``timing_cpus``: the cores a CPU timing occupies on its node (its threads; 0: none reserved; ``ALL_CORES``:
    every core of the node). A node then
    compiles only on the cores its running timings leave free, and a timing starts only once the node's
    compiles leave it those cores, so that no timing shares its cores with a compile (a 2-CPU node timing
    2 threads times on a quiet node, as the local pool's ``quiet`` does). Timer nodes then also take the
    compiles the compile-only nodes have no core for, enough of them kept free of compiles (``_compile_node``).
    """

    def __init__(self, *, gpu: bool = False, resource: str = TIMER_RESOURCE, jobs: int | None = None,
                 expect: MachineIdentity | None = None,
                 identity: Callable[[], MachineIdentity] = partial(local_identity, "gcc"),
                 on_progress: ProgressFn | None = None, on_refused: Callable[[str], object] | None = None,
                 lock_path: str | None = None, refresh_s: float = 5.0, probe_timeout: float = 120,
                 timing_cpus: int = 0):
        if not ray.is_initialized():
            raise UsageError("RayPool needs a Ray connection: call polytune.workers.ray_pool.connect first")
        self.gpu = gpu
        self.resource = "GPU" if gpu else resource
        self.jobs = jobs
        self._identity = identity
        self._on_progress = on_progress
        self._on_refused = on_refused or (lambda line: print(line, file=sys.stderr))
        self._lock_path = None if gpu else lock_path
        self.timing_cpus = 0 if gpu else max(0, timing_cpus)
        self._refresh_s = refresh_s
        self.refused: dict[str, str] = {}  # node id -> message
        self._nodes: dict[str, _Node] = {}
        self._timers: dict[tuple[str, int], _TimerRef] = {}  # (node id, slot) -> timer slot
        self._tickets = itertools.count()
        self._submits: queue.Queue = queue.Queue()
        self._pending: deque[_Candidate] = deque()
        self._ready: list[tuple[int, int, _Candidate]] = []  # (0 for a retried timing, ticket, candidate)
        self._inflight: dict[Any, tuple[str, Any, Any]] = {}  # ref -> (kind, candidate or node/timer, where)
        self._last_refresh = 0.0
        self._warm_requests: deque[tuple[Callable[[Any], Any], Any]] = deque()  # from any thread
        self._warmed: set[tuple] = set()
        self._barriers = itertools.count()  # the warm-ups' barrier files (_warm): one name each
        self._warm_early = False
        # what the compiles went to (``stats``): started, on timer nodes, and those whose candidate was dropped
        # (a speculation the search no longer wanted) after its compile had started
        self._stats = {"compiles": 0, "on_timer_nodes": 0, "discarded": 0, "discarded_s": 0.0, "stopped": 0}
        self._durations = {"compile": (0.0, 0), "time": (0.0, 0)}  # (seconds, count) of the steps that finished
        self._closed = False
        self._stop = threading.Event()
        start = time.time()
        self.reference = self._first_probe(expect, probe_timeout)
        self.startup_s = time.time() - start  # probing the nodes (the first task on each: its worker's start)
        self._thread = threading.Thread(target=self._dispatch, name="polytune-ray-dispatch", daemon=True)
        self._thread.start()

    # ---- public --------------------------------------------------------------------------------------
    @property
    def workers(self) -> list[str]:
        """Names of the live timer slots (``host/node``, ``host/node/tK`` where a node has several, or
        ``host/node/gpuN``)."""
        return sorted(t.name for t in self._timers.values())

    @property
    def timers(self) -> int:
        """How many candidates it times at once: its live timer slots."""
        return len(self._timers)

    def submit(self, compile_fn: Callable[[Any], Any], time_fn: Callable[[Any], Any], payload: Any,
               label: str = "") -> Future:
        if self._closed:
            raise RuntimeError("the pool is closed")
        cand = _Candidate(next(self._tickets), label, compile_fn, time_fn, payload, Future(), submitted=time.time())
        self._submits.put(cand)
        return cand.future

    def warm(self, fn: Callable[[Any], Any], payload: Any, early: bool = False) -> None:
        """Start the compile workers now, before the first candidates need them: ``fn(payload)`` (e.g. importing
        the compile step's module) once per CPU of the nodes that compile (those without timer slots where
        there are any, else every accepted node), in compile tasks
        that hold no CPU, so that no compile waits for one, each waiting for the node's others (``_warm``: one
        worker each). A Ray worker process starts and imports polytune at its first task: a second or more,
        paid by the first candidates of every tune otherwise. The warm-ups start once the first compile has its
        worker, or at once with ``early`` (the caller has seconds of other work before its first candidate,
        e.g. measuring the original: the seed's compile then finds its workers started and no import running
        beside it). A request made before (the same ``fn`` and ``payload``) is ignored. Nothing comes back; a
        failure is logged."""
        key = (getattr(fn, "__module__", None), getattr(fn, "__qualname__", repr(fn)), repr(payload))
        if key in self._warmed:
            return
        self._warmed.add(key)
        self._warm_requests.append((fn, payload))
        if early:
            self._warm_early = True

    def stats(self) -> dict:
        """Counts of the compiles so far: ``compiles`` started, ``on_timer_nodes`` of them, ``discarded``: compiles
        whose candidate was cancelled once its compile had started and that finished (``discarded_s``: their
        seconds), work that held a compile slot for nothing; ``stopped``: those stopped before they finished."""
        return dict(self._stats, discarded_s=round(self._stats["discarded_s"], 3))

    def _start_warming(self) -> None:
        # after the first compile has its worker (the probe's, idle): a warm-up queued before it would take
        # that worker and keep the first compile waiting for a new one
        if not self._warm_early and not any(kind == "compile" for kind, _, _ in self._inflight.values()):
            return
        while self._warm_requests:
            fn, payload = self._warm_requests.popleft()
            nodes = [n for n in self._nodes.values() if n.accepted and n.alive and n.cpus]
            # the nodes that compile first (_compile_node): those without timer slots where there are any. Timer
            # nodes compile only what those have no core for, in the worker their probe started; warming them
            # too started ~14 workers at once on the 16-core machine's service cores, and the first compiles and
            # timings waited 5-7 s for workers (the seventh device run's seed evaluations: 6-9 s)
            first = [n for n in nodes if not n.timer_slots] or nodes
            for node in first:
                strategy = NodeAffinitySchedulingStrategy(node.node_id, soft=False)
                barrier = os.path.join(tempfile.gettempdir(), f"polytune-warm-{os.getpid()}-{id(self):x}-"
                                       f"{node.node_id[:12]}-{next(self._barriers)}")
                step = partial(_warm, fn, barrier, node.cpus)
                for _ in range(node.cpus):
                    ref = _compile.options(num_cpus=0, scheduling_strategy=strategy).remote(step, payload, False)
                    self._inflight[ref] = ("warm", node, None)

    def close(self) -> None:
        """Cancel what has not started timing, let running timings finish."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        self._thread.join()
        self._timers.clear()

    def __enter__(self) -> RayPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- nodes ---------------------------------------------------------------------------------------
    def _alive_nodes(self) -> list[dict]:
        return [n for n in ray.nodes() if n.get("Alive")]

    def _new_node(self, info: dict) -> _Node:
        res = info.get("Resources", {})
        return _Node(info["NodeID"], info.get("NodeManagerAddress", "?"), int(res.get("CPU", 0)),
                     int(res.get(self.resource, 0)), "node:__internal_head__" in res)

    def _probe_ref(self, node: _Node):
        strategy = NodeAffinitySchedulingStrategy(node.node_id, soft=False)
        return _probe.options(scheduling_strategy=strategy).remote(self._identity)

    def _first_probe(self, expect: MachineIdentity | None, timeout: float) -> MachineIdentity:
        nodes = [self._new_node(info) for info in self._alive_nodes()]
        refs = [self._probe_ref(n) for n in nodes]
        results = ray.get(refs, timeout=timeout)
        for node, (name, ident) in zip(nodes, results):
            node.name, node.identity = name, ident
            self._nodes[node.node_id] = node
        driver = ray.get_runtime_context().get_node_id()
        reference = choose_reference([(n.node_id, n.head, n.timer_slots > 0, n.identity) for n in nodes],
                                     driver, expect)
        if reference is None:
            what = "a GPU" if self.gpu else f"the resource {self.resource!r} (ray start --resources " \
                                            f"'{{\"{self.resource}\": 1}}')"
            raise UsageError(f"no Ray node offers {what}: no node can time candidates")
        for node in nodes:
            self._judge(node, reference)
        if not any(n.accepted and n.timer_slots for n in nodes):
            raise UsageError("every Ray node that can time candidates was refused: "
                             + " | ".join(self.refused.values()))
        if not any(n.accepted and n.cpus for n in nodes):
            raise UsageError("no accepted Ray node has a CPU to compile on (ray start --num-cpus)")
        self._last_refresh = time.monotonic()
        for node in nodes:
            self._open_slots(node)
        return reference

    def _judge(self, node: _Node, reference: MachineIdentity) -> None:
        """Accept *node* if it times like the reference (a timing node) or compiles like it (a compile node)."""
        same = node.identity == reference if node.timer_slots else not reference.code_differences(node.identity)
        if same:
            node.accepted = True
            return
        line = refusal(node.name, node.address, node.identity, reference, compiles_only=not node.timer_slots)
        self.refused[node.node_id] = line
        self._on_refused(line)

    def _slot_name(self, node: _Node, slot: int) -> str:
        if self.gpu:
            return f"{node.name}/gpu{slot}"
        return node.name if node.timer_slots == 1 else f"{node.name}/t{slot}"

    def _open_slots(self, node: _Node) -> None:
        """The timer slots of an accepted, live node (nothing starts: a slot is a unit of its resource)."""
        if not (node.accepted and node.alive):
            return
        for slot in range(node.timer_slots):
            if (node.node_id, slot) not in self._timers:
                self._timers[node.node_id, slot] = _TimerRef(node.node_id, slot, self._slot_name(node, slot))
        node.timers = node.timer_slots

    def _close_slots(self, node: _Node) -> None:
        """A node left: its idle slots go now, a busy one when its timing's failure comes back."""
        for key, timer in list(self._timers.items()):
            if timer.node_id == node.node_id and not timer.busy:
                del self._timers[key]
        node.timers = sum(1 for t in self._timers.values() if t.node_id == node.node_id)

    def _refresh(self) -> None:
        self._last_refresh = time.monotonic()
        alive = {info["NodeID"]: info for info in self._alive_nodes()}
        for node_id, node in self._nodes.items():
            if node.alive and node_id not in alive:
                node.alive = False
                self._close_slots(node)
                _log.info("Ray node %s left", node.name)
        for node_id, info in alive.items():
            if node_id not in self._nodes:
                node = self._new_node(info)
                node.alive = False  # until its probe answers
                self._nodes[node_id] = node
                self._inflight[self._probe_ref(node)] = ("probe", node, None)
        for node in self._nodes.values():
            self._open_slots(node)

    # ---- dispatcher ----------------------------------------------------------------------------------
    def _emit(self, cand: _Candidate, stage: Stage, worker: str) -> None:
        if self._on_progress is not None:
            try:
                self._on_progress(Progress(cand.ticket, cand.label, stage, worker))
            except Exception:
                _log.exception("progress callback failed")

    def _dispatch(self) -> None:
        while not self._stop.is_set():
            while True:
                try:
                    self._pending.append(self._submits.get_nowait())
                except queue.Empty:
                    break
            if time.monotonic() - self._last_refresh > self._refresh_s:
                self._refresh()
            self._stop_dropped()
            self._pump()
            self._start_warming()
            if not self._inflight:
                try:
                    self._pending.append(self._submits.get(timeout=0.2))
                except queue.Empty:
                    pass
                continue
            done, _ = ray.wait(list(self._inflight), num_returns=1, timeout=0.1)
            for ref in done:
                self._finished(ref)
        self._shutdown()

    def _shutdown(self) -> None:
        while True:
            try:
                self._pending.append(self._submits.get_nowait())
            except queue.Empty:
                break
        timing = []
        for ref, (kind, obj, _) in list(self._inflight.items()):
            if kind == "compile":
                obj.future.cancel()
                ray.cancel(ref, force=True)
            elif kind == "time":
                timing.append(ref)
        for ref in timing:  # a timing that started is delivered
            ray.wait([ref], timeout=None)
            self._finished(ref)
        for cand in itertools.chain(self._pending, (c for _, _, c in self._ready)):
            if not cand.future.cancel():
                self._fail(cand, WorkerLost(f"candidate {cand.label or cand.ticket}: the pool closed before "
                                            "its retried timing ran"))

    def _stop_dropped(self) -> None:
        """Cancel the running compiles of candidates the caller dropped (a speculation the search no longer
        wants), so that their slots go to candidates that are needed. Ray raises KeyboardInterrupt in the task
        at its next Python step (after the isl call or the compiler run in progress: ``force`` would kill the
        worker, and the next compile there would wait for a new one to start and import polytune); the
        worker stays."""
        for ref, (kind, cand, _) in self._inflight.items():
            if kind == "compile" and not cand.stopping and cand.future.cancelled():
                cand.stopping = True
                ray.cancel(ref, force=False)

    def _timing_cpus(self, node: _Node) -> int:
        """The cores of *node* its running timings occupy."""
        busy = sum(1 for t in self._timers.values() if t.busy and t.node_id == node.node_id)
        return min(node.cpus, busy * self.timing_cpus)

    def _timing_claim(self, node: _Node | None) -> int:
        """The CPUs a timing on *node* holds in Ray's own accounting: the cores it occupies (``timing_cpus``), at
        most the node's share per timer slot. This pool never waits for them (``_may_time`` and ``_compile_node``
        keep its own compiles off them); they keep off the compiles of other drivers on the cluster (several
        tunes at once, ``polytune bench --tunes-at-once``), which Ray then places only on the cores left free."""
        if node is None or not self.timing_cpus or not node.cpus:
            return 0
        return min(self.timing_cpus, node.cpus // max(1, node.timer_slots))

    def _may_time(self, timer: _TimerRef) -> bool:
        """Whether *timer* can start a timing now: its node's compiles leave it the cores a timing takes."""
        node = self._nodes.get(timer.node_id)
        if node is None or not self.timing_cpus:
            return True
        return node.compiling + self._timing_cpus(node) + min(node.cpus, self.timing_cpus) <= node.cpus \
            or node.compiling == 0

    def _compile_node(self) -> _Node | None:
        """Where the next compile goes: a node without timer slots with a free core, the least busy first;
        where there is none, a timer node on the cores its timings leave free.

        Without ``timing_cpus``, timer nodes compile only where the cluster has no other node (a compile beside a
        timing would slow it). With it, they compile on their free cores (no timing starts beside a compile,
        see ``_may_time``) while enough timer slots stay on nodes free of compiles (``_quiet_timers_needed``, at
        least one; a lone timer node that is all there is compiles), so that compiled candidates find timers
        at once; the timer nodes compiling already are filled first, to keep the others free. A compile takes
        5-10 times a timing (the fourth device run: 1.2-3.5 s against 0.3-0.5 s, timers busy 8-16%): timers
        left idle while the compile-only nodes are full kept the pool bound by compiles."""
        live = [n for n in self._nodes.values() if n.accepted and n.alive and n.cpus]
        compile_only = [n for n in live if not n.timer_slots]
        limit = self.jobs if self.jobs is not None else sum(n.cpus for n in live)
        if sum(n.compiling for n in self._nodes.values()) >= limit:
            return None
        free = [n for n in compile_only if n.compiling < n.cpus]
        if free:
            return min(free, key=lambda n: (n.compiling / max(n.cpus, 1), n.node_id))
        if compile_only and not self.timing_cpus:
            return None
        timing = [n for n in live if n.timer_slots and n.timers]
        nodes = [n for n in timing if n.compiling < n.cpus - self._timing_cpus(n) and not self._timer_waiting(n)]
        if self.timing_cpus and (compile_only or len(timing) > 1):  # timer nodes without compiles stay
            quiet = sum(n.timers for n in timing if not n.compiling)
            keep = self._quiet_timers_needed(compile_only)
            nodes = [n for n in nodes if n.compiling or quiet - n.timers >= keep]
        if not nodes:
            return None
        pack = bool(self.timing_cpus)  # without: compiles beside timings, spread
        return min(nodes, key=lambda n: (pack and not n.compiling, n.compiling / max(n.cpus, 1), n.node_id))

    def _quiet_timers_needed(self, compile_only: list[_Node]) -> int:
        """Timer slots to keep free of compiles: enough to time, while a compile started now runs, the candidates
        compiled meanwhile (ready, or compiling on the compile-only nodes): their count x the mean timing over the
        mean compile (``TIME_PER_COMPILE`` until both were measured); at least one."""
        durations = self._durations
        ratio = durations["time"][0] / durations["time"][1] / (durations["compile"][0] / durations["compile"][1]) \
            if durations["time"][1] and durations["compile"][1] and durations["compile"][0] > 0 \
            else TIME_PER_COMPILE
        coming = len(self._ready) + sum(n.compiling for n in compile_only)
        return max(1, math.ceil(coming * ratio - 1e-9))

    def _pump(self) -> None:
        self._start_timings()  # ready candidates first: a timer waiting for its node's cores gets them
        while self._pending:
            node = self._compile_node()
            if node is None:
                break
            cand = self._pending.popleft()
            if cand.future.cancelled():
                continue
            cand.attempts += 1
            node.compiling += 1
            self._stats["compiles"] += 1
            self._stats["on_timer_nodes"] += bool(node.timer_slots)
            strategy = NodeAffinitySchedulingStrategy(node.node_id, soft=False)
            ref = _compile.options(scheduling_strategy=strategy).remote(cand.compile_fn, cand.payload)
            self._inflight[ref] = ("compile", cand, node)
            self._emit(cand, Stage.COMPILE, node.name)
        self._start_timings()

    def _timer_waiting(self, node: _Node) -> bool:
        """Whether a candidate is ready to time and an idle timer of *node* waits for its compiles to end (no
        new compile goes there meanwhile, or compiles would keep the timing waiting)."""
        return bool(self.timing_cpus and self._ready) and any(
            not t.busy and t.node_id == node.node_id for t in self._timers.values())

    def _start_timings(self) -> None:
        idle = sorted((t for t in self._timers.values() if not t.busy and self._may_time(t)), key=lambda t: t.name)
        for timer in idle:
            while self._ready:
                _, _, cand = heapq.heappop(self._ready)
                if cand.started or cand.future.set_running_or_notify_cancel():
                    cand.started = True
                    break
            else:
                return
            timer.busy = True
            strategy = NodeAffinitySchedulingStrategy(timer.node_id, soft=False)
            node = self._nodes.get(timer.node_id)
            need = {"num_gpus": 1} if self.gpu else {"resources": {self.resource: 1},
                                                      "num_cpus": self._timing_claim(node)}
            ref = _time.options(scheduling_strategy=strategy, **need).remote(cand.time_fn, cand.artifact,
                                                                             self._lock_path)
            self._inflight[ref] = ("time", cand, timer)
            self._emit(cand, Stage.TIME, timer.name)

    def _finished(self, ref) -> None:
        kind, obj, where = self._inflight.pop(ref)
        try:
            result = ray.get(ref)
        except ray.exceptions.TaskCancelledError:  # a dropped candidate's compile, stopped (_stop_dropped)
            if kind == "compile":
                where.compiling -= 1
                self._stats["stopped"] += 1
            return
        except ray.exceptions.RayTaskError as exc:  # the step itself raised: a bug, reported, not retried
            if kind == "compile":
                where.compiling -= 1
            if kind == "time":
                where.busy = False
            if kind in ("compile", "time"):
                self._fail(obj, exc.as_instanceof_cause())
            else:
                self._lost(kind, obj, where, exc)
            return
        except (ray.exceptions.RayError, ConnectionError) as exc:  # a worker or node died
            self._lost(kind, obj, where, exc)
            return
        if kind == "warm":
            return
        if kind == "probe":
            obj.name, obj.identity = result
            obj.alive = True
            self._judge(obj, self.reference)
            self._open_slots(obj)
        elif kind == "compile":
            where.compiling -= 1
            self._measured("compile", result[1])
            self._compiled(obj, *result)
        elif kind == "time":
            where.busy = False
            value, span, gpus = result
            self._measured("time", span)
            node = self._nodes[where.node_id]
            name = f"{node.name}/gpu{gpus[0]}" if self.gpu and gpus else where.name  # the GPU Ray gave it
            obj.future.set_result(WorkResult(obj.ticket, obj.label, value, name, obj.compiled_on, True,
                                             obj.attempts, obj.compile_span, span, obj.submitted, obj.artifact))
            self._emit(obj, Stage.DONE, name)

    def _measured(self, kind: str, span: tuple[float, float]) -> None:
        total, count = self._durations[kind]
        self._durations[kind] = (total + max(0.0, span[1] - span[0]), count + 1)

    def _fail(self, cand: _Candidate, exc: BaseException) -> None:
        if not cand.future.done():
            cand.future.set_exception(exc)

    def _compiled(self, cand: _Candidate, artifact: Any, span: tuple[float, float], name: str) -> None:
        if cand.future.cancelled():
            self._stats["discarded"] += 1
            self._stats["discarded_s"] += span[1] - span[0]
            return
        cand.compiled_on, cand.compile_span = name, span
        if isinstance(artifact, Done):
            if cand.future.set_running_or_notify_cancel():
                cand.future.set_result(WorkResult(cand.ticket, cand.label, artifact.value, name, name, False,
                                                  cand.attempts, span, None, cand.submitted))
                self._emit(cand, Stage.DONE, name)
            return
        cand.artifact = artifact
        heapq.heappush(self._ready, (1, cand.ticket, cand))

    def _lost(self, kind: str, obj: Any, where: Any, exc: BaseException) -> None:
        _log.info("Ray %s lost: %s", kind, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        if kind in ("probe", "warm"):
            return  # the node left before answering (a later refresh may see it again), or a warm-up failed
        if kind == "time":
            where.busy = False
        if kind == "compile":
            where.compiling -= 1
        # a worker died, maybe with its node: no step goes there until a new probe answers from it
        node = self._nodes.get(where.node_id)
        if node is not None and node.alive:
            node.alive = False
            self._close_slots(node)
            self._inflight[self._probe_ref(node)] = ("probe", node, None)
        self._last_refresh = 0.0  # look at the nodes again now
        cand = obj
        if cand.attempts >= MAX_ATTEMPTS:
            self._fail(cand, WorkerLost(f"candidate {cand.label or cand.ticket}: its worker died "
                                        f"{cand.attempts} times"))
            return
        cand.attempts += 1 if kind == "time" else 0  # a compile's next try counts itself when it starts
        if kind == "time":
            # the artifact is held here, on the driver: only the timing is repeated, on another timer. The
            # future is running already, so it cannot be cancelled or delivered twice.
            self._emit(cand, Stage.RETRY, where.name)
            heapq.heappush(self._ready, (0, cand.ticket, cand))
        else:
            self._emit(cand, Stage.RETRY, where.name)
            self._pending.appendleft(cand)
