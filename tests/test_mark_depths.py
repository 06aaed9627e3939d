"""A schedule mark names the loop it is for by its depth (the iterator c<depth> of the AST), so every mark must
sit right above a band that starts at that schedule depth, bands below a tiled band included: counting the
bands above by their original members (a tiled band has twice as many loops) put those marks at depths no
loop has, and the printer dropped their pragmas."""
from __future__ import annotations

import os

import islpy as isl
import pytest

from polytune.pipeline import analyze
from polytune.poly.marks import mark_of

KERNELS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks", "pluto")


def _marks_and_depths(schedule: isl.Schedule) -> list[tuple[object, int]]:
    out = []

    def walk(node) -> None:
        mark = mark_of(node)
        if mark is not None and hasattr(mark, "depth"):
            below = node.child(0)
            while mark_of(below) is not None:  # marks stacked on one band
                below = below.child(0)
            out.append((mark, below.get_schedule_depth()))
        for i in range(node.n_children()):
            walk(node.child(i))

    walk(schedule.get_root())
    return out


@pytest.mark.parametrize("kernel", ["2d_bidirec", "maxpool"])
def test_every_mark_names_the_depth_of_the_band_below_it_bands_under_tiled_ones_included(kernel):
    program = analyze(os.path.join(KERNELS, kernel + ".c"))
    found = []
    for a in program.scops:
        for schedule in ("model", "pluto"):
            found += _marks_and_depths(a.tiled((), schedule=schedule).schedule)
    assert found
    assert all(mark.depth == depth for mark, depth in found), [(m, d) for m, d in found if m.depth != d]
    # the case the old count got wrong: a mark below the four loops of a tiled band of two members
    assert any(depth >= 4 for _, depth in found)
