"""isl's AST build runs under an operation quota (emit.c.AST_OPERATIONS): past it, the region is built again
with its point loops not separated, which is still the schedule's code (same results), only with guards."""
from __future__ import annotations

import os

import islpy as isl
import pytest
from conftest import ROOT, checksums_before_and_after

import polytune.emit.c as emit_c
from polytune.emit.c import without_separation
from polytune.pipeline import OptimizeOptions, analyze, schedules

FDTD = os.path.join(ROOT, "benchmarks", "pluto", "fdtd-2d.c")


def _separated(schedule: isl.Schedule) -> int:
    """How many band nodes of *schedule* carry a `separate` option."""
    count = 0

    def walk(node) -> None:
        nonlocal count
        if node.get_type() == isl.schedule_node_type.band and "separate" in str(node.band_get_ast_build_options()):
            count += 1
        for i in range(node.n_children()):
            walk(node.child(i))
    walk(schedule.get_root())
    return count


def test_without_separation_drops_every_separate_option_and_keeps_the_schedule():
    program = analyze(FDTD, (), ("N=40", "TSTEPS=4"))
    schedule = schedules(program, OptimizeOptions(tile_sizes=(16, 64, 128)))[0].schedule
    assert _separated(schedule) >= 1
    plain = without_separation(schedule)
    assert _separated(plain) == 0
    assert plain.get_map().is_equal(schedule.get_map())


@pytest.mark.slow  # (46 s on the dev box; on CI's slow line)
def test_a_region_past_the_quota_is_built_without_separation_and_computes_the_same(tmp_path, monkeypatch):
    with open(FDTD) as f:
        source = f.read().replace("#define N 2000", "#define N 37").replace("#define TSTEPS 150", "#define TSTEPS 5")
    # every first build runs out of its quota (as fdtd-2d's 64x16x32 does, past 60 million operations)
    state = {"plain": False}
    real_bounded, real_plain = emit_c.bounded, emit_c.without_separation

    def bounded(fn, quota):
        if not state["plain"]:
            raise isl.Error("isl_ctx_get_max_operations exceeded")
        return real_bounded(fn, quota)

    def plain(schedule):
        state["plain"] = True
        return real_plain(schedule)
    monkeypatch.setattr(emit_c, "bounded", bounded)
    monkeypatch.setattr(emit_c, "without_separation", plain)
    # in this process (--time-limit 0: no worker), so that the build's state is seen here
    want, got = checksums_before_and_after(source, tmp_path, ["--tile-sizes", "16,8,4", "--time-limit", "0"])
    assert state["plain"] and want == got
