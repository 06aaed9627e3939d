"""Local pool: compiles in parallel (``jobs`` processes), timings one at a time on the machine.

A dispatcher thread owns all state; the executors only post events to its queue, so no state is shared
between threads. The timed step runs in one timer thread of this process, inside ``TimerLock``
(``polytune.steps``): an in-process lock plus an ``flock`` on a file in the temporary directory, so two pools,
or two polytune processes, on one machine never time at the same time. A candidate's future stays pending until its
timing starts, so ``future.cancel()`` drops a speculative candidate even after it was compiled.
"""
from __future__ import annotations

import heapq
import itertools
import logging
import multiprocessing
import os
import queue
import signal
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

from polytune.steps import Done, TimerLock, default_lock_path
from polytune.workers.base import Candidate, Progress, ProgressFn, Stage, WorkerLost, WorkResult
from polytune.workers.identity import usable_cores

MAX_ATTEMPTS = 3

WORKER_REIMPORT = ("polytune: a compile worker ran the script that calls polytune again while starting (Python "
                   "starts each worker process by importing the main script): put that code under "
                   "`if __name__ == \"__main__\":`")


def _refuse_while_a_worker_starts() -> None:
    """A pool opened while this process is a worker that is still importing the main script (a script that
    calls tune() at its top level, unguarded) would start workers of its own, forever: say why in one line and
    end this worker (its pool's candidates then fail with WorkerLost) instead."""
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        print(WORKER_REIMPORT, file=sys.stderr, flush=True)
        os._exit(2)


def compile_step(compile_fn: Callable[[Any], Any], payload: Any) -> tuple[Any, tuple[float, float]]:
    """Run a compile step and time its span (module level: it is pickled into a worker process)."""
    start = time.time()
    artifact = compile_fn(payload)
    return artifact, (start, time.time())


def time_step(time_fn: Callable[[Any], Any], artifact: Any, lock: TimerLock | None) -> tuple[Any, tuple[float, float]]:
    """Run a timed step inside ``lock`` (when given) and report its span."""
    if lock is None:
        start = time.time()
        return time_fn(artifact), (start, time.time())
    with lock:
        start = time.time()
        value = time_fn(artifact)
        return value, (start, time.time())


@dataclass
class _Candidate(Candidate):
    slot: int = -1  # the compile slot (c0, c1, ...) it holds while compiling
    generation: int = 0
    extra: dict = field(default_factory=dict)


class LocalPool:
    """Compile ``jobs`` candidates at once; time one at a time. Results arrive through futures as they finish.

    ``processes``: compile in worker processes (default; code generation in Python needs them) or threads
    (for compile steps that only wait on a compiler subprocess, or callables that cannot be pickled).
    ``quiet``: no compile runs while a candidate is timed (a timing waits for running compiles to finish, and
    queued compiles wait for the timings of the compiled ones): for timed runs that use every core.
    ``lock_path``: the file whose ``flock`` makes the timing exclusive machine-wide; None: only in-process.
    ``compile_cpus``: the cores the compile processes (and the compilers they run) may use, so that the
    others stay free for the timings (``open_pool``'s ``timing_cpus``); None: any. ``timing_cpus``: the cores
    of the timer thread and so of the runs it times (a thread's affinity passes to the processes it starts).
    """

    def __init__(self, jobs: int | None = None, *, processes: bool = True, quiet: bool = False,
                 lock_path: str | None = default_lock_path(), on_progress: ProgressFn | None = None,
                 mp_context: str = "forkserver", compile_cpus: tuple[int, ...] | None = None,
                 timing_cpus: tuple[int, ...] | None = None):
        if processes:
            _refuse_while_a_worker_starts()
        self.jobs = max(1, jobs if jobs is not None else usable_cores())
        self.quiet = quiet
        self.compile_cpus = tuple(compile_cpus) if compile_cpus and processes else None
        self.host = socket.gethostname()
        self.timer_name = f"{self.host}/timer"
        self._processes = processes
        self._mp_context = mp_context
        self._lock = TimerLock(lock_path)
        self._on_progress = on_progress
        self._tickets = itertools.count()
        self._events: queue.Queue = queue.Queue()
        self._generation = 0
        self._compiler = self._new_compiler()
        self.timing_cpus = tuple(timing_cpus) if timing_cpus else None
        self._timer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="polytune-timer",
                                         initializer=pin_cpus if self.timing_cpus else None,
                                         initargs=(self.timing_cpus,) if self.timing_cpus else ())
        # dispatcher state (touched by the dispatcher thread only)
        self._pending: deque[_Candidate] = deque()
        self._ready: list[tuple[int, _Candidate]] = []
        self._free_slots = list(range(self.jobs))
        self._compiling = 0
        self._timing = False
        self._stats = {"compiles": 0, "discarded": 0, "discarded_s": 0.0}  # see stats()
        self._closed = False
        self._thread = threading.Thread(target=self._dispatch, name="polytune-dispatch", daemon=True)
        self._thread.start()

    # ---- public --------------------------------------------------------------------------------------
    @property
    def workers(self) -> list[str]:
        return [f"{self.host}/c{i}" for i in range(self.jobs)] + [self.timer_name]

    timers = 1  # one timing at a time on the machine

    def submit(self, compile_fn: Callable[[Any], Any], time_fn: Callable[[Any], Any], payload: Any,
               label: str = "") -> Future:
        """Queue a candidate; the future's result is a ``WorkResult``. Candidates compile in submission order."""
        if self._closed:
            raise RuntimeError("the pool is closed")
        cand = _Candidate(next(self._tickets), label, compile_fn, time_fn, payload, Future(), submitted=time.time())
        self._events.put(("submit", cand, None))
        return cand.future

    def warm(self, fn: Callable[[Any], Any], payload: Any, early: bool = False) -> None:
        """(Its compile processes start with the pool and import polytune as they start: nothing to warm.)"""

    def stats(self) -> dict:
        """Counts of the compiles so far: ``compiles`` started, ``discarded``: those whose candidate was cancelled
        once its compile had started (``discarded_s``: their seconds)."""
        return dict(self._stats, discarded_s=round(self._stats["discarded_s"], 3))

    def close(self) -> None:
        """Cancel what has not started, let running steps finish, stop the workers."""
        if self._closed:
            return
        self._closed = True
        self._events.put(("close", None, None))
        self._thread.join()
        self._compiler.shutdown(wait=True, cancel_futures=True)
        self._timer.shutdown(wait=True)

    def __enter__(self) -> LocalPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- dispatcher ----------------------------------------------------------------------------------
    def _new_compiler(self) -> Executor:
        if not self._processes:
            return ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="polytune-compile")
        methods = multiprocessing.get_all_start_methods()
        ctx = multiprocessing.get_context(self._mp_context if self._mp_context in methods else "spawn")
        return ProcessPoolExecutor(max_workers=self.jobs, mp_context=ctx, initializer=start_compile_worker,
                                   initargs=(self.compile_cpus or (),))

    def _emit(self, cand: _Candidate, stage: Stage, worker: str) -> None:
        if self._on_progress is not None:
            try:
                self._on_progress(Progress(cand.ticket, cand.label, stage, worker))
            except Exception:  # a display's bug must not stop the dispatcher
                logging.getLogger(__name__).exception("progress callback failed")

    def _dispatch(self) -> None:
        closing = False
        while True:
            kind, cand, outcome = self._events.get()
            if kind == "submit":
                self._pending.append(cand)
            elif kind == "compiled":
                self._compiled(cand, outcome)
            elif kind == "timed":
                self._timed(cand, outcome)
            elif kind == "close":
                closing = True
            if not closing:
                self._pump()
                continue
            for c in itertools.chain(self._pending, (c for _, c in self._ready)):
                c.future.cancel()
            self._pending.clear()
            self._ready.clear()
            if self._compiling == 0 and not self._timing:
                return

    def _pump(self) -> None:
        while self._pending and self._free_slots and not (self.quiet and (self._timing or self._ready)):
            cand = self._pending.popleft()
            if cand.future.cancelled():
                continue
            cand.attempts += 1
            cand.slot = heapq.heappop(self._free_slots)
            cand.generation = self._generation
            self._compiling += 1
            self._stats["compiles"] += 1
            self._emit(cand, Stage.COMPILE, f"{self.host}/c{cand.slot}")
            try:
                fut = self._submit_compile(cand)
            except Exception as exc:  # no worker could start: the candidate fails, the dispatcher goes on
                fut = Future()
                fut.set_exception(exc)
            fut.add_done_callback(lambda f, c=cand: self._events.put(("compiled", c, f)))
        if self._timing or (self.quiet and self._compiling):
            return
        while self._ready:
            _, cand = heapq.heappop(self._ready)
            if not cand.future.set_running_or_notify_cancel():
                continue  # cancelled after its compile: a discarded speculative candidate
            self._timing = True
            self._emit(cand, Stage.TIME, self.timer_name)
            fut = self._timer.submit(time_step, cand.time_fn, cand.artifact, self._lock)
            fut.add_done_callback(lambda f, c=cand: self._events.put(("timed", c, f)))
            return

    def _submit_compile(self, cand: _Candidate) -> Future:
        try:
            return self._compiler.submit(compile_step, cand.compile_fn, cand.payload)
        except BrokenProcessPool:
            # a compile worker died after the last submit and before its candidates' failures reach the
            # dispatcher (they are retried then, as theirs is an older generation): this one goes to a new pool
            self._renew_compiler()
            cand.generation = self._generation
            return self._compiler.submit(compile_step, cand.compile_fn, cand.payload)

    def _renew_compiler(self) -> None:
        self._compiler.shutdown(wait=False, cancel_futures=True)
        self._generation += 1
        self._compiler = self._new_compiler()

    def _compiled(self, cand: _Candidate, fut: Future) -> None:
        self._compiling -= 1
        heapq.heappush(self._free_slots, cand.slot)
        if cand.future.cancelled():
            if not fut.cancelled() and fut.exception() is None:
                self._stats["discarded"] += 1
                span = fut.result()[1]
                self._stats["discarded_s"] += span[1] - span[0]
            return
        if fut.cancelled():  # dropped with a broken pool (shutdown cancels its queue): compiled again
            self._retry(cand)
            return
        try:
            artifact, span = fut.result()
        except BrokenProcessPool:
            # a compile worker died (killed, out of memory): every compile in flight failed with it
            if cand.generation == self._generation:
                self._renew_compiler()
            self._retry(cand)
            return
        except BaseException as exc:  # a bug in compile_fn: the caller sees it
            cand.future.set_exception(exc)
            return
        cand.compile_span = span
        if isinstance(artifact, Done):
            if cand.future.set_running_or_notify_cancel():
                worker = f"{self.host}/c{cand.slot}"
                cand.future.set_result(WorkResult(cand.ticket, cand.label, artifact.value, worker, worker, False,
                                                  cand.attempts, span, None, cand.submitted))
                self._emit(cand, Stage.DONE, worker)
            return
        cand.artifact = artifact
        heapq.heappush(self._ready, (cand.ticket, cand))

    def _retry(self, cand: _Candidate) -> None:
        if cand.attempts >= MAX_ATTEMPTS:
            cand.future.set_exception(WorkerLost(f"candidate {cand.label or cand.ticket}: its worker died "
                                                 f"{cand.attempts} times (a worker that dies as it starts: "
                                                 "see its message above)"))
            return
        self._emit(cand, Stage.RETRY, f"{self.host}/c{cand.slot}")
        self._pending.appendleft(cand)

    def _timed(self, cand: _Candidate, fut: Future) -> None:
        self._timing = False
        try:
            value, span = fut.result()
        except BaseException as exc:  # a bug in time_fn
            cand.future.set_exception(exc)
            return
        cand.future.set_result(WorkResult(cand.ticket, cand.label, value, self.timer_name,
                                          f"{self.host}/c{cand.slot}", True, cand.attempts, cand.compile_span, span,
                                          cand.submitted, cand.artifact))
        self._emit(cand, Stage.DONE, self.timer_name)


def split_cores(timing: int) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """(the timing cores, the compile cores): the first *timing* of the cores this process may use, and the
    others; None where *timing* leaves none over (or is 0)."""
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if not 0 < timing < len(cores):
        return None
    return tuple(cores[:timing]), tuple(cores[timing:])


def start_compile_worker(cpus: tuple[int, ...]) -> None:
    """A compile process's start: Ctrl-C (SIGINT, sent to the whole process group by the terminal) is the
    tuning process's to handle (it stops the search, then closes this pool), not a traceback here; on *cpus*."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if cpus:
        pin_cpus(cpus)


def pin_cpus(cpus: tuple[int, ...]) -> None:
    """The calling thread (a compile process's initializer, the timer thread's, a Ray node's timing task) and
    the processes it starts run on *cpus* only (on Linux, 0 is the calling thread)."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, set(cpus))
