"""A scalar of the function that no code reads after the region (frontend.dead_after: not read after it, and
named before it only in its declaration, so that no earlier statement of a loop around the region reads the
value it left) is private, not lastprivate, in a parallel loop that writes it; where isl prints a first
instance before the loop (hotspot's corner, which assigns the `delta` the first row reads), the loop takes it
as firstprivate (emit/c.py `peeled_first`) instead of running serially."""
from __future__ import annotations

import os

import pytest
from conftest import ROOT, compile_run

from polytune.cli import main
from polytune.frontend import dead_after, read_after

HOTSPOT = os.path.join(ROOT, "benchmarks", "realc", "hotspot.c")


@pytest.mark.parametrize("before, after, dead", [
    ("void f(int n) { float d;", "}", True),
    ("void f(int n) { float d;", " g(d); }", False),  # read after the region
    ("void f(int n) { float d = 0;", "}", False),  # an initializer: a value from before the region
    ("void f(int n) { float d; for (int t = 0; t < n; t++) { use(d);", "} }", False),  # read in the next trip
    ("void f(int n) { float d;", " d = 1; g(d); }", True),  # assigned before any read after it
])
def test_a_scalar_is_dead_after_the_region_only_where_no_code_can_read_what_it_left(before, after, dead):
    assert ("d" in dead_after(before, read_after(before, after))) == dead


def _hash(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith("hash"))


def test_a_peeled_first_instance_gives_the_parallel_loop_its_scalar_as_firstprivate(tmp_path):
    out = tmp_path / "hotspot.opt.c"
    assert main(["optimize", HOTSPOT, "-q", "-o", str(out)]) == 0
    text = out.read_text()
    hot = text[text.index("void single_iteration"):text.index("end hot")]
    assert "#pragma omp parallel for firstprivate(delta)" in hot
    for args in (("11", "13", "2"), ("37", "29", "3"), ("2", "5", "1")):
        want = _hash(compile_run(HOTSPOT, str(tmp_path / "ref"), [], openmp=False, args=args))
        for threads in (1, 2, 3):
            assert _hash(compile_run(str(out), str(tmp_path / "opt"), [], True, threads, args=args)) == want
