"""A process's WorkerState: what the build and time steps keep between candidates (analyzed programs, builds,
fetched references, a serving process), one part per kind, handed to the steps instead of module-level state."""
from __future__ import annotations

import os
import sys
import types

from conftest import ROOT

import polytune.pipeline
from polytune.measure import Measurement
from polytune.measure.c import CompileJob, job_program, program_digest
from polytune.measure.pooled import Fetched, _Shared, _time_shared
from polytune.steps import Latest, WorkerState, this_process

SMALL = os.path.join(ROOT, "tests", "data", "polybench", "atax.c")


def test_latest_keeps_the_last_entries_put_and_drops_the_oldest():
    latest: Latest[str, int] = Latest(2)
    latest.put("a", 1)
    latest.put("b", 2)
    latest.put("a", 3)  # a key put again keeps its place
    assert latest.put("c", 4) == 4
    assert len(latest) == 2 and "a" not in latest and latest.get("b") == 2 and latest.get("c") == 4


def test_a_worker_state_makes_each_part_once_and_states_share_none():
    first, second = WorkerState(), WorkerState()
    assert first.part(Fetched) is first.part(Fetched)
    assert first.part(Fetched) is not second.part(Fetched)
    assert this_process() is this_process()


def test_a_compile_step_analyzes_its_program_once_per_worker_state(monkeypatch):
    program = polytune.pipeline.analyze(SMALL)
    job = CompileJob(os.path.abspath(SMALL), (), (), program_digest(program), (), None, None, (), ())
    real, analyzed = polytune.pipeline.analyze, []

    def analyze(*args, **kw):
        analyzed.append(args[0])
        return real(*args, **kw)

    monkeypatch.setattr(polytune.pipeline, "analyze", analyze)
    state, other = WorkerState(), WorkerState()
    assert job_program(job, state) is job_program(job, state)
    assert len(analyzed) == 1
    job_program(job, other)
    assert len(analyzed) == 2


def test_the_program_the_driver_registered_is_the_one_its_compile_jobs_find(monkeypatch):
    """(The registration's key once lacked the job's `auto`: no job found it, and every compile in the driver's
    threads analyzed the file again.)"""
    from polytune.measure.c import remember_program
    program = polytune.pipeline.analyze(SMALL)
    job = CompileJob(os.path.abspath(SMALL), program.includes, program.defines, program_digest(program), (), None,
                     None, (), (), program.pure, program.auto, program.left_out)

    def analyze(*args, **kw):
        raise AssertionError("analyzed again")

    monkeypatch.setattr(polytune.pipeline, "analyze", analyze)
    state = WorkerState()
    remember_program(program, state)
    assert job_program(job, state) is program


class _Ref:
    def __init__(self, name: str):
        self.name = name

    def hex(self) -> str:
        return self.name


def test_a_ray_timer_fetches_each_reference_once_per_worker_state(monkeypatch):
    """The time step on another node fetches the reference from the object store the first time its process
    times a candidate of that search, then keeps the latest searches' references."""
    fetched: list[str] = []
    ray = types.SimpleNamespace(put=lambda data: _Ref(data), get=lambda ref: fetched.append(ref.name) or ref.name)
    monkeypatch.setitem(sys.modules, "ray", ray)
    shared = [_Shared(f"ref{i}") for i in range(6)]

    def time_fn(reference, bound, compiled):
        return Measurement((compiled,), (1.0,), detail=reference)

    state = WorkerState()
    assert _time_shared(time_fn, shared[0], None, 1, state).detail == "ref0"
    assert _time_shared(time_fn, shared[0], None, 2, state).detail == "ref0"
    assert fetched == ["ref0"]
    for s in shared[1:5]:
        _time_shared(time_fn, s, None, 3, state)
    _time_shared(time_fn, shared[0], None, 4, state)  # one of the 4 latest no more: fetched again
    assert fetched == ["ref0", "ref1", "ref2", "ref3", "ref4", "ref0"]
    _time_shared(time_fn, shared[0], None, 5, WorkerState())  # another process
    assert fetched[-1] == "ref0" and len(fetched) == 7
