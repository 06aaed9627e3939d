"""isl's context is one per process: the options the scheduler and the AST builder set around their calls, and
the operation quota of ``bounded``, are set only under ``ISL_LOCK``, so that several tunes in one process
(``polytune bench --tunes-at-once``, threads) never see each other's."""
from __future__ import annotations

import os
import threading

from conftest import ROOT

from polytune.pipeline import OptimizeOptions, analyze, generate
from polytune.poly import islutil

SETTERS = ("set_max_operations", "reset_operations", "set_schedule_outer_coincidence",
           "set_schedule_whole_component", "set_schedule_serialize_sccs", "set_ast_build_exploit_nested_bounds",
           "set_ast_build_scale_strides")


def test_the_context_options_are_set_only_under_the_isl_lock(monkeypatch):
    import islpy as isl
    calls: list = []
    for name in SETTERS:
        real = getattr(isl.Context, name)

        def checked(self, *args, _real=real, _name=name):
            calls.append((_name, islutil.ISL_LOCK._is_owned()))
            return _real(self, *args)
        monkeypatch.setattr(isl.Context, name, checked)
    program = analyze(os.path.join(ROOT, "benchmarks", "pluto", "jacobi-2d.c"))
    generate(program, OptimizeOptions(tile_sizes=(16, 32, 32)))
    names = {n for n, _ in calls}
    assert {"set_max_operations", "set_schedule_outer_coincidence", "set_ast_build_scale_strides"} <= names
    assert all(owned for _, owned in calls), [n for n, owned in calls if not owned]


def test_two_threads_generate_what_one_after_the_other_does():
    paths = [os.path.join(ROOT, "benchmarks", "pluto", f"{k}.c") for k in ("jacobi-2d", "gemm", "seidel-2d", "mvt")]

    def text(path: str) -> str:
        return generate(analyze(path), OptimizeOptions(tile_sizes=(16, 32, 64))).text

    alone = [text(p) for p in paths]
    together: list = [None] * len(paths)

    def run(i: int) -> None:
        together[i] = text(paths[i])
    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(paths))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert together == alone
