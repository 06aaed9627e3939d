"""Where candidates run: a local pool (parallel compiles, one timing at a time) or a Ray cluster.

Pools are generic: ``submit(compile_fn, time_fn, payload, label) -> Future[WorkResult]``. They hold no search
state; the search decides what to submit, and records results on the driver as futures complete.
"""
from __future__ import annotations

from polytune.steps import Done, TimerLock
from polytune.workers.base import Progress, Stage, WorkerLost, WorkerPool, WorkResult
from polytune.workers.identity import MachineIdentity, local_identity
from polytune.workers.local import LocalPool, split_cores

__all__ = ["Done", "LocalPool", "MachineIdentity", "Progress", "Stage", "TimerLock", "WorkResult", "WorkerLost",
           "WorkerPool", "local_identity", "open_pool"]


def open_pool(jobs: int | None = None, ray_address: str | None = None, *, gpu: bool = False, cc: str = "gcc",
              quiet: bool = False, on_progress=None, on_refused=None, timing_cpus: int = 0):
    """The pool the CLI asks for: ``--ray ADDRESS`` (``auto``: a local instance) gives a ``RayPool`` (Ray is
    imported only then), else a ``LocalPool`` compiling ``jobs`` at once (default: the cores); ``gpu``: the
    candidates are timed on GPUs (a Ray timer per GPU; locally, the timer takes no machine-wide lock: the
    time step locks around its kernels); ``quiet``: no compile while a candidate is timed (local only);
    ``timing_cpus``: the cores a timing takes (on a Ray node, see ``RayPool``; here the first ones of this
    process's, which the compiles then leave alone)."""
    if ray_address is None:
        split = None if quiet else split_cores(timing_cpus)
        # a GPU's time step takes the machine-wide lock itself, around its kernels only (measure.cuda.gpu_lock)
        lock = {"lock_path": None} if gpu else {}
        return LocalPool(jobs, quiet=quiet, on_progress=on_progress, timing_cpus=split[0] if split else None,
                         compile_cpus=split[1] if split else None, **lock)
    from functools import partial

    try:
        from polytune.workers import ray_pool
    except ImportError as exc:
        from polytune.errors import UsageError

        raise UsageError(f"--ray needs Ray ({exc}): pip install 'polytune[ray]'") from None

    ray_pool.connect(ray_address)
    return ray_pool.RayPool(gpu=gpu, jobs=jobs, identity=partial(local_identity, cc), on_progress=on_progress,
                            on_refused=on_refused, timing_cpus=timing_cpus)
