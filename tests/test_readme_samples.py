"""The README's sample outputs are what the tool prints now (benchmarks/readme_samples.py): the command lines,
and the shape of every line (numbers, units and padding aside; lines that only some timings print have a
form of their own)."""
from __future__ import annotations

import importlib.util
import os
import sys

from conftest import ROOT

spec = importlib.util.spec_from_file_location("readme_samples", os.path.join(ROOT, "benchmarks", "readme_samples.py"))
samples = sys.modules["readme_samples"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(samples)


def _printed(text: str) -> dict[str, str]:
    """Each sample's block as its command printed it (without the "$ command" line the README shows first)."""
    return {s.name: "".join(samples.blocks(text)[s.name].splitlines(keepends=True)[1 if s.prompt else 0:])
            for s in samples.SAMPLES}


def test_shapes_leave_out_numbers_units_and_padding():
    assert samples.shape("gemm     7.19 s          2.08 ms") == samples.shape("gemm 12.0 us 3 s")
    assert samples.shape("best i=32 j=64 k=32: 1.37 s") != samples.shape("best (32, 64, 32) 1.373 s")


def test_a_line_in_an_old_format_is_stale_and_a_line_of_another_timing_is_not():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    block = samples.blocks(text)["tune-jacobi"]
    fresh = _printed(text)  # the README against itself
    assert samples.problems(text, fresh) == []
    stale = text.replace(block, block + "gemm: hill: best (32, 64, 32) 1.373 s, 6 evaluations, 129.9 s, max_evals\n")
    assert [p for p in samples.problems(stale, fresh) if "best (32, 64, 32)" in p]
    other = text.replace(block, block + "fastest measured i=16 j=32: 4.61 ms (median of 3 runs), not adopted: not "
                         "significantly faster than the best (Welch p=0.31, needs < 0.05; 3 and 3 runs)\n")
    assert samples.problems(other, fresh) == []


def test_an_exact_sample_is_stale_when_one_line_differs():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    fresh = _printed(text)
    body = fresh["optimize-smooth"]
    assert samples.problems(text, fresh) == []
    fresh["optimize-smooth"] = body.replace("(2 statements)", "(3 statements)")
    assert samples.problems(text, fresh) == [
        "optimize-smooth: the block is not what `polytune optimize benchmarks/realc_examples/smooth.c -o "
        "/tmp/smooth.opt.c` prints now"]


def test_a_load_line_bench_no_longer_prints_is_stale():
    old = ("note: load average 6.87 on 2 cores at the start: other processes compete for the cores, so the timings "
           "are distorted; use --threads 1, or a quiet machine")
    new = old.replace("note:", "polytune: warning:", 1)
    assert not any(c.search(samples.shape(old)) for c in samples.CONDITIONAL)
    assert any(c.search(samples.shape(new)) for c in samples.CONDITIONAL)


def test_the_samples_write_nothing_into_the_clone():
    """(the README's commands are run from the clone's root: an output there would be left in it, not ignored)"""
    for s in samples.SAMPLES:
        words = s.command.split()
        for flag in ("-o", "--report", "--plot", "--tile-sizes-out"):
            if flag in words:
                assert words[words.index(flag) + 1].startswith("/tmp/"), s.command


def test_the_readme_samples_are_current():
    """A fresh, smaller run of each sample's command prints lines of the README's shapes."""
    assert samples.check() == []
