"""What a candidate's build and time steps share with the pools that run them, below both ``measure/`` and
``workers/``: ``Done`` (a build step's final value, nothing to time), the machine-wide timer lock, and the
``WorkerState`` a process keeps between the steps it runs.

A timing runs alone on its machine: ``TimerLock`` is an in-process lock plus an ``flock`` on
``default_lock_path()``, so two pools, two tunes or two polytune processes on one machine never time at once;
the pools take it around their time steps, a tune around the original's measurement and its re-run.
"""
from __future__ import annotations

import fcntl
import os
import tempfile
import threading
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
T = TypeVar("T")


@dataclass(frozen=True)
class Done:
    """Returned by a compile step: the candidate's final value, no timing needed."""

    value: Any


_PROCESS_TIMER = threading.Lock()  # one timing at a time in this process (the flock covers other processes)


def default_lock_path() -> str:
    """The machine-wide timer lock's file (one per user)."""
    return os.path.join(tempfile.gettempdir(), f"polytune-timer-{os.getuid()}.lock")


class TimerLock:
    """Held around every timed step: one timing at a time in this process and, with a path, on this machine."""

    def __init__(self, path: str | None = None):
        self.path = path
        self._fd: int | None = None

    def __enter__(self) -> TimerLock:
        _PROCESS_TIMER.acquire()
        if self.path is not None:
            try:
                self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
                fcntl.flock(self._fd, fcntl.LOCK_EX)
            except BaseException:
                self._close()
                _PROCESS_TIMER.release()
                raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._close()
        _PROCESS_TIMER.release()

    def _close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # releases the flock
            self._fd = None


class Latest(Generic[K, V]):
    """The latest ``limit`` entries put (a bench tunes kernel after kernel; several tunes may share a worker):
    putting one more drops the oldest."""

    def __init__(self, limit: int):
        self.limit = limit
        self._entries: dict[K, V] = {}
        self._lock = threading.Lock()  # (a local pool's compile threads share the driver's state)

    def get(self, key: K) -> V | None:
        return self._entries.get(key)

    def put(self, key: K, value: V) -> V:
        with self._lock:
            self._entries[key] = value
            while len(self._entries) > self.limit:
                del self._entries[next(iter(self._entries))]
        return value

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries


class WorkerState:
    """What one process keeps between the build and time steps it runs (a compile worker's analyzed programs
    and builds, a timer's serving process, a Ray worker's fetched references): one part per kind, made on first
    use by ``part(Kind)`` (``Kind()``; each kind is a class of the module whose step uses it). The steps take
    it as ``state`` (None: ``this_process()``), so that nothing in ``measure/`` is module-level state and a
    test can hand a step a fresh one."""

    def __init__(self) -> None:
        self._parts: dict[type, Any] = {}
        self._lock = threading.Lock()  # a local pool's timer thread and compile threads share the driver's

    def part(self, kind: type[T]) -> T:
        with self._lock:
            found = self._parts.get(kind)
            if found is None:
                found = self._parts[kind] = kind()
            return found


_THIS_PROCESS = WorkerState()  # the one per process (a worker process, a Ray worker, the tuning process)


def this_process() -> WorkerState:
    """This process's ``WorkerState``: what a step uses unless it is handed one."""
    return _THIS_PROCESS


__all__ = ["Done", "Latest", "TimerLock", "WorkerState", "default_lock_path", "this_process"]
