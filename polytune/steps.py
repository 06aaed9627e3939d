"""What a candidate's build and time steps share with the pools that run them, below both ``measure/`` and
``workers/``: ``Done`` (a build step's final value, nothing to time) and the machine-wide timer lock.

A timing runs alone on its machine: ``TimerLock`` is an in-process lock plus an ``flock`` on
``default_lock_path()``, so two pools, two tunes or two polytune processes on one machine never time at once;
the pools take it around their time steps, a tune around the original's measurement and its re-run.
"""
from __future__ import annotations

import fcntl
import os
import tempfile
import threading
from dataclasses import dataclass
from typing import Any


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


__all__ = ["Done", "TimerLock", "default_lock_path"]
