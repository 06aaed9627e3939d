"""A wall-clock limit on isl work: the work runs in a worker process, which is killed at its deadline.

isl's operation quota (``poly/islutil.bounded``) counts simplex pivots, and a pivot's cost grows with the
tableau and the length of its numbers: 0.4 ms on issue 33's 8-statement region, microseconds on gemm, so no
quota is both loose enough for heat-3d and tight enough there. islpy holds the GIL in every isl call, so no
thread of the process can stop one (``Context.abort`` from a timer thread ran only once the 52 s call had
returned); a process can be killed. The worker reports as it goes (``send``): what it has finished is kept,
what it was doing at the deadline is named. What crosses the boundary: the target's arguments (with fork
nothing is copied; with forkserver they are pickled: paths, options) and the messages it sends (text,
report entries); isl objects never do. A worker's temporary files (the preprocessor's copies of the file:
frontend.macro_guards) go to a directory of the parent's, removed once the worker has ended, so a killed
worker leaves none behind.
"""
from __future__ import annotations

import multiprocessing
import os
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from . import errors

DEFAULT_TIME_LIMIT = 30.0  # seconds: optimize's default (--time-limit), and the analysis of tune and bench


def process_started() -> float:
    """The time.monotonic() at which this process started (the command line's limit counts Python's start-up
    and imports too): Linux's /proc/self/stat; elsewhere, now."""
    try:
        with open("/proc/self/stat") as f:
            start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])  # field 22, starttime
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        return time.monotonic() - max(0.0, uptime - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return time.monotonic()


def finish_margin(limit: float) -> float:
    """The part of a limit kept for what follows the workers (splicing, writing, exiting): 5%, at most 1 s."""
    return min(1.0, 0.05 * limit)


class WorkerFailed(Exception):
    """The worker raised an error that is not a user's (an internal error): its type and message."""


@dataclass(frozen=True)
class Ending:
    """How a worker ended: ``finished`` (it returned), ``deadline`` (killed at it), or ``stopped`` (it died on
    its own: a signal, the memory killer; *exitcode* says how)."""

    how: str
    exitcode: int | None = None

    @property
    def finished(self) -> bool:
        return self.how == "finished"


def _context():
    """fork where this process has one thread (cheap: nothing to import or copy); forkserver where it has
    more (a thread holding a lock at the fork, the isl lock among them, would leave it held in the child)."""
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["polytune.pipeline"])
        return ctx
    return multiprocessing.get_context("spawn")


def _child(conn, scratch: str, target: Callable, args: tuple) -> None:
    os.environ["TMPDIR"] = tempfile.tempdir = scratch  # (the compilers it runs too)
    try:
        target(conn.send, *args)
        conn.send(("end",))
    except errors.PolytuneError as e:
        conn.send(("error", type(e).__name__, e.message, e.file, e.line))
    except BaseException as e:  # noqa: BLE001 - reported to the parent, which raises it there
        conn.send(("internal", f"{type(e).__name__}: {e}".splitlines()[0]))
    finally:
        conn.close()


def run(target: Callable, args: tuple, deadline: Callable[[], float],
        on_message: Callable[[tuple], None]) -> Ending:
    """Run ``target(send, *args)`` in a worker process; every ``send(message)`` reaches *on_message* here.
    *deadline()*: the time.monotonic() at which the worker is killed, asked again after each message (the
    caller moves it as the work moves on). A user error the worker raises (PolytuneError) is raised here
    as it was, any other as WorkerFailed."""
    with tempfile.TemporaryDirectory(prefix="polytune-worker-", ignore_cleanup_errors=True) as scratch:
        return _run(target, args, deadline, on_message, scratch)


def _run(target: Callable, args: tuple, deadline: Callable[[], float], on_message: Callable[[tuple], None],
         scratch: str) -> Ending:
    ctx = _context()
    receive, send = ctx.Pipe(duplex=False)
    worker = ctx.Process(target=_child, args=(send, scratch, target, args), daemon=True)
    worker.start()
    send.close()
    try:
        while True:
            left = deadline() - time.monotonic()
            if left <= 0:
                return Ending("deadline")
            if not receive.poll(min(left, 1.0)):
                continue
            try:
                message = receive.recv()
            except EOFError:  # the worker died without a word (a signal, the memory killer)
                worker.join()
                return Ending("stopped", worker.exitcode)
            if message[0] == "end":
                return Ending("finished")
            if message[0] == "error":
                _kind, name, text, file, line = message
                cls = getattr(errors, name, None)
                cls = cls if isinstance(cls, type) and issubclass(cls, errors.PolytuneError) else errors.PolytuneError
                raise cls(text, file, line)
            if message[0] == "internal":
                raise WorkerFailed(message[1])
            on_message(message)
    finally:
        receive.close()
        if worker.is_alive():
            worker.kill()
        worker.join()
